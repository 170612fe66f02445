/*
 * badptrs - calls given bad pointers, which the kernel fails with EFAULT
 * (or, for accept with nothing to accept, EAGAIN), as a buggy or hostile
 * caller makes them; a preload must not fault where the call would not.
 *
 *   badptrs CASE LOW|NONE
 *
 * LOW is (void *)16 (the first page: NULL and a member's offset), NONE a
 * page mapped PROT_NONE (in the user range, aligned).  Prints "CASE: r=R
 * errno=E" and exits 0; a fault kills it (SIGSEGV).
 *   accept, accept4   the length pointer bad, on an empty non-blocking
 *                     listener
 *   accept-stale      a first accept with its length on a page of its
 *                     own, then that page made PROT_NONE and the same
 *                     length given to accept on the empty listener
 *   sendfile-off      sendfile of 8 MiB from a file into a socket with
 *                     the offset pointer bad
 *   accept-badfd, accept-file, accept-unlistened, accept-pending
 *                     the same on fd 999 (EBADF), a regular file
 *                     (ENOTSOCK), a socket that does not listen (EINVAL),
 *                     and a listener with a connection waiting (EFAULT)
 *   execve-path, execve-env, execve-envelem, execv-path, execveat,
 *   fexecve-env, posix_spawn-path, posix_spawn-env, clone3
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

extern char **environ;

int main(int argc, char **argv)
{
	char *av[] = { "true", NULL };
	char *badenv[3] = { "A=1", NULL, NULL };
	struct sockaddr_in sa;
	const char *c;
	void *bad;
	long r = 0;
	pid_t p;

	if (argc != 3) {
		fprintf(stderr, "usage: badptrs CASE LOW|NONE\n");
		return 2;
	}
	c = argv[1];
	if (!strcmp(argv[2], "LOW")) {
		bad = (void *)16;
	} else {
		bad = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
			   -1, 0);
		if (bad == MAP_FAILED)
			return 2;
	}
	badenv[1] = bad;
	errno = 0;
	if (!strcmp(c, "accept") || !strcmp(c, "accept4")) {
		int l = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);

		memset(&sa, 0, sizeof(sa));
		sa.sin_family = AF_INET;
		sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		if (l < 0 || bind(l, (struct sockaddr *)&sa, sizeof(sa)) ||
		    listen(l, 1))
			return 2;
		r = c[6] ? accept4(l, (struct sockaddr *)&sa, bad, 0)
			 : accept(l, (struct sockaddr *)&sa, bad);
	} else if (!strcmp(c, "accept-stale")) {
		int l = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0), k, a;
		socklen_t n = sizeof(sa), *len;
		char *pg = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		memset(&sa, 0, sizeof(sa));
		sa.sin_family = AF_INET;
		sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		if (l < 0 || pg == MAP_FAILED ||
		    bind(l, (struct sockaddr *)&sa, sizeof(sa)) || listen(l, 1) ||
		    getsockname(l, (struct sockaddr *)&sa, &n) ||
		    (k = socket(AF_INET, SOCK_STREAM, 0)) < 0 ||
		    connect(k, (struct sockaddr *)&sa, sizeof(sa)))
			return 2;
		len = (socklen_t *)(pg + 64);
		*len = sizeof(sa);
		for (a = -1, n = 0; a < 0 && n < 200; n++) {
			a = accept(l, (struct sockaddr *)&sa, len);
			if (a < 0)
				usleep(5000);
		}
		if (a < 0 || mprotect(pg, 4096, PROT_NONE))
			return 2;
		errno = 0;
		r = accept(l, (struct sockaddr *)&sa, len);
	} else if (!strcmp(c, "sendfile-off")) {
		int sv[2], f = open("/proc/self/exe", O_RDONLY);

		if (f < 0 || socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv))
			return 2;
		errno = 0;
		r = sendfile(sv[0], f, bad, 8 << 20);
	} else if (!strncmp(c, "accept-", 7)) {
		int l = -1;
		socklen_t n = sizeof(sa);

		memset(&sa, 0, sizeof(sa));
		sa.sin_family = AF_INET;
		sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		if (!strcmp(c, "accept-badfd")) {
			l = 999;
		} else if (!strcmp(c, "accept-file")) {
			l = open("/proc/self/exe", O_RDONLY);
		} else {
			l = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
			if (l < 0 ||
			    bind(l, (struct sockaddr *)&sa, sizeof(sa)))
				return 2;
		}
		if (!strcmp(c, "accept-pending")) {
			int k = socket(AF_INET, SOCK_STREAM, 0);

			if (listen(l, 1) ||
			    getsockname(l, (struct sockaddr *)&sa, &n) ||
			    k < 0 ||
			    connect(k, (struct sockaddr *)&sa, sizeof(sa)))
				return 2;
		}
		r = accept(l, (struct sockaddr *)&sa, bad);
	} else if (!strcmp(c, "execve-path")) {
		r = execve(bad, av, environ);
	} else if (!strcmp(c, "execve-env")) {
		r = execve("/bin/true", av, bad);
	} else if (!strcmp(c, "execve-envelem")) {
		r = execve("/bin/true", av, badenv);
	} else if (!strcmp(c, "execv-path")) {
		r = execv(bad, av);
	} else if (!strcmp(c, "execveat")) {
		r = syscall(SYS_execveat, AT_FDCWD, bad, av, environ, 0);
	} else if (!strcmp(c, "fexecve-env")) {
		int fd = open("/bin/true", O_RDONLY | O_CLOEXEC);

		r = fexecve(fd, av, bad);
	} else if (!strcmp(c, "posix_spawn-path")) {
		r = posix_spawn(&p, bad, NULL, NULL, av, environ);
		errno = (int)r;
	} else if (!strcmp(c, "posix_spawn-env")) {
		r = posix_spawn(&p, "/bin/true", NULL, NULL, av, bad);
		errno = (int)r;
	} else if (!strcmp(c, "clone3")) {
		r = syscall(SYS_clone3, bad, 88);
	} else {
		fprintf(stderr, "badptrs: unknown case %s\n", c);
		return 2;
	}
	printf("%s: r=%ld errno=%d\n", c, r, errno);
	return 0;
}
