/*
 * wrap_names.c - the name lookup wrappers ([stats] names): getaddrinfo,
 * gethostbyname, gethostbyname2, gethostbyname_r.  Each makes the real
 * lookup, times it, and remembers which name gave which addresses in the
 * bounded table of core/names.c, so records can name their peers.
 *
 * Never on the data path; a lookup is not async-signal-safe, so neither is
 * this.  A literal address ("127.0.0.1", AI_NUMERICHOST) is not a name and
 * is not remembered.  errno and every result pass through untouched.
 */
#include "preload.h"

#include <arpa/inet.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

static struct names sm_names = NAMES_INIT;
static pthread_once_t names_once = PTHREAD_ONCE_INIT;

/* BOUND as in unbound.c: true when sm_real.name is now the real one. */
#define BOUND(name) (sm_bind() && sm_real.name != unbound_##name)

int unbound_getaddrinfo(const char *node, const char *service,
			const struct addrinfo *hints, struct addrinfo **res)
{
	if (BOUND(getaddrinfo))
		return sm_real.getaddrinfo(node, service, hints, res);
	return EAI_FAIL;
}

struct hostent *unbound_gethostbyname(const char *name)
{
	if (BOUND(gethostbyname))
		return sm_real.gethostbyname(name);
	return NULL;
}

struct hostent *unbound_gethostbyname2(const char *name, int af)
{
	if (BOUND(gethostbyname2))
		return sm_real.gethostbyname2(name, af);
	return NULL;
}

int unbound_gethostbyname_r(const char *name, struct hostent *ret, char *buf,
			    size_t buflen, struct hostent **result,
			    int *h_errnop)
{
	if (BOUND(gethostbyname_r))
		return sm_real.gethostbyname_r(name, ret, buf, buflen, result,
					       h_errnop);
	if (result)
		*result = NULL;
	return ENOSYS;
}

/* A fork while a lookup writes the table: the child's copy must not be
 * left locked, nor half written.  Each handler may run twice in one fork:
 * glibc ran ours twice in apache's daemon (after its modules were
 * unloaded and loaded again), and a second lock by the same thread waited
 * for good.  The forking thread remembers that it holds the lock. */
static __thread bool names_held __attribute__((tls_model("initial-exec")));

static void names_prepare(void)
{
	if (names_held)
		return;
	pthread_mutex_lock(&sm_names.lock);
	names_held = true;
}

static void names_parent(void)
{
	if (!names_held)
		return;
	names_held = false;
	pthread_mutex_unlock(&sm_names.lock);
}

static void names_child(void)
{
	names_held = false;
	names_after_fork(&sm_names);
}

static bool names_set_up;

static void names_setup(void)
{
	pthread_atfork(names_prepare, names_parent, names_child);
	__atomic_store_n(&names_set_up, true, __ATOMIC_RELEASE);
}

void sm_names_fork(enum sm_raw_fork_phase phase)
{
	if (!__atomic_load_n(&names_set_up, __ATOMIC_ACQUIRE))
		return;
	if (phase == SM_RAW_FORK_PREPARE)
		names_prepare();
	else if (phase == SM_RAW_FORK_PARENT)
		names_parent();
	else
		names_child();
}

static bool names_on(void)
{
	return sm_meter.tab.cap && sm_meter.cfg.category[CAT_NAMES];
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A literal IPv4 or IPv6 address names nothing. */
static bool literal(const char *node)
{
	unsigned char a[16];

	return inet_pton(AF_INET, node, a) == 1 ||
	       inet_pton(AF_INET6, node, a) == 1;
}

static struct names *table(void)
{
	pthread_once(&names_once, names_setup);
	/* The meter reads names through this pointer (it may have been
	 * set up after an earlier lookup). */
	__atomic_store_n(&sm_meter.names, &sm_names, __ATOMIC_RELEASE);
	return &sm_names;
}

static void remember_ai(const char *node, const struct addrinfo *ai,
			uint64_t took)
{
	const struct sockaddr *sa[NAMES_ADDRS];
	unsigned n = 0;

	for (; ai && n < NAMES_ADDRS; ai = ai->ai_next)
		if (ai->ai_addr)
			sa[n++] = ai->ai_addr;
	names_add(table(), node, sa, n, took);
}

static void remember_host(const char *name, const struct hostent *h,
			  uint64_t took)
{
	if (!h || !name || literal(name))
		return;
	names_add_raw(table(), name, h->h_addrtype,
		      (const char *const *)h->h_addr_list, took);
}

SM_EXPORT int getaddrinfo(const char *node, const char *service,
			  const struct addrinfo *hints, struct addrinfo **res)
{
	uint64_t t0;
	int r, saved;

	if (!names_on() || !node ||
	    (hints && (hints->ai_flags & AI_NUMERICHOST)))
		return sm_real.getaddrinfo(node, service, hints, res);
	t0 = mono_ns();
	r = sm_real.getaddrinfo(node, service, hints, res);
	saved = errno;
	if (r == 0 && res && *res && !literal(node))
		remember_ai(node, *res, mono_ns() - t0);
	errno = saved;
	return r;
}

SM_EXPORT struct hostent *gethostbyname(const char *name)
{
	struct hostent *h;
	uint64_t t0;
	int saved;

	if (!names_on())
		return sm_real.gethostbyname(name);
	t0 = mono_ns();
	h = sm_real.gethostbyname(name);
	saved = errno;
	remember_host(name, h, mono_ns() - t0);
	errno = saved;
	return h;
}

SM_EXPORT struct hostent *gethostbyname2(const char *name, int af)
{
	struct hostent *h;
	uint64_t t0;
	int saved;

	if (!names_on())
		return sm_real.gethostbyname2(name, af);
	t0 = mono_ns();
	h = sm_real.gethostbyname2(name, af);
	saved = errno;
	remember_host(name, h, mono_ns() - t0);
	errno = saved;
	return h;
}

SM_EXPORT int gethostbyname_r(const char *name, struct hostent *ret, char *buf,
			      size_t buflen, struct hostent **result,
			      int *h_errnop)
{
	uint64_t t0;
	int r, saved;

	if (!names_on())
		return sm_real.gethostbyname_r(name, ret, buf, buflen, result,
					       h_errnop);
	t0 = mono_ns();
	r = sm_real.gethostbyname_r(name, ret, buf, buflen, result, h_errnop);
	saved = errno;
	if (r == 0 && result)
		remember_host(name, *result, mono_ns() - t0);
	errno = saved;
	return r;
}
