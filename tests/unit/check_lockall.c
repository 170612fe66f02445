/*
 * check_lockall.c - mlockall without the library's tables: the ranges
 * rounded, sorted and merged, a mapping less them, /proc/self/maps read
 * in any pieces (its sum is the kernel's VmSize), and the call itself: a
 * 256 MiB reservation in the set is neither locked nor faulted in while
 * the rest is, and the kernel's answers (EINVAL, EPERM, ENOMEM) are kept.
 */
#include "../../core/lockall.h"
#include "unit_util.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define PAGE 4096u

/* A sanitizer's shadow is terabytes of reserved address space, which a
 * real lock of every mapping would fault in: its runtime makes mlockall
 * do nothing, and the calls below are not tried there. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifndef SANITIZED
#define SANITIZED 0
#endif

START_TEST(test_ranges_are_rounded_sorted_and_merged)
{
	struct lockall_set s = {.n = 0};

	lockall_add(&s, (void *)0x50000, 0x100);  /* -> 0x50000-0x51000 */
	lockall_add(&s, (void *)0x10000, 0x2001); /* -> 0x10000-0x13000 */
	lockall_add(&s, (void *)0x13000, 0x1000); /* touches the one before */
	lockall_add(&s, (void *)0x11000, 0x800);  /* inside */
	lockall_add(&s, NULL, 0x1000);		  /* nothing */
	lockall_add(&s, (void *)0x90000, 0);	  /* nothing */
	lockall_normalize(&s, PAGE);
	ck_assert_uint_eq(s.n, 2);
	ck_assert_uint_eq(s.r[0].start, 0x10000);
	ck_assert_uint_eq(s.r[0].end, 0x14000);
	ck_assert_uint_eq(s.r[1].start, 0x50000);
	ck_assert_uint_eq(s.r[1].end, 0x51000);
}
END_TEST

struct pieces {
	uintptr_t a[8], b[8];
	int n;
};

static void note_piece(uintptr_t a, uintptr_t b, void *arg)
{
	struct pieces *p = arg;

	ck_assert_int_lt(p->n, 8);
	p->a[p->n] = a;
	p->b[p->n] = b;
	p->n++;
}

START_TEST(test_a_mapping_less_the_tables_is_its_pieces)
{
	struct lockall_set s = {.n = 0};
	struct pieces p = {.n = 0};

	lockall_add(&s, (void *)0x20000, 0x10000);
	lockall_add(&s, (void *)0x40000, 0x1000);
	lockall_normalize(&s, PAGE);
	/* Around both. */
	ck_assert_uint_eq(
	    lockall_subtract(0x10000, 0x50000, &s, note_piece, &p), 0x11000);
	ck_assert_int_eq(p.n, 3);
	ck_assert_uint_eq(p.a[0], 0x10000);
	ck_assert_uint_eq(p.b[0], 0x20000);
	ck_assert_uint_eq(p.a[1], 0x30000);
	ck_assert_uint_eq(p.b[1], 0x40000);
	ck_assert_uint_eq(p.a[2], 0x41000);
	ck_assert_uint_eq(p.b[2], 0x50000);
	/* Inside one: nothing left. */
	p.n = 0;
	ck_assert_uint_eq(
	    lockall_subtract(0x22000, 0x24000, &s, note_piece, &p), 0x2000);
	ck_assert_int_eq(p.n, 0);
	/* Overlapping one's end; and one untouched. */
	p.n = 0;
	ck_assert_uint_eq(
	    lockall_subtract(0x2f000, 0x32000, &s, note_piece, &p), 0x1000);
	ck_assert_int_eq(p.n, 1);
	ck_assert_uint_eq(p.a[0], 0x30000);
	ck_assert_uint_eq(p.b[0], 0x32000);
	/* A piece of one page between the two. */
	p.n = 0;
	ck_assert_uint_eq(
	    lockall_subtract(0x3f000, 0x42000, &s, note_piece, &p), 0x1000);
	ck_assert_int_eq(p.n, 2);
	ck_assert_uint_eq(p.a[0], 0x3f000);
	ck_assert_uint_eq(p.b[0], 0x40000);
	ck_assert_uint_eq(p.a[1], 0x41000);
	ck_assert_uint_eq(p.b[1], 0x42000);
	p.n = 0;
	ck_assert_uint_eq(
	    lockall_subtract(0x60000, 0x61000, &s, note_piece, &p), 0);
	ck_assert_int_eq(p.n, 1);
	ck_assert_uint_eq(p.a[0], 0x60000);
}
END_TEST

struct sum {
	uint64_t bytes;
	int lines;
	uintptr_t first, last;
	uint64_t inodes, devs;
};

static void add_range(const struct lockall_vma *v, void *arg)
{
	struct sum *s = arg;

	if (!s->lines)
		s->first = v->start;
	s->last = v->end;
	s->bytes += v->end - v->start;
	s->lines++;
	s->inodes += v->inode;
	s->devs += v->dev_major * 1000 + v->dev_minor;
}

static const char maps_text[] =
    "00400000-00452000 r-xp 00000000 08:02 173521      /usr/bin/dbus-daemon\n"
    "not a line at all\n"
    "7f1c2000-7f1c3000 ---p 00000000 00:00 0 \n"
    "7ffc1000-7ffc3000 rw-p 00000000 00:00 0      "
    "[stack]/a/path/that/goes/on/and/on/and/on/and/on/and/on/and/on/xx\n"
    "zz-12 rw-p 0 0 0\n"
    "ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0  [vsyscall]\n";

START_TEST(test_maps_are_read_in_any_pieces)
{
	size_t len = sizeof(maps_text) - 1, step;

	for (step = 1; step <= len; step = step < 8 ? step + 1 : step * 3) {
		struct lockall_maps p;
		struct sum s = {0, 0, 0, 0, 0, 0};
		size_t at;

		lockall_maps_init(&p);
		for (at = 0; at < len; at += step)
			lockall_maps_feed(&p, maps_text + at,
					  at + step <= len ? step : len - at,
					  add_range, &s);
		ck_assert_int_eq(s.lines, 3);
		ck_assert_uint_eq(s.first, 0x400000);
		ck_assert_uint_eq(s.last, 0x7ffc3000);
		ck_assert_uint_eq(s.bytes, 0x52000 + 0x1000 + 0x2000);
		/* The file's identity: dbus-daemon's 08:02 173521 (hex
		 * device numbers), none for the others. */
		ck_assert_uint_eq(s.inodes, 173521);
		ck_assert_uint_eq(s.devs, 8 * 1000 + 2);
	}
}
END_TEST

/* KEY's value in /proc/self/status, read with read(2) (its size is 0 to
 * stat). */
static long status_kib(const char *key)
{
	static char all[8192];
	char *at;
	ssize_t n, got = 0;
	int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);

	ck_assert_int_ge(fd, 0);
	while ((n = read(fd, all + got, sizeof(all) - 1 - (size_t)got)) > 0)
		got += n;
	close(fd);
	all[got] = '\0';
	at = strstr(all, key);
	return at ? strtol(at + strlen(key), NULL, 10) : -1;
}

/* /proc/self/maps's ranges summed, fed as read(2) gives them (pieces
 * of 100 bytes: lines cut anywhere). */
static uint64_t maps_bytes(void)
{
	struct lockall_maps p;
	struct sum s = {0, 0, 0, 0, 0, 0};
	char buf[100];
	ssize_t n;
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);

	ck_assert_int_ge(fd, 0);
	lockall_maps_init(&p);
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		lockall_maps_feed(&p, buf, (size_t)n, add_range, &s);
	close(fd);
	ck_assert_int_gt(s.lines, 5);
	return s.bytes;
}

START_TEST(test_the_real_maps_add_up_to_the_address_space)
{
	uint64_t bytes = maps_bytes();
	long size = status_kib("VmSize:");

	ck_assert_int_gt(size, 0);
	ck_assert_uint_eq(bytes / 1024, (uint64_t)size);
}
END_TEST

struct ours {
	const struct lockall_set *s;
	int ours, lines;
	uintptr_t at;
};

static void find_ours(const struct lockall_vma *v, void *arg)
{
	struct ours *o = arg;

	o->lines++;
	if (lockall_ours(o->s, v)) {
		o->ours++;
		o->at = v->start;
	}
}

/* Every mapping of the state file is the library's, wherever it is: what
 * is left of its first mapping has holes the program's mappings fill. */
START_TEST(test_a_files_mappings_are_told_by_its_identity)
{
	struct lockall_set s = {.n = 0};
	struct ours o = {&s, 0, 0, 0};
	struct lockall_maps p;
	struct stat sb;
	char path[] = "/tmp/check_lockall.XXXXXX", buf[100];
	ssize_t n;
	int fd = mkstemp(path), mfd;
	char *m;

	ck_assert_int_ge(fd, 0);
	unlink(path);
	ck_assert_int_eq(ftruncate(fd, 3 * PAGE), 0);
	m = mmap(NULL, 3 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ck_assert_ptr_ne(m, MAP_FAILED);
	/* A hole in the middle, as a chunk moved out leaves. */
	ck_assert_int_eq(munmap(m + PAGE, PAGE), 0);
	ck_assert_int_eq(fstat(fd, &sb), 0);
	lockall_add_file(&s, (uint64_t)sb.st_dev, (uint64_t)sb.st_ino);
	mfd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(mfd, 0);
	lockall_maps_init(&p);
	while ((n = read(mfd, buf, sizeof(buf))) > 0)
		lockall_maps_feed(&p, buf, (size_t)n, find_ours, &o);
	close(mfd);
	ck_assert_int_gt(o.lines, 5);
	ck_assert_int_eq(o.ours, 2);
	munmap(m, PAGE);
	munmap(m + 2 * PAGE, PAGE);
	close(fd);
}
END_TEST

START_TEST(test_bad_flags_are_the_kernels_einval)
{
	struct lockall_set s = {.n = 0};

	lockall_add(&s, (void *)0x10000, 0x1000);
	ck_assert_int_eq(lockall_apply(0, &s), -EINVAL);
	ck_assert_int_eq(lockall_apply(MCL_ONFAULT, &s), -EINVAL);
	ck_assert_int_eq(lockall_apply(MCL_CURRENT | 8, &s), -EINVAL);
	/* Nothing there to leave out: the kernel's own call. */
	ck_assert_int_eq(lockall_apply(MCL_FUTURE, &s), LOCKALL_KERNEL);
	s.n = 0;
	ck_assert_int_eq(lockall_apply(MCL_CURRENT, &s), LOCKALL_KERNEL);
}
END_TEST

#define TABLE (256u << 20)

static bool can_lock_all(void)
{
	struct rlimit lim;

	if (getrlimit(RLIMIT_MEMLOCK, &lim) == 0 &&
	    lim.rlim_cur == RLIM_INFINITY)
		return true;
	return geteuid() == 0; /* CAP_IPC_LOCK, as a rule */
}

static size_t resident_pages(const void *p, size_t len)
{
	size_t n = (len + PAGE - 1) / PAGE, i, in = 0;
	unsigned char *v = malloc(n);

	ck_assert_ptr_nonnull(v);
	ck_assert_int_eq(mincore((void *)p, len, v), 0);
	for (i = 0; i < n; i++)
		in += v[i] & 1;
	free(v);
	return in;
}

START_TEST(test_a_table_in_the_set_is_neither_locked_nor_faulted_in)
{
	struct lockall_set s = {.n = 0};
	char *table, *mine;
	long size, lck;

	if (SANITIZED) {
		fprintf(stderr, "check_lockall: a sanitizer's build: the "
				"call not tried\n");
		return;
	}
	if (!can_lock_all()) {
		fprintf(stderr,
			"check_lockall: no CAP_IPC_LOCK: the call not tried\n");
		return;
	}
	table = mmap(NULL, TABLE, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	mine = mmap(NULL, 1u << 20, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(table, MAP_FAILED);
	ck_assert_ptr_ne(mine, MAP_FAILED);
	table[0] = 1; /* one page of it in use */
	lockall_add(&s, table, TABLE);
	lockall_normalize(&s, PAGE);
	ck_assert_int_eq(lockall_apply(MCL_CURRENT | MCL_FUTURE, &s), 0);
	lockall_note_future(MCL_CURRENT | MCL_FUTURE); /* as the preload */
	size = status_kib("VmSize:");
	lck = status_kib("VmLck:");
	ck_assert_int_le(lck, size - (long)(TABLE / 1024));
	/* Everything else is: the program's 1 MiB, faulted in. */
	ck_assert_int_ge(lck, size - (long)(TABLE / 1024) - 64);
	ck_assert_uint_eq(resident_pages(mine, 1u << 20), (1u << 20) / PAGE);
	ck_assert_uint_eq(resident_pages(table, TABLE), 1);
	/* The future part is the kernel's: a new mapping is locked. */
	ck_assert_int_ne(status_kib("VmLck:"), 0);
	{
		char *later = mmap(NULL, 1u << 20, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		ck_assert_ptr_ne(later, MAP_FAILED);
		ck_assert_int_ge(status_kib("VmLck:"), lck + 1024);
		ck_assert_uint_eq(resident_pages(later, 1u << 20),
				  (1u << 20) / PAGE);
		munmap(later, 1u << 20);
	}
	/* MCL_CURRENT alone replaces the future flag, as the kernel's. */
	ck_assert_int_eq(lockall_apply(MCL_CURRENT, &s), 0);
	lockall_note_future(MCL_CURRENT);
	{
		char *later = mmap(NULL, 1u << 20, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		ck_assert_ptr_ne(later, MAP_FAILED);
		ck_assert_uint_eq(resident_pages(later, 1u << 20), 0);
		munmap(later, 1u << 20);
	}
	ck_assert_int_eq(syscall(SYS_munlockall), 0);
	ck_assert_int_eq(status_kib("VmLck:"), 0);
	munmap(table, TABLE);
	munmap(mine, 1u << 20);
}
END_TEST

/* Without CAP_IPC_LOCK (dropped from this test's own process: Check
 * forks each test) and under a limit: the kernel's answers. */
static bool drop_ipc_lock(void)
{
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d) != 0)
		return false;
	d[0].effective &= ~(1u << CAP_IPC_LOCK);
	return syscall(SYS_capset, &h, d) == 0;
}

START_TEST(test_limits_are_the_kernels_without_the_tables)
{
	struct lockall_set s = {.n = 0};
	struct rlimit lim;
	char *table;
	long size;

	if (SANITIZED) {
		fprintf(stderr, "check_lockall: a sanitizer's build: the "
				"limits not tried\n");
		return;
	}
	if (!drop_ipc_lock()) {
		fprintf(stderr, "check_lockall: cannot drop CAP_IPC_LOCK\n");
		return;
	}
	table = mmap(NULL, TABLE, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	ck_assert_ptr_ne(table, MAP_FAILED);
	lockall_add(&s, table, TABLE);
	lockall_normalize(&s, PAGE);
	size = status_kib("VmSize:") - (long)(TABLE / 1024);
	ck_assert_int_eq(getrlimit(RLIMIT_MEMLOCK, &lim), 0);
	/* Room for the program, not for the table: it works, and the
	 * kernel's own call would have said ENOMEM. */
	lim.rlim_cur = (rlim_t)(size + 256) * 1024;
	if (lim.rlim_max != RLIM_INFINITY && lim.rlim_cur > lim.rlim_max) {
		fprintf(stderr, "check_lockall: the hard memlock limit is "
				"below the test's size\n");
		munmap(table, TABLE);
		return;
	}
	ck_assert_int_eq(setrlimit(RLIMIT_MEMLOCK, &lim), 0);
	ck_assert_int_eq(syscall(SYS_mlockall, MCL_CURRENT), -1);
	ck_assert_int_eq(errno, ENOMEM);
	ck_assert_int_eq(lockall_apply(MCL_CURRENT, &s), 0);
	ck_assert_int_le(status_kib("VmLck:"), size + 256);
	ck_assert_int_eq(syscall(SYS_munlockall), 0);
	/* Room for less than the program: ENOMEM; none at all: EPERM. */
	lim.rlim_cur = (rlim_t)(size / 2) * 1024;
	ck_assert_int_eq(setrlimit(RLIMIT_MEMLOCK, &lim), 0);
	ck_assert_int_eq(lockall_apply(MCL_CURRENT, &s), -ENOMEM);
	ck_assert_int_eq(status_kib("VmLck:"), 0);
	lim.rlim_cur = 0;
	ck_assert_int_eq(setrlimit(RLIMIT_MEMLOCK, &lim), 0);
	ck_assert_int_eq(lockall_apply(MCL_CURRENT, &s), -EPERM);
	munmap(table, TABLE);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("lockall");
	TCase *tc = tcase_create("lockall");

	tcase_add_test(tc, test_ranges_are_rounded_sorted_and_merged);
	tcase_add_test(tc, test_a_mapping_less_the_tables_is_its_pieces);
	tcase_add_test(tc, test_maps_are_read_in_any_pieces);
	tcase_add_test(tc, test_the_real_maps_add_up_to_the_address_space);
	tcase_add_test(tc, test_a_files_mappings_are_told_by_its_identity);
	tcase_add_test(tc, test_bad_flags_are_the_kernels_einval);
	tcase_add_test(
	    tc, test_a_table_in_the_set_is_neither_locked_nor_faulted_in);
	tcase_add_test(tc, test_limits_are_the_kernels_without_the_tables);
	suite_add_tcase(s, tc);
	return uu_run(s);
}
