/*
 * syslog.c - warnings for syslog (contract in syslog.h).
 */
#include "syslog.h"
#include "rawsys.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#define IDENT		 "sockmeter"
#define PRI_USER_WARNING (1 << 3 | 4) /* LOG_USER | LOG_WARNING */

size_t syslog_format(char *out, size_t cap, long pid, const char *msg)
{
	size_t n, i;
	int w;

	if (cap == 0)
		return 0;
	if (strncmp(msg, IDENT ": ", strlen(IDENT ": ")) == 0)
		msg += strlen(IDENT ": ");
	w = snprintf(out, cap, "<%d>" IDENT "[%ld]: ", PRI_USER_WARNING, pid);
	n = w < 0 ? 0 : (size_t)w >= cap ? cap - 1 : (size_t)w;
	for (i = 0; msg[i] && n + 1 < cap; i++)
		out[n++] = (unsigned char)msg[i] < 0x20 || msg[i] == 0x7f
			       ? '?'
			       : msg[i];
	out[n] = '\0';
	return n;
}

/* One message over a fresh socket of type type; -errno on failure. */
static int send_on(const struct sockaddr_un *to, int type, const char *buf,
		   size_t len)
{
	long fd = SM_SYSCALL(SYS_socket, AF_UNIX, type | SOCK_CLOEXEC, 0);
	int r = 0;

	if (fd < 0)
		return -errno;
	if (type == SOCK_STREAM &&
	    SM_SYSCALL(SYS_connect, fd, to, sizeof(*to)) != 0)
		r = -errno;
	else if (SM_SYSCALL(SYS_sendto, fd, buf, len, MSG_NOSIGNAL,
			 type == SOCK_STREAM ? NULL : to,
			 type == SOCK_STREAM ? 0 : sizeof(*to)) < 0)
		r = -errno;
	SM_SYSCALL(SYS_close, fd);
	return r;
}

int syslog_send(const char *path, long pid, const char *msg)
{
	struct sockaddr_un to;
	char buf[1024];
	size_t len;
	int saved = errno, r;

	if (strlen(path) >= sizeof(to.sun_path))
		return -ENAMETOOLONG;
	memset(&to, 0, sizeof(to));
	to.sun_family = AF_UNIX;
	memcpy(to.sun_path, path, strlen(path));
	len = syslog_format(buf, sizeof(buf) - 1, pid, msg);
	r = send_on(&to, SOCK_DGRAM, buf, len);
	if (r == -EPROTOTYPE) /* a stream socket: messages end in a NUL */
		r = send_on(&to, SOCK_STREAM, buf, len + 1);
	errno = saved;
	return r;
}
