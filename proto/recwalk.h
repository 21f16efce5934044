/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * The ring record validator: walks a span of a client's ring and
 * decides which of its records may reach a CTF stream.  What it checks
 * is a copy the client cannot change: recwalk() walks a copy the caller
 * made, recwalk_copy() makes it record by record as it walks the ring
 * itself.  No I/O, no allocation.  Proto; used by the daemon's drain
 * thread and by the fuzz target.  Any thread, one walk per struct at a
 * time.
 */
#ifndef TRACED_PROTO_RECWALK_H
#define TRACED_PROTO_RECWALK_H

#include <stddef.h>
#include <stdint.h>

#include "ring.h"

struct tevents_event;

#define RECWALK_TOUCHED	(UINT64_C(1) << 63)	/* in a class's counter */

/*
 * The events a process described, as ranges of ids: one per provider,
 * in increasing order of ids and without overlap (a gap is a provider
 * unloaded before the daemon heard of it, and costs nothing).  Each
 * event also has a class number, dense from 0 over the whole process,
 * by which its records are counted.
 */
struct recwalk_range {
	uint32_t	 first;		/* id - TRACED_EVENT_ID_BASE of its
					   first event */
	uint32_t	 n;		/* events */
	uint32_t	 cls;		/* class number of its first event */
	const struct tevents_event *ev;	/* n events, borrowed */
	const uint32_t	*fixed;		/* NULL, or n sizes, borrowed: the
					   record size of an event without
					   strings (16 + 8 per argument), 0
					   for others; such records need no
					   field walk */
};

/*
 * What one stream's walk knows and finds.  The caller fills the first
 * block and zeroes the rest; recwalk() adds to the counters, so one
 * struct may serve several calls over consecutive spans.
 */
struct recwalk {
	/* In. */
	const struct recwalk_range *ranges;	/* borrowed */
	uint32_t	 nranges;
	uint64_t	 max_ts;	/* later timestamps are refused;
					   0: no bound */
	/*
	 * NULL, or a counter per class, all zero at first; the first
	 * record of a class sets RECWALK_TOUCHED in its counter and
	 * appends the class to touched (as many entries as classes), so
	 * the caller reads (without the bit) and clears only those.
	 */
	uint64_t	*counts;
	uint32_t	*touched;
	uint32_t	 ntouched;
	uint32_t	 hint;		/* range of a recent record */
	uint64_t	 pos;		/* ring position of buf[0] (PAD records
					   must end on a lap end) */
	/* In and out. */
	uint64_t	 last_ts;	/* the stream's last timestamp */
	/* Out, added to. */
	uint64_t	 events;	/* event records, LOST records aside */
	uint64_t	 lost_records;
	uint64_t	 lost[TRACED_DROP_PRODUCER_NCAUSES];
	uint64_t	 discarded;	/* sum of the LOST records' counts */
	uint64_t	 crashes;	/* traced:crash records (not events) */
	/* Out, of the last call. */
	uint64_t	 first_ts;	/* of its first record */
	uint32_t	 tail_pad;	/* padding after its last record's
					   last field */
	uint32_t	 pad;		/* size of the PAD record it stopped at,
					   or 0 */
	uint32_t	 thread;	/* size of the THREAD record it
					   stopped at, or 0; then: */
	struct traced_thread_rec next;	/* what it says */
	const char	*invalid;	/* why it failed, or NULL */
	size_t		 invalid_off;	/* where, from buf */
};

/*
 * Check the records in buf[0, len).  Returns the length of the longest
 * prefix of whole valid records (a record that runs past len is left
 * for the next call), or -1 with w->invalid and w->invalid_off set when
 * a record is malformed: a size out of range or not a multiple of 8, a
 * timestamp going backwards, an unknown event id, fields that do not
 * fill the record exactly as the event's signature says (integers 8
 * bytes aligned, strings up to a NUL inside the record), a LOST record
 * whose causes do not add up, a CRASH record of another size or with a
 * signal number or code out of range, a timestamp past max_ts, a PAD
 * record larger than a record may be or not ending on a lap end.  A
 * valid PAD record ends the walk: the return value is where it starts
 * and w->pad its size; what follows it belongs to the next call.  So
 * does a valid THREAD record (w->thread, w->next): its timestamp is
 * checked like an event's, its tid must be a thread id (1 to
 * INT32_MAX).  Counters cover the valid prefix only when it returns -1
 * too.
 */
long	recwalk(struct recwalk *w, const uint8_t *buf, size_t len);

/*
 * recwalk() on src[0, len), memory the client may write while we read
 * it (its ring, mapped), copying to dst[0, len) as it goes: on return,
 * dst[0, r) holds the valid prefix, every byte of it as it was
 * checked, and what follows is undefined except the header of a record
 * it refused (at w->invalid_off, for the caller to look at).  Checking
 * each record as it is copied reads the ring once and writes the copy
 * once, around the cache (most of the drain thread's time went to a
 * separate copy, half of it to reading the destination's lines before
 * writing them).  src and dst must not overlap; both are 8-byte
 * aligned.
 */
long	recwalk_copy(struct recwalk *w, uint8_t *dst, const uint8_t *src,
	    size_t len);

/*
 * The range of 'ranges' (n of them, sorted) that holds event index i
 * (id - TRACED_EVENT_ID_BASE), or NULL.  *hint is where to look first
 * and is set to where it was found.
 */
const struct recwalk_range *recwalk_find(const struct recwalk_range *ranges,
	    uint32_t n, uint32_t i, uint32_t *hint);

#endif
