/*
 * rawclone.c - a child made by a raw clone system call rather than fork(),
 * as vsftpd makes its isolated sessions:
 *   syscall(SYS_clone, SIGCHLD | CLONE_NEW..., NULL)   (HOW "clone")
 *   syscall(SYS_clone3, {.exit_signal = SIGCHLD})      (HOW "clone3")
 *   clone(fn, stack, SIGCHLD, arg): libc's function    (HOW "libc")
 *   syscall(SYS_fork), as Mono's crash reporter forks    (HOW "fork")
 * libc runs no fork handler for such a child, yet it is a process of its
 * own.  libc's clone() starts the child in fn, on a stack of its own; fn
 * ends it with exit().
 *
 *   rawclone clone|clone3|libc|fork BYTES
 *
 * The parent makes a loopback TCP connection, then clones.  The child
 * changes its supplementary groups when root (setgroups: glibc's setxid
 * walks its list of threads, which a multi-threaded parent's child
 * inherits as it was), writes BYTES on the inherited socket, reads a
 * 1-byte acknowledgement and returns from main (exit(), destructors).  The
 * parent reads the bytes, acknowledges, reaps the child and prints pid=,
 * child=, got= and status= ("exit:N" or "signal:N"), one a line.
 */
#define PROG "rawclone"
#include "childxfer.h"

#include <grp.h>
#include <sched.h>
#include <linux/sched.h>
#include <signal.h>
#include <stdint.h>
#include <sys/syscall.h>

static long raw_clone(const char *how)
{
	if (strcmp(how, "clone3") == 0) {
		struct clone_args ca;

		memset(&ca, 0, sizeof(ca));
		ca.exit_signal = SIGCHLD;
		return syscall(SYS_clone3, &ca, sizeof(ca));
	}
#ifdef SYS_fork
	if (strcmp(how, "fork") == 0)
		return syscall(SYS_fork);
#endif
	return syscall(SYS_clone, SIGCHLD, NULL, NULL, NULL, NULL);
}

static void child(int fd, long bytes)
{
	if (getuid() == 0) {
		gid_t g = getgid();

		if (setgroups(1, &g) != 0)
			_exit(5);
	}
	xfer_send(fd, bytes);
}

static int fds[3];
static long nbytes;

static int libc_child(void *arg)
{
	(void)arg;
	close(fds[0]);
	close(fds[2]);
	child(fds[1], nbytes);
	exit(0);
}

int main(int argc, char **argv)
{
	static char stack[256 * 1024] __attribute__((aligned(16)));
	long bytes, pid;
	int lfd, cfd, sfd;

	if (argc < 3) {
		fprintf(stderr, "usage: rawclone clone|clone3|libc|fork BYTES\n");
		return 2;
	}
	bytes = atol(argv[2]);
	xfer_connect(&lfd, &cfd, &sfd);
	/* Give a preload's thread time to start and run. */
	usleep(100000);
	fds[0] = lfd;
	fds[1] = cfd;
	fds[2] = sfd;
	nbytes = bytes;
	if (strcmp(argv[1], "libc") == 0)
		pid = clone(libc_child, stack + sizeof(stack), SIGCHLD, NULL);
	else
		pid = raw_clone(argv[1]);
	if (pid < 0)
		die("clone");
	if (pid == 0) {
		close(lfd);
		close(sfd);
		child(cfd, bytes);
		return 0;
	}
	close(cfd);
	return xfer_receive(lfd, sfd, bytes, (pid_t)pid);
}
