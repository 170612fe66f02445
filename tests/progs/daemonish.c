/*
 * daemonish - a daemon-style program: closes every fd it has at start
 * (0, 1 and 2 included), then opens sockets, which take the lowest numbers.
 *
 *   daemonish loop|close_range|closefrom RESULT_FILE
 *
 * Closes all fds with close() on each number up to the soft limit (loop),
 * close_range(0, ~0U, 0) or closefrom(0), then counts the fds left open
 * in /proc/self/fd (the library must hold none between its writes).  Then:
 * a unix socketpair (fds 0 and 1) moves 3333 bytes from 0 to 1; a TCP
 * listener (2) on 127.0.0.1, a connection (3) and its accepted end (4)
 * move 4444 bytes from 3 to 4 and 5555 from 4 to 3; it sleeps 300 ms
 * (interval records get written meanwhile), reads again to check that
 * nothing else arrived on any socket, and writes to RESULT_FILE (opened
 * last):
 *   open_after_close=N pair=A,B tcp=L,C,S got=X,Y,Z stray=0
 * Exits 0 when all the bytes arrived and no stray byte did.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static long move(int from, int to, long n)
{
	char buf[1000];
	long sent = 0, got = 0;

	memset(buf, 'd', sizeof(buf));
	while (sent < n) {
		ssize_t w = write(from, buf, (size_t)(n - sent < 1000 ? n - sent : 1000));

		if (w <= 0)
			return -1;
		sent += w;
		while (got < sent) {
			ssize_t r = read(to, buf, sizeof(buf));

			if (r <= 0)
				return -1;
			got += r;
		}
	}
	return got;
}

static int count_open(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1; /* the directory's own fd */
}

static long stray(int fd)
{
	char buf[256];
	ssize_t r = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);

	return r > 0 ? r : 0;
}

int main(int argc, char **argv)
{
	struct sockaddr_in a;
	socklen_t alen = sizeof(a);
	struct timespec ts = {0, 300000000};
	int sp[2], l, c, s, open_after, out;
	long x, y, z, extra;
	char res[256];

	if (argc != 3)
		return 2;
	if (strcmp(argv[1], "loop") == 0) {
		struct rlimit rl;
		int fd;

		getrlimit(RLIMIT_NOFILE, &rl);
		for (fd = 0; fd < (int)rl.rlim_cur; fd++)
			close(fd);
	} else if (strcmp(argv[1], "close_range") == 0) {
		close_range(0, ~0U, 0);
	} else {
		closefrom(0);
	}
	open_after = count_open();
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sp))
		return 3;
	x = move(sp[0], sp[1], 3333);
	l = socket(AF_INET, SOCK_STREAM, 0);
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) ||
	    getsockname(l, (struct sockaddr *)&a, &alen) || listen(l, 1))
		return 4;
	c = socket(AF_INET, SOCK_STREAM, 0);
	if (c < 0 || connect(c, (struct sockaddr *)&a, sizeof(a)))
		return 5;
	s = accept(l, NULL, NULL);
	if (s < 0)
		return 6;
	y = move(c, s, 4444);
	z = move(s, c, 5555);
	nanosleep(&ts, NULL);
	extra = stray(sp[0]) + stray(sp[1]) + stray(c) + stray(s);
	out = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (out < 0)
		return 7;
	snprintf(res, sizeof(res),
		 "open_after_close=%d pair=%d,%d tcp=%d,%d,%d got=%ld,%ld,%ld "
		 "stray=%ld\n",
		 open_after, sp[0], sp[1], l, c, s, x, y, z, extra);
	if (write(out, res, strlen(res)) != (ssize_t)strlen(res))
		return 8;
	close(out);
	return x == 3333 && y == 4444 && z == 5555 && extra == 0 ? 0 : 1;
}
