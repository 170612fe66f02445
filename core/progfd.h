/*
 * progfd.h - where the library opens its files, and how it reaches the
 * program's fds from there.
 *
 * Every fd the library opens (the log, the Prometheus file and its
 * temporary, the state file while it is made) lives in an fd table of its own, never in the program's: a
 * number the program could be handed (POSIX's lowest free fd), close
 * (close_range, a close-all loop) or find taken (dup2) is never ours.
 *  - The ticker thread gives itself a private, empty fd table when it
 *    starts (progfd_detach: close_range(0, ~0U, CLOSE_RANGE_UNSHARE), which
 *    copies none of the program's fds).  Its opens take numbers in that
 *    table only.
 *  - Any other thread (the exit record from a destructor, a fork child
 *    before its ticker runs, the unit tests) does its file work in a
 *    short-lived child that shares the memory but not the fd table
 *    (clone(CLONE_VM | CLONE_VFORK), as posix_spawn does), and waits for it
 *    (progfd_run); that child leaves the program's table for an empty
 *    one, as the ticker does, without copying it.
 * From a private table the program's fds are reached through a pidfd
 * (pidfd_getfd; /proc/PID/fd/N without one).
 *
 * Beware, on a detached thread: an fd number that libc keeps in a global
 * (syslog's openlog socket, a FILE such as stderr) means another file in
 * the private table than in the program's.  The ticker must not call
 * syslog(), nor stdio on the program's FILEs; it writes to fd 2 through
 * progfd_get(2) (sink_warn does).
 */
#ifndef SOCKMETER_PROGFD_H
#define SOCKMETER_PROGFD_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/stat.h>

/*
 * progfd_detach - give the calling thread a private, empty fd table, and
 * the means to reach the program's fds from it.  Returns 0, or a negative
 * errno (kernel before 5.9, seccomp): the thread then stays in the
 * program's table and progfd_run uses a child for its file work.
 * Context: ticker only, at its start.
 */
int progfd_detach(void);

/* progfd_detached - true when the calling thread's fd table is private.
 * Context: any thread. */
bool progfd_detached(void);

/*
 * progfd_run - call fn(arg) where the fds it opens cannot be seen by the
 * program: directly on a detached thread, else in a child sharing our
 * memory (the caller waits; all signals blocked meanwhile).  fn must use
 * raw system calls only (no lock, no allocation).  Returns what fn
 * returned, or PROGFD_KILLED when the child was killed before fn returned
 * (what fn wrote down in arg meanwhile stands); when no child can be made
 * (-EAGAIN, seccomp), fn runs in the calling thread, as the only way left
 * to write the record.
 * Context: any thread (not a signal handler of a thread in a vfork).
 */
int progfd_run(int (*fn)(void *), void *arg);

/* The child progfd_run waited for was killed (it blocks every signal: a
 * SIGKILL meant for it alone). */
#define PROGFD_KILLED (-ECANCELED)

/*
 * progfd_run_copy - progfd_run, where fn sees a copy of the program's
 * whole fd table (to list it: /proc/self/fd in the child).  progfd_run's
 * child has an empty table, which is much cheaper to make in a process
 * with thousands of fds open.
 * Context: as progfd_run.
 */
int progfd_run_copy(int (*fn)(void *), void *arg);

/*
 * progfd_no_shared_child - from now on progfd_run's child is made with a
 * copy of the table, as progfd_run_copy's (under valgrind, which ends the
 * program at a clone with CLONE_FILES that is not a thread's).
 * Context: start-up only.
 */
void progfd_no_shared_child(void);

/*
 * progfd_stat - stat the file behind the program's fd.  Returns 0, -EBADF
 * when the program has no such fd open, or another negative errno when it
 * cannot be told (no /proc, the main thread exited...).
 * Context: any thread.
 */
int progfd_stat(int fd, struct stat *st);

/* A socket's addresses, as getsockname and getpeername give them (len 0:
 * unknown, unconnected, or not a socket). */
struct progfd_addrs {
	struct sockaddr_storage local, peer;
	socklen_t local_len, peer_len;
};

/*
 * progfd_stat_addrs - progfd_stat, and when the fd is a socket and a is not
 * NULL, its addresses into *a (unknown where only /proc can be used).
 * Context: any thread.
 */
int progfd_stat_addrs(int fd, struct stat *st, struct progfd_addrs *a);

/*
 * progfd_get - an fd of the calling thread's table that refers to the
 * program's fd (the same number when the table is shared, a copy made with
 * pidfd_getfd when it is private), or a negative errno.  Give it back with
 * progfd_put(fd, got).
 * Context: any thread.
 */
int progfd_get(int fd);
void progfd_put(int fd, int got);

/*
 * The copy a detached thread holds keeps the program's file open: a
 * socket the program closed meanwhile would be released only when the
 * copy is given back (a listener's port still bound, EADDRINUSE for the
 * program's next bind; a FIN sent late).  So the detached thread says
 * which of the program's fds it holds a copy of (progfd_lent: the number
 * plus one, 0 for none, PROGFD_WAITING while a closing thread waits), and
 * every close of the program's fds checks it after the real close
 * (progfd_await): when the number is in the range just closed, it waits
 * until the copy is back, so that the close has released what the
 * program's close alone would have.  The copy is held for a few system
 * calls (fstat, getsockname, TCP_INFO); the wait is bounded (50 ms) for
 * a ticker held up longer (a write to a full stderr pipe).
 * Context: progfd_await in any thread and signal handler, after the real
 * close (the fence pairs with the lender's store before pidfd_getfd: a
 * close that sees no lending happened before the copy could be made).
 */
#define PROGFD_WAITING 0x80000000u
extern uint32_t progfd_lent;
void progfd_await_slow(unsigned first, unsigned last);

static inline void progfd_await(unsigned first, unsigned last)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__builtin_expect(__atomic_load_n(&progfd_lent, __ATOMIC_RELAXED) ==
				     0,
			     1))
		return;
	progfd_await_slow(first, last);
}

/*
 * progfd_keep - a copy of the program's fd to hold for long (sink_pin's
 * stderr), not lent: closes do not wait for it.  Give it back with
 * progfd_put.  Context: any thread.
 */
int progfd_keep(int fd);

/* progfd_forked - a fork child has no lender: clears progfd_lent.
 * Context: fork child. */
void progfd_forked(void);

#endif
