/*
 * procns.c - small /proc files and the user namespace's uid map (contract
 * in procns.h).
 */
#include "procns.h"
#include "progfd.h"
#include "quiet.h"
#include "rawsys.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdbool.h>
#include <string.h>
#include <stdio.h>
#include <sys/stat.h>

/* The initial user namespace's inode (the kernel's PROC_USER_INIT_INO). */
#define USER_NS_INIT 0xEFFFFFFDu

long proc_read_small(const char *path, char *buf, size_t cap)
{
	long fd = SM_SYSCALL(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	long n;

	if (fd < 0)
		return -1;
	n = SM_SYSCALL(SYS_read, fd, buf, cap - 1);
	SM_SYSCALL(SYS_close, fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return n;
}

/* Run fn(arg), which opens files, where the program cannot see their fds
 * (progfd.h): on the ticker's own table, else in progfd_run's child, a
 * process of its own (/proc/self is that child there). */
static void run_mine(int (*fn)(void *), void *arg)
{
	if (progfd_detached())
		fn(arg);
	else
		progfd_run(fn, arg);
}

/* Three unsigned numbers from *p on, blanks before each: by hand (no
 * locale: what a signal handler may do); false when there are not. */
static bool three_numbers(const char **p, uint64_t v[3])
{
	const char *q = *p;
	int i;

	for (i = 0; i < 3; i++) {
		while (*q == ' ' || *q == '\t')
			q++;
		if (*q < '0' || *q > '9')
			return false;
		for (v[i] = 0; *q >= '0' && *q <= '9'; q++) {
			v[i] = v[i] * 10 + (uint64_t)(*q - '0');
			if (v[i] > UINT32_MAX)
				return false;
		}
	}
	*p = q;
	return true;
}

struct threads_job {
	char path[48];
	long n;
};

static int threads_job(void *arg)
{
	struct threads_job *j = arg;
	char buf[1024], *p;
	int field = 2;

	j->n = -1;
	if (proc_read_small(j->path, buf, sizeof(buf)) <= 0)
		return 0;
	/* After the name (field 2), which may hold anything. */
	p = strrchr(buf, ')');
	if (!p)
		return 0;
	for (p++; *p && field < 20; p++)
		if (*p == ' ')
			field++;
	if (field != 20 || *p < '0' || *p > '9')
		return 0;
	for (j->n = 0; *p >= '0' && *p <= '9'; p++)
		j->n = j->n * 10 + (*p - '0');
	return 0;
}

long procns_threads(void)
{
	struct threads_job j;
	char pid[24];
	long n;
	int saved = errno;

	if (sm_quiet())
		return -1;
	/* The pid as this /proc numbers it (a pid namespace whose /proc is
	 * another's: getpid's number there is another process), read
	 * without an fd; the ticker reads its own /proc/self. */
	if (progfd_detached()) {
		memcpy(j.path, "/proc/self/stat", sizeof("/proc/self/stat"));
	} else {
		n = SM_SYSCALL(SYS_readlinkat, AT_FDCWD, "/proc/self", pid,
			       sizeof(pid) - 1);
		if (n <= 0 || n > 20) {
			errno = saved;
			return -1;
		}
		memcpy(j.path, "/proc/", 6);
		memcpy(j.path + 6, pid, (size_t)n);
		memcpy(j.path + 6 + n, "/stat", sizeof("/stat"));
	}
	j.n = -1;
	run_mine(threads_job, &j);
	errno = saved;
	return j.n;
}

/* A look-up in the uid map, from one side's uid to the other's: found -1
 * when the map could not be read, 0 when no line holds from. */
struct map_job {
	uint32_t from;
	bool inward; /* from is the parent's uid */
	int found;
	uint32_t to;
};

static bool map_line(const char *line, struct map_job *j)
{
	uint64_t v[3], base, other;

	if (!three_numbers(&line, v))
		return false;
	base = j->inward ? v[1] : v[0];
	other = j->inward ? v[0] : v[1];
	if (j->from < base || j->from - base >= v[2])
		return false;
	j->to = (uint32_t)(other + (j->from - base));
	j->found = 1;
	return true;
}

/* The whole map, a piece at a time (up to 340 lines, 11 KiB): every
 * line is looked at, as the tools do (scripts/sockmeter's outer_uid). */
static int map_job(void *arg)
{
	struct map_job *j = arg;
	char buf[512];
	size_t have = 0;
	long fd, n;
	char *line, *nl;

	fd = SM_SYSCALL(SYS_openat, AT_FDCWD, "/proc/self/uid_map",
			O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	j->found = 0;
	for (;;) {
		n = SM_SYSCALL(SYS_read, fd, buf + have,
			       sizeof(buf) - 1 - have);
		if (n < 0)
			j->found = -1;
		if (n <= 0)
			break;
		have += (size_t)n;
		buf[have] = '\0';
		for (line = buf; (nl = strchr(line, '\n')) != NULL;
		     line = nl + 1) {
			*nl = '\0';
			if (map_line(line, j))
				goto out;
		}
		have = (size_t)(buf + have - line);
		memmove(buf, line, have);
		if (have == sizeof(buf) - 1)
			have = 0; /* no line is that long */
	}
	if (j->found == 0 && have) {
		buf[have] = '\0';
		map_line(buf, j);
	}
out:
	SM_SYSCALL(SYS_close, fd);
	return 0;
}

/* The uid map applied to from (inward: from the parent's uid to ours):
 * 1 and *to, 0 when no line holds it, -1 when there is no map to apply
 * (the initial namespace, told by one stat; no /proc; a sandboxed
 * thread; a map not readable). */
static int map_uid(uint32_t from, bool inward, uint32_t *to)
{
	struct map_job j = {from, inward, -1, 0};
	struct stat sb;
	int saved = errno;

	if (sm_quiet() ||
	    SM_SYSCALL(SYS_newfstatat, AT_FDCWD, "/proc/self/ns/user", &sb,
		       0) != 0 ||
	    sb.st_ino == USER_NS_INIT) {
		errno = saved;
		return -1;
	}
	run_mine(map_job, &j);
	errno = saved;
	*to = j.to;
	return j.found;
}

unsigned procns_uid_outer(unsigned uid)
{
	uint32_t to;

	return map_uid(uid, false, &to) == 1 ? to : uid;
}

bool procns_uid_inner(unsigned outer, unsigned *uid)
{
	uint32_t to;
	int r = map_uid(outer, true, &to);

	*uid = r == 1 ? to : outer;
	return r != 0;
}

/* ---- FUSE mounts, told without asking their servers ---------------- */

/* /proc/self/mountinfo, read a piece at a time (a container's may be
 * hundreds of KiB): the file system type of the line whose device
 * (field 3, "major:minor") is j->dev; its fields are separated by
 * blanks (a mount point's own blanks are escaped as \040), the type
 * the field after the one that is "-". */
struct fuse_job {
	char dev[24];
	int found; /* -1: no line of dev (or no /proc), 0: not FUSE, 1: FUSE */
};

static int fuse_job(void *arg)
{
	struct fuse_job *j = arg;
	char buf[1024], field[32];
	size_t fl = 0;
	bool over = false, dev_is = false;
	int f = 0, sep = -1;
	long fd, n, i;

	fd = SM_SYSCALL(SYS_openat, AT_FDCWD, "/proc/self/mountinfo",
			O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	while (j->found < 0 &&
	       (n = SM_SYSCALL(SYS_read, fd, buf, sizeof(buf))) > 0) {
		for (i = 0; i < n && j->found < 0; i++) {
			char c = buf[i];

			if (c != ' ' && c != '\n') {
				if (fl < sizeof(field) - 1)
					field[fl++] = c;
				else
					over = true;
				continue;
			}
			field[fl] = '\0';
			if (f == 2)
				dev_is = !over && strcmp(field, j->dev) == 0;
			else if (sep < 0 && f >= 6 && strcmp(field, "-") == 0)
				sep = f;
			else if (sep >= 0 && f == sep + 1 && dev_is)
				j->found = strcmp(field, "fuse") == 0 ||
					   strcmp(field, "fuseblk") == 0 ||
					   strncmp(field, "fuse.", 5) == 0;
			fl = 0;
			over = false;
			f++;
			if (c == '\n') {
				f = 0;
				sep = -1;
				dev_is = false;
			}
		}
	}
	SM_SYSCALL(SYS_close, fd);
	return 0;
}

int procns_fuse_mount(const char *dir)
{
	struct statx a, b;
	char up[1024], *slash;
	const char *base;
	struct fuse_job j;
	int saved = errno, flags = AT_STATX_DONT_SYNC | AT_NO_AUTOMOUNT;
	size_t len = strlen(dir);

	if (sm_quiet())
		return -1;
	/* Its parent by name, not "dir/..": a walk through a FUSE mount's
	 * root may ask its server for the permission to pass. */
	while (len > 1 && dir[len - 1] == '/')
		len--;
	if (len == 0 || len >= sizeof(up)) {
		errno = saved;
		return -1;
	}
	memcpy(up, dir, len);
	up[len] = '\0';
	slash = strrchr(up, '/');
	base = slash ? slash + 1 : up;
	/* dir itself not followed: a link there (a user's, into a stopped
	 * server's mount) would be looked up in it; a link is no mount,
	 * and the callers' lstat refuses it (a reviewer's proof). */
	if (strcmp(base, ".") == 0 || strcmp(base, "..") == 0 ||
	    SM_SYSCALL(SYS_statx, AT_FDCWD, up, flags | AT_SYMLINK_NOFOLLOW,
		       0, &a) != 0) {
		errno = saved;
		return -1;
	}
	if (!slash)
		memcpy(up, ".", 2);
	else if (slash == up)
		up[1] = '\0';
	else
		*slash = '\0';
	if (SM_SYSCALL(SYS_statx, AT_FDCWD, up, flags, 0, &b) != 0) {
		errno = saved;
		return -1;
	}
	/* Not a mount of its own: on its parent's file system. */
	if (a.stx_dev_major == b.stx_dev_major &&
	    a.stx_dev_minor == b.stx_dev_minor) {
		errno = saved;
		return 0;
	}
	snprintf(j.dev, sizeof(j.dev), "%u:%u", a.stx_dev_major,
		 a.stx_dev_minor);
	j.found = -1;
	run_mine(fuse_job, &j);
	errno = saved;
	return j.found;
}
