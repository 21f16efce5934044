/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * info trace: where traces go and how, the writeout and the ring pool,
 * the snapshot triggers with their counts (cmd-trigger.c), and every
 * session with its rings: events, fill, losses by cause
 * (counted, and those the ring's header says no LOST record reported
 * yet), then the sessions that ended lately.  A session with many
 * threads shows its busiest few; 'info session ID' has each.  Loop
 * thread.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "clock.h"
#include "cmd.h"
#include "config.h"
#include "dclock.h"
#include "outdir.h"
#include "pipeline.h"
#include "pool.h"
#include "quota.h"
#include "session.h"
#include "trigger.h"

/* Sessions with at most this many threads list each in info trace. */
#define INFO_THREADS_SHOWN	8
/* Busiest threads shown of a session with more. */
#define INFO_THREADS_TOP	5

/*
 * What one ring says now (struct ring_now, cmd.h): losses by cause, the
 * counted ones and those its header says no LOST record reported yet,
 * its size and fill.
 */
void
ring_now(const struct sring *rg, struct ring_now *n)
{
	uint64_t size, head = 0, tail = 0, d, rec;
	uint32_t order = rg->order, o;
	int i;

	memcpy(n->lost, rg->lost, sizeof(n->lost));
	if (rg->p.hdr != NULL) {
		/*
		 * The ring's size, head and tail, from its header: client
		 * memory, so checked (a size the drain thread did not see
		 * yet, up to the most the ring may have; only this ring's
		 * line can be wrong).
		 */
		o = __atomic_load_n(&rg->p.hdr->order, __ATOMIC_RELAXED);
		if (o >= rg->order && o <= rg->p.max_order)
			order = o;
		head = __atomic_load_n(&rg->p.hdr->head, __ATOMIC_RELAXED);
		tail = __atomic_load_n(&rg->p.hdr->tail, __ATOMIC_RELAXED);
		/* Losses no LOST record reported yet count too (a total
		 * that went backwards is no loss). */
		for (i = 0; i < TRACED_DROP_PRODUCER_NCAUSES &&
		    !rg->books_closed; i++) {
			d = __atomic_load_n(&rg->p.hdr->dropped[i],
			    __ATOMIC_RELAXED);
			rec = __atomic_load_n(&rg->p.hdr->recorded[i],
			    __ATOMIC_RELAXED);
			if (d > rec && d - rec < (UINT64_C(1) << 48))
				n->lost[i] += d - rec;
		}
	}
	size = traced_ring_size(order);
	n->size = size;
	n->fill = head >= tail && head - tail <= size ?
	    (head - tail) * 100 / size : 0;
	n->total_lost = 0;
	for (i = 0; i < TRACED_DROP_NCAUSES; i++)
		n->total_lost += n->lost[i];
}

void
session_now(const struct session *s, uint64_t *events,
    uint64_t lost[TRACED_DROP_NCAUSES])
{
	const struct sring *rg;
	struct ring_now n;
	int i;

	*events = 0;
	memset(lost, 0, TRACED_DROP_NCAUSES * sizeof(*lost));
	lost[TRACED_DROP_DISCONNECTED] = s->lost_disconnected;
	TAILQ_FOREACH(rg, &s->rings, entry) {
		ring_now(rg, &n);
		*events += rg->events;
		for (i = 0; i < TRACED_DROP_NCAUSES; i++)
			lost[i] += n.lost[i];
	}
}

static const char *
ring_state(const struct sring *rg)
{
	return rg->quarantined ? "refused" : rg->finished ? "finished" :
	    "active";
}

static void
info_ring(struct reply *r, const struct session *s, const struct sring *rg)
{
	struct ring_now n;
	char causes[256];

	ring_now(rg, &n);
	if (reply_json(r)) {
		reply_item(r, json_pack("{s:s, s:I, s:i, s:I, s:I, s:I, s:I, "
		    "s:I, s:o, s:I, s:s, s:o, s:b, s:I}", "type", "ring",
		    "session", (json_int_t)s->id, "tid", (int)rg->tid, "size",
		    (json_int_t)n.size, "fill_percent",
		    (json_int_t)n.fill, "events", (json_int_t)rg->events,
		    "bytes", (json_int_t)rg->bytes, "lost",
		    (json_int_t)n.total_lost, "lost_by_cause",
		    jcauses(n.lost), "lost_records",
		    (json_int_t)rg->lost_records, "state", ring_state(rg),
		    "stream", jstr(rg->stream_path), "write_error",
		    rg->write_errno != 0, "max_size",
		    (json_int_t)traced_ring_size(rg->p.max_order)));
		return;
	}
	format_causes(causes, sizeof(causes), n.lost);
	reply_line(r, "    thread %-7d ring %6" PRIu64 " KiB (of %" PRIu64 ") %3"
	    PRIu64 "%% full  events %" PRIu64 "  lost %" PRIu64 "%s%s%s%s%s%s",
	    (int)rg->tid, n.size / 1024,
	    traced_ring_size(rg->p.max_order) / 1024, n.fill,
	    rg->events, n.total_lost, n.total_lost ? " (" : "", causes,
	    n.total_lost ? ")" : "",
	    rg->quarantined ? "  REFUSED (bad ring contents)" : "",
	    rg->finished ? "  finished" : "",
	    rg->write_errno ? "  WRITE ERROR" : "");
	if (rg->write_errno)
		reply_line(r, "      cannot write %s: %s", rg->stream_path ?
		    rg->stream_path : "(no file)", strerror(rg->write_errno));
}

static int
ring_busier(const void *a, const void *b)
{
	const struct sring *x = *(const struct sring *const *)a;
	const struct sring *y = *(const struct sring *const *)b;

	return x->events < y->events ? 1 : x->events > y->events ? -1 : 0;
}

/*
 * A session with many threads, for people: the busiest few, and the
 * rest summed up in one line.  The details are in info session ID.
 */
static void
info_threads_summary(struct reply *r, const struct session *s)
{
	const struct sring **rs, *rg;
	struct ring_now n;
	uint64_t events = 0, lost = 0, all[TRACED_DROP_NCAUSES] = { 0 };
	uint32_t i = 0, k, finished = 0, refused = 0;
	char causes[256];
	int c;

	if ((rs = calloc(s->nrings, sizeof(*rs))) == NULL)
		return;
	TAILQ_FOREACH(rg, &s->rings, entry)
		if (i < s->nrings)
			rs[i++] = rg;
	qsort(rs, i, sizeof(*rs), ring_busier);
	for (k = 0; k < i && k < INFO_THREADS_TOP; k++)
		info_ring(r, s, rs[k]);
	for (; k < i; k++) {
		ring_now(rs[k], &n);
		events += rs[k]->events;
		lost += n.total_lost;
		for (c = 0; c < TRACED_DROP_NCAUSES; c++)
			all[c] += n.lost[c];
		finished += rs[k]->finished;
		refused += rs[k]->quarantined;
	}
	format_causes(causes, sizeof(causes), all);
	reply_line(r, "    ... %u more threads (%u finished%s): events %"
	    PRIu64 "  lost %" PRIu64 "%s%s%s; each thread: 'tracectl info "
	    "session %u'", i - INFO_THREADS_TOP, finished, refused ?
	    ", some REFUSED" : "", events, lost, lost ? " (" : "", causes,
	    lost ? ")" : "", s->id);
	free(rs);
}

/* The sessions that ended lately, with their final counts. */
static void
info_ended(struct reply *r)
{
	const struct ended_session *e;
	uint64_t events, lost, all[TRACED_DROP_NCAUSES];
	char causes[256];
	uint32_t i;
	int c;

	if (!reply_json(r) && !TAILQ_EMPTY(&ended_sessions))
		reply_line(r, "ended lately (the last %d; 'tracectl info "
		    "sessions' has them all):", ENDED_KEEP);
	TAILQ_FOREACH(e, &ended_sessions, entry) {
		if (reply_json(r)) {
			reply_item(r, json_pack("{s:s, s:I, s:i, s:I, s:o, "
			    "s:o, s:I, s:o, s:o}", "type", "ended_session",
			    "session", (json_int_t)e->id, "pid", (int)e->pid,
			    "uid", (json_int_t)e->uid, "comm", jstr(e->comm),
			    "dir", jstr(e->dir), "lost_before_connect",
			    (json_int_t)e->lost_disconnected, "started_ns",
			    jns(e->started), "ended_ns", jns(e->ended_at)));
			for (i = 0; i < e->nthreads; i++) {
				const struct ended_thread *t = &e->threads[i];

				lost = 0;
				for (c = 0; c < TRACED_DROP_NCAUSES; c++)
					lost += t->lost[c];
				reply_item(r, json_pack("{s:s, s:I, s:i, s:I, "
				    "s:I, s:o, s:I, s:I, s:I}", "type", "ended_ring",
				    "session", (json_int_t)e->id, "tid",
				    (int)t->tid, "events",
				    (json_int_t)t->events, "lost",
				    (json_int_t)lost, "lost_by_cause",
				    jcauses(t->lost), "lost_records",
				    (json_int_t)t->lost_records, "ring_size",
				    (json_int_t)t->ring_size, "ring_max",
				    (json_int_t)t->ring_max));
			}
			continue;
		}
		events = 0;
		memset(all, 0, sizeof(all));
		all[TRACED_DROP_DISCONNECTED] = e->lost_disconnected;
		for (i = 0; i < e->nthreads; i++) {
			events += e->threads[i].events;
			for (c = 0; c < TRACED_DROP_NCAUSES; c++)
				all[c] += e->threads[i].lost[c];
		}
		lost = format_causes(causes, sizeof(causes), all);
		reply_line(r, "  session %u: %s[%d] uid %u, %u thread%s, events "
		    "%" PRIu64 "  lost %" PRIu64 "%s%s%s  %s", e->id, e->comm,
		    (int)e->pid, (unsigned)e->uid, e->nthreads,
		    e->nthreads == 1 ? "" : "s", events, lost,
		    lost ? " (" : "", causes, lost ? ")" : "",
		    e->dir ? e->dir : "-");
	}
}

/* A uid's bytes in the trace directory, against its quota (quota.c). */
static void
info_quota(void *arg, uid_t uid, uint64_t held, int over)
{
	struct reply *r = arg;

	if (reply_json(r)) {
		reply_item(r, json_pack("{s:s, s:I, s:I, s:I, s:b}", "type",
		    "quota", "uid", (json_int_t)uid, "held", (json_int_t)held,
		    "quota", (json_int_t)quota_limit(), "over", over));
		return;
	}
	reply_line(r, "trace directory: uid %u holds %" PRIu64 " MiB of its "
	    "%" PRIu64 " MiB quota%s", (unsigned)uid, held >> 20,
	    quota_limit() >> 20, over ? " (over: its events are counted as "
	    "lost, not written)" : "");
}

int
cmd_info_trace_exec(struct reply *r, int argc, char **argv)
{
	const struct session *s;
	const struct sring *rg;
	struct pool_stats ps;
	unsigned nsessions = 0;
	uint64_t all[TRACED_DROP_NCAUSES], wdirect, wcached;
	char causes[256];

	(void)argc;
	(void)argv;
	TAILQ_FOREACH(s, &sessions, entry)
		nsessions++;
	writeout_written(&wdirect, &wcached);
	pool_stats(&ps);
	if (reply_json(r))
		reply_item(r, json_pack("{s:s, s:o, s:s, s:I, s:i, s:s, s:I, "
		    "s:I, s:I, s:I, s:s, s:I}", "type", "trace", "trace_dir",
		    jstr(outdir_path()), "state", outdir_paused() ? "off" : "on",
		    "writeout_threads", (json_int_t)writeout_nworkers(),
		    "writeout_nice", cfg.writeout_nice,
		    "direct_io", cfg.direct_io ? "on" : "off",
		    "written_direct", (json_int_t)wdirect,
		    "written_cached", (json_int_t)wcached,
		    "drain_interval_ms", (json_int_t)cfg.drain_ms,
		    "default_ring_size",
		    (json_int_t)traced_ring_size(cfg.ring_order), "clock",
		    traced_clock_use_tsc() && dclock_have_tsc() ? "tsc" :
		    "monotonic", "sessions", (json_int_t)nsessions));
	else {
		reply_line(r, "trace file: %s (%s)", outdir_path(),
		    outdir_paused() ? "off: paused" : "on");
		reply_line(r, "writeout: %u threads (nice %d, direct I/O %s), "
		    "drain every %u ms; default ring %" PRIu64 " KiB per "
		    "thread (from %" PRIu64 " KiB, growing when busy); "
		    "clock %s", writeout_nworkers(), cfg.writeout_nice,
		    cfg.direct_io ? "on" : "off", cfg.drain_ms,
		    traced_ring_size(cfg.ring_order) / 1024,
		    traced_ring_size(cfg.ring_order < TRACED_RING_ORDER_INIT ?
		    cfg.ring_order : TRACED_RING_ORDER_INIT) / 1024,
		    dclock_have_tsc() ? "tsc (monotonic for processes that ask)" :
		    "monotonic");
		reply_line(r, "written: %" PRIu64 " MB directly to the disk, "
		    "%" PRIu64 " MB through the page cache", wdirect / 1000000,
		    wcached / 1000000);
		if (ps.want > 0 || ps.ready > 0)
			reply_line(r, "ring pool: %u of %u rings of %" PRIu64
			    " KiB ready%s, for uid %u; %" PRIu64 " made "
			    "(%" PRIu64 " MiB in 2 MiB pages, %" PRIu64 " MiB "
			    "in 4 KiB), %" PRIu64 " given", ps.ready, ps.want,
			    traced_ring_size(ps.order) / 1024, ps.making ?
			    ", making one" : "", (unsigned)geteuid(), ps.made,
			    ps.huge_bytes >> 20, ps.small_bytes >> 20,
			    ps.given);
		quota_foreach(info_quota, r);
		if (trigger_count() > 0)
			reply_line(r, "snapshot triggers: %zu",
			    trigger_count());
		cmd_trigger_list(r, "  ");
		reply_line(r, "sessions: %u", nsessions);
	}
	if (reply_json(r)) {
		quota_foreach(info_quota, r);
		cmd_trigger_list(r, "");
	}
	if (reply_json(r))
		reply_item(r, json_pack("{s:s, s:I, s:I, s:I, s:b, s:I, s:I, "
		    "s:I, s:I, s:I}", "type", "ring_pool", "want",
		    (json_int_t)ps.want, "ready", (json_int_t)ps.ready,
		    "ring_size", (json_int_t)traced_ring_size(ps.order),
		    "making", ps.making, "uid", (json_int_t)geteuid(),
		    "made", (json_int_t)ps.made, "given",
		    (json_int_t)ps.given, "huge_bytes",
		    (json_int_t)ps.huge_bytes, "small_bytes",
		    (json_int_t)ps.small_bytes));
	TAILQ_FOREACH(s, &sessions, entry) {
		uint64_t ev, lost;

		session_now(s, &ev, all);
		lost = format_causes(causes, sizeof(causes), all);
		if (reply_json(r))
			reply_item(r, json_pack("{s:s, s:I, s:i, s:I, s:o, "
			    "s:o, s:I, s:I, s:I, s:I, s:s, s:o, s:I, s:I, "
			    "s:o, s:o}", "type", "session", "session",
			    (json_int_t)s->id, "pid", (int)s->pid, "uid",
			    (json_int_t)s->uid, "comm", jstr(s->comm), "dir",
			    jstr(s->dir), "rings", (json_int_t)s->nrings,
			    "events", (json_int_t)ev, "lost", (json_int_t)lost,
			    "lost_before_connect",
			    (json_int_t)s->lost_disconnected, "state",
			    s->closing ? "ending" : "connected",
			    "lost_by_cause", jcauses(all),
			    "refused_rings", (json_int_t)s->refused_rings,
			    "refused_providers",
			    (json_int_t)s->refused_providers,
			    "metadata_error", s->meta_errno != 0 ?
			    jstr(strerror(s->meta_errno)) : json_null(),
			    "started_ns", jns(s->started)));
		else {
			reply_line(r, "  session %u: %s[%d] uid %u, %u "
			    "thread%s%s", s->id, s->comm, (int)s->pid,
			    (unsigned)s->uid, s->nrings, s->nrings == 1 ? "" :
			    "s", s->closing ? " (ended, draining)" : "");
			reply_line(r, "    dir %s", s->dir ? s->dir :
			    "(none yet: no provider or thread)");
			reply_line(r, "    events %" PRIu64 "  lost %" PRIu64
			    "%s%s%s%s", ev, lost, lost ? " (" : "", causes,
			    lost ? ")" : "", s->lost_disconnected ?
			    "; some while no daemon ran" : "");
			if (s->meta_errno != 0)
				reply_line(r, "    METADATA NOT WRITTEN: %s; "
				    "tried again every %u ms, its rings wait",
				    strerror(s->meta_errno), cfg.drain_ms);
			if (s->refused_rings || s->refused_providers)
				reply_line(r, "    REFUSED by a limit: %u "
				    "thread%s (not traced, not counted), %u "
				    "provider%s; see the daemon's log",
				    s->refused_rings, s->refused_rings == 1 ?
				    "" : "s", s->refused_providers,
				    s->refused_providers == 1 ? "" : "s");
		}
		if (reply_json(r) || s->nrings <= INFO_THREADS_SHOWN)
			TAILQ_FOREACH(rg, &s->rings, entry)
				info_ring(r, s, rg);
		else
			info_threads_summary(r, s);
	}
	info_ended(r);
	cmd_recorder_info(r);
	return TRACED_CTL_OK;
}
