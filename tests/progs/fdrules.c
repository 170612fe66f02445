/*
 * fdrules - a program that leans on POSIX fd rules while the preload's
 * ticker writes its log, and counts every time a rule breaks.
 *
 *   fdrules lowfd SECONDS [RATE] open() must return the lowest free fd
 *   fdrules closerange SECONDS   socketpair, traffic, then close_range /
 *                                closefrom / a close loop over the rest
 *   fdrules daemon SECONDS       a close-all loop, then /dev/null dup2'd
 *                                onto fixed numbers 3..12, then traffic
 *
 * RATE: socketpairs per second at most (default 3000).
 * A unix socketpair moves bytes all along, so the ticker has records to
 * write.  Prints iterations=N, pairs=P (socketpairs closed), violations=V
 * (lowest-fd rule broken, a socket of ours closed or replaced behind our
 * back, a fixed fd no longer /dev/null), stray=S (bytes nobody sent) and
 * foreign=F (fds in /proc/self/fd at the end that the program never
 * opened).  Exits 0 whatever it counted.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* socketpairs per second at most (argument 3): records stay queued */
static double rate = 3000;
#define FIXED_LO 3
#define FIXED_HI 12

static long iterations, pairs, violations, stray;
static char inherited[1024]; /* fds open when main started */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int lowest_free(void)
{
	int fd = 0;

	while (fcntl(fd, F_GETFD) != -1 || errno != EBADF)
		fd++;
	return fd;
}

/* Keep the socketpair rate near RATE, without busy waiting. */
static void pace(double t0, long n)
{
	double ahead = (double)n / rate - (now_s() - t0);

	if (ahead > 0) {
		struct timespec ts = { 0, (long)(ahead * 1e9) };

		nanosleep(&ts, NULL);
	}
}

/* Move n bytes a -> b and check they, and only they, arrive. */
static void traffic(int a, int b, int n)
{
	char out[256], in[512];
	int i;

	for (i = 0; i < n; i++)
		out[i] = (char)(iterations + i);
	if (write(a, out, (size_t)n) != n) {
		violations++;
		return;
	}
	if (recv(b, in, (size_t)n, MSG_WAITALL) != n || memcmp(in, out, (size_t)n)) {
		violations++;
		return;
	}
	if (recv(b, in, sizeof(in), MSG_DONTWAIT) > 0)
		stray++;
}

static int is_socket(int fd, const struct stat *was)
{
	struct stat st;

	return fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode) &&
	       st.st_ino == was->st_ino && st.st_dev == was->st_dev;
}

static void lowfd(double secs, int a, int b)
{
	double t0 = now_s();
	int want = lowest_free();

	while (now_s() - t0 < secs) {
		int fd = open("/dev/null", O_RDONLY);

		if (fd != want)
			violations++;
		close(fd);
		if (++iterations % 256 == 0)
			traffic(a, b, 64);
	}
}

/* One socketpair: checked, used, then closed by the way of round r. */
static void one_pair(long r, int with_lowest)
{
	int sv[2], want = lowest_free();
	struct stat s0, s1;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) {
		violations++;
		return;
	}
	if (with_lowest && sv[0] != want)
		violations++;
	fstat(sv[0], &s0);
	fstat(sv[1], &s1);
	traffic(sv[0], sv[1], 100);
	traffic(sv[1], sv[0], 50);
	if (!is_socket(sv[0], &s0) || !is_socket(sv[1], &s1))
		violations++;
	switch (r % 3) {
	case 0:
		close_range((unsigned)sv[0], ~0u, 0);
		break;
	case 1:
		closefrom(sv[0]);
		break;
	default:
		for (int fd = sv[0]; fd < 64; fd++)
			close(fd);
	}
	pairs++;
}

static void closerange(double secs, int a, int b)
{
	double t0 = now_s();

	while (now_s() - t0 < secs) {
		one_pair(iterations, 1);
		traffic(a, b, 64);
		pace(t0, ++iterations);
	}
}

static void daemon_loop(double secs)
{
	double t0 = now_s();
	struct stat null_st;

	stat("/dev/null", &null_st);
	while (now_s() - t0 < secs) {
		int fd, null, sv[2];
		struct stat st;

		for (fd = 3; fd < 1024; fd++)
			close(fd);
		null = open("/dev/null", O_RDWR);
		for (fd = FIXED_LO; fd <= FIXED_HI; fd++)
			if (fd != null && dup2(null, fd) != fd)
				violations++;
		if (null > FIXED_HI)
			close(null);
		if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) {
			violations++;
			continue;
		}
		traffic(sv[0], sv[1], 100);
		traffic(sv[1], sv[0], 60);
		for (fd = FIXED_LO; fd <= FIXED_HI; fd++)
			if (fstat(fd, &st) != 0 || st.st_rdev != null_st.st_rdev ||
			    !S_ISCHR(st.st_mode))
				violations++;
		pairs++;
		pace(t0, ++iterations);
	}
	for (int fd = 3; fd < 1024; fd++)
		close(fd);
}

/* fds open now that the program did not open (keep: the ones it did). */
static long foreign_fds(const char *mode, int keep_lo, int keep_hi)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	long n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d))) {
		int fd = atoi(e->d_name);

		if (e->d_name[0] == '.' || fd == dirfd(d) || fd <= 2 ||
		    (fd >= keep_lo && fd <= keep_hi) ||
		    (fd < 1024 && inherited[fd] && strcmp(mode, "lowfd") == 0))
			continue;
		fprintf(stderr, "foreign fd %d\n", fd);
		n++;
	}
	closedir(d);
	return n;
}

int main(int argc, char **argv)
{
	double secs = argc > 2 ? atof(argv[2]) : 3;
	const char *mode = argc > 1 ? argv[1] : "lowfd";
	int keep_lo = -1, keep_hi = -1;
	int ab[2], fd;

	if (argc > 3)
		rate = atof(argv[3]);
	for (fd = 0; fd < 1024; fd++)
		inherited[fd] = fcntl(fd, F_GETFD) != -1;
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, ab) != 0)
		return 1;
	if (strcmp(mode, "lowfd") == 0) {
		lowfd(secs, ab[0], ab[1]);
		keep_lo = ab[0];
		keep_hi = ab[1];
	} else if (strcmp(mode, "closerange") == 0) {
		closerange(secs, ab[0], ab[1]);
		keep_lo = ab[0];
		keep_hi = ab[1];
	} else if (strcmp(mode, "daemon") == 0) {
		daemon_loop(secs); /* its first loop closes ab too */
		pairs++;
	} else {
		fprintf(stderr, "fdrules: unknown mode %s\n", mode);
		return 2;
	}
	printf("iterations=%ld\npairs=%ld\nviolations=%ld\nstray=%ld\n"
	       "foreign=%ld\n",
	       iterations, pairs, violations, stray,
	       foreign_fds(mode, keep_lo, keep_hi));
	return 0;
}
