/*
 * strictfilter.c - a process that confines itself with a seccomp filter
 * allowing nothing but read, write, exit and exit_group (any other call
 * kills the thread: SECCOMP_RET_KILL_THREAD), then ends:
 *
 *   strictfilter _exit    _exit(5)
 *   strictfilter exit     exit(6)
 *   strictfilter killed   a forbidden call (alarm): the thread, and so the
 *                         process, dies of SIGSYS
 *   strictfilter shift    another filter: everything allowed but futex,
 *                         whose verdict is 1 << 32 computed by BPF (the
 *                         kernel shifts by 32 & 31: kill the process);
 *                         then exit(6)
 *   strictfilter exec     a filter that lets everything through but mkdir
 *                         (futex too), then an exec of true: the exec
 *                         record is written before it (man-db's children
 *                         filter, then exec groff)
 *   strictfilter thread   a worker thread installs a filter that makes
 *                         futex fail (ENOSYS) and ends; the main thread,
 *                         not bound by it, returns 7: its exit record
 *                         must be written at once, not left to recovery
 *
 * Before the filter it moves 5 bytes over a socketpair, after it 3.  The
 * library must make no system call the filter forbids on the way out:
 * the status is the program's (it was SIGSYS, or 0 once the ticker ended
 * the process for a main thread killed at the library's rt_sigprocmask).
 */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#define ALLOW(nr)                                                              \
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1),                       \
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)

static int install(struct sock_filter *f, unsigned short n)
{
	struct sock_fprog prog = { n, f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
		perror("seccomp");
		return -1;
	}
	return 0;
}

static void *futex_enosys(void *arg)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_futex, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};

	(void)arg;
	return (void *)(long)install(f, sizeof(f) / sizeof(f[0]));
}

int main(int argc, char **argv)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		ALLOW(__NR_read),
		ALLOW(__NR_write),
		ALLOW(__NR_exit),
		ALLOW(__NR_exit_group),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_THREAD),
	};
	char b[8];
	int sv[2];

	if (argc != 2 || socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
		return 2;
	if (write(sv[0], "hello", 5) != 5 || read(sv[1], b, 5) != 5)
		return 2;
	if (strcmp(argv[1], "thread") == 0) {
		pthread_t t;
		void *r;

		if (pthread_create(&t, NULL, futex_enosys, NULL) != 0 ||
		    pthread_join(t, &r) != 0 || r != NULL)
			return 2;
		if (write(sv[0], "abc", 3) != 3 || read(sv[1], b, 3) != 3)
			return 2;
		return 7;
	}
	if (strcmp(argv[1], "exec") == 0) {
		struct sock_filter g[] = {
			BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
				 offsetof(struct seccomp_data, nr)),
			BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_mkdir, 0, 1),
			BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
			BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		};

		if (install(g, sizeof(g) / sizeof(g[0])) != 0)
			return 2;
		if (write(sv[0], "abc", 3) != 3 || read(sv[1], b, 3) != 3)
			return 2;
		execl("/bin/true", "true", (char *)NULL);
		return 2;
	}
	if (strcmp(argv[1], "shift") == 0) {
		struct sock_filter g[] = {
			BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
				 offsetof(struct seccomp_data, nr)),
			BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_futex, 1, 0),
			BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
			BPF_STMT(BPF_LDX | BPF_W | BPF_IMM, 32),
			BPF_STMT(BPF_LD | BPF_W | BPF_IMM, 1),
			BPF_STMT(BPF_ALU | BPF_LSH | BPF_X, 0),
			BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 1),
			BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
			BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		};

		if (install(g, sizeof(g) / sizeof(g[0])) != 0)
			return 2;
		if (write(sv[0], "abc", 3) != 3 || read(sv[1], b, 3) != 3)
			_exit(2);
		exit(6);
	}
	if (install(f, sizeof(f) / sizeof(f[0])) != 0)
		return 2;
	if (write(sv[0], "abc", 3) != 3 || read(sv[1], b, 3) != 3)
		_exit(2);
	if (strcmp(argv[1], "_exit") == 0)
		_exit(5);
	if (strcmp(argv[1], "exit") == 0)
		exit(6);
	alarm(1);
	return 0;
}
