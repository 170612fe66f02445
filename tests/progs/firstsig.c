/*
 * firstsig - a signal right after the first data call on an fd the
 * process inherited (nobody classified it yet: the preload looks at it
 * after the call, a millisecond or two of system calls, a state file and
 * a thread).  The call's bytes must be counted whatever the signal does.
 *
 *   firstsig HOW DELAY_US
 *
 * Writes 4,096 bytes on fd 1 (a TCP socket the caller set up: bash's
 * /dev/tcp), SIGALRM due DELAY_US microseconds after the call began, then
 * waits.  HOW: "exit" - a handler calls _exit(0); "default" - SIGALRM at
 * its default action (the process dies of it).  Prints nothing (fd 1 is
 * the connection).
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

static void on_alarm(int sig)
{
	(void)sig;
	_exit(0);
}

int main(int argc, char **argv)
{
	static char buf[4096];
	struct sigaction sa;
	struct itimerval it = {{0, 0}, {0, 0}};
	long us;

	if (argc != 3)
		return 2;
	us = atol(argv[2]);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	if (strcmp(argv[1], "exit") == 0 && sigaction(SIGALRM, &sa, NULL) != 0)
		return 2;
	memset(buf, 'w', sizeof(buf));
	it.it_value.tv_sec = us / 1000000;
	it.it_value.tv_usec = us % 1000000;
	if (setitimer(ITIMER_REAL, &it, NULL) != 0)
		return 2;
	if (write(1, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
		return 3;
	for (;;)
		pause();
}
