/*
 * fuzz_summary.c - libFuzzer harness for the record formatter.
 *
 * The input drives one record through summary_format: the first bytes
 * choose the config (format, categories, window shape, top), the record's
 * type and counters, up to 4 fds with their kinds and addresses (inet,
 * inet6, unix paths and abstract names of any bytes, unknown families,
 * lengths from 0 to the full sockaddr_un), and the rest is the program
 * name, any bytes.  Rates and timestamps are finite and non-negative, as
 * the meter makes them.
 *
 * Asserted (abort = a finding):
 *   - JSON: the output is exactly one line, and that line is one valid
 *     JSON object (RFC 8259, checked by a strict parser here) made only of
 *     well-formed UTF-8 (RFC 3629), whatever bytes the name or paths held;
 *     a name that is printable UTF-8 without '"' or '\\' appears verbatim;
 *     the lean schema holds (no totals in a close record, no all-zero
 *     error object or size histogram in an fd entry);
 *   - text: no NUL byte, every line ends in '\n', and the number of lines
 *     is what the record's shape calls for (1 for a close record; 2, or 3 +
 *     nfds with fds, plus 1 when fds were omitted) - so no byte of a name or
 *     a path can start a line of its own.
 */
#include "../../core/summary.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* ---- input reader: runs out into zeros ---------------------------------- */

struct in {
	const uint8_t *p;
	size_t n;
};

static uint8_t u8(struct in *in)
{
	uint8_t v = 0;

	if (in->n) {
		v = *in->p++;
		in->n--;
	}
	return v;
}

static uint64_t u64(struct in *in, unsigned bytes)
{
	uint64_t v = 0;

	while (bytes--)
		v = v << 8 | u8(in);
	return v;
}

static void take(struct in *in, void *out, size_t len)
{
	size_t k = len < in->n ? len : in->n;

	memset(out, 0, len);
	memcpy(out, in->p, k);
	in->p += k;
	in->n -= k;
}

/* ---- a strict JSON validator -------------------------------------------- */

struct js {
	const unsigned char *p, *end;
	int depth;
};

static void bad(const char *why, const struct js *j, const char *line)
{
	fprintf(stderr, "fuzz_summary: %s at offset %ld of: %s\n", why,
		(long)(j->p - (const unsigned char *)line), line);
	abort();
}

/* One character at s: ASCII, or a sequence that core/summary.c's own
 * validator accepts (the real one, not a copy: what the formatter keeps
 * verbatim must be what this checker accepts).  0 when invalid. */
static size_t utf8_seq(const unsigned char *s, const unsigned char *end)
{
	if (s[0] < 0x80)
		return 1;
	return summary_utf8_len(s, (size_t)(end - s));
}

static void ws(struct js *j)
{
	while (j->p < j->end && strchr(" \t\r\n", *j->p) && *j->p)
		j->p++;
}

static void value(struct js *j, const char *line);

static void string(struct js *j, const char *line)
{
	if (j->p >= j->end || *j->p != '"')
		bad("expected a string", j, line);
	j->p++;
	for (;;) {
		size_t u;

		if (j->p >= j->end)
			bad("unterminated string", j, line);
		if (*j->p == '"') {
			j->p++;
			return;
		}
		if (*j->p < 0x20)
			bad("control byte in a string", j, line);
		if (*j->p == '\\') {
			j->p++;
			if (j->p >= j->end)
				bad("lone backslash", j, line);
			if (*j->p == 'u') {
				int i;

				for (i = 1; i <= 4; i++)
					if (j->p + i >= j->end ||
					    !strchr("0123456789abcdefABCDEF",
						    j->p[i]) ||
					    !j->p[i])
						bad("bad \\u escape", j, line);
				j->p += 5;
				continue;
			}
			if (!strchr("\"\\/bfnrt", *j->p) || !*j->p)
				bad("bad escape", j, line);
			j->p++;
			continue;
		}
		u = utf8_seq(j->p, j->end);
		if (!u)
			bad("invalid UTF-8", j, line);
		j->p += u;
	}
}

static void number(struct js *j, const char *line)
{
	const unsigned char *s = j->p;

	if (j->p < j->end && *j->p == '-')
		j->p++;
	if (j->p >= j->end || *j->p < '0' || *j->p > '9')
		bad("bad number", j, line);
	if (*j->p == '0')
		j->p++;
	else
		while (j->p < j->end && *j->p >= '0' && *j->p <= '9')
			j->p++;
	if (j->p < j->end && *j->p == '.') {
		j->p++;
		if (j->p >= j->end || *j->p < '0' || *j->p > '9')
			bad("bad fraction", j, line);
		while (j->p < j->end && *j->p >= '0' && *j->p <= '9')
			j->p++;
	}
	if (j->p < j->end && (*j->p == 'e' || *j->p == 'E')) {
		j->p++;
		if (j->p < j->end && (*j->p == '+' || *j->p == '-'))
			j->p++;
		if (j->p >= j->end || *j->p < '0' || *j->p > '9')
			bad("bad exponent", j, line);
		while (j->p < j->end && *j->p >= '0' && *j->p <= '9')
			j->p++;
	}
	if (j->p == s)
		bad("empty number", j, line);
}

static void literal(struct js *j, const char *word, const char *line)
{
	size_t n = strlen(word);

	if ((size_t)(j->end - j->p) < n || memcmp(j->p, word, n) != 0)
		bad("bad literal", j, line);
	j->p += n;
}

static void value(struct js *j, const char *line)
{
	ws(j);
	if (j->p >= j->end)
		bad("missing value", j, line);
	if (++j->depth > 64)
		bad("too deep", j, line);
	switch (*j->p) {
	case '{':
		j->p++;
		ws(j);
		if (j->p < j->end && *j->p == '}') {
			j->p++;
			break;
		}
		for (;;) {
			ws(j);
			string(j, line);
			ws(j);
			if (j->p >= j->end || *j->p != ':')
				bad("expected ':'", j, line);
			j->p++;
			value(j, line);
			ws(j);
			if (j->p < j->end && *j->p == ',') {
				j->p++;
				continue;
			}
			if (j->p < j->end && *j->p == '}') {
				j->p++;
				break;
			}
			bad("expected ',' or '}'", j, line);
		}
		break;
	case '[':
		j->p++;
		ws(j);
		if (j->p < j->end && *j->p == ']') {
			j->p++;
			break;
		}
		for (;;) {
			value(j, line);
			ws(j);
			if (j->p < j->end && *j->p == ',') {
				j->p++;
				continue;
			}
			if (j->p < j->end && *j->p == ']') {
				j->p++;
				break;
			}
			bad("expected ',' or ']'", j, line);
		}
		break;
	case '"':
		string(j, line);
		break;
	case 't':
		literal(j, "true", line);
		break;
	case 'f':
		literal(j, "false", line);
		break;
	case 'n':
		literal(j, "null", line);
		break;
	default:
		number(j, line);
	}
	j->depth--;
}

static void check_json(const char *out, size_t len)
{
	struct js j = {(const unsigned char *)out,
		       (const unsigned char *)out + len, 0};
	const char *nl = memchr(out, '\n', len);

	if (len == 0 || !nl || nl != out + len - 1) {
		fprintf(stderr, "fuzz_summary: not exactly one line: %.*s\n",
			(int)len, out);
		abort();
	}
	if (memchr(out, '\0', len))
		bad("NUL byte in output", &j, out);
	j.end--; /* the newline */
	ws(&j);
	if (j.p >= j.end || *j.p != '{')
		bad("not an object", &j, out);
	value(&j, out);
	ws(&j);
	if (j.p != j.end)
		bad("trailing bytes", &j, out);
}

/*
 * The lean schema: a close record carries no totals and no fds_omitted,
 * an interval or exit record always carries its totals, and no fd entry
 * holds an all-zero error object or size histogram.  (A quote inside a
 * name or path is escaped, so these strings cannot come from one.)
 */
static void check_lean(const struct summary *r, const char *out)
{
	static const char *const zero[] = {
		"\"errors_in\":{\"again\":0,\"intr\":0,\"other\":0}",
		"\"errors_out\":{\"again\":0,\"intr\":0,\"other\":0}",
		"\"sizes_in\":[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]",
		"\"sizes_out\":[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]",
	};
	const char *fds = strstr(out, "\"fds\":[");
	bool close = r->type == SUMMARY_CLOSE;
	size_t i;

	if (!fds || (strstr(out, "\"totals\":{") != NULL) == close ||
	    (strstr(out, "\"fds_omitted\":") != NULL) == close) {
		fprintf(stderr, "fuzz_summary: not the lean schema: %s", out);
		abort();
	}
	for (i = 0; i < sizeof(zero) / sizeof(zero[0]); i++)
		if (strstr(fds, zero[i])) {
			fprintf(stderr, "fuzz_summary: zero field in an fd: %s",
				out);
			abort();
		}
}

/* printable UTF-8 without '"' and '\\': must be kept verbatim in JSON */
static bool plain_utf8(const char *s)
{
	const unsigned char *p = (const unsigned char *)s,
			    *end = p + strlen(s);

	while (p < end) {
		size_t u = utf8_seq(p, end);

		/* (A C1 control, U+0080-U+009F, is escaped: summary.c.) */
		if (!u || *p < 0x20 || *p == 0x7f || *p == '"' || *p == '\\' ||
		    (u == 2 && p[0] == 0xc2 && p[1] < 0xa0))
			return false;
		p += u;
	}
	return true;
}

static void check_text(const struct summary *r, const char *out, size_t len)
{
	size_t lines = 0, i, want;

	if (len == 0 || out[len - 1] != '\n') {
		fprintf(stderr, "fuzz_summary: text not ending in newline\n");
		abort();
	}
	for (i = 0; i < len; i++) {
		if (out[i] == '\0') {
			fprintf(stderr, "fuzz_summary: NUL in text\n");
			abort();
		}
		lines += out[i] == '\n';
	}
	if (r->type == SUMMARY_CLOSE && r->nfds == 1)
		want = 1;
	else
		want = 2 + (r->nfds ? 1 + r->nfds : 0) + (r->omitted ? 1 : 0);
	if (lines != want) {
		fprintf(stderr, "fuzz_summary: %zu text lines, expected %zu:\n%s",
			lines, want, out);
		abort();
	}
}

/* ---- building the record ------------------------------------------------ */

static void make_addr(struct in *in, struct fd_addr *a)
{
	uint8_t how = u8(in);

	memset(a, 0, sizeof(*a));
	switch (how % 6) {
	case 0: /* unknown */
		break;
	case 1:
		a->len = sizeof(a->u.in4);
		a->u.in4.sin_family = AF_INET;
		take(in, &a->u.in4.sin_addr, 4);
		a->u.in4.sin_port = (in_port_t)u64(in, 2);
		break;
	case 2:
		a->len = sizeof(a->u.in6);
		a->u.in6.sin6_family = AF_INET6;
		take(in, &a->u.in6.sin6_addr, 16);
		a->u.in6.sin6_port = (in_port_t)u64(in, 2);
		break;
	case 3:   /* a unix path (or unnamed), any bytes */
	case 4: { /* an abstract name: leading NUL, any bytes */
		size_t max = sizeof(a->u.un.sun_path);
		size_t plen = u8(in) % (max + 1);

		a->u.un.sun_family = AF_UNIX;
		take(in, a->u.un.sun_path, plen);
		if (how % 6 == 4 && plen > 0)
			a->u.un.sun_path[0] = '\0';
		a->len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) +
				     plen);
		break;
	}
	default: /* another family, any length */
		a->u.sa.sa_family = (sa_family_t)u64(in, 2);
		a->len = u8(in) % (sizeof(a->u) + 1);
	}
}

static void make_counters(struct in *in, struct fd_counters *c, bool small)
{
	unsigned d, k;

	memset(c, 0, sizeof(*c));
	for (d = 0; d < DIR_COUNT; d++) {
		c->bytes[d] = u64(in, small ? 2 : 8);
		c->calls[d] = u64(in, small ? 1 : 8);
		for (k = 0; k < ERR_COUNT; k++)
			c->errors[d][k] = u64(in, 1);
		c->sizes[d][u8(in) % SIZE_BUCKETS] = u64(in, 4);
		c->latency_ns[d] = u64(in, small ? 1 : 8);
	}
}

static double rate(struct in *in)
{
	double v = (double)u64(in, 4) * (double)(1 + u8(in));

	return isfinite(v) && v >= 0 ? v : 0.0;
}

#define MAX_FDS 4
#define PROG_MAX 256

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct in in = {data, size};
	struct summary_fd fds[MAX_FDS];
	struct summary r;
	struct config c;
	struct sbuf out = {0};
	char prog[PROG_MAX + 1];
	uint8_t flags, shape;
	unsigned i, k;
	size_t plen;

	config_defaults(&c);
	flags = u8(&in);
	c.format = flags & 1 ? FORMAT_JSON : FORMAT_TEXT;
	for (i = 0; i < CAT_COUNT; i++)
		c.category[i] = (u8(&in) & 1) != 0;
	shape = u8(&in);
	c.bucket_ms = 100u * (1 + shape % 36000u);
	c.buckets = 2 + u8(&in);
	c.nspans = 1 + (shape >> 4) % CONFIG_MAX_SPANS;
	for (k = 0; k < c.nspans; k++)
		c.span_buckets[k] = k + 1 <= c.buckets ? k + 1 : c.buckets;
	c.top = (uint32_t)u64(&in, 2);

	memset(&r, 0, sizeof(r));
	r.type = (enum summary_type)(u8(&in) % 3);
	r.ts_ns = u64(&in, 8);
	r.pid = (long)u64(&in, 4);
	r.start_ns = u64(&in, 8);
	make_counters(&in, &r.totals, false);
	r.fds_open = u64(&in, 2);
	r.fds_closed = u64(&in, 2);
	r.close_dropped = u8(&in) & 1 ? u64(&in, 2) : 0;
	r.nfds = u8(&in) % (MAX_FDS + 1);
	if (r.type == SUMMARY_CLOSE)
		r.nfds = 1;
	r.omitted = u8(&in) & 1 ? (uint32_t)u64(&in, 2) : 0;
	for (i = 0; i < r.nfds; i++) {
		struct summary_fd *f = &fds[i];

		memset(f, 0, sizeof(*f));
		f->s.fd = (int)u64(&in, 3);
		f->s.kind = (enum fd_kind)(u8(&in) % (KIND_COUNT + 1));
		f->s.gen = (uint32_t)u64(&in, 1);
		f->s.opened_ns = u64(&in, 8);
		make_counters(&in, &f->s.c, true);
		make_addr(&in, &f->s.local);
		make_addr(&in, &f->s.peer);
		f->last_active_ns = u64(&in, 8);
		f->closed_ns = u64(&in, 8);
		f->have_rates = u8(&in) & 1;
		for (k = 0; k < c.nspans; k++) {
			f->rate[k][DIR_IN] = rate(&in);
			f->rate[k][DIR_OUT] = rate(&in);
		}
		/* The kernel's view and the peer's name: any bytes. */
		if (u8(&in) & 1) {
			size_t n = in.n < sizeof(f->s.ti) ? in.n
							  : sizeof(f->s.ti);

			memcpy(&f->s.ti, in.p, n);
			in.p += n;
			in.n -= n;
			f->have_unseen = u8(&in) & 1;
			f->unseen[DIR_IN] = u64(&in, 8);
			f->unseen[DIR_OUT] = u64(&in, 8);
		}
		if (u8(&in) & 1) {
			size_t n = u8(&in) % 48;

			n = n < in.n ? n : in.n;
			memcpy(f->peer_name, in.p, n);
			f->peer_name[n] = '\0';
			in.p += n;
			in.n -= n;
			f->lookup_ns = u64(&in, 8);
		}
	}
	r.fds = fds;
	plen = in.n < PROG_MAX ? in.n : PROG_MAX;
	memcpy(prog, in.p, plen);
	prog[plen] = '\0';
	r.prog = prog;

	summary_format(&r, &c, &out);
	if (out.failed)
		abort();
	if (c.format == FORMAT_JSON) {
		check_json(out.p, out.len);
		check_lean(&r, out.p);
		if (plain_utf8(prog)) {
			char *want = malloc(strlen(prog) + 12);

			if (!want)
				abort();
			sprintf(want, "\"prog\":\"%s\"", prog);
			if (!strstr(out.p, want)) {
				fprintf(stderr, "fuzz_summary: prog not "
						"verbatim: %s\n", out.p);
				abort();
			}
			free(want);
		}
	} else {
		check_text(&r, out.p, out.len);
	}
	sbuf_free(&out);
	return 0;
}
