/*
 * unbound.c - the real functions before they are bound.
 *
 * sm_real starts out pointing at these stubs, so a wrapper always calls
 * sm_real.NAME without testing it: the fast path is a plain tail call.  A
 * stub binds every real function (once, sm_bind) and forwards; while dlsym
 * itself re-enters a wrapper on this thread, or when libc lacks the
 * function, it makes the raw system call instead.
 */
#include "preload.h"

#include <fcntl.h>
#include <stdarg.h>
#include <sys/syscall.h>
#include <unistd.h>

ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen);
ssize_t __recv_chk(int fd, void *buf, size_t n, size_t buflen, int flags);
ssize_t __recvfrom_chk(int fd, void *buf, size_t n, size_t buflen, int flags,
		       struct sockaddr *from, socklen_t *fromlen);

struct sm_real sm_real SM_FORK_DATA = {
#define X(name, ret, args) .name = unbound_##name,
	SM_REAL_FUNCS(X)
#undef X
};

/* True when sm_real.name is now the real function. */
#define BOUND(name) (sm_bind() && sm_real.name != unbound_##name)

ssize_t unbound_read(int fd, void *buf, size_t n)
{
	if (BOUND(read))
		return sm_real.read(fd, buf, n);
	return SM_SYSCALL(SYS_read, fd, buf, n);
}

ssize_t unbound___read_chk(int fd, void *buf, size_t n, size_t buflen)
{
	if (BOUND(__read_chk))
		return sm_real.__read_chk(fd, buf, n, buflen);
	return SM_SYSCALL(SYS_read, fd, buf, n);
}

ssize_t unbound_write(int fd, const void *buf, size_t n)
{
	if (BOUND(write))
		return sm_real.write(fd, buf, n);
	return SM_SYSCALL(SYS_write, fd, buf, n);
}

ssize_t unbound_readv(int fd, const struct iovec *iov, int cnt)
{
	if (BOUND(readv))
		return sm_real.readv(fd, iov, cnt);
	return SM_SYSCALL(SYS_readv, fd, iov, cnt);
}

ssize_t unbound_writev(int fd, const struct iovec *iov, int cnt)
{
	if (BOUND(writev))
		return sm_real.writev(fd, iov, cnt);
	return SM_SYSCALL(SYS_writev, fd, iov, cnt);
}

ssize_t unbound_send(int fd, const void *buf, size_t n, int flags)
{
	if (BOUND(send))
		return sm_real.send(fd, buf, n, flags);
	return SM_SYSCALL(SYS_sendto, fd, buf, n, flags, NULL, 0);
}

ssize_t unbound_recv(int fd, void *buf, size_t n, int flags)
{
	if (BOUND(recv))
		return sm_real.recv(fd, buf, n, flags);
	return SM_SYSCALL(SYS_recvfrom, fd, buf, n, flags, NULL, NULL);
}

ssize_t unbound___recv_chk(int fd, void *buf, size_t n, size_t buflen,
				  int flags)
{
	if (BOUND(__recv_chk))
		return sm_real.__recv_chk(fd, buf, n, buflen, flags);
	return SM_SYSCALL(SYS_recvfrom, fd, buf, n, flags, NULL, NULL);
}

ssize_t unbound_sendto(int fd, const void *buf, size_t n, int flags,
			      const struct sockaddr *to, socklen_t tolen)
{
	if (BOUND(sendto))
		return sm_real.sendto(fd, buf, n, flags, to, tolen);
	return SM_SYSCALL(SYS_sendto, fd, buf, n, flags, to, tolen);
}

ssize_t unbound_recvfrom(int fd, void *buf, size_t n, int flags,
				struct sockaddr *from, socklen_t *fromlen)
{
	if (BOUND(recvfrom))
		return sm_real.recvfrom(fd, buf, n, flags, from, fromlen);
	return SM_SYSCALL(SYS_recvfrom, fd, buf, n, flags, from, fromlen);
}

ssize_t unbound___recvfrom_chk(int fd, void *buf, size_t n,
				      size_t buflen, int flags,
				      struct sockaddr *from,
				      socklen_t *fromlen)
{
	if (BOUND(__recvfrom_chk))
		return sm_real.__recvfrom_chk(fd, buf, n, buflen, flags, from,
					      fromlen);
	return SM_SYSCALL(SYS_recvfrom, fd, buf, n, flags, from, fromlen);
}

ssize_t unbound_sendmsg(int fd, const struct msghdr *msg, int flags)
{
	if (BOUND(sendmsg))
		return sm_real.sendmsg(fd, msg, flags);
	return SM_SYSCALL(SYS_sendmsg, fd, msg, flags);
}

ssize_t unbound_recvmsg(int fd, struct msghdr *msg, int flags)
{
	if (BOUND(recvmsg))
		return sm_real.recvmsg(fd, msg, flags);
	return SM_SYSCALL(SYS_recvmsg, fd, msg, flags);
}

int unbound_sendmmsg(int fd, struct mmsghdr *v, unsigned int n,
			    int flags)
{
	if (BOUND(sendmmsg))
		return sm_real.sendmmsg(fd, v, n, flags);
	return (int)SM_SYSCALL(SYS_sendmmsg, fd, v, n, flags);
}

int unbound_recvmmsg(int fd, struct mmsghdr *v, unsigned int n,
			    int flags, struct timespec *timeout)
{
	if (BOUND(recvmmsg))
		return sm_real.recvmmsg(fd, v, n, flags, timeout);
	return (int)SM_SYSCALL(SYS_recvmmsg, fd, v, n, flags, timeout);
}

ssize_t unbound_sendfile(int out, int in, off_t *off, size_t n)
{
	if (BOUND(sendfile))
		return sm_real.sendfile(out, in, off, n);
	return SM_SYSCALL(SYS_sendfile, out, in, off, n);
}

ssize_t unbound_sendfile64(int out, int in, off64_t *off, size_t n)
{
	if (BOUND(sendfile64))
		return sm_real.sendfile64(out, in, off, n);
	return SM_SYSCALL(SYS_sendfile, out, in, off, n);
}

int unbound_socket(int domain, int type, int protocol)
{
	if (BOUND(socket))
		return sm_real.socket(domain, type, protocol);
	return (int)SM_SYSCALL(SYS_socket, domain, type, protocol);
}

int unbound_socketpair(int domain, int type, int protocol, int *sv)
{
	if (BOUND(socketpair))
		return sm_real.socketpair(domain, type, protocol, sv);
	return (int)SM_SYSCALL(SYS_socketpair, domain, type, protocol, sv);
}

int unbound_accept(int fd, struct sockaddr *addr, socklen_t *len)
{
	if (BOUND(accept))
		return sm_real.accept(fd, addr, len);
	return (int)SM_SYSCALL(SYS_accept4, fd, addr, len, 0);
}

int unbound_accept4(int fd, struct sockaddr *addr, socklen_t *len,
			   int flags)
{
	if (BOUND(accept4))
		return sm_real.accept4(fd, addr, len, flags);
	return (int)SM_SYSCALL(SYS_accept4, fd, addr, len, flags);
}

int unbound_connect(int fd, const struct sockaddr *addr, socklen_t len)
{
	if (BOUND(connect))
		return sm_real.connect(fd, addr, len);
	return (int)SM_SYSCALL(SYS_connect, fd, addr, len);
}

int unbound_bind(int fd, const struct sockaddr *addr, socklen_t len)
{
	if (BOUND(bind))
		return sm_real.bind(fd, addr, len);
	return (int)SM_SYSCALL(SYS_bind, fd, addr, len);
}

int unbound_listen(int fd, int backlog)
{
	if (BOUND(listen))
		return sm_real.listen(fd, backlog);
	return (int)SM_SYSCALL(SYS_listen, fd, backlog);
}

int unbound_close(int fd)
{
	if (BOUND(close))
		return sm_real.close(fd);
	return (int)SM_SYSCALL(SYS_close, fd);
}

int unbound_dup(int fd)
{
	if (BOUND(dup))
		return sm_real.dup(fd);
	return (int)SM_SYSCALL(SYS_dup, fd);
}

int unbound_dup2(int oldfd, int newfd)
{
	if (BOUND(dup2))
		return sm_real.dup2(oldfd, newfd);
	if (oldfd == newfd) /* dup3 refuses this; dup2 checks oldfd */
		return (int)SM_SYSCALL(SYS_fcntl, oldfd, F_GETFD) < 0 ? -1 : newfd;
	return (int)SM_SYSCALL(SYS_dup3, oldfd, newfd, 0);
}

int unbound_dup3(int oldfd, int newfd, int flags)
{
	if (BOUND(dup3))
		return sm_real.dup3(oldfd, newfd, flags);
	return (int)SM_SYSCALL(SYS_dup3, oldfd, newfd, flags);
}

/* fcntl's third argument is an int, a long or a pointer depending on cmd;
 * like glibc itself, pass it on as a pointer-sized value. */
int unbound_fcntl(int fd, int cmd, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, cmd);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (BOUND(fcntl))
		return sm_real.fcntl(fd, cmd, arg);
	return (int)SM_SYSCALL(SYS_fcntl, fd, cmd, arg);
}

int unbound_fcntl64(int fd, int cmd, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, cmd);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (BOUND(fcntl64))
		return sm_real.fcntl64(fd, cmd, arg);
	return (int)SM_SYSCALL(SYS_fcntl, fd, cmd, arg);
}

int unbound_close_range(unsigned int first, unsigned int last,
			       int flags)
{
	if (BOUND(close_range))
		return sm_real.close_range(first, last, flags);
	return (int)SM_SYSCALL(SYS_close_range, first, last, flags);
}

void unbound_closefrom(int first)
{
	if (BOUND(closefrom)) {
		sm_real.closefrom(first);
		return;
	}
	SM_SYSCALL(SYS_close_range, (unsigned)first, ~0u, 0);
}
