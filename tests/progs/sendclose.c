/*
 * sendclose - a send whose count another thread's close overtakes.
 *
 * Both threads on one CPU under SCHED_FIFO: the main thread (priority 2)
 * blocks in recv on one end of a socketpair while a thread (priority 1)
 * sends 1 byte on the other end; the send wakes the main thread, which
 * preempts the sender right at the system call's return, before a
 * wrapper around send has counted it, and closes the sender's end.
 * Prints "sent=N received=N" and exits 0; exits 3 when SCHED_FIFO or the
 * CPU affinity is not allowed here (the caller skips).
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

static int sv[2];
static ssize_t sent;

static int fifo(int prio)
{
	struct sched_param sp = { .sched_priority = prio };

	return pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
}

static void *sender(void *arg)
{
	(void)arg;
	if (fifo(1) != 0)
		exit(3);
	sent = send(sv[0], "x", 1, 0); /* wakes main, which preempts us */
	return NULL;
}

int main(void)
{
	cpu_set_t one;
	pthread_t t;
	ssize_t got;
	char c;

	CPU_ZERO(&one);
	CPU_SET(sched_getcpu() < 0 ? 0 : sched_getcpu(), &one);
	if (sched_setaffinity(0, sizeof(one), &one) != 0 || fifo(2) != 0)
		return 3;
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) {
		perror("socketpair");
		return 2;
	}
	if (pthread_create(&t, NULL, sender, NULL) != 0)
		return 2;
	got = recv(sv[1], &c, 1, 0);
	close(sv[0]); /* the sender has not counted its send yet */
	pthread_join(t, NULL);
	close(sv[1]);
	printf("sent=%zd received=%zd\n", sent, got);
	return 0;
}
