/*
 * secprobe - a small socket program to be run setuid, or not.
 *
 * Moves 5000 bytes through a unix socketpair, then prints
 *   mapped=0|1 secure=0|1 ruid=N euid=N moved=5000
 * (mapped: whether a library named *sockmeter* is in /proc/self/maps;
 * secure: getauxval(AT_SECURE), i.e. secure-execution mode) and exits 0.
 */
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/socket.h>
#include <unistd.h>

int main(void)
{
	char buf[5000], line[512];
	int sp[2], mapped = 0;
	long moved = 0;
	FILE *maps;

	memset(buf, 's', sizeof(buf));
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sp) ||
	    send(sp[0], buf, sizeof(buf), 0) != (ssize_t)sizeof(buf))
		return 2;
	while (moved < (long)sizeof(buf)) {
		ssize_t r = recv(sp[1], buf, sizeof(buf), 0);

		if (r <= 0)
			return 2;
		moved += r;
	}
	close(sp[0]);
	close(sp[1]);
	maps = fopen("/proc/self/maps", "r");
	while (maps && fgets(line, sizeof(line), maps))
		if (strstr(line, "sockmeter"))
			mapped = 1;
	if (maps)
		fclose(maps);
	printf("mapped=%d secure=%lu ruid=%d euid=%d moved=%ld\n", mapped,
	       getauxval(AT_SECURE), (int)getuid(), (int)geteuid(), moved);
	return 0;
}
