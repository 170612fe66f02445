/*
 * highfd - sockets on very high fd numbers.
 *
 *   highfd [raise LIMIT] FD...
 *
 * With "raise LIMIT", first raises RLIMIT_NOFILE (soft and hard) to LIMIT
 * from inside the program, i.e. after the preload sized its table.  Then,
 * for each FD: makes a unix socketpair, dup2()s its ends onto FD and FD+1
 * (closing the originals), sends pair_bytes(FD) from FD to FD+1 in 1000-byte
 * send() calls, reads them with recv(), also makes fcntl(FD, F_DUPFD, FD+2)
 * and sends 10 bytes through that, then closes all three.  Prints
 * "pair fd=FD peer=FD+1 dupfd=D bytes=N" per FD and exits 0 when every byte
 * arrived; 2 when an fd could not be had (the limit is too low).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

static long pair_bytes(int fd)
{
	return 10000 + fd % 1000;
}

static int move(int from, int to, long n)
{
	char buf[1000];
	long sent = 0, got = 0;

	memset(buf, 'h', sizeof(buf));
	while (sent < n) {
		ssize_t w = send(from, buf, (size_t)(n - sent < 1000 ? n - sent : 1000), 0);

		if (w <= 0)
			return -1;
		sent += w;
		while (got < sent) {
			ssize_t r = recv(to, buf, sizeof(buf), 0);

			if (r <= 0)
				return -1;
			got += r;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	int i = 1, bad = 0;

	if (argc > 2 && strcmp(argv[1], "raise") == 0) {
		struct rlimit rl;

		rl.rlim_cur = rl.rlim_max = (rlim_t)atol(argv[2]);
		if (setrlimit(RLIMIT_NOFILE, &rl)) {
			perror("setrlimit");
			return 2;
		}
		i = 3;
	}
	for (; i < argc; i++) {
		int fd = atoi(argv[i]), sp[2], d;

		if (socketpair(AF_UNIX, SOCK_STREAM, 0, sp))
			return 2;
		if (dup2(sp[0], fd) != fd || dup2(sp[1], fd + 1) != fd + 1) {
			fprintf(stderr, "dup2 to %d: %s\n", fd, strerror(errno));
			return 2;
		}
		close(sp[0]);
		close(sp[1]);
		d = fcntl(fd, F_DUPFD, fd + 2);
		if (d < 0) {
			perror("F_DUPFD");
			return 2;
		}
		if (move(fd, fd + 1, pair_bytes(fd)) || move(d, fd + 1, 10))
			bad = 1;
		printf("pair fd=%d peer=%d dupfd=%d bytes=%ld\n", fd, fd + 1, d,
		       pair_bytes(fd));
		close(fd);
		close(fd + 1);
		close(d);
	}
	return bad;
}
