/*
 * window.h - sliding-window byte counts in bounded memory and constant time
 * per update: multi-resolution rings, as RRDtool keeps its archives.
 *
 * Time is counted in base buckets (now / width, chosen by the caller).  A
 * window keeps one ring per resolution (a tier): a tier of resolution r
 * holds buckets r base buckets wide, its bucket t covering base buckets
 * t*r .. t*r + r - 1.  Every tier is fed the same bytes directly, so a
 * coarse bucket holds exactly the bytes of the base buckets it covers.
 *
 * Each reported span (a length in base buckets) is served by one tier: the
 * finest resolution r that divides the span with at most WINDOW_TIER_LEN
 * buckets (twice that where a tier bucket is at most 1 s wide and its
 * values are 32-bit), lowered as needed until the whole window fits
 * WINDOW_MAX_BYTES.  The span's sum is over its tier's newest span/r
 * buckets, the newest (still filling) one included: it covers between
 * span - r + 1 and span base buckets (window_covered says how many), always
 * whole base buckets.  A span of r = 1 is exact to the base bucket.
 *
 * Adding to the newest bucket adds to every tier's newest bucket and every
 * span's running sum: O(tiers + spans).  Moving on to a new bucket
 * subtracts, from each span's sum, the tier bucket that left it and clears
 * the slot it reuses: O(1) per span per tier bucket.  An idle gap of g tier
 * buckets costs min(g, ring length) such steps per tier: never more than
 * the skipped ticks would have, and at most one pass over the ring (at most
 * 120 buckets) however long the gap; one as long as the ring clears it at
 * once.  A bucket number older than the newest is added to the newest
 * (clocks that step back never corrupt the sums).
 */
#ifndef SOCKMETER_WINDOW_H
#define SOCKMETER_WINDOW_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

#define WINDOW_MAX_SPANS 4
#define WINDOW_MAX_TIERS WINDOW_MAX_SPANS

/* Buckets per span at most, in a 64-bit tier (twice that in a 32-bit one),
 * before the memory budget lowers it. */
#define WINDOW_TIER_LEN 60

/* A window (header and rings) never needs more than this per fd.  With the
 * ticker's other per-fd state it keeps a tracked fd under 4 KiB. */
#define WINDOW_MAX_BYTES 3072

/*
 * Tier buckets at most this wide (in ms) hold 32-bit values: at most
 * UINT32_MAX bytes per direction and bucket, i.e. 4 GiB/s sustained by one
 * connection, beyond which the rates of spans in that tier stay at the
 * ceiling (the byte counters and the other tiers stay exact).  Wider
 * buckets are 64-bit and never saturate.
 */
#define WINDOW_NARROW_MS 1000

struct window_tier {
	uint32_t res;  /* base buckets per tier bucket */
	uint32_t len;  /* ring length, in tier buckets */
	uint32_t wide; /* values are uint64_t (else uint32_t) */
	uint32_t off;  /* byte offset of the ring in window.ring */
};

struct window_shape {
	uint32_t nbuckets;		 /* history: the longest span */
	uint32_t nspans;		 /* 1 .. WINDOW_MAX_SPANS */
	uint32_t span[WINDOW_MAX_SPANS]; /* base buckets per span */
	/* Filled in by window_shape_init from the above: */
	uint32_t ntiers;
	uint32_t tier_of[WINDOW_MAX_SPANS]; /* the tier serving span k */
	uint32_t nt[WINDOW_MAX_SPANS];	    /* span k in its tier's buckets */
	struct window_tier tier[WINDOW_MAX_TIERS];
	uint32_t ring_bytes;
};

struct window {
	uint64_t head;	/* base bucket number of the newest bucket */
	uint64_t first; /* base bucket number of the first since reset */
	uint64_t sum[WINDOW_MAX_SPANS][2];
	/* The tiers' rings, 64-bit ones first: tier t's bucket b, direction d
	 * is value 2 * (b % len) + d of the ring at ring + off. */
	_Alignas(uint64_t) unsigned char ring[];
};

/*
 * window_shape_init - plan the tiers of a window whose base buckets are
 * bucket_ms wide, for nspans ascending spans span[] (in base buckets).
 * Returns 0 with *s filled in, or -EINVAL (and *s zeroed) when nspans is
 * not 1 .. WINDOW_MAX_SPANS, a span is 0 or the spans do not ascend.
 * The plan always fits WINDOW_MAX_BYTES.
 * Context: start-up only (config load, meter init); any thread, no state.
 */
int window_shape_init(struct window_shape *s, uint64_t bucket_ms,
		      unsigned nspans, const uint32_t *span);

/* window_res - span k's resolution, in base buckets.
 * Context: any thread (reads s only). */
static inline uint32_t window_res(const struct window_shape *s, unsigned k)
{
	return s->tier[s->tier_of[k]].res;
}

/* window_bytes - bytes a window of this shape needs (header and rings).
 * Context: any thread (reads s only). */
size_t window_bytes(const struct window_shape *s);

/* window_reset - empty the window; bucket is its first (and newest).
 * Context: ticker only (the window's owner). */
void window_reset(struct window *w, const struct window_shape *s,
		  uint64_t bucket);

/*
 * window_advance - make bucket the newest, closing every bucket before it
 * with what it holds (empty ones read as zero).  Does nothing when bucket
 * is not newer than the newest.
 * Context: ticker only.
 */
void window_advance(struct window *w, const struct window_shape *s,
		    uint64_t bucket);

/* window_add - add in/out bytes to bucket (advancing to it first).  A
 * 32-bit tier's bucket saturates at UINT32_MAX; the other tiers' do not.
 * Context: ticker only. */
void window_add(struct window *w, const struct window_shape *s, uint64_t bucket,
		uint64_t in, uint64_t out);

/* window_sum - bytes in direction dir (0 in, 1 out) over span k: the
 * newest s->nt[k] buckets of its tier, the newest included.
 * Context: ticker only. */
static inline uint64_t window_sum(const struct window *w, unsigned k,
				  unsigned dir)
{
	return w->sum[k][dir];
}

/*
 * window_covered - how many base buckets span k's sum really covers: from
 * the start of its oldest tier bucket (or the reset, when later) to the
 * newest base bucket.  Between span - res + 1 and span once the window is
 * older than the span; fewer after a recent reset.  Divide a sum by this
 * (times the width) for a rate over exactly the time it counts.
 * Context: ticker only.
 */
uint64_t window_covered(const struct window *w, const struct window_shape *s,
			unsigned k);

/*
 * window_has_first - whether span k still reaches back to the bucket the
 * window was reset at (its first: a connection's window starts with the
 * bucket it opened in).  Context: ticker only.
 */
bool window_has_first(const struct window *w, const struct window_shape *s,
		      unsigned k);

#endif
