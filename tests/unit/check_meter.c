/*
 * check_meter.c - the metering state of one process (core/meter.h), driven
 * by hand: fake fd numbers, counts added straight into their slots, ticks
 * at chosen times, and the JSON log read back.
 */
#include "../../core/meter.h"
#include "unit_util.h"

#include <arpa/inet.h>
#include <check.h>
#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define FD_CAP 1024
#define MONO0 (1000 * NS_PER_S)          /* monotonic time at start */
#define REAL0 (1700000000ull * NS_PER_S) /* real time at start */

struct reports {
	unsigned n;
	char last[1024];
};

static void on_report(void *ctx, const char *msg)
{
	struct reports *r = ctx;

	r->n++;
	snprintf(r->last, sizeof(r->last), "%s", msg);
}

static char dir[64];
static char log_path[128];
static struct config cfg;
static struct meter m;
static struct reports rep;

/* Time ms milliseconds after start, both clocks. */
static struct meter_time at_ms(uint64_t ms)
{
	struct meter_time t = { MONO0 + ms * 1000000ull,
				REAL0 + ms * 1000000ull };

	return t;
}

static struct meter_time at_s(uint64_t s)
{
	return at_ms(s * 1000);
}

static void setup(void)
{
	uu_tmpdir(dir, sizeof(dir));
	snprintf(log_path, sizeof(log_path), "%s/meter.log", dir);
	memset(&rep, 0, sizeof(rep));
	config_defaults(&cfg);
	cfg.format = FORMAT_JSON;
	snprintf(cfg.log_path, sizeof(cfg.log_path), "%s", log_path);
}

static void teardown(void)
{
	meter_destroy(&m);
	uu_rmtree(dir);
}

/* meter_init with cfg as the test left it. */
static void start(void)
{
	ck_assert_int_eq(meter_init(&m, &cfg, "unitprog", 4242, FD_CAP,
				    at_s(0), on_report, &rep),
			 0);
}

/* A TCP connection on fake fd number fd, opened at second s. */
static void open_tcp(int fd, uint64_t s)
{
	struct fd_addr l = addr4("127.0.0.1", 40000 + (unsigned)fd);
	struct fd_addr p = addr4("10.1.2.3", 443);

	meter_opened(&m, fd, KIND_TCP, at_s(s).real_ns, &l, &p);
}

/* One successful data call moving n bytes, as a wrapper would count it. */
static void move(int fd, enum fd_dir dir_, uint64_t n)
{
	struct fd_slot *s = fdtab_slot(&m.tab, fd);

	ck_assert_ptr_nonnull(s);
	fd_account(s, dir_, (int64_t)n, 0, m.acct);
}

/* One failed data call with errno err. */
static void fail_call(int fd, enum fd_dir dir_, int err)
{
	struct fd_slot *s = fdtab_slot(&m.tab, fd);

	ck_assert_ptr_nonnull(s);
	fd_account(s, dir_, -1, err, m.acct);
}

static int starts_with(const char *s, const char *head)
{
	return strncmp(s, head, strlen(head)) == 0;
}

/* Ticks at every whole second from..to (inclusive). */
static void tick_seconds(uint64_t from, uint64_t to)
{
	uint64_t s;

	for (s = from; s <= to; s++)
		meter_tick(&m, at_s(s));
}

/* The log so far (malloc'ed). */
static char *log_text(void)
{
	return uu_slurp(log_path);
}

/* The rate of span label in direction "in"/"out" inside an fd object. */
static double rate_of(const char *fdpart, const char *label, const char *d)
{
	char pat[32];
	const char *p;

	snprintf(pat, sizeof(pat), "\"%s\":{", label);
	p = strstr(fdpart, pat);
	ck_assert_msg(p != NULL, "no rate %s in %s", label, fdpart);
	return uu_json_double(p, d);
}

/* --- interval records ------------------------------------------------------- */

START_TEST(test_meter_interval_record_appears_at_interval_not_before)
{
	char *log;
	uint64_t k, next;

	start();
	open_tcp(100, 0);
	for (k = 1; k <= 9; k++) {
		move(100, DIR_IN, 1000 * k);
		move(100, DIR_OUT, 10 * k);
		next = meter_tick(&m, at_s(k));
		/* Windows on: the next tick is the next bucket boundary. */
		ck_assert_uint_eq(next, at_s(k + 1).mono_ns);
	}
	log = log_text();
	ck_assert_str_eq(log, ""); /* 9 s: nothing yet */
	free(log);

	move(100, DIR_IN, 10000);
	move(100, DIR_OUT, 100);
	meter_tick(&m, at_s(10));
	log = log_text();
	ck_assert_uint_eq(uu_count_lines(log), 1);
	ck_assert(starts_with(log, "{\"type\":\"interval\",\"ts\":1700000010.000000,"
				   "\"pid\":4242,\"prog\":\"unitprog\","
				   "\"start\":1700000000.000000,\"totals\":{"));
	ck_assert_uint_eq(uu_json_u64(log, "fds_open"), 1);
	ck_assert_uint_eq(uu_json_u64(log, "fds_closed"), 0);
	ck_assert_uint_eq(uu_json_u64(log, "bytes_in"), 55000); /* totals */
	ck_assert_uint_eq(uu_json_u64(uu_json_fd(log, 100), "bytes_in"), 55000);
	ck_assert_uint_eq(uu_json_u64(uu_json_fd(log, 100), "bytes_out"), 550);
	ck_assert_uint_eq(uu_json_u64(uu_json_fd(log, 100), "calls_in"), 10);
	ck_assert_ptr_nonnull(strstr(log, "\"kind\":\"tcp\",\"local\":\"127.0.0.1:40100\",\"peer\":\"10.1.2.3:443\""));
	/* 1s: the last completed bucket, [9 s, 10 s). */
	ck_assert_double_eq(rate_of(uu_json_fd(log, 100), "1s", "in"), 10000.0);
	ck_assert_double_eq(rate_of(uu_json_fd(log, 100), "1s", "out"), 100.0);
	/* 10s and 60s: everything over the 10 s the connection lived. */
	ck_assert_double_eq(rate_of(uu_json_fd(log, 100), "10s", "in"), 5500.0);
	ck_assert_double_eq(rate_of(uu_json_fd(log, 100), "60s", "in"), 5500.0);
	ck_assert_double_eq(rate_of(uu_json_fd(log, 100), "60s", "out"), 55.0);
	ck_assert_ptr_nonnull(strstr(log, "\"opened\":1700000000.000000,\"last_active\":1700000010.000000}"));
	ck_assert_ptr_nonnull(strstr(log, "\"fds_omitted\":0}\n"));
	ck_assert(uu_python_json_lines_ok(log_path));
	free(log);

	/* The next one is due 10 s later, not before. */
	tick_seconds(11, 19);
	log = log_text();
	ck_assert_uint_eq(uu_count_lines(log), 1);
	free(log);
	move(100, DIR_IN, 1);
	meter_tick(&m, at_s(20));
	log = log_text();
	ck_assert_uint_eq(uu_count_lines(log), 2);
	free(log);
	ck_assert_uint_eq(rep.n, 0);
}
END_TEST

START_TEST(test_meter_young_connection_rates_divide_by_the_buckets_it_lived)
{
	char *log;
	const char *f;

	start();
	tick_seconds(1, 8);
	/* Opened between the ticks at 8 s and 9 s. */
	open_tcp(100, 8);
	move(100, DIR_IN, 3000); /* bucket [8 s, 9 s) */
	meter_tick(&m, at_s(9));
	move(100, DIR_IN, 500);  /* bucket [9 s, 10 s) */
	meter_tick(&m, at_s(10));
	log = log_text();
	f = uu_json_fd(log, 100);
	ck_assert_double_eq(rate_of(f, "1s", "in"), 500.0);
	ck_assert_double_eq(rate_of(f, "10s", "in"), 1750.0);
	ck_assert_double_eq(rate_of(f, "60s", "in"), 1750.0);
	free(log);
}
END_TEST

/*
 * A connection opened a sliver before a boundary: no rates from that
 * sliver (1000 bytes in 1 ms would read 1 MB/s); from the next bucket on,
 * a span that reaches back to it divides by the time it lived.
 */
START_TEST(test_meter_connection_opened_just_before_a_boundary_waits_a_bucket)
{
	char *log;
	const char *f;

	start();
	tick_seconds(1, 8);
	meter_opened(&m, 100, KIND_TCP, at_ms(8999).real_ns, NULL, NULL);
	move(100, DIR_IN, 1000); /* the last 1 ms of bucket [8 s, 9 s) */
	meter_tick(&m, at_s(9));
	move(100, DIR_IN, 500); /* bucket [9 s, 10 s) */
	meter_tick(&m, at_s(10));
	log = log_text();
	f = uu_json_fd(log, 100); /* the interval record at 10 s */
	ck_assert_ptr_nonnull(f);
	ck_assert_double_eq(rate_of(f, "1s", "in"), 500.0);
	ck_assert_double_eq_tol(rate_of(f, "10s", "in"), 1500.0 / 1.001, 0.01);
	free(log);
}
END_TEST

/*
 * Buckets follow the monotonic clock; a connection's open time is read on
 * the wall clock.  A wall clock stepped an hour forward since the start
 * (NTP after boot, a VM resumed) must not leave new connections without
 * rates, nor pile their bytes into one bucket.
 */
START_TEST(test_meter_rates_survive_a_wall_clock_step)
{
	const uint64_t step = 3600ull * 1000000000ull;
	struct meter_time t;
	char *log;
	const char *f;

	start();
	tick_seconds(1, 8);
	t = at_s(8);
	meter_opened(&m, 100, KIND_TCP, t.real_ns + step, NULL, NULL);
	move(100, DIR_IN, 3000);
	t = at_s(9);
	t.real_ns += step;
	meter_tick(&m, t);
	move(100, DIR_IN, 500);
	t = at_s(10);
	t.real_ns += step;
	meter_tick(&m, t);
	log = log_text();
	f = uu_json_fd(log, 100);
	ck_assert_ptr_nonnull(f);
	ck_assert_double_eq(rate_of(f, "1s", "in"), 500.0);
	ck_assert_double_eq(rate_of(f, "10s", "in"), 1750.0);
	free(log);
}
END_TEST

START_TEST(test_meter_steady_traffic_gives_exact_rates_on_every_span_after_a_minute)
{
	char *log;
	const char *f;
	uint64_t k;

	start();
	open_tcp(100, 0);
	for (k = 1; k <= 75; k++) {
		move(100, DIR_OUT, 2048);
		meter_tick(&m, at_s(k));
	}
	meter_exit(&m, at_s(75));
	log = log_text();
	f = uu_json_fd(strstr(log, "{\"type\":\"exit\""), 100);
	ck_assert_uint_eq(uu_json_u64(f, "bytes_out"), 75 * 2048);
	ck_assert_double_eq(rate_of(f, "1s", "out"), 2048.0);
	ck_assert_double_eq(rate_of(f, "10s", "out"), 2048.0);
	ck_assert_double_eq(rate_of(f, "60s", "out"), 2048.0);
	ck_assert_double_eq(rate_of(f, "60s", "in"), 0.0);
	free(log);
}
END_TEST

START_TEST(test_meter_burst_in_first_second_leaves_every_span_after_it_passes)
{
	char *log;
	const char *f;

	/* A burst in bucket 0, then silence: each span's sum must fall to
	 * exactly 0 once the burst has left it, never wrap below 0 (the
	 * meter numbers buckets from 0, where window.c once wrapped). */
	start();
	open_tcp(100, 0);
	move(100, DIR_IN, 1000);
	tick_seconds(1, 59);
	meter_exit(&m, at_s(60));
	log = log_text();
	f = uu_json_fd(strstr(log, "{\"type\":\"exit\""), 100);
	ck_assert_double_eq(rate_of(f, "1s", "in"), 0.0);
	ck_assert_double_eq(rate_of(f, "10s", "in"), 0.0);
	/* 60 s: buckets 0..59 still hold the burst. */
	ck_assert_double_eq_tol(rate_of(f, "60s", "in"), 1000.0 / 60, 0.05);
	free(log);

	meter_destroy(&m);
	unlink(log_path);
	start();
	open_tcp(100, 0);
	move(100, DIR_IN, 1000);
	tick_seconds(1, 70);
	meter_exit(&m, at_s(71));
	log = log_text();
	f = uu_json_fd(strstr(log, "{\"type\":\"exit\""), 100);
	ck_assert_double_eq(rate_of(f, "60s", "in"), 0.0);
	free(log);
}
END_TEST

START_TEST(test_meter_top_n_lists_busiest_first_and_counts_omitted)
{
	static const uint64_t bytes[5] = { 100, 500, 300, 400, 200 };
	char *log;
	int fd;

	cfg.top = 2;
	start();
	for (fd = 100; fd < 105; fd++)
		open_tcp(fd, 0);
	tick_seconds(1, 9);
	for (fd = 100; fd < 105; fd++)
		move(fd, DIR_IN, bytes[fd - 100]);
	meter_tick(&m, at_s(10));
	log = log_text();
	ck_assert_uint_eq(uu_count_lines(log), 1);
	ck_assert_uint_eq(uu_count(log, "{\"fd\":"), 2);
	ck_assert(uu_json_has_fd(log, 101));
	ck_assert(uu_json_has_fd(log, 103));
	ck_assert(strstr(log, "{\"fd\":101,") < strstr(log, "{\"fd\":103,"));
	ck_assert_uint_eq(uu_json_u64(log, "fds_omitted"), 3);
	ck_assert_uint_eq(uu_json_u64(log, "fds_open"), 5);
	ck_assert_uint_eq(uu_json_u64(log, "bytes_in"), 1500);
	free(log);
}
END_TEST

START_TEST(test_meter_top_n_with_windows_off_ranks_by_bytes_since_last_record)
{
	char *log;
	char *second;

	cfg.top = 1;
	cfg.category[CAT_WINDOWS] = false;
	start();
	open_tcp(100, 0);
	open_tcp(101, 0);
	move(100, DIR_IN, 5000);
	move(101, DIR_IN, 10);
	/* Without windows the ticker only wakes for drains and records. */
	ck_assert_uint_eq(meter_tick(&m, at_s(1)), at_s(2).mono_ns);
	meter_tick(&m, at_s(10));
	/* Since the first record, 101 moved more than 100. */
	move(100, DIR_IN, 100);
	move(101, DIR_IN, 200);
	meter_tick(&m, at_s(20));
	log = log_text();
	ck_assert_uint_eq(uu_count_lines(log), 2);
	ck_assert_ptr_null(strstr(log, "\"rates\""));
	ck_assert(uu_json_has_fd(log, 100));
	ck_assert(!uu_json_has_fd(strchr(log, '\n'), 100));
	second = uu_line(log, 1);
	ck_assert(uu_json_has_fd(second, 101));
	ck_assert_uint_eq(uu_json_u64(uu_json_fd(second, 101), "bytes_in"), 210);
	ck_assert_uint_eq(uu_json_u64(second, "fds_omitted"), 1);
	free(second);
	free(log);
}
END_TEST

START_TEST(test_meter_fd_idle_since_last_record_is_not_listed)
{
	char *log, *second;

	start();
	open_tcp(100, 0);
	open_tcp(101, 0);
	move(100, DIR_IN, 10);
	move(101, DIR_IN, 20);
	tick_seconds(1, 10);
	move(101, DIR_OUT, 5);
	tick_seconds(11, 20);
	log = log_text();
	ck_assert_uint_eq(uu_count_lines(log), 2);
	ck_assert(uu_json_has_fd(log, 100));
	second = uu_line(log, 1);
	ck_assert(!uu_json_has_fd(second, 100));
	ck_assert(uu_json_has_fd(second, 101));
	ck_assert_uint_eq(uu_json_u64(second, "fds_open"), 2);
	ck_assert_uint_eq(uu_json_u64(second, "bytes_in"), 30);
	ck_assert_uint_eq(uu_json_u64(second, "fds_omitted"), 0);
	free(second);
	free(log);
}
END_TEST

START_TEST(test_meter_only_failed_calls_count_as_activity)
{
	char *log;

	start();
	open_tcp(100, 0);
	tick_seconds(1, 9);
	fail_call(100, DIR_IN, EAGAIN);
	meter_tick(&m, at_s(10));
	log = log_text();
	ck_assert(uu_json_has_fd(log, 100));
	ck_assert_ptr_nonnull(strstr(log, "\"errors_in\":{\"again\":1,"));
	free(log);
}
END_TEST

START_TEST(test_meter_set_addrs_shows_new_peer)
{
	struct fd_addr p = addr4("192.0.2.9", 8080);
	char *log;

	start();
	meter_opened(&m, 100, KIND_TCP, at_s(0).real_ns, NULL, NULL);
	meter_set_addrs(&m, 100, NULL, &p);
	move(100, DIR_OUT, 1);
	tick_seconds(1, 10);
	log = log_text();
	ck_assert_ptr_nonnull(strstr(log, "\"local\":\"\",\"peer\":\"192.0.2.9:8080\""));
	free(log);
}
END_TEST

/*
 * Records between bucket boundaries leave the window alone: the 1s rate is
 * always the bytes of the last whole bucket, never part of the current one.
 */
START_TEST(test_meter_records_between_boundaries_rate_only_whole_buckets)
{
	char *log, *p, *line;
	uint64_t ms;
	int n = 0;

	cfg.interval_ms = 250;
	start();
	open_tcp(100, 0);
	/* Ticks every 250 ms, as the ticker makes them: on each bucket
	 * boundary, and for each record in between. */
	for (ms = 250; ms <= 3000; ms += 250) {
		move(100, DIR_OUT, 1000);      /* 4000 B/s in [0 s, 1 s) */
		if (ms > 1000)
			move(100, DIR_OUT, 1000); /* then 8000 B/s */
		meter_tick(&m, at_ms(ms));
	}
	log = log_text();
	for (p = log; (p = strstr(p, "\"type\":\"interval\"")); p++) {
		line = uu_line_with(p, "\"type\":\"interval\"");
		if (strstr(line, "\"rates\"")) {
			double r = rate_of(uu_json_fd(line, 100), "1s", "out");
			double ts = uu_json_double(line, "ts") - 1700000000.0;

			ck_assert_msg(r == (ts < 2.0 ? 4000.0 : 8000.0),
				      "1s rate %.1f at +%.3f s", r, ts);
			n++;
		} else {
			/* No whole bucket yet: no rates rather than 0. */
			ck_assert(uu_json_double(line, "ts") < 1700000001.0);
		}
		free(line);
	}
	ck_assert_int_ge(n, 6);
	free(log);
}
END_TEST

static TCase *tc_interval(void)
{
	TCase *tc = tcase_create("interval");

	tcase_add_unchecked_fixture(tc, uu_root_setup, uu_root_teardown);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_meter_interval_record_appears_at_interval_not_before);
	tcase_add_test(tc, test_meter_records_between_boundaries_rate_only_whole_buckets);
	tcase_add_test(tc, test_meter_young_connection_rates_divide_by_the_buckets_it_lived);
	tcase_add_test(tc, test_meter_connection_opened_just_before_a_boundary_waits_a_bucket);
	tcase_add_test(tc, test_meter_rates_survive_a_wall_clock_step);
	tcase_add_test(tc, test_meter_steady_traffic_gives_exact_rates_on_every_span_after_a_minute);
	tcase_add_test(tc, test_meter_burst_in_first_second_leaves_every_span_after_it_passes);
	tcase_add_test(tc, test_meter_top_n_lists_busiest_first_and_counts_omitted);
	tcase_add_test(tc, test_meter_top_n_with_windows_off_ranks_by_bytes_since_last_record);
	tcase_add_test(tc, test_meter_fd_idle_since_last_record_is_not_listed);
	tcase_add_test(tc, test_meter_only_failed_calls_count_as_activity);
	tcase_add_test(tc, test_meter_set_addrs_shows_new_peer);
	return tc;
}

/* --- close and exit records ------------------------------------------------- */

START_TEST(test_meter_close_record_has_exact_lifetime_counters_no_totals)
{
	char *log, *line;
	const char *f;

	start();
	open_tcp(100, 0);
	move(100, DIR_IN, 700);
	tick_seconds(1, 2);
	move(100, DIR_IN, 300);
	move(100, DIR_OUT, 42);
	meter_closed(&m, 100, at_ms(2500).real_ns);
	/* Nothing is written by the close itself: the ticker drains. */
	log = log_text();
	ck_assert_str_eq(log, "");
	free(log);
	meter_tick(&m, at_s(3));
	log = log_text();
	ck_assert_uint_eq(uu_count_lines(log), 1);
	line = uu_line(log, 0);
	ck_assert(starts_with(line, "{\"type\":\"close\",\"ts\":1700000003.000000,"));
	/* Lean: the process totals are in interval and exit records only. */
	ck_assert_ptr_null(strstr(line, "\"totals\""));
	f = uu_json_fd(line, 100);
	ck_assert_uint_eq(uu_count(line, "{\"fd\":"), 1);
	ck_assert_uint_eq(uu_json_u64(f, "bytes_in"), 1000);
	ck_assert_uint_eq(uu_json_u64(f, "bytes_out"), 42);
	ck_assert_uint_eq(uu_json_u64(f, "calls_in"), 2);
	ck_assert_ptr_null(strstr(f, "\"rates\""));
	ck_assert_ptr_nonnull(strstr(f, "\"opened\":1700000000.000000,"));
	ck_assert_ptr_nonnull(strstr(f, "\"last_active\":1700000002.500000,"));
	ck_assert_ptr_nonnull(strstr(f, "\"closed\":1700000002.500000,\"duration\":2.500000,\"avg_rate\":{\"in\":400.0,\"out\":16.8}}"));
	free(line);
	free(log);

	/* The closed fd is in no later interval record, but in the totals. */
	tick_seconds(4, 10);
	log = log_text();
	ck_assert_uint_eq(uu_count_lines(log), 2);
	line = uu_line(log, 1);
	ck_assert(starts_with(line, "{\"type\":\"interval\""));
	ck_assert(!uu_json_has_fd(line, 100));
	ck_assert_uint_eq(uu_json_u64(line, "fds_open"), 0);
	ck_assert_uint_eq(uu_json_u64(line, "fds_closed"), 1);
	ck_assert_uint_eq(uu_json_u64(line, "bytes_in"), 1000);
	free(line);
	free(log);
	ck_assert(uu_python_json_lines_ok(log_path));
}
END_TEST

/* A close pushed between the moment the ticker took its time and its drain
 * (here: a tick whose now is before the close) is in that batch: its
 * record, and the interval record whose totals count it, are not older
 * than the close. */
START_TEST(test_meter_record_is_never_older_than_the_closes_it_holds)
{
	char *log, *line;

	start();
	open_tcp(100, 0);
	move(100, DIR_OUT, 10);
	meter_closed(&m, 100, at_ms(10250).real_ns);
	meter_tick(&m, at_s(10));
	log = log_text();
	ck_assert_uint_eq(uu_count_lines(log), 2);
	line = uu_line(log, 0);
	ck_assert(starts_with(line, "{\"type\":\"close\",\"ts\":1700000010.250000,"));
	ck_assert_ptr_nonnull(strstr(line, "\"closed\":1700000010.250000,"));
	free(line);
	line = uu_line(log, 1);
	ck_assert(starts_with(line, "{\"type\":\"interval\",\"ts\":1700000010.250000,"));
	ck_assert_uint_eq(uu_json_u64(line, "fds_closed"), 1);
	free(line);
	free(log);
}
END_TEST

START_TEST(test_meter_close_of_untracked_or_unknown_fd_writes_nothing)
{
	char *log;

	start();
	meter_opened(&m, 100, KIND_PIPE, at_s(0).real_ns, NULL, NULL);
	meter_closed(&m, 100, at_s(1).real_ns);
	meter_closed(&m, 101, at_s(1).real_ns);
	meter_closed(&m, 5000, at_s(1).real_ns);
	meter_closed(&m, -1, at_s(1).real_ns);
	meter_tick(&m, at_s(1));
	log = log_text();
	ck_assert_str_eq(log, "");
	free(log);
}
END_TEST

START_TEST(test_meter_reopen_over_unseen_close_writes_stale_close_record)
{
	char *log;
	const char *f;

	start();
	open_tcp(100, 0);
	move(100, DIR_IN, 64);
	tick_seconds(1, 3);
	/* fd 100 reused without a close we saw. */
	meter_opened(&m, 100, KIND_UDP, at_s(3).real_ns, NULL, NULL);
	move(100, DIR_IN, 8);
	meter_tick(&m, at_s(4));
	log = log_text();
	ck_assert_uint_eq(uu_count_lines(log), 1);
	f = uu_json_fd(log, 100);
	ck_assert(starts_with(log, "{\"type\":\"close\""));
	ck_assert_ptr_nonnull(strstr(f, "\"kind\":\"tcp\""));
	ck_assert_uint_eq(uu_json_u64(f, "bytes_in"), 64);
	free(log);
	tick_seconds(5, 10);
	log = log_text();
	f = uu_json_fd(strstr(log, "{\"type\":\"interval\""), 100);
	ck_assert_ptr_nonnull(strstr(f, "\"kind\":\"udp\""));
	ck_assert_uint_eq(uu_json_u64(f, "bytes_in"), 8);
	/* 8 bytes over the 7 buckets 3..9 it lived, printed as 1.1 */
	ck_assert_double_eq_tol(rate_of(f, "10s", "in"), 8.0 / 7, 0.05);
	free(log);
}
END_TEST

/* A lifecycle call that gave up on a slot (a signal handler on the
 * thread holding it) marks it: the ticker's reap retires the connection
 * through a claimed place of the close queue (a kill in the middle loses
 * nothing), and its close record comes out whole. */
START_TEST(test_meter_reap_of_a_slot_given_up_writes_its_close_record)
{
	char *log;
	const char *f;

	start();
	open_tcp(101, 0);
	move(101, DIR_OUT, 640);
	__atomic_store_n(&m.tab.slots[101].recheck, 1, __ATOMIC_RELEASE);
	meter_tick(&m, at_s(1));
	ck_assert_uint_eq(m.tab.slots[101].recheck, 0);
	ck_assert_uint_eq(m.tab.slots[101].kind, KIND_UNKNOWN);
	log = log_text();
	f = uu_json_fd(log, 101);
	ck_assert(starts_with(log, "{\"type\":\"close\""));
	ck_assert_uint_eq(uu_json_u64(f, "bytes_out"), 640);
	free(log);
}
END_TEST

START_TEST(test_meter_exit_record_totals_include_closed_fds)
{
	char *log, *line;

	start();
	open_tcp(100, 0);
	open_tcp(101, 0);
	move(100, DIR_IN, 1000);
	move(101, DIR_IN, 234);
	move(101, DIR_OUT, 5);
	tick_seconds(1, 3);
	meter_closed(&m, 100, at_s(3).real_ns);
	meter_exit(&m, at_s(4));
	log = log_text();
	ck_assert_uint_eq(uu_count_lines(log), 2);
	line = uu_line(log, 1);
	ck_assert(starts_with(line, "{\"type\":\"exit\",\"ts\":1700000004.000000,"));
	ck_assert_ptr_nonnull(strstr(line, "\"totals\":{\"fds_open\":1,\"fds_closed\":1,\"bytes_in\":1234,\"calls_in\":2,\"bytes_out\":5,\"calls_out\":1,"));
	/* Lists the open fds, idle ones included; not the closed one. */
	ck_assert(!uu_json_has_fd(line, 100));
	ck_assert(uu_json_has_fd(line, 101));
	free(line);
	free(log);

	/* Finished: later ticks and exits write nothing. */
	move(101, DIR_IN, 1);
	meter_tick(&m, at_s(10));
	meter_exit(&m, at_s(11));
	log = log_text();
	ck_assert_uint_eq(uu_count_lines(log), 2);
	free(log);
	ck_assert(uu_python_json_lines_ok(log_path));
}
END_TEST

/*
 * A data call that finishes after another thread closed its fd (a stray,
 * fdtab_sweep) is in the next interval record's totals and in the exit
 * record's, once, even though its fd is never reopened.
 */
/* Number key of the first record of type ("interval", "close"...) in the
 * log, which must hold one. */
static uint64_t first_record_u64(const char *type, const char *key)
{
	char needle[64], *log = log_text(), *line;
	uint64_t v;

	snprintf(needle, sizeof(needle), "\"type\":\"%s\"", type);
	line = uu_line_with(log, needle);
	ck_assert_msg(line != NULL, "no %s record", type);
	v = uu_json_u64(line, key);
	free(line);
	free(log);
	return v;
}

/*
 * A close made by another thread while the exit record is being made:
 * its slot is retired before its record reaches the queue, and a record
 * taken in between had the connection nowhere (gdbus's worker thread
 * closes the bus socket while main() exits: its bytes were lost about
 * one run in five).  Here the closing thread stops 30 ms between the two
 * steps, as a thread preempted there would; the exit record must wait
 * for it and hold the bytes.
 */
struct slow_close {
	int fd;
	int retired; /* atomic: the slot is gone, the record not pushed */
};

static void *slow_closer(void *arg)
{
	struct slow_close *c = arg;
	struct fd_snapshot snap;
	struct timespec pause = {0, 30000000};
	uint32_t *inflight = meter_inflight_enter(&m);

	ck_assert(fdtab_retire(&m.tab, c->fd, &snap));
	__atomic_store_n(&c->retired, 1, __ATOMIC_SEQ_CST);
	nanosleep(&pause, NULL);
	closeq_push(&m.q, &snap, at_s(3).real_ns);
	meter_inflight_leave(inflight);
	return NULL;
}

START_TEST(test_meter_exit_record_waits_for_a_close_under_way)
{
	struct slow_close c = {100, 0};
	char *log, *line;
	pthread_t t;

	start();
	open_tcp(100, 0);
	move(100, DIR_IN, 1000);
	tick_seconds(1, 2);
	ck_assert_int_eq(pthread_create(&t, NULL, slow_closer, &c), 0);
	while (!__atomic_load_n(&c.retired, __ATOMIC_SEQ_CST))
		sched_yield();
	meter_exit(&m, at_s(4));
	pthread_join(t, NULL);
	log = log_text();
	line = uu_line_with(log, "\"type\":\"exit\"");
	ck_assert_ptr_nonnull(line);
	ck_assert_uint_eq(uu_json_u64(line, "bytes_in"), 1000);
	ck_assert_uint_eq(uu_json_u64(line, "fds_closed"), 1);
	free(line);
	line = uu_line_with(log, "\"type\":\"close\"");
	ck_assert_ptr_nonnull(line);
	ck_assert_uint_eq(uu_json_u64(line, "bytes_in"), 1000);
	free(line);
	free(log);
}
END_TEST

START_TEST(test_meter_call_finishing_after_close_is_in_totals_once)
{
	struct fd_slot *s;

	start();
	open_tcp(100, 0);
	move(100, DIR_OUT, 1000);
	s = fdtab_slot(&m.tab, 100);
	ck_assert_ptr_nonnull(s);
	meter_closed(&m, 100, at_s(1).real_ns);
	fd_account(s, DIR_OUT, 24, 0, m.acct);
	tick_seconds(2, 10);
	ck_assert_uint_eq(first_record_u64("interval", "bytes_out"), 1024);
	ck_assert_uint_eq(first_record_u64("interval", "calls_out"), 2);
	ck_assert_uint_eq(first_record_u64("interval", "fds_closed"), 1);
	/* The close record has the connection's own bytes only. */
	ck_assert_uint_eq(first_record_u64("close", "bytes_out"), 1000);
	fd_account(s, DIR_OUT, 6, 0, m.acct);
	meter_exit(&m, at_s(11));
	ck_assert_uint_eq(first_record_u64("exit", "bytes_out"), 1030);
	ck_assert_uint_eq(first_record_u64("exit", "calls_out"), 3);
	ck_assert_uint_eq(first_record_u64("exit", "fds_closed"), 1);
}
END_TEST

START_TEST(test_meter_exit_without_any_tracked_fd_writes_no_log)
{
	start();
	meter_opened(&m, 100, KIND_FILE, at_s(0).real_ns, NULL, NULL);
	tick_seconds(1, 9);
	meter_exit(&m, at_s(9));
	ck_assert_int_ne(access(log_path, F_OK), 0);
}
END_TEST

/*
 * A close record carries no totals (lean records); the next interval
 * record's totals count the closed fd and the open one, so totals never
 * fall from one record to the next.
 */
START_TEST(test_meter_totals_after_a_close_count_open_fds_too)
{
	char *log, *line;

	start();
	open_tcp(100, 0);
	open_tcp(101, 0);
	move(100, DIR_IN, 1000);
	move(101, DIR_IN, 1000);
	tick_seconds(1, 10);
	meter_closed(&m, 100, at_s(10).real_ns);
	meter_tick(&m, at_s(11));
	log = log_text();
	line = uu_line_with(log, "\"type\":\"close\"");
	ck_assert_ptr_nonnull(line);
	ck_assert_ptr_null(strstr(line, "fds_open"));
	free(line);
	free(log);
	tick_seconds(12, 20);
	log = log_text();
	line = uu_line(log, uu_count_lines(log) - 1);
	ck_assert(starts_with(line, "{\"type\":\"interval\""));
	ck_assert_uint_eq(uu_json_u64(line, "fds_open"), 1);
	ck_assert_uint_eq(uu_json_u64(line, "fds_closed"), 1);
	ck_assert_uint_eq(uu_json_u64(line, "bytes_in"), 2000);
	free(line);
	free(log);
}
END_TEST

/*
 * Event counters (errors, sizes) are exact past 2^32 in interval, close
 * and exit records, whether ticks came in between or not (they used to be
 * 32-bit and relied on the ticker folding them into carries).
 */
START_TEST(test_meter_event_counters_stay_exact_past_2_pow_32_with_or_without_ticks)
{
	struct fd_slot *slot;
	char *log, *line;
	const char *f;

	start();
	open_tcp(100, 0);
	open_tcp(101, 0);
	slot = fdtab_slot(&m.tab, 100);
	slot->c.errors[DIR_IN][ERR_AGAIN] = (1u << 31) + 7;
	slot->c.calls[DIR_IN] = (1u << 31) + 7;
	tick_seconds(1, 2);
	/* Another 2^31 + 2^30 calls fail before the next ticks. */
	slot->c.errors[DIR_IN][ERR_AGAIN] += (1u << 31) + (1u << 30);
	slot->c.calls[DIR_IN] += (1u << 31) + (1u << 30);
	tick_seconds(3, 10);
	log = log_text();
	line = uu_line_with(log, "\"type\":\"interval\"");
	ck_assert_ptr_nonnull(line);
	f = uu_json_fd(line, 100);
	ck_assert_uint_eq(uu_json_u64(f, "again"), (1ull << 32) + (1u << 30) + 7);
	free(line);
	free(log);
	meter_closed(&m, 100, at_s(10).real_ns);
	meter_tick(&m, at_s(11));
	log = log_text();
	line = uu_line_with(log, "\"type\":\"close\"");
	ck_assert_ptr_nonnull(line);
	f = uu_json_fd(line, 100);
	ck_assert_uint_eq(uu_json_u64(f, "again"), (1ull << 32) + (1u << 30) + 7);
	free(line);
	free(log);
	/* No tick at all between the counts and the exit record. */
	slot = fdtab_slot(&m.tab, 101);
	slot->c.errors[DIR_OUT][ERR_OTHER] = (1ull << 33) + 3;
	slot->c.calls[DIR_OUT] = (1ull << 33) + 3;
	meter_exit(&m, at_s(12));
	log = log_text();
	line = uu_line_with(log, "\"type\":\"exit\"");
	ck_assert_ptr_nonnull(line);
	f = strstr(uu_json_fd(line, 101), "\"errors_out\"");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(uu_json_u64(f, "other"), (1ull << 33) + 3);
	free(line);
	free(log);
}
END_TEST

START_TEST(test_meter_close_record_has_kernel_view_unseen_bytes_and_peer_name)
{
	static struct names names = NAMES_INIT;
	static char buf[3000];
	struct fd_addr l = addr4("127.0.0.1", 1), p = addr4("127.0.0.1", 2);
	const struct sockaddr *sa = &p.u.sa;
	char *log;
	int c, s;

	uu_tcp_pair(&c, &s);
	start();
	names_add(&names, "loopback.test", &sa, 1, 2500000);
	m.names = &names;
	meter_opened(&m, c, KIND_TCP, at_s(1).real_ns, &l, &p);
	/* 3000 bytes sent, 1000 of them through a "wrapped" call. */
	ck_assert_int_eq(write(c, buf, sizeof(buf)), (int)sizeof(buf));
	move(c, DIR_OUT, 1000);
	ck_assert_int_eq(read(s, buf, sizeof(buf)) > 0, 1);
	meter_closed(&m, c, at_s(2).real_ns);
	meter_tick(&m, at_s(2));
	log = log_text();
	ck_assert_ptr_nonnull(strstr(log, "\"tcp\":{\"state\":1,"));
	ck_assert_ptr_nonnull(strstr(log, "\"bytes_in_unseen\":0,\"bytes_out_unseen\":2000}"));
	ck_assert_ptr_nonnull(strstr(log, "\"peer_name\":\"loopback.test\",\"lookup_ms\":2.500"));
	free(log);
	close(c);
	close(s);
}
END_TEST

START_TEST(test_meter_tcp_info_and_names_off_leave_no_trace)
{
	static struct names names = NAMES_INIT;
	struct fd_addr l = addr4("127.0.0.1", 1), p = addr4("127.0.0.1", 2);
	const struct sockaddr *sa = &p.u.sa;
	char *log;
	int c, s;

	uu_tcp_pair(&c, &s);
	cfg.category[CAT_TCP_INFO] = false;
	cfg.category[CAT_NAMES] = false;
	start();
	names_add(&names, "loopback.test", &sa, 1, 1);
	m.names = &names;
	meter_opened(&m, c, KIND_TCP, at_s(1).real_ns, &l, &p);
	ck_assert_int_eq(write(c, "abc", 3), 3);
	meter_closed(&m, c, at_s(2).real_ns);
	meter_exit(&m, at_s(2));
	log = log_text();
	ck_assert_ptr_null(strstr(log, "\"tcp\":{"));
	ck_assert_ptr_null(strstr(log, "unseen"));
	ck_assert_ptr_null(strstr(log, "peer_name"));
	free(log);
	close(c);
	close(s);
}
END_TEST

static TCase *tc_close(void)
{
	TCase *tc = tcase_create("close_and_exit");

	tcase_add_test(tc, test_meter_event_counters_stay_exact_past_2_pow_32_with_or_without_ticks);
	tcase_add_unchecked_fixture(tc, uu_root_setup, uu_root_teardown);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_meter_close_record_has_exact_lifetime_counters_no_totals);
	tcase_add_test(tc, test_meter_record_is_never_older_than_the_closes_it_holds);
	tcase_add_test(tc, test_meter_close_of_untracked_or_unknown_fd_writes_nothing);
	tcase_add_test(tc, test_meter_reopen_over_unseen_close_writes_stale_close_record);
	tcase_add_test(tc, test_meter_reap_of_a_slot_given_up_writes_its_close_record);
	tcase_add_test(tc, test_meter_exit_record_totals_include_closed_fds);
	tcase_add_test(tc, test_meter_exit_record_waits_for_a_close_under_way);
	tcase_add_test(tc, test_meter_call_finishing_after_close_is_in_totals_once);
	tcase_add_test(tc, test_meter_exit_without_any_tracked_fd_writes_no_log);
	tcase_add_test(tc, test_meter_totals_after_a_close_count_open_fds_too);
	tcase_add_test(tc, test_meter_close_record_has_kernel_view_unseen_bytes_and_peer_name);
	tcase_add_test(tc, test_meter_tcp_info_and_names_off_leave_no_trace);
	return tc;
}

/* --- the close queue ---------------------------------------------------------- */

#define BURST (CLOSEQ_CAP + 904)

/* BURST connections on fd 200, connection i with i + 1 bytes in, closed
 * before any drain; then a tick and the exit record. */
static void burst_of_closes(void)
{
	uint64_t i;

	for (i = 0; i < BURST; i++) {
		open_tcp(200, 0);
		move(200, DIR_IN, i + 1);
		meter_closed(&m, 200, at_s(0).real_ns + i);
	}
	meter_tick(&m, at_s(1));
	meter_exit(&m, at_s(2));
}

START_TEST(test_meter_more_closes_than_queue_keeps_totals_exact_and_counts_dropped)
{
	uint64_t sum_listed = 0;
	unsigned n_close = 0;
	char *log, *line, *p;

	start();
	burst_of_closes();
	log = log_text();
	ck_assert_uint_eq(uu_count_lines(log), CLOSEQ_CAP + 1);
	for (p = log; (p = strstr(p, "{\"type\":\"close\"")) != NULL; p++) {
		sum_listed += uu_json_u64(uu_json_fd(p, 200), "bytes_in");
		n_close++;
	}
	ck_assert_uint_eq(n_close, CLOSEQ_CAP);
	/* The first CLOSEQ_CAP closes got records: 1 + ... + CAP. */
	ck_assert_uint_eq(sum_listed,
			  (uint64_t)CLOSEQ_CAP * (CLOSEQ_CAP + 1) / 2);
	line = uu_line_with(log, "\"type\":\"exit\"");
	ck_assert_ptr_nonnull(line);
	ck_assert_uint_eq(uu_json_u64(line, "fds_closed"), BURST);
	ck_assert_uint_eq(uu_json_u64(line, "bytes_in"),
			  (uint64_t)BURST * (BURST + 1) / 2);
	ck_assert_uint_eq(uu_json_u64(line, "calls_in"), BURST);
	ck_assert_uint_eq(uu_json_u64(line, "close_records_dropped"), 904);
	free(line);
	free(log);
}
END_TEST

/* close_records = off: the same burst, totals as exact, and no record is
 * said to be lost, since none was wanted (close_records_dropped showed
 * 172 to 3,370 in a helper's runs with records off). */
START_TEST(test_meter_records_off_burst_says_nothing_dropped)
{
	char *log, *line;

	cfg.close_records = CLOSE_RECORDS_OFF;
	start();
	burst_of_closes();
	log = log_text();
	ck_assert_ptr_null(strstr(log, "\"type\":\"close\""));
	ck_assert_ptr_null(strstr(log, "close_records_dropped"));
	line = uu_line_with(log, "\"type\":\"exit\"");
	ck_assert_ptr_nonnull(line);
	ck_assert_uint_eq(uu_json_u64(line, "fds_closed"), BURST);
	ck_assert_uint_eq(uu_json_u64(line, "bytes_in"),
			  (uint64_t)BURST * (BURST + 1) / 2);
	free(line);
	free(log);
}
END_TEST

START_TEST(test_meter_queue_is_reusable_after_drain)
{
	uint64_t i;
	char *log, *line;

	start();
	for (i = 0; i < 3 * CLOSEQ_CAP; i++) {
		open_tcp(200, 0);
		move(200, DIR_OUT, 2);
		meter_closed(&m, 200, at_s(0).real_ns);
		if (i % 1000 == 999)
			meter_tick(&m, at_ms(i));
	}
	meter_exit(&m, at_s(20));
	log = log_text();
	ck_assert_uint_eq(uu_count(log, "{\"type\":\"close\""),
			  3 * CLOSEQ_CAP);
	line = uu_line_with(log, "\"type\":\"exit\"");
	ck_assert_uint_eq(uu_json_u64(line, "bytes_out"), 6 * CLOSEQ_CAP);
	ck_assert_ptr_null(strstr(log, "close_records_dropped"));
	free(line);
	free(log);
}
END_TEST

/* --- close records of a refused batch ------------------------------------- */

/* A log whose directory is missing (as for a daemon that had switched to
 * a user who may not write it: dante's children) refuses a batch; made
 * again, the next batch writes the held close records first, and nothing
 * is counted as dropped in the end.  Before, those records were lost
 * (counted): one a run of dante's main process. */
START_TEST(test_meter_refused_close_records_are_written_with_the_next_batch)
{
	char sub[96], *log, *p, *line;
	uint64_t want = 1, got;
	int i;

	snprintf(sub, sizeof(sub), "%s/later", dir);
	snprintf(log_path, sizeof(log_path), "%s/meter.log", sub);
	snprintf(cfg.log_path, sizeof(cfg.log_path), "%s", log_path);
	start();
	for (i = 1; i <= 3; i++) {
		open_tcp(200, 0);
		move(200, DIR_IN, (uint64_t)i);
		meter_closed(&m, 200, at_ms((uint64_t)i).real_ns);
	}
	meter_tick(&m, at_s(1));
	ck_assert_int_eq(rep.n, 1);
	ck_assert_ptr_nonnull(strstr(rep.last, "cannot write"));
	ck_assert_ptr_nonnull(strstr(rep.last, "which wait for it"));
	/* Counted as lost while they wait: a kill now would say so. */
	ck_assert_uint_eq(closeq_dropped_records(&m.q), 3);
	ck_assert_int_eq(mkdir(sub, 0700), 0);
	for (i = 4; i <= 5; i++) {
		open_tcp(200, 1);
		move(200, DIR_IN, (uint64_t)i);
		meter_closed(&m, 200, at_ms(1000 + (uint64_t)i).real_ns);
	}
	meter_tick(&m, at_s(2));
	ck_assert_uint_eq(closeq_dropped_records(&m.q), 0);
	meter_exit(&m, at_s(3));
	log = log_text();
	ck_assert_ptr_nonnull(log);
	/* All five, in the order they closed. */
	ck_assert_uint_eq(uu_count(log, "{\"type\":\"close\""), 5);
	for (p = log; (p = strstr(p, "{\"type\":\"close\"")) != NULL; p++) {
		got = uu_json_u64(uu_json_fd(p, 200), "bytes_in");
		ck_assert_uint_eq(got, want);
		want++;
	}
	line = uu_line_with(log, "\"type\":\"exit\"");
	ck_assert_ptr_nonnull(line);
	ck_assert_uint_eq(uu_json_u64(line, "fds_closed"), 5);
	ck_assert_ptr_null(strstr(line, "close_records_dropped"));
	free(line);
	free(log);
}
END_TEST

/* More than the held bound refused: the oldest are held and written, the
 * rest counted as dropped, so records + dropped = closes exactly; and
 * records made while the log refuses say how many wait. */
START_TEST(test_meter_refused_close_records_beyond_the_bound_are_counted)
{
	char sub[96], *log, *p, *line;
	uint64_t want = 1, n_close = 0, dropped;
	int i, total = 2000;

	snprintf(sub, sizeof(sub), "%s/later", dir);
	snprintf(log_path, sizeof(log_path), "%s/meter.log", sub);
	snprintf(cfg.log_path, sizeof(cfg.log_path), "%s", log_path);
	start();
	for (i = 1; i <= total; i++) {
		open_tcp(200, 0);
		move(200, DIR_IN, (uint64_t)i);
		meter_closed(&m, 200, at_ms((uint64_t)i % 900).real_ns);
		if (i % 500 == 0) /* several refused batches */
			meter_tick(&m, at_ms((uint64_t)i));
	}
	ck_assert_uint_eq(closeq_dropped_records(&m.q), (uint64_t)total);
	ck_assert_int_eq(mkdir(sub, 0700), 0);
	meter_exit(&m, at_s(3));
	log = log_text();
	ck_assert_ptr_nonnull(log);
	for (p = log; (p = strstr(p, "{\"type\":\"close\"")) != NULL; p++) {
		/* The oldest first, none skipped. */
		ck_assert_uint_eq(uu_json_u64(uu_json_fd(p, 200), "bytes_in"),
				  want);
		want++;
		n_close++;
	}
	ck_assert_uint_gt(n_close, 100);
	ck_assert_uint_lt(n_close, (uint64_t)total);
	line = uu_line_with(log, "\"type\":\"exit\"");
	ck_assert_ptr_nonnull(line);
	dropped = uu_json_u64(line, "close_records_dropped");
	ck_assert_uint_eq(n_close + dropped, (uint64_t)total);
	ck_assert_uint_eq(uu_json_u64(line, "fds_closed"), (uint64_t)total);
	ck_assert_uint_eq(uu_json_u64(line, "bytes_in"),
			  (uint64_t)total * (total + 1) / 2);
	free(line);
	free(log);
}
END_TEST

/* A fork child forgets its parent's held records, even under the same
 * pid (a container's pid 1 forking into a new pid namespace): the
 * parent's buffer is not even mapped in a real child (sbuf's
 * MADV_DONTFORK; a helper's child died of SIGSEGV writing it), and the
 * child's own count of lost records is its own. */
START_TEST(test_meter_fork_child_forgets_held_close_records)
{
	char sub[96], *log, *line;
	struct meter_time t;

	snprintf(sub, sizeof(sub), "%s/later", dir);
	snprintf(log_path, sizeof(log_path), "%s/meter.log", sub);
	snprintf(cfg.log_path, sizeof(cfg.log_path), "%s", log_path);
	start();
	open_tcp(200, 0);
	move(200, DIR_IN, 7);
	meter_closed(&m, 200, at_ms(1).real_ns);
	meter_tick(&m, at_s(1)); /* refused: held */
	ck_assert_uint_gt(m.held.len, 0);
	t = at_s(2);
	meter_after_fork(&m, 4242, t, false);
	ck_assert_uint_eq(m.held.len, 0);
	ck_assert_ptr_null(m.held.p);
	ck_assert_int_eq(mkdir(sub, 0700), 0);
	open_tcp(201, 2);
	move(201, DIR_IN, 11);
	meter_closed(&m, 201, at_s(3).real_ns);
	meter_exit(&m, at_s(4));
	log = log_text();
	ck_assert_ptr_nonnull(log);
	ck_assert_uint_eq(uu_count(log, "{\"type\":\"close\""), 1);
	ck_assert_uint_eq(uu_json_u64(uu_json_fd(strstr(log, "{\"type\":\"close\""), 201), "bytes_in"), 11);
	line = uu_line_with(log, "\"type\":\"exit\"");
	ck_assert_ptr_nonnull(line);
	ck_assert_uint_eq(uu_json_u64(line, "fds_closed"), 1);
	ck_assert_ptr_null(strstr(line, "close_records_dropped"));
	free(line);
	free(log);
}
END_TEST

static TCase *tc_refused(void)
{
	TCase *tc = tcase_create("refused_batches");

	tcase_add_unchecked_fixture(tc, uu_root_setup, uu_root_teardown);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_meter_refused_close_records_are_written_with_the_next_batch);
	tcase_add_test(tc, test_meter_refused_close_records_beyond_the_bound_are_counted);
	tcase_add_test(tc, test_meter_fork_child_forgets_held_close_records);
	return tc;
}

static TCase *tc_queue(void)
{
	TCase *tc = tcase_create("close_queue");

	tcase_add_unchecked_fixture(tc, uu_root_setup, uu_root_teardown);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_meter_more_closes_than_queue_keeps_totals_exact_and_counts_dropped);
	tcase_add_test(tc, test_meter_records_off_burst_says_nothing_dropped);
	tcase_add_test(tc, test_meter_queue_is_reusable_after_drain);
	return tc;
}

/* --- configuration and fork -------------------------------------------------- */

START_TEST(test_meter_track_kind_follows_track_config)
{
	start();
	ck_assert_int_eq(meter_track_kind(&m, KIND_TCP), KIND_TCP);
	ck_assert_int_eq(meter_track_kind(&m, KIND_UDP), KIND_UDP);
	ck_assert_int_eq(meter_track_kind(&m, KIND_UNIX_STREAM), KIND_UNIX_STREAM);
	ck_assert_int_eq(meter_track_kind(&m, KIND_UNIX_DGRAM), KIND_UNIX_DGRAM);
	ck_assert_int_eq(meter_track_kind(&m, KIND_OTHER_SOCKET), KIND_OTHER_SOCKET);
	/* Off by default. */
	ck_assert_int_eq(meter_track_kind(&m, KIND_PIPE), KIND_UNTRACKED);
	ck_assert_int_eq(meter_track_kind(&m, KIND_FILE), KIND_UNTRACKED);
	ck_assert_int_eq(meter_track_kind(&m, KIND_TTY), KIND_UNTRACKED);
	ck_assert_int_eq(meter_track_kind(&m, KIND_UNKNOWN), KIND_UNKNOWN);
	ck_assert_int_eq(meter_track_kind(&m, KIND_UNTRACKED), KIND_UNTRACKED);
	ck_assert_int_eq(meter_track_kind(&m, KIND_BUSY), KIND_UNTRACKED);
	meter_destroy(&m);

	cfg.track[TRACK_PIPES] = true;
	cfg.track[TRACK_TCP] = false;
	start();
	ck_assert_int_eq(meter_track_kind(&m, KIND_PIPE), KIND_PIPE);
	ck_assert_int_eq(meter_track_kind(&m, KIND_TCP), KIND_UNTRACKED);
	ck_assert_int_eq(meter_track_kind(&m, KIND_UDP), KIND_UDP);
}
END_TEST

START_TEST(test_meter_opened_with_untracked_kind_is_not_metered)
{
	struct fd_snapshot snap;

	start();
	meter_opened(&m, 100, KIND_PIPE, at_s(0).real_ns, NULL, NULL);
	ck_assert_int_eq(fdtab_kind(fdtab_slot(&m.tab, 100)), KIND_UNTRACKED);
	ck_assert_int_eq(fdtab_snapshot(&m.tab, 100, &snap), 0);
	meter_exit(&m, at_s(1));
	ck_assert_int_eq(access(log_path, F_OK), -1); /* no tracked fd: no log */
}
END_TEST

START_TEST(test_meter_bytes_off_windows_on_still_gives_rates)
{
	char *log;
	const char *f;

	cfg.category[CAT_BYTES] = false;
	start();
	ck_assert(m.acct & ACCT_BYTES);
	open_tcp(100, 0);
	tick_seconds(1, 9);
	move(100, DIR_IN, 4096);
	meter_tick(&m, at_s(10));
	log = log_text();
	ck_assert_ptr_null(strstr(log, "\"bytes_"));
	f = uu_json_fd(log, 100);
	ck_assert_double_eq(rate_of(f, "1s", "in"), 4096.0);
	free(log);
}
END_TEST

START_TEST(test_meter_categories_off_are_not_counted)
{
	struct fd_snapshot snap;

	cfg.category[CAT_CALLS] = false;
	cfg.category[CAT_SIZES] = false;
	cfg.category[CAT_ERRORS] = false;
	cfg.category[CAT_WINDOWS] = false;
	cfg.category[CAT_BYTES] = false;
	start();
	ck_assert_uint_eq(m.acct, 0);
	open_tcp(100, 0);
	move(100, DIR_IN, 4096);
	ck_assert_int_eq(fdtab_snapshot(&m.tab, 100, &snap), 1);
	ck_assert_uint_eq(snap.c.bytes[DIR_IN], 0);
	ck_assert_uint_eq(snap.c.calls[DIR_IN], 0);
}
END_TEST

START_TEST(test_meter_after_fork_starts_from_zero_with_child_log)
{
	char child_log[160], *log;
	char *parent_before, *parent_after;
	struct fd_snapshot snap;

	snprintf(cfg.log_path, sizeof(cfg.log_path), "%s/m.%%p.log", dir);
	snprintf(log_path, sizeof(log_path), "%s/m.4242.log", dir);
	snprintf(child_log, sizeof(child_log), "%s/m.4243.log", dir);
	start();
	open_tcp(100, 0);
	open_tcp(101, 0);
	move(100, DIR_IN, 5000);
	move(101, DIR_IN, 7000);
	meter_closed(&m, 101, at_s(1).real_ns);
	tick_seconds(1, 10);
	open_tcp(102, 10);
	move(102, DIR_IN, 1);
	meter_closed(&m, 102, at_s(11).real_ns); /* still queued at fork */
	parent_before = uu_slurp(log_path);
	ck_assert_uint_eq(uu_count_lines(parent_before), 2);

	meter_after_fork(&m, 4243, at_s(20), false);
	ck_assert_int_eq(fdtab_kind(fdtab_slot(&m.tab, 100)), KIND_UNKNOWN);
	ck_assert_int_eq(fdtab_snapshot(&m.tab, 100, &snap), 0);
	/* The child's first call on the inherited fd classifies it. */
	ck_assert_int_eq(fdtab_classify(&m.tab, 100, KIND_TCP, NULL, NULL),
			 KIND_TCP);
	ck_assert_int_eq(fdtab_snapshot(&m.tab, 100, &snap), 1);
	ck_assert_uint_eq(snap.c.bytes[DIR_IN], 0);
	move(100, DIR_IN, 7);
	tick_seconds(21, 30);
	meter_exit(&m, at_s(31));

	log = uu_slurp(child_log);
	ck_assert_uint_eq(uu_count_lines(log), 2); /* interval at 30, exit */
	ck_assert_ptr_nonnull(strstr(log, "\"pid\":4243,"));
	ck_assert_ptr_nonnull(strstr(log, "\"start\":1700000020.000000,"));
	ck_assert_ptr_null(strstr(log, "\"type\":\"close\""));
	ck_assert_ptr_nonnull(strstr(log, "\"totals\":{\"fds_open\":1,\"fds_closed\":0,\"bytes_in\":7,"));
	ck_assert_ptr_nonnull(strstr(log, "\"opened\":null"));
	free(log);
	/* The parent's log is untouched by the child. */
	parent_after = uu_slurp(log_path);
	ck_assert_str_eq(parent_after, parent_before);
	free(parent_before);
	free(parent_after);
}
END_TEST

/* True when the n bytes at p are all zero. */
static bool all_zero(const void *p, size_t n)
{
	const unsigned char *b = p;

	while (n && !*b) {
		b++;
		n--;
	}
	return n == 0;
}

/*
 * The windows are the parent's alone (core/ownmem.h): a real fork child
 * has their memory as zeroes, and still gets rates of its own for an
 * inherited fd.  The child reports by exit status: 10 the parent's window
 * is there, 11 its log has no rates, 12 rates wrong.
 */
START_TEST(test_meter_fork_child_has_no_parent_windows_and_makes_its_own)
{
	char child_log[160], *log, *line;
	const void *parent_win;
	int status;
	pid_t pid;

	snprintf(cfg.log_path, sizeof(cfg.log_path), "%s/m.%%p.log", dir);
	snprintf(log_path, sizeof(log_path), "%s/m.4242.log", dir);
	snprintf(child_log, sizeof(child_log), "%s/m.4243.log", dir);
	start();
	open_tcp(100, 0);
	move(100, DIR_IN, 5000);
	tick_seconds(1, 10);
	parent_win = m.fds[100].win;
	ck_assert_ptr_nonnull(parent_win);
	ck_assert(!all_zero(parent_win, window_bytes(&m.shape)));
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		const char *f;

		if (!all_zero(parent_win, window_bytes(&m.shape)))
			_exit(10);
		meter_after_fork(&m, 4243, at_s(20), false);
		fdtab_classify(&m.tab, 100, KIND_TCP, NULL, NULL);
		tick_seconds(20, 21);
		move(100, DIR_IN, 3000);
		tick_seconds(22, 30);
		log = uu_slurp(child_log);
		f = log ? uu_json_fd(log, 100) : NULL;
		if (!f || !strstr(f, "\"rates\""))
			_exit(11);
		/* [21 s, 22 s) moved 3000; 10 s of the child's life. */
		if (rate_of(f, "10s", "in") != 300.0)
			_exit(12);
		_exit(0);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 0);
	/* The parent's own window is still there and in use. */
	ck_assert_ptr_eq(m.fds[100].win, parent_win);
	move(100, DIR_IN, 100);
	tick_seconds(11, 20);
	log = log_text();
	ck_assert_uint_eq(uu_count_lines(log), 2);
	line = uu_line(log, 1);
	/* [11 s, 12 s) moved the 100. */
	ck_assert_double_eq(rate_of(uu_json_fd(line, 100), "10s", "in"), 10.0);
	free(line);
	free(log);
}
END_TEST

START_TEST(test_meter_unwritable_log_is_reported_once_and_metering_goes_on)
{
	struct fd_snapshot snap;
	char missing[128];

	snprintf(cfg.log_path, sizeof(cfg.log_path), "%s/missing/x.log", dir);
	snprintf(missing, sizeof(missing), "%s/missing", dir);
	start();
	open_tcp(100, 0);
	move(100, DIR_IN, 9);
	tick_seconds(1, 30);
	meter_exit(&m, at_s(31));
	ck_assert_uint_eq(rep.n, 1);
	ck_assert_int_eq(fdtab_snapshot(&m.tab, 100, &snap), 1);
	ck_assert_uint_eq(snap.c.bytes[DIR_IN], 9);
	ck_assert_ptr_nonnull(strstr(rep.last, "x.log"));
	ck_assert_int_ne(access(missing, F_OK), 0);
}
END_TEST

START_TEST(test_meter_init_with_zero_fd_cap_fails_and_meters_nothing)
{
	ck_assert_int_lt(meter_init(&m, &cfg, "p", 1, 0, at_s(0), on_report,
				    &rep),
			 0);
	ck_assert_ptr_null(fdtab_slot(&m.tab, 0));
	meter_opened(&m, 3, KIND_TCP, 0, NULL, NULL);
	meter_closed(&m, 3, 0);
	meter_tick(&m, at_s(10));
	meter_exit(&m, at_s(11));
	ck_assert_int_ne(access(log_path, F_OK), 0);
}
END_TEST

START_TEST(test_meter_build_fills_header_and_totals_without_writing)
{
	struct summary r;

	start();
	open_tcp(100, 0);
	move(100, DIR_IN, 3);
	meter_closed(&m, 100, at_s(1).real_ns);
	meter_tick(&m, at_s(1));
	meter_build(&m, SUMMARY_INTERVAL, at_s(2), &r);
	ck_assert_int_eq(r.type, SUMMARY_INTERVAL);
	ck_assert_uint_eq(r.ts_ns, at_s(2).real_ns);
	ck_assert_int_eq(r.pid, 4242);
	ck_assert_str_eq(r.prog, "unitprog");
	ck_assert_uint_eq(r.start_ns, REAL0);
	ck_assert_uint_eq(r.fds_closed, 1);
	ck_assert_uint_eq(r.totals.bytes[DIR_IN], 3);
	ck_assert_uint_eq(r.nfds, 0);
}
END_TEST

/*
 * fds_closed counts the closes whose numbers are in the totals: not one
 * pushed since the last drain (an exit record is made while other threads
 * close on; it counted them, and their records were never written).
 */
START_TEST(test_meter_fds_closed_counts_only_closes_in_the_totals)
{
	struct summary r;

	start();
	open_tcp(100, 0);
	open_tcp(101, 0);
	move(100, DIR_IN, 3);
	move(101, DIR_IN, 40);
	meter_closed(&m, 100, at_s(1).real_ns);
	meter_tick(&m, at_s(1));
	meter_closed(&m, 101, at_s(1).real_ns); /* pushed, not drained */
	meter_build(&m, SUMMARY_INTERVAL, at_s(2), &r);
	ck_assert_uint_eq(r.fds_closed, 1);
	ck_assert_uint_eq(r.totals.bytes[DIR_IN], 3);
	meter_tick(&m, at_s(2));
	meter_build(&m, SUMMARY_INTERVAL, at_s(3), &r);
	ck_assert_uint_eq(r.fds_closed, 2);
	ck_assert_uint_eq(r.totals.bytes[DIR_IN], 43);
}
END_TEST

static TCase *tc_config(void)
{
	TCase *tc = tcase_create("config_and_fork");

	tcase_add_unchecked_fixture(tc, uu_root_setup, uu_root_teardown);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_meter_track_kind_follows_track_config);
	tcase_add_test(tc, test_meter_opened_with_untracked_kind_is_not_metered);
	tcase_add_test(tc, test_meter_bytes_off_windows_on_still_gives_rates);
	tcase_add_test(tc, test_meter_categories_off_are_not_counted);
	tcase_add_test(tc, test_meter_after_fork_starts_from_zero_with_child_log);
	tcase_add_test(tc, test_meter_fork_child_has_no_parent_windows_and_makes_its_own);
	tcase_add_test(tc, test_meter_unwritable_log_is_reported_once_and_metering_goes_on);
	tcase_add_test(tc, test_meter_init_with_zero_fd_cap_fails_and_meters_nothing);
	tcase_add_test(tc, test_meter_build_fills_header_and_totals_without_writing);
	tcase_add_test(tc, test_meter_fds_closed_counts_only_closes_in_the_totals);
	return tc;
}

/* --- Prometheus: counters never go down ------------------------------------- */

#define PROM_SERIES_MAX 256

/* The highest value each counter series has shown so far. */
struct prom_seen {
	char key[PROM_SERIES_MAX][256];
	double max[PROM_SERIES_MAX];
	unsigned n;
};

/* Read the exposition in the log; every *_total series must be at least
 * what it ever showed before.  Returns how many counter series it has. */
static unsigned prom_check_monotonic(struct prom_seen *seen, const char *when)
{
	char *text = log_text(), *line, *save = NULL;
	unsigned count = 0;

	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *sp = strrchr(line, ' ');
		double v;
		unsigned i;

		if (line[0] == '#' || !sp || !strstr(line, "_total{"))
			continue;
		*sp = '\0';
		v = strtod(sp + 1, NULL);
		count++;
		for (i = 0; i < seen->n; i++)
			if (strcmp(seen->key[i], line) == 0)
				break;
		if (i == seen->n) {
			ck_assert_uint_lt(seen->n, PROM_SERIES_MAX);
			snprintf(seen->key[i], sizeof(seen->key[i]), "%s", line);
			seen->max[i] = v;
			seen->n++;
			continue;
		}
		ck_assert_msg(v >= seen->max[i], "%s: %s went down from %.9f to %.9f",
			      when, line, seen->max[i], v);
		seen->max[i] = v;
	}
	free(text);
	return count;
}

/* A TCP connection on fd to peer ip. */
static void open_tcp_to(int fd, const char *ip, uint64_t s)
{
	struct fd_addr l = addr4("127.0.0.1", 40000 + (unsigned)fd);
	struct fd_addr p = addr4(ip, 443);

	meter_opened(&m, fd, KIND_TCP, at_s(s).real_ns, &l, &p);
}

/*
 * With top = 1, the busiest peer is shown by name and the rest as
 * peer="other".  When the ranking changes (a peer that only sends passes
 * one that only receives), re-ranking on every write made "other" go
 * down in one direction, which Prometheus reads as a counter reset.  The
 * same for a latency clock whose calibration moves between writes.  Every
 * exported counter must be monotonic for the life of the process.
 */
START_TEST(test_meter_prometheus_counters_never_decrease_while_ranking_changes)
{
	static struct prom_seen seen;
	struct fd_slot *s;

	memset(&seen, 0, sizeof(seen));
	cfg.format = FORMAT_PROMETHEUS;
	cfg.top = 1;
	cfg.interval_ms = 1000;
	cfg.category[CAT_LATENCY] = true;
	start();
	open_tcp_to(5, "10.0.0.1", 0);
	open_tcp_to(6, "10.0.0.2", 0);
	move(5, DIR_IN, 100);
	move(6, DIR_OUT, 99);
	s = fdtab_slot(&m.tab, 5);
	s->c.latency[DIR_IN] += 1000000000;
	meter_tick(&m, at_s(1));
	ck_assert_uint_gt(prom_check_monotonic(&seen, "1 s"), 0);

	/* 10.0.0.2 passes 10.0.0.1; the latency clock is recalibrated. */
	move(6, DIR_OUT, 3);
	m.ns_per_tick = 0.9;
	meter_tick(&m, at_s(2));
	prom_check_monotonic(&seen, "2 s");

	/* 10.0.0.1 closes and a third peer passes both; back again. */
	meter_closed(&m, 5, at_s(2).real_ns);
	open_tcp_to(7, "10.0.0.3", 2);
	move(7, DIR_IN, 1000);
	meter_tick(&m, at_s(3));
	prom_check_monotonic(&seen, "3 s");
	move(6, DIR_IN, 5000);
	m.ns_per_tick = 1.1;
	meter_tick(&m, at_s(4));
	prom_check_monotonic(&seen, "4 s");
	meter_closed(&m, 6, at_s(4).real_ns);
	meter_closed(&m, 7, at_s(4).real_ns);
	meter_tick(&m, at_s(5));
	prom_check_monotonic(&seen, "5 s");
}
END_TEST

static TCase *tc_prometheus(void)
{
	TCase *tc = tcase_create("prometheus");

	tcase_add_unchecked_fixture(tc, uu_root_setup, uu_root_teardown);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_meter_prometheus_counters_never_decrease_while_ranking_changes);
	return tc;
}

int main(void)
{
	Suite *s = suite_create("meter");

	suite_add_tcase(s, tc_interval());
	suite_add_tcase(s, tc_close());
	suite_add_tcase(s, tc_queue());
	suite_add_tcase(s, tc_refused());
	suite_add_tcase(s, tc_config());
	suite_add_tcase(s, tc_prometheus());
	return uu_run(s);
}
