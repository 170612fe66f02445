/*
 * check_names.c - the table of resolved names: lookups by address, the
 * bound (oldest out), refresh in place, IPv4-mapped peers, many threads.
 */
#include "../../core/names.h"
#include "unit_util.h"

#include <arpa/inet.h>
#include <pthread.h>

static struct names t;

static void setup(void)
{
	memset(&t, 0, sizeof(t));
	pthread_mutex_init(&t.lock, NULL);
}

static struct fd_addr v4(const char *ip, int port)
{
	struct fd_addr a;

	memset(&a, 0, sizeof(a));
	a.u.in4.sin_family = AF_INET;
	a.u.in4.sin_port = htons((uint16_t)port);
	inet_pton(AF_INET, ip, &a.u.in4.sin_addr);
	a.len = sizeof(a.u.in4);
	return a;
}

static struct fd_addr v6(const char *ip, int port)
{
	struct fd_addr a;

	memset(&a, 0, sizeof(a));
	a.u.in6.sin6_family = AF_INET6;
	a.u.in6.sin6_port = htons((uint16_t)port);
	inet_pton(AF_INET6, ip, &a.u.in6.sin6_addr);
	a.len = sizeof(a.u.in6);
	return a;
}

static void add1(const char *name, const struct fd_addr *a, uint64_t ns)
{
	const struct sockaddr *sa = &a->u.sa;

	names_add(&t, name, &sa, 1, ns);
}

START_TEST(test_names_find_the_name_of_a_resolved_address_any_port)
{
	struct fd_addr a = v4("93.184.216.34", 443), p = v4("93.184.216.34", 80);
	char name[NAMES_LEN];
	uint64_t ns = 0;

	add1("example.com", &a, 1234567);
	ck_assert(names_find(&t, &p, name, sizeof(name), &ns));
	ck_assert_str_eq(name, "example.com");
	ck_assert_uint_eq(ns, 1234567);
	p = v4("93.184.216.35", 443);
	ck_assert(!names_find(&t, &p, name, sizeof(name), &ns));
	ck_assert_str_eq(name, "");
}
END_TEST

START_TEST(test_names_v4_mapped_peer_matches_its_v4_name)
{
	struct fd_addr a = v4("10.1.2.3", 0), p = v6("::ffff:10.1.2.3", 8080);
	struct fd_addr b = v6("2001:db8::1", 0), q = v6("2001:db8::1", 1);
	char name[NAMES_LEN];
	uint64_t ns;

	add1("four", &a, 1);
	add1("six", &b, 2);
	ck_assert(names_find(&t, &p, name, sizeof(name), &ns));
	ck_assert_str_eq(name, "four");
	ck_assert(names_find(&t, &q, name, sizeof(name), &ns));
	ck_assert_str_eq(name, "six");
}
END_TEST

START_TEST(test_names_newest_name_wins_and_a_name_is_refreshed_in_place)
{
	struct fd_addr a = v4("127.0.0.1", 0);
	char name[NAMES_LEN];
	uint64_t ns;

	add1("localhost", &a, 1);
	add1("vm", &a, 2);
	ck_assert(names_find(&t, &a, name, sizeof(name), &ns));
	ck_assert_str_eq(name, "vm");
	add1("localhost", &a, 3);
	ck_assert(names_find(&t, &a, name, sizeof(name), &ns));
	ck_assert_str_eq(name, "localhost");
	ck_assert_uint_eq(ns, 3);
	ck_assert_uint_eq(names_count(&t), 2);
}
END_TEST

START_TEST(test_names_bound_holds_under_10000_distinct_names_oldest_out)
{
	char name[NAMES_LEN], host[32];
	struct fd_addr a;
	uint64_t ns;
	unsigned i;

	for (i = 0; i < 10000; i++) {
		snprintf(host, sizeof(host), "h%u.example", i);
		a = v4("10.0.0.0", 0);
		a.u.in4.sin_addr.s_addr = htonl(0x0a000000u + i);
		add1(host, &a, i);
		ck_assert_uint_le(names_count(&t), NAMES_CAP);
	}
	ck_assert_uint_eq(names_count(&t), NAMES_CAP);
	/* The newest NAMES_CAP are there, the ones before are gone. */
	a.u.in4.sin_addr.s_addr = htonl(0x0a000000u + 9999);
	ck_assert(names_find(&t, &a, name, sizeof(name), &ns));
	ck_assert_str_eq(name, "h9999.example");
	a.u.in4.sin_addr.s_addr = htonl(0x0a000000u + 10000 - NAMES_CAP);
	ck_assert(names_find(&t, &a, name, sizeof(name), &ns));
	a.u.in4.sin_addr.s_addr = htonl(0x0a000000u + 10000 - NAMES_CAP - 1);
	ck_assert(!names_find(&t, &a, name, sizeof(name), &ns));
}
END_TEST

START_TEST(test_names_long_names_and_odd_input_are_cut_or_ignored)
{
	char big[600], name[16];
	struct fd_addr a = v4("1.2.3.4", 0), u;
	const struct sockaddr *none = NULL;
	uint64_t ns;

	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	add1(big, &a, 1);
	ck_assert(names_find(&t, &a, name, sizeof(name), &ns));
	ck_assert_uint_eq(strlen(name), sizeof(name) - 1);
	names_add(&t, "nothing", &none, 1, 1);
	names_add(&t, "", (const struct sockaddr *const *)&none, 0, 1);
	ck_assert_uint_eq(names_count(&t), 1);
	memset(&u, 0, sizeof(u));
	ck_assert(!names_find(&t, &u, name, sizeof(name), &ns));
}
END_TEST

static void *writer(void *arg)
{
	unsigned id = (unsigned)(uintptr_t)arg, i;
	char host[32];
	struct fd_addr a;

	for (i = 0; i < 3000; i++) {
		snprintf(host, sizeof(host), "t%u-%u", id, i % 300);
		a = v4("10.0.0.0", 0);
		a.u.in4.sin_addr.s_addr = htonl((id << 16) + i % 300);
		add1(host, &a, i);
	}
	return NULL;
}

static void *reader(void *arg)
{
	char name[NAMES_LEN];
	struct fd_addr a = v4("10.0.0.0", 0);
	uint64_t ns;
	unsigned i;

	(void)arg;
	for (i = 0; i < 3000; i++) {
		a.u.in4.sin_addr.s_addr = htonl(((i % 8) << 16) + i % 300);
		if (names_find(&t, &a, name, sizeof(name), &ns))
			ck_assert(name[0] == 't');
	}
	return NULL;
}

START_TEST(test_names_many_threads_add_and_find_at_once)
{
	pthread_t th[10];
	unsigned i;

	for (i = 0; i < 8; i++)
		pthread_create(&th[i], NULL, writer, (void *)(uintptr_t)i);
	pthread_create(&th[8], NULL, reader, NULL);
	pthread_create(&th[9], NULL, reader, NULL);
	for (i = 0; i < 10; i++)
		pthread_join(th[i], NULL);
	ck_assert_uint_eq(names_count(&t), NAMES_CAP);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("names");
	TCase *tc = tcase_create("table");

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_names_find_the_name_of_a_resolved_address_any_port);
	tcase_add_test(tc, test_names_v4_mapped_peer_matches_its_v4_name);
	tcase_add_test(tc, test_names_newest_name_wins_and_a_name_is_refreshed_in_place);
	tcase_add_test(tc, test_names_bound_holds_under_10000_distinct_names_oldest_out);
	tcase_add_test(tc, test_names_long_names_and_odd_input_are_cut_or_ignored);
	tcase_add_test(tc, test_names_many_threads_add_and_find_at_once);
	suite_add_tcase(s, tc);
	return uu_run(s);
}
