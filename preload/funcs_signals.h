/*
 * funcs_signals.h - the real functions of one group of wrapped calls: the
 * program's signal handlers are installed through sigaction and the
 * signal() family (signal, bsd_signal, ssignal, sysv_signal, sigset;
 * wrappers and stubs in wrap_signals.c), so that the library knows when
 * one of them runs; and the calls that can make a signal that ends the
 * process arrive while a handler holds a data call it cut short
 * (sigprocmask, pthread_sigmask, sigsuspend, raise, kill, sigqueue, abort,
 * and their system calls through syscall(): see before_delivery).  Not
 * pthread_kill: glibc has two of it (GLIBC_2.2.5 returns ESRCH for a thread
 * that ended, GLIBC_2.34 returns 0), and a wrapper would give every
 * program the newer one.
 * X(name, return type, parameter types), as SM_REAL_FUNCS in preload.h.
 */
#ifndef SOCKMETER_FUNCS_SIGNALS_H
#define SOCKMETER_FUNCS_SIGNALS_H

#include <signal.h>
#include <stdbool.h>

typedef void (*sm_sighandler_t)(int);

/* ThreadSanitizer delivers signals itself (its own handler defers the
 * program's to safe points, through its sigaction interceptor): its builds
 * leave signals alone and keep the mask's guess (preload.c). */
#if defined(__SANITIZE_THREAD__)
#define SM_FUNCS_SIGNALS(X)
#else
#define SM_FUNCS_SIGNALS(X)                                                    \
	X(sigaction, int,                                                      \
	  (int, const struct sigaction *, struct sigaction *))                 \
	X(signal, sm_sighandler_t, (int, sm_sighandler_t))                     \
	X(bsd_signal, sm_sighandler_t, (int, sm_sighandler_t))                 \
	X(ssignal, sm_sighandler_t, (int, sm_sighandler_t))                    \
	X(sysv_signal, sm_sighandler_t, (int, sm_sighandler_t))                \
	X(__sysv_signal, sm_sighandler_t, (int, sm_sighandler_t))              \
	X(sigset, sm_sighandler_t, (int, sm_sighandler_t))                     \
	X(sigprocmask, int, (int, const sigset_t *, sigset_t *))               \
	X(pthread_sigmask, int, (int, const sigset_t *, sigset_t *))           \
	X(raise, int, (int))                                                   \
	X(kill, int, (pid_t, int))                                             \
	X(sigqueue, int, (pid_t, int, const union sigval))                     \
	X(sigsuspend, int, (const sigset_t *))                                 \
	X(abort, void, (void))
#endif

/*
 * sm_in_handler - true while the calling thread runs a handler the program
 * installed through sigaction or signal (or code it calls).  A handler
 * left by siglongjmp is seen as left at the next call from above its
 * frame.  Async-signal-safe.
 * Context: any thread and signal handler.
 */
bool sm_in_handler(void);

/*
 * sm_signals_raw - syscall(n, a1, a2, a3, a4) is about to be made, n one
 * of the system calls that send a signal or change the mask (kill, tkill,
 * tgkill, rt_sigqueueinfo, rt_tgsigqueueinfo, rt_sigprocmask,
 * rt_sigsuspend): as their libc wrappers, a call cut short that the
 * thread owes is counted first if they are about to end the process.
 * errno kept.  Context: any thread and signal handler.
 */
void sm_signals_raw(long n, long a1, long a2, long a3, long a4);

/* sm_query_action - the kernel's action for sig, as it is (the trampoline
 * where it is ours).  Context: any thread and signal handler. */
int sm_query_action(int sig, struct sigaction *sa);

/* sm_signals_after_fork - a fork child runs no handler of its parent's.
 * Context: fork child handler. */
void sm_signals_after_fork(void);

/*
 * sm_handler_ours - true when the kernel's handler for sig, as
 * sigaction(sig, NULL, &sa) reported it in sa, is the library's
 * trampoline: then sm_in_handler knows whether it runs.
 * Context: any thread and signal handler.
 */
bool sm_handler_ours(const struct sigaction *sa);

#endif
