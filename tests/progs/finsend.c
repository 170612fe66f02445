/*
 * finsend.c - bytes sent by a program's shared library after main.
 *
 *   finsend
 *
 * Makes a unix socketpair and forks a reader, which reads its end to EOF
 * and prints "read=N".  The program sends FINSEND_MAIN bytes, gives its
 * end to libfinsend.so (tests/progs/lib/finsend.c), prints "pid=P" and
 * returns from main: the library's exit handler and destructor send the
 * rest and close the socket.  The reader's N is the truth for the
 * program's exit record (t_exit_library_dtors).
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "finsend.h"

int main(void)
{
	char buf[4096];
	int sv[2];
	long got = 0;
	ssize_t r;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
		return 2;
	pid = fork();
	if (pid < 0)
		return 2;
	if (pid == 0) {
		close(sv[0]);
		while ((r = read(sv[1], buf, sizeof(buf))) > 0)
			got += r;
		printf("read=%ld\n", got);
		fflush(stdout);
		_exit(0);
	}
	close(sv[1]);
	if (send(sv[0], "hello", FINSEND_MAIN, 0) != FINSEND_MAIN)
		return 2;
	finsend_keep(sv[0]);
	printf("pid=%ld\n", (long)getpid());
	return 0;
}
