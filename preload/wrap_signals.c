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

void sm_count_interrupted(void)
{
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

/*
 * A data call a handler interrupted as it returned (see sm_inflight_set in
 * preload.h).  When a signal is pending as a system call returns, the
 * kernel runs the handler before the instruction after the `syscall`: the
 * call's result is in the interrupted context's rax, its fd still in rdi
 * (the kernel keeps the argument registers), and the wrapper has not
 * counted it yet.  The trampoline that finds this keeps a note in its own
 * frame, linked from the thread; the note goes when the handler returns
 * (the wrapper then counts as ever).  If the handler ends the process
 * instead, sm_count_interrupted counts the note's bytes for the final
 * record.  A handler left by siglongjmp leaves its note behind: the
 * wrapper never counted that call either, so the note is still owed; a
 * check word (the note's address and contents mixed with a per-process
 * key) tells a note from a stack reused since, and the slot is checked to
 * be in the table before use.
 */
struct intr_note {
	struct fd_slot *slot; /* NULL: nothing owed */
	int64_t bytes;
	enum fd_dir dir;
	struct intr_note *prev;
	uintptr_t check;
};
static __thread struct intr_note *intr_head
	__attribute__((tls_model("initial-exec")));

static uintptr_t note_check(const struct intr_note *n)
{
	static const char key;
	uintptr_t h = (uintptr_t)&key * 0x9e3779b97f4a7c15u;

	h ^= (uintptr_t)n + (uintptr_t)n->slot * 3 + (uintptr_t)n->bytes * 5 +
	     (uintptr_t)n->dir * 7 + (uintptr_t)n->prev * 11;
	return h * 0xff51afd7ed558ccdu;
}

static bool slot_valid(const struct fd_slot *s)
{
	uintptr_t base = (uintptr_t)sm_meter.tab.slots, p = (uintptr_t)s;

	return s && base && p >= base &&
	       (p - base) / sizeof(*s) < sm_meter.tab.cap &&
	       (p - base) % sizeof(*s) == 0;
}

#if defined(__x86_64__)
/* The slot and direction of the data call uc was interrupted right after
 * the system call of, and its result; false when it was not one: the
 * instruction before rip is not a `syscall` (0f 05), the result is an
 * error, the fd in rdi has no call noted in flight by a stack pointer just
 * above the interrupted one (a wrapper's frame lies above libc's), or has
 * one in each direction (which was ours cannot be told: none is taken). */
static bool interrupted_call(const ucontext_t *uc, struct intr_note *n)
{
	const greg_t *g = uc->uc_mcontext.gregs;
	const unsigned char *ip = (const unsigned char *)g[REG_RIP];
	uint16_t sp = (uint16_t)g[REG_RSP];
	unsigned fd = (unsigned)(int)g[REG_RDI];
	struct fd_slot *s;
	int d, found = 0;

	/* Never a read across a page boundary: the page before might not be
	 * mapped had no system call just returned. */
	if (g[REG_RAX] < 0 || ((uintptr_t)ip & 4095) < 2 || ip[-2] != 0x0f ||
	    ip[-1] != 0x05 || !sm_meter.tab.slots || fd >= sm_meter.tab.cap)
		return false;
	s = &sm_meter.tab.slots[fd];
	for (d = 0; d < DIR_COUNT; d++) {
		uint16_t m = __atomic_load_n(&s->inflight_sp[d],
					     __ATOMIC_RELAXED);
		uint16_t above = (uint16_t)(m - sp);

		if (m && above >= 8 && above <= 1024) {
			n->dir = (enum fd_dir)d;
			found++;
		}
	}
	if (found != 1)
		return false;
	n->slot = s;
	n->bytes = g[REG_RAX];
	return true;
}

/* The context a plain handler (no SA_SIGINFO) was called on: the kernel
 * builds the same frame for both kinds, the return address (glibc's
 * restorer: `mov $15, %rax; syscall`, what libgcc's unwinder checks too)
 * at its bottom and the ucontext right above it.  NULL when the frame is
 * not that (a sanitizer calling the handler itself). */
static const ucontext_t *plain_context(void *ret, void *frame)
{
	static const unsigned char restorer[] = { 0x48, 0xc7, 0xc0, 0x0f, 0x00,
						  0x00, 0x00, 0x0f, 0x05 };

	/* frame: the saved rbp; above it the return address, then uc. */
	if (!ret || *(void **)((char *)frame + sizeof(void *)) != ret ||
	    memcmp(ret, restorer, sizeof(restorer)) != 0)
		return NULL;
	return (const ucontext_t *)((char *)frame + 2 * sizeof(void *));
}
#else
static bool interrupted_call(const ucontext_t *uc, struct intr_note *n)
{
	(void)uc;
	(void)n;
	return false;
}
#endif

/* Trampoline entry: note the data call the handler interrupted as it
 * returned, if it did. */
static void note_enter(struct intr_note *n, const ucontext_t *uc)
{
	n->slot = NULL;
	if (!uc || !interrupted_call(uc, n)) {
		n->slot = NULL;
		return;
	}
	n->prev = intr_head;
	n->check = note_check(n);
	intr_head = n;
}

/* Trampoline exit (the handler returned): the wrapper counts its call. */
static void note_leave(struct intr_note *n)
{
	if (n->slot)
		intr_head = n->prev;
}

void sm_count_interrupted(void)
{
	struct intr_note *n = intr_head;
	int guard = 64;

	intr_head = NULL;
	for (; n && guard--; n = n->prev) {
		if (n->check != note_check(n) || !slot_valid(n->slot))
			break;
		sm_data(n->slot, n->dir, n->bytes, 0);
		n->slot = NULL;
		n->check = 0;
	}
}

static __attribute__((noinline)) void tramp_plain(int sig)
{
	volatile char here = 0;
	unsigned d = depth;
	sm_sighandler_t fn;
	struct intr_note note;

	if (sig <= 0 || sig >= NSIG)
		return;
	fn = LOAD(&plain_fn[sig]);
	if (!d)
		entry_sp = (uintptr_t)&here;
	depth = d + 1;
#if defined(__x86_64__)
	note_enter(&note, plain_context(__builtin_return_address(0),
					 __builtin_frame_address(0)));
#else
	note_enter(&note, NULL);
#endif
	if (fn)
		fn(sig);
	note_leave(&note);
	depth = d;
	(void)here;
}

static void tramp_info(int sig, siginfo_t *si, void *uc)
{
	volatile char here = 0;
	unsigned d = depth;
	info_handler fn;
	struct intr_note note;

	if (sig <= 0 || sig >= NSIG)
		return;
	fn = LOAD(&info_fn[sig]);
	if (!d)
		entry_sp = (uintptr_t)&here;
	depth = d + 1;
	note_enter(&note, uc);
	if (fn)
		fn(sig, si, uc);
	note_leave(&note);
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
	 * locks fresh, and a thread may start there.  The call its parent's
	 * handler interrupted is the parent's to count. */
	depth = 0;
	intr_head = NULL;
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
