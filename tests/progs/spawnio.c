/*
 * spawnio - children made by vfork+exec and posix_spawn that do I/O of
 * their own on sockets handed to them as stdin and stdout.
 *
 *   spawnio vfork|spawn BYTES     the parent
 *   spawnio relay                 the child: copies stdin to stdout with
 *                                 read()/write() until EOF, prints nothing
 *                                 else, exits 0
 *
 * The parent makes two unix socketpairs IN and OUT and starts
 * "spawnio relay" (itself, from /proc/self/exe) with IN's second end as
 * stdin and OUT's second end as stdout:
 *   vfork: the vfork child dup2()s them onto 0 and 1, closes the four
 *          originals (all calls a vfork child makes in shared memory) and
 *          execs;
 *   spawn: posix_spawn with file actions doing the same.
 * It closes its copies of the child's ends, sends BYTES into IN, shuts it
 * down, reads OUT to EOF and waits for the child.  Prints
 *   in_fd=A out_fd=B child_pid=C child_status=S got=N
 * and exits 0 when all BYTES came back and the child exited 0.
 */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static int relay(void)
{
	char buf[4096];
	ssize_t r;

	while ((r = read(0, buf, sizeof(buf))) > 0) {
		ssize_t off = 0;

		while (off < r) {
			ssize_t w = write(1, buf + off, (size_t)(r - off));

			if (w <= 0)
				return 3;
			off += w;
		}
	}
	return r < 0 ? 4 : 0;
}

static char *child_argv[] = {"spawnio", "relay", NULL};

/* In a function of its own, so nothing of main's lives across vfork. */
static pid_t start_vfork(const int in[2], const int out[2])
{
	pid_t pid = vfork();

	if (pid == 0) {
		dup2(in[1], 0);
		dup2(out[1], 1);
		close(in[0]);
		close(in[1]);
		close(out[0]);
		close(out[1]);
		execve("/proc/self/exe", child_argv, environ);
		_exit(127);
	}
	return pid;
}

int main(int argc, char **argv)
{
	int in[2], out[2], st = -1;
	long bytes, sent = 0, got = 0;
	char buf[4096];
	pid_t pid;

	if (argc == 2 && strcmp(argv[1], "relay") == 0)
		return relay();
	if (argc != 3)
		return 2;
	bytes = atol(argv[2]);
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, in) ||
	    socketpair(AF_UNIX, SOCK_STREAM, 0, out))
		return 2;
	if (strcmp(argv[1], "vfork") == 0) {
		pid = start_vfork(in, out);
	} else {
		posix_spawn_file_actions_t fa;

		posix_spawn_file_actions_init(&fa);
		posix_spawn_file_actions_adddup2(&fa, in[1], 0);
		posix_spawn_file_actions_adddup2(&fa, out[1], 1);
		posix_spawn_file_actions_addclose(&fa, in[0]);
		posix_spawn_file_actions_addclose(&fa, in[1]);
		posix_spawn_file_actions_addclose(&fa, out[0]);
		posix_spawn_file_actions_addclose(&fa, out[1]);
		if (posix_spawn(&pid, "/proc/self/exe", &fa, NULL, child_argv,
				environ) != 0)
			pid = -1;
		posix_spawn_file_actions_destroy(&fa);
	}
	if (pid < 0)
		return 2;
	close(in[1]);
	close(out[1]);
	memset(buf, 'r', sizeof(buf));
	while (sent < bytes) {
		long k = bytes - sent < (long)sizeof(buf) ? bytes - sent
							  : (long)sizeof(buf);
		ssize_t w = send(in[0], buf, (size_t)k, 0);

		if (w <= 0)
			return 2;
		sent += w;
		/* drain what came back so far, so neither side blocks */
		while (got < sent) {
			ssize_t r = recv(out[0], buf, sizeof(buf), 0);

			if (r <= 0)
				return 2;
			got += r;
		}
	}
	shutdown(in[0], SHUT_WR);
	for (;;) {
		ssize_t r = recv(out[0], buf, sizeof(buf), 0);

		if (r <= 0)
			break;
		got += r;
	}
	waitpid(pid, &st, 0);
	printf("in_fd=%d out_fd=%d child_pid=%d child_status=%d got=%ld\n",
	       in[0], out[0], (int)pid, st, got);
	close(in[0]);
	close(out[0]);
	return got == bytes && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
}
