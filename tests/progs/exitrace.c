/*
 * exitrace.c - several threads call exit() at the same moment.
 *
 *   exitrace THREADS
 *
 * Each of THREADS threads (and main) moves 100 bytes over a socketpair of
 * its own, then all meet at a barrier and call exit() together (status:
 * the thread's number, main's 0).  glibc lets concurrent exits share out
 * the exit handlers, and the first to find none left ends the process:
 * the log must still hold the exit record, with every byte.
 * Prints "bytes=N" (what moved each way) before the barrier.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

static pthread_barrier_t bar;

static void move100(void)
{
	char b[100] = { 0 };
	int sp[2];

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sp) ||
	    write(sp[0], b, sizeof(b)) != (ssize_t)sizeof(b) ||
	    read(sp[1], b, sizeof(b)) != (ssize_t)sizeof(b))
		_exit(100);
}

static void *worker(void *arg)
{
	move100();
	pthread_barrier_wait(&bar);
	exit((int)(long)arg);
}

int main(int argc, char **argv)
{
	long i, n = argc > 1 ? atol(argv[1]) : 6;
	pthread_t t;

	if (n < 1 || n > 64)
		return 100;
	pthread_barrier_init(&bar, NULL, (unsigned)n + 1);
	for (i = 0; i < n; i++)
		if (pthread_create(&t, NULL, worker, (void *)(i + 1)))
			return 100;
	move100();
	printf("bytes=%ld\n", (n + 1) * 100);
	fflush(stdout);
	pthread_barrier_wait(&bar);
	exit(0);
}
