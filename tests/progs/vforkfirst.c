/*
 * vforkfirst - a vfork child writes to a socket its parent inherited and
 * had not used yet (the parent's first look at that fd is the child's
 * call).
 *
 *   vforkfirst PORT fork|exec same|replaced
 *
 * A connects to 127.0.0.1:PORT and writes 9 bytes.  Then B, which holds
 * the socket without having used it:
 *   fork: B is A's fork child;
 *   exec: B is A itself after an exec of this program (the socket
 *         inherited across the exec, its number in argv).
 * B vforks C.  C writes 5 bytes on the socket's number and execs
 * /bin/true:
 *   same:     on the socket itself;
 *   replaced: after dup2()ing a second socket (connected to the same
 *             PORT) onto that number, so its 5 bytes go there; the
 *             parent's socket gets none from C.
 * B waits for C, then writes 7 bytes on the socket itself and exits 0;
 * A (fork) waits for B.  Prints one line, "pid_b=P sent_first=N" where N
 * is what went on the first socket in all (9 + 5 + 7, or 9 + 7), and
 * exits 0 when every call moved all its bytes.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

static int dial(int port)
{
	struct sockaddr_in a;
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_port = htons((unsigned short)port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
		perror("vforkfirst: connect");
		exit(2);
	}
	return fd;
}

static void put(int fd, const char *s, size_t n)
{
	if (write(fd, s, n) != (ssize_t)n) {
		perror("vforkfirst: write");
		exit(2);
	}
}

/* B: fd is the socket, not used here yet. */
static int as_b(int port, int fd, int replaced)
{
	int other = replaced ? dial(port) : -1;
	int status;
	pid_t c;

	c = vfork();
	if (c < 0) {
		perror("vforkfirst: vfork");
		return 2;
	}
	if (c == 0) {
		char *av[] = {"/bin/true", NULL};

		if (replaced && dup2(other, fd) != fd)
			_exit(3);
		if (write(fd, "ccccc", 5) != 5)
			_exit(4);
		execv(av[0], av);
		_exit(127);
	}
	if (waitpid(c, &status, 0) != c || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0) {
		fprintf(stderr, "vforkfirst: the vfork child failed\n");
		return 2;
	}
	put(fd, "bbbbbbb", 7);
	printf("pid_b=%ld sent_first=%d\n", (long)getpid(),
	       9 + (replaced ? 0 : 5) + 7);
	fflush(stdout);
	if (other >= 0)
		close(other);
	return 0;
}

int main(int argc, char **argv)
{
	int port, replaced, fd, status;
	pid_t b;

	if (argc == 5 && strcmp(argv[2], "b") == 0) /* B after the exec */
		return as_b(atoi(argv[1]), atoi(argv[4]),
			    strcmp(argv[3], "replaced") == 0);
	if (argc != 4) {
		fprintf(stderr, "usage: vforkfirst PORT fork|exec same|replaced\n");
		return 2;
	}
	port = atoi(argv[1]);
	replaced = strcmp(argv[3], "replaced") == 0;
	fd = dial(port);
	put(fd, "aaaaaaaaa", 9);
	if (strcmp(argv[2], "exec") == 0) {
		char num[16];
		char *av[] = {argv[0], argv[1], "b", argv[3], num, NULL};

		snprintf(num, sizeof(num), "%d", fd);
		execv("/proc/self/exe", av);
		perror("vforkfirst: exec");
		return 2;
	}
	b = fork();
	if (b < 0) {
		perror("vforkfirst: fork");
		return 2;
	}
	if (b == 0) {
		fflush(stdout);
		_exit(as_b(port, fd, replaced));
	}
	if (waitpid(b, &status, 0) != b || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0)
		return 2;
	return 0;
}
