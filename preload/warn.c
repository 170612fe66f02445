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
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <unistd.h>

/*
 * The lines said by this process and by the rest of its fork family (the
 * parent it was forked from, its fork children, theirs).  A pre-fork
 * server whose children all meet the same trouble (a log directory that
 * the uid they drop to cannot write, a state directory closed to it) said
 * the same line once per child: a line per request (mini_httpd, 422 lines
 * for 211 requests).  A process does not say what another of its family
 * said in the same words, its own pid aside (a %p log path names each
 * child's file).  Its own lines follow its own rules, as before (a log
 * that fails again after it worked says so again).  The table lives in a
 * shared page made at the process's first fork (sm_warn_before_fork), so
 * that children see their parent's and their siblings' lines; until then
 * in the process's own memory.  An exec starts a new family.  An entry is
 * published after its index is taken: a reader that sees the index
 * before the hash says its line (a rare line twice, never one lost).
 */
#define SAID_MAX 62
struct said_table {
	uint32_t n;
	uint32_t pad;
	struct {
		uint64_t hash;
		uint32_t pid;
		uint32_t pad;
	} e[SAID_MAX];
};
static struct said_table said_own, *said_shared;

/* FNV-1a over msg, with each whole number equal to pid taken as "%p". */
static uint64_t said_hash(const char *msg, uint32_t pid)
{
	uint64_t h = 0xcbf29ce484222325ull;
	const char *p = msg;

	while (*p) {
		if (*p >= '0' && *p <= '9') {
			const char *q = p;
			uint64_t v = 0;

			while (*q >= '0' && *q <= '9') {
				if (v <= 0xffffffffull)
					v = v * 10 + (uint64_t)(*q - '0');
				q++;
			}
			if (v == pid && *p != '0') {
				h = (h ^ (uint8_t)'%') * 0x100000001b3ull;
				h = (h ^ (uint8_t)'p') * 0x100000001b3ull;
				p = q;
				continue;
			}
			for (; p < q; p++)
				h = (h ^ (uint8_t)*p) * 0x100000001b3ull;
			continue;
		}
		h = (h ^ (uint8_t)*p++) * 0x100000001b3ull;
	}
	return h;
}

/* Was msg said by another process of the family?  If not, it is noted as
 * this one's (once). */
static bool said_by_family(const char *msg)
{
	struct said_table *t = __atomic_load_n(&said_shared, __ATOMIC_ACQUIRE);
	uint32_t pid = (uint32_t)SM_SYSCALL(SYS_getpid), n, i;
	uint64_t h = said_hash(msg, pid);
	bool mine = false;

	if (!t)
		t = &said_own;
	n = __atomic_load_n(&t->n, __ATOMIC_ACQUIRE);
	for (i = 0; i < n && i < SAID_MAX; i++) {
		if (__atomic_load_n(&t->e[i].hash, __ATOMIC_ACQUIRE) != h)
			continue;
		if (__atomic_load_n(&t->e[i].pid, __ATOMIC_RELAXED) != pid)
			return true;
		mine = true;
	}
	if (!mine) {
		i = __atomic_fetch_add(&t->n, 1, __ATOMIC_ACQ_REL);
		if (i < SAID_MAX) {
			__atomic_store_n(&t->e[i].pid, pid, __ATOMIC_RELAXED);
			__atomic_store_n(&t->e[i].hash, h, __ATOMIC_RELEASE);
		}
	}
	return false;
}

void sm_warn_before_fork(void)
{
	struct said_table *t;
	uint32_t i, n;

	/* Sandboxed (quiet.h): no system call of ours, and no line said
	 * either (sm_warn). */
	if (sm_quiet() || __atomic_load_n(&said_shared, __ATOMIC_ACQUIRE))
		return;
	t = mmap(NULL, sizeof(*t), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (t == MAP_FAILED)
		return;
	n = __atomic_load_n(&said_own.n, __ATOMIC_ACQUIRE);
	for (i = 0; i < n && i < SAID_MAX; i++)
		t->e[i] = said_own.e[i];
	t->n = i;
	__atomic_store_n(&said_shared, t, __ATOMIC_RELEASE);
}

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

/* msg on the original stderr, when it is there and takes it (raw
 * writes); true when written. */
static bool warn_stderr(const char *msg)
{
	return !err_unfit && stderr_id_same(&err_at_start) && err_has_room() &&
	       sink_warn(&err_at_start, msg);
}

/* msg to syslog, unless [log] syslog is off. */
static void warn_syslog(const char *msg)
{
	if (strcmp(syslog_path, "off") != 0)
		syslog_send(syslog_path, (long)SM_SYSCALL(SYS_getpid), msg);
}

void sm_warn_in_handler(const char *msg)
{
	int saved = errno;

	if (!sm_quiet() && !said_by_family(msg))
		warn_stderr(msg);
	errno = saved;
}

void sm_warn_syslog(const char *msg)
{
	int saved = errno;

	if (!sm_quiet())
		warn_syslog(msg);
	errno = saved;
}

void sm_warn(const char *msg)
{
	int saved = errno;
	bool written;

	if (sm_quiet())
		return; /* sandboxed: no system call of ours (quiet.h) */
	if (said_by_family(msg)) {
		errno = saved;
		return;
	}
	/* Syslog also when the write failed (fd 2 is /dev/full, or a pipe
	 * whose reader is gone: the warning was said nowhere). */
	written = warn_stderr(msg);
	if (!written)
		warn_syslog(msg);
	errno = saved;
}
