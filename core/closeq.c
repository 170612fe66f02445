/*
 * closeq.c - the close queue (contract in closeq.h).
 */
#include "closeq.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#define LOAD(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)

enum { ENTRY_FREE, ENTRY_WRITING, ENTRY_READY };

#define RING_BYTES (CLOSEQ_CAP * sizeof(struct closeq_entry))

/* The shared part first, the ring on the next page. */
#define SHARED_BYTES ((sizeof(struct closeq_shared) + 4095) & ~(size_t)4095)
#define OWN_BYTES (SHARED_BYTES + RING_BYTES)

int closeq_init(struct closeq *q)
{
	char *p;

	memset(q, 0, sizeof(*q));
	p = mmap(NULL, OWN_BYTES, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return -ENOMEM;
	q->own = p;
	q->sh = (struct closeq_shared *)p;
	q->ring = (struct closeq_entry *)(p + SHARED_BYTES);
	return 0;
}

void closeq_attach(struct closeq *q, struct closeq_shared *sh,
		   struct closeq_entry *ring)
{
	q->sh = sh;
	q->ring = ring;
}

void closeq_destroy(struct closeq *q)
{
	if (q->own)
		munmap(q->own, OWN_BYTES);
	memset(q, 0, sizeof(*q));
}

static void add_atomic(struct fd_counters *dst, const struct fd_counters *src)
{
	uint64_t *d = (uint64_t *)dst;
	const uint64_t *s = (const uint64_t *)src;
	size_t i;

	for (i = 0; i < sizeof(*dst) / sizeof(uint64_t); i++)
		if (s[i])
			__atomic_fetch_add(&d[i], s[i], __ATOMIC_RELAXED);
}

void closeq_push(struct closeq *q, const struct fd_snapshot *s,
		 uint64_t closed_ns)
{
	uint64_t head = LOAD(&q->sh->head);
	struct closeq_entry *e;
	unsigned k = (unsigned)s->kind < KIND_COUNT ? (unsigned)s->kind
						     : KIND_UNTRACKED;

	__atomic_fetch_add(&q->sh->pushed, 1, __ATOMIC_RELAXED);
	do {
		if (head - LOAD(&q->sh->tail) >= CLOSEQ_CAP) {
			/* Full: keep the numbers, lose only the record. */
			add_atomic(&q->sh->dropped_c[k], &s->c);
			__atomic_fetch_add(&q->sh->dropped_n[k], 1,
					   __ATOMIC_RELAXED);
			__atomic_fetch_add(&q->sh->dropped, 1, __ATOMIC_RELAXED);
			return;
		}
	} while (!__atomic_compare_exchange_n(&q->sh->head, &head, head + 1, true,
					      __ATOMIC_ACQ_REL,
					      __ATOMIC_ACQUIRE));
	if (q->back)
		q->back(q->back_ctx, (uint32_t)(head % CLOSEQ_CAP));
	e = &q->ring[head % CLOSEQ_CAP];
	STORE(&e->state, ENTRY_WRITING);
	e->s = *s;
	e->closed_ns = closed_ns;
	STORE(&e->state, ENTRY_READY);
}

bool closeq_pop(struct closeq *q, struct closeq_entry *out)
{
	struct closeq_entry *e = &q->ring[q->sh->tail % CLOSEQ_CAP];

	if (LOAD(&e->state) != ENTRY_READY)
		return false;
	*out = *e;
	STORE(&e->state, ENTRY_FREE);
	STORE(&q->sh->tail, q->sh->tail + 1);
	return true;
}

bool closeq_peek(const struct closeq *q, uint64_t i, struct closeq_entry *out)
{
	const struct closeq_entry *e = &q->ring[(q->sh->tail + i) % CLOSEQ_CAP];

	if (i >= CLOSEQ_CAP || LOAD(&e->state) != ENTRY_READY)
		return false;
	*out = *e;
	return true;
}

void closeq_release(struct closeq *q, uint64_t n)
{
	for (; n > 0; n--) {
		STORE(&q->ring[q->sh->tail % CLOSEQ_CAP].state, ENTRY_FREE);
		STORE(&q->sh->tail, q->sh->tail + 1);
	}
}

uint64_t closeq_tail(const struct closeq *q)
{
	return q->sh->tail;
}

void closeq_settle(struct closeq *q, uint64_t upto)
{
	uint64_t from, to;

	if (upto < q->sh->tail || upto > q->sh->head)
		upto = q->sh->tail;
	q->sh->tail = upto;
	to = upto;
	for (from = upto; from < q->sh->head && from - upto < CLOSEQ_CAP;
	     from++) {
		struct closeq_entry *e = &q->ring[from % CLOSEQ_CAP];

		if (e->state != ENTRY_READY)
			continue;
		if (from != to)
			q->ring[to % CLOSEQ_CAP] = *e;
		to++;
	}
	for (from = to; from < q->sh->head && from - upto < CLOSEQ_CAP; from++)
		q->ring[from % CLOSEQ_CAP].state = ENTRY_FREE;
	q->sh->head = to;
}

void closeq_dropped(const struct closeq *q, enum fd_kind k,
		    struct fd_counters *c, uint64_t *n)
{
	unsigned first = k == KIND_COUNT ? 0 : (unsigned)k;
	unsigned last = k == KIND_COUNT ? KIND_COUNT : (unsigned)k + 1;
	uint64_t *d = (uint64_t *)c;
	unsigned kk;
	size_t i;

	_Static_assert(sizeof(struct fd_counters) % sizeof(uint64_t) == 0,
		       "fd_counters is walked as an array of uint64_t");
	memset(c, 0, sizeof(*c));
	if (n)
		*n = 0;
	for (kk = first; kk < last; kk++) {
		const uint64_t *s = (const uint64_t *)&q->sh->dropped_c[kk];

		for (i = 0; i < sizeof(*c) / sizeof(uint64_t); i++)
			d[i] += __atomic_load_n(&s[i], __ATOMIC_RELAXED);
		if (n)
			*n += __atomic_load_n(&q->sh->dropped_n[kk],
					      __ATOMIC_RELAXED);
	}
}

uint64_t closeq_closed(const struct closeq *q)
{
	return __atomic_load_n(&q->sh->pushed, __ATOMIC_RELAXED);
}

uint64_t closeq_dropped_records(const struct closeq *q)
{
	return __atomic_load_n(&q->sh->dropped, __ATOMIC_RELAXED);
}

void closeq_note_dropped(struct closeq *q)
{
	__atomic_fetch_add(&q->sh->dropped, 1, __ATOMIC_RELAXED);
}

void closeq_after_fork(struct closeq *q)
{
	for (; q->sh->tail < q->sh->head; q->sh->tail++)
		q->ring[q->sh->tail % CLOSEQ_CAP].state = ENTRY_FREE;
	q->sh->head = q->sh->tail = 0;
	q->sh->pushed = 0;
	q->sh->dropped = 0;
	memset(q->sh->dropped_c, 0, sizeof(q->sh->dropped_c));
	memset(q->sh->dropped_n, 0, sizeof(q->sh->dropped_n));
}
