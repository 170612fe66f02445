/*
 * wrap_vfork.c - vfork and clone, counted: children that run on our
 * memory.
 *
 * A vfork child runs on our memory, and on the forking thread's TLS, until
 * it execs or exits, with an fd table of its own: its close or dup2 before
 * exec must not retire the parent's connections (t_vfork_spawn).  Telling
 * it apart takes a getpid() system call (sm_foreign_process).  That call
 * was made on every close and dup; now it is made only while such a child
 * may be running: sm_vm_children counts them, and a close in a process
 * that has none pays one load.
 *
 * Counted: vfork (here), libc's clone() with CLONE_VM or CLONE_VFORK
 * and without CLONE_THREAD (here), and the same through syscall()
 * (wrap_syscall.c, which also counts a child on a stack of its own).  A
 * vfork-like child (CLONE_VFORK) is counted until its parent runs again;
 * any other is counted for good: it may run as long as we do.
 * posix_spawn's child runs none of our code (libc's own clone, its
 * signals blocked, straight to exec): not counted.
 *
 * vfork cannot be a C wrapper: the child returns from it first, on the
 * parent's stack, and the frame it returned through would be the one the
 * parent returns through next.  glibc's vfork is a few instructions that
 * keep the return address in a register across the system call; ours is
 * the same with the count around it.  The count goes up before the call,
 * so the child runs counted, and down when the parent runs again (the
 * child has exec'd or exited by then) or at once when the call failed.  A
 * child that vforks in turn counts its own child the same way.  With a
 * shadow stack (x86 CET) the child returns by a jump, as glibc's does: the
 * shadow stack is the parent's.
 *
 * Only on x86-64: elsewhere the count starts at 1 and stays there (every
 * close and dup makes the getpid call, as before).  Sanitizer builds keep
 * it at 1 too: their runtimes make vfork a fork of their own.
 */
#include "preload.h"

#include <errno.h>
#include <sched.h>
#include <stdarg.h>

#if SM_COUNT_VFORK

int sm_vm_children;

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
	"	lock incl sm_vm_children(%rip)\n"
	/* The return address, in a register the kernel keeps. */
	"	popq %rdi\n"
	".cfi_adjust_cfa_offset -8\n"
	".cfi_register %rip, %rdi\n"
	"	movl $58, %eax\n" /* SYS_vfork */
	"	syscall\n"
	"	pushq %rdi\n"
	".cfi_adjust_cfa_offset 8\n"
	".cfi_rel_offset %rip, 0\n"
	"	testq %rax, %rax\n"
	"	jz 2f\n"
	/* The parent, running again: the child is gone (or none was made). */
	"	lock decl sm_vm_children(%rip)\n"
	"	cmpq $-4095, %rax\n"
	"	jae 3f\n"
	"	ret\n"
	/* The child: with a shadow stack in use, return by a jump. */
	"2:	xorl %esi, %esi\n"
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

int sm_vm_children = 1;

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

/*
 * libc's clone(): its child runs fn on a stack of its own, never through
 * this frame, so a C wrapper will do.  As syscall(SYS_clone) is treated
 * (wrap_syscall.c's cloning): a child on our memory (CLONE_VM) or a
 * vfork-like one is counted; a process of its own gets our fork handlers
 * (through cloned_child: the child starts in fn, not here) and is metered
 * as a fork child; a thread passes.
 */
SM_EXPORT int clone(int (*fn)(void *), void *stack, int flags, void *arg, ...)
{
	struct cloned c = {fn, arg};
	struct clone_rest x;
	int r, saved;

	CLONE_REST(x, arg);
	if ((flags & CLONE_THREAD) || !fn)
		return sm_real.clone(fn, stack, flags, arg, x.ptid, x.tls,
				     x.ctid);
	if (flags & (CLONE_VM | CLONE_VFORK)) {
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
