/*
 * filterthread.c - a thread made after a seccomp filter that forbids
 * futex ends the process (t_sandbox_untracked_exit).
 *
 *   filterthread kill|errno _exit|exit [sock|closes]
 *
 * sock: a socket made (tracked) before the filter (the thread's exit
 * then asks the ticker: a known limit); closes: 3,000 UDP sockets made
 * and closed under it, on the filtered thread, which then ends the
 * process itself (the close queue's wake at 1,024 waiting records is a
 * futex call: a review's SIGSYS).
 * The main thread confines itself (prctl, this thread only) with futex
 * killing the process (kill) or failing with EPERM (errno), makes a
 * thread, and sleeps; the thread ends the process with status 7.  The
 * thread carries the filter, which the library saw go on in another
 * thread: it must not ask its ticker anything with futex (a review's:
 * SIGSYS, status 159).  Status 9 or 8: the set-up failed; 6: the thread
 * did not end the process.
 */
#include <errno.h>
#include <netinet/in.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static const char *how;

static void *child(void *a)
{
	(void)a;
	if (!strcmp(how, "exit"))
		exit(7);
	_exit(7);
}

int main(int argc, char **argv)
{
	pthread_t t;
	struct timespec ts = { 5, 0 };

	if (argc != 3 && argc != 4)
		return 2;
	how = argv[2];
	if (argc == 4 && !strcmp(argv[3], "sock") &&
	    socket(AF_INET, SOCK_STREAM, 0) < 0)
		return 8;
	struct sock_filter nofutex[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_futex, 0, 1),
		BPF_STMT(BPF_RET | BPF_K,
			 !strcmp(argv[1], "kill")
				 ? SECCOMP_RET_KILL_PROCESS
				 : (SECCOMP_RET_ERRNO | EPERM)),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog p = { 4, nofutex };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &p, 0, 0))
		return 9;
	if (argc == 4 && !strcmp(argv[3], "closes")) {
		int i, fd;

		for (i = 0; i < 3000; i++) {
			fd = socket(AF_INET, SOCK_DGRAM, 0);
			if (fd < 0)
				return 8;
			close(fd);
		}
		/* The filtered thread itself ends it (its exit asks
		 * nothing: it is marked). */
		if (!strcmp(how, "exit"))
			exit(7);
		_exit(7);
	}
	if (pthread_create(&t, 0, child, 0))
		return 8;
	nanosleep(&ts, 0);
	return 6;
}
