/*
 * sigio - signal handlers that send on sockets while the main thread is
 * inside a wrapped call, on the same fd and on another one.
 *
 *   sigio [MS_PER_PHASE]       (default 400)
 *
 * One handler serves SIGALRM (from setitimer, every 300 us, installed
 * without SA_RESTART, so interrupted calls fail with EINTR) and SIGUSR1
 * (sent to the main thread by a helper thread with pthread_kill, every
 * 200 us, with SA_RESTART).  It sends 7 bytes with MSG_DONTWAIT on the
 * phase's target fd, counting its calls, bytes and EAGAINs.  All other
 * threads block both signals, so only the main thread runs the handler.
 *   phase 1, same fd, same direction: main send()s blocks of 1..64 KiB on
 *     A0 while a slow reader drains A1; the handler sends on A0 too;
 *   phase 2, another fd: main recv()s on B1, fed 100 bytes per ms by a
 *     writer thread on B0; the handler sends on C0 (drained from C1);
 *   phase 3, same fd, other direction: main keeps recv()ing on B1; the
 *     handler sends on B1 (drained from B0).
 * Main retries a call that failed with EINTR and counts it.  After the
 * phases the signals stop, every writer shuts its end down and the
 * readers read to EOF.  Prints, per fd, what the program's own calls did:
 *   fd=N in_bytes= in_calls= in_intr= in_again= out_bytes= out_calls=
 *        out_intr= out_again=
 * and "signals=N" (handler runs); exits 0 when every reader got exactly
 * what was sent to it.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

struct count {
	long bytes, calls, intr, again;
};

struct fdc {
	int fd;
	struct count in, out;
};

/* A0 A1 B0 B1 C0 C1 */
static struct fdc f[6];
static int target = -1;     /* index into f for the handler; atomic */
static long handler_runs;   /* atomic */
static int stop_kill, stop_feed;
static pthread_t main_tid;

static void add(long *p, long v)
{
	__atomic_add_fetch(p, v, __ATOMIC_RELAXED);
}

static void on_signal(int sig)
{
	int saved = errno, t = __atomic_load_n(&target, __ATOMIC_ACQUIRE);
	ssize_t r;

	(void)sig;
	add(&handler_runs, 1);
	if (t < 0)
		return;
	r = send(f[t].fd, "handler", 7, MSG_DONTWAIT);
	add(&f[t].out.calls, 1);
	if (r > 0)
		add(&f[t].out.bytes, r);
	else if (errno == EAGAIN || errno == EWOULDBLOCK)
		add(&f[t].out.again, 1);
	else if (errno == EINTR)
		add(&f[t].out.intr, 1);
	errno = saved;
}

static void *killer(void *arg)
{
	struct timespec ts = {0, 200000};

	(void)arg;
	while (!__atomic_load_n(&stop_kill, __ATOMIC_ACQUIRE)) {
		pthread_kill(main_tid, SIGUSR1);
		nanosleep(&ts, NULL);
	}
	return NULL;
}

/* Reads fd index i to EOF, slowly if asked (to keep a writer blocked). */
struct reader {
	int i;
	int slow;
	long got;
};

static void *reader(void *arg)
{
	struct reader *r = arg;
	char buf[65536];
	struct timespec ts = {0, 100000};
	ssize_t n;

	for (;;) {
		n = recv(f[r->i].fd, buf, r->slow ? 2048 : sizeof(buf), 0);
		if (n <= 0)
			break;
		r->got += n;
		f[r->i].in.bytes += n;
		f[r->i].in.calls++;
		if (r->slow)
			nanosleep(&ts, NULL);
	}
	if (n == 0)
		f[r->i].in.calls++; /* the EOF read */
	return NULL;
}

/* Feeds 100 bytes a millisecond into B0 until told to stop. */
static void *feeder(void *arg)
{
	struct timespec ts = {0, 1000000};
	char buf[100];
	long *sent = arg;

	memset(buf, 'f', sizeof(buf));
	while (!__atomic_load_n(&stop_feed, __ATOMIC_ACQUIRE)) {
		ssize_t w = send(f[2].fd, buf, sizeof(buf), 0);

		f[2].out.calls++;
		if (w > 0) {
			f[2].out.bytes += w;
			*sent += w;
		}
		nanosleep(&ts, NULL);
	}
	shutdown(f[2].fd, SHUT_WR);
	return NULL;
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

static void main_send(int i, long ms)
{
	static char buf[65536];
	long until = now_ms() + ms;
	unsigned k = 1;

	while (now_ms() < until) {
		size_t n = 1 + (k * 40503u) % sizeof(buf);
		ssize_t w = send(f[i].fd, buf, n, 0);

		k++;
		/* Single atomic instructions: the handler, interrupting this
		 * thread, adds to the same counters. */
		add(&f[i].out.calls, 1);
		if (w >= 0)
			add(&f[i].out.bytes, w);
		else if (errno == EINTR)
			add(&f[i].out.intr, 1);
		else {
			perror("main send");
			exit(2);
		}
	}
}

static void main_recv(int i, long ms)
{
	char buf[4096];
	long until = now_ms() + ms;

	while (now_ms() < until) {
		ssize_t r = recv(f[i].fd, buf, sizeof(buf), 0);

		add(&f[i].in.calls, 1);
		if (r > 0)
			add(&f[i].in.bytes, r);
		else if (r < 0 && errno == EINTR)
			add(&f[i].in.intr, 1);
		else {
			fprintf(stderr, "main recv: %zd %s\n", r, strerror(errno));
			exit(2);
		}
	}
}

static void print_count(const struct fdc *c)
{
	printf("fd=%d in_bytes=%ld in_calls=%ld in_intr=%ld in_again=%ld "
	       "out_bytes=%ld out_calls=%ld out_intr=%ld out_again=%ld\n",
	       c->fd, c->in.bytes, c->in.calls, c->in.intr, c->in.again,
	       c->out.bytes, c->out.calls, c->out.intr, c->out.again);
}

int main(int argc, char **argv)
{
	long ms = argc > 1 ? atol(argv[1]) : 400, fed = 0, rest_b1 = 0;
	struct reader ra = {1, 1, 0}, rc = {5, 0, 0}, rb = {2, 0, 0};
	pthread_t tra, trc, trb, tk, tf;
	struct itimerval it = {{0, 300}, {0, 300}}, off = {{0, 0}, {0, 0}};
	struct sigaction sa;
	sigset_t both, old;
	int i, sp[2], bad = 0;

	for (i = 0; i < 3; i++) {
		if (socketpair(AF_UNIX, SOCK_STREAM, 0, sp))
			return 2;
		f[2 * i].fd = sp[0];
		f[2 * i + 1].fd = sp[1];
	}
	main_tid = pthread_self();
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = 0; /* SIGALRM: no SA_RESTART */
	sigaction(SIGALRM, &sa, NULL);
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR1, &sa, NULL);

	/* Helper threads never take the signals. */
	sigemptyset(&both);
	sigaddset(&both, SIGALRM);
	sigaddset(&both, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &both, &old);
	if (pthread_create(&tra, NULL, reader, &ra) ||
	    pthread_create(&trc, NULL, reader, &rc) ||
	    pthread_create(&tk, NULL, killer, NULL))
		return 2;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	setitimer(ITIMER_REAL, &it, NULL);

	/* phase 1: same fd, same direction */
	__atomic_store_n(&target, 0, __ATOMIC_RELEASE);
	main_send(0, ms);

	/* phase 2: main in recv on B1, handler on C0 */
	pthread_sigmask(SIG_BLOCK, &both, &old);
	if (pthread_create(&tf, NULL, feeder, &fed))
		return 2;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	__atomic_store_n(&target, 4, __ATOMIC_RELEASE);
	main_recv(3, ms);

	/* phase 3: main in recv on B1, handler sends on B1 */
	pthread_sigmask(SIG_BLOCK, &both, &old);
	if (pthread_create(&trb, NULL, reader, &rb))
		return 2;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	__atomic_store_n(&target, 3, __ATOMIC_RELEASE);
	main_recv(3, ms);

	/* stop the signals, then drain everything */
	setitimer(ITIMER_REAL, &off, NULL);
	__atomic_store_n(&stop_kill, 1, __ATOMIC_RELEASE);
	pthread_join(tk, NULL);
	pthread_sigmask(SIG_BLOCK, &both, NULL);
	__atomic_store_n(&target, -1, __ATOMIC_RELEASE);
	__atomic_store_n(&stop_feed, 1, __ATOMIC_RELEASE);
	pthread_join(tf, NULL);
	shutdown(f[0].fd, SHUT_WR);
	shutdown(f[4].fd, SHUT_WR);
	shutdown(f[3].fd, SHUT_WR);
	/* what the feeder sent that main has not read yet */
	for (;;) {
		char buf[4096];
		ssize_t r = recv(f[3].fd, buf, sizeof(buf), 0);

		f[3].in.calls++;
		if (r <= 0)
			break;
		f[3].in.bytes += r;
		rest_b1 += r;
	}
	pthread_join(tra, NULL);
	pthread_join(trc, NULL);
	pthread_join(trb, NULL);
	if (ra.got != f[0].out.bytes || rc.got != f[4].out.bytes ||
	    rb.got != f[3].out.bytes || f[3].in.bytes != fed) {
		fprintf(stderr, "lost bytes: A %ld/%ld C %ld/%ld B1->B0 %ld/%ld "
				"B0->B1 %ld/%ld\n",
			ra.got, f[0].out.bytes, rc.got, f[4].out.bytes, rb.got,
			f[3].out.bytes, f[3].in.bytes, fed);
		bad = 1;
	}
	for (i = 0; i < 6; i++)
		print_count(&f[i]);
	printf("signals=%ld\n", handler_runs);
	(void)rest_b1;
	return bad;
}
