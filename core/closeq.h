/*
 * closeq.h - the close queue: retired connections on their way from the
 * thread that closed them to the ticker that writes their records.
 *
 * Many producers (any thread, signal handlers), one consumer (the ticker).
 * A fixed ring of entries mapped lazily: pushing never allocates and never
 * locks.  The ticker drains the ring at every tick; a busy server closes
 * faster than that, so the push that finds CLOSEQ_WAKE_AT records waiting
 * wakes the ticker early: one futex wake, once per drain, never on a data
 * call (closeq_wait is the ticker's side).  When the ring is full all the
 * same (the log cannot keep up), the record is lost but the numbers are
 * not: they go into per-kind dropped totals that the ticker adds to the
 * process totals.  Such a close moves its connection through a spill
 * (struct closeq_spill) as it would through a ring entry, so that a kill
 * at any instruction loses nothing there either.
 */
#ifndef SOCKMETER_CLOSEQ_H
#define SOCKMETER_CLOSEQ_H

#include "fdtab.h"

#include <stdbool.h>
#include <stdint.h>

#ifndef CLOSEQ_CAP
#define CLOSEQ_CAP 8192 /* close records between two drains (power of 2) */
#endif
/* The entries' room the ring and its spills take. */
#define CLOSEQ_RING_PLACES (CLOSEQ_CAP + CLOSEQ_SPILLS * CLOSEQ_SPILL_PLACES)
#ifndef CLOSEQ_WAKE_AT
#define CLOSEQ_WAKE_AT 1024 /* records waiting that wake the ticker early */
#endif

/* An entry's state.  The numbers are the state file's: never reused. */
enum closeq_state {
	CLOSEQ_FREE = 0,
	CLOSEQ_WRITING = 1, /* closeq_push copying a snapshot in */
	CLOSEQ_READY = 2,   /* a record */
	CLOSEQ_TAKING = 3,  /* closeq_claim'd: a retire moving into it */
	CLOSEQ_VOID = 4,    /* claimed, and the retire found nothing */
	CLOSEQ_FOLDING = 5, /* a spill's next being copied into its sums */
};

/* One retired connection waiting for the ticker. */
struct closeq_entry {
	uint32_t state; /* enum closeq_state */
	/* CLOSEQ_TAKING: 1 once s.fd, s.kind and s.gen name the slot the
	 * counts move from, then 2 + the index of each counter word moved
	 * (fdtab_retire_into).  In what was padding. */
	uint32_t bound;
	uint64_t closed_ns;
	struct fd_snapshot s;
	/* To a multiple of 256 bytes: the durable state backs the ring in
	 * chunks of whole pages, which 16 entries then make (3 pages). */
	uint8_t pad[(256 - (16 + sizeof(struct fd_snapshot)) % 256) % 256];
};

/*
 * A close that found the ring full moves its connection into a spill
 * instead: claimed (e.state CLOSEQ_FREE -> WRITING -> TAKING, as a ring
 * entry), then the retire moves the counts into e.s as into a ring
 * entry (e.bound), then the spill folds them into its own sums, the
 * dropped records' numbers: next = sum[kind] + e.s.c (and next_n =
 * sum_n[kind] + 1), then e.state CLOSEQ_FOLDING, then next is copied
 * into sum[kind], then CLOSEQ_FREE.  One owner at a time (the claim's
 * compare-and-swap), so the copy can be redone whole by a recovery
 * (closeq_rescue): a kill at any instruction leaves each count in the
 * slot, in e, or in the sums, once.  Before, the counts went through the
 * closing thread's stack into shared atomic totals: a kill in between
 * lost them (measured: 28 of 460 kills of a loop keeping the ring full
 * lost part of one connection).  The spills live right after the ring
 * (CLOSEQ_SPILLS of them, CLOSEQ_SPILL_PLACES entries' room each),
 * backed like it on first use; those ever used are marked in
 * closeq_shared's spills_used, so that nobody reads the others' pages.
 * All busy (more threads closing at once into a full ring than spills):
 * the old way, through the stack.
 */
#ifndef CLOSEQ_SPILLS
#define CLOSEQ_SPILLS 8
#endif
struct closeq_spill {
	struct closeq_entry e;
	uint32_t next_kind; /* the kind folded: e.s.kind, made an index */
	uint32_t pad0;
	uint64_t next_n;
	struct fd_counters next;
	uint64_t sum_n[KIND_COUNT];
	struct fd_counters sum[KIND_COUNT];
	/* To whole entries' room. */
	uint8_t pad[(sizeof(struct closeq_entry) -
		     (16 + sizeof(struct fd_counters) * (KIND_COUNT + 1) +
		      8 * KIND_COUNT) %
			 sizeof(struct closeq_entry)) %
		    sizeof(struct closeq_entry)];
};
#define CLOSEQ_SPILL_PLACES \
	(sizeof(struct closeq_spill) / sizeof(struct closeq_entry))
_Static_assert(sizeof(struct closeq_spill) % sizeof(struct closeq_entry) == 0,
	       "spills take whole entries' room after the ring");
_Static_assert(CLOSEQ_SPILLS <= 32, "spills_used is one word");

/* The queue's counts: pointer-free, so they can live in the durable state
 * file (core/state.h) beside the ring. */
struct closeq_shared {
	uint64_t head, tail;       /* head: producers (CAS); tail: ticker */
	uint64_t pushed;           /* every close, recorded or dropped */
	uint64_t dropped;          /* close records lost to a full ring */
	/* The raw slot numbers of the dropped records, per fd kind. */
	struct fd_counters dropped_c[KIND_COUNT];
	uint64_t dropped_n[KIND_COUNT];
	/*
	 * The log part being written (meter.c's flight_aim), for a recovery:
	 * its close records count as dropped until the part is seen to land
	 * (flight_progress), and a process killed in the write, or between
	 * its end and that count, left some or all of them in the log all
	 * the same (a helper's stress-ng sweep: 495 records both in the log
	 * and in close_records_dropped).  While flight_armed is 1, the log
	 * (flight_dev, flight_ino) holds from offset flight_off on up to
	 * flight_closes close records of the process not counted written,
	 * made before flight_real_ns (the wall clock when it was noted):
	 * recovery counts those it finds there (recover.c's flight_landed).
	 * Written by the writer only (the ticker, progfd_run's child);
	 * armed last, disarmed first.
	 */
	uint32_t flight_armed;
	uint64_t flight_dev, flight_ino, flight_off, flight_closes;
	uint64_t flight_real_ns;
	/* Bit i: spill i was ever claimed (its pages read by the ticker,
	 * its sums part of the dropped totals).  Atomic. */
	uint32_t spills_used;
};

struct closeq {
	struct closeq_shared *sh;
	struct closeq_entry *ring; /* CLOSEQ_CAP entries */
	struct closeq_spill *spill; /* CLOSEQ_SPILLS, right after the ring */
	bool wiped;                /* the ring reads as zeros in a child */
	bool own;                  /* closeq_init mapped sh and ring */
	uint32_t wake;             /* futex: 1 once a producer asked for a drain */
	/* Atomic: producers never wake the ticker (a seccomp filter on some
	 * thread forbids futex, and a thread it made carries it unmarked:
	 * the wake at CLOSEQ_WAKE_AT records killed such a host with
	 * SIGSYS, a review's); the ticker drains at its next tick. */
	uint32_t no_wake;
	/* Called before an entry is written (NULL: none): the durable state
	 * backs the ring's page there.  Context: any thread and signal
	 * handler. */
	void (*back)(void *ctx, uint32_t index);
	/* closeq_prepare's (NULL: none): the same, but only where the
	 * durable state has its file already; it never makes one. */
	void (*ready)(void *ctx, uint32_t index);
	/* After back (NULL: always true): a write to place index is kept,
	 * in the file (or there is none).  A spill is used only then: its
	 * sums, the dropped numbers of every close it took, would otherwise
	 * live in private memory for good (a chunk the file system or a
	 * sandbox refused).  Context: any thread and signal handler. */
	bool (*kept)(void *ctx, uint32_t index);
	void *back_ctx;
};

struct lockall_set;
/* closeq_lazy_ranges - the ring closeq_init mapped (a reservation, mostly
 * untouched) to s, for mlockall to leave out (lockall.h).  Context: any. */
void closeq_lazy_ranges(const struct closeq *q, struct lockall_set *s);

/*
 * closeq_init - map an empty queue.  Returns 0, or -ENOMEM (q is then
 * empty and closeq_destroy may still be called).
 * Context: start-up only.
 */
int closeq_init(struct closeq *q);

/*
 * closeq_attach - use memory that someone else owns (the durable state
 * file): sh and ring (CLOSEQ_CAP entries, then CLOSEQ_SPILLS spills:
 * CLOSEQ_RING_PLACES entries' room) as they are, not cleared.
 * Context: start-up only, fork child, or a recovery tool.
 */
void closeq_attach(struct closeq *q, struct closeq_shared *sh,
		   struct closeq_entry *ring);

/* closeq_destroy - unmap q.  Context: tests, never at process exit. */
void closeq_destroy(struct closeq *q);

/*
 * closeq_push - queue the record of connection s, closed at closed_ns.
 * A full ring drops the record and keeps its numbers.  Lock-free,
 * allocation-free, async-signal-safe; the push that finds CLOSEQ_WAKE_AT
 * records waiting makes one futex wake system call.
 * Context: any thread and signal handler.
 */
void closeq_push(struct closeq *q, const struct fd_snapshot *s,
		 uint64_t closed_ns);

/*
 * closeq_claim - take the next place for the record of the connection on
 * fd, of kind kind and generation gen as last read (busy: the slot's
 * held kind decides, fd_kind_held), not retired yet, closed at closed_ns (unseen: the close itself
 * was not seen): counters zero, nothing bound, state CLOSEQ_TAKING.
 * The retire then moves the connection straight into the entry's snapshot
 * (fdtab_retire_into, with &e->bound), and closeq_finish ends it: a
 * process killed at any instruction in between has the connection in its
 * slot, in the entry or (a counter word being moved) in both alike, and
 * its recovery joins the two (closeq_rescue).  When the ring is full, the
 * entry is a free spill's (struct closeq_spill): closeq_finish then folds
 * it into the dropped totals.  Returns NULL when the ring is full and
 * every spill busy (the caller retires into a snapshot of its own and
 * closeq_push drops the record, keeping its numbers).  Drains wait for a
 * claimed entry as for one being written.
 * Context: any thread and signal handler.
 */
struct closeq_entry *closeq_claim(struct closeq *q, uint64_t closed_ns,
				  int fd, enum fd_kind kind, uint32_t gen,
				  bool unseen);

/*
 * closeq_finish - end a claimed entry: a record (had: the retire returned
 * 1), or a place every reader passes over (CLOSEQ_VOID).  A spill's: its
 * connection folded into the dropped totals, the spill free again.
 * Context: the thread (or handler) that claimed it.
 */
void closeq_finish(struct closeq *q, struct closeq_entry *e, bool had);

/*
 * closeq_retire - retire fd's connection (only while it holds generation
 * *gen, when gen is given) and queue its record, closed at real_ns, so
 * that a kill at any instruction loses nothing (closeq_claim): with the
 * kernel's view ti (NULL: none; TCP only), marked unseen, or else shared
 * when it opened no later than forked_at (the last fork: the kernel's
 * counts are not this fd's alone).  Returns 1 when a connection was
 * retired.  The caller backs the place first (closeq_prepare).
 * Context: any thread and signal handler.
 */
int closeq_retire(struct closeq *q, struct fdtab *t, int fd,
		  const uint32_t *gen, uint64_t real_ns,
		  const struct tcpinfo *ti, bool unseen, uint64_t forked_at);

/*
 * closeq_rescue - a dead process's entries that a kill left claimed,
 * between upto (as closeq_settle takes it) and head, made records or void
 * by rescue (fdtab_rescue): first each bound one (rescue(ctx, s, bound)),
 * which gets what is left of its slot and is a record; then each unbound
 * one, a record when rescue(ctx, s, 0) returns 1 (its slot was left busy
 * at the generation the claim read: the kill came between the retire
 * owning it and binding the entry), else void (the slot holds the
 * connection whole, recovered as open).  The spills alike, each then
 * folded into the dropped totals (a fold the kill stopped is redone).
 * Before closeq_settle.
 * Context: recovery only.
 */
void closeq_rescue(struct closeq *q, uint64_t upto,
		   int (*rescue)(void *ctx, struct fd_snapshot *s,
				 uint32_t bound),
		   void *ctx);

/*
 * closeq_prepare - back the place the next push takes, before a slot is
 * retired.  The backing is system calls only on a chunk's first use: made
 * here, the retire and the push that follows are a few stores apart, and
 * a fatal signal there (one held back during the backing and delivered at
 * its end, as ssh's SIGHUP to its ProxyCommand was) no longer ends a
 * process whose connection is in neither its slot nor the ring.  (A push
 * of another thread's that takes this place first sends ours to the next
 * one: the last place of a chunk backs the next chunk too.)  Cheap when
 * the place is backed already; never makes the state file.
 * Context: any thread and signal handler.
 */
void closeq_prepare(struct closeq *q);

/*
 * closeq_pending - records queued and not taken yet (an estimate while
 * producers push).
 * Context: any thread.
 */
uint64_t closeq_pending(const struct closeq *q);

/*
 * closeq_wait - sleep until CLOCK_MONOTONIC reaches until_ns or a producer
 * asks for a drain (CLOSEQ_WAKE_AT records waiting), whichever comes first;
 * then re-arm the wake-up.  Returns true when woken for a drain.
 * Context: ticker only.
 */
bool closeq_wait(struct closeq *q, uint64_t until_ns);

/*
 * closeq_pop - move the oldest ready entry into *out and free its place
 * (and those of void entries before it).  Returns false when there is
 * none (an entry still being written counts as none: it is taken at the
 * next drain).
 * Context: ticker only.
 */
bool closeq_pop(struct closeq *q, struct closeq_entry *out);

/*
 * closeq_peek - copy the i-th entry from the tail (i = 0 is the oldest)
 * into *out without taking it, when it is finished: false when it is not.
 * A finished entry is a record (closeq_is_record) or void: take it all
 * the same, and pass over it.
 * closeq_release - free the n oldest entries (all peeked: finished).
 * Taking entries in two steps lets the ticker make their numbers durable
 * before they leave the queue.
 * Context: ticker only.
 */
bool closeq_peek(const struct closeq *q, uint64_t i, struct closeq_entry *out);
void closeq_release(struct closeq *q, uint64_t n);

/* closeq_is_record - e, as closeq_peek gave it, is a close record (not
 * void).  Context: any. */
static inline bool closeq_is_record(const struct closeq_entry *e)
{
	return e->state == CLOSEQ_READY;
}

/* closeq_tail - the position of the oldest entry.  Context: ticker only. */
uint64_t closeq_tail(const struct closeq *q);

/*
 * closeq_settle - a dead process's queue, as its state file kept it: the
 * entries before upto are already in the totals (tail moves there), and
 * entries between upto and head that were never finished (the process
 * died writing them) are left out; the ready ones keep their order.
 * Context: recovery only (nobody else uses q).
 */
void closeq_settle(struct closeq *q, uint64_t upto);

/*
 * closeq_dropped - the raw numbers of the dropped records of kind k (all
 * kinds when k is KIND_COUNT) into *c, their count into *n (may be NULL).
 * Context: ticker only (reads producers' atomics).
 */
void closeq_dropped(const struct closeq *q, enum fd_kind k,
		    struct fd_counters *c, uint64_t *n);

/* closeq_count - closes so far, recorded or dropped; and those dropped.
 * Context: any thread. */
uint64_t closeq_closed(const struct closeq *q);
uint64_t closeq_dropped_records(const struct closeq *q);

/*
 * closeq_note_dropped - count n more lost records (the ticker could not
 * keep ones it had taken, or the log refused the write that held them);
 * their numbers are already in the totals.  Context: ticker only.
 */
void closeq_note_dropped(struct closeq *q, uint64_t n);

/*
 * closeq_note_written - n records counted by closeq_note_dropped reached
 * the log after all (held back from a refused batch and written with a
 * later one: meter_flush): no longer counted as lost.  Context: ticker
 * only.
 */
void closeq_note_written(struct closeq *q, uint64_t n);

/*
 * closeq_after_fork - in a fresh child: empty, every count zero.  The ring
 * is wiped on fork (fork is cheaper for it): only the entries the parent
 * had pending are touched, where the kernel could not wipe it.  fresh: the
 * shared part and the ring are new zeroed memory already (a state file's
 * fork child), so only the private fields are reset.
 * Context: fork child.
 */
void closeq_after_fork(struct closeq *q, bool fresh);

#endif
