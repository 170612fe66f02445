/*
 * sigfirst - the first data call on an fd, made by a signal handler in a
 * fork child: the preload must not start its ticker thread there
 * (pthread_create is not async-signal-safe), but later, outside it.
 *
 *   sigfirst
 *
 * The parent makes a socketpair and forks.  The child (whose inherited
 * fds the preload has not looked at yet) raises SIGUSR1; the handler
 * write()s 4 bytes on its end: the first data call on that fd.  Back in
 * main, the child counts its threads (/proc/self/status, read with raw
 * system calls, which no preload sees), then dup()s and close()s its end
 * (lifecycle calls outside any handler), writes 4 more bytes and counts
 * again.  It prints "threads_after_handler=N" and "threads_after_call=N".
 * The parent reads the 8 bytes and prints "received=8"; exits 0 when the
 * child did.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "threadcount.h"

static int sv[2];

static void on_usr1(int sig)
{
	(void)sig;
	if (write(sv[0], "ping", 4) != 4)
		_exit(3);
}

int main(void)
{
	struct sigaction sa;
	char got[16];
	size_t have = 0;
	int st, fd;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
		return 1;
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_usr1;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGUSR1, &sa, NULL);
		raise(SIGUSR1);
		printf("threads_after_handler=%d\n", threads());
		fd = dup(sv[0]);
		close(fd);
		if (write(sv[0], "pong", 4) != 4)
			return 4;
		printf("threads_after_call=%d\n", threads());
		return 0;
	}
	while (have < 8) {
		ssize_t r = read(sv[1], got + have, 8 - have);

		if (r <= 0)
			return 1;
		have += (size_t)r;
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
	    WEXITSTATUS(st) != 0)
		return 2;
	printf("received=%zu\n", have);
	return 0;
}
