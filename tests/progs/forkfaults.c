/*
 * forkfaults.c - page faults a fork costs, as getrusage counts them:
 * deterministic where timings are not (t_fork_faults).
 *
 *   forkfaults N [nofork]
 *
 * N times: a connected socketpair moves a byte each way (the preload
 * tracks both ends), the process forks a child that _exits at once, waits
 * for it, then closes both ends.  A thread of its own sits idle throughout,
 * so that glibc's fork takes its multi-threaded path with or without the
 * preload (whose ticker is a thread too).  With nofork, the same without
 * the forks: what the closes cost by themselves (their records' first
 * touch of the queue's pages).  Prints:
 *   child_faults=F    minor faults of each child (RUSAGE_CHILDREN / N)
 *   close_faults=C    minor faults of the parent's two closes after each
 *                     fork (RUSAGE_THREAD around them, / N): a page the
 *                     fork write-protected and a close writes is a
 *                     copy-on-write fault (and a TLB shootdown on every
 *                     CPU the process runs on); the stack is written
 *                     before (touch_stack)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

static void *idle(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

/* Write 32 KB of this thread's stack below the caller: a server's own
 * work after a fork writes its stack deeper than a close does, and the
 * stack's copy-on-write faults are not the library's. */
static __attribute__((noinline)) void touch_stack(void)
{
	volatile char buf[32768];
	size_t i;

	for (i = 0; i < sizeof(buf); i += 512)
		buf[i] = 1;
}

static void die(const char *what)
{
	perror(what);
	exit(2);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 200, i, sv[2], st;
	int forks = !(argc > 2 && strcmp(argv[2], "nofork") == 0);
	long close_faults = 0;
	struct rusage r0, r1;
	pthread_t t;
	char c = 'x';
	pid_t pid;

	if (n <= 0 || pthread_create(&t, NULL, idle, NULL) != 0)
		die("setup");
	for (i = 0; i < n; i++) {
		if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0 ||
		    write(sv[0], &c, 1) != 1 || read(sv[1], &c, 1) != 1 ||
		    write(sv[1], &c, 1) != 1 || read(sv[0], &c, 1) != 1)
			die("socketpair");
		pid = forks ? fork() : 1;
		if (pid < 0)
			die("fork");
		if (pid == 0)
			_exit(0);
		if (forks && (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
			      WEXITSTATUS(st) != 0))
			die("child");
		touch_stack();
		getrusage(RUSAGE_THREAD, &r0);
		close(sv[0]);
		close(sv[1]);
		getrusage(RUSAGE_THREAD, &r1);
		close_faults += r1.ru_minflt - r0.ru_minflt;
	}
	getrusage(RUSAGE_CHILDREN, &r1);
	printf("child_faults=%.2f\nclose_faults=%.2f\n",
	       (double)r1.ru_minflt / n, (double)close_faults / n);
	return 0;
}
