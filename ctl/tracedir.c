/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * What the rest of the reader asks of a parsed metadata (struct
 * tracedir_meta, built by tsdl.c): the event class of an id, for the
 * stream walk (tracedir-stream.c) and the readers, and the wall-clock
 * time of a clock value, computed as babeltrace2 computes it so that
 * both print the same nanosecond.
 *
 * The pure core of the trace directory reader is tsdl.c, this file and
 * tracedir-stream.c; tracedir.h says how they fit with the I/O layer
 * (tracedir-io.c).  No I/O, no allocation, no global state.
 */
#include <stdint.h>

#include "tracedir.h"

/*
 * Class lookup by id (binary search).  Contract in tracedir.h.
 */
const struct tracedir_class *
tracedir_meta_class(const struct tracedir_meta *m, uint32_t id)
{
	size_t	 lo = 0, hi = m->nclasses, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (m->classes[mid].id == id)
			return &m->classes[mid];
		if (m->classes[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/*
 * babeltrace2 2.0.4 turns ticks into ns like this (bt_util_ns_from_value):
 * exact at 1 GHz, through a double otherwise.  Doing the same makes the
 * two readers print the same nanosecond.
 */
static uint64_t
td_ticks_ns(uint64_t freq, uint64_t ticks)
{
	double	 d;

	if (freq == 1000000000)
		return ticks;
	d = 1e9 * (double)ticks / (double)freq;
	if (d >= 18446744073709551615.0)
		return UINT64_MAX;
	return (uint64_t)d;
}

/*
 * Ticks to ns from the Epoch.  Contract in tracedir.h.  The parser
 * bounds offset_s so that the first two terms cannot overflow.
 */
int64_t
tracedir_ns(const struct tracedir_meta *m, uint64_t ticks)
{
	int64_t		 ns, r;
	uint64_t	 v;

	ns = m->clock_offset_s * 1000000000 +
	    (int64_t)td_ticks_ns(m->clock_freq, m->clock_offset);
	v = td_ticks_ns(m->clock_freq, ticks);
	if (v > (uint64_t)INT64_MAX) {
		if (ns >= 0)
			return INT64_MAX;
		v -= (uint64_t)-ns;
		return v > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)v;
	}
	if (__builtin_add_overflow(ns, (int64_t)v, &r))
		return INT64_MAX;
	return r;
}
