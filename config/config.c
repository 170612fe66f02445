/*
 * config.c - defaults, the ini file and the environment overrides.
 *
 * The ini syntax is split by the system inih, fed through our own line
 * reader: the reader counts lines, vets each one (length, control bytes,
 * syntax) and hands inih only clean, left-trimmed lines (a blank one in place
 * of a bad one), so inih's multi-line continuation never triggers and every
 * message carries file:line.  Keys live in one table naming the section, the
 * key, the value type, the field in struct config and what is accepted.
 * No global mutable state: everything a load needs is in struct load.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* strcasecmp, strerror_r, O_CLOEXEC under -std=c11 */
#endif

#include "config.h"

#include "../core/rawsys.h"
#include "../core/window.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <ini.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define STR_(x) #x
#define STR(x) STR_(x)

/* inih's line buffer holds INI_MAX_LINE bytes including the NUL, so the
 * longest line text it can take, newline not counted, is one less. */
_Static_assert(CONFIG_LINE_MAX <= INI_MAX_LINE, "inih line buffer too small");
#define LINE_TEXT_MAX (CONFIG_LINE_MAX - 1)

#define MSG_MAX 1024     /* one message line */
#define WHY_MAX 256      /* the problem part of a message */
#define SHOW_MAX 160     /* a value shown in a message */
#define NAME_SHOWN 200   /* bytes of a config file's name in a message */
#define QUOTE_MAX 48     /* bytes of a bad value quoted in a message */
#define SEP " \t,"       /* list separators in skip and spans */

/* Handed to inih in place of a bad [section] line: inih then files the keys
 * that follow under "[", which no valid header can name, and they are
 * ignored without a message of their own. */
#define BAD_SECTION_LINE "[[]"

#define SECTIONS_TEXT "[sockmeter] [log] [stats] [window] [track] [state]"
#define BOOL_TEXT "true false yes no on off 1 0"

static const char *const sections[] = {"sockmeter", "log", "stats", "window",
				       "track", "state"};

/* Spans from a [window] spans line, in ms: checked once the ring is known. */
struct span_list {
	uint32_t n;
	uint64_t ms[CONFIG_MAX_SPANS];
};

/* The state of one load: a file, a string or the environment. */
struct load {
	struct config *c;
	const char *name;  /* file name in messages; NULL for the environment */
	const char *env;   /* the variable being applied */
	config_report_fn report;
	void *ctx;
	int problems;

	const char *buf;   /* the text, its length and the read position */
	size_t len;
	size_t pos;
	int lineno;

	struct span_list spans; /* valid only when spans_line > 0 */
	int spans_line;
	uint64_t bucket_ms0;    /* the ring before the load */
	uint32_t buckets0;
};

struct key_def;

/* Parses v into the key's field; on a bad value writes the problem to why
 * and returns -1, changing nothing. */
typedef int (*parse_fn)(struct load *ld, const struct key_def *k,
			const char *v, char *why, size_t n);
/* Writes the key's current value, as a user would type it, to out. */
typedef void (*show_fn)(const struct load *ld, const struct key_def *k,
			char *out, size_t n);

struct value_type {
	parse_fn parse;
	show_fn show;
	bool empty_ok;
};

struct key_def {
	const char *section;
	const char *key;
	const struct value_type *type;
	size_t offset;          /* of the field in struct config */
	uint64_t min, max;      /* numbers: ms for seconds, else units */
	const char *accepted;
};

struct env_def {
	const char *var;
	const char *section;
	const char *key;
};

/* ---- messages ------------------------------------------------------- */

__attribute__((format(printf, 3, 0))) static void
vsay(struct load *ld, bool at_line, const char *fmt, va_list ap)
{
	char msg[MSG_MAX];
	int n;

	ld->problems++;
	if (!ld->report)
		return;
	/* A binary file would give a message per line: cap the flood. */
	if (ld->problems > CONFIG_MAX_MESSAGES) {
		if (ld->problems == CONFIG_MAX_MESSAGES + 1) {
			snprintf(msg, sizeof msg,
				 "sockmeter: %s: more than %d problems, the "
				 "rest are not shown",
				 ld->name, CONFIG_MAX_MESSAGES);
			ld->report(ld->ctx, msg);
		}
		return;
	}
	if (at_line)
		n = snprintf(msg, sizeof msg, "sockmeter: %s:%d: ", ld->name,
			     ld->lineno);
	else
		n = snprintf(msg, sizeof msg, "sockmeter: ");
	if (n < 0 || (size_t)n >= sizeof msg)
		n = 0;
	vsnprintf(msg + n, sizeof msg - (size_t)n, fmt, ap);
	ld->report(ld->ctx, msg);
}

/* One problem at the current line of the file. */
__attribute__((format(printf, 2, 3))) static void
say_at_line(struct load *ld, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(ld, true, fmt, ap);
	va_end(ap);
}

/* One problem without a line: the file as a whole, or the environment. */
__attribute__((format(printf, 2, 3))) static void
say(struct load *ld, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(ld, false, fmt, ap);
	va_end(ap);
}

/* The len bytes at v in double quotes, cut at QUOTE_MAX bytes, control
 * bytes shown as '?'. */
static void quote_n(char *out, size_t n, const char *v, size_t len)
{
	char tmp[QUOTE_MAX + 1];
	size_t i;

	for (i = 0; i < len && i < QUOTE_MAX; i++) {
		tmp[i] = v[i];
		if ((unsigned char)v[i] < 0x20 || v[i] == 0x7f)
			tmp[i] = '?';
	}
	tmp[i] = '\0';
	snprintf(out, n, "\"%s%s\"", tmp, len > QUOTE_MAX ? "..." : "");
}

static void quote(char *out, size_t n, const char *v)
{
	quote_n(out, n, v, strlen(v));
}

/* A duration in ms as seconds: "10", "0.5", "2.25". */
static void show_ms(char *out, size_t n, uint64_t ms)
{
	char frac[8];
	size_t len;

	if (ms % 1000 == 0) {
		snprintf(out, n, "%llu", (unsigned long long)(ms / 1000));
		return;
	}
	snprintf(frac, sizeof frac, "%03u", (unsigned)(ms % 1000));
	len = strlen(frac);
	while (len > 0 && frac[len - 1] == '0')
		frac[--len] = '\0';
	snprintf(out, n, "%llu.%s", (unsigned long long)(ms / 1000), frac);
}

/* ---- numbers -------------------------------------------------------- */

static bool all_in(const char *s, const char *set)
{
	return s[strspn(s, set)] == '\0';
}

/* A plain decimal number, as strtod reads it but with no blanks, no '+' in
 * front, no hex, inf or nan; a '-' is let through so that it can be called
 * out of range.  *range is set on overflow or underflow. */
static bool decimal(const char *v, double *d, bool *range)
{
	char *end;

	if (!v[0] || !strchr("0123456789.-", v[0]) ||
	    !all_in(v, "0123456789.eE+-"))
		return false;
	errno = 0;
	*d = strtod(v, &end);
	*range = errno == ERANGE;
	return end != v && !*end;
}

/* Parses seconds ("10", "0.5", "2e3") into ms, rounded to the nearest ms,
 * within min_ms .. max_ms. */
static int parse_ms(const char *v, uint64_t min_ms, uint64_t max_ms,
		    uint64_t *out, char *why, size_t n)
{
	char q[QUOTE_MAX + 8];
	bool range;
	double d;

	quote(q, sizeof q, v);
	if (!decimal(v, &d, &range)) {
		snprintf(why, n, "%s is not a number", q);
		return -1;
	}
	/* Rounded first, then checked: 86400.0004 is 86400 s, as documented. */
	if (range || !(d >= 0) || d * 1000.0 + 0.5 >= (double)max_ms + 1.0 ||
	    (uint64_t)(d * 1000.0 + 0.5) < min_ms) {
		snprintf(why, n, "%s is out of range", q);
		return -1;
	}
	*out = (uint64_t)(d * 1000.0 + 0.5);
	return 0;
}

/* Parses a whole number, digits only, within min .. max. */
static int parse_whole(const char *v, uint64_t min, uint64_t max,
		       uint64_t *out, char *why, size_t n)
{
	char q[QUOTE_MAX + 8];
	unsigned long long u;
	bool range;
	double d;

	quote(q, sizeof q, v);
	if (!decimal(v, &d, &range)) {
		snprintf(why, n, "%s is not a number", q);
		return -1;
	}
	if (v[0] == '-' || range || d > (double)max) {
		snprintf(why, n, "%s is out of range", q);
		return -1;
	}
	if (!all_in(v, "0123456789")) {
		snprintf(why, n, "%s is not a whole number", q);
		return -1;
	}
	errno = 0;
	u = strtoull(v, NULL, 10);
	if (errno == ERANGE || u < min || u > max) {
		snprintf(why, n, "%s is out of range", q);
		return -1;
	}
	*out = u;
	return 0;
}

/* ---- value types ---------------------------------------------------- */

static void *field(const struct load *ld, const struct key_def *k)
{
	return (char *)ld->c + k->offset;
}

static int parse_bool(struct load *ld, const struct key_def *k, const char *v,
		      char *why, size_t n)
{
	static const struct {
		const char *word;
		bool value;
	} words[] = {{"true", true}, {"yes", true},  {"on", true},
		     {"1", true},    {"false", false}, {"no", false},
		     {"off", false}, {"0", false}};
	char q[QUOTE_MAX + 8];
	size_t i;

	for (i = 0; i < sizeof words / sizeof words[0]; i++) {
		if (strcasecmp(v, words[i].word) == 0) {
			*(bool *)field(ld, k) = words[i].value;
			return 0;
		}
	}
	quote(q, sizeof q, v);
	snprintf(why, n, "%s is not a boolean", q);
	return -1;
}

static void show_bool(const struct load *ld, const struct key_def *k,
		      char *out, size_t n)
{
	snprintf(out, n, "%s", *(bool *)field(ld, k) ? "true" : "false");
}

static int parse_seconds(struct load *ld, const struct key_def *k,
			 const char *v, char *why, size_t n)
{
	return parse_ms(v, k->min, k->max, (uint64_t *)field(ld, k), why, n);
}

static void show_seconds(const struct load *ld, const struct key_def *k,
			 char *out, size_t n)
{
	show_ms(out, n, *(uint64_t *)field(ld, k));
}

static int parse_u32(struct load *ld, const struct key_def *k, const char *v,
		     char *why, size_t n)
{
	uint64_t u;

	if (parse_whole(v, k->min, k->max, &u, why, n) < 0)
		return -1;
	*(uint32_t *)field(ld, k) = (uint32_t)u;
	return 0;
}

static void show_u32(const struct load *ld, const struct key_def *k,
		     char *out, size_t n)
{
	snprintf(out, n, "%u", (unsigned)*(uint32_t *)field(ld, k));
}

/* A size in bytes: digits with an optional K, M, G, T or P (powers of
 * 1024), or "off" / 0 for none; otherwise within min .. max (the largest
 * is 1P, as the messages say: P was refused as "not a size"). */
static int parse_size(struct load *ld, const struct key_def *k, const char *v,
		      char *why, size_t n)
{
	static const char units[] = "KMGTP";
	char q[QUOTE_MAX + 8], digits[32];
	const char *u;
	size_t len = strlen(v);
	uint64_t val, mul = 1;

	quote(q, sizeof q, v);
	if (strcasecmp(v, "off") == 0) {
		*(uint64_t *)field(ld, k) = 0;
		return 0;
	}
	if (len > 0 && (u = strchr(units, toupper((unsigned char)v[len - 1]))) &&
	    *u) {
		mul = 1ull << (10 * (unsigned)(u - units + 1));
		len--;
	}
	if (len == 0 || len >= sizeof digits) {
		snprintf(why, n, "%s is not a size", q);
		return -1;
	}
	memcpy(digits, v, len);
	digits[len] = '\0';
	if (!all_in(digits, "0123456789")) {
		snprintf(why, n, "%s is not a size", q);
		return -1;
	}
	errno = 0;
	val = strtoull(digits, NULL, 10);
	if (errno == ERANGE || val > k->max / mul ||
	    (val && val * mul < k->min)) {
		snprintf(why, n, "%s is out of range", q);
		return -1;
	}
	*(uint64_t *)field(ld, k) = val * mul;
	return 0;
}

static void show_size(const struct load *ld, const struct key_def *k,
		      char *out, size_t n)
{
	uint64_t v = *(uint64_t *)field(ld, k);

	if (v == 0)
		snprintf(out, n, "off");
	else
		snprintf(out, n, "%llu", (unsigned long long)v);
}

/* A log path template: "stderr", or a path using only %p %n %t %u %%. */
static int parse_path(struct load *ld, const struct key_def *k, const char *v,
		      char *why, size_t n)
{
	char q[QUOTE_MAX + 8];
	size_t len = strlen(v);
	const char *p;

	quote(q, sizeof q, v);
	if (len >= CONFIG_PATH_MAX) {
		snprintf(why, n, "%s is longer than %d bytes", q,
			 CONFIG_PATH_MAX - 1);
		return -1;
	}
	for (p = strchr(v, '%'); p; p = strchr(p + 2, '%')) {
		if (!p[1]) {
			snprintf(why, n, "%s ends with a lone %%", q);
			return -1;
		}
		if (!strchr("pntu%", p[1])) {
			/* Like the quoted value: a control byte must not
			 * reach the terminal or start a line. */
			char c = (unsigned char)p[1] < 0x20 || p[1] == 0x7f
					 ? '?'
					 : p[1];

			snprintf(why, n, "%s uses unknown escape %%%c", q, c);
			return -1;
		}
	}
	memset(field(ld, k), 0, CONFIG_PATH_MAX);
	memcpy(field(ld, k), v, len);
	return 0;
}

/* [state] dir: a directory path with only %u and %% as escapes; "off"
 * (the SOCKMETER_STATE=off form) turns durable state off instead. */
static int parse_state_dir(struct load *ld, const struct key_def *k,
			   const char *v, char *why, size_t n)
{
	char q[QUOTE_MAX + 8];
	const char *p;

	if (strcasecmp(v, "off") == 0) {
		ld->c->state_enabled = false;
		return 0;
	}
	quote(q, sizeof q, v);
	if (!*v) {
		snprintf(why, n, "the directory is empty");
		return -1;
	}
	/* Recovery looks for a process's file where later processes, and
	 * the process itself after a chdir, expand the same text: relative,
	 * that is somewhere else each time (a daemon's chdir("/") left its
	 * file out of reach of its own mark and removal). */
	if (v[0] != '/') {
		snprintf(why, n, "%s is not an absolute path", q);
		return -1;
	}
	for (p = strchr(v, '%'); p; p = strchr(p + 2, '%'))
		if (!p[1] || !strchr("u%", p[1])) {
			snprintf(why, n, "%s uses an escape other than %%u %%%%",
				 q);
			return -1;
		}
	return parse_path(ld, k, v, why, n);
}

static void show_string(const struct load *ld, const struct key_def *k,
			char *out, size_t n)
{
	quote(out, n, (const char *)field(ld, k));
}

const char *config_format_name(enum config_format f)
{
	static const char *const names[FORMAT_COUNT] = {
		[FORMAT_TEXT] = "text",
		[FORMAT_JSON] = "json",
		[FORMAT_PROMETHEUS] = "prometheus",
	};

	return (unsigned)f < FORMAT_COUNT ? names[f] : NULL;
}

static int parse_format(struct load *ld, const struct key_def *k,
			const char *v, char *why, size_t n)
{
	char q[QUOTE_MAX + 8];
	int f;

	for (f = 0; f < FORMAT_COUNT; f++)
		if (strcasecmp(v, config_format_name((enum config_format)f)) ==
		    0) {
			*(enum config_format *)field(ld, k) =
				(enum config_format)f;
			return 0;
		}
	quote(q, sizeof q, v);
	snprintf(why, n, "%s is not a known format", q);
	return -1;
}

static void show_format(const struct load *ld, const struct key_def *k,
			char *out, size_t n)
{
	enum config_format f = *(enum config_format *)field(ld, k);

	snprintf(out, n, "%s", config_format_name(f));
}

static int parse_close_records(struct load *ld, const struct key_def *k,
			       const char *v, char *why, size_t n)
{
	char q[QUOTE_MAX + 8];

	if (strcasecmp(v, "each") == 0 || strcasecmp(v, "off") == 0) {
		*(enum config_close_records *)field(ld, k) =
			strcasecmp(v, "off") == 0 ? CLOSE_RECORDS_OFF
						  : CLOSE_RECORDS_EACH;
		return 0;
	}
	quote(q, sizeof q, v);
	snprintf(why, n, "%s is neither each nor off", q);
	return -1;
}

static void show_close_records(const struct load *ld, const struct key_def *k,
			       char *out, size_t n)
{
	snprintf(out, n, "%s",
		 *(enum config_close_records *)field(ld, k) == CLOSE_RECORDS_OFF
			 ? "off"
			 : "each");
}

/* "off", or the absolute path of a syslog socket (it must fit sun_path). */
static int parse_syslog(struct load *ld, const struct key_def *k,
			const char *v, char *why, size_t n)
{
	char q[QUOTE_MAX + 8];
	size_t len = strlen(v);

	quote(q, sizeof q, v);
	if (strcasecmp(v, "off") != 0 && v[0] != '/') {
		snprintf(why, n, "%s is neither off nor an absolute path", q);
		return -1;
	}
	if (len >= CONFIG_SYSLOG_MAX) {
		snprintf(why, n, "%s is longer than %d bytes", q,
			 CONFIG_SYSLOG_MAX - 1);
		return -1;
	}
	memset(field(ld, k), 0, CONFIG_SYSLOG_MAX);
	memcpy(field(ld, k), strcasecmp(v, "off") == 0 ? "off" : v,
	       strcasecmp(v, "off") == 0 ? 3 : len);
	return 0;
}

/*
 * A list of spans with an empty item: two commas with only blanks between
 * them, or a comma at either end ("1,,10", "1, 10,").  Blanks alone
 * separate too, so "1,,10" would otherwise be read as "1 10" without a
 * word, where a span was most likely left out (skip's names are looser:
 * "a,,b" there names a and b, and a name left out meters a program).
 * True, with why said; a list of no item at all (",") is the caller's.
 */
static bool spans_have_empty_item(const char *v, char *why, size_t n)
{
	bool any = false, blank_field = false, field_has = false;

	/* The fields between commas: one blank field among items is one. */
	for (;; v++) {
		if (*v == ',' || !*v) {
			any |= field_has;
			blank_field |= !field_has;
			field_has = false;
			if (!*v)
				break;
		} else if (*v != ' ' && *v != '\t') {
			field_has = true;
		}
	}
	if (any && blank_field) {
		snprintf(why, n,
			 "an empty item in the list (two commas, or a comma "
			 "at an end)");
		return true;
	}
	return false;
}

/* Program names separated by commas or blanks; empty clears the list. */
static int parse_skip(struct load *ld, const struct key_def *k, const char *v,
		      char *why, size_t n)
{
	char names[CONFIG_MAX_SKIP][CONFIG_NAME_MAX];
	char q[QUOTE_MAX + 8];
	int count = 0;
	size_t len;

	(void)k;
	memset(names, 0, sizeof names);
	for (v += strspn(v, SEP); *v; v += len, v += strspn(v, SEP)) {
		len = strcspn(v, SEP);
		if (count == CONFIG_MAX_SKIP) {
			snprintf(why, n, "more than %d names",
				 CONFIG_MAX_SKIP);
			return -1;
		}
		if (len >= CONFIG_NAME_MAX) {
			quote_n(q, sizeof q, v, len);
			snprintf(why, n, "name %s is longer than %d bytes", q,
				 CONFIG_NAME_MAX - 1);
			return -1;
		}
		memcpy(names[count++], v, len);
	}
	memcpy(ld->c->skip, names, sizeof names);
	ld->c->nskip = count;
	return 0;
}

static void show_skip(const struct load *ld, const struct key_def *k,
		      char *out, size_t n)
{
	size_t used = 0;
	int i;

	(void)k;
	snprintf(out, n, "\"");
	for (i = 0; i < ld->c->nskip && used + 1 < n; i++) {
		used = strlen(out);
		snprintf(out + used, n - used, "%s%s", i ? " " : "",
			 ld->c->skip[i]);
	}
	used = strlen(out);
	snprintf(out + used, n - used, "\"");
}

/* Durations in seconds, ascending; whether they fit the ring is checked
 * after the whole file, when bucket and buckets are final. */
static int parse_spans(struct load *ld, const struct key_def *k, const char *v,
		       char *why, size_t n)
{
	struct span_list s = {0};
	/* Any span of a line or of an environment value fits whole: a span
	 * cut short would be parsed as a number it is not. */
	char tok[1024];
	size_t len;

	if (spans_have_empty_item(v, why, n))
		return -1;
	for (v += strspn(v, SEP); *v; v += len, v += strspn(v, SEP)) {
		len = strcspn(v, SEP);
		if (s.n == CONFIG_MAX_SPANS) {
			snprintf(why, n, "more than %d spans",
				 CONFIG_MAX_SPANS);
			return -1;
		}
		if (len >= sizeof tok) {
			char q[QUOTE_MAX + 8];

			quote_n(q, sizeof q, v, len);
			snprintf(why, n, "%s is not a number", q);
			return -1;
		}
		snprintf(tok, sizeof tok, "%.*s", (int)len, v);
		if (parse_ms(tok, k->min, k->max, &s.ms[s.n], why, n) < 0)
			return -1;
		if (s.n > 0 && s.ms[s.n] <= s.ms[s.n - 1]) {
			snprintf(why, n, "spans are not in ascending order");
			return -1;
		}
		s.n++;
	}
	if (s.n == 0) {
		snprintf(why, n, "no spans given");
		return -1;
	}
	ld->spans = s;
	ld->spans_line = ld->lineno;
	return 0;
}

static void show_span_list(char *out, size_t n, const uint64_t *ms,
			   uint32_t count)
{
	size_t used;
	uint32_t i;

	out[0] = '\0';
	for (i = 0; i < count; i++) {
		used = strlen(out);
		if (used + 1 >= n)
			return;
		snprintf(out + used, n - used, "%s", i ? ", " : "");
		used = strlen(out);
		show_ms(out + used, n - used, ms[i]);
	}
}

/* The default spans for c's bucket and buckets, in ms: those of 1 s, 10 s
 * and 60 s the ring can hold, else the whole ring.  Returns how many. */
static uint32_t default_span_ms(const struct config *c,
				uint64_t ms[CONFIG_MAX_SPANS])
{
	static const uint64_t want_ms[] = {1000, 10000, 60000};
	uint32_t i, got = 0;

	for (i = 0; i < sizeof(want_ms) / sizeof(want_ms[0]) &&
		    got < CONFIG_MAX_SPANS;
	     i++)
		if (want_ms[i] % c->bucket_ms == 0 &&
		    want_ms[i] / c->bucket_ms <= c->buckets)
			ms[got++] = want_ms[i];
	if (got == 0)
		ms[got++] = (uint64_t)c->buckets * c->bucket_ms;
	return got;
}

static void show_spans(const struct load *ld, const struct key_def *k,
		       char *out, size_t n)
{
	const struct config *c = ld->c;
	uint64_t ms[CONFIG_MAX_SPANS];
	uint32_t i;

	(void)k;
	if (ld->spans_line > 0) {
		show_span_list(out, n, ld->spans.ms, ld->spans.n);
		return;
	}
	if (c->bucket_ms != ld->bucket_ms0 || c->buckets != ld->buckets0) {
		/* The spans finish_spans will derive for this bucket
		 * (default_spans), not the default buckets times it: "keeping
		 * 0.5, 5, 30" was said where 1 s and 10 s were in force. */
		show_span_list(out, n, ms, default_span_ms(c, ms));
		return;
	}
	for (i = 0; i < c->nspans; i++)
		ms[i] = c->span_buckets[i] * c->bucket_ms;
	show_span_list(out, n, ms, c->nspans);
}

static const struct value_type type_bool = {parse_bool, show_bool, false};
static const struct value_type type_seconds = {parse_seconds, show_seconds,
					       false};
static const struct value_type type_u32 = {parse_u32, show_u32, false};
static const struct value_type type_size = {parse_size, show_size, false};
static const struct value_type type_path = {parse_path, show_string, false};
static const struct value_type type_state_dir = {parse_state_dir, show_string,
						false};
static const struct value_type type_format = {parse_format, show_format,
					      false};
static const struct value_type type_skip = {parse_skip, show_skip, true};
static const struct value_type type_close_records = {
	parse_close_records, show_close_records, false};
static const struct value_type type_syslog = {parse_syslog, show_string,
					      false};
static const struct value_type type_spans = {parse_spans, show_spans, false};

/* ---- the keys ------------------------------------------------------- */

#define OFF(member) offsetof(struct config, member)
#define CAT_KEY(up, low, def)                                                  \
	{"stats", #low, &type_bool, OFF(category) + CAT_##up * sizeof(bool),   \
	 0, 0, BOOL_TEXT},
#define TRACK_KEY(up, low, def)                                                \
	{"track", #low, &type_bool, OFF(track) + TRACK_##up * sizeof(bool),    \
	 0, 0, BOOL_TEXT},

static const struct key_def keys[] = {
	{"sockmeter", "enabled", &type_bool, OFF(enabled), 0, 0, BOOL_TEXT},
	{"sockmeter", "skip", &type_skip, OFF(skip), 0, 0,
	 "up to " STR(CONFIG_MAX_SKIP) " program names separated by commas "
	 "or blanks, each shorter than " STR(CONFIG_NAME_MAX) " bytes"},
	{"log", "path", &type_path, OFF(log_path), 0, 0,
	 "\"stderr\" or a path shorter than " STR(CONFIG_PATH_MAX) " bytes "
	 "using only the escapes %p %n %t %u %%"},
	{"log", "format", &type_format, OFF(format), 0, 0,
	 "text json prometheus"},
	{"log", "interval", &type_seconds, OFF(interval_ms), 100, 86400000,
	 "seconds from 0.1 to 86400"},
	{"log", "top", &type_u32, OFF(top), 0, 100000,
	 "a whole number from 0 (all) to 100000"},
	{"log", "close_records", &type_close_records, OFF(close_records), 0, 0,
	 "each off"},
	{"log", "syslog", &type_syslog, OFF(syslog_path), 0, 0,
	 "off, or the absolute path of a syslog socket shorter than "
	 STR(CONFIG_SYSLOG_MAX) " bytes"},
	{"log", "max_size", &type_size, OFF(log_max_size), 4096, 1ull << 50,
	 "off, or a size from 4096 to 1P in bytes or with K, M, G, T, P"},
	{"log", "keep", &type_u32, OFF(log_keep), 0, 1000,
	 "a whole number from 0 to 1000"},
	CONFIG_CATEGORIES(CAT_KEY)
	CONFIG_TRACK_KINDS(TRACK_KEY)
	{"track", "max_fds", &type_u32, OFF(max_fds), 0, 1u << 20,
	 "0 (automatic) or a whole number from 1 to 1048576"},
	{"window", "bucket", &type_seconds, OFF(bucket_ms), 100, 3600000,
	 "seconds from 0.1 to 3600"},
	{"window", "buckets", &type_u32, OFF(buckets), 2, 86400,
	 "a whole number from 2 to 86400"},
	{"window", "spans", &type_spans, 0, 100, 3600ULL * 86400 * 1000,
	 "1 to " STR(CONFIG_MAX_SPANS) " ascending durations in seconds, each "
	 "a multiple of bucket and at most buckets x bucket"},
	{"state", "enabled", &type_bool, OFF(state_enabled), 0, 0, BOOL_TEXT},
	{"state", "dir", &type_state_dir, OFF(state_dir), 0, 0,
	 "\"off\" or an absolute directory path shorter than "
	 STR(CONFIG_PATH_MAX) " bytes using only the escapes %u %%"},
};

#undef CAT_KEY
#undef TRACK_KEY
#undef OFF

static const struct env_def env_vars[] = {
	{"SOCKMETER", "sockmeter", "enabled"},
	{"SOCKMETER_LOG", "log", "path"},
	{"SOCKMETER_FORMAT", "log", "format"},
	{"SOCKMETER_INTERVAL", "log", "interval"},
	{"SOCKMETER_TOP", "log", "top"},
	{"SOCKMETER_STATE", "state", "dir"},
	{"SOCKMETER_CLOSE_RECORDS", "log", "close_records"},
	{"SOCKMETER_SYSLOG", "log", "syslog"},
	{"SOCKMETER_TCP_INFO", "stats", "tcp_info"},
	{"SOCKMETER_NAMES", "stats", "names"},
	{"SOCKMETER_LOG_MAX_SIZE", "log", "max_size"},
	{"SOCKMETER_LOG_KEEP", "log", "keep"},
	{"SOCKMETER_MAX_FDS", "track", "max_fds"},
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

bool config_env_setting(const char *name, size_t n)
{
	size_t i;

	if (n == strlen("SOCKMETER_CONFIG") &&
	    !memcmp(name, "SOCKMETER_CONFIG", n))
		return true;
	for (i = 0; i < COUNT(env_vars); i++)
		if (strlen(env_vars[i].var) == n &&
		    !memcmp(name, env_vars[i].var, n))
			return true;
	return false;
}

static bool known_section(const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < COUNT(sections); i++)
		if (strlen(sections[i]) == len &&
		    memcmp(sections[i], name, len) == 0)
			return true;
	return false;
}

static const struct key_def *find_key(const char *section, const char *key)
{
	size_t i;

	for (i = 0; i < COUNT(keys); i++)
		if (!strcmp(keys[i].section, section) &&
		    !strcmp(keys[i].key, key))
			return &keys[i];
	return NULL;
}

/* "path format interval top": the keys of one section. */
static void key_list(const char *section, char *out, size_t n)
{
	size_t i, used;

	out[0] = '\0';
	for (i = 0; i < COUNT(keys); i++) {
		if (strcmp(keys[i].section, section) != 0)
			continue;
		used = strlen(out);
		snprintf(out + used, n - used, "%s%s", used ? " " : "",
			 keys[i].key);
	}
}

/* Applies one value to key k, or reports why not. */
static void apply(struct load *ld, const struct key_def *k, const char *v)
{
	char why[WHY_MAX];
	char now[SHOW_MAX];

	if (!*v && !k->type->empty_ok)
		snprintf(why, sizeof why, "empty value");
	else if (k->type->parse(ld, k, v, why, sizeof why) == 0)
		return;
	if (ld->env) {
		say(ld, "environment %s: %s; accepted: %s; ignored", ld->env,
		    why, k->accepted);
		return;
	}
	k->type->show(ld, k, now, sizeof now);
	say_at_line(ld, "[%s] %s: %s; accepted: %s; keeping %s", k->section,
		    k->key, why, k->accepted, now);
}

/* ---- the window ring and its spans ---------------------------------- */

/* The tier each span is served by (core/window.h plans them; every plan
 * fits WINDOW_MAX_BYTES per fd, so no span list is refused for memory). */
_Static_assert(CONFIG_MAX_SPANS == WINDOW_MAX_SPANS, "one span list");

static void settle_res(struct config *c)
{
	struct window_shape s;
	uint32_t k;

	memset(c->span_res, 0, sizeof(c->span_res));
	if (window_shape_init(&s, c->bucket_ms, c->nspans, c->span_buckets))
		return;
	for (k = 0; k < c->nspans; k++)
		c->span_res[k] = window_res(&s, k);
}

/* The default spans, 1 s, 10 s and 60 s, that fit the ring: whole
 * multiples of the bucket width, at most the ring; else the whole ring. */
static void default_spans(struct config *c)
{
	uint64_t ms[CONFIG_MAX_SPANS];
	uint32_t i;

	c->nspans = default_span_ms(c, ms);
	for (i = 0; i < c->nspans; i++)
		c->span_buckets[i] = (uint32_t)(ms[i] / c->bucket_ms);
	settle_res(c);
}

/* Why the spans read from the file do not fit the final ring, or NULL. */
static const char *spans_misfit(const struct load *ld, char *why, size_t n)
{
	const struct config *c = ld->c;
	char span[32], width[32];
	uint32_t i;

	for (i = 0; i < ld->spans.n; i++) {
		show_ms(span, sizeof span, ld->spans.ms[i]);
		show_ms(width, sizeof width, c->bucket_ms);
		if (ld->spans.ms[i] % c->bucket_ms) {
			snprintf(why, n, "%s s is not a multiple of bucket "
				 "(%s s)", span, width);
			return why;
		}
		if (ld->spans.ms[i] / c->bucket_ms > c->buckets) {
			snprintf(why, n, "%s s is longer than the ring (%u "
				 "buckets x %s s)", span,
				 (unsigned)c->buckets, width);
			return why;
		}
	}
	return NULL;
}

/* Called once the whole file is read: settles the spans. */
static void finish_spans(struct load *ld)
{
	struct config *c = ld->c;
	const struct key_def *k = find_key("window", "spans");
	char why[WHY_MAX], now[SHOW_MAX];
	uint32_t i;

	if (ld->spans_line == 0) {
		if (c->bucket_ms != ld->bucket_ms0 ||
		    c->buckets != ld->buckets0)
			default_spans(c);
		return;
	}
	if (!spans_misfit(ld, why, sizeof why)) {
		for (i = 0; i < ld->spans.n; i++)
			c->span_buckets[i] =
				(uint32_t)(ld->spans.ms[i] / c->bucket_ms);
		c->nspans = ld->spans.n;
		settle_res(c);
		return;
	}
	default_spans(c);
	ld->lineno = ld->spans_line; /* report at the spans line */
	ld->spans_line = 0;          /* and show the spans now in force */
	show_spans(ld, k, now, sizeof now);
	say_at_line(ld, "[window] spans: %s; accepted: %s; using %s", why,
		    k->accepted, now);
}

/* ---- reading lines -------------------------------------------------- */

enum line_kind { LINE_BLANK, LINE_SECTION, LINE_KEY, LINE_BAD };

static bool is_blank(char ch)
{
	return ch == ' ' || ch == '\t';
}

/* NUL and the other control bytes, tab excepted, mean binary content. */
static bool has_control(const char *p, const char *end)
{
	for (; p < end; p++)
		if (((unsigned char)*p < 0x20 && *p != '\t') || *p == 0x7f)
			return true;
	return false;
}

/* "[name]", then nothing or a comment; the name free of '[' and ';'. */
static bool section_line_ok(const char *p, const char *end)
{
	const char *name = p + 1;
	const char *close = memchr(name, ']', (size_t)(end - name));

	if (!close || close == name)
		return false;
	if (memchr(name, '[', (size_t)(close - name)) ||
	    memchr(name, ';', (size_t)(close - name)))
		return false;
	for (p = close + 1; p < end && is_blank(*p); p++)
		;
	return p == end || *p == ';' || *p == '#';
}

/* "key = value": the key one word free of ":;[]", the value anything.
 * Keeping ':' out of keys makes inih split at our '=', not at a ':'. */
static bool key_line_ok(const char *p, const char *end)
{
	const char *eq = memchr(p, '=', (size_t)(end - p));
	const char *k;

	if (!eq || eq == p)
		return false;
	for (k = eq; k > p && is_blank(k[-1]); k--)
		;
	for (; p < k; p++)
		if (is_blank(*p) || strchr(":;[]", *p))
			return false;
	return true;
}

/* Classifies a trimmed line. */
static enum line_kind classify(const char *p, const char *end)
{
	if (p == end || *p == ';' || *p == '#')
		return LINE_BLANK;
	if (*p == '[')
		return section_line_ok(p, end) ? LINE_SECTION : LINE_BAD;
	return key_line_ok(p, end) ? LINE_KEY : LINE_BAD;
}

/* Reports an unknown section at its header; inih still enters it, and
 * on_key ignores its keys silently. */
static void check_section(struct load *ld, const char *p)
{
	const char *name = p + 1;
	size_t len = strcspn(name, "]");

	if (!known_section(name, len))
		say_at_line(ld, "unknown section [%.*s]; accepted: %s",
			    (int)len, name, SECTIONS_TEXT);
}

/* Vets one line (p..end, line ending stripped) and writes what inih is to
 * see to out: the trimmed line, or a blank line when it was reported. */
static void vet_line(struct load *ld, const char *p, const char *end,
		     char *out, size_t n)
{
	enum line_kind kind;
	size_t len;

	out[0] = '\0';
	if ((size_t)(end - p) > LINE_TEXT_MAX || (size_t)(end - p) >= n) {
		say_at_line(ld, "line longer than %d bytes, ignored",
			    LINE_TEXT_MAX);
		return;
	}
	if (has_control(p, end)) {
		say_at_line(ld, "binary or control characters, line ignored");
		return;
	}
	while (p < end && is_blank(*p))
		p++;
	while (end > p && is_blank(end[-1]))
		end--;
	kind = classify(p, end);
	if (kind == LINE_BAD) {
		say_at_line(ld, "syntax error: expected \"key = value\", "
				"\"[section]\" or a comment");
		if (*p == '[' && n > sizeof BAD_SECTION_LINE)
			memcpy(out, BAD_SECTION_LINE, sizeof BAD_SECTION_LINE);
		return;
	}
	if (kind == LINE_BLANK)
		return;
	len = (size_t)(end - p);
	memcpy(out, p, len);
	out[len] = '\0';
	if (kind == LINE_SECTION)
		check_section(ld, p);
}

/* inih's fgets-like reader over ld->buf: one line per call. */
static char *read_line(char *str, int num, void *stream)
{
	struct load *ld = stream;
	const char *p, *stop, *end;

	if (ld->pos >= ld->len || num < 1)
		return NULL;
	p = ld->buf + ld->pos;
	stop = ld->buf + ld->len;
	end = memchr(p, '\n', (size_t)(stop - p));
	if (!end)
		end = stop;
	ld->pos = (size_t)(end - ld->buf) + (end < stop);
	ld->lineno++;
	if (ld->lineno == 1 && end - p >= 3 && !memcmp(p, "\xEF\xBB\xBF", 3))
		p += 3; /* UTF-8 byte order mark */
	if (end > p && end[-1] == '\r')
		end--;
	vet_line(ld, p, end, str, (size_t)num);
	return str;
}

/* inih's handler: one key = value in a section. */
static int on_key(void *user, const char *section, const char *key,
		  const char *value)
{
	struct load *ld = user;
	const struct key_def *k;
	char list[SHOW_MAX];

	if (!*section) {
		say_at_line(ld, "key \"%s\" before any [section]; accepted "
			    "sections: %s", key, SECTIONS_TEXT);
		return 1;
	}
	if (!known_section(section, strlen(section)))
		return 1; /* reported once, at its header */
	k = find_key(section, key);
	if (k) {
		apply(ld, k, value);
		return 1;
	}
	key_list(section, list, sizeof list);
	say_at_line(ld, "[%s] %s: unknown key; accepted keys: %s", section,
		    key, list);
	return 1;
}

/* ---- files ---------------------------------------------------------- */

static void errno_text(int e, char *out, size_t n)
{
#if defined(__GLIBC__) && defined(_GNU_SOURCE)
	const char *s = strerror_r(e, out, n);

	if (s != out)
		snprintf(out, n, "%s", s);
#else
	if (strerror_r(e, out, n) != 0)
		snprintf(out, n, "error %d", e);
#endif
}

/* Only regular files: a FIFO or a terminal could block the host. */
static int check_file(int fd, char *why, size_t n)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	if (!S_ISREG(st.st_mode)) {
		snprintf(why, n, "not a regular file");
		return -EINVAL;
	}
	if (st.st_size > CONFIG_FILE_MAX)
		return -EFBIG;
	return 0;
}

/* Reads the file at path into a heap buffer the caller frees.  Returns 0,
 * or a negative errno with the reason written to why.  Raw system calls,
 * as the sink makes: inside the preloaded library, read() and close()
 * (and open() once wrapped) would bind to our own wrappers and meter our
 * own config reading. */
static int read_file(const char *path, char **bufp, size_t *lenp, char *why,
		     size_t n)
{
	char *buf = NULL;
	size_t len = 0;
	ssize_t got = 0;
	int fd = -1;
	int err = -EINVAL;

	why[0] = '\0';
	if (!path)
		goto err;
	/* Looked at through O_PATH before it is opened: an open has effects
	 * on a FIFO (a writer waiting for a reader is let through, then
	 * killed by SIGPIPE when we close it unread) and on some devices;
	 * a file that is not a regular one is never opened. */
	fd = (int)SM_SYSCALL(SYS_openat, AT_FDCWD, path, O_PATH | O_CLOEXEC);
	err = fd < 0 ? -errno : check_file(fd, why, n);
	if (fd >= 0)
		SM_SYSCALL(SYS_close, fd);
	fd = -1;
	if (err)
		goto err;
	fd = (int)SM_SYSCALL(SYS_openat, AT_FDCWD, path,
			  O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	err = fd < 0 ? -errno : check_file(fd, why, n);
	if (err)
		goto err;
	buf = malloc(CONFIG_FILE_MAX + 1);
	if (!buf) {
		err = -ENOMEM;
		goto err;
	}
	while (len <= CONFIG_FILE_MAX) {
		got = (ssize_t)SM_SYSCALL(SYS_read, fd, buf + len,
				       CONFIG_FILE_MAX + 1 - len);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		len += (size_t)got;
	}
	err = got < 0 ? -errno : len > CONFIG_FILE_MAX ? -EFBIG : 0;
	if (err)
		goto err;
	SM_SYSCALL(SYS_close, fd);
	*bufp = buf;
	*lenp = len;
	return 0;
err:
	if (err == -EFBIG)
		snprintf(why, n, "larger than %d bytes", CONFIG_FILE_MAX);
	else if (!why[0])
		errno_text(-err, why, n);
	free(buf);
	if (fd >= 0)
		SM_SYSCALL(SYS_close, fd);
	return err;
}

/* ---- public --------------------------------------------------------- */

_Static_assert(sizeof CONFIG_DEFAULT_LOG <= CONFIG_PATH_MAX,
	       "default log path too long");

void config_defaults(struct config *c)
{
	memset(c, 0, sizeof *c);
	c->enabled = true;
	memcpy(c->log_path, CONFIG_DEFAULT_LOG, sizeof CONFIG_DEFAULT_LOG);
	c->format = FORMAT_TEXT;
	c->interval_ms = 10000;
	c->top = 20;
	c->close_records = CLOSE_RECORDS_EACH;
	memcpy(c->syslog_path, CONFIG_DEFAULT_SYSLOG,
	       sizeof CONFIG_DEFAULT_SYSLOG);
	c->log_max_size = 0;
	c->log_keep = 5;
#define X(up, low, def) c->category[CAT_##up] = def;
	CONFIG_CATEGORIES(X)
#undef X
#define X(up, low, def) c->track[TRACK_##up] = def;
	CONFIG_TRACK_KINDS(X)
#undef X
	c->max_fds = 0;
	c->bucket_ms = 1000;
	c->buckets = 60;
	default_spans(c);
	c->state_enabled = true;
	memcpy(c->state_dir, CONFIG_DEFAULT_STATE_DIR,
	       sizeof CONFIG_DEFAULT_STATE_DIR);
}

int config_load_string(struct config *c, const char *name, const char *buf,
		       size_t len, config_report_fn report, void *ctx)
{
	struct load ld = {.c = c,
			  .name = name ? name : "(config)",
			  .report = report,
			  .ctx = ctx,
			  .buf = buf,
			  .len = buf ? len : 0,
			  .bucket_ms0 = c->bucket_ms,
			  .buckets0 = c->buckets};
	int saved = errno;

	/* Problems are counted by us; inih's own return adds nothing. */
	ini_parse_stream(read_line, &ld, on_key, &ld);
	finish_spans(&ld);
	errno = saved;
	return ld.problems;
}

/* path as messages show it: a very long one by its start and end, so that
 * a message still ends with its reason. */
static void show_name(char *out, size_t n, const char *path)
{
	size_t len = strlen(path);

	if (len <= NAME_SHOWN)
		snprintf(out, n, "%s", path);
	else
		snprintf(out, n, "%.*s...%s", NAME_SHOWN / 2, path,
			 path + len - NAME_SHOWN / 2);
}

int config_load_file(struct config *c, const char *path,
		     config_report_fn report, void *ctx)
{
	struct load ld = {.c = c, .report = report, .ctx = ctx};
	char why[WHY_MAX], name[NAME_SHOWN + 8];
	char *buf = NULL;
	size_t len = 0;
	int saved = errno;
	int ret;

	show_name(name, sizeof name, path ? path : "(null)");
	ret = read_file(path, &buf, &len, why, sizeof why);
	if (ret < 0) {
		say(&ld, "%s: cannot read config: %s; using defaults", name,
		    why);
		errno = saved;
		return ret;
	}
	ret = config_load_string(c, name, buf, len, report, ctx);
	free(buf);
	errno = saved;
	return ret;
}

/* Copies getenv's value to out, trimmed.  Returns 0 when unset or blank,
 * -1 when too long for out, 1 otherwise. */
static int env_value(const char *raw, char *out, size_t n)
{
	size_t len;

	if (!raw)
		return 0;
	raw += strspn(raw, " \t\r\n");
	len = strlen(raw);
	while (len > 0 && strchr(" \t\r\n", raw[len - 1]))
		len--;
	if (len == 0)
		return 0;
	if (len >= n)
		return -1;
	memcpy(out, raw, len);
	out[len] = '\0';
	return 1;
}

int config_apply_env(struct config *c, config_getenv_fn getenv_fn,
		     config_report_fn report, void *ctx)
{
	struct load ld = {.c = c, .report = report, .ctx = ctx};
	char v[CONFIG_PATH_MAX + 1];
	const struct env_def *e;
	int saved = errno;
	int got;

	for (e = env_vars; getenv_fn && e < env_vars + COUNT(env_vars); e++) {
		got = env_value(getenv_fn(e->var), v, sizeof v);
		ld.env = e->var;
		if (got > 0)
			apply(&ld, find_key(e->section, e->key), v);
		else if (got < 0)
			say(&ld, "environment %s: value longer than %d bytes; "
				 "ignored", e->var, CONFIG_PATH_MAX);
	}
	errno = saved;
	return ld.problems;
}

int config_load(struct config *c, config_getenv_fn getenv_fn,
		config_report_fn report, void *ctx)
{
	const char *path = getenv_fn ? getenv_fn("SOCKMETER_CONFIG") : NULL;
	char trimmed[CONFIG_PATH_MAX];
	int problems = 0;
	int ret;

	config_defaults(c);
	/* Blanks around the path are not its own, as around any value; an
	 * all-blank one is unset (before, "   " was looked for as a file). */
	if (path) {
		size_t len;

		while (*path == ' ' || *path == '\t')
			path++;
		len = strlen(path);
		while (len && (path[len - 1] == ' ' || path[len - 1] == '\t'))
			len--;
		if (len < sizeof(trimmed)) {
			memcpy(trimmed, path, len);
			trimmed[len] = '\0';
			path = trimmed;
		}
	}
	if (path && *path) {
		ret = config_load_file(c, path, report, ctx);
		problems += ret < 0 ? 1 : ret;
	}
	return problems + config_apply_env(c, getenv_fn, report, ctx);
}

#define COMM_LEN 15 /* TASK_COMM_LEN less its NUL */

bool config_skips_program(const struct config *c, const char *name)
{
	int i;

	for (i = 0; name && i < c->nskip; i++)
		if (strcmp(c->skip[i], name) == 0 ||
		    /* the name as ps and /proc/PID/comm show it: its first
		     * 15 bytes */
		    (strlen(c->skip[i]) == COMM_LEN && strlen(name) > COMM_LEN &&
		     strncmp(c->skip[i], name, COMM_LEN) == 0))
			return true;
	return false;
}

const char *config_category_name(enum config_category cat)
{
	static const char *const names[] = {
#define X(up, low, def) #low,
		CONFIG_CATEGORIES(X)
#undef X
	};

	return (size_t)cat < COUNT(names) ? names[cat] : NULL;
}

const char *config_track_name(enum config_track t)
{
	static const char *const names[] = {
#define X(up, low, def) #low,
		CONFIG_TRACK_KINDS(X)
#undef X
	};

	return (size_t)t < COUNT(names) ? names[t] : NULL;
}
