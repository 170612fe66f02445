/*
 * rebind - a listener's port is free again once close() returns: for
 * SECONDS, socket, bind to 127.0.0.1:PORT, listen, close, as fast as it
 * goes.  Prints "rounds=N failed=M" (binds that failed, with the first
 * errno) and exits 0.  Under the preload the ticker reads each tracked
 * fd every interval through a copy of it (core/progfd.c): a copy still
 * held when the program's close returned kept the port bound.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	struct sockaddr_in a;
	long rounds = 0, failed = 0;
	int first_err = 0;
	double end;

	if (argc != 3) {
		fprintf(stderr, "usage: rebind PORT SECONDS\n");
		return 2;
	}
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_port = htons((unsigned short)atoi(argv[1]));
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	end = now() + atof(argv[2]);
	while (now() < end) {
		int s = socket(AF_INET, SOCK_STREAM, 0);

		if (s < 0) {
			perror("socket");
			return 1;
		}
		rounds++;
		if (bind(s, (struct sockaddr *)&a, sizeof(a)) != 0 ||
		    listen(s, 1) != 0) {
			if (!failed++)
				first_err = errno;
		}
		close(s);
	}
	printf("rounds=%ld failed=%ld", rounds, failed);
	if (failed)
		printf(" first_error=%s", strerror(first_err));
	printf("\n");
	return 0;
}
