/*
 * syscost.c - what one system call costs on this machine, for the churn
 * part of `make bench` (tests/bench/churn.sh): a metered TCP connection
 * adds system calls of its own (its local address, the kernel's view at
 * close), and their price, not the library's instructions, is most of
 * what it costs where a system call is dear (a virtual machine).
 *
 *   syscost [N]    N calls of each (default 200,000), five batches
 *
 * Prints one line: RESULT null_us=A getsockname_us=B tcp_info_us=C, each
 * the median of the five batches' mean time per call: getppid (the
 * cheapest call there is), getsockname on a connected TCP socket, and
 * getsockopt(TCP_INFO) on it.
 */
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define BATCHES 5

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median_us(double *v)
{
	qsort(v, BATCHES, sizeof(*v), cmp);
	return v[BATCHES / 2] * 1e6;
}

/* A connected TCP socket on loopback (the listener's end is left open). */
static int connected(void)
{
	struct sockaddr_in a;
	socklen_t len = sizeof(a);
	int l = socket(AF_INET, SOCK_STREAM, 0), c;

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) != 0 ||
	    listen(l, 1) != 0 || getsockname(l, (struct sockaddr *)&a, &len))
		return -1;
	c = socket(AF_INET, SOCK_STREAM, 0);
	if (c < 0 || connect(c, (struct sockaddr *)&a, sizeof(a)) != 0)
		return -1;
	return c;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 200000, i;
	double null_t[BATCHES], name_t[BATCHES], info_t[BATCHES], t;
	int fd = connected(), b;

	if (fd < 0 || n <= 0) {
		perror("syscost");
		return 2;
	}
	for (b = 0; b < BATCHES; b++) {
		struct sockaddr_storage ss;
		struct tcp_info ti;
		socklen_t len;

		t = now_s();
		for (i = 0; i < n; i++)
			syscall(SYS_getppid);
		null_t[b] = (now_s() - t) / (double)n;
		t = now_s();
		for (i = 0; i < n; i++) {
			len = sizeof(ss);
			getsockname(fd, (struct sockaddr *)&ss, &len);
		}
		name_t[b] = (now_s() - t) / (double)n;
		t = now_s();
		for (i = 0; i < n; i++) {
			len = sizeof(ti);
			getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len);
		}
		info_t[b] = (now_s() - t) / (double)n;
	}
	printf("RESULT null_us=%.3f getsockname_us=%.3f tcp_info_us=%.3f\n",
	       median_us(null_t), median_us(name_t), median_us(info_t));
	return 0;
}
