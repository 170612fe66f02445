/*
 * check_window.c - the multi-resolution bucket rings (core/window.h): the
 * tier plan and its memory, ring wrap-around, idle gaps, forward jumps,
 * clocks that step back, the covered length of a young window, coarse
 * buckets that hold exactly the bytes of their base buckets, and exact sums
 * against a naive model that keeps every event.
 */
#include "../../core/window.h"
#include "unit_util.h"

#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

/* The plan for spans of base buckets bucket_ms wide; it must succeed. */
static struct window_shape shape(uint64_t bucket_ms, unsigned n,
				 const uint32_t *span)
{
	struct window_shape s;

	ck_assert_int_eq(window_shape_init(&s, bucket_ms, n, span), 0);
	return s;
}

/* A window on the heap sized for its shape. */
static struct window *new_window(const struct window_shape *s, uint64_t start)
{
	struct window *w = malloc(window_bytes(s));

	ck_assert_ptr_nonnull(w);
	window_reset(w, s, start);
	return w;
}

static void assert_sums(const struct window *w, unsigned k, uint64_t in,
			uint64_t out)
{
	ck_assert_uint_eq(window_sum(w, k, 0), in);
	ck_assert_uint_eq(window_sum(w, k, 1), out);
}

/* --- basics ------------------------------------------------------------ */

START_TEST(test_window_default_spans_are_one_32bit_tier_of_60_one_second_buckets)
{
	struct window_shape s = shape(1000, 3, (uint32_t[]){ 1, 10, 60 });

	/* 560 bytes, as the single ring was before tiers. */
	ck_assert_uint_eq(s.ntiers, 1);
	ck_assert_uint_eq(s.tier[0].res, 1);
	ck_assert_uint_eq(s.tier[0].len, 60);
	ck_assert_uint_eq(s.tier[0].wide, 0);
	ck_assert_uint_eq(window_bytes(&s),
			  sizeof(struct window) + 60 * 2 * sizeof(uint32_t));
	ck_assert_uint_eq(window_bytes(&s), 560);
}
END_TEST

START_TEST(test_window_day_at_one_second_is_three_tiers_in_under_2_5_kib)
{
	struct window_shape s =
		shape(1000, 4, (uint32_t[]){ 1, 60, 3600, 86400 });

	/* 60 x 1 s (32-bit), 60 x 60 s and 60 x 1440 s (64-bit). */
	ck_assert_uint_eq(s.ntiers, 3);
	ck_assert_uint_eq(window_res(&s, 0), 1);
	ck_assert_uint_eq(window_res(&s, 1), 1);
	ck_assert_uint_eq(window_res(&s, 2), 60);
	ck_assert_uint_eq(window_res(&s, 3), 1440);
	ck_assert_uint_eq(s.nt[0], 1);
	ck_assert_uint_eq(s.nt[1], 60);
	ck_assert_uint_eq(s.nt[2], 60);
	ck_assert_uint_eq(s.nt[3], 60);
	ck_assert_uint_eq(s.tier[s.tier_of[1]].wide, 0);
	ck_assert_uint_eq(s.tier[s.tier_of[2]].wide, 1);
	ck_assert_uint_eq(s.tier[s.tier_of[3]].wide, 1);
	ck_assert_uint_eq(window_bytes(&s), 80 + 480 + 960 + 960);
}
END_TEST

START_TEST(test_window_narrow_buckets_allow_120_per_span_then_go_wide)
{
	/* 0.1 s buckets: 60 s is 600 buckets, served by 120 x 0.5 s
	 * (32-bit); 10 s by 100 x 0.1 s. */
	struct window_shape s = shape(100, 2, (uint32_t[]){ 100, 600 });

	ck_assert_uint_eq(window_res(&s, 0), 1);
	ck_assert_uint_eq(s.nt[0], 100);
	ck_assert_uint_eq(window_res(&s, 1), 5);
	ck_assert_uint_eq(s.nt[1], 120);
	ck_assert_uint_eq(s.tier[0].wide, 0);
	ck_assert_uint_eq(s.tier[1].wide, 0);
	/* 1 s buckets, 121 s: no 32-bit plan of 120 (121 = 11 x 11), so
	 * 11 x 11 s, 64-bit. */
	s = shape(1000, 1, (uint32_t[]){ 121 });
	ck_assert_uint_eq(window_res(&s, 0), 11);
	ck_assert_uint_eq(s.nt[0], 11);
	ck_assert_uint_eq(s.tier[0].wide, 1);
	/* A prime span: one bucket as long as the span. */
	s = shape(1000, 1, (uint32_t[]){ 86371 });
	ck_assert_uint_eq(window_res(&s, 0), 86371);
	ck_assert_uint_eq(s.nt[0], 1);
}
END_TEST

START_TEST(test_window_four_coarse_spans_lower_the_tier_length_to_fit_the_budget)
{
	/* Four spans each on its own 64-bit tier of 60 would take
	 * 80 + 4 x 960 = 3920 bytes: the plan shortens every tier. */
	struct window_shape s =
		shape(1000, 4, (uint32_t[]){ 600, 3600, 21600, 86400 });
	unsigned k;

	ck_assert_uint_le(window_bytes(&s), WINDOW_MAX_BYTES);
	ck_assert_uint_eq(s.ntiers, 4);
	for (k = 0; k < 4; k++) {
		ck_assert_uint_eq(s.span[k] % window_res(&s, k), 0);
		ck_assert_uint_eq(s.nt[k] * window_res(&s, k), s.span[k]);
		ck_assert_uint_ge(s.nt[k], 40);
	}
}
END_TEST

START_TEST(test_window_every_plan_fits_the_budget_and_divides_its_spans)
{
	static const uint64_t widths[] = { 100, 250, 1000, 7000, 3600000 };
	uint64_t rng = 99;
	unsigned i, k;

	for (i = 0; i < 20000; i++) {
		uint64_t width = widths[uu_below(&rng, 5)];
		unsigned n = 1 + (unsigned)uu_below(&rng, WINDOW_MAX_SPANS);
		uint32_t span[WINDOW_MAX_SPANS], prev = 0;
		struct window_shape s;

		for (k = 0; k < n; k++) {
			prev += 1 + (uint32_t)uu_below(&rng, uu_below(&rng, 3)
					? 100 : 86400 / WINDOW_MAX_SPANS);
			span[k] = prev;
		}
		s = shape(width, n, span);
		ck_assert_uint_le(window_bytes(&s), WINDOW_MAX_BYTES);
		ck_assert_uint_le(s.ntiers, n);
		for (k = 0; k < n; k++) {
			const struct window_tier *t = &s.tier[s.tier_of[k]];

			ck_assert_uint_eq(s.span[k] % t->res, 0);
			ck_assert_uint_eq(s.nt[k] * t->res, s.span[k]);
			ck_assert_uint_le(s.nt[k], t->len);
			ck_assert_uint_le(t->len, 2 * WINDOW_TIER_LEN);
			ck_assert_uint_eq(t->wide, t->res * width > 1000);
			/* 64-bit rings come first and stay aligned. */
			ck_assert_uint_eq(t->off % (t->wide ? 8 : 4), 0);
		}
	}
}
END_TEST

START_TEST(test_window_shape_init_refuses_bad_spans)
{
	struct window_shape s;

	ck_assert_int_eq(window_shape_init(&s, 1000, 0, (uint32_t[]){ 1 }),
			 -EINVAL);
	ck_assert_int_eq(window_shape_init(&s, 1000, 5,
					   (uint32_t[]){ 1, 2, 3, 4, 5 }),
			 -EINVAL);
	ck_assert_int_eq(window_shape_init(&s, 1000, 2, (uint32_t[]){ 5, 5 }),
			 -EINVAL);
	ck_assert_int_eq(window_shape_init(&s, 1000, 1, (uint32_t[]){ 0 }),
			 -EINVAL);
	ck_assert_int_eq(window_shape_init(&s, 0, 1, (uint32_t[]){ 1 }),
			 -EINVAL);
	ck_assert_uint_eq(s.nspans, 0);
}
END_TEST

START_TEST(test_window_reset_empties_every_span)
{
	struct window_shape s = shape(1000, 2, (uint32_t[]){ 1, 4 });
	struct window *w = new_window(&s, 7);

	window_add(w, &s, 7, 11, 22);
	window_reset(w, &s, 30);
	ck_assert_uint_eq(w->head, 30);
	ck_assert_uint_eq(w->first, 30);
	assert_sums(w, 0, 0, 0);
	assert_sums(w, 1, 0, 0);
	free(w);
}
END_TEST

START_TEST(test_window_add_counts_once_in_every_span)
{
	struct window_shape s = shape(1000, 3, (uint32_t[]){ 1, 3, 10 });
	struct window *w = new_window(&s, 1000);

	window_add(w, &s, 1000, 5, 7);
	window_add(w, &s, 1000, 1, 0);
	assert_sums(w, 0, 6, 7);
	assert_sums(w, 1, 6, 7);
	assert_sums(w, 2, 6, 7);
	free(w);
}
END_TEST

START_TEST(test_window_wraps_around_ring_after_more_pushes_than_buckets)
{
	struct window_shape s = shape(1000, 3, (uint32_t[]){ 1, 2, 4 });
	struct window *w = new_window(&s, 100);
	uint64_t v;

	/* Bucket 100+i holds i+1 in and 2(i+1) out, for 20 buckets: the ring
	 * of 4 wraps five times. */
	for (v = 1; v <= 20; v++) {
		window_add(w, &s, 99 + v, v, 2 * v);
		assert_sums(w, 0, v, 2 * v);
		if (v >= 2)
			assert_sums(w, 1, v + (v - 1), 2 * (v + (v - 1)));
		if (v >= 4)
			assert_sums(w, 2, 4 * v - 6, 2 * (4 * v - 6));
	}
	/* Buckets 116..119 hold 17..20. */
	assert_sums(w, 0, 20, 40);
	assert_sums(w, 1, 39, 78);
	assert_sums(w, 2, 74, 148);
	ck_assert_uint_eq(w->head, 119);
	free(w);
}
END_TEST

static TCase *tc_basics(void)
{
	TCase *tc = tcase_create("basics");

	tcase_add_test(tc, test_window_default_spans_are_one_32bit_tier_of_60_one_second_buckets);
	tcase_add_test(tc, test_window_day_at_one_second_is_three_tiers_in_under_2_5_kib);
	tcase_add_test(tc, test_window_narrow_buckets_allow_120_per_span_then_go_wide);
	tcase_add_test(tc, test_window_four_coarse_spans_lower_the_tier_length_to_fit_the_budget);
	tcase_add_test(tc, test_window_every_plan_fits_the_budget_and_divides_its_spans);
	tcase_add_test(tc, test_window_shape_init_refuses_bad_spans);
	tcase_add_test(tc, test_window_reset_empties_every_span);
	tcase_add_test(tc, test_window_add_counts_once_in_every_span);
	tcase_add_test(tc, test_window_wraps_around_ring_after_more_pushes_than_buckets);
	return tc;
}

/* --- time moving: gaps, jumps, steps back -------------------------------- */

START_TEST(test_window_idle_gap_of_whole_ring_zeroes_sums_and_next_add_counts_alone)
{
	struct window_shape s = shape(1000, 2, (uint32_t[]){ 1, 5 });
	struct window *w = new_window(&s, 40);
	unsigned i;

	for (i = 0; i < 5; i++)
		window_add(w, &s, 40 + i, 100, 1);
	assert_sums(w, 1, 500, 5);

	/* Exactly one ring length later: every bucket has left. */
	window_advance(w, &s, 44 + 5);
	ck_assert_uint_eq(w->head, 49);
	assert_sums(w, 0, 0, 0);
	assert_sums(w, 1, 0, 0);
	window_add(w, &s, 49, 3, 4);
	assert_sums(w, 0, 3, 4);
	assert_sums(w, 1, 3, 4);

	/* A gap of a billion buckets: same, and cheap. */
	window_add(w, &s, 1000000049ull, 9, 8);
	ck_assert_uint_eq(w->head, 1000000049ull);
	assert_sums(w, 0, 9, 8);
	assert_sums(w, 1, 9, 8);
	free(w);
}
END_TEST

START_TEST(test_window_gap_just_shorter_than_ring_keeps_only_the_oldest_bucket_in_full_span)
{
	struct window_shape s = shape(1000, 2, (uint32_t[]){ 1, 5 });
	struct window *w = new_window(&s, 40);

	window_add(w, &s, 40, 100, 1);
	window_advance(w, &s, 44); /* 40..44 is still 5 buckets */
	assert_sums(w, 0, 0, 0);
	assert_sums(w, 1, 100, 1);
	window_advance(w, &s, 45);
	assert_sums(w, 1, 0, 0);
	free(w);
}
END_TEST

START_TEST(test_window_forward_jump_shorter_than_ring_drops_only_buckets_that_left)
{
	struct window_shape s = shape(1000, 2, (uint32_t[]){ 2, 6 });
	struct window *w = new_window(&s, 10);

	window_add(w, &s, 10, 1, 10);
	window_add(w, &s, 11, 2, 20);
	window_add(w, &s, 12, 4, 40);
	/* Jump 3 buckets: span 2 holds 14,15; span 6 holds 10..15. */
	window_add(w, &s, 15, 8, 80);
	assert_sums(w, 0, 8, 80);
	assert_sums(w, 1, 15, 150);
	/* One more: bucket 10 leaves span 6. */
	window_advance(w, &s, 16);
	assert_sums(w, 0, 8, 80);
	assert_sums(w, 1, 14, 140);
	/* Jump 2: span 6 holds 12..18 minus 12 = 13..18: only bucket 15. */
	window_advance(w, &s, 18);
	assert_sums(w, 0, 0, 0);
	assert_sums(w, 1, 8, 80);
	free(w);
}
END_TEST

START_TEST(test_window_older_bucket_number_is_added_to_newest_bucket)
{
	struct window_shape s = shape(1000, 2, (uint32_t[]){ 1, 3 });
	struct window *w = new_window(&s, 20);

	window_add(w, &s, 20, 5, 50);
	window_add(w, &s, 17, 3, 30); /* the clock stepped back */
	ck_assert_uint_eq(w->head, 20);
	assert_sums(w, 0, 8, 80);
	assert_sums(w, 1, 8, 80);
	/* Both amounts sit in bucket 20 and leave together. */
	window_advance(w, &s, 21);
	assert_sums(w, 0, 0, 0);
	assert_sums(w, 1, 8, 80);
	window_advance(w, &s, 23);
	assert_sums(w, 1, 0, 0);
	free(w);
}
END_TEST

START_TEST(test_window_advance_to_same_or_older_bucket_changes_nothing)
{
	struct window_shape s = shape(1000, 1, (uint32_t[]){ 1 });
	struct window *w = new_window(&s, 9);

	window_add(w, &s, 9, 6, 7);
	window_advance(w, &s, 9);
	window_advance(w, &s, 2);
	ck_assert_uint_eq(w->head, 9);
	assert_sums(w, 0, 6, 7);
	free(w);
}
END_TEST

START_TEST(test_window_covered_grows_with_age_until_span_length)
{
	struct window_shape s = shape(1000, 3, (uint32_t[]){ 1, 3, 10 });
	struct window *w = new_window(&s, 50);

	ck_assert_uint_eq(window_covered(w, &s, 0), 1);
	ck_assert_uint_eq(window_covered(w, &s, 1), 1);
	ck_assert_uint_eq(window_covered(w, &s, 2), 1);
	window_advance(w, &s, 51);
	ck_assert_uint_eq(window_covered(w, &s, 0), 1);
	ck_assert_uint_eq(window_covered(w, &s, 1), 2);
	ck_assert_uint_eq(window_covered(w, &s, 2), 2);
	window_advance(w, &s, 52);
	ck_assert_uint_eq(window_covered(w, &s, 1), 3);
	ck_assert_uint_eq(window_covered(w, &s, 2), 3);
	window_advance(w, &s, 58);
	ck_assert_uint_eq(window_covered(w, &s, 2), 9);
	window_advance(w, &s, 59);
	ck_assert_uint_eq(window_covered(w, &s, 2), 10);
	window_advance(w, &s, 75);
	ck_assert_uint_eq(window_covered(w, &s, 2), 10);
	free(w);
}
END_TEST

START_TEST(test_window_covered_survives_idle_gap_longer_than_ring)
{
	struct window_shape s = shape(1000, 2, (uint32_t[]){ 2, 4 });
	struct window *w = new_window(&s, 5);

	/* The gap clears the ring but the window is still old, not new. */
	window_advance(w, &s, 500);
	ck_assert_uint_eq(w->first, 5);
	ck_assert_uint_eq(window_covered(w, &s, 0), 2);
	ck_assert_uint_eq(window_covered(w, &s, 1), 4);
	free(w);
}
END_TEST

/*
 * Regression: step() once indexed the bucket leaving span k with
 * (next - span[k]) % nbuckets in uint64_t; while next < span[k] that wraps,
 * and 2^64 % nbuckets is not 0 unless nbuckets is a power of two, so live
 * data was subtracted early and again later (the sum wrapped to ~2^64).
 * The meter numbers buckets from 0 at start-up, so this is the real case.
 */
START_TEST(test_window_bucket_zero_stays_in_span_while_head_is_below_span)
{
	struct window_shape s = shape(1000, 1, (uint32_t[]){ 3 });
	struct window *w = new_window(&s, 0);

	window_add(w, &s, 0, 10, 20);
	window_advance(w, &s, 1); /* span 3 now holds buckets -1, 0, 1 */
	assert_sums(w, 0, 10, 20);
	window_advance(w, &s, 2); /* 0, 1, 2 */
	assert_sums(w, 0, 10, 20);
	window_advance(w, &s, 3); /* 1, 2, 3 */
	assert_sums(w, 0, 0, 0);
	free(w);
}
END_TEST

START_TEST(test_window_narrow_bucket_saturates_at_4gib_and_sums_stay_consistent)
{
	struct window_shape s = shape(1000, 2, (uint32_t[]){ 1, 4 });
	struct window *w = new_window(&s, 10);

	window_add(w, &s, 10, 3ull << 30, 1);
	window_add(w, &s, 10, 3ull << 30, 1);
	ck_assert_uint_eq(window_sum(w, 0, 0), UINT32_MAX);
	ck_assert_uint_eq(window_sum(w, 1, 0), UINT32_MAX);
	ck_assert_uint_eq(window_sum(w, 0, 1), 2);
	window_add(w, &s, 11, 5, 0);
	ck_assert_uint_eq(window_sum(w, 0, 0), 5);
	ck_assert_uint_eq(window_sum(w, 1, 0), UINT32_MAX + 5ull);
	window_advance(w, &s, 14);
	ck_assert_uint_eq(window_sum(w, 1, 0), 5);
	window_advance(w, &s, 15);
	ck_assert_uint_eq(window_sum(w, 1, 0), 0);
	ck_assert_uint_eq(window_sum(w, 1, 1), 0);
	free(w);
}
END_TEST

/* Issue 10, bug 5: an hour-wide bucket was 32-bit and held at most 4 GiB,
 * i.e. 1.2 MB/s.  Wide buckets are 64-bit now. */
START_TEST(test_window_hour_bucket_holds_more_than_4gib_exactly)
{
	struct window_shape s = shape(3600000, 2, (uint32_t[]){ 1, 24 });
	struct window *w = new_window(&s, 0);

	ck_assert_uint_eq(s.tier[0].wide, 1);
	window_add(w, &s, 0, 3ull << 30, 1);
	window_add(w, &s, 0, 3ull << 30, 1);
	window_add(w, &s, 1, 5ull << 40, 0);
	ck_assert_uint_eq(window_sum(w, 0, 0), 5ull << 40);
	ck_assert_uint_eq(window_sum(w, 1, 0), (6ull << 30) + (5ull << 40));
	ck_assert_uint_eq(window_sum(w, 1, 1), 2);
	free(w);
}
END_TEST

/* A saturated 1 s bucket does not cut what the coarse tiers count. */
START_TEST(test_window_saturated_narrow_tier_leaves_wide_tier_exact)
{
	struct window_shape s = shape(1000, 2, (uint32_t[]){ 1, 3600 });
	struct window *w = new_window(&s, 0);

	ck_assert_uint_eq(s.tier[s.tier_of[0]].wide, 0);
	ck_assert_uint_eq(s.tier[s.tier_of[1]].wide, 1);
	window_add(w, &s, 5, 6ull << 30, 0);
	ck_assert_uint_eq(window_sum(w, 0, 0), UINT32_MAX);
	ck_assert_uint_eq(window_sum(w, 1, 0), 6ull << 30);
	free(w);
}
END_TEST

static TCase *tc_time(void)
{
	TCase *tc = tcase_create("time");

	tcase_add_test(tc, test_window_idle_gap_of_whole_ring_zeroes_sums_and_next_add_counts_alone);
	tcase_add_test(tc, test_window_gap_just_shorter_than_ring_keeps_only_the_oldest_bucket_in_full_span);
	tcase_add_test(tc, test_window_forward_jump_shorter_than_ring_drops_only_buckets_that_left);
	tcase_add_test(tc, test_window_older_bucket_number_is_added_to_newest_bucket);
	tcase_add_test(tc, test_window_advance_to_same_or_older_bucket_changes_nothing);
	tcase_add_test(tc, test_window_covered_grows_with_age_until_span_length);
	tcase_add_test(tc, test_window_covered_survives_idle_gap_longer_than_ring);
	tcase_add_test(tc, test_window_bucket_zero_stays_in_span_while_head_is_below_span);
	tcase_add_test(tc, test_window_narrow_bucket_saturates_at_4gib_and_sums_stay_consistent);
	tcase_add_test(tc, test_window_hour_bucket_holds_more_than_4gib_exactly);
	tcase_add_test(tc, test_window_saturated_narrow_tier_leaves_wide_tier_exact);
	return tc;
}


/* --- coarse buckets against the 1 s tier -------------------------------- */

#define DAYS2 (2 * 86400)

/*
 * The hour-scale tiers hold exactly the bytes of their one-second buckets:
 * two windows see the same traffic, one with only a 1 s span (the 1 s tier
 * alone), one with spans up to a day; every second, each span's sum must be
 * the sum of the 1 s buckets over exactly the base buckets it covers.
 */
START_TEST(test_window_coarse_tier_sums_equal_their_one_second_buckets)
{
	static uint64_t sec[DAYS2][2], pre[DAYS2 + 1][2];
	struct window_shape fine = shape(1000, 1, (uint32_t[]){ 1 });
	struct window_shape s =
		shape(1000, 4, (uint32_t[]){ 1, 60, 3600, 86400 });
	struct window *w1 = new_window(&fine, 0), *w = new_window(&s, 0);
	uint64_t rng = 4242, b, in, out;
	unsigned k, d;

	ck_assert_uint_eq(window_res(&s, 2), 60);
	ck_assert_uint_eq(window_res(&s, 3), 1440);
	for (b = 0; b < DAYS2; b++) {
		/* Bursts, silences and steady streams, some above 4 GiB/s
		 * (the 1 s tier then saturates, and so does the model). */
		uint64_t mode = (b / 977) % 4;

		in = mode == 0 ? 0 : uu_below(&rng, mode == 3 ? 1ull << 33 : 1 << 20);
		out = uu_below(&rng, 3) ? uu_below(&rng, 100000) : 0;
		if (mode == 3)
			in = in > UINT32_MAX ? UINT32_MAX : in;
		window_add(w1, &fine, b, in, out);
		window_add(w, &s, b, in, out);
		for (d = 0; d < 2; d++) {
			sec[b][d] = window_sum(w1, 0, d);
			pre[b + 1][d] = pre[b][d] + sec[b][d];
		}
		for (k = 0; k < s.nspans; k++) {
			uint64_t c = window_covered(w, &s, k);
			uint64_t r = window_res(&s, k);

			ck_assert_uint_ge(c, b + 1 < s.span[k] - r + 1
					     ? b + 1 : s.span[k] - r + 1);
			ck_assert_uint_le(c, s.span[k]);
			/* The covered range starts on a tier bucket (or 0). */
			ck_assert_uint_eq((b + 1 - c) % r, 0);
			for (d = 0; d < 2; d++)
				if (window_sum(w, k, d) !=
				    pre[b + 1][d] - pre[b + 1 - c][d])
					ck_abort_msg("bucket %llu span %u dir %u:"
						     " %llu, 1 s tier %llu",
						     (unsigned long long)b,
						     s.span[k], d,
						     (unsigned long long)
						     window_sum(w, k, d),
						     (unsigned long long)
						     (pre[b + 1][d] -
						      pre[b + 1 - c][d]));
		}
	}
	free(w1);
	free(w);
}
END_TEST

/* --- against a naive model ------------------------------------------------ */

#define MODEL_STEPS 5000

struct event {
	uint64_t bucket, in, out;
	uint64_t got[WINDOW_MAX_TIERS][2]; /* what each tier kept */
};

/* The reference: every event kept, sums recomputed from scratch. */
struct model {
	struct event ev[MODEL_STEPS];
	unsigned n;
	uint64_t head, first;
};

/* Where span k's sum starts now: its oldest tier bucket, or the reset. */
static uint64_t model_start(const struct model *m,
			    const struct window_shape *s, unsigned k)
{
	uint64_t r = window_res(s, k), n = s->nt[k], b = m->head / r;
	uint64_t start = b + 1 >= n ? (b + 1 - n) * r : 0;

	return start > m->first ? start : m->first;
}

static void model_sum(const struct model *m, const struct window_shape *s,
		      unsigned k, uint64_t *in, uint64_t *out)
{
	uint64_t start = model_start(m, s, k);
	unsigned i, t = s->tier_of[k];

	*in = *out = 0;
	for (i = 0; i < m->n; i++)
		if (m->ev[i].bucket >= start && m->ev[i].bucket <= m->head) {
			*in += m->ev[i].got[t][0];
			*out += m->ev[i].got[t][1];
		}
}

/* A 32-bit tier's bucket holds at most UINT32_MAX per direction: what
 * each tier keeps of a new event for the newest bucket. */
static void model_keep(const struct model *m, const struct window_shape *s,
		       struct event *e)
{
	unsigned t, i, d;

	for (t = 0; t < s->ntiers; t++) {
		uint64_t r = s->tier[t].res, have[2] = { 0, 0 };
		uint64_t v[2] = { e->in, e->out };

		for (i = 0; i < m->n; i++)
			if (m->ev[i].bucket / r == m->head / r)
				for (d = 0; d < 2; d++)
					have[d] += m->ev[i].got[t][d];
		for (d = 0; d < 2; d++) {
			if (!s->tier[t].wide && v[d] > UINT32_MAX - have[d])
				v[d] = UINT32_MAX - have[d];
			e->got[t][d] = v[d];
		}
	}
}

/* Drop events no span can reach any more, so the model stays small. */
static void model_prune(struct model *m, const struct window_shape *s)
{
	unsigned i, j = 0;

	for (i = 0; i < m->n; i++)
		if (m->ev[i].bucket + 2ull * s->nbuckets > m->head)
			m->ev[j++] = m->ev[i];
	m->n = j;
}

struct model_case {
	uint64_t bucket_ms;
	unsigned n;
	uint32_t span[WINDOW_MAX_SPANS];
};

static const struct model_case model_cases[] = {
	{ 1000, 1, { 1 } },
	{ 1000, 2, { 1, 2 } },
	{ 1000, 1, { 7 } },
	{ 1000, 3, { 1, 3, 7 } },
	{ 1000, 3, { 1, 10, 60 } },
	{ 1000, 1, { 60 } },
	{ 1000, 4, { 1, 7, 30, 59 } },
	{ 1000, 3, { 1, 240, 1200 } },      /* 1 s, 2 x 60 s tiers */
	{ 1000, 4, { 2, 130, 1001, 1560 } },  /* odd divisors */
	{ 1000, 2, { 5, 121 } },            /* 11 x 11 s */
	{ 100, 3, { 10, 600, 3000 } },      /* 0.5 s narrow, 5 s wide */
	{ 3600000, 2, { 1, 24 } },          /* hour buckets, all wide */
	{ 1000, 4, { 600, 3600, 21600, 86400 } }, /* the budget lowers caps */
};
#define NCASES (sizeof(model_cases) / sizeof(model_cases[0]))

/* Random adds, idle advances, gaps up to twice the longest span and steps
 * back, from start; every sum and covered length compared with the model
 * after every step. */
static void run_model(const struct model_case *mc, uint64_t start,
		      uint64_t seed, unsigned steps)
{
	static struct model m;
	struct window_shape sh = shape(mc->bucket_ms, mc->n, mc->span);
	const struct window_shape *s = &sh;
	struct window *w = new_window(s, start);
	uint64_t rng = seed, bucket;
	unsigned step, k;

	m.n = 0;
	m.head = m.first = start;
	ck_assert_uint_le(steps, MODEL_STEPS);
	for (step = 0; step < steps; step++) {
		uint64_t pick = uu_below(&rng, 100);
		uint64_t reach = 2ull * s->nbuckets + 1;
		struct event e = { 0 };

		if (pick < 10) { /* a clock stepping back, up to 3 spans */
			uint64_t back = m.head - start;

			if (back > 3ull * s->nbuckets)
				back = 3ull * s->nbuckets;
			bucket = m.head - uu_below(&rng, back + 1);
		} else if (pick < 50) { /* most calls land in the same bucket */
			bucket = m.head + uu_below(&rng, 2);
		} else if (pick < 80 && reach > 200) { /* short steps too */
			bucket = m.head + uu_below(&rng, 200);
		} else {
			bucket = m.head + uu_below(&rng, reach);
		}
		e.in = uu_below(&rng, 4) ? uu_below(&rng, 1ull << 32) : 0;
		e.out = uu_below(&rng, 4) ? uu_below(&rng, 1000) : 0;

		if (bucket > m.head)
			m.head = bucket;
		if (uu_below(&rng, 5) == 0) {
			window_advance(w, s, bucket);
		} else {
			window_add(w, s, bucket, e.in, e.out);
			e.bucket = m.head;
			model_keep(&m, s, &e);
			m.ev[m.n++] = e;
		}
		model_prune(&m, s);

		ck_assert_uint_eq(w->head, m.head);
		for (k = 0; k < s->nspans; k++) {
			uint64_t want_in, want_out;

			model_sum(&m, s, k, &want_in, &want_out);
			if (window_sum(w, k, 0) != want_in ||
			    window_sum(w, k, 1) != want_out)
				ck_abort_msg("width %llu span %u res %u start "
					     "%llu step %u head %llu: window "
					     "%llu/%llu, model %llu/%llu",
					     (unsigned long long)mc->bucket_ms,
					     s->span[k], window_res(s, k),
					     (unsigned long long)start, step,
					     (unsigned long long)m.head,
					     (unsigned long long)window_sum(w, k, 0),
					     (unsigned long long)window_sum(w, k, 1),
					     (unsigned long long)want_in,
					     (unsigned long long)want_out);
			ck_assert_uint_eq(window_covered(w, s, k),
					  m.head - model_start(&m, s, k) + 1);
		}
	}
	free(w);
}

START_TEST(test_window_sums_match_naive_model_on_random_steps_from_large_bucket)
{
	unsigned i;

	uint64_t rng = 12345;
	unsigned r;

	/* Bucket numbers as a monotonic clock gives them after a while: one
	 * long run per shape, then many short ones from odd starts. */
	for (i = 0; i < NCASES; i++) {
		run_model(&model_cases[i], 1000000000000ull + i, 12345 + i,
			  MODEL_STEPS);
		for (r = 0; r < 200; r++)
			run_model(&model_cases[i],
				  1000 + uu_below(&rng, 1ull << 40),
				  uu_rand(&rng) | 1, 100);
	}
}
END_TEST

/* Small bucket numbers, as the meter uses: see
 * test_window_bucket_zero_stays_in_span_while_head_is_below_span. */
START_TEST(test_window_sums_match_naive_model_on_random_steps_from_bucket_zero)
{
	unsigned i;

	uint64_t rng = 777;
	unsigned r;

	/* Short runs: what matters is how the head first climbs past the
	 * spans. */
	for (i = 0; i < NCASES; i++)
		for (r = 0; r < 200; r++)
			run_model(&model_cases[i], 0, uu_rand(&rng) | 1, 100);
}
END_TEST

static TCase *tc_model(void)
{
	TCase *tc = tcase_create("model");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_window_coarse_tier_sums_equal_their_one_second_buckets);
	tcase_add_test(tc, test_window_sums_match_naive_model_on_random_steps_from_large_bucket);
	tcase_add_test(tc, test_window_sums_match_naive_model_on_random_steps_from_bucket_zero);
	return tc;
}

int main(void)
{
	Suite *s = suite_create("window");

	suite_add_tcase(s, tc_basics());
	suite_add_tcase(s, tc_time());
	suite_add_tcase(s, tc_model());
	return uu_run(s);
}
