/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * tracectl export --format uftrace -o OUTDIR DIR...: a uftrace.data
 * directory that uftrace 0.13 reads (replay, graph, tui, dump --chrome,
 * info): the graph tracer's traced:func_entry and traced:func_exit
 * records become calls, named from the sessions' functions/module-N
 * files; every other event becomes a uftrace event; every loss a LOST
 * record.  The writing is uftrace.c's; this file feeds it the reader's
 * items.
 *
 * Times are on the session's own clock, not since the Epoch: uftrace
 * records CLOCK_MONOTONIC, and its readers (dump --chrome turns them
 * into microseconds in a JavaScript double) lose the nanoseconds of a
 * time since 1970, so that viewers nested every call inside the one
 * before (issue 29).  The CTF clock's offset (offset_s + offset) is
 * what separates the two: with the monotonic clock, what is left is
 * CLOCK_MONOTONIC; with the TSC, the TSC's time, as monotonic.
 */
#include <string.h>

#include "calls.h"
#include "export.h"
#include "uftrace.h"

struct uft_state {
	struct uftrace	*w;
};

static void
uft_error(void *arg, const char *msg)
{
	export_error(arg, "%s", msg);
}

static int
uft_begin(struct export *x)
{
	struct uft_state *st = x->priv;
	size_t i;

	if ((st->w = uftrace_new(x->dirfd, uft_error, x)) == NULL)
		goto nomem;
	for (i = 0; i < x->nsessions; i++)
		if (uftrace_session(st->w, i, x->sessions[i].path,
		    x->sessions[i].pid, x->sessions[i].number,
		    x->sessions[i].comm) == -1)
			goto nomem;
	for (i = 0; i < x->nthreads; i++)
		if (uftrace_thread(st->w, i, x->threads[i].sess->index,
		    x->threads[i].tid) == -1)
			goto nomem;
	return 0;
nomem:
	export_error(x, "out of memory");
	return -1;
}

/* The field 'name' of an event, or -1 if it has none. */
/* The ns of its clock's offset, for a session's times (see above). */
static int64_t
uft_offset_ns(const struct reader_session *s)
{
	const struct tracedir_meta *m = s->meta;

	if (m == NULL || m->clock_freq == 0)
		return 0;
	return m->clock_offset_s * 1000000000 +
	    (int64_t)(m->clock_offset / m->clock_freq * 1000000000 +
	    m->clock_offset % m->clock_freq * 1000000000 / m->clock_freq);
}

static int
uft_item(struct export *x, const struct reader_item *it)
{
	struct uft_state *st = x->priv;
	uint64_t addr, depth;
	size_t thr = it->thread->index;
	int64_t ns = it->ns - uft_offset_ns(it->thread->sess);
	int exit_;

	if (it->kind == READER_LOST)
		return it->lost > 0 ? uftrace_lost(st->w, thr, ns,
		    it->lost) : 0;
	if (calls_record(it, &exit_, &addr, &depth))
		return exit_ ? uftrace_exit(st->w, thr, ns, addr, depth) :
		    uftrace_entry(st->w, thr, ns, addr, depth);
	return uftrace_event(st->w, thr, ns, it->ev->cls->name);
}

static int
uft_end(struct export *x)
{
	struct uft_state *st = x->priv;

	return uftrace_finish(st->w) == 0 ? 0 : 0;	/* said */
}

static void
uft_free(struct export *x)
{
	struct uft_state *st = x->priv;

	uftrace_free(st->w);
}

const struct export_format export_fmt_uftrace = {
	.name = "uftrace",
	.help = "uftrace.data: function calls, events and losses (uftrace "
	    "0.13 replay, graph, tui, dump)",
	.out_is_dir = 1,
	.priv_size = sizeof(struct uft_state),
	.begin = uft_begin,
	.item = uft_item,
	.end = uft_end,
	.free = uft_free,
};
