/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * The ring record validator of proto/recwalk.h.  A ring is the client's
 * memory: anything in it may be wrong by accident or on purpose, and a
 * record that babeltrace2 could misread would make the whole stream
 * unreadable.  So every record is checked against what the daemon knows
 * independently of the ring (the event's registered signature) before
 * it is written: its size must be exactly what its fields take.  The
 * walk reads each header with memcpy (the span may be unaligned in a
 * fuzzer's buffer), never reads past len, and loops at most len / 16
 * times.
 */
#include <string.h>

#include "recwalk.h"
#include "tevents.h"

/* The record at buf[0, size) of a known event: do its fields fill it? */
static const char *
recwalk_fields(const struct tevents_event *ev, const uint8_t *buf,
    uint32_t size, uint32_t *tail_pad)
{
	uint32_t pos = TRACED_REC_HDR_SIZE, a;

	for (a = 0; a < ev->nargs; a++) {
		if (ev->args[a].cls == TEVENTS_STRING) {
			const uint8_t *nul;

			if (pos >= size)
				return "record shorter than its event";
			nul = memchr(buf + pos, '\0', size - pos);
			if (nul == NULL)
				return "string argument without its end";
			pos = (uint32_t)(nul - buf) + 1;
		} else {
			pos = traced_align8(pos) + 8;
			if (pos > size)
				return "record shorter than its event";
		}
	}
	if (traced_align8(pos) != size)
		return "record size does not match its event";
	*tail_pad = size - pos;
	return NULL;
}

/* A LOST record: the causes must add up to the count. */
static const char *
recwalk_lost(struct recwalk *w, const uint8_t *buf, uint32_t size)
{
	struct traced_lost lost;
	uint64_t sum = 0;
	int i;

	if (size != TRACED_LOST_REC_SIZE)
		return "bad loss record";
	memcpy(&lost, buf + TRACED_REC_HDR_SIZE, sizeof(lost));
	for (i = 0; i < TRACED_DROP_PRODUCER_NCAUSES; i++) {
		/* Counts a producer could overflow are lies too. */
		if (sum + lost.cause[i] < sum)
			return "loss record does not add up";
		sum += lost.cause[i];
	}
	if (sum != lost.count || w->discarded + sum < w->discarded)
		return "loss record does not add up";
	for (i = 0; i < TRACED_DROP_PRODUCER_NCAUSES; i++)
		w->lost[i] += lost.cause[i];
	w->discarded += lost.count;
	w->lost_records++;
	return NULL;
}

long
recwalk(struct recwalk *w, const uint8_t *buf, size_t len)
{
	const char *why;
	size_t off = 0;

	w->invalid = NULL;
	w->first_ts = 0;
	w->tail_pad = 0;
	while (len - off >= TRACED_REC_HDR_SIZE) {
		struct traced_rec_hdr h;

		memcpy(&h, buf + off, sizeof(h));
		if (h.size < TRACED_REC_HDR_SIZE || h.size % 8 != 0 ||
		    h.size > TRACED_REC_MAX) {
			why = "record size out of range";
			goto bad;
		}
		if (h.size > len - off)
			break;		/* continues in the next span */
		if (h.ts < w->last_ts) {
			why = "timestamp going backwards";
			goto bad;
		}
		if (h.id == TRACED_EVENT_LOST) {
			if ((why = recwalk_lost(w, buf + off, h.size)) != NULL)
				goto bad;
			w->tail_pad = 0;
		} else {
			uint32_t i = h.id - TRACED_EVENT_ID_BASE;

			if (h.id < TRACED_EVENT_ID_BASE || i >= w->nids ||
			    w->ev[i] == NULL) {
				why = "unknown event id";
				goto bad;
			}
			why = recwalk_fields(w->ev[i], buf + off, h.size,
			    &w->tail_pad);
			if (why != NULL)
				goto bad;
			w->events++;
			if (w->counts != NULL)
				w->counts[i]++;
		}
		if (off == 0)
			w->first_ts = h.ts;
		w->last_ts = h.ts;
		off += h.size;
	}
	return (long)off;
bad:
	w->invalid = why;
	w->invalid_off = off;
	return -1;
}
