/*
 * wrap_dlopen.c - libraries loaded with dlopen(..., RTLD_DEEPBIND).
 *
 * RTLD_DEEPBIND puts a library's own dependencies, libc among them, ahead
 * of the global scope when its symbols are bound: its send() binds to
 * libc's, not to ours, and its traffic went unmetered without a word.  PHP
 * loads every extension this way (ext/curl with its libcurl, ext/sockets,
 * ext/pgsql with libpq...), in php-cli and php-fpm alike.
 *
 * So after such a dlopen, each object of its group (the library and its
 * dependencies, held loaded by the handle: deep_dlopen) has its
 * relocations read (JUMP_SLOT, GLOB_DAT, and absolute words with no
 * addend), and every slot that names a function this library wraps, and
 * that the deep binding filled with exactly the function our wrapper
 * forwards to, gets the wrapper instead: what the global scope would have
 * bound it to.  Nothing else changes: a symbol the library defines itself,
 * or finds in one of its own dependencies other than libc, keeps its
 * binding (deep binding is there for that); a read-only (RELRO) page is
 * made writable for the store and read-only again, under a lock, since two
 * threads may load the same library; a slot outside the writable segments
 * (a text relocation) is left alone, and said.
 *
 * The caller of dlopen matters to the loader: its RPATH/RUNPATH (and the
 * RPATH of the objects that loaded it) for a bare name, its directory for
 * $ORIGIN in the name.  A plain dlopen (and a deep one whose caller's
 * identity could change what is loaded: a bare name from a caller whose
 * search path differs from this library's, a name with a '$') is a tail
 * call to libc's, which then sees the program's own caller.  Such a deep
 * one is said once, since its library goes unmetered.
 *
 * x86-64 and AArch64 (the relocation types are per architecture); other
 * architectures load deep-bound libraries as before, unmetered, and say so.
 *
 * dlmopen into a namespace of its own cannot be helped (see there): said.
 */
#include "preload.h"
#include "warn.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

typedef void *(*dlopen_fn)(const char *, int);
typedef void *(*dlmopen_fn)(Lmid_t, const char *, int);

/* Before the binding (a constructor that runs before ours): bind, then
 * forward.  The wrapper itself binds first, so this only serves a call
 * that comes some other way. */
void *unbound_dlopen(const char *file, int mode)
{
	if (sm_bind() && sm_real.dlopen != unbound_dlopen)
		return sm_real.dlopen(file, mode);
	return NULL;
}

void *unbound_dlmopen(Lmid_t lmid, const char *file, int mode)
{
	if (sm_bind() && sm_real.dlmopen != unbound_dlmopen)
		return sm_real.dlmopen(lmid, file, mode);
	return NULL;
}

#if defined(__x86_64__) && defined(__LP64__)
#define SM_R_JUMP_SLOT R_X86_64_JUMP_SLOT
#define SM_R_GLOB_DAT R_X86_64_GLOB_DAT
#define SM_R_ABS R_X86_64_64
#elif defined(__aarch64__)
#define SM_R_JUMP_SLOT R_AARCH64_JUMP_SLOT
#define SM_R_GLOB_DAT R_AARCH64_GLOB_DAT
#define SM_R_ABS R_AARCH64_ABS64
#endif

/* One warning per process and kind (deep: 0, namespace: 1). */
static void say_once(int kind, const char *what, const char *file)
{
	static int said[2];
	char msg[512];

	if (__atomic_exchange_n(&said[kind], 1, __ATOMIC_RELAXED))
		return;
	snprintf(msg, sizeof(msg), "sockmeter: %s: %.200s, loaded %s: its "
				   "calls are not metered",
		 sm_meter.prog, file ? file : "(null)", what);
	sm_warn(msg);
}

/* The stores' spin lock (patch_object), in the ticker's shared page,
 * which a fork child gets as zeroes (a fork by another thread may find it
 * taken). */
#define store_lock (*sm_dl_lock())

#ifdef SM_R_JUMP_SLOT

/* The directories the loader searches for a bare name from the object
 * lm (its RPATHs and its loaders', LD_LIBRARY_PATH, its RUNPATH, the
 * system's), as dlinfo(RTLD_DI_SERINFO) gives them: malloc'ed (no lock of
 * ours is held across the loader's calls), or NULL. */
static Dl_serinfo *search_path(void *lm)
{
	Dl_serinfo size, *si;

	if (dlinfo(lm, RTLD_DI_SERINFOSIZE, &size) ||
	    size.dls_size < sizeof(size) || !(si = malloc(size.dls_size)))
		return NULL;
	si->dls_size = size.dls_size;
	si->dls_cnt = size.dls_cnt;
	if (dlinfo(lm, RTLD_DI_SERINFO, si)) {
		free(si);
		return NULL;
	}
	return si;
}

/* Drops a directory listed before: the count left. */
static unsigned dedup(Dl_serinfo *si)
{
	unsigned i, j, n = 0;

	for (i = 0; i < si->dls_cnt; i++) {
		for (j = 0; j < n; j++)
			if (!strcmp(si->dls_serpath[j].dls_name,
				    si->dls_serpath[i].dls_name))
				break;
		if (j == n)
			si->dls_serpath[n++] = si->dls_serpath[i];
	}
	return n;
}

/* Whether a bare name from the object at ret (dlopen's caller) could be
 * found elsewhere than from this library: their search paths differ (a
 * DT_RPATH is inherited from the objects that loaded the caller, not only
 * its own); true when unknown. */
static bool caller_has_own_path(const void *ret)
{
	struct link_map *lm = NULL, *own = NULL;
	Dl_serinfo *x, *y;
	Dl_info info;
	bool differ = true;
	unsigned i;

	if (!dladdr1(ret, &info, (void **)&lm, RTLD_DL_LINKMAP) || !lm ||
	    !dladdr1((const void *)caller_has_own_path, &info, (void **)&own,
		     RTLD_DL_LINKMAP) || !own)
		return true;
	if (lm == own)
		return false;
	x = search_path(lm);
	y = search_path(own);
	if (x && y) {
		/* A directory searched twice is searched once (the
		 * executable's DT_RPATH, in ours twice: as our loader's and
		 * as the executable's). */
		unsigned nx = dedup(x), ny = dedup(y);

		differ = nx != ny;
		for (i = 0; i < nx && !differ; i++)
			differ = strcmp(x->dls_serpath[i].dls_name,
					y->dls_serpath[i].dls_name) != 0;
	}
	free(x);
	free(y);
	return differ;
}

/*
 * Whether a deep dlopen of file, called from ret, can go through here:
 * the loader would take this library for the caller, so only names whose
 * resolution does not depend on the caller (a path without '$', or a bare
 * name when the caller has no library path of its own) may.
 */
static bool deep_patchable(const char *file, const void *ret)
{
	if (!file || !sm_meter.tab.cap)
		return false;
	if (strchr(file, '$')) {
		say_once(0, "with RTLD_DEEPBIND, named relative to its caller",
			 file);
		return false;
	}
	if (!strchr(file, '/') && caller_has_own_path(ret)) {
		say_once(0,
			 "with RTLD_DEEPBIND by a caller with a library path "
			 "of its own",
			 file);
		return false;
	}
	return true;
}

/* One object of the deep group, held loaded by the dlopen's handle: its
 * program headers, found by its address and name (both unique among the
 * loaded objects while it stays loaded). */
struct deep_obj {
	ElfW(Addr) addr;
	const char *name;
	const ElfW(Phdr) * phdr;
	ElfW(Half) phnum;
};

static int find_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct deep_obj *o = data;

	(void)size;
	if (info->dlpi_addr != o->addr || info->dlpi_name != o->name)
		return 0;
	o->phdr = info->dlpi_phdr;
	o->phnum = info->dlpi_phnum;
	return 1;
}

/* This library's own span of addresses, to tell our definitions. */
static bool ours(const void *p)
{
	static const void *base;
	Dl_info a, b;

	if (!base && dladdr((const void *)ours, &a))
		base = a.dli_fbase;
	return p && dladdr(p, &b) && b.dli_fbase == base;
}

static ElfW(Addr) dyn_ptr(ElfW(Addr) v, ElfW(Addr) addr)
{
	/* glibc relocates .dynamic's pointers in place where the section
	 * is writable (x86-64, AArch64): tell an offset from an address. */
	return v < addr ? v + addr : v;
}

/* This library's GNU hash table: a name it does not define is told in a
 * few instructions (a PHP start-up has some 10,000 slots to look at:
 * with three dlsym calls for each, it took 50 ms longer).  Found once;
 * without one, every name goes to dlsym. */
static struct {
	int state; /* 0 not looked for, 1 found, 2 none */
	const uint32_t *ht;
	const ElfW(Sym) * symtab;
	const char *strtab;
} own;

static void own_find(void)
{
	struct link_map *lm = NULL;
	const ElfW(Dyn) *d;
	Dl_info info;

	if (!dladdr1((const void *)own_find, &info, (void **)&lm,
		     RTLD_DL_LINKMAP) ||
	    !lm)
		goto none;
	for (d = lm->l_ld; d->d_tag != DT_NULL; d++) {
		ElfW(Addr) v = dyn_ptr(d->d_un.d_ptr, lm->l_addr);

		if (d->d_tag == DT_GNU_HASH)
			own.ht = (const uint32_t *)v;
		else if (d->d_tag == DT_SYMTAB)
			own.symtab = (const ElfW(Sym) *)v;
		else if (d->d_tag == DT_STRTAB)
			own.strtab = (const char *)v;
	}
	if (own.ht && own.symtab && own.strtab) {
		__atomic_store_n(&own.state, 1, __ATOMIC_RELEASE);
		return;
	}
none:
	__atomic_store_n(&own.state, 2, __ATOMIC_RELEASE);
}

/* Whether this library defines name: its index in our symbol table, -1
 * when surely not, -2 when it cannot be told (no GNU hash table). */
static long own_index(const char *name)
{
	const unsigned bits = sizeof(ElfW(Addr)) * 8;
	const ElfW(Addr) *bloom;
	const uint32_t *buckets, *chain;
	uint32_t nbuckets, symoffset, bloom_size, shift, h = 5381, ix;
	ElfW(Addr) word, mask;
	const unsigned char *c;

	if (!__atomic_load_n(&own.state, __ATOMIC_ACQUIRE))
		own_find();
	if (__atomic_load_n(&own.state, __ATOMIC_ACQUIRE) != 1)
		return -2;
	for (c = (const unsigned char *)name; *c; c++)
		h = h * 33 + *c;
	nbuckets = own.ht[0];
	symoffset = own.ht[1];
	bloom_size = own.ht[2];
	shift = own.ht[3];
	if (!nbuckets || !bloom_size)
		return -2;
	bloom = (const ElfW(Addr) *)(const void *)&own.ht[4];
	buckets = (const uint32_t *)(const void *)&bloom[bloom_size];
	chain = &buckets[nbuckets];
	word = bloom[(h / bits) % bloom_size];
	mask = ((ElfW(Addr))1 << (h % bits)) |
	       ((ElfW(Addr))1 << ((h >> shift) % bits));
	if ((word & mask) != mask)
		return -1;
	ix = buckets[h % nbuckets];
	if (ix < symoffset)
		return -1;
	for (;; ix++) {
		uint32_t h2 = chain[ix - symoffset];

		if ((h | 1) == (h2 | 1) &&
		    strcmp(name, own.strtab + own.symtab[ix].st_name) == 0)
			return own.symtab[ix].st_shndx != SHN_UNDEF ? (long)ix
								      : -1;
		if (h2 & 1)
			return -1;
	}
}

/* What our wrapper of name forwards to: sm_real's entry (bound), or for
 * a wrapper that forwards through another function (printf), the next
 * definition.  No dlsym that can fail: its error would be the one the
 * program's next dlerror() returned, after a dlopen that succeeded. */
static const struct real_name {
	const char *name;
	const void *entry; /* &sm_real.NAME */
	const void *unbound;
} real_names[] = {
#define X(n, ret, args) {#n, &sm_real.n, (const void *)unbound_##n},
	SM_REAL_FUNCS(X)
#undef X
};

static void *real_next(const char *name)
{
	size_t i;
	void *p;

	for (i = 0; i < sizeof(real_names) / sizeof(real_names[0]); i++) {
		if (strcmp(real_names[i].name, name) != 0)
			continue;
		memcpy(&p, real_names[i].entry, sizeof(p));
		if (p == real_names[i].unbound && sm_bind())
			memcpy(&p, real_names[i].entry, sizeof(p));
		return p == real_names[i].unbound ? NULL : p;
	}
	return dlsym(RTLD_NEXT, name);
}

/*
 * What a slot naming one of our symbols gets, and what it must hold to
 * get it: our wrapper when the global scope binds the name to it, and
 * what the wrapper forwards to.  Worked out once per name (two lookups in
 * every loaded object: milliseconds for libcurl's twenty dependencies
 * otherwise), by our symbol index; the global scope's first definitions
 * (the program's, the preloads') do not change as libraries load.
 */
#define OWN_CACHE 1024
static struct own_pair {
	void *wrapper, *next;
	uint8_t state; /* 0 not known yet, 1 known */
} own_cache[OWN_CACHE];

/* The pair for name (its index ix, or -2); false when a slot naming it is
 * left alone. */
static bool own_pair(const char *name, long ix, void **wrapper, void **next)
{
	struct own_pair *c = ix >= 0 && ix < OWN_CACHE ? &own_cache[ix] : NULL;
	void *w, *n;

	if (c && __atomic_load_n(&c->state, __ATOMIC_ACQUIRE)) {
		*wrapper = c->wrapper;
		*next = c->next;
		return *wrapper != NULL;
	}
	w = dlsym(RTLD_DEFAULT, name);
	n = ours(w) ? real_next(name) : NULL;
	if (!n || n == w)
		w = n = NULL;
	if (c) {
		c->wrapper = w;
		c->next = n;
		__atomic_store_n(&c->state, 1, __ATOMIC_RELEASE);
	}
	*wrapper = w;
	*next = n;
	return w != NULL;
}

struct relro {
	uintptr_t lo, hi; /* the pages glibc made read-only */
	bool open;	  /* made writable by us, to be closed */
	bool failed;
};

static bool slot_writable(struct relro *r, uintptr_t slot)
{
	if (slot < r->lo || slot >= r->hi || r->open)
		return true;
	if (r->failed)
		return false;
	if (mprotect((void *)r->lo, r->hi - r->lo, PROT_READ | PROT_WRITE)) {
		r->failed = true;
		return false;
	}
	r->open = true;
	return true;
}

/* Whether an auditor (LD_AUDIT, or the program's DT_AUDIT) may be
 * watching the loader's PLT trampolines: the environment the program
 * started with, looked at once. */
static bool audited(void)
{
	static int known; /* 0 unknown, 1 no, 2 yes */
	int k = __atomic_load_n(&known, __ATOMIC_RELAXED);

	if (!k) {
		const char *a = getenv("LD_AUDIT");
		struct link_map *main_map = NULL;
		const ElfW(Dyn) *d;

		k = a && *a ? 2 : 1;
		main_map = _r_debug.r_map;
		for (d = main_map ? main_map->l_ld : NULL; d && d->d_tag != DT_NULL;
		     d++)
			if (d->d_tag == DT_AUDIT || d->d_tag == DT_DEPAUDIT)
				k = 2;
		__atomic_store_n(&known, k, __ATOMIC_RELAXED);
	}
	return k == 2;
}

/* A lazy slot was left to an auditor (said once by deep_dlopen). */
static int audit_left;

/* A slot to be given its wrapper, if it still holds what it held. */
struct cand {
	void **slot;
	void *was, *wrapper;
};

struct cands {
	size_t n, cap;
	struct cand *c;
	bool lost; /* one could not be kept (no memory, a read-only page) */
};

/* The writable PT_LOAD segments of an object: a slot outside them (a text
 * relocation, DT_TEXTREL) is in a page glibc made read-only again. */
#define MAX_W 8
struct wsegs {
	unsigned n;
	uintptr_t lo[MAX_W], hi[MAX_W];
};

static bool in_wseg(const struct wsegs *w, uintptr_t p)
{
	unsigned i;

	for (i = 0; i < w->n; i++)
		if (p >= w->lo[i] && p + sizeof(void *) <= w->hi[i])
			return true;
	return false;
}

/* The slots of one relocation table of the object loaded at addr that
 * get a wrapper, added to c.  Loader calls (dlsym, dladdr) only: no lock
 * of ours is held, since a constructor's deep dlopen holds the loader's
 * while it waits for ours. */
static void scan_table(const ElfW(Rela) * rel, size_t n, ElfW(Addr) addr,
		       const ElfW(Sym) * symtab, const char *strtab,
		       size_t strsz, void *handle, const struct wsegs *ws,
		       struct cands *c)
{
	size_t i;

	for (i = 0; i < n; i++) {
		unsigned long type = ELF64_R_TYPE(rel[i].r_info);
		unsigned long si = ELF64_R_SYM(rel[i].r_info);
		void **slot = (void **)(addr + rel[i].r_offset);
		const ElfW(Sym) *sym;
		const char *name;
		void *wrapper, *next, *now;
		long ix;

		if (type != SM_R_JUMP_SLOT && type != SM_R_GLOB_DAT &&
		    !(type == SM_R_ABS && rel[i].r_addend == 0))
			continue;
		if (!si)
			continue;
		sym = &symtab[si];
		if (sym->st_shndx != SHN_UNDEF || sym->st_name >= strsz)
			continue;
		name = strtab + sym->st_name;
		ix = own_index(name);
		if (ix == -1 || !own_pair(name, ix, &wrapper, &next))
			continue;
		now = __atomic_load_n(slot, __ATOMIC_RELAXED);
		if (now == wrapper)
			continue;
		/* Not filled with next: only a lazy slot (its PLT stub) may
		 * still be bound to it, unless an auditor (LD_AUDIT) watches
		 * the loader's trampoline, whose la_pltenter and la_symbind
		 * may see or redirect the call: bound here, they never ran. */
		if (now != next) {
			if (type != SM_R_JUMP_SLOT)
				continue;
			if (audited()) {
				__atomic_store_n(&audit_left, 1,
						 __ATOMIC_RELAXED);
				continue;
			}
			if (dlsym(handle, name) != next)
				continue;
		}
		if (!in_wseg(ws, (uintptr_t)slot)) {
			c->lost = true;
			continue;
		}
		if (c->n == c->cap) {
			size_t cap = c->cap ? 2 * c->cap : 64;
			struct cand *p = realloc(c->c, cap * sizeof(*p));

			if (!p) {
				c->lost = true;
				return;
			}
			c->c = p;
			c->cap = cap;
		}
		c->c[c->n].slot = slot;
		c->c[c->n].was = now;
		c->c[c->n].wrapper = wrapper;
		c->n++;
	}
}

/* store_lock serializes the stores and the read-only pages' opening and
 * closing: two deep dlopens may both take an object for one of theirs.
 * Held for no loader call (a constructor's deep dlopen holds the loader's
 * lock while it waits for ours). */

/* Give one loaded object's slots the wrappers; false if a read-only page
 * could not be opened. */
static bool patch_object(const struct deep_obj *o, void *handle)
{
	const ElfW(Dyn) *dyn = NULL;
	const ElfW(Sym) *symtab = NULL;
	const char *strtab = NULL;
	const ElfW(Rela) *rela = NULL, *jmprel = NULL;
	size_t strsz = 0, relasz = 0, pltsz = 0;
	long pltrel = DT_RELA;
	long page = sysconf(_SC_PAGESIZE);
	struct relro relro = {0, 0, false, false};
	struct wsegs ws = {0, {0}, {0}};
	struct cands c = {0, 0, NULL, false};
	bool ok = true;
	ElfW(Half) i;
	size_t k;

	for (i = 0; i < o->phnum; i++) {
		const ElfW(Phdr) *p = &o->phdr[i];

		if (p->p_type == PT_LOAD && (p->p_flags & PF_W) &&
		    ws.n < MAX_W) {
			ws.lo[ws.n] = o->addr + p->p_vaddr;
			ws.hi[ws.n] = o->addr + p->p_vaddr + p->p_memsz;
			ws.n++;
		}
		if (p->p_type == PT_DYNAMIC)
			dyn = (const ElfW(Dyn) *)(o->addr + p->p_vaddr);
		if (p->p_type == PT_GNU_RELRO && page > 0) {
			relro.lo = (o->addr + p->p_vaddr) & ~(uintptr_t)(page - 1);
			relro.hi = (o->addr + p->p_vaddr + p->p_memsz) &
				   ~(uintptr_t)(page - 1);
		}
	}
	if (!dyn || !o->addr)
		return true; /* the executable, the vdso: not loaded here */
	for (; dyn->d_tag != DT_NULL; dyn++) {
		ElfW(Addr) v = dyn->d_un.d_ptr;

		switch (dyn->d_tag) {
		case DT_SYMTAB:
			symtab = (const ElfW(Sym) *)dyn_ptr(v, o->addr);
			break;
		case DT_STRTAB:
			strtab = (const char *)dyn_ptr(v, o->addr);
			break;
		case DT_STRSZ:
			strsz = dyn->d_un.d_val;
			break;
		case DT_RELA:
			rela = (const ElfW(Rela) *)dyn_ptr(v, o->addr);
			break;
		case DT_RELASZ:
			relasz = dyn->d_un.d_val;
			break;
		case DT_JMPREL:
			jmprel = (const ElfW(Rela) *)dyn_ptr(v, o->addr);
			break;
		case DT_PLTRELSZ:
			pltsz = dyn->d_un.d_val;
			break;
		case DT_PLTREL:
			pltrel = (long)dyn->d_un.d_val;
			break;
		}
	}
	if (!symtab || !strtab)
		return true;
	if (rela)
		scan_table(rela, relasz / sizeof(*rela), o->addr, symtab,
			   strtab, strsz, handle, &ws, &c);
	if (jmprel && pltrel == DT_RELA)
		scan_table(jmprel, pltsz / sizeof(*jmprel), o->addr, symtab,
			   strtab, strsz, handle, &ws, &c);
	if (c.lost)
		ok = false;
	if (!c.n)
		goto out;
	while (__atomic_exchange_n(&store_lock, 1, __ATOMIC_ACQUIRE))
		sched_yield();
	for (k = 0; k < c.n; k++) {
		if (__atomic_load_n(c.c[k].slot, __ATOMIC_RELAXED) != c.c[k].was)
			continue;
		if (!slot_writable(&relro, (uintptr_t)c.c[k].slot)) {
			ok = false;
			continue;
		}
		__atomic_store_n(c.c[k].slot, c.c[k].wrapper, __ATOMIC_RELAXED);
	}
	if (relro.open)
		mprotect((void *)relro.lo, relro.hi - relro.lo, PROT_READ);
	__atomic_store_n(&store_lock, 0, __ATOMIC_RELEASE);
out:
	free(c.c);
	return ok;
}

/*
 * The objects a deep dlopen bound deep: the one it returned and its
 * dependencies, all of them (DT_NEEDED, transitively), each found by its
 * soname with a NOLOAD dlopen.  The handle holds all of them loaded, so no
 * other thread's dlclose can unmap one while its slots are read, and which
 * of them this very call loaded does not matter: one loaded before by an
 * ordinary dlopen has its slots bound to the wrappers already (or, lazy,
 * binds them there), one loaded deep before was given them then.  Found
 * from the object list instead, a library unloaded and loaded again at the
 * same address by other threads between two looks was taken for an old
 * one and left unmetered.
 */
#define DEEP_MAX 256
struct deep_group {
	size_t n;
	struct link_map *lm[DEEP_MAX];
	void *pin[DEEP_MAX]; /* the NOLOAD handles, closed after */
};

static bool group_has(const struct deep_group *g, const struct link_map *lm)
{
	size_t i;

	for (i = 0; i < g->n; i++)
		if (g->lm[i] == lm)
			return true;
	return false;
}

static void group_walk(struct deep_group *g, dlopen_fn pin_open)
{
	size_t at;

	for (at = 0; at < g->n; at++) {
		const struct link_map *lm = g->lm[at];
		const ElfW(Dyn) *d;
		const char *strtab = NULL;

		if (!lm->l_ld)
			continue;
		for (d = lm->l_ld; d->d_tag != DT_NULL; d++)
			if (d->d_tag == DT_STRTAB)
				strtab = (const char *)dyn_ptr(d->d_un.d_ptr,
							       lm->l_addr);
		if (!strtab)
			continue;
		for (d = lm->l_ld; d->d_tag != DT_NULL && g->n < DEEP_MAX;
		     d++) {
			struct link_map *dep = NULL;
			void *pin;

			if (d->d_tag != DT_NEEDED)
				continue;
			pin = pin_open(strtab + d->d_un.d_val,
				       RTLD_LAZY | RTLD_NOLOAD);
			if (!pin)
				continue;
			if (dlinfo(pin, RTLD_DI_LINKMAP, &dep) || !dep ||
			    group_has(g, dep)) {
				dlclose(pin);
				continue;
			}
			g->pin[g->n] = pin;
			g->lm[g->n++] = dep;
		}
	}
}

/* The deep dlopen itself: the objects of its group get their slots.
 * Context: any thread. */
__attribute__((noinline)) static void *deep_dlopen(dlopen_fn real,
						   const char *file, int mode,
						   Lmid_t lmid)
{
	struct deep_group *g;
	dlopen_fn pin_open = __atomic_load_n(&sm_real.dlopen, __ATOMIC_ACQUIRE);
	const void *libc_base = NULL;
	struct link_map *top = NULL;
	bool ok = true;
	Dl_info info;
	size_t i;
	void *h;
	int saved;

	h = real ? real(file, mode) : sm_real.dlmopen(lmid, file, mode);
	if (!h)
		return NULL;
	saved = errno;
	g = malloc(sizeof(*g));
	if (!g || dlinfo(h, RTLD_DI_LINKMAP, &top) || !top) {
		free(g);
		say_once(0, "with RTLD_DEEPBIND, and its objects could not be "
			    "listed", file);
		errno = saved;
		return h;
	}
	g->n = 1;
	g->lm[0] = top;
	g->pin[0] = NULL; /* held by h */
	group_walk(g, pin_open);
	if (g->n == DEEP_MAX)
		ok = false;
	/* libc is never given anything (its slots are not ours to bind):
	 * not even read. */
	if (dladdr((const void *)sm_real.close, &info))
		libc_base = info.dli_fbase;
	for (i = 0; i < g->n; i++) {
		struct deep_obj o = {g->lm[i]->l_addr, g->lm[i]->l_name, NULL, 0};

		if (o.addr && (const void *)o.addr != libc_base) {
			dl_iterate_phdr(find_cb, &o);
			if (o.phdr && !patch_object(&o, h))
				ok = false;
		}
		if (g->pin[i])
			dlclose(g->pin[i]);
	}
	free(g);
	if (!ok)
		say_once(0,
			 "with RTLD_DEEPBIND, and some of its slots could "
			 "not be written",
			 file);
	else if (__atomic_load_n(&audit_left, __ATOMIC_RELAXED))
		say_once(0,
			 "with RTLD_DEEPBIND and lazy binding under an auditor "
			 "(LD_AUDIT), whose trampolines its unbound calls keep",
			 file);
	errno = saved;
	return h;
}

#endif /* SM_R_JUMP_SLOT */

/*
 * The wrapper: a plain dlopen, and a deep one that cannot come through
 * here, are a tail call to libc's (which then sees the program's caller);
 * musttail or the optimizer's sibling call, which -O0 would not make.
 */
#if defined(__clang__) && defined(__has_attribute)
#if __has_attribute(musttail)
#define SM_MUSTTAIL __attribute__((musttail))
#endif
#endif
#ifndef SM_MUSTTAIL
#define SM_MUSTTAIL
#endif
/* ThreadSanitizer's function exit hook comes after the call: no tail call
 * (a TSan build's every dlopen would have this library for its caller). */
#if defined(__SANITIZE_THREAD__)
#define SM_NO_TSAN __attribute__((no_sanitize_thread))
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SM_NO_TSAN __attribute__((no_sanitize("thread")))
#endif
#endif
#ifndef SM_NO_TSAN
#define SM_NO_TSAN
#endif

SM_EXPORT SM_NO_TSAN
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("O2", "optimize-sibling-calls")))
#endif
void *dlopen(const char *file, int mode)
{
	dlopen_fn real = __atomic_load_n(&sm_real.dlopen, __ATOMIC_ACQUIRE);

	/* The stub would call libc's from here, and the loader would take
	 * this library for the caller: bind first, so that the call below
	 * is libc's own. */
	if (SM_UNLIKELY(real == unbound_dlopen)) {
		sm_bind();
		real = __atomic_load_n(&sm_real.dlopen, __ATOMIC_ACQUIRE);
	}
#ifdef SM_R_JUMP_SLOT
	if (SM_UNLIKELY(mode & RTLD_DEEPBIND) &&
	    deep_patchable(file, __builtin_return_address(0)))
		return deep_dlopen(real, file, mode, LM_ID_BASE);
#else
	if (SM_UNLIKELY(mode & RTLD_DEEPBIND) && file && sm_meter.tab.cap)
		say_once(0,
			 "with RTLD_DEEPBIND on an architecture where that "
			 "is not undone",
			 file);
#endif
	SM_MUSTTAIL return real(file, mode);
}

/*
 * dlmopen: a namespace other than the base one has no preloaded library
 * (glibc loads LD_PRELOAD into the base namespace only) and a libc of its
 * own, whose errno our wrappers would not set: what is loaded there is not
 * metered, and that is said once.  Into the base namespace with
 * RTLD_DEEPBIND, as dlopen.  Else a tail call, like dlopen's.
 */
SM_EXPORT SM_NO_TSAN
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("O2", "optimize-sibling-calls")))
#endif
void *dlmopen(Lmid_t lmid, const char *file, int mode)
{
	dlmopen_fn real = __atomic_load_n(&sm_real.dlmopen, __ATOMIC_ACQUIRE);

	if (SM_UNLIKELY(real == unbound_dlmopen)) {
		sm_bind();
		real = __atomic_load_n(&sm_real.dlmopen, __ATOMIC_ACQUIRE);
	}
	if (SM_UNLIKELY(lmid != LM_ID_BASE) && file && sm_meter.tab.cap)
		say_once(1, "with dlmopen into a namespace of its own", file);
#ifdef SM_R_JUMP_SLOT
	else if (SM_UNLIKELY(mode & RTLD_DEEPBIND) && lmid == LM_ID_BASE &&
		 deep_patchable(file, __builtin_return_address(0)))
		return deep_dlopen(NULL, file, mode, lmid);
#endif
	SM_MUSTTAIL return real(lmid, file, mode);
}
