/*
 * fullring - threads closing socketpairs back to back, fast enough to keep
 * the library's close queue full, and saying at every instruction how far
 * each has got: killed anywhere, the bytes its recovered records must hold
 * lie between two bounds (t_full_ring_kill).
 *
 * usage: fullring COUNTFILE [THREADS [SECONDS]]
 * Each thread loops: socketpair, write N bytes (1000 + i % 1000) on one
 * end, read them on the other, close both ends.  COUNTFILE (MAP_SHARED)
 * holds per thread, 64 bytes apart, u64:
 *   [0] done_lo: bytes of connections closed, added after phase is 0
 *   [1] phase: 0 nothing of the connection in progress counted yet, 1 in
 *       its write, 2 its write returned (the preload counted it), 3 its
 *       read done
 *   [2] n: the size of the connection in progress
 *   [3] done_hi: bytes of connections closed, added before phase is 0
 * so that, for out: done_lo + (phase >= 2 ? n : 0) <= counted <=
 * done_hi + (phase >= 1 ? n : 0), and for in the same with phases 3 and
 * 2.  With SECONDS it stops, joins and exits; without, it runs until
 * killed.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAXT 64

static uint64_t *cnt;
static volatile int stop;

static void die(const char *what)
{
	perror(what);
	_exit(2);
}

static void set(uint64_t *p, uint64_t v)
{
	__atomic_store_n(p, v, __ATOMIC_SEQ_CST);
}

static void *run(void *arg)
{
	uint64_t *c = cnt + (long)arg * 8, i;
	char buf[2048];
	size_t k;

	for (k = 0; k < sizeof(buf); k++)
		buf[k] = (char)k;
	for (i = 0; !stop; i++) {
		size_t n = 1000 + i % 1000, got = 0;
		int sv[2];

		if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
			die("socketpair");
		set(&c[2], n);
		set(&c[1], 1);
		if (write(sv[0], buf, n) != (ssize_t)n)
			die("write");
		set(&c[1], 2);
		while (got < n) {
			ssize_t r = read(sv[1], buf, n - got);

			if (r <= 0)
				die("read");
			got += (size_t)r;
		}
		set(&c[1], 3);
		close(sv[0]);
		close(sv[1]);
		set(&c[3], c[3] + n);
		set(&c[1], 0);
		set(&c[0], c[0] + n);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th[MAXT];
	int nt = argc > 2 ? atoi(argv[2]) : 16, fd;
	long t;

	if (argc < 2 || nt < 1 || nt > MAXT) {
		fprintf(stderr, "usage: fullring COUNTFILE [THREADS [SECONDS]]\n");
		return 2;
	}
	fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		die("open");
	if (ftruncate(fd, MAXT * 64) < 0)
		die("ftruncate");
	cnt = mmap(NULL, MAXT * 64, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (cnt == MAP_FAILED)
		die("mmap");
	close(fd);
	for (t = 0; t < nt; t++)
		if (pthread_create(&th[t], NULL, run, (void *)t))
			die("pthread_create");
	if (argc > 3) {
		double s = atof(argv[3]);
		struct timespec ts = {(time_t)s, (long)((s - (time_t)s) * 1e9)};

		nanosleep(&ts, NULL);
		stop = 1;
	}
	for (t = 0; t < nt; t++)
		pthread_join(th[t], NULL);
	return 0;
}
