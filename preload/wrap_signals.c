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
#include "../core/rawsys.h"

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

void sm_settle_left(void)
{
}

SM_FORK_PATH
void sm_count_interrupted(void)
{
}

void sm_signals_init(void)
{
}

void sm_signals_raw(long n, long a1, long a2, long a3, long a4)
{
	(void)n, (void)a1, (void)a2, (void)a3, (void)a4;
}
#else
#include <link.h>
#include <sched.h>
#include <stdlib.h>
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
 * with the other kind's arguments while an install is under way.  Two of
 * each, and a trampoline per table: an install writes the table the
 * kernel's current action does not use and then gives the kernel the
 * other trampoline, so a signal delivered meanwhile runs the old handler
 * under the old action's mask and flags, and one delivered after runs the
 * new handler under the new ones, never a mix (cur_tab: the table of the
 * action installed last). */
typedef void (*info_handler)(int, siginfo_t *, void *);
static sm_sighandler_t plain_fn[2][NSIG];
static info_handler info_fn[2][NSIG];
static unsigned char cur_tab[NSIG];
static uint32_t install_lock SM_FORK_DATA; /* see install_begin */

/* Handlers running on this thread; the outermost one's trampoline frame
 * and whether it is on the alternate signal stack; that stack as the
 * kernel reported it to the last handler.  initial-exec: no allocation,
 * signal-safe. */
static __thread unsigned depth __attribute__((tls_model("initial-exec")));
static __thread uintptr_t entry_frame __attribute__((tls_model("initial-exec")));
static __thread bool entry_alt __attribute__((tls_model("initial-exec")));
static __thread uintptr_t alt_lo __attribute__((tls_model("initial-exec")));
static __thread uintptr_t alt_hi __attribute__((tls_model("initial-exec")));

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
 * is owed; the next trampoline to run outside that frame (see
 * nested_in: the frame is gone, and a live note is an outer handler's)
 * counts it then.  In a table, not in the frames: a stack reused since
 * cannot change a note.
 *
 * A handler that ran before the call's system call was made, or while
 * the kernel restarts it (SA_RESTART: rip is back on the `syscall`),
 * leaves the call's in-flight note in place, for a later signal to find
 * when the call returns; its table entry is "pending" and, if the handler
 * leaves by siglongjmp, clears the note it left (the wrapper never will).
 */
struct intr_note {
	struct fd_slot *slot;
	int64_t bytes;
	uintptr_t frame; /* the trampoline's; 0: a free entry */
	uint32_t mark;	 /* pending: the slot's in-flight note */
	enum fd_dir dir;
	bool alt;     /* frame is on the alternate signal stack */
	bool pending; /* the call goes on after the handler */
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

enum { INTR_NONE, INTR_DONE, INTR_PENDING };

/* The slot and direction of the data call uc interrupted, found by the
 * fd in rdi having a call noted in flight by a stack pointer just above
 * the interrupted one, with the wrapper's return address where its call
 * left it; INTR_NONE when there is none, or when it is an outer
 * handler's pending call.  INTR_DONE, with the result: the call was
 * interrupted right after its system call (the instruction before rip is
 * a `syscall`, 0f 05, in libc or in this library), and moved bytes; its
 * note is cleared either way (a handler that leaves by siglongjmp would
 * leave it behind, stale).  INTR_PENDING: the call goes on after the
 * handler, its note kept. */
static int interrupted_call(const ucontext_t *uc, struct intr_note *n,
			    const bool stale[INTR_NOTES])
{
	const greg_t *g = uc->uc_mcontext.gregs;
	uintptr_t ip = (uintptr_t)g[REG_RIP], sp = (uintptr_t)g[REG_RSP];
	unsigned fd = (unsigned)(int)g[REG_RDI];
	const unsigned char *c = (const unsigned char *)ip;
	struct fd_slot *s;
	uint32_t m, above;
	unsigned i;
	int dir;

	if (!sm_meter.tab.slots || fd >= sm_meter.tab.cap)
		return INTR_NONE;
	s = &sm_meter.tab.slots[fd];
	m = __atomic_load_n(&s->inflight_sp, __ATOMIC_RELAXED);
	above = m - (uint32_t)sp;
	if (!m || above < 8 || above > 1024 || above % 8)
		return INTR_NONE;
	/* Ours: the wrapper's frame is right above libc's. */
	dir = wrapper_dir(*(const uintptr_t *)(sp + above - 8));
	if (dir < 0)
		return INTR_NONE;
	/* An outer handler's (a live one: not one left by siglongjmp,
	 * whose call is over and whose mark a new call may have taken). */
	for (i = 0; i < INTR_NOTES; i++)
		if (intr_notes[i].frame && !stale[i] && intr_notes[i].pending &&
		    intr_notes[i].slot == s && intr_notes[i].mark == m)
			return INTR_NONE;
	n->slot = s;
	n->dir = (enum fd_dir)dir;
	if (!(in_range(&libc_code, ip, 2, 0) || in_range(&own_code, ip, 2, 0)) ||
	    c[-2] != 0x0f || c[-1] != 0x05) {
		n->mark = m;
		n->pending = true;
		return INTR_PENDING;
	}
	__atomic_store_n(&s->inflight_sp, 0, __ATOMIC_RELAXED);
	if (g[REG_RAX] < 0)
		return INTR_NONE;
	n->bytes = g[REG_RAX];
	n->mark = m; /* put back if the handler returns (note_leave) */
	return INTR_DONE;
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
enum { INTR_NONE, INTR_DONE, INTR_PENDING };

static int interrupted_call(const ucontext_t *uc, struct intr_note *n,
			    const bool stale[INTR_NOTES])
{
	(void)uc;
	(void)n;
	(void)stale;
	return INTR_NONE;
}
#endif

/* A note whose handler is gone: a call it cut short is owed (the wrapper
 * never counted it), one it left pending has its in-flight note cleared
 * unless the slot has a newer one.  At exit, the same. */
static void note_settle(struct intr_note *n)
{
	if (!slot_valid(n->slot)) {
	} else if (n->pending) {
		uint32_t m = n->mark;

		__atomic_compare_exchange_n(&n->slot->inflight_sp, &m, 0, false,
					    __ATOMIC_RELAXED, __ATOMIC_RELAXED);
	} else {
		sm_data(n->slot, n->dir, n->bytes, 0);
	}
	n->frame = 0;
}

/*
 * Where the alternate signal stack is: as the kernel told the handler
 * (uc_stack holds its place and size whether or not the handler runs on
 * it), or as sigaltstack says when the context is unknown.  Inside a
 * handler, a disabled one (SS_AUTODISARM disables it while its handler
 * runs) leaves the place known.
 */
static void note_altstack(const ucontext_t *uc, unsigned d)
{
	stack_t ss;

	if (uc)
		ss = uc->uc_stack;
	else if (sm_quiet() || sigaltstack(NULL, &ss) != 0)
		return; /* (no system call of ours on a sandboxed thread) */
	if ((ss.ss_flags & SS_DISABLE) || !ss.ss_size) {
		if (!d)
			alt_lo = alt_hi = 0;
		return;
	}
	alt_lo = (uintptr_t)ss.ss_sp;
	alt_hi = alt_lo + ss.ss_size;
}

static bool on_alt(uintptr_t p)
{
	return alt_hi && p >= alt_lo && p < alt_hi;
}

/* Whether a trampoline frame f (on the alternate stack or not) runs
 * inside the handler of frame g: handlers nest down the normal stack,
 * then onto the alternate one and down it (once on it, the kernel stays
 * on it), wherever the two stacks lie in memory.  Not nested: g's
 * handler was left by siglongjmp. */
static bool nested_in(uintptr_t f, bool f_alt, uintptr_t g, bool g_alt)
{
	return f_alt == g_alt ? f < g : f_alt;
}

/* Trampoline entry (frame: the trampoline's frame address, on the real
 * stack: a local's address is not under ASan, whose fake stacks are not
 * in stack order; the same trampoline always gives the same address):
 * note the data call the handler interrupted, if it did, and settle the
 * notes left behind by handlers this one is not nested in.  The entry's
 * index + 1, or 0.
 *
 * The call is found first: a handler left by siglongjmp while its call
 * was pending (SA_RESTART: the kernel was to restart it, nothing moved)
 * left that call's mark, and the program's next call on the fd, made
 * from the same place (a loop), notes the same mark.  Settling first
 * cleared the live call's note with the stale one's, and a handler that
 * then cut it short found nothing: its bytes were lost (a MSG_WAITALL
 * recv, or perl's unsafe signals dying out of syswrite twice). */
static unsigned note_enter(uintptr_t frame, bool alt, const ucontext_t *uc)
{
	struct intr_note n = { 0 };
	unsigned i, free_i = INTR_NOTES;
	bool stale[INTR_NOTES];
	int r;

	for (i = 0; i < INTR_NOTES; i++)
		stale[i] = intr_notes[i].frame &&
			   !nested_in(frame, alt, intr_notes[i].frame,
				      intr_notes[i].alt);
	r = uc ? interrupted_call(uc, &n, stale) : INTR_NONE;
	for (i = 0; i < INTR_NOTES; i++) {
		if (stale[i]) {
			/* The live call owns that mark now. */
			if (r != INTR_NONE && intr_notes[i].pending &&
			    intr_notes[i].slot == n.slot &&
			    intr_notes[i].mark == n.mark)
				intr_notes[i].frame = 0;
			else
				note_settle(&intr_notes[i]);
		}
		if (!intr_notes[i].frame && free_i == INTR_NOTES)
			free_i = i;
	}
	if (r == INTR_NONE || free_i == INTR_NOTES)
		return 0;
	n.frame = frame;
	n.alt = alt;
	intr_notes[free_i] = n;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	return free_i + 1;
}

/* Trampoline exit (the handler returned): the wrapper counts its call.
 * Until it does, the call's in-flight note is put back: a signal that
 * the kernel's sigreturn unblocks (pending while the handler ran: php-fpm
 * gets SIGQUIT, then SIGTERM, whose handler ends the process) is
 * delivered at the same place, and its trampoline must find the call
 * again.  The wrapper clears the note as ever once it has counted. */
static void note_leave(unsigned token, uintptr_t frame)
{
	struct intr_note *n;
	uint32_t none = 0;

	if (!token || intr_notes[token - 1].frame != frame)
		return;
	n = &intr_notes[token - 1];
	if (!n->pending && slot_valid(n->slot))
		__atomic_compare_exchange_n(&n->slot->inflight_sp, &none,
					    n->mark, false, __ATOMIC_RELAXED,
					    __ATOMIC_RELAXED);
	n->frame = 0;
}

/*
 * A close, close_range or dup2 of this thread is about to retire a slot:
 * the calls cut short by handlers that were left by siglongjmp (their
 * frames are gone: this call is not nested in them) are counted first,
 * so that their bytes are in the connection's close record.  They were
 * left for the next handler or the exit, which comes after the fd is
 * closed, when the slot holds nothing any more (perl's unsafe signals: a
 * handler that dies out of a blocked syswrite, then close $sock: that
 * partial write was lost).  A close inside the handler itself (nested)
 * leaves its note alone.  Eight TLS loads when no note is held.
 */
__attribute__((noinline)) void sm_settle_left(void)
{
	uintptr_t here = (uintptr_t)__builtin_frame_address(0);
	bool alt = on_alt(here);
	unsigned i;

	for (i = 0; i < INTR_NOTES; i++)
		if (intr_notes[i].frame &&
		    !nested_in(here, alt, intr_notes[i].frame,
			       intr_notes[i].alt))
			note_settle(&intr_notes[i]);
}

SM_FORK_PATH
void sm_count_interrupted(void)
{
	unsigned i;

	for (i = 0; i < INTR_NOTES; i++)
		if (intr_notes[i].frame)
			note_settle(&intr_notes[i]);
}

/*
 * A handler that ends the process with a signal, not with exit or _exit:
 * PHP's (a php-fpm child cut short in a write by its master's SIGQUIT or
 * SIGTERM) sets the signal back to its default action, unblocks it and
 * raises it again, and dies inside that sigprocmask or raise; a handler
 * whose own signal arrives again while it runs dies as it returns (the
 * kernel's sigreturn unblocks it).  The wrapper that would have counted
 * the call it cut short never runs again, and the state file, which a
 * recovery turns into the "killed" record, has only what wrappers counted.
 * So where the thread is about to let such a signal be delivered
 * (sigprocmask, pthread_sigmask, raise, kill, and the trampoline as the
 * handler returns), the calls cut short that it owes are counted first.
 * Only while it owes one (rare: a signal landed as a data call returned
 * with bytes); otherwise these calls cost a look at eight entries.  A
 * signal whose action is the default one and ends the process cannot be
 * survived once delivered, whichever thread takes it (the races left,
 * where the call would count twice, are in the README's Limits).
 */
/* Entry i holds a call cut short that no wrapper will count. */
static bool owed(unsigned i)
{
	return intr_notes[i].frame && !intr_notes[i].pending;
}

/* Count the calls cut short that this thread owes, now. */
static void settle_owed(void)
{
	unsigned i;

	for (i = 0; i < INTR_NOTES; i++)
		if (owed(i))
			note_settle(&intr_notes[i]);
}

static bool owes_calls(void)
{
	unsigned i;

	/* A sandboxed thread (quiet.h): no system call of ours to ask the
	 * kernel with; the call stays uncounted, as before. */
	if (sm_quiet())
		return false;
	for (i = 0; i < INTR_NOTES; i++)
		if (owed(i))
			/* Not a vfork child's (its TLS and slots are its
			 * parent's, whose wrapper counts the call). */
			return !sm_foreign_process();
	return false;
}

/* The kernel's struct sigaction (x86-64's and AArch64's layout), read and
 * written with the raw rt_sigaction: the action as it is. */
struct ksigaction {
	void *handler;
	unsigned long flags;
	void *restorer;
	uint64_t mask;
};

static bool kernel_action(int sig, struct ksigaction *k)
{
	return raw_syscall6(SYS_rt_sigaction, sig, 0, (long)k, 8, 0, 0) == 0;
}

/* Delivered now, sig would end the process: its action is the default
 * one (the kernel's, as it is), and that one ends it (with or without a
 * core). */
static bool fatal_now(int sig)
{
	struct ksigaction k;

	switch (sig) {
	case SIGCHLD:
	case SIGCONT:
	case SIGURG:
	case SIGWINCH:
	case SIGSTOP:
	case SIGTSTP:
	case SIGTTIN:
	case SIGTTOU:
		return false;
	default:
		break;
	}
	/* A pid namespace's init (a container's pid 1) is never sent a
	 * signal its own process group or itself raise with the default
	 * action: it lives on, and the wrapper counts the call. */
	return sig > 0 && sig <= 64 && kernel_action(sig, &k) &&
	       k.handler == (void *)SIG_DFL &&
	       raw_syscall6(SYS_getpid, 0, 0, 0, 0, 0, 0) != 1;
}

/* sigs (bit sig - 1) are about to be delivered to this thread: if one
 * ends the process, the calls cut short that the thread owes are counted
 * now.  errno kept. */
static void before_delivery(uint64_t sigs)
{
	int saved = errno, sig;

	for (sig = 1; sigs && sig <= 64; sig++, sigs >>= 1)
		if ((sigs & 1) && fatal_now(sig)) {
			settle_owed();
			break;
		}
	errno = saved;
}

static uint64_t blocked_now(void)
{
	uint64_t m = 0;

	raw_syscall6(SYS_rt_sigprocmask, SIG_BLOCK, 0, (long)&m, 8, 0, 0);
	return m;
}

static uint64_t pending_now(void)
{
	uint64_t p = 0;

	raw_syscall6(SYS_rt_sigpending, (long)&p, 8, 0, 0, 0, 0);
	return p;
}

static uint64_t low_word(const sigset_t *set)
{
	uint64_t w;

	memcpy(&w, set, sizeof(w));
	return w;
}

/* *out = the low word of the set at p: false (nothing read) where it
 * does not look like a pointer (sm_ptr_plausible), where the kernel would
 * fail with EFAULT, instead of a fault of ours (glibc's sigsuspend and
 * the raw system calls pass the pointer on unread).  It was read with
 * process_vm_readv, which a seccomp filter the program inherited may
 * punish with death (systemd's SystemCallFilter=@system-service lacks
 * it): a pointer into an unmapped page of the user range faults here
 * (README, Limits). */
static bool read_set(const void *p, uint64_t *out)
{
	if (!sm_ptr_plausible(p, _Alignof(unsigned long)))
		return false;
	memcpy(out, p, sizeof(*out));
	return true;
}

/*
 * sigsuspend(set): the mask is set for the wait, and before the thread
 * runs again the kernel delivers every signal the mask lets through, one
 * after the other, each handled one adding its handler's mask (and
 * itself, but with SA_NODEFER) to what blocks the next; the mask from
 * before comes back only as the first handler returns.  Which comes first
 * is not knowable from here (the kernel takes those sent to the thread
 * before those sent to the process), so a signal ends the process for
 * certain only if no handler's mask among those that may run blocks it:
 * counted then, never when it may be survived (a loss rather than a
 * double count).
 */
static void suspending(const void *set)
{
	struct ksigaction k;
	uint64_t m, pend, worst, bit;
	int sig;

	if (!read_set(set, &m))
		return;
	pend = pending_now() & ~m;
	worst = m;
	for (sig = 1; sig <= 64; sig++) {
		bit = 1ull << (sig - 1);
		if (!(pend & bit) || !kernel_action(sig, &k) ||
		    k.handler == (void *)SIG_DFL || k.handler == (void *)SIG_IGN)
			continue;
		worst |= k.mask | (k.flags & SA_NODEFER ? 0 : bit);
	}
	before_delivery(pend & ~worst);
}

/* The thread's mask is about to change (how, set): the pending signals
 * it unblocks are delivered as the call returns. */
static void mask_changing(int how, const sigset_t *set)
{
	uint64_t cur, s, want;

	if (how != SIG_BLOCK && how != SIG_UNBLOCK && how != SIG_SETMASK)
		return; /* EINVAL, as ever */
	cur = blocked_now();
	s = low_word(set);
	if (how == SIG_BLOCK)
		want = cur | s;
	else if (how == SIG_UNBLOCK)
		want = cur & ~s;
	else
		want = s;
	before_delivery(cur & ~want & pending_now());
}

/* sig is sent to this thread (or its process): delivered at once unless
 * the thread blocks it (then at the unblocking, seen there). */
static void sent_here(int sig)
{
	uint64_t bit;

	if (sig <= 0 || sig > 64)
		return;
	bit = 1ull << (sig - 1);
	if (!(blocked_now() & bit))
		before_delivery(bit);
}

/* sig is sent to process pid (kill's pid: this process by its pid, or its
 * process group by 0 or -pgid; group false: by its pid only). */
static void sent_to_process(long pid, int sig, bool group)
{
	long self = raw_syscall6(SYS_getpid, 0, 0, 0, 0, 0, 0);

	if (pid == self ||
	    (group && (pid == 0 ||
		       (pid < -1 && -pid == raw_syscall6(SYS_getpgid, 0, 0, 0,
							 0, 0, 0)))))
		sent_here(sig);
}

/* sig is sent to thread tid of process tgid (0: tkill's, any process). */
static void sent_to_thread(long tgid, long tid, int sig)
{
	if (tid == raw_syscall6(SYS_gettid, 0, 0, 0, 0, 0, 0) &&
	    (!tgid || tgid == raw_syscall6(SYS_getpid, 0, 0, 0, 0, 0, 0)))
		sent_here(sig);
}

/* The handler of the trampoline's note returned: the kernel's sigreturn
 * now restores uc's mask, delivering what it unblocks. */
static void at_sigreturn(unsigned token, uintptr_t frame,
			 const ucontext_t *uc)
{
	if (!token || !uc || intr_notes[token - 1].frame != frame ||
	    intr_notes[token - 1].pending || sm_quiet())
		return;
	before_delivery(pending_now() & ~low_word(&uc->uc_sigmask));
}

/* abort ends the process with SIGABRT, unless a handler of SIGABRT leaves
 * by siglongjmp, possibly back into the handler that cut the call short
 * (which may then return to the wrapper, which counts it).  With SIGABRT's
 * default action, or ignored (glibc's abort then sets the default), the
 * calls owed are counted now; with a handler of ours, once that handler
 * has returned inside abort (abort_pending, see tramp_run): glibc then
 * sets the default action and raises it again.  A handler installed
 * behind our back (a raw rt_sigaction): not counted. */
static __thread bool abort_pending __attribute__((tls_model("initial-exec")));

/* A trampoline's work around the program's handler fn, called with what
 * the kernel passed (sig, si, ucv: on x86-64 every handler gets the
 * siginfo and the ucontext, SA_SIGINFO or not, and programs use them;
 * elsewhere, whatever the registers held, as without us).  uc: the
 * context, when known; frame: the trampoline's. */
static inline __attribute__((always_inline)) void
tramp_run(int sig, siginfo_t *si, void *ucv, const ucontext_t *uc,
	  uintptr_t frame, info_handler fn)
{
	unsigned d = depth, token;
	bool alt, aborting;

	note_altstack(uc, d);
	alt = on_alt(frame);
	/* Not inside the outermost handler noted: it was left by
	 * siglongjmp, and so were those counted in depth. */
	if (d && !nested_in(frame, alt, entry_frame, entry_alt))
		d = 0;
	if (!d) {
		entry_frame = frame;
		entry_alt = alt;
	}
	depth = d + 1;
	token = note_enter(frame, alt, uc);
	aborting = sig == SIGABRT && abort_pending;
	if (aborting)
		abort_pending = false;
	if (fn)
		fn(sig, si, ucv);
	/* Returned inside abort: glibc's next step ends the process. */
	if (aborting)
		settle_owed();
	at_sigreturn(token, frame, uc);
	note_leave(token, frame);
	depth = d;
}

#if defined(__x86_64__)
#define PLAIN_CONTEXT()                                                        \
	plain_context(__builtin_return_address(0), __builtin_frame_address(0))
#else
#define PLAIN_CONTEXT() NULL
#endif

/* A plain handler (no SA_SIGINFO) is called with the same three
 * arguments: what it declares it reads, the rest it may read anyway. */
#define TRAMPOLINES(t)                                                         \
	static __attribute__((noinline)) void tramp_plain##t(                  \
		int sig, siginfo_t *si, void *ucv)                             \
	{                                                                      \
		if (sig <= 0 || sig >= NSIG)                                   \
			return;                                                \
		tramp_run(sig, si, ucv, PLAIN_CONTEXT(),                       \
			  (uintptr_t)__builtin_frame_address(0),               \
			  (info_handler)(void (*)(void))LOAD(                  \
				  &plain_fn[t][sig]));                         \
	}                                                                      \
	static __attribute__((noinline)) void tramp_info##t(                   \
		int sig, siginfo_t *si, void *ucv)                             \
	{                                                                      \
		if (sig <= 0 || sig >= NSIG)                                   \
			return;                                                \
		tramp_run(sig, si, ucv, ucv,                                   \
			  (uintptr_t)__builtin_frame_address(0),               \
			  LOAD(&info_fn[t][sig]));                             \
	}
TRAMPOLINES(0)
TRAMPOLINES(1)

#define AS_PLAIN(f) ((sm_sighandler_t)(void (*)(void))(f))

bool sm_in_handler(void)
{
	uintptr_t here = (uintptr_t)__builtin_frame_address(0);

	if (!depth)
		return false;
	/* On the alternate signal stack, a handler runs.  Outside the
	 * outermost handler's frame (above it on the normal stack, or off
	 * the alternate stack it ran on), it was left by siglongjmp.  (A
	 * frame deeper than a left one keeps the guess "in a handler": the
	 * ticker's start only waits.) */
	if (on_alt(here))
		return true;
	if (entry_alt || here > entry_frame) {
		depth = 0;
		return false;
	}
	return true;
}

SM_FORK_PATH
void sm_signals_after_fork(void)
{
	unsigned i;

	/* A child forked from inside a handler (PostgreSQL's postmaster
	 * starts some children so) is a process of its own: libc made its
	 * locks fresh, and a thread may start there.  The call its parent's
	 * handler interrupted is the parent's to count.  Each written only
	 * where set: a page a fork child writes is a copy (rawsys.h). */
	if (depth)
		depth = 0;
	for (i = 0; i < INTR_NOTES; i++)
		if (intr_notes[i].frame || intr_notes[i].pending)
			memset(&intr_notes[i], 0, sizeof(intr_notes[i]));
	/* Held, if at all, by a thread the child does not have. */
	if (__atomic_load_n(&install_lock, __ATOMIC_RELAXED))
		__atomic_store_n(&install_lock, 0, __ATOMIC_RELAXED);
}

int sm_query_action(int sig, struct sigaction *sa)
{
	return sm_real.sigaction(sig, NULL, sa);
}

static bool a_trampoline(sm_sighandler_t h)
{
	return h == AS_PLAIN(tramp_plain0) || h == AS_PLAIN(tramp_plain1) ||
	       h == AS_PLAIN(tramp_info0) || h == AS_PLAIN(tramp_info1);
}

bool sm_handler_ours(const struct sigaction *sa)
{
	return a_trampoline(sa->sa_handler);
}

/* The program's handlers of a signal, as they were before an install. */
struct handlers {
	sm_sighandler_t plain[2];
	info_handler info[2];
};

static void read_handlers(int sig, struct handlers *h)
{
	unsigned t;

	for (t = 0; t < 2; t++) {
		h->plain[t] = LOAD(&plain_fn[t][sig]);
		h->info[t] = LOAD(&info_fn[t][sig]);
	}
}

/* The kernel's handler k, as the program installed it. */
static sm_sighandler_t as_installed(sm_sighandler_t k, const struct handlers *h)
{
	if (k == AS_PLAIN(tramp_plain0))
		return h->plain[0];
	if (k == AS_PLAIN(tramp_plain1))
		return h->plain[1];
	if (k == AS_PLAIN(tramp_info0))
		return AS_PLAIN(h->info[0]);
	if (k == AS_PLAIN(tramp_info1))
		return AS_PLAIN(h->info[1]);
	return k;
}

static bool a_function(sm_sighandler_t h)
{
	return h != SIG_DFL && h != SIG_IGN && h != SIG_ERR && h != SIG_HOLD &&
	       !a_trampoline(h);
}

/* The program's handler fn goes into the table the kernel's current
 * action does not use; the trampoline of that table is what the kernel
 * gets.  *t: the table, for installed() once the kernel has it. */
static sm_sighandler_t staged(int sig, sm_sighandler_t fn, bool info,
			      unsigned *t)
{
	*t = !LOAD(&cur_tab[sig]);
	if (info) {
		STORE(&info_fn[*t][sig], (info_handler)(void (*)(void))fn);
		return *t ? AS_PLAIN(tramp_info1) : AS_PLAIN(tramp_info0);
	}
	STORE(&plain_fn[*t][sig], fn);
	return *t ? AS_PLAIN(tramp_plain1) : AS_PLAIN(tramp_plain0);
}

static void installed(int sig, unsigned t)
{
	STORE(&cur_tab[sig], (unsigned char)t);
}

/*
 * An install of a handler function (staged, the real call, installed) is
 * made whole: another thread's, or one from a handler that interrupts it,
 * would take the same spare table, and the kernel would end with one
 * install's mask and flags running the other's handler.  So every signal
 * is blocked on the calling thread (no handler of its can interrupt) and
 * a lock taken (the other threads wait for a few instructions and one
 * system call).  Not on a sandboxed thread (quiet.h), whose filter may
 * forbid rt_sigprocmask: the race stays there.  A fork child starts with
 * the lock free (sm_signals_after_fork).
 */
static bool install_begin(sigset_t *old)
{
	sigset_t all;

	if (sm_quiet())
		return false;
	sigfillset(&all);
	if (raw_sigmask(SIG_SETMASK, &all, old) != 0)
		return false;
	while (__atomic_exchange_n(&install_lock, 1, __ATOMIC_ACQUIRE))
		while (__atomic_load_n(&install_lock, __ATOMIC_RELAXED))
			sched_yield();
	return true;
}

static void install_end(bool locked, const sigset_t *old)
{
	if (!locked)
		return;
	__atomic_store_n(&install_lock, 0, __ATOMIC_RELEASE);
	raw_sigmask(SIG_SETMASK, old, NULL);
}

SM_EXPORT int sigaction(int sig, const struct sigaction *act,
			struct sigaction *old)
{
	bool valid = sig > 0 && sig < NSIG, ours = false;
	struct handlers before = { { 0 }, { 0 } };
	struct sigaction mine;
	unsigned t = 0;
	int r, saved;

	sigset_t mask;
	bool locked = false;

	if (valid && act && a_function(act->sa_handler))
		locked = install_begin(&mask);
	if (valid)
		read_handlers(sig, &before);
	if (valid && act && a_function(act->sa_handler)) {
		mine = *act;
		mine.sa_handler = staged(sig, act->sa_handler,
					 act->sa_flags & SA_SIGINFO, &t);
		act = &mine;
		ours = true;
	}
	r = sm_real.sigaction(sig, act, old);
	saved = errno;
	if (r == 0 && ours)
		installed(sig, t);
	install_end(locked, &mask);
	if (r == 0 && old && valid)
		old->sa_handler = as_installed(old->sa_handler, &before);
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
	struct handlers before;
	sm_sighandler_t r;
	unsigned t;
	int saved;

	if (!valid)
		return real(sig, handler);
	if (a_function(handler)) {
		sigset_t mask;
		/* Not for sigset, whose result and effect depend on the
		 * thread's mask (it unblocks sig, and says SIG_HOLD when
		 * sig was blocked): its install can race. */
		bool locked = real != sm_real.sigset && install_begin(&mask);

		read_handlers(sig, &before);
		r = real(sig, staged(sig, handler, false, &t));
		saved = errno;
		if (r != SIG_ERR)
			installed(sig, t);
		install_end(locked, &mask);
	} else {
		read_handlers(sig, &before);
		r = real(sig, handler);
		saved = errno;
	}
	r = as_installed(r, &before);
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

/* The calls that may let a signal that ends the process be delivered
 * (see before_delivery): pass-through unless the thread owes a call cut
 * short. */
SM_EXPORT int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
	if (set && owes_calls())
		mask_changing(how, set);
	return sm_real.sigprocmask(how, set, old);
}

SM_EXPORT int pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	if (set && owes_calls())
		mask_changing(how, set);
	return sm_real.pthread_sigmask(how, set, old);
}

SM_EXPORT int raise(int sig)
{
	/* glibc's raise refuses its own two signals (32, 33): EINVAL. */
	if (sig != 32 && sig != 33 && owes_calls())
		sent_here(sig);
	return sm_real.raise(sig);
}

SM_EXPORT int kill(pid_t pid, int sig)
{
	if (owes_calls())
		sent_to_process(pid, sig, true);
	return sm_real.kill(pid, sig);
}

SM_EXPORT int sigqueue(pid_t pid, int sig, const union sigval val)
{
	if (owes_calls())
		sent_to_process(pid, sig, false);
	return sm_real.sigqueue(pid, sig, val);
}

/* The mask is replaced while it waits: the pending signals it unblocks
 * are delivered at once. */
SM_EXPORT int sigsuspend(const sigset_t *set)
{
	const sigset_t *p = set;

	/* Declared nonnull, and NULL all the same is EFAULT, as ever: the
	 * compiler must not drop the check. */
	__asm__("" : "+r"(p));
	if (p && owes_calls())
		suspending(p);
	return sm_real.sigsuspend(set);
}

SM_EXPORT void abort(void)
{
	struct sigaction sa;

	if (owes_calls() && sm_query_action(SIGABRT, &sa) == 0) {
		if (sa.sa_handler == SIG_DFL || sa.sa_handler == SIG_IGN)
			settle_owed();
		else if (sm_handler_ours(&sa))
			abort_pending = true;
	}
	sm_real.abort();
	__builtin_unreachable();
}

void sm_signals_raw(long n, long a1, long a2, long a3, long a4)
{
	int saved;

	if (!owes_calls())
		return;
	saved = errno;
	switch (n) {
	/* The kernel reads pids and signals as int (a varargs int may
	 * arrive with its upper half unset). */
	case SYS_kill:
		sent_to_process((pid_t)a1, (int)a2, true);
		break;
	case SYS_rt_sigqueueinfo:
		sent_to_process((pid_t)a1, (int)a2, false);
		break;
	case SYS_tkill:
		sent_to_thread(0, (pid_t)a1, (int)a2);
		break;
	case SYS_tgkill:
	case SYS_rt_tgsigqueueinfo:
		sent_to_thread((pid_t)a1, (pid_t)a2, (int)a3);
		break;
	case SYS_rt_sigprocmask: {
		uint64_t m;
		sigset_t set;

		/* The kernel's set is 8 bytes: any other size fails. */
		if (a4 == 8 && read_set((const void *)a2, &m)) {
			memset(&set, 0, sizeof(set));
			memcpy(&set, &m, sizeof(m));
			mask_changing((int)a1, &set);
		}
		break;
	}
	case SYS_rt_sigsuspend:
		if (a2 == 8)
			suspending((const void *)a1);
		break;
	default:
		break;
	}
	errno = saved;
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

int unbound_sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
	int r;

	/* While dlsym is re-entered: as glibc, raw. */
	if (BOUND(sigprocmask))
		return sm_real.sigprocmask(how, set, old);
	r = raw_sigmask(how, set, old);
	if (r) {
		errno = r;
		return -1;
	}
	return 0;
}

int unbound_pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	if (BOUND(pthread_sigmask))
		return sm_real.pthread_sigmask(how, set, old);
	return raw_sigmask(how, set, old);
}

int unbound_raise(int sig)
{
	if (BOUND(raise))
		return sm_real.raise(sig);
	return (int)raw_syscall_libc(SYS_tgkill,
				     raw_syscall6(SYS_getpid, 0, 0, 0, 0, 0, 0),
				     raw_syscall6(SYS_gettid, 0, 0, 0, 0, 0, 0),
				     sig, 0, 0, 0);
}

int unbound_kill(pid_t pid, int sig)
{
	if (BOUND(kill))
		return sm_real.kill(pid, sig);
	return (int)raw_syscall_libc(SYS_kill, pid, sig, 0, 0, 0, 0);
}

/* While dlsym is re-entered (the stubs below): the raw system calls, with
 * glibc's results. */
int unbound_sigqueue(pid_t pid, int sig, const union sigval val)
{
	siginfo_t info;

	if (BOUND(sigqueue))
		return sm_real.sigqueue(pid, sig, val);
	memset(&info, 0, sizeof(info));
	info.si_signo = sig;
	info.si_code = SI_QUEUE;
	info.si_pid = (pid_t)raw_syscall6(SYS_getpid, 0, 0, 0, 0, 0, 0);
	info.si_uid = (uid_t)raw_syscall6(SYS_getuid, 0, 0, 0, 0, 0, 0);
	info.si_value = val;
	return (int)raw_syscall_libc(SYS_rt_sigqueueinfo, pid, sig,
				     (long)&info, 0, 0, 0);
}

int unbound_sigsuspend(const sigset_t *set)
{
	if (BOUND(sigsuspend))
		return sm_real.sigsuspend(set);
	return (int)raw_syscall_libc(SYS_rt_sigsuspend, (long)set, 8, 0, 0, 0,
				     0);
}

/* glibc's steps: SIGABRT unblocked and raised (a handler may run), then
 * its default action, and raised again. */
void unbound_abort(void)
{
	struct ksigaction dfl = {(void *)SIG_DFL, 0, NULL, ~0ull};
	uint64_t abrt = 1ull << (SIGABRT - 1);
	long pid, tid;

	if (BOUND(abort))
		sm_real.abort();
	pid = raw_syscall6(SYS_getpid, 0, 0, 0, 0, 0, 0);
	tid = raw_syscall6(SYS_gettid, 0, 0, 0, 0, 0, 0);
	raw_syscall6(SYS_rt_sigprocmask, SIG_UNBLOCK, (long)&abrt, 0, 8, 0, 0);
	raw_syscall6(SYS_tgkill, pid, tid, SIGABRT, 0, 0, 0);
	raw_syscall6(SYS_rt_sigaction, SIGABRT, (long)&dfl, 0, 8, 0, 0);
	raw_syscall6(SYS_tgkill, pid, tid, SIGABRT, 0, 0, 0);
	for (;;)
		raw_syscall6(SYS_exit_group, 127, 0, 0, 0, 0, 0);
}
#endif
