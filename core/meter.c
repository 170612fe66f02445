/*
 * meter.c - the metering state and the ticker's work: sampling every fd
 * into its window, retiring the slots lifecycle calls gave up on, draining
 * the close queue (closeq.c), ranking the busiest fds (topn.c), and making
 * the records (summary.c, prom.c).  Contract in meter.h.
 */
#include "meter.h"
#include "rawsys.h"

#include "classify.h"
#include "enrich.h"
#include "lockall.h"
#include "quiet.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define LOAD(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)

/* Close records are drained at least this often, windows or not. */
#define DRAIN_NS 1000000000ull
/* Close records taken by one tick that makes no record (meter_more). */
#define MORE_DRAIN CLOSEQ_WAKE_AT
/* The output buffer kept between batches: a full drain of MORE_DRAIN close
 * records fits (text ~350 bytes each, JSON ~930 with tcp_info); a bigger
 * batch (a record's whole queue) gives back what it took beyond.  A JSON
 * batch that did not fit grew and shrank the buffer at every drain, its
 * pages faulted in again each time. */
#define METER_OUT_KEEP_TEXT (512u * 1024u)
#define METER_OUT_KEEP_JSON (1024u * 1024u)

static void *map_lazy(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	raw_table(p, bytes);
	return p;
}

static unsigned acct_bits(const struct config *c)
{
	unsigned a = 0;

	/* Rates are made from the byte counters, so windows need them. */
	if (c->category[CAT_BYTES] || c->category[CAT_WINDOWS])
		a |= ACCT_BYTES;
	if (c->category[CAT_CALLS])
		a |= ACCT_CALLS;
	if (c->category[CAT_ERRORS])
		a |= ACCT_ERRORS;
	if (c->category[CAT_SIZES])
		a |= ACCT_SIZES;
	return a;
}

int meter_init(struct meter *m, const struct config *cfg, const char *prog,
	       long pid, uint32_t fd_cap, struct meter_time now,
	       config_report_fn report, void *ctx)
{
	return meter_init_at(m, cfg, prog, pid, fd_cap, now, report, ctx,
			     NULL);
}

/* The regions: given (mem), or mapped here. */
static int init_memory(struct meter *m, uint32_t fd_cap,
		       const struct meter_mem *mem)
{
	int r;

	if (!mem) {
		r = fdtab_init(&m->tab, fd_cap);
		if (r)
			return r;
		m->durable = m->durable_own = calloc(1, sizeof(*m->durable));
		r = closeq_init(&m->q);
		return r ? r : m->durable ? 0 : -ENOMEM;
	}
	r = fdtab_init_at(&m->tab, mem->slots, fd_cap);
	if (r)
		return r;
	m->tab.back = mem->back_slot;
	m->tab.back_untracked = mem->back_slot_untracked;
	m->tab.back_ctx = mem->back_ctx;
	closeq_attach(&m->q, mem->queue, mem->ring);
	m->q.back = mem->back_ring;
	m->q.ready = mem->ready_ring;
	m->q.kept = mem->kept_ring;
	m->q.back_ctx = mem->back_ctx;
	m->durable = mem->ticker;
	return 0;
}

int meter_init_at(struct meter *m, const struct config *cfg, const char *prog,
		  long pid, uint32_t fd_cap, struct meter_time now,
		  config_report_fn report, void *ctx,
		  const struct meter_mem *mem)
{
	int r;

	memset(m, 0, sizeof(*m));
	m->cfg = *cfg;
	m->acct = acct_bits(cfg);
	m->pid = pid;
	m->start = now;
	m->ns_per_tick = 1.0;
	m->report = report;
	m->ctx = ctx;
	m->forked_at = &m->forked_own;
	m->closes_inflight = &m->closes_own;
	snprintf(m->prog, sizeof(m->prog), "%s", prog);
	window_shape_init(&m->shape, cfg->bucket_ms, cfg->nspans,
			  cfg->span_buckets);

	r = init_memory(m, fd_cap, mem);
	if (r && !m->tab.cap)
		return r;
	fdcheck_init(&m->check, m->tab.cap);
	m->fds = map_lazy((size_t)m->tab.cap * sizeof(*m->fds));
	/* A fork child gets the fd states as zeroes (every fd unknown, no
	 * window: what meter_after_fork wants), and the parent keeps them out
	 * of every fork's page-table copy and copy-on-write faults. */
	m->fds_wiped = m->fds && madvise(m->fds, (size_t)m->tab.cap *
						      sizeof(*m->fds),
					 MADV_WIPEONFORK) == 0;
	if (cfg->format == FORMAT_PROMETHEUS)
		m->prom = calloc(1, sizeof(*m->prom));
	if (r || !m->fds ||
	    (cfg->format == FORMAT_PROMETHEUS && !m->prom)) {
		meter_destroy(m);
		return -ENOMEM;
	}
	m->next_record_mono = now.mono_ns + cfg->interval_ms * 1000000ull;
	m->next_tick_mono = now.mono_ns;
	if (m->prom && strcmp(m->cfg.log_path, CONFIG_DEFAULT_LOG) == 0)
		snprintf(m->cfg.log_path, sizeof(m->cfg.log_path), "%s",
			 CONFIG_DEFAULT_PROM);
	/* A fork child sets its log up at its first write, after whatever
	 * chdir() it made (a daemon's chdir("/")): the directory is the one
	 * the program started in, taken now. */
	sink_anchor(m->cfg.log_path, sizeof(m->cfg.log_path));
	sink_init(&m->sink, m->cfg.log_path, pid, m->prog,
		  now.real_ns / 1000000000ull, report, ctx);
	sink_set_rotation(&m->sink, cfg->log_max_size, cfg->log_keep);
	return 0;
}

/* Windows are made only for fds whose slots held a connection (their
 * numbers are on the table's map of used ones), and each pointer is
 * written only if set: in a fork child every page of fds read or written
 * is a page fault (15,000 fds in the parent: 260 per child exit). */
static void free_windows(struct meter *m)
{
	uint32_t fd, high = LOAD(&m->tab.high);

	if (high > m->tab.cap)
		high = m->tab.cap;
	if (m->fds)
		fdtab_for_each_used(&m->tab, fd, 0, high)
			if (m->fds[fd].win)
				m->fds[fd].win = NULL;
	ownmem_free(&m->wins);
}

void meter_lazy_ranges(const struct meter *m, struct lockall_set *s)
{
	if (!m->tab.cap)
		return;
	fdtab_lazy_ranges(&m->tab, s);
	closeq_lazy_ranges(&m->q, s);
	lockall_add(s, m->check.ids,
		    (size_t)m->check.cap * sizeof(*m->check.ids));
	lockall_add(s, m->fds, (size_t)m->tab.cap * sizeof(*m->fds));
}

void meter_destroy(struct meter *m)
{
	free_windows(m);
	if (m->fds)
		munmap(m->fds, (size_t)m->tab.cap * sizeof(*m->fds));
	closeq_destroy(&m->q);
	free(m->durable_own);
	fdcheck_destroy(&m->check);
	topn_free(&m->top);
	topn_free(&m->closing);
	sbuf_free(&m->held);
	free(m->prom);
	fdtab_destroy(&m->tab);
	memset(m, 0, sizeof(*m));
}

enum fd_kind meter_track_kind(const struct meter *m, enum fd_kind kind)
{
	static const int track_of[KIND_COUNT] = {
		[KIND_UNKNOWN] = -1,	   [KIND_UNTRACKED] = -1,
		[KIND_TCP] = TRACK_TCP,	   [KIND_UDP] = TRACK_UDP,
		[KIND_UNIX_STREAM] = TRACK_UNIX, [KIND_UNIX_DGRAM] = TRACK_UNIX,
		[KIND_OTHER_SOCKET] = TRACK_OTHER_SOCKETS,
		[KIND_PIPE] = TRACK_PIPES, [KIND_FILE] = TRACK_FILES,
		[KIND_TTY] = TRACK_TTYS,
	};

	if ((unsigned)kind >= KIND_COUNT || track_of[kind] < 0)
		return kind == KIND_UNKNOWN ? KIND_UNKNOWN : KIND_UNTRACKED;
	return m->cfg.track[track_of[kind]] ? kind : KIND_UNTRACKED;
}

/* --- lifecycle: any thread and signal handler -------------------------- */

void meter_opened(struct meter *m, int fd, enum fd_kind kind,
		  uint64_t real_ns, const struct fd_addr *local,
		  const struct fd_addr *peer)
{
	struct fd_snapshot own;
	const struct fd_slot *slot = fdtab_slot(&m->tab, fd);
	/* The generation before the kind (closeq_retire). */
	uint32_t gen = slot ? __atomic_load_n(&slot->gen, __ATOMIC_ACQUIRE) : 0;
	enum fd_kind was = slot ? fdtab_kind(slot) : KIND_UNKNOWN;
	struct closeq_entry *e = NULL;
	uint32_t *inflight = NULL;
	int had;

	/* A reused number whose close was not seen (a slot that holds one,
	 * or is busy: it may, once its owner is done): its record's place
	 * is backed (closeq_prepare) and claimed before the retire, as a
	 * close's (closeq_retire; the claim marks it unseen), counted from
	 * the claim to its end as a close's (the final record waits for it:
	 * settle).  A fresh number's costs nothing; should another thread's
	 * open get there first, its connection goes the stack's way, as
	 * when the ring is full. */
	if (fd_kind_counts(was)) {
		closeq_prepare(&m->q);
		inflight = meter_inflight_enter(m);
		e = closeq_claim(&m->q, real_ns, fd, was, gen, true);
	}
	had = fdtab_open_into(&m->tab, fd, meter_track_kind(m, kind), real_ns,
			      local, peer, e ? &e->s : &own,
			      e ? &e->bound : NULL);
	if (had && !e) {
		own.unseen = true;
		closeq_push(&m->q, &own, real_ns);
	}
	if (e)
		closeq_finish(&m->q, e, had);
	if (inflight)
		meter_inflight_leave(inflight);
}

void meter_set_addrs(struct meter *m, int fd, const struct fd_addr *local,
		     const struct fd_addr *peer)
{
	fdtab_set_addrs(&m->tab, fd, local, peer);
}

uint32_t *meter_inflight_enter(struct meter *m)
{
	/* The thread's stack, by 16 KiB: threads' stacks lie megabytes
	 * apart (the main one and glibc's), hashed to spread them. */
	uint64_t sp = (uint64_t)(uintptr_t)__builtin_frame_address(0) >> 14;
	uint32_t i = (uint32_t)((sp * 0x9E3779B97F4A7C15ull) >>
				(64 - METER_INFLIGHT_BITS));
	uint32_t *n = &m->closes_inflight->stripe[i].n;

	__atomic_add_fetch(n, 1, __ATOMIC_SEQ_CST);
	return n;
}

void meter_inflight_leave(uint32_t *n)
{
	__atomic_sub_fetch(n, 1, __ATOMIC_SEQ_CST);
}

/* A close under way, in any stripe.  Not one snapshot of them all: one
 * that starts after its stripe was read shows in the queue's pushed
 * count, which settled() reads after these (see settle_begin). */
static bool inflight_any(const struct meter *m)
{
	uint32_t i;

	for (i = 0; i < METER_INFLIGHT_STRIPES; i++)
		if (__atomic_load_n(&m->closes_inflight->stripe[i].n,
				    __ATOMIC_SEQ_CST))
			return true;
	return false;
}

/*
 * Retire fd's slot and push its close record (ti: the kernel's view, or
 * NULL; unseen: the close itself was not seen), counted in closes_inflight
 * from the retire to the push: the final record waits for it (settle).
 * gen: retire only while the slot holds that generation (a close made
 * inside libc, after which another thread may own the number), or NULL.
 */
static void retire_push(struct meter *m, int fd, const uint32_t *gen,
			uint64_t real_ns, const struct tcpinfo *ti, bool unseen)
{
	/* One stripe for both ends, should the host move the stripes
	 * meanwhile (the preload does, once, at start-up). */
	uint32_t *inflight;

	/* The place of the record in the ring backed first, so that
	 * nothing between the retire and the push is a system call
	 * (closeq_prepare): for every close, since a slot another thread
	 * holds busy now may hold a connection at our retire. */
	closeq_prepare(&m->q);
	inflight = meter_inflight_enter(m);
	/* Inherited (opened 0), or open across a fork: the kernel's counts
	 * are not this fd's alone.  Decided now: a fork after this close
	 * shares nothing of it. */
	closeq_retire(&m->q, &m->tab, fd, gen, real_ns, ti, unseen,
		      __atomic_load_n(m->forked_at, __ATOMIC_RELAXED));
	meter_inflight_leave(inflight);
}

bool meter_tcp_view_wanted(const struct meter *m, int fd)
{
	const struct fd_slot *slot = fdtab_slot(&m->tab, fd);

	return m->cfg.category[CAT_TCP_INFO] && slot &&
	       fdtab_kind(slot) == KIND_TCP && !sm_quiet();
}

bool meter_tcp_view(struct meter *m, int fd, struct tcpinfo *ti)
{
	/* Read before the slot is retired, so that every call the kernel
	 * counted is in our counters. */
	if (!meter_tcp_view_wanted(m, fd))
		return false;
	return tcpinfo_read_counted(
		fd, ti,
		__atomic_load_n(&m->tab.slots[fd].c.bytes[DIR_IN],
				__ATOMIC_RELAXED));
}

/* An address that names something: not 0.0.0.0:0 or [::]:0. */
static bool addr_names(const struct fd_addr *a)
{
	return a->len &&
	       ((a->u.sa.sa_family == AF_INET && a->u.in4.sin_port) ||
		(a->u.sa.sa_family == AF_INET6 && a->u.in6.sin6_port));
}

/*
 * Addresses no lifecycle call told, asked once at the close, so that the
 * record says them:
 *  - an unconnected UDP socket's local address: the kernel binds its port
 *    at the first sendto, which no lifecycle call sees (a data call makes
 *    no system call of ours);
 *  - a TCP socket connected by a call the wrappers did not see: a library
 *    that calls libc's connect through a pointer of its own (proxychains
 *    connects to its proxy so: the record had local "" and peer "").
 * Only for an address still unknown (never on the ordinary close: connect
 * and accept said both); a socket never bound or connected stays "".
 */
static void addrs_at_close(struct meter *m, int fd)
{
	const struct fd_slot *s = fdtab_slot(&m->tab, fd);
	struct fd_addr local, peer;
	bool want_local, want_peer;
	enum fd_kind kind;

	if (!s || !m->cfg.category[CAT_PEERS])
		return;
	kind = fdtab_kind(s);
	if (kind != KIND_UDP && kind != KIND_TCP)
		return;
	want_local = __atomic_load_n(&s->local.family, __ATOMIC_RELAXED) == 0;
	want_peer = kind == KIND_TCP &&
		    __atomic_load_n(&s->peer.family, __ATOMIC_RELAXED) == 0;
	if (!want_local && !want_peer)
		return;
	classify_addrs(fd, want_local ? &local : NULL,
		       want_peer ? &peer : NULL);
	want_local = want_local && addr_names(&local);
	want_peer = want_peer && addr_names(&peer);
	if (want_local || want_peer)
		fdtab_set_addrs(&m->tab, fd, want_local ? &local : NULL,
				want_peer ? &peer : NULL);
}

void meter_closed(struct meter *m, int fd, uint64_t real_ns)
{
	struct tcpinfo ti;
	bool have_ti = meter_tcp_view(m, fd, &ti);

	/* The kernel's last word on a TCP connection (and addresses no call
	 * told), then the retire. */
	addrs_at_close(m, fd);
	retire_push(m, fd, NULL, real_ns, have_ti ? &ti : NULL, false);
}

void meter_closed_gen(struct meter *m, int fd, uint32_t gen,
		      uint64_t real_ns, const struct tcpinfo *ti)
{
	retire_push(m, fd, &gen, real_ns, ti, false);
}

void meter_dup(struct meter *m, int oldfd, int newfd)
{
	fdtab_mark_shared(&m->tab, oldfd);
	fdtab_mark_shared(&m->tab, newfd);
}

void meter_forked(struct meter *m, uint64_t real_ns)
{
	__atomic_store_n(m->forked_at, real_ns, __ATOMIC_RELAXED);
}

void meter_disconnected(struct meter *m, int fd, uint64_t real_ns)
{
	retire_push(m, fd, NULL, real_ns, NULL, false);
}

void meter_closed_unseen(struct meter *m, int fd, uint64_t real_ns)
{
	retire_push(m, fd, NULL, real_ns, NULL, true);
}

/* --- the ticker ----------------------------------------------------------- */

static uint64_t bucket_ns(const struct meter *m)
{
	return m->cfg.bucket_ms * 1000000ull;
}

/* The number of the bucket that contains mono time t. */
static uint64_t bucket_of(const struct meter *m, uint64_t mono_ns)
{
	return (mono_ns - m->start.mono_ns) / bucket_ns(m);
}

static uint64_t activity_of(const struct fd_counters *c)
{
	uint64_t a = 0;
	unsigned d, e;

	for (d = 0; d < DIR_COUNT; d++) {
		a += c->bytes[d] + c->calls[d];
		for (e = 0; e < ERR_COUNT; e++)
			a += c->errors[d][e];
	}
	return a;
}

/* What a slot holds, made into what a record shows (carries already in):
 * latency from clock ticks to nanoseconds, calls derived when they are. */
static void finish_counters(const struct meter *m, struct fd_counters *c)
{
	unsigned d;

	if (fd_calls_derived(m->acct))
		fd_derive_calls(c);
	if (m->ns_per_tick == 1.0)
		return;
	for (d = 0; d < DIR_COUNT; d++)
		c->latency_ns[d] =
			(uint64_t)((double)c->latency_ns[d] * m->ns_per_tick);
}

/* Put the bytes moved since the last boundary into bucket done. */
static void close_bucket(struct meter *m, struct meter_fdstate *st,
			 const struct fd_snapshot *s, uint64_t done,
			 struct meter_time now)
{
	if (!st->win)
		st->win = ownmem_alloc(&m->wins, window_bytes(&m->shape));
	if (!st->win)
		return;
	if (!st->windowed) {
		/* Bucket done's start on the wall clock that opened_ns is
		 * read with, from the two clocks' offset now (buckets are
		 * on the monotonic clock: a wall-clock step since the start
		 * must not move them). */
		uint64_t since = now.mono_ns - (m->start.mono_ns +
						done * bucket_ns(m));
		uint64_t begin = now.real_ns > since ? now.real_ns - since : 0;

		/* Opened after bucket done ended (the ticker samples a
		 * little after the boundary): its bytes so far belong to
		 * the next bucket, which it is living in. */
		if (s->opened_ns >= begin + bucket_ns(m))
			return;
		/* Opened during bucket done: its window starts there, and
		 * the part before it opened is not time it lived (a span's
		 * rate that reaches back there divides by less). */
		st->unlived_ms =
		    s->opened_ns > begin
			    ? (uint32_t)((s->opened_ns - begin) / 1000000u)
			    : 0;
		if (st->unlived_ms >= m->cfg.bucket_ms)
			st->unlived_ms = (uint32_t)m->cfg.bucket_ms - 1;
		window_reset(st->win, &m->shape, done);
		st->windowed = true;
	}
	window_add(st->win, &m->shape, done,
		   s->c.bytes[DIR_IN] - st->bytes[DIR_IN],
		   s->c.bytes[DIR_OUT] - st->bytes[DIR_OUT]);
	/* Rates once the window holds a bucket the connection lived at
	 * least half of (its first, or the next): never a rate divided by
	 * a sliver of a bucket. */
	if (!st->rates_ok &&
	    (st->unlived_ms <= m->cfg.bucket_ms / 2 ||
	     st->win->head > st->win->first))
		st->rates_ok = true;
	st->bytes[DIR_IN] = s->c.bytes[DIR_IN];
	st->bytes[DIR_OUT] = s->c.bytes[DIR_OUT];
}

/*
 * Bring the ticker's memory of fd up to date with snapshot s, and make s
 * what records show (finish_counters).  boundary: this
 * sample is the first since a bucket ended, so the bytes since the last
 * boundary go into that bucket.  Samples between boundaries (records at
 * other times) leave the window alone: rates always come from whole
 * buckets.  Without memory for its window, an fd simply has no rates.
 */
static void sample_fd(struct meter *m, struct fd_snapshot *s,
		      struct meter_time now, bool boundary)
{
	struct meter_fdstate *st = &m->fds[s->fd];
	uint64_t bucket = bucket_of(m, now.mono_ns);
	uint64_t done = bucket ? bucket - 1 : 0;
	uint64_t act;

	if (!st->known || st->gen != s->gen) {
		/* A connection we have not seen before on this fd. */
		struct window *win = st->win;

		memset(st, 0, sizeof(*st));
		st->win = win;
		st->known = true;
		st->gen = s->gen;
	}
	finish_counters(m, &s->c);
	if (boundary && m->cfg.category[CAT_WINDOWS])
		close_bucket(m, st, s, done, now);
	act = activity_of(&s->c);
	if (act != st->activity)
		st->last_active_ns =
		    m->alive_until_ns && now.real_ns > m->alive_until_ns
			    ? (s->opened_ns > m->alive_until_ns
				       ? s->opened_ns
				       : m->alive_until_ns)
			    : now.real_ns;
	st->activity = act;
}

static void fill_rates(const struct meter *m, const struct meter_fdstate *st,
		       struct summary_fd *f)
{
	double width_s = (double)m->cfg.bucket_ms / 1000.0;
	unsigned k, d;

	f->have_rates = m->cfg.category[CAT_WINDOWS] && st->win &&
			st->windowed && st->rates_ok;
	if (!f->have_rates)
		return;
	for (k = 0; k < m->shape.nspans; k++) {
		double secs = (double)window_covered(st->win, &m->shape, k) *
			      width_s;

		if (st->unlived_ms && window_has_first(st->win, &m->shape, k))
			secs -= (double)st->unlived_ms / 1000.0;

		for (d = 0; d < DIR_COUNT; d++)
			f->rate[k][d] =
				(double)window_sum(st->win, k, d) / secs;
	}
}

/* When a retired connection was last active: the ticker's memory of it,
 * or the close itself when it moved something since the last tick. */
static uint64_t last_active_at_close(const struct meter *m,
				     const struct closeq_entry *e)
{
	const struct meter_fdstate *st;
	uint64_t act = activity_of(&e->s.c);

	if (e->s.fd < 0 || (uint32_t)e->s.fd >= m->tab.cap)
		return 0;
	st = &m->fds[e->s.fd];
	if (st->known && st->gen == e->s.gen)
		return act != st->activity ? e->closed_ns : st->last_active_ns;
	return act ? e->closed_ns : 0;
}

/*
 * A lifecycle call that gave up on a slot (a signal handler on the
 * thread that held it) left it for us: retire what it holds now into the
 * close queue, so its numbers reach the records.  Into a claimed place,
 * as a close (closeq_retire): a kill in the middle loses nothing.
 */
static void reap(struct meter *m, struct meter_time now)
{
	uint32_t fd, high = LOAD(&m->tab.high);
	struct fd_snapshot s;

	fdtab_for_each_used(&m->tab, fd, 0, high) {
		const struct fd_slot *slot = &m->tab.slots[fd];
		struct closeq_entry *e = NULL;
		uint32_t gen;
		enum fd_kind kind;
		int had;

		if (!LOAD(&slot->recheck))
			continue;
		/* The generation before the kind (closeq_retire). */
		gen = LOAD(&slot->gen);
		kind = fdtab_kind(slot);
		if (fd_kind_counts(kind)) {
			closeq_prepare(&m->q);
			e = closeq_claim(&m->q, now.real_ns, (int)fd, kind, gen,
					 false);
		}
		had = fdtab_reap_into(&m->tab, (int)fd, e ? &e->s : &s,
				      e ? &e->bound : NULL);
		if (had && !e)
			closeq_push(&m->q, &s, now.real_ns);
		if (e)
			closeq_finish(&m->q, e, had);
	}
}

/*
 * Strays: counts a data call added to a slot after a close had retired it
 * (fdtab_sweep).  Moved into the closed totals, so that no count is left
 * out of the totals of an interval or exit record.  Prometheus shows
 * numbers per kind, and a stray's kind is gone: they are not in its
 * counters.  Every fd is looked at: record ticks only.
 */
static void sweep_strays(struct meter *m)
{
	uint32_t fd, high = LOAD(&m->tab.high);
	struct fd_counters c;

	fdtab_for_each_used(&m->tab, fd, 0, high) {
		if (!fdtab_sweep(&m->tab, (int)fd, &c))
			continue;
		finish_counters(m, &c);
		fd_counters_add(&m->closed, &c);
		state_ticker_add_strays(m->durable, &c);
	}
}

/*
 * Memory for the records refused after start-up (a process at its map
 * count limit, vm.max_map_count, or under strict overcommit): noted here
 * (the tick lock may be held, which fork waits for), said once a process
 * by meter_say_no_memory, whatever ran short (the list of a batch's close
 * records, of a record's fds, the batch's text), with where the numbers
 * went.  Before, close records were lost with only close_records_dropped
 * to show for it, and fds left out of a record's list were blamed on
 * `top`.
 */
static void note_no_memory(struct meter *m, int err)
{
	int none = 0;

	__atomic_compare_exchange_n(&m->nomem_err, &none, err ? err : ENOMEM,
				    false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

void meter_say_no_memory(struct meter *m)
{
	int err = __atomic_load_n(&m->nomem_err, __ATOMIC_RELAXED);
	char msg[400];

	if (!err || m->nomem_said || !m->report)
		return;
	m->nomem_said = true;
	if (m->prom)
		snprintf(msg, sizeof(msg),
			 "sockmeter: %s: no memory to make its Prometheus "
			 "snapshot (%s): the file keeps the last one made",
			 m->prog, strerror(err));
	else
		snprintf(msg, sizeof(msg),
			 "sockmeter: %s: no memory to make its records (%s): "
			 "close records not made are counted in "
			 "close_records_dropped, fds left out of a record are "
			 "counted among those not shown, and %s",
			 m->prog, strerror(err),
			 m->sink.kept &&
				 __atomic_load_n(m->sink.kept, __ATOMIC_RELAXED)
				 ? "an exit record not made is left to "
				   "`sockmeter recover` (the state file keeps "
				   "the numbers)"
				 : "an exit record not made is lost (no state "
				   "file)");
	m->report(m->ctx, msg);
}

/*
 * Move the ready close records out of the queue into m->closing (after
 * those it holds, when append) and their numbers into the closed totals.
 * Returns how many m->closing holds (records that did not fit in memory
 * are counted as dropped).
 */
static uint32_t drain(struct meter *m, uint32_t most, bool append,
		      bool sweep)
{
	struct closeq_entry e;
	uint64_t n = 0, made = 0;

	if (!append)
		m->closing.n = 0;
	state_ticker_begin(m->durable);
	while (n < most && closeq_peek(&m->q, n, &e)) {
		struct summary_fd *f;

		n++;
		if (!closeq_is_record(&e))
			continue;
		m->closed_count++;
		finish_counters(m, &e.s.c);
		fd_counters_add(&m->closed, &e.s.c);
		state_ticker_add(m->durable, &e.s);
		if (m->prom)
			prom_agg_closed(m->prom, &e.s);
		if (m->cfg.close_records == CLOSE_RECORDS_OFF)
			continue;
		if (!topn_grow(&m->closing, m->closing.n + 1)) {
			closeq_note_dropped(&m->q, 1);
			note_no_memory(m, m->closing.err);
			continue;
		}
		f = &m->closing.v[m->closing.n++];
		made++;
		memset(f, 0, sizeof(*f));
		f->s = e.s;
		f->closed_ns = e.closed_ns;
		f->last_active_ns = last_active_at_close(m, &e);
		if ((m->acct & ACCT_BYTES) && enrich_unseen(f)) {
			m->closed_unseen[DIR_IN] += f->unseen[DIR_IN];
			m->closed_unseen[DIR_OUT] += f->unseen[DIR_OUT];
			state_ticker_add_unseen(m->durable, f->unseen);
		}
		if (m->cfg.category[CAT_NAMES])
			enrich_name(LOAD(&m->names), f);
	}
	if (sweep)
		sweep_strays(m);
	/* Their numbers are durable before the entries leave the queue: a
	 * process killed in between is counted once either way. */
	state_ticker_commit(m->durable, closeq_tail(&m->q) + n);
	/* From here until their part of a batch reaches the log, their
	 * records count as dropped (meter_flush counts them back), in the
	 * durable state: before, a process killed while it made or wrote
	 * them (a reviewer stopped one at meter_flush: 200 records) left
	 * them in no count.  A kill between the commit above and this
	 * count (a few instructions) still leaves them in none; counting
	 * them first would count them twice on a kill before the commit
	 * (recovery writes the entries it did not pass).  Only one count
	 * committed with the numbers would close it (a reviewer's
	 * suggestion; a change of the state file's layout).  (Prometheus
	 * makes no close records.) */
	if (made && !m->prom) {
		closeq_note_dropped(&m->q, made);
		__atomic_fetch_add(&m->flight_n, made, __ATOMIC_RELAXED);
	}
	closeq_release(&m->q, n);
	return m->closing.n;
}

/* The numbers of lost close records of kind k (KIND_COUNT: all kinds), as
 * records show them. */
static void dropped_numbers(const struct meter *m, enum fd_kind k,
			    struct fd_counters *c, uint64_t *n)
{
	closeq_dropped(&m->q, k, c, n);
	finish_counters(m, c);
}

void meter_build(struct meter *m, enum summary_type type,
		 struct meter_time now, struct summary *r)
{
	struct fd_counters dropped;
	uint64_t dropped_n, held;

	memset(r, 0, sizeof(*r));
	r->type = type;
	r->end = type == SUMMARY_EXIT ? m->end : NULL;
	r->incomplete = type == SUMMARY_EXIT && m->incomplete;
	r->alive_ns = r->end ? m->alive_until_ns : 0;
	r->other_threads = type == SUMMARY_EXIT || type == SUMMARY_EXEC
				   ? m->other_threads
				   : 0;
	r->ts_ns = now.real_ns;
	r->pid = m->pid;
	r->prog = m->prog;
	r->start_ns = m->start.real_ns;
	/* Dropped close records left raw slot numbers behind. */
	dropped_numbers(m, KIND_COUNT, &dropped, &dropped_n);
	r->totals = m->closed;
	fd_counters_add(&r->totals, &dropped);
	/* The closes whose numbers are in these totals: those drained and
	 * those the full queue kept only the numbers of.  Not the closes
	 * pushed since the drain (other threads close on while an exit
	 * record is made): their records and numbers are in neither. */
	r->fds_closed = m->closed_count + dropped_n;
	/* With close_records = off no record is wanted, so none is lost: a
	 * full queue then keeps only numbers, as ever, and says nothing. */
	r->close_dropped = m->cfg.close_records == CLOSE_RECORDS_OFF
				   ? 0
				   : closeq_dropped_records(&m->q);
	/* Held records go first in the batch this record goes in: written
	 * with it, or refused with it. */
	held = __atomic_load_n(&m->held_n, __ATOMIC_RELAXED) +
	       __atomic_load_n(&m->flight_n, __ATOMIC_RELAXED);
	r->close_dropped -= held < r->close_dropped ? held : r->close_dropped;
	/* Unseen bytes are the kernel's count minus ours: ours must exist. */
	r->have_unseen = m->cfg.category[CAT_TCP_INFO] && (m->acct & ACCT_BYTES);
	r->unseen[DIR_IN] = m->closed_unseen[DIR_IN];
	r->unseen[DIR_OUT] = m->closed_unseen[DIR_OUT];
}

/* Start the exposition with what closed connections left.  Not inlined:
 * its 5 KiB of counters were run()'s own frame otherwise, in every
 * record's making, prometheus or not: deep in the stack of a thread that
 * calls exit (a curl under `ulimit -s 20` died there, a helper's). */
__attribute__((noinline)) static void prom_begin(struct meter *m, struct meter_time now)
{
	struct fd_counters dropped[KIND_COUNT];
	uint64_t dropped_n[KIND_COUNT];
	unsigned k;

	for (k = 0; k < KIND_COUNT; k++)
		dropped_numbers(m, (enum fd_kind)k, &dropped[k], &dropped_n[k]);
	prom_agg_begin(m->prom, dropped, dropped_n, m->prog, m->pid,
		       m->start.real_ns, now.real_ns);
}

/* Whether an open connection's kernel view is read: tcp_info on, and a
 * live process's own fds (a recovery's fd numbers would be the recovering
 * process's: another connection's view, even its unseen bytes). */
static bool ask_kernel(const struct meter *m)
{
	return m->cfg.category[CAT_TCP_INFO] && !m->dead;
}

/*
 * An open connection's unseen bytes are reported once two readings agree:
 * a data call caught between its system call and its count (its thread
 * preempted there) looks unseen in one reading only, while bytes that
 * really bypassed the calls stay.  A direction shows unseen bytes when the
 * fd's previous reading showed some too; a first reading shows none yet.
 * A reading taken while a data call was in the kernel on the fd (busy)
 * shows none and confirms nothing: a blocking send to a slow reader is in
 * the kernel at nearly every reading, its bytes partly queued, and showed
 * as tens of KB unseen a second, every second (a 64 KiB sendall: 32 to
 * 39 KB).  The note does not say the call's direction, so a thread parked
 * in recv on the fd hides the other direction's unseen bytes from
 * interval records too (a review's inline-asm sender beside such a
 * reader); the close and final records, read once, still show them.
 * Telling the directions apart would take a store more per data call.
 * (Bits in meter_fdstate's padding: no memory per fd.)
 */
static void confirm_unseen(struct meter *m, struct summary *r,
			   struct summary_fd *f)
{
	static const uint8_t bit[DIR_COUNT] = { UNSEEN_IN, UNSEEN_OUT };
	struct meter_fdstate *st = &m->fds[f->s.fd];
	bool same = st->known && st->gen == f->s.gen;
	uint8_t now = UNSEEN_READ;
	unsigned d;

	f->have_unseen = same && (st->unseen & UNSEEN_READ) && !f->busy;
	for (d = 0; d < DIR_COUNT; d++) {
		if (f->unseen[d] && !f->busy)
			now |= bit[d];
		if (!f->have_unseen || !(st->unseen & bit[d]))
			f->unseen[d] = 0;
		r->unseen[d] += f->unseen[d];
	}
	st->unseen = same ? now : 0;
}

/* As at close (meter_closed): a socket shared with another fd or a child
 * is not this fd's to compare with the kernel's counts. */
static bool shared_socket(const struct meter *m, const struct fd_snapshot *s)
{
	return s->shared ||
	       s->opened_ns <= __atomic_load_n(m->forked_at, __ATOMIC_RELAXED);
}

/*
 * A final record (exit, exec) takes one reading, as a close record does:
 * there is no later record for a second one to wait for, and a call still
 * in the kernel on another thread (a long send as a thread calls _exit)
 * never returns to be counted, so what the kernel moved beyond the counts
 * is what the record lacks.  Confirming it instead left such a call's
 * bytes out of the record without a word: 1.5 GB sent by a 512 MiB send
 * still running, `bytes_out=5` and no unseen bytes.
 */
static void take_unseen(struct meter *m, struct summary *r,
			struct summary_fd *f)
{
	unsigned d;

	for (d = 0; d < DIR_COUNT; d++)
		r->unseen[d] += f->unseen[d];
	m->fds[f->s.fd].unseen = 0;
}

/*
 * A final record's open TCP connections beyond its top-N list whose fd has
 * a data call in the kernel (fd_slot.inflight_sp): their unseen bytes go
 * into the totals, so that a long call cut off by the end is said even
 * when busier connections fill the list.  Only those: reading every open
 * connection would cost a busy server one system call per connection at
 * exit, for bytes that only a call bypassing the wrappers could leave.
 */
static void unlisted_in_flight(struct meter *m, struct summary *r, uint32_t n)
{
	uint32_t fd, high = LOAD(&m->tab.high), i;
	struct summary_fd f;

	fdtab_for_each_used(&m->tab, fd, 0, high) {
		if (!__atomic_load_n(&m->tab.slots[fd].inflight_sp,
				     __ATOMIC_RELAXED) ||
		    fdtab_kind(&m->tab.slots[fd]) != KIND_TCP ||
		    !fdtab_snapshot(&m->tab, (int)fd, &f.s))
			continue;
		for (i = 0; i < n; i++)
			if (m->top.v[i].s.fd == f.s.fd &&
			    m->top.v[i].s.gen == f.s.gen)
				break;
		if (i < n || !enrich_read_live(&m->tab, &f) ||
		    !f.have_unseen || shared_socket(m, &f.s))
			continue;
		take_unseen(m, r, &f);
	}
}

/* What the ticker adds to an fd a record lists: the kernel's view of a
 * TCP connection (its unseen bytes go into r's totals) and the peer's
 * name. */
static void enrich_listed(struct meter *m, struct summary *r,
			  struct summary_fd *f, bool final)
{
	if (ask_kernel(m) && enrich_read_live(&m->tab, f) &&
	    r->have_unseen && f->have_unseen) {
		if (shared_socket(m, &f->s))
			f->have_unseen = false;
		else if (final)
			take_unseen(m, r, f);
		else
			confirm_unseen(m, r, f);
	}
	if (m->cfg.category[CAT_NAMES])
		enrich_name(LOAD(&m->names), f);
	else
		f->peer_name[0] = '\0';
}

/*
 * Sample every tracked fd into its window and add it to r's totals.  With
 * collect, also gather into m->top the busiest of the fds that belong
 * in the record (all open ones, or those active since the last record);
 * r->omitted counts the others.  Returns how many were gathered.
 */
static uint32_t sample_all(struct meter *m, struct meter_time now,
			   struct summary *r, bool collect, bool all)
{
	uint32_t fd, high = LOAD(&m->tab.high), seen = 0;
	uint64_t bucket = bucket_of(m, now.mono_ns);
	bool boundary = bucket > m->last_bucket;
	struct summary_fd cand;

	m->last_bucket = bucket;
	m->top.n = 0;
	fdtab_for_each_used(&m->tab, fd, 0, high) {
		struct meter_fdstate *st = &m->fds[fd];
		uint64_t moved;

		if (!fdtab_snapshot(&m->tab, (int)fd, &cand.s))
			continue;
		sample_fd(m, &cand.s, now, boundary);
		cand.have_unseen = false;
		cand.peer_name[0] = '\0';
		cand.lookup_ns = 0;
		fd_counters_add(&r->totals, &cand.s.c);
		r->fds_open++;
		r->fds_close_on_exec += cand.s.close_on_exec;
		if (m->prom) {
			/* The exposition is made on record ticks only. */
			if (!collect)
				continue;
			fill_rates(m, st, &cand);
			if (ask_kernel(m))
				enrich_read_live(&m->tab, &cand);
			prom_agg_live(m->prom, &cand, m->shape.nspans);
			continue;
		}
		if (!collect || (!all && st->activity == st->activity_recorded))
			continue;
		cand.closed_ns = 0;
		cand.last_active_ns = st->last_active_ns;
		fill_rates(m, st, &cand);
		moved = cand.s.c.bytes[DIR_IN] + cand.s.c.bytes[DIR_OUT];
		cand.rank = cand.have_rates
				    ? cand.rate[0][DIR_IN] + cand.rate[0][DIR_OUT]
				    : (double)(moved - st->bytes_recorded);
		st->activity_recorded = st->activity;
		st->bytes_recorded = moved;
		seen++;
		topn_offer(&m->top, m->cfg.top, &cand);
	}
	if (m->top.err) {
		note_no_memory(m, m->top.err);
		m->top.err = 0;
	}
	r->omitted = seen - m->top.n;
	return m->top.n;
}

/*
 * The final record is a snapshot of the queue and of the slots taken
 * while the program's other threads may still be closing fds.  A close
 * retires its slot before its record reaches the queue, and one caught in
 * between was in neither: gdbus closes its bus socket in a thread while
 * main() exits, and its bytes were lost about one run in five.  So the
 * snapshot is taken with no close under way (closes_inflight), and taken
 * again when one ran meanwhile (the queue's pushed count moved), a few
 * times at most: about 50 ms of waiting in all, bounded even for a close
 * that cannot go on (a handler that exits in the middle of one).
 */
#define SETTLE_WAIT_NS 200000L /* one pause */
#define SETTLE_PAUSES 250      /* pauses in all */
#define SETTLE_TRIES 4         /* snapshots */

static uint64_t settle_begin(struct meter *m, uint32_t *pauses)
{
	struct timespec pause = {0, SETTLE_WAIT_NS};

	while (*pauses < SETTLE_PAUSES && inflight_any(m)) {
		nanosleep(&pause, NULL);
		(*pauses)++;
	}
	return __atomic_load_n(&m->q.sh->pushed, __ATOMIC_SEQ_CST);
}

static bool settled(struct meter *m, uint64_t pushed)
{
	return !inflight_any(m) &&
	       __atomic_load_n(&m->q.sh->pushed, __ATOMIC_SEQ_CST) == pushed;
}

/*
 * Record r appended to out whole, or not at all: the one whose making ran
 * out of memory is cut off where it began (a text record is many lines: a
 * cut at the last line left an exit record's first line in the log
 * without its totals, which recovery then took for the record written,
 * and removed the state file).  Nothing is appended after (sbuf).
 */
static void format_whole(const struct summary *r, const struct config *c,
			 struct sbuf *out)
{
	size_t mark = out->len;
	bool failed = out->failed;

	summary_format(r, c, out);
	if (out->failed && !failed) {
		out->len = mark;
		if (out->p)
			out->p[mark] = '\0';
	}
}

/*
 * One tick's work: drain the close queue, sample every fd, then format the
 * close records (whose totals are the process totals at this tick) and,
 * unless type is SUMMARY_CLOSE (meaning "no record due"), an interval or
 * exit record.
 */
static void run(struct meter *m, struct meter_time now, enum summary_type type,
		struct sbuf *out)
{
	bool record = type != SUMMARY_CLOSE;
	bool final = type == SUMMARY_EXIT || type == SUMMARY_EXEC;
	uint32_t nclosed, n, i, pauses = 0, tries = 0;
	uint64_t pushed = 0;
	struct summary r, rc;

	/* Prometheus labels peers by name, closed ones (drain) too. */
	if (m->prom)
		m->prom->names = m->cfg.category[CAT_NAMES] ? LOAD(&m->names)
							    : NULL;
	reap(m, now);
	if (final)
		pushed = settle_begin(m, &pauses);
	/* A drain alone takes a bounded batch: the ticker holds the state
	 * lock (fork waits on it) for a bounded time, and comes back for the
	 * rest at once.  A record drains all: its totals are whole.  A final
	 * record drains at most a queue's worth in all: with other threads
	 * closing faster than records are made, draining on would take longer
	 * than an exec or _exit waits for it (2 s), and a killed ticker
	 * loses what it drained; closes after that are in neither the record
	 * nor its totals (fds_closed counts those in). */
	nclosed = drain(m, final ? CLOSEQ_CAP : record ? UINT32_MAX : MORE_DRAIN,
			false, record);
	for (;;) {
		meter_build(m, type, now, &r);
		/* A close pushed after now was taken and before the drain is
		 * in this batch: the record is no older than its closes. */
		for (i = 0; i < nclosed; i++)
			if (m->closing.v[i].closed_ns > r.ts_ns)
				r.ts_ns = m->closing.v[i].closed_ns;
		/* Prometheus: a whole snapshot per record; no close records. */
		if (m->prom)
			prom_begin(m, now);
		n = sample_all(m, now, &r, record, final && !m->prom);
		if (!final || ++tries >= SETTLE_TRIES || settled(m, pushed))
			break;
		pushed = settle_begin(m, &pauses);
		nclosed = drain(m, nclosed < CLOSEQ_CAP ? CLOSEQ_CAP - nclosed : 0,
				true, true);
	}
	if (m->prom) {
		if (record && (r.fds_open || r.fds_closed))
			prom_agg_format(m->prom, &m->cfg, out);
		return;
	}
	for (i = 0; i < n; i++)
		enrich_listed(m, &r, &m->top.v[i], final);
	if (final && r.have_unseen && ask_kernel(m))
		unlisted_in_flight(m, &r, n);
	for (i = 0; i < nclosed; i++) {
		rc = r;
		rc.type = SUMMARY_CLOSE;
		rc.fds = &m->closing.v[i];
		rc.nfds = 1;
		format_whole(&rc, &m->cfg, out);
	}
	out->closes += nclosed;
	/* A process that never had a tracked fd (a shell, ls...) leaves no
	 * log behind at all. */
	if (!record || (final && r.fds_open == 0 && r.fds_closed == 0))
		return;
	topn_sort(&m->top);
	r.fds = m->top.v;
	r.nfds = n;
	format_whole(&r, &m->cfg, out);
}

/* A forked child sets its log up at its first write. */
static void sink_ready(struct meter *m)
{
	if (!m->sink_stale)
		return;
	m->sink_stale = false;
	sink_init(&m->sink, m->cfg.log_path, m->pid, m->prog,
		  m->start.real_ns / 1000000000ull, m->report, m->ctx);
	sink_set_rotation(&m->sink, m->cfg.log_max_size, m->cfg.log_keep);
}

int meter_pin_log(struct meter *m, bool on)
{
	if (m->prom)
		return 0; /* replaced by name at each write: cannot be kept */
	sink_ready(m);
	return sink_pin(&m->sink, on);
}

/* Whether the line [p, nl) is a close record (JSON's start with its
 * type; text's name it right after the timestamp, which has no space:
 * summary.c's text_time).  Every line of every batch goes through here
 * twice (counted, then counted written): a memmem over the line's head
 * was a twelfth of the ticker's instructions per close record. */
static bool close_line(const char *p, const char *nl, bool json)
{
	static const char json_mark[] = "{\"type\":\"close\"";
	static const char text_mark[] = " sockmeter close pid=";
	size_t len = (size_t)(nl - p);
	const char *sp;

	if (json)
		return len >= sizeof(json_mark) - 1 &&
		       memcmp(p, json_mark, sizeof(json_mark) - 1) == 0;
	sp = memchr(p, ' ', len < 64 ? len : 64);
	return sp && (size_t)(nl - sp) >= sizeof(text_mark) - 1 &&
	       memcmp(sp, text_mark, sizeof(text_mark) - 1) == 0;
}

/*
 * After a refused write of buf (len bytes, of which the log kept the first
 * done, whole or torn; every close record in it counted as dropped until
 * written, those written counted back by flight_progress): the close
 * records not written at all are held for the next batch, the oldest
 * first, up to SINK_HELD_MAX bytes, still counted as dropped.  A record
 * torn at done is not written again (its head is in the log: glued to a
 * copy of itself it would spoil a second line).  Into next, empty.
 */
static void hold_refused(struct meter *m, const char *buf, size_t len,
			 size_t done, struct sbuf *next)
{
	bool json = m->cfg.format == FORMAT_JSON;
	const char *p = buf, *end = buf + len, *nl;

	for (; p < end; p = nl + 1) {
		size_t at = (size_t)(p - buf), n;

		nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			nl = end - 1; /* (every record ends in one) */
		n = (size_t)(nl + 1 - p);
		if (at >= done && close_line(p, nl, json) &&
		    next->len + n <= SINK_HELD_MAX && !next->failed) {
			sbuf_addn(next, p, n);
			if (!next->failed)
				next->closes++;
		}
	}
}

/*
 * The sink's progress (struct sink): the first done bytes of the batch
 * being written reached the log.  Its close records among the whole lines
 * not seen yet are no longer counted as dropped.  May run in progfd_run's
 * child: memchr, memcmp and atomics only.
 */
static void flight_progress(void *ctx, size_t done)
{
	struct meter *m = ctx;
	bool json = m->cfg.format == FORMAT_JSON;
	const char *p = m->flight + m->flight_seen, *end = m->flight + done;
	const char *nl;
	uint64_t n = 0;

	for (; p < end && (nl = memchr(p, '\n', (size_t)(end - p))) != NULL;
	     p = nl + 1)
		n += close_line(p, nl, json);
	m->flight_seen = (size_t)(p - m->flight);
	m->flight_counted += n;
	/* The note first: a kill between the two leaves these records
	 * counted as dropped (as before the note), never counted written
	 * twice. */
	__atomic_store_n(&m->q.sh->flight_armed, 0, __ATOMIC_RELEASE);
	closeq_note_written(&m->q, n);
	__atomic_fetch_add(&m->flight_parts, 1, __ATOMIC_RELAXED);
}

/*
 * The sink is about to write a part of the batch to the end of the file
 * dev/ino, size bytes long now, done bytes of the batch written before:
 * noted in the durable state (closeq.h's flight_*), with where the first
 * close record not counted written lies in that file and how many there
 * are from there to the batch's end.  A process killed in the write, or
 * after it and before flight_progress, left those that landed in the log
 * while they count as dropped: a recovery counts them there (recover.c).
 * Same context as flight_progress.
 */
static void flight_aim(void *ctx, size_t done, uint64_t dev, uint64_t ino,
		       uint64_t size)
{
	struct meter *m = ctx;
	struct closeq_shared *sh = m->q.sh;
	uint64_t n = m->flight_closes - m->flight_counted;
	uint64_t back = done > m->flight_seen ? done - m->flight_seen : 0;

	__atomic_store_n(&sh->flight_armed, 0, __ATOMIC_RELEASE);
	if (!n || m->flight_counted > m->flight_closes)
		return;
	{
		struct timespec ts = { 0, 0 };

		/* Inline: progfd_run's child may run this (raw calls only). */
		raw_syscall6(SYS_clock_gettime, CLOCK_REALTIME, (long)&ts, 0, 0,
			     0, 0);
		sh->flight_real_ns = (uint64_t)ts.tv_sec * 1000000000u +
				     (uint64_t)ts.tv_nsec;
	}
	sh->flight_dev = dev;
	sh->flight_ino = ino;
	sh->flight_off = size > back ? size - back : 0;
	sh->flight_closes = n;
	__atomic_store_n(&sh->flight_armed, 1, __ATOMIC_RELEASE);
}

/*
 * The batch's buffer could not grow (its mapping refused: a process at its
 * map count limit, vm.max_map_count, or under strict overcommit): it holds
 * the records made whole before (format_whole); the close records not in
 * it stay counted as dropped (from their drain on: drain), and a final
 * record not in it is left to recovery (the state file keeps the numbers:
 * durable.c reads last_unmade).  A Prometheus snapshot is whole or not at
 * all: the file keeps the last one made.  Said once.  Before, a torn
 * record went to the log with the next one glued to it, and an exit
 * record that was never made removed the state file as if written: a
 * process's whole end lost without a word (a helper's injection).
 */
static void unmade_batch(struct meter *m, struct sbuf *out)
{
	if (m->prom) {
		out->len = 0;
		if (out->p)
			out->p[0] = '\0';
	}
	m->last_unmade = true;
	note_no_memory(m, out->err);
}

void meter_flush(struct meter *m, struct sbuf *out)
{
	struct sbuf *w = out, next = { 0 };
	size_t held_len;
	int r;

	m->last_unmade = false;
	if (out->failed)
		unmade_batch(m, out);
	held_len = m->held.len;

	if (out->len || held_len)
		sink_ready(m);
	if (out->len && m->prom) {
		sink_replace(&m->sink, out->p, out->len);
	} else if (out->len || held_len) {
		/* The held records first: older than the batch, whose
		 * totals count them. */
		if (held_len) {
			sbuf_addn(&m->held, out->p, out->len);
			if (m->held.failed) { /* no memory: as before holding */
				sbuf_free(&m->held);
				held_len = 0;
			} else {
				w = &m->held;
			}
		}
		/* Every close record of the batch counts as dropped until
		 * the log has it (from its drain on; the held ones since
		 * they were refused), in the durable state too, and each
		 * part that reaches the log counts its own back as it lands:
		 * a process that dies in the middle of a long batch (killed,
		 * or an exit that would not wait any longer for a log that
		 * others keep rotating) leaves a state file whose recovered
		 * exit record says how many are not in the log.  Before,
		 * they were in no count. */
		m->flight = w->p;
		m->flight_seen = 0;
		m->flight_counted = 0;
		m->flight_closes = 0;
		/* Its close records, counted once (flight_aim's note says
		 * how many are not counted written yet at each part). */
		{
			bool json = m->cfg.format == FORMAT_JSON;
			const char *p = w->p, *end = w->p + w->len, *nl;

			for (; p < end &&
			       (nl = memchr(p, '\n', (size_t)(end - p))) != NULL;
			     p = nl + 1)
				m->flight_closes += close_line(p, nl, json);
		}
		m->sink.progress = flight_progress;
		m->sink.aim = flight_aim;
		m->sink.progress_ctx = m;
		r = sink_write(&m->sink, w->p, w->len);
		/* (What stayed written of a write with no parts: stderr,
		 * a pinned file, a refused one's head.) */
		flight_progress(m, m->sink.batch_done);
		m->sink.progress = NULL;
		m->sink.aim = NULL;
		m->flight = NULL;
		/* The close records of a batch the log refused (a full disk,
		 * RLIMIT_FSIZE, a read-only remount, a directory the uid of
		 * the moment may not write: said once on stderr) are held
		 * for the next batch, and stay counted as dropped until
		 * written, so that every record after (and a recovered exit
		 * record) says how many are not in the log.  Those of a head
		 * that stayed written (a rotation's first part, a stderr
		 * pipe that took some) are not; a record torn there is. */
		if (r != 0 && (held_len || out->closes))
			hold_refused(m, w->p, w->len, m->sink.batch_done,
				     &next);
		sbuf_free(&m->held);
		m->held = next;
		/* (Also after a held batch given up for want of memory.) */
		__atomic_store_n(&m->held_n, m->held.closes, __ATOMIC_RELAXED);
	}
	/* Those drained are written, held (held_n) or lost, counted. */
	if (__atomic_load_n(&m->flight_n, __ATOMIC_RELAXED))
		__atomic_store_n(&m->flight_n, 0, __ATOMIC_RELAXED);

	sbuf_clear(out, m->cfg.format == FORMAT_JSON ? METER_OUT_KEEP_JSON
						     : METER_OUT_KEEP_TEXT);
}

static uint64_t next_tick(const struct meter *m, uint64_t mono_ns)
{
	uint64_t next = mono_ns + DRAIN_NS;

	if (m->cfg.category[CAT_WINDOWS]) {
		/* The next bucket boundary. */
		uint64_t b = bucket_of(m, mono_ns) + 1;
		uint64_t at = m->start.mono_ns + b * bucket_ns(m);

		if (at < next)
			next = at;
	}
	return next < m->next_record_mono ? next : m->next_record_mono;
}

uint64_t meter_tick_into(struct meter *m, struct meter_time now,
			 struct sbuf *out)
{
	bool due = now.mono_ns >= m->next_record_mono;

	if (m->finished || !m->tab.cap)
		return now.mono_ns + DRAIN_NS;
	m->durable->ns_per_tick = m->ns_per_tick;
	__atomic_store_n(&m->durable->alive_real_ns, now.real_ns,
			 __ATOMIC_RELAXED);
	if (due)
		fdcheck_run(&m->check, &m->tab, &m->q, now.real_ns);
	run(m, now, due ? SUMMARY_INTERVAL : SUMMARY_CLOSE, out);
	while (m->next_record_mono <= now.mono_ns)
		m->next_record_mono += m->cfg.interval_ms * 1000000ull;
	m->next_tick_mono = next_tick(m, now.mono_ns);
	return m->next_tick_mono;
}

uint64_t meter_tick(struct meter *m, struct meter_time now)
{
	struct sbuf out = { 0 };
	uint64_t next = meter_tick_into(m, now, &out);

	meter_flush(m, &out);
	sbuf_free(&out);
	return next;
}

bool meter_more(const struct meter *m)
{
	return m->tab.cap && !m->finished &&
	       closeq_pending(&m->q) >= CLOSEQ_WAKE_AT;
}

void meter_exit_into(struct meter *m, struct meter_time now, struct sbuf *out)
{
	if (m->finished || !m->tab.cap)
		return;
	fdcheck_run(&m->check, &m->tab, &m->q, now.real_ns);
	run(m, now, SUMMARY_EXIT, out);
	__atomic_store_n(&m->finished, true, __ATOMIC_RELEASE);
	/* No tick will come again: the per-fd windows can go now (and leak
	 * checkers see nothing left behind). */
	free_windows(m);
}

void meter_exit(struct meter *m, struct meter_time now)
{
	struct sbuf out = { 0 };

	meter_exit_into(m, now, &out);
	meter_flush(m, &out);
	sbuf_free(&out);
}

void meter_exec_into(struct meter *m, struct meter_time now, struct sbuf *out)
{
	if (m->finished || !m->tab.cap)
		return;
	run(m, now, SUMMARY_EXEC, out);
}

void meter_exec(struct meter *m, struct meter_time now)
{
	struct sbuf out = { 0 };

	meter_exec_into(m, now, &out);
	meter_flush(m, &out);
	sbuf_free(&out);
}

/* Zero what is not zero already: a page only read stays shared with the
 * parent after a fork (a write would copy it). */
SM_FORK_PATH
static void zero_if_set(void *p, size_t n)
{
	const unsigned char *b = p;
	size_t i;

	for (i = 0; i < n; i++)
		if (b[i]) {
			memset(p, 0, n);
			return;
		}
}

SM_FORK_PATH
void meter_after_fork(struct meter *m, long pid, struct meter_time now,
		      bool fresh)
{
	size_t fds_bytes = (size_t)m->tab.cap * sizeof(*m->fds);
	bool remapped;
	uint32_t fd, i;

	if (!m->tab.cap)
		return;
	m->pid = pid;
	m->start = now;
	m->last_bucket = 0;
	/* Every page the child writes is a copy made for it, and a fork of
	 * a busy server has thousands of fds: what is reset is given new
	 * zeroed memory where it can be, not walked. */
	if (!fresh)
		fdtab_forget_all(&m->tab);
	/* The fd states: zeroes already in a real fork child when wiped
	 * (meter_init_at); else only what is set is written (each page
	 * written is a copy), and with many fds new memory is mapped.  The
	 * windows are the parent's alone (ownmem.h): the child allocates its
	 * own as it needs them. */
	remapped = m->fds_wiped && fresh;
	if (!remapped && LOAD(&m->tab.high) > 1024 &&
	    mmap(m->fds, fds_bytes, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1,
		 0) == (void *)m->fds) {
		remapped = true;
		raw_table(m->fds, fds_bytes); /* the new mapping's marks */
	}
	for (fd = 0; !remapped && fd < LOAD(&m->tab.high); fd++)
		if (m->fds[fd].known || m->fds[fd].win) {
			m->fds[fd].known = false;
			m->fds[fd].win = NULL;
		}
	ownmem_forget(&m->wins);
	/* Only the parent's pending entries are touched: the rest of the
	 * queue may never have been paged in. */
	closeq_after_fork(&m->q, fresh);
	topn_forget(&m->top);
	topn_forget(&m->closing);
	zero_if_set(&m->closed, sizeof(m->closed));
	zero_if_set(&m->closed_count, sizeof(m->closed_count));
	/* The parent's held records are its own, not even mapped here
	 * (sbuf's MADV_DONTFORK): forgotten, not freed, and none of the
	 * child's records counts them. */
	zero_if_set(&m->held, sizeof(m->held));
	if (__atomic_load_n(&m->held_n, __ATOMIC_RELAXED))
		__atomic_store_n(&m->held_n, 0, __ATOMIC_RELAXED);
	if (__atomic_load_n(&m->flight_n, __ATOMIC_RELAXED))
		__atomic_store_n(&m->flight_n, 0, __ATOMIC_RELAXED);
	if (!fresh)
		memset(m->durable, 0, sizeof(*m->durable));
	zero_if_set(m->closed_unseen, sizeof(m->closed_unseen));
	if (m->prom)
		memset(m->prom, 0, sizeof(*m->prom));
	m->next_record_mono = now.mono_ns + m->cfg.interval_ms * 1000000ull;
	m->next_tick_mono = now.mono_ns;
	/* Stored one by one (atomically, so never merged): gcc merged these
	 * flags into one store of a constant it loaded from .rodata, a page
	 * a fork child has to fault in for it. */
	__atomic_store_n(&m->finished, false, __ATOMIC_RELAXED);
	/* (The parent's last batch is not the child's, nor its want of
	 * memory, noted maybe and not said yet.) */
	if (m->last_unmade)
		m->last_unmade = false;
	if (__atomic_load_n(&m->nomem_err, __ATOMIC_RELAXED))
		__atomic_store_n(&m->nomem_err, 0, __ATOMIC_RELAXED);
	/* The child's log is set up at its first write (meter_flush): a
	 * child that never writes (a pre-fork server's short-lived worker,
	 * an exec) pays nothing for it. */
	__atomic_store_n(&m->sink_stale, true, __ATOMIC_RELAXED);
	/* The parent's pinned log is in its ticker's fd table, not ours
	 * (read first: most children never write the sink's pages). */
	if (m->sink.pin) {
		m->sink.pin = 0;
		m->sink.pin_on = false;
	}
	__atomic_store_n(&m->ticker_wanted, false, __ATOMIC_RELAXED);
	/* Another thread of the parent's may have been closing at the fork:
	 * that close goes on in the parent only.  A word the host gave is
	 * the host's to zero (not read here: a wiped page read is a fault). */
	if (m->closes_inflight == &m->closes_own)
		for (i = 0; i < METER_INFLIGHT_STRIPES; i++)
			if (__atomic_load_n(&m->closes_own.stripe[i].n,
					    __ATOMIC_RELAXED))
				__atomic_store_n(&m->closes_own.stripe[i].n, 0,
						 __ATOMIC_RELAXED);
}
