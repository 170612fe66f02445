/*
 * dups - sending through duplicated fds, and dup2 over a tracked fd.
 *
 * Pair P = (p0, p1), pair Q = (q0, q1), unix stream socketpairs; every byte
 * written is read back at once from the other end.
 *   p0 sends 1000; dup2(p0, p0) (a no-op) and p0 sends 100 more
 *   d  = dup(p0)                 sends 2000
 *   f  = fcntl(p0, F_DUPFD, 100) sends 3000
 *   g  = fcntl(p0, F_DUPFD_CLOEXEC, 200) sends 400
 *   h  = dup3(p0, 300, O_CLOEXEC) sends 600
 *   q0 sends 500, then dup2(p0, q0): q0's old connection is closed by the
 *   kernel; the new q0 (now P) sends 700
 *   r0 (of pair R) sends 321, then dup2(/dev/null, r0): r0's connection is
 *   closed, and r0 (now /dev/null, not metered) takes 10 more bytes
 * Then everything is closed.  Prints "NAME_fd=N" and "NAME_bytes=N" for
 * each of p0 d f g h, "q0_fd=N q0_old_bytes=500 q0_new_bytes=700", the
 * fds of p1 and q1, "r0_fd=N r0_bytes=321", and the totals of the
 * sockets.  Exits 0 when all arrived.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int bad;

/* Send n bytes through fd, read them back from rfd. */
static void move(int fd, int rfd, long n)
{
	char buf[4096];
	long sent = 0, got = 0;

	memset(buf, 'd', sizeof(buf));
	while (sent < n) {
		long k = n - sent < (long)sizeof(buf) ? n - sent
						      : (long)sizeof(buf);
		ssize_t w = send(fd, buf, (size_t)k, 0), r;

		if (w <= 0) {
			bad = 1;
			return;
		}
		sent += w;
		while (got < sent) {
			r = recv(rfd, buf, sizeof(buf), 0);
			if (r <= 0) {
				bad = 1;
				return;
			}
			got += r;
		}
	}
}

int main(void)
{
	int p[2], q[2], rp[2], d, f, g, h, r, null;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, p) != 0 ||
	    socketpair(AF_UNIX, SOCK_STREAM, 0, q) != 0 ||
	    socketpair(AF_UNIX, SOCK_STREAM, 0, rp) != 0)
		return 2;
	move(p[0], p[1], 1000);
	if (dup2(p[0], p[0]) != p[0])
		bad = 1;
	move(p[0], p[1], 100);
	d = dup(p[0]);
	move(d, p[1], 2000);
	f = fcntl(p[0], F_DUPFD, 100);
	move(f, p[1], 3000);
	g = fcntl(p[0], F_DUPFD_CLOEXEC, 200);
	move(g, p[1], 400);
	h = dup3(p[0], 300, O_CLOEXEC);
	move(h, p[1], 600);
	if (d < 0 || f < 100 || g < 200 || h != 300)
		bad = 1;

	move(q[0], q[1], 500);
	r = dup2(p[0], q[0]);
	if (r != q[0])
		bad = 1;
	move(q[0], p[1], 700);

	move(rp[0], rp[1], 321);
	null = open("/dev/null", O_WRONLY);
	if (null < 0 || dup2(null, rp[0]) != rp[0] ||
	    write(rp[0], "0123456789", 10) != 10)
		bad = 1;

	printf("p0_fd=%d\np0_bytes=%d\n", p[0], 1100);
	printf("d_fd=%d\nd_bytes=%d\n", d, 2000);
	printf("f_fd=%d\nf_bytes=%d\n", f, 3000);
	printf("g_fd=%d\ng_bytes=%d\n", g, 400);
	printf("h_fd=%d\nh_bytes=%d\n", h, 600);
	printf("q0_fd=%d\nq0_old_bytes=%d\nq0_new_bytes=%d\n", q[0], 500, 700);
	printf("p1_fd=%d\np1_bytes=%d\nq1_fd=%d\nq1_bytes=%d\n", p[1],
	       1100 + 2000 + 3000 + 400 + 600 + 700, q[1], 500);
	printf("r0_fd=%d\nr0_bytes=%d\nr1_fd=%d\n", rp[0], 321, rp[1]);
	printf("total_bytes=%d\n",
	       1100 + 2000 + 3000 + 400 + 600 + 500 + 700 + 321);
	close(p[0]);
	close(d);
	close(f);
	close(g);
	close(h);
	close(q[0]);
	close(p[1]);
	close(q[1]);
	close(rp[0]);
	close(rp[1]);
	close(null);
	return bad;
}
