/*
 * wrap_stdio.c - stdio on metered fds, counted as the kernel sees it.
 *
 * glibc's stdio reaches the kernel through its internal __write and __read,
 * never through the write/read we wrap.  So each stdio call that can move
 * bytes is wrapped here, and what reached the kernel is derived from the
 * FILE's own buffer pointers (public in <bits/types/struct_FILE.h>), read
 * before and after the real call:
 *
 *   sent     = output pending before + bytes the call handed to stdio
 *              - output pending after
 *   received = bytes the call consumed + input unread after
 *              - input unread before
 *
 * Bytes merely buffered are not counted: a program that _exits with output
 * in its FILE buffer did not send it.  One stdio call that moved bytes
 * counts as one call of that size (the kernel may have seen several).
 *
 * The fast path (a FILE whose fd is not metered: files, terminals, memory
 * streams with fd -1) reads fp->_fileno and the fd's slot kind, then
 * tail-calls the real function: the same few instructions as a data
 * wrapper, no buffer pointers read.  The metered path holds the FILE's lock
 * (recursive; the real call takes it again) so that the pointers it reads
 * belong to this call only.
 *
 * What is not exact (see docs/coverage.md): a stdio call that fails while
 * writing counts an error and no bytes (glibc discards its buffer without
 * saying how much left); the scanf family's consumption is not known, so a
 * scanf call counts its last buffer refill only; fgets on a line holding a
 * NUL byte and ended by end of file; wide-character streams.
 */

/* Before any header: no extern-inline bodies of getc, putchar... from
 * <bits/stdio.h>, which the wrappers below define. */
#define __NO_INLINE__ 1

#include "wrap_stdio.h"

#include <pthread.h>
#include <string.h>

/* glibc's fortified entry points, declared only by its fortified headers. */
int __vfprintf_chk(FILE *fp, int flag, const char *fmt, va_list ap);
int __vprintf_chk(int flag, const char *fmt, va_list ap);
int __printf_chk(int flag, const char *fmt, ...);
int __fprintf_chk(FILE *fp, int flag, const char *fmt, ...);
int __dprintf_chk(int fd, int flag, const char *fmt, ...);
int __vdprintf_chk(int fd, int flag, const char *fmt, va_list ap);
size_t __fread_chk(void *p, size_t plen, size_t size, size_t n, FILE *fp);
size_t __fread_unlocked_chk(void *p, size_t plen, size_t size, size_t n,
			    FILE *fp);
char *__fgets_chk(char *buf, size_t size, int n, FILE *fp);
char *__fgets_unlocked_chk(char *buf, size_t size, int n, FILE *fp);
int __underflow(FILE *fp);
int _IO_getc(FILE *fp);
int _IO_putc(int c, FILE *fp);
ssize_t __getdelim(char **line, size_t *cap, int delim, FILE *fp);
int __isoc99_scanf(const char *fmt, ...);
int __isoc99_fscanf(FILE *fp, const char *fmt, ...);
int __isoc99_vscanf(const char *fmt, va_list ap);
int __isoc99_vfscanf(FILE *fp, const char *fmt, va_list ap);
/* glibc's list of every FILE, and its lock (exported since glibc 2.2.5). */
extern FILE *_IO_list_all;
void _IO_list_lock(void);
void _IO_list_unlock(void);

/* libio's flag bits: part of glibc's ABI since 2.0, only some of them are
 * named in <stdio.h>. */
#define SM_IO_UNBUFFERED 0x0002
#define SM_IO_NO_WRITES	 0x0008
#define SM_IO_EOF_SEEN	 0x0010
#define SM_IO_ERR_SEEN	 0x0020
#define SM_IO_LINKED	 0x0080
#define SM_IO_IN_BACKUP	 0x0100
#define SM_IO_LINE_BUF	 0x0200
#define SM_IO_USER_LOCK	 0x8000

/* The scanf family does not say how many bytes it consumed. */
#define TOOK_UNKNOWN (-1)

/* Set once a stdio call met a FILE on a tracked fd: until then, neither
 * fflush(NULL) nor exit has a metered FILE to look for.  Atomic. */
static bool stdio_seen;

/* --- the FILE's buffer, before and after a call ------------------------- */

/* What a FILE's buffer says at one moment. */
struct file_state {
	int flags;
	ptrdiff_t pending; /* output buffered, not yet written */
	ptrdiff_t unread;  /* input read from the fd, not yet consumed */
	const char *rbase, *rend, *rptr;
	int64_t offset; /* the fd's offset as glibc keeps it (_offset) */
};

static void file_state(const FILE *fp, struct file_state *st, bool reading)
{
	st->flags = fp->_flags;
	st->pending = fp->_IO_write_ptr - fp->_IO_write_base;
	if (!reading)
		return;
	st->unread = fp->_IO_read_end - fp->_IO_read_ptr;
	/* Reading bytes pushed back by ungetc: the main get area waits. */
	if (fp->_flags & SM_IO_IN_BACKUP)
		st->unread += fp->_IO_save_end - fp->_IO_save_base;
	st->rbase = fp->_IO_read_base;
	st->rend = fp->_IO_read_end;
	st->rptr = fp->_IO_read_ptr;
	st->offset = fp->_offset;
}

/* One metered FILE around one call. */
struct file_side {
	FILE *fp;
	struct fd_slot *s;
	struct file_state before, after;
};

/*
 * One wrapped call on a metered FILE.  A metered wrapper runs the real
 * call between STDIO_HOLD and STDIO_DROP, so that the locks it holds are
 * released when the wrapper returns, and also when pthread_cancel unwinds
 * the real call (a blocking write is a cancellation point).  Those are
 * pthread_cleanup_push and pop: glibc's unwinding stops at the frame that
 * registered them and runs the release.  Not -fexceptions and a cleanup
 * attribute, as glibc's libio does it: that makes libgcc_s a dependency of
 * the library, one more library mapped into every program it is preloaded
 * into, and its areas copied by every fork (~2 % of forks/s:
 * docs/performance.md#churn); glibc loads libgcc_s itself when a thread is
 * cancelled.
 */
struct stdio_call {
	struct file_side f;
	/* Reading a line-buffered or unbuffered FILE makes glibc flush a
	 * line-buffered stdout first: stdout's side, when that can move
	 * bytes on a metered fd (out.fp NULL otherwise). */
	struct file_side out;
	FILE *held, *out_held; /* locked by us, to release */
	bool reading;
	uint64_t t0;
};

static void stdio_release(struct stdio_call *c)
{
	if (c->out_held)
		funlockfile(c->out_held);
	if (c->held)
		funlockfile(c->held);
}

static void stdio_release_cb(void *c)
{
	stdio_release(c);
}

#define STDIO_CALL struct stdio_call
/* From a successful stdio_begin on: a block of its own, STDIO_DROP ends
 * it (releasing), and no return in between. */
#define STDIO_HOLD(c) pthread_cleanup_push(stdio_release_cb, (c))
#define STDIO_DROP() pthread_cleanup_pop(1)

/* A FILE on a tracked fd: classify a new fd once; wide streams keep
 * their output elsewhere and are not counted. */
static bool file_tracked(FILE *fp, struct fd_slot *s)
{
	if (fdtab_kind(s) == KIND_UNKNOWN &&
	    !fd_kind_counts(sm_classify_slow(fp->_fileno)))
		return false;
	return fd_kind_counts(fdtab_kind(s)) && fp->_mode <= 0;
}

static void side_begin(struct file_side *side, FILE *fp, struct fd_slot *s,
		       bool reading)
{
	side->fp = fp;
	side->s = s;
	file_state(fp, &side->before, reading);
}

static void side_end(struct file_side *side, bool reading)
{
	file_state(side->fp, &side->after, reading);
}

static bool new_flag(const struct file_side *side, int flag)
{
	return (side->after.flags & flag) && !(side->before.flags & flag);
}

/*
 * stdio_begin - before the real call on a metered FILE (the first thing a
 * metered wrapper does): false when fp's fd turns out not to be tracked
 * (the caller then just makes the real call).  lock: take fp's lock, for
 * the locked variants; the caller may then call the real _unlocked variant,
 * which is the same function without the lock.  (With _IO_USER_LOCK set,
 * the program does the locking, and glibc's locked variants take no lock
 * either.)  The _unlocked variants leave locking to the program, as glibc
 * does.
 */
static bool stdio_begin(struct stdio_call *c, FILE *fp, struct fd_slot *s,
			bool lock, bool reading)
{
	c->held = c->out_held = NULL;
	if (!file_tracked(fp, s))
		return false;
	if (!__atomic_load_n(&stdio_seen, __ATOMIC_RELAXED))
		__atomic_store_n(&stdio_seen, true, __ATOMIC_RELAXED);
	if (lock && !(fp->_flags & SM_IO_USER_LOCK)) {
		flockfile(fp);
		c->held = fp;
	}
	c->reading = reading;
	side_begin(&c->f, fp, s, reading);
	c->out.fp = NULL;
	c->t0 = sm_start();
	return true;
}

/* stdout's flush before a read, as glibc's underflow does it. */
static bool stdout_flushes(const FILE *fp)
{
	const int want = SM_IO_LINKED | SM_IO_LINE_BUF;
	FILE *o = stdout;

	return (fp->_flags & (SM_IO_LINE_BUF | SM_IO_UNBUFFERED)) && o &&
	       o != fp && (o->_flags & (want | SM_IO_NO_WRITES)) == want &&
	       o->_IO_write_ptr > o->_IO_write_base;
}

/* stdio_begin for a call that reads. */
static bool stdio_begin_read(struct stdio_call *c, FILE *fp, struct fd_slot *s,
			     bool lock)
{
	struct fd_slot *os;
	FILE *o = stdout;

	if (!stdio_begin(c, fp, s, lock, true))
		return false;
	if (!stdout_flushes(fp) || !sm_metered(o->_fileno, &os) ||
	    !file_tracked(o, os))
		return true;
	/* fp's lock first, then stdout's, as glibc takes them; never wait
	 * for stdout (its holder may wait for fp): if it is busy, its
	 * flush goes uncounted. */
	if (!(o->_flags & SM_IO_USER_LOCK)) {
		if (ftrylockfile(o) != 0)
			return true;
		c->out_held = o;
	}
	side_begin(&c->out, o, os, false);
	return true;
}

/* Count n bytes (or an error, n < 0) on a side's slot: one call. */
static void count(const struct file_side *side, enum fd_dir dir, int64_t n,
		  uint64_t t0)
{
	sm_data(side->s, dir, n, t0);
}

/* The output a side's buffer lost during the call went to the kernel
 * (a write-mode FILE switching to reading flushes first). */
static void count_flushed(const struct file_side *side, uint64_t t0)
{
	int64_t n = side->before.pending - side->after.pending;

	if (n > 0)
		count(side, DIR_OUT, new_flag(side, SM_IO_ERR_SEEN) ? -1 : n,
		      t0);
}

/*
 * stdio_end_write - after a call that writes: put is what it handed to
 * stdio, or -1 when it reports a failure.  errno is left as the call left
 * it.
 */
static void stdio_end_write(struct stdio_call *c, int64_t put)
{
	struct file_side *f = &c->f;
	int err = errno;
	int64_t n;

	side_end(f, false);
	if (put < 0 || new_flag(f, SM_IO_ERR_SEEN)) {
		count(f, DIR_OUT, -1, c->t0);
	} else {
		n = f->before.pending + put - f->after.pending;
		if (n > 0)
			count(f, DIR_OUT, n, c->t0);
	}
	errno = err;
}

/* The bytes a scanf call received: its buffer refills are not seen one by
 * one; a refill shows as moved read pointers, and the last one as the
 * whole of the get area. */
static int64_t scanf_received(const struct file_side *f)
{
	const struct file_state *b = &f->before, *a = &f->after;

	if ((a->flags | b->flags) & SM_IO_IN_BACKUP)
		return 0;
	if (a->rend == b->rend && a->rbase == b->rbase && a->rptr >= b->rptr)
		return 0;
	return a->rend - a->rbase;
}

/*
 * stdio_end_read - after a call that reads: took is what it consumed
 * (TOOK_UNKNOWN for the scanf family).  errno is left as the call left it.
 */
static void stdio_end_read(struct stdio_call *c, int64_t took)
{
	struct file_side *f = &c->f;
	int err = errno;
	int64_t n;

	side_end(f, true);
	if (c->out.fp)
		side_end(&c->out, false);
	if (took == TOOK_UNKNOWN)
		n = scanf_received(f);
	else
		n = took + f->after.unread - f->before.unread;
	count_flushed(f, c->t0);
	if (n > 0)
		count(f, DIR_IN, n, c->t0);
	else if (new_flag(f, SM_IO_ERR_SEEN) &&
		 f->before.pending == f->after.pending)
		count(f, DIR_IN, -1, c->t0);
	else if (new_flag(f, SM_IO_EOF_SEEN))
		count(f, DIR_IN, 0, c->t0); /* the kernel said end of file */
	if (c->out.fp)
		count_flushed(&c->out, c->t0);
	errno = err;
}

/* The fast path: fp's fd is metered (or not classified yet). */
static inline __attribute__((always_inline)) bool
file_metered(FILE *fp, struct fd_slot **s)
{
	return sm_metered(fp->_fileno, s);
}

/* --- writing ------------------------------------------------------------ */

/*
 * fwrite and fread ask the real function for size * n bytes of size 1, the
 * very request glibc makes of the buffer itself: the result then says how
 * many bytes moved, not only how many whole items.  A product that
 * overflows, or 0, goes to the real function as it came.
 */
static bool whole_request(size_t size, size_t n, size_t *bytes)
{
	return !__builtin_mul_overflow(size, n, bytes) && *bytes != 0;
}

static size_t items(size_t got, size_t bytes, size_t size, size_t n)
{
	return got == bytes ? n : got / size;
}

static SM_METERED size_t metered_fwrite(sm_fwrite_fn real, bool lock,
					const void *p, size_t size, size_t n,
					FILE *fp, struct fd_slot *s)
{
	STDIO_CALL c;
	size_t bytes, r;

	if (!stdio_begin(&c, fp, s, lock, false))
		return real(p, size, n, fp);
	STDIO_HOLD(&c);
	if (!whole_request(size, n, &bytes)) {
		r = sm_real.fwrite_unlocked(p, size, n, fp);
		stdio_end_write(&c, size && r < n ? -1 : (int64_t)(r * size));
	} else {
		r = sm_real.fwrite_unlocked(p, 1, bytes, fp);
		/* Short only when a write failed (glibc then discarded its
		 * buffer). */
		stdio_end_write(&c, r < bytes ? -1 : (int64_t)r);
		r = items(r, bytes, size, n);
	}
	STDIO_DROP();
	return r;
}

SM_EXPORT size_t fwrite(const void *p, size_t size, size_t n, FILE *fp)
{
	struct fd_slot *s;

	if (SM_LIKELY(!file_metered(fp, &s)))
		return sm_real.fwrite(p, size, n, fp);
	return metered_fwrite(sm_real.fwrite, true, p, size, n, fp, s);
}

SM_EXPORT size_t fwrite_unlocked(const void *p, size_t size, size_t n, FILE *fp)
{
	struct fd_slot *s;

	if (SM_LIKELY(!file_metered(fp, &s)))
		return sm_real.fwrite_unlocked(p, size, n, fp);
	return metered_fwrite(sm_real.fwrite_unlocked, false, p, size, n, fp,
			      s);
}

static SM_METERED int metered_fputs(sm_fputs_fn real, bool lock,
				    const char *str, FILE *fp,
				    struct fd_slot *s)
{
	STDIO_CALL c;
	int r;

	if (!stdio_begin(&c, fp, s, lock, false))
		return real(str, fp);
	STDIO_HOLD(&c);
	r = sm_real.fputs_unlocked(str, fp);
	stdio_end_write(&c, r == EOF ? -1 : (int64_t)strlen(str));
	STDIO_DROP();
	return r;
}

SM_EXPORT int fputs(const char *str, FILE *fp)
{
	struct fd_slot *s;

	if (SM_LIKELY(!file_metered(fp, &s)))
		return sm_real.fputs(str, fp);
	return metered_fputs(sm_real.fputs, true, str, fp, s);
}

SM_EXPORT int fputs_unlocked(const char *str, FILE *fp)
{
	struct fd_slot *s;

	if (SM_LIKELY(!file_metered(fp, &s)))
		return sm_real.fputs_unlocked(str, fp);
	return metered_fputs(sm_real.fputs_unlocked, false, str, fp, s);
}

static SM_METERED int metered_puts(const char *str, FILE *fp, struct fd_slot *s)
{
	STDIO_CALL c;
	int r;

	if (!stdio_begin(&c, fp, s, true, false))
		return sm_real.puts(str);
	STDIO_HOLD(&c);
	r = sm_real.puts(str);
	stdio_end_write(&c, r == EOF ? -1 : (int64_t)strlen(str) + 1);
	STDIO_DROP();
	return r;
}

SM_EXPORT int puts(const char *str)
{
	struct fd_slot *s;
	FILE *fp = stdout;

	if (SM_LIKELY(!file_metered(fp, &s)))
		return sm_real.puts(str);
	return metered_puts(str, fp, s);
}

/* One character: fputc, putc, putchar and the unlocked forms (glibc's
 * putc and putchar are fputc on the same FILE), and __overflow, which
 * glibc's inline putc_unlocked calls when the buffer is full (ch EOF:
 * flush only). */
static SM_METERED int metered_putc(sm_fputc_fn real, bool lock, int ch,
				   FILE *fp, struct fd_slot *s)
{
	STDIO_CALL c;
	int r;

	if (!stdio_begin(&c, fp, s, lock, false))
		return real(ch, fp);
	STDIO_HOLD(&c);
	r = sm_real.fputc_unlocked(ch, fp);
	stdio_end_write(&c, r == EOF ? -1 : 1);
	STDIO_DROP();
	return r;
}

SM_EXPORT int fputc(int ch, FILE *fp)
{
	struct fd_slot *s;

	if (SM_LIKELY(!file_metered(fp, &s)))
		return sm_real.fputc(ch, fp);
	return metered_putc(sm_real.fputc, true, ch, fp, s);
}

/* glibc's own putc is fputc under other names: the same function, at the
 * same address (no extra jump on the fast path). */
SM_EXPORT int putc(int ch, FILE *fp)
    SM_ALIAS_OF(fputc);
SM_EXPORT int _IO_putc(int ch, FILE *fp)
    SM_ALIAS_OF(fputc);

SM_EXPORT int putchar(int ch)
{
	struct fd_slot *s;
	FILE *fp = stdout;

	if (SM_LIKELY(!file_metered(fp, &s)))
		return sm_real.fputc(ch, fp);
	return metered_putc(sm_real.fputc, true, ch, fp, s);
}

SM_EXPORT int fputc_unlocked(int ch, FILE *fp)
{
	struct fd_slot *s;

	if (SM_LIKELY(!file_metered(fp, &s)))
		return sm_real.fputc_unlocked(ch, fp);
	return metered_putc(sm_real.fputc_unlocked, false, ch, fp, s);
}

SM_EXPORT int putc_unlocked(int ch, FILE *fp)
    SM_ALIAS_OF(fputc_unlocked);

SM_EXPORT int putchar_unlocked(int ch)
{
	struct fd_slot *s;
	FILE *fp = stdout;

	if (SM_LIKELY(!file_metered(fp, &s)))
		return sm_real.fputc_unlocked(ch, fp);
	return metered_putc(sm_real.fputc_unlocked, false, ch, fp, s);
}

static SM_METERED int metered_overflow(FILE *fp, int ch, struct fd_slot *s)
{
	STDIO_CALL c;
	int r;

	if (!stdio_begin(&c, fp, s, false, false))
		return sm_real.__overflow(fp, ch);
	STDIO_HOLD(&c);
	r = sm_real.__overflow(fp, ch);
	stdio_end_write(&c, r == EOF ? -1 : ch != EOF);
	STDIO_DROP();
	return r;
}

SM_EXPORT int __overflow(FILE *fp, int ch)
{
	struct fd_slot *s;

	if (SM_LIKELY(!file_metered(fp, &s)))
		return sm_real.__overflow(fp, ch);
	return metered_overflow(fp, ch, s);
}

/* The printf family: every form reaches glibc's vfprintf or
 * __vfprintf_chk, as glibc's own printf and fprintf do. */
static SM_METERED int metered_vfprintf(FILE *fp, int flag, const char *fmt,
				       va_list ap, struct fd_slot *s)
{
	STDIO_CALL c;
	int r;

	if (!stdio_begin(&c, fp, s, true, false))
		return flag < 0 ? sm_real.vfprintf(fp, fmt, ap)
				: sm_real.__vfprintf_chk(fp, flag, fmt, ap);
	STDIO_HOLD(&c);
	r = flag < 0 ? sm_real.vfprintf(fp, fmt, ap)
		     : sm_real.__vfprintf_chk(fp, flag, fmt, ap);
	stdio_end_write(&c, r);
	STDIO_DROP();
	return r;
}

static inline __attribute__((always_inline)) int
do_vfprintf(FILE *fp, const char *fmt, va_list ap)
{
	struct fd_slot *s;

	if (SM_LIKELY(!file_metered(fp, &s)))
		return sm_real.vfprintf(fp, fmt, ap);
	return metered_vfprintf(fp, -1, fmt, ap, s);
}

/* flag: the fortification level (>= 0) of the __*printf_chk forms. */
static inline __attribute__((always_inline)) int
do_vfprintf_chk(FILE *fp, int flag, const char *fmt, va_list ap)
{
	struct fd_slot *s;

	if (SM_LIKELY(!file_metered(fp, &s)))
		return sm_real.__vfprintf_chk(fp, flag, fmt, ap);
	return metered_vfprintf(fp, flag < 0 ? 0 : flag, fmt, ap, s);
}

SM_EXPORT int vfprintf(FILE *fp, const char *fmt, va_list ap)
{
	return do_vfprintf(fp, fmt, ap);
}

SM_EXPORT int vprintf(const char *fmt, va_list ap)
{
	return do_vfprintf(stdout, fmt, ap);
}

SM_EXPORT int fprintf(FILE *fp, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = do_vfprintf(fp, fmt, ap);
	va_end(ap);
	return r;
}

SM_EXPORT int printf(const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = do_vfprintf(stdout, fmt, ap);
	va_end(ap);
	return r;
}

SM_EXPORT int __vfprintf_chk(FILE *fp, int flag, const char *fmt, va_list ap)
{
	return do_vfprintf_chk(fp, flag, fmt, ap);
}

SM_EXPORT int __vprintf_chk(int flag, const char *fmt, va_list ap)
{
	return do_vfprintf_chk(stdout, flag, fmt, ap);
}

SM_EXPORT int __fprintf_chk(FILE *fp, int flag, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = do_vfprintf_chk(fp, flag, fmt, ap);
	va_end(ap);
	return r;
}

SM_EXPORT int __printf_chk(int flag, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = do_vfprintf_chk(stdout, flag, fmt, ap);
	va_end(ap);
	return r;
}

/* dprintf writes straight to its fd, through a FILE of its own that it
 * flushes before returning: counted like write. */
static SM_METERED int metered_vdprintf(int fd, int flag, const char *fmt,
				       va_list ap, struct fd_slot *s)
{
	uint64_t t0 = sm_start();
	int r = flag < 0 ? sm_real.vdprintf(fd, fmt, ap)
			 : sm_real.__vdprintf_chk(fd, flag, fmt, ap);

	if (r != 0)
		sm_data(s, DIR_OUT, r, t0);
	return r;
}

static inline __attribute__((always_inline)) int
do_vdprintf(int fd, int flag, const char *fmt, va_list ap)
{
	struct fd_slot *s;

	if (SM_LIKELY(!sm_metered(fd, &s)))
		return flag < 0 ? sm_real.vdprintf(fd, fmt, ap)
				: sm_real.__vdprintf_chk(fd, flag, fmt, ap);
	return metered_vdprintf(fd, flag, fmt, ap, s);
}

SM_EXPORT int vdprintf(int fd, const char *fmt, va_list ap)
{
	return do_vdprintf(fd, -1, fmt, ap);
}

SM_EXPORT int dprintf(int fd, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = do_vdprintf(fd, -1, fmt, ap);
	va_end(ap);
	return r;
}

SM_EXPORT int __vdprintf_chk(int fd, int flag, const char *fmt, va_list ap)
{
	return do_vdprintf(fd, flag < 0 ? 0 : flag, fmt, ap);
}

SM_EXPORT int __dprintf_chk(int fd, int flag, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = do_vdprintf(fd, flag < 0 ? 0 : flag, fmt, ap);
	va_end(ap);
	return r;
}

/* --- flushing ----------------------------------------------------------- */

static SM_METERED int metered_fflush(sm_fflush_fn real, bool lock, FILE *fp,
				     struct fd_slot *s)
{
	STDIO_CALL c;
	int r;

	if (!stdio_begin(&c, fp, s, lock, false))
		return real(fp);
	STDIO_HOLD(&c);
	r = sm_real.fflush_unlocked(fp);
	stdio_end_write(&c, r == EOF ? -1 : 0);
	STDIO_DROP();
	return r;
}

/* A FILE with output waiting, on a tracked fd. */
static bool flush_pending(FILE *fp, struct fd_slot **s)
{
	return fp->_mode <= 0 && fp->_IO_write_ptr > fp->_IO_write_base &&
	       sm_metered(fp->_fileno, s) && file_tracked(fp, *s);
}

/*
 * fflush(NULL) flushes every FILE: first the metered ones that hold output,
 * one by one and counted, under glibc's list lock (in glibc's own order of
 * locks: the list, then each FILE), then the real fflush(NULL) for the rest.
 */
static SM_METERED int fflush_all(void)
{
	struct fd_slot *s;
	int r, bad = 0, err = 0;
	FILE *fp;

	if (!__atomic_load_n(&stdio_seen, __ATOMIC_RELAXED))
		return sm_real.fflush(NULL);
	_IO_list_lock();
	for (fp = _IO_list_all; fp; fp = fp->_chain)
		if (flush_pending(fp, &s) &&
		    metered_fflush(sm_real.fflush, true, fp, s) == EOF) {
			bad = 1;
			err = errno;
		}
	_IO_list_unlock();
	r = sm_real.fflush(NULL);
	if (bad && r == 0) {
		errno = err;
		r = EOF;
	}
	return r;
}

SM_EXPORT int fflush(FILE *fp)
{
	struct fd_slot *s;

	if (!fp)
		return fflush_all();
	if (SM_LIKELY(!file_metered(fp, &s)))
		return sm_real.fflush(fp);
	return metered_fflush(sm_real.fflush, true, fp, s);
}

int sm_stdio_flush(FILE *fp)
{
	struct fd_slot *s;

	if (!fp || !file_metered(fp, &s))
		return sm_real.fflush(fp);
	return metered_fflush(sm_real.fflush, true, fp, s);
}

SM_EXPORT int fflush_unlocked(FILE *fp)
{
	struct fd_slot *s;

	if (!fp)
		return fflush_all();
	if (SM_LIKELY(!file_metered(fp, &s)))
		return sm_real.fflush_unlocked(fp);
	return metered_fflush(sm_real.fflush_unlocked, false, fp, s);
}

/*
 * The calls that flush a FILE's output on the way: fseek and the other
 * positioning calls (glibc flushes before it moves; on a socket the seek
 * then fails with ESPIPE, the bytes are gone all the same), setvbuf and
 * setbuf (before the buffer is replaced).  What left the buffer went to
 * the kernel, counted as fflush counts it.  (setlinebuf only sets a flag.)
 *
 * A seek outside the buffer of a FILE that reads also refills it: glibc
 * reads the block the new position falls in, inside the call (binutils,
 * ed, zip and lua read their files so).  The get area then holds what that
 * read returned, and glibc's own record of the fd's offset (_offset) has
 * moved; a seek inside the buffer moves only the read pointer, one that
 * reads nothing leaves the get area empty.
 */
static void stdio_end_seek(struct stdio_call *c)
{
	struct file_side *f = &c->f;
	const struct file_state *b = &f->before, *a = &f->after;
	int err = errno;

	side_end(f, true);
	count_flushed(f, c->t0);
	if (a->rend > a->rbase &&
	    (a->rbase != b->rbase || a->rend != b->rend ||
	     a->offset != b->offset))
		count(f, DIR_IN, a->rend - a->rbase, c->t0);
	errno = err;
}

#define FLUSHING(ret, name, params, args)                                      \
	static SM_METERED ret metered_##name(struct fd_slot *s_,               \
					     SM_UNPAREN params)                \
	{                                                                      \
		STDIO_CALL c;                                                  \
		ret r;                                                         \
                                                                               \
		if (!stdio_begin(&c, fp, s_, true, true))                      \
			return sm_real.name args;                              \
		STDIO_HOLD(&c);                                                \
		r = sm_real.name args;                                         \
		stdio_end_seek(&c);                                            \
		STDIO_DROP();                                                  \
		return r;                                                      \
	}                                                                      \
                                                                               \
	SM_EXPORT ret name params                                              \
	{                                                                      \
		struct fd_slot *s_;                                            \
                                                                               \
		if (SM_LIKELY(!file_metered(fp, &s_)))                         \
			return sm_real.name args;                              \
		return metered_##name(s_, SM_UNPAREN args);                    \
	}

/* The same for the calls that return nothing. */
#define FLUSHING_VOID(name, params, args)                                      \
	static SM_METERED void metered_##name(struct fd_slot *s_,              \
					      SM_UNPAREN params)               \
	{                                                                      \
		STDIO_CALL c;                                                  \
                                                                               \
		if (!stdio_begin(&c, fp, s_, true, true)) {                    \
			sm_real.name args;                                     \
			return;                                                \
		}                                                              \
		STDIO_HOLD(&c);                                                \
		sm_real.name args;                                             \
		stdio_end_seek(&c);                                            \
		STDIO_DROP();                                                  \
	}                                                                      \
                                                                               \
	SM_EXPORT void name params                                             \
	{                                                                      \
		struct fd_slot *s_;                                            \
                                                                               \
		if (SM_LIKELY(!file_metered(fp, &s_)))                         \
			sm_real.name args;                                     \
		else                                                           \
			metered_##name(s_, SM_UNPAREN args);                   \
	}


/* clang-format off */
FLUSHING(int, fseek, (FILE *fp, long off, int whence), (fp, off, whence))
FLUSHING(int, fseeko, (FILE *fp, off_t off, int whence), (fp, off, whence))
FLUSHING(int, fseeko64, (FILE *fp, off64_t off, int whence),
	 (fp, off, whence))
FLUSHING(int, fsetpos, (FILE *fp, const fpos_t *pos), (fp, pos))
FLUSHING(int, fsetpos64, (FILE *fp, const fpos64_t *pos), (fp, pos))
FLUSHING(int, setvbuf, (FILE *fp, char *buf, int mode, size_t size),
	 (fp, buf, mode, size))
FLUSHING_VOID(rewind, (FILE *fp), (fp))
FLUSHING_VOID(setbuf, (FILE *fp, char *buf), (fp, buf))
FLUSHING_VOID(setbuffer, (FILE *fp, char *buf, size_t size), (fp, buf, size))
/* clang-format on */

static int flush_metered_unlocked(void);

/*
 * fcloseall flushes every FILE (and closes none of their fds: glibc's
 * _IO_cleanup), taking no lock, so that it never waits for a thread inside
 * stdio.  The metered ones are flushed first, counted, the same way: no
 * list lock, a FILE another thread holds passed over (glibc then flushes
 * it, uncounted, as at exit).
 */
SM_EXPORT int fcloseall(void)
{
	int bad = flush_metered_unlocked(), r = sm_real.fcloseall();

	return bad ? EOF : r;
}

/* The metered FILEs that hold output, flushed and counted without the
 * list lock and without waiting for a FILE's lock, as glibc's own flush
 * at exit; non-zero when a flush failed. */
static int flush_metered_unlocked(void)
{
	struct fd_slot *s;
	int bad = 0;
	FILE *fp;

	if (!__atomic_load_n(&stdio_seen, __ATOMIC_RELAXED))
		return 0;
	for (fp = _IO_list_all; fp; fp = fp->_chain) {
		bool user = fp->_flags & SM_IO_USER_LOCK;

		if (!flush_pending(fp, &s) || (!user && ftrylockfile(fp)))
			continue;
		if (metered_fflush(sm_real.fflush_unlocked, false, fp, s) == EOF)
			bad = 1;
		if (!user)
			funlockfile(fp);
	}
	return bad;
}

void sm_stdio_at_exit(void)
{
	flush_metered_unlocked();
}

bool sm_stdio_close_begin(FILE *fp, struct sm_stdio_close *c)
{
	c->s = NULL;
	if (!fp || !flush_pending(fp, &c->s)) {
		c->s = NULL;
		return false;
	}
	c->pending = fp->_IO_write_ptr - fp->_IO_write_base;
	c->t0 = sm_start();
	return true;
}

void sm_stdio_close_end(const struct sm_stdio_close *c, int r)
{
	if (c->s && r == 0)
		sm_data(c->s, DIR_OUT, c->pending, c->t0);
}

/* --- reading ------------------------------------------------------------ */

static SM_METERED size_t metered_fread(sm_fread_fn real, bool lock, void *p,
				       size_t size, size_t n, FILE *fp,
				       struct fd_slot *s)
{
	STDIO_CALL c;
	size_t bytes, r;

	if (!stdio_begin_read(&c, fp, s, lock))
		return real(p, size, n, fp);
	STDIO_HOLD(&c);
	if (!whole_request(size, n, &bytes)) {
		r = sm_real.fread_unlocked(p, size, n, fp);
		stdio_end_read(&c, (int64_t)(r * size));
	} else {
		r = sm_real.fread_unlocked(p, 1, bytes, fp);
		stdio_end_read(&c, (int64_t)r);
		r = items(r, bytes, size, n);
	}
	STDIO_DROP();
	return r;
}

SM_EXPORT size_t fread(void *p, size_t size, size_t n, FILE *fp)
{
	struct fd_slot *s;

	if (SM_LIKELY(!file_metered(fp, &s)))
		return sm_real.fread(p, size, n, fp);
	return metered_fread(sm_real.fread, true, p, size, n, fp, s);
}

SM_EXPORT size_t fread_unlocked(void *p, size_t size, size_t n, FILE *fp)
{
	struct fd_slot *s;

	if (SM_LIKELY(!file_metered(fp, &s)))
		return sm_real.fread_unlocked(p, size, n, fp);
	return metered_fread(sm_real.fread_unlocked, false, p, size, n, fp, s);
}

static SM_METERED size_t metered_fread_chk(sm___fread_chk_fn real, bool lock,
					   void *p, size_t plen, size_t size,
					   size_t n, FILE *fp,
					   struct fd_slot *s)
{
	STDIO_CALL c;
	size_t bytes, r;

	if (!stdio_begin_read(&c, fp, s, lock))
		return real(p, plen, size, n, fp);
	STDIO_HOLD(&c);
	/* An overflow or too small a buffer: the real check fails it. */
	if (!whole_request(size, n, &bytes) || bytes > plen) {
		r = sm_real.__fread_unlocked_chk(p, plen, size, n, fp);
		stdio_end_read(&c, (int64_t)(r * size));
	} else {
		r = sm_real.__fread_unlocked_chk(p, plen, 1, bytes, fp);
		stdio_end_read(&c, (int64_t)r);
		r = items(r, bytes, size, n);
	}
	STDIO_DROP();
	return r;
}

SM_EXPORT size_t __fread_chk(void *p, size_t plen, size_t size, size_t n,
			     FILE *fp)
{
	struct fd_slot *s;

	if (SM_LIKELY(!file_metered(fp, &s)))
		return sm_real.__fread_chk(p, plen, size, n, fp);
	return metered_fread_chk(sm_real.__fread_chk, true, p, plen, size, n,
				 fp, s);
}

SM_EXPORT size_t __fread_unlocked_chk(void *p, size_t plen, size_t size,
				      size_t n, FILE *fp)
{
	struct fd_slot *s;

	if (SM_LIKELY(!file_metered(fp, &s)))
		return sm_real.__fread_unlocked_chk(p, plen, size, n, fp);
	return metered_fread_chk(sm_real.__fread_unlocked_chk, false, p, plen,
				 size, n, fp, s);
}

/*
 * The bytes an fgets call consumed: the length of the string it returned,
 * unless the line held a NUL byte: the string then ends early, and the
 * real end is the first NUL after a newline, at n - 1 bytes, or (ambiguous,
 * the one inexact case) where end of file or an error stopped the line.
 */
static int64_t fgets_took(const char *buf, int n, const char *r, int flags)
{
	size_t max, p;

	if (!r || n <= 1)
		return 0;
	max = (size_t)n - 1;
	p = strnlen(buf, max);
	if (flags & (SM_IO_EOF_SEEN | SM_IO_ERR_SEEN))
		return (int64_t)p;
	while (p < max && (p == 0 || buf[p - 1] != '\n'))
		p += 1 + strnlen(buf + p + 1, max - p - 1);
	return (int64_t)p;
}

static SM_METERED char *metered_fgets(sm_fgets_fn real, bool lock, char *buf,
				      int n, FILE *fp, struct fd_slot *s)
{
	STDIO_CALL c;
	char *r;

	if (!stdio_begin_read(&c, fp, s, lock))
		return real(buf, n, fp);
	STDIO_HOLD(&c);
	r = sm_real.fgets_unlocked(buf, n, fp);
	stdio_end_read(&c, fgets_took(buf, n, r, fp->_flags));
	STDIO_DROP();
	return r;
}

SM_EXPORT char *fgets(char *buf, int n, FILE *fp)
{
	struct fd_slot *s;

	if (SM_LIKELY(!file_metered(fp, &s)))
		return sm_real.fgets(buf, n, fp);
	return metered_fgets(sm_real.fgets, true, buf, n, fp, s);
}

SM_EXPORT char *fgets_unlocked(char *buf, int n, FILE *fp)
{
	struct fd_slot *s;

	if (SM_LIKELY(!file_metered(fp, &s)))
		return sm_real.fgets_unlocked(buf, n, fp);
	return metered_fgets(sm_real.fgets_unlocked, false, buf, n, fp, s);
}

static SM_METERED char *metered_fgets_chk(sm___fgets_chk_fn real, bool lock,
					  char *buf, size_t size, int n,
					  FILE *fp, struct fd_slot *s)
{
	STDIO_CALL c;
	char *r;

	if (!stdio_begin_read(&c, fp, s, lock))
		return real(buf, size, n, fp);
	STDIO_HOLD(&c);
	r = sm_real.__fgets_unlocked_chk(buf, size, n, fp);
	stdio_end_read(&c, fgets_took(buf, n, r, fp->_flags));
	STDIO_DROP();
	return r;
}

SM_EXPORT char *__fgets_chk(char *buf, size_t size, int n, FILE *fp)
{
	struct fd_slot *s;

	if (SM_LIKELY(!file_metered(fp, &s)))
		return sm_real.__fgets_chk(buf, size, n, fp);
	return metered_fgets_chk(sm_real.__fgets_chk, true, buf, size, n, fp,
				 s);
}

SM_EXPORT char *__fgets_unlocked_chk(char *buf, size_t size, int n, FILE *fp)
{
	struct fd_slot *s;

	if (SM_LIKELY(!file_metered(fp, &s)))
		return sm_real.__fgets_unlocked_chk(buf, size, n, fp);
	return metered_fgets_chk(sm_real.__fgets_unlocked_chk, false, buf, size,
				 n, fp, s);
}

/* One character: fgetc, getc, getchar and the unlocked forms, and __uflow,
 * which glibc's inline getc_unlocked calls when the buffer is empty. */
static SM_METERED int metered_getc(sm_fgetc_fn real, bool lock, FILE *fp,
				   struct fd_slot *s)
{
	STDIO_CALL c;
	int r;

	if (!stdio_begin_read(&c, fp, s, lock))
		return real(fp);
	STDIO_HOLD(&c);
	r = lock ? sm_real.fgetc_unlocked(fp) : real(fp);
	stdio_end_read(&c, r != EOF);
	STDIO_DROP();
	return r;
}

SM_EXPORT int fgetc(FILE *fp)
{
	struct fd_slot *s;

	if (SM_LIKELY(!file_metered(fp, &s)))
		return sm_real.fgetc(fp);
	return metered_getc(sm_real.fgetc, true, fp, s);
}

SM_EXPORT int getc(FILE *fp) SM_ALIAS_OF(fgetc);
SM_EXPORT int _IO_getc(FILE *fp) SM_ALIAS_OF(fgetc);

SM_EXPORT int getchar(void)
{
	struct fd_slot *s;
	FILE *fp = stdin;

	if (SM_LIKELY(!file_metered(fp, &s)))
		return sm_real.fgetc(fp);
	return metered_getc(sm_real.fgetc, true, fp, s);
}

SM_EXPORT int fgetc_unlocked(FILE *fp)
{
	struct fd_slot *s;

	if (SM_LIKELY(!file_metered(fp, &s)))
		return sm_real.fgetc_unlocked(fp);
	return metered_getc(sm_real.fgetc_unlocked, false, fp, s);
}

SM_EXPORT int getc_unlocked(FILE *fp)
    SM_ALIAS_OF(fgetc_unlocked);

SM_EXPORT int getchar_unlocked(void)
{
	struct fd_slot *s;
	FILE *fp = stdin;

	if (SM_LIKELY(!file_metered(fp, &s)))
		return sm_real.fgetc_unlocked(fp);
	return metered_getc(sm_real.fgetc_unlocked, false, fp, s);
}

SM_EXPORT int __uflow(FILE *fp)
{
	struct fd_slot *s;

	if (SM_LIKELY(!file_metered(fp, &s)))
		return sm_real.__uflow(fp);
	return metered_getc(sm_real.__uflow, false, fp, s);
}

/* __underflow refills without consuming: took is 0. */
static SM_METERED int metered_underflow(FILE *fp, struct fd_slot *s)
{
	STDIO_CALL c;
	int r;

	if (!stdio_begin_read(&c, fp, s, false))
		return sm_real.__underflow(fp);
	STDIO_HOLD(&c);
	r = sm_real.__underflow(fp);
	stdio_end_read(&c, 0);
	STDIO_DROP();
	return r;
}

SM_EXPORT int __underflow(FILE *fp)
{
	struct fd_slot *s;

	if (SM_LIKELY(!file_metered(fp, &s)))
		return sm_real.__underflow(fp);
	return metered_underflow(fp, s);
}

/* getline is getdelim with '\n' in glibc; __getdelim is getdelim. */
static SM_METERED ssize_t metered_getdelim(char **line, size_t *cap, int delim,
					   FILE *fp, struct fd_slot *s)
{
	STDIO_CALL c;
	ssize_t r;

	if (!stdio_begin_read(&c, fp, s, true))
		return sm_real.getdelim(line, cap, delim, fp);
	STDIO_HOLD(&c);
	r = sm_real.getdelim(line, cap, delim, fp);
	stdio_end_read(&c, r > 0 ? r : 0);
	STDIO_DROP();
	return r;
}

static inline __attribute__((always_inline)) ssize_t
do_getdelim(char **line, size_t *cap, int delim, FILE *fp)
{
	struct fd_slot *s;

	if (SM_LIKELY(!file_metered(fp, &s)))
		return sm_real.getdelim(line, cap, delim, fp);
	return metered_getdelim(line, cap, delim, fp, s);
}

SM_EXPORT ssize_t getdelim(char **line, size_t *cap, int delim, FILE *fp)
{
	return do_getdelim(line, cap, delim, fp);
}

SM_EXPORT ssize_t __getdelim(char **line, size_t *cap, int delim, FILE *fp)
    SM_ALIAS_OF(getdelim);

SM_EXPORT ssize_t getline(char **line, size_t *cap, FILE *fp)
{
	return do_getdelim(line, cap, '\n', fp);
}

/* The scanf family, through vfscanf or __isoc99_vfscanf like glibc's own
 * (the __isoc99_ forms are what C99 programs call). */
static SM_METERED int metered_vfscanf(sm_vfscanf_fn real, FILE *fp,
				      const char *fmt, va_list ap,
				      struct fd_slot *s)
{
	STDIO_CALL c;
	int r;

	if (!stdio_begin_read(&c, fp, s, true))
		return real(fp, fmt, ap);
	STDIO_HOLD(&c);
	r = real(fp, fmt, ap);
	stdio_end_read(&c, TOOK_UNKNOWN);
	STDIO_DROP();
	return r;
}

static inline __attribute__((always_inline)) int
do_vfscanf(sm_vfscanf_fn real, FILE *fp, const char *fmt, va_list ap)
{
	struct fd_slot *s;

	if (SM_LIKELY(!file_metered(fp, &s)))
		return real(fp, fmt, ap);
	return metered_vfscanf(real, fp, fmt, ap, s);
}

/* <stdio.h> renames scanf, fscanf, vscanf and vfscanf to their __isoc99_
 * forms in C99 programs: the plain names (older programs, or built with
 * _GNU_SOURCE under C89) are defined here under their own names. */
SM_EXPORT int plain_vfscanf(FILE *fp, const char *fmt,
			    va_list ap) __asm__("vfscanf");
SM_EXPORT int plain_vscanf(const char *fmt, va_list ap) __asm__("vscanf");
SM_EXPORT int plain_fscanf(FILE *fp, const char *fmt, ...) __asm__("fscanf");
SM_EXPORT int plain_scanf(const char *fmt, ...) __asm__("scanf");

SM_EXPORT int plain_vfscanf(FILE *fp, const char *fmt, va_list ap)
{
	return do_vfscanf(sm_real.vfscanf, fp, fmt, ap);
}

SM_EXPORT int plain_vscanf(const char *fmt, va_list ap)
{
	return do_vfscanf(sm_real.vfscanf, stdin, fmt, ap);
}

SM_EXPORT int plain_fscanf(FILE *fp, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = do_vfscanf(sm_real.vfscanf, fp, fmt, ap);
	va_end(ap);
	return r;
}

SM_EXPORT int plain_scanf(const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = do_vfscanf(sm_real.vfscanf, stdin, fmt, ap);
	va_end(ap);
	return r;
}

SM_EXPORT int __isoc99_vfscanf(FILE *fp, const char *fmt, va_list ap)
{
	return do_vfscanf(sm_real.__isoc99_vfscanf, fp, fmt, ap);
}

SM_EXPORT int __isoc99_vscanf(const char *fmt, va_list ap)
{
	return do_vfscanf(sm_real.__isoc99_vfscanf, stdin, fmt, ap);
}

SM_EXPORT int __isoc99_fscanf(FILE *fp, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = do_vfscanf(sm_real.__isoc99_vfscanf, fp, fmt, ap);
	va_end(ap);
	return r;
}

SM_EXPORT int __isoc99_scanf(const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = do_vfscanf(sm_real.__isoc99_vfscanf, stdin, fmt, ap);
	va_end(ap);
	return r;
}

/* --- before binding (see unbound.c) -------------------------------------- */

/* While dlsym re-enters a wrapper on this thread there is no real stdio
 * function to call, and no system call does its work: the call fails with
 * ENOSYS (dlsym does not use stdio, so this is never expected). */
#define BOUND(name) (sm_bind() && sm_real.name != unbound_##name)

size_t unbound_fwrite(const void *a0, size_t a1, size_t a2, FILE *a3)
{
	if (BOUND(fwrite))
		return sm_real.fwrite(a0, a1, a2, a3);
	errno = ENOSYS;
	return 0;
}

size_t unbound_fwrite_unlocked(const void *a0, size_t a1, size_t a2, FILE *a3)
{
	if (BOUND(fwrite_unlocked))
		return sm_real.fwrite_unlocked(a0, a1, a2, a3);
	errno = ENOSYS;
	return 0;
}

int unbound_fputs(const char *a0, FILE *a1)
{
	if (BOUND(fputs))
		return sm_real.fputs(a0, a1);
	errno = ENOSYS;
	return EOF;
}

int unbound_fputs_unlocked(const char *a0, FILE *a1)
{
	if (BOUND(fputs_unlocked))
		return sm_real.fputs_unlocked(a0, a1);
	errno = ENOSYS;
	return EOF;
}

int unbound_fputc(int a0, FILE *a1)
{
	if (BOUND(fputc))
		return sm_real.fputc(a0, a1);
	errno = ENOSYS;
	return EOF;
}

int unbound_fputc_unlocked(int a0, FILE *a1)
{
	if (BOUND(fputc_unlocked))
		return sm_real.fputc_unlocked(a0, a1);
	errno = ENOSYS;
	return EOF;
}

int unbound_puts(const char *a0)
{
	if (BOUND(puts))
		return sm_real.puts(a0);
	errno = ENOSYS;
	return EOF;
}

int unbound_vfprintf(FILE *a0, const char *a1, va_list a2)
{
	if (BOUND(vfprintf))
		return sm_real.vfprintf(a0, a1, a2);
	errno = ENOSYS;
	return EOF;
}

int unbound___vfprintf_chk(FILE *a0, int a1, const char *a2, va_list a3)
{
	if (BOUND(__vfprintf_chk))
		return sm_real.__vfprintf_chk(a0, a1, a2, a3);
	errno = ENOSYS;
	return EOF;
}

int unbound_vdprintf(int a0, const char *a1, va_list a2)
{
	if (BOUND(vdprintf))
		return sm_real.vdprintf(a0, a1, a2);
	errno = ENOSYS;
	return EOF;
}

int unbound___vdprintf_chk(int a0, int a1, const char *a2, va_list a3)
{
	if (BOUND(__vdprintf_chk))
		return sm_real.__vdprintf_chk(a0, a1, a2, a3);
	errno = ENOSYS;
	return EOF;
}

int unbound_fflush(FILE *a0)
{
	if (BOUND(fflush))
		return sm_real.fflush(a0);
	errno = ENOSYS;
	return EOF;
}

int unbound_fflush_unlocked(FILE *a0)
{
	if (BOUND(fflush_unlocked))
		return sm_real.fflush_unlocked(a0);
	errno = ENOSYS;
	return EOF;
}

int unbound___overflow(FILE *a0, int a1)
{
	if (BOUND(__overflow))
		return sm_real.__overflow(a0, a1);
	errno = ENOSYS;
	return EOF;
}

size_t unbound_fread(void *a0, size_t a1, size_t a2, FILE *a3)
{
	if (BOUND(fread))
		return sm_real.fread(a0, a1, a2, a3);
	errno = ENOSYS;
	return 0;
}

size_t unbound_fread_unlocked(void *a0, size_t a1, size_t a2, FILE *a3)
{
	if (BOUND(fread_unlocked))
		return sm_real.fread_unlocked(a0, a1, a2, a3);
	errno = ENOSYS;
	return 0;
}

size_t unbound___fread_chk(void *a0, size_t a1, size_t a2, size_t a3, FILE *a4)
{
	if (BOUND(__fread_chk))
		return sm_real.__fread_chk(a0, a1, a2, a3, a4);
	errno = ENOSYS;
	return 0;
}

size_t unbound___fread_unlocked_chk(void *a0, size_t a1, size_t a2, size_t a3,
				    FILE *a4)
{
	if (BOUND(__fread_unlocked_chk))
		return sm_real.__fread_unlocked_chk(a0, a1, a2, a3, a4);
	errno = ENOSYS;
	return 0;
}

char *unbound_fgets(char *a0, int a1, FILE *a2)
{
	if (BOUND(fgets))
		return sm_real.fgets(a0, a1, a2);
	errno = ENOSYS;
	return NULL;
}

char *unbound_fgets_unlocked(char *a0, int a1, FILE *a2)
{
	if (BOUND(fgets_unlocked))
		return sm_real.fgets_unlocked(a0, a1, a2);
	errno = ENOSYS;
	return NULL;
}

char *unbound___fgets_chk(char *a0, size_t a1, int a2, FILE *a3)
{
	if (BOUND(__fgets_chk))
		return sm_real.__fgets_chk(a0, a1, a2, a3);
	errno = ENOSYS;
	return NULL;
}

char *unbound___fgets_unlocked_chk(char *a0, size_t a1, int a2, FILE *a3)
{
	if (BOUND(__fgets_unlocked_chk))
		return sm_real.__fgets_unlocked_chk(a0, a1, a2, a3);
	errno = ENOSYS;
	return NULL;
}

int unbound_fgetc(FILE *a0)
{
	if (BOUND(fgetc))
		return sm_real.fgetc(a0);
	errno = ENOSYS;
	return EOF;
}

int unbound_fgetc_unlocked(FILE *a0)
{
	if (BOUND(fgetc_unlocked))
		return sm_real.fgetc_unlocked(a0);
	errno = ENOSYS;
	return EOF;
}

int unbound___uflow(FILE *a0)
{
	if (BOUND(__uflow))
		return sm_real.__uflow(a0);
	errno = ENOSYS;
	return EOF;
}

int unbound___underflow(FILE *a0)
{
	if (BOUND(__underflow))
		return sm_real.__underflow(a0);
	errno = ENOSYS;
	return EOF;
}

ssize_t unbound_getdelim(char **a0, size_t *a1, int a2, FILE *a3)
{
	if (BOUND(getdelim))
		return sm_real.getdelim(a0, a1, a2, a3);
	errno = ENOSYS;
	return -1;
}

int unbound_vfscanf(FILE *a0, const char *a1, va_list a2)
{
	if (BOUND(vfscanf))
		return sm_real.vfscanf(a0, a1, a2);
	errno = ENOSYS;
	return EOF;
}

int unbound___isoc99_vfscanf(FILE *a0, const char *a1, va_list a2)
{
	if (BOUND(__isoc99_vfscanf))
		return sm_real.__isoc99_vfscanf(a0, a1, a2);
	errno = ENOSYS;
	return EOF;
}

int unbound_fseek(FILE *a0, long a1, int a2)
{
	if (BOUND(fseek))
		return sm_real.fseek(a0, a1, a2);
	errno = ENOSYS;
	return -1;
}

int unbound_fseeko(FILE *a0, off_t a1, int a2)
{
	if (BOUND(fseeko))
		return sm_real.fseeko(a0, a1, a2);
	errno = ENOSYS;
	return -1;
}

int unbound_fseeko64(FILE *a0, off64_t a1, int a2)
{
	if (BOUND(fseeko64))
		return sm_real.fseeko64(a0, a1, a2);
	errno = ENOSYS;
	return -1;
}

int unbound_fsetpos(FILE *a0, const fpos_t *a1)
{
	if (BOUND(fsetpos))
		return sm_real.fsetpos(a0, a1);
	errno = ENOSYS;
	return -1;
}

int unbound_fsetpos64(FILE *a0, const fpos64_t *a1)
{
	if (BOUND(fsetpos64))
		return sm_real.fsetpos64(a0, a1);
	errno = ENOSYS;
	return -1;
}

int unbound_setvbuf(FILE *a0, char *a1, int a2, size_t a3)
{
	if (BOUND(setvbuf))
		return sm_real.setvbuf(a0, a1, a2, a3);
	errno = ENOSYS;
	return -1;
}

void unbound_rewind(FILE *a0)
{
	if (BOUND(rewind))
		sm_real.rewind(a0);
}

void unbound_setbuf(FILE *a0, char *a1)
{
	if (BOUND(setbuf))
		sm_real.setbuf(a0, a1);
}

void unbound_setbuffer(FILE *a0, char *a1, size_t a2)
{
	if (BOUND(setbuffer))
		sm_real.setbuffer(a0, a1, a2);
}

int unbound_fcloseall(void)
{
	if (BOUND(fcloseall))
		return sm_real.fcloseall();
	errno = ENOSYS;
	return EOF;
}
