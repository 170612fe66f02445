/*
 * preload.h - what the wrappers share with the preload's runtime: the real
 * libc functions, the one metering state, and the inline accounting every
 * data wrapper ends with.  Only preload/ includes this file.
 */
#ifndef SOCKMETER_PRELOAD_H
#define SOCKMETER_PRELOAD_H

#include "../core/meter.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>

#define SM_EXPORT __attribute__((visibility("default")))
#define SM_LIKELY(x) __builtin_expect(!!(x), 1)
#define SM_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* Every libc function we call through: the single list of wrapped calls.
 * X(name, return type, parameter types) */
#define SM_REAL_FUNCS(X)                                                       \
	X(read, ssize_t, (int, void *, size_t))                                \
	X(write, ssize_t, (int, const void *, size_t))                         \
	X(readv, ssize_t, (int, const struct iovec *, int))                    \
	X(writev, ssize_t, (int, const struct iovec *, int))                   \
	X(send, ssize_t, (int, const void *, size_t, int))                     \
	X(recv, ssize_t, (int, void *, size_t, int))                           \
	X(sendto, ssize_t,                                                     \
	  (int, const void *, size_t, int, const struct sockaddr *, socklen_t))\
	X(recvfrom, ssize_t,                                                   \
	  (int, void *, size_t, int, struct sockaddr *, socklen_t *))          \
	X(sendmsg, ssize_t, (int, const struct msghdr *, int))                 \
	X(recvmsg, ssize_t, (int, struct msghdr *, int))                       \
	X(sendmmsg, int, (int, struct mmsghdr *, unsigned int, int))           \
	X(recvmmsg, int,                                                       \
	  (int, struct mmsghdr *, unsigned int, int, struct timespec *))       \
	X(sendfile, ssize_t, (int, int, off_t *, size_t))                      \
	X(sendfile64, ssize_t, (int, int, off64_t *, size_t))                  \
	X(__read_chk, ssize_t, (int, void *, size_t, size_t))                  \
	X(__recv_chk, ssize_t, (int, void *, size_t, size_t, int))             \
	X(__recvfrom_chk, ssize_t,                                             \
	  (int, void *, size_t, size_t, int, struct sockaddr *, socklen_t *))  \
	X(socket, int, (int, int, int))                                        \
	X(socketpair, int, (int, int, int, int *))                             \
	X(accept, int, (int, struct sockaddr *, socklen_t *))                  \
	X(accept4, int, (int, struct sockaddr *, socklen_t *, int))            \
	X(connect, int, (int, const struct sockaddr *, socklen_t))             \
	X(bind, int, (int, const struct sockaddr *, socklen_t))                \
	X(close, int, (int))                                                   \
	X(dup, int, (int))                                                     \
	X(dup2, int, (int, int))                                               \
	X(dup3, int, (int, int, int))                                          \
	X(fcntl, int, (int, int, ...))                                         \
	X(fcntl64, int, (int, int, ...))                                       \
	X(close_range, int, (unsigned int, unsigned int, int))                 \
	X(closefrom, void, (int))

#define X(name, ret, args) typedef ret(*sm_##name##_fn) args;
SM_REAL_FUNCS(X)
#undef X

struct sm_real {
#define X(name, ret, args) sm_##name##_fn name;
	SM_REAL_FUNCS(X)
#undef X
};

extern struct sm_real sm_real;
extern struct meter sm_meter;
extern bool sm_latency; /* the latency category is on */

/*
 * sm_bind - look every real function up, once.  Returns false only when
 * called again from inside the lookup on the same thread (dlsym reentering
 * a wrapper): the caller then falls back to a raw system call.
 */
bool sm_bind(void);

/* Lifecycle hooks, called by the wrappers after a successful real call. */
void sm_opened_socket(int fd, int domain, int type, int protocol);
void sm_opened_accept(int listen_fd, int fd);
void sm_opened_dup(int oldfd, int newfd);
void sm_connected(int fd, const struct sockaddr *addr, socklen_t len);
void sm_bound(int fd);
void sm_closing(int fd);
void sm_closing_range(unsigned first, unsigned last);

/* The first data call on an fd nobody classified: returns the kind the
 * slot now holds.  Cold. */
enum fd_kind sm_classify_slow(int fd);

static inline uint64_t sm_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Read the clock before a data call only when latency is metered. */
static inline uint64_t sm_start(void)
{
	return SM_UNLIKELY(sm_latency) ? sm_now_ns() : 0;
}

/*
 * sm_data - account one finished data call on fd: r is its return value,
 * t0 what sm_start() gave.  No lock, no allocation, no system call (but for
 * the once-per-fd classification), errno left as the call left it.
 */
static inline __attribute__((always_inline)) void
sm_data(int fd, enum fd_dir dir, int64_t r, uint64_t t0)
{
	struct fd_slot *s = fdtab_slot(&sm_meter.tab, fd);
	enum fd_kind k;

	if (!s)
		return;
	k = fdtab_kind(s);
	if (SM_UNLIKELY(k < KIND_FIRST_TRACKED)) {
		if (k != KIND_UNKNOWN)
			return;
		if (sm_classify_slow(fd) < KIND_FIRST_TRACKED)
			return;
	}
	fd_account(s, dir, r, r < 0 ? errno : 0, sm_meter.acct);
	if (SM_UNLIKELY(t0))
		__atomic_fetch_add(&s->c.latency_ns[dir], sm_now_ns() - t0,
				   __ATOMIC_RELAXED);
}

#endif
