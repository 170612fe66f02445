/*
 * childfds - a fork child's state file must be made outside the program's
 * fd table (t_child_state_fds).  The child's file is made at its first
 * tracked fd; it was opened in the program's table, for a moment:
 *
 *   childfds race N   N children; in each, a thread opens and closes
 *                     /dev/null in a loop, and must always get the same,
 *                     lowest free number, while the main thread makes the
 *                     child's first tracked fd (dup2 of an inherited
 *                     socket, a send).  Prints bad=K (children where the
 *                     thread once got another number) and children=N.
 *   childfds full BYTES
 *                     one child fills its fd table to its limit (soft
 *                     limit 64, /dev/null until EMFILE), then sends BYTES
 *                     on the socket it inherited (its first tracked fd:
 *                     there was no number left for the file) and waits to
 *                     be killed.  The parent reads the BYTES and the
 *                     child's word that it is done writing, kills it
 *                     (SIGKILL) and prints child=PID and got=BYTES.
 */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile int stop;
static volatile long bad, iters;
static int expect;

static void *spin(void *x)
{
	(void)x;
	while (!stop) {
		int fd = open("/dev/null", O_RDONLY);

		if (fd != expect)
			bad++;
		if (fd >= 0)
			close(fd);
		iters++;
	}
	return NULL;
}

static int race(int n)
{
	int sv[2], i, badkids = 0;
	char b[8];

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0 ||
	    write(sv[0], "x", 1) != 1 || read(sv[1], b, 1) != 1)
		return 1;
	for (i = 0; i < n; i++) {
		pid_t p = fork();
		int st;

		if (p < 0)
			return 1;
		if (p == 0) {
			pthread_t t;
			long at;

			expect = open("/dev/null", O_RDONLY);
			close(expect);
			if (pthread_create(&t, NULL, spin, NULL) != 0)
				_exit(2);
			while (iters < 20)
				;
			if (dup2(sv[1], 100) != 100 ||
			    send(100, "y", 1, MSG_DONTWAIT) != 1)
				_exit(2);
			at = iters;
			while (iters < at + 20)
				;
			stop = 1;
			pthread_join(t, NULL);
			_exit(bad ? 1 : 0);
		}
		if (waitpid(p, &st, 0) != p || !WIFEXITED(st) ||
		    WEXITSTATUS(st) > 1)
			return 1;
		if (WEXITSTATUS(st) == 1)
			badkids++;
		if (recv(sv[0], b, 1, 0) != 1)
			return 1;
	}
	printf("bad=%d\nchildren=%d\n", badkids, n);
	return 0;
}

static int full(long bytes)
{
	int sv[2], done[2], st;
	long got = 0;
	char buf[4096];
	pid_t p;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0 || pipe(done) != 0)
		return 1;
	p = fork();
	if (p < 0)
		return 1;
	if (p == 0) {
		struct rlimit l = {64, 64};
		long sent = 0;

		close(sv[0]);
		if (setrlimit(RLIMIT_NOFILE, &l) != 0)
			_exit(2);
		while (open("/dev/null", O_RDONLY) >= 0)
			;
		memset(buf, 'f', sizeof(buf));
		while (sent < bytes) {
			size_t want = (size_t)(bytes - sent) < sizeof(buf)
					      ? (size_t)(bytes - sent)
					      : sizeof(buf);
			ssize_t r = write(sv[1], buf, want);

			if (r <= 0)
				_exit(2);
			sent += r;
		}
		/* Told after the last write was counted: the kill then
		 * interrupts no call. */
		if (write(done[1], "d", 1) != 1)
			_exit(2);
		for (;;)
			pause();
	}
	close(sv[1]);
	while (got < bytes) {
		ssize_t r = read(sv[0], buf, sizeof(buf));

		if (r <= 0)
			return 1;
		got += r;
	}
	if (read(done[0], buf, 1) != 1)
		return 1;
	kill(p, SIGKILL);
	if (waitpid(p, &st, 0) != p || !WIFSIGNALED(st))
		return 1;
	printf("child=%d\ngot=%ld\n", (int)p, got);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "race"))
		return race(atoi(argv[2]));
	if (argc == 3 && !strcmp(argv[1], "full"))
		return full(atol(argv[2]));
	fprintf(stderr, "usage: childfds race N | full BYTES\n");
	return 2;
}
