/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * Tests of the writeout pipeline (daemon/writeout.c, with the drain
 * thread of daemon/drain.c) through its consumer seam: a real ring
 * written as libtraced writes one, drained by the pipeline's threads,
 * its validated records handed to a consumer of the test's, and what
 * happened to each chunk told to an owner of the test's on the loop
 * thread.  Records come out in order with their values; counts per
 * event class; losses no record reported arrive with the ring's end; a
 * finished thread's ring ends by itself and is released to the library;
 * a corrupt ring is refused from the bad record on; nothing is read
 * before the feed says go, and events the metadata does not describe
 * yet wait in the ring; a flush brings a SYNC of its generation; a new
 * thread taking the ring in-band is told to the owner in order.
 *
 * Linked with writeout.o, drain.o and the small services they use
 * (worker, dclock, log, ctf): no session, no stream file, no command.
 */
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
#include <event2/event.h>

#include "daemon/ctf.h"
#include "daemon/dclock.h"
#include "daemon/pipeline.h"
#include "ringfix.h"

#define T_MAX		4096

/* What the test's consumer saw, on the writer threads. */
static struct {
	pthread_mutex_t	 lock;
	uint64_t	 seq[T_MAX];
	uint32_t	 id[T_MAX];
	pid_t		 tid[T_MAX];
	unsigned	 n;
	unsigned	 ends;		/* END markers */
	unsigned	 syncs;
	int		 after_end;	/* a chunk came after an END */
} cons = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* What the owner heard, on the loop thread. */
struct t_heard {
	enum chunk_kind	 kind;
	uint64_t	 events;
	uint64_t	 cls0, cls1;	/* per-class counts */
	enum chunk_end	 how;
	const char	*invalid;
	uint64_t	 unrecorded[TRACED_DROP_PRODUCER_NCAUSES];
	uint64_t	 lost[TRACED_DROP_PRODUCER_NCAUSES];
	uint64_t	 gen;
	pid_t		 tid;
	uint32_t	 order;		/* the ring's size it was read at */
	struct traced_thread_rec next;
};

static struct {
	struct t_heard	 h[T_MAX];
	unsigned	 n;
	uint64_t	 events;
	unsigned	 ends;
	unsigned	 settled;
} own;

static void
t_consume(const struct consumer *self, struct pring *r,
    struct chunk_list *list, struct writer *w)
{
	struct chunk *c;
	uint64_t seq[512];
	uint32_t id[512];
	unsigned i, n;

	(void)self;
	(void)r;
	(void)w;
	pthread_mutex_lock(&cons.lock);
	STAILQ_FOREACH(c, list, entry) {
		if (cons.ends > 0)
			cons.after_end = 1;
		switch (c->kind) {
		case CHUNK_DATA:
			n = rf_seqs(c->pkt + CTF_PACKET_HDR_SIZE, c->len, seq,
			    id, 512);
			for (i = 0; i < n && cons.n < T_MAX; i++) {
				cons.seq[cons.n] = seq[i];
				cons.id[cons.n] = id[i];
				cons.tid[cons.n++] = c->tid;
			}
			break;
		case CHUNK_END:
			cons.ends++;
			break;
		case CHUNK_SYNC:
			cons.syncs++;
			break;
		case CHUNK_THREAD:
			break;
		}
	}
	pthread_mutex_unlock(&cons.lock);
}

static const struct consumer t_consumer = {
	.name = "test",
	.write = t_consume,
};

static void
t_chunk_done(void *arg, const struct chunk *c)
{
	struct t_heard *h;
	uint32_t i;

	(void)arg;
	assert_true(own.n < T_MAX);
	h = &own.h[own.n++];
	memset(h, 0, sizeof(*h));
	h->kind = c->kind;
	h->events = c->events;
	for (i = 0; i < c->ncounts; i++) {
		if (c->counts[i].cls == 0)
			h->cls0 += c->counts[i].n;
		if (c->counts[i].cls == 1)
			h->cls1 += c->counts[i].n;
	}
	h->how = c->how;
	h->invalid = c->invalid;
	memcpy(h->unrecorded, c->unrecorded, sizeof(h->unrecorded));
	memcpy(h->lost, c->lost, sizeof(h->lost));
	h->gen = c->gen;
	h->tid = c->tid;
	h->order = c->order;
	h->next = c->next;
	if (c->kind == CHUNK_DATA)
		own.events += c->events;
	if (c->kind == CHUNK_END)
		own.ends++;
	/* The marker is back, as the session layer counts it. */
	if (c->kind == CHUNK_THREAD)
		__atomic_sub_fetch(&c->r->handovers_out, 1, __ATOMIC_RELEASE);
}

static void
t_settled(void *arg)
{
	(void)arg;
	own.settled++;
}

/* ---- fixture ----------------------------------------------------------- */

struct t_pipe {
	struct event_base *base;
	struct writeout	*wo;
	struct pfeed	 feed;
	struct rf_tab	 tab;		/* tick only */
	struct rf_tab	 tab2;		/* tick and tock */
	struct rf_ring	 ring;
	struct pring	 pr;
};

static int
setup(void **state)
{
	static const struct pipeline_owner owner = {
		.chunk_done = t_chunk_done,
		.settled = t_settled,
	};
	struct t_pipe *t = calloc(1, sizeof(*t));

	if (t == NULL)
		return -1;
	memset(&own, 0, sizeof(own));
	pthread_mutex_lock(&cons.lock);
	cons.n = cons.ends = cons.syncs = 0;
	cons.after_end = 0;
	pthread_mutex_unlock(&cons.lock);
	t->base = event_base_new();
	if (t->base == NULL)
		return -1;
	/* Quiet rings every 10 ms: the tests do not wait long. */
	t->wo = writeout_new(t->base, 2, 0, 10, &owner);
	if (t->wo == NULL || writeout_consumer_add(&t_consumer) == -1)
		return -1;
	rf_evtab(&t->tab, 1);
	rf_evtab(&t->tab2, 2);
	t->tab2.et->older = NULL;
	t->feed.id = 1;
	t->feed.clock = DCLOCK_MONO;
	t->feed.go = 1;
	t->feed.tab = t->tab.et;
	t->feed.newest = t->tab.et;
	*state = t;
	return 0;
}

/* One turn of the loop at a time, until cond holds; 5 s at most. */
#define T_PUMP_UNTIL(t, cond) do {					\
	uint64_t t_deadline = rf_now() + UINT64_C(5000000000);		\
	struct timespec t_ms = { 0, 1000000 };				\
									\
	while (!(cond)) {						\
		event_base_loop((t)->base, EVLOOP_ONCE | EVLOOP_NONBLOCK); \
		if (rf_now() > t_deadline)				\
			fail_msg("timed out waiting for: %s", #cond);	\
		nanosleep(&t_ms, NULL);					\
	}								\
} while (0)

/* Run the loop for 'ms' milliseconds, whatever happens. */
static void
t_pump_for(struct t_pipe *t, unsigned ms)
{
	uint64_t end = rf_now() + (uint64_t)ms * 1000000u;
	struct timespec one = { 0, 1000000 };

	while (rf_now() < end) {
		event_base_loop(t->base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
		nanosleep(&one, NULL);
	}
}

static unsigned
t_cons_n(void)
{
	unsigned n;

	pthread_mutex_lock(&cons.lock);
	n = cons.n;
	pthread_mutex_unlock(&cons.lock);
	return n;
}

/*
 * Hand the fixture's ring to the pipeline, as sring.c does; its header
 * says 'order' by then (the client's to write: sring.c checked what
 * it said a moment before).
 */
static void
t_add_ring_order(struct t_pipe *t, uint32_t tid, uint32_t order)
{
	rf_ring_new(&t->ring, 16, tid);
	__atomic_store_n(&t->ring.h->order, order, __ATOMIC_RELAXED);
	t->pr.feed = &t->feed;
	t->pr.hdr = t->ring.h;
	t->pr.ring_fd = t->ring.fd;
	t->pr.max_order = t->ring.order;
	t->pr.tid = (pid_t)tid;
	t->pr.st.fd = -1;
	writeout_add(&t->pr);
}

static void
t_add_ring(struct t_pipe *t, uint32_t tid)
{
	t_add_ring_order(t, tid, 16);
}

/* End the ring, wait for its END, stop the pipeline. */
static int
teardown(void **state)
{
	struct t_pipe *t = *state;

	if (t->pr.hdr != NULL && !t->pr.done) {
		writeout_close(&t->pr);
		T_PUMP_UNTIL(t, t->pr.done);
	}
	writeout_free(t->wo);
	event_base_free(t->base);
	if (t->pr.hdr != NULL)
		rf_ring_free(&t->ring);
	rf_evtab_free(&t->tab);
	rf_evtab_free(&t->tab2);
	free(t);
	return 0;
}

/* The last chunk the owner heard of this kind, or NULL. */
static const struct t_heard *
t_last(enum chunk_kind kind)
{
	unsigned i;

	for (i = own.n; i > 0; i--)
		if (own.h[i - 1].kind == kind)
			return &own.h[i - 1];
	return NULL;
}

/* ---- tests --------------------------------------------------------------- */

static void
test_writeout_consumer_gets_validated_records_in_order(void **state)
{
	struct t_pipe *t = *state;
	uint64_t i;

	t_add_ring(t, 4242);
	for (i = 1; i <= 100; i++)
		rf_put(&t->ring, RF_TICK, i);
	rf_publish(&t->ring);
	writeout_notify(&t->pr);
	T_PUMP_UNTIL(t, own.events == 100);
	assert_int_equal(t_cons_n(), 100);
	for (i = 0; i < 100; i++) {
		assert_int_equal(cons.seq[i], i + 1);
		assert_int_equal(cons.id[i], RF_TICK);
		assert_int_equal(cons.tid[i], 4242);
	}
	/* The ring's room is given back once the records are copied. */
	assert_int_equal(rf_tail(&t->ring), 100 * RF_REC);
	/* More, in a second batch: in order after the first. */
	for (i = 101; i <= 150; i++)
		rf_put(&t->ring, RF_TICK, i);
	rf_publish(&t->ring);
	T_PUMP_UNTIL(t, own.events == 150);
	for (i = 0; i < 150; i++)
		assert_int_equal(cons.seq[i], i + 1);
	/* The owner counted them by class, and heard each batch out. */
	{
		uint64_t cls0 = 0;
		unsigned k;

		for (k = 0; k < own.n; k++)
			cls0 += own.h[k].cls0;
		assert_int_equal(cls0, 150);
	}
	assert_true(own.settled > 0);
}

static void
test_writeout_close_ends_the_ring_with_what_no_record_said(void **state)
{
	struct t_pipe *t = *state;
	const struct t_heard *end;

	t_add_ring(t, 7);
	rf_put(&t->ring, RF_TICK, 1);
	/* 7 lost to a full ring, 2 of them in a LOST record already. */
	__atomic_store_n(&t->ring.h->dropped[TRACED_DROP_RING_FULL], 7,
	    __ATOMIC_RELAXED);
	__atomic_store_n(&t->ring.h->recorded[TRACED_DROP_RING_FULL], 2,
	    __ATOMIC_RELAXED);
	rf_publish(&t->ring);
	writeout_close(&t->pr);
	T_PUMP_UNTIL(t, t->pr.done);
	end = t_last(CHUNK_END);
	assert_non_null(end);
	assert_int_equal(end->how, END_CLOSED);
	assert_int_equal(end->unrecorded[TRACED_DROP_RING_FULL], 5);
	/* Read to the end first; the END is the last chunk of the ring. */
	assert_int_equal(own.events, 1);
	assert_int_equal(own.h[own.n - 1].kind, CHUNK_END);
	assert_int_equal(cons.ends, 1);
	assert_int_equal(cons.after_end, 0);
	/* Nobody reads it any more: no thread may take it in-band. */
	assert_int_equal(t->ring.h->reading, 0);
}

static void
test_writeout_finished_thread_ends_by_itself(void **state)
{
	struct t_pipe *t = *state;
	const struct t_heard *end;

	t_add_ring(t, 8);
	rf_put(&t->ring, RF_TICK, 1);
	rf_put(&t->ring, RF_TICK, 2);
	rf_publish(&t->ring);
	__atomic_store_n(&t->ring.h->flags, TRACED_RING_FINISHED,
	    __ATOMIC_RELEASE);
	writeout_notify(&t->pr);
	T_PUMP_UNTIL(t, t->pr.done);
	end = t_last(CHUNK_END);
	assert_int_equal(end->how, END_FINISHED);
	assert_int_equal(own.events, 2);
	/* The library may give the ring to another thread now. */
	assert_int_equal(__atomic_load_n(&t->ring.h->released,
	    __ATOMIC_ACQUIRE), 1);
}

static void
test_writeout_corrupt_ring_is_refused_from_the_bad_record(void **state)
{
	struct t_pipe *t = *state;
	const struct t_heard *end;

	t_add_ring(t, 9);
	rf_put(&t->ring, RF_TICK, 1);
	rf_put(&t->ring, RF_TICK, 2);
	rf_put(&t->ring, RF_TICK, 3);
	rf_publish(&t->ring);
	writeout_notify(&t->pr);
	T_PUMP_UNTIL(t, own.events == 3);
	rf_put(&t->ring, RF_TICK, 4);
	rf_put(&t->ring, 99, 5);		/* no such event */
	rf_put(&t->ring, RF_TICK, 6);
	rf_publish(&t->ring);
	writeout_notify(&t->pr);
	T_PUMP_UNTIL(t, t->pr.done);
	end = t_last(CHUNK_END);
	assert_int_equal(end->how, END_INVALID);
	assert_non_null(end->invalid);
	assert_non_null(strstr(end->invalid, "unknown event id"));
	/*
	 * What was drained before stays; nothing of the packet that holds
	 * the bad record goes out, nor anything after it.
	 */
	assert_int_equal(t_cons_n(), 3);
	assert_int_equal(cons.seq[2], 3);
	assert_int_equal(own.events, 3);
	assert_int_equal(cons.ends, 1);
}

static void
test_writeout_head_beyond_the_ring_is_refused(void **state)
{
	struct t_pipe *t = *state;
	const struct t_heard *end;

	t_add_ring(t, 10);
	__atomic_store_n(&t->ring.h->head, t->ring.size + 8,
	    __ATOMIC_RELEASE);
	writeout_notify(&t->pr);
	T_PUMP_UNTIL(t, t->pr.done);
	end = t_last(CHUNK_END);
	assert_int_equal(end->how, END_INVALID);
	assert_string_equal(end->invalid, "head beyond the ring");
	assert_int_equal(t_cons_n(), 0);
}

/*
 * The client changes its header's size between the loop's check and
 * the drain thread's first look (issue 25, finding 5): a size beyond
 * the ring's memory (2^64: a shift by 64) or below the least is never
 * taken; the ring ends invalid, and no chunk says a size it cannot
 * have (the loop charges the uid by it).  Run under ASan and UBSan by
 * 'make check SANITIZE=1'.
 */
static void
t_bad_order(struct t_pipe *t, uint32_t order, const char *why)
{
	const struct t_heard *end;
	unsigned i;

	t_add_ring_order(t, 77, order);
	rf_put(&t->ring, RF_TICK, 1);
	rf_publish(&t->ring);
	writeout_notify(&t->pr);
	T_PUMP_UNTIL(t, t->pr.done);
	end = t_last(CHUNK_END);
	assert_non_null(end);
	assert_int_equal(end->how, END_INVALID);
	assert_string_equal(end->invalid, why);
	for (i = 0; i < own.n; i++)
		if (own.h[i].order < TRACED_RING_ORDER_MIN ||
		    own.h[i].order > t->pr.max_order)
			fail_msg("chunk %u says order %u", i, own.h[i].order);
	assert_int_equal(t_cons_n(), 0);
}

static void
test_writeout_ring_size_past_its_memory_is_refused(void **state)
{
	t_bad_order(*state, 64, "ring size beyond its memory");
}

static void
test_writeout_ring_size_below_the_least_is_refused(void **state)
{
	t_bad_order(*state, 0, "ring size went back");
}

static void
test_writeout_nothing_read_before_the_feed_says_go(void **state)
{
	struct t_pipe *t = *state;

	t->feed.go = 0;
	t_add_ring(t, 11);
	rf_put(&t->ring, RF_TICK, 1);
	rf_publish(&t->ring);
	writeout_notify(&t->pr);
	t_pump_for(t, 100);			/* ten drain intervals */
	assert_int_equal(t_cons_n(), 0);
	assert_int_equal(rf_tail(&t->ring), 0);
	/* The metadata is written: the owner publishes, and kicks. */
	__atomic_store_n(&t->feed.go, 1, __ATOMIC_RELEASE);
	writeout_drain_all(0);
	T_PUMP_UNTIL(t, own.events == 1);
	assert_int_equal(cons.seq[0], 1);
}

static void
test_writeout_undescribed_events_wait_for_their_metadata(void **state)
{
	struct t_pipe *t = *state;

	/* The session knows tock, its metadata does not describe it yet. */
	t->tab2.et->older = NULL;
	t->feed.newest = t->tab2.et;
	t_add_ring(t, 12);
	rf_put(&t->ring, RF_TICK, 1);
	rf_put(&t->ring, RF_TICK, 2);
	rf_put(&t->ring, RF_TOCK, 3);
	rf_put(&t->ring, RF_TICK, 4);
	rf_publish(&t->ring);
	writeout_notify(&t->pr);
	T_PUMP_UNTIL(t, own.events == 2);
	t_pump_for(t, 50);
	assert_int_equal(t_cons_n(), 2);
	assert_int_equal(rf_tail(&t->ring), 2 * RF_REC);	/* it waits */
	assert_false(t->pr.done);			/* not refused */
	/* The metadata caught up: the rest, in order. */
	__atomic_store_n(&t->feed.tab, t->tab2.et, __ATOMIC_RELEASE);
	writeout_drain_all(0);
	T_PUMP_UNTIL(t, own.events == 4);
	assert_int_equal(cons.seq[2], 3);
	assert_int_equal(cons.id[2], RF_TOCK);
	assert_int_equal(cons.seq[3], 4);
	{
		const struct t_heard *d = t_last(CHUNK_DATA);

		assert_int_equal(d->cls1, 1);
	}
}

static void
test_writeout_flush_brings_a_sync_of_its_generation(void **state)
{
	struct t_pipe *t = *state;
	const struct t_heard *s;

	t_add_ring(t, 13);
	rf_put(&t->ring, RF_TICK, 1);
	rf_publish(&t->ring);
	writeout_drain_all(5);
	T_PUMP_UNTIL(t, t_last(CHUNK_SYNC) != NULL);
	s = t_last(CHUNK_SYNC);
	assert_int_equal(s->gen, 5);
	/* Everything read before the flush was asked came before it. */
	assert_int_equal(own.events, 1);
	assert_int_equal(own.h[0].kind, CHUNK_DATA);
	assert_int_equal(cons.syncs, 1);
}

static void
test_writeout_new_thread_in_the_ring_is_told_in_order(void **state)
{
	struct t_pipe *t = *state;
	const struct t_heard *th;
	unsigned i, k = 0;

	t_add_ring(t, 100);
	rf_put(&t->ring, RF_TICK, 1);
	rf_put(&t->ring, RF_TICK, 2);
	rf_put_thread(&t->ring, 200, 5);
	rf_put(&t->ring, RF_TICK, 3);
	rf_publish(&t->ring);
	writeout_notify(&t->pr);
	T_PUMP_UNTIL(t, own.events == 3);
	th = t_last(CHUNK_THREAD);
	assert_non_null(th);
	assert_int_equal(th->next.tid, 200);
	assert_int_equal(th->next.index, 5);
	/* The marker comes after the first thread's chunks, before the
	 * second's; each packet names its thread. */
	for (i = 0; i < own.n; i++) {
		if (own.h[i].kind == CHUNK_THREAD)
			k = i;
	}
	for (i = 0; i < own.n; i++)
		if (own.h[i].kind == CHUNK_DATA)
			assert_int_equal(own.h[i].tid, i < k ? 100 : 200);
	assert_int_equal(cons.tid[0], 100);
	assert_int_equal(cons.tid[1], 100);
	assert_int_equal(cons.tid[2], 200);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_writeout_consumer_gets_validated_records_in_order,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_writeout_close_ends_the_ring_with_what_no_record_said,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_writeout_finished_thread_ends_by_itself, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(
		    test_writeout_corrupt_ring_is_refused_from_the_bad_record,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_writeout_head_beyond_the_ring_is_refused, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(
		    test_writeout_ring_size_past_its_memory_is_refused, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(
		    test_writeout_ring_size_below_the_least_is_refused, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(
		    test_writeout_nothing_read_before_the_feed_says_go, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(
		    test_writeout_undescribed_events_wait_for_their_metadata,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_writeout_flush_brings_a_sync_of_its_generation, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(
		    test_writeout_new_thread_in_the_ring_is_told_in_order,
		    setup, teardown),
	};

	dclock_setup();		/* the clocks the drain checks times by */
	return cmocka_run_group_tests_name("writeout", tests, NULL, NULL);
}
