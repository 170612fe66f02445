/*
 * check_fdtab.c - the per-fd slot table (core/fdtab.h): bounds, the
 * hot-path counting, the lifecycle (open, classify, retire, reuse), and
 * exact counts under threads, including a retirement racing with adders.
 */
#include "../../core/fdtab.h"
#include "unit_util.h"

#include <arpa/inet.h>
#include <check.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static struct fdtab tab;

static void setup(void)
{
	ck_assert_int_eq(fdtab_init(&tab, 1024), 0);
}

static void teardown(void)
{
	fdtab_destroy(&tab);
}

/* The slot of fd, which must exist (so the compiler knows it is not NULL
 * where fd_account is inlined). */
static struct fd_slot *slot_of(int fd)
{
	struct fd_slot *s = fdtab_slot(&tab, fd);

	ck_assert_ptr_nonnull(s);
	return s;
}

static int counters_zero(const struct fd_counters *c)
{
	static const struct fd_counters zero;

	return memcmp(c, &zero, sizeof(zero)) == 0;
}

static int hot_zero(const struct fd_hot *c)
{
	static const struct fd_hot zero;

	return memcmp(c, &zero, sizeof(zero)) == 0;
}

/* --- table bounds ---------------------------------------------------------- */

START_TEST(test_fdtab_init_maps_cap_slots_and_lookup_beyond_cap_is_null)
{
	ck_assert_uint_eq(tab.cap, 1024);
	ck_assert_uint_eq(tab.high, 0);
	ck_assert_ptr_nonnull(fdtab_slot(&tab, 0));
	ck_assert_ptr_eq(fdtab_slot(&tab, 1023), &tab.slots[1023]);
	ck_assert_ptr_null(fdtab_slot(&tab, 1024));
	ck_assert_ptr_null(fdtab_slot(&tab, 1 << 30));
	ck_assert_ptr_null(fdtab_slot(&tab, -1));
	ck_assert_ptr_null(fdtab_slot(&tab, -2147483647 - 1));
	/* A fresh slot is unknown and empty. */
	ck_assert_int_eq(fdtab_kind(fdtab_slot(&tab, 7)), KIND_UNKNOWN);
	ck_assert(hot_zero(&fdtab_slot(&tab, 7)->c));
}
END_TEST

START_TEST(test_fdtab_init_clamps_cap_and_rejects_zero)
{
	struct fdtab t;

	ck_assert_int_eq(fdtab_init(&t, FDTAB_MAX_CAP + 5), 0);
	ck_assert_uint_eq(t.cap, FDTAB_MAX_CAP);
	/* Lazily mapped: touching the last slot works. */
	fdtab_slot(&t, (int)FDTAB_MAX_CAP - 1)->c.bytes[DIR_IN] = 1;
	fdtab_destroy(&t);
	ck_assert_uint_eq(t.cap, 0);
	ck_assert_ptr_null(fdtab_slot(&t, 0));

	ck_assert_int_eq(fdtab_init(&t, 0), -EINVAL);
	ck_assert_uint_eq(t.cap, 0);
	ck_assert_ptr_null(fdtab_slot(&t, 0));
}
END_TEST

START_TEST(test_fdtab_lifecycle_calls_beyond_cap_do_nothing)
{
	struct fd_snapshot snap;

	ck_assert_int_eq(fdtab_open(&tab, 5000, KIND_TCP, 1, NULL, NULL, &snap),
			 0);
	ck_assert_int_eq(fdtab_open(&tab, -3, KIND_TCP, 1, NULL, NULL, &snap),
			 0);
	ck_assert_int_eq(fdtab_classify(&tab, 5000, KIND_TCP, NULL, NULL),
			 KIND_UNTRACKED);
	ck_assert_int_eq(fdtab_retire(&tab, 5000, &snap), 0);
	ck_assert_int_eq(fdtab_retire(&tab, -1, &snap), 0);
	ck_assert_int_eq(fdtab_snapshot(&tab, 5000, &snap), 0);
	ck_assert_int_eq(fdtab_snapshot(&tab, -1, &snap), 0);
	fdtab_set_addrs(&tab, 5000, NULL, NULL);
	ck_assert_uint_eq(tab.high, 0);
}
END_TEST

START_TEST(test_fdtab_capacity_is_the_hard_limit_unless_max_fds_or_strict_overcommit)
{
	const uint64_t inf = RLIM_INFINITY;

	/* The hard limit, within [1024, FDTAB_MAX_CAP]. */
	ck_assert_uint_eq(fdtab_capacity(1024, 524288, 0, 0), 524288);
	ck_assert_uint_eq(fdtab_capacity(1024, 524288, -1, 0), 524288);
	ck_assert_uint_eq(fdtab_capacity(1024, 524288, 1, 0), 524288);
	ck_assert_uint_eq(fdtab_capacity(64, 100, 0, 0), 1024);
	ck_assert_uint_eq(fdtab_capacity(inf, inf, 0, 0), FDTAB_MAX_CAP);
	ck_assert_uint_eq(fdtab_capacity(1024, 1ull << 30, 0, 0),
			  FDTAB_MAX_CAP);
	/* Strict overcommit: the soft limit and FDTAB_STRICT_CAP bound it
	 * too (at least 1024), whether the soft limit is the hard one or
	 * not. */
	ck_assert_uint_eq(fdtab_capacity(1024, 524288, 2, 0), 1024);
	ck_assert_uint_eq(fdtab_capacity(8192, 524288, 2, 0), 8192);
	ck_assert_uint_eq(fdtab_capacity(100, 524288, 2, 0), 1024);
	ck_assert_uint_eq(fdtab_capacity(inf, inf, 2, 0), FDTAB_STRICT_CAP);
	ck_assert_uint_eq(fdtab_capacity(1048576, 1048576, 2, 0),
			  FDTAB_STRICT_CAP);
	ck_assert_uint_eq(fdtab_capacity(65536, 524288, 2, 0),
			  FDTAB_STRICT_CAP);
	ck_assert_uint_eq(fdtab_capacity(4096, 2048, 2, 0), 2048);
	/* max_fds wins, whatever the limits, up to FDTAB_MAX_CAP. */
	ck_assert_uint_eq(fdtab_capacity(1024, 524288, 2, 200000), 200000);
	ck_assert_uint_eq(fdtab_capacity(1024, 524288, 0, 64), 64);
	ck_assert_uint_eq(fdtab_capacity(1024, 1024, 0, 5000), 5000);
	ck_assert_uint_eq(fdtab_capacity(1024, 1024, 0, 1u << 20),
			  FDTAB_MAX_CAP);
}
END_TEST

static TCase *tc_bounds(void)
{
	TCase *tc = tcase_create("bounds");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_fdtab_init_maps_cap_slots_and_lookup_beyond_cap_is_null);
	tcase_add_test(tc, test_fdtab_init_clamps_cap_and_rejects_zero);
	tcase_add_test(tc, test_fdtab_lifecycle_calls_beyond_cap_do_nothing);
	tcase_add_test(tc, test_fdtab_capacity_is_the_hard_limit_unless_max_fds_or_strict_overcommit);
	return tc;
}

/* --- the hot path ------------------------------------------------------- */

START_TEST(test_fd_size_bucket_edges_are_log2)
{
	ck_assert_uint_eq(fd_size_bucket(0), 0);
	ck_assert_uint_eq(fd_size_bucket(1), 1);
	ck_assert_uint_eq(fd_size_bucket(2), 2);
	ck_assert_uint_eq(fd_size_bucket(3), 2);
	ck_assert_uint_eq(fd_size_bucket(4), 3);
	ck_assert_uint_eq(fd_size_bucket(7), 3);
	ck_assert_uint_eq(fd_size_bucket(8), 4);
	ck_assert_uint_eq(fd_size_bucket(4096), 13);
	ck_assert_uint_eq(fd_size_bucket((1u << 22) - 1), 22);
	ck_assert_uint_eq(fd_size_bucket(1u << 22), 23);
	ck_assert_uint_eq(fd_size_bucket((1u << 22) + 1), 23);
	ck_assert_uint_eq(fd_size_bucket(UINT64_MAX), 23);
	ck_assert_uint_eq(SIZE_BUCKETS, 24);
}
END_TEST

START_TEST(test_fd_err_class_maps_again_intr_and_others)
{
	ck_assert_int_eq(fd_err_class(EAGAIN), ERR_AGAIN);
	ck_assert_int_eq(fd_err_class(EWOULDBLOCK), ERR_AGAIN);
	ck_assert_int_eq(fd_err_class(EINTR), ERR_INTR);
	ck_assert_int_eq(fd_err_class(ECONNRESET), ERR_OTHER);
	ck_assert_int_eq(fd_err_class(EPIPE), ERR_OTHER);
	ck_assert_int_eq(fd_err_class(0), ERR_OTHER);
}
END_TEST

#define ACCT_ALL (ACCT_BYTES | ACCT_CALLS | ACCT_ERRORS | ACCT_SIZES)

START_TEST(test_fd_account_counts_bytes_calls_sizes_errors_per_direction)
{
	struct fd_slot *s = slot_of(9);
	int saved;

	fd_account(s, DIR_IN, 100, 0, ACCT_ALL);
	fd_account(s, DIR_IN, 0, 0, ACCT_ALL); /* EOF: a call, 0 bytes */
	fd_account(s, DIR_IN, 5, 0, ACCT_ALL);
	fd_account(s, DIR_IN, -1, EAGAIN, ACCT_ALL);
	fd_account(s, DIR_IN, -1, EAGAIN, ACCT_ALL);
	fd_account(s, DIR_IN, -1, EINTR, ACCT_ALL);
	fd_account(s, DIR_OUT, 1 << 22, 0, ACCT_ALL);
	fd_account(s, DIR_OUT, 3, 0, ACCT_ALL);
	errno = 4321;
	saved = errno;
	fd_account(s, DIR_OUT, -1, EPIPE, ACCT_ALL);
	ck_assert_int_eq(errno, saved);

	ck_assert_uint_eq(s->c.bytes[DIR_IN], 105);
	ck_assert_uint_eq(s->c.bytes[DIR_OUT], (1u << 22) + 3);
	/* Sizes and errors both counted: calls is their sum, not counted. */
	ck_assert_uint_eq(s->c.calls[DIR_IN], 0);
	{
		struct fd_counters c;
		unsigned d, i;

		memset(&c, 0, sizeof(c));
		for (d = 0; d < DIR_COUNT; d++) {
			for (i = 0; i < ERR_COUNT; i++)
				c.errors[d][i] = s->c.errors[d][i];
			for (i = 0; i < SIZE_BUCKETS; i++)
				c.sizes[d][i] = s->c.sizes[d][i];
		}
		fd_derive_calls(&c);
		ck_assert_uint_eq(c.calls[DIR_IN], 6);
		ck_assert_uint_eq(c.calls[DIR_OUT], 3);
	}
	ck_assert_uint_eq(s->c.errors[DIR_IN][ERR_AGAIN], 2);
	ck_assert_uint_eq(s->c.errors[DIR_IN][ERR_INTR], 1);
	ck_assert_uint_eq(s->c.errors[DIR_IN][ERR_OTHER], 0);
	ck_assert_uint_eq(s->c.errors[DIR_OUT][ERR_AGAIN], 0);
	ck_assert_uint_eq(s->c.errors[DIR_OUT][ERR_OTHER], 1);
	ck_assert_uint_eq(s->c.sizes[DIR_IN][0], 1);
	ck_assert_uint_eq(s->c.sizes[DIR_IN][3], 1);  /* 5 */
	ck_assert_uint_eq(s->c.sizes[DIR_IN][7], 1);  /* 100 */
	ck_assert_uint_eq(s->c.sizes[DIR_OUT][2], 1); /* 3 */
	ck_assert_uint_eq(s->c.sizes[DIR_OUT][23], 1);
	ck_assert_uint_eq(s->c.latency[DIR_IN], 0);
	/* Failed calls are not a size. */
	{
		uint64_t n = 0;
		unsigned b;

		for (b = 0; b < SIZE_BUCKETS; b++)
			n += s->c.sizes[DIR_IN][b] + s->c.sizes[DIR_OUT][b];
		ck_assert_uint_eq(n, 5);
	}
}
END_TEST

START_TEST(test_fd_account_touches_only_categories_in_mask)
{
	struct fd_slot *s = slot_of(3);
	struct fd_hot want;

	fd_account(s, DIR_OUT, 10, 0, 0);
	fd_account(s, DIR_OUT, -1, EINTR, 0);
	ck_assert(hot_zero(&s->c));

	fd_account(s, DIR_OUT, 10, 0, ACCT_BYTES);
	fd_account(s, DIR_OUT, -1, EINTR, ACCT_BYTES);
	memset(&want, 0, sizeof(want));
	want.bytes[DIR_OUT] = 10;
	ck_assert_mem_eq(&s->c, &want, sizeof(want));

	fd_account(s, DIR_OUT, 10, 0, ACCT_CALLS);
	fd_account(s, DIR_OUT, -1, EINTR, ACCT_CALLS);
	want.calls[DIR_OUT] = 2;
	ck_assert_mem_eq(&s->c, &want, sizeof(want));

	fd_account(s, DIR_OUT, 10, 0, ACCT_ERRORS);
	fd_account(s, DIR_OUT, -1, EINTR, ACCT_ERRORS);
	want.errors[DIR_OUT][ERR_INTR] = 1;
	ck_assert_mem_eq(&s->c, &want, sizeof(want));

	fd_account(s, DIR_OUT, 10, 0, ACCT_SIZES);
	fd_account(s, DIR_OUT, -1, EINTR, ACCT_SIZES);
	want.sizes[DIR_OUT][4] = 1;
	ck_assert_mem_eq(&s->c, &want, sizeof(want));
}
END_TEST

static TCase *tc_account(void)
{
	TCase *tc = tcase_create("account");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_fd_size_bucket_edges_are_log2);
	tcase_add_test(tc, test_fd_err_class_maps_again_intr_and_others);
	tcase_add_test(tc, test_fd_account_counts_bytes_calls_sizes_errors_per_direction);
	tcase_add_test(tc, test_fd_account_touches_only_categories_in_mask);
	return tc;
}

/* --- lifecycle --------------------------------------------------------- */

START_TEST(test_fdtab_open_then_retire_returns_exact_counters_and_zeroes_slot)
{
	struct fd_addr l = addr4("10.0.0.1", 1234), p = addr4("10.0.0.2", 80);
	struct fd_snapshot snap, out;
	struct fd_slot *s = slot_of(12);
	uint32_t gen;

	ck_assert_int_eq(fdtab_open(&tab, 12, KIND_TCP, 777, &l, &p, &snap), 0);
	ck_assert_int_eq(fdtab_kind(s), KIND_TCP);
	gen = s->gen;
	fd_account(s, DIR_IN, 1000, 0, ACCT_ALL);
	fd_account(s, DIR_OUT, 50, 0, ACCT_ALL);
	fd_account(s, DIR_OUT, -1, EAGAIN, ACCT_ALL);

	memset(&out, 0xab, sizeof(out));
	ck_assert_int_eq(fdtab_retire(&tab, 12, &out), 1);
	ck_assert_int_eq(out.fd, 12);
	ck_assert_int_eq(out.kind, KIND_TCP);
	ck_assert_uint_eq(out.gen, gen);
	ck_assert_uint_eq(out.opened_ns, 777);
	ck_assert_uint_eq(out.c.bytes[DIR_IN], 1000);
	ck_assert_uint_eq(out.c.bytes[DIR_OUT], 50);
	fd_derive_calls(&out.c); /* calls = sizes + errors */
	ck_assert_uint_eq(out.c.calls[DIR_IN], 1);
	ck_assert_uint_eq(out.c.calls[DIR_OUT], 2);
	ck_assert_uint_eq(out.c.errors[DIR_OUT][ERR_AGAIN], 1);
	ck_assert_uint_eq(out.c.sizes[DIR_IN][10], 1);
	ck_assert_uint_eq(out.c.sizes[DIR_OUT][6], 1);
	ck_assert_uint_eq(out.local.len, sizeof(l.u.in4));
	ck_assert_mem_eq(&out.local.u.in4, &l.u.in4, sizeof(l.u.in4));
	ck_assert_mem_eq(&out.peer.u.in4, &p.u.in4, sizeof(p.u.in4));

	/* The slot is empty, unknown and one generation on. */
	ck_assert_int_eq(fdtab_kind(s), KIND_UNKNOWN);
	ck_assert(hot_zero(&s->c));
	ck_assert_uint_eq(s->gen, gen + 1);
	ck_assert_uint_eq(s->opened_ns, 0);
	ck_assert_uint_eq(s->local.family, 0);
	ck_assert_uint_eq(s->peer.family, 0);
	ck_assert_uint_eq(s->seq % 2, 0);
	ck_assert_int_eq(fdtab_snapshot(&tab, 12, &snap), 0);
	/* Retiring again finds nothing. */
	ck_assert_int_eq(fdtab_retire(&tab, 12, &out), 0);
	ck_assert_uint_eq(s->gen, gen + 1);
}
END_TEST

/* Into a claimed place: the slot is named (fd, kind, generation) and the
 * place marked bound before the counts move, and they all arrive. */
START_TEST(test_fdtab_retire_into_binds_then_moves_the_counts)
{
	struct fd_snapshot snap, out;
	struct fd_slot *s = slot_of(13);
	uint32_t bound = 0, gen, other;

	ck_assert_int_eq(fdtab_open(&tab, 13, KIND_UDP, 5, NULL, NULL, &snap),
			 0);
	gen = s->gen;
	fd_account(s, DIR_OUT, 300, 0, ACCT_ALL);
	memset(&out, 0, sizeof(out));
	other = gen + 1;
	ck_assert_int_eq(fdtab_retire_into(&tab, 13, &other, &out, &bound), 0);
	ck_assert_uint_eq(bound, 0);
	ck_assert_int_eq(fdtab_kind(s), KIND_UDP);
	ck_assert_int_eq(fdtab_retire_into(&tab, 13, &gen, &out, &bound), 1);
	/* 2 + the last word moved: bound, and past the first. */
	ck_assert_uint_gt(bound, 2);
	ck_assert_int_eq(out.fd, 13);
	ck_assert_int_eq(out.kind, KIND_UDP);
	ck_assert_uint_eq(out.gen, gen);
	ck_assert_uint_eq(out.c.bytes[DIR_OUT], 300);
	ck_assert(hot_zero(&s->c));
	/* Finished: a rescue finds the slot one generation on and leaves
	 * the place as it is. */
	ck_assert_int_eq(fdtab_rescue(&tab, &out, bound), 0);
	ck_assert_uint_eq(out.c.bytes[DIR_OUT], 300);
	ck_assert_uint_eq(s->gen, gen + 1);
}
END_TEST

/*
 * A retire stopped by a kill after any number of counter words moved
 * (the word being moved in both places, as take_counters writes it before
 * taking it), and a data call of another thread counted into the busy
 * slot after those words moved: the rescue has every count once, the
 * identity from the slot, and leaves the slot empty and unknown.
 */
START_TEST(test_fdtab_rescue_joins_a_retire_stopped_at_any_word)
{
	struct fd_addr l = addr4("10.0.0.1", 1234), p = addr4("10.0.0.2", 80);
	struct fd_snapshot snap, out;
	struct fd_slot *s = slot_of(14), *x = slot_of(20);
	struct fd_counters want, late;
	uint64_t *w, *o, *a = (uint64_t *)&want, *d = (uint64_t *)&late;
	size_t cut, i;
	int both;

	/* What the late call adds, counted alone. */
	ck_assert_int_eq(fdtab_open(&tab, 20, KIND_TCP, 1, NULL, NULL, &snap),
			 0);
	fd_account(x, DIR_OUT, 100, 0, ACCT_ALL);
	memcpy(&late, &x->c, sizeof(late));
	for (cut = 0; cut <= FD_COUNTERS_WORDS; cut++)
		for (both = 0; both < 2; both++) {
			uint32_t gen;

			if (both && cut == 0)
				continue;
			ck_assert_int_eq(fdtab_open(&tab, 14, KIND_TCP, 777, &l,
						    &p, &snap),
					 0);
			fd_account(s, DIR_IN, 1000, 0, ACCT_ALL);
			fd_account(s, DIR_OUT, 50, 0, ACCT_ALL);
			fd_account(s, DIR_OUT, -1, EAGAIN, ACCT_ALL);
			fd_account(s, DIR_OUT, 70000, 0, ACCT_ALL);
			memcpy(&want, &s->c, sizeof(want));
			for (i = 0; i < FD_COUNTERS_WORDS; i++)
				a[i] += d[i];
			gen = s->gen;
			/* The state a kill left: the slot owned, the place
			 * bound, the words before cut moved (the last of
			 * them still in both when both). */
			memset(&out, 0, sizeof(out));
			out.fd = 14;
			out.kind = KIND_TCP;
			out.gen = gen;
			w = (uint64_t *)&s->c;
			o = (uint64_t *)&out.c;
			for (i = 0; i < cut; i++) {
				o[i] = w[i];
				if (!(both && i + 1 == cut))
					w[i] = 0;
			}
			s->kind = KIND_BUSY;
			s->seq |= 1;
			/* Another thread's send into the busy slot. */
			fd_account(s, DIR_OUT, 100, 0, ACCT_ALL);
			ck_assert_int_eq(fdtab_rescue(&tab, &out,
						      (uint32_t)(both ? cut
								      : cut + 1)),
					 1);
			ck_assert_mem_eq(&out.c, &want, sizeof(want));
			ck_assert_uint_eq(out.opened_ns, 777);
			ck_assert_mem_eq(&out.peer.u.in4, &p.u.in4,
					 sizeof(p.u.in4));
			ck_assert_int_eq(fdtab_kind(s), KIND_UNKNOWN);
			ck_assert(hot_zero(&s->c));
			ck_assert_uint_eq(s->gen, gen + 1);
			ck_assert_uint_eq(s->seq % 2, 0);
			ck_assert_uint_eq(s->peer.family, 0);
			/* Once: nothing more to join. */
			ck_assert_int_eq(fdtab_rescue(&tab, &out, 1), 0);
		}
}
END_TEST

/* A claim killed before it was bound: it takes a slot left busy at the
 * generation it read whole (the kill came after the retire owned it),
 * under the kind read before the claim; a slot not busy holds the
 * connection, and is left to it, and one busy at another generation (the
 * connection retired and another opened meanwhile) is not its close's. */
START_TEST(test_fdtab_rescue_takes_a_busy_slot_for_an_unbound_claim)
{
	struct fd_snapshot snap, out;
	struct fd_slot *s = slot_of(15);
	uint32_t gen;

	ck_assert_int_eq(fdtab_open(&tab, 15, KIND_TCP, 9, NULL, NULL, &snap),
			 0);
	fd_account(s, DIR_IN, 4000, 0, ACCT_ALL);
	gen = s->gen;
	memset(&out, 0, sizeof(out));
	out.fd = 15;
	out.kind = KIND_TCP;
	out.gen = gen;
	ck_assert_int_eq(fdtab_rescue(&tab, &out, 0), 0);
	ck_assert_int_eq(fdtab_kind(s), KIND_TCP);
	ck_assert_uint_eq(s->c.bytes[DIR_IN], 4000);
	s->kind = KIND_BUSY;
	s->seq |= 1;
	out.kind = KIND_UNKNOWN; /* the claim did not know it */
	ck_assert_int_eq(fdtab_rescue(&tab, &out, 0), 0);
	out.kind = KIND_TCP;
	out.gen = gen - 1;
	ck_assert_int_eq(fdtab_rescue(&tab, &out, 0), 0);
	ck_assert_uint_eq(s->c.bytes[DIR_IN], 4000);
	out.gen = gen;
	out.unseen = true;
	ck_assert_int_eq(fdtab_rescue(&tab, &out, 0), 1);
	ck_assert(out.unseen);
	ck_assert_uint_eq(out.gen, gen);
	ck_assert_uint_eq(out.c.bytes[DIR_IN], 4000);
	ck_assert_uint_eq(out.opened_ns, 9);
	ck_assert_int_eq(fdtab_kind(s), KIND_UNKNOWN);
	ck_assert(hot_zero(&s->c));
	ck_assert_int_eq(fdtab_rescue(&tab, &out, 0), 0);
}
END_TEST

/*
 * A data call that finishes after its fd was retired leaves a stray in a
 * slot that holds no connection: fdtab_sweep moves exactly that out, once,
 * leaves the slot's kind as it was, and never touches a tracked slot.
 */
START_TEST(test_fdtab_sweep_moves_strays_of_unknown_and_untracked_slots_only)
{
	struct fd_snapshot snap;
	struct fd_counters c;
	struct fd_slot *s = slot_of(14), *u = slot_of(15), *t = slot_of(16);

	fdtab_open(&tab, 14, KIND_TCP, 1, NULL, NULL, &snap);
	fd_account(s, DIR_IN, 100, 0, ACCT_ALL);
	ck_assert_int_eq(fdtab_retire(&tab, 14, &snap), 1);
	ck_assert_uint_eq(snap.c.bytes[DIR_IN], 100);
	/* The late call: 7 bytes out, after the retirement. */
	fd_account(s, DIR_OUT, 7, 0, ACCT_ALL);
	ck_assert_int_eq(fdtab_sweep(&tab, 14, &c), 1);
	ck_assert_uint_eq(c.bytes[DIR_OUT], 7);
	ck_assert_uint_eq(c.bytes[DIR_IN], 0);
	ck_assert_uint_eq(c.sizes[DIR_OUT][3], 1);
	ck_assert(hot_zero(&s->c));
	ck_assert_int_eq(fdtab_kind(s), KIND_UNKNOWN);
	ck_assert_int_eq(fdtab_sweep(&tab, 14, &c), 0);

	/* Untracked: swept, and still untracked. */
	fdtab_open(&tab, 15, KIND_UNTRACKED, 1, NULL, NULL, &snap);
	fd_account(u, DIR_IN, -1, EINTR, ACCT_ALL);
	ck_assert_int_eq(fdtab_sweep(&tab, 15, &c), 1);
	ck_assert_uint_eq(c.errors[DIR_IN][ERR_INTR], 1);
	ck_assert_int_eq(fdtab_kind(u), KIND_UNTRACKED);

	/* A connection's own counts are not strays. */
	fdtab_open(&tab, 16, KIND_UDP, 1, NULL, NULL, &snap);
	fd_account(t, DIR_IN, 5, 0, ACCT_ALL);
	ck_assert_int_eq(fdtab_sweep(&tab, 16, &c), 0);
	ck_assert_uint_eq(t->c.bytes[DIR_IN], 5);
	ck_assert_int_eq(fdtab_sweep(&tab, 5000, &c), 0);
}
END_TEST

START_TEST(test_fdtab_reused_fd_starts_from_zero_with_new_generation)
{
	struct fd_snapshot stale, a, b;
	struct fd_slot *s = slot_of(5);

	ck_assert_int_eq(fdtab_open(&tab, 5, KIND_TCP, 1, NULL, NULL, &stale), 0);
	fd_account(s, DIR_IN, 4096, 0, ACCT_ALL);
	ck_assert_int_eq(fdtab_snapshot(&tab, 5, &a), 1);
	ck_assert_uint_eq(a.c.bytes[DIR_IN], 4096);
	ck_assert_int_eq(fdtab_retire(&tab, 5, &stale), 1);
	ck_assert_int_eq(fdtab_open(&tab, 5, KIND_UDP, 2, NULL, NULL, &stale), 0);
	ck_assert_int_eq(fdtab_snapshot(&tab, 5, &b), 1);
	ck_assert_int_eq(b.kind, KIND_UDP);
	ck_assert_uint_ne(b.gen, a.gen);
	ck_assert_uint_eq(b.opened_ns, 2);
	ck_assert(counters_zero(&b.c));
}
END_TEST

START_TEST(test_fdtab_open_on_live_slot_retires_it_into_stale)
{
	struct fd_addr p = addr4("192.168.1.1", 443);
	struct fd_snapshot stale, now;
	struct fd_slot *s = slot_of(8);
	uint32_t gen;

	ck_assert_int_eq(fdtab_open(&tab, 8, KIND_TCP, 10, NULL, &p, &stale), 0);
	gen = s->gen;
	fd_account(s, DIR_OUT, 321, 0, ACCT_ALL);
	/* The close went unseen: a new connection lands on fd 8. */
	memset(&stale, 0, sizeof(stale));
	ck_assert_int_eq(fdtab_open(&tab, 8, KIND_UNIX_STREAM, 20, NULL, NULL,
				    &stale),
			 1);
	ck_assert_int_eq(stale.fd, 8);
	ck_assert_int_eq(stale.kind, KIND_TCP);
	ck_assert_uint_eq(stale.gen, gen);
	ck_assert_uint_eq(stale.opened_ns, 10);
	ck_assert_uint_eq(stale.c.bytes[DIR_OUT], 321);
	fd_derive_calls(&stale.c); /* calls = sizes + errors */
	ck_assert_uint_eq(stale.c.calls[DIR_OUT], 1);
	ck_assert_uint_eq(stale.peer.len, sizeof(p.u.in4));

	ck_assert_int_eq(fdtab_snapshot(&tab, 8, &now), 1);
	ck_assert_int_eq(now.kind, KIND_UNIX_STREAM);
	ck_assert_uint_eq(now.gen, gen + 1);
	ck_assert_uint_eq(now.opened_ns, 20);
	ck_assert_uint_eq(now.peer.len, 0);
	ck_assert(counters_zero(&now.c));
}
END_TEST

START_TEST(test_fdtab_open_over_untracked_slot_reports_no_stale)
{
	struct fd_snapshot stale;

	ck_assert_int_eq(fdtab_open(&tab, 4, KIND_UNTRACKED, 1, NULL, NULL,
				    &stale),
			 0);
	ck_assert_int_eq(fdtab_kind(slot_of(4)), KIND_UNTRACKED);
	ck_assert_int_eq(fdtab_open(&tab, 4, KIND_TCP, 2, NULL, NULL, &stale),
			 0);
	ck_assert_int_eq(fdtab_retire(&tab, 4, &stale), 1);
	ck_assert_int_eq(fdtab_open(&tab, 4, KIND_UNTRACKED, 3, NULL, NULL,
				    &stale),
			 0);
	ck_assert_int_eq(fdtab_retire(&tab, 4, &stale), 0);
	ck_assert_int_eq(fdtab_kind(slot_of(4)), KIND_UNKNOWN);
}
END_TEST

START_TEST(test_fdtab_classify_sets_kind_only_on_unknown_slot)
{
	struct fd_addr p = addr4("1.2.3.4", 5);
	struct fd_snapshot snap;

	ck_assert_int_eq(fdtab_classify(&tab, 30, KIND_UDP, NULL, &p), KIND_UDP);
	/* A second classifier loses and learns the first one's answer. */
	ck_assert_int_eq(fdtab_classify(&tab, 30, KIND_PIPE, NULL, NULL),
			 KIND_UDP);
	ck_assert_int_eq(fdtab_snapshot(&tab, 30, &snap), 1);
	ck_assert_int_eq(snap.kind, KIND_UDP);
	ck_assert_uint_eq(snap.opened_ns, 0); /* inherited: open not seen */
	ck_assert_uint_eq(snap.peer.len, sizeof(p.u.in4));
	ck_assert_uint_eq(tab.high, 31);

	/* An opened slot is not reclassified either. */
	ck_assert_int_eq(fdtab_open(&tab, 31, KIND_TCP, 9, NULL, NULL, &snap), 0);
	ck_assert_int_eq(fdtab_classify(&tab, 31, KIND_FILE, NULL, NULL),
			 KIND_TCP);
	ck_assert_int_eq(fdtab_classify(&tab, 32, KIND_UNTRACKED, NULL, NULL),
			 KIND_UNTRACKED);
	ck_assert_int_eq(fdtab_classify(&tab, 32, KIND_TCP, NULL, NULL),
			 KIND_UNTRACKED);
}
END_TEST

START_TEST(test_fdtab_snapshot_is_zero_for_unknown_and_untracked)
{
	struct fd_snapshot snap;

	ck_assert_int_eq(fdtab_snapshot(&tab, 40, &snap), 0);
	fdtab_open(&tab, 40, KIND_UNTRACKED, 1, NULL, NULL, &snap);
	ck_assert_int_eq(fdtab_snapshot(&tab, 40, &snap), 0);
	fdtab_classify(&tab, 41, KIND_UNTRACKED, NULL, NULL);
	ck_assert_int_eq(fdtab_snapshot(&tab, 41, &snap), 0);
	fdtab_open(&tab, 42, KIND_TTY, 1, NULL, NULL, &snap);
	ck_assert_int_eq(fdtab_snapshot(&tab, 42, &snap), 1);
	ck_assert_int_eq(snap.fd, 42);
	ck_assert_int_eq(snap.kind, KIND_TTY);
}
END_TEST

/* F_GETFD as a test sets it: fds 10 and 12 close-on-exec, 13 unknown. */
static int fake_getfd(int fd)
{
	if (fd == 13)
		return -EBADF;
	return fd == 10 || fd == 12 ? FD_CLOEXEC : 0;
}

START_TEST(test_fdtab_note_exec_marks_close_on_exec_fds_until_reopened)
{
	struct fd_snapshot snap;

	fdtab_open(&tab, 10, KIND_TCP, 1, NULL, NULL, &snap);
	fdtab_open(&tab, 11, KIND_TCP, 1, NULL, NULL, &snap);
	fdtab_open(&tab, 12, KIND_UNTRACKED, 1, NULL, NULL, &snap);
	fdtab_open(&tab, 13, KIND_UDP, 1, NULL, NULL, &snap);
	ck_assert_int_eq(fdtab_snapshot(&tab, 10, &snap), 1);
	ck_assert(!snap.close_on_exec);
	/* Tracked fds only; an fd whose flags cannot be read is not marked. */
	ck_assert_uint_eq(fdtab_note_exec(&tab, fake_getfd), 1);
	ck_assert_int_eq(fdtab_snapshot(&tab, 10, &snap), 1);
	ck_assert(snap.close_on_exec);
	ck_assert_int_eq(fdtab_snapshot(&tab, 11, &snap), 1);
	ck_assert(!snap.close_on_exec);
	ck_assert_int_eq(fdtab_snapshot(&tab, 13, &snap), 1);
	ck_assert(!snap.close_on_exec);
	/* A new connection on the number (the exec failed) starts unmarked,
	 * and the mark goes with the retired one. */
	ck_assert_int_eq(fdtab_open(&tab, 10, KIND_TCP, 2, NULL, NULL, &snap),
			 1);
	ck_assert(snap.close_on_exec);
	ck_assert_int_eq(fdtab_snapshot(&tab, 10, &snap), 1);
	ck_assert(!snap.close_on_exec);
}
END_TEST

START_TEST(test_fdtab_set_addrs_replaces_given_addresses_on_tracked_slot_only)
{
	struct fd_addr l = addr4("127.0.0.1", 1000), p = addr4("127.0.0.2", 2000);
	struct fd_addr p2 = addr4("127.0.0.3", 3000), none;
	struct fd_snapshot snap;
	struct fd_slot *s;

	fdtab_open(&tab, 50, KIND_TCP, 1, NULL, NULL, &snap);
	fdtab_set_addrs(&tab, 50, &l, NULL);
	ck_assert_int_eq(fdtab_snapshot(&tab, 50, &snap), 1);
	ck_assert_uint_eq(snap.local.len, sizeof(l.u.in4));
	ck_assert_uint_eq(snap.peer.len, 0);
	fdtab_set_addrs(&tab, 50, NULL, &p);
	fdtab_set_addrs(&tab, 50, NULL, &p2);
	ck_assert_int_eq(fdtab_snapshot(&tab, 50, &snap), 1);
	ck_assert_mem_eq(&snap.local.u.in4, &l.u.in4, sizeof(l.u.in4));
	ck_assert_mem_eq(&snap.peer.u.in4, &p2.u.in4, sizeof(p2.u.in4));
	ck_assert_int_eq(snap.kind, KIND_TCP);
	ck_assert_uint_eq(slot_of(50)->seq % 2, 0);

	/* An address with len 0 (unknown) clears. */
	memset(&none, 0, sizeof(none));
	fdtab_set_addrs(&tab, 50, &none, NULL);
	ck_assert_int_eq(fdtab_snapshot(&tab, 50, &snap), 1);
	ck_assert_uint_eq(snap.local.len, 0);

	/* Untracked and unknown slots are left alone. */
	fdtab_open(&tab, 51, KIND_UNTRACKED, 1, NULL, NULL, &snap);
	fdtab_set_addrs(&tab, 51, &l, &p);
	s = slot_of(51);
	ck_assert_uint_eq(s->local.family, 0);
	ck_assert_uint_eq(s->peer.family, 0);
	ck_assert_int_eq(fdtab_kind(s), KIND_UNTRACKED);
	fdtab_set_addrs(&tab, 52, &l, &p);
	ck_assert_uint_eq(slot_of(52)->local.family, 0);
	ck_assert_int_eq(fdtab_kind(slot_of(52)), KIND_UNKNOWN);
}
END_TEST

START_TEST(test_fdtab_forget_all_returns_every_slot_to_unknown_with_zero_counters)
{
	struct fd_addr p = addr4("127.0.0.2", 2000);
	struct fd_snapshot snap;
	struct fd_slot *tcp = slot_of(60), *pipe_ = slot_of(61);
	struct fd_slot *untracked = slot_of(59);
	uint32_t gen_tcp, gen_pipe, gen_untracked, gen_unknown;

	fdtab_open(&tab, 59, KIND_UNTRACKED, 97, NULL, NULL, &snap);
	fdtab_open(&tab, 60, KIND_TCP, 99, NULL, &p, &snap);
	fdtab_open(&tab, 61, KIND_PIPE, 98, NULL, NULL, &snap);
	fd_account(tcp, DIR_IN, 10, 0, ACCT_ALL);
	fd_account(pipe_, DIR_OUT, 20, 0, ACCT_ALL);
	gen_tcp = tcp->gen;
	gen_pipe = pipe_->gen;
	gen_untracked = untracked->gen;
	gen_unknown = slot_of(63)->gen;

	fdtab_forget_all(&tab);
	ck_assert_int_eq(fdtab_kind(tcp), KIND_UNKNOWN);
	ck_assert_int_eq(fdtab_kind(pipe_), KIND_UNKNOWN);
	ck_assert_int_eq(fdtab_kind(untracked), KIND_UNKNOWN);
	ck_assert(hot_zero(&tcp->c));
	ck_assert(hot_zero(&pipe_->c));
	ck_assert_uint_eq(tcp->gen, gen_tcp + 1);
	ck_assert_uint_eq(pipe_->gen, gen_pipe + 1);
	ck_assert_uint_eq(untracked->gen, gen_untracked + 1);
	ck_assert_uint_eq(slot_of(63)->gen, gen_unknown);
	ck_assert_uint_eq(tcp->opened_ns, 0);
	ck_assert_uint_eq(tcp->peer.family, 0);
	ck_assert_int_eq(fdtab_snapshot(&tab, 60, &snap), 0);
	/* The next data call classifies afresh, as inherited. */
	ck_assert_int_eq(fdtab_classify(&tab, 60, KIND_TCP, NULL, NULL),
			 KIND_TCP);
	ck_assert_int_eq(fdtab_snapshot(&tab, 60, &snap), 1);
	ck_assert_uint_eq(snap.opened_ns, 0);
	ck_assert(counters_zero(&snap.c));
}
END_TEST

/*
 * After fork every slot returns to KIND_UNKNOWN, untracked ones above the
 * highest tracked fd included.
 */
START_TEST(test_fdtab_forget_all_forgets_untracked_slot_above_highest_tracked_fd)
{
	struct fd_snapshot snap;

	fdtab_open(&tab, 10, KIND_TCP, 1, NULL, NULL, &snap);
	fdtab_open(&tab, 500, KIND_UNTRACKED, 1, NULL, NULL, &snap);
	fdtab_forget_all(&tab);
	ck_assert_int_eq(fdtab_kind(slot_of(10)), KIND_UNKNOWN);
	ck_assert_int_eq(fdtab_kind(slot_of(500)), KIND_UNKNOWN);
}
END_TEST

START_TEST(test_fdtab_high_grows_for_every_classified_fd_never_unknown)
{
	struct fd_snapshot snap;

	fdtab_open(&tab, 100, KIND_UNKNOWN, 1, NULL, NULL, &snap);
	ck_assert_uint_eq(tab.high, 0);
	fdtab_open(&tab, 10, KIND_TCP, 1, NULL, NULL, &snap);
	ck_assert_uint_eq(tab.high, 11);
	/* Untracked slots count too, so fork can forget them all. */
	fdtab_classify(&tab, 200, KIND_UNTRACKED, NULL, NULL);
	ck_assert_uint_eq(tab.high, 201);
	fdtab_classify(&tab, 300, KIND_FILE, NULL, NULL);
	ck_assert_uint_eq(tab.high, 301);
	/* Never shrinks: not on a lower fd, not on retirement. */
	fdtab_open(&tab, 20, KIND_UDP, 1, NULL, NULL, &snap);
	fdtab_retire(&tab, 300, &snap);
	ck_assert_uint_eq(tab.high, 301);
	fdtab_open(&tab, 1023, KIND_TCP, 1, NULL, NULL, &snap);
	ck_assert_uint_eq(tab.high, 1024);
}
END_TEST

/* The fds a walk visits, in order, into out (at most max); how many. */
static int walk_used(uint32_t from, uint32_t end, uint32_t *out, int max)
{
	uint32_t fd;
	int n = 0;

	fdtab_for_each_used(&tab, fd, from, end)
		if (n < max)
			out[n++] = fd;
		else
			n++;
	return n;
}

START_TEST(test_fdtab_walk_visits_exactly_the_numbers_that_ever_held_something)
{
	struct fd_snapshot snap;
	uint32_t got[16];
	int n;

	ck_assert_ptr_nonnull(tab.used);
	ck_assert_int_eq(walk_used(0, 1024, got, 16), 0);
	/* Unknown over unknown writes nothing: not used. */
	fdtab_open(&tab, 5, KIND_UNKNOWN, 1, NULL, NULL, &snap);
	fdtab_open(&tab, 63, KIND_TCP, 1, NULL, NULL, &snap);
	fdtab_open(&tab, 64, KIND_UDP, 1, NULL, NULL, &snap);
	fdtab_classify(&tab, 700, KIND_UNTRACKED, NULL, NULL);
	fdtab_open(&tab, 1023, KIND_TCP, 1, NULL, NULL, &snap);
	/* Retired: still visited (a stray may land there). */
	fdtab_retire(&tab, 64, &snap);
	n = walk_used(0, tab.high, got, 16);
	ck_assert_int_eq(n, 4);
	ck_assert_uint_eq(got[0], 63);
	ck_assert_uint_eq(got[1], 64);
	ck_assert_uint_eq(got[2], 700);
	ck_assert_uint_eq(got[3], 1023);
	/* Bounds: from is inclusive, end exclusive, within one word too. */
	ck_assert_int_eq(walk_used(64, 700, got, 16), 1);
	ck_assert_uint_eq(got[0], 64);
	ck_assert_int_eq(walk_used(65, 700, got, 16), 0);
	ck_assert_int_eq(walk_used(700, 701, got, 16), 1);
	ck_assert_uint_eq(fdtab_next_used(&tab, 1024, 1024), 1024);
	ck_assert_uint_eq(fdtab_next_used(&tab, 0, 10), 10);
	/* No map (a dead process's slots): every number. */
	fdtab_use_all(&tab);
	ck_assert_ptr_null(tab.used);
	ck_assert_uint_eq(tab.high, 1024);
	ck_assert_int_eq(walk_used(0, 1024, got, 16), 1024);
	ck_assert_uint_eq(fdtab_next_used(&tab, 7, 1024), 7);
	/* Every number below a bound, never past cap. */
	fdtab_use_below(&tab, 701);
	ck_assert_uint_eq(tab.high, 701);
	ck_assert_int_eq(walk_used(0, tab.high, got, 16), 701);
	fdtab_use_below(&tab, 5000);
	ck_assert_uint_eq(tab.high, 1024);
}
END_TEST

START_TEST(test_fdtab_map_of_used_numbers_is_empty_in_a_fork_child)
{
	struct fd_snapshot snap;
	uint32_t got[4];
	int status;
	pid_t pid;

	fdtab_open(&tab, 3, KIND_TCP, 1, NULL, NULL, &snap);
	fdtab_open(&tab, 900, KIND_TCP, 1, NULL, NULL, &snap);
	ck_assert_int_eq(walk_used(0, tab.high, got, 4), 2);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		/* high stays (the slots are forgotten or zeroes there); the
		 * map starts over, and fills with the child's own fds. */
		int ok = tab.high == 901 && walk_used(0, tab.high, got, 4) == 0;

		fdtab_open(&tab, 7, KIND_UDP, 1, NULL, NULL, &snap);
		ok = ok && walk_used(0, tab.high, got, 4) == 1 && got[0] == 7;
		_exit(ok ? 0 : 1);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 0);
	/* The parent's map is its own. */
	ck_assert_int_eq(walk_used(0, tab.high, got, 4), 2);
	ck_assert_uint_eq(got[0], 3);
	ck_assert_uint_eq(got[1], 900);
}
END_TEST

START_TEST(test_fd_counters_add_adds_every_field)
{
	struct fd_counters a, b;

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	a.bytes[DIR_IN] = 1;
	b.bytes[DIR_IN] = 2;
	b.sizes[DIR_OUT][SIZE_BUCKETS - 1] = 7;
	b.latency_ns[DIR_OUT] = 9;
	b.errors[DIR_IN][ERR_OTHER] = 3;
	fd_counters_add(&a, &b);
	fd_counters_add(&a, &b);
	ck_assert_uint_eq(a.bytes[DIR_IN], 5);
	ck_assert_uint_eq(a.sizes[DIR_OUT][SIZE_BUCKETS - 1], 14);
	ck_assert_uint_eq(a.latency_ns[DIR_OUT], 18);
	ck_assert_uint_eq(a.errors[DIR_IN][ERR_OTHER], 6);
}
END_TEST

START_TEST(test_fd_kind_name_names_every_tracked_kind)
{
	ck_assert_str_eq(fd_kind_name(KIND_TCP), "tcp");
	ck_assert_str_eq(fd_kind_name(KIND_UDP), "udp");
	ck_assert_str_eq(fd_kind_name(KIND_UNIX_STREAM), "unix");
	ck_assert_str_eq(fd_kind_name(KIND_UNIX_DGRAM), "unix_dgram");
	ck_assert_str_eq(fd_kind_name(KIND_OTHER_SOCKET), "socket");
	ck_assert_str_eq(fd_kind_name(KIND_PIPE), "pipe");
	ck_assert_str_eq(fd_kind_name(KIND_FILE), "file");
	ck_assert_str_eq(fd_kind_name(KIND_TTY), "tty");
	ck_assert_str_eq(fd_kind_name(KIND_UNKNOWN), "unknown");
	ck_assert_str_eq(fd_kind_name(KIND_UNTRACKED), "unknown");
	ck_assert_str_eq(fd_kind_name(KIND_BUSY), "unknown");
}
END_TEST

static TCase *tc_lifecycle(void)
{
	TCase *tc = tcase_create("lifecycle");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_fdtab_open_then_retire_returns_exact_counters_and_zeroes_slot);
	tcase_add_test(tc, test_fdtab_retire_into_binds_then_moves_the_counts);
	tcase_add_test(tc, test_fdtab_rescue_joins_a_retire_stopped_at_any_word);
	tcase_add_test(tc, test_fdtab_rescue_takes_a_busy_slot_for_an_unbound_claim);
	tcase_add_test(tc, test_fdtab_sweep_moves_strays_of_unknown_and_untracked_slots_only);
	tcase_add_test(tc, test_fdtab_reused_fd_starts_from_zero_with_new_generation);
	tcase_add_test(tc, test_fdtab_open_on_live_slot_retires_it_into_stale);
	tcase_add_test(tc, test_fdtab_open_over_untracked_slot_reports_no_stale);
	tcase_add_test(tc, test_fdtab_classify_sets_kind_only_on_unknown_slot);
	tcase_add_test(tc, test_fdtab_snapshot_is_zero_for_unknown_and_untracked);
	tcase_add_test(tc, test_fdtab_set_addrs_replaces_given_addresses_on_tracked_slot_only);
	tcase_add_test(tc, test_fdtab_forget_all_returns_every_slot_to_unknown_with_zero_counters);
	tcase_add_test(tc, test_fdtab_forget_all_forgets_untracked_slot_above_highest_tracked_fd);
	tcase_add_test(tc, test_fdtab_high_grows_for_every_classified_fd_never_unknown);
	tcase_add_test(tc, test_fdtab_walk_visits_exactly_the_numbers_that_ever_held_something);
	tcase_add_test(tc, test_fdtab_map_of_used_numbers_is_empty_in_a_fork_child);
	tcase_add_test(tc, test_fd_counters_add_adds_every_field);
	tcase_add_test(tc, test_fd_kind_name_names_every_tracked_kind);
	return tc;
}

/* --- threads ----------------------------------------------------------------- */

#define THREADS 4
#define CALLS_PER_THREAD 1000000

struct adder {
	pthread_t th;
	int fd;
	unsigned n;
	uint64_t bytes; /* bytes this thread added */
	int *done;
};

/* Each call moves 1..8 bytes in, or fails with EAGAIN out (every 16th). */
static void *add_loop(void *arg)
{
	struct adder *a = arg;
	struct fd_slot *s = slot_of(a->fd);
	unsigned i;

	for (i = 0; i < a->n; i++) {
		if (i % 16 == 15) {
			fd_account(s, DIR_OUT, -1, EAGAIN, ACCT_ALL);
		} else {
			fd_account(s, DIR_IN, (int64_t)(i % 8 + 1), 0, ACCT_ALL);
			a->bytes += i % 8 + 1;
		}
	}
	if (a->done)
		__atomic_fetch_add(a->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void start_adders(struct adder *a, const int *fds, int *done)
{
	unsigned i;

	for (i = 0; i < THREADS; i++) {
		a[i].fd = fds[i];
		a[i].n = CALLS_PER_THREAD;
		a[i].bytes = 0;
		a[i].done = done;
		ck_assert_int_eq(pthread_create(&a[i].th, NULL, add_loop, &a[i]),
				 0);
	}
}

static void join_adders(struct adder *a)
{
	unsigned i;

	for (i = 0; i < THREADS; i++)
		ck_assert_int_eq(pthread_join(a[i].th, NULL), 0);
}

/* What one thread's loop must leave: per group of 16 calls, sizes 1..8
 * then 1..7 in, and one EAGAIN out. */
#define GROUPS (CALLS_PER_THREAD / 16)
#define ERRS_PER_THREAD GROUPS
#define OKS_PER_THREAD (CALLS_PER_THREAD - ERRS_PER_THREAD)

START_TEST(test_fd_account_is_exact_with_four_threads_on_one_slot)
{
	const int fds[THREADS] = { 77, 77, 77, 77 };
	struct adder a[THREADS];
	struct fd_snapshot snap;
	uint64_t bytes = 0;
	unsigned i;

	fdtab_open(&tab, 77, KIND_TCP, 1, NULL, NULL, &snap);
	start_adders(a, fds, NULL);
	join_adders(a);
	for (i = 0; i < THREADS; i++)
		bytes += a[i].bytes;
	ck_assert_int_eq(fdtab_snapshot(&tab, 77, &snap), 1);
	ck_assert_uint_eq(snap.c.bytes[DIR_IN], bytes);
	fd_derive_calls(&snap.c); /* ACCT_ALL: calls = sizes + errors */
	ck_assert_uint_eq(snap.c.calls[DIR_IN], THREADS * OKS_PER_THREAD);
	ck_assert_uint_eq(snap.c.calls[DIR_OUT], THREADS * ERRS_PER_THREAD);
	ck_assert_uint_eq(snap.c.errors[DIR_OUT][ERR_AGAIN],
			  THREADS * ERRS_PER_THREAD);
	ck_assert_uint_eq(snap.c.sizes[DIR_IN][1], THREADS * 2 * GROUPS);
	ck_assert_uint_eq(snap.c.sizes[DIR_IN][4], THREADS * GROUPS);
}
END_TEST

START_TEST(test_fd_account_is_exact_with_four_threads_on_separate_slots)
{
	const int fds[THREADS] = { 90, 91, 92, 93 };
	struct adder a[THREADS];
	struct fd_snapshot snap;
	unsigned i;

	for (i = 0; i < THREADS; i++)
		fdtab_open(&tab, fds[i], KIND_UDP, 1, NULL, NULL, &snap);
	start_adders(a, fds, NULL);
	join_adders(a);
	for (i = 0; i < THREADS; i++) {
		ck_assert_int_eq(fdtab_snapshot(&tab, fds[i], &snap), 1);
		ck_assert_uint_eq(snap.c.bytes[DIR_IN], a[i].bytes);
		fd_derive_calls(&snap.c); /* ACCT_ALL: calls = sizes + errors */
		ck_assert_uint_eq(snap.c.calls[DIR_IN], OKS_PER_THREAD);
		ck_assert_uint_eq(snap.c.errors[DIR_OUT][ERR_AGAIN],
				  ERRS_PER_THREAD);
	}
	/* Each group of 16 calls moves 1..8 + 1..7 = 64 bytes. */
	ck_assert_uint_eq(a[0].bytes, GROUPS * 64);
}
END_TEST

START_TEST(test_fdtab_retire_racing_with_adders_loses_and_duplicates_nothing)
{
	const int fds[THREADS] = { 66, 66, 66, 66 };
	struct adder a[THREADS];
	struct fd_counters got;
	struct fd_snapshot snap;
	uint64_t bytes = 0;
	unsigned i, retired = 0;
	int done = 0;

	memset(&got, 0, sizeof(got));
	fdtab_open(&tab, 66, KIND_TCP, 1, NULL, NULL, &snap);
	start_adders(a, fds, &done);
	while (__atomic_load_n(&done, __ATOMIC_ACQUIRE) < THREADS) {
		/* A close, then the fd number reused at once (with and without
		 * a seen close). */
		if (fdtab_retire(&tab, 66, &snap) == 1) {
			fd_counters_add(&got, &snap.c);
			retired++;
		}
		if (fdtab_open(&tab, 66, KIND_TCP, 2, NULL, NULL, &snap) == 1) {
			fd_counters_add(&got, &snap.c);
			retired++;
		}
		if (fdtab_open(&tab, 66, KIND_TCP, 3, NULL, NULL, &snap) == 1) {
			fd_counters_add(&got, &snap.c);
			retired++;
		}
	}
	join_adders(a);
	ck_assert_int_eq(fdtab_retire(&tab, 66, &snap), 1);
	fd_counters_add(&got, &snap.c);
	for (i = 0; i < THREADS; i++)
		bytes += a[i].bytes;
	ck_assert_uint_gt(retired, 1);
	ck_assert_uint_eq(got.bytes[DIR_IN], bytes);
	fd_derive_calls(&got); /* ACCT_ALL: calls = sizes + errors */
	ck_assert_uint_eq(got.calls[DIR_IN], THREADS * OKS_PER_THREAD);
	ck_assert_uint_eq(got.calls[DIR_OUT], THREADS * ERRS_PER_THREAD);
	ck_assert_uint_eq(got.errors[DIR_OUT][ERR_AGAIN],
			  THREADS * ERRS_PER_THREAD);
	ck_assert_uint_eq(got.sizes[DIR_IN][1], THREADS * 2 * GROUPS);
	ck_assert_uint_eq(got.sizes[DIR_IN][4], THREADS * GROUPS);
}
END_TEST

/* Opens and closes fd over and over (another thread's lifecycle calls),
 * adding up what each retirement took. */
struct reopener {
	pthread_t th;
	int fd;
	int *stop;
	struct fd_counters got;
};

static void *reopen_loop(void *arg)
{
	struct reopener *r = arg;
	struct fd_snapshot snap;

	while (!__atomic_load_n(r->stop, __ATOMIC_ACQUIRE)) {
		if (fdtab_open(&tab, r->fd, KIND_TCP, 2, NULL, NULL, &snap) == 1)
			fd_counters_add(&r->got, &snap.c);
		if (fdtab_retire(&tab, r->fd, &snap) == 1)
			fd_counters_add(&r->got, &snap.c);
	}
	return NULL;
}

/*
 * Calls finishing after the close of their fd (adders that do not look at
 * the kind), another thread opening and closing the fd, and the ticker's
 * sweeps, all at once: what the retirements and the sweeps take together
 * is every count, once (a sweep racing a reopen hands back what it took).
 */
START_TEST(test_fdtab_retire_and_sweep_racing_with_adders_lose_nothing)
{
	const int fds[THREADS] = { 67, 67, 67, 67 };
	struct adder a[THREADS];
	struct reopener r;
	struct fd_counters got, c;
	struct fd_snapshot snap;
	uint64_t bytes = 0;
	unsigned i;
	int done = 0, stop = 0;

	memset(&got, 0, sizeof(got));
	memset(&r, 0, sizeof(r));
	r.fd = 67;
	r.stop = &stop;
	ck_assert_int_eq(pthread_create(&r.th, NULL, reopen_loop, &r), 0);
	start_adders(a, fds, &done);
	while (__atomic_load_n(&done, __ATOMIC_ACQUIRE) < THREADS)
		if (fdtab_sweep(&tab, 67, &c) == 1)
			fd_counters_add(&got, &c);
	join_adders(a);
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	ck_assert_int_eq(pthread_join(r.th, NULL), 0);
	fd_counters_add(&got, &r.got);
	if (fdtab_retire(&tab, 67, &snap) == 1)
		fd_counters_add(&got, &snap.c);
	/* One more late call, then no race: what landed after the last
	 * retirement is only a sweep's to find, and this one finds it.  (How
	 * many of the racing sweeps got something depends on the
	 * scheduler: under load, none did once.) */
	fd_account(slot_of(67), DIR_IN, 5, 0, ACCT_ALL);
	ck_assert_int_eq(fdtab_sweep(&tab, 67, &c), 1);
	fd_counters_add(&got, &c);
	ck_assert(hot_zero(&slot_of(67)->c));
	for (i = 0; i < THREADS; i++)
		bytes += a[i].bytes;
	ck_assert_uint_eq(got.bytes[DIR_IN], bytes + 5);
	fd_derive_calls(&got);
	ck_assert_uint_eq(got.calls[DIR_IN], THREADS * OKS_PER_THREAD + 1);
	ck_assert_uint_eq(got.calls[DIR_OUT], THREADS * ERRS_PER_THREAD);
	ck_assert_uint_eq(got.sizes[DIR_IN][4], THREADS * GROUPS);
}
END_TEST

/* An address that encodes k: 10.x.y.z where x.y.z are k's low 24 bits, the
 * port its low 16. */
static struct fd_addr addr_of(uint64_t k)
{
	struct fd_addr a;

	memset(&a, 0, sizeof(a));
	a.len = sizeof(a.u.in4);
	a.u.in4.sin_family = AF_INET;
	a.u.in4.sin_port = htons((uint16_t)k);
	a.u.in4.sin_addr.s_addr = htonl((uint32_t)(0x0a000000u | (k & 0xffffff)));
	return a;
}

struct rewriter {
	pthread_t th;
	int fd;
	int *stop;
	unsigned long rounds;
};

/* Reopen fd over and over, each connection with an identity that encodes
 * its number k: opened at k, local and peer addresses of k, addresses
 * replaced again (as connect does) with the same k. */
static void *rewrite_loop(void *arg)
{
	struct rewriter *w = arg;
	struct fd_snapshot stale;
	uint64_t k = 1;

	while (!__atomic_load_n(w->stop, __ATOMIC_ACQUIRE)) {
		struct fd_addr a = addr_of(k);

		fdtab_open(&tab, w->fd, KIND_TCP, k, &a, &a, &stale);
		fdtab_set_addrs(&tab, w->fd, &a, &a);
		if (k % 3 == 0)
			fdtab_retire(&tab, w->fd, &stale);
		k++;
	}
	w->rounds = k;
	return NULL;
}

/*
 * fdtab_snapshot racing lifecycle writers: every snapshot it reports as
 * good is one connection's identity, never a mix of two (open time,
 * generation and both addresses agree), and it does succeed often.
 */
START_TEST(test_fdtab_snapshot_racing_writers_is_never_torn)
{
	struct rewriter w = { .fd = 70 };
	struct fd_snapshot snap;
	unsigned long good = 0, tries;
	time_t until = time(NULL) + 10;
	int stop = 0;

	w.stop = &stop;
	ck_assert_int_eq(pthread_create(&w.th, NULL, rewrite_loop, &w), 0);
	/* Until enough good copies, or a deadline: no fixed count of tries
	 * (the writer may not even have started yet). */
	for (tries = 0; good < 20000 && (tries & 0xffff || time(NULL) < until);
	     tries++) {
		uint64_t k;

		if (!fdtab_snapshot(&tab, 70, &snap))
			continue;
		k = snap.opened_ns;
		ck_assert_uint_eq(snap.peer.len, sizeof(snap.peer.u.in4));
		ck_assert_uint_eq(snap.local.len, sizeof(snap.local.u.in4));
		ck_assert_uint_eq(ntohs(snap.peer.u.in4.sin_port), k & 0xffff);
		ck_assert_uint_eq(ntohl(snap.peer.u.in4.sin_addr.s_addr),
				  0x0a000000u | (k & 0xffffff));
		ck_assert_uint_eq(ntohs(snap.local.u.in4.sin_port), k & 0xffff);
		ck_assert_uint_eq(ntohl(snap.local.u.in4.sin_addr.s_addr),
				  0x0a000000u | (k & 0xffffff));
		good++;
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	ck_assert_int_eq(pthread_join(w.th, NULL), 0);
	ck_assert_uint_gt(w.rounds, 100);
	ck_assert_uint_gt(good, 100);
}
END_TEST

static TCase *tc_threads(void)
{
	TCase *tc = tcase_create("threads");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_fd_account_is_exact_with_four_threads_on_one_slot);
	tcase_add_test(tc, test_fd_account_is_exact_with_four_threads_on_separate_slots);
	tcase_add_test(tc, test_fdtab_retire_racing_with_adders_loses_and_duplicates_nothing);
	tcase_add_test(tc, test_fdtab_retire_and_sweep_racing_with_adders_lose_nothing);
	tcase_add_test(tc, test_fdtab_snapshot_racing_writers_is_never_torn);
	return tc;
}

/* --- regressions (issue 10) ---------------------------------------------- */

/*
 * A fork that lands while another thread is between seq_begin and seq_end
 * leaves the child's copy of that slot with an odd seq.  The child forgets
 * the slot: it must come back readable, not unreadable forever.
 */
START_TEST(test_fdtab_forget_all_evens_a_seq_left_odd_by_a_writer_caught_in_fork)
{
	struct fd_snapshot snap;
	struct fd_slot *s = slot_of(12);

	fdtab_open(&tab, 12, KIND_TCP, 5, NULL, NULL, &snap);
	s->seq |= 1; /* the parent's writer was mid-way at fork */
	fdtab_forget_all(&tab);
	ck_assert_int_eq(fdtab_classify(&tab, 12, KIND_TCP, NULL, NULL),
			 KIND_TCP);
	ck_assert_int_eq(fdtab_snapshot(&tab, 12, &snap), 1);
}
END_TEST

/*
 * A lifecycle call on a slot whose owner never hands it back (a signal
 * handler that interrupted its own thread half-way through a lifecycle
 * call on the same fd) gives up instead of spinning forever, and the
 * numbers of the connection are still retired whole later.
 */
START_TEST(test_fdtab_lifecycle_calls_on_a_slot_held_by_a_stalled_owner_give_up)
{
	struct fd_addr p = addr4("127.0.0.9", 9);
	struct fd_snapshot snap;
	struct fd_slot *s = slot_of(14);

	fdtab_open(&tab, 14, KIND_TCP, 5, NULL, NULL, &snap);
	fd_account(s, DIR_OUT, 100, 0, ACCT_ALL);
	__atomic_store_n(&s->kind, (uint8_t)KIND_BUSY, __ATOMIC_RELEASE);
	/* Each of these spun forever before. */
	ck_assert_int_eq(fdtab_retire(&tab, 14, &snap), 0);
	ck_assert_int_eq(fdtab_open(&tab, 14, KIND_UDP, 6, NULL, NULL, &snap),
			 0);
	fdtab_set_addrs(&tab, 14, NULL, &p);
	ck_assert_int_eq(fdtab_classify(&tab, 14, KIND_TCP, NULL, NULL),
			 KIND_BUSY);
}
END_TEST

/*
 * The 32-bit event counters relied on a ticker fold to stay exact past
 * 2^32; without a tick (no ticker thread, or a ticker stuck in a write)
 * they wrapped.  Every counter must be exact past 2^32 on its own.
 */
START_TEST(test_fdtab_event_counters_exact_past_2_pow_32_without_any_tick)
{
	struct fd_snapshot snap;
	struct fd_slot *s = slot_of(15);

	fdtab_open(&tab, 15, KIND_TCP, 5, NULL, NULL, &snap);
	s->c.sizes[DIR_OUT][1] = (uint32_t)-1;
	s->c.errors[DIR_IN][ERR_AGAIN] = (uint32_t)-1;
	fd_account(s, DIR_OUT, 1, 0, ACCT_ALL);
	fd_account(s, DIR_IN, -1, EAGAIN, ACCT_ALL);
	ck_assert_int_eq(fdtab_snapshot(&tab, 15, &snap), 1);
	ck_assert_uint_eq(snap.c.sizes[DIR_OUT][1], 1ull << 32);
	ck_assert_uint_eq(snap.c.errors[DIR_IN][ERR_AGAIN], 1ull << 32);
	ck_assert_int_eq(fdtab_retire(&tab, 15, &snap), 1);
	ck_assert_uint_eq(snap.c.sizes[DIR_OUT][1], 1ull << 32);
	ck_assert_uint_eq(snap.c.errors[DIR_IN][ERR_AGAIN], 1ull << 32);
}
END_TEST

static TCase *tc_regressions(void)
{
	TCase *tc = tcase_create("regressions");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 10);
	tcase_add_test(tc, test_fdtab_forget_all_evens_a_seq_left_odd_by_a_writer_caught_in_fork);
	tcase_add_test(tc, test_fdtab_lifecycle_calls_on_a_slot_held_by_a_stalled_owner_give_up);
	tcase_add_test(tc, test_fdtab_event_counters_exact_past_2_pow_32_without_any_tick);
	tcase_add_test(tc, test_fdtab_note_exec_marks_close_on_exec_fds_until_reopened);
	return tc;
}

int main(void)
{
	Suite *s = suite_create("fdtab");

	suite_add_tcase(s, tc_bounds());
	suite_add_tcase(s, tc_account());
	suite_add_tcase(s, tc_lifecycle());
	suite_add_tcase(s, tc_threads());
	suite_add_tcase(s, tc_regressions());
	return uu_run(s);
}
