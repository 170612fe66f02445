/*
 * stdio_cancel - a thread cancelled while blocked in a stdio write on a
 * socket leaves the FILE unlocked, as glibc's own locking does.
 *
 *   stdio_cancel
 *
 * A thread writes 64 KiB blocks with fwrite on fdopen(sv[0]) until the
 * socket is full and its write blocks; the main thread cancels it, joins
 * it, and tries the FILE's lock.  Prints "lock_free=1" when the lock could
 * be taken (0: a cancelled thread left it held, and every later stdio call
 * on the FILE would hang).
 */
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static FILE *fp;

static void *writer(void *arg)
{
	static char block[65536];

	(void)arg;
	memset(block, 'w', sizeof(block));
	for (;;)
		if (fwrite(block, 1, sizeof(block), fp) != sizeof(block))
			break;
	return NULL;
}

int main(void)
{
	struct pollfd p;
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	pthread_t tid;
	int sv[2], i, free_;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		return 2;
	fp = fdopen(sv[0], "w");
	if (!fp || pthread_create(&tid, NULL, writer, NULL))
		return 2;
	/* Until the socket is full (the writer blocks), 10 s at most. */
	for (i = 0; i < 1000; i++) {
		p.fd = sv[0];
		p.events = POLLOUT;
		if (poll(&p, 1, 0) == 0)
			break;
		nanosleep(&ts, NULL);
	}
	if (i == 1000)
		return 3;
	nanosleep(&ts, NULL); /* the writer is inside write() by now */
	pthread_cancel(tid);
	pthread_join(tid, NULL);
	free_ = ftrylockfile(fp) == 0;
	if (free_)
		funlockfile(fp);
	printf("lock_free=%d\n", free_);
	return 0;
}
