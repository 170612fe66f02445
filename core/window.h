/*
 * window.h - sliding-window byte counts in constant time per update.
 *
 * A window is a ring of fixed-width buckets (one value per direction) plus
 * one running sum per reported span.  Adding to the newest bucket adds to
 * every span's sum; moving on to the next bucket subtracts, from each span's
 * sum, the bucket that just left that span, then clears the slot the new
 * bucket reuses.  No shift and no scan: the cost of an update is O(spans),
 * whatever the ring's length.  An idle gap of g buckets costs O(min(g, n))
 * once, i.e. O(1) per elapsed bucket; a gap of n buckets or more simply
 * clears the ring.
 *
 * Time is counted in bucket numbers (now / width), chosen by the caller; a
 * bucket number older than the newest is added to the newest (clocks that
 * step back never corrupt the sums).
 */
#ifndef SOCKMETER_WINDOW_H
#define SOCKMETER_WINDOW_H

#include <stddef.h>
#include <stdint.h>

#define WINDOW_MAX_SPANS 4

struct window_shape {
	uint32_t nbuckets;                /* ring length, >= 1 */
	uint32_t nspans;                  /* 1 .. WINDOW_MAX_SPANS */
	uint32_t span[WINDOW_MAX_SPANS];  /* buckets per span, 1 .. nbuckets */
};

/*
 * A bucket holds at most WINDOW_BUCKET_MAX bytes per direction (4 GiB - 1:
 * 32 bits keep a default ring at 480 bytes); more is left out of the rates,
 * never out of the sums' consistency.  The byte counters themselves are
 * exact and 64-bit elsewhere.
 */
#define WINDOW_BUCKET_MAX UINT32_MAX

struct window {
	uint64_t head;    /* bucket number of the newest bucket */
	uint64_t first;   /* bucket number of the first bucket since reset */
	uint64_t sum[WINDOW_MAX_SPANS][2];
	uint32_t ring[];  /* nbuckets pairs: ring[2 * (b % nbuckets) + dir] */
};

/* window_bytes - bytes a window of this shape needs (header and ring). */
size_t window_bytes(const struct window_shape *s);

/* window_reset - empty the window; bucket is its first (and newest). */
void window_reset(struct window *w, const struct window_shape *s,
		  uint64_t bucket);

/*
 * window_advance - make bucket the newest, closing every bucket before it
 * with what it holds (empty ones read as zero).  Does nothing when bucket
 * is not newer than the newest.
 */
void window_advance(struct window *w, const struct window_shape *s,
		    uint64_t bucket);

/* window_add - add in/out bytes to bucket (advancing to it first); a
 * bucket saturates at WINDOW_BUCKET_MAX. */
void window_add(struct window *w, const struct window_shape *s,
		uint64_t bucket, uint64_t in, uint64_t out);

/* window_sum - bytes in direction dir (0 in, 1 out) over the last
 * s->span[k] buckets, the newest included. */
static inline uint64_t window_sum(const struct window *w, unsigned k,
				  unsigned dir)
{
	return w->sum[k][dir];
}

/*
 * window_covered - how many buckets span k really covers: its length, or
 * fewer when the window was reset more recently than that.  Divide a sum by
 * this (times the width) for a rate that does not under-report a new
 * connection.
 */
uint64_t window_covered(const struct window *w, const struct window_shape *s,
			unsigned k);

#endif
