/*
 * forkrate - forks per second of a process with a metered connection.
 *
 *   forkrate N
 *
 * Makes a socketpair and moves a byte over it (so the parent meters a
 * connection: under the preload it has a state file with backed pages),
 * then forks N children one after the other; each writes one byte on the
 * inherited socket and ends with _exit(0), and the parent reads it and
 * reaps the child before the next fork.  Prints "forks_per_s=R".
 */
#include <stdio.h>
#include <stdlib.h>
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

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1000, i, sp[2], st;
	char c = 'x';
	double t0;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sp) != 0 ||
	    write(sp[0], &c, 1) != 1 || read(sp[1], &c, 1) != 1)
		return 1;
	t0 = now();
	for (i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid < 0)
			return 1;
		if (pid == 0) {
			if (write(sp[0], &c, 1) != 1)
				_exit(1);
			_exit(0);
		}
		if (read(sp[1], &c, 1) != 1 || waitpid(pid, &st, 0) != pid ||
		    st != 0)
			return 1;
	}
	printf("forks_per_s=%.0f\n", n / (now() - t0));
	return 0;
}
