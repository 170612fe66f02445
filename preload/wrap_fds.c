/*
 * wrap_fds.c - every close is seen, or its consequence is.
 *
 * A connection's fd may be closed where no wrapper of ours runs (stdio's
 * fclose closes inside libc; a raw close system call).  When its number is
 * then handed out again, bytes on the new object must not land in the old
 * connection's record.  So:
 *  - fclose/freopen retire the slot of the FILE's fd like close does, after
 *    counting what they flushed (wrap_stdio.h);
 *  - every call that creates an fd (open*, creat, pipe*, eventfd,
 *    timerfd_create, signalfd, epoll_create*, memfd_create, inotify_init*,
 *    pidfd_open, fopen, fds received with SCM_RIGHTS) retires whatever
 *    connection the slot of the returned number still holds: its close went
 *    unseen, and its record says so;
 *  - the ticker's check (core/fdcheck.c) is the net for the rest.
 * None of this is on a data call's path: the fast path of read, recv... is
 * untouched; recvmsg's metered path looks at msg_controllen only.
 */
#include "preload.h"

#include "../core/quiet.h"

#include "../core/rawsys.h"
#include "wrap_stdio.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <unistd.h>

int __open_2(const char *path, int flags);
int __open64_2(const char *path, int flags);
int __openat_2(int dirfd, const char *path, int flags);
int __openat64_2(int dirfd, const char *path, int flags);
int pidfd_open(pid_t pid, unsigned int flags);

static uint64_t real_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* fd was just handed out by a call we do not otherwise follow: anything
 * its slot still holds was closed without our seeing it. */
static void created(int fd)
{
	if (sm_tls_foreign()) /* a child on a TLS of its own */
		return;
	struct fd_slot *s = fdtab_slot(&sm_meter.tab, fd);
	int saved = errno;

	if (!s || fdtab_kind(s) == KIND_UNKNOWN || sm_foreign_process())
		return;
	meter_closed_unseen(&sm_meter, fd, real_now());
	errno = saved;
}

/* The generation of fd's slot before a stdio close (UINT64_MAX: none). */
static uint64_t gen_before(FILE *fp, int *fd)
{
	int saved = errno;
	struct fd_slot *s;

	*fd = fp ? fileno_unlocked(fp) : -1;
	errno = saved;
	s = fdtab_slot(&sm_meter.tab, *fd);
	if (!s || sm_foreign_process())
		return UINT64_MAX;
	return __atomic_load_n(&s->gen, __ATOMIC_ACQUIRE);
}

/*
 * After a stdio close of fd: retire the connection it held, if it is still
 * the one that was there before (the flush inside the close was counted in
 * it; another thread may have been handed the number since, and that new
 * connection stays).  ti: the kernel's view read before the close, or NULL.
 */
static void closed_after(int fd, uint64_t gen, const struct tcpinfo *ti)
{
	if (fd >= 0)
		progfd_await((unsigned)fd, (unsigned)fd);
	if (gen == UINT64_MAX)
		return;
	sm_settle_left(); /* as close() does */
	meter_closed_gen(&sm_meter, fd, (uint32_t)gen, real_now(), ti);
}

/* glibc's flag of a FILE whose last operation was output (libio.h). */
#define SM_IO_CURRENTLY_PUTTING 0x0800

/*
 * A TCP socket's FILE about to be closed by fclose or freopen: the kernel's
 * last word on the connection must be read after the close's flush and
 * before its close, and libc gives no moment in between.  So the flush is
 * made first, here, as our fflush makes it (counted as the close would have
 * counted it; a wide stream's output passes uncounted, which the kernel's
 * view then shows as unseen), then TCP_INFO is read; the real call finds
 * nothing left to send.  The system calls are the same as the close's
 * own: a flush that fails leaves the buffer discarded (__fpurge for a
 * wide stream, whose failed flush keeps it), as the close's would, and
 * the close then writes nothing more.  That failure is the
 * close's result: its errno in *flush_err (0: none).  Only when the record
 * would carry the kernel's view (tcp_info on, a metered TCP socket).
 */
static bool tcp_last_word(FILE *fp, int fd, uint64_t gen, struct tcpinfo *ti,
			  int *flush_err)
{
	int saved = errno;
	bool ok;

	*flush_err = 0;
	if (gen == UINT64_MAX || !meter_tcp_view_wanted(&sm_meter, fd))
		return false;
	if ((fp->_flags & SM_IO_CURRENTLY_PUTTING) &&
	    sm_stdio_flush(fp) == EOF) {
		*flush_err = errno;
		/* A byte stream's failed flush discards its buffer; a wide
		 * stream's keeps it, and the close would write it again (a
		 * second write, a SIGPIPE that killed the program, another
		 * errno; a resend after a partial write).  Discarded here,
		 * as the close's own failed flush leaves it. */
		__fpurge(fp);
	}
	ok = meter_tcp_view(&sm_meter, fd, ti);
	errno = saved;
	return ok;
}

/* Call fn on every fd of msg's SCM_RIGHTS messages. */
static void each_passed_fd(const struct msghdr *msg, void (*fn)(int))
{
	struct cmsghdr *c;

	for (c = CMSG_FIRSTHDR(msg); c; c = CMSG_NXTHDR((struct msghdr *)msg, c)) {
		const unsigned char *p = CMSG_DATA(c);
		size_t n, i;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS ||
		    c->cmsg_len < CMSG_LEN(0))
			continue;
		n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (i = 0; i < n; i++) {
			int fd;

			memcpy(&fd, p + i * sizeof(int), sizeof(int));
			fn(fd);
		}
	}
}

void sm_fds_received(const struct msghdr *msg)
{
	each_passed_fd(msg, created);
}

static void sent(int fd)
{
	if (!sm_foreign_process())
		fdtab_mark_shared(&sm_meter.tab, fd);
}

void sm_fds_sent(const struct msghdr *msg)
{
	if (sm_tls_foreign()) /* a child on a TLS of its own */
		return;
	each_passed_fd(msg, sent);
}

/* --- the calls that create fds ------------------------------------------ */

/* open's mode is there only with O_CREAT or O_TMPFILE. */
#define MODE_ARG(flags, mode)                                                  \
	do {                                                                   \
		va_list ap;                                                    \
		va_start(ap, flags);                                           \
		mode = (flags & (O_CREAT | O_TMPFILE)) ? va_arg(ap, mode_t) : 0; \
		va_end(ap);                                                    \
	} while (0)

static int made(int fd)
{
	if (fd >= 0)
		created(fd);
	return fd;
}

int sm_open_hooked(const char *path, int flags, mode_t mode)
{
	return made(sm_real.open(path, flags, mode));
}

SM_EXPORT int open(const char *path, int flags, ...)
{
	mode_t mode;

	MODE_ARG(flags, mode);
	return made(sm_real.open(path, flags, mode));
}

SM_EXPORT int open64(const char *path, int flags, ...)
{
	mode_t mode;

	MODE_ARG(flags, mode);
	return made(sm_real.open64(path, flags, mode));
}

SM_EXPORT int openat(int dirfd, const char *path, int flags, ...)
{
	mode_t mode;

	MODE_ARG(flags, mode);
	return made(sm_real.openat(dirfd, path, flags, mode));
}

SM_EXPORT int openat64(int dirfd, const char *path, int flags, ...)
{
	mode_t mode;

	MODE_ARG(flags, mode);
	return made(sm_real.openat64(dirfd, path, flags, mode));
}

SM_EXPORT int __open_2(const char *path, int flags)
{
	return made(sm_real.__open_2(path, flags));
}

SM_EXPORT int __open64_2(const char *path, int flags)
{
	return made(sm_real.__open64_2(path, flags));
}

SM_EXPORT int __openat_2(int dirfd, const char *path, int flags)
{
	return made(sm_real.__openat_2(dirfd, path, flags));
}

SM_EXPORT int __openat64_2(int dirfd, const char *path, int flags)
{
	return made(sm_real.__openat64_2(dirfd, path, flags));
}

SM_EXPORT int creat(const char *path, mode_t mode)
{
	return made(sm_real.creat(path, mode));
}

SM_EXPORT int creat64(const char *path, mode_t mode)
{
	return made(sm_real.creat64(path, mode));
}

static int made_pair(int r, const int *fds)
{
	if (r == 0) {
		created(fds[0]);
		created(fds[1]);
	}
	return r;
}

SM_EXPORT int pipe(int fds[2])
{
	return made_pair(sm_real.pipe(fds), fds);
}

SM_EXPORT int pipe2(int fds[2], int flags)
{
	return made_pair(sm_real.pipe2(fds, flags), fds);
}

SM_EXPORT int eventfd(unsigned int initval, int flags)
{
	return made(sm_real.eventfd(initval, flags));
}

SM_EXPORT int timerfd_create(int clockid, int flags)
{
	return made(sm_real.timerfd_create(clockid, flags));
}

SM_EXPORT int signalfd(int fd, const sigset_t *mask, int flags)
{
	/* fd >= 0 changes an existing signalfd: no new number. */
	int r = sm_real.signalfd(fd, mask, flags);

	return fd < 0 ? made(r) : r;
}

SM_EXPORT int epoll_create(int size)
{
	return made(sm_real.epoll_create(size));
}

SM_EXPORT int epoll_create1(int flags)
{
	return made(sm_real.epoll_create1(flags));
}

SM_EXPORT int memfd_create(const char *name, unsigned int flags)
{
	return made(sm_real.memfd_create(name, flags));
}

SM_EXPORT int inotify_init(void)
{
	return made(sm_real.inotify_init());
}

SM_EXPORT int inotify_init1(int flags)
{
	return made(sm_real.inotify_init1(flags));
}

SM_EXPORT int pidfd_open(pid_t pid, unsigned int flags)
{
	return made(sm_real.pidfd_open(pid, flags));
}

static FILE *made_file(FILE *fp)
{
	int saved = errno;

	if (fp) {
		int fd = fileno_unlocked(fp);

		errno = saved;
		if (fd >= 0)
			created(fd);
	}
	return fp;
}

SM_EXPORT FILE *fopen(const char *path, const char *mode)
{
	return made_file(sm_real.fopen(path, mode));
}

SM_EXPORT FILE *fopen64(const char *path, const char *mode)
{
	return made_file(sm_real.fopen64(path, mode));
}

/* --- the stdio calls that close fds -------------------------------------- */

SM_EXPORT int fclose(FILE *fp)
{
	struct sm_stdio_close sc;
	struct tcpinfo ti;
	int fd, r, saved, flush_err;
	uint64_t gen = gen_before(fp, &fd);
	bool have_ti = tcp_last_word(fp, fd, gen, &ti, &flush_err);
	bool flushing = sm_stdio_close_begin(fp, &sc);

	r = sm_real.fclose(fp);
	saved = errno;
	/* What the close flushed counts for the old connection, then it
	 * ends. */
	if (flushing)
		sm_stdio_close_end(&sc, r);
	if (flush_err && r == 0) {
		/* Our flush failed where the close's own would have. */
		r = EOF;
		saved = flush_err;
	}
	closed_after(fd, gen, have_ti ? &ti : NULL);
	errno = saved;
	return r;
}

/* freopen: a flush that fails is not its failure (glibc's goes on). */
static FILE *reopened(FILE *r, int fd, uint64_t gen, bool flushing,
		      const struct sm_stdio_close *sc, const struct tcpinfo *ti)
{
	int saved = errno;

	if (flushing)
		sm_stdio_close_end(sc, r ? 0 : EOF);
	closed_after(fd, gen, ti);
	errno = saved;
	return made_file(r);
}

SM_EXPORT FILE *freopen(const char *path, const char *mode, FILE *fp)
{
	struct sm_stdio_close sc;
	struct tcpinfo ti;
	int fd, flush_err;
	uint64_t gen = gen_before(fp, &fd);
	bool have_ti = tcp_last_word(fp, fd, gen, &ti, &flush_err);
	bool flushing = sm_stdio_close_begin(fp, &sc);

	return reopened(sm_real.freopen(path, mode, fp), fd, gen, flushing, &sc,
			have_ti ? &ti : NULL);
}

SM_EXPORT FILE *freopen64(const char *path, const char *mode, FILE *fp)
{
	struct sm_stdio_close sc;
	struct tcpinfo ti;
	int fd, flush_err;
	uint64_t gen = gen_before(fp, &fd);
	bool have_ti = tcp_last_word(fp, fd, gen, &ti, &flush_err);
	bool flushing = sm_stdio_close_begin(fp, &sc);

	return reopened(sm_real.freopen64(path, mode, fp), fd, gen, flushing, &sc,
			have_ti ? &ti : NULL);
}

/* --- before binding ------------------------------------------------------
 * (see unbound.c): the system call itself, or for stdio a failure, which
 * only dlsym re-entering us could ever meet. */

#define BOUND(name) (sm_bind() && sm_real.name != unbound_##name)

int unbound_open(const char *path, int flags, ...)
{
	mode_t mode;

	MODE_ARG(flags, mode);
	if (BOUND(open))
		return sm_real.open(path, flags, mode);
	return (int)SM_SYSCALL(SYS_openat, AT_FDCWD, path, flags, mode);
}

int unbound_open64(const char *path, int flags, ...)
{
	mode_t mode;

	MODE_ARG(flags, mode);
	if (BOUND(open64))
		return sm_real.open64(path, flags, mode);
	return (int)SM_SYSCALL(SYS_openat, AT_FDCWD, path, flags | O_LARGEFILE,
			    mode);
}

int unbound_openat(int dirfd, const char *path, int flags, ...)
{
	mode_t mode;

	MODE_ARG(flags, mode);
	if (BOUND(openat))
		return sm_real.openat(dirfd, path, flags, mode);
	return (int)SM_SYSCALL(SYS_openat, dirfd, path, flags, mode);
}

int unbound_openat64(int dirfd, const char *path, int flags, ...)
{
	mode_t mode;

	MODE_ARG(flags, mode);
	if (BOUND(openat64))
		return sm_real.openat64(dirfd, path, flags, mode);
	return (int)SM_SYSCALL(SYS_openat, dirfd, path, flags | O_LARGEFILE,
			    mode);
}

int unbound___open_2(const char *path, int flags)
{
	if (BOUND(__open_2))
		return sm_real.__open_2(path, flags);
	return (int)SM_SYSCALL(SYS_openat, AT_FDCWD, path, flags, 0);
}

int unbound___open64_2(const char *path, int flags)
{
	if (BOUND(__open64_2))
		return sm_real.__open64_2(path, flags);
	return (int)SM_SYSCALL(SYS_openat, AT_FDCWD, path, flags | O_LARGEFILE,
			    0);
}

int unbound___openat_2(int dirfd, const char *path, int flags)
{
	if (BOUND(__openat_2))
		return sm_real.__openat_2(dirfd, path, flags);
	return (int)SM_SYSCALL(SYS_openat, dirfd, path, flags, 0);
}

int unbound___openat64_2(int dirfd, const char *path, int flags)
{
	if (BOUND(__openat64_2))
		return sm_real.__openat64_2(dirfd, path, flags);
	return (int)SM_SYSCALL(SYS_openat, dirfd, path, flags | O_LARGEFILE, 0);
}

int unbound_creat(const char *path, mode_t mode)
{
	if (BOUND(creat))
		return sm_real.creat(path, mode);
	return (int)SM_SYSCALL(SYS_openat, AT_FDCWD, path,
			    O_CREAT | O_WRONLY | O_TRUNC, mode);
}

int unbound_creat64(const char *path, mode_t mode)
{
	if (BOUND(creat64))
		return sm_real.creat64(path, mode);
	return (int)SM_SYSCALL(SYS_openat, AT_FDCWD, path,
			    O_CREAT | O_WRONLY | O_TRUNC | O_LARGEFILE, mode);
}

int unbound_pipe(int *fds)
{
	if (BOUND(pipe))
		return sm_real.pipe(fds);
	return (int)SM_SYSCALL(SYS_pipe2, fds, 0);
}

int unbound_pipe2(int *fds, int flags)
{
	if (BOUND(pipe2))
		return sm_real.pipe2(fds, flags);
	return (int)SM_SYSCALL(SYS_pipe2, fds, flags);
}

int unbound_eventfd(unsigned int initval, int flags)
{
	if (BOUND(eventfd))
		return sm_real.eventfd(initval, flags);
	return (int)SM_SYSCALL(SYS_eventfd2, initval, flags);
}

int unbound_timerfd_create(int clockid, int flags)
{
	if (BOUND(timerfd_create))
		return sm_real.timerfd_create(clockid, flags);
	return (int)SM_SYSCALL(SYS_timerfd_create, clockid, flags);
}

int unbound_signalfd(int fd, const sigset_t *mask, int flags)
{
	if (BOUND(signalfd))
		return sm_real.signalfd(fd, mask, flags);
	return (int)SM_SYSCALL(SYS_signalfd4, fd, mask, _NSIG / 8, flags);
}

int unbound_epoll_create(int size)
{
	if (BOUND(epoll_create))
		return sm_real.epoll_create(size);
	if (size <= 0) {
		errno = EINVAL;
		return -1;
	}
	return (int)SM_SYSCALL(SYS_epoll_create1, 0);
}

int unbound_epoll_create1(int flags)
{
	if (BOUND(epoll_create1))
		return sm_real.epoll_create1(flags);
	return (int)SM_SYSCALL(SYS_epoll_create1, flags);
}

int unbound_memfd_create(const char *name, unsigned int flags)
{
	if (BOUND(memfd_create))
		return sm_real.memfd_create(name, flags);
	return (int)SM_SYSCALL(SYS_memfd_create, name, flags);
}

int unbound_inotify_init(void)
{
	if (BOUND(inotify_init))
		return sm_real.inotify_init();
	return (int)SM_SYSCALL(SYS_inotify_init1, 0);
}

int unbound_inotify_init1(int flags)
{
	if (BOUND(inotify_init1))
		return sm_real.inotify_init1(flags);
	return (int)SM_SYSCALL(SYS_inotify_init1, flags);
}

int unbound_pidfd_open(pid_t pid, unsigned int flags)
{
	if (BOUND(pidfd_open))
		return sm_real.pidfd_open(pid, flags);
	return (int)SM_SYSCALL(SYS_pidfd_open, pid, flags);
}

FILE *unbound_fopen(const char *path, const char *mode)
{
	if (BOUND(fopen))
		return sm_real.fopen(path, mode);
	errno = ENOSYS;
	return NULL;
}

FILE *unbound_fopen64(const char *path, const char *mode)
{
	if (BOUND(fopen64))
		return sm_real.fopen64(path, mode);
	errno = ENOSYS;
	return NULL;
}

FILE *unbound_freopen(const char *path, const char *mode, FILE *fp)
{
	if (BOUND(freopen))
		return sm_real.freopen(path, mode, fp);
	errno = ENOSYS;
	return NULL;
}

FILE *unbound_freopen64(const char *path, const char *mode, FILE *fp)
{
	if (BOUND(freopen64))
		return sm_real.freopen64(path, mode, fp);
	errno = ENOSYS;
	return NULL;
}

int unbound_fclose(FILE *fp)
{
	if (BOUND(fclose))
		return sm_real.fclose(fp);
	errno = ENOSYS;
	return EOF;
}
