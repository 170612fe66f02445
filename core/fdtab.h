/*
 * fdtab.h - the flat table of per-fd slots, and the counting done on the
 * hot path of every wrapped data call.
 *
 * The table is one lazily-mapped array indexed by fd number: pages are
 * touched only for fds that are actually used, so a capacity of a million
 * fds costs nothing until they exist.  A slot holds the counters written by
 * wrapped calls (relaxed atomic adds: exact under any number of threads, no
 * lock) and the connection's identity (kind, generation, open time,
 * addresses), which lifecycle calls write under a per-slot sequence counter
 * so the ticker can read a consistent copy.
 *
 * Counters only ever grow while a connection lives.  When an fd is retired
 * (closed, or found reused) each counter is atomically exchanged with zero:
 * an add racing with the retirement lands either in the old connection's
 * record or in the new one, never nowhere and never in both.
 */
#ifndef SOCKMETER_FDTAB_H
#define SOCKMETER_FDTAB_H

#include "tcpinfo.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>

#ifndef FDTAB_MAX_CAP
#define FDTAB_MAX_CAP (1u << 20) /* the kernel's default nr_open */
#endif
#ifndef FDTAB_STRICT_CAP
#define FDTAB_STRICT_CAP 16384u /* at most, under strict overcommit */
#endif

/* log2 histogram of transfer sizes: bucket 0 holds 0-byte transfers, bucket
 * i (1..SIZE_BUCKETS-2) holds [2^(i-1), 2^i), the last holds >= 2^22. */
#define SIZE_BUCKETS 24

enum fd_dir { DIR_IN, DIR_OUT, DIR_COUNT };

enum fd_err { ERR_AGAIN, ERR_INTR, ERR_OTHER, ERR_COUNT };

/* Kinds below KIND_FIRST_TRACKED are never counted (fd_kind_tracked). */
enum fd_kind {
	KIND_UNKNOWN = 0, /* not classified yet: the next data call does it */
	KIND_UNTRACKED,   /* classified, and not metered by the config */
	KIND_TCP,
	KIND_UDP,
	KIND_UNIX_STREAM,
	KIND_UNIX_DGRAM,
	KIND_OTHER_SOCKET,
	KIND_PIPE,
	KIND_FILE,
	KIND_TTY,
	KIND_COUNT,
	/* Being opened, noted or retired by a lifecycle call: a slot's kind
	 * is then KIND_BUSY_FLAG | the kind the slot's connection has (its
	 * counters and identity) at that instant, so that a kill in the
	 * middle leaves it said (fd_kind_held).  KIND_BUSY: busy, no kind
	 * held. */
	KIND_BUSY_FLAG = 0x80,
	KIND_BUSY = 0xff
};
#define KIND_FIRST_TRACKED KIND_TCP

/* fd_kind_busy - true when a slot of kind k is held by a lifecycle call;
 * fd_kind_held - the kind its connection has meanwhile (not tracked: none,
 * or not known).  Context: any thread and signal handler. */
static inline bool fd_kind_busy(unsigned k)
{
	return (k & KIND_BUSY_FLAG) != 0;
}

static inline enum fd_kind fd_kind_held(unsigned k)
{
	return (enum fd_kind)(k & ~(unsigned)KIND_BUSY_FLAG);
}

/* fd_kind_tracked - true when a slot of kind k holds a metered connection
 * (not unknown, untracked or busy).  Context: any thread and signal
 * handler. */
static inline bool fd_kind_tracked(unsigned k)
{
	return k >= KIND_FIRST_TRACKED && k < KIND_COUNT;
}

/* fd_kind_counts - true when a data call on a slot of kind k is counted
 * into it: a tracked connection, or one being rewritten by a lifecycle
 * call (busy, whatever kind it holds: the count lands in the old
 * connection's numbers or the new one's, never nowhere).  The hot path's
 * one test.  Context: any thread and signal handler. */
static inline bool fd_kind_counts(unsigned k)
{
	return k >= KIND_FIRST_TRACKED;
}

struct fd_counters {
	uint64_t bytes[DIR_COUNT];
	uint64_t calls[DIR_COUNT];
	uint64_t errors[DIR_COUNT][ERR_COUNT];
	uint64_t sizes[DIR_COUNT][SIZE_BUCKETS];
	uint64_t latency_ns[DIR_COUNT];
};

/* struct fd_counters (and struct fd_hot, laid out alike) is added, moved
 * and zeroed as an array of FD_COUNTERS_WORDS uint64_t. */
#define FD_COUNTERS_WORDS (sizeof(struct fd_counters) / sizeof(uint64_t))
_Static_assert(sizeof(struct fd_counters) % sizeof(uint64_t) == 0 &&
		       _Alignof(struct fd_counters) == _Alignof(uint64_t),
	       "struct fd_counters is walked as an array of uint64_t");

/*
 * Counters as wrapped calls write them into a slot: the fields of struct
 * fd_counters, in its order, every one 64-bit, so a count is exact past
 * 2^32 on its own, whether a ticker ever runs or not (a 64-bit add is the
 * same one instruction as a 32-bit one).  Latency is kept in whatever
 * clock ticks the caller reads (the preload uses the CPU's cycle counter:
 * no function call on the hot path); the meter turns them into
 * nanoseconds (struct meter's ns_per_tick).
 */
struct fd_hot {
	uint64_t bytes[DIR_COUNT];
	uint64_t calls[DIR_COUNT];
	uint64_t errors[DIR_COUNT][ERR_COUNT];
	uint64_t sizes[DIR_COUNT][SIZE_BUCKETS];
	uint64_t latency[DIR_COUNT]; /* in the caller's clock ticks */
};
_Static_assert(sizeof(struct fd_hot) == sizeof(struct fd_counters) &&
		       offsetof(struct fd_hot, latency) ==
			       offsetof(struct fd_counters, latency_ns),
	       "struct fd_hot is moved into struct fd_counters word by word");

/* An address as the sockets API gives it; len 0 when unknown. */
struct fd_addr {
	socklen_t len;
	union {
		struct sockaddr sa;
		struct sockaddr_in in4;
		struct sockaddr_in6 in6;
		struct sockaddr_un un;
	} u;
};

/* An address as a slot keeps it: inet ones in place (28 bytes); a unix
 * socket's path lives in the table's side array, touched only by unix
 * sockets.  family 0 means unknown. */
union fd_slot_addr {
	sa_family_t family;
	struct sockaddr_in in4;
	struct sockaddr_in6 in6;
};

struct fd_unix_paths {
	uint8_t len[2]; /* path bytes used: local, peer */
	char path[2][sizeof(((struct sockaddr_un *)0)->sun_path)];
};

struct fd_slot {
	uint8_t kind;        /* enum fd_kind; atomic */
	uint8_t recheck;     /* a lifecycle call gave up: see fdtab_reap */
	uint8_t shared;      /* another fd has the same socket (dup); atomic */
	/* FD_CLOEXEC as the last exec's look found it (fdtab_note_exec):
	 * that exec closes the fd.  0 on every open.  In what was padding;
	 * atomic. */
	uint8_t cloexec;
	uint32_t seq;        /* odd while identity is being written */
	uint32_t gen;        /* bumped at every retirement */
	/* A data call in the kernel: the low 32 bits of its thread's stack
	 * pointer, 0 when none (preload.h: sm_inflight_set).  In what was
	 * padding: no offset moves. */
	uint32_t inflight_sp;
	uint64_t opened_ns;  /* CLOCK_REALTIME, 0 when inherited/unknown */
	struct fd_hot c;
	union fd_slot_addr local;
	union fd_slot_addr peer;
};

_Static_assert(offsetof(struct fd_slot, cloexec) == 3 &&
		       offsetof(struct fd_slot, seq) == 4,
	       "cloexec fills padding: the slot's layout is unchanged");
_Static_assert(offsetof(struct fd_slot, opened_ns) == 16,
	       "inflight_sp fills padding: the slot's layout is unchanged");

struct fdtab {
	struct fd_slot *slots;
	struct fd_unix_paths *unix_paths; /* side array, same index */
	uint32_t cap;  /* slots mapped; fds >= cap are not metered */
	uint32_t high; /* 1 + highest fd ever classified; atomic */
	/*
	 * A bit per fd number, set (before any store) wherever high is
	 * raised, and never cleared: a slot whose bit is clear holds
	 * nothing, so the walks (ticks, exit records, close_range) look
	 * only at numbers that ever held something, not at every one below
	 * high.  Wiped on fork, as the slots are in a fork child (zeroes
	 * there, or forgotten one by one: fdtab_forget_all): a child of a
	 * process holding 15,000 fds walks only its own.  NULL: every
	 * number below high (a recovery's dead process, a table made by
	 * hand).  Atomic words.
	 */
	uint64_t *used;
	/* Called by fdtab_open and fdtab_classify before they write a slot
	 * (NULL: none): the durable state backs the slot's page there, so
	 * the hot path never touches a page no file system backs.
	 * Context: any thread and signal handler. */
	void (*back)(void *ctx, uint32_t fd);
	/* The same for a slot about to say an fd is not metered (NULL:
	 * back): where there is no file yet, that mark may stay in private
	 * memory, and be lost when the page is backed later (the fd is then
	 * looked at again): a fork child that opens only files, pipes or
	 * ttys (a shell's child with a redirection, before its exec) makes
	 * no state file for them. */
	void (*back_untracked)(void *ctx, uint32_t fd);
	void *back_ctx;
	bool own_slots; /* fdtab_init mapped the slots (else attached) */
};

/* A consistent copy of one slot, as the ticker and close records see it. */
struct fd_snapshot {
	int fd;
	enum fd_kind kind;
	uint32_t gen;
	uint64_t opened_ns;
	bool unseen; /* retired without seeing its close (time unknown) */
	/* Its object is another fd's too (dup: the slot's mark; or a fork
	 * since it was opened, or inherited: set by the meter).  The
	 * kernel's counts are then the object's, not this fd's. */
	bool shared;
	/* An exec under way closes it (the slot's cloexec): exec records
	 * only. */
	bool close_on_exec;
	struct fd_counters c;
	struct fd_addr local;
	struct fd_addr peer;
	struct tcpinfo ti; /* the kernel's view, when read (have != 0) */
};

/*
 * fdtab_capacity - how many fd numbers to meter: max_fds when set ([track]
 * max_fds), else the RLIMIT_NOFILE hard limit (hard; RLIM_INFINITY and
 * anything above FDTAB_MAX_CAP give FDTAB_MAX_CAP; at least 1024).  Under
 * strict overcommit (overcommit: vm.overcommit_memory, 2) every page of
 * the table's private mappings is charged to the commit limit whether
 * touched or not (MAP_NORESERVE is ignored there), about a kilobyte per
 * fd: then the soft limit at start-up and FDTAB_STRICT_CAP bound it too
 * (still at least 1024).  Context: any.
 */
uint32_t fdtab_capacity(uint64_t soft, uint64_t hard, int overcommit,
			uint32_t max_fds);

/*
 * fdtab_init - map a table for fds 0 .. cap-1 (clamped to FDTAB_MAX_CAP).
 * Returns 0, or a negative errno when the mapping failed (t is then empty:
 * cap 0, so every lookup misses and nothing is counted).
 * Context: start-up only.
 */
int fdtab_init(struct fdtab *t, uint32_t cap);

/*
 * fdtab_init_at - the same, with the slot array given (cap slots, zero or
 * as a dead process left them: the durable state file); only the side
 * array is mapped here.  Returns 0 or a negative errno.
 * Context: start-up only, or a recovery tool.
 */
int fdtab_init_at(struct fdtab *t, struct fd_slot *slots, uint32_t cap);

/* fdtab_destroy - unmap the table; t becomes empty.  Context: tests only,
 * never at process exit. */
void fdtab_destroy(struct fdtab *t);

/*
 * Lifecycle calls (fdtab_open, fdtab_set_addrs, fdtab_classify,
 * fdtab_retire) take a slot for themselves for a few stores (busy: kind
 * KIND_BUSY_FLAG | the kind its connection has meanwhile).  Another one on the same slot waits for it, but boundedly:
 * when the owner is the interrupted code of the very thread a signal
 * handler runs on, or does not hand the slot back soon, the call gives up,
 * changes nothing and marks the slot for fdtab_reap, which the ticker runs
 * (so a give-up never loses numbers: the connection is retired whole a
 * tick later and the fd looked at afresh on its next data call).
 */

/*
 * fdtab_open - record that fd now holds a new connection of the given kind
 * (tracked or KIND_UNTRACKED).  Any connection still recorded on that slot
 * (its close went unseen) is retired first into *stale, and 1 is returned;
 * otherwise 0.  local/peer may be NULL.
 * Context: any thread and signal handler.
 */
int fdtab_open(struct fdtab *t, int fd, enum fd_kind kind, uint64_t now_ns,
	       const struct fd_addr *local, const struct fd_addr *peer,
	       struct fd_snapshot *stale);

/* fdtab_open_into - fdtab_open, the stale connection retired into *stale
 * as fdtab_retire_into does (bound: see there).  Context: any thread and
 * signal handler. */
int fdtab_open_into(struct fdtab *t, int fd, enum fd_kind kind,
		    uint64_t now_ns, const struct fd_addr *local,
		    const struct fd_addr *peer, struct fd_snapshot *stale,
		    uint32_t *bound);

/*
 * fdtab_mark_shared - note that fd's object is another fd's too (a dup).
 * Does nothing on an untracked slot.  A mark that lands on the next
 * connection of a slot being retired meanwhile only makes that one skip
 * its unseen count.
 * Context: any thread and signal handler.
 */
void fdtab_mark_shared(struct fdtab *t, int fd);

/*
 * fdtab_set_addrs - replace the addresses of fd's connection (connect,
 * bind); NULL leaves one unchanged.  Does nothing on an untracked slot.
 * Context: any thread and signal handler.
 */
void fdtab_set_addrs(struct fdtab *t, int fd, const struct fd_addr *local,
		     const struct fd_addr *peer);

/*
 * fdtab_classify - set the kind of an fd first seen in a data call, only if
 * no one classified it meanwhile.  Returns the kind the slot holds after
 * (busy, fd_kind_busy, while a lifecycle call holds it: never waits).
 * Context: any thread and signal handler.
 */
enum fd_kind fdtab_classify(struct fdtab *t, int fd, enum fd_kind kind,
			    const struct fd_addr *local,
			    const struct fd_addr *peer);

/*
 * fdtab_retire - end the connection on fd.  When the slot held a tracked
 * connection, its final numbers are moved into *out (the slot's counters
 * become zero, its generation grows) and 1 is returned; otherwise the slot
 * is simply reset to KIND_UNKNOWN and 0 is returned.
 * Context: any thread and signal handler.
 */
int fdtab_retire(struct fdtab *t, int fd, struct fd_snapshot *out);

/*
 * fdtab_retire_gen - fdtab_retire, only while fd still holds generation
 * gen (a lifecycle call may have retired it and opened another since).
 * Context: any thread and signal handler.
 */
int fdtab_retire_gen(struct fdtab *t, int fd, uint32_t gen,
		     struct fd_snapshot *out);

/*
 * fdtab_retire_into - fdtab_retire (gen NULL) or fdtab_retire_gen (gen
 * set), into *out where a kill at any instruction loses nothing, when out
 * lies in the state file (a close's ring entry, closeq_claim) and bound
 * is given: out's counters must read 0 beforehand.  Once the slot is
 * owned, out->fd, out->kind and out->gen name it and *bound becomes 1;
 * only then do the counters move, each word written into *out before it
 * leaves the slot, and *bound becomes 2 + the index of each word moved.
 * A recovery finds the rest with fdtab_rescue.
 * Context: any thread and signal handler.
 */
int fdtab_retire_into(struct fdtab *t, int fd, const uint32_t *gen,
		      struct fd_snapshot *out, uint32_t *bound);

/*
 * fdtab_rescue - a dead process's retire that fdtab_retire_into had bound
 * to out (bound: the value it left, at least 1) and not finished (the slot
 * still has out->gen): out becomes the whole connection (the slot's
 * identity; a counter word moved already, the sum of the two, since a
 * data call may have added to the slot after; the others, the larger,
 * since the word being moved is in both), and the slot is emptied.
 * Returns 1 then; 0 when the retire had finished (out is whole already).
 * Not bound (0: a claim that names out->fd, the generation and the kind
 * read before it, its counters zero): the same when the slot was left
 * busy at that generation (the close's own retire, or another lifecycle
 * call it waited for, held it), under the kind the slot held
 * (fd_kind_held) or else the one read; the addresses left unknown when
 * the kill may have caught one half-written (an odd sequence); 0
 * otherwise.
 * Context: recovery only (nobody else uses t).
 */
int fdtab_rescue(struct fdtab *t, struct fd_snapshot *out, uint32_t bound);

/*
 * fdtab_unbusy - a dead process's slots that a kill left busy (held by a
 * lifecycle call: an address being noted, a number being opened or
 * classified) and no close of its took (fdtab_rescue): each takes the
 * kind it held (fd_kind_held), an open connection again, its addresses
 * unknown when one may be half-written (an odd sequence); one that held
 * no connection (the call had moved it out already, or not yet made the
 * new one its) is made unknown, so that what it counts is swept into the
 * closed totals (fdtab_sweep, as a stray).  Every slot's give-up mark
 * (recheck) is cleared: a reap is a live ticker's (a close at its time),
 * and a dead process's slot is what it holds.  Returns how many were
 * busy.
 * Context: recovery only.
 */
uint32_t fdtab_unbusy(struct fdtab *t);

/*
 * fdtab_reap - when a lifecycle call gave up on fd's slot (see above),
 * retire whatever connection the slot holds now, as fdtab_retire does, and
 * leave it KIND_UNKNOWN for the next data call to classify.  Returns 1
 * with *out filled when a tracked connection was retired; 0 otherwise
 * (nothing to do, or the slot is still busy: try on the next tick).
 * Context: ticker only.
 */
int fdtab_reap(struct fdtab *t, int fd, struct fd_snapshot *out);

/*
 * fdtab_reap_into - fdtab_reap into a claimed close queue entry's snapshot
 * out, bound as fdtab_retire_into binds it (bound: &e->bound), so that a
 * kill in the middle loses nothing (closeq_claim).
 * Context: ticker only.
 */
int fdtab_reap_into(struct fdtab *t, int fd, struct fd_snapshot *out,
		    uint32_t *bound);

/*
 * fdtab_sweep - move out the strays of a slot that holds no connection
 * (unknown or untracked): counts a data call added after a close on
 * another thread (or in a signal handler) had already taken the counters,
 * a call that finished just after the fd it was made on was retired.  A
 * reopened slot carries them into its new connection (fd_kind_counts);
 * one that is not would keep them out of every total: the ticker adds
 * them to the closed totals instead.  Returns 1 with *out holding them, 0
 * when there were none (or the slot was opened meanwhile: then they stay,
 * and go with its connection).  Lock-free; the slot is never made busy.
 * Context: ticker only.
 */
int fdtab_sweep(struct fdtab *t, int fd, struct fd_counters *out);

/*
 * fdtab_snapshot - copy fd's slot consistently.  Returns 1 with *out filled
 * when the slot holds a tracked connection, 0 when it does not or when a
 * lifecycle call was rewriting it (try again on the next tick).
 * Context: any thread (the ticker; dup's lifecycle hook); signal-safe.
 */
int fdtab_snapshot(const struct fdtab *t, int fd, struct fd_snapshot *out);

/*
 * fdtab_note_exec - before an exec record: for every tracked fd, note
 * whether the exec closes it, as getfd(fd) (fcntl F_GETFD: the flags, or
 * a negative value when unknown) says FD_CLOEXEC.  Returns how many the
 * exec closes.  A connection opened after the look carries no mark.
 * Context: the thread about to exec.
 */
uint32_t fdtab_note_exec(struct fdtab *t, int (*getfd)(int fd));

/*
 * fdtab_forget_all - in a fresh child after fork: every slot returns to
 * KIND_UNKNOWN with zero counters, a new generation and an even sequence
 * (a fork can land while another thread is half-way through a slot), so
 * the child's first call on an inherited fd classifies it afresh (as
 * inherited).
 * Context: fork child (single-threaded).
 */
void fdtab_forget_all(struct fdtab *t);

/* fd_counters_add - add every counter of b into a.  Context: any thread
 * (plain, not atomic: callers add into their own copies). */
void fd_counters_add(struct fd_counters *a, const struct fd_counters *b);

/* fd_derive_calls - calls = sizes + errors, per direction (see
 * fd_calls_derived).  Context: any thread. */
void fd_derive_calls(struct fd_counters *c);

/* fd_kind_name - "tcp", "udp", "unix", "unix_dgram", "socket", "pipe",
 * "file", "tty" (or "unknown").  Context: any thread and signal handler. */
const char *fd_kind_name(enum fd_kind k);

/* --- the hot path ------------------------------------------------------ */

/* Category bits the hot path looks at, from enum config_category. */
#define ACCT_BYTES (1u << 0)
#define ACCT_CALLS (1u << 1)
#define ACCT_ERRORS (1u << 2)
#define ACCT_SIZES (1u << 3)

/* fdtab_slot - fd's slot, or NULL beyond the table.  fdtab_kind - its
 * kind (acquire).  Context (both): any thread and signal handler. */
static inline struct fd_slot *fdtab_slot(const struct fdtab *t, int fd)
{
	/* An unsigned compare also rejects negative fds. */
	if ((unsigned)fd >= t->cap)
		return 0;
	return &t->slots[fd];
}

/*
 * fdtab_next_used - the first fd number from from (inclusive) to end
 * (exclusive) whose slot may hold anything (struct fdtab's used); end
 * when there is none.  Walks use fdtab_for_each_used.
 * Context: any thread and signal handler.
 */
static inline uint32_t fdtab_next_used(const struct fdtab *t, uint32_t from,
				       uint32_t end)
{
	if (!t->used)
		return from < end ? from : end;
	while (from < end) {
		uint64_t w = __atomic_load_n(&t->used[from / 64],
					     __ATOMIC_ACQUIRE) >>
			     (from % 64);

		if (w) {
			from += (uint32_t)__builtin_ctzll(w);
			return from < end ? from : end;
		}
		from = (from | 63u) + 1;
	}
	return end;
}

/* For each fd (a uint32_t) from from to end (exclusive) whose slot may
 * hold anything. */
#define fdtab_for_each_used(t, fd, from, end)                                 \
	for ((fd) = fdtab_next_used((t), (from), (end)); (fd) < (end);        \
	     (fd) = fdtab_next_used((t), (fd) + 1, (end)))

struct lockall_set;
/* fdtab_lazy_ranges - t's reservations (the slots when its own, the side
 * arrays) to s, for mlockall to leave out (lockall.h).  Context: any. */
void fdtab_lazy_ranges(const struct fdtab *t, struct lockall_set *s);

/*
 * fdtab_use_all - every number below cap is looked at by the walks (a
 * recovery reading a dead process's slots, which left no map of them).
 * fdtab_use_below - every number below high (at most cap): the slots
 * above it are known to be empty (never backed in the dead process's
 * file).
 * Context: start-up, recovery.
 */
void fdtab_use_all(struct fdtab *t);
void fdtab_use_below(struct fdtab *t, uint32_t high);

static inline enum fd_kind fdtab_kind(const struct fd_slot *s)
{
	return (enum fd_kind)__atomic_load_n(&s->kind, __ATOMIC_ACQUIRE);
}

/* fd_size_bucket - the histogram bucket of a transfer of n bytes;
 * fd_err_class - the class of errno err.  Context (both): any thread and
 * signal handler. */
static inline unsigned fd_size_bucket(uint64_t n)
{
	/* floor(log2(2n + 1)): 0 for 0, i for [2^(i-1), 2^i), no branch.
	 * n is a byte count of one call, far below 2^63. */
	unsigned b = 63u - (unsigned)__builtin_clzll(2 * n + 1);

	return b < SIZE_BUCKETS - 1 ? b : SIZE_BUCKETS - 1;
}

static inline enum fd_err fd_err_class(int err)
{
	if (err == EAGAIN || err == EWOULDBLOCK)
		return ERR_AGAIN;
	return err == EINTR ? ERR_INTR : ERR_OTHER;
}

/* With sizes and errors both counted, every call lands in exactly one of
 * them: calls is their sum, and is not counted separately (one atomic add
 * less per call).  fd_calls_derived() says when; fd_derive_calls() sums.
 * Context: any thread and signal handler. */
static inline int fd_calls_derived(unsigned acct)
{
	return (acct & ACCT_SIZES) && (acct & ACCT_ERRORS);
}

/*
 * fd_account - count one finished data call on a tracked slot: r is what
 * the call returned (bytes moved, or -1 with err set).  Only the categories
 * in acct are touched.  Lock-free and async-signal-safe; errno untouched.
 * Context: any thread and signal handler.
 */
static inline __attribute__((always_inline)) void
fd_account(struct fd_slot *s, enum fd_dir dir, int64_t r,
			      int err, unsigned acct)
{
	struct fd_hot *c = &s->c;

	if ((acct & ACCT_CALLS) && !fd_calls_derived(acct))
		__atomic_fetch_add(&c->calls[dir], 1, __ATOMIC_RELAXED);
	if (r < 0) {
		if (acct & ACCT_ERRORS)
			__atomic_fetch_add(&c->errors[dir][fd_err_class(err)],
					   1, __ATOMIC_RELAXED);
		return;
	}
	if (acct & ACCT_BYTES)
		__atomic_fetch_add(&c->bytes[dir], (uint64_t)r,
				   __ATOMIC_RELAXED);
	if (acct & ACCT_SIZES)
		__atomic_fetch_add(&c->sizes[dir][fd_size_bucket((uint64_t)r)],
				   1, __ATOMIC_RELAXED);
}

#endif
