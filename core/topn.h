/*
 * topn.h - the busiest entries of a record: a bounded min-heap of
 * summary_fd, so that memory stays bounded by the top-N limit however
 * many fds are active, and a growable array of them.
 */
#ifndef SOCKMETER_TOPN_H
#define SOCKMETER_TOPN_H

#include "summary.h"

#include <stdbool.h>
#include <stdint.h>

/* A growable array of record entries (a heap while being filled). */
struct topn {
	struct summary_fd *v;
	uint32_t n, cap;
	int err; /* the errno of a growth refused since the owner last
		  * cleared it (0: none) */
};

/*
 * topn_grow - make room for need entries (doubling).  Returns false, with
 * t unchanged but for err, when memory runs out.
 * Context: ticker only.
 */
bool topn_grow(struct topn *t, uint32_t need);

/*
 * topn_offer - keep cand if it is among the `limit` busiest offered so far
 * (0: keep all).  The busiest are those of higher rank; equal ranks, the
 * lower fd.  Returns false when cand was not kept (ranked too low, or no
 * memory).
 * Context: ticker only.
 */
bool topn_offer(struct topn *t, uint32_t limit, const struct summary_fd *cand);

/* topn_sort - order the kept entries busiest first (stable output: ties by
 * fd number).  Context: ticker only. */
void topn_sort(struct topn *t);

/* topn_free - release t's memory.  Context: ticker only. */
void topn_free(struct topn *t);

/* topn_forget - empty, with no memory: in a fork child, which does not
 * have the parent's entries (they are not copied on fork, topn.c).
 * Context: fork child. */
void topn_forget(struct topn *t);

#endif
