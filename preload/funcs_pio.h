/*
 * funcs_pio.h - the real functions of one group of wrapped calls: the
 * positional reads and writes (pread, pwrite and their vector and v2
 * forms) and copy_file_range, wrapped in wrap_pio.c.
 * X(name, return type, parameter types), as SM_REAL_FUNCS in preload.h.
 */
#ifndef SOCKMETER_FUNCS_PIO_H
#define SOCKMETER_FUNCS_PIO_H

#include <sys/types.h>
#include <sys/uio.h>

/* clang-format off */
#define SM_FUNCS_PIO(X)                                                        \
	X(pread, ssize_t, (int, void *, size_t, off_t))                        \
	X(pread64, ssize_t, (int, void *, size_t, off64_t))                    \
	X(pwrite, ssize_t, (int, const void *, size_t, off_t))                 \
	X(pwrite64, ssize_t, (int, const void *, size_t, off64_t))             \
	X(__pread_chk, ssize_t, (int, void *, size_t, off_t, size_t))          \
	X(__pread64_chk, ssize_t, (int, void *, size_t, off64_t, size_t))      \
	X(preadv, ssize_t, (int, const struct iovec *, int, off_t))            \
	X(preadv64, ssize_t, (int, const struct iovec *, int, off64_t))        \
	X(pwritev, ssize_t, (int, const struct iovec *, int, off_t))           \
	X(pwritev64, ssize_t, (int, const struct iovec *, int, off64_t))       \
	X(preadv2, ssize_t, (int, const struct iovec *, int, off_t, int))      \
	X(preadv64v2, ssize_t, (int, const struct iovec *, int, off64_t, int)) \
	X(pwritev2, ssize_t, (int, const struct iovec *, int, off_t, int))     \
	X(pwritev64v2, ssize_t,                                                \
	  (int, const struct iovec *, int, off64_t, int))                      \
	X(copy_file_range, ssize_t,                                            \
	  (int, off64_t *, int, off64_t *, size_t, unsigned int))
/* clang-format on */

#endif
