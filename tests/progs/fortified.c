/*
 * fortified - read(), recv() and recvfrom() in a program built with
 * -O2 -D_FORTIFY_SOURCE=2, so that glibc's headers route them to
 * __read_chk, __recv_chk and __recvfrom_chk (the buffers have a size known
 * at compile time, the lengths asked for do not).
 *
 * Three transfers of known size, each into its own fd:
 *   read      socketpair (stream), READ_BYTES bytes, drained with read()
 *   recv      socketpair (stream), RECV_BYTES bytes, drained with recv()
 *   recvfrom  two UDP sockets on 127.0.0.1, DGRAMS datagrams, recvfrom()
 * Prints "NAME_fd=N" and "NAME_bytes=N" for each receiving fd and the
 * totals sent, then closes everything.  Exits 0 when all arrived.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define READ_BYTES 100003
#define RECV_BYTES 70001
#define DGRAMS 20

/* Not a constant the compiler may see through: keeps the _chk variants. */
static volatile size_t chunk = 4096;

static int fill(int fd, long total)
{
	char buf[8192];
	long done = 0;

	memset(buf, 'f', sizeof(buf));
	while (done < total) {
		long n = total - done < (long)sizeof(buf) ? total - done
							  : (long)sizeof(buf);
		ssize_t w = write(fd, buf, (size_t)n);

		if (w <= 0)
			return -1;
		done += w;
	}
	return 0;
}

static size_t dgram_size(int i)
{
	return 100 + (size_t)i * 97;
}

int main(void)
{
	char buf[4096];
	struct sockaddr_in a, b, from;
	socklen_t len = sizeof(a), flen;
	long got_read = 0, got_recv = 0, got_from = 0, sent_from = 0;
	int p1[2], p2[2], u1, u2, i;
	ssize_t r;

	/* read(): the writer closes its end, the reader drains to EOF.  The
	 * socketpair buffer holds more than READ_BYTES, so one thread does. */
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, p1) != 0 ||
	    socketpair(AF_UNIX, SOCK_STREAM, 0, p2) != 0)
		return 2;
	for (long left = READ_BYTES; left > 0;) {
		long n = left < 20000 ? left : 20000;

		if (fill(p1[0], n) != 0)
			return 2;
		left -= n;
		while (got_read < READ_BYTES - left) {
			r = read(p1[1], buf, chunk);
			if (r <= 0)
				return 2;
			got_read += r;
		}
	}
	for (long left = RECV_BYTES; left > 0;) {
		long n = left < 20000 ? left : 20000;

		if (fill(p2[0], n) != 0)
			return 2;
		left -= n;
		while (got_recv < RECV_BYTES - left) {
			r = recv(p2[1], buf, chunk, 0);
			if (r <= 0)
				return 2;
			got_recv += r;
		}
	}

	/* recvfrom(): datagrams, each received whole. */
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	b = a;
	u1 = socket(AF_INET, SOCK_DGRAM, 0);
	u2 = socket(AF_INET, SOCK_DGRAM, 0);
	if (u1 < 0 || u2 < 0 || bind(u1, (struct sockaddr *)&a, sizeof(a)) ||
	    bind(u2, (struct sockaddr *)&b, sizeof(b)) ||
	    getsockname(u2, (struct sockaddr *)&b, &len))
		return 2;
	for (i = 0; i < DGRAMS; i++) {
		memset(buf, 'u', sizeof(buf));
		if (sendto(u1, buf, dgram_size(i), 0, (struct sockaddr *)&b,
			   sizeof(b)) != (ssize_t)dgram_size(i))
			return 2;
		sent_from += (long)dgram_size(i);
		flen = sizeof(from);
		r = recvfrom(u2, buf, chunk, 0, (struct sockaddr *)&from, &flen);
		if (r != (ssize_t)dgram_size(i))
			return 2;
		got_from += r;
	}

	printf("read_fd=%d\nread_bytes=%ld\n", p1[1], got_read);
	printf("recv_fd=%d\nrecv_bytes=%ld\n", p2[1], got_recv);
	printf("recvfrom_fd=%d\nrecvfrom_bytes=%ld\n", u2, got_from);
	printf("sent_bytes=%ld\n", (long)READ_BYTES + RECV_BYTES + sent_from);
	close(p1[0]);
	close(p1[1]);
	close(p2[0]);
	close(p2[1]);
	close(u1);
	close(u2);
	return got_read != READ_BYTES || got_recv != RECV_BYTES ||
	       got_from != sent_from;
}
