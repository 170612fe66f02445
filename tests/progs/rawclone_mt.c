/*
 * rawclone_mt.c - raw clones (syscall(SYS_clone, SIGCHLD): no glibc code
 * runs in the child) of a process with threads of its own
 * (t_raw_clone_threads).
 *
 *   rawclone_mt hang N   two threads create threads without pause while
 *                        main makes N raw clones, one at a time; each
 *                        child makes a socket, writes 5 bytes on an
 *                        inherited socketpair and _exits.  A child not
 *                        ended within 3 s is killed and counted hung.
 *                        Prints children=N, hung=H and got=B (B: the bytes
 *                        the parent read from the socketpair), a line each.
 *   rawclone_mt status   the parent has an idle thread; in the child,
 *                        main calls pthread_exit and a thread it made
 *                        writes 5 bytes, then ends with
 *                        syscall(SYS_exit, 5): the child's last thread's
 *                        status is the process's.  Prints "status=S".
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int sv[2];

static void *nop(void *arg)
{
	return arg;
}

static void *churn(void *arg)
{
	(void)arg;
	for (;;) {
		pthread_t t;

		if (pthread_create(&t, NULL, nop, NULL) == 0)
			pthread_detach(t);
		usleep(100);
	}
	return NULL;
}

static void *idle(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

static void *last_worker(void *arg)
{
	(void)arg;
	if (write(sv[0], "hello", 5) != 5)
		_exit(3);
	usleep(100000);
	syscall(SYS_exit, 5L);
	return NULL;
}

static pid_t raw_clone(void)
{
	return (pid_t)syscall(SYS_clone, (long)SIGCHLD, 0L, 0L, 0L, 0L);
}

static int hang(int n)
{
	pthread_t t;
	long got = 0;
	int i, hung = 0;

	pthread_create(&t, NULL, churn, NULL);
	pthread_create(&t, NULL, churn, NULL);
	for (i = 0; i < n; i++) {
		pid_t p = raw_clone();
		int st, waited = 0;
		char buf[64];
		ssize_t r;

		if (p < 0) {
			perror("rawclone_mt: clone");
			return 2;
		}
		if (p == 0) {
			int s = socket(AF_INET, SOCK_STREAM, 0);

			if (write(sv[0], "hello", 5) != 5)
				_exit(3);
			close(s);
			_exit(0);
		}
		while (waitpid(p, &st, WNOHANG) == 0) {
			struct timespec d = {0, 10000000};

			nanosleep(&d, NULL);
			if (++waited == 300) {
				hung++;
				kill(p, SIGKILL);
				waitpid(p, &st, 0);
				break;
			}
		}
		while ((r = recv(sv[1], buf, sizeof(buf), MSG_DONTWAIT)) > 0)
			got += r;
	}
	printf("children=%d\nhung=%d\ngot=%ld\n", n, hung, got);
	return 0;
}

static int status(void)
{
	pthread_t t;
	pid_t p;
	int st;

	pthread_create(&t, NULL, idle, NULL);
	p = raw_clone();
	if (p < 0) {
		perror("rawclone_mt: clone");
		return 2;
	}
	if (p == 0) {
		pthread_create(&t, NULL, last_worker, NULL);
		pthread_exit(NULL);
	}
	if (waitpid(p, &st, 0) != p)
		return 2;
	printf("status=%d\n", WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
	return 0;
}

int main(int argc, char **argv)
{
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) {
		perror("rawclone_mt: socketpair");
		return 2;
	}
	if (argc == 3 && strcmp(argv[1], "hang") == 0)
		return hang(atoi(argv[2]));
	if (argc == 2 && strcmp(argv[1], "status") == 0)
		return status();
	fprintf(stderr, "usage: rawclone_mt hang N | status\n");
	return 2;
}
