/*
 * reuse - a TCP connection whose close the preload does not see, and a new
 * object that gets its fd number: the new bytes must not be credited to
 * the old connection.
 *
 *   reuse MODE FILE ROUNDS [LOG MARKER]
 *
 * A forked server sends round k (0-based) 1000205 + k bytes on its own
 * connection.  Each round the client reads them all with read(), ends the
 * connection and puts a new object at the same number, reads all of it
 * with read() and close()s it:
 *   fclose  fdopen + fclose (glibc closes inside), then open(FILE)
 *   raw     close by a raw system call (inline, not libc's syscall(),
 *           which the library wraps), then open(FILE)
 *   fopen   close by a raw system call, then fopen(FILE)
 *   scm     a pipe's read end (filled with 60000 bytes) is sent over a
 *           unix socketpair; close by a raw system call; then the pipe
 *           arrives by SCM_RIGHTS and takes the number
 *   net     close by a raw system call, open FILE by a raw system call too
 *           (nothing of ours sees either), then wait until the ticker's
 *           check retired the connection: LOG holds MARKER k times after
 *           round k (or once, when MARKER uses %k: rounds so far; %p is
 *           our pid) - and read
 * Prints rounds=, same= (rounds whose new object got the old number),
 * tcp_in= (TCP bytes read), other_in= (bytes read from the new objects),
 * pid=.  Exits 1 on a set-up failure.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../core/rawsys.h"

#define BASE 1000205L

static char buf[1 << 16];

/* A system call no preload can see: not even libc's syscall(), which the
 * library wraps (inline, core/rawsys.h). */
static long raw3(long nr, long a, long b, long c)
{
	return raw_syscall6(nr, a, b, c, 0, 0, 0);
}

static void raw_close(int fd)
{
	raw3(SYS_close, fd, 0, 0);
}

static int raw_open(const char *path)
{
	long r = raw3(SYS_openat, AT_FDCWD, (long)path, O_RDONLY);

	return r < 0 ? -1 : (int)r;
}

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static long round_bytes(int k)
{
	return BASE + k;
}

static void serve(int lfd, int rounds)
{
	int k;

	for (k = 0; k < rounds; k++) {
		int c = accept(lfd, NULL, NULL);
		long left = round_bytes(k);

		if (c < 0)
			_exit(1);
		memset(buf, 'x', sizeof(buf));
		while (left > 0) {
			ssize_t n = write(c, buf, left < (long)sizeof(buf)
							  ? (size_t)left
							  : sizeof(buf));
			if (n <= 0)
				_exit(1);
			left -= n;
		}
		close(c);
	}
	_exit(0);
}

static long drain(int fd)
{
	long total = 0;
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf))) > 0)
		total += n;
	return total;
}

/* A pipe's read end holding 60000 bytes goes out over u[0] (and our
 * copies of its ends are closed): made before the TCP close, so the pipe
 * does not take the TCP's number. */
static void send_pipe(const int u[2])
{
	char cbuf[CMSG_SPACE(sizeof(int))], one = 'f';
	struct iovec iov = { &one, 1 };
	struct msghdr m;
	struct cmsghdr *c;
	int p[2];

	if (pipe(p) != 0)
		die("pipe");
	memset(buf, 'p', 60000);
	if (write(p[1], buf, 60000) != 60000)
		die("pipe write");
	memset(&m, 0, sizeof(m));
	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	m.msg_control = cbuf;
	m.msg_controllen = sizeof(cbuf);
	c = CMSG_FIRSTHDR(&m);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &p[0], sizeof(int));
	if (sendmsg(u[0], &m, 0) != 1)
		die("sendmsg");
	close(p[0]);
	close(p[1]);
}

/* The pipe's read end, received on u[1]: returns the number it got. */
static int recv_pipe(const int u[2])
{
	char cbuf[CMSG_SPACE(sizeof(int))], one;
	struct iovec iov = { &one, 1 };
	struct msghdr m;
	struct cmsghdr *c;
	int fd;

	memset(&m, 0, sizeof(m));
	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	m.msg_control = cbuf;
	m.msg_controllen = sizeof(cbuf);
	if (recvmsg(u[1], &m, 0) != 1)
		die("recvmsg");
	c = CMSG_FIRSTHDR(&m);
	if (!c || c->cmsg_type != SCM_RIGHTS)
		die("no SCM_RIGHTS");
	memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

/* t with %k (k) and %p (our pid) filled in. */
static void fill(char *out, size_t cap, const char *t, int k)
{
	size_t w = 0;

	for (; *t && w < cap - 32; t++) {
		if (t[0] == '%' && t[1] == 'k')
			w += (size_t)sprintf(out + w, "%d", k), t++;
		else if (t[0] == '%' && t[1] == 'p')
			w += (size_t)sprintf(out + w, "%d", (int)getpid()), t++;
		else
			out[w++] = *t;
	}
	out[w] = '\0';
}

/* Does LOG hold MARKER k times, or once when it uses %k? */
static int log_has(const char *log_tmpl, const char *marker, int k)
{
	char want[256], log[4096], *text, *at;
	int found = 0, need = strstr(marker, "%k") ? 1 : k;
	FILE *f;
	long len;

	fill(want, sizeof(want), marker, k);
	fill(log, sizeof(log), log_tmpl, k);
	f = fopen(log, "r");
	if (!f)
		return 0;
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	rewind(f);
	text = calloc(1, (size_t)len + 1);
	if (text && fread(text, 1, (size_t)len, f) == (size_t)len)
		for (at = strstr(text, want); at; at = strstr(at + 1, want))
			found++;
	free(text);
	fclose(f);
	return found >= need;
}

static void wait_log(const char *log, const char *marker, int k)
{
	struct timespec ts = { 0, 20 * 1000 * 1000 };
	int i;

	for (i = 0; i < 500; i++) {
		if (log_has(log, marker, k))
			return;
		nanosleep(&ts, NULL);
	}
	fprintf(stderr, "reuse: %s never showed the retirement\n", log);
	exit(1);
}

int main(int argc, char **argv)
{
	const char *mode, *file, *log = NULL, *marker = NULL;
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t alen = sizeof(a);
	long tcp_in = 0, other_in = 0;
	int rounds, k, same = 0, lfd, u[2];
	pid_t server;

	if (argc < 4)
		return 2;
	mode = argv[1];
	file = argv[2];
	rounds = atoi(argv[3]);
	if (argc > 5) {
		log = argv[4];
		marker = argv[5];
	}
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
	    listen(lfd, 16) != 0 ||
	    getsockname(lfd, (struct sockaddr *)&a, &alen) != 0)
		die("listen");
	server = fork();
	if (server < 0)
		die("fork");
	if (server == 0)
		serve(lfd, rounds);
	/* lfd stays open: the only TCP closes are the rounds'. */
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, u) != 0)
		die("socketpair");
	for (k = 0; k < rounds; k++) {
		int fd = socket(AF_INET, SOCK_STREAM, 0), nfd;
		long got;
		FILE *fp = NULL;

		if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0)
			die("connect");
		got = drain(fd);
		if (got != round_bytes(k))
			die("short TCP read");
		tcp_in += got;
		if (strcmp(mode, "scm") == 0)
			send_pipe(u);
		if (strcmp(mode, "fclose") == 0) {
			FILE *s = fdopen(fd, "r");

			if (!s || fclose(s) != 0)
				die("fclose");
		} else {
			raw_close(fd);
		}
		if (strcmp(mode, "fopen") == 0) {
			fp = fopen(file, "r");
			nfd = fp ? fileno(fp) : -1;
		} else if (strcmp(mode, "scm") == 0) {
			nfd = recv_pipe(u);
		} else if (strcmp(mode, "net") == 0) {
			nfd = raw_open(file);
			if (log)
				wait_log(log, marker, k + 1);
		} else {
			nfd = open(file, O_RDONLY);
		}
		if (nfd < 0)
			die("new object");
		same += nfd == fd;
		other_in += drain(nfd);
		if (fp)
			fclose(fp);
		else
			close(nfd);
	}
	waitpid(server, NULL, 0);
	printf("rounds=%d\nsame=%d\ntcp_in=%ld\nother_in=%ld\npid=%d\n", rounds,
	       same, tcp_in, other_in, (int)getpid());
	return 0;
}
