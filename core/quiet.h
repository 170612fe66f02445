/*
 * quiet.h - threads the library must not make system calls of its own on.
 *
 * A program that confines itself with a seccomp filter (OpenSSH's
 * pre-authentication child, vsftpd, anything built on libseccomp) allows
 * the system calls it makes itself and kills the process, or fails the
 * call, for the rest.  Before such a filter goes on (prctl(PR_SET_SECCOMP),
 * the seccomp system call through syscall()), the preload classifies the
 * program's open fds, starts the ticker and opens the log for it
 * (preload.c: sm_confining), and once the filter is on, every thread of
 * the program is quiet (threads it creates later inherit the filter, and
 * a thread-local mark would not follow them; the other threads lose only
 * the kernel's view and the addresses).  A quiet thread's lifecycle hooks
 * make no system call the program did not ask for: no fstat,
 * getsockname, TCP_INFO or getpid, no thread start, no file, no warning;
 * its data calls are counted as ever (counting takes no system call).
 * The ticker, which the filter does not bind, writes the records.  A
 * filter on every thread (SECCOMP_FILTER_FLAG_TSYNC) binds the ticker
 * too, which is then quiet as well: it only drains, formats and writes to
 * the log it holds (write, futex, and memory through mmap and munmap
 * only: no mremap or madvise, which Firefox's sandboxes trap), without
 * reading the kernel's
 * view, checking fds, scanning for recovery or removing its state file
 * (left marked final to the next recovery).
 */
#ifndef SOCKMETER_QUIET_H
#define SOCKMETER_QUIET_H

#include <stdbool.h>
#include <stdint.h>

enum sm_quiet_level {
	SM_LOUD = 0,		/* no filter */
	SM_QUIET_PROGRAM = 1,	/* the program's threads (not the ticker) */
	SM_QUIET_ALL = 2,	/* every thread (TSYNC) */
};

/* Atomic.  Raised by sm_quiet_raise; lowered only by sm_confine_end,
 * back to what it was, when a TSYNC filter did not go on after all. */
extern uint8_t sm_quiet_level;
/* Set by the ticker thread for itself. */
extern __thread bool sm_ticker_thread __attribute__((tls_model("initial-exec")));

/* True when the calling thread must make no system call of ours.
 * Context: any thread and signal handler. */
static inline bool sm_quiet(void)
{
	uint8_t l = __atomic_load_n(&sm_quiet_level, __ATOMIC_RELAXED);

	return l != SM_LOUD && (l == SM_QUIET_ALL || !sm_ticker_thread);
}

/* sm_quiet_raise - at least level l from now on. */
static inline void sm_quiet_raise(uint8_t l)
{
	uint8_t cur = __atomic_load_n(&sm_quiet_level, __ATOMIC_RELAXED);

	while (cur < l && !__atomic_compare_exchange_n(&sm_quiet_level, &cur, l,
						      false, __ATOMIC_ACQ_REL,
						      __ATOMIC_RELAXED))
		;
}

#endif
