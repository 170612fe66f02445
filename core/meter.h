/*
 * meter.h - the whole metering state of one process, without threads.
 *
 * meter ties the fd table, the windows, the records and the sink together.
 * Lifecycle calls report opens and closes; the preload's ticker thread calls
 * meter_tick() at the times meter_next_tick() names; meter_exit() writes the
 * last record.  Every function takes `now` explicitly (monotonic time for
 * windows, real time for records), so tests drive time by hand.
 *
 * Execution contexts (each function below names its own):
 *  - any thread and signal handler: meter_opened, meter_set_addrs,
 *    meter_closed, meter_track_kind, and the hot path's accounting
 *    (lock-free, no allocation, no system call);
 *  - ticker only: meter_tick, meter_exit, meter_build, serialized by the
 *    caller (one ticker, one lock);
 *  - start-up only: meter_init; fork child: meter_after_fork.
 */
#ifndef SOCKMETER_METER_H
#define SOCKMETER_METER_H

#include "../config/config.h"
#include "closeq.h"
#include "fdcheck.h"
#include "fdtab.h"
#include "names.h"
#include "ownmem.h"
#include "prom.h"
#include "sink.h"
#include "state.h"
#include "summary.h"
#include "topn.h"
#include "window.h"

#include <stdbool.h>
#include <stdint.h>

struct meter_time {
	uint64_t mono_ns; /* CLOCK_MONOTONIC: windows and scheduling */
	uint64_t real_ns; /* CLOCK_REALTIME: timestamps in records */
};

/* meter_fdstate.unseen: a live reading was taken; it showed unseen bytes
 * in (out). */
#define UNSEEN_READ 1u
#define UNSEEN_IN 2u
#define UNSEEN_OUT 4u

/* What the ticker remembers of each fd between ticks. */
struct meter_fdstate {
	uint32_t gen;
	bool known;
	bool windowed;              /* its window has a bucket */
	uint8_t unseen;             /* UNSEEN_* bits of the last live reading
				     * (tcp_info; in the padding: no cost) */
	bool rates_ok;              /* its window has a bucket it lived at
				     * least half of */
	uint32_t unlived_ms;        /* the part of its window's first bucket
				     * before it opened */
	uint64_t bytes[DIR_COUNT];  /* cumulative at the last boundary */
	uint64_t activity;          /* activity sum at the last tick */
	uint64_t activity_recorded; /* activity sum at the last record */
	uint64_t bytes_recorded;    /* bytes in+out at the last record */
	uint64_t last_active_ns;
	struct window *win;
};

/*
 * Closes under way, counted in stripes of a cache line each: a close
 * counts itself in the stripe of its thread's stack (meter_inflight_enter)
 * and the final record sums them.  One shared word was two locked
 * operations per close on a line that every closing thread took from the
 * others: about 1.2 us per connection of `churngen churn` (perf,
 * 2026-12-03), where a stripe no other thread writes costs a few
 * nanoseconds.  Two threads share a stripe one time in
 * METER_INFLIGHT_STRIPES (their stacks hash alike): slower, still right.
 */
#define METER_INFLIGHT_BITS 5
#define METER_INFLIGHT_STRIPES (1u << METER_INFLIGHT_BITS)
struct meter_inflight {
	/* 64 bytes apart, so each on a line of its own (not aligned: a
	 * struct meter aligned to 64 would move what sm_core lays out). */
	struct {
		uint32_t n;
		char pad[60];
	} stripe[METER_INFLIGHT_STRIPES];
};

struct meter {
	/* See closes_inflight.  First: before pid, out of the span a fork
	 * child writes (preload.h's sm_core), where the preload, which gives
	 * memory of its own, would have it 2 KiB wider. */
	struct meter_inflight closes_own;
	struct config cfg;
	struct fdtab tab;
	unsigned acct; /* ACCT_* bits for fd_account */
	struct window_shape shape;
	struct sink sink;
	long pid;
	char prog[CONFIG_NAME_MAX];
	struct meter_time start;
	double ns_per_tick;  /* latency clock: ns per tick (1 by default) */

	/* written by any thread (atomics) */
	struct closeq q;
	/* CLOCK_REALTIME of the last fork, or of a child started with our
	 * fds (meter_forked): fds opened before it are shared with a child.
	 * Where it is kept: forked_own, or a word the host gives (the
	 * preload's: on the page its fork handlers write anyway, zero in a
	 * fork child, so that a fork costs no copy-on-write fault for it). */
	uint64_t *forked_at;
	uint64_t forked_own;
	/* Recovery (core/recover.c): when the dead process was last seen
	 * alive; no connection's last_active is later (0: no bound). */
	uint64_t alive_until_ns;
	/* the ticker's durable part (core/state.h): what it drained */
	struct state_ticker *durable;
	struct state_ticker *durable_own; /* when none was given */
	const char *end; /* exit records' "end" (a recovery's "killed") */
	bool incomplete; /* a recovery's: its state file missed some numbers */
	/* The next exit or exec record's other_threads (struct summary):
	 * set by the host just before it has one made. */
	uint32_t other_threads;
	/* A recovery's: the process is gone, and the fd numbers in its slots
	 * are not ours (a recovering ticker's are its program's): the kernel
	 * is never asked about them. */
	bool dead;
	struct fdcheck check;       /* the ticker's own */

	/* the ticker's own */
	struct meter_fdstate *fds;
	struct ownmem wins;         /* the fds' windows (a fork child: zeroes) */
	bool fds_wiped;             /* fds is zeroes in a fork child */
	struct fd_counters closed;  /* totals of drained close records */
	uint64_t closed_count;      /* how many were drained (fds_closed) */
	uint64_t closed_unseen[DIR_COUNT]; /* their bytes the kernel saw */
	uint64_t last_bucket;       /* bucket of the last sample */
	uint64_t next_record_mono;
	uint64_t next_tick_mono;
	struct topn top;            /* fds of the record being made */
	struct topn closing;        /* close records being made */
	/* Close records of batches the log refused (a full disk, a log
	 * directory closed to the uid the process had at that moment), held
	 * to be written first with the next batch: at most SINK_HELD_MAX
	 * bytes, the oldest kept.  Counted as dropped until written, so that
	 * every record made meanwhile, and a recovered exit record, says how
	 * many are not in the log.  A fork child forgets its parent's
	 * (meter_after_fork).  Context: the write lock (meter_flush). */
	struct sbuf held;
	/* held.closes, for the records made meanwhile, which say the held
	 * ones are written (written first, with them: a batch refused
	 * refuses those records too).  Atomic: a record may be made while
	 * another thread writes. */
	uint64_t held_n;
	/* Close records drained and made that no meter_flush has taken
	 * yet: counted as dropped from the drain on (their numbers are
	 * durable there, and their queue entries gone), so that a process
	 * killed while it makes or writes them leaves numbers that add up;
	 * the records made with them say they are written, as for held_n.
	 * Atomic, as held_n. */
	uint64_t flight_n;
	/* The batch meter_flush is writing, and how much of it its close
	 * records were counted written for (flight_progress).  Context: the
	 * write lock. */
	const char *flight;
	size_t flight_seen;
	/* Its close records, and how many were counted written so far
	 * (flight_aim's note holds the difference). */
	uint64_t flight_closes, flight_counted;
	/* Parts of batches that reached the log (atomic, any thread
	 * reads): the exit waits for a batch that moves on (preload.c). */
	uint64_t flight_parts;
	struct prom_agg *prom;      /* format = prometheus only */
	bool sink_stale;            /* forked: sink_init at the next write */
	bool finished;
	/* The last batch meter_flush took could not be made whole (no
	 * memory for it: unmade_batch): if it held the final record, the
	 * state file keeps the numbers for recovery (preload's durable.c).
	 * nomem_err: the errno of a want of memory for the records, to be
	 * said (nomem_said: said, once a process). */
	bool last_unmade, nomem_said;
	int nomem_err;
	/* The host's (preload.c, atomic): a tracked fd was seen since start
	 * or fork, so a ticker is wanted.  False in a fork child: there it
	 * sits on a page the child writes anyway. */
	bool ticker_wanted;
	/* Closes between their slot's retire and their record's push
	 * (struct meter_inflight): the final record waits for them
	 * (meter.c's settle).  Where they are kept: closes_own, or memory
	 * the host gives, zero in a fork child (the preload's: beside
	 * forked_at, so that the first close after each fork faults no copy
	 * of this struct's page, and shoots down no TLB entry on the other
	 * CPUs). */
	struct meter_inflight *closes_inflight;
	struct names *names;        /* resolved names (atomic; may be NULL) */
	config_report_fn report;
	void *ctx;
};

/*
 * meter_say_no_memory - say, once a process, a want of memory for the
 * records noted since start (or the fork).  Context: outside the tick
 * lock and any signal handler (the ticker after its flush, an exit's
 * record once its locks are let go).
 */
void meter_say_no_memory(struct meter *m);

/*
 * meter_init - set m up for cfg (copied) in a process called prog.
 * fd_cap is how many fd numbers to meter (the RLIMIT_NOFILE hard limit).
 * Returns 0, or a negative errno when memory could not be mapped (then m
 * meters nothing, and the caller should run as pass-through).  Problems
 * with the log destination are reported but are not fatal.
 * Context: start-up only.
 */
int meter_init(struct meter *m, const struct config *cfg, const char *prog,
	       long pid, uint32_t fd_cap, struct meter_time now,
	       config_report_fn report, void *ctx);

/* Memory for meter_init_at (the durable state file's regions): cap slots,
 * the close queue's counts and ring, the ticker's totals; and the hooks
 * that back a slot or ring entry before a lifecycle call writes it. */
struct meter_mem {
	struct fd_slot *slots;
	struct closeq_shared *queue;
	struct closeq_entry *ring;
	struct state_ticker *ticker;
	void (*back_slot)(void *ctx, uint32_t fd);
	void (*back_slot_untracked)(void *ctx, uint32_t fd); /* or NULL */
	void (*back_ring)(void *ctx, uint32_t index);
	void (*ready_ring)(void *ctx, uint32_t index); /* or NULL */
	bool (*kept_ring)(void *ctx, uint32_t index);  /* or NULL */
	void *back_ctx;
};

/*
 * meter_init_at - meter_init with the memory given (mem may be NULL: then
 * as meter_init).  A recovery tool passes a dead process's regions, as
 * they are: nothing is cleared.
 * Context: start-up only, or a recovery tool.
 */
int meter_init_at(struct meter *m, const struct config *cfg, const char *prog,
		  long pid, uint32_t fd_cap, struct meter_time now,
		  config_report_fn report, void *ctx,
		  const struct meter_mem *mem);

struct lockall_set;
/* meter_lazy_ranges - m's reservations sized by its fd capacity (its
 * table's, its close ring when its own, the ticker's ids, the fd
 * states) to s, for mlockall to leave out (lockall.h).  Context: any. */
void meter_lazy_ranges(const struct meter *m, struct lockall_set *s);

/* meter_destroy - release everything.  Context: tests only, never at
 * process exit. */
void meter_destroy(struct meter *m);

/*
 * meter_track_kind - the kind to store for a connection: kind itself when
 * the config meters that kind, KIND_UNTRACKED otherwise.
 * Context: any thread and signal handler.
 */
enum fd_kind meter_track_kind(const struct meter *m, enum fd_kind kind);

/* meter_opened - fd was just created (socket, accept, dup...).
 * Context: any thread and signal handler. */
void meter_opened(struct meter *m, int fd, enum fd_kind kind,
		  uint64_t real_ns, const struct fd_addr *local,
		  const struct fd_addr *peer);

/* meter_set_addrs - fd's addresses became known (connect, bind).
 * Context: any thread and signal handler. */
void meter_set_addrs(struct meter *m, int fd, const struct fd_addr *local,
		     const struct fd_addr *peer);

/* meter_closed - fd is being closed: queue its close record.
 * Context: any thread and signal handler. */
void meter_closed(struct meter *m, int fd, uint64_t real_ns);

/* meter_tcp_view - the kernel's view of fd's TCP connection (TCP_INFO and
 * the queues), read now for its close record; false when fd is not a
 * metered TCP socket, the category is off or the thread is sandboxed.
 * Context: any thread and signal handler. */
bool meter_tcp_view(struct meter *m, int fd, struct tcpinfo *ti);

/* meter_tcp_view_wanted - whether meter_tcp_view would read fd's view
 * (its conditions alone, no system call).
 * Context: any thread and signal handler. */
bool meter_tcp_view_wanted(const struct meter *m, int fd);

/* meter_closed_gen - fd was closed inside libc (fclose, freopen): its
 * close record, if the slot still holds generation gen (another thread may
 * have been handed the number since); ti is the kernel's view read just
 * before that close (meter_tcp_view), or NULL.
 * Context: any thread and signal handler. */
void meter_closed_gen(struct meter *m, int fd, uint32_t gen,
		      uint64_t real_ns, const struct tcpinfo *ti);

/* meter_dup - newfd was made from oldfd (dup*, F_DUPFD): both name one
 * object, and each fd counts only its own calls.
 * Context: any thread and signal handler. */
void meter_dup(struct meter *m, int oldfd, int newfd);

/*
 * meter_forked - a child process that may hold our fds was made at real_ns
 * (fork, a raw clone, a spawn, a vfork child's exec).  The kernel's
 * counts of a connection opened before then are no longer this process's
 * alone: its records show no bytes_*_unseen (docs/log.md).
 * Context: any thread and signal handler, a vfork child included.
 */
void meter_forked(struct meter *m, uint64_t real_ns);

/*
 * meter_inflight_enter - count a close under way in the calling thread's
 * stripe, from before its slot is retired until after its record is
 * pushed (meter_inflight_leave, with what this returned): the final
 * record waits for it.  Context: any thread and signal handler.
 */
uint32_t *meter_inflight_enter(struct meter *m);
void meter_inflight_leave(uint32_t *stripe);

/*
 * meter_disconnected - fd's TCP connection ended without a close: a
 * connect(AF_UNSPEC) disconnected it, and the fd may connect again.
 * Retired as a seen close at real_ns, without the kernel's view (the
 * disconnect has zeroed it: rtt 0, nothing acked).
 * Context: the thread that disconnected it.
 */
void meter_disconnected(struct meter *m, int fd, uint64_t real_ns);

/* meter_closed_unseen - fd was found reused by a call that creates fds
 * (open, pipe, SCM_RIGHTS...): its connection ended at an unknown time.
 * Context: any thread and signal handler. */
void meter_closed_unseen(struct meter *m, int fd, uint64_t real_ns);

/*
 * meter_tick - sample every tracked fd into its window, write queued close
 * records and, when due, an interval record.  Returns the monotonic time of
 * the next tick.
 * Context: ticker only.
 */
uint64_t meter_tick(struct meter *m, struct meter_time now);

/* meter_exit - final tick and the exit record; later ticks do nothing.
 * Context: ticker only (the caller holds the ticker's lock). */
void meter_exit(struct meter *m, struct meter_time now);

/*
 * meter_exec - the exec record: the exit record of an image about to be
 * replaced by exec, written without ending metering (the exec may fail;
 * then ticks go on and a later record supersedes it).
 * Context: ticker only (the caller holds the ticker's lock).
 */
void meter_exec(struct meter *m, struct meter_time now);
/* meter_exec_into - the same without the write (see meter_exit_into).
 * Context: ticker only (the caller holds the ticker's state lock). */
void meter_exec_into(struct meter *m, struct meter_time now, struct sbuf *out);

/*
 * meter_tick_into, meter_exit_into - meter_tick and meter_exit without the
 * write: the records are appended to out, for meter_flush to write after
 * the caller has let go of the state (so fork never waits on a write).  A
 * tick that only drains close records takes a bounded batch of them:
 * meter_more then says whether to tick again at once.
 * Context: ticker only (the caller holds the ticker's state lock).
 */
uint64_t meter_tick_into(struct meter *m, struct meter_time now,
			 struct sbuf *out);
void meter_exit_into(struct meter *m, struct meter_time now, struct sbuf *out);

/* meter_more - many close records are still waiting for a tick.
 * Context: ticker only. */
bool meter_more(const struct meter *m);

/*
 * meter_pin_log - open the log now and keep it open for the calling
 * thread's later writes (sink_pin): before a chroot or a seccomp filter
 * would keep it from being opened by name (on), or a uid change from
 * opening it again (not on yet: see sink_pin).  Returns 0 or a negative
 * errno.
 * Context: ticker only (holding the write lock).
 */
int meter_pin_log(struct meter *m, bool on);

/*
 * meter_flush - write out (records made by meter_tick_into or
 * meter_exit_into) to the sink in one batch, then empty it, keeping some
 * of its memory for the next batch (sbuf_clear; sbuf_free releases it).
 * Context: ticker only; needs only the caller's write lock, not the state.
 */
void meter_flush(struct meter *m, struct sbuf *out);

/*
 * meter_after_fork - in a fresh child: counters, totals, queue and windows
 * start from zero, the log path is re-made for the child's pid.  fresh: the
 * fd slots, the queue and the ticker's totals are new zeroed memory already
 * (state_after_fork made them so), so they are not walked or cleared: a
 * child writes as few pages as it can (each is a copy).
 * Context: fork child.
 */
void meter_after_fork(struct meter *m, long pid, struct meter_time now,
		      bool fresh);

/*
 * meter_build - fill *r with a record of the given type (no close records)
 * from the current state, without writing it.  Exposed for tests.
 * Context: ticker only.
 */
void meter_build(struct meter *m, enum summary_type type,
		 struct meter_time now, struct summary *r);

#endif
