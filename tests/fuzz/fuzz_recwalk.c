/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * libFuzzer target: recwalk(), the check every span of a client's ring
 * passes before the daemon writes it.  The input is the span; the
 * events it may name are a fixed table of every shape a signature can
 * have (no fields, integers only, strings first, last, in a row, the
 * most fields an event may have).  The first two bytes say where the
 * writeout's copy was cut in two, as when a span is drained in chunks.
 *
 * Oracles: what is accepted is a whole number of records inside the
 * span; walking it in two pieces, and one record at a time, accepts the
 * same bytes, refuses the same record for the same reason and counts
 * the same events and losses as walking it at once.  A walk of one
 * record takes the full check every time, never the shortcut for an
 * event the walk met before (recwalk.c), so it is the reference for it.
 * recwalk_copy() finds what recwalk() finds, and its copy holds the
 * bytes it kept, and the header of the record it stopped at.
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "recwalk.h"
#include "tevents.h"

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NEV	9

static struct tevents_event evs[NEV];
/*
 * The record sizes of the events without strings (16, 17, 48, 49), as
 * the daemon knows them: records of theirs are checked by size, and
 * once met by time alone.  48 and 49 have the low id bits of 16 and 17.
 * The second provider has no such table.
 */
static const uint32_t fixed[4] = { TRACED_REC_HDR_SIZE,
	TRACED_REC_HDR_SIZE + 8, 0, 0 };
static const uint32_t fixed48[2] = { TRACED_REC_HDR_SIZE + 8,
	TRACED_REC_HDR_SIZE + 16 };
/* Ids 16-19 (classes 3-6), 20-22 (0-2) and, after a gap (as if a
 * provider was unloaded between), 48-49 (7-8). */
static struct recwalk_range ranges[3] = {
	{ .first = 0, .n = 4, .cls = 3, .ev = evs, .fixed = fixed },
	{ .first = 4, .n = 3, .cls = 0, .ev = evs + 4 },
	{ .first = 32, .n = 2, .cls = 7, .ev = evs + 7, .fixed = fixed48 },
};

static void
setup(void)
{
	static const char *const shapes[NEV] = {
		"",		/* 16: no fields */
		"u",		/* 17: one integer */
		"s",		/* 18: one string */
		"us",		/* 19: string last */
		"su",		/* 20: string first */
		"ssu",		/* 21: strings in a row */
		"uuuuusuuuus",	/* 22: the most fields, TEVENTS_ARGS_MAX */
		"u",		/* 48 */
		"uu",		/* 49 */
	};
	int i;

	_Static_assert(sizeof("uuuuusuuuus") - 1 == TEVENTS_ARGS_MAX,
	    "event 22 has the most fields an event may have");
	for (i = 0; i < NEV; i++) {
		const char *p;

		for (p = shapes[i]; *p != '\0'; p++)
			evs[i].args[evs[i].nargs++].cls = *p == 's' ?
			    TEVENTS_STRING : TEVENTS_UNSIGNED;
	}
}

/* Walk buf[0, len) from 'w' in pieces cut at 'cut'; returns bytes kept. */
static size_t
walk_in_two(struct recwalk *w, const uint8_t *buf, size_t len, size_t cut,
    int *failed)
{
	long a, b;

	*failed = 0;
	a = recwalk(w, buf, cut);
	if (a < 0) {
		*failed = 1;
		return w->invalid_off;
	}
	w->pos += (uint64_t)a;
	b = recwalk(w, buf + a, len - (size_t)a);
	if (b < 0) {
		*failed = 1;
		return (size_t)a + w->invalid_off;
	}
	return (size_t)a + (size_t)b;
}

/*
 * Walk buf[0, len) from 'w' one record per call, as far as its size
 * says; returns bytes kept, and the first time and the padding after
 * the last record of what was kept.
 */
static size_t
walk_by_record(struct recwalk *w, const uint8_t *buf, size_t len,
    int *failed, uint64_t *first_ts, uint32_t *tail_pad)
{
	size_t off = 0, piece;
	uint32_t word[2];
	long n;

	*failed = 0;
	*first_ts = 0;
	*tail_pad = 0;
	while (len - off >= TRACED_PAD_MIN) {
		memcpy(word, buf + off, sizeof(word));
		word[1] &= TRACED_REC_SIZE_MASK;
		piece = len - off;
		if (word[1] >= TRACED_REC_HDR_SIZE && word[1] < piece)
			piece = word[1];
		w->pos = off;
		n = recwalk(w, buf + off, piece);
		if (n < 0) {
			*failed = 1;
			return off + w->invalid_off;
		}
		if (n > 0) {
			if (off == 0)
				*first_ts = w->first_ts;
			*tail_pad = w->tail_pad;
		}
		off += (size_t)n;
		if (n == 0 || w->pad != 0 || w->thread != 0)
			break;
	}
	return off;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int ready;
	struct recwalk one, two, three, four;
	uint64_t counts1[NEV], counts2[NEV], counts3[NEV], counts4[NEV];
	uint64_t first_ts3;
	uint32_t touched1[NEV], touched2[NEV], touched3[NEV], touched4[NEV];
	uint32_t tail_pad3;
	uint8_t *buf, *copy;
	size_t len, cut, kept2, kept3, stop;
	long kept1, kept4;
	int failed2, failed3;

	if (!ready) {
		setup();
		ready = 1;
	}
	if (size < 2)
		return 0;
	len = size - 2;
	cut = ((size_t)data[0] << 8 | data[1]) % (len + 1);
	/* The writeout walks its own copy, 8-byte aligned. */
	buf = malloc(len + 1);
	assert(buf != NULL);
	memcpy(buf, data + 2, len);

	memset(&one, 0, sizeof(one));
	memset(counts1, 0, sizeof(counts1));
	one.ranges = ranges;
	one.nranges = 3;
	one.counts = counts1;
	one.touched = touched1;
	/* Times from the far future are refused, as by the writeout. */
	one.max_ts = UINT64_C(1) << 62;
	two = one;
	memset(counts2, 0, sizeof(counts2));
	two.counts = counts2;
	two.touched = touched2;
	three = one;
	memset(counts3, 0, sizeof(counts3));
	three.counts = counts3;
	three.touched = touched3;
	four = one;
	memset(counts4, 0, sizeof(counts4));
	four.counts = counts4;
	four.touched = touched4;

	kept1 = recwalk(&one, buf, len);
	if (kept1 >= 0) {
		assert((size_t)kept1 <= len && kept1 % 8 == 0);
		assert(len - (size_t)kept1 < TRACED_REC_MAX);
		assert(one.invalid == NULL);
	} else {
		assert(one.invalid != NULL && one.invalid_off < len);
		assert(one.invalid_off % 8 == 0);
	}
	kept2 = walk_in_two(&two, buf, len, cut, &failed2);
	if (kept1 >= 0) {
		/* A cut may end a valid prefix early, never change it. */
		assert(!failed2 && kept2 == (size_t)kept1);
		assert(two.events == one.events);
		assert(two.discarded == one.discarded);
		assert(two.lost_records == one.lost_records);
		assert(memcmp(counts1, counts2, sizeof(counts1)) == 0);
		assert(one.ntouched <= NEV && two.ntouched == one.ntouched);
		assert(two.last_ts == one.last_ts);
	} else {
		assert(failed2 && kept2 == one.invalid_off);
	}
	kept3 = walk_by_record(&three, buf, len, &failed3, &first_ts3,
	    &tail_pad3);
	if (kept1 >= 0) {
		assert(!failed3 && kept3 == (size_t)kept1);
		assert(tail_pad3 == one.tail_pad);
		assert(one.pad == three.pad && one.thread == three.thread);
	} else {
		assert(failed3 && kept3 == one.invalid_off);
		assert(strcmp(three.invalid, one.invalid) == 0);
	}
	/* The valid prefix counts the same either way. */
	assert(three.events == one.events);
	assert(three.discarded == one.discarded);
	assert(three.lost_records == one.lost_records);
	assert(memcmp(counts1, counts3, sizeof(counts1)) == 0);
	assert(three.ntouched == one.ntouched &&
	    memcmp(touched1, touched3, one.ntouched * sizeof(*touched1)) == 0);
	assert(three.last_ts == one.last_ts);
	if (kept1 > 0 || (kept1 < 0 && one.invalid_off > 0))
		assert(first_ts3 == one.first_ts);

	copy = malloc(len > 0 ? len : 1);	/* ASan: not a byte past */
	assert(copy != NULL);
	memset(copy, 0xa5, len);
	kept4 = recwalk_copy(&four, copy, buf, len);
	assert(kept4 == kept1);
	if (kept1 < 0) {
		assert(four.invalid_off == one.invalid_off);
		assert(strcmp(four.invalid, one.invalid) == 0);
	}
	assert(four.events == one.events && four.discarded == one.discarded);
	assert(four.lost_records == one.lost_records);
	assert(memcmp(counts1, counts4, sizeof(counts1)) == 0);
	assert(four.ntouched == one.ntouched &&
	    memcmp(touched1, touched4, one.ntouched * sizeof(*touched1)) == 0);
	assert(four.last_ts == one.last_ts && four.first_ts == one.first_ts);
	assert(four.tail_pad == one.tail_pad && four.pad == one.pad);
	assert(four.thread == one.thread &&
	    memcmp(&four.next, &one.next, sizeof(one.next)) == 0);
	stop = kept1 >= 0 ? (size_t)kept1 : one.invalid_off;
	assert(memcmp(copy, buf, stop) == 0);
	if (len - stop >= TRACED_PAD_MIN)
		assert(memcmp(copy + stop, buf + stop, len - stop <
		    TRACED_REC_HDR_SIZE ? len - stop : TRACED_REC_HDR_SIZE) == 0);
	free(copy);
	free(buf);
	return 0;
}
