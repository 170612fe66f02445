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

bool sm_future_locked(void)
{
	return lockall_future() != 0;
}

/* An mlockall with MCL_FUTURE made before the library's start-up (a
 * library's constructor that runs before ours): its future part, kept
 * for the end of the start-up, so that the tables are not mapped locked
 * (a reviewer's: 387 MB locked, against 2.5 MB without the preload). */
static int pending_future;

void sm_mlock_started(void)
{
	int flags = pending_future;

	if (flags) {
		pending_future = 0;
		sm_mlockall(flags);
	}
}

static bool flags_valid(int flags)
{
	return flags && !(flags & ~(MCL_CURRENT | MCL_FUTURE | MCL_ONFAULT)) &&
	       flags != MCL_ONFAULT;
}

int sm_mlockall(int flags)
{
	struct lockall_set s = {.n = 0};
	int r;

	/* Before the start-up (pending_future): the current part now, the
	 * future part at its end. */
	if (!sm_started() && flags_valid(flags)) {
		int now = flags & ~MCL_FUTURE, err = lockall_permitted();

		/* What the kernel would refuse now is refused now. */
		if (err) {
			errno = -err;
			return -1;
		}
		r = now & MCL_CURRENT ? (int)raw_syscall_libc(SYS_mlockall, now,
							      0, 0, 0, 0, 0)
				      : 0;
		/* (One without MCL_FUTURE clears it, as the kernel's.) */
		if (r == 0)
			pending_future = flags & MCL_FUTURE ? flags : 0;
		return r;
	}
	/* A fork child's state file, made at its first tracked fd, would
	 * be mapped locked and faulted in whole once the future mappings
	 * are (a daemon that forks, locks, then opens its sockets:
	 * openvpn --mlock --daemon locked 166 MB against 13 without the
	 * preload, a reviewer's run): made now, before. */
	if ((flags & MCL_FUTURE) && flags_valid(flags) &&
	    sm_durable_file_wanted())
		sm_durable_make_file();
	/* The tables there are now (none in a process the library leaves
	 * alone, or before its start-up: then the kernel's call, as
	 * before; start-up makes it again for an MCL_FUTURE one). */
	if (sm_meter.tab.cap) {
		sm_durable_lazy_ranges(&s);
		meter_lazy_ranges(&sm_meter, &s);
	}
	lockall_normalize(&s, (size_t)sysconf(_SC_PAGESIZE));
	/* (Either notes the future flag before it lets a recovery scan
	 * go on.) */
	r = lockall_apply(flags, &s);
	if (r == LOCKALL_KERNEL)
		r = lockall_kernel(flags);
	if (r < 0) {
		errno = -r;
		r = -1;
	}
	return r;
}

int sm_munlockall(void)
{
	int r = (int)raw_syscall_libc(SYS_munlockall, 0, 0, 0, 0, 0, 0);

	if (r == 0) {
		lockall_note_future(0);
		/* One made before the start-up is undone with it. */
		pending_future = 0;
	}
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
