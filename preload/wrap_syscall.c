/*
 * wrap_syscall.c - libc's syscall() function.
 *
 * Some programs make system calls through libc's syscall() rather than the
 * named wrappers: libuv (node) closes sockets with syscall(SYS_close, fd)
 * to avoid glibc's cancellation point.  Those calls get exactly what the
 * named wrappers give: the same accounting (sm_metered, sm_data) and the
 * same lifecycle hooks (sm_closing, sm_opened_*...), around libc's own
 * syscall(), so the call itself (no cancellation point, the raw kernel
 * interface) stays what the program asked for.  Every other number is a
 * bit test and a tail call to libc: its six arguments reach libc
 * untouched (see funcs_creds.h for why they are declared as seven longs).
 *
 * The library's own syscall() calls (the sink's raw writes...) never come
 * here: the link turns them into __wrap_syscall, which goes to libc.
 */
#include "preload.h"

#include "../core/rawsys.h"

#include <sys/resource.h>

#include <stdarg.h>
#include <sys/syscall.h>

#if SM_WRAP_SYSCALL

#include <fcntl.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <sys/prctl.h>

#ifdef SYS_dup2
#define SYS_IS_DUP2(n) ((n) == SYS_dup2)
#else
#define SYS_IS_DUP2(n) false
#endif

/* The numbers that get a named wrapper's treatment. */
/* clang-format off */
#ifdef SYS_dup2
#define SYS_LIST_DUP2(X, w) X(SYS_dup2, w)
#else
#define SYS_LIST_DUP2(X, w)
#endif
/* fork has a number of its own on x86-64 (not on AArch64, where libc
 * makes it with clone).  SYS_vfork is passed through: its child returns
 * on the parent's stack from syscall(), which C cannot survive (libc's
 * vfork() is assembly for that reason), and a wrapper's frames around it
 * would make that worse. */
#ifdef SYS_fork
#define SYS_LIST_FORK(X, w) X(SYS_fork, w)
#define SYS_IS_FORK(n) ((n) == SYS_fork)
#else
#define SYS_LIST_FORK(X, w)
#define SYS_IS_FORK(n) false
#endif
#define SYS_LIST(X, w)                                                         \
	X(SYS_read, w) X(SYS_write, w) X(SYS_readv, w) X(SYS_writev, w)        \
	X(SYS_sendto, w) X(SYS_recvfrom, w) X(SYS_sendmsg, w)                  \
	X(SYS_recvmsg, w) X(SYS_sendmmsg, w) X(SYS_recvmmsg, w)                \
	X(SYS_socket, w) X(SYS_socketpair, w) X(SYS_accept, w)                 \
	X(SYS_accept4, w) X(SYS_connect, w) X(SYS_bind, w) X(SYS_listen, w)   \
	X(SYS_close, w)                                                        \
	X(SYS_close_range, w) X(SYS_dup, w) X(SYS_dup3, w)                     \
	X(SYS_seccomp, w) X(SYS_prctl, w) X(SYS_chroot, w) X(SYS_capset, w)    \
	X(SYS_clone, w) X(SYS_clone3, w) X(SYS_exit_group, w) X(SYS_exit, w)  \
	X(SYS_pread64, w) X(SYS_pwrite64, w) X(SYS_preadv, w)                  \
	X(SYS_pwritev, w) X(SYS_preadv2, w) X(SYS_pwritev2, w)                 \
	X(SYS_sendfile, w) X(SYS_splice, w) X(SYS_tee, w) X(SYS_vmsplice, w)   \
	X(SYS_copy_file_range, w) X(SYS_fcntl, w)                              \
	X(SYS_kill, w) X(SYS_tkill, w) X(SYS_tgkill, w)                        \
	X(SYS_rt_sigqueueinfo, w) X(SYS_rt_tgsigqueueinfo, w)                  \
	X(SYS_rt_sigprocmask, w) X(SYS_rt_sigsuspend, w)                       \
	X(SYS_setuid, w) X(SYS_setreuid, w) X(SYS_setresuid, w)                \
	X(SYS_setrlimit, w) X(SYS_prlimit64, w)                                \
	X(SYS_execve, w) X(SYS_execveat, w)                                    \
	X(SYS_mlockall, w) X(SYS_munlockall, w)                                \
	SYS_LIST_DUP2(X, w) SYS_LIST_FORK(X, w)

/* A bitmap of those numbers, built at compile time: word w of it. */
#define SYS_BIT(nr, w) | ((nr) / 64 == (w) ? 1ull << ((nr) % 64) : 0ull)
#define SYS_WORD(w) (0ull SYS_LIST(SYS_BIT, w))
#define SYS_MAP_WORDS 8 /* numbers 0..511 */

static const uint64_t wrapped_map[SYS_MAP_WORDS] = {
	SYS_WORD(0), SYS_WORD(1), SYS_WORD(2), SYS_WORD(3),
	SYS_WORD(4), SYS_WORD(5), SYS_WORD(6), SYS_WORD(7),
};

#define SYS_FITS(nr, w) && (nr) < 64 * SYS_MAP_WORDS
_Static_assert(1 SYS_LIST(SYS_FITS, 0), "a system call number beyond the map");
/* clang-format on */

static inline bool wrapped(long n)
{
	unsigned long u = (unsigned long)n;

	return u < 64 * SYS_MAP_WORDS &&
	       ((wrapped_map[u / 64] >> (u % 64)) & 1);
}

long unbound_syscall(long n, long a1, long a2, long a3, long a4, long a5,
		     long a6)
{
	if (sm_bind() && sm_real.syscall != unbound_syscall)
		return sm_real.syscall(n, a1, a2, a3, a4, a5, a6);
	/* The moment dlsym re-enters us on this thread: the raw system
	 * call, -1 with errno set as libc's syscall() does. */
	return raw_syscall_libc(n, a1, a2, a3, a4, a5, a6);
}

/* A data call on fd a1: metered as its named wrapper meters it.  mmsg: the
 * return value counts messages, the bytes are in the vector (a2). */
static SM_METERED long data(long n, long a1, long a2, long a3, long a4, long a5,
			    long a6, enum fd_dir dir, bool mmsg)
{
	struct fd_slot *s;
	uint64_t t0;
	long r;

	if (!sm_metered((int)a1, &s))
		return sm_real.syscall(n, a1, a2, a3, a4, a5, a6);
	t0 = sm_start();
	r = sm_real.syscall(n, a1, a2, a3, a4, a5, a6);
	sm_data(s, dir,
		mmsg ? sm_mmsg_bytes((const struct mmsghdr *)a2, (int)r) : r,
		t0);
	return r;
}

/* A call that moves bytes from fd `in` straight into fd `out` inside the
 * kernel (sendfile, splice, copy_file_range; tee fills `out` only: in is
 * -1): each metered end, as the named wrappers count them. */
static SM_METERED long ends(long n, long a1, long a2, long a3, long a4, long a5,
			    long a6, int out, int in)
{
	struct sm_ends e;
	long r;

	if (!sm_ends_start(out, in, &e))
		return sm_real.syscall(n, a1, a2, a3, a4, a5, a6);
	r = sm_real.syscall(n, a1, a2, a3, a4, a5, a6);
	sm_ends_account(&e, r);
	return r;
}

/* SYS_sendfile through syscall(): in pieces, as the named wrapper. */
static ssize_t one_sendfile_sys(int out, int in, void *off, size_t n)
{
	return sm_real.syscall(SYS_sendfile, out, in, (long)off, (long)n, 0,
			       0);
}

static SM_METERED long sendfiling(long a1, long a2, long a3, long a4, long a5,
				  long a6)
{
	struct sm_ends e;

	if (!sm_ends_start((int)a1, (int)a2, &e))
		return sm_real.syscall(SYS_sendfile, a1, a2, a3, a4, a5, a6);
	return sm_sendfile_pieces(one_sendfile_sys, (int)a1, (int)a2,
				  (void *)a3, (size_t)a4, &e);
}

/* vmsplice, in the direction of the pipe end (a1), as wrap_splice.c. */
static SM_METERED long vmsplicing(long n, long a1, long a2, long a3, long a4,
				  long a5, long a6)
{
	struct fd_slot *s;
	enum fd_dir dir;
	uint64_t t0;
	long r;

	if (!sm_metered((int)a1, &s))
		return sm_real.syscall(n, a1, a2, a3, a4, a5, a6);
	dir = sm_vmsplice_dir((int)a1);
	t0 = sm_start();
	r = sm_real.syscall(n, a1, a2, a3, a4, a5, a6);
	sm_data(s, dir, r, t0);
	return r;
}

/* A chroot or a seccomp filter about to go on (sm_confine_begin).  The
 * kernel reads these arguments as int and unsigned int.  Calls that only
 * probe the kernel (libseccomp's: strict mode with flags, a NULL filter)
 * are passed on untouched. */
static long confining(long n, long a1, long a2, long a3, long a4, long a5,
		      long a6)
{
	enum sm_confine how = SM_CONFINE_THREAD;
	bool listener = false;
	int before, saved;
	long r;

	if (n == SYS_chroot) {
		how = SM_CONFINE_ROOT;
	} else if (n == SYS_capset ||
		   (n == SYS_prctl &&
		    sm_prctl_mirrored((int)a1, (unsigned long)a2))) {
		r = sm_real.syscall(n, a1, a2, a3, a4, a5, a6);
		if (r == 0 && (n != SYS_capset || (a1 && a2))) {
			const long a[4] = { a1, a2, a3, a4 };

			sm_creds_mirror(n, a);
		}
		return r;
	} else if (n == SYS_prctl) {
		if ((int)a1 != PR_SET_SECCOMP ||
		    ((int)a2 != SECCOMP_MODE_STRICT &&
		     ((int)a2 != SECCOMP_MODE_FILTER || a3 == 0)))
			return sm_real.syscall(n, a1, a2, a3, a4, a5, a6);
	} else {
		if (!(((unsigned)a1 == SECCOMP_SET_MODE_STRICT && a2 == 0 &&
		       a3 == 0) ||
		      ((unsigned)a1 == SECCOMP_SET_MODE_FILTER && a3 != 0)))
			return sm_real.syscall(n, a1, a2, a3, a4, a5, a6);
		if ((unsigned)a1 == SECCOMP_SET_MODE_FILTER &&
		    ((unsigned)a2 & SECCOMP_FILTER_FLAG_TSYNC))
			how = SM_CONFINE_ALL;
		/* With a listener, success is the listener's fd. */
		listener = (unsigned)a1 == SECCOMP_SET_MODE_FILTER &&
			   ((unsigned)a2 & SECCOMP_FILTER_FLAG_NEW_LISTENER);
	}
	before = sm_confine_begin(how);
	r = sm_real.syscall(n, a1, a2, a3, a4, a5, a6);
	saved = errno;
	if (n != SYS_chroot && (listener ? r >= 0 : r == 0))
		sm_confine_filter(n == SYS_prctl ? (int)a2 == SECCOMP_MODE_STRICT
						 : (unsigned)a1 ==
							   SECCOMP_SET_MODE_STRICT,
				  how == SM_CONFINE_ALL, (const void *)a3);
	sm_confine_end(how, before, listener ? r >= 0 : r == 0);
	errno = saved;
	return r;
}

/*
 * A raw clone that makes a process of its own (no CLONE_VM, no
 * CLONE_THREAD) and returns on the caller's stack: a fork without libc's
 * handlers, so ours run around it (sm_raw_fork) and the child is metered
 * as a fork child (vfork-like or not).  A child on our memory (CLONE_VM)
 * or one on a stack of its own (it never returns here, so no handler runs
 * in it) is counted (wrap_vfork.c): its pid tells it apart.  A thread
 * passes on untouched.  syscall(SYS_fork) is the clone fork() makes
 * (Mono's crash reporter forks so): before,
 * such a child passed for its parent, and its exec marked the parent's
 * state file final, or its exit removed it, so that a kill of the parent
 * then lost every number without a word.
 */
static long cloning(long n, long a1, long a2, long a3, long a4, long a5,
		    long a6)
{
	const struct clone_args *ca = (const struct clone_args *)a1;
	unsigned long flags;
	bool own_stack;
	long r;
	int saved;

	if (SYS_IS_FORK(n)) {
		flags = SIGCHLD;
		own_stack = false;
	} else if (n == SYS_clone) {
		flags = (unsigned long)a1;
		own_stack = a2 != 0;
	} else {
		/* A bad pointer fails the call with EFAULT, untouched by us
		 * where it can be told without a system call (README,
		 * Limits). */
		if (!sm_ptr_plausible(ca, _Alignof(struct clone_args)) ||
		    (size_t)a2 < sizeof(ca->flags) + 6 * sizeof(uint64_t))
			return sm_real.syscall(n, a1, a2, a3, a4, a5, a6);
		flags = (unsigned long)ca->flags;
		own_stack = ca->stack != 0;
	}
	if (flags & CLONE_THREAD)
		return sm_real.syscall(n, a1, a2, a3, a4, a5, a6);
	if ((flags & CLONE_VM) || own_stack) {
		/* A child on our memory, or one that runs none of our
		 * handlers (on a stack of its own): counted (wrap_vfork.c),
		 * so that its pid tells it apart. */
		sm_vm_child_begin();
		r = sm_real.syscall(n, a1, a2, a3, a4, a5, a6);
		sm_vm_child_end(r, flags & CLONE_VFORK);
		return r;
	}
	sm_raw_fork(SM_RAW_FORK_PREPARE);
	r = sm_real.syscall(n, a1, a2, a3, a4, a5, a6);
	saved = errno;
	sm_raw_fork(r == 0 ? SM_RAW_FORK_CHILD : SM_RAW_FORK_PARENT);
	errno = saved;
	return r;
}

/* The named wrappers' lifecycle hooks, after (or for close, before) the
 * real call, on the same conditions. */
static SM_METERED long lifecycle(long n, long a1, long a2, long a3, long a4,
				 long a5, long a6)
{
	long r;
	int saved;

	switch (n) {
	case SYS_kill:
	case SYS_tkill:
	case SYS_tgkill:
	case SYS_rt_sigqueueinfo:
	case SYS_rt_tgsigqueueinfo:
	case SYS_rt_sigprocmask:
	case SYS_rt_sigsuspend:
		/* As kill, raise, sigqueue, sigprocmask, sigsuspend: a call a
		 * handler cut short is counted before they end the process. */
		sm_signals_raw(n, a1, a2, a3, a4);
		return sm_real.syscall(n, a1, a2, a3, a4, a5, a6);
	default:
		break;
	}
	if (n == SYS_mlockall)
		/* Without the library's tables, as mlockall(). */
		return sm_mlockall((int)a1);
	if (n == SYS_munlockall)
		return sm_munlockall();
	if (n == SYS_exit) {
		/* A thread's end; its status is the process's if it is the
		 * last (the ticker ends the process then). */
		sm_raw_thread_exit(a1);
		return sm_real.syscall(n, a1, a2, a3, a4, a5, a6);
	}
	if (n == SYS_exit_group) {
		/* The process ends here, as at _exit: its exit record. */
		sm_final_record(false);
		return sm_real.syscall(n, a1, a2, a3, a4, a5, a6);
	} else if (n == SYS_close)
		/* Retire first, as close() does. */
		sm_closing((int)a1);
	else if (n == SYS_close_range)
		/* Retire first, as close_range() does. */
		sm_close_range_begins((unsigned)a1, (unsigned)a2, (int)a3);
	else if (SYS_IS_DUP2(n) || n == SYS_dup3)
		/* Its close of a2, as dup2() and dup3() make it. */
		sm_dup_closing((int)a1, (int)a2, n == SYS_dup3 ? (int)a3 : 0);
	else if (n == SYS_seccomp || n == SYS_prctl || n == SYS_chroot ||
		 n == SYS_capset)
		return confining(n, a1, a2, a3, a4, a5, a6);
	else if (n == SYS_clone || n == SYS_clone3 || SYS_IS_FORK(n))
		return cloning(n, a1, a2, a3, a4, a5, a6);
	else if (n == SYS_execve || n == SYS_execveat)
		/* The exec record, as execve() writes it. */
		return sm_syscall_exec(n, a1, a2, a3, a4, a5, a6);
	else if (n == SYS_setrlimit || n == SYS_prlimit64) {
		/* A limit on tasks may forbid the ticker from now on.  Then
		 * passed on: nothing of the return value is an fd. */
		if (n == SYS_setrlimit && (int)a1 == RLIMIT_NPROC)
			sm_tasks_limiting(0, (int)a1, (const void *)a2);
		else if (n == SYS_prlimit64 && (int)a2 == RLIMIT_NPROC)
			sm_tasks_limiting((pid_t)a1, (int)a2, (const void *)a3);
		return sm_real.syscall(n, a1, a2, a3, a4, a5, a6);
	} else if (((n == SYS_setuid && (uid_t)a1 != 0) ||
		  ((n == SYS_setreuid || n == SYS_setresuid) &&
		   (uid_t)a2 != 0 && (uid_t)a2 != (uid_t)-1)) &&
		 (uid_t)(n == SYS_setuid ? a1 : a2) != geteuid())
		/* Not followed (one thread only), but the state file must
		 * not be trusted after it: see sm_durable_mark_exposed. */
		sm_durable_mark_exposed();
	r = sm_real.syscall(n, a1, a2, a3, a4, a5, a6);
	saved = errno;
	switch (n) {
	case SYS_close:
		progfd_await((unsigned)a1, (unsigned)a1);
		break;
	case SYS_close_range:
		progfd_await((unsigned)a1, (unsigned)a2);
		break;
	case SYS_socket:
		if (r >= 0)
			sm_opened_socket((int)r, (int)a1, (int)a2, (int)a3);
		break;
	case SYS_socketpair:
		if (r == 0) {
			sm_opened_socket(((int *)a4)[0], (int)a1, (int)a2,
					 (int)a3);
			sm_opened_socket(((int *)a4)[1], (int)a1, (int)a2,
					 (int)a3);
		}
		break;
	case SYS_accept:
	case SYS_accept4:
		if (r >= 0)
			sm_opened_accept((int)a1, (int)r, NULL);
		break;
	case SYS_connect:
		if (sm_connect_tried((int)r, saved))
			sm_connected((int)a1, (const struct sockaddr *)a2,
				     (socklen_t)a3);
		break;
	case SYS_bind:
		if (r == 0)
			sm_bound((int)a1);
		break;
	case SYS_listen:
		if (r == 0)
			sm_listening((int)a1);
		break;
	case SYS_fcntl: /* a new fd only from the dup commands */
		if (r >= 0 &&
		    ((int)a2 == F_DUPFD || (int)a2 == F_DUPFD_CLOEXEC))
			sm_opened_dup((int)a1, (int)r);
		break;
	default: /* dup, dup2, dup3 */
		if (n != SYS_dup)
			progfd_await((unsigned)a2, (unsigned)a2);
		if (r >= 0)
			sm_opened_dup((int)a1, (int)r);
		break;
	}
	errno = saved;
	return r;
}

static SM_METERED long dispatch(long n, long a1, long a2, long a3, long a4,
				long a5, long a6)
{
	/* A child on a TLS of its own (sm_tls_foreign): Chromium's chroot
	 * helper makes its chroot this way. */
	if (sm_tls_foreign())
		return sm_real.syscall(n, a1, a2, a3, a4, a5, a6);
	switch (n) {
	case SYS_read:
	case SYS_readv:
		return data(n, a1, a2, a3, a4, a5, a6, DIR_IN, false);
	case SYS_write:
	case SYS_writev:
	case SYS_sendto:
	case SYS_sendmsg:
		return data(n, a1, a2, a3, a4, a5, a6, DIR_OUT, false);
	case SYS_recvfrom: /* SM_RECV_NO_DATA: no data from the peer */
		if (a4 & SM_RECV_NO_DATA)
			break;
		return data(n, a1, a2, a3, a4, a5, a6, DIR_IN, false);
	case SYS_recvmsg:
		if (a3 & SM_RECV_NO_DATA)
			break;
		return data(n, a1, a2, a3, a4, a5, a6, DIR_IN, false);
	case SYS_sendmmsg:
		return data(n, a1, a2, a3, a4, a5, a6, DIR_OUT, true);
	case SYS_pread64:
	case SYS_preadv:
	case SYS_preadv2:
		return data(n, a1, a2, a3, a4, a5, a6, DIR_IN, false);
	case SYS_pwrite64:
	case SYS_pwritev:
	case SYS_pwritev2:
		return data(n, a1, a2, a3, a4, a5, a6, DIR_OUT, false);
	case SYS_sendfile:
		return sendfiling(a1, a2, a3, a4, a5, a6);
	case SYS_splice:
	case SYS_copy_file_range:
		return ends(n, a1, a2, a3, a4, a5, a6, (int)a3, (int)a1);
	case SYS_tee:
		return ends(n, a1, a2, a3, a4, a5, a6, (int)a2, -1);
	case SYS_vmsplice:
		return vmsplicing(n, a1, a2, a3, a4, a5, a6);
	case SYS_recvmmsg:
		if (a4 & SM_RECV_NO_DATA)
			break;
		return data(n, a1, a2, a3, a4, a5, a6, DIR_IN, true);
	default:
		return lifecycle(n, a1, a2, a3, a4, a5, a6);
	}
	return sm_real.syscall(n, a1, a2, a3, a4, a5, a6);
}

/* The exported syscall(): declared with seven longs (see funcs_creds.h),
 * which is how a variadic call lays its arguments out on these ABIs. */
SM_EXPORT long sm_syscall(long n, long a1, long a2, long a3, long a4, long a5,
			  long a6) __asm__("syscall");

long sm_syscall(long n, long a1, long a2, long a3, long a4, long a5, long a6)
{
	if (SM_LIKELY(!wrapped(n)))
		return sm_real.syscall(n, a1, a2, a3, a4, a5, a6);
	return dispatch(n, a1, a2, a3, a4, a5, a6);
}

long __wrap_syscall(long n, ...)
{
	va_list ap;
	long a[6];
	int i;

	va_start(ap, n);
	for (i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	return sm_real.syscall(n, a[0], a[1], a[2], a[3], a[4], a[5]);
}

#else /* no syscall() interposition on this ABI */

long __real_syscall(long n, ...);

long __wrap_syscall(long n, ...)
{
	va_list ap;
	long a[6];
	int i;

	va_start(ap, n);
	for (i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	return __real_syscall(n, a[0], a[1], a[2], a[3], a[4], a[5]);
}

#endif
