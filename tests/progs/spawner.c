/*
 * spawner - a parent whose children share its memory for a while.
 *
 *   spawner PROG [ARGS...]
 *
 * Moves 1000 bytes through a unix socketpair (first end to second), then:
 *  1. vfork(): the child closes both ends of the pair and dup2()s over
 *     them (as a child does before exec), makes a socket and a socketpair
 *     (on the numbers it freed) and execs /bin/true (or _exits);
 *  2. clone(CLONE_VM | CLONE_VFORK): the child does the same and _exits;
 *  3. clone(CLONE_VFORK) without CLONE_VM: a process of its own, that
 *     moves 500 bytes through a socketpair of its own and exit()s;
 *  4. posix_spawn()s PROG ARGS (with the environment, so the preload) and
 *     waits for it;
 * then moves 2000 more bytes through the same pair and closes it.  The
 * children's close/dup2/socket must not touch the parent's connection,
 * nor their _exit end its metering: its close record holds all 3000
 * bytes.  Prints "pid= send_fd= recv_fd= bytes= own_pid= own_status=
 * spawned_pid= spawned_status= clone_status=", then "closing" (flushed)
 * just before it closes the pair.
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

/* What a child on our memory does before exec: closes and dup2()s over
 * the pair, and makes sockets on the numbers it freed. */
static void child_fds(void)
{
	int sv[2];

	dup2(pair[1], pair[0]);
	close(pair[0]);
	close(pair[1]);
	socket(AF_UNIX, SOCK_STREAM, 0);
	socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
}

/* The clone(CLONE_VM) child: the same calls as the vfork child's, then
 * _exit. */
static int shared_child(void *arg)
{
	(void)arg;
	child_fds();
	_exit(0);
}

/* The clone child of its own memory: its own connection, then exit(). */
static int own_child(void *arg)
{
	int sv[2];

	(void)arg;
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0 ||
	    move(sv[0], sv[1], 500))
		exit(3);
	close(sv[0]);
	close(sv[1]);
	exit(0);
}

int main(int argc, char **argv)
{
	static char stack[256 * 1024] __attribute__((aligned(16)));
	int ct = 0, ost = 0;
	pid_t own;
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
	pair[0] = sp[0];
	pair[1] = sp[1];
	if (pid == 0) {
		/* Calls a vfork child makes before exec: close, dup2, socket. */
		child_fds();
		execve("/bin/true", true_argv, environ);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) != pid)
		return 2;
	pid = clone(shared_child, stack + sizeof(stack),
		    CLONE_VM | CLONE_VFORK | SIGCHLD, NULL);
	if (pid < 0 || waitpid(pid, &ct, 0) != pid)
		return 2;
	own = clone(own_child, stack + sizeof(stack), CLONE_VFORK | SIGCHLD,
		    NULL);
	if (own < 0 || waitpid(own, &ost, 0) != own)
		return 2;
	if (posix_spawn(&spawned, argv[1], NULL, NULL, argv + 1, environ) != 0)
		return 2;
	if (waitpid(spawned, &sst, 0) != spawned)
		return 2;
	if (move(sp[0], sp[1], 2000))
		return 2;
	printf("pid=%d\n", (int)getpid());
	printf("send_fd=%d\nrecv_fd=%d\nbytes=%d\n", sp[0], sp[1], 3000);
	printf("spawned_pid=%d\nspawned_status=%d\n", (int)spawned,
	       WIFEXITED(sst) ? WEXITSTATUS(sst) : -1);
	printf("own_pid=%d\nown_status=%d\n", (int)own,
	       WIFEXITED(ost) ? WEXITSTATUS(ost) : -1);
	printf("clone_status=%d\nclosing\n",
	       WIFEXITED(ct) ? WEXITSTATUS(ct) : -1);
	fflush(stdout);
	close(sp[0]);
	close(sp[1]);
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
}
