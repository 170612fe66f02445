/*
 * forker - a parent that forks N children, each sending its own known
 * number of bytes to the parent over its own socketpair.
 *
 *   forker [N]       (default 3, at most 16)
 *
 * Before forking, the parent moves WARM_BYTES through a socketpair of its
 * own (kept open, inherited by every child) so that a child which kept the
 * parent's counters would show them.  Child i writes child_bytes(i) bytes
 * on its end, closes it and exits normally (exit, so atexit handlers and
 * destructors run).  The parent reads each socket to EOF, reaps the
 * children and prints:
 *   parent pid=P warm_bytes=W
 *   child pid=C index=I bytes=B        (one line per child)
 *   parent_in=SUM
 * Exits 0 when every child's bytes arrived and every child exited 0.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_CHILDREN 16
#define WARM_BYTES 777

static long child_bytes(int i)
{
	return 10007L * (i + 1) + 131L * i * i;
}

static int write_all(int fd, long total)
{
	char buf[3000];
	long done = 0;

	memset(buf, 'c', sizeof(buf));
	while (done < total) {
		long n = total - done < (long)sizeof(buf) ? total - done
							  : (long)sizeof(buf);
		ssize_t w = write(fd, buf, (size_t)n);

		if (w <= 0)
			return -1;
		done += w;
	}
	return 0;
}

static long drain(int fd)
{
	char buf[4096];
	long got = 0;
	ssize_t r;

	while ((r = read(fd, buf, sizeof(buf))) > 0)
		got += r;
	return r < 0 ? -1 : got;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 3;
	int sp[MAX_CHILDREN][2], warm[2], i, bad = 0;
	pid_t pid[MAX_CHILDREN];
	long got[MAX_CHILDREN], sum = 0;
	char wbuf[WARM_BYTES];

	if (n < 1 || n > MAX_CHILDREN)
		return 2;
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, warm) != 0)
		return 2;
	memset(wbuf, 'w', sizeof(wbuf));
	if (write(warm[0], wbuf, sizeof(wbuf)) != WARM_BYTES ||
	    read(warm[1], wbuf, sizeof(wbuf)) != WARM_BYTES)
		return 2;
	for (i = 0; i < n; i++)
		if (socketpair(AF_UNIX, SOCK_STREAM, 0, sp[i]) != 0)
			return 2;
	fflush(stdout);
	for (i = 0; i < n; i++) {
		pid[i] = fork();
		if (pid[i] < 0)
			return 2;
		if (pid[i] == 0) {
			int j, rc;

			for (j = 0; j < n; j++) {
				close(sp[j][0]);
				if (j != i)
					close(sp[j][1]);
			}
			rc = write_all(sp[i][1], child_bytes(i));
			close(sp[i][1]);
			exit(rc ? 3 : 0);
		}
	}
	for (i = 0; i < n; i++)
		close(sp[i][1]);
	for (i = 0; i < n; i++) {
		got[i] = drain(sp[i][0]);
		close(sp[i][0]);
		if (got[i] != child_bytes(i))
			bad = 1;
		else
			sum += got[i];
	}
	for (i = 0; i < n; i++) {
		int st;

		if (waitpid(pid[i], &st, 0) != pid[i] || !WIFEXITED(st) ||
		    WEXITSTATUS(st) != 0)
			bad = 1;
	}
	printf("parent pid=%d warm_bytes=%d\n", (int)getpid(), WARM_BYTES);
	for (i = 0; i < n; i++)
		printf("child pid=%d index=%d bytes=%ld\n", (int)pid[i], i,
		       got[i]);
	printf("parent_in=%ld\n", sum);
	return bad;
}
