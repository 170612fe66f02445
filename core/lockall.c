/*
 * lockall.c - mlockall(MCL_CURRENT) without the library's reserved tables
 * (contract in lockall.h).
 */
#include "lockall.h"
#include "progfd.h"
#include "quiet.h"
#include "rawsys.h"

#include <errno.h>
#include <time.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* The initial user namespace's inode (the kernel's PROC_USER_INIT_INO):
 * the kernel's mlock asks capable(CAP_IPC_LOCK) there. */
#define USER_NS_INIT 0xEFFFFFFDu
#ifndef CAP_IPC_LOCK
#define CAP_IPC_LOCK 14
#endif
#ifndef MCL_ONFAULT
#define MCL_ONFAULT 4
#endif
#ifndef MLOCK_ONFAULT
#define MLOCK_ONFAULT 1
#endif

void lockall_add_file(struct lockall_set *s, uint64_t dev, uint64_t ino)
{
	s->file_major = major((dev_t)dev);
	s->file_minor = minor((dev_t)dev);
	s->file_ino = ino;
}

void lockall_normalize(struct lockall_set *s, size_t page)
{
	size_t i, j, out = 0;

	for (i = 0; i < s->n; i++) {
		s->r[i].start &= ~(uintptr_t)(page - 1);
		s->r[i].end = (s->r[i].end + page - 1) & ~(uintptr_t)(page - 1);
	}
	/* Insertion sort: a dozen ranges at most. */
	for (i = 1; i < s->n; i++) {
		struct lockall_range v = s->r[i];

		for (j = i; j > 0 && s->r[j - 1].start > v.start; j--)
			s->r[j] = s->r[j - 1];
		s->r[j] = v;
	}
	for (i = 0; i < s->n; i++) {
		if (out > 0 && s->r[i].start <= s->r[out - 1].end) {
			if (s->r[i].end > s->r[out - 1].end)
				s->r[out - 1].end = s->r[i].end;
			continue;
		}
		s->r[out++] = s->r[i];
	}
	s->n = out;
}

size_t lockall_subtract(uintptr_t start, uintptr_t end,
			const struct lockall_set *s,
			void (*fn)(uintptr_t, uintptr_t, void *), void *arg)
{
	uintptr_t at = start;
	size_t i, covered = 0;

	for (i = 0; i < s->n && at < end; i++) {
		uintptr_t a = s->r[i].start, b = s->r[i].end;

		if (b <= at)
			continue;
		if (a >= end)
			break;
		if (a > at && fn)
			fn(at, a, arg);
		if (a < at)
			a = at;
		if (b > end)
			b = end;
		covered += b - a;
		at = b;
	}
	if (at < end && fn)
		fn(at, end, arg);
	return covered;
}

void lockall_maps_init(struct lockall_maps *p)
{
	p->len = 0;
}

static int hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* A number in base 16 or 10 at *q, up to a character that is not a
 * digit; false when there is none or it overflows. */
static bool number(const char **q, int base, uint64_t *v)
{
	const char *at = *q;
	int d;

	*v = 0;
	for (; (d = base == 16 ? hex_value(*at)
			       : (*at >= '0' && *at <= '9' ? *at - '0' : -1)) >= 0;
	     at++) {
		if (*v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base)
			return false;
		*v = *v * (uint64_t)base + (uint64_t)d;
	}
	if (at == *q)
		return false;
	*q = at;
	return true;
}

/* "start-end perms offset major:minor inode path": the range, and the
 * file's identity where the line has one whole. */
static bool parse_line(const char *l, struct lockall_vma *v)
{
	uint64_t a, b, maj, min, ino;
	int f;

	if (!number(&l, 16, &a) || *l++ != '-' || !number(&l, 16, &b) ||
	    *l != ' ' || b <= a)
		return false;
	v->start = (uintptr_t)a;
	v->end = (uintptr_t)b;
	v->dev_major = v->dev_minor = 0;
	v->inode = 0;
	for (f = 0; f < 2; f++) { /* perms, offset */
		while (*l == ' ')
			l++;
		while (*l && *l != ' ')
			l++;
	}
	while (*l == ' ')
		l++;
	if (number(&l, 16, &maj) && *l++ == ':' && number(&l, 16, &min) &&
	    *l++ == ' ' && number(&l, 10, &ino)) {
		v->dev_major = (uint32_t)maj;
		v->dev_minor = (uint32_t)min;
		v->inode = ino;
	}
	return true;
}

void lockall_maps_feed(struct lockall_maps *p, const char *buf, size_t n,
		       void (*fn)(const struct lockall_vma *, void *),
		       void *arg)
{
	struct lockall_vma v;
	size_t i;

	for (i = 0; i < n; i++) {
		if (buf[i] != '\n') {
			/* What comes before the path fits; the rest is
			 * passed over. */
			if (p->len < sizeof(p->line) - 1)
				p->line[p->len++] = buf[i];
			continue;
		}
		p->line[p->len] = '\0';
		p->len = 0;
		/* The kernel's half (x86-64's [vsyscall] gate) is no
		 * mapping of the process's own. */
		if (parse_line(p->line, &v) &&
		    v.start < ((uintptr_t)1 << (sizeof(uintptr_t) * 8 - 1)))
			fn(&v, arg);
	}
}

bool lockall_ours(const struct lockall_set *s, const struct lockall_vma *v)
{
	return s->file_ino != 0 && v->inode == s->file_ino &&
	       v->dev_major == s->file_major && v->dev_minor == s->file_minor;
}

/* ---- the process's future, and the ticker's scratch --------------- */

/* The flags of the last mlockall that locks future mappings (MCL_FUTURE,
 * MCL_ONFAULT with it), 0 when none does. */
static int future_flags SM_FORK_DATA;

/* Who holds the scratch: 0 nobody, else the holder's thread id (a file
 * of the ticker's recovery scan: lockall_scratch_begin; lockall_apply).
 * An int, no mutex, on the page of what the fork path touches
 * (SM_FORK_DATA: every page of ours a fork child touches costs it,
 * docs/performance.md), with future_flags.  A holder that is no thread
 * of this process (a vfork child killed in its mlockall; the parent's
 * ticker, in the child of a fork that ran no handler of ours: _Fork) has
 * let go: its word is taken over (a reviewer's: a killed vfork child
 * left it held, and the parent's next mlockall waited for good). */
static int scratch SM_FORK_DATA;

static void scratch_take(void)
{
	int cur = 0, me = (int)SM_SYSCALL(SYS_gettid);
	struct timespec ms = {0, 1000000};

	while (!__atomic_compare_exchange_n(&scratch, &cur, me, false,
					    __ATOMIC_ACQUIRE,
					    __ATOMIC_RELAXED)) {
		if (SM_SYSCALL(SYS_tgkill, SM_SYSCALL(SYS_getpid), cur, 0) !=
			    0 &&
		    errno == ESRCH) {
			/* (cur stays the expected value: taken over.) */
			continue;
		}
		cur = 0;
		/* A millisecond at a time: a file of a recovery takes a
		 * few. */
		SM_SYSCALL(SYS_nanosleep, &ms, NULL);
	}
}

static void scratch_give(void)
{
	__atomic_store_n(&scratch, 0, __ATOMIC_RELEASE);
}

void lockall_note_future(int flags)
{
	__atomic_store_n(&future_flags,
			 (flags & MCL_FUTURE) ? flags & (MCL_FUTURE | MCL_ONFAULT)
					      : 0,
			 __ATOMIC_RELEASE);
}

int lockall_future(void)
{
	return __atomic_load_n(&future_flags, __ATOMIC_ACQUIRE);
}

SM_FORK_PATH
void lockall_forked(void)
{
	/* Read first: written only where set. */
	if (__atomic_load_n(&future_flags, __ATOMIC_RELAXED))
		__atomic_store_n(&future_flags, 0, __ATOMIC_RELAXED);
	if (__atomic_load_n(&scratch, __ATOMIC_RELAXED))
		__atomic_store_n(&scratch, 0, __ATOMIC_RELAXED);
}

bool lockall_scratch_begin(void)
{
	if (lockall_future())
		return false;
	scratch_take();
	/* (An mlockall with MCL_FUTURE may have ended just before.) */
	if (lockall_future()) {
		scratch_give();
		return false;
	}
	return true;
}

void lockall_scratch_end(void)
{
	scratch_give();
}

/* ---- the call ---------------------------------------------------- */

struct apply_job {
	int flags;
	const struct lockall_set *s;
	bool capable;
	uint64_t limit; /* RLIMIT_MEMLOCK's soft limit, bytes */
	size_t page;
	size_t total, ours;
	int result;
};

static void count_range(const struct lockall_vma *v, void *arg)
{
	struct apply_job *j = arg;

	j->total += v->end - v->start;
	j->ours += lockall_ours(j->s, v)
			   ? v->end - v->start
			   : lockall_subtract(v->start, v->end, j->s, NULL, NULL);
}

static void lock_piece(uintptr_t a, uintptr_t b, void *arg)
{
	const struct apply_job *j = arg;

	/* Errors of one mapping (a PROT_NONE guard: ENOMEM; one unmapped
	 * meanwhile) are passed over, as the kernel's mlockall passes
	 * over them. */
	if (j->flags & MCL_ONFAULT)
		SM_SYSCALL(SYS_mlock2, a, b - a, MLOCK_ONFAULT);
	else
		SM_SYSCALL(SYS_mlock, a, b - a);
}

static void lock_range(const struct lockall_vma *v, void *arg)
{
	const struct apply_job *j = arg;

	if (!lockall_ours(j->s, v))
		lockall_subtract(v->start, v->end, j->s, lock_piece, arg);
}

/* /proc/self/maps through fn; false when it cannot be read. */
static bool read_maps(void (*fn)(const struct lockall_vma *, void *),
		      void *arg)
{
	struct lockall_maps p;
	char buf[1024];
	long fd, n;

	fd = SM_SYSCALL(SYS_openat, AT_FDCWD, "/proc/self/maps",
			O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	lockall_maps_init(&p);
	while ((n = SM_SYSCALL(SYS_read, fd, buf, sizeof(buf))) > 0)
		lockall_maps_feed(&p, buf, (size_t)n, fn, arg);
	SM_SYSCALL(SYS_close, fd);
	return n == 0;
}

static int apply_job(void *arg)
{
	struct apply_job *j = arg;
	long r;

	if (!read_maps(count_range, j))
		return 0; /* LOCKALL_KERNEL */
	/* The kernel's check, on the program's address space: all of it
	 * within the limit, or CAP_IPC_LOCK. */
	if (!j->capable && j->limit != (uint64_t)RLIM_INFINITY &&
	    (j->total - j->ours) / j->page > j->limit / j->page) {
		j->result = -ENOMEM;
		return 0;
	}
	/* The future part is the kernel's own.  Without it, mlockall
	 * (MCL_CURRENT) clears the future flag: a munlockall does, where
	 * one is set (it unlocks everything, which the locks below make
	 * again; mlock replaces a mapping's MLOCK_ONFAULT or not, as
	 * mlockall does). */
	r = 0;
	if (j->flags & MCL_FUTURE)
		r = SM_SYSCALL(SYS_mlockall,
			       j->flags & (MCL_FUTURE | MCL_ONFAULT));
	else if (lockall_future())
		r = SM_SYSCALL(SYS_munlockall);
	if (r != 0) {
		j->result = -errno;
		return 0;
	}
	/* The maps read a second time: mlockall's EAGAIN (some of it could
	 * not be locked) where they cannot be. */
	j->result = read_maps(lock_range, j) ? 0 : -EAGAIN;
	return 0;
}

/* capable(CAP_IPC_LOCK) as the kernel's mlock asks it: in the initial
 * user namespace.  -1 when it cannot tell. */
static int ipc_lock_capable(void)
{
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct d[2];
	struct stat sb;

	if (SM_SYSCALL(SYS_newfstatat, AT_FDCWD, "/proc/self/ns/user", &sb,
		       0) != 0)
		return -1;
	if (SM_SYSCALL(SYS_capget, &h, d) != 0)
		return -1;
	return sb.st_ino == USER_NS_INIT &&
	       (d[0].effective >> CAP_IPC_LOCK & 1u);
}

static void block_all(sigset_t *old)
{
	sigset_t all;

	sigfillset(&all);
	raw_sigmask(SIG_SETMASK, &all, old);
}

int lockall_kernel(int flags)
{
	sigset_t old;
	long r;

	/* Not on a thread a filter binds (quiet.h): nothing but the call. */
	if (sm_quiet()) {
		r = SM_SYSCALL(SYS_mlockall, flags);
		if (r == 0)
			lockall_note_future(flags);
		return r == 0 ? 0 : -errno;
	}
	block_all(&old);
	scratch_take();
	r = SM_SYSCALL(SYS_mlockall, flags);
	if (r == 0)
		lockall_note_future(flags);
	else
		r = -errno;
	scratch_give();
	raw_sigmask(SIG_SETMASK, &old, NULL);
	return (int)r;
}

int lockall_permitted(void)
{
	struct rlimit lim;
	int cap = ipc_lock_capable(), saved = errno;

	if (cap != 0 ||
	    SM_SYSCALL(SYS_prlimit64, 0, RLIMIT_MEMLOCK, NULL, &lim) != 0) {
		errno = saved;
		return 0;
	}
	return lim.rlim_cur == 0 ? -EPERM : 0;
}

int lockall_apply(int flags, const struct lockall_set *s)
{
	struct apply_job j = {.flags = flags, .s = s, .result = LOCKALL_KERNEL};
	sigset_t old;
	struct rlimit lim;
	long page = sysconf(_SC_PAGESIZE);
	int saved = errno, cap;

	if (!flags || (flags & ~(MCL_CURRENT | MCL_FUTURE | MCL_ONFAULT)) ||
	    flags == MCL_ONFAULT)
		return -EINVAL;
	if (!(flags & MCL_CURRENT) || s->n == 0 || sm_quiet() || page <= 0)
		return LOCKALL_KERNEL;
	cap = ipc_lock_capable();
	if (cap < 0 ||
	    SM_SYSCALL(SYS_prlimit64, 0, RLIMIT_MEMLOCK, NULL, &lim) != 0) {
		errno = saved;
		return LOCKALL_KERNEL;
	}
	/* The kernel's can_do_mlock. */
	if (!cap && lim.rlim_cur == 0)
		return -EPERM;
	j.capable = cap == 1;
	j.limit = lim.rlim_cur;
	j.page = (size_t)page;
	/* No recovery image of the ticker's mapped meanwhile (it would be
	 * locked, and counted against the limit, whole).  Signals blocked
	 * while the word is held: a handler's own mlockall on this thread
	 * waited for it for good (a reviewer's). */
	block_all(&old);
	scratch_take();
	if (progfd_detached())
		apply_job(&j);
	else
		progfd_run(apply_job, &j);
	/* Noted before the word is given: a scan that takes it next must
	 * see that its image would be locked. */
	if (j.result == 0)
		lockall_note_future(flags);
	scratch_give();
	raw_sigmask(SIG_SETMASK, &old, NULL);
	errno = saved;
	return j.result;
}
