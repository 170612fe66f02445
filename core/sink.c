/*
 * sink.c - the log destination (contract in sink.h).
 */
#include "sink.h"

#include "procns.h"
#include "progfd.h"
#include "quiet.h"
#include "rawsys.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int append(char *out, size_t cap, size_t *len, const char *s)
{
	size_t n = strlen(s);

	if (*len + n >= cap)
		return -ENAMETOOLONG;
	memcpy(out + *len, s, n + 1);
	*len += n;
	return 0;
}

int sink_expand(const char *tmpl, long pid, const char *prog,
		uint64_t start_s, unsigned uid, char *out, size_t cap)
{
	char tmp[CONFIG_NAME_MAX + 32];
	size_t len = 0;
	int r = 0;

	out[0] = '\0';
	for (; *tmpl && r == 0; tmpl++) {
		if (*tmpl != '%') {
			tmp[0] = *tmpl;
			tmp[1] = '\0';
		} else {
			switch (*++tmpl) {
			case 'p': snprintf(tmp, sizeof(tmp), "%ld", pid); break;
			case 'u': snprintf(tmp, sizeof(tmp), "%u", uid); break;
			case 't':
				snprintf(tmp, sizeof(tmp), "%" PRIu64, start_s);
				break;
			case 'n': {
				char *p;

				/* One file name, and a visible one: no '/', no
				 * control byte (a newline or ESC from argv[0]
				 * went into the name as it was), and not "",
				 * "." or "..", which named a hidden file or
				 * the directory above. */
				snprintf(tmp, sizeof(tmp), "%s", prog);
				for (p = tmp; *p; p++)
					if (*p == '/' || (unsigned char)*p < 0x20 ||
					    *p == 0x7f)
						*p = '_';
				if (!tmp[0] || !strcmp(tmp, ".") ||
				    !strcmp(tmp, ".."))
					snprintf(tmp, sizeof(tmp), "%s",
						 !tmp[0] ? "_" : tmp[1] ? "__" : "_");
				break;
			}
			case '%': snprintf(tmp, sizeof(tmp), "%%"); break;
			default:
				out[0] = '\0';
				return -EINVAL;
			}
		}
		r = append(out, cap, &len, tmp);
	}
	if (r)
		out[0] = '\0';
	return r;
}

void stderr_id_take(struct stderr_id *id)
{
	struct stat st;

	id->valid = progfd_stat(2, &st) == 0;
	id->dev = id->valid ? st.st_dev : 0;
	id->ino = id->valid ? st.st_ino : 0;
}

bool stderr_id_same(const struct stderr_id *id)
{
	struct stat st;

	return id->valid && progfd_stat(2, &st) == 0 && st.st_dev == id->dev &&
	       st.st_ino == id->ino;
}

/* What a warning of lost records adds when a state file holds the
 * process's numbers: recovery writes them (its exit record) later. */
static const char *kept_note(const struct sink *s)
{
	return s->kept && __atomic_load_n(s->kept, __ATOMIC_RELAXED)
		       ? " (its totals stay in its state file, for "
			 "`sockmeter recover` to write its exit record once "
			 "the log can be written)"
		       : "";
}

/* Set by a chroot of this process or of the parent it was forked from. */
static bool root_changed;

void sink_root_changed(void)
{
	__atomic_store_n(&root_changed, true, __ATOMIC_RELEASE);
}

bool sink_root_was_changed(void)
{
	return __atomic_load_n(&root_changed, __ATOMIC_ACQUIRE);
}

bool sink_in_reach(const struct sink *s)
{
	char dir[SINK_PATH_CAP];
	char *slash;
	struct stat st;

	if (s->path[0] == '\0' || s->failing || s->warned)
		return false;
	if (s->to_stderr)
		return stderr_id_same(&s->err);
	if (s->pin && s->pin_on)
		return true;
	snprintf(dir, sizeof(dir), "%s", s->path);
	slash = strrchr(dir, '/');
	if (!slash)
		return true; /* relative to the working directory */
	if (slash == dir)
		slash[1] = '\0';
	else
		*slash = '\0';
	if (stat(dir, &st) == 0)
		return S_ISDIR(st.st_mode);
	/* The default template's per-user directory is made at the write
	 * when its parent is there. */
	if (errno != ENOENT || !s->own_dir || !(slash = strrchr(dir, '/')) ||
	    slash == dir)
		return false;
	*slash = '\0';
	return stat(dir, &st) == 0 && S_ISDIR(st.st_mode);
}

static void say(struct sink *s, const char *what, int err)
{
	char msg[SINK_PATH_CAP + 640];

	if (s->warned || !s->report)
		return;
	s->warned = true;
	snprintf(msg, sizeof(msg),
		 "sockmeter: log %s: %s: %s; metering goes on, records are "
		 "lost %s%s",
		 s->path, what, strerror(err),
		 sink_root_was_changed()
			 ? "(after a chroot, the path is looked up inside the "
			   "new root)"
			 : "until it works, but for up to " SINK_HELD_MAX_TEXT
			   " of close records, which wait for it",
		 kept_note(s));
	s->report(s->ctx, msg);
}

int sink_dir_fix_mode(const char *dir, const struct stat *st)
{
	if ((st->st_mode & 0700) == 0700)
		return 0;
	if (SM_SYSCALL(SYS_fchmodat, AT_FDCWD, dir,
		       (st->st_mode & 07777) | 0700) != 0)
		return -errno;
	return 0;
}

/* The per-user directory of the default template must be ours alone. */
static int own_dir(struct sink *s, const char *dir)
{
	struct stat st;

	if (SM_SYSCALL(SYS_mkdirat, AT_FDCWD, dir, 0700) != 0 && errno != EEXIST) {
		say(s, "cannot create its directory", errno);
		return -errno;
	}
	/* Before any stat: one of a FUSE mount whose server does not
	 * answer never returns; on one, the owner is the server's word
	 * (procns_fuse_mount: a user's, made on the directory first). */
	if (procns_fuse_mount(dir) == 1) {
		say(s, "its directory is " PROCNS_FUSE_SAYS, EPERM);
		return -EPERM;
	}
	if (lstat(dir, &st) != 0) {
		say(s, "cannot inspect its directory", errno);
		return -errno;
	}
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 022)) {
		say(s, "its directory is not a directory owned by this user "
		       "and closed to others", EPERM);
		return -EPERM;
	}
	/* (A failure is left to the open that follows, which says so: a
	 * read-only one of root's stays usable, as before.) */
	(void)sink_dir_fix_mode(dir, &st);
	return 0;
}

/* A relative path is taken from the directory the program started in: a
 * later chdir() must not scatter one process's log over two files. */
static int make_absolute(char *path, size_t cap)
{
	char cwd[CONFIG_PATH_MAX];
	char rel[CONFIG_PATH_MAX + 128];

	if (!getcwd(cwd, sizeof(cwd)))
		return -errno;
	snprintf(rel, sizeof(rel), "%s", path);
	if ((size_t)snprintf(path, cap, "%s/%s", cwd, rel) >= cap) {
		snprintf(path, cap, "%s", rel);
		return -ENAMETOOLONG;
	}
	return 0;
}

int sink_anchor(char *tmpl, size_t cap)
{
	char cwd[CONFIG_PATH_MAX], out[CONFIG_PATH_MAX + 128];
	size_t n = 0, i;
	int saved = errno;

	if (tmpl[0] == '/' || tmpl[0] == '\0' || strcmp(tmpl, "stderr") == 0)
		return 0;
	if (!getcwd(cwd, sizeof(cwd))) {
		int r = -errno;

		errno = saved;
		return r;
	}
	for (i = 0; cwd[i] && n + 2 < sizeof(out); i++) {
		if (cwd[i] == '%')
			out[n++] = '%'; /* a '%' of the directory is itself */
		out[n++] = cwd[i];
	}
	if (cwd[i] || (size_t)snprintf(out + n, sizeof(out) - n, "/%s", tmpl) >=
			      sizeof(out) - n ||
	    strlen(out) >= cap)
		return -ENAMETOOLONG;
	memcpy(tmpl, out, strlen(out) + 1);
	return 0;
}

int sink_init(struct sink *s, const char *tmpl, long pid, const char *prog,
	      uint64_t start_s, config_report_fn report, void *ctx)
{
	char dir[sizeof(s->path)];
	char *slash;
	int r;

	const bool *kept = s->kept;

	memset(s, 0, sizeof(*s));
	s->kept = kept;
	s->report = report;
	s->ctx = ctx;
	if (strcmp(tmpl, "stderr") == 0) {
		s->to_stderr = true;
		stderr_id_take(&s->err);
		snprintf(s->path, sizeof(s->path), "stderr");
		return 0;
	}
	r = sink_expand(tmpl, pid, prog, start_s,
			procns_uid_outer((unsigned)geteuid()), s->path,
			sizeof(s->path));
	if (r == 0 && s->path[0] != '/')
		r = make_absolute(s->path, sizeof(s->path));
	if (r) {
		/* Name the template in the one warning, then drop records:
		 * never create a file literally named after it. */
		snprintf(s->path, sizeof(s->path), "%s", tmpl);
		say(s, "bad path template", -r);
		s->path[0] = '\0';
		return r;
	}
	if (strncmp(tmpl, CONFIG_DEFAULT_DIR "/",
		    strlen(CONFIG_DEFAULT_DIR "/")) != 0)
		return 0;
	snprintf(dir, sizeof(dir), "%s", s->path);
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		r = own_dir(s, dir);
		/* Refused: records are dropped, and the log counts as
		 * failing, as a write it refused would: at the exit the
		 * state file is kept (UNWRITTEN) for a recovery once the
		 * directory is usable, and a recovery writing into it keeps
		 * the file too.  Before, the exit took the refused log for
		 * none at all and removed the file with every number (a
		 * read-only /tmp, a directory another user made: a helper's
		 * sweep of containers). */
		if (r) {
			s->path[0] = '\0';
			s->failing = true;
			s->last_err = -r;
		}
		s->own_dir = r == 0;
		return r;
	}
	return 0;
}

/* The default template's directory (own_dir's) into dir (of the path's
 * size); false when the log has none. */
static bool own_dir_path(const struct sink *s, char *dir)
{
	char *slash;

	if (!s->own_dir)
		return false;
	memcpy(dir, s->path, sizeof(s->path));
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return false;
	*slash = '\0';
	return true;
}

/* The default template's directory is gone (a cleaner of /tmp, a user's
 * rm -r): made again, with the checks of the first time, so that the
 * records go on rather than being lost until a recovery. */
static bool remake_own_dir(struct sink *s)
{
	char dir[sizeof(s->path)];

	if (!own_dir_path(s, dir) || procns_fuse_mount(dir) == 1 ||
	    access(dir, F_OK) == 0 || errno != ENOENT)
		return false;
	return own_dir(s, dir) == 0;
}

/* Whether the default template's directory, checked when the log was
 * first opened, is now a FUSE mount: removed since (a cleaner of /tmp)
 * and made again, by a user, with a server that may never answer the
 * open of each batch (procns_fuse_mount; a reviewer's case). */
static bool own_dir_now_fuse(const struct sink *s)
{
	char dir[sizeof(s->path)];

	return own_dir_path(s, dir) && procns_fuse_mount(dir) == 1;
}

/* done (may be NULL): how many bytes were written, added to it. */
static int write_all(int fd, const char *buf, size_t len, size_t *done)
{
	while (len > 0) {
		long n = SM_SYSCALL(SYS_write, fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO;
		buf += n;
		len -= (size_t)n;
		if (done)
			*done += (size_t)n;
	}
	return 0;
}

static uint64_t mono_ms(void);

/* How long a write to fd 2 may wait for room (sink_stderr_wait); -1: as
 * long as it takes.  And the process that set it: a fork child made
 * while it was set (a program thread forking as another exits) must not
 * keep it for life.  Atomic. */
static int stderr_wait_ms = -1;
static long stderr_wait_pid;

void sink_stderr_wait(int ms)
{
	__atomic_store_n(&stderr_wait_pid, (long)SM_SYSCALL(SYS_getpid),
			 __ATOMIC_RELAXED);
	__atomic_store_n(&stderr_wait_ms, ms, __ATOMIC_RELAXED);
}

/* The wait in force for this process. */
static int stderr_wait(void)
{
	int ms = __atomic_load_n(&stderr_wait_ms, __ATOMIC_RELAXED);

	return ms >= 0 && __atomic_load_n(&stderr_wait_pid, __ATOMIC_RELAXED) ==
				  (long)SM_SYSCALL(SYS_getpid)
		       ? ms
		       : -1;
}

/*
 * Write to fd 2 waiting at most ms in all: the program's file description,
 * whose O_NONBLOCK is the program's to see, so each piece waits for room
 * first (ppoll) and is small enough not to block once there is some: a
 * pipe with room takes PIPE_BUF bytes whole; a terminal, which says it
 * has room with any room at all (a pty whose reader stalled held a
 * 4096-byte write), takes 256 bytes, n_tty's wake-up mark; a socket is
 * sent to with MSG_DONTWAIT (only a socket: a seccomp filter may refuse
 * sendto and allow write).  A regular file or anything else never waits:
 * one write.  -EAGAIN when the time is up.
 */
static int write_bounded(int fd, const char *buf, size_t len, size_t *done,
			 int ms)
{
	uint64_t end = mono_ms() + (uint64_t)ms, now;
	struct stat st;
	size_t piece;
	bool sock;

	if (fstat(fd, &st) != 0)
		return -errno;
	sock = S_ISSOCK(st.st_mode);
	if (S_ISFIFO(st.st_mode))
		piece = PIPE_BUF;
	else if (S_ISCHR(st.st_mode))
		piece = 256;
	else if (sock)
		piece = len;
	else
		return write_all(fd, buf, len, done);
	while (len > 0) {
		struct pollfd p = { .fd = fd, .events = POLLOUT };
		struct timespec ts;
		size_t n = len < piece ? len : piece;
		long r;

		now = mono_ms();
		if (now >= end)
			return -EAGAIN;
		ts.tv_sec = (time_t)((end - now) / 1000u);
		ts.tv_nsec = (long)((end - now) % 1000u) * 1000000L;
		r = SM_SYSCALL(SYS_ppoll, &p, 1, &ts, NULL, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return -EAGAIN;
		r = sock ? SM_SYSCALL(SYS_sendto, fd, buf, n, MSG_DONTWAIT,
				      NULL, 0)
			 : SM_SYSCALL(SYS_write, fd, buf, n);
		if (r < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return -EIO;
		buf += r;
		len -= (size_t)r;
		if (done)
			*done += (size_t)r;
	}
	return 0;
}

/* Consume sig if our write raised it (it was not pending before). */
static void swallow(int sig, const sigset_t *before, const sigset_t *after)
{
	struct timespec zero = { 0, 0 };
	sigset_t one;

	if (!sigismember(after, sig) || sigismember(before, sig))
		return;
	sigemptyset(&one);
	sigaddset(&one, sig);
	sigtimedwait(&one, NULL, &zero);
}

static int open_append(const char *path)
{
	return (int)SM_SYSCALL(SYS_openat, AT_FDCWD, path,
			    O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC |
				    O_NOFOLLOW | O_NONBLOCK | O_NOCTTY,
			    0600);
}

static int open_replace(const char *path)
{
	return (int)SM_SYSCALL(SYS_openat, AT_FDCWD, path,
			    O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC |
				    O_NOFOLLOW | O_NONBLOCK | O_NOCTTY,
			    0644);
}

/* Around a write of ours: SIGPIPE and SIGXFSZ blocked, so that it cannot
 * kill the host, and swallowed when it raised them (guard_end). */
struct write_guard {
	sigset_t old, before;
};

static void guard_begin(struct write_guard *g)
{
	sigset_t block;

	sigemptyset(&block);
	sigaddset(&block, SIGPIPE);
	sigaddset(&block, SIGXFSZ);
	raw_sigmask(SIG_BLOCK, &block, &g->old);
	sigpending(&g->before);
}

static void guard_end(struct write_guard *g)
{
	sigset_t after;

	sigpending(&after);
	swallow(SIGPIPE, &g->before, &after);
	swallow(SIGXFSZ, &g->before, &after);
	raw_sigmask(SIG_SETMASK, &g->old, NULL);
}

/* Write buf to fd with SIGPIPE and SIGXFSZ blocked, so our own write
 * cannot kill the host; swallow the ones it raised.  A write that failed
 * half-way (a full disk) left part of a batch: with cut >= 0 the file is
 * cut back to that size, so the next batch cannot glue onto a torn record.
 * done (may be NULL): the bytes that stayed written, added to it.
 * Returns 0 or a negative errno. */
static int guarded_write(int fd, const char *buf, size_t len, off_t cut,
			 size_t *done, int wait_ms)
{
	struct write_guard g;
	size_t wrote = 0;
	int r;

	guard_begin(&g);
	r = wait_ms >= 0 ? write_bounded(fd, buf, len, &wrote, wait_ms)
			 : write_all(fd, buf, len, &wrote);
	if (r < 0 && cut >= 0 && SM_SYSCALL(SYS_ftruncate, fd, cut) == 0)
		wrote = 0;
	if (done)
		*done += wrote;
	guard_end(&g);
	return r;
}

/* A write to fd 2 that failed part-way left a line torn there (a
 * non-blocking pipe that filled, a bounded wait that ran out): this
 * process's next write ends it with a newline first, so that no record or
 * warning is glued onto it (a reviewer's run: one record a tear lost so,
 * yet counted as written).  The pid that tore it: a fork child leaves it
 * to its parent (both would end it, an empty line).  Atomic. */
static long stderr_torn_pid;

/* Write to fd, which is the program's fd 2 or a copy of it. */
static int stderr_write_fd(int fd, const char *buf, size_t len, size_t *done)
{
	int r = 0, wait = stderr_wait();
	long torn = __atomic_load_n(&stderr_torn_pid, __ATOMIC_RELAXED);
	size_t wrote = 0;

	if (torn && torn == (long)SM_SYSCALL(SYS_getpid)) {
		r = guarded_write(fd, "\n", 1, -1, NULL, wait);
		if (r == 0)
			__atomic_store_n(&stderr_torn_pid, 0, __ATOMIC_RELAXED);
	}
	if (r == 0)
		r = guarded_write(fd, buf, len, -1, &wrote, wait);
	if (r != 0 && wrote > 0 && buf[wrote - 1] != '\n')
		__atomic_store_n(&stderr_torn_pid,
				 (long)SM_SYSCALL(SYS_getpid), __ATOMIC_RELAXED);
	if (done)
		*done += wrote;
	return r;
}

/* Write to the program's fd 2 (through our own copy of it when our fd
 * table is private). */
static int write_stderr(const char *buf, size_t len, size_t *done)
{
	int fd = progfd_get(2), r;

	if (fd < 0)
		return fd;
	r = stderr_write_fd(fd, buf, len, done);
	progfd_put(2, fd);
	return r;
}

/* One batch for the file, as progfd_run runs it: raw calls only. */
struct batch {
	const char *path;
	const char *buf;
	size_t len;
	uint64_t max_size;
	unsigned keep;
	size_t done; /* bytes that stayed written (the child shares it) */
	int rotate_err; /* the rotation's rename was refused: its errno */
	void (*progress)(void *ctx, size_t done); /* struct sink's */
	void (*aim)(void *ctx, size_t done, uint64_t dev, uint64_t ino,
		    uint64_t size); /* struct sink's */
	void *progress_ctx;
	bool turn_lost; /* given up after ROTATION_WAIT_MS of rotations */
	int wait_ms;    /* a FIFO's wait for room (fifo_batch) */
	bool fifo_torn; /* a line left torn in the FIFO (fifo_batch) */
};

/* Before a part of b is written to the file st describes. */
static void batch_aim(const struct batch *b, const struct stat *st)
{
	if (b->aim)
		b->aim(b->progress_ctx, b->done, (uint64_t)st->st_dev,
		       (uint64_t)st->st_ino, (uint64_t)st->st_size);
}

/* After a part of b reached the log. */
static void batch_progress(const struct batch *b)
{
	/* (A batch run again, after its directory was made again or a
	 * full fd table, counts on from what its first run wrote.) */
	if (b->progress && b->done)
		b->progress(b->progress_ctx,
			    b->done < b->len ? b->done : b->len);
}

/* PATH.n for n > 0, PATH for 0. */
static void numbered(char *out, size_t cap, const char *path, unsigned n)
{
	if (n)
		snprintf(out, cap, "%s.%u", path, n);
	else
		snprintf(out, cap, "%s", path);
}

/*
 * Shift the rotated set: PATH.keep-1 -> PATH.keep (replacing the oldest),
 * ..., PATH -> PATH.1; with keep 0 the file is simply removed.  The caller
 * holds the lock on PATH's current file.
 */
static int rotate(const char *path, unsigned keep)
{
	char from[SINK_PATH_CAP + 16], to[SINK_PATH_CAP + 16];
	struct stat st;
	unsigned n, gap;

	if (keep == 0)
		return SM_SYSCALL(SYS_unlinkat, AT_FDCWD, path, 0) == 0 ? 0 : -errno;
	/* Only the files up to the first missing one need to move. */
	for (gap = 1; gap < keep; gap++) {
		numbered(to, sizeof(to), path, gap);
		if (fstatat(AT_FDCWD, to, &st, AT_SYMLINK_NOFOLLOW) != 0 &&
		    errno == ENOENT)
			break;
	}
	for (n = gap; n > 0; n--) {
		numbered(from, sizeof(from), path, n - 1);
		numbered(to, sizeof(to), path, n);
		if (SM_SYSCALL(SYS_renameat, AT_FDCWD, from, AT_FDCWD, to) != 0 &&
		    (errno != ENOENT || n == 1))
			return -errno;
	}
	return 0;
}

/* True when path names the file fd is open on (nobody rotated it away). */
static bool still_named(int fd, const char *path, struct stat *fst)
{
	struct stat pst;

	return fstat(fd, fst) == 0 &&
	       fstatat(AT_FDCWD, path, &pst, AT_SYMLINK_NOFOLLOW) == 0 &&
	       pst.st_dev == fst->st_dev && pst.st_ino == fst->st_ino;
}

/*
 * How much of buf (whole lines) fits in room bytes: all of it, the lines
 * up to the last newline that fits, or 0 when not even the first does.
 */
static size_t fitting(const char *buf, size_t len, uint64_t room)
{
	size_t n;

	if (len <= room)
		return len;
	for (n = (size_t)room; n > 0; n--)
		if (buf[n - 1] == '\n')
			return n;
	return 0;
}

/* The length of buf's first line, its newline included. */
static size_t first_line(const char *buf, size_t len)
{
	const char *nl = memchr(buf, '\n', len);

	return nl ? (size_t)(nl - buf) + 1 : len;
}

/* Monotonic milliseconds, by a system call of our own (raw calls only
 * here: see append_batch's caller). */
static uint64_t mono_ms(void)
{
	struct timespec ts = { 0, 0 };

	raw_syscall6(SYS_clock_gettime, CLOCK_MONOTONIC, (long)&ts, 0, 0, 0,
		     0);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* The length of buf's longest head of whole lines of at most cap bytes;
 * of a first line longer than that, cap bytes of it. */
static size_t lines_within(const char *buf, size_t len, size_t cap)
{
	size_t n;

	if (len <= cap)
		return len;
	for (n = cap; n > 0; n--)
		if (buf[n - 1] == '\n')
			return n;
	return cap;
}

/*
 * Write b to a log path that is a FIFO (fd, opened non-blocking): in
 * pieces of whole lines of at most PIPE_BUF bytes, which a pipe takes
 * whole or not at all, so that a full pipe tears no record and another
 * writer's pieces fall between records, never inside one (only a record
 * longer than PIPE_BUF goes in pieces that may be parted); each piece
 * counted written as it lands; waiting for room FIFO_WAIT_MS in all, or
 * b->wait_ms when that is >= 0 (the writer of an exit or exec record:
 * sink_stderr_wait).  Bounded on the ticker too: it has other work (the
 * process's end when its last thread ends with a raw exit, interval
 * records), and the close records that did not go are held for the next
 * batch like any refused ones (a reviewer's reader that never read kept
 * such a process alive for as long as it lived).  Before, one write took
 * what the pipe had room for and the next batch began on the torn line: a
 * slow reader got records glued together, counted as written (a helper's
 * run: 2 to 16 in 1,500).  b->fifo_torn: a line was left torn there (in: ended
 * first, by a newline of its own; out: this write left one).  0, -EAGAIN
 * when the time ran out, or -errno.
 */
#define FIFO_WAIT_MS 1000

static int fifo_batch(int fd, struct batch *b)
{
	const char *buf = b->buf + b->done;
	size_t len = b->done < b->len ? b->len - b->done : 0;
	int wait = b->wait_ms >= 0 ? b->wait_ms : FIFO_WAIT_MS;
	uint64_t end = mono_ms() + (uint64_t)wait;
	struct write_guard g;
	/* Only a line an earlier batch left torn: within this one, a record
	 * longer than PIPE_BUF goes on in its next piece. */
	bool lead = b->fifo_torn;
	int r = 0;

	guard_begin(&g);
	while (len > 0 || lead) {
		const char *p = lead ? "\n" : buf;
		size_t n = lead ? 1 : lines_within(buf, len, PIPE_BUF);
		struct pollfd pf = { .fd = fd, .events = POLLOUT };
		struct timespec ts;
		uint64_t now;
		long w = SM_SYSCALL(SYS_write, fd, p, n);

		if (w > 0 && lead) {
			lead = false;
			b->fifo_torn = false;
			continue;
		}
		if (w > 0) {
			buf += w;
			len -= (size_t)w;
			b->done += (size_t)w;
			b->fifo_torn = buf[-1] != '\n';
			batch_progress(b);
			continue;
		}
		if (w == 0) {
			r = -EIO;
			break;
		}
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN) {
			r = -errno;
			break;
		}
		now = mono_ms();
		if (now >= end) {
			r = -EAGAIN;
			break;
		}
		ts.tv_sec = (time_t)((end - now) / 1000u);
		ts.tv_nsec = (long)((end - now) % 1000u) * 1000000L;
		w = SM_SYSCALL(SYS_ppoll, &pf, 1, &ts, NULL, 0);
		if (w < 0 && errno != EINTR) {
			r = -errno;
			break;
		}
		if (w == 0) {
			r = -EAGAIN;
			break;
		}
	}
	guard_end(&g);
	return r;
}

/* How long a batch waits for its turn at a log that others keep rotating
 * before it is given up (refused, its close records counted as dropped). */
#define ROTATION_WAIT_MS 5000

/*
 * Append one batch.  With a size limit, processes sharing the path take
 * turns under an exclusive flock on the current file, check that the path
 * still names it (another one may have rotated it while they waited),
 * write the whole lines that fit, and rotate it when the rest would pass
 * the limit: no record is written into a file being renamed, none is lost,
 * none is torn or split over two files.  A file passes the limit only when
 * a single record is larger than it.  A process that finds the file
 * rotated away again and again (three processes sharing a 4 KiB
 * max_size: each rotation is a few records) tries again for up to
 * ROTATION_WAIT_MS: after 100 tries it gave up, and a helper's run at
 * 1,000 closes/s per process lost up to half of its close records
 * ("Resource temporarily unavailable"), some of them in no count.
 */
static int append_batch(void *p)
{
	struct batch *b = p;
	const char *buf = b->buf;
	size_t len = b->len, n;
	struct stat st;
	uint64_t since = 0;
	int tries = 0, fd, r, rot;

	for (;;) {
		fd = open_append(b->path);
		if (fd < 0)
			return -errno;
		/* A FIFO (no size, no rotation): whole lines at a time. */
		if (fstat(fd, &st) != 0) {
			r = -errno;
			SM_SYSCALL(SYS_close, fd);
			return r;
		}
		if (S_ISFIFO(st.st_mode)) {
			r = fifo_batch(fd, b);
			SM_SYSCALL(SYS_close, fd);
			return r;
		}
		if (!b->max_size) {
			batch_aim(b, &st);
			r = guarded_write(fd, buf, len, st.st_size, &b->done,
					  -1);
			/* Counted written before the close: a process killed
			 * in it (a kill of the writing child) left records in
			 * the log counted as dropped too (a helper's). */
			batch_progress(b);
			SM_SYSCALL(SYS_close, fd);
			return r;
		}
		/* (A signal's EINTR is no failure of the log's; a few
		 * times, not for ever.) */
		for (n = 0; (r = (int)SM_SYSCALL(SYS_flock, fd, LOCK_EX)) != 0 &&
			    errno == EINTR && n < EINTR_TRIES;
		     n++)
			;
		if (r != 0) {
			r = -errno;
			SM_SYSCALL(SYS_close, fd);
			return r;
		}
		if (!still_named(fd, b->path, &st)) {
			/* Rotated while we waited: the new file, again.  The
			 * clock is read from the 100th try on only. */
			SM_SYSCALL(SYS_close, fd);
			if (++tries == 100)
				since = mono_ms();
			else if (tries > 100 &&
				 mono_ms() - since > ROTATION_WAIT_MS) {
				b->turn_lost = true;
				return -EAGAIN;
			}
			continue;
		}
		n = (uint64_t)st.st_size >= b->max_size
			    ? 0
			    : fitting(buf, len, b->max_size - (uint64_t)st.st_size);
		if (n == 0 && st.st_size == 0)
			n = first_line(buf, len); /* one record over the limit */
		if (n)
			batch_aim(b, &st);
		r = n ? guarded_write(fd, buf, n, st.st_size, &b->done, -1) : 0;
		if (n && r == 0)
			batch_progress(b);
		buf += n;
		len -= n;
		rot = r == 0 && len > 0 ? rotate(b->path, b->keep) : 0;
		if (rot == -ENOENT) {
			/* Renamed or removed by someone who takes no lock
			 * (logrotate, rm) since we looked: the file at the
			 * path, made again, for the rest. */
			SM_SYSCALL(SYS_close, fd);
			continue;
		}
		r = r ? r : rot;
		if (rot && rot != -EAGAIN && !b->rotate_err) {
			/* The file takes writes but cannot be renamed (its
			 * directory closed to this uid, a read-only bind of
			 * it): the rest goes on into it, past max_size, said
			 * once, rather than every record after the first
			 * max_size bytes lost (a helper's run: 26 of 600). */
			struct stat now;

			b->rotate_err = -r;
			r = fstat(fd, &now) == 0 ? 0 : -errno;
			if (r == 0)
				batch_aim(b, &now);
			r = r ? r : guarded_write(fd, buf, len, now.st_size,
						  &b->done, -1);
			if (r == 0)
				batch_progress(b);
			len = 0;
		}
		SM_SYSCALL(SYS_close, fd); /* also the lock */
		if (r || len == 0)
			return r;
	}
}

/* The whole content, atomically: PATH.tmp written, then renamed. */
static int replace_batch(void *p)
{
	const struct batch *b = p;
	char tmp[SINK_PATH_CAP + 8];
	int fd, r;

	snprintf(tmp, sizeof(tmp), "%s.tmp", b->path);
	fd = open_replace(tmp);
	if (fd < 0)
		return -errno;
	r = guarded_write(fd, b->buf, b->len, -1, NULL, -1);
	SM_SYSCALL(SYS_close, fd);
	if (r == 0 && SM_SYSCALL(SYS_renameat, AT_FDCWD, tmp, AT_FDCWD,
			      b->path) != 0)
		r = -errno;
	return r;
}

bool sink_warn(const struct stderr_id *id, const char *msg)
{
	char line[1024];
	size_t len = strlen(msg), i;
	int saved = errno, r;

	if (!stderr_id_same(id))
		return false;
	if (len > sizeof(line) - 1) {
		/* A huge path would push the reason, at the end, out of the
		 * line: keep the start and the end. */
		size_t head = 256, tail = sizeof(line) - 1 - head - 3;

		memcpy(line, msg, head);
		memcpy(line + head, "...", 3);
		memcpy(line + head + 3, msg + len - tail, tail);
		len = sizeof(line) - 1;
	} else {
		memcpy(line, msg, len);
	}
	/* One line, and no escape sequence of a file name reaches a
	 * terminal (syslog_format does the same). */
	for (i = 0; i < len; i++)
		if ((unsigned char)line[i] < 0x20 || line[i] == 0x7f)
			line[i] = '?';
	line[len++] = '\n';
	r = write_stderr(line, len, NULL);
	errno = saved;
	return r == 0;
}

/* The outcome r of one batch: the first failure of each run of failures
 * is reported (a success ends the run); errno is put back to saved.
 * Returns r. */
static int settle(struct sink *s, int r, int saved)
{
	struct stat st;

	/* (O_NOFOLLOW: /dev/stderr, /dev/stdout, a link of a user's; not a
	 * loop among the directories, which says ELOOP too.) */
	if (r < 0 && !s->failing)
		say(s,
		    r == -ELOOP && !s->to_stderr &&
				    lstat(s->path, &st) == 0 &&
				    S_ISLNK(st.st_mode)
			    ? "cannot write (its last part is a symbolic link, "
			      "which a log is never opened through; for fd 2, "
			      "the path is `stderr`)"
			: r == -EAGAIN && s->turn_lost
			    ? "cannot write: the other processes that share "
			      "it rotated it again and again for 5 s (a "
			      "max_size that small files fill at once), and "
			      "this batch never had its turn"
			: r == PROGFD_KILLED
			    ? "cannot write: the short-lived child that "
			      "writes it for this process was killed"
			    : "cannot write",
		    -r);
	s->failing = r < 0;
	s->last_err = r < 0 ? -r : 0;
	if (r == 0)
		s->warned = false;
	errno = saved;
	return r;
}

/* Is the root directory the one the log was pinned under? */
static bool same_root(const struct sink *s)
{
	struct stat st;

	return stat("/", &st) == 0 && (uint64_t)st.st_dev == s->pin_root_dev &&
	       (uint64_t)st.st_ino == s->pin_root_ino;
}

/*
 * The pinned file, when its path names another file now or none: rotated
 * (logrotate's create: renamed, a new file made at the path) or removed.
 * The file at the path is taken when this uid may open it (logrotate's
 * `create MODE OWNER`, a directory it may write).  Else the records go on
 * into the file it had while that file still has a name: said once when
 * the path names another file at two writes (rotated: the rotated file
 * gets them until rotation removes it), not when it names none or cannot
 * be looked at by this uid (a directory closed to it).  They are refused
 * once the file has no name left: written into a file nobody can see,
 * they would be
 * lost without a word, and the state file's recovery could not tell (a
 * helper's nginx workers wrote their records, exit record included, into
 * a deleted log).  Not after a chroot or a change of root, where the path
 * no longer leads to the file.  Returns the fd to write to (st: its
 * stat), or a negative errno.
 */
static int pinned_fd(struct sink *s, struct stat *st)
{
	int fd = s->pin - 1, nfd;
	struct stat nst;
	char what[SINK_PATH_CAP + 320];
	bool other;

	if (still_named(fd, s->path, st))
		return fd;
	if (fstat(fd, st) != 0)
		return -errno;
	if (!same_root(s))
		return fd;
	other = fstatat(AT_FDCWD, s->path, &nst, AT_SYMLINK_NOFOLLOW) == 0;
	if (!other && errno != ENOENT && st->st_nlink > 0)
		return fd; /* not to be looked at by this uid */
	nfd = open_append(s->path);
	if (nfd >= 0 && still_named(nfd, s->path, &nst) &&
	    S_ISREG(nst.st_mode)) {
		SM_SYSCALL(SYS_close, fd);
		s->pin = nfd + 1;
		s->pin_said = false;
		s->pin_refused = false;
		*st = nst;
		return nfd;
	}
	if (nfd >= 0)
		SM_SYSCALL(SYS_close, nfd);
	if (st->st_nlink == 0) {
		snprintf(what, sizeof(what),
			 "removed while the process kept it open (it changed "
			 "uid), and uid %u cannot open it again",
			 (unsigned)geteuid());
		say(s, what, ENOENT);
		return -ENOENT;
	}
	if (other && !s->pin_said && s->report) {
		/* Said at the second write that finds it refused, not the
		 * first: logrotate and install(1) make the new file as root
		 * and give it away a moment later (fchown), and a write in
		 * that moment took the new file for root's (the records then
		 * followed it at the next write; only the warning was wrong:
		 * t_pinned_log_rotated, on a loaded machine). */
		if (!s->pin_refused) {
			s->pin_refused = true;
			return fd;
		}
		snprintf(what, sizeof(what),
			 "sockmeter: log %s: rotated while the process kept it "
			 "open (it changed uid), and uid %u cannot open the new "
			 "one: records go on into the rotated file, and are "
			 "refused once that is removed",
			 s->path, (unsigned)geteuid());
		s->report(s->ctx, what);
		s->pin_said = true;
	}
	return fd;
}

/* A batch to the file sink_pin opened: appended as a whole. */
static int pinned_write(struct sink *s, const char *buf, size_t len,
			size_t *done, struct batch *b)
{
	int fd = s->pin - 1;
	struct stat st;

	/* Every thread sandboxed (quiet.h): the write alone (the ticker
	 * keeps every signal blocked). */
	if (sm_quiet())
		return write_all(fd, buf, len, done);
	if (s->to_stderr)
		return stderr_write_fd(fd, buf, len, done);
	fd = pinned_fd(s, &st);
	if (fd < 0)
		return fd;
	if (S_ISFIFO(st.st_mode))
		return fifo_batch(fd, b);
	if (s->aim)
		s->aim(s->progress_ctx, *done, (uint64_t)st.st_dev,
		       (uint64_t)st.st_ino, (uint64_t)st.st_size);
	return guarded_write(fd, buf, len, st.st_size, done, -1);
}

int sink_pin(struct sink *s, bool on)
{
	int saved = errno, fd;

	if (s->pin && on)
		s->pin_on = true;
	if (s->pin || s->path[0] == '\0')
		return 0;
	if (!progfd_detached())
		return -EINVAL;
	if (s->to_stderr) {
		/* A copy of the program's stderr, while it is the one we
		 * were given. */
		if (!stderr_id_same(&s->err))
			return 0;
		fd = progfd_keep(2);
		if (fd < 0)
			return fd;
		s->pin = fd + 1;
		s->pin_on = on;
		return 0;
	}
	fd = open_append(s->path);
	if (fd < 0)
		return settle(s, -errno, saved);
	s->pin = fd + 1;
	s->pin_on = on;
	{
		struct stat root;

		if (stat("/", &root) == 0) {
			s->pin_root_dev = (uint64_t)root.st_dev;
			s->pin_root_ino = (uint64_t)root.st_ino;
		}
	}
	errno = saved;
	return 0;
}

int sink_write(struct sink *s, const char *buf, size_t len)
{
	struct batch b = { .path = s->path,
			   .buf = buf,
			   .len = len,
			   .max_size = s->max_size,
			   .keep = s->keep,
			   .progress = s->progress,
			   .aim = s->aim,
			   .progress_ctx = s->progress_ctx,
			   .wait_ms = stderr_wait() };
	int saved = errno;
	int r;

	/* A line this process left torn in a FIFO: its own to end (a fork
	 * child's first batch leaves it to the parent, as for fd 2). */
	b.fifo_torn = s->fifo_torn_pid &&
		      s->fifo_torn_pid == (long)SM_SYSCALL(SYS_getpid);
	s->batch_done = 0;
	if (s->path[0] == '\0' || len == 0)
		return 0;
	if (s->pin_on && progfd_detached())
		r = pinned_write(s, buf, len, &b.done, &b);
	else if (s->to_stderr)
		/* Only while fd 2 is still the stderr we were given. */
		r = stderr_id_same(&s->err) ? write_stderr(buf, len, &b.done)
					    : -EBADF;
	else if (sm_quiet())
		r = -EPERM; /* no file may be opened: the state file keeps it */
	else if (own_dir_now_fuse(s))
		r = -EPERM; /* kept, as for any refused write */
	else {
		r = progfd_run(append_batch, &b);
		/* (Not once part of it is in a file: written again.) */
		if (r == -ENOENT && b.done == 0 && remake_own_dir(s))
			r = progfd_run(append_batch, &b);
		/* Its writer killed once the batch was in the file. */
		if (r == PROGFD_KILLED && b.done >= len)
			r = 0;
	}
	s->batch_done = b.done < len ? b.done : len;
	s->turn_lost = b.turn_lost;
	s->fifo_torn_pid = b.fifo_torn ? (long)SM_SYSCALL(SYS_getpid) : 0;
	if (b.rotate_err && !s->rotate_warned && s->report) {
		char msg[2 * SINK_PATH_CAP + 256];

		s->rotate_warned = true;
		snprintf(msg, sizeof(msg),
			 "sockmeter: log %s: cannot rotate it (renaming it to "
			 "%s.1: %s); the records go on into it, past max_size",
			 s->path, s->path, strerror(b.rotate_err));
		s->report(s->ctx, msg);
	}
	return settle(s, r, saved);
}

int sink_replace(struct sink *s, const char *buf, size_t len)
{
	struct batch b = { .path = s->path, .buf = buf, .len = len };
	int saved = errno;

	if (s->to_stderr || s->path[0] == '\0')
		return sink_write(s, buf, len);
	if (sm_quiet())
		return settle(s, -EPERM, saved);
	return settle(s, progfd_run(replace_batch, &b), saved);
}

void sink_set_rotation(struct sink *s, uint64_t max_size, unsigned keep)
{
	s->max_size = max_size;
	s->keep = keep;
}

/* The effective ids can be changed back: a real or saved id differs. */
static bool creds_reversible(void)
{
	uid_t ru, eu, su;
	gid_t rg, eg, sg;

	if (getresuid(&ru, &eu, &su) != 0 || getresgid(&rg, &eg, &sg) != 0)
		return false;
	return ru != eu || su != eu || rg != eg || sg != eg;
}

int sink_reinit_for_uid(struct sink *s, const char *tmpl, long pid,
			const char *prog, uint64_t start_s)
{
	char dir[sizeof(s->path)], *slash;
	char msg[CONFIG_PATH_MAX + 384];
	struct stat st;

	if (s->to_stderr || s->pin_on)
		return 0; /* a pinned file stays writable: it is open */
	if (strstr(tmpl, "%u"))
		return sink_init(s, tmpl, pid, prog, start_s, s->report,
				 s->ctx);
	if (s->path[0] == '\0')
		return 0;
	/* The file if it exists, else its directory, as the new uid. */
	snprintf(dir, sizeof(dir), "%s", s->path);
	slash = strrchr(dir, '/');
	if (slash && slash != dir)
		*slash = '\0';
	if (lstat(s->path, &st) == 0
		    ? faccessat(AT_FDCWD, s->path, W_OK, AT_EACCESS) == 0
		    : faccessat(AT_FDCWD, dir, W_OK | X_OK, AT_EACCESS) == 0)
		return 0;
	/* Opened before the change (sm_creds_changing): it stays
	 * writable through that fd. */
	if (s->pin) {
		s->pin_on = true;
		return 0;
	}
	/* A change with a way back (the real or saved ids are not the
	 * effective ones: seteuid, as varnish's manager does between its
	 * privileged steps) may well be undone before the next write: no
	 * warning now, a write that fails says so then (settle). */
	if (creds_reversible())
		return 0;
	/* One warning for a log: one that already failed (a missing
	 * directory...) said so when it did. */
	if (s->report && !s->warned) {
		snprintf(msg, sizeof(msg),
			 "sockmeter: log %s: not writable by uid %u gid %u, "
			 "which the process changed to; records are lost%s",
			 s->path, (unsigned)geteuid(), (unsigned)getegid(),
			 kept_note(s));
		s->report(s->ctx, msg);
	}
	s->warned = true;
	return -EACCES;
}
