/*
 * progfd.c - the library's own fd table (contract in progfd.h).
 */
#include "progfd.h"
#include "rawsys.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <limits.h>
#include <linux/futex.h>
#include <linux/kcmp.h>
#include <time.h>
#include <unistd.h>

#ifndef CLOSE_RANGE_UNSHARE
#define CLOSE_RANGE_UNSHARE (1U << 1)
#endif
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif

/* ThreadSanitizer keeps its per-thread state in the thread's TLS, which a
 * CLONE_VM child shares: it sees phantom races there (it turns vfork into
 * fork for the same reason).  Its builds write from the calling thread. */
#if defined(__SANITIZE_THREAD__)
#define CHILD_OK 0
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CHILD_OK 0
#endif
#endif
#ifndef CHILD_OK
#define CHILD_OK 1
#endif

/* The child's stack: our file work is a few raw calls and a snprintf. */
#define CHILD_STACK (64 * 1024)

/* The calling thread's view; a fork child's threads start undetached. */
static __thread struct {
	bool on;    /* this thread's fd table is private */
	int pidfd;  /* the program (in the private table), or -1 */
	long pid;   /* the process whose fds the program's are */
} me __attribute__((tls_model("initial-exec")));

/* 1 when tasks a and b (threads or processes) share one fd table, 0
 * when not, -1 when the kernel cannot say (no kcmp, a filter). */
static int shares_table(long a, long b)
{
	long r = SM_SYSCALL(SYS_kcmp, a, b, KCMP_FILES, 0, 0);

	return r < 0 ? -1 : r == 0;
}

static bool getfd_allowed(void);

int progfd_detach(void)
{
	long pid = SM_SYSCALL(SYS_getpid);

	if (me.on)
		return 0;
	if (SM_SYSCALL(SYS_close_range, 0u, ~0u, CLOSE_RANGE_UNSHARE) != 0)
		return -errno;
	/* A filter that fakes success left this thread in the program's
	 * table: the kernel says so. */
	if (shares_table(SM_SYSCALL(SYS_gettid), pid) == 1)
		return -EPERM;
	me.pid = pid;
	me.pidfd = getfd_allowed()
			   ? (int)SM_SYSCALL(SYS_pidfd_open, (pid_t)pid, 0u)
			   : -1;
	me.on = true;
	return 0;
}

bool progfd_detached(void)
{
	return me.on;
}

struct run {
	int (*fn)(void *);
	void *arg;
	int result;
	bool finished; /* fn returned (the child's last store) */
	bool shared; /* the child was made with CLONE_FILES */
	bool no_table; /* ... and could not leave the program's table */
	bool copy; /* the child's table is a copy of the program's, its own */
	long parent; /* the pid of the process that made the child */
};

/* 1 when this process's fd table is its own, 0 when it shares its
 * parent's, -1 when the kernel cannot say. */
static int own_table(void)
{
	int shared = shares_table(SM_SYSCALL(SYS_getpid), SM_SYSCALL(SYS_getppid));

	return shared < 0 ? -1 : !shared;
}

/*
 * A child made sharing the program's fd table leaves it for an empty one:
 * close_range over every number with CLOSE_RANGE_UNSHARE copies none of
 * the program's fds (Linux 5.9 on, as progfd_detach), where a child made
 * without CLONE_FILES gets a copy of the whole table, a reference taken
 * and dropped on every open file: with 15,000 fds open, most of what a
 * fork child's first socket and its exit record cost; and for as long as
 * the child lived, a socket or pipe the program closed stayed open in it.
 * Whether the table is its own now is asked of the kernel (kcmp: 0 when
 * the two processes share one); where kcmp cannot say, one of fds 0 to 2
 * still open means the call did nothing (a filter that fakes success).
 * Else a copy of the whole table (unshare), or no table of its own.
 */
static bool leave_table(struct run *r)
{
	int own, fd;

	if (SM_SYSCALL(SYS_close_range, 0u, ~0u, CLOSE_RANGE_UNSHARE) == 0) {
		own = own_table();
		for (fd = 0; own < 0 && fd < 3; fd++)
			if (SM_SYSCALL(SYS_fcntl, fd, F_GETFD) >= 0)
				own = 0;
		if (own != 0)
			return true;
	}
	if (SM_SYSCALL(SYS_unshare, CLONE_FILES) != 0)
		return false;
	own = own_table();
	/* A copy the kernel confirmed is the child's to make room in. */
	r->copy = own > 0;
	return own != 0;
}

/* Close copies above stderr in the child's own copy of the table: all
 * of them, or where close_range is refused (before Linux 5.9, a filter),
 * the first few found, which is room enough for a job's files. */
static void make_room(void)
{
	int fd, closed = 0;

	if (SM_SYSCALL(SYS_close_range, 3u, ~0u, 0u) == 0)
		return;
	for (fd = 3; fd < 4096 && closed < 4; fd++)
		if (SM_SYSCALL(SYS_close, fd) == 0)
			closed++;
}

static int child_main(void *p)
{
	struct run *r = p;
	struct rlimit lim;

	r->copy = !r->shared;
	/* The child is a process of its own: a SIGKILL or an exit_group
	 * of the program ends the thread that waits for it, not the child,
	 * which went on appending its batch to the log after recovery had
	 * written the dead process's exit record, counting that batch's
	 * close records as not written (a reviewer's run: 200 counted
	 * twice).  It dies with that thread; one already gone (before the
	 * prctl) is seen by the parent's pid.  In a pid namespace the
	 * program entered (unshare, setns: its new children go there), the
	 * parent has no pid: 0, and only the prctl watches it (a reviewer's
	 * run: every batch refused there when 0 was taken for gone). */
	SM_SYSCALL(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	{
		long pp = SM_SYSCALL(SYS_getppid);

		if (pp != r->parent && pp != 0)
			return 0;
	}
	if (r->shared && !leave_table(r)) {
		r->no_table = true;
		return 0;
	}
	r->result = r->fn(r->arg);
	if (r->result == -EMFILE) {
		/*
		 * In the fallback the child's table is a copy of the
		 * program's, bound by its RLIMIT_NOFILE: a program at its
		 * limit left no number for our file (fn failed before it
		 * wrote anything).  The copies are the child's alone
		 * (closing them changes nothing for the program, whose fds
		 * stay open; the child's exit would close them anyway), so
		 * make room and go again: the soft limit raised to the hard
		 * one (the child's own), copies above stderr closed.
		 */
		if (SM_SYSCALL(SYS_prlimit64, 0, RLIMIT_NOFILE, NULL, &lim) == 0 &&
		    lim.rlim_cur < lim.rlim_max) {
			lim.rlim_cur = lim.rlim_max;
			SM_SYSCALL(SYS_prlimit64, 0, RLIMIT_NOFILE, &lim, NULL);
		}
		/* Only in a copy known to be the child's own (clone's, or
		 * unshare's as kcmp confirms it): a table this child left
		 * the program's for is empty, and closing must never reach
		 * the program's table, whatever a filter said. */
		if (r->copy)
			make_room();
		r->result = r->fn(r->arg);
	}
	__atomic_store_n(&r->finished, true, __ATOMIC_RELEASE);
	return 0;
}

/* Make the child (sharing the fd table first when shared) and wait for
 * it; its pid, or <= 0 when none could be made. */
static int run_child(struct run *r, void *stack, bool shared)
{
	int pid, status = 0;

	r->shared = shared;
	r->no_table = false;
	r->finished = false;
	r->parent = SM_SYSCALL(SYS_getpid);
	/* No exit signal: the program's SIGCHLD handler and its wait(-1)
	 * never see this child; __WALL below reaps it. */
	pid = clone(child_main, (char *)stack + CHILD_STACK,
		    CLONE_VM | CLONE_VFORK | (shared ? CLONE_FILES : 0), r);
	if (pid > 0) {
		while (SM_SYSCALL(SYS_wait4, pid, &status, __WALL, NULL) < 0 &&
		       errno == EINTR)
			;
		/* Killed before fn returned (-EAGAIN, the result it started
		 * with, said that a write failed for want of resources: a
		 * helper's kill of the child after its whole batch was
		 * written).  Killed after: what fn returned stands. */
		if (WIFSIGNALED(status) &&
		    !__atomic_load_n(&r->finished, __ATOMIC_ACQUIRE))
			r->result = PROGFD_KILLED;
	}
	return pid;
}

/* Set once at start-up: no child made sharing the fd table. */
static bool no_shared_child;

void progfd_no_shared_child(void)
{
	no_shared_child = true;
}

/*
 * Whether pidfd_getfd may be made here: not where a seccomp filter binds
 * the process (PR_GET_SECCOMP).  A filter the process started under binds
 * the library too, and systemd's SystemCallFilter=@system-service leaves
 * pidfd_getfd out (it is in the @debug set) and kills the process that
 * makes it: a metered service under it died of SIGSYS at its ticker's
 * first look at an fd (every interval with a TCP connection open).  A
 * filter cannot be asked what it allows, and a child of our own that
 * tried the call first, whose death would have said no, was taken back
 * (a reviewer's): a death by seccomp dumps core, the child's memory being
 * the whole program's (324 MB for a service of 300), to a core pipe
 * whatever RLIMIT_CORE says, with an audit record; and before Linux 5.16
 * a core dump killed every process sharing the memory, the service too.
 * So under any filter the program's fds are reached through /proc/PID/fd,
 * as before Linux 5.6 (Docker's default filter refuses pidfd_getfd with
 * EPERM anyway, which falls back the same way): what is lost there is
 * what /proc cannot give, the kernel's view of an open connection in
 * interval records and the addresses of a socket the ticker checks.
 */
static bool getfd_allowed(void)
{
	return SM_SYSCALL(SYS_prctl, PR_GET_SECCOMP, 0, 0, 0, 0) == 0;
}

static int run(int (*fn)(void *), void *arg, bool copy)
{
	struct run r = { fn, arg, -EAGAIN, false, false, false, false, 0 };
	bool shared = !copy && !no_shared_child;
	sigset_t all, old;
	void *stack;
	int pid, saved = errno;

	if (me.on || !CHILD_OK)
		return fn(arg);
	stack = mmap(NULL, CHILD_STACK, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (stack == MAP_FAILED)
		return fn(arg);
	/* No handler of the program may run in the child. */
	sigfillset(&all);
	raw_sigmask(SIG_SETMASK, &all, &old);
	pid = run_child(&r, stack, shared);
	/* It could not leave the program's table, or a filter refused
	 * CLONE_FILES: a child with a copy of the table, as clone makes
	 * one without CLONE_FILES. */
	if (shared && (pid <= 0 || r.no_table))
		pid = run_child(&r, stack, false);
	raw_sigmask(SIG_SETMASK, &old, NULL);
	munmap(stack, CHILD_STACK);
	errno = saved;
	if (pid <= 0)
		return fn(arg);
	return r.result;
}

int progfd_run(int (*fn)(void *), void *arg)
{
	return run(fn, arg, false);
}

int progfd_run_copy(int (*fn)(void *), void *arg)
{
	return run(fn, arg, true);
}

uint32_t progfd_lent SM_FORK_DATA;

#define AWAIT_NS 50000000L /* 50 ms */

void progfd_await_slow(unsigned first, unsigned last)
{
	struct timespec until, now;
	int saved = errno;

	/* One deadline, whatever wakes the wait (signals, a futex the
	 * kernel or a filter refuses): never more than 50 ms in all. */
	if (clock_gettime(CLOCK_MONOTONIC, &until) != 0)
		goto out;
	until.tv_nsec += AWAIT_NS;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	for (;;) {
		uint32_t v = __atomic_load_n(&progfd_lent, __ATOMIC_ACQUIRE);
		uint32_t n = v & ~PROGFD_WAITING;

		if (n == 0 || n - 1 < first || n - 1 > last)
			break;
		if (clock_gettime(CLOCK_MONOTONIC, &now) != 0 ||
		    now.tv_sec > until.tv_sec ||
		    (now.tv_sec == until.tv_sec && now.tv_nsec >= until.tv_nsec))
			break;
		if (!(v & PROGFD_WAITING) &&
		    !__atomic_compare_exchange_n(&progfd_lent, &v,
						 v | PROGFD_WAITING, false,
						 __ATOMIC_SEQ_CST,
						 __ATOMIC_RELAXED))
			continue;
		/* Shared with a CLONE_VM child (a vfork child closing), so
		 * not FUTEX_PRIVATE_FLAG's key either way. */
		SM_SYSCALL(SYS_futex, &progfd_lent, FUTEX_WAIT_BITSET,
			v | PROGFD_WAITING, &until, NULL, FUTEX_BITSET_MATCH_ANY);
	}
out:
	errno = saved;
}

/* The copy is back: wake who waits for it. */
static void lend_end(void)
{
	if (__atomic_exchange_n(&progfd_lent, 0, __ATOMIC_SEQ_CST) &
	    PROGFD_WAITING)
		SM_SYSCALL(SYS_futex, &progfd_lent, FUTEX_WAKE, INT_MAX, NULL,
			NULL, 0);
}

void progfd_forked(void)
{
	__atomic_store_n(&progfd_lent, 0, __ATOMIC_RELAXED);
}

/* The program's fd n through the pidfd: a copy in our table, or -errno;
 * lent (progfd_lent) unless keep, until lend_end. */
static int getfd(int n, bool keep)
{
	int fd, err;

	if (me.pidfd < 0)
		return -ENOSYS;
	if (!keep)
		__atomic_store_n(&progfd_lent, (uint32_t)n + 1,
				 __ATOMIC_SEQ_CST);
	fd = (int)SM_SYSCALL(SYS_pidfd_getfd, me.pidfd, n, 0u);
	if (fd >= 0)
		return fd;
	err = errno;
	if (!keep)
		lend_end();
	return -err;
}

/* A socket's own addresses (len 0: unknown). */
static void sock_addrs(int fd, struct sockaddr_storage *local,
		       socklen_t *local_len, struct sockaddr_storage *peer,
		       socklen_t *peer_len)
{
	*local_len = sizeof(*local);
	if (getsockname(fd, (struct sockaddr *)local, local_len) != 0 ||
	    *local_len > sizeof(*local))
		*local_len = 0;
	*peer_len = sizeof(*peer);
	if (getpeername(fd, (struct sockaddr *)peer, peer_len) != 0 ||
	    *peer_len > sizeof(*peer))
		*peer_len = 0;
}

int progfd_stat_addrs(int fd, struct stat *st, struct progfd_addrs *a)
{
	char path[64];
	int saved = errno, r = 0, got;

	if (a)
		a->local_len = a->peer_len = 0;
	if (!me.on) {
		r = fstat(fd, st) == 0 ? 0 : -errno;
		if (!r && a && S_ISSOCK(st->st_mode))
			sock_addrs(fd, &a->local, &a->local_len, &a->peer,
				   &a->peer_len);
		errno = saved;
		return r;
	}
	/* A copy through the pidfd: EBADF says "not open" for sure, and it
	 * costs half of a /proc path walk. */
	got = getfd(fd, false);
	if (got >= 0) {
		r = fstat(got, st) == 0 ? 0 : -errno;
		if (!r && a && S_ISSOCK(st->st_mode))
			sock_addrs(got, &a->local, &a->local_len, &a->peer,
				   &a->peer_len);
		SM_SYSCALL(SYS_close, got);
		lend_end();
	} else if (got == -EBADF) {
		r = -EBADF;
	} else {
		/* No pidfd: /proc, where ENOENT cannot tell "not open" from
		 * "no table to look at" (the main thread exited), and where
		 * a socket's addresses cannot be read. */
		snprintf(path, sizeof(path), "/proc/%ld/fd/%d", me.pid, fd);
		r = stat(path, st) == 0 ? 0 : errno == ENOENT ? -EIO : -errno;
	}
	errno = saved;
	return r;
}

int progfd_stat(int fd, struct stat *st)
{
	return progfd_stat_addrs(fd, st, NULL);
}

static int get(int fd, bool keep)
{
	char path[64];
	int got, saved = errno;

	if (!me.on)
		return fd;
	got = getfd(fd, keep);
	if (got == -ENOSYS || got == -EPERM) {
		/* No pidfd: reopen it (a pipe, tty or file, appended to); a
		 * pipe's other end sees its EOF only once this goes too, so
		 * it is lent as a copy is. */
		snprintf(path, sizeof(path), "/proc/%ld/fd/%d", me.pid, fd);
		if (!keep)
			__atomic_store_n(&progfd_lent, (uint32_t)fd + 1,
					 __ATOMIC_SEQ_CST);
		got = (int)SM_SYSCALL(SYS_openat, AT_FDCWD, path,
				   O_WRONLY | O_APPEND | O_CLOEXEC |
					   O_NONBLOCK | O_NOCTTY);
		if (got < 0) {
			got = -errno;
			if (!keep)
				lend_end();
		}
	}
	errno = saved;
	return got;
}

int progfd_get(int fd)
{
	return get(fd, false);
}

int progfd_keep(int fd)
{
	return get(fd, true);
}

void progfd_put(int fd, int got)
{
	int saved = errno;

	if (me.on && got >= 0) {
		SM_SYSCALL(SYS_close, got);
		/* Back, whether lent (a copy of fd) or kept. */
		if ((__atomic_load_n(&progfd_lent, __ATOMIC_RELAXED) &
		     ~PROGFD_WAITING) == (uint32_t)fd + 1)
			lend_end();
	}
	errno = saved;
}
