/*
 * check_fdcheck.c - the ticker's net under unseen closes (core/fdcheck.h):
 * real fds, closed and reused behind the table's back.
 */
#include "../../core/closeq.h"
#include "../../core/fdcheck.h"
#include "../../core/fdtab.h"
#include "unit_util.h"

#include <check.h>
#include <stdbool.h>
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <string.h>
#include <unistd.h>

#define CAP 1024

static struct fdtab tab;
static struct closeq q;
static struct fdcheck chk;
static int sv[2];

static void setup(void)
{
	ck_assert_int_eq(fdtab_init(&tab, CAP), 0);
	ck_assert_int_eq(closeq_init(&q), 0);
	ck_assert_int_eq(fdcheck_init(&chk, CAP), 0);
	fdcheck_enable(&chk);
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
}

static void teardown(void)
{
	close(sv[0]);
	close(sv[1]);
	fdcheck_destroy(&chk);
	closeq_destroy(&q);
	fdtab_destroy(&tab);
}

/* sv[0] opened as a tracked connection with 123 bytes in. */
static void open_tracked(void)
{
	struct fd_snapshot stale;

	ck_assert_int_eq(fdtab_open(&tab, sv[0], KIND_UNIX_STREAM, 1, NULL,
				    NULL, &stale),
			 0);
	fd_account(&tab.slots[sv[0]], DIR_IN, 123, 0, ACCT_BYTES);
}

START_TEST(test_fdcheck_leaves_a_live_fd_alone)
{
	struct closeq_entry e;

	open_tracked();
	ck_assert_uint_eq(fdcheck_run(&chk, &tab, &q, 5), 0);
	ck_assert_uint_eq(fdcheck_run(&chk, &tab, &q, 6), 0);
	ck_assert(!closeq_pop(&q, &e));
	ck_assert_int_eq(fdtab_kind(&tab.slots[sv[0]]), KIND_UNIX_STREAM);
}
END_TEST

/* Reused before the ticker's first look: the kind of object tells. */
START_TEST(test_fdcheck_retires_an_fd_reused_before_first_sight)
{
	struct closeq_entry e;
	int fd;

	open_tracked();
	syscall(SYS_close, sv[0]);
	fd = (int)syscall(SYS_openat, AT_FDCWD, "/dev/null", O_RDONLY);
	ck_assert_int_eq(fd, sv[0]);
	ck_assert_uint_eq(fdcheck_run(&chk, &tab, &q, 7), 1);
	ck_assert(closeq_pop(&q, &e));
	ck_assert(e.s.unseen);
	ck_assert_uint_eq(e.s.c.bytes[DIR_IN], 123);
	ck_assert_int_eq(fdtab_kind(&tab.slots[fd]), KIND_UNKNOWN);
}
END_TEST

/* Reused after the first look: device and inode tell. */
START_TEST(test_fdcheck_retires_an_fd_reused_behind_our_back_as_unseen)
{
	struct closeq_entry e;
	int fd;

	open_tracked();
	ck_assert_uint_eq(fdcheck_run(&chk, &tab, &q, 6), 0);
	syscall(SYS_close, sv[0]);
	fd = (int)syscall(SYS_openat, AT_FDCWD, "/dev/null", O_RDONLY);
	ck_assert_int_eq(fd, sv[0]);
	ck_assert_uint_eq(fdcheck_run(&chk, &tab, &q, 7), 1);
	ck_assert(closeq_pop(&q, &e));
	ck_assert(e.s.unseen);
	ck_assert_int_eq(e.s.fd, fd);
	ck_assert_uint_eq(e.s.c.bytes[DIR_IN], 123);
	ck_assert_uint_eq(e.closed_ns, 7);
	ck_assert_int_eq(fdtab_kind(&tab.slots[fd]), KIND_UNKNOWN);
	ck_assert_uint_eq(fdcheck_run(&chk, &tab, &q, 8), 0);
}
END_TEST

START_TEST(test_fdcheck_retires_an_fd_closed_behind_our_back)
{
	struct closeq_entry e;

	open_tracked();
	syscall(SYS_close, sv[0]);
	ck_assert_uint_eq(fdcheck_run(&chk, &tab, &q, 9), 1);
	ck_assert(closeq_pop(&q, &e));
	ck_assert(e.s.unseen);
	sv[0] = -1;
}
END_TEST

START_TEST(test_fdcheck_remembers_an_inherited_fd_at_first_sight)
{
	struct closeq_entry e;

	/* Classified lazily: nobody called fdcheck_opened. */
	ck_assert_int_eq(fdtab_classify(&tab, sv[1], KIND_UNIX_STREAM, NULL,
					NULL),
			 KIND_UNIX_STREAM);
	ck_assert_uint_eq(fdcheck_run(&chk, &tab, &q, 1), 0);
	ck_assert_int_eq(dup2(sv[0], sv[1]), sv[1]); /* now another socket */
	ck_assert_uint_eq(fdcheck_run(&chk, &tab, &q, 2), 1);
	ck_assert(closeq_pop(&q, &e));
	ck_assert_int_eq(e.s.fd, sv[1]);
}
END_TEST

/* A loopback TCP connection: *cli connected to *srv (accepted). */
static void tcp_pair(int *cli, int *srv, struct fd_addr *cli_local,
		     struct fd_addr *cli_peer)
{
	uu_tcp_pair(cli, srv);
	cli_local->len = sizeof(cli_local->u);
	ck_assert_int_eq(getsockname(*cli, &cli_local->u.sa, &cli_local->len),
			 0);
	cli_peer->len = sizeof(cli_peer->u);
	ck_assert_int_eq(getpeername(*cli, &cli_peer->u.sa, &cli_peer->len), 0);
}

/* Two loopback connections; the second is opened in the table (with its
 * addresses when known), then its number goes to the first's socket
 * behind our back, and the ticker takes its first look.  Returns how many
 * were retired; *e holds the close record, if any. */
static uint32_t reused_before_first_look(bool known, struct closeq_entry *e)
{
	struct fd_snapshot stale;
	struct fd_addr local, peer;
	uint32_t n;
	int c1, s1, c2, s2;

	tcp_pair(&c1, &s1, &local, &peer);
	tcp_pair(&c2, &s2, &local, &peer);
	ck_assert_int_eq(fdtab_open(&tab, c2, KIND_TCP, 3,
				    known ? &local : NULL,
				    known ? &peer : NULL, &stale),
			 0);
	ck_assert_int_eq(dup2(c1, c2), c2); /* c2 is now c1's socket */
	n = fdcheck_run(&chk, &tab, &q, 4);
	if (!closeq_pop(&q, e))
		memset(e, 0, sizeof(*e));
	else
		ck_assert_int_eq(e->s.fd, c2);
	close(c1);
	close(s1);
	close(c2);
	close(s2);
	return n;
}

/* A live TCP connection is remembered at first sight, not retired; one
 * whose number another TCP socket took before that look (its local
 * address differs) is retired. */
START_TEST(test_fdcheck_first_sight_compares_tcp_addresses)
{
	struct fd_snapshot stale;
	struct fd_addr local, peer;
	struct closeq_entry e;
	int c, s;

	tcp_pair(&c, &s, &local, &peer);
	ck_assert_int_eq(fdtab_open(&tab, c, KIND_TCP, 1, &local, &peer,
				    &stale),
			 0);
	ck_assert_uint_eq(fdcheck_run(&chk, &tab, &q, 2), 0);
	ck_assert(!closeq_pop(&q, &e));
	close(c);
	close(s);
	fdtab_retire(&tab, c, &stale);
	ck_assert_uint_eq(reused_before_first_look(true, &e), 1);
	ck_assert(e.s.unseen);
	ck_assert_uint_eq(e.closed_ns, 4);
}
END_TEST

/* A socket bound to 0.0.0.0 and then connected: the table may still hold
 * the wildcard address bind gave when the ticker first looks (the
 * connect's update comes after the kernel's answer).  That look decides
 * nothing; the next one compares with what the table holds by then: the
 * connected address passes, a wildcard still there is another socket.
 * Another port is another socket at once. */
START_TEST(test_fdcheck_first_sight_wildcard_local)
{
	struct fd_snapshot stale;
	struct fd_addr local, wild, peer;
	struct closeq_entry e;
	int c, s;

	tcp_pair(&c, &s, &local, &peer);
	wild = local;
	wild.u.in4.sin_addr.s_addr = htonl(INADDR_ANY);
	/* Unsure, then the connect's address recorded: remembered. */
	ck_assert_int_eq(fdtab_open(&tab, c, KIND_TCP, 1, &wild, &peer,
				    &stale),
			 0);
	ck_assert_uint_eq(fdcheck_run(&chk, &tab, &q, 2), 0);
	ck_assert(!closeq_pop(&q, &e));
	fdtab_set_addrs(&tab, c, &local, NULL);
	ck_assert_uint_eq(fdcheck_run(&chk, &tab, &q, 3), 0);
	ck_assert(!closeq_pop(&q, &e));
	ck_assert_uint_eq(fdcheck_run(&chk, &tab, &q, 4), 0);
	fdtab_retire(&tab, c, &stale);
	/* Still the wildcard at the second look: retired then. */
	ck_assert_int_eq(fdtab_open(&tab, c, KIND_TCP, 5, &wild, &peer,
				    &stale),
			 0);
	ck_assert_uint_eq(fdcheck_run(&chk, &tab, &q, 6), 0);
	ck_assert_uint_eq(fdcheck_run(&chk, &tab, &q, 7), 1);
	ck_assert(closeq_pop(&q, &e));
	ck_assert(e.s.unseen);
	/* A wildcard on another port: retired at the first look. */
	wild.u.in4.sin_port =
		htons((uint16_t)(ntohs(local.u.in4.sin_port) == 65535
					 ? 1
					 : ntohs(local.u.in4.sin_port) + 1));
	ck_assert_int_eq(fdtab_open(&tab, c, KIND_TCP, 8, &wild, &peer,
				    &stale),
			 0);
	ck_assert_uint_eq(fdcheck_run(&chk, &tab, &q, 9), 1);
	ck_assert(closeq_pop(&q, &e));
	ck_assert(e.s.unseen);
	close(c);
	close(s);
}
END_TEST

/* What the kind and addresses cannot tell (unknown addresses) is not held
 * against a connection. */
START_TEST(test_fdcheck_first_sight_unknown_addresses_pass)
{
	struct closeq_entry e;

	ck_assert_uint_eq(reused_before_first_look(false, &e), 0);
	ck_assert(!e.s.unseen);
}
END_TEST

/* Server side: two connections accepted on one listener share its local
 * address; the second's number taken by the first's socket behind our
 * back is told apart by the peer's port (a dup's peer is not looked at:
 * proxychains). */
START_TEST(test_fdcheck_accepted_reused)
{
	struct fd_snapshot stale;
	struct fd_addr local, peer;
	struct closeq_entry e;
	struct sockaddr_in a;
	socklen_t len = sizeof(a);
	int l = socket(AF_INET, SOCK_STREAM, 0), c1, c2, s1, s2;

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(bind(l, (struct sockaddr *)&a, sizeof(a)), 0);
	ck_assert_int_eq(listen(l, 4), 0);
	ck_assert_int_eq(getsockname(l, (struct sockaddr *)&a, &len), 0);
	c1 = socket(AF_INET, SOCK_STREAM, 0);
	c2 = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert_int_eq(connect(c1, (struct sockaddr *)&a, sizeof(a)), 0);
	ck_assert_int_eq(connect(c2, (struct sockaddr *)&a, sizeof(a)), 0);
	s1 = accept(l, NULL, NULL);
	s2 = accept(l, NULL, NULL);
	ck_assert_int_ge(s1, 0);
	ck_assert_int_ge(s2, 0);
	local.len = sizeof(local.u);
	ck_assert_int_eq(getsockname(s2, &local.u.sa, &local.len), 0);
	peer.len = sizeof(peer.u);
	ck_assert_int_eq(getpeername(s2, &peer.u.sa, &peer.len), 0);
	ck_assert_int_eq(
		fdtab_open(&tab, s2, KIND_TCP, 3, &local, &peer, &stale), 0);
	ck_assert_int_eq(dup2(s1, s2), s2);
	ck_assert_uint_eq(fdcheck_run(&chk, &tab, &q, 4), 1);
	ck_assert(closeq_pop(&q, &e));
	ck_assert_int_eq(e.s.fd, s2);
	ck_assert(e.s.unseen);
	close(s1);
	close(s2);
	close(c1);
	close(c2);
	close(l);
}
END_TEST

START_TEST(test_fdcheck_does_nothing_until_enabled)
{
	struct fdcheck off;

	ck_assert_int_eq(fdcheck_init(&off, CAP), 0);
	open_tracked();
	syscall(SYS_close, sv[0]);
	ck_assert_uint_eq(fdcheck_run(&off, &tab, &q, 1), 0);
	fdcheck_destroy(&off);
	sv[0] = -1;
}
END_TEST

int main(void)
{
	Suite *s = suite_create("fdcheck");
	TCase *tc = tcase_create("check");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_fdcheck_leaves_a_live_fd_alone);
	tcase_add_test(tc, test_fdcheck_retires_an_fd_reused_before_first_sight);
	tcase_add_test(tc, test_fdcheck_retires_an_fd_reused_behind_our_back_as_unseen);
	tcase_add_test(tc, test_fdcheck_first_sight_compares_tcp_addresses);
	tcase_add_test(tc, test_fdcheck_first_sight_unknown_addresses_pass);
	tcase_add_test(tc, test_fdcheck_first_sight_wildcard_local);
	tcase_add_test(tc, test_fdcheck_retires_an_fd_closed_behind_our_back);
	tcase_add_test(tc, test_fdcheck_remembers_an_inherited_fd_at_first_sight);
	tcase_add_test(tc, test_fdcheck_does_nothing_until_enabled);
	tcase_add_test(tc, test_fdcheck_accepted_reused);
	suite_add_tcase(s, tc);
	return uu_run(s);
}
