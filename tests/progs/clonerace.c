/*
 * clonerace - a raw clone right after the preload starts its thread, as
 * vsftpd's isolated session does: the session (made by a raw clone) reads
 * its socket, which starts the preload's ticker in it, and makes the login
 * child with another raw clone at once; the login child calls setgroups.
 * glibc's setgroups in a process with threads waits for each thread on its
 * list to have started (the list a raw clone's child inherits as it was),
 * so a thread caught being created hangs it for ever.
 *
 *   clonerace ROUNDS
 *
 * Each round: a session A (raw clone) reads 1 byte from an inherited
 * socket and raw-clones B at once; B calls setgroups(0, NULL) (EPERM when
 * not root: glibc waits for the threads first all the same) and _exits.
 * A gives B 3 s, then kills it.  Prints rounds= and hung= (rounds in which
 * B had to be killed).
 */
#include <errno.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long raw_fork(void)
{
	return syscall(SYS_clone, SIGCHLD, NULL, NULL, NULL, NULL);
}

/* Waits up to ms for pid; kills it after.  1 if it had to be killed. */
static int reap(pid_t pid, int ms)
{
	int st, i;

	for (i = 0; i < ms; i++) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			return 0;
		usleep(1000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	return 1;
}

static void session(int fd)
{
	char b;
	long pid;

	if (read(fd, &b, 1) != 1)
		_exit(2);
	pid = raw_fork();
	if (pid < 0)
		_exit(2);
	if (pid == 0) {
		setgroups(0, NULL);
		_exit(0);
	}
	_exit(reap((pid_t)pid, 3000) ? 1 : 0);
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 10, hung = 0, r;

	for (r = 0; r < rounds; r++) {
		int sv[2], st;
		long pid;

		if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0 ||
		    write(sv[0], "x", 1) != 1)
			return 2;
		pid = raw_fork();
		if (pid < 0)
			return 2;
		if (pid == 0)
			session(sv[1]);
		if (waitpid((pid_t)pid, &st, 0) != pid || !WIFEXITED(st) ||
		    WEXITSTATUS(st) > 1)
			return 2;
		hung += WEXITSTATUS(st);
		close(sv[0]);
		close(sv[1]);
	}
	printf("rounds=%d\nhung=%d\n", rounds, hung);
	return 0;
}
