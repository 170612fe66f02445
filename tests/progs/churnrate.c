/*
 * churnrate - connection churn at a steady rate: a unix socketpair, one
 * byte through it, both ends closed, again and again, paced so that
 * RATE fds are closed per second for SECONDS (or as fast as possible with
 * RATE 0).
 *
 *   churnrate RATE SECONDS
 *
 * Prints "connections=N" (fds closed), "bytes=B" (moved one way) and
 * "rate=R" (fds closed per second, achieved).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	double rate, secs;
	uint64_t t0, end, now, n = 0, bytes = 0;
	int sv[2];
	char c = 'x';

	if (argc != 3) {
		fprintf(stderr, "usage: churnrate RATE SECONDS\n");
		return 2;
	}
	rate = atof(argv[1]);
	secs = atof(argv[2]);
	t0 = mono_ns();
	end = t0 + (uint64_t)(secs * 1e9);
	while ((now = mono_ns()) < end) {
		/* Ahead of the schedule: wait for it (absolute pacing). */
		if (rate > 0 && (double)n > (double)(now - t0) * rate / 1e9) {
			struct timespec d = {0, 200000};

			nanosleep(&d, NULL);
			continue;
		}
		if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0 ||
		    write(sv[0], &c, 1) != 1 || read(sv[1], &c, 1) != 1) {
			perror("churnrate");
			return 1;
		}
		close(sv[0]);
		close(sv[1]);
		n += 2;
		bytes++;
	}
	printf("connections=%llu\nbytes=%llu\nrate=%.0f\n",
	       (unsigned long long)n, (unsigned long long)bytes,
	       (double)n * 1e9 / (double)(mono_ns() - t0));
	return 0;
}
