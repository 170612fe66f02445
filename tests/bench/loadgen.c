/*
 * loadgen.c - the load generator of `make bench` and of the instruction
 * budget (tests/bench/instr.sh).  One program, one subcommand per workload:
 *
 *   loadgen throughput BYTES          BYTES over TCP loopback in 64 KiB
 *                                     write()s (writer thread, reader main)
 *   loadgen percall unix|tcp N        N times: send 1 byte, recv 1 byte, on a
 *                                     unix socketpair or a TCP loopback pair
 *                                     (one thread; 2N wrapped calls)
 *   loadgen manyfds NSOCK N [HOLD]    NSOCK sockets (NSOCK/2 socketpairs),
 *                                     N round-robin 1-byte send+recv; then
 *                                     sleep HOLD seconds before reading the
 *                                     peak RSS (so the preload's ticker has
 *                                     sampled every fd at least once)
 *   loadgen threads shared|separate N two threads, each N times 1-byte
 *                                     send+recv, on one shared socketpair or
 *                                     on one socketpair each
 *   loadgen conns N                   N short TCP connections over loopback,
 *                                     both ends in one thread: connect,
 *                                     accept, a 64-byte request and a
 *                                     256-byte reply, both ends closed (the
 *                                     instructions a connection costs,
 *                                     close records included: instr.sh;
 *                                     LOADGEN_CONNS_WAIT=S sleeps S
 *                                     seconds before exiting)
 *   loadgen stdio CALL N              N times two stdio calls on a FILE on a
 *                                     regular file (not metered: the stdio
 *                                     wrappers' fast path); CALL is putc,
 *                                     fwrite, fprintf or getc, or CALL-sock
 *                                     for the same on one end of a unix
 *                                     socketpair (the metered path; N up
 *                                     to about 100000)
 *
 * Each run prints one line of key=value fields on stdout, e.g.
 *   RESULT workload=percall mode=unix calls=400000 elapsed=0.2101 ...
 * `calls` counts the wrapped data calls of the measured loop (each send,
 * recv, read or write is one).  Three times are given for that loop only
 * (process start-up, socket set-up and the preload's exit record are
 * excluded):
 *   elapsed  CLOCK_MONOTONIC seconds, the whole loop;
 *   best     the loop runs in SLICES equal slices (LOADGEN_SLICES, default
 *            10), each timed: the fastest slice, scaled to the whole loop.
 *            A slice that another process preempted is simply not the
 *            fastest, so this is the figure that survives a busy machine;
 *   cpu      CLOCK_PROCESS_CPUTIME_ID seconds, all threads (the preload's
 *            ticker included): time spent running, not waiting.
 * The peak RSS (VmHWM, kB) and the current RSS (VmRSS) end every line.
 *
 * The *_loop functions hold no timing logic (the clock is read between
 * slices, outside them), so the same binary gives deterministic
 * instruction counts under callgrind: instr.sh collects only inside them.
 *
 * LOADGEN_IDLE_THREAD=1 starts one extra thread that only sleeps, as the
 * preload's ticker does: a reference configuration (see below).
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "fullio.h"

#define CHUNK (64 * 1024)
/* noclone: GCC's; clang (which has no such attribute, and -Werror
 * stopped its build) does not clone a noinline function anyway. */
#if defined(__clang__)
#define NOINLINE __attribute__((noinline))
#else
#define NOINLINE __attribute__((noinline, noclone))
#endif

static void die(const char *what)
{
	fprintf(stderr, "loadgen: %s: %s\n", what, strerror(errno));
	exit(2);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: loadgen throughput BYTES\n"
		"       loadgen percall unix|tcp N\n"
		"       loadgen manyfds NSOCKETS N [HOLD_SECONDS]\n"
		"       loadgen threads shared|separate N\n"
		"       loadgen conns N\n"
		"       loadgen stdio putc|fwrite|fprintf|getc[-sock] N\n");
	exit(2);
}

static uint64_t parse_count(const char *s)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *end || v == 0) {
		fprintf(stderr, "loadgen: bad count \"%s\"\n", s);
		exit(2);
	}
	return v;
}

static double clock_s(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double now_s(void)
{
	return clock_s(CLOCK_MONOTONIC);
}

/* One measured loop: whole-loop wall and CPU time, and its fastest slice. */
struct meas {
	double t0, cpu0;        /* at the start of the loop */
	double elapsed, cpu;    /* the whole loop */
	double best;            /* fastest slice's seconds per unit of work */
	double slice_t0;
};

static unsigned slices(void)
{
	const char *v = getenv("LOADGEN_SLICES");
	int n = v ? atoi(v) : 0;

	return n > 0 ? (unsigned)n : 10;
}

static void meas_start(struct meas *m)
{
	m->best = 0;
	m->cpu0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
	m->t0 = now_s();
	m->slice_t0 = m->t0;
}

/* A slice that did `work` units (iterations, bytes) just ended. */
static void meas_slice(struct meas *m, double work)
{
	double t = now_s(), per = work > 0 ? (t - m->slice_t0) / work : 0;

	if (work > 0 && (m->best == 0 || per < m->best))
		m->best = per;
	m->slice_t0 = t;
}

/* The loop ended after `work` units in all. */
static void meas_end(struct meas *m, double work)
{
	m->elapsed = now_s() - m->t0;
	m->cpu = clock_s(CLOCK_PROCESS_CPUTIME_ID) - m->cpu0;
	m->best = m->best > 0 ? m->best * work : m->elapsed;
}

/* One field of /proc/self/status in kB ("VmHWM", "VmRSS"), or -1. */
static long status_kb(const char *key)
{
	char line[256];
	size_t klen = strlen(key);
	long v = -1;
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, klen) && line[klen] == ':') {
			v = strtol(line + klen + 1, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

static void report(const char *workload, const char *mode, uint64_t calls,
		   uint64_t bytes, const struct meas *m, long nfds)
{
	double c = calls ? (double)calls : 1, b = (double)bytes;

	printf("RESULT workload=%s mode=%s calls=%llu bytes=%llu nfds=%ld "
	       "elapsed=%.6f best=%.6f cpu=%.6f "
	       "ns_per_call=%.2f best_ns_per_call=%.2f cpu_ns_per_call=%.2f "
	       "calls_per_s=%.0f best_calls_per_s=%.0f "
	       "mb_per_s=%.1f best_mb_per_s=%.1f cpu_s_per_gb=%.4f "
	       "hwm_kb=%ld rss_kb=%ld\n",
	       workload, mode, (unsigned long long)calls,
	       (unsigned long long)bytes, nfds, m->elapsed, m->best, m->cpu,
	       m->elapsed * 1e9 / c, m->best * 1e9 / c, m->cpu * 1e9 / c,
	       c / m->elapsed, c / m->best, b / m->elapsed / 1e6,
	       b / m->best / 1e6, b > 0 ? m->cpu / (b / 1e9) : 0.0,
	       status_kb("VmHWM"), status_kb("VmRSS"));
	fflush(stdout);
}

/* A connected TCP pair over 127.0.0.1, Nagle off on both ends (1-byte
 * sends must leave at once). */
static void tcp_pair(int sv[2])
{
	struct sockaddr_in a;
	socklen_t len = sizeof(a);
	int one = 1, lfd;

	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0)
		die("socket");
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(lfd, (struct sockaddr *)&a, sizeof(a)) ||
	    listen(lfd, 1) || getsockname(lfd, (struct sockaddr *)&a, &len))
		die("listen on 127.0.0.1");
	sv[0] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (sv[0] < 0 || connect(sv[0], (struct sockaddr *)&a, sizeof(a)))
		die("connect to 127.0.0.1");
	sv[1] = accept(lfd, NULL, NULL);
	if (sv[1] < 0)
		die("accept");
	close(lfd);
	if (setsockopt(sv[0], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) ||
	    setsockopt(sv[1], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)))
		die("TCP_NODELAY");
}

static void unix_pair(int sv[2])
{
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		die("socketpair");
}

/* --- workload 1: throughput ---------------------------------------------- */

struct writer {
	int fd;
	uint64_t bytes;
	uint64_t calls;
};

static void *writer_main(void *arg)
{
	static char buf[CHUNK];
	struct writer *w = arg;
	uint64_t left = w->bytes;

	memset(buf, 'x', sizeof(buf));
	while (left) {
		size_t n = left < CHUNK ? (size_t)left : CHUNK;
		ssize_t r = write(w->fd, buf, n);

		w->calls++;
		if (r < 0) {
			if (errno == EINTR)
				continue;
			die("write");
		}
		left -= (uint64_t)r;
	}
	return NULL;
}

/* Read until *got reaches bytes; returns the read() calls made. */
static uint64_t NOINLINE read_loop(int fd, uint64_t *got, uint64_t bytes)
{
	static char buf[CHUNK];
	uint64_t calls = 0;

	while (*got < bytes) {
		ssize_t r = read(fd, buf, sizeof(buf));

		calls++;
		if (r < 0) {
			if (errno == EINTR)
				continue;
			die("read");
		}
		if (r == 0) {
			fprintf(stderr, "loadgen: early end of stream\n");
			exit(2);
		}
		*got += (uint64_t)r;
	}
	return calls;
}

static int run_throughput(uint64_t bytes)
{
	unsigned k, nslices = slices();
	uint64_t rcalls = 0, got = 0, prev = 0;
	struct writer w;
	struct meas m;
	pthread_t tid;
	int sv[2];

	tcp_pair(sv);
	w.fd = sv[0];
	w.bytes = bytes;
	w.calls = 0;
	meas_start(&m);
	if (pthread_create(&tid, NULL, writer_main, &w))
		die("pthread_create");
	/* Slices by bytes received: the steady-state rate, writer running. */
	for (k = 1; k <= nslices; k++) {
		rcalls += read_loop(sv[1], &got, bytes / nslices * k +
						      (k == nslices ? bytes % nslices : 0));
		meas_slice(&m, (double)(got - prev));
		prev = got;
	}
	pthread_join(tid, NULL);
	meas_end(&m, (double)bytes);
	report("throughput", "tcp", w.calls + rcalls, bytes, &m, 2);
	return 0;
}

/* --- workload 2 (and 4): cost per call ----------------------------------- */

/* n times: one byte out of a, one byte in at b. */
static void NOINLINE percall_loop(int a, int b, uint64_t n)
{
	char c = 'x';
	uint64_t i;

	for (i = 0; i < n; i++) {
		if (send(a, &c, 1, 0) != 1)
			die("send");
		if (recv(b, &c, 1, 0) != 1)
			die("recv");
	}
}

static int run_percall(const char *mode, uint64_t n)
{
	unsigned k, nslices = slices();
	struct meas m;
	int sv[2];

	if (!strcmp(mode, "unix"))
		unix_pair(sv);
	else if (!strcmp(mode, "tcp"))
		tcp_pair(sv);
	else
		usage();
	meas_start(&m);
	for (k = 0; k < nslices; k++) {
		uint64_t part = n / nslices + (k == nslices - 1 ? n % nslices : 0);

		percall_loop(sv[0], sv[1], part);
		meas_slice(&m, (double)part);
	}
	meas_end(&m, (double)n);
	report("percall", mode, 2 * n, n, &m, 2);
	return 0;
}

/* --- workload 2b: short connections ------------------------------------ */

/* n connections to the listener l at a, one after the other. */
static void NOINLINE conns_loop(int l, const struct sockaddr_in *a, uint64_t n)
{
	char buf[256];
	uint64_t i;

	memset(buf, 'q', sizeof(buf));
	for (i = 0; i < n; i++) {
		int c = socket(AF_INET, SOCK_STREAM, 0), s;

		if (c < 0 || connect(c, (const struct sockaddr *)a, sizeof(*a)))
			die("connect");
		s = accept(l, NULL, NULL);
		if (s < 0)
			die("accept");
		full_io(c, buf, 64, 1);
		full_io(s, buf, 64, 0);
		full_io(s, buf, 256, 1);
		full_io(c, buf, 256, 0);
		close(c);
		close(s);
	}
}

static int run_conns(uint64_t n)
{
	struct sockaddr_in a;
	socklen_t len = sizeof(a);
	struct meas m;
	int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (l < 0)
		die("socket");
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 16) ||
	    getsockname(l, (struct sockaddr *)&a, &len))
		die("listen on 127.0.0.1");
	meas_start(&m);
	conns_loop(l, &a, n);
	meas_slice(&m, (double)n);
	meas_end(&m, (double)n);
	report("conns", "tcp", 4 * n, 320 * n, &m, 1);
	close(l);
	/* LOADGEN_CONNS_WAIT=S: sleep S seconds before exiting, so that a
	 * preload's ticker writes the close records at its tick rather
	 * than at exit (under valgrind the exit's write cannot be made:
	 * instr.sh counts the ticker's instructions per record). */
	if (getenv("LOADGEN_CONNS_WAIT")) {
		double w = atof(getenv("LOADGEN_CONNS_WAIT"));
		struct timespec ts = { (time_t)w,
				       (long)((w - (double)(time_t)w) * 1e9) };

		if (w > 0)
			nanosleep(&ts, NULL);
	}
	return 0;
}

/* --- workload 3: many fds ------------------------------------------------ */

/* Raise the soft fd limit to the hard one; returns the hard limit. */
static rlim_t raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		die("getrlimit");
	rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl))
		die("setrlimit");
	return rl.rlim_max;
}

/* n round-robin iterations over npairs pairs, from pair p on: a 1-byte
 * send on one end, a 1-byte recv on the other.  Returns the next pair. */
static uint32_t NOINLINE manyfds_loop(const int *fds, uint32_t npairs,
				      uint32_t p, uint64_t n)
{
	char c = 'x';
	uint64_t i;

	for (i = 0; i < n; i++) {
		if (send(fds[2 * p], &c, 1, 0) != 1)
			die("send");
		if (recv(fds[2 * p + 1], &c, 1, 0) != 1)
			die("recv");
		if (++p == npairs)
			p = 0;
	}
	return p;
}

static int run_manyfds(uint64_t nsock, uint64_t n, double hold)
{
	uint32_t npairs = (uint32_t)(nsock / 2), i, p = 0;
	unsigned k, nslices = slices();
	rlim_t lim = raise_nofile();
	struct meas m;
	int *fds;

	if (npairs == 0)
		usage();
	/* stdin/out/err and a little slack for the preload's log writes. */
	if ((rlim_t)npairs * 2 + 16 > lim) {
		fprintf(stderr,
			"loadgen: %u sockets need more than the RLIMIT_NOFILE "
			"hard limit %llu\n",
			npairs * 2, (unsigned long long)lim);
		exit(3);
	}
	fds = malloc(sizeof(int) * 2 * npairs);
	if (!fds)
		die("malloc");
	for (i = 0; i < npairs; i++)
		unix_pair(&fds[2 * i]);
	/* One pass over every pair first: each fd has moved data before the
	 * timed loop (and before the hold). */
	manyfds_loop(fds, npairs, 0, npairs);
	meas_start(&m);
	for (k = 0; k < nslices; k++) {
		uint64_t part = n / nslices + (k == nslices - 1 ? n % nslices : 0);

		p = manyfds_loop(fds, npairs, p, part);
		meas_slice(&m, (double)part);
	}
	meas_end(&m, (double)n);
	if (hold > 0) {
		struct timespec ts;

		ts.tv_sec = (time_t)hold;
		ts.tv_nsec = (long)((hold - (double)ts.tv_sec) * 1e9);
		while (nanosleep(&ts, &ts) && errno == EINTR)
			;
	}
	report("manyfds", "unix", 2 * n, n, &m, (long)npairs * 2);
	return 0;
}

/* --- workload 5: two threads --------------------------------------------- */

struct worker {
	int a, b;
	uint64_t n;
	pthread_barrier_t *start;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	pthread_barrier_wait(w->start);
	percall_loop(w->a, w->b, w->n);
	return NULL;
}

/*
 * shared: both threads send on the same end and receive on the other.
 * Each thread receives only after it sent, so a byte is always there for
 * every recv (the buffer never holds more than two).
 */
static int run_threads(const char *mode, uint64_t n)
{
	pthread_barrier_t start;
	struct worker w[2];
	pthread_t tid[2];
	int sv[2][2], k;
	struct meas m;

	if (!strcmp(mode, "shared")) {
		unix_pair(sv[0]);
		sv[1][0] = sv[0][0];
		sv[1][1] = sv[0][1];
	} else if (!strcmp(mode, "separate")) {
		unix_pair(sv[0]);
		unix_pair(sv[1]);
	} else {
		usage();
	}
	pthread_barrier_init(&start, NULL, 3);
	for (k = 0; k < 2; k++) {
		w[k].a = sv[k][0];
		w[k].b = sv[k][1];
		w[k].n = n;
		w[k].start = &start;
		if (pthread_create(&tid[k], NULL, worker_main, &w[k]))
			die("pthread_create");
	}
	pthread_barrier_wait(&start);
	meas_start(&m); /* no slices: best is the whole loop */
	for (k = 0; k < 2; k++)
		pthread_join(tid[k], NULL);
	meas_end(&m, (double)n);
	report("threads", mode, 4 * n, 2 * n, &m,
	       !strcmp(mode, "shared") ? 2 : 4);
	return 0;
}

/* --- workload 6: stdio on a file ----------------------------------------- */

enum stdio_call { SC_PUTC, SC_FWRITE, SC_FPRINTF, SC_GETC };

/* n times two calls of one kind on fp. */
static void NOINLINE stdio_loop(FILE *fp, enum stdio_call call, uint64_t n)
{
	uint64_t i;

	for (i = 0; i < n; i++) {
		switch (call) {
		case SC_PUTC:
			putc('x', fp);
			putc('y', fp);
			break;
		case SC_FWRITE:
			fwrite("xy", 1, 2, fp);
			fwrite("xy", 2, 1, fp);
			break;
		case SC_FPRINTF:
			fprintf(fp, "%d", 7);
			fprintf(fp, "%d", 8);
			break;
		default:
			if (getc(fp) == EOF || getc(fp) == EOF)
				die("getc");
		}
	}
}

static int run_stdio(const char *name, uint64_t n)
{
	size_t len = strcspn(name, "-");
	int sock = !strcmp(name + len, "-sock");
	static const char *const names[] = { "putc", "fwrite", "fprintf",
					     "getc" };
	unsigned k, nslices = slices();
	enum stdio_call call;
	struct meas m;
	FILE *fp;
	int sv[2];

	if (sock) { /* the bytes stay in the pair's buffers: no reader */
		int big = 1 << 20;

		unix_pair(sv);
		setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &big, sizeof(big));
		setsockopt(sv[1], SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
		fp = fdopen(sv[0], "r+");
	} else {
		fp = tmpfile();
	}

	for (call = SC_PUTC; call <= SC_GETC; call++)
		if (strlen(names[call]) == len && !strncmp(name, names[call], len))
			break;
	if (call > SC_GETC || (name[len] && !sock))
		usage();
	if (!fp)
		die("tmpfile");
	if (call == SC_GETC) { /* 2n bytes to read back (outside the loop
				  that instr.sh measures) */
		static char block[CHUNK];
		uint64_t left;

		for (left = 2 * n; left; left -= left < CHUNK ? left : CHUNK)
			if (sock)
				write(sv[1], block, left < CHUNK ? left : CHUNK);
			else
				fwrite(block, 1, left < CHUNK ? left : CHUNK,
				       fp);
		if (!sock)
			rewind(fp);
	}
	meas_start(&m);
	for (k = 0; k < nslices; k++) {
		uint64_t part = n / nslices + (k == nslices - 1 ? n % nslices : 0);

		stdio_loop(fp, call, part);
		meas_slice(&m, (double)part);
	}
	meas_end(&m, (double)n);
	fclose(fp);
	report("stdio", name, 2 * n, 2 * n, &m, 1);
	return 0;
}

static void *idle_main(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

/*
 * LOADGEN_IDLE_THREAD=1: start one thread that only sleeps, as the
 * preload's ticker does.  A reference configuration: what being a
 * multi-threaded process costs each call (glibc's cancellable system
 * calls take a longer path once a second thread exists).
 */
static void maybe_idle_thread(void)
{
	const char *v = getenv("LOADGEN_IDLE_THREAD");
	pthread_t tid;

	if (!v || strcmp(v, "1"))
		return;
	if (pthread_create(&tid, NULL, idle_main, NULL))
		die("pthread_create");
	pthread_detach(tid);
}

int main(int argc, char **argv)
{
	maybe_idle_thread();
	if (argc == 3 && !strcmp(argv[1], "throughput"))
		return run_throughput(parse_count(argv[2]));
	if (argc == 4 && !strcmp(argv[1], "percall"))
		return run_percall(argv[2], parse_count(argv[3]));
	if ((argc == 4 || argc == 5) && !strcmp(argv[1], "manyfds"))
		return run_manyfds(parse_count(argv[2]), parse_count(argv[3]),
				   argc == 5 ? atof(argv[4]) : 0.0);
	if (argc == 4 && !strcmp(argv[1], "threads"))
		return run_threads(argv[2], parse_count(argv[3]));
	if (argc == 3 && !strcmp(argv[1], "conns"))
		return run_conns(parse_count(argv[2]));
	if (argc == 4 && !strcmp(argv[1], "stdio"))
		return run_stdio(argv[2], parse_count(argv[3]));
	usage();
	return 2;
}
