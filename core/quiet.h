/*
 * quiet.h - threads the library must not make system calls of its own on.
 *
 * A program that confines itself with a seccomp filter (OpenSSH's
 * pre-authentication child, vsftpd, anything built on libseccomp) allows
 * the system calls it makes itself and kills the process, or fails the
 * call, for the rest.  Before such a filter goes on (prctl(PR_SET_SECCOMP),
 * the seccomp system call through syscall()), the preload classifies the
 * program's open fds, starts the ticker and opens the log for it
 * (preload.c: sm_confining), and marks the calling thread quiet.  A
 * quiet thread's lifecycle hooks then make no system call the program did
 * not ask for: no fstat, getsockname, TCP_INFO or getpid, no thread
 * start, no warning; its data calls are counted as ever (counting takes no
 * system call).  A filter applied to every thread (SECCOMP_FILTER_FLAG_TSYNC)
 * makes every thread quiet, the ticker included: it then only drains,
 * formats and writes to the log it holds (write, futex, memory), without
 * reading the kernel's view, checking fds, scanning for recovery or
 * removing its state file (left marked final to the next recovery).
 */
#ifndef SOCKMETER_QUIET_H
#define SOCKMETER_QUIET_H

#include <stdbool.h>

extern __thread bool sm_quiet_thread __attribute__((tls_model("initial-exec")));
extern bool sm_quiet_all; /* atomic */

/* True when the calling thread must make no system call of ours.
 * Context: any thread and signal handler. */
static inline bool sm_quiet(void)
{
	return sm_quiet_thread || __atomic_load_n(&sm_quiet_all, __ATOMIC_RELAXED);
}

#endif
