/*
 * churn - many threads opening, using and closing sockets as fast as they
 * can, so fd numbers are reused across threads all the time.
 *
 *   churn [THREADS] [ROUNDS]       (defaults 4 and 1000)
 *
 * In each round a thread makes a unix socketpair, writes round_bytes(t, r)
 * bytes into the first end, reads them from the second, and closes both.
 * Every connection's bytes must land in exactly one close record (or, for
 * records dropped when the close queue is full, in the totals).  Prints
 * "connections=N total=B".
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_THREADS 32

struct worker {
	int idx, rounds;
	long bytes;
	int failed;
};

static size_t round_bytes(int t, int r)
{
	return 1 + (size_t)((t * 7919 + r * 104729) % 3000);
}

static void *work(void *arg)
{
	struct worker *w = arg;
	char buf[4096];
	int r;

	memset(buf, 'c', sizeof(buf));
	for (r = 0; r < w->rounds; r++) {
		size_t n = round_bytes(w->idx, r), got = 0;
		int sp[2];

		if (socketpair(AF_UNIX, SOCK_STREAM, 0, sp) != 0 ||
		    write(sp[0], buf, n) != (ssize_t)n) {
			w->failed = 1;
			return NULL;
		}
		while (got < n) {
			ssize_t k = read(sp[1], buf, sizeof(buf));

			if (k <= 0) {
				w->failed = 1;
				return NULL;
			}
			got += (size_t)k;
		}
		w->bytes += (long)n;
		close(sp[0]);
		close(sp[1]);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	static struct worker w[MAX_THREADS];
	pthread_t tid[MAX_THREADS];
	int nt = argc > 1 ? atoi(argv[1]) : 4;
	int rounds = argc > 2 ? atoi(argv[2]) : 1000;
	long total = 0;
	int i, failed = 0;

	if (nt < 1 || nt > MAX_THREADS || rounds < 0)
		return 2;
	for (i = 0; i < nt; i++) {
		w[i].idx = i;
		w[i].rounds = rounds;
		if (pthread_create(&tid[i], NULL, work, &w[i]))
			return 2;
	}
	for (i = 0; i < nt; i++) {
		pthread_join(tid[i], NULL);
		total += w[i].bytes;
		failed |= w[i].failed;
	}
	printf("connections=%d\ntotal=%ld\n", 2 * nt * rounds, total);
	return failed;
}
