/*
 * config.h - sockmeter's settings: defaults, the ini file, the environment.
 *
 * config/ turns an ini file (parsed with the system inih library) and a
 * handful of environment variables into one immutable struct config, read
 * once at start-up.  Nothing here knows about preloading: the caller passes
 * the environment lookup function and a sink for messages, so the unit tests
 * drive every path without touching the process environment.
 *
 * Every problem (unreadable file, unknown section or key, bad value, syntax
 * error, over-long line, binary content) yields exactly one message of the
 * form "sockmeter: FILE:LINE: ..." naming the key and what is accepted; the
 * key keeps its default and loading goes on.  The load functions leave errno
 * as they found it.
 */
#ifndef SOCKMETER_CONFIG_H
#define SOCKMETER_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Limits that size fixed arrays; documented in the README. */
#define CONFIG_MAX_SPANS 4        /* reported window spans */
#define CONFIG_MAX_SKIP 16        /* program names in [sockmeter] skip */
#define CONFIG_NAME_MAX 64        /* one program name */
#define CONFIG_PATH_MAX 512       /* log path template */
#define CONFIG_FILE_MAX 65536     /* largest config file read, bytes */
#define CONFIG_LINE_MAX 200       /* longest line, bytes, newline included */
#define CONFIG_MAX_MESSAGES 20    /* problems reported per source */

/* Stat categories: each one a switch.  The X-macro keeps the enum, the ini
 * key names and the defaults in one list. */
#define CONFIG_CATEGORIES(X)                                                   \
	X(BYTES, bytes, true)                                                  \
	X(CALLS, calls, true)                                                  \
	X(ERRORS, errors, true)                                                \
	X(SIZES, sizes, true)                                                  \
	X(WINDOWS, windows, true)                                              \
	X(PEERS, peers, true)                                                  \
	X(LATENCY, latency, false)                                             \
	X(TCP_INFO, tcp_info, true)                                            \
	X(NAMES, names, true)

enum config_category {
#define X(up, low, def) CAT_##up,
	CONFIG_CATEGORIES(X)
#undef X
	CAT_COUNT
};

/* fd kinds that can be metered ([track] section). */
#define CONFIG_TRACK_KINDS(X)                                                  \
	X(TCP, tcp, true)                                                      \
	X(UDP, udp, true)                                                      \
	X(UNIX, unix, true)                                                    \
	X(OTHER_SOCKETS, other_sockets, true)                                  \
	X(PIPES, pipes, false)                                                 \
	X(FILES, files, false)                                                 \
	X(TTYS, ttys, false)

enum config_track {
#define X(up, low, def) TRACK_##up,
	CONFIG_TRACK_KINDS(X)
#undef X
	TRACK_COUNT
};

enum config_format {
	FORMAT_TEXT,
	FORMAT_JSON,
	FORMAT_PROMETHEUS,
	FORMAT_COUNT
};

/* config_format_name - "text", "json", "prometheus".  Context: any
 * thread. */
const char *config_format_name(enum config_format f);

/* [log] close_records: a record per closed connection, or none (the
 * numbers still reach the totals). */
enum config_close_records { CLOSE_RECORDS_EACH, CLOSE_RECORDS_OFF };

/* Where warnings go when fd 2 is no longer the stderr of start-up: a
 * syslog socket path (at most 107 bytes), or "off". */
#define CONFIG_SYSLOG_MAX 108
#define CONFIG_DEFAULT_SYSLOG "/dev/log"

struct config {
	bool enabled;                   /* false: pure pass-through */
	char skip[CONFIG_MAX_SKIP][CONFIG_NAME_MAX]; /* programs left alone */
	int nskip;

	char log_path[CONFIG_PATH_MAX]; /* template: %p %n %t %u %%, or "stderr" */
	enum config_format format;
	uint64_t interval_ms;           /* 100 .. 86,400,000 */
	uint32_t top;                   /* fds per interval record, 0 = all */
	enum config_close_records close_records;
	char syslog_path[CONFIG_SYSLOG_MAX]; /* absolute path, or "off" */
	uint64_t log_max_size;          /* rotate before passing it; 0 = off */
	uint32_t log_keep;              /* rotated files kept, 0 .. 1000 */

	bool category[CAT_COUNT];
	bool track[TRACK_COUNT];
	uint32_t max_fds;               /* fds metered, 0: automatic (fdtab.h) */

	uint64_t bucket_ms;             /* window bucket width, 100 .. 3,600,000 */
	uint32_t buckets;               /* history kept, 2 .. 86,400 buckets */
	uint32_t nspans;                /* 1 .. CONFIG_MAX_SPANS */
	uint32_t span_buckets[CONFIG_MAX_SPANS]; /* each 1 .. buckets, ascending */
	/* Derived: the resolution of span k's tier, in buckets (it divides
	 * span_buckets[k]); see core/window.h. */
	uint32_t span_res[CONFIG_MAX_SPANS];

	bool state_enabled;             /* [state] enabled: durable state file */
	char state_dir[CONFIG_PATH_MAX]; /* [state] dir: escapes %u %% */
};

/* The default directory of the durable state files: a tmpfs (no writeback
 * of dirty pages), one directory per user, created 0700 if missing. */
#define CONFIG_DEFAULT_STATE_DIR "/dev/shm/sockmeter-%u"

/* The default log path: one file per process, in a per-user directory
 * (created 0700 if missing).  With format = prometheus and the default
 * path, the file is named .prom instead, as node_exporter expects. */
#define CONFIG_DEFAULT_DIR "/tmp/sockmeter-%u"
#define CONFIG_DEFAULT_LOG CONFIG_DEFAULT_DIR "/%n.%p.log"
#define CONFIG_DEFAULT_PROM CONFIG_DEFAULT_DIR "/%n.%p.prom"

/* Receives one complete message line (without the newline). */
typedef void (*config_report_fn)(void *ctx, const char *msg);

/* Looks up an environment variable; NULL when unset.  The preload passes
 * secure_getenv so setuid programs ignore the environment. */
typedef const char *(*config_getenv_fn)(const char *name);

/*
 * config_defaults - fill *c with the documented defaults.
 * Context: start-up only.
 */
void config_defaults(struct config *c);

/*
 * config_load_file - apply the ini file at path on top of *c.
 *
 * Each problem is reported through report(ctx, msg) as one line naming
 * path:line, the key and what is accepted; the offending key keeps the value
 * it had.  Returns 0 when the file was read without a problem, the number of
 * problems (> 0) otherwise, or a negative errno when the file could not be
 * read at all (also reported).  *c is always left valid.  Only a regular
 * file is read: a directory gives -EISDIR, a FIFO or device -EINVAL (it could
 * block), a file over CONFIG_FILE_MAX bytes -EFBIG; the file is then ignored
 * as a whole.
 * Context: start-up only.
 */
int config_load_file(struct config *c, const char *path,
		     config_report_fn report, void *ctx);

/*
 * config_load_string - as config_load_file, on an in-memory buffer; name is
 * used in messages in place of a file name.
 * Context: start-up only (and the fuzzer).
 */
int config_load_string(struct config *c, const char *name, const char *buf,
		       size_t len, config_report_fn report, void *ctx);

/*
 * config_apply_env - apply the environment overrides through getenv_fn:
 * SOCKMETER (off/0/false/no disables, on/1/true/yes enables), SOCKMETER_LOG,
 * SOCKMETER_FORMAT, SOCKMETER_INTERVAL, SOCKMETER_TOP,
 * SOCKMETER_CLOSE_RECORDS, SOCKMETER_SYSLOG, SOCKMETER_TCP_INFO,
 * SOCKMETER_NAMES, SOCKMETER_LOG_MAX_SIZE, SOCKMETER_LOG_KEEP,
 * SOCKMETER_MAX_FDS, SOCKMETER_STATE.  A bad value is reported once and
 * ignored.  Returns the number of problems.
 * Context: start-up only.
 */
int config_apply_env(struct config *c, config_getenv_fn getenv_fn,
		     config_report_fn report, void *ctx);

/*
 * config_load - the whole start-up sequence: defaults, then the file named
 * by SOCKMETER_CONFIG (if set), then the environment overrides.  Returns the
 * number of problems reported (0 when all was well).
 * Context: start-up only.
 */
int config_load(struct config *c, config_getenv_fn getenv_fn,
		config_report_fn report, void *ctx);

/*
 * config_skips_program - true when name is listed in c->skip.
 * Context: start-up only.
 */
bool config_skips_program(const struct config *c, const char *name);

/* config_env_setting - whether the n bytes at name are the name of an
 * environment variable config_load reads (SOCKMETER_CONFIG included). */
bool config_env_setting(const char *name, size_t n);

/* Names for messages and the log: the ini keys ("bytes", "other_sockets"),
 * or NULL for a value out of range.  Context: any thread. */
const char *config_category_name(enum config_category cat);
const char *config_track_name(enum config_track t);

#endif
