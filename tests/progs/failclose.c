/*
 * failclose - calls that would close an fd but fail leave it open, and its
 * connection goes on: on a socketpair (3, 4) 10 bytes each way, then
 * dup3(5, 3, bad flags) (EINVAL), close_range(3, 4, bad flags) (EINVAL),
 * dup2(5, 4) under a soft fd limit of 4 (EBADF), each followed by 5 more
 * bytes each way; then both ends are closed.  Prints each call's result and
 * errno ("dup3=-1/EINVAL ...") and exits 0 when every call failed as
 * expected and every byte arrived.  Truth: 25 bytes each way on one
 * connection per end.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

static int ping(int a, int b, size_t n)
{
	char buf[16] = "0123456789abcde";

	return write(a, buf, n) == (ssize_t)n && read(b, buf, n) == (ssize_t)n &&
	       write(b, buf, n) == (ssize_t)n && read(a, buf, n) == (ssize_t)n;
}

int main(void)
{
	struct rlimit old, low;
	int sv[2], nul, r, ok = 1;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0 || sv[0] != 3 ||
	    sv[1] != 4 || (nul = open("/dev/null", O_RDWR)) != 5) {
		fprintf(stderr, "failclose: expected fds 3, 4, 5\n");
		return 1;
	}
	ok &= ping(3, 4, 10);
	errno = 0;
	r = dup3(5, 3, 0x4000000);
	printf("dup3=%d/%s ", r, strerrorname_np(errno));
	ok &= r == -1 && errno == EINVAL && ping(3, 4, 5);
	errno = 0;
	r = (int)syscall(SYS_close_range, 3u, 4u, 0x80u);
	printf("close_range=%d/%s ", r, strerrorname_np(errno));
	ok &= r == -1 && errno == EINVAL && ping(3, 4, 5);
	errno = 0;
	r = close_range(3, 4, 0x80);
	printf("close_range_libc=%d/%s ", r, strerrorname_np(errno));
	ok &= r == -1 && errno == EINVAL;
	getrlimit(RLIMIT_NOFILE, &old);
	low = old;
	low.rlim_cur = 4;
	setrlimit(RLIMIT_NOFILE, &low);
	errno = 0;
	r = dup2(5, 4);
	printf("dup2=%d/%s\n", r, strerrorname_np(errno));
	setrlimit(RLIMIT_NOFILE, &old);
	ok &= r == -1 && errno == EBADF && ping(3, 4, 5);
	close(3);
	close(4);
	close(nul);
	return ok ? 0 : 1;
}
