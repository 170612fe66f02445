/*
 * lateexit MODE - a program whose exit runs an exit handler after the
 * library's (tests/progs/deeplib/lateexit.c, preloaded after it: see
 * there).  main moves 2 bytes over a socketpair (the ticker starts), then
 *   lateexit pin    setresuid(-1, -1, -1) first (a credential call with
 *                   an explicit log path: the library keeps its log open,
 *                   and the exit record takes another path)
 *   lateexit plain  nothing more
 * and calls exit(0).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int d[2];
	char c[2];

	if (argc != 2)
		return 2;
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, d) != 0 ||
	    write(d[0], "hi", 2) != 2 || read(d[1], c, 2) != 2)
		return 3;
	if (!strcmp(argv[1], "pin"))
		setresuid((uid_t)-1, (uid_t)-1, (uid_t)-1);
	usleep(2000);
	exit(0);
}
