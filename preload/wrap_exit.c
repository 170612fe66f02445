/*
 * wrap_exit.c - the last calls of a process image: _exit, _Exit and the
 * exec family.  Each writes the image's final record (the exit record
 * before _exit, the exec record before exec: see sm_final_record), then
 * makes the real call.  A vfork child (it shares our memory) writes
 * nothing.  The unbound_* stubs of this group live here too.
 */
#include "preload.h"
#include "warn.h"
#include "../core/quiet.h"
#include "../core/rawsys.h"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <threads.h>
#include <unistd.h>

/* glibc declares these only for some feature sets. */
int execveat(int dirfd, const char *path, char *const argv[],
	     char *const envp[], int flags);
int execvpe(const char *file, char *const argv[], char *const envp[]);

/* --- stubs: the real function, or the system call ----------------------- */

#define BOUND(name) (sm_bind() && sm_real.name != unbound_##name)

void unbound_exit(int status)
{
	if (BOUND(exit))
		sm_real.exit(status);
	SM_SYSCALL(SYS_exit_group, status);
	__builtin_unreachable();
}

void unbound_pthread_exit(void *ret)
{
	if (BOUND(pthread_exit))
		sm_real.pthread_exit(ret);
	SM_SYSCALL(SYS_exit, 0);
	__builtin_unreachable();
}

void unbound_thrd_exit(int ret)
{
	if (BOUND(thrd_exit))
		sm_real.thrd_exit(ret);
	SM_SYSCALL(SYS_exit, 0);
	__builtin_unreachable();
}

void unbound__exit(int status)
{
	if (BOUND(_exit))
		sm_real._exit(status);
	SM_SYSCALL(SYS_exit_group, status);
	__builtin_unreachable();
}

void unbound__Exit(int status)
{
	if (BOUND(_Exit))
		sm_real._Exit(status);
	SM_SYSCALL(SYS_exit_group, status);
	__builtin_unreachable();
}

int unbound_execve(const char *path, char *const argv[], char *const envp[])
{
	if (BOUND(execve))
		return sm_real.execve(path, argv, envp);
	return (int)SM_SYSCALL(SYS_execve, path, argv, envp);
}

int unbound_execv(const char *path, char *const argv[])
{
	if (BOUND(execv))
		return sm_real.execv(path, argv);
	return (int)SM_SYSCALL(SYS_execve, path, argv, environ);
}

/* No system call searches PATH: without the real one, say so. */
int unbound_execvp(const char *file, char *const argv[])
{
	if (BOUND(execvp))
		return sm_real.execvp(file, argv);
	errno = ENOSYS;
	return -1;
}

int unbound_execvpe(const char *file, char *const argv[], char *const envp[])
{
	if (BOUND(execvpe))
		return sm_real.execvpe(file, argv, envp);
	errno = ENOSYS;
	return -1;
}

int unbound_fexecve(int fd, char *const argv[], char *const envp[])
{
	if (BOUND(fexecve))
		return sm_real.fexecve(fd, argv, envp);
	return (int)SM_SYSCALL(SYS_execveat, fd, "", argv, envp, AT_EMPTY_PATH);
}

int unbound_execveat(int dirfd, const char *path, char *const argv[],
		     char *const envp[], int flags)
{
	if (BOUND(execveat))
		return sm_real.execveat(dirfd, path, argv, envp, flags);
	return (int)SM_SYSCALL(SYS_execveat, dirfd, path, argv, envp, flags);
}

/* No system call spawns: without the real one, say so. */
int unbound_system(const char *cmd)
{
	if (BOUND(system))
		return sm_real.system(cmd);
	errno = ENOSYS;
	return -1;
}

FILE *unbound_popen(const char *cmd, const char *mode)
{
	if (BOUND(popen))
		return sm_real.popen(cmd, mode);
	errno = ENOSYS;
	return NULL;
}

int unbound_posix_spawn(pid_t *pid, const char *path,
			const posix_spawn_file_actions_t *fa,
			const posix_spawnattr_t *attr, char *const argv[],
			char *const envp[])
{
	if (BOUND(posix_spawn))
		return sm_real.posix_spawn(pid, path, fa, attr, argv, envp);
	return ENOSYS;
}

int unbound_posix_spawnp(pid_t *pid, const char *file,
			 const posix_spawn_file_actions_t *fa,
			 const posix_spawnattr_t *attr, char *const argv[],
			 char *const envp[])
{
	if (BOUND(posix_spawnp))
		return sm_real.posix_spawnp(pid, file, fa, attr, argv, envp);
	return ENOSYS;
}

/* --- exit ---------------------------------------------------------------- */

/* Nothing of ours unless another thread's exit is under way: then this
 * caller makes the exit record first, or waits for the thread making it
 * (sm_exit_begins).  Otherwise the record is made by glibc's exit
 * handlers (preload.c: fini_once). */
SM_EXPORT void exit(int status)
{
	sm_exit_begins();
	sm_real.exit(status);
	SM_SYSCALL(SYS_exit_group, status);
	__builtin_unreachable();
}

/* --- pthread_exit, thrd_exit --------------------------------------------- */

/* The main thread ending while others run: the ticker starts looking for
 * the moment it is the last thread (preload.c, sm_thread_exits).  Was a
 * pthread key's destructor, whose value on the main thread a copy of libc
 * in another namespace (dlmopen) took for one of its own keys': OpenSSL
 * loaded there freed it at exit, and the program aborted. */
SM_EXPORT void pthread_exit(void *ret)
{
	sm_thread_exits();
	sm_real.pthread_exit(ret);
	__builtin_unreachable();
}

/* C11's: glibc's goes to its internal pthread_exit, past the one above. */
SM_EXPORT void thrd_exit(int ret)
{
	sm_thread_exits();
	sm_real.thrd_exit(ret);
	__builtin_unreachable();
}

/* --- _exit --------------------------------------------------------------- */

SM_FORK_PATH
SM_EXPORT void _exit(int status)
{
	sm_final_record(false);
	sm_real._exit(status);
	SM_SYSCALL(SYS_exit_group, status);
	__builtin_unreachable();
}

SM_FORK_PATH
SM_EXPORT void _Exit(int status)
{
	sm_final_record(false);
	sm_real._Exit(status);
	SM_SYSCALL(SYS_exit_group, status);
	__builtin_unreachable();
}

/*
 * daemon(3): glibc's forks, and its parent ends with glibc's internal
 * _exit, past the wrapper above: the parent's exit record was never
 * written (recovered later as "killed").  The same steps, made here
 * through the wrapped calls: fork (its handlers run), the parent's
 * _exit(0) (the wrapper: its exit record), then in the child setsid, "/"
 * unless nochdir, and fds 0-2 onto /dev/null unless noclose, with glibc's
 * checks and errors.
 */
SM_EXPORT int daemon(int nochdir, int noclose)
{
	struct stat st;
	int fd;

	switch (fork()) {
	case -1:
		return -1;
	case 0:
		break;
	default:
		/* As the _exit wrapper. */
		sm_final_record(false);
		sm_real._exit(0);
		SM_SYSCALL(SYS_exit_group, 0);
		__builtin_unreachable();
	}
	if (setsid() == -1)
		return -1;
	if (!nochdir)
		(void)chdir("/");
	if (!noclose) {
		fd = sm_open_hooked("/dev/null", O_RDWR, 0);
		if (fd == -1)
			return -1;
		if (fstat(fd, &st) != 0) {
			int saved = errno;

			sm_close_hooked(fd);
			errno = saved;
			return -1;
		}
		if (!S_ISCHR(st.st_mode) || st.st_rdev != makedev(1, 3)) {
			sm_close_hooked(fd);
			errno = ENODEV;
			return -1;
		}
		(void)sm_dup2_hooked(fd, STDIN_FILENO);
		(void)sm_dup2_hooked(fd, STDOUT_FILENO);
		(void)sm_dup2_hooked(fd, STDERR_FILENO);
		if (fd > 2)
			(void)sm_close_hooked(fd);
	}
	return 0;
}

/* quick_exit: glibc runs the at_quick_exit handlers, then its internal
 * _exit.  Ours, registered first at start-up (sm_init), runs last: the
 * exit record, after the program's handlers. */
void sm_quick_exit_handler(void)
{
	sm_final_record(false);
}

/* --- exec ---------------------------------------------------------------- */

/* The value of LD_PRELOAD in env when it names a library by path (the
 * loader drops such names in secure-execution mode: ld.so(8)), else
 * NULL. */
static const char *preload_by_path(char *const env[])
{
	for (; env && *env; env++)
		if (!strncmp(*env, "LD_PRELOAD=", 11))
			return strchr(*env + 11, '/') ? *env + 11 : NULL;
	return NULL;
}

/*
 * Our name as the loader knows it, and what loaded us: LD_PRELOAD,
 * /etc/ld.so.preload (which every image loads anyway), or neither (the
 * loader's --preload option, a dlopen).  An exec whose environment does
 * not preload us, where /etc/ld.so.preload does not either, starts an
 * image that goes unmetered (env -i, systemd-socket-activate without -E,
 * a program that cleans its children's environment; with --preload,
 * every exec).  Said once per process, at the first such exec that can
 * succeed.  A fork child that execs so says it again (its own process);
 * vfork and posix_spawn children share the flag.
 */
static char own_name[256];
static bool own_by_env;
static bool own_by_system; /* /etc/ld.so.preload names us */
/* Neither, with no LD_PRELOAD at start-up: the loader's --preload
 * option, or a dlopen.  (An LD_PRELOAD that does not seem to name us is
 * left alone: a name we cannot tell, or an earlier preload that unset
 * it: what loaded us is not known, nothing is said.) */
static bool own_by_loader;
static int unmetered_warned; /* atomic */

/*
 * The settings this image started with from its environment (the names
 * of the variables the config loader reads, "NAME=" one after another):
 * an exec whose environment still preloads us but has dropped one of
 * them (lighttpd's CGI environment keeps LD_PRELOAD and nothing else of
 * ours) starts an image metered with other settings than these, its log
 * perhaps somewhere else: said once per process, as the unmetered exec
 * is.  Other SOCKMETER* names (the launcher's SOCKMETER_LIB) do not
 * count.
 */
static char own_vars[512];
static int settings_warned; /* atomic */

static void note_own_vars(void)
{
	extern char **environ;
	char **e;
	size_t used = 0;

	for (e = environ; e && *e; e++) {
		const char *eq = strchr(*e, '=');
		size_t n = eq ? (size_t)(eq - *e) + 1 : 0;

		if (n < 10 || strncmp(*e, "SOCKMETER", 9) ||
		    !config_env_setting(*e, n - 1) ||
		    used + n + 1 > sizeof(own_vars))
			continue;
		memcpy(own_vars + used, *e, n);
		used += n;
	}
	own_vars[used] = '\0';
}

static bool env_has(char *const env[], const char *name, size_t n)
{
	for (; env && *env; env++)
		if (!strncmp(*env, name, n))
			return true;
	return false;
}

/* Into out: the names of own_vars that env lacks, blank-separated. */
static void dropped_vars(char *const env[], char *out, size_t cap)
{
	const char *v, *eq;
	size_t used = 0;

	out[0] = '\0';
	for (v = own_vars; *v; v = eq + 1) {
		eq = strchr(v, '=');
		if (!eq)
			break;
		if (env_has(env, v, (size_t)(eq - v) + 1))
			continue;
		if (used + (size_t)(eq - v) + 2 > cap)
			break;
		if (used)
			out[used++] = ' ';
		memcpy(out + used, v, (size_t)(eq - v));
		used += (size_t)(eq - v);
		out[used] = '\0';
	}
}

/* Does token [t, t + n) name this library, or another copy of it?  By
 * the loader's name; by a base name starting "libsockmeter"; by our own
 * base name when the token is a bare name (the loader found it on its
 * path: own_name is then the path it found); or, for a token with a
 * dynamic string token ($LIB, $PLATFORM, $ORIGIN), by what comes before
 * the first '$' and our base name after the last '/'. */
static bool names_us(const char *t, size_t n)
{
	const char *base = memrchr(t, '/', n), *own_base, *dollar;
	size_t own_len = strlen(own_name), base_len, pre;

	base = base ? base + 1 : t;
	base_len = (size_t)(t + n - base);
	own_base = strrchr(own_name, '/');
	own_base = own_base ? own_base + 1 : own_name;
	if ((n == own_len && !memcmp(t, own_name, n)) ||
	    (base_len >= 12 && !memcmp(base, "libsockmeter", 12)))
		return true;
	if (base_len != strlen(own_base) || memcmp(base, own_base, base_len))
		return false;
	if (base == t)
		return true;
	dollar = memchr(t, '$', n);
	if (!dollar || dollar > base)
		return false;
	pre = (size_t)(dollar - t);
	return pre <= own_len && !memcmp(t, own_name, pre);
}

/* Does the token [t, t + n) hold a dynamic string token, which may name
 * a copy of the library of another class ($LIB: lib/i386-linux-gnu for a
 * 32-bit program)? */
static bool has_dst(const char *t, size_t n)
{
	return memchr(t, '$', n) != NULL;
}

/* Does the list v (LD_PRELOAD's syntax: names separated by blanks or
 * colons; /etc/ld.so.preload's by white space) name us?  With dst_only,
 * only through a name holding a dynamic string token (has_dst). */
static bool list_names_us_by(const char *v, const char *sep, bool dst_only)
{
	const char *t;
	size_t n;

	for (; *v; v = t + n) {
		v += strspn(v, sep);
		t = v;
		n = strcspn(t, sep);
		if (n && (!dst_only || has_dst(t, n)) && names_us(t, n))
			return true;
	}
	return false;
}

static bool list_names_us(const char *v, const char *sep)
{
	return list_names_us_by(v, sep, false);
}

/* Does LD_PRELOAD in env name us through a dynamic string token ($LIB),
 * which may find a copy of the library of another class? */
static bool env_preloads_by_dst(char *const env[])
{
	for (; env && *env; env++)
		if (!strncmp(*env, "LD_PRELOAD=", 11) &&
		    list_names_us_by(*env + 11, ": ", true))
			return true;
	return false;
}

/* Does LD_PRELOAD in env (if any) still load a sockmeter library? */
static bool env_loads_us(char *const env[])
{
	for (; env && *env; env++)
		if (!strncmp(*env, "LD_PRELOAD=", 11) &&
		    list_names_us(*env + 11, ": "))
			return true;
	return false;
}

/* Does /etc/ld.so.preload load us (then every image has us anyway)? */
static bool system_preloads_us(void)
{
	char buf[4096];
	long fd, n;

	fd = raw_syscall6(SYS_openat, AT_FDCWD, (long)"/etc/ld.so.preload",
			  O_RDONLY | O_CLOEXEC, 0, 0, 0);
	if (fd < 0)
		return false;
	n = raw_syscall6(SYS_read, fd, (long)buf, sizeof(buf) - 1, 0, 0, 0);
	raw_syscall6(SYS_close, fd, 0, 0, 0, 0, 0);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	return list_names_us(buf, " \t\n:");
}

/* Start-up: were we loaded through LD_PRELOAD, /etc/ld.so.preload or
 * neither (the loader's --preload option, a dlopen), and under which
 * name?  The settings are noted whichever: /etc/ld.so.preload loads us
 * into an image whose environment dropped them too (env -i: its log at
 * the default path, said as for LD_PRELOAD; a helper's). */
void sm_exec_env_init(void)
{
	const char *pre = getenv("LD_PRELOAD");
	Dl_info info;

	if (!dladdr((void *)sm_exec_env_init, &info) || !info.dli_fname ||
	    !*info.dli_fname || strlen(info.dli_fname) >= sizeof(own_name))
		return;
	snprintf(own_name, sizeof(own_name), "%s", info.dli_fname);
	own_by_system = system_preloads_us();
	own_by_env = !own_by_system && pre && list_names_us(pre, ": ");
	own_by_loader = !own_by_system && (!pre || !pre[strspn(pre, ": ")]);
	note_own_vars();
}

/* An exec that keeps us preloaded but drops SOCKMETER* variables. */
static void settings_exec_check(const char *what, char *const env[])
{
	char dropped[256], msg[768];

	if (!own_vars[0] ||
	    __atomic_load_n(&settings_warned, __ATOMIC_RELAXED))
		return;
	dropped_vars(env, dropped, sizeof(dropped));
	if (!dropped[0] ||
	    __atomic_exchange_n(&settings_warned, 1, __ATOMIC_RELAXED))
		return;
	if (env_loads_us(env))
		snprintf(msg, sizeof(msg),
			 "sockmeter: exec of %s with an environment that still "
			 "preloads %s but drops %s: the new program is metered "
			 "with settings of its own, not these (its log may be "
			 "elsewhere); a tool that cleans the environment must "
			 "pass SOCKMETER_* on",
			 what && *what ? what : "an fd", own_name, dropped);
	else
		snprintf(msg, sizeof(msg),
			 "sockmeter: exec of %s with an environment that drops "
			 "%s: the new program is metered (/etc/ld.so.preload "
			 "loads %s) with settings of its own, not these (its "
			 "log may be elsewhere); a tool that cleans the "
			 "environment must pass SOCKMETER_* on",
			 what && *what ? what : "an fd", dropped, own_name);
	sm_warn(msg);
}

/*
 * A statically linked program (a Go binary built without cgo, busybox's
 * static build, musl tools, ldconfig) loads no preload at all: an exec of
 * one starts a program that goes unmetered whatever its environment, and
 * nothing of ours runs there to say so (a helper's sweep: 5,000 bytes a
 * static program wrote on an inherited socket appeared nowhere).  Said
 * here, before the exec, once per process.  The path as the exec finds
 * it: as given when it has a slash, else the first executable of that
 * name on the caller's PATH (the search of execvp, execvpe and
 * posix_spawnp, whatever environment they pass on; glibc's default path
 * without one).
 */
static int static_warned; /* atomic */

/* Into out: the file an exec of what runs; false when none is found. */
static bool exec_path(const char *what, char *out, size_t cap)
{
	const char *path = getenv("PATH"), *dir, *end;

	if (strchr(what, '/'))
		return (size_t)snprintf(out, cap, "%s", what) < cap;
	if (!path)
		path = "/bin:/usr/bin";
	for (dir = path;; dir = end + 1) {
		end = strchr(dir, ':');
		if (!end)
			end = dir + strlen(dir);
		if ((size_t)snprintf(out, cap, "%.*s%s%s", (int)(end - dir),
				     dir, end > dir ? "/" : "", what) < cap &&
		    raw_syscall6(SYS_faccessat, AT_FDCWD, (long)out, X_OK, 0,
				 0, 0) == 0)
			return true;
		if (!*end)
			return false;
	}
}

/* What the loader makes of the ELF file at path, for the preload. */
enum elf_reach {
	ELF_REACHED,	/* dynamic, ours to load (or not ELF, or unreadable) */
	ELF_STATIC,	/* no program interpreter: loads no preload */
	ELF_OTHER_CLASS, /* dynamic, 32-bit for a 64-bit library or the reverse */
	ELF_OTHER_MACHINE, /* dynamic, for another machine */
};

/* The library's own class and machine, as the loader compares them. */
#define OWN_CLASS (sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32)
#if defined(__x86_64__)
#define OWN_MACHINE EM_X86_64
#elif defined(__aarch64__)
#define OWN_MACHINE EM_AARCH64
#else
#define OWN_MACHINE 0 /* not judged */
#endif

/* Is the ELF file at path linked statically (no program interpreter), or
 * dynamic for a class or machine the library is not of (a 32-bit program
 * on x86-64: its loader says "wrong ELF class" and goes on without us)?
 * Not the dynamic loader itself run by hand (ld.so PROGRAM, which
 * preloads as ever): a shared object named ld-*, ld.so* or ld64.so*
 * (ldconfig, static-pie, is static).  *bits: the file's class in bits. */
static enum elf_reach elf_reach(const char *path, unsigned *bits)
{
	union {
		Elf64_Ehdr h64;
		Elf32_Ehdr h32;
	} h;
	/* PT_INTERP comes before any loadable segment (the ELF spec): the
	 * first 32 entries hold it if there is one. */
	unsigned char ph[32 * sizeof(Elf64_Phdr)];
	uint64_t off;
	unsigned n, size, i, type, etype, machine;
	const char *base;
	long fd, got;
	bool interp = false, is64, ok;

	fd = raw_syscall6(SYS_openat, AT_FDCWD, (long)path,
			  O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK, 0, 0, 0);
	if (fd < 0)
		return ELF_REACHED;
	/* The header, then the program headers it points to; the file
	 * closed once, whatever was read. */
	got = raw_syscall6(SYS_pread64, fd, (long)&h, sizeof(h), 0, 0, 0);
	is64 = got >= (long)sizeof(Elf64_Ehdr) &&
	       h.h64.e_ident[EI_CLASS] == ELFCLASS64;
	ok = got >= (long)sizeof(Elf32_Ehdr) &&
	     memcmp(h.h64.e_ident, ELFMAG, SELFMAG) == 0 &&
	     (is64 || h.h64.e_ident[EI_CLASS] == ELFCLASS32);
	if (ok) {
		etype = is64 ? h.h64.e_type : h.h32.e_type;
		machine = is64 ? h.h64.e_machine : h.h32.e_machine;
		off = is64 ? h.h64.e_phoff : h.h32.e_phoff;
		n = is64 ? h.h64.e_phnum : h.h32.e_phnum;
		size = is64 ? h.h64.e_phentsize : h.h32.e_phentsize;
		if (n > 32)
			n = 32;
		ok = size >= (is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr)) &&
		     n > 0 && (uint64_t)n * size <= sizeof(ph) &&
		     raw_syscall6(SYS_pread64, fd, (long)ph, (long)(n * size),
				  (long)off, 0, 0) == (long)(n * size);
	}
	raw_syscall6(SYS_close, fd, 0, 0, 0, 0, 0);
	if (!ok)
		return ELF_REACHED;
	*bits = is64 ? 64 : 32;
	for (i = 0; i < n && !interp; i++) {
		memcpy(&type, ph + (size_t)i * size, sizeof(type));
		interp = type == PT_INTERP;
	}
	base = strrchr(path, '/');
	base = base ? base + 1 : path;
	/* A program with an interpreter, or the loader run by hand (a
	 * 32-bit one, ld-linux.so.2, drops us as its programs' does). */
	if (interp ||
	    (etype == ET_DYN &&
	     (!strncmp(base, "ld-", 3) || !strncmp(base, "ld.so", 5) ||
	      !strncmp(base, "ld64.so", 7))))
		return h.h64.e_ident[EI_CLASS] != OWN_CLASS ? ELF_OTHER_CLASS
		       : OWN_MACHINE && machine != OWN_MACHINE
			       ? ELF_OTHER_MACHINE
			       : ELF_REACHED;
	return etype == ET_EXEC || etype == ET_DYN ? ELF_STATIC : ELF_REACHED;
}

/* valgrind's launcher execs its tool (static) with VALGRIND_LAUNCHER set:
 * the tool loads the program itself, preloads included, and the library
 * there says what it does under valgrind.  Each kind said once per
 * process. */
static int foreign_warned; /* atomic */

static void static_exec_check(const char *what, char *const env[])
{
	char path[1024], msg[1400];
	enum elf_reach r;
	unsigned bits = 0;

	if (!what || !*what || env_has(env, "VALGRIND_LAUNCHER=", 18) ||
	    (__atomic_load_n(&static_warned, __ATOMIC_RELAXED) &&
	     __atomic_load_n(&foreign_warned, __ATOMIC_RELAXED)) ||
	    !exec_path(what, path, sizeof(path)))
		return;
	r = elf_reach(path, &bits);
	/* LD_PRELOAD='/opt/sockmeter/$LIB/libsockmeter.so' may find a
	 * 32-bit copy for a 32-bit program: not said then. */
	if (r == ELF_REACHED ||
	    (r != ELF_STATIC && env_preloads_by_dst(env)) ||
	    __atomic_exchange_n(r == ELF_STATIC ? &static_warned
						: &foreign_warned,
				1, __ATOMIC_RELAXED))
		return;
	if (r == ELF_STATIC)
		snprintf(msg, sizeof(msg),
			 "sockmeter: exec of %s, a statically linked program: "
			 "no preload reaches it, so it is not metered (what it "
			 "sends and receives, on its own sockets or on ones it "
			 "inherits, is in no log)",
			 path);
	else if (r == ELF_OTHER_CLASS)
		snprintf(msg, sizeof(msg),
			 "sockmeter: exec of %s, a %u-bit program: its dynamic "
			 "loader ignores this %u-bit library (\"wrong ELF "
			 "class\"), so it is not metered (what it sends and "
			 "receives, on its own sockets or on ones it inherits, "
			 "is in no log; the %u-bit programs it starts are "
			 "metered again)",
			 path, bits, (unsigned)sizeof(void *) * 8,
			 (unsigned)sizeof(void *) * 8);
	else
		snprintf(msg, sizeof(msg),
			 "sockmeter: exec of %s, a program for another machine "
			 "than this library's: its dynamic loader cannot load "
			 "the library, so it is not metered (what it sends and "
			 "receives is in no log)",
			 path);
	sm_warn(msg);
}

/*
 * Whether what (a path, or NULL) and env (an environment, or NULL) can be
 * read as the exec will read them.  A bad pointer there fails the exec
 * with EFAULT where reading it here faulted: the program died of SIGSEGV
 * inside the library (a helper's execve(path, argv, (char **)16)).  The
 * path is asked of the kernel (faccessat, which the exec checks below
 * make anyway).  env's array and strings are taken when they look like
 * pointers (sm_ptr_plausible): no system call a filter the program
 * inherited might punish (process_vm_readv, tried first, got a program
 * killed under a filter that forbids it: the review).  A pointer into an
 * unmapped page of the user range still faults (README, Limits).
 */
static bool exec_args_readable(const char *what, char *const env[])
{
	extern char **environ;
	size_t i;

	if (what && raw_syscall6(SYS_faccessat, AT_FDCWD, (long)what, F_OK, 0,
				 0, 0) == -EFAULT)
		return false;
	if (!env || env == environ)
		return true;
	if (!sm_ptr_plausible(env, _Alignof(char *)))
		return false;
	for (i = 0; env[i]; i++)
		if (!sm_ptr_plausible(env[i], 1))
			return false;
	return true;
}

static void unmetered_exec_check(const char *what, char *const env[])
{
	if (sm_tls_foreign()) /* a child on a TLS of its own */
		return;
	char msg[1024];
	int saved = errno;

	if (!(own_by_env || own_by_system || own_by_loader) ||
	    !sm_meter.tab.cap || sm_quiet() || !exec_args_readable(what, env))
		goto out;
	/* An exec that will fail (a PATH search trying each directory, a
	 * missing program) starts nothing: not that one.  (Relative to the
	 * working directory: execveat's dirfd is not looked at.) */
	if (what && strchr(what, '/') &&
	    raw_syscall6(SYS_faccessat, AT_FDCWD, (long)what, X_OK, 0, 0, 0))
		goto out;
	if (own_by_system || env_loads_us(env)) {
		settings_exec_check(what, env);
		static_exec_check(what, env);
		goto out;
	}
	if (__atomic_load_n(&unmetered_warned, __ATOMIC_RELAXED))
		goto out;
	if (__atomic_exchange_n(&unmetered_warned, 1, __ATOMIC_RELAXED))
		goto out;
	if (own_by_env)
		snprintf(msg, sizeof(msg),
			 "sockmeter: exec of %s with an environment that does "
			 "not preload %s (LD_PRELOAD was removed or changed): "
			 "the new program is not metered; a tool that cleans "
			 "the environment must pass LD_PRELOAD and SOCKMETER_* "
			 "on",
			 what && *what ? what : "an fd", own_name);
	else
		/* Loaded by the loader's --preload option or a dlopen:
		 * nothing carries us into the new image. */
		snprintf(msg, sizeof(msg),
			 "sockmeter: exec of %s: %s was not loaded through "
			 "LD_PRELOAD (the dynamic loader's --preload option, "
			 "or dlopen), and the new program's environment does "
			 "not preload it: the new program is not metered; set "
			 "LD_PRELOAD=%s to meter the programs a process starts",
			 what && *what ? what : "an fd", own_name, own_name);
	sm_warn(msg);
out:
	errno = saved;
}

/*
 * An exec made while the effective ids differ from the real ones (squid's
 * master runs with real uid proxy, effective uid root, and execs its
 * workers so) starts the new image in secure-execution mode, where the
 * loader ignores LD_PRELOAD by path: that image goes unmetered, and says
 * so nowhere.  We do.  (A setuid or setgid file, or one with file
 * capabilities, is secure too; the README's Limits say so.)
 */
static void secure_exec_check(const char *what, char *const env[])
{
	if (sm_tls_foreign()) /* a child on a TLS of its own */
		return;
	uid_t r, e, s;
	gid_t rg, eg, sg;
	const char *pre;
	char msg[512];
	int saved = errno;

	unmetered_exec_check(what, env);
	if (!sm_meter.tab.cap || sm_quiet() ||
	    SM_SYSCALL(SYS_getresuid, &r, &e, &s) != 0 ||
	    SM_SYSCALL(SYS_getresgid, &rg, &eg, &sg) != 0 ||
	    (r == e && rg == eg) || !exec_args_readable(what, env) ||
	    !(pre = preload_by_path(env))) {
		errno = saved;
		return;
	}
	snprintf(msg, sizeof(msg),
		 "sockmeter: exec of %s in secure-execution mode (real uid "
		 "%u, effective uid %u, real gid %u, effective gid %u): the "
		 "dynamic loader ignores LD_PRELOAD=%s there, so the new "
		 "program is not metered",
		 what ? what : "an fd", (unsigned)r, (unsigned)e,
		 (unsigned)rg, (unsigned)eg, pre);
	sm_warn(msg);
	errno = saved;
}

/*
 * An exec that can start nothing: its path names no file.  A PATH search
 * made with execve, one directory after another (python's os.execvp,
 * djb's pathexec in tcpserver), fails with ENOENT in every directory but
 * one; each failure wrote a whole exec record before (about 900 bytes: ten
 * per tcpserver connection with a 12-directory PATH).  Such an exec
 * returns at once and the image goes on metering, so it gets no record; an
 * exec that may start something (the file is there, executable or not)
 * gets one, as ever.  A file made between this look and the exec is an
 * exec the library did not see: the state file stays live, and the next
 * image (or recovery) writes the record (state.md).  Not looked at on a
 * sandboxed thread (quiet.h), whose filter may not allow the call.
 */
static bool exec_finds_nothing(int dirfd, const char *path)
{
	long r;

	if (!path || !sm_meter.tab.cap || sm_quiet())
		return false;
	/* The kernel reads the path first: a bad pointer (EFAULT) fails the
	 * exec as surely, and is never read here.  "" (execveat's
	 * AT_EMPTY_PATH: the fd's file) may start something. */
	r = raw_syscall6(SYS_faccessat, dirfd, (long)path, F_OK, 0, 0, 0);
	if (r == -EFAULT)
		return true;
	return *path && (r == -ENOENT || r == -ENOTDIR);
}

/* The exec record of an exec of path (relative to dirfd), unless that
 * exec can start nothing. */
static void exec_record(int dirfd, const char *path)
{
	if (!exec_finds_nothing(dirfd, path))
		sm_final_record(true);
}

/* execvp and the like search PATH themselves (inside libc, unseen) when
 * file has no slash: one record for the whole search. */
static void execp_record(const char *file)
{
	if (file && strchr(file, '/'))
		exec_record(AT_FDCWD, file);
	else
		sm_final_record(true);
}

/* The exec returned: it failed, and this image goes on metering. */
static int exec_failed(int r)
{
	sm_exec_failed();
	sm_durable_end(SM_END_EXEC_FAILED);
	return r;
}

/*
 * posix_spawn: the child may be given our fds (its file actions, or fds
 * without FD_CLOEXEC), and libc makes it inside, unseen: from now on the
 * kernel's counts of the connections open now are not ours alone.
 */
SM_EXPORT int posix_spawn(pid_t *pid, const char *path,
			  const posix_spawn_file_actions_t *fa,
			  const posix_spawnattr_t *attr, char *const argv[],
			  char *const envp[])
{
	unmetered_exec_check(path, envp);
	sm_spawning();
	return sm_real.posix_spawn(pid, path, fa, attr, argv, envp);
}

SM_EXPORT int posix_spawnp(pid_t *pid, const char *file,
			   const posix_spawn_file_actions_t *fa,
			   const posix_spawnattr_t *attr, char *const argv[],
			   char *const envp[])
{
	unmetered_exec_check(file, envp);
	sm_spawning();
	return sm_real.posix_spawnp(pid, file, fa, attr, argv, envp);
}

/*
 * system and popen: glibc makes their child with its own spawn, inside,
 * which runs no fork handler and not the exported posix_spawn: a shell
 * that inherits every fd without FD_CLOEXEC (a `cmd >&4` writes to our
 * connection), so, as posix_spawn, the connections open now are shared.
 */
SM_EXPORT int system(const char *cmd)
{
	sm_spawning();
	return sm_real.system(cmd);
}

SM_EXPORT FILE *popen(const char *cmd, const char *mode)
{
	sm_spawning();
	return sm_real.popen(cmd, mode);
}

SM_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	secure_exec_check(path, envp);
	exec_record(AT_FDCWD, path);
	return exec_failed(sm_real.execve(path, argv, envp));
}

SM_EXPORT int execv(const char *path, char *const argv[])
{
	secure_exec_check(path, environ);
	exec_record(AT_FDCWD, path);
	return exec_failed(sm_real.execv(path, argv));
}

SM_EXPORT int execvp(const char *file, char *const argv[])
{
	secure_exec_check(file, environ);
	execp_record(file);
	return exec_failed(sm_real.execvp(file, argv));
}

SM_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	secure_exec_check(file, envp);
	execp_record(file);
	return exec_failed(sm_real.execvpe(file, argv, envp));
}

SM_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	secure_exec_check(NULL, envp);
	sm_final_record(true);
	return exec_failed(sm_real.fexecve(fd, argv, envp));
}

SM_EXPORT int execveat(int dirfd, const char *path, char *const argv[],
		       char *const envp[], int flags)
{
	secure_exec_check(path, envp);
	exec_record(dirfd, path); /* "" with AT_EMPTY_PATH: the fd's file */
	return exec_failed(sm_real.execveat(dirfd, path, argv, envp, flags));
}

#if SM_WRAP_SYSCALL
long sm_syscall_exec(long n, long a1, long a2, long a3, long a4, long a5,
		     long a6)
{
	long r;
	int saved;

	if (n == SYS_execve) {
		secure_exec_check((const char *)a1, (char *const *)a3);
		exec_record(AT_FDCWD, (const char *)a1);
	} else {
		secure_exec_check((const char *)a2, (char *const *)a4);
		exec_record((int)a1, (const char *)a2);
	}
	r = sm_real.syscall(n, a1, a2, a3, a4, a5, a6);
	saved = errno;
	exec_failed((int)r);
	errno = saved;
	return r;
}
#endif

/*
 * The variadic forms: count the arguments, gather them into an array on
 * the stack (exec may run in a vfork child or a signal handler: no
 * malloc), write the record and call the real array form (never our own
 * exported one: the library calls none of its wrappers).
 */
static size_t count_args(va_list *ap)
{
	va_list c;
	size_t n = 1;

	va_copy(c, *ap);
	while (va_arg(c, char *))
		n++;
	va_end(c);
	return n;
}

/* argv has room for n + 1: arg0, the n - 1 others, the terminating NULL. */
static void gather_args(char **argv, size_t n, const char *arg0, va_list *ap)
{
	size_t i;

	argv[0] = (char *)arg0;
	for (i = 1; i <= n; i++)
		argv[i] = va_arg(*ap, char *);
}

SM_EXPORT int execl(const char *path, const char *arg0, ...)
{
	va_list ap;
	size_t n;

	va_start(ap, arg0);
	n = count_args(&ap);
	char *argv[n + 1];
	gather_args(argv, n, arg0, &ap);
	va_end(ap);
	secure_exec_check(path, environ);
	exec_record(AT_FDCWD, path);
	return exec_failed(sm_real.execv(path, argv));
}

SM_EXPORT int execlp(const char *file, const char *arg0, ...)
{
	va_list ap;
	size_t n;

	va_start(ap, arg0);
	n = count_args(&ap);
	char *argv[n + 1];
	gather_args(argv, n, arg0, &ap);
	va_end(ap);
	secure_exec_check(file, environ);
	execp_record(file);
	return exec_failed(sm_real.execvp(file, argv));
}

SM_EXPORT int execle(const char *path, const char *arg0, ...)
{
	char *const *envp;
	va_list ap;
	size_t n;

	va_start(ap, arg0);
	n = count_args(&ap);
	char *argv[n + 1];
	gather_args(argv, n, arg0, &ap);
	envp = va_arg(ap, char *const *);
	va_end(ap);
	secure_exec_check(path, envp);
	exec_record(AT_FDCWD, path);
	return exec_failed(sm_real.execve(path, argv, envp));
}
