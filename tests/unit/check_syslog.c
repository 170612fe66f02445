/*
 * check_syslog.c - the syslog datagram: priority, ident, pid, the message
 * without its "sockmeter: " prefix, control bytes made harmless; and a real
 * send to a listening datagram socket.
 */
#include "../../core/syslog.h"
#include "unit_util.h"

#include <errno.h>
#include <sys/socket.h>
#include <sys/un.h>

START_TEST(test_format_user_warning_with_ident_and_pid)
{
	char buf[256];
	size_t n = syslog_format(buf, sizeof(buf), 42,
				 "sockmeter: log /x: cannot write\n\x1b[0m");

	ck_assert_str_eq(buf, "<12>sockmeter[42]: log /x: cannot write??[0m");
	ck_assert_uint_eq(n, strlen(buf));
}
END_TEST

START_TEST(test_format_cuts_long_messages)
{
	char buf[24];

	syslog_format(buf, sizeof(buf), 7, "sockmeter: 0123456789abcdef");
	ck_assert_str_eq(buf, "<12>sockmeter[7]: 01234");
}
END_TEST

START_TEST(test_send_reaches_a_datagram_listener)
{
	struct sockaddr_un a;
	char got[256];
	int fd = socket(AF_UNIX, SOCK_DGRAM, 0);
	ssize_t n;

	ck_assert_int_ge(fd, 0);
	memset(&a, 0, sizeof(a));
	a.sun_family = AF_UNIX;
	snprintf(a.sun_path, sizeof(a.sun_path), "/tmp/sm-syslog-%d.sock",
		 (int)getpid());
	unlink(a.sun_path);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	errno = 1234;
	ck_assert_int_eq(syslog_send(a.sun_path, 99, "sockmeter: hello"), 0);
	ck_assert_int_eq(errno, 1234);
	n = recv(fd, got, sizeof(got) - 1, MSG_DONTWAIT);
	ck_assert_int_gt(n, 0);
	got[n] = '\0';
	ck_assert_str_eq(got, "<12>sockmeter[99]: hello");
	close(fd);
	unlink(a.sun_path);
	ck_assert_int_eq(syslog_send(a.sun_path, 99, "x"), -ENOENT);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("syslog");
	TCase *tc = tcase_create("syslog");

	tcase_add_test(tc, test_format_user_warning_with_ident_and_pid);
	tcase_add_test(tc, test_format_cuts_long_messages);
	tcase_add_test(tc, test_send_reaches_a_datagram_listener);
	suite_add_tcase(s, tc);
	return uu_run(s);
}
