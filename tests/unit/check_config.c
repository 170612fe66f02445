/*
 * check_config.c - unit tests for config/: the defaults, every key, every
 * kind of bad input (each reported once, with file:line and the key, the key
 * keeping its value), files, the window spans and the environment.
 *
 * Run from the repository root: one test loads config/sockmeter.ini.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include "../../config/config.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define MSG_CAP 32
#define EXAMPLE_INI "config/sockmeter.ini"

/* Messages reported by the code under test. */
struct msgs {
	int n;
	char text[MSG_CAP][1024];
};

static struct msgs msgs;
static struct config cfg;
static struct config defaults;

/* The fake environment: NULL-terminated name, value pairs. */
static const char *const *fake_env;

static void collect(void *ctx, const char *msg)
{
	struct msgs *m = ctx;

	ck_assert_ptr_null(strchr(msg, '\n'));
	if (m->n < MSG_CAP)
		snprintf(m->text[m->n], sizeof m->text[0], "%s", msg);
	m->n++;
}

static const char *fake_getenv(const char *name)
{
	const char *const *e;

	for (e = fake_env; e && e[0]; e += 2)
		if (strcmp(e[0], name) == 0)
			return e[1];
	return NULL;
}

static void reset(void)
{
	config_defaults(&cfg);
	config_defaults(&defaults);
	memset(&msgs, 0, sizeof msgs);
	fake_env = NULL;
}

static int load(const char *text)
{
	return config_load_string(&cfg, "t.ini", text, strlen(text), collect,
				  &msgs);
}

/* Message i exists and contains a and (when not NULL) b. */
static void expect_msg(int i, const char *a, const char *b)
{
	ck_assert_int_gt(msgs.n, i);
	ck_assert_msg(strstr(msgs.text[i], a), "message %d lacks \"%s\": %s",
		      i, a, msgs.text[i]);
	if (b)
		ck_assert_msg(strstr(msgs.text[i], b),
			      "message %d lacks \"%s\": %s", i, b,
			      msgs.text[i]);
}

/* Exactly one message, containing a and b. */
static void expect_one(const char *a, const char *b)
{
	ck_assert_msg(msgs.n == 1, "%d messages, first: %s", msgs.n,
		      msgs.text[0]);
	expect_msg(0, a, b);
}

static void expect_unchanged(void)
{
	ck_assert_mem_eq(&cfg, &defaults, sizeof cfg);
}

/* Writes text to a fresh temporary file; returns its path (static). */
static const char *temp_file(const char *text, size_t len)
{
	static char path[64];
	int fd;

	snprintf(path, sizeof path, "/tmp/check_config.XXXXXX");
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, len), (ssize_t)len);
	close(fd);
	return path;
}

/* ---- defaults ------------------------------------------------------- */

START_TEST(test_defaults_are_the_documented_ones)
{
	ck_assert(cfg.enabled);
	ck_assert_int_eq(cfg.nskip, 0);
	ck_assert_str_eq(cfg.log_path, CONFIG_DEFAULT_LOG);
	ck_assert_int_eq(cfg.format, FORMAT_TEXT);
	ck_assert_uint_eq(cfg.interval_ms, 10000);
	ck_assert_uint_eq(cfg.top, 20);
	ck_assert_uint_eq(cfg.log_max_size, 0);
	ck_assert_uint_eq(cfg.log_keep, 5);
#define X(up, low, def) ck_assert_int_eq(cfg.category[CAT_##up], def);
	CONFIG_CATEGORIES(X)
#undef X
#define X(up, low, def) ck_assert_int_eq(cfg.track[TRACK_##up], def);
	CONFIG_TRACK_KINDS(X)
#undef X
	ck_assert(!cfg.category[CAT_LATENCY]);
	ck_assert(!cfg.track[TRACK_PIPES]);
	ck_assert_uint_eq(cfg.bucket_ms, 1000);
	ck_assert_uint_eq(cfg.buckets, 60);
	ck_assert_uint_eq(cfg.nspans, 3);
	ck_assert_uint_eq(cfg.span_buckets[0], 1);
	ck_assert_uint_eq(cfg.span_buckets[1], 10);
	ck_assert_uint_eq(cfg.span_buckets[2], 60);
	/* One tier of 60 one-second buckets serves all three. */
	ck_assert_uint_eq(cfg.span_res[0], 1);
	ck_assert_uint_eq(cfg.span_res[1], 1);
	ck_assert_uint_eq(cfg.span_res[2], 1);
}
END_TEST

START_TEST(test_names_are_the_ini_keys)
{
	ck_assert_str_eq(config_category_name(CAT_BYTES), "bytes");
	ck_assert_str_eq(config_category_name(CAT_LATENCY), "latency");
	ck_assert_ptr_null(config_category_name(CAT_COUNT));
	ck_assert_str_eq(config_track_name(TRACK_TCP), "tcp");
	ck_assert_str_eq(config_track_name(TRACK_OTHER_SOCKETS),
			 "other_sockets");
	ck_assert_ptr_null(config_track_name(TRACK_COUNT));
}
END_TEST

START_TEST(test_empty_and_comment_only_input_change_nothing)
{
	ck_assert_int_eq(load(""), 0);
	ck_assert_int_eq(load("; c\n# c\n\n   \n\t; indented\n[log]\n"), 0);
	ck_assert_int_eq(config_load_string(&cfg, NULL, NULL, 5, NULL, NULL),
			 0);
	ck_assert_int_eq(msgs.n, 0);
	expect_unchanged();
}
END_TEST

/* ---- good values ---------------------------------------------------- */

START_TEST(test_every_key_sets_its_field)
{
	static const char ini[] =
		"[sockmeter]\nenabled = false\nskip = ssh, gpg-agent\n"
		"[log]\npath = stderr\nformat = json\ninterval = 2.5\n"
		"top = 0\n"
		"[stats]\nbytes = no\ncalls = off\nerrors = 0\nsizes = false\n"
		"windows = no\npeers = no\nlatency = yes\n"
		"tcp_info = no\nnames = off\n"
		"[track]\ntcp = no\nudp = no\nunix = no\nother_sockets = no\n"
		"pipes = yes\nfiles = on\nttys = 1\n"
		"[window]\nbucket = 0.5\nbuckets = 240\n"
		"spans = 0.5, 5, 30, 120\n";
	int i;

	ck_assert_int_eq(load(ini), 0);
	ck_assert_int_eq(msgs.n, 0);
	ck_assert(!cfg.enabled);
	ck_assert_int_eq(cfg.nskip, 2);
	ck_assert_str_eq(cfg.skip[0], "ssh");
	ck_assert_str_eq(cfg.skip[1], "gpg-agent");
	ck_assert_str_eq(cfg.log_path, "stderr");
	ck_assert_int_eq(cfg.format, FORMAT_JSON);
	ck_assert_uint_eq(cfg.interval_ms, 2500);
	ck_assert_uint_eq(cfg.top, 0);
	for (i = 0; i < CAT_COUNT; i++)
		ck_assert_int_eq(cfg.category[i], i == CAT_LATENCY);
	for (i = 0; i < TRACK_COUNT; i++)
		ck_assert_int_eq(cfg.track[i], i >= TRACK_PIPES);
	ck_assert_uint_eq(cfg.bucket_ms, 500);
	ck_assert_uint_eq(cfg.buckets, 240);
	ck_assert_uint_eq(cfg.nspans, 4);
	ck_assert_uint_eq(cfg.span_buckets[0], 1);
	ck_assert_uint_eq(cfg.span_buckets[1], 10);
	ck_assert_uint_eq(cfg.span_buckets[2], 60);
	ck_assert_uint_eq(cfg.span_buckets[3], 240);
	/* 0.5 s buckets: 120 s in 120 x 1 s (32-bit) buckets. */
	ck_assert_uint_eq(cfg.span_res[0], 1);
	ck_assert_uint_eq(cfg.span_res[3], 2);
}
END_TEST

/* Issue 15: a day at 1 s is accepted and served by coarser tiers; the
 * resolution follows the spans whatever the order of the keys. */
START_TEST(test_window_day_at_one_second_gets_tier_resolutions)
{
	ck_assert_int_eq(load("[window]\nspans = 1, 60, 3600, 86400\n"
			      "buckets = 86400\n"),
			 0);
	ck_assert_int_eq(msgs.n, 0);
	ck_assert_uint_eq(cfg.nspans, 4);
	ck_assert_uint_eq(cfg.span_res[0], 1);
	ck_assert_uint_eq(cfg.span_res[1], 1);
	ck_assert_uint_eq(cfg.span_res[2], 60);
	ck_assert_uint_eq(cfg.span_res[3], 1440);
	/* Hour buckets: every tier one bucket wide per hour. */
	ck_assert_int_eq(load("[window]\nbucket = 3600\nbuckets = 24\n"
			      "spans = 3600, 86400\n"),
			 0);
	ck_assert_uint_eq(cfg.span_res[0], 1);
	ck_assert_uint_eq(cfg.span_res[1], 1);
	/* Spans refused and replaced by the defaults get theirs too. */
	config_defaults(&cfg);
	ck_assert_int_eq(load("[window]\nbucket = 0.5\nspans = 7.25\n"), 1);
	ck_assert_uint_eq(cfg.nspans, 2);
	ck_assert_uint_eq(cfg.span_res[0], 1);
	ck_assert_uint_eq(cfg.span_res[1], 1);
	ck_assert_uint_eq(cfg.span_res[2], 0);
	/* A spans line refused as it is read, after bucket = 0.5: the
	 * message names the spans in force, 1 s and 10 s (it said "keeping
	 * 0.5, 5, 30": the default buckets times the new bucket). */
	reset();
	ck_assert_int_eq(load("[window]\nbucket = 0.5\nspans = 10, 1\n"), 1);
	ck_assert_uint_eq(cfg.nspans, 2);
	ck_assert_uint_eq(cfg.span_buckets[0] * cfg.bucket_ms, 1000);
	ck_assert_uint_eq(cfg.span_buckets[1] * cfg.bucket_ms, 10000);
	expect_one("t.ini:3: [window] spans:", "keeping 1, 10");
}
END_TEST

START_TEST(test_log_rotation_sizes_take_units_and_off)
{
	static const struct {
		const char *v;
		uint64_t want;
	} good[] = {{"4096", 4096},       {"100M", 100ull << 20},
		    {"4k", 4096},         {"2G", 2ull << 30},
		    {"1T", 1ull << 40},   {"1P", 1ull << 50},
		    {"1024T", 1ull << 50}, {"off", 0},
		    {"OFF", 0},           {"0", 0}};
	char ini[96];
	size_t i;

	for (i = 0; i < sizeof good / sizeof good[0]; i++) {
		cfg.log_max_size = 7;
		snprintf(ini, sizeof ini, "[log]\nmax_size = %s\nkeep = 1000\n",
			 good[i].v);
		ck_assert_int_eq(load(ini), 0);
		ck_assert_uint_eq(cfg.log_max_size, good[i].want);
		ck_assert_uint_eq(cfg.log_keep, 1000);
	}
}
END_TEST

START_TEST(test_log_rotation_bad_values_are_reported_with_the_line)
{
	ck_assert_int_eq(load("[log]\nmax_size = 4095\nmax_size = 12X\n"
			      "max_size = 2048P\nmax_size = -1M\nkeep = 1001\n"
			      "max_size = M\n"),
			 6);
	ck_assert_int_eq(msgs.n, 6);
	expect_msg(0, "t.ini:2: [log] max_size: \"4095\" is out of range",
		   "off, or a size from 4096 to 1P");
	expect_msg(1, "t.ini:3: [log] max_size: \"12X\" is not a size", NULL);
	expect_msg(2, "t.ini:4: [log] max_size: \"2048P\"", NULL);
	expect_msg(3, "t.ini:5: [log] max_size: \"-1M\" is not a size", NULL);
	expect_msg(4, "t.ini:6: [log] keep: \"1001\" is out of range", NULL);
	expect_msg(5, "t.ini:7: [log] max_size: \"M\" is not a size", NULL);
	expect_unchanged();
}
END_TEST

START_TEST(test_env_sets_log_rotation)
{
	static const char *const env[] = {"SOCKMETER_LOG_MAX_SIZE", "10M",
					  "SOCKMETER_LOG_KEEP", "3", NULL};

	fake_env = env;
	ck_assert_int_eq(config_apply_env(&cfg, fake_getenv, collect, &msgs),
			 0);
	ck_assert_uint_eq(cfg.log_max_size, 10ull << 20);
	ck_assert_uint_eq(cfg.log_keep, 3);
}
END_TEST

START_TEST(test_booleans_accept_every_spelling_in_any_case)
{
	static const char *const yes[] = {"true", "YES", "On", "1"};
	static const char *const no[] = {"false", "No", "OFF", "0"};
	char ini[64];
	size_t i;

	for (i = 0; i < 4; i++) {
		snprintf(ini, sizeof ini, "[stats]\nlatency = %s\n", yes[i]);
		ck_assert_int_eq(load(ini), 0);
		ck_assert(cfg.category[CAT_LATENCY]);
		snprintf(ini, sizeof ini, "[stats]\nlatency = %s\n", no[i]);
		ck_assert_int_eq(load(ini), 0);
		ck_assert(!cfg.category[CAT_LATENCY]);
	}
}
END_TEST

START_TEST(test_seconds_are_rounded_to_the_millisecond)
{
	ck_assert_int_eq(load("[log]\ninterval = 0.1234\n"), 0);
	ck_assert_uint_eq(cfg.interval_ms, 123);
	ck_assert_int_eq(load("[log]\ninterval = 86400\n"), 0);
	ck_assert_uint_eq(cfg.interval_ms, 86400000);
	ck_assert_int_eq(load("[log]\ninterval = .5\n"), 0);
	ck_assert_uint_eq(cfg.interval_ms, 500);
	ck_assert_int_eq(load("[log]\ninterval = 1e1\n"), 0);
	ck_assert_uint_eq(cfg.interval_ms, 10000);
	ck_assert_int_eq(load("[window]\nbucket = 3600\n"), 0);
	ck_assert_uint_eq(cfg.bucket_ms, 3600000);
	/* Rounded before the range is checked, at the top as at the
	 * bottom. */
	ck_assert_int_eq(load("[log]\ninterval = 86400.0004\n"), 0);
	ck_assert_uint_eq(cfg.interval_ms, 86400000);
	ck_assert_int_eq(load("[window]\nbucket = 3600.0004\n"), 0);
	ck_assert_uint_eq(cfg.bucket_ms, 3600000);
	ck_assert_int_eq(msgs.n, 0);
	ck_assert_int_eq(load("[log]\ninterval = 86400.0005\n"), 1);
	expect_msg(0, "\"86400.0005\" is out of range", NULL);
}
END_TEST

/* A span is read whole, however long: not cut at the bytes a message
 * quotes (junk past them was taken for a number). */
START_TEST(test_a_long_span_is_read_whole)
{
	ck_assert_int_eq(
	    load("[window]\nbucket = 0.1\nspans = 1.000000000000000000000"
		 "00000000000000000000000000000junk, 2\n"),
	    1);
	ck_assert_int_eq(msgs.n, 1);
	ck_assert_ptr_nonnull(strstr(msgs.text[0], "is not a number"));
	ck_assert_int_eq(
	    load("[window]\nbucket = 0.1\nspans = 1.000000000000000000000"
		 "000000000000000000000000000000000, 2\n"),
	    0);
	ck_assert_uint_eq(cfg.nspans, 2);
	ck_assert_uint_eq(cfg.span_buckets[0], 10); /* 1 s of 0.1 s buckets */
}
END_TEST

START_TEST(test_values_are_trimmed_and_inline_comments_dropped)
{
	ck_assert_int_eq(load("  [log]  ; comment\n\t top \t=\t 7 \t; c\n"
			      "path = /var/log/a;b  ; c\nformat = JSON ;\n"),
			 0);
	ck_assert_uint_eq(cfg.top, 7);
	ck_assert_str_eq(cfg.log_path, "/var/log/a;b");
	ck_assert_int_eq(cfg.format, FORMAT_JSON);
	ck_assert_int_eq(msgs.n, 0);
}
END_TEST

START_TEST(test_crlf_endings_and_byte_order_mark_are_accepted)
{
	ck_assert_int_eq(load("\xEF\xBB\xBF[log]\r\ntop = 9\r\n"
			      "interval = 3\r\n"),
			 0);
	ck_assert_uint_eq(cfg.top, 9);
	ck_assert_uint_eq(cfg.interval_ms, 3000);
}
END_TEST

START_TEST(test_indented_line_is_not_a_continuation)
{
	ck_assert_int_eq(load("[log]\npath = /x.log\n   top = 3\n"), 0);
	ck_assert_str_eq(cfg.log_path, "/x.log");
	ck_assert_uint_eq(cfg.top, 3);
}
END_TEST

START_TEST(test_skip_list_matches_exact_names)
{
	ck_assert_int_eq(load("[sockmeter]\nskip = a, bb  c,,d\tee\n"), 0);
	ck_assert_int_eq(cfg.nskip, 5);
	ck_assert(config_skips_program(&cfg, "bb"));
	ck_assert(config_skips_program(&cfg, "ee"));
	ck_assert(!config_skips_program(&cfg, "b"));
	ck_assert(!config_skips_program(&cfg, "bbb"));
	ck_assert(!config_skips_program(&cfg, NULL));
	/* The 15 bytes ps and /proc/PID/comm show of a longer name. */
	ck_assert_int_eq(load("[sockmeter]\nskip = averyveryverylo\n"), 0);
	ck_assert(config_skips_program(&cfg, "averyveryverylongname-curl"));
	ck_assert(config_skips_program(&cfg, "averyveryverylo"));
	ck_assert(!config_skips_program(&cfg, "averyveryverylx-curl"));
	ck_assert_int_eq(load("[sockmeter]\nskip = averyveryverylon\n"), 0);
	ck_assert(!config_skips_program(&cfg, "averyveryverylongname-curl"));
	ck_assert_int_eq(load("[sockmeter]\nskip =\n"), 0);
	ck_assert_int_eq(cfg.nskip, 0);
	ck_assert(!config_skips_program(&cfg, "a"));
}
END_TEST

START_TEST(test_duplicated_key_last_one_wins)
{
	ck_assert_int_eq(load("[log]\ntop = 1\ntop = 2\n[log]\ntop = 3\n"),
			 0);
	ck_assert_uint_eq(cfg.top, 3);
	ck_assert_int_eq(load("[log]\ntop = 5\ntop = abc\n"), 1);
	ck_assert_uint_eq(cfg.top, 5);
	expect_one("t.ini:3: [log] top:", "keeping 5");
}
END_TEST

/* ---- bad values ----------------------------------------------------- */

struct bad_case {
	const char *ini;     /* a bad value on line 2 */
	const char *where;   /* expected: "t.ini:2: [section] key:" */
	const char *problem; /* expected problem text */
};

static void run_bad_cases(const struct bad_case *bc, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		reset();
		ck_assert_msg(load(bc[i].ini) == 1, "case %zu: %s", i,
			      bc[i].ini);
		expect_one(bc[i].where, bc[i].problem);
		expect_unchanged();
	}
}

START_TEST(test_garbage_is_not_a_number)
{
	static const struct bad_case bc[] = {
		{"[log]\ninterval = abc\n", "t.ini:2: [log] interval:",
		 "\"abc\" is not a number; accepted: seconds from 0.1 to "
		 "86400; keeping 10"},
		{"[log]\ninterval = 10s\n", "t.ini:2: [log] interval:",
		 "\"10s\" is not a number"},
		{"[log]\ninterval = 0x10\n", "t.ini:2: [log] interval:",
		 "not a number"},
		{"[log]\ninterval = inf\n", "t.ini:2: [log] interval:",
		 "not a number"},
		{"[log]\ninterval = nan\n", "t.ini:2: [log] interval:",
		 "not a number"},
		{"[log]\ninterval = +5\n", "t.ini:2: [log] interval:",
		 "not a number"},
		{"[log]\ninterval = 1 0\n", "t.ini:2: [log] interval:",
		 "not a number"},
		{"[log]\ntop = 12abc\n", "t.ini:2: [log] top:",
		 "\"12abc\" is not a number; accepted: a whole number from 0 "
		 "(all) to 100000; keeping 20"},
		{"[log]\ntop = 2.5\n", "t.ini:2: [log] top:",
		 "\"2.5\" is not a whole number"},
		{"[window]\nbuckets = many\n", "t.ini:2: [window] buckets:",
		 "keeping 60"},
		{"[window]\nbucket = 1,5\n", "t.ini:2: [window] bucket:",
		 "keeping 1"},
		{"[window]\nspans = 1, ten\n", "t.ini:2: [window] spans:",
		 "\"ten\" is not a number"},
		{"[window]\nspans = 1,,10\n", "t.ini:2: [window] spans:",
		 "an empty item in the list (two commas, or a comma at an "
		 "end); accepted: 1 to 4"},
		{"[window]\nspans = 1, 10, \n", "t.ini:2: [window] spans:",
		 "an empty item in the list"},
		{"[window]\nspans = ,60\n", "t.ini:2: [window] spans:",
		 "an empty item in the list"},
		{"[sockmeter]\nenabled = maybe\n",
		 "t.ini:2: [sockmeter] enabled:",
		 "\"maybe\" is not a boolean; accepted: true false yes no on "
		 "off 1 0; keeping true"},
		{"[track]\nfiles = 2\n", "t.ini:2: [track] files:",
		 "keeping false"},
		{"[log]\nformat = xml\n", "t.ini:2: [log] format:",
		 "\"xml\" is not a known format; accepted: text json prometheus; "
		 "keeping text"},
		{"[log]\npath = /tmp/%x.log\n", "t.ini:2: [log] path:",
		 "uses unknown escape %x"},
		{"[log]\npath = /tmp/a%\n", "t.ini:2: [log] path:",
		 "ends with a lone %"},
	};

	run_bad_cases(bc, sizeof bc / sizeof bc[0]);
}
END_TEST

START_TEST(test_negative_numbers_are_out_of_range)
{
	static const struct bad_case bc[] = {
		{"[log]\ninterval = -1\n", "t.ini:2: [log] interval:",
		 "\"-1\" is out of range; accepted: seconds from 0.1 to 86400"},
		{"[log]\ntop = -5\n", "t.ini:2: [log] top:",
		 "\"-5\" is out of range"},
		{"[window]\nbuckets = -60\n", "t.ini:2: [window] buckets:",
		 "out of range"},
		{"[window]\nbucket = -0.5\n", "t.ini:2: [window] bucket:",
		 "out of range"},
		{"[window]\nspans = -1\n", "t.ini:2: [window] spans:",
		 "out of range"},
	};

	run_bad_cases(bc, sizeof bc / sizeof bc[0]);
}
END_TEST

START_TEST(test_huge_and_overflowing_numbers_are_out_of_range)
{
	static const struct bad_case bc[] = {
		{"[log]\ninterval = 1e400\n", "t.ini:2: [log] interval:",
		 "\"1e400\" is out of range"},
		{"[log]\ninterval = 99999999999999999999999\n",
		 "t.ini:2: [log] interval:", "out of range"},
		{"[log]\ninterval = 86400.5\n", "t.ini:2: [log] interval:",
		 "out of range"},
		{"[log]\ninterval = 0.05\n", "t.ini:2: [log] interval:",
		 "out of range"},
		{"[log]\ntop = 99999999999999999999999\n",
		 "t.ini:2: [log] top:",
		 "out of range"},
		{"[log]\ntop = 18446744073709551616\n", "t.ini:2: [log] top:",
		 "out of range"},
		{"[log]\ntop = 1e400\n", "t.ini:2: [log] top:", "out of range"},
		{"[log]\ntop = 100001\n", "t.ini:2: [log] top:",
		 "\"100001\" is out of range; accepted: a whole number from 0 "
		 "(all) to 100000; keeping 20"},
		{"[window]\nbuckets = 1\n", "t.ini:2: [window] buckets:",
		 "accepted: a whole number from 2 to 86400; keeping 60"},
		{"[window]\nbuckets = 86401\n", "t.ini:2: [window] buckets:",
		 "out of range"},
		{"[window]\nbucket = 3601\n", "t.ini:2: [window] bucket:",
		 "accepted: seconds from 0.1 to 3600; keeping 1"},
		{"[window]\nbucket = 1e-400\n", "t.ini:2: [window] bucket:",
		 "out of range"},
	};

	run_bad_cases(bc, sizeof bc / sizeof bc[0]);
}
END_TEST

START_TEST(test_empty_values_are_reported)
{
	static const struct bad_case bc[] = {
		{"[log]\ninterval =\n", "t.ini:2: [log] interval:",
		 "empty value; accepted: seconds"},
		{"[log]\npath =   ; comment\n", "t.ini:2: [log] path:",
		 "empty value"},
		{"[log]\nformat =\n", "t.ini:2: [log] format:", "empty value"},
		{"[log]\ntop =\n", "t.ini:2: [log] top:", "empty value"},
		{"[stats]\nbytes =\n", "t.ini:2: [stats] bytes:",
		 "empty value"},
		{"[window]\nspans = ,\n", "t.ini:2: [window] spans:",
		 "no spans given; accepted: 1 to 4 ascending durations in "
		 "seconds, each a multiple of bucket and at most buckets x "
		 "bucket; keeping 1, 10, 60"},
	};

	run_bad_cases(bc, sizeof bc / sizeof bc[0]);
}
END_TEST

START_TEST(test_bad_skip_lists_keep_the_old_list)
{
	char ini[256];

	ck_assert_int_eq(load("[sockmeter]\nskip = keep\n"
			      "skip = 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 "
			      "17\n"),
			 1);
	expect_one("t.ini:3: [sockmeter] skip:", "more than 16 names");
	ck_assert_int_eq(cfg.nskip, 1);
	ck_assert_str_eq(cfg.skip[0], "keep");

	reset();
	snprintf(ini, sizeof ini, "[sockmeter]\nskip = ok %064d\n", 0);
	ck_assert_int_eq(load(ini), 1);
	expect_one("t.ini:2: [sockmeter] skip:", "longer than 63 bytes");
	expect_unchanged();

	reset();
	snprintf(ini, sizeof ini, "[sockmeter]\nskip = ok %063d\n", 0);
	ck_assert_int_eq(load(ini), 0);
	ck_assert_int_eq(cfg.nskip, 2);
}
END_TEST

/* ---- binary content ------------------------------------------------- */

START_TEST(test_nul_byte_ignores_only_its_line)
{
	static const char ini[] = "[log]\ntop = 5\0junk\ninterval = 3\n";

	ck_assert_int_eq(config_load_string(&cfg, "t.ini", ini,
					    sizeof ini - 1, collect, &msgs),
			 1);
	expect_one("t.ini:2: binary or control characters, line ignored",
		   NULL);
	ck_assert_uint_eq(cfg.top, 20);
	ck_assert_uint_eq(cfg.interval_ms, 3000);
}
END_TEST

START_TEST(test_control_characters_are_reported_per_line)
{
	ck_assert_int_eq(load("[log]\ntop = \x1b[31m5\ninterval = 3\r4\n"
			      "format = json\x7f\npath = stderr\n"),
			 3);
	ck_assert_int_eq(msgs.n, 3);
	expect_msg(0, "t.ini:2: binary or control characters", NULL);
	expect_msg(1, "t.ini:3: binary or control characters", NULL);
	expect_msg(2, "t.ini:4: binary or control characters", NULL);
	ck_assert_uint_eq(cfg.top, 20);
	ck_assert_uint_eq(cfg.interval_ms, 10000);
	ck_assert_int_eq(cfg.format, FORMAT_TEXT);
	ck_assert_str_eq(cfg.log_path, "stderr");
}
END_TEST

START_TEST(test_binary_blob_does_not_crash)
{
	char blob[4096];
	size_t i;
	int n;

	for (i = 0; i < sizeof blob; i++)
		blob[i] = (char)(i * 7919 % 251);
	n = config_load_string(&cfg, "t.ini", blob, sizeof blob, collect,
			       &msgs);
	ck_assert_int_gt(n, 0);
	ck_assert_int_eq(n, msgs.n);
}
END_TEST

/* ---- long lines ----------------------------------------------------- */

/* "[log]\n", then a line of exactly len bytes setting top, then "top = 3". */
static int load_with_line_of(size_t len, const char *eol)
{
	char ini[512];
	size_t n;

	n = (size_t)snprintf(ini, sizeof ini, "[log]\ntop = 5 ;");
	memset(ini + n, 'x', len - (n - 6));
	n = 6 + len;
	n += (size_t)snprintf(ini + n, sizeof ini - n, "%stop2 = 1\n", eol);
	ck_assert_uint_lt(n, sizeof ini);
	return config_load_string(&cfg, "t.ini", ini, n, collect, &msgs);
}

START_TEST(test_long_line_is_reported_once_and_skipped)
{
	ck_assert_int_eq(load_with_line_of(300, "\n"), 2);
	ck_assert_int_eq(msgs.n, 2);
	expect_msg(0, "t.ini:2: line longer than 199 bytes, ignored", NULL);
	expect_msg(1, "t.ini:3: [log] top2: unknown key", NULL);
	ck_assert_uint_eq(cfg.top, 20);
}
END_TEST

START_TEST(test_line_of_199_bytes_is_accepted_200_is_not)
{
	ck_assert_int_eq(load_with_line_of(199, "\n"), 1);
	expect_one("t.ini:3: [log] top2: unknown key", NULL);
	ck_assert_uint_eq(cfg.top, 5);

	reset();
	ck_assert_int_eq(load_with_line_of(199, "\r\n"), 1);
	ck_assert_uint_eq(cfg.top, 5);

	reset();
	ck_assert_int_eq(load_with_line_of(200, "\n"), 2);
	expect_msg(0, "t.ini:2: line longer than 199 bytes", NULL);
	ck_assert_uint_eq(cfg.top, 20);
}
END_TEST

START_TEST(test_long_value_line_keeps_line_numbers)
{
	char ini[1024];
	size_t n;

	n = (size_t)snprintf(ini, sizeof ini, "[log]\n\npath = /");
	memset(ini + n, 'p', 500);
	n += 500;
	n += (size_t)snprintf(ini + n, sizeof ini - n,
			      "\ninterval = 4\ntop = x\n");
	ck_assert_int_eq(config_load_string(&cfg, "t.ini", ini, n, collect,
					    &msgs),
			 2);
	expect_msg(0, "t.ini:3: line longer than", NULL);
	expect_msg(1, "t.ini:5: [log] top:", NULL);
	ck_assert_uint_eq(cfg.interval_ms, 4000);
	ck_assert_str_eq(cfg.log_path, CONFIG_DEFAULT_LOG);
}
END_TEST

/* ---- file structure ------------------------------------------------- */

START_TEST(test_unknown_section_is_reported_and_keys_ignored)
{
	ck_assert_int_eq(load("[foo]\na = 1\nb = 2\n[log]\ntop = 3\n"), 1);
	expect_one("sockmeter: t.ini:1: unknown section [foo]; accepted: "
		   "[sockmeter] [log] [stats] [window] [track]",
		   NULL);
	ck_assert_uint_eq(cfg.top, 3);
}
END_TEST

START_TEST(test_unknown_key_lists_the_section_keys)
{
	ck_assert_int_eq(load("[log]\n\ncolour = red\nTop = 3\n"), 2);
	ck_assert_int_eq(msgs.n, 2);
	ck_assert_str_eq(msgs.text[0],
			 "sockmeter: t.ini:3: [log] colour: unknown key; "
			 "accepted keys: path format interval top "
			 "close_records syslog max_size keep");
	expect_msg(1, "t.ini:4: [log] Top: unknown key", NULL);
	expect_unchanged();
}
END_TEST

START_TEST(test_syntax_errors_are_reported_and_skipped)
{
	ck_assert_int_eq(load("[log]\njust words\ntop: 3\n= 4\nto p = 5\n"
			      "[log] junk\n[log\n[]\ninterval = 2\n"),
			 7);
	ck_assert_int_eq(msgs.n, 7);
	ck_assert_str_eq(msgs.text[0],
			 "sockmeter: t.ini:2: syntax error: expected \"key = "
			 "value\", \"[section]\" or a comment");
	expect_msg(1, "t.ini:3: syntax error", NULL);
	expect_msg(2, "t.ini:4: syntax error", NULL);
	expect_msg(3, "t.ini:5: syntax error", NULL);
	expect_msg(4, "t.ini:6: syntax error", NULL);
	expect_msg(5, "t.ini:7: syntax error", NULL);
	expect_msg(6, "t.ini:8: syntax error", NULL);
	/* the keys under a bad header are ignored without more messages */
	expect_unchanged();
}
END_TEST

START_TEST(test_key_before_any_section_is_reported)
{
	ck_assert_int_eq(load("top = 3\n[log]\n"), 1);
	expect_one("t.ini:1: key \"top\" before any [section]", NULL);
	expect_unchanged();
}
END_TEST

START_TEST(test_problems_are_counted_without_a_report_function)
{
	ck_assert_int_eq(config_load_string(&cfg, "t.ini", "[x]\n[log]\ntop=a",
					    15, NULL, NULL),
			 2);
}
END_TEST

/* ---- files ---------------------------------------------------------- */

START_TEST(test_example_config_loads_clean_and_equals_defaults)
{
	ck_assert_int_eq(config_load_file(&cfg, EXAMPLE_INI, collect, &msgs),
			 0);
	ck_assert_msg(msgs.n == 0, "%s", msgs.text[0]);
	expect_unchanged();
}
END_TEST

START_TEST(test_missing_file_is_reported_and_ignored)
{
	errno = 1234;
	ck_assert_int_eq(config_load_file(&cfg, "/nonexistent/sm.ini",
					  collect, &msgs),
			 -ENOENT);
	ck_assert_int_eq(errno, 1234);
	ck_assert_int_eq(msgs.n, 1);
	ck_assert_str_eq(msgs.text[0],
			 "sockmeter: /nonexistent/sm.ini: cannot read config: "
			 "No such file or directory; using defaults");
	expect_unchanged();
}
END_TEST

START_TEST(test_directory_is_reported_and_ignored)
{
	ck_assert_int_eq(config_load_file(&cfg, "/tmp", collect, &msgs),
			 -EISDIR);
	expect_one("sockmeter: /tmp: cannot read config: Is a directory", NULL);
	ck_assert_int_eq(config_load_file(&cfg, "/dev/null", collect, &msgs),
			 -EINVAL);
	expect_msg(1, "/dev/null: cannot read config: not a regular file",
		   NULL);
	ck_assert_int_eq(config_load_file(&cfg, NULL, collect, &msgs),
			 -EINVAL);
	ck_assert_int_eq(msgs.n, 3);
	expect_unchanged();
}
END_TEST

/* A FIFO is refused without being opened: an open would let a writer
 * waiting for a reader through, and our close would then kill it with
 * SIGPIPE (a helper's sweep).  The writer here must still be waiting. */
START_TEST(test_fifo_is_refused_unopened)
{
	char path[64] = "/tmp/sm-cfg-fifo-XXXXXX";
	int status;
	pid_t w;

	ck_assert_ptr_nonnull(mkdtemp(path));
	strncat(path, "/f", sizeof(path) - strlen(path) - 1);
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	w = fork();
	ck_assert_int_ge(w, 0);
	if (w == 0) { /* blocks in open until someone opens it to read */
		int fd = open(path, O_WRONLY);

		_exit(fd >= 0 ? 1 : 2);
	}
	usleep(100000);
	ck_assert_int_eq(config_load_file(&cfg, path, collect, &msgs),
			 -EINVAL);
	expect_one("cannot read config: not a regular file", NULL);
	usleep(100000);
	ck_assert_int_eq(waitpid(w, &status, WNOHANG), 0); /* still waiting */
	kill(w, SIGKILL);
	waitpid(w, &status, 0);
	unlink(path);
	*strrchr(path, '/') = '\0';
	rmdir(path);
	expect_unchanged();
}
END_TEST

START_TEST(test_too_large_file_is_ignored_whole)
{
	static char big[CONFIG_FILE_MAX + 2];
	const char *path;

	memset(big, '\n', sizeof big);
	memcpy(big, "[log]\ntop = 3\n", 14);
	path = temp_file(big, sizeof big);
	ck_assert_int_eq(config_load_file(&cfg, path, collect, &msgs), -EFBIG);
	expect_one(path, "cannot read config: larger than 65536 bytes");
	unlink(path);
	expect_unchanged();

	reset();
	path = temp_file(big, CONFIG_FILE_MAX);
	ck_assert_int_eq(config_load_file(&cfg, path, collect, &msgs), 0);
	unlink(path);
	ck_assert_uint_eq(cfg.top, 3);
}
END_TEST

START_TEST(test_file_messages_name_the_path_and_line)
{
	static const char ini[] = "[log]\ntop = 3\n\ninterval = x\n[nope]\n";
	const char *path = temp_file(ini, sizeof ini - 1);
	char where[96];

	ck_assert_int_eq(config_load_file(&cfg, path, collect, &msgs), 2);
	snprintf(where, sizeof where, "sockmeter: %s:4: [log] interval:", path);
	expect_msg(0, where, NULL);
	snprintf(where, sizeof where, "sockmeter: %s:5: unknown section", path);
	expect_msg(1, where, NULL);
	unlink(path);
	ck_assert_uint_eq(cfg.top, 3);
}
END_TEST

/* ---- window spans --------------------------------------------------- */

static void expect_spans(uint32_t n, uint32_t a, uint32_t b, uint32_t c)
{
	const uint32_t want[] = {a, b, c};
	uint32_t i;

	ck_assert_uint_eq(cfg.nspans, n);
	for (i = 0; i < n; i++)
		ck_assert_uint_eq(cfg.span_buckets[i], want[i]);
}

START_TEST(test_spans_are_checked_after_the_whole_file)
{
	ck_assert_int_eq(load("[window]\nspans = 2, 20\nbucket = 2\n"), 0);
	expect_spans(2, 1, 10, 0);
}
END_TEST

START_TEST(test_spans_longer_than_the_ring_fall_back)
{
	ck_assert_int_eq(load("[window]\nbuckets = 30\nspans = 1, 10, 60\n"
			      "top = 1\n"),
			 2);
	ck_assert_int_eq(msgs.n, 2);
	expect_msg(0, "t.ini:4: [window] top: unknown key", NULL);
	ck_assert_str_eq(msgs.text[1],
			 "sockmeter: t.ini:3: [window] spans: 60 s is longer "
			 "than the ring (30 buckets x 1 s); accepted: 1 to 4 "
			 "ascending durations in seconds, each a multiple of "
			 "bucket and at most buckets x bucket; using 1, 10");
	expect_spans(2, 1, 10, 0);
}
END_TEST

START_TEST(test_spans_not_a_multiple_of_the_bucket_fall_back)
{
	ck_assert_int_eq(load("[window]\nbucket = 2\nspans = 1, 10\n"), 1);
	expect_one("t.ini:3: [window] spans: 1 s is not a multiple of bucket "
		   "(2 s)",
		   "using 10, 60");
	expect_spans(2, 5, 30, 0);
}
END_TEST

START_TEST(test_no_default_span_fits_so_the_whole_ring_is_used)
{
	ck_assert_int_eq(load("[window]\nbucket = 7\nbuckets = 3\n"
			      "spans = 3\n"),
			 1);
	expect_one("t.ini:4: [window] spans:", "using 21");
	expect_spans(1, 3, 0, 0);
}
END_TEST

START_TEST(test_changed_ring_derives_default_spans_silently)
{
	ck_assert_int_eq(load("[window]\nbuckets = 5\n"), 0);
	expect_spans(1, 1, 0, 0);
	reset();
	ck_assert_int_eq(load("[window]\nbucket = 0.5\n"), 0);
	expect_spans(2, 2, 20, 0);
	reset();
	ck_assert_int_eq(load("[window]\nbucket = 7\n"), 0);
	expect_spans(1, 60, 0, 0);
	ck_assert_int_eq(msgs.n, 0);
}
END_TEST

START_TEST(test_bad_span_lists_are_reported)
{
	static const struct bad_case bc[] = {
		{"[window]\nspans = 10, 1\n", "t.ini:2: [window] spans:",
		 "spans are not in ascending order; accepted: 1 to 4 "
		 "ascending durations in seconds"},
		{"[window]\nspans = 1, 1\n", "t.ini:2: [window] spans:",
		 "not in ascending order"},
		{"[window]\nspans = 1 2 3 4 5\n", "t.ini:2: [window] spans:",
		 "more than 4 spans; accepted:"},
		{"[window]\nspans = 0\n", "t.ini:2: [window] spans:",
		 "\"0\" is out of range"},
		{"[window]\nspans = 1e400\n", "t.ini:2: [window] spans:",
		 "out of range; accepted:"},
	};

	run_bad_cases(bc, sizeof bc / sizeof bc[0]);
}
END_TEST

/* ---- [log] close_records and syslog ---------------------------------- */

START_TEST(test_close_records_each_or_off)
{
	ck_assert_int_eq(cfg.close_records, CLOSE_RECORDS_EACH);
	ck_assert_int_eq(load("[log]\nclose_records = OFF\n"), 0);
	ck_assert_int_eq(cfg.close_records, CLOSE_RECORDS_OFF);
	ck_assert_int_eq(load("[log]\nclose_records = each\n"), 0);
	ck_assert_int_eq(cfg.close_records, CLOSE_RECORDS_EACH);
	ck_assert_int_eq(load("[log]\n\nclose_records = summary\n"), 1);
	expect_msg(0, "t.ini:3: [log] close_records", "each off");
	ck_assert_int_eq(cfg.close_records, CLOSE_RECORDS_EACH);
}
END_TEST

START_TEST(test_syslog_is_off_or_an_absolute_socket_path)
{
	char longp[200];

	ck_assert_str_eq(cfg.syslog_path, "/dev/log");
	ck_assert_int_eq(load("[log]\nsyslog = /run/x.sock\n"), 0);
	ck_assert_str_eq(cfg.syslog_path, "/run/x.sock");
	ck_assert_int_eq(load("[log]\nsyslog = Off\n"), 0);
	ck_assert_str_eq(cfg.syslog_path, "off");
	ck_assert_int_eq(load("[log]\nsyslog = dev/log\n"), 1);
	expect_msg(0, "t.ini:2: [log] syslog", "absolute path");
	memset(longp, 'a', sizeof(longp));
	longp[0] = '/';
	snprintf(longp + 120, 40, "\n");
	{
		char text[256];

		snprintf(text, sizeof(text), "[log]\nsyslog = %s", longp);
		ck_assert_int_eq(load(text), 1);
	}
	ck_assert_str_eq(cfg.syslog_path, "off");
}
END_TEST

START_TEST(test_env_close_records_and_syslog)
{
	static const char *const env[] = {"SOCKMETER_CLOSE_RECORDS", "off",
					  "SOCKMETER_SYSLOG", "/tmp/l.sock",
					  NULL};

	fake_env = env;
	ck_assert_int_eq(config_apply_env(&cfg, fake_getenv, collect, &msgs),
			 0);
	ck_assert_int_eq(cfg.close_records, CLOSE_RECORDS_OFF);
	ck_assert_str_eq(cfg.syslog_path, "/tmp/l.sock");
}
END_TEST

/* ---- environment ---------------------------------------------------- */

START_TEST(test_env_overrides_every_variable)
{
	static const char *const env[] = {
		"SOCKMETER", "off", "SOCKMETER_LOG", " stderr ",
		"SOCKMETER_FORMAT", "json", "SOCKMETER_INTERVAL", "2.5",
		"SOCKMETER_TOP", "0", NULL};

	fake_env = env;
	ck_assert_int_eq(config_apply_env(&cfg, fake_getenv, collect, &msgs),
			 0);
	ck_assert_int_eq(msgs.n, 0);
	ck_assert(!cfg.enabled);
	ck_assert_str_eq(cfg.log_path, "stderr");
	ck_assert_int_eq(cfg.format, FORMAT_JSON);
	ck_assert_uint_eq(cfg.interval_ms, 2500);
	ck_assert_uint_eq(cfg.top, 0);
}
END_TEST

START_TEST(test_env_kill_switch_spellings)
{
	static const char *const off[] = {"off", "0", "false", "no", "OFF"};
	const char *env[] = {"SOCKMETER", NULL, NULL};
	size_t i;

	fake_env = env;
	for (i = 0; i < sizeof off / sizeof off[0]; i++) {
		cfg.enabled = true;
		env[1] = off[i];
		ck_assert_int_eq(config_apply_env(&cfg, fake_getenv, collect,
						  &msgs),
				 0);
		ck_assert(!cfg.enabled);
	}
	env[1] = "on";
	ck_assert_int_eq(config_apply_env(&cfg, fake_getenv, collect, &msgs),
			 0);
	ck_assert(cfg.enabled);
}
END_TEST

START_TEST(test_env_bad_values_are_reported_and_ignored)
{
	static const char *const env[] = {
		"SOCKMETER", "maybe", "SOCKMETER_LOG", "/tmp/%q",
		"SOCKMETER_FORMAT", "xml", "SOCKMETER_INTERVAL", "x",
		"SOCKMETER_TOP", "-1", NULL};

	fake_env = env;
	ck_assert_int_eq(config_apply_env(&cfg, fake_getenv, collect, &msgs),
			 5);
	ck_assert_int_eq(msgs.n, 5);
	expect_msg(0, "sockmeter: environment SOCKMETER: \"maybe\" is not a "
		      "boolean",
		   "; ignored");
	expect_msg(1, "environment SOCKMETER_LOG: \"/tmp/%q\" uses unknown",
		   NULL);
	expect_msg(2, "environment SOCKMETER_FORMAT:", NULL);
	ck_assert_str_eq(msgs.text[3],
			 "sockmeter: environment SOCKMETER_INTERVAL: \"x\" is "
			 "not a number; accepted: seconds from 0.1 to 86400; "
			 "ignored");
	expect_msg(4, "environment SOCKMETER_TOP: \"-1\" is out of range",
		   NULL);
	expect_unchanged();
}
END_TEST

/* A relative state directory would be another directory after a chdir,
 * and for every later process that recovers: refused. */
START_TEST(test_state_dir_must_be_absolute)
{
	static const char *const env[] = {"SOCKMETER_STATE", "relstate/%u",
					  NULL};

	fake_env = env;
	ck_assert_int_eq(config_apply_env(&cfg, fake_getenv, collect, &msgs),
			 1);
	expect_msg(0, "environment SOCKMETER_STATE: \"relstate/%u\" is not "
		      "an absolute path",
		   "; ignored");
	expect_unchanged();
}
END_TEST

START_TEST(test_env_empty_values_count_as_unset)
{
	static const char *const env[] = {
		"SOCKMETER", "", "SOCKMETER_LOG", "  ", "SOCKMETER_FORMAT", "",
		"SOCKMETER_INTERVAL", "", "SOCKMETER_TOP", "", NULL};

	fake_env = env;
	ck_assert_int_eq(config_apply_env(&cfg, fake_getenv, collect, &msgs),
			 0);
	ck_assert_int_eq(config_apply_env(&cfg, NULL, collect, &msgs), 0);
	ck_assert_int_eq(msgs.n, 0);
	expect_unchanged();
}
END_TEST

START_TEST(test_env_log_path_length_limit)
{
	static char path[CONFIG_PATH_MAX + 100];
	const char *env[] = {"SOCKMETER_LOG", path, NULL};

	fake_env = env;
	memset(path, 'a', CONFIG_PATH_MAX - 1);
	path[0] = '/';
	ck_assert_int_eq(config_apply_env(&cfg, fake_getenv, collect, &msgs),
			 0);
	ck_assert_uint_eq(strlen(cfg.log_path), CONFIG_PATH_MAX - 1);

	reset();
	fake_env = env;
	path[CONFIG_PATH_MAX - 1] = 'a';
	ck_assert_int_eq(config_apply_env(&cfg, fake_getenv, collect, &msgs),
			 1);
	expect_one("environment SOCKMETER_LOG:", "longer than 511 bytes");

	reset();
	fake_env = env;
	memset(path, 'a', sizeof path - 1);
	ck_assert_int_eq(config_apply_env(&cfg, fake_getenv, collect, &msgs),
			 1);
	expect_one("environment SOCKMETER_LOG: value longer than", NULL);
	expect_unchanged();
}
END_TEST

START_TEST(test_config_load_reads_file_then_environment)
{
	static const char ini[] = "[log]\ntop = 5\ninterval = 3\nbad\n";
	const char *path = temp_file(ini, sizeof ini - 1);
	const char *env[] = {"SOCKMETER_CONFIG", path, "SOCKMETER_TOP", "7",
			     "SOCKMETER_FORMAT", "yaml", NULL};

	fake_env = env;
	cfg.top = 99; /* config_load starts from the defaults */
	ck_assert_int_eq(config_load(&cfg, fake_getenv, collect, &msgs), 2);
	unlink(path);
	ck_assert_int_eq(msgs.n, 2);
	expect_msg(0, ":4: syntax error", NULL);
	expect_msg(1, "environment SOCKMETER_FORMAT", NULL);
	ck_assert_uint_eq(cfg.top, 7);
	ck_assert_uint_eq(cfg.interval_ms, 3000);
}
END_TEST

/* Blanks around SOCKMETER_CONFIG are not the path's; all blank is unset
 * (before: "   " was looked for as a file, a message and the defaults). */
START_TEST(test_config_load_trims_the_config_path)
{
	static const char ini[] = "[log]\ntop = 5\n";
	const char *path = temp_file(ini, sizeof ini - 1);
	char padded[600];
	const char *env[] = {"SOCKMETER_CONFIG", padded, NULL};

	fake_env = env;
	snprintf(padded, sizeof padded, " \t%s  ", path);
	ck_assert_int_eq(config_load(&cfg, fake_getenv, collect, &msgs), 0);
	ck_assert_uint_eq(cfg.top, 5);
	snprintf(padded, sizeof padded, "   ");
	ck_assert_int_eq(config_load(&cfg, fake_getenv, collect, &msgs), 0);
	ck_assert_int_eq(msgs.n, 0);
	expect_unchanged();
	unlink(path);
}
END_TEST

START_TEST(test_config_load_counts_an_unreadable_file_once)
{
	static const char *const env[] = {"SOCKMETER_CONFIG", "/nonexistent",
					  NULL};

	fake_env = env;
	ck_assert_int_eq(config_load(&cfg, fake_getenv, collect, &msgs), 1);
	expect_one("/nonexistent: cannot read config", NULL);
	expect_unchanged();
}
END_TEST

/* The names the exec check compares (wrap_exit.c): exactly the variables
 * the loader reads, by length too. */
START_TEST(test_config_env_setting_names_what_the_loader_reads)
{
	static const char *const yes[] = { "SOCKMETER", "SOCKMETER_LOG",
		"SOCKMETER_FORMAT", "SOCKMETER_CONFIG", "SOCKMETER_STATE",
		"SOCKMETER_LOG_KEEP" };
	static const char *const no[] = { "SOCKMETER_LIB", "SOCKMETER_LO",
		"SOCKMETER_LOGX", "SOCKMETER_VALGRIND", "LD_PRELOAD", "" };
	size_t i;

	for (i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		ck_assert_msg(config_env_setting(yes[i], strlen(yes[i])), "%s",
			      yes[i]);
	for (i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		ck_assert_msg(!config_env_setting(no[i], strlen(no[i])), "%s",
			      no[i]);
	/* "SOCKMETER_LOG=..." with its length up to the '=' */
	ck_assert(config_env_setting("SOCKMETER_LOG=/x", 13));
}
END_TEST

START_TEST(test_config_load_without_environment_gives_defaults)
{
	static const char *const env[] = {"SOCKMETER_CONFIG", "", NULL};

	cfg.top = 99;
	ck_assert_int_eq(config_load(&cfg, NULL, collect, &msgs), 0);
	expect_unchanged();
	fake_env = env;
	ck_assert_int_eq(config_load(&cfg, fake_getenv, collect, &msgs), 0);
	ck_assert_int_eq(msgs.n, 0);
	expect_unchanged();
}
END_TEST

/* ---- runner --------------------------------------------------------- */

static TCase *tcase(const char *name)
{
	TCase *tc = tcase_create(name);

	tcase_add_checked_fixture(tc, reset, NULL);
	return tc;
}

static Suite *config_suite(void)
{
	Suite *s = suite_create("config");
	TCase *tc;

	tc = tcase("defaults");
	tcase_add_test(tc, test_defaults_are_the_documented_ones);
	tcase_add_test(tc, test_names_are_the_ini_keys);
	tcase_add_test(tc, test_empty_and_comment_only_input_change_nothing);
	suite_add_tcase(s, tc);

	tc = tcase("good values");
	tcase_add_test(tc, test_every_key_sets_its_field);
	tcase_add_test(tc, test_window_day_at_one_second_gets_tier_resolutions);
	tcase_add_test(tc, test_booleans_accept_every_spelling_in_any_case);
	tcase_add_test(tc, test_log_rotation_sizes_take_units_and_off);
	tcase_add_test(tc, test_log_rotation_bad_values_are_reported_with_the_line);
	tcase_add_test(tc, test_env_sets_log_rotation);
	tcase_add_test(tc, test_seconds_are_rounded_to_the_millisecond);
	tcase_add_test(tc, test_a_long_span_is_read_whole);
	tcase_add_test(tc, test_values_are_trimmed_and_inline_comments_dropped);
	tcase_add_test(tc, test_crlf_endings_and_byte_order_mark_are_accepted);
	tcase_add_test(tc, test_indented_line_is_not_a_continuation);
	tcase_add_test(tc, test_skip_list_matches_exact_names);
	tcase_add_test(tc, test_config_load_trims_the_config_path);
	tcase_add_test(tc, test_duplicated_key_last_one_wins);
	suite_add_tcase(s, tc);

	tc = tcase("bad values");
	tcase_add_test(tc, test_garbage_is_not_a_number);
	tcase_add_test(tc, test_negative_numbers_are_out_of_range);
	tcase_add_test(tc, test_huge_and_overflowing_numbers_are_out_of_range);
	tcase_add_test(tc, test_empty_values_are_reported);
	tcase_add_test(tc, test_bad_skip_lists_keep_the_old_list);
	suite_add_tcase(s, tc);

	tc = tcase("binary content");
	tcase_add_test(tc, test_nul_byte_ignores_only_its_line);
	tcase_add_test(tc, test_control_characters_are_reported_per_line);
	tcase_add_test(tc, test_binary_blob_does_not_crash);
	suite_add_tcase(s, tc);

	tc = tcase("long lines");
	tcase_add_test(tc, test_long_line_is_reported_once_and_skipped);
	tcase_add_test(tc, test_line_of_199_bytes_is_accepted_200_is_not);
	tcase_add_test(tc, test_long_value_line_keeps_line_numbers);
	suite_add_tcase(s, tc);

	tc = tcase("structure");
	tcase_add_test(tc, test_unknown_section_is_reported_and_keys_ignored);
	tcase_add_test(tc, test_unknown_key_lists_the_section_keys);
	tcase_add_test(tc, test_syntax_errors_are_reported_and_skipped);
	tcase_add_test(tc, test_key_before_any_section_is_reported);
	tcase_add_test(tc, test_problems_are_counted_without_a_report_function);
	suite_add_tcase(s, tc);

	tc = tcase("files");
	tcase_add_test(tc, test_example_config_loads_clean_and_equals_defaults);
	tcase_add_test(tc, test_missing_file_is_reported_and_ignored);
	tcase_add_test(tc, test_directory_is_reported_and_ignored);
	tcase_add_test(tc, test_fifo_is_refused_unopened);
	tcase_add_test(tc, test_too_large_file_is_ignored_whole);
	tcase_add_test(tc, test_file_messages_name_the_path_and_line);
	suite_add_tcase(s, tc);

	tc = tcase("window spans");
	tcase_add_test(tc, test_spans_are_checked_after_the_whole_file);
	tcase_add_test(tc, test_spans_longer_than_the_ring_fall_back);
	tcase_add_test(tc, test_spans_not_a_multiple_of_the_bucket_fall_back);
	tcase_add_test(tc, test_no_default_span_fits_so_the_whole_ring_is_used);
	tcase_add_test(tc, test_changed_ring_derives_default_spans_silently);
	tcase_add_test(tc, test_bad_span_lists_are_reported);
	suite_add_tcase(s, tc);

	tc = tcase("environment");
	tcase_add_test(tc, test_env_overrides_every_variable);
	tcase_add_test(tc, test_close_records_each_or_off);
	tcase_add_test(tc, test_syslog_is_off_or_an_absolute_socket_path);
	tcase_add_test(tc, test_env_close_records_and_syslog);
	tcase_add_test(tc, test_env_kill_switch_spellings);
	tcase_add_test(tc, test_env_bad_values_are_reported_and_ignored);
	tcase_add_test(tc, test_state_dir_must_be_absolute);
	tcase_add_test(tc, test_env_empty_values_count_as_unset);
	tcase_add_test(tc, test_env_log_path_length_limit);
	tcase_add_test(tc, test_config_load_reads_file_then_environment);
	tcase_add_test(tc, test_config_load_counts_an_unreadable_file_once);
	tcase_add_test(tc, test_config_load_without_environment_gives_defaults);
	tcase_add_test(tc, test_config_env_setting_names_what_the_loader_reads);
	suite_add_tcase(s, tc);

	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(config_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed;
}
