/*
 * recover.c - writing dead processes' final records from their state files
 * (contract in recover.h).  File access is made with raw system calls: in
 * the library this runs on the ticker, and must not go through the
 * wrappers of the process it runs in.
 */
#include "recover.h"
#include "lockall.h"

#include "meter.h"
#include "procns.h"
#include "rawsys.h"
#include "state.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#define CLAIM ".rec-"
/* A state file whose log could not be written: NAME.state.unwritten. */
#define UNWRITTEN ".unwritten"

/* A dead process's state file, read into private memory. */
struct image {
	char *p;
	size_t size;
	struct state_header hdr;
	uint64_t slots_read; /* slots with data read, from the first: past
			      * them the file is holes (zero, unused) */
	/* The pid in the state file's name, as this recovery's /proc
	 * numbers it (-1: another pid namespace's); not the header's,
	 * which its process could rewrite. */
	int64_t name_pid;
	/* Its final numbers went to its Prometheus textfile, rewritten
	 * whole (not appended to a log): the messages' words. */
	bool textfile;
	/* The log path is the one kept at the mark (kept_log_path), named
	 * while the process was still root: not a header's word. */
	bool kept;
};

static void no_report(void *ctx, const char *msg);
static void say(const struct recover_opts *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void say(const struct recover_opts *o, const char *fmt, ...)
{
	char msg[CONFIG_PATH_MAX * 2 + 256];
	va_list ap;

	if (!o->report || o->report == no_report)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	o->report(o->ctx, msg);
}

/* Never an open that waits, or that takes a terminal: a header's path,
 * or a name in a state directory, may be a FIFO (an open for reading
 * waited for a writer for good) or a device.  Every file read or written
 * here is checked to be a regular one once open. */
static long sys_open(const char *path, int flags)
{
	return SM_SYSCALL(SYS_openat, AT_FDCWD, path,
		       flags | O_CLOEXEC | O_NONBLOCK | O_NOCTTY, 0600);
}

/*
 * A path a header names, opened only if it is a regular file: looked at
 * first through an O_PATH fd (which opens nothing: a device's open has
 * effects of its own, /dev/watchdog's arms it, a tape's rewinds), then
 * reopened through that very fd.  Without /proc, not at all.  The fd, or
 * -1 with errno (EINVAL: not a regular file; ELOOP: a link).
 */
static long open_regular_at(int dfd, const char *path, int flags)
{
	char via[48];
	struct stat sb, got;
	long pfd, fd;

	pfd = SM_SYSCALL(SYS_openat, dfd, path,
		      O_PATH | O_NOFOLLOW | O_CLOEXEC, 0);
	if (pfd < 0)
		return -1;
	if (fstat((int)pfd, &sb) != 0) {
		int err = errno;

		SM_SYSCALL(SYS_close, pfd);
		errno = err;
		return -1;
	}
	if (!S_ISREG(sb.st_mode)) {
		SM_SYSCALL(SYS_close, pfd);
		errno = S_ISLNK(sb.st_mode) ? ELOOP : EINVAL;
		return -1;
	}
	/* The calling thread's own table: /proc/self/fd is the main
	 * thread's, the program's, where the ticker (whose table is its
	 * own: progfd.h) that runs an automatic recovery found another file
	 * under the same number, or none: a log that existed was never
	 * appended to, and a program's regular file on that number (its
	 * stdout redirected to a file) would have been.  /proc/self where
	 * there is no thread-self (before Linux 3.17): no private tables
	 * either. */
	snprintf(via, sizeof(via), "/proc/thread-self/fd/%ld", pfd);
	fd = sys_open(via, flags & ~(O_CREAT | O_EXCL | O_NOFOLLOW));
	if (fd < 0 && errno == ENOENT &&
	    SM_SYSCALL(SYS_faccessat, AT_FDCWD, "/proc/thread-self", F_OK) != 0) {
		snprintf(via, sizeof(via), "/proc/self/fd/%ld", pfd);
		fd = sys_open(via, flags & ~(O_CREAT | O_EXCL | O_NOFOLLOW));
	}
	/* And it is the file looked at, or nothing. */
	if (fd >= 0 && (fstat((int)fd, &got) != 0 || got.st_dev != sb.st_dev ||
			got.st_ino != sb.st_ino)) {
		SM_SYSCALL(SYS_close, fd);
		errno = ESTALE;
		fd = -1;
	}
	SM_SYSCALL(SYS_close, pfd);
	return fd;
}

static long open_regular(const char *path, int flags)
{
	return open_regular_at(AT_FDCWD, path, flags);
}

/* The header at the start of fd, checked against this build's layout. */
static int read_header(long fd, struct state_header *h, const char **why)
{
	struct state_layout mine;

	if (SM_SYSCALL(SYS_pread64, fd, h, sizeof(*h), 0) != (long)sizeof(*h)) {
		*why = "too short for a state file";
		return -1;
	}
	if (memcmp(h->magic, STATE_MAGIC, sizeof(h->magic)) != 0) {
		*why = "not a sockmeter state file";
		return -1;
	}
	if (h->version != STATE_VERSION || h->byte_order != STATE_BYTE_ORDER ||
	    h->header_size != sizeof(*h)) {
		*why = "another layout version or byte order";
		return -1;
	}
	state_layout_fill(&mine, (uint32_t)h->layout.slot_count);
	if (h->layout.slot_count > FDTAB_MAX_CAP ||
	    memcmp(&mine, &h->layout, sizeof(mine)) != 0) {
		*why = "another layout (written by another build)";
		return -1;
	}
	h->prog[sizeof(h->prog) - 1] = '\0';
	h->log_path[sizeof(h->log_path) - 1] = '\0';
	h->boot_id[sizeof(h->boot_id) - 1] = '\0';
	return 0;
}

/* What read_image reads at once: o->between is called between two such
 * reads (recover_one). */
#define READ_PIECE (2u << 20)

/* Data read up to file offset end: the slots it reaches (the slots are
 * the file's last region, backed chunk by chunk as the process used
 * higher fd numbers). */
static void note_slots_read(struct image *img, uint64_t end)
{
	const struct state_layout *l = &img->hdr.layout;
	uint64_t n;

	if (end <= l->slots_off || !l->slot_size)
		return;
	n = (end - l->slots_off + l->slot_size - 1) / l->slot_size;
	if (n > l->slot_count)
		n = l->slot_count;
	if (n > img->slots_read)
		img->slots_read = n;
}

/* Whether a dead process's settings are what its config loader could have
 * made (config.h's ranges): its records are made with them, and a damaged
 * file's zero bucket width would divide by zero in the ticker that
 * recovers it, taking its host program down. */
static bool config_sane(const struct config *c)
{
	uint32_t k;

	if ((unsigned)c->format > FORMAT_PROMETHEUS ||
	    (unsigned)c->close_records > CLOSE_RECORDS_OFF ||
	    c->interval_ms < 100 || c->interval_ms > 86400000u ||
	    c->bucket_ms < 100 || c->bucket_ms > 3600000u ||
	    c->buckets < 2 || c->buckets > 86400u || c->nspans < 1 ||
	    c->nspans > CONFIG_MAX_SPANS || c->nskip < 0 ||
	    c->nskip > CONFIG_MAX_SKIP || c->log_keep > 1000u ||
	    c->max_fds > FDTAB_MAX_CAP)
		return false;
	for (k = 0; k < c->nspans; k++)
		if (c->span_buckets[k] < 1 || c->span_buckets[k] > c->buckets ||
		    (k && c->span_buckets[k] <= c->span_buckets[k - 1]))
			return false;
	return true;
}

/* Read [pos, end) of fd into the image, in pieces with o->between called
 * between two; false when the file ended or failed first. */
static bool read_span(long fd, struct image *img, uint64_t pos, uint64_t end,
		      const struct recover_opts *o)
{
	while (pos < end) {
		size_t want = end - pos < READ_PIECE ? (size_t)(end - pos)
						     : READ_PIECE;
		long n = SM_SYSCALL(SYS_pread64, fd, img->p + pos, want,
				    (off_t)pos);

		if (n <= 0)
			return false;
		pos += (uint64_t)n;
		note_slots_read(img, pos);
		if (o->between && pos < end)
			o->between(o->between_ctx);
	}
	return true;
}

/* The close queue's ring holds 8,192 entries (8 MB), every one written
 * once a busy process has closed that many connections, but only those
 * from the oldest not in its totals to the newest pushed mean anything
 * to its recovery (closeq_settle; closeq_peek never looks past head):
 * read after the queue's counts (which come before the ring in the
 * file), the rest left zero (free).  False on a read error. */
static bool read_ring_wanted(long fd, struct image *img,
			     const struct recover_opts *o)
{
	const struct state_layout *l = &img->hdr.layout;
	const struct closeq_shared *q =
	    (const struct closeq_shared *)(img->p + l->queue_off);
	const struct state_closed *c = state_ticker_whole(
	    (const struct state_ticker *)(img->p + l->ticker_off));
	uint64_t head = q->head, from = q->tail, upto = c->upto, n, i, run;

	/* As closeq_settle takes them. */
	if (upto >= from && upto <= head)
		from = upto;
	n = head >= from ? head - from : 0;
	if (n > l->ring_count)
		n = l->ring_count;
	for (i = 0; i < n; i += run) {
		uint64_t at = (from + i) % l->ring_count;

		run = l->ring_count - at < n - i ? l->ring_count - at : n - i;
		if (!read_span(fd, img, l->ring_off + at * l->entry_size,
			       l->ring_off + (at + run) * l->entry_size, o))
			return false;
	}
	return true;
}

/* Copy the file's data (not its holes) into private memory of its size:
 * holes stay untouched zero pages, so a sparse table costs nothing, and
 * the walks over the slots stop where the data does (slots_read).  Of
 * the ring, only the entries wanted (read_ring_wanted).  A busy process's
 * file took about 90 ms to recover before these two, about 7 since. */
static int read_image(const char *path, struct image *img, const char **why,
		      const struct recover_opts *o)
{
	long fd = sys_open(path, O_RDONLY | O_NOFOLLOW);
	struct stat st;
	uint64_t pos = 0, ring, ring_end;

	*why = "cannot be read";
	if (fd < 0)
		return -1;
	if (fstat((int)fd, &st) != 0 || st.st_uid != geteuid()) {
		*why = "owned by another user";
		SM_SYSCALL(SYS_close, fd);
		return -1;
	}
	if (read_header(fd, &img->hdr, why) != 0 ||
	    (uint64_t)st.st_size != img->hdr.layout.file_size) {
		SM_SYSCALL(SYS_close, fd);
		return -1;
	}
	img->size = (size_t)st.st_size;
	img->p = mmap(NULL, img->size, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (img->p == MAP_FAILED) {
		SM_SYSCALL(SYS_close, fd);
		*why = "no memory to read it";
		return -1;
	}
	ring = img->hdr.layout.ring_off;
	ring_end = ring + img->hdr.layout.ring_count *
			      img->hdr.layout.entry_size;
	/* A read that fails or ends early (the file cut short since the
	 * fstat) leaves the file for a later try, not half recovered and
	 * removed; one that grew is read to its size at the fstat (the
	 * memory's). */
	*why = "read error";
	while (pos < img->size) {
		off_t data = lseek((int)fd, (off_t)pos, SEEK_DATA), hole;
		uint64_t d, h;

		/* No data past pos (ENXIO), or the lseek failed: then the
		 * image would lack what was not read (a reviewer's injected
		 * EIO made an empty image, whose zero config divided by
		 * zero). */
		if (data < 0) {
			if (errno == ENXIO)
				break;
			goto fail;
		}
		hole = lseek((int)fd, data, SEEK_HOLE);
		if (hole < 0)
			goto fail;
		d = (uint64_t)data;
		h = (uint64_t)hole;
		if (d >= img->size)
			break;
		if (h > img->size)
			h = img->size;
		/* Around the ring: its wanted entries come after (the
		 * spills after it are read here, those ever backed). */
		if ((d < ring && !read_span(fd, img, d, h < ring ? h : ring, o)) ||
		    (h > ring_end &&
		     !read_span(fd, img, d > ring_end ? d : ring_end, h, o)))
			goto fail;
		pos = h;
	}
	if (!read_ring_wanted(fd, img, o))
		goto fail;
	if (!config_sane((const struct config *)(img->p +
						  img->hdr.layout.config_off))) {
		*why = "its settings are out of their ranges (a damaged file)";
		goto fail;
	}
	SM_SYSCALL(SYS_close, fd);
	return 0;
fail:
	SM_SYSCALL(SYS_close, fd);
	munmap(img->p, img->size);
	img->p = NULL;
	return -1;
}

/* Whether the process that wrote h (a file named name) still runs this
 * image's process.  One of another pid namespace (the tag in its name,
 * state.h) cannot be told from here: it counts as alive, left alone. */
static bool process_alive(const struct state_header *h, const char *name)
{
	long pid = strtol(name, NULL, 10);
	char boot[40];
	long fd;
	long n;

	fd = sys_open("/proc/sys/kernel/random/boot_id", O_RDONLY);
	if (fd >= 0) {
		n = SM_SYSCALL(SYS_read, fd, boot, sizeof(boot) - 1);
		SM_SYSCALL(SYS_close, fd);
		while (n > 0 && (boot[n - 1] == '\n' || boot[n - 1] == ' '))
			n--;
		boot[n > 0 ? n : 0] = '\0';
		if (h->boot_id[0] && n > 0 && strcmp(boot, h->boot_id) != 0)
			return false; /* a previous boot */
	}
	if (state_name_view(name) != state_pid_view(NULL))
		return true;
	/* The name's pid: /proc's numbering (the header's is getpid()'s). */
	return state_starts_match(state_proc_start(pid), h->proc_start);
}

/* If the log open on fd (for reading and appending) does not end in a
 * newline (the process died mid-write), end the torn line so the
 * recovered records start on their own. */
static void end_torn_line_fd(long fd)
{
	struct stat st;
	char last;

	if (fstat((int)fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
	    SM_SYSCALL(SYS_pread64, fd, &last, 1, st.st_size - 1) == 1 &&
	    last != '\n')
		SM_SYSCALL(SYS_write, fd, "\n", 1);
}

static void end_torn_line(const char *path)
{
	long fd = sys_open(path, O_RDWR | O_APPEND | O_NOFOLLOW | O_NONBLOCK);

	if (fd < 0)
		return;
	end_torn_line_fd(fd);
	SM_SYSCALL(SYS_close, fd);
}

static void sum_closed(const struct state_closed *w, struct meter *m)
{
	unsigned k;

	memset(&m->closed, 0, sizeof(m->closed));
	m->closed_count = 0;
	m->closed_unseen[DIR_IN] = w->unseen[DIR_IN];
	m->closed_unseen[DIR_OUT] = w->unseen[DIR_OUT];
	for (k = 0; k < KIND_COUNT; k++) {
		fd_counters_add(&m->closed, &w->closed[k]);
		m->closed_count += w->closed_n[k];
		if (m->prom) {
			m->prom->closed[k] = w->closed[k];
			m->prom->closed_n[k] = w->closed_n[k];
		}
	}
}

/*
 * A file made for a process that then became another user (root's,
 * mostly, or a user's holding CAP_SETUID; or root's that went into a
 * chroot, before a change of user it could not mark): its mode lost the
 * owner's write bit then (state_mark_exposed), and that user may have
 * written anything into it since, through the mapping it kept: the log
 * path and the uid in its header too.  Its owner's recovery does not
 * append to a file, or give one away, on that word.  The log the process
 * named while it was still trusted is in the file's extended attribute
 * (state_mark_exposed): the records go there, as to any log a header
 * names (open_sockmeter_log's rules), never given away.  Without one (a
 * file system with no such attributes) they go beside the state file,
 * PID-START.recovered.log, the owner's, and the message says so.
 */
static bool kept_log_path(const char *claim, const struct stat *sb,
			  char *out, size_t cap, bool trusted_only)
{
	ssize_t n = getxattr(claim, STATE_XATTR_LOG, out, cap - 1);

	/* user.*: set by the file's owner (or by what could write it: a
	 * marked file is 0400), so only a file that is the recoverer's.
	 * Never for a file not marked: its process may still hold its uid
	 * (a root without capabilities, whose library could set no
	 * trusted.*, can set user.* again: a reviewer's proof). */
	if (n <= 0 && !trusted_only && sb->st_uid == geteuid())
		n = getxattr(claim, STATE_XATTR_LOG_USER, out, cap - 1);
	if (n <= 0)
		return false;
	out[n] = '\0';
	return out[0] == '/' && strlen(out) == (size_t)n && !strchr(out, '\n');
}

static void distrust_exposed(struct image *img, const char *claim,
			     const char *path, const char *fallback,
			     const struct recover_opts *o)
{
	struct stat sb;
	char kept[sizeof(img->hdr.log_path)];

	/* Failing closed: a file that cannot be looked at is not
	 * trusted.  Any recoverer's: a user holding CAP_SETUID marks its
	 * files as root does. */
	if (stat(claim, &sb) != 0) {
		sb.st_mode = 0;
	} else if (sb.st_mode & S_IWUSR) {
		/* Not marked: the header's path is the one the process
		 * kept while it was root (state_keep_log_path), or only a
		 * header's word (root makes nothing there: root_append). */
		img->kept = kept_log_path(claim, &sb, kept, sizeof(kept),
					  true) &&
			    strncmp(kept, img->hdr.log_path, sizeof(kept)) == 0;
		return;
	}
	img->hdr.uid = (uint32_t)procns_uid_outer((unsigned)geteuid());
	if (sb.st_mode &&
	    kept_log_path(claim, &sb, kept, sizeof(kept), false)) {
		memcpy(img->hdr.log_path, kept, sizeof(kept));
		img->kept = true;
		return;
	}
	say(o,
	    "sockmeter recover: %s: made for a process that then "
	    "changed user, who could write it since: its records go to "
	    "%s, not to the log it names",
	    path, fallback);
	snprintf(img->hdr.log_path, sizeof(img->hdr.log_path), "%.*s",
		 (int)sizeof(img->hdr.log_path) - 1, fallback);
	img->hdr.uid = (uint32_t)procns_uid_outer((unsigned)geteuid());
}

/* Links a walk follows at most (the kernel's own bound). */
#define WALK_LINKS_MAX 40
/* File systems whose owners say nothing of who put a link or a file
 * there: FUSE (and fuseblk, STATE_FUSE_MAGIC), whose server reports what
 * it likes, and procfs, whose fd and cwd links are a process's own
 * choice. */
#define WALK_PROC_MAGIC 0x9fa0L

static bool fs_says_owners(long fd)
{
	struct statfs sf;

	return fstatfs((int)fd, &sf) == 0 &&
	       (long)sf.f_type != STATE_FUSE_MAGIC &&
	       (long)sf.f_type != WALK_PROC_MAGIC;
}

/* Whether the directory dfd is held by root (the recoverer): root's, and
 * closed to others or sticky (/tmp), so that nobody else can rename or
 * replace what is in it; not on FUSE or procfs (fs_says_owners: a user's
 * FUSE mount on /dev/shm/sockmeter-0 claimed to be root's 0700, a
 * reviewer's proof). */
static bool dir_held(long dfd)
{
	struct stat sb;

	return fstat((int)dfd, &sb) == 0 && S_ISDIR(sb.st_mode) &&
	       sb.st_uid == geteuid() &&
	       (!(sb.st_mode & 022) || (sb.st_mode & S_ISVTX)) &&
	       fs_says_owners(dfd);
}

/*
 * Whether a link in the directory dfd is one only root could have put
 * there: the directory root's and closed to others (not a sticky /tmp,
 * where anyone makes links), on a file system mounted without nosuid and
 * neither FUSE nor procfs.  The mounts a user may make (FUSE through
 * fusermount, udisks, fstab's "user") are all nosuid, and on them any
 * owner can be claimed: a FUSE server mounted allow_other on a directory
 * of a kept path that is the user's reports a link of root's in a
 * directory of root's, to /etc/bash_completion.d, as it likes (a
 * reviewer's proof).  A link on a nosuid mount of root's own (a systemd
 * /run, /tmp) is not followed either: the records go beside the state
 * file.
 */
static bool link_dir_trusted(long dfd)
{
	struct stat sb;
	struct statfs sf;

	return fstat((int)dfd, &sb) == 0 && sb.st_uid == geteuid() &&
	       !(sb.st_mode & 022) && fstatfs((int)dfd, &sf) == 0 &&
	       !(sf.f_flags & ST_NOSUID) && fs_says_owners(dfd);
}

/* An error of a walk or an open that a later recovery may not meet: the
 * state file waits for it (a refused path puts the records beside it). */
static bool passing_err(int err)
{
	return err == EMFILE || err == ENFILE || err == ENOMEM || err == EINTR;
}

/*
 * The directory of path, opened (O_PATH), for a file root makes there or
 * believes by its name: reached with no link on the way but one only
 * root could have put there, whose target is walked by the same rule,
 * one component at a time: a link of root's (link_dir_trusted), with
 * every directory from "/" down to it held by root (dir_held:
 * /var/run -> /run, a symlinked /var/log).  A kept path's directories may
 * be the dropped user's, who could swap one for a link to
 * /etc/bash_completion.d (a reviewer's proof), where the live process,
 * which kept its log open, never looked again; a link in a directory of
 * theirs, or anywhere below one, or in a sticky /tmp, is not followed.
 * No openat2 needed (before 2026-12-07 this was RESOLVE_NO_SYMLINKS,
 * which refused every link, root's /var/run too, and Linux before 5.6).
 * Its base name into *base; into *held_out (unless NULL), whether it and
 * every directory on the way are held by root (dir_held).  The fd, or -1
 * with errno (ELOOP: a link someone else could have put on the way, or
 * too many links; ENOENT, ENOTDIR; passing_err's).
 */
static long open_dir_trusted(const char *path, const char **base,
			     bool *held_out)
{
	char rest[PATH_MAX], target[PATH_MAX], name[NAME_MAX + 1];
	const char *slash = strrchr(path, '/');
	unsigned links = 0;
	size_t at = 0, len, tail;
	struct stat lb;
	long cur, next, n;
	bool held;
	int err;

	if (path[0] != '/' || !slash || !slash[1] ||
	    (size_t)(slash - path) >= sizeof(rest)) {
		errno = EINVAL;
		return -1;
	}
	memcpy(rest, path, (size_t)(slash - path));
	rest[slash - path] = '\0';
	*base = slash + 1;
	cur = sys_open("/", O_PATH | O_DIRECTORY);
	held = cur >= 0 && dir_held(cur);
	while (cur >= 0) {
		while (rest[at] == '/')
			at++;
		if (!rest[at]) {
			if (held_out)
				*held_out = held;
			return cur;
		}
		len = strcspn(rest + at, "/");
		if (len > NAME_MAX) {
			err = ENAMETOOLONG;
			break;
		}
		memcpy(name, rest + at, len);
		name[len] = '\0';
		at += len;
		if (strcmp(name, ".") == 0)
			continue;
		next = SM_SYSCALL(SYS_openat, cur, name,
				  O_PATH | O_NOFOLLOW | O_CLOEXEC, 0);
		if (next < 0 || fstat((int)next, &lb) != 0) {
			err = errno;
			if (next >= 0)
				SM_SYSCALL(SYS_close, next);
			break;
		}
		if (S_ISDIR(lb.st_mode)) {
			SM_SYSCALL(SYS_close, cur);
			cur = next;
			held = held && dir_held(cur);
			continue;
		}
		/* A link: root's, where nobody else could have put it,
		 * else refused. */
		err = S_ISLNK(lb.st_mode) ? ELOOP : ENOTDIR;
		n = -1;
		if (S_ISLNK(lb.st_mode) && ++links <= WALK_LINKS_MAX && held &&
		    lb.st_uid == geteuid() && link_dir_trusted(cur)) {
			n = SM_SYSCALL(SYS_readlinkat, next, "", target,
				       sizeof(target));
			err = n < 0 ? errno : ENAMETOOLONG;
		}
		SM_SYSCALL(SYS_close, next);
		tail = strlen(rest + at);
		if (n <= 0 || (size_t)n >= sizeof(target) ||
		    (size_t)n + 1 + tail >= sizeof(rest))
			break;
		/* The rest of the way is now the target's, then what was
		 * left: "TARGET/REST". */
		memmove(rest + n + 1, rest + at, tail + 1);
		memcpy(rest, target, (size_t)n);
		rest[n] = '/';
		at = 0;
		if (target[0] == '/') {
			SM_SYSCALL(SYS_close, cur);
			cur = sys_open("/", O_PATH | O_DIRECTORY);
			held = cur >= 0 && dir_held(cur);
		}
	}
	if (cur >= 0) {
		SM_SYSCALL(SYS_close, cur);
		errno = err;
	}
	return -1;
}

/*
 * Whether path lies in the default directory of the recovering user
 * itself (root's: /tmp/sockmeter-0), found to be that user's, closed to
 * others and no link: decided from nothing the state file says (its
 * config's template and its header's uid are its process's to rewrite: a
 * reviewer's proof made root's recovery take /etc/bash_completion.d for a
 * default directory so).
 */
static bool in_own_default_dir(const char *path)
{
	char dir[sizeof(((struct state_header *)0)->log_path)];
	const char *slash = strrchr(path, '/');
	struct stat sb;

	if (sink_expand(CONFIG_DEFAULT_DIR, 0, "", 0,
			procns_uid_outer((unsigned)geteuid()), dir,
			sizeof(dir)) != 0 ||
	    !slash || (size_t)(slash - path) != strlen(dir) ||
	    strncmp(path, dir, strlen(dir)) != 0)
		return false;
	return procns_fuse_mount(dir) != 1 && lstat(dir, &sb) == 0 &&
	       S_ISDIR(sb.st_mode) && sb.st_uid == geteuid() &&
	       !(sb.st_mode & 022);
}

/* Whether the last component of path is a log named after the process:
 * pid as a number of its own (the %p of a log template), and ".log" at
 * its end ("sshd.31434.log").  The ending keeps root from making, or
 * appending to, what another program reads as code or settings (most
 * ".d" directories take "*.sh", "*.conf" or names without a dot). */
static bool name_has_pid(const char *path, int64_t pid)
{
	const char *base = strrchr(path, '/'), *p;
	char num[24];
	size_t len = strlen(path);

	if (len < 4 || strcmp(path + len - 4, ".log") != 0)
		return false;
	snprintf(num, sizeof(num), "%" PRId64, pid);
	len = strlen(num);
	for (p = base ? base + 1 : path; (p = strstr(p, num)) != NULL; p++)
		if ((p == path || p[-1] < '0' || p[-1] > '9') &&
		    (p[len] < '0' || p[len] > '9'))
			return true;
	return false;
}

/*
 * An existing log root may append a dead process's records to: a regular
 * file of one name, not a link, whose first line is a sockmeter record;
 * or, where root could make the log (by_name: the path the process kept,
 * or root's own default directory, reached through no link but root's
 * own: open_dir_trusted), one
 * named after the process even if empty or torn in its first line.
 * Root takes no header at its word (a process that dropped root in a way
 * the library did not see could have written it): it never appends to
 * another kind of file, never gives one away or rotates one a header
 * names (it makes one only where nothing is), and it writes through the
 * fd it checked, so that nothing put in the path's place meanwhile gets
 * the records.  Returns the fd, -1 when something else is there, or -2
 * - errno when it cannot be opened.
 */
static long open_sockmeter_log(const char *path, int64_t pid, bool by_name)
{
	const char *base;
	char buf[48];
	struct stat sb;
	long fd = -1, dfd = -1, n;
	int err;

	/* A name alone is believed only where root would make the file,
	 * and only through a directory reached through no link but root's
	 * own (open_dir_trusted): else an empty file of a pid's name (a
	 * header rewritten to point at one, or a directory on a kept path
	 * swapped for a link to /etc/bash_completion.d by the user the
	 * process became) would get records whose program name is
	 * "$(...)".  Any other link on the way: the file must show it is a
	 * log. */
	if (by_name) {
		dfd = open_dir_trusted(path, &base, NULL);
		if (dfd >= 0) {
			fd = open_regular_at((int)dfd, base, O_RDWR | O_APPEND);
			err = errno;
			SM_SYSCALL(SYS_close, dfd);
			errno = err;
		} else if (passing_err(errno)) {
			return -2 - errno; /* later */
		} else {
			by_name = false;
		}
	}
	if (dfd < 0)
		fd = open_regular(path, O_RDWR | O_APPEND);
	if (fd < 0) /* a link, or not a file: not one */
		return errno == ELOOP || errno == EINVAL ? -1 : -2 - errno;
	if (fstat((int)fd, &sb) == 0 && S_ISREG(sb.st_mode) &&
	    sb.st_nlink == 1 &&
	    (n = SM_SYSCALL(SYS_pread64, fd, buf, sizeof(buf) - 1, 0)) >= 0) {
		buf[n] = '\0';
		/* Named after the process (%p): its own log, even empty
		 * (opened before it wrote: kept open before a sandbox) or
		 * torn in its first line (killed while writing it). */
		if ((by_name && name_has_pid(path, pid)) ||
		    strncmp(buf, "{\"type\":\"", 9) == 0 ||
		    (buf[0] >= '0' && buf[0] <= '9' &&
		     strstr(buf, "Z sockmeter ")))
			return fd;
	}
	SM_SYSCALL(SYS_close, fd);
	return -1;
}

/* The automatic scans' word (o->moved) on the records of img that were
 * for the log named log (none: "") and went, or were to go, to fallback:
 * err 0 when they are written there, else why they are not. */
static void say_moved(const struct image *img, const char *log,
		      const char *fallback, int err,
		      const struct recover_opts *o)
{
	char msg[CONFIG_PATH_MAX * 2 + 320];
	char why[CONFIG_PATH_MAX + 64];

	if (!log[0] || !o->moved)
		return;
	if (img->hdr.format == FORMAT_PROMETHEUS)
		snprintf(why, sizeof(why),
			 "textfile %s is not one root may rewrite", log);
	else
		snprintf(why, sizeof(why),
			 "log %s is not a sockmeter log root may append to",
			 log);
	if (err)
		snprintf(msg, sizeof(msg),
			 "sockmeter: the final records of %s[%" PRId64 "], "
			 "which ended without writing them, could not be "
			 "recovered into %s (%s; its %s): its state file "
			 "waits for `sockmeter recover`",
			 img->hdr.prog, img->hdr.pid, fallback, strerror(err),
			 why);
	else
		snprintf(msg, sizeof(msg),
			 "sockmeter: recovered the final records of "
			 "%s[%" PRId64 "], which ended without writing them, "
			 "into %s: its %s",
			 img->hdr.prog, img->hdr.pid, fallback, why);
	o->moved(msg);
}

/* For path, a log of the default template: 0 when its directory is one
 * its process would write in (sink.c's own_dir: a directory, not a link,
 * of uid's, closed to others); -EPERM when it is not: made by someone
 * else (another user's squat, a user namespace's fake root), who may read
 * what goes into it: the process itself wrote nothing there, and no
 * recovery does (a reviewer's proof: root appended a refused process's
 * records to a file the squatter had made there); -ENOENT when it is not
 * there: the log waits for it, no open is tried (a squatter who moved
 * the directory away at this check and back for the open got the records:
 * a second review's race).  Once a directory of uid's passed, nobody else
 * can put another in its place (the default's /tmp is sticky).  1 for a
 * log of another template: its directory is the user's choice. */
static int default_dir_state(const char *tmpl, const char *path, uint32_t uid)
{
	char dir[sizeof(((struct state_header *)0)->log_path)];
	char *slash;
	struct stat sb;
	unsigned here;

	if (strncmp(tmpl, CONFIG_DEFAULT_DIR "/",
		    strlen(CONFIG_DEFAULT_DIR "/")) != 0)
		return 1;
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return 1;
	*slash = '\0';
	/* (A FUSE mount there: refused before a stat it could hold.) */
	if (procns_fuse_mount(dir) == 1)
		return -EPERM;
	if (lstat(dir, &sb) != 0)
		return errno == ENOENT ? -ENOENT : -EPERM;
	/* uid as the parent user namespace knows it (the header's), the
	 * owner as this one does (stat's): compared in this one's terms. */
	if (!procns_uid_inner(uid, &here))
		return -EPERM;
	return !S_ISDIR(sb.st_mode) || sb.st_uid != here || (sb.st_mode & 022)
		       ? -EPERM
		       : 0;
}

/* The prefix every textfile of ours starts with (core/prom.c). */
#define PROM_HEAD "# HELP sockmeter_"

/* An error of a textfile's write that a later recovery may not meet
 * (a full disk, no fd or memory left, a file system read-only for now):
 * the state file waits.  Any other: the records go beside the state
 * file. */
static int prom_err(int err)
{
	return err == ENOSPC || err == EDQUOT || err == EIO || err == ENOMEM ||
			       err == EMFILE || err == ENFILE || err == EROFS
		       ? -err
		       : 1;
}

/* Whether the regular file fd is root's own textfile of process pid, of
 * one name: its head PROM_HEAD, its samples' labels ending in pid="PID"
 * (a prog label escapes its quotes, so no program name can end them
 * so). */
static bool prom_of(long fd, int64_t pid)
{
	char head[1024], want[40];
	struct stat sb;
	long n;

	if (fstat((int)fd, &sb) != 0 || sb.st_nlink != 1 ||
	    sb.st_uid != geteuid())
		return false;
	n = SM_SYSCALL(SYS_pread64, fd, head, sizeof(head) - 1, 0);
	if (n < (long)strlen(PROM_HEAD))
		return false;
	head[n] = '\0';
	snprintf(want, sizeof(want), ",pid=\"%" PRId64 "\"}", pid);
	return strncmp(head, PROM_HEAD, strlen(PROM_HEAD)) == 0 &&
	       strstr(head, want) != NULL;
}

/*
 * Root's rewrite of the Prometheus textfile of img (its header's path),
 * as the process rewrote it (a new file written, then renamed over NAME),
 * where nobody but root has a say: an absolute path whose name ends in
 * ".prom" (what a textfile collector reads; not a hidden one); a
 * directory (reached as the process reached it, links in the path
 * followed) that is root's and closed to others, looked at through the fd
 * everything else is then done through, so that no one can move another
 * in its place meanwhile; over root's own textfile of this very process
 * (one regular file, its pid label the header's pid, which must be the
 * state file name's: not another process's final numbers, nor a
 * restarted daemon's live ones under a fixed name); over nothing only
 * when may_make (see root_append: a directory root owns may be one whose
 * every file a shell sources, and a header's program name is its
 * process's to write).  The new file has a name of this recovery's own
 * (NAME.PID.tmp, made where nothing is), so that it never meets the
 * NAME.tmp of a live writer of the same name, and mode 0644 whatever the
 * umask.  0; 1 when any of this does not hold, or the write failed for
 * good (the records go beside the state file); or a negative errno when
 * a later recovery may succeed (prom_err: the state file waits).
 */
static int root_replace_prom(const struct image *img, const struct sbuf *out,
			     bool may_make)
{
	const char *path = img->hdr.log_path;
	char dir[sizeof(img->hdr.log_path)], tmp[300];
	const char *slash = strrchr(path, '/'), *base;
	size_t len = strlen(path), done = 0;
	bool there;
	long dfd, fd, n;
	struct stat sb;
	int r = 0;

	if (path[0] != '/' || !slash || len < 6 ||
	    strcmp(path + len - 5, ".prom") != 0 || slash[1] == '.' ||
	    img->name_pid < 0 || img->name_pid != img->hdr.pid)
		return 1;
	base = slash + 1;
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.%ld.tmp", base,
			     (long)getpid()) >= sizeof(tmp))
		return 1;
	memcpy(dir, path, (size_t)(slash - path));
	dir[slash - path] = '\0';
	dfd = sys_open(slash == path ? "/" : dir, O_PATH | O_DIRECTORY);
	if (dfd < 0)
		return errno == ENOENT || errno == ENOTDIR || errno == ELOOP ||
				       errno == EACCES
			       ? 1
			       : prom_err(errno);
	if (fstat((int)dfd, &sb) != 0 || !S_ISDIR(sb.st_mode) ||
	    sb.st_uid != geteuid() || (sb.st_mode & 022)) {
		SM_SYSCALL(SYS_close, dfd);
		return 1;
	}
	fd = open_regular_at((int)dfd, base, O_RDONLY);
	there = fd >= 0;
	if (there) {
		if (!prom_of(fd, img->hdr.pid))
			r = 1;
		SM_SYSCALL(SYS_close, fd);
	} else if (errno != ENOENT) {
		/* A link, a device, a FIFO (ELOOP, EINVAL): not ours; no
		 * fd or memory left: later. */
		r = errno == ELOOP || errno == EINVAL ? 1 : prom_err(errno);
	} else if (!may_make ||
		   fstatat((int)dfd, base, &sb, AT_SYMLINK_NOFOLLOW) == 0 ||
		   errno != ENOENT) {
		r = 1;
	} else {
		/* Made only in the directory reached through no link but
		 * root's own (open_dir_trusted): the very one looked at. */
		const char *b;
		long ufd = open_dir_trusted(path, &b, NULL);
		struct stat ub;

		if (ufd < 0)
			r = passing_err(errno) ? -errno : 1;
		else if (fstat((int)dfd, &sb) != 0 ||
			 fstat((int)ufd, &ub) != 0 || ub.st_dev != sb.st_dev ||
			 ub.st_ino != sb.st_ino)
			r = 1;
		if (ufd >= 0)
			SM_SYSCALL(SYS_close, ufd);
	}
	fd = -1;
	if (r == 0) {
		fd = SM_SYSCALL(SYS_openat, dfd, tmp,
				O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
					O_CLOEXEC | O_NONBLOCK | O_NOCTTY,
				0644);
		if (fd < 0)
			r = prom_err(errno);
		else if (fchmod((int)fd, 0644) != 0)
			r = prom_err(errno);
	}
	while (r == 0 && done < out->len) {
		n = SM_SYSCALL(SYS_write, fd, out->p + done, out->len - done);
		if (n <= 0)
			r = n < 0 ? prom_err(errno) : -EIO;
		else
			done += (size_t)n;
	}
	if (fd >= 0) {
		SM_SYSCALL(SYS_close, fd);
		/* Over nothing, nothing is replaced: RENAME_NOREPLACE. */
		if (r == 0 && SM_SYSCALL(SYS_renameat2, dfd, tmp, dfd, base,
					 there ? 0u : (unsigned)RENAME_NOREPLACE) != 0)
			r = prom_err(errno);
		if (r)
			SM_SYSCALL(SYS_unlinkat, dfd, tmp, 0);
	}
	SM_SYSCALL(SYS_close, dfd);
	return r;
}

/* Root's write of out: into the log the header names if it is one
 * (open_sockmeter_log) and not refused (default_dir_state), else into
 * fallback (PID-START.recovered.log
 * beside the state file, in root's directory), whose name then replaces
 * the header's for the messages.  0 or a negative errno. */
static int root_append(struct image *img, const char *fallback, int format,
		       const struct sbuf *out, const struct recover_opts *o,
		       bool refused)
{
	/* Where root may make the file the path names: the default
	 * directory, checked to be the process's own and closed to others
	 * (default_dir_state), or the path kept at the mark.  Never
	 * elsewhere on a header's word: a directory root owns may be one
	 * whose every file a shell sources (/etc/bash_completion.d), and a
	 * rewritten header's program name can be "$(...)" (a reviewer's
	 * proof, with a textfile and with a log). */
	/* The pid a name must hold: the state file name's (its process
	 * cannot rewrite it: else a header's pid would have root make, or
	 * append to, another process's log in its default directory, a
	 * reviewer's proof); a kept path is the process's own word. */
	int64_t pid = img->kept ? img->hdr.pid : img->name_pid;
	bool may_make = img->kept ||
			(pid >= 0 && in_own_default_dir(img->hdr.log_path));
	bool marked = strcmp(img->hdr.log_path, fallback) == 0;
	bool prom = format == FORMAT_PROMETHEUS;
	long fd = prom || marked || refused
			  ? -1
			  : open_sockmeter_log(img->hdr.log_path, pid, may_make);
	/* The automatic scans' word on records put elsewhere than the log
	 * their process named (recover_opts's moved): said once they are
	 * written, or once they could not be. */
	char moved[sizeof(img->hdr.log_path)] = "";
	size_t done = 0;
	long n;

	/* A textfile, rewritten whole where root may (one the header
	 * names, as for a log: not marked, not a default directory
	 * refused). */
	if (prom && !marked && !refused) {
		int r = root_replace_prom(img, out, may_make);

		if (r <= 0) {
			img->textfile = r == 0;
			return r;
		}
	}
	/* None yet, where root may make one (may_make; not marked: see
	 * distrust_exposed): made, never over anything.  A log that cannot
	 * be reached (its directory gone, a full disk...) is a failure, as
	 * for any recovery: the state file is kept for a later one.  None
	 * yet anywhere else: beside the state file. */
	if (fd == -2 - ENOENT && may_make &&
	    name_has_pid(img->hdr.log_path, pid)) {
		const char *base;
		long dfd = open_dir_trusted(img->hdr.log_path, &base, NULL);

		/* Its directory gone, or no fd or memory left: later. */
		if (dfd < 0 && (errno == ENOENT || passing_err(errno)))
			return -errno;
		fd = -1;
		if (dfd >= 0) {
			fd = SM_SYSCALL(SYS_openat, dfd, base,
					O_WRONLY | O_CREAT | O_EXCL |
						O_NOFOLLOW | O_NONBLOCK |
						O_NOCTTY | O_CLOEXEC,
					0600);
			if (fd < 0 && errno != EEXIST) {
				int err = errno;

				SM_SYSCALL(SYS_close, dfd);
				return -err;
			}
			SM_SYSCALL(SYS_close, dfd);
		}
	}
	if (fd < -1 && fd != -2 - ENOENT)
		return (int)(-(-2 - fd));
	if (fd < 0) {
		if (strcmp(img->hdr.log_path, fallback) != 0)
			say(o,
			    "sockmeter recover: %s[%" PRId64 "]: %s is not a "
			    "sockmeter %s: its records go to %s",
			    img->hdr.prog, img->hdr.pid, img->hdr.log_path,
			    prom ? "textfile root may rewrite (a name that "
				   "ends in .prom, in a directory of root's "
				   "closed to others, over nothing or this "
				   "process's own textfile)"
				 : "log root may append to",
			    fallback);
		if (strcmp(img->hdr.log_path, fallback) != 0 && o->moved)
			snprintf(moved, sizeof(moved), "%s",
				 img->hdr.log_path);
		snprintf(img->hdr.log_path, sizeof(img->hdr.log_path), "%.*s",
			 (int)sizeof(img->hdr.log_path) - 1, fallback);
		fd = sys_open(fallback, O_WRONLY | O_CREAT | O_APPEND |
						O_NOFOLLOW | O_NONBLOCK |
						O_NOCTTY);
		if (fd < 0) {
			n = -errno;
			say_moved(img, moved, fallback, (int)-n, o);
			return (int)n;
		}
	}
	end_torn_line_fd(fd);
	while (done < out->len) {
		n = SM_SYSCALL(SYS_write, fd, out->p + done, out->len - done);
		if (n <= 0) {
			n = n < 0 ? -errno : -EIO;
			SM_SYSCALL(SYS_close, fd);
			say_moved(img, moved, fallback, (int)-n, o);
			return (int)n;
		}
		done += (size_t)n;
	}
	SM_SYSCALL(SYS_close, fd);
	say_moved(img, moved, fallback, 0, o);
	return 0;
}

static uint64_t flight_landed(const struct image *img,
			      const struct closeq_shared *sh, unsigned keep);

/*
 * When the dead process was last seen alive, at least: the latest of its
 * ticker's last tick (or its start), the closes its queue still holds and
 * the opens of its slots.  A process killed within a second of its start
 * (no tick yet) said "alive_until" before the closes of its own recovered
 * close records (a helper's nghttpd, killed 0.35 s in: 0.26 s before its
 * last close), and the report ended it before its connections.
 */
static uint64_t last_seen(const struct meter *m, uint64_t ns)
{
	struct closeq_entry e;
	uint32_t fd;
	uint64_t i;

	for (i = 0; closeq_peek(&m->q, i, &e); i++)
		if (closeq_is_record(&e) && e.closed_ns > ns)
			ns = e.closed_ns;
	for (fd = 0; fd < m->tab.high; fd++)
		if (fd_kind_tracked(fdtab_kind(&m->tab.slots[fd])) &&
		    m->tab.slots[fd].opened_ns > ns)
			ns = m->tab.slots[fd].opened_ns;
	return ns;
}

/* closeq_rescue's: what a retire the kill stopped left in its slot. */
static int rescue_slot(void *tab, struct fd_snapshot *s, uint32_t bound)
{
	return fdtab_rescue(tab, s, bound);
}

/* Rename from to its first len bytes + UNWRITTEN (the name in to), never
 * over a file that is there; true when done: a state file parked for a
 * recover run by hand (the automatic
 * scans pass over such names; a hand-run one puts them back first). */
static bool park_for_hand(const char *from, size_t len, char *to, size_t cap)
{
	int n = snprintf(to, cap, "%.*s%s", (int)len, from, UNWRITTEN);

	return n > 0 && (size_t)n < cap &&
	       SM_SYSCALL(SYS_renameat2, AT_FDCWD, from, AT_FDCWD, to,
		       RENAME_NOREPLACE) == 0;
}

/* Write the records of the dead process img holds.  Returns 0, 1 when it
 * had none to write (it never tracked an fd), NOT_HERE when its log was a
 * stderr and this recovery has none to print it on (an automatic one: the
 * file is for a recover run by hand), NO_MEMORY when the records could not
 * be made whole (this process short of memory: nothing written), or a
 * negative errno when its log could not be written (nothing said: the
 * caller does, the sink's words are for a live process). */
#define NOT_HERE 2
#define NO_MEMORY 3
static int write_records(struct image *img, const char *fallback,
			 const struct recover_opts *o)
{
	const struct state_layout *l = &img->hdr.layout;
	struct config cfg;
	struct meter m;
	struct meter_mem mem;
	struct meter_time start, now;
	struct timespec ts;
	struct stat sb;
	bool to_stderr, wrote, root, refused;
	int r = 0, dir;

	memcpy(&cfg, img->p + l->config_off, sizeof(cfg));
	cfg.log_path[sizeof(cfg.log_path) - 1] = '\0';
	to_stderr = strcmp(img->hdr.log_path, "stderr") == 0;
	if (to_stderr && !o->stderr_here)
		return NOT_HERE;
	/* A default directory refused: root puts the records beside the
	 * state file (root_append); a user's recovery leaves the file for
	 * one once the directory is the user's.  One not there: the file
	 * waits (as when the open found none), but for root's Prometheus
	 * text, which then goes beside the state file (a squatter could
	 * make the directory, or a link in its place, at any moment after
	 * this look).  Not a header root already pointed at that file
	 * (distrust_exposed). */
	dir = to_stderr || strcmp(img->hdr.log_path, fallback) == 0
		      ? 1
		      : default_dir_state(cfg.log_path, img->hdr.log_path,
					  img->hdr.uid);
	refused = dir < 0; /* for root: -EPERM, or -ENOENT and a textfile */
	if (dir < 0 && (geteuid() != 0 || (dir == -ENOENT &&
					   cfg.format != FORMAT_PROMETHEUS)))
		return dir;
	memset(&mem, 0, sizeof(mem));
	mem.slots = (struct fd_slot *)(img->p + l->slots_off);
	mem.queue = (struct closeq_shared *)(img->p + l->queue_off);
	mem.ring = (struct closeq_entry *)(img->p + l->ring_off);
	mem.ticker = (struct state_ticker *)(img->p + l->ticker_off);
	start.mono_ns = img->hdr.start_mono_ns;
	start.real_ns = img->hdr.start_real_ns;
	/* No log set-up of the template: the header names the very file. */
	snprintf(cfg.log_path, sizeof(cfg.log_path), "stderr");
	r = meter_init_at(&m, &cfg, img->hdr.prog, (long)img->hdr.pid,
			  (uint32_t)l->slot_count, start, o->report, o->ctx,
			  &mem);
	if (r)
		return r;
	if (!to_stderr) {
		snprintf(m.sink.path, sizeof(m.sink.path), "%s",
			 img->hdr.log_path);
		m.sink.to_stderr = false;
		m.sink.report = NULL;
	}
	/* Its slots left no map of the numbers used: all those the file
	 * holds data for are read.  Past them it is holes: walking them all
	 * (a table of 300,000 slots, 19 MB, five walks) took a third of a
	 * busy process's recovery, in page faults, and the ticker that
	 * recovers on a host's behalf is away from its own queue meanwhile
	 * (t_churn_while_recovering). */
	fdtab_use_below(&m.tab, (uint32_t)img->slots_read);
	/* Its connections were last active before it died, not at this
	 * recovery: no later than its ticker's latest tick (or its start). */
	m.alive_until_ns = mem.ticker->alive_real_ns > start.real_ns
				   ? mem.ticker->alive_real_ns
				   : start.real_ns;
	m.ns_per_tick =
	    mem.ticker->ns_per_tick > 0 ? mem.ticker->ns_per_tick : 1.0;
	sum_closed(state_ticker_whole(mem.ticker), &m);
	/* Closes it was in the middle of: each connection whole, once. */
	closeq_rescue(&m.q, state_ticker_whole(mem.ticker)->upto,
		      rescue_slot, &m.tab);
	/* Slots a kill left held by any other lifecycle call: the
	 * connection each held is open again; one that held none has its
	 * counts go to the closed totals as strays (the record's sweep). */
	fdtab_unbusy(&m.tab);
	closeq_settle(&m.q, state_ticker_whole(mem.ticker)->upto);
	/* Before anything is appended (end_torn_line's newline would make
	 * a torn record look whole). */
	closeq_note_written(&m.q, flight_landed(img, mem.queue, cfg.log_keep));
	m.alive_until_ns = last_seen(&m, m.alive_until_ns);
	m.end = img->hdr.status == STATE_UNWRITTEN ? "exit-recovered"
						   : "killed";
	/* Some of its numbers never reached the file (its file system was
	 * full): the record says so. */
	m.incomplete = mem.ticker->incomplete != 0;
	m.dead = true;
	root = geteuid() == 0 && !to_stderr;
	if (!root && cfg.format != FORMAT_PROMETHEUS)
		end_torn_line(img->hdr.log_path);
	(void)sb;
	clock_gettime(CLOCK_REALTIME, &ts);
	now.real_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	now.mono_ns = start.mono_ns;
	{
		struct sbuf out = { 0 };

		meter_exit_into(&m, now, &out);
		wrote = out.len > 0;
		if (o->between) /* (see recover_one) */
			o->between(o->between_ctx);
		/* No memory to make them all (the recovering process at its
		 * map count limit: the text, or a list of close records or
		 * fds): nothing written, the file kept for a later recovery,
		 * rather than records cut short and the file removed. */
		if (out.failed ||
		    __atomic_load_n(&m.nomem_err, __ATOMIC_RELAXED)) {
			sbuf_free(&out);
			meter_destroy(&m);
			return NO_MEMORY;
		}
		if (root && out.len) {
			r = root_append(img, fallback, cfg.format, &out, o,
					refused);
		} else {
			meter_flush(&m, &out);
			img->textfile = cfg.format == FORMAT_PROMETHEUS;
		}
		sbuf_free(&out);
	}
	if (!root)
		r = !to_stderr && m.sink.failing
			    ? -(m.sink.last_err ? m.sink.last_err : EIO)
			    : 0;
	meter_destroy(&m);
	return r ? r : wrote ? 0 : 1;
}

/* The number after key in a JSON record's line, in nanoseconds (to the
 * digits written); false without the key.  Parsed here, not by strtod:
 * the automatic recovery runs in a host's ticker, where strtod follows
 * the host's locale and may allocate. */
static bool json_number_ns(const char *line, size_t n, const char *key,
			   uint64_t *ns)
{
	const char *p = memmem(line, n, key, strlen(key));
	const char *end = line + n;
	uint64_t sec = 0, frac = 0, scale = 1000000000u;

	if (!p)
		return false;
	for (p += strlen(key); p < end && *p >= '0' && *p <= '9'; p++)
		sec = sec * 10 + (uint64_t)(*p - '0');
	if (p < end && *p == '.')
		for (p++; p < end && *p >= '0' && *p <= '9' && scale > 1; p++) {
			scale /= 10;
			frac += (uint64_t)(*p - '0') * scale;
		}
	*ns = sec * 1000000000u + frac;
	return true;
}

/* Days from 1970-01-01 to the civil date y-m-d (proleptic Gregorian). */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
	int64_t era;
	unsigned yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = (unsigned)(y - era * 400);
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (int64_t)doe - 719468;
}

/* n decimal digits at p as a number; -1 when one is not a digit. */
static int64_t digits(const char *p, unsigned n)
{
	int64_t v = 0;

	while (n--) {
		if (*p < '0' || *p > '9')
			return -1;
		v = v * 10 + (*p++ - '0');
	}
	return v;
}

/* The time a record's line gives (JSON "ts", or the text timestamp that
 * starts it), in seconds; -1 when it has none.  By hand, not strtod,
 * sscanf or timegm: the automatic recovery runs in a host's ticker, where
 * those follow the host's locale (a decimal comma read "ts" as whole
 * seconds) or allocate and read /etc/localtime (a review's). */
static double line_time(const char *line, const char *end)
{
	size_t n = (size_t)(end - line);

	if (n && line[0] == '{') {
		uint64_t ns;

		if (!json_number_ns(line, n, "\"ts\":", &ns))
			return -1;
		return (double)(ns / 1000000000u) +
		       (double)(ns % 1000000000u) / 1e9;
	}
	/* 2026-12-01T19:25:31.564Z */
	{
		int64_t y, mo, d, h, mi, se, ms;

		if (n < 24 || line[4] != '-' || line[7] != '-' ||
		    line[10] != 'T' || line[13] != ':' || line[16] != ':' ||
		    line[19] != '.' || line[23] != 'Z')
			return -1;
		y = digits(line, 4);
		mo = digits(line + 5, 2);
		d = digits(line + 8, 2);
		h = digits(line + 11, 2);
		mi = digits(line + 14, 2);
		se = digits(line + 17, 2);
		ms = digits(line + 20, 3);
		if (y < 0 || mo < 1 || mo > 12 || d < 1 || d > 31 || h < 0 ||
		    mi < 0 || se < 0 || ms < 0)
			return -1;
		return (double)(days_from_civil(y, (unsigned)mo, (unsigned)d) *
					86400 +
				h * 3600 + mi * 60 + se) +
		       (double)ms / 1000.0;
	}
}

/* The "start" a JSON record's head gives, in nanoseconds (to the digits
 * written: microseconds); 0 without one.  Parsed here, not by strtod: the
 * automatic recovery runs in the ticker, which calls nothing that may
 * allocate. */
static uint64_t json_start_ns(const char *line, size_t n)
{
	uint64_t ns;

	return json_number_ns(line, n, ",\"start\":", &ns) ? ns : 0;
}

/* How far past the noted offset flight_landed reads: the part itself (a
 * batch is at most a few MB) and what other processes sharing the log
 * appended between its size being read and the part landing; in pieces
 * of FLIGHT_PIECE, with pread (a mapping of a log another process cuts
 * short meanwhile, logrotate's copytruncate, would be a SIGBUS in the
 * host whose ticker recovers). */
#define FLIGHT_SCAN_MAX (64u << 20)
#define FLIGHT_PIECE (1u << 20)

/* Whether the whole line [line, line + n) is one close record of the
 * process img holds, made from its start to hi (seconds): JSON's with its
 * very start, text's by its time alone; a line holding the head of a
 * record torn by the kill and another record glued to it is none. */
static bool flight_line(const struct image *img, const char *line, size_t n,
			bool json, const char *mark, double hi)
{
	size_t pl = n < 600 ? n : 600; /* the head: up to "start" */
	double t, lo = (double)img->hdr.start_real_ns / 1e9 - 0.001;
	const char *m;

	if (json) {
		uint64_t at;

		if (n < 16 || memcmp(line, "{\"type\":\"close\",", 16) != 0 ||
		    !memmem(line, pl, mark, strlen(mark)) ||
		    memmem(line + 1, n - 1, "{\"type\":\"", 9) != NULL)
			return false;
		at = json_start_ns(line, pl);
		if (at + 2000u <= img->hdr.start_real_ns ||
		    at >= img->hdr.start_real_ns + 2000u)
			return false;
	} else {
		m = memmem(line, pl, mark, strlen(mark));
		if (!m || memmem(m + 1, (size_t)(line + n - m - 1),
				 " sockmeter ", 11) != NULL)
			return false;
	}
	t = line_time(line, line + n);
	return t >= lo && t <= hi;
}

/* The file of the log (or one of its rotated copies, PATH.1 to
 * PATH.keep) that is (dev, ino), open for reading; -1 when none is. */
static long flight_file(const char *path, unsigned keep, uint64_t dev,
			uint64_t ino)
{
	char name[STATE_LOG_MAX + 16];
	struct stat sb;
	unsigned k;
	long fd;

	for (k = 0; k <= keep && k <= 1000; k++) {
		if (k)
			snprintf(name, sizeof(name), "%s.%u", path, k);
		else
			snprintf(name, sizeof(name), "%s", path);
		fd = open_regular(name, O_RDONLY);
		if (fd < 0) {
			if (k)
				return -1; /* the set ends there */
			continue;
		}
		if (fstat((int)fd, &sb) == 0 && (uint64_t)sb.st_dev == dev &&
		    (uint64_t)sb.st_ino == ino)
			return fd;
		SM_SYSCALL(SYS_close, fd);
	}
	return -1;
}

/*
 * The close records of the part the dead process was writing when it
 * died (closeq.h's flight_*) that are in its log all the same: whole
 * lines, each one close record of this very process made no later than
 * the part was aimed (so not a later process's with the same pid, nor an
 * earlier recovery's), from the noted offset of that very file on (or
 * of its rotated copy), at most as many as the part held.  They were
 * counted as dropped until seen to land, and the kill came first (in the
 * write: the lines before a tear; or just after it); before, the
 * recovered exit record counted them both in the log and in
 * close_records_dropped (a helper's stress-ng sweep: 495 of them).  0
 * when the note is not armed or no file is that one.
 */
static uint64_t flight_landed(const struct image *img,
			      const struct closeq_shared *sh, unsigned keep)
{
	char mark[64];
	char *buf;
	uint64_t found = 0, want = sh->flight_closes, pos, upto;
	double hi = (double)sh->flight_real_ns / 1e9 + 0.002;
	struct stat sb;
	long fd, got;
	bool json = img->hdr.format == FORMAT_JSON, skip = false;

	if (!sh->flight_armed || !want ||
	    img->hdr.format == FORMAT_PROMETHEUS ||
	    strcmp(img->hdr.log_path, "stderr") == 0)
		return 0;
	fd = flight_file(img->hdr.log_path, keep, sh->flight_dev,
			 sh->flight_ino);
	if (fd < 0)
		return 0;
	buf = mmap(NULL, FLIGHT_PIECE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED || fstat((int)fd, &sb) != 0) {
		if (buf != MAP_FAILED)
			munmap(buf, FLIGHT_PIECE);
		SM_SYSCALL(SYS_close, fd);
		return 0;
	}
	if (json)
		snprintf(mark, sizeof(mark), ",\"pid\":%" PRId64 ",",
			 img->hdr.pid);
	else
		snprintf(mark, sizeof(mark), " sockmeter close pid=%" PRId64 " ",
			 img->hdr.pid);
	pos = sh->flight_off;
	upto = (uint64_t)sb.st_size;
	if (upto > pos + FLIGHT_SCAN_MAX)
		upto = pos + FLIGHT_SCAN_MAX;
	while (pos < upto && found < want) {
		uint64_t n = upto - pos < FLIGHT_PIECE ? upto - pos : FLIGHT_PIECE;
		const char *p = buf, *end, *last, *eol;

		got = SM_SYSCALL(SYS_pread64, fd, buf, n, pos);
		if (got <= 0)
			break;
		end = buf + got;
		last = memrchr(buf, '\n', (size_t)got);
		if (!last) {
			/* A line longer than a piece is no record (nor is the
			 * rest of it, in the next piece); a torn one at the
			 * end is not either. */
			if ((uint64_t)got < n)
				break;
			pos += (uint64_t)got;
			skip = true;
			continue;
		}
		for (; p <= last && found < want; p = eol + 1) {
			eol = memchr(p, '\n', (size_t)(end - p));
			if (skip)
				skip = false;
			else
				found += flight_line(img, p, (size_t)(eol - p),
						     json, mark, hi);
		}
		pos += (uint64_t)(last + 1 - buf);
	}
	munmap(buf, FLIGHT_PIECE);
	SM_SYSCALL(SYS_close, fd);
	return found < want ? found : want;
}

/*
 * Whether the log at path already ends with the final record of the
 * process img holds, among its last megabyte (other processes may have
 * appended since), made after the process started:
 *  - recovered false: the process's own exit or exec record (no "end").
 *    Marked STATE_ENDING, it was killed while writing that record, or
 *    after.
 *  - recovered true: one a recoverer wrote for it (with "end"; in JSON
 *    with the process's very start time).  A recoverer that died after
 *    writing the records, before removing the file it had claimed, left
 *    them there: the one that takes its claim over must not write them
 *    twice.
 */
static bool log_has_final_in(const struct image *img, const char *path,
			     bool recovered)
{
	const size_t tail_max = 1u << 20;
	char pj[48], pt[64], pt2[64], pid_text[48];
	double start = (double)img->hdr.start_real_ns / 1e9 - 0.001;
	struct stat sb;
	char *map;
	const char *p, *end;
	size_t len, off, pl, n;
	long fd, got;
	bool found = false;

	if (img->hdr.format == FORMAT_PROMETHEUS)
		return false; /* rewritten whole: writing it again is harmless */
	fd = open_regular(path, O_RDONLY);
	if (fd < 0)
		return false;
	if (fstat((int)fd, &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_size <= 0) {
		SM_SYSCALL(SYS_close, fd);
		return false;
	}
	/* The last tail_max - 1 bytes and the one before them: a line that
	 * starts right at the tail (the byte before is a newline) is kept
	 * whole (a review's). */
	off = (size_t)sb.st_size >= tail_max ? (size_t)sb.st_size - tail_max : 0;
	len = (size_t)sb.st_size - off;
	/* Read, not mapped: a log another process cuts short meanwhile
	 * (logrotate's copytruncate) made the mapping's pages past its new
	 * end a SIGBUS in the host whose ticker recovers (a review's). */
	map = mmap(NULL, tail_max, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED) {
		SM_SYSCALL(SYS_close, fd);
		return false;
	}
	got = SM_SYSCALL(SYS_pread64, fd, map, len, (off_t)off);
	SM_SYSCALL(SYS_close, fd);
	if (got <= 0) {
		munmap(map, tail_max);
		return false;
	}
	len = (size_t)got;
	end = map + len;
	/* A tail that starts within a line: its first piece is no record. */
	p = map;
	if (off) {
		p = memchr(map, '\n', len);
		if (!p) {
			munmap(map, tail_max);
			return false;
		}
		p++;
	}
	snprintf(pj, sizeof(pj), ",\"pid\":%" PRId64 ",", img->hdr.pid);
	snprintf(pt, sizeof(pt), " sockmeter exit pid=%" PRId64 " ",
		 img->hdr.pid);
	snprintf(pt2, sizeof(pt2), " sockmeter exec pid=%" PRId64 " ",
		 img->hdr.pid);
	snprintf(pid_text, sizeof(pid_text), " pid=%" PRId64 " ",
		 img->hdr.pid);
	for (; p < end && !found;) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		const char *line = p;

		p = eol ? eol + 1 : end;
		n = (size_t)((eol ? eol : end) - line);
		pl = n < 200 ? n : 200; /* the head of the line */
		if (n && line[0] == '{') {
			if (n < 15 ||
			    (memcmp(line, "{\"type\":\"exit\",", 15) != 0 &&
			     memcmp(line, "{\"type\":\"exec\",", 15) != 0) ||
			    !memmem(line, pl, pj, strlen(pj)) ||
			    (memmem(line, n, "\"end\":\"", 7) != NULL) !=
				    recovered)
				continue;
			/* A recovered record names the start (the time it was
			 * written is the recovery's). */
			if (recovered) {
				uint64_t at = json_start_ns(line, pl);

				found = at + 2000u > img->hdr.start_real_ns &&
					at < img->hdr.start_real_ns + 2000u;
				continue;
			}
		} else if (recovered) {
			if ((!memmem(line, pl, " sockmeter exit end=", 20) &&
			     !memmem(line, pl, " sockmeter exec end=", 20)) ||
			    !memmem(line, pl, pid_text, strlen(pid_text)))
				continue;
		} else if (!memmem(line, pl, pt, strlen(pt)) &&
			   !memmem(line, pl, pt2, strlen(pt2))) {
			continue;
		}
		found = line_time(line, line + n) >= start;
	}
	munmap(map, tail_max);
	return found;
}

static bool log_has_final(const struct image *img)
{
	return log_has_final_in(img, img->hdr.log_path, false);
}

/* A recoverer's records for img already written (see log_has_final_in):
 * to its log, or, as root, beside its state file (root_append). */
static bool recovered_before(const struct image *img, const char *fallback)
{
	return log_has_final_in(img, img->hdr.log_path, true) ||
	       (geteuid() == 0 && log_has_final_in(img, fallback, true));
}

/* (A raw kill: the library exports a kill of its own.) */
static bool pid_alive(long pid)
{
	long r = pid > 0 ? raw_syscall6(SYS_kill, pid, 0, 0, 0, 0, 0) : -ESRCH;

	return pid > 0 && (r == 0 || r == -EPERM);
}

/* A claim name: NAME.state.rec-PID.  Returns PID, or 0 if name is not. */
static long claim_pid(const char *name)
{
	const char *p = strstr(name, STATE_SUFFIX CLAIM);

	if (!p)
		return 0;
	return strtol(p + strlen(STATE_SUFFIX CLAIM), NULL, 10);
}

/* NAME.state.unwritten back to NAME.state, for this recover to try
 * again: only a file of this user's, the one a recover of its own can
 * write.  Another user's (root's recover in a service user's directory)
 * would be found foreign and left as it is, unparked: that user's
 * automatic recoveries would then retry its log again. */
static void unpark(const char *dir, const char *name)
{
	char from[CONFIG_PATH_MAX + 300], to[CONFIG_PATH_MAX + 300];
	size_t n = strlen(name), u = strlen(UNWRITTEN);
	struct stat sb;

	if (n <= u || strcmp(name + n - u, UNWRITTEN) != 0 ||
	    (size_t)snprintf(from, sizeof(from), "%s/%s", dir, name) >=
		    sizeof(from) ||
	    (size_t)snprintf(to, sizeof(to), "%s/%.*s", dir, (int)(n - u),
			     name) >= sizeof(to))
		return;
	if (fstatat(AT_FDCWD, from, &sb, AT_SYMLINK_NOFOLLOW) != 0 ||
	    sb.st_uid != geteuid())
		return;
	SM_SYSCALL(SYS_renameat2, AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE);
}

static bool is_state_name(const char *name)
{
	size_t n = strlen(name), s = strlen(STATE_SUFFIX);

	return name[0] != '.' && n > s &&
	       strcmp(name + n - s, STATE_SUFFIX) == 0;
}

/*
 * A file shorter than a header, or with no magic yet (written last by
 * fill_header): its process (pid and start time from its name) is setting
 * it up (UNFINISHED_LIVE: a running process, as any other's file; before,
 * a scan at that moment said "not a sockmeter state file", up to 10 scans
 * in a row in a helper's loop of recovers beside starting programs), or
 * died while doing so (killed at start-up), and there is nothing to
 * recover: removed (UNFINISHED_REMOVED; left there, such files filled the
 * automatic scan's quota and hid the files that had numbers).
 * UNFINISHED_NO: not such a file, or one that cannot be told.
 */
enum { UNFINISHED_NO, UNFINISHED_LIVE, UNFINISHED_REMOVED };
static int unfinished(const char *name, const char *path,
		      const struct state_header *h)
{
	static const char zero[sizeof(h->magic)];
	struct stat sb;
	long pid;
	uint64_t start;
	char *end;

	if (stat(path, &sb) != 0 ||
	    (sb.st_size >= (off_t)sizeof(struct state_header) &&
	     memcmp(h->magic, zero, sizeof(zero)) != 0))
		return UNFINISHED_NO;
	pid = strtol(name, &end, 10);
	if (*end != '-' || state_name_view(name) != state_pid_view(NULL))
		return UNFINISHED_NO;
	start = strtoull(end + 1, NULL, 10);
	if (pid_alive(pid) && state_starts_match(state_proc_start(pid), start))
		return UNFINISHED_LIVE;
	return SM_SYSCALL(SYS_unlinkat, AT_FDCWD, path, 0) == 0
		       ? UNFINISHED_REMOVED
		       : UNFINISHED_NO;
}

/* The pid namespaces this view of /proc shows a process in (their
 * inodes), read once per scan when first needed; full when there were
 * more than fit (then every namespace counts as seen); blind when some
 * process's namespace could not be read (another user's, or one that
 * changed its credentials: not dumpable), so that a namespace not seen
 * may still have processes. */
#define NS_SEEN_MAX 256
struct ns_seen {
	bool read, full, blind;
	unsigned n;
	uint64_t ino[NS_SEEN_MAX];
};

/* Whether process pid (its /proc name) is in the pid namespace of this
 * /proc itself, by its status's NSpid line (one pid: no namespace below;
 * readable where ns/pid is not: another user's process, a process that
 * changed its credentials, a container runtime's init).  False when it
 * cannot tell. */
static bool in_proc_ns(const char *pid)
{
	char path[64], buf[2048];
	const char *l, *end;
	long fd, n;
	int fields = 0;

	snprintf(path, sizeof(path), "/proc/%.20s/status", pid);
	fd = sys_open(path, O_RDONLY);
	if (fd < 0)
		return false;
	n = SM_SYSCALL(SYS_read, fd, buf, sizeof(buf) - 1);
	SM_SYSCALL(SYS_close, fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	l = strstr(buf, "\nNSpid:");
	if (!l)
		return false;
	end = strchr(l + 1, '\n');
	if (!end)
		return false; /* cut: more than fit */
	for (l += 7; l < end; l++)
		if (*l >= '0' && *l <= '9' && (l[-1] == ' ' || l[-1] == '\t'))
			fields++;
	return fields == 1;
}

static void ns_seen_read(struct ns_seen *ns)
{
	char buf[4096] __attribute__((aligned(8)));
	char path[64];
	struct stat sb;
	long fd, n, pos;
	unsigned i;

	ns->read = true;
	fd = sys_open("/proc", O_RDONLY | O_DIRECTORY);
	if (fd < 0) {
		ns->full = true;
		return;
	}
	while ((n = SM_SYSCALL(SYS_getdents64, fd, buf, sizeof(buf))) > 0)
		for (pos = 0; pos < n;) {
			const struct dirent64_raw *e = (const void *)(buf + pos);

			pos += e->reclen;
			if (e->name[0] < '1' || e->name[0] > '9')
				continue;
			snprintf(path, sizeof(path), "/proc/%.20s/ns/pid",
				 e->name);
			if (stat(path, &sb) != 0) {
				if (errno != ENOENT && errno != ESRCH &&
				    !in_proc_ns(e->name))
					ns->blind = true;
				continue;
			}
			for (i = 0; i < ns->n && ns->ino[i] != sb.st_ino; i++)
				;
			if (i < ns->n)
				continue;
			if (ns->n == NS_SEEN_MAX) {
				ns->full = true;
				break;
			}
			ns->ino[ns->n++] = sb.st_ino;
		}
	if (n < 0)
		ns->full = true;
	SM_SYSCALL(SYS_close, fd);
}

static bool ns_seen_has(struct ns_seen *ns, uint64_t ino)
{
	unsigned i;

	if (!ns->read)
		ns_seen_read(ns);
	for (i = 0; i < ns->n; i++)
		if (ns->ino[i] == ino)
			return true;
	return ns->full;
}

/*
 * Whether the pid namespace ino is surely gone: this /proc numbers the
 * initial namespace (view 0: every process of every namespace is in it),
 * every process's namespace could be read (root; or a user with no other
 * user's process running and none that changed credentials), and no
 * process is in it.  Then every process of it is dead, its pid 1 first,
 * and a file of it still live was left by a kill: recovered as any dead
 * process's (the container's pid 1 killed from outside: unshare -fp
 * --mount-proc, a crashed bubblewrap sandbox).  Before, such a file was
 * left alone for good.
 */
static bool ns_gone(struct ns_seen *ns, uint64_t view, uint64_t ino)
{
	return view == 0 && ino && ino != STATE_VIEW_BLIND &&
	       ino != STATE_VIEW_NOPROC && !ns_seen_has(ns, ino) && !ns->blind;
}

/*
 * A file of another pid namespace that no process here is in any more,
 * and whose process marked it final (its exit record is written), is
 * only litter: removed.  Such a process cannot always remove it itself:
 * bubblewrap's pid 1 makes its file in the host's /dev/shm, then
 * pivot_roots into a root with a /dev/shm of its own, where the file's
 * path leads nowhere.  The namespace must be gone: a file is also final
 * for a moment while its process execs (back to live if the exec fails,
 * replaced by the new image's if it succeeds).  The file is claimed by a
 * rename first and looked at again under the claim, so that an image
 * that replaced it meanwhile keeps its own (renamed back).  Any other
 * file of such a namespace is left alone (its pid cannot be checked from
 * here).  True when the file was removed.
 */
static bool final_elsewhere(const char *dir, const char *name,
			    struct ns_seen *ns)
{
	char path[CONFIG_PATH_MAX + 300], claim[CONFIG_PATH_MAX + 340];
	struct state_header h;
	struct stat sb;
	const char *why;
	long fd;
	int bad;

	/* Not one made without /proc: no namespace to see gone, and it may
	 * be final for the moment of an exec that fails (a reviewer's
	 * reading). */
	if (claim_pid(name) || state_name_view(name) == STATE_VIEW_NOPROC ||
	    (size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >=
		    sizeof(path) ||
	    (size_t)snprintf(claim, sizeof(claim), "%s%s%ld", path, CLAIM,
			     (long)getpid()) >= sizeof(claim))
		return false;
	fd = sys_open(path, O_RDONLY | O_NOFOLLOW);
	if (fd < 0)
		return false;
	bad = fstat((int)fd, &sb) != 0 || sb.st_uid != geteuid() ||
	      read_header(fd, &h, &why) != 0;
	SM_SYSCALL(SYS_close, fd);
	if (bad || h.status != STATE_FINAL ||
	    ns_seen_has(ns, state_name_view(name)) ||
	    SM_SYSCALL(SYS_renameat, AT_FDCWD, path, AT_FDCWD, claim) != 0)
		return false;
	fd = sys_open(claim, O_RDONLY | O_NOFOLLOW);
	bad = fd < 0 || read_header(fd, &h, &why) != 0 ||
	      h.status != STATE_FINAL;
	if (fd >= 0)
		SM_SYSCALL(SYS_close, fd);
	if (bad) {
		SM_SYSCALL(SYS_renameat2, AT_FDCWD, claim, AT_FDCWD, path,
			RENAME_NOREPLACE);
		return false;
	}
	return SM_SYSCALL(SYS_unlinkat, AT_FDCWD, claim, 0) == 0;
}

/* The files a scan could not read, to go back under their own names once
 * the scan has passed them: renamed back at once, a file could be met
 * again in the same pass (a rename may give the entry a later place in
 * the directory: tmpfs on some kernels), and a hand-run recover, with
 * no quota of files, would never end.  Names only (ours are short); past
 * RESTORE_MAX the rest stay claimed until this process ends (a claim of
 * a dead process is taken over). */
#define RESTORE_MAX  16
#define RESTORE_NAME 96
struct restores {
	unsigned n;
	char claim[RESTORE_MAX][RESTORE_NAME], orig[RESTORE_MAX][RESTORE_NAME];
};

static void restore_later(struct restores *rs, const char *claim,
			  const char *orig)
{
	if (!rs || rs->n >= RESTORE_MAX || strlen(claim) >= RESTORE_NAME ||
	    strlen(orig) >= RESTORE_NAME)
		return;
	memcpy(rs->claim[rs->n], claim, strlen(claim) + 1);
	memcpy(rs->orig[rs->n], orig, strlen(orig) + 1);
	rs->n++;
}

/* Never over a file of that name (one made since, with the same pid and
 * start after a reboot, in a state directory that outlived it). */
static void restore_all(long dirfd, struct restores *rs)
{
	unsigned i;

	for (i = 0; i < rs->n; i++)
		SM_SYSCALL(SYS_renameat2, dirfd, rs->claim[i], dirfd,
			   rs->orig[i], RENAME_NOREPLACE);
	rs->n = 0;
}

/*
 * Back under its own name, for a later try, once the scan is over
 * (restore_all): left claimed, no scan would take it while this process
 * lives (its own pass over claims of its own pid, a hand-run recover over
 * those of a live one).  why: said with it.
 */
static void leave_for_later(struct restores *rs, const char *dir,
			    const char *name, int base, const char *claim,
			    const char *why, const struct recover_opts *o)
{
	char own[RESTORE_NAME], claimed[RESTORE_NAME];

	snprintf(own, sizeof(own), "%.*s", base, name);
	snprintf(claimed, sizeof(claimed), "%s", claim + strlen(dir) + 1);
	restore_later(rs, claimed, own);
	say(o, "sockmeter recover: %s/%s: %s; left for a later recovery", dir,
	    own, why);
}

/* gone: the file is of another pid namespace, which is gone (ns_gone):
 * its process is dead, though its pid cannot be looked at from here. */
static void recover_one(const char *dir, const char *name,
			const struct recover_opts *o, struct recover_stats *st,
			bool gone, struct restores *rs)
{
	char path[CONFIG_PATH_MAX + 300], claim[CONFIG_PATH_MAX + 340];
	char orig[CONFIG_PATH_MAX + 340], fallback[CONFIG_PATH_MAX + 340];
	struct image img;
	const char *why, *cl = strstr(name, STATE_SUFFIX CLAIM);
	long fd, owner = claim_pid(name);
	/* The state file's own name: the entry's, less a claim's suffix
	 * (looked for in the name, not in the directory's path). */
	int base = cl ? (int)(cl - name) + (int)strlen(STATE_SUFFIX)
		      : (int)strlen(name);
	size_t base_len;
	int r;

	/* A name that does not fit is not one of ours (ours are short). */
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >=
	    sizeof(path)) {
		st->skipped++;
		return;
	}
	base_len = strlen(dir) + 1 + (size_t)base;
	if (owner) {
		/* A recoverer's claim: take it over only if it died. */
		if (owner == (long)getpid() || pid_alive(owner)) {
			st->skipped++;
			return;
		}
		snprintf(claim, sizeof(claim), "%.*s%s%ld", (int)base_len,
			 path, CLAIM, (long)getpid());
	} else {
		struct stat sb;

		memset(&img, 0, sizeof(img));
		fd = sys_open(path, O_RDONLY | O_NOFOLLOW);
		if (fd < 0) {
			st->skipped++; /* gone meanwhile: another recoverer */
			return;
		}
		/* Another user's file is that user's to recover (its records
		 * go to that user's log): not claimed, not touched. */
		if (fstat((int)fd, &sb) == 0 && sb.st_uid != geteuid()) {
			SM_SYSCALL(SYS_close, fd);
			say(o,
			    "sockmeter recover: %s: owned by uid %u; left for "
			    "that user's sockmeter recover",
			    path, (unsigned)sb.st_uid);
			st->foreign++;
			return;
		}
		if (read_header(fd, &img.hdr, &why) != 0) {
			int u;

			SM_SYSCALL(SYS_close, fd);
			u = unfinished(name, path, &img.hdr);
			if (u == UNFINISHED_LIVE) {
				st->alive++;
				return;
			}
			if (u == UNFINISHED_REMOVED) {
				st->removed++;
				return;
			}
			say(o, "sockmeter recover: %s: %s; left alone", path,
			    why);
			st->skipped++;
			return;
		}
		SM_SYSCALL(SYS_close, fd);
		if (img.hdr.status == STATE_FINAL) {
			/* Its last record is written (exec): nothing to do
			 * but tidy up, once. */
			if (SM_SYSCALL(SYS_unlinkat, AT_FDCWD, path, 0) == 0)
				st->removed++;
			return;
		}
		if (img.hdr.status != STATE_ORPHAN && !gone &&
		    process_alive(&img.hdr, name)) {
			st->alive++;
			return;
		}
		/* Logged to a stderr: a recover with one of its own prints
		 * it (write_records); an automatic scan has none, and parks
		 * it where the automatic scans pass over it (left in place,
		 * such files filled the scan's quota of files and hid the
		 * ones it could recover). */
		if (!o->stderr_here &&
		    strncmp(img.hdr.log_path, "stderr",
			    sizeof(img.hdr.log_path)) == 0) {
			park_for_hand(path, strlen(path), orig, sizeof(orig));
			st->skipped++;
			return;
		}
		snprintf(claim, sizeof(claim), "%s%s%ld", path, CLAIM,
			 (long)getpid());
	}
	/* The one atomic step that makes the recovery ours alone. */
	if (SM_SYSCALL(SYS_renameat, AT_FDCWD, path, AT_FDCWD, claim) != 0) {
		st->skipped++;
		return;
	}
	memset(&img, 0, sizeof(img));
	if (read_image(claim, &img, &why, o) != 0) {
		leave_for_later(rs, dir, name, base, claim, why, o);
		st->skipped++;
		return;
	}
	/* Reading a busy process's file (8 MB of data, 30 ms here when
	 * quiet) and making its records (25-50 ms) took 0.27-0.5 s of the
	 * ticker's on two loaded cores, while a host churning 25,000
	 * closes/s fills its 8,192-record queue in 0.33 s: its own records
	 * are written between the steps too, and between the reads.  (Since
	 * read_image reads only the ring entries wanted and the walks stop
	 * at the last slot with data, such a file takes about 7 ms.) */
	if (o->between)
		o->between(o->between_ctx);
	{
		/* From the state file's own name, less ".state": a claim
		 * taken over from a dead recoverer (NAME.state.rec-PID)
		 * names the same file as the first recoverer did, so that
		 * recovered_before finds what it wrote (before, a second
		 * file, and the records written twice: a reviewer's
		 * reading). */
		size_t sl = strlen(STATE_SUFFIX);
		int len = base_len >= sl &&
				  strncmp(path + base_len - sl, STATE_SUFFIX,
					  sl) == 0
			  ? (int)(base_len - sl)
			  : (int)base_len;

		snprintf(fallback, sizeof(fallback), "%.*s.recovered.log",
			 len, path);
	}
	distrust_exposed(&img, claim, path, fallback, o);
	img.name_pid = state_name_view(name) == state_pid_view(NULL)
			       ? (int64_t)strtol(name, NULL, 10)
			       : -1;
	/* Killed while writing its final record, or it wrote it and could
	 * not tell (its writer, a child, was killed after the write): the
	 * record may be in the log already. */
	if (img.hdr.status == STATE_FINAL ||
	    ((img.hdr.status == STATE_ENDING ||
	      img.hdr.status == STATE_UNWRITTEN) &&
	     log_has_final(&img)) ||
	    (owner && recovered_before(&img, fallback))) {
		st->removed++;
	} else if ((r = write_records(&img, fallback, o)) == NO_MEMORY) {
		leave_for_later(rs, dir, name, base, claim,
				"no memory to make its records", o);
		st->skipped++;
		munmap(img.p, img.size);
		return;
	} else if (r == NOT_HERE) {
		/* Parked for sockmeter recover, which prints it on its own
		 * stderr (before, an automatic scan removed it with nothing
		 * written: the numbers were gone). */
		park_for_hand(claim, base_len, orig, sizeof(orig));
		st->skipped++;
		munmap(img.p, img.size);
		return;
	} else if (r >= 0) {
		st->recovered++;
		if (r == 0)
			say(o,
			    "sockmeter recover: %s[%" PRId64 "]: final %s %s",
			    img.hdr.prog, img.hdr.pid,
			    img.textfile ? "numbers written to its textfile"
					 : "records appended to",
			    img.hdr.log_path);
		else
			say(o,
			    "sockmeter recover: %s[%" PRId64 "]: it had no "
			    "connection: no record to write",
			    img.hdr.prog, img.hdr.pid);
	} else if (park_for_hand(claim, base_len,
				 orig, sizeof(orig))) {
		/* Its numbers exist nowhere else: the file stays, parked
		 * under a name the automatic scans pass over (every metered
		 * process retrying a log gone for good stalled its ticker
		 * with it), for a recover run by hand. */
		st->unwritten++;
		say(o,
		    "sockmeter recover: %s[%" PRId64 "]: cannot %s its "
		    "final records to %s: %s; its state file is kept as %s "
		    "for a sockmeter recover run once the log can be written",
		    img.hdr.prog, img.hdr.pid,
		    img.hdr.format == FORMAT_PROMETHEUS ? "write" : "append",
		    img.hdr.log_path, strerror(-r), orig);
		munmap(img.p, img.size);
		return;
	} else {
		/* Not even parked (the rename refused): its numbers exist
		 * nowhere else, so the file is not removed either. */
		leave_for_later(rs, dir, name, base, claim,
				"cannot append its final records", o);
		st->skipped++;
		munmap(img.p, img.size);
		return;
	}
	munmap(img.p, img.size);
	SM_SYSCALL(SYS_unlinkat, AT_FDCWD, claim, 0);
}

/*
 * Whether root may recover in dir (opened as fd): it, and every
 * directory on the way to it, held by root (dir_held: root's, closed to
 * others or sticky), with no link on the way but root's own
 * (open_dir_trusted).  Everything in a recovery goes through paths under
 * dir (the claim's rename, the image, the file beside the state file
 * that a refused log's records go to): a directory on the way that a
 * user owns (a user's /dev/shm/sockmeter-UID) could be swapped for a
 * link at any moment, between the fallback's name being made and its
 * open, to /etc/bash_completion.d (a reviewer's proof, with a root state
 * file whose header a dropped process rewrote).  A user's files in a
 * user's directory are left alone by root anyway (recover_one).
 */
static bool root_holds_dir(const char *dir, long fd)
{
	char path[CONFIG_PATH_MAX + 8], cwd[CONFIG_PATH_MAX];
	struct stat a, b;
	const char *base;
	bool held = false;
	long t;

	if (dir[0] == '/')
		cwd[0] = '\0';
	else if (!getcwd(cwd, sizeof(cwd)))
		return false;
	if ((size_t)snprintf(path, sizeof(path), "%s%s%s/.", cwd,
			     cwd[0] ? "/" : "", dir) >= sizeof(path))
		return false;
	t = open_dir_trusted(path, &base, &held);
	if (t < 0)
		return false;
	held = held && fstat((int)t, &a) == 0 && fstat((int)fd, &b) == 0 &&
	       a.st_dev == b.st_dev && a.st_ino == b.st_ino;
	SM_SYSCALL(SYS_close, t);
	return held;
}

/*
 * The directory is read with getdents64 into the stack, not opendir: the
 * automatic scan runs in the ticker, and opendir's malloc would give the
 * ticker an arena of its own, a region of written pages every fork of the
 * host then copies (docs/performance.md#churn).  Entries unlinked while
 * reading are the kernel's business, as with readdir.  Files parked as
 * unwritten are put back first when asked, in a pass of their own (a
 * rename while reading may or may not be seen).
 */
int recover_dir(const char *dir, const struct recover_opts *o,
		struct recover_stats *st)
{
	/* Told before the open, which a FUSE server that does not answer
	 * would hold for ever (procns_fuse_mount); the statfs after it
	 * tells the rest. */
	bool fuse = procns_fuse_mount(dir) == 1;
	long fd = fuse ? -1 : sys_open(dir, O_RDONLY | O_DIRECTORY);
	uint64_t view = state_pid_view(NULL);
	unsigned seen = 0, looked_elsewhere = 0;
	struct ns_seen ns = { 0 };
	struct restores rs;
	char buf[8192] __attribute__((aligned(8)));
	long n;

	memset(st, 0, sizeof(*st));
	rs.n = 0;
	if (fd < 0 && !fuse) {
		int err = errno;

		say(o, "sockmeter recover: %s: %s", dir, strerror(err));
		return -err;
	}
	/* Anyone's: on FUSE, a file's owner and contents are the server's
	 * (state.c's check_dir refuses to make files there too). */
	if (fuse || !fs_says_owners(fd)) {
		say(o, "sockmeter recover: %s: " PROCNS_FUSE_SAYS "; left alone",
		    dir);
		if (fd >= 0)
			SM_SYSCALL(SYS_close, fd);
		return -EPERM;
	}
	/* Root of the initial user namespace only: a user namespace's
	 * root is its user, whose recovery can write only where that user
	 * can (and sees real root's directories as nobody's). */
	if (geteuid() == 0 && procns_uid_outer(0) == 0 &&
	    !root_holds_dir(dir, fd)) {
		say(o,
		    "sockmeter recover: %s: a directory that someone other "
		    "than root could change or swap (or reached through one, "
		    "or through a link root did not make): root recovers "
		    "only where nobody else can move its files; left alone "
		    "(a user's state directory is that user's to recover)",
		    dir);
		SM_SYSCALL(SYS_close, fd);
		return -EPERM;
	}
	while (o->retry_unwritten &&
	       (n = SM_SYSCALL(SYS_getdents64, fd, buf, sizeof(buf))) > 0) {
		long pos = 0;

		while (pos < n) {
			const struct dirent64_raw *e =
				(const void *)(buf + pos);

			pos += e->reclen;
			unpark(dir, e->name);
		}
	}
	if (o->retry_unwritten)
		SM_SYSCALL(SYS_lseek, fd, 0, SEEK_SET);
	while ((n = SM_SYSCALL(SYS_getdents64, fd, buf, sizeof(buf))) > 0) {
		long pos = 0;

		while (pos < n) {
			const struct dirent64_raw *e =
				(const void *)(buf + pos);

			pos += e->reclen;
			if (!is_state_name(e->name) && !claim_pid(e->name))
				continue;
			/* Another pid namespace's (state.h): its pid cannot
			 * be checked from here.  Passed over before the
			 * quota, so that such files never keep the automatic
			 * scan from this namespace's own; only one marked
			 * final is removed (final_elsewhere), and one of a
			 * namespace surely gone recovered (ns_gone), looked
			 * at up to a quota of their own. */
			if (state_name_view(e->name) != view) {
				bool look = !o->max_files ||
					    looked_elsewhere++ < o->max_files;

				/* (Not from a view that sees no namespace at
				 * all: a recovery without /proc.) */
				if (look && view != STATE_VIEW_BLIND &&
				    final_elsewhere(dir, e->name, &ns)) {
					st->removed++;
					continue;
				}
				if (look &&
				    !(o->stop &&
				      __atomic_load_n(o->stop, __ATOMIC_ACQUIRE)) &&
				    ns_gone(&ns, view, state_name_view(e->name))) {
					if (o->between)
						o->between(o->between_ctx);
					if (!lockall_scratch_begin())
						goto done;
					recover_one(dir, e->name, o, st, true, &rs);
					lockall_scratch_end();
					continue;
				}
				if (state_name_view(e->name) ==
				    STATE_VIEW_NOPROC)
					say(o,
					    "sockmeter recover: %s/%s: its "
					    "process ran without /proc, and "
					    "whether it still runs cannot be "
					    "told; left alone (once it has "
					    "surely ended, rename the file "
					    "without its \"%s%u\" and recover "
					    "again: docs/state.md)",
					    dir, e->name, STATE_NS_TAG,
					    (unsigned)STATE_VIEW_NOPROC);
				else if (view == STATE_VIEW_BLIND)
					say(o,
					    "sockmeter recover: %s/%s: this "
					    "recover cannot tell which "
					    "processes run (no /proc, or one "
					    "of another pid namespace); left "
					    "alone",
					    dir, e->name);
				else
					say(o,
					    "sockmeter recover: %s/%s: a "
					    "process of another pid namespace; "
					    "left alone",
					    dir, e->name);
				st->skipped++;
				continue;
			}
			if (o->max_files && seen++ >= o->max_files)
				goto done;
			/* A final record asked for (the host's exit or
			 * exec): the ticker is wanted, the rest can wait. */
			if (o->stop && __atomic_load_n(o->stop, __ATOMIC_ACQUIRE))
				goto done;
			if (o->between)
				o->between(o->between_ctx);
			/* Not while an mlockall runs; none once the future
			 * mappings are locked (lockall.h). */
			if (!lockall_scratch_begin())
				goto done;
			recover_one(dir, e->name, o, st, false, &rs);
			lockall_scratch_end();
		}
	}
done:
	restore_all(fd, &rs);
	SM_SYSCALL(SYS_close, fd);
	return 0;
}

static void no_report(void *ctx, const char *msg)
{
	(void)ctx;
	(void)msg;
}

/*
 * The automatic scan writes what headers name, as this process: only
 * where this process is no more than the directory's owner.  One that can
 * change its effective uid back (seteuid: its real or saved uid differs,
 * as smbd's and proftpd's do per request; glibc changes the ticker's with
 * it, at any moment of a scan) or that holds capabilities while not root
 * could be made to write, or give away, a file as someone more powerful
 * than the user who wrote the header.  It leaves the scan to others.
 */
static bool plain_credentials(void)
{
	struct {
		uint32_t version;
		int pid;
	} hdr = {0x20080522, 0}; /* _LINUX_CAPABILITY_VERSION_3 */
	struct {
		uint32_t effective, permitted, inheritable;
	} data[2];
	uid_t r, e, s;
	gid_t rg, eg, sg;

	if (getresuid(&r, &e, &s) != 0 || getresgid(&rg, &eg, &sg) != 0 ||
	    r != e || s != e || rg != eg || sg != eg)
		return false;
	if (e == 0)
		return true;
	memset(data, 0, sizeof(data));
	return SM_SYSCALL(SYS_capget, &hdr, data) == 0 && !data[0].effective &&
	       !data[0].permitted && !data[1].effective && !data[1].permitted;
}

void recover_auto(const struct config *cfg, const uint32_t *stop,
		  void (*between)(void *ctx), void *ctx,
		  void (*moved)(const char *msg))
{
	struct recover_opts o = {.max_files = RECOVER_AUTO_MAX,
				 .report = no_report,
				 .stop = stop,
				 .between = between,
				 .between_ctx = ctx,
				 .moved = moved};
	struct recover_stats st;
	char dir[CONFIG_PATH_MAX], lock[CONFIG_PATH_MAX + 32];
	struct stat sb;
	struct timespec now;
	long fd;

	if (!cfg->state_enabled || !plain_credentials() ||
	    state_dir_expand(cfg->state_dir, dir, sizeof(dir)) != 0)
		return;
	/* Only a directory the library would make its files in (state.c's
	 * check_dir): ours and closed to others.  In one others may write
	 * to, what the scan finds and where its lock goes are theirs to
	 * arrange.  Not a FUSE mount, told before a stat that a server
	 * which does not answer would hold in this ticker for good. */
	if (procns_fuse_mount(dir) == 1 || lstat(dir, &sb) != 0 ||
	    !S_ISDIR(sb.st_mode) ||
	    sb.st_uid != geteuid() || (sb.st_mode & 022))
		return;
	snprintf(lock, sizeof(lock), "%s/%s", dir, RECOVER_LOCK);
	fd = sys_open(lock, O_RDWR | O_CREAT | O_NOFOLLOW);
	if (fd < 0)
		return;
	clock_gettime(CLOCK_REALTIME, &now);
	if (SM_SYSCALL(SYS_flock, fd, LOCK_EX | LOCK_NB) != 0 ||
	    fstat((int)fd, &sb) != 0 || sb.st_uid != geteuid() ||
	    (sb.st_size > 0 &&
	     now.tv_sec - sb.st_mtime < RECOVER_AUTO_EVERY_S &&
	     now.tv_sec >= sb.st_mtime)) {
		SM_SYSCALL(SYS_close, fd);
		return;
	}
	/* Its mtime says when the last scan was. */
	SM_SYSCALL(SYS_pwrite64, fd, "1", 1, 0);
	recover_dir(dir, &o, &st);
	SM_SYSCALL(SYS_close, fd);
}
