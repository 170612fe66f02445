/*
 * sigexit.c - a process ended by a signal handler that cut a data call
 * short (PostgreSQL's quickdie: SIGQUIT, then _exit): the call had moved
 * bytes the wrapper never got back to count.
 *
 *   sigexit CALL HANDLER END
 *     CALL     send | write | sendmsg | recv (recv: MSG_WAITALL)
 *     HANDLER  plain (sigaction, no SA_SIGINFO) | info (SA_SIGINFO) |
 *              signal (signal())
 *     END      _exit | exit | longjmp (the first handler leaves by
 *              siglongjmp; the program then loops on fcntl(F_GETFL) on the
 *              socket, whose result must never pass for bytes, until a
 *              second alarm's handler calls _exit); or the handler ends
 *              the process with a signal (SIGALRM set back to its default
 *              action first, as PHP does):
 *              raise (raise(SIGALRM) after unblocking it: dies in raise),
 *              unblock (raise while blocked, then sigprocmask unblocks:
 *              dies there), pthread (the same with pthread_sigmask),
 *              kill (kill(getpid(), SIGTERM), SIGTERM default: dies in
 *              kill), sigqueue and tgkill (syscall()) as raise,
 *              rawmask (as unblock, with syscall(SYS_rt_sigprocmask)),
 *              sigsuspend (raise while blocked, then sigsuspend with an
 *              empty mask: dies there), abort (dies of SIGABRT in abort),
 *              efault (a bad set given to the raw rt_sigprocmask and
 *              rt_sigsuspend fails with EFAULT, one that runs onto an
 *              unmapped page too, then as raise),
 *              abort_handled (as abort, with a handler of SIGABRT that
 *              returns: glibc sets the default action and raises again),
 *              abort_jump (a handler of SIGABRT that siglongjmps back into
 *              this handler, which returns: the program lives on and exits
 *              3 as survive does; the call must be counted once),
 *              suspend_survive (SIGTERM and SIGUSR1 pending and blocked,
 *              sigsuspend with an empty mask delivers SIGUSR1 first, whose
 *              handler blocks SIGTERM, and the mask from before keeps it
 *              blocked, as main blocks it from the start: lives on,
 *              exits 3, counted once), suspend_die (the same, but
 *              SIGUSR1's handler blocks nothing and main does not block
 *              SIGTERM: the kernel delivers SIGTERM right after setting up
 *              SIGUSR1's handler: dies), suspend_ign (SIGHUP ignored and
 *              SIGTERM pending: SIGHUP is dropped, SIGTERM kills),
 *              suspend_shared (as suspend_survive with SIGHUP sent to the
 *              process and SIGUSR1 to the thread, which the kernel takes
 *              first: lives on),
 *              sigreturn (raise while blocked and return: dies as
 *              the kernel's sigreturn unblocks it), chain (php-fpm's
 *              SIGQUIT then SIGTERM: the handler sends SIGTERM, blocked
 *              meanwhile, and returns; SIGTERM is delivered as it
 *              returns, at the same place, and its handler, all signals
 *              blocked as PHP's, sets it back to default, unblocks it and
 *              kills its own process with it), survive (as raise, for
 *              a pid namespace's init, which lives on: once the call cut
 *              short returns, the program lets the peer read, waits for
 *              it and exits 3; the call must be counted once)
 *
 * A forked child is the peer over loopback TCP.  For the sending calls it
 * reads nothing until the parent is gone, so the parent's call blocks with
 * part of its buffer taken; for recv it sends PEER_BYTES and waits, so the
 * parent's recv(MSG_WAITALL) blocks with them in its buffer.  alarm(1)'s
 * SIGALRM runs the handler, which ends the process.  The child then prints
 * what really moved: "moved=N" (everything it read, or PEER_BYTES).
 * The parent prints "pid=P" before it starts, nothing after the signal;
 * its log must say the same N.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHUNK 1000003
#define PEER_BYTES 300007

static int end_with_exit, end_with_jump;
static volatile sig_atomic_t survived;
static const char *end_how;
static sigjmp_buf jump;
static volatile sig_atomic_t jumped;

/* sig back to its default action; s: the set of sig alone. */
static void to_default(int sig, sigset_t *s)
{
	signal(sig, SIG_DFL);
	sigemptyset(s);
	sigaddset(s, sig);
}

/* abort_handled's and abort_jump's SIGABRT handlers. */
static sigjmp_buf abort_jump;

static void on_abrt_return(int sig)
{
	(void)sig;
}

static void on_abrt_jump(int sig)
{
	(void)sig;
	siglongjmp(abort_jump, 1);
}

/* suspend_survive's SIGUSR1 handler. */
static void on_usr1(int sig)
{
	(void)sig;
}

/* SIGUSR1's handler, with every signal blocked while it runs. */
static void usr1_blocking_all(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigfillset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
}

/* The suspend_* modes: block a and b, make both pending (a sent to the
 * process when a_to_process, else raised; then b raised), and wait in
 * sigsuspend with an empty mask. */
static void pend_and_suspend(int a, int a_to_process, int b)
{
	sigset_t t, none;

	sigemptyset(&t);
	sigaddset(&t, a);
	sigaddset(&t, b);
	sigprocmask(SIG_BLOCK, &t, NULL);
	if (a_to_process)
		kill(getpid(), a);
	else
		raise(a);
	raise(b);
	sigemptyset(&none);
	sigsuspend(&none);
}

/* chain's second handler: PHP's. */
static void on_term(int sig)
{
	sigset_t s;

	to_default(sig, &s);
	sigprocmask(SIG_UNBLOCK, &s, NULL);
	kill(getpid(), sig);
	_exit(4);
}

/* The handler ends the process with sig, as END says. */
static void end_by_signal(int sig)
{
	sigset_t s;

	to_default(sig, &s);
	if (!strcmp(end_how, "raise")) {
		sigprocmask(SIG_UNBLOCK, &s, NULL);
		raise(sig);
	} else if (!strcmp(end_how, "unblock")) {
		raise(sig);
		sigprocmask(SIG_UNBLOCK, &s, NULL);
	} else if (!strcmp(end_how, "pthread")) {
		raise(sig);
		pthread_sigmask(SIG_UNBLOCK, &s, NULL);
	} else if (!strcmp(end_how, "kill")) {
		signal(SIGTERM, SIG_DFL);
		kill(getpid(), SIGTERM);
	} else if (!strcmp(end_how, "sigqueue")) {
		union sigval v = {.sival_int = 1};

		sigprocmask(SIG_UNBLOCK, &s, NULL);
		sigqueue(getpid(), sig, v);
	} else if (!strcmp(end_how, "tgkill")) {
		sigprocmask(SIG_UNBLOCK, &s, NULL);
		syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), sig);
	} else if (!strcmp(end_how, "rawmask")) {
		raise(sig);
		syscall(SYS_rt_sigprocmask, SIG_UNBLOCK, &s, NULL, 8);
	} else if (!strcmp(end_how, "sigsuspend")) {
		sigset_t none;

		raise(sig);
		sigemptyset(&none);
		sigsuspend(&none);
	} else if (!strcmp(end_how, "abort")) {
		abort();
	} else if (!strcmp(end_how, "abort_handled")) {
		signal(SIGABRT, on_abrt_return);
		abort();
	} else if (!strcmp(end_how, "efault")) {
		/* A bad set is the kernel's EFAULT, as without the preload
		 * (which must not read it itself), then as raise. */
		const sigset_t *bad = (const sigset_t *)16;

		errno = 0;
		if (syscall(SYS_rt_sigprocmask, SIG_UNBLOCK, bad, NULL, 8) !=
			    -1 ||
		    errno != EFAULT)
			_exit(5);
		errno = 0;
		if (syscall(SYS_rt_sigsuspend, bad, 8) != -1 || errno != EFAULT)
			_exit(5);
		/* And a set whose last 4 bytes are on an unmapped page. */
		{
			long pg = sysconf(_SC_PAGESIZE);
			char *two = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE,
					 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

			if (two == MAP_FAILED || munmap(two + pg, pg))
				_exit(5);
			bad = (const sigset_t *)(two + pg - 4);
			errno = 0;
			if (syscall(SYS_rt_sigprocmask, SIG_UNBLOCK, bad, NULL,
				    8) != -1 ||
			    errno != EFAULT)
				_exit(5);
			errno = 0;
			if (syscall(SYS_rt_sigsuspend, bad, 8) != -1 ||
			    errno != EFAULT)
				_exit(5);
		}
		sigprocmask(SIG_UNBLOCK, &s, NULL);
		raise(sig);
	} else if (!strcmp(end_how, "suspend_survive")) {
		/* SIGTERM (default action) and SIGUSR1 pending, blocked;
		 * sigsuspend delivers SIGUSR1 first (the lower number), whose
		 * handler blocks everything, and the mask from before comes
		 * back as it returns: SIGTERM stays pending, the process
		 * lives on. */
		usr1_blocking_all();
		pend_and_suspend(SIGTERM, 0, SIGUSR1);
		survived = 1;
		return;
	} else if (!strcmp(end_how, "suspend_die")) {
		/* As suspend_survive, but SIGUSR1's handler (signal(): no
		 * mask) does not block SIGTERM: the kernel sets up SIGUSR1's
		 * frame, then delivers SIGTERM before the thread runs again:
		 * dies of SIGTERM. */
		signal(SIGUSR1, on_usr1);
		pend_and_suspend(SIGTERM, 0, SIGUSR1);
		_exit(4);
	} else if (!strcmp(end_how, "suspend_ign")) {
		/* SIGHUP ignored but pending (blocked), SIGTERM pending: the
		 * kernel discards SIGHUP and delivers SIGTERM. */
		signal(SIGHUP, SIG_IGN);
		pend_and_suspend(SIGTERM, 0, SIGHUP);
		_exit(4);
	} else if (!strcmp(end_how, "suspend_shared")) {
		/* suspend_survive with the fatal signal (SIGHUP, a lower
		 * number than SIGUSR1) sent to the process and SIGUSR1 to
		 * the thread: the kernel takes the thread's first, whose
		 * handler blocks SIGHUP, which main keeps blocked. */
		usr1_blocking_all();
		pend_and_suspend(SIGHUP, 1, SIGUSR1);
		survived = 1;
		return;
	} else if (!strcmp(end_how, "abort_jump")) {
		/* Back here from SIGABRT's handler: the process lives on,
		 * and this handler returns to the call it cut short. */
		signal(SIGABRT, on_abrt_jump);
		if (!sigsetjmp(abort_jump, 1))
			abort();
		survived = 1;
		return;
	} else if (!strcmp(end_how, "sigreturn")) {
		raise(sig);
		return;
	} else if (!strcmp(end_how, "survive")) {
		/* As raise; a pid namespace's init lives on (the signal is
		 * not sent), and the program ends once the call returns. */
		sigprocmask(SIG_UNBLOCK, &s, NULL);
		raise(sig);
		survived = 1;
		return;
	} else if (!strcmp(end_how, "chain")) {
		struct sigaction sa;
		sigset_t t;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_term;
		sigfillset(&sa.sa_mask);
		sigaction(SIGTERM, &sa, NULL);
		sigemptyset(&t);
		sigaddset(&t, SIGTERM);
		pthread_sigmask(SIG_BLOCK, &t, NULL);
		kill(getpid(), SIGTERM);
		return;
	}
	_exit(4); /* still alive: the test sees status 4 */
}

static void ending(int sig)
{
	if (end_with_jump && !jumped) {
		jumped = 1;
		siglongjmp(jump, 1);
	}
	if (strcmp(end_how, "exit") && strcmp(end_how, "_exit") &&
	    strcmp(end_how, "longjmp")) {
		end_by_signal(sig);
		return;
	}
	if (end_with_exit)
		exit(3);
	_exit(3);
}

static void on_plain(int sig)
{
	ending(sig);
}

static void on_info(int sig, siginfo_t *si, void *uc)
{
	(void)si;
	(void)uc;
	ending(sig);
}

static void die(const char *what)
{
	perror(what);
	_exit(2);
}

int main(int argc, char **argv)
{
	static char buf[8 << 20];
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t alen = sizeof(a);
	int l, c, fd, sending, go[2];
	pid_t peer, parent;

	if (argc != 4)
		return 2;
	sending = strcmp(argv[1], "recv") != 0;
	end_how = argv[3];
	end_with_exit = strcmp(argv[3], "exit") == 0;
	end_with_jump = strcmp(argv[3], "longjmp") == 0;
	if (!strcmp(end_how, "suspend_survive") ||
	    !strcmp(end_how, "suspend_shared")) {
		/* SIGTERM (SIGHUP) blocked outside its waits, as PostgreSQL
		 * does: the mask the handler returns to keeps it blocked. */
		sigset_t t;

		sigemptyset(&t);
		sigaddset(&t, strcmp(end_how, "suspend_shared") ? SIGTERM
								: SIGHUP);
		sigprocmask(SIG_BLOCK, &t, NULL);
	}
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	l = socket(AF_INET, SOCK_STREAM, 0);
	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) ||
	    listen(l, 1) || getsockname(l, (struct sockaddr *)&a, &alen))
		die("listen");
	fflush(stdout);
	parent = getpid();
	if (pipe(go))
		die("pipe");
	peer = fork();
	if (peer < 0)
		die("fork");
	if (peer == 0) {
		long long moved = 0;
		ssize_t r;

		c = accept(l, NULL, NULL);
		if (c < 0)
			die("accept");
		if (sending) {
			/* Nothing read until the parent is gone (its end
			 * closes when it dies: EOF after the last byte). */
			struct pollfd p = { .fd = go[0], .events = POLLIN };

			close(go[1]);
			/* (A parent that is a pid namespace's init is 1.) */
			while (getppid() == parent && poll(&p, 1, 20) == 0)
				;
			while ((r = read(c, buf, sizeof(buf))) > 0)
				moved += r;
		} else {
			memset(buf, 'x', PEER_BYTES);
			if (write(c, buf, PEER_BYTES) != PEER_BYTES)
				die("write");
			moved = PEER_BYTES;
			while (read(c, buf, sizeof(buf)) > 0)
				;
		}
		printf("moved=%lld\n", moved);
		return 0;
	}
	close(l);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)))
		die("connect");
	if (strcmp(argv[2], "plain") == 0 || strcmp(argv[2], "info") == 0) {
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		if (strcmp(argv[2], "info") == 0) {
			sa.sa_sigaction = on_info;
			sa.sa_flags = SA_SIGINFO;
		} else {
			sa.sa_handler = on_plain;
		}
		sigaction(SIGALRM, &sa, NULL);
	} else {
		signal(SIGALRM, on_plain);
	}
	printf("pid=%d\n", (int)getpid());
	fflush(stdout);
	memset(buf, 'y', CHUNK);
	if (sigsetjmp(jump, 1)) {
		alarm(1);
		for (;;)
			if (fcntl(fd, F_GETFL) < 0)
				die("fcntl");
	}
	alarm(1);
	for (;;) {
		ssize_t r;

		if (!sending) {
			r = recv(fd, buf, sizeof(buf), MSG_WAITALL);
		} else if (strcmp(argv[1], "write") == 0) {
			r = write(fd, buf, CHUNK);
		} else if (strcmp(argv[1], "sendmsg") == 0) {
			struct iovec v = { buf, CHUNK };
			struct msghdr m = { .msg_iov = &v, .msg_iovlen = 1 };

			r = sendmsg(fd, &m, 0);
		} else {
			r = send(fd, buf, CHUNK, 0);
		}
		if (r < 0)
			die("data call");
		if (survived) {
			/* The peer reads (or gets EOF) now; its moved= is
			 * printed before it ends. */
			shutdown(fd, SHUT_WR);
			if (write(go[1], "g", 1) != 1)
				die("go");
			waitpid(peer, NULL, 0);
			exit(3);
		}
	}
}
