/*
 * wrappers.c - the interposed calls.
 *
 * Every wrapper has the same shape (after cwrap's socket_wrapper): the
 * exported name calls the real function through sm_real (see unbound.c for
 * the time before binding), then accounts with sm_data() or tells the
 * runtime about a lifecycle change.  The return
 * value and errno reach the program as the real call left them: sm_data
 * and the lifecycle hooks never change errno.
 */
#include "preload.h"

#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <linux/futex.h>
#include <unistd.h>

/* glibc declares these only in its fortified headers. */
ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen);
ssize_t __recv_chk(int fd, void *buf, size_t n, size_t buflen, int flags);
ssize_t __recvfrom_chk(int fd, void *buf, size_t n, size_t buflen, int flags,
		       struct sockaddr *from, socklen_t *fromlen);

/* --- data calls ----------------------------------------------------------
 *
 * Three layers, after socket_wrapper: the exported name decides between the
 * fast path (a tail call to the real function when the fd is not metered,
 * or when a receive moves no data from the peer: SM_RECV_NO_DATA)
 * and the metered path (real call, then sm_data); sm_real.NAME() is the real
 * function, or the raw system call while dlsym is being re-entered.
 */

static SM_METERED_DIR_IN ssize_t metered_read(int fd, void *buf, size_t n,
				       struct fd_slot *s)
{
	uint64_t t0 = sm_start();
	ssize_t r;

	sm_inflight_set(s);
	r = sm_real.read(fd, buf, n);
	sm_inflight_clear(s);
	sm_data(s, DIR_IN, r, t0);
	return r;
}

SM_EXPORT ssize_t read(int fd, void *buf, size_t n)
{
	struct fd_slot *s;

	if (SM_LIKELY(!sm_metered(fd, &s)))
		return sm_real.read(fd, buf, n);
	return metered_read(fd, buf, n, s);
}

static SM_METERED_DIR_IN ssize_t metered_read_chk(int fd, void *buf, size_t n,
					   size_t buflen, struct fd_slot *s)
{
	uint64_t t0 = sm_start();
	ssize_t r;

	sm_inflight_set(s);
	r = sm_real.__read_chk(fd, buf, n, buflen);
	sm_inflight_clear(s);
	sm_data(s, DIR_IN, r, t0);
	return r;
}

SM_EXPORT ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen)
{
	struct fd_slot *s;

	if (SM_LIKELY(!sm_metered(fd, &s)))
		return sm_real.__read_chk(fd, buf, n, buflen);
	return metered_read_chk(fd, buf, n, buflen, s);
}

static SM_METERED_DIR_OUT ssize_t metered_write(int fd, const void *buf, size_t n,
					struct fd_slot *s)
{
	uint64_t t0 = sm_start();
	ssize_t r;

	sm_inflight_set(s);
	r = sm_real.write(fd, buf, n);
	sm_inflight_clear(s);
	sm_data(s, DIR_OUT, r, t0);
	return r;
}

SM_EXPORT ssize_t write(int fd, const void *buf, size_t n)
{
	struct fd_slot *s;

	if (SM_LIKELY(!sm_metered(fd, &s)))
		return sm_real.write(fd, buf, n);
	return metered_write(fd, buf, n, s);
}

static SM_METERED_DIR_IN ssize_t metered_readv(int fd, const struct iovec *iov,
					int cnt, struct fd_slot *s)
{
	uint64_t t0 = sm_start();
	ssize_t r;

	sm_inflight_set(s);
	r = sm_real.readv(fd, iov, cnt);
	sm_inflight_clear(s);
	sm_data(s, DIR_IN, r, t0);
	return r;
}

SM_EXPORT ssize_t readv(int fd, const struct iovec *iov, int cnt)
{
	struct fd_slot *s;

	if (SM_LIKELY(!sm_metered(fd, &s)))
		return sm_real.readv(fd, iov, cnt);
	return metered_readv(fd, iov, cnt, s);
}

static SM_METERED_DIR_OUT ssize_t metered_writev(int fd, const struct iovec *iov,
					 int cnt, struct fd_slot *s)
{
	uint64_t t0 = sm_start();
	ssize_t r;

	sm_inflight_set(s);
	r = sm_real.writev(fd, iov, cnt);
	sm_inflight_clear(s);
	sm_data(s, DIR_OUT, r, t0);
	return r;
}

SM_EXPORT ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
	struct fd_slot *s;

	if (SM_LIKELY(!sm_metered(fd, &s)))
		return sm_real.writev(fd, iov, cnt);
	return metered_writev(fd, iov, cnt, s);
}

static SM_METERED_DIR_OUT ssize_t metered_send(int fd, const void *buf, size_t n,
				       int flags, struct fd_slot *s)
{
	uint64_t t0 = sm_start();
	ssize_t r;

	sm_inflight_set(s);
	r = sm_real.send(fd, buf, n, flags);
	sm_inflight_clear(s);
	sm_data(s, DIR_OUT, r, t0);
	return r;
}

SM_EXPORT ssize_t send(int fd, const void *buf, size_t n, int flags)
{
	struct fd_slot *s;

	if (SM_LIKELY(!sm_metered(fd, &s)))
		return sm_real.send(fd, buf, n, flags);
	return metered_send(fd, buf, n, flags, s);
}

static SM_METERED_DIR_IN ssize_t metered_recv(int fd, void *buf, size_t n, int flags,
				       struct fd_slot *s)
{
	uint64_t t0 = sm_start();
	ssize_t r;

	sm_inflight_set(s);
	r = sm_real.recv(fd, buf, n, flags);
	sm_inflight_clear(s);
	sm_data(s, DIR_IN, r, t0);
	return r;
}

SM_EXPORT ssize_t recv(int fd, void *buf, size_t n, int flags)
{
	struct fd_slot *s;

	if (SM_LIKELY(!sm_metered(fd, &s)) || (flags & SM_RECV_NO_DATA))
		return sm_real.recv(fd, buf, n, flags);
	return metered_recv(fd, buf, n, flags, s);
}

static SM_METERED_DIR_IN ssize_t metered_recv_chk(int fd, void *buf, size_t n,
					   size_t buflen, int flags,
					   struct fd_slot *s)
{
	uint64_t t0 = sm_start();
	ssize_t r;

	sm_inflight_set(s);
	r = sm_real.__recv_chk(fd, buf, n, buflen, flags);
	sm_inflight_clear(s);
	sm_data(s, DIR_IN, r, t0);
	return r;
}

SM_EXPORT ssize_t __recv_chk(int fd, void *buf, size_t n, size_t buflen,
			     int flags)
{
	struct fd_slot *s;

	if (SM_LIKELY(!sm_metered(fd, &s)) || (flags & SM_RECV_NO_DATA))
		return sm_real.__recv_chk(fd, buf, n, buflen, flags);
	return metered_recv_chk(fd, buf, n, buflen, flags, s);
}

static SM_METERED_DIR_OUT ssize_t metered_sendto(int fd, const void *buf, size_t n,
					 int flags, const struct sockaddr *to,
					 socklen_t tolen, struct fd_slot *s)
{
	uint64_t t0 = sm_start();
	ssize_t r;

	sm_inflight_set(s);
	r = sm_real.sendto(fd, buf, n, flags, to, tolen);
	sm_inflight_clear(s);
	sm_data(s, DIR_OUT, r, t0);
	if (SM_UNLIKELY(flags & MSG_FASTOPEN) && to)
		sm_fastopen(fd, r, to, tolen);
	return r;
}

SM_EXPORT ssize_t sendto(int fd, const void *buf, size_t n, int flags,
			 const struct sockaddr *to, socklen_t tolen)
{
	struct fd_slot *s;

	if (SM_LIKELY(!sm_metered(fd, &s)))
		return sm_real.sendto(fd, buf, n, flags, to, tolen);
	return metered_sendto(fd, buf, n, flags, to, tolen, s);
}

static SM_METERED_DIR_IN ssize_t metered_recvfrom(int fd, void *buf, size_t n,
					   int flags, struct sockaddr *from,
					   socklen_t *fromlen,
					   struct fd_slot *s)
{
	uint64_t t0 = sm_start();
	ssize_t r;

	sm_inflight_set(s);
	r = sm_real.recvfrom(fd, buf, n, flags, from, fromlen);
	sm_inflight_clear(s);
	sm_data(s, DIR_IN, r, t0);
	return r;
}

SM_EXPORT ssize_t recvfrom(int fd, void *buf, size_t n, int flags,
			   struct sockaddr *from, socklen_t *fromlen)
{
	struct fd_slot *s;

	if (SM_LIKELY(!sm_metered(fd, &s)) || (flags & SM_RECV_NO_DATA))
		return sm_real.recvfrom(fd, buf, n, flags, from, fromlen);
	return metered_recvfrom(fd, buf, n, flags, from, fromlen, s);
}

static SM_METERED_DIR_IN ssize_t metered_recvfrom_chk(int fd, void *buf, size_t n,
					       size_t buflen, int flags,
					       struct sockaddr *from,
					       socklen_t *fromlen,
					       struct fd_slot *s)
{
	uint64_t t0 = sm_start();
	ssize_t r;

	sm_inflight_set(s);
	r = sm_real.__recvfrom_chk(fd, buf, n, buflen, flags, from, fromlen);
	sm_inflight_clear(s);
	sm_data(s, DIR_IN, r, t0);
	return r;
}

SM_EXPORT ssize_t __recvfrom_chk(int fd, void *buf, size_t n, size_t buflen,
				 int flags, struct sockaddr *from,
				 socklen_t *fromlen)
{
	struct fd_slot *s;

	if (SM_LIKELY(!sm_metered(fd, &s)) || (flags & SM_RECV_NO_DATA))
		return sm_real.__recvfrom_chk(fd, buf, n, buflen, flags, from,
					      fromlen);
	return metered_recvfrom_chk(fd, buf, n, buflen, flags, from, fromlen,
				    s);
}

static SM_METERED_DIR_OUT ssize_t metered_sendmsg(int fd, const struct msghdr *msg,
					  int flags, struct fd_slot *s)
{
	uint64_t t0 = sm_start();
	ssize_t r;

	sm_inflight_set(s);
	r = sm_real.sendmsg(fd, msg, flags);
	sm_inflight_clear(s);
	sm_data(s, DIR_OUT, r, t0);
	if (SM_UNLIKELY(r >= 0 && msg->msg_controllen))
		sm_fds_sent(msg);
	if (SM_UNLIKELY(flags & MSG_FASTOPEN))
		sm_fastopen_msg(fd, r, msg);
	return r;
}

SM_EXPORT ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
	struct fd_slot *s;

	if (SM_LIKELY(!sm_metered(fd, &s)))
		return sm_real.sendmsg(fd, msg, flags);
	return metered_sendmsg(fd, msg, flags, s);
}

static SM_METERED_DIR_IN ssize_t metered_recvmsg(int fd, struct msghdr *msg, int flags,
					  struct fd_slot *s)
{
	uint64_t t0 = sm_start();
	ssize_t r;

	sm_inflight_set(s);
	r = sm_real.recvmsg(fd, msg, flags);
	sm_inflight_clear(s);
	sm_data(s, DIR_IN, r, t0);
	if (SM_UNLIKELY(r >= 0 && msg->msg_controllen))
		sm_fds_received(msg);
	return r;
}

SM_EXPORT ssize_t recvmsg(int fd, struct msghdr *msg, int flags)
{
	struct fd_slot *s;

	if (SM_LIKELY(!sm_metered(fd, &s)) || (flags & SM_RECV_NO_DATA))
		return sm_real.recvmsg(fd, msg, flags);
	return metered_recvmsg(fd, msg, flags, s);
}

static SM_METERED int metered_sendmmsg(int fd, struct mmsghdr *v,
				       unsigned int n, int flags,
				       struct fd_slot *s)
{
	uint64_t t0 = sm_start();
	int r = sm_real.sendmmsg(fd, v, n, flags);

	sm_data(s, DIR_OUT, sm_mmsg_bytes(v, r), t0);
	return r;
}

SM_EXPORT int sendmmsg(int fd, struct mmsghdr *v, unsigned int n, int flags)
{
	struct fd_slot *s;

	if (SM_LIKELY(!sm_metered(fd, &s)))
		return sm_real.sendmmsg(fd, v, n, flags);
	return metered_sendmmsg(fd, v, n, flags, s);
}

static SM_METERED int metered_recvmmsg(int fd, struct mmsghdr *v,
				       unsigned int n, int flags,
				       struct timespec *timeout,
				       struct fd_slot *s)
{
	uint64_t t0 = sm_start();
	int r = sm_real.recvmmsg(fd, v, n, flags, timeout);

	sm_data(s, DIR_IN, sm_mmsg_bytes(v, r), t0);
	return r;
}

SM_EXPORT int recvmmsg(int fd, struct mmsghdr *v, unsigned int n, int flags,
		       struct timespec *timeout)
{
	struct fd_slot *s;

	if (SM_LIKELY(!sm_metered(fd, &s)) || (flags & SM_RECV_NO_DATA))
		return sm_real.recvmmsg(fd, v, n, flags, timeout);
	return metered_recvmmsg(fd, v, n, flags, timeout, s);
}

/* sendfile moves bytes out of `in` into `out`: both ends are accounted,
 * a long one in pieces (sm_sendfile_pieces). */

/* The kernel's MAX_RW_COUNT, what one call moves at most: INT_MAX
 * rounded down to a page (the largest page size Linux uses where the
 * auxiliary vector does not say). */
static size_t max_rw_count(void)
{
	unsigned long page = getauxval(AT_PAGESZ);

	if (!page || (page & (page - 1)))
		page = 65536;
	return (size_t)INT_MAX & ~(size_t)(page - 1);
}

/* The program's *off, read once the kernel has: the program's own call
 * with a count of 0 reads the offset and writes it back unchanged, or
 * fails (EFAULT for a pointer it cannot read or write: the call is then
 * made whole, the kernel's to fail; before, a bad pointer with a count
 * over a piece was a SIGSEGV in the host: a review's proof, off = 16).
 * Not process_vm_readv, as the fortieth session had it: a seccomp filter
 * the program inherited may punish that call with death (systemd's
 * SystemCallFilter=@system-service lacks it), and every sendfile of more
 * than a piece made it; a filter that lets the program's sendfile
 * through lets this one. */
static bool read_offset(int out, int in, void *off, int64_t *pos)
{
	if (!sm_ptr_plausible(off, _Alignof(int64_t)) ||
	    raw_syscall6(SYS_sendfile, out, in, (long)off, 0, 0, 0) != 0)
		return false;
	memcpy(pos, off, sizeof(*pos));
	return true;
}

/* Whether a sendfile of n bytes is made in pieces, and up to how many
 * bytes (*upto): only from a regular file into a socket (the kernel's
 * do_splice_direct path, where a call goes on until n, end of file, a
 * full non-blocking socket, a signal or an error).  Into a pipe a call
 * moves one pipe-full and returns: pieces would wait for room, or for a
 * socket's next bytes, where the call had returned.  Two fstat calls (and
 * an lseek where off is NULL), for a call of more than a piece only.  A
 * count past MAX_RW_COUNT, which the kernel clamps to it after its checks
 * (busybox httpd asks 2^63 - 64 KiB, Rust's io::copy 0x7ffff000), is
 * made in pieces up to that, as the kernel's one call would move: before,
 * such a call went whole, and a kill in the middle of it lost every byte
 * it had sent (a helper's busybox httpd: 195 bytes recorded, 16.6 MB
 * received).  errno untouched. */
static bool want_pieces(int out, int in, const void *off, size_t n,
			size_t *upto)
{
	struct stat so, si;
	int64_t pos = 0;
	int saved;
	bool ok;

	/* 64-bit ABIs only, where every form's offset is 64 bits; not on a
	 * sandboxed thread, whose filter may forbid fstat (quiet.h).  A
	 * count negative as ssize_t is the kernel's EINVAL. */
	if (sizeof(long) != 8 || n <= SM_SENDFILE_PIECE ||
	    (ssize_t)n < 0 || sm_quiet())
		return false;
	saved = errno;
	ok = raw_syscall6(SYS_fstat, out, (long)&so, 0, 0, 0, 0) == 0 &&
	     S_ISSOCK(so.st_mode) &&
	     raw_syscall6(SYS_fstat, in, (long)&si, 0, 0, 0, 0) == 0 &&
	     S_ISREG(si.st_mode);
	/* What the kernel checks first, with the whole count, left to it:
	 * a negative offset, or one that n would carry past the largest
	 * (where off is NULL, the file's own position: a regular file's,
	 * asked of the kernel; before, a call from near the largest
	 * position made its first piece and returned 0 where the kernel
	 * says EINVAL: a review's proof). */
	if (ok && off)
		ok = read_offset(out, in, (void *)off, &pos);
	else if (ok)
		pos = raw_syscall6(SYS_lseek, in, 0, SEEK_CUR, 0, 0, 0);
	errno = saved;
	if (!ok || pos < 0 || pos > INT64_MAX - (int64_t)n)
		return false;
	*upto = n > max_rw_count() ? max_rw_count() : n;
	return true;
}

/* Each counted end of e, its slot, direction and start. */
struct piece_end {
	struct fd_slot *s;
	uint64_t t0;
	enum fd_dir dir;
};

static unsigned counted_ends(const struct sm_ends *e, struct piece_end end[2])
{
	unsigned n = 0;

	if (e->out_t0 != UINT64_MAX && fd_kind_counts(fdtab_kind(e->out)))
		end[n++] = (struct piece_end){ e->out, e->out_t0, DIR_OUT };
	if (e->in_t0 != UINT64_MAX && fd_kind_counts(fdtab_kind(e->in)))
		end[n++] = (struct piece_end){ e->in, e->in_t0, DIR_IN };
	return n;
}

ssize_t sm_sendfile_pieces(sm_piece_fn one, int out, int in, void *off,
			   size_t n, const struct sm_ends *e)
{
	struct piece_end end[2];
	size_t done = 0, ask, n_pieces;
	unsigned ends, i;
	ssize_t r;
	int saved = errno, err = 0;

	if (!want_pieces(out, in, off, n, &n_pieces)) {
		r = one(out, in, off, n);
		sm_ends_account(e, r);
		return r;
	}
	n = n_pieces;
	/* An end seen for the first time is classified now, as its first
	 * data call would have it after the call: its pieces count. */
	if (e->out_t0 != UINT64_MAX && fdtab_kind(e->out) == KIND_UNKNOWN)
		sm_classify_slow(out);
	if (e->in_t0 != UINT64_MAX && fdtab_kind(e->in) == KIND_UNKNOWN)
		sm_classify_slow(in);
	ends = counted_ends(e, end);
	if (!ends) {
		errno = saved;
		return one(out, in, off, n);
	}
	/* The bytes of each piece as it returns; the call itself (calls,
	 * its size, an error, its latency) once, at the end. */
	for (;;) {
		ask = n - done > SM_SENDFILE_PIECE ? SM_SENDFILE_PIECE
						   : n - done;
		r = one(out, in, off, ask);
		if (r < 0) {
			err = errno;
			break;
		}
		if (r > 0 && (sm_meter.acct & ACCT_BYTES))
			for (i = 0; i < ends; i++)
				__atomic_fetch_add(&end[i].s->c.bytes[end[i].dir],
						   (uint64_t)r,
						   __ATOMIC_RELAXED);
		done += (size_t)r;
		if ((size_t)r < ask || done == n)
			break;
	}
	/* A later piece that failed: the call returns what moved before,
	 * as the kernel's own call does. */
	r = done ? (ssize_t)done : (err ? -1 : 0);
	for (i = 0; i < ends; i++) {
		fd_account(end[i].s, end[i].dir, r, r < 0 ? err : 0,
			   sm_meter.acct & ~ACCT_BYTES);
		if (sm_latency)
			__atomic_fetch_add(&end[i].s->c.latency[end[i].dir],
					   sm_ticks() - end[i].t0,
					   __ATOMIC_RELAXED);
	}
	errno = r < 0 ? err : saved;
	return r;
}

static ssize_t one_sendfile(int out, int in, void *off, size_t n)
{
	return sm_real.sendfile(out, in, off, n);
}

static ssize_t one_sendfile64(int out, int in, void *off, size_t n)
{
	return sm_real.sendfile64(out, in, off, n);
}

SM_EXPORT ssize_t sendfile(int out, int in, off_t *off, size_t n)
{
	struct sm_ends e;

	if (SM_LIKELY(!sm_ends_start(out, in, &e)))
		return sm_real.sendfile(out, in, off, n);
	return sm_sendfile_pieces(one_sendfile, out, in, off, n, &e);
}

SM_EXPORT ssize_t sendfile64(int out, int in, off64_t *off, size_t n)
{
	struct sm_ends e;

	if (SM_LIKELY(!sm_ends_start(out, in, &e)))
		return sm_real.sendfile64(out, in, off, n);
	return sm_sendfile_pieces(one_sendfile64, out, in, off, n, &e);
}

/* --- lifecycle calls ----------------------------------------------------- */

/*
 * The lifecycle wrappers that make a new fd register it, unless the real
 * call they made reached one of our wrappers inside and that registered it
 * already (sm_opened_inside): another preload's socket() that makes its
 * socket by syscall(), as mptcpize's libmptcpwrap does (IPPROTO_MPTCP).
 * Registered again with the caller's arguments, the socket was ended as
 * "closed unseen" and taken for TCP, whose kernel view an MPTCP socket
 * does not give.
 */
SM_EXPORT int socket(int domain, int type, int protocol)
{
	unsigned mark = sm_opens_mark();
	int fd = sm_real.socket(domain, type, protocol);

	if (fd >= 0 && !sm_opened_inside(mark, fd))
		sm_opened_socket(fd, domain, type, protocol);
	return fd;
}

SM_EXPORT int socketpair(int domain, int type, int protocol, int sv[2])
{
	unsigned mark = sm_opens_mark();
	int r = sm_real.socketpair(domain, type, protocol, sv);

	if (r == 0 && !sm_opened_inside(mark, sv[1])) {
		sm_opened_socket(sv[0], domain, type, protocol);
		sm_opened_socket(sv[1], domain, type, protocol);
	}
	return r;
}

/*
 * Whether the caller's accept length may be read before the call (to know
 * whether the kernel cut the address short): asked of the kernel with a
 * futex wait that cannot wait (a value it does not hold, no time): EFAULT
 * for a pointer it cannot read, else EAGAIN or ETIMEDOUT at once.  The
 * kernel reads the length only after a connection is taken, so before,
 * a bad one the library read first was a SIGSEGV where the call says
 * EBADF, ENOTSOCK, EINVAL, EAGAIN or EFAULT (a helper's stress-ng sweep);
 * a cache of pages earlier accepts proved went stale once the program
 * unmapped one, and a peer asked of the kernel after the accept is lost
 * on a connection already reset (a review's).  futex, not
 * process_vm_readv, which a seccomp filter the program inherited may
 * punish with death: glibc's own locks make futex calls.  A sandboxed
 * thread (quiet.h) makes none of ours: it reads where the pointer looks
 * like one, as before (README, Limits).
 */
static bool accept_len_readable(socklen_t *len)
{
	struct timespec zero = { 0, 0 };
	long r;

	if (!sm_ptr_plausible(len, _Alignof(socklen_t)))
		return false;
	if (sm_quiet())
		return true;
	r = raw_syscall6(SYS_futex, (long)len, FUTEX_WAIT_PRIVATE,
			 (long)0x5ea1ed, (long)&zero, 0, 0);
	/* Only the answers of a futex that read the word: a filter the
	 * library never saw that fails or traps futex says nothing of it (a
	 * review's: a SIGSEGV where the call says EFAULT). */
	return r == -EAGAIN || r == -ETIMEDOUT || r == -EINTR;
}

/*
 * The peer's address of an accepted connection comes from accept itself,
 * not from one more getpeername: read back from the caller's buffer when
 * it held the whole address, or asked for in a buffer of ours when the
 * caller passed none.  The latter only on a TCP listener (sm_accept_peer),
 * where the kernel's getname of the new socket cannot fail: asking for
 * the address cannot change what the call returns.
 */
static int accept_common(int lfd, struct sockaddr *addr, socklen_t *len,
			 int flags, bool four)
{
	unsigned mark = sm_opens_mark();
	struct fd_addr peer;
	socklen_t cap = 0;
	int fd;

	peer.len = 0;
	if (!addr && sm_accept_peer(lfd)) {
		socklen_t n = sizeof(peer.u);

		fd = four ? sm_real.accept4(lfd, &peer.u.sa, &n, flags)
			  : sm_real.accept(lfd, &peer.u.sa, &n);
		if (fd >= 0 && n <= sizeof(peer.u))
			peer.len = n;
	} else {
		/* Its length is read only where the kernel can read it
		 * (accept_len_readable); else the peer is asked of the
		 * kernel. */
		bool seen = addr && len && accept_len_readable(len);

		if (seen)
			cap = *len;
		fd = four ? sm_real.accept4(lfd, addr, len, flags)
			  : sm_real.accept(lfd, addr, len);
		if (fd >= 0 && seen && *len <= cap &&
		    *len <= sizeof(peer.u)) {
			memcpy(&peer.u, addr, *len);
			peer.len = *len;
		}
	}
	if (fd >= 0 && !sm_opened_inside(mark, fd))
		sm_opened_accept(lfd, fd, &peer);
	return fd;
}

SM_EXPORT int accept(int lfd, struct sockaddr *addr, socklen_t *len)
{
	return accept_common(lfd, addr, len, 0, false);
}

SM_EXPORT int accept4(int lfd, struct sockaddr *addr, socklen_t *len, int flags)
{
	return accept_common(lfd, addr, len, flags, true);
}

SM_EXPORT int connect(int fd, const struct sockaddr *addr, socklen_t len)
{
	if (sm_tls_foreign()) /* a child on a TLS of its own */
		return sm_real.connect(fd, addr, len);
	int r = sm_real.connect(fd, addr, len);
	int saved = errno;

	if (sm_connect_tried(r, saved))
		sm_connected(fd, addr, len);
	errno = saved;
	return r;
}

SM_EXPORT int bind(int fd, const struct sockaddr *addr, socklen_t len)
{
	int r = sm_real.bind(fd, addr, len);

	if (r == 0)
		sm_bound(fd);
	return r;
}

/* A listen on a socket never bound: the kernel binds a port now (netperf's
 * netserver makes its data listeners so), which only a listen sees. */
SM_EXPORT int listen(int fd, int backlog)
{
	int r = sm_real.listen(fd, backlog);

	if (r == 0)
		sm_listening(fd);
	return r;
}

int sm_close_hooked(int fd)
{
	int r;

	/* Retire first: once the real close returns, another thread may
	 * already hold a new fd with this number.  After it, the ticker's
	 * copy of fd, if it holds one, is back (progfd.h). */
	sm_closing(fd);
	r = sm_real.close(fd);
	progfd_await((unsigned)fd, (unsigned)fd);
	return r;
}

SM_EXPORT int close(int fd)
{
	return sm_close_hooked(fd);
}

SM_EXPORT int close_range(unsigned int first, unsigned int last, int flags)
{
	int r;

	sm_close_range_begins(first, last, flags);
	r = sm_real.close_range(first, last, flags);
	progfd_await(first, last);
	return r;
}

SM_EXPORT void closefrom(int first)
{
	if (first < 0)
		first = 0;
	sm_closing_range((unsigned)first, ~0u);
	sm_real.closefrom(first);
	progfd_await((unsigned)first, ~0u);
}

SM_EXPORT int dup(int oldfd)
{
	int fd = sm_real.dup(oldfd);

	if (fd >= 0)
		sm_opened_dup(oldfd, fd);
	return fd;
}

int sm_dup2_hooked(int oldfd, int newfd)
{
	int fd;

	sm_dup_closing(oldfd, newfd, 0);
	fd = sm_real.dup2(oldfd, newfd);
	progfd_await((unsigned)newfd, (unsigned)newfd);

	if (fd >= 0)
		sm_opened_dup(oldfd, fd);
	return fd;
}

SM_EXPORT int dup2(int oldfd, int newfd)
{
	return sm_dup2_hooked(oldfd, newfd);
}

SM_EXPORT int dup3(int oldfd, int newfd, int flags)
{
	int fd;

	sm_dup_closing(oldfd, newfd, flags);
	fd = sm_real.dup3(oldfd, newfd, flags);
	progfd_await((unsigned)newfd, (unsigned)newfd);

	if (fd >= 0)
		sm_opened_dup(oldfd, fd);
	return fd;
}

/* fcntl's third argument is an int, a long or a pointer depending on cmd;
 * like glibc itself, pass it on as a pointer-sized value. */
static int fcntl_common(sm_fcntl_fn real, int fd, int cmd, void *arg)
{
	int r = real(fd, cmd, arg);

	if (r >= 0 && (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC))
		sm_opened_dup(fd, r);
	return r;
}

SM_EXPORT int fcntl(int fd, int cmd, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, cmd);
	arg = va_arg(ap, void *);
	va_end(ap);
	return fcntl_common(sm_real.fcntl, fd, cmd, arg);
}

SM_EXPORT int fcntl64(int fd, int cmd, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, cmd);
	arg = va_arg(ap, void *);
	va_end(ap);
	return fcntl_common(sm_real.fcntl64, fd, cmd, arg);
}
