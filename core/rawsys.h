/*
 * rawsys.h - system calls made inline, without libc's wrappers: for the
 * few calls of a fork child's first moments.  There every page touched for
 * the first time is a page fault (the child's page tables start without
 * libc's code), and a fault costs more than the call; libc's getpid or
 * mmap would be one more page each.  Return the kernel's value: a
 * negative errno on failure (errno is not set).  Other architectures than
 * x86-64 and arm64 go through libc's syscall().
 */
#ifndef SOCKMETER_RAWSYS_H
#define SOCKMETER_RAWSYS_H

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

/*
 * SM_FORK_PATH - on a function a fork child runs before it exits or execs
 * (the fork handlers, the final record's first checks).  A child's page
 * tables start without the library's code, and each 64 KB window of it
 * touched is a fault (the kernel maps code around a fault in such
 * windows); where page tables are shadowed (see SM_FORK_DATA) each page
 * touched costs again.  These functions go to one section, which
 * preload/fork.ld gathers before .text, on one page in the default build
 * (tests/bench/forkpages.sh): one window and one page, not one per object
 * file they come from.
 */
#define SM_FORK_PATH __attribute__((section(".text.hot.sockmeter_fork")))

/*
 * SM_FORK_DATA - on a variable of the library's own (not the meter's or
 * the state's: sm_core, preload.h) that a fork child reads or writes
 * before it exits or execs.  Where system calls and page faults are dear
 * (a virtual machine that shadows page tables, as here) a child pays for
 * every page it touches, even one its parent's page tables hold: about
 * 4-5 us a page read, 15 a page written (2026-12-05).  Spread over .data
 * and .bss these variables were seven pages; preload/fork.ld gathers
 * them in one section, one page (docs/performance.md).  Outside the
 * library (the unit tests, the tools) the section is only a name.
 */
#define SM_FORK_DATA __attribute__((section(".sm_fork_data")))

/*
 * SM_SYSCALL(n, args...) - the library's own syscall(), every argument
 * converted to a long first, and six of them always passed.  syscall() is
 * variadic: an int passed where the kernel takes a long (an offset, a
 * length, a pointer written as 0) arrives with whatever the register's
 * upper half held.  gcc happened to zero it; clang did not, and the state
 * file was mapped at a garbage offset (found 2026-12-05: a clang build's
 * every state file failed, "no room").  Calls that forward a host's
 * arguments, already longs, keep syscall().
 */
#define SM_SYSCALL_7(n, a, b, c, d, e, f, ...)                               \
	syscall((long)(n), (long)(a), (long)(b), (long)(c), (long)(d),         \
		(long)(e), (long)(f))
#define SM_SYSCALL(...) SM_SYSCALL_7(__VA_ARGS__, 0, 0, 0, 0, 0, 0, 0)

/* Always inlined, in sanitizer builds too (which inline nothing else):
 * an uninstrumented caller (wrap_creds.c's limits, which a sanitizer's
 * runtime calls while it starts) then has no instrumented callee. */
__attribute__((always_inline)) static inline long
raw_syscall6(long n, long a, long b, long c, long d, long e, long f)
{
#if defined(__x86_64__)
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	register long r9 __asm__("r9") = f;
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "0"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8),
			   "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
#elif defined(__aarch64__)
	register long x8 __asm__("x8") = n;
	register long x0 __asm__("x0") = a;
	register long x1 __asm__("x1") = b;
	register long x2 __asm__("x2") = c;
	register long x3 __asm__("x3") = d;
	register long x4 __asm__("x4") = e;
	register long x5 __asm__("x5") = f;

	__asm__ volatile("svc #0"
			 : "+r"(x0)
			 : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5)
			 : "memory");
	return x0;
#else
	long r = syscall(n, a, b, c, d, e, f);

	return r == -1 ? -(long)errno : r;
#endif
}

/* raw_syscall6 with libc's convention: -1 and errno on failure, else the
 * kernel's value. */
__attribute__((always_inline)) static inline long
raw_syscall_libc(long n, long a, long b, long c, long d, long e, long f)
{
	long r = raw_syscall6(n, a, b, c, d, e, f);

	if ((unsigned long)r > -4096ul) {
		errno = (int)-r;
		return -1;
	}
	return r;
}

/*
 * raw_sigmask - pthread_sigmask as glibc makes it, for the library's own
 * calls: libsockmeter.so exports a pthread_sigmask and a sigprocmask of
 * its own (preload/wrap_signals.c), which its own code must not go
 * through.  Never blocks glibc's two signals of its own (32:
 * cancellation, 33: setxid, which setuid's broadcast waits on); only the
 * first 64 signals, as glibc.  0, or an errno value.
 */
static inline int raw_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	sigset_t s;
	long r;

	if (set) {
		s = *set;
		s.__val[0] &= ~(3ul << 31);
		set = &s;
	}
	r = raw_syscall6(SYS_rt_sigprocmask, how, (long)set, (long)old, 8, 0,
			 0);
	return r < 0 ? (int)-r : 0;
}

/* One entry of getdents64. */
struct dirent64_raw {
	uint64_t ino;
	int64_t off;
	unsigned short reclen;
	unsigned char type;
	char name[];
};

static inline long raw_getpid(void)
{
	return raw_syscall6(SYS_getpid, 0, 0, 0, 0, 0, 0);
}

/* How many times a call of ours that a signal interrupted (EINTR) is made
 * again before it counts as failed: a signal's EINTR is no failure, but
 * a caller must not wait for ever on one that always fails so. */
#define EINTR_TRIES 8

/* mmap with MAP_FIXED semantics as given; returns addr or NULL. */
static inline void *raw_mmap(void *addr, size_t len, int prot, int flags,
			     int fd, off_t off)
{
	long r = raw_syscall6(SYS_mmap, (long)addr, (long)len, prot, flags,
			      fd, (long)off);

	return r < 0 && r > -4096 ? NULL : (void *)r;
}

/*
 * raw_dontdump - keep [addr, addr + len) out of the host's core dumps
 * (MADV_DONTDUMP).  The library's tables are reservations sized by the fd
 * limit, mostly never touched: in a core they are holes, but a core piped
 * to a handler (systemd-coredump, apport) gets them as zeroes, hundreds of
 * megabytes at a hard limit of a million fds, and none of it is the
 * host's.  A mapping made again over one (MAP_FIXED) loses the mark: it
 * is given again there.  Errors ignored (a kernel before 3.4).
 */
static inline void raw_dontdump(void *addr, size_t len)
{
#ifdef MADV_DONTDUMP
	raw_syscall6(SYS_madvise, (long)addr, (long)len, MADV_DONTDUMP, 0, 0,
		     0);
#else
	(void)addr;
	(void)len;
#endif
}

/*
 * raw_nohuge - no transparent huge pages in [addr, addr + len)
 * (MADV_NOHUGEPAGE).  The library's tables are touched a page here and
 * there (the fds in use); where THP is "always" (RHEL's and Fedora's
 * default, not Debian's) a first touch faulted in a 2 MiB page: a small
 * metered program was 2 MB larger in RSS for it, 4 MB with [state]
 * enabled = false, and so was every process of a pre-fork server.
 * Errors ignored (no THP in the kernel).
 */
static inline void raw_nohuge(void *addr, size_t len)
{
#ifdef MADV_NOHUGEPAGE
	raw_syscall6(SYS_madvise, (long)addr, (long)len, MADV_NOHUGEPAGE, 0,
		     0, 0);
#else
	(void)addr;
	(void)len;
#endif
}

/* raw_table - both marks of a table sized by the fd limit: out of core
 * dumps, no huge pages. */
static inline void raw_table(void *addr, size_t len)
{
	raw_dontdump(addr, len);
	raw_nohuge(addr, len);
}

#endif
