/*
 * lastcall - move a known number of bytes, then end the process image in a
 * chosen way that skips exit(): the cases of issue 8.
 *
 *   lastcall sendfile BYTES   a forked child receives BYTES that the parent
 *                             sends with sendfile, then ends with _exit(0)
 *   lastcall _Exit BYTES      BYTES through a socketpair, then _Exit(0)
 *   lastcall exec BYTES       BYTES through a socketpair, then
 *                             execlp("true", ...)
 *   lastcall execfail BYTES   BYTES, an execlp of a missing program (it
 *                             fails: ENOENT), BYTES again, then exit(0)
 *   lastcall execdenied BYTES BYTES, an execl of a file that is there but
 *                             not executable (it fails: EACCES), BYTES
 *                             again, then exit(0)
 *   lastcall sigexit BYTES    BYTES, then malloc/free in a loop until a
 *                             SIGALRM handler (10 ms later) calls _exit(0):
 *                             most likely inside malloc
 *
 * Prints "pid=P" and, per process, what it moved as NAME=N lines (the truth
 * the tests compare with): "child_in", "parent_out", "out", "in".
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/sendfile.h>
#include <sys/time.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

static long long xfer(int a, int b, long long want)
{
	char buf[4096];
	long long done = 0, got = 0;

	while (done < want) {
		size_t n = want - done < (long long)sizeof(buf)
			       ? (size_t)(want - done)
			       : sizeof(buf);
		ssize_t w = write(a, buf, n), r;

		if (w <= 0)
			break;
		done += w;
		while (got < done) {
			r = read(b, buf, sizeof(buf));
			if (r <= 0)
				return -1;
			got += r;
		}
	}
	return got;
}

static void on_alarm(int sig)
{
	(void)sig;
	_exit(0);
}

static void churn_until_alarm(void)
{
	struct itimerval it = { { 0, 0 }, { 0, 10000 } };
	volatile size_t sink = 0;

	signal(SIGALRM, on_alarm);
	setitimer(ITIMER_REAL, &it, NULL);
	for (;;) {
		char *p = malloc(100 + sink % 5000);

		if (p)
			sink += (size_t)p[0];
		free(p);
	}
}

static int pair(int sp[2])
{
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sp) != 0) {
		perror("socketpair");
		return -1;
	}
	return 0;
}

static int do_sendfile(long long want)
{
	char path[] = "/tmp/lastcall.XXXXXX", buf[65536];
	long long left = want, in = 0, sent = 0;
	int sp[2], fd, st;
	pid_t pid;

	fd = mkstemp(path);
	if (fd < 0 || pair(sp))
		return 1;
	unlink(path);
	memset(buf, 'x', sizeof(buf));
	while (left > 0) {
		size_t n =
		    left < (long long)sizeof(buf) ? (size_t)left : sizeof(buf);

		if (write(fd, buf, n) != (ssize_t)n)
			return 1;
		left -= n;
	}
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		ssize_t r;

		close(sp[0]);
		while ((r = read(sp[1], buf, sizeof(buf))) > 0)
			in += r;
		printf("child pid=%d\nchild_in=%lld\n", (int)getpid(), in);
		fflush(stdout);
		_exit(0);
	}
	close(sp[1]);
	while (sent < want) {
		off_t off = sent;
		ssize_t r = sendfile(sp[0], fd, &off, want - sent);

		if (r <= 0)
			return 1;
		sent += r;
	}
	close(sp[0]);
	waitpid(pid, &st, 0);
	printf("parent_out=%lld\n", sent);
	return 0;
}

int main(int argc, char **argv)
{
	long long want, got;
	int sp[2];

	if (argc < 3) {
		fprintf(stderr, "usage: lastcall MODE BYTES\n");
		return 2;
	}
	want = atoll(argv[2]);
	printf("pid=%d\n", (int)getpid());
	if (strcmp(argv[1], "sendfile") == 0)
		return do_sendfile(want);
	if (pair(sp))
		return 1;
	got = xfer(sp[0], sp[1], want);
	printf("out=%lld\nin=%lld\n", want, got);
	fflush(stdout);
	if (strcmp(argv[1], "_Exit") == 0)
		_Exit(0);
	if (strcmp(argv[1], "sigexit") == 0)
		churn_until_alarm();
	if (strcmp(argv[1], "exec") == 0) {
		execlp("true", "true", (char *)NULL);
		perror("execlp");
		return 1;
	}
	if (strcmp(argv[1], "execfail") == 0 ||
	    strcmp(argv[1], "execdenied") == 0) {
		char path[] = "/tmp/lastcall-noexec.XXXXXX";
		int fd;

		if (strcmp(argv[1], "execfail") == 0) {
			execlp("/nonexistent/lastcall", "x", (char *)NULL);
		} else {
			/* 0600: no execute bit, even for root. */
			if ((fd = mkstemp(path)) < 0)
				return 1;
			close(fd);
			execl(path, "x", (char *)NULL);
			fd = errno;
			unlink(path);
			errno = fd;
		}
		printf("exec_errno=%d\n", errno);
		got = xfer(sp[0], sp[1], want);
		printf("out2=%lld\nin2=%lld\n", want, got);
		return 0;
	}
	fprintf(stderr, "lastcall: unknown mode %s\n", argv[1]);
	return 2;
}
