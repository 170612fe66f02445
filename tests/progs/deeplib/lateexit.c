/*
 * lateexit.c - an exit handler that runs after the library's exit record:
 * preloaded after libsockmeter.so, this library is set up before it, so
 * its atexit handler, registered first, runs last.  After the exit
 * record it does what LATEEXIT says:
 *   uid    setresuid(65534, 65534, 65534), printing "setresuid=R"
 *   mask   nothing more
 *   setuid setresuid(-1, -1, -1), which glibc makes on every thread,
 *          and nothing else (status 9 if it fails)
 * and in the first two prints the signals then blocked ("SigBlk: ..." from
 * /proc/thread-self/status), which should be the program's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void late(void)
{
	const char *how = getenv("LATEEXIT");
	char b[256];
	FILE *f;

	if (!how)
		return;
	if (!strcmp(how, "uid"))
		printf("setresuid=%d\n", setresuid(65534, 65534, 65534));
	/* (No stdio: it may allocate, and the exit may come from a handler
	 * that cut malloc short.) */
	if (!strcmp(how, "setuid")) {
		if (setresuid((uid_t)-1, (uid_t)-1, (uid_t)-1) != 0)
			_exit(9);
		return;
	}
	f = fopen("/proc/thread-self/status", "r");
	while (f && fgets(b, sizeof(b), f))
		if (!strncmp(b, "SigBlk", 6))
			fputs(b, stdout);
	if (f)
		fclose(f);
	fflush(stdout);
}

__attribute__((constructor)) static void init(void)
{
	atexit(late);
}
