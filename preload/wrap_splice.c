/*
 * wrap_splice.c - splice, tee and vmsplice: bytes moved inside the kernel
 * between a pipe and another fd, counted on each metered end like sendfile.
 *
 * splice(in, out) moves bytes: `in` received them, `out` sent them.
 * tee(in, out) copies a pipe's bytes into another pipe without consuming
 * them: `out` sent them; `in` is only peeked at (the bytes stay there for a
 * later read, which counts them), like recv with MSG_PEEK.
 * vmsplice moves user memory into a pipe (a write end: sent) or a pipe's
 * bytes into user memory (a read end: received).
 */
#include "preload.h"

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

SM_EXPORT ssize_t splice(int in, loff_t *off_in, int out, loff_t *off_out,
			 size_t n, unsigned int flags)
{
	struct sm_ends e;
	ssize_t r;

	if (SM_LIKELY(!sm_ends_start(out, in, &e)))
		return sm_real.splice(in, off_in, out, off_out, n, flags);
	r = sm_real.splice(in, off_in, out, off_out, n, flags);
	sm_ends_account(&e, r);
	return r;
}

static SM_METERED ssize_t metered_tee(int in, int out, size_t n,
				      unsigned int flags, struct fd_slot *s)
{
	uint64_t t0 = sm_start();
	ssize_t r = sm_real.tee(in, out, n, flags);

	sm_data(s, DIR_OUT, r, t0);
	return r;
}

SM_EXPORT ssize_t tee(int in, int out, size_t n, unsigned int flags)
{
	struct fd_slot *s;

	if (SM_LIKELY(!sm_metered(out, &s)))
		return sm_real.tee(in, out, n, flags);
	return metered_tee(in, out, n, flags, s);
}

/*
 * The direction of a vmsplice is the pipe end's: one fcntl system call, on
 * metered pipes only (pipes are metered only with [track] pipes = true; a
 * socket refuses vmsplice).  errno is left as it was.
 */
enum fd_dir sm_vmsplice_dir(int fd)
{
	int saved = errno;
	long fl = SM_SYSCALL(SYS_fcntl, fd, F_GETFL);

	errno = saved;
	return fl >= 0 && (fl & O_ACCMODE) == O_RDONLY ? DIR_IN : DIR_OUT;
}

static SM_METERED ssize_t metered_vmsplice(int fd, const struct iovec *iov,
					   size_t nr, unsigned int flags,
					   struct fd_slot *s)
{
	enum fd_dir dir = sm_vmsplice_dir(fd);
	uint64_t t0 = sm_start();
	ssize_t r = sm_real.vmsplice(fd, iov, nr, flags);

	sm_data(s, dir, r, t0);
	return r;
}

SM_EXPORT ssize_t vmsplice(int fd, const struct iovec *iov, size_t nr,
			   unsigned int flags)
{
	struct fd_slot *s;

	if (SM_LIKELY(!sm_metered(fd, &s)))
		return sm_real.vmsplice(fd, iov, nr, flags);
	return metered_vmsplice(fd, iov, nr, flags, s);
}

/* --- before binding (see unbound.c) -------------------------------------- */

#define BOUND(name) (sm_bind() && sm_real.name != unbound_##name)

ssize_t unbound_splice(int in, loff_t *off_in, int out, loff_t *off_out,
		       size_t n, unsigned int flags)
{
	if (BOUND(splice))
		return sm_real.splice(in, off_in, out, off_out, n, flags);
	return SM_SYSCALL(SYS_splice, in, off_in, out, off_out, n, flags);
}

ssize_t unbound_tee(int in, int out, size_t n, unsigned int flags)
{
	if (BOUND(tee))
		return sm_real.tee(in, out, n, flags);
	return SM_SYSCALL(SYS_tee, in, out, n, flags);
}

ssize_t unbound_vmsplice(int fd, const struct iovec *iov, size_t nr,
			 unsigned int flags)
{
	if (BOUND(vmsplice))
		return sm_real.vmsplice(fd, iov, nr, flags);
	return SM_SYSCALL(SYS_vmsplice, fd, iov, nr, flags);
}
