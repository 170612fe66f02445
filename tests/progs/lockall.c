/*
 * lockall - mlockall(FLAGS), as a small daemon that locks its memory at
 * start does, then 100,000 bytes over a unix socketpair; the process's
 * locked and whole memory after.
 *
 *   lockall FLAGS
 *
 * Prints "r=R errno=E lck=KIB size=KIB moved=N": mlockall's result and
 * errno (0 when it succeeded), VmLck and VmSize from /proc/self/status,
 * the bytes the socketpair moved.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

static long status_kib(const char *key)
{
	char line[256];
	size_t n = strlen(key);
	long v = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, key, n) == 0 && line[n] == ':')
			v = strtol(line + n + 1, NULL, 10);
	fclose(f);
	return v;
}

int main(int argc, char **argv)
{
	static char buf[10000];
	int sv[2], i, r, err;
	long moved = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: lockall FLAGS\n");
		return 2;
	}
	r = mlockall(atoi(argv[1]));
	err = r == 0 ? 0 : errno;
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
		return 1;
	memset(buf, 'l', sizeof(buf));
	for (i = 0; i < 10; i++) {
		ssize_t w = write(sv[0], buf, sizeof(buf));
		ssize_t got = 0;

		while (w > 0 && got < w) {
			ssize_t n = read(sv[1], buf, sizeof(buf));

			if (n <= 0)
				return 1;
			got += n;
		}
		moved += got;
	}
	close(sv[0]);
	close(sv[1]);
	printf("r=%d errno=%d lck=%ld size=%ld moved=%ld\n", r, err,
	       status_kib("VmLck"), status_kib("VmSize"), moved);
	return 0;
}
