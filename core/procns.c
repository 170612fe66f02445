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
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* The initial user namespace's inode (the kernel's PROC_USER_INIT_INO). */
#define USER_NS_INIT 0xEFFFFFFDu
/* Lines of a uid map read: a map has up to 340, rootless containers 2. */
#define MAP_LINES 32

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

struct read_job {
	const char *path;
	char *buf;
	size_t cap;
	long n;
};

static int read_job(void *arg)
{
	struct read_job *j = arg;

	j->n = proc_read_small(j->path, j->buf, j->cap);
	return 0;
}

/* proc_read_small where the program cannot see the fd (progfd.h): on the
 * ticker's own table, else from progfd_run's child, a process of its own
 * (where /proc/self is that child: self_path is for the calling thread's
 * table only, pid_path for the child). */
static long proc_read_mine(const char *self_path, const char *pid_path,
			   char *buf, size_t cap)
{
	struct read_job j = {pid_path, buf, cap, -1};

	if (progfd_detached())
		return proc_read_small(self_path, buf, cap);
	if (progfd_run(read_job, &j) != 0)
		return -1;
	return j.n;
}

long procns_threads(void)
{
	char buf[1024], path[40], *p;
	long n = 0;
	int field = 2;

	if (sm_quiet())
		return -1;
	snprintf(path, sizeof(path), "/proc/%ld/stat",
		 (long)SM_SYSCALL(SYS_getpid));
	if (proc_read_mine("/proc/self/stat", path, buf, sizeof(buf)) <= 0)
		return -1;
	/* After the name (field 2), which may hold anything. */
	p = strrchr(buf, ')');
	if (!p)
		return -1;
	for (p++; *p && field < 20; p++)
		if (*p == ' ')
			field++;
	if (field != 20 || *p < '0' || *p > '9')
		return -1;
	for (; *p >= '0' && *p <= '9'; p++)
		n = n * 10 + (*p - '0');
	return n;
}

struct extent {
	uint32_t inner, outer, count;
};

/* The caller's uid map, when it has one to apply: its number of lines
 * (up to MAP_LINES), or -1 for none (the initial namespace, no /proc, a
 * sandboxed thread, a map not readable). */
static int uid_map(struct extent *ext)
{
	char buf[MAP_LINES * 34 + 1], *p;
	struct stat sb;
	int n = 0;

	if (sm_quiet() || stat("/proc/self/ns/user", &sb) != 0 ||
	    sb.st_ino == USER_NS_INIT ||
	    proc_read_mine("/proc/self/uid_map", "/proc/self/uid_map", buf,
			   sizeof(buf)) <= 0)
		return -1;
	for (p = buf; n < MAP_LINES; n++) {
		uint64_t v[3];
		int i;

		/* Three numbers a line, blanks around them: by hand, no
		 * locale, nothing a signal handler may not do. */
		for (i = 0; i < 3; i++) {
			while (*p == ' ' || *p == '\t' || *p == '\n')
				p++;
			if (*p < '0' || *p > '9')
				return n;
			for (v[i] = 0; *p >= '0' && *p <= '9'; p++) {
				v[i] = v[i] * 10 + (uint64_t)(*p - '0');
				if (v[i] > UINT32_MAX)
					return n;
			}
		}
		ext[n].inner = (uint32_t)v[0];
		ext[n].outer = (uint32_t)v[1];
		ext[n].count = (uint32_t)v[2];
	}
	return n;
}

unsigned procns_uid_outer(unsigned uid)
{
	struct extent ext[MAP_LINES];
	int saved = errno, n = uid_map(ext), i;

	errno = saved;
	for (i = 0; i < n; i++)
		if (uid >= ext[i].inner && uid - ext[i].inner < ext[i].count)
			return ext[i].outer + (uid - ext[i].inner);
	return uid;
}

bool procns_uid_inner(unsigned outer, unsigned *uid)
{
	struct extent ext[MAP_LINES];
	int saved = errno, n = uid_map(ext), i;

	errno = saved;
	if (n < 0) {
		*uid = outer;
		return true;
	}
	for (i = 0; i < n; i++)
		if (outer >= ext[i].outer &&
		    outer - ext[i].outer < ext[i].count) {
			*uid = ext[i].inner + (outer - ext[i].outer);
			return true;
		}
	return false;
}
