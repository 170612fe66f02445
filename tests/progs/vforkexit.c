/*
 * vforkexit - a vfork child that ends with exit(), not _exit: glibc then
 * runs the parent's exit handlers in the child (they are the parent's
 * memory), which POSIX leaves undefined but programs do.
 *
 *   vforkexit STATUS
 *
 * Moves 100 bytes through a unix socketpair; the vfork child sends 50 more
 * and calls exit(0); the parent waits for it, reads those 50, moves 10
 * more and calls exit(STATUS).  Prints "sent=160".
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

static void move(int from, int to, size_t n)
{
	char buf[128] = { 0 };
	size_t got = 0;

	if (write(from, buf, n) != (ssize_t)n)
		_exit(2);
	while (got < n) {
		ssize_t r = read(to, buf, n - got);

		if (r <= 0)
			_exit(2);
		got += (size_t)r;
	}
}

int main(int argc, char **argv)
{
	int sv[2];
	pid_t p;

	if (argc != 2 || socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
		return 2;
	move(sv[0], sv[1], 100);
	p = vfork();
	if (p == 0) {
		if (write(sv[0], "01234567890123456789012345678901234567890123456789",
			  50) != 50)
			_exit(2);
		exit(0);
	}
	if (p < 0 || waitpid(p, NULL, 0) != p)
		return 2;
	{
		char buf[50];
		size_t got = 0;

		while (got < 50) {
			ssize_t r = read(sv[1], buf, 50 - got);

			if (r <= 0)
				return 2;
			got += (size_t)r;
		}
	}
	move(sv[0], sv[1], 10);
	printf("sent=160\n");
	fflush(stdout);
	exit(atoi(argv[1]));
}
