/*
 * wrap_dlopen.c - libraries loaded with dlopen(..., RTLD_DEEPBIND).
 *
 * RTLD_DEEPBIND puts a library's own dependencies, libc among them, ahead
 * of the global scope when its symbols are bound: its send() binds to
 * libc's, not to ours, and its traffic went unmetered without a word.  PHP
 * loads every extension this way (ext/curl with its libcurl, ext/sockets,
 * ext/pgsql with libpq...), in php-cli and php-fpm alike.
 *
 * So after such a dlopen, each object it loaded has its relocations read
 * (JUMP_SLOT, GLOB_DAT, and absolute words with no addend), and every slot
 * that names a function this library wraps, and that the deep binding
 * filled with exactly the function our wrapper forwards to, gets the
 * wrapper instead: what the global scope would have bound it to.  Nothing
 * else changes: a symbol the library defines itself, or finds in one of
 * its own dependencies other than libc, keeps its binding (deep binding is
 * there for that); a read-only (RELRO) page is made writable for the
 * store and read-only again.
 *
 * The caller of dlopen matters to the loader: its RPATH/RUNPATH for a bare
 * name, its directory for $ORIGIN in the name.  A plain dlopen (and a deep
 * one whose caller's identity could change what is loaded: a bare name
 * from a caller with its own library path, a name with a '$') is a tail
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
#include <stdio.h>
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

#if defined(__x86_64__)
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

#ifdef SM_R_JUMP_SLOT

/* Whether the object at ret (dlopen's caller) has a library path of its
 * own (DT_RPATH or DT_RUNPATH), which the loader searches for a bare name
 * from that caller and not from this library; true when unknown. */
static bool caller_has_own_path(const void *ret)
{
	struct link_map *lm = NULL;
	const ElfW(Dyn) *d;
	Dl_info info;

	if (!dladdr1(ret, &info, (void **)&lm, RTLD_DL_LINKMAP) || !lm ||
	    !lm->l_ld)
		return true;
	for (d = lm->l_ld; d->d_tag != DT_NULL; d++)
		if (d->d_tag == DT_RPATH || d->d_tag == DT_RUNPATH)
			return true;
	return false;
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

/* One object loaded by the deep dlopen, copied out of dl_iterate_phdr
 * (whose lock must not be held while dlsym runs). */
struct deep_obj {
	ElfW(Addr) addr;
	const ElfW(Phdr) * phdr;
	ElfW(Half) phnum;
};

#define DEEP_BATCH 64
struct deep_walk {
	size_t skip, seen, n;
	struct deep_obj obj[DEEP_BATCH];
};

static int count_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)info;
	(void)size;
	++*(size_t *)data;
	return 0;
}

static int collect_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct deep_walk *w = data;

	(void)size;
	if (w->seen++ < w->skip)
		return 0;
	if (w->n == DEEP_BATCH)
		return 1;
	w->obj[w->n].addr = info->dlpi_addr;
	w->obj[w->n].phdr = info->dlpi_phdr;
	w->obj[w->n].phnum = info->dlpi_phnum;
	w->n++;
	return 0;
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

/* This library's GNU hash table: a name it does not define is told in a
 * few instructions (a PHP start-up has some 10,000 slots to look at, and
 * three dlsym calls each took 50 ms).  Found once; without one, every
 * name goes to dlsym. */
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
		ElfW(Addr) v = d->d_un.d_ptr;

		v = v < lm->l_addr ? v + lm->l_addr : v;
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

/* Whether this library may define name (false: surely not). */
static bool own_defines(const char *name)
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
		return true;
	for (c = (const unsigned char *)name; *c; c++)
		h = h * 33 + *c;
	nbuckets = own.ht[0];
	symoffset = own.ht[1];
	bloom_size = own.ht[2];
	shift = own.ht[3];
	if (!nbuckets || !bloom_size)
		return true;
	bloom = (const ElfW(Addr) *)(const void *)&own.ht[4];
	buckets = (const uint32_t *)(const void *)&bloom[bloom_size];
	chain = &buckets[nbuckets];
	word = bloom[(h / bits) % bloom_size];
	mask = ((ElfW(Addr))1 << (h % bits)) |
	       ((ElfW(Addr))1 << ((h >> shift) % bits));
	if ((word & mask) != mask)
		return false;
	ix = buckets[h % nbuckets];
	if (ix < symoffset)
		return false;
	for (;; ix++) {
		uint32_t h2 = chain[ix - symoffset];

		if ((h | 1) == (h2 | 1) &&
		    strcmp(name, own.strtab + own.symtab[ix].st_name) == 0)
			return own.symtab[ix].st_shndx != SHN_UNDEF;
		if (h2 & 1)
			return false;
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

static ElfW(Addr) dyn_ptr(ElfW(Addr) v, ElfW(Addr) addr)
{
	/* glibc relocates .dynamic's pointers in place where the section
	 * is writable (x86-64, AArch64): tell an offset from an address. */
	return v < addr ? v + addr : v;
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

/* The slots of one relocation table of the object loaded at addr; the
 * count of slots given a wrapper, -1 if one could not be written. */
static int patch_table(const ElfW(Rela) * rel, size_t n, ElfW(Addr) addr,
		       const ElfW(Sym) * symtab, const char *strtab,
		       size_t strsz, void *handle, struct relro *relro)
{
	int patched = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		unsigned long type = ELF64_R_TYPE(rel[i].r_info);
		unsigned long si = ELF64_R_SYM(rel[i].r_info);
		void **slot = (void **)(addr + rel[i].r_offset);
		const ElfW(Sym) *sym;
		const char *name;
		void *wrapper, *next, *now;

		if (type != SM_R_JUMP_SLOT && type != SM_R_GLOB_DAT &&
		    !(type == SM_R_ABS && rel[i].r_addend == 0))
			continue;
		if (!si)
			continue;
		sym = &symtab[si];
		if (sym->st_shndx != SHN_UNDEF || sym->st_name >= strsz)
			continue;
		name = strtab + sym->st_name;
		if (!own_defines(name))
			continue;
		/* What the global scope binds the name to: one of ours? */
		wrapper = dlsym(RTLD_DEFAULT, name);
		if (!ours(wrapper))
			continue;
		/* What our wrapper forwards to, and what the deep scope
		 * gave this slot (a lazy JUMP_SLOT holds its PLT stub: the
		 * name as the deep scope finds it then). */
		next = real_next(name);
		if (!next || next == wrapper)
			continue;
		now = __atomic_load_n(slot, __ATOMIC_RELAXED);
		if (now == wrapper)
			continue;
		if (now != next &&
		    (type != SM_R_JUMP_SLOT || dlsym(handle, name) != next))
			continue;
		if (!slot_writable(relro, (uintptr_t)slot))
			return -1;
		__atomic_store_n(slot, wrapper, __ATOMIC_RELAXED);
		patched++;
	}
	return patched;
}

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
	bool ok = true;
	ElfW(Half) i;

	for (i = 0; i < o->phnum; i++) {
		const ElfW(Phdr) *p = &o->phdr[i];

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
	if (rela &&
	    patch_table(rela, relasz / sizeof(*rela), o->addr, symtab, strtab,
			strsz, handle, &relro) < 0)
		ok = false;
	if (ok && jmprel && pltrel == DT_RELA &&
	    patch_table(jmprel, pltsz / sizeof(*jmprel), o->addr, symtab,
			strtab, strsz, handle, &relro) < 0)
		ok = false;
	if (relro.open)
		mprotect((void *)relro.lo, relro.hi - relro.lo, PROT_READ);
	return ok;
}

/* The deep dlopen itself: the objects it added to the list (the list
 * grows at its end) get their slots.  Context: any thread. */
__attribute__((noinline)) static void *deep_dlopen(dlopen_fn real,
						   const char *file, int mode,
						   Lmid_t lmid)
{
	struct deep_walk w;
	size_t before = 0;
	bool ok = true;
	void *h;
	int saved;

	dl_iterate_phdr(count_cb, &before);
	h = real ? real(file, mode) : sm_real.dlmopen(lmid, file, mode);
	if (!h)
		return NULL;
	saved = errno;
	memset(&w, 0, sizeof(w));
	w.skip = before;
	for (;;) {
		size_t i;

		w.seen = 0;
		w.n = 0;
		dl_iterate_phdr(collect_cb, &w);
		for (i = 0; i < w.n; i++)
			if (!patch_object(&w.obj[i], h))
				ok = false;
		if (w.n < DEEP_BATCH)
			break;
		w.skip += DEEP_BATCH;
	}
	if (!ok)
		say_once(0,
			 "with RTLD_DEEPBIND, and its read-only pages could "
			 "not be written",
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

SM_EXPORT
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
SM_EXPORT
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
