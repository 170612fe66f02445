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

/* The tables to leave out: filled by the modules' *_lazy_ranges; and
 * the state file, every mapping of which is the library's (what is left
 * of its first mapping once the head and chunks moved out: the holes
 * moving leaves are the kernel's to give to the program's next
 * mappings, so the range it had is no guide). */
struct lockall_set {
	struct lockall_range r[LOCKALL_MAX];
	size_t n;
	uint32_t file_major, file_minor;
	uint64_t file_ino; /* 0: none */
};

/* lockall_add - [p, p + len) to s (nothing for a NULL p or a zero len;
 * dropped when s is full).  Inline: the modules that list their tables
 * need nothing else of lockall.c (the fuzzing harnesses link a few of
 * them alone).  Context: any. */
static inline void lockall_add(struct lockall_set *s, const void *p,
			       size_t len)
{
	if (!p || !len || s->n >= LOCKALL_MAX)
		return;
	s->r[s->n].start = (uintptr_t)p;
	s->r[s->n].end = (uintptr_t)p + len;
	s->n++;
}

/* lockall_add_file - every mapping of the file dev/ino (a stat's) to s.
 * Context: any. */
void lockall_add_file(struct lockall_set *s, uint64_t dev, uint64_t ino);

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
 * lockall_maps_feed - a streaming reader of /proc/PID/maps text: feed it
 * bytes as they are read; fn(vma, arg) for each line (its range, and the
 * device and inode of the file it maps, 0 for none), lines of the
 * kernel's half (x86-64's [vsyscall]) left out.  A line that does not
 * start with "hex-hex " is passed over.  lockall_ours: whether vma maps
 * s's file.  Context: any.
 */
struct lockall_vma {
	uintptr_t start, end;
	uint32_t dev_major, dev_minor;
	uint64_t inode;
};

struct lockall_maps {
	char line[128]; /* a line up to its path */
	size_t len;
};

void lockall_maps_init(struct lockall_maps *p);
void lockall_maps_feed(struct lockall_maps *p, const char *buf, size_t n,
		       void (*fn)(const struct lockall_vma *, void *),
		       void *arg);
bool lockall_ours(const struct lockall_set *s, const struct lockall_vma *v);

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

/*
 * lockall_kernel - the kernel's own mlockall(flags), the future flag noted,
 * while no recovery image is mapped (as lockall_apply): 0 or -errno.
 * lockall_permitted - the kernel's can_do_mlock: -EPERM at a limit of 0
 * without CAP_IPC_LOCK, else 0 (also when it cannot tell).
 * Context: as lockall_apply.
 */
int lockall_kernel(int flags);
int lockall_permitted(void);

/*
 * lockall_note_future - the process asked for its future mappings to be
 * locked (flags with MCL_FUTURE: kept) or not (else: forgotten); what
 * lockall_future returns (the flags, 0 for none).  The preload's
 * mlockall and munlockall say it; lockall_apply reads it.  Context: any.
 */
void lockall_note_future(int flags);
int lockall_future(void);

/* lockall_forked - in a fork child, whose future mappings are not locked
 * (the kernel does not pass MCL_FUTURE on): none noted, the scratch lock
 * free.  Context: a fork child. */
void lockall_forked(void);

/*
 * lockall_scratch_begin, lockall_scratch_end - around each file of the
 * ticker's recovery scan, which maps an image as big as the file (150 MB
 * at 262,144 fds) and buffers: an mlockall made meanwhile waits for them
 * to be gone, rather than locking them whole (and counting them against
 * RLIMIT_MEMLOCK: ENOMEM where the program fits).  begin is false, and
 * takes nothing, once the future mappings are locked: the scan stops
 * there (the image would be locked at its mapping).  Context: the ticker.
 */
bool lockall_scratch_begin(void);
void lockall_scratch_end(void);

#endif
