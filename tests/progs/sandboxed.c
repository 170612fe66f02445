/*
 * sandboxed.c - a fork child that confines itself, as OpenSSH's
 * pre-authentication child does, then moves bytes on a socket it
 * inherited.
 *
 *   sandboxed HOW BYTES [ROOT]
 *
 * The parent makes a loopback TCP connection and forks.  The child
 * confines itself:
 *   prctl    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER) (OpenSSH's way);
 *   seccomp  syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER) (libseccomp's);
 *   tsync    the same with SECCOMP_FILTER_FLAG_TSYNC: every thread of the
 *            process, the preload's ticker included, is filtered;
 *   chroot   chroot(ROOT), a uid change to nobody's when root (the log's
 *            directory is then out of sight and its name out of reach),
 *            then the prctl filter;
 *   chrootonly  chroot and the uid change, no filter;
 *   late     the prctl filter after closing the socket unused, then a
 *            socketpair made under the filter carries BYTES each way (as
 *            apt's http method sandboxes itself, then connects): the
 *            ticker, started at the filter though nothing was tracked
 *            yet, writes the records;
 *   latetsync  the same with the TSYNC filter, which would bind a ticker
 *            started for it: none is, so the child's state file keeps
 *            the numbers for recovery;
 *   probe    no filter: before the fork, the parent makes the invalid
 *            calls libseccomp and systemd make to probe the kernel
 *            (strict mode with a flag, a NULL filter, with and without
 *            TSYNC), which confine nothing; the child then writes BYTES
 *            unconfined;
 *   thread   the prctl filter, then a thread made under it (the filter
 *            is inherited) moves BYTES each way on a socketpair it makes;
 *   idle     the prctl filter, after closing the socket unused: the child
 *            meters nothing, and its exit must not touch its state file
 *            (BYTES must be 0);
 *   busy     the TSYNC filter, with no memory call but mmap and munmap
 *            (Firefox's sandboxes trap mremap; glibc's allocator needs no
 *            more), then BUSY_PAIRS socketpairs held open across two
 *            ticks and closed: batches of records far beyond a page, a
 *            top list and windows beyond their first allocation, all
 *            made by a ticker the filter binds; then BYTES on the
 *            socket;
 *   sshd     as chroot, and the limits OpenSSH sets before its filter:
 *            RLIMIT_FSIZE, RLIMIT_NOFILE and RLIMIT_NPROC at 0, 1 and 0
 *            (no file can grow, none be opened, no process be made: the
 *            records can only be recovered from the state file later);
 * with a filter that kills the process for any system call but read,
 * write, close, exit, futex, signal masks, clocks and memory (a stricter
 * list than OpenSSH's, which also fails open and stat with EACCES: here
 * an fstat kills).  It then writes BYTES to its socket, reads a 1-byte
 * acknowledgement, closes and returns from main (exit(), destructors).
 * The parent reads the bytes, acknowledges, reaps the child and prints
 * pid=, child=, got= (bytes read) and status= (the child's wait status:
 * "exit:N" or "signal:N"), one a line.
 */
#define PROG "sandboxed"
#include "childxfer.h"

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <pwd.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#if defined(__x86_64__)
#define ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define ARCH AUDIT_ARCH_AARCH64
#endif

#define ALLOW(nr)                                                              \
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1),                       \
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)

/* What both filters allow: the arch checked, then the calls of a program
 * that moves bytes on sockets it has (mmap and munmap its only memory
 * calls), and exits. */
#define BASE_RULES                                                             \
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)), \
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ARCH, 1, 0),                   \
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),               \
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)), \
	    ALLOW(SYS_read), ALLOW(SYS_write), ALLOW(SYS_close),               \
	    ALLOW(SYS_exit), ALLOW(SYS_exit_group), ALLOW(SYS_futex),          \
	    ALLOW(SYS_rt_sigprocmask), ALLOW(SYS_rt_sigreturn),                \
	    ALLOW(SYS_clock_gettime), ALLOW(SYS_brk), ALLOW(SYS_mmap),         \
	    ALLOW(SYS_munmap), ALLOW(SYS_socketpair)

static struct sock_filter rules[] = {
	BASE_RULES,
	ALLOW(SYS_madvise),
	/* A thread made under the filter (mode "thread"). */
	ALLOW(SYS_clone),
	ALLOW(SYS_clone3),
	ALLOW(SYS_mprotect),
	ALLOW(SYS_set_robust_list),
	ALLOW(SYS_rseq),
	ALLOW(SYS_rt_sigaction),
	ALLOW(SYS_getrandom),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
};

/* For "busy": memory through mmap and munmap only; its pauses. */
static struct sock_filter lean_rules[] = {
	BASE_RULES,
	ALLOW(SYS_clock_nanosleep),
	ALLOW(SYS_nanosleep),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
};

#define BUSY_PAIRS 300

static void confine(const char *how, const char *root)
{
	struct sock_fprog prog = { sizeof(rules) / sizeof(rules[0]), rules };

	if (strcmp(how, "busy") == 0) {
		prog.len = sizeof(lean_rules) / sizeof(lean_rules[0]);
		prog.filter = lean_rules;
	}

	if (strncmp(how, "chroot", 6) == 0 || strcmp(how, "sshd") == 0) {
		struct passwd *pw = getpwnam("nobody");

		if (chroot(root) != 0 || chdir("/") != 0)
			die("chroot");
		if (getuid() == 0 && pw &&
		    (setgid(pw->pw_gid) != 0 || setuid(pw->pw_uid) != 0))
			die("setuid");
	}
	if (strcmp(how, "chrootonly") == 0)
		return;
	if (strcmp(how, "sshd") == 0) {
		struct rlimit zero = { 0, 0 }, one = { 1, 1 };

		if (setrlimit(RLIMIT_FSIZE, &zero) != 0 ||
		    setrlimit(RLIMIT_NOFILE, &one) != 0 ||
		    setrlimit(RLIMIT_NPROC, &zero) != 0)
			die("setrlimit");
	}
	if (strcmp(how, "probe") == 0)
		return;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		die("PR_SET_NO_NEW_PRIVS");
	if (strcmp(how, "seccomp") == 0 || strcmp(how, "tsync") == 0 ||
	    strcmp(how, "busy") == 0 || strcmp(how, "latetsync") == 0) {
		if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
			    strcmp(how, "seccomp") != 0 ? SECCOMP_FILTER_FLAG_TSYNC
							: 0,
			    &prog) != 0)
			die("seccomp");
	} else if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) !=
		   0) {
		die("PR_SET_SECCOMP");
	}
}

/* BYTES each way through a socketpair of its own, in 64 KiB turns. */
static void *pair_traffic(void *arg)
{
	static char buf[65536];
	long bytes = *(long *)arg;
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
		_exit(5);
	memset(buf, 'y', sizeof(buf));
	while (bytes > 0) {
		size_t chunk = bytes < (long)sizeof(buf) ? (size_t)bytes
							 : sizeof(buf);
		size_t got = 0;
		ssize_t n = write(sv[0], buf, chunk);

		if (n <= 0)
			_exit(6);
		while (got < (size_t)n) {
			ssize_t r = read(sv[1], buf, (size_t)n - got);

			if (r <= 0)
				_exit(7);
			got += (size_t)r;
		}
		bytes -= n;
	}
	close(sv[0]);
	close(sv[1]);
	return NULL;
}

/* What libseccomp and systemd ask the kernel to learn what it offers:
 * every one fails (EINVAL, EFAULT) and confines nothing. */
static void probe(void)
{
	syscall(SYS_seccomp, SECCOMP_SET_MODE_STRICT, 1, NULL);
	syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
		SECCOMP_FILTER_FLAG_TSYNC, NULL);
	syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, NULL);
	prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, NULL, 0, 0);
}

static void child(int fd, long bytes, const char *how, const char *root)
{
	if (strcmp(how, "idle") == 0) {
		close(fd);
		confine(how, root);
		return;
	}
	if (strcmp(how, "thread") == 0) {
		pthread_t t;

		close(fd);
		confine(how, root);
		if (pthread_create(&t, NULL, pair_traffic, &bytes) != 0 ||
		    pthread_join(t, NULL) != 0)
			_exit(8);
		return;
	}
	if (strcmp(how, "busy") == 0) {
		static int sv[BUSY_PAIRS][2];
		struct timespec tick = { 1, 300000000 };
		char c = 'b';
		int i;

		confine(how, root);
		for (i = 0; i < BUSY_PAIRS; i++) {
			if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv[i]) != 0 ||
			    write(sv[i][0], &c, 1) != 1 ||
			    read(sv[i][1], &c, 1) != 1)
				_exit(9);
		}
		nanosleep(&tick, NULL); /* an interval record of them all */
		for (i = 0; i < BUSY_PAIRS; i++) {
			close(sv[i][0]);
			close(sv[i][1]);
		}
		nanosleep(&tick, NULL); /* their close records */
		xfer_send(fd, bytes);
		return;
	}
	if (strcmp(how, "late") == 0 || strcmp(how, "latetsync") == 0) {
		close(fd);
		confine(how, root);
		pair_traffic(&bytes);
		return;
	}
	confine(how, root);
	xfer_send(fd, bytes);
}

int main(int argc, char **argv)
{
	long bytes;
	int lfd, cfd, sfd;
	pid_t pid;

	if (argc < 3 || (strncmp(argv[1], "chroot", 6) == 0 && argc < 4) ||
	    (strcmp(argv[1], "sshd") == 0 && argc < 4)) {
		fprintf(stderr, "usage: sandboxed prctl|seccomp|tsync|probe|"
				"thread|late|latetsync|idle|busy|chroot|chrootonly|"
				"sshd "
				"BYTES [ROOT]\n");
		return 2;
	}
	bytes = atol(argv[2]);
	xfer_connect(&lfd, &cfd, &sfd);
	if (strcmp(argv[1], "probe") == 0)
		probe();
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		close(lfd);
		close(sfd);
		child(cfd, bytes, argv[1], argc > 3 ? argv[3] : NULL);
		return 0;
	}
	close(cfd);
	return xfer_receive(lfd, sfd, bytes, pid);
}
