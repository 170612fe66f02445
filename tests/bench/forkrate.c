/*
 * forkrate - forks per second of a process with a metered connection.
 *
 *   forkrate N [bare]
 *
 * Makes a socketpair and moves a byte over it (so the parent meters a
 * connection: under the preload it has a state file with backed pages),
 * then forks N children one after the other; each writes one byte on the
 * inherited socket and ends with _exit(0), and the parent reads it and
 * reaps the child before the next fork.  Prints "forks_per_s=R".
 *
 * bare: the children only _exit(0) (what a fork costs by itself, as a
 * pre-fork server's short-lived child or one that execs sees it), with an
 * idle thread in the parent as the preload's ticker makes one without
 * it, so that both sides take glibc's multi-threaded fork; prints
 * "forks_per_s=R us_per_fork=W parent_cpu_us=P child_cpu_us=C
 * child_minflt=F" (CPU time and page faults per fork, getrusage).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double cpu_us(const struct rusage *r)
{
	return (double)(r->ru_utime.tv_sec + r->ru_stime.tv_sec) * 1e6 +
	       (double)(r->ru_utime.tv_usec + r->ru_stime.tv_usec);
}

static void *idle(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1000, i, sp[2], st;
	int bare = argc > 2 && strcmp(argv[2], "bare") == 0;
	struct rusage s0, s1, c0, c1;
	char c = 'x';
	pthread_t t;
	double t0, t1;

	if (n <= 0 || socketpair(AF_UNIX, SOCK_STREAM, 0, sp) != 0 ||
	    write(sp[0], &c, 1) != 1 || read(sp[1], &c, 1) != 1)
		return 1;
	if (bare && pthread_create(&t, NULL, idle, NULL) != 0)
		return 1;
	getrusage(RUSAGE_SELF, &s0);
	getrusage(RUSAGE_CHILDREN, &c0);
	t0 = now();
	for (i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid < 0)
			return 1;
		if (pid == 0) {
			if (!bare && write(sp[0], &c, 1) != 1)
				_exit(1);
			_exit(0);
		}
		if ((!bare && read(sp[1], &c, 1) != 1) ||
		    waitpid(pid, &st, 0) != pid || st != 0)
			return 1;
	}
	t1 = now();
	getrusage(RUSAGE_SELF, &s1);
	getrusage(RUSAGE_CHILDREN, &c1);
	printf("forks_per_s=%.0f", n / (t1 - t0));
	if (bare)
		printf(" us_per_fork=%.1f parent_cpu_us=%.1f child_cpu_us=%.1f "
		       "child_minflt=%.1f",
		       (t1 - t0) * 1e6 / n, (cpu_us(&s1) - cpu_us(&s0)) / n,
		       (cpu_us(&c1) - cpu_us(&c0)) / n,
		       (double)(c1.ru_minflt - c0.ru_minflt) / n);
	printf("\n");
	return 0;
}
