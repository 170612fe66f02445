/*
 * summary.h - log records (interval, close, exit) and their two formats:
 * aligned text for people, JSON Lines for programs.  The schema is in the
 * README ("Log schema").  Fields of a disabled stat category are absent.
 */
#ifndef SOCKMETER_SUMMARY_H
#define SOCKMETER_SUMMARY_H

#include "../config/config.h"
#include "fdtab.h"
#include "names.h"
#include "window.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* SUMMARY_EXEC is an exit record written just before exec: the image's
 * final numbers.  When the exec fails, metering goes on and a later
 * interval or exit record (same pid and start) supersedes it. */
enum summary_type {
	SUMMARY_INTERVAL,
	SUMMARY_CLOSE,
	SUMMARY_EXIT,
	SUMMARY_EXEC
};

/* One fd as a record shows it. */
struct summary_fd {
	struct fd_snapshot s;
	uint64_t last_active_ns; /* 0: no activity seen yet */
	uint64_t closed_ns;      /* close records only */
	bool have_rates;
	double rank;             /* sort key: busiest first */
	double rate[WINDOW_MAX_SPANS][DIR_COUNT]; /* bytes per second */
	/* What the ticker adds (enrich.c): the kernel's count of bytes the
	 * wrapped calls did not see (TCP, tcp_info category), the peer's
	 * name (names category) and how long its lookup took. */
	bool have_unseen;
	/* A data call was in the kernel on the fd as its view was read
	 * (fd_slot.inflight_sp): part of its bytes may be queued already,
	 * not counted until it returns, so the unseen bytes of that reading
	 * are not trusted in an interval record (meter.c: confirm_unseen). */
	bool busy;
	uint64_t unseen[DIR_COUNT];
	uint64_t lookup_ns;
	char peer_name[NAMES_LEN]; /* "" when unknown */
};

struct summary {
	enum summary_type type;
	uint64_t ts_ns;         /* CLOCK_REALTIME */
	long pid;
	const char *prog;
	uint64_t start_ns;      /* when metering started in this process */
	struct fd_counters totals; /* all connections, closed ones included */
	uint64_t fds_open;      /* tracked fds open now */
	uint64_t fds_closed;    /* tracked fds closed so far */
	uint64_t fds_close_on_exec; /* exec records: open fds the exec closes */
	uint64_t close_dropped; /* close records lost to a full queue */
	bool have_unseen;       /* tcp_info on: unseen is meaningful */
	uint64_t unseen[DIR_COUNT]; /* closed + listed TCP connections */
	uint32_t nfds;
	uint32_t omitted;       /* active fds left out by the top-N limit */
	const struct summary_fd *fds;
	const char *end; /* exit records only: how the process ended, when it
			  * was not by itself ("killed": a recovered record);
			  * NULL otherwise */
	bool incomplete; /* exit records only: recovered from a state file
			  * that could not hold every fd's numbers */
	uint64_t alive_ns; /* recovered exit records (end set) only: the
			    * dead process's last sign of life, its
			    * ticker's last tick or its start; 0: none */
	/* Exit and exec records: the program's threads still running when
	 * the record was made, other than the one ending it (0: none, or
	 * not known); what they move after it is in no record. */
	uint32_t other_threads;
};

/* A growable output buffer.  On allocation failure it keeps what fitted
 * and sets failed. */
struct sbuf {
	char *p;
	size_t len, cap;
	bool failed;
	int err; /* failed: the mapping's errno */
	uint64_t closes; /* close records in it (the meter's count: see
			  * meter_flush); zeroed with it */
};

/* sbuf_free - release b's memory, leaving it empty.  Context: ticker
 * only. */
void sbuf_free(struct sbuf *b);

/* sbuf_clear - empty b for the next batch, keeping at most keep bytes of
 * its memory (rounded down to pages): a ticker that frees its buffer after
 * every batch faults every page of the next one in again.  Context:
 * ticker only. */
void sbuf_clear(struct sbuf *b, size_t keep);

/* sbuf_addn - append n bytes of p (allocates; on failure b->failed).
 * Context: ticker only. */
void sbuf_addn(struct sbuf *b, const char *p, size_t n);

/* sbuf_addf - append printf-style text (allocates).  Context: ticker
 * only. */
void sbuf_addf(struct sbuf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * summary_format - append record r to out in c->format (one JSON line, or a
 * block of text lines), each line ending in '\n'.
 * Context: ticker only.
 */
void summary_format(const struct summary *r, const struct config *c,
		    struct sbuf *out);

/*
 * summary_utf8_len - the length of the valid UTF-8 sequence of two to four
 * bytes at s (at most n bytes), or 0: well-formed per RFC 3629, no
 * overlong forms, no surrogates, nothing above U+10FFFF.  What the JSON
 * formatter keeps verbatim; exposed for the fuzzer's checker.
 * Context: any thread and signal handler.
 */
size_t summary_utf8_len(const unsigned char *s, size_t n);

/* summary_span_label - "1s", "10s", "0.5s"...: span k's name in records.
 * Context: ticker only. */
void summary_span_label(const struct config *c, unsigned k, char *buf,
			size_t cap);

#endif
