/*
 * fdtab.c - the per-fd slot table: mapping, lifecycle and snapshots.
 * The hot-path counting itself is inline in fdtab.h.
 */
#include "fdtab.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>

#define LOAD(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)

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
	r = fdtab_init_at(t, p, cap);
	if (r) {
		munmap(p, (size_t)cap * sizeof(struct fd_slot));
		t->slots = NULL;
		return r;
	}
	t->own_slots = true;
	return 0;
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
	t->unix_paths = p;
	t->cap = cap;
	return 0;
}

void fdtab_destroy(struct fdtab *t)
{
	if (t->slots && t->own_slots)
		munmap(t->slots, (size_t)t->cap * sizeof(struct fd_slot));
	if (t->unix_paths)
		munmap(t->unix_paths,
		       (size_t)t->cap * sizeof(struct fd_unix_paths));
	memset(t, 0, sizeof(*t));
}

static void raise_high(struct fdtab *t, int fd)
{
	uint32_t want = (uint32_t)fd + 1;
	uint32_t cur = LOAD(&t->high);

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

/* Widen n counters into dst; with take, each is exchanged with zero. */
static void move64(uint64_t *src, uint64_t *dst, size_t n, bool take)
{
	size_t i;

	for (i = 0; i < n; i++)
		dst[i] = take ? __atomic_exchange_n(&src[i], 0, __ATOMIC_ACQ_REL)
			      : __atomic_load_n(&src[i], __ATOMIC_RELAXED);
}

static void move32(uint32_t *src, uint64_t *dst, size_t n, bool take)
{
	size_t i;

	for (i = 0; i < n; i++)
		dst[i] = take ? __atomic_exchange_n(&src[i], 0, __ATOMIC_ACQ_REL)
			      : __atomic_load_n(&src[i], __ATOMIC_RELAXED);
}

/* Read (or, with take, move out leaving zeros: see header) every counter. */
static void read_counters(const struct fd_slot *s, struct fd_counters *out,
			  bool take)
{
	struct fd_hot *h = (struct fd_hot *)&s->c;

	move64(h->bytes, out->bytes, DIR_COUNT, take);
	move64(h->calls, out->calls, DIR_COUNT, take);
	move64(h->latency, out->latency_ns, DIR_COUNT, take);
	move32(&h->errors[0][0], &out->errors[0][0], DIR_COUNT * ERR_COUNT,
	       take);
	move32(&h->sizes[0][0], &out->sizes[0][0], DIR_COUNT * SIZE_BUCKETS,
	       take);
}

#define PATH_MAX_LEN sizeof(((struct sockaddr_un *)0)->sun_path)

/* Slot form -> API form; which is 0 (local) or 1 (peer). */
static void load_addr(const struct fdtab *t, int fd, unsigned which,
		      const union fd_slot_addr *a, struct fd_addr *out)
{
	const struct fd_unix_paths *up = &t->unix_paths[fd];
	size_t n;

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
		n = up->len[which] <= PATH_MAX_LEN ? up->len[which] : 0;
		out->u.un.sun_family = AF_UNIX;
		memcpy(out->u.un.sun_path, up->path[which], n);
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
		       union fd_slot_addr *dst, const struct fd_addr *src)
{
	size_t base = offsetof(struct sockaddr_un, sun_path);

	memset(dst, 0, sizeof(*dst));
	if (!src || src->len < sizeof(sa_family_t) || src->len > sizeof(src->u))
		return;
	dst->family = src->u.sa.sa_family;
	if (dst->family == AF_INET && src->len >= sizeof(dst->in4)) {
		dst->in4 = src->u.in4;
	} else if (dst->family == AF_INET6 && src->len >= sizeof(dst->in6)) {
		dst->in6 = src->u.in6;
	} else if (dst->family == AF_UNIX) {
		struct fd_unix_paths *up = &t->unix_paths[fd];
		size_t n = src->len > base ? src->len - base : 0;

		if (n > PATH_MAX_LEN)
			n = PATH_MAX_LEN;
		memcpy(up->path[which], src->u.un.sun_path, n);
		up->len[which] = (uint8_t)n;
	} else if (dst->family == AF_INET || dst->family == AF_INET6) {
		dst->family = 0; /* truncated: unknown */
	}
}

static void copy_identity(const struct fdtab *t, const struct fd_slot *s,
			  int fd, struct fd_snapshot *out, enum fd_kind kind)
{
	out->fd = fd;
	out->kind = kind;
	out->gen = s->gen;
	out->opened_ns = s->opened_ns;
	out->unseen = false;
	load_addr(t, fd, 0, &s->local, &out->local);
	load_addr(t, fd, 1, &s->peer, &out->peer);
	memset(&out->ti, 0, sizeof(out->ti));
}

/* Caller owns the slot (kind is KIND_BUSY); old is the kind it replaced. */
static int retire_owned(struct fdtab *t, struct fd_slot *s, int fd,
			enum fd_kind old, struct fd_snapshot *out)
{
	int tracked = old >= KIND_FIRST_TRACKED && old != KIND_BUSY;

	seq_begin(s);
	if (tracked) {
		copy_identity(t, s, fd, out, old);
		read_counters(s, &out->c, true);
	}
	s->gen++;
	s->opened_ns = 0;
	s->local.family = 0;
	s->peer.family = 0;
	seq_end(s);
	return tracked;
}

/* Take exclusive ownership of a slot: returns the kind it held. */
static enum fd_kind own_slot(struct fd_slot *s)
{
	uint8_t old = LOAD(&s->kind);

	for (;;) {
		if (old == KIND_BUSY) {
			/* Another lifecycle call on the same fd number is
			 * mid-way (a racing program); it is short, wait. */
			old = LOAD(&s->kind);
			continue;
		}
		if (__atomic_compare_exchange_n(&s->kind, &old, KIND_BUSY,
						false, __ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE))
			return (enum fd_kind)old;
	}
}

/* Caller owns the slot: write its new identity, then hand it over with its
 * kind (which ends the ownership). */
static void publish(struct fdtab *t, struct fd_slot *s, int fd,
		    enum fd_kind kind, uint64_t opened_ns,
		    const struct fd_addr *local, const struct fd_addr *peer)
{
	seq_begin(s);
	s->opened_ns = opened_ns;
	store_addr(t, fd, 0, &s->local, local);
	store_addr(t, fd, 1, &s->peer, peer);
	seq_end(s);
	if (kind != KIND_UNKNOWN)
		raise_high(t, fd);
	STORE(&s->kind, (uint8_t)kind);
}

int fdtab_open(struct fdtab *t, int fd, enum fd_kind kind, uint64_t now_ns,
	       const struct fd_addr *local, const struct fd_addr *peer,
	       struct fd_snapshot *stale)
{
	struct fd_slot *s = fdtab_slot(t, fd);
	enum fd_kind old;
	int had;

	if (!s)
		return 0;
	if (t->back)
		t->back(t->back_ctx, (uint32_t)fd);
	old = own_slot(s);
	had = retire_owned(t, s, fd, old, stale);
	publish(t, s, fd, kind, now_ns, local, peer);
	return had;
}

void fdtab_set_addrs(struct fdtab *t, int fd, const struct fd_addr *local,
		     const struct fd_addr *peer)
{
	struct fd_slot *s = fdtab_slot(t, fd);
	enum fd_kind old;

	if (!s || fdtab_kind(s) < KIND_FIRST_TRACKED)
		return;
	old = own_slot(s);
	seq_begin(s);
	if (local)
		store_addr(t, fd, 0, &s->local, local);
	if (peer)
		store_addr(t, fd, 1, &s->peer, peer);
	seq_end(s);
	STORE(&s->kind, (uint8_t)old);
}

enum fd_kind fdtab_classify(struct fdtab *t, int fd, enum fd_kind kind,
			    const struct fd_addr *local,
			    const struct fd_addr *peer)
{
	struct fd_slot *s = fdtab_slot(t, fd);
	uint8_t expect = KIND_UNKNOWN;

	if (!s)
		return KIND_UNTRACKED;
	if (t->back)
		t->back(t->back_ctx, (uint32_t)fd);
	if (!__atomic_compare_exchange_n(&s->kind, &expect, KIND_BUSY, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return (enum fd_kind)expect;
	/* opened 0: inherited, we did not see it open */
	publish(t, s, fd, kind, 0, local, peer);
	return kind;
}

int fdtab_retire(struct fdtab *t, int fd, struct fd_snapshot *out)
{
	struct fd_slot *s = fdtab_slot(t, fd);
	enum fd_kind old;
	int had;

	if (!s || LOAD(&s->kind) == KIND_UNKNOWN)
		return 0;
	old = own_slot(s);
	had = retire_owned(t, s, fd, old, out);
	STORE(&s->kind, (uint8_t)KIND_UNKNOWN);
	return had;
}

int fdtab_retire_gen(struct fdtab *t, int fd, uint32_t gen,
		     struct fd_snapshot *out)
{
	struct fd_slot *s = fdtab_slot(t, fd);
	enum fd_kind old;
	int had;

	if (!s || LOAD(&s->kind) == KIND_UNKNOWN)
		return 0;
	old = own_slot(s);
	if (s->gen != gen) {
		STORE(&s->kind, (uint8_t)old);
		return 0;
	}
	had = retire_owned(t, s, fd, old, out);
	STORE(&s->kind, (uint8_t)KIND_UNKNOWN);
	return had;
}

int fdtab_snapshot(const struct fdtab *t, int fd, struct fd_snapshot *out)
{
	const struct fd_slot *s = fdtab_slot(t, fd);
	uint32_t seq0, seq1;
	enum fd_kind kind;

	if (!s)
		return 0;
	kind = fdtab_kind(s);
	if (kind < KIND_FIRST_TRACKED || kind == KIND_BUSY)
		return 0;
	seq0 = LOAD(&s->seq);
	if (seq0 & 1)
		return 0;
	copy_identity(t, s, fd, out, kind);
	read_counters(s, &out->c, false);
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	seq1 = LOAD(&s->seq);
	return seq0 == seq1 && LOAD(&s->kind) == kind;
}

/* Move 2^31 from *v to *carry if *v reached it; a CAS, so a concurrent
 * retirement (which exchanges *v with zero) is never undone. */
static int fold_one(uint32_t *v, uint64_t *carry)
{
	uint32_t cur = __atomic_load_n(v, __ATOMIC_RELAXED);

	while (cur >= (1u << 31)) {
		if (__atomic_compare_exchange_n(v, &cur, cur - (1u << 31), true,
						__ATOMIC_ACQ_REL,
						__ATOMIC_RELAXED)) {
			*carry += 1u << 31;
			return 1;
		}
	}
	return 0;
}

int fdtab_fold(struct fdtab *t, int fd, uint32_t gen,
	       struct fd_counters *carry)
{
	struct fd_slot *s = fdtab_slot(t, fd);
	int moved = 0;
	unsigned d, i;

	if (!s || LOAD(&s->gen) != gen)
		return 0;
	for (d = 0; d < DIR_COUNT; d++) {
		for (i = 0; i < ERR_COUNT; i++)
			moved |= fold_one(&s->c.errors[d][i],
					  &carry->errors[d][i]);
		for (i = 0; i < SIZE_BUCKETS; i++)
			moved |= fold_one(&s->c.sizes[d][i],
					  &carry->sizes[d][i]);
	}
	return moved;
}

void fdtab_forget_all(struct fdtab *t)
{
	uint32_t fd, high = LOAD(&t->high);

	for (fd = 0; fd < high; fd++) {
		struct fd_slot *s = &t->slots[fd];

		if (s->kind == KIND_UNKNOWN)
			continue;
		memset(&s->c, 0, sizeof(s->c));
		s->gen++;
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

void fd_counters_add(struct fd_counters *a, const struct fd_counters *b)
{
	uint64_t *dst = (uint64_t *)a;
	const uint64_t *src = (const uint64_t *)b;
	size_t i;

	for (i = 0; i < sizeof(*a) / sizeof(uint64_t); i++)
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
