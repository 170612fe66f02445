/*
 * check_closeq.c - the close queue: order, the early wake-up of the ticker
 * at CLOSEQ_WAKE_AT records (once per drain), drops only when full; places
 * claimed before a retire, and a dead process's claims rescued; a full
 * ring's claims through spills into the dropped totals.
 */
#include "../../core/closeq.h"
#include "unit_util.h"

#include <pthread.h>
#include <time.h>

static struct closeq q;

static void setup(void)
{
	ck_assert_int_eq(closeq_init(&q), 0);
}

static void teardown(void)
{
	closeq_destroy(&q);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec;
}

static void push(int fd, uint64_t bytes)
{
	struct fd_snapshot s;

	memset(&s, 0, sizeof(s));
	s.fd = fd;
	s.kind = KIND_TCP;
	s.c.bytes[DIR_OUT] = bytes;
	closeq_push(&q, &s, 1);
}

START_TEST(test_records_come_out_in_order)
{
	struct closeq_entry e;
	int i;

	for (i = 0; i < 10; i++)
		push(i, 100 + (uint64_t)i);
	ck_assert_uint_eq(closeq_pending(&q), 10);
	for (i = 0; i < 10; i++) {
		ck_assert(closeq_pop(&q, &e));
		ck_assert_int_eq(e.s.fd, i);
		ck_assert_uint_eq(e.s.c.bytes[DIR_OUT], 100 + (uint64_t)i);
	}
	ck_assert(!closeq_pop(&q, &e));
	ck_assert_uint_eq(closeq_closed(&q), 10);
	ck_assert_uint_eq(closeq_dropped_records(&q), 0);
}
END_TEST

START_TEST(test_few_records_let_the_ticker_sleep_to_its_deadline)
{
	uint64_t t0 = mono_ns();

	push(3, 1);
	ck_assert(!closeq_wait(&q, t0 + 50000000ull));
	ck_assert_uint_ge(mono_ns() - t0, 50000000ull);
}
END_TEST

START_TEST(test_many_records_wake_the_ticker_at_once)
{
	uint64_t t0;
	int i;

	for (i = 0; i < CLOSEQ_WAKE_AT; i++)
		push(i, 1);
	t0 = mono_ns();
	ck_assert(closeq_wait(&q, t0 + 10 * NS_PER_S));
	ck_assert_uint_lt(mono_ns() - t0, NS_PER_S);
	/* Re-armed: no drain taken, no new push, no second wake. */
	t0 = mono_ns();
	ck_assert(!closeq_wait(&q, t0 + 20000000ull));
}
END_TEST

static void *pusher(void *arg)
{
	int i;

	(void)arg;
	usleep(50000);
	for (i = 0; i < CLOSEQ_WAKE_AT; i++)
		push(i, 1);
	return NULL;
}

START_TEST(test_a_sleeping_ticker_is_woken_by_the_closing_thread)
{
	pthread_t t;
	uint64_t t0 = mono_ns();

	ck_assert_int_eq(pthread_create(&t, NULL, pusher, NULL), 0);
	ck_assert(closeq_wait(&q, t0 + 10 * NS_PER_S));
	ck_assert_uint_lt(mono_ns() - t0, 5 * NS_PER_S);
	pthread_join(t, NULL);
}
END_TEST

START_TEST(test_full_ring_drops_records_keeps_numbers)
{
	struct fd_counters c;
	uint64_t n;
	int i;

	for (i = 0; i < CLOSEQ_CAP + 5; i++)
		push(i, 2);
	ck_assert_uint_eq(closeq_closed(&q), CLOSEQ_CAP + 5);
	ck_assert_uint_eq(closeq_dropped_records(&q), 5);
	closeq_dropped(&q, KIND_TCP, &c, &n);
	ck_assert_uint_eq(n, 5);
	ck_assert_uint_eq(c.bytes[DIR_OUT], 10);
}
END_TEST

/* A dead process's full queue, killed between a drain's commit (its
 * totals hold the oldest 698) and the release of those entries: after
 * closeq_settle only the 7,494 past them are peeked, never the 698 again
 * through the places past head (which are theirs in a full ring). */
START_TEST(test_settled_full_ring_peeks_nothing_past_head)
{
	struct closeq_entry e;
	uint64_t i = 0, upto = 100 + 698;
	int k;

	for (k = 0; k < 100; k++)
		push(k, 1);
	while (closeq_pop(&q, &e))
		;
	for (k = 0; k < CLOSEQ_CAP; k++)
		push(1000 + k, 1);
	ck_assert_uint_eq(closeq_pending(&q), CLOSEQ_CAP);
	closeq_settle(&q, upto);
	while (closeq_peek(&q, i, &e)) {
		ck_assert_int_eq(e.s.fd, (int)(1000 + 698 + i));
		i++;
	}
	ck_assert_uint_eq(i, CLOSEQ_CAP - 698);
}
END_TEST

/* A claimed entry holds the drain as one being written does; finished
 * void, it is passed over (peek gives it, not as a record; pop skips it),
 * and a record behind it comes out in order. */
START_TEST(test_a_claimed_place_holds_the_drain_and_void_is_passed_over)
{
	struct closeq_entry e, *c;

	push(1, 10);
	c = closeq_claim(&q, 5, 8, KIND_TCP, 0, false);
	ck_assert_ptr_nonnull(c);
	ck_assert_uint_eq(c->state, CLOSEQ_TAKING);
	ck_assert_uint_eq(c->bound, 0);
	ck_assert_uint_eq(c->s.c.bytes[DIR_OUT], 0);
	push(3, 30);
	ck_assert(closeq_pop(&q, &e));
	ck_assert_int_eq(e.s.fd, 1);
	ck_assert(!closeq_peek(&q, 0, &e));
	ck_assert(!closeq_pop(&q, &e));
	closeq_finish(&q, c, false);
	ck_assert(closeq_peek(&q, 0, &e));
	ck_assert(!closeq_is_record(&e));
	ck_assert(closeq_peek(&q, 1, &e));
	ck_assert(closeq_is_record(&e));
	ck_assert(closeq_pop(&q, &e));
	ck_assert_int_eq(e.s.fd, 3);
	ck_assert_uint_eq(e.s.c.bytes[DIR_OUT], 30);
	ck_assert(!closeq_pop(&q, &e));
	ck_assert_uint_eq(closeq_pending(&q), 0);

	/* Finished with a connection: a record, its close time the claim's. */
	c = closeq_claim(&q, 77, 9, KIND_TCP, 0, false);
	c->s.fd = 9;
	c->s.kind = KIND_TCP;
	c->s.c.bytes[DIR_IN] = 5;
	closeq_finish(&q, c, true);
	ck_assert(closeq_pop(&q, &e));
	ck_assert_int_eq(e.s.fd, 9);
	ck_assert_uint_eq(e.closed_ns, 77);
	ck_assert_uint_eq(e.s.c.bytes[DIR_IN], 5);
}
END_TEST

/*
 * A full ring's claim takes a spill: finished, its connection is in the
 * dropped totals and the spill free again; with every spill claimed at
 * once (more closing threads than spills), the claim is refused and the
 * caller goes the old way (closeq_push drops the record, keeps the
 * numbers).  The records lost count both.
 */
START_TEST(test_a_full_ring_claims_spills_and_folds_them_into_the_dropped)
{
	struct closeq_entry *c[CLOSEQ_SPILLS], *e;
	struct fd_counters d;
	uint64_t n;
	int i;

	for (i = 0; i < CLOSEQ_CAP; i++)
		push(i, 1);
	ck_assert_uint_eq(q.sh->spills_used, 0);
	e = closeq_claim(&q, 1, 3, KIND_TCP, 0, false);
	ck_assert_ptr_nonnull(e);
	ck_assert_uint_eq(e->state, CLOSEQ_TAKING);
	ck_assert_uint_ne(q.sh->spills_used, 0);
	e->s.c.bytes[DIR_OUT] = 40;
	e->s.c.calls[DIR_OUT] = 2;
	closeq_finish(&q, e, true);
	ck_assert_uint_eq(e->state, CLOSEQ_FREE);
	/* The same spill again (the same thread's): the sums grow. */
	ck_assert_ptr_eq(closeq_claim(&q, 1, 4, KIND_TCP, 0, false), e);
	ck_assert_uint_eq(e->s.c.bytes[DIR_OUT], 0);
	e->s.kind = KIND_TCP;
	e->s.c.bytes[DIR_OUT] = 2;
	closeq_finish(&q, e, true);
	/* Found nothing to retire: no record lost, nothing counted. */
	ck_assert_ptr_eq(closeq_claim(&q, 1, 5, KIND_TCP, 0, false), e);
	closeq_finish(&q, e, false);
	closeq_dropped(&q, KIND_TCP, &d, &n);
	ck_assert_uint_eq(d.bytes[DIR_OUT], 42);
	ck_assert_uint_eq(d.calls[DIR_OUT], 2);
	ck_assert_uint_eq(n, 2);
	closeq_dropped(&q, KIND_UDP, &d, &n);
	ck_assert_uint_eq(d.bytes[DIR_OUT], 0);
	ck_assert_uint_eq(n, 0);
	ck_assert_uint_eq(closeq_dropped_records(&q), 2);

	for (i = 0; i < CLOSEQ_SPILLS; i++) {
		c[i] = closeq_claim(&q, 1, 10 + i, KIND_UDP, 0, false);
		ck_assert_ptr_nonnull(c[i]);
		c[i]->s.kind = KIND_UDP;
		c[i]->s.c.bytes[DIR_IN] = 100;
	}
	ck_assert_ptr_null(closeq_claim(&q, 1, 30, KIND_TCP, 0, false));
	push(30, 1000);
	for (i = 0; i < CLOSEQ_SPILLS; i++)
		closeq_finish(&q, c[i], true);
	closeq_dropped(&q, KIND_COUNT, &d, &n);
	ck_assert_uint_eq(d.bytes[DIR_OUT], 1042);
	ck_assert_uint_eq(d.bytes[DIR_IN], 100 * CLOSEQ_SPILLS);
	ck_assert_uint_eq(n, 3 + CLOSEQ_SPILLS);
	ck_assert_uint_eq(closeq_dropped_records(&q), 3 + CLOSEQ_SPILLS);
	/* Every close counted, recorded or not. */
	ck_assert_uint_eq(closeq_closed(&q), CLOSEQ_CAP + 4 + CLOSEQ_SPILLS);
}
END_TEST

static unsigned rescued, rescued_unbound;

/* As fdtab_rescue: a bound entry gets what its slot still held; an
 * unbound one takes its slot (fd 6 here: left busy) whole, or nothing. */
static int add_rest(void *ctx, struct fd_snapshot *s, uint32_t bound)
{
	(void)ctx;
	if (!bound) {
		rescued_unbound++;
		if (s->fd != 6)
			return 0;
		s->c.bytes[DIR_OUT] = 600;
		return 1;
	}
	rescued++;
	s->c.bytes[DIR_OUT] += 1000; /* what the slot still held */
	return 1;
}

/* A dead process's claimed entries: one the retire had bound gets the
 * rest of its slot and is a record; an unbound one is a record when its
 * slot was left busy, else passed over (the slot holds the connection
 * whole); a record and a void stay so. */
START_TEST(test_rescue_makes_bound_claims_records_and_passes_over_the_rest)
{
	struct closeq_entry e, *unbound, *bound, *gone, *busy;
	uint64_t i;

	push(1, 10);
	unbound = closeq_claim(&q, 2, 2, KIND_TCP, 0, false);
	bound = closeq_claim(&q, 3, 4, KIND_TCP, 0, false);
	bound->s.fd = 4;
	bound->s.kind = KIND_TCP;
	bound->s.c.bytes[DIR_OUT] = 7;
	bound->bound = 1;
	gone = closeq_claim(&q, 4, 5, KIND_TCP, 0, false);
	closeq_finish(&q, gone, false);
	busy = closeq_claim(&q, 6, 6, KIND_UDP, 0, false);
	push(5, 50);
	ck_assert_ptr_nonnull(unbound);
	ck_assert_ptr_nonnull(busy);
	ck_assert_int_eq(busy->s.fd, 6);
	ck_assert_int_eq(busy->s.kind, KIND_UDP);
	rescued = rescued_unbound = 0;
	closeq_rescue(&q, 0, add_rest, NULL);
	ck_assert_uint_eq(rescued, 1);
	ck_assert_uint_eq(rescued_unbound, 2);
	closeq_settle(&q, 0);
	ck_assert_uint_eq(closeq_pending(&q), 4);
	for (i = 0; i < 4; i++)
		ck_assert(closeq_peek(&q, i, &e) && closeq_is_record(&e));
	ck_assert(closeq_pop(&q, &e));
	ck_assert_int_eq(e.s.fd, 1);
	ck_assert(closeq_pop(&q, &e));
	ck_assert_int_eq(e.s.fd, 4);
	ck_assert_uint_eq(e.s.c.bytes[DIR_OUT], 1007);
	ck_assert_uint_eq(e.closed_ns, 3);
	ck_assert(closeq_pop(&q, &e));
	ck_assert_int_eq(e.s.fd, 6);
	ck_assert_uint_eq(e.s.c.bytes[DIR_OUT], 600);
	ck_assert_uint_eq(e.closed_ns, 6);
	ck_assert(closeq_pop(&q, &e));
	ck_assert_int_eq(e.s.fd, 5);
}
END_TEST

/*
 * A dead process's spills: one bound gets the rest of its slot and is
 * folded, one unbound takes its slot left busy (fd 6) or is passed over,
 * one owned but not named yet is free, and one killed in its fold's copy
 * has the copy redone: each connection in the dropped totals once.
 */
START_TEST(test_rescue_folds_a_dead_process_spills_once)
{
	struct closeq_entry *bound, *busy, *gone, *folding;
	struct closeq_spill *sp;
	struct fd_counters d;
	uint64_t n, *sum;
	int i;

	for (i = 0; i < CLOSEQ_CAP; i++)
		push(i, 1);
	/* Four spills at once, each its own. */
	bound = closeq_claim(&q, 2, 4, KIND_TCP, 0, false);
	busy = closeq_claim(&q, 3, 6, KIND_TCP, 0, false);
	gone = closeq_claim(&q, 4, 7, KIND_TCP, 0, false);
	folding = closeq_claim(&q, 5, 8, KIND_TCP, 0, false);
	ck_assert_ptr_nonnull(bound);
	ck_assert_ptr_nonnull(busy);
	ck_assert_ptr_nonnull(gone);
	ck_assert_ptr_nonnull(folding);
	bound->s.kind = KIND_TCP;
	bound->s.c.bytes[DIR_OUT] = 7;
	bound->bound = 3;
	/* Earlier folds of its own: 20 bytes in 1 connection. */
	sp = (struct closeq_spill *)folding;
	sp->sum[KIND_TCP].bytes[DIR_OUT] = 20;
	sp->sum_n[KIND_TCP] = 1;
	/* Killed in its fold: next says 20 + 9 in 2, the copy half done
	 * (the count not yet). */
	folding->s.c.bytes[DIR_OUT] = 9;
	sp->next_kind = KIND_TCP;
	sp->next = sp->sum[KIND_TCP];
	sp->next.bytes[DIR_OUT] = 29;
	sp->next_n = 2;
	folding->state = CLOSEQ_FOLDING;
	sum = (uint64_t *)&sp->sum[KIND_TCP];
	sum[0] = sp->next.bytes[DIR_IN];
	sum[1] = 29;
	/* Owned, nothing named yet (as spill_take leaves it). */
	gone->state = CLOSEQ_WRITING;
	rescued = rescued_unbound = 0;
	closeq_rescue(&q, 0, add_rest, NULL);
	ck_assert_uint_eq(rescued, 1);
	ck_assert_uint_eq(rescued_unbound, 1);
	ck_assert_uint_eq(bound->state, CLOSEQ_FREE);
	ck_assert_uint_eq(busy->state, CLOSEQ_FREE);
	ck_assert_uint_eq(gone->state, CLOSEQ_FREE);
	ck_assert_uint_eq(folding->state, CLOSEQ_FREE);
	closeq_dropped(&q, KIND_TCP, &d, &n);
	/* 1007 (bound and the rest of its slot) + 600 (busy's slot) + 29. */
	ck_assert_uint_eq(d.bytes[DIR_OUT], 1007 + 600 + 29);
	ck_assert_uint_eq(n, 4);
	/* Rescued twice (a recovery itself stopped and redone): the same. */
	closeq_rescue(&q, 0, add_rest, NULL);
	closeq_dropped(&q, KIND_TCP, &d, &n);
	ck_assert_uint_eq(d.bytes[DIR_OUT], 1007 + 600 + 29);
	ck_assert_uint_eq(n, 4);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("closeq");
	TCase *tc = tcase_create("queue");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_records_come_out_in_order);
	tcase_add_test(tc,
		       test_few_records_let_the_ticker_sleep_to_its_deadline);
	tcase_add_test(tc, test_many_records_wake_the_ticker_at_once);
	tcase_add_test(tc,
		       test_a_sleeping_ticker_is_woken_by_the_closing_thread);
	tcase_add_test(tc, test_full_ring_drops_records_keeps_numbers);
	tcase_add_test(tc, test_settled_full_ring_peeks_nothing_past_head);
	tcase_add_test(tc,
		       test_a_claimed_place_holds_the_drain_and_void_is_passed_over);
	tcase_add_test(tc,
		       test_a_full_ring_claims_spills_and_folds_them_into_the_dropped);
	tcase_add_test(
	    tc, test_rescue_makes_bound_claims_records_and_passes_over_the_rest);
	tcase_add_test(tc, test_rescue_folds_a_dead_process_spills_once);
	suite_add_tcase(s, tc);
	return uu_run(s);
}
