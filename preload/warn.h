/*
 * warn.h - where the library's warnings go: to stderr while fd 2 is still
 * the stderr the program started with (and that is not /dev/null nor a
 * socket, as an inetd service's is), else to
 * syslog ([log] syslog, /dev/log by default), so that a daemon's warnings
 * reach journald or rsyslog rather than the daemon's own error log.
 */
#ifndef SOCKMETER_WARN_H
#define SOCKMETER_WARN_H

#include "../config/config.h"

/* sm_warn_init - remember what fd 2 is.  Context: start-up only. */
void sm_warn_init(void);

/* sm_warn_config - take the syslog socket path of cfg.
 * Context: start-up only. */
void sm_warn_config(const struct config *cfg);

/*
 * sm_warn_before_fork - share the table of lines said with the children
 * about to be forked (made once, at the first fork), so that a line said
 * by one process of the family is not said again by another (warn.c).
 * Context: fork's prepare handler.
 */
void sm_warn_before_fork(void);

/*
 * sm_warn - one warning line (msg, without its newline); errno kept.
 * Context: any thread (not a signal handler).
 */
void sm_warn(const char *msg);

/*
 * sm_warn_syslog - a warning about another process than this one (the
 * automatic recovery's), to syslog only ([log] syslog; none when "off"):
 * the program's stderr is for what concerns it.  errno kept.
 * Context: any thread (not a signal handler).
 */
void sm_warn_syslog(const char *msg);

/*
 * sm_warn_in_handler - sm_warn for what may be a signal handler: to the
 * original stderr only (raw writes), nowhere when it is not there (no
 * syslog socket, whose send may block).  errno kept.
 * Context: any thread and signal handler.
 */
void sm_warn_in_handler(const char *msg);

#endif
