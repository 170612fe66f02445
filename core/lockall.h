/*
 * lockall.h - mlockall(MCL_CURRENT) made without the library's reserved
 * tables.
 *
 * The library's tables are reservations sized by the fd limit (the fd
 * slots, their side arrays, the close ring, the state file and the
 * addresses it is moved to), mostly never touched: address space, not
 * memory.  mlockall(MCL_CURRENT) locks every mapping of the process and
 * faults each one in whole, and a metered daemon that locks its memory
 * (chronyd -m, openvpn --mlock, keepalived, corosync, ntpd, mariadbd
 * --memlock) got every byte of them as locked memory: 48 MB at a hard
 * limit of 20,000 fds, 754 MB at systemd's 524,288, the state file's
 * share of it in /dev/shm, against about 2 MB of its own.  And the
 * kernel lets a process without CAP_IPC_LOCK lock everything only when
 * its whole address space fits RLIMIT_MEMLOCK: the tables' address space
 * made a call that worked without the library fail (ENOMEM).
 *
 * So the library's mlockall does what the kernel's does, for the
 * program's mappings only: the same checks (flags; RLIMIT_MEMLOCK against
 * the address space without the tables, unless CAP_IPC_LOCK), the future
 * part by the kernel itself (MCL_FUTURE), then every mapping that
 * /proc/self/maps lists, less the tables, locked by mlock (mlock2 with
 * MLOCK_ONFAULT for MCL_ONFAULT), errors of single mappings ignored as
 * mlockall ignores them.  Where it cannot (no /proc, a sandboxed thread,
 * no table mapped) the kernel's own call is made, as before.
 */
#ifndef SOCKMETER_LOCKALL_H
#define SOCKMETER_LOCKALL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct lockall_range {
	uintptr_t start, end; /* [start, end) */
};

#define LOCKALL_MAX 16

/* The tables to leave out: filled by the modules' *_lazy_ranges. */
struct lockall_set {
	struct lockall_range r[LOCKALL_MAX];
	size_t n;
};

/* lockall_add - [p, p + len) to s (nothing for a NULL p or a zero len;
 * dropped when s is full).  Context: any. */
void lockall_add(struct lockall_set *s, const void *p, size_t len);

/* lockall_normalize - s's ranges rounded out to whole pages of page
 * bytes, sorted, overlaps and neighbours merged.  Context: any. */
void lockall_normalize(struct lockall_set *s, size_t page);

/*
 * lockall_subtract - [start, end) less s's ranges (normalized): fn(a, b,
 * arg) for each piece [a, b) left, in order.  Returns the bytes of
 * [start, end) that s covers.  fn may be NULL (the count only).
 * Context: any.
 */
size_t lockall_subtract(uintptr_t start, uintptr_t end,
			const struct lockall_set *s,
			void (*fn)(uintptr_t, uintptr_t, void *), void *arg);

/*
 * lockall_maps_feed - a streaming reader of /proc/PID/maps text: feed
 * it bytes as they are read; fn(start, end, arg) for each line's range,
 * lines of the kernel's half (x86-64's [vsyscall]) left out.  A line
 * that does not start with "hex-hex" is passed over.  Context: any.
 */
struct lockall_maps {
	uintptr_t start, end;
	int field; /* 0: start, 1: end, 2: the rest of the line */
	bool digits, bad;
};

void lockall_maps_init(struct lockall_maps *p);
void lockall_maps_feed(struct lockall_maps *p, const char *buf, size_t n,
		       void (*fn)(uintptr_t, uintptr_t, void *), void *arg);

/* What lockall_apply returns when it cannot do the call itself: the
 * caller makes the kernel's mlockall. */
#define LOCKALL_KERNEL 1

/*
 * lockall_apply - mlockall(flags) without s's ranges (normalized), as
 * said above: 0, a negative errno (EINVAL, EPERM, ENOMEM, as the kernel's
 * call would give), or LOCKALL_KERNEL.  flags must hold MCL_CURRENT
 * (a call without it locks nothing that is there: the kernel's).  The
 * maps are read where the program cannot see the fd (progfd.h: the
 * child shares the memory, so its /proc/self/maps is ours and its
 * mlock locks ours).  Context: any thread, not a signal handler of a
 * thread in a vfork (progfd_run's).
 */
int lockall_apply(int flags, const struct lockall_set *s);

#endif
