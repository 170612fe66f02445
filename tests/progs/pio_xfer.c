/*
 * pio_xfer - move bytes with the positional calls (pread, pwrite and their
 * vector and v2 forms, __pread_chk), copy_file_range, and through libc's
 * syscall() with the numbers of those calls and of sendfile, splice, tee,
 * vmsplice and fcntl(F_DUPFD_CLOEXEC).
 *
 *   pio_xfer DIR
 *
 * In DIR, file f: written at offsets by pwrite, pwrite64, pwritev,
 * pwritev2, and syscall(SYS_pwrite64, SYS_pwritev, SYS_pwritev2); read back
 * by pread, pread64, __pread_chk, preadv, preadv2 and the same three
 * numbers.  File g: filled from f by copy_file_range and
 * syscall(SYS_copy_file_range).  A unix socketpair (a, b): pwritev2 and
 * preadv2 at offset -1 (readv/writev with flags), a pread that fails with
 * ESPIPE, syscall(SYS_sendfile) from f into a; a dup of a made by
 * syscall(SYS_fcntl, F_DUPFD_CLOEXEC) that sends DUP_BYTES.  Pipes p and q:
 * syscall(SYS_vmsplice) into p, syscall(SYS_tee) from p into q,
 * syscall(SYS_splice) from p into b.
 *
 * Every call's result is checked against what was asked for (exit 2 and a
 * message otherwise); prints the fds and the bytes each fd moved, summed
 * from the calls' own return values: NAME=N lines.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#define DUP_BYTES 50

ssize_t __pread_chk(int fd, void *buf, size_t n, off_t off, size_t len);

static char buf[8192], back[8192];

static void die(const char *what)
{
	fprintf(stderr, "pio_xfer: %s: %s\n", what, strerror(errno));
	exit(2);
}

/* The call's result must be `want` bytes; returns it. */
static long want(const char *what, long r, long n)
{
	if (r != n) {
		if (r >= 0)
			errno = 0;
		fprintf(stderr, "pio_xfer: %s: %ld of %ld bytes: %s\n", what, r,
			n, strerror(errno));
		exit(2);
	}
	return r;
}

static int open_in(const char *dir, const char *name)
{
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		die(path);
	return fd;
}

int main(int argc, char **argv)
{
	long f_out = 0, f_in = 0, g_out = 0, a_out = 0, a_in = 0, b_out = 0,
	     b_in = 0, p0_in = 0, p1_out = 0, q0_in = 0, q1_out = 0, r;
	struct iovec iov[2] = {{buf, 500}, {buf + 500, 500}};
	struct iovec riov[2] = {{back, 500}, {back + 500, 500}};
	int f, g, sv[2], p[2], q[2], d;
	loff_t off_in, off_out;
	off_t off;

	if (argc != 2) {
		fprintf(stderr, "usage: pio_xfer DIR\n");
		return 2;
	}
	memset(buf, 'p', sizeof(buf));
	f = open_in(argv[1], "f");
	g = open_in(argv[1], "g");

	/* File f: 6,000 bytes written at offsets, read back. */
	f_out += want("pwrite", pwrite(f, buf, 1000, 0), 1000);
	f_out += want("pwrite64", pwrite64(f, buf, 1000, 1000), 1000);
	f_out += want("pwritev", pwritev(f, iov, 2, 2000), 1000);
	f_out += want("pwritev2", pwritev2(f, iov, 2, 3000, 0), 1000);
	f_out += want("SYS_pwrite64", syscall(SYS_pwrite64, f, buf, 1000, 4000),
		      1000);
	f_out +=
	    want("SYS_pwritev", syscall(SYS_pwritev, f, iov, 1, 5000, 0), 500);
	f_out += want("SYS_pwritev2",
		      syscall(SYS_pwritev2, f, iov, 1, 5500, 0, 0), 500);
	f_in += want("pread", pread(f, back, 1000, 0), 1000);
	f_in += want("pread64", pread64(f, back, 1000, 1000), 1000);
	f_in += want("__pread_chk", __pread_chk(f, back, 300, 0, sizeof(back)),
		     300);
	f_in += want("preadv", preadv(f, riov, 2, 2000), 1000);
	f_in += want("preadv2", preadv2(f, riov, 2, 3000, 0), 1000);
	f_in += want("SYS_pread64", syscall(SYS_pread64, f, back, 1000, 4000),
		     1000);
	f_in +=
	    want("SYS_preadv", syscall(SYS_preadv, f, riov, 1, 5000, 0), 500);
	f_in += want("SYS_preadv2",
		     syscall(SYS_preadv2, f, riov, 1, 5500, 0, 0), 500);

	/* File g: 5,000 bytes of f, copied inside the kernel. */
	off_in = 0;
	r = want("copy_file_range",
		 copy_file_range(f, &off_in, g, NULL, 3000, 0), 3000);
	f_in += r;
	g_out += r;
	off_in = 3000;
	off_out = 3000;
	r = want("SYS_copy_file_range",
		 syscall(SYS_copy_file_range, f, &off_in, g, &off_out, 2000, 0),
		 2000);
	f_in += r;
	g_out += r;

	/* A socketpair: the v2 forms at offset -1, a failing pread,
	 * sendfile, a dup by fcntl. */
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
		die("socketpair");
	a_out += want("pwritev2 -1", pwritev2(sv[0], iov, 2, -1, 0), 1000);
	b_in += want("preadv2 -1", preadv2(sv[1], riov, 2, -1, 0), 1000);
	if (pread(sv[0], back, 10, 0) != -1 || errno != ESPIPE)
		die("pread on a socket did not fail with ESPIPE");
	off = 0;
	r = want("SYS_sendfile", syscall(SYS_sendfile, sv[0], f, &off, 300),
		 300);
	a_out += r;
	f_in += r;
	b_in += want("read", read(sv[1], back, 300), 300);
	d = (int)syscall(SYS_fcntl, sv[0], F_DUPFD_CLOEXEC, 50);
	if (d < 50)
		die("SYS_fcntl F_DUPFD_CLOEXEC");
	want("write on the dup", write(d, buf, DUP_BYTES), DUP_BYTES);
	b_in += want("read", read(sv[1], back, DUP_BYTES), DUP_BYTES);

	/* Pipes: vmsplice into p, tee p into q, splice p into b. */
	if (pipe(p) != 0 || pipe(q) != 0)
		die("pipe");
	iov[0].iov_len = 400;
	p1_out +=
	    want("SYS_vmsplice", syscall(SYS_vmsplice, p[1], iov, 1, 0), 400);
	q1_out += want("SYS_tee", syscall(SYS_tee, p[0], q[1], 400, 0), 400);
	q0_in += want("read q", read(q[0], back, 400), 400);
	r = want("SYS_splice",
		 syscall(SYS_splice, p[0], NULL, sv[1], NULL, 400, 0), 400);
	p0_in += r;
	b_out += r;
	a_in += want("read a", read(sv[0], back, 400), 400);

	printf("f=%d\ng=%d\na=%d\nb=%d\nd=%d\np0=%d\np1=%d\nq0=%d\nq1=%d\n", f,
	       g, sv[0], sv[1], d, p[0], p[1], q[0], q[1]);
	printf("f_out=%ld\nf_in=%ld\ng_out=%ld\na_out=%ld\na_in=%ld\n"
	       "b_out=%ld\nb_in=%ld\nd_out=%d\np0_in=%ld\np1_out=%ld\n"
	       "q0_in=%ld\nq1_out=%ld\n",
	       f_out, f_in, g_out, a_out, a_in, b_out, b_in, DUP_BYTES, p0_in,
	       p1_out, q0_in, q1_out);
	close(d);
	close(f);
	close(g);
	close(sv[0]);
	close(sv[1]);
	close(p[0]);
	close(p[1]);
	close(q[0]);
	close(q[1]);
	return 0;
}
