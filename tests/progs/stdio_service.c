/*
 * stdio_service - an inetd-style service: its stdin and stdout are the
 * connection, and it talks with plain stdio (fgets, printf, puts,
 * putchar, fputs, scanf).
 *
 *   stdio_service [linebuf]   (run by socat ... EXEC:stdio_service,nofork)
 *
 * Greets with a banner, then answers each line it reads: "N: LINE" by
 * printf, an upper-cased copy by putchar, and every tenth line a puts;
 * a line "num K" is read back with scanf and answered "sum=S".  At end of
 * input it prints a last line and returns from main without flushing, so
 * glibc's exit flush sends it.
 *
 * linebuf: stdin and stdout are line buffered, and a prompt "> " without a
 * newline goes before each read: glibc flushes it from inside fgets (a
 * read on a line-buffered stream flushes a line-buffered stdout).
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	int linebuf = argc > 1 && !strcmp(argv[1], "linebuf");
	char line[512];
	long n = 0, sum = 0;
	int k;

	if (linebuf) {
		setvbuf(stdin, NULL, _IOLBF, 0);
		setvbuf(stdout, NULL, _IOLBF, 0);
	}
	printf("hello from stdio_service\n");
	fflush(stdout);
	while ((!linebuf || fputs("> ", stdout) != EOF) &&
	       fgets(line, sizeof(line), stdin)) {
		n++;
		if (!strncmp(line, "num", 3)) {
			/* the rest of the line holds numbers */
			while (scanf("%d", &k) == 1)
				sum += k;
			printf("sum=%ld\n", sum);
			continue;
		}
		printf("%ld: %s", n, line);
		for (char *p = line; *p; p++)
			putchar(toupper((unsigned char)*p));
		if (n % 10 == 0)
			puts("tenth line");
		if (n % 7 == 0)
			fputs("seventh line\n", stdout);
	}
	printf("bye after %ld lines\n", n);
	return 0;
}
