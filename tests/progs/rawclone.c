/*
 * rawclone.c - a child made by a raw clone system call rather than fork(),
 * as vsftpd makes its isolated sessions:
 *   syscall(SYS_clone, SIGCHLD | CLONE_NEW..., NULL)   (HOW "clone")
 *   syscall(SYS_clone3, {.exit_signal = SIGCHLD})      (HOW "clone3")
 * libc runs no fork handler for such a child, yet it is a process of its
 * own.
 *
 *   rawclone HOW BYTES
 *
 * The parent makes a loopback TCP connection, then clones.  The child
 * changes its supplementary groups when root (setgroups: glibc's setxid
 * walks its list of threads, which a multi-threaded parent's child
 * inherits as it was), writes BYTES on the inherited socket, reads a
 * 1-byte acknowledgement and returns from main (exit(), destructors).  The
 * parent reads the bytes, acknowledges, reaps the child and prints pid=,
 * child=, got= and status= ("exit:N" or "signal:N"), one a line.
 */
#include <errno.h>
#include <grp.h>
#include <linux/sched.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void die(const char *what)
{
	fprintf(stderr, "rawclone: %s: %s\n", what, strerror(errno));
	exit(2);
}

static long raw_clone(const char *how)
{
	if (strcmp(how, "clone3") == 0) {
		struct clone_args ca;

		memset(&ca, 0, sizeof(ca));
		ca.exit_signal = SIGCHLD;
		return syscall(SYS_clone3, &ca, sizeof(ca));
	}
	return syscall(SYS_clone, SIGCHLD, NULL, NULL, NULL, NULL);
}

static void child(int fd, long bytes)
{
	static char buf[65536];
	char ack;

	if (getuid() == 0) {
		gid_t g = getgid();

		if (setgroups(1, &g) != 0)
			_exit(3);
	}
	memset(buf, 'x', sizeof(buf));
	while (bytes > 0) {
		ssize_t n = write(fd, buf,
				  bytes < (long)sizeof(buf) ? (size_t)bytes
							    : sizeof(buf));
		if (n <= 0)
			_exit(4);
		bytes -= n;
	}
	if (read(fd, &ack, 1) != 1)
		_exit(5);
	close(fd);
}

int main(int argc, char **argv)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	static char buf[65536];
	long bytes, got = 0, pid;
	int lfd, cfd, sfd, status;
	ssize_t n;

	if (argc < 3) {
		fprintf(stderr, "usage: rawclone clone|clone3 BYTES\n");
		return 2;
	}
	bytes = atol(argv[2]);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
	    listen(lfd, 1) != 0 ||
	    getsockname(lfd, (struct sockaddr *)&a, &len) != 0)
		die("listen");
	cfd = socket(AF_INET, SOCK_STREAM, 0);
	if (cfd < 0 || connect(cfd, (struct sockaddr *)&a, sizeof(a)) != 0)
		die("connect");
	sfd = accept(lfd, NULL, NULL);
	if (sfd < 0)
		die("accept");
	/* Give a preload's thread time to start and run. */
	usleep(100000);
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
	while (got < bytes && (n = read(sfd, buf, sizeof(buf))) > 0)
		got += n;
	if (got > 0 && write(sfd, "k", 1) != 1)
		die("ack");
	if (waitpid((pid_t)pid, &status, 0) != (pid_t)pid)
		die("waitpid");
	close(sfd);
	close(lfd);
	printf("pid=%ld\nchild=%ld\ngot=%ld\n", (long)getpid(), pid, got);
	if (WIFEXITED(status))
		printf("status=exit:%d\n", WEXITSTATUS(status));
	else
		printf("status=signal:%d\n", WTERMSIG(status));
	return 0;
}
