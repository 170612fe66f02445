/*
 * preload.c - the preload's runtime: binding the real functions, start-up
 * and exit, the ticker thread, fork, and the lifecycle hooks the wrappers
 * call.  The only code that knows about dlsym, constructors and threads.
 */
#include "preload.h"

#include "../core/classify.h"
#include "../core/elfnote.h"
#include "warn.h"
#include "wrap_stdio.h"
#include "../core/procns.h"
#include "../core/lockall.h"
#include "../core/progfd.h"
#include "../core/quiet.h"
#include "../core/rawsys.h"

#include <dlfcn.h>
#include <link.h>
#include <errno.h>
#include <pthread.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <linux/futex.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

struct sm_core sm_core __attribute__((aligned(4096)));
bool sm_latency;
bool sm_slow;

/* Bound once.  Not pthread_once: its completion
 * always makes a FUTEX_WAKE, and an image started under a seccomp filter
 * that forbids futex (inherited across the exec) died of it (SIGSYS, or
 * glibc's abort on EPERM) at the library's start-up (a review's). */
static uint32_t bind_done;
static long bind_pid; /* the process binding (0: none yet) */
static __thread int in_bind __attribute__((tls_model("initial-exec")));

/*
 * What the ticker and fork share, all of it zero in a fork child: a page
 * of its own, MADV_WIPEONFORK when the kernel allows (tk_wiped), so that a
 * child gets it zeroed without writing a byte (each page a child writes
 * is a copy) and the parent's unlock after fork faults no copy either.
 * Zero is where each starts (PTHREAD_MUTEX_INITIALIZER is zeroes: checked
 * in sm_init).  Not wiped: fork_child zeroes it.
 *  tick_lock serializes the ticker, the exit record and fork: the meter's
 *    state.
 *  write_lock serializes writes to the sink, in the order the batches were
 *    made; taken under tick_lock, held after it: fork waits on the state,
 *    never on a write.  out is the batch being written.
 *  started (atomic): 0 no, 1 starting or running; alive and final_req:
 *    see below.  (Whether a ticker is wanted at all is sm_meter's
 *    ticker_wanted: a child that exits without tracking anything reads
 *    it without faulting this page in.)
 * The parent writes it around every fork (fork_prepare, fork_parent): a
 * page a fork does not write-protect takes no fault for it.
 */
enum { PIN_NOW = 1, PIN_LATER = 2 }; /* tk.pin_req: sink_pin's on, or not */

struct ticker_shared {
	/* wrap_dlopen.c's spin lock (sm_dl_lock): free in a fork child,
	 * whose copy of this page is zeroes, at no cost to its fork. */
	int dl_lock;
	pthread_mutex_t tick_lock;
	pthread_mutex_t write_lock;
	struct sbuf out;
	int started;
	uint32_t alive;
	uint32_t final_req;
	uint32_t pin_req;  /* keep the log open (PIN_*): see pin_log */
	uint32_t pin_done; /* futex word: grows when a pin_req is served */
	uint32_t start_failed; /* no thread could be made */
	/* The leaving ticker's tid word (atomic; see find_tid_field). */
	uint32_t *tid_word;
	bool own_stack; /* the ticker runs on ticker_stack's mapping */
	bool stay; /* the exit's caller is a signal handler: no leaving */
	bool uncounted; /* taken out of glibc's thread count */
	/* An exec record is out (futex word): no batch after it until the
	 * exec fails (sm_exec_failed); if it succeeds the ticker is gone.
	 * At most EXEC_HOLD_NS from exec_hold_ns (an exec that gave up
	 * waiting and failed before the record was out never clears it). */
	uint32_t exec_hold;
	uint64_t exec_hold_ns;
	uint64_t forked_ns; /* sm_meter.forked_at: see struct meter */
	bool fork_locked; /* fork_prepare got tick_lock (the parent's) */
	bool fds_classified; /* before a uid change (sm_creds_changing) */
	/* Threads classifying fds before a limit on tasks (atomic: see
	 * sm_tasks_limiting). */
	uint32_t limiting;
	/* A per-thread credential call to repeat on the ticker (see
	 * sm_creds_mirror): CRED_* state, the call, and a futex word that
	 * grows when one is served. */
	uint32_t cred_req;
	uint32_t cred_done;
	uint32_t cred_stuck; /* a request timed out: no waiting until served */
	long cred_nr, cred_arg[4];
	struct __user_cap_header_struct cred_hdr;
	struct __user_cap_data_struct cred_data[2];
	/* sm_meter.closes_inflight: see forked_ns (its own lines). */
	struct meter_inflight closes_inflight;
	/* exit()'s record (see fini_once): 0 none yet, 1 being made, 2
	 * made; and how many threads have called exit (sm_exit_begins). */
	uint32_t fini_state;
	uint32_t exit_callers;
	/* The first socket beyond the table (see beyond_note): its fd + 1
	 * (0: none), and whether it was said; a fork child's own. */
	int beyond_fd1;
	uint32_t beyond_said;
};
enum { CRED_FREE, CRED_FILLING, CRED_READY, CRED_SERVING };
/* The whole page, so that nothing else lands in it: a wiped page is
 * wiped whole, and the variables the linker put after tk (the names
 * cache, where warnings go, the bind once) were zeroes in every fork
 * child. */
static union {
	struct ticker_shared s;
	char page[4096];
} tk_page __attribute__((aligned(4096)));
#define tk (tk_page.s)
_Static_assert(sizeof(struct ticker_shared) <= 4096,
	       "the ticker's shared variables fit their page");
static bool tk_wiped SM_FORK_DATA;
static int initialized;

static void bind_all(void)
{
	union {
		void *p;
#define X(name, ret, args) sm_##name##_fn name;
		SM_REAL_FUNCS(X)
#undef X
	} u;

#define X(name, ret, args)                                                     \
	u.p = dlsym(RTLD_NEXT, #name);                                         \
	if (u.p)                                                               \
		__atomic_store_n(&sm_real.name, u.name, __ATOMIC_RELEASE);
	SM_REAL_FUNCS(X)
#undef X
}

bool sm_bind(void)
{
	if (in_bind)
		return false;
	in_bind = 1;
	if (!__atomic_load_n(&bind_done, __ATOMIC_ACQUIRE)) {
		long me = raw_syscall6(SYS_getpid, 0, 0, 0, 0, 0, 0);
		long by = 0;

		/* The claim is the binder's pid: a thread of a fork child of
		 * a process caught binding takes it over (its binder is not
		 * in it), one thread only. */
		for (;;) {
			if (__atomic_compare_exchange_n(&bind_pid, &by, me, false,
							__ATOMIC_ACQ_REL,
							__ATOMIC_ACQUIRE)) {
				bind_all();
				__atomic_store_n(&bind_done, 1, __ATOMIC_RELEASE);
				break;
			}
			/* Another thread of this process binds (a few dlsym
			 * calls): waited for without a system call, as
			 * pthread_once would. */
			while (by == me &&
			       !__atomic_load_n(&bind_done, __ATOMIC_ACQUIRE)) {
				__asm__ volatile("" ::: "memory");
				by = __atomic_load_n(&bind_pid, __ATOMIC_ACQUIRE);
			}
			if (__atomic_load_n(&bind_done, __ATOMIC_ACQUIRE))
				break;
		}
	}
	in_bind = 0;
	return true;
}

/* One warning line: on stderr while fd 2 is still the one of start-up,
 * else to syslog (warn.c). */
static void report_stderr(void *ctx, const char *msg)
{
	(void)ctx;
	sm_warn(msg);
}

/* The config's own warnings, held until it says where warnings go
 * ([log] syslog): lines of buf, in order.  When they do not fit, those
 * held are let go first (to where warnings go by default). */
struct held_warnings {
	char buf[4096];
	size_t len;
};

/*
 * Warnings about numbers that may be lost (no state file, a log the new
 * uid cannot write) wait for the first tracked fd: a process that never
 * meters anything (sh, ls, setpriv itself) has nothing to lose, and a
 * script of such commands would print one line per command.  Inherited
 * by a fork child, which makes its own state file quietly (the parent's
 * line says why it failed) and says the line at its own first tracked fd.
 * until_tracked_lock: taken around the buffer (a try: a signal handler
 * that finds it taken says its line at once); 0 again in a fork child.
 */
static struct held_warnings until_tracked;
static uint32_t until_tracked_lock SM_FORK_DATA;

static bool until_tracked_take(void)
{
	uint32_t free_ = 0;

	return __atomic_compare_exchange_n(&until_tracked_lock, &free_, 1,
					   false, __ATOMIC_ACQUIRE,
					   __ATOMIC_RELAXED);
}

static void until_tracked_give(void)
{
	__atomic_store_n(&until_tracked_lock, 0, __ATOMIC_RELEASE);
}

static void report_release(struct held_warnings *h)
{
	size_t i = 0;

	while (i < h->len) {
		sm_warn(h->buf + i);
		i += strlen(h->buf + i) + 1;
	}
	h->len = 0;
}

static void report_held(void *ctx, const char *msg)
{
	struct held_warnings *h = ctx;
	size_t n = strlen(msg), i = 0;

	/* A line held already (a fork child's, the parent's too) once. */
	while (i < h->len) {
		if (strcmp(h->buf + i, msg) == 0)
			return;
		i += strlen(h->buf + i) + 1;
	}

	if (n + 1 > sizeof(h->buf) - h->len)
		report_release(h);
	if (n + 1 > sizeof(h->buf)) {
		sm_warn(msg);
		return;
	}
	memcpy(h->buf + h->len, msg, n + 1);
	h->len += n + 1;
}

/* The ticker runs for a tracked fd (not one started before a seccomp
 * filter with nothing tracked yet). */
static bool ticker_serving(void)
{
	return __atomic_load_n(&tk.started, __ATOMIC_ACQUIRE) &&
	       __atomic_load_n(&sm_meter.ticker_wanted, __ATOMIC_ACQUIRE);
}

/* The report of the meter and the state (sm_durable_init): held until
 * the ticker is wanted (ensure_ticker: a tracked fd), then said. */
static void report_until_tracked(void *ctx, const char *msg)
{
	(void)ctx;
	if (!until_tracked_take()) {
		sm_warn(msg);
		return;
	}
	if (ticker_serving())
		sm_warn(msg);
	else
		report_held(&until_tracked, msg);
	until_tracked_give();
}

/* Something to lose now (a tracked fd): the warnings held for this
 * moment.  Not on a thread a filter binds (its writes are not ours to
 * make): the ticker says them then. */
static void release_held(void)
{
	if (until_tracked.len && !sm_quiet() &&
	    __atomic_load_n(&sm_meter.ticker_wanted, __ATOMIC_ACQUIRE) &&
	    until_tracked_take()) {
		report_release(&until_tracked);
		until_tracked_give();
	}
}

static struct meter_time now_both(void)
{
	struct meter_time t;
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	t.mono_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	clock_gettime(CLOCK_REALTIME, &ts);
	t.real_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	return t;
}

/* The latency clock (sm_ticks) against CLOCK_MONOTONIC, from start-up. */
static struct {
	uint64_t ticks0, mono0;
} clock_origin;

/* Tell the meter how many ns a latency tick is; better with every call. */
static void calibrate(struct meter_time now)
{
	uint64_t dt = sm_ticks() - clock_origin.ticks0;
	uint64_t dns = now.mono_ns - clock_origin.mono0;

	if (dt > 0 && dns > 0)
		sm_meter.ns_per_tick = (double)dns / (double)dt;
}

static uint64_t real_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* --- the ticker thread --------------------------------------------------- */

/*
 * The final record of _exit and exec is made by the ticker, on request:
 * the caller may be a signal handler that interrupted malloc, and must
 * neither allocate nor take a lock itself.  tk.final_req (a futex word): 0
 * none, 1 exit, 2 exec; final_done grows when one is served.
 */
static uint32_t final_done;

static long futex(uint32_t *w, int op, uint32_t val, const struct timespec *t)
{
	return SM_SYSCALL(SYS_futex, w, op | FUTEX_PRIVATE_FLAG, val, t, NULL,
		       FUTEX_BITSET_MATCH_ANY);
}

/* Wake the ticker: it sleeps on the close queue's wake-up word. */
static void wake_ticker(void)
{
	__atomic_store_n(&sm_meter.q.wake, 1, __ATOMIC_RELEASE);
	futex(&sm_meter.q.wake, FUTEX_WAKE, 1, NULL);
}

/* Wait until *w is no longer was, or until (CLOCK_MONOTONIC) has passed;
 * true when it changed. */
static bool wait_change(uint32_t *w, uint32_t was, const struct timespec *until)
{
	while (__atomic_load_n(w, __ATOMIC_ACQUIRE) == was &&
	       (futex(w, FUTEX_WAIT_BITSET, was, until) == 0 ||
		errno != ETIMEDOUT))
		;
	return __atomic_load_n(w, __ATOMIC_ACQUIRE) != was;
}

static bool ticker_running(void);

/* Set when the main thread ended (pthread_exit, a raw exit system call),
 * or when the last thread ended by a raw exit (atomic; see "The ticker as
 * the process's last thread" below). */
static uint32_t main_ended SM_FORK_DATA;
/* The thread the process started with (a fork child's: the thread that
 * forked), whose pthread_exit leaves the others running. */
static pthread_t main_thread SM_FORK_DATA;

/*
 * The program's threads other than the one ending it, counted as its
 * exit or exec record is made (on_ticker: the ticker makes it while the
 * thread that asked waits; else that thread makes it, beside the ticker
 * if one runs).  What they move after the record is in none (README
 * Limits: up to 24.7 MB in a helper's test); the record says how many
 * there were, other_threads.  0 when it cannot tell.
 */
static void note_other_threads(bool on_ticker)
{
	long t = procns_threads();
	long mine = on_ticker ? 2 : 1 + (ticker_running() ? 1 : 0);

	/* A main thread that ended stays in the count, a zombie, until the
	 * process ends: no thread that moves bytes (a helper's program said
	 * other_threads=1 with none left). */
	if (__atomic_load_n(&main_ended, __ATOMIC_ACQUIRE) &&
	    (on_ticker || !pthread_equal(pthread_self(), main_thread)))
		mine++;

	sm_meter.other_threads = t > mine ? (uint32_t)(t - mine) : 0;
}

/* Make the final record asked for (the caller holds the tick lock). */
static void serve_final(uint32_t req, struct meter_time now)
{
	note_other_threads(true);
	if (req == 2)
		meter_exec_into(&sm_meter, now, &tk.out);
	else
		meter_exit_into(&sm_meter, now, &tk.out);
}

/* The final record is written (the caller holds the write lock): end the
 * state file, then let the caller of _exit or exec go on. */
static void final_written(uint32_t req)
{
	sm_durable_end(req == 2 ? SM_END_EXEC : SM_END_EXIT);
	__atomic_store_n(&tk.final_req, 0, __ATOMIC_RELEASE);
	__atomic_fetch_add(&final_done, 1, __ATOMIC_ACQ_REL);
	futex(&final_done, FUTEX_WAKE, INT32_MAX, NULL);
}

/*
 * The ticker as the process's last thread.  glibc ends a process with
 * exit(0) when its last thread returns or calls pthread_exit, but the
 * ticker is one of its threads: a program whose main thread calls
 * pthread_exit and whose workers then end (a POSIX idiom), or whose only
 * thread ends with a raw exit system call, would live on with the ticker
 * alone, for good.  The ticker looks at /proc/PID/stat once a second,
 * and from every 20 ms once the main thread has ended (main_ended), and when
 * the main thread is gone and it is the one thread left, it writes the
 * exit record and ends the process as its last thread would have: with
 * the main thread's exit status (what glibc's exit(0) gives after
 * pthread_exit, what a raw exit gave), or the status of a last thread's
 * raw exit made through syscall() (last_raw_exit).  It ends with the exit
 * system call too, not exit_group, so the kernel reports what it would
 * have: the last thread's status (Linux 6.x), or the main thread's (older
 * kernels, which then ignore ours).  What it cannot do is run the
 * program's atexit handlers: the program's fds were closed with its last
 * thread (the ticker keeps a table of its own).
 */
#define ALONE_CHECK_NS 1000000000ull
#define ALONE_FAST_NS 20000000ull
#define ALONE_FAST_MAX_NS 320000000ull

/* See sm_confine_filter: forbidden to every thread (strict mode can only
 * be the caller's; TSYNC: all), or to this one and the threads and
 * children it makes after. */
static uint32_t futex_forbidden;
static __thread bool futex_forbidden_here
	__attribute__((tls_model("initial-exec")));
/* Some thread's filter forbids them (atomic): threads it makes after
 * carry the filter without futex_forbidden_here. */
static uint32_t futex_forbidden_some;

/* A sandboxed thread whose filter forbids the futex calls that ask the
 * ticker for a final record (sm_confine_filter). */
static bool may_not_ask_ticker(void)
{
	/* (A thread made after such a filter carries it unmarked, and is
	 * taken for unbound: its exit asks.  Taking every quiet thread for
	 * bound instead would leave the exit record of a main thread the
	 * filter never bound to recovery: t_strict_filter_exit's thread
	 * case.  README, Limits.) */
	return sm_quiet() &&
	       (futex_forbidden_here ||
		__atomic_load_n(&futex_forbidden, __ATOMIC_ACQUIRE));
}
/* The ticker's: when to look next, and how often while the main thread
 * is gone (20 ms, doubled at each look up to 320 ms: a daemon whose main
 * thread ended long ago is not woken 50 times a second for it). */
static uint64_t alone_next_ns, alone_fast_ns = ALONE_FAST_NS;

int *sm_dl_lock(void)
{
	return &tk.dl_lock;
}

void sm_thread_exits(void)
{
	if (!pthread_equal(pthread_self(), main_thread))
		return;
	/* The ticker starts looking often. */
	__atomic_store_n(&main_ended, 1, __ATOMIC_RELEASE);
	wake_ticker();
}

/*
 * The status of a last thread that ended with the raw exit system call
 * made through libc's syscall() (-1: none seen).  Linux (6.x here) gives
 * a process whose threads all ended with exit, not exit_group, the status
 * of the last one to end, not the main thread's: a main that called
 * pthread_exit and a worker that then made syscall(SYS_exit, 9) end with
 * 9.  The ticker, the last thread then, reads only the main thread's
 * status from /proc (0 there), so it takes this one when there is one.
 * A raw exit is the last program thread's when glibc's thread count
 * (which the ticker is out of, and which raw exits never lower) holds no
 * thread but it and those that raw-exited before it.  Raw exits made
 * other ways (inline assembly) are not seen: the main thread's status,
 * as before.
 */
static int32_t last_raw_exit SM_FORK_DATA = -1;
static uint32_t raw_exits SM_FORK_DATA; /* raw exits seen (syscall(SYS_exit)) */
/* glibc's thread count (see uncount_ticker), found in the constructor:
 * dlsym takes the loader's lock, which a dlopen holds while constructors
 * run (one that starts a thread that starts the ticker waited for good). */
static unsigned int *glibc_nthreads;

/*
 * The ticker leaves before the process's last exit (ticker_leaves), so that
 * the program's fds close when its memory has gone, as without us.  The
 * ticker keeps an fd table of its own (core/progfd.h), so the program's
 * table was closed with the thread that called exit, and the process's end
 * (its SIGCHLD, its wait status) came only once the ticker had died too,
 * after tearing down the whole address space: a peer saw the end of file
 * milliseconds before the parent saw the child end (a 30 MB process: 2.4
 * ms against 13 us without us).  vsftpd's session process reads the end of
 * file of its logged-in child as a protocol error when SIGCHLD has not come
 * first, and took its error path ("500 OOPS" to a client already gone) in
 * 45 of 50 sessions under us, 3 of 50 without (a helper's sweep).
 *
 * The caller of the exit waits for the ticker's end through the word the
 * kernel clears when it ends (CLONE_CHILD_CLEARTID: glibc's descriptor's
 * tid), whose place glibc publishes for libthread_db (GLIBC_PRIVATE):
 * -1 when it is not found or does not hold the tid, and the ticker then
 * stays, as before.  Only futex waits, as the exit path makes already.
 */
static long tid_field = -1;

static void find_tid_field(void)
{
	const uint32_t *d = dlsym(RTLD_DEFAULT, "_thread_db_pthread_tid");
	long tid = SM_SYSCALL(SYS_gettid);

	if (d && d[0] == 32 && d[1] == 1 && d[2] + 4 <= 4096 &&
	    *(const int32_t *)((const char *)pthread_self() + d[2]) == tid)
		tid_field = (long)d[2];
}

void sm_raw_thread_exit(long status)
{
	unsigned int *n = glibc_nthreads;
	uint32_t before;

	/* A vfork child (or a clone on our memory) ends itself only. */
	if (sm_foreign_process())
		return;
	/* The main thread ends here and stays a zombie in /proc's thread
	 * count (note_other_threads), whether or not others run on. */
	if (pthread_equal(pthread_self(), main_thread))
		__atomic_store_n(&main_ended, 1, __ATOMIC_RELEASE);
	before = __atomic_fetch_add(&raw_exits, 1, __ATOMIC_ACQ_REL);
	if (!n || __atomic_load_n(n, __ATOMIC_ACQUIRE) > before + 1)
		return;
	__atomic_store_n(&last_raw_exit, (int32_t)(status & 0xff),
			 __ATOMIC_RELEASE);
	/* The ticker looks often from now (as after main's pthread_exit),
	 * not once a second; woken at once but on a sandboxed thread (a
	 * futex the program did not make: seccomp strict mode kills for
	 * it, quiet.h). */
	__atomic_store_n(&main_ended, 1, __ATOMIC_RELEASE);
	if (!sm_quiet())
		wake_ticker();
}

static bool lock_bounded(pthread_mutex_t *lock, long ms);
static void sm_exit_handler(void);
static void fini_record(void);

/* The main thread's exit status when it is gone and the ticker is the
 * only thread left; -2 when it is gone and other threads are not; -1
 * otherwise (or when /proc cannot say).  The file is
 * opened in the ticker's own fd table (progfd_detached), else from a
 * child with a table of its own (progfd_run). */
static int read_alone_status(void *arg);

/* The stat file, kept open in the ticker's own fd table (-1: not yet),
 * and whose it is (a fork child's ticker opens its own). */
static int stat_fd = -1;
static long stat_fd_pid;
/* An alone status: the main thread was killed by the signal in the low
 * bits. */
#define ALONE_SIGNALLED 0x10000

static int alone_status(void)
{
	int status = -1;

	if (progfd_detached())
		return read_alone_status(&status);
	progfd_run(read_alone_status, &status);
	return status;
}

static int read_alone_status(void *arg)
{
	int *out = arg;
	char buf[1024], path[48] = "/proc/", digits[24], *p;
	long fd, n, threads = 0, code = 0, pid = sm_meter.pid;
	unsigned field, nd = 0;

	/* /proc/PID, not self: progfd_run's child is a process of its own. */
	do {
		digits[nd++] = (char)('0' + pid % 10);
		pid /= 10;
	} while (pid && nd < sizeof(digits));
	for (p = path + 6; nd; nd--)
		*p++ = digits[nd - 1];
	memcpy(p, "/stat", sizeof("/stat"));
	/* In the ticker's own table the file stays open, read again from
	 * its start each time: a program that lowers RLIMIT_NOFILE to 0
	 * (vsftpd's sandboxed children) leaves no fd to open it with, and
	 * its raw-exited main thread would never be seen. */
	fd = progfd_detached() && stat_fd_pid == sm_meter.pid ? stat_fd : -1;
	if (fd < 0)
		fd = raw_syscall6(SYS_openat, AT_FDCWD, (long)path,
				  O_RDONLY | O_CLOEXEC, 0, 0, 0);
	if (fd < 0)
		return -1;
	n = raw_syscall6(SYS_pread64, fd, (long)buf, sizeof(buf) - 1, 0, 0, 0);
	if (progfd_detached()) {
		stat_fd = (int)fd;
		stat_fd_pid = sm_meter.pid;
	} else {
		raw_syscall6(SYS_close, fd, 0, 0, 0, 0, 0);
	}
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	/* After the name (which may hold anything): " S ppid ...". */
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ' || (p[2] != 'Z' && p[2] != 'X'))
		return -1;
	/* Field 3 is the state; 20 num_threads; 52 exit_code (wait()'s
	 * form, Linux 3.5). */
	for (field = 3, p += 2; *p && field < 52; p++)
		if (*p == ' ') {
			field++;
			if (field == 20)
				threads = strtol(p + 1, NULL, 10);
			if (field == 52)
				code = strtol(p + 1, NULL, 10);
		}
	if (threads != 2) {
		*out = -2; /* the main thread is gone, others are not */
		return *out;
	}
	/* wait()'s form: a signal that ended the thread (a seccomp filter's
	 * SECCOMP_RET_KILL_THREAD: SIGSYS) ends the process too, as it
	 * would have ended it alone. */
	*out = field != 52		? 0
	       : (code & 0x7f) != 0 ? ALONE_SIGNALLED | (int)(code & 0x7f)
				    : (int)((code >> 8) & 0xff);
	return *out;
}

/* How long the exit waits at most for a batch being written that keeps
 * moving on (lock_while_moving).  Its own record may then wait for its
 * turn at such a log too (up to 5 s: sink.c's ROTATION_WAIT_MS): 10 s
 * here made a helper's exits on two cores loaded to 10 runnable threads
 * take 10 s (median) and up to 19 s, where 2 s took 2-8 s. */
#define EXIT_WAIT_MOVING_MS 6000

/*
 * Take the write lock at exit: 2 s, as lock_bounded, and 2 s more each
 * time the batch being written moved on meanwhile (a part of it reached
 * the log: meter.flight_parts), up to EXIT_WAIT_MOVING_MS.  Three
 * processes sharing a log rotated at 4 KiB (each rotation renames every
 * file of the set) took longer than 2 s for one batch on two loaded
 * cores, and their exits gave up: no exit record, and up to half of the
 * close records in no count.  A write stuck for good (a hung file
 * system, a lock never let go) moves nothing: 2 s, as before.  *waited:
 * the milliseconds it waited, when it gives up.
 */
static bool lock_while_moving(pthread_mutex_t *lock, long *waited)
{
	uint64_t parts = __atomic_load_n(&sm_meter.flight_parts,
					 __ATOMIC_RELAXED),
		 now;

	for (*waited = 0;;) {
		if (lock_bounded(lock, 2000))
			return true;
		*waited += 2000;
		now = __atomic_load_n(&sm_meter.flight_parts,
				      __ATOMIC_RELAXED);
		if (now == parts || *waited >= EXIT_WAIT_MOVING_MS)
			return false;
		parts = now;
	}
}

/*
 * The exit record, made and written here (the caller holds tick_lock,
 * which this lets go): after the ticker's last batch, and made once it is
 * written, so that the close records a log refused there are counted as
 * dropped in it (made before, it said 992 where 1,512 of a process's
 * records were dropped: shared rotation under load).  A batch that does
 * not move for 2 s (lock_while_moving) leaves the record to recovery:
 * the state file keeps the numbers, marked as an exit's.
 */
static void exit_record_after_last_batch(struct sbuf *out)
{
	struct meter_time now;
	long waited;

	if (!lock_while_moving(&tk.write_lock, &waited)) {
		char msg[SINK_PATH_CAP + 256];

		pthread_mutex_unlock(&tk.tick_lock);
		/* The state file keeps the numbers, and says that the
		 * process exited: recovery writes its exit record
		 * ("end":"exit-recovered"), and the close records of the
		 * batch that was not written count as dropped there. */
		sm_durable_end(SM_END_EXIT_UNWRITTEN);
		/* (Not on a stderr that the log is: that write is the one
		 * stuck.) */
		if (!sm_meter.sink.to_stderr && !sm_in_handler()) {
			bool kept = sm_meter.sink.kept &&
				    __atomic_load_n(sm_meter.sink.kept,
						    __ATOMIC_RELAXED);

			snprintf(msg, sizeof(msg),
				 "sockmeter: log %s: a batch was still being "
				 "written %ld s after the process began to "
				 "exit; %s",
				 sm_meter.sink.path, waited / 1000,
				 kept ? "its exit record is left to `sockmeter "
					"recover` (the state file keeps the "
					"numbers)"
				      : "its exit record and that batch's "
					"records are lost (no state file)");
			sm_warn(msg);
		}
		return;
	}
	now = now_both();
	calibrate(now);
	meter_exit_into(&sm_meter, now, out);
	pthread_mutex_unlock(&tk.tick_lock);
	sm_durable_ending();
	/* A stderr pipe nobody reads must not hold the exit for good (a
	 * helper's host hung in exit(), its own output lost with it): 2 s,
	 * as for the locks; what did not fit is lost (docs/log.md). */
	sink_stderr_wait(2000);
	meter_flush(&sm_meter, out);
	sink_stderr_wait(-1);
	sm_durable_end(SM_END_EXIT);
	pthread_mutex_unlock(&tk.write_lock);
}

/* Write the exit record, then end the ticker, the last thread: the
 * process ends with status. */
static void end_as_last_thread(int status)
{
	if (lock_bounded(&tk.tick_lock, 2000)) {
		sm_meter.other_threads = 0; /* the last one */
		exit_record_after_last_batch(&tk.out);
	}
	if (status & ALONE_SIGNALLED) {
		/* Die of it: its default action, unblocked, sent to the
		 * ticker (a core-dumping one dumps the ticker's state). */
		struct {
			void *handler;
			unsigned long flags;
			void *restorer;
			uint64_t mask;
		} dfl = { 0 };
		uint64_t one;
		int sig = status & 0x7f;

		one = 1ull << (sig - 1);
		raw_syscall6(SYS_rt_sigaction, sig, (long)&dfl, 0, 8, 0, 0);
		raw_syscall6(SYS_rt_sigprocmask, SIG_UNBLOCK, (long)&one, 0, 8,
			     0, 0);
		raw_syscall6(SYS_tgkill, sm_meter.pid,
			     raw_syscall6(SYS_gettid, 0, 0, 0, 0, 0, 0), sig, 0,
			     0, 0);
		status = 128 + sig;
	}
	for (;;)
		raw_syscall6(SYS_exit, status, 0, 0, 0, 0, 0);
}

/* When the next look is due, the ticker's sleep ends by then. */
static uint64_t check_alone(uint64_t mono_ns, uint64_t next)
{
	bool fast = __atomic_load_n(&main_ended, __ATOMIC_ACQUIRE);
	int status;

	if (fast && alone_next_ns > mono_ns + alone_fast_ns)
		alone_next_ns = mono_ns; /* woken by sm_thread_exits */
	if (mono_ns >= alone_next_ns) {
		int32_t raw;

		status = alone_status();
		/* Read after: a raw exit stores it before the thread ends. */
		raw = __atomic_load_n(&last_raw_exit, __ATOMIC_ACQUIRE);
		if (status >= 0 && !(status & ALONE_SIGNALLED) && raw >= 0)
			status = raw;
		if (status >= 0)
			end_as_last_thread(status);
		if (status == -2) /* a raw exit of the main thread */
			__atomic_store_n(&main_ended, 1, __ATOMIC_RELEASE);
		fast = fast || status == -2;
		alone_next_ns = mono_ns + (fast ? alone_fast_ns : ALONE_CHECK_NS);
		if (fast && alone_fast_ns < ALONE_FAST_MAX_NS)
			alone_fast_ns *= 2;
	}
	return next < alone_next_ns ? next : alone_next_ns;
}

/* Repeat on the ticker the credential call a program thread made
 * (sm_creds_mirror), when one waits. */
static void serve_cred(void)
{
	uint32_t ready = CRED_READY;

	if (__atomic_load_n(&tk.cred_req, __ATOMIC_ACQUIRE) != CRED_READY ||
	    !__atomic_compare_exchange_n(&tk.cred_req, &ready, CRED_SERVING,
					 false, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE))
		return;
	if (tk.cred_nr == SYS_capset)
		raw_syscall6(SYS_capset, (long)&tk.cred_hdr,
			     (long)tk.cred_data, 0, 0, 0, 0);
	else
		raw_syscall6(tk.cred_nr, tk.cred_arg[0], tk.cred_arg[1],
			     tk.cred_arg[2], tk.cred_arg[3], 0, 0);
	__atomic_fetch_add(&tk.cred_done, 1, __ATOMIC_ACQ_REL);
	__atomic_store_n(&tk.cred_stuck, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&tk.cred_req, CRED_FREE, __ATOMIC_RELEASE);
	futex(&tk.cred_done, FUTEX_WAKE, INT32_MAX, NULL);
}

#define EXEC_HOLD_NS 5000000000ull

/*
 * A socket the program made, accepted or dup'ed on an fd at or above the
 * table's capacity ([track] max_fds, or the default of fdtab_capacity) is
 * not metered: the first one is noted here (any thread, signal handlers
 * too) and said once per process (on the ticker's page, zeroes in a fork
 * child, which says its own), by the ticker or by the thread that writes
 * the exit record itself (beyond_say; not in a signal handler, nor under
 * tk.tick_lock, which fork waits for), so that a capacity too small is
 * never a silent loss.
 */
static void beyond_note(int fd)
{
	int none = 0;

	/* Looked at first: a busy server beyond its table writes the line
	 * once, not at every accept. */
	if (!__atomic_load_n(&tk.beyond_fd1, __ATOMIC_RELAXED))
		__atomic_compare_exchange_n(&tk.beyond_fd1, &none, fd + 1,
					    false, __ATOMIC_RELAXED,
					    __ATOMIC_RELAXED);
}

static void beyond_say(void)
{
	int fd = __atomic_load_n(&tk.beyond_fd1, __ATOMIC_RELAXED) - 1;
	char msg[256];

	if (fd < 0 || __atomic_load_n(&tk.beyond_said, __ATOMIC_RELAXED) ||
	    __atomic_exchange_n(&tk.beyond_said, 1, __ATOMIC_RELAXED))
		return;
	snprintf(msg, sizeof(msg),
		 "sockmeter: %s: fd %d is beyond the %u fd%s metered: its "
		 "traffic, and that of every fd from %u up, is not counted "
		 "(raise [track] max_fds, or SOCKMETER_MAX_FDS)",
		 sm_meter.prog, fd, (unsigned)sm_meter.tab.cap,
		 sm_meter.tab.cap == 1 ? "" : "s", (unsigned)sm_meter.tab.cap);
	sm_warn(msg);
}

/*
 * The ticker is created by whichever program thread first needed it and
 * inherits that thread's scheduling policy.  A program run under `chrt -f`
 * (or one that made that thread SCHED_FIFO or SCHED_RR) would then have our
 * housekeeping run at real-time priority: a batch of close records (a few
 * milliseconds of formatting) would preempt every ordinary thread on its
 * CPU, the program's own included, and real-time throttling would count it
 * against the program's budget.  So the ticker moves itself to the
 * ordinary policy (priority 0, the nice value it inherited): it runs when
 * the program's real-time threads leave it a CPU, as any background work
 * would.  An ordinary or batch policy is left as it was; so is the CPU
 * affinity (taskset's choice for the whole program; a thread pinned by the
 * program itself passes its pin on, which keeps our thread on the CPUs the
 * program chose).  Failure changes nothing.  Not on a thread a seccomp
 * filter binds (quiet.h; PR_GET_SECCOMP for one the process started
 * with): the filter may forbid these calls, with death.
 */
static void ticker_not_realtime(void)
{
	struct sched_param sp = { 0 };
	long pol;

	if (sm_quiet())
		return;
	pol = raw_syscall6(SYS_sched_getscheduler, 0, 0, 0, 0, 0, 0);
	if (pol < 0)
		return;
	pol &= ~(long)SCHED_RESET_ON_FORK;
	/* Nor under a filter the process started with (systemd's
	 * SystemCallFilter=~@resources kills for sched_setscheduler, in a
	 * unit that may also set CPUSchedulingPolicy=fifo): the ticker
	 * then keeps the policy it inherited. */
	if ((pol == SCHED_FIFO || pol == SCHED_RR) &&
	    raw_syscall6(SYS_prctl, PR_GET_SECCOMP, 0, 0, 0, 0, 0) == 0)
		raw_syscall6(SYS_sched_setscheduler, 0, SCHED_OTHER, (long)&sp,
			     0, 0, 0);
}

/*
 * Between two files of a recovery scan (sm_durable_chores): when many of
 * this process's close records wait, a tick of its own that writes them.
 * The scan runs on the ticker, and recovering a dead process's file takes
 * tens of milliseconds (14 files of killed `churngen churn` runs, 19 MB
 * each: 1.1 s): meanwhile a busy server filled the 8,192-record queue and
 * dropped its records, 32,858 of 111,087 in a 3-s run (2026-12-05).  A
 * final record asked for ends the scan instead (its stop word).  A
 * credential call waiting to be repeated here is served first: a daemon
 * that drops capabilities about when the scan starts (a second in) would
 * wait for the whole scan (sm_creds_mirror gives up after 2 s).
 */
static void catch_up(void *unused)
{
	struct meter_time now;
	int rounds = 0;

	(void)unused;
	serve_cred();
	while (closeq_pending(&sm_meter.q) >= CLOSEQ_WAKE_AT &&
	       !__atomic_load_n(&tk.final_req, __ATOMIC_ACQUIRE) &&
	       !__atomic_load_n(&tk.exec_hold, __ATOMIC_ACQUIRE) &&
	       rounds++ < 16) {
		pthread_mutex_lock(&tk.tick_lock);
		now = now_both();
		calibrate(now);
		(void)meter_tick_into(&sm_meter, now, &tk.out);
		pthread_mutex_lock(&tk.write_lock);
		pthread_mutex_unlock(&tk.tick_lock);
		meter_flush(&sm_meter, &tk.out);
		pthread_mutex_unlock(&tk.write_lock);
	}
}

/*
 * Whether the ticker may leave at an exit: its tid word is known, it can
 * be put back into glibc's thread count, and its stack is ours (glibc
 * reuses or unmaps a stack of its own once the tid word is clear, which
 * await_ticker_gone reads).  Not bound by a filter (quiet.h).
 */
static bool ticker_may_leave(void)
{
	return tid_field >= 0 && glibc_nthreads &&
	       __atomic_load_n(&tk.own_stack, __ATOMIC_ACQUIRE) &&
	       __atomic_load_n(&tk.uncounted, __ATOMIC_ACQUIRE) && !sm_quiet();
}

/* Back into glibc's thread count, only while it is not zero: at zero the
 * exit under way is glibc's own for its last thread (a main that called
 * pthread_exit, its last worker returning), and the ticker's return would
 * bring the count to zero again, and glibc call exit(0) on the ticker. */
static bool recount_ticker(void)
{
	unsigned int n = __atomic_load_n(glibc_nthreads, __ATOMIC_ACQUIRE);

	do {
		if (n == 0)
			return false;
	} while (!__atomic_compare_exchange_n(glibc_nthreads, &n, n + 1, false,
					      __ATOMIC_ACQ_REL,
					      __ATOMIC_ACQUIRE));
	return true;
}

/* On the ticker, at an exit's record: whether it leaves (it may, and it is
 * back in glibc's count); if so, its tid word is published for the
 * caller's wait, before the caller is let go. */
static bool ready_to_leave(void)
{
	if (!ticker_may_leave() || !recount_ticker())
		return false;
	__atomic_store_n(&tk.tid_word,
			 (uint32_t *)((char *)pthread_self() + tid_field),
			 __ATOMIC_RELEASE);
	return true;
}

/*
 * The exit record is written: the ticker ends, marked gone first so that
 * what comes after in this process (another exit handler's exec or
 * credential call) does its own work and waits for no ticker.  It ends
 * through glibc (its caller returns from ticker_main), back in glibc's
 * thread count first (recount_ticker): glibc marks it exiting, so that a
 * setuid made by another thread meanwhile does not wait for it for good
 * (a raw exit left it on glibc's list, alive to glibc: a review's program
 * hung in __nptl_setxid), and takes it off its list.  The kernel clears
 * its tid word as it ends, which the caller of the exit waits for
 * (await_ticker_gone).
 */
static void ticker_leaves(void)
{
	__atomic_store_n(&tk.alive, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&tk.start_failed, 1, __ATOMIC_RELEASE);
	serve_cred(); /* one asked for before the marks */
}

/* *t = CLOCK_MONOTONIC's now + ns (ns < 1 s). */
static void mono_in(struct timespec *t, long ns)
{
	clock_gettime(CLOCK_MONOTONIC, t);
	t->tv_nsec += ns;
	if (t->tv_nsec >= 1000000000) {
		t->tv_sec++;
		t->tv_nsec -= 1000000000;
	}
}

/* The caller of an exit whose record the ticker wrote: until the ticker
 * has ended (20 ms at most), so that the process's own end comes last. */
static void await_ticker_gone(void)
{
	uint32_t *w = __atomic_load_n(&tk.tid_word, __ATOMIC_ACQUIRE);
	struct timespec until, slice;
	uint32_t tid;

	if (!w || sm_ticker_thread)
		return;
	mono_in(&until, 20000000);
	while ((tid = __atomic_load_n(w, __ATOMIC_ACQUIRE)) != 0) {
		/* The kernel's wake is a shared one, which a private wait
		 * does not get: slices of 50 us. */
		mono_in(&slice, 50000);
		if (slice.tv_sec > until.tv_sec ||
		    (slice.tv_sec == until.tv_sec &&
		     slice.tv_nsec >= until.tv_nsec))
			return;
		futex(w, FUTEX_WAIT_BITSET, tid, &slice);
	}
}

static bool ticker_running(void);

/* exit(): its caller wrote the exit record itself (fini_record); the
 * ticker is asked to leave as after an _exit's record (final_req 3), and
 * waited for, 20 ms at most each.  Not asked while another request is
 * under way, nor on a sandboxed thread (quiet.h: no call it need not),
 * nor in a signal handler (see final_record_made's tk.stay). */
static void ticker_leave_now(void)
{
	uint32_t done, none = 0, leave = 3;
	struct timespec until;

	/* (ticker_may_leave here: this thread's quiet.h.) */
	if (sm_ticker_thread || sm_in_handler() || !ticker_may_leave() ||
	    !ticker_running() || !__atomic_load_n(&tk.alive, __ATOMIC_ACQUIRE))
		return;
	done = __atomic_load_n(&final_done, __ATOMIC_ACQUIRE);
	if (!__atomic_compare_exchange_n(&tk.final_req, &none, 3, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return;
	mono_in(&until, 20000000);
	wake_ticker();
	if (wait_change(&final_done, done, &until)) {
		await_ticker_gone();
		return;
	}
	/* Not taken in time (a recovery scan's file): taken back, and the
	 * ticker stays; taken meanwhile: waited for. */
	if (__atomic_compare_exchange_n(&tk.final_req, &leave, 0, false,
					__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return;
	until.tv_sec++;
	if (wait_change(&final_done, done, &until))
		await_ticker_gone();
}

static void *ticker_main(void *arg)
{
	(void)arg;
	/* Named from inside: pthread_setname_np on another thread opens
	 * /proc/.../comm, an fd a concurrent fork would inherit. */
	raw_syscall6(SYS_prctl, PR_SET_NAME, (long)"sockmeter", 0, 0, 0, 0);
	sm_ticker_thread = true;
	ticker_not_realtime();
	__atomic_store_n(&tk.alive, 1, __ATOMIC_RELEASE);
	/* Our files live in an fd table of our own, out of the program's
	 * way (core/progfd.h); else each batch is written from a child. */
	progfd_detach();
	/* The stat file of the last-thread check, opened while fds may
	 * still be had (read_alone_status). */
	if (progfd_detached()) {
		int status;

		read_alone_status(&status);
	}
	for (;;) {
		struct meter_time now;
		uint64_t next;
		uint32_t req, pin, leave = 3;
		bool more, leaving = false;

		/* The exit record is out, written by the caller of exit()
		 * (ticker_leave_now): leave, unless taken back. */
		if (__atomic_load_n(&tk.final_req, __ATOMIC_ACQUIRE) == 3 &&
		    __atomic_compare_exchange_n(&tk.final_req, &leave, 0, false,
						__ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE)) {
			leaving = ready_to_leave();
			__atomic_fetch_add(&final_done, 1, __ATOMIC_ACQ_REL);
			futex(&final_done, FUTEX_WAKE, INT32_MAX, NULL);
			if (leaving) {
				ticker_leaves();
				return NULL;
			}
		}
		serve_cred();
		if (__atomic_load_n(&tk.exec_hold, __ATOMIC_ACQUIRE) &&
		    now_both().mono_ns - tk.exec_hold_ns > EXEC_HOLD_NS)
			__atomic_store_n(&tk.exec_hold, 0, __ATOMIC_RELEASE);
		if (__atomic_load_n(&tk.exec_hold, __ATOMIC_ACQUIRE) &&
		    !__atomic_load_n(&tk.final_req, __ATOMIC_ACQUIRE)) {
			/* The closes made since the exec record are in
			 * neither it nor its totals: written only if the
			 * exec fails, in this image's later records. */
			struct timespec poll_ns = { 0, 10000000 };

			futex(&tk.exec_hold, FUTEX_WAIT, 1, &poll_ns);
			continue;
		}
		pthread_mutex_lock(&tk.tick_lock);
		now = now_both();
		calibrate(now);
		req = __atomic_load_n(&tk.final_req, __ATOMIC_ACQUIRE);
		if (req == 3) { /* to leave: at the top */
			pthread_mutex_unlock(&tk.tick_lock);
			continue;
		}
		if (req) {
			serve_final(req, now);
			next = now.mono_ns + 1000000000ull;
			more = false;
		} else {
			next = meter_tick_into(&sm_meter, now, &tk.out);
			more = meter_more(&sm_meter);
		}
		pthread_mutex_lock(&tk.write_lock);
		pthread_mutex_unlock(&tk.tick_lock);
		if (req)
			sm_durable_ending();
		meter_flush(&sm_meter, &tk.out);
		release_held(); /* a quiet program thread's first tracked fd */
		beyond_say();
		sm_durable_say_refused();
		sm_durable_say_incomplete();
		meter_say_no_memory(&sm_meter);
		if (req == 2) {
			tk.exec_hold_ns = now_both().mono_ns;
			__atomic_store_n(&tk.exec_hold, 1, __ATOMIC_RELEASE);
		}
		/* An exit's record: this thread leaves once it is written
		 * (ticker_leaves), and the caller waits for that. */
		if (req == 1 && !__atomic_load_n(&tk.stay, __ATOMIC_ACQUIRE))
			leaving = ready_to_leave();
		if (req)
			final_written(req);
		if ((pin = __atomic_exchange_n(&tk.pin_req, 0,
					       __ATOMIC_ACQ_REL))) {
			meter_pin_log(&sm_meter, pin == PIN_NOW);
			sm_durable_pin_dir();
			__atomic_fetch_add(&tk.pin_done, 1, __ATOMIC_ACQ_REL);
			futex(&tk.pin_done, FUTEX_WAKE, INT32_MAX, NULL);
		}
		pthread_mutex_unlock(&tk.write_lock);
		if (leaving) {
			ticker_leaves();
			return NULL;
		}
		/* Every thread sandboxed (quiet.h): no recovery scan, no
		 * look at /proc. */
		if (!sm_quiet()) {
			sm_durable_chores(now.mono_ns, &tk.final_req,
					  catch_up, NULL);
			sm_durable_watch(now.mono_ns);
			next = check_alone(now.mono_ns, next);
		}
		/* Until the next tick, or until a busy closer asks for a
		 * drain (closeq_push wakes us), or _exit or exec asks for the
		 * final record (ask_ticker wakes us the same way). */
		if (!more)
			closeq_wait(&sm_meter.q, next);
	}
	return NULL;
}

#define TICKER_STACK (256 * 1024)
#define STACK_GUARD 4096

/*
 * The ticker's stack: a mapping of ours, so that a host whose static TLS
 * does not fit in it can be told apart (start_ticker falls back to one of
 * libc's).  Not MADV_WIPEONFORK, nor MADV_DONTFORK: the thread's
 * descriptor sits at the top of this stack, on libc's list of threads, and
 * a child made without fork's handlers (a raw clone: vsftpd's isolated
 * sessions) keeps that list as it was: wiped, its next setgroups walked
 * into zeroes and died of SIGSEGV (glibc's setxid); unmapped, a fork
 * child's libc unlinking the forking thread wrote into nothing.  A fork
 * copies its written pages' tables, as it would libc's stack's.  The
 * lowest page is a guard.  NULL when it cannot be mapped.
 */
static void *ticker_stack(void)
{
	char *p = mmap(NULL, STACK_GUARD + TICKER_STACK, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	mprotect(p, STACK_GUARD, PROT_NONE);
	return p + STACK_GUARD;
}

/*
 * glibc ends a process with exit(0) when the thread count it keeps
 * (__nptl_nthreads) reaches zero as a thread ends: a main that called
 * pthread_exit and whose workers then return, a fork child's only thread
 * (forked from a thread other than main) returning from its start
 * routine.  The ticker is one of its threads, so that exit never came:
 * the ticker ended the process itself (check_alone), up to a second late
 * and without the program's atexit handlers or stdio flush (output still
 * in a FILE buffer was lost).  So the ticker is taken out of that count
 * once it runs: it never ends through glibc (it loops until the process
 * ends, or leaves with a raw exit), and a fork child's count starts again
 * at one.  The symbol is glibc's (GLIBC_PRIVATE, read by libthread_db);
 * without it, check_alone remains the only way.
 */
static void uncount_ticker(void)
{
	unsigned int *n = glibc_nthreads;

	if (n && __atomic_load_n(n, __ATOMIC_ACQUIRE) > 1) {
		__atomic_fetch_sub(n, 1, __ATOMIC_ACQ_REL);
		__atomic_store_n(&tk.uncounted, true, __ATOMIC_RELEASE);
	}
}

static bool threadless; /* see must_stay_single_threaded */

/* Create the ticker on stack (NULL: one of libc's).  Returns 0 or an
 * error number. */
static int start_ticker(void *stack)
{
	pthread_attr_t attr;
	pthread_t tid;
	int r;

	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	r = stack ? pthread_attr_setstack(&attr, stack, TICKER_STACK)
		  : pthread_attr_setstacksize(&attr, TICKER_STACK);
	if (r == 0)
		r = pthread_create(&tid, &attr, ticker_main, NULL);
	pthread_attr_destroy(&attr);
	if (r == 0)
		uncount_ticker();
	return r;
}

/* Start the ticker; the host's signals are never delivered to it.  Not
 * async-signal-safe (pthread_create): only through want_ticker. */
static void ensure_ticker(void)
{
	sigset_t all, old;
	int expect = 0, saved = errno;
	char *stack;

	release_held();
	if (__atomic_load_n(&tk.started, __ATOMIC_ACQUIRE))
		return;
	/* Signals blocked before the ticker is marked started: a handler
	 * that ended the process on this thread between the two would ask
	 * (sm_final_record) a ticker this thread was never to make. */
	sigfillset(&all);
	raw_sigmask(SIG_SETMASK, &all, &old);
	if (!__atomic_compare_exchange_n(&tk.started, &expect, 1, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		raw_sigmask(SIG_SETMASK, &old, NULL);
		errno = saved;
		return;
	}
	if (threadless) {
		/* As a ticker that could not start, without the warning. */
		__atomic_store_n(&tk.start_failed, 1, __ATOMIC_RELEASE);
		raw_sigmask(SIG_SETMASK, &old, NULL);
		errno = saved;
		return;
	}
	stack = ticker_stack();
	if (stack && start_ticker(stack) != 0) {
		/* Refused (a host whose static TLS does not fit in it): once
		 * more on one of libc's. */
		munmap(stack - STACK_GUARD, STACK_GUARD + TICKER_STACK);
		stack = NULL;
	}
	/* (Read by the ticker only at an exit, long after.) */
	if (stack)
		__atomic_store_n(&tk.own_stack, true, __ATOMIC_RELEASE);
	if (!stack && start_ticker(NULL) != 0) {
		__atomic_store_n(&tk.start_failed, 1, __ATOMIC_RELEASE);
		/* (Not for a ticker started before a seccomp filter with
		 * nothing tracked: maybe nothing ever is.) */
		if (__atomic_load_n(&sm_meter.ticker_wanted, __ATOMIC_ACQUIRE))
			report_stderr(NULL, "sockmeter: cannot start the ticker "
					    "thread; records are written at "
					    "exit only");
	}
	raw_sigmask(SIG_SETMASK, &old, NULL);
	errno = saved;
}

/* What the host blocked at start-up (see maybe_in_handler). */
static sigset_t mask_at_start;

/*
 * True when the caller may be running inside a signal handler.  A handler
 * installed through sigaction or signal runs through our trampoline, which
 * says so exactly (wrap_signals.c).  For one installed otherwise, a guess:
 * a signal that was not blocked at start-up is blocked now and has such a
 * handler (the kernel blocks a signal while its handler runs, unless
 * SA_NODEFER).  A program that blocks signals to wait for them (signalfd,
 * sigwait) leaves them at their default action, so it passes; so does one
 * that blocks every signal outside its wait (PostgreSQL's postmaster):
 * its handlers are the trampoline's.  Async-signal-safe.
 */
static bool maybe_in_handler(void)
{
	struct sigaction sa;
	sigset_t now;
	int sig;

	if (sm_in_handler())
		return true;
	if (raw_sigmask(SIG_BLOCK, NULL, &now) != 0)
		return true;
	for (sig = 1; sig < NSIG; sig++) {
		if (sigismember(&now, sig) != 1 ||
		    sigismember(&mask_at_start, sig) == 1 ||
		    sm_query_action(sig, &sa) != 0 ||
		    sm_handler_ours(&sa))
			continue;
		if (sa.sa_handler != SIG_DFL && sa.sa_handler != SIG_IGN)
			return true;
	}
	return false;
}

/*
 * A tracked fd exists: the ticker should run.  Creating a thread is not
 * async-signal-safe (a handler that interrupted malloc would deadlock in
 * it), so from what may be a handler the start is only noted, and the
 * next lifecycle call or first data call on an fd made outside a handler
 * starts it.  Records are never lost meanwhile: the exit record is
 * written without the ticker, and counters do not need it.
 * Context: any thread and signal handler.
 */
static void want_ticker(void)
{
	if (ticker_serving())
		return;
	__atomic_store_n(&sm_meter.ticker_wanted, true, __ATOMIC_RELEASE);
	/* A sandboxed thread starts no thread (quiet.h). */
	if (!sm_quiet() && !maybe_in_handler())
		ensure_ticker();
}

/* --- fork ---------------------------------------------------------------- */

/*
 * Take the tick lock, but never wait long for it: the ticker could be
 * stuck in a write (stderr is a pipe nobody reads, a hung file system), and
 * the host's fork() or exit() must not hang with it.
 */
static bool lock_bounded(pthread_mutex_t *lock, long ms)
{
	struct timespec until;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += ms / 1000;
	until.tv_nsec += (ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	return pthread_mutex_timedlock(lock, &until) == 0;
}

/* Each handler may run twice in one fork (glibc did, in apache's daemon:
 * see wrap_names.c); the forking thread knows whether it is in one. */
static __thread bool in_fork __attribute__((tls_model("initial-exec")));
/* The forking thread's pthread_self(), noted by fork_prepare: the child's
 * main thread, known there without a call into libc's code (a page the
 * child would touch for it alone).  Beside in_fork, on the page of the
 * thread's own that fork_prepare writes anyway: a variable of the
 * library's written there would be a copy-on-write fault in the parent at
 * every fork after the first. */
static __thread pthread_t fork_self __attribute__((tls_model("initial-exec")));

static void fork_prepare(void)
{
	if (in_fork)
		return;
	fork_self = pthread_self();
	in_fork = true;
	sm_warn_before_fork();
	sm_durable_prepare_fork();
	/* Without the lock the child still starts clean: fork_child
	 * re-initializes the lock and resets the meter.  The ticker holds it
	 * only to make a bounded batch of records, never while writing. */
	tk.fork_locked = lock_bounded(&tk.tick_lock, 500);
}

static void fork_parent(void)
{
	if (!in_fork)
		return;
	in_fork = false;
	meter_forked(&sm_meter, real_now());
	if (tk.fork_locked)
		pthread_mutex_unlock(&tk.tick_lock);
}

/* The time, by system calls made inline: in a fork child the vDSO and
 * libc's clock code are pages to fault in first (rawsys.h). */
static struct meter_time raw_now_both(void)
{
	struct meter_time t;
	struct timespec ts;

	if (raw_syscall6(SYS_clock_gettime, CLOCK_MONOTONIC, (long)&ts, 0, 0,
			 0, 0) != 0)
		return now_both();
	t.mono_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	if (raw_syscall6(SYS_clock_gettime, CLOCK_REALTIME, (long)&ts, 0, 0,
			 0, 0) != 0)
		return now_both();
	t.real_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	return t;
}

/* A fork child that runs unmetered (sm_durable_after_fork) says so, with
 * snprintf alone (no strerror: its locale lock may have been held by
 * another thread of the parent at the fork); in what may be a signal
 * handler (a fork there, whose child may only _exit or exec from it), to
 * the original stderr alone. */
__attribute__((noinline, cold)) static void unmetered_child(int err)
{
	char msg[400];

	if (err == ENOMEM)
		snprintf(msg, sizeof(msg),
			 "sockmeter: %s: a forked child could not map memory "
			 "of its own (Cannot allocate memory): the child is "
			 "not metered, and its traffic is in no record",
			 sm_meter.prog);
	else
		snprintf(msg, sizeof(msg),
			 "sockmeter: %s: a forked child could not map memory "
			 "of its own (errno %d): the child is not metered, and "
			 "its traffic is in no record",
			 sm_meter.prog, err);
	if (maybe_in_handler())
		sm_warn_in_handler(msg);
	else
		sm_warn(msg);
}

SM_FORK_PATH
static void fork_child(void)
{
	int r;

	/* Once per fork (see in_fork). */
	if (!in_fork)
		return;
	in_fork = false;
	sm_signals_after_fork();
	lockall_forked(); /* MCL_FUTURE is not passed on */
	/* Zeroes already where tk is wiped; else assigned, not
	 * pthread_mutex_init'ed (a fork child's every page touched is a
	 * fault, libc's text included).  The parent's ticker may have been
	 * writing its batch when the fork landed (it writes under
	 * write_lock, which fork does not take): the child starts a new
	 * batch and leaves that memory alone (summary.c's sbuf: zeroes
	 * here). */
	if (!tk_wiped)
		memset(&tk, 0, sizeof(tk));
	if (until_tracked_lock)
		until_tracked_lock = 0;
	/* The child's main thread is the one that forked: not ended. */
	if (main_ended)
		main_ended = 0;
	/* Its thread count starts again at one (see last_raw_exit). */
	if (raw_exits)
		raw_exits = 0;
	if (last_raw_exit != -1)
		last_raw_exit = -1;
	if (!pthread_equal(main_thread, fork_self))
		main_thread = fork_self;
	/* It has no children yet: a child that shares the parent's memory
	 * is not its own; and it is no vfork child, whatever its thread's
	 * mark said in the parent. */
	if (SM_COUNT_VFORK && sm_vm_children)
		sm_vm_children = 0;
	if (sm_vfork_child)
		sm_vfork_child = 0;
	/* The parent's ticker may have held a copy of an fd (progfd.h):
	 * the child has no ticker to give it back. */
	if (progfd_lent)
		progfd_forked();
	/* A sandboxed thread's child (quiet.h) could not make a state file
	 * or map fresh counters of its own without system calls its filter
	 * may forbid, and the parent's counters are not its to count into:
	 * it runs unmetered. */
	if (sm_quiet()) {
		__atomic_store_n(&sm_meter.tab.cap, 0, __ATOMIC_RELAXED);
		return;
	}
	r = sm_durable_after_fork(raw_getpid(), raw_now_both());
	if (r)
		unmetered_child(r);
}

/*
 * A child made by a raw clone without CLONE_VM (syscall(SYS_clone,
 * SIGCHLD | CLONE_NEW*): vsftpd's isolated sessions) is a process of its
 * own, as a fork child is, but libc runs no fork handlers for it: ours run
 * here, in the order libc runs them (names last registered, so first to
 * prepare).  The writes are waited for too (bounded): the ticker must not
 * hold an allocator lock the child would inherit.
 */
static bool raw_write_locked;

/* True until a second after *deadline was set (0: set it now): a wait
 * bounded in time, not in a count of sleeps, which last longer than asked
 * (timer slack: 2.4 s for 20,000 sleeps of 50 us measured here). */
static bool within_a_second(uint64_t *deadline)
{
	struct timespec now;
	uint64_t ns;

	if (clock_gettime(CLOCK_MONOTONIC, &now) != 0)
		return false;
	ns = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
	if (!*deadline)
		*deadline = ns + 1000000000u;
	return ns < *deadline;
}

/*
 * A ticker just created may not have run yet: its descriptor on libc's
 * list of threads then still says "being created" (glibc's setxid_futex,
 * cleared by the new thread's first instructions), and a raw clone's
 * child keeps that list as it was, with no thread to clear it: its first
 * setuid, setgid or setgroups waits for ever (vsftpd's login child, made
 * by a raw clone right after the session's first read had started our
 * ticker: t_raw_clone).  So the clone waits for the ticker to run,
 * at most a second.
 */
static void wait_ticker_running(void)
{
	struct timespec pause = {0, 50000};
	uint64_t deadline = 0;

	while (__atomic_load_n(&tk.started, __ATOMIC_ACQUIRE) &&
	       !__atomic_load_n(&tk.alive, __ATOMIC_ACQUIRE) &&
	       !__atomic_load_n(&tk.start_failed, __ATOMIC_ACQUIRE) &&
	       within_a_second(&deadline))
		nanosleep(&pause, NULL);
}

/* Set once the constructor registered the fork handlers: a library that
 * passes everything through (switched off, a skipped program, a second
 * copy, a set-user-id program) has no meter for them to touch, and a raw
 * clone in such a process must be a plain clone (it was a SIGSEGV in the
 * parent: Chromium's user-namespace probe under SOCKMETER=off). */
static bool fork_handlers_on;

void sm_raw_fork(enum sm_raw_fork_phase phase)
{
	if (sm_tls_foreign()) /* a child on a TLS of its own */
		return;
	if (!__atomic_load_n(&fork_handlers_on, __ATOMIC_ACQUIRE))
		return;
	switch (phase) {
	case SM_RAW_FORK_PREPARE:
		wait_ticker_running();
		sm_names_fork(SM_RAW_FORK_PREPARE);
		fork_prepare();
		raw_write_locked = tk.fork_locked &&
				   lock_bounded(&tk.write_lock, 500);
		break;
	case SM_RAW_FORK_PARENT:
		if (raw_write_locked)
			pthread_mutex_unlock(&tk.write_lock);
		fork_parent();
		sm_names_fork(SM_RAW_FORK_PARENT);
		break;
	case SM_RAW_FORK_CHILD:
		/* glibc runs nothing of its own in a raw clone's child: its
		 * locks are as the parent's other threads left them, and its
		 * thread count is theirs.  A child of a process with threads
		 * of the program's starts no ticker (threadless): our
		 * pthread_create hung such a child for good, one in twenty,
		 * on the stack cache's lock that another thread's
		 * pthread_create held at the clone; and the ticker, waiting
		 * for a thread count that never falls, ended the child with
		 * its main thread's status where the kernel gives its last
		 * thread's.  Its exit writes its exit record; one whose last
		 * thread ends otherwise is recovered from its state file. */
		if (glibc_nthreads &&
		    __atomic_load_n(glibc_nthreads, __ATOMIC_ACQUIRE) > 1)
			threadless = true;
		fork_child();
		sm_names_fork(SM_RAW_FORK_CHILD);
		break;
	}
}

/* --- start-up and exit --------------------------------------------------- */

/* vm.overcommit_memory (0, 1 or 2), or -1 when unknown: read with system
 * calls of our own, at start-up. */
static int overcommit_mode(void)
{
	char c = 0;
	long fd = raw_syscall6(SYS_openat, AT_FDCWD,
			       (long)"/proc/sys/vm/overcommit_memory",
			       O_RDONLY | O_CLOEXEC, 0, 0, 0);

	if (fd < 0)
		return -1;
	if (raw_syscall6(SYS_read, fd, (long)&c, 1, 0, 0, 0) != 1)
		c = 0;
	raw_syscall6(SYS_close, fd, 0, 0, 0, 0, 0);
	return c >= '0' && c <= '2' ? c - '0' : -1;
}

/* The smaller of the soft limits on the address space and on data
 * (`ulimit -v`, `ulimit -d`), RLIM_INFINITY when neither is set: the
 * reservations count against both, touched or not (MAP_NORESERVE does
 * not keep a private writable mapping out of RLIMIT_DATA). */
static rlim_t memory_limit(void)
{
	struct rlimit as, data;
	rlim_t l = RLIM_INFINITY;

	if (getrlimit(RLIMIT_AS, &as) == 0)
		l = as.rlim_cur;
	if (getrlimit(RLIMIT_DATA, &data) == 0 && data.rlim_cur < l)
		l = data.rlim_cur;
	return l;
}

/* See fdtab_capacity.  The overcommit mode is read only when it matters
 * (no max_fds, a hard limit above the least capacity).  Unknown (no
 * /proc, no fd to be had): the hard limit, as before.  Under a limit on
 * memory the per-fd tables (about 2 KB a fd, all told) take an eighth of
 * it at most: one fd per 16 KiB of it (at least 1,024).  A hard limit of
 * 20,000 fds made a 19 MB reservation, which took most of a `ulimit -d
 * 30000` from the program.  The fds beyond get the warning below, and
 * max_fds overrides. */
static uint32_t fd_capacity(const struct config *cfg)
{
	struct rlimit rl;
	rlim_t mem;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		rl.rlim_cur = rl.rlim_max = RLIM_INFINITY;
	if (!cfg->max_fds && rl.rlim_max > 1024 &&
	    (mem = memory_limit()) != RLIM_INFINITY &&
	    rl.rlim_max > mem / 16384) {
		rl.rlim_max = mem / 16384;
		if (rl.rlim_cur > rl.rlim_max)
			rl.rlim_cur = rl.rlim_max;
	}
	return fdtab_capacity(rl.rlim_cur, rl.rlim_max,
			      !cfg->max_fds && rl.rlim_max > 1024
				      ? overcommit_mode()
				      : -1,
			      cfg->max_fds);
}

/* What the two limits on memory count, in KiB: the address space
 * (RLIMIT_AS) and the private writable mappings (RLIMIT_DATA). */
struct vm_use {
	long as_kib, data_kib;
};

/* The process's use now (/proc/self/statm's size and data fields, read
 * with system calls of our own); false when it cannot be read. */
static bool vm_use_now(struct vm_use *u)
{
	char buf[128];
	long fd = raw_syscall6(SYS_openat, AT_FDCWD, (long)"/proc/self/statm",
			       O_RDONLY | O_CLOEXEC, 0, 0, 0);
	long n, v[6] = { 0 }, page_kib = sysconf(_SC_PAGESIZE) / 1024;
	int i, k = 0;

	if (fd < 0)
		return false;
	n = raw_syscall6(SYS_read, fd, (long)buf, sizeof(buf) - 1, 0, 0, 0);
	raw_syscall6(SYS_close, fd, 0, 0, 0, 0, 0);
	/* size resident shared text lib data */
	for (i = 0; i < n && k < 6; i++) {
		if (buf[i] >= '0' && buf[i] <= '9')
			v[k] = v[k] * 10 + (buf[i] - '0');
		else if (buf[i] == ' ')
			k++;
		else
			break;
	}
	if (k < 5 || page_kib <= 0)
		return false;
	u->as_kib = v[0] * page_kib;
	u->data_kib = v[5] * page_kib;
	return true;
}

/*
 * Under a limit on memory (`ulimit -v`, `ulimit -d`) what the start-up
 * reserved (took_kib) must leave the program the most of it.  The fd
 * tables are bounded to an eighth of the limit already (fd_capacity), but
 * the close queue's ring and the state file's mapping are not: together
 * about 20 MB, so a python that runs under `ulimit -v 24000` without the
 * preload failed with it ("Out of memory", SIGABRT), and again at 31,000
 * to 34,000 KiB, in silence.  More than a quarter of the limit: the
 * start-up is given back and the program runs as pass-through, said (what
 * the program needs is not known: a python that needs 15 MB failed with
 * 9.7 MB of 24 MB reserved).  More than an eighth: metered, and said at
 * the first metered fd, with what reserves less.  Returns true when the
 * start-up is to be given back.
 */
static bool reserved_too_much(const struct vm_use *before,
			      const struct vm_use *after)
{
	/* Each limit against what it counts: the state file's shared
	 * mapping is in the address space, not in the data. */
	const struct {
		int res;
		long took_kib;
	} lims[] = {
		{ RLIMIT_AS, after->as_kib - before->as_kib },
		{ RLIMIT_DATA, after->data_kib - before->data_kib },
	};
	unsigned long long lim_kib = 0;
	long took_kib = 0;
	struct rlimit rl;
	char msg[400];
	size_t i;

	/* The limit the start-up takes the largest share of. */
	for (i = 0; i < sizeof(lims) / sizeof(lims[0]); i++) {
		unsigned long long l;

		if (getrlimit(lims[i].res, &rl) != 0 ||
		    rl.rlim_cur == RLIM_INFINITY || lims[i].took_kib <= 0)
			continue;
		l = (unsigned long long)rl.rlim_cur / 1024;
		if (l && (!lim_kib || (double)lims[i].took_kib / (double)l >
					      (double)took_kib /
						      (double)lim_kib)) {
			lim_kib = l;
			took_kib = lims[i].took_kib;
		}
	}
	if (took_kib <= 0 || !lim_kib)
		return false;
	if ((unsigned long long)took_kib * 8 <= lim_kib)
		return false;
	if ((unsigned long long)took_kib * 4 > lim_kib) {
		snprintf(msg, sizeof(msg),
			 "sockmeter: metering would reserve %ld KiB of the "
			 "%llu KiB memory limit (ulimit -v or -d), more than a "
			 "quarter; running as pass-through (a smaller [track] "
			 "max_fds, or [state] enabled = false, reserves less)",
			 took_kib, lim_kib);
		report_stderr(NULL, msg);
		return true;
	}
	snprintf(msg, sizeof(msg),
		 "sockmeter: metering reserves %ld KiB of the %llu KiB memory "
		 "limit (ulimit -v or -d): a program that needs most of the "
		 "limit may run out for it (a smaller [track] max_fds, or "
		 "[state] enabled = false, reserves less)",
		 took_kib, lim_kib);
	report_until_tracked(NULL, msg);
	return false;
}

/*
 * A Go program makes its system calls itself, not through libc: its
 * sockets never reach the wrappers (only cgo code's calls do).  Say so
 * once, rather than write nothing and leave the user to guess why
 * (`[sockmeter] skip` silences it, as it leaves the program alone).
 */
static void warn_if_go(const char *prog)
{
	char msg[320];

	if (!elf_has_note((const ElfW(Phdr) *)getauxval(AT_PHDR),
			  getauxval(AT_PHNUM), ELFNOTE_GO_OWNER,
			  ELFNOTE_GO_BUILDID))
		return;
	snprintf(msg, sizeof(msg),
		 "sockmeter: %s is a Go program: Go makes its own system "
		 "calls, not through libc, so its sockets cannot be metered "
		 "(only calls made through libc, by cgo code, are counted)",
		 prog);
	report_stderr(NULL, msg);
}

/*
 * Two copies of the library in one process (the launcher's copy put before
 * one the user already preloads, two paths to the same file) would each
 * wrap the other and count every byte twice.  Every copy carries this
 * note; the first object in the loader's order that carries it meters,
 * the others stay pass-through, quietly: the numbers are right either way.
 */
#define SM_MARK_OWNER "sockmeter"
#define SM_MARK_TYPE  1
__attribute__((section(".note.sockmeter"), aligned(4), used)) static const struct {
	ElfW(Nhdr) h;
	char name[(sizeof(SM_MARK_OWNER) + 3) & ~3u];
	uint32_t desc;
} sm_mark = { { sizeof(SM_MARK_OWNER), 4, SM_MARK_TYPE }, SM_MARK_OWNER, 1 };

/* dl_iterate_phdr's visit: stop at the first object with the mark; *arg
 * says whether that one holds sm_mark (this copy). */
static int first_copy(struct dl_phdr_info *info, size_t size, void *arg)
{
	int *mine = arg;

	(void)size;
	if (!elf_has_note_at(info->dlpi_phdr, info->dlpi_phnum,
			     info->dlpi_addr, SM_MARK_OWNER, SM_MARK_TYPE))
		return 0;
	*mine = elf_loaded(info->dlpi_phdr, info->dlpi_phnum, info->dlpi_addr,
			   (uintptr_t)&sm_mark, sizeof(sm_mark));
	return 1;
}

/* dl_iterate_phdr's visit: is this valgrind's preload? */
static int valgrind_core(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	(void)arg;
	return info->dlpi_name && strstr(info->dlpi_name, "/vgpreload_core-");
}

/*
 * Under valgrind the library cannot work: valgrind turns the clone that
 * writes the log (CLONE_VM | CLONE_VFORK) into a fork, so the helper
 * writes from memory it does not have (every record lost), and knows no
 * pidfd_open; the program ran ten times slower besides.  Its preload,
 * vgpreload_core, is in every program it runs: then the library says so
 * once and passes every call through.
 */
static bool under_valgrind(void)
{
	return dl_iterate_phdr(valgrind_core, NULL) != 0;
}

/*
 * SOCKMETER_VALGRIND=meter meters anyway: for counting the wrappers'
 * instructions with callgrind (make test-instr), where the data path is
 * what matters and records may be lost.
 */
static bool valgrind_wanted(void)
{
	const char *v = secure_getenv("SOCKMETER_VALGRIND");
	char msg[160];

	if (!v)
		return false;
	v += strspn(v, " \t"); /* blanks around a value are ignored */
	if (strncmp(v, "meter", 5) == 0 && v[5 + strspn(v + 5, " \t")] == '\0')
		return true;
	if (*v) { /* as every other variable's bad value: said, ignored */
		snprintf(msg, sizeof msg,
			 "sockmeter: environment SOCKMETER_VALGRIND: \"%.48s%s\" "
			 "is not meter; ignored",
			 v, strlen(v) > 48 ? "..." : "");
		report_stderr(NULL, msg);
	}
	return false;
}

/* Is another copy of the library before this one? */
static bool second_copy(void)
{
	int mine = 1;

	dl_iterate_phdr(first_copy, &mine);
	return !mine;
}

static const char *env_secure(const char *name)
{
	return secure_getenv(name);
}

/*
 * A process that must stay single-threaded: Chromium's zygote (and so the
 * renderers it forks) checks, right after its first message to the
 * browser, that it has one thread (/proc/self/task) before it sandboxes
 * itself, and aborts otherwise: the whole browser then fails ("Failed to
 * receive hello message from zygote").  Started the ticker would be, at
 * that message.  Such a process runs without one: its calls are counted
 * as ever, its close records wait in the close queue (dropped and counted
 * once it is full), no interval record is written, and its exit writes
 * the exit record itself (or, sandboxed, leaves it to recovery from the
 * state file).  Told by its arguments, read once by the constructor.
 */
static bool must_stay_single_threaded(int argc, char **argv)
{
	int i;

	for (i = 1; argv && i < argc && argv[i]; i++)
		if (strcmp(argv[i], "--type=zygote") == 0)
			return true;
	return false;
}

__attribute__((constructor)) static void sm_init(int argc, char **argv)
{
	/* Static, not on the stack: the constructor runs once, on the main
	 * thread's stack before the program's main, and these are 6.5 KiB
	 * of it.  A program run under `ulimit -s 16` died of SIGSEGV in 14
	 * of 20 starts with them there, none without the preload (a
	 * helper's). */
	static struct config cfg;
	static struct held_warnings held;
	const char *prog = program_invocation_short_name;
	int saved = errno, r;
	struct vm_use vm_before, vm_after;
	bool vg_meter, limited;

	if (initialized++)
		return;
	threadless = must_stay_single_threaded(argc, argv);
	/* tk's zeroes are its initial values, so a fork child may have it
	 * wiped (MADV_WIPEONFORK needs private anonymous memory: .bss past
	 * the file's last page, which its alignment gives it). */
	{
		static const pthread_mutex_t init = PTHREAD_MUTEX_INITIALIZER;
		static const pthread_mutex_t zero;

		tk_wiped = memcmp(&init, &zero, sizeof(init)) == 0 &&
			   madvise(&tk_page, sizeof(tk_page),
				   MADV_WIPEONFORK) == 0;
	}
	sm_clock_bind();
	sm_bind();
	sm_warn_init();
	raw_sigmask(SIG_BLOCK, NULL, &mask_at_start);
	/* setuid/setgid: no environment, no log.  Pure pass-through.  The
	 * same for a second copy of the library. */
	if (getauxval(AT_SECURE) || second_copy())
		goto out;
	/* The variable is read (and a bad value said) whether valgrind
	 * runs or not. */
	vg_meter = valgrind_wanted();
	if (under_valgrind()) {
		if (!vg_meter) {
			report_stderr(NULL,
				      "sockmeter: running under valgrind, "
				      "which cannot run what sockmeter needs "
				      "(a clone sharing memory, pidfd_open): "
				      "nothing is metered");
			goto out;
		}
		/* Metered anyway: valgrind ends the program at a clone that
		 * shares the fd table (CLONE_FILES without a thread). */
		progfd_no_shared_child();
	}
	{
		size_t i = 0;

		config_load(&cfg, env_secure, report_held, &held);
		sm_warn_config(&cfg);
		/* A program left alone (enabled = false, SOCKMETER=off, a
		 * skip rule) is pure pass-through: it says nothing.  Others
		 * say the config's problems at their first tracked fd, as the
		 * warnings about numbers that may be lost: a script's ls,
		 * date and id said a bad setting once each (a helper: five
		 * lines for one bad SOCKMETER_TOP), now only what meters. */
		if (!cfg.enabled || config_skips_program(&cfg, prog))
			goto out;
		while (i < held.len) {
			report_until_tracked(NULL, held.buf + i);
			i += strlen(held.buf + i) + 1;
		}
	}
	warn_if_go(prog);
	limited = memory_limit() != RLIM_INFINITY && vm_use_now(&vm_before);
	r = sm_durable_init(&cfg, prog, (long)getpid(), fd_capacity(&cfg),
			    now_both(), report_until_tracked, NULL);
	if (!r && limited && vm_use_now(&vm_after) &&
	    reserved_too_much(&vm_before, &vm_after)) {
		sm_durable_give_back();
		goto out;
	}
	if (r) {
		char msg[160];

		snprintf(msg, sizeof(msg),
			 "sockmeter: cannot set up metering (%s); running as "
			 "pass-through",
			 strerror(-r));
		report_stderr(NULL, msg);
		goto out;
	}
	fdcheck_enable(&sm_meter.check);
	sm_exec_env_init();
	sm_signals_init();
	glibc_nthreads = dlsym(RTLD_DEFAULT, "__nptl_nthreads");
	find_tid_field();
	sm_meter.forked_at = &tk.forked_ns;
	sm_meter.closes_inflight = &tk.closes_inflight;
	sm_latency = cfg.category[CAT_LATENCY];
	clock_origin.mono0 = now_both().mono_ns;
	clock_origin.ticks0 = sm_ticks();
	sm_slow = sm_latency || sm_meter.acct != SM_ACCT_DEFAULT;
	pthread_atfork(fork_prepare, fork_parent, fork_child);
	__atomic_store_n(&fork_handlers_on, true, __ATOMIC_RELEASE);
	/* quick_exit ends with glibc's internal _exit: the exit record is
	 * made by a handler of ours, the first registered, so the last run. */
	at_quick_exit(sm_quick_exit_handler);
	atexit(sm_exit_handler);
	/* The constructor runs on the main thread. */
	main_thread = pthread_self();
out:
	sm_mlock_started();
	errno = saved;
}

bool sm_started(void)
{
	return initialized != 0;
}


/*
 * The final record's span: from its write to the end of the state file
 * (removed, or marked final).  A fatal signal in between (a pool's
 * SIGTERM to a worker already in _exit) left both the record in the log
 * and a file that recovery wrote again ("end":"killed": seen once in
 * t_pool_exit).  The calling thread blocks every signal for that span, and
 * the ticker blocks them all: in a process with no other thread, a
 * signal sent then waits until the span is over (an exec's or exit's
 * caller gets its mask back; _exit's never returns).
 */
static void block_all(sigset_t *old)
{
	sigset_t all;

	sigfillset(&all);
	raw_sigmask(SIG_BLOCK, &all, old);
}

/*
 * The exit record of exit(): made once, by our destructor (glibc's
 * _dl_fini, the exit handler glibc registers for the dynamic linker), or
 * by an exit handler of ours, registered in the constructor before that
 * one and so run after it.  glibc's exit lets two threads that call it at
 * once take the exit handlers between them; the first to find the list
 * empty calls _exit at once, and its exit_group ended the other thread
 * half-way through the record (the log had none in about half the runs
 * of two threads calling exit together; the state file then said
 * "killed").  Whichever thread comes first writes the record; the other
 * waits for it, 2 s at most, before it goes on to end the process.
 */
static __thread bool fini_writer __attribute__((tls_model("initial-exec")));

static void fini_wait(void)
{
	int i;

	/* Not for the record this very thread is making (a handler that
	 * calls exit while it does). */
	if (fini_writer)
		return;
	for (i = 0; i < 2000 && __atomic_load_n(&tk.fini_state,
						 __ATOMIC_ACQUIRE) != 2; i++) {
		struct timespec ms = { 0, 1000000 };

		nanosleep(&ms, NULL);
	}
}

/* A vfork child's exit() ran this process's exit handlers (fini_once). */
static uint32_t exit_handlers_gone;

static void fini_once(void)
{
	uint32_t none = 0;

	/* exit() in a vfork child (or a clone on our memory) runs the
	 * parent's exit handlers, ours among them: nothing of ours is its to
	 * end, nor to mark as done in the parent's memory (the parent's own
	 * exit() then found the record taken and wrote none).  glibc has
	 * used the parent's handlers up, though (the list is shared): the
	 * parent's exit() makes its record itself (sm_exit_begins). */
	if (sm_meter.tab.cap && sm_foreign_process()) {
		__atomic_store_n(&exit_handlers_gone, 1, __ATOMIC_RELEASE);
		return;
	}
	if (__atomic_compare_exchange_n(&tk.fini_state, &none, 1, false,
					__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		fini_writer = true;
		fini_record();
		__atomic_store_n(&tk.fini_state, 2, __ATOMIC_RELEASE);
		return;
	}
	fini_wait();
}

/*
 * exit() called by a thread while another thread's exit is under way:
 * glibc would let it find the exit handlers taken and end the process at
 * once, before the first thread's record is out (with more than two
 * threads calling exit, that lost the record nearly every time: 1 run in
 * 20 kept it with seven).  So a later caller makes the record itself
 * before it goes on (or waits for the thread making it, 2 s at most);
 * then exit goes on as glibc has it.  It does not wait for the first
 * caller's exit handlers: one of those may be waiting for it (joining
 * the thread whose way out is exit).  The first caller, and a thread
 * that calls exit again from its own exit handlers, go straight on.  (A
 * main that returns reaches exit inside libc, unseen: the exit handler
 * above still covers the thread that takes it.)
 */
static __thread bool exiting_here __attribute__((tls_model("initial-exec")));

void sm_exit_begins(void)
{
	if (sm_tls_foreign()) /* a child on a TLS of its own */
		return;
	/* A vfork child runs on its parent's thread, TLS included. */
	if (sm_meter.tab.cap && sm_foreign_process())
		return;
	if (exiting_here)
		return;
	exiting_here = true;
	if (__atomic_fetch_add(&tk.exit_callers, 1, __ATOMIC_ACQ_REL) == 0 &&
	    __atomic_load_n(&tk.fini_state, __ATOMIC_ACQUIRE) == 0 &&
	    !__atomic_load_n(&exit_handlers_gone, __ATOMIC_ACQUIRE))
		return;
	fini_once();
}

__attribute__((destructor)) static void sm_fini(void)
{
	fini_once();
}

static void sm_exit_handler(void)
{
	fini_once();
}

static void fini_record(void)
{
	struct sbuf out = { 0 };
	sigset_t mask;
	int saved = errno;

	/* A child made by a raw clone (no fork handlers ran): the meter is
	 * its parent's, and the ticker's memory is not even there (topn.c). */
	if (sm_meter.tab.cap && sm_foreign_process())
		return;
	/* exit() in a handler that cut a data call short: its bytes. */
	if (sm_meter.tab.cap)
		sm_count_interrupted();
	/* What the FILEs on metered fds still buffer leaves now, counted
	 * (glibc would flush it after this destructor, too late). */
	if (sm_meter.tab.cap)
		sm_stdio_at_exit();
	/* A ticker stuck in a write for 2 s: no exit record rather than a
	 * host that cannot exit. */
	if (!sm_meter.tab.cap)
		return;
	/* A sandboxed thread (quiet.h) makes no record itself: the ticker
	 * does, or the state file keeps the numbers.  Nor does any thread
	 * once the ticker holds the log open (a chroot, a uid change). */
	if (sm_quiet()) {
		sm_final_record(false);
		return;
	}
	if (sm_meter.sink.pin && __atomic_load_n(&tk.alive, __ATOMIC_ACQUIRE)) {
		/* The record's path leaves every signal blocked for the
		 * _exit that follows it there; here the exit handlers after
		 * ours run next, with the program's mask (a review found
		 * them run with all blocked). */
		block_all(&mask);
		sm_final_record(false);
		raw_sigmask(SIG_SETMASK, &mask, NULL);
		errno = saved;
		return;
	}
	block_all(&mask);
	if (!lock_bounded(&tk.tick_lock, 2000)) {
		raw_sigmask(SIG_SETMASK, &mask, NULL);
		return;
	}
	if (__atomic_load_n(&sm_meter.ticker_wanted, __ATOMIC_ACQUIRE)) {
		note_other_threads(false);
		exit_record_after_last_batch(&out);
	} else {
		/* Nothing was ever tracked (a shell, sed, ls...): no record
		 * would be written (meter.c's run), so none is made, as on
		 * _exit's path (sm_final_record).  Before, every such exit
		 * asked for the thread count through a child of progfd_run's
		 * (about a tenth of a millisecond per process, in a shell
		 * script under the preload) and went 11 KiB deep into the
		 * record's making: a program under `ulimit -s 16` died there
		 * of SIGSEGV (a helper's /bin/true, half its runs). */
		__atomic_store_n(&sm_meter.finished, true, __ATOMIC_RELEASE);
		pthread_mutex_unlock(&tk.tick_lock);
		sm_durable_end(SM_END_EXIT);
	}
	if (!sm_in_handler()) {
		beyond_say();
		sm_durable_say_refused();
		sm_durable_say_incomplete();
		meter_say_no_memory(&sm_meter);
	}
	sbuf_free(&out);
	ticker_leave_now();
	raw_sigmask(SIG_SETMASK, &mask, NULL);
	errno = saved;
}

/* --- lifecycle hooks ----------------------------------------------------- */

static bool peers_on(void)
{
	return sm_meter.cfg.category[CAT_PEERS];
}

__thread struct sm_opened_here sm_opened_here
	__attribute__((tls_model("initial-exec")));

static void opened(int fd, enum fd_kind kind, const struct fd_addr *local,
		   const struct fd_addr *peer)
{
	if (sm_tls_foreign()) /* a child on a TLS of its own */
		return;
	sm_opened_here.n++;
	sm_opened_here.fd = fd;
	/* A vfork child's new fd is in its own table, not in ours. */
	if (!sm_meter.tab.cap || sm_foreign_process())
		return;
	if ((unsigned)fd >= sm_meter.tab.cap) {
		struct stat st;

		/* Of a kind not known yet (a dup of an inherited fd): a
		 * socket is one (no system call of ours on a sandboxed
		 * thread, quiet.h). */
		if (fd >= 0 &&
		    (fd_kind_tracked(meter_track_kind(&sm_meter, kind)) ||
		     (kind == KIND_UNKNOWN && !sm_quiet() &&
		      raw_syscall6(SYS_fstat, fd, (long)&st, 0, 0, 0, 0) == 0 &&
		      S_ISSOCK(st.st_mode)))) {
			beyond_note(fd);
			want_ticker();
		}
		return;
	}
	meter_opened(&sm_meter, fd, kind, real_now(), local, peer);
	if (fd_kind_tracked(meter_track_kind(&sm_meter, kind)) ||
	    __atomic_load_n(&sm_meter.ticker_wanted, __ATOMIC_ACQUIRE))
		want_ticker();
}

void sm_opened_socket(int fd, int domain, int type, int protocol)
{
	opened(fd, classify_socket(domain, type, protocol), NULL, NULL);
}

bool sm_accept_peer(int listen_fd)
{
	struct fd_slot *s = fdtab_slot(&sm_meter.tab, listen_fd);

	return s && peers_on() && fdtab_kind(s) == KIND_TCP;
}

void sm_opened_accept(int listen_fd, int fd, const struct fd_addr *peer)
{
	struct fd_addr local, asked;
	enum fd_kind kind = KIND_UNKNOWN;
	struct fd_slot *s = fdtab_slot(&sm_meter.tab, listen_fd);

	if (!sm_meter.tab.cap || sm_foreign_process())
		return;
	/* A listener not known yet (inherited: a pre-fork server's worker
	 * accepting on its parent's) is learned at this first use, as a data
	 * call's fd is: else the worker's log had no record of it at all. */
	if (s && fdtab_kind(s) == KIND_UNKNOWN)
		sm_classify_slow(listen_fd);
	if (s && fd_kind_tracked(fdtab_kind(s)))
		kind = fdtab_kind(s);
	else
		kind = classify_fd(fd, NULL, NULL);
	if (!peers_on()) {
		local.len = 0;
		opened(fd, kind, &local, &local);
		return;
	}
	if (peer && peer->len) {
		classify_addrs(fd, &local, NULL);
	} else {
		classify_addrs(fd, &local, &asked);
		peer = &asked;
	}
	opened(fd, kind, &local, peer);
}

void sm_opened_dup(int oldfd, int newfd)
{
	if (sm_tls_foreign()) /* a child on a TLS of its own */
		return;
	struct fd_snapshot s;
	struct fd_slot *slot = fdtab_slot(&sm_meter.tab, oldfd);

	if (!sm_meter.tab.cap || oldfd == newfd || sm_foreign_process())
		return;
	if (slot && fdtab_snapshot(&sm_meter.tab, oldfd, &s)) {
		opened(newfd, s.kind, &s.local, &s.peer);
		meter_dup(&sm_meter, oldfd, newfd);
		return;
	}
	/* Untracked or not classified yet: the new fd is looked at lazily,
	 * like the old one. */
	opened(newfd, slot && fdtab_kind(slot) == KIND_UNTRACKED ? KIND_UNTRACKED
								 : KIND_UNKNOWN,
	       NULL, NULL);
}

/* A connect to the wildcard address, which Linux takes for this host. */
static bool wildcard_peer(const struct fd_addr *a)
{
	if (a->len >= sizeof(struct sockaddr_in) &&
	    a->u.sa.sa_family == AF_INET)
		return a->u.in4.sin_addr.s_addr == htonl(INADDR_ANY);
	if (a->len >= sizeof(struct sockaddr_in6) &&
	    a->u.sa.sa_family == AF_INET6)
		return IN6_IS_ADDR_UNSPECIFIED(&a->u.in6.sin6_addr);
	return false;
}

/*
 * A TCP socket disconnected with connect(AF_UNSPEC) may connect again, to
 * another peer: a connection of its own.  The one that ended is retired
 * here as a close (its record, without the kernel's view, which the
 * disconnect zeroed), and the fd starts again as a new TCP socket (a
 * socket that never connects again is one more record, as any socket
 * closed unconnected is).  Before, one record held both, under the
 * second one's addresses (a helper's sweep).
 */
static void disconnected(int fd, const struct fd_slot *s)
{
	int family = __atomic_load_n(&s->local.family, __ATOMIC_RELAXED);

	sm_settle_left();
	meter_disconnected(&sm_meter, fd, real_now());
	sm_opened_socket(fd, family == AF_INET6 ? AF_INET6 : AF_INET,
			 SOCK_STREAM, 0);
}

void sm_connected(int fd, const struct sockaddr *addr, socklen_t len)
{
	struct fd_addr local, peer;
	struct fd_slot *s = fdtab_slot(&sm_meter.tab, fd);

	if (!s || sm_foreign_process())
		return;
	/* The kernel has read addr: it is ours to read too.  A TCP socket
	 * that never connected (a no-op) ends nothing; other kinds go on as
	 * ever (a UDP socket's peer becomes unknown). */
	if (addr && len >= sizeof(sa_family_t) &&
	    addr->sa_family == AF_UNSPEC && fdtab_kind(s) == KIND_TCP) {
		if (__atomic_load_n(&s->peer.family, __ATOMIC_RELAXED) ||
		    __atomic_load_n(&s->c.bytes[DIR_IN], __ATOMIC_RELAXED) ||
		    __atomic_load_n(&s->c.bytes[DIR_OUT], __ATOMIC_RELAXED))
			disconnected(fd, s);
		return;
	}
	if (!peers_on())
		return;
	if (fdtab_kind(s) == KIND_UNKNOWN)
		sm_classify_slow(fd);
	memset(&peer, 0, sizeof(peer));
	if (addr && len > 0 && len <= sizeof(peer.u)) {
		memcpy(&peer.u, addr, len);
		peer.len = len;
	}
	if (wildcard_peer(&peer)) {
		/* 0.0.0.0 or [::] names no host: the kernel connected to
		 * this one, at the address getpeername says; where it says
		 * nothing (a connect still under way, or a connection the
		 * server reset before this asked: about 1 in 50 of
		 * stress-ng's sockabuse), at the address its rule gives. */
		struct fd_addr kernel;

		classify_addrs(fd, &local, &kernel);
		if (kernel.len)
			peer = kernel;
		else
			classify_wildcard_peer(&peer, &local);
	} else {
		classify_addrs(fd, &local, NULL);
	}
	meter_set_addrs(&sm_meter, fd, &local, peer.len ? &peer : NULL);
}

void sm_listening(int fd)
{
	struct fd_slot *s = fdtab_slot(&sm_meter.tab, fd);

	/* Bound before (bind said its address): nothing new. */
	if (!s || __atomic_load_n(&s->local.family, __ATOMIC_RELAXED) != 0)
		return;
	sm_bound(fd);
}

void sm_bound(int fd)
{
	if (sm_tls_foreign()) /* a child on a TLS of its own */
		return;
	struct fd_addr local;

	if (!sm_meter.tab.cap || !peers_on() || sm_foreign_process())
		return;
	classify_addrs(fd, &local, NULL);
	meter_set_addrs(&sm_meter, fd, &local, NULL);
}

void sm_closing(int fd)
{
	if (sm_tls_foreign()) /* a child on a TLS of its own */
		return;
	struct fd_slot *s = fdtab_slot(&sm_meter.tab, fd);

	/* A signal handler that opened and closed fd in the middle of a
	 * wrapper's call: that wrapper must not take fd for registered. */
	if (sm_opened_here.fd == fd)
		sm_opened_here.fd = -1;
	if (!s || fdtab_kind(s) == KIND_UNKNOWN)
		return;
	if (fd_kind_counts(fdtab_kind(s)) && sm_foreign_process())
		return;
	sm_settle_left();
	meter_closed(&sm_meter, fd, real_now());
}

/*
 * dup2 or dup3 onto newfd closes what newfd held: a seen close, with the
 * kernel's last word, made before the real call as close() makes it.
 * Only when the call can succeed (else newfd stays open, and its
 * connection goes on): dup3's flags are valid, oldfd is open (one fcntl)
 * and newfd is under the fd limit (one prlimit; it may have been lowered
 * since newfd was opened), asked only when newfd holds a connection.
 * Else the slot stays, and sm_opened_dup retires it as a reused number, a
 * close unseen (gawk's and bash's dup2 of /dev/null or a saved fd over a
 * socket were).
 */
void sm_dup_closing(int oldfd, int newfd, int flags)
{
	if (sm_tls_foreign()) /* a child on a TLS of its own */
		return;
	struct fd_slot *s = fdtab_slot(&sm_meter.tab, newfd);
	struct rlimit lim;
	int saved;

	/* Sandboxed (quiet.h): no system call of ours; the slot stays and
	 * is retired as a reused number. */
	if (oldfd == newfd || (flags & ~O_CLOEXEC) || !s ||
	    !fd_kind_tracked(fdtab_kind(s)) || sm_quiet() ||
	    raw_syscall6(SYS_fcntl, oldfd, F_GETFD, 0, 0, 0, 0) < 0 ||
	    (raw_syscall6(SYS_prlimit64, 0, RLIMIT_NOFILE, 0, (long)&lim, 0,
			  0) == 0 &&
	     (rlim_t)newfd >= lim.rlim_cur))
		return;
	saved = errno;
	sm_closing(newfd);
	errno = saved;
}

/*
 * One close_range (closefrom) over more connections than the close queue
 * holds: the ticker drains the queue meanwhile (woken past its
 * watermark), but a burst outruns it, and the rest of the records were
 * dropped (a helper's single close_range over 19,801 connections lost 0
 * to 11,609 of them; python's os.closerange over 19,800 socket fds lost
 * about 6,000 every time).  So, with the queue full, the closing thread
 * waits for room, 100 us at a time, as long as the ticker makes room
 * (RANGE_STALL_NS without any: given up for the rest of the call) and at
 * most RANGE_WAIT_NS over the whole call: a burst is absorbed at the cost
 * of a slower close_range (about 1.5 us per record the ticker writes
 * meanwhile), while a ticker held up (a hung log, a full stderr pipe)
 * costs the call 50 ms, and records, counted.  Only where a record is
 * wanted and a ticker runs to make room, and not from what may be a
 * signal handler or a sandboxed thread.
 */
#define RANGE_WAIT_NS 1000000000ull
#define RANGE_STALL_NS 50000000ull

static bool ticker_running(void);

static void range_room(uint64_t *waited_ns)
{
	const struct timespec pause = { 0, 100000 };
	uint64_t pending, last, stalled = 0;

	if (*waited_ns >= RANGE_WAIT_NS ||
	    sm_meter.cfg.close_records == CLOSE_RECORDS_OFF ||
	    !ticker_running() || !__atomic_load_n(&tk.alive, __ATOMIC_ACQUIRE) ||
	    sm_quiet() || maybe_in_handler()) {
		*waited_ns = RANGE_WAIT_NS; /* not again in this call */
		return;
	}
	wake_ticker();
	last = closeq_pending(&sm_meter.q);
	while ((pending = closeq_pending(&sm_meter.q)) >= CLOSEQ_CAP) {
		if (pending < last)
			stalled = 0;
		last = pending;
		if (*waited_ns >= RANGE_WAIT_NS || stalled >= RANGE_STALL_NS) {
			*waited_ns = RANGE_WAIT_NS;
			return;
		}
		raw_syscall6(SYS_nanosleep, (long)&pause, 0, 0, 0, 0, 0);
		*waited_ns += 100000;
		stalled += 100000;
	}
}

void sm_closing_range(unsigned first, unsigned last)
{
	uint64_t waited_ns = 0;

	if (sm_tls_foreign()) /* a child on a TLS of its own */
		return;
	uint32_t high = __atomic_load_n(&sm_meter.tab.high, __ATOMIC_ACQUIRE);
	uint64_t now;
	unsigned fd;

	if (!sm_meter.tab.cap || sm_foreign_process())
		return;
	sm_settle_left();
	now = real_now();
	/* Only numbers that ever held something (fdtab.h's used): a
	 * spawning child's close_range(3, ~0U) in a process of 15,000 fds
	 * reads its own few slots, not every page of the parent's. */
	if (last < high)
		high = last + 1;
	fdtab_for_each_used(&sm_meter.tab, fd, first, high) {
		struct fd_slot *s = fdtab_slot(&sm_meter.tab, (int)fd);

		if (s && fd_kind_tracked(fdtab_kind(s)) &&
		    closeq_pending(&sm_meter.q) >= CLOSEQ_CAP)
			range_room(&waited_ns);
		meter_closed(&sm_meter, (int)fd, now);
	}
}

void sm_close_range_begins(unsigned first, unsigned last, int flags)
{
	if (first <= last && !(flags & CLOSE_RANGE_CLOEXEC) &&
	    !(flags & ~(CLOSE_RANGE_CLOEXEC | CLOSE_RANGE_UNSHARE)))
		sm_closing_range(first, last);
}

/* Records for a stderr nobody reads would block the last call for good:
 * then the state file keeps the numbers instead. */
static bool stderr_stuck(void)
{
	struct pollfd p = { .fd = 2, .events = POLLOUT };
	struct timespec zero = { 0, 0 };

	return sm_meter.sink.to_stderr && !sm_quiet() &&
	       (SM_SYSCALL(SYS_ppoll, &p, 1, &zero, NULL, 0) != 1 ||
		!(p.revents & POLLOUT));
}

/* Ask the ticker for the final record and wait for it, 2 s at most (then
 * the state file keeps the numbers).  False when the ticker was starting
 * and its start failed meanwhile: nobody took the request, which is taken
 * back (the caller makes the record itself).  Raw system calls only. */
static bool ask_ticker(bool exec)
{
	uint32_t done = __atomic_load_n(&final_done, __ATOMIC_ACQUIRE);
	struct timespec until, slice;
	int i;

	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += 2;
	__atomic_store_n(&tk.final_req, exec ? 2 : 1, __ATOMIC_RELEASE);
	wake_ticker();
	/* In slices of 20 ms while the ticker is not alive yet (the 2 s in
	 * all, the slices included). */
	for (i = 0; i < 100 && !__atomic_load_n(&tk.alive, __ATOMIC_ACQUIRE);
	     i++) {
		if (__atomic_load_n(&tk.start_failed, __ATOMIC_ACQUIRE)) {
			uint32_t req = exec ? 2 : 1;

			if (__atomic_compare_exchange_n(&tk.final_req, &req, 0,
							false, __ATOMIC_ACQ_REL,
							__ATOMIC_ACQUIRE))
				return false;
			break;
		}
		clock_gettime(CLOCK_MONOTONIC, &slice);
		slice.tv_nsec += 20000000;
		if (slice.tv_nsec >= 1000000000) {
			slice.tv_sec++;
			slice.tv_nsec -= 1000000000;
		}
		if (wait_change(&final_done, done, &slice))
			return true;
	}
	if (i < 100)
		wait_change(&final_done, done, &until);
	return true;
}

void sm_exec_failed(void)
{
	if (sm_tls_foreign()) /* a child on a TLS of its own */
		return;
	if (__atomic_exchange_n(&tk.exec_hold, 0, __ATOMIC_ACQ_REL))
		futex(&tk.exec_hold, FUTEX_WAKE, 1, NULL);
}

void sm_spawning(void)
{
	if (sm_tls_foreign()) /* a child on a TLS of its own */
		return;
	if (sm_meter.tab.cap)
		meter_forked(&sm_meter, real_now());
}

/* fcntl(fd, F_GETFD) without errno: the flags, or a negative errno. */
static int fd_flags(int fd)
{
	return (int)raw_syscall6(SYS_fcntl, fd, F_GETFD, 0, 0, 0, 0);
}

static int fd_flags_unknown(int fd)
{
	(void)fd;
	return -ENOSYS;
}

static void final_record_made(bool exec);

SM_FORK_PATH
void sm_final_record(bool exec)
{
	if (sm_tls_foreign()) /* a child on a TLS of its own */
		return;
	/* A vfork child shares our memory: nothing of ours is its to end.
	 * A sandboxed thread's exec (quiet.h) asks the ticker for the exec
	 * record as its exit would, if its filter lets the futex calls
	 * through (man-db's children filter, then exec groff); else it
	 * writes none: the image that follows finds the state file live and
	 * has it recovered. */
	if (!sm_meter.tab.cap ||
	    (exec && may_not_ask_ticker()))
		return;
	if (sm_foreign_process()) {
		/* A vfork child's exec: the new image may keep our fds (it
		 * shares our memory: the mark is the parent's). */
		if (exec)
			sm_spawning();
		return;
	}
	/* _exit in a handler that cut a data call short: its bytes (not for
	 * an exec, which may fail and return to the wrapper). */
	if (!exec)
		sm_count_interrupted();
	/* Nothing was ever tracked (a pre-fork server's worker that only
	 * exits, a child that execs): no record would be written, so none is
	 * made, and the state file (if any) is only settled.  Inline system
	 * calls only, errno untouched: such a worker faults in as few pages
	 * as it can. */
	/* Wanted before alive (want_ticker): none wanted, none alive.  But
	 * for a ticker a sandbox started (sm_confine_begin) on a thread now
	 * quiet: that thread may not remove the state file, the ticker may,
	 * as it ends the process (else every such process left its file
	 * for a recovery to remove: a helper's stress-ng run, 981 files of
	 * children that had exited normally).  Not where any filter forbids
	 * the futex calls that ask it: a thread made after such a filter
	 * carries it unmarked (futex_forbidden_some), and its exit died of
	 * SIGSYS asking (a review's). */
	if (!__atomic_load_n(&sm_meter.ticker_wanted, __ATOMIC_ACQUIRE) &&
	    !(sm_quiet() && ticker_running() &&
	      !__atomic_load_n(&futex_forbidden_some, __ATOMIC_ACQUIRE))) {
		sm_durable_end(exec ? SM_END_EXEC : SM_END_EXIT);
		return;
	}
	final_record_made(exec);
}

/* The final record of a process that tracked something: sm_final_record's
 * rest, out of the fork path's section (its code is more than the page
 * that section keeps for a child that only exits: preload/fork.ld). */
__attribute__((noinline)) static void final_record_made(bool exec)
{
	struct meter_time now;
	sigset_t mask;
	int saved;

	saved = errno;
	/* A sandboxed thread (quiet.h) makes no system call it need not:
	 * a filter that kills for rt_sigprocmask killed it here (vsftpd's
	 * sandbox: the process then never ended, its parent waiting). */
	if (sm_quiet())
		sigemptyset(&mask);
	else
		block_all(&mask);
	/* The exec closes the fds marked close-on-exec: the record says
	 * which (one fcntl per tracked fd).  A sandboxed thread asks none,
	 * and clears what an exec that failed before had noted. */
	if (exec)
		fdtab_note_exec(&sm_meter.tab,
				sm_quiet() ? fd_flags_unknown : fd_flags);
	if (stderr_stuck())
		goto out;
	if (may_not_ask_ticker()) {
		/* No system call may be made to ask the ticker (see
		 * futex_forbidden): the state file keeps the numbers. */
		if (!exec)
			sm_durable_end(SM_END_EXIT_UNWRITTEN);
		goto out;
	}
	/* A ticker started and not running yet (a thread just made, its
	 * first instructions not run: the sandboxed child that exits at once
	 * lost its records to recovery one run in three under load) serves
	 * the request as its first tick. */
	/* A handler's exit may have cut malloc short on this thread: the
	 * ticker's way out through glibc frees (its TLS), and would wait for
	 * the arena this thread holds (a review's program took the 20 ms
	 * bound in half its runs).  The ticker stays then, as before. */
	if (!exec && sm_in_handler())
		__atomic_store_n(&tk.stay, true, __ATOMIC_RELEASE);
	if (ticker_running() && ask_ticker(exec)) {
		if (!exec)
			await_ticker_gone();
		goto out;
	}
	/* No ticker ran: little to write, made here.  Not on a sandboxed
	 * thread (quiet.h): the state file keeps the numbers, and recovery
	 * writes them as this exit's. */
	if (sm_quiet()) {
		if (!exec)
			sm_durable_end(SM_END_EXIT_UNWRITTEN);
		goto out;
	}
	if (!lock_bounded(&tk.tick_lock, 2000))
		goto out;
	if (!lock_bounded(&tk.write_lock, 2000)) {
		pthread_mutex_unlock(&tk.tick_lock);
		goto out;
	}
	now = now_both();
	calibrate(now);
	note_other_threads(false);
	sm_durable_ending();
	sink_stderr_wait(2000); /* (as in exit_record_after_last_batch) */
	if (exec)
		meter_exec(&sm_meter, now);
	else
		meter_exit(&sm_meter, now);
	sink_stderr_wait(-1);
	sm_durable_end(exec ? SM_END_EXEC : SM_END_EXIT);
	pthread_mutex_unlock(&tk.write_lock);
	pthread_mutex_unlock(&tk.tick_lock);
	/* (sm_warn is not for a signal handler: an exit made from one, before
	 * any ticker ran, says nothing of it.) */
	if (!sm_in_handler()) {
		beyond_say();
		sm_durable_say_refused();
		sm_durable_say_incomplete();
		meter_say_no_memory(&sm_meter);
	}
out:
	/* _exit follows: its signals may stay blocked (see block_all).  An
	 * exec keeps the mask: the program's, then. */
	if (exec && !sm_quiet())
		raw_sigmask(SIG_SETMASK, &mask, NULL);
	errno = saved;
}

/* --- confinement: chroot and seccomp ------------------------------------- */

#define LISTED_FDS_MAX 4096

struct fd_list {
	int n;
	int fd[LISTED_FDS_MAX];
};

/* The program's open fds from /proc/self/fd, read in progfd_run's child:
 * a copy of the program's fd table (the directory's own fd is in it, and
 * in it only).  Raw system calls only.  0, or -1 when /proc cannot say. */
static int list_fds(void *arg)
{
	struct fd_list *l = arg;
	char buf[2048];
	long dir, n, off;

	dir = raw_syscall6(SYS_openat, AT_FDCWD, (long)"/proc/self/fd",
			   O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0, 0, 0);
	if (dir < 0)
		return -1;
	while ((n = raw_syscall6(SYS_getdents64, dir, (long)buf, sizeof(buf),
				 0, 0, 0)) > 0)
		for (off = 0; off < n;) {
			const struct dirent64_raw *d = (const void *)(buf + off);
			const char *c = d->name;
			long fd = 0;

			off += d->reclen;
			if (*c < '0' || *c > '9')
				continue;
			while (*c >= '0' && *c <= '9' && fd < INT32_MAX / 10)
				fd = fd * 10 + (*c++ - '0');
			if (fd != dir && l->n < LISTED_FDS_MAX)
				l->fd[l->n++] = (int)fd;
		}
	raw_syscall6(SYS_close, dir, 0, 0, 0, 0, 0);
	return n < 0 ? -1 : 0;
}

/* Know every fd the program has open now, while fstat and getsockname
 * are still allowed: a fork child forgets its fds' kinds and learns them
 * again at their first use, which a sandbox may forbid.  Without /proc
 * (already chrooted), the numbers below 1,024 are tried one by one. */
static void classify_open_fds(void)
{
	struct fd_list *l = mmap(NULL, sizeof(*l), PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int i, n;

	if (l == MAP_FAILED)
		return;
	l->n = 0;
	if (progfd_run_copy(list_fds, l) != 0) {
		n = sm_meter.tab.cap < 1024 ? (int)sm_meter.tab.cap : 1024;
		for (l->n = 0; l->n < n; l->n++)
			l->fd[l->n] = l->n;
	}
	for (i = 0; i < l->n; i++) {
		struct fd_slot *s = fdtab_slot(&sm_meter.tab, l->fd[i]);
		struct stat st;

		if (s && fdtab_kind(s) == KIND_UNKNOWN)
			sm_classify_slow(l->fd[i]);
		else if (!s && l->fd[i] >= 0 &&
			 raw_syscall6(SYS_fstat, l->fd[i], (long)&st, 0, 0, 0,
				      0) == 0 &&
			 S_ISSOCK(st.st_mode)) {
			/* An inherited socket beyond the table (see
			 * beyond_note). */
			beyond_note(l->fd[i]);
			want_ticker();
		}
	}
	munmap(l, sizeof(*l));
}

/* Have the ticker open the log and keep it open (meter_pin_log); wait
 * for it, 1 s at most.  A request the ticker has not taken by then is
 * taken back: served after the confinement, it would open files the
 * sandbox forbids. */
static void pin_log(uint32_t how)
{
	uint32_t done = __atomic_load_n(&tk.pin_done, __ATOMIC_ACQUIRE);
	struct timespec until;
	int round;

	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += 1;
	__atomic_store_n(&tk.pin_req, how, __ATOMIC_RELEASE);
	wake_ticker();
	for (round = 0; round < 2; round++) {
		if (wait_change(&tk.pin_done, done, &until) ||
		    __atomic_exchange_n(&tk.pin_req, 0, __ATOMIC_ACQ_REL))
			return; /* served, or taken back */
		/* The ticker took it a moment ago: it is being served. */
		until.tv_sec += 1;
	}
}

/*
 * Capabilities, securebits and keep-caps are the calling thread's own, but
 * glibc applies setuid and its family to every thread and aborts the
 * process when they do not all succeed.  A daemon that keeps its
 * capabilities across a drop to another user (PR_SET_KEEPCAPS, capset:
 * proftpd's mod_cap) and later takes root back would have the ticker,
 * without them, refuse that setresuid, and glibc abort the daemon.  So
 * each such call that succeeded is repeated on the ticker (the same
 * arguments; capset for the thread itself), and the caller waits for it,
 * 2 s at most.  nr is SYS_prctl or SYS_capset; for capset a[0] and a[1]
 * are the header and data pointers.
 */
void sm_creds_mirror(long nr, const long a[4])
{
	if (sm_tls_foreign()) /* a child on a TLS of its own */
		return;
	uint32_t free = CRED_FREE, done, ready = CRED_READY;
	struct timespec until;
	int saved = errno, i, round;

	/* A vfork child's credentials are its own (it execs next): the
	 * parent's ticker keeps the parent's. */
	if (sm_ticker_thread || sm_foreign_process())
		return;
	/* A ticker just created took the credentials of the moment it was
	 * made: it must run to take this call too. */
	wait_ticker_running();
	/* A ticker held up (a write to a full pipe) that let a request time
	 * out is not waited for again until it serves one: each call would
	 * wait its 2 s. */
	if (!__atomic_load_n(&tk.alive, __ATOMIC_ACQUIRE) ||
	    __atomic_load_n(&tk.cred_stuck, __ATOMIC_RELAXED))
		goto out; /* errno as it was: the wait's nanosleep may set it */
	for (i = 0; !__atomic_compare_exchange_n(&tk.cred_req, &free,
						  CRED_FILLING, false,
						  __ATOMIC_ACQ_REL,
						  __ATOMIC_ACQUIRE);
	     i++) {
		struct timespec pause = { 0, 100000 };

		if (i >= 20000)
			goto out; /* another thread's, stuck for 2 s */
		free = CRED_FREE;
		nanosleep(&pause, NULL);
	}
	tk.cred_nr = nr;
	memcpy(tk.cred_arg, a, sizeof(tk.cred_arg));
	if (nr == SYS_capset) {
		const struct __user_cap_header_struct *h = (const void *)a[0];

		tk.cred_hdr.version = h->version;
		tk.cred_hdr.pid = 0; /* the ticker itself */
		memset(tk.cred_data, 0, sizeof(tk.cred_data));
		memcpy(tk.cred_data, (const void *)a[1],
		       (h->version == _LINUX_CAPABILITY_VERSION_1 ? 1 : 2) *
			       sizeof(tk.cred_data[0]));
	}
	done = __atomic_load_n(&tk.cred_done, __ATOMIC_ACQUIRE);
	__atomic_store_n(&tk.cred_req, CRED_READY, __ATOMIC_RELEASE);
	wake_ticker();
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += 2;
	for (round = 0; round < 2; round++) {
		if (wait_change(&tk.cred_done, done, &until))
			break;
		/* Not taken: take it back.  Taken: it is being served. */
		ready = CRED_READY;
		if (__atomic_compare_exchange_n(&tk.cred_req, &ready, CRED_FREE,
						false, __ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE)) {
			__atomic_store_n(&tk.cred_stuck, 1, __ATOMIC_RELAXED);
			break;
		}
		until.tv_sec += 1;
	}
out:
	errno = saved;
}

/* A ticker runs, or is starting (its start did not fail). */
static bool ticker_running(void)
{
	return __atomic_load_n(&tk.started, __ATOMIC_ACQUIRE) &&
	       !__atomic_load_n(&tk.start_failed, __ATOMIC_ACQUIRE);
}

/*
 * Whether a seccomp filter lets the futex calls of the exit path through
 * (ask_ticker: a wake and a timed wait).  A filter is classic BPF over
 * struct seccomp_data; it is run here on the two calls as they will be
 * made.  Anything not understood, or any action but allow or log, counts
 * as forbidden.  Once forbidden, a sandboxed thread's exit makes no
 * system call at all: its state file keeps the numbers, and recovery
 * writes them (a filter that kills for futex killed the exiting thread,
 * and the process ended with SIGSYS instead of its status).  A filter
 * binds the thread that installs it (and the threads and children it
 * makes after: a fork child's thread is the one that forked; a thread it
 * creates is taken for unbound, a limit) or, with TSYNC, every thread.
 */

#if defined(__x86_64__)
#define SM_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define SM_AUDIT_ARCH AUDIT_ARCH_AARCH64
#endif

#ifdef SM_AUDIT_ARCH
static bool filter_allows(const struct sock_fprog *prog,
			  const struct seccomp_data *d)
{
	uint32_t a = 0, x = 0, mem[BPF_MEMWORDS] = { 0 };
	unsigned pc = 0, steps = 0;

	if (!prog || !prog->filter || !prog->len || prog->len > BPF_MAXINSNS)
		return false;
	while (pc < prog->len && steps++ < BPF_MAXINSNS) {
		const struct sock_filter *f = &prog->filter[pc++];
		uint32_t k = f->k, src = BPF_SRC(f->code) == BPF_X ? x : k;

		switch (BPF_CLASS(f->code)) {
		case BPF_LD:
		case BPF_LDX: {
			uint32_t v;

			if (f->code == (BPF_LD | BPF_W | BPF_ABS)) {
				if (k % 4 || k > sizeof(*d) - 4)
					return false;
				memcpy(&v, (const char *)d + k, 4);
			} else if (BPF_MODE(f->code) == BPF_IMM) {
				v = k;
			} else if (BPF_MODE(f->code) == BPF_MEM &&
				   k < BPF_MEMWORDS) {
				v = mem[k];
			} else if (BPF_MODE(f->code) == BPF_LEN) {
				v = sizeof(*d);
			} else {
				return false;
			}
			if (BPF_CLASS(f->code) == BPF_LD)
				a = v;
			else
				x = v;
			break;
		}
		case BPF_ST:
		case BPF_STX:
			if (k >= BPF_MEMWORDS)
				return false;
			mem[k] = BPF_CLASS(f->code) == BPF_ST ? a : x;
			break;
		case BPF_ALU:
			switch (BPF_OP(f->code)) {
			case BPF_ADD: a += src; break;
			case BPF_SUB: a -= src; break;
			case BPF_MUL: a *= src; break;
			case BPF_AND: a &= src; break;
			case BPF_OR: a |= src; break;
			case BPF_XOR: a ^= src; break;
			case BPF_LSH: a <<= src & 31; break; /* as the kernel */
			case BPF_RSH: a >>= src & 31; break;
			case BPF_NEG: a = -a; break;
			case BPF_DIV:
				if (!src)
					return false;
				a /= src;
				break;
			case BPF_MOD:
				if (!src)
					return false;
				a %= src;
				break;
			default: return false;
			}
			break;
		case BPF_JMP: {
			bool t;

			switch (BPF_OP(f->code)) {
			case BPF_JA: pc += k; continue;
			case BPF_JEQ: t = a == src; break;
			case BPF_JGT: t = a > src; break;
			case BPF_JGE: t = a >= src; break;
			case BPF_JSET: t = (a & src) != 0; break;
			default: return false;
			}
			pc += t ? f->jt : f->jf;
			break;
		}
		case BPF_RET: {
			uint32_t r = BPF_RVAL(f->code) == BPF_A ? a : k;

			r &= SECCOMP_RET_ACTION_FULL;
			return r == SECCOMP_RET_ALLOW || r == SECCOMP_RET_LOG;
		}
		case BPF_MISC:
			if (BPF_MISCOP(f->code) == BPF_TAX)
				x = a;
			else
				a = x;
			break;
		default:
			return false;
		}
	}
	return false;
}

/* The two calls as ask_ticker makes them: wake_ticker's, and
 * wait_change's on final_done (a timeout on the stack). */
static bool futex_allowed(const struct sock_fprog *prog)
{
	struct seccomp_data wake = { .nr = SYS_futex, .arch = SM_AUDIT_ARCH },
			    wait = wake;
	struct timespec until = { 0, 0 };

	wake.args[0] = (uint64_t)(uintptr_t)&sm_meter.q.wake;
	wake.args[1] = FUTEX_WAKE | FUTEX_PRIVATE_FLAG;
	wake.args[2] = 1;
	wake.args[5] = FUTEX_BITSET_MATCH_ANY;
	wait.args[0] = (uint64_t)(uintptr_t)&final_done;
	wait.args[1] = FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG;
	wait.args[2] = __atomic_load_n(&final_done, __ATOMIC_ACQUIRE);
	wait.args[3] = (uint64_t)(uintptr_t)&until;
	wait.args[5] = FUTEX_BITSET_MATCH_ANY;
	return filter_allows(prog, &wake) && filter_allows(prog, &wait);
}
#else
static bool futex_allowed(const struct sock_fprog *prog)
{
	(void)prog;
	return false;
}
#endif

void sm_confine_filter(bool strict, bool all_threads, const void *prog)
{
	if (sm_tls_foreign()) /* a child on a TLS of its own */
		return;
	if (!strict && futex_allowed(prog))
		return;
	futex_forbidden_here = true;
	__atomic_store_n(&futex_forbidden_some, 1, __ATOMIC_RELEASE);
	/* Not for strict mode: its thread may not even close, and the
	 * program's other threads would lose what a burst of closes put
	 * past the queue (a review's).  A filter's later threads carry it
	 * unmarked: no thread wakes the ticker, which drains at its next
	 * tick (a burst past 8,192 records a second is then counted as
	 * dropped, rather than the host killed). */
	if (!strict)
		__atomic_store_n(&sm_meter.q.no_wake, 1, __ATOMIC_RELEASE);
	if (all_threads)
		__atomic_store_n(&futex_forbidden, 1, __ATOMIC_RELEASE);
}

int sm_confine_begin(enum sm_confine how)
{
	if (sm_tls_foreign()) /* a child on a TLS of its own */
		return -1;
	uint8_t before = __atomic_load_n(&sm_quiet_level, __ATOMIC_ACQUIRE);
	int saved = errno;
	bool prepare;

	/* A vfork child's filter or root is its own (it execs next). */
	if (!sm_meter.tab.cap || sm_foreign_process())
		return -1;
	prepare = !sm_quiet() && !maybe_in_handler();
	if (prepare) {
		/* First: a fork child's state file is made at its first
		 * tracked fd, which the classification may find (a child that
		 * chroots before it touched its inherited sockets). */
		classify_open_fds();
		if (how != SM_CONFINE_ROOT)
			sm_durable_before_sandbox();
		else if (geteuid() == 0) /* a change of user follows, out
					   * of reach by name */
			sm_durable_mark_exposed();
	}
	/* A filter on every thread binds the ticker too: it is quiet before
	 * it says the log is pinned, so that nothing of its own follows the
	 * filter.  (After the classification, which asks the kernel.) */
	if (how == SM_CONFINE_ALL)
		sm_quiet_raise(SM_QUIET_ALL);
	if (prepare &&
	    __atomic_load_n(&sm_meter.ticker_wanted, __ATOMIC_ACQUIRE)) {
		ensure_ticker();
		if (ticker_running())
			pin_log(PIN_NOW);
	} else if (prepare && how == SM_CONFINE_THREAD) {
		/* Nothing tracked yet, but sockets made under the filter are
		 * (apt's http method sandboxes itself, then connects): the
		 * filter binds neither a thread started before it nor the
		 * files it opens, so the ticker, started now, writes their
		 * records as anywhere (before, nothing was written until a
		 * recovery).  No log is opened: a program that never makes
		 * one (file(1)'s libmagic sandbox) leaves none.  A filter on
		 * every thread would bind the ticker too, which could then
		 * open nothing: that case is left to recovery (README). */
		ensure_ticker();
	}
	errno = saved;
	return before;
}

void sm_confine_end(enum sm_confine how, int before, bool done)
{
	if (sm_tls_foreign()) /* a child on a TLS of its own */
		return;
	if (how == SM_CONFINE_ROOT && done)
		sink_root_changed();
	if (before < 0 || how == SM_CONFINE_ROOT)
		return;
	if (!done) {
		/* A probe (libseccomp asks the kernel with invalid calls) or
		 * a refusal: nothing is filtered. */
		if (how == SM_CONFINE_ALL)
			__atomic_store_n(&sm_quiet_level, (uint8_t)before,
					 __ATOMIC_RELEASE);
		return;
	}
	sm_quiet_raise(SM_QUIET_PROGRAM);
}

/* Until no other thread classifies fds for a limit on tasks (at most a
 * second), or one started the ticker. */
static void wait_limiting(void)
{
	struct timespec pause = {0, 50000};
	uint64_t deadline = 0;

	while (__atomic_load_n(&tk.limiting, __ATOMIC_ACQUIRE) &&
	       !__atomic_load_n(&tk.started, __ATOMIC_ACQUIRE) &&
	       within_a_second(&deadline))
		nanosleep(&pause, NULL);
}

/*
 * A limit on tasks about to go on (setrlimit and prlimit of RLIMIT_NPROC,
 * named or through syscall()).  A user other than root at such a limit
 * cannot start a thread, and haproxy's workers set it to 0 right after
 * they drop root, before their first accept: the ticker, started at the
 * first tracked fd, then never ran (records at exit only, close records
 * beyond the queue's 8,192 dropped).  So the fds open now are classified
 * (a fork child forgets their kinds) and the ticker started before the
 * limit, if one is wanted.  Only for a small limit (SM_NPROC_SMALL: one
 * meant to forbid forking, not pam_limits' thousands), not when the
 * ticker runs already; a limit of another process is its own.  The value
 * is read when its pointer looks like one (sm_ptr_plausible): a bad
 * pointer is the call's EFAULT, not a fault of ours.  (It was read with
 * process_vm_readv, a call a seccomp filter the program inherited may
 * punish with death: systemd's SystemCallFilter=@system-service lacks it.)
 */
void sm_tasks_limiting(pid_t pid, int resource, const void *lim)
{
	if (resource != RLIMIT_NPROC || !lim)
		return;
	if (sm_tls_foreign()) /* a child on a TLS of its own */
		return;
	int saved = errno;
	uint64_t cur = 0; /* rlim_cur: first, 64 bits (rlimit and rlimit64) */

	if ((pid != 0 && pid != getpid()) || !sm_meter.tab.cap || sm_quiet() || sm_foreign_process() ||
	    (ticker_running() && __atomic_load_n(&tk.alive, __ATOMIC_ACQUIRE)) ||
	    maybe_in_handler())
		goto out;
	if (sizeof(rlim_t) != sizeof(uint64_t) ||
	    !sm_ptr_plausible(lim, _Alignof(uint64_t)))
		goto out;
	memcpy(&cur, lim, sizeof(cur));
	if (cur >= SM_NPROC_SMALL)
		goto out;
	if (!__atomic_load_n(&tk.started, __ATOMIC_ACQUIRE)) {
		__atomic_add_fetch(&tk.limiting, 1, __ATOMIC_ACQ_REL);
		classify_open_fds();
		if (__atomic_load_n(&sm_meter.ticker_wanted, __ATOMIC_ACQUIRE))
			ensure_ticker();
		__atomic_sub_fetch(&tk.limiting, 1, __ATOMIC_ACQ_REL);
	}
	/* Another thread may be starting it (haproxy's two threads each set
	 * the limit): the limit must not land before its thread exists.
	 * Nor before the other thread is done classifying: the fd that
	 * wants the ticker may be the one it is classifying (this thread
	 * found it taken, and no ticker wanted yet: nproc2, 2 of 9 runs
	 * without a ticker). */
	wait_limiting();
	wait_ticker_running();
out:
	errno = saved;
}

void sm_creds_changing(uid_t euid)
{
	if (sm_tls_foreign()) /* a child on a TLS of its own */
		return;
	int saved = errno;

	/* After the exit record (a later exit handler's setuid): nothing
	 * more is written, and the ticker may be gone (ticker_leaves). */
	if (!sm_meter.tab.cap || sm_quiet() || sm_foreign_process() ||
	    maybe_in_handler() ||
	    __atomic_load_n(&sm_meter.finished, __ATOMIC_ACQUIRE))
		goto out;
	/* Only an explicit path (a template with %u follows the uid), and
	 * only when a ticker is wanted: it opens the file, with the
	 * credentials of now, for the records the new ones could not write
	 * (sink_reinit_for_uid turns it on then).  A fork child that drops
	 * root before it touches the connection it was handed (exim's
	 * reception child, a pre-fork server's worker) has tracked nothing
	 * yet: what it holds is looked at now, while the log can still be
	 * opened.  Its state file is then made now too, in the old user's
	 * directory: a recovery of the new user's could not append to a log
	 * opened as root, and root's recovery leaves another user's files
	 * alone.  Once per image, and per fork child (a daemon may toggle
	 * its effective uid on every request). */
	if (!sm_meter.prom && !sm_meter.sink.to_stderr &&
	    !strstr(sm_meter.cfg.log_path, "%u")) {
		if (sm_meter.sink.pin)
			goto out;
		if (!__atomic_load_n(&sm_meter.ticker_wanted,
				     __ATOMIC_ACQUIRE) &&
		    !tk.fds_classified) {
			tk.fds_classified = true;
			classify_open_fds();
		}
		if (__atomic_load_n(&sm_meter.ticker_wanted, __ATOMIC_ACQUIRE)) {
			ensure_ticker();
			if (ticker_running())
				pin_log(PIN_LATER);
		}
		goto out;
	}
	/* A log that follows the uid: a fork child without its state file
	 * makes it at its first tracked fd, after the change, in the new
	 * user's directory (its log's owner recovers it).  Unless the new
	 * user could not use the directory [state] dir names for it (its
	 * parent closed to it, or a fixed directory, without %u, of the
	 * old user's): then the file is made now, as the old user, rather
	 * than the process having none (it was private memory, silently: a
	 * kill lost its numbers). */
	if (euid != SM_EUID_SAME && euid != geteuid() && !tk.fds_classified &&
	    sm_durable_file_wanted() &&
	    !sm_durable_dir_usable_by((unsigned)euid)) {
		tk.fds_classified = true;
		classify_open_fds();
		/* Even with no tracked fd yet: its first may come after the
		 * change, when no file could be made (quietly: the parent
		 * had its own). */
		sm_durable_make_file();
	}
out:
	/* The file, about to be mapped by another user: marked, so that
	 * its owner's recovery (root's, mostly; a user's that holds
	 * CAP_SETUID) does not take its header's word (where to write,
	 * whose file to make).  A system call or two, fit for a handler or
	 * a vfork child (which writes its parent's file, in its memory).
	 * Not on a return to root: root is not whom the mark keeps out. */
	if (euid != SM_EUID_SAME && euid != 0 && euid != geteuid())
		sm_durable_mark_exposed();
	errno = saved;
}

void sm_creds_changed(void)
{
	if (sm_tls_foreign()) /* a child on a TLS of its own */
		return;
	int saved = errno;

	/* A vfork child's setuid before exec is not ours to follow, nor
	 * one after the exit record (see sm_creds_changing). */
	if (!sm_meter.tab.cap || sm_quiet() || sm_foreign_process() ||
	    __atomic_load_n(&sm_meter.finished, __ATOMIC_ACQUIRE))
		return;
	if (lock_bounded(&tk.write_lock, 500)) {
		/* A forked child sets its log up at its first write: now, so
		 * that the checks below see the path it would use. */
		if (sm_meter.sink_stale) {
			sm_meter.sink_stale = false;
			sink_init(&sm_meter.sink, sm_meter.cfg.log_path,
				  sm_meter.pid, sm_meter.prog,
				  sm_meter.start.real_ns / 1000000000ull,
				  sm_meter.report, sm_meter.ctx);
		}
		sink_reinit_for_uid(&sm_meter.sink, sm_meter.cfg.log_path,
				    sm_meter.pid, sm_meter.prog,
				    sm_meter.start.real_ns / 1000000000ull);
		sm_durable_log_moved();
		pthread_mutex_unlock(&tk.write_lock);
	}
	errno = saved;
}

uint64_t sm_start_slow(void)
{
	return sm_ticks() | 1;
}

/* What fd is, learned into its slot; the ticker is the caller's. */
static enum fd_kind classify_unknown(int fd)
{
	struct fd_addr local, peer;
	enum fd_kind kind, got;
	bool peers = peers_on();

	/* A vfork child's fd is not the one our slot describes: not
	 * counted, not learned. */
	if (sm_foreign_process())
		return KIND_UNTRACKED;
	kind = classify_fd(fd, peers ? &local : NULL, peers ? &peer : NULL);
	if (kind == KIND_UNKNOWN)
		return KIND_UNKNOWN; /* not open: look again next time */
	kind = meter_track_kind(&sm_meter, kind);
	got = fdtab_classify(&sm_meter.tab, fd, kind, peers ? &local : NULL,
			     peers ? &peer : NULL);
	/* Another thread's first call on the same fd is classifying it
	 * right now: it publishes what this one found.  Counting into the
	 * busy slot instead put an untracked fd's bytes (libuv's eventfds in
	 * named) into the totals, as strays of no connection. */
	if (!fd_kind_busy(got))
		kind = got;
	return kind;
}

static void count_slot(struct fd_slot *s, enum fd_dir dir, int64_t r, int err,
		       uint64_t t0)
{
	fd_account(s, dir, r, err, sm_meter.acct);
	if (sm_latency)
		__atomic_fetch_add(&s->c.latency[dir], sm_ticks() - t0,
				   __ATOMIC_RELAXED);
}

/*
 * The first call on an fd nobody classified (one it inherited: a socket
 * as stdin, a socket-activated listener) was made before the fd was
 * looked at, and the look takes a millisecond or two here: the fd's
 * system calls, the state file made, the ticker started.  A signal then
 * (`timeout`'s SIGTERM, a handler that calls _exit or exec) ended the
 * process before the call was counted: that call's bytes, often all the
 * process moved, were in no record (found by a sweep, 2026-12-03).  So
 * signals wait from just after the call until it is counted, and the
 * ticker starts after that (a thread made with everything blocked would
 * keep that mask; and blocked signals look like a handler running:
 * maybe_in_handler).  Only SIGKILL, which nothing blocks, is left that
 * window.
 */
static void count_first(struct fd_slot *s, enum fd_dir dir, int64_t r,
			int err, uint64_t t0)
{
	int fd = (int)(s - sm_meter.tab.slots), saved = errno;
	sigset_t all, old;
	bool blocked;
	enum fd_kind kind;

	sigfillset(&all);
	/* (A sandboxed thread makes no system call it need not: quiet.h.) */
	blocked = !sm_quiet() && raw_sigmask(SIG_SETMASK, &all, &old) == 0;
	kind = classify_unknown(fd);
	if (fd_kind_counts(kind))
		count_slot(s, dir, r, err, t0);
	/* Wanted before a signal can come: a handler's _exit writes a final
	 * record only for a process that wanted a ticker. */
	if (fd_kind_tracked(kind))
		__atomic_store_n(&sm_meter.ticker_wanted, true,
				 __ATOMIC_RELEASE);
	if (blocked)
		raw_sigmask(SIG_SETMASK, &old, NULL);
	if (fd_kind_tracked(kind))
		want_ticker();
	errno = saved;
}

void sm_count_slow(struct fd_slot *s, enum fd_dir dir, int64_t r, uint64_t t0)
{
	int err = r < 0 ? sm_call_errno() : 0;
	enum fd_kind kind = fdtab_kind(s);

	/* Unknown: classified now.  Untracked: another thread's first call
	 * classified it since this one began (it is not to be counted).  Not
	 * on a thread whose TLS is not libc's (a zeroed-TLS CLONE_VM child,
	 * sm_tls_foreign): the look reads and sets errno, there a SIGSEGV
	 * (a reviewer's child writing first on an fd its parent never used).
	 * Such a call goes uncounted; the child's calls on fds already
	 * looked at are counted as ever. */
	if (kind == KIND_UNKNOWN) {
		if (!sm_tls_foreign())
			count_first(s, dir, r, err, t0);
		return;
	}
	if (!fd_kind_counts(kind))
		return;
	count_slot(s, dir, r, err, t0);
}

enum fd_kind sm_classify_slow(int fd)
{
	enum fd_kind kind = classify_unknown(fd);

	if (fd_kind_tracked(kind))
		want_ticker();
	return kind;
}
