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

void sm_signals_init(void)
{
}
#else
#include <link.h>
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
 * counted it yet.  The trampoline that finds this keeps a note in a
 * small table of the thread's, tagged with its frame's address; the note
 * goes when the handler returns (the wrapper then counts as ever).  If
 * the handler ends the process instead, sm_count_interrupted counts the
 * notes for the final record.  A handler left by siglongjmp leaves its
 * note behind: the wrapper never counted that call either, so the note
 * is owed; the next trampoline to run at or above that frame's address
 * (the frame is gone: a live note is an outer handler's, higher up the
 * stack) counts it then.  In a table, not in the frames: a stack reused
 * since cannot change a note.
 */
struct intr_note {
	struct fd_slot *slot;
	int64_t bytes;
	uintptr_t frame; /* the trampoline's; 0: a free entry */
	enum fd_dir dir;
};
#define INTR_NOTES 8
static __thread struct intr_note intr_notes[INTR_NOTES]
	__attribute__((tls_model("initial-exec")));

static bool slot_valid(const struct fd_slot *s)
{
	uintptr_t base = (uintptr_t)sm_meter.tab.slots, p = (uintptr_t)s;

	return s && base && p >= base &&
	       (p - base) / sizeof(*s) < sm_meter.tab.cap &&
	       (p - base) % sizeof(*s) == 0;
}

/* The executable ranges of libc (where the data calls' system calls and
 * the signal restorer are) and of this library (the unbound stubs' raw
 * system calls, the wrappers' return addresses): code is read only
 * there, never at an address a faulting program jumped to. */
struct code_range {
	uintptr_t lo, hi;
};
static struct code_range libc_code, own_code;

static int find_range(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct code_range *r = arg;
	uintptr_t want = r->lo;
	int i;

	(void)size;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) &&
		    (ph->p_flags & PF_R) && want >= lo &&
		    want < lo + ph->p_memsz) {
			r->lo = lo;
			r->hi = lo + ph->p_memsz;
			return 1;
		}
	}
	return 0;
}

static void code_range_of(const void *addr, struct code_range *out)
{
	struct code_range r = { (uintptr_t)addr, 0 };

	if (addr && dl_iterate_phdr(find_range, &r) == 1 && r.hi)
		*out = r;
}

void sm_signals_init(void)
{
	code_range_of((const void *)sm_real.sigaction, &libc_code);
	code_range_of((const void *)sm_signals_init, &own_code);
}

static bool in_range(const struct code_range *r, uintptr_t p, size_t before,
		     size_t after)
{
	return r->hi && p >= r->lo + before && p + after <= r->hi;
}

#if defined(__x86_64__)
extern const char __start_sm_metered_in[], __stop_sm_metered_in[],
	__start_sm_metered_out[], __stop_sm_metered_out[]
	__attribute__((visibility("hidden")));

/* The direction of the metered wrapper ret returns into, right after its
 * `call *sm_real.NAME(%rip)` (ff 15 and a displacement), or -1. */
static int wrapper_dir(uintptr_t ret)
{
	const unsigned char *c = (const unsigned char *)ret;
	int dir;

	if (ret >= (uintptr_t)__start_sm_metered_in + 6 &&
	    ret < (uintptr_t)__stop_sm_metered_in)
		dir = DIR_IN;
	else if (ret >= (uintptr_t)__start_sm_metered_out + 6 &&
		 ret < (uintptr_t)__stop_sm_metered_out)
		dir = DIR_OUT;
	else
		return -1;
	return c[-6] == 0xff && c[-5] == 0x15 ? dir : -1;
}

/* The slot and direction of the data call uc was interrupted right after
 * the system call of, and its result.  False when it was not one: the
 * instruction before rip is not a `syscall` (0f 05) in libc or in this
 * library, the result is an error, or the fd in rdi has no call noted in
 * flight by a stack pointer just above the interrupted one, with the
 * wrapper's return address where its call left it.  A call noted by
 * this thread loses its note here in any case: a handler that leaves by
 * siglongjmp would leave it behind, stale. */
static bool interrupted_call(const ucontext_t *uc, struct intr_note *n)
{
	const greg_t *g = uc->uc_mcontext.gregs;
	uintptr_t ip = (uintptr_t)g[REG_RIP], sp = (uintptr_t)g[REG_RSP];
	unsigned fd = (unsigned)(int)g[REG_RDI];
	const unsigned char *c = (const unsigned char *)ip;
	struct fd_slot *s;
	uint32_t m, above;
	int dir;

	if (!sm_meter.tab.slots || fd >= sm_meter.tab.cap)
		return false;
	s = &sm_meter.tab.slots[fd];
	m = __atomic_load_n(&s->inflight_sp, __ATOMIC_RELAXED);
	above = m - (uint32_t)sp;
	if (!m || above < 8 || above > 1024 || above % 8)
		return false;
	/* Ours: the wrapper's frame is right above libc's. */
	dir = wrapper_dir(*(const uintptr_t *)(sp + above - 8));
	if (dir < 0)
		return false;
	__atomic_store_n(&s->inflight_sp, 0, __ATOMIC_RELAXED);
	if (g[REG_RAX] < 0 ||
	    !(in_range(&libc_code, ip, 2, 0) || in_range(&own_code, ip, 2, 0)) ||
	    c[-2] != 0x0f || c[-1] != 0x05)
		return false;
	n->slot = s;
	n->dir = (enum fd_dir)dir;
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
	    !in_range(&libc_code, (uintptr_t)ret, 0, sizeof(restorer)) ||
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

static void note_count(struct intr_note *n)
{
	if (slot_valid(n->slot))
		sm_data(n->slot, n->dir, n->bytes, 0);
	n->frame = 0;
}

/* Trampoline entry (frame: the trampoline's frame address, on the real
 * stack: a local's address is not under ASan, whose fake stacks are not
 * in stack order; the same trampoline always gives the same address):
 * count
 * the notes left behind below it, then note the data call the handler
 * interrupted as it returned, if it did.  The entry's index + 1, or 0. */
static unsigned note_enter(uintptr_t frame, const ucontext_t *uc)
{
	struct intr_note n = { 0 };
	unsigned i, free_i = INTR_NOTES;

	for (i = 0; i < INTR_NOTES; i++) {
		if (intr_notes[i].frame && intr_notes[i].frame <= frame)
			note_count(&intr_notes[i]);
		if (!intr_notes[i].frame && free_i == INTR_NOTES)
			free_i = i;
	}
	if (!uc || !interrupted_call(uc, &n) || free_i == INTR_NOTES)
		return 0;
	n.frame = frame;
	intr_notes[free_i] = n;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	return free_i + 1;
}

/* Trampoline exit (the handler returned): the wrapper counts its call. */
static void note_leave(unsigned token, uintptr_t frame)
{
	if (token && intr_notes[token - 1].frame == frame)
		intr_notes[token - 1].frame = 0;
}

void sm_count_interrupted(void)
{
	unsigned i;

	for (i = 0; i < INTR_NOTES; i++)
		if (intr_notes[i].frame)
			note_count(&intr_notes[i]);
}

static __attribute__((noinline)) void tramp_plain(int sig)
{
	volatile char here = 0;
	unsigned d = depth;
	sm_sighandler_t fn;
	unsigned token;

	if (sig <= 0 || sig >= NSIG)
		return;
	fn = LOAD(&plain_fn[sig]);
	if (!d)
		entry_sp = (uintptr_t)&here;
	depth = d + 1;
#if defined(__x86_64__)
	token = note_enter((uintptr_t)__builtin_frame_address(0),
			   plain_context(__builtin_return_address(0),
					 __builtin_frame_address(0)));
#else
	token = note_enter((uintptr_t)__builtin_frame_address(0), NULL);
#endif
	if (fn)
		fn(sig);
	note_leave(token, (uintptr_t)__builtin_frame_address(0));
	depth = d;
	(void)here;
}

static void tramp_info(int sig, siginfo_t *si, void *uc)
{
	volatile char here = 0;
	unsigned d = depth;
	info_handler fn;
	unsigned token;

	if (sig <= 0 || sig >= NSIG)
		return;
	fn = LOAD(&info_fn[sig]);
	if (!d)
		entry_sp = (uintptr_t)&here;
	depth = d + 1;
	token = note_enter((uintptr_t)__builtin_frame_address(0), uc);
	if (fn)
		fn(sig, si, uc);
	note_leave(token, (uintptr_t)__builtin_frame_address(0));
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
	memset(intr_notes, 0, sizeof(intr_notes));
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
