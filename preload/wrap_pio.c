/*
 * wrap_pio.c - the positional reads and writes and copy_file_range.
 *
 * pread/pwrite and their vector forms read or write at an offset: on a
 * metered fd (a regular file with [track] files = true) they count as
 * read and write do.  preadv2/pwritev2 with offset -1 are readv/writev
 * with flags, and work on sockets and pipes too.  On a socket the others
 * fail (ESPIPE), which counts as the error it is.  copy_file_range moves
 * bytes inside the kernel from one file to another: both ends are
 * accounted, like sendfile (coreutils' cp, cat and install use it).
 *
 * The 64 names are the same functions on 64-bit ABIs; each name is
 * wrapped, since a program may bind to either.
 */
#include "preload.h"

#include <sys/syscall.h>
#include <unistd.h>

/* glibc declares the fortified forms only inside its headers' inlines. */
ssize_t __pread_chk(int fd, void *buf, size_t n, off_t off, size_t len);
ssize_t __pread64_chk(int fd, void *buf, size_t n, off64_t off, size_t len);

/*
 * One positional data call: NAME, its direction, its parameters (the fd
 * first, named fd) and the arguments to pass on.  The metered part is out
 * of line, as for every data wrapper.
 */
#define PIO_WRAP(name, dir, params, args)                            \
	static SM_METERED_##dir ssize_t metered_##name(               \
		struct fd_slot *s_, SM_UNPAREN params)               \
	{                                                            \
		uint64_t t0 = sm_start();                            \
		ssize_t r;                                           \
                                                                     \
		sm_inflight_set(s_);                                 \
		r = sm_real.name args;                               \
		sm_inflight_clear(s_);                               \
		sm_data(s_, dir, r, t0);                             \
		return r;                                            \
	}                                                            \
                                                                     \
	SM_EXPORT ssize_t name params                                \
	{                                                            \
		struct fd_slot *s_;                                  \
                                                                     \
		if (SM_LIKELY(!sm_metered(fd, &s_)))                 \
			return sm_real.name args;                    \
		return metered_##name(s_, SM_UNPAREN args);          \
	}


/* clang-format off */
PIO_WRAP(pread, DIR_IN, (int fd, void *buf, size_t n, off_t off),
	 (fd, buf, n, off))
PIO_WRAP(pread64, DIR_IN, (int fd, void *buf, size_t n, off64_t off),
	 (fd, buf, n, off))
PIO_WRAP(pwrite, DIR_OUT, (int fd, const void *buf, size_t n, off_t off),
	 (fd, buf, n, off))
PIO_WRAP(pwrite64, DIR_OUT,
	 (int fd, const void *buf, size_t n, off64_t off), (fd, buf, n, off))
PIO_WRAP(__pread_chk, DIR_IN,
	 (int fd, void *buf, size_t n, off_t off, size_t len),
	 (fd, buf, n, off, len))
PIO_WRAP(__pread64_chk, DIR_IN,
	 (int fd, void *buf, size_t n, off64_t off, size_t len),
	 (fd, buf, n, off, len))
PIO_WRAP(preadv, DIR_IN,
	 (int fd, const struct iovec *iov, int cnt, off_t off),
	 (fd, iov, cnt, off))
PIO_WRAP(preadv64, DIR_IN,
	 (int fd, const struct iovec *iov, int cnt, off64_t off),
	 (fd, iov, cnt, off))
PIO_WRAP(pwritev, DIR_OUT,
	 (int fd, const struct iovec *iov, int cnt, off_t off),
	 (fd, iov, cnt, off))
PIO_WRAP(pwritev64, DIR_OUT,
	 (int fd, const struct iovec *iov, int cnt, off64_t off),
	 (fd, iov, cnt, off))
PIO_WRAP(preadv2, DIR_IN,
	 (int fd, const struct iovec *iov, int cnt, off_t off, int fl),
	 (fd, iov, cnt, off, fl))
PIO_WRAP(preadv64v2, DIR_IN,
	 (int fd, const struct iovec *iov, int cnt, off64_t off, int fl),
	 (fd, iov, cnt, off, fl))
PIO_WRAP(pwritev2, DIR_OUT,
	 (int fd, const struct iovec *iov, int cnt, off_t off, int fl),
	 (fd, iov, cnt, off, fl))
PIO_WRAP(pwritev64v2, DIR_OUT,
	 (int fd, const struct iovec *iov, int cnt, off64_t off, int fl),
	 (fd, iov, cnt, off, fl))
/* clang-format on */

/* copy_file_range moves bytes out of `in` into `out`: both ends. */
SM_EXPORT ssize_t copy_file_range(int in, off64_t *off_in, int out,
				  off64_t *off_out, size_t n,
				  unsigned int flags)
{
	struct sm_ends e;
	ssize_t r;

	if (SM_LIKELY(!sm_ends_start(out, in, &e)))
		return sm_real.copy_file_range(in, off_in, out, off_out, n,
					       flags);
	r = sm_real.copy_file_range(in, off_in, out, off_out, n, flags);
	sm_ends_account(&e, r);
	return r;
}

/* --- before binding (see unbound.c) -------------------------------------- */

#define BOUND(name) (sm_bind() && sm_real.name != unbound_##name)

/* The system call a positional call makes while dlsym is being re-entered:
 * the offset in one register on 64-bit ABIs, in two (low, high) for the
 * vector forms, as glibc passes it. */
#define PIO_UNBOUND(name, params, args, nr, ...)  \
	ssize_t unbound_##name params             \
	{                                         \
		if (BOUND(name))                  \
			return sm_real.name args; \
		return SM_SYSCALL(nr, __VA_ARGS__); \
	}
#define PIO_HI(off) ((unsigned long)((uint64_t)(off) >> 32))

/* clang-format off */
PIO_UNBOUND(pread, (int fd, void *buf, size_t n, off_t off),
	    (fd, buf, n, off), SYS_pread64, fd, buf, n, off)
PIO_UNBOUND(pread64, (int fd, void *buf, size_t n, off64_t off),
	    (fd, buf, n, off), SYS_pread64, fd, buf, n, off)
PIO_UNBOUND(pwrite, (int fd, const void *buf, size_t n, off_t off),
	    (fd, buf, n, off), SYS_pwrite64, fd, buf, n, off)
PIO_UNBOUND(pwrite64, (int fd, const void *buf, size_t n, off64_t off),
	    (fd, buf, n, off), SYS_pwrite64, fd, buf, n, off)
PIO_UNBOUND(__pread_chk, (int fd, void *buf, size_t n, off_t off, size_t len),
	    (fd, buf, n, off, len), SYS_pread64, fd, buf, n, off)
PIO_UNBOUND(__pread64_chk,
	    (int fd, void *buf, size_t n, off64_t off, size_t len),
	    (fd, buf, n, off, len), SYS_pread64, fd, buf, n, off)
PIO_UNBOUND(preadv, (int fd, const struct iovec *iov, int cnt, off_t off),
	    (fd, iov, cnt, off), SYS_preadv, fd, iov, cnt, off, PIO_HI(off))
PIO_UNBOUND(preadv64, (int fd, const struct iovec *iov, int cnt, off64_t off),
	    (fd, iov, cnt, off), SYS_preadv, fd, iov, cnt, off, PIO_HI(off))
PIO_UNBOUND(pwritev, (int fd, const struct iovec *iov, int cnt, off_t off),
	    (fd, iov, cnt, off), SYS_pwritev, fd, iov, cnt, off, PIO_HI(off))
PIO_UNBOUND(pwritev64,
	    (int fd, const struct iovec *iov, int cnt, off64_t off),
	    (fd, iov, cnt, off), SYS_pwritev, fd, iov, cnt, off, PIO_HI(off))
PIO_UNBOUND(preadv2,
	    (int fd, const struct iovec *iov, int cnt, off_t off, int fl),
	    (fd, iov, cnt, off, fl), SYS_preadv2, fd, iov, cnt, off,
	    PIO_HI(off), fl)
PIO_UNBOUND(preadv64v2,
	    (int fd, const struct iovec *iov, int cnt, off64_t off, int fl),
	    (fd, iov, cnt, off, fl), SYS_preadv2, fd, iov, cnt, off,
	    PIO_HI(off), fl)
PIO_UNBOUND(pwritev2,
	    (int fd, const struct iovec *iov, int cnt, off_t off, int fl),
	    (fd, iov, cnt, off, fl), SYS_pwritev2, fd, iov, cnt, off,
	    PIO_HI(off), fl)
PIO_UNBOUND(pwritev64v2,
	    (int fd, const struct iovec *iov, int cnt, off64_t off, int fl),
	    (fd, iov, cnt, off, fl), SYS_pwritev2, fd, iov, cnt, off,
	    PIO_HI(off), fl)
PIO_UNBOUND(copy_file_range,
	    (int in, off64_t *off_in, int out, off64_t *off_out, size_t n,
	     unsigned int flags),
	    (in, off_in, out, off_out, n, flags), SYS_copy_file_range, in,
	    off_in, out, off_out, n, flags)
/* clang-format on */
