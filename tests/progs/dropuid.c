/*
 * dropuid - a process that changes its credentials half-way, as daemons
 * do after start: 100 bytes over a unix socketpair, a pause (so a metered
 * run can write records as the old user), then setgid(GID) and the uid
 * change HOW (setuid, seteuid, setreuid or setresuid) to UID, then 200
 * more bytes and close.
 *
 *   dropuid HOW UID GID [PAUSE_MS [AFTER_MS]]   (PAUSE_MS default 300)
 *
 * AFTER_MS: a pause after the change and the 200 bytes, the connection
 * still open (pid and euid printed first), for a kill to end it.
 *
 * HOW tempeuid: a change with a way back, first thing (before any
 * socket, as varnish's manager does between its privileged steps):
 * setegid(GID) and seteuid(UID), then both back to 0; no change half-way.
 *
 * Prints "pid=N" and "euid=N" (after the change).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static void move(int *sv, size_t n)
{
	char buf[512];

	memset(buf, 'u', sizeof(buf));
	if (write(sv[0], buf, n) != (ssize_t)n ||
	    read(sv[1], buf, sizeof(buf)) != (ssize_t)n) {
		perror("dropuid: move");
		exit(1);
	}
}

int main(int argc, char **argv)
{
	const char *how;
	uid_t uid;
	gid_t gid;
	long ms;
	struct timespec d;
	int sv[2], r;

	if (argc < 4) {
		fprintf(stderr,
			"usage: dropuid HOW UID GID [PAUSE_MS [AFTER_MS]]\n");
		return 2;
	}
	how = argv[1];
	uid = (uid_t)atol(argv[2]);
	gid = (gid_t)atol(argv[3]);
	ms = argc > 4 ? atol(argv[4]) : 300;
	if (!strcmp(how, "tempeuid")) {
		if (setegid(gid) || seteuid(uid) || seteuid(0) || setegid(0)) {
			perror("dropuid: tempeuid");
			return 1;
		}
	}
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
		return 1;
	move(sv, 100);
	d.tv_sec = ms / 1000;
	d.tv_nsec = (ms % 1000) * 1000000L;
	nanosleep(&d, NULL);
	if (!strcmp(how, "tempeuid"))
		r = 0;
	else if (setgid(gid) != 0)
		r = -1;
	else if (!strcmp(how, "setuid"))
		r = setuid(uid);
	else if (!strcmp(how, "seteuid"))
		r = seteuid(uid);
	else if (!strcmp(how, "setreuid"))
		r = setreuid(uid, uid);
	else if (!strcmp(how, "setresuid"))
		r = setresuid(uid, uid, uid);
	else
		return 2;
	if (r != 0) {
		perror("dropuid: gid or uid change");
		return 1;
	}
	move(sv, 200);
	if (argc > 5) {
		ms = atol(argv[5]);
		printf("pid=%d\neuid=%d\n", (int)getpid(), (int)geteuid());
		fflush(stdout);
		d.tv_sec = ms / 1000;
		d.tv_nsec = (ms % 1000) * 1000000L;
		nanosleep(&d, NULL);
		close(sv[0]);
		close(sv[1]);
		return 0;
	}
	close(sv[0]);
	close(sv[1]);
	printf("pid=%d\neuid=%d\n", (int)getpid(), (int)geteuid());
	return 0;
}
