/*
 * lastthread - a process whose last thread is not the one that returns
 * from main: the endings glibc handles without exit().
 *
 *   lastthread pthread MS BYTES   main sends 500 bytes over a socketpair,
 *                                 starts a worker and calls pthread_exit;
 *                                 the worker waits MS ms, sends BYTES and
 *                                 returns: the process ends then (glibc's
 *                                 exit(0) from its last thread), status 0.
 *   lastthread forkthread BYTES   main starts a thread that forks; the
 *                                 child (that thread alone) sends BYTES
 *                                 on a socketpair of its own and returns
 *                                 from the start routine: glibc's exit(0)
 *                                 ends it, its atexit handler runs and
 *                                 its buffered output is flushed.  The
 *                                 parent prints "child_status=S".
 *   lastthread workerraw MS BYTES STATUS
 *                                 as pthread, but the worker ends with the
 *                                 exit system call (syscall(SYS_exit,
 *                                 STATUS)): Linux 6.x gives the process
 *                                 the last thread's status, STATUS.
 *   lastthread raw STATUS         main sends 500 bytes and ends with the
 *                                 exit system call (not exit_group), the
 *                                 only thread: the process ends with
 *                                 STATUS.
 *
 * Prints "sent=N" (every byte sent and read back) on stdout, unbuffered,
 * before the ending.  The pthread and forkthread endings also leave
 * "flushed=yes" in a fully buffered FILE on stdout and register an atexit
 * handler that prints "atexit=ran": both show only if the process ended
 * through exit().
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int sp[2];
static long wait_ms, bytes;
static int worker_status = -1; /* workerraw: the worker's raw exit */

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

static FILE *late; /* fully buffered, on a dup of stdout */

static void said(void)
{
	static const char m[] = "atexit=ran\n";

	if (write(1, m, sizeof(m) - 1) < 0)
		_exit(2);
}

static void exit_shows(void)
{
	atexit(said);
	fprintf(late, "flushed=yes\n");
}

static void *forker(void *arg)
{
	int st;
	pid_t p;

	(void)arg;
	p = fork();
	if (p < 0)
		exit(2);
	if (p == 0) {
		close(sp[0]);
		close(sp[1]);
		if (socketpair(AF_UNIX, SOCK_STREAM, 0, sp) != 0)
			exit(2);
		move(bytes);
		printf("sent=%ld\n", bytes);
		exit_shows();
		return NULL;
	}
	if (waitpid(p, &st, 0) != p)
		exit(2);
	printf("child_status=%d\n", WIFEXITED(st) ? WEXITSTATUS(st) : 128);
	return NULL;
}

static void *worker(void *arg)
{
	struct timespec ts = { wait_ms / 1000, (wait_ms % 1000) * 1000000L };

	(void)arg;
	nanosleep(&ts, NULL);
	move(bytes);
	printf("sent=%ld\n", 500 + bytes);
	if (worker_status >= 0)
		syscall(SYS_exit, worker_status);
	exit_shows();
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;

	if (argc < 3 || socketpair(AF_UNIX, SOCK_STREAM, 0, sp) != 0)
		return 2;
	setvbuf(stdout, NULL, _IONBF, 0);
	late = fdopen(dup(1), "w");
	if (!late || setvbuf(late, NULL, _IOFBF, 4096) != 0)
		return 2;
	if (strcmp(argv[1], "forkthread") == 0) {
		bytes = atol(argv[2]);
		if (pthread_create(&t, NULL, forker, NULL) != 0 ||
		    pthread_join(t, NULL) != 0)
			return 2;
		return 0;
	}
	move(500);
	if (strcmp(argv[1], "workerraw") == 0 && argc == 5) {
		worker_status = atoi(argv[4]);
		argv[1] = "pthread";
		argc = 4;
	}
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
