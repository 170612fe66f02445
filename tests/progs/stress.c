/*
 * stress - many threads, many sockets, a million calls of mixed sizes and
 * kinds, every byte counted by the peers.
 *
 *   stress [THREADS [SOCKETS [CALLS [SEED]]]]   (defaults 8 64 1000000 1)
 *
 * Each of THREADS sender threads owns SOCKETS connections, alternately a
 * unix stream socketpair and a TCP connection over 127.0.0.1, and makes
 * CALLS / THREADS data calls on them, round-robin, each of a random size
 * (log-uniform from 1 byte to 32 KiB, and one call in 64 of 64 KiB) through
 * a random one of write, send, sendto, writev and sendmsg.  Short writes
 * are simply counted as what they are.  A receiver thread per sender polls
 * the other ends and drains them with read, recv, recvfrom, readv and
 * recvmsg in turn, counting per fd.  Nothing is closed: the exit record
 * lists every fd.
 *
 * Prints one line per connection
 *   conn T I kind=unix|tcp out_fd=A in_fd=B bytes=N out_calls=C in_calls=D
 * (bytes as the sender's calls returned them, checked equal to what the
 * receiver got), then
 *   total_bytes=N total_out_calls=C total_in_calls=D listen_fd=L
 * Exits 0 when every connection's received bytes equal its sent bytes.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#define MAX_THREADS 64
#define MAX_SOCKETS 256
#define BIG (64 * 1024)

struct conn {
	int out_fd, in_fd;
	int tcp;
	uint64_t sent, out_calls; /* the sender's */
	uint64_t got, in_calls;   /* the receiver's */
};

struct worker {
	int idx, nsock;
	long calls;
	uint64_t seed;
	struct conn *c;
	int done;        /* atomic: the sender has finished */
	uint64_t sent;   /* atomic: total, once done */
	int failed;
};

static int listen_fd = -1;
static struct sockaddr_in listen_addr;
static pthread_mutex_t accept_lock = PTHREAD_MUTEX_INITIALIZER;

static uint64_t next_rand(uint64_t *s)
{
	/* xorshift64* */
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ull;
}

static size_t pick_size(uint64_t *s)
{
	uint64_t r = next_rand(s);

	if (r % 64 == 0)
		return BIG;
	/* log-uniform in [1, 32767]: [2^e, 2^(e+1)) for e in 0..14 */
	return ((size_t)1 << ((r >> 8) % 15)) +
	       (size_t)((r >> 16) % ((1u << ((r >> 8) % 15)) + 0u));
}

/* A TCP connection through the shared listener: connect, then accept (under
 * a lock, so each thread accepts its own connection). */
static int tcp_pair(int fds[2])
{
	int one = 1, c, a;

	c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c < 0)
		return -1;
	pthread_mutex_lock(&accept_lock);
	if (connect(c, (struct sockaddr *)&listen_addr, sizeof(listen_addr)) ||
	    (a = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC)) < 0) {
		pthread_mutex_unlock(&accept_lock);
		return -1;
	}
	pthread_mutex_unlock(&accept_lock);
	setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	fds[0] = c;
	fds[1] = a;
	return 0;
}

static ssize_t do_send(int fd, const char *buf, size_t n, unsigned how)
{
	struct iovec iov[2];
	struct msghdr mh;
	size_t half = n / 2;

	switch (how % 5) {
	case 0:
		return write(fd, buf, n);
	case 1:
		return send(fd, buf, n, 0);
	case 2:
		return sendto(fd, buf, n, 0, NULL, 0);
	case 3:
		iov[0].iov_base = (void *)buf;
		iov[0].iov_len = half;
		iov[1].iov_base = (void *)(buf + half);
		iov[1].iov_len = n - half;
		return writev(fd, iov, 2);
	default:
		memset(&mh, 0, sizeof(mh));
		iov[0].iov_base = (void *)buf;
		iov[0].iov_len = n;
		mh.msg_iov = iov;
		mh.msg_iovlen = 1;
		return sendmsg(fd, &mh, 0);
	}
}

static ssize_t do_recv(int fd, char *buf, size_t n, unsigned how)
{
	struct iovec iov[2];
	struct msghdr mh;
	size_t half = n / 2;

	switch (how % 5) {
	case 0:
		return read(fd, buf, n);
	case 1:
		return recv(fd, buf, n, 0);
	case 2:
		return recvfrom(fd, buf, n, 0, NULL, NULL);
	case 3:
		iov[0].iov_base = buf;
		iov[0].iov_len = half;
		iov[1].iov_base = buf + half;
		iov[1].iov_len = n - half;
		return readv(fd, iov, 2);
	default:
		memset(&mh, 0, sizeof(mh));
		iov[0].iov_base = buf;
		iov[0].iov_len = n;
		mh.msg_iov = iov;
		mh.msg_iovlen = 1;
		return recvmsg(fd, &mh, 0);
	}
}

static void *sender(void *arg)
{
	struct worker *w = arg;
	static char buf[BIG];
	uint64_t s = w->seed, total = 0;
	long k;

	for (k = 0; k < w->calls; k++) {
		struct conn *c = &w->c[k % w->nsock];
		size_t n = pick_size(&s);
		ssize_t r = do_send(c->out_fd, buf, n, (unsigned)(next_rand(&s) >> 7));

		c->out_calls++;
		if (r < 0) {
			if (errno == EINTR)
				continue;
			perror("send");
			w->failed = 1;
			break;
		}
		c->sent += (uint64_t)r;
		total += (uint64_t)r;
	}
	__atomic_store_n(&w->sent, total, __ATOMIC_RELEASE);
	__atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void *receiver(void *arg)
{
	struct worker *w = arg;
	struct pollfd pfd[MAX_SOCKETS];
	char *buf = malloc(BIG);
	uint64_t got = 0, s = w->seed ^ 0x5555;
	int i;

	if (!buf) {
		w->failed = 1;
		return NULL;
	}
	for (i = 0; i < w->nsock; i++) {
		pfd[i].fd = w->c[i].in_fd;
		pfd[i].events = POLLIN;
	}
	for (;;) {
		int n;

		if (__atomic_load_n(&w->done, __ATOMIC_ACQUIRE) &&
		    got == __atomic_load_n(&w->sent, __ATOMIC_ACQUIRE))
			break;
		n = poll(pfd, (nfds_t)w->nsock, 100);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			perror("poll");
			w->failed = 1;
			break;
		}
		for (i = 0; i < w->nsock && n > 0; i++) {
			struct conn *c = &w->c[i];
			size_t want;
			ssize_t r;

			if (!(pfd[i].revents & POLLIN))
				continue;
			n--;
			want = 1 + (size_t)(next_rand(&s) % BIG);
			r = do_recv(c->in_fd, buf, want,
				    (unsigned)(next_rand(&s) >> 9));
			c->in_calls++;
			if (r <= 0) {
				if (r < 0 && errno == EINTR)
					continue;
				fprintf(stderr, "recv on fd %d: %zd %s\n",
					c->in_fd, r, strerror(errno));
				w->failed = 1;
				free(buf);
				return NULL;
			}
			c->got += (uint64_t)r;
			got += (uint64_t)r;
		}
	}
	free(buf);
	return NULL;
}

static void raise_nofile(int need)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < (rlim_t)need &&
	    rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

int main(int argc, char **argv)
{
	int nthreads = argc > 1 ? atoi(argv[1]) : 8;
	int nsock = argc > 2 ? atoi(argv[2]) : 64;
	long calls = argc > 3 ? atol(argv[3]) : 1000000;
	uint64_t seed = argc > 4 ? strtoull(argv[4], NULL, 10) : 1;
	static struct worker w[MAX_THREADS];
	pthread_t st[MAX_THREADS], rt[MAX_THREADS];
	uint64_t total = 0, out_calls = 0, in_calls = 0;
	socklen_t alen = sizeof(listen_addr);
	int t, i, bad = 0;

	if (nthreads < 1 || nthreads > MAX_THREADS || nsock < 1 ||
	    nsock > MAX_SOCKETS || calls < nthreads) {
		fprintf(stderr, "usage: stress [THREADS<=%d [SOCKETS<=%d "
				"[CALLS [SEED]]]]\n",
			MAX_THREADS, MAX_SOCKETS);
		return 2;
	}
	raise_nofile(2 * nthreads * nsock + 64);
	listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	memset(&listen_addr, 0, sizeof(listen_addr));
	listen_addr.sin_family = AF_INET;
	listen_addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (listen_fd < 0 ||
	    bind(listen_fd, (struct sockaddr *)&listen_addr, alen) ||
	    getsockname(listen_fd, (struct sockaddr *)&listen_addr, &alen) ||
	    listen(listen_fd, 1024)) {
		perror("listen");
		return 2;
	}
	for (t = 0; t < nthreads; t++) {
		w[t].idx = t;
		w[t].nsock = nsock;
		w[t].calls = calls / nthreads + (t < calls % nthreads);
		w[t].seed = seed * 0x9E3779B97F4A7C15ull + (uint64_t)t + 1;
		w[t].c = calloc((size_t)nsock, sizeof(struct conn));
		if (!w[t].c)
			return 2;
		for (i = 0; i < nsock; i++) {
			int fds[2];

			if (i % 2 == 0) {
				if (socketpair(AF_UNIX,
					       SOCK_STREAM | SOCK_CLOEXEC, 0,
					       fds)) {
					perror("socketpair");
					return 2;
				}
			} else if (tcp_pair(fds)) {
				perror("tcp");
				return 2;
			}
			w[t].c[i].out_fd = fds[0];
			w[t].c[i].in_fd = fds[1];
			w[t].c[i].tcp = i % 2;
		}
	}
	for (t = 0; t < nthreads; t++) {
		if (pthread_create(&rt[t], NULL, receiver, &w[t]) ||
		    pthread_create(&st[t], NULL, sender, &w[t])) {
			fprintf(stderr, "pthread_create failed\n");
			return 2;
		}
	}
	for (t = 0; t < nthreads; t++) {
		pthread_join(st[t], NULL);
		pthread_join(rt[t], NULL);
		bad |= w[t].failed;
	}
	for (t = 0; t < nthreads; t++) {
		for (i = 0; i < nsock; i++) {
			struct conn *c = &w[t].c[i];

			printf("conn %d %d kind=%s out_fd=%d in_fd=%d bytes=%llu "
			       "out_calls=%llu in_calls=%llu\n",
			       t, i, c->tcp ? "tcp" : "unix", c->out_fd,
			       c->in_fd, (unsigned long long)c->sent,
			       (unsigned long long)c->out_calls,
			       (unsigned long long)c->in_calls);
			if (c->got != c->sent) {
				fprintf(stderr, "conn %d %d: sent %llu got %llu\n",
					t, i, (unsigned long long)c->sent,
					(unsigned long long)c->got);
				bad = 1;
			}
			total += c->sent;
			out_calls += c->out_calls;
			in_calls += c->in_calls;
		}
	}
	printf("total_bytes=%llu total_out_calls=%llu total_in_calls=%llu "
	       "listen_fd=%d\n",
	       (unsigned long long)total, (unsigned long long)out_calls,
	       (unsigned long long)in_calls, listen_fd);
	fflush(stdout);
	return bad;
}
