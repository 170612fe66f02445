/*
 * firsttouch - two threads make the first data call on the same fresh fd
 * at the same moment, N times: an eventfd (not metered) and a socketpair
 * end (metered).  The preload classifies an fd at its first data call;
 * when two threads do it at once, the bytes of an fd that turns out not
 * metered must not be counted anywhere, and those of a metered one must
 * all be.
 *
 *   firsttouch N
 *
 * Prints sock_out=B: the bytes written on the socketpair ends (8 per
 * thread per round); eventfd writes are 8 bytes each too, but must not
 * show in any total.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

static pthread_barrier_t go, done;
static int efd = -1, sfd = -1;
static volatile int stop;

static void *second(void *arg)
{
	uint64_t one = 1;

	(void)arg;
	for (;;) {
		pthread_barrier_wait(&go);
		if (stop)
			return NULL;
		if (write(efd, &one, sizeof(one)) != sizeof(one) ||
		    write(sfd, &one, sizeof(one)) != sizeof(one))
			exit(3);
		pthread_barrier_wait(&done);
	}
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1000, i, sv[2];
	uint64_t one = 1, sock_out = 0;
	char buf[64];
	pthread_t t;

	pthread_barrier_init(&go, NULL, 2);
	pthread_barrier_init(&done, NULL, 2);
	if (pthread_create(&t, NULL, second, NULL) != 0)
		return 2;
	for (i = 0; i < n; i++) {
		efd = eventfd(0, EFD_CLOEXEC);
		if (efd < 0 || socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
			return 2;
		sfd = sv[0];
		pthread_barrier_wait(&go);
		if (write(efd, &one, sizeof(one)) != sizeof(one) ||
		    write(sfd, &one, sizeof(one)) != sizeof(one))
			return 3;
		pthread_barrier_wait(&done);
		sock_out += 16;
		if (read(sv[1], buf, 16) != 16)
			return 4;
		close(efd);
		close(sv[0]);
		close(sv[1]);
	}
	stop = 1;
	pthread_barrier_wait(&go);
	pthread_join(t, NULL);
	printf("sock_out=%llu\n", (unsigned long long)sock_out);
	return 0;
}
