/*
 * check_killstep.c - a SIGKILL at any instruction of a lifecycle call.
 *
 * Each test runs one real operation of the core code (meter_closed,
 * meter_opened over a reused fd, meter_set_addrs, fdtab_classify, a
 * retire or reopen whose record goes through the stack) in a ptrace'd
 * child, stops it after exactly n instructions of the operation and kills
 * it there; then the C recovery (recover_dir) and the tools' reader of a
 * state file not recovered (scripts/sockmeter_log.py read_state) read
 * the same state file.  Four ways for the kill to come (mode):
 *
 *   0  a plain SIGKILL after n instructions;
 *   1  at n, another close of the fd claims a close-queue place first
 *      (closeq_claim, as closeq_retire does), then the kill;
 *   2  at n, a signal handler runs a whole meter_closed on the same fd
 *      (the give-up path, the slot busy under it), then the kill;
 *   3  as 2, but the operation then runs to its end before the kill.
 *
 * Checked at every n that is run: the exit record's bytes_out is every
 * byte counted before the kill; every connection is counted once, open
 * (in the exit record) or closed (a close record), never both and never
 * neither, and fds_open and fds_closed are those records; the tools'
 * reader says the same "bytes_out fds_closed fds_open"; and no record
 * shows an address the scenario never set (half of one), nor loses one
 * ("") of a connection whose address the operation was not writing.
 *
 * The documented exception: a retire or reopen whose close goes to the
 * stack (no close-queue place claimed: the "stack" scenarios, an unseen
 * close's snapshot on the caller's stack until closeq_push has it) may,
 * killed between taking the counters and pushing them, lose that one
 * connection: then it is in no record and bytes_out is short by exactly
 * its 1234 bytes, never by anything else (check_state.c's
 * test_a_kill_while_an_address_is_noted_keeps_the_connection, OPENING).
 *
 * Single-stepping costs some 40 us an instruction on a 2-core VM, and
 * each kill a fresh process, state file and recovery: every one of the
 * ~7,600 instructions of the seven operations in four modes would take
 * minutes.  So n runs over every STRIDE-th instruction (and the last),
 * and over every instruction between two of those whose outcomes differ:
 * each range where the outcome changes is stepped through whole.  The
 * instructions up to n are not stepped one by one in every child: a
 * reference run steps the operation once and notes the address of each,
 * and a child is brought to instruction n by a hardware breakpoint on
 * that address (an int3), counting its hits (x86-64; elsewhere stepped), each stop
 * checked against the reference.  SOCKMETER_KILLSTEP_ALL=1 runs every n;
 * SOCKMETER_KILLSTEP_VERBOSE=1 prints each outcome and its range.
 *
 * Without ptrace (a container that forbids it) the tests say so on
 * stderr and pass without running.
 */
#include "../../core/meter.h"
#include "../../core/recover.h"
#include "../../core/state.h"
#include "state_fixture.h"
#include "unit_util.h"

#include <alloca.h>
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#if defined(__aarch64__)
#include <elf.h>
#endif
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#define STRIDE 24
#define MAX_STEPS 20000

/* The logs in DIR, not the default directory. */
static void setup(void)
{
	state_setup();
	snprintf(cfg.log_path, sizeof(cfg.log_path), "%s/k.%%p.log", dir);
}

/* ---- the traced child ---------------------------------------------- */

enum scen { CLOSE, REOPEN, SETADDRS, CLASSIFY, REOPEN_STACK, CLOSE_STACK,
	    REOPEN_UNKNOWN, NSCEN };
static const char *const scen_name[NSCEN] = {
	"close", "reopen", "set_addrs", "classify", "reopen_stack",
	"close_stack", "reopen_unknown"};

static struct meter m;
static int mode;
static int op_fd;

/* Set up a meter in a state file, as the preload does (the child's:
 * a failure is its exit status, 90 for no state file and 91 for no
 * meter; the tracer reports it). */
static void open_meter(struct state *st, uint32_t cap)
{
	int r = state_open_meter(st, &m, cap);

	if (r)
		_exit(90 + r - 1);
}

/* The addresses the scenarios set. */
#define L1 "127.0.0.1:4321"
#define P1 "127.0.0.1:80"
#define L2 "10.0.0.2:5555"
#define P2 "10.0.0.3:443"

/* The log of process pid (into logp), opened (empty) as the process
 * opens it before it writes: root's recovery makes none where only a
 * header names it (recover.c: root_append). */
static void log_opened(char *logp, size_t cap, pid_t pid)
{
	int fd;

	snprintf(logp, cap, "%s/k.%d.log", dir, (int)pid);
	fd = open(logp, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	ck_assert_int_ge(fd, 0);
	close(fd);
}

static struct fd_addr a4(const char *ip, unsigned port)
{
	struct fd_addr a;

	memset(&a, 0, sizeof(a));
	a.len = sizeof(a.u.in4);
	a.u.in4.sin_family = AF_INET;
	a.u.in4.sin_port = htons((uint16_t)port);
	if (inet_pton(AF_INET, ip, &a.u.in4.sin_addr) != 1)
		_exit(92);
	return a;
}

/* The kill's other party, at instruction n of the operation. */
static void on_usr1(int sig)
{
	(void)sig;
	if (mode == 1) {
		const struct fd_slot *slot = fdtab_slot(&m.tab, op_fd);
		uint32_t was = __atomic_load_n(&slot->gen, __ATOMIC_ACQUIRE);
		enum fd_kind kind = fdtab_kind(slot);

		if (fd_kind_counts(kind)) {
			closeq_prepare(&m.q);
			closeq_claim(&m.q, 1700000003000000000ull, op_fd, kind,
				     was, false);
		}
		raise(SIGKILL);
	}
	meter_closed(&m, op_fd, 1700000003000000000ull);
	if (mode == 2)
		raise(SIGKILL);
}

/*
 * Before the operation: fd 7 a TCP connection (L1 P1) with 1234 bytes
 * out, fd 8 one with 1 (no addresses); classify and reopen_unknown also
 * fd 9 opened and closed (a close record of no addresses) and a stray
 * of 5 bytes counted on it since.  Then SIGSTOP, the operation, SIGSTOP
 * until killed.
 */
static __attribute__((noinline)) void child(int scen)
{
	struct state st;
	struct fd_addr l1 = a4("127.0.0.1", 4321), p1 = a4("127.0.0.1", 80);
	struct fd_addr l2 = a4("10.0.0.2", 5555), p2 = a4("10.0.0.3", 443);
	struct fd_snapshot snap;

	if (ptrace(PTRACE_TRACEME, 0, 0, 0) != 0)
		_exit(93);
	signal(SIGUSR1, on_usr1);
	open_meter(&st, 64);
	meter_opened(&m, 7, KIND_TCP, 1700000000500000000ull, &l1, &p1);
	fd_account(&m.tab.slots[7], DIR_OUT, 1234, 0, ACCT_BYTES | ACCT_CALLS);
	meter_opened(&m, 8, KIND_TCP, 1700000000600000000ull, NULL, NULL);
	fd_account(&m.tab.slots[8], DIR_OUT, 1, 0, ACCT_BYTES | ACCT_CALLS);
	if (scen == CLASSIFY || scen == REOPEN_UNKNOWN) {
		meter_opened(&m, 9, KIND_TCP, 1700000000700000000ull, NULL,
			     NULL);
		meter_closed(&m, 9, 1700000000800000000ull);
		fd_account(&m.tab.slots[9], DIR_OUT, 5, 0,
			   ACCT_BYTES | ACCT_CALLS);
	}
	raise(SIGSTOP); /* the operation starts */
	switch (scen) {
	case CLOSE:
		meter_closed(&m, 7, 1700000001000000000ull);
		break;
	case REOPEN:
		meter_opened(&m, 7, KIND_UDP, 1700000002000000000ull, &l2,
			     &p2);
		break;
	case SETADDRS:
		meter_set_addrs(&m, 7, &l2, &p2);
		break;
	case CLASSIFY:
		fdtab_classify(&m.tab, 9, KIND_TCP, &l2, &p2);
		break;
	case REOPEN_STACK:
		if (fdtab_open(&m.tab, 7, KIND_UDP, 1700000002000000000ull,
			       &l2, &p2, &snap)) {
			snap.unseen = true;
			closeq_push(&m.q, &snap, 1700000002000000000ull);
		}
		break;
	case CLOSE_STACK:
		if (fdtab_retire(&m.tab, 7, &snap))
			closeq_push(&m.q, &snap, 1700000001000000000ull);
		break;
	case REOPEN_UNKNOWN:
		meter_opened(&m, 9, KIND_UDP, 1700000002000000000ull, &l2,
			     &p2);
		break;
	}
	for (;;)
		raise(SIGSTOP); /* done (again after a handler, mode 3) */
}

/* ---- what each scenario may leave ---------------------------------- */

/*
 * A connection the scenario has: its fd and kind in the records; must:
 * counted (open or closed) at every kill, else at most once (one the
 * operation makes, or in a stack scenario the one it retires);
 * closed_only: never open; addrs: the "local|peer" pairs its records may
 * show ("|": none).
 */
struct conn {
	int fd;
	const char *kind;
	bool must, closed_only;
	const char *addrs[3];
};

struct scenario {
	int fd;		   /* the fd the handler closes (modes 1-3) */
	uint64_t bytes;	   /* bytes out counted before the operation */
	uint64_t stack;	   /* what a stack-bound retire may lose (0: none) */
	int ncon;
	struct conn c[4];
};

#define A_OLD L1 "|" P1
#define A_NEW L2 "|" P2
#define A_NONE "|"

static const struct scenario scenarios[NSCEN] = {
	[CLOSE] = {7, 1235, 0, 2,
		   {{7, "tcp", true, false, {A_OLD}},
		    {8, "tcp", true, false, {A_NONE}}}},
	[REOPEN] = {7, 1235, 0, 3,
		    {{7, "tcp", true, false, {A_OLD}},
		     {7, "udp", false, false, {A_NEW, A_NONE}},
		     {8, "tcp", true, false, {A_NONE}}}},
	/* Addresses being written: unknown (""), never half of them. */
	[SETADDRS] = {7, 1235, 0, 2,
		      {{7, "tcp", true, false, {A_OLD, A_NEW, A_NONE}},
		       {8, "tcp", true, false, {A_NONE}}}},
	[CLASSIFY] = {9, 1240, 0, 4,
		      {{7, "tcp", true, false, {A_OLD}},
		       {8, "tcp", true, false, {A_NONE}},
		       {9, "tcp", true, true, {A_NONE}},
		       {9, "tcp", false, false, {A_NEW, A_NONE}}}},
	[REOPEN_STACK] = {7, 1235, 1234, 3,
			  {{7, "tcp", false, false, {A_OLD}},
			   {7, "udp", false, false, {A_NEW, A_NONE}},
			   {8, "tcp", true, false, {A_NONE}}}},
	[CLOSE_STACK] = {7, 1235, 1234, 2,
			 {{7, "tcp", false, false, {A_OLD}},
			  {8, "tcp", true, false, {A_NONE}}}},
	[REOPEN_UNKNOWN] = {9, 1240, 0, 4,
			    {{7, "tcp", true, false, {A_OLD}},
			     {8, "tcp", true, false, {A_NONE}},
			     {9, "tcp", true, true, {A_NONE}},
			     {9, "udp", false, false, {A_NEW, A_NONE}}}},
};

/* ---- the tools' reader, one python3 for a whole test ---------------- */

static FILE *py_in, *py_out;
static pid_t py_pid = -1;

static void py_start(void)
{
	int p2c[2], c2p[2];
	const char *py = access("/usr/bin/python3", X_OK) == 0
				 ? "/usr/bin/python3"
				 : "python3";

	py_in = py_out = NULL;
	if (access("scripts/sockmeter_log.py", R_OK) != 0) {
		fprintf(stderr, "check_killstep: no scripts/sockmeter_log.py "
				"here: the tools' state reader is not "
				"tested\n");
		return;
	}
	ck_assert_int_eq(pipe(p2c), 0);
	ck_assert_int_eq(pipe(c2p), 0);
	py_pid = fork();
	ck_assert_int_ge(py_pid, 0);
	if (py_pid == 0) {
		dup2(p2c[0], 0);
		dup2(c2p[1], 1);
		close(p2c[0]);
		close(p2c[1]);
		close(c2p[0]);
		close(c2p[1]);
		execlp(py, py, "-u", "-c",
		       "import sys; sys.path.insert(0, 'scripts')\n"
		       "import sockmeter_log as s\n"
		       "print('ready')\n"
		       "for p in sys.stdin:\n"
		       "    try:\n"
		       "        t = s.read_state(p.strip())['totals']\n"
		       "        print(t['bytes_out'], t['fds_closed'], "
		       "t['fds_open'])\n"
		       "    except Exception as e:\n"
		       "        print('ERR', repr(e)[:200])\n",
		       (char *)NULL);
		_exit(127);
	}
	close(p2c[0]);
	close(c2p[1]);
	py_in = fdopen(p2c[1], "w");
	py_out = fdopen(c2p[0], "r");
	ck_assert_ptr_nonnull(py_in);
	ck_assert_ptr_nonnull(py_out);
	{
		char buf[64];

		if (!fgets(buf, sizeof(buf), py_out) ||
		    strcmp(buf, "ready\n") != 0) {
			fprintf(stderr, "check_killstep: no python3 here: the "
					"tools' state reader is not tested\n");
			fclose(py_in);
			fclose(py_out);
			py_in = py_out = NULL;
			waitpid(py_pid, NULL, 0);
			py_pid = -1;
		}
	}
}

static void py_stop(void)
{
	if (py_in)
		fclose(py_in);
	if (py_out)
		fclose(py_out);
	if (py_pid > 0)
		waitpid(py_pid, NULL, 0);
	py_in = py_out = NULL;
	py_pid = -1;
}

/* "bytes_out fds_closed fds_open" of the state file at path; false
 * without python3. */
static bool py_totals(const char *path, char *out, size_t cap)
{
	if (!py_in)
		return false;
	fprintf(py_in, "%s\n", path);
	fflush(py_in);
	ck_assert_ptr_nonnull(fgets(out, (int)cap, py_out));
	out[strcspn(out, "\n")] = '\0';
	return true;
}

/* ---- ptrace -------------------------------------------------------- */

/* Whether this process may trace its children (a container may forbid
 * it: seccomp, YAMA ptrace_scope 3). */
static bool ptrace_works(void)
{
	int status;
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		if (ptrace(PTRACE_TRACEME, 0, 0, 0) != 0)
			_exit(1);
		raise(SIGSTOP);
		_exit(0);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	if (WIFEXITED(status))
		return false;
	if (WIFSTOPPED(status) &&
	    ptrace(PTRACE_SINGLESTEP, pid, 0, 0) == 0 &&
	    waitpid(pid, &status, 0) == pid && WIFSTOPPED(status) &&
	    WSTOPSIG(status) == SIGTRAP) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		return true;
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return false;
}

static unsigned long pc_of(pid_t pid)
{
#if defined(__x86_64__)
	struct user_regs_struct regs;

	ck_assert_int_eq(ptrace(PTRACE_GETREGS, pid, 0, &regs), 0);
	return regs.rip;
#elif defined(__aarch64__)
	/* No PTRACE_GETREGS there: the register set. */
	struct user_regs_struct regs;
	struct iovec io = {&regs, sizeof(regs)};

	ck_assert_int_eq(ptrace(PTRACE_GETREGSET, pid, NT_PRSTATUS, &io), 0);
	return regs.pc;
#else
	(void)pid;
	return 0;
#endif
}

/*
 * The child on a stack of one alignment (to 4 KiB) in every child:
 * reference() and kill_at() fork at different depths, and a copy to the
 * stack (the snapshot, in memmove's aligned loop) takes as many rounds as
 * the destination's alignment asks.  With the stack's random start, one
 * run in four of the clang build took another path than its reference,
 * and the breakpoint on the reference's address was never hit.
 */
static __attribute__((noinline)) void child_aligned(int scen)
{
	char here;
	volatile char *pad = alloca(((uintptr_t)&here & 4095) + 1);

	pad[0] = 0;
	child(scen);
	pad[0] = 1;
}

/* The child stopped at the operation's start. */
static pid_t start_child(int scen)
{
	int status;
	pid_t pid;

	mode = 0;
	op_fd = scenarios[scen].fd;
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		child_aligned(scen);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFSTOPPED(status) && WSTOPSIG(status) == SIGSTOP,
		      "child status %#x before the operation", status);
	return pid;
}

/* One instruction; false when the child stopped at the operation's end. */
static bool step(pid_t pid)
{
	int status;

	ck_assert_int_eq(ptrace(PTRACE_SINGLESTEP, pid, 0, 0), 0);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFSTOPPED(status), "child status %#x in a step",
		      status);
	if (WSTOPSIG(status) == SIGSTOP)
		return false;
	ck_assert_msg(WSTOPSIG(status) == SIGTRAP, "signal %d in a step",
		      WSTOPSIG(status));
	return true;
}

/* The reference run: pc[i] the address after i instructions; returns
 * the operation's length (pc[len]: at its end). */
static long reference(int scen, unsigned long *pc)
{
	pid_t pid = start_child(scen);
	struct recover_opts o = {.report = quiet};
	struct recover_stats rs;
	char sd[300], logp[400];
	long n = 0;
	int status;

	pc[0] = pc_of(pid);
	while (step(pid)) {
		ck_assert_int_lt(n + 1, MAX_STEPS);
		pc[++n] = pc_of(pid);
	}
	pc[++n] = pc_of(pid);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	/* Its state file recovered out of the way (the kills check). */
	snprintf(sd, sizeof(sd), "%s/st", dir);
	log_opened(logp, sizeof(logp), pid);
	ck_assert_int_eq(recover_dir(sd, &o, &rs), 0);
	ck_assert_uint_eq(rs.recovered, 1);
	unlink(logp);
	return n;
}

#if defined(__x86_64__)
/* Run on to the next instruction at address a (the child not at it):
 * an int3 there, taken out again once hit (the child's text is its own
 * copy).  Not a debug register: a VM may not fire those. */
static void run_to(pid_t pid, unsigned long a)
{
	struct user_regs_struct regs;
	int status;
	long word;

	errno = 0;
	word = ptrace(PTRACE_PEEKTEXT, pid, a, 0);
	ck_assert_int_eq(errno, 0);
	ck_assert_int_eq(ptrace(PTRACE_POKETEXT, pid, a,
				(word & ~0xffL) | 0xcc),
			 0);
	ck_assert_int_eq(ptrace(PTRACE_CONT, pid, 0, 0), 0);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFSTOPPED(status) && WSTOPSIG(status) == SIGTRAP,
		      "child status %#x at a breakpoint at %#lx", status, a);
	ck_assert_int_eq(ptrace(PTRACE_POKETEXT, pid, a, word), 0);
	ck_assert_int_eq(ptrace(PTRACE_GETREGS, pid, 0, &regs), 0);
	ck_assert_uint_eq(regs.rip, a + 1);
	regs.rip = a;
	ck_assert_int_eq(ptrace(PTRACE_SETREGS, pid, 0, &regs), 0);
}
#endif

/* Bring a child at the start to instruction n (n < len). */
static void forward(pid_t pid, const unsigned long *pc, long n)
{
	long cur = 0;

	while (cur < n) {
#if defined(__x86_64__)
		if (pc[cur] != pc[n]) {
			run_to(pid, pc[n]);
			while (pc[++cur] != pc[n])
				;
		} else
#endif
		{
			ck_assert(step(pid));
			cur++;
		}
		ck_assert_msg(pc_of(pid) == pc[cur],
			      "instruction %ld at %#lx, the reference's at "
			      "%#lx: the operation is not deterministic",
			      cur, pc_of(pid), pc[cur]);
	}
}

/* ---- one kill, its outcome checked --------------------------------- */

/* The path of the one state file in DIR/st. */
static void state_file(char *out, size_t cap)
{
	char d[300];
	DIR *dp;
	struct dirent *e;
	int n = 0;

	snprintf(d, sizeof(d), "%s/st", dir);
	dp = opendir(d);
	ck_assert_ptr_nonnull(dp);
	while ((e = readdir(dp)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(out, cap, "%s/%s", d, e->d_name);
		n++;
	}
	closedir(dp);
	ck_assert_int_eq(n, 1);
}

/* The string value of "key": in the object at o (up to its end), into
 * out. */
static void jstr(const char *o, const char *key, char *out, size_t cap)
{
	char pat[64];
	const char *p, *e;

	snprintf(pat, sizeof(pat), "\"%s\":\"", key);
	p = strstr(o, pat);
	ck_assert_msg(p != NULL && p < strchr(o, '}'), "no %s in %.200s",
		      key, o);
	p += strlen(pat);
	e = strchr(p, '"');
	ck_assert_ptr_nonnull(e);
	snprintf(out, cap, "%.*s", (int)(e - p), p);
}

/*
 * Kill the operation of scen after n instructions, in mode md; check
 * what recovery and the tools' reader make of it; its outcome (totals,
 * and each record of a connection: open/closed, fd, kind, addresses)
 * into res, for the ranges.
 */
static void kill_at(int scen, int md, long n, long len,
		    const unsigned long *pc, char *res, size_t cap)
{
	const struct scenario *sc = &scenarios[scen];
	struct recover_opts o = {.report = quiet};
	struct recover_stats rs;
	char sd[300], sp[600], logp[400], py[128], c_tot[128], *text, *line;
	char *l, *next, who[64];
	unsigned opens[4] = {0}, closes[4] = {0}, n_open = 0, n_closed = 0;
	uint64_t bytes, fds_open, fds_closed;
	bool py_ok, lost = false;
	pid_t pid = start_child(scen);
	int status, i;

	snprintf(who, sizeof(who), "%s mode %d at %ld/%ld", scen_name[scen],
		 md, n, len);
	/* The last instruction is raise's system call: its SIGSTOP stops
	 * the child before a breakpoint after it is reached. */
	if (n < len - 1)
		forward(pid, pc, n);
	else {
		forward(pid, pc, len - 2);
		ck_assert(step(pid));
		if (n == len)
			ck_assert(!step(pid));
	}
	if (md == 0) {
		kill(pid, SIGKILL);
		ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	} else {
		/* The handler at instruction n: the signal delivered as the
		 * child goes on from here. */
		int sig = SIGUSR1;

		for (;;) {
			ck_assert_int_eq(ptrace(PTRACE_CONT, pid, 0, sig), 0);
			ck_assert_int_eq(waitpid(pid, &status, 0), pid);
			if (!WIFSTOPPED(status))
				break;
			/* The operation's end (mode 3): the kill. */
			if (WSTOPSIG(status) == SIGSTOP) {
				kill(pid, SIGKILL);
				ck_assert_int_eq(waitpid(pid, &status, 0),
						 pid);
				break;
			}
			/* The handler's own SIGKILL is never a stop. */
			sig = WSTOPSIG(status) == SIGTRAP ? 0
							  : WSTOPSIG(status);
		}
		ck_assert_msg(md == 3 || !WIFSTOPPED(status),
			      "%s: the handler did not kill", who);
	}
	ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
		      "%s: child status %#x", who, status);

	snprintf(sd, sizeof(sd), "%s/st", dir);
	state_file(sp, sizeof(sp));
	py_ok = py_totals(sp, py, sizeof(py));
	log_opened(logp, sizeof(logp), pid);
	ck_assert_int_eq(recover_dir(sd, &o, &rs), 0);
	ck_assert_uint_eq(rs.recovered, 1);
	text = uu_slurp(logp);
	line = uu_line_with(text, "\"type\":\"exit\"");
	ck_assert_msg(line != NULL, "%s: no exit record", who);
	bytes = uu_json_u64(line, "bytes_out");
	fds_open = uu_json_u64(line, "fds_open");
	fds_closed = uu_json_u64(line, "fds_closed");
	free(line);
	snprintf(c_tot, sizeof(c_tot),
		 "%" PRIu64 " %" PRIu64 " %" PRIu64, bytes, fds_closed,
		 fds_open);
	snprintf(res, cap, "%s", c_tot);

	/* Every byte once; a stack-bound retire's connection whole or not
	 * at all. */
	if (sc->stack && bytes == sc->bytes - sc->stack)
		lost = true;
	else
		ck_assert_msg(bytes == sc->bytes,
			      "%s: bytes_out %" PRIu64 ", counted %" PRIu64,
			      who, bytes, sc->bytes);
	if (py_ok)
		ck_assert_msg(strcmp(py, c_tot) == 0,
			      "%s: the tools' reader says \"%s\", recovery "
			      "\"%s\"",
			      who, py, c_tot);

	/* Each record of a connection: which one, open or closed, its
	 * addresses. */
	for (l = text; l && *l; l = next) {
		bool closed = strncmp(l, "{\"type\":\"close\"", 15) == 0;
		const char *q = l;

		next = strchr(l, '\n');
		if (next)
			*next++ = '\0';
		if (strstr(l, "\"fds\":[") == NULL)
			continue;
		while ((q = strstr(q, "{\"fd\":")) != NULL) {
			int fd = atoi(q + 6), c, match = -1;
			char kind[16], local[64], peer[64], pair[130];
			size_t r = strlen(res);

			jstr(q, "kind", kind, sizeof(kind));
			jstr(q, "local", local, sizeof(local));
			jstr(q, "peer", peer, sizeof(peer));
			snprintf(pair, sizeof(pair), "%s|%s", local, peer);
			snprintf(res + r, cap - r, " %s:%d:%s:%s",
				 closed ? "closed" : "open", fd, kind, pair);
			/* The connection this record is of: the first of
			 * its fd and kind not yet counted (a scenario's
			 * connections of one fd and kind: the one that
			 * must be closed first). */
			for (c = 0; c < sc->ncon; c++) {
				const struct conn *cn = &sc->c[c];

				if (cn->fd != fd || strcmp(cn->kind, kind) ||
				    opens[c] + closes[c] ||
				    (!closed && cn->closed_only))
					continue;
				match = c;
				break;
			}
			ck_assert_msg(match >= 0,
				      "%s: a record of fd %d (%s) counted "
				      "twice, or of no connection: %s",
				      who, fd, kind, res);
			if (closed) {
				closes[match]++;
				n_closed++;
			} else {
				opens[match]++;
				n_open++;
			}
			for (c = 0; c < 3 && sc->c[match].addrs[c]; c++)
				if (strcmp(sc->c[match].addrs[c], pair) == 0)
					break;
			ck_assert_msg(c < 3 && sc->c[match].addrs[c],
				      "%s: fd %d (%s) recorded with "
				      "addresses \"%s\", never set so: %s",
				      who, fd, kind, pair, res);
			q += 6;
		}
	}
	free(text);
	unlink(logp);

	/* Every connection once (in a stack scenario, the retired one
	 * missing only with its bytes), and the totals those records. */
	for (i = 0; i < sc->ncon; i++) {
		const struct conn *cn = &sc->c[i];
		unsigned seen = opens[i] + closes[i];

		ck_assert_msg(seen <= 1, "%s: fd %d (%s) counted %u times: %s",
			      who, cn->fd, cn->kind, seen, res);
		if (cn->must)
			ck_assert_msg(seen == 1,
				      "%s: fd %d (%s) in no record: %s", who,
				      cn->fd, cn->kind, res);
		if (sc->stack && i == 0 && lost)
			ck_assert_msg(seen == 0,
				      "%s: bytes short by fd %d's, yet it is "
				      "recorded: %s",
				      who, cn->fd, res);
	}
	/* A connection the operation makes, once made, is the fd's; the
	 * one it replaced is then closed (or, stack, lost). */
	if ((scen == REOPEN || scen == REOPEN_STACK) && opens[1] + closes[1])
		ck_assert_msg(opens[0] == 0, "%s: both of fd 7 open: %s", who,
			      res);
	ck_assert_msg(fds_open == n_open && fds_closed == n_closed,
		      "%s: fds_open %" PRIu64 " fds_closed %" PRIu64
		      ", records of %u open and %u closed: %s",
		      who, fds_open, fds_closed, n_open, n_closed, res);
}

/* ---- the sweep ------------------------------------------------------ */

static bool env_on(const char *name)
{
	const char *v = getenv(name);

	return v && *v && strcmp(v, "0") != 0;
}

/*
 * Every STRIDE-th n from 0 to len (the end included), then every n
 * between two neighbours whose outcomes differ; each distinct outcome
 * and the ranges it covers, verbose.
 */
static void sweep(int scen)
{
	unsigned long *pc = calloc(MAX_STEPS + 1, sizeof(*pc));
	char **out;
	long len, n, a, runs = 0, ranges;
	int md;
	bool all = env_on("SOCKMETER_KILLSTEP_ALL");
	bool verbose = env_on("SOCKMETER_KILLSTEP_VERBOSE");

	if (!ptrace_works()) {
		fprintf(stderr, "check_killstep: ptrace is not permitted "
				"here: %s not tested (skipped)\n",
			scen_name[scen]);
		free(pc);
		return;
	}
	ck_assert_ptr_nonnull(pc);
	py_start();
	len = reference(scen, pc);
	ck_assert_int_gt(len, 1);
	out = calloc((size_t)len + 1, sizeof(*out));
	ck_assert_ptr_nonnull(out);
	for (md = 0; md < 4; md++) {
		long stride = all ? 1 : STRIDE;

		mode = md;
		for (n = 0; n <= len; n = n == len ? len + 1
					: (n + stride > len ? len : n + stride)) {
			out[n] = malloc(1024);
			ck_assert_ptr_nonnull(out[n]);
			kill_at(scen, md, n, len, pc, out[n], 1024);
			runs++;
		}
		/* The ranges where the outcome changes, whole. */
		for (a = 0; a < len; a += stride) {
			long b = a + stride > len ? len : a + stride;

			if (strcmp(out[a], out[b]) == 0)
				continue;
			for (n = a + 1; n < b; n++) {
				out[n] = malloc(1024);
				ck_assert_ptr_nonnull(out[n]);
				kill_at(scen, md, n, len, pc, out[n], 1024);
				runs++;
			}
		}
		ranges = 0;
		for (a = 0; a <= len; a = n) {
			for (n = a + 1; n <= len && (!out[n] ||
						     !strcmp(out[n], out[a]));
			     n++)
				;
			ranges++;
			if (verbose)
				fprintf(stderr, "  %s mode %d: %ld-%ld: %s\n",
					scen_name[scen], md, a, n - 1, out[a]);
		}
		if (verbose)
			fprintf(stderr, "%s mode %d: %ld instructions, %ld "
					"kills so far, %ld ranges\n",
				scen_name[scen], md, len, runs, ranges);
		for (n = 0; n <= len; n++) {
			free(out[n]);
			out[n] = NULL;
		}
	}
	free(out);
	free(pc);
	py_stop();
}

START_TEST(test_a_kill_at_any_instruction_of_a_close)
{
	sweep(CLOSE);
}
END_TEST

START_TEST(test_a_kill_at_any_instruction_of_a_reopen)
{
	sweep(REOPEN);
}
END_TEST

START_TEST(test_a_kill_at_any_instruction_of_set_addrs)
{
	sweep(SETADDRS);
}
END_TEST

START_TEST(test_a_kill_at_any_instruction_of_a_classify)
{
	sweep(CLASSIFY);
}
END_TEST

START_TEST(test_a_kill_at_any_instruction_of_a_reopen_to_the_stack)
{
	sweep(REOPEN_STACK);
}
END_TEST

START_TEST(test_a_kill_at_any_instruction_of_a_close_to_the_stack)
{
	sweep(CLOSE_STACK);
}
END_TEST

START_TEST(test_a_kill_at_any_instruction_of_a_reopen_of_a_stray)
{
	sweep(REOPEN_UNKNOWN);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("killstep");
	TCase *tc = tcase_create("killstep");

	tcase_set_timeout(tc, 120);
	tcase_add_unchecked_fixture(tc, uu_root_setup, uu_root_teardown);
	tcase_add_checked_fixture(tc, setup, state_teardown);
	tcase_add_test(tc, test_a_kill_at_any_instruction_of_a_close);
	tcase_add_test(tc, test_a_kill_at_any_instruction_of_a_reopen);
	tcase_add_test(tc, test_a_kill_at_any_instruction_of_set_addrs);
	tcase_add_test(tc, test_a_kill_at_any_instruction_of_a_classify);
	tcase_add_test(tc,
		       test_a_kill_at_any_instruction_of_a_reopen_to_the_stack);
	tcase_add_test(tc,
		       test_a_kill_at_any_instruction_of_a_close_to_the_stack);
	tcase_add_test(tc,
		       test_a_kill_at_any_instruction_of_a_reopen_of_a_stray);
	suite_add_tcase(s, tc);
	return uu_run(s);
}
