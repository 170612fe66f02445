/*
 * sigpipe - what a program sees when it writes to a socket whose peer is
 * gone, under each SIGPIPE disposition; and EAGAIN from a full socket.
 *
 *   sigpipe default|ignore|handler|blocked|nosignal|again
 *
 * Makes a unix socketpair and closes the second end, then calls send()
 * and write() on the first:
 *   default   SIGPIPE's default action: the process dies at the first call
 *             (a shell sees status 141); "before" is printed and flushed
 *   ignore    SIG_IGN: both calls fail with EPIPE
 *   handler   a handler counts the signals: one per call, both EPIPE
 *   blocked   SIGPIPE blocked: both EPIPE, and SIGPIPE is then pending
 *   nosignal  send(MSG_NOSIGNAL) fails with EPIPE and raises nothing
 *   again     (peer kept) a non-blocking send() loop until EAGAIN: prints
 *             the bytes that fitted and the errno of the last call
 * Prints "fd=N", one "call NAME ret=R errno=E" line per call, and
 * "signals=N pending=0|1".
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static volatile sig_atomic_t caught;

static void on_pipe(int sig)
{
	(void)sig;
	caught++;
}

static void show(const char *name, ssize_t r, int e)
{
	printf("call %s ret=%zd errno=%s\n", name, r, r < 0 ? strerror(e) : "-");
	fflush(stdout);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	sigset_t set, pend;
	int sp[2], flags = 0;
	ssize_t r;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sp))
		return 2;
	printf("fd=%d\n", sp[0]);
	if (strcmp(mode, "again") == 0) {
		static char buf[4096];
		long total = 0;

		fcntl(sp[0], F_SETFL, O_NONBLOCK);
		while ((r = send(sp[0], buf, sizeof(buf), 0)) > 0)
			total += r;
		show("send-until-full", r, errno);
		printf("fitted=%ld\n", total);
		return 0;
	}
	close(sp[1]);
	sigemptyset(&set);
	sigaddset(&set, SIGPIPE);
	if (strcmp(mode, "default") == 0) {
		signal(SIGPIPE, SIG_DFL);
	} else if (strcmp(mode, "ignore") == 0) {
		signal(SIGPIPE, SIG_IGN);
	} else if (strcmp(mode, "handler") == 0) {
		signal(SIGPIPE, on_pipe);
	} else if (strcmp(mode, "blocked") == 0) {
		signal(SIGPIPE, SIG_DFL);
		sigprocmask(SIG_BLOCK, &set, NULL);
	} else if (strcmp(mode, "nosignal") == 0) {
		signal(SIGPIPE, SIG_DFL);
		flags = MSG_NOSIGNAL;
	} else {
		return 2;
	}
	printf("before\n");
	fflush(stdout);
	r = send(sp[0], "abc", 3, flags);
	show("send", r, errno);
	if (flags == 0) {
		r = write(sp[0], "defg", 4);
		show("write", r, errno);
	}
	sigpending(&pend);
	printf("signals=%d pending=%d\n", (int)caught, sigismember(&pend, SIGPIPE));
	return 0;
}
