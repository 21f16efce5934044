/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * Tests of proto/recwalk.c, the check every ring span passes before the
 * daemon writes it: well-formed records are counted and kept whole,
 * a record cut by the span's end is left for the next span, and each
 * way a client can get a record wrong is refused at its offset.  The
 * walk that copies as it checks finds the same, and what it copied
 * passes the check whatever the client wrote meanwhile.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "recwalk.h"
#include "tevents.h"

/* Two events: id 16 (u64, string, ptr) and id 17 (no arguments). */
static struct tevents_event ev_mixed = {
	.name = (char *)"mixed", .nargs = 3,
	.args = {
		{ .name = (char *)"n", .cls = TEVENTS_UNSIGNED },
		{ .name = (char *)"s", .cls = TEVENTS_STRING },
		{ .name = (char *)"p", .cls = TEVENTS_POINTER },
	},
};
static struct tevents_event ev_empty = { .name = (char *)"empty", .nargs = 0 };
/* The two, as one provider's array: ids 16 and 17, classes 0 and 1. */
static struct tevents_event events[2];
static struct recwalk_range one_range = { .first = 0, .n = 2, .cls = 0,
	.ev = events };
static uint32_t touched[8];

struct buf {
	_Alignas(8) uint8_t b[4096];
	size_t	len;
};

static void
put_hdr(struct buf *b, uint32_t id, uint32_t size, uint64_t ts)
{
	struct traced_rec_hdr h = { .id = id, .size = size, .ts = ts };

	memcpy(b->b + b->len, &h, sizeof(h));
	b->len += sizeof(h);
}

static void
put_u64(struct buf *b, uint64_t v)
{
	memcpy(b->b + b->len, &v, 8);
	b->len += 8;
}

/* A 'mixed' record with string s, as the producer lays it out. */
static size_t
put_mixed(struct buf *b, uint64_t ts, uint64_t n, const char *s, uint64_t p)
{
	size_t start = b->len, slen = strlen(s) + 1;
	uint32_t size = traced_align8((uint32_t)(TRACED_REC_HDR_SIZE + 8 +
	    slen)) + 8;

	memset(b->b + b->len, 0, size);
	put_hdr(b, 16, size, ts);
	put_u64(b, n);
	memcpy(b->b + b->len, s, slen);
	b->len = start + size - 8;
	put_u64(b, p);
	return start;
}

static void
put_lost(struct buf *b, uint64_t ts, uint64_t full, uint64_t nested)
{
	struct traced_lost l;

	memset(&l, 0, sizeof(l));
	l.cause[TRACED_DROP_RING_FULL] = full;
	l.cause[TRACED_DROP_NESTED] = nested;
	l.count = full + nested;
	put_hdr(b, TRACED_EVENT_LOST, TRACED_LOST_REC_SIZE, ts);
	memcpy(b->b + b->len, &l, sizeof(l));
	b->len += sizeof(l);
}

/* A walk of one provider, r, counting into counts and touched. */
static void
walk_over(struct recwalk *w, const struct recwalk_range *r,
    uint64_t *counts, uint32_t *touched_out)
{
	memset(w, 0, sizeof(*w));
	w->ranges = r;
	w->nranges = 1;
	w->counts = counts;
	w->touched = touched_out;
}

static void
walk_init(struct recwalk *w, uint64_t *counts)
{
	events[0] = ev_mixed;
	events[1] = ev_empty;
	walk_over(w, &one_range, counts, touched);
}

static void
test_recwalk_counts_events_and_losses(void **state)
{
	uint64_t counts[2] = { 0, 0 };
	struct recwalk w;
	struct buf b = { .len = 0 };

	(void)state;
	put_mixed(&b, 100, 1, "abc", 0x1000);
	put_hdr(&b, 17, TRACED_REC_HDR_SIZE, 100);
	put_lost(&b, 105, 3, 2);
	put_mixed(&b, 110, 2, "", 0);
	walk_init(&w, counts);
	assert_int_equal(recwalk(&w, b.b, b.len), (long)b.len);
	assert_null(w.invalid);
	assert_int_equal(w.events, 3);
	assert_int_equal(counts[0], RECWALK_TOUCHED | 2);
	assert_int_equal(counts[1], RECWALK_TOUCHED | 1);
	/* Each class seen is listed once, in the order first seen. */
	assert_int_equal(w.ntouched, 2);
	assert_int_equal(touched[0], 0);
	assert_int_equal(touched[1], 1);
	assert_int_equal(w.lost_records, 1);
	assert_int_equal(w.discarded, 5);
	assert_int_equal(w.lost[TRACED_DROP_RING_FULL], 3);
	assert_int_equal(w.lost[TRACED_DROP_NESTED], 2);
	assert_int_equal(w.first_ts, 100);
	assert_int_equal(w.last_ts, 110);
	/* "" then 7 bytes of padding before the pointer: none after it. */
	assert_int_equal(w.tail_pad, 0);
}

/*
 * Providers with a gap between their ids (one unloaded before the
 * daemon heard of it): ids in either range are known and counted by
 * class, an id in the gap or past the last is refused, and a far id
 * costs nothing (no table as long as the id space).
 */
static void
test_recwalk_ranges_with_gaps(void **state)
{
	struct recwalk_range rg[2] = {
		{ .first = 0, .n = 2, .cls = 0, .ev = events },
		{ .first = (1u << 24) - 18, .n = 2, .cls = 2, .ev = events },
	};
	uint64_t counts[4] = { 0 };
	uint32_t hint = 0;
	struct recwalk w;
	struct buf b = { .len = 0 };

	(void)state;
	walk_init(&w, counts);
	w.ranges = rg;
	w.nranges = 2;
	put_hdr(&b, 17, TRACED_REC_HDR_SIZE, 1);
	put_hdr(&b, (1u << 24) - 1, TRACED_REC_HDR_SIZE, 2);
	put_hdr(&b, 17, TRACED_REC_HDR_SIZE, 3);
	assert_int_equal(recwalk(&w, b.b, b.len), (long)b.len);
	assert_int_equal(counts[1], RECWALK_TOUCHED | 2);
	assert_int_equal(counts[3], RECWALK_TOUCHED | 1);
	assert_int_equal(w.ntouched, 2);
	assert_null(recwalk_find(rg, 2, 2, &hint));
	assert_ptr_equal(recwalk_find(rg, 2, (1u << 24) - 18, &hint), &rg[1]);

	b.len = 0;
	put_hdr(&b, 18, TRACED_REC_HDR_SIZE, 4);	/* in the gap */
	assert_int_equal(recwalk(&w, b.b, b.len), -1);
	assert_string_equal(w.invalid, "unknown event id");
	b.len = 0;
	put_hdr(&b, 1u << 24, TRACED_REC_HDR_SIZE, 4);	/* past the last */
	assert_int_equal(recwalk(&w, b.b, b.len), -1);
	assert_string_equal(w.invalid, "unknown event id");
}

/* A time past max_ts (far ahead of the daemon's clock) is refused. */
static void
test_recwalk_refuses_future_timestamps(void **state)
{
	struct recwalk w;
	struct buf b = { .len = 0 };

	(void)state;
	walk_init(&w, NULL);
	w.max_ts = 1000;
	put_hdr(&b, 17, TRACED_REC_HDR_SIZE, 1000);
	put_hdr(&b, 17, TRACED_REC_HDR_SIZE, UINT64_C(0xfffffffffffffff0));
	assert_int_equal(recwalk(&w, b.b, b.len), -1);
	assert_string_equal(w.invalid, "timestamp in the future");
	assert_int_equal(w.invalid_off, TRACED_REC_HDR_SIZE);
	assert_int_equal(w.events, 1);
}

static void
test_recwalk_tail_pad_after_last_string(void **state)
{
	static struct tevents_event ev_str = {
		.name = (char *)"str", .nargs = 1,
		.args = { { .name = (char *)"s", .cls = TEVENTS_STRING } },
	};
	struct recwalk_range rg = { .first = 0, .n = 1, .cls = 0,
		.ev = &ev_str };
	struct recwalk w = { .ranges = &rg, .nranges = 1 };
	struct buf b = { .len = 0 };

	(void)state;
	memset(b.b, 0, sizeof(b.b));
	put_hdr(&b, 16, 24, 1);
	memcpy(b.b + b.len, "hi", 3);
	b.len = 24;
	assert_int_equal(recwalk(&w, b.b, b.len), 24);
	assert_int_equal(w.tail_pad, 5);
}

static void
test_recwalk_leaves_a_cut_record_for_later(void **state)
{
	struct recwalk w;
	struct buf b = { .len = 0 };
	size_t second;

	(void)state;
	put_mixed(&b, 1, 1, "first", 1);
	second = put_mixed(&b, 2, 2, "second", 2);
	walk_init(&w, NULL);
	/* Every cut inside the second record keeps exactly the first. */
	for (size_t cut = second; cut < b.len; cut++) {
		w.last_ts = 0;
		w.events = 0;
		assert_int_equal(recwalk(&w, b.b, cut), (long)second);
		assert_null(w.invalid);
		assert_int_equal(w.events, 1);
	}
	assert_int_equal(recwalk(&w, b.b + second, b.len - second),
	    (long)(b.len - second));
	assert_int_equal(w.last_ts, 2);
}

/* The size of put_mixed(.., "x", ..): header, n, "x\0" padded, p. */
#define FIRST	40u

/* buf with one good record then a bad one: refused at the bad one. */
static void
expect_refused(struct buf *b, size_t at, const char *why)
{
	struct recwalk w;

	walk_init(&w, NULL);
	assert_int_equal(recwalk(&w, b->b, b->len), -1);
	assert_non_null(w.invalid);
	assert_string_equal(w.invalid, why);
	assert_int_equal(w.invalid_off, at);
	assert_int_equal(w.events, at > 0 ? 1 : 0);
}

/*
 * The producer marks a NULL string argument in the high bits of the
 * size word (traced_put_str_arg()): the walk takes the size from the
 * low bits, and a mark on an argument that is not a string, or on a
 * LOST record, is a lie.
 */
static void
test_recwalk_null_marks(void **state)
{
	struct recwalk	 w;
	struct buf	 b = { .len = 0 };
	uint32_t	 word;
	size_t		 at;

	(void)state;
	walk_init(&w, NULL);
	at = put_mixed(&b, 1, 7, "(null)", 0x1000);
	memcpy(&word, b.b + at + 4, 4);
	word |= 1u << (TRACED_REC_NULL_SHIFT + 1);	/* s, a string */
	memcpy(b.b + at + 4, &word, 4);
	assert_int_equal(recwalk(&w, b.b, b.len), (long)b.len);
	assert_int_equal(w.events, 1);

	word |= 1u << (TRACED_REC_NULL_SHIFT + 2);	/* p, a pointer */
	memcpy(b.b + at + 4, &word, 4);
	walk_init(&w, NULL);
	assert_int_equal(recwalk(&w, b.b, b.len), -1);
	assert_non_null(strstr(w.invalid, "NULL mark"));

	memset(&b, 0, sizeof(b));
	put_lost(&b, 1, 2, 0);
	memcpy(&word, b.b + 4, 4);
	word |= 1u << TRACED_REC_NULL_SHIFT;
	memcpy(b.b + 4, &word, 4);
	walk_init(&w, NULL);
	assert_int_equal(recwalk(&w, b.b, b.len), -1);
}

static void
test_recwalk_refuses_bad_sizes(void **state)
{
	static const uint32_t sizes[] = { 0, 8, 12, 17, TRACED_REC_MAX + 8,
	    UINT32_MAX };
	struct buf b;

	(void)state;
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		b.len = 0;
		put_mixed(&b, 1, 1, "x", 1);
		put_hdr(&b, 17, sizes[i], 2);
		expect_refused(&b, FIRST, "record size out of range");
	}
}

static void
test_recwalk_refuses_time_going_backwards(void **state)
{
	struct buf b = { .len = 0 };
	struct recwalk w;

	(void)state;
	put_mixed(&b, 50, 1, "x", 1);
	put_hdr(&b, 17, TRACED_REC_HDR_SIZE, 49);
	expect_refused(&b, FIRST, "timestamp going backwards");
	/* Against the previous span's last record too. */
	walk_init(&w, NULL);
	w.last_ts = 51;
	assert_int_equal(recwalk(&w, b.b, b.len), -1);
	assert_int_equal(w.invalid_off, 0);
}

static void
test_recwalk_refuses_unknown_ids(void **state)
{
	/* 0 is LOST, 1 PAD, 2 THREAD and 3 CRASH (checked elsewhere); 4
	 * to 15 are the tracer's own but unused. */
	static const uint32_t ids[] = { 4, 15, 18, 0x7fffffff, UINT32_MAX };
	struct buf b;

	(void)state;
	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		b.len = 0;
		put_mixed(&b, 1, 1, "x", 1);
		put_hdr(&b, ids[i], TRACED_REC_HDR_SIZE, 2);
		expect_refused(&b, FIRST, "unknown event id");
	}
}

/* A CRASH record of signal 'sig' and code 'code', 'size' bytes long. */
static void
put_crash(struct buf *b, uint64_t ts, uint32_t size, int64_t sig,
    int64_t code)
{
	struct traced_crash c = { .signal = sig, .code = code,
		.addr = 0xdead0000, .ip = 0x401000, .sender = 0 };

	memset(b->b + b->len, 0, size);
	put_hdr(b, TRACED_EVENT_CRASH, size, ts);
	memcpy(b->b + b->len, &c, size - TRACED_REC_HDR_SIZE < sizeof(c) ?
	    size - TRACED_REC_HDR_SIZE : sizeof(c));
	b->len += size - TRACED_REC_HDR_SIZE;
}

/*
 * A CRASH record (a thread got a fatal signal) is counted apart from
 * the events, and the walk goes on after it, copied whole; one of
 * another size, with NULL marks, a signal number Linux does not have
 * or a code no int holds is refused.
 */
static void
test_recwalk_crash_records(void **state)
{
	static const int64_t bad_sig[] = { 0, -1, TRACED_CRASH_SIG_MAX + 1,
		INT64_MIN };
	static const int64_t bad_code[] = { (int64_t)INT32_MAX + 1,
		(int64_t)INT32_MIN - 1 };
	_Alignas(8) uint8_t copy[sizeof(((struct buf *)0)->b)];
	uint64_t counts[2] = { 0, 0 };
	struct recwalk w;
	struct buf b;
	uint32_t word;
	size_t i;

	(void)state;
	b.len = 0;
	put_mixed(&b, 1, 1, "x", 1);
	put_crash(&b, 2, TRACED_CRASH_REC_SIZE, 11, 1);
	put_crash(&b, 3, TRACED_CRASH_REC_SIZE, TRACED_CRASH_SIG_MAX,
	    INT32_MIN);
	put_mixed(&b, 4, 2, "y", 2);
	walk_init(&w, counts);
	assert_int_equal(recwalk(&w, b.b, b.len), (long)b.len);
	assert_null(w.invalid);
	assert_int_equal(w.crashes, 2);
	assert_int_equal(w.events, 2);
	assert_int_equal(counts[0], RECWALK_TOUCHED | 2);
	assert_int_equal(w.last_ts, 4);
	walk_init(&w, NULL);
	assert_int_equal(recwalk_copy(&w, copy, b.b, b.len), (long)b.len);
	assert_int_equal(w.crashes, 2);
	assert_memory_equal(copy, b.b, b.len);

	for (i = 0; i < 2; i++) {
		b.len = 0;
		put_mixed(&b, 1, 1, "x", 1);
		put_crash(&b, 2, i == 0 ? TRACED_CRASH_REC_SIZE + 8 :
		    TRACED_CRASH_REC_SIZE - 8, 6, -6);
		expect_refused(&b, FIRST, "bad crash record");
	}
	b.len = 0;
	put_mixed(&b, 1, 1, "x", 1);
	put_crash(&b, 2, TRACED_CRASH_REC_SIZE, 6, -6);
	memcpy(&word, b.b + FIRST + 4, sizeof(word));
	word |= 1u << TRACED_REC_NULL_SHIFT;
	memcpy(b.b + FIRST + 4, &word, sizeof(word));
	expect_refused(&b, FIRST, "bad crash record");
	for (i = 0; i < sizeof(bad_sig) / sizeof(bad_sig[0]); i++) {
		b.len = 0;
		put_mixed(&b, 1, 1, "x", 1);
		put_crash(&b, 2, TRACED_CRASH_REC_SIZE, bad_sig[i], 1);
		expect_refused(&b, FIRST,
		    "bad signal number in a crash record");
	}
	for (i = 0; i < sizeof(bad_code) / sizeof(bad_code[0]); i++) {
		b.len = 0;
		put_mixed(&b, 1, 1, "x", 1);
		put_crash(&b, 2, TRACED_CRASH_REC_SIZE, 7, bad_code[i]);
		expect_refused(&b, FIRST,
		    "bad signal code in a crash record");
	}
	/* Its time is checked like an event's. */
	b.len = 0;
	put_mixed(&b, 5, 1, "x", 1);
	put_crash(&b, 4, TRACED_CRASH_REC_SIZE, 11, 1);
	expect_refused(&b, FIRST, "timestamp going backwards");
}

/*
 * A THREAD record (a new thread takes the ring in-band) ends the walk
 * like a PAD: the records before it are counted, it is not, and what
 * it says is handed back; one that lies about its size, its thread or
 * its time is refused.
 */
static void
test_recwalk_stops_at_thread_record(void **state)
{
	uint64_t counts[2] = { 0, 0 };
	struct recwalk w;
	struct buf b;
	size_t at;

	(void)state;
	b.len = 0;
	put_mixed(&b, 1, 1, "x", 1);
	at = b.len;
	put_hdr(&b, TRACED_EVENT_THREAD, TRACED_THREAD_REC_SIZE, 2);
	put_u64(&b, (uint64_t)7 << 32 | 4242);	/* index 7, tid 4242 */
	put_mixed(&b, 3, 2, "y", 2);
	walk_init(&w, counts);
	assert_int_equal(recwalk(&w, b.b, b.len), (long)at);
	assert_null(w.invalid);
	assert_int_equal(w.thread, TRACED_THREAD_REC_SIZE);
	assert_int_equal(w.next.tid, 4242);
	assert_int_equal(w.next.index, 7);
	assert_int_equal(w.events, 1);
	assert_int_equal(counts[0], RECWALK_TOUCHED | 1);
	/* After it: the next thread's record, and no THREAD left over. */
	assert_int_equal(recwalk(&w, b.b + at + TRACED_THREAD_REC_SIZE,
	    b.len - at - TRACED_THREAD_REC_SIZE), FIRST);
	assert_int_equal(w.thread, 0);
	assert_int_equal(w.events, 2);
	assert_int_equal(w.last_ts, 3);

	/* Refused: a wrong size, no thread, a thread id out of range, a
	 * time before the record before it. */
	b.len = 0;
	put_mixed(&b, 1, 1, "x", 1);
	put_hdr(&b, TRACED_EVENT_THREAD, TRACED_THREAD_REC_SIZE + 8, 2);
	put_u64(&b, 4242);
	put_u64(&b, 0);
	expect_refused(&b, FIRST, "bad thread record");
	b.len = 0;
	put_mixed(&b, 1, 1, "x", 1);
	put_hdr(&b, TRACED_EVENT_THREAD, TRACED_THREAD_REC_SIZE, 2);
	put_u64(&b, 0);
	expect_refused(&b, FIRST, "bad thread id in a thread record");
	b.len = 0;
	put_mixed(&b, 1, 1, "x", 1);
	put_hdr(&b, TRACED_EVENT_THREAD, TRACED_THREAD_REC_SIZE, 2);
	put_u64(&b, 0x80000000u);
	expect_refused(&b, FIRST, "bad thread id in a thread record");
	b.len = 0;
	put_mixed(&b, 5, 1, "x", 1);
	put_hdr(&b, TRACED_EVENT_THREAD, TRACED_THREAD_REC_SIZE, 4);
	put_u64(&b, 4242);
	expect_refused(&b, FIRST, "timestamp going backwards");
}

static void
test_recwalk_refuses_records_unlike_their_event(void **state)
{
	struct buf b = { .len = 0 };

	(void)state;
	/* 'empty' with 8 bytes of payload. */
	put_mixed(&b, 1, 1, "x", 1);
	put_hdr(&b, 17, 24, 2);
	put_u64(&b, 0);
	expect_refused(&b, FIRST, "record size does not match its event");

	/* 'mixed' whose string has no NUL inside the record. */
	b.len = 0;
	put_mixed(&b, 1, 1, "x", 1);
	put_hdr(&b, 16, 40, 2);
	put_u64(&b, 7);
	memset(b.b + b.len, 'A', 16);
	b.len += 16;
	expect_refused(&b, FIRST, "string argument without its end");

	/* 'mixed' too short for its pointer after the string. */
	b.len = 0;
	put_mixed(&b, 1, 1, "x", 1);
	put_hdr(&b, 16, 32, 2);
	put_u64(&b, 7);
	memcpy(b.b + b.len, "1234567", 8);
	b.len += 8;
	expect_refused(&b, FIRST, "record shorter than its event");

	/* 'mixed' cut before its string starts. */
	b.len = 0;
	put_mixed(&b, 1, 1, "x", 1);
	put_hdr(&b, 16, 24, 2);
	put_u64(&b, 7);
	expect_refused(&b, FIRST, "record shorter than its event");
}

static void
test_recwalk_refuses_lost_records_that_lie(void **state)
{
	struct traced_lost l;
	struct buf b = { .len = 0 };

	(void)state;
	put_mixed(&b, 1, 1, "x", 1);
	put_lost(&b, 2, 4, 1);
	memcpy(&l, b.b + FIRST + TRACED_REC_HDR_SIZE, sizeof(l));
	l.count = 6;
	memcpy(b.b + FIRST + TRACED_REC_HDR_SIZE, &l, sizeof(l));
	expect_refused(&b, FIRST, "loss record does not add up");

	/* Causes that wrap around to the right sum. */
	l.cause[TRACED_DROP_RING_FULL] = UINT64_MAX;
	l.cause[TRACED_DROP_NESTED] = 2;
	l.count = 1;
	memcpy(b.b + FIRST + TRACED_REC_HDR_SIZE, &l, sizeof(l));
	expect_refused(&b, FIRST, "loss record does not add up");

	/* A LOST record of the wrong size. */
	b.len = FIRST;
	put_hdr(&b, TRACED_EVENT_LOST, TRACED_REC_HDR_SIZE + 8, 2);
	put_u64(&b, 0);
	expect_refused(&b, FIRST, "bad loss record");
}

/*
 * A PAD record fills the rest of a lap: it ends the walk where it
 * starts, says its size, and must end on a lap end (a multiple of the
 * smallest ring) inside the span.  The records after it are the next
 * call's.
 */
static void
test_recwalk_stops_at_padding(void **state)
{
	uint32_t pad[2] = { TRACED_EVENT_PAD, 0 };
	uint64_t counts[2] = { 0, 0 };
	struct recwalk w;
	struct buf b;
	size_t at;

	(void)state;
	b.len = 0;
	put_mixed(&b, 1, 1, "x", 1);
	at = b.len;
	/* The span starts 40 bytes before the end of a 4 KiB lap, so the
	 * PAD after the 40-byte record is 8 bytes... */
	pad[1] = TRACED_PAD_MIN;
	memcpy(b.b + b.len, pad, sizeof(pad));
	b.len += sizeof(pad);
	put_mixed(&b, 2, 2, "y", 2);	/* ...and this starts the next lap */
	walk_init(&w, counts);
	w.pos = 2 * TRACED_RING_LAP_MIN - FIRST - TRACED_PAD_MIN;
	assert_int_equal(recwalk(&w, b.b, b.len), (long)at);
	assert_int_equal(w.pad, TRACED_PAD_MIN);
	assert_int_equal(w.events, 1);
	assert_int_equal(counts[0], RECWALK_TOUCHED | 1);
	/* The next call goes on after the PAD, at the lap end. */
	w.pos += at + w.pad;
	assert_int_equal(w.pos % TRACED_RING_LAP_MIN, 0);
	assert_int_equal(recwalk(&w, b.b + at + TRACED_PAD_MIN,
	    b.len - at - TRACED_PAD_MIN), FIRST);
	assert_int_equal(w.pad, 0);
	assert_int_equal(w.events, 2);

	/* A PAD that would end anywhere else is refused. */
	walk_init(&w, counts);
	w.pos = 0;
	assert_int_equal(recwalk(&w, b.b, b.len), -1);
	assert_string_equal(w.invalid, "bad padding record");
	assert_int_equal(w.invalid_off, at);

	/* So is one too small, odd-sized or larger than a record. */
	{
		static const uint32_t sizes[] = { 0, 4, 12,
		    TRACED_REC_MAX + 8 };

		for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
			pad[1] = sizes[i];
			memcpy(b.b + at, pad, sizeof(pad));
			walk_init(&w, counts);
			w.pos = TRACED_RING_LAP_MIN - at - sizes[i];
			assert_int_equal(recwalk(&w, b.b, at + TRACED_PAD_MIN),
			    -1);
			assert_string_equal(w.invalid, "bad padding record");
		}
	}
	/* One the span cuts is left for the next call. */
	pad[1] = 64;
	memcpy(b.b + at, pad, sizeof(pad));
	walk_init(&w, counts);
	w.pos = TRACED_RING_LAP_MIN - at - 64;
	assert_int_equal(recwalk(&w, b.b, at + 32), (long)at);
	assert_int_equal(w.pad, 0);
	assert_null(w.invalid);
}

/*
 * With the sizes of events without strings known in advance (the
 * daemon's table), a record of such an event is checked by its size
 * alone, with the same verdicts as the field walk.
 */
static void
test_recwalk_fixed_sizes_same_verdicts(void **state)
{
	static const uint32_t fixed[] = { 0, TRACED_REC_HDR_SIZE };
	static const uint32_t sizes[] = { 24, 32, 64 };
	struct recwalk_range fixed_range;
	struct recwalk w, v;
	struct buf b;
	size_t i;

	(void)state;
	fixed_range = one_range;
	fixed_range.fixed = fixed;
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		b.len = 0;
		put_mixed(&b, 1, 1, "x", 1);
		put_hdr(&b, 17, sizes[i], 2);
		memset(b.b + b.len, 0, sizes[i] - TRACED_REC_HDR_SIZE);
		b.len += sizes[i] - TRACED_REC_HDR_SIZE;
		walk_init(&w, NULL);
		walk_init(&v, NULL);
		v.ranges = &fixed_range;
		assert_int_equal(recwalk(&w, b.b, b.len), -1);
		assert_int_equal(recwalk(&v, b.b, b.len), -1);
		assert_string_equal(v.invalid, w.invalid);
		assert_int_equal(v.invalid_off, FIRST);
	}
	/* And the right size passes, with no padding at the end. */
	b.len = 0;
	put_mixed(&b, 1, 1, "x", 1);
	put_hdr(&b, 17, TRACED_REC_HDR_SIZE, 2);
	walk_init(&v, NULL);
	v.ranges = &fixed_range;
	assert_int_equal(recwalk(&v, b.b, b.len), (long)b.len);
	assert_int_equal(v.events, 2);
	assert_int_equal(v.tail_pad, 0);
}

/*
 * A run of records of one event without strings is checked by its
 * first record's size and each record's time: the run is counted
 * whole, another event or a bad time inside it ends it with the right
 * verdict, and a record the span cuts is left for the next span.
 */
static void
test_recwalk_runs_of_one_event(void **state)
{
	static const uint32_t fixed[] = { 0, TRACED_REC_HDR_SIZE };
	struct recwalk_range fixed_range;
	uint64_t counts[2] = { 0, 0 };
	struct recwalk w;
	struct buf b = { .len = 0 };
	uint64_t ts;

	(void)state;
	fixed_range = one_range;
	fixed_range.fixed = fixed;
	for (ts = 1; ts <= 5; ts++)
		put_hdr(&b, 17, TRACED_REC_HDR_SIZE, ts);
	put_mixed(&b, 6, 1, "x", 1);
	for (ts = 7; ts <= 9; ts++)
		put_hdr(&b, 17, TRACED_REC_HDR_SIZE, ts);
	walk_init(&w, counts);
	w.ranges = &fixed_range;
	/* Cut inside the last record: it waits for the next span. */
	assert_int_equal(recwalk(&w, b.b, b.len - 8),
	    (long)(b.len - TRACED_REC_HDR_SIZE));
	assert_int_equal(w.events, 8);
	assert_int_equal(counts[0], RECWALK_TOUCHED | 1);
	assert_int_equal(counts[1], RECWALK_TOUCHED | 7);
	assert_int_equal(w.ntouched, 2);
	assert_int_equal(w.first_ts, 1);
	assert_int_equal(w.last_ts, 8);
	assert_int_equal(recwalk(&w, b.b + b.len - TRACED_REC_HDR_SIZE,
	    TRACED_REC_HDR_SIZE), TRACED_REC_HDR_SIZE);
	assert_int_equal(counts[1], RECWALK_TOUCHED | 8);
	assert_int_equal(w.last_ts, 9);

	/* Time going backwards in a run: refused there, the records
	 * before it counted. */
	b.len = 0;
	for (ts = 10; ts <= 13; ts++)
		put_hdr(&b, 17, TRACED_REC_HDR_SIZE, ts);
	put_hdr(&b, 17, TRACED_REC_HDR_SIZE, 12);
	counts[0] = counts[1] = 0;
	walk_init(&w, counts);
	w.ranges = &fixed_range;
	assert_int_equal(recwalk(&w, b.b, b.len), -1);
	assert_string_equal(w.invalid, "timestamp going backwards");
	assert_int_equal(w.invalid_off, 4 * TRACED_REC_HDR_SIZE);
	assert_int_equal(w.events, 4);
	assert_int_equal(counts[1], RECWALK_TOUCHED | 4);
	assert_int_equal(w.last_ts, 13);

	/* A time past max_ts in a run, and a record with the run's id but
	 * another size, are refused as outside one. */
	b.len = 0;
	put_hdr(&b, 17, TRACED_REC_HDR_SIZE, 1);
	put_hdr(&b, 17, TRACED_REC_HDR_SIZE, 100);
	walk_init(&w, NULL);
	w.ranges = &fixed_range;
	w.max_ts = 99;
	assert_int_equal(recwalk(&w, b.b, b.len), -1);
	assert_string_equal(w.invalid, "timestamp in the future");
	assert_int_equal(w.invalid_off, TRACED_REC_HDR_SIZE);
	b.len = 0;
	put_hdr(&b, 17, TRACED_REC_HDR_SIZE, 1);
	put_hdr(&b, 17, 2 * TRACED_REC_HDR_SIZE, 2);
	memset(b.b + b.len, 0, TRACED_REC_HDR_SIZE);
	b.len += TRACED_REC_HDR_SIZE;
	walk_init(&w, NULL);
	w.ranges = &fixed_range;
	assert_int_equal(recwalk(&w, b.b, b.len), -1);
	assert_string_equal(w.invalid,
	    "record size does not match its event");
	assert_int_equal(w.invalid_off, TRACED_REC_HDR_SIZE);
	assert_int_equal(w.events, 1);
}

/*
 * A provider of 40 events whose classes start at 5, for the walk's
 * table of known events: 16 and 48 take one integer (their ids have
 * the same low bits), 17 none, 55 a string (its fields are walked).
 */
#define T40_CLS		5u
static struct tevents_event t40_ev[40];
static uint32_t t40_fixed[40];
static const struct recwalk_range t40_range = { .first = 0, .n = 40,
	.cls = T40_CLS, .ev = t40_ev, .fixed = t40_fixed };
static uint64_t t40_counts[T40_CLS + 40];
static uint32_t t40_touched[T40_CLS + 40];

static void
t40_walk_init(struct recwalk *w)
{
	memset(t40_ev, 0, sizeof(t40_ev));
	t40_ev[0].nargs = 1;
	t40_ev[0].args[0].cls = TEVENTS_UNSIGNED;
	t40_ev[32] = t40_ev[0];
	t40_ev[39].nargs = 1;
	t40_ev[39].args[0].cls = TEVENTS_STRING;
	memset(t40_fixed, 0, sizeof(t40_fixed));
	t40_fixed[0] = t40_fixed[32] = TRACED_REC_HDR_SIZE + 8;
	t40_fixed[1] = TRACED_REC_HDR_SIZE;
	memset(t40_counts, 0, sizeof(t40_counts));
	walk_over(w, &t40_range, t40_counts, t40_touched);
}

/* A record of event id (16, 17, 48 or 55) at time ts; its offset. */
static size_t
t40_put(struct buf *b, uint32_t id, uint64_t ts)
{
	size_t start = b->len;

	put_hdr(b, id, id == 17 ? TRACED_REC_HDR_SIZE :
	    TRACED_REC_HDR_SIZE + 8, ts);
	if (id != 17) {
		memset(b->b + b->len, 0, 8);
		if (id == 55)
			memcpy(b->b + b->len, "abc", 4);	/* pad 4 */
		b->len += 8;
	}
	return start;
}

/* Records of event id counted by the last walks. */
static uint64_t
t40_count(uint32_t id)
{
	return t40_counts[T40_CLS + id - TRACED_EVENT_ID_BASE] &
	    ~RECWALK_TOUCHED;
}

/*
 * Records of several events without strings, interleaved, with ids
 * whose low bits are the same (16 and 48) and with records that need
 * their fields walked between them: every record counted in its class,
 * the classes in the order they first came, the padding after the last
 * record right.
 */
static void
test_recwalk_interleaved_events(void **state)
{
	static const uint32_t ids[] = { 16, 48, 16, 17, 48, 48, 55, 16, 17,
	    17, 55, 16, 48, 48, 48 };
	const size_t nids = sizeof(ids) / sizeof(ids[0]);
	uint64_t want[40];
	struct recwalk w;
	struct buf b = { .len = 0 };
	size_t i, off55 = 0;

	(void)state;
	memset(want, 0, sizeof(want));
	for (i = 0; i < nids; i++) {
		if (ids[i] == 55 && off55 == 0)
			off55 = b.len;	/* the first one */
		t40_put(&b, ids[i], 100 + i);
		want[ids[i] - TRACED_EVENT_ID_BASE]++;
	}
	t40_walk_init(&w);
	assert_int_equal(recwalk(&w, b.b, b.len), (long)b.len);
	assert_int_equal(w.events, nids);
	for (i = 0; i < 40; i++)
		assert_int_equal(t40_count(TRACED_EVENT_ID_BASE + i), want[i]);
	assert_int_equal(w.ntouched, 4);
	assert_int_equal(t40_touched[0], T40_CLS + 0);
	assert_int_equal(t40_touched[1], T40_CLS + 32);
	assert_int_equal(t40_touched[2], T40_CLS + 1);
	assert_int_equal(t40_touched[3], T40_CLS + 39);
	assert_int_equal(w.first_ts, 100);
	assert_int_equal(w.last_ts, 100 + nids - 1);
	assert_int_equal(w.tail_pad, 0);
	/* Ending on the string record: its padding. */
	t40_walk_init(&w);
	assert_int_equal(recwalk(&w, b.b, off55 + 24), (long)(off55 + 24));
	assert_int_equal(w.tail_pad, 4);
	assert_int_equal(w.events, 7);
	/* A string record, then one of a known event: no padding. */
	b.len = 0;
	t40_put(&b, 16, 1);
	t40_put(&b, 55, 2);
	t40_put(&b, 16, 3);
	t40_walk_init(&w);
	assert_int_equal(recwalk(&w, b.b, b.len), (long)b.len);
	assert_int_equal(w.tail_pad, 0);
	assert_int_equal(t40_count(16), 2);
}

/*
 * A record of an event the walk already met is refused for what the
 * full check refuses: a time going back or too far ahead, NULL marks,
 * another size, whether it continues a run of its event or follows
 * another event.
 */
static void
test_recwalk_known_events_checked_alike(void **state)
{
	struct recwalk w;
	struct buf b = { .len = 0 };
	size_t at;
	uint32_t word[2];

	(void)state;
	/* Back in time, just after a switch from another event. */
	t40_put(&b, 16, 10);
	t40_put(&b, 17, 11);
	at = t40_put(&b, 16, 9);
	t40_walk_init(&w);
	assert_int_equal(recwalk(&w, b.b, b.len), -1);
	assert_string_equal(w.invalid, "timestamp going backwards");
	assert_int_equal(w.invalid_off, at);
	assert_int_equal(t40_count(16), 1);
	assert_int_equal(t40_count(17), 1);
	assert_int_equal(w.last_ts, 11);

	/* Too far ahead, after a switch and inside a run. */
	b.len = 0;
	t40_put(&b, 16, 1);
	t40_put(&b, 17, 2);
	at = t40_put(&b, 16, 100);
	t40_walk_init(&w);
	w.max_ts = 99;
	assert_int_equal(recwalk(&w, b.b, b.len), -1);
	assert_string_equal(w.invalid, "timestamp in the future");
	assert_int_equal(w.invalid_off, at);
	b.len = 0;
	t40_put(&b, 17, 1);
	t40_put(&b, 17, 2);
	t40_put(&b, 17, 3);
	at = t40_put(&b, 17, 100);
	t40_walk_init(&w);
	w.max_ts = 99;
	assert_int_equal(recwalk(&w, b.b, b.len), -1);
	assert_string_equal(w.invalid, "timestamp in the future");
	assert_int_equal(w.invalid_off, at);
	assert_int_equal(t40_count(17), 3);

	/* The same id in a run, with a NULL mark or another size. */
	b.len = 0;
	t40_put(&b, 16, 1);
	t40_put(&b, 16, 2);
	t40_put(&b, 16, 3);
	at = t40_put(&b, 16, 4);
	memcpy(word, b.b + at, sizeof(word));
	word[1] |= 1u << TRACED_REC_NULL_SHIFT;
	memcpy(b.b + at, word, sizeof(word));
	t40_walk_init(&w);
	assert_int_equal(recwalk(&w, b.b, b.len), -1);
	assert_string_equal(w.invalid,
	    "NULL mark on an argument that is no string");
	assert_int_equal(w.invalid_off, at);
	word[1] = TRACED_REC_HDR_SIZE + 16;
	memcpy(b.b + at, word, sizeof(word));
	memset(b.b + b.len, 0, 8);
	b.len += 8;
	t40_walk_init(&w);
	assert_int_equal(recwalk(&w, b.b, b.len), -1);
	assert_string_equal(w.invalid, "record size does not match its event");
	assert_int_equal(w.invalid_off, at);

	/* Words no known event has (an empty entry of the walk's table
	 * must not match them): id 0 and size 0, first and after a known
	 * event; a PAD of size 0. */
	b.len = 0;
	put_hdr(&b, 0, 0, 5);
	t40_walk_init(&w);
	assert_int_equal(recwalk(&w, b.b, b.len), -1);
	assert_string_equal(w.invalid, "record size out of range");
	assert_int_equal(w.invalid_off, 0);
	b.len = 0;
	t40_put(&b, 16, 1);
	at = b.len;
	put_hdr(&b, 0, 0, 5);
	t40_walk_init(&w);
	assert_int_equal(recwalk(&w, b.b, b.len), -1);
	assert_string_equal(w.invalid, "record size out of range");
	assert_int_equal(w.invalid_off, at);
	word[0] = TRACED_EVENT_PAD;
	word[1] = 0;
	memcpy(b.b + at, word, sizeof(word));
	t40_walk_init(&w);
	assert_int_equal(recwalk(&w, b.b, b.len), -1);
	assert_string_equal(w.invalid, "bad padding record");
	assert_int_equal(w.invalid_off, at);
}

static void
test_recwalk_without_any_event_table(void **state)
{
	struct recwalk w;
	struct buf b = { .len = 0 };

	(void)state;
	memset(&w, 0, sizeof(w));
	put_hdr(&b, 16, TRACED_REC_HDR_SIZE, 1);
	assert_int_equal(recwalk(&w, b.b, b.len), -1);
	assert_string_equal(w.invalid, "unknown event id");
	/* LOST records need no table. */
	b.len = 0;
	put_lost(&b, 1, 1, 0);
	memset(&w, 0, sizeof(w));
	assert_int_equal(recwalk(&w, b.b, b.len), (long)b.len);
	assert_int_equal(w.discarded, 1);
}

/* A record of event 55 with a string of n 'x', larger than the walk's
 * own buffer (recwalk.c, RECWALK_BOUNCE) for n of 600. */
static void
t40_put_long(struct buf *b, uint64_t ts, size_t n)
{
	uint32_t size = traced_align8((uint32_t)(TRACED_REC_HDR_SIZE + n + 1));

	memset(b->b + b->len, 0, size);
	put_hdr(b, 55, size, ts);
	memset(b->b + b->len, 'x', n);
	b->len += size - TRACED_REC_HDR_SIZE;
}

/*
 * A span of every kind of record: runs of events without strings,
 * events interleaved, string events between them (one larger than the
 * walk's own buffer), a LOST record, a record the span's end cuts.  Its
 * length, the cut record's offset.
 */
static size_t
copy_span(struct buf *b, size_t *cut)
{
	static const uint32_t ids[] = { 16, 16, 16, 48, 16, 17, 55, 48, 48,
	    17, 16, 55, 16 };
	size_t i;

	b->len = 0;
	for (i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		t40_put(b, ids[i], 100 + i);
		/* Arguments the copy must keep as they are. */
		if (ids[i] == 16 || ids[i] == 48)
			memset(b->b + b->len - 8, (int)(0x40 + i), 8);
		if (i == 4)
			put_lost(b, 104, 2, 0);
		if (i == 8)
			t40_put_long(b, 108, 600);
	}
	*cut = t40_put(b, 48, 200);
	return b->len - 8;
}

static void
test_recwalk_copy_finds_what_recwalk_finds(void **state)
{
	_Alignas(8) uint8_t dst[sizeof(((struct buf *)0)->b)];
	uint64_t counts[T40_CLS + 40];
	uint32_t ntouched, touched_in_place[T40_CLS + 40];
	struct recwalk w, wc;
	struct buf b = { .len = 0 };
	size_t len, cut, bad;

	(void)state;
	len = copy_span(&b, &cut);
	t40_walk_init(&w);
	assert_int_equal(recwalk(&w, b.b, len), (long)cut);
	memcpy(counts, t40_counts, sizeof(counts));
	ntouched = w.ntouched;
	memcpy(touched_in_place, t40_touched, sizeof(touched_in_place));

	memset(dst, 0xa5, sizeof(dst));
	t40_walk_init(&wc);
	assert_int_equal(recwalk_copy(&wc, dst, b.b, len), (long)cut);
	assert_memory_equal(dst, b.b, cut);
	/* The cut record's header too: the caller may look at it. */
	assert_memory_equal(dst + cut, b.b + cut, TRACED_REC_HDR_SIZE);
	assert_int_equal(wc.events, w.events);
	assert_int_equal(wc.events, 14);
	assert_int_equal(wc.discarded, 2);
	assert_int_equal(wc.lost_records, 1);
	assert_memory_equal(t40_counts, counts, sizeof(counts));
	assert_int_equal(wc.ntouched, ntouched);
	assert_memory_equal(t40_touched, touched_in_place,
	    ntouched * sizeof(*t40_touched));
	assert_int_equal(wc.first_ts, 100);
	assert_int_equal(wc.last_ts, w.last_ts);
	assert_int_equal(wc.tail_pad, w.tail_pad);

	/* Time going back in a run: refused at the same place, for the
	 * same reason, with the refused record's header copied. */
	bad = 2 * (TRACED_REC_HDR_SIZE + 8);
	memcpy(b.b + bad + 8, &(uint64_t){ 50 }, 8);
	t40_walk_init(&w);
	assert_int_equal(recwalk(&w, b.b, len), -1);
	memset(dst, 0xa5, sizeof(dst));
	t40_walk_init(&wc);
	assert_int_equal(recwalk_copy(&wc, dst, b.b, len), -1);
	assert_string_equal(wc.invalid, "timestamp going backwards");
	assert_int_equal(wc.invalid_off, w.invalid_off);
	assert_int_equal(wc.invalid_off, bad);
	assert_memory_equal(dst, b.b, bad + TRACED_REC_HDR_SIZE);
	assert_int_equal(wc.events, 2);
}

/*
 * The client of test_recwalk_copy_keeps_what_it_checked(): it flips
 * words of its ring between a good value and a bad one, one after the
 * other, as fast as it can.
 */
#define FLIPS_MAX	40

struct flip {
	uint64_t	*word;
	uint64_t	 good, bad;
};

struct scribbler {
	struct flip	 flips[FLIPS_MAX];
	int		 n;
	int		 stop;
};

static void
flip_word(struct scribbler *s, uint8_t *at, uint64_t bad)
{
	struct flip *f = &s->flips[s->n++];

	assert_true(s->n <= FLIPS_MAX);
	f->word = (uint64_t *)(void *)at;
	f->good = *f->word;
	f->bad = bad;
}

/* A record's size 8 more than its event takes, its time gone back. */
static void
flip_header(struct scribbler *s, uint8_t *rec)
{
	flip_word(s, rec, *(uint64_t *)(void *)rec + (UINT64_C(8) << 32));
	flip_word(s, rec + 8, 1);
}

/* Let a value stand a while (a walk of a record or two). */
static void
scribble_wait(void)
{
	volatile int i;

	for (i = 0; i < 20; i++)
		;
}

static void *
scribble(void *arg)
{
	struct scribbler *s = arg;
	int i;

	while (!__atomic_load_n(&s->stop, __ATOMIC_RELAXED))
		for (i = 0; i < s->n; i++) {
			__atomic_store_n(s->flips[i].word, s->flips[i].bad,
			    __ATOMIC_RELAXED);
			scribble_wait();
			__atomic_store_n(s->flips[i].word, s->flips[i].good,
			    __ATOMIC_RELAXED);
			scribble_wait();
		}
	return NULL;
}

/* Put a record of t40's event id, 'size' bytes, zeros after its header. */
static uint8_t *
put_rec(struct buf *b, uint32_t id, uint32_t size, uint64_t ts)
{
	uint8_t *rec = b->b + b->len;

	memset(rec, 0, size);
	put_hdr(b, id, size, ts);
	b->len += size - TRACED_REC_HDR_SIZE;
	return rec;
}

/*
 * A client that rewrites its ring while the walk copies it: whatever
 * the walk kept, its copy passes the check again with the same verdict,
 * counts and times, and what it says of the record it stopped at (a
 * THREAD record, a PAD, a record the span cuts) is what the copy holds:
 * the copy is what was checked, never what the client wrote after.
 * The client flips, one after the other, the size (8 more) and the time
 * (gone back) of every record, the end of two strings (one in a record
 * larger than the walk's own buffer), a LOST record's count and a
 * THREAD record's tid.  The records: events without strings first met,
 * met before, in a run, interleaved; strings; a loss; then a THREAD
 * record, a PAD to the lap end or a record cut by the span's end.
 */
static void
test_recwalk_copy_keeps_what_it_checked(void **state)
{
	static struct buf b;
	_Alignas(8) static uint8_t dst[sizeof(b.b)];
	static struct scribbler s;
	struct traced_lost lost = { .count = 3, .cause = { 3 } };
	struct traced_thread_rec thr = { .tid = 1234 };
	struct recwalk w, again;
	uint64_t counts[T40_CLS + 40], pos = 0;
	uint32_t word[2];
	uint8_t *rec;
	pthread_t th;
	long kept, whole[3] = { 0, 0, 0 };
	int end, k;

	(void)state;
	for (end = 0; end < 3; end++) {
		memset(&s, 0, sizeof(s));
		b.len = 0;
		flip_header(&s, put_rec(&b, 16, 24, 10));	/* first met */
		flip_header(&s, put_rec(&b, 16, 24, 11));	/* a run */
		flip_header(&s, put_rec(&b, 17, 16, 12));	/* first met */
		flip_header(&s, put_rec(&b, 16, 24, 13));	/* met before */
		flip_header(&s, put_rec(&b, 16, 24, 14));	/* a run */
		rec = put_rec(&b, 55, 24, 15);			/* a string */
		memcpy(rec + 16, "abcdefg", 8);
		flip_header(&s, rec);
		flip_word(&s, rec + 16, 0x6867666564636261);	/* no NUL */
		rec = put_rec(&b, TRACED_EVENT_LOST, TRACED_LOST_REC_SIZE, 16);
		memcpy(rec + 16, &lost, sizeof(lost));
		flip_header(&s, rec);
		flip_word(&s, rec + 16, 4);			/* no sum */
		rec = put_rec(&b, 55, 616, 17);			/* > 512 */
		memset(rec + 16, 'x', 599);
		flip_header(&s, rec);
		flip_word(&s, rec + 16 + 592, 0x7878787878787878);
		flip_header(&s, put_rec(&b, 48, 24, 18));	/* met before */
		flip_header(&s, put_rec(&b, 16, 24, 19));
		rec = put_rec(&b, 55, 24, 20);
		memcpy(rec + 16, "abcdefg", 8);
		flip_header(&s, rec);
		if (end == 0) {
			rec = put_rec(&b, TRACED_EVENT_THREAD,
			    TRACED_THREAD_REC_SIZE, 21);
			memcpy(rec + 16, &thr, sizeof(thr));
			flip_header(&s, rec);
			flip_word(&s, rec + 16, 0);		/* tid 0 */
		} else if (end == 1) {
			/* A PAD of 16 to a lap end, then nothing. */
			rec = b.b + b.len;
			word[0] = TRACED_EVENT_PAD;
			word[1] = 16;
			memcpy(rec, word, sizeof(word));
			flip_word(&s, rec, (uint64_t)24 << 32 |
			    TRACED_EVENT_PAD);
			b.len += 16;
			pos = TRACED_RING_LAP_MIN - b.len % TRACED_RING_LAP_MIN;
		} else {
			flip_word(&s, put_rec(&b, 16, 24, 21), 0);
			b.len -= 8;				/* cut */
		}
		assert_int_equal(pthread_create(&th, NULL, scribble, &s), 0);
		for (k = 0; k < 50000; k++) {
			memset(dst, 0xa5, b.len);
			t40_walk_init(&w);
			w.pos = pos;
			w.max_ts = 1000;
			kept = recwalk_copy(&w, dst, b.b, b.len);
			if (kept < 0)
				kept = (long)w.invalid_off;
			memcpy(counts, t40_counts, sizeof(counts));
			t40_walk_init(&again);
			again.pos = pos;
			again.max_ts = 1000;
			assert_int_equal(recwalk(&again, dst, (size_t)kept),
			    kept);
			assert_int_equal(again.events, w.events);
			assert_int_equal(again.discarded, w.discarded);
			assert_memory_equal(t40_counts, counts,
			    sizeof(counts));
			if (kept > 0) {
				assert_int_equal(again.last_ts, w.last_ts);
				assert_int_equal(again.first_ts, w.first_ts);
				assert_int_equal(again.tail_pad, w.tail_pad);
			}
			if (w.thread != 0) {
				assert_memory_equal(dst + kept + 16, &w.next,
				    sizeof(w.next));
				assert_int_not_equal(w.next.tid, 0);
			}
			if (w.pad != 0) {
				memcpy(word, dst + kept, sizeof(word));
				assert_int_equal(word[0], TRACED_EVENT_PAD);
				assert_int_equal(word[1], w.pad);
				assert_int_equal((pos + (uint64_t)kept +
				    w.pad) % TRACED_RING_LAP_MIN, 0);
			}
			whole[end] += w.invalid == NULL &&
			    (w.thread != 0 || w.pad != 0 || end == 2);
		}
		__atomic_store_n(&s.stop, 1, __ATOMIC_RELAXED);
		assert_int_equal(pthread_join(th, NULL), 0);
	}
	/* Some walks met the good values all through, to the end. */
	assert_true(whole[0] > 0 && whole[1] > 0 && whole[2] > 0);
}

/*
 * The same, one word at a time, for the fast paths, where a load and
 * the store of what it loaded are nanoseconds apart: the time of the
 * third record of a run (gone back), the id-and-size word of the
 * fourth, of the first (the full check), and of a record of another
 * event met before (a size its event does not have).
 */
static void
test_recwalk_copy_stores_what_it_loaded(void **state)
{
	/* Records of 24 bytes but the fifth (17, 16 bytes). */
	static const size_t at[4] = { 2 * 24 + 8, 3 * 24, 0, 4 * 24 + 16 };
	_Alignas(8) static uint8_t span[6 * 24 + 16], dst[6 * 24 + 16];
	static const uint32_t ids[7] = { 16, 16, 16, 16, 17, 16, 16 };
	static struct scribbler s;
	struct recwalk w, again;
	pthread_t th;
	size_t i, off;
	long kept, whole = 0;
	int round, k;

	(void)state;
	for (i = 0, off = 0; i < 7; i++) {
		struct traced_rec_hdr h = { .id = ids[i],
		    .size = ids[i] == 17 ? 16 : 24, .ts = 10 + i };

		memcpy(span + off, &h, sizeof(h));
		if (h.size > 16)
			memcpy(span + off + sizeof(h), &i, 8);
		off += h.size;
	}
	assert_int_equal(off, sizeof(span));
	/* Record 5 (16) follows one of 17: its event met before. */
	for (round = 0; round < 4; round++) {
		memset(&s, 0, sizeof(s));
		flip_word(&s, span + at[round], round == 0 ? 1 :
		    *(uint64_t *)(void *)(span + at[round]) +
		    (UINT64_C(8) << 32));
		assert_int_equal(pthread_create(&th, NULL, scribble, &s), 0);
		for (k = 0; k < 200000; k++) {
			t40_walk_init(&w);
			kept = recwalk_copy(&w, dst, span, sizeof(span));
			if (kept < 0)
				kept = (long)w.invalid_off;
			t40_walk_init(&again);
			assert_int_equal(recwalk(&again, dst, (size_t)kept),
			    kept);
			assert_int_equal(again.events, w.events);
			whole += kept == (long)sizeof(span);
		}
		__atomic_store_n(&s.stop, 1, __ATOMIC_RELAXED);
		assert_int_equal(pthread_join(th, NULL), 0);
		*s.flips[0].word = s.flips[0].good;
	}
	assert_true(whole > 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_recwalk_counts_events_and_losses),
		cmocka_unit_test(test_recwalk_ranges_with_gaps),
		cmocka_unit_test(test_recwalk_refuses_future_timestamps),
		cmocka_unit_test(test_recwalk_tail_pad_after_last_string),
		cmocka_unit_test(test_recwalk_leaves_a_cut_record_for_later),
		cmocka_unit_test(test_recwalk_null_marks),
		cmocka_unit_test(test_recwalk_refuses_bad_sizes),
		cmocka_unit_test(test_recwalk_refuses_time_going_backwards),
		cmocka_unit_test(test_recwalk_refuses_unknown_ids),
		cmocka_unit_test(test_recwalk_stops_at_thread_record),
		cmocka_unit_test(test_recwalk_crash_records),
		cmocka_unit_test(test_recwalk_refuses_records_unlike_their_event),
		cmocka_unit_test(test_recwalk_refuses_lost_records_that_lie),
		cmocka_unit_test(test_recwalk_runs_of_one_event),
		cmocka_unit_test(test_recwalk_interleaved_events),
		cmocka_unit_test(test_recwalk_known_events_checked_alike),
		cmocka_unit_test(test_recwalk_without_any_event_table),
		cmocka_unit_test(test_recwalk_fixed_sizes_same_verdicts),
		cmocka_unit_test(test_recwalk_stops_at_padding),
		cmocka_unit_test(test_recwalk_copy_finds_what_recwalk_finds),
		cmocka_unit_test(test_recwalk_copy_keeps_what_it_checked),
		cmocka_unit_test(test_recwalk_copy_stores_what_it_loaded),
	};

	return cmocka_run_group_tests_name("recwalk", tests, NULL, NULL);
}
