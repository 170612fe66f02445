/*
 * closer - closing many tracked fds at once.
 *
 *   closer closefrom|close_range|cloexec
 *
 * Opens PAIRS unix socketpairs, moves pair_bytes(i) bytes through pair i
 * (written on the first end, read on the second), then closes every fd
 * from the lowest one up with closefrom(), close_range(lo, ~0U, 0), or
 * marks them close-on-exec with close_range(lo, ~0U, CLOSE_RANGE_CLOEXEC)
 * (they stay open until exit).  Prints "lo=FD hi=FD" and one line
 * "pair I fds=A,B bytes=N" per pair.  stdout is flushed before closing.
 */
#include <errno.h>
#include <linux/close_range.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define PAIRS 5

static long pair_bytes(int i)
{
	return 1000L * (i + 1) + 17;
}

int main(int argc, char **argv)
{
	int sp[PAIRS][2], i, lo, hi;
	char buf[8192];

	if (argc != 2)
		return 2;
	memset(buf, 'k', sizeof(buf));
	for (i = 0; i < PAIRS; i++) {
		if (socketpair(AF_UNIX, SOCK_STREAM, 0, sp[i]) != 0)
			return 2;
		if (write(sp[i][0], buf, (size_t)pair_bytes(i)) != pair_bytes(i) ||
		    read(sp[i][1], buf, sizeof(buf)) != pair_bytes(i))
			return 2;
	}
	lo = sp[0][0];
	hi = sp[PAIRS - 1][1];
	printf("lo=%d\nhi=%d\n", lo, hi);
	for (i = 0; i < PAIRS; i++)
		printf("pair %d fds=%d,%d bytes=%ld\n", i, sp[i][0], sp[i][1],
		       pair_bytes(i));
	fflush(stdout);
	if (strcmp(argv[1], "closefrom") == 0) {
		closefrom(lo);
	} else if (strcmp(argv[1], "close_range") == 0) {
		if (close_range((unsigned)lo, ~0U, 0) != 0) {
			perror("close_range");
			return 3;
		}
	} else if (strcmp(argv[1], "cloexec") == 0) {
		if (close_range((unsigned)lo, ~0U, CLOSE_RANGE_CLOEXEC) != 0) {
			perror("close_range");
			return 3;
		}
	} else {
		return 2;
	}
	/* Every fd from lo up is closed now (or still open with cloexec). */
	errno = 0;
	if (strcmp(argv[1], "cloexec") != 0 &&
	    (write(lo, buf, 1) != -1 || errno != EBADF))
		return 4;
	return 0;
}
