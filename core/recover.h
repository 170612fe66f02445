/*
 * recover.h - the final records of processes that died without writing
 * them, made from their durable state files (core/state.h).
 *
 * For each state file in a directory whose process is gone (its pid is not
 * alive, or is alive with another start time or boot), the records the
 * process would have written are appended to its log, in its own format:
 * the close records still queued, then an exit record with its final
 * totals and still-open fds, marked "end":"killed" (a Prometheus file is
 * rewritten once more).  Then the file is removed.  A file marked final (its
 * image wrote its own last record, then exec'd) is only removed.
 *
 * Once only: a file is claimed by renaming it to NAME.rec-PID before it is
 * read, so of several recoverers running at once (the tool, the tickers of
 * other processes) exactly one writes its records.  A claim whose
 * recoverer died is taken over.
 */
#ifndef SOCKMETER_RECOVER_H
#define SOCKMETER_RECOVER_H

#include "../config/config.h"

#include <stdbool.h>
#include <stdint.h>

/* The ticker recovers this long after it starts, then every
 * RECOVER_AUTO_PERIOD_NS (a long-lived daemon recovers its dead children's
 * files without waiting for a new process), and skips the directory when
 * another process scanned it less than RECOVER_AUTO_EVERY ago; at most
 * RECOVER_AUTO_MAX files per scan. */
#define RECOVER_AUTO_DELAY_NS 1000000000ull
#ifndef RECOVER_AUTO_PERIOD_NS
#define RECOVER_AUTO_PERIOD_NS 60000000000ull
#endif
#define RECOVER_AUTO_EVERY_S 10
#define RECOVER_AUTO_MAX 64
#define RECOVER_LOCK ".recover.lock"

struct recover_stats {
	unsigned recovered; /* records written for a dead process */
	unsigned removed;   /* final or foreign-build files removed */
	unsigned alive;     /* left alone: the process runs */
	unsigned skipped;   /* left alone: claimed by another, unreadable */
	unsigned unwritten; /* the log could not be written: file kept */
	unsigned foreign;   /* another user's: left untouched */
};

struct recover_opts {
	unsigned max_files;     /* 0: no limit */
	bool stderr_here;       /* a process that logged to stderr: its
				 * records go to our stderr (else its file
				 * is left for a recover that has one) */
	bool retry_unwritten;   /* files whose log could not be written
				 * (NAME.state.unwritten) are tried again:
				 * by hand, never in the automatic scans */
	config_report_fn report; /* messages; may be NULL */
	void *ctx;
	const uint32_t *stop;   /* when not NULL and non-zero: stop before
				 * the next file (the ticker's final record
				 * is wanted) */
	void (*between)(void *ctx); /* when not NULL: called before each
				     * file, and between the steps of one
				     * (read, records made, written): the
				     * ticker writes its own waiting
				     * close records, so that a scan of
				     * many files (or of one, on a loaded
				     * machine) does not make the process
				     * drop them */
	void *between_ctx;
	/* When not NULL (the automatic scans, whose report is none): told,
	 * as one line, of final records written elsewhere than the log
	 * their process named (root's PID-START.recovered.log), which no
	 * scan may do in silence: the records would seem lost. */
	void (*moved)(const char *msg);
};

/*
 * recover_dir - recover every dead process's state file in dir.  Returns 0,
 * or a negative errno when dir cannot be read (reported).
 * Context: a recovery tool, or the ticker (outside its lock).
 */
int recover_dir(const char *dir, const struct recover_opts *o,
		struct recover_stats *st);

/*
 * recover_auto - the ticker's recovery (after start, then once a minute) in
 * cfg's state
 * directory: quiet, bounded, and skipped when another process holds the
 * directory's lock file or scanned it recently; it stops between files
 * once *stop (when stop is not NULL) is non-zero, and calls between(ctx)
 * (when not NULL) before each file.  moved (may be NULL): as
 * recover_opts's.
 * Context: ticker only (outside its lock).
 */
void recover_auto(const struct config *cfg, const uint32_t *stop,
		  void (*between)(void *ctx), void *ctx,
		  void (*moved)(const char *msg));

#endif
