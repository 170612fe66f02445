/*
 * spawner - a parent whose children share its memory for a while.
 *
 *   spawner PROG [ARGS...]
 *
 * Moves 1000 bytes through a unix socketpair (first end to second), then:
 *  1. vfork(): the child closes both ends of the pair and dup2()s over
 *     them (as a child does before exec) and execs /bin/true (or _exits);
 *  2. clone(CLONE_VM | CLONE_VFORK): the child does the same and _exits;
 *  3. posix_spawn()s PROG ARGS (with the environment, so the preload) and
 *     waits for it;
 * then moves 2000 more bytes through the same pair and closes it.  The
 * children's close/dup2 must not retire the parent's connection, nor
 * their _exit end its metering: its close record holds all 3000 bytes.
 * Prints "send_fd= recv_fd= bytes= spawned_pid= spawned_status=", then
 * "closing" (flushed) just before it closes the pair.
 */
#include <sched.h>
#include <signal.h>
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

static int pair[2];

/* The clone child: the same calls as the vfork child's, then _exit. */
static int shared_child(void *arg)
{
	(void)arg;
	dup2(pair[1], pair[0]);
	close(pair[0]);
	close(pair[1]);
	_exit(0);
}

int main(int argc, char **argv)
{
	static char stack[256 * 1024] __attribute__((aligned(16)));
	int ct = 0;
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
	pair[0] = sp[0];
	pair[1] = sp[1];
	pid = clone(shared_child, stack + sizeof(stack),
		    CLONE_VM | CLONE_VFORK | SIGCHLD, NULL);
	if (pid < 0 || waitpid(pid, &ct, 0) != pid)
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
	printf("clone_status=%d\nclosing\n",
	       WIFEXITED(ct) ? WEXITSTATUS(ct) : -1);
	fflush(stdout);
	close(sp[0]);
	close(sp[1]);
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
}
