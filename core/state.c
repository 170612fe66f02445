/*
 * state.c - the durable state file (contract and layout in state.h).
 *
 * Every system call here is made raw (syscall()), never through the
 * preload's wrappers, and nothing allocates: backing a chunk runs inside
 * lifecycle calls, which may run in signal handlers.
 */
#include "state.h"

#include "lockall.h"
#include "meter.h"
#include "procns.h"
#include "progfd.h"
#include "sink.h"
#include "quiet.h"
#include "rawsys.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

#define LOAD(p)	    __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)

/* The file: none wanted (the process started without one, or state is
 * off); wanted but not made yet (a fork child until its first tracked fd);
 * being made by another thread; made, or tried and failed, for good. */
enum { FILE_NONE, FILE_WANTED, FILE_MAKING, FILE_TRIED };

static uint64_t round_page(uint64_t n)
{
	return (n + STATE_PAGE - 1) & ~(uint64_t)(STATE_PAGE - 1);
}

/*
 * Chunk bytes for a region of total bytes: whole pages, CHUNK_MIN at
 * least, doubled until its chunk states fit max.  An element may straddle
 * two chunks (back() backs both).  Small chunks: what a short-lived
 * process backs is what it touches, and each page is cleared by the
 * kernel (about 4 us a page here).  A fork child that serves one
 * connection backs the head, the chunk of its slot and one of the ring:
 * 7 + 4 + 4 pages, where chunks of whole slots (256 of 560 bytes) and 64
 * ring entries made it 7 + 35 + 16.  (Up to an fd limit of 479,349;
 * 64 KiB slot chunks at 1,048,576.  A larger STATE_MAX_CHUNKS would cost
 * every fork child more pages of chunk states to reset.)
 */
#define CHUNK_MIN (4 * STATE_PAGE)

static uint64_t chunk_bytes(uint64_t total, uint64_t max)
{
	uint64_t b = CHUNK_MIN;

	while ((total + b - 1) / b > max)
		b *= 2;
	return b;
}

void state_layout_fill(struct state_layout *l, uint32_t cap)
{
	uint64_t off;

	memset(l, 0, sizeof(*l));
	off = round_page(sizeof(struct state_header));
	l->config_off = off;
	l->config_size = sizeof(struct config);
	off = round_page(off + l->config_size);
	l->ticker_off = off;
	l->ticker_size = sizeof(struct state_ticker);
	off = round_page(off + l->ticker_size);
	l->queue_off = off;
	l->queue_size = sizeof(struct closeq_shared);
	off = round_page(off + l->queue_size);
	l->ring_off = off;
	l->ring_count = CLOSEQ_CAP;
	l->entry_size = sizeof(struct closeq_entry);
	/* The spills right after the ring (closeq.h), in its region, which
	 * ends at a whole chunk: a chunk is backed (populated and moved)
	 * whole, and a last one cut short would reach into the slots. */
	l->ring_chunk = chunk_bytes(CLOSEQ_RING_PLACES * l->entry_size,
				    STATE_RING_CHUNKS);
	off += (CLOSEQ_RING_PLACES * l->entry_size + l->ring_chunk - 1) /
	       l->ring_chunk * l->ring_chunk;
	l->slots_off = off;
	l->slot_count = cap;
	l->slot_size = sizeof(struct fd_slot);
	l->slot_chunk = chunk_bytes((uint64_t)cap * l->slot_size,
				    STATE_MAX_CHUNKS);
	l->file_size = round_page(off + (uint64_t)cap * l->slot_size);
	l->slot_kind = offsetof(struct fd_slot, kind);
	l->slot_seq = offsetof(struct fd_slot, seq);
	l->slot_gen = offsetof(struct fd_slot, gen);
	l->slot_opened = offsetof(struct fd_slot, opened_ns);
	l->slot_hot = offsetof(struct fd_slot, c);
	l->slot_local = offsetof(struct fd_slot, local);
	l->slot_peer = offsetof(struct fd_slot, peer);
	l->hot_bytes = offsetof(struct fd_hot, bytes);
	l->hot_calls = offsetof(struct fd_hot, calls);
	l->hot_latency = offsetof(struct fd_hot, latency);
	l->hot_errors = offsetof(struct fd_hot, errors);
	l->hot_sizes = offsetof(struct fd_hot, sizes);
	l->entry_state = offsetof(struct closeq_entry, state);
	l->entry_closed_ns = offsetof(struct closeq_entry, closed_ns);
	l->entry_snapshot = offsetof(struct closeq_entry, s);
	l->snap_fd = offsetof(struct fd_snapshot, fd);
	l->snap_kind = offsetof(struct fd_snapshot, kind);
	l->snap_opened = offsetof(struct fd_snapshot, opened_ns);
	l->snap_counters = offsetof(struct fd_snapshot, c);
	l->ctr_bytes = offsetof(struct fd_counters, bytes);
	l->ctr_calls = offsetof(struct fd_counters, calls);
	l->ctr_errors = offsetof(struct fd_counters, errors);
	l->ctr_sizes = offsetof(struct fd_counters, sizes);
	l->ctr_latency = offsetof(struct fd_counters, latency_ns);
	l->tick_active = offsetof(struct state_ticker, active);
	l->tick_buf = offsetof(struct state_ticker, buf);
	l->closed_size = sizeof(struct state_closed);
	l->closed_upto = offsetof(struct state_closed, upto);
	l->closed_n = offsetof(struct state_closed, closed_n);
	l->closed_c = offsetof(struct state_closed, closed);
	l->closed_unseen = offsetof(struct state_closed, unseen);
	l->q_spills_used = offsetof(struct closeq_shared, spills_used);
	l->spills = CLOSEQ_SPILLS;
	l->spill_size = sizeof(struct closeq_spill);
	l->spill_next_kind = offsetof(struct closeq_spill, next_kind);
	l->spill_next_n = offsetof(struct closeq_spill, next_n);
	l->spill_next = offsetof(struct closeq_spill, next);
	l->spill_sum_n = offsetof(struct closeq_spill, sum_n);
	l->spill_sum = offsetof(struct closeq_spill, sum);
	l->q_head = offsetof(struct closeq_shared, head);
	l->q_tail = offsetof(struct closeq_shared, tail);
	l->q_pushed = offsetof(struct closeq_shared, pushed);
	l->q_dropped = offsetof(struct closeq_shared, dropped);
	l->q_dropped_c = offsetof(struct closeq_shared, dropped_c);
	l->q_dropped_n = offsetof(struct closeq_shared, dropped_n);
	l->counters_size = sizeof(struct fd_counters);
	l->snapshot_size = sizeof(struct fd_snapshot);
	l->dirs = DIR_COUNT;
	l->errs = ERR_COUNT;
	l->size_buckets = SIZE_BUCKETS;
	l->kinds = KIND_COUNT;
}

int state_dir_expand(const char *tmpl, char *out, size_t cap)
{
	return state_dir_expand_uid(tmpl, procns_uid_outer((unsigned)geteuid()),
				    out, cap);
}

int state_dir_expand_uid(const char *tmpl, unsigned uid, char *out,
			 size_t cap)
{
	size_t len = 0;
	char num[24];

	for (; *tmpl; tmpl++) {
		const char *add = num;

		num[0] = *tmpl;
		num[1] = '\0';
		if (*tmpl == '%' && tmpl[1] == 'u') {
			snprintf(num, sizeof(num), "%u", uid);
			tmpl++;
		} else if (*tmpl == '%' && tmpl[1] == '%') {
			tmpl++;
		}
		if (len + strlen(add) >= cap) {
			out[0] = '\0';
			return -ENAMETOOLONG;
		}
		memcpy(out + len, add, strlen(add) + 1);
		len += strlen(add);
	}
	out[len] = '\0';
	return 0;
}

/* The initial time namespace's inode (the kernel's PROC_TIME_INIT_INO). */
#define TIME_NS_INIT 0xEFFFFFFAu
/* A tick of /proc's start times (USER_HZ: 100 a second), and 2^64 ns in
 * such ticks, rounded up. */
#define STATE_TICK_NS	10000000LL
#define STATE_TICK_WRAP 1844674407371ull

/*
 * The boottime offset of the calling process's time namespace, in clock
 * ticks: what /proc adds to every start time it shows this process (the
 * kernel shifts field 22 by the reader's offset, whoever the process
 * is).  0 in the initial namespace, told by one stat.  Read once per
 * process (the pid it was read for: a fork child may be in its parent's
 * namespace for children, unshare -T).
 */
static int64_t boot_offset_ticks(void)
{
	static long known_pid;
	static int64_t known;
	long pid = (long)SM_SYSCALL(SYS_getpid);
	struct stat sb;
	char buf[256], *p, *end;
	int64_t off = 0;

	if (__atomic_load_n(&known_pid, __ATOMIC_ACQUIRE) == pid)
		return __atomic_load_n(&known, __ATOMIC_RELAXED);
	if (stat("/proc/self/ns/time", &sb) == 0 && sb.st_ino != TIME_NS_INIT &&
	    proc_read_small("/proc/self/timens_offsets", buf, sizeof(buf)) > 0 &&
	    (p = strstr(buf, "boottime")) != NULL) {
		long long secs = strtoll(p + 8, &end, 10);
		long long ns = secs * 1000000000LL + strtoll(end, NULL, 10);

		/* In /proc's ticks (USER_HZ, 100 a second), rounded down as
		 * the kernel rounds the shifted time. */
		off = ns >= 0 ? ns / STATE_TICK_NS
			      : -((-ns + STATE_TICK_NS - 1) / STATE_TICK_NS);
	}
	__atomic_store_n(&known, off, __ATOMIC_RELAXED);
	__atomic_store_n(&known_pid, pid, __ATOMIC_RELEASE);
	return off;
}

/*
 * Whether two start times (as stat_start gives them) are one process's.
 * Read in two time namespaces, a start time can differ by a tick: the
 * kernel rounds the time plus its reader's offset, not each; by two when
 * the reader's reading wrapped too (2^64 ns is no whole number of ticks:
 * a second review's simulation, offsets of CRIU's to the nanosecond).
 */
bool state_starts_match(uint64_t a, uint64_t b)
{
	return a && b && (a > b ? a - b : b - a) <= 2;
}

/* Field 22 of a /proc stat file (see state_proc_start), in the initial
 * time namespace's terms: /proc shows it shifted by the reader's boottime
 * offset (unshare -T --boottime, CRIU), and a recovery in one time
 * namespace took the live processes of another for dead (a helper's
 * sweep of containers). */
static uint64_t stat_start(const char *path)
{
	char buf[1024], *p;
	uint64_t v = 0;
	long threads = 0;
	bool zombie;
	int field;

	if (proc_read_small(path, buf, sizeof(buf)) <= 0)
		return 0;
	/* The name (field 2) may hold anything: count after its last ')'. */
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ')
		return 0;
	zombie = p[2] == 'Z' || p[2] == 'X';
	for (field = 2; *p && field < 22; p++)
		if (*p == ' ') {
			field++;
			if (field == 20)
				threads = strtol(p + 1, NULL, 10);
		}
	/* A zombie (or dying) process is gone for us: its state is final.
	 * The state is the main thread's: one that ended (pthread_exit, or
	 * a raw exit) while others run leaves the process alive, a zombie
	 * leader with more than one thread. */
	if (zombie && threads < 2)
		return 0;
	for (; *p >= '0' && *p <= '9'; p++)
		v = v * 10 + (uint64_t)(*p - '0');
	if (v) {
		int64_t off = boot_offset_ticks();

		/* A negative offset larger than a process's start (one older
		 * than this namespace, from a reader in it: CRIU restoring on
		 * a host up longer than the first) wraps in the kernel's
		 * unsigned sum: about 2^64 ns / 10 ms ticks too many
		 * (STATE_TICK_WRAP, rounded up: within the ticks that
		 * state_starts_match allows; a reviewer's proof). */
		if (off < 0 && v >= STATE_TICK_WRAP / 2)
			v -= STATE_TICK_WRAP;
		/* Never 0 for a process that runs (0: gone). */
		if (off > 0 && (uint64_t)off >= v)
			v = 1;
		else
			v -= (uint64_t)off;
	}
	return v;
}

uint64_t state_proc_start(long pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	return stat_start(path);
}

/* A pid namespace's tag: 0 for the initial one. */
static uint64_t ns_tag(uint64_t ino)
{
	return ino == STATE_PID_NS_INIT ? 0 : ino;
}

/*
 * The pid namespace of the pids this process's /proc shows, as the tag
 * state file names carry (state.h).  /proc/self names this process in the
 * /proc mount's numbering: the same number as getpid() means /proc is this
 * process's own view; else the mount's namespace is its pid 1's.
 */
uint64_t state_pid_view(long *pid)
{
	char self[32];
	struct stat sb;
	long n, mine = (long)SM_SYSCALL(SYS_getpid);

	if (pid)
		*pid = mine;
	n = SM_SYSCALL(SYS_readlinkat, AT_FDCWD, "/proc/self", self,
		    sizeof(self) - 1);
	/* No /proc at all (a chroot, a sandbox without one): no start time
	 * to match, and getpid() may be of a namespace nobody else sees.
	 * Before, such a process counted as one of the initial namespace
	 * with a start time of 0, which never matched: every recovery,
	 * its own automatic one first, took it for dead while it ran, wrote
	 * an exit record "killed" and removed its file (a helper's sweep). */
	if (n <= 0)
		return STATE_VIEW_BLIND;
	if (stat("/proc/self/ns/pid", &sb) != 0)
		return 0; /* no namespaces: as ever */
	self[n] = '\0';
	if (strtol(self, NULL, 10) == mine)
		return ns_tag(sb.st_ino);
	if (stat("/proc/1/ns/pid", &sb) != 0)
		return STATE_VIEW_BLIND;
	if (pid)
		*pid = strtol(self, NULL, 10);
	return ns_tag(sb.st_ino);
}

uint64_t state_name_view(const char *name)
{
	const char *p = strstr(name, STATE_NS_TAG);

	return p ? strtoull(p + strlen(STATE_NS_TAG), NULL, 10) : 0;
}

/* Read once per image: a fork child's boot is its parent's, and its
 * file is made on the way of its first tracked call (three system calls
 * and a /proc lookup fewer there). */
static void boot_id(char *out, size_t cap)
{
	static char known[40];
	char buf[40];
	long n;

	if (!__atomic_load_n(&known[0], __ATOMIC_ACQUIRE)) {
		n = proc_read_small("/proc/sys/kernel/random/boot_id", buf,
			       sizeof(buf));
		while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
			buf[--n] = '\0';
		if (n <= 0) {
			snprintf(out, cap, "%s", "");
			return;
		}
		/* Threads racing here read the same text: the first byte,
		 * stored last, says the rest is there. */
		memcpy(known + 1, buf + 1, (size_t)n);
		__atomic_store_n(&known[0], buf[0], __ATOMIC_RELEASE);
	}
	snprintf(out, cap, "%s", known);
}

static void say(config_report_fn report, void *ctx, const char *dir,
		const char *what, int err)
{
	char msg[CONFIG_PATH_MAX + 512];

	/* Quietly (a fork child's make_file): only the errno, noted where
	 * ctx points, said later by the caller. */
	if (!report) {
		if (ctx)
			__atomic_store_n((int *)ctx, err, __ATOMIC_RELEASE);
		return;
	}
	snprintf(msg, sizeof(msg),
		 "sockmeter: state directory %s: %s (%s); the final numbers "
		 "are kept in private memory: they are lost if the process is "
		 "killed",
		 dir, what, strerror(err));
	report(ctx, msg);
}

/* Whether uid may pass through (search) the directory of st, by its mode
 * bits alone (its groups are not known here: group bits count for
 * nothing). */
static bool may_search(const struct stat *st, unsigned uid)
{
	return S_ISDIR(st->st_mode) &&
	       (st->st_uid == uid ? (st->st_mode & 0100) : (st->st_mode & 0001));
}

/* Every directory on the way to path (path itself too when whole), and
 * the last one writable as well when write. */
static bool path_open_to(char *path, unsigned uid, bool write)
{
	struct stat st;
	char *p = path;
	char keep;

	for (;;) {
		p = strchr(p + 1, '/');
		keep = p ? *p : '\0';
		if (p)
			*p = '\0';
		/* Not through a symlink: where it leads, the way there is
		 * not checked (no: the file is made before the change). */
		if (lstat(path[0] ? path : "/", &st) != 0 ||
		    !may_search(&st, uid)) {
			if (p)
				*p = keep;
			return false;
		}
		if (!p)
			break;
		*p = keep;
	}
	return !write || (st.st_uid == uid ? (st.st_mode & 0200)
					   : (st.st_mode & 0002));
}

bool state_dir_usable_by(const char *tmpl, unsigned uid)
{
	char dir[CONFIG_PATH_MAX], *slash;
	struct stat st;

	if (uid == 0)
		return true; /* check_dir says the rest, as root */
	if (state_dir_expand_uid(tmpl, procns_uid_outer(uid), dir,
				 sizeof(dir)) != 0 ||
	    dir[0] != '/')
		return false;
	while (strlen(dir) > 1 && dir[strlen(dir) - 1] == '/')
		dir[strlen(dir) - 1] = '\0';
	/* Before the lstat, which a FUSE server made there by another user
	 * could hold for good, in the program's own setuid call. */
	if (procns_fuse_mount(dir) == 1)
		return false;
	if (lstat(dir, &st) == 0)
		return S_ISDIR(st.st_mode) && st.st_uid == uid &&
		       !(st.st_mode & 022) && path_open_to(dir, uid, false);
	if (errno != ENOENT)
		return false;
	/* To be made by uid: in a directory it may write to. */
	slash = strrchr(dir, '/');
	*slash = '\0';
	if (slash == dir)
		return false; /* "/" itself: never writable by a user */
	return path_open_to(dir, uid, true);
}

/* The directory must exist or be made here, be ours, closed to others. */
static int check_dir(const char *dir, config_report_fn report, void *ctx)
{
	struct statfs sf;
	struct stat st;

	if (SM_SYSCALL(SYS_mkdirat, AT_FDCWD, dir, 0700) != 0 && errno != EEXIST) {
		int err = errno;

		say(report, ctx, dir, "cannot create it", err);
		return -err;
	}
	/* Before any stat: one of a FUSE mount whose server does not
	 * answer never returns (procns_fuse_mount). */
	if (procns_fuse_mount(dir) == 1) {
		say(report, ctx, dir, PROCNS_FUSE_SAYS, EPERM);
		return -EPERM;
	}
	if (lstat(dir, &st) != 0) {
		int err = errno;

		say(report, ctx, dir, "cannot inspect it", err);
		return -err;
	}
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 022)) {
		say(report, ctx, dir,
		    "not a directory owned by this user and closed to others",
		    EPERM);
		return -EPERM;
	}
	if (SM_SYSCALL(SYS_statfs, dir, &sf) == 0 &&
	    (long)sf.f_type == STATE_FUSE_MAGIC) {
		say(report, ctx, dir, PROCNS_FUSE_SAYS, EPERM);
		return -EPERM;
	}
	/* Made under a umask without u+wx (tinyproxy's 0177): mode 0700.
	 * A failure is left to the file's creation, which says so (a
	 * read-only one of root's stays usable, as before). */
	(void)sink_dir_fix_mode(dir, &st);
	return 0;
}

/* Back [off, off + len) of the file mapped at addr; 0 or -errno.  Where
 * the kernel predates MADV_POPULATE_WRITE, the file is opened again by
 * name just long enough to fallocate. */
static int populate(const struct state *st, char *addr, uint64_t off,
		    uint64_t len)
{
	long fd, r;

	/* A sandboxed thread (quiet.h): the chunk stays private memory. */
	if (sm_quiet())
		return -EPERM;
	if (st->populate) {
		int err = st->populate(addr, (size_t)len);

		if (err != 0)
			return err;
	}
	if (SM_SYSCALL(SYS_madvise, addr, len, MADV_POPULATE_WRITE) == 0)
		return 0;
	if (errno != EINVAL)
		return -errno;
	fd = SM_SYSCALL(SYS_openat, AT_FDCWD, st->path,
		     O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	r = SM_SYSCALL(SYS_fallocate, fd, 0, (off_t)off, (off_t)len);
	r = r == 0 ? 0 : -errno;
	SM_SYSCALL(SYS_close, fd);
	return r;
}

/*
 * The file of an earlier image of this very process is at path: remove it
 * when that image wrote its final record (exec), else keep it for recovery
 * under a name of its own.  True when path is free now.
 */
static bool clear_predecessor(const char *path, long pid, uint64_t start)
{
	struct state_header h;
	char to[CONFIG_PATH_MAX + 160];
	long fd = SM_SYSCALL(SYS_openat, AT_FDCWD, path,
			  O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	bool ok = false;

	if (fd < 0)
		return false;
	if (SM_SYSCALL(SYS_pread64, fd, &h, sizeof(h), 0) == (long)sizeof(h) &&
	    memcmp(h.magic, STATE_MAGIC, sizeof(h.magic)) == 0 &&
	    h.pid == pid && h.proc_start == start) {
		if (h.status == STATE_FINAL) {
			ok = SM_SYSCALL(SYS_unlinkat, AT_FDCWD, path, 0) == 0;
		} else {
			uint32_t orphan = STATE_ORPHAN;

			SM_SYSCALL(SYS_pwrite64, fd, &orphan, sizeof(orphan),
				offsetof(struct state_header, status));
			snprintf(to, sizeof(to), "%.*s-%" PRIu64 "%s",
				 (int)(strlen(path) - strlen(STATE_SUFFIX)),
				 path, h.start_real_ns, STATE_SUFFIX);
			ok = SM_SYSCALL(SYS_renameat, AT_FDCWD, path, AT_FDCWD,
				     to) == 0;
		}
	}
	SM_SYSCALL(SYS_close, fd);
	return ok;
}

/* This process's pid namespace inode (never 0: 1 when unknown). */
static uint64_t own_pid_ns(void)
{
	struct stat sb;

	return stat("/proc/self/ns/pid", &sb) == 0 && sb.st_ino
		       ? sb.st_ino
		       : STATE_VIEW_NOPROC;
}

/* What create_file hands to the file work (create_job) and gets back. */
struct create_job {
	struct state *st; /* st->path and st->proc_start are written */
	const char *dir;
	long pid;	/* getpid() */
	long view_pid;	/* the pid as /proc numbers it */
	uint64_t view;	/* the pid namespace tag, or 0 */
	uint64_t start;	/* the start time when read already, or 0 */
	uint64_t size;
	void *map;	/* out: the whole file, mapped shared */
	int stage;	/* out: where it failed (1 create, 2 size or map) */
};

/*
 * The file work of create_file, in progfd_run's child where the caller is
 * not the ticker: the open of a fork child (a worker's first tracked fd,
 * while its other threads may be opening theirs) took a number in the
 * program's table, and a program at its RLIMIT_NOFILE got no file at all.
 * The mapping is shared memory, the caller's once this returns.  /proc/self
 * is the child there: the start time is read by the program's pid.
 * Returns 0 or -errno (-EMFILE before anything was written: progfd_run
 * makes room and runs it again).
 */
static int create_job(void *arg)
{
	struct create_job *j = arg;
	struct state *st = j->st;
	int flags = O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
	char stat_path[64];
	long fd;
	void *p;
	int err, tries;

	snprintf(stat_path, sizeof(stat_path), "/proc/%ld/stat", j->view_pid);
	st->proc_start = j->start ? j->start : stat_start(stat_path);
	if (j->view)
		snprintf(st->path, sizeof(st->path),
			 "%s/%ld-%" PRIu64 "%s%" PRIu64 "%s", j->dir,
			 j->view_pid, st->proc_start, STATE_NS_TAG, j->view,
			 STATE_SUFFIX);
	else
		snprintf(st->path, sizeof(st->path), "%s/%ld-%" PRIu64 "%s",
			 j->dir, j->view_pid, st->proc_start, STATE_SUFFIX);
	j->stage = 1;
	fd = SM_SYSCALL(SYS_openat, AT_FDCWD, st->path, flags, 0600);
	if (fd < 0 && errno == EEXIST &&
	    clear_predecessor(st->path, j->pid, st->proc_start))
		fd = SM_SYSCALL(SYS_openat, AT_FDCWD, st->path, flags, 0600);
	if (fd < 0)
		return -errno;
	j->stage = 2;
	/* (A signal's EINTR is no reason to go without a file; a few
	 * times, not for ever: the program's start waits on it.) */
	for (tries = 0;
	     (err = (int)SM_SYSCALL(SYS_ftruncate, fd, (off_t)j->size)) != 0 &&
	     errno == EINTR && tries < EINTR_TRIES;
	     tries++)
		;
	if (err != 0) {
		err = errno;
		goto fail;
	}
	p = (void *)SM_SYSCALL(SYS_mmap, NULL, j->size, PROT_READ | PROT_WRITE,
			    MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		err = errno;
		goto fail;
	}
	{
		struct stat sb;

		if (fstat((int)fd, &sb) == 0) {
			st->file_dev = (uint64_t)sb.st_dev;
			st->file_ino = (uint64_t)sb.st_ino;
		}
	}
	SM_SYSCALL(SYS_close, fd);
	j->map = p;
	return 0;
fail:
	SM_SYSCALL(SYS_close, fd);
	SM_SYSCALL(SYS_unlinkat, AT_FDCWD, st->path, 0);
	return -err;
}

/* Create the file and map it whole; 0 or -errno (reported).  At start-up
 * (alone: the constructor, before the program has threads of its own, as
 * a rule) the file work is done here, sparing every process start a child
 * (0.1 to 0.2 ms); at the fd limit, in the child all the same. */
static int create_file(struct state *st, const char *dir, long pid,
		       uint64_t size, bool alone, config_report_fn report,
		       void *ctx)
{
	struct create_job j = {.st = st, .dir = dir, .pid = pid, .size = size};
	struct rlimit fsz;
	int r;

	/* Beyond the file size limit, ftruncate would raise SIGXFSZ. */
	if (getrlimit(RLIMIT_FSIZE, &fsz) == 0 &&
	    fsz.rlim_cur != RLIM_INFINITY && fsz.rlim_cur < size) {
		char what[160];

		/* A limit of 0: the log's own first write says it.  Any other
		 * (ulimit -f 10000) lets the log grow, and nothing else would
		 * say that a kill loses the numbers. */
		if (fsz.rlim_cur > 0) {
			snprintf(what, sizeof(what),
				 "a state file of %" PRIu64 " bytes is over "
				 "the file size limit (RLIMIT_FSIZE, %llu "
				 "bytes)",
				 size, (unsigned long long)fsz.rlim_cur);
			say(report, ctx, dir, what, EFBIG);
		}
		return -EFBIG;
	}
	/* The start time from /proc: /proc may number processes in another
	 * namespace than getpid() (unshare -fp without a /proc of its own,
	 * where /proc/1 is the host's init).  Asked here, where /proc/self
	 * is this process. */
	j.view = state_pid_view(&j.view_pid);
	if (j.view == STATE_VIEW_BLIND) {
		/* Nobody outside can check it: only a recovery in its own
		 * namespace, with a /proc of its own, judges it. */
		j.view = own_pid_ns();
		j.view_pid = pid;
		/* Its own start time all the same (through /proc/self, here
		 * this process), not that of whatever /proc numbers pid (the
		 * host's init for a pid 1): a file another run's pid 1 left in
		 * a namespace that got the same tag was taken for this one's
		 * predecessor (a helper's sandboxed Chromium zygotes). */
		j.start = stat_start("/proc/self/stat");
	}
	r = alone ? create_job(&j) : -EMFILE;
	if (r == -EMFILE)
		r = progfd_run(create_job, &j);
	if (r != 0) {
		say(report, ctx, dir,
		    j.stage == 2 ? "cannot size or map a state file"
				 : "cannot create a state file",
		    -r);
		return r;
	}
	/* What is left of the mapping once the head and the chunks have
	 * moved out is of no use to a fork child: not copied into it (each
	 * piece that moves out is marked to be copied again, move_out). */
	st->file_dontfork = madvise(j.map, size, MADV_DONTFORK) == 0;
	st->file = j.map;
	st->size = size;
	return 0;
}

static void fill_header(struct state *st, const struct config *cfg,
			const char *prog, long pid, uint64_t start_real_ns,
			uint64_t start_mono_ns, const char *log_path)
{
	struct state_header *h = st->hdr;
	uint64_t magic;

	/* The magic goes in last (below): a file whose process died while
	 * this was being filled has none, and recovery removes it. */
	h->version = STATE_VERSION;
	h->header_size = sizeof(*h);
	h->byte_order = STATE_BYTE_ORDER;
	h->pid = pid;
	h->proc_start = st->proc_start;
	h->start_real_ns = start_real_ns;
	h->start_mono_ns = start_mono_ns;
	h->uid = (uint32_t)procns_uid_outer((unsigned)geteuid());
	h->format = (uint32_t)cfg->format;
	boot_id(h->boot_id, sizeof(h->boot_id));
	snprintf(h->prog, sizeof(h->prog), "%s", prog);
	if (log_path)
		snprintf(h->log_path, sizeof(h->log_path), "%s", log_path);
	state_layout_fill(&h->layout, st->cap);
	memcpy(st->head + h->layout.config_off, cfg, sizeof(*cfg));
	st->ticker->ns_per_tick = 1.0;
	STORE(&h->status, (uint32_t)STATE_LIVE);
	memcpy(&magic, STATE_MAGIC, sizeof(magic));
	_Static_assert(sizeof(h->magic) == sizeof(magic), "an 8-byte magic");
	__atomic_store_n((uint64_t *)(void *)h->magic, magic,
			 __ATOMIC_RELEASE);
}

/* Move [from, from + len) of the file's mapping to the address the
 * process uses; true when it is there.  A fork child gets it as it gets
 * any memory of ours (the rest of the file's mapping it does not). */
static bool move_out(const struct state *st, char *from, uint64_t len,
		     char *to)
{
	if (SM_SYSCALL(SYS_mremap, from, len, len, MREMAP_MAYMOVE | MREMAP_FIXED,
		    to) != (long)to)
		return false;
	if (st->file_dontfork)
		madvise(to, len, MADV_DOFORK);
	return true;
}

/* Point the small regions (header .. queue) at base, laid out as l says. */
static void point_head(struct state *st, char *base,
		       const struct state_layout *l)
{
	st->hdr = (struct state_header *)base;
	st->ticker = (struct state_ticker *)(base + l->ticker_off);
	st->queue = (struct closeq_shared *)(base + l->queue_off);
}

static void region_init(struct state_region *r, char *va, uint64_t off,
			uint64_t elem, uint64_t chunk, uint64_t count,
			uint8_t *states, uint32_t max)
{
	r->va = va;
	r->off = off;
	r->elem = elem;
	r->chunk = chunk;
	r->count = count;
	r->nchunks = (uint32_t)((count * elem + chunk - 1) / chunk);
	if (r->nchunks > max)
		r->nchunks = max; /* the rest stays private */
	r->chunk_state = states;
	memset(states, 0, max);
}

/* Make (or remake, in a fork child) the file and its head; false if the
 * state is private.  The regions' chunks are backed later, on use. */
static bool open_durable(struct state *st, const struct config *cfg,
			 const char *prog, long pid, uint64_t start_real_ns,
			 uint64_t start_mono_ns, const char *log_path,
			 bool alone, config_report_fn report, void *ctx)
{
	struct state_layout l;
	char dir[CONFIG_PATH_MAX];
	int err;

	if (!cfg->state_enabled)
		return false;
	state_layout_fill(&l, st->cap);
	if (state_dir_expand(cfg->state_dir, dir, sizeof(dir)) != 0) {
		say(report, ctx, cfg->state_dir, "path too long", ENAMETOOLONG);
		return false;
	}
	if (check_dir(dir, report, ctx) != 0 ||
	    create_file(st, dir, pid, l.file_size, alone, report, ctx) != 0)
		return false;
	/* The head moves onto the address the process already uses, with
	 * what it holds (a fork child's queue and log path, made before). */
	err = populate(st, st->file, 0, l.ring_off);
	if (err != 0) {
		/* (Its reason: a full file system, or memory refused.) */
		say(report, ctx, dir,
		    state_no_room(-err) ? "no room for a state file"
					: "cannot fill a state file",
		    state_no_room(-err) ? ENOSPC : -err);
		goto fail;
	}
	memcpy(st->file, st->head, l.ring_off);
	if (!move_out(st, st->file, l.ring_off, st->head)) {
		say(report, ctx, dir, "cannot map a state file", errno);
		goto fail;
	}
	fill_header(st, cfg, prog, pid, start_real_ns, start_mono_ns, log_path);
	return true;
fail:
	munmap(st->file, st->size);
	SM_SYSCALL(SYS_unlinkat, AT_FDCWD, st->path, 0);
	st->file = NULL;
	st->size = 0;
	return false;
}

/*
 * What of the reservation stays private (all of it without a state file:
 * [state] enabled = false, or no usable directory) is not copied into a
 * fork child: the child makes it zeroes anyway (state_after_fork).  Else
 * every fork copied the page tables of the ring and the slots the process
 * had written (megabytes on a busy server) and write-protected them, and
 * the parent then took a copy fault on each page it wrote after the fork:
 * forks/s under churn fell to half.  Backed chunks are shared mappings,
 * which fork does not copy either.  A kernel before 4.14 refuses it: the
 * child still zeroes the memory, at that cost.
 */
SM_FORK_PATH
static void wipe_on_fork(void *p, uint64_t len)
{
	raw_syscall6(SYS_madvise, (long)p, (long)len, MADV_WIPEONFORK, 0, 0,
		     0);
}

void state_lazy_ranges(const struct state *st, struct lockall_set *s)
{
	struct state_layout l;

	if (!st->head)
		return;
	state_layout_fill(&l, st->cap);
	lockall_add(s, st->head, l.file_size);
	if (st->file_ino)
		lockall_add_file(s, st->file_dev, st->file_ino);
}

int state_open(struct state *st, const struct config *cfg, const char *prog,
	       long pid, uint32_t cap, uint64_t start_real_ns,
	       uint64_t start_mono_ns, const char *log_path,
	       config_report_fn report, void *ctx)
{
	struct state_layout l;
	char *base;

	memset(st, 0, sizeof(*st));
	st->cap = cap;
	state_layout_fill(&l, cap);
	/*
	 * The addresses the process uses, private memory until backed: one
	 * reservation laid out as the file is (head, ring, slots at their
	 * file offsets).  A fork child then makes them private zeroes again
	 * with one mapping call, and backed chunks next to each other (same
	 * file, consecutive offsets) are one area, not one each: fewer areas
	 * for every fork to copy.
	 */
	base = raw_mmap(NULL, l.file_size, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (!base)
		return -ENOMEM;
	wipe_on_fork(base, l.file_size);
	raw_table(base, l.file_size);
	st->head = base;
	point_head(st, base, &l);
	st->ring = (struct closeq_entry *)(base + l.ring_off);
	st->slots = (struct fd_slot *)(base + l.slots_off);
	region_init(&st->slot_region, (char *)st->slots, l.slots_off,
		    l.slot_size, l.slot_chunk, cap, st->slot_chunks,
		    STATE_MAX_CHUNKS);
	region_init(&st->ring_region, (char *)st->ring, l.ring_off,
		    l.entry_size, l.ring_chunk, CLOSEQ_RING_PLACES, st->ring_chunks,
		    sizeof(st->ring_chunks));
	st->durable = open_durable(st, cfg, prog, pid, start_real_ns,
				   start_mono_ns, log_path, true, report, ctx);
	st->file_state = FILE_TRIED;
	return 0;
}

static int block_signals(sigset_t *old)
{
	sigset_t all;

	sigfillset(&all);
	return (int)SM_SYSCALL(SYS_rt_sigprocmask, SIG_SETMASK, &all, old,
			    _NSIG / 8);
}

static void restore_signals(const sigset_t *old)
{
	SM_SYSCALL(SYS_rt_sigprocmask, SIG_SETMASK, old, NULL, _NSIG / 8);
}

/* Move chunks [c, c + n) of r from the file's mapping to the address the
 * process uses, in one populate and one move.  Returns 0 when the file
 * backs them, or the failure's -errno. */
static int back_chunks(struct state *st, struct state_region *r, uint32_t c,
		       uint32_t n)
{
	uint64_t bytes = (uint64_t)n * r->chunk;
	uint64_t off = r->off + (uint64_t)c * r->chunk;
	char *from = st->file + off;
	void *to = r->va + (uint64_t)c * r->chunk;
	int err;

	if (off + bytes > st->size)
		bytes = st->size - off;
	err = populate(st, from, off, bytes);
	if (err != 0)
		return err;
	return move_out(st, from, bytes, to) ? 0 : -errno;
}

bool state_no_room(int err)
{
	return err == ENOSPC || err == EFAULT;
}

/* A fork child's fresh regions, marked wiped on fork at the first of its
 * own fork and its own file: once the file's head and chunks are moved in,
 * the advice no longer applies to what lies behind them (a shared mapping
 * first in the range fails the call).  Read first: a write at every fork
 * would be a copy-on-write fault on the page the last fork protected. */
static void wipe_if_due(struct state *st)
{
	if (!LOAD(&st->wipe_due))
		return;
	wipe_on_fork(st->head, st->wipe_end);
	STORE(&st->wipe_due, false);
}

/*
 * A fork child's file, made at its first tracked fd rather than in the
 * fork: a pre-fork server's workers that only exit, or exec, never pay for
 * one (a file is an open, a truncate, a map and seven pages to clear; it
 * was half the cost of a fork).  One thread makes it, the others wait a
 * few system calls; true when the process has a file now.
 */
static bool make_file(struct state *st)
{
	uint32_t want = FILE_WANTED;
	sigset_t old;
	int saved;
	bool ok;

	if (LOAD(&st->file_state) == FILE_WANTED) {
		/* Signals blocked before the claim, not after: a handler on
		 * this thread that came in between would wait for us for
		 * good. */
		saved = errno;
		block_signals(&old);
		if (__atomic_compare_exchange_n(&st->file_state, &want,
						FILE_MAKING, false,
						__ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE)) {
			wipe_if_due(st);
			/* Quietly: a failure was reported by the first
			 * process, and a new one (the parent had a file) is
			 * noted, to be said outside this call (which may be
			 * in a signal handler). */
			ok = open_durable(st, st->cfg, st->prog, st->pid,
					  st->start_real_ns, st->start_mono_ns,
					  NULL, false, NULL, &st->refused_err);
			STORE(&st->durable, ok);
			/* No file: what a fork child writes stays private
			 * memory, which state_after_fork left unmarked for a
			 * file to come (raw_nohuge). */
			if (!ok && st->wipe_end)
				raw_nohuge(st->head, st->wipe_end);
			if (!ok && st->parent_durable && st->cfg &&
			    st->cfg->state_enabled)
				STORE(&st->refused, 1u);
			if (ok && st->made)
				st->made(st);
			STORE(&st->file_state, (uint32_t)FILE_TRIED);
			restore_signals(&old);
			errno = saved;
			return ok;
		}
		restore_signals(&old);
		errno = saved;
	}
	while (LOAD(&st->file_state) == FILE_MAKING)
		SM_SYSCALL(SYS_sched_yield);
	return LOAD(&st->durable);
}

/* Chunk c is about to be claimed: raised first, so that every chunk a
 * fork child may find claimed lies below tried_hi (reset_region). */
static void raise_tried(struct state_region *r, uint32_t c)
{
	uint32_t cur = LOAD(&r->tried_hi);

	while (cur <= c &&
	       !__atomic_compare_exchange_n(&r->tried_hi, &cur, c + 1, false,
					    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		;
}

/* Chunk c of r, claimed by this thread (BACKING), backed or not (err):
 * its state set, a failure noted to be said. */
static void settle(struct state *st, struct state_region *r, uint32_t c,
		   int err)
{
	int none_err = 0;
	uint32_t none = 0;
	/* The spills' room, after the ring's own chunks: a spill the file
	 * did not take is passed over (closeq.c), so nothing is kept there
	 * and nothing is incomplete (a reviewer's). */
	bool spill_room = r == &st->ring_region &&
			  (uint64_t)c * r->chunk >=
			      (uint64_t)CLOSEQ_CAP * r->elem;

	if (err != 0 && !spill_room) {
		/* In the file, for recovery; and to be said (not here: maybe
		 * a signal handler), but on a sandboxed thread, which backs
		 * nothing by design (quiet.h) and says nothing. */
		STORE(&st->ticker->incomplete, 1u);
		/* (The first one's reason, said with it.) */
		__atomic_compare_exchange_n(&st->incomplete_err, &none_err,
					    -err, false, __ATOMIC_ACQ_REL,
					    __ATOMIC_ACQUIRE);
		/* Once a process: 1 to be said, 2 said (each chunk a full
		 * disk refused said it again: 5 to 7 lines a process in a
		 * helper's run). */
		if (!sm_quiet())
			__atomic_compare_exchange_n(&st->incomplete, &none, 1u,
						    false, __ATOMIC_ACQ_REL,
						    __ATOMIC_ACQUIRE);
	}
	STORE(&r->chunk_state[c], err == 0 ? CHUNK_FILE : CHUNK_PRIVATE);
}

static void back_one(struct state *st, struct state_region *r, uint32_t c)
{
	uint8_t cur, want;
	sigset_t old;
	int saved;

	if (c >= r->nchunks)
		return;
	/* A sandboxed thread (quiet.h) makes no file, and writes into the
	 * private memory the regions start as: the process gives its file
	 * up then, so that none is made later and moved over what it
	 * wrote.  Before, a file made after (by another thread) put its
	 * zeroes over it: ring entries vanished and the drain waited for
	 * them for good, a spill could get a second owner (a reviewer's).
	 * No thread makes it in practice: a confined process's fork child
	 * is quiet throughout and starts no ticker.  A file being made
	 * meanwhile is waited for, without a system call. */
	if (!LOAD(&st->durable) && sm_quiet()) {
		uint32_t f = FILE_WANTED;

		while (!__atomic_compare_exchange_n(&st->file_state, &f,
						    FILE_TRIED, false,
						    __ATOMIC_ACQ_REL,
						    __ATOMIC_ACQUIRE) &&
		       f == FILE_MAKING)
			f = FILE_WANTED;
		if (!LOAD(&st->durable))
			return;
	}
	if (!LOAD(&st->durable) && !make_file(st))
		return;
	for (;;) {
		cur = LOAD(&r->chunk_state[c]);
		if (cur == CHUNK_FILE || cur == CHUNK_PRIVATE)
			return;
		if (cur == CHUNK_BACKING) {
			/* Another thread is backing it: a few system calls,
			 * wait.  A backing ahead of use that failed leaves it
			 * untried again (back_ahead): then it is ours. */
			SM_SYSCALL(SYS_sched_yield);
			continue;
		}
		/* A signal handler on this thread must not wait for us:
		 * signals are blocked before the claim (a handler that came
		 * between the claim and the block waited for good: siglife
		 * under load, 2026-12-01), a system call more only on a
		 * chunk's first use. */
		saved = errno;
		block_signals(&old);
		raise_tried(r, c);
		want = CHUNK_UNTRIED;
		if (__atomic_compare_exchange_n(&r->chunk_state[c], &want,
						CHUNK_BACKING, false,
						__ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE))
			settle(st, r, c, back_chunks(st, r, c, 1));
		restore_signals(&old);
		errno = saved;
	}
}

/*
 * Chunks [c, c + n) of r, ahead of their use, where the file is made: from
 * c on, those no thread has tried, claimed and backed together, in one
 * populate and one move.  Nothing waits here: a chunk another thread holds
 * is its to finish, and the write that needs it waits for it then
 * (back_one).  Nothing when chunk c is tried already, and nothing on a
 * sandboxed thread (quiet.h: its populate is refused).  A run the file
 * system refuses is let go, untried and unsaid: each of its chunks is
 * tried alone by the write that needs it, which says a refusal.
 */
static void back_ahead(struct state *st, struct state_region *r, uint32_t c,
		       uint32_t n)
{
	uint32_t end, got, i;
	uint8_t want;
	sigset_t old;
	int saved;

	if (c >= r->nchunks || !LOAD(&st->durable) || sm_quiet() ||
	    LOAD(&r->chunk_state[c]) != CHUNK_UNTRIED)
		return;
	end = n < r->nchunks - c ? c + n : r->nchunks;
	saved = errno;
	block_signals(&old); /* as in back_one */
	raise_tried(r, end - 1);
	for (got = c; got < end; got++) {
		want = CHUNK_UNTRIED;
		if (!__atomic_compare_exchange_n(&r->chunk_state[got], &want,
						 CHUNK_BACKING, false,
						 __ATOMIC_ACQ_REL,
						 __ATOMIC_ACQUIRE))
			break;
	}
	if (got > c) {
		bool ok = back_chunks(st, r, c, got - c) == 0;

		for (i = c; i < got; i++)
			STORE(&r->chunk_state[i],
			      ok ? CHUNK_FILE : CHUNK_UNTRIED);
	}
	restore_signals(&old);
	errno = saved;
}

/* Element index of r is about to be written: back the chunk it lies in,
 * or the two it straddles. */
static void back(struct state *st, struct state_region *r, uint64_t index)
{
	uint64_t first = index * r->elem;
	uint32_t c = (uint32_t)(first / r->chunk);
	uint32_t last = (uint32_t)((first + r->elem - 1) / r->chunk);

	back_one(st, r, c);
	if (last != c)
		back_one(st, r, last);
}

void state_meter_mem(struct state *st, struct meter_mem *mem)
{
	memset(mem, 0, sizeof(*mem));
	mem->slots = st->slots;
	mem->queue = st->queue;
	mem->ring = st->ring;
	mem->ticker = st->ticker;
	mem->back_slot = state_back_slot;
	mem->back_slot_untracked = state_back_slot_untracked;
	mem->back_ring = state_back_ring;
	mem->ready_ring = state_ready_ring;
	mem->kept_ring = state_kept_ring;
	mem->back_ctx = st;
}

void state_back_slot(void *ctx, uint32_t fd)
{
	struct state *st = ctx;

	back(st, &st->slot_region, fd);
}

void state_back_slot_untracked(void *ctx, uint32_t fd)
{
	struct state *st = ctx;

	if (LOAD(&st->durable))
		back(st, &st->slot_region, fd);
}

/*
 * The ring is written in order: a push that enters a chunk backs chunks
 * after it as well (from the second chunk on), so that the pushes that
 * follow (any thread's) find theirs backed.  Before, a server's closing
 * threads met at each new chunk and all but one waited out its backing (a
 * file extent to populate, then a move): 1.2 sched_yield per connection
 * over a ring's first lap in `churngen churn 1`.  Ahead as far as has been
 * used, up to RING_AHEAD chunks at once, in one call: a process that
 * closes a few connections backs a chunk or two more than it used (at
 * most 64 KiB more: a pre-fork server has many such processes), and a
 * busy one its first lap in about 130 calls, not 512.  And not waited for
 * (back_ahead): two threads that closed at once prepare the same place
 * (closeq_prepare), and one waited out the other's backing at each chunk,
 * 0.6 sched_yield per connection in `churngen churn 2` (2026-12-07).
 */
#define RING_AHEAD 4u

/* Place index of the ring is about to be written (state_back_ring), or
 * will be by the next push (ready: state_ready_ring). */
static void back_ring(struct state *st, uint32_t index, bool ready)
{
	struct state_region *r = &st->ring_region;
	uint64_t first = (uint64_t)index * r->elem;
	uint64_t in = first % r->chunk;
	uint32_t c = (uint32_t)(first / r->chunk);

	/* The ring's own chunks: the spills' room after them (closeq.h) is
	 * backed when a spill is used, never ahead. */
	uint32_t ring = (uint32_t)((uint64_t)CLOSEQ_CAP * r->elem / r->chunk);
	uint32_t ahead = c < RING_AHEAD ? c : RING_AHEAD;

	back(st, r, index);
	if (index >= CLOSEQ_CAP || c + 1 >= ring)
		return;
	if (ahead > ring - (c + 1))
		ahead = ring - (c + 1);
	/* Not from the first chunk: a process that closes a few
	 * connections backs one chunk of the ring, as before. */
	if (c > 0 && in < r->elem)
		back_ahead(st, r, c + 1, ahead);
	/* Ready, at the last place of a chunk, the first chunk's too: the
	 * next one as well, where the push lands when another takes this
	 * place first. */
	if (ready && r->chunk - in <= r->elem)
		back_one(st, r, c + 1);
}

void state_back_ring(void *ctx, uint32_t index)
{
	back_ring(ctx, index, false);
}

bool state_kept_ring(void *ctx, uint32_t index)
{
	const struct state *st = ctx;
	const struct state_region *r = &st->ring_region;
	uint64_t first = (uint64_t)index * r->elem;
	uint32_t c = (uint32_t)(first / r->chunk);
	uint32_t last = (uint32_t)((first + r->elem - 1) / r->chunk);

	if (!LOAD(&st->durable)) {
		uint32_t f = LOAD(&st->file_state);

		/* A file still to come (a fork child's): its backing would
		 * move the file's pages over what is written now (a
		 * reviewer's).  After back(), a sandboxed thread has given
		 * it up (back_one): then none ever comes. */
		if (f == FILE_WANTED || f == FILE_MAKING)
			return false;
		if (!LOAD(&st->durable))
			return true;
	}
	return c < r->nchunks && last < r->nchunks &&
	       LOAD(&r->chunk_state[c]) == CHUNK_FILE &&
	       LOAD(&r->chunk_state[last]) == CHUNK_FILE;
}

void state_ready_ring(void *ctx, uint32_t index)
{
	struct state *st = ctx;

	if (LOAD(&st->durable))
		back_ring(st, index, true);
}

/* In a fork child: the whole region becomes private zeroes, every chunk
 * untried again, backed by the child's own file on first use like the
 * parent's were.  One mapping call, whatever the parent had backed: a
 * child re-backing (and so zeroing) the parent's chunks up front paid for
 * thousands of pages on every fork of a busy server, where the ring alone
 * is backed whole after one lap. */
SM_FORK_PATH
static uint64_t reset_region(struct state_region *r, bool whole)
{
	uint64_t bytes = r->chunk, total = r->count * r->elem;
	uint64_t tail = (uint64_t)r->nchunks * bytes, to = 0;
	uint32_t c, last = r->nchunks, hi = r->tried_hi;

	/* A chunk never tried was never written (every store backs its
	 * chunk first): zeroes already.  The span up to the last other one
	 * is mapped anew, and so is what lies past the chunks (always
	 * private).  whole: there was no file, so no chunk was ever tried,
	 * and any may have been written.  None at or past tried_hi was ever
	 * claimed: a busy server's 16,384 slot chunks are not all read in
	 * every child. */
	for (c = 0; c < hi && c < r->nchunks; c++)
		if (r->chunk_state[c] != CHUNK_UNTRIED) {
			last = c;
			/* Not memset: libc's code is a page to fault in,
			 * here. */
			r->chunk_state[c] = CHUNK_UNTRIED;
		}
	if (hi)
		r->tried_hi = 0;
	if (whole && r->nchunks)
		last = r->nchunks - 1;
	if (last < r->nchunks)
		to = (last + 1) * bytes;
	if (tail < total)
		to = total;
	return r->off + (to < total ? to : total);
}

/* Unmap what is left of the parent's file mapping in a fork child: the
 * head and every chunk not moved out of it (the places moved chunks left
 * may hold other mappings by now), each run of chunks in one call. */
static void unmap_region_rest(const struct state_region *r, char *file,
			      size_t size)
{
	uint64_t bytes = r->chunk, run = 0, len = 0;
	uint32_t c;

	for (c = 0; c <= r->nchunks; c++) {
		uint64_t off = r->off + (uint64_t)c * bytes;
		uint8_t s = c < r->nchunks ? r->chunk_state[c] : CHUNK_FILE;

		if (s != CHUNK_FILE && s != CHUNK_BACKING) {
			if (!len)
				run = off;
			len = (off + bytes > size ? size : off + bytes) - run;
			continue;
		}
		if (len)
			munmap(file + run, len);
		len = 0;
	}
}

static void unmap_old_file(const struct state *st, char *file, size_t size)
{
	const struct state_region *ring = &st->ring_region;
	const struct state_region *slots = &st->slot_region;
	uint64_t ring_end = ring->off + (uint64_t)ring->nchunks * ring->chunk;
	uint64_t slots_end =
	    slots->off + (uint64_t)slots->nchunks * slots->chunk;

	/* The head was moved out onto st->head, like the backed chunks. */
	unmap_region_rest(ring, file, size);
	if (ring_end < slots->off)
		munmap(file + ring_end, slots->off - ring_end);
	unmap_region_rest(slots, file, size);
	if (slots_end < size)
		munmap(file + slots_end, size - slots_end);
}

SM_FORK_PATH
int state_after_fork(struct state *st, const struct config *cfg,
		     const char *prog, long pid, uint64_t start_real_ns,
		     uint64_t start_mono_ns)
{
	char *old_file = st->file;
	size_t old_size = st->size;
	bool had_file = st->durable;
	uint64_t end, slots_end;
	long r;

	st->parent_durable = had_file;
	st->refused = 0;
	st->refused_err = 0;
	st->incomplete = 0;
	st->incomplete_err = 0;

	/* The layout is the regions' (their offsets): not made again here,
	 * where its constants are a page of .rodata to fault in. */
	/* Not copied into this child, where it could be marked so. */
	if (old_file && !st->file_dontfork)
		unmap_old_file(st, old_file, old_size);
	st->file_dontfork = false;
	st->file = NULL;
	st->size = 0;
	st->durable = false;
	st->dir_pin = 0; /* the parent's ticker's fd */
	/* The parent's file and its ticker's fd: neither the child's (this
	 * page is written here anyway). */
	st->file_ino = 0;
	st->watch_fd = 0;
	st->removed_said = false;
	/* The head, private zeroes again (the parent's file no more), and
	 * nothing of the parent's slots or queue: the meter forgets every fd
	 * and starts the queue empty.  One mapping call over the head and
	 * each region's span (the reservation is laid out as the file is:
	 * state_open); what it also covers in between was never written. */
	end = reset_region(&st->ring_region, !had_file);
	slots_end = reset_region(&st->slot_region, !had_file);
	if (slots_end > end)
		end = slots_end;
	if (end < st->ring_region.off)
		end = st->ring_region.off;
	/* Same addresses: hdr, ticker and queue point where they did.  A
	 * region moved elsewhere (a second reservation the parent keeps,
	 * no system call here) was tried on 2026-12-03 and taken back: a
	 * fork in a signal handler the library cannot see, cutting one of
	 * its calls short, returned into a slot pointer on the parent's
	 * file (docs/performance.md). */
	r = raw_syscall6(SYS_mmap, (long)st->head, (long)end,
			 PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE |
				 MAP_FIXED,
			 -1, 0);
	/* Refused (the process at its map count limit, vm.max_map_count:
	 * the new mapping splits the reservation; strict overcommit): the
	 * head is still the parent's (its file's pages, shared), and every
	 * store of the child's would land in the parent's numbers.  The
	 * caller lets the child run unmetered, and says so.  Before, the
	 * children of a process at its map count limit counted into the
	 * parent's file: the parent's connections in a child's records,
	 * and the parent's recovered totals short (a helper's injection). */
	if (r < 0 && r > -4096)
		return (int)r;
	st->wipe_end = end;
	st->wipe_due = true;
	/* Out of the child's core dumps, as the parent's reservation (the
	 * new mapping lost the mark). */
	raw_dontdump(st->head, end);
	/* Nor huge pages where it stays private memory, as in the parent
	 * (raw_nohuge: the mark is lost too).  Not with a file to come,
	 * which backs what is written: a system call less in most fork
	 * children (THP "always": one 2 MiB page a child without it, none
	 * with the file). */
	if (!had_file || !cfg->state_enabled)
		raw_nohuge(st->head, end);
	/* The file, at the first tracked fd (make_file).  Tried again where
	 * the parent had none: its directory may be usable by now. */
	st->cfg = cfg;
	st->prog = prog;
	st->pid = pid;
	st->start_real_ns = start_real_ns;
	st->start_mono_ns = start_mono_ns;
	st->file_state = cfg->state_enabled ? FILE_WANTED : FILE_NONE;
	st->exposed = false; /* its own file, made as who it is */
	return 0;
}

bool state_file_wanted(const struct state *st)
{
	return LOAD(&st->file_state) == FILE_WANTED && st->cfg;
}

bool state_make_file(struct state *st)
{
	return state_file_wanted(st) && !sm_quiet() && make_file(st);
}

void state_prepare_fork(struct state *st)
{
	wipe_if_due(st);
}

SM_FORK_PATH
void state_set_status(struct state *st, enum state_status s)
{
	if (LOAD(&st->durable) && st->hdr)
		STORE(&st->hdr->status, (uint32_t)s);
}

SM_FORK_PATH
void state_remove(struct state *st)
{
	if (!LOAD(&st->durable))
		return;
	state_set_status(st, STATE_FINAL);
	/* A sandboxed thread (quiet.h) leaves the file, marked final, for
	 * the next recovery to remove. */
	if (sm_quiet())
		return;
	/* After a chroot, through the directory kept open before it. */
	if (st->dir_pin && progfd_detached()) {
		const char *base = strrchr(st->path, '/');

		raw_syscall6(SYS_unlinkat, st->dir_pin - 1,
			     (long)(base ? base + 1 : st->path), 0, 0, 0, 0);
		return;
	}
	/* Inline: errno stays the caller's. */
	raw_syscall6(SYS_unlinkat, AT_FDCWD, (long)st->path, 0, 0, 0, 0);
}

bool state_refused_take(struct state *st)
{
	return LOAD(&st->refused) &&
	       __atomic_exchange_n(&st->refused, 0u, __ATOMIC_ACQ_REL);
}

int state_refused_err(const struct state *st)
{
	return __atomic_load_n(&st->refused_err, __ATOMIC_ACQUIRE);
}

bool state_incomplete_take(struct state *st)
{
	uint32_t due = 1;

	return LOAD(&st->incomplete) == 1 &&
	       __atomic_compare_exchange_n(&st->incomplete, &due, 2u, false,
					   __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

void state_discard(struct state *st)
{
	struct state_layout l;

	if (!st->head)
		return;
	state_remove(st);
	state_layout_fill(&l, st->cap);
	if (st->file)
		unmap_old_file(st, st->file, st->size);
	raw_syscall6(SYS_munmap, (long)st->head, (long)l.file_size, 0, 0, 0,
		     0);
	memset(st, 0, sizeof(*st));
}

/* The log the header names now, while it is the process's own word, in an
 * attribute of the file that only root (trusted.*) or the file's owner
 * (user.*: the file is the owner's, 0400 once marked) can set: root's
 * recovery of the marked file writes there (recover.c).  Nothing when the
 * file system has neither; "stderr" needs none (a recovery does not write
 * to a stderr that is gone). */
void state_keep_log_path(struct state *st, const char *log)
{
	size_t len;

	if (!log)
		log = st->hdr ? st->hdr->log_path : "";
	len = strnlen(log, sizeof(st->hdr->log_path));

	if (len == 0 || len == sizeof(st->hdr->log_path) || log[0] != '/')
		return;
	if (raw_syscall6(SYS_setxattr, (long)st->path, (long)STATE_XATTR_LOG,
			 (long)log, (long)len, 0, 0) != 0)
		raw_syscall6(SYS_setxattr, (long)st->path,
			     (long)STATE_XATTR_LOG_USER, (long)log, (long)len,
			     0, 0);
}

int state_mark_exposed(struct state *st)
{
	long r;

	if (!LOAD(&st->durable) || st->exposed || !st->path[0])
		return 0;
	st->exposed = true;
	state_keep_log_path(st, NULL);
	r = raw_syscall6(SYS_fchmodat, AT_FDCWD, (long)st->path, 0400, 0, 0,
			 0);
	if (r == 0)
		return 0;
	/* Not marked (a filter that forbids it, a read-only mount...): a
	 * file root's recovery would take at its word is no file at all.
	 * The process loses only its durability.  Not found is no better:
	 * the path is absolute (config.c), so the file was removed, or is
	 * hidden from this process only (a mount namespace, a chroot the
	 * library did not see), where a recovery outside still finds it. */
	STORE(&st->file_ino, 0); /* removed by us: no alarm (state_removed) */
	if (raw_syscall6(SYS_unlinkat, AT_FDCWD, (long)st->path, 0, 0, 0, 0) ==
	    0)
		return 0;
	return (int)r;
}

void state_pin_dir(struct state *st)
{
	char dir[sizeof(st->path)], *slash;
	long fd;

	if (st->dir_pin || !LOAD(&st->durable) || !progfd_detached())
		return;
	snprintf(dir, sizeof(dir), "%s", st->path);
	slash = strrchr(dir, '/');
	if (!slash)
		return;
	*slash = slash == dir ? '/' : '\0';
	if (slash == dir)
		slash[1] = '\0';
	fd = raw_syscall6(SYS_openat, AT_FDCWD, (long)dir,
			  O_PATH | O_DIRECTORY | O_CLOEXEC, 0, 0, 0);
	if (fd >= 0)
		st->dir_pin = (int)fd + 1;
}

bool state_removed(struct state *st)
{
	uint64_t ino = LOAD(&st->file_ino);
	struct stat sb;
	long fd;

	if (!ino || st->removed_said || !LOAD(&st->durable) || !st->hdr ||
	    LOAD(&st->hdr->status) != STATE_LIVE || !progfd_detached())
		return false;
	if (!st->watch_fd) {
		fd = raw_syscall6(SYS_openat, AT_FDCWD, (long)st->path,
				  O_PATH | O_NOFOLLOW | O_CLOEXEC, 0, 0, 0);
		if (fd < 0)
			return false; /* out of sight here: tried again */
		if (fstat((int)fd, &sb) != 0 ||
		    (uint64_t)sb.st_ino != ino ||
		    (uint64_t)sb.st_dev != st->file_dev) {
			/* Another file at the path now: ours is gone, but
			 * not surely by removal (a rename): left unwatched. */
			raw_syscall6(SYS_close, fd, 0, 0, 0, 0, 0);
			STORE(&st->file_ino, 0);
			return false;
		}
		st->watch_fd = (int)fd + 1;
	}
	if (fstat(st->watch_fd - 1, &sb) != 0 || sb.st_nlink > 0)
		return false;
	/* Removed: by us, at an end that began meanwhile, is no news. */
	if (LOAD(&st->hdr->status) != STATE_LIVE || !LOAD(&st->file_ino))
		return false;
	st->removed_said = true;
	return true;
}

void state_ticker_begin(struct state_ticker *t)
{
	uint32_t a = LOAD(&t->active) & 1;

	t->buf[a ^ 1] = t->buf[a];
}

void state_ticker_add(struct state_ticker *t, const struct fd_snapshot *s)
{
	struct state_closed *next = &t->buf[(LOAD(&t->active) & 1) ^ 1];
	unsigned k =
	    (unsigned)s->kind < KIND_COUNT ? (unsigned)s->kind : KIND_UNTRACKED;

	fd_counters_add(&next->closed[k], &s->c);
	next->closed_n[k]++;
}

void state_ticker_add_unseen(struct state_ticker *t,
			     const uint64_t unseen[DIR_COUNT])
{
	struct state_closed *next = &t->buf[(LOAD(&t->active) & 1) ^ 1];
	unsigned d;

	for (d = 0; d < DIR_COUNT; d++)
		next->unseen[d] += unseen[d];
}

void state_ticker_add_strays(struct state_ticker *t,
			     const struct fd_counters *c)
{
	struct state_closed *next = &t->buf[(LOAD(&t->active) & 1) ^ 1];

	/* Summed over every kind into the totals, like a closed fd's. */
	fd_counters_add(&next->closed[KIND_UNTRACKED], c);
}

void state_ticker_commit(struct state_ticker *t, uint64_t upto)
{
	uint32_t a = LOAD(&t->active) & 1;

	t->buf[a ^ 1].upto = upto;
	STORE(&t->active, a ^ 1);
}

const struct state_closed *state_ticker_whole(const struct state_ticker *t)
{
	return &t->buf[LOAD(&t->active) & 1];
}
