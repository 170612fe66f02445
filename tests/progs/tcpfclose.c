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
#include <stdio.h>
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

int main(void)
{
	socklen_t len = sizeof(addr);
	struct linger lg = { 1, 0 };
	int c, s, port, i, r, e;
	FILE *f;

	signal(SIGPIPE, SIG_IGN);
	addr.sin_family = AF_INET;
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ls = socket(AF_INET, SOCK_STREAM, 0);
	if (ls < 0 || bind(ls, (struct sockaddr *)&addr, sizeof(addr)) != 0 ||
	    listen(ls, 8) != 0 ||
	    getsockname(ls, (struct sockaddr *)&addr, &len) != 0)
		return 1;

	if ((c = pair(&s, &port)) < 0 || !(f = fdopen(c, "w")))
		return 1;
	for (i = 0; i < 100; i++)
		fprintf(f, "narrow %021d\n", i); /* 30 bytes */
	if (fclose(f) != 0)
		return 1;
	printf("narrow port=%d read=%ld\n", port, drain(s));
	close(s);

	if ((c = pair(&s, &port)) < 0 || !(f = fdopen(c, "w")))
		return 1;
	for (i = 0; i < 100; i++)
		fwprintf(f, L"wide %023d\n", i); /* 30 bytes */
	if (fclose(f) != 0)
		return 1;
	printf("wide port=%d read=%ld\n", port, drain(s));
	close(s);

	if ((c = pair(&s, &port)) < 0 || !(f = fdopen(c, "w")))
		return 1;
	for (i = 0; i < 1000; i++)
		fprintf(f, "big %095d\n", i); /* 100 bytes */
	if (fclose(f) != 0)
		return 1;
	printf("big port=%d read=%ld\n", port, drain(s));
	close(s);

	if ((c = pair(&s, &port)) < 0 || !(f = fdopen(c, "w")))
		return 1;
	for (i = 0; i < 100; i++)
		fprintf(f, "freopen %011d\n", i); /* 20 bytes */
	if (!freopen("/dev/null", "w", f))
		return 1;
	printf("freopen port=%d read=%ld\n", port, drain(s));
	fclose(f);
	close(s);

	if ((c = pair(&s, &port)) < 0 || !(f = fdopen(c, "w")))
		return 1;
	for (i = 0; i < 100; i++)
		fprintf(f, "reset %03d\n", i); /* 10 bytes */
	setsockopt(s, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	close(s); /* a reset */
	usleep(100000);
	errno = 0;
	r = fclose(f);
	e = errno;
	printf("reset port=%d fclose=%d errno=%d\n", port, r, e);

	if ((c = pair(&s, &port)) < 0 || !(f = fdopen(c, "w")))
		return 1;
	for (i = 0; i < 100; i++)
		fwprintf(f, L"wreset %02d\n", i); /* 10 bytes */
	setsockopt(s, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	close(s); /* a reset */
	usleep(100000);
	errno = 0;
	r = fclose(f);
	e = errno;
	printf("wreset port=%d fclose=%d errno=%d\n", port, r, e);
	return 0;
}
