/*
 * lockall.c - mlockall(MCL_CURRENT) without the library's reserved tables
 * (contract in lockall.h).
 */
#include "lockall.h"
#include "progfd.h"
#include "quiet.h"
#include "rawsys.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
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

void lockall_add(struct lockall_set *s, const void *p, size_t len)
{
	if (!p || !len || s->n >= LOCKALL_MAX)
		return;
	s->r[s->n].start = (uintptr_t)p;
	s->r[s->n].end = (uintptr_t)p + len;
	s->n++;
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
	p->start = p->end = 0;
	p->field = 0;
	p->digits = p->bad = false;
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

void lockall_maps_feed(struct lockall_maps *p, const char *buf, size_t n,
		       void (*fn)(uintptr_t, uintptr_t, void *), void *arg)
{
	size_t i;

	for (i = 0; i < n; i++) {
		char c = buf[i];
		int h;

		if (c == '\n') {
			/* A line cut right after its range is whole enough;
			 * the kernel's half (x86-64's [vsyscall] gate) is no
			 * mapping of the process's own. */
			if (!p->bad && p->field >= 1 && p->digits &&
			    p->end > p->start &&
			    p->start <
				((uintptr_t)1 << (sizeof(uintptr_t) * 8 - 1)))
				fn(p->start, p->end, arg);
			lockall_maps_init(p);
			continue;
		}
		if (p->bad || p->field == 2)
			continue;
		h = hex_value(c);
		if (h >= 0) {
			uintptr_t *v = p->field == 0 ? &p->start : &p->end;

			if (*v >> (sizeof(uintptr_t) * 8 - 4))
				p->bad = true; /* no address is that long */
			*v = *v << 4 | (uintptr_t)h;
			p->digits = true;
		} else if (p->field == 0 && c == '-' && p->digits) {
			p->field = 1;
			p->digits = false;
		} else if (p->field == 1 && c == ' ' && p->digits) {
			p->field = 2;
		} else {
			p->bad = true;
		}
	}
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

static void count_range(uintptr_t a, uintptr_t b, void *arg)
{
	struct apply_job *j = arg;

	j->total += b - a;
	j->ours += lockall_subtract(a, b, j->s, NULL, NULL);
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

static void lock_range(uintptr_t a, uintptr_t b, void *arg)
{
	const struct apply_job *j = arg;

	lockall_subtract(a, b, j->s, lock_piece, arg);
}

/* /proc/self/maps through fn; false when it cannot be read. */
static bool read_maps(void (*fn)(uintptr_t, uintptr_t, void *), void *arg)
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
	/* The future part is the kernel's own; without it, every lock goes
	 * first, as mlockall(MCL_CURRENT) replaces them all (and the
	 * future flag) with its own. */
	if (j->flags & MCL_FUTURE)
		r = SM_SYSCALL(SYS_mlockall,
			       j->flags & (MCL_FUTURE | MCL_ONFAULT));
	else
		r = SM_SYSCALL(SYS_munlockall);
	if (r != 0) {
		j->result = -errno;
		return 0;
	}
	read_maps(lock_range, j);
	j->result = 0;
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

int lockall_apply(int flags, const struct lockall_set *s)
{
	struct apply_job j = {.flags = flags, .s = s, .result = LOCKALL_KERNEL};
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
	if (progfd_detached())
		apply_job(&j);
	else
		progfd_run(apply_job, &j);
	errno = saved;
	return j.result;
}
