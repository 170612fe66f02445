/*
 * forkstuck - fork while the preload's ticker is stuck writing records: a
 * thread opens, uses and closes socketpairs non-stop (close records, to a
 * log the caller makes unwritable: stderr on a pipe nobody reads), and
 * after SETTLE_MS the main thread forks FORKS children that _exit(0),
 * timing each fork() call.
 *
 *   forkstuck [FORKS] [SETTLE_MS]          (defaults 20 and 800)
 *
 * Prints "forks=N" and "max_fork_ms=M" lines on stdout.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile int stop;

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void *churn(void *arg)
{
	char c = 'c';
	int sv[2];

	(void)arg;
	while (!stop) {
		if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
			continue;
		if (write(sv[0], &c, 1) == 1 && read(sv[1], &c, 1) == 1)
			c = 'c';
		close(sv[0]);
		close(sv[1]);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int forks = argc > 1 ? atoi(argv[1]) : 20;
	long settle = argc > 2 ? atol(argv[2]) : 800;
	struct timespec d = {settle / 1000, (settle % 1000) * 1000000L};
	double worst = 0;
	pthread_t t;
	int i;

	if (pthread_create(&t, NULL, churn, NULL) != 0)
		return 1;
	nanosleep(&d, NULL);
	for (i = 0; i < forks; i++) {
		double t0 = now_ms(), dt;
		pid_t p = fork();

		if (p == 0)
			_exit(0);
		dt = now_ms() - t0;
		if (p < 0 || waitpid(p, NULL, 0) != p)
			return 1;
		if (dt > worst)
			worst = dt;
	}
	stop = 1;
	pthread_join(t, NULL);
	printf("forks=%d\nmax_fork_ms=%.1f\n", forks, worst);
	fflush(stdout);
	return 0;
}
