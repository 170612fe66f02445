/*
 * rawcalls - every system call number the preload treats like its named
 * wrapper, made through libc's syscall() (as libuv does), plus numbers it
 * only passes on.  Each check prints "ok NAME" or "FAIL NAME: ..." and the
 * program exits with the number of failed checks, so it proves the same
 * thing with and without the preload (return values, errno).
 *
 * What moves (printed as NAME=N lines at the end, for the log checks): on
 * a unix stream pair made by SYS_socketpair, pair_out bytes from the first
 * end to the second through write, writev, sendto, sendmsg and sendmmsg;
 * read back through read, readv, recvfrom, recvmsg and recvmmsg (and a
 * MSG_PEEK first, which moves nothing); a close_range with
 * CLOSE_RANGE_CLOEXEC only marks the sender, which then sends 10 more
 * bytes.  A dup (SYS_dup, SYS_dup3) of the
 * sender carries dup_out more bytes; both ends and the dups are closed with
 * SYS_close or SYS_close_range.  A TCP connection (SYS_socket, SYS_bind,
 * SYS_connect, SYS_accept4) carries tcp_bytes one way.  The six arguments
 * of the passed-on numbers reach the kernel untouched: a futex wait with
 * its sixth argument (the bitset) 0 fails with EINVAL, with ~0 the same
 * call fails with EAGAIN; a UDP sendto names its peer in arguments 5, 6.
 */
#include <errno.h>
#include <linux/close_range.h>
#include <linux/futex.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

static int failed;

static void check(const char *name, int ok, long r, int err)
{
	if (ok)
		printf("ok %s\n", name);
	else {
		printf("FAIL %s: returned %ld, errno %d (%s)\n", name, r, err,
		       strerror(err));
		failed++;
	}
}

/* r must be want (want < 0: any r >= 0), errno untouched on success. */
static void expect(const char *name, long r, long want)
{
	int err = errno;

	check(name, want < 0 ? r >= 0 && err == 4242 : r == want && err == 4242,
	      r, err);
	errno = 4242;
}

/* r must be -1 with errno e. */
static void expect_err(const char *name, long r, int e)
{
	int err = errno;

	check(name, r == -1 && err == e, r, err);
	errno = 4242;
}

int main(void)
{
	int sv[2], d, d3, l, c, a, u1, u2;
	char buf[4096], big[1000];
	struct iovec iov[2];
	struct msghdr mh;
	struct mmsghdr mm[2];
	struct iovec mmiov[2];
	struct sockaddr_in sa, ua;
	socklen_t salen = sizeof(sa);
	uint32_t word = 7;
	long pair_out = 0, pair_in = 0, dup_out = 0, tcp = 0, r;

	setvbuf(stdout, NULL, _IOLBF, 0);
	memset(big, 'z', sizeof(big));
	errno = 4242;
	expect("socketpair",
	       syscall(SYS_socketpair, AF_UNIX, SOCK_STREAM, 0, sv), 0);
	r = syscall(SYS_write, sv[0], big, 100);
	expect("write", r, 100);
	pair_out += r;
	iov[0] = (struct iovec){big, 50};
	iov[1] = (struct iovec){big, 70};
	r = syscall(SYS_writev, sv[0], iov, 2);
	expect("writev", r, 120);
	pair_out += r;
	r = syscall(SYS_sendto, sv[0], big, 130, 0, NULL, 0);
	expect("sendto", r, 130);
	pair_out += r;
	memset(&mh, 0, sizeof(mh));
	mh.msg_iov = iov;
	mh.msg_iovlen = 2;
	r = syscall(SYS_sendmsg, sv[0], &mh, 0);
	expect("sendmsg", r, 120);
	pair_out += r;
	memset(mm, 0, sizeof(mm));
	mmiov[0] = (struct iovec){big, 11};
	mmiov[1] = (struct iovec){big, 13};
	mm[0].msg_hdr.msg_iov = &mmiov[0];
	mm[0].msg_hdr.msg_iovlen = 1;
	mm[1].msg_hdr.msg_iov = &mmiov[1];
	mm[1].msg_hdr.msg_iovlen = 1;
	r = syscall(SYS_sendmmsg, sv[0], mm, 2, 0);
	expect("sendmmsg", r, 2);
	pair_out += 24;
	expect("recvfrom MSG_PEEK",
	       syscall(SYS_recvfrom, sv[1], buf, 10, MSG_PEEK, NULL, NULL), 10);
	r = syscall(SYS_read, sv[1], buf, 100);
	expect("read", r, 100);
	pair_in += r;
	iov[0] = (struct iovec){buf, 60};
	iov[1] = (struct iovec){buf + 60, 60};
	r = syscall(SYS_readv, sv[1], iov, 2);
	expect("readv", r, 120);
	pair_in += r;
	r = syscall(SYS_recvfrom, sv[1], buf, 130, 0, NULL, NULL);
	expect("recvfrom", r, 130);
	pair_in += r;
	iov[0] = (struct iovec){buf, 120};
	mh.msg_iov = iov;
	mh.msg_iovlen = 1;
	r = syscall(SYS_recvmsg, sv[1], &mh, 0);
	expect("recvmsg", r, 120);
	pair_in += r;
	mmiov[0] = (struct iovec){buf, 24};
	mm[0].msg_hdr.msg_iov = &mmiov[0];
	mm[0].msg_len = 0;
	r = syscall(SYS_recvmmsg, sv[1], mm, 1, MSG_DONTWAIT, NULL);
	expect("recvmmsg", r, 1);
	expect("recvmmsg bytes", mm[0].msg_len, 24);
	pair_in += mm[0].msg_len;

	d = (int)syscall(SYS_dup, sv[0]);
	expect("dup", d, -1);
	d3 = (int)syscall(SYS_dup3, d, 60, 0);
	expect("dup3", d3, 60);
#ifdef SYS_dup2
	expect("dup2", syscall(SYS_dup2, d, 61), 61);
	expect("close dup2", syscall(SYS_close, 61), 0);
#endif
	r = syscall(SYS_write, d3, big, 33);
	expect("write on dup3", r, 33);
	dup_out += r;
	r = syscall(SYS_read, sv[1], buf, sizeof(buf));
	expect("read dup's bytes", r, 33);
	pair_in += r;
	expect("close", syscall(SYS_close, d), 0);
	expect("close_range", syscall(SYS_close_range, 60, 60, 0), 0);
	expect("close_range cloexec",
	       syscall(SYS_close_range, sv[0], sv[0], CLOSE_RANGE_CLOEXEC), 0);
	/* Only marked close-on-exec: still open, still metered. */
	r = syscall(SYS_write, sv[0], big, 10);
	expect("write after cloexec", r, 10);
	pair_out += r;
	r = syscall(SYS_read, sv[1], buf, sizeof(buf));
	expect("read after cloexec", r, 10);
	pair_in += r;
	expect("close end 0", syscall(SYS_close, sv[0]), 0);
	expect("close end 1", syscall(SYS_close, sv[1]), 0);
	expect_err("close bad fd", syscall(SYS_close, sv[1]), EBADF);
	expect_err("read bad fd", syscall(SYS_read, sv[1], buf, 1), EBADF);

	l = (int)syscall(SYS_socket, AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	expect("socket", l, -1);
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	expect("bind", syscall(SYS_bind, l, &sa, sizeof(sa)), 0);
	expect("getsockname", syscall(SYS_getsockname, l, &sa, &salen), 0);
	expect("listen", syscall(SYS_listen, l, 4), 0);
	c = (int)syscall(SYS_socket, AF_INET, SOCK_STREAM, 0);
	expect("socket client", c, -1);
	expect("connect", syscall(SYS_connect, c, &sa, sizeof(sa)), 0);
	a = (int)syscall(SYS_accept4, l, NULL, NULL, SOCK_CLOEXEC);
	expect("accept4", a, -1);
	r = syscall(SYS_sendto, c, big, sizeof(big), 0, NULL, 0);
	expect("tcp send", r, sizeof(big));
	tcp += r;
	for (r = 0; r < tcp;) {
		long n =
		    syscall(SYS_recvfrom, a, buf, sizeof(buf), 0, NULL, NULL);

		if (n <= 0)
			break;
		r += n;
	}
	expect("tcp received", r, tcp);
	/* The client by SYS_close_range: retired before the kernel closes it,
	 * so that its record still has the kernel's view. */
	expect("close client", syscall(SYS_close_range, c, c, 0), 0);
	expect("close accepted", syscall(SYS_close, a), 0);
	expect("close listener", syscall(SYS_close, l), 0);

	/* UDP: arguments 5 and 6 of sendto name the peer. */
	u1 = (int)syscall(SYS_socket, AF_INET, SOCK_DGRAM, 0);
	u2 = (int)syscall(SYS_socket, AF_INET, SOCK_DGRAM, 0);
	memset(&ua, 0, sizeof(ua));
	ua.sin_family = AF_INET;
	ua.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	salen = sizeof(ua);
	expect("udp bind", syscall(SYS_bind, u2, &ua, sizeof(ua)), 0);
	expect("udp name", syscall(SYS_getsockname, u2, &ua, &salen), 0);
	expect("udp sendto peer",
	       syscall(SYS_sendto, u1, big, 77, 0, &ua, sizeof(ua)), 77);
	expect("udp recvfrom",
	       syscall(SYS_recvfrom, u2, buf, sizeof(buf), 0, NULL, NULL), 77);
	expect_err("udp sendto short address",
		   syscall(SYS_sendto, u1, big, 77, 0, &ua, 2), EINVAL);
	expect("udp close 1", syscall(SYS_close, u1), 0);
	expect("udp close 2", syscall(SYS_close, u2), 0);

	/* Passed on: six arguments, errno and return untouched. */
	expect_err(
	    "futex bitset 0",
	    syscall(SYS_futex, &word, FUTEX_WAIT_BITSET, 8, NULL, NULL, 0),
	    EINVAL);
	expect_err(
	    "futex bitset ~0",
	    syscall(SYS_futex, &word, FUTEX_WAIT_BITSET, 8, NULL, NULL, ~0u),
	    EAGAIN);
	expect("getpid", syscall(SYS_getpid), getpid());
	expect_err("no such number", syscall(100000, 1, 2, 3, 4, 5, 6), ENOSYS);

	printf("pair_out=%ld\npair_in=%ld\ndup_out=%ld\ntcp_bytes=%ld\n",
	       pair_out, pair_in, dup_out, tcp);
	printf("fd_out=%d\nfd_in=%d\nfd_dup3=%d\nfd_tcp_client=%d\n"
	       "fd_tcp_accepted=%d\nfd_udp=%d\n",
	       sv[0], sv[1], d3, c, a, u1);
	return failed;
}
