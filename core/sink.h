/*
 * sink.h - where records go: a log file (one per process) or stderr.
 *
 * The file is opened, appended to and closed for every batch of records,
 * with raw system calls: the library never holds an fd the program could
 * close or collide with, its writes never pass through its own wrappers,
 * and they are never counted.  Files are created mode 0600, never through a
 * symlink (O_NOFOLLOW), never blocking on a FIFO (O_NONBLOCK).  SIGPIPE and
 * SIGXFSZ raised by our own write are swallowed, so a full disk, a file
 * size limit or a closed stderr pipe cannot kill the host.  The first
 * failure is reported once; later batches are still tried.
 */
#ifndef SOCKMETER_SINK_H
#define SOCKMETER_SINK_H

#include "../config/config.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct sink {
	char path[CONFIG_PATH_MAX + 128];
	bool to_stderr;
	bool failing;   /* the last write failed */
	bool warned;    /* the one warning was given */
	config_report_fn report;
	void *ctx;
};

/*
 * sink_expand - expand a path template: %p pid, %n program name ('/'
 * becomes '_'), %t start time (Unix seconds), %u real uid, %% a '%'.
 * Returns 0, or -ENAMETOOLONG / -EINVAL (unknown escape) with out empty.
 */
int sink_expand(const char *tmpl, long pid, const char *prog,
		uint64_t start_s, unsigned uid, char *out, size_t cap);

/*
 * sink_init - prepare s for the path template (or "stderr").  When the
 * template is the default one, its per-user directory is created (0700) if
 * missing and refused if another user owns it or others can write to it.
 * Problems are reported through report(ctx, msg) once.  Returns 0 or a
 * negative errno (records will then be dropped, with the one warning).
 */
int sink_init(struct sink *s, const char *tmpl, long pid, const char *prog,
	      uint64_t start_s, config_report_fn report, void *ctx);

/*
 * sink_write - append buf to the destination.  Returns 0, or a negative
 * errno (the first failure in a row is reported).
 */
int sink_write(struct sink *s, const char *buf, size_t len);

#endif
