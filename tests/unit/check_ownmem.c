/*
 * check_ownmem.c - memory a fork child does not get (core/ownmem.h):
 * aligned, zeroed, non-overlapping allocations across chunks and above
 * the largest chunk; zeroes in a real fork child; unmapped by
 * ownmem_free, left alone by ownmem_forget.
 */
#include "../../core/ownmem.h"
#include "unit_util.h"

#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

/* 0 when the page holding p is mapped here, else mincore's errno. */
static int mapped(const void *p)
{
	unsigned char v;
	uintptr_t page = (uintptr_t)p & ~(uintptr_t)4095;

	return mincore((void *)page, 4096, &v) == 0 ? 0 : errno;
}

#define N 3000

START_TEST(test_ownmem_allocations_are_aligned_zeroed_and_disjoint)
{
	static unsigned char *p[N];
	static size_t len[N];
	struct ownmem o = { 0 };
	size_t i, j;

	/* Sizes that are not multiples of 16, past several chunks (about
	 * 9 MB in all, more than the largest chunk), one bigger than it. */
	for (i = 0; i < N; i++) {
		len[i] = i == N / 2 ? 5 * 1024 * 1024 + 3 : 1 + i * 7 % 3001;
		p[i] = ownmem_alloc(&o, len[i]);
		ck_assert_ptr_nonnull(p[i]);
		ck_assert_uint_eq((uintptr_t)p[i] % 16, 0);
		for (j = 0; j < len[i] && p[i][j] == 0; j++)
			;
		ck_assert_uint_eq(j, len[i]);
		memset(p[i], (int)(i % 251) + 1, len[i]);
	}
	/* Each still holds its own pattern: none overlapped another. */
	for (i = 0; i < N; i++) {
		for (j = 0; j < len[i] && p[i][j] == i % 251 + 1; j++)
			;
		ck_assert_uint_eq(j, len[i]);
	}
	ck_assert_ptr_null(ownmem_alloc(&o, 0));
	ownmem_free(&o);
	for (i = 0; i < N; i += 97)
		ck_assert_int_eq(mapped(p[i]), ENOMEM);
	ck_assert_ptr_null(o.chunks);
}
END_TEST

START_TEST(test_ownmem_is_not_in_a_fork_child)
{
	struct ownmem o = { 0 };
	char *a = ownmem_alloc(&o, 100), *b;
	int status;
	pid_t pid;

	ck_assert_ptr_nonnull(a);
	strcpy(a, "parent");
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		/* 10: the parent's bytes are here; 11: a new one fails. */
		if (memcmp(a, "\0\0\0\0\0\0", 7) != 0)
			_exit(10);
		ownmem_forget(&o);
		b = ownmem_alloc(&o, 100);
		if (!b || b[0] != 0)
			_exit(11);
		strcpy(b, "child");
		ownmem_free(&o);
		_exit(0);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 0);
	ck_assert_str_eq(a, "parent");
	/* forget leaves the memory mapped (in a child, the zeroes). */
	ownmem_forget(&o);
	ck_assert_int_eq(mapped(a), 0);
	ck_assert_str_eq(a, "parent");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("ownmem");
	TCase *tc = tcase_create("ownmem");

	tcase_add_test(tc, test_ownmem_allocations_are_aligned_zeroed_and_disjoint);
	tcase_add_test(tc, test_ownmem_is_not_in_a_fork_child);
	suite_add_tcase(s, tc);
	return uu_run(s);
}
