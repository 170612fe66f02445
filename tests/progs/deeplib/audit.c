/*
 * audit.c - an rtld auditor (LD_AUDIT) for t_deepbind: counts the symbol
 * bindings the loader makes (la_symbind64) from deeplib's libraries to
 * send, recv, write and connect, and prints audit_binds=N on stderr at
 * exit.  A lazily bound deep library's first calls bind through the
 * loader, which tells the auditor: the preload must leave them to it.
 */
#define _GNU_SOURCE
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static int binds;

unsigned int la_version(unsigned int v)
{
	return v < LAV_CURRENT ? v : LAV_CURRENT;
}

unsigned int la_objopen(struct link_map *map, Lmid_t lmid, uintptr_t *cookie)
{
	(void)lmid;
	*cookie = (uintptr_t)(map->l_name && strstr(map->l_name, "libsmdeep"));
	return LA_FLG_BINDTO | LA_FLG_BINDFROM;
}

uintptr_t la_symbind64(Elf64_Sym *sym, unsigned int ndx, uintptr_t *refcook,
		       uintptr_t *defcook, unsigned int *flags,
		       const char *symname)
{
	(void)ndx;
	(void)defcook;
	(void)flags;
	if (*refcook && (!strcmp(symname, "send") || !strcmp(symname, "recv") ||
			 !strcmp(symname, "write") ||
			 !strcmp(symname, "connect")))
		binds++;
	return sym->st_value;
}

__attribute__((destructor)) static void done(void)
{
	fprintf(stderr, "audit_binds=%d\n", binds);
}
