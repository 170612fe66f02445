/*
 * fullio.h - the benchmarks' whole read or write (churngen, loadgen).
 * The includer defines die(const char *what), which reports and exits.
 */
#ifndef SOCKMETER_BENCH_FULLIO_H
#define SOCKMETER_BENCH_FULLIO_H

#include <stddef.h>
#include <sys/types.h>
#include <unistd.h>

static void die(const char *what);

/* All n bytes of buf written to fd (out) or read from it, else die. */
static void full_io(int fd, char *buf, size_t n, int out)
{
	size_t done = 0;

	while (done < n) {
		ssize_t r = out ? write(fd, buf + done, n - done)
				: read(fd, buf + done, n - done);

		if (r <= 0)
			die(out ? "write" : "read");
		done += (size_t)r;
	}
}

#endif
