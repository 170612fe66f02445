/*
 * siglife - signal handlers making lifecycle calls on the very fd their
 * thread is half-way through a lifecycle call on.
 *
 *   siglife [ITERATIONS]       (default 100000)
 *
 * The main thread loops: socketpair(), dup2() one end onto fd N (60),
 * send() one byte on N, bind() N (autobind: its address changes), dup()
 * N and close the copy, accept() whatever connected to its listener and
 * close it, close(N), close the pair.  SIGALRM (setitimer, every 50 us,
 * SA_RESTART) runs a handler that makes, in turn, one lifecycle call on N
 * - close(N), dup2(its own socket, N), bind(N), dup(N) + close,
 * close_range(N, N), a fresh socket dup2()ed onto N and connect()ed to
 * the listener - and then send()s one byte on N.  Every send uses
 * MSG_DONTWAIT and the program adds up the bytes that went out.  Main's
 * own send blocks SIGALRM: a close between a data call and its
 * accounting is a known limit (the byte is lost), not what this tests.
 *
 * Prints "sent=BYTES" (main and handler together), "signals=RUNS" and
 * "iterations=N"; exits 0.  A handler that waits for the lifecycle call it
 * interrupted never returns: the program then hangs.
 */
#include <errno.h>
#include <stddef.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#define N 60

static long sent;         /* bytes that went out; main and handler */
static struct sockaddr_un listener; /* abstract address */
static socklen_t listener_len;
static long handler_runs; /* atomic */
static int handler_fd = -1;

static void add(long *p, long v)
{
	__atomic_add_fetch(p, v, __ATOMIC_RELAXED);
}

static void send_one(void)
{
	ssize_t r = send(N, "x", 1, MSG_DONTWAIT | MSG_NOSIGNAL);

	if (r > 0)
		add(&sent, r);
}

/* autobind: the kernel gives the socket an abstract address. */
static void autobind(int fd)
{
	struct sockaddr sa = { .sa_family = AF_UNIX };

	bind(fd, &sa, sizeof(sa_family_t));
}

static void on_alarm(int sig)
{
	int saved = errno, fd;
	long run = __atomic_add_fetch(&handler_runs, 1, __ATOMIC_RELAXED);

	(void)sig;
	switch (run % 6) {
	case 0:
		close(N);
		break;
	case 1:
		dup2(handler_fd, N);
		break;
	case 2:
		autobind(N);
		break;
	case 3:
		fd = dup(N);
		if (fd >= 0)
			close(fd);
		break;
	case 4:
		close_range(N, N, 0);
		break;
	case 5:
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
		if (fd >= 0) {
			dup2(fd, N);
			close(fd);
			connect(N, (struct sockaddr *)&listener, listener_len);
		}
		break;
	}
	send_one();
	errno = saved;
}

int main(int argc, char **argv)
{
	long iterations = argc > 1 ? atol(argv[1]) : 100000, i;
	struct itimerval it = { { 0, 50 }, { 0, 50 } };
	struct sigaction sa;
	int hp[2], sv[2], fd, lfd;
	sigset_t alrm;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, hp) != 0) {
		perror("socketpair");
		return 1;
	}
	/* The listener the handler connects N to; main accepts. */
	lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
	listener.sun_family = AF_UNIX;
	listener_len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 +
				   (size_t)snprintf(listener.sun_path + 1,
						    sizeof(listener.sun_path) - 1,
						    "siglife-%ld", (long)getpid()));
	if (lfd < 0 ||
	    bind(lfd, (struct sockaddr *)&listener, listener_len) != 0 ||
	    listen(lfd, 4096) != 0) {
		perror("listener");
		return 1;
	}
	/* The handler's socket: its peer end reads nothing, a full buffer
	 * just makes sends fail with EAGAIN. */
	handler_fd = hp[0];
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	setitimer(ITIMER_REAL, &it, NULL);
	for (i = 0; i < iterations; i++) {
		if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) {
			perror("socketpair");
			return 1;
		}
		dup2(sv[0], N);
		/* Not between the real send and its accounting: a close
		 * there loses the byte (docs/reliability.md, Limits). */
		sigprocmask(SIG_BLOCK, &alrm, NULL);
		send_one();
		sigprocmask(SIG_UNBLOCK, &alrm, NULL);
		autobind(N);
		fd = dup(N);
		if (fd >= 0)
			close(fd);
		while ((fd = accept(lfd, NULL, NULL)) >= 0)
			close(fd);
		close(N);
		close(sv[0]);
		close(sv[1]);
	}
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_REAL, &it, NULL);
	printf("sent=%ld\nsignals=%ld\niterations=%ld\n", sent,
	       __atomic_load_n(&handler_runs, __ATOMIC_RELAXED), iterations);
	return 0;
}
