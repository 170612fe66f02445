/*
 * preload.h - what the wrappers share with the preload's runtime: the real
 * libc functions, the one metering state, and the inline accounting every
 * data wrapper ends with.  Only preload/ includes this file.
 */
#ifndef SOCKMETER_PRELOAD_H
#define SOCKMETER_PRELOAD_H

#include "../core/meter.h"
#include "../core/progfd.h"
#include "../core/quiet.h"
#include "../core/rawsys.h"
#include "../core/state.h"

#include <errno.h>
#include <spawn.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>

#include "funcs_creds.h"
#include "funcs_dl.h"
#include "funcs_exit.h"
#include "funcs_fds.h"
#include "funcs_names.h"
#include "funcs_pio.h"
#include "funcs_signals.h"
#include "funcs_stdio.h"

#define SM_EXPORT __attribute__((visibility("default")))
/* Another name of function f (putc of fputc, getc of fgetc: glibc's are
 * one function too), with f's attributes where the compiler can copy them
 * (GCC 9 on; clang has no copy attribute and stopped the build with
 * -Werror). */
#if defined(__has_attribute)
#if __has_attribute(copy)
#define SM_ALIAS_OF(f) __attribute__((alias(#f), copy(f)))
#endif
#endif
#ifndef SM_ALIAS_OF
#define SM_ALIAS_OF(f) __attribute__((alias(#f)))
#endif
/* Receive flags that move no data from the peer, so nothing is counted:
 * MSG_PEEK (the later read counts it), MSG_ERRQUEUE (the socket's own
 * error queue: our sent packets looped back with their timestamps, as
 * chronyd reads them). */
#define SM_RECV_NO_DATA (MSG_PEEK | MSG_ERRQUEUE)
/* A parenthesised list without its parentheses (wrapper macros that take
 * a parameter or argument list and add one of their own). */
#define SM_UNPAREN(...) __VA_ARGS__
#define SM_LIKELY(x) __builtin_expect(!!(x), 1)
#define SM_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* Every libc function we call through: the single list of wrapped calls,
 * made of one list per group of calls, each in its own header beside its
 * wrappers.  X(name, return type, parameter types) */
#define SM_REAL_FUNCS(X)                                                       \
	SM_FUNCS_DATA(X)                                                       \
	SM_FUNCS_PIO(X)                                                        \
	SM_FUNCS_FDS(X)                                                        \
	SM_FUNCS_EXIT(X)                                                       \
	SM_FUNCS_CREDS(X)                                                      \
	SM_FUNCS_STDIO(X)                                                      \
	SM_FUNCS_NAMES(X)                                                      \
	SM_FUNCS_SIGNALS(X)                                                    \
	SM_FUNCS_DL(X)

/* The data and lifecycle calls of wrappers.c. */
#define SM_FUNCS_DATA(X)                                                       \
	X(read, ssize_t, (int, void *, size_t))                                \
	X(write, ssize_t, (int, const void *, size_t))                         \
	X(readv, ssize_t, (int, const struct iovec *, int))                    \
	X(writev, ssize_t, (int, const struct iovec *, int))                   \
	X(send, ssize_t, (int, const void *, size_t, int))                     \
	X(recv, ssize_t, (int, void *, size_t, int))                           \
	X(sendto, ssize_t,                                                     \
	  (int, const void *, size_t, int, const struct sockaddr *, socklen_t))\
	X(recvfrom, ssize_t,                                                   \
	  (int, void *, size_t, int, struct sockaddr *, socklen_t *))          \
	X(sendmsg, ssize_t, (int, const struct msghdr *, int))                 \
	X(recvmsg, ssize_t, (int, struct msghdr *, int))                       \
	X(sendmmsg, int, (int, struct mmsghdr *, unsigned int, int))           \
	X(recvmmsg, int,                                                       \
	  (int, struct mmsghdr *, unsigned int, int, struct timespec *))       \
	X(sendfile, ssize_t, (int, int, off_t *, size_t))                      \
	X(sendfile64, ssize_t, (int, int, off64_t *, size_t))                  \
	X(__read_chk, ssize_t, (int, void *, size_t, size_t))                  \
	X(__recv_chk, ssize_t, (int, void *, size_t, size_t, int))             \
	X(__recvfrom_chk, ssize_t,                                             \
	  (int, void *, size_t, size_t, int, struct sockaddr *, socklen_t *))  \
	X(socket, int, (int, int, int))                                        \
	X(socketpair, int, (int, int, int, int *))                             \
	X(accept, int, (int, struct sockaddr *, socklen_t *))                  \
	X(accept4, int, (int, struct sockaddr *, socklen_t *, int))            \
	X(connect, int, (int, const struct sockaddr *, socklen_t))             \
	X(bind, int, (int, const struct sockaddr *, socklen_t))                \
	X(listen, int, (int, int))                                             \
	X(close, int, (int))                                                   \
	X(dup, int, (int))                                                     \
	X(dup2, int, (int, int))                                               \
	X(dup3, int, (int, int, int))                                          \
	X(fcntl, int, (int, int, ...))                                         \
	X(fcntl64, int, (int, int, ...))                                       \
	X(close_range, int, (unsigned int, unsigned int, int))                 \
	X(closefrom, void, (int))

#define X(name, ret, args) typedef ret(*sm_##name##_fn) args;
SM_REAL_FUNCS(X)
#undef X

struct sm_real {
#define X(name, ret, args) sm_##name##_fn name;
	SM_REAL_FUNCS(X)
#undef X
};

/* Hidden, so the hot path reaches them PC-relative, without the GOT. */
#pragma GCC visibility push(hidden)
extern struct sm_real sm_real;
/* The stubs sm_real starts with (unbound.c, or the file of their group):
 * each binds everything once, then forwards, or makes the raw system call
 * while dlsym is being re-entered.  Context: any thread and signal
 * handler. */
#define X(name, ret, args) ret unbound_##name args;
SM_REAL_FUNCS(X)
#undef X
/*
 * The meter and the durable state of this process, side by side: a fork
 * child writes the meter's tail (from pid on: meter_after_fork) and the
 * state's head (up to the low slots' chunk states: state_after_fork), and
 * reads a few of the meter's settings before pid (cfg.interval_ms,
 * cfg.state_enabled, tab.cap, sink.pin); pad puts all of it on one page,
 * which the child pays for once (rawsys.h's SM_FORK_DATA: each page a
 * child touches costs it, read or written).  The page starts at the
 * first of those settings.  chores_due is durable.c's, written there too.
 */
#define SM_CORE_FIRST offsetof(struct meter, cfg.interval_ms)
#define SM_CORE_PAD (4096 - SM_CORE_FIRST % 4096)
struct sm_core {
	char pad[SM_CORE_PAD];
	struct meter meter;
	uint64_t chores_due;
	struct state state;
};
_Static_assert(sizeof(struct meter) - SM_CORE_FIRST + sizeof(uint64_t) +
			       offsetof(struct state, slot_chunks) + 256 <=
		       4096,
	       "what a fork child touches of sm_core spans more than a page");
_Static_assert((offsetof(struct sm_core, meter) + SM_CORE_FIRST) % 4096 == 0,
	       "sm_core's pad puts the child's first setting at a page's start");
_Static_assert(offsetof(struct meter, cfg.state_enabled) > SM_CORE_FIRST &&
		       offsetof(struct meter, tab.cap) > SM_CORE_FIRST &&
		       offsetof(struct meter, sink.pin) > SM_CORE_FIRST,
	       "a setting a fork child reads is before its page");
extern struct sm_core sm_core;
#define sm_meter (sm_core.meter)
/* The metered path must leave the inline default counting: latency is on,
 * or the categories are not the default set. */
extern bool sm_slow;
extern bool sm_latency; /* the latency category is on */
/* Children that may be running on our memory (wrap_vfork.c) with no
 * mark of their own: a clone with CLONE_VM but not CLONE_THREAD, but for
 * the vfork-like ones that sm_vfork_child marks.  Always at least 1 where
 * vfork is not marked (SM_COUNT_VFORK 0). */
extern int sm_vm_children;
/* 1 while this thread runs as a vfork child (wrap_vfork.c): a vfork
 * child runs on the thread that called vfork, its TLS included. */
extern __thread int sm_vfork_child __attribute__((tls_model("initial-exec")));
#pragma GCC visibility pop

/* vfork children are marked (wrap_vfork.c's assembly): x86-64, no
 * sanitizer. */
#if defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__) &&                   \
    !defined(__SANITIZE_THREAD__)
#define SM_COUNT_VFORK 1
#else
#define SM_COUNT_VFORK 0
#endif

/*
 * True in a child that runs on our memory (a vfork child, a raw clone
 * with CLONE_VM) with an fd table of its own: its calls must not touch
 * the parent's slots.  A vfork child is marked (one TLS load); a getpid()
 * system call only while another kind may be running (wrap_vfork.c).
 * Never on data calls.
 */
static inline bool sm_foreign_process(void)
{
	return sm_vfork_child ||
	       (__atomic_load_n(&sm_vm_children, __ATOMIC_SEQ_CST) &&
		!sm_quiet() && raw_getpid() != sm_meter.pid);
}

/*
 * True on a thread whose TLS is not libc's: a child made by
 * clone(CLONE_VM | CLONE_SETTLS) on a TLS block of the program's own, as
 * Chromium's chroot helper is (a zeroed buffer: clone writes into the
 * child's TLS, which must not be the parent's).  Any TLS access of ours
 * there (errno, whose address comes from the TCB's self pointer, 0 there:
 * SIGSEGV; our own marks, fs-relative: a write into the parent's stack)
 * would crash or corrupt it, so each lifecycle path checks this before
 * its first TLS access (syscall()'s dispatch, connect, clone,
 * sm_opened_inside for the calls that make fds, and the hooks reached
 * without those) and leaves such a child to the real call.  libc's
 * TCB always points at itself; a zeroed one points nowhere.  One load.
 * Data calls do not check: counting takes no TLS (errno only for a call
 * that failed).  Context: any thread.
 */
static inline __attribute__((always_inline)) bool sm_tls_foreign(void)
{
#if defined(__x86_64__)
	void *self;

	__asm__ volatile("movq %%fs:0, %0" : "=r"(self));
	return SM_UNLIKELY(self == NULL);
#elif defined(__aarch64__)
	void *const *tp;

	__asm__ volatile("mrs %0, tpidr_el0" : "=r"(tp));
	return SM_UNLIKELY(tp == NULL || *tp == NULL);
#else
	return false;
#endif
}

/* A child on our memory is about to be made (clone with CLONE_VM). */
static inline void sm_vm_child_begin(void)
{
	if (SM_COUNT_VFORK)
		__atomic_add_fetch(&sm_vm_children, 1, __ATOMIC_SEQ_CST);
}

/* ...and was made (r, its pid, in the parent; 0 in a child that returns
 * on our stack) or not (r -1).  A vfork-like child has exec'd or exited by
 * the time its parent runs again: no longer counted; any other stays
 * counted for good.  errno untouched. */
static inline void sm_vm_child_end(long r, bool vfork_like)
{
	if (SM_COUNT_VFORK && (r < 0 || (vfork_like && r > 0)))
		__atomic_sub_fetch(&sm_vm_children, 1, __ATOMIC_SEQ_CST);
}

/*
 * sm_bind - look every real function up, once.  Returns false only when
 * called again from inside the lookup on the same thread (dlsym reentering
 * a wrapper): the caller then falls back to a raw system call.
 * Context: any thread; the first call binds (dlsym, pthread_once), which
 * start-up does before the host can install a signal handler.
 */
bool sm_bind(void);

/* Lifecycle hooks, called by the wrappers after a successful real call
 * (sm_closing and sm_closing_range: before the real close).  Each is
 * async-signal-safe: no lock, no allocation, no thread creation (see
 * want_ticker in preload.c).  Context: any thread and signal handler. */
void sm_opened_socket(int fd, int domain, int type, int protocol);
/* peer: the new connection's peer as accept returned it (len 0, or NULL:
 * not known, then getpeername is asked). */
void sm_opened_accept(int listen_fd, int fd, const struct fd_addr *peer);
/* True when an accept on listen_fd may be given a buffer of ours for the
 * peer's address: metered peers, and a TCP listener. */
bool sm_accept_peer(int listen_fd);
void sm_opened_dup(int oldfd, int newfd);
void sm_connected(int fd, const struct sockaddr *addr, socklen_t len);

/*
 * Whether p may point to an object the program owns, as far as can be
 * told without a system call: aligned for it, past the lowest pages
 * (vm.mmap_min_addr keeps 64 KiB unmapped by default: NULL and a
 * member's offset from it), and in the lower, user half of the address
 * space (not (void *)-1).  A wrapper reads what such an argument points
 * to before the real call only when this holds: the kernel fails the
 * call with EFAULT where a read of ours would fault (accept's length, a
 * clone3's arguments).  A pointer to an unmapped page of the user range
 * is not told apart (README, Limits).
 */
static inline bool sm_ptr_plausible(const void *p, size_t align)
{
	uintptr_t u = (uintptr_t)p;

	return u >= 65536 && (intptr_t)u > 0 && !(u & (align - 1));
}

/*
 * Whether a connect that returned r (errno err) was made to addr: it
 * connected, goes on in the background (non-blocking, or a blocking one
 * interrupted by a signal), or reached the peer's side and failed there
 * (refused, timed out, unreachable).  Its record then names the peer; not
 * for a call that did not start (EISCONN keeps the peer it had).
 */
static inline bool sm_connect_tried(int r, int err)
{
	if (r == 0)
		return true;
	switch (err) {
	case EINPROGRESS:
	case EINTR:
	case ECONNREFUSED:
	case ETIMEDOUT:
	case EHOSTUNREACH:
	case ENETUNREACH:
	case ECONNRESET:
	case EAGAIN:
		return true;
	default:
		return false;
	}
}
void sm_bound(int fd);
/* sm_listening - after a successful listen: the address of a socket the
 * kernel bound at the listen (none was bound before).  Context: any
 * thread. */
void sm_listening(int fd);

/* A TCP Fast Open send (sendto or sendmsg with MSG_FASTOPEN and an
 * address) that returned r: the connect it made, as connect's. errno
 * kept.  Context: any thread and signal handler. */
static inline void sm_fastopen(int fd, ssize_t r, const void *addr,
			       socklen_t len)
{
	int saved = errno;

	if (sm_connect_tried(r < 0 ? -1 : 0, saved))
		sm_connected(fd, (const struct sockaddr *)addr, len);
	errno = saved;
}

/* The same for sendmsg: msg is read only when the kernel took it (a
 * connect was made), never after it refused it (EFAULT). */
static inline void sm_fastopen_msg(int fd, ssize_t r,
				   const struct msghdr *msg)
{
	if (sm_connect_tried(r < 0 ? -1 : 0, errno) && msg->msg_name)
		sm_fastopen(fd, r, msg->msg_name, msg->msg_namelen);
}
void sm_closing(int fd);
void sm_closing_range(unsigned first, unsigned last);
/* close_range(first, last, flags), named or through syscall(), is about to
 * run: sm_closing_range, before the real call as close() retires, once
 * the real call returns another thread may hold new fds with these
 * numbers (and a socket gone has no kernel's view left to read).  Not for
 * a call the kernel refuses (EINVAL: first > last, an unknown flag), nor
 * for CLOSE_RANGE_CLOEXEC, which only marks the fds: they stay open. */
void sm_close_range_begins(unsigned first, unsigned last, int flags);
/* dup2/dup3(oldfd, newfd, flags; 0 for dup2) is about to close newfd: its
 * connection's close record, as sm_closing's, when the call can succeed.
 * errno kept.  Context: any thread and signal handler. */
void sm_dup_closing(int oldfd, int newfd, int flags);
/* fds arrived with SCM_RIGHTS in msg (wrap_fds.c): their numbers' slots
 * are retired.  Context: any thread and signal handler. */
void sm_fds_received(const struct msghdr *msg);
/* fds went with SCM_RIGHTS in msg (wrap_fds.c): another process may move
 * bytes on their connections now, which the kernel's counts include:
 * marked shared.  Context: any thread and signal handler. */
void sm_fds_sent(const struct msghdr *msg);

/* sm_creds_mirror - a per-thread credential call (SYS_prctl's keep-caps,
 * securebits, bounding and ambient sets; SYS_capset with a[0], a[1] its
 * header and data) succeeded: the ticker makes it too (preload.c).
 * errno kept.  Context: any program thread (not a signal handler). */
void sm_creds_mirror(long nr, const long a[4]);

/* Whether a successful prctl(option, ...) changes what glibc's setuid
 * broadcast needs alike on every thread. */
static inline bool sm_prctl_mirrored(int option, unsigned long a2)
{
	return option == PR_SET_KEEPCAPS || option == PR_SET_SECUREBITS ||
	       option == PR_CAPBSET_DROP ||
	       (option == PR_CAP_AMBIENT && a2 != PR_CAP_AMBIENT_IS_SET);
}

/*
 * sm_spawning - a child is about to be made that may hold our fds
 * (posix_spawn, a vfork child's exec): see meter_forked.
 * Context: any thread and signal handler, a vfork child included.
 */
void sm_spawning(void);

/* sm_exec_failed - an exec whose record was written returned: the ticker
 * makes batches again.  Context: any thread. */
void sm_exec_failed(void);

/* sm_exec_env_init - note whether LD_PRELOAD loaded us, and our name in
 * it, for the warning of an exec that drops us.  Context: start-up only. */
void sm_exec_env_init(void);

/*
 * sm_final_record - the last record before _exit (the exit record, and
 * metering ends) or exec (the exec record; metering goes on if the exec
 * fails).  Waits at most 2 s for a ticker mid-write; does nothing in a
 * vfork child.  errno kept.
 * Context: any thread (the _exit and exec wrappers).
 */
void sm_final_record(bool exec);

/*
 * sm_thread_exits - the calling thread is in pthread_exit or thrd_exit:
 * when it is the main thread, the ticker starts looking for the moment it
 * is the last thread left.  Context: any thread.
 */
void sm_thread_exits(void);

/*
 * sm_raw_thread_exit - the calling thread is about to end with
 * syscall(SYS_exit, status): when it is the last program thread, status
 * is the process's, and the ticker looks for the moment it is alone
 * (preload.c, last_raw_exit).  Context: any program thread, before the
 * real call.
 */
void sm_raw_thread_exit(long status);

/* sm_dl_lock - wrap_dlopen.c's spin lock, in a page a fork child gets
 * as zeroes (a fork by another thread may find it taken).
 * Context: any thread. */
int *sm_dl_lock(void);

/* sm_exit_begins - a thread calls exit() while another thread's exit is
 * under way: make the exit record now, or wait (2 s at most) for the
 * thread making it.  Context: exit's caller. */
void sm_exit_begins(void);

/* sm_quick_exit_handler - the exit record at quick_exit (registered with
 * at_quick_exit by sm_init, so that it runs after the program's
 * handlers).  Context: the thread that called quick_exit. */
void sm_quick_exit_handler(void);

/* What the exported close, dup2 and open do, for the library's own use
 * (daemon): it never calls its exported wrappers (t_own_calls_unwrapped).
 * Context: as the calls. */
int sm_close_hooked(int fd);
int sm_dup2_hooked(int oldfd, int newfd);
int sm_open_hooked(const char *path, int flags, mode_t mode);

/*
 * sm_raw_fork - around a raw clone that makes a process of its own (no
 * CLONE_VM): our fork handlers, which libc does not run for it (prepare
 * before, then parent or child after).  sm_names_fork - the name table's
 * part of them (wrap_names.c; nothing before its first lookup).
 * Context: the thread making the clone; the child.
 */
enum sm_raw_fork_phase {
	SM_RAW_FORK_PREPARE,
	SM_RAW_FORK_PARENT,
	SM_RAW_FORK_CHILD,
};
void sm_raw_fork(enum sm_raw_fork_phase phase);
void sm_names_fork(enum sm_raw_fork_phase phase);

/* The durable state (durable.c).  How an image ends, for sm_durable_end. */
enum sm_end {
	SM_END_EXIT,
	SM_END_EXEC,
	SM_END_EXEC_FAILED,
	SM_END_EXIT_UNWRITTEN, /* exiting; the record is left to recovery */
};

/* sm_durable_init - the state file, then the meter in it (sm_meter); as
 * meter_init returns.  Context: start-up only. */
int sm_durable_init(const struct config *cfg, const char *prog, long pid,
		    uint32_t cap, struct meter_time now,
		    config_report_fn report, void *ctx);

/* sm_durable_give_back - undo a start-up that succeeded: the meter's
 * memory, the state file and its reservation.  Context: start-up only,
 * before any wrapper or thread used the meter. */
void sm_durable_give_back(void);

/* sm_durable_prepare_fork - before a fork: what a fork child left for its
 * own first fork (state_prepare_fork).  Context: fork's prepare handler. */
void sm_durable_prepare_fork(void);

/* sm_durable_after_fork - the child's own state file, then
 * meter_after_fork.  Returns 0, or the errno of the memory that could not
 * be made the child's (the child then runs unmetered: the caller says
 * so).  Context: fork child. */
int sm_durable_after_fork(long pid, struct meter_time now);

/* sm_durable_end - after the final record: exit removes the file, exec
 * marks it final, a failed exec marks it live again.
 * Context: the final record's caller (holds the ticker's lock). */
void sm_durable_end(enum sm_end how);

/* sm_durable_before_sandbox - back the state file's first slots (fds
 * 0..511) and the close queue's next entries now: a sandboxed thread
 * (core/quiet.h) may not.  Context: sm_confining. */
void sm_durable_before_sandbox(void);

/* sm_durable_pin_dir - the state file's directory kept open by the
 * ticker (state_pin_dir), with the log (meter_pin_log).  Context: ticker. */
void sm_durable_pin_dir(void);

/* sm_durable_file_wanted - state_file_wanted for this
 * process's state; sm_durable_dir_usable_by - state_dir_usable_by for
 * its [state] dir.  Context: any thread. */
bool sm_durable_file_wanted(void);
/* sm_durable_say_refused - once, when this fork child could not make the
 * state file its parent had (state_refused_take): a warning naming the
 * directory and the uid.  Not in a signal handler (sm_warn). */
void sm_durable_say_refused(void);
/* sm_durable_say_incomplete - once, when a chunk of this process's state
 * could not be backed by its file (state_incomplete_take): a warning
 * naming the directory.  Not in a signal handler (sm_warn). */
void sm_durable_say_incomplete(void);
/* sm_durable_make_file - state_make_file for this process's state. */
void sm_durable_make_file(void);
bool sm_durable_dir_usable_by(unsigned uid);

/* sm_durable_mark_exposed - state_mark_exposed when root (before a uid
 * change away from root, or a chroot).  Context: not a sandboxed thread. */
void sm_durable_mark_exposed(void);

/* sm_durable_log_moved - the sink's path changed (a uid change): the
 * header names the new one.  Context: the caller holds the write lock. */
void sm_durable_log_moved(void);

/* sm_durable_lazy_ranges - the state's reservation and what is left of
 * its file's mapping, to s (state_lazy_ranges).  Context: any thread. */
struct lockall_set;
void sm_durable_lazy_ranges(struct lockall_set *s);

/* sm_mlockall, sm_munlockall - mlockall and munlockall without the
 * library's reserved tables (wrap_mlock.c, core/lockall.h), for the
 * exported ones and syscall().  sm_future_locked: whether this process
 * asked for its future mappings to be locked (MCL_FUTURE through
 * them): the ticker then maps nothing it could do without (no recovery
 * of others' state files, each an image as big as the file, locked
 * whole).  Context: any thread. */
int sm_mlockall(int flags);
int sm_munlockall(void);
bool sm_future_locked(void);

/* sm_started - the constructor has begun (or is done); sm_mlock_started:
 * its end, where an mlockall made before it is finished (wrap_mlock.c).
 * Context: the constructor. */
bool sm_started(void);
void sm_mlock_started(void);

/* sm_durable_chores - a little after the ticker starts, then once a
 * minute: recover dead processes' state files (rate-limited across
 * processes), calling between(ctx) before each file.
 * Context: ticker only, outside the ticker's lock. */
void sm_durable_chores(uint64_t mono_ns, const uint32_t *stop,
		       void (*between)(void *ctx), void *ctx);

/* sm_durable_watch - at most once a second: whether this process's state
 * file was removed while it runs (state_removed), said once in a warning.
 * Context: ticker only, not sandboxed (sm_quiet). */
void sm_durable_watch(uint64_t mono_ns);

/* sm_durable_ending - the final record is about to be written: the state
 * file says so (STATE_ENDING), so that a recovery after a kill in the
 * middle looks for the record in the log before writing it again.
 * sm_durable_end follows.  Context: whoever writes the final record. */
void sm_durable_ending(void);

/* The first data call on an fd nobody classified: returns the kind the
 * slot now holds.  Context: any thread and signal handler. */
__attribute__((cold)) enum fd_kind sm_classify_slow(int fd);

/*
 * sm_ticks - the latency clock: the CPU's cycle counter where there is one
 * readable from user space (a single instruction, so the metered half of a
 * wrapper makes no extra call and keeps a small frame), else
 * CLOCK_MONOTONIC in ns.  The ticker calibrates ticks against
 * CLOCK_MONOTONIC (meter.ns_per_tick).
 * Context: any thread and signal handler.
 */
static inline uint64_t sm_ticks(void)
{
#if defined(__x86_64__) || defined(__i386__)
	return __builtin_ia32_rdtsc();
#elif defined(__aarch64__)
	uint64_t v;

	__asm__ volatile("mrs %0, cntvct_el0" : "=r"(v));
	return v;
#else
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
#endif
}

/*
 * sm_start - before a metered call: 0 on the default configuration, else
 * non-zero (the latency clock with its low bit set), which sends sm_data
 * down the out-of-line path.
 * Context: any thread and signal handler.
 */
__attribute__((noinline, cold)) uint64_t sm_start_slow(void);

static inline __attribute__((always_inline)) uint64_t sm_start(void)
{
	return SM_UNLIKELY(sm_slow) ? sm_start_slow() : 0;
}

/*
 * sm_metered - whether a data call on fd is metered, and in which slot.
 * False is the fast path (metering off, fd beyond the table, or an fd
 * classified as not metered): the wrapper then tail-calls the real function
 * and adds only these few instructions.  An fd nobody classified yet is
 * metered: sm_data() classifies it, once.
 * Context: any thread and signal handler.
 */
static inline __attribute__((always_inline)) bool sm_metered(int fd,
							       struct fd_slot **s)
{
	if ((unsigned)fd >= sm_meter.tab.cap)
		return false;
	*s = &sm_meter.tab.slots[fd];
	return __atomic_load_n(&(*s)->kind, __ATOMIC_RELAXED) != KIND_UNTRACKED;
}

/* The bytes an *mmsg call moved: msg_len of each message it handled (r,
 * its return value, counts them).  Context: any thread and signal handler. */
static inline int64_t sm_mmsg_bytes(const struct mmsghdr *v, int r)
{
	int64_t sum = 0;
	int i;

	if (r < 0)
		return r;
	for (i = 0; i < r; i++)
		sum += v[i].msg_len;
	return sum;
}

/* The metered half of a data wrapper: out of line, so that the fast path
 * needs no stack frame. */
#define SM_METERED __attribute__((noinline))
/* The same, for the calls that note themselves in flight
 * (sm_inflight_set): each direction's in a section of its own, so that a
 * return address into one tells the direction (wrap_signals.c). */
#define SM_METERED_DIR_IN __attribute__((noinline, section("sm_metered_in")))
#define SM_METERED_DIR_OUT                                                     \
	__attribute__((noinline, section("sm_metered_out")))

/* The category set most programs run with, given its own copy of the
 * counting code with every test folded away. */
#define SM_ACCT_DEFAULT (ACCT_BYTES | ACCT_CALLS | ACCT_ERRORS | ACCT_SIZES)

/*
 * A data call in the kernel, noted in its slot (fd_slot.inflight_sp): the
 * low 32 bits of the calling thread's stack pointer, stored just before
 * the real call and cleared just after it, one store each (the hot path's
 * whole cost).  A handler the program installed runs through our
 * trampoline (wrap_signals.c), which reads it: a handler that interrupted
 * such a call right as its system call returned (a signal pending then: a
 * blocking send cut short by SIGQUIT) runs before the wrapper counts, and
 * if it ends the process (_exit, exit), the call's bytes, already moved,
 * would never be counted.  The stack pointer tells the interrupted
 * thread's call from another thread's on the same fd (threads' stacks
 * are not 4 GiB apart), and leads to the wrapper's return address, whose
 * section says the direction (SM_METERED_DIR_*).  Only calls whose fd is
 * their first argument and whose result is their bytes note themselves
 * (not the *mmsg family, sendfile, splice, tee, vmsplice, syscall(), nor
 * stdio).  Context: any thread and signal handler.
 */
#if defined(__x86_64__)
static inline __attribute__((always_inline)) void
sm_inflight_set(struct fd_slot *s)
{
	/* One instruction; not volatile, so the compiler keeps the latency
	 * path apart (a volatile asm joined them: three more). */
	__asm__("movl %%esp, %0" : "=m"(s->inflight_sp));
}

static inline __attribute__((always_inline)) void
sm_inflight_clear(struct fd_slot *s)
{
	__atomic_store_n(&s->inflight_sp, 0, __ATOMIC_RELAXED);
}
#else
static inline void sm_inflight_set(struct fd_slot *s)
{
	(void)s;
}

static inline void sm_inflight_clear(struct fd_slot *s)
{
	(void)s;
}
#endif

/* sm_signals_init - what the trampoline's checks need, found once at
 * start-up (the code ranges of libc and of this library).  Context: the
 * constructor. */
void sm_signals_init(void);

/* sm_count_interrupted - count the data call a handler of this thread
 * interrupted as it returned (see sm_inflight_set), once; for the final record
 * of exit and _exit, made in that handler.  Context: the thread about to
 * end the process. */
void sm_count_interrupted(void);

/* sm_settle_left - count the calls cut short by handlers this thread left
 * by siglongjmp, before a close retires their slot.  Context: the closing
 * thread, outside those handlers. */
void sm_settle_left(void);

/*
 * sm_count_slow - sm_data's out-of-line half: an fd seen for the first time
 * (classified here, once: a few system calls), categories other than the
 * default set, latency.
 * Context: any thread and signal handler.
 */
void sm_count_slow(struct fd_slot *s, enum fd_dir dir, int64_t r,
		   uint64_t t0);

/*
 * The errno a failed data call left, to class its error: read through
 * libc's errno location, which on a thread whose TLS is not libc's (a
 * zeroed-TLS CLONE_VM child, sm_tls_foreign) is no address at all: there
 * the error is unclassed (0, "other") rather than a SIGSEGV.  libc's own
 * calls set errno there fs-relative, without that pointer.  Only on the
 * failure branch: a successful call pays nothing.
 */
static inline __attribute__((always_inline)) int sm_call_errno(void)
{
	return sm_tls_foreign() ? 0 : errno;
}

/*
 * sm_data - account one finished data call in slot s: r is its return
 * value, t0 what sm_start() gave.  No lock, no allocation, no system call,
 * errno left as the call left it.  Only s and t0 live across the real
 * call, so the metered half of a wrapper keeps a small frame; the default
 * configuration is counted inline with every category test folded away.
 * Context: any thread and signal handler.
 */
static inline __attribute__((always_inline)) void
sm_data(struct fd_slot *s, enum fd_dir dir, int64_t r, uint64_t t0)
{
	if (SM_LIKELY(!t0 && fd_kind_counts(__atomic_load_n(
				     &s->kind, __ATOMIC_RELAXED))))
		fd_account(s, dir, r, r < 0 ? sm_call_errno() : 0,
			   SM_ACCT_DEFAULT);
	else
		sm_count_slow(s, dir, r, t0);
}

/*
 * A call that moves bytes from one fd straight into another (sendfile,
 * splice): both ends are accounted, `in` as received and `out` as sent.
 * sm_ends_start says whether either end is metered (the fast path when
 * not); sm_ends_account counts the call's result r on each metered end.
 * in_t0/out_t0 hold what sm_start() gave, or UINT64_MAX for an end that is
 * not metered.  Context: any thread and signal handler.
 */
struct sm_ends {
	struct fd_slot *out, *in;
	uint64_t out_t0, in_t0;
};

static inline __attribute__((always_inline)) bool
sm_ends_start(int out, int in, struct sm_ends *e)
{
	e->out_t0 = sm_metered(out, &e->out) ? sm_start() : UINT64_MAX;
	e->in_t0 = sm_metered(in, &e->in) ? sm_start() : UINT64_MAX;
	return e->out_t0 != UINT64_MAX || e->in_t0 != UINT64_MAX;
}

/*
 * What this thread registered last (opened() in preload.c): how many fds in
 * all, and the last one.  A wrapper takes the mark before its real call and
 * asks after it whether that call registered fd inside (another preload
 * reaching our syscall() wrapper): then it leaves fd as registered.
 * Context: any thread and signal handler (what a handler registers in
 * between is another fd, which the check tells apart, or one it closed
 * again: sm_closing forgets it).
 */
struct sm_opened_here {
	unsigned n;
	int fd;
};
extern __thread struct sm_opened_here sm_opened_here
	__attribute__((tls_model("initial-exec")));

static inline unsigned sm_opens_mark(void)
{
	return sm_tls_foreign() ? 0 : sm_opened_here.n;
}

/* (True on a foreign TLS: the caller then registers nothing.) */
static inline bool sm_opened_inside(unsigned mark, int fd)
{
	return sm_tls_foreign() ||
	       (sm_opened_here.n != mark && sm_opened_here.fd == fd);
}

/* sm_clock_bind - find libc's own clock_gettime and clock_nanosleep, which
 * the library's clock calls go to (clock.c).  Context: the constructor. */
void sm_clock_bind(void);

/* The direction of a vmsplice on pipe end fd: one fcntl system call, errno
 * left as it was (wrap_splice.c). */
enum fd_dir sm_vmsplice_dir(int fd);

static inline void sm_ends_account(const struct sm_ends *e, ssize_t r)
{
	if (e->out_t0 != UINT64_MAX)
		sm_data(e->out, DIR_OUT, r, e->out_t0);
	if (e->in_t0 != UINT64_MAX)
		sm_data(e->in, DIR_IN, r, e->in_t0);
}

/*
 * sm_sendfile_pieces - a sendfile with a metered end.  One sendfile can be
 * a whole file (busybox asks for 16 MiB, Python's socket.sendfile for up
 * to 1 GiB), and a process killed while it blocks (SIGKILL, SIGTERM by
 * default, a slow receiver) never returns from it: none of its bytes were
 * counted.  From a regular file into a socket, a call of more than
 * SM_SENDFILE_PIECE bytes is made as real calls of at most that, its bytes
 * counted as each returns: a kill loses at most one piece.  The program
 * sees one call: it returns at the first piece that moves less than asked
 * (end of file, a full non-blocking socket, a signal), or with the bytes
 * moved when a later piece fails (errno as it was); the counters get one
 * call of that size.  Anything else (into a pipe, a count the kernel
 * would refuse or clamp) is one real call, counted as before.
 * one(out, in, off, n) makes one real call.  Context: any thread and
 * signal handler.
 */
#define SM_SENDFILE_PIECE ((size_t)1 << 20)
typedef ssize_t (*sm_piece_fn)(int out, int in, void *off, size_t n);
ssize_t sm_sendfile_pieces(sm_piece_fn one, int out, int in, void *off,
			   size_t n, const struct sm_ends *e);

#endif
