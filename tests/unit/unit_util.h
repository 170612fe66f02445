/*
 * unit_util.h - small helpers shared by the unit tests: a deterministic
 * random generator, temporary directories, reading a log file back and
 * picking numbers out of JSON lines.  Everything is static inline so a test
 * that does not use a helper does not warn about it.
 */
#ifndef SOCKMETER_UNIT_UTIL_H
#define SOCKMETER_UNIT_UTIL_H

#include <arpa/inet.h>
#include <check.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#define NS_PER_S 1000000000ull

/* xorshift64*: tiny, deterministic, the same on every libc. */
static inline uint64_t uu_rand(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * 2685821657736338717ull;
}

/* A uniform-enough number in 0 .. n-1 (n > 0). */
static inline uint64_t uu_below(uint64_t *state, uint64_t n)
{
	return uu_rand(state) % n;
}

/*
 * Temporary directories.  A failing Check test ends its process at once,
 * without its checked teardown, so per-test directories live under one
 * root per TCase that an unchecked fixture (run in the runner process)
 * removes whatever happened: tcase_add_unchecked_fixture(tc, uu_root_setup,
 * uu_root_teardown).
 */
static inline char *uu_root(void)
{
	static char root[64];

	return root;
}

/* Remove a directory and everything in it. */
static inline void uu_rmtree(const char *dir)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
}

static inline void uu_root_setup(void)
{
	char *root = uu_root();

	snprintf(root, 64, "/tmp/sockmeter-unit-XXXXXX");
	if (!mkdtemp(root))
		root[0] = '\0';
}

static inline void uu_root_teardown(void)
{
	char *root = uu_root();

	if (root[0])
		uu_rmtree(root);
	root[0] = '\0';
}

/* Make a fresh private directory (under the TCase's root when there is
 * one); its path goes to buf. */
static inline void uu_tmpdir(char *buf, size_t cap)
{
	const char *root = uu_root();

	if (!root[0])
		root = "/tmp";
	ck_assert_uint_lt(strlen(root) + sizeof("/sockmeter-unit-XXXXXX"), cap);
	strcpy(buf, root);
	strcat(buf, "/sockmeter-unit-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(buf));
}

/* The whole file as a NUL-terminated malloc'ed string ("" when it does
 * not exist).  The caller frees it. */
static inline char *uu_slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	if (!f) {
		buf = calloc(1, 1);
		ck_assert_ptr_nonnull(buf);
		return buf;
	}
	ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	ck_assert_int_ge(n, 0);
	rewind(f);
	buf = malloc((size_t)n + 1);
	ck_assert_ptr_nonnull(buf);
	ck_assert_uint_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* Number of '\n'-terminated lines in s. */
static inline unsigned uu_count_lines(const char *s)
{
	unsigned n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* Number of (possibly overlapping) occurrences of needle in s.  One pass:
 * strstr from each match would make ASan (strict_string_checks) measure
 * the rest of a log of megabytes at every match. */
static inline unsigned uu_count(const char *s, const char *needle)
{
	size_t k = strlen(needle);
	unsigned n = 0;

	for (; *s; s++)
		n += *s == needle[0] && strncmp(s, needle, k) == 0;
	return n;
}

/* Line number idx (0-based) of s, copied into a malloc'ed string without
 * its '\n'; NULL when there are fewer lines.  The caller frees it. */
static inline char *uu_line(const char *s, unsigned idx)
{
	const char *end;
	char *line;

	while (idx > 0) {
		s = strchr(s, '\n');
		if (!s)
			return NULL;
		s++;
		idx--;
	}
	if (*s == '\0')
		return NULL;
	end = strchr(s, '\n');
	if (!end)
		end = s + strlen(s);
	line = strndup(s, (size_t)(end - s));
	ck_assert_ptr_nonnull(line);
	return line;
}

/* The first line of s that contains needle, as uu_line; NULL if none. */
static inline char *uu_line_with(const char *s, const char *needle)
{
	const char *hit = strstr(s, needle), *begin, *end;
	char *line;

	if (!hit)
		return NULL;
	for (begin = hit; begin > s && begin[-1] != '\n'; begin--)
		;
	end = strchr(hit, '\n');
	if (!end)
		end = hit + strlen(hit);
	line = strndup(begin, (size_t)(end - begin));
	ck_assert_ptr_nonnull(line);
	return line;
}

/* Pointer just after the first "key": in s (s may be NULL); fails the
 * test when the key is absent. */
static inline const char *uu_json_at(const char *s, const char *key)
{
	char pat[128];
	const char *p;

	ck_assert_ptr_nonnull(s);
	snprintf(pat, sizeof(pat), "\"%s\":", key);
	p = strstr(s, pat);
	ck_assert_msg(p != NULL, "key %s not found in %s", pat, s);
	return p + strlen(pat);
}

/* The unsigned number after the first "key": in s. */
static inline uint64_t uu_json_u64(const char *s, const char *key)
{
	const char *p = uu_json_at(s, key);
	char *end;
	uint64_t v = strtoull(p, &end, 10);

	ck_assert_msg(end != p, "key %s has no number in %s", key, s);
	return v;
}

/* The floating number after the first "key": in s. */
static inline double uu_json_double(const char *s, const char *key)
{
	const char *p = uu_json_at(s, key);
	char *end;
	double v = strtod(p, &end);

	ck_assert_msg(end != p, "key %s has no number in %s", key, s);
	return v;
}

/* The part of s that starts at the object of fd number fd ("{"fd":N,"). */
static inline const char *uu_json_fd(const char *s, int fd)
{
	char pat[64];
	const char *p;

	ck_assert_ptr_nonnull(s);
	snprintf(pat, sizeof(pat), "{\"fd\":%d,", fd);
	p = strstr(s, pat);
	ck_assert_msg(p != NULL, "fd %d not listed in %s", fd, s);
	return p;
}

/* True when s holds the object of fd number fd. */
static inline int uu_json_has_fd(const char *s, int fd)
{
	char pat[64];

	snprintf(pat, sizeof(pat), "{\"fd\":%d,", fd);
	return strstr(s, pat) != NULL;
}

/* True when python3 parses the whole file at path as one JSON value per
 * line (UTF-8, strict).  Skipped (true) when python3 is missing. */
static inline int uu_python_json_lines_ok(const char *path)
{
	char cmd[1024];
	int r;

	/* The system's python3 when there is one: a version manager's shim
	 * first on PATH (pyenv's is a shell script) takes about a second to
	 * start here, several under load, and a test case that parses six
	 * records then outran Check's timeout. */
	const char *py = "/usr/bin/python3";

	if (access(py, X_OK) != 0) {
		py = "python3";
		if (system("command -v python3 >/dev/null 2>&1") != 0)
			return 1;
	}
	snprintf(cmd, sizeof(cmd),
		 "%s -c 'import json,sys\n"
		 "for l in open(sys.argv[1], encoding=\"utf-8\", "
		 "errors=\"strict\"):\n"
		 "    json.loads(l)' '%s'",
		 py, path);
	r = system(cmd);
	return r == 0;
}

/* True when the n bytes at s are well-formed UTF-8 (RFC 3629: no overlong
 * forms, no surrogates, nothing above U+10FFFF). */
static inline int uu_utf8_valid(const unsigned char *s, size_t n)
{
	size_t i = 0;

	while (i < n) {
		unsigned char c = s[i];
		unsigned char lo = 0x80, hi = 0xbf;
		size_t len, k;

		if (c < 0x80) {
			i++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf)
			len = 2;
		else if (c >= 0xe0 && c <= 0xef)
			len = 3;
		else if (c >= 0xf0 && c <= 0xf4)
			len = 4;
		else
			return 0;
		if (c == 0xe0)
			lo = 0xa0;
		else if (c == 0xed)
			hi = 0x9f;
		else if (c == 0xf0)
			lo = 0x90;
		else if (c == 0xf4)
			hi = 0x8f;
		if (i + len > n)
			return 0;
		if (s[i + 1] < lo || s[i + 1] > hi)
			return 0;
		for (k = 2; k < len; k++)
			if ((s[i + k] & 0xc0) != 0x80)
				return 0;
		i += len;
	}
	return 1;
}

/* Run suite s (CK_NORMAL); returns the number of failed tests, as each
 * check_<module>.c main() returns. */
static inline int uu_run(Suite *s)
{
	SRunner *sr = srunner_create(s);
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed;
}

/* uu_tcp_pair - a connected loopback TCP pair: *c connected, *s accepted. */
static inline void uu_tcp_pair(int *c, int *s)
{
	struct sockaddr_in a;
	socklen_t len = sizeof(a);
	int l = socket(AF_INET, SOCK_STREAM, 0);

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(bind(l, (struct sockaddr *)&a, sizeof(a)), 0);
	ck_assert_int_eq(listen(l, 1), 0);
	ck_assert_int_eq(getsockname(l, (struct sockaddr *)&a, &len), 0);
	*c = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert_int_eq(connect(*c, (struct sockaddr *)&a, sizeof(a)), 0);
	*s = accept(l, NULL, NULL);
	ck_assert_int_ge(*s, 0);
	close(l);
}

#ifdef SOCKMETER_FDTAB_H
/* An inet address as the fd table keeps it (core/fdtab.h, included
 * before this file). */
static inline struct fd_addr addr4(const char *ip, unsigned port)
{
	struct fd_addr a;

	memset(&a, 0, sizeof(a));
	a.len = sizeof(a.u.in4);
	a.u.in4.sin_family = AF_INET;
	a.u.in4.sin_port = htons((uint16_t)port);
	ck_assert_int_eq(inet_pton(AF_INET, ip, &a.u.in4.sin_addr), 1);
	return a;
}

static inline struct fd_addr addr6(const char *ip, unsigned port)
{
	struct fd_addr a;

	memset(&a, 0, sizeof(a));
	a.len = sizeof(a.u.in6);
	a.u.in6.sin6_family = AF_INET6;
	a.u.in6.sin6_port = htons((uint16_t)port);
	ck_assert_int_eq(inet_pton(AF_INET6, ip, &a.u.in6.sin6_addr), 1);
	return a;
}
#endif

#endif
