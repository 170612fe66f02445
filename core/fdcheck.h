/*
 * fdcheck.h - the net under unseen closes: every live tracked fd must still
 * be the object it was when the ticker first saw its connection.
 *
 * A connection's fd can end without any wrapper seeing it: a raw close
 * system call, a close inside a library we do not wrap.  If the number is
 * then reused by a call we do not wrap either, bytes on the new object
 * would land in the old connection's record.  Once per interval the ticker
 * stats each live tracked fd and compares it with the device and inode it
 * remembered the first time it saw the connection; it retires the
 * connection when the fd is gone or names another object, and its close
 * record says the close went unseen.
 *
 * The first sight is the ticker's, not the opening call's: a stat there
 * was one system call more on every connection, which a busy server's
 * short connections paid in full (docs/performance.md#churn).  At first
 * sight, the object must still fit the connection: the kind of object
 * (socket, pipe, character device, other), and for TCP the local address
 * and the peer's port recorded when it was opened (for a dup, the local
 * address alone: a peer the program asked for is not always its
 * socket's, behind proxychains).  What that cannot
 * tell apart (an unseen close, then the number taken by another socket of
 * the same kind with unknown or equal addresses, both before the first
 * check) is counted as the first connection's.
 */
#ifndef SOCKMETER_FDCHECK_H
#define SOCKMETER_FDCHECK_H

#include "closeq.h"
#include "fdtab.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* What the fd of connection generation gen was when the ticker first saw
 * it; known is 0 until then.  fdcheck_run's alone. */
enum { ID_NONE, ID_KNOWN, ID_UNSURE }; /* fdcheck_id.known */

struct fdcheck_id {
	uint32_t gen;
	uint32_t known; /* ID_*: UNSURE, looked at once and to look again */
	uint64_t dev;
	uint64_t ino;
};

struct fdcheck {
	struct fdcheck_id *ids; /* lazily mapped, indexed by fd */
	uint32_t cap;
	bool on; /* fds are real (not a unit test's made-up numbers) */
};

/* fdcheck_init - map the table for cap fds.  Returns 0 or -ENOMEM (then
 * nothing is checked).  Context: start-up only. */
int fdcheck_init(struct fdcheck *c, uint32_t cap);

/* fdcheck_enable - check from now on (the preload, whose fds are real).
 * Context: start-up only. */
void fdcheck_enable(struct fdcheck *c);

/* fdcheck_destroy - unmap.  Context: tests, never at exit. */
void fdcheck_destroy(struct fdcheck *c);

/*
 * fdcheck_run - check every live tracked fd of t below its high mark;
 * retire (closed at real_ns, marked unseen, queued on q) those whose fd is
 * closed or names another object.  A connection seen for the first time
 * has its identity remembered, if the object fits it (above).  An fd that
 * cannot be looked at (no /proc) is left alone.  Returns how many were
 * retired.
 * Context: one thread at a time (the ticker, or the exit record's maker,
 * under the tick lock).
 */
uint32_t fdcheck_run(struct fdcheck *c, struct fdtab *t, struct closeq *q,
		     uint64_t real_ns);

#endif
