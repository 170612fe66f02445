/*
 * funcs_stdio.h - the real functions of one group of wrapped calls: stdio on
 * metered fds (wrap_stdio.c), splice, tee, vmsplice (wrap_splice.c).
 * X(name, return type, parameter types), as SM_REAL_FUNCS in preload.h.
 *
 * Only the functions the wrappers call through are listed: printf, fprintf,
 * vprintf and the fortified __printf_chk family reach glibc through the
 * v-forms below (as glibc's own do), putchar/putc through fputc, getchar/getc
 * through fgetc, getline through getdelim.
 */
#ifndef SOCKMETER_FUNCS_STDIO_H
#define SOCKMETER_FUNCS_STDIO_H

#include <stdarg.h>
#include <stdio.h>
#include <sys/types.h>
#include <sys/uio.h>

#define SM_FUNCS_STDIO(X)                                                      \
	X(fwrite, size_t, (const void *, size_t, size_t, FILE *))              \
	X(fwrite_unlocked, size_t, (const void *, size_t, size_t, FILE *))     \
	X(fputs, int, (const char *, FILE *))                                  \
	X(fputs_unlocked, int, (const char *, FILE *))                         \
	X(fputc, int, (int, FILE *))                                           \
	X(fputc_unlocked, int, (int, FILE *))                                  \
	X(puts, int, (const char *))                                           \
	X(vfprintf, int, (FILE *, const char *, va_list))                      \
	X(__vfprintf_chk, int, (FILE *, int, const char *, va_list))           \
	X(vdprintf, int, (int, const char *, va_list))                         \
	X(__vdprintf_chk, int, (int, int, const char *, va_list))              \
	X(fflush, int, (FILE *))                                               \
	X(fflush_unlocked, int, (FILE *))                                      \
	X(__overflow, int, (FILE *, int))                                      \
	X(fread, size_t, (void *, size_t, size_t, FILE *))                     \
	X(fread_unlocked, size_t, (void *, size_t, size_t, FILE *))            \
	X(__fread_chk, size_t, (void *, size_t, size_t, size_t, FILE *))       \
	X(__fread_unlocked_chk, size_t, (void *, size_t, size_t, size_t, FILE *)) \
	X(fgets, char *, (char *, int, FILE *))                                \
	X(fgets_unlocked, char *, (char *, int, FILE *))                       \
	X(__fgets_chk, char *, (char *, size_t, int, FILE *))                  \
	X(__fgets_unlocked_chk, char *, (char *, size_t, int, FILE *))         \
	X(fgetc, int, (FILE *))                                                \
	X(fgetc_unlocked, int, (FILE *))                                       \
	X(__uflow, int, (FILE *))                                              \
	X(__underflow, int, (FILE *))                                          \
	X(getdelim, ssize_t, (char **, size_t *, int, FILE *))                 \
	X(vfscanf, int, (FILE *, const char *, va_list))                       \
	X(__isoc99_vfscanf, int, (FILE *, const char *, va_list))              \
	X(fseek, int, (FILE *, long, int))                                     \
	X(fseeko, int, (FILE *, off_t, int))                                   \
	X(fseeko64, int, (FILE *, off64_t, int))                               \
	X(fsetpos, int, (FILE *, const fpos_t *))                              \
	X(fsetpos64, int, (FILE *, const fpos64_t *))                          \
	X(rewind, void, (FILE *))                                              \
	X(setvbuf, int, (FILE *, char *, int, size_t))                         \
	X(setbuf, void, (FILE *, char *))                                      \
	X(setbuffer, void, (FILE *, char *, size_t))                           \
	X(fcloseall, int, (void))                                              \
	X(splice, ssize_t, (int, loff_t *, int, loff_t *, size_t, unsigned int)) \
	X(tee, ssize_t, (int, int, size_t, unsigned int))                      \
	X(vmsplice, ssize_t, (int, const struct iovec *, size_t, unsigned int))

/* The wrappers exported besides those of the list above: each reaches libc
 * through one of its real functions (Y(name); t_exports.sh reads it). */
#define SM_STDIO_EXPORTED_ONLY(Y)                                              \
	Y(printf)                                                              \
	Y(fprintf)                                                             \
	Y(vprintf)                                                             \
	Y(dprintf)                                                             \
	Y(__printf_chk)                                                        \
	Y(__fprintf_chk)                                                       \
	Y(__vprintf_chk)                                                       \
	Y(__dprintf_chk)                                                       \
	Y(putc)                                                                \
	Y(_IO_putc)                                                            \
	Y(putchar)                                                             \
	Y(putc_unlocked)                                                       \
	Y(putchar_unlocked)                                                    \
	Y(getc)                                                                \
	Y(_IO_getc)                                                            \
	Y(getchar)                                                             \
	Y(getc_unlocked)                                                       \
	Y(getchar_unlocked)                                                    \
	Y(__getdelim)                                                          \
	Y(getline)                                                             \
	Y(scanf)                                                               \
	Y(fscanf)                                                              \
	Y(vscanf)                                                              \
	Y(__isoc99_scanf)                                                      \
	Y(__isoc99_fscanf)                                                     \
	Y(__isoc99_vscanf)

#endif
