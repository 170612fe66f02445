/*
 * stdio_flushing - the stdio calls that flush a FILE's output on the way,
 * on a socket: fseek, fseeko, fsetpos, rewind (the seek then fails with
 * ESPIPE; the bytes were sent), setvbuf, setbuf, setbuffer (before the
 * buffer is replaced) and fcloseall.
 *
 *   stdio_flushing
 *
 * On fdopen(sv[0], "w"), fully buffered: each step puts N bytes in the
 * buffer (no write yet: the peer sv[1] has nothing), makes the call, and
 * reads what reached the peer.  Prints each step's return value, errno and
 * the bytes the peer got ("NAME r=R errno=E got=N"), then "fd=N" and
 * "out=N" (everything the peer received, the truth for the log).
 *
 *   stdio_flushing held
 *
 * A thread blocks in fgets on stdin (holding its lock) while the main
 * thread calls fcloseall, then _exit(0): glibc's fcloseall takes no lock,
 * so this ends at once (a wrapper that waited for the lock hung here).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int peer;
static long total;
static char line[16][96];
static int lines;

/* What reached the peer since the last look (nothing blocks: the bytes
 * are there once the call returned, or never). */
static long got(void)
{
	char buf[8192];
	long n = 0;
	ssize_t r;

	while ((r = recv(peer, buf, sizeof(buf), MSG_DONTWAIT)) > 0)
		n += r;
	total += n;
	return n;
}

static void put(FILE *fp, size_t n)
{
	static char fill[1000];

	memset(fill, 'f', sizeof(fill));
	fwrite(fill, 1, n, fp);
	if (got() != 0)
		snprintf(line[lines++], sizeof(line[0]),
			 "put %zu: written at once", n);
	errno = 0;
}

static void step(const char *what, long r)
{
	int e = errno;

	snprintf(line[lines++], sizeof(line[0]), "%s r=%ld errno=%d got=%ld",
		 what, r, e, got());
	errno = 0;
}

static void *reader(void *arg)
{
	char buf[64];

	(void)arg;
	fgets(buf, sizeof(buf), stdin);
	return NULL;
}

static int held(void)
{
	pthread_t t;

	if (pthread_create(&t, NULL, reader, NULL) != 0)
		return 2;
	sleep(1);
	fcloseall();
	_exit(0);
}

int main(int argc, char **argv)
{
	static char b1[4096], b2[4096], b3[4096];
	int sv[2], i;
	fpos_t pos;
	FILE *fp;

	if (argc > 1 && strcmp(argv[1], "held") == 0)
		return held();
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0 ||
	    !(fp = fdopen(sv[0], "w")))
		return 2;
	peer = sv[1];
	memset(&pos, 0, sizeof(pos));
	setvbuf(fp, b1, _IOFBF, sizeof(b1));
	errno = 0;
	put(fp, 100);
	step("fseek", fseek(fp, 0, SEEK_CUR));
	put(fp, 200);
	step("fseeko", fseeko(fp, 0, SEEK_SET));
	put(fp, 300);
	step("fsetpos", fsetpos(fp, &pos));
	put(fp, 400);
	rewind(fp);
	step("rewind", 0);
	put(fp, 500);
	step("setvbuf _IONBF", setvbuf(fp, NULL, _IONBF, 0));
	put(fp, 60); /* unbuffered now: written at once */
	step("setvbuf _IOFBF", setvbuf(fp, b2, _IOFBF, sizeof(b2)));
	put(fp, 700);
	setbuf(fp, NULL);
	step("setbuf", 0);
	setbuffer(fp, b3, sizeof(b3));
	put(fp, 800);
	setbuffer(fp, b1, sizeof(b1));
	step("setbuffer", 0);
	put(fp, 900);
	step("fcloseall", fcloseall());
	/* stdout too is flushed and unbuffered now: plain writes. */
	for (i = 0; i < lines; i++)
		dprintf(1, "%s\n", line[i]);
	dprintf(1, "fd=%d\nout=%ld\n", sv[0], total);
	return 0;
}
