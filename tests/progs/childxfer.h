/*
 * childxfer.h - what sandboxed.c and rawclone.c share: a loopback TCP
 * connection made before a child is made, the child writing BYTES on its
 * end and waiting for a 1-byte acknowledgement, the parent reading them,
 * acknowledging, reaping the child and printing pid=, child=, got= and
 * status= ("exit:N" or "signal:N"), one a line.
 * Each program defines PROG (its name, for messages) before including it.
 */
#ifndef CHILDXFER_H
#define CHILDXFER_H

#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

static void die(const char *what)
{
	fprintf(stderr, PROG ": %s: %s\n", what, strerror(errno));
	exit(2);
}

/* A listener on 127.0.0.1, a client connected to it, the accepted end. */
static void xfer_connect(int *lfd, int *cfd, int *sfd)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	*lfd = socket(AF_INET, SOCK_STREAM, 0);
	if (*lfd < 0 || bind(*lfd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
	    listen(*lfd, 1) != 0 ||
	    getsockname(*lfd, (struct sockaddr *)&a, &len) != 0)
		die("listen");
	*cfd = socket(AF_INET, SOCK_STREAM, 0);
	if (*cfd < 0 || connect(*cfd, (struct sockaddr *)&a, sizeof(a)) != 0)
		die("connect");
	*sfd = accept(*lfd, NULL, NULL);
	if (*sfd < 0)
		die("accept");
}

/* The child's side: bytes out on fd, then the acknowledgement, then
 * close.  A failure ends the child with status 3 (write) or 4 (read). */
static void xfer_send(int fd, long bytes)
{
	static char buf[65536];
	char ack;

	memset(buf, 'x', sizeof(buf));
	while (bytes > 0) {
		ssize_t n = write(fd, buf,
				  bytes < (long)sizeof(buf) ? (size_t)bytes
							    : sizeof(buf));
		if (n <= 0)
			_exit(3);
		bytes -= n;
	}
	if (read(fd, &ack, 1) != 1)
		_exit(4);
	close(fd);
}

/* The parent's side, once the child runs: read up to bytes from sfd,
 * acknowledge what came, reap the child, print the results. */
static int xfer_receive(int lfd, int sfd, long bytes, pid_t pid)
{
	static char buf[65536];
	long got = 0;
	int status;
	ssize_t n;

	while (got < bytes && (n = read(sfd, buf, sizeof(buf))) > 0)
		got += n;
	if (got > 0 && write(sfd, "k", 1) != 1)
		die("ack");
	if (waitpid(pid, &status, 0) != pid)
		die("waitpid");
	close(sfd);
	close(lfd);
	printf("pid=%ld\nchild=%ld\ngot=%ld\n", (long)getpid(), (long)pid,
	       got);
	if (WIFEXITED(status))
		printf("status=exit:%d\n", WEXITSTATUS(status));
	else
		printf("status=signal:%d\n", WTERMSIG(status));
	return 0;
}

#endif
