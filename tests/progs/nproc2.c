/*
 * nproc2 - two threads set RLIMIT_NPROC to 0 at the same moment (as
 * haproxy's two threads do), then fd 3 (a socket inherited, its kind
 * unknown to the preload until used) gets N bytes written and the process
 * sleeps long enough for an interval record.  Under the preload the
 * ticker must have started before either limit landed.
 *
 *   nproc2 N SLEEP_MS
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static pthread_barrier_t go;

static void *limit(void *arg)
{
	struct rlimit rl = {0, 0};

	(void)arg;
	pthread_barrier_wait(&go);
	if (setrlimit(RLIMIT_NPROC, &rl) != 0)
		perror("setrlimit");
	return NULL;
}

int main(int argc, char **argv)
{
	char buf[1000];
	long n, left;
	pthread_t t;
	struct timespec ts;

	if (argc != 3)
		return 2;
	n = atol(argv[1]);
	pthread_barrier_init(&go, NULL, 2);
	if (pthread_create(&t, NULL, limit, NULL) != 0)
		return 1;
	limit(NULL);
	pthread_join(t, NULL);
	memset(buf, 'x', sizeof(buf));
	for (left = n; left > 0;) {
		ssize_t w = write(3, buf, left < (long)sizeof(buf) ? (size_t)left
								: sizeof(buf));
		if (w <= 0) {
			perror("write");
			return 1;
		}
		left -= w;
	}
	ts.tv_sec = atol(argv[2]) / 1000;
	ts.tv_nsec = (atol(argv[2]) % 1000) * 1000000L;
	nanosleep(&ts, NULL);
	printf("wrote=%ld\n", n);
	return 0;
}
