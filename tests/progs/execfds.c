/*
 * execfds - the fds an exec'd program inherits.
 *
 *   execfds run      make sockets, move bytes, let the preload's ticker
 *                    write a few records (300 ms at the test's 0.1 s
 *                    interval), then exec "execfds list"
 *   execfds list     print each open fd from 3 up as "fd=N TYPE", TYPE
 *                    being socket, pipe, or the path it names, sorted by
 *                    fd
 *
 * "run" makes a unix socketpair and a TCP listener, both without
 * close-on-exec (inherited, as the program wants), and a socketpair with
 * SOCK_CLOEXEC (not inherited).  The list must be the same with and
 * without the preload: the library leaves nothing open across exec.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static int list(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int fds[1024], n = 0, i, j, self = d ? dirfd(d) : -1;

	if (!d)
		return 2;
	while ((e = readdir(d)) && n < 1024)
		if (e->d_name[0] != '.' && atoi(e->d_name) != self &&
		    atoi(e->d_name) > 2)
			fds[n++] = atoi(e->d_name);
	closedir(d);
	for (i = 1; i < n; i++)
		for (j = i; j > 0 && fds[j - 1] > fds[j]; j--) {
			int t = fds[j];

			fds[j] = fds[j - 1];
			fds[j - 1] = t;
		}
	for (i = 0; i < n; i++) {
		char path[64], target[512];
		ssize_t len;

		snprintf(path, sizeof(path), "/proc/self/fd/%d", fds[i]);
		len = readlink(path, target, sizeof(target) - 1);
		target[len > 0 ? len : 0] = '\0';
		if (!strncmp(target, "socket:", 7))
			snprintf(target, sizeof(target), "socket");
		else if (!strncmp(target, "pipe:", 5))
			snprintf(target, sizeof(target), "pipe");
		printf("fd=%d %s\n", fds[i], target);
	}
	return 0;
}

int main(int argc, char **argv)
{
	char *args[] = {argv[0], "list", NULL};
	struct timespec ts = {0, 300000000};
	struct sockaddr_in a;
	int sp[2], cx[2], l;
	char buf[100];

	if (argc == 2 && strcmp(argv[1], "list") == 0)
		return list();
	if (argc != 2 || strcmp(argv[1], "run") != 0)
		return 2;
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sp) ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, cx))
		return 2;
	memset(buf, 'e', sizeof(buf));
	if (write(sp[0], buf, sizeof(buf)) != sizeof(buf) ||
	    read(sp[1], buf, sizeof(buf)) != sizeof(buf) ||
	    send(cx[0], buf, 10, 0) != 10 || recv(cx[1], buf, 10, 0) != 10)
		return 2;
	l = socket(AF_INET, SOCK_STREAM, 0);
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 1))
		return 2;
	nanosleep(&ts, NULL);
	fflush(stdout);
	execve("/proc/self/exe", args, environ);
	return 3;
}
