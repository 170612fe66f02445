/*
 * summary.c - formatting log records (contract in summary.h).
 */
#include "summary.h"

#include "classify.h"
#include "decimal.h"
#include "quiet.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define ADDR_TEXT 128

/*
 * The buffer is a mapping of its own, not malloc's: the ticker fills it
 * with a batch of records, and a malloc arena of the ticker's would stay,
 * pages written, in every fork of the host (each copied at fork and
 * faulted again by the next write).  MADV_DONTFORK: a child does not get
 * the mapping at all (no area for fork to copy; preload.c's fork_child
 * starts with an empty sbuf, its ticker state wiped).
 */
void sbuf_free(struct sbuf *b)
{
	if (b->p)
		munmap(b->p, b->cap);
	b->p = NULL;
	b->len = b->cap = 0;
	b->failed = false;
	b->closes = 0;
}

void sbuf_clear(struct sbuf *b, size_t keep)
{
	keep &= ~(size_t)4095;
	if (b->cap > keep) {
		if (!keep) {
			sbuf_free(b);
			return;
		}
		/* Shrinking in place: the head's pages stay, faulted. */
		munmap(b->p + keep, b->cap - keep);
		b->cap = keep;
	}
	b->len = 0;
	b->failed = false;
	b->closes = 0;
	if (b->p)
		b->p[0] = '\0';
}

static bool sbuf_grow(struct sbuf *b, size_t more);

/* Room for more bytes and a NUL: the common case inline (a record's many
 * small pieces), growing out of line. */
static inline bool sbuf_reserve(struct sbuf *b, size_t more)
{
	if (__builtin_expect(b->len + more + 1 <= b->cap, 1))
		return !b->failed;
	return sbuf_grow(b, more);
}

/* A new mapping, the text copied, the old one unmapped: no mremap, which
 * a seccomp filter binding the ticker may trap (Firefox's sandboxes do;
 * quiet.h: memory through mmap and munmap only), as it does madvise. */
static __attribute__((noinline)) bool sbuf_grow(struct sbuf *b, size_t more)
{
	size_t cap = b->cap ? b->cap : 4096;
	void *p;

	if (b->failed)
		return false;
	if (b->len + more + 1 <= b->cap)
		return true;
	while (cap < b->len + more + 1)
		cap *= 2;
	p = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		 -1, 0);
	if (p == MAP_FAILED) {
		b->failed = true;
		b->err = errno;
		return false;
	}
	if (!sm_quiet())
		madvise(p, cap, MADV_DONTFORK);
	if (b->p) {
		memcpy(p, b->p, b->len + 1);
		munmap(b->p, b->cap);
	}
	b->p = p;
	b->cap = cap;
	return true;
}

void sbuf_addf(struct sbuf *b, const char *fmt, ...)
{
	size_t room = b->cap > b->len ? b->cap - b->len : 0;
	va_list ap;
	int n;

	/* Formatted once when it fits (the usual case: a busy server's close
	 * records are made here by the thousand), twice when it grows. */
	if (b->failed)
		return;
	va_start(ap, fmt);
	n = vsnprintf(room ? b->p + b->len : NULL, room, fmt, ap);
	va_end(ap);
	if (n >= 0 && (size_t)n < room) {
		b->len += (size_t)n;
		return;
	}
	if (n < 0 || !sbuf_reserve(b, (size_t)n))
		return;
	va_start(ap, fmt);
	vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

void sbuf_addn(struct sbuf *b, const char *p, size_t n)
{
	if (!sbuf_reserve(b, n))
		return;
	memcpy(b->p + b->len, p, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static void sbuf_addc(struct sbuf *b, char ch)
{
	if (!sbuf_reserve(b, 1))
		return;
	b->p[b->len++] = ch;
	b->p[b->len] = '\0';
}

/*
 * Plain text and numbers without printf.  A busy server's close records
 * are made by the thousand per second, and vsnprintf's parsing of the
 * format was most of their cost (perf: __vfprintf_internal and friends);
 * what needs a float conversion (durations, rates, fractions) still goes
 * through sbuf_addf, so every number reads exactly as before.
 */
static inline __attribute__((always_inline)) void sbuf_adds(struct sbuf *b,
							   const char *str)
{
	size_t n = strlen(str);

	if (!sbuf_reserve(b, n))
		return;
	memcpy(b->p + b->len, str, n + 1);
	b->len += n;
}

static void sbuf_add_dec(struct sbuf *b, uint64_t v, unsigned width)
{
	if (!sbuf_reserve(b, 20))
		return;
	b->len += put_dec(b->p + b->len, v, width);
	b->p[b->len] = '\0';
}

static void sbuf_add_u64(struct sbuf *b, uint64_t v)
{
	sbuf_add_dec(b, v, 1);
}

static void sbuf_add_i64(struct sbuf *b, int64_t v)
{
	if (v < 0)
		sbuf_addc(b, '-');
	sbuf_add_u64(b, v < 0 ? -(uint64_t)v : (uint64_t)v);
}

/* key (literal text), then v in decimal. */
static inline __attribute__((always_inline)) void
sbuf_kv(struct sbuf *b, const char *key, uint64_t v)
{
	sbuf_adds(b, key);
	sbuf_add_u64(b, v);
}

static const uint64_t pow10_u64[] = {
	1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000,
	1000000000
};

/*
 * d with `decimals` decimals (<= 6) at p, exactly as printf's "%.*f"
 * writes it: a finite double is m * 2^e for whole numbers m < 2^53 and e,
 * so d * 10^decimals is (m * 10^decimals) >> -e, an integer shift with
 * its remainder, rounded to the nearest and a tie to even as glibc
 * rounds (in the default rounding mode, which this library never
 * changes).  Returns the length, or 0 for what it leaves to printf: a
 * negative or non-finite d, or one of 2^63 or more.  p has room for 28
 * (20 digits, the point, 6 decimals).
 */
static size_t put_double(char *p, double d, unsigned decimals)
{
	uint64_t bits, m, q;
	unsigned __int128 num, rem, half;
	int e;
	size_t n;

	memcpy(&bits, &d, sizeof(bits));
	if (bits >> 63 || ((bits >> 52) & 0x7ff) == 0x7ff || decimals > 6)
		return 0;
	m = bits & ((1ull << 52) - 1);
	e = (int)((bits >> 52) & 0x7ff);
	if (e) {
		m |= 1ull << 52;
		e -= 1075;
	} else {
		e = -1074; /* subnormal */
	}
	num = (unsigned __int128)m * pow10_u64[decimals];
	if (e >= 0) {
		if (e > 10 || (num << e) >> 64)
			return 0;
		q = (uint64_t)(num << e);
	} else if (-e >= 120) {
		q = 0; /* below 2^-67: rounds to 0 at six decimals */
	} else {
		rem = num & (((unsigned __int128)1 << -e) - 1);
		half = (unsigned __int128)1 << (-e - 1);
		num >>= -e;
		if (num >> 64)
			return 0;
		q = (uint64_t)num;
		if (rem > half || (rem == half && (q & 1))) {
			if (q == UINT64_MAX)
				return 0;
			q++;
		}
	}
	n = put_dec(p, q / pow10_u64[decimals], 1);
	if (decimals) {
		p[n++] = '.';
		n += put_dec(p + n, q % pow10_u64[decimals], decimals);
	}
	return n;
}

/* "%.Nf" of d without printf where put_double can. */
static void sbuf_add_double(struct sbuf *b, double d, unsigned decimals)
{
	if (!sbuf_reserve(b, 48))
		return;
	{
		size_t n = put_double(b->p + b->len, d, decimals);

		if (!n) {
			b->p[b->len] = '\0';
			sbuf_addf(b, "%.*f", (int)decimals, d);
			return;
		}
		b->len += n;
		b->p[b->len] = '\0';
	}
}

/*
 * A record's fields written at a cursor, into room reserved once for a
 * run of them: a call, a reservation and a NUL per number were most of
 * text_kernel's instructions (callgrind, a short connection's close
 * record).  The same digits as the sbuf_* helpers above.  Each room is
 * the most its run could write, counted with 20 digits for any number,
 * 24 for at_ms3, 47 for at_fixed and 31 for human() (sbuf_reserve adds
 * the NUL): a worst case that real numbers stay some way under, so that
 * a batch whose buffer cannot grow (no memory) refuses a record that
 * would have fitted only by that margin, not by a kilobyte.
 */

static inline __attribute__((always_inline)) char *at_s(char *p,
							const char *lit)
{
	size_t n = strlen(lit);

	memcpy(p, lit, n);
	return p + n;
}

static inline __attribute__((always_inline)) char *at_kv(char *p,
							 const char *key,
							 uint64_t v)
{
	p = at_s(p, key);
	return p + put_dec(p, v, 1);
}

/* us microseconds in milliseconds as "%.3f" prints us / 1e3: the same
 * digits, since a whole number of microseconds has three decimals and
 * the double printf was given lay within 1e-9 of it. */
static char *at_ms3(char *p, uint64_t us)
{
	p += put_dec(p, us / 1000, 1);
	*p++ = '.';
	return p + put_dec(p, us % 1000, 3);
}

/* d with `decimals` decimals, as "%.*f" prints it, cut to 47 bytes
 * (put_double's, printf's past it: a number of 2^63 or more). */
static char *at_double(char *p, double d, unsigned decimals)
{
	size_t n = put_double(p, d, decimals);

	if (!n) {
		int w = snprintf(p, 48, "%.*f", (int)decimals, d);

		n = w < 0 ? 0 : (size_t)w < 48 ? (size_t)w : 47;
	}
	return p + n;
}

/*
 * v / 10^scale, as "%.*f" prints that double (at most 47 bytes).  In
 * whole numbers where that reads the same (a close record's duration and
 * three time limits): below 2^53 the double v / 10^scale lies within
 * v * 2^-53 < 1 unit of v of the exact quotient, so it rounds to
 * `decimals` as the quotient does, unless the quotient is exactly
 * half-way (r == half below), where the double's own error decides:
 * put_double's way then, and printf's past it.
 */
static char *at_fixed(char *p, uint64_t v, unsigned scale, unsigned decimals)
{
	if (scale > decimals && scale <= 9 && v < (1ull << 53)) {
		uint64_t unit = pow10_u64[scale - decimals], q = v / unit;
		uint64_t r = v % unit, half = unit / 2;

		if (r != half) {
			q += r > half;
			p += put_dec(p, q / pow10_u64[decimals], 1);
			if (decimals) {
				*p++ = '.';
				p += put_dec(p, q % pow10_u64[decimals],
					     decimals);
			}
			return p;
		}
	}
	return at_double(p, (double)v / (double)pow10_u64[scale], decimals);
}

/* v / 10^scale, as "%.*f" prints that double. */
static void sbuf_add_fixed(struct sbuf *b, uint64_t v, unsigned scale,
			   unsigned decimals)
{
	if (!sbuf_reserve(b, 48))
		return;
	b->len = (size_t)(at_fixed(b->p + b->len, v, scale, decimals) - b->p);
	b->p[b->len] = '\0';
}

/* Length of the valid UTF-8 sequence at s (at most n bytes), or 0.  Valid
 * means well-formed per RFC 3629: no overlong forms, no surrogates, nothing
 * above U+10FFFF. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t len, i;

	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4;
	else
		return 0;
	if (len > n)
		return 0;
	if (s[0] == 0xe0)
		lo = 0xa0;
	else if (s[0] == 0xed)
		hi = 0x9f;
	else if (s[0] == 0xf0)
		lo = 0x90;
	else if (s[0] == 0xf4)
		hi = 0x8f;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (i = 2; i < len; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return len;
}

/* Append s as a JSON string: always valid JSON, invalid UTF-8 becomes
 * U+FFFD. */
static void json_str(struct sbuf *b, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t n = strlen(str), i = 0;

	sbuf_addc(b, '"');
	while (i < n) {
		unsigned char ch = s[i];
		size_t u;

		if (ch == '"' || ch == '\\') {
			sbuf_addc(b, '\\');
			sbuf_addc(b, (char)ch);
			i++;
		} else if (ch < 0x20 || ch == 0x7f) {
			sbuf_addf(b, "\\u%04x", ch);
			i++;
		} else if (ch < 0x80) {
			/* The run of plain characters, in one copy. */
			size_t j = i + 1;

			while (j < n && s[j] >= 0x20 && s[j] < 0x7f &&
			       s[j] != '"' && s[j] != '\\')
				j++;
			if (sbuf_reserve(b, j - i)) {
				memcpy(b->p + b->len, s + i, j - i);
				b->len += j - i;
				b->p[b->len] = '\0';
			}
			i = j;
		} else if ((u = utf8_len(s + i, n - i)) == 2 && ch == 0xc2 &&
			   s[i + 1] < 0xa0) {
			/* A C1 control (U+0080-U+009F: CSI, OSC...), escaped
			 * as text_clean replaces it: a record shown on a
			 * terminal (sockmeter -s) acts on none. */
			sbuf_addf(b, "\\u%04x", s[i + 1]);
			i += u;
		} else if (u > 0) {
			sbuf_addf(b, "%.*s", (int)u, (const char *)s + i);
			i += u;
		} else {
			sbuf_addf(b, "\\ufffd");
			i++;
		}
	}
	sbuf_addc(b, '"');
}

static void json_ts(struct sbuf *b, const char *key, uint64_t ns)
{
	size_t n = strlen(key);
	char *p;

	if (!sbuf_reserve(b, n + 31)) /* 2 + key + 2 + 20 + 1 + 6 */
		return;
	p = b->p + b->len;
	*p++ = ',';
	*p++ = '"';
	memcpy(p, key, n);
	p += n;
	if (ns == 0) {
		p = at_s(p, "\":null");
	} else {
		p = at_kv(p, "\":", ns / 1000000000u);
		*p++ = '.';
		p += put_dec(p, (ns % 1000000000u) / 1000u, 6);
	}
	*p = '\0';
	b->len = (size_t)(p - b->p);
}

void summary_span_label(const struct config *c, unsigned k, char *buf,
			size_t cap)
{
	uint64_t ms = (uint64_t)c->span_buckets[k] * c->bucket_ms;

	/* %.10g: "1s", "0.5s", "86400s", never an exponent for our range. */
	snprintf(buf, cap, "%.10gs", (double)ms / 1000.0);
}

/* Span k's resolution in seconds: the width of its tier's buckets. */
static double span_res_s(const struct config *c, unsigned k)
{
	uint64_t res = c->span_res[k] ? c->span_res[k] : 1;

	return (double)(res * c->bucket_ms) / 1000.0;
}

static const char *const err_names[ERR_COUNT] = { "again", "intr", "other" };

/* [v0,v1,...]: the size histograms are most of a JSON close record's
 * numbers, most of them small: written in place, room made once. */
static void json_u64_array(struct sbuf *b, const uint64_t *v, size_t n)
{
	char *p;
	size_t i;

	if (!sbuf_reserve(b, n * 21 + 2))
		return;
	p = b->p + b->len;
	*p++ = '[';
	for (i = 0; i < n; i++) {
		if (i)
			*p++ = ',';
		p += put_dec(p, v[i], 1);
	}
	*p++ = ']';
	*p = '\0';
	b->len = (size_t)(p - b->p);
}

static bool all_zero(const uint64_t *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (v[i])
			return false;
	return true;
}

/*
 * Which fields a record may leave out when they are zero.  The totals of
 * interval and exit records carry every field of the enabled categories
 * (their keys say what was measured); an fd entry leaves out what the log
 * schema marks "omitted when zero", so that a close record carries only
 * what is new in it.  A field added later picks its rule here.
 */
enum zero_rule { ZERO_KEEP, ZERO_OMIT };

/* The counters of one fd or of the totals, as JSON members (each preceded
 * by a comma). */
static void json_counters(struct sbuf *b, const struct fd_counters *c,
			  const struct config *cfg, enum zero_rule zero)
{
	unsigned d, e;
	char *p;

	/* At a cursor: per direction bytes and calls (2 * (13 + 20)) and
	 * an error object (15 + 3 * (2 + 5 + 2 + 20) + 1). */
	if (!sbuf_reserve(b, 2 * (66 + 103)))
		return;
	p = b->p + b->len;
	for (d = 0; d < DIR_COUNT; d++) {
		if (cfg->category[CAT_BYTES])
			p = at_kv(p, d ? ",\"bytes_out\":" : ",\"bytes_in\":",
				  c->bytes[d]);
		if (cfg->category[CAT_CALLS])
			p = at_kv(p, d ? ",\"calls_out\":" : ",\"calls_in\":",
				  c->calls[d]);
	}
	if (cfg->category[CAT_ERRORS])
		for (d = 0; d < DIR_COUNT; d++) {
			if (zero == ZERO_OMIT && all_zero(c->errors[d], ERR_COUNT))
				continue;
			p = at_s(p, d ? ",\"errors_out\":{" : ",\"errors_in\":{");
			for (e = 0; e < ERR_COUNT; e++) {
				size_t n = strlen(err_names[e]);

				p = at_s(p, e ? ",\"" : "\"");
				memcpy(p, err_names[e], n);
				p = at_kv(p + n, "\":", c->errors[d][e]);
			}
			*p++ = '}';
		}
	*p = '\0';
	b->len = (size_t)(p - b->p);
	if (cfg->category[CAT_SIZES])
		for (d = 0; d < DIR_COUNT; d++) {
			if (zero == ZERO_OMIT &&
			    all_zero(c->sizes[d], SIZE_BUCKETS))
				continue;
			sbuf_adds(b, d ? ",\"sizes_out\":" : ",\"sizes_in\":");
			json_u64_array(b, c->sizes[d], SIZE_BUCKETS);
		}
	if (cfg->category[CAT_LATENCY])
		for (d = 0; d < DIR_COUNT; d++)
			sbuf_kv(b,
				d ? ",\"latency_ns_out\":" : ",\"latency_ns_in\":",
				c->latency_ns[d]);
}

/* Seconds between open and close, or a negative value when the open was
 * not seen (an inherited fd) or the close was not (noticed later). */
static double lifetime_s(const struct summary_fd *f)
{
	if (!f->s.opened_ns || f->closed_ns < f->s.opened_ns || f->s.unseen)
		return -1.0;
	return (double)(f->closed_ns - f->s.opened_ns) / 1e9;
}

/* The same in nanoseconds (lifetime_s >= 0 says it is known). */
static uint64_t lifetime_ns(const struct summary_fd *f)
{
	return f->closed_ns - f->s.opened_ns;
}

static void json_close(struct sbuf *b, const struct summary_fd *f,
		       const struct config *c)
{
	double secs = lifetime_s(f);

	json_ts(b, "closed", f->closed_ns);
	if (f->s.unseen)
		sbuf_adds(b, ",\"close_seen\":false");
	if (secs >= 0) {
		sbuf_adds(b, ",\"duration\":");
		sbuf_add_fixed(b, lifetime_ns(f), 9, 6);
	}
	if (secs > 0 && c->category[CAT_BYTES]) {
		sbuf_adds(b, ",\"avg_rate\":{\"in\":");
		sbuf_add_double(b, (double)f->s.c.bytes[DIR_IN] / secs, 1);
		sbuf_adds(b, ",\"out\":");
		sbuf_add_double(b, (double)f->s.c.bytes[DIR_OUT] / secs, 1);
		sbuf_addc(b, '}');
	}
	/* After duration, which readers find in its place (the tools' close
	 * line pattern). */
	if (f->s.shared)
		sbuf_adds(b, ",\"shared\":true");
}

/* --- the kernel's view and the peer's name (tcp_info, names) ------------ */

/* Microseconds the connection has lived at the record's time, 0 unknown. */
static uint64_t life_us(const struct summary_fd *f, uint64_t ts_ns)
{
	uint64_t end = f->closed_ns ? f->closed_ns : ts_ns;

	if (!f->s.opened_ns || end <= f->s.opened_ns)
		return 0;
	return (end - f->s.opened_ns) / 1000u;
}

/* ",\"<key>_us\":N" and, when the connection's life is known, its
 * fraction of it (in [0, 1]: tcpinfo_fraction); at most
 * 2 * (2 + 14) + 5 + 20 + 7 + 47 = 111 bytes for the keys used. */
static char *at_limit(char *p, const char *key, uint64_t us, uint64_t life)
{
	size_t n = strlen(key);

	*p++ = ',';
	*p++ = '"';
	memcpy(p, key, n);
	p = at_kv(p + n, "_us\":", us);
	if (life) {
		*p++ = ',';
		*p++ = '"';
		memcpy(p, key, n);
		p = at_s(p + n, "_frac\":");
		p = at_double(p, tcpinfo_fraction(us, life), 4);
	}
	return p;
}

/* "tcp":{...} with the fields the kernel's answer covered, then the
 * unseen bytes; the numbers at a cursor. */
static void json_kernel(struct sbuf *b, const struct summary_fd *f,
			const struct config *c, uint64_t ts_ns)
{
	const struct tcpinfo *ti = &f->s.ti;
	uint64_t life = life_us(f, ts_ns), us;
	const char *limit;
	char *p;

	if (c->category[CAT_NAMES] && f->peer_name[0]) {
		sbuf_adds(b, ",\"peer_name\":");
		json_str(b, f->peer_name);
		sbuf_adds(b, ",\"lookup_ms\":");
		sbuf_add_fixed(b, f->lookup_ns, 6, 3);
	}
	if (!c->category[CAT_TCP_INFO] || !(ti->have & TI_BASE))
		return;
	/* 17 numbers (213 bytes of keys, 20 digits each), 3 limits of at
	 * most 111 (at_limit), limited_by's 22, the '}', the unseen bytes'
	 * 79. */
	if (!sbuf_reserve(b, 213 + 17 * 20 + 3 * 111 + 22 + 1 + 79))
		return;
	p = b->p + b->len;
	p = at_kv(p, ",\"tcp\":{\"state\":", ti->state);
	p = at_kv(p, ",\"rtt_us\":", ti->rtt_us);
	p = at_kv(p, ",\"rttvar_us\":", ti->rttvar_us);
	if (ti->have & TI_MIN_RTT)
		p = at_kv(p, ",\"min_rtt_us\":", ti->min_rtt_us);
	p = at_kv(p, ",\"retrans\":", ti->total_retrans);
	if (ti->have & TI_BYTES_RETRANS)
		p = at_kv(p, ",\"bytes_retrans\":", ti->bytes_retrans);
	p = at_kv(p, ",\"lost\":", ti->lost);
	p = at_kv(p, ",\"reordering\":", ti->reordering);
	if (ti->have & TI_DELIVERY)
		p = at_kv(p, ",\"delivery_rate\":", ti->delivery_rate);
	p = at_kv(p, ",\"snd_cwnd\":", ti->snd_cwnd);
	p = at_kv(p, ",\"pmtu\":", ti->pmtu);
	if (ti->have & TI_LIMITS) {
		p = at_limit(p, "busy", ti->busy_us, life);
		p = at_limit(p, "rwnd_limited", ti->rwnd_limited_us, life);
		p = at_limit(p, "sndbuf_limited", ti->sndbuf_limited_us, life);
		limit = tcpinfo_limit(ti, &us);
		if (limit) {
			size_t n = strlen(limit);

			p = at_s(p, ",\"limited_by\":\"");
			memcpy(p, limit, n);
			p += n;
			*p++ = '"';
		}
	}
	if (ti->have & TI_BYTES) {
		p = at_kv(p, ",\"bytes_acked\":", ti->bytes_acked);
		p = at_kv(p, ",\"bytes_received\":", ti->bytes_received);
	}
	if (ti->have & TI_BYTES_RETRANS) {
		p = at_kv(p, ",\"bytes_sent\":", ti->bytes_sent);
		p = at_kv(p, ",\"notsent\":", ti->notsent);
	}
	if (ti->have & TI_INQ)
		p = at_kv(p, ",\"inq\":", ti->inq);
	if (ti->have & TI_OUTQ)
		p = at_kv(p, ",\"outq\":", ti->outq);
	*p++ = '}';
	if (f->have_unseen && c->category[CAT_BYTES]) {
		p = at_kv(p, ",\"bytes_in_unseen\":", f->unseen[DIR_IN]);
		p = at_kv(p, ",\"bytes_out_unseen\":", f->unseen[DIR_OUT]);
	}
	*p = '\0';
	b->len = (size_t)(p - b->p);
}

static void json_fd(struct sbuf *b, const struct summary_fd *f,
		    const struct config *c, enum summary_type type,
		    uint64_t ts_ns)
{
	char addr[ADDR_TEXT], label[32];
	unsigned k;

	sbuf_adds(b, "{\"fd\":");
	sbuf_add_i64(b, f->s.fd);
	sbuf_adds(b, ",\"kind\":\"");
	sbuf_adds(b, fd_kind_name(f->s.kind));
	sbuf_addc(b, '"');
	if (c->category[CAT_PEERS]) {
		fd_addr_format(&f->s.local, addr, sizeof(addr));
		sbuf_adds(b, ",\"local\":");
		json_str(b, addr);
		fd_addr_format(&f->s.peer, addr, sizeof(addr));
		sbuf_adds(b, ",\"peer\":");
		json_str(b, addr);
	}
	json_counters(b, &f->s.c, c, ZERO_OMIT);
	if (c->category[CAT_WINDOWS] && f->have_rates) {
		sbuf_adds(b, ",\"rates\":{");
		for (k = 0; k < c->nspans; k++) {
			summary_span_label(c, k, label, sizeof(label));
			sbuf_addf(b, "%s\"%s\":{\"in\":", k ? "," : "", label);
			sbuf_add_double(b, f->rate[k][DIR_IN], 1);
			sbuf_adds(b, ",\"out\":");
			sbuf_add_double(b, f->rate[k][DIR_OUT], 1);
			sbuf_addf(b, ",\"res\":%.10g}", span_res_s(c, k));
		}
		sbuf_addc(b, '}');
	}
	json_ts(b, "opened", f->s.opened_ns);
	json_ts(b, "last_active", f->last_active_ns);
	if (type == SUMMARY_CLOSE)
		json_close(b, f, c);
	else if (type == SUMMARY_EXEC) {
		/* Which fds the exec closes, and which are another fd's or
		 * process's too (as in a close record): readers count such
		 * copies of one connection once. */
		if (f->s.close_on_exec)
			sbuf_adds(b, ",\"close_on_exec\":true");
		if (f->s.shared)
			sbuf_adds(b, ",\"shared\":true");
	}
	json_kernel(b, f, c, ts_ns);
	sbuf_addc(b, '}');
}

static const char *const type_names[] = { "interval", "close", "exit",
					    "exec" };


/* The process totals: in interval and exit records only. */
static void json_totals(struct sbuf *b, const struct summary *r,
			const struct config *c)
{
	sbuf_addf(b, ",\"totals\":{\"fds_open\":%" PRIu64
		     ",\"fds_closed\":%" PRIu64,
		  r->fds_open, r->fds_closed);
	if (r->type == SUMMARY_EXEC && r->fds_close_on_exec)
		sbuf_addf(b, ",\"fds_close_on_exec\":%" PRIu64,
			  r->fds_close_on_exec);
	json_counters(b, &r->totals, c, ZERO_KEEP);
	if (r->close_dropped)
		sbuf_addf(b, ",\"close_records_dropped\":%" PRIu64,
			  r->close_dropped);
	if (c->category[CAT_TCP_INFO] && c->category[CAT_BYTES] &&
	    r->have_unseen)
		sbuf_addf(b, ",\"bytes_in_unseen\":%" PRIu64
			     ",\"bytes_out_unseen\":%" PRIu64,
			  r->unseen[DIR_IN], r->unseen[DIR_OUT]);
	sbuf_addc(b, '}');
}

/*
 * A close record is lean: it describes its connection and nothing else.
 * The process totals (which every close record used to repeat, about half
 * of its bytes) live in the interval and exit records; fds_omitted is
 * always 0 for one closed fd, so it is left out too.
 */
static void format_json(const struct summary *r, const struct config *c,
			struct sbuf *b)
{
	bool lean = r->type == SUMMARY_CLOSE;
	uint32_t i;

	sbuf_adds(b, "{\"type\":\"");
	sbuf_adds(b, type_names[r->type]);
	sbuf_addc(b, '"');
	if (r->end && r->type == SUMMARY_EXIT) {
		sbuf_adds(b, ",\"end\":");
		json_str(b, r->end);
	}
	if (r->incomplete && r->type == SUMMARY_EXIT)
		sbuf_adds(b, ",\"incomplete\":true");
	json_ts(b, "ts", r->ts_ns);
	if (r->end && r->type == SUMMARY_EXIT && r->alive_ns)
		json_ts(b, "alive_until", r->alive_ns);
	sbuf_adds(b, ",\"pid\":");
	sbuf_add_i64(b, r->pid);
	sbuf_adds(b, ",\"prog\":");
	json_str(b, r->prog);
	json_ts(b, "start", r->start_ns);
	/* (A close record made at an exit is a copy of the exit record's.) */
	if (r->other_threads &&
	    (r->type == SUMMARY_EXIT || r->type == SUMMARY_EXEC)) {
		sbuf_adds(b, ",\"other_threads\":");
		sbuf_add_i64(b, r->other_threads);
	}
	if (!lean)
		json_totals(b, r, c);
	sbuf_adds(b, ",\"fds\":[");
	for (i = 0; i < r->nfds; i++) {
		if (i)
			sbuf_addc(b, ',');
		json_fd(b, &r->fds[i], c, r->type, r->ts_ns);
	}
	if (lean)
		sbuf_adds(b, "]}\n");
	else
		sbuf_addf(b, "],\"fds_omitted\":%u}\n", r->omitted);
}

/* --- text ---------------------------------------------------------------- */

/*
 * Days since 1970-01-01 to a civil date (proleptic Gregorian; H. Hinnant's
 * days-to-civil).  Not gmtime_r: glibc's reads the time zone file under a
 * lock on first use, with malloc, in whichever thread calls it, and a
 * ticker that mallocs gets an arena of its own, a region of written pages
 * that every fork of the host copies (docs/performance.md#churn).
 */
static void civil_date(uint64_t days, unsigned *y, unsigned *m, unsigned *d)
{
	uint64_t z = days + 719468;          /* days since 0000-03-01 */
	uint64_t era = z / 146097;
	uint64_t doe = z - era * 146097;     /* day of the 400-year era */
	uint64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	uint64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	uint64_t mp = (5 * doy + 2) / 153;   /* month, March = 0 */

	*d = (unsigned)(doy - (153 * mp + 2) / 5 + 1);
	*m = (unsigned)(mp < 10 ? mp + 3 : mp - 9);
	*y = (unsigned)(yoe + era * 400 + (*m <= 2));
}

static void text_time(char *buf, size_t cap, uint64_t ns)
{
	uint64_t sec = ns / 1000000000u;
	unsigned y, mo, d;

	if (ns == 0) {
		snprintf(buf, cap, "-");
		return;
	}
	civil_date(sec / 86400, &y, &mo, &d);
	if (y > 9999 || cap < 25) {
		snprintf(buf, cap, "%04u-%02u-%02uT%02u:%02u:%02u.%03uZ", y,
			 mo, d, (unsigned)(sec % 86400 / 3600),
			 (unsigned)(sec % 3600 / 60), (unsigned)(sec % 60),
			 (unsigned)(ns % 1000000000u / 1000000u));
		return;
	}
	/* The same, without printf (once per text record). */
	put_dec(buf, y, 4);
	buf[4] = '-';
	put_dec(buf + 5, mo, 2);
	buf[7] = '-';
	put_dec(buf + 8, d, 2);
	buf[10] = 'T';
	put_dec(buf + 11, (unsigned)(sec % 86400 / 3600), 2);
	buf[13] = ':';
	put_dec(buf + 14, (unsigned)(sec % 3600 / 60), 2);
	buf[16] = ':';
	put_dec(buf + 17, (unsigned)(sec % 60), 2);
	buf[19] = '.';
	put_dec(buf + 20, (unsigned)(ns % 1000000000u / 1000000u), 3);
	buf[23] = 'Z';
	buf[24] = '\0';
}

/* A name or path in a text record: no control byte (no forged line: C1
 * controls, U+0080 to U+009F, included), no space (no forged field: a
 * program named "x fd=9" would read as two fields), and valid UTF-8 (a
 * byte that is not made grep take the log for binary): each such byte
 * becomes '?'. */
static void text_clean(char *str)
{
	unsigned char *s = (unsigned char *)str;
	size_t n, i = 0, u;

	/* Most names and every numeric address are printable ASCII: skipped
	 * a byte at a time, one compare each, before anything else. */
	while ((unsigned char)(s[i] - 0x21) < 0x7f - 0x21)
		i++;
	if (!s[i])
		return;
	n = i + strlen(str + i);
	while (i < n) {
		if (s[i] < 0x80) {
			if (s[i] <= 0x20 || s[i] == 0x7f)
				s[i] = '?';
			i++;
		} else if ((u = utf8_len(s + i, n - i)) > 0 &&
			   !(s[i] == 0xc2 && s[i + 1] < 0xa0)) {
			i += u;
		} else {
			for (u = u ? u : 1; u--; i++)
				s[i] = '?';
		}
	}
}

static const char *clean_copy(const char *in, char *buf, size_t cap)
{
	size_t n = strnlen(in, cap - 1); /* as snprintf "%s" cuts it */

	memcpy(buf, in, n);
	buf[n] = '\0';
	text_clean(buf);
	return buf;
}

/* Human-readable byte rate or amount: 999B, 12.3K, 4.5M, 6.7G (powers of
 * 1024). */
static void human(char *buf, size_t cap, double v)
{
	static const char units[] = "BKMGTP";
	unsigned u = 0;
	size_t n;

	while (v >= 1024.0 && u < sizeof(units) - 2) {
		v /= 1024.0;
		u++;
	}
	/* Divided by powers of two: exact, so put_double prints what
	 * "%.1f" would. */
	n = cap >= 32 ? put_double(buf, v, u ? 1 : 0) : 0;
	if (!n) {
		snprintf(buf, cap, u ? "%.1f%c" : "%.0f%c", v, units[u]);
		return;
	}
	buf[n++] = units[u];
	buf[n] = '\0';
}

/* People read text: errors are shown only when there were some.  At most
 * TEXT_COUNTERS_ROOM bytes at p (and a NUL): per direction bytes
 * and calls (2 * (11 + 20)), errors (18 + 20 + 6 + 20 + 7 + 20) and
 * latency (13 + 47 + 2). */
#define TEXT_COUNTERS_ROOM (2 * (62 + 91 + 62))

static char *at_counters(char *p, const struct fd_counters *c,
			 const struct config *cfg)
{
	unsigned d;

	for (d = 0; d < DIR_COUNT; d++) {
		const uint64_t *e = c->errors[d];

		if (cfg->category[CAT_BYTES])
			p = at_kv(p, d ? " bytes_out=" : " bytes_in=",
				  c->bytes[d]);
		if (cfg->category[CAT_CALLS])
			p = at_kv(p, d ? " calls_out=" : " calls_in=",
				  c->calls[d]);
		if (cfg->category[CAT_ERRORS] && e[0] + e[1] + e[2]) {
			p = at_kv(p, d ? " errors_out=again:"
				       : " errors_in=again:",
				  e[ERR_AGAIN]);
			p = at_kv(p, ",intr:", e[ERR_INTR]);
			p = at_kv(p, ",other:", e[ERR_OTHER]);
		}
		if (cfg->category[CAT_LATENCY]) {
			p = at_s(p, d ? " latency_out=" : " latency_in=");
			p = at_fixed(p, c->latency_ns[d], 6, 3);
			p = at_s(p, "ms");
		}
	}
	return p;
}

static void text_counters(struct sbuf *b, const struct fd_counters *c,
			  const struct config *cfg)
{
	if (!sbuf_reserve(b, TEXT_COUNTERS_ROOM))
		return;
	b->len = (size_t)(at_counters(b->p + b->len, c, cfg) - b->p);
	b->p[b->len] = '\0';
}

static void text_header(struct sbuf *b, const struct config *c)
{
	char label[32];
	unsigned k;

	sbuf_addf(b, "  %5s %-10s", "fd", "kind");
	if (c->category[CAT_PEERS])
		sbuf_addf(b, " %-22s %-22s", "local", "peer");
	if (c->category[CAT_BYTES])
		sbuf_addf(b, " %14s %14s", "bytes_in", "bytes_out");
	if (c->category[CAT_CALLS])
		sbuf_addf(b, " %10s %10s", "calls_in", "calls_out");
	if (c->category[CAT_ERRORS])
		sbuf_addf(b, " %8s %8s", "err_in", "err_out");
	if (c->category[CAT_WINDOWS])
		for (k = 0; k < c->nspans; k++) {
			char col[64], res[24] = "";

			/* As wide as a rate: " %14s/s".  A span served by
			 * coarser buckets says so: "out/86400s@1440s". */
			summary_span_label(c, k, label, sizeof(label));
			if (c->span_res[k] > 1)
				snprintf(res, sizeof(res), "@%.10gs",
					 span_res_s(c, k));
			snprintf(col, sizeof(col), "in/%s%s", label, res);
			sbuf_addf(b, " %16s", col);
			snprintf(col, sizeof(col), "out/%s%s", label, res);
			sbuf_addf(b, " %16s", col);
		}
	sbuf_addc(b, '\n');
}

static uint64_t err_sum(const struct fd_counters *c, unsigned d)
{
	return c->errors[d][ERR_AGAIN] + c->errors[d][ERR_INTR] +
	       c->errors[d][ERR_OTHER];
}

/* The kernel's view in text: compact, key=value, after the rest. */
static void text_kernel(struct sbuf *b, const struct summary_fd *f,
			const struct config *c, uint64_t ts_ns)
{
	const struct tcpinfo *ti = &f->s.ti;
	uint64_t life = life_us(f, ts_ns), us;
	const char *limit;
	char name[NAMES_LEN], *p;

	if (c->category[CAT_NAMES] && f->peer_name[0])
		sbuf_addf(b, " peer_name=%s lookup=%.3fms",
			  clean_copy(f->peer_name, name, sizeof(name)),
			  (double)f->lookup_ns / 1e6);
	if (!c->category[CAT_TCP_INFO] || !(ti->have & TI_BASE))
		return;
	/* rtt, rttvar, min_rtt (3 * 24 + 28 of text), 4 counts (42 + 4 *
	 * 20), delivery (10 + 31 + 2), cwnd and pmtu (12 + 2 * 20), the
	 * limits (6 + 15 + 17 + 1 + 3 * 47). */
	if (!sbuf_reserve(b, 100 + 122 + 43 + 52 + 180))
		return;
	p = b->p + b->len;
	p = at_s(p, " rtt=");
	p = at_ms3(p, ti->rtt_us);
	p = at_s(p, "ms rttvar=");
	p = at_ms3(p, ti->rttvar_us);
	p = at_s(p, "ms");
	if (ti->have & TI_MIN_RTT) {
		p = at_s(p, " min_rtt=");
		p = at_ms3(p, ti->min_rtt_us);
		p = at_s(p, "ms");
	}
	p = at_kv(p, " retrans=", ti->total_retrans);
	if (ti->have & TI_BYTES_RETRANS)
		p = at_kv(p, " bytes_retrans=", ti->bytes_retrans);
	p = at_kv(p, " lost=", ti->lost);
	p = at_kv(p, " reordering=", ti->reordering);
	if (ti->have & TI_DELIVERY) {
		p = at_s(p, " delivery=");
		human(p, 32, (double)ti->delivery_rate);
		p += strlen(p);
		p = at_s(p, "/s");
	}
	p = at_kv(p, " cwnd=", ti->snd_cwnd);
	p = at_kv(p, " pmtu=", ti->pmtu);
	if (ti->have & TI_LIMITS) {
		p = at_s(p, " busy=");
		p = at_fixed(p, ti->busy_us, 6, 3);
		p = at_s(p, "s rwnd_limited=");
		p = at_fixed(p, ti->rwnd_limited_us, 6, 3);
		p = at_s(p, "s sndbuf_limited=");
		p = at_fixed(p, ti->sndbuf_limited_us, 6, 3);
		*p++ = 's';
	}
	*p = '\0';
	b->len = (size_t)(p - b->p);
	if (ti->have & TI_LIMITS) {
		limit = tcpinfo_limit(ti, &us);
		if (limit && life)
			sbuf_addf(b, " limited_by=%s:%.0f%%", limit,
				  100.0 * tcpinfo_fraction(us, life));
		else if (limit) {
			sbuf_adds(b, " limited_by=");
			sbuf_adds(b, limit);
		}
	}
	if (!(ti->have & TI_BYTES) &&
	    !(f->have_unseen && c->category[CAT_BYTES]))
		return;
	/* 13 + 16 + 17 + 18 bytes of keys, 4 numbers. */
	if (!sbuf_reserve(b, 64 + 4 * 20))
		return;
	p = b->p + b->len;
	if (ti->have & TI_BYTES) {
		p = at_kv(p, " bytes_acked=", ti->bytes_acked);
		p = at_kv(p, " bytes_received=", ti->bytes_received);
	}
	if (f->have_unseen && c->category[CAT_BYTES]) {
		p = at_kv(p, " bytes_in_unseen=", f->unseen[DIR_IN]);
		p = at_kv(p, " bytes_out_unseen=", f->unseen[DIR_OUT]);
	}
	*p = '\0';
	b->len = (size_t)(p - b->p);
}

static void text_fd(struct sbuf *b, const struct summary_fd *f,
		    const struct config *c, enum summary_type type,
		    uint64_t ts_ns)
{
	char local[ADDR_TEXT], peer[ADDR_TEXT], h[32];
	unsigned k, d;

	sbuf_addf(b, "  %5d %-10s", f->s.fd, fd_kind_name(f->s.kind));
	if (c->category[CAT_PEERS]) {
		fd_addr_format(&f->s.local, local, sizeof(local));
		fd_addr_format(&f->s.peer, peer, sizeof(peer));
		text_clean(local);
		text_clean(peer);
		sbuf_addf(b, " %-22s %-22s", local[0] ? local : "-",
			  peer[0] ? peer : "-");
	}
	if (c->category[CAT_BYTES])
		sbuf_addf(b, " %14" PRIu64 " %14" PRIu64, f->s.c.bytes[DIR_IN],
			  f->s.c.bytes[DIR_OUT]);
	if (c->category[CAT_CALLS])
		sbuf_addf(b, " %10" PRIu64 " %10" PRIu64, f->s.c.calls[DIR_IN],
			  f->s.c.calls[DIR_OUT]);
	if (c->category[CAT_ERRORS])
		sbuf_addf(b, " %8" PRIu64 " %8" PRIu64, err_sum(&f->s.c, DIR_IN),
			  err_sum(&f->s.c, DIR_OUT));
	if (c->category[CAT_WINDOWS])
		for (k = 0; k < c->nspans; k++)
			for (d = 0; d < DIR_COUNT; d++) {
				if (f->have_rates)
					human(h, sizeof(h), f->rate[k][d]);
				else
					snprintf(h, sizeof(h), "-");
				sbuf_addf(b, " %14s/s", h);
			}
	text_kernel(b, f, c, ts_ns);
	if (type == SUMMARY_EXEC && f->s.close_on_exec)
		sbuf_adds(b, " close_on_exec=yes");
	if (type == SUMMARY_EXEC && f->s.shared)
		sbuf_adds(b, " shared=yes");
	sbuf_addc(b, '\n');
}

/* A close record in text is one line: the connection's whole life.  Its
 * head, up to the kernel's view, at a cursor. */
static void text_close(const struct summary *r, const struct config *c,
		       struct sbuf *b, const char *when)
{
	const struct summary_fd *f = &r->fds[0];
	char local[ADDR_TEXT], peer[ADDR_TEXT], prog[CONFIG_NAME_MAX], *p;
	size_t nwhen = strlen(when), nprog, nlocal = 0, npeer = 0;
	double secs = lifetime_s(f);

	clean_copy(r->prog, prog, sizeof(prog));
	nprog = strlen(prog);
	if (c->category[CAT_PEERS]) {
		fd_addr_format(&f->s.local, local, sizeof(local));
		fd_addr_format(&f->s.peer, peer, sizeof(peer));
		text_clean(local);
		text_clean(peer);
		if (!local[0])
			strcpy(local, "-");
		if (!peer[0])
			strcpy(peer, "-");
		nlocal = strlen(local);
		npeer = strlen(peer);
	}
	/* Beyond the four strings: 60 bytes of keys, pid (20), fd (11),
	 * kind (10), duration (47) and 's', the counters'. */
	if (!sbuf_reserve(b, nwhen + nprog + nlocal + npeer + 60 + 20 + 11 +
				     10 + 47 + 1 + TEXT_COUNTERS_ROOM))
		return;
	p = b->p + b->len;
	memcpy(p, when, nwhen);
	p = at_s(p + nwhen, " sockmeter close pid=");
	if (r->pid < 0)
		*p++ = '-';
	p += put_dec(p, r->pid < 0 ? -(uint64_t)r->pid : (uint64_t)r->pid, 1);
	p = at_s(p, " prog=");
	memcpy(p, prog, nprog);
	p = at_s(p + nprog, " fd=");
	if (f->s.fd < 0)
		*p++ = '-';
	p += put_dec(p, f->s.fd < 0 ? -(uint64_t)(int64_t)f->s.fd
				   : (uint64_t)f->s.fd, 1);
	p = at_s(p, " kind=");
	{
		const char *kind = fd_kind_name(f->s.kind);
		size_t n = strlen(kind);

		memcpy(p, kind, n);
		p += n;
	}
	if (c->category[CAT_PEERS]) {
		p = at_s(p, " local=");
		memcpy(p, local, nlocal);
		p = at_s(p + nlocal, " peer=");
		memcpy(p, peer, npeer);
		p += npeer;
	}
	p = at_counters(p, &f->s.c, c);
	if (secs >= 0) {
		p = at_s(p, " duration=");
		p = at_fixed(p, lifetime_ns(f), 9, 3);
		*p++ = 's';
	}
	*p = '\0';
	b->len = (size_t)(p - b->p);
	text_kernel(b, f, c, r->ts_ns);
	if (f->s.unseen)
		sbuf_adds(b, " close=unseen");
	if (f->s.shared)
		sbuf_adds(b, " shared=yes");
	sbuf_addc(b, '\n');
}

static void format_text(const struct summary *r, const struct config *c,
			struct sbuf *b)
{
	char when[80], alive[96], prog[CONFIG_NAME_MAX];
	uint32_t i;

	const char *end = r->type == SUMMARY_EXIT ? r->end : NULL;

	text_time(when, sizeof(when), r->ts_ns);
	if (r->type == SUMMARY_CLOSE && r->nfds == 1) {
		text_close(r, c, b, when);
		return;
	}
	alive[0] = '\0';
	if (end && r->alive_ns) {
		memcpy(alive, " alive_until=", 13);
		text_time(alive + 13, sizeof(alive) - 13, r->alive_ns);
	}
	sbuf_addf(b, "%s sockmeter %s%s%s%s%s pid=%ld prog=%s fds_open=%" PRIu64
		     " fds_closed=%" PRIu64,
		  when, type_names[r->type], end ? " end=" : "", end ? end : "",
		  end && r->incomplete ? " incomplete=yes" : "", alive, r->pid,
		  clean_copy(r->prog, prog, sizeof(prog)), r->fds_open,
		  r->fds_closed);
	if (r->type == SUMMARY_EXEC && r->fds_close_on_exec)
		sbuf_addf(b, " fds_close_on_exec=%" PRIu64,
			  r->fds_close_on_exec);
	if (r->other_threads &&
	    (r->type == SUMMARY_EXIT || r->type == SUMMARY_EXEC))
		sbuf_addf(b, " other_threads=%" PRIu32, r->other_threads);
	sbuf_addc(b, '\n');
	sbuf_addf(b, "  totals:");
	text_counters(b, &r->totals, c);
	if (r->close_dropped)
		sbuf_addf(b, " close_records_dropped=%" PRIu64,
			  r->close_dropped);
	if (c->category[CAT_TCP_INFO] && c->category[CAT_BYTES] &&
	    r->have_unseen)
		sbuf_addf(b, " bytes_in_unseen=%" PRIu64
			     " bytes_out_unseen=%" PRIu64,
			  r->unseen[DIR_IN], r->unseen[DIR_OUT]);
	sbuf_addc(b, '\n');
	if (r->nfds > 0)
		text_header(b, c);
	for (i = 0; i < r->nfds; i++)
		text_fd(b, &r->fds[i], c, r->type, r->ts_ns);
	if (r->omitted)
		sbuf_addf(b, "  (%u more active fds not shown: top = %u)\n",
			  r->omitted, c->top);
}

void summary_format(const struct summary *r, const struct config *c,
		    struct sbuf *out)
{
	if (c->format == FORMAT_JSON)
		format_json(r, c, out);
	else
		format_text(r, c, out);
}

size_t summary_utf8_len(const unsigned char *s, size_t n)
{
	return utf8_len(s, n);
}
