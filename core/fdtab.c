/*
 * fdtab.c - the per-fd slot table: mapping, lifecycle and snapshots.
 * The hot-path counting itself is inline in fdtab.h.
 */
#include "fdtab.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#define LOAD(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)

int fdtab_init(struct fdtab *t, uint32_t cap)
{
	void *p;

	if (cap > FDTAB_MAX_CAP)
		cap = FDTAB_MAX_CAP;
	t->slots = NULL;
	t->cap = 0;
	t->high = 0;
	if (cap == 0)
		return -EINVAL;
	/* NORESERVE: untouched pages stay unbacked, so capacity is free. */
	p = mmap(NULL, (size_t)cap * sizeof(struct fd_slot),
		 PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return -errno;
	t->slots = p;
	t->cap = cap;
	return 0;
}

void fdtab_destroy(struct fdtab *t)
{
	if (t->slots)
		munmap(t->slots, (size_t)t->cap * sizeof(struct fd_slot));
	t->slots = NULL;
	t->cap = 0;
	t->high = 0;
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

/* Move every counter of s into out, leaving zeros (see header). */
static void take_counters(struct fd_slot *s, struct fd_counters *out)
{
	uint64_t *src = (uint64_t *)&s->c;
	uint64_t *dst = (uint64_t *)out;
	size_t i;

	for (i = 0; i < sizeof(s->c) / sizeof(uint64_t); i++)
		dst[i] = __atomic_exchange_n(&src[i], 0, __ATOMIC_ACQ_REL);
}

static void copy_identity(const struct fd_slot *s, int fd,
			  struct fd_snapshot *out, enum fd_kind kind)
{
	out->fd = fd;
	out->kind = kind;
	out->gen = s->gen;
	out->opened_ns = s->opened_ns;
	out->local = s->local;
	out->peer = s->peer;
}

/* Caller owns the slot (kind is KIND_BUSY); old is the kind it replaced. */
static int retire_owned(struct fd_slot *s, int fd, enum fd_kind old,
			struct fd_snapshot *out)
{
	int tracked = old >= KIND_FIRST_TRACKED && old != KIND_BUSY;

	STORE(&s->seq, s->seq + 1);
	if (tracked) {
		copy_identity(s, fd, out, old);
		take_counters(s, &out->c);
	}
	s->gen++;
	s->opened_ns = 0;
	s->local.len = 0;
	s->peer.len = 0;
	STORE(&s->seq, s->seq + 1);
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

static void set_addr(struct fd_addr *dst, const struct fd_addr *src)
{
	if (src && src->len > 0 && src->len <= sizeof(dst->u))
		*dst = *src;
	else
		dst->len = 0;
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
	old = own_slot(s);
	had = retire_owned(s, fd, old, stale);
	STORE(&s->seq, s->seq + 1);
	s->opened_ns = now_ns;
	set_addr(&s->local, local);
	set_addr(&s->peer, peer);
	STORE(&s->seq, s->seq + 1);
	if (kind != KIND_UNKNOWN)
		raise_high(t, fd);
	STORE(&s->kind, (uint8_t)kind);
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
	STORE(&s->seq, s->seq + 1);
	if (local)
		set_addr(&s->local, local);
	if (peer)
		set_addr(&s->peer, peer);
	STORE(&s->seq, s->seq + 1);
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
	if (!__atomic_compare_exchange_n(&s->kind, &expect, KIND_BUSY, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return (enum fd_kind)expect;
	STORE(&s->seq, s->seq + 1);
	s->opened_ns = 0; /* inherited: we did not see it open */
	set_addr(&s->local, local);
	set_addr(&s->peer, peer);
	STORE(&s->seq, s->seq + 1);
	if (kind != KIND_UNKNOWN)
		raise_high(t, fd);
	STORE(&s->kind, (uint8_t)kind);
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
	had = retire_owned(s, fd, old, out);
	STORE(&s->kind, (uint8_t)KIND_UNKNOWN);
	return had;
}

int fdtab_snapshot(const struct fdtab *t, int fd, struct fd_snapshot *out)
{
	const struct fd_slot *s = fdtab_slot(t, fd);
	uint32_t seq0, seq1;
	enum fd_kind kind;
	size_t i;
	const uint64_t *src;
	uint64_t *dst;

	if (!s)
		return 0;
	kind = fdtab_kind(s);
	if (kind < KIND_FIRST_TRACKED || kind == KIND_BUSY)
		return 0;
	seq0 = LOAD(&s->seq);
	if (seq0 & 1)
		return 0;
	copy_identity(s, fd, out, kind);
	src = (const uint64_t *)&s->c;
	dst = (uint64_t *)&out->c;
	for (i = 0; i < sizeof(s->c) / sizeof(uint64_t); i++)
		dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	seq1 = LOAD(&s->seq);
	return seq0 == seq1 && LOAD(&s->kind) == kind;
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
		s->local.len = 0;
		s->peer.len = 0;
		s->kind = KIND_UNKNOWN;
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
