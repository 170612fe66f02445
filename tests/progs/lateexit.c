/*
 * lateexit MODE - a program whose exit runs an exit handler after the
 * library's (tests/progs/deeplib/lateexit.c, preloaded after it: see
 * there).  main moves 2 bytes over a socketpair (the ticker starts), then
 *   lateexit pin    setresuid(-1, -1, -1) first (a credential call with
 *                   an explicit log path: the library keeps its log open,
 *                   and the exit record takes another path)
 *   lateexit plain  nothing more
 * and calls exit(0).  Or
 *   lateexit pexit  the last thread's exit is glibc's own: main registers
 *                   an exit handler that calls _exit(3), starts a worker
 *                   and calls pthread_exit; the worker moves 2 bytes,
 *                   prints a line into stdout's buffer and returns (glibc
 *                   then calls exit(0), whose handler ends the process
 *                   with status 3, the line never written).
 *   lateexit sigexit  after the 2 bytes, a SIGALRM handler calls exit(0)
 *                   while main loops on malloc and free (the handler
 *                   may cut either short, holding the arena's lock).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

static int d[2];

static void end3(void)
{
	_exit(3);
}

static void *worker(void *arg)
{
	char c[2];

	(void)arg;
	usleep(30000);
	if (write(d[0], "hi", 2) != 2 || read(d[1], c, 2) != 2)
		_exit(4);
	printf("buffered, never written\n");
	return NULL;
}

static void on_alarm(int sig)
{
	(void)sig;
	exit(0);
}

/* Loop on malloc and free until SIGALRM, through pointers the compiler
 * cannot see through (it drops a malloc freed at once). */
static void alloc_until_alarm(void)
{
	void *(*volatile m)(size_t) = malloc;
	void (*volatile f)(void *) = free;
	struct itimerval it = { { 0, 0 }, { 0, 2000 } };

	signal(SIGALRM, on_alarm);
	setitimer(ITIMER_REAL, &it, NULL);
	for (;;) {
		char *p = m(16384);

		if (p)
			p[0] = 1;
		f(p);
	}
}

int main(int argc, char **argv)
{
	pthread_t t;
	char c[2];

	if (argc != 2)
		return 2;
	if (!strcmp(argv[1], "pexit")) {
		if (socketpair(AF_UNIX, SOCK_STREAM, 0, d) != 0 ||
		    write(d[0], "hi", 2) != 2 || read(d[1], c, 2) != 2)
			return 3;
		atexit(end3);
		if (pthread_create(&t, NULL, worker, NULL) != 0)
			return 5;
		pthread_exit(NULL);
	}
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, d) != 0 ||
	    write(d[0], "hi", 2) != 2 || read(d[1], c, 2) != 2)
		return 3;
	if (!strcmp(argv[1], "pin"))
		setresuid((uid_t)-1, (uid_t)-1, (uid_t)-1);
	if (!strcmp(argv[1], "sigexit"))
		alloc_until_alarm();
	usleep(2000);
	exit(0);
}
