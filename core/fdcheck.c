/*
 * fdcheck.c - device and inode of every live fd, checked by the ticker
 * (contract in fdcheck.h).
 */
#include "fdcheck.h"

#include "progfd.h"
#include "quiet.h"
#include "rawsys.h"

#include <errno.h>
#include <netinet/in.h>
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
	if (c->ids) {
		madvise(p, (size_t)cap * sizeof(*c->ids), MADV_WIPEONFORK);
		raw_table(p, (size_t)cap * sizeof(*c->ids));
	}
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

/* Only fdcheck_run reads and writes ids, one call at a time (its callers
 * hold the tick lock): plain memory. */
static void id_store(struct fdcheck_id *id, uint32_t gen,
		     const struct stat *st)
{
	id->gen = gen;
	id->dev = (uint64_t)st->st_dev;
	id->ino = (uint64_t)st->st_ino;
	id->known = ID_KNOWN;
}

/* The kind of object a connection of kind k is (classify_fd's split). */
static bool kind_fits(enum fd_kind k, mode_t mode)
{
	switch (k) {
	case KIND_TCP:
	case KIND_UDP:
	case KIND_UNIX_STREAM:
	case KIND_UNIX_DGRAM:
	case KIND_OTHER_SOCKET:
		return S_ISSOCK(mode);
	case KIND_PIPE:
		return S_ISFIFO(mode);
	case KIND_TTY:
		return S_ISCHR(mode);
	case KIND_FILE:
		return !S_ISSOCK(mode) && !S_ISFIFO(mode) && !S_ISCHR(mode);
	default:
		return true;
	}
}

/* An inet address's port, or 0 (none, or not inet). */
static in_port_t inet_port(const void *sa, socklen_t len)
{
	const struct sockaddr_in *in4 = sa;
	const struct sockaddr_in6 *in6 = sa;

	if (len >= sizeof(*in4) && in4->sin_family == AF_INET)
		return in4->sin_port;
	if (len >= sizeof(*in6) && in6->sin6_family == AF_INET6)
		return in6->sin6_port;
	return 0;
}

/* How a bound inet address recorded (was) compares with the kernel's now
 * (now), ports not 0: the same, another, or a wildcard recorded (bind to
 * 0.0.0.0 or ::) on the port the kernel now gives with an address of its
 * own (the connect that followed). */
enum inet_cmp { INET_SAME, INET_OTHER, INET_WILDCARD_THEN_BOUND };

static enum inet_cmp cmp_inet(const void *was, const void *now)
{
	const struct sockaddr_in *a4 = was, *b4 = now;
	const struct sockaddr_in6 *a6 = was, *b6 = now;
	bool same, wild;

	if (a4->sin_family != b4->sin_family)
		return INET_OTHER;
	if (a4->sin_family == AF_INET) {
		if (a4->sin_port != b4->sin_port)
			return INET_OTHER;
		same = a4->sin_addr.s_addr == b4->sin_addr.s_addr;
		wild = a4->sin_addr.s_addr == htonl(INADDR_ANY);
	} else {
		if (a6->sin6_port != b6->sin6_port)
			return INET_OTHER;
		same = !memcmp(&a6->sin6_addr, &b6->sin6_addr,
			       sizeof(a6->sin6_addr));
		wild = IN6_IS_ADDR_UNSPECIFIED(&a6->sin6_addr);
	}
	return same ? INET_SAME : wild ? INET_WILDCARD_THEN_BOUND : INET_OTHER;
}

enum first_look { NOT_IT, IS_IT, UNSURE };

/*
 * First sight of a connection the wrappers opened: is fd still its
 * object?  The kind of object must fit, and a TCP socket's addresses must
 * be the ones recorded: the local one exactly (it was read from the
 * kernel), the peer's port (the address was the one asked for, and
 * connecting to 0.0.0.0 reaches 127.0.0.1).  For a dup whose local
 * address matches, the local address is enough: the peer the program
 * asked for is not always its socket's (proxychains connects a socket of
 * its own to its proxy, dup2s it over the program's, then says connect
 * succeeded; the connection was split in two records at the first look).
 * Sockets accepted on one listener all have its local address: for them
 * the peer's port tells them apart.  What is unknown on either side is not
 * held against it.  UNSURE: the table holds bind's wildcard address and
 * the kernel a connected one on that port; the connect that makes the
 * difference may have run between the snapshot and the kernel's answer
 * (httperf --hog: a few hundred live connections in 30,000 were retired
 * as closes unseen), so the next look decides, on the address the
 * connect wrapper has recorded by then.
 */
static enum first_look still_it(const struct fd_snapshot *s,
				const struct stat *st,
				const struct progfd_addrs *a)
{
	in_port_t was, now;
	bool unsure = false;

	if (!kind_fits(s->kind, st->st_mode))
		return NOT_IT;
	if (s->kind != KIND_TCP)
		return IS_IT;
	was = inet_port(&s->local.u, s->local.len);
	now = inet_port(&a->local, a->local_len);
	if (was && now) {
		enum inet_cmp c = cmp_inet(&s->local.u, &a->local);

		if (c == INET_OTHER)
			return NOT_IT;
		unsure = c == INET_WILDCARD_THEN_BOUND;
	}
	if (was && now && s->shared && !unsure)
		return IS_IT;
	was = inet_port(&s->peer.u, s->peer.len);
	now = inet_port(&a->peer, a->peer_len);
	if (was && now && was != now)
		return NOT_IT;
	return unsure ? UNSURE : IS_IT;
}

/* Retire fd's connection of generation gen: its close was not seen. */
static uint32_t retire(struct fdtab *t, struct closeq *q, int fd,
		       uint32_t gen, uint64_t real_ns)
{
	closeq_prepare(q);
	return (uint32_t)closeq_retire(q, t, fd, &gen, real_ns, NULL, true, 0);
}

uint32_t fdcheck_run(struct fdcheck *c, struct fdtab *t, struct closeq *q,
		     uint64_t real_ns)
{
	uint32_t fd, high = __atomic_load_n(&t->high, __ATOMIC_ACQUIRE);
	uint32_t retired = 0;

	if (!c->on || sm_quiet())
		return 0;
	if (high > c->cap)
		high = c->cap;
	fdtab_for_each_used(t, fd, 0, high) {
		struct fdcheck_id *id = &c->ids[fd];
		struct fd_snapshot snap;
		struct progfd_addrs addrs;
		struct stat st;
		uint32_t gen;
		bool first;
		int r;

		if (!fdtab_snapshot(t, (int)fd, &snap))
			continue;
		gen = snap.gen;
		/* Should the slot change hands meanwhile, fdtab_retire_gen
		 * leaves the new connection alone. */
		first = id->known != ID_KNOWN || id->gen != gen;
		r = progfd_stat_addrs((int)fd, &st,
				      first && snap.kind == KIND_TCP ? &addrs
								     : NULL);
		if (r == -EBADF) {
			retired += retire(t, q, (int)fd, gen, real_ns);
			continue;
		}
		if (r)
			continue; /* cannot tell now */
		if (first) {
			enum first_look l = still_it(&snap, &st, &addrs);

			if (l == UNSURE && !(id->known == ID_UNSURE &&
					     id->gen == gen)) {
				/* Looked at again next time, once. */
				id->gen = gen;
				id->known = ID_UNSURE;
			} else if (l == IS_IT) {
				id_store(id, gen, &st);
			} else {
				retired += retire(t, q, (int)fd, gen, real_ns);
			}
			continue;
		}
		if (id->dev == (uint64_t)st.st_dev &&
		    id->ino == (uint64_t)st.st_ino)
			continue;
		retired += retire(t, q, (int)fd, gen, real_ns);
	}
	return retired;
}
