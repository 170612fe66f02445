/*
 * smdeep.c - the library tests/progs/deepbind.c loads with RTLD_DEEPBIND
 * (t_deepbind): one TCP exchange through each kind of slot the dynamic
 * linker fills (a PLT call to send, recv's address from the GOT, write's
 * address in a read-only data word), and a function of its own named like
 * one sockmeter wraps (dup), which must stay its own.  Also loaded into a
 * namespace of its own by tests/progs/dlmopener.c (t_dlmopen).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* An absolute word in data: R_X86_64_64 / R_AARCH64_ABS64, no addend. */
static ssize_t (*volatile write_word)(int, const void *, size_t) = write;

/* Its own dup, which deep binding exists to keep: 4242, always. */
int dup(int fd)
{
	(void)fd;
	return 4242;
}

int smdeep_own_dup(void)
{
	return dup(0);
}

/* Connect to 127.0.0.1:port, send n bytes (half with send, half with the
 * data word's write), shut the write side, read to the end; *in gets the
 * bytes read.  The bytes sent, or -1. */
long smdeep_xfer(int port, long n, long *in)
{
	/* recv's address through the GOT (GLOB_DAT), as a callback is. */
	ssize_t (*volatile recv_fn)(int, void *, size_t, int) = recv;
	struct sockaddr_in a;
	char buf[8192];
	long out = 0, got = 0;
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0)
		return -1;
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_port = htons((uint16_t)port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0)
		goto fail;
	memset(buf, 'd', sizeof(buf));
	while (out < n) {
		size_t want = (size_t)(n - out) < sizeof(buf)
				      ? (size_t)(n - out)
				      : sizeof(buf);
		ssize_t r = out < n / 2 ? send(fd, buf, want, 0)
					: write_word(fd, buf, want);
		if (r <= 0)
			goto fail;
		out += r;
	}
	shutdown(fd, SHUT_WR);
	for (;;) {
		ssize_t r = recv_fn(fd, buf, sizeof(buf), 0);
		if (r < 0)
			goto fail;
		if (r == 0)
			break;
		got += r;
	}
	close(fd);
	*in = got;
	return out;
fail:
	close(fd);
	return -1;
}

/* A new pthread key must read NULL on every thread (POSIX): 0 when it
 * does, 1 when this thread already holds a value for it, -1 on error.
 * Loaded by dlmopen, its libc is another copy, whose keys share the
 * threads' slots with the main libc's. */
int smdeep_fresh_key(void)
{
	pthread_key_t k;

	if (pthread_key_create(&k, NULL) != 0)
		return -1;
	return pthread_getspecific(k) != NULL;
}

/* One byte on fd with send: 1, or -1 (deepbind race). */
long smdeep_send1(int fd)
{
	return send(fd, "r", 1, 0);
}
