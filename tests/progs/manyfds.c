/*
 * manyfds.c - what a fork child costs in a process that holds many fds:
 * page faults, as getrusage counts them (deterministic where timings are
 * not: t_many_fds).
 *
 *   manyfds HELD N [range]
 *
 * Holds HELD fds open: connected unix socketpairs that moved a byte each
 * way (the preload tracks both ends) and, as many again, /dev/null (a
 * file: known to the preload as not metered).  Then N times forks a child
 * that makes a socketpair of its own, moves a byte each way over it and
 * _exits (its exit record has that pair open), waiting for each.  With
 * range, the child first closes every fd from 3 up with close_range, as
 * a spawning library does before its exec.  Prints:
 *   child_faults=F    minor faults of each child (RUSAGE_CHILDREN / N)
 *   child_pairs=P     the socketpairs the children made, in all
 * (nothing when it started without an fd 1).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void die(const char *what)
{
	perror(what);
	exit(2);
}

static void pair_xfer(void)
{
	int sv[2];
	char c = 'x';

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0 ||
	    write(sv[0], &c, 1) != 1 || read(sv[1], &c, 1) != 1 ||
	    write(sv[1], &c, 1) != 1 || read(sv[0], &c, 1) != 1)
		die("socketpair");
}

int main(int argc, char **argv)
{
	int held = argc > 2 ? atoi(argv[1]) : 0;
	int n = argc > 2 ? atoi(argv[2]) : 0, i, st;
	int range = argc > 3 && strcmp(argv[3], "range") == 0;
	/* Started with no stdout (t_progfd_fallback): its number will be a
	 * socket's, and nothing is printed. */
	int out_ok = fcntl(1, F_GETFD) >= 0;
	struct rlimit rl;
	struct rusage r;
	pid_t pid;

	if (held < 0 || n <= 0) {
		fprintf(stderr, "usage: manyfds HELD N [range]\n");
		return 2;
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 &&
	    rl.rlim_cur < (rlim_t)held * 2 + 64) {
		rl.rlim_cur = (rlim_t)held * 2 + 64;
		if (rl.rlim_max < rl.rlim_cur || setrlimit(RLIMIT_NOFILE, &rl))
			die("RLIMIT_NOFILE");
	}
	for (i = 0; i < held / 2; i++)
		pair_xfer();
	for (i = 0; i < held; i++)
		if (open("/dev/null", O_RDONLY) < 0)
			die("open");
	for (i = 0; i < n; i++) {
		pid = fork();
		if (pid < 0)
			die("fork");
		if (pid == 0) {
			if (range && syscall(SYS_close_range, 3, ~0U, 0) != 0)
				_exit(3);
			pair_xfer();
			_exit(0);
		}
		if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
		    WEXITSTATUS(st) != 0)
			die("child");
	}
	getrusage(RUSAGE_CHILDREN, &r);
	if (out_ok)
		printf("child_faults=%.2f\nchild_pairs=%d\n",
		       (double)r.ru_minflt / n, n);
	return 0;
}
