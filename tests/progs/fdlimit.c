/*
 * fdlimit - a program at its fd limit when it exits: the soft limit set
 * to 64, socketpairs made (3 bytes each way on each) until EMFILE, the
 * last numbers filled with /dev/null; then it returns from main with every
 * fd open.  Prints "pairs=N".  Its exit record must still be written (the
 * library's writer had no free number left in the program's table).
 */
#include <fcntl.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

int main(void)
{
	struct rlimit l = { 64, 64 };
	int sv[2], n = 0;
	char b[3];

	if (setrlimit(RLIMIT_NOFILE, &l) != 0) {
		perror("setrlimit");
		return 1;
	}
	while (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0) {
		if (write(sv[0], "abc", 3) != 3 || read(sv[1], b, 3) != 3)
			return 1;
		n++;
	}
	while (open("/dev/null", O_RDONLY) >= 0)
		;
	printf("pairs=%d\n", n);
	return 0;
}
