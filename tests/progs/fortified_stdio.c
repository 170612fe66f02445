/*
 * fortified_stdio - stdio as -D_FORTIFY_SOURCE=2 programs call it:
 * __printf_chk, __fprintf_chk, __vfprintf_chk, __dprintf_chk,
 * __fgets_chk, __fread_chk, on a unix socketpair.
 *
 *   fortified_stdio
 *
 * stdout becomes one end (sv[0], dup'd onto fd 1): 1,000 bytes by printf.
 * On sv[0] itself: 1,000 by fprintf, 1,000 by vfprintf, 1,000 by dprintf.
 * The other end (sv[1]) reads them all with read(), then writes 3,000
 * bytes back, which sv[0]'s FILE reads with fgets (one 1,000-byte line)
 * and fread.  Reports on stderr: "sock=N", "out1=N" and "out=N" (what
 * sv[1] read from fd 1's and sv[0]'s writes), "in=N" (consumed).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static void die(const char *what)
{
	dprintf(2, "fortified_stdio: %s: %s\n", what, strerror(errno));
	exit(2);
}

static int vput(FILE *fp, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vfprintf(fp, fmt, ap);
	va_end(ap);
	return r;
}

static long drain(int fd, long want)
{
	char buf[4096];
	long got = 0;

	while (got < want) {
		ssize_t n = read(fd, buf, sizeof(buf));

		if (n <= 0)
			die("read");
		got += n;
	}
	return got;
}

int main(void)
{
	static char line[1001], back[3000], buf[2000];
	volatile int linecap = sizeof(buf);
	volatile size_t chunk = 1000;
	long out1, out, in = 0;
	int sv[2];
	FILE *fp;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) || dup2(sv[0], 1) != 1)
		die("socketpair");
	memset(line, 'f', 999);
	line[999] = '\n';
	if (printf("%s", line) != 1000 || fflush(stdout))
		die("printf");
	out1 = drain(sv[1], 1000);
	fp = fdopen(sv[0], "r+");
	if (!fp || fprintf(fp, "%s", line) != 1000 ||
	    vput(fp, "%s", line) != 1000 || fflush(fp))
		die("fprintf");
	if (dprintf(sv[0], "%s", line) != 1000)
		die("dprintf");
	out = drain(sv[1], 3000);
	memset(back, 'b', sizeof(back));
	back[999] = '\n';
	if (write(sv[1], back, sizeof(back)) != (ssize_t)sizeof(back))
		die("write");
	if (!fgets(buf, linecap, fp))
		die("fgets");
	in += (long)strlen(buf);
	in += (long)fread(buf, 1, chunk, fp);
	in += (long)fread(buf, 1, chunk, fp);
	dprintf(2, "sock=%d\nout1=%ld\nout=%ld\nin=%ld\n", sv[0], out1, out,
		in);
	return 0;
}
