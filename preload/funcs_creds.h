/*
 * funcs_creds.h - the real functions of one group of wrapped calls:
 * credential changes (setuid...) and syscall().
 * X(name, return type, parameter types), as SM_REAL_FUNCS in preload.h.
 *
 * syscall() is variadic; on the ABIs where the library interposes it
 * (SM_WRAP_SYSCALL: x86-64 and AArch64 Linux) a variadic call passes its
 * arguments exactly where a call with seven long arguments does (registers,
 * then the stack), so it is declared and forwarded as that: the six
 * arguments reach libc untouched, whatever the caller passed.
 */
#ifndef SOCKMETER_FUNCS_CREDS_H
#define SOCKMETER_FUNCS_CREDS_H

#include <stdbool.h>
#include <sys/resource.h>
#include <sys/types.h>

#if defined(__linux__) && (defined(__x86_64__) || defined(__aarch64__))
#define SM_WRAP_SYSCALL 1
#define SM_FUNCS_SYSCALL(X)                                                    \
	X(syscall, long, (long, long, long, long, long, long, long))
#else
#define SM_WRAP_SYSCALL 0
#define SM_FUNCS_SYSCALL(X)
#endif

#define SM_FUNCS_CREDS(X)                                                      \
	X(setuid, int, (uid_t))                                                \
	X(setgid, int, (gid_t))                                                \
	X(seteuid, int, (uid_t))                                               \
	X(setegid, int, (gid_t))                                               \
	X(setreuid, int, (uid_t, uid_t))                                       \
	X(setregid, int, (gid_t, gid_t))                                       \
	X(setresuid, int, (uid_t, uid_t, uid_t))                               \
	X(setresgid, int, (gid_t, gid_t, gid_t))                               \
	X(setgroups, int, (size_t, const gid_t *))                             \
	X(chroot, int, (const char *))                                         \
	X(prctl, int, (int, unsigned long, unsigned long, unsigned long,       \
		       unsigned long))                                         \
	X(capset, int, (void *, void *))                                       \
	SM_FUNCS_SYSCALL(X)

/* Made with the raw system call, with no real function to call
 * (wrap_creds.c; 64-bit ABIs only, t_exports.sh reads the list). */
#define SM_CREDS_RAW_ONLY(Y)                                                   \
	Y(setrlimit)                                                           \
	Y(setrlimit64)                                                         \
	Y(prlimit)                                                             \
	Y(prlimit64)

/* mlockall and munlockall, made with the raw system call too
 * (wrap_mlock.c: the program's memory locked, not the library's
 * reserved tables). */
#define SM_MLOCK_RAW_ONLY(Y)                                                   \
	Y(mlockall)                                                            \
	Y(munlockall)

/*
 * sm_tasks_limiting - before a call that sets resource's limit to *lim
 * (struct rlimit or struct rlimit64, one on 64-bit ABIs; NULL: none set) for
 * process pid (0: the caller).  A limit on tasks (RLIMIT_NPROC) of fewer
 * than SM_NPROC_SMALL may forbid the ticker thread from then on
 * (haproxy's workers set it to 0 so that nothing forks): the program's
 * open fds are classified and the ticker started now if one is wanted.
 * The new value is read as the kernel would (a bad pointer: nothing
 * done, the call fails with EFAULT).  errno kept.
 * Context: any thread; does nothing in a signal handler.
 */
#define SM_NPROC_SMALL 64
void sm_tasks_limiting(pid_t pid, int resource, const void *lim);

/*
 * sm_creds_changed - the process's credentials changed (a wrapper of this
 * group saw a successful call): records go on where the new uid may write
 * (sink_reinit_for_uid).  errno kept.
 * Context: any thread, not a signal handler (takes the write lock).
 */
void sm_creds_changed(void);

/*
 * sm_creds_changing - before such a call: with an explicit log path, the
 * ticker opens the log with the credentials of now and keeps it, so that
 * the records still reach it when the new uid could not open it
 * (sink_reinit_for_uid).  A fork child without its state file yet makes
 * it now when the directory of the user it becomes would not take it
 * (state_dir_usable_by), or after the change.  euid: the effective uid
 * the call sets, SM_EUID_SAME for a call that leaves it (setgid and the
 * other group calls, setreuid(r, -1)...).  errno kept.
 * Context: any thread, not a signal handler.
 */
#define SM_EUID_SAME ((uid_t)-1)
void sm_creds_changing(uid_t euid);

/* sm_confine_filter - a seccomp filter (prog, a struct sock_fprog) or
 * strict mode went on, on the calling thread or (all_threads: TSYNC) on
 * every one: whether the exit path may still ask the ticker. */
void sm_confine_filter(bool strict, bool all_threads, const void *prog);

/*
 * sm_confine_begin, sm_confine_end - around a call that confines the
 * calling thread: a chroot (SM_CONFINE_ROOT), a seccomp filter or strict
 * mode on itself (SM_CONFINE_THREAD) or on every thread (SM_CONFINE_ALL,
 * TSYNC).  Before it: the program's open fds are classified, the ticker
 * started and the log kept open for it (meter_pin_log), so that the
 * records still reach the log (with TSYNC every thread, the ticker too, is
 * quiet from then on).  After it, done telling whether the call did
 * confine: the program's threads are quiet (core/quiet.h), or, for a
 * probe or a refusal, nothing is.  begin returns what end needs.  errno
 * kept.
 * Context: any thread, not a signal handler.
 */
enum sm_confine { SM_CONFINE_ROOT, SM_CONFINE_THREAD, SM_CONFINE_ALL };
int sm_confine_begin(enum sm_confine how);
void sm_confine_end(enum sm_confine how, int before, bool done);

/*
 * __wrap_syscall - what the library's own syscall() calls become (the link
 * uses --wrap=syscall): libc's syscall(), never the exported wrapper, so
 * our own writes and closes are never metered.
 * Context: any thread and signal handler.
 */
long __wrap_syscall(long n, ...);

#endif
