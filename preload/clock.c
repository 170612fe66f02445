/*
 * clock.c - the library's own clocks, whatever else is preloaded.
 *
 * Another preload may interpose clock_gettime, clock_nanosleep and
 * nanosleep: libfaketime moves the clock by a year, or makes it run
 * faster or slower.  The ticker's futex deadlines are on the kernel's
 * CLOCK_MONOTONIC, so with a faked one it slept for good (no interval
 * record, window buckets never rotated, no automatic recovery), fork
 * children's records mixed the faked time with the kernel's, and the
 * library's bounded waits could grow a hundredfold.  The link turns the
 * library's own calls into __wrap_clock_gettime, __wrap_clock_nanosleep
 * and __wrap_nanosleep (Makefile), which call libc's own definitions,
 * looked up in libc itself rather than in the global scope, once at
 * start-up; until then, or if that fails, the system call.  The records'
 * times are the kernel's, whatever time the program is shown.
 */
#include "preload.h"

#include <dlfcn.h>
#include <gnu/lib-names.h>
#include <sys/syscall.h>
#include <time.h>

typedef int (*gettime_fn)(clockid_t, struct timespec *);
typedef int (*sleep_fn)(const struct timespec *, struct timespec *);
typedef int (*nanosleep_fn)(clockid_t, int, const struct timespec *,
			    struct timespec *);

/* Set once, before any thread of ours runs (sm_clock_bind). */
static gettime_fn libc_gettime;
static nanosleep_fn libc_nanosleep;
static sleep_fn libc_sleep;

int __wrap_clock_gettime(clockid_t id, struct timespec *ts);
int __wrap_clock_nanosleep(clockid_t id, int flags, const struct timespec *t,
			   struct timespec *rem);
int __wrap_nanosleep(const struct timespec *t, struct timespec *rem);

void sm_clock_bind(void)
{
	/* libc's dlopen, not our wrapper (the library never calls its own
	 * wrappers: t_own_calls_unwrapped). */
	union {
		void *p;
		void *(*fn)(const char *, int);
	} open_fn = {dlsym(RTLD_NEXT, "dlopen")};
	void *libc = open_fn.p ? open_fn.fn(LIBC_SO, RTLD_LAZY | RTLD_NOLOAD)
			       : NULL;

	if (!libc)
		return;
	libc_gettime = (gettime_fn)dlsym(libc, "clock_gettime");
	libc_nanosleep = (nanosleep_fn)dlsym(libc, "clock_nanosleep");
	libc_sleep = (sleep_fn)dlsym(libc, "nanosleep");
	dlclose(libc);
}

int __wrap_clock_gettime(clockid_t id, struct timespec *ts)
{
	if (libc_gettime)
		return libc_gettime(id, ts);
	return (int)raw_syscall_libc(SYS_clock_gettime, id, (long)ts, 0, 0, 0,
				     0);
}

/* As libc's: the error number returned, errno untouched. */
int __wrap_clock_nanosleep(clockid_t id, int flags, const struct timespec *t,
			   struct timespec *rem)
{
	if (libc_nanosleep)
		return libc_nanosleep(id, flags, t, rem);
	return (int)-raw_syscall6(SYS_clock_nanosleep, id, flags, (long)t,
				  (long)rem, 0, 0);
}

/* As libc's: -1 and errno. */
int __wrap_nanosleep(const struct timespec *t, struct timespec *rem)
{
	if (libc_sleep)
		return libc_sleep(t, rem);
	return (int)raw_syscall_libc(SYS_nanosleep, (long)t, (long)rem, 0, 0,
				     0, 0);
}
