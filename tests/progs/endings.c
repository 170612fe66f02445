/*
 * endings - ways a process ends that pass glibc's internal _exit, past
 * the _exit wrapper: after 100000 bytes each way over a socketpair,
 *   endings quick   at_quick_exit(handler) and quick_exit(8) (the handler
 *                   writes 10 bytes more first)
 *   endings daemon  daemon(1, 1): the parent ends inside it; the child
 *                   (the daemon) moves 500 bytes more, prints its pid and
 *                   exits
 *   endings group   syscall(SYS_exit_group, 11)
 * Prints "pid=N" first (and "daemon=N" for the daemon).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

static int sv[2];
static char buf[100000];

static void xfer(size_t n)
{
	size_t got = 0;

	if (write(sv[0], buf, n) != (ssize_t)n)
		exit(1);
	while (got < n) {
		ssize_t r = read(sv[1], buf, n - got);

		if (r <= 0)
			exit(1);
		got += (size_t)r;
	}
}

static void at_quick(void)
{
	xfer(10);
}

int main(int argc, char **argv)
{
	const char *how = argc > 1 ? argv[1] : "";

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
		return 1;
	printf("pid=%d\n", (int)getpid());
	fflush(stdout);
	xfer(sizeof(buf));
	if (strcmp(how, "quick") == 0) {
		at_quick_exit(at_quick);
		quick_exit(8);
	} else if (strcmp(how, "daemon") == 0) {
		if (daemon(1, 1) != 0)
			return 1;
		xfer(500);
		printf("daemon=%d\n", (int)getpid());
		return 0;
	} else if (strcmp(how, "group") == 0) {
		syscall(SYS_exit_group, 11);
	}
	return 2;
}
