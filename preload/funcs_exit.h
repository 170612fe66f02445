/*
 * funcs_exit.h - the real functions of one group of wrapped calls: _exit,
 * _Exit, pthread_exit and thrd_exit, the exec family, posix_spawn, system and popen (wrappers and
 * stubs in
 * wrap_exit.c), and clone (wrap_vfork.c).  execl,
 * execlp and execle are wrapped too, but forward to execv, execvp and
 * execve: a variadic call cannot be passed on.
 * X(name, return type, parameter types), as SM_REAL_FUNCS in preload.h.
 */
#ifndef SOCKMETER_FUNCS_EXIT_H
#define SOCKMETER_FUNCS_EXIT_H

#define SM_FUNCS_EXIT(X)                                                       \
	X(exit, void, (int))                                                   \
	X(_exit, void, (int))                                                  \
	X(_Exit, void, (int))                                                  \
	X(pthread_exit, void, (void *))                                        \
	X(thrd_exit, void, (int))                                              \
	X(execve, int, (const char *, char *const[], char *const[]))           \
	X(execv, int, (const char *, char *const[]))                           \
	X(execvp, int, (const char *, char *const[]))                          \
	X(execvpe, int, (const char *, char *const[], char *const[]))          \
	X(fexecve, int, (int, char *const[], char *const[]))                   \
	X(execveat, int,                                                       \
	  (int, const char *, char *const[], char *const[], int))              \
	X(posix_spawn, int,                                                    \
	  (pid_t *, const char *, const posix_spawn_file_actions_t *,          \
	   const posix_spawnattr_t *, char *const[], char *const[]))           \
	X(posix_spawnp, int,                                                   \
	  (pid_t *, const char *, const posix_spawn_file_actions_t *,          \
	   const posix_spawnattr_t *, char *const[], char *const[]))           \
	X(system, int, (const char *))                                         \
	X(popen, FILE *, (const char *, const char *))                         \
	X(clone, int, (int (*)(void *), void *, int, void *, ...))

/*
 * sm_syscall_exec - syscall(SYS_execve or SYS_execveat, a1..a6) as the
 * named wrappers make it: the exec record first, the numbers of the image
 * kept if the exec fails.  errno and the return value are the call's.
 * Context: any thread (as exec).
 */
long sm_syscall_exec(long n, long a1, long a2, long a3, long a4, long a5,
		     long a6);

/* The wrappers exported besides those of the list above: each reaches libc
 * through one of its real functions (Y(name); t_exports.sh reads it). */
#define SM_EXIT_EXPORTED_ONLY(Y)                                               \
	Y(execl)                                                               \
	Y(execlp)                                                              \
	Y(execle)                                                              \
	Y(daemon)

/* Made in assembly, with no real function to call (wrap_vfork.c; x86-64
 * only, t_exports.sh knows). */
#define SM_EXIT_RAW_ONLY(Y)                                                    \
	Y(vfork)                                                               \
	Y(__vfork)

#endif
