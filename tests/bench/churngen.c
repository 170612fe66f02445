/*
 * churngen.c - the churn workloads of `make bench` (tests/bench/churn.sh).
 *
 *   churngen churn SECONDS     short TCP connections on loopback, both ends
 *                              in this process: a client thread connects,
 *                              sends a 64-byte request, reads a 256-byte
 *                              reply and closes; the server (main thread)
 *                              accepts, reads, replies, closes.  As fast as
 *                              the machine allows, for SECONDS.
 *   churngen forks SECONDS     the same churn in the background, paced at
 *                              FORK_CHURN_RATE connections/s (10,000 close
 *                              records/s: a steady load, not a race for
 *                              the CPUs), and the main thread forking
 *                              children that _exit(0) at once, waiting for
 *                              each: a pre-fork server's cost, under churn.
 *
 * Prints one line: RESULT workload=... conns=N conns_per_s=R
 * [forks=F forks_per_s=S] ticker_cpu_s=C cpu_s=P closes=K minflt=M
 * child_cpu_s=Q child_minflt=N, where ticker_cpu_s is the CPU time of the
 * preload's ticker thread (named "sockmeter"; 0 without the preload) and
 * cpu_s the whole process's (its children's not counted), both read after
 * a pause of DRAIN_WAIT seconds that lets the ticker write the records of
 * the last connections, closes counts the connection fds closed (two per
 * connection), minflt the process's page faults (each fork makes its
 * written pages copy-on-write again: the next write to each is a fault),
 * and child_* the forked children's CPU time and page faults, together.
 */
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fullio.h"

#define REQ		64
#define REPLY		256
#define DRAIN_WAIT	1.3
#define FORK_CHURN_RATE 5000.0 /* connections/s beside the forks */

static struct sockaddr_in addr;
static volatile int stop;
static volatile uint64_t client_conns;

static void die(const char *what)
{
	fprintf(stderr, "churngen: %s: %s\n", what, strerror(errno));
	exit(2);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *client(void *arg)
{
	double rate = *(double *)arg, t0 = now_s();
	char buf[REPLY];

	memset(buf, 'q', sizeof(buf));
	while (!stop) {
		int fd;

		/* Paced (rate > 0): never ahead of the schedule. */
		if (rate > 0 && (double)client_conns > (now_s() - t0) * rate) {
			struct timespec d = {0, 200000};

			nanosleep(&d, NULL);
			continue;
		}
		fd = socket(AF_INET, SOCK_STREAM, 0);

		if (fd < 0 ||
		    connect(fd, (struct sockaddr *)&addr, sizeof(addr)) != 0)
			die("connect");
		full_io(fd, buf, REQ, 1);
		full_io(fd, buf, REPLY, 0);
		close(fd);
		client_conns++;
	}
	return NULL;
}

/* The server: accept, read the request, reply, close, until stop. */
static void *server(void *arg)
{
	int l = *(int *)arg, last;
	char buf[REPLY];

	memset(buf, 'r', sizeof(buf));
	for (;;) {
		int fd = accept(l, NULL, NULL);

		if (fd < 0)
			die("accept");
		full_io(fd, buf, REQ, 0);
		last = buf[0] == 'L';
		memset(buf, 'r', sizeof(buf));
		full_io(fd, buf, REPLY, 1);
		close(fd);
		if (last)
			break;
	}
	return NULL;
}

static int listener(void)
{
	socklen_t len = sizeof(addr);
	int one = 1, l = socket(AF_INET, SOCK_STREAM, 0);

	if (l < 0)
		die("socket");
	setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	memset(&addr, 0, sizeof(addr));
	addr.sin_family = AF_INET;
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(l, (struct sockaddr *)&addr, sizeof(addr)) != 0 ||
	    listen(l, 512) != 0 ||
	    getsockname(l, (struct sockaddr *)&addr, &len) != 0)
		die("listen");
	return l;
}

/* CPU seconds of this process's thread named "sockmeter" (0 if none). */
static double ticker_cpu(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	double cpu = 0;

	if (!d)
		return 0;
	while ((e = readdir(d))) {
		char path[300], comm[32] = "";
		unsigned long long ns = 0;
		FILE *f;

		snprintf(path, sizeof(path), "/proc/self/task/%s/comm",
			 e->d_name);
		if (!(f = fopen(path, "r")))
			continue;
		if (!fgets(comm, sizeof(comm), f))
			comm[0] = '\0';
		fclose(f);
		if (strcmp(comm, "sockmeter\n") != 0)
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/schedstat",
			 e->d_name);
		if ((f = fopen(path, "r"))) {
			if (fscanf(f, "%llu", &ns) == 1)
				cpu += (double)ns / 1e9;
			fclose(f);
		}
	}
	closedir(d);
	return cpu;
}

int main(int argc, char **argv)
{
	pthread_t tc, ts;
	double secs, t0, t1, end, rate;
	uint64_t forks = 0, conns;
	struct rusage ru;
	int l, forking;
	struct timespec w = {1, (long)((DRAIN_WAIT - 1) * 1e9)};

	if (argc != 3 ||
	    (strcmp(argv[1], "churn") && strcmp(argv[1], "forks"))) {
		fprintf(stderr, "usage: churngen churn|forks SECONDS\n");
		return 2;
	}
	forking = !strcmp(argv[1], "forks");
	secs = atof(argv[2]);
	rate = forking ? FORK_CHURN_RATE : 0;
	l = listener();
	if (pthread_create(&ts, NULL, server, &l) != 0 ||
	    pthread_create(&tc, NULL, client, &rate) != 0)
		die("pthread_create");
	t0 = now_s();
	end = t0 + secs;
	if (forking) {
		while (now_s() < end) {
			pid_t p = fork();
			int st;

			if (p < 0)
				die("fork");
			if (p == 0)
				_exit(0);
			if (waitpid(p, &st, 0) != p)
				die("waitpid");
			/* A child that did not end as it should is not a
			 * fork made: the run fails. */
			if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
				fprintf(stderr, "churngen: a forked child "
						"ended with wait status %#x\n",
					(unsigned)st);
				exit(2);
			}
			forks++;
		}
	} else {
		while (now_s() < end) {
			struct timespec d = {0, 10000000};

			nanosleep(&d, NULL);
		}
	}
	stop = 1;
	pthread_join(tc, NULL);
	t1 = now_s();
	conns = client_conns;
	/* One last connection, marked, ends the server. */
	{
		int fd = socket(AF_INET, SOCK_STREAM, 0);
		char buf[REPLY];

		memset(buf, 'L', sizeof(buf));
		if (fd < 0 ||
		    connect(fd, (struct sockaddr *)&addr, sizeof(addr)) != 0)
			die("connect");
		full_io(fd, buf, REQ, 1);
		full_io(fd, buf, REPLY, 0);
		close(fd);
	}
	pthread_join(ts, NULL);
	conns++;
	close(l);
	nanosleep(&w, NULL);
	printf("RESULT workload=%s conns=%llu conns_per_s=%.1f", argv[1],
	       (unsigned long long)conns, (double)conns / (t1 - t0));
	if (forking)
		printf(" forks=%llu forks_per_s=%.1f",
		       (unsigned long long)forks, (double)forks / (t1 - t0));
	getrusage(RUSAGE_SELF, &ru);
	printf(" ticker_cpu_s=%.4f cpu_s=%.4f closes=%llu minflt=%ld",
	       ticker_cpu(),
	       (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
		       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6,
	       (unsigned long long)(2 * conns + 1), ru.ru_minflt);
	getrusage(RUSAGE_CHILDREN, &ru);
	printf(" child_cpu_s=%.4f child_minflt=%ld\n",
	       (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
		       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6,
	       ru.ru_minflt);
	return 0;
}
