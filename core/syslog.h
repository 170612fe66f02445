/*
 * syslog.h - warnings for syslog, when nobody would see them on stderr.
 *
 * A daemon points fd 2 at its own error log (nginx) or at /dev/null; the
 * warnings of a library inside it belong where daemons' warnings are
 * looked for.  One datagram per warning to a syslog socket (/dev/log:
 * journald or rsyslog), facility user, severity warning, ident
 * "sockmeter", through raw system calls like the sink: no fd of ours stays
 * open, nothing passes through the wrappers, nothing is counted.
 */
#ifndef SOCKMETER_SYSLOG_H
#define SOCKMETER_SYSLOG_H

#include <stddef.h>

/*
 * syslog_format - the datagram for msg from process pid:
 * "<12>sockmeter[PID]: TEXT", TEXT being msg without a leading
 * "sockmeter: " and with control bytes replaced by '?'.  No timestamp: the
 * receiver stamps it.  Returns its length (at most cap - 1; longer
 * messages are cut).
 */
size_t syslog_format(char *out, size_t cap, long pid, const char *msg);

/*
 * syslog_send - send msg (as syslog_format makes it) to the syslog socket
 * at path: a datagram socket, or a stream one (then NUL-terminated, as
 * glibc does).  Returns 0, or a negative errno (nothing else is tried).
 * errno is kept.
 * Context: any thread (not a signal handler: it formats with snprintf).
 */
int syslog_send(const char *path, long pid, const char *msg);

#endif
