/*
 * topn.c - the busiest entries of a record (contract in topn.h).
 */
#include "topn.h"

#include "quiet.h"
#include "rawsys.h"

#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Bytes of the mapping that holds cap entries: whole pages. */
static size_t mapped_bytes(uint32_t cap)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t bytes = (size_t)cap * sizeof(struct summary_fd);

	return (bytes + page - 1) / page * page;
}

/*
 * The entries live in a mapping of their own that a fork child does not
 * get (MADV_DONTFORK): a busy ticker's close records fill a megabyte here,
 * and in malloc's memory every fork of the host would copy its page
 * tables and then fault a copy of each page the ticker writes again (with
 * a TLB shootdown each, the other threads running).  A child starts with
 * none (topn_forget).
 */
bool topn_grow(struct topn *t, uint32_t need)
{
	struct summary_fd *p;
	uint32_t n = t->cap ? t->cap : 64;
	size_t bytes;
	void *m;

	if (need <= t->cap)
		return true;
	while (n < need)
		n *= 2;
	bytes = mapped_bytes(n);
	m = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED) {
		t->err = errno;
		return false;
	}
	if (!sm_quiet()) /* memory through mmap and munmap only (quiet.h) */
		madvise(m, bytes, MADV_DONTFORK);
	p = m;
	if (t->v) {
		memcpy(p, t->v, (size_t)t->n * sizeof(*p));
		munmap(t->v, mapped_bytes(t->cap));
	}
	t->v = p;
	t->cap = (uint32_t)(bytes / sizeof(*p));
	return true;
}

/* a ranks below b: lower rate, or equal rate and higher fd. */
static bool ranks_below(const struct summary_fd *a, const struct summary_fd *b)
{
	return a->rank < b->rank || (a->rank == b->rank && a->s.fd > b->s.fd);
}

static void swap_fd(struct summary_fd *a, struct summary_fd *b)
{
	struct summary_fd t = *a;

	*a = *b;
	*b = t;
}

/* Restore the min-heap (lowest rank at the root) below index i. */
static void sift_down(struct summary_fd *h, uint32_t n, uint32_t i)
{
	for (;;) {
		uint32_t l = 2 * i + 1, r = l + 1, low = i;

		if (l < n && ranks_below(&h[l], &h[low]))
			low = l;
		if (r < n && ranks_below(&h[r], &h[low]))
			low = r;
		if (low == i)
			return;
		swap_fd(&h[i], &h[low]);
		i = low;
	}
}

bool topn_offer(struct topn *t, uint32_t limit, const struct summary_fd *cand)
{
	struct summary_fd *h;
	uint32_t i;

	if (limit && t->n == limit) {
		if (!ranks_below(&t->v[0], cand))
			return false;
		t->v[0] = *cand;
		sift_down(t->v, t->n, 0);
		return true;
	}
	if (!topn_grow(t, t->n + 1))
		return false;
	h = t->v;
	i = t->n++;
	h[i] = *cand;
	while (i > 0 && ranks_below(&h[i], &h[(i - 1) / 2])) {
		swap_fd(&h[i], &h[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
	return true;
}

/* Busiest first; ties by fd number.  A heapsort on the min-heap (made
 * again first): no allocation and no system call, where glibc's qsort
 * asks sysinfo and may malloc, which a ticker under a seccomp filter may
 * not (quiet.h). */
void topn_sort(struct topn *t)
{
	uint32_t n = t->n, i;

	for (i = n / 2; i-- > 0;)
		sift_down(t->v, n, i);
	while (n > 1) {
		swap_fd(&t->v[0], &t->v[n - 1]);
		sift_down(t->v, --n, 0);
	}
}

void topn_free(struct topn *t)
{
	if (t->v)
		munmap(t->v, mapped_bytes(t->cap));
	topn_forget(t);
}

SM_FORK_PATH
void topn_forget(struct topn *t)
{
	t->v = NULL;
	t->n = t->cap = 0;
}
