/*
 * check_window.c - the constant-time bucket ring (core/window.h): ring
 * wrap-around, idle gaps, forward jumps, clocks that step back, the covered
 * length of a young window, and exact sums against a naive model that keeps
 * every event.
 */
#include "../../core/window.h"
#include "unit_util.h"

#include <check.h>
#include <stdint.h>
#include <stdlib.h>

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

START_TEST(test_window_bytes_is_header_plus_two_32bit_counters_per_bucket)
{
	struct window_shape s = { .nbuckets = 60, .nspans = 1, .span = { 60 } };

	ck_assert_uint_eq(window_bytes(&s),
			  sizeof(struct window) + 60 * 2 * sizeof(uint32_t));
}
END_TEST

START_TEST(test_window_reset_empties_every_span)
{
	struct window_shape s = { .nbuckets = 4, .nspans = 2, .span = { 1, 4 } };
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
	struct window_shape s = { .nbuckets = 10, .nspans = 3,
				  .span = { 1, 3, 10 } };
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
	struct window_shape s = { .nbuckets = 4, .nspans = 3,
				  .span = { 1, 2, 4 } };
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

	tcase_add_test(tc, test_window_bytes_is_header_plus_two_32bit_counters_per_bucket);
	tcase_add_test(tc, test_window_reset_empties_every_span);
	tcase_add_test(tc, test_window_add_counts_once_in_every_span);
	tcase_add_test(tc, test_window_wraps_around_ring_after_more_pushes_than_buckets);
	return tc;
}

/* --- time moving: gaps, jumps, steps back -------------------------------- */

START_TEST(test_window_idle_gap_of_whole_ring_zeroes_sums_and_next_add_counts_alone)
{
	struct window_shape s = { .nbuckets = 5, .nspans = 2, .span = { 1, 5 } };
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
	struct window_shape s = { .nbuckets = 5, .nspans = 2, .span = { 1, 5 } };
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
	struct window_shape s = { .nbuckets = 6, .nspans = 2, .span = { 2, 6 } };
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
	struct window_shape s = { .nbuckets = 8, .nspans = 2, .span = { 1, 3 } };
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
	struct window_shape s = { .nbuckets = 3, .nspans = 1, .span = { 1 } };
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
	struct window_shape s = { .nbuckets = 10, .nspans = 3,
				  .span = { 1, 3, 10 } };
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
	struct window_shape s = { .nbuckets = 4, .nspans = 2, .span = { 2, 4 } };
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
	struct window_shape s = { .nbuckets = 7, .nspans = 1, .span = { 3 } };
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

START_TEST(test_window_bucket_saturates_at_4gib_and_sums_stay_consistent)
{
	static const struct window_shape s = { .nbuckets = 4, .nspans = 2,
					       .span = { 1, 4 } };
	struct window *w = new_window(&s, 10);

	window_add(w, &s, 10, 3ull << 30, 1);
	window_add(w, &s, 10, 3ull << 30, 1);
	ck_assert_uint_eq(window_sum(w, 0, 0), WINDOW_BUCKET_MAX);
	ck_assert_uint_eq(window_sum(w, 1, 0), WINDOW_BUCKET_MAX);
	ck_assert_uint_eq(window_sum(w, 0, 1), 2);
	window_add(w, &s, 11, 5, 0);
	ck_assert_uint_eq(window_sum(w, 0, 0), 5);
	ck_assert_uint_eq(window_sum(w, 1, 0), WINDOW_BUCKET_MAX + 5ull);
	window_advance(w, &s, 14);
	ck_assert_uint_eq(window_sum(w, 1, 0), 5);
	window_advance(w, &s, 15);
	ck_assert_uint_eq(window_sum(w, 1, 0), 0);
	ck_assert_uint_eq(window_sum(w, 1, 1), 0);
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
	tcase_add_test(tc, test_window_bucket_saturates_at_4gib_and_sums_stay_consistent);
	return tc;
}


/* --- against a naive model ------------------------------------------------ */

#define MODEL_STEPS 5000

struct event {
	uint64_t bucket, in, out;
};

/* The reference: every event kept, sums recomputed from scratch. */
struct model {
	struct event ev[MODEL_STEPS];
	unsigned n;
	uint64_t head, first;
};

static void model_sum(const struct model *m, uint32_t span, uint64_t *in,
		      uint64_t *out)
{
	unsigned i;

	*in = *out = 0;
	for (i = 0; i < m->n; i++)
		if (m->ev[i].bucket + span > m->head) { /* in (head-span, head] */
			*in += m->ev[i].in;
			*out += m->ev[i].out;
		}
}

/* A bucket holds at most WINDOW_BUCKET_MAX per direction: clip a new
 * event for the newest bucket to what still fits. */
static void model_saturate(const struct model *m, uint64_t *in, uint64_t *out)
{
	uint64_t have_in = 0, have_out = 0;
	unsigned i;

	for (i = 0; i < m->n; i++)
		if (m->ev[i].bucket == m->head) {
			have_in += m->ev[i].in;
			have_out += m->ev[i].out;
		}
	if (*in > WINDOW_BUCKET_MAX - have_in)
		*in = WINDOW_BUCKET_MAX - have_in;
	if (*out > WINDOW_BUCKET_MAX - have_out)
		*out = WINDOW_BUCKET_MAX - have_out;
}

/* Drop events no span can reach any more, so the model stays small. */
static void model_prune(struct model *m, uint32_t nbuckets)
{
	unsigned i, j = 0;

	for (i = 0; i < m->n; i++)
		if (m->ev[i].bucket + nbuckets > m->head)
			m->ev[j++] = m->ev[i];
	m->n = j;
}

static const struct window_shape model_shapes[] = {
	{ .nbuckets = 1, .nspans = 1, .span = { 1 } },
	{ .nbuckets = 2, .nspans = 1, .span = { 1 } },
	{ .nbuckets = 2, .nspans = 2, .span = { 1, 2 } },
	{ .nbuckets = 7, .nspans = 1, .span = { 7 } },
	{ .nbuckets = 7, .nspans = 3, .span = { 1, 3, 7 } },
	{ .nbuckets = 60, .nspans = 3, .span = { 1, 10, 60 } },
	{ .nbuckets = 60, .nspans = 1, .span = { 60 } },
	{ .nbuckets = 60, .nspans = 4, .span = { 1, 7, 30, 59 } },
};
#define NSHAPES (sizeof(model_shapes) / sizeof(model_shapes[0]))

/* Random adds, idle advances, gaps 0..2n and steps back, from start; every
 * sum and covered length compared with the model after every step. */
static void run_model(const struct window_shape *s, uint64_t start,
		      uint64_t seed, unsigned steps)
{
	static struct model m;
	struct window *w = new_window(s, start);
	uint64_t rng = seed, bucket, in, out;
	unsigned step, k;

	m.n = 0;
	m.head = m.first = start;
	ck_assert_uint_le(steps, MODEL_STEPS);
	for (step = 0; step < steps; step++) {
		uint64_t pick = uu_below(&rng, 100);

		if (pick < 10) { /* a clock stepping back, up to 3 rings */
			uint64_t back = m.head - start;

			if (back > 3ull * s->nbuckets)
				back = 3ull * s->nbuckets;
			bucket = m.head - uu_below(&rng, back + 1);
		} else if (pick < 50) { /* most calls land in the same bucket */
			bucket = m.head + uu_below(&rng, 2);
		} else {
			bucket = m.head + uu_below(&rng, 2 * s->nbuckets + 1);
		}
		in = uu_below(&rng, 4) ? uu_below(&rng, 1ull << 32) : 0;
		out = uu_below(&rng, 4) ? uu_below(&rng, 1000) : 0;

		if (bucket > m.head)
			m.head = bucket;
		if (uu_below(&rng, 5) == 0) {
			window_advance(w, s, bucket);
		} else {
			window_add(w, s, bucket, in, out);
			model_saturate(&m, &in, &out);
			m.ev[m.n++] = (struct event){ m.head, in, out };
		}
		model_prune(&m, s->nbuckets);

		ck_assert_uint_eq(w->head, m.head);
		for (k = 0; k < s->nspans; k++) {
			uint64_t want_in, want_out, age = m.head - m.first + 1;

			model_sum(&m, s->span[k], &want_in, &want_out);
			if (window_sum(w, k, 0) != want_in ||
			    window_sum(w, k, 1) != want_out)
				ck_abort_msg("nbuckets %u span %u start %llu "
					     "step %u head %llu: window "
					     "%llu/%llu, model %llu/%llu",
					     s->nbuckets, s->span[k],
					     (unsigned long long)start, step,
					     (unsigned long long)m.head,
					     (unsigned long long)window_sum(w, k, 0),
					     (unsigned long long)window_sum(w, k, 1),
					     (unsigned long long)want_in,
					     (unsigned long long)want_out);
			ck_assert_uint_eq(window_covered(w, s, k),
					  age < s->span[k] ? age : s->span[k]);
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
	for (i = 0; i < NSHAPES; i++) {
		run_model(&model_shapes[i], 1000000000000ull + i, 12345 + i,
			  MODEL_STEPS);
		for (r = 0; r < 200; r++)
			run_model(&model_shapes[i],
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
	for (i = 0; i < NSHAPES; i++)
		for (r = 0; r < 200; r++)
			run_model(&model_shapes[i], 0, uu_rand(&rng) | 1, 100);
}
END_TEST

static TCase *tc_model(void)
{
	TCase *tc = tcase_create("model");

	tcase_set_timeout(tc, 60);
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
