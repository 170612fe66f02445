/*
 * namestress - many threads resolve names and connect to what they got,
 * while the preload's ticker names the peers of their records: the names
 * table's writers (getaddrinfo, gethostbyname_r) and its reader at once,
 * for the sanitizers (tests/stress/run.sh).
 *
 *   namestress THREADS ITERATIONS
 *
 * Each thread, ITERATIONS times: getaddrinfo("localhost") (or
 * gethostbyname_r every other time), connect to a listener on 127.0.0.1,
 * send and receive one byte, close.  Prints "conns=N"; exits 0 when all
 * succeeded.
 */
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int port, iterations;
static int failures;

static void *echo_main(void *arg)
{
	int l = *(int *)arg;

	for (;;) {
		int c = accept(l, NULL, NULL);
		char b;

		if (c < 0)
			continue;
		if (read(c, &b, 1) == 1 && write(c, &b, 1) != 1)
			__atomic_fetch_add(&failures, 1, __ATOMIC_RELAXED);
		close(c);
	}
	return NULL;
}

static int resolve(int i, struct sockaddr_in *a)
{
	struct addrinfo hints, *res = NULL;
	struct hostent h, *hp = NULL;
	char buf[1024];
	int err;

	memset(a, 0, sizeof(*a));
	a->sin_family = AF_INET;
	a->sin_port = htons((uint16_t)port);
	if (i % 2) {
		if (gethostbyname_r("localhost", &h, buf, sizeof(buf), &hp,
				    &err) != 0 ||
		    !hp || hp->h_addrtype != AF_INET)
			return -1;
		memcpy(&a->sin_addr, hp->h_addr_list[0], 4);
		return 0;
	}
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_INET;
	hints.ai_socktype = SOCK_STREAM;
	if (getaddrinfo("localhost", NULL, &hints, &res) != 0 || !res)
		return -1;
	a->sin_addr = ((struct sockaddr_in *)res->ai_addr)->sin_addr;
	freeaddrinfo(res);
	return 0;
}

static void *worker(void *arg)
{
	int i;

	(void)arg;
	for (i = 0; i < iterations; i++) {
		struct sockaddr_in a;
		char b = 'x';
		int c;

		if (resolve(i, &a) != 0) {
			__atomic_fetch_add(&failures, 1, __ATOMIC_RELAXED);
			continue;
		}
		c = socket(AF_INET, SOCK_STREAM, 0);
		if (c < 0 || connect(c, (struct sockaddr *)&a, sizeof(a)) ||
		    write(c, &b, 1) != 1 || read(c, &b, 1) != 1)
			__atomic_fetch_add(&failures, 1, __ATOMIC_RELAXED);
		if (c >= 0)
			close(c);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct sockaddr_in a;
	socklen_t len = sizeof(a);
	pthread_t echo, *th;
	int n, i, l;

	if (argc != 3)
		return 2;
	n = atoi(argv[1]);
	iterations = atoi(argv[2]);
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	l = socket(AF_INET, SOCK_STREAM, 0);
	if (bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 128) ||
	    getsockname(l, (struct sockaddr *)&a, &len))
		return 2;
	port = ntohs(a.sin_port);
	pthread_create(&echo, NULL, echo_main, &l);
	th = calloc((size_t)n, sizeof(*th));
	for (i = 0; i < n; i++)
		pthread_create(&th[i], NULL, worker, NULL);
	for (i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	free(th); /* LeakSanitizer (make test-asan) */
	printf("conns=%d failures=%d\n", n * iterations, failures);
	return failures ? 1 : 0;
}
