/*
 * elfnote.h - does a loaded ELF image carry a given note?
 *
 * The library cannot see a Go program's sockets: Go makes its system calls
 * itself, in assembly, not through libc (cgo code aside).  Such a program
 * is told apart by the note Go's linker puts in every binary (owner "Go",
 * type 4: the Go build ID), which lies in a loaded PT_NOTE segment, so the
 * program headers the kernel hands over (AT_PHDR, AT_PHNUM) lead to it
 * without opening the file.
 */
#ifndef SOCKMETER_ELFNOTE_H
#define SOCKMETER_ELFNOTE_H

#include <elf.h>
#include <link.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Go's linker: owner "Go" (its name field "Go\0\0"), type
 * ELF_NOTE_GOBUILDID_TAG. */
#define ELFNOTE_GO_OWNER "Go"
#define ELFNOTE_GO_BUILDID 4

/*
 * elf_has_note - true when the image whose program headers are at phdr
 * (phnum of them, as loaded: AT_PHDR) has a note of that owner and type in
 * one of its PT_NOTE segments.  The load bias comes from PT_PHDR; an image
 * without one is not looked into (false).  Only bytes inside the image's
 * PT_LOAD segments (their file part) are read, and every size in a note is
 * checked against its segment, so a malformed note gives false, never a
 * read out of bounds.  Context: any thread.
 */
bool elf_has_note(const ElfW(Phdr) *phdr, size_t phnum, const char *owner,
		  uint32_t type);

/*
 * elf_loaded - whether [addr, addr + len) lies inside the file part of one
 * of the image's PT_LOAD segments (phdr, phnum as loaded, bias its load
 * bias).  Context: any thread.
 */
bool elf_loaded(const ElfW(Phdr) *ph, size_t n, uintptr_t bias,
		uintptr_t addr, size_t len);

/*
 * elf_has_note_at - the same for an image whose load bias is known (a
 * shared object, from dl_iterate_phdr: its dlpi_addr), PT_PHDR or not.
 */
bool elf_has_note_at(const ElfW(Phdr) *phdr, size_t phnum, uintptr_t bias,
		     const char *owner, uint32_t type);

#endif
