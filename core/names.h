/*
 * names.h - which host name resolved to which addresses: a bounded table
 * filled by the name lookup wrappers (getaddrinfo, gethostbyname...) and
 * read by the ticker to put peer_name into records.
 *
 * NAMES_CAP names at most, the oldest out first; a name looked up again is
 * refreshed in place.  The table is one fixed block (no allocation ever),
 * guarded by one mutex: writers are name lookups (never the data path,
 * never a signal handler: getaddrinfo is not async-signal-safe), readers
 * only try the lock and skip naming when it is busy, so the ticker never
 * waits for a lookup and a fork can never leave it blocked.
 */
#ifndef SOCKMETER_NAMES_H
#define SOCKMETER_NAMES_H

#include "fdtab.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#ifndef NAMES_CAP
#define NAMES_CAP 256 /* names remembered */
#endif
#define NAMES_ADDRS 8	/* addresses kept per name */
#define NAMES_LEN   256 /* longest name kept, NUL included (DNS: 253) */

struct names_addr {
	uint8_t family; /* AF_INET, AF_INET6; 0 unused */
	uint8_t a[16];	/* 4 or 16 bytes */
};

struct names_entry {
	char name[NAMES_LEN];
	uint32_t naddr;
	uint64_t lookup_ns; /* how long the lookup took */
	uint64_t stamp;	    /* insertion order; 0 = empty */
	struct names_addr addr[NAMES_ADDRS];
};

struct names {
	pthread_mutex_t lock;
	uint64_t stamp; /* entries ever added */
	uint32_t next;	/* the slot the next new name takes */
	struct names_entry e[NAMES_CAP];
};

/* NAMES_INIT - a static initializer for an empty table. */
#define NAMES_INIT                                \
	{                                         \
		.lock = PTHREAD_MUTEX_INITIALIZER \
	}

/*
 * names_add - remember that name resolved to the n addresses of sa (each
 * a struct sockaddr_in or _in6; others are skipped; at most NAMES_ADDRS
 * kept) in lookup_ns.  A name already in the table is replaced in place;
 * a new one takes the oldest entry's place when the table is full.
 * Nothing is kept when no address is usable.  Takes the lock.
 * Context: any thread, never a signal handler.
 */
void names_add(struct names *t, const char *name,
	       const struct sockaddr *const *sa, unsigned n,
	       uint64_t lookup_ns);

/*
 * names_add_raw - the same with bare addresses (gethostbyname's h_addr_list:
 * len 4 for AF_INET, 16 for AF_INET6).
 * Context: any thread, never a signal handler.
 */
void names_add_raw(struct names *t, const char *name, int family,
		   const char *const *addrs, uint64_t lookup_ns);

/*
 * names_find - the newest name that resolved to peer's address (an
 * IPv4-mapped IPv6 address matches its IPv4 form) into name (cap bytes,
 * cap > 0) and its lookup time into *lookup_ns.  Returns false, name "",
 * when there is none or the table was busy.  Never waits.
 * Context: ticker only (any thread that may fail a trylock).
 */
bool names_find(struct names *t, const struct fd_addr *peer, char *name,
		size_t cap, uint64_t *lookup_ns);

/* names_count - names held now.  Takes the lock.  Context: tests. */
unsigned names_count(struct names *t);

/* names_after_fork - a fresh child: the lock is free again (the table is
 * kept: the child resolved nothing new, the parent's names still hold).
 * Context: fork child. */
void names_after_fork(struct names *t);

#endif
