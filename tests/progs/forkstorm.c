/*
 * forkstorm - many forks while other threads keep moving data.
 *
 *   forkstorm [CHILDREN]       (default 100, at most 1000)
 *
 * Two pump threads move data through a socketpair of their own (one
 * writing, one reading, both inside wrapped calls most of the time) for
 * the whole run.  Meanwhile the main thread forks CHILDREN children, one
 * after the other, each with a fresh socketpair to the parent.  Child i
 * sends child_bytes(i) bytes to the parent in calls of up to 1000 bytes,
 * also writes 1 byte on the inherited pump socket it never saw opened (so
 * that fd is classified afresh in the child), and exits normally.  After
 * the last fork the parent reads every child's socket to EOF, stops the
 * pumps and reaps the children.  Prints
 *   parent pid=P pump_out_fd=A pump_in_fd=B pump_bytes=N
 *   child pid=C index=I fd=F child_fd=G bytes=B   (one line per child;
 *                      F the parent's end, G the child's)
 *   parent_in=SUM
 * and exits 0 when every child's bytes arrived and every child exited 0.
 * A child whose socket stays silent for 10 s, or that has not ended 10 s
 * after the parent starts waiting for it, is killed and reported
 * ("child PID hung").  FORK_SETTLE_MS=N in the environment: wait N ms
 * more before the first fork.
 */
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_CHILDREN 1000
#define HANG_MS 10000

static int pump[2];
static int stop;                  /* atomic */
static unsigned long long pumped; /* bytes the writer's calls moved */
static unsigned long long drained; /* both atomic */

static long child_bytes(int i)
{
	return 1000L + 37L * i + (i % 7) * 1001L;
}

static void *pump_writer(void *arg)
{
	char buf[1500];

	(void)arg;
	memset(buf, 'p', sizeof(buf));
	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
		ssize_t w = send(pump[0], buf, sizeof(buf), 0);

		if (w > 0)
			__atomic_add_fetch(&pumped, (unsigned long long)w,
					   __ATOMIC_RELEASE);
	}
	shutdown(pump[0], SHUT_WR);
	return NULL;
}

static void *pump_reader(void *arg)
{
	char buf[4096];
	ssize_t r;

	(void)arg;
	while ((r = recv(pump[1], buf, sizeof(buf), 0)) > 0)
		__atomic_add_fetch(&drained, (unsigned long long)r,
				   __ATOMIC_RELEASE);
	return NULL;
}

static void child(int i, int fd)
{
	char buf[1000];
	long left = child_bytes(i);

	memset(buf, 'c', sizeof(buf));
	while (left > 0) {
		ssize_t w = write(fd, buf,
				  (size_t)(left < 1000 ? left : 1000));

		if (w <= 0)
			_exit(3);
		left -= w;
	}
	close(fd);
	/* The inherited pump socket, never opened in this process: exactly
	 * one byte on it, which the parent's reader thread gets. */
	if (send(pump[0], "x", 1, 0) != 1)
		_exit(4);
	exit(0);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 100;
	static int fds[MAX_CHILDREN];
	static pid_t pids[MAX_CHILDREN];
	static int cfds[MAX_CHILDREN];
	pthread_t wt, rt;
	long long sum = 0;
	int i, bad = 0;

	if (n < 1 || n > MAX_CHILDREN)
		return 2;
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, pump))
		return 2;
	if (pthread_create(&rt, NULL, pump_reader, NULL) ||
	    pthread_create(&wt, NULL, pump_writer, NULL))
		return 2;
	/* Traffic first, then forks: also, no thread is still starting up
	 * (a sanitizer's allocator, unlike glibc's malloc, may be held by a
	 * starting thread at fork and then stay locked in the child). */
	while (!__atomic_load_n(&drained, __ATOMIC_ACQUIRE))
		sched_yield();
	/* FORK_SETTLE_MS: also let the preload's own thread get past its
	 * start (tests/stress/run.sh, under ASan only: see there) */
	if (getenv("FORK_SETTLE_MS"))
		usleep((useconds_t)(atol(getenv("FORK_SETTLE_MS")) * 1000));
	for (i = 0; i < n; i++) {
		int sp[2];

		if (socketpair(AF_UNIX, SOCK_STREAM, 0, sp))
			return 2;
		fflush(stdout);
		pids[i] = fork();
		if (pids[i] < 0) {
			perror("fork");
			return 2;
		}
		if (pids[i] == 0) {
			close(sp[0]);
			child(i, sp[1]);
		}
		close(sp[1]);
		fds[i] = sp[0];
		cfds[i] = sp[1];
	}
	for (i = 0; i < n; i++) {
		char buf[4096];
		long got = 0;
		ssize_t r;

		for (;;) {
			struct pollfd p = { .fd = fds[i], .events = POLLIN };

			/* a child silent for HANG_MS is hung: killed, named */
			if (poll(&p, 1, HANG_MS) == 0) {
				fprintf(stderr, "child %d hung\n", (int)pids[i]);
				kill(pids[i], SIGKILL);
				break;
			}
			r = read(fds[i], buf, sizeof(buf));
			if (r <= 0)
				break;
			got += r;
		}
		if (got != child_bytes(i)) {
			fprintf(stderr, "child %d: got %ld of %ld\n", i, got,
				child_bytes(i));
			bad = 1;
		}
		sum += got;
	}
	for (i = 0; i < n; i++) {
		int st;

		int ms = 0;
		pid_t r;

		while ((r = waitpid(pids[i], &st, WNOHANG)) == 0 && ms < HANG_MS) {
			usleep(2000);
			ms += 2;
		}
		if (r == 0) { /* e.g. stuck in its exit: killed, named */
			fprintf(stderr, "child %d hung\n", (int)pids[i]);
			kill(pids[i], SIGKILL);
			r = waitpid(pids[i], &st, 0);
		}
		if (r != pids[i] || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			fprintf(stderr, "child %d: status %d\n", i, st);
			bad = 1;
		}
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	pthread_join(wt, NULL);
	pthread_join(rt, NULL);
	if (drained != pumped + (unsigned long long)n) {
		fprintf(stderr, "pump: wrote %llu + %d, read %llu\n", pumped, n,
			drained);
		bad = 1;
	}
	printf("parent pid=%d pump_out_fd=%d pump_in_fd=%d pump_bytes=%llu\n",
	       (int)getpid(), pump[0], pump[1], pumped);
	for (i = 0; i < n; i++)
		printf("child pid=%d index=%d fd=%d child_fd=%d bytes=%ld\n",
		       (int)pids[i], i, fds[i], cfds[i], child_bytes(i));
	printf("parent_in=%lld\n", sum);
	for (i = 0; i < n; i++)
		close(fds[i]);
	return bad;
}
