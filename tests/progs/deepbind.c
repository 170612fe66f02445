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
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	long (*xfer)(int, long, long *);
	int (*own_dup)(void);
	const char *how, *lib, *base;
	long in = 0, out;
	int mode;
	void *h;

	if (argc != 5) {
		fprintf(stderr, "usage: deepbind HOW LIB PORT BYTES\n");
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
