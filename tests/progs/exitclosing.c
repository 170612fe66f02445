/*
 * exitclosing - a process that exits while other threads are closing
 * connections as fast as they can: three threads open a socketpair, move
 * 100 bytes, close both ends, and again; main calls exit() after MS
 * milliseconds (default 300).  The exit record is made while closes go on.
 *
 *   exitclosing [MS [exec]]
 *
 * With "exec", main execs /bin/true instead of calling exit().
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static void *churn(void *arg)
{
	char b[200] = { 0 };

	(void)arg;
	for (;;) {
		int sv[2];

		if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
			continue;
		if (write(sv[0], b, 100) == 100)
			(void)read(sv[1], b, sizeof(b));
		close(sv[0]);
		close(sv[1]);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int ms = argc > 1 ? atoi(argv[1]) : 300, i;
	pthread_t t;

	for (i = 0; i < 3; i++)
		if (pthread_create(&t, NULL, churn, NULL))
			return 2;
	usleep((useconds_t)ms * 1000);
	if (argc > 2 && !strcmp(argv[2], "exec")) {
		execl("/bin/true", "true", (char *)NULL);
		return 3;
	}
	exit(0);
}
