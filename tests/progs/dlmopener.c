/*
 * dlmopener - libraries loaded with dlmopen into a namespace of their own,
 * where the preload is not (t_dlmopen):
 *
 *   dlmopener key LIB          LIB (deeplib's) in a new namespace: a new
 *                              pthread key of its libc must read NULL on
 *                              this thread; prints fresh=1 when it does.
 *   dlmopener xfer LIB PORT N  LIB in a new namespace moves N bytes each
 *                              way with an echo server; prints out=, in=.
 *   dlmopener curl URL         libcurl.so.4 in a new namespace fetches URL
 *                              (into /dev/null); prints rc= (0: done),
 *                              then the program returns from main, which
 *                              runs libcurl's and OpenSSL's destructors.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *load(const char *lib)
{
	void *h = dlmopen(LM_ID_NEWLM, lib, RTLD_NOW);

	if (!h)
		fprintf(stderr, "dlmopener: %s\n", dlerror());
	return h;
}

int main(int argc, char **argv)
{
	void *h;

	if (argc == 3 && !strcmp(argv[1], "key")) {
		int (*fresh)(void);

		if (!(h = load(argv[2])))
			return 1;
		*(void **)&fresh = dlsym(h, "smdeep_fresh_key");
		if (!fresh)
			return 1;
		printf("fresh=%d\n", fresh() == 0);
		return 0;
	}
	if (argc == 5 && !strcmp(argv[1], "xfer")) {
		long (*xfer)(int, long, long *);
		long in = 0, out;

		if (!(h = load(argv[2])))
			return 1;
		*(void **)&xfer = dlsym(h, "smdeep_xfer");
		if (!xfer)
			return 1;
		out = xfer(atoi(argv[3]), atol(argv[4]), &in);
		printf("out=%ld\nin=%ld\n", out, in);
		return out < 0;
	}
	if (argc == 3 && !strcmp(argv[1], "curl")) {
		void *(*init)(void);
		int (*setopt)(void *, int, ...);
		int (*perform)(void *);
		void (*cleanup)(void *);
		FILE *null = fopen("/dev/null", "w");
		void *c;
		int rc;

		if (!null || !(h = load("libcurl.so.4")))
			return 1;
		*(void **)&init = dlsym(h, "curl_easy_init");
		*(void **)&setopt = dlsym(h, "curl_easy_setopt");
		*(void **)&perform = dlsym(h, "curl_easy_perform");
		*(void **)&cleanup = dlsym(h, "curl_easy_cleanup");
		if (!init || !setopt || !perform || !cleanup || !(c = init()))
			return 1;
		setopt(c, 10002 /* CURLOPT_URL */, argv[2]);
		setopt(c, 10001 /* CURLOPT_WRITEDATA */, null);
		setopt(c, 10004 /* CURLOPT_PROXY */, "");
		rc = perform(c);
		cleanup(c);
		printf("rc=%d\n", rc);
		return rc != 0;
	}
	fprintf(stderr, "usage: dlmopener key LIB | xfer LIB PORT N | curl URL\n");
	return 2;
}
