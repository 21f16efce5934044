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
 * span; walking it in two pieces accepts the same bytes and counts the
 * same events and losses as walking it at once.
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "recwalk.h"
#include "tevents.h"

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NEV	7

static struct tevents_event evs[NEV];
/* The record sizes of 16 and 17, the events without strings, as the
 * daemon knows them: records of theirs are checked by size, runs of
 * them by time alone.  The second provider has no such table. */
static const uint32_t fixed[4] = { TRACED_REC_HDR_SIZE,
	TRACED_REC_HDR_SIZE + 8, 0, 0 };
/* Ids 16-19 and, after a gap, 20-22 (as if a provider was unloaded
 * between): class numbers 0-6. */
static struct recwalk_range ranges[2] = {
	{ .first = 0, .n = 4, .cls = 0, .ev = evs, .fixed = fixed },
	{ .first = 4, .n = NEV - 4, .cls = 4, .ev = evs + 4 },
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
	b = recwalk(w, buf + a, len - (size_t)a);
	if (b < 0) {
		*failed = 1;
		return (size_t)a + w->invalid_off;
	}
	return (size_t)a + (size_t)b;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int ready;
	struct recwalk one, two;
	uint64_t counts1[NEV], counts2[NEV];
	uint32_t touched1[NEV], touched2[NEV];
	uint8_t *buf;
	size_t len, cut, kept2;
	long kept1;
	int failed2;

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
	one.nranges = 2;
	one.counts = counts1;
	one.touched = touched1;
	/* Times from the far future are refused, as by the writeout. */
	one.max_ts = UINT64_C(1) << 62;
	two = one;
	memset(counts2, 0, sizeof(counts2));
	two.counts = counts2;
	two.touched = touched2;

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
	free(buf);
	return 0;
}
