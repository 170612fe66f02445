/*
 * warn.c - where the library's warnings go (contract in warn.h).
 */
#include "warn.h"

#include "../core/quiet.h"
#include "../core/rawsys.h"
#include "../core/sink.h"
#include "../core/syslog.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <unistd.h>

static struct stderr_id err_at_start;
/* fd 2 was /dev/null at start-up, or a socket: under inetd, xinetd,
 * tcpserver or systemd's Accept=yes, fds 0-2 are the client's connection,
 * and a warning written there would be bytes the peer never expected
 * (journald's stream, a socket too, gets the same warning through
 * /dev/log). */
static bool err_unfit;
static char syslog_path[CONFIG_SYSLOG_MAX] = CONFIG_DEFAULT_SYSLOG;

void sm_warn_init(void)
{
	struct stat st;

	stderr_id_take(&err_at_start);
	err_unfit = fstat(2, &st) == 0 &&
		    ((S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3)) ||
		     S_ISSOCK(st.st_mode));
}

void sm_warn_config(const struct config *cfg)
{
	memcpy(syslog_path, cfg->syslog_path, sizeof(syslog_path));
	syslog_path[sizeof(syslog_path) - 1] = '\0';
}

/* Would a write to fd 2 go through now?  A pipe or FIFO nobody reads
 * would block the program's thread for good (an exec's warning is made on
 * it): then the warning goes to syslog.  A poll that fails says nothing
 * against it. */
static bool err_has_room(void)
{
	struct pollfd p = { .fd = 2, .events = POLLOUT };
	struct timespec now = { 0, 0 };
	long r = raw_syscall6(SYS_ppoll, (long)&p, 1, (long)&now, 0, 0, 0);

	return r != 0 || (p.revents & POLLOUT);
}

void sm_warn(const char *msg)
{
	int saved = errno;

	if (sm_quiet())
		return; /* sandboxed: no system call of ours (quiet.h) */
	if (!err_unfit && stderr_id_same(&err_at_start) && err_has_room())
		sink_warn(&err_at_start, msg);
	else if (strcmp(syslog_path, "off") != 0)
		syslog_send(syslog_path, (long)syscall(SYS_getpid), msg);
	errno = saved;
}
