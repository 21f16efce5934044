/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * Tests of daemon/drain.c, the drain thread, on its own: the thread
 * runs (drain_main()) against a fake of the writeout's side of it (the
 * wo_*() functions and wo_global of daemon/writeout.h), which queues
 * the chunks it is given where the test reads them.  What is tested is
 * what the drain thread decides: reading across lap ends (PAD records
 * skipped), by pread() at first and through a mapping once the ring
 * lapped twice; waiting, not losing, while staging is full; LOST
 * records counted by cause with what the thread saw meanwhile; the
 * grow hint for a ring that fills too fast; and the rings it refuses
 * (a size that went back, time going backwards, a tail off a record
 * boundary, a record past the committed head).
 *
 * Linked with drain.o and the small services it uses (dclock, log,
 * worker): no writer thread, no consumer, no session.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "daemon/ctf.h"
#include "daemon/dclock.h"
#include "daemon/writeout.h"
#include "ringfix.h"

/* ---- the writeout's side, faked ----------------------------------------- */

struct writeout *wo_global;

#define F_MAX		4096

static struct {
	pthread_mutex_t	 lock;
	struct chunk	*q[F_MAX];	/* queued, in order */
	unsigned	 n;
	int		 full;		/* staging full: wo_chunk_new() fails */
	int		 share_rings;	/* wo_share_ring*(): rings the drain
					   thread said it reads */
	unsigned	 refused;	/* chunks asked for while full */
} fk = { .lock = PTHREAD_MUTEX_INITIALIZER };

struct chunk *
wo_chunk_new(struct pring *r, size_t room)
{
	struct chunk *c;

	pthread_mutex_lock(&fk.lock);
	if (fk.full) {
		fk.refused++;
		pthread_mutex_unlock(&fk.lock);
		return NULL;
	}
	pthread_mutex_unlock(&fk.lock);
	c = calloc(1, sizeof(*c));
	assert_non_null(c);
	c->r = r;
	c->kind = CHUNK_DATA;
	c->counts = c->inline_counts;
	c->pkt = malloc(CTF_PACKET_HDR_SIZE + room);
	assert_non_null(c->pkt);
	return c;
}

struct chunk *
wo_marker_new(struct pring *r, enum chunk_kind kind)
{
	struct chunk *c = calloc(1, sizeof(*c));

	assert_non_null(c);
	c->r = r;
	c->kind = kind;
	c->counts = c->inline_counts;
	return c;
}

void
wo_chunk_commit(struct chunk *c, size_t len)
{
	c->len = (uint32_t)len;
}

static void
f_free(struct chunk *c)
{
	if (c->counts != c->inline_counts)
		free(c->counts);
	free(c->pkt);
	free(c);
}

void
wo_chunk_cancel(struct chunk *c)
{
	f_free(c);
}

void
wo_chunk_queue(struct chunk *c)
{
	pthread_mutex_lock(&fk.lock);
	assert_true(fk.n < F_MAX);
	fk.q[fk.n++] = c;
	pthread_mutex_unlock(&fk.lock);
}

void
wo_hold(struct pring *r, int on)
{
	(void)r;
	(void)on;
}

/* The rings the drain thread reads, by owner: one share here. */
void
wo_share_ring_locked(uint32_t share, int delta)
{
	(void)share;
	fk.share_rings += delta;
}

void
wo_share_ring(uint32_t share, int delta)
{
	pthread_mutex_lock(&wo_global->lock);
	wo_share_ring_locked(share, delta);
	pthread_mutex_unlock(&wo_global->lock);
}

/* ---- fixture: the thread, a feed, a ring ------------------------------- */

struct t_drain {
	pthread_t	 th;
	struct pfeed	 feed;
	struct rf_tab	 tab;
	struct rf_ring	 ring;
	struct pring	 pr;
	int		 added;
};

static void
t_kick(void)
{
	pthread_mutex_lock(&wo_global->lock);
	wo_global->drain_kick = 1;
	pthread_cond_signal(&wo_global->drain_cond);
	pthread_mutex_unlock(&wo_global->lock);
}

static int
setup(void **state)
{
	struct t_drain *t = calloc(1, sizeof(*t));
	pthread_condattr_t ca;

	if (t == NULL || (wo_global = calloc(1, sizeof(*wo_global))) == NULL)
		return -1;
	pthread_mutex_init(&wo_global->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&wo_global->drain_cond, &ca);
	pthread_condattr_destroy(&ca);
	TAILQ_INIT(&wo_global->adding);
	wo_global->interval_ns = 10 * UINT64_C(1000000);
	fk.n = 0;
	fk.full = 0;
	fk.refused = 0;
	rf_evtab(&t->tab, 2);
	t->feed.id = 1;
	t->feed.clock = DCLOCK_MONO;
	t->feed.go = 1;
	t->feed.tab = t->feed.newest = t->tab.et;
	if (pthread_create(&t->th, NULL, drain_main, wo_global) != 0)
		return -1;
	*state = t;
	return 0;
}

/* The ring to the drain thread, as writeout_add() does. */
static void
t_add(struct t_drain *t, uint32_t order, uint32_t max_order)
{
	rf_ring_new(&t->ring, max_order, 50);
	t->ring.h->order = t->ring.h->init_order = order;
	t->ring.size = traced_ring_size(order);
	t->pr.feed = &t->feed;
	t->pr.hdr = t->ring.h;
	t->pr.ring_fd = t->ring.fd;
	t->pr.max_order = max_order;
	t->pr.tid = 50;
	pthread_mutex_lock(&wo_global->lock);
	TAILQ_INSERT_TAIL(&wo_global->adding, &t->pr, rd.entry);
	pthread_mutex_unlock(&wo_global->lock);
	t->added = 1;
	t_kick();
}

/* Wait for cond, 5 s at most. */
#define T_WAIT(cond) do {						\
	uint64_t t_deadline = rf_now() + UINT64_C(5000000000);		\
	struct timespec t_ms = { 0, 1000000 };				\
									\
	for (;;) {							\
		int t_ok;						\
									\
		pthread_mutex_lock(&fk.lock);				\
		t_ok = (cond);						\
		pthread_mutex_unlock(&fk.lock);				\
		if (t_ok)						\
			break;						\
		if (rf_now() > t_deadline)				\
			fail_msg("timed out waiting for: %s", #cond);	\
		nanosleep(&t_ms, NULL);					\
	}								\
} while (0)

/* The last chunk queued of this kind, or NULL.  Under fk.lock. */
static struct chunk *
f_last(enum chunk_kind kind)
{
	unsigned i;

	for (i = fk.n; i > 0; i--)
		if (fk.q[i - 1]->kind == kind)
			return fk.q[i - 1];
	return NULL;
}

/* Every tick's seq in the queued packets, in order, into out. */
static unsigned
f_seqs(uint64_t *out, unsigned max)
{
	uint32_t id[F_MAX];
	unsigned i, n = 0;

	pthread_mutex_lock(&fk.lock);
	for (i = 0; i < fk.n; i++)
		if (fk.q[i]->kind == CHUNK_DATA)
			n += rf_seqs(fk.q[i]->pkt + CTF_PACKET_HDR_SIZE,
			    fk.q[i]->len, out + n, id, max - n);
	pthread_mutex_unlock(&fk.lock);
	return n;
}

static uint64_t
f_events(void)
{
	uint64_t n = 0;
	unsigned i;

	for (i = 0; i < fk.n; i++)
		if (fk.q[i]->kind == CHUNK_DATA)
			n += fk.q[i]->events;
	return n;
}

/* End the ring (if it has not ended), stop the thread, free. */
static int
teardown(void **state)
{
	struct t_drain *t = *state;
	unsigned i;

	if (t->added) {
		__atomic_store_n(&t->pr.close_req, 1, __ATOMIC_RELEASE);
		t_kick();
		T_WAIT(f_last(CHUNK_END) != NULL);
	}
	pthread_mutex_lock(&wo_global->lock);
	wo_global->stop = 1;
	pthread_cond_signal(&wo_global->drain_cond);
	pthread_mutex_unlock(&wo_global->lock);
	pthread_join(t->th, NULL);
	for (i = 0; i < fk.n; i++)
		f_free(fk.q[i]);
	fk.n = 0;
	/* Every ring it took it gave back, when it ended it. */
	if (fk.share_rings != 0) {
		fprintf(stderr, "the drain thread counts %d rings still read "
		    "after they all ended\n", fk.share_rings);
		return -1;
	}
	if (t->added)
		rf_ring_free(&t->ring);
	rf_evtab_free(&t->tab);
	pthread_cond_destroy(&wo_global->drain_cond);
	pthread_mutex_destroy(&wo_global->lock);
	free(wo_global);
	free(t);
	return 0;
}

/*
 * Fill the rest of the lap with a PAD record, as the producer does
 * when the next record does not fit before the lap end.
 */
static void
t_pad_lap(struct rf_ring *r)
{
	uint32_t left = (uint32_t)(r->size - (r->head & (r->size - 1)));

	if (left < r->size)
		rf_put_raw(r, TRACED_EVENT_PAD, left, NULL, 0);
}

/* ---- tests ------------------------------------------------------------- */

static void
test_drain_reads_across_laps_skipping_padding(void **state)
{
	struct t_drain *t = *state;
	uint64_t seq[F_MAX], s = 0, i;
	unsigned lap, per = 100;	/* 2400 of a 4 KiB lap */
	unsigned n;

	t_add(t, 12, 12);
	for (lap = 0; lap < 5; lap++) {
		for (i = 0; i < per; i++)
			rf_put(&t->ring, RF_TICK, ++s);
		t_pad_lap(&t->ring);
		rf_publish(&t->ring);
		__atomic_store_n(&t->pr.notified, 1, __ATOMIC_RELEASE);
		t_kick();
		T_WAIT(f_events() == s);
		/* The ring's room is back before the next lap. */
		assert_int_equal(rf_tail(&t->ring), t->ring.head);
	}
	n = f_seqs(seq, F_MAX);
	assert_int_equal(n, 5 * per);
	for (i = 0; i < n; i++)
		assert_int_equal(seq[i], i + 1);
	/* Past two laps it reads through a mapping, the same records. */
	assert_non_null(t->pr.rd.map);
}

static void
test_drain_waits_while_staging_is_full(void **state)
{
	struct t_drain *t = *state;
	uint64_t seq[64];
	unsigned i;

	pthread_mutex_lock(&fk.lock);
	fk.full = 1;
	pthread_mutex_unlock(&fk.lock);
	t_add(t, 12, 12);
	for (i = 1; i <= 10; i++)
		rf_put(&t->ring, RF_TICK, i);
	rf_publish(&t->ring);
	t_kick();
	T_WAIT(fk.refused >= 3);
	/* Nothing read, nothing lost: the records wait in the ring. */
	assert_int_equal(rf_tail(&t->ring), 0);
	assert_int_equal(fk.n, 0);
	pthread_mutex_lock(&fk.lock);
	fk.full = 0;
	pthread_mutex_unlock(&fk.lock);
	t_kick();
	T_WAIT(f_events() == 10);
	assert_int_equal(f_seqs(seq, 64), 10);
	assert_int_equal(seq[9], 10);
}

static void
test_drain_counts_losses_by_cause_with_what_it_saw(void **state)
{
	struct t_drain *t = *state;
	struct traced_lost lost;
	struct chunk *c;
	uint64_t one = 1;

	t_add(t, 12, 12);			/* at its largest size */
	rf_put(&t->ring, RF_TICK, one);
	rf_publish(&t->ring);
	t_kick();
	T_WAIT(f_events() == 1);
	/* The ring filled: 6 lost, 5 of them to a full ring. */
	__atomic_store_n(&t->ring.h->dropped[TRACED_DROP_RING_FULL], 5,
	    __ATOMIC_RELAXED);
	__atomic_store_n(&t->ring.h->dropped[TRACED_DROP_NESTED], 1,
	    __ATOMIC_RELAXED);
	memset(&lost, 0, sizeof(lost));
	lost.count = 6;
	lost.cause[TRACED_DROP_RING_FULL] = 5;
	lost.cause[TRACED_DROP_NESTED] = 1;
	rf_put_raw(&t->ring, TRACED_EVENT_LOST, TRACED_LOST_REC_SIZE, &lost,
	    sizeof(lost));
	__atomic_store_n(&t->ring.h->recorded[TRACED_DROP_RING_FULL], 5,
	    __ATOMIC_RELAXED);
	__atomic_store_n(&t->ring.h->recorded[TRACED_DROP_NESTED], 1,
	    __ATOMIC_RELAXED);
	rf_put(&t->ring, RF_TICK, 2);
	rf_publish(&t->ring);
	t_kick();
	T_WAIT(f_events() == 2);
	pthread_mutex_lock(&fk.lock);
	c = f_last(CHUNK_DATA);
	assert_int_equal(c->lost_records, 1);
	assert_int_equal(c->lost[TRACED_DROP_RING_FULL], 5);
	assert_int_equal(c->lost[TRACED_DROP_NESTED], 1);
	assert_int_equal(c->discarded, 6);
	/* It could grow no more: the warning will say so. */
	assert_true(c->why & LOSS_SAW_MAX_SIZE);
	pthread_mutex_unlock(&fk.lock);
}

static void
test_drain_asks_a_fast_ring_to_grow(void **state)
{
	struct t_drain *t = *state;
	struct timespec two = { 0, 2000000 };
	uint64_t s = 0, end;
	unsigned i;

	t_add(t, 12, 16);	/* 4 KiB, may grow to 64 KiB */
	/* 1.2 KB every 2 ms: 4 KiB holds 7 ms of it, far below 100. */
	end = rf_now() + UINT64_C(400000000);
	while (rf_now() < end && !__atomic_load_n(&t->ring.h->grow,
	    __ATOMIC_RELAXED)) {
		for (i = 0; i < 50 && t->ring.head - rf_tail(&t->ring) <
		    t->ring.size - 2048; i++) {
			if (t->ring.size - (t->ring.head & (t->ring.size - 1))
			    < RF_REC) {
				t_pad_lap(&t->ring);
				continue;
			}
			rf_put(&t->ring, RF_TICK, ++s);
		}
		rf_publish(&t->ring);
		nanosleep(&two, NULL);
	}
	assert_int_equal(__atomic_load_n(&t->ring.h->grow, __ATOMIC_RELAXED),
	    1);
}

/* A ring refused: its END says why, and it is read no more. */
static void
t_expect_refused(struct t_drain *t, const char *why)
{
	struct chunk *end;

	t_kick();
	T_WAIT(f_last(CHUNK_END) != NULL);
	pthread_mutex_lock(&fk.lock);
	end = f_last(CHUNK_END);
	assert_int_equal(end->how, END_INVALID);
	assert_non_null(end->invalid);
	assert_string_equal(end->invalid, why);
	pthread_mutex_unlock(&fk.lock);
	assert_int_equal(__atomic_load_n(&t->ring.h->reading,
	    __ATOMIC_RELAXED), 0);
	t->added = 0;		/* ended: nothing to close */
	rf_ring_free(&t->ring);
}

static void
test_drain_refuses_a_size_that_went_back(void **state)
{
	struct t_drain *t = *state;

	t_add(t, 13, 14);
	rf_put(&t->ring, RF_TICK, 1);
	rf_publish(&t->ring);
	t_kick();
	T_WAIT(f_events() == 1);
	__atomic_store_n(&t->ring.h->order, 12, __ATOMIC_RELAXED);
	rf_put(&t->ring, RF_TICK, 2);
	rf_publish(&t->ring);
	t_expect_refused(t, "ring size went back");
}

static void
test_drain_refuses_time_going_backwards(void **state)
{
	struct t_drain *t = *state;

	t_add(t, 12, 12);
	rf_put(&t->ring, RF_TICK, 1);
	t->ring.ts -= 1000;
	rf_put(&t->ring, RF_TICK, 2);
	rf_publish(&t->ring);
	t_expect_refused(t, "timestamp going backwards");
	assert_int_equal(f_events(), 0);
}

static void
test_drain_refuses_a_tail_off_a_record_boundary(void **state)
{
	struct t_drain *t = *state;

	/*
	 * The tail a previous reader left (a hostile client writes it
	 * before it sends the ring): 4, off the 8-byte records.
	 */
	rf_ring_new(&t->ring, 12, 50);
	t->ring.h->tail = 4;
	t->ring.head = 4;
	rf_put(&t->ring, RF_TICK, 1);
	rf_publish(&t->ring);
	t->pr.feed = &t->feed;
	t->pr.hdr = t->ring.h;
	t->pr.ring_fd = t->ring.fd;
	t->pr.max_order = 12;
	t->pr.tid = 50;
	pthread_mutex_lock(&wo_global->lock);
	TAILQ_INSERT_TAIL(&wo_global->adding, &t->pr, rd.entry);
	pthread_mutex_unlock(&wo_global->lock);
	t->added = 1;
	t_expect_refused(t, "tail off a record boundary");
	assert_int_equal(f_events(), 0);
}

static void
test_drain_refuses_a_record_past_the_committed_head(void **state)
{
	struct t_drain *t = *state;

	t_add(t, 12, 12);
	rf_put(&t->ring, RF_TICK, 1);
	rf_put(&t->ring, RF_TICK, 2);
	/* The head says the second record is 8 bytes shorter. */
	__atomic_store_n(&t->ring.h->head, t->ring.head - 8,
	    __ATOMIC_RELEASE);
	t_expect_refused(t, "record runs past the committed head");
	assert_int_equal(f_events(), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_drain_reads_across_laps_skipping_padding, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(
		    test_drain_waits_while_staging_is_full, setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_drain_counts_losses_by_cause_with_what_it_saw, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(
		    test_drain_asks_a_fast_ring_to_grow, setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_drain_refuses_a_size_that_went_back, setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_drain_refuses_time_going_backwards, setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_drain_refuses_a_tail_off_a_record_boundary, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(
		    test_drain_refuses_a_record_past_the_committed_head, setup,
		    teardown),
	};

	dclock_setup();		/* the clocks the drain checks times by */
	return cmocka_run_group_tests_name("drain", tests, NULL, NULL);
}
