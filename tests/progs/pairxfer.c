/*
 * pairxfer - move a known number of bytes through a unix socketpair and
 * exit with a chosen status.
 *
 *   pairxfer BYTES [STATUS]
 *
 * Writes BYTES (in 4096-byte chunks) into one end and reads them back from
 * the other, closes both ends, prints "out=N in=N fds=A,B" on stdout and
 * exits with STATUS (default 0).  Used where a test needs a small metered
 * program whose output and exit status are known exactly.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long long want, out = 0, in = 0;
	char buf[4096];
	int sp[2];

	if (argc < 2) {
		fprintf(stderr, "usage: pairxfer BYTES [STATUS]\n");
		return 2;
	}
	want = atoll(argv[1]);
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sp) != 0) {
		perror("socketpair");
		return 2;
	}
	memset(buf, 'x', sizeof(buf));
	while (out < want) {
		size_t n = (size_t)(want - out < (long long)sizeof(buf)
					    ? want - out
					    : (long long)sizeof(buf));
		ssize_t w = write(sp[0], buf, n), r;

		if (w < 0) {
			perror("write");
			return 2;
		}
		out += w;
		while (in < out) {
			r = read(sp[1], buf, sizeof(buf));
			if (r <= 0) {
				perror("read");
				return 2;
			}
			in += r;
		}
	}
	printf("out=%lld in=%lld fds=%d,%d\n", out, in, sp[0], sp[1]);
	close(sp[0]);
	close(sp[1]);
	return argc > 2 ? atoi(argv[2]) : 0;
}
