/*
 * window.c - multi-resolution bucket rings (contract in window.h).
 */
#include "window.h"

#include <errno.h>
#include <string.h>

/* ---- the plan ------------------------------------------------------- */

/* The smallest divisor of n that is at least m (n itself at worst):
 * O(sqrt(n)), start-up only. */
static uint32_t divisor_at_least(uint32_t n, uint32_t m)
{
	uint32_t best = n, i;

	for (i = 1; (uint64_t)i * i <= n; i++) {
		if (n % i)
			continue;
		if (i >= m && i < best)
			best = i;
		if (n / i >= m && n / i < best)
			best = n / i;
	}
	return best;
}

static uint32_t div_up(uint32_t a, uint32_t b)
{
	return a / b + (a % b != 0);
}

/* Span s's resolution with at most cap buckets per 64-bit tier (2 * cap
 * per 32-bit one): the finest. */
static uint32_t pick_res(uint32_t s, uint64_t bucket_ms, uint32_t cap)
{
	uint32_t r = divisor_at_least(s, div_up(s, 2 * cap));

	if ((uint64_t)r * bucket_ms <= WINDOW_NARROW_MS)
		return r;
	/* No narrow tier short enough: every coarser divisor is wide too. */
	return divisor_at_least(s, div_up(s, cap));
}

/* Plan the tiers with at most cap buckets per span (see pick_res). */
static void plan(struct window_shape *s, uint64_t bucket_ms, uint32_t cap)
{
	uint32_t off = 0, t, k, pass;

	s->ntiers = 0;
	for (k = 0; k < s->nspans; k++) {
		uint32_t r = pick_res(s->span[k], bucket_ms, cap);

		for (t = 0; t < s->ntiers && s->tier[t].res != r; t++)
			;
		if (t == s->ntiers) {
			s->ntiers++;
			s->tier[t].res = r;
			s->tier[t].len = 0;
			s->tier[t].wide =
			    (uint64_t)r * bucket_ms > WINDOW_NARROW_MS;
		}
		s->tier_of[k] = t;
		s->nt[k] = s->span[k] / r;
		if (s->nt[k] > s->tier[t].len)
			s->tier[t].len = s->nt[k];
	}
	/* 64-bit rings first, so every ring is aligned for its values. */
	for (pass = 0; pass < 2; pass++)
		for (t = 0; t < s->ntiers; t++) {
			struct window_tier *tr = &s->tier[t];

			if (tr->wide != (pass == 0))
				continue;
			tr->off = off;
			off += tr->len * 2 * (tr->wide ? 8 : 4);
		}
	s->ring_bytes = off;
}

int window_shape_init(struct window_shape *s, uint64_t bucket_ms,
		      unsigned nspans, const uint32_t *span)
{
	uint32_t cap, k;

	memset(s, 0, sizeof(*s));
	if (nspans < 1 || nspans > WINDOW_MAX_SPANS || bucket_ms == 0)
		return -EINVAL;
	for (k = 0; k < nspans; k++)
		if (span[k] == 0 || (k && span[k] <= span[k - 1]))
			return -EINVAL;
	s->nspans = nspans;
	memcpy(s->span, span, nspans * sizeof(*span));
	s->nbuckets = span[nspans - 1];
	/* At cap 1 every span is one bucket: 4 tiers of 16 bytes always fit. */
	for (cap = WINDOW_TIER_LEN; cap > 1; cap--) {
		plan(s, bucket_ms, cap);
		if (window_bytes(s) <= WINDOW_MAX_BYTES)
			return 0;
	}
	plan(s, bucket_ms, 1);
	return 0;
}

_Static_assert(sizeof(struct window) + WINDOW_MAX_TIERS * 2 * 8 <=
		   WINDOW_MAX_BYTES,
	       "a one-bucket plan must fit the budget");

size_t window_bytes(const struct window_shape *s)
{
	return sizeof(struct window) + s->ring_bytes;
}

/* ---- the rings ------------------------------------------------------ */

/* Tier t's value for tier bucket b, direction d. */
static uint64_t get(const struct window *w, const struct window_tier *tr,
		    uint64_t b, unsigned d)
{
	size_t i = 2 * (size_t)(b % tr->len) + d;
	const unsigned char *p = w->ring + tr->off;

	if (tr->wide)
		return ((const uint64_t *)(const void *)p)[i];
	return ((const uint32_t *)(const void *)p)[i];
}

/* Add v to tier t's bucket b, direction d; a 32-bit value saturates.
 * Returns what was really added. */
static uint64_t put(struct window *w, const struct window_tier *tr, uint64_t b,
		    unsigned d, uint64_t v)
{
	size_t i = 2 * (size_t)(b % tr->len) + d;
	unsigned char *p = w->ring + tr->off;
	uint32_t *n;

	if (tr->wide) {
		((uint64_t *)(void *)p)[i] += v;
		return v;
	}
	n = &((uint32_t *)(void *)p)[i];
	if (v > (uint64_t)UINT32_MAX - *n)
		v = (uint64_t)UINT32_MAX - *n;
	*n += (uint32_t)v;
	return v;
}

static void clear(struct window *w, const struct window_tier *tr, uint64_t b)
{
	size_t sz = tr->wide ? 8 : 4;

	memset(w->ring + tr->off + 2 * (size_t)(b % tr->len) * sz, 0, 2 * sz);
}

void window_reset(struct window *w, const struct window_shape *s,
		  uint64_t bucket)
{
	memset(w, 0, window_bytes(s));
	w->head = bucket;
	w->first = bucket;
}

/*
 * Move tier t from tier bucket from to tier bucket to (> from): every span
 * it serves loses the buckets that left it, and the slots the new buckets
 * reuse are cleared.  At most one pass over the ring, whatever the gap.
 */
static void advance_tier(struct window *w, const struct window_shape *s,
			 unsigned t, uint64_t from, uint64_t to)
{
	const struct window_tier *tr = &s->tier[t];
	uint64_t gap = to - from, b;
	uint64_t first = w->first / tr->res;
	unsigned k;

	for (k = 0; k < s->nspans; k++) {
		uint64_t n = s->nt[k];

		if (s->tier_of[k] != t)
			continue;
		if (gap >= n) {
			w->sum[k][0] = 0;
			w->sum[k][1] = 0;
			continue;
		}
		/* Buckets from + 1 - n .. to - n leave span k.  One from
		 * before the first held nothing (it may not even exist). */
		for (b = from + 1; b <= to; b++) {
			if (b < n + first)
				continue;
			w->sum[k][0] -= get(w, tr, b - n, 0);
			w->sum[k][1] -= get(w, tr, b - n, 1);
		}
	}
	if (gap >= tr->len) {
		memset(w->ring + tr->off, 0,
		       (size_t)tr->len * 2 * (tr->wide ? 8 : 4));
		return;
	}
	for (b = from + 1; b <= to; b++)
		clear(w, tr, b);
}

void window_advance(struct window *w, const struct window_shape *s,
		    uint64_t bucket)
{
	unsigned t;

	if (bucket <= w->head)
		return;
	for (t = 0; t < s->ntiers; t++) {
		uint64_t from = w->head / s->tier[t].res;
		uint64_t to = bucket / s->tier[t].res;

		if (to > from)
			advance_tier(w, s, t, from, to);
	}
	w->head = bucket;
}

void window_add(struct window *w, const struct window_shape *s, uint64_t bucket,
		uint64_t in, uint64_t out)
{
	uint64_t got[WINDOW_MAX_TIERS][2];
	unsigned t, k;

	window_advance(w, s, bucket);
	for (t = 0; t < s->ntiers; t++) {
		uint64_t b = w->head / s->tier[t].res;

		got[t][0] = put(w, &s->tier[t], b, 0, in);
		got[t][1] = put(w, &s->tier[t], b, 1, out);
	}
	for (k = 0; k < s->nspans; k++) {
		w->sum[k][0] += got[s->tier_of[k]][0];
		w->sum[k][1] += got[s->tier_of[k]][1];
	}
}

uint64_t window_covered(const struct window *w, const struct window_shape *s,
			unsigned k)
{
	uint64_t r = window_res(s, k), n = s->nt[k];
	uint64_t b = w->head / r, start;

	/* The oldest tier bucket of the span starts at (b - n + 1) * r. */
	start = b + 1 >= n ? (b + 1 - n) * r : 0;
	if (start < w->first)
		start = w->first;
	return w->head - start + 1;
}

bool window_has_first(const struct window *w, const struct window_shape *s,
		      unsigned k)
{
	uint64_t r = window_res(s, k), n = s->nt[k];
	uint64_t b = w->head / r;

	return b + 1 < n || (b + 1 - n) * r <= w->first;
}
