/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * The drain thread: reads every ring, validates what it read and hands
 * it to the writers as CTF packets (writeout.c has the whole pipeline).
 *
 * DESIGN
 *
 * When.  Each ring is visited on a schedule of its own: the drain
 * thread measures how fast the ring fills and comes back when it should
 * be a quarter full (at most every DRAIN_PERIOD_MIN, at least every
 * drain interval, so that a quiet thread's events reach the disk too).
 * A producer that finds its ring half full asks for a drain (NOTIFY),
 * which makes the ring's visit immediate; a ring is also read at once
 * when its thread exits, its process ends or a flush asks.  Waking up
 * to a timer costs less than a wakeup chain through the producer, its
 * connection thread and the loop, and it happens before the ring is in
 * danger rather than after.
 *
 * How.  A visit loads head (acquire; pairs with the producer's release
 * in traced_commit()), then the ring's order, checks both against what
 * it knew (head never goes back nor more than the ring ahead; the order
 * only grows, up to the most the memfd holds), and copies the new bytes
 * out, a lap at a time, into a packet in a staging arena, checking
 * every record (recwalk.h).  That copy is what was checked and what
 * the writer writes: the client can no longer change it.  A young ring
 * is copied with pread() on its memfd, which maps nothing, and then
 * checked; once it has lapped twice (a busy ring, likely to stay) or
 * was passed on to a new thread (the pool of short threads), it is
 * read through a read-only mapping of its data area by recwalk_copy(),
 * which checks each record as it copies it: the ring is read once and
 * the copy written once, around the cache (at 8 M events/s, 24 % less
 * of the daemon's CPU than a memcpy and a walk of the copy), and the
 * dear first touch of each page of the mapping (a virtual machine's)
 * is paid once for many laps or threads.
 *
 * A ring that holds less than TRACED_RING_HOLD_NS of its thread's events
 * gets the grow hint in its header: its producer grows it at a lap end
 * that allows it, so that busy rings are visited every few
 * milliseconds, in large reads, rather than often in small ones, and
 * ride out the tens of milliseconds this thread may wait for a CPU on
 * a busy machine (51 and 62 ms seen next to two busy loops: a 1 MiB
 * ring at 500,000 events/s holds 31).  A record must not
 * cross a lap end, PAD records are skipped (they never reach a file),
 * and whatever fails a check ends the ring (END_INVALID): nothing from
 * the bad record on is written, and the ring is never read again.
 * The new tail is published (release; pairs with the producer's
 * acquire when its cached tail says full) as soon as a packet is
 * copied and checked, before it is written.
 *
 * Losses.  When a ring's ring-full count went up since the last visit,
 * the drain thread notes what it saw meanwhile (writeout.h LOSS_SAW_*):
 * it came late itself, or staging was full because the writers were
 * waiting on the disk or short of CPU; otherwise the ring simply filled
 * between two visits on time.  The next packet with the LOST record
 * carries that to the loop thread, whose warning names it.
 *
 * Metadata first.  A stream must never hold an event its directory's
 * metadata does not describe.  The owner says what the metadata covers
 * in the ring's feed (pipeline.h; the session layer publishes it,
 * meta.c session_drain_publish()): until the feed says go, no ring of
 * it is read, and records are checked against the event table the
 * metadata describes (feed.tab).  A record of a provider that
 * registered since (it is in the feed's newest table) ends the packet
 * before it and waits in the ring until the metadata catches up.
 *
 * Only this thread touches pring.rd, from writeout_add() to the ring's
 * END; the rest of a ring it reads is immutable, except what the owner
 * publishes in the feed (go, tab, newest), which it loads with acquire
 * (the owner stores with release).
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "recwalk.h"
#include "worker.h"
#include "writeout.h"

/* The most often one ring is visited. */
#define DRAIN_PERIOD_MIN	(250 * UINT64_C(1000))		/* ns */
/* A ring whose owner used up its share of staging: visited again after
 * this (writeout.c staging_share_ok()). */
#define DRAIN_HELD_WAIT		(5 * UINT64_C(1000000))		/* ns */
/* A new ring is visited this often at first, DRAIN_YOUNG_VISITS times. */
#define DRAIN_YOUNG_PERIOD	(1000 * UINT64_C(1000))		/* ns */
#define DRAIN_YOUNG_VISITS	20
/* A visit this much after its time, and after a ring's whole fill
 * time, came late because the thread did not run. */
#define DRAIN_LATE_MIN		(2 * UINT64_C(1000000))		/* ns */
/*
 * THREAD markers of one ring on their way to the loop at most: a new
 * thread costs the loop some work (sring.c sring_handover()), and a
 * client that writes nothing but THREAD records must not keep this
 * thread, which reads every client's rings, or the loop busy.
 */
#define DRAIN_HANDOVERS_MAX	32
/*
 * The first read of a packet of a ring that short threads pass on: a
 * packet stops at the next THREAD record, so reading all that is there
 * each time (up to CHUNK_CONTENT_MAX) would read what n short threads
 * left about n/2 times over.  A packet's reads double from this size.
 */
#define DRAIN_READ_FIRST	4096u
/* A packet of this much (or half the ring) from one thread: a thread
 * that stays, whose packets are read whole again. */
#define DRAIN_READ_STAYS	(64u << 10)
/*
 * What one visit reads goes to the writers in batches (wo_hold()) of
 * at most this many chunks or bytes: one wakeup of a writer and, with
 * direct I/O, one write of up to DRAIN_HOLD_BYTES (stream.c).  The
 * daemon's CPU per event at 8 M events/s (medians of six 5 s runs):
 * 9.5 ns with 1 MiB chunks handed over as they came and written 1 MiB
 * at a time, 8.0 written up to 4 MiB at a time, 7.0 in batches too.
 */
#define DRAIN_HOLD_MAX		32
#define DRAIN_HOLD_BYTES	(4u << 20)

/* The drain thread's own state. */
static struct {
	struct pring_tailq rings;	/* by rd.entry */
	uint64_t	*counts;	/* scratch for recwalk, by class */
	uint32_t	*touched;
	uint32_t	 ncap;		/* entries of both */
	uint64_t	 interval;	/* ns */
	uint64_t	 flush_gen;
	uint64_t	 all_gen;
	uint64_t	 all_seen;
	uint64_t	 late;		/* this wakeup came that late, ns */
} dr;

static uint64_t
mono_ns(void)
{
	return now_ns(CLOCK_MONOTONIC);
}

static int	drain_end(struct pring *r, enum chunk_end how, const char *why,
	    uint64_t at);
static int	drain_thread(struct pring *r);

static const uint8_t no_uuid[16];

/*
 * The event table the feed's metadata describes now (the owner
 * publishes it, release).
 */
static const struct evtab *
drain_evtab(const struct pring *r)
{
	return __atomic_load_n(&r->feed->tab, __ATOMIC_ACQUIRE);
}

/*
 * Is the record at p (a whole header) of an event the metadata does not
 * describe yet, but the session knows: to wait in the ring, not refuse?
 */
static int
drain_pending(const struct pring *r, const struct evtab *et,
    const uint8_t *p)
{
	const struct evtab *newest;
	uint32_t id, i, hint = 0;

	memcpy(&id, p, sizeof(id));
	if (id < TRACED_EVENT_ID_BASE)
		return 0;
	i = id - TRACED_EVENT_ID_BASE;
	if (et != NULL && recwalk_find(et->ranges, et->nranges, i,
	    &hint) != NULL)
		return 0;
	newest = __atomic_load_n(&r->feed->newest, __ATOMIC_ACQUIRE);
	return newest != NULL && recwalk_find(newest->ranges,
	    newest->nranges, i, &hint) != NULL;
}

/* Room in the scratch counters for 'n' classes, keeping what they hold. */
static void
drain_scratch(uint32_t n)
{
	uint64_t *c;
	uint32_t *t;

	if (n <= dr.ncap)
		return;
	c = reallocarray(dr.counts, n, sizeof(*c));
	if (c != NULL)
		dr.counts = c;
	t = reallocarray(dr.touched, n, sizeof(*t));
	if (t != NULL)
		dr.touched = t;
	if (c == NULL || t == NULL) {
		log_warn("drain: counters for %u events", n);
		return;
	}
	memset(c + dr.ncap, 0, (n - dr.ncap) * sizeof(*c));
	dr.ncap = n;
}

/*
 * Set up w to walk r with event table et (NULL: no event is known).
 * Without counters for every class (out of memory) it walks without
 * counting; the index then misses the per-event counts.
 */
static void
drain_walker(struct recwalk *w, const struct pring *r,
    const struct evtab *et)
{
	const struct dclock *clk = dclock_get(r->feed->clock);

	if (et != NULL)
		drain_scratch(et->nclasses);
	w->ranges = et != NULL ? et->ranges : NULL;
	w->nranges = et != NULL ? et->nranges : 0;
	w->counts = NULL;
	w->touched = NULL;
	if (et != NULL && et->nclasses <= dr.ncap) {
		w->counts = dr.counts;
		w->touched = dr.touched;
	}
	/*
	 * Times more than a minute ahead of the clock are refused: read
	 * as a date, such a time overflows readers and would make the
	 * whole trace directory unreadable.
	 */
	w->max_ts = now_ticks(r->feed->clock) + 60 * clk->freq;
}

/*
 * Fill one packet from [rd.tail, head): as many records as fit in
 * CHUNK_CONTENT_MAX bytes, a lap at a time, or in reads that double
 * from DRAIN_READ_FIRST (a passed-on ring); a record a read cuts is
 * read again whole.  Returns 1 with the packet queued, 2 if there was
 * nothing to put in one (only padding), 3 if it stopped at a record
 * that waits for its metadata (what came before it queued), 4 if it
 * stopped at a THREAD record (the same; rd.tail is the record,
 * rd.handover what it says), 0 if staging is full (nothing read), or
 * -1 if the ring was ended (a record failed a check).
 */
static int
drain_packet(struct pring *r, uint64_t head)
{
	struct pring_rd *rd = &r->rd;
	uint64_t mask = traced_ring_size(rd->order) - 1, lap, end, n;
	const struct evtab *et = drain_evtab(r), *et2;
	size_t room = head - rd->tail, used = 0, step;
	const char *why, *bad;
	struct recwalk w;
	struct ctf_packet pk;
	struct chunk *c;
	uint32_t i, tail_pad = 0;
	uint8_t *buf;
	int have_ts = 0, retried = 0, rc = 1, cut;
	long len;
	ssize_t got;

	if (room > CHUNK_CONTENT_MAX)
		room = CHUNK_CONTENT_MAX;
	c = wo_chunk_new(r, room);
	if (c == NULL)
		return 0;
	buf = c->pkt + CTF_PACKET_HDR_SIZE;
	memset(&w, 0, sizeof(w));
	drain_walker(&w, r, et);
	step = rd->handed ? DRAIN_READ_FIRST : room;
	while (rd->tail < head && used < room) {
		lap = traced_ring_lap_end(rd->tail, rd->order);
		end = head < lap ? head : lap;
		if (end - rd->tail > room - used)
			end = rd->tail + (room - used);
		cut = end - rd->tail > step;
		if (cut)
			end = rd->tail + step;
		if (step < room)
			step *= 2;
		n = end - rd->tail;
		w.pos = rd->tail;
		w.last_ts = rd->last_ts;
		if (rd->map != NULL)
			len = recwalk_copy(&w, buf + used,
			    rd->map + (rd->tail & mask), (size_t)n);
		else {
			got = pread(r->ring_fd, buf + used, (size_t)n,
			    (off_t)(TRACED_RING_HDR_SIZE + (rd->tail & mask)));
			if (got != (ssize_t)n) {
				why = got == -1 ? "cannot read the ring" :
				    "ring memory shorter than it says";
				goto invalid;
			}
			len = recwalk(&w, buf + used, (size_t)n);
		}
		bad = NULL;
		if (len < 0) {
			len = (long)w.invalid_off;	/* the valid prefix */
			bad = w.invalid;
		}
		if (len > 0) {
			if (!have_ts) {
				c->ts_first = w.first_ts;
				have_ts = 1;
			}
			tail_pad = w.tail_pad;
			rd->last_ts = w.last_ts;
		}
		used += (size_t)len;
		rd->tail += (uint64_t)len;
		if (bad != NULL) {
			/* A provider that registered after we loaded the
			 * table (its events may follow at once): once more,
			 * with the table it brought. */
			if (!retried && (et2 = drain_evtab(r)) != et) {
				et = et2;
				retried = 1;
				drain_walker(&w, r, et);
				continue;
			}
			/* Or one the metadata does not describe yet. */
			if (end - rd->tail >= TRACED_REC_HDR_SIZE &&
			    drain_pending(r, et, buf + used)) {
				rd->pending = 1;
				rc = 3;
				break;
			}
			why = bad;
			goto invalid;
		}
		if (w.thread != 0) {
			/* Its thread's last record was before it. */
			rd->handover = w.next;
			rc = 4;
			break;
		}
		if (w.pad != 0) {
			rd->tail += w.pad;
			continue;
		}
		if ((uint64_t)len == n || cut)
			continue;	/* (a cut record: again, whole) */
		/* A record that does not end inside what was read. */
		if (end == head) {
			why = "record runs past the committed head";
			goto invalid;
		}
		if (end == lap) {
			why = "record runs past the end of the ring";
			goto invalid;
		}
		break;			/* the packet is full */
	}
	/* A big packet without a THREAD record: a thread that stays. */
	if (rc == 1 && (used >= DRAIN_READ_STAYS ||
	    used >= traced_ring_size(rd->order) / 2))
		rd->handed = 0;
	/* Pairs with the producer's load-acquire of tail. */
	__atomic_store_n(&r->hdr->tail, rd->tail, __ATOMIC_RELEASE);
	if (used == 0) {
		wo_chunk_cancel(c);
		return rc == 3 || rc == 4 ? rc : 2;
	}
	wo_chunk_commit(c, used);
	c->order = rd->order;
	c->events = w.events;
	rd->events += w.events;
	rd->bytes += used;
	c->lost_records = w.lost_records;
	c->discarded = w.discarded;
	c->crashes = w.crashes;
	memcpy(c->lost, w.lost, sizeof(c->lost));
	if (w.lost[TRACED_DROP_RING_FULL] > 0) {
		c->why = rd->why;
		c->late_ms = rd->late_ms;
		rd->why = 0;
		rd->late_ms = 0;
	}
	if (w.ntouched > CHUNK_COUNTS_INLINE &&
	    (c->counts = calloc(w.ntouched, sizeof(*c->counts))) == NULL)
		c->counts = c->inline_counts;	/* the index misses some */
	for (i = 0; i < w.ntouched; i++) {
		uint32_t k = w.touched[i];

		if (c->counts != c->inline_counts ||
		    i < CHUNK_COUNTS_INLINE) {
			c->counts[c->ncounts].cls = k;
			c->counts[c->ncounts].n = w.counts[k] &
			    ~RECWALK_TOUCHED;
			c->ncounts++;
		}
		w.counts[k] = 0;
	}
	/* The writer puts in the uuid of the file it goes to. */
	memset(&pk, 0, sizeof(pk));
	pk.uuid = no_uuid;
	pk.stream_instance_id = r->instance;
	pk.ts_begin = c->ts_first;
	pk.ts_end = rd->last_ts;
	pk.content_bytes = CTF_PACKET_HDR_SIZE + used;
	pk.tid = (uint32_t)rd->tid;
	c->tid = rd->tid;
	pk.tail_pad = tail_pad;
	ctf_packet_header(c->pkt, &pk);	/* seq, discarded: the writer's */
	wo_chunk_queue(c);
	return rc;

invalid:
	/* Nothing of this packet is written, nor the ring read again. */
	for (i = 0; i < w.ntouched && w.counts != NULL; i++)
		w.counts[w.touched[i]] = 0;
	wo_chunk_cancel(c);
	if (drain_end(r, END_INVALID, why, rd->tail) == -1)
		log_warnx("drain: out of memory ending a refused ring");
	return -1;
}

/*
 * End the ring: its last chunk, after everything read.  Removes it from
 * the drain thread's list; the ring is no longer touched here.  For
 * END_FINISHED and END_CLOSED, losses no LOST record will report go
 * with it (client memory: a total that went backwards is no loss).
 * 0, or -1 when out of memory (try again later).
 */
static int
drain_end(struct pring *r, enum chunk_end how, const char *why,
    uint64_t at)
{
	struct chunk *c;
	uint64_t d, rec;
	int i;

	c = wo_marker_new(r, CHUNK_END);
	if (c == NULL)
		return -1;
	c->how = how;
	c->invalid = why;
	c->invalid_at = at;
	c->order = r->rd.order;
	c->last_ts = r->rd.last_ts;
	c->tid = r->rd.tid;
	if (how != END_INVALID)
		for (i = 0; i < TRACED_DROP_PRODUCER_NCAUSES; i++) {
			d = __atomic_load_n(&r->hdr->dropped[i],
			    __ATOMIC_RELAXED);
			rec = __atomic_load_n(&r->hdr->recorded[i],
			    __ATOMIC_RELAXED);
			if (d > rec && d - rec < (UINT64_C(1) << 48))
				c->unrecorded[i] = d - rec;
		}
	if (c->unrecorded[TRACED_DROP_RING_FULL] > 0) {
		c->why = r->rd.why;
		c->late_ms = r->rd.late_ms;
	}
	if (r->rd.map != NULL)
		munmap((void *)(uintptr_t)r->rd.map,
		    (size_t)traced_ring_size(r->max_order));
	r->rd.map = NULL;
	/* No thread may take it in-band any more (proto/ring.h). */
	__atomic_store_n(&r->hdr->reading, 0, __ATOMIC_RELAXED);
	/*
	 * Its thread gone and every byte read: the library may give the ring
	 * to another thread (proto/ring.h, Reuse).  Pairs with its acquire.
	 */
	if (how == END_FINISHED)
		__atomic_store_n(&r->hdr->released, 1, __ATOMIC_RELEASE);
	TAILQ_REMOVE(&dr.rings, r, rd.entry);
	wo_share_ring(r->feed->share, -1);
	wo_chunk_queue(c);
	return 0;
}

/*
 * rd.tail is a THREAD record (rd.handover): a new thread goes on in the
 * ring from here (proto/ring.h, Handover).  Its packets name it, and a
 * marker tells the loop, after the last chunk of the thread before,
 * to close that thread's books (sring.c sring_handover()).  0, or -1
 * when out of memory (the record is read again later).
 */
static int
drain_thread(struct pring *r)
{
	struct pring_rd *rd = &r->rd;
	struct chunk *c;

	if ((c = wo_marker_new(r, CHUNK_THREAD)) == NULL)
		return -1;
	c->next = rd->handover;
	c->order = rd->order;
	__atomic_add_fetch(&r->handovers_out, 1, __ATOMIC_RELAXED);
	rd->tid = (pid_t)rd->handover.tid;
	rd->handed = 1;
	wo_hold(r, 1);		/* until the visit ends (drain_visit()) */
	rd->tail += TRACED_THREAD_REC_SIZE;
	/* Pairs with the producer's load-acquire of tail. */
	__atomic_store_n(&r->hdr->tail, rd->tail, __ATOMIC_RELEASE);
	wo_chunk_queue(c);
	return 0;
}

/*
 * What the drain thread saw that could have let r fill up, since its
 * last visit (LOSS_SAW_*).
 */
static unsigned
drain_saw(struct pring *r, uint64_t now)
{
	struct pring_rd *rd = &r->rd;
	uint64_t since, end, size = traced_ring_size(rd->order), fill_ns;
	unsigned why = 0, staging;

	/* Staging was full at some time since the last visit. */
	pthread_mutex_lock(&wo_global->lock);
	since = wo_global->full_since;
	end = wo_global->full_end;
	staging = wo_global->full_why;
	pthread_mutex_unlock(&wo_global->lock);
	if (since != 0 && (end == 0 || end >= rd->seen_at))
		why |= staging;
	/* Staging refused to this ring itself: its owner's part was
	 * used up, or other owners held it all. */
	why |= rd->pressure;
	if (why & LOSS_SAW_SHARE)	/* its own part: that says it all */
		why &= ~(LOSS_SAW_DISK | LOSS_SAW_WRITERS | LOSS_SAW_OTHERS);
	if (rd->order >= r->max_order)
		why |= LOSS_SAW_MAX_SIZE;
	/*
	 * A ring that at its largest holds less than two of our shortest
	 * periods fills up however punctually it is visited: too small,
	 * whether or not we were also late.
	 */
	fill_ns = rd->rate > 0 ? size * UINT64_C(1000000000) / rd->rate :
	    UINT64_MAX;
	if ((why & LOSS_SAW_MAX_SIZE) && fill_ns < 2 * DRAIN_PERIOD_MIN)
		why |= LOSS_SAW_TOO_SMALL;
	/* Late: after its time by more than the ring takes to fill (a
	 * ring not visited yet has no time: not late, new). */
	if (rd->seen_at != 0 && now > rd->next &&
	    now - rd->next > DRAIN_LATE_MIN &&
	    (rd->rate == 0 || now - rd->next > fill_ns / 2)) {
		why |= LOSS_SAW_LATE;
		if ((now - rd->next) / 1000000 > rd->late_ms)
			rd->late_ms = (unsigned)((now - rd->next) / 1000000);
	}
	return why;
}

/* Plan r's next visit, from how fast it fills.  */
static void
drain_plan(struct pring *r, uint64_t now, uint64_t fill)
{
	struct pring_rd *rd = &r->rd;
	uint64_t quarter = traced_ring_size(rd->order) / 4, wait;

	if (rd->pending) {
		/* Until the metadata catches up (the loop kicks us). */
		rd->next = now + dr.interval;
		return;
	}
	if (rd->held) {
		rd->held = 0;
		rd->next = now + DRAIN_HELD_WAIT;
		return;
	}
	if (rd->urgent) {
		rd->next = now + DRAIN_PERIOD_MIN;
		return;
	}
	wait = dr.interval;
	if (rd->young > 0) {
		/* How fast does a new ring fill?  Look often at first. */
		rd->young--;
		wait = DRAIN_YOUNG_PERIOD;
	}
	if (rd->rate > 0 && fill < quarter) {
		uint64_t t = (quarter - fill) * UINT64_C(1000000000) /
		    rd->rate;

		if (t < wait)
			wait = t;
	} else if (rd->rate > 0)
		wait = 0;
	if (rd->data_since != 0 && rd->data_since + dr.interval < now + wait)
		wait = rd->data_since + dr.interval > now ?
		    rd->data_since + dr.interval - now : 0;
	if (wait < DRAIN_PERIOD_MIN)
		wait = DRAIN_PERIOD_MIN;
	rd->next = now + wait;
}

/*
 * Visit r: read what is there if it is time, end it if it is done.
 */
static void
drain_visit(struct pring *r, uint64_t now)
{
	struct pring_rd *rd = &r->rd;
	uint64_t head, size, fill, full, dt, bytes0;
	uint32_t order;
	const char *why;
	int rc = 1, want, grow, held;

	/* Not before the feed's metadata (meta.c): it waits. */
	if (!__atomic_load_n(&r->feed->go, __ATOMIC_ACQUIRE)) {
		rd->next = now + dr.interval;
		return;
	}
	rd->pending = 0;
	/* Pairs with the store-release of head in traced_commit(). */
	head = __atomic_load_n(&r->hdr->head, __ATOMIC_ACQUIRE);
	order = __atomic_load_n(&r->hdr->order, __ATOMIC_RELAXED);
	if (order < rd->order || order > r->max_order) {
		why = order < rd->order ? "ring size went back" :
		    "ring size beyond its memory";
		goto invalid;
	}
	rd->order = order;
	size = traced_ring_size(order);
	if (head < rd->tail || head - rd->tail > size) {
		why = head < rd->tail ? "head went backwards" :
		    "head beyond the ring";
		goto invalid;
	}
	/* Records are 8-byte aligned; so is a tail the client left us
	 * (a previous reader's) if it is one of theirs. */
	if (rd->tail % 8 != 0) {
		why = "tail off a record boundary";
		goto invalid;
	}
	/*
	 * How fast it fills: bytes per second, smoothed over visits.  A full
	 * ring stops its head, so the events it dropped since count too, at
	 * the ring's average record size.
	 */
	full = __atomic_load_n(&r->hdr->dropped[TRACED_DROP_RING_FULL],
	    __ATOMIC_RELAXED);
	if (rd->seen_at != 0 && now > rd->seen_at) {
		uint64_t lost = full > rd->dropped_full &&
		    full - rd->dropped_full < (UINT64_C(1) << 32) ?
		    full - rd->dropped_full : 0;
		uint64_t rec = rd->events > 0 ? rd->bytes / rd->events : 64;

		dt = now - rd->seen_at;
		if (head - rd->seen_head < (UINT64_C(1) << 40)) {
			uint64_t inst = (head - rd->seen_head + lost * rec) *
			    UINT64_C(1000000000) / dt;

			/* Up at once, down slowly: a thread that starts
			 * writing fast must not wait to be noticed. */
			rd->rate = inst > rd->rate ? inst :
			    (rd->rate * 3 + inst) / 4;
		}
	}
	rd->seen_head = head;
	/*
	 * A ring that holds less than TRACED_RING_HOLD_NS of its thread's events
	 * has to be visited too often: ask its producer for a bigger one.
	 */
	grow = order < r->max_order && rd->rate > 0 &&
	    size * UINT64_C(1000000000) / rd->rate < TRACED_RING_HOLD_NS;
	if (grow != rd->grow) {
		__atomic_store_n(&r->hdr->grow, (uint32_t)grow,
		    __ATOMIC_RELAXED);
		rd->grow = grow;
	}
	/* A ring that lapped twice, or that threads pass on, is here to
	 * stay: map it (DESIGN). */
	if (rd->map == NULL && !rd->map_failed &&
	    (rd->tail >= 2 * size || rd->handed)) {
		void *m = mmap(NULL, (size_t)traced_ring_size(r->max_order),
		    PROT_READ, MAP_SHARED, r->ring_fd, TRACED_RING_HDR_SIZE);

		if (m != MAP_FAILED)
			rd->map = m;
		else
			rd->map_failed = 1;
	}
	if (full > rd->dropped_full) {
		rd->why |= drain_saw(r, now);
		log_debug("session %u thread %d: %llu more events lost to a "
		    "full ring (seen: %#x)", r->feed->id, (int)rd->tid,
		    (unsigned long long)(full - rd->dropped_full), rd->why);
		rd->dropped_full = full;
	}
	rd->seen_at = now;
	if (__atomic_exchange_n(&r->notified, 0, __ATOMIC_ACQUIRE))
		rd->urgent = 1;
	if (!rd->closing && __atomic_load_n(&r->close_req, __ATOMIC_ACQUIRE))
		rd->closing = 1;

	fill = head - rd->tail;
	if (fill > 0 && rd->data_since == 0)
		rd->data_since = now;
	want = fill > 0 && (rd->urgent || rd->closing ||
	    rd->flush_gen > rd->synced_gen || dr.all_seen != dr.all_gen ||
	    fill >= size / 4 || now - rd->data_since >= dr.interval ||
	    (rd->rate > 0 && now >= rd->next));
	if (want) {
		rd->urgent = 0;
		/* To the writers in batches (DRAIN_HOLD_BYTES). */
		wo_hold(r, 1);
		held = 0;
		bytes0 = rd->bytes;
		while (rd->tail < head && (rc = drain_packet(r, head)) >
		    0 && rc != 3) {
			if (rc == 4 && (__atomic_load_n(&r->handovers_out,
			    __ATOMIC_ACQUIRE) >= DRAIN_HANDOVERS_MAX ||
			    drain_thread(r) == -1)) {
				/* The loop is behind, or out of memory:
				 * from the record on, at the next visit. */
				rd->urgent = 1;
				break;
			}
			/* What one visit reads goes out in one batch, of
			 * DRAIN_HOLD_MAX chunks or DRAIN_HOLD_BYTES at most. */
			if (++held >= DRAIN_HOLD_MAX ||
			    rd->bytes - bytes0 >= DRAIN_HOLD_BYTES) {
				wo_hold(r, 0);
				wo_hold(r, 1);
				held = 0;
				bytes0 = rd->bytes;
			}
		}
		wo_hold(r, 0);
		if (rc == -1)
			return;		/* ended */
		/* Staging full: soon again.  Its owner's share of it used
		 * up: later, and without a wakeup meanwhile (its producer
		 * would ask again and again); the other owners' rings
		 * first. */
		if (rc == 0 && (rd->pressure & LOSS_SAW_SHARE))
			rd->held = 1;
		else if (rc == 0)
			rd->urgent = 1;
	}
	if (rd->tail == head) {
		rd->data_since = 0;
		rd->pressure = 0;
	}
	/* Ask for a wakeup again: the producer's next crossing notifies. */
	if (!rd->held)
		__atomic_store_n(&r->hdr->wakeup, 1, __ATOMIC_RELEASE);

	if (rd->tail == head) {
		/* Pairs with the store-release of flags at thread exit. */
		if ((__atomic_load_n(&r->hdr->flags, __ATOMIC_ACQUIRE) &
		    TRACED_RING_FINISHED) &&
		    __atomic_load_n(&r->hdr->head, __ATOMIC_ACQUIRE) == head) {
			if (drain_end(r, END_FINISHED, NULL, head) == 0)
				return;
		} else if (rd->closing) {
			if (drain_end(r, END_CLOSED, NULL, head) == 0)
				return;
		}
		if (rd->flush_gen > rd->synced_gen) {
			struct chunk *c = wo_marker_new(r, CHUNK_SYNC);

			if (c != NULL) {
				c->gen = rd->flush_gen;
				c->order = rd->order;
				rd->synced_gen = rd->flush_gen;
				wo_chunk_queue(c);
			}
		}
	}
	drain_plan(r, now, head - rd->tail);
	return;

invalid:
	if (drain_end(r, END_INVALID, why, head) == -1)
		rd->urgent = 1;
}

void *
drain_main(void *arg)
{
	struct writeout *wo = arg;
	struct pring *r, *next;
	struct timespec ts;
	uint64_t now, wake, planned = 0;
	uint32_t order;
	int stop, rc;

	worker_self("traced-drain", wo->nice);
	/* A pipeline of its own: nothing of one before (a test's). */
	memset(&dr, 0, sizeof(dr));
	TAILQ_INIT(&dr.rings);

	pthread_mutex_lock(&wo->lock);
	for (;;) {
		/* What the loop asked for. */
		while ((r = TAILQ_FIRST(&wo->adding)) != NULL) {
			TAILQ_REMOVE(&wo->adding, r, rd.entry);
			memset(&r->rd, 0, sizeof(r->rd));
			wo_share_ring_locked(r->feed->share, 1);
			r->rd.tail = __atomic_load_n(&r->hdr->tail,
			    __ATOMIC_ACQUIRE);
			/* Client memory: a size the ring cannot have is not
			 * taken (a shift by 64, a uid charged 2^63 bytes);
			 * from the least one, drain_visit() then finds the
			 * header wrong and ends the ring. */
			order = __atomic_load_n(&r->hdr->order,
			    __ATOMIC_RELAXED);
			r->rd.order = order >= TRACED_RING_ORDER_MIN &&
			    order <= r->max_order ? order :
			    TRACED_RING_ORDER_MIN;
			/* Going on in an ended thread's stream: not before
			 * its last record (sring.c sring_take_stream()). */
			r->rd.last_ts = r->ts_floor;
			r->rd.tid = r->tid;
			/* A ring a previous thread used: its losses are told. */
			r->rd.dropped_full = __atomic_load_n(
			    &r->hdr->dropped[TRACED_DROP_RING_FULL],
			    __ATOMIC_RELAXED);
			/* A flush asked for before or after it came syncs it
			 * too (control.c waits for every ring). */
			r->rd.flush_gen = wo->flush_gen;
			r->rd.young = DRAIN_YOUNG_VISITS;
			TAILQ_INSERT_TAIL(&dr.rings, r, rd.entry);
		}
		dr.interval = wo->interval_ns;
		if (wo->flush_gen != dr.flush_gen) {
			dr.flush_gen = wo->flush_gen;
			TAILQ_FOREACH(r, &dr.rings, rd.entry)
				r->rd.flush_gen = dr.flush_gen;
		}
		dr.all_gen = wo->all_gen;
		stop = wo->stop;
		wo->drain_kick = 0;
		pthread_mutex_unlock(&wo->lock);

		now = mono_ns();
		dr.late = planned != 0 && now > planned ? now - planned : 0;
		wake = now + dr.interval;
		for (r = TAILQ_FIRST(&dr.rings); r != NULL; r = next) {
			next = TAILQ_NEXT(r, rd.entry);
			if (r->rd.urgent || r->rd.closing ||
			    r->rd.flush_gen > r->rd.synced_gen ||
			    dr.all_seen != dr.all_gen || now >= r->rd.next ||
			    __atomic_load_n(&r->notified, __ATOMIC_RELAXED) ||
			    __atomic_load_n(&r->close_req,
			    __ATOMIC_RELAXED)) {
				drain_visit(r, now);
				now = mono_ns();
			}
		}
		dr.all_seen = dr.all_gen;
		TAILQ_FOREACH(r, &dr.rings, rd.entry)
			if (r->rd.next < wake)
				wake = r->rd.next;
		if (stop && TAILQ_EMPTY(&dr.rings))
			break;

		pthread_mutex_lock(&wo->lock);
		planned = 0;
		if (!wo->drain_kick && !wo->stop) {
			ts.tv_sec = (time_t)(wake / 1000000000u);
			ts.tv_nsec = (long)(wake % 1000000000u);
			rc = pthread_cond_timedwait(&wo->drain_cond, &wo->lock,
			    &ts);
			if (rc == ETIMEDOUT)
				planned = wake;
		}
		if (wo->stop && TAILQ_EMPTY(&dr.rings) &&
		    TAILQ_EMPTY(&wo->adding))
			break;
	}
	pthread_mutex_unlock(&wo->lock);
	free(dr.counts);
	free(dr.touched);
	dr.counts = NULL;
	dr.touched = NULL;
	dr.ncap = 0;
	return NULL;
}
