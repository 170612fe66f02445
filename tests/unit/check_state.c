/*
 * check_state.c - the durable state file (core/state.c): a reader that
 * knows only the header finds the counters; the ticker's double buffer;
 * a dead process's queue settled; a fork child's own file; recovery
 * writing the records of a dead process once.
 */
#include "../../core/meter.h"
#include "../../core/procns.h"
#include "../../core/quiet.h"
#include "../../core/recover.h"
#include "../../core/state.h"
#include "state_fixture.h"
#include "unit_util.h"

#include <check.h>
#include <dirent.h>
#include <fcntl.h>
#include <glob.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <sys/wait.h>
#include <unistd.h>


/* Files in DIR/st (-1 if it cannot be read); the last one's path into
 * out when out is given. */
static int files_in_dir(char *out, size_t cap)
{
	char d[300];
	struct dirent *e;
	DIR *dp;
	int n = 0;

	snprintf(d, sizeof(d), "%s/st", dir);
	dp = opendir(d);
	if (!dp)
		return -1;
	while ((e = readdir(dp)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		if (out)
			snprintf(out, cap, "%s/%s", d, e->d_name);
		n++;
	}
	closedir(dp);
	return n;
}

/* The one file in DIR/st, its path into out; false if not exactly one. */
static bool only_file(char *out, size_t cap)
{
	return files_in_dir(out, cap) == 1;
}

static int count_files(void)
{
	return files_in_dir(NULL, 0);
}

/* Whether chunk c of r is backed by the file or being backed (not
 * untried). */
static bool chunk_tried(const struct state_region *r, uint32_t c)
{
	return __atomic_load_n(&r->chunk_state[c], __ATOMIC_ACQUIRE) != 0;
}

static uint64_t u64_at(int fd, uint64_t off)
{
	uint64_t v = 0;

	ck_assert_int_eq(pread(fd, &v, sizeof(v), (off_t)off), sizeof(v));
	return v;
}

/* What slot fd_no of the state file at path holds of direction d's
 * bytes (UINT64_MAX: unreadable), and the pid its header names.  d: the
 * direction (DIR_IN, DIR_OUT). */
static uint64_t slot_bytes(const char *path, int fd_no, int d, long *pid)
{
	struct state_header h;
	uint64_t v = UINT64_MAX;
	int fd = open(path, O_RDONLY);

	*pid = -1;
	if (fd < 0)
		return v;
	if (pread(fd, &h, sizeof(h), 0) == (ssize_t)sizeof(h)) {
		*pid = h.pid;
		v = u64_at(fd, h.layout.slots_off +
				       (uint64_t)fd_no * h.layout.slot_size +
				       h.layout.slot_hot + h.layout.hot_bytes +
				       8 * (uint64_t)d);
	}
	close(fd);
	return v;
}

/* In the parent of a fork test: the child (pid) ended with status 0, and
 * the parent's slot 5 holds its 100 bytes out, in memory and in its own
 * file (path), among files state files in all. */
static void parent_kept_its_own(struct meter *m, pid_t pid, const char *path,
				int files)
{
	int status;
	long file_pid;

	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_int_eq(status, 0);
	ck_assert_uint_eq(m->tab.slots[5].c.bytes[DIR_OUT], 100);
	ck_assert_int_eq(count_files(), files);
	ck_assert_uint_eq(slot_bytes(path, 5, DIR_OUT, &file_pid), 100);
	ck_assert_int_eq(file_pid, getpid());
	meter_destroy(m);
}

/* A forked test child's end: bad has a bit per failed check, and an exit
 * status 8 bits, so the status is the number of the first failed one. */
static void exit_first_failed(int bad)
{
	_exit(bad ? __builtin_ctz((unsigned)bad) + 1 : 0);
}

/* Set up a meter in a state file, as the preload does. */
static void open_meter(struct state *st, struct meter *m, uint32_t cap)
{
	ck_assert_int_eq(state_open_meter(st, m, cap), 0);
}

START_TEST(test_a_reader_finds_the_counters_from_the_header_alone)
{
	struct state st;
	struct meter m;
	struct state_header h;
	char path[600];
	uint64_t slot, hot;
	uint8_t kind;
	int fd;

	open_meter(&st, &m, 4096);
	meter_opened(&m, 3, KIND_TCP, 1, NULL, NULL);
	meter_opened(&m, 1500, KIND_UDP, 1, NULL, NULL);
	fd_account(&m.tab.slots[3], DIR_OUT, 1234, 0,
		   (ACCT_BYTES | ACCT_CALLS));
	fd_account(&m.tab.slots[1500], DIR_IN, 99, 0,
		   (ACCT_BYTES | ACCT_CALLS));

	ck_assert(only_file(path, sizeof(path)));
	fd = open(path, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	/* Only the header's own fields are used from here on. */
	ck_assert_int_eq(pread(fd, &h, sizeof(h), 0), sizeof(h));
	ck_assert_mem_eq(h.magic, STATE_MAGIC, 8);
	ck_assert_uint_eq(h.version, STATE_VERSION);
	ck_assert_uint_eq(h.status, STATE_LIVE);
	ck_assert_int_eq(h.pid, getpid());
	ck_assert_uint_eq(h.proc_start, state_proc_start(getpid()));
	ck_assert_str_eq(h.prog, "unit");
	ck_assert_uint_eq(h.layout.slot_count, 4096);
	slot = h.layout.slots_off + 3 * h.layout.slot_size;
	hot = slot + h.layout.slot_hot;
	ck_assert_int_eq(
	    pread(fd, &kind, 1, (off_t)(slot + h.layout.slot_kind)), 1);
	ck_assert_uint_eq(kind, KIND_TCP);
	ck_assert_uint_eq(u64_at(fd, hot + h.layout.hot_bytes + 8 * DIR_OUT),
			  1234);
	slot = h.layout.slots_off + 1500 * h.layout.slot_size;
	hot = slot + h.layout.slot_hot;
	ck_assert_uint_eq(u64_at(fd, hot + h.layout.hot_bytes + 8 * DIR_IN),
			  99);
	close(fd);
	meter_destroy(&m);
}
END_TEST

START_TEST(test_ticker_totals_change_only_at_commit)
{
	struct state_ticker *t = calloc(1, sizeof(*t));
	struct fd_snapshot s = {0};

	ck_assert_ptr_nonnull(t);
	s.kind = KIND_TCP;
	s.c.bytes[DIR_OUT] = 10;
	state_ticker_begin(t);
	state_ticker_add(t, &s);
	state_ticker_add(t, &s);
	/* Not committed: a reader sees the old (empty) totals. */
	ck_assert_uint_eq(
	    state_ticker_whole(t)->closed[KIND_TCP].bytes[DIR_OUT], 0);
	state_ticker_commit(t, 2);
	ck_assert_uint_eq(
	    state_ticker_whole(t)->closed[KIND_TCP].bytes[DIR_OUT], 20);
	ck_assert_uint_eq(state_ticker_whole(t)->closed_n[KIND_TCP], 2);
	ck_assert_uint_eq(state_ticker_whole(t)->upto, 2);
	state_ticker_begin(t);
	state_ticker_add(t, &s);
	state_ticker_commit(t, 3);
	ck_assert_uint_eq(
	    state_ticker_whole(t)->closed[KIND_TCP].bytes[DIR_OUT], 30);
	free(t);
}
END_TEST

START_TEST(test_settle_skips_counted_and_unfinished_entries)
{
	struct closeq q;
	struct fd_snapshot s = {0};
	struct closeq_entry e;
	int i;

	ck_assert_int_eq(closeq_init(&q), 0);
	s.kind = KIND_TCP;
	for (i = 0; i < 5; i++) {
		s.fd = i;
		closeq_push(&q, &s, 0);
	}
	/* Entry 3 was being written when the process died. */
	q.ring[3].state = 1;
	/* The totals include entries 0 and 1. */
	closeq_settle(&q, 2);
	ck_assert(closeq_peek(&q, 0, &e));
	ck_assert_int_eq(e.s.fd, 2);
	ck_assert(closeq_peek(&q, 1, &e));
	ck_assert_int_eq(e.s.fd, 4);
	ck_assert(!closeq_peek(&q, 2, &e));
	closeq_destroy(&q);
}
END_TEST

START_TEST(test_a_fork_child_never_writes_the_parent_file)
{
	struct state st;
	struct meter m;
	char path[600];
	pid_t pid;

	open_meter(&st, &m, 4096);
	meter_opened(&m, 5, KIND_TCP, 1, NULL, NULL);
	fd_account(&m.tab.slots[5], DIR_OUT, 100, 0, (ACCT_BYTES | ACCT_CALLS));
	ck_assert(only_file(path, sizeof(path)));
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct meter_time now = {2000, 1700000001000000000ull};

		state_after_fork(&st, &cfg, "unit", (long)getpid(), now.real_ns,
				 now.mono_ns);
		closeq_attach(&m.q, st.queue, st.ring);
		m.durable = st.ticker;
		meter_after_fork(&m, (long)getpid(), now, true);
		meter_opened(&m, 5, KIND_TCP, 1, NULL, NULL);
		fd_account(&m.tab.slots[5], DIR_OUT, 7, 0,
			   (ACCT_BYTES | ACCT_CALLS));
		_exit(m.tab.slots[5].c.bytes[DIR_OUT] == 7 ? 0 : 1);
	}
	/* Two files now: ours, unchanged, and the child's. */
	parent_kept_its_own(&m, pid, path, 2);
}
END_TEST

/*
 * A fork child makes no file and re-backs none of the parent's chunks
 * until its first tracked fd (a pre-fork server's worker that exits at
 * once paid for thousands of pages when the parent's queue had gone round
 * once); then its file has its own header and the same slot offsets.
 */
/* In a fork test's child: what the preload does in a fork child (fresh
 * regions at the same addresses, the meter reset). */
static void child_after_fork(struct state *st, struct meter *m)
{
	struct meter_time now = {2000, 1700000001000000000ull};

	state_after_fork(st, &cfg, "unit", (long)getpid(), now.real_ns,
			 now.mono_ns);
	m->durable = st->ticker;
	meter_after_fork(m, (long)getpid(), now, true);
}

/* In a fork test's parent: the child (pid) passed every check. */
static void child_passed(pid_t pid, struct meter *m)
{
	int status;

	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	/* Exited (a child killed by a signal has an exit status of 0). */
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 0);
	meter_destroy(m);
}

START_TEST(test_a_fork_child_makes_its_file_at_its_first_tracked_fd)
{
	struct state st;
	struct meter m;
	struct closeq_entry e;
	uint32_t i;
	pid_t pid;

	open_meter(&st, &m, 4096);
	/* The parent's queue goes round once: every ring chunk backed. */
	memset(&e, 0, sizeof(e));
	e.s.kind = KIND_TCP;
	for (i = 0; i < CLOSEQ_CAP; i++) {
		closeq_push(&m.q, &e.s, 1);
		ck_assert(closeq_pop(&m.q, &e));
	}
	meter_opened(&m, 9, KIND_TCP, 1, NULL, NULL);
	ck_assert_int_eq(count_files(), 1);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct state_header h;
		char path[sizeof(st.path)];
		int bad = 0, fd;

		child_after_fork(&st, &m);
		for (i = 0; i < st.ring_region.nchunks; i++)
			bad |= st.ring_region.chunk_state[i] != 0;
		bad |= (count_files() != 1) << 1;
		bad |= (m.tab.slots[9].kind != KIND_UNKNOWN) << 2;
		bad |= (closeq_pending(&m.q) != 0) << 3;
		/* The first tracked fd: the child's own file. */
		meter_opened(&m, 9, KIND_TCP, 1, NULL, NULL);
		fd_account(&m.tab.slots[9], DIR_IN, 5, 0,
			   (ACCT_BYTES | ACCT_CALLS));
		bad |= (count_files() != 2) << 4;
		snprintf(path, sizeof(path), "%s", st.path);
		fd = open(path, O_RDONLY);
		bad |= (fd < 0) << 5;
		if (fd >= 0 &&
		    pread(fd, &h, sizeof(h), 0) == (ssize_t)sizeof(h)) {
			bad |= (h.pid != getpid()) << 6;
			bad |= (h.status != STATE_LIVE) << 7;
			bad |= (u64_at(fd, h.layout.slots_off +
					       9 * h.layout.slot_size +
					       h.layout.slot_hot +
					       h.layout.hot_bytes + 8 * DIR_IN) !=
				5)
			       << 8;
			close(fd);
		}
		exit_first_failed(bad);
	}
	child_passed(pid, &m);
}
END_TEST

/*
 * A fork child that opens only what is not metered (a shell's child that
 * opens a redirection's file before its exec, exim's idle children) makes
 * no state file: the "not metered" mark stays in private memory, and its
 * first tracked fd makes the file as ever.
 */
START_TEST(test_an_untracked_fd_makes_no_file_in_a_fork_child)
{
	struct state st;
	struct meter m;
	pid_t pid;

	open_meter(&st, &m, 4096);
	ck_assert_int_eq(count_files(), 1);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int bad = 0;

		child_after_fork(&st, &m);
		/* A regular file (files are not tracked by default), and a
		 * classification that says the same. */
		meter_opened(&m, 7, KIND_FILE, 1, NULL, NULL);
		bad |= (count_files() != 1) << 0;
		bad |= (fdtab_kind(&m.tab.slots[7]) != KIND_UNTRACKED) << 1;
		bad |= (fdtab_classify(&m.tab, 8, KIND_UNTRACKED, NULL, NULL) !=
			KIND_UNTRACKED)
		       << 2;
		bad |= (count_files() != 1) << 3;
		bad |= (fdtab_kind(&m.tab.slots[8]) != KIND_UNTRACKED) << 4;
		/* The first tracked fd: the child's file. */
		meter_opened(&m, 9, KIND_TCP, 1, NULL, NULL);
		bad |= (count_files() != 2) << 5;
		bad |= (fdtab_kind(&m.tab.slots[9]) != KIND_TCP) << 6;
		/* With the file: an untracked fd's slot is backed by it. */
		meter_opened(&m, 4000, KIND_FILE, 1, NULL, NULL);
		bad |= !chunk_tried(&st.slot_region,
				    (uint32_t)(4000ull * st.slot_region.elem /
					       st.slot_region.chunk))
		       << 7;
		exit_first_failed(bad);
	}
	child_passed(pid, &m);
}
END_TEST

/*
 * Whether the file is still to be made (so that, at a uid change, it may
 * be made after it, in the directory [state] dir names for the new
 * user): only in a fork child without its file yet, whatever the
 * template; the directory's fitness is state_dir_usable_by's to say.
 */
START_TEST(test_only_a_fork_child_without_a_file_wants_one)
{
	struct state st;
	struct meter m;
	pid_t pid;

	open_meter(&st, &m, 4096);
	ck_assert(!state_file_wanted(&st)); /* it has its file */
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int bad = 0;

		child_after_fork(&st, &m);
		bad |= !state_file_wanted(&st) << 0;
		/* The first tracked fd makes the file: none is wanted. */
		meter_opened(&m, 9, KIND_TCP, 1, NULL, NULL);
		bad |= (count_files() != 2) << 1;
		bad |= state_file_wanted(&st) << 2;
		exit_first_failed(bad);
	}
	child_passed(pid, &m);
}
END_TEST

/*
 * A FUSE mount is told without a request to its server, which may never
 * answer (procns_fuse_mount): from statx's cached answer and
 * /proc/self/mountinfo's type for the device.  A mount of another type
 * is none (procfs here, found in mountinfo: -1 if the line were not
 * found; as root, a tmpfs made on the state directory, which the state
 * then uses as before); a directory on its parent's file system needs no
 * look; what cannot be told is -1.  A FUSE mount itself: t_fuse_silent.
 */
START_TEST(test_a_fuse_mount_is_told_without_asking_it)
{
	struct state st;
	struct meter m;
	char p[400];

	ck_assert_int_eq(procns_fuse_mount("/"), 0);
	ck_assert_int_eq(procns_fuse_mount("/proc"), 0);
	ck_assert_int_eq(procns_fuse_mount("/proc//"), 0);
	ck_assert_int_eq(procns_fuse_mount(dir), 0);
	snprintf(p, sizeof(p), "%s/none", dir);
	ck_assert_int_eq(procns_fuse_mount(p), -1);
	ck_assert_int_eq(procns_fuse_mount("/proc/.."), -1);
	ck_assert_int_eq(mkdir(cfg.state_dir, 0700), 0);
	/* The mount in a namespace of this test's own (its forked process):
	 * seen nowhere else, gone with it whatever fails. */
	if (geteuid() != 0 || unshare(CLONE_NEWNS) != 0 ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
	    mount("sm-unit", cfg.state_dir, "tmpfs", 0, "mode=0700") != 0)
		return; /* (not root, or no mount here) */
	ck_assert_int_eq(procns_fuse_mount(cfg.state_dir), 0);
	ck_assert_int_eq(state_open_meter(&st, &m, 64), 0);
	ck_assert_int_eq(count_files(), 1);
	meter_destroy(&m);
	ck_assert_int_eq(umount2(cfg.state_dir, MNT_DETACH), 0);
}
END_TEST

/*
 * [state] dir's %u is the effective uid (check_dir wants the directory
 * owned by it), and whether a user the process is about to become could
 * use (or make) the directory its template names for that user is told
 * by the path's mode bits: a parent closed to it, a symlink, a relative
 * path or a directory of someone else's say no.
 */
START_TEST(test_the_state_directory_a_new_user_could_use)
{
	char tmpl[400], got[400], want[400], p[400];
	unsigned u = 65534;

	/* The way to dir open to all (mkdtemp makes it 0700). */
	if (uu_root()[0])
		ck_assert_int_eq(chmod(uu_root(), 0755), 0);
	ck_assert_int_eq(chmod(dir, 0755), 0);
	snprintf(tmpl, sizeof(tmpl), "%s/open/%%u", dir);
	ck_assert_int_eq(state_dir_expand(tmpl, got, sizeof(got)), 0);
	snprintf(want, sizeof(want), "%s/open/%u", dir, (unsigned)geteuid());
	ck_assert_str_eq(got, want);
	ck_assert_int_eq(state_dir_expand_uid(tmpl, u, got, sizeof(got)), 0);
	snprintf(want, sizeof(want), "%s/open/%u", dir, u);
	ck_assert_str_eq(got, want);
	/* To be made, in a directory open to all (sticky, as /dev/shm). */
	snprintf(p, sizeof(p), "%s/open", dir);
	ck_assert_int_eq(mkdir(p, 0700), 0);
	ck_assert_int_eq(chmod(p, 01777), 0);
	ck_assert(state_dir_usable_by(tmpl, u));
	ck_assert(state_dir_usable_by(tmpl, 0)); /* root: check_dir tells */
	/* Its parent searchable by its owner only. */
	ck_assert_int_eq(chmod(dir, 0700), 0);
	ck_assert(!state_dir_usable_by(tmpl, u));
	ck_assert_int_eq(chmod(dir, 0755), 0);
	/* A parent the user may not write to. */
	snprintf(tmpl, sizeof(tmpl), "%s/closed/%%u", dir);
	snprintf(p, sizeof(p), "%s/closed", dir);
	ck_assert_int_eq(mkdir(p, 0755), 0);
	ck_assert(!state_dir_usable_by(tmpl, u));
	/* Already there: a symlink, or not the user's. */
	snprintf(tmpl, sizeof(tmpl), "%s/open/%%u", dir);
	snprintf(p, sizeof(p), "%s/open/%u", dir, u);
	ck_assert_int_eq(symlink("/tmp", p), 0);
	ck_assert(!state_dir_usable_by(tmpl, u));
	ck_assert_int_eq(unlink(p), 0);
	ck_assert_int_eq(mkdir(p, 0700), 0);
	if (geteuid() == 0) {
		ck_assert(!state_dir_usable_by(tmpl, u)); /* root's */
		ck_assert_int_eq(chown(p, u, u), 0);
		ck_assert(state_dir_usable_by(tmpl, u));
		ck_assert_int_eq(chmod(p, 0770), 0); /* open to a group */
		ck_assert(!state_dir_usable_by(tmpl, u));
	}
	ck_assert(!state_dir_usable_by("rel/%u", u));
	/* Through a symlink: where it leads is not checked, so no. */
	snprintf(p, sizeof(p), "%s/link", dir);
	snprintf(want, sizeof(want), "%s/open", dir);
	ck_assert_int_eq(symlink(want, p), 0);
	snprintf(tmpl, sizeof(tmpl), "%s/link/x%%u", dir);
	ck_assert(!state_dir_usable_by(tmpl, u));
	snprintf(tmpl, sizeof(tmpl), "%s/open/x%%u", dir);
	ck_assert(state_dir_usable_by(tmpl, u));
}
END_TEST

/* Whether the mapping that holds addr has flag (two letters) among its
 * VmFlags in /proc/self/smaps; -1: no such mapping. */
static int vma_flag(const void *addr, const char *flag)
{
	char line[512];
	unsigned long lo, hi, a = (unsigned long)addr;
	int in = 0, r = -1;
	FILE *f = fopen("/proc/self/smaps", "r");

	while (f && r < 0 && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 &&
		    strchr(line, '-') < strchr(line, ' '))
			in = a >= lo && a < hi;
		else if (in && strncmp(line, "VmFlags:", 8) == 0)
			r = strstr(line, flag) != NULL;
	}
	if (f)
		fclose(f);
	return r;
}

/*
 * A fork child's regions are fresh zeroes at the same addresses (a call
 * cut short by a handler that forked still holds one), never the
 * parent's file; they are marked wiped on fork at the child's own first
 * file or fork, not in the fork (one system call less in a child that
 * only exits or execs), and its own child again starts from zeroes.
 */
START_TEST(test_a_fork_child_wipes_its_regions_at_its_first_file)
{
	struct state st;
	struct meter m;
	char path[600];
	pid_t pid;
	int status;
	long file_pid;
	struct fd_slot *old_slots;

	open_meter(&st, &m, 4096);
	meter_opened(&m, 5, KIND_TCP, 1, NULL, NULL);
	fd_account(&m.tab.slots[5], DIR_OUT, 100, 0, (ACCT_BYTES | ACCT_CALLS));
	ck_assert(only_file(path, sizeof(path)));
	old_slots = m.tab.slots;
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct meter_time now = {2000, 1700000001000000000ull};
		int bad = 0;
		pid_t g;

		state_after_fork(&st, &cfg, "unit", (long)getpid(), now.real_ns,
				 now.mono_ns);
		m.durable = st.ticker;
		meter_after_fork(&m, (long)getpid(), now, true);
		bad |= (st.slots != old_slots ||
			m.tab.slots[5].kind != KIND_UNKNOWN ||
			m.tab.slots[5].c.bytes[DIR_OUT] != 0)
		       << 0;
		bad |= (vma_flag(st.ring, " wf") != 0 || !st.wipe_due) << 1;
		meter_opened(&m, 5, KIND_TCP, 1, NULL, NULL);
		fd_account(&m.tab.slots[5], DIR_OUT, 7, 0,
			   (ACCT_BYTES | ACCT_CALLS));
		bad |= (count_files() != 2) << 2;
		/* Its numbers in its own file. */
		bad |= (slot_bytes(st.path, 5, DIR_OUT, &file_pid) != 7 ||
			file_pid != getpid())
		       << 3;
		/* Marked at its file (before the file's pages moved in):
		 * what stays private, the ring's untried chunks here. */
		bad |= (vma_flag(st.ring, " wf") != 1 || st.wipe_due) << 4;
		state_prepare_fork(&st);
		g = fork();
		if (g == 0) {
			state_after_fork(&st, &cfg, "unit", (long)getpid(),
					 now.real_ns, now.mono_ns);
			m.durable = st.ticker;
			meter_after_fork(&m, (long)getpid(), now, true);
			if (m.tab.slots[5].c.bytes[DIR_OUT] != 0)
				_exit(1);
			meter_opened(&m, 5, KIND_TCP, 1, NULL, NULL);
			fd_account(&m.tab.slots[5], DIR_OUT, 3, 0,
				   (ACCT_BYTES | ACCT_CALLS));
			_exit(m.tab.slots[5].c.bytes[DIR_OUT] == 3 ? 0 : 1);
		}
		bad |= (g < 0 || waitpid(g, &status, 0) != g || status) << 5;
		bad |= (m.tab.slots[5].c.bytes[DIR_OUT] != 7) << 6;
		exit_first_failed(bad);
	}
	/* Ours, unchanged, the child's and the grandchild's. */
	parent_kept_its_own(&m, pid, path, 3);
}
END_TEST

/* A process that tracked one TCP connection (fd 7, out bytes sent) and
 * died without a word, its log cfg's NAME.%p.log in dir and its file
 * marked status (STATE_LIVE: as made): its pid, reaped. */
static pid_t dead_process_fds(const char *name, const int *fds, int nfds,
			      uint64_t out, enum state_status status)
{
	pid_t pid;
	int ws, i;

	snprintf(cfg.log_path, sizeof(cfg.log_path), "%s/%s.%%p.log", dir,
		 name);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct state st;
		struct meter m;

		open_meter(&st, &m, 2048);
		for (i = 0; i < nfds; i++) {
			meter_opened(&m, fds[i], KIND_TCP, 1, NULL, NULL);
			fd_account(&m.tab.slots[fds[i]], DIR_OUT,
				   out + (uint64_t)i, 0,
				   (ACCT_BYTES | ACCT_CALLS));
		}
		if (status != STATE_LIVE)
			state_set_status(&st, status);
		_exit(0);
	}
	ck_assert_int_eq(waitpid(pid, &ws, 0), pid);
	ck_assert_int_eq(ws, 0);
	return pid;
}

/* log_opened - the log at path, opened (empty) as the process opens it
 * before it writes: root's recovery appends only to a log that is there
 * (or in the default directory), never makes one where a header says
 * (recover.c: root_append). */
static void log_opened(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);

	ck_assert_int_ge(fd, 0);
	close(fd);
}

/* dead_process - the same with one connection, fd 7. */
static pid_t dead_process(const char *name, uint64_t out,
			  enum state_status status)
{
	static const int seven = 7;

	return dead_process_fds(name, &seven, 1, out, status);
}

/*
 * In a user namespace %u is the uid the parent namespace knows
 * (core/procns.h): a child process makes one with a map of its own (as
 * any process may: its own uid, to one uid inside) and reads its state
 * directory's name and both directions of the map there.  Skipped where
 * user namespaces cannot be made.
 */
static int uidns_child(const char *tmpl)
{
	unsigned e = (unsigned)geteuid(), in = e == 0 ? 5 : 0, u = 12345;
	char map[64], got[400], want[400];
	int fd, n;

	if (unshare(CLONE_NEWUSER) != 0)
		return 77;
	n = snprintf(map, sizeof(map), "%u %u 1\n", in, e);
	fd = open("/proc/self/uid_map", O_WRONLY);
	if (fd < 0 || write(fd, map, (size_t)n) != n)
		return 77;
	close(fd);
	if (geteuid() != in || procns_uid_outer(in) != e ||
	    procns_uid_outer(in + 1) != in + 1 || !procns_uid_inner(e, &u) ||
	    u != in || procns_uid_inner(e + 1, &u))
		return 1;
	snprintf(want, sizeof(want), "%s/open/%u", dir, e);
	if (state_dir_expand(tmpl, got, sizeof(got)) != 0 || strcmp(got, want))
		return 2;
	return 0;
}

START_TEST(test_percent_u_is_the_uid_the_parent_namespace_knows)
{
	char tmpl[400];
	int status;
	pid_t pid;

	snprintf(tmpl, sizeof(tmpl), "%s/open/%%u", dir);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		_exit(uidns_child(tmpl));
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	if (WEXITSTATUS(status) == 77) {
		fprintf(stderr, "check_state: no user namespace here: "
				"the %%u mapping is not tested\n");
		return;
	}
	ck_assert_int_eq(WEXITSTATUS(status), 0);
}
END_TEST

/*
 * A map of 40 lines (the kernel allows 340), the process's uid on the last
 * one: read whole, as the launcher and the tools read it (a review found
 * the library stopping at 32 lines, and naming another directory than
 * theirs).  Root writes the child's map from outside; skipped elsewhere.
 */
START_TEST(test_a_long_uid_map_is_read_whole)
{
	int go[2], done[2], status, fd, i;
	char map[2048], path[64], c = 0;
	size_t len = 0;
	unsigned u = 0;
	pid_t pid;

	if (geteuid() != 0) {
		fprintf(stderr, "check_state: not root: the long uid map is "
				"not tested\n");
		return;
	}
	ck_assert_int_eq(pipe(go), 0);
	ck_assert_int_eq(pipe(done), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		c = unshare(CLONE_NEWUSER) == 0 ? 'u' : 'n';
		if (write(go[1], &c, 1) != 1 || read(done[0], &c, 1) != 1 ||
		    c != 'm')
			_exit(77);
		_exit(geteuid() == 390 && procns_uid_outer(390) == 0 &&
				      procns_uid_outer(500) == 500 &&
				      procns_uid_outer(7) == 100070 &&
				      procns_uid_inner(0, &u) && u == 390 &&
				      procns_uid_inner(100010, &u) && u == 1
			      ? 0
			      : 1);
	}
	ck_assert_int_eq(read(go[0], &c, 1), 1);
	if (c == 'u') {
		/* 39 lines of others' uids first, ours last. */
		for (i = 0; i < 39; i++)
			len += (size_t)snprintf(map + len, sizeof(map) - len,
						"%d %d 1\n", i, 100000 + i * 10);
		len += (size_t)snprintf(map + len, sizeof(map) - len,
					"390 0 1\n");
		snprintf(path, sizeof(path), "/proc/%d/uid_map", (int)pid);
		fd = open(path, O_WRONLY);
		if (fd >= 0 && write(fd, map, len) == (ssize_t)len)
			c = 'm';
		if (fd >= 0)
			close(fd);
	}
	ck_assert_int_eq(write(done[1], &c, 1), 1);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	if (WEXITSTATUS(status) == 77) {
		fprintf(stderr, "check_state: no user namespace with a long "
				"map here: not tested\n");
		return;
	}
	ck_assert_int_eq(WEXITSTATUS(status), 0);
}
END_TEST

START_TEST(test_recovery_writes_a_dead_process_records_once)
{
	struct recover_opts o = {.report = quiet};
	struct recover_stats rs;
	char logp[400], sd[300], *text, *line;
	pid_t pid;
	int status;

	/* Named after the process (%p): a log root's recovery makes
	 * (recover.c: root_append). */
	snprintf(cfg.log_path, sizeof(cfg.log_path), "%s/dead.%%p.log", dir);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct state st;
		struct meter m;

		open_meter(&st, &m, 2048);
		meter_opened(&m, 7, KIND_TCP, 1, NULL, NULL);
		fd_account(&m.tab.slots[7], DIR_OUT, 4321, 0,
			   (ACCT_BYTES | ACCT_CALLS));
		meter_opened(&m, 8, KIND_UDP, 1, NULL, NULL);
		fd_account(&m.tab.slots[8], DIR_IN, 55, 0,
			   (ACCT_BYTES | ACCT_CALLS));
		meter_closed(&m, 8, 2);
		/* Dies without a word: no exit record. */
		_exit(0);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	snprintf(logp, sizeof(logp), "%s/dead.%d.log", dir, (int)pid);
	log_opened(logp);
	snprintf(sd, sizeof(sd), "%s/st", dir);
	ck_assert_int_eq(recover_dir(sd, &o, &rs), 0);
	ck_assert_uint_eq(rs.recovered, 1);
	ck_assert_int_eq(recover_dir(sd, &o, &rs), 0);
	ck_assert_uint_eq(rs.recovered, 0);
	text = uu_slurp(logp);
	ck_assert_uint_eq(uu_count(text, "\"type\":\"exit\""), 1);
	ck_assert_uint_eq(uu_count(text, "\"type\":\"close\""), 1);
	ck_assert_uint_eq(uu_count(text, "\"end\":\"killed\""), 1);
	line = uu_line_with(text, "\"exit\"");
	ck_assert_uint_eq(uu_json_u64(line, "bytes_out"), 4321);
	ck_assert_uint_eq(uu_json_u64(line, "bytes_in"), 55);
	free(line);
	free(text);
}
END_TEST

/* Recovery walks only the slots the file holds data for (past them it is
 * holes): a connection in the table's last slot, one in a middle chunk
 * and one at 7 are all in the recovered exit record, and one in a slot
 * past every other stays in the total when it alone is high. */
START_TEST(test_recovery_reads_slots_up_to_the_last_with_data)
{
	static const int fds[][3] = {{7, 1000, 2047}, {2047}};
	static const int nfds[] = {3, 1};
	struct recover_opts o = {.report = quiet};
	struct recover_stats rs;
	char logp[400], sd[300], name[16], *text, *line;
	unsigned k;

	for (k = 0; k < 2; k++) {
		uint64_t want = 0;
		pid_t pid;
		int i;

		snprintf(name, sizeof(name), "high%u", k);
		pid = dead_process_fds(name, fds[k], nfds[k], 100, STATE_LIVE);
		for (i = 0; i < nfds[k]; i++)
			want += 100u + (unsigned)i;
		snprintf(logp, sizeof(logp), "%s/high%u.%d.log", dir, k,
			 (int)pid);
		log_opened(logp);
		snprintf(sd, sizeof(sd), "%s/st", dir);
		ck_assert_int_eq(recover_dir(sd, &o, &rs), 0);
		ck_assert_uint_eq(rs.recovered, 1);
		text = uu_slurp(logp);
		line = uu_line_with(text, "\"exit\"");
		ck_assert_uint_eq(uu_json_u64(line, "bytes_out"), want);
		ck_assert_uint_eq(uu_json_u64(line, "fds_open"),
				  (uint64_t)nfds[k]);
		free(line);
		free(text);
	}
}
END_TEST

/* Recovery reads only the ring entries its totals lack (from the
 * oldest not committed to the newest pushed), which wrap around the
 * ring's end once a process has closed more than CLOSEQ_CAP: a process
 * whose ticker wrote 8,000 close records, then closed 300 more (8,000 to
 * 8,299: the ring's last 192 entries and its first 108) and died has
 * those 300 recovered, each with its own bytes, none twice, none
 * dropped. */
START_TEST(test_recovery_reads_ring_entries_wrapped_around)
{
	enum { WRITTEN = 8000, LEFT = 300 };
	struct recover_opts o = {.report = quiet};
	struct recover_stats rs;
	char logp[400], sd[300], *text, *line, *p;
	uint64_t sum = 0, want = 0;
	unsigned closes = 0;
	pid_t pid;
	int status, i;

	snprintf(cfg.log_path, sizeof(cfg.log_path), "%s/wrap.%%p.log", dir);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct meter_time now = {2000000000ull, 1700000001000000000ull};
		struct state st;
		struct meter m;
		int n = 0;

		open_meter(&st, &m, 2048);
		for (i = 0; i < WRITTEN + LEFT; i++) {
			meter_opened(&m, 7, KIND_TCP, 1, NULL, NULL);
			fd_account(&m.tab.slots[7], DIR_OUT, 1000u + (unsigned)i,
				   0, (ACCT_BYTES | ACCT_CALLS));
			meter_closed(&m, 7, now.real_ns);
			while (i + 1 == WRITTEN &&
			       closeq_tail(&m.q) < WRITTEN && ++n < 100)
				meter_tick(&m, now);
		}
		_exit(closeq_tail(&m.q) == WRITTEN ? 0 : 1);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_int_eq(status, 0);
	snprintf(logp, sizeof(logp), "%s/wrap.%d.log", dir, (int)pid);
	log_opened(logp);
	snprintf(sd, sizeof(sd), "%s/st", dir);
	ck_assert_int_eq(recover_dir(sd, &o, &rs), 0);
	ck_assert_uint_eq(rs.recovered, 1);
	text = uu_slurp(logp);
	for (p = text; (p = strstr(p, "\"type\":\"close\"")); p++) {
		line = uu_line_with(p, "\"type\":\"close\"");
		sum += uu_json_u64(line, "bytes_out");
		closes++;
		free(line);
	}
	for (i = 0; i < WRITTEN + LEFT; i++)
		want += 1000u + (unsigned)i;
	ck_assert_uint_eq(closes, WRITTEN + LEFT);
	ck_assert_uint_eq(sum, want);
	line = uu_line_with(text, "\"type\":\"exit\"");
	ck_assert_uint_eq(uu_json_u64(line, "fds_closed"), WRITTEN + LEFT);
	ck_assert_ptr_null(strstr(line, "close_records_dropped"));
	free(line);
	free(text);
}
END_TEST

/* The totals of the one state file in directory sd as the tools read it
 * (scripts/sockmeter_log.py): "bytes_out fds_closed fds_open" into out;
 * false when there is no python3 here. */
static bool tools_state_totals(const char *sd, char *out, size_t cap)
{
	char cmd[800];
	FILE *p;
	bool got;

	snprintf(cmd, sizeof(cmd),
		 "cd scripts 2>/dev/null && command -v python3 >/dev/null && "
		 "python3 -c 'import glob, sys, sockmeter_log as s; "
		 "t = s.read_state(glob.glob(sys.argv[1] + \"/*.state\")[0])"
		 "[\"totals\"]; print(t[\"bytes_out\"], t[\"fds_closed\"], "
		 "t[\"fds_open\"])' %s",
		 sd);
	p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	got = fgets(out, (int)cap, p) != NULL;
	pclose(p);
	if (!got) {
		fprintf(stderr, "check_state: no python3 here: the tools' "
				"state reader is not tested\n");
		return false;
	}
	out[strcspn(out, "\n")] = '\0';
	return true;
}

/*
 * A close killed right after it took the slot (own_slot's
 * compare-and-swap: the slot busy), before it bound its claimed place:
 * the place takes the slot whole (a reviewer's: the connection was lost,
 * about one kill in 200 of check_state's closing loop).  One killed with
 * two counter words moved, after another thread's send counted into the
 * busy slot: each count once.  A slot left busy holding no kind (as a
 * retire leaves it once its counters moved), no close claimed: its counts
 * in the totals, as strays.  Every slot here is left KIND_BUSY, no kind
 * held, so the claim's kind decides (a busy slot that says its kind:
 * test_a_kill_while_an_address_is_noted_keeps_the_connection).
 * And a claim whose connection another thread retired and replaced (left
 * busy in its open): no record of the claim's (a reviewer's: one with the
 * new socket's peer).  Recovery and the tools' reader of a state file
 * not recovered alike, each with a stray of 5 bytes in a slot that holds
 * nothing (swept into the totals).
 */
START_TEST(test_a_kill_between_owning_and_binding_loses_nothing)
{
	struct recover_opts o = {.report = quiet};
	struct recover_stats rs;
	char logp[400], sd[300], got[64], want[64], *text, *line;
	int how;

	snprintf(cfg.log_path, sizeof(cfg.log_path), "%s/kb.%%p.log", dir);
	snprintf(sd, sizeof(sd), "%s/st", dir);
	for (how = 0; how < 4; how++) {
		enum { UNBOUND, MOVED, NO_CLAIM, REPLACED };
		/* 5 more: a stray in a slot that holds nothing. */
		uint64_t out = how == MOVED || how == REPLACED ? 1250 : 1240;
		unsigned closes = how == NO_CLAIM ? 0 : 1;
		pid_t pid = fork();
		int status;

		ck_assert_int_ge(pid, 0);
		if (pid == 0) {
			struct state st;
			struct meter m;
			struct closeq_entry *e;
			struct fd_slot *s;
			uint64_t *w, *d;

			open_meter(&st, &m, 64);
			s = &m.tab.slots[7];
			meter_opened(&m, 7, KIND_TCP, 1, NULL, NULL);
			fd_account(s, DIR_IN, 99, 0, (ACCT_BYTES | ACCT_CALLS));
			fd_account(s, DIR_OUT, 1234, 0,
				   (ACCT_BYTES | ACCT_CALLS));
			meter_opened(&m, 8, KIND_TCP, 1, NULL, NULL);
			fd_account(&m.tab.slots[8], DIR_OUT, 1, 0,
				   (ACCT_BYTES | ACCT_CALLS));
			fdtab_classify(&m.tab, 9, KIND_UNTRACKED, NULL, NULL);
			fd_account(&m.tab.slots[9], DIR_OUT, 5, 0,
				   (ACCT_BYTES | ACCT_CALLS));
			e = how == NO_CLAIM
				? NULL
				: closeq_claim(&m.q, 1700000001000000000ull, 7,
					       KIND_TCP, s->gen, false);
			if (!e && how != NO_CLAIM)
				_exit(3);
			if (how == REPLACED) {
				struct fd_snapshot gone, stale;

				/* Another thread's close, then a reopen as a
				 * UDP socket that moves 10 bytes: busy at its
				 * end. */
				if (!fdtab_retire(&m.tab, 7, &gone))
					_exit(5);
				closeq_push(&m.q, &gone, 1);
				fdtab_open(&m.tab, 7, KIND_UDP, 2, NULL, NULL,
					   &stale);
				fd_account(s, DIR_OUT, 10, 0,
					   (ACCT_BYTES | ACCT_CALLS));
			}
			s->kind = KIND_BUSY;
			if (how == MOVED) {
				/* As fdtab_retire_into leaves it after the
				 * words of bytes (in, out). */
				e->s.gen = s->gen;
				e->bound = 1;
				w = (uint64_t *)&s->c;
				d = (uint64_t *)&e->s.c;
				d[0] = w[0];
				w[0] = 0;
				d[1] = w[1];
				w[1] = 0;
				e->bound = 3;
				fd_account(s, DIR_OUT, 10, 0,
					   (ACCT_BYTES | ACCT_CALLS));
			}
			raise(SIGKILL);
			_exit(4);
		}
		ck_assert_int_eq(waitpid(pid, &status, 0), pid);
		ck_assert(WIFSIGNALED(status));
		snprintf(want, sizeof(want), "%" PRIu64 " %u 1", out, closes);
		if (tools_state_totals(sd, got, sizeof(got)))
			ck_assert_str_eq(got, want);
		snprintf(logp, sizeof(logp), "%s/kb.%d.log", dir, (int)pid);
		log_opened(logp);
		ck_assert_int_eq(recover_dir(sd, &o, &rs), 0);
		ck_assert_uint_eq(rs.recovered, 1);
		text = uu_slurp(logp);
		line = uu_line_with(text, "\"type\":\"exit\"");
		ck_assert_uint_eq(uu_json_u64(line, "bytes_out"), out);
		ck_assert_uint_eq(uu_json_u64(line, "bytes_in"), 99);
		ck_assert_uint_eq(uu_json_u64(line, "fds_closed"), closes);
		ck_assert_uint_eq(uu_json_u64(line, "fds_open"), 1);
		free(line);
		ck_assert_uint_eq(uu_count(text, "\"type\":\"close\""),
				  closes);
		free(text);
		unlink(logp);
	}
}
END_TEST

/*
 * A kill in the middle of a lifecycle call that holds a slot with a
 * connection in it: the busy slot says the kind it holds (fd_kind_held),
 * so the connection is recovered as open with all its numbers, and with
 * its addresses unless the kill caught one half-written (an odd
 * sequence).  Before, every such slot went to the strays: in the totals,
 * in no record, in neither fds_open nor fds_closed.  A close that read
 * the slot busy (waiting for that call) and claimed its place: one close
 * record, under the held kind.  An open killed after it retired the old
 * connection and took the slot for the new one: the new one open.  A
 * slot also marked by a call that gave up on it (a signal handler's, on
 * the thread holding it): open as well (a reviewer's: recovery reaped it
 * as a close stamped with the recovery's own time, and the tools' reader
 * counted it open).  Recovery and the tools' reader alike.
 */
START_TEST(test_a_kill_while_an_address_is_noted_keeps_the_connection)
{
	struct recover_opts o = {.report = quiet};
	struct recover_stats rs;
	char logp[400], sd[300], got[64], want[64], *text, *line;
	int how;

	snprintf(cfg.log_path, sizeof(cfg.log_path), "%s/kn.%%p.log", dir);
	snprintf(sd, sizeof(sd), "%s/st", dir);
	for (how = 0; how < 5; how++) {
		enum { NOTING, WRITING, CLOSE_WAITING, OPENING, GIVEN_UP };
		unsigned closes = how == CLOSE_WAITING ? 1 : 0;
		unsigned open = how == CLOSE_WAITING ? 1 : 2;
		/* OPENING: the old connection's 1234 went to the stack (an
		 * unseen close with no claim: lost with the process), 10
		 * counted on the new one since. */
		uint64_t out = how == OPENING ? 11 : 1235;
		pid_t pid = fork();
		int status;

		ck_assert_int_ge(pid, 0);
		if (pid == 0) {
			struct state st;
			struct meter m;
			struct fd_slot *s;
			struct fd_addr local = {0}, peer = {0};
			struct fd_snapshot stale;

			local.len = sizeof(local.u.in4);
			local.u.in4.sin_family = AF_INET;
			local.u.in4.sin_port = htons(4321);
			local.u.in4.sin_addr.s_addr = htonl(0x7f000001);
			peer = local;
			peer.u.in4.sin_port = htons(80);
			open_meter(&st, &m, 64);
			s = &m.tab.slots[7];
			meter_opened(&m, 7, KIND_TCP, 1700000000500000000ull,
				     &local, &peer);
			fd_account(s, DIR_OUT, 1234, 0,
				   (ACCT_BYTES | ACCT_CALLS));
			meter_opened(&m, 8, KIND_TCP, 1, NULL, NULL);
			fd_account(&m.tab.slots[8], DIR_OUT, 1, 0,
				   (ACCT_BYTES | ACCT_CALLS));
			switch (how) {
			case NOTING: /* owned, nothing written yet */
				s->kind = KIND_BUSY_FLAG | KIND_TCP;
				break;
			case GIVEN_UP: /* and a handler's close gave up */
				s->kind = KIND_BUSY_FLAG | KIND_TCP;
				s->recheck = 1;
				break;
			case WRITING: /* an address half-written */
				s->kind = KIND_BUSY_FLAG | KIND_TCP;
				s->seq++;
				s->peer.in4.sin_port = htons(81);
				break;
			case CLOSE_WAITING:
				/* closeq_retire read the slot busy (the
				 * address being noted) and claimed. */
				s->kind = KIND_BUSY_FLAG | KIND_TCP;
				if (!closeq_claim(&m.q, 1700000001000000000ull,
						  7, (enum fd_kind)s->kind,
						  s->gen, false))
					_exit(3);
				break;
			case OPENING:
				/* fdtab_open_into's stale retire done into
				 * its stack, the slot the new connection's,
				 * its identity not yet written. */
				if (!fdtab_retire(&m.tab, 7, &stale))
					_exit(5);
				s->kind = KIND_BUSY_FLAG | KIND_UDP;
				s->seq++;
				fd_account(s, DIR_OUT, 10, 0,
					   (ACCT_BYTES | ACCT_CALLS));
				break;
			}
			fd_account(s, DIR_OUT, 1, 0, (ACCT_BYTES | ACCT_CALLS));
			raise(SIGKILL);
			_exit(4);
		}
		ck_assert_int_eq(waitpid(pid, &status, 0), pid);
		ck_assert(WIFSIGNALED(status));
		snprintf(want, sizeof(want), "%" PRIu64 " %u %u", out + 1,
			 closes, open);
		if (tools_state_totals(sd, got, sizeof(got)))
			ck_assert_str_eq(got, want);
		snprintf(logp, sizeof(logp), "%s/kn.%d.log", dir, (int)pid);
		log_opened(logp);
		ck_assert_int_eq(recover_dir(sd, &o, &rs), 0);
		ck_assert_uint_eq(rs.recovered, 1);
		text = uu_slurp(logp);
		line = uu_line_with(text, "\"type\":\"exit\"");
		ck_assert_uint_eq(uu_json_u64(line, "bytes_out"), out + 1);
		ck_assert_uint_eq(uu_json_u64(line, "fds_closed"), closes);
		ck_assert_uint_eq(uu_json_u64(line, "fds_open"), open);
		free(line);
		ck_assert_uint_eq(uu_count(text, "\"type\":\"close\""),
				  closes);
		if (how == CLOSE_WAITING) {
			line = uu_line_with(text, "\"type\":\"close\"");
			ck_assert_ptr_nonnull(strstr(line, "\"kind\":\"tcp\""));
			ck_assert_uint_eq(uu_json_u64(line, "bytes_out"), 1235);
			free(line);
		}
		/* The addresses: whole, or none (never port 81). */
		ck_assert_ptr_null(strstr(text, ":81\""));
		ck_assert_uint_eq(uu_count(text, "127.0.0.1:80\""),
				  how == WRITING || how == OPENING ? 0 : 1);
		free(text);
		unlink(logp);
	}
}
END_TEST

/* The bytes of connections 0 .. n-1 of test_a_kill_inside_a_close: */
static uint64_t kill_sum(uint64_t n)
{
	uint64_t i, sum = 0;

	for (i = 0; i < n; i++)
		sum += 1000 + i % 1000;
	return sum;
}

/*
 * A process killed at any moment of its closes: recovery counts every
 * byte once.  The child opens, counts and closes connections as fast as
 * it can (the close is most of its time), says how many it counted, and
 * is killed after a random wait; every other close is unseen, retired
 * by the next open of the number.  Its recovered total is that many
 * connections' bytes, or one more (killed between a count and its
 * saying so); the connection being closed at the kill was once lost
 * (counts taken out of the slot, not yet in the ring: about one kill in
 * 60 of a busy nginx).  full: the child never drains its queue, so that
 * past its first CLOSEQ_CAP closes each one finds the ring full and goes
 * through a spill (closeq.h; before, through the stack: 28 of 460 kills
 * of a loop keeping the ring full lost part of a connection); the tools'
 * reader of the state file then says the same total as the recovery.
 */
static void kill_in_closes(bool full)
{
	/* Full: each round's recovery writes its 8,192 records. */
	const unsigned rounds = full ? 24 : 80;
	struct recover_opts o = {.report = quiet};
	struct recover_stats rs;
	char logp[400], sd[300], tools[64], *text, *line;
	uint64_t *acc = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	uint64_t least = full ? CLOSEQ_CAP + 100 : 100;
	unsigned r, lost = 0, other = 0, untold = 0;

	ck_assert_ptr_ne(acc, MAP_FAILED);
	snprintf(cfg.log_path, sizeof(cfg.log_path), "%s/kill.%%p.log", dir);
	snprintf(sd, sizeof(sd), "%s/st", dir);
	srand((unsigned)getpid());
	for (r = 0; r < rounds; r++) {
		uint64_t n, got;
		pid_t pid;
		int status, waited = 0;
		bool told;

		__atomic_store_n(acc, 0, __ATOMIC_SEQ_CST);
		pid = fork();
		ck_assert_int_ge(pid, 0);
		if (pid == 0) {
			struct meter_time now = {2000000000ull,
						 1700000001000000000ull};
			struct state st;
			struct meter m;
			uint64_t i;

			open_meter(&st, &m, 64);
			for (i = 0;; i++) {
				meter_opened(&m, 7, KIND_TCP, 1, NULL, NULL);
				fd_account(&m.tab.slots[7], DIR_OUT,
					   1000 + i % 1000, 0,
					   (ACCT_BYTES | ACCT_CALLS));
				__atomic_store_n(acc, i + 1, __ATOMIC_SEQ_CST);
				/* Every other one's close unseen: the next
				 * open retires it.  Full: a close of no
				 * system call (meter_closed asks the kernel
				 * for the socket's view and names: a kill
				 * lands mostly there, where nothing has
				 * moved yet). */
				if (i % 2 && full)
					meter_closed_gen(&m, 7,
							 m.tab.slots[7].gen,
							 now.real_ns, NULL);
				else if (i % 2)
					meter_closed(&m, 7, now.real_ns);
				if (!full && (i + 1) % 2048 == 0)
					meter_tick(&m, now);
			}
		}
		while (__atomic_load_n(acc, __ATOMIC_SEQ_CST) < least &&
		       waited++ < 20000)
			usleep(1000);
		usleep((useconds_t)(rand() % 4000));
		ck_assert_int_eq(kill(pid, SIGKILL), 0);
		ck_assert_int_eq(waitpid(pid, &status, 0), pid);
		n = __atomic_load_n(acc, __ATOMIC_SEQ_CST);
		ck_assert_uint_ge(n, least);
		told = full && tools_state_totals(sd, tools, sizeof(tools));
		snprintf(logp, sizeof(logp), "%s/kill.%d.log", dir, (int)pid);
		log_opened(logp);
		ck_assert_int_eq(recover_dir(sd, &o, &rs), 0);
		ck_assert_uint_eq(rs.recovered, 1);
		text = uu_slurp(logp);
		line = uu_line_with(text, "\"type\":\"exit\"");
		got = uu_json_u64(line, "bytes_out");
		if (full)
			/* Every close record but the ring's lost. */
			ck_assert_uint_ge(uu_json_u64(line,
						      "close_records_dropped"),
					  n - 1 - CLOSEQ_CAP);
		if (got == kill_sum(n - 1))
			lost++;
		else if (got != kill_sum(n) && got != kill_sum(n + 1)) {
			fprintf(stderr, "check_state: %" PRIu64 " counted, "
					"%" PRIu64 " bytes recovered, want %"
					PRIu64 "\n", n, got, kill_sum(n));
			other++;
		}
		if (told && strtoull(tools, NULL, 10) != got) {
			fprintf(stderr, "check_state: the tools read %s, "
					"recovery %" PRIu64 " bytes\n",
				tools, got);
			untold++;
		}
		free(line);
		free(text);
		unlink(logp);
	}
	munmap(acc, 4096);
	ck_assert_msg(lost == 0 && other == 0 && untold == 0,
		      "%u of %u kills lost the connection being closed, "
		      "%u recovered other totals, %u read otherwise by the "
		      "tools",
		      lost, rounds, other, untold);
}

START_TEST(test_a_kill_inside_a_close_loses_nothing)
{
	kill_in_closes(false);
}
END_TEST

START_TEST(test_a_kill_inside_a_close_into_a_full_ring_loses_nothing)
{
	kill_in_closes(true);
}
END_TEST

/* A ring of CLOSEQ_CAP records, none drained: the next close spills. */
static void fill_ring(struct meter *m)
{
	struct fd_snapshot s;
	int i;

	memset(&s, 0, sizeof(s));
	s.kind = KIND_TCP;
	for (i = 0; i < CLOSEQ_CAP; i++)
		closeq_push(&m->q, &s, 1);
}

static struct meter *spilling;
static struct state *spilling_st;
static unsigned claimed_at_backing;

/* A populate of the spills' room (addr: in the file's own mapping):
 * counts the spills in it already owned, their claim about to be wiped
 * by the move that follows. */
static int spill_populate(void *addr, size_t len)
{
	uint64_t from = (uint64_t)((char *)addr - spilling_st->file);
	uint32_t i;

	for (i = 0; i < CLOSEQ_SPILLS; i++) {
		uint64_t at = spilling_st->ring_region.off +
			      (uint64_t)((const char *)&spilling->q.spill[i] -
					 spilling_st->ring_region.va);

		if (at + sizeof(struct closeq_spill) > from &&
		    at < from + len &&
		    spilling->q.spill[i].e.state != CLOSEQ_FREE)
			claimed_at_backing++;
	}
	return 0;
}

/*
 * A spill's room is backed before the spill is claimed: the backing moves
 * the file's pages over the private memory the room was, and a claim made
 * first was wiped, the spill free for a second owner while the first
 * moved a connection into it (a reviewer's; 2 or 3 spills share a chunk).
 * Every spill claimed, each chunk backed once, none with a claim in it.
 */
START_TEST(test_a_spill_is_backed_before_it_is_claimed)
{
	struct state st;
	struct meter m;
	struct closeq_entry *e[CLOSEQ_SPILLS];
	uint32_t i;

	open_meter(&st, &m, 64);
	fill_ring(&m);
	spilling = &m;
	spilling_st = &st;
	claimed_at_backing = 0;
	st.populate = spill_populate;
	for (i = 0; i < CLOSEQ_SPILLS; i++) {
		e[i] = closeq_claim(&m.q, 1, 10 + (int)i, KIND_TCP, 0, false);
		ck_assert_ptr_nonnull(e[i]);
		ck_assert_uint_eq(e[i]->state, CLOSEQ_TAKING);
	}
	ck_assert_uint_eq(claimed_at_backing, 0);
	for (i = 0; i < CLOSEQ_SPILLS; i++)
		ck_assert_uint_eq(e[i]->state, CLOSEQ_TAKING);
	st.populate = NULL;
	meter_destroy(&m);
}
END_TEST

/*
 * A close into a full ring on a sandboxed thread (quiet.h: it backs
 * nothing) finds the spills' room refused: it goes the old way, into the
 * dropped totals of the file's head, and later closes use only spills in
 * the file.  Before, the refused chunk's spills took every close that
 * came to them afterwards into private memory (a reviewer's: 101,000
 * bytes in memory, 0 in the file).  What the file holds is what the
 * process counts.
 */
START_TEST(test_spills_the_file_refused_are_passed_over)
{
	struct meter_time now = {2000000000ull, 1700000001000000000ull};
	const struct state_layout *l;
	struct state st;
	struct meter m;
	struct fd_counters d;
	uint64_t in_file = 0, v, n;
	uint32_t i;
	int fd;

	open_meter(&st, &m, 64);
	fill_ring(&m);
	meter_opened(&m, 7, KIND_TCP, 1, NULL, NULL);
	fd_account(&m.tab.slots[7], DIR_OUT, 1000, 0, ACCT_BYTES | ACCT_CALLS);
	__atomic_store_n(&sm_quiet_level, SM_QUIET_PROGRAM, __ATOMIC_RELAXED);
	meter_closed_gen(&m, 7, m.tab.slots[7].gen, now.real_ns, NULL);
	__atomic_store_n(&sm_quiet_level, SM_LOUD, __ATOMIC_RELAXED);
	for (i = 0; i < 100; i++) {
		meter_opened(&m, 7, KIND_TCP, 1, NULL, NULL);
		fd_account(&m.tab.slots[7], DIR_OUT, 1000, 0,
			   ACCT_BYTES | ACCT_CALLS);
		meter_closed_gen(&m, 7, m.tab.slots[7].gen, now.real_ns, NULL);
	}
	closeq_dropped(&m.q, KIND_TCP, &d, &n);
	ck_assert_uint_eq(d.bytes[DIR_OUT], 101000);
	ck_assert_uint_eq(n, 101);
	/* The file: the head's dropped totals and each used spill's sums. */
	l = &st.hdr->layout;
	fd = open(st.path, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	in_file = st.queue->dropped_c[KIND_TCP].bytes[DIR_OUT];
	for (i = 0; i < CLOSEQ_SPILLS; i++) {
		if (!(st.queue->spills_used & (1u << i)))
			continue;
		ck_assert_int_eq(
		    pread(fd, &v, sizeof(v),
			  (off_t)(l->ring_off + l->ring_count * l->entry_size +
				  i * l->spill_size + l->spill_sum +
				  KIND_TCP * l->counters_size +
				  offsetof(struct fd_counters,
					   bytes[DIR_OUT]))),
		    (ssize_t)sizeof(v));
		in_file += v;
	}
	close(fd);
	ck_assert_uint_eq(in_file, 101000);
	/* Nothing kept out of the file, so nothing said incomplete. */
	ck_assert_uint_eq(st.ticker->incomplete, 0);
	meter_destroy(&m);
}
END_TEST

/*
 * A fork child of a confined process: its sandboxed threads cannot make
 * its file, and write into private memory; the first such write gives the
 * file up, so that none is made later (by any thread) and moved over what
 * was written.  Before, it was: ring entries vanished and the drain
 * waited for them for good (0 of 4 records taken), and a spill claimed
 * then could be taken a second time (a reviewer's, both).
 */
START_TEST(test_a_sandboxed_childs_first_write_gives_its_file_up)
{
	struct state st;
	struct meter m;
	pid_t pid;

	open_meter(&st, &m, 64);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct fd_snapshot s;
		struct closeq_entry e;
		int bad = 0, i, popped = 0;

		child_after_fork(&st, &m);
		memset(&s, 0, sizeof(s));
		s.kind = KIND_TCP;
		s.c.bytes[DIR_OUT] = 100;
		__atomic_store_n(&sm_quiet_level, SM_QUIET_PROGRAM,
				 __ATOMIC_RELAXED);
		for (i = 0; i < 3; i++)
			closeq_push(&m.q, &s, 1);
		bad |= st.durable << 0;
		__atomic_store_n(&sm_quiet_level, SM_LOUD, __ATOMIC_RELAXED);
		/* Given up: not made now, nothing moved over the entries. */
		bad |= state_make_file(&st) << 1;
		closeq_push(&m.q, &s, 1);
		while (closeq_pop(&m.q, &e)) {
			popped++;
			bad |= (e.s.c.bytes[DIR_OUT] != 100) << 2;
		}
		bad |= (popped != 4) << 3;
		exit_first_failed(bad);
	}
	child_passed(pid, &m);
}
END_TEST

/* The same child's spills: none is used while its file is to come; once
 * a sandboxed thread has given the file up, they serve in private memory
 * (nothing will move over them), each claim its own. */
START_TEST(test_a_sandboxed_childs_spills_keep_their_claims)
{
	struct state st;
	struct meter m;
	pid_t pid;

	open_meter(&st, &m, 64);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct closeq_entry *a, *b;
		int bad = 0;

		child_after_fork(&st, &m);
		bad |= state_kept_ring(&st, CLOSEQ_CAP) << 0;
		__atomic_store_n(&sm_quiet_level, SM_QUIET_PROGRAM,
				 __ATOMIC_RELAXED);
		fill_ring(&m);
		a = closeq_claim(&m.q, 1, 10, KIND_TCP, 0, false);
		bad |= (!a || st.durable) << 1;
		__atomic_store_n(&sm_quiet_level, SM_LOUD, __ATOMIC_RELAXED);
		bad |= state_make_file(&st) << 2;
		b = closeq_claim(&m.q, 1, 11, KIND_TCP, 0, false);
		bad |= (!b || a == b || a->state != CLOSEQ_TAKING ||
			a->s.fd != 10)
		       << 3;
		exit_first_failed(bad);
	}
	child_passed(pid, &m);
}
END_TEST

/* The ticker's scan calls between() before each file, after reading it
 * and after making its records (it writes its own waiting close records
 * there: t_churn_while_recovering), and a stop word set meanwhile ends the
 * scan before the next file; the rest is left for the next scan. */
struct between_count {
	unsigned calls;
	uint32_t stop;
};

static void count_between(void *ctx)
{
	struct between_count *b = ctx;

	if (++b->calls == 1)
		__atomic_store_n(&b->stop, 1, __ATOMIC_RELEASE);
}

START_TEST(test_recovery_calls_between_before_each_file)
{
	struct between_count b = {0, 0};
	struct recover_opts o = {.report = quiet,
				 .stop = &b.stop,
				 .between = count_between,
				 .between_ctx = &b};
	struct recover_stats rs;
	char sd[300];

	dead_process("between", 11, STATE_LIVE);
	dead_process("between", 22, STATE_LIVE);
	dead_process("between", 33, STATE_LIVE);
	snprintf(sd, sizeof(sd), "%s/st", dir);
	/* Stopped at the first call, before the first file: that file is
	 * recovered (its three calls: before, read, records), no other. */
	ck_assert_int_eq(recover_dir(sd, &o, &rs), 0);
	ck_assert_uint_eq(rs.recovered, 1);
	ck_assert_uint_eq(b.calls, 3);
	o.stop = NULL;
	ck_assert_int_eq(recover_dir(sd, &o, &rs), 0);
	ck_assert_uint_eq(rs.recovered, 2);
	ck_assert_uint_eq(b.calls, 9);
	o.between = NULL;
	ck_assert_int_eq(recover_dir(sd, &o, &rs), 0);
	ck_assert_uint_eq(rs.recovered, 0);
}
END_TEST

/* A header whose log is a FIFO (any file that blocks an open, or whose
 * open does something: a FIFO planted at the path, a tty, a device):
 * root's recovery neither waits for a writer, as an open for reading
 * did, nor opens it at all (inotify sees no open), nor writes into it;
 * the records go beside the state file.  (A user's recovery writes
 * through the sink, as the process did: its own business.) */
START_TEST(test_recovery_never_waits_on_a_fifo_log)
{
	struct recover_opts o = {.report = quiet};
	struct recover_stats rs;
	char logp[400], sd[300], *text;
	char ev[4096] __attribute__((aligned(8)));
	glob_t g;
	pid_t pid;
	int in;

	if (geteuid() != 0)
		return; /* root's rules (recover.c: root_append) */

	/* Killed while writing its final record: recovery first reads
	 * the log for it (log_has_final). */
	pid = dead_process("fifo", 4321, STATE_ENDING);
	snprintf(logp, sizeof(logp), "%s/fifo.%d.log", dir, (int)pid);
	ck_assert_int_eq(mkfifo(logp, 0600), 0);
	in = inotify_init1(IN_NONBLOCK);
	ck_assert_int_ge(in, 0);
	ck_assert_int_ge(inotify_add_watch(in, logp, IN_OPEN), 0);
	snprintf(sd, sizeof(sd), "%s/st", dir);
	alarm(5); /* a wait would be for good: fail instead */
	ck_assert_int_eq(recover_dir(sd, &o, &rs), 0);
	alarm(0);
	ck_assert_uint_eq(rs.recovered, 1);
	ck_assert_int_lt(read(in, ev, sizeof(ev)), 0); /* never opened */
	close(in);
	snprintf(logp, sizeof(logp), "%s/*.recovered.log", sd);
	ck_assert_int_eq(glob(logp, 0, NULL, &g), 0);
	ck_assert_uint_eq(g.gl_pathc, 1);
	text = uu_slurp(g.gl_pathv[0]);
	globfree(&g);
	ck_assert_uint_eq(uu_count(text, "\"type\":\"exit\""), 1);
	free(text);
}
END_TEST

/* The automatic scan (the ticker's) recovers only in a state directory
 * the library would make files in: ours and closed to others. */
START_TEST(test_automatic_recovery_only_in_a_closed_directory)
{
	char logp[400], sd[300];
	struct stat sb;
	pid_t pid;

	pid = dead_process("auto", 99, STATE_LIVE);
	snprintf(logp, sizeof(logp), "%s/auto.%d.log", dir, (int)pid);
	log_opened(logp);
	snprintf(sd, sizeof(sd), "%s/st", dir);
	ck_assert_int_eq(chmod(sd, 0777), 0);
	recover_auto(&cfg, NULL, NULL, NULL, NULL);
	ck_assert_int_eq(stat(logp, &sb), 0);
	ck_assert_int_eq(sb.st_size, 0);
	ck_assert_int_eq(chmod(sd, 0700), 0);
	recover_auto(&cfg, NULL, NULL, NULL, NULL);
	ck_assert_int_eq(stat(logp, &sb), 0);
	ck_assert_int_gt(sb.st_size, 0);
}
END_TEST

/* Before root becomes another user its file is marked (0400); where the
 * mark cannot be made and the file not removed either, the caller hears
 * of it. */
START_TEST(test_a_file_is_marked_before_a_change_of_user)
{
	struct state st;
	struct meter m;
	struct stat sb;
	char bad[300];

	if (geteuid() != 0)
		return; /* the mark is root's (a user's file stays its own) */
	open_meter(&st, &m, 2048);
	ck_assert_int_eq(state_mark_exposed(&st), 0);
	ck_assert_int_eq(stat(st.path, &sb), 0);
	ck_assert_uint_eq(sb.st_mode & 0777, 0400);
	/* The log it names now, kept where the new user cannot write
	 * (root's recovery writes there: recover.c). */
	{
		char kept[sizeof(st.hdr->log_path)];
		ssize_t n = getxattr(st.path, STATE_XATTR_LOG, kept,
				     sizeof(kept) - 1);

		if (n < 0 && errno == EOPNOTSUPP)
			n = getxattr(st.path, STATE_XATTR_LOG_USER, kept,
				     sizeof(kept) - 1);
		if (n >= 0 || errno != EOPNOTSUPP) { /* a file system has */
			ck_assert_int_gt(n, 0);
			kept[n] = '\0';
			ck_assert_str_eq(kept, st.hdr->log_path);
		}
	}
	/* Once: a second call does nothing, even with the file gone. */
	ck_assert_int_eq(unlink(st.path), 0);
	ck_assert_int_eq(state_mark_exposed(&st), 0);
	st.exposed = false;
	/* Not found: removed, or hidden from this process only (a mount
	 * namespace): said. */
	ck_assert_int_eq(state_mark_exposed(&st), -ENOENT);
	st.exposed = false;
	/* Unreachable (a file where a directory should be): said. */
	snprintf(bad, sizeof(bad), "%s/plain", dir);
	ck_assert_int_ge(creat(bad, 0600), 0);
	snprintf(st.path, sizeof(st.path), "%s/plain/state", dir);
	ck_assert_int_eq(state_mark_exposed(&st), -ENOTDIR);
	meter_destroy(&m);
}
END_TEST

/* The mode cannot be changed (a filter forbids fchmodat): the file is
 * removed instead, and nothing is said. */
START_TEST(test_a_file_that_cannot_be_marked_is_removed)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_fchmodat, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {sizeof(f) / sizeof(f[0]), f};
	struct state st;
	struct meter m;
	struct stat sb;
	pid_t pid;
	int status;

	if (geteuid() != 0)
		return; /* the mark is root's, or a CAP_SETUID user's */
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int bad = 0;

		open_meter(&st, &m, 2048);
		bad |= (stat(st.path, &sb) != 0) << 0;
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
		    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0)
			_exit(77);
		bad |= (state_mark_exposed(&st) != 0) << 1;
		bad |= (stat(st.path, &sb) == 0) << 2; /* removed */
		exit_first_failed(bad);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	if (WEXITSTATUS(status) == 77)
		return; /* no seccomp here */
	ck_assert_int_eq(WEXITSTATUS(status), 0);
}
END_TEST

/* A process that exited but could not write its exit record (no file
 * could grow) marked its file so: recovery writes the record as an exit,
 * not as a death. */
START_TEST(test_recovery_marks_an_unwritten_exit)
{
	struct recover_opts o = {.report = quiet};
	struct recover_stats rs;
	char logp[400], sd[300], *text, *line;
	pid_t pid;

	/* Named after the process (%p): a log root's recovery makes
	 * (recover.c: root_append). */
	pid = dead_process("unwritten", 777, STATE_UNWRITTEN);
	snprintf(logp, sizeof(logp), "%s/unwritten.%d.log", dir, (int)pid);
	log_opened(logp);
	snprintf(sd, sizeof(sd), "%s/st", dir);
	ck_assert_int_eq(recover_dir(sd, &o, &rs), 0);
	ck_assert_uint_eq(rs.recovered, 1);
	text = uu_slurp(logp);
	ck_assert_uint_eq(uu_count(text, "\"type\":\"exit\""), 1);
	ck_assert_uint_eq(uu_count(text, "\"end\":\"exit-recovered\""), 1);
	ck_assert_uint_eq(uu_count(text, "killed"), 0);
	line = uu_line_with(text, "\"exit\"");
	ck_assert_uint_eq(uu_json_u64(line, "bytes_out"), 777);
	free(line);
	free(text);
}
END_TEST

/*
 * Without a state file ([state] enabled = false, or no usable directory)
 * the reservation is private memory that a fork child would only zero
 * (state_after_fork): it is not copied into the child at all.  It was, and
 * every fork of a busy process copied the page tables of megabytes of
 * ring and slots and left the parent a copy fault on each page it wrote
 * next: forks/s under churn fell to half.
 */
START_TEST(test_without_a_file_a_fork_child_gets_none_of_the_memory)
{
	struct state st;
	uint64_t *slot_word, *ring_word;
	pid_t pid;
	int status;

	cfg.state_enabled = false;
	ck_assert_int_eq(state_open(&st, &cfg, "unit", (long)getpid(), 4096,
				    1, 1, "x.log", quiet, NULL),
			 0);
	ck_assert(!st.durable);
	slot_word = (uint64_t *)&st.slots[100];
	ring_word = (uint64_t *)&st.ring[CLOSEQ_CAP - 1];
	*slot_word = 0x1122334455667788ull;
	*ring_word = 0x8877665544332211ull;
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		/* Before any handler: what fork itself gave the child. */
		_exit(*slot_word == 0 && *ring_word == 0 ? 0 : 1);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_int_eq(status, 0);
	ck_assert_uint_eq(*slot_word, 0x1122334455667788ull);
	ck_assert_uint_eq(*ring_word, 0x8877665544332211ull);
	ck_assert_int_eq(count_files(), -1);
}
END_TEST

/* Bytes of the file a region has backed (chunks no longer untried). */
static uint64_t region_backed(const struct state_region *r)
{
	uint64_t n = 0;
	uint32_t c;

	for (c = 0; c < r->nchunks; c++)
		n += __atomic_load_n(&r->chunk_state[c], __ATOMIC_ACQUIRE) != 0;
	return n * r->chunk;
}

/* True when /proc/self/maps shows a mapping that overlaps [lo, hi) or
 * (name not NULL) one of the file name. */
static bool mapped(uintptr_t lo, uintptr_t hi, const char *name)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[1024];
	bool found = false;

	ck_assert_ptr_nonnull(f);
	while (!found && fgets(line, sizeof(line), f)) {
		unsigned long a, b;

		if (sscanf(line, "%lx-%lx", &a, &b) == 2 && a < hi && b > lo)
			found = true;
		if (name && strstr(line, name))
			found = true;
	}
	fclose(f);
	return found;
}

/*
 * A start-up that fails after state_open (meter_init_at cannot map its
 * tables under a `ulimit -v`) runs as pass-through: state_discard must
 * give every mapping back, the reservation and the file's, and remove the
 * file.  It only removed the file: 19 MB stayed reserved, and a python
 * under `ulimit -v 50000` that runs without the preload failed with it.
 */
START_TEST(test_a_discarded_state_lets_go_of_every_mapping)
{
	struct state st;
	struct meter m;
	struct state_layout l;
	char path[sizeof(st.path)];
	uintptr_t head;
	int files;

	open_meter(&st, &m, 4096);
	files = count_files();
	ck_assert_int_ge(files, 1);
	meter_opened(&m, 3, KIND_TCP, 1, NULL, NULL);
	fd_account(&m.tab.slots[3], DIR_OUT, 100, 0,
		   (ACCT_BYTES | ACCT_CALLS));
	meter_closed(&m, 3, 2);
	/* Chunks of both regions are the file's now, at the reservation. */
	ck_assert_uint_gt(region_backed(&st.slot_region), 0);
	ck_assert_uint_gt(region_backed(&st.ring_region), 0);
	snprintf(path, sizeof(path), "%s", st.path);
	head = (uintptr_t)st.head;
	state_layout_fill(&l, 4096);
	ck_assert(mapped(head, head + l.file_size, NULL));
	ck_assert(mapped(0, 0, strrchr(path, '/') + 1));
	meter_destroy(&m);
	state_discard(&st);
	ck_assert_int_eq(count_files(), files - 1);
	ck_assert_ptr_null(st.head);
	ck_assert(!mapped(head, head + l.file_size, NULL));
	ck_assert(!mapped(0, 0, strrchr(path, '/') + 1));
}
END_TEST

/*
 * A process with one connection (a fork-per-connection server's child)
 * backs little of its file: every backed page is one the kernel clears,
 * about 4 us each here.  The head, one chunk of slots and one of the
 * ring: 60 KiB, where chunks of whole slots made it 232 KiB.
 */
START_TEST(test_one_connection_backs_under_64_kib)
{
	struct state st;
	struct meter m;
	uint64_t head_bytes, total;

	open_meter(&st, &m, 4096);
	meter_opened(&m, 3, KIND_TCP, 1, NULL, NULL);
	fd_account(&m.tab.slots[3], DIR_OUT, 100, 0,
		   (ACCT_BYTES | ACCT_CALLS));
	meter_closed(&m, 3, 2);
	head_bytes = st.ring_region.off;
	total = head_bytes + region_backed(&st.slot_region) +
		region_backed(&st.ring_region);
	ck_assert_uint_gt(region_backed(&st.slot_region), 0);
	ck_assert_uint_gt(region_backed(&st.ring_region), 0);
	ck_assert_uint_le(total, 64 * 1024);
	meter_destroy(&m);
}
END_TEST

static unsigned populates;
static uint64_t refuse_over; /* populates of more bytes fail (0: none) */

static int count_populate(void *addr, size_t len)
{
	(void)addr;
	populates++;
	return refuse_over && len > refuse_over ? -ENOSPC : 0;
}

/* n pushes, each popped at once (the ticker keeping up). */
static void push_n(struct meter *m, uint32_t n)
{
	struct closeq_entry e;
	uint32_t i;

	memset(&e, 0, sizeof(e));
	e.s.kind = KIND_TCP;
	for (i = 0; i < n; i++) {
		closeq_push(&m->q, &e.s, 1);
		ck_assert(closeq_pop(&m->q, &e));
	}
}

/* A meter in a state file (open_meter): its ring, and in *per the
 * entries a chunk of it holds. */
static struct state_region *open_ring(struct state *st, struct meter *m,
				      uint32_t *per)
{
	struct state_region *r = &st->ring_region;

	open_meter(st, m, 4096);
	*per = (uint32_t)(r->chunk / r->elem);
	ck_assert_uint_ge(*per, 2);
	return r;
}

/* Chunks [from, to] of r, none tried. */
static void untried(const struct state_region *r, uint32_t from, uint32_t to)
{
	for (; from <= to; from++)
		ck_assert(!chunk_tried(r, from));
}

/*
 * The ring is written in order, and from its second chunk on a push that
 * enters chunk c backs chunks after it, as many as it has used (up to 4),
 * in one call: the closing threads of a server do not all wait for the one
 * that backs a new chunk, and a busy server backs its first lap in about
 * 130 calls (512, one a chunk, before).  The first chunk alone is backed
 * while a process has closed fewer connections than it holds.
 */
START_TEST(test_the_ring_backs_ahead_as_far_as_it_was_used)
{
	struct state st;
	struct meter m;
	const struct state_region *r;
	uint32_t per, c;

	r = open_ring(&st, &m, &per);
	st.populate = count_populate;
	populates = 0;
	refuse_over = 0;
	ck_assert_uint_ge(r->nchunks, 64);
	/* Its last chunk, backed whole, stays out of the slots (the
	 * spills' room once made it a part chunk that reached them). */
	ck_assert_uint_le(r->off + (uint64_t)r->nchunks * r->chunk,
			  st.slot_region.off);
	push_n(&m, per);
	ck_assert(chunk_tried(r, 0));
	ck_assert(!chunk_tried(r, 1));
	/* The first entry of chunk 1: chunks 1 and 2 backed, not 3. */
	push_n(&m, 1);
	ck_assert(chunk_tried(r, 1));
	ck_assert(chunk_tried(r, 2));
	ck_assert(!chunk_tried(r, 3));
	/* Through chunk 1: nothing more until chunk 2 is entered, which
	 * backs 3 and 4 in one call. */
	push_n(&m, per - 1);
	ck_assert(!chunk_tried(r, 3));
	ck_assert_uint_eq(populates, 3);
	push_n(&m, 1);
	ck_assert(chunk_tried(r, 4));
	ck_assert(!chunk_tried(r, 5));
	ck_assert_uint_eq(populates, 4);
	/* Chunk 3 finds 4 backed: nothing; chunk 4 backs 5 to 8. */
	push_n(&m, 2 * per);
	ck_assert(chunk_tried(r, 8));
	ck_assert(!chunk_tried(r, 9));
	ck_assert_uint_eq(populates, 5);
	/* Then 4 at a time: chunk 8 backs 9 to 12. */
	push_n(&m, 4 * per);
	ck_assert(chunk_tried(r, 12));
	ck_assert(!chunk_tried(r, 13));
	ck_assert_uint_eq(populates, 6);
	/* A whole lap: every chunk the file's, in few calls (those of the
	 * ring: the spills after it are backed when used). */
	push_n(&m, CLOSEQ_CAP - 8 * per - 1);
	for (c = 0; c < CLOSEQ_CAP / per; c++)
		ck_assert_uint_eq(r->chunk_state[c], CHUNK_FILE);
	/* And not past them: the spills' room is backed when a spill is
	 * used, never ahead (a reviewer's). */
	untried(r, CLOSEQ_CAP / per, r->nchunks - 1);
	ck_assert_uint_le(populates, 3 + (r->nchunks + 3) / 4);
	st.populate = NULL;
	meter_destroy(&m);
}
END_TEST

struct ring_call {
	struct state *st;
	uint32_t index;
	int done; /* atomic */
};

static void *ring_call_run(void *p)
{
	struct ring_call *t = p;

	state_back_ring(t->st, t->index);
	__atomic_store_n(&t->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Whether t's call ended within about ms milliseconds. */
static bool ring_call_ends(struct ring_call *t, int ms)
{
	while (!__atomic_load_n(&t->done, __ATOMIC_ACQUIRE) && ms-- > 0)
		usleep(1000);
	return __atomic_load_n(&t->done, __ATOMIC_ACQUIRE);
}

/*
 * Backing ahead never waits: a chunk another thread holds (two closing
 * threads prepare the same place, closeq_prepare) is its to finish.
 */
START_TEST(test_backing_ahead_never_waits_for_another_thread)
{
	struct state st;
	struct meter m;
	struct state_region *r;
	struct ring_call t;
	pthread_t th;
	uint32_t per;
	bool ended;

	r = open_ring(&st, &m, &per);
	push_n(&m, 4 * per);
	ck_assert(chunk_tried(r, 4));
	ck_assert(!chunk_tried(r, 5));
	/* Another thread is backing chunk 5. */
	__atomic_store_n(&r->chunk_state[5], CHUNK_BACKING, __ATOMIC_RELEASE);
	t.st = &st;
	t.index = 4 * per; /* chunk 4's first place: ahead from 5 */
	t.done = 0;
	ck_assert_int_eq(pthread_create(&th, NULL, ring_call_run, &t), 0);
	ended = ring_call_ends(&t, 2000);
	__atomic_store_n(&r->chunk_state[5], CHUNK_UNTRIED, __ATOMIC_RELEASE);
	ck_assert(ended);
	pthread_join(th, NULL);
	ck_assert(!chunk_tried(r, 6));
	meter_destroy(&m);
}
END_TEST

/* A populate that holds a run of chunks backing until released. */
static int hold_in, hold_release; /* atomic */

static int holding_populate(void *addr, size_t len)
{
	(void)addr;
	if (len > 16384) {
		__atomic_store_n(&hold_in, 1, __ATOMIC_RELEASE);
		while (!__atomic_load_n(&hold_release, __ATOMIC_ACQUIRE))
			usleep(1000);
	}
	return 0;
}

/* Start a run backing ahead from chunk 5 (5 to 8) in *t, held there. */
static void start_held_run(struct state *st, struct ring_call *t,
			   pthread_t *th)
{
	uint32_t per =
	    (uint32_t)(st->ring_region.chunk / st->ring_region.elem);

	st->populate = holding_populate;
	__atomic_store_n(&hold_in, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&hold_release, 0, __ATOMIC_RELEASE);
	t->st = st;
	t->index = 4 * per;
	t->done = 0;
	ck_assert_int_eq(pthread_create(th, NULL, ring_call_run, t), 0);
	while (!__atomic_load_n(&hold_in, __ATOMIC_ACQUIRE))
		usleep(100);
	ck_assert_uint_eq(st->ring_region.chunk_state[6], CHUNK_BACKING);
}

/* What pread finds at offset off of the file at path. */
static uint64_t file_u64(const char *path, uint64_t off)
{
	uint64_t got = 0;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return 0;
	if (pread(fd, &got, sizeof(got), (off_t)off) != sizeof(got))
		got = 0;
	close(fd);
	return got;
}

/*
 * A write whose chunk another thread is backing ahead waits for it (it
 * is not written into memory about to be replaced), and lands in the
 * file.
 */
START_TEST(test_a_write_waits_for_a_run_backing_its_chunk)
{
	struct state st;
	struct meter m;
	struct state_region *r;
	struct ring_call ahead, writer;
	pthread_t a, w;
	uint32_t per;
	const uint64_t mark = 0x1122334455667788ull;
	uint64_t off;

	r = open_ring(&st, &m, &per);
	push_n(&m, 4 * per);
	start_held_run(&st, &ahead, &a);
	writer.st = &st;
	writer.index = 6 * per + 1; /* inside chunk 6 */
	writer.done = 0;
	ck_assert_int_eq(pthread_create(&w, NULL, ring_call_run, &writer), 0);
	ck_assert(!ring_call_ends(&writer, 50));
	__atomic_store_n(&hold_release, 1, __ATOMIC_RELEASE);
	pthread_join(a, NULL);
	pthread_join(w, NULL);
	st.populate = NULL;
	ck_assert_uint_eq(r->chunk_state[6], CHUNK_FILE);
	off = (uint64_t)writer.index * r->elem;
	memcpy((char *)st.ring + off, &mark, sizeof(mark));
	ck_assert_uint_eq(file_u64(st.path, r->off + off), mark);
	meter_destroy(&m);
}
END_TEST

/*
 * A fork while another thread of the parent is backing a run ahead: the
 * child finds every chunk untried (the run's too) and backs what it
 * writes with its own file.
 */
START_TEST(test_a_fork_child_of_a_run_in_progress_backs_its_own)
{
	struct state st;
	struct meter m;
	struct state_region *r;
	struct ring_call ahead;
	pthread_t a;
	uint32_t per;
	pid_t pid;

	r = open_ring(&st, &m, &per);
	push_n(&m, 4 * per);
	start_held_run(&st, &ahead, &a);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		const uint64_t mark = 0xabcdefull;
		uint64_t off = (uint64_t)(6 * per + 1) * r->elem;
		int bad = 0;
		uint32_t c;

		st.populate = NULL;
		child_after_fork(&st, &m);
		for (c = 0; c < r->nchunks; c++)
			bad |= r->chunk_state[c] != CHUNK_UNTRIED;
		bad |= (r->tried_hi != 0) << 1;
		meter_opened(&m, 9, KIND_TCP, 1, NULL, NULL);
		state_back_ring(&st, 6 * per + 1);
		memcpy((char *)st.ring + off, &mark, sizeof(mark));
		bad |= (r->chunk_state[6] != CHUNK_FILE) << 2;
		bad |= (file_u64(st.path, r->off + off) != mark) << 3;
		exit_first_failed(bad);
	}
	__atomic_store_n(&hold_release, 1, __ATOMIC_RELEASE);
	pthread_join(a, NULL);
	st.populate = NULL;
	child_passed(pid, &m);
}
END_TEST

/*
 * A run the file system cannot take at once (almost full) is let go
 * untried, nothing said: each chunk is then backed alone by the write that
 * needs it, with what room there is.
 */
START_TEST(test_a_run_the_disk_refuses_is_left_to_the_writes)
{
	struct state st;
	struct meter m;
	const struct state_region *r;
	uint32_t per, c;

	r = open_ring(&st, &m, &per);
	st.populate = count_populate;
	populates = 0;
	refuse_over = r->chunk;
	/* Chunk 4 entered: 5 to 8 refused together, untried again. */
	push_n(&m, 4 * per + 1);
	untried(r, 5, 8);
	/* Through chunk 8: each backed by its first write. */
	push_n(&m, 4 * per);
	for (c = 0; c <= 8; c++)
		ck_assert_uint_eq(r->chunk_state[c], CHUNK_FILE);
	ck_assert_uint_eq(st.incomplete, 0);
	ck_assert_uint_eq(st.ticker->incomplete, 0);
	st.populate = NULL;
	refuse_over = 0;
	meter_destroy(&m);
}
END_TEST

/* A sandboxed thread (quiet.h), whose populate is refused, leaves the
 * chunks ahead untried, not private for good: a loud thread backs them. */
START_TEST(test_a_quiet_thread_backs_nothing_ahead)
{
	struct state st;
	struct meter m;
	const struct state_region *r;
	uint32_t per, c;

	r = open_ring(&st, &m, &per);
	push_n(&m, 4 * per);
	__atomic_store_n(&sm_quiet_level, SM_QUIET_PROGRAM, __ATOMIC_RELAXED);
	push_n(&m, 1); /* chunk 4 entered */
	__atomic_store_n(&sm_quiet_level, SM_LOUD, __ATOMIC_RELAXED);
	untried(r, 5, 8);
	/* Loud again: the next chunk entered backs them. */
	push_n(&m, per);
	for (c = 5; c <= 8; c++)
		ck_assert_uint_eq(r->chunk_state[c], CHUNK_FILE);
	ck_assert_uint_eq(st.ticker->incomplete, 0);
	meter_destroy(&m);
}
END_TEST

/*
 * closeq_prepare, before a close retires its slot, backs the place the
 * push will take, and at the last place of a chunk (the first chunk's
 * too) the next chunk, where the push lands when another takes this
 * place first: no system call between the retire and the push.
 */
START_TEST(test_prepare_backs_the_place_and_past_a_chunks_end)
{
	struct state st;
	struct meter m;
	struct closeq_entry e;
	uint32_t per, i;

	open_meter(&st, &m, 4096);
	per = (uint32_t)(st.ring_region.chunk / st.ring_region.elem);
	ck_assert_uint_ge(per, 2);
	ck_assert(!chunk_tried(&st.ring_region, 0));
	closeq_prepare(&m.q);
	ck_assert(chunk_tried(&st.ring_region, 0));
	ck_assert(!chunk_tried(&st.ring_region, 1));
	memset(&e, 0, sizeof(e));
	e.s.kind = KIND_TCP;
	for (i = 0; i + 1 < per; i++) {
		closeq_prepare(&m.q);
		closeq_push(&m.q, &e.s, 1);
		ck_assert(closeq_pop(&m.q, &e));
	}
	ck_assert(!chunk_tried(&st.ring_region, 1));
	/* The next push takes the last place of chunk 0. */
	closeq_prepare(&m.q);
	ck_assert(chunk_tried(&st.ring_region, 1));
	ck_assert(!chunk_tried(&st.ring_region, 2));
	meter_destroy(&m);
}
END_TEST

/*
 * Chunks are whole pages and slots are not (560 bytes): a slot that
 * straddles two chunks has both backed, so that what is written at its
 * end (the peer's address) is in the file, not in private memory.
 */
START_TEST(test_a_slot_across_two_chunks_is_in_the_file_whole)
{
	struct state st;
	struct meter m;
	const struct state_region *r;
	char path[600];
	uint64_t i, first, last, off, got = 0;
	const uint64_t mark = 0x5a5a5a5a5a5a5a5aull;
	int fd;

	open_meter(&st, &m, 4096);
	r = &st.slot_region;
	for (i = 0; i < 4096; i++) {
		first = i * r->elem / r->chunk;
		last = ((i + 1) * r->elem - 1) / r->chunk;
		if (first != last)
			break;
	}
	ck_assert_uint_lt(i, 4096);
	meter_opened(&m, (int)i, KIND_TCP, 1, NULL, NULL);
	/* The slot's last 8 bytes, in the second chunk. */
	off = i * r->elem + r->elem - sizeof(mark);
	ck_assert_uint_eq(off / r->chunk, last);
	memcpy((char *)st.slots + off, &mark, sizeof(mark));
	ck_assert(only_file(path, sizeof(path)));
	fd = open(path, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pread(fd, &got, sizeof(got), (off_t)(r->off + off)),
			 sizeof(got));
	close(fd);
	ck_assert_uint_eq(got, mark);
	meter_destroy(&m);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("state");
	TCase *tc = tcase_create("state");
	TCase *full = tcase_create("full ring");

	/* test_recovery_reads_ring_entries_wrapped_around recovers 8,000
	 * queue entries: 20-30 s under make test-asan's options (fake
	 * stacks for use-after-return), which reached the 4 s default
	 * stretched tenfold on a loaded machine (a CI run). */
	tcase_set_timeout(tc, 30);
	tcase_add_unchecked_fixture(tc, uu_root_setup, uu_root_teardown);
	tcase_add_checked_fixture(tc, state_setup, state_teardown);
	tcase_add_test(tc,
		       test_a_reader_finds_the_counters_from_the_header_alone);
	tcase_add_test(tc, test_ticker_totals_change_only_at_commit);
	tcase_add_test(tc, test_settle_skips_counted_and_unfinished_entries);
	tcase_add_test(tc, test_a_fork_child_never_writes_the_parent_file);
	tcase_add_test(tc, test_a_fork_child_makes_its_file_at_its_first_tracked_fd);
	tcase_add_test(tc, test_a_fork_child_wipes_its_regions_at_its_first_file);
	tcase_add_test(tc, test_an_untracked_fd_makes_no_file_in_a_fork_child);
	tcase_add_test(tc, test_only_a_fork_child_without_a_file_wants_one);
	tcase_add_test(tc, test_the_state_directory_a_new_user_could_use);
	tcase_add_test(tc, test_percent_u_is_the_uid_the_parent_namespace_knows);
	tcase_add_test(tc, test_a_long_uid_map_is_read_whole);
	tcase_add_test(tc, test_recovery_writes_a_dead_process_records_once);
	tcase_add_test(tc, test_recovery_calls_between_before_each_file);
	tcase_add_test(tc, test_recovery_reads_slots_up_to_the_last_with_data);
	tcase_add_test(tc, test_recovery_reads_ring_entries_wrapped_around);
	tcase_add_test(tc, test_a_kill_inside_a_close_loses_nothing);
	tcase_add_test(tc, test_a_spill_is_backed_before_it_is_claimed);
	tcase_add_test(tc, test_spills_the_file_refused_are_passed_over);
	tcase_add_test(tc, test_a_sandboxed_childs_first_write_gives_its_file_up);
	tcase_add_test(tc, test_a_sandboxed_childs_spills_keep_their_claims);
	tcase_add_test(tc, test_a_kill_between_owning_and_binding_loses_nothing);
	tcase_add_test(tc, test_a_kill_while_an_address_is_noted_keeps_the_connection);
	tcase_add_test(tc, test_recovery_marks_an_unwritten_exit);
	tcase_add_test(tc, test_recovery_never_waits_on_a_fifo_log);
	tcase_add_test(tc, test_automatic_recovery_only_in_a_closed_directory);
	tcase_add_test(tc, test_a_file_is_marked_before_a_change_of_user);
	tcase_add_test(tc, test_a_file_that_cannot_be_marked_is_removed);
	tcase_add_test(tc,
		       test_without_a_file_a_fork_child_gets_none_of_the_memory);
	tcase_add_test(tc, test_one_connection_backs_under_64_kib);
	tcase_add_test(tc, test_a_discarded_state_lets_go_of_every_mapping);
	tcase_add_test(tc, test_the_ring_backs_ahead_as_far_as_it_was_used);
	tcase_add_test(tc, test_backing_ahead_never_waits_for_another_thread);
	tcase_add_test(tc, test_a_write_waits_for_a_run_backing_its_chunk);
	tcase_add_test(tc, test_a_fork_child_of_a_run_in_progress_backs_its_own);
	tcase_add_test(tc, test_a_run_the_disk_refuses_is_left_to_the_writes);
	tcase_add_test(tc, test_a_quiet_thread_backs_nothing_ahead);
	tcase_add_test(tc, test_prepare_backs_the_place_and_past_a_chunks_end);
	tcase_add_test(tc, test_a_slot_across_two_chunks_is_in_the_file_whole);
	tcase_add_test(tc, test_a_fuse_mount_is_told_without_asking_it);
	suite_add_tcase(s, tc);
	/* 24 kills, each recovery writing the ring's 8,192 records: about
	 * 11 s here, more under make test-asan and test-tsan. */
	tcase_set_timeout(full, 240);
	tcase_add_unchecked_fixture(full, uu_root_setup, uu_root_teardown);
	tcase_add_checked_fixture(full, state_setup, state_teardown);
	tcase_add_test(full,
		       test_a_kill_inside_a_close_into_a_full_ring_loses_nothing);
	suite_add_tcase(s, full);
	return uu_run(s);
}
