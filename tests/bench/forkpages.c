/*
 * forkpages.c - the program tests/bench/forkpages.sh runs under valgrind's
 * lackey: what a pre-fork server's short-lived child costs in pages.
 *
 *   forkpages MAPS_FILE
 *
 * Meters a connection (a socketpair, a byte each way), starts an idle
 * thread (a server is multi-threaded already: glibc's fork then takes the
 * same path with and without the preload's ticker), writes its
 * /proc/self/maps to MAPS_FILE, then forks twice, one child at a time;
 * each child only calls _exit(0).  Linked with -z now, so that no child
 * binds a symbol lazily (a lookup that touches whichever library defines
 * it): the pages a child touches are its fork handlers' and its exit's.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
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

int main(int argc, char **argv)
{
	char buf[4096], c = 'x';
	int sv[2], i;
	size_t n;
	pthread_t t;
	FILE *in, *out;

	if (argc != 2) {
		fprintf(stderr, "usage: forkpages MAPS_FILE\n");
		return 2;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0 ||
	    write(sv[0], &c, 1) != 1 || read(sv[1], &c, 1) != 1 ||
	    write(sv[1], &c, 1) != 1 || read(sv[0], &c, 1) != 1 ||
	    pthread_create(&t, NULL, idle, NULL) != 0) {
		perror("forkpages: set-up");
		return 2;
	}
	in = fopen("/proc/self/maps", "r");
	out = fopen(argv[1], "w");
	if (!in || !out) {
		perror("forkpages: maps");
		return 2;
	}
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		fwrite(buf, 1, n, out);
	fclose(in);
	if (fclose(out) != 0) {
		perror("forkpages: maps");
		return 2;
	}
	for (i = 0; i < 2; i++) {
		pid_t p = fork();
		int st;

		if (p < 0) {
			perror("forkpages: fork");
			return 2;
		}
		if (p == 0)
			_exit(0);
		if (waitpid(p, &st, 0) != p || !WIFEXITED(st) ||
		    WEXITSTATUS(st) != 0) {
			fprintf(stderr, "forkpages: a child failed\n");
			return 2;
		}
	}
	return 0;
}
