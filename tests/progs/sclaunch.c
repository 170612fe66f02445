/*
 * sclaunch.c - run a program under a seccomp filter that answers
 * close_range and unshare as an older kernel or a sandbox would
 * (t_progfd_fallback).
 *
 *   sclaunch CLOSE_RANGE UNSHARE [-stdio] PROG ARGS...
 *
 * CLOSE_RANGE and UNSHARE: "allow", or an errno number the call fails
 * with (38: ENOSYS, as before Linux 5.9; 1: EPERM), or 0: the call does
 * nothing and returns 0 (SECCOMP_RET_ERRNO | 0, a filter faking success).
 * -stdio: fds 0 to 2 closed before the exec.  SCLAUNCH_KILL=NR (or the
 * name process_vm_readv) in the
 * environment: system call NR kills the process (SECCOMP_RET_KILL_PROCESS,
 * as systemd's SystemCallFilter= does with a call it leaves out);
 * SCLAUNCH_EPERM=NR (or futex): that call fails with EPERM.  Every
 * other call is allowed.  close_range is 436 on x86-64 and AArch64 alike.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define NR_CLOSE_RANGE 436

static unsigned verdict(const char *how)
{
	if (strcmp(how, "allow") == 0)
		return SECCOMP_RET_ALLOW;
	return SECCOMP_RET_ERRNO | ((unsigned)atoi(how) & SECCOMP_RET_DATA);
}

int main(int argc, char **argv)
{
	int stdio = argc > 3 && strcmp(argv[3], "-stdio") == 0;
	char **prog = argv + 3 + stdio;

	if (argc < 4 + stdio) {
		fprintf(stderr, "usage: sclaunch CLOSE_RANGE UNSHARE [-stdio] PROG ARGS...\n");
		return 2;
	}
	const char *errno_nr = getenv("SCLAUNCH_EPERM");
	unsigned eperm = !errno_nr ? ~0u
			 : strcmp(errno_nr, "futex") == 0 ? (unsigned)SYS_futex
							  : (unsigned)atoi(errno_nr);
	const char *kill_nr = getenv("SCLAUNCH_KILL");
	unsigned kill = !kill_nr ? ~0u
			: strcmp(kill_nr, "process_vm_readv") == 0
			    ? (unsigned)SYS_process_vm_readv
			    : (unsigned)atoi(kill_nr);
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, kill, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, eperm, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NR_CLOSE_RANGE, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, verdict(argv[1])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_unshare, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, verdict(argv[2])),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog p = { sizeof(f) / sizeof(f[0]), f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &p) != 0) {
		perror("sclaunch: seccomp");
		return 2;
	}
	if (stdio) {
		close(0);
		close(1);
		close(2);
	}
	execvp(prog[0], prog);
	return 127;
}
