/*
 * lockall - mlockall(FLAGS), as a daemon that locks its memory does, then
 * 100,000 bytes over a unix socketpair; the process's locked and whole
 * memory after.
 *
 *   lockall FLAGS [fork | holes | none | handler | vforkkill N | repeat N]
 *
 * Prints "r=R errno=E lck=KIB size=KIB moved=N": mlockall's result and
 * errno (0 when it succeeded), VmLck and VmSize from /proc/self/status,
 * the bytes the socketpair moved.
 *  fork: the process forks first and the child does all that, before any
 *    socket of its own (openvpn --mlock --daemon's order); the child
 *    prints, the parent waits for it.
 *  holes: the traffic first (the library's state file backs its pages,
 *    its first mapping left with holes), then 16 small mappings of the
 *    program's (8 of 16 KiB, 8 of 4 KiB: the size of those holes), then
 *    the call; also prints "unlocked=N": how many of
 *    the 16 are not locked after it (/proc/self/smaps).
 *  none: no call at all (what a library's constructor locked shows).
 *  handler: a SIGALRM handler makes the call too, every 0.7 ms, while
 *    the main thread makes it 300 times; prints "handled=N".
 *  vforkkill N: N vfork children, each killed by a timer at a random
 *    moment of its call; then the call in the parent, under a 20 s alarm;
 *    prints "killed=K r=R".
 *  repeat N: the call N times, 2 ms apart; prints "peak=KIB hwm=KIB
 *    fails=F": the largest VmLck seen after a call, the largest resident
 *    size ever (VmHWM: a mapping locked and faulted in for a moment
 *    counts there), the calls that failed.
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

static long status_kib(const char *key)
{
	char line[256];
	size_t n = strlen(key);
	long v = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, key, n) == 0 && line[n] == ':')
			v = strtol(line + n + 1, NULL, 10);
	fclose(f);
	return v;
}

static long traffic(void)
{
	static char buf[10000];
	int sv[2], i;
	long moved = 0;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
		return -1;
	memset(buf, 'l', sizeof(buf));
	for (i = 0; i < 10; i++) {
		ssize_t w = write(sv[0], buf, sizeof(buf));
		ssize_t got = 0;

		while (w > 0 && got < w) {
			ssize_t n = read(sv[1], buf, sizeof(buf));

			if (n <= 0)
				return -1;
			got += n;
		}
		moved += got;
	}
	close(sv[0]);
	close(sv[1]);
	return moved;
}

/* How many of the n areas at a[] lie in a mapping smaps says is not
 * locked (its "Locked:" smaller than its size). */
static int unlocked(char **a, int n)
{
	char line[512];
	unsigned long lo = 0, hi = 0, size = 0;
	int bad = 0, i;
	FILE *f = fopen("/proc/self/smaps", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long x, y;
		long kib;

		if (sscanf(line, "%lx-%lx ", &x, &y) == 2 && strchr(line, '-') &&
		    line[0] != ' ') {
			lo = x;
			hi = y;
			size = (y - x) / 1024;
		} else if (sscanf(line, "Locked: %ld kB", &kib) == 1) {
			for (i = 0; i < n; i++)
				if ((unsigned long)(uintptr_t)a[i] >= lo &&
				    (unsigned long)(uintptr_t)a[i] < hi &&
				    (unsigned long)kib < size)
					bad++;
		}
	}
	fclose(f);
	return bad;
}

/* vforkkill: a function of its own, its variables out of vfork's way. */
static int vfork_kill(int flags, int n)
{
	volatile int i, killed = 0;
	long moved = traffic();
	int r;

	srand((unsigned)getpid());
	for (i = 0; i < n; i++) {
		int us = 20 + rand() % 3000, st;
		pid_t p = vfork();

		if (p == 0) {
			struct itimerval it = {{0, 0}, {0, us}};

			setitimer(ITIMER_REAL, &it, NULL);
			mlockall(flags);
			_exit(0);
		}
		if (p < 0 || waitpid(p, &st, 0) != p)
			return 1;
		if (WIFSIGNALED(st))
			killed++;
	}
	alarm(20);
	r = mlockall(flags);
	printf("killed=%d r=%d moved=%ld\n", (int)killed, r, moved);
	return 0;
}

static volatile sig_atomic_t handled;
static int handler_flags;

static void on_alarm(int sig)
{
	(void)sig;
	mlockall(handler_flags);
	handled++;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 2 ? argv[2] : "";
	char *areas[16];
	int flags, r, err, i, fails = 0, holes = -1;
	long moved = 0, peak = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: lockall FLAGS [fork | holes | none | "
				"handler | vforkkill N | repeat N]\n");
		return 2;
	}
	flags = atoi(argv[1]);
	if (strcmp(mode, "fork") == 0) {
		pid_t p = fork();
		int st;

		if (p < 0)
			return 1;
		if (p > 0) {
			fflush(stdout);
			if (waitpid(p, &st, 0) != p || !WIFEXITED(st))
				return 1;
			return WEXITSTATUS(st);
		}
	}
	if (strcmp(mode, "holes") == 0) {
		moved = traffic();
		for (i = 0; i < 16; i++) {
			areas[i] = mmap(NULL, i < 8 ? 16384 : 4096,
					PROT_READ | PROT_WRITE,
					MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (areas[i] == MAP_FAILED)
				return 1;
			areas[i][0] = 1;
		}
	}
	if (strcmp(mode, "handler") == 0) {
		struct sigaction sa;
		struct itimerval it = {{0, 700}, {0, 700}}, off = {{0, 0}, {0, 0}};

		moved = traffic();
		handler_flags = flags;
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_alarm;
		sa.sa_flags = SA_RESTART;
		sigaction(SIGALRM, &sa, NULL);
		setitimer(ITIMER_REAL, &it, NULL);
		for (i = 0; i < 300; i++)
			if (mlockall(flags) != 0)
				fails++;
		setitimer(ITIMER_REAL, &off, NULL);
		printf("handled=%d fails=%d moved=%ld\n", (int)handled, fails,
		       moved);
		return 0;
	}
	if (strcmp(mode, "vforkkill") == 0)
		return vfork_kill(flags, argc > 3 ? atoi(argv[3]) : 1);
	if (strcmp(mode, "repeat") == 0) {
		int n = argc > 3 ? atoi(argv[3]) : 1;

		moved = traffic();
		for (i = 0; i < n; i++) {
			long l;

			if (mlockall(flags) != 0)
				fails++;
			l = status_kib("VmLck");
			if (l > peak)
				peak = l;
			usleep(2000);
		}
		printf("peak=%ld hwm=%ld fails=%d moved=%ld\n", peak,
		       status_kib("VmHWM"), fails, moved);
		return 0;
	}
	r = strcmp(mode, "none") == 0 ? 0 : mlockall(flags);
	err = r == 0 ? 0 : errno;
	if (strcmp(mode, "holes") == 0)
		holes = unlocked(areas, 16);
	else
		moved = traffic();
	printf("r=%d errno=%d lck=%ld size=%ld moved=%ld", r, err,
	       status_kib("VmLck"), status_kib("VmSize"), moved);
	if (holes >= 0)
		printf(" unlocked=%d", holes);
	printf("\n");
	return 0;
}
