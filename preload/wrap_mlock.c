/*
 * wrap_mlock.c - mlockall and munlockall: the program's memory locked, not
 * the library's reserved tables (core/lockall.h says why and how).
 *
 * Both are made with the raw system call, as glibc makes them (no real
 * function to look up); syscall(SYS_mlockall) and syscall(SYS_munlockall)
 * come here too (wrap_syscall.c).  mlock, mlock2 and munlock name the
 * program's own ranges and pass through untouched.
 */
#include "preload.h"
#include "../core/lockall.h"
#include "../core/rawsys.h"

#include <errno.h>
#include <sys/mman.h>
#include <sys/syscall.h>

/* The process (by pid: a fork child's future mappings are not locked, as
 * the kernel does not pass MCL_FUTURE on) whose future mappings are
 * locked by its mlockall(MCL_FUTURE), 0 when none. */
static long future_pid;

bool sm_future_locked(void)
{
	long p = __atomic_load_n(&future_pid, __ATOMIC_ACQUIRE);

	return p != 0 && p == raw_getpid();
}

static void note_future(int flags)
{
	__atomic_store_n(&future_pid, (flags & MCL_FUTURE) ? raw_getpid() : 0,
			 __ATOMIC_RELEASE);
}

int sm_mlockall(int flags)
{
	struct lockall_set s = {.n = 0};
	int r;

	/* The tables there are now (none in a process the library leaves
	 * alone: then the kernel's call, as before). */
	if (sm_meter.tab.cap) {
		sm_durable_lazy_ranges(&s);
		meter_lazy_ranges(&sm_meter, &s);
	}
	lockall_normalize(&s, (size_t)sysconf(_SC_PAGESIZE));
	r = lockall_apply(flags, &s);
	if (r == LOCKALL_KERNEL)
		r = (int)raw_syscall_libc(SYS_mlockall, flags, 0, 0, 0, 0, 0);
	else if (r < 0) {
		errno = -r;
		r = -1;
	}
	if (r == 0)
		note_future(flags);
	return r;
}

int sm_munlockall(void)
{
	int r = (int)raw_syscall_libc(SYS_munlockall, 0, 0, 0, 0, 0, 0);

	if (r == 0)
		note_future(0);
	return r;
}

SM_EXPORT int mlockall(int flags)
{
	return sm_mlockall(flags);
}

SM_EXPORT int munlockall(void)
{
	return sm_munlockall();
}
