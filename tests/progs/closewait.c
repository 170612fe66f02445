/*
 * closewait - a close waits for the ticker's copy of the fd for 50 ms at
 * most, whatever interrupts the wait.  Run with the log on stderr, fd 2 a
 * FIFO nobody reads: it fills the FIFO, moves bytes on a TCP connection so
 * that the ticker's next record blocks in its write to fd 2 (holding a
 * copy of it), then times close(2) and dup2(d, 2), and close(2) again with
 * SIGALRM every 2 ms.  Prints "close_ms=A dup2_ms=B signals_close_ms=C";
 * exits 3 when the last close had not returned after 5 s of signals.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <dirent.h>
#include <signal.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static volatile long sigs;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Threads of this process other than the caller blocked in write or
 * writev now: the proof that the library's write to fd 2 is stuck (a
 * library that wrote nothing would make the test pass for nothing). */
static int stuck_writers(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	char path[300], line[64];
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d))) {
		FILE *f;
		long nr;

		if (e->d_name[0] == '.' || atol(e->d_name) == (long)gettid())
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/syscall",
			 e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(line, sizeof(line), f)) {
			nr = atol(line);
			n += nr == SYS_write || nr == SYS_writev;
		}
		fclose(f);
	}
	closedir(d);
	return n;
}

static void on_alarm(int sig)
{
	(void)sig;
	if (++sigs == 2500) {
		static const char m[] = "close(2) not back after 5 s of signals\n";

		(void)write(1, m, sizeof(m) - 1);
		_exit(3);
	}
}

int main(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t l = sizeof(a);
	struct sigaction sa;
	struct itimerval it = { { 0, 2000 }, { 0, 2000 } };
	char buf[4096];
	int ls, c, s, f, d, writers;
	double t, close_ms, dup2_ms;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ls = socket(AF_INET, SOCK_STREAM, 0);
	if (bind(ls, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(ls, 1) ||
	    getsockname(ls, (struct sockaddr *)&a, &l) != 0)
		return 1;
	c = socket(AF_INET, SOCK_STREAM, 0);
	if (connect(c, (struct sockaddr *)&a, sizeof(a)) != 0)
		return 1;
	s = accept(ls, NULL, NULL);
	if (write(c, "x", 1) != 1 || read(s, buf, 1) != 1)
		return 1;
	/* Fill fd 2's FIFO through a file description of our own. */
	f = open("/proc/self/fd/2", O_WRONLY | O_NONBLOCK);
	if (f < 0)
		return 1;
	memset(buf, '.', sizeof(buf));
	while (write(f, buf, sizeof(buf)) > 0)
		;
	close(f);
	/* The ticker's next record now blocks in its write to fd 2. */
	sleep(2);
	writers = stuck_writers();
	d = dup(2);
	t = now();
	close(2);
	close_ms = (now() - t) * 1e3;
	t = now();
	dup2(d, 2);
	dup2_ms = (now() - t) * 1e3;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	t = now();
	close(2);
	printf("close_ms=%.0f dup2_ms=%.0f signals_close_ms=%.0f "
	       "stuck_writers=%d\n",
	       close_ms, dup2_ms, (now() - t) * 1e3, writers);
	return 0;
}
