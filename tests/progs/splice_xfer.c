/*
 * splice_xfer - move bytes with splice, tee and vmsplice.
 *
 *   splice_xfer
 *
 * On a unix socketpair (a, b) and pipes p and q:
 *   1. 100 times: write 1,000 bytes into a, splice them from b into p,
 *      read them from p (b receives 100,000 bytes by splice);
 *   2. 100 times: write 1,000 bytes into p, splice them from p into b,
 *      read them from a (b sends 100,000 bytes by splice);
 *   3. 10 times: vmsplice 1,000 bytes of memory into p, tee them into q
 *      (p keeps them), read q, and vmsplice p's copy back into memory.
 * Prints the fds ("a=", "b=", "p0=", "p1=", "q0=", "q1=") and the bytes
 * each call family moved, from its own return values ("spliced_in=",
 * "spliced_out=", "vmspliced_in=", "vmspliced_out=", "teed=").
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#define CHUNK 1000

static void die(const char *what)
{
	fprintf(stderr, "splice_xfer: %s: %s\n", what, strerror(errno));
	exit(2);
}

/* Move exactly CHUNK bytes with splice; returns CHUNK. */
static long splice_all(int in, int out)
{
	long done = 0;

	while (done < CHUNK) {
		ssize_t n = splice(in, NULL, out, NULL, CHUNK - done, 0);

		if (n <= 0)
			die("splice");
		done += n;
	}
	return done;
}

static void write_all(int fd, const char *buf, size_t n)
{
	while (n) {
		ssize_t w = write(fd, buf, n);

		if (w <= 0)
			die("write");
		buf += w;
		n -= (size_t)w;
	}
}

static void read_all(int fd, char *buf, size_t n)
{
	while (n) {
		ssize_t r = read(fd, buf, n);

		if (r <= 0)
			die("read");
		buf += r;
		n -= (size_t)r;
	}
}

static long vmsplice_all(int fd, char *buf)
{
	struct iovec iov = {buf, CHUNK};
	long done = 0;

	while (iov.iov_len) {
		ssize_t n = vmsplice(fd, &iov, 1, 0);

		if (n <= 0)
			die("vmsplice");
		iov.iov_base = (char *)iov.iov_base + n;
		iov.iov_len -= (size_t)n;
		done += n;
	}
	return done;
}

int main(void)
{
	long sin = 0, sout = 0, vin = 0, vout = 0, teed = 0;
	char buf[CHUNK], back[CHUNK];
	int sv[2], p[2], q[2], i;

	memset(buf, 's', sizeof(buf));
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) || pipe(p) || pipe(q))
		die("socketpair/pipe");
	for (i = 0; i < 100; i++) {
		write_all(sv[0], buf, CHUNK);
		sin += splice_all(sv[1], p[1]);
		read_all(p[0], back, CHUNK);
	}
	for (i = 0; i < 100; i++) {
		write_all(p[1], buf, CHUNK);
		sout += splice_all(p[0], sv[1]);
		read_all(sv[0], back, CHUNK);
	}
	for (i = 0; i < 10; i++) {
		ssize_t t;

		vout += vmsplice_all(p[1], buf);
		t = tee(p[0], q[1], CHUNK, 0);
		if (t != CHUNK)
			die("tee");
		teed += t;
		read_all(q[0], back, CHUNK);
		vin += vmsplice_all(p[0], back);
	}
	printf("a=%d\nb=%d\np0=%d\np1=%d\nq0=%d\nq1=%d\n", sv[0], sv[1], p[0],
	       p[1], q[0], q[1]);
	printf("spliced_in=%ld\nspliced_out=%ld\nvmspliced_in=%ld\n"
	       "vmspliced_out=%ld\nteed=%ld\n",
	       sin, sout, vin, vout, teed);
	return 0;
}
