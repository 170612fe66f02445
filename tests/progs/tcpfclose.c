/*
 * tcpfclose - TCP connections closed by stdio, with output still buffered:
 * the close record must carry the kernel's view, read between the close's
 * flush and its close (wrap_fds.c: tcp_last_word).
 *
 *   tcpfclose      one loopback connection per case; the client writes
 *                  through a FILE and closes with it, the accepted end
 *                  reads everything.  Prints per case
 *                  "CASE port=P read=N" (P the client's local port, N the
 *                  bytes the other end received), and for the case whose
 *                  peer reset the connection first, the close's result:
 *                  "reset port=P fclose=R errno=E" (and wreset).
 * Cases: narrow (fprintf, fclose: 3,000 bytes still buffered), wide
 * (fwprintf, fclose: 3,000 bytes, all of them through libc's internal
 * write), big (fprintf of 100,000 bytes, fclose), freopen (fprintf of
 * 2,000, freopen onto /dev/null), reset (1,000 buffered, the peer closed
 * with a reset), wreset (the same through fwprintf: a wide stream's failed
 * flush keeps its buffer, which must not be written a second time).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <wchar.h>

static int ls;
static struct sockaddr_in addr;

static long drain(int fd)
{
	char b[65536];
	long total = 0;
	ssize_t n;

	while ((n = read(fd, b, sizeof(b))) > 0)
		total += n;
	return total;
}

/* A connected client socket (its port in *port) and the accepted end. */
static int pair(int *srv, int *port)
{
	struct sockaddr_in me;
	socklen_t len = sizeof(me);
	int c = socket(AF_INET, SOCK_STREAM, 0);

	if (c < 0 || connect(c, (struct sockaddr *)&addr, sizeof(addr)) != 0)
		return -1;
	*srv = accept(ls, NULL, NULL);
	getsockname(c, (struct sockaddr *)&me, &len);
	*port = ntohs(me.sin_port);
	return *srv < 0 ? -1 : c;
}

/* A connected client's FILE (its port in *port, the accepted end in *s). */
static FILE *client(int *s, int *port)
{
	int c = pair(s, port);
	FILE *f = c < 0 ? NULL : fdopen(c, "w");

	if (!f)
		exit(1);
	return f;
}

/* lines lines of len bytes each ("TAG 000...i\n"), narrow or wide. */
static void fill(FILE *f, bool wide, const char *tag, int lines, int len)
{
	int width = len - (int)strlen(tag) - 2, i;

	for (i = 0; i < lines; i++)
		if (wide)
			fwprintf(f, L"%s %0*d\n", tag, width, i);
		else
			fprintf(f, "%s %0*d\n", tag, width, i);
}

/* fclose (or freopen onto /dev/null) with the output still buffered;
 * prints what the other end received. */
static void closed(const char *tag, bool wide, bool reopen, int lines, int len)
{
	int s, port;
	FILE *f = client(&s, &port);

	fill(f, wide, tag, lines, len);
	if (reopen ? !freopen("/dev/null", "w", f) : fclose(f) != 0)
		exit(1);
	printf("%s port=%d read=%ld\n", tag, port, drain(s));
	if (reopen)
		fclose(f);
	close(s);
}

/* The same, the peer having reset the connection first: prints the
 * close's result and errno. */
static void reset(const char *tag, bool wide)
{
	struct linger lg = { 1, 0 };
	int s, port, r, e;
	FILE *f = client(&s, &port);

	fill(f, wide, tag, 100, 10);
	setsockopt(s, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	close(s); /* a reset */
	usleep(100000);
	errno = 0;
	r = fclose(f);
	e = errno;
	printf("%s port=%d fclose=%d errno=%d\n", tag, port, r, e);
}

int main(void)
{
	socklen_t len = sizeof(addr);

	signal(SIGPIPE, SIG_IGN);
	addr.sin_family = AF_INET;
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ls = socket(AF_INET, SOCK_STREAM, 0);
	if (ls < 0 || bind(ls, (struct sockaddr *)&addr, sizeof(addr)) != 0 ||
	    listen(ls, 8) != 0 ||
	    getsockname(ls, (struct sockaddr *)&addr, &len) != 0)
		return 1;
	closed("narrow", false, false, 100, 29);
	closed("wide", true, false, 100, 29);
	closed("big", false, false, 1000, 100);
	closed("freopen", false, true, 100, 20);
	reset("reset", false);
	reset("wreset", true);
	return 0;
}
