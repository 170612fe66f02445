/*
 * stdio_pair - talk stdio over an fdopen'd socketpair: 28,000 bytes each
 * way, with every kind of stdio call.
 *
 *   stdio_pair
 *
 * The parent writes 280 lines of 100 bytes on fdopen(sv[0], "r+"), in turn
 * with fprintf, fputs, fwrite, fputc/putc, then fflush(NULL).  A child, with
 * plain read() and write() on sv[1], reads them all and answers 280 lines
 * of 100 bytes, then shuts its end down.  The parent reads them back in
 * turn with fgets, getline, fscanf, fread, getc/fgetc, up to end of file.
 * Prints "fd=N" (the parent's end), "child_in=N", "child_out=N" (the
 * truth, counted by the child from its own calls), and "parent_in=N",
 * "parent_out=N" (what the parent's stdio calls consumed and handed over).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define LINES 280
#define LINE  100 /* bytes, newline included */

static void die(const char *what)
{
	fprintf(stderr, "stdio_pair: %s: %s\n", what, strerror(errno));
	exit(2);
}

/* The child: read everything, answer, report. */
static int child(int fd, int report)
{
	char buf[4096], line[LINE + 1];
	long in = 0, out = 0;
	ssize_t n;
	int i;

	while (in < (long)LINES * LINE) {
		n = read(fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			die("child read");
		in += n;
	}
	for (i = 0; i < LINES; i++) {
		snprintf(line, sizeof(line), "reply %05d %0*d\n", i, LINE - 13,
			 i);
		for (size_t done = 0; done < LINE; done += (size_t)n) {
			n = write(fd, line + done, LINE - done);
			if (n <= 0)
				die("child write");
			out += n;
		}
	}
	shutdown(fd, SHUT_WR);
	dprintf(report, "child_in=%ld\nchild_out=%ld\n", in, out);
	return 0;
}

int main(void)
{
	char line[LINE + 1], buf[256], *lp = NULL;
	long in = 0, out = 0;
	size_t cap = 0;
	int sv[2], i, j, st;
	FILE *fp;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		die("socketpair");
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		close(sv[0]);
		_exit(child(sv[1], 1));
	}
	close(sv[1]);
	fp = fdopen(sv[0], "r+");
	if (!fp)
		die("fdopen");
	for (i = 0; i < LINES; i++) {
		snprintf(line, sizeof(line), "line %05d %0*d\n", i, LINE - 12,
			 i);
		switch (i % 4) {
		case 0:
			if (fprintf(fp, "%s", line) != LINE)
				die("fprintf");
			break;
		case 1:
			if (fputs(line, fp) == EOF)
				die("fputs");
			break;
		case 2:
			if (fwrite(line, 10, LINE / 10, fp) != LINE / 10)
				die("fwrite");
			break;
		default:
			for (j = 0; j < LINE; j++)
				if ((j % 2 ? fputc(line[j], fp)
					   : putc(line[j], fp)) == EOF)
					die("fputc");
		}
		out += LINE;
	}
	if (fflush(NULL)) /* every FILE: ours among them */
		die("fflush");
	for (i = 0;; i++) {
		ssize_t n = 0;
		int c;

		switch (i % 5) {
		case 0:
			n = fgets(buf, sizeof(buf), fp) ? (ssize_t)strlen(buf)
							: 0;
			break;
		case 1:
			n = getline(&lp, &cap, fp);
			n = n < 0 ? 0 : n;
			break;
		case 2:
			if (fscanf(fp, "%99[^\n]", buf) == 1 &&
			    fgetc(fp) == '\n')
				n = (ssize_t)strlen(buf) + 1;
			break;
		case 3:
			n = (ssize_t)fread(buf, 1, LINE, fp);
			break;
		default:
			for (j = 0; j < LINE &&
				    (c = j % 2 ? getc(fp) : fgetc(fp)) != EOF;
			     j++)
				n++;
		}
		if (n == 0)
			break;
		in += n;
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
		die("child failed");
	printf("fd=%d\nparent_in=%ld\nparent_out=%ld\n", sv[0], in, out);
	free(lp);
	return 0;
}
