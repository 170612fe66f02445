/*
 * blockedsigs - a program that, as PostgreSQL's postmaster does, runs with
 * every signal blocked outside its waits, and whose handlers block every
 * signal too (sa_mask full): the preload must still start its ticker
 * outside handlers, and still never inside one.
 *
 *   blockedsigs conns N      N loopback TCP connections (connect, accept,
 *                            64 bytes each way, close both ends), all
 *                            signals blocked; prints threads_after=T
 *                            (the ticker makes 2), waits 0.6 s (interval
 *                            records), prints sent=BYTES
 *   blockedsigs handler      the first tracked fd is made inside a SIGUSR1
 *                            handler (a socketpair, 4 bytes written), the
 *                            signal delivered in a short unblocked window;
 *                            prints threads_in_handler=T (1: no thread
 *                            started there) and, after a dup and close of
 *                            it in main, still all blocked,
 *                            threads_after=T (2); then handled=N, the
 *                            count of SIGUSR1 handled, and a sigaction
 *                            query's answer, handler_reported=yes when it
 *                            names the program's own handler
 *   blockedsigs family       handlers installed through each of the
 *                            signal() family (signal, bsd_signal, ssignal,
 *                            sysv_signal, sigset) and sigaction: each
 *                            reports the program's own handler as the old
 *                            one, sigaction's query too, and each runs:
 *                            prints family=ok, or the first mismatch
 *   blockedsigs longjmp      a SIGHUP handler leaves by siglongjmp; then,
 *                            all blocked, main makes its first tracked fd:
 *                            prints threads_after=T (2: the handler left)
 *
 * Threads are read from /proc/self/status with raw system calls.
 */
#include <fcntl.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "threadcount.h"

static volatile sig_atomic_t handled;
static int pair[2] = { -1, -1 };
static int in_handler_threads = -1;


static void on_usr1(int sig)
{
	(void)sig;
	handled++;
	if (pair[0] < 0 && socketpair(AF_UNIX, SOCK_STREAM, 0, pair) == 0 &&
	    write(pair[0], "ping", 4) == 4)
		in_handler_threads = threads();
}

static sigjmp_buf back;
static volatile sig_atomic_t jump_armed;

static void on_other(int sig)
{
	if (sig == SIGHUP && jump_armed) {
		jump_armed = 0;
		siglongjmp(back, 1);
	}
}

/* Handlers as pqsignal installs them: every signal blocked while one
 * runs. */
static void install(int sig, void (*fn)(int))
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = fn;
	sigfillset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	if (sigaction(sig, &sa, NULL) != 0)
		exit(2);
}

static void full(int fd, char *buf, size_t n, int out)
{
	size_t done = 0;

	while (done < n) {
		ssize_t r = out ? write(fd, buf + done, n - done)
				: read(fd, buf + done, n - done);

		if (r <= 0)
			exit(3);
		done += (size_t)r;
	}
}

static void sleep_s(double s)
{
	struct timespec ts = { (time_t)s, (long)((s - (time_t)s) * 1e9) };

	while (nanosleep(&ts, &ts) != 0)
		;
}

static int conns(int n)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	char buf[64];
	long sent = 0;
	int l, i;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	l = socket(AF_INET, SOCK_STREAM, 0);
	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) != 0 ||
	    listen(l, 16) != 0 || getsockname(l, (struct sockaddr *)&a, &len))
		return 1;
	memset(buf, 'b', sizeof(buf));
	for (i = 0; i < n; i++) {
		int c = socket(AF_INET, SOCK_STREAM, 0), s;

		if (c < 0 || connect(c, (struct sockaddr *)&a, sizeof(a)) != 0)
			return 1;
		s = accept(l, NULL, NULL);
		if (s < 0)
			return 1;
		full(c, buf, sizeof(buf), 1);
		full(s, buf, sizeof(buf), 0);
		full(s, buf, sizeof(buf), 1);
		full(c, buf, sizeof(buf), 0);
		sent += 2 * (long)sizeof(buf);
		close(c);
		close(s);
	}
	printf("threads_after=%d\n", threads());
	fflush(stdout);
	sleep_s(0.6);
	close(l);
	printf("sent=%ld\n", sent);
	return 0;
}

static int handler_first(void)
{
	struct sigaction now;
	sigset_t all, usr1;
	int d;

	sigfillset(&all);
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	/* The signal arrives while blocked, and is taken in a short window
	 * where only it is unblocked (as a postmaster's select). */
	raise(SIGUSR1);
	sigprocmask(SIG_UNBLOCK, &usr1, NULL);
	sigprocmask(SIG_SETMASK, &all, NULL);
	printf("threads_in_handler=%d\n", in_handler_threads);
	if (pair[0] < 0)
		return 4;
	d = dup(pair[0]);
	close(d);
	printf("threads_after=%d\n", threads());
	printf("handled=%d\n", (int)handled);
	if (sigaction(SIGUSR1, NULL, &now) != 0)
		return 5;
	printf("handler_reported=%s\n",
	       now.sa_handler == on_usr1 ? "yes" : "no");
	return 0;
}

static int longjmp_out(void)
{
	sigset_t hup;
	int sv[2];

	sigemptyset(&hup);
	sigaddset(&hup, SIGHUP);
	if (sigsetjmp(back, 1) == 0) {
		jump_armed = 1;
		raise(SIGHUP);
		sigprocmask(SIG_UNBLOCK, &hup, NULL);
		return 6; /* not reached: the handler jumps */
	}
	/* Back with the mask sigsetjmp saved: all blocked. */
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0 ||
	    write(sv[0], "ping", 4) != 4)
		return 7;
	printf("threads_after=%d\n", threads());
	return 0;
}

typedef void (*handler_t)(int);
handler_t bsd_signal(int, handler_t);
handler_t ssignal(int, handler_t);
handler_t sysv_signal(int, handler_t);

static volatile sig_atomic_t ran[8];

static void on_family(int sig)
{
	ran[sig - SIGRTMIN] = 1;
}

static int family(void)
{
	static const char *const names[] = { "signal", "bsd_signal",
					     "ssignal", "sysv_signal",
					     "sigset" };
/* sigset is deprecated, and still in use (vim): it is tested too. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
	handler_t (*const calls[])(int, handler_t) = {
		signal, bsd_signal, ssignal, sysv_signal, sigset
	};
#pragma GCC diagnostic pop
	struct sigaction now;
	sigset_t none;
	int i;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	for (i = 0; i < 5; i++) {
		int sig = SIGRTMIN + i;

		/* Installed through sigaction (the trampoline), asked
		 * through the family member, installed by it again. */
		memset(&now, 0, sizeof(now));
		now.sa_handler = on_family;
		if (calls[i](sig, on_family) != SIG_DFL ||
		    sigaction(sig, &now, NULL) != 0 ||
		    calls[i](sig, on_family) != on_family) {
			printf("family=%s: old handler\n", names[i]);
			return 0;
		}
		if (sigaction(sig, NULL, &now) != 0 ||
		    now.sa_handler != on_family) {
			printf("family=%s: sigaction's query\n", names[i]);
			return 0;
		}
		raise(sig);
		if (!ran[i]) {
			printf("family=%s: the handler did not run\n", names[i]);
			return 0;
		}
	}
	printf("family=ok\n");
	return 0;
}

int main(int argc, char **argv)
{
	sigset_t all;

	if (argc < 2)
		return 2;
	install(SIGUSR1, on_usr1);
	install(SIGHUP, on_other);
	install(SIGCHLD, on_other);
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
	if (!strcmp(argv[1], "conns") && argc > 2)
		return conns(atoi(argv[2]));
	if (!strcmp(argv[1], "handler"))
		return handler_first();
	if (!strcmp(argv[1], "longjmp"))
		return longjmp_out();
	if (!strcmp(argv[1], "family"))
		return family();
	return 2;
}
