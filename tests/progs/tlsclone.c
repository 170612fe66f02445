/*
 * tlsclone.c - children made by clone() the way Chromium makes them.
 *
 *   tlsclone fork-clone | fork-sysclone | fork-clone3
 *       a child of its own (no CLONE_VM) through libc's clone(),
 *       syscall(SYS_clone) or syscall(SYS_clone3); it _exits with 7.
 *       (Chromium's user-namespace probe: clone(CLONE_NEWUSER | SIGCHLD).)
 *   tlsclone settls
 *       a child on our memory with a TLS block of its own, zeroed:
 *       clone(CLONE_VM | CLONE_VFORK | CLONE_FS | CLONE_SETTLS), as
 *       Chromium's ChrootToSafeEmptyDir makes its chroot helper.  The
 *       child makes the calls such a helper makes (syscall(), close, dup2,
 *       chdir) and _exits with 7.  Any TLS access of a preload's there
 *       faults (errno's address comes from the TCB's self pointer, 0).
 *   tlsclone settls-io
 *       the same child making data calls on a socket its parent never
 *       looked at (a socketpair made by a raw system call: the first look
 *       at that fd is the child's): a write, and a recv that fails
 *       (EAGAIN); the parent then reads the child's byte.
 *
 * Prints "ok MODE" when the child exited with 7 and the parent ran on;
 * exits 1 otherwise.
 */
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/sched.h>

#define AREA (256 * 1024)

static char child_stack[AREA] __attribute__((aligned(64)));
/* The child's TLS: the middle of a zeroed area, so that the fs-relative
 * writes glibc makes below it (errno of a failed call) stay inside. */
static char tls_area[AREA] __attribute__((aligned(64)));

static int exits_7(void *arg)
{
	(void)arg;
	_exit(7);
}

static int helper(void *arg)
{
	(void)arg;
	/* What a chroot helper does, each call through a wrapper: a
	 * syscall() the preload handles (close of a number not open: fails),
	 * close and dup2 (libc's), then _exit. */
	syscall(SYS_close, 1000);
	if (dup2(2, 1000) == 1000)
		close(1000);
	syscall(SYS_chdir, "/");
	_exit(7);
}

static int sv[2];

/* A socketpair no wrapper sees (inline on x86-64: libc's syscall() is one
 * of the calls a preload may look at), so that the process has no
 * metered fd and no second thread yet (a process with threads runs a
 * cancellation point's TLS checks in libc's own write: no zeroed-TLS
 * child may call one then, preload or not). */
static int raw_socketpair(int v[2])
{
#if defined(__x86_64__)
	long r;
	register long a3 __asm__("r10") = (long)v;

	__asm__ volatile("syscall"
			 : "=a"(r)
			 : "0"((long)SYS_socketpair), "D"((long)AF_UNIX),
			   "S"((long)SOCK_STREAM), "d"(0L), "r"(a3)
			 : "rcx", "r11", "memory");
	return (int)r;
#else
	return socketpair(AF_UNIX, SOCK_STREAM, 0, v);
#endif
}

/* The child's data calls: its first look at sv[1] is the first anyone
 * makes (the parent never used it), and a recv that fails (EAGAIN). */
static int helper_io(void *arg)
{
	char c;

	(void)arg;
	if (write(sv[1], "x", 1) != 1)
		_exit(3);
	if (recv(sv[1], &c, 1, MSG_DONTWAIT) != -1)
		_exit(4);
	_exit(7);
}

static pid_t fork_like(const char *how)
{
	if (strcmp(how, "fork-clone") == 0)
		return clone(exits_7, child_stack + AREA, SIGCHLD, NULL);
	if (strcmp(how, "fork-sysclone") == 0) {
		pid_t p = (pid_t)syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);

		if (p == 0)
			_exit(7);
		return p;
	}
	if (strcmp(how, "fork-clone3") == 0) {
		struct clone_args ca;
		pid_t p;

		memset(&ca, 0, sizeof(ca));
		ca.exit_signal = SIGCHLD;
		p = (pid_t)syscall(SYS_clone3, &ca, sizeof(ca));
		if (p == 0)
			_exit(7);
		return p;
	}
	if (strcmp(how, "settls-io") == 0) {
		if (raw_socketpair(sv) != 0) {
			fprintf(stderr, "tlsclone: socketpair failed\n");
			exit(2);
		}
		return clone(helper_io, child_stack + AREA,
			     CLONE_VM | CLONE_VFORK | CLONE_FS | CLONE_SETTLS |
				     SIGCHLD,
			     NULL, NULL, tls_area + AREA / 2, NULL);
	}
	if (strcmp(how, "settls") == 0)
		return clone(helper, child_stack + AREA,
			     CLONE_VM | CLONE_VFORK | CLONE_FS | CLONE_SETTLS |
				     SIGCHLD,
			     NULL, NULL, tls_area + AREA / 2, NULL);
	fprintf(stderr, "tlsclone: unknown mode %s\n", how);
	exit(2);
}

int main(int argc, char **argv)
{
	pid_t p;
	int st;

	if (argc != 2) {
		fprintf(stderr, "usage: tlsclone MODE\n");
		return 2;
	}
	p = fork_like(argv[1]);
	if (p < 0) {
		perror("tlsclone: clone");
		return 1;
	}
	if (waitpid(p, &st, 0) != p) {
		perror("tlsclone: waitpid");
		return 1;
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 7) {
		fprintf(stderr, "tlsclone: %s: child ended with status 0x%x\n",
			argv[1], st);
		return 1;
	}
	if (strcmp(argv[1], "settls-io") == 0) {
		char c;

		if (recv(sv[0], &c, 1, MSG_DONTWAIT) != 1 || c != 'x') {
			fprintf(stderr, "tlsclone: the child's byte did not arrive\n");
			return 1;
		}
	}
	printf("ok %s\n", argv[1]);
	return 0;
}
