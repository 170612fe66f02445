/*
 * sigedge.c - signal handlers in the ways the library's trampolines
 * (preload/wrap_signals.c) must not change or miscount.
 *
 *   sigedge restart       a blocking send on a socketpair is interrupted
 *                         by an SA_RESTART handler while it has moved
 *                         nothing (the kernel restarts it), then cut short
 *                         by a SIGTERM handler that calls _exit(3).  The
 *                         peer (a forked child) prints "moved=N" once the
 *                         parent is gone: the parent's exit record must
 *                         say N out.
 *   sigedge altstack      a SIGALRM handler on the normal stack cuts a
 *                         blocking send short and raises SIGUSR2, whose
 *                         handler runs on an alternate stack that lies
 *                         above it (an array in main's frame).  Prints
 *                         "sent=N"; the fd's close record must say N in
 *                         one call (not twice).
 *   sigedge handlerstart  the same two handlers; the inner one makes the
 *                         process's first socket.  Prints "threads=B,A",
 *                         the threads before and after it: no thread may
 *                         start inside a handler (A = B).
 *   sigedge plainargs     handlers installed without SA_SIGINFO (signal()
 *                         and sigaction) that read the siginfo's place
 *                         and the ucontext the kernel passes every
 *                         handler on x86-64, and skip a faulting load by
 *                         moving rip.
 *                         Prints "plainargs ok" or the first failure.
 *   sigedge installrace   a thread signals main without pause while main
 *                         switches SIGUSR1 between a handler installed
 *                         with SIGUSR2 in sa_mask and one without: the
 *                         first may never run with SIGUSR2 unblocked.
 *                         Prints "unmasked=K of R".
 *   sigedge jumpagain     a SIGALRM handler (SA_RESTART) that leaves by
 *                         siglongjmp, twice out of a MSG_WAITALL recv
 *                         from the same place: first while it has moved
 *                         nothing (the kernel was to restart it), then
 *                         after it took 1000 bytes (the peer wrote them
 *                         in between).  Prints "received=N" (1000 less
 *                         what is left unread); the fd's close record
 *                         must say N in.
 *   sigedge reinstall     main installs SIGUSR1's handler A with SIGUSR2
 *                         in sa_mask, again and again, while a SIGALRM
 *                         handler (a timer every 20 us) installs B with
 *                         an empty mask: read back with every signal
 *                         blocked, the action is always one install's
 *                         whole.  Prints "mixed=K of R" (R: 300,000 rounds,
 *                         or those of 8 s).
 */
#include <dirent.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

static char buf[4 << 20];

static void on_nothing(int sig)
{
	(void)sig;
}

static void on_term_exit(int sig)
{
	(void)sig;
	_exit(3);
}

static void install(int sig, void (*fn)(int), int flags)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = fn;
	sa.sa_flags = flags;
	sigemptyset(&sa.sa_mask);
	if (sigaction(sig, &sa, NULL) != 0) {
		perror("sigaction");
		exit(2);
	}
}

static sigjmp_buf jump_back;

static void on_alarm_jump(int sig)
{
	(void)sig;
	siglongjmp(jump_back, 1);
}

/* One MSG_WAITALL recv of more than will come, left by the handler 0.3 s
 * later.  Always from this one place: the same stack pointer each time. */
static __attribute__((noinline)) void recv_until_alarm(int fd)
{
	struct itimerval it = { { 0, 0 }, { 0, 300000 } };

	if (sigsetjmp(jump_back, 1) == 0) {
		setitimer(ITIMER_REAL, &it, NULL);
		recv(fd, buf, sizeof(buf), MSG_WAITALL);
		fprintf(stderr, "recv returned: no SIGALRM came\n");
		exit(1);
	}
}

static int jumpagain(void)
{
	int sv[2], unread = -1;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
		return 2;
	install(SIGALRM, on_alarm_jump, SA_RESTART);
	recv_until_alarm(sv[0]);
	memset(buf, 'j', 1000);
	if (write(sv[1], buf, 1000) != 1000)
		return 2;
	recv_until_alarm(sv[0]);
	if (ioctl(sv[0], FIONREAD, &unread) != 0)
		return 2;
	printf("received=%d\n", 1000 - unread);
	close(sv[0]);
	close(sv[1]);
	return 0;
}

static int restart(void)
{
	int sv[2], ready[2];
	pid_t parent = getpid();
	long long filled = 0;
	ssize_t r;
	char c = 0;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0 || pipe(ready) != 0)
		return 2;
	install(SIGUSR1, on_nothing, SA_RESTART);
	install(SIGTERM, on_term_exit, 0);
	if (fork() == 0) {
		long long moved = 0;

		close(sv[0]);
		if (read(ready[0], &c, 1) != 1)
			_exit(2);
		/* The parent is about to block in send with nothing moved:
		 * an SA_RESTART handler, and the kernel restarts the call. */
		usleep(200000);
		kill(parent, SIGUSR1);
		usleep(200000);
		while (moved < 300000 &&
		       (r = read(sv[1], buf, 300000 - moved)) > 0)
			moved += r;
		/* Now the send has part of its buffer out. */
		usleep(200000);
		kill(parent, SIGTERM);
		while ((r = read(sv[1], buf, sizeof(buf))) > 0)
			moved += r;
		printf("moved=%lld\n", moved);
		_exit(0);
	}
	close(sv[1]);
	while ((r = send(sv[0], buf, 65536, MSG_DONTWAIT)) > 0)
		filled += r;
	printf("pid=%d\nfilled=%lld\n", (int)getpid(), filled);
	fflush(stdout);
	if (write(ready[1], &c, 1) != 1)
		return 2;
	r = send(sv[0], buf, sizeof(buf), 0);
	fprintf(stderr, "send returned %zd: no SIGTERM came\n", r);
	return 1;
}

static int threads(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

static volatile int inner_ran, threads_before, threads_after, make_socket;

static void on_inner(int sig)
{
	(void)sig;
	if (make_socket) {
		threads_before = threads();
		if (socket(AF_INET, SOCK_DGRAM, 0) < 0)
			threads_before = -1;
		threads_after = threads();
	}
	inner_ran = 1;
}

static void on_outer(int sig)
{
	(void)sig;
	raise(SIGUSR2);
}

static int altstack(int socket_inside)
{
	char altbuf[64 * 1024];
	stack_t ss = { .ss_sp = altbuf, .ss_size = sizeof(altbuf) };
	int sv[2];
	ssize_t r;

	make_socket = socket_inside;
	if (sigaltstack(&ss, NULL) != 0) {
		perror("sigaltstack");
		return 2;
	}
	install(SIGUSR2, on_inner, SA_ONSTACK);
	install(SIGALRM, on_outer, 0);
	if (socket_inside) {
		raise(SIGALRM);
		printf("threads=%d,%d\ninner=%d\n", threads_before,
		       threads_after, inner_ran);
		return 0;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
		return 2;
	if (fork() == 0) {
		close(sv[0]);
		sleep(2);
		while (read(sv[1], buf, sizeof(buf)) > 0)
			;
		_exit(0);
	}
	close(sv[1]);
	alarm(1);
	r = send(sv[0], buf, sizeof(buf), 0);
	printf("sent=%zd\ninner=%d\n", r, inner_ran);
	close(sv[0]);
	wait(NULL);
	return 0;
}

#if defined(__x86_64__)
extern char sigedge_fault[], sigedge_after[];
static const char *plain_failure;
static volatile int skipped;

static void on_plain_args(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;
	char here;
	uintptr_t sp;

	/* Without SA_SIGINFO the kernel does not fill the siginfo, but
	 * passes where it is: right after the ucontext in its frame. */
	if ((uintptr_t)si <= (uintptr_t)uc ||
	    (uintptr_t)si - (uintptr_t)uc > 4096) {
		plain_failure = "the second argument is not the siginfo's place";
		if (sig == SIGSEGV) /* else it faults again, for ever */
			_exit(1);
		return;
	}
	sp = uc ? (uintptr_t)uc->uc_mcontext.gregs[REG_RSP] : 0;
	if (sp < (uintptr_t)&here || sp - (uintptr_t)&here > 65536)
		plain_failure = "the third argument is not the ucontext";
	if (plain_failure && sig == SIGSEGV)
		_exit(1);
	else if (sig == SIGSEGV &&
		 uc->uc_mcontext.gregs[REG_RIP] == (greg_t)sigedge_fault) {
		uc->uc_mcontext.gregs[REG_RIP] = (greg_t)sigedge_after;
		skipped++;
	}
}

/* A load from address 0, which the handler skips. */
static __attribute__((noinline)) void fault(void)
{
	__asm__ volatile("xor %%eax, %%eax\n"
			 ".globl sigedge_fault\nsigedge_fault: movl (%%rax), %%eax\n"
			 ".globl sigedge_after\nsigedge_after: nop\n" ::
				 : "rax", "memory");
}

static int plainargs(void)
{
	typedef void (*plain)(int);
	struct sigaction sa;

	signal(SIGUSR1, (plain)(void (*)(void))on_plain_args);
	raise(SIGUSR1);
	signal(SIGSEGV, (plain)(void (*)(void))on_plain_args);
	fault();
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = (plain)(void (*)(void))on_plain_args;
	sigaction(SIGSEGV, &sa, NULL);
	fault();
	if (!plain_failure && skipped != 2)
		plain_failure = "the faulting load was not skipped";
	printf("plainargs %s\n", plain_failure ? plain_failure : "ok");
	return plain_failure != NULL;
}
#else
static int plainargs(void)
{
	printf("plainargs ok\n");
	return 0;
}
#endif

static volatile long runs_masked, unmasked;
static volatile int stop;
static pthread_t main_thread;

static void on_masked(int sig)
{
	sigset_t now;

	(void)sig;
	pthread_sigmask(SIG_BLOCK, NULL, &now);
	runs_masked++;
	if (!sigismember(&now, SIGUSR2))
		unmasked++;
}

static void *pinger(void *arg)
{
	(void)arg;
	while (!stop)
		pthread_kill(main_thread, SIGUSR1);
	return NULL;
}

static int installrace(void)
{
	struct sigaction plain_sa, masked_sa;
	pthread_t t;
	long i;

	memset(&plain_sa, 0, sizeof(plain_sa));
	memset(&masked_sa, 0, sizeof(masked_sa));
	plain_sa.sa_handler = on_nothing;
	sigemptyset(&plain_sa.sa_mask);
	masked_sa.sa_handler = on_masked;
	sigemptyset(&masked_sa.sa_mask);
	sigaddset(&masked_sa.sa_mask, SIGUSR2);
	main_thread = pthread_self();
	sigaction(SIGUSR1, &plain_sa, NULL);
	if (pthread_create(&t, NULL, pinger, NULL) != 0)
		return 2;
	for (i = 0; i < 20000; i++) {
		sigaction(SIGUSR1, &masked_sa, NULL);
		sigaction(SIGUSR1, &plain_sa, NULL);
	}
	stop = 1;
	pthread_join(t, NULL);
	printf("unmasked=%ld of %ld\n", unmasked, runs_masked);
	return 0;
}

static void on_a(int sig)
{
	(void)sig;
}

static void on_b(int sig)
{
	(void)sig;
}

static void on_alarm_install(int sig)
{
	struct sigaction b;

	(void)sig;
	memset(&b, 0, sizeof(b));
	b.sa_handler = on_b;
	sigemptyset(&b.sa_mask);
	sigaction(SIGUSR1, &b, NULL);
}

static int reinstall(void)
{
	struct itimerval every = { { 0, 20 }, { 0, 20 } }, off = { { 0, 0 },
								  { 0, 0 } };
	struct sigaction a, o;
	struct timespec t0, t;
	long i, mixed = 0;

	install(SIGALRM, on_alarm_install, 0);
	memset(&a, 0, sizeof(a));
	a.sa_handler = on_a;
	sigemptyset(&a.sa_mask);
	sigaddset(&a.sa_mask, SIGUSR2);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	setitimer(ITIMER_REAL, &every, NULL);
	/* Bounded in time too: a timer of 20 us keeps the process in the
	 * kernel, and on a loaded machine 300,000 rounds took over the
	 * test's 30 s (a pass then failed as a timeout). */
	for (i = 0; i < 300000; i++) {
		sigset_t all, was;

		if (i % 1024 == 1023) {
			clock_gettime(CLOCK_MONOTONIC, &t);
			if (t.tv_sec - t0.tv_sec >= 8)
				break;
		}

		sigaction(SIGUSR1, &a, NULL);
		sigfillset(&all);
		sigprocmask(SIG_BLOCK, &all, &was);
		sigaction(SIGUSR1, NULL, &o);
		sigprocmask(SIG_SETMASK, &was, NULL);
		if ((o.sa_handler == on_a) !=
		    (sigismember(&o.sa_mask, SIGUSR2) == 1))
			mixed++;
	}
	setitimer(ITIMER_REAL, &off, NULL);
	printf("mixed=%ld of %ld\n", mixed, i);
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 2 && strcmp(argv[1], "restart") == 0)
		return restart();
	if (argc == 2 && strcmp(argv[1], "altstack") == 0)
		return altstack(0);
	if (argc == 2 && strcmp(argv[1], "handlerstart") == 0)
		return altstack(1);
	if (argc == 2 && strcmp(argv[1], "plainargs") == 0)
		return plainargs();
	if (argc == 2 && strcmp(argv[1], "installrace") == 0)
		return installrace();
	if (argc == 2 && strcmp(argv[1], "reinstall") == 0)
		return reinstall();
	if (argc == 2 && strcmp(argv[1], "jumpagain") == 0)
		return jumpagain();
	fprintf(stderr,
		"usage: sigedge restart|altstack|handlerstart|plainargs|installrace|reinstall|jumpagain\n");
	return 2;
}
