/*
 * capdrop - a daemon's privilege dance with per-thread calls, as
 * proftpd's mod_cap makes it: a socket first (the preload's ticker thread
 * starts), then PR_SET_KEEPCAPS, setresuid to an unprivileged uid (caps
 * kept), capset to raise CAP_SETUID again (capset changes the calling
 * thread only), and setresuid(-1, 0, -1) back to root.  glibc applies
 * setresuid to every thread and aborts when they disagree: a thread
 * without the capability (the ticker, had it not been given the same
 * keepcaps and capabilities) makes the process abort.  Run as root:
 * capdrop [libc|raw [now]] (capset through libc or syscall(); "now": no
 * pause between the socket and the privilege calls).
 * Prints "ok euid=0" and exits 0, or says what failed.
 */
#include <linux/capability.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

int capset(cap_user_header_t hdr, const cap_user_data_t data);
int capget(cap_user_header_t hdr, cap_user_data_t data);

int main(int argc, char **argv)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];
	int sv[2], raw = argc > 1 && strcmp(argv[1], "raw") == 0;
	uid_t ru, eu, su;

	/* A metered fd, and traffic: the ticker runs. */
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0 ||
	    write(sv[0], "x", 1) != 1 || read(sv[1], d, 1) != 1) {
		perror("socketpair");
		return 1;
	}
	/* "now": at once, while a ticker just made may not run yet. */
	if (!(argc > 2 && strcmp(argv[2], "now") == 0))
		usleep(200000);
	if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) != 0) {
		perror("prctl");
		return 1;
	}
	if (setresuid(65534, 65534, 65534) != 0) {
		perror("setresuid(65534)");
		return 1;
	}
	memset(d, 0, sizeof(d));
	if (capget(&h, d) != 0) {
		perror("capget");
		return 1;
	}
	d[0].effective |= 1u << CAP_SETUID;
	if ((raw ? (int)syscall(SYS_capset, &h, d) : capset(&h, d)) != 0) {
		perror("capset");
		return 1;
	}
	if (setresuid((uid_t)-1, 0, (uid_t)-1) != 0) {
		perror("setresuid(-1, 0, -1)");
		return 1;
	}
	getresuid(&ru, &eu, &su);
	printf("ok euid=%u\n", (unsigned)eu);
	close(sv[0]);
	close(sv[1]);
	return 0;
}
