/*
 * forkblock - fork while other threads are inside wrapped calls.
 *
 *   forkblock [FORKS]          (default 20)
 *
 * Before forking, three threads block inside wrapped calls and stay there:
 * one in recv() on a socketpair nobody writes to yet, one in send() on a
 * socketpair whose buffer is full, one in accept() on a TCP listener; a
 * fourth opens, uses and closes socketpairs as fast as it can (close
 * records being queued while fork happens; a pause of 200 us per round
 * keeps the log small).  The main thread then forks
 * FORKS children.  Each child moves CHILD_BYTES through a new socketpair,
 * forks a grandchild that does the same with GRAND_BYTES, waits for it and
 * exits normally; a child that takes more than 10 s, or a grandchild
 * more than 5 s, is killed and reported as hung (a deadlock in it).
 * FORK_SETTLE_MS=N in the environment makes each child wait N ms
 * before forking its grandchild (tests/stress/run.sh, under ASan only:
 * see there).  At the end the
 * parent releases its three blocked threads (sends to the first, drains
 * the second, connects to the third) and joins them all.  Prints
 *   grandchild pid=G          (printed by its child)
 *   child pid=C status=S
 *   blocked_recv_bytes=N blocked_send_bytes=N churn_rounds=N
 *   recv_fd=F wake_fd=W      (the blocked recv's fd, and its peer)
 * and exits 0 when no process hung and all bytes arrived.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CHILD_BYTES 5000
#define GRAND_BYTES 3000
#define WAKE_BYTES 100
#define HANG_MS 10000

static int rpair[2], spair[2], lfd;
static struct sockaddr_in laddr;
static long recv_got, send_done, churn_rounds; /* send_done: atomic */
static int stop_churn;
static int in_calls; /* threads that reached their blocking call */

static void *blocked_recv(void *arg)
{
	char buf[WAKE_BYTES];
	long got = 0;

	(void)arg;
	__atomic_add_fetch(&in_calls, 1, __ATOMIC_ACQ_REL);
	while (got < WAKE_BYTES) {
		ssize_t r = recv(rpair[1], buf, sizeof(buf), 0);

		if (r <= 0)
			break;
		got += r;
	}
	recv_got = got;
	return NULL;
}

static void *blocked_send(void *arg)
{
	char buf[4096];

	(void)arg;
	memset(buf, 's', sizeof(buf));
	__atomic_add_fetch(&in_calls, 1, __ATOMIC_ACQ_REL);
	/* The buffer is full: this blocks until the parent drains. */
	if (send(spair[0], buf, sizeof(buf), 0) == (ssize_t)sizeof(buf))
		__atomic_store_n(&send_done, (long)sizeof(buf), __ATOMIC_RELEASE);
	return NULL;
}

static void *blocked_accept(void *arg)
{
	int c;

	(void)arg;
	__atomic_add_fetch(&in_calls, 1, __ATOMIC_ACQ_REL);
	c = accept(lfd, NULL, NULL);
	if (c >= 0)
		close(c);
	return NULL;
}

static void *churn(void *arg)
{
	char buf[256];

	(void)arg;
	memset(buf, 'z', sizeof(buf));
	while (!__atomic_load_n(&stop_churn, __ATOMIC_ACQUIRE)) {
		int sp[2];

		if (socketpair(AF_UNIX, SOCK_STREAM, 0, sp))
			break;
		if (write(sp[0], buf, sizeof(buf)) > 0)
			(void)read(sp[1], buf, sizeof(buf));
		close(sp[0]);
		close(sp[1]);
		churn_rounds++;
		/* a few thousand closes a second: enough to have some in
		 * flight at every fork, not so many that the log balloons */
		usleep(200);
	}
	return NULL;
}

static int move(long n)
{
	char buf[1000];
	long sent = 0, got = 0;
	int sp[2];

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sp))
		return -1;
	memset(buf, 'm', sizeof(buf));
	while (sent < n) {
		ssize_t w = send(sp[0], buf,
				 (size_t)(n - sent < 1000 ? n - sent : 1000), 0);

		if (w <= 0)
			return -1;
		sent += w;
		while (got < sent) {
			ssize_t r = recv(sp[1], buf, sizeof(buf), 0);

			if (r <= 0)
				return -1;
			got += r;
		}
	}
	close(sp[0]);
	close(sp[1]);
	return 0;
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* waitpid with a deadline of MS: the status, or -1 after killing a hung
 * pid. */
static int wait_bounded(pid_t pid, long ms)
{
	long until = now_ms() + ms;
	int st;

	for (;;) {
		pid_t r = waitpid(pid, &st, WNOHANG);

		if (r == pid)
			return st;
		if (r < 0 && errno != EINTR)
			return -2;
		if (now_ms() > until) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			return -1;
		}
		usleep(2000);
	}
}

static void child(long settle_ms)
{
	pid_t g;
	int st;

	if (move(CHILD_BYTES))
		_exit(3);
	fflush(stdout);
	if (settle_ms > 0)
		usleep((useconds_t)(settle_ms * 1000));
	g = fork();
	if (g < 0)
		_exit(4);
	if (g == 0) {
		if (move(GRAND_BYTES))
			_exit(3);
		exit(0);
	}
	/* half the parent's deadline: a hung grandchild is killed and named
	 * here, not left behind when the parent kills this child */
	st = wait_bounded(g, HANG_MS / 2);
	if (st == -1) {
		fprintf(stderr, "grandchild %d hung\n", (int)g);
		_exit(5);
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		_exit(6);
	printf("grandchild pid=%d\n", (int)g);
	exit(0);
}

int main(int argc, char **argv)
{
	int forks = argc > 1 ? atoi(argv[1]) : 20;
	const char *settle = getenv("FORK_SETTLE_MS");
	long settle_ms = settle ? atol(settle) : 0;
	pthread_t t[4];
	char buf[65536];
	socklen_t alen = sizeof(laddr);
	int i, bad = 0, c, fl;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, rpair) ||
	    socketpair(AF_UNIX, SOCK_STREAM, 0, spair))
		return 2;
	/* Fill spair[0]'s buffer, without blocking. */
	fl = fcntl(spair[0], F_GETFL);
	fcntl(spair[0], F_SETFL, fl | O_NONBLOCK);
	memset(buf, 'f', sizeof(buf));
	while (send(spair[0], buf, sizeof(buf), 0) > 0)
		;
	while (send(spair[0], buf, 1, 0) > 0)
		;
	fcntl(spair[0], F_SETFL, fl);
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	memset(&laddr, 0, sizeof(laddr));
	laddr.sin_family = AF_INET;
	laddr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&laddr, alen) ||
	    getsockname(lfd, (struct sockaddr *)&laddr, &alen) || listen(lfd, 4))
		return 2;
	if (pthread_create(&t[0], NULL, blocked_recv, NULL) ||
	    pthread_create(&t[1], NULL, blocked_send, NULL) ||
	    pthread_create(&t[2], NULL, blocked_accept, NULL) ||
	    pthread_create(&t[3], NULL, churn, NULL))
		return 2;
	while (__atomic_load_n(&in_calls, __ATOMIC_ACQUIRE) < 3)
		usleep(1000);
	usleep(50000); /* let them get into the kernel */

	for (i = 0; i < forks; i++) {
		pid_t pid;
		int st;

		fflush(stdout);
		pid = fork();
		if (pid < 0)
			return 2;
		if (pid == 0)
			child(settle_ms);
		st = wait_bounded(pid, HANG_MS);
		printf("child pid=%d status=%d\n", (int)pid, st);
		if (st == -1)
			fprintf(stderr, "child %d hung\n", (int)pid);
		if (st < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
			bad = 1;
	}

	/* Release the blocked threads. */
	memset(buf, 'w', WAKE_BYTES);
	if (send(rpair[0], buf, WAKE_BYTES, 0) != WAKE_BYTES)
		bad = 1;
	fcntl(spair[1], F_SETFL, fcntl(spair[1], F_GETFL) | O_NONBLOCK);
	{
		long until = now_ms() + HANG_MS;

		while (!__atomic_load_n(&send_done, __ATOMIC_ACQUIRE) &&
		       now_ms() < until) {
			if (recv(spair[1], buf, sizeof(buf), 0) < 0)
				usleep(1000);
		}
	}
	c = socket(AF_INET, SOCK_STREAM, 0);
	if (c < 0 || connect(c, (struct sockaddr *)&laddr, sizeof(laddr)))
		bad = 1;
	__atomic_store_n(&stop_churn, 1, __ATOMIC_RELEASE);
	for (i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	close(c);
	if (recv_got != WAKE_BYTES || send_done != 4096)
		bad = 1;
	printf("blocked_recv_bytes=%ld blocked_send_bytes=%ld churn_rounds=%ld\n",
	       recv_got, send_done, churn_rounds);
	printf("recv_fd=%d wake_fd=%d\n", rpair[1], rpair[0]);
	return bad;
}
