/*
 * classify.h - what kind of thing an fd is, and whom a socket talks to.
 *
 * Used by lifecycle calls and, once per fd, by the first data call on an fd
 * the library did not see open.  Costs a few system calls (fstat,
 * getsockopt, getsockname, getpeername): never call it on the hot path.
 * errno is preserved.
 */
#ifndef SOCKMETER_CLASSIFY_H
#define SOCKMETER_CLASSIFY_H

#include "fdtab.h"

#include <stdbool.h>
#include <stddef.h>

/*
 * classify_fd - the kind of fd (KIND_UNKNOWN when fd is not open).  When
 * local/peer are not NULL and fd is a socket, they receive its addresses
 * (len 0 when there is none, e.g. an unconnected UDP socket's peer).
 * Context: any thread and signal handler (system calls only).
 */
enum fd_kind classify_fd(int fd, struct fd_addr *local, struct fd_addr *peer);

/*
 * classify_socket - the kind of a socket from its domain and type (as
 * passed to socket()); for TCP/UDP, protocol 0 means the default.
 * Context: any thread and signal handler.
 */
enum fd_kind classify_socket(int domain, int type, int protocol);

/* classify_addrs - fill local/peer (either may be NULL) from the socket.
 * Context: any thread and signal handler (system calls only). */
void classify_addrs(int fd, struct fd_addr *local, struct fd_addr *peer);

/*
 * classify_wildcard_peer - the peer a connect to the wildcard address
 * (0.0.0.0 or [::], in *peer with its port) reached, by Linux's rule, for
 * when the kernel can no longer say (getpeername fails once the connection
 * is reset, and a server may reset it before the connect wrapper asks):
 * the route to 0.0.0.0 is this host, at the socket's own address (local,
 * once connected: the one the kernel chose, 127.0.0.1 for a socket bound
 * to none); [::] is ::1, or 127.0.0.1 v4-mapped on a socket bound to a
 * v4-mapped address (net/ipv4/route.c, tcp_v6_connect).  Leaves *peer
 * alone when it is not a wildcard.
 * Context: any thread and signal handler.
 */
void classify_wildcard_peer(struct fd_addr *peer, const struct fd_addr *local);

/*
 * fd_addr_format - write addr as text: "1.2.3.4:80", "[::1]:80",
 * "/path/sock", "@abstract", or "" when unknown.  Always NUL-terminates;
 * returns the length written.
 * Context: ticker only (snprintf, inet_ntop: not for signal handlers).
 */
size_t fd_addr_format(const struct fd_addr *a, char *buf, size_t cap);

#endif
