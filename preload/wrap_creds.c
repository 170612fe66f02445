/*
 * wrap_creds.c - the credential changes: setuid and its family.
 *
 * A daemon started as root drops to another user (nginx, apache, postfix
 * workers run as nobody).  Its records must go on: after a successful
 * change, sm_creds_changed() points the sink at the new user's default
 * directory (a template with %u), or checks that the new uid can still
 * write an explicit path (see sink_reinit_for_uid).  glibc applies these
 * calls to every thread, the ticker included, so the ticker then writes as
 * the new user.  setfsuid/setfsgid are left alone: they change only the
 * calling thread, never the ticker that writes.
 */
#include "preload.h"
#include "../core/rawsys.h"

#include <errno.h>
#include <grp.h>
#include <stdarg.h>
#include <stdint.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

/* True when sm_real.name is now the real function. */
#define BOUND(name) (sm_bind() && sm_real.name != unbound_##name)

/* Every wrapper: the log kept open first (explicit paths), the real call,
 * then, on success, the hook (errno kept). */

SM_EXPORT int setuid(uid_t u)
{
	int r;

	sm_creds_changing(u);
	r = sm_real.setuid(u);

	if (r == 0)
		sm_creds_changed();
	return r;
}

SM_EXPORT int setgid(gid_t g)
{
	int r;

	sm_creds_changing(SM_EUID_SAME);
	r = sm_real.setgid(g);

	if (r == 0)
		sm_creds_changed();
	return r;
}

SM_EXPORT int seteuid(uid_t u)
{
	int r;

	sm_creds_changing(u);
	r = sm_real.seteuid(u);

	if (r == 0)
		sm_creds_changed();
	return r;
}

SM_EXPORT int setegid(gid_t g)
{
	int r;

	sm_creds_changing(SM_EUID_SAME);
	r = sm_real.setegid(g);

	if (r == 0)
		sm_creds_changed();
	return r;
}

SM_EXPORT int setreuid(uid_t ru, uid_t eu)
{
	int r;

	sm_creds_changing(eu);
	r = sm_real.setreuid(ru, eu);

	if (r == 0)
		sm_creds_changed();
	return r;
}

SM_EXPORT int setregid(gid_t rg, gid_t eg)
{
	int r;

	sm_creds_changing(SM_EUID_SAME);
	r = sm_real.setregid(rg, eg);

	if (r == 0)
		sm_creds_changed();
	return r;
}

SM_EXPORT int setresuid(uid_t ru, uid_t eu, uid_t su)
{
	int r;

	sm_creds_changing(eu);
	r = sm_real.setresuid(ru, eu, su);

	if (r == 0)
		sm_creds_changed();
	return r;
}

SM_EXPORT int setresgid(gid_t rg, gid_t eg, gid_t sg)
{
	int r;

	sm_creds_changing(SM_EUID_SAME);
	r = sm_real.setresgid(rg, eg, sg);

	if (r == 0)
		sm_creds_changed();
	return r;
}

SM_EXPORT int setgroups(size_t n, const gid_t *list)
{
	int r;

	sm_creds_changing(SM_EUID_SAME);
	r = sm_real.setgroups(n, list);

	if (r == 0)
		sm_creds_changed();
	return r;
}

/*
 * Confinement (see sm_confining): before a chroot, the log is opened for
 * good by the ticker; before a seccomp filter, the fds are classified too
 * and the thread then makes no system call of ours.  prctl is variadic:
 * its four further arguments are read as glibc's own prctl reads them.
 */
SM_EXPORT int chroot(const char *path)
{
	int before = sm_confine_begin(SM_CONFINE_ROOT);
	int r = sm_real.chroot(path);

	sm_confine_end(SM_CONFINE_ROOT, before, r == 0);
	return r;
}

SM_EXPORT int prctl(int option, ...)
{
	unsigned long a2, a3, a4, a5;
	va_list ap;

	va_start(ap, option);
	a2 = va_arg(ap, unsigned long);
	a3 = va_arg(ap, unsigned long);
	a4 = va_arg(ap, unsigned long);
	a5 = va_arg(ap, unsigned long);
	va_end(ap);
	/* Strict mode, or a filter (a NULL one is a probe: EFAULT). */
	if (option == PR_SET_SECCOMP &&
	    ((int)a2 == SECCOMP_MODE_STRICT ||
	     ((int)a2 == SECCOMP_MODE_FILTER && a3 != 0))) {
		int before = sm_confine_begin(SM_CONFINE_THREAD);
		int r = sm_real.prctl(option, a2, a3, a4, a5);
		int saved = errno;

		if (r == 0)
			sm_confine_filter((int)a2 == SECCOMP_MODE_STRICT, false,
					  (const void *)a3);
		sm_confine_end(SM_CONFINE_THREAD, before, r == 0);
		errno = saved;
		return r;
	}
	if (sm_prctl_mirrored(option, a2)) {
		int r = sm_real.prctl(option, a2, a3, a4, a5);

		if (r == 0) {
			const long a[4] = { option, (long)a2, (long)a3,
					    (long)a4 };

			sm_creds_mirror(SYS_prctl, a);
		}
		return r;
	}
	return sm_real.prctl(option, a2, a3, a4, a5);
}

/*
 * Limits: one on tasks may forbid the ticker's thread from the call on
 * (sm_tasks_limiting); every other limit passes through.  setrlimit64 and
 * prlimit64 are glibc's other names for the same calls, interposed apart
 * since a program may bind either.  On 64-bit ABIs each is glibc's one
 * prlimit64 system call (struct rlimit is the kernel's rlimit64 there),
 * made here directly: no real function to look up, since sanitizer
 * runtimes call setrlimit while they start, before anything may be bound
 * (ASan's, for RLIMIT_CORE).  Not wrapped on 32-bit ABIs.
 */
#if __SIZEOF_LONG__ == 8
_Static_assert(sizeof(struct rlimit) == sizeof(struct rlimit64) &&
		       sizeof(rlim_t) == sizeof(uint64_t),
	       "struct rlimit is the kernel's rlimit64");

/* Only a limit on tasks goes further, and only then: a sanitizer's
 * runtime sets RLIMIT_CORE while it starts, when even an instrumented
 * stack frame (sm_tasks_limiting's) is too early for it.  The wrappers
 * themselves are not instrumented either (LIMIT_EXPORT): ThreadSanitizer
 * calls setrlimit before its own state exists, and an instrumented
 * function's entry crashed in it. */
#define LIMIT_UNINSTRUMENTED __attribute__((no_sanitize("address", "thread")))
#define LIMIT_EXPORT SM_EXPORT LIMIT_UNINSTRUMENTED
LIMIT_UNINSTRUMENTED
static inline void limiting(pid_t pid, int resource, const void *lim)
{
	if (resource == RLIMIT_NPROC && lim)
		sm_tasks_limiting(pid, resource, lim);
}

/* The system call as glibc's setrlimit makes it: syscall() goes through
 * sm_real, which binds (dlsym) on first use, too early for a sanitizer's
 * runtime; raw_syscall_libc is always inlined. */
LIMIT_UNINSTRUMENTED
static inline int limit_call(pid_t pid, int resource, const void *lim,
			     void *old)
{
	return (int)raw_syscall_libc(SYS_prlimit64, (long)pid, (long)resource,
				     (long)lim, (long)old, 0, 0);
}

LIMIT_EXPORT int setrlimit(__rlimit_resource_t resource, const struct rlimit *lim)
{
	limiting(0, (int)resource, lim);
	return limit_call(0, (int)resource, lim, NULL);
}

LIMIT_EXPORT int setrlimit64(__rlimit_resource_t resource,
			  const struct rlimit64 *lim)
{
	limiting(0, (int)resource, lim);
	return limit_call(0, (int)resource, lim, NULL);
}

LIMIT_EXPORT int prlimit(pid_t pid, __rlimit_resource_t resource,
		      const struct rlimit *lim, struct rlimit *old)
{
	limiting(pid, (int)resource, lim);
	return limit_call(pid, (int)resource, lim, old);
}

LIMIT_EXPORT int prlimit64(pid_t pid, __rlimit_resource_t resource,
			const struct rlimit64 *lim, struct rlimit64 *old)
{
	limiting(pid, (int)resource, lim);
	return limit_call(pid, (int)resource, lim, old);
}
#endif

/* capset changes the calling thread (see sm_creds_mirror).  glibc exports
 * it without declaring it in a header. */
int capset(void *hdr, void *data);

SM_EXPORT int capset(void *hdr, void *data)
{
	int r = sm_real.capset(hdr, data);

	if (r == 0 && hdr && data) {
		const long a[4] = { (long)hdr, (long)data, 0, 0 };

		sm_creds_mirror(SYS_capset, a);
	}
	return r;
}

/* The stubs: bind and forward; while dlsym is re-entered, the raw system
 * call (which changes the calling thread only, as the kernel does). */

int unbound_setuid(uid_t u)
{
	if (BOUND(setuid))
		return sm_real.setuid(u);
	return (int)SM_SYSCALL(SYS_setuid, u);
}

int unbound_setgid(gid_t g)
{
	if (BOUND(setgid))
		return sm_real.setgid(g);
	return (int)SM_SYSCALL(SYS_setgid, g);
}

int unbound_seteuid(uid_t u)
{
	if (BOUND(seteuid))
		return sm_real.seteuid(u);
	return (int)SM_SYSCALL(SYS_setresuid, -1, u, -1);
}

int unbound_setegid(gid_t g)
{
	if (BOUND(setegid))
		return sm_real.setegid(g);
	return (int)SM_SYSCALL(SYS_setresgid, -1, g, -1);
}

int unbound_setreuid(uid_t ru, uid_t eu)
{
	if (BOUND(setreuid))
		return sm_real.setreuid(ru, eu);
	return (int)SM_SYSCALL(SYS_setreuid, ru, eu);
}

int unbound_setregid(gid_t rg, gid_t eg)
{
	if (BOUND(setregid))
		return sm_real.setregid(rg, eg);
	return (int)SM_SYSCALL(SYS_setregid, rg, eg);
}

int unbound_setresuid(uid_t ru, uid_t eu, uid_t su)
{
	if (BOUND(setresuid))
		return sm_real.setresuid(ru, eu, su);
	return (int)SM_SYSCALL(SYS_setresuid, ru, eu, su);
}

int unbound_setresgid(gid_t rg, gid_t eg, gid_t sg)
{
	if (BOUND(setresgid))
		return sm_real.setresgid(rg, eg, sg);
	return (int)SM_SYSCALL(SYS_setresgid, rg, eg, sg);
}

int unbound_chroot(const char *path)
{
	if (BOUND(chroot))
		return sm_real.chroot(path);
	return (int)SM_SYSCALL(SYS_chroot, path);
}

int unbound_prctl(int option, unsigned long a2, unsigned long a3,
		  unsigned long a4, unsigned long a5)
{
	if (BOUND(prctl))
		return sm_real.prctl(option, a2, a3, a4, a5);
	return (int)SM_SYSCALL(SYS_prctl, option, a2, a3, a4, a5);
}

int unbound_capset(void *hdr, void *data)
{
	if (BOUND(capset))
		return sm_real.capset(hdr, data);
	return (int)SM_SYSCALL(SYS_capset, hdr, data);
}

int unbound_setgroups(size_t n, const gid_t *list)
{
	if (BOUND(setgroups))
		return sm_real.setgroups(n, list);
	return (int)SM_SYSCALL(SYS_setgroups, n, list);
}
