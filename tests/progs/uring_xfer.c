/*
 * uring_xfer - a TCP loopback transfer that a preload cannot see: the bytes
 * go through io_uring (io_uring_prep_send / io_uring_prep_recv), only the
 * connection's set-up and close are libc calls.
 *
 *   uring_xfer OUT BACK [PLAIN [HOLD]]
 *
 * Connects to itself on 127.0.0.1, sends OUT bytes from the connecting side
 * to the accepting side with io_uring, then BACK bytes the other way; with
 * PLAIN, also PLAIN bytes each way through plain send()/recv() (which a
 * preload does see).  Both sides then shut down their writing half, read
 * the peer's end of stream with io_uring, and close.  Prints
 * "client=FD" and "server=FD" lines; exits 0 when every byte arrived.
 * With HOLD, prints "closed" once both are closed and sleeps HOLD seconds
 * before it exits (time for a test to kill it).
 */
#include <arpa/inet.h>
#include <liburing.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static struct io_uring ring;

/* One io_uring send or recv of up to n bytes; returns its result. */
static int uring_io(int fd, char *buf, size_t n, int send)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
	struct io_uring_cqe *cqe;
	int r;

	if (send)
		io_uring_prep_send(sqe, fd, buf, n, 0);
	else
		io_uring_prep_recv(sqe, fd, buf, n, 0);
	if (io_uring_submit(&ring) != 1 || io_uring_wait_cqe(&ring, &cqe) != 0)
		return -1;
	r = cqe->res;
	io_uring_cqe_seen(&ring, cqe);
	return r;
}

/* Move n bytes from a to b: a sends a chunk, b receives it, repeat. */
static int move(int a, int b, long long n, int plain)
{
	static char buf[16384];
	long long sent = 0;

	while (sent < n) {
		size_t chunk = n - sent < (long long)sizeof(buf)
				   ? (size_t)(n - sent)
				   : sizeof(buf);
		int w = plain ? (int)send(a, buf, chunk, 0)
			      : uring_io(a, buf, chunk, 1);
		int got = 0;

		if (w <= 0)
			return -1;
		while (got < w) {
			int r = plain ? (int)recv(b, buf, (size_t)(w - got), 0)
				      : uring_io(b, buf, (size_t)(w - got), 0);

			if (r <= 0)
				return -1;
			got += r;
		}
		sent += w;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct sockaddr_in a;
	socklen_t len = sizeof(a);
	long long out, back, plain = 0;
	char b;
	int l, c, s;

	if (argc < 3) {
		fprintf(stderr, "usage: uring_xfer OUT BACK [PLAIN [HOLD]]\n");
		return 2;
	}
	out = atoll(argv[1]);
	back = atoll(argv[2]);
	if (argc > 3)
		plain = atoll(argv[3]);
	if (io_uring_queue_init(8, &ring, 0) != 0) {
		fprintf(stderr, "uring_xfer: io_uring unavailable\n");
		return 77;
	}
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	l = socket(AF_INET, SOCK_STREAM, 0);
	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) != 0 ||
	    listen(l, 1) != 0 || getsockname(l, (struct sockaddr *)&a, &len)) {
		perror("uring_xfer: listen");
		return 2;
	}
	c = socket(AF_INET, SOCK_STREAM, 0);
	if (c < 0 || connect(c, (struct sockaddr *)&a, sizeof(a)) != 0 ||
	    (s = accept(l, NULL, NULL)) < 0) {
		perror("uring_xfer: connect");
		return 2;
	}
	close(l);
	if (move(c, s, out, 0) || move(s, c, back, 0) || move(c, s, plain, 1) ||
	    move(s, c, plain, 1)) {
		fprintf(stderr, "uring_xfer: transfer failed\n");
		return 1;
	}
	/* Ends of stream both ways, read with io_uring too. */
	shutdown(c, SHUT_WR);
	if (uring_io(s, &b, 1, 0) != 0)
		return 1;
	shutdown(s, SHUT_WR);
	if (uring_io(c, &b, 1, 0) != 0)
		return 1;
	printf("client=%d\nserver=%d\n", c, s);
	fflush(stdout);
	close(c);
	close(s);
	io_uring_queue_exit(&ring);
	if (argc > 4) {
		printf("closed\n");
		fflush(stdout);
		sleep((unsigned)atoi(argv[4]));
	}
	return 0;
}
