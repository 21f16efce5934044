/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * The ring record validator: walks a copy of a span of a client's ring
 * and decides which of its records may reach a CTF stream.  Pure (no
 * I/O, no allocation, no shared memory: the caller copies the span out
 * of the ring first, so the client cannot change what was checked).
 * Proto; used by the daemon's writeout workers and by the fuzz target.
 * Any thread, one walk per struct at a time.
 */
#ifndef TRACED_PROTO_RECWALK_H
#define TRACED_PROTO_RECWALK_H

#include <stddef.h>
#include <stdint.h>

#include "ring.h"

struct tevents_event;

/*
 * What one stream's walk knows and finds.  The caller fills the first
 * block and zeroes the rest; recwalk() adds to the counters, so one
 * struct may serve several calls over consecutive spans.
 */
struct recwalk {
	/* In. */
	const struct tevents_event *const *ev;	/* by id - TRACED_EVENT_ID_BASE,
						   borrowed */
	uint32_t	 nids;
	uint64_t	*counts;	/* NULL, or nids counters by id - base */
	/* In and out. */
	uint64_t	 last_ts;	/* the stream's last timestamp */
	/* Out, added to. */
	uint64_t	 events;	/* event records, LOST records aside */
	uint64_t	 lost_records;
	uint64_t	 lost[TRACED_DROP_PRODUCER_NCAUSES];
	uint64_t	 discarded;	/* sum of the LOST records' counts */
	/* Out, of the last call. */
	uint64_t	 first_ts;	/* of its first record */
	uint32_t	 tail_pad;	/* padding after its last record's
					   last field */
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
 * whose causes do not add up.  Counters cover the valid prefix only
 * when it returns -1 too.
 */
long	recwalk(struct recwalk *w, const uint8_t *buf, size_t len);

#endif
