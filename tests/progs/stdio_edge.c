/*
 * stdio_edge - stdio's corner cases on a socket, for the transparency
 * test: every return value, errno and stream flag is printed, so a run with
 * the preload can be compared with one without, line by line.
 *
 *   stdio_edge
 *
 * On fdopen(sv[0], "r+"), with the peer sv[1] driven by plain calls:
 * fgets with n = 1, ungetc then fgetc, getline, fscanf, fread of 4-byte
 * items over 10 bytes at end of file (2 items, 10 bytes consumed), fgetc
 * and getline at end of file; then, the peer gone and SIGPIPE ignored,
 * fputs into the buffer, fprintf larger than the buffer (EPIPE), fflush,
 * fwrite.  Prints "fd=N" and "in=N" (the bytes the peer sent) last.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static void show(const char *what, long r, FILE *fp)
{
	printf("%s r=%ld errno=%d eof=%d err=%d\n", what, r, errno, feof(fp),
	       ferror(fp));
	errno = 0;
}

int main(void)
{
	static const char data[] = "hello\nworld 42 7\n0123456789";
	static char big[5000];
	char buf[64], *lp = NULL;
	size_t cap = 0;
	int sv[2], x = 0, y = 0;
	FILE *fp;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		return 2;
	fp = fdopen(sv[0], "r+");
	if (!fp)
		return 2;
	if (write(sv[1], data, sizeof(data) - 1) != sizeof(data) - 1)
		return 2;
	shutdown(sv[1], SHUT_WR);
	errno = 0;
	show("fgets n=1", fgets(buf, 1, fp) ? (long)strlen(buf) : -1, fp);
	show("ungetc", ungetc('X', fp), fp);
	show("fgetc", fgetc(fp), fp);
	show("getline", (long)getline(&lp, &cap, fp), fp);
	show("fscanf", fscanf(fp, "%63s %d %d ", buf, &x, &y), fp);
	printf("scanned %s %d %d\n", buf, x, y);
	show("fread 4x3", (long)fread(buf, 4, 3, fp), fp);
	show("fgetc at eof", fgetc(fp), fp);
	show("getline at eof", (long)getline(&lp, &cap, fp), fp);
	clearerr(fp);

	signal(SIGPIPE, SIG_IGN);
	close(sv[1]);
	memset(big, 'b', sizeof(big) - 1);
	show("fputs", fputs("short\n", fp), fp);
	show("fprintf big", fprintf(fp, "%s", big), fp);
	show("fflush", fflush(fp), fp);
	show("fwrite", (long)fwrite(big, 1, 100, fp), fp);
	show("fflush again", fflush(fp), fp);
	printf("fd=%d\nin=%zu\n", sv[0], sizeof(data) - 1);
	free(lp);
	return 0;
}
