/*
 * mapfail.c - a process whose memory calls start failing, as at its map
 * count limit (vm.max_map_count) or under strict overcommit, after it has
 * moved bytes (t_map_failures).
 *
 *   mapfail fork|forksig|sbuf|lists|grow [hold]
 *
 * Moves 100 bytes each way over a connected socketpair, then installs a
 * seccomp filter through a raw system call (unseen by the preload, which
 * would otherwise run the process as a sandboxed one: quiet.h) that
 * fails some mmap calls with ENOMEM:
 *   fork: those with MAP_FIXED | MAP_NORESERVE (a fork child's making its
 *         memory its own: core/state.c's state_after_fork).  Then forks 3
 *         children one after the other; each moves 1000 bytes each way
 *         over a socketpair of its own and _exits.
 *   forksig: as fork, each fork made in a SIGUSR1 handler (sigaction),
 *         the child moving its bytes and calling _exit in it.
 *   sbuf: private anonymous ones of 4, 8 or 16 KiB (the ticker's record
 *         buffer: core/summary.c's sbuf_grow).  Then moves 200 bytes
 *         more each way over a second socketpair.
 *   lists: private anonymous ones of 64 KiB to 1 MiB (the lists of a
 *         record's fds and of a batch's close records: core/topn.c's
 *         topn_grow), from the start.  Then as sbuf.
 *   grow: first keeps 30 more socketpairs open, 10 bytes moved each way
 *         on each, and closes one more pair, then waits 1.5 s (the ticker
 *         writes its records: its buffer has its first 4 KiB); then fails
 *         private anonymous mmaps of 8 to 64 KiB (the buffer cannot
 *         grow) and exits, its exit record listing 60 fds (more than
 *         4 KiB of text).
 * Prints "done" once all of it moved.  hold: then waits to be killed.
 * Exits 0; 2 on an unexpected failure.
 */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

static void die(const char *what)
{
	fprintf(stderr, "mapfail: %s: %s\n", what, strerror(errno));
	exit(2);
}

/* n bytes each way over a new socketpair, both ends closed after. */
static void xfer(size_t n)
{
	char buf[1000];
	int sv[2];

	memset(buf, 'm', sizeof(buf));
	if (n > sizeof(buf) || socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
		die("socketpair");
	if (write(sv[0], buf, n) != (ssize_t)n ||
	    read(sv[1], buf, n) != (ssize_t)n ||
	    write(sv[1], buf, n) != (ssize_t)n ||
	    read(sv[0], buf, n) != (ssize_t)n)
		die("xfer");
	close(sv[0]);
	close(sv[1]);
}

/* A system call made inline, the unused arguments zero (prctl checks). */
static volatile pid_t forked;

/* forksig's handler: the fork, and the child's whole life, in it. */
static void on_usr1(int sig)
{
	(void)sig;
	forked = fork();
	if (forked == 0) {
		xfer(1000);
		_exit(0);
	}
}

static long raw3(long nr, long a, long b, long c)
{
	register long r10 __asm__("r10") = 0;
	register long r8 __asm__("r8") = 0;
	long r;

	__asm__ volatile("syscall"
			 : "=a"(r)
			 : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8)
			 : "rcx", "r11", "memory");
	return r;
}

#define LD_NR BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr))
#define LD_ARG(i)                                                             \
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS,                                    \
		 offsetof(struct seccomp_data, args[i]))
#define RET(x) BPF_STMT(BPF_RET | BPF_K, (x))
#define FAIL RET(SECCOMP_RET_ERRNO | ENOMEM)
#define ALLOW RET(SECCOMP_RET_ALLOW)

static void filter(int mode)
{
	static struct sock_filter fixed[] = {
		LD_NR,
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_mmap, 0, 4),
		LD_ARG(3),
		BPF_STMT(BPF_ALU | BPF_AND | BPF_K, MAP_FIXED | MAP_NORESERVE),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, MAP_FIXED | MAP_NORESERVE,
			 0, 1),
		FAIL,
		ALLOW,
	};
	static struct sock_filter small[] = {
		LD_NR,
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_mmap, 0, 7),
		LD_ARG(3),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
			 MAP_PRIVATE | MAP_ANONYMOUS, 0, 5),
		LD_ARG(1),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 4096, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 8192, 1, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 16384, 0, 1),
		FAIL,
		ALLOW,
	};
	/* Private anonymous mappings of lo to hi bytes. */
#define SIZES(lo, hi)                                                         \
	{                                                                     \
		LD_NR,                                                        \
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_mmap, 0, 6),          \
		LD_ARG(3),                                                    \
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,                           \
			 MAP_PRIVATE | MAP_ANONYMOUS, 0, 4),                  \
		LD_ARG(1),                                                    \
		BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, (lo), 0, 2),              \
		BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K, (hi), 1, 0),              \
		FAIL,                                                         \
		ALLOW,                                                        \
	}
	static struct sock_filter grow[] = SIZES(8192, 65536);
	static struct sock_filter lists[] = SIZES(65536, 1048576);
	struct sock_fprog p;

	static const struct {
		struct sock_filter *f;
		unsigned short n;
	} by_mode[] = {
		{fixed, sizeof(fixed) / sizeof(fixed[0])},
		{small, sizeof(small) / sizeof(small[0])},
		{lists, sizeof(lists) / sizeof(lists[0])},
		{grow, sizeof(grow) / sizeof(grow[0])},
	};

	p.filter = by_mode[mode].f;
	p.len = by_mode[mode].n;
	if (raw3(SYS_prctl, PR_SET_NO_NEW_PRIVS, 1, 0) != 0 ||
	    raw3(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, (long)&p) != 0) {
		fprintf(stderr, "mapfail: cannot install the filter\n");
		exit(2);
	}
}

int main(int argc, char **argv)
{
	int mode, i, held[60];

	if (argc < 2) {
		fprintf(stderr,
			"usage: mapfail fork|forksig|sbuf|lists|grow [hold]\n");
		return 2;
	}
	mode = !strcmp(argv[1], "sbuf")	     ? 1
	       : !strcmp(argv[1], "lists")   ? 2
	       : !strcmp(argv[1], "grow")    ? 3
	       : !strcmp(argv[1], "forksig") ? 4
					     : 0;
	if (mode == 0 && strcmp(argv[1], "fork")) {
		fprintf(stderr,
			"usage: mapfail fork|forksig|sbuf|lists|grow [hold]\n");
		return 2;
	}
	if (mode == 3) {
		char buf[10];

		memset(buf, 'g', sizeof(buf));
		for (i = 0; i < 60; i += 2) {
			if (socketpair(AF_UNIX, SOCK_STREAM, 0, held + i) != 0 ||
			    write(held[i], buf, 10) != 10 ||
			    read(held[i + 1], buf, 10) != 10 ||
			    write(held[i + 1], buf, 10) != 10 ||
			    read(held[i], buf, 10) != 10)
				die("held");
		}
		xfer(100);
		usleep(1500000);
		filter(mode);
		printf("done\n");
		return 0;
	}
	/* The lists are made at the first drain, which may come as soon as
	 * the first close: filtered before it. */
	if (mode == 2)
		filter(mode);
	xfer(100);
	if (mode != 2)
		filter(mode == 4 ? 0 : mode);
	if (mode == 4) {
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_usr1;
		sigaction(SIGUSR1, &sa, NULL);
		for (i = 0; i < 3; i++) {
			int st;

			forked = -1;
			raise(SIGUSR1);
			if (forked < 0)
				die("fork");
			if (waitpid(forked, &st, 0) != forked ||
			    !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
				fprintf(stderr, "mapfail: a child failed\n");
				return 2;
			}
		}
	} else if (mode) {
		xfer(200);
	} else {
		for (i = 0; i < 3; i++) {
			pid_t p = fork();
			int st;

			if (p < 0)
				die("fork");
			if (p == 0) {
				xfer(1000);
				_exit(0);
			}
			if (waitpid(p, &st, 0) != p || !WIFEXITED(st) ||
			    WEXITSTATUS(st) != 0) {
				fprintf(stderr, "mapfail: a child failed\n");
				return 2;
			}
		}
	}
	printf("done\n");
	fflush(stdout);
	if (argc > 2 && !strcmp(argv[2], "hold"))
		for (;;)
			pause();
	return 0;
}
