/*
 * deepbind.c - loads tests/progs/deeplib's library with dlopen, the way
 * PHP loads its extensions (t_deepbind):
 *
 *   deepbind HOW LIB PORT BYTES
 *
 * HOW: deep (the path LIB with RTLD_NOW | RTLD_DEEPBIND), deep-lazy
 * (RTLD_LAZY | RTLD_DEEPBIND), bare (LIB's file name alone, found through
 * this program's RUNPATH, deep-bound), plain-bare (the same without
 * RTLD_DEEPBIND).  Then one exchange of BYTES each way with an echo
 * server at PORT through the library; prints dlerror= (what dlerror()
 * said after the load), out=N, in=M and dup=D, a line each.
 *
 *   deepbind race DIR N
 *
 * Loads and unloads while other threads do: two threads each load DIR's
 * libsmdeep.so and libsmdeep_lazy.so with RTLD_DEEPBIND N times, send one
 * byte through it on a socketpair and close it again, while two more load
 * and close them without RTLD_DEEPBIND in a loop.  Prints sent=S (bytes
 * sent through deep-bound copies; each send is counted, the log must say
 * as much) and fails=F (loads that failed).
 *
 *   deepbind textrel LIB
 *
 * LIB (libsmtextrel.so: send's address in its code) loaded deep; 100
 * bytes through its tr_send on a socketpair; prints sent=N.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *race_dir;
static long race_n;
static volatile int race_stop;
static int race_sv[2];

static void race_path(char *buf, size_t cap, int lazy)
{
	snprintf(buf, cap, "%s/libsmdeep%s.so", race_dir, lazy ? "_lazy" : "");
}

/* Loads without RTLD_DEEPBIND, in a loop, until told to stop. */
static void *race_churn(void *arg)
{
	char path[4096];

	race_path(path, sizeof(path), arg != NULL);
	while (!race_stop) {
		void *h = dlopen(path, RTLD_NOW);

		if (h)
			dlclose(h);
	}
	return NULL;
}

struct race_deep {
	int lazy;
	long sent, fails;
};

static pthread_mutex_t race_lock = PTHREAD_MUTEX_INITIALIZER;

static void *race_deep(void *arg)
{
	struct race_deep *d = arg;
	char path[4096], b;
	long i;

	race_path(path, sizeof(path), d->lazy);
	for (i = 0; i < race_n; i++) {
		void *h = dlopen(path, RTLD_NOW | RTLD_DEEPBIND);
		long (*send1)(int);

		if (!h) {
			d->fails++;
			continue;
		}
		*(void **)&send1 = dlsym(h, "smdeep_send1");
		/* One at a time on the pair: each byte read back before
		 * the next is sent. */
		pthread_mutex_lock(&race_lock);
		if (send1 && send1(race_sv[0]) == 1 &&
		    read(race_sv[1], &b, 1) == 1)
			d->sent++;
		pthread_mutex_unlock(&race_lock);
		dlclose(h);
	}
	return NULL;
}

static int race(const char *dir, long n)
{
	pthread_t churn[2], deep[2];
	struct race_deep d[2] = {{0, 0, 0}, {1, 0, 0}};
	int i;

	race_dir = dir;
	race_n = n;
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, race_sv) != 0)
		return 1;
	for (i = 0; i < 2; i++)
		if (pthread_create(&churn[i], NULL, race_churn,
				   i ? (void *)1 : NULL) != 0 ||
		    pthread_create(&deep[i], NULL, race_deep, &d[i]) != 0)
			return 1;
	for (i = 0; i < 2; i++)
		pthread_join(deep[i], NULL);
	race_stop = 1;
	for (i = 0; i < 2; i++)
		pthread_join(churn[i], NULL);
	close(race_sv[0]);
	close(race_sv[1]);
	printf("sent=%ld\nfails=%ld\n", d[0].sent + d[1].sent,
	       d[0].fails + d[1].fails);
	return 0;
}

int main(int argc, char **argv)
{
	long (*xfer)(int, long, long *);
	int (*own_dup)(void);
	const char *how, *lib, *base;
	long in = 0, out;
	int mode;
	void *h;

	if (argc == 3 && !strcmp(argv[1], "textrel")) {
		ssize_t (*tr_send)(int, const void *, size_t, int);
		char buf[100] = {0};
		int sv[2];
		ssize_t n;

		h = dlopen(argv[2], RTLD_NOW | RTLD_DEEPBIND);
		if (!h || socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
			return 1;
		*(void **)&tr_send = dlsym(h, "tr_send");
		if (!tr_send)
			return 1;
		n = tr_send(sv[0], buf, sizeof(buf), 0);
		printf("sent=%ld\n", (long)n);
		return n != (ssize_t)sizeof(buf);
	}
	if (argc == 4 && !strcmp(argv[1], "race"))
		return race(argv[2], atol(argv[3]));
	if (argc != 5) {
		fprintf(stderr, "usage: deepbind HOW LIB PORT BYTES | race DIR N\n");
		return 2;
	}
	how = argv[1];
	lib = argv[2];
	base = strrchr(lib, '/') ? strrchr(lib, '/') + 1 : lib;
	if (!strcmp(how, "deep"))
		mode = RTLD_NOW | RTLD_DEEPBIND;
	else if (!strcmp(how, "deep-lazy"))
		mode = RTLD_LAZY | RTLD_DEEPBIND;
	else if (!strcmp(how, "bare"))
		mode = RTLD_NOW | RTLD_DEEPBIND, lib = base;
	else if (!strcmp(how, "plain-bare"))
		mode = RTLD_NOW, lib = base;
	else
		return 2;
	h = dlopen(lib, mode);
	if (!h) {
		fprintf(stderr, "deepbind: %s\n", dlerror());
		return 1;
	}
	/* The loader's error state is the program's: what dlerror() says
	 * after a dlopen that succeeded is the same with the preload. */
	{
		const char *e = dlerror();

		printf("dlerror=%s\n", e ? e : "none");
	}
	*(void **)&xfer = dlsym(h, "smdeep_xfer");
	*(void **)&own_dup = dlsym(h, "smdeep_own_dup");
	if (!xfer || !own_dup)
		return 1;
	out = xfer(atoi(argv[3]), atol(argv[4]), &in);
	printf("out=%ld\nin=%ld\ndup=%d\n", out, in, own_dup());
	return out < 0;
}
