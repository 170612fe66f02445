/*
 * state.h - the durable state: the part of a process's metering state that
 * its final numbers are made of, in a MAP_SHARED file on a tmpfs, so that
 * the kernel keeps it however the process ends (SIGKILL, OOM killer).
 *
 * One file per process, DIR/PID-START.state (START: the process's start
 * time as /proc/PID/stat gives it, so a recycled pid has its own file).
 * An exec'd image takes the name over: it removes the file its predecessor
 * marked final before exec, or, when the predecessor exec'd without our
 * knowing (a raw system call), renames it DIR/PID-START-NS.state (NS: the
 * predecessor's metering start) marked STATE_ORPHAN for recovery.
 * The layout is pointer-free, versioned and self-describing: a header (struct
 * state_header, at offset 0) names the process, its log, the config that
 * shapes its records, and the offset and size of every region, and the
 * offsets of the fields inside struct fd_slot, so that a reader outside the
 * process can check its own idea of the layout against the file's:
 *
 *   header    struct state_header (one page)
 *   config    struct config, as the process loaded it
 *   ticker    struct state_ticker: what the ticker drained (double buffer)
 *   queue     struct closeq_shared: the close queue's counts
 *   ring      CLOSEQ_CAP struct closeq_entry: closes not yet drained,
 *             then CLOSEQ_SPILLS struct closeq_spill: closes that found
 *             the ring full (layout.spills of layout.spill_size bytes)
 *   slots     cap struct fd_slot: the fd table the wrappers count into
 *
 * The hot path is unchanged: the fd table's slot array *is* the file's
 * slots region, mapped at the address the wrappers index.  No page of the
 * file is ever touched before it is backed: the file is sparse, and the
 * slots and ring regions are made of chunks that a lifecycle call backs
 * (MADV_POPULATE_WRITE, or fallocate) the first time it writes into one;
 * until then (or for good, when the file system is full) the chunk is
 * private anonymous memory, so a full tmpfs costs durability, never a
 * SIGBUS.  See docs/state.md.
 */
#ifndef SOCKMETER_STATE_H
#define SOCKMETER_STATE_H

#include "../config/config.h"
#include "closeq.h"
#include "fdtab.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define STATE_MAGIC "SOCKMST\n" /* 8 bytes, no NUL */
#define STATE_VERSION 5 /* 3: state_ticker.alive_real_ns; 4: the spills;
			   5: a busy slot says the kind it holds */
#define STATE_BYTE_ORDER 0x01020304u
#define STATE_PAGE 4096u
#define STATE_SUFFIX ".state"
#define STATE_LOG_MAX (CONFIG_PATH_MAX + 128)

/* header.status */
enum state_status {
	STATE_LIVE = 1,  /* the process (image) is metering */
	STATE_FINAL = 2, /* its final record is written (exit, exec): a
			  * reader removes the file, writes nothing */
	STATE_ORPHAN = 3, /* its image is gone (a later image of the same
			   * pid found it live): recover it */
	STATE_UNWRITTEN = 4, /* it exited, but its final record could not
			      * be written (log unreachable): recover it,
			      * marked "exit-recovered" */
	STATE_ENDING = 5, /* its final record is being written: a process
			   * killed meanwhile may have written it whole, so
			   * recovery looks for it in the log first */
};

/* What the ticker drained out of the close queue, as records show it. */
struct state_closed {
	uint64_t upto; /* queue position: the entries before it are in */
	uint64_t closed_n[KIND_COUNT];
	struct fd_counters closed[KIND_COUNT];
	/* The bytes the kernel saw and the wrappers did not, of the closed
	 * TCP connections whose records were written (bytes_*_unseen): a
	 * recovered exit record's totals show them as a written one's do. */
	uint64_t unseen[DIR_COUNT];
};

/*
 * The ticker's durable part.  buf[active] is always whole: the ticker
 * writes the other one, then flips active (one store), then frees the
 * queue entries it took; a process killed at any point leaves either the
 * old totals with the entries still queued, or the new ones.
 */
struct state_ticker {
	uint32_t active;    /* 0 or 1; atomic */
	/* 1 once a chunk of slots or ring could not be backed by the file
	 * (its file system full): some numbers are in private memory only,
	 * and a recovered exit record says it is incomplete.  Atomic. */
	uint32_t incomplete;
	double ns_per_tick; /* latency clock calibration */
	/* The wall clock at the ticker's latest tick: a recovery's bound on
	 * when the process was last seen alive (0: it never ticked). */
	uint64_t alive_real_ns;
	struct state_closed buf[2];
};

/* The tools read alive_real_ns as the word before buf (the header's
 * layout gives buf's offset: scripts/sockmeter_log.py). */
_Static_assert(offsetof(struct state_ticker, alive_real_ns) + 8 ==
		       offsetof(struct state_ticker, buf),
	       "alive_real_ns is the word before buf");

/* Offsets (bytes from the start of the file) and sizes of the regions, and
 * the layout of the records inside them. */
struct state_layout {
	uint64_t file_size;
	uint64_t config_off, config_size;
	uint64_t ticker_off, ticker_size;
	uint64_t queue_off, queue_size;
	uint64_t ring_off, ring_count, entry_size, ring_chunk;
	uint64_t slots_off, slot_count, slot_size, slot_chunk;
	/* inside struct fd_slot */
	uint32_t slot_kind, slot_seq, slot_gen, slot_opened, slot_hot,
		slot_local, slot_peer;
	/* inside struct fd_hot: arrays of [dir] or [dir][n] */
	uint32_t hot_bytes, hot_calls, hot_latency, hot_errors, hot_sizes;
	/* inside struct closeq_entry, and its struct fd_snapshot */
	uint32_t entry_state, entry_closed_ns, entry_snapshot;
	uint32_t snap_fd, snap_kind, snap_opened, snap_counters;
	uint32_t counters_size, snapshot_size;
	/* inside struct fd_counters: u64 arrays of [dir] or [dir][n] */
	uint32_t ctr_bytes, ctr_calls, ctr_errors, ctr_sizes, ctr_latency;
	/* inside struct state_ticker and struct state_closed */
	uint32_t tick_active, tick_buf, closed_size, closed_upto, closed_n,
		closed_c;
	/* inside struct closeq_shared */
	uint32_t q_head, q_tail, q_pushed, q_dropped, q_dropped_c, q_dropped_n;
	uint32_t dirs, errs, size_buckets, kinds;
	uint32_t closed_unseen; /* inside struct state_closed */
	/* Version 4: the spills, at ring_off + ring_count * entry_size,
	 * those in use marked in struct closeq_shared's spills_used; inside
	 * struct closeq_spill (its entry at offset 0). */
	uint32_t q_spills_used, spills, spill_size, spill_next_kind,
		spill_next_n, spill_next, spill_sum_n, spill_sum;
};

struct state_header {
	char magic[8];
	uint32_t version;
	uint32_t header_size;
	uint32_t byte_order;
	uint32_t status;        /* enum state_status; atomic */
	int64_t pid;
	uint64_t proc_start;    /* /proc/PID/stat field 22, clock ticks */
	uint64_t start_real_ns; /* when metering started (records' "start") */
	uint64_t start_mono_ns;
	/* The effective uid its log is written as, as the parent user
	 * namespace knows it (procns_uid_outer: what %u names). */
	uint32_t uid;
	uint32_t format;        /* enum config_format */
	char boot_id[40];       /* /proc/sys/kernel/random/boot_id */
	char prog[CONFIG_NAME_MAX];
	char log_path[STATE_LOG_MAX]; /* expanded, or "stderr" */
	struct state_layout layout;
};

/* A chunk of a region: still the private memory it started as and never
 * tried; being backed by a thread; backed by the file; private for good
 * (the file system could not back it). */
enum { CHUNK_UNTRIED, CHUNK_BACKING, CHUNK_FILE, CHUNK_PRIVATE };

/* A region made of chunks backed on first use. */
struct state_region {
	char *va;          /* where the process uses it */
	uint64_t off;      /* where it is in the file */
	uint64_t elem;     /* element size */
	uint64_t chunk;    /* bytes per chunk: whole pages (an element may
			    * straddle two chunks) */
	uint64_t count;    /* elements */
	uint32_t nchunks;
	uint32_t tried_hi; /* chunks [tried_hi, nchunks) were never tried
			    * (atomic): what a fork child resets ends here */
	uint8_t *chunk_state; /* per chunk, atomic: see state.c */
};

#define STATE_MAX_CHUNKS 16384
#define STATE_RING_CHUNKS (CLOSEQ_RING_PLACES / 16 + 1)

/* The durable state of this process, as the preload holds it. */
struct state {
	/* What a fork child writes (state_after_fork, make_file) comes
	 * first, the chunk states of the ring and the low slots right after
	 * and the path last: one page of this struct to fault in a child,
	 * not two. */
	bool durable;        /* a file backs it (else private memory) */
	bool exposed;        /* state_mark_exposed done */
	bool file_dontfork;  /* file is MADV_DONTFORK (what moves out is not) */
	uint32_t cap;
	int dir_pin;         /* state_pin_dir's fd + 1 (0: none): the ticker's */
	uint64_t proc_start; /* this process's, as in the file's name */
	/* The file's identity, taken when it was made (0: none, or not to
	 * be watched), and state_removed's: its O_PATH fd + 1 in the
	 * ticker's own table (0: none yet), whether it said so. */
	uint64_t file_dev, file_ino;
	int watch_fd;
	bool removed_said;
	char *file;          /* the whole file mapped (regions move out) */
	size_t size;
	struct state_header *hdr;
	struct state_ticker *ticker;
	struct closeq_shared *queue;
	struct closeq_entry *ring;
	struct fd_slot *slots;
	/* Header..queue live here, private memory until a file's head is
	 * moved onto it (so their address never changes, file or not). */
	char *head;
	/* A fork child's fresh regions, [head, head + wipe_end), are marked
	 * MADV_WIPEONFORK at its own first fork or file, not in the fork: a
	 * child that only exits or execs never pays for it. */
	bool wipe_due;
	uint64_t wipe_end;
	/* A fork child makes its file at its first tracked fd (state.c):
	 * file_state (atomic) and what the file's header is made of. */
	uint32_t file_state;
	/* A fork child: the process it was forked from had a file.  refused
	 * (atomic): this child could not make one all the same (its user
	 * cannot use a fixed [state] dir: a parent that dropped root before
	 * the fork), to be said once (state_refused_take). */
	bool parent_durable;
	uint32_t refused;
	int refused_err; /* (atomic) that failure's errno */
	/* (atomic) A chunk could not be backed (ticker->incomplete), to be
	 * said once (state_incomplete_take): 0 none, 1 to be said, 2 said.
	 * incomplete_err: the first such failure's errno. */
	uint32_t incomplete;
	int incomplete_err;
	const struct config *cfg;
	const char *prog;
	long pid;
	uint64_t start_real_ns, start_mono_ns;
	void (*made)(struct state *st); /* called once that file is made */
	/* Tests: called before each populate of a file extent; a nonzero
	 * return (-errno) is the populate's failure (a full disk). */
	int (*populate)(void *addr, size_t len);
	struct state_region slot_region, ring_region;
	uint8_t ring_chunks[STATE_RING_CHUNKS];
	uint8_t slot_chunks[STATE_MAX_CHUNKS];
	char path[CONFIG_PATH_MAX + 96];
};

struct lockall_set;
/* state_lazy_ranges - the reservation the process uses (head, ring,
 * slots) and what is left of the file's mapping, to s, for mlockall to
 * leave out (lockall.h).  Context: any. */
void state_lazy_ranges(const struct state *st, struct lockall_set *s);

/*
 * state_open - set up the state of a process about to meter: the file in
 * cfg->state_dir (when cfg->state_enabled), or private memory.  st->slots
 * (cap slots), st->ring, st->queue and st->ticker are then ready for
 * fdtab_init_at and closeq_attach.  A directory or file that cannot be used
 * is reported once through report(ctx, msg) and private memory is used:
 * metering never stops because of it.  The file's fd is closed before this
 * returns.  Returns 0, or -ENOMEM when not even private memory could be
 * mapped.
 * Context: start-up only.
 */
int state_open(struct state *st, const struct config *cfg, const char *prog,
	       long pid, uint32_t cap, uint64_t start_real_ns,
	       uint64_t start_mono_ns, const char *log_path,
	       config_report_fn report, void *ctx);

/*
 * state_back_slot, state_back_ring - a lifecycle call is about to write
 * slot fd (ring entry index): back its chunk with the file if that has not
 * been tried yet.  ctx is the struct state.  Lock-free; a system call or
 * two the first time a chunk is used, nothing after.
 * Context: any thread and signal handler (lifecycle calls, never data
 * calls).
 */
void state_back_slot(void *ctx, uint32_t fd);
void state_back_ring(void *ctx, uint32_t index);

/*
 * state_back_slot_untracked - the same for a slot about to say its fd is
 * not metered: backed only once the process has its file (a fork child
 * makes none for such fds; struct fdtab's back_untracked).
 * Context: as state_back_slot.
 */
void state_back_slot_untracked(void *ctx, uint32_t fd);

/*
 * state_ready_ring - ring entry index is about to be taken by a push that
 * follows a retire (closeq_prepare): backed as state_back_ring does, once
 * the process has its file; never makes one (a fork child makes its file
 * at its first tracked fd, and closes of others must not).
 * Context: as state_back_ring.
 */
void state_ready_ring(void *ctx, uint32_t index);

/*
 * state_kept_ring - after state_back_ring: a write to place index is kept
 * (its chunk is the file's, or the state has no file).  False for a chunk
 * the file system or a sandboxed thread left private.
 * Context: as state_back_ring.
 */
bool state_kept_ring(void *ctx, uint32_t index);

struct meter_mem;
/*
 * state_meter_mem - mem wired to st's regions and its backing calls, for
 * meter_init_at (a meter whose table and queue live in the state file).
 * Context: start-up only.
 */
void state_meter_mem(struct state *st, struct meter_mem *mem);

/*
 * state_prepare_fork - before a fork (in the forking process): what a
 * fork child left for its own first fork (its fresh regions marked
 * MADV_WIPEONFORK, so that its children do not copy them).
 * Context: fork's prepare handler, any thread not quiet (quiet.h).
 */
void state_prepare_fork(struct state *st);

/*
 * state_after_fork - in a fresh child: private zeroes at the same
 * addresses, so that nothing the child does reaches the parent's file.
 * Returns 0, or -errno when that memory could not be mapped: st's memory
 * is then still (partly) the parent's, and the child must not write it.
 * Every region starts from zero; the caller then resets the meter.  The
 * child's own file is made by the first state_back_slot/state_back_ring
 * (its first tracked fd): a child that exits or execs at once has none.
 * st->made, when set, is called once that file exists.  cfg and prog
 * must outlive st (the file's header is made of them later).  Quietly: a
 * failure was reported by the first process.
 * Context: fork child (before fork returns).
 */
int state_after_fork(struct state *st, const struct config *cfg,
		     const char *prog, long pid, uint64_t start_real_ns,
		     uint64_t start_mono_ns);

/*
 * state_file_wanted - true when the process has no file yet but will make
 * one at its first tracked fd (a fork child before then).  Before a uid
 * change, such a file is better made after the change, in the directory
 * [state] dir names for the user it becomes, who can then remove it at
 * exit, when that user may use that directory (state_dir_usable_by);
 * else (a fixed directory of the old user's, a parent closed to the new
 * user) it is made before, or never.
 * Context: any thread.
 */
bool state_file_wanted(const struct state *st);

/*
 * state_make_file - make the file now if it is wanted (state_file_wanted),
 * not at the first tracked fd; true when made.  Context: any thread, not
 * a sandboxed one.
 */
bool state_make_file(struct state *st);

/*
 * state_set_status - mark the file STATE_LIVE or STATE_FINAL (exec: final
 * before the exec, live again when it failed).
 * state_remove - the final record is written: mark it final and remove the
 * file (clean exit).
 * Context: the caller of the final record (holds the ticker's lock).
 */
void state_set_status(struct state *st, enum state_status s);
void state_remove(struct state *st);

/*
 * state_refused_take - true once when this fork child could not make its
 * file where the process it was forked from had one (the failure was
 * quiet then: see make_file); the caller says so.
 * Context: the ticker, or the thread writing the final record.
 */
bool state_refused_take(struct state *st);

/* state_refused_err - the errno of the failure state_refused_take told of
 * (0: not known). */
int state_refused_err(const struct state *st);

/*
 * state_incomplete_take - true once when a chunk of this process's state
 * could not be backed by its file (no room left in its file system): the
 * numbers of some fds are then in private memory only, lost to a kill,
 * and a recovered exit record says "incomplete".  The caller says so.
 * Context: the ticker, or the thread writing the final record.
 */
bool state_incomplete_take(struct state *st);

/*
 * state_no_room - whether err, a failure to back the state file's pages,
 * says that its file system is full: ENOSPC, or EFAULT, which
 * MADV_POPULATE_WRITE returns for a full tmpfs (its fault is a SIGBUS).
 */
bool state_no_room(int err);

/*
 * state_discard - undo state_open: the file removed, and every mapping it
 * made let go (the reservation, and what is left of the file's own
 * mapping).  For a start-up that failed after state_open (the library then
 * runs as pass-through: the program keeps its whole address space, which
 * a `ulimit -v` or `-d` may make all it has).  st is zeroes after.
 * Context: start-up only.
 */
void state_discard(struct state *st);

/*
 * state_mark_exposed - the process, root now, is about to become another
 * user (or to chroot, after which its file cannot be reached by name):
 * that user may write the file through the mapping it keeps, so its mode
 * loses the owner's write bit (0400), which it cannot put back.  Root's
 * recovery then trusts nothing its header names (see recover.c), only the
 * log path the file's extended attribute STATE_XATTR_LOG holds: set here
 * first, while the process is still trusted, and out of the new user's
 * reach (trusted.*, or user.* where the file system has no trusted
 * namespace or the process lacks CAP_SYS_ADMIN; none at all on a file
 * system without either: the records then go beside the file).  Where
 * the mode cannot be changed (a filter forbids it, a read-only mount) the
 * file is removed instead: the process loses only its durability.  Once.
 * Returns 0, or the -errno of the change of mode when neither worked
 * (the caller says so).
 * Context: any thread, not a sandboxed one; root.
 */
int state_mark_exposed(struct state *st);

/*
 * state_keep_log_path - the log the header names now, kept in the file's
 * extended attribute (STATE_XATTR_LOG, else STATE_XATTR_LOG_USER), out
 * of reach of a process that drops root later, in whatever way: by the
 * mark (above), and by a root process whenever its header names a log
 * (preload/durable.c), so that root's recovery may make that log (or
 * textfile) where nothing is yet, a thing it never does on a header's
 * word alone (recover.c: root_append).  log: the path from the process's
 * own memory (NULL: the header's, which anything that shares the mapping
 * could be rewriting).  Nothing where the file system keeps neither.
 * Context: any thread, not a sandboxed one.
 */
void state_keep_log_path(struct state *st, const char *log);

/* FUSE's (and fuseblk's) f_type: a state directory on it is refused, by
 * the library and by any recovery, since its owners and modes are its
 * server's word (a user's FUSE mount on /dev/shm/sockmeter-UID claimed
 * to be root's, and fed root's recovery a state file: a reviewer's
 * proof). */
#define STATE_FUSE_MAGIC 0x65735546L

/* The extended attributes that keep a marked file's log path. */
#define STATE_XATTR_LOG "trusted.sockmeter.log"
#define STATE_XATTR_LOG_USER "user.sockmeter.log"


/*
 * state_pin_dir - open the file's directory now and keep it, in the
 * calling thread's private fd table (progfd_detached: the ticker's), so
 * that state_remove on that thread still reaches the file after a chroot.
 * Context: ticker only.
 */
void state_pin_dir(struct state *st);

/*
 * state_removed - whether the file was removed while the process runs
 * (its link count 0: systemd-logind's RemoveIPC at the user's last logout,
 * a tmp cleaner, a person), true once.  The numbers stay in the mapping
 * and the exit record is written as ever, but a kill would now lose what
 * happened since the last record, and nothing else would say so.  Watched
 * through an O_PATH fd of the file, opened at the first call and kept in
 * the calling thread's private fd table (progfd_detached; else nothing
 * is watched), checked against the identity the file was made with: a
 * chroot, a mount namespace or a changed uid later never make a false
 * alarm, and only a file really unlinked counts.  Not a file this process
 * ends (marked final or ending) or removed itself.  Context: ticker only.
 */
bool state_removed(struct state *st);

/*
 * The ticker's double buffer.  state_ticker_begin starts the next copy
 * from the whole one; state_ticker_add adds a drained close record's
 * numbers to it; state_ticker_commit makes it the whole one, including the
 * queue entries before upto.
 * Context: ticker only.
 */
void state_ticker_begin(struct state_ticker *t);
void state_ticker_add(struct state_ticker *t, const struct fd_snapshot *s);
/* state_ticker_add_strays - a slot's strays (fdtab_sweep): numbers in the
 * totals, under no kind's closed connections. */
void state_ticker_add_strays(struct state_ticker *t,
			     const struct fd_counters *c);
/* state_ticker_add_unseen - a written close record's bytes_*_unseen. */
void state_ticker_add_unseen(struct state_ticker *t,
			     const uint64_t unseen[DIR_COUNT]);
void state_ticker_commit(struct state_ticker *t, uint64_t upto);
const struct state_closed *state_ticker_whole(const struct state_ticker *t);

/*
 * state_layout_fill - the layout of this build for cap slots: what a
 * header says, and what a reader compares a file's header with.
 * Context: any.
 */
void state_layout_fill(struct state_layout *l, uint32_t cap);

/*
 * state_dir_expand - cfg->state_dir with %u (the effective uid: the
 * directory must be owned by it, as the log's %u is the uid that writes;
 * as the parent user namespace knows it, procns.h) and %% expanded.
 * state_dir_expand_uid: with uid, as it is, for %u.
 * Returns 0 or -ENAMETOOLONG.
 */
int state_dir_expand(const char *tmpl, char *out, size_t cap);
int state_dir_expand_uid(const char *tmpl, unsigned uid, char *out,
			 size_t cap);

/*
 * state_dir_usable_by - whether the state directory tmpl names for uid
 * would pass the checks (a directory owned by uid, closed to others) once
 * the process is uid, or could be made by it then: asked by a process
 * about to become uid (as root: it can look anywhere).  By the mode bits
 * of the path's directories; group bits count for nothing (the groups of
 * then are not known), so a directory only a group opens says false.
 * Context: any thread.
 */
bool state_dir_usable_by(const char *tmpl, unsigned uid);

/*
 * state_proc_start - field 22 of /proc/PID/stat (start time in clock ticks
 * since boot, as the initial time namespace counts them: the caller's
 * boottime offset taken off), or 0 when the process is gone, a zombie, or
 * unreadable.  Raw system
 * calls only, no allocation.
 * Context: any thread and signal handler.
 */
uint64_t state_proc_start(long pid);

/* state_starts_match - whether two such start times (both non-zero) are
 * one process's: equal, or up to two ticks apart (the kernel rounds a
 * start time shifted by its reader's time namespace, and a wrapped one
 * is undone to within a tick).  Context: any. */
bool state_starts_match(uint64_t a, uint64_t b);

/*
 * Pid namespaces.  A state file's name holds its process's pid and start
 * time, by which a recovery tells a live process from a dead one.  Those
 * pids mean something only in the pid namespace /proc numbers processes
 * in: a process in a container (unshare -fp --mount-proc) that shares the
 * state directory with the host is pid 1 there, another process to the
 * host.  So the name's pid is the one /proc shows (under unshare -fp
 * without a /proc of its own, the host's: getpid() says 1, /proc/1 is the
 * host's init), and a name whose pid is not in the initial namespace's
 * numbering is tagged with that namespace: PID-START-nsINODE.state.  A
 * recovery judges only files whose tag is its own view's
 * (state_pid_view); the others are left alone, never taken for dead.
 */
#define STATE_NS_TAG	  "-ns"
#define STATE_PID_NS_INIT 0xEFFFFFFCu /* the initial pid namespace's inode */
#define STATE_VIEW_BLIND  UINT64_MAX  /* /proc shows another namespace,
					* or there is no /proc */
/* The tag of a file made where there was no /proc (a chroot or sandbox
 * without one): neither its pid nor its start time can be matched with a
 * process anyone sees, so no recovery takes it for dead while its
 * boot lasts; `sockmeter recover` run where it ran, once it is surely
 * over, is told so (docs/state.md). */
#define STATE_VIEW_NOPROC 1

/*
 * state_pid_view - the tag of this process's view of pids: 0 when /proc
 * numbers processes in the initial pid namespace (or has no namespace
 * files: a kernel without them), the namespace's inode for another one,
 * STATE_VIEW_BLIND when it cannot tell which namespace /proc shows or
 * there is no /proc.  *pid (when pid is not NULL): this
 * process's pid in /proc's numbering (getpid() when the view is its own
 * or blind).  Context: any thread (not a signal handler).
 */
uint64_t state_pid_view(long *pid);

/* state_name_view - the tag in a state file's name (0: none). */
uint64_t state_name_view(const char *name);

#endif
