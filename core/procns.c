/*
 * procns.c - small /proc files and the user namespace's uid map (contract
 * in procns.h).
 */
#include "procns.h"
#include "quiet.h"
#include "rawsys.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
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
	    proc_read_small("/proc/self/uid_map", buf, sizeof(buf)) <= 0)
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
