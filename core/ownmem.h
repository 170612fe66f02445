/*
 * ownmem.h - memory a process keeps to itself: a fork child gets it as
 * zeroes.  Allocations come from mappings marked MADV_WIPEONFORK, so a
 * fork of the host neither copies their page tables nor write-protects
 * their pages (each later write by the parent would be a fault).  Not
 * MADV_DONTFORK: a child made by a raw clone() (no fork handlers) that
 * still reads the parent's pointers finds zeroes, not a fault.  Nothing
 * is freed alone: all of it goes at once (ownmem_free), or, in a fork
 * child, is dropped (ownmem_forget).
 */
#ifndef SOCKMETER_OWNMEM_H
#define SOCKMETER_OWNMEM_H

#include <stddef.h>

struct ownmem {
	void *chunks;  /* newest chunk; each begins with a link to the last */
	size_t used;   /* bytes used of the newest chunk */
	size_t size;   /* bytes of the newest chunk */
	size_t total;  /* bytes of all chunks */
};

/*
 * ownmem_alloc - bytes of zeroed memory, 16-byte aligned, or NULL when
 * memory runs out.  Valid until ownmem_free, or a fork (in the child).
 * Context: the caller serializes (the ticker's lock).
 */
void *ownmem_alloc(struct ownmem *o, size_t bytes);

/* ownmem_free - unmap everything o gave.  Context: as ownmem_alloc. */
void ownmem_free(struct ownmem *o);

/* ownmem_forget - empty, unmapping nothing: in a fork child, where the
 * parent's chunks hold zeroes (they stay mapped, untouched: no memory).
 * Context: fork child. */
void ownmem_forget(struct ownmem *o);

#endif
