/*
 * wrap_signals.c - the program's signal handlers run through a trampoline
 * of ours, which notes in the thread that a handler runs.
 *
 * Why: the ticker thread starts at the first tracked fd (want_ticker), and
 * creating a thread is not async-signal-safe: from inside a handler that
 * interrupted malloc, pthread_create would deadlock on malloc's lock.  The
 * thread's signal mask cannot tell: PostgreSQL's postmaster runs with every
 * signal blocked except inside select(), and its handlers too (their
 * sa_mask is full), so a guess from the mask never started its ticker (no
 * interval record, close records written at exit only, dropped past the
 * queue's size).  Knowing when a handler runs answers exactly.
 *
 * The program sees what it installed: sigaction and the signal() family
 * report its own handler as the old one, never the trampoline; flags and
 * masks pass through untouched.  What it cannot hide: the trampoline is
 * one more frame under the handler (a backtrace taken in a handler shows
 * it), libc's __sigaction called by name reports it as the handler, and
 * a tracer sees its address.  A handler installed another way (a raw
 * rt_sigaction) is not the trampoline's: for those, preload.c's
 * maybe_in_handler keeps guessing from the mask.
 */
#include "preload.h"

#include <stdint.h>

#if defined(__SANITIZE_THREAD__)
/* See funcs_signals.h: no wrapper, no trampoline. */
bool sm_in_handler(void)
{
	return false;
}

void sm_signals_after_fork(void)
{
}

bool sm_handler_ours(const struct sigaction *sa)
{
	(void)sa;
	return false;
}

int sm_query_action(int sig, struct sigaction *sa)
{
	return sigaction(sig, NULL, sa);
}
#else
#include <string.h>

/* Exported by glibc: the unbound stubs' way to the real thing. */
int __sigaction(int sig, const struct sigaction *act, struct sigaction *old);
sm_sighandler_t bsd_signal(int sig, sm_sighandler_t handler);
sm_sighandler_t ssignal(int sig, sm_sighandler_t handler);
sm_sighandler_t sysv_signal(int sig, sm_sighandler_t handler);
sm_sighandler_t __sysv_signal(int sig, sm_sighandler_t handler);

#define BOUND(name) (sm_bind() && sm_real.name != unbound_##name)

/* The program's handler of each signal, one table per calling convention:
 * each trampoline calls only its own kind, so no handler is ever called
 * with the other kind's arguments while an install is under way. */
typedef void (*info_handler)(int, siginfo_t *, void *);
static sm_sighandler_t plain_fn[NSIG];
static info_handler info_fn[NSIG];

/* Handlers running on this thread, and the trampoline's stack address at
 * the outermost one.  initial-exec: no allocation, signal-safe. */
static __thread unsigned depth __attribute__((tls_model("initial-exec")));
static __thread uintptr_t entry_sp __attribute__((tls_model("initial-exec")));

#define LOAD(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)

static void tramp_plain(int sig)
{
	volatile char here = 0;
	unsigned d = depth;
	sm_sighandler_t fn;

	if (sig <= 0 || sig >= NSIG)
		return;
	fn = LOAD(&plain_fn[sig]);
	if (!d)
		entry_sp = (uintptr_t)&here;
	depth = d + 1;
	if (fn)
		fn(sig);
	depth = d;
	(void)here;
}

static void tramp_info(int sig, siginfo_t *si, void *uc)
{
	volatile char here = 0;
	unsigned d = depth;
	info_handler fn;

	if (sig <= 0 || sig >= NSIG)
		return;
	fn = LOAD(&info_fn[sig]);
	if (!d)
		entry_sp = (uintptr_t)&here;
	depth = d + 1;
	if (fn)
		fn(sig, si, uc);
	depth = d;
	(void)here;
}

bool sm_in_handler(void)
{
	volatile char here = 0;

	if (!depth)
		return false;
	/* Above the trampoline's frame: the handler was left by a
	 * siglongjmp (stacks grow down).  (On an alternate signal stack
	 * below this one, the guess stays "in a handler": the ticker's start
	 * only waits.) */
	if ((uintptr_t)&here > entry_sp) {
		depth = 0;
		return false;
	}
	return true;
}

void sm_signals_after_fork(void)
{
	/* A child forked from inside a handler (PostgreSQL's postmaster
	 * starts some children so) is a process of its own: libc made its
	 * locks fresh, and a thread may start there. */
	depth = 0;
}

int sm_query_action(int sig, struct sigaction *sa)
{
	return sm_real.sigaction(sig, NULL, sa);
}

bool sm_handler_ours(const struct sigaction *sa)
{
	return sa->sa_handler == tramp_plain ||
	       sa->sa_handler == (sm_sighandler_t)(void (*)(void))tramp_info;
}

/* What the kernel reported as the old handler, as the program knows it. */
static void as_installed(struct sigaction *old, sm_sighandler_t plain,
			 info_handler info)
{
	if (old->sa_handler == tramp_plain)
		old->sa_handler = plain;
	else if (sm_handler_ours(old))
		old->sa_sigaction = info;
}

static bool a_function(sm_sighandler_t h)
{
	return h != SIG_DFL && h != SIG_IGN && h != SIG_ERR && h != SIG_HOLD &&
	       h != tramp_plain &&
	       h != (sm_sighandler_t)(void (*)(void))tramp_info;
}

SM_EXPORT int sigaction(int sig, const struct sigaction *act,
			struct sigaction *old)
{
	bool valid = sig > 0 && sig < NSIG;
	sm_sighandler_t plain = valid ? LOAD(&plain_fn[sig]) : NULL;
	info_handler info = valid ? LOAD(&info_fn[sig]) : NULL;
	struct sigaction mine;
	int r, saved;

	if (valid && act && a_function(act->sa_handler)) {
		mine = *act;
		if (act->sa_flags & SA_SIGINFO) {
			STORE(&info_fn[sig], act->sa_sigaction);
			mine.sa_sigaction = tramp_info;
		} else {
			STORE(&plain_fn[sig], act->sa_handler);
			mine.sa_handler = tramp_plain;
		}
		act = &mine;
	}
	r = sm_real.sigaction(sig, act, old);
	saved = errno;
	if (r != 0 && act == &mine) {
		STORE(&plain_fn[sig], plain);
		STORE(&info_fn[sig], info);
	}
	if (r == 0 && old)
		as_installed(old, plain, info);
	errno = saved;
	return r;
}

/*
 * The signal() family: each installs the trampoline through the real call
 * (its own flags: BSD's restart, System V's one-shot, sigset's mask), and
 * reports the program's own handler as the old one.
 */
static sm_sighandler_t via_trampoline(int sig, sm_sighandler_t handler,
				      sm_sighandler_t (*real)(int,
							      sm_sighandler_t))
{
	bool valid = sig > 0 && sig < NSIG;
	sm_sighandler_t plain = valid ? LOAD(&plain_fn[sig]) : NULL, r;
	info_handler info = valid ? LOAD(&info_fn[sig]) : NULL;
	int saved;

	if (valid && a_function(handler)) {
		STORE(&plain_fn[sig], handler);
		r = real(sig, tramp_plain);
		saved = errno;
		if (r == SIG_ERR)
			STORE(&plain_fn[sig], plain);
	} else {
		r = real(sig, handler);
		saved = errno;
	}
	if (r == tramp_plain)
		r = plain;
	else if (r == (sm_sighandler_t)(void (*)(void))tramp_info)
		r = (sm_sighandler_t)(void (*)(void))info;
	errno = saved;
	return r;
}

SM_EXPORT sm_sighandler_t signal(int sig, sm_sighandler_t handler)
{
	return via_trampoline(sig, handler, sm_real.signal);
}

SM_EXPORT sm_sighandler_t bsd_signal(int sig, sm_sighandler_t handler)
{
	return via_trampoline(sig, handler, sm_real.bsd_signal);
}

SM_EXPORT sm_sighandler_t ssignal(int sig, sm_sighandler_t handler)
{
	return via_trampoline(sig, handler, sm_real.ssignal);
}

SM_EXPORT sm_sighandler_t sysv_signal(int sig, sm_sighandler_t handler)
{
	return via_trampoline(sig, handler, sm_real.sysv_signal);
}

SM_EXPORT sm_sighandler_t __sysv_signal(int sig, sm_sighandler_t handler)
{
	return via_trampoline(sig, handler, sm_real.__sysv_signal);
}

SM_EXPORT sm_sighandler_t sigset(int sig, sm_sighandler_t handler)
{
	return via_trampoline(sig, handler, sm_real.sigset);
}

/* The stubs: bind and forward; while dlsym is re-entered, libc's own. */

int unbound_sigaction(int sig, const struct sigaction *act,
		      struct sigaction *old)
{
	if (BOUND(sigaction))
		return sm_real.sigaction(sig, act, old);
	return __sigaction(sig, act, old);
}

/* While dlsym is re-entered: BSD semantics through libc's __sigaction, for
 * every one of the family (an approximation for sysv_signal and sigset, in
 * a moment no program reaches in practice). */
static sm_sighandler_t libc_signal(int sig, sm_sighandler_t handler)
{
	struct sigaction sa, old;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	sigemptyset(&sa.sa_mask);
	if (sig > 0 && sig < NSIG)
		sigaddset(&sa.sa_mask, sig);
	sa.sa_flags = SA_RESTART;
	if (__sigaction(sig, &sa, &old) != 0)
		return SIG_ERR;
	return old.sa_handler;
}

#define SIGNAL_STUB(name)                                                      \
	sm_sighandler_t unbound_##name(int sig, sm_sighandler_t handler)       \
	{                                                                      \
		if (BOUND(name))                                               \
			return sm_real.name(sig, handler);                     \
		return libc_signal(sig, handler);                              \
	}

SIGNAL_STUB(signal)
SIGNAL_STUB(bsd_signal)
SIGNAL_STUB(ssignal)
SIGNAL_STUB(sysv_signal)
SIGNAL_STUB(__sysv_signal)
SIGNAL_STUB(sigset)
#endif
