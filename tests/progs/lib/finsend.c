/*
 * finsend.c - libfinsend.so, the library of tests/progs/finsend.c: what
 * a program's own shared library sends at exit, after main has returned.
 * Its destructor sends FINSEND_DTOR bytes.  Its constructor registers a
 * handler tied to this library, as g++ does for a C++ static object's
 * destructor (__cxa_atexit with the library's __dso_handle, run by
 * __cxa_finalize from crtstuff's destructor, after the library's other
 * destructors): it sends FINSEND_CXX bytes and closes the socket, as an
 * object owning a connection would.  Both run within glibc's _dl_fini,
 * after main.
 */
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../finsend.h"

extern void *__dso_handle;
extern int __cxa_atexit(void (*fn)(void *), void *arg, void *dso);

static int g_fd = -1;

static void send_all(size_t n)
{
	char buf[512];

	memset(buf, 'f', sizeof(buf));
	while (n > 0 && g_fd >= 0) {
		ssize_t r = send(g_fd, buf, n < sizeof(buf) ? n : sizeof(buf),
				 MSG_NOSIGNAL);

		if (r <= 0)
			return;
		n -= (size_t)r;
	}
}

void finsend_keep(int fd)
{
	g_fd = fd;
}

static void like_static_object(void *arg)
{
	(void)arg;
	send_all(FINSEND_CXX);
	if (g_fd >= 0)
		close(g_fd);
	g_fd = -1;
}

__attribute__((constructor)) static void finsend_init(void)
{
	__cxa_atexit(like_static_object, NULL, &__dso_handle);
}

__attribute__((destructor)) static void finsend_fini(void)
{
	send_all(FINSEND_DTOR);
}
