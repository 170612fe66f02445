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
 * The program sees what it installed: sigaction and signal report its own
 * handler as the old one, never the trampoline; flags and masks pass
 * through untouched.  A handler installed another way (a raw
 * rt_sigaction, sigset, sysv_signal) is not the trampoline's: for those,
 * preload.c's maybe_in_handler keeps guessing from the mask.
 */
#include "preload.h"

#include <stdint.h>

/* Exported by glibc: the unbound stubs' way to the real thing. */
int __sigaction(int sig, const struct sigaction *act, struct sigaction *old);
sm_sighandler_t bsd_signal(int sig, sm_sighandler_t handler);

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
	return h != SIG_DFL && h != SIG_IGN && h != SIG_ERR &&
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

SM_EXPORT sm_sighandler_t signal(int sig, sm_sighandler_t handler)
{
	bool valid = sig > 0 && sig < NSIG;
	sm_sighandler_t plain = valid ? LOAD(&plain_fn[sig]) : NULL, r;
	info_handler info = valid ? LOAD(&info_fn[sig]) : NULL;
	int saved;

	if (valid && a_function(handler)) {
		STORE(&plain_fn[sig], handler);
		r = sm_real.signal(sig, tramp_plain);
		saved = errno;
		if (r == SIG_ERR)
			STORE(&plain_fn[sig], plain);
	} else {
		r = sm_real.signal(sig, handler);
		saved = errno;
	}
	if (r == tramp_plain)
		r = plain;
	else if (r == (sm_sighandler_t)(void (*)(void))tramp_info)
		r = (sm_sighandler_t)(void (*)(void))info;
	errno = saved;
	return r;
}

/* The stubs: bind and forward; while dlsym is re-entered, libc's own. */

int unbound_sigaction(int sig, const struct sigaction *act,
		      struct sigaction *old)
{
	if (BOUND(sigaction))
		return sm_real.sigaction(sig, act, old);
	return __sigaction(sig, act, old);
}

sm_sighandler_t unbound_signal(int sig, sm_sighandler_t handler)
{
	if (BOUND(signal))
		return sm_real.signal(sig, handler);
	return bsd_signal(sig, handler);
}
