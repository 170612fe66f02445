/*
 * xfsz - socket traffic, then a file write past RLIMIT_FSIZE.
 *
 *   xfsz BYTES SLEEP_MS FILE FILE_BYTES
 *
 * Moves BYTES through a unix socketpair (so the preload has records to
 * write), sleeps SLEEP_MS (the ticker tries to write them meanwhile), prints
 * "traffic done" and then writes FILE_BYTES into FILE.  Run under a file
 * size limit smaller than FILE_BYTES, the default action of SIGXFSZ kills it
 * at that write (status 153 in a shell) - with or without the preload,
 * whose own writes past the limit must neither kill it nor leave SIGXFSZ
 * pending or swallow the program's own.  Prints "file done" if it lives.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	static char buf[65536];
	long bytes, left, fbytes;
	struct timespec ts;
	int sp[2], fd;

	if (argc != 5)
		return 2;
	bytes = atol(argv[1]);
	ts.tv_sec = atol(argv[2]) / 1000;
	ts.tv_nsec = atol(argv[2]) % 1000 * 1000000L;
	fbytes = atol(argv[4]);
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sp))
		return 2;
	for (left = bytes; left > 0;) {
		ssize_t w = write(sp[0], buf, (size_t)(left < 4096 ? left : 4096));

		if (w <= 0 || read(sp[1], buf, (size_t)w) != w)
			return 2;
		left -= w;
	}
	nanosleep(&ts, NULL);
	printf("traffic done\n");
	fflush(stdout);
	fd = open(argv[3], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return 2;
	for (left = fbytes; left > 0;) {
		ssize_t w = write(fd, buf, (size_t)(left < 4096 ? left : 4096));

		if (w <= 0)
			return 3;
		left -= w;
	}
	printf("file done\n");
	return 0;
}
