/*
 * errno_check - return values and errno of wrapped calls, as the program
 * sees them.  Every check prints "ok NAME" or "FAIL NAME: ..." and the
 * program exits with the number of failed checks, so it proves the same
 * thing with and without the preload.
 *
 * The errors it provokes, on fds it reports for the log checks:
 *   again_fd   read() and recv() on an empty non-blocking socket: 2 x EAGAIN
 *   intr_fd    recv() interrupted by SIGALRM (no SA_RESTART): 1 x EINTR
 *   pipe_fd    send() and write() after the peer closed: 2 x EPIPE
 *              (SIGPIPE ignored)
 * plus EBADF from recv()/read() on a closed fd and from close(-1), ENOENT
 * from connect() to a missing unix socket, EFAULT from a TCP Fast Open
 * sendmsg() without a msghdr, and errno left untouched by
 * successful calls, also on the first call on an fd the preload did not see
 * being made (a socketpair from a raw system call: classified then).  Bytes
 * that do move: OK_BYTES from ok_fd to again_fd, RAW_BYTES from raw_out_fd
 * to raw_in_fd, all printed as "NAME=N" lines at the end.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <netinet/in.h>
#include <sys/un.h>
#include <unistd.h>

#define OK_BYTES 1234
#define RAW_BYTES 77

static int failed;

static void check(const char *name, int cond, const char *fmt, long a, int e)
{
	if (cond) {
		printf("ok %s\n", name);
		return;
	}
	failed++;
	printf("FAIL %s: ", name);
	printf(fmt, a);
	printf(" errno=%d (%s)\n", e, strerror(e));
}

static void on_alarm(int sig)
{
	(void)sig;
}

int main(void)
{
	struct sigaction sa;
	struct itimerval it;
	struct sockaddr_un un;
	char buf[4096];
	int a[2], b[2], c[2], raw[2], fd, e, fl;
	ssize_t r;

	setvbuf(stdout, NULL, _IONBF, 0);
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, a) != 0 ||
	    socketpair(AF_UNIX, SOCK_STREAM, 0, b) != 0 ||
	    socketpair(AF_UNIX, SOCK_STREAM, 0, c) != 0)
		return 100;

	/* EAGAIN on an empty non-blocking socket. */
	fl = fcntl(a[1], F_GETFL);
	check("fcntl_getfl", fl >= 0, "returned %ld", fl, errno);
	check("fcntl_setfl", fcntl(a[1], F_SETFL, fl | O_NONBLOCK) == 0,
	      "returned %ld", -1, errno);
	errno = 0;
	r = read(a[1], buf, sizeof(buf));
	e = errno;
	check("read_eagain", r == -1 && e == EAGAIN, "returned %ld", r, e);
	errno = 0;
	r = recv(a[1], buf, sizeof(buf), 0);
	e = errno;
	check("recv_eagain", r == -1 && e == EAGAIN, "returned %ld", r, e);

	/* A successful call returns the count and leaves errno alone. */
	memset(buf, 'e', sizeof(buf));
	errno = 4242;
	r = send(a[0], buf, OK_BYTES, 0);
	e = errno;
	check("send_ok", r == OK_BYTES && e == 4242, "returned %ld", r, e);
	errno = 4242;
	r = recv(a[1], buf, sizeof(buf), 0);
	e = errno;
	check("recv_ok", r == OK_BYTES && e == 4242, "returned %ld", r, e);

	/* EINTR: a blocking recv interrupted by a handler without
	 * SA_RESTART. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	memset(&it, 0, sizeof(it));
	it.it_value.tv_usec = 100000;
	setitimer(ITIMER_REAL, &it, NULL);
	errno = 0;
	r = recv(b[1], buf, sizeof(buf), 0);
	e = errno;
	check("recv_eintr", r == -1 && e == EINTR, "returned %ld", r, e);

	/* EPIPE after the peer is gone, SIGPIPE ignored. */
	signal(SIGPIPE, SIG_IGN);
	check("close_peer", close(c[1]) == 0, "returned %ld", -1, errno);
	errno = 0;
	r = send(c[0], buf, 100, 0);
	e = errno;
	check("send_epipe", r == -1 && e == EPIPE, "returned %ld", r, e);
	errno = 0;
	r = write(c[0], buf, 100);
	e = errno;
	check("write_epipe", r == -1 && e == EPIPE, "returned %ld", r, e);

	/* EBADF: a socket that was closed, and -1. */
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	check("socket", fd >= 0, "returned %ld", fd, errno);
	check("close_ok", close(fd) == 0, "returned %ld", -1, errno);
	errno = 0;
	r = recv(fd, buf, sizeof(buf), 0);
	e = errno;
	check("recv_ebadf", r == -1 && e == EBADF, "returned %ld", r, e);
	errno = 0;
	r = read(fd, buf, sizeof(buf));
	e = errno;
	check("read_ebadf", r == -1 && e == EBADF, "returned %ld", r, e);
	errno = 0;
	r = close(-1);
	e = errno;
	check("close_minus1_ebadf", r == -1 && e == EBADF, "returned %ld", r,
	      e);
	errno = 0;
	r = close(fd);
	e = errno;
	check("close_twice_ebadf", r == -1 && e == EBADF, "returned %ld", r, e);

	/* ENOENT from connect, and the socket still usable afterwards. */
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	memset(&un, 0, sizeof(un));
	un.sun_family = AF_UNIX;
	snprintf(un.sun_path, sizeof(un.sun_path),
		 "/nonexistent-sockmeter-dir/none.sock");
	errno = 0;
	r = connect(fd, (struct sockaddr *)&un, sizeof(un));
	e = errno;
	check("connect_enoent", r == -1 && e == ENOENT, "returned %ld", r, e);
	close(fd);

	/* sendmsg with MSG_FASTOPEN and no msghdr: EFAULT, nothing read
	 * (the TCP Fast Open hook read msg_name and crashed). */
	fd = socket(AF_INET, SOCK_STREAM, 0);
	errno = 0;
	r = sendmsg(fd, NULL, MSG_FASTOPEN);
	e = errno;
	check("sendmsg_fastopen_null_efault", r == -1 && e == EFAULT,
	      "returned %ld", r, e);
	close(fd);

	/* The first calls on fds made behind the preload's back classify
	 * them (fstat, getsockopt, getsockname...): errno must survive. */
	if (syscall(SYS_socketpair, AF_UNIX, SOCK_STREAM, 0, raw) != 0)
		return 100;
	errno = 4242;
	r = write(raw[0], buf, RAW_BYTES);
	e = errno;
	check("write_unseen_fd", r == RAW_BYTES && e == 4242, "returned %ld", r,
	      e);
	errno = 4242;
	r = read(raw[1], buf, sizeof(buf));
	e = errno;
	check("read_unseen_fd", r == RAW_BYTES && e == 4242, "returned %ld", r,
	      e);

	printf("again_fd=%d\nintr_fd=%d\npipe_fd=%d\nok_fd=%d\n", a[1], b[1],
	       c[0], a[0]);
	printf("raw_out_fd=%d\nraw_in_fd=%d\nraw_bytes=%d\n", raw[0], raw[1],
	       RAW_BYTES);
	printf("ok_bytes=%d\nfailed=%d\n", OK_BYTES, failed);
	close(raw[0]);
	close(raw[1]);
	close(a[0]);
	close(a[1]);
	close(b[0]);
	close(b[1]);
	close(c[0]);
	return failed;
}
