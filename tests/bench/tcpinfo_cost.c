/*
 * tcpinfo_cost.c - what the tcp_info and names categories cost, for
 * `make bench` (tests/bench/tcpinfo.sh).
 *
 *   tcpinfo_cost direct N   the library's own functions, N calls each, on
 *                           real loopback TCP connections: one
 *                           tcpinfo_read (what a close adds), one
 *                           enrich_read_live (what each TCP fd listed in a
 *                           record adds to an interval), names_add into a
 *                           full table and names_find (a lookup, a peer).
 *                           Prints "RESULT read_ns=... live_ns=...
 *                           names_add_ns=... names_find_ns=...".
 *   tcpinfo_cost churn N    N loopback connections, each connected,
 *                           accepted, 1 byte each way, both ends closed
 *                           (4 closes of which 2 TCP connections, plus the
 *                           listener at the end).  Run under the preload
 *                           with tcp_info on and off.  Prints
 *                           "RESULT conn_ns=..." (ns per connection).
 */
#include "../../core/enrich.h"
#include "../../core/fdtab.h"
#include "../../core/names.h"
#include "../../core/tcpinfo.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int listener(struct sockaddr_in *a)
{
	socklen_t len = sizeof(*a);
	int l = socket(AF_INET, SOCK_STREAM, 0);

	memset(a, 0, sizeof(*a));
	a->sin_family = AF_INET;
	a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (l < 0 || bind(l, (struct sockaddr *)a, sizeof(*a)) ||
	    listen(l, 64) || getsockname(l, (struct sockaddr *)a, &len)) {
		perror("listen");
		exit(2);
	}
	return l;
}

static void pair(int l, const struct sockaddr_in *a, int *c, int *s)
{
	*c = socket(AF_INET, SOCK_STREAM, 0);
	if (*c < 0 || connect(*c, (const struct sockaddr *)a, sizeof(*a)) ||
	    (*s = accept(l, NULL, NULL)) < 0) {
		perror("connect");
		exit(2);
	}
}

static int direct(long n)
{
	static struct names t;
	struct sockaddr_in a;
	struct fdtab tab;
	struct summary_fd f;
	struct tcpinfo ti;
	struct fd_snapshot stale;
	struct fd_addr peer;
	const struct sockaddr *sa;
	char name[64];
	double t0, read_ns, live_ns, add_ns, find_ns;
	int l = listener(&a), c, s;
	uint64_t ns;
	long i;

	pair(l, &a, &c, &s);
	if (write(c, "x", 1) != 1 || read(s, name, 1) != 1)
		return 2;
	t0 = now_ns();
	for (i = 0; i < n; i++)
		tcpinfo_read(c, &ti);
	read_ns = (now_ns() - t0) / (double)n;

	if (fdtab_init(&tab, 1024))
		return 2;
	fdtab_open(&tab, c, KIND_TCP, 1, NULL, NULL, &stale);
	memset(&f, 0, sizeof(f));
	fdtab_snapshot(&tab, c, &f.s);
	t0 = now_ns();
	for (i = 0; i < n; i++)
		enrich_read_live(&tab, &f);
	live_ns = (now_ns() - t0) / (double)n;

	pthread_mutex_init(&t.lock, NULL);
	memset(&peer, 0, sizeof(peer));
	peer.u.in4.sin_family = AF_INET;
	peer.len = sizeof(peer.u.in4);
	sa = &peer.u.sa;
	t0 = now_ns();
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "host%ld.example.net", i);
		peer.u.in4.sin_addr.s_addr = htonl(0x0a000000u + (uint32_t)i);
		names_add(&t, name, &sa, 1, 1000);
	}
	add_ns = (now_ns() - t0) / (double)n;
	t0 = now_ns();
	for (i = 0; i < n; i++) {
		peer.u.in4.sin_addr.s_addr = htonl(0x0a000000u + (uint32_t)i);
		names_find(&t, &peer, name, sizeof(name), &ns);
	}
	find_ns = (now_ns() - t0) / (double)n;
	printf("RESULT read_ns=%.0f live_ns=%.0f names_add_ns=%.0f "
	       "names_find_ns=%.0f\n",
	       read_ns, live_ns, add_ns, find_ns);
	return 0;
}

static int churn(long n)
{
	struct sockaddr_in a;
	int l = listener(&a), c, s;
	double t0;
	char b;
	long i;

	t0 = now_ns();
	for (i = 0; i < n; i++) {
		pair(l, &a, &c, &s);
		if (write(c, "x", 1) != 1 || read(s, &b, 1) != 1 ||
		    write(s, "y", 1) != 1 || read(c, &b, 1) != 1)
			return 2;
		close(c);
		close(s);
	}
	printf("RESULT conn_ns=%.0f\n", (now_ns() - t0) / (double)n);
	close(l);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "direct") == 0)
		return direct(atol(argv[2]));
	if (argc == 3 && strcmp(argv[1], "churn") == 0)
		return churn(atol(argv[2]));
	fprintf(stderr, "usage: tcpinfo_cost direct|churn N\n");
	return 2;
}
