/*
 * classify.c - fd kinds and socket addresses (contract in classify.h).
 */
#include "classify.h"
#include "decimal.h"
#include "quiet.h"
#include "rawsys.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

enum fd_kind classify_socket(int domain, int type, int protocol)
{
	type &= ~(SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (domain == AF_INET || domain == AF_INET6) {
		if (type == SOCK_STREAM &&
		    (protocol == 0 || protocol == IPPROTO_TCP))
			return KIND_TCP;
		if (type == SOCK_DGRAM &&
		    (protocol == 0 || protocol == IPPROTO_UDP))
			return KIND_UDP;
		return KIND_OTHER_SOCKET;
	}
	if (domain == AF_UNIX) {
		if (type == SOCK_STREAM || type == SOCK_SEQPACKET)
			return KIND_UNIX_STREAM;
		if (type == SOCK_DGRAM)
			return KIND_UNIX_DGRAM;
	}
	return KIND_OTHER_SOCKET;
}

static void get_addr(int fd, struct fd_addr *a, bool peer)
{
	socklen_t len = sizeof(a->u);
	int r;

	if (!a)
		return;
	memset(a, 0, sizeof(*a));
	r = peer ? getpeername(fd, &a->u.sa, &len)
		 : getsockname(fd, &a->u.sa, &len);
	a->len = (r == 0 && len <= sizeof(a->u)) ? len : 0;
}

void classify_wildcard_peer(struct fd_addr *peer, const struct fd_addr *local)
{
	bool l4 = local && local->len >= sizeof(struct sockaddr_in) &&
		  local->u.sa.sa_family == AF_INET;
	bool l6 = local && local->len >= sizeof(struct sockaddr_in6) &&
		  local->u.sa.sa_family == AF_INET6;

	if (peer->len >= sizeof(struct sockaddr_in) &&
	    peer->u.sa.sa_family == AF_INET &&
	    peer->u.in4.sin_addr.s_addr == htonl(INADDR_ANY)) {
		peer->u.in4.sin_addr.s_addr =
			l4 && local->u.in4.sin_addr.s_addr != htonl(INADDR_ANY)
				? local->u.in4.sin_addr.s_addr
				: htonl(INADDR_LOOPBACK);
	} else if (peer->len >= sizeof(struct sockaddr_in6) &&
		   peer->u.sa.sa_family == AF_INET6 &&
		   IN6_IS_ADDR_UNSPECIFIED(&peer->u.in6.sin6_addr)) {
		if (l6 && IN6_IS_ADDR_V4MAPPED(&local->u.in6.sin6_addr)) {
			static const uint8_t mapped[16] = {
				0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff,
				127, 0, 0, 1 };

			memcpy(&peer->u.in6.sin6_addr, mapped, sizeof(mapped));
		} else {
			peer->u.in6.sin6_addr = in6addr_loopback;
		}
	}
}

/* quiet.h's state, here because every build of core links this file. */
uint8_t sm_quiet_level SM_FORK_DATA;
__thread bool sm_ticker_thread;

void classify_addrs(int fd, struct fd_addr *local, struct fd_addr *peer)
{
	int saved = errno;

	if (sm_quiet()) {
		if (local)
			local->len = 0;
		if (peer)
			peer->len = 0;
		return;
	}
	get_addr(fd, local, false);
	get_addr(fd, peer, true);
	errno = saved;
}

static enum fd_kind classify_open_socket(int fd)
{
	int domain = 0, type = 0, protocol = 0;
	socklen_t len = sizeof(int);

	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) != 0)
		return KIND_OTHER_SOCKET;
	len = sizeof(int);
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0)
		return KIND_OTHER_SOCKET;
	len = sizeof(int);
	if (getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &protocol, &len) != 0)
		protocol = 0;
	return classify_socket(domain, type, protocol);
}

enum fd_kind classify_fd(int fd, struct fd_addr *local, struct fd_addr *peer)
{
	int saved = errno;
	enum fd_kind kind;
	struct stat st;

	if (local)
		local->len = 0;
	if (peer)
		peer->len = 0;
	if (sm_quiet())
		return KIND_UNKNOWN; /* see quiet.h: counted once known */
	if (fstat(fd, &st) != 0) {
		errno = saved;
		return KIND_UNKNOWN;
	}
	switch (st.st_mode & S_IFMT) {
	case S_IFSOCK:
		kind = classify_open_socket(fd);
		classify_addrs(fd, local, peer);
		break;
	case S_IFIFO:
		kind = KIND_PIPE;
		break;
	case S_IFCHR:
		kind = KIND_TTY;
		break;
	default:
		kind = KIND_FILE;
		break;
	}
	errno = saved;
	return kind;
}

/* "a.b.c.d:port" without printf (glibc's inet_ntop formats IPv4 with
 * sprintf): the ticker writes two per close record.  cap >= 22. */
static size_t format_in4(const struct sockaddr_in *in, char *buf)
{
	const unsigned char *o = (const unsigned char *)&in->sin_addr;
	size_t n = 0;
	unsigned i;

	for (i = 0; i < 4; i++) {
		if (i)
			buf[n++] = '.';
		n += put_dec(buf + n, o[i], 1);
	}
	buf[n++] = ':';
	n += put_dec(buf + n, ntohs(in->sin_port), 1);
	buf[n] = '\0';
	return n;
}

/* An abstract unix name (len bytes, which may hold NULs) as "@name", each
 * NUL in it shown as '@', as ss(8) shows them: "\0x\0one" and "\0x\0two"
 * had both read "@x".  Trailing NULs are left out: a program that passes
 * the whole struct's length (a common slip) names its socket with them. */
static size_t format_abstract(const char *name, size_t len, char *buf,
			      size_t cap)
{
	size_t i, n = 0;

	while (len && !name[len - 1])
		len--;
	if (n + 1 < cap)
		buf[n++] = '@';
	for (i = 0; i < len && n + 1 < cap; i++)
		buf[n++] = name[i] ? name[i] : '@';
	buf[n] = '\0';
	return n;
}

size_t fd_addr_format(const struct fd_addr *a, char *buf, size_t cap)
{
	char host[INET6_ADDRSTRLEN];
	int n = 0;

	if (cap == 0)
		return 0;
	buf[0] = '\0';
	if (!a || a->len < sizeof(sa_family_t))
		return 0;
	switch (a->u.sa.sa_family) {
	case AF_INET:
		if (cap >= sizeof("255.255.255.255:65535"))
			return format_in4(&a->u.in4, buf);
		inet_ntop(AF_INET, &a->u.in4.sin_addr, host, sizeof(host));
		n = snprintf(buf, cap, "%s:%u", host, ntohs(a->u.in4.sin_port));
		break;
	case AF_INET6:
		inet_ntop(AF_INET6, &a->u.in6.sin6_addr, host, sizeof(host));
		/* A link-local address means something only with its zone:
		 * the interface's index, as in fe80::1%2. */
		if (a->u.in6.sin6_scope_id)
			n = snprintf(buf, cap, "[%s%%%u]:%u", host,
				     (unsigned)a->u.in6.sin6_scope_id,
				     ntohs(a->u.in6.sin6_port));
		else
			n = snprintf(buf, cap, "[%s]:%u", host,
				     ntohs(a->u.in6.sin6_port));
		break;
	case AF_UNIX: {
		size_t plen = a->len - offsetof(struct sockaddr_un, sun_path);

		if (a->len <= offsetof(struct sockaddr_un, sun_path))
			n = 0; /* unnamed: "" as for unknown */
		else if (a->u.un.sun_path[0] == '\0')
			n = (int)format_abstract(a->u.un.sun_path + 1, plen - 1,
						 buf, cap);
		else if (a->u.un.sun_path[0] == '@')
			/* A relative path that would read as an abstract
			 * name. */
			n = snprintf(buf, cap, "./%.*s", (int)plen,
				     a->u.un.sun_path);
		else
			n = snprintf(buf, cap, "%.*s", (int)plen,
				     a->u.un.sun_path);
		break;
	}
	default:
		n = snprintf(buf, cap, "family:%u", a->u.sa.sa_family);
		break;
	}
	if (n < 0)
		n = 0;
	return (size_t)n < cap ? (size_t)n : cap - 1;
}
