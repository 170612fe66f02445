/*
 * check_classify.c - fd kinds and socket addresses (core/classify.h): real
 * fds of every kind, the socket() argument table, and address text.
 */
#include "../../core/classify.h"
#include "unit_util.h"

#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

/* --- real fds ------------------------------------------------------------ */

START_TEST(test_classify_fd_unix_stream_socketpair)
{
	struct fd_addr l, p;
	int sv[2];

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	ck_assert_int_eq(classify_fd(sv[0], &l, &p), KIND_UNIX_STREAM);
	/* Unnamed unix sockets: the address is just the family. */
	ck_assert_uint_eq(l.len, sizeof(sa_family_t));
	ck_assert_int_eq(l.u.sa.sa_family, AF_UNIX);
	close(sv[0]);
	close(sv[1]);
}
END_TEST

START_TEST(test_classify_fd_unix_seqpacket_counts_as_unix_stream)
{
	int sv[2];

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
	ck_assert_int_eq(classify_fd(sv[1], NULL, NULL), KIND_UNIX_STREAM);
	close(sv[0]);
	close(sv[1]);
}
END_TEST

START_TEST(test_classify_fd_unix_dgram_socketpair)
{
	int sv[2];

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv),
			 0);
	ck_assert_int_eq(classify_fd(sv[0], NULL, NULL), KIND_UNIX_DGRAM);
	close(sv[0]);
	close(sv[1]);
}
END_TEST

START_TEST(test_classify_fd_pipe_both_ends)
{
	struct fd_addr l, p;
	int fds[2];

	ck_assert_int_eq(pipe(fds), 0);
	memset(&l, 0xff, sizeof(l));
	memset(&p, 0xff, sizeof(p));
	ck_assert_int_eq(classify_fd(fds[0], &l, &p), KIND_PIPE);
	ck_assert_int_eq(classify_fd(fds[1], NULL, NULL), KIND_PIPE);
	/* Not a socket: no addresses. */
	ck_assert_uint_eq(l.len, 0);
	ck_assert_uint_eq(p.len, 0);
	close(fds[0]);
	close(fds[1]);
}
END_TEST

START_TEST(test_classify_fd_regular_file_and_directory_are_file)
{
	FILE *f = tmpfile();
	int dir = open("/", O_RDONLY | O_DIRECTORY);

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(classify_fd(fileno(f), NULL, NULL), KIND_FILE);
	ck_assert_int_ge(dir, 0);
	ck_assert_int_eq(classify_fd(dir, NULL, NULL), KIND_FILE);
	fclose(f);
	close(dir);
}
END_TEST

START_TEST(test_classify_fd_char_device_dev_null_is_tty)
{
	int fd = open("/dev/null", O_RDWR);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(classify_fd(fd, NULL, NULL), KIND_TTY);
	close(fd);
}
END_TEST

START_TEST(test_classify_fd_closed_fd_is_unknown_and_errno_preserved)
{
	struct fd_addr l, p;
	int fds[2];

	ck_assert_int_eq(pipe(fds), 0);
	close(fds[0]);
	close(fds[1]);
	memset(&l, 0xff, sizeof(l));
	memset(&p, 0xff, sizeof(p));
	errno = 1234;
	ck_assert_int_eq(classify_fd(fds[0], &l, &p), KIND_UNKNOWN);
	ck_assert_int_eq(errno, 1234);
	ck_assert_uint_eq(l.len, 0);
	ck_assert_uint_eq(p.len, 0);
	errno = 1234;
	ck_assert_int_eq(classify_fd(-1, NULL, NULL), KIND_UNKNOWN);
	ck_assert_int_eq(errno, 1234);
}
END_TEST

START_TEST(test_classify_fd_preserves_errno_when_getpeername_fails_inside)
{
	struct fd_addr l, p;
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	ck_assert_int_ge(fd, 0);
	errno = 4321;
	/* Unconnected: getpeername fails with ENOTCONN inside. */
	ck_assert_int_eq(classify_fd(fd, &l, &p), KIND_UDP);
	ck_assert_int_eq(errno, 4321);
	ck_assert_uint_eq(p.len, 0);
	close(fd);
}
END_TEST

/* A listening TCP socket on 127.0.0.1, any port; the port goes to *port. */
static int tcp_listener(unsigned *port)
{
	struct sockaddr_in a;
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	ck_assert_int_ge(fd, 0);
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	ck_assert_int_eq(listen(fd, 4), 0);
	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	*port = ntohs(a.sin_port);
	return fd;
}

START_TEST(test_classify_fd_connected_tcp_over_loopback_with_addresses)
{
	struct sockaddr_in a, mine;
	socklen_t len = sizeof(mine);
	struct fd_addr l, p;
	char buf[128], want[64];
	unsigned port;
	int lfd = tcp_listener(&port), cfd, afd;

	cfd = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert_int_ge(cfd, 0);
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_port = htons((uint16_t)port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(connect(cfd, (struct sockaddr *)&a, sizeof(a)), 0);
	afd = accept(lfd, NULL, NULL);
	ck_assert_int_ge(afd, 0);

	ck_assert_int_eq(classify_fd(cfd, &l, &p), KIND_TCP);
	ck_assert_uint_eq(p.len, sizeof(struct sockaddr_in));
	fd_addr_format(&p, buf, sizeof(buf));
	snprintf(want, sizeof(want), "127.0.0.1:%u", port);
	ck_assert_str_eq(buf, want);
	ck_assert_int_eq(getsockname(cfd, (struct sockaddr *)&mine, &len), 0);
	fd_addr_format(&l, buf, sizeof(buf));
	snprintf(want, sizeof(want), "127.0.0.1:%u", ntohs(mine.sin_port));
	ck_assert_str_eq(buf, want);

	/* The accepted end sees the same pair, swapped. */
	ck_assert_int_eq(classify_fd(afd, &l, &p), KIND_TCP);
	fd_addr_format(&l, buf, sizeof(buf));
	snprintf(want, sizeof(want), "127.0.0.1:%u", port);
	ck_assert_str_eq(buf, want);

	/* The listener: a local address, no peer. */
	ck_assert_int_eq(classify_fd(lfd, &l, &p), KIND_TCP);
	ck_assert_str_eq((fd_addr_format(&l, buf, sizeof(buf)), buf), want);
	ck_assert_uint_eq(p.len, 0);
	close(afd);
	close(cfd);
	close(lfd);
}
END_TEST

START_TEST(test_classify_fd_udp_socket_unconnected_has_no_peer)
{
	struct fd_addr l, p;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(classify_fd(fd, &l, &p), KIND_UDP);
	ck_assert_uint_eq(p.len, 0);
	close(fd);
	fd = socket(AF_INET6, SOCK_DGRAM, 0);
	if (fd >= 0) { /* IPv6 may be disabled in a container */
		ck_assert_int_eq(classify_fd(fd, NULL, NULL), KIND_UDP);
		close(fd);
	}
}
END_TEST

START_TEST(test_classify_addrs_fills_only_requested_addresses)
{
	struct fd_addr l;
	unsigned port;
	int lfd = tcp_listener(&port);

	errno = 77;
	classify_addrs(lfd, &l, NULL);
	ck_assert_int_eq(errno, 77);
	ck_assert_uint_eq(l.len, sizeof(struct sockaddr_in));
	ck_assert_uint_eq(ntohs(l.u.in4.sin_port), port);
	close(lfd);
}
END_TEST

/* --- the peer a connect to the wildcard reached ------------------------------ */


static void ck_addr(const struct fd_addr *a, const char *want)
{
	char buf[128];

	fd_addr_format(a, buf, sizeof(buf));
	ck_assert_str_eq(buf, want);
}

/* peer after the rule, given the socket's own address (NULL: none). */
static void ck_wild(struct fd_addr peer, const struct fd_addr *local,
		    const char *want)
{
	classify_wildcard_peer(&peer, local);
	ck_addr(&peer, want);
}

START_TEST(test_wildcard_peer_rule)
{
	struct fd_addr none, l4 = addr4("127.0.0.1", 40000),
			     l4b = addr4("10.1.2.3", 40000),
			     l6 = addr6("::1", 40000),
			     l6b = addr6("2001:db8::5", 40000),
			     l6m = addr6("::ffff:10.0.0.7", 40000);

	memset(&none, 0, sizeof(none));
	/* 0.0.0.0: the socket's own address, loopback when it has none. */
	ck_wild(addr4("0.0.0.0", 8080), &l4, "127.0.0.1:8080");
	ck_wild(addr4("0.0.0.0", 8080), &l4b, "10.1.2.3:8080");
	ck_wild(addr4("0.0.0.0", 8080), &none, "127.0.0.1:8080");
	ck_wild(addr4("127.0.0.1", 8080), NULL, "127.0.0.1:8080");
	/* [::]: ::1, or 127.0.0.1 v4-mapped on a v4-mapped socket. */
	ck_wild(addr6("::", 443), &l6, "[::1]:443");
	ck_wild(addr6("::", 443), &l6b, "[::1]:443");
	ck_wild(addr6("::", 443), &l6m, "[::ffff:127.0.0.1]:443");
	/* Not a wildcard: untouched. */
	ck_wild(addr4("192.0.2.9", 25), &l6m, "192.0.2.9:25");
	ck_wild(addr6("2001:db8::1", 25), &l6m, "[2001:db8::1]:25");
}
END_TEST

/* The rule against the kernel: a real connect to the wildcard, the peer
 * getpeername gives beside the one the rule derives from getsockname. */
START_TEST(test_wildcard_peer_rule_matches_the_kernel)
{
	static const struct {
		int fam;
		const char *listen_on, *wild, *bind_to;
	} cases[] = {
		{ AF_INET, "127.0.0.1", "0.0.0.0", NULL },
		{ AF_INET, "0.0.0.0", "0.0.0.0", "127.0.0.1" },
		{ AF_INET6, "::1", "::", NULL },
		{ AF_INET6, "::", "::", "::ffff:127.0.0.1" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fd_addr la, want, got, local;
		socklen_t n = sizeof(la.u);
		char wbuf[128], gbuf[128];
		int lfd = socket(cases[i].fam, SOCK_STREAM, 0);
		int c = socket(cases[i].fam, SOCK_STREAM, 0);
		int one = 0;

		ck_assert_int_ge(lfd, 0);
		ck_assert_int_ge(c, 0);
		la = cases[i].fam == AF_INET ? addr4(cases[i].listen_on, 0)
					     : addr6(cases[i].listen_on, 0);
		if (cases[i].fam == AF_INET6)
			setsockopt(lfd, IPPROTO_IPV6, IPV6_V6ONLY, &one,
				   sizeof(one));
		ck_assert_int_eq(bind(lfd, &la.u.sa, la.len), 0);
		ck_assert_int_eq(listen(lfd, 4), 0);
		ck_assert_int_eq(getsockname(lfd, &la.u.sa, &n), 0);
		if (cases[i].bind_to) {
			struct fd_addr b = cases[i].fam == AF_INET
						   ? addr4(cases[i].bind_to, 0)
						   : addr6(cases[i].bind_to, 0);

			ck_assert_int_eq(bind(c, &b.u.sa, b.len), 0);
		}
		got = cases[i].fam == AF_INET
			      ? addr4(cases[i].wild,
				      ntohs(la.u.in4.sin_port))
			      : addr6(cases[i].wild,
				      ntohs(la.u.in6.sin6_port));
		ck_assert_int_eq(connect(c, &got.u.sa, got.len), 0);
		classify_addrs(c, &local, &want);
		ck_assert_uint_gt(want.len, 0);
		classify_wildcard_peer(&got, &local);
		fd_addr_format(&want, wbuf, sizeof(wbuf));
		fd_addr_format(&got, gbuf, sizeof(gbuf));
		ck_assert_str_eq(gbuf, wbuf);
		close(c);
		close(lfd);
	}
}
END_TEST

static TCase *tc_fds(void)
{
	TCase *tc = tcase_create("fds");

	tcase_add_test(tc, test_classify_fd_unix_stream_socketpair);
	tcase_add_test(tc, test_classify_fd_unix_seqpacket_counts_as_unix_stream);
	tcase_add_test(tc, test_classify_fd_unix_dgram_socketpair);
	tcase_add_test(tc, test_classify_fd_pipe_both_ends);
	tcase_add_test(tc, test_classify_fd_regular_file_and_directory_are_file);
	tcase_add_test(tc, test_classify_fd_char_device_dev_null_is_tty);
	tcase_add_test(tc, test_classify_fd_closed_fd_is_unknown_and_errno_preserved);
	tcase_add_test(tc, test_classify_fd_preserves_errno_when_getpeername_fails_inside);
	tcase_add_test(tc, test_classify_fd_connected_tcp_over_loopback_with_addresses);
	tcase_add_test(tc, test_classify_fd_udp_socket_unconnected_has_no_peer);
	tcase_add_test(tc, test_classify_addrs_fills_only_requested_addresses);
	tcase_add_test(tc, test_wildcard_peer_rule);
	tcase_add_test(tc, test_wildcard_peer_rule_matches_the_kernel);
	return tc;
}

/* --- socket() arguments ----------------------------------------------------- */

START_TEST(test_classify_socket_table)
{
	static const struct {
		int domain, type, protocol;
		enum fd_kind want;
	} cases[] = {
		{ AF_INET, SOCK_STREAM, 0, KIND_TCP },
		{ AF_INET, SOCK_STREAM, IPPROTO_TCP, KIND_TCP },
		{ AF_INET6, SOCK_STREAM, 0, KIND_TCP },
		{ AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0, KIND_TCP },
		{ AF_INET6, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0,
		  KIND_TCP },
		{ AF_INET, SOCK_STREAM, IPPROTO_SCTP, KIND_OTHER_SOCKET },
		{ AF_INET, SOCK_DGRAM, 0, KIND_UDP },
		{ AF_INET, SOCK_DGRAM, IPPROTO_UDP, KIND_UDP },
		{ AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0, KIND_UDP },
		{ AF_INET, SOCK_DGRAM, IPPROTO_ICMP, KIND_OTHER_SOCKET },
		{ AF_INET, SOCK_RAW, IPPROTO_TCP, KIND_OTHER_SOCKET },
		{ AF_UNIX, SOCK_STREAM, 0, KIND_UNIX_STREAM },
		{ AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, KIND_UNIX_STREAM },
		{ AF_UNIX, SOCK_SEQPACKET, 0, KIND_UNIX_STREAM },
		{ AF_UNIX, SOCK_DGRAM, 0, KIND_UNIX_DGRAM },
		{ AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0,
		  KIND_UNIX_DGRAM },
		{ AF_NETLINK, SOCK_RAW, 0, KIND_OTHER_SOCKET },
		{ AF_PACKET, SOCK_DGRAM, 0, KIND_OTHER_SOCKET },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		ck_assert_msg(classify_socket(cases[i].domain, cases[i].type,
					      cases[i].protocol) ==
				      cases[i].want,
			      "case %zu: domain %d type %#x protocol %d", i,
			      cases[i].domain, cases[i].type,
			      cases[i].protocol);
}
END_TEST

static TCase *tc_socket_args(void)
{
	TCase *tc = tcase_create("socket_args");

	tcase_add_test(tc, test_classify_socket_table);
	return tc;
}

/* --- address text ---------------------------------------------------------- */

static struct fd_addr unix_addr(const char *path, size_t pathlen)
{
	struct fd_addr a;

	memset(&a, 0, sizeof(a));
	a.u.un.sun_family = AF_UNIX;
	memcpy(a.u.un.sun_path, path, pathlen);
	a.len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + pathlen);
	return a;
}

START_TEST(test_fd_addr_format_ipv4)
{
	struct fd_addr a;
	char buf[64];

	memset(&a, 0, sizeof(a));
	a.len = sizeof(a.u.in4);
	a.u.in4.sin_family = AF_INET;
	a.u.in4.sin_port = htons(65535);
	inet_pton(AF_INET, "203.0.113.7", &a.u.in4.sin_addr);
	ck_assert_uint_eq(fd_addr_format(&a, buf, sizeof(buf)),
			  strlen("203.0.113.7:65535"));
	ck_assert_str_eq(buf, "203.0.113.7:65535");
}
END_TEST

/* IPv4 is written without inet_ntop and printf: the same text as theirs,
 * for random addresses and ports and the edges. */
START_TEST(test_fd_addr_format_ipv4_reads_as_inet_ntop_writes_it)
{
	uint64_t x = 0x243f6a8885a308d3ull;
	char buf[64], want[64], host[INET_ADDRSTRLEN];
	struct fd_addr a;
	unsigned i;

	memset(&a, 0, sizeof(a));
	a.len = sizeof(a.u.in4);
	a.u.in4.sin_family = AF_INET;
	for (i = 0; i < 20000; i++) {
		uu_rand(&x);
		a.u.in4.sin_addr.s_addr = i == 0 ? 0 : i == 1 ? 0xffffffffu
							       : (uint32_t)x;
		a.u.in4.sin_port = (uint16_t)(i == 0 ? 0 : i == 1 ? 0xffff
							   : x >> 40);
		inet_ntop(AF_INET, &a.u.in4.sin_addr, host, sizeof(host));
		snprintf(want, sizeof(want), "%s:%u", host,
			 ntohs(a.u.in4.sin_port));
		ck_assert_uint_eq(fd_addr_format(&a, buf, sizeof(buf)),
				  strlen(want));
		ck_assert_str_eq(buf, want);
		/* The smallest buffer that holds any IPv4 address. */
		ck_assert_uint_eq(fd_addr_format(&a, buf, 22), strlen(want));
		ck_assert_str_eq(buf, want);
	}
}
END_TEST

START_TEST(test_fd_addr_format_ipv6_in_brackets)
{
	struct fd_addr a;
	char buf[64];

	memset(&a, 0, sizeof(a));
	a.len = sizeof(a.u.in6);
	a.u.in6.sin6_family = AF_INET6;
	a.u.in6.sin6_port = htons(80);
	a.u.in6.sin6_addr = in6addr_loopback;
	ck_assert_uint_eq(fd_addr_format(&a, buf, sizeof(buf)), 8);
	ck_assert_str_eq(buf, "[::1]:80");
	inet_pton(AF_INET6, "2001:db8::42", &a.u.in6.sin6_addr);
	fd_addr_format(&a, buf, sizeof(buf));
	ck_assert_str_eq(buf, "[2001:db8::42]:80");
}
END_TEST

START_TEST(test_fd_addr_format_unix_path_and_abstract)
{
	struct fd_addr a = unix_addr("/run/x.sock", sizeof("/run/x.sock"));
	char buf[128];

	ck_assert_uint_eq(fd_addr_format(&a, buf, sizeof(buf)), 11);
	ck_assert_str_eq(buf, "/run/x.sock");
	/* Linux may hand back a path without its NUL. */
	a = unix_addr("/run/y", 6);
	fd_addr_format(&a, buf, sizeof(buf));
	ck_assert_str_eq(buf, "/run/y");
	a = unix_addr("\0name", 5);
	ck_assert_uint_eq(fd_addr_format(&a, buf, sizeof(buf)), 5);
	ck_assert_str_eq(buf, "@name");
	/* NULs inside an abstract name show as '@' (ss's way), trailing
	 * ones (the whole struct's length passed) are left out, and a
	 * relative path that starts with '@' is not taken for one. */
	a = unix_addr("\0x\0one", 7);
	fd_addr_format(&a, buf, sizeof(buf));
	ck_assert_str_eq(buf, "@x@one");
	a = unix_addr("\0x\0two\0\0\0", 10);
	fd_addr_format(&a, buf, sizeof(buf));
	ck_assert_str_eq(buf, "@x@two");
	a = unix_addr("@x", 3);
	fd_addr_format(&a, buf, sizeof(buf));
	ck_assert_str_eq(buf, "./@x");
	/* Cut to the buffer, NUL-terminated. */
	a = unix_addr("\0abcdef", 7);
	ck_assert_uint_eq(fd_addr_format(&a, buf, 4), 3);
	ck_assert_str_eq(buf, "@ab");
}
END_TEST

START_TEST(test_fd_addr_format_ipv6_zone)
{
	struct fd_addr a;
	char buf[128];

	memset(&a, 0, sizeof(a));
	a.u.in6.sin6_family = AF_INET6;
	a.u.in6.sin6_port = htons(8080);
	a.u.in6.sin6_scope_id = 3;
	inet_pton(AF_INET6, "fe80::1", &a.u.in6.sin6_addr);
	a.len = sizeof(a.u.in6);
	fd_addr_format(&a, buf, sizeof(buf));
	ck_assert_str_eq(buf, "[fe80::1%3]:8080");
}
END_TEST

/*
 * An unnamed unix socket (a socketpair end, a client that never bound)
 * formats as "", as the README's log schema promises.
 */
START_TEST(test_fd_addr_format_unnamed_unix_is_empty_as_readme_says)
{
	struct fd_addr a = unix_addr("", 0);
	char buf[32];

	ck_assert_uint_eq(fd_addr_format(&a, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "");
}
END_TEST

START_TEST(test_fd_addr_format_unknown_is_empty_and_always_terminated)
{
	struct fd_addr a;
	char buf[8];

	memset(&a, 0, sizeof(a));
	memset(buf, 'x', sizeof(buf));
	ck_assert_uint_eq(fd_addr_format(&a, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "");
	memset(buf, 'x', sizeof(buf));
	ck_assert_uint_eq(fd_addr_format(NULL, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "");
	/* Too small a buffer: truncated, terminated, length of what fits. */
	a.len = sizeof(a.u.in4);
	a.u.in4.sin_family = AF_INET;
	a.u.in4.sin_port = htons(8080);
	inet_pton(AF_INET, "10.20.30.40", &a.u.in4.sin_addr);
	ck_assert_uint_eq(fd_addr_format(&a, buf, sizeof(buf)), 7);
	ck_assert_str_eq(buf, "10.20.3");
	ck_assert_uint_eq(fd_addr_format(&a, buf, 0), 0);
	/* An unexpected family is named, not dropped. */
	a.u.sa.sa_family = AF_NETLINK;
	fd_addr_format(&a, buf, sizeof(buf));
	ck_assert_str_eq(buf, "family:");
}
END_TEST

START_TEST(test_fd_addr_format_of_real_bound_unix_socket)
{
	char dir[64], path[96], buf[160];
	struct sockaddr_un sa;
	struct fd_addr l, p;
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	uu_tmpdir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/s.sock", dir);
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	ck_assert_uint_lt(strlen(path), sizeof(sa.sun_path));
	memcpy(sa.sun_path, path, strlen(path) + 1);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_int_eq(classify_fd(fd, &l, &p), KIND_UNIX_STREAM);
	fd_addr_format(&l, buf, sizeof(buf));
	ck_assert_str_eq(buf, path);
	close(fd);
	uu_rmtree(dir);
}
END_TEST

static TCase *tc_format(void)
{
	TCase *tc = tcase_create("format");

	tcase_add_unchecked_fixture(tc, uu_root_setup, uu_root_teardown);
	tcase_add_test(tc, test_fd_addr_format_ipv4);
	tcase_add_test(tc, test_fd_addr_format_ipv4_reads_as_inet_ntop_writes_it);
	tcase_add_test(tc, test_fd_addr_format_ipv6_in_brackets);
	tcase_add_test(tc, test_fd_addr_format_unix_path_and_abstract);
	tcase_add_test(tc, test_fd_addr_format_ipv6_zone);
	tcase_add_test(tc, test_fd_addr_format_unnamed_unix_is_empty_as_readme_says);
	tcase_add_test(tc, test_fd_addr_format_unknown_is_empty_and_always_terminated);
	tcase_add_test(tc, test_fd_addr_format_of_real_bound_unix_socket);
	return tc;
}

int main(void)
{
	Suite *s = suite_create("classify");

	suite_add_tcase(s, tc_fds());
	suite_add_tcase(s, tc_socket_args());
	suite_add_tcase(s, tc_format());
	return uu_run(s);
}
