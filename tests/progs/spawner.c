/*
 * spawner - a parent whose children share its memory for a while.
 *
 *   spawner PROG [ARGS...]
 *
 * Moves 1000 bytes through a unix socketpair (first end to second), then:
 *  1. vfork(): the child closes both ends of the pair and dup2()s over
 *     them (as a child does before exec) and execs /bin/true (or _exits);
 *  2. posix_spawn()s PROG ARGS (with the environment, so the preload) and
 *     waits for it;
 * then moves 2000 more bytes through the same pair and closes it.  The
 * child's close/dup2 must not retire the parent's connection: its close
 * record holds all 3000 bytes.  Prints "send_fd= recv_fd= bytes=
 * spawned_pid= spawned_status=".
 */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static int move(int from, int to, long n)
{
	char buf[4096];
	long sent = 0, got = 0;

	memset(buf, 'v', sizeof(buf));
	while (sent < n) {
		long k = n - sent < (long)sizeof(buf) ? n - sent
						      : (long)sizeof(buf);
		ssize_t w = write(from, buf, (size_t)k), r;

		if (w <= 0)
			return -1;
		sent += w;
		while (got < sent) {
			r = read(to, buf, sizeof(buf));
			if (r <= 0)
				return -1;
			got += r;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	char *true_argv[] = { "true", NULL };
	pid_t pid, spawned;
	int sp[2], st = 0, sst = 0;

	if (argc < 2 || socketpair(AF_UNIX, SOCK_STREAM, 0, sp) != 0)
		return 2;
	if (move(sp[0], sp[1], 1000))
		return 2;
	pid = vfork();
	if (pid < 0)
		return 2;
	if (pid == 0) {
		/* Only the calls a vfork child may make: close, dup2, exec. */
		dup2(sp[1], sp[0]);
		close(sp[0]);
		close(sp[1]);
		execve("/bin/true", true_argv, environ);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) != pid)
		return 2;
	if (posix_spawn(&spawned, argv[1], NULL, NULL, argv + 1, environ) != 0)
		return 2;
	if (waitpid(spawned, &sst, 0) != spawned)
		return 2;
	if (move(sp[0], sp[1], 2000))
		return 2;
	printf("send_fd=%d\nrecv_fd=%d\nbytes=%d\n", sp[0], sp[1], 3000);
	printf("spawned_pid=%d\nspawned_status=%d\n", (int)spawned,
	       WIFEXITED(sst) ? WEXITSTATUS(sst) : -1);
	close(sp[0]);
	close(sp[1]);
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
}
