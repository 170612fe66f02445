/*
 * check_summary.c - log records (core/summary.h): JSON Lines with exact
 * numbers, fields removed with their category, string escaping, the text
 * format, span labels and the output buffer.
 */
#include "../../core/prom.h"
#include "../../core/summary.h"
#include "../../core/tcpinfo.h"
#include "unit_util.h"

#include <arpa/inet.h>
#include <check.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static struct config cfg;
static struct summary_fd fds[2];
static struct summary rec;
static struct sbuf out;

/*
 * An interval record by hand: fd 7 (tcp, addresses, rates) and fd 9 (udp,
 * inherited, no addresses, no rates), 3 more fds omitted.
 */
static void setup(void)
{
	struct summary_fd *a = &fds[0], *b = &fds[1];

	config_defaults(&cfg);
	cfg.format = FORMAT_JSON;
	memset(fds, 0, sizeof(fds));
	memset(&rec, 0, sizeof(rec));
	memset(&out, 0, sizeof(out));

	a->s.fd = 7;
	a->s.kind = KIND_TCP;
	a->s.gen = 3;
	a->s.opened_ns = 1700000000123456789ull;
	a->s.local = addr4("10.0.0.1", 1234);
	a->s.peer = addr4("10.0.0.2", 80);
	a->s.c.bytes[DIR_IN] = 12345;
	a->s.c.bytes[DIR_OUT] = 678;
	a->s.c.calls[DIR_IN] = 3;
	a->s.c.calls[DIR_OUT] = 4;
	a->s.c.errors[DIR_IN][ERR_AGAIN] = 2;
	a->s.c.errors[DIR_OUT][ERR_OTHER] = 1;
	a->s.c.sizes[DIR_IN][14] = 1;
	a->s.c.sizes[DIR_OUT][10] = 2;
	a->s.c.latency_ns[DIR_IN] = 5555;
	a->last_active_ns = 1700000009500000000ull;
	a->have_rates = true;
	a->rate[0][DIR_IN] = 1000.5;
	a->rate[0][DIR_OUT] = 20;
	a->rate[1][DIR_IN] = 100.25;
	a->rate[1][DIR_OUT] = 2;
	a->rate[2][DIR_IN] = 16.75;
	a->rate[2][DIR_OUT] = 0;

	b->s.fd = 9;
	b->s.kind = KIND_UDP;
	b->s.c.bytes[DIR_OUT] = 1000000;
	b->s.c.calls[DIR_OUT] = 1;
	b->s.c.sizes[DIR_OUT][20] = 1;
	b->last_active_ns = 1700000009000000000ull;

	rec.type = SUMMARY_INTERVAL;
	rec.ts_ns = 1700000010000001000ull;
	rec.pid = 4242;
	rec.prog = "demo";
	rec.start_ns = 1700000000000000000ull;
	rec.totals = a->s.c;
	fd_counters_add(&rec.totals, &b->s.c);
	rec.totals.bytes[DIR_IN] += 100; /* from closed fds */
	rec.fds_open = 2;
	rec.fds_closed = 5;
	rec.nfds = 2;
	rec.omitted = 3;
	rec.fds = fds;
}

static void teardown(void)
{
	sbuf_free(&out);
}

/* Format rec into out (from empty) and return the text. */
static const char *format(void)
{
	sbuf_free(&out);
	summary_format(&rec, &cfg, &out);
	ck_assert(!out.failed);
	ck_assert_ptr_nonnull(out.p);
	ck_assert_uint_eq(strlen(out.p), out.len);
	return out.p;
}

/* The text of fd's object up to the next fd object (a malloc'ed copy). */
static char *fd_part(const char *line, int fd)
{
	const char *p = uu_json_fd(line, fd), *end = strstr(p + 1, "{\"fd\":");

	return strndup(p, end ? (size_t)(end - p) : strlen(p));
}

static int ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), t = strlen(tail);

	return n >= t && strcmp(s + n - t, tail) == 0;
}

/* Whether python3 parses s as one JSON value (true when it is missing). */
static int python_parses(const char *s)
{
	char dir[64], path[96];
	FILE *f;
	int ok;

	uu_tmpdir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/line.json", dir);
	f = fopen(path, "wb");
	ck_assert_ptr_nonnull(f);
	fputs(s, f);
	fclose(f);
	ok = uu_python_json_lines_ok(path);
	uu_rmtree(dir);
	return ok;
}

/* --- JSON -------------------------------------------------------------- */

START_TEST(test_summary_json_interval_is_one_valid_line_with_exact_numbers)
{
	const char *s = format();
	char *a, *b;

	ck_assert_uint_eq(uu_count_lines(s), 1);
	ck_assert_int_eq(s[out.len - 1], '\n');
	ck_assert(strncmp(s, "{\"type\":\"interval\",", 19) == 0);
	ck_assert_ptr_nonnull(strstr(s, "\"ts\":1700000010.000001,"));
	ck_assert_ptr_nonnull(strstr(s, "\"pid\":4242,\"prog\":\"demo\""));
	ck_assert_ptr_nonnull(strstr(s, "\"start\":1700000000.000000,"));
	ck_assert_ptr_nonnull(strstr(s, "\"totals\":{\"fds_open\":2,\"fds_closed\":5,"));
	/* The first bytes_in is the totals'. */
	ck_assert_uint_eq(uu_json_u64(s, "bytes_in"), 12445);
	ck_assert_uint_eq(uu_json_u64(s, "bytes_out"), 1000678);
	ck_assert_uint_eq(uu_json_u64(s, "calls_out"), 5);
	ck_assert_ptr_nonnull(strstr(s, "\"errors_in\":{\"again\":2,\"intr\":0,\"other\":0}"));
	ck_assert_ptr_null(strstr(s, "close_records_dropped"));
	ck_assert_uint_eq(uu_count(s, "{\"fd\":"), 2);
	ck_assert(strstr(s, "{\"fd\":7,") < strstr(s, "{\"fd\":9,"));
	ck_assert(ends_with(s, "],\"fds_omitted\":3}\n"));

	a = fd_part(s, 7);
	ck_assert_ptr_nonnull(strstr(a, "\"kind\":\"tcp\",\"local\":\"10.0.0.1:1234\",\"peer\":\"10.0.0.2:80\""));
	ck_assert_uint_eq(uu_json_u64(a, "bytes_in"), 12345);
	ck_assert_uint_eq(uu_json_u64(a, "bytes_out"), 678);
	ck_assert_uint_eq(uu_json_u64(a, "calls_in"), 3);
	ck_assert_uint_eq(uu_json_u64(a, "calls_out"), 4);
	ck_assert_ptr_nonnull(strstr(a, "\"errors_out\":{\"again\":0,\"intr\":0,\"other\":1}"));
	ck_assert_ptr_nonnull(strstr(a, "\"sizes_in\":[0,0,0,0,0,0,0,0,0,0,0,0,0,0,1,0,0,0,0,0,0,0,0,0]"));
	ck_assert_ptr_nonnull(strstr(a, "\"sizes_out\":[0,0,0,0,0,0,0,0,0,0,2,0,0,0,0,0,0,0,0,0,0,0,0,0]"));
	ck_assert_ptr_nonnull(strstr(a, "\"rates\":{\"1s\":{\"in\":1000.5,\"out\":20.0,\"res\":1},\"10s\":{\"in\":100.2,\"out\":2.0,\"res\":1},\"60s\":{\"in\":16.8,\"out\":0.0,\"res\":1}}"));
	ck_assert_ptr_nonnull(strstr(a, "\"opened\":1700000000.123456,"));
	ck_assert_ptr_nonnull(strstr(a, "\"last_active\":1700000009.500000}"));
	/* Latency is off by default; close fields only in close records. */
	ck_assert_ptr_null(strstr(s, "latency"));
	ck_assert_ptr_null(strstr(s, "\"closed\""));
	ck_assert_ptr_null(strstr(s, "\"duration\""));

	b = fd_part(s, 9);
	ck_assert_ptr_nonnull(strstr(b, "\"kind\":\"udp\",\"local\":\"\",\"peer\":\"\""));
	ck_assert_uint_eq(uu_json_u64(b, "bytes_out"), 1000000);
	ck_assert_ptr_null(strstr(b, "\"rates\""));
	ck_assert_ptr_nonnull(strstr(b, "\"opened\":null"));
	free(a);
	free(b);
	ck_assert(python_parses(s));
}
END_TEST

/* Issue 15: each span says its tier's resolution, in seconds. */
START_TEST(test_summary_rates_say_each_spans_resolution)
{
	static const char ini[] = "[window]\nbuckets = 86400\n"
				  "spans = 1, 60, 3600, 86400\n";
	const char *s;

	ck_assert_int_eq(config_load_string(&cfg, "t.ini", ini, strlen(ini),
					    NULL, NULL),
			 0);
	fds[0].rate[3][DIR_IN] = 2.5;
	s = format();
	ck_assert_ptr_nonnull(strstr(s, "\"1s\":{\"in\":1000.5,\"out\":20.0,\"res\":1},"));
	ck_assert_ptr_nonnull(strstr(s, "\"60s\":{\"in\":100.2,\"out\":2.0,\"res\":1},"));
	ck_assert_ptr_nonnull(strstr(s, "\"3600s\":{\"in\":16.8,\"out\":0.0,\"res\":60},"));
	ck_assert_ptr_nonnull(strstr(s, "\"86400s\":{\"in\":2.5,\"out\":0.0,\"res\":1440}}"));
	ck_assert(python_parses(s));
	/* The text table's header says it where it is not one bucket. */
	cfg.format = FORMAT_TEXT;
	s = format();
	ck_assert_ptr_nonnull(strstr(s, " in/60s "));
	ck_assert_ptr_nonnull(strstr(s, " in/3600s@60s "));
	ck_assert_ptr_nonnull(strstr(s, " out/86400s@1440s\n"));
	ck_assert_ptr_null(strstr(s, "/1s@"));
}
END_TEST

START_TEST(test_summary_json_appends_to_what_the_buffer_holds)
{
	sbuf_addf(&out, "x");
	summary_format(&rec, &cfg, &out);
	summary_format(&rec, &cfg, &out);
	ck_assert_int_eq(out.p[0], 'x');
	ck_assert_uint_eq(uu_count_lines(out.p), 2);
	ck_assert_uint_eq(uu_count(out.p, "{\"type\":\"interval\""), 2);
}
END_TEST

START_TEST(test_summary_json_reports_dropped_close_records_in_totals)
{
	const char *s;

	rec.close_dropped = 17;
	s = format();
	ck_assert_ptr_nonnull(strstr(s, ",\"close_records_dropped\":17},\"fds\":["));
	ck_assert(python_parses(s));
}
END_TEST

START_TEST(test_summary_json_empty_record_has_empty_fds_array)
{
	const char *s;

	rec.type = SUMMARY_EXIT;
	rec.nfds = 0;
	rec.omitted = 0;
	s = format();
	ck_assert(strncmp(s, "{\"type\":\"exit\",", 15) == 0);
	ck_assert_ptr_nonnull(strstr(s, "\"fds\":[],\"fds_omitted\":0}\n"));
	ck_assert(python_parses(s));
}
END_TEST

/* A recovered exit record from a state file that missed some numbers says
 * so, in both formats; other records never do. */
START_TEST(test_summary_recovered_incomplete_exit_says_so)
{
	const char *s;
	char *line;

	rec.type = SUMMARY_EXIT;
	rec.end = "killed";
	rec.incomplete = true;
	s = format();
	ck_assert(strncmp(s, "{\"type\":\"exit\",\"end\":\"killed\","
			     "\"incomplete\":true,", 44) == 0);
	ck_assert(python_parses(s));
	cfg.format = FORMAT_TEXT;
	s = format();
	line = uu_line(s, 0);
	ck_assert_str_eq(line, "2023-11-14T22:13:30.000Z sockmeter exit "
			       "end=killed incomplete=yes pid=4242 prog=demo "
			       "fds_open=2 fds_closed=5");
	free(line);
	rec.type = SUMMARY_INTERVAL;
	s = format();
	ck_assert_ptr_null(strstr(s, "incomplete"));
	cfg.format = FORMAT_JSON;
	s = format();
	ck_assert_ptr_null(strstr(s, "incomplete"));
}
END_TEST

START_TEST(test_summary_json_close_record_has_closed_duration_and_average)
{
	const char *s;

	rec.type = SUMMARY_CLOSE;
	rec.nfds = 1;
	rec.omitted = 0;
	/* Opened at ...0.123456789, closed 2.5 s later. */
	fds[0].closed_ns = fds[0].s.opened_ns + 2500000000ull;
	s = format();
	ck_assert(strncmp(s, "{\"type\":\"close\",", 16) == 0);
	ck_assert_uint_eq(uu_count(s, "{\"fd\":"), 1);
	ck_assert_ptr_nonnull(strstr(s, "\"closed\":1700000002.623456,"));
	ck_assert_ptr_nonnull(strstr(s, "\"duration\":2.500000,"));
	/* 12345 / 2.5 and 678 / 2.5 */
	ck_assert_ptr_nonnull(strstr(s, "\"avg_rate\":{\"in\":4938.0,\"out\":271.2}"));
	ck_assert(python_parses(s));
}
END_TEST

/* A copy of a shared socket (dup, fork) says so, after duration (where
 * the tools' close-line pattern finds it), and in text at the end. */
START_TEST(test_summary_close_of_a_shared_socket_says_shared)
{
	const char *s, *d, *sh;

	rec.type = SUMMARY_CLOSE;
	rec.nfds = 1;
	rec.omitted = 0;
	fds[0].closed_ns = fds[0].s.opened_ns + 2500000000ull;
	s = format();
	ck_assert_ptr_null(strstr(s, "shared"));
	fds[0].s.shared = true;
	s = format();
	d = strstr(s, "\"duration\":2.500000,");
	sh = strstr(s, ",\"shared\":true");
	ck_assert_ptr_nonnull(d);
	ck_assert_ptr_nonnull(sh);
	ck_assert(sh > d);
	ck_assert(python_parses(s));
	cfg.format = FORMAT_TEXT;
	s = format();
	ck_assert_uint_eq(uu_count_lines(s), 1);
	ck_assert_ptr_nonnull(strstr(s, " duration=2.500s shared=yes\n"));
}
END_TEST

START_TEST(test_summary_json_close_of_inherited_fd_has_no_duration)
{
	const char *s;

	rec.type = SUMMARY_CLOSE;
	rec.fds = &fds[1];
	rec.nfds = 1;
	rec.omitted = 0;
	fds[1].closed_ns = 1700000011000000000ull;
	s = format();
	ck_assert_ptr_nonnull(strstr(s, "\"opened\":null"));
	ck_assert_ptr_nonnull(strstr(s, "\"closed\":1700000011.000000"));
	ck_assert_ptr_null(strstr(s, "duration"));
	ck_assert_ptr_null(strstr(s, "avg_rate"));
	ck_assert(python_parses(s));
}
END_TEST

/* A close record describes its connection only: the process totals live
 * in the interval and exit records, and one closed fd omits nothing. */
START_TEST(test_summary_json_close_record_is_lean_without_totals)
{
	static const char head[] =
		"{\"type\":\"close\",\"ts\":1700000010.000001,\"pid\":4242,"
		"\"prog\":\"demo\",\"start\":1700000000.000000,"
		"\"fds\":[{\"fd\":7,";
	const char *s;

	rec.type = SUMMARY_CLOSE;
	rec.nfds = 1;
	rec.omitted = 0;
	rec.close_dropped = 3;
	fds[0].closed_ns = fds[0].s.opened_ns + 2500000000ull;
	s = format();
	ck_assert_ptr_null(strstr(s, "\"totals\""));
	ck_assert_ptr_null(strstr(s, "fds_open"));
	ck_assert_ptr_null(strstr(s, "close_records_dropped"));
	ck_assert_ptr_null(strstr(s, "fds_omitted"));
	ck_assert(strncmp(s, head, strlen(head)) == 0);
	ck_assert(ends_with(s, "}]}\n"));
	/* the connection's own bytes, once */
	ck_assert_uint_eq(uu_count(s, "\"bytes_in\":"), 1);
	ck_assert_uint_eq(uu_json_u64(s, "bytes_in"), 12345);
	ck_assert_ptr_nonnull(strstr(s, "\"errors_in\":{\"again\":2,\"intr\":0,\"other\":0}"));
	ck_assert(python_parses(s));
}
END_TEST

/* An fd entry leaves out an all-zero error object and an all-zero size
 * histogram; the totals keep every field (their keys say what was on). */
START_TEST(test_summary_json_fd_omits_zero_errors_and_sizes_totals_keep_them)
{
	const char *s;
	char *b, *tot;

	s = format();
	b = fd_part(s, 9); /* no errors, nothing received */
	ck_assert_ptr_null(strstr(b, "errors_"));
	ck_assert_ptr_null(strstr(b, "sizes_in"));
	ck_assert_ptr_nonnull(strstr(b, "\"sizes_out\":[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,1,0,0,0]"));
	ck_assert_ptr_nonnull(strstr(b, "\"calls_in\":0"));
	free(b);
	/* fd 7 has errors in both directions: both kept */
	b = fd_part(s, 7);
	ck_assert_uint_eq(uu_count(b, "\"errors_"), 2);
	free(b);
	tot = strndup(s, (size_t)(strstr(s, "\"fds\":[") - s));
	ck_assert_uint_eq(uu_count(tot, "\"errors_"), 2);
	ck_assert_uint_eq(uu_count(tot, "\"sizes_"), 2);
	free(tot);

	memset(&rec.totals, 0, sizeof(rec.totals));
	s = format();
	tot = strndup(s, (size_t)(strstr(s, "\"fds\":[") - s));
	ck_assert_ptr_nonnull(strstr(tot, "\"errors_in\":{\"again\":0,\"intr\":0,\"other\":0}"));
	ck_assert_ptr_nonnull(strstr(tot, "\"sizes_out\":[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]"));
	free(tot);
	ck_assert(python_parses(s));
}
END_TEST

START_TEST(test_summary_exec_record_says_which_fds_the_exec_closes)
{
	const char *s;
	char *a, *b;

	/* Marked, but not an exec record: nothing said. */
	fds[0].s.close_on_exec = true;
	rec.fds_close_on_exec = 1;
	s = format();
	ck_assert_ptr_null(strstr(s, "close_on_exec"));
	rec.type = SUMMARY_EXIT;
	s = format();
	ck_assert_ptr_null(strstr(s, "close_on_exec"));
	rec.type = SUMMARY_EXEC;
	fds[1].s.shared = true;
	s = format();
	ck_assert(python_parses(s));
	ck_assert_ptr_nonnull(strstr(s, "\"fds_closed\":5,\"fds_close_on_exec\":1,"));
	a = fd_part(s, 7);
	b = fd_part(s, 9);
	ck_assert_ptr_nonnull(strstr(a, ",\"close_on_exec\":true"));
	ck_assert_ptr_null(strstr(a, "shared"));
	ck_assert_ptr_null(strstr(b, "close_on_exec"));
	ck_assert_ptr_nonnull(strstr(b, ",\"shared\":true"));
	free(a);
	free(b);
	cfg.format = FORMAT_TEXT;
	s = format();
	ck_assert_ptr_nonnull(strstr(s, " fds_open=2 fds_closed=5 fds_close_on_exec=1\n"));
	ck_assert_int_eq(uu_count(s, " close_on_exec=yes\n"), 1);
	ck_assert_int_eq(uu_count(s, " shared=yes\n"), 1);
	/* None closed by the exec: the count is left out. */
	rec.fds_close_on_exec = 0;
	fds[0].s.close_on_exec = false;
	fds[1].s.shared = false;
	s = format();
	ck_assert_ptr_null(strstr(s, "close_on_exec"));
}
END_TEST

static TCase *tc_json(void)
{
	TCase *tc = tcase_create("json");

	tcase_add_unchecked_fixture(tc, uu_root_setup, uu_root_teardown);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_summary_json_interval_is_one_valid_line_with_exact_numbers);
	tcase_add_test(tc, test_summary_rates_say_each_spans_resolution);
	tcase_add_test(tc, test_summary_json_appends_to_what_the_buffer_holds);
	tcase_add_test(tc, test_summary_json_reports_dropped_close_records_in_totals);
	tcase_add_test(tc, test_summary_json_empty_record_has_empty_fds_array);
	tcase_add_test(tc, test_summary_recovered_incomplete_exit_says_so);
	tcase_add_test(tc, test_summary_json_close_record_has_closed_duration_and_average);
	tcase_add_test(tc, test_summary_json_close_of_inherited_fd_has_no_duration);
	tcase_add_test(tc, test_summary_json_close_record_is_lean_without_totals);
	tcase_add_test(tc, test_summary_json_fd_omits_zero_errors_and_sizes_totals_keep_them);
	return tc;
}

/* --- categories ---------------------------------------------------------- */

START_TEST(test_summary_json_sizes_off_removes_sizes_keeps_bytes)
{
	const char *s;

	cfg.category[CAT_SIZES] = false;
	s = format();
	ck_assert_ptr_null(strstr(s, "sizes_"));
	ck_assert_uint_eq(uu_json_u64(s, "bytes_in"), 12445);
	ck_assert_uint_eq(uu_count(s, "\"bytes_in\":"), 3);
	ck_assert(python_parses(s));
}
END_TEST

START_TEST(test_summary_json_peers_off_removes_local_and_peer)
{
	const char *s;

	cfg.category[CAT_PEERS] = false;
	s = format();
	ck_assert_ptr_null(strstr(s, "\"local\""));
	ck_assert_ptr_null(strstr(s, "\"peer\""));
	ck_assert_ptr_null(strstr(s, "10.0.0.2"));
	ck_assert_ptr_nonnull(strstr(s, "{\"fd\":7,\"kind\":\"tcp\",\"bytes_in\":12345,"));
	ck_assert(python_parses(s));
}
END_TEST

START_TEST(test_summary_json_each_category_off_removes_only_its_fields)
{
	static const struct {
		enum config_category cat;
		const char *gone;
	} cases[] = {
		{ CAT_BYTES, "\"bytes_" },   { CAT_CALLS, "\"calls_" },
		{ CAT_ERRORS, "\"errors_" }, { CAT_SIZES, "\"sizes_" },
		{ CAT_WINDOWS, "\"rates\"" }, { CAT_PEERS, "\"peer\"" },
	};
	size_t i, j;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *s;

		config_defaults(&cfg);
		cfg.format = FORMAT_JSON;
		cfg.category[cases[i].cat] = false;
		s = format();
		ck_assert_msg(strstr(s, cases[i].gone) == NULL,
			      "%s still present", cases[i].gone);
		for (j = 0; j < sizeof(cases) / sizeof(cases[0]); j++)
			if (j != i)
				ck_assert_msg(strstr(s, cases[j].gone) != NULL,
					      "%s gone with %s off",
					      cases[j].gone, cases[i].gone);
		ck_assert(python_parses(s));
	}
}
END_TEST

START_TEST(test_summary_json_latency_on_adds_latency_fields)
{
	const char *s;

	cfg.category[CAT_LATENCY] = true;
	s = format();
	ck_assert_uint_eq(uu_json_u64(uu_json_fd(s, 7), "latency_ns_in"), 5555);
	ck_assert_uint_eq(uu_json_u64(s, "latency_ns_in"), 5555); /* totals */
	ck_assert_uint_eq(uu_count(s, "\"latency_ns_out\":0"), 3);
}
END_TEST

START_TEST(test_summary_json_every_category_off_is_still_valid)
{
	unsigned c;
	const char *s;

	for (c = 0; c < CAT_COUNT; c++)
		cfg.category[c] = false;
	s = format();
	ck_assert_ptr_nonnull(strstr(s, "\"totals\":{\"fds_open\":2,\"fds_closed\":5},"));
	ck_assert_ptr_nonnull(strstr(s, "{\"fd\":7,\"kind\":\"tcp\",\"opened\":"));
	ck_assert(python_parses(s));
}
END_TEST

static TCase *tc_categories(void)
{
	TCase *tc = tcase_create("categories");

	/* Each case runs python3 on its JSON, one case six times. */
	tcase_set_timeout(tc, 60);
	tcase_add_unchecked_fixture(tc, uu_root_setup, uu_root_teardown);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_summary_json_sizes_off_removes_sizes_keeps_bytes);
	tcase_add_test(tc, test_summary_json_peers_off_removes_local_and_peer);
	tcase_add_test(tc, test_summary_json_each_category_off_removes_only_its_fields);
	tcase_add_test(tc, test_summary_json_latency_on_adds_latency_fields);
	tcase_add_test(tc, test_summary_json_every_category_off_is_still_valid);
	return tc;
}

/* --- escaping ----------------------------------------------------------- */

START_TEST(test_summary_json_escapes_quote_backslash_control_and_invalid_utf8)
{
	const char *s;

	/* quote, backslash, ^A, DEL, a lone 0xff, a valid e-acute, C1's
	 * CSI and last (U+009B, U+009F), U+00A0 (not a control), a
	 * truncated 2-byte sequence at the end */
	rec.prog = "a\"b\\c\x01" "d\x7f" "e\xff" "f\xc3\xa9"
		   "\xc2\x9b" "\xc2\x9f" "\xc2\xa0" "g\n\xc3";
	s = format();
	ck_assert_ptr_nonnull(strstr(s, "\"prog\":\"a\\\"b\\\\c\\u0001d\\u007fe\\ufffdf\xc3\xa9\\u009b\\u009f\xc2\xa0g\\u000a\\ufffd\","));
	ck_assert_uint_eq(uu_count_lines(s), 1);
	ck_assert(uu_utf8_valid((const unsigned char *)s, out.len));
	ck_assert(python_parses(s));
}
END_TEST

START_TEST(test_summary_json_escapes_unix_path_peer)
{
	const char *s;
	struct fd_addr *p = &fds[0].s.peer;
	static const char path[] = "/tmp/we\"ird\\\x02\xfe";

	memset(p, 0, sizeof(*p));
	p->u.un.sun_family = AF_UNIX;
	memcpy(p->u.un.sun_path, path, sizeof(path));
	p->len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) +
			     sizeof(path));
	s = format();
	ck_assert_ptr_nonnull(strstr(s, "\"peer\":\"/tmp/we\\\"ird\\\\\\u0002\\ufffd\""));
	ck_assert(python_parses(s));
}
END_TEST

/*
 * Overlong forms, UTF-16 surrogates and code points above U+10FFFF become
 * U+FFFD: every JSON line is strictly valid UTF-8.
 */
START_TEST(test_summary_json_replaces_overlong_surrogate_and_out_of_range_utf8)
{
	const char *s;

	rec.prog = "x\xe0\x80\x80y\xed\xa0\x80z\xf4\x90\x80\x80w";
	s = format();
	ck_assert_msg(uu_utf8_valid((const unsigned char *)s, out.len),
		      "the line is not valid UTF-8");
	ck_assert_ptr_nonnull(strstr(s, "\\ufffd"));
	ck_assert(python_parses(s));
}
END_TEST

static TCase *tc_escaping(void)
{
	TCase *tc = tcase_create("escaping");

	tcase_add_unchecked_fixture(tc, uu_root_setup, uu_root_teardown);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_summary_json_escapes_quote_backslash_control_and_invalid_utf8);
	tcase_add_test(tc, test_summary_json_escapes_unix_path_peer);
	tcase_add_test(tc, test_summary_json_replaces_overlong_surrogate_and_out_of_range_utf8);
	return tc;
}

/* --- text --------------------------------------------------------------- */

/* The text timestamp is computed without gmtime_r (summary.c's
 * civil_date); gmtime_r is the truth here, around leap days, century
 * years and the ends of months and years. */
START_TEST(test_summary_text_timestamps_agree_with_gmtime)
{
	static const int64_t secs[] = {
		1,          951782400,  951868799,  1709251199, 1709164800,
		4107542400, 4107455999, 2147483647, 94694399,   13574563200,
		13574476800, 16725225599, 1700000010,
	};
	char want[64];
	size_t i;

	cfg.format = FORMAT_TEXT;
	for (i = 0; i < sizeof(secs) / sizeof(secs[0]); i++) {
		time_t t = (time_t)secs[i];
		struct tm tm;

		ck_assert_ptr_nonnull(gmtime_r(&t, &tm));
		strftime(want, sizeof(want), "%Y-%m-%dT%H:%M:%S.987Z", &tm);
		rec.ts_ns = (uint64_t)secs[i] * 1000000000ull + 987654321ull;
		ck_assert_msg(strncmp(format(), want, strlen(want)) == 0,
			      "%lld: %.24s, want %s", (long long)secs[i],
			      out.p, want);
	}
}
END_TEST

/* want must be in the record just formatted. */
static void expect_in_out(const char *want)
{
	ck_assert_msg(strstr(out.p, want), "%s not in %s", want, out.p);
}

/* rec becomes the close record of fd 7, closed at closed_ns, with the
 * tcp_info fields in have. */
static void close_record(unsigned have, uint64_t closed_ns)
{
	rec.type = SUMMARY_CLOSE;
	rec.nfds = 1;
	fds[0].s.ti.have = have;
	fds[0].closed_ns = closed_ns;
}

/* The numbers written without printf (summary.c's sbuf_kv, sbuf_add_ms3,
 * json_ts) read as printf writes them, edge values and random ones. */
START_TEST(test_summary_numbers_without_printf_read_as_printf_writes_them)
{
	static const uint64_t edge[] = { 0, 1, 9, 10, 999, 1000, 1001, 99999,
					 4294967295ull, 18446744073709551615ull };
	uint64_t x = 88172645463325252ull;
	char want[160];
	unsigned i;

	close_record(TI_BASE | TI_MIN_RTT | TI_BYTES, 1700000009000000000ull);
	for (i = 0; i < 3000; i++) {
		uint64_t v;
		uint32_t us;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		v = i < 10 ? edge[i] : x >> (x % 64);
		us = (uint32_t)(i < 10 ? edge[i] : v);
		fds[0].s.ti.rtt_us = us;
		fds[0].s.ti.min_rtt_us = us / 7;
		fds[0].s.ti.bytes_acked = v;
		fds[0].s.c.bytes[DIR_OUT] = v;
		rec.ts_ns = 1700000000000000000ull + v % 100000000000000ull;
		cfg.format = FORMAT_TEXT;
		snprintf(want, sizeof(want),
			 " bytes_out=%" PRIu64 " calls_out=4", v);
		ck_assert_msg(strstr(format(), want), "%s not in %s", want,
			      out.p);
		snprintf(want, sizeof(want),
			 " rtt=%.3fms rttvar=0.000ms min_rtt=%.3fms", us / 1e3,
			 (us / 7) / 1e3);
		ck_assert_msg(strstr(out.p, want), "%s not in %s", want,
			      out.p);
		snprintf(want, sizeof(want), " bytes_acked=%" PRIu64, v);
		ck_assert_msg(strstr(out.p, want), "%s not in %s", want,
			      out.p);
		cfg.format = FORMAT_JSON;
		snprintf(want, sizeof(want),
			 "\"ts\":%" PRIu64 ".%06" PRIu64 ",",
			 rec.ts_ns / 1000000000u,
			 rec.ts_ns % 1000000000u / 1000u);
		ck_assert_msg(strstr(format(), want), "%s not in %s", want,
			      out.p);
		snprintf(want, sizeof(want),
			 "\"rtt_us\":%u,\"rttvar_us\":0,\"min_rtt_us\":%u",
			 us, us / 7);
		ck_assert_msg(strstr(out.p, want), "%s not in %s", want,
			      out.p);
	}
}
END_TEST

/* What summary.c printed with printf before human_u64: the reference. */
static void human_printf(char *buf, size_t cap, double v)
{
	static const char units[] = "BKMGTP";
	unsigned u = 0;

	while (v >= 1024.0 && u < sizeof(units) - 2) {
		v /= 1024.0;
		u++;
	}
	if (u == 0)
		snprintf(buf, cap, "%.0f%c", v, units[u]);
	else
		snprintf(buf, cap, "%.1f%c", v, units[u]);
}

/* A value for the fixed-point test: edge cases first (ties of every
 * decimal place, the 2^52 switch), then random magnitudes. */
static uint64_t fixed_value(unsigned i, uint64_t x)
{
	static const uint64_t edge[] = {
		0, 1, 499, 500, 501, 1500, 2500, 999499, 999500, 999999,
		1000000, 1500000, 2500000, 1000500000ull, 3000500000ull,
		4503599627370495ull, 4503599627370496ull, 4503599627870496ull,
		18446744073709551615ull, 123456789500000ull,
	};

	if (i < sizeof(edge) / sizeof(edge[0]))
		return edge[i];
	if (i % 7 == 0) /* a tie at the third or sixth decimal */
		return (x % 100000000ull) * 1000000ull + 500000ull;
	return x >> (x % 64);
}

/* Durations, the tcp_info limits and the delivery rate, written without
 * printf (summary.c's sbuf_add_fixed, human_u64), read as printf wrote
 * them, ties and values past 2^52 included. */
START_TEST(test_summary_fixed_point_numbers_read_as_printf_writes_them)
{
	uint64_t x = 0x9e3779b97f4a7c15ull;
	char want[200], h[32];
	unsigned i;

	close_record(TI_BASE | TI_LIMITS | TI_DELIVERY, 18446744073709551615ull);
	for (i = 0; i < 20000; i++) {
		uint64_t life, busy, rwnd, snd, rate;

		uu_rand(&x);
		life = fixed_value(i, x);
		busy = fixed_value(i, x * 3) % 1000000000000000ull;
		rwnd = fixed_value(i, x * 5) / 3 % 1000000000000ull;
		snd = fixed_value(i, x * 7) % (busy + 1);
		rate = i % 3 ? fixed_value(i, x * 11) : (x % 100000) * 1024 + 512;
		fds[0].s.opened_ns = fds[0].closed_ns - life;
		fds[0].s.ti.busy_us = busy;
		fds[0].s.ti.rwnd_limited_us = rwnd;
		fds[0].s.ti.sndbuf_limited_us = snd;
		fds[0].s.ti.delivery_rate = rate;
		cfg.format = FORMAT_TEXT;
		format();
		if (fds[0].s.opened_ns) {
			snprintf(want, sizeof(want), " duration=%.3fs",
				 (double)life / 1e9);
			expect_in_out(want);
		}
		snprintf(want, sizeof(want),
			 " busy=%.3fs rwnd_limited=%.3fs sndbuf_limited=%.3fs",
			 busy / 1e6, rwnd / 1e6, snd / 1e6);
		expect_in_out(want);
		human_printf(h, sizeof(h), (double)rate);
		snprintf(want, sizeof(want), " delivery=%s/s ", h);
		expect_in_out(want);
		cfg.format = FORMAT_JSON;
		format();
		if (fds[0].s.opened_ns) {
			snprintf(want, sizeof(want), "\"duration\":%.6f",
				 (double)life / 1e9);
			expect_in_out(want);
		}
	}
}
END_TEST

/* A double for the rate test: edge cases, ties at one decimal (x.25,
 * x.75: exact in binary), then any positive finite bit pattern. */
static double rate_value(unsigned i, uint64_t x)
{
	static const double edge[] = {
		0.0,		0.05,	      0.25,	    0.75,	   1.25,
		2.5,		1023.95,      1024.0,	    1048575.95,	   4.9e-324,
		9007199254740991.0, 9007199254740992.5e3, 9.2233720368547e18,
		9.3e18,		1.7e308,      0.049999999999999996,
	};
	uint64_t bits;
	double d;

	if (i < sizeof(edge) / sizeof(edge[0]))
		return edge[i];
	if (i % 5 == 0)
		return (double)(x % 100000000) + (x & 1 ? 0.25 : 0.75);
	bits = x & 0x7fefffffffffffffull; /* positive and finite */
	memcpy(&d, &bits, sizeof(d));
	if (i % 5 == 1)
		d = (double)(x >> (x % 64)) / 1024.0;
	return d;
}

/* Rates in JSON and in text (human units), written without printf
 * (summary.c's put_double), read as "%.1f" writes them: ties to even,
 * subnormals, and values too big for it (printf's then). */
START_TEST(test_summary_rates_without_printf_read_as_printf_writes_them)
{
	uint64_t x = 0x2545f4914f6cdd1dull;
	char want[400], h[32]; /* summary.c's size: absurd rates are cut */
	unsigned i;

	cfg.nspans = 1;
	rec.nfds = 1;
	for (i = 0; i < 20000; i++) {
		double in, outr;

		uu_rand(&x);
		in = rate_value(i, x);
		outr = rate_value(i + 1, x * 0x9e3779b97f4a7c15ull);
		fds[0].rate[0][DIR_IN] = in;
		fds[0].rate[0][DIR_OUT] = outr;
		cfg.format = FORMAT_JSON;
		format();
		snprintf(want, sizeof(want), ":{\"in\":%.1f,\"out\":%.1f,",
			 in, outr);
		ck_assert_msg(strstr(out.p, want), "%s not in %s", want,
			      out.p);
		cfg.format = FORMAT_TEXT;
		format();
		human_printf(h, sizeof(h), in);
		snprintf(want, sizeof(want), " %14s/s", h);
		human_printf(h, sizeof(h), outr);
		snprintf(want + strlen(want), sizeof(want) - strlen(want),
			 " %14s/s", h);
		ck_assert_msg(strstr(out.p, want), "%s not in %s", want,
			      out.p);
	}
}
END_TEST

START_TEST(test_summary_text_interval_has_header_totals_and_fd_rows)
{
	const char *s;
	char *line;

	cfg.format = FORMAT_TEXT;
	s = format();
	/* header, totals, table header, 2 fds, omitted note */
	ck_assert_uint_eq(uu_count_lines(s), 6);
	ck_assert_int_eq(s[out.len - 1], '\n');
	line = uu_line(s, 0);
	ck_assert_str_eq(line, "2023-11-14T22:13:30.000Z sockmeter interval "
			       "pid=4242 prog=demo fds_open=2 fds_closed=5");
	free(line);
	line = uu_line(s, 1);
	ck_assert_ptr_nonnull(strstr(line, "totals:"));
	ck_assert_ptr_nonnull(strstr(line, " bytes_in=12445"));
	ck_assert_ptr_nonnull(strstr(line, " bytes_out=1000678"));
	ck_assert_ptr_nonnull(strstr(line, " errors_in=again:2,intr:0,other:0"));
	free(line);
	line = uu_line(s, 2);
	ck_assert_ptr_nonnull(strstr(line, "bytes_in"));
	ck_assert_ptr_nonnull(strstr(line, "in/1s"));
	free(line);
	line = uu_line(s, 3);
	ck_assert_ptr_nonnull(strstr(line, "    7 tcp "));
	ck_assert_ptr_nonnull(strstr(line, "10.0.0.1:1234"));
	ck_assert_ptr_nonnull(strstr(line, "10.0.0.2:80"));
	ck_assert_ptr_nonnull(strstr(line, " 12345 "));
	ck_assert_ptr_nonnull(strstr(line, " 678 "));
	ck_assert_ptr_nonnull(strstr(line, " 20B/s"));
	ck_assert_ptr_nonnull(strstr(line, " 100B/s"));
	free(line);
	line = uu_line(s, 4);
	ck_assert_ptr_nonnull(strstr(line, "    9 udp "));
	ck_assert_ptr_nonnull(strstr(line, " 1000000 "));
	ck_assert_ptr_nonnull(strstr(line, " -/s"));
	free(line);
	line = uu_line(s, 5);
	ck_assert_str_eq(line, "  (3 more active fds not shown: top = 20)");
	free(line);
}
END_TEST

START_TEST(test_summary_text_close_is_one_line_with_peer_and_bytes)
{
	const char *s;

	cfg.format = FORMAT_TEXT;
	rec.type = SUMMARY_CLOSE;
	rec.nfds = 1;
	fds[0].closed_ns = fds[0].s.opened_ns + 1500000000ull;
	s = format();
	ck_assert_uint_eq(uu_count_lines(s), 1);
	ck_assert_ptr_nonnull(strstr(s, " sockmeter close pid=4242 prog=demo fd=7 kind=tcp local=10.0.0.1:1234 peer=10.0.0.2:80 bytes_in=12345 calls_in=3 errors_in=again:2,intr:0,other:0 bytes_out=678 calls_out=4 errors_out=again:0,intr:0,other:1 duration=1.500s\n"));
}
END_TEST

START_TEST(test_summary_text_hides_zero_errors_and_dashes_unknown_addresses)
{
	const char *s;

	cfg.format = FORMAT_TEXT;
	rec.type = SUMMARY_CLOSE;
	rec.fds = &fds[1];
	rec.nfds = 1;
	s = format();
	ck_assert_ptr_nonnull(strstr(s, " local=- peer=- "));
	ck_assert_ptr_null(strstr(s, "errors_"));
	ck_assert_ptr_null(strstr(s, "duration"));
}
END_TEST

/* A space in a program name cannot forge a field of a text record: the
 * name stays one word (close records and the header of the others). */
START_TEST(test_summary_text_name_with_spaces_is_one_field)
{
	const char *s;

	cfg.format = FORMAT_TEXT;
	rec.prog = "x fd=9 bytes_out=999999";
	rec.type = SUMMARY_CLOSE;
	rec.nfds = 1;
	s = format();
	ck_assert_ptr_nonnull(strstr(s, " prog=x?fd=9?bytes_out=999999 fd=7 "));
	rec.type = SUMMARY_INTERVAL;
	s = format();
	ck_assert_ptr_nonnull(strstr(s, " prog=x?fd=9?bytes_out=999999 fds_open="));
}
END_TEST

/*
 * A newline in a peer path (chosen by whoever bound the socket) cannot forge
 * a log line: a text close record stays one line.
 */
START_TEST(test_summary_text_close_stays_one_line_with_newline_in_peer_path)
{
	static const char path[] = "/tmp/evil\n2030-01-01T00:00:00.000Z sockmeter close";
	struct fd_addr *p = &fds[0].s.peer;
	const char *s;

	cfg.format = FORMAT_TEXT;
	rec.type = SUMMARY_CLOSE;
	rec.nfds = 1;
	memset(p, 0, sizeof(*p));
	p->u.un.sun_family = AF_UNIX;
	memcpy(p->u.un.sun_path, path, sizeof(path));
	p->len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) +
			     sizeof(path));
	s = format();
	ck_assert_uint_eq(uu_count_lines(s), 1);
}
END_TEST

static TCase *tc_text(void)
{
	TCase *tc = tcase_create("text");

	/* 20,000 numbers compared with printf's: seconds on a loaded machine
	 * (Check's default of 4 s expired once under make test). */
	tcase_set_timeout(tc, 60);

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_summary_text_interval_has_header_totals_and_fd_rows);
	tcase_add_test(tc, test_summary_text_timestamps_agree_with_gmtime);
	tcase_add_test(tc, test_summary_numbers_without_printf_read_as_printf_writes_them);
	tcase_add_test(tc, test_summary_fixed_point_numbers_read_as_printf_writes_them);
	tcase_add_test(tc, test_summary_rates_without_printf_read_as_printf_writes_them);
	tcase_add_test(tc, test_summary_text_close_is_one_line_with_peer_and_bytes);
	tcase_add_test(tc, test_summary_close_of_a_shared_socket_says_shared);
	tcase_add_test(tc, test_summary_exec_record_says_which_fds_the_exec_closes);
	tcase_add_test(tc, test_summary_text_name_with_spaces_is_one_field);
	tcase_add_test(tc, test_summary_text_hides_zero_errors_and_dashes_unknown_addresses);
	tcase_add_test(tc, test_summary_text_close_stays_one_line_with_newline_in_peer_path);
	return tc;
}

/* --- labels and the buffer ------------------------------------------------- */

START_TEST(test_summary_span_label_in_seconds)
{
	static const struct {
		uint64_t bucket_ms;
		uint32_t buckets;
		const char *want;
	} cases[] = {
		{ 1000, 1, "1s" },	{ 500, 1, "0.5s" },
		{ 1000, 60, "60s" },	{ 1000, 10, "10s" },
		{ 100, 3, "0.3s" },	{ 250, 3, "0.75s" },
		{ 3600000, 24, "86400s" }, { 3600000, 86400, "311040000s" },
	};
	char buf[32];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cfg.bucket_ms = cases[i].bucket_ms;
		cfg.span_buckets[1] = cases[i].buckets;
		summary_span_label(&cfg, 1, buf, sizeof(buf));
		ck_assert_str_eq(buf, cases[i].want);
	}
}
END_TEST

START_TEST(test_sbuf_clear_keeps_memory_up_to_keep_and_starts_empty)
{
	struct sbuf b = { 0 };
	char *first;
	unsigned i;

	for (i = 0; i < 3000; i++) /* 15000 bytes: a 16 KB buffer */
		sbuf_addf(&b, "%04u,", i);
	ck_assert_uint_ge(b.cap, 16384);
	first = b.p;
	/* Kept whole: the same memory, empty, and usable again. */
	sbuf_clear(&b, 64 * 1024);
	ck_assert_ptr_eq(b.p, first);
	ck_assert_uint_eq(b.len, 0);
	ck_assert_str_eq(b.p, "");
	sbuf_addf(&b, "again %d", 7);
	ck_assert_str_eq(b.p, "again 7");
	/* Bigger than keep: shrunk in place to keep (whole pages). */
	for (i = 0; i < 3000; i++)
		sbuf_addf(&b, "%04u,", i);
	sbuf_clear(&b, 8192 + 100);
	ck_assert_ptr_eq(b.p, first);
	ck_assert_uint_eq(b.cap, 8192);
	sbuf_addf(&b, "%s", "small");
	ck_assert_str_eq(b.p, "small");
	/* keep 0: released. */
	sbuf_clear(&b, 0);
	ck_assert_ptr_null(b.p);
	ck_assert_uint_eq(b.cap, 0);
	sbuf_addf(&b, "x");
	ck_assert_str_eq(b.p, "x");
	sbuf_free(&b);
}
END_TEST

START_TEST(test_sbuf_addf_grows_past_first_allocation_and_keeps_everything)
{
	struct sbuf b = { 0 };
	unsigned i;

	for (i = 0; i < 3000; i++)
		sbuf_addf(&b, "%04u,", i);
	ck_assert(!b.failed);
	ck_assert_uint_eq(b.len, 15000);
	ck_assert_uint_eq(strlen(b.p), 15000);
	ck_assert(strncmp(b.p, "0000,0001,", 10) == 0);
	ck_assert(strcmp(b.p + b.len - 5, "2999,") == 0);
	sbuf_free(&b);
	ck_assert_ptr_null(b.p);
	ck_assert_uint_eq(b.len, 0);
}
END_TEST

/* --- Prometheus: the kernel's TCP figures as counters ------------------- */

/* A TCP connection's snapshot: counted_in and counted_out counted, and
 * (when sent is not 0) a TCP_INFO reading in ESTABLISHED whose data sent
 * once is sent - retrans, every byte received read. */
static struct fd_snapshot prom_tcp_snap(int fd, uint64_t counted_in,
					uint64_t counted_out,
					uint64_t sent, uint64_t retrans)
{
	struct fd_snapshot s;

	memset(&s, 0, sizeof(s));
	s.fd = fd;
	s.kind = KIND_TCP;
	s.c.bytes[DIR_IN] = counted_in;
	s.c.bytes[DIR_OUT] = counted_out;
	if (!sent)
		return s;
	s.ti.have = TI_BASE | TI_BYTES | TI_LIMITS | TI_BYTES_RETRANS |
		    TI_INQ | TI_OUTQ;
	s.ti.state = 1; /* TCP_ESTABLISHED */
	s.ti.bytes_sent = sent;
	s.ti.bytes_retrans = retrans;
	s.ti.total_retrans = retrans ? 1 : 0;
	s.ti.bytes_received = counted_in;
	s.ti.busy_us = 1000;
	return s;
}

/* The value of the series of name whose labels contain label. */
static double prom_value(const char *text, const char *name,
			 const char *label)
{
	const char *p = text;
	size_t n = strlen(name);

	while ((p = strstr(p, name))) {
		const char *eol = strchr(p, '\n');
		const char *sp;

		if (p[n] == '{' && (!eol || strstr(p, label) < eol) &&
		    strstr(p, label) && (sp = strchr(p, '}')) &&
		    (!eol || sp < eol))
			return strtod(sp + 1, NULL);
		p += n;
	}
	ck_abort_msg("no %s{...%s...} in:\n%s", name, label, text);
	return -1;
}

/* One exposition: the closed connections given to agg already, plus live
 * (NULL: none) open. */
static void prom_expose(struct prom_agg *agg, const struct fd_snapshot *live,
			struct sbuf *b)
{
	static const struct fd_counters dropped[KIND_COUNT];
	static const uint64_t dropped_n[KIND_COUNT];
	struct summary_fd f;

	sbuf_clear(b, 1 << 20);
	prom_agg_begin(agg, dropped, dropped_n, "t", 1, 0, 1000000000ull);
	if (live) {
		memset(&f, 0, sizeof(f));
		f.s = *live;
		prom_agg_live(agg, &f, 0);
	}
	prom_agg_format(agg, &cfg, b);
}

/*
 * The unseen bytes of an open connection can be a call's still under way
 * (the kernel moved them, the call has not returned to be counted): a
 * counter that showed them went down once the call returned (4,781 to 0,
 * seen in a busy run).  And a connection whose close could not read
 * TCP_INFO took its retransmits back out of the counters.  Every TCP
 * counter only grows; unseen bytes count once their connection closed.
 */
START_TEST(test_prom_tcp_counters_never_go_down)
{
	static struct prom_agg agg;
	struct fd_snapshot s;
	struct sbuf b = { 0 };
	const char *unseen = "sockmeter_bytes_unseen_total";
	const char *retr = "sockmeter_tcp_retransmitted_bytes_total";

	memset(&agg, 0, sizeof(agg));
	cfg.format = FORMAT_PROMETHEUS;
	/* Open, a 1,500-byte send under way with 1,000 counted so far; 300
	 * bytes retransmitted. */
	s = prom_tcp_snap(5, 0, 1000, 1800, 300);
	prom_expose(&agg, &s, &b);
	ck_assert_double_eq(prom_value(b.p, unseen, "direction=\"out\""), 0);
	ck_assert_double_eq(prom_value(b.p, retr, "kind=\"tcp\""), 300);
	/* The send returned (1,500 counted); the connection closed without a
	 * TCP_INFO reading. */
	s = prom_tcp_snap(5, 0, 1500, 0, 0);
	prom_agg_closed(&agg, &s);
	prom_expose(&agg, NULL, &b);
	ck_assert_double_eq(prom_value(b.p, unseen, "direction=\"out\""), 0);
	ck_assert_double_eq(prom_value(b.p, retr, "kind=\"tcp\""), 300);
	/* A connection that wrote 700 bytes no wrapped call saw (io_uring),
	 * closed: counted once closed. */
	s = prom_tcp_snap(6, 0, 0, 700, 0);
	prom_agg_closed(&agg, &s);
	prom_expose(&agg, NULL, &b);
	ck_assert_double_eq(prom_value(b.p, unseen, "direction=\"out\""), 700);
	ck_assert_double_eq(prom_value(b.p, retr, "kind=\"tcp\""), 300);
	sbuf_free(&b);
}
END_TEST

static TCase *tc_misc(void)
{
	TCase *tc = tcase_create("labels_and_buffer");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_summary_span_label_in_seconds);
	tcase_add_test(tc, test_sbuf_addf_grows_past_first_allocation_and_keeps_everything);
	tcase_add_test(tc, test_sbuf_clear_keeps_memory_up_to_keep_and_starts_empty);
	tcase_add_test(tc, test_prom_tcp_counters_never_go_down);
	return tc;
}

int main(void)
{
	Suite *s = suite_create("summary");

	suite_add_tcase(s, tc_json());
	suite_add_tcase(s, tc_categories());
	suite_add_tcase(s, tc_escaping());
	suite_add_tcase(s, tc_text());
	suite_add_tcase(s, tc_misc());
	return uu_run(s);
}
