/*
 * wrap_vfork.c - vfork and clone: children that run on our memory.
 *
 * A vfork child runs on our memory, and on the forking thread's TLS, until
 * it execs or exits, with an fd table of its own: its close, dup2, socket
 * or accept before exec must not touch the parent's slots (t_vfork_spawn).
 * Telling it apart took a getpid() system call on every close and dup; now
 * a vfork child is marked: sm_vfork_child, a TLS word of the thread that
 * called vfork, which the child runs on.  One TLS load, no system call,
 * and the parent's other threads are never mistaken for the child.
 *
 * Marked: vfork (here), and libc's clone() with CLONE_VM and CLONE_VFORK
 * but not CLONE_SETTLS (here: its child starts in our function, on the
 * caller's TLS).  Counted in sm_vm_children instead, and told apart by
 * their pid while the count is not zero (preload.h's sm_foreign_process):
 * any other child on our memory (CLONE_VM without CLONE_THREAD, through
 * clone() or syscall()), and a child of syscall(SYS_clone*) on a stack of
 * its own.  A vfork-like one is counted until its parent runs again; any
 * other for good: it may run as long as we do.  posix_spawn's child runs
 * none of our code (libc's own clone, its signals blocked, straight to
 * exec).
 *
 * vfork cannot be a C wrapper: the child returns from it first, on the
 * parent's stack, and the frame it returned through would be the one the
 * parent returns through next.  glibc's vfork is a few instructions that
 * keep the return address in a register across the system call; ours is
 * the same with the mark around it: the child sets it, the parent, once
 * it runs again (the child has exec'd or exited by then), puts back what
 * it was (1 in a vfork child that vforks in turn).  With a shadow stack
 * (x86 CET) the child returns by a jump, as glibc's does: the shadow stack
 * is the parent's.
 *
 * Only on x86-64: elsewhere the count starts at 1 and stays there (every
 * close and dup makes the getpid call, as before).  Sanitizer builds keep
 * it at 1 too: their runtimes make vfork a fork of their own.
 */
#include "preload.h"

#include <errno.h>
#include <sched.h>
#include <stdarg.h>

__thread int sm_vfork_child __attribute__((tls_model("initial-exec")));

#if SM_COUNT_VFORK

int sm_vm_children SM_FORK_DATA;

/* The failed vfork's tail: errno, and -1 to the caller. */
int sm_vfork_failed(int err);
int sm_vfork_failed(int err)
{
	errno = err;
	return -1;
}

/* clang-format off */
__asm__(
	".text\n"
	".globl vfork\n"
	".type vfork, @function\n"
	".globl __vfork\n"
	".type __vfork, @function\n"
	".p2align 4\n"
	"vfork:\n"
	"__vfork:\n"
	".cfi_startproc\n"
	"	endbr64\n"
	/* The mark as it is, in a register the kernel keeps (rsi). */
	"	movq sm_vfork_child@gottpoff(%rip), %rdx\n"
	"	movl %fs:(%rdx), %esi\n"
	/* The return address, in another (rdi). */
	"	popq %rdi\n"
	".cfi_adjust_cfa_offset -8\n"
	".cfi_register %rip, %rdi\n"
	"	movl $58, %eax\n" /* SYS_vfork */
	"	syscall\n"
	"	pushq %rdi\n"
	".cfi_adjust_cfa_offset 8\n"
	".cfi_rel_offset %rip, 0\n"
	"	movq sm_vfork_child@gottpoff(%rip), %rdx\n"
	"	testq %rax, %rax\n"
	"	jz 2f\n"
	/* The parent, running again (the child is gone, or none was
	 * made): the mark as it was. */
	"	movl %esi, %fs:(%rdx)\n"
	"	cmpq $-4095, %rax\n"
	"	jae 3f\n"
	"	ret\n"
	/* The child: marked; with a shadow stack in use, return by a
	 * jump. */
	"2:	movl $1, %fs:(%rdx)\n"
	"	xorl %esi, %esi\n"
	"	rdsspq %rsi\n"
	"	testq %rsi, %rsi\n"
	"	jz 1f\n"
	"	popq %rdi\n"
	".cfi_adjust_cfa_offset -8\n"
	"	jmp *%rdi\n"
	".cfi_adjust_cfa_offset 8\n"
	"1:	ret\n"
	"3:	negl %eax\n"
	"	movl %eax, %edi\n"
	"	jmp sm_vfork_failed\n"
	".cfi_endproc\n"
	".size vfork, .-vfork\n"
	".size __vfork, .-vfork\n");
/* clang-format on */

#else

int sm_vm_children SM_FORK_DATA = 1;

#endif

/* A fork-like clone()'s child: our fork handlers, then the program's
 * function.  ctx is the child's copy of the parent's frame. */
struct cloned {
	int (*fn)(void *);
	void *arg;
};

static int cloned_child(void *p)
{
	const struct cloned *c = p;

	sm_raw_fork(SM_RAW_FORK_CHILD);
	return c->fn(c->arg);
}

/* clone()'s three optional arguments, read whether given or not, as
 * libc's own code reads them. */
struct clone_rest {
	pid_t *ptid;
	void *tls;
	pid_t *ctid;
};

#define CLONE_REST(rest, last)                                                 \
	do {                                                                   \
		va_list ap_;                                                   \
		va_start(ap_, last);                                           \
		(rest).ptid = va_arg(ap_, pid_t *);                            \
		(rest).tls = va_arg(ap_, void *);                              \
		(rest).ctid = va_arg(ap_, pid_t *);                            \
		va_end(ap_);                                                   \
	} while (0)

/* A vfork-like clone()'s child on our memory and our TLS: marked as a
 * vfork child (the parent puts the mark back), then the program's
 * function. */
static int marked_child(void *p)
{
	const struct cloned *c = p;

	sm_vfork_child = 1;
	return c->fn(c->arg);
}

/*
 * libc's clone(): its child runs fn on a stack of its own, never through
 * this frame, so a C wrapper will do.  A thread passes.  A vfork-like
 * child on our memory and TLS is marked (marked_child); any other child
 * on our memory is counted.  A process of its own (no CLONE_VM, with or
 * without CLONE_VFORK) gets our fork handlers, as syscall(SYS_clone)'s
 * does (wrap_syscall.c's cloning), through cloned_child: it starts in fn,
 * not here.  It is then metered as a fork child.
 */
SM_EXPORT int clone(int (*fn)(void *), void *stack, int flags, void *arg, ...)
{
	struct cloned c = {fn, arg};
	struct clone_rest x;
	int r, saved, mark;

	CLONE_REST(x, arg);
	if ((flags & CLONE_THREAD) || !fn || sm_tls_foreign())
		return sm_real.clone(fn, stack, flags, arg, x.ptid, x.tls,
				     x.ctid);
	if (SM_COUNT_VFORK && (flags & CLONE_VM) && (flags & CLONE_VFORK) &&
	    !(flags & CLONE_SETTLS)) {
		mark = sm_vfork_child;
		r = sm_real.clone(marked_child, stack, flags, &c, x.ptid,
				  x.tls, x.ctid);
		sm_vfork_child = mark;
		return r;
	}
	if (flags & CLONE_VM) {
		sm_vm_child_begin();
		r = sm_real.clone(fn, stack, flags, arg, x.ptid, x.tls, x.ctid);
		sm_vm_child_end(r, flags & CLONE_VFORK);
		return r;
	}
	sm_raw_fork(SM_RAW_FORK_PREPARE);
	r = sm_real.clone(cloned_child, stack, flags, &c, x.ptid, x.tls,
			  x.ctid);
	saved = errno;
	sm_raw_fork(SM_RAW_FORK_PARENT);
	errno = saved;
	return r;
}

/* The library's own clone() calls (core/progfd.c's helper child, whose
 * code calls none of our wrappers) never come to the wrapper above: the
 * link turns them into __wrap_clone (Makefile), which goes to libc's. */
int __wrap_clone(int (*fn)(void *), void *stack, int flags, void *arg, ...);
int __wrap_clone(int (*fn)(void *), void *stack, int flags, void *arg, ...)
{
	struct clone_rest x;

	CLONE_REST(x, arg);
	return sm_real.clone(fn, stack, flags, arg, x.ptid, x.tls, x.ctid);
}

int unbound_clone(int (*fn)(void *), void *stack, int flags, void *arg, ...)
{
	struct clone_rest x;

	CLONE_REST(x, arg);
	if (sm_bind() && sm_real.clone != unbound_clone)
		return sm_real.clone(fn, stack, flags, arg, x.ptid, x.tls,
				     x.ctid);
	errno = ENOSYS;
	return -1;
}
