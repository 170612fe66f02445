/*
 * names.c - the table of resolved host names (contract in names.h).
 */
#include "names.h"

#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

static bool addr_of(const struct sockaddr *sa, struct names_addr *out)
{
	memset(out, 0, sizeof(*out));
	if (sa && sa->sa_family == AF_INET) {
		out->family = AF_INET;
		memcpy(out->a, &((const struct sockaddr_in *)sa)->sin_addr, 4);
		return true;
	}
	if (sa && sa->sa_family == AF_INET6) {
		out->family = AF_INET6;
		memcpy(out->a, &((const struct sockaddr_in6 *)sa)->sin6_addr,
		       16);
		return true;
	}
	return false;
}

/* The entry for name, or the one a new name takes. Caller holds the lock. */
static struct names_entry *slot_for(struct names *t, const char *name)
{
	struct names_entry *e;
	unsigned i;

	for (i = 0; i < NAMES_CAP; i++)
		if (t->e[i].stamp && strcmp(t->e[i].name, name) == 0)
			return &t->e[i];
	e = &t->e[t->next];
	t->next = (t->next + 1) % NAMES_CAP;
	return e;
}

static void put(struct names *t, const char *name, const struct names_addr *a,
		unsigned n, uint64_t lookup_ns)
{
	struct names_entry *e;

	if (!name || !name[0] || n == 0)
		return;
	pthread_mutex_lock(&t->lock);
	e = slot_for(t, name);
	memset(e->name, 0, sizeof(e->name));
	strncpy(e->name, name, sizeof(e->name) - 1);
	memcpy(e->addr, a, n * sizeof(*a));
	e->naddr = n;
	e->lookup_ns = lookup_ns;
	e->stamp = ++t->stamp;
	pthread_mutex_unlock(&t->lock);
}

void names_add(struct names *t, const char *name,
	       const struct sockaddr *const *sa, unsigned n, uint64_t lookup_ns)
{
	struct names_addr a[NAMES_ADDRS];
	unsigned i, k = 0;

	for (i = 0; i < n && k < NAMES_ADDRS; i++)
		if (addr_of(sa[i], &a[k]))
			k++;
	put(t, name, a, k, lookup_ns);
}

void names_add_raw(struct names *t, const char *name, int family,
		   const char *const *addrs, uint64_t lookup_ns)
{
	struct names_addr a[NAMES_ADDRS];
	size_t len = family == AF_INET ? 4 : family == AF_INET6 ? 16 : 0;
	unsigned k = 0;

	for (; len && addrs && addrs[k] && k < NAMES_ADDRS; k++) {
		memset(&a[k], 0, sizeof(a[k]));
		a[k].family = (uint8_t)family;
		memcpy(a[k].a, addrs[k], len);
	}
	put(t, name, a, k, lookup_ns);
}

/* peer's address in the table's form; a v4-mapped v6 one becomes v4. */
static bool peer_key(const struct fd_addr *peer, struct names_addr *key)
{
	static const uint8_t mapped[12] = {0, 0, 0, 0, 0,    0,
					   0, 0, 0, 0, 0xff, 0xff};

	if (!peer->len || !addr_of(&peer->u.sa, key))
		return false;
	if (key->family == AF_INET6 && memcmp(key->a, mapped, 12) == 0) {
		key->family = AF_INET;
		memmove(key->a, key->a + 12, 4);
		memset(key->a + 4, 0, 12);
	}
	return true;
}

bool names_find(struct names *t, const struct fd_addr *peer, char *name,
		size_t cap, uint64_t *lookup_ns)
{
	const struct names_entry *best = NULL;
	struct names_addr key;
	unsigned i, j;

	name[0] = '\0';
	if (!peer_key(peer, &key) || pthread_mutex_trylock(&t->lock) != 0)
		return false;
	for (i = 0; i < NAMES_CAP; i++) {
		const struct names_entry *e = &t->e[i];

		if (!e->stamp || (best && e->stamp < best->stamp))
			continue;
		for (j = 0; j < e->naddr; j++)
			if (memcmp(&e->addr[j], &key, sizeof(key)) == 0) {
				best = e;
				break;
			}
	}
	if (best) {
		size_t n = strnlen(best->name, sizeof(best->name));

		if (n >= cap)
			n = cap - 1;
		memcpy(name, best->name, n);
		name[n] = '\0';
		*lookup_ns = best->lookup_ns;
	}
	pthread_mutex_unlock(&t->lock);
	return best != NULL;
}

unsigned names_count(struct names *t)
{
	unsigned i, n = 0;

	pthread_mutex_lock(&t->lock);
	for (i = 0; i < NAMES_CAP; i++)
		n += t->e[i].stamp != 0;
	pthread_mutex_unlock(&t->lock);
	return n;
}

void names_after_fork(struct names *t)
{
	pthread_mutex_init(&t->lock, NULL);
}
