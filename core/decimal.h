/*
 * decimal.h - whole numbers in decimal without printf: the ticker writes
 * them by the thousand per second (close records: summary.c; addresses:
 * classify.c), and vsnprintf's parsing of a format was most of their cost.
 */
#ifndef SOCKMETER_DECIMAL_H
#define SOCKMETER_DECIMAL_H

#include <stddef.h>
#include <stdint.h>

/* "00" to "99", two digits a division: half the divisions of one at a
 * time (callgrind: most of a close record's instructions were decimals). */
static const char dec_pairs[201] =
	"00010203040506070809101112131415161718192021222324252627282930313233"
	"34353637383940414243444546474849505152535455565758596061626364656667"
	"6869707172737475767778798081828384858687888990919293949596979899";

/* v in decimal at p, at least width digits (zero-padded, width <= 20);
 * returns how many were written (at most 20).  No terminating NUL.
 * Context: any thread and signal handler. */
static inline size_t put_dec(char *p, uint64_t v, unsigned width)
{
	char d[20];
	size_t n = 20, len, i;

	if (v < 10 && width <= 1) { /* most counters of a histogram: 0 */
		p[0] = (char)('0' + v);
		return 1;
	}
	while (v >= 100) {
		unsigned r = (unsigned)(v % 100);

		v /= 100;
		d[--n] = dec_pairs[2 * r + 1];
		d[--n] = dec_pairs[2 * r];
	}
	if (v >= 10) {
		d[--n] = dec_pairs[2 * v + 1];
		d[--n] = dec_pairs[2 * v];
	} else {
		d[--n] = (char)('0' + v);
	}
	while (20 - n < width && n > 0)
		d[--n] = '0';
	len = 20 - n;
	for (i = 0; i < len; i++)
		p[i] = d[n + i];
	return len;
}

#endif
