/*
 * closeq.c - the close queue (contract in closeq.h).
 */
#include "closeq.h"
#include "lockall.h"
#include "rawsys.h"

#include <errno.h>
#include <stdlib.h>
#include <linux/futex.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define LOAD(p)	    __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)

#define RING_BYTES (CLOSEQ_RING_PLACES * sizeof(struct closeq_entry))

_Static_assert((CLOSEQ_CAP & (CLOSEQ_CAP - 1)) == 0 &&
		   CLOSEQ_WAKE_AT < CLOSEQ_CAP,
	       "the ring is a power of 2, woken well before it is full");

/*
 * A child starts with an empty queue, so the ring is wiped on fork
 * (MADV_WIPEONFORK: the child sees zeros, every entry free): fork copies
 * no page table of it, and the parent, which writes the ring at every
 * close, takes no copy-on-write fault (each a TLB shootdown across the
 * CPUs its threads run on) after every fork.  Where the kernel lacks it
 * (before 4.14), closeq_after_fork frees the entries the parent had
 * pending, as before.
 */
static struct closeq_entry *map_ring(bool *wiped)
{
	void *p = mmap(NULL, RING_BYTES, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	*wiped = false;
	if (p == MAP_FAILED)
		return NULL;
	raw_table(p, RING_BYTES);
#ifdef MADV_WIPEONFORK
	*wiped = madvise(p, RING_BYTES, MADV_WIPEONFORK) == 0;
#endif
	return p;
}

void closeq_lazy_ranges(const struct closeq *q, struct lockall_set *s)
{
	if (q->own)
		lockall_add(s, q->ring, RING_BYTES);
}

int closeq_init(struct closeq *q)
{
	memset(q, 0, sizeof(*q));
	q->own = true;
	q->sh = calloc(1, sizeof(*q->sh));
	q->ring = map_ring(&q->wiped);
	if (!q->sh || !q->ring) {
		closeq_destroy(q);
		return -ENOMEM;
	}
	q->spill = (struct closeq_spill *)(q->ring + CLOSEQ_CAP);
	return 0;
}

void closeq_attach(struct closeq *q, struct closeq_shared *sh,
		   struct closeq_entry *ring)
{
	q->sh = sh;
	q->ring = ring;
	q->spill = ring ? (struct closeq_spill *)(ring + CLOSEQ_CAP) : NULL;
	/* Someone else's memory: a fork child gets it anew (state.c). */
	q->wiped = false;
}

void closeq_destroy(struct closeq *q)
{
	if (q->own) {
		if (q->ring)
			munmap(q->ring, RING_BYTES);
		free(q->sh);
	}
	memset(q, 0, sizeof(*q));
}

static void add_atomic(struct fd_counters *dst, const struct fd_counters *src)
{
	uint64_t *d = (uint64_t *)dst;
	const uint64_t *s = (const uint64_t *)src;
	size_t i;

	for (i = 0; i < FD_COUNTERS_WORDS; i++)
		if (s[i])
			__atomic_fetch_add(&d[i], s[i], __ATOMIC_RELAXED);
}

/* The push of entry head found many records waiting: ask the ticker for a
 * drain, once per drain (the flag is the futex word closeq_wait sleeps
 * on).  errno is kept: a close wrapper runs this before the real call. */
static void ask_drain(struct closeq *q, uint64_t head)
{
	uint32_t idle = 0;
	int saved;

	if (head + 1 - LOAD(&q->sh->tail) < CLOSEQ_WAKE_AT || LOAD(&q->wake) ||
	    LOAD(&q->no_wake) ||
	    !__atomic_compare_exchange_n(&q->wake, &idle, 1, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
		return;
	saved = errno;
	SM_SYSCALL(SYS_futex, &q->wake, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, 1, NULL,
		NULL, 0);
	errno = saved;
}

void closeq_push(struct closeq *q, const struct fd_snapshot *s,
		 uint64_t closed_ns)
{
	uint64_t head = LOAD(&q->sh->head);
	struct closeq_entry *e;
	unsigned k =
	    (unsigned)s->kind < KIND_COUNT ? (unsigned)s->kind : KIND_UNTRACKED;

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
	STORE(&e->state, CLOSEQ_WRITING);
	e->s = *s;
	e->closed_ns = closed_ns;
	STORE(&e->state, CLOSEQ_READY);
	ask_drain(q, head);
}

/* Everything a claim names set before it reads as claimed (a release
 * store): until then it reads free, and recovery passes over it. */
static void claim_fill(struct closeq_entry *e, uint64_t closed_ns, int fd,
		       enum fd_kind kind, uint32_t gen, bool unseen)
{
	e->bound = 0;
	e->s.fd = fd;
	e->s.kind = fd_kind_tracked(kind) ? kind : KIND_UNKNOWN;
	e->s.gen = gen;
	e->s.unseen = unseen;
	e->closed_ns = closed_ns;
	memset(&e->s.c, 0, sizeof(e->s.c));
	STORE(&e->state, CLOSEQ_TAKING);
}

static bool is_spill(const struct closeq *q, const struct closeq_entry *e)
{
	return (const char *)e >= (const char *)q->spill &&
	       (const char *)e < (const char *)(q->spill + CLOSEQ_SPILLS);
}

/* Spill at's room backed (its first and last place: a chunk or two),
 * and kept there: true when it may be used. */
static bool spill_backed(struct closeq *q, uint32_t at)
{
	uint32_t first = CLOSEQ_CAP + at * CLOSEQ_SPILL_PLACES;
	uint32_t last = first + CLOSEQ_SPILL_PLACES - 1;

	if (q->kept && q->kept(q->back_ctx, first) &&
	    q->kept(q->back_ctx, last))
		return true;
	if (q->back) {
		q->back(q->back_ctx, first);
		q->back(q->back_ctx, last);
	}
	return !q->kept ||
	       (q->kept(q->back_ctx, first) && q->kept(q->back_ctx, last));
}

/* A free spill, owned (CLOSEQ_WRITING), its room in the file; NULL when
 * all are busy or refused.  From a place the thread's stack picks, so
 * that a thread finds the spill it used last (its pages) and threads
 * seldom meet.  Backed before its state is even read: the backing moves
 * the file's pages over the private memory the room was (state.c), and
 * a claim made there first would be wiped, the spill free again for a
 * second owner (a reviewer's). */
static struct closeq_spill *spill_take(struct closeq *q)
{
	uint64_t sp = (uint64_t)(uintptr_t)__builtin_frame_address(0) >> 14;
	uint32_t first = (uint32_t)((sp * 0x9E3779B97F4A7C15ull) >> 32), i;

	if (!q->spill)
		return NULL;
	for (i = 0; i < CLOSEQ_SPILLS; i++) {
		uint32_t at = (first + i) % CLOSEQ_SPILLS, free = CLOSEQ_FREE;
		struct closeq_spill *s = &q->spill[at];

		if (!spill_backed(q, at) || LOAD(&s->e.state) != CLOSEQ_FREE)
			continue;
		/* Marked before it is claimed: a fork child clears the
		 * marked ones (closeq_after_fork). */
		if (!(LOAD(&q->sh->spills_used) & (1u << at)))
			__atomic_fetch_or(&q->sh->spills_used, 1u << at,
					  __ATOMIC_ACQ_REL);
		if (!__atomic_compare_exchange_n(&s->e.state, &free,
						 CLOSEQ_WRITING, false,
						 __ATOMIC_ACQ_REL,
						 __ATOMIC_RELAXED))
			continue;
		return s;
	}
	return NULL;
}

struct closeq_entry *closeq_claim(struct closeq *q, uint64_t closed_ns,
				  int fd, enum fd_kind kind, uint32_t gen,
				  bool unseen)
{
	uint64_t head = LOAD(&q->sh->head);
	struct closeq_entry *e;
	struct closeq_spill *sp;

	do {
		if (head - LOAD(&q->sh->tail) >= CLOSEQ_CAP) {
			sp = spill_take(q);
			if (!sp)
				return NULL;
			__atomic_fetch_add(&q->sh->pushed, 1, __ATOMIC_RELAXED);
			claim_fill(&sp->e, closed_ns, fd, kind, gen, unseen);
			return &sp->e;
		}
	} while (!__atomic_compare_exchange_n(&q->sh->head, &head, head + 1, true,
					      __ATOMIC_ACQ_REL,
					      __ATOMIC_ACQUIRE));
	__atomic_fetch_add(&q->sh->pushed, 1, __ATOMIC_RELAXED);
	if (q->back)
		q->back(q->back_ctx, (uint32_t)(head % CLOSEQ_CAP));
	e = &q->ring[head % CLOSEQ_CAP];
	claim_fill(e, closed_ns, fd, kind, gen, unseen);
	return e;
}

/* Copy a spill's next into its sums (CLOSEQ_FOLDING: as often as a
 * recovery needs; one owner), and free it. */
static void spill_copy(struct closeq_spill *sp)
{
	unsigned k = sp->next_kind < KIND_COUNT ? sp->next_kind
						: KIND_UNTRACKED;
	uint64_t *d = (uint64_t *)&sp->sum[k];
	const uint64_t *n = (const uint64_t *)&sp->next;
	size_t i;

	/* Each word only grows: the ticker reading meanwhile sees each one
	 * old or new. */
	for (i = 0; i < FD_COUNTERS_WORDS; i++)
		__atomic_store_n(&d[i], n[i], __ATOMIC_RELAXED);
	__atomic_store_n(&sp->sum_n[k], sp->next_n, __ATOMIC_RELAXED);
	STORE(&sp->e.state, CLOSEQ_FREE);
}

/* Fold a spill's connection (e.s, whole) into its sums. */
static void spill_fold(struct closeq_spill *sp)
{
	unsigned k = (unsigned)sp->e.s.kind < KIND_COUNT ? (unsigned)sp->e.s.kind
							  : KIND_UNTRACKED;
	const uint64_t *sum = (const uint64_t *)&sp->sum[k];
	const uint64_t *c = (const uint64_t *)&sp->e.s.c;
	uint64_t *n = (uint64_t *)&sp->next;
	size_t i;

	sp->next_kind = k;
	for (i = 0; i < FD_COUNTERS_WORDS; i++)
		n[i] = sum[i] + c[i];
	sp->next_n = sp->sum_n[k] + 1;
	STORE(&sp->e.state, CLOSEQ_FOLDING);
	spill_copy(sp);
}

void closeq_finish(struct closeq *q, struct closeq_entry *e, bool had)
{
	if (is_spill(q, e)) {
		if (had)
			spill_fold((struct closeq_spill *)e);
		else
			STORE(&e->state, CLOSEQ_FREE);
		return;
	}
	STORE(&e->state, had ? CLOSEQ_READY : CLOSEQ_VOID);
	if (had)
		ask_drain(q, LOAD(&q->sh->head) - 1);
}

int closeq_retire(struct closeq *q, struct fdtab *t, int fd,
		  const uint32_t *gen, uint64_t real_ns,
		  const struct tcpinfo *ti, bool unseen, uint64_t forked_at)
{
	const struct fd_slot *slot = fdtab_slot(t, fd);
	/* The generation before the kind: a retire and a reopen between
	 * the two reads make them disagree, and the claim is then passed
	 * over rather than joined under the old connection's kind. */
	uint32_t was = gen ? *gen
			   : slot ? __atomic_load_n(&slot->gen, __ATOMIC_ACQUIRE)
				  : 0;
	enum fd_kind kind = slot ? fdtab_kind(slot) : KIND_UNKNOWN;
	struct closeq_entry *e = NULL;
	struct fd_snapshot own, *s = &own;
	int had;

	/* A slot that holds a connection, or may (busy): the record's place
	 * is claimed first and the connection moves straight into it.
	 * Taken into a snapshot of our own first, one in about 60 kills of
	 * a busy nginx lost the connection being closed.  A full ring: a
	 * spill's place; all busy, our own, and closeq_push drops the
	 * record and keeps its numbers. */
	if (fd_kind_counts(kind))
		e = closeq_claim(q, real_ns, fd, kind, was, unseen);
	if (e)
		s = &e->s;
	had = fdtab_retire_into(t, fd, gen, s, e ? &e->bound : NULL);
	if (had) {
		if (ti && s->kind == KIND_TCP)
			s->ti = *ti;
		if (unseen)
			s->unseen = true;
		else if (s->opened_ns <= forked_at)
			s->shared = true;
		if (!e)
			closeq_push(q, s, real_ns);
	}
	if (e)
		closeq_finish(q, e, had);
	return had;
}

/* Recovery: a spill the kill left claimed or folding, folded (once). */
static void spill_rescue(struct closeq_spill *sp, int pass,
			 int (*rescue)(void *ctx, struct fd_snapshot *s,
				       uint32_t bound),
			 void *ctx)
{
	struct closeq_entry *e = &sp->e;

	if (e->state == CLOSEQ_FOLDING) {
		if (pass == 0)
			spill_copy(sp);
		return;
	}
	if (e->state == CLOSEQ_WRITING) {
		/* Owned, nothing named or moved yet. */
		e->state = CLOSEQ_FREE;
		return;
	}
	if (e->state != CLOSEQ_TAKING || (pass == 0) != (e->bound != 0))
		return;
	if (pass == 0 || rescue(ctx, &e->s, 0)) {
		if (pass == 0)
			rescue(ctx, &e->s, e->bound);
		spill_fold(sp);
	} else
		e->state = CLOSEQ_FREE;
}

void closeq_rescue(struct closeq *q, uint64_t upto,
		   int (*rescue)(void *ctx, struct fd_snapshot *s,
				 uint32_t bound),
		   void *ctx)
{
	uint64_t from = q->sh->tail, at;
	uint32_t used = q->sh->spills_used, i;
	int pass;

	if (upto >= q->sh->tail && upto <= q->sh->head)
		from = upto;
	/* The bound ones first: each has taken its slot.  An unbound one
	 * whose slot is left busy was killed between owning it and binding
	 * (or the slot's other owner was, in the middle of the connection
	 * being closed): it takes the slot whole, once. */
	for (pass = 0; pass < 2; pass++) {
		for (at = from; at < q->sh->head && at - from < CLOSEQ_CAP;
		     at++) {
			struct closeq_entry *e = &q->ring[at % CLOSEQ_CAP];

			if (e->state != CLOSEQ_TAKING ||
			    (pass == 0) != (e->bound != 0))
				continue;
			if (pass == 0) {
				rescue(ctx, &e->s, e->bound);
				e->state = CLOSEQ_READY;
			} else
				e->state = rescue(ctx, &e->s, 0)
						   ? CLOSEQ_READY
						   : CLOSEQ_VOID;
		}
		for (i = 0; q->spill && i < CLOSEQ_SPILLS; i++)
			if (used & (1u << i))
				spill_rescue(&q->spill[i], pass, rescue, ctx);
	}
}

void closeq_prepare(struct closeq *q)
{
	uint64_t head;

	if (!q->ready)
		return;
	head = LOAD(&q->sh->head);
	q->ready(q->back_ctx, (uint32_t)(head % CLOSEQ_CAP));
}

uint64_t closeq_pending(const struct closeq *q)
{
	return LOAD(&q->sh->head) - LOAD(&q->sh->tail);
}

bool closeq_wait(struct closeq *q, uint64_t until_ns)
{
	struct timespec ts = {(time_t)(until_ns / 1000000000u),
			      (long)(until_ns % 1000000000u)};

	/* FUTEX_WAIT_BITSET: an absolute CLOCK_MONOTONIC deadline. */
	while (!LOAD(&q->wake)) {
		if (SM_SYSCALL(SYS_futex, &q->wake,
			    FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG, 0, &ts,
			    NULL, FUTEX_BITSET_MATCH_ANY) == 0 ||
		    errno == EINTR || errno == EAGAIN)
			continue;
		if (errno != ETIMEDOUT) /* no futex here: a plain sleep */
			while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME,
					       &ts, NULL) == EINTR)
				;
		break;
	}
	return __atomic_exchange_n(&q->wake, 0, __ATOMIC_ACQ_REL) != 0;
}

bool closeq_pop(struct closeq *q, struct closeq_entry *out)
{
	struct closeq_entry *e = &q->ring[q->sh->tail % CLOSEQ_CAP];

	while (q->sh->tail < LOAD(&q->sh->head) &&
	       LOAD(&e->state) == CLOSEQ_VOID) {
		STORE(&e->state, CLOSEQ_FREE);
		STORE(&q->sh->tail, q->sh->tail + 1);
		e = &q->ring[q->sh->tail % CLOSEQ_CAP];
	}
	if (LOAD(&e->state) != CLOSEQ_READY)
		return false;
	*out = *e;
	STORE(&e->state, CLOSEQ_FREE);
	STORE(&q->sh->tail, q->sh->tail + 1);
	return true;
}

/* Never at or past head: a place there is the ring's entry of an older
 * position.  In a dead process's queue (closeq_settle moved tail up to
 * the totals committed) such an entry may still read ready, one the
 * totals hold already: killed between its drain's commit and its
 * release with a full ring, its recovery counted 698 closes twice (a
 * reviewer, gdb).  Live, nothing at or past head is ready yet. */
bool closeq_peek(const struct closeq *q, uint64_t i, struct closeq_entry *out)
{
	uint64_t tail = q->sh->tail;
	const struct closeq_entry *e = &q->ring[(tail + i) % CLOSEQ_CAP];
	uint32_t state;

	if (i >= CLOSEQ_CAP || tail + i >= LOAD(&q->sh->head))
		return false;
	state = LOAD(&e->state);
	if (state != CLOSEQ_READY && state != CLOSEQ_VOID)
		return false;
	*out = *e;
	return true;
}

void closeq_release(struct closeq *q, uint64_t n)
{
	for (; n > 0; n--) {
		STORE(&q->ring[q->sh->tail % CLOSEQ_CAP].state, CLOSEQ_FREE);
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

		if (e->state != CLOSEQ_READY)
			continue;
		if (from != to)
			q->ring[to % CLOSEQ_CAP] = *e;
		to++;
	}
	for (from = to; from < q->sh->head && from - upto < CLOSEQ_CAP; from++)
		q->ring[from % CLOSEQ_CAP].state = CLOSEQ_FREE;
	q->sh->head = to;
}

void closeq_dropped(const struct closeq *q, enum fd_kind k,
		    struct fd_counters *c, uint64_t *n)
{
	unsigned first = k == KIND_COUNT ? 0 : (unsigned)k;
	unsigned last = k == KIND_COUNT ? KIND_COUNT : (unsigned)k + 1;
	uint32_t used = LOAD(&q->sh->spills_used);
	uint64_t *d = (uint64_t *)c;
	unsigned kk, j;
	size_t i;

	memset(c, 0, sizeof(*c));
	if (n)
		*n = 0;
	for (j = 0; j <= CLOSEQ_SPILLS; j++) {
		/* The ring's full-queue totals (j = 0), then each spill's
		 * ever used. */
		const struct closeq_spill *sp = j ? &q->spill[j - 1] : NULL;

		if (j && (!q->spill || !(used & (1u << (j - 1)))))
			continue;
		for (kk = first; kk < last; kk++) {
			const uint64_t *s =
			    (const uint64_t *)(sp ? &sp->sum[kk]
						  : &q->sh->dropped_c[kk]);

			for (i = 0; i < FD_COUNTERS_WORDS; i++)
				d[i] += __atomic_load_n(&s[i], __ATOMIC_RELAXED);
			if (n)
				*n += __atomic_load_n(sp ? &sp->sum_n[kk]
							 : &q->sh->dropped_n[kk],
						      __ATOMIC_RELAXED);
		}
	}
}

uint64_t closeq_closed(const struct closeq *q)
{
	return __atomic_load_n(&q->sh->pushed, __ATOMIC_RELAXED);
}

uint64_t closeq_dropped_records(const struct closeq *q)
{
	uint64_t n = __atomic_load_n(&q->sh->dropped, __ATOMIC_RELAXED);
	uint32_t used = LOAD(&q->sh->spills_used), j;
	unsigned k;

	/* Each close a spill folded is a record lost. */
	for (j = 0; q->spill && j < CLOSEQ_SPILLS; j++)
		if (used & (1u << j))
			for (k = 0; k < KIND_COUNT; k++)
				n += __atomic_load_n(&q->spill[j].sum_n[k],
						     __ATOMIC_RELAXED);
	return n;
}

void closeq_note_dropped(struct closeq *q, uint64_t n)
{
	__atomic_fetch_add(&q->sh->dropped, n, __ATOMIC_RELAXED);
}

void closeq_note_written(struct closeq *q, uint64_t n)
{
	uint64_t cur = __atomic_load_n(&q->sh->dropped, __ATOMIC_RELAXED);

	/* Only the ticker lowers it; producers (a full queue) only raise
	 * it, and never below what was noted. */
	while (!__atomic_compare_exchange_n(&q->sh->dropped, &cur,
					    cur > n ? cur - n : 0, true,
					    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

SM_FORK_PATH
void closeq_after_fork(struct closeq *q, bool fresh)
{
	uint32_t i;

	q->wake = 0;
	/* New zeroed memory (a state file's child): nothing to touch. */
	if (fresh)
		return;
	/* Wiped on fork where the kernel can (touching the entries would
	 * only fault in zero pages); else free what was pending. */
	for (; !q->wiped && q->sh->tail < q->sh->head; q->sh->tail++)
		q->ring[q->sh->tail % CLOSEQ_CAP].state = CLOSEQ_FREE;
	q->sh->head = q->sh->tail = 0;
	q->wake = 0;
	q->sh->pushed = 0;
	q->sh->dropped = 0;
	memset(q->sh->dropped_c, 0, sizeof(q->sh->dropped_c));
	memset(q->sh->dropped_n, 0, sizeof(q->sh->dropped_n));
	/* The spills the parent used, where the ring was not wiped (they
	 * are in its mapping). */
	for (i = 0; !q->wiped && q->spill && i < CLOSEQ_SPILLS; i++)
		if (q->sh->spills_used & (1u << i))
			memset(&q->spill[i], 0, sizeof(q->spill[i]));
	q->sh->spills_used = 0;
}
