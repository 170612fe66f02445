/*
 * ownmem.c - memory a fork child does not get (contract in ownmem.h).
 */
#include "ownmem.h"
#include "quiet.h"
#include "rawsys.h"

#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#define CHUNK_MIN (64 * 1024)
#define CHUNK_MAX (4 * 1024 * 1024)
#define ALIGN 16

struct chunk_head {
	struct chunk_head *prev;
	size_t size;
};

/* The header takes a whole aligned unit, so allocations stay aligned. */
#define HEAD_BYTES ((sizeof(struct chunk_head) + ALIGN - 1) / ALIGN * ALIGN)

/* A new chunk for at least need bytes: as big as all before it (so their
 * number grows with the log of the total), within CHUNK_MIN..CHUNK_MAX. */
static int new_chunk(struct ownmem *o, size_t need)
{
	size_t size = o->total < CHUNK_MIN ? CHUNK_MIN : o->total;
	struct chunk_head *h;
	void *p;

	if (size > CHUNK_MAX)
		size = CHUNK_MAX;
	if (size < need + HEAD_BYTES)
		size = (need + HEAD_BYTES + CHUNK_MIN - 1) / CHUNK_MIN *
		       CHUNK_MIN;
	p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -1;
	/* Without it (a kernel before 4.14) the memory still works; forks
	 * then copy it, as they would malloc's.  Not under a filter that
	 * binds this thread (quiet.h): memory through mmap and munmap only
	 * (Firefox's sandboxes trap the rest), and a fork child there runs
	 * unmetered anyway. */
	if (!sm_quiet())
		madvise(p, size, MADV_WIPEONFORK);
	h = p;
	h->prev = o->chunks;
	h->size = size;
	o->chunks = h;
	o->size = size;
	o->used = HEAD_BYTES;
	o->total += size;
	return 0;
}

void *ownmem_alloc(struct ownmem *o, size_t bytes)
{
	void *p;

	if (bytes == 0 || bytes > SIZE_MAX / 2)
		return NULL;
	bytes = (bytes + ALIGN - 1) / ALIGN * ALIGN;
	if ((!o->chunks || o->size - o->used < bytes) &&
	    new_chunk(o, bytes) != 0)
		return NULL;
	p = (char *)o->chunks + o->used;
	o->used += bytes;
	return p;
}

void ownmem_free(struct ownmem *o)
{
	struct chunk_head *h = o->chunks;

	while (h) {
		struct chunk_head *prev = h->prev;

		munmap(h, h->size);
		h = prev;
	}
	ownmem_forget(o);
}

SM_FORK_PATH
void ownmem_forget(struct ownmem *o)
{
	memset(o, 0, sizeof(*o));
}
