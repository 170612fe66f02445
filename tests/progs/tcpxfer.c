/*
 * tcpxfer - one TCP transfer on 127.0.0.1 with chosen buffer sizes and a
 * chosen reading pace, for the tcp_info tests.
 *
 *   tcpxfer serve PORTFILE BYTES RCVBUF DELAY_US
 *       listen on 127.0.0.1 (a free port, written to PORTFILE), accept one
 *       connection, read BYTES in reads of at most 4096 bytes with DELAY_US
 *       microseconds of sleep between reads (RCVBUF > 0: SO_RCVBUF before
 *       listen), then read to end of stream and close.  Prints "in=N".
 *   tcpxfer send PORT BYTES SNDBUF HOLDFILE
 *       connect, write BYTES (SNDBUF > 0: SO_SNDBUF first), wait until the
 *       kernel has them all acked, print "lport=N" and "ready=1", then wait
 *       (at most 20 s) until HOLDFILE exists, and close.  Prints "out=N".
 *
 * The sending side is the one the tests read: it connects, so every byte
 * it wrote is in its close record, and while it waits idle its tcp_info no
 * longer changes, so `ss -ti` and the record can be compared.
 */
#include <arpa/inet.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static void nap_ms(int ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

static int serve(const char *portfile, long long bytes, int rcvbuf,
		 int delay_us)
{
	struct sockaddr_in a;
	socklen_t len = sizeof(a);
	long long got = 0;
	char buf[4096];
	FILE *f;
	int l, c;

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	l = socket(AF_INET, SOCK_STREAM, 0);
	if (rcvbuf > 0)
		setsockopt(l, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	if (bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 1) ||
	    getsockname(l, (struct sockaddr *)&a, &len)) {
		perror("tcpxfer: listen");
		return 2;
	}
	f = fopen(portfile, "w");
	if (!f)
		return 2;
	fprintf(f, "%d\n", ntohs(a.sin_port));
	fclose(f);
	c = accept(l, NULL, NULL);
	if (c < 0)
		return 2;
	for (;;) {
		size_t want = sizeof(buf);
		ssize_t r;

		if (got < bytes && bytes - got < (long long)want)
			want = (size_t)(bytes - got);
		r = read(c, buf, want);
		if (r <= 0)
			break;
		got += r;
		if (got < bytes && delay_us)
			usleep((useconds_t)delay_us);
	}
	printf("in=%lld\n", got);
	close(c);
	close(l);
	return got == bytes ? 0 : 1;
}

static int send_side(int port, long long bytes, int sndbuf,
		     const char *holdfile)
{
	struct sockaddr_in a;
	socklen_t len = sizeof(a);
	long long sent = 0;
	static char buf[65536];
	int c, q, i;

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a.sin_port = htons((uint16_t)port);
	c = socket(AF_INET, SOCK_STREAM, 0);
	if (sndbuf > 0)
		setsockopt(c, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
	if (connect(c, (struct sockaddr *)&a, sizeof(a))) {
		perror("tcpxfer: connect");
		return 2;
	}
	while (sent < bytes) {
		size_t n = bytes - sent < (long long)sizeof(buf)
			       ? (size_t)(bytes - sent)
			       : sizeof(buf);
		ssize_t w = write(c, buf, n);

		if (w <= 0)
			return 1;
		sent += w;
	}
	for (i = 0; i < 20000 && ioctl(c, SIOCOUTQ, &q) == 0 && q > 0; i++)
		nap_ms(1);
	getsockname(c, (struct sockaddr *)&a, &len);
	printf("lport=%d\nready=1\n", ntohs(a.sin_port));
	fflush(stdout);
	for (i = 0; i < 20000 && access(holdfile, F_OK) != 0; i++)
		nap_ms(1);
	printf("out=%lld\n", sent);
	close(c);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 6 && strcmp(argv[1], "serve") == 0)
		return serve(argv[2], atoll(argv[3]), atoi(argv[4]),
			     atoi(argv[5]));
	if (argc == 6 && strcmp(argv[1], "send") == 0)
		return send_side(atoi(argv[2]), atoll(argv[3]), atoi(argv[4]),
				 argv[5]);
	fprintf(stderr, "usage: tcpxfer serve PORTFILE BYTES RCVBUF DELAY_US\n"
			"       tcpxfer send PORT BYTES SNDBUF HOLDFILE\n");
	return 2;
}
