/*
 * leakrace - does the library ever hold an fd without close-on-exec, even
 * for a moment, that a fork()+exec() in another thread would inherit?
 *
 *   leakrace [ROUNDS]          (default 300)
 *
 * Each round forks a fresh worker process.  In the worker, thread B forks
 * non-stop; each of its children looks at its fds 3..255 (readlink and
 * fcntl(F_GETFD): async-signal-safe) and reports through its exit status
 * any fd without FD_CLOEXEC that the worker did not already have when it
 * started (whatever the caller passed down is not ours) - i.e. an fd that
 * an exec would have leaked.  Meanwhile thread A makes the worker's first
 * socket (a socketpair: the preload starts its ticker thread then) and
 * moves a few bytes, so every library action that runs "once per process"
 * runs while forks are happening.  Prints
 *   rounds=N forks=F leaks=L
 * and, for the first few leaks, "leak fd=N target=PATH"; exits 0 when
 * L is 0.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int report[2];  /* child -> worker: "fd target" of a leak */
static char baseline[256]; /* fds already open without close-on-exec */
static int stop;

static void check_child(void)
{
	char path[64], target[256], line[320];
	int fd, n, leaks = 0;

	for (fd = 3; fd < 256; fd++) {
		int fl = fcntl(fd, F_GETFD);
		ssize_t len;

		if (fl < 0 || (fl & FD_CLOEXEC) || baseline[fd])
			continue;
		n = snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		(void)n;
		len = readlink(path, target, sizeof(target) - 1);
		target[len > 0 ? len : 0] = '\0';
		n = snprintf(line, sizeof(line), "leak fd=%d target=%s\n", fd,
			     target);
		if (write(report[1], line, (size_t)n) < 0)
			break;
		leaks++;
	}
	_exit(leaks ? 42 : 0);
}

static void *forker(void *arg)
{
	long *forks = arg;

	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
		pid_t p = fork();
		int st;

		if (p == 0)
			check_child();
		if (p < 0)
			break;
		waitpid(p, &st, 0);
		__atomic_add_fetch(forks, 1, __ATOMIC_RELEASE);
		if (WIFEXITED(st) && WEXITSTATUS(st) == 42)
			__atomic_store_n(&stop, 2, __ATOMIC_RELEASE);
	}
	return NULL;
}

/* One worker: exit status 0, or 42 when a child saw a leak. */
static int worker(void)
{
	struct timespec ts = {0, 2000000};
	long forks = 0;
	pthread_t b;
	int sp[2];
	char buf[16];

	int fd;

	/* What the worker inherited (the caller's own fds) is not ours. */
	for (fd = 3; fd < 256; fd++) {
		int fl = fcntl(fd, F_GETFD);

		baseline[fd] = fl >= 0 && !(fl & FD_CLOEXEC);
	}
	if (pthread_create(&b, NULL, forker, &forks))
		return 2;
	while (__atomic_load_n(&forks, __ATOMIC_ACQUIRE) < 2 &&
	       !__atomic_load_n(&stop, __ATOMIC_ACQUIRE))
		sched_yield();
	/* close-on-exec, like everything of the program's own here */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) ||
	    write(sp[0], "leakrace", 8) != 8 || read(sp[1], buf, 8) != 8)
		return 2;
	nanosleep(&ts, NULL);
	if (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE))
		__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	pthread_join(b, NULL);
	printf("forks=%ld\n", forks);
	return __atomic_load_n(&stop, __ATOMIC_ACQUIRE) == 2 ? 42 : 0;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 300, r, leaks = 0;
	long forks = 0;

	setvbuf(stdout, NULL, _IONBF, 0);
	if (pipe2(report, O_CLOEXEC))
		return 2;
	for (r = 0; r < rounds; r++) {
		int out[2], st;
		char buf[512];
		ssize_t n;
		pid_t p;

		if (pipe(out))
			return 2;
		p = fork();
		if (p == 0) {
			dup2(out[1], 1);
			close(out[0]);
			close(out[1]);
			_exit(worker());
		}
		close(out[1]);
		while ((n = read(out[0], buf, sizeof(buf) - 1)) > 0) {
			buf[n] = '\0';
			forks += strtol(buf + 6, NULL, 10);
		}
		close(out[0]);
		waitpid(p, &st, 0);
		if (WIFEXITED(st) && WEXITSTATUS(st) == 42)
			leaks++;
		else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
			return 2;
	}
	/* what the children said about their leaks */
	{
		char buf[4096];
		ssize_t n;

		fcntl(report[0], F_SETFL, O_NONBLOCK);
		close(report[1]);
		n = read(report[0], buf, sizeof(buf) - 1);
		if (n > 0) {
			buf[n] = '\0';
			fputs(buf, stdout);
		}
	}
	printf("rounds=%d forks=%ld leaks=%d\n", rounds, forks, leaks);
	return leaks ? 1 : 0;
}
