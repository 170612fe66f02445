/*
 * sink.h - where records go: a log file (one per process) or stderr.
 *
 * The file is opened, appended to and closed for every batch of records,
 * with raw system calls, in an fd table of the library's own (progfd.h):
 * the library never holds an fd in the program's table, so it can neither
 * take a number the program expects (the lowest free one) nor be closed
 * by it; its writes never pass through its own wrappers and are never
 * counted.  Opening the path again for every batch is also what makes
 * external rotation work (logrotate's `create`: the next batch goes to the
 * new file).  Files are created mode 0600, never through a symlink
 * (O_NOFOLLOW), never blocking on a FIFO (O_NONBLOCK).  SIGPIPE and
 * SIGXFSZ raised by our own write are swallowed, so a full disk, a file
 * size limit or a closed stderr pipe cannot kill the host.  The first
 * failure is reported once; later batches are still tried.  Records for
 * "stderr" go to fd 2 only while it is the file it was at start-up.
 *
 * Built-in rotation (sink_set_rotation): when a batch would make the file
 * pass max_size bytes, PATH is renamed PATH.1 (PATH.1 becomes PATH.2 ...,
 * the one beyond keep is removed) and a new PATH is started.  Processes
 * that share a path take turns under an flock on the current file, so two
 * of them never rotate the same file twice nor write into one being
 * renamed.
 */
#ifndef SOCKMETER_SINK_H
#define SOCKMETER_SINK_H

#include "../config/config.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Which file fd 2 was when metering started.  A program may close its
 * stderr and get fd 2 back for a socket: nothing of ours may go there. */
struct stderr_id {
	bool valid;
	dev_t dev;
	ino_t ino;
};

/* stderr_id_take - remember what fd 2 is now (invalid if closed).
 * Context: start-up only, or fork child (sink_init). */
void stderr_id_take(struct stderr_id *id);

/* stderr_id_same - true when fd 2 is still the file remembered.
 * Context: any thread and signal handler (one fstat). */
bool stderr_id_same(const struct stderr_id *id);

/*
 * sink_warn - one line (msg, without its newline) on stderr, only while fd
 * 2 is still the file id remembered, never raising SIGPIPE.  errno kept.
 * True when the line was written whole (false: fd 2 is another file now,
 * or the write failed: /dev/full, a pipe whose reader is gone).
 * Context: any thread (raw system calls and signal masks only; the
 * preload calls it at start-up and from the ticker-starting path, never
 * from what may be a signal handler).
 */
bool sink_warn(const struct stderr_id *id, const char *msg);

#define SINK_PATH_CAP (CONFIG_PATH_MAX + 128)

/* Close records of batches the log refused that the meter holds for the
 * next batch (core/meter.c's meter_flush), and as its warning says it:
 * about 280 JSON records or 1,000 text ones, enough for a log that
 * refused a few batches (a daemon that was another user for a moment, a
 * disk full for a few seconds); a log that stays closed loses the rest,
 * counted. */
#define SINK_HELD_MAX (256u * 1024u)
#define SINK_HELD_MAX_TEXT "256 KiB"

struct sink {
	char path[SINK_PATH_CAP];
	bool to_stderr;
	struct stderr_id err;   /* fd 2 when it was set up */
	bool failing;   /* the last write failed */
	int last_err;   /* its errno, when failing */
	size_t batch_done; /* bytes of the last sink_write's batch that stayed
			    * written (all of it when it succeeded) */
	bool warned;    /* this run of failures was reported */
	bool rotate_warned; /* a rotation's refused rename was said */
	bool turn_lost;     /* the last batch never had its turn at a log
			     * that others kept rotating (append_batch) */
	long fifo_torn_pid; /* the process that left a line torn in the
			     * FIFO at the path (fifo_batch), or 0 */
	uint64_t max_size; /* rotate before passing it; 0: never */
	unsigned keep;     /* rotated files kept: PATH.1 .. PATH.keep */
	int pin;           /* sink_pin's fd + 1 (0: none): the ticker's */
	bool pin_on;       /* writes go to it (else it waits, opened) */
	/* The root directory when it was pinned (a chroot since: the path
	 * no longer names the file), and whether a rotation that could not
	 * be followed was said (pinned_write). */
	uint64_t pin_root_dev, pin_root_ino;
	bool pin_said;
	bool pin_refused; /* the new file at the path refused once */
	bool own_dir;      /* the default template's per-user directory */
	/* Where it says whether a state file holds the process's numbers
	 * (NULL: none ever): the warnings of a log out of reach then say
	 * that its totals are kept for `sockmeter recover`.  Kept by
	 * sink_init. */
	const bool *kept;
	config_report_fn report;
	void *ctx;
	/* Called (NULL: never) after each part of a sink_write batch that
	 * reached the log, with the bytes of the batch written so far
	 * (whole lines, but for the last part of a write that failed):
	 * the meter counts its close records written as they land, so
	 * that a process that dies in the middle of a long batch (a log
	 * that others keep rotating) leaves numbers that add up.  It may
	 * run in progfd_run's child, on our memory: no libc call that
	 * needs the thread's TLS. */
	void (*progress)(void *ctx, size_t done);
	/* Called (NULL: never) before each part of a sink_write batch is
	 * written to a file: done bytes of the batch are written so far,
	 * and the part will land at the end of the file dev/ino, size bytes
	 * now (unless another process appends first).  The meter notes it
	 * in the durable state (a recovery counts the close records a kill
	 * left in the log).  Same context as progress. */
	void (*aim)(void *ctx, size_t done, uint64_t dev, uint64_t ino,
		    uint64_t size);
	void *progress_ctx;
};

/*
 * sink_dir_fix_mode - a directory of ours (the default log's, the
 * state's, st its lstat) whose owner may not search or write it, made
 * under a umask without those bits, given them: mode | 0700.  tinyproxy's
 * umask 0177 made /tmp/sockmeter-65534 mode 0600: no log, no state file,
 * for that run and every later metered program of that uid (a helper's
 * sweep).  0, or a negative errno (errno set): the callers go on, and the
 * open that follows says what fails.  Context: any thread.
 */
struct stat;
int sink_dir_fix_mode(const char *dir, const struct stat *st);

/*
 * sink_expand - expand a path template: %p pid, %n program name ('/' and
 * control bytes become '_'; "", "." and ".." become "_", "_" and "__"),
 * %t start time (Unix seconds), %u the effective uid (the one that
 * writes), %% a '%'.
 * Returns 0, or -ENAMETOOLONG / -EINVAL (unknown escape) with out empty.
 * Context: start-up only, or fork child (through sink_init).
 */
int sink_expand(const char *tmpl, long pid, const char *prog,
		uint64_t start_s, unsigned uid, char *out, size_t cap);

/*
 * sink_anchor - a relative path template (not "stderr") made absolute in
 * place, from the current directory ('%' in it written "%%"), so that the
 * path a fork child or a uid change expands later is the one of start-up,
 * whatever chdir() came in between.  Returns 0 (also when there was
 * nothing to do), or a negative errno with tmpl unchanged (sink_init then
 * anchors it when it expands it).
 * Context: start-up only.
 */
int sink_anchor(char *tmpl, size_t cap);

/*
 * sink_init - prepare s for the path template (or "stderr").  When the
 * template is the default one, its per-user directory is created (0700) if
 * missing and refused if another user owns it or others can write to it.
 * Problems are reported through report(ctx, msg) once.  Returns 0 or a
 * negative errno (records will then be dropped, with the one warning).
 * Context: start-up only, or fork child.
 */
int sink_init(struct sink *s, const char *tmpl, long pid, const char *prog,
	      uint64_t start_s, config_report_fn report, void *ctx);

/*
 * sink_reinit_for_uid - the process changed its credentials (setuid...).
 * A template with %u is expanded again for the uid that now writes (the
 * effective one), the default template's directory checked as by
 * sink_init: the records go on in the new user's file.  Any other path
 * stays; when the new credentials cannot write it and cannot be changed
 * back (the real and saved ids are the effective ones), one message names
 * the path and the uid; a change with a way back is left to the next
 * write, whose failure, if any, is reported then.  tmpl, pid, prog and
 * start_s as given to sink_init.
 * Returns 0 or a negative errno (reported).
 * Context: any thread; the caller serializes it with sink writes.
 */
int sink_reinit_for_uid(struct sink *s, const char *tmpl, long pid,
			const char *prog, uint64_t start_s);

/*
 * sink_replace - make buf the whole content of the destination, atomically
 * (written to PATH.tmp, then renamed over PATH), mode 0644 so a collector
 * running as another user can read it.  On stderr, simply written.
 * Returns 0 or a negative errno (reported as sink_write does).
 * Context: ticker only (or the exit record, under the ticker's lock).
 */
int sink_replace(struct sink *s, const char *buf, size_t len);

/*
 * sink_stderr_wait - from now on a write to fd 2 (path = stderr, and the
 * warnings) waits at most ms for room in all, then fails with EAGAIN; -1:
 * as long as it takes (the ticker's: a stderr that is read slowly holds
 * it back rather than losing records).  For a thread that must not be held
 * (the one ending the process: a stderr pipe nobody reads would hold its
 * exit for good).  Context: the caller holds the write lock.
 */
void sink_stderr_wait(int ms);

/*
 * sink_write - append buf to the destination (rotating it first when
 * buf would make it pass the size limit).  Returns 0, or a negative errno
 * (the first failure of each run of failures is reported).  s->batch_done
 * says how much of buf stayed written: a failed write to a file is cut
 * back (none), but for the part a rotation wrote first; one to stderr or
 * a pipe may leave a head.  Context: ticker only (or the thread writing
 * the exit record).
 */
int sink_write(struct sink *s, const char *buf, size_t len);

/*
 * sink_pin - open the log now and keep it open, in the calling thread's
 * private fd table (progfd_detached: the ticker's), for every later
 * write of that thread: the records reach that file whatever becomes of
 * its name afterwards (a chroot, a uid that could not open it again).
 * The file is no longer rotated by size (rotating renames it by name),
 * but one rotated or removed by another program (logrotate) is followed:
 * the file the path names now, when this uid may open it (pinned_write).
 * stderr is
 * kept as a copy of the program's fd 2 (while it is the one given at
 * start); Prometheus' sink_replace and a sink without a path are left as
 * they are.
 * With on false the file is only opened, for later: writes keep going by
 * name until sink_reinit_for_uid finds the name no longer writable by the
 * new uid (a daemon dropping root), and turns the pin on.
 * Returns 0 or a negative errno (reported).
 * Context: ticker only; serialized with sink writes.
 */
int sink_pin(struct sink *s, bool on);

/*
 * sink_set_rotation - rotate the file before a batch would make it pass
 * max_size bytes (0: never), keeping keep rotated files (0: none, the full
 * file is removed).  Never applies to stderr or sink_replace.
 * Context: start-up only (and fork child).
 */
void sink_set_rotation(struct sink *s, uint64_t max_size, unsigned keep);

/*
 * sink_root_changed - the process changed its root directory (chroot):
 * from now on, in it and in its fork children, a log path that cannot be
 * opened is looked up inside the new root, which a warning says rather
 * than "until it works" (a path outside the new root never will).
 * Context: any thread.
 */
void sink_root_changed(void);

/* sink_root_was_changed - whether sink_root_changed was called (in this
 * process or the parent it was forked from).  Context: any thread. */
bool sink_root_was_changed(void);

/*
 * sink_in_reach - whether s's records can be expected to arrive: no
 * failure said or pending, and the log is stderr (still the one it was
 * given), a file held open, or a path whose directory exists.  A guess
 * about the next write, not a write: for a warning that must not repeat
 * what the log's own failure will say.  Context: ticker (or the last
 * thread), not a signal handler.
 */
bool sink_in_reach(const struct sink *s);

#endif
