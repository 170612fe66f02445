/*
 * threads - many threads writing at once, counted exactly.
 *
 *   threads own [THREADS] [WRITES]
 *       each writer thread has its own unix socketpair and a reader thread
 *       draining the other end;
 *   threads shared [THREADS] [WRITES]
 *       all writer threads write into ONE socketpair end, one reader
 *       drains the other.
 * Defaults: 8 threads, 20000 writes each.  Writes have mixed sizes
 * (1 .. 1024 bytes, varying per thread and per write); short writes are
 * completed by further writes, and every write() call is counted.
 * Prints, one per line:
 *   writer T fd=F bytes=B calls=C      (own: F is the thread's own fd)
 *   reader T fd=F bytes=B              (own: one per pair; shared: one)
 *   total_out=B total_calls=C total_in=B
 * All fds are closed before exit.  Exits 0 when in == out.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_THREADS 64

struct writer {
	int idx, fd, writes;
	long bytes, calls;
};

struct reader {
	int fd;
	long bytes;
};

static size_t size_of(int t, int k)
{
	return 1 + (size_t)((k * 131 + t * 977 + (k >> 3) * 7) % 1024);
}

static void *write_main(void *arg)
{
	struct writer *w = arg;
	char buf[1024];
	int k;

	memset(buf, 'a' + w->idx % 26, sizeof(buf));
	for (k = 0; k < w->writes; k++) {
		size_t n = size_of(w->idx, k), off = 0;

		while (off < n) {
			ssize_t r = write(w->fd, buf + off, n - off);

			w->calls++;
			if (r <= 0) {
				perror("write");
				exit(2);
			}
			off += (size_t)r;
			w->bytes += r;
		}
	}
	return NULL;
}

static void *read_main(void *arg)
{
	struct reader *r = arg;
	char buf[65536];
	ssize_t n;

	while ((n = read(r->fd, buf, sizeof(buf))) > 0)
		r->bytes += n;
	return NULL;
}

int main(int argc, char **argv)
{
	static struct writer w[MAX_THREADS];
	static struct reader rd[MAX_THREADS];
	pthread_t wt[MAX_THREADS], rt[MAX_THREADS];
	int shared, nt, writes, nr, i, sp[MAX_THREADS][2];
	long out = 0, calls = 0, in = 0;

	if (argc < 2 || (strcmp(argv[1], "own") && strcmp(argv[1], "shared"))) {
		fprintf(stderr, "usage: threads own|shared [THREADS] [WRITES]\n");
		return 2;
	}
	shared = strcmp(argv[1], "shared") == 0;
	nt = argc > 2 ? atoi(argv[2]) : 8;
	writes = argc > 3 ? atoi(argv[3]) : 20000;
	if (nt < 1 || nt > MAX_THREADS || writes < 0)
		return 2;
	nr = shared ? 1 : nt;
	for (i = 0; i < nr; i++)
		if (socketpair(AF_UNIX, SOCK_STREAM, 0, sp[i]) != 0)
			return 2;
	for (i = 0; i < nr; i++) {
		rd[i].fd = sp[i][1];
		if (pthread_create(&rt[i], NULL, read_main, &rd[i]))
			return 2;
	}
	for (i = 0; i < nt; i++) {
		w[i].idx = i;
		w[i].fd = sp[shared ? 0 : i][0];
		w[i].writes = writes;
		if (pthread_create(&wt[i], NULL, write_main, &w[i]))
			return 2;
	}
	for (i = 0; i < nt; i++) {
		pthread_join(wt[i], NULL);
		out += w[i].bytes;
		calls += w[i].calls;
	}
	/* EOF for the readers: close the writing ends. */
	for (i = 0; i < nr; i++)
		close(sp[i][0]);
	for (i = 0; i < nr; i++) {
		pthread_join(rt[i], NULL);
		in += rd[i].bytes;
		close(sp[i][1]);
	}
	for (i = 0; i < nt; i++)
		printf("writer %d fd=%d bytes=%ld calls=%ld\n", i, w[i].fd,
		       w[i].bytes, w[i].calls);
	for (i = 0; i < nr; i++)
		printf("reader %d fd=%d bytes=%ld\n", i, rd[i].fd, rd[i].bytes);
	printf("total_out=%ld total_calls=%ld total_in=%ld\n", out, calls, in);
	return in != out;
}
