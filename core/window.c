/*
 * window.c - the constant-time bucket ring (contract in window.h).
 */
#include "window.h"

#include <string.h>

size_t window_bytes(const struct window_shape *s)
{
	return sizeof(struct window) + (size_t)s->nbuckets * 2 * sizeof(uint32_t);
}

void window_reset(struct window *w, const struct window_shape *s,
		  uint64_t bucket)
{
	memset(w, 0, window_bytes(s));
	w->head = bucket;
	w->first = bucket;
}

/* Close the newest bucket and open the next one: O(spans). */
static void step(struct window *w, const struct window_shape *s)
{
	uint64_t next = w->head + 1;
	uint32_t *slot;
	unsigned k;

	for (k = 0; k < s->nspans; k++) {
		const uint32_t *gone;

		/* The bucket leaving span k.  One from before the first
		 * bucket held nothing (and its number may not even exist). */
		if (next < (uint64_t)s->span[k] + w->first)
			continue;
		gone = &w->ring[2 * ((next - s->span[k]) % s->nbuckets)];
		w->sum[k][0] -= gone[0];
		w->sum[k][1] -= gone[1];
	}
	slot = &w->ring[2 * (next % s->nbuckets)];
	slot[0] = 0;
	slot[1] = 0;
	w->head = next;
}

void window_advance(struct window *w, const struct window_shape *s,
		    uint64_t bucket)
{
	if (bucket <= w->head)
		return;
	if (bucket - w->head >= s->nbuckets) {
		/* Everything in the ring has left every span. */
		uint64_t first = w->first;

		window_reset(w, s, bucket);
		w->first = first;
		return;
	}
	while (w->head < bucket)
		step(w, s);
}

/* Add v to a bucket value, saturating; returns what was really added. */
static uint64_t sat_add(uint32_t *slot, uint64_t v)
{
	uint64_t room = WINDOW_BUCKET_MAX - *slot;

	if (v > room)
		v = room;
	*slot += (uint32_t)v;
	return v;
}

void window_add(struct window *w, const struct window_shape *s,
		uint64_t bucket, uint64_t in, uint64_t out)
{
	uint32_t *slot;
	unsigned k;

	window_advance(w, s, bucket);
	slot = &w->ring[2 * (w->head % s->nbuckets)];
	in = sat_add(&slot[0], in);
	out = sat_add(&slot[1], out);
	for (k = 0; k < s->nspans; k++) {
		w->sum[k][0] += in;
		w->sum[k][1] += out;
	}
}

uint64_t window_covered(const struct window *w, const struct window_shape *s,
			unsigned k)
{
	uint64_t age = w->head - w->first + 1;

	return age < s->span[k] ? age : s->span[k];
}
