/*
 * lastthread - a process whose last thread is not the one that returns
 * from main: the endings glibc handles without exit().
 *
 *   lastthread pthread MS BYTES   main sends 500 bytes over a socketpair,
 *                                 starts a worker and calls pthread_exit;
 *                                 the worker waits MS ms, sends BYTES and
 *                                 returns: the process ends then (glibc's
 *                                 exit(0) from its last thread), status 0.
 *   lastthread raw STATUS         main sends 500 bytes and ends with the
 *                                 exit system call (not exit_group), the
 *                                 only thread: the process ends with
 *                                 STATUS.
 *
 * Prints "sent=N" (every byte sent and read back) on stdout, unbuffered,
 * before the ending.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int sp[2];
static long wait_ms, bytes;

static void move(long n)
{
	char buf[4096];
	long done = 0;

	memset(buf, 'x', sizeof(buf));
	while (done < n) {
		long k = n - done < (long)sizeof(buf) ? n - done : (long)sizeof(buf);
		long got = 0;

		if (write(sp[0], buf, (size_t)k) != k)
			exit(2);
		while (got < k) {
			ssize_t r = read(sp[1], buf, (size_t)(k - got));

			if (r <= 0)
				exit(2);
			got += r;
		}
		done += k;
	}
}

static void *worker(void *arg)
{
	struct timespec ts = { wait_ms / 1000, (wait_ms % 1000) * 1000000L };

	(void)arg;
	nanosleep(&ts, NULL);
	move(bytes);
	printf("sent=%ld\n", 500 + bytes);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;

	if (argc < 3 || socketpair(AF_UNIX, SOCK_STREAM, 0, sp) != 0)
		return 2;
	setvbuf(stdout, NULL, _IONBF, 0);
	move(500);
	if (strcmp(argv[1], "pthread") == 0 && argc == 4) {
		wait_ms = atol(argv[2]);
		bytes = atol(argv[3]);
		if (pthread_create(&t, NULL, worker, NULL) != 0)
			return 2;
		pthread_exit(NULL);
	}
	if (strcmp(argv[1], "raw") == 0) {
		printf("sent=500\n");
		syscall(SYS_exit, atoi(argv[2]));
	}
	return 2;
}
