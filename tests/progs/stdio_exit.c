/*
 * stdio_exit - a program that _exits with output still in its FILE buffer.
 *
 *   stdio_exit LOG_PATTERN
 *
 * A child writes 5,000 bytes with fprintf on fdopen(sv[0]) and flushes
 * them, then 300 more that stay in the FILE's buffer; it waits until its
 * log (LOG_PATTERN with "%p" replaced by its pid) holds an interval record
 * made after that, then _exits: the 300 bytes never leave.  The parent
 * reads sv[1] to end of file and prints "child=PID" and "received=N", the
 * truth.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void die(const char *what)
{
	fprintf(stderr, "stdio_exit: %s: %s\n", what, strerror(errno));
	exit(2);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Whether the log at path holds an interval record stamped after t. */
static int interval_after(const char *path, double t)
{
	static const char key[] = "{\"type\":\"interval\",\"ts\":";
	char line[65536];
	int found = 0;
	FILE *f = fopen(path, "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, sizeof(key) - 1) &&
		    strtod(line + sizeof(key) - 1, NULL) > t)
			found = 1;
	fclose(f);
	return found;
}

static void child(int fd, const char *pattern)
{
	char path[4096], *p;
	FILE *fp = fdopen(fd, "w");
	double t, deadline;
	int i;

	if (!fp)
		die("fdopen");
	for (i = 0; i < 50; i++)
		fprintf(fp, "%099d\n", i);
	if (fflush(fp))
		die("fflush");
	fprintf(fp, "%0299d\n", 7); /* 300 bytes, buffered */
	p = strstr(pattern, "%p");
	if (!p || strlen(pattern) > sizeof(path) - 32)
		die("LOG_PATTERN needs %p");
	snprintf(path, sizeof(path), "%.*s%ld%s", (int)(p - pattern), pattern,
		 (long)getpid(), p + 2);
	t = now();
	deadline = t + 20;
	while (!interval_after(path, t)) {
		if (now() > deadline)
			die("no interval record in the log");
		usleep(20000);
	}
	_exit(0);
}

int main(int argc, char **argv)
{
	char buf[4096];
	long got = 0;
	ssize_t n;
	int sv[2], st;
	pid_t pid;

	if (argc != 2) {
		fprintf(stderr, "usage: stdio_exit LOG_PATTERN\n");
		return 2;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		die("socketpair");
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		close(sv[1]);
		child(sv[0], argv[1]);
	}
	close(sv[0]);
	while ((n = read(sv[1], buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			die("read");
		got += n;
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
		die("child failed");
	printf("child=%ld\nreceived=%ld\n", (long)pid, got);
	return 0;
}
