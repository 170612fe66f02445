/*
 * closerace - close_range() in one thread racing new connections in
 * another, on the same fd numbers.
 *
 *   closerace [ITERATIONS]       (default 100000)
 *
 * Thread A loops: socket(AF_UNIX, SOCK_DGRAM), then close_range() of just
 * that fd.  Thread B loops: socketpair(AF_UNIX, SOCK_STREAM), one send()
 * of 1 byte on each end, close() both.  The kernel hands B the number A
 * just freed as often as not, so a preload that retired A's fds after the
 * real close_range() retired B's new connection instead.  Prints
 * "dgram=N" and "stream=N" (connections each thread opened and closed)
 * and "bytes=N" (what B's sends moved); exits 0.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

static long iterations;

static void *closer(void *arg)
{
	long i;

	(void)arg;
	for (i = 0; i < iterations; i++) {
		int fd = socket(AF_UNIX, SOCK_DGRAM, 0);

		if (fd < 0 || close_range((unsigned)fd, (unsigned)fd, 0) != 0) {
			perror("closer");
			exit(1);
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	long i, bytes = 0;
	pthread_t th;
	int sv[2];

	iterations = argc > 1 ? atol(argv[1]) : 100000;
	if (pthread_create(&th, NULL, closer, NULL) != 0)
		return 1;
	for (i = 0; i < iterations; i++) {
		if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) {
			perror("socketpair");
			return 1;
		}
		bytes += send(sv[0], "x", 1, 0) == 1;
		bytes += send(sv[1], "y", 1, 0) == 1;
		close(sv[0]);
		close(sv[1]);
	}
	pthread_join(th, NULL);
	printf("dgram=%ld\nstream=%ld\nbytes=%ld\n", iterations,
	       2 * iterations, bytes);
	return 0;
}
