/*
 * fuzz_config.c - libFuzzer harness for the config loader.
 *
 * The input is an ini file, optionally followed by the 4-byte marker
 * "\0ENV" and up to five NUL-separated environment values, handed in that
 * order to a fake getenv as SOCKMETER, SOCKMETER_LOG, SOCKMETER_FORMAT,
 * SOCKMETER_INTERVAL and SOCKMETER_TOP (an empty value reads as unset, the
 * way a missing one does).  Each input is loaded with config_load_string on
 * top of the defaults, then config_apply_env on top of that.
 *
 * Beyond "no crash, no sanitizer report", every documented contract that a
 * load can be checked against is asserted (a violation aborts, which
 * libFuzzer reports as a crash):
 *   - the struct is valid afterwards: every field within its documented
 *     range, strings NUL-terminated, spans ascending and fitting the ring;
 *   - each message is one line starting "sockmeter: ", shorter than 1024
 *     bytes; a message about the file names it ("NAME:");
 *   - the return value is the number of problems, and exactly that many
 *     messages are given, or CONFIG_MAX_MESSAGES and one "more than"
 *     line when there were more;
 *   - errno is left as it was;
 *   - a load with no problem changes nothing when repeated (idempotent).
 *
 *   build:  make -f Makefile -f tests/hardening.mk fuzz-short
 *   run:    build/fuzz/fuzz_config -dict=tests/fuzz/config.dict \
 *               tests/fuzz/corpus/config
 */
#include "../../config/config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NAME "fuzz.ini"
#define MSG_LIMIT 1024
#define STR_(x) #x
#define STR(x) STR_(x)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const env_names[] = {
	"SOCKMETER", "SOCKMETER_LOG", "SOCKMETER_FORMAT",
	"SOCKMETER_INTERVAL", "SOCKMETER_TOP",
};
#define NENV (sizeof(env_names) / sizeof(env_names[0]))

/* The fake environment of the current input (one input at a time). */
static char *env_values[NENV];

static const char *fake_getenv(const char *name)
{
	size_t i;

	for (i = 0; i < NENV; i++)
		if (strcmp(name, env_names[i]) == 0)
			return env_values[i];
	return NULL;
}

struct msgs {
	int n;        /* messages received */
	int more;     /* "more than N problems" lines among them */
	bool in_file; /* messages about the file must name it */
};

static void check(bool cond, const char *what, const char *detail)
{
	if (cond)
		return;
	fprintf(stderr, "fuzz_config: contract broken: %s%s%s\n", what,
		detail ? ": " : "", detail ? detail : "");
	abort();
}

static void report(void *ctx, const char *msg)
{
	struct msgs *m = ctx;
	size_t len = strlen(msg);

	m->n++;
	check(len < MSG_LIMIT, "message too long", msg);
	check(strncmp(msg, "sockmeter: ", 11) == 0, "message prefix", msg);
	check(!strchr(msg, '\n') && !strchr(msg, '\r'), "message has a newline",
	      msg);
	if (strcmp(msg, "sockmeter: " NAME ": more than " STR(
				CONFIG_MAX_MESSAGES) " problems, the rest are "
			       "not shown") == 0) {
		m->more++;
		return;
	}
	if (m->in_file)
		check(strncmp(msg + 11, NAME ":", sizeof(NAME)) == 0,
		      "file message does not name the file", msg);
	else
		check(strncmp(msg + 11, "environment SOCKMETER", 21) == 0,
		      "environment message does not name the variable", msg);
}

static void check_messages(const struct msgs *m, int problems)
{
	check(problems >= 0, "negative problem count", NULL);
	if (problems <= CONFIG_MAX_MESSAGES) {
		check(m->n == problems, "messages != problems", NULL);
		check(m->more == 0, "'more than' line without reason", NULL);
	} else {
		check(m->n == CONFIG_MAX_MESSAGES + 1,
		      "flood not capped at CONFIG_MAX_MESSAGES + 1", NULL);
		check(m->more == 1, "no single 'more than' line", NULL);
	}
}

static bool nul_within(const char *s, size_t cap)
{
	return memchr(s, '\0', cap) != NULL;
}

static void check_config(const struct config *c)
{
	uint32_t i;
	int k;

	check(c->interval_ms >= 100 && c->interval_ms <= 86400000,
	      "interval out of range", NULL);
	check(c->top <= 100000, "top out of range", NULL);
	check(c->bucket_ms >= 100 && c->bucket_ms <= 3600000,
	      "bucket out of range", NULL);
	check(c->buckets >= 2 && c->buckets <= 86400, "buckets out of range",
	      NULL);
	check((unsigned)c->format < FORMAT_COUNT, "format", NULL);
	check(c->nspans >= 1 && c->nspans <= CONFIG_MAX_SPANS, "nspans", NULL);
	for (i = 0; i < c->nspans; i++) {
		check(c->span_buckets[i] >= 1 &&
			      c->span_buckets[i] <= c->buckets,
		      "span does not fit the ring", NULL);
		check(i == 0 || c->span_buckets[i] > c->span_buckets[i - 1],
		      "spans not ascending", NULL);
	}
	check(nul_within(c->log_path, sizeof(c->log_path)), "log_path NUL",
	      NULL);
	check(c->log_path[0] != '\0', "empty log path", NULL);
	check(c->nskip >= 0 && c->nskip <= CONFIG_MAX_SKIP, "nskip", NULL);
	for (k = 0; k < c->nskip; k++) {
		check(nul_within(c->skip[k], CONFIG_NAME_MAX), "skip NUL",
		      NULL);
		check(c->skip[k][0] != '\0', "empty skip name", NULL);
		check(!strpbrk(c->skip[k], " \t,"), "separator in skip name",
		      c->skip[k]);
	}
	/* The path template uses only the documented escapes. */
	if (strcmp(c->log_path, "stderr") != 0) {
		const char *p;

		for (p = strchr(c->log_path, '%'); p; p = strchr(p + 2, '%'))
			check(p[1] && strchr("pntu%", p[1]),
			      "unknown escape in path", c->log_path);
	}
}

/* Splits the input into the ini text and the environment values. */
static size_t split(const uint8_t *data, size_t size)
{
	static const char marker[4] = {'\0', 'E', 'N', 'V'};
	const uint8_t *m = NULL;
	size_t i, ini_len = size;

	for (i = 0; i + sizeof(marker) <= size; i++) {
		if (memcmp(data + i, marker, sizeof(marker)) == 0) {
			m = data + i;
			break;
		}
	}
	for (i = 0; i < NENV; i++) {
		free(env_values[i]);
		env_values[i] = NULL;
	}
	if (!m)
		return ini_len;
	ini_len = (size_t)(m - data);
	{
		const uint8_t *p = m + sizeof(marker), *end = data + size;

		for (i = 0; i < NENV && p <= end; i++) {
			const uint8_t *z = memchr(p, '\0', (size_t)(end - p));
			size_t len = z ? (size_t)(z - p) : (size_t)(end - p);

			if (len > 0) {
				env_values[i] = malloc(len + 1);
				if (!env_values[i])
					abort();
				memcpy(env_values[i], p, len);
				env_values[i][len] = '\0';
			}
			if (!z)
				break;
			p = z + 1;
		}
	}
	return ini_len;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct config c, again;
	struct msgs m = {0, 0, true};
	size_t ini_len = split(data, size);
	char *ini;
	int problems;

	/* A copy of exactly ini_len bytes: the loader must not read past
	 * its length (ASan sees it). */
	ini = malloc(ini_len ? ini_len : 1);
	if (!ini)
		abort();
	memcpy(ini, data, ini_len);

	config_defaults(&c);
	errno = 12345;
	problems = config_load_string(&c, NAME, ini, ini_len, report, &m);
	check(errno == 12345, "errno changed by config_load_string", NULL);
	check_messages(&m, problems);
	check_config(&c);

	/* A clean file changes nothing when loaded once more. */
	if (problems == 0) {
		struct msgs m2 = {0, 0, true};

		again = c;
		check(config_load_string(&again, NAME, ini, ini_len, report,
					 &m2) == 0,
		      "second load of a clean file has problems", NULL);
		check(memcmp(&again, &c, sizeof(c)) == 0,
		      "second load of a clean file changed the config", NULL);
	}
	/* No report function: no crash, same count. */
	config_defaults(&again);
	check(config_load_string(&again, NAME, ini, ini_len, NULL, NULL) ==
		      problems,
	      "problem count differs without a report function", NULL);

	m = (struct msgs){0, 0, false};
	errno = 54321;
	problems = config_apply_env(&c, fake_getenv, report, &m);
	check(errno == 54321, "errno changed by config_apply_env", NULL);
	check_messages(&m, problems);
	check(problems <= (int)NENV, "more problems than variables", NULL);
	check_config(&c);

	free(ini);
	return 0;
}
