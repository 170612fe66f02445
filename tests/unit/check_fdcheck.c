/*
 * check_fdcheck.c - the ticker's net under unseen closes (core/fdcheck.h):
 * real fds, closed and reused behind the table's back.
 */
#include "../../core/closeq.h"
#include "../../core/fdcheck.h"
#include "../../core/fdtab.h"
#include "unit_util.h"

#include <check.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
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
	fdcheck_opened(&chk, &tab, sv[0]);
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

START_TEST(test_fdcheck_retires_an_fd_reused_behind_our_back_as_unseen)
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
	tcase_add_test(tc, test_fdcheck_retires_an_fd_reused_behind_our_back_as_unseen);
	tcase_add_test(tc, test_fdcheck_retires_an_fd_closed_behind_our_back);
	tcase_add_test(tc, test_fdcheck_remembers_an_inherited_fd_at_first_sight);
	tcase_add_test(tc, test_fdcheck_does_nothing_until_enabled);
	suite_add_tcase(s, tc);
	return uu_run(s);
}
