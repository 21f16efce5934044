/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * Unit-test helper: a producer's side of a ring, made and written the
 * way libtraced makes and writes it (proto/ring.h): a sealed memfd, the
 * header page, 8-byte aligned records published with a store-release of
 * head; and the event table (struct evtab) a session would give the
 * pipeline for the events of the test's trace-events text.  Shared by
 * the tests of the drain thread and of the writeout pipeline.  Include
 * after <cmocka.h> and daemon/pipeline.h.
 */
#ifndef TRACED_TESTS_RINGFIX_H
#define TRACED_TESTS_RINGFIX_H

#include <sys/mman.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ring.h"
#include "ringmem.h"
#include "tevents.h"

/* Event 16 is tick(uint64_t seq); 17 is tock(uint64_t seq). */
#define RF_TICK		TRACED_EVENT_ID_BASE
#define RF_TOCK		(TRACED_EVENT_ID_BASE + 1)
#define RF_REC		24u		/* header + one integer */

struct rf_ring {
	int		 fd;
	uint32_t	 order;
	uint64_t	 size;
	uint8_t		*map;		/* header page, then data */
	struct traced_ring_hdr *h;
	uint8_t		*data;
	uint64_t	 head;		/* private until rf_publish() */
	uint64_t	 ts;
};

/* Now, as a session on CLOCK_MONOTONIC stamps its events. */
static inline uint64_t
rf_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A new ring of 2^order bytes (its largest size too), thread tid. */
static inline void
rf_ring_new(struct rf_ring *r, uint32_t order, uint32_t tid)
{
	size_t len = (size_t)traced_ring_file_size(order);

	memset(r, 0, sizeof(*r));
	r->fd = ringmem_create(order);
	assert_true(r->fd != -1);
	r->map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd,
	    0);
	assert_true(r->map != MAP_FAILED);
	r->order = order;
	r->size = traced_ring_size(order);
	r->h = (struct traced_ring_hdr *)(void *)r->map;
	r->data = r->map + TRACED_RING_HDR_SIZE;
	r->h->magic = TRACED_RING_MAGIC;
	r->h->version = TRACED_RING_VERSION;
	r->h->max_order = order;
	r->h->init_order = order;
	r->h->order = order;
	r->h->tid = tid;
	r->ts = rf_now();
}

static inline void
rf_ring_free(struct rf_ring *r)
{
	munmap(r->map, (size_t)traced_ring_file_size(r->order));
	close(r->fd);
}

/* A record of 'size' bytes with header id/ts and 'payload' after it. */
static inline void
rf_put_raw(struct rf_ring *r, uint32_t id, uint32_t size,
    const void *payload, size_t plen)
{
	uint8_t *p = r->data + (r->head & (r->size - 1));

	assert_true(r->size - (r->head & (r->size - 1)) >= size);
	memset(p, 0, size);
	memcpy(p, &id, 4);
	memcpy(p + 4, &size, 4);
	r->ts++;
	memcpy(p + 8, &r->ts, 8);
	if (plen > 0)
		memcpy(p + TRACED_REC_HDR_SIZE, payload, plen);
	r->head += size;
}

/* An event of one uint64_t argument. */
static inline void
rf_put(struct rf_ring *r, uint32_t id, uint64_t seq)
{
	rf_put_raw(r, id, RF_REC, &seq, sizeof(seq));
}

/* A THREAD record: thread tid goes on in the ring as ring 'index'. */
static inline void
rf_put_thread(struct rf_ring *r, uint32_t tid, uint32_t index)
{
	struct traced_thread_rec t;

	memset(&t, 0, sizeof(t));
	t.tid = tid;
	t.index = index;
	rf_put_raw(r, TRACED_EVENT_THREAD, TRACED_THREAD_REC_SIZE, &t,
	    sizeof(t));
}

/* Publish what was written; pairs with the drain's load-acquire. */
static inline void
rf_publish(struct rf_ring *r)
{
	__atomic_store_n(&r->h->head, r->head, __ATOMIC_RELEASE);
}

static inline uint64_t
rf_tail(const struct rf_ring *r)
{
	return __atomic_load_n(&r->h->tail, __ATOMIC_ACQUIRE);
}

/*
 * The event table of the first 'n' events of "tick(uint64_t seq)" and
 * "tock(uint64_t seq)": one range, fixed sizes.  rf_evtab_free() frees
 * it with the parsed events.
 */
struct rf_tab {
	struct tevents_file tf;
	uint32_t	 fixed[2];
	struct evtab	*et;
};

static inline void
rf_evtab(struct rf_tab *t, uint32_t n)
{
	static const char text[] = "tick(uint64_t seq) \"%\" PRIu64\n"
	    "tock(uint64_t seq) \"%\" PRIu64\n";
	char err[256];

	memset(t, 0, sizeof(*t));
	assert_int_equal(tevents_parse(text, sizeof(text) - 1, "rf", &t->tf,
	    err, sizeof(err)), 0);
	t->fixed[0] = t->fixed[1] = RF_REC;
	t->et = calloc(1, sizeof(*t->et) + sizeof(t->et->ranges[0]));
	assert_non_null(t->et);
	t->et->nclasses = n;
	t->et->nranges = 1;
	t->et->ranges[0].first = 0;
	t->et->ranges[0].n = n;
	t->et->ranges[0].cls = 0;
	t->et->ranges[0].ev = t->tf.events;
	t->et->ranges[0].fixed = t->fixed;
}

static inline void
rf_evtab_free(struct rf_tab *t)
{
	free(t->et);
	tevents_free(&t->tf);
}

/* The seq numbers of the tick/tock records in a packet's records. */
static inline unsigned
rf_seqs(const uint8_t *recs, size_t len, uint64_t *out, uint32_t *ids,
    unsigned max)
{
	size_t off = 0;
	unsigned n = 0;
	uint32_t id, size;

	while (off + TRACED_REC_HDR_SIZE <= len) {
		memcpy(&id, recs + off, 4);
		memcpy(&size, recs + off + 4, 4);
		size &= TRACED_REC_SIZE_MASK;
		assert_true(size >= TRACED_REC_HDR_SIZE && off + size <= len);
		if ((id == RF_TICK || id == RF_TOCK) && n < max) {
			memcpy(&out[n], recs + off + TRACED_REC_HDR_SIZE, 8);
			ids[n++] = id;
		}
		off += size;
	}
	return n;
}

#endif /* TRACED_TESTS_RINGFIX_H */
