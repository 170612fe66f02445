/*
 * decimal.h - whole numbers in decimal without printf: the ticker writes
 * them by the thousand per second (close records: summary.c; addresses:
 * classify.c), and vsnprintf's parsing of a format was most of their cost.
 */
#ifndef SOCKMETER_DECIMAL_H
#define SOCKMETER_DECIMAL_H

#include <stddef.h>
#include <stdint.h>

/* v in decimal at p, at least width digits (zero-padded, width <= 20);
 * returns how many were written (at most 20).  No terminating NUL.
 * Context: any thread and signal handler. */
static inline size_t put_dec(char *p, uint64_t v, unsigned width)
{
	char d[20];
	size_t n = 0, i;

	if (v < 10 && width <= 1) { /* most counters of a histogram: 0 */
		p[0] = (char)('0' + v);
		return 1;
	}
	do {
		d[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v || n < width);
	for (i = 0; i < n; i++)
		p[i] = d[n - 1 - i];
	return n;
}

#endif
