/*
 * allowlaunch - run a program under a seccomp allow-list, as systemd's
 * SystemCallFilter= with a list of allowed calls makes one: every call
 * not on the list kills the process (SECCOMP_RET_KILL_PROCESS, SIGSYS),
 * as does a call of another ABI than this one's.
 *
 *   allowlaunch NUMBERS_FILE PROG ARGS...
 *
 * NUMBERS_FILE: the allowed system call numbers, separated by blanks or
 * newlines (t_systemd_filter makes it from `systemd-analyze
 * syscall-filter @system-service`).  The filter is installed with
 * no_new_privs, then PROG is executed.
 */
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <unistd.h>

#if defined(__x86_64__)
#define ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define ARCH AUDIT_ARCH_AARCH64
#else
#error "allowlaunch: an ABI of its own to name"
#endif

#define MAX_CALLS 1000

int main(int argc, char **argv)
{
	static struct sock_filter f[5 + 2 * MAX_CALLS + 1];
	unsigned nr;
	size_t n = 0, calls = 0;
	FILE *in;

	if (argc < 3) {
		fprintf(stderr, "usage: allowlaunch NUMBERS_FILE PROG ARGS...\n");
		return 2;
	}
	in = fopen(argv[1], "r");
	if (!in) {
		perror("allowlaunch: the list");
		return 2;
	}
	f[n++] = (struct sock_filter)BPF_STMT(
		BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
	f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ARCH,
					      1, 0);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
					      SECCOMP_RET_KILL_PROCESS);
	f[n++] = (struct sock_filter)BPF_STMT(
		BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
	while (fscanf(in, "%u", &nr) == 1) {
		if (++calls > MAX_CALLS) {
			fprintf(stderr, "allowlaunch: more than %d calls\n",
				MAX_CALLS);
			return 2;
		}
		f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
						      nr, 0, 1);
		f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
						      SECCOMP_RET_ALLOW);
	}
	fclose(in);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
					      SECCOMP_RET_KILL_PROCESS);
	struct sock_fprog p = {(unsigned short)n, f};

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &p) != 0) {
		perror("allowlaunch: seccomp");
		return 2;
	}
	execvp(argv[2], argv + 2);
	perror("allowlaunch: exec");
	return 127;
}
