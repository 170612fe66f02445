/*
 * elfnote.c - a note in a loaded ELF image (see elfnote.h).
 */
#include "elfnote.h"

#include <string.h>

bool elf_loaded(const ElfW(Phdr) *ph, size_t n, uintptr_t bias,
		uintptr_t addr, size_t len)
{
	size_t i;

	for (i = 0; i < n; i++) {
		uintptr_t lo = bias + ph[i].p_vaddr;

		if (ph[i].p_type == PT_LOAD && addr >= lo &&
		    len <= ph[i].p_filesz && addr - lo <= ph[i].p_filesz - len)
			return true;
	}
	return false;
}

static size_t align_up(size_t v, size_t a)
{
	return (v + a - 1) & ~(a - 1);
}

/* A note's name field (namesz bytes) names owner (olen bytes with its
 * NUL): Go's linker pads the name with NULs ("Go\0\0", namesz 4). */
static bool owner_is(const unsigned char *name, size_t namesz,
		     const char *owner, size_t olen)
{
	size_t i;

	if (namesz < olen || namesz > olen + 7 || memcmp(name, owner, olen))
		return false;
	for (i = olen; i < namesz; i++)
		if (name[i])
			return false;
	return true;
}

/* The notes of one segment: [p, p + len), entries aligned to al. */
static bool segment_has(const unsigned char *p, size_t len, size_t al,
			const char *owner, uint32_t type)
{
	size_t olen = strlen(owner) + 1, off = 0;

	while (len - off >= sizeof(ElfW(Nhdr))) {
		ElfW(Nhdr) h;
		size_t name, desc;

		memcpy(&h, p + off, sizeof(h));
		off += sizeof(h);
		name = align_up(h.n_namesz, al);
		desc = align_up(h.n_descsz, al);
		if (name < h.n_namesz || name > len - off ||
		    desc < h.n_descsz || desc > len - off - name)
			return false;
		if (h.n_type == type && owner_is(p + off, h.n_namesz, owner,
						 olen))
			return true;
		off += name + desc;
	}
	return false;
}

bool elf_has_note(const ElfW(Phdr) *phdr, size_t phnum, const char *owner,
		  uint32_t type)
{
	size_t i;

	if (!phdr || phnum == 0 || phnum > 4096)
		return false;
	for (i = 0; i < phnum; i++)
		if (phdr[i].p_type == PT_PHDR)
			return elf_has_note_at(phdr, phnum,
					       (uintptr_t)phdr - phdr[i].p_vaddr,
					       owner, type);
	return false;
}

bool elf_has_note_at(const ElfW(Phdr) *phdr, size_t phnum, uintptr_t bias,
		     const char *owner, uint32_t type)
{
	size_t i;

	if (!phdr || phnum == 0 || phnum > 4096)
		return false;
	for (i = 0; i < phnum; i++) {
		const ElfW(Phdr) *n = &phdr[i];
		size_t al = n->p_align == 8 ? 8 : 4;

		if (n->p_type != PT_NOTE || n->p_filesz == 0 ||
		    !elf_loaded(phdr, phnum, bias, bias + n->p_vaddr, n->p_filesz))
			continue;
		if (segment_has((const unsigned char *)(bias + n->p_vaddr),
				n->p_filesz, al, owner, type))
			return true;
	}
	return false;
}
