/*
 * meter.c - metering state, close queue, ticks and records (contract in
 * meter.h).
 */
#include "meter.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define LOAD(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)

enum { SLOT_FREE, SLOT_WRITING, SLOT_READY };

/* Close records are drained at least this often, windows or not. */
#define DRAIN_NS 1000000000ull

static void *map_lazy(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	return p == MAP_FAILED ? NULL : p;
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
	unsigned k;
	int r;

	memset(m, 0, sizeof(*m));
	m->cfg = *cfg;
	m->acct = acct_bits(cfg);
	m->pid = pid;
	m->start = now;
	m->ns_per_tick = 1.0;
	m->report = report;
	m->ctx = ctx;
	snprintf(m->prog, sizeof(m->prog), "%s", prog);
	m->shape.nbuckets = cfg->buckets;
	m->shape.nspans = cfg->nspans;
	for (k = 0; k < cfg->nspans && k < WINDOW_MAX_SPANS; k++)
		m->shape.span[k] = cfg->span_buckets[k];

	r = fdtab_init(&m->tab, fd_cap);
	if (r)
		return r;
	m->queue = map_lazy(METER_QUEUE_CAP * sizeof(*m->queue));
	m->fds = map_lazy((size_t)m->tab.cap * sizeof(*m->fds));
	if (cfg->format == FORMAT_PROMETHEUS)
		m->prom = calloc(1, sizeof(*m->prom));
	if (!m->queue || !m->fds ||
	    (cfg->format == FORMAT_PROMETHEUS && !m->prom)) {
		meter_destroy(m);
		return -ENOMEM;
	}
	m->next_record_mono = now.mono_ns + cfg->interval_ms * 1000000ull;
	m->next_tick_mono = now.mono_ns;
	if (m->prom && strcmp(m->cfg.log_path, CONFIG_DEFAULT_LOG) == 0)
		snprintf(m->cfg.log_path, sizeof(m->cfg.log_path), "%s",
			 CONFIG_DEFAULT_PROM);
	sink_init(&m->sink, m->cfg.log_path, pid, m->prog,
		  now.real_ns / 1000000000ull, report, ctx);
	return 0;
}

static void free_windows(struct meter *m)
{
	uint32_t fd;

	if (!m->fds)
		return;
	for (fd = 0; fd < m->tab.cap && fd < LOAD(&m->tab.high); fd++) {
		free(m->fds[fd].win);
		free(m->fds[fd].carry);
		m->fds[fd].win = NULL;
		m->fds[fd].carry = NULL;
	}
}

void meter_destroy(struct meter *m)
{
	free_windows(m);
	if (m->fds)
		munmap(m->fds, (size_t)m->tab.cap * sizeof(*m->fds));
	if (m->queue)
		munmap(m->queue, METER_QUEUE_CAP * sizeof(*m->queue));
	free(m->scratch);
	free(m->closing);
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

/* --- the close queue: many producers, the ticker consumes ------------- */

static void add_atomic(struct fd_counters *dst, const struct fd_counters *src)
{
	uint64_t *d = (uint64_t *)dst;
	const uint64_t *s = (const uint64_t *)src;
	size_t i;

	for (i = 0; i < sizeof(*dst) / sizeof(uint64_t); i++)
		if (s[i])
			__atomic_fetch_add(&d[i], s[i], __ATOMIC_RELAXED);
}

static void enqueue(struct meter *m, const struct fd_snapshot *s,
		    uint64_t real_ns)
{
	uint64_t head = LOAD(&m->q_head);
	struct meter_retired *e;

	__atomic_fetch_add(&m->fds_closed, 1, __ATOMIC_RELAXED);
	do {
		if (head - LOAD(&m->q_tail) >= METER_QUEUE_CAP) {
			/* Full: keep the numbers, lose only the record. */
			add_atomic(&m->dropped, &s->c);
			__atomic_fetch_add(&m->close_dropped, 1,
					   __ATOMIC_RELAXED);
			if (m->prom && (unsigned)s->kind < KIND_COUNT) {
				add_atomic(&m->prom->dropped[s->kind], &s->c);
				__atomic_fetch_add(&m->prom->dropped_n[s->kind],
						   1, __ATOMIC_RELAXED);
			}
			return;
		}
	} while (!__atomic_compare_exchange_n(&m->q_head, &head, head + 1,
					      true, __ATOMIC_ACQ_REL,
					      __ATOMIC_ACQUIRE));
	e = &m->queue[head % METER_QUEUE_CAP];
	STORE(&e->state, SLOT_WRITING);
	e->s = *s;
	e->closed_ns = real_ns;
	STORE(&e->state, SLOT_READY);
}

void meter_opened(struct meter *m, int fd, enum fd_kind kind,
		  uint64_t real_ns, const struct fd_addr *local,
		  const struct fd_addr *peer)
{
	struct fd_snapshot stale;

	if (fdtab_open(&m->tab, fd, meter_track_kind(m, kind), real_ns, local,
		       peer, &stale))
		enqueue(m, &stale, real_ns);
}

void meter_set_addrs(struct meter *m, int fd, const struct fd_addr *local,
		     const struct fd_addr *peer)
{
	fdtab_set_addrs(&m->tab, fd, local, peer);
}

void meter_closed(struct meter *m, int fd, uint64_t real_ns)
{
	struct fd_snapshot s;

	if (fdtab_retire(&m->tab, fd, &s))
		enqueue(m, &s, real_ns);
}

/* --- ticks ------------------------------------------------------------- */

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

/* Bring the ticker's memory of fd up to date with snapshot s.  Without
 * memory for its window, an fd simply has no rates. */
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

/* True when a 32-bit slot counter (errors, sizes) has reached 2^31. */
static bool needs_fold(const struct fd_counters *c)
{
	const uint64_t *e = &c->errors[0][0], *z = &c->sizes[0][0];
	unsigned i;

	for (i = 0; i < DIR_COUNT * ERR_COUNT; i++)
		if (e[i] >= (1u << 31))
			return true;
	for (i = 0; i < DIR_COUNT * SIZE_BUCKETS; i++)
		if (z[i] >= (1u << 31))
			return true;
	return false;
}

/* Move what fdtab_fold takes out of the 32-bit slot counters into the
 * fd's carry, keeping the snapshot s (taken before) equal to the truth. */
static void fold(struct meter *m, struct meter_fdstate *st,
		 struct fd_snapshot *s)
{
	struct fd_counters moved;
	uint64_t *a = (uint64_t *)&moved, *b = (uint64_t *)&s->c;
	size_t i;

	if (!st->carry)
		st->carry = calloc(1, sizeof(*st->carry));
	if (!st->carry)
		return;
	memset(&moved, 0, sizeof(moved));
	fdtab_fold(&m->tab, s->fd, s->gen, &moved);
	fd_counters_add(st->carry, &moved);
	for (i = 0; i < sizeof(moved) / sizeof(uint64_t); i++)
		b[i] -= a[i];
}

/* Put the bytes moved since the last boundary into bucket done. */
static void close_bucket(struct meter *m, struct meter_fdstate *st,
			 const struct fd_snapshot *s, uint64_t done)
{
	if (!st->win)
		st->win = malloc(window_bytes(&m->shape));
	if (!st->win)
		return;
	if (!st->windowed) {
		window_reset(st->win, &m->shape, done);
		st->windowed = true;
	}
	window_add(st->win, &m->shape, done,
		   s->c.bytes[DIR_IN] - st->bytes[DIR_IN],
		   s->c.bytes[DIR_OUT] - st->bytes[DIR_OUT]);
	st->bytes[DIR_IN] = s->c.bytes[DIR_IN];
	st->bytes[DIR_OUT] = s->c.bytes[DIR_OUT];
}

/*
 * Bring the ticker's memory of fd up to date with snapshot s, and make s
 * whole: the carries of its 32-bit counters are added in.  boundary: this
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
		struct fd_counters *carry = st->carry;

		memset(st, 0, sizeof(*st));
		st->win = win;
		st->carry = carry;
		if (carry)
			memset(carry, 0, sizeof(*carry));
		st->known = true;
		st->gen = s->gen;
	}
	if (needs_fold(&s->c))
		fold(m, st, s);
	if (st->carry)
		fd_counters_add(&s->c, st->carry);
	finish_counters(m, &s->c);
	if (boundary && m->cfg.category[CAT_WINDOWS])
		close_bucket(m, st, s, done);
	act = activity_of(&s->c);
	if (act != st->activity)
		st->last_active_ns = now.real_ns;
	st->activity = act;
}

static void fill_rates(const struct meter *m, const struct meter_fdstate *st,
		       struct summary_fd *f)
{
	double width_s = (double)m->cfg.bucket_ms / 1000.0;
	unsigned k, d;

	f->have_rates = m->cfg.category[CAT_WINDOWS] && st->win && st->windowed;
	if (!f->have_rates)
		return;
	for (k = 0; k < m->shape.nspans; k++) {
		double secs = (double)window_covered(st->win, &m->shape, k) *
			      width_s;

		for (d = 0; d < DIR_COUNT; d++)
			f->rate[k][d] =
				(double)window_sum(st->win, k, d) / secs;
	}
}

/* Make room for need entries in a summary_fd array grown by doubling. */
static bool grow(struct summary_fd **arr, uint32_t *cap, uint32_t need)
{
	struct summary_fd *p;
	uint32_t n = *cap ? *cap : 64;

	if (need <= *cap)
		return true;
	while (n < need)
		n *= 2;
	p = realloc(*arr, (size_t)n * sizeof(*p));
	if (!p)
		return false;
	*arr = p;
	*cap = n;
	return true;
}

/* Busiest first: the shortest span's rate, or bytes since the last record
 * when windows are off; ties by fd number, so output is stable. */
static int by_rank(const void *a, const void *b)
{
	const struct summary_fd *x = a, *y = b;

	if (x->rank != y->rank)
		return x->rank < y->rank ? 1 : -1;
	return (x->s.fd > y->s.fd) - (x->s.fd < y->s.fd);
}

/* When a retired connection was last active: the ticker's memory of it,
 * or the close itself when it moved something since the last tick. */
static uint64_t last_active_at_close(const struct meter *m,
				     const struct meter_retired *e)
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

/* A retired connection's numbers are only whole with the carries its
 * 32-bit counters gave the ticker; they leave with it. */
static void add_carry(struct meter *m, struct fd_snapshot *s)
{
	struct meter_fdstate *st;

	if (s->fd < 0 || (uint32_t)s->fd >= m->tab.cap)
		return;
	st = &m->fds[s->fd];
	if (!st->carry || !st->known || st->gen != s->gen)
		return;
	fd_counters_add(&s->c, st->carry);
	memset(st->carry, 0, sizeof(*st->carry));
}

static void prom_add_peer(struct prom_peers *t, const struct fd_snapshot *s)
{
	char host[PROM_HOST_MAX];

	prom_peer_host(&s->peer, host, sizeof(host));
	prom_peers_add(t, host, s->c.bytes[DIR_IN], s->c.bytes[DIR_OUT]);
}

/* A closed connection's share of the per-kind and per-peer numbers. */
static void prom_closed(struct meter *m, const struct fd_snapshot *s)
{
	if ((unsigned)s->kind >= KIND_COUNT)
		return;
	fd_counters_add(&m->prom->closed[s->kind], &s->c);
	m->prom->closed_n[s->kind]++;
	prom_add_peer(&m->prom->peers, s);
}

/* Start the exposition with what closed connections left. */
static void prom_begin(struct meter *m, struct meter_time now)
{
	struct meter_prom *p = m->prom;
	struct prom_data *d = &p->data;
	unsigned k;

	memset(d, 0, sizeof(*d));
	d->prog = m->prog;
	d->pid = m->pid;
	d->start_ns = m->start.real_ns;
	d->ts_ns = now.real_ns;
	d->peers = p->peers;
	for (k = 0; k < KIND_COUNT; k++) {
		struct fd_counters dropped = p->dropped[k];

		finish_counters(m, &dropped);
		d->kind[k] = p->closed[k];
		fd_counters_add(&d->kind[k], &dropped);
		d->fds_closed[k] = p->closed_n[k] + LOAD(&p->dropped_n[k]);
	}
}

/* An open connection's share. */
static void prom_live(struct meter *m, struct summary_fd *f)
{
	struct prom_data *d = &m->prom->data;
	unsigned k, dir;

	if ((unsigned)f->s.kind >= KIND_COUNT)
		return;
	fd_counters_add(&d->kind[f->s.kind], &f->s.c);
	d->fds_open[f->s.kind]++;
	prom_add_peer(&d->peers, &f->s);
	if (!f->have_rates)
		return;
	d->have_rates = true;
	for (k = 0; k < m->shape.nspans; k++)
		for (dir = 0; dir < DIR_COUNT; dir++)
			d->rate[k][dir] += f->rate[k][dir];
}

/*
 * Move the ready close records out of the queue into m->closing and their
 * numbers into the closed totals.  Returns how many there were (records
 * that did not fit in memory are counted as dropped).
 */
static uint32_t drain(struct meter *m)
{
	uint64_t tail = m->q_tail;
	uint32_t n = 0;

	for (;; tail++) {
		struct meter_retired *e = &m->queue[tail % METER_QUEUE_CAP];
		struct summary_fd *f;

		if (LOAD(&e->state) != SLOT_READY)
			break;
		add_carry(m, &e->s);
		finish_counters(m, &e->s.c);
		fd_counters_add(&m->closed, &e->s.c);
		if (m->prom)
			prom_closed(m, &e->s);
		if (grow(&m->closing, &m->closing_cap, n + 1)) {
			f = &m->closing[n++];
			memset(f, 0, sizeof(*f));
			f->s = e->s;
			f->closed_ns = e->closed_ns;
			f->last_active_ns = last_active_at_close(m, e);
		} else {
			m->close_dropped++;
		}
		STORE(&e->state, SLOT_FREE);
		STORE(&m->q_tail, tail + 1);
	}
	return n;
}

void meter_build(struct meter *m, enum summary_type type,
		 struct meter_time now, struct summary *r)
{
	const uint64_t *s = (const uint64_t *)&m->dropped;
	struct fd_counters dropped;
	uint64_t *d = (uint64_t *)&dropped;
	size_t i;

	memset(r, 0, sizeof(*r));
	r->type = type;
	r->ts_ns = now.real_ns;
	r->pid = m->pid;
	r->prog = m->prog;
	r->start_ns = m->start.real_ns;
	/* Dropped close records left raw slot numbers behind. */
	for (i = 0; i < sizeof(dropped) / sizeof(uint64_t); i++)
		d[i] = __atomic_load_n(&s[i], __ATOMIC_RELAXED);
	finish_counters(m, &dropped);
	r->totals = m->closed;
	fd_counters_add(&r->totals, &dropped);
	r->fds_closed = LOAD(&m->fds_closed);
	r->close_dropped = LOAD(&m->close_dropped);
}

/*
 * Sample every tracked fd into its window and add it to r's totals.  With
 * collect, also gather into m->scratch the fds that belong in the record
 * (all open ones, or those active since the last record).  Returns how
 * many were gathered.
 */
/* a ranks below b: lower rate, or equal rate and higher fd. */
static bool ranks_below(const struct summary_fd *a, const struct summary_fd *b)
{
	return a->rank < b->rank || (a->rank == b->rank && a->s.fd > b->s.fd);
}

static void swap_fd(struct summary_fd *a, struct summary_fd *b)
{
	struct summary_fd t = *a;

	*a = *b;
	*b = t;
}

/* Restore the min-heap (lowest rank at the root) below index i. */
static void sift_down(struct summary_fd *h, uint32_t n, uint32_t i)
{
	for (;;) {
		uint32_t l = 2 * i + 1, r = l + 1, low = i;

		if (l < n && ranks_below(&h[l], &h[low]))
			low = l;
		if (r < n && ranks_below(&h[r], &h[low]))
			low = r;
		if (low == i)
			return;
		swap_fd(&h[i], &h[low]);
		i = low;
	}
}

/*
 * The slot in m->scratch for a record entry of the given rank, keeping
 * only the `limit` busiest (0: all) as a min-heap, so memory stays bounded
 * by the top-N limit however many fds are active.  NULL: not kept.
 */
static struct summary_fd *keep(struct meter *m, uint32_t *n, uint32_t limit,
			       const struct summary_fd *cand)
{
	struct summary_fd *h;
	uint32_t i;

	if (limit && *n == limit) {
		if (!ranks_below(&m->scratch[0], cand))
			return NULL;
		m->scratch[0] = *cand;
		sift_down(m->scratch, *n, 0);
		return m->scratch;
	}
	if (!grow(&m->scratch, &m->scratch_cap, *n + 1))
		return NULL;
	h = m->scratch;
	i = (*n)++;
	h[i] = *cand;
	while (i > 0 && ranks_below(&h[i], &h[(i - 1) / 2])) {
		swap_fd(&h[i], &h[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
	return h;
}

/*
 * Sample every tracked fd into its window and add it to r's totals.  With
 * collect, also gather into m->scratch the busiest of the fds that belong
 * in the record (all open ones, or those active since the last record);
 * r->omitted counts the others.  Returns how many were gathered.
 */
static uint32_t sample_all(struct meter *m, struct meter_time now,
			   struct summary *r, bool collect, bool all)
{
	uint32_t fd, high = LOAD(&m->tab.high), n = 0, seen = 0;
	uint64_t bucket = bucket_of(m, now.mono_ns);
	bool boundary = bucket > m->last_bucket;
	struct summary_fd cand;

	m->last_bucket = bucket;

	for (fd = 0; fd < high; fd++) {
		struct meter_fdstate *st = &m->fds[fd];
		uint64_t moved;

		if (!fdtab_snapshot(&m->tab, (int)fd, &cand.s))
			continue;
		sample_fd(m, &cand.s, now, boundary);
		fd_counters_add(&r->totals, &cand.s.c);
		r->fds_open++;
		if (m->prom) {
			fill_rates(m, st, &cand);
			prom_live(m, &cand);
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
		keep(m, &n, m->cfg.top, &cand);
	}
	r->omitted = seen - n;
	return n;
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
	uint32_t nclosed = drain(m), n, i;
	struct summary r, rc;

	meter_build(m, type, now, &r);
	if (m->prom) {
		/* A whole snapshot per record; no close records. */
		prom_begin(m, now);
		sample_all(m, now, &r, false, false);
		if (record && (r.fds_open || r.fds_closed))
			prom_format(&m->prom->data, &m->cfg, out);
		return;
	}
	n = sample_all(m, now, &r, record, type == SUMMARY_EXIT);
	for (i = 0; i < nclosed; i++) {
		rc = r;
		rc.type = SUMMARY_CLOSE;
		rc.fds = &m->closing[i];
		rc.nfds = 1;
		summary_format(&rc, &m->cfg, out);
	}
	/* A process that never had a tracked fd (a shell, ls...) leaves no
	 * log behind at all. */
	if (!record || (type == SUMMARY_EXIT && r.fds_open == 0 &&
			r.fds_closed == 0))
		return;
	if (n > 1)
		qsort(m->scratch, n, sizeof(*m->scratch), by_rank);
	r.fds = m->scratch;
	r.nfds = n;
	summary_format(&r, &m->cfg, out);
}

static void flush(struct meter *m, struct sbuf *out)
{
	if (out->len && m->prom)
		sink_replace(&m->sink, out->p, out->len);
	else if (out->len)
		sink_write(&m->sink, out->p, out->len);
	sbuf_free(out);
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

uint64_t meter_tick(struct meter *m, struct meter_time now)
{
	struct sbuf out = { 0 };
	bool due = now.mono_ns >= m->next_record_mono;

	if (m->finished || !m->tab.cap)
		return now.mono_ns + DRAIN_NS;
	run(m, now, due ? SUMMARY_INTERVAL : SUMMARY_CLOSE, &out);
	while (m->next_record_mono <= now.mono_ns)
		m->next_record_mono += m->cfg.interval_ms * 1000000ull;
	flush(m, &out);
	m->next_tick_mono = next_tick(m, now.mono_ns);
	return m->next_tick_mono;
}

void meter_exit(struct meter *m, struct meter_time now)
{
	struct sbuf out = { 0 };

	if (m->finished || !m->tab.cap)
		return;
	run(m, now, SUMMARY_EXIT, &out);
	flush(m, &out);
	m->finished = true;
	/* No tick will come again: the per-fd windows can go now (and leak
	 * checkers see nothing left behind). */
	free_windows(m);
}

void meter_after_fork(struct meter *m, long pid, struct meter_time now)
{
	uint32_t fd;

	if (!m->tab.cap)
		return;
	m->pid = pid;
	m->start = now;
	m->last_bucket = 0;
	fdtab_forget_all(&m->tab);
	for (fd = 0; fd < LOAD(&m->tab.high); fd++)
		m->fds[fd].known = false;
	/* Only the parent's pending entries are touched: the rest of the
	 * queue may never have been paged in. */
	for (; m->q_tail < m->q_head; m->q_tail++)
		m->queue[m->q_tail % METER_QUEUE_CAP].state = SLOT_FREE;
	m->q_head = m->q_tail = 0;
	m->fds_closed = 0;
	m->close_dropped = 0;
	memset(&m->dropped, 0, sizeof(m->dropped));
	memset(&m->closed, 0, sizeof(m->closed));
	if (m->prom)
		memset(m->prom, 0, sizeof(*m->prom));
	m->next_record_mono = now.mono_ns + m->cfg.interval_ms * 1000000ull;
	m->next_tick_mono = now.mono_ns;
	m->finished = false;
	sink_init(&m->sink, m->cfg.log_path, pid, m->prog,
		  now.real_ns / 1000000000ull, m->report, m->ctx);
}
