/*
 * slow_sender - traffic spread over time, for interval records.
 *
 *   slow_sender COUNT PERIOD_MS BYTES TIMES_FILE
 *
 * Sends BYTES through a unix socketpair COUNT times, PERIOD_MS apart, and
 * reads each burst back at once.  For every send it appends
 * "T_BEFORE T_AFTER" (CLOCK_REALTIME seconds, before the write and after
 * the read) to TIMES_FILE, so a test knows when the fd was active.  The
 * fds stay open until exit: the exit record lists them.  Prints
 * "send_fd=N recv_fd=N total=N".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	static char buf[65536];
	struct timespec period;
	long count, ms, bytes, total = 0, i;
	int sp[2];
	FILE *times;

	if (argc != 5)
		return 2;
	count = atol(argv[1]);
	ms = atol(argv[2]);
	bytes = atol(argv[3]);
	if (bytes < 1 || bytes > (long)sizeof(buf))
		return 2;
	times = fopen(argv[4], "w");
	if (!times || socketpair(AF_UNIX, SOCK_STREAM, 0, sp) != 0)
		return 2;
	period.tv_sec = ms / 1000;
	period.tv_nsec = (ms % 1000) * 1000000L;
	memset(buf, 's', sizeof(buf));
	for (i = 0; i < count; i++) {
		double t0 = now_s();
		long got = 0;

		if (write(sp[0], buf, (size_t)bytes) != bytes)
			return 2;
		while (got < bytes) {
			ssize_t r = read(sp[1], buf, sizeof(buf));

			if (r <= 0)
				return 2;
			got += r;
		}
		total += bytes;
		fprintf(times, "%.6f %.6f\n", t0, now_s());
		fflush(times);
		nanosleep(&period, NULL);
	}
	fclose(times);
	printf("send_fd=%d\nrecv_fd=%d\ntotal=%ld\n", sp[0], sp[1], total);
	return 0;
}
