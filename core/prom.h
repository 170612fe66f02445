/*
 * prom.h - the Prometheus / OpenMetrics text exposition of one process,
 * for node_exporter's textfile collector.
 *
 * Each write is a whole snapshot (the sink replaces the file atomically):
 * counters per fd kind and direction, open and closed fds per kind, the
 * process's rates, and bytes per peer host with bounded label cardinality
 * (up to `top` peers by name, the rest summed as peer="other").  Every
 * series carries prog and pid labels.  Metrics of a disabled category are
 * absent.  Every counter only ever grows for the life of the process
 * (Prometheus reads a decrease as a reset): a peer named once stays named,
 * so no traffic ever moves between a name and "other".
 */
#ifndef SOCKMETER_PROM_H
#define SOCKMETER_PROM_H

#include "../config/config.h"
#include "fdtab.h"
#include "names.h"
#include "summary.h"
#include "window.h"

#include <stdbool.h>
#include <stdint.h>

/* The kernel's TCP figures summed for the exposition (prom_tcp.c). */
#define PROM_RTT_BUCKETS 8
struct prom_tcp {
	uint64_t connections;      /* with a tcp_info sample */
	uint64_t retrans_bytes, retrans_segments;
	uint64_t busy_us, rwnd_limited_us, sndbuf_limited_us;
	uint64_t unseen[DIR_COUNT];
	/* smoothed rtt of closed connections: cumulative buckets */
	uint64_t rtt_le[PROM_RTT_BUCKETS], rtt_count;
	double rtt_sum_s;
};

/*
 * prom_tcp_add - add connection s's kernel figures (s->ti, when read) to
 * t; closed: its rtt goes into the histogram too (an open one's would be
 * counted again at every write), and its unseen bytes (an open one's may
 * be a call's still under way).
 * Context: ticker only.
 */
void prom_tcp_add(struct prom_tcp *t, const struct fd_snapshot *s,
		  bool closed);

#define PROM_MAX_PEERS 64  /* distinct peer hosts remembered */
#define PROM_HOST_MAX 112  /* an IPv6 address or a unix path */

struct prom_peer {
	char host[PROM_HOST_MAX];
	uint64_t bytes[DIR_COUNT];
};

/* A bounded table of bytes per peer host; overflow goes to other. */
struct prom_peers {
	/* p[0 .. n-1]; in an exposition being made, the first ones are the
	 * named peers (struct prom_agg's), the others candidates. */
	struct prom_peer p[PROM_MAX_PEERS];
	uint32_t n;
	uint64_t other[DIR_COUNT];
};

struct prom_data {
	const char *prog;
	long pid;
	uint64_t start_ns, ts_ns;
	struct fd_counters kind[KIND_COUNT];
	uint64_t fds_open[KIND_COUNT];
	uint64_t fds_closed[KIND_COUNT];
	bool have_rates;
	double rate[WINDOW_MAX_SPANS][DIR_COUNT]; /* sum over open fds */
	struct prom_peers peers;
	struct prom_tcp tcp;
};

/*
 * prom_peer_host - the host part of a peer address: the IP without the
 * port (a server's peers come from random ports), a unix path, or "".
 * Context: ticker only.
 */
void prom_peer_host(const struct fd_addr *a, char *buf, size_t cap);

/* prom_peers_add - add bytes to host's entry (made if there is room, else
 * the bytes go to other).  Context: ticker only. */
void prom_peers_add(struct prom_peers *t, const char *host, uint64_t in,
		    uint64_t out);

/*
 * prom_format - append the exposition of d to out: every peer of
 * d->peers by name (busiest first), and "other".
 * Context: ticker only.
 */
void prom_format(const struct prom_data *d, const struct config *c,
		 struct sbuf *out);

/* --- adding up an exposition, tick by tick ----------------------------- */

/* What format = prometheus needs beyond the records' totals: everything
 * per fd kind, and the peers of closed connections. */
struct prom_agg {
	struct fd_counters closed[KIND_COUNT];
	uint64_t closed_n[KIND_COUNT];
	/* The named peers (never removed), with the bytes of their closed
	 * connections; other: closed connections of unnamed peers. */
	struct prom_peers peers;
	/* Closed connections of peers not named yet, since the last
	 * exposition: it names them (room allowing) or gives them to other. */
	struct prom_peers pending;
	struct prom_tcp closed_tcp; /* kernel figures of closed TCP */
	struct names *names;     /* peer labels by name when known */
	/* The latency last shown per kind and direction: the clock's
	 * calibration moves, the counter must not go down with it. */
	uint64_t latency_shown[KIND_COUNT][DIR_COUNT];
	/* The same for each named peer (by index) and for other. */
	uint64_t peer_shown[PROM_MAX_PEERS][DIR_COUNT];
	uint64_t other_shown[DIR_COUNT];
	/* The TCP counters last shown (prom_tcp's counters; its histogram is
	 * of closed connections only, and never goes down). */
	struct prom_tcp tcp_shown;
	struct prom_data data;   /* the one being made */
};

/*
 * prom_agg_closed - add a closed connection (its numbers final) to the
 * per-kind and per-peer totals of every later exposition.
 * Context: ticker only.
 */
void prom_agg_closed(struct prom_agg *a, const struct fd_snapshot *s);

/*
 * prom_agg_begin - start a->data for an exposition at ts_ns: what closed
 * connections left, plus dropped[k] / dropped_n[k], the numbers and count
 * of close records of kind k that were lost (their numbers still count).
 * Context: ticker only.
 */
void prom_agg_begin(struct prom_agg *a,
		    const struct fd_counters dropped[KIND_COUNT],
		    const uint64_t dropped_n[KIND_COUNT], const char *prog,
		    long pid, uint64_t start_ns, uint64_t ts_ns);

/*
 * prom_agg_live - add an open connection's share (counters, peer, and its
 * rates over the first nspans spans when it has them) to a->data.
 * Context: ticker only.
 */
void prom_agg_live(struct prom_agg *a, const struct summary_fd *f,
		   unsigned nspans);

/*
 * prom_agg_format - finish a->data and append its exposition to out: peers
 * seen with traffic for the first time are named while fewer than c->top
 * (at most PROM_MAX_PEERS) are, busiest first, and stay named for good;
 * the others' bytes go to "other".  No counter shows less than it did in
 * an earlier exposition.
 * Context: ticker only.
 */
void prom_agg_format(struct prom_agg *a, const struct config *c,
		     struct sbuf *out);

#endif
