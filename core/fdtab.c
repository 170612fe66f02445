/*
 * fdtab.c - the per-fd slot table: mapping, lifecycle and snapshots.
 * The hot-path counting itself is inline in fdtab.h.
 */
#include "fdtab.h"
#include "lockall.h"
#include "rawsys.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>

#define LOAD(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)

uint32_t fdtab_capacity(uint64_t soft, uint64_t hard, int overcommit,
			uint32_t max_fds)
{
	uint64_t cap = hard;

	if (max_fds)
		return max_fds < FDTAB_MAX_CAP ? max_fds : FDTAB_MAX_CAP;
	if (overcommit == 2) {
		if (soft < cap)
			cap = soft;
		if (cap > FDTAB_STRICT_CAP)
			cap = FDTAB_STRICT_CAP;
	}
	if (cap > FDTAB_MAX_CAP)
		return FDTAB_MAX_CAP;
	return cap < 1024 ? 1024 : (uint32_t)cap;
}

int fdtab_init(struct fdtab *t, uint32_t cap)
{
	void *p;
	int r;

	if (cap > FDTAB_MAX_CAP)
		cap = FDTAB_MAX_CAP;
	memset(t, 0, sizeof(*t));
	if (cap == 0)
		return -EINVAL;
	/* NORESERVE: untouched pages stay unbacked, so capacity is free. */
	p = mmap(NULL, (size_t)cap * sizeof(struct fd_slot),
		 PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return -errno;
	raw_table(p, (size_t)cap * sizeof(struct fd_slot));
	r = fdtab_init_at(t, p, cap);
	if (r) {
		munmap(p, (size_t)cap * sizeof(struct fd_slot));
		t->slots = NULL;
		return r;
	}
	t->own_slots = true;
	return 0;
}

static size_t used_bytes(uint32_t cap)
{
	return ((size_t)cap + 63) / 64 * sizeof(uint64_t);
}

int fdtab_init_at(struct fdtab *t, struct fd_slot *slots, uint32_t cap)
{
	void *p;

	memset(t, 0, sizeof(*t));
	if (cap == 0 || cap > FDTAB_MAX_CAP || !slots)
		return -EINVAL;
	t->slots = slots;
	p = mmap(NULL, (size_t)cap * sizeof(struct fd_unix_paths),
		 PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED) {
		t->slots = NULL;
		return -errno;
	}
	raw_table(p, (size_t)cap * sizeof(struct fd_unix_paths));
	t->unix_paths = p;
	t->cap = cap;
	/* The map of used numbers: a fork child starts with none (see
	 * struct fdtab).  Without it (no memory, no wiping on fork: before
	 * Linux 4.14) every number is walked, as before there was one. */
	p = mmap(NULL, used_bytes(cap), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p != MAP_FAILED)
		raw_dontdump(p, used_bytes(cap));
	if (p != MAP_FAILED &&
	    madvise(p, used_bytes(cap), MADV_WIPEONFORK) != 0) {
		munmap(p, used_bytes(cap));
		p = MAP_FAILED;
	}
	t->used = p == MAP_FAILED ? NULL : p;
	return 0;
}

void fdtab_lazy_ranges(const struct fdtab *t, struct lockall_set *s)
{
	if (t->own_slots)
		lockall_add(s, t->slots,
			    (size_t)t->cap * sizeof(struct fd_slot));
	lockall_add(s, t->unix_paths,
		    (size_t)t->cap * sizeof(struct fd_unix_paths));
	lockall_add(s, t->used, used_bytes(t->cap));
}

void fdtab_use_all(struct fdtab *t)
{
	fdtab_use_below(t, t->cap);
}

void fdtab_use_below(struct fdtab *t, uint32_t high)
{
	if (t->used)
		munmap(t->used, used_bytes(t->cap));
	t->used = NULL;
	t->high = high < t->cap ? high : t->cap;
}

void fdtab_destroy(struct fdtab *t)
{
	if (t->slots && t->own_slots)
		munmap(t->slots, (size_t)t->cap * sizeof(struct fd_slot));
	if (t->unix_paths)
		munmap(t->unix_paths,
		       (size_t)t->cap * sizeof(struct fd_unix_paths));
	if (t->used)
		munmap(t->used, used_bytes(t->cap));
	memset(t, 0, sizeof(*t));
}

/* Before the first store into slot fd: its number goes on the map of used
 * ones (read first: the word is shared with 63 other numbers, and a fork
 * child's first write to the page is a fault) and below high. */
static void raise_high(struct fdtab *t, int fd)
{
	uint32_t want = (uint32_t)fd + 1;
	uint32_t cur;

	if (t->used) {
		uint64_t *w = &t->used[(uint32_t)fd / 64];
		uint64_t bit = 1ull << ((uint32_t)fd % 64);

		if (!(LOAD(w) & bit))
			__atomic_fetch_or(w, bit, __ATOMIC_ACQ_REL);
	}
	cur = LOAD(&t->high);

	while (cur < want &&
	       !__atomic_compare_exchange_n(&t->high, &cur, want, true,
					    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		;
}

/* The writer's side of the identity seqlock: seq goes odd before the
 * identity's plain stores and even after them.  The release fence keeps
 * those stores from becoming visible before the odd seq (weakly ordered
 * CPUs); the final release store keeps them before the even one. */
static void seq_begin(struct fd_slot *s)
{
	__atomic_store_n(&s->seq, s->seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
}

static void seq_end(struct fd_slot *s)
{
	STORE(&s->seq, s->seq + 1);
}

/* The counters, read as they are (the ticker's samples)... */
static void load_counters(const struct fd_hot *h, struct fd_counters *out)
{
	const uint64_t *src = (const uint64_t *)h;
	uint64_t *dst = (uint64_t *)out;
	size_t i;

	for (i = 0; i < FD_COUNTERS_WORDS; i++)
		dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
}

/* ...or moved out, each written to *out and then swapped with zero (a
 * retirement: see fdtab.h; *bound: fdtab_retire_into's, or NULL). */
static void take_counters(struct fd_hot *h, struct fd_counters *out,
			  uint32_t *bound)
{
	uint64_t *src = (uint64_t *)h;
	uint64_t *dst = (uint64_t *)out;
	size_t i;

	/* A word read as 0 is left alone: taking it would have read 0 and
	 * written 0, and an increment landing after the load is one that
	 * would have landed after the take.  Most words of a connection
	 * (error classes, size buckets) stay 0, and a locked instruction
	 * costs ~20 cycles each: 60 of them were most of a close's own CPU
	 * (docs/performance.md#churn).  Four words are read at a time
	 * first, and a group read as all 0 is left alone as each of its
	 * words would be: a size histogram is mostly such groups.
	 *
	 * A word is written where it goes before it leaves the slot (a
	 * compare-and-swap to 0 of the value written, again with the new
	 * value when a data call added meanwhile): a process killed at any
	 * instruction has each word in the slot, in *out or, for the one
	 * being moved, the same value in both, never in neither.  With *out
	 * in the state file (a close's ring entry, fdtab_retire_into) its
	 * recovery counts every word once (fdtab_rescue): *bound says how
	 * far the move got (2 + the last word moved), since a data call of
	 * another thread may still add to a word moved already (the slot is
	 * busy, and counts): such a word is the sum of the two. */
	_Static_assert(FD_COUNTERS_WORDS % 4 == 0, "groups of four words");
	for (i = 0; i < FD_COUNTERS_WORDS; i += 4) {
		size_t j;

		if (!(__atomic_load_n(&src[i], __ATOMIC_ACQUIRE) |
		      __atomic_load_n(&src[i + 1], __ATOMIC_ACQUIRE) |
		      __atomic_load_n(&src[i + 2], __ATOMIC_ACQUIRE) |
		      __atomic_load_n(&src[i + 3], __ATOMIC_ACQUIRE))) {
			dst[i] = dst[i + 1] = dst[i + 2] = dst[i + 3] = 0;
			continue;
		}
		for (j = i; j < i + 4; j++) {
			uint64_t v = __atomic_load_n(&src[j], __ATOMIC_ACQUIRE);

			if (!v) {
				dst[j] = 0;
				continue;
			}
			do
				__atomic_store_n(&dst[j], v, __ATOMIC_RELAXED);
			while (!__atomic_compare_exchange_n(&src[j], &v, 0, false,
							    __ATOMIC_ACQ_REL,
							    __ATOMIC_ACQUIRE));
			if (bound)
				__atomic_store_n(bound, (uint32_t)j + 2,
						 __ATOMIC_RELAXED);
		}
	}
}

/*
 * The identity (generation, open time, addresses, unix paths) is written
 * by a slot's owner between seq_begin and seq_end and read optimistically
 * by fdtab_snapshot, which throws a torn copy away.  Both sides use relaxed
 * atomics, a word (or a byte) at a time: a torn copy is then a value the
 * reader discards, never a data race, and ThreadSanitizer needs no
 * suppression for it.
 */
static void id_load(void *dst, const void *src, size_t n)
{
	const uint32_t *s32 = src;
	uint32_t *d32 = dst;
	size_t i;

	for (i = 0; i < n / sizeof(uint32_t); i++)
		d32[i] = __atomic_load_n(&s32[i], __ATOMIC_RELAXED);
}

static void id_store(void *dst, const void *src, size_t n)
{
	const uint32_t *s32 = src;
	uint32_t *d32 = dst;
	size_t i;

	for (i = 0; i < n / sizeof(uint32_t); i++)
		__atomic_store_n(&d32[i], s32[i], __ATOMIC_RELAXED);
}

static void id_load_bytes(void *dst, const void *src, size_t n)
{
	const uint8_t *s8 = src;
	uint8_t *d8 = dst;
	size_t i;

	for (i = 0; i < n; i++)
		d8[i] = __atomic_load_n(&s8[i], __ATOMIC_RELAXED);
}

static void id_store_bytes(void *dst, const void *src, size_t n)
{
	const uint8_t *s8 = src;
	uint8_t *d8 = dst;
	size_t i;

	for (i = 0; i < n; i++)
		__atomic_store_n(&d8[i], s8[i], __ATOMIC_RELAXED);
}

_Static_assert(sizeof(union fd_slot_addr) % sizeof(uint32_t) == 0 &&
		       _Alignof(union fd_slot_addr) >= _Alignof(uint32_t),
	       "a slot address is copied as 32-bit words");

#define PATH_MAX_LEN sizeof(((struct sockaddr_un *)0)->sun_path)

/* Slot form -> API form; which is 0 (local) or 1 (peer). */
static void load_addr(const struct fdtab *t, int fd, unsigned which,
		      const union fd_slot_addr *slot_addr, struct fd_addr *out)
{
	const struct fd_unix_paths *up = &t->unix_paths[fd];
	union fd_slot_addr copy, *a = &copy;
	uint8_t n;

	id_load(a, slot_addr, sizeof(*a));
	memset(out, 0, sizeof(*out));
	switch (a->family) {
	case AF_INET:
		out->u.in4 = a->in4;
		out->len = sizeof(a->in4);
		break;
	case AF_INET6:
		out->u.in6 = a->in6;
		out->len = sizeof(a->in6);
		break;
	case AF_UNIX:
		id_load_bytes(&n, &up->len[which], 1);
		if (n > PATH_MAX_LEN)
			n = 0;
		out->u.un.sun_family = AF_UNIX;
		id_load_bytes(out->u.un.sun_path, up->path[which], n);
		out->len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);
		break;
	case 0:
		break;
	default:
		out->u.sa.sa_family = a->family;
		out->len = sizeof(sa_family_t);
		break;
	}
}

/* API form -> slot form (NULL or len 0: unknown). */
static void store_addr(struct fdtab *t, int fd, unsigned which,
		       union fd_slot_addr *slot_addr, const struct fd_addr *src)
{
	size_t base = offsetof(struct sockaddr_un, sun_path);
	union fd_slot_addr copy, *dst = &copy;

	memset(dst, 0, sizeof(*dst));
	if (!src || src->len < sizeof(sa_family_t) || src->len > sizeof(src->u))
		goto out;
	dst->family = src->u.sa.sa_family;
	if (dst->family == AF_INET && src->len >= sizeof(dst->in4)) {
		dst->in4 = src->u.in4;
	} else if (dst->family == AF_INET6 && src->len >= sizeof(dst->in6)) {
		dst->in6 = src->u.in6;
	} else if (dst->family == AF_UNIX) {
		struct fd_unix_paths *up = &t->unix_paths[fd];
		size_t n = src->len > base ? src->len - base : 0;
		uint8_t len;

		if (n > PATH_MAX_LEN)
			n = PATH_MAX_LEN;
		len = (uint8_t)n;
		id_store_bytes(up->path[which], src->u.un.sun_path, n);
		id_store_bytes(&up->len[which], &len, 1);
	} else if (dst->family == AF_INET || dst->family == AF_INET6) {
		dst->family = 0; /* truncated: unknown */
	}
out:
	id_store(slot_addr, dst, sizeof(*dst));
}

static void copy_identity(const struct fdtab *t, const struct fd_slot *s,
			  int fd, struct fd_snapshot *out, enum fd_kind kind)
{
	out->fd = fd;
	out->kind = kind;
	out->gen = __atomic_load_n(&s->gen, __ATOMIC_RELAXED);
	out->opened_ns = __atomic_load_n(&s->opened_ns, __ATOMIC_RELAXED);
	out->shared = __atomic_load_n(&s->shared, __ATOMIC_RELAXED);
	out->close_on_exec = __atomic_load_n(&s->cloexec, __ATOMIC_RELAXED);
	load_addr(t, fd, 0, &s->local, &out->local);
	load_addr(t, fd, 1, &s->peer, &out->peer);
	memset(&out->ti, 0, sizeof(out->ti));
}

/* Unknown address: what a retired slot keeps. */
static void clear_addr(union fd_slot_addr *a)
{
	static const union fd_slot_addr none;

	id_store(a, &none, sizeof(none));
}

/* A slot's retirement: one generation on, no identity.  The owner is the
 * only writer: its own plain read of gen is no race; the stores are
 * atomic for fdtab_snapshot's sake. */
static void forget_identity(struct fd_slot *s)
{
	__atomic_store_n(&s->gen, s->gen + 1, __ATOMIC_RELAXED);
	__atomic_store_n(&s->opened_ns, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&s->shared, 0, __ATOMIC_RELAXED);
	clear_addr(&s->local);
	clear_addr(&s->peer);
}

/* Caller owns the slot (busy, holding old); old is the kind it replaced. */
static int retire_owned(struct fdtab *t, struct fd_slot *s, int fd,
			enum fd_kind old, struct fd_snapshot *out,
			uint32_t *bound)
{
	int tracked = fd_kind_tracked(old);

	if (tracked) {
		/* Which slot the counts come from, before any leaves it
		 * (fdtab_retire_into).  Release: every store before is
		 * seen first, and the first word's compare-and-swap
		 * (acq_rel) comes after. */
		if (bound) {
			out->fd = fd;
			out->kind = old;
			out->gen = __atomic_load_n(&s->gen, __ATOMIC_RELAXED);
			__atomic_store_n(bound, 1, __ATOMIC_RELEASE);
		}
		/* The connection is on its way out of the slot: a kill from
		 * here leaves it to the bound entry's rescue, or (out on a
		 * stack) what is left of it, and what data calls add, to the
		 * strays: no slot says a kind it no longer holds whole
		 * (fdtab_unbusy).  And so a busy slot that holds a kind with
		 * an odd sequence is one whose address is being written. */
		STORE(&s->kind, KIND_BUSY_FLAG | KIND_UNKNOWN);
	}
	seq_begin(s);
	if (tracked) {
		copy_identity(t, s, fd, out, old);
		/* A claimed place says already whether its close was seen
		 * (and a kill here must not change it); ours, not yet. */
		if (!bound)
			out->unseen = false;
		take_counters(&s->c, &out->c, bound);
	}
	forget_identity(s);
	seq_end(s);
	return tracked;
}

/*
 * The slot this thread owns, if any.  A signal handler whose thread it
 * interrupted half-way through a lifecycle call on the same slot sees it
 * here and gives up at once: that owner cannot go on before the handler
 * returns.  initial-exec: no allocation on first use, signal-safe.
 */
static __thread struct fd_slot *owned_here
	__attribute__((tls_model("initial-exec")));

/* How long a lifecycle call waits for another thread's: a few stores
 * normally; the bound only matters when that thread is descheduled or
 * stopped in a handler of its own. */
#define OWN_SPINS 4096
#define OWN_YIELDS 64

/*
 * Take exclusive ownership of a slot: returns the kind it held, with
 * *prev what this thread owned before (handed back by release()).  When it
 * cannot (see fdtab.h), returns KIND_BUSY having marked the slot for
 * fdtab_reap.
 */
static enum fd_kind own_slot(struct fd_slot *s, struct fd_slot **prev)
{
	uint8_t old = LOAD(&s->kind);
	unsigned waited = 0;

	for (;;) {
		if (fd_kind_busy(old)) {
			if (owned_here == s || waited++ >= OWN_SPINS + OWN_YIELDS) {
				STORE(&s->recheck, 1);
				return KIND_BUSY;
			}
			if (waited > OWN_SPINS)
				sched_yield();
			old = LOAD(&s->kind);
			continue;
		}
		/* Busy, saying the kind it holds (fd_kind_held). */
		if (__atomic_compare_exchange_n(&s->kind, &old,
						KIND_BUSY_FLAG | old, false,
						__ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE)) {
			*prev = owned_here;
			owned_here = s;
			return (enum fd_kind)old;
		}
	}
}

/* End the ownership: the slot takes kind. */
static void release(struct fd_slot *s, enum fd_kind kind, struct fd_slot *prev)
{
	STORE(&s->kind, (uint8_t)kind);
	owned_here = prev;
}

/* Caller owns the slot: write its new identity (the kind is written by
 * release()). */
static void publish(struct fdtab *t, struct fd_slot *s, int fd,
		    uint64_t opened_ns, const struct fd_addr *local,
		    const struct fd_addr *peer)
{
	seq_begin(s);
	__atomic_store_n(&s->cloexec, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&s->opened_ns, opened_ns, __ATOMIC_RELAXED);
	store_addr(t, fd, 0, &s->local, local);
	store_addr(t, fd, 1, &s->peer, peer);
	seq_end(s);
}

/* Before a store into slot fd that will say kind: see struct fdtab. */
static void back_for(struct fdtab *t, int fd, enum fd_kind kind)
{
	if (!fd_kind_tracked(kind) && t->back_untracked)
		t->back_untracked(t->back_ctx, (uint32_t)fd);
	else if (t->back)
		t->back(t->back_ctx, (uint32_t)fd);
}

int fdtab_open(struct fdtab *t, int fd, enum fd_kind kind, uint64_t now_ns,
	       const struct fd_addr *local, const struct fd_addr *peer,
	       struct fd_snapshot *stale)
{
	return fdtab_open_into(t, fd, kind, now_ns, local, peer, stale, NULL);
}

int fdtab_open_into(struct fdtab *t, int fd, enum fd_kind kind,
		    uint64_t now_ns, const struct fd_addr *local,
		    const struct fd_addr *peer, struct fd_snapshot *stale,
		    uint32_t *bound)
{
	struct fd_slot *s = fdtab_slot(t, fd), *prev;
	enum fd_kind old;
	int had;

	if (!s)
		return 0;
	/* Unknown over unknown: nothing to retire, nothing to record (and
	 * no busy slot above high for a fork to miss). */
	if (kind == KIND_UNKNOWN && LOAD(&s->kind) == KIND_UNKNOWN)
		return 0;
	/* The state file's page of this slot is backed before any store
	 * (a lifecycle call, never a data call, may make system calls). */
	back_for(t, fd, kind);
	/* Before the slot is taken, so that a fork landing while it is
	 * busy still finds it below high (fdtab_forget_all). */
	raise_high(t, fd);
	/* A new connection settles whatever a given-up call left to
	 * check: the connection it was about is retired here as stale. */
	STORE(&s->recheck, 0);
	old = own_slot(s, &prev);
	if (fd_kind_busy(old))
		return 0;
	had = retire_owned(t, s, fd, old, stale, bound);
	/* The new connection is the slot's from here: a kill in the middle
	 * of its identity leaves it open, its addresses unknown. */
	STORE(&s->kind, KIND_BUSY_FLAG | kind);
	publish(t, s, fd, now_ns, local, peer);
	release(s, kind, prev);
	return had;
}

void fdtab_mark_shared(struct fdtab *t, int fd)
{
	struct fd_slot *s = fdtab_slot(t, fd);

	if (s && fd_kind_tracked(fdtab_kind(s)) &&
	    !__atomic_load_n(&s->shared, __ATOMIC_RELAXED))
		__atomic_store_n(&s->shared, 1, __ATOMIC_RELAXED);
}

void fdtab_set_addrs(struct fdtab *t, int fd, const struct fd_addr *local,
		     const struct fd_addr *peer)
{
	struct fd_slot *s = fdtab_slot(t, fd), *prev;
	enum fd_kind old;

	if (!s || !fd_kind_tracked(fdtab_kind(s)))
		return;
	old = own_slot(s, &prev);
	if (fd_kind_busy(old))
		return;
	seq_begin(s);
	if (local)
		store_addr(t, fd, 0, &s->local, local);
	if (peer)
		store_addr(t, fd, 1, &s->peer, peer);
	seq_end(s);
	release(s, old, prev);
}

enum fd_kind fdtab_classify(struct fdtab *t, int fd, enum fd_kind kind,
			    const struct fd_addr *local,
			    const struct fd_addr *peer)
{
	struct fd_slot *s = fdtab_slot(t, fd), *prev = owned_here;
	uint8_t expect = KIND_UNKNOWN;

	if (!s)
		return KIND_UNTRACKED;
	back_for(t, fd, kind);
	raise_high(t, fd);
	/* Not metered: nothing to publish, and never busy, so that a data
	 * call of another thread on the same fd right now cannot count into
	 * it (a busy slot counts). */
	if (!fd_kind_tracked(kind)) {
		if (__atomic_compare_exchange_n(&s->kind, &expect, (uint8_t)kind,
						false, __ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE))
			return kind;
		return (enum fd_kind)expect;
	}
	if (!__atomic_compare_exchange_n(&s->kind, &expect,
					 KIND_BUSY_FLAG | kind, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return (enum fd_kind)expect;
	owned_here = s;
	/* What is on the fd now was just looked at: nothing left to check. */
	STORE(&s->recheck, 0);
	/* opened 0: inherited, we did not see it open */
	publish(t, s, fd, 0, local, peer);
	release(s, kind, prev);
	return kind;
}

/* Own s and retire what it holds (only at generation *gen, when gen is
 * given), leaving it unknown; a reap also settles the mark a given-up
 * call left.  As fdtab_retire_into returns. */
static int retire_slot(struct fdtab *t, struct fd_slot *s, int fd,
		       const uint32_t *gen, struct fd_snapshot *out,
		       uint32_t *bound, bool reap)
{
	struct fd_slot *prev;
	enum fd_kind old = own_slot(s, &prev);
	int had;

	if (fd_kind_busy(old))
		return 0;
	if (gen && __atomic_load_n(&s->gen, __ATOMIC_RELAXED) != *gen) {
		release(s, old, prev);
		return 0;
	}
	if (reap)
		STORE(&s->recheck, 0);
	had = retire_owned(t, s, fd, old, out, bound);
	release(s, KIND_UNKNOWN, prev);
	return had;
}

uint32_t fdtab_unbusy(struct fdtab *t)
{
	uint32_t fd, high = LOAD(&t->high), n = 0;

	fdtab_for_each_used(t, fd, 0, high) {
		struct fd_slot *s = &t->slots[fd];
		enum fd_kind held = fd_kind_held(s->kind);

		/* A give-up's mark is for the ticker of a live process
		 * (fdtab_reap, which retires the slot as a close at its
		 * own time): a dead one's slot is what it holds, open. */
		s->recheck = 0;
		if (!fd_kind_busy(s->kind))
			continue;
		/* An address the kill caught half-written: unknown. */
		if (s->seq & 1) {
			s->local.family = 0;
			s->peer.family = 0;
			s->seq++;
		}
		s->kind = fd_kind_tracked(held) ? held : KIND_UNKNOWN;
		n++;
	}
	return n;
}

int fdtab_retire(struct fdtab *t, int fd, struct fd_snapshot *out)
{
	return fdtab_retire_into(t, fd, NULL, out, NULL);
}

int fdtab_retire_into(struct fdtab *t, int fd, const uint32_t *gen,
		      struct fd_snapshot *out, uint32_t *bound)
{
	struct fd_slot *s = fdtab_slot(t, fd);

	if (!s || LOAD(&s->kind) == KIND_UNKNOWN)
		return 0;
	return retire_slot(t, s, fd, gen, out, bound, false);
}

int fdtab_rescue(struct fdtab *t, struct fd_snapshot *out, uint32_t bound)
{
	struct fd_slot *s = fdtab_slot(t, out->fd);
	uint64_t *src, *dst = (uint64_t *)&out->c;
	size_t i, moved = bound ? bound - 1 : 0;
	bool held = false;

	if (!s || s->gen != out->gen)
		return 0;
	/* Not bound: only a slot left busy at the generation the claim
	 * read, taken whole (out's counters are zero), under the kind the
	 * slot holds (the claim may have read it busy: held by another
	 * lifecycle call, an address being noted, that the close waited
	 * for), or else the kind read before the claim.  Busy at another
	 * generation (the connection was retired, and another opened,
	 * meanwhile), it is not this close's. */
	if (!bound) {
		if (!fd_kind_busy(s->kind))
			return 0;
		held = fd_kind_tracked(fd_kind_held(s->kind));
		if (held)
			out->kind = fd_kind_held(s->kind);
	}
	if (!fd_kind_tracked(out->kind))
		return 0;
	/* Killed in the middle: the identity is still the slot's (cleared
	 * only after the generation grows).  A word moved already is in
	 * out, and what data calls added to the slot since is the slot's:
	 * the sum.  The word being moved, and those after it, are in one of
	 * the two, or in both alike (take_counters): the larger. */
	copy_identity(t, s, out->fd, out, out->kind);
	/* An address another call was writing when the kill came (a slot
	 * that holds a kind, at an odd sequence: retire_owned): unknown,
	 * not half of one.  Else the identity is whole: a retire writes it
	 * only after the generation grows. */
	if (held && (s->seq & 1)) {
		out->local.len = 0;
		out->peer.len = 0;
	}
	src = (uint64_t *)&s->c;
	for (i = 0; i < FD_COUNTERS_WORDS; i++) {
		if (i < moved)
			dst[i] += src[i];
		else if (src[i] > dst[i])
			dst[i] = src[i];
		src[i] = 0;
	}
	forget_identity(s);
	s->seq += s->seq & 1;
	s->kind = KIND_UNKNOWN;
	return 1;
}

int fdtab_reap(struct fdtab *t, int fd, struct fd_snapshot *out)
{
	return fdtab_reap_into(t, fd, out, NULL);
}

int fdtab_reap_into(struct fdtab *t, int fd, struct fd_snapshot *out,
		    uint32_t *bound)
{
	struct fd_slot *s = fdtab_slot(t, fd);

	if (!s || !LOAD(&s->recheck))
		return 0;
	return retire_slot(t, s, fd, NULL, out, bound, true);
}

int fdtab_sweep(struct fdtab *t, int fd, struct fd_counters *out)
{
	struct fd_slot *s = fdtab_slot(t, fd);
	uint64_t *w, *o = (uint64_t *)out, any = 0;
	uint32_t gen;
	uint8_t kind;
	size_t i;

	if (!s)
		return 0;
	kind = LOAD(&s->kind);
	if (kind != KIND_UNKNOWN && kind != KIND_UNTRACKED)
		return 0;
	w = (uint64_t *)&s->c;
	for (i = 0; i < FD_COUNTERS_WORDS; i++)
		any |= __atomic_load_n(&w[i], __ATOMIC_RELAXED);
	if (!any)
		return 0;
	/*
	 * Not owned (a slot taken by a lifecycle call is busy, and a
	 * data call counts into a busy slot: an untracked fd's calls would
	 * have landed there meanwhile).  Taken word by word, then checked:
	 * a slot opened (kind), or opened and retired (generation), while
	 * the words were taken may have given some of them to a new
	 * connection; they are handed back, where a reopen would have
	 * carried them anyway.
	 */
	gen = __atomic_load_n(&s->gen, __ATOMIC_ACQUIRE);
	take_counters(&s->c, out, NULL);
	if (LOAD(&s->kind) == kind &&
	    __atomic_load_n(&s->gen, __ATOMIC_ACQUIRE) == gen)
		return 1;
	for (i = 0; i < FD_COUNTERS_WORDS; i++)
		if (o[i])
			__atomic_fetch_add(&w[i], o[i], __ATOMIC_RELAXED);
	return 0;
}

int fdtab_retire_gen(struct fdtab *t, int fd, uint32_t gen,
		     struct fd_snapshot *out)
{
	return fdtab_retire_into(t, fd, &gen, out, NULL);
}

int fdtab_snapshot(const struct fdtab *t, int fd, struct fd_snapshot *out)
{
	const struct fd_slot *s = fdtab_slot(t, fd);
	uint32_t seq0, seq1;
	enum fd_kind kind;

	if (!s)
		return 0;
	kind = fdtab_kind(s);
	if (!fd_kind_tracked(kind))
		return 0;
	seq0 = LOAD(&s->seq);
	if (seq0 & 1)
		return 0;
	copy_identity(t, s, fd, out, kind);
	out->unseen = false;
	load_counters(&s->c, &out->c);
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	/* The kind before the sequence, not after: a reopen (fdtab_open)
	 * retires and publishes in two sections, and between them the slot
	 * holds a cleared identity at an even sequence number.  A copy made
	 * there whose second sequence read came just before the publish
	 * passed when the kind was read after the reopen had ended (seen
	 * once in check_fdtab's racing test, under load).  A kind read as the
	 * same again means the reopen's release came before: its sequence
	 * numbers are then seen. */
	if (LOAD(&s->kind) != kind)
		return 0;
	seq1 = LOAD(&s->seq);
	return seq0 == seq1;
}

uint32_t fdtab_note_exec(struct fdtab *t, int (*getfd)(int fd))
{
	uint32_t fd, high = LOAD(&t->high), n = 0;

	fdtab_for_each_used(t, fd, 0, high) {
		struct fd_slot *s = &t->slots[fd];
		int flags;
		uint8_t mark;

		if (!fd_kind_tracked(fdtab_kind(s)))
			continue;
		flags = getfd((int)fd);
		mark = flags >= 0 && (flags & FD_CLOEXEC);
		__atomic_store_n(&s->cloexec, mark, __ATOMIC_RELAXED);
		n += mark;
	}
	return n;
}

void fdtab_forget_all(struct fdtab *t)
{
	uint32_t fd, high = LOAD(&t->high);

	for (fd = 0; fd < high; fd++) {
		struct fd_slot *s = &t->slots[fd];

		if (s->kind == KIND_UNKNOWN && !(s->seq & 1) && !s->recheck)
			continue;
		memset(&s->c, 0, sizeof(s->c));
		s->gen++;
		/* A writer of the parent caught mid-way by the fork left seq
		 * odd: no snapshot of this slot would ever succeed. */
		s->seq &= ~1u;
		s->recheck = 0;
		s->opened_ns = 0;
		s->local.family = 0;
		s->peer.family = 0;
		s->kind = KIND_UNKNOWN;
	}
}

void fd_derive_calls(struct fd_counters *c)
{
	unsigned d, i;

	for (d = 0; d < DIR_COUNT; d++) {
		c->calls[d] = 0;
		for (i = 0; i < ERR_COUNT; i++)
			c->calls[d] += c->errors[d][i];
		for (i = 0; i < SIZE_BUCKETS; i++)
			c->calls[d] += c->sizes[d][i];
	}
}

/* (restrict: the compiler adds two words at a time; no caller adds a
 * struct to itself.) */
void fd_counters_add(struct fd_counters *restrict a,
		     const struct fd_counters *restrict b)
{
	uint64_t *restrict dst = (uint64_t *)a;
	const uint64_t *restrict src = (const uint64_t *)b;
	size_t i;

	for (i = 0; i < FD_COUNTERS_WORDS; i++)
		dst[i] += src[i];
}

const char *fd_kind_name(enum fd_kind k)
{
	static const char *const names[KIND_COUNT] = {
		[KIND_TCP] = "tcp",	     [KIND_UDP] = "udp",
		[KIND_UNIX_STREAM] = "unix", [KIND_UNIX_DGRAM] = "unix_dgram",
		[KIND_OTHER_SOCKET] = "socket", [KIND_PIPE] = "pipe",
		[KIND_FILE] = "file",	     [KIND_TTY] = "tty",
	};

	if ((unsigned)k < KIND_COUNT && names[k])
		return names[k];
	return "unknown";
}
