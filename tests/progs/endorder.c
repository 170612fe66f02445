/*
 * endorder N MB HOW - N times: fork a child that moves 32 KiB over a unix
 * socketpair (a tracked fd: its ticker starts), writes MB megabytes of
 * fresh memory and ends with exit(0) (HOW "exit") or _exit(0) ("_exit");
 * the parent holds the other end of a second socketpair of the child's
 * and sees, with poll, both its end of file and the child's SIGCHLD
 * (signalfd).  Prints
 *   RESULT median_gap_us=G max_gap_us=M n=N
 * where a gap is the time from the end of file to SIGCHLD.  Without a
 * preload they come together (tens of microseconds): a process's fds close
 * after its memory is torn down, then its parent is told.  Exit status 2
 * when a child does not exit 0.
 */
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void child(size_t mb, int use_exit)
{
	int d[2], k;
	char b[4096];
	char *m;

	memset(b, 'x', sizeof(b));
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, d) != 0)
		_exit(3);
	for (k = 0; k < 8; k++)
		if (write(d[0], b, sizeof(b)) != (ssize_t)sizeof(b) ||
		    read(d[1], b, sizeof(b)) <= 0)
			_exit(3);
	m = mmap(NULL, mb << 20, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m != MAP_FAILED)
		memset(m, 1, mb << 20);
	usleep(20000);
	if (use_exit)
		exit(0);
	_exit(0);
}

int main(int argc, char **argv)
{
	int n, i, sfd;
	size_t mb;
	int use_exit;
	double *gap;
	sigset_t s;

	if (argc != 4 || (n = atoi(argv[1])) <= 0) {
		fprintf(stderr, "usage: endorder N MB exit|_exit\n");
		return 2;
	}
	mb = (size_t)atoi(argv[2]);
	use_exit = !strcmp(argv[3], "exit");
	gap = calloc((size_t)n, sizeof(*gap));
	sigemptyset(&s);
	sigaddset(&s, SIGCHLD);
	sigprocmask(SIG_BLOCK, &s, NULL);
	sfd = signalfd(-1, &s, 0);
	if (!gap || sfd < 0) {
		perror("endorder");
		return 2;
	}
	for (i = 0; i < n; i++) {
		int sp[2], st;
		double te = 0, ts = 0;
		struct pollfd pf[2];
		pid_t p;

		if (socketpair(AF_UNIX, SOCK_STREAM, 0, sp) != 0 ||
		    (p = fork()) < 0) {
			perror("endorder");
			return 2;
		}
		if (p == 0) {
			close(sp[0]);
			child(mb, use_exit);
		}
		close(sp[1]);
		pf[0].fd = sp[0];
		pf[0].events = POLLIN;
		pf[1].fd = sfd;
		pf[1].events = POLLIN;
		while (!te || !ts) {
			double t;

			if (poll(pf, 2, -1) < 0)
				continue;
			t = now_us();
			if (!te && pf[0].revents) {
				te = t;
				pf[0].fd = -1;
			}
			if (!ts && pf[1].revents) {
				struct signalfd_siginfo si;

				if (read(sfd, &si, sizeof(si)) > 0)
					ts = t;
				pf[1].fd = -1;
			}
		}
		if (waitpid(p, &st, 0) != p || !WIFEXITED(st) ||
		    WEXITSTATUS(st) != 0) {
			fprintf(stderr, "endorder: a child ended with %d\n",
				st);
			return 2;
		}
		close(sp[0]);
		gap[i] = ts - te;
	}
	qsort(gap, (size_t)n, sizeof(*gap), cmp);
	printf("RESULT median_gap_us=%.0f max_gap_us=%.0f n=%d\n", gap[n / 2],
	       gap[n - 1], n);
	return 0;
}
