/*
 * wrap_stdio.h - what other preload files need from the stdio accounting
 * (wrap_stdio.c): the exit-time flush, and the bytes a closing FILE flushes.
 */
#ifndef SOCKMETER_WRAP_STDIO_H
#define SOCKMETER_WRAP_STDIO_H

#include "preload.h"

#include <stdio.h>

/*
 * sm_stdio_at_exit - at normal exit, before the exit record: glibc flushes
 * every FILE after the library's destructor has run, too late for the
 * record.  So flush here, and count, the FILEs on metered fds that still
 * hold output (what glibc would send a moment later anyway).  A FILE locked
 * by another thread is left to glibc (and not counted).  Does nothing when
 * no stdio call ever met a metered fd.  Not for _exit: a program that
 * _exits sends nothing of what its FILEs buffer.
 * Context: start-up/exit only (the destructor).
 */
void sm_stdio_at_exit(void);

/*
 * The bytes fclose() or freopen() flush on their way: the caller (their
 * wrapper) calls sm_stdio_close_begin(fp, &c) before the real call, and
 * sm_stdio_close_end(&c, r) after it with its return value, before the
 * slot of fp's fd is retired.  The output fp was buffering is counted as
 * sent when r == 0 (glibc's flush succeeded); on failure glibc discards it
 * without saying how much left, and nothing is counted.
 * sm_stdio_close_begin returns false (and end then does nothing) when fp's
 * fd is not metered or fp buffers nothing.
 * Context: any thread.
 */
struct sm_stdio_close {
	struct fd_slot *s;
	int64_t pending;
	uint64_t t0;
};

bool sm_stdio_close_begin(FILE *fp, struct sm_stdio_close *c);
/* sm_stdio_flush - fflush(fp) for a FILE that is not NULL, counted as the
 * wrapper counts it (the library never calls its own wrappers).
 * Context: any thread. */
int sm_stdio_flush(FILE *fp);
void sm_stdio_close_end(const struct sm_stdio_close *c, int r);

#endif
