/*
 * fcloseflush - output a FILE still buffers when fclose() (or freopen())
 * closes it is flushed by glibc inside the call: it must be counted for
 * the connection, which then ends with a seen close.
 *
 *   fcloseflush      prints fclose_read=N freopen_read=M (bytes the other
 *                    end received: 1000 and 700)
 */
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

static long drain(int fd)
{
	char b[4096];
	long total = 0;
	ssize_t n;

	while ((n = read(fd, b, sizeof(b))) > 0)
		total += n;
	return total;
}

int main(void)
{
	int a[2], b[2], i;
	FILE *f;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, a) != 0 ||
	    socketpair(AF_UNIX, SOCK_STREAM, 0, b) != 0)
		return 1;
	f = fdopen(a[0], "w");
	for (i = 0; i < 100; i++)
		fprintf(f, "0123456789"); /* 1000 bytes, still buffered */
	if (!f || fclose(f) != 0)
		return 1;
	printf("fclose_read=%ld\n", drain(a[1]));
	f = fdopen(b[0], "w");
	for (i = 0; i < 70; i++)
		fputs("abcdefghij", f); /* 700 bytes */
	if (!f || !(f = freopen("/dev/null", "w", f)))
		return 1;
	fclose(f);
	printf("freopen_read=%ld\n", drain(b[1]));
	return 0;
}
