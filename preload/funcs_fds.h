/*
 * funcs_fds.h - the real functions of one group of wrapped calls: the calls
 * that create fds (open, pipe, eventfd...) and the stdio calls that close
 * them (fclose, freopen).  X(name, return type, parameter types), as
 * SM_REAL_FUNCS in preload.h.
 */
#ifndef SOCKMETER_FUNCS_FDS_H
#define SOCKMETER_FUNCS_FDS_H

#include <signal.h>
#include <stdio.h>
#include <sys/types.h>

#define SM_FUNCS_FDS(X)                                                        \
	X(open, int, (const char *, int, ...))                                 \
	X(open64, int, (const char *, int, ...))                               \
	X(openat, int, (int, const char *, int, ...))                          \
	X(openat64, int, (int, const char *, int, ...))                        \
	X(__open_2, int, (const char *, int))                                  \
	X(__open64_2, int, (const char *, int))                                \
	X(__openat_2, int, (int, const char *, int))                           \
	X(__openat64_2, int, (int, const char *, int))                         \
	X(creat, int, (const char *, mode_t))                                  \
	X(creat64, int, (const char *, mode_t))                                \
	X(pipe, int, (int *))                                                  \
	X(pipe2, int, (int *, int))                                            \
	X(eventfd, int, (unsigned int, int))                                   \
	X(timerfd_create, int, (int, int))                                     \
	X(signalfd, int, (int, const sigset_t *, int))                         \
	X(epoll_create, int, (int))                                            \
	X(epoll_create1, int, (int))                                           \
	X(memfd_create, int, (const char *, unsigned int))                     \
	X(inotify_init, int, (void))                                           \
	X(inotify_init1, int, (int))                                           \
	X(pidfd_open, int, (pid_t, unsigned int))                              \
	X(fopen, FILE *, (const char *, const char *))                         \
	X(fopen64, FILE *, (const char *, const char *))                       \
	X(freopen, FILE *, (const char *, const char *, FILE *))               \
	X(freopen64, FILE *, (const char *, const char *, FILE *))             \
	X(fclose, int, (FILE *))

#endif
