/*
 * procns.h - what /proc says about the calling process: small files, and
 * the uid its user namespace's parent knows it by.
 *
 * In a user namespace (unshare -r, a rootless container, bwrap
 * --unshare-user) a process's uids are its namespace's: a fake root is uid
 * 0 there and, outside, the user who made the namespace, who owns every
 * file it makes.  The default directories name the uid that writes
 * (/tmp/sockmeter-%u): named with the namespace's uid, a fake root's
 * records went to /tmp/sockmeter-0, which is not its own when the real
 * root has one (refused: no log), and which, made by the fake root, the
 * real root's processes then refused as another user's.  %u is the uid
 * the parent namespace knows instead: the fake root of user 1000 writes
 * /tmp/sockmeter-1000, as that user's other processes do, and either
 * recovers the other's killed processes.  Ownership is still checked in
 * the process's own terms (stat shows a file's owner mapped into the
 * reader's namespace), so a directory of the same user passes both ways.
 * One level: a namespace inside another one's is named by its parent's
 * uids, which are the ones the processes beside it in that namespace see.
 */
#ifndef SOCKMETER_PROCNS_H
#define SOCKMETER_PROCNS_H

#include <stdbool.h>
#include <stddef.h>

/*
 * proc_read_small - read a small /proc file into buf (NUL-terminated,
 * at most cap - 1 bytes); bytes read, or -1.  An fd for the moment of the
 * read (O_CLOEXEC) in the caller's table: the ticker's own, progfd_run's
 * child, or a process with no other thread (core/state.c's uses).  errno
 * as it may be.  Context: as said, signal handlers too.
 */
long proc_read_small(const char *path, char *buf, size_t cap);

/*
 * procns_threads - the calling process's threads (/proc/self/stat's
 * num_threads), or -1 when it cannot tell (no /proc, a sandboxed thread).
 * Read where the program cannot see the fd (progfd.h): a child of its own
 * (progfd_run) on any thread but the ticker.  Context: any thread, not a
 * signal handler of a thread in a vfork (progfd_run's).
 */
long procns_threads(void);

/*
 * procns_uid_outer - the uid the parent user namespace knows for uid, a
 * uid of the caller's namespace (/proc/self/uid_map): uid itself in the
 * initial namespace (one stat tells it), without a readable /proc, on a
 * sandboxed thread (quiet.h), or when no line of the map holds it (the
 * overflow uid).  What %u names.  In a user namespace the map is read as
 * procns_threads reads (the initial one needs only a stat).  Context: as
 * procns_threads; errno kept.
 */
unsigned procns_uid_outer(unsigned uid);

/*
 * procns_uid_inner - the reverse: the uid of the caller's namespace that
 * the parent knows as outer, in *uid; false when none is mapped to it.
 * What a header's uid (the outer one) is compared with a stat's owner by.
 * Context: as procns_uid_outer.
 */
bool procns_uid_inner(unsigned outer, unsigned *uid);

/*
 * procns_fuse_mount - whether the directory dir is a FUSE mount (fuse,
 * fuse.*, fuseblk) of its own, told without a request to its server: a
 * statx with AT_STATX_DONT_SYNC of it (a link not followed: no mount)
 * and of its parent (by name), and where their devices differ,
 * /proc/self/mountinfo's line of its device.  A stat, lstat, statfs or
 * open of a FUSE mount whose server does not answer waits in the kernel
 * until it does, and a user's FUSE mount (allow_other) made on a
 * directory the library would make first (/dev/shm/sockmeter-0,
 * /tmp/sockmeter-0) held a root program's start so.  1 when it is; 0
 * when not, or when dir is on its parent's file system (whatever that
 * is: a user's own choice of a path below a mount); -1 when it cannot
 * tell (no statx, no /proc, a sandboxed thread).  Context: as
 * procns_threads; errno kept.
 */
int procns_fuse_mount(const char *dir);

/* What is said of a directory on one (the library's messages, and
 * recover's "...; left alone"). */
#define PROCNS_FUSE_SAYS                                                      \
	"on a FUSE file system, whose owners are its server's word"

#endif
