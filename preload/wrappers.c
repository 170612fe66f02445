/*
 * wrappers.c - the interposed calls.
 *
 * Every wrapper has the same shape (after cwrap's socket_wrapper): the
 * exported name calls the real function through sm_real (falling back to a
 * raw system call if dlsym is re-entered while binding), then accounts with
 * sm_data() or tells the runtime about a lifecycle change.  The return
 * value and errno reach the program as the real call left them: sm_data
 * and the lifecycle hooks never change errno.
 */
#include "preload.h"

#include <fcntl.h>
#include <stdarg.h>
#include <sys/sendfile.h>
#include <sys/syscall.h>
#include <unistd.h>

/* glibc declares these only in its fortified headers. */
ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen);
ssize_t __recv_chk(int fd, void *buf, size_t n, size_t buflen, int flags);
ssize_t __recvfrom_chk(int fd, void *buf, size_t n, size_t buflen, int flags,
		       struct sockaddr *from, socklen_t *fromlen);

/* Make sure sm_real.name is bound; false means "use the raw syscall". */
#define BOUND(name) (SM_LIKELY(sm_real.name != NULL) || (sm_bind() && sm_real.name))

/* --- data calls ---------------------------------------------------------- */

SM_EXPORT ssize_t read(int fd, void *buf, size_t n)
{
	uint64_t t0 = sm_start();
	ssize_t r = BOUND(read) ? sm_real.read(fd, buf, n)
				: syscall(SYS_read, fd, buf, n);

	sm_data(fd, DIR_IN, r, t0);
	return r;
}

SM_EXPORT ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen)
{
	uint64_t t0 = sm_start();
	ssize_t r = BOUND(__read_chk) ? sm_real.__read_chk(fd, buf, n, buflen)
				      : syscall(SYS_read, fd, buf, n);

	sm_data(fd, DIR_IN, r, t0);
	return r;
}

SM_EXPORT ssize_t write(int fd, const void *buf, size_t n)
{
	uint64_t t0 = sm_start();
	ssize_t r = BOUND(write) ? sm_real.write(fd, buf, n)
				 : syscall(SYS_write, fd, buf, n);

	sm_data(fd, DIR_OUT, r, t0);
	return r;
}

SM_EXPORT ssize_t readv(int fd, const struct iovec *iov, int cnt)
{
	uint64_t t0 = sm_start();
	ssize_t r = BOUND(readv) ? sm_real.readv(fd, iov, cnt)
				 : syscall(SYS_readv, fd, iov, cnt);

	sm_data(fd, DIR_IN, r, t0);
	return r;
}

SM_EXPORT ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
	uint64_t t0 = sm_start();
	ssize_t r = BOUND(writev) ? sm_real.writev(fd, iov, cnt)
				  : syscall(SYS_writev, fd, iov, cnt);

	sm_data(fd, DIR_OUT, r, t0);
	return r;
}

SM_EXPORT ssize_t send(int fd, const void *buf, size_t n, int flags)
{
	uint64_t t0 = sm_start();
	ssize_t r = BOUND(send) ? sm_real.send(fd, buf, n, flags)
				: syscall(SYS_sendto, fd, buf, n, flags, NULL, 0);

	sm_data(fd, DIR_OUT, r, t0);
	return r;
}

SM_EXPORT ssize_t recv(int fd, void *buf, size_t n, int flags)
{
	uint64_t t0 = sm_start();
	ssize_t r = BOUND(recv) ? sm_real.recv(fd, buf, n, flags)
				: syscall(SYS_recvfrom, fd, buf, n, flags, NULL,
					  NULL);

	sm_data(fd, DIR_IN, r, t0);
	return r;
}

SM_EXPORT ssize_t __recv_chk(int fd, void *buf, size_t n, size_t buflen,
			     int flags)
{
	uint64_t t0 = sm_start();
	ssize_t r = BOUND(__recv_chk)
			    ? sm_real.__recv_chk(fd, buf, n, buflen, flags)
			    : syscall(SYS_recvfrom, fd, buf, n, flags, NULL,
				      NULL);

	sm_data(fd, DIR_IN, r, t0);
	return r;
}

SM_EXPORT ssize_t sendto(int fd, const void *buf, size_t n, int flags,
			 const struct sockaddr *to, socklen_t tolen)
{
	uint64_t t0 = sm_start();
	ssize_t r = BOUND(sendto)
			    ? sm_real.sendto(fd, buf, n, flags, to, tolen)
			    : syscall(SYS_sendto, fd, buf, n, flags, to, tolen);

	sm_data(fd, DIR_OUT, r, t0);
	return r;
}

SM_EXPORT ssize_t recvfrom(int fd, void *buf, size_t n, int flags,
			   struct sockaddr *from, socklen_t *fromlen)
{
	uint64_t t0 = sm_start();
	ssize_t r = BOUND(recvfrom)
			    ? sm_real.recvfrom(fd, buf, n, flags, from, fromlen)
			    : syscall(SYS_recvfrom, fd, buf, n, flags, from,
				      fromlen);

	sm_data(fd, DIR_IN, r, t0);
	return r;
}

SM_EXPORT ssize_t __recvfrom_chk(int fd, void *buf, size_t n, size_t buflen,
				 int flags, struct sockaddr *from,
				 socklen_t *fromlen)
{
	uint64_t t0 = sm_start();
	ssize_t r = BOUND(__recvfrom_chk)
			    ? sm_real.__recvfrom_chk(fd, buf, n, buflen, flags,
						     from, fromlen)
			    : syscall(SYS_recvfrom, fd, buf, n, flags, from,
				      fromlen);

	sm_data(fd, DIR_IN, r, t0);
	return r;
}

SM_EXPORT ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
	uint64_t t0 = sm_start();
	ssize_t r = BOUND(sendmsg) ? sm_real.sendmsg(fd, msg, flags)
				   : syscall(SYS_sendmsg, fd, msg, flags);

	sm_data(fd, DIR_OUT, r, t0);
	return r;
}

SM_EXPORT ssize_t recvmsg(int fd, struct msghdr *msg, int flags)
{
	uint64_t t0 = sm_start();
	ssize_t r = BOUND(recvmsg) ? sm_real.recvmsg(fd, msg, flags)
				   : syscall(SYS_recvmsg, fd, msg, flags);

	sm_data(fd, DIR_IN, r, t0);
	return r;
}

/* The bytes an *mmsg call moved: msg_len of each message it handled. */
static int64_t mmsg_bytes(const struct mmsghdr *v, int r)
{
	int64_t sum = 0;
	int i;

	if (r < 0)
		return r;
	for (i = 0; i < r; i++)
		sum += v[i].msg_len;
	return sum;
}

SM_EXPORT int sendmmsg(int fd, struct mmsghdr *v, unsigned int n, int flags)
{
	uint64_t t0 = sm_start();
	int r = BOUND(sendmmsg) ? sm_real.sendmmsg(fd, v, n, flags)
				: (int)syscall(SYS_sendmmsg, fd, v, n, flags);

	sm_data(fd, DIR_OUT, mmsg_bytes(v, r), t0);
	return r;
}

SM_EXPORT int recvmmsg(int fd, struct mmsghdr *v, unsigned int n, int flags,
		       struct timespec *timeout)
{
	uint64_t t0 = sm_start();
	int r = BOUND(recvmmsg)
			? sm_real.recvmmsg(fd, v, n, flags, timeout)
			: (int)syscall(SYS_recvmmsg, fd, v, n, flags, timeout);

	sm_data(fd, DIR_IN, mmsg_bytes(v, r), t0);
	return r;
}

SM_EXPORT ssize_t sendfile(int out, int in, off_t *off, size_t n)
{
	uint64_t t0 = sm_start();
	ssize_t r = BOUND(sendfile) ? sm_real.sendfile(out, in, off, n)
				    : syscall(SYS_sendfile, out, in, off, n);

	sm_data(out, DIR_OUT, r, t0);
	sm_data(in, DIR_IN, r, 0);
	return r;
}

SM_EXPORT ssize_t sendfile64(int out, int in, off64_t *off, size_t n)
{
	uint64_t t0 = sm_start();
	ssize_t r = BOUND(sendfile64) ? sm_real.sendfile64(out, in, off, n)
				      : syscall(SYS_sendfile, out, in, off, n);

	sm_data(out, DIR_OUT, r, t0);
	sm_data(in, DIR_IN, r, 0);
	return r;
}

/* --- lifecycle calls ----------------------------------------------------- */

SM_EXPORT int socket(int domain, int type, int protocol)
{
	int fd = BOUND(socket) ? sm_real.socket(domain, type, protocol)
			       : (int)syscall(SYS_socket, domain, type, protocol);

	if (fd >= 0)
		sm_opened_socket(fd, domain, type, protocol);
	return fd;
}

SM_EXPORT int socketpair(int domain, int type, int protocol, int sv[2])
{
	int r = BOUND(socketpair)
			? sm_real.socketpair(domain, type, protocol, sv)
			: (int)syscall(SYS_socketpair, domain, type, protocol,
				       sv);

	if (r == 0) {
		sm_opened_socket(sv[0], domain, type, protocol);
		sm_opened_socket(sv[1], domain, type, protocol);
	}
	return r;
}

SM_EXPORT int accept(int lfd, struct sockaddr *addr, socklen_t *len)
{
	int fd = BOUND(accept) ? sm_real.accept(lfd, addr, len)
			       : (int)syscall(SYS_accept4, lfd, addr, len, 0);

	if (fd >= 0)
		sm_opened_accept(lfd, fd);
	return fd;
}

SM_EXPORT int accept4(int lfd, struct sockaddr *addr, socklen_t *len,
		      int flags)
{
	int fd = BOUND(accept4)
			 ? sm_real.accept4(lfd, addr, len, flags)
			 : (int)syscall(SYS_accept4, lfd, addr, len, flags);

	if (fd >= 0)
		sm_opened_accept(lfd, fd);
	return fd;
}

SM_EXPORT int connect(int fd, const struct sockaddr *addr, socklen_t len)
{
	int r = BOUND(connect) ? sm_real.connect(fd, addr, len)
			       : (int)syscall(SYS_connect, fd, addr, len);
	int saved = errno;

	/* A non-blocking connect in progress has its peer all the same. */
	if (r == 0 || saved == EINPROGRESS)
		sm_connected(fd, addr, len);
	errno = saved;
	return r;
}

SM_EXPORT int bind(int fd, const struct sockaddr *addr, socklen_t len)
{
	int r = BOUND(bind) ? sm_real.bind(fd, addr, len)
			    : (int)syscall(SYS_bind, fd, addr, len);

	if (r == 0)
		sm_bound(fd);
	return r;
}

SM_EXPORT int close(int fd)
{
	/* Retire first: once the real close returns, another thread may
	 * already hold a new fd with this number. */
	sm_closing(fd);
	return BOUND(close) ? sm_real.close(fd) : (int)syscall(SYS_close, fd);
}

SM_EXPORT int close_range(unsigned int first, unsigned int last, int flags)
{
	int r;

	if (!BOUND(close_range)) {
		errno = ENOSYS;
		return -1;
	}
	r = sm_real.close_range(first, last, flags);
	/* CLOSE_RANGE_CLOEXEC only marks the fds: they stay open. */
	if (r == 0 && !(flags & CLOSE_RANGE_CLOEXEC))
		sm_closing_range(first, last);
	return r;
}

SM_EXPORT void closefrom(int first)
{
	if (first < 0)
		first = 0;
	sm_closing_range((unsigned)first, ~0u);
	if (BOUND(closefrom))
		sm_real.closefrom(first);
}

SM_EXPORT int dup(int oldfd)
{
	int fd = BOUND(dup) ? sm_real.dup(oldfd) : (int)syscall(SYS_dup, oldfd);

	if (fd >= 0)
		sm_opened_dup(oldfd, fd);
	return fd;
}

SM_EXPORT int dup2(int oldfd, int newfd)
{
	int fd = BOUND(dup2) ? sm_real.dup2(oldfd, newfd)
			     : (int)syscall(SYS_dup3, oldfd, newfd, 0);

	if (fd >= 0)
		sm_opened_dup(oldfd, fd);
	return fd;
}

SM_EXPORT int dup3(int oldfd, int newfd, int flags)
{
	int fd = BOUND(dup3) ? sm_real.dup3(oldfd, newfd, flags)
			     : (int)syscall(SYS_dup3, oldfd, newfd, flags);

	if (fd >= 0)
		sm_opened_dup(oldfd, fd);
	return fd;
}

/* fcntl's third argument is an int, a long or a pointer depending on cmd;
 * like glibc itself, pass it on as a pointer-sized value. */
static int fcntl_common(sm_fcntl_fn real, int fd, int cmd, void *arg)
{
	int r = real ? real(fd, cmd, arg)
		     : (int)syscall(SYS_fcntl, fd, cmd, arg);

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
	return fcntl_common(BOUND(fcntl) ? sm_real.fcntl : NULL, fd, cmd, arg);
}

SM_EXPORT int fcntl64(int fd, int cmd, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, cmd);
	arg = va_arg(ap, void *);
	va_end(ap);
	return fcntl_common(BOUND(fcntl64) ? sm_real.fcntl64 : NULL, fd, cmd,
			    arg);
}
