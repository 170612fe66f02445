/*
 * prom.c - Prometheus text exposition (contract in prom.h).
 */
#include "prom.h"

#include "classify.h"

#include <arpa/inet.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void prom_peer_host(const struct fd_addr *a, char *buf, size_t cap)
{
	size_t n;

	buf[0] = '\0';
	if (!a || a->len < sizeof(sa_family_t))
		return;
	if (a->u.sa.sa_family == AF_INET) {
		inet_ntop(AF_INET, &a->u.in4.sin_addr, buf, (socklen_t)cap);
	} else if (a->u.sa.sa_family == AF_INET6) {
		inet_ntop(AF_INET6, &a->u.in6.sin6_addr, buf, (socklen_t)cap);
		n = strlen(buf);
		if (a->u.in6.sin6_scope_id && n < cap)
			snprintf(buf + n, cap - n, "%%%u",
				 (unsigned)a->u.in6.sin6_scope_id);
	} else {
		/* A unix path or name, or family:N: no port to take off. */
		fd_addr_format(a, buf, cap);
	}
}

/* The index of host's entry in t, or t->n. */
static uint32_t peer_find(const struct prom_peers *t, const char *host)
{
	uint32_t i;

	for (i = 0; i < t->n; i++)
		if (strcmp(t->p[i].host, host) == 0)
			break;
	return i;
}

void prom_peers_add(struct prom_peers *t, const char *host, uint64_t in,
		    uint64_t out)
{
	uint32_t i;

	if (in == 0 && out == 0)
		return;
	i = peer_find(t, host);
	if (i == t->n && t->n < PROM_MAX_PEERS) {
		snprintf(t->p[i].host, sizeof(t->p[i].host), "%s", host);
		t->p[i].bytes[DIR_IN] = t->p[i].bytes[DIR_OUT] = 0;
		t->n++;
	}
	if (i == t->n) {
		t->other[DIR_IN] += in;
		t->other[DIR_OUT] += out;
		return;
	}
	t->p[i].bytes[DIR_IN] += in;
	t->p[i].bytes[DIR_OUT] += out;
}

/* A label value: backslash, quote and newline escaped, and valid UTF-8,
 * as the exposition format requires (a byte that is not, from a unix
 * socket path or a program name, becomes U+FFFD: one such byte made
 * node_exporter drop the whole file). */
static void label(struct sbuf *b, const char *v)
{
	const unsigned char *s = (const unsigned char *)v;
	size_t n = strlen(v), i = 0, u;

	while (i < n) {
		if (s[i] == '\\' || s[i] == '"') {
			sbuf_addf(b, "\\%c", s[i++]);
		} else if (s[i] == '\n') {
			sbuf_addf(b, "\\n");
			i++;
		} else if (s[i] < 0x80) {
			sbuf_addf(b, "%c", s[i++]);
		} else if ((u = summary_utf8_len(s + i, n - i)) > 0) {
			sbuf_addf(b, "%.*s", (int)u, v + i);
			i += u;
		} else {
			sbuf_addf(b, "\xef\xbf\xbd");
			i++;
		}
	}
}

/* The labels every series starts with. */
static void base(struct sbuf *b, const char *name, const struct prom_data *d)
{
	sbuf_addf(b, "%s{prog=\"", name);
	label(b, d->prog);
	sbuf_addf(b, "\",pid=\"%ld\"", d->pid);
}

static void head(struct sbuf *b, const char *name, const char *type,
		 const char *help)
{
	sbuf_addf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static const char *const dirs[DIR_COUNT] = { "in", "out" };
static const char *const errs[ERR_COUNT] = { "again", "intr", "other" };

/* One counter per kind (and direction) from the fd_counters field at
 * offset off (a [DIR_COUNT] array of uint64_t). */
_Static_assert(sizeof(((struct fd_counters *)0)->bytes) ==
			       DIR_COUNT * sizeof(uint64_t) &&
		       sizeof(((struct fd_counters *)0)->calls) ==
			       DIR_COUNT * sizeof(uint64_t),
	       "per_kind reads bytes and calls as [DIR_COUNT] uint64_t");
static void per_kind(struct sbuf *b, const struct prom_data *d,
		     const char *name, size_t off)
{
	unsigned k, dir;

	for (k = KIND_FIRST_TRACKED; k < KIND_COUNT; k++) {
		const uint64_t *v =
			(const uint64_t *)((const char *)&d->kind[k] + off);

		if (!d->fds_open[k] && !d->fds_closed[k])
			continue;
		for (dir = 0; dir < DIR_COUNT; dir++) {
			base(b, name, d);
			sbuf_addf(b, ",kind=\"%s\",direction=\"%s\"} %" PRIu64
				     "\n",
				  fd_kind_name((enum fd_kind)k), dirs[dir],
				  v[dir]);
		}
	}
}

static void per_kind_seconds(struct sbuf *b, const struct prom_data *d)
{
	unsigned k, dir;

	for (k = KIND_FIRST_TRACKED; k < KIND_COUNT; k++) {
		if (!d->fds_open[k] && !d->fds_closed[k])
			continue;
		for (dir = 0; dir < DIR_COUNT; dir++) {
			base(b, "sockmeter_call_seconds_total", d);
			sbuf_addf(b, ",kind=\"%s\",direction=\"%s\"} %.9f\n",
				  fd_kind_name((enum fd_kind)k), dirs[dir],
				  (double)d->kind[k].latency_ns[dir] / 1e9);
		}
	}
}

static void errors(struct sbuf *b, const struct prom_data *d)
{
	unsigned k, dir, e;

	head(b, "sockmeter_errors_total", "counter",
	     "Failed data calls, by fd kind, direction and class.");
	for (k = KIND_FIRST_TRACKED; k < KIND_COUNT; k++) {
		if (!d->fds_open[k] && !d->fds_closed[k])
			continue;
		for (dir = 0; dir < DIR_COUNT; dir++)
			for (e = 0; e < ERR_COUNT; e++) {
				base(b, "sockmeter_errors_total", d);
				sbuf_addf(b,
					  ",kind=\"%s\",direction=\"%s\","
					  "class=\"%s\"} %" PRIu64 "\n",
					  fd_kind_name((enum fd_kind)k),
					  dirs[dir], errs[e],
					  d->kind[k].errors[dir][e]);
			}
	}
}

static void fds(struct sbuf *b, const struct prom_data *d)
{
	unsigned k;

	head(b, "sockmeter_fds_open", "gauge",
	     "Metered fds open now, by kind.");
	for (k = KIND_FIRST_TRACKED; k < KIND_COUNT; k++)
		if (d->fds_open[k] || d->fds_closed[k]) {
			base(b, "sockmeter_fds_open", d);
			sbuf_addf(b, ",kind=\"%s\"} %" PRIu64 "\n",
				  fd_kind_name((enum fd_kind)k),
				  d->fds_open[k]);
		}
	head(b, "sockmeter_fds_closed_total", "counter",
	     "Metered fds closed, by kind.");
	for (k = KIND_FIRST_TRACKED; k < KIND_COUNT; k++)
		if (d->fds_open[k] || d->fds_closed[k]) {
			base(b, "sockmeter_fds_closed_total", d);
			sbuf_addf(b, ",kind=\"%s\"} %" PRIu64 "\n",
				  fd_kind_name((enum fd_kind)k),
				  d->fds_closed[k]);
		}
}

static int by_bytes(const void *a, const void *b)
{
	const struct prom_peer *x = a, *y = b;
	uint64_t bx = x->bytes[0] + x->bytes[1], by = y->bytes[0] + y->bytes[1];

	if (bx != by)
		return bx < by ? 1 : -1;
	return strcmp(x->host, y->host);
}

static void peers(struct sbuf *b, const struct prom_data *d)
{
	struct prom_peers t = d->peers;
	uint32_t keep = t.n, i;
	unsigned dir;

	qsort(t.p, t.n, sizeof(t.p[0]), by_bytes);
	head(b, "sockmeter_peer_bytes_total", "counter",
	     "Bytes by peer host (up to top hosts by name, named for good; "
	     "the rest as other).");
	for (i = 0; i <= keep; i++)
		for (dir = 0; dir < DIR_COUNT; dir++) {
			const char *host = i < keep ? t.p[i].host : "other";
			uint64_t v = i < keep ? t.p[i].bytes[dir] : t.other[dir];

			base(b, "sockmeter_peer_bytes_total", d);
			sbuf_addf(b, ",peer=\"");
			label(b, host[0] ? host : "unknown");
			sbuf_addf(b, "\",direction=\"%s\"} %" PRIu64 "\n",
				  dirs[dir], v);
		}
}

static void rates(struct sbuf *b, const struct prom_data *d,
		  const struct config *c)
{
	char span[32];
	unsigned k, dir;

	head(b, "sockmeter_rate_bytes_per_second", "gauge",
	     "Bytes per second over each span, all open fds together.");
	for (k = 0; k < c->nspans; k++)
		for (dir = 0; dir < DIR_COUNT; dir++) {
			summary_span_label(c, k, span, sizeof(span));
			base(b, "sockmeter_rate_bytes_per_second", d);
			sbuf_addf(b, ",span=\"%s\",direction=\"%s\"} %.1f\n",
				  span, dirs[dir], d->rate[k][dir]);
		}
}

/* --- the kernel's TCP figures (tcp_info category) ----------------------- */

/* Upper bounds of the rtt histogram's buckets, seconds (+Inf after). */
static const double rtt_le[PROM_RTT_BUCKETS] = { 0.0001, 0.0005, 0.001,
						 0.005,	 0.01,	 0.05,
						 0.1,	 0.5 };

void prom_tcp_add(struct prom_tcp *t, const struct fd_snapshot *s,
		  bool closed)
{
	const struct tcpinfo *ti = &s->ti;
	uint64_t unseen[DIR_COUNT];
	unsigned i;

	/* A listening socket has no rtt nor bytes of its own. */
	if (s->kind != KIND_TCP || !(ti->have & TI_BASE) ||
	    ti->state == TCPINFO_LISTEN)
		return;
	t->connections++;
	t->retrans_segments += ti->total_retrans;
	t->retrans_bytes += ti->bytes_retrans;
	t->busy_us += ti->busy_us;
	t->rwnd_limited_us += ti->rwnd_limited_us;
	t->sndbuf_limited_us += ti->sndbuf_limited_us;
	/* Unseen bytes of closed connections only.  An open one's difference
	 * between the kernel's count and ours also holds what a call under
	 * way has moved and not returned yet (a long send, a recv about to
	 * return): it comes and goes, and a counter that showed it would go
	 * down when the call returns (4,781 to 0 in a busy run).  At the
	 * close every call has returned: what is left was unseen. */
	if (!closed)
		return;
	if (tcpinfo_unseen(ti, s->c.bytes[DIR_IN], s->c.bytes[DIR_OUT],
			   unseen)) {
		t->unseen[DIR_IN] += unseen[DIR_IN];
		t->unseen[DIR_OUT] += unseen[DIR_OUT];
	}
	for (i = 0; i < PROM_RTT_BUCKETS; i++)
		if ((double)ti->rtt_us / 1e6 <= rtt_le[i])
			t->rtt_le[i]++;
	t->rtt_count++;
	t->rtt_sum_s += (double)ti->rtt_us / 1e6;
}

static void tcp_counter(struct sbuf *b, const struct prom_data *d,
			const char *name, const char *extra, uint64_t v)
{
	base(b, name, d);
	sbuf_addf(b, ",kind=\"tcp\"%s} %" PRIu64 "\n", extra, v);
}

static void tcp_seconds(struct sbuf *b, const struct prom_data *d,
			const char *reason, uint64_t us)
{
	base(b, "sockmeter_tcp_limited_seconds_total", d);
	sbuf_addf(b, ",kind=\"tcp\",reason=\"%s\"} %.6f\n", reason,
		  (double)us / 1e6);
}

static void tcp_metrics(struct sbuf *b, const struct prom_data *d,
			bool bytes)
{
	const struct prom_tcp *t = &d->tcp;
	unsigned i;

	head(b, "sockmeter_tcp_retransmitted_bytes_total", "counter",
	     "Bytes the kernel retransmitted (tcpi_bytes_retrans), by fd kind.");
	tcp_counter(b, d, "sockmeter_tcp_retransmitted_bytes_total", "",
		    t->retrans_bytes);
	head(b, "sockmeter_tcp_retransmitted_segments_total", "counter",
	     "Segments the kernel retransmitted (tcpi_total_retrans).");
	tcp_counter(b, d, "sockmeter_tcp_retransmitted_segments_total", "",
		    t->retrans_segments);
	head(b, "sockmeter_tcp_limited_seconds_total", "counter",
	     "Time TCP senders spent busy (sending, whatever limited it), "
	     "limited by the receive window, limited by the send buffer.");
	tcp_seconds(b, d, "busy", t->busy_us);
	tcp_seconds(b, d, "rwnd", t->rwnd_limited_us);
	tcp_seconds(b, d, "sndbuf", t->sndbuf_limited_us);
	if (bytes)
		head(b, "sockmeter_bytes_unseen_total", "counter",
		     "Bytes the kernel moved for the application that no "
		     "wrapped call saw (io_uring, raw system calls), by "
		     "direction.");
	for (i = 0; bytes && i < DIR_COUNT; i++) {
		char extra[32];

		snprintf(extra, sizeof(extra), ",direction=\"%s\"", dirs[i]);
		tcp_counter(b, d, "sockmeter_bytes_unseen_total", extra,
			    t->unseen[i]);
	}
	head(b, "sockmeter_tcp_rtt_seconds", "histogram",
	     "Smoothed round-trip time of closed TCP connections.");
	for (i = 0; i < PROM_RTT_BUCKETS; i++) {
		base(b, "sockmeter_tcp_rtt_seconds_bucket", d);
		sbuf_addf(b, ",le=\"%g\"} %" PRIu64 "\n", rtt_le[i],
			  t->rtt_le[i]);
	}
	base(b, "sockmeter_tcp_rtt_seconds_bucket", d);
	sbuf_addf(b, ",le=\"+Inf\"} %" PRIu64 "\n", t->rtt_count);
	base(b, "sockmeter_tcp_rtt_seconds_sum", d);
	sbuf_addf(b, "} %.6f\n", t->rtt_sum_s);
	base(b, "sockmeter_tcp_rtt_seconds_count", d);
	sbuf_addf(b, "} %" PRIu64 "\n", t->rtt_count);
}

void prom_format(const struct prom_data *d, const struct config *c,
		 struct sbuf *out)
{
	head(out, "sockmeter_start_time_seconds", "gauge",
	     "When metering started in the process (Unix seconds).");
	base(out, "sockmeter_start_time_seconds", d);
	sbuf_addf(out, "} %.3f\n", (double)d->start_ns / 1e9);
	head(out, "sockmeter_last_update_timestamp_seconds", "gauge",
	     "When sockmeter wrote this file (Unix seconds).");
	base(out, "sockmeter_last_update_timestamp_seconds", d);
	sbuf_addf(out, "} %.3f\n", (double)d->ts_ns / 1e9);
	fds(out, d);
	if (c->category[CAT_BYTES]) {
		head(out, "sockmeter_bytes_total", "counter",
		     "Bytes moved by data calls, by fd kind and direction.");
		per_kind(out, d, "sockmeter_bytes_total",
			 offsetof(struct fd_counters, bytes));
	}
	if (c->category[CAT_CALLS]) {
		head(out, "sockmeter_calls_total", "counter",
		     "Data calls, failed ones included, by fd kind and "
		     "direction.");
		per_kind(out, d, "sockmeter_calls_total",
			 offsetof(struct fd_counters, calls));
	}
	if (c->category[CAT_ERRORS])
		errors(out, d);
	if (c->category[CAT_LATENCY]) {
		head(out, "sockmeter_call_seconds_total", "counter",
		     "Time spent inside data calls, by fd kind and "
		     "direction.");
		per_kind_seconds(out, d);
	}
	if (c->category[CAT_PEERS] && c->category[CAT_BYTES])
		peers(out, d);
	if (c->category[CAT_WINDOWS] && d->have_rates)
		rates(out, d, c);
	if (c->category[CAT_TCP_INFO] && d->tcp.connections)
		tcp_metrics(out, d, c->category[CAT_BYTES]);
}

/* --- adding up an exposition, tick by tick ----------------------------- */

/* A peer's label: its name when known (the table of peers stays
 * bounded), else its host. */
static void peer_label(struct names *names, const struct fd_snapshot *s,
		       char *host, size_t cap)
{
	uint64_t lookup_ns;

	if (!names || !names_find(names, &s->peer, host, cap, &lookup_ns))
		prom_peer_host(&s->peer, host, cap);
}

/* A closed connection's bytes: to its peer when named, else pending until
 * the next exposition names it or gives it to other. */
static void add_closed_peer(struct prom_agg *a, const struct fd_snapshot *s)
{
	char host[PROM_HOST_MAX];
	uint32_t i;
	unsigned d;

	peer_label(a->names, s, host, sizeof(host));
	i = peer_find(&a->peers, host);
	if (i == a->peers.n) {
		prom_peers_add(&a->pending, host, s->c.bytes[DIR_IN],
			       s->c.bytes[DIR_OUT]);
		return;
	}
	for (d = 0; d < DIR_COUNT; d++)
		a->peers.p[i].bytes[d] += s->c.bytes[d];
}

void prom_agg_closed(struct prom_agg *a, const struct fd_snapshot *s)
{
	if ((unsigned)s->kind >= KIND_COUNT)
		return;
	fd_counters_add(&a->closed[s->kind], &s->c);
	a->closed_n[s->kind]++;
	add_closed_peer(a, s);
	prom_tcp_add(&a->closed_tcp, s, true);
}

void prom_agg_begin(struct prom_agg *a,
		    const struct fd_counters dropped[KIND_COUNT],
		    const uint64_t dropped_n[KIND_COUNT], const char *prog,
		    long pid, uint64_t start_ns, uint64_t ts_ns)
{
	struct prom_data *d = &a->data;
	unsigned k;

	memset(d, 0, sizeof(*d));
	d->prog = prog;
	d->pid = pid;
	d->start_ns = start_ns;
	d->ts_ns = ts_ns;
	d->peers = a->peers;
	/* Closed since the last exposition, not named yet: candidates. */
	for (k = 0; k < a->pending.n; k++)
		prom_peers_add(&d->peers, a->pending.p[k].host,
			       a->pending.p[k].bytes[DIR_IN],
			       a->pending.p[k].bytes[DIR_OUT]);
	d->peers.other[DIR_IN] += a->pending.other[DIR_IN];
	d->peers.other[DIR_OUT] += a->pending.other[DIR_OUT];
	d->tcp = a->closed_tcp;
	for (k = 0; k < KIND_COUNT; k++) {
		d->kind[k] = a->closed[k];
		fd_counters_add(&d->kind[k], &dropped[k]);
		d->fds_closed[k] = a->closed_n[k] + dropped_n[k];
	}
}

void prom_agg_live(struct prom_agg *a, const struct summary_fd *f,
		   unsigned nspans)
{
	struct prom_data *d = &a->data;
	char host[PROM_HOST_MAX];
	unsigned k, dir;

	if ((unsigned)f->s.kind >= KIND_COUNT)
		return;
	fd_counters_add(&d->kind[f->s.kind], &f->s.c);
	d->fds_open[f->s.kind]++;
	/* A named peer's entry, or a candidate's appended after them. */
	peer_label(a->names, &f->s, host, sizeof(host));
	prom_peers_add(&d->peers, host, f->s.c.bytes[DIR_IN],
		       f->s.c.bytes[DIR_OUT]);
	prom_tcp_add(&d->tcp, &f->s, false);
	if (!f->have_rates)
		return;
	d->have_rates = true;
	for (k = 0; k < nspans && k < WINDOW_MAX_SPANS; k++)
		for (dir = 0; dir < DIR_COUNT; dir++)
			d->rate[k][dir] += f->rate[k][dir];
}

/* Name the candidates of d (entries after the named ones), busiest first,
 * while fewer than limit are named; the rest go to other for this
 * exposition (and stay unnamed: the table of names is then full). */
static void settle_names(struct prom_agg *a, uint32_t limit)
{
	struct prom_peers *t = &a->data.peers;
	uint32_t named = a->peers.n, i;
	unsigned d;

	qsort(t->p + named, t->n - named, sizeof(t->p[0]), by_bytes);
	for (i = named; i < t->n; i++) {
		/* What closed connections of this host left, not yet shown. */
		uint32_t j = peer_find(&a->pending, t->p[i].host);
		const uint64_t *closed = j < a->pending.n ? a->pending.p[j].bytes
							  : NULL;

		if (a->peers.n < limit) {
			struct prom_peer *p = &a->peers.p[a->peers.n++];

			/* Two tables of the same struct: no overlap. */
			memcpy(p->host, t->p[i].host, sizeof(p->host));
			for (d = 0; d < DIR_COUNT; d++)
				p->bytes[d] = closed ? closed[d] : 0;
			continue;
		}
		for (d = 0; d < DIR_COUNT; d++)
			t->other[d] += t->p[i].bytes[d];
	}
	t->n = a->peers.n;
	/* Shown now, by name or as other: what is still unnamed goes to
	 * other for good, and nothing is pending any more. */
	for (i = 0; i < a->pending.n; i++)
		if (peer_find(&a->peers, a->pending.p[i].host) == a->peers.n)
			for (d = 0; d < DIR_COUNT; d++)
				a->peers.other[d] += a->pending.p[i].bytes[d];
	for (d = 0; d < DIR_COUNT; d++)
		a->peers.other[d] += a->pending.other[d];
	memset(&a->pending, 0, sizeof(a->pending));
}

/* Keep *v at least *shown, and remember it. */
static void floor_u64(uint64_t *v, uint64_t *shown)
{
	if (*v < *shown)
		*v = *shown;
	*shown = *v;
}

/* No TCP counter shows less than it did: an open connection's kernel
 * figures are in them until its close, and a close whose TCP_INFO could
 * not be read (a sandboxed thread, a socket closed by another process
 * first) adds none, which took its figures back out. */
static void floor_tcp(struct prom_agg *a)
{
	struct prom_tcp *t = &a->data.tcp, *was = &a->tcp_shown;
	unsigned d;

	/* Once shown, the TCP series stay, even with no sample left. */
	floor_u64(&t->connections, &was->connections);
	floor_u64(&t->retrans_bytes, &was->retrans_bytes);
	floor_u64(&t->retrans_segments, &was->retrans_segments);
	floor_u64(&t->busy_us, &was->busy_us);
	floor_u64(&t->rwnd_limited_us, &was->rwnd_limited_us);
	floor_u64(&t->sndbuf_limited_us, &was->sndbuf_limited_us);
	for (d = 0; d < DIR_COUNT; d++)
		floor_u64(&t->unseen[d], &was->unseen[d]);
}

/* No peer series shows less than it did: a live connection's label can
 * change (its name resolved meanwhile), which would move its bytes from
 * one named series to another.  Named peers keep their index for good. */
static void floor_peers(struct prom_agg *a)
{
	struct prom_peers *t = &a->data.peers;
	uint32_t i;
	unsigned d;

	for (d = 0; d < DIR_COUNT; d++) {
		for (i = 0; i < t->n && i < PROM_MAX_PEERS; i++) {
			if (t->p[i].bytes[d] < a->peer_shown[i][d])
				t->p[i].bytes[d] = a->peer_shown[i][d];
			a->peer_shown[i][d] = t->p[i].bytes[d];
		}
		if (t->other[d] < a->other_shown[d])
			t->other[d] = a->other_shown[d];
		a->other_shown[d] = t->other[d];
	}
}

void prom_agg_format(struct prom_agg *a, const struct config *c,
		     struct sbuf *out)
{
	uint32_t limit = c->top && c->top < PROM_MAX_PEERS ? c->top
							   : PROM_MAX_PEERS;
	unsigned k, d;

	settle_names(a, limit);
	floor_peers(a);
	floor_tcp(a);
	for (k = 0; k < KIND_COUNT; k++)
		for (d = 0; d < DIR_COUNT; d++) {
			uint64_t *v = &a->data.kind[k].latency_ns[d];

			if (*v < a->latency_shown[k][d])
				*v = a->latency_shown[k][d];
			a->latency_shown[k][d] = *v;
		}
	prom_format(&a->data, c, out);
}
