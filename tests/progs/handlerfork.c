/*
 * handlerfork - a signal handler forks while the main thread is blocked
 * in recv, a metered call; in the child the handler returns into that
 * call, which ends with EINTR.  The library's wrapper in the child still
 * holds the slot pointer it took before the fork: the child's counting
 * must land in the child's own memory, never in the parent's.
 *
 *   handlerfork plain|socket
 *
 * socket: the child's handler makes a socket before it returns (the
 * child's first tracked fd: its own state file).  The parent then
 * receives 5 bytes on the same fd.  Prints "parent_recv=5 child=0" when
 * the child ended with exit status 0.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile pid_t child = -1;
static int make_socket;

static void on_alarm(int sig)
{
	pid_t p;

	(void)sig;
	p = fork();
	if (p == 0 && make_socket) {
		int s = socket(AF_INET, SOCK_STREAM, 0);

		if (s < 0 || send(s, "x", 1, MSG_NOSIGNAL) != -1)
			_exit(4);
	}
	child = p;
}

int main(int argc, char **argv)
{
	struct sigaction sa;
	struct itimerval it;
	char buf[64];
	ssize_t r;
	int sp[2], st;

	if (argc != 2) {
		fprintf(stderr, "usage: handlerfork plain|socket\n");
		return 2;
	}
	make_socket = strcmp(argv[1], "socket") == 0;
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sp) != 0 ||
	    send(sp[0], "hello", 5, 0) != 5 || recv(sp[1], buf, 64, 0) != 5)
		return 2;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm; /* no SA_RESTART: recv ends with EINTR */
	sigaction(SIGALRM, &sa, NULL);
	memset(&it, 0, sizeof(it));
	it.it_value.tv_usec = 100000;
	setitimer(ITIMER_REAL, &it, NULL);
	r = recv(sp[1], buf, sizeof(buf), 0);
	if (child == 0)
		_exit(r == -1 && errno == EINTR ? 0 : 3);
	if (r != -1 || errno != EINTR || child < 0)
		return 2;
	if (waitpid(child, &st, 0) != child)
		return 2;
	if (send(sp[0], "world", 5, 0) != 5)
		return 2;
	r = recv(sp[1], buf, sizeof(buf), 0);
	printf("parent_recv=%zd child=%d\n", r,
	       WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
	return 0;
}
