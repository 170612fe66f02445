/*
 * rawlibc.c - the libc calls the library makes on its own behalf, made
 * as system calls, whatever else is preloaded.
 *
 * Another preload may interpose them, and call back into ours: fakeroot's
 * fstat writes to its own TCP socket, our write wrapper classifies that
 * socket with fstat, which is fakeroot's again, whose lock is held: the
 * program hung (fakeroot-tcp -- cat).  socket_wrapper and torsocks wrap
 * getsockname, getpeername and getsockopt; uid_wrapper the uids.  The link
 * turns the library's own calls of these into the __wrap_ functions here
 * (Makefile), each one system call with libc's return and errno
 * convention.  (The clocks are in clock.c.)
 */
#include "preload.h"

#include <fcntl.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define SYS6(n, a, b, c, d)                                                    \
	raw_syscall_libc((n), (long)(a), (long)(b), (long)(c), (long)(d), 0, 0)

int __wrap_fstat(int fd, struct stat *st);
int __wrap_fstatat(int dirfd, const char *path, struct stat *st, int flags);
int __wrap_stat(const char *path, struct stat *st);
int __wrap_lstat(const char *path, struct stat *st);
int __wrap_getsockname(int fd, struct sockaddr *a, socklen_t *len);
int __wrap_getpeername(int fd, struct sockaddr *a, socklen_t *len);
int __wrap_getsockopt(int fd, int level, int name, void *v, socklen_t *len);
int __wrap_ioctl(int fd, unsigned long req, ...);
off_t __wrap_lseek(int fd, off_t off, int whence);
uid_t __wrap_getuid(void);
uid_t __wrap_geteuid(void);
gid_t __wrap_getegid(void);

int __wrap_fstat(int fd, struct stat *st)
{
	return (int)SYS6(SYS_newfstatat, fd, "", st, AT_EMPTY_PATH);
}

int __wrap_fstatat(int dirfd, const char *path, struct stat *st, int flags)
{
	return (int)SYS6(SYS_newfstatat, dirfd, path, st, flags);
}

int __wrap_stat(const char *path, struct stat *st)
{
	return (int)SYS6(SYS_newfstatat, AT_FDCWD, path, st, 0);
}

int __wrap_lstat(const char *path, struct stat *st)
{
	return (int)SYS6(SYS_newfstatat, AT_FDCWD, path, st,
			 AT_SYMLINK_NOFOLLOW);
}

int __wrap_getsockname(int fd, struct sockaddr *a, socklen_t *len)
{
	return (int)SYS6(SYS_getsockname, fd, a, len, 0);
}

int __wrap_getpeername(int fd, struct sockaddr *a, socklen_t *len)
{
	return (int)SYS6(SYS_getpeername, fd, a, len, 0);
}

int __wrap_getsockopt(int fd, int level, int name, void *v, socklen_t *len)
{
	return (int)raw_syscall_libc(SYS_getsockopt, fd, level, name, (long)v,
				     (long)len, 0);
}

int __wrap_ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	return (int)SYS6(SYS_ioctl, fd, req, arg, 0);
}

off_t __wrap_lseek(int fd, off_t off, int whence)
{
	return (off_t)SYS6(SYS_lseek, fd, off, whence, 0);
}

/* These never fail. */
uid_t __wrap_getuid(void)
{
	return (uid_t)raw_syscall6(SYS_getuid, 0, 0, 0, 0, 0, 0);
}

uid_t __wrap_geteuid(void)
{
	return (uid_t)raw_syscall6(SYS_geteuid, 0, 0, 0, 0, 0, 0);
}

gid_t __wrap_getegid(void)
{
	return (gid_t)raw_syscall6(SYS_getegid, 0, 0, 0, 0, 0, 0);
}
