/*
 * fdcheck.c - device and inode of every live fd, checked by the ticker
 * (contract in fdcheck.h).
 */
#include "fdcheck.h"

#include "progfd.h"
#include "quiet.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

int fdcheck_init(struct fdcheck *c, uint32_t cap)
{
	void *p = mmap(NULL, (size_t)cap * sizeof(*c->ids),
		       PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	c->ids = p == MAP_FAILED ? NULL : p;
	c->cap = c->ids ? cap : 0;
	/* A fork child gets zeroes (known 0: nothing remembered), which is
	 * what it needs: its fds are all new connections to it.  The parent
	 * keeps its pages out of every fork's page-table copy and
	 * copy-on-write faults (docs/performance.md#churn). */
	if (c->ids)
		madvise(p, (size_t)cap * sizeof(*c->ids), MADV_WIPEONFORK);
	c->on = false;
	return c->ids ? 0 : -ENOMEM;
}

void fdcheck_enable(struct fdcheck *c)
{
	c->on = c->ids != NULL;
}

void fdcheck_destroy(struct fdcheck *c)
{
	if (c->ids)
		munmap(c->ids, (size_t)c->cap * sizeof(*c->ids));
	c->ids = NULL;
	c->cap = 0;
}

#define LOAD(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define RELAXED(p) __atomic_load_n((p), __ATOMIC_RELAXED)

/* Write id (unless someone else is writing it right now). */
static void id_store(struct fdcheck_id *id, uint32_t gen,
		     const struct stat *st)
{
	uint32_t seq = LOAD(&id->seq);

	if ((seq & 1) ||
	    !__atomic_compare_exchange_n(&id->seq, &seq, seq + 1, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return;
	__atomic_store_n(&id->gen, gen, __ATOMIC_RELAXED);
	__atomic_store_n(&id->dev, (uint64_t)st->st_dev, __ATOMIC_RELAXED);
	__atomic_store_n(&id->ino, (uint64_t)st->st_ino, __ATOMIC_RELAXED);
	__atomic_store_n(&id->known, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&id->seq, seq + 2, __ATOMIC_RELEASE);
}

/* A consistent copy of id; false while it is being written. */
static bool id_load(const struct fdcheck_id *id, struct fdcheck_id *out)
{
	uint32_t seq = LOAD(&id->seq);

	if (seq & 1)
		return false;
	out->gen = RELAXED(&id->gen);
	out->dev = RELAXED(&id->dev);
	out->ino = RELAXED(&id->ino);
	out->known = RELAXED(&id->known);
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return LOAD(&id->seq) == seq;
}

void fdcheck_opened(struct fdcheck *c, const struct fdtab *t, int fd)
{
	const struct fd_slot *s = fdtab_slot(t, fd);
	struct stat st;

	if (!c->on || !s || (unsigned)fd >= c->cap || sm_quiet() ||
	    progfd_stat(fd, &st) != 0)
		return;
	id_store(&c->ids[fd], LOAD(&s->gen), &st);
}

/* Retire fd's connection of generation gen: its close was not seen. */
static uint32_t retire(struct fdtab *t, struct closeq *q, int fd,
		       uint32_t gen, uint64_t real_ns)
{
	struct fd_snapshot s;

	if (!fdtab_retire_gen(t, fd, gen, &s))
		return 0;
	s.unseen = true;
	closeq_push(q, &s, real_ns);
	return 1;
}

uint32_t fdcheck_run(struct fdcheck *c, struct fdtab *t, struct closeq *q,
		     uint64_t real_ns)
{
	uint32_t fd, high = __atomic_load_n(&t->high, __ATOMIC_ACQUIRE);
	uint32_t retired = 0;

	if (!c->on || sm_quiet())
		return 0;
	for (fd = 0; fd < high && fd < c->cap; fd++) {
		struct fdcheck_id *id = &c->ids[fd];
		struct fdcheck_id was;
		struct fd_snapshot snap;
		struct stat st;
		uint32_t gen;
		int r;

		if (!fdtab_snapshot(t, (int)fd, &snap))
			continue;
		gen = snap.gen;
		/* Should the slot change hands meanwhile, fdtab_retire_gen
		 * leaves the new connection alone. */
		r = progfd_stat((int)fd, &st);
		if (r == -EBADF) {
			retired += retire(t, q, (int)fd, gen, real_ns);
			continue;
		}
		if (r || !id_load(id, &was))
			continue; /* cannot tell now */
		if (!was.known || was.gen != gen) {
			id_store(id, gen, &st); /* first sight: inherited */
			continue;
		}
		if (was.dev == (uint64_t)st.st_dev &&
		    was.ino == (uint64_t)st.st_ino)
			continue;
		retired += retire(t, q, (int)fd, gen, real_ns);
	}
	return retired;
}
