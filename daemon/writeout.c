/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * The writeout pipeline: from the rings of traced programs to its
 * consumers (the CTF stream files), and back to the loop thread with
 * what happened.
 *
 * DESIGN
 *
 *   ring --copy--> drain thread --chunk--> write queue --> writer
 *        (validate, packet)   (staging arena)    | consumers: stream.c
 *                                                |  (pwritev, sync)
 *   loop thread <--------- done list + eventfd --+
 *   (the owner's chunk_done(): counts, index, loss warnings, ring
 *   ends; then the chunk is released)
 *
 * Reading a ring and writing its stream are two stages with staging
 * memory between them, so that a slow write (a busy disk, the page
 * cache throttling dirty pages) does not stop the rings from being
 * drained: the drain thread (drain.c) copies each ring's new records
 * into an arena, validates them there and gives the ring its room back
 * at once; the writers take the packets from there, what a visit read
 * in one pwritev().  Only when every arena is waiting for a
 * writer does reading stop, and a ring that fills up then loses events
 * to a slow disk, which the warning says.
 *
 * Big packets get staging memory aligned for direct I/O (DIO_ALIGN),
 * and while at most half of the staging kept for good (ARENA_KEEP) is
 * in use the writers send them from there to the disk with O_DIRECT
 * (stream.c): no copy into the page cache, which was most of the
 * daemon's CPU time at high rates.  Past half, writes go through the
 * page cache, which takes in what a slow disk cannot follow at once.
 * A disk that stops for a while holds the writers in their direct
 * writes: the reserve arenas past ARENA_KEEP take in what the rings
 * fill meanwhile, and are given back once the stall is over.
 *
 * One drain thread reads every ring: it is cheap (a copy that checks
 * the records as it goes, a few ns per event) and decides when each
 * ring is read by how fast it fills, rather than waiting to be told.
 * N writers (--workers) write; a ring is written by one writer at a
 * time (wbusy), so its packets stay in order.  A writer hands a ring's
 * chunks to each consumer in turn (pipeline.h, struct consumer): the
 * seam where validated records leave the pipeline, the CTF stream
 * writer first, the first to report in the chunks.
 *
 * The pipeline knows no session: what it must know of one is its feed
 * (struct pfeed), and what happened goes back through the owner's
 * callbacks (struct pipeline_owner), on the loop thread.
 *
 * Every ring the owner adds gets exactly one END chunk back, after
 * which no thread but the loop touches it (pring.done): that is when a
 * ring of an ended session may be freed.  Staging memory is allocated
 * once, in arenas of ARENA_SIZE up to ARENA_KEEP, and reused (the
 * reserve beyond, up to ARENA_MAX, only while it is needed); a chunk's
 * memory is released by the loop thread after its owner counted it.
 *
 * Priorities: losing events is the last resort.  The drain thread and
 * the writers run at the niceness --writeout-nice gives (0 by default:
 * the same share as the traced programs; they need little of it, a few
 * tens of ns per event).  At nice 19 next to busy programs they starve,
 * and the warnings say so.
 *
 * Workers block every signal, name themselves, touch no libevent
 * object and report to the loop through the done list and an eventfd.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "worker.h"
#include "writeout.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE	23	/* Linux 5.14 */
#endif

struct writeout *wo_global;

static uint64_t
mono_ns(void)
{
	return now_ns(CLOCK_MONOTONIC);
}

/* ---- staging (drain thread, and the loop releasing) -------------------- */

/*
 * A new arena, its pages made now rather than faulted in one by one
 * while packets are copied in (a page fault is dear on a virtual
 * machine; see client-lib/pager.c).  ARENA_SIZE bytes on an ARENA_HUGE
 * boundary, or NULL.  Lock not held.
 */
static uint8_t *
arena_make(void)
{
	size_t off, lead;
	uint8_t *m, *base;

	/* Huge pages where the kernel gives them (madvise mode): one TLB
	 * entry for the drain's copies, and a direct write pins 2 MiB of
	 * it at a time instead of 512 pages. */
	m = mmap(NULL, ARENA_SIZE + ARENA_HUGE, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	lead = (ARENA_HUGE - (uintptr_t)m % ARENA_HUGE) % ARENA_HUGE;
	if (lead > 0)
		(void)munmap(m, lead);
	if (ARENA_HUGE - lead > 0)
		(void)munmap(m + lead + ARENA_SIZE, ARENA_HUGE - lead);
	base = m + lead;
	(void)madvise(base, ARENA_SIZE, MADV_HUGEPAGE);
	if (madvise(base, ARENA_SIZE, MADV_POPULATE_WRITE) == -1)
		for (off = 0; off < ARENA_SIZE; off += 4096)
			*(volatile uint8_t *)(base + off) = 0;
	return base;
}

/*
 * One more arena, in the first empty slot, its pages made with the lock
 * released (milliseconds when the host has to find them: a drain
 * thread that waited for that lost the first events of a fast thread).
 * NULL at the most, or out of memory (the slot stays empty, for a later
 * try).  Locked.
 */
static struct arena *
arena_more_locked(struct writeout *wo)
{
	struct arena *a = NULL;
	uint8_t *base;
	unsigned i;

	for (i = 0; i < ARENA_MAX && a == NULL; i++)
		if (!wo->arenas[i].making && wo->arenas[i].base == NULL)
			a = &wo->arenas[i];
	if (a == NULL)
		return NULL;
	if (i > wo->narenas)
		wo->narenas = i;
	a->making = 1;
	wo->arenas_making++;
	pthread_mutex_unlock(&wo->lock);
	base = arena_make();
	pthread_mutex_lock(&wo->lock);
	a->base = base;
	a->making = 0;
	wo->arenas_making--;
	if (base == NULL) {
		log_warn("staging memory");
		return NULL;
	}
	a->used = 0;
	a->refs = 0;
	a->current = 0;
	return a;
}

/*
 * An arena with at least 'need' bytes free for the drain thread, or
 * NULL when staging is full (every arena waits for writers).  When it
 * takes the last free one, a writer makes the next ahead of need
 * (writer_main()), so that the drain thread seldom makes one itself.
 * Locked.
 */
static struct arena *
arena_get_locked(struct writeout *wo, size_t need)
{
	struct arena *a = wo->cur;

	if (a != NULL && a->refs == 0)
		a->used = 0;		/* everything in it was released */
	if (a != NULL && ARENA_SIZE - a->used >= need)
		return a;
	if (a != NULL) {
		a->current = 0;
		if (a->refs == 0)
			STAILQ_INSERT_TAIL(&wo->free_arenas, a, entry);
		wo->cur = NULL;
	}
	if ((a = STAILQ_FIRST(&wo->free_arenas)) != NULL)
		STAILQ_REMOVE_HEAD(&wo->free_arenas, entry);
	else if (wo->arenas_making > 0)
		return NULL;	/* a writer is making one: it kicks us */
	else if ((a = arena_more_locked(wo)) == NULL)
		return NULL;
	a->used = 0;
	a->refs = 0;
	a->current = 1;
	wo->cur = a;
	if (STAILQ_EMPTY(&wo->free_arenas) && !wo->arena_want) {
		wo->arena_want = 1;
		pthread_cond_signal(&wo->write_cond);
	}
	return a;
}

/*
 * The scheduler's state of one of our threads ('R' runnable, 'D' in a
 * disk wait, 'S' asleep...), or '?'.
 */
static char
thread_state(pid_t tid)
{
	char path[64], buf[256], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return '?';
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return '?';
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return p != NULL && p[1] == ' ' && p[2] != '\0' ? p[2] : '?';
}

/*
 * Staging ran out: note when, and whether the writers were waiting on
 * the disk or short of CPU time.  A writer stuck in a write now tells
 * it by its state (runnable: it waits for a CPU; else for the disk);
 * otherwise the writes since the last time do: mostly off the CPU,
 * the disk.  Locked; rare (once per time staging runs out).
 */
static void
staging_full_locked(struct writeout *wo)
{
	uint64_t io = wo->io_ns - wo->io_mark, cpu = wo->cpu_ns - wo->cpu_mark;
	uint64_t now = mono_ns(), since;
	int disk = 0, runnable = 0;
	unsigned i;

	for (i = 0; i < wo->nwriters; i++) {
		since = __atomic_load_n(&wo->writers[i].write_since,
		    __ATOMIC_RELAXED);
		if (since == 0 || now < since || now - since < 10000000)
			continue;
		if (thread_state(__atomic_load_n(&wo->writers[i].tid,
		    __ATOMIC_RELAXED)) == 'R')
			runnable = 1;
		else
			disk = 1;
	}
	wo->full_since = now;
	wo->full_end = 0;
	if (disk || runnable)
		wo->full_why = disk ? LOSS_SAW_DISK : LOSS_SAW_WRITERS;
	else
		wo->full_why = io > 0 && cpu < io / 2 ? LOSS_SAW_DISK :
		    LOSS_SAW_WRITERS;
	wo->io_mark = wo->io_ns;
	wo->cpu_mark = wo->cpu_ns;
	log_debug("staging full: the writers are %s", wo->full_why ==
	    LOSS_SAW_DISK ? "waiting on the disk" : "short of CPU time");
}

/*
 * Staging shared between owners (pfeed.share: users).  An owner alone
 * takes what it needs, and so does anyone while less than half of what
 * is kept for good (ARENA_KEEP) is used.  Past that, an owner takes at
 * most an equal part of it among the owners with rings (or staging):
 * one user's flood at a rate the disk cannot take then fills that
 * user's part and loses events in that user's rings, while the other
 * users' rings keep being read into the rest (issue 25: a flood once
 * made root's program lose 18 % of its events, and the warning blamed
 * root's program).  Past SHARES_MAX owners at once, the last slot is
 * shared by the others.
 */

/* The slot of owner 'key' (made if 'make'), or NULL.  Locked. */
static struct share *
share_find_locked(struct writeout *wo, uint32_t key, int make)
{
	unsigned i;

	for (i = 0; i < wo->nshares; i++)
		if (wo->shares[i].key == key)
			return &wo->shares[i];
	if (!make)
		return NULL;
	if (wo->nshares == SHARES_MAX)
		return &wo->shares[SHARES_MAX - 1];	/* shared */
	wo->shares[wo->nshares].key = key;
	wo->shares[wo->nshares].bytes = 0;
	return &wo->shares[wo->nshares++];
}

/* An owner with no ring and no staging left: its slot goes (the last
 * one moves into its place).  Locked. */
static void
share_gone_locked(struct writeout *wo, struct share *sh)
{
	if (sh->bytes == 0 && sh->rings == 0)
		*sh = wo->shares[--wo->nshares];
}

/*
 * Charge (or give back, n < 0) owner 'key' n bytes.  The total stays
 * exact; an owner that shared the last slot may find its slot gone
 * when it gives back (the slot keeps no more than it holds).  Locked.
 */
static void
share_charge_locked(struct writeout *wo, uint32_t key, ssize_t n)
{
	struct share *sh = share_find_locked(wo, key, n > 0);

	wo->shared += (size_t)n;
	if (sh == NULL)
		return;
	if (n < 0 && sh->bytes < (size_t)-n)
		sh->bytes = 0;
	else
		sh->bytes += (size_t)n;
	share_gone_locked(wo, sh);
}

/*
 * Owner 'share' has one ring more (delta 1) or less (-1) read by the
 * drain thread: its rings make it an owner that staging is shared with,
 * even while it holds none.  Drain thread; locked, or not (the second).
 */
void
wo_share_ring_locked(uint32_t share, int delta)
{
	struct writeout *wo = wo_global;
	struct share *sh = share_find_locked(wo, share, delta > 0);

	if (sh == NULL || (delta < 0 && sh->rings == 0))
		return;
	sh->rings += (unsigned)delta;
	share_gone_locked(wo, sh);
}

void
wo_share_ring(uint32_t share, int delta)
{
	pthread_mutex_lock(&wo_global->lock);
	wo_share_ring_locked(share, delta);
	pthread_mutex_unlock(&wo_global->lock);
}

/* May owner 'key' take 'need' bytes more of staging?  Locked. */
static int
staging_share_ok(struct writeout *wo, uint32_t key, size_t need)
{
	/* What is kept for good: the reserve beyond it is made on demand
	 * by the writers, which a flood keeps busy. */
	const size_t all = (size_t)ARENA_KEEP * ARENA_SIZE;
	struct share *sh = share_find_locked(wo, key, 0);
	size_t mine = sh != NULL ? sh->bytes : 0;
	unsigned owners = wo->nshares + (sh == NULL);

	/* Alone: all of it, the reserve too (a disk that stops a while). */
	if (owners <= 1 || wo->shared + need <= all / 2)
		return 1;
	return mine + need <= all / owners;
}

/* Are there other owners, and does 'key' hold less than an equal part
 * of staging?  Locked. */
static int
staging_share_under(struct writeout *wo, uint32_t key)
{
	const size_t all = (size_t)ARENA_KEEP * ARENA_SIZE;
	struct share *sh = share_find_locked(wo, key, 0);
	unsigned owners = wo->nshares + (sh == NULL);

	return owners > 1 && (sh == NULL || sh->bytes < all / owners);
}

static struct chunk *
chunk_alloc_locked(struct writeout *wo, struct pring *r, size_t room)
{
	size_t head = (sizeof(struct chunk) + 7) / 8 * 8, need, at;
	int dio = room >= DIO_MIN;
	struct arena *a;
	struct chunk *c;

	/* A direct I/O packet: up to DIO_ALIGN lost to aligning it. */
	need = head + CTF_PACKET_HDR_SIZE + room + (dio ? 3 * DIO_ALIGN : 0);
	if (!staging_share_ok(wo, r->feed->share, need)) {
		r->rd.pressure |= LOSS_SAW_SHARE;
		return NULL;
	}
	a = arena_get_locked(wo, need);
	if (a == NULL) {
		if (!wo->staging_wait)
			staging_full_locked(wo);
		wo->staging_wait = 1;
		/* Full, and this owner under its part: others hold it. */
		if (staging_share_under(wo, r->feed->share))
			r->rd.pressure |= LOSS_SAW_OTHERS;
		return NULL;
	}
	if (wo->staging_wait)
		wo->full_end = mono_ns();
	wo->staging_wait = 0;
	at = a->used;
	if (dio)	/* the packet on a boundary, the chunk just before */
		at = (at + head + DIO_ALIGN - 1) / DIO_ALIGN * DIO_ALIGN - head;
	c = (struct chunk *)(void *)(a->base + at);
	memset(c, 0, sizeof(*c));
	c->arena = a;
	c->r = r;
	c->share = r->feed->share;
	c->charge = need;
	share_charge_locked(wo, c->share, (ssize_t)need);
	c->kind = CHUNK_DATA;
	c->pkt = (uint8_t *)c + head;
	c->dio = dio;
	c->counts = c->inline_counts;
	/* The next chunk 8-byte aligned, whatever the room asked (a
	 * client's head can make it odd): wo_chunk_cancel() does not give
	 * it back while the arena holds others. */
	a->used = (at + head + CTF_PACKET_HDR_SIZE + room +
	    (dio ? 2 * DIO_ALIGN : 0) + 7) / 8 * 8;
	a->refs++;
	return c;
}

/*
 * A data chunk with room for 'room' bytes of records after its packet
 * header, or NULL when staging is full (the writers are behind).
 * Drain thread.
 */
struct chunk *
wo_chunk_new(struct pring *r, size_t room)
{
	struct writeout *wo = wo_global;
	struct chunk *c;

	pthread_mutex_lock(&wo->lock);
	c = chunk_alloc_locked(wo, r, room);
	pthread_mutex_unlock(&wo->lock);
	return c;
}

/*
 * The drain thread used 'len' of the room it asked for: give the rest
 * of the arena back (the chunk is the last one taken from it).
 */
void
wo_chunk_commit(struct chunk *c, size_t len)
{
	struct writeout *wo = wo_global;
	struct arena *a = c->arena;
	size_t end = (size_t)(c->pkt - a->base) + CTF_PACKET_HDR_SIZE + len +
	    (c->dio ? 2 * DIO_ALIGN : 0);
	size_t charge = end - (size_t)((uint8_t *)c - a->base);

	pthread_mutex_lock(&wo->lock);
	if (a->current)
		a->used = (end + 7) / 8 * 8;
	/* What it holds, not what it asked for. */
	if (charge < c->charge) {
		share_charge_locked(wo, c->share, -(ssize_t)(c->charge -
		    charge));
		c->charge = charge;
	}
	pthread_mutex_unlock(&wo->lock);
	c->len = (uint32_t)len;
}

/* Release a chunk's memory.  Locked. */
static void
chunk_free_locked(struct writeout *wo, struct chunk *c)
{
	struct arena *a = c->arena;

	if (c->counts != c->inline_counts)
		free(c->counts);
	if (a == NULL) {
		free(c);
		return;
	}
	share_charge_locked(wo, c->share, -(ssize_t)c->charge);
	if (--a->refs == 0 && !a->current) {
		STAILQ_INSERT_TAIL(&wo->free_arenas, a, entry);
		if (wo->staging_wait) {
			wo->drain_kick = 1;
			pthread_cond_signal(&wo->drain_cond);
		}
	}
}

/*
 * Is at most half of the staging kept for good (ARENA_KEEP) in use?
 * Then the writers keep up: they may write directly to the disk
 * (writer_main()), and the reserve may go (reserve_trim()).  Past
 * that, the disk may be what holds them back, and writes go through
 * the page cache, which takes in what the disk cannot follow at once
 * (up to the kernel's dirty limits, often gigabytes) and costs CPU
 * time instead.  Locked.
 */
static int
staging_roomy_locked(const struct writeout *wo)
{
	unsigned i, busy = 0;

	for (i = 0; i < wo->narenas; i++)
		if (wo->arenas[i].current || wo->arenas[i].refs > 0)
			busy++;
	return busy <= ARENA_KEEP / 2;
}

/*
 * Give the reserve back (the arenas past ARENA_KEEP) once the stall
 * that made it is over: nothing waits for staging and at most half of
 * what is kept for good is in use.  Not before: an arena of it emptied
 * in the middle of a stall is the next one the drain thread needs, and
 * unmapping it then would have it made again at once.  Arenas of it
 * still in use go at a later call.  Not locked.
 */
static void
reserve_trim(struct writeout *wo)
{
	uint8_t *gone[ARENA_MAX - ARENA_KEEP];
	struct arena_list keep;
	struct arena *a;
	unsigned i, n = 0;

	pthread_mutex_lock(&wo->lock);
	if (wo->staging_wait || !staging_roomy_locked(wo)) {
		pthread_mutex_unlock(&wo->lock);
		return;
	}
	STAILQ_INIT(&keep);
	while ((a = STAILQ_FIRST(&wo->free_arenas)) != NULL) {
		STAILQ_REMOVE_HEAD(&wo->free_arenas, entry);
		if (a - wo->arenas < ARENA_KEEP) {
			STAILQ_INSERT_TAIL(&keep, a, entry);
			continue;
		}
		gone[n++] = a->base;
		a->base = NULL;		/* its slot is empty again */
	}
	STAILQ_CONCAT(&wo->free_arenas, &keep);
	pthread_mutex_unlock(&wo->lock);
	for (i = 0; i < n; i++)
		(void)munmap(gone[i], ARENA_SIZE);
}

/* A chunk the drain thread took and did not fill.  Drain thread. */
void
wo_chunk_cancel(struct chunk *c)
{
	struct writeout *wo = wo_global;

	pthread_mutex_lock(&wo->lock);
	chunk_free_locked(wo, c);
	pthread_mutex_unlock(&wo->lock);
}

/*
 * A SYNC or END chunk, from the heap: markers never wait for staging.
 * NULL if out of memory (the drain thread tries again).
 */
struct chunk *
wo_marker_new(struct pring *r, enum chunk_kind kind)
{
	struct chunk *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return NULL;
	c->r = r;
	c->kind = kind;
	c->counts = c->inline_counts;
	return c;
}

/*
 * Put r on the writers' list if it has chunks for them and no writer
 * has it, nor is it there, nor held (wo_hold()).  Locked.
 */
static void
wo_todo_locked(struct writeout *wo, struct pring *r)
{
	if (STAILQ_EMPTY(&r->chunks) || r->wqueued || r->wbusy || r->whold)
		return;
	r->wqueued = 1;
	TAILQ_INSERT_TAIL(&wo->todo, r, wentry);
	pthread_cond_signal(&wo->write_cond);
}

/* Queue a chunk for writing, after the ring's earlier ones. */
void
wo_chunk_queue(struct chunk *c)
{
	struct writeout *wo = wo_global;

	pthread_mutex_lock(&wo->lock);
	STAILQ_INSERT_TAIL(&c->r->chunks, c, entry);
	wo_todo_locked(wo, c->r);
	pthread_mutex_unlock(&wo->lock);
}

/*
 * Hold r's chunks back from the writers while 'on' (they are queued,
 * in order, but no writer is told, and one busy with r's earlier
 * chunks leaves them; r already on the writers' list when the hold
 * began is taken as it is), so that what one visit of the drain thread
 * reads goes out in one batch; with 'on' 0, hand what was held to them.
 * Drain thread, the only one that queues chunks and sets whold.
 */
void
wo_hold(struct pring *r, int on)
{
	struct writeout *wo = wo_global;

	if (!on == !r->whold)
		return;
	pthread_mutex_lock(&wo->lock);
	r->whold = on;
	wo_todo_locked(wo, r);
	pthread_mutex_unlock(&wo->lock);
}

/* ---- writers -------------------------------------------------------------- */

static void *
writer_main(void *arg)
{
	struct writer *w = arg;
	struct writeout *wo = w->wo;
	struct chunk_list batch;
	struct arena *a;
	uint64_t one = 1;
	struct pring *r;
	unsigned i;

	worker_self("traced-writeout", wo->nice);
	__atomic_store_n(&w->tid, gettid(), __ATOMIC_RELAXED);

	pthread_mutex_lock(&wo->lock);
	for (;;) {
		while (!wo->stop && TAILQ_EMPTY(&wo->todo) && !wo->arena_want)
			pthread_cond_wait(&wo->write_cond, &wo->lock);
		if (TAILQ_EMPTY(&wo->todo) && wo->arena_want && !wo->stop) {
			/* Staging for the drain thread, before it needs it. */
			wo->arena_want = 0;
			if ((a = arena_more_locked(wo)) != NULL) {
				STAILQ_INSERT_TAIL(&wo->free_arenas, a, entry);
				if (wo->staging_wait) {
					wo->drain_kick = 1;
					pthread_cond_signal(&wo->drain_cond);
				}
			}
			continue;
		}
		if (TAILQ_EMPTY(&wo->todo))
			break;
		r = TAILQ_FIRST(&wo->todo);
		TAILQ_REMOVE(&wo->todo, r, wentry);
		r->wqueued = 0;
		r->wbusy = 1;
		STAILQ_INIT(&batch);
		STAILQ_CONCAT(&batch, &r->chunks);
		/* Directly to the disk while the writers keep up, unless
		 * direct-io is off (traced.conf(5)). */
		w->direct = wo->direct_io && staging_roomy_locked(wo);
		pthread_mutex_unlock(&wo->lock);

		w->io_ns = w->cpu_ns = 0;
		/* The consumers, in order: the first reports in the chunks. */
		for (i = 0; i < wo->nconsumers; i++)
			wo->consumers[i]->write(wo->consumers[i], r, &batch, w);

		pthread_mutex_lock(&wo->lock);
		wo->io_ns += w->io_ns;
		wo->cpu_ns += w->cpu_ns;
		r->wbusy = 0;
		wo_todo_locked(wo, r);	/* what came meanwhile */
		STAILQ_CONCAT(&wo->done, &batch);
		(void)!write(wo->efd, &one, sizeof(one));
	}
	pthread_mutex_unlock(&wo->lock);
	return NULL;
}

/* ---- the loop thread ------------------------------------------------------ */

/* Free a feed's event tables (no thread reads them any more). */
void
evtab_free(struct evtab *t)
{
	struct evtab *older;

	for (; t != NULL; t = older) {
		older = t->older;
		free(t);
	}
}

/*
 * Chunks came back from the writers: each to the owner, in order, then
 * released; then the owner hears that the batch is in.  Loop thread.
 */
static void
writeout_done_cb(int fd, short what, void *arg)
{
	struct writeout *wo = arg;
	struct chunk_list done;
	struct chunk *c;
	uint64_t n;

	(void)fd;
	(void)what;
	(void)!read(wo->efd, &n, sizeof(n));
	STAILQ_INIT(&done);
	pthread_mutex_lock(&wo->lock);
	STAILQ_CONCAT(&done, &wo->done);
	pthread_mutex_unlock(&wo->lock);
	while ((c = STAILQ_FIRST(&done)) != NULL) {
		STAILQ_REMOVE_HEAD(&done, entry);
		/* After an END the ring may be gone: c->r is not read. */
		if (c->kind == CHUNK_END) {
			c->r->done = 1;
			wo->outstanding--;
		}
		wo->owner.chunk_done(wo->owner.arg, c);
		pthread_mutex_lock(&wo->lock);
		chunk_free_locked(wo, c);
		pthread_mutex_unlock(&wo->lock);
	}
	reserve_trim(wo);
	if (wo->owner.settled != NULL)
		wo->owner.settled(wo->owner.arg);
}

/* Wake the drain thread.  Locked. */
static void
drain_kick_locked(struct writeout *wo)
{
	wo->drain_kick = 1;
	pthread_cond_signal(&wo->drain_cond);
}

/*
 * Start the pipeline: the drain thread and 'nworkers' writers at
 * niceness 'nice'; quiet rings are read every 'drain_ms'.  What
 * happens to each chunk goes back to 'owner' (copied), on this thread,
 * from the loop of 'base'.  Returns it (there is one: the drain thread
 * and writers find it in wo_global), or NULL (logged).  Loop thread.
 */
struct writeout *
writeout_new(struct event_base *base, unsigned nworkers, int nice,
    unsigned drain_ms, const struct pipeline_owner *owner)
{
	pthread_condattr_t ca;
	const char *stall;
	struct writeout *wo;
	unsigned i;

	wo = calloc(1, sizeof(*wo));
	if (wo == NULL)
		return NULL;
	pthread_mutex_init(&wo->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&wo->drain_cond, &ca);
	pthread_condattr_destroy(&ca);
	pthread_cond_init(&wo->write_cond, NULL);
	TAILQ_INIT(&wo->adding);
	TAILQ_INIT(&wo->todo);
	STAILQ_INIT(&wo->free_arenas);
	STAILQ_INIT(&wo->done);
	wo->owner = *owner;
	wo->nice = nice;
	wo->interval_ns = (uint64_t)drain_ms * 1000000u;
	/* For the tests of a slow disk only: see traced(8), ENVIRONMENT. */
	if ((stall = getenv("TRACED_TEST_WRITE_STALL_MS")) != NULL)
		wo->stall_ns = strtoull(stall, NULL, 10) * 1000000u;
	wo->test_nodirect = getenv("TRACED_TEST_NO_DIRECT") != NULL;
	wo->writers = calloc(nworkers, sizeof(*wo->writers));
	if (wo->writers == NULL) {
		free(wo);
		return NULL;
	}
	wo_global = wo;
	/* The first arena now, the second by a writer once started. */
	if ((wo->arenas[0].base = arena_make()) != NULL) {
		wo->narenas = 1;
		STAILQ_INSERT_TAIL(&wo->free_arenas, &wo->arenas[0], entry);
		wo->arena_want = 1;
	}
	if (worker_start(base, "drain", drain_main, wo, writeout_done_cb,
	    &wo->efd, &wo->ev, &wo->drain_thread) == -1)
		return NULL;
	for (i = 0; i < nworkers; i++) {
		wo->writers[i].wo = wo;
		if (worker_spawn("writeout", writer_main, &wo->writers[i],
		    &wo->writers[i].th) == -1)
			break;
	}
	wo->nwriters = i;
	if (i == 0) {
		log_warnx("no writeout thread could start");
		return NULL;
	}
	return wo;
}

/*
 * Add a consumer of validated chunks (pipeline.h), before the first
 * ring: the first added is the one that reports in the chunks.  0, or
 * -1 if there are PIPELINE_CONSUMERS_MAX already.  Loop thread.
 */
int
writeout_consumer_add(const struct consumer *c)
{
	struct writeout *wo = wo_global;

	if (wo->nconsumers == PIPELINE_CONSUMERS_MAX)
		return -1;
	pthread_mutex_lock(&wo->lock);
	wo->consumers[wo->nconsumers++] = c;
	pthread_mutex_unlock(&wo->lock);
	return 0;
}

/*
 * Stop the threads and free the pipeline.  Every ring was ended before
 * (its END chunk came back).  Loop thread.
 */
void
writeout_free(struct writeout *wo)
{
	unsigned i;

	if (wo == NULL)
		return;
	pthread_mutex_lock(&wo->lock);
	wo->stop = 1;
	drain_kick_locked(wo);
	pthread_cond_broadcast(&wo->write_cond);
	pthread_mutex_unlock(&wo->lock);
	pthread_join(wo->drain_thread, NULL);
	for (i = 0; i < wo->nwriters; i++)
		pthread_join(wo->writers[i].th, NULL);
	writeout_done_cb(wo->efd, EV_READ, wo);
	event_free(wo->ev);
	close(wo->efd);
	for (i = 0; i < wo->narenas; i++)
		if (wo->arenas[i].base != NULL)
			munmap(wo->arenas[i].base, ARENA_SIZE);
	free(wo->writers);
	pthread_mutex_destroy(&wo->lock);
	pthread_cond_destroy(&wo->drain_cond);
	pthread_cond_destroy(&wo->write_cond);
	free(wo);
	wo_global = NULL;
}

/*
 * Start draining a new ring: its header mapped, its stream open.  From
 * here until its END chunk comes back (r->done), the drain thread and
 * writers may use it.  Loop thread.
 */
void
writeout_add(struct pring *r)
{
	struct writeout *wo = wo_global;

	STAILQ_INIT(&r->chunks);
	r->next_fd = -1;
	r->wqueued = r->wbusy = 0;
	r->done = 0;
	wo->outstanding++;
	pthread_mutex_lock(&wo->lock);
	TAILQ_INSERT_TAIL(&wo->adding, r, rd.entry);
	drain_kick_locked(wo);
	pthread_mutex_unlock(&wo->lock);
}

/* Drain r to its end, close its books, end it.  Loop thread. */
void
writeout_close(struct pring *r)
{
	struct writeout *wo = wo_global;

	if (r->done)
		return;
	__atomic_store_n(&r->close_req, 1, __ATOMIC_RELEASE);
	pthread_mutex_lock(&wo->lock);
	drain_kick_locked(wo);
	pthread_mutex_unlock(&wo->lock);
}

/* r's producer asked for a drain.  Loop thread. */
void
writeout_notify(struct pring *r)
{
	struct writeout *wo = wo_global;

	if (r->done)
		return;
	__atomic_store_n(&r->notified, 1, __ATOMIC_RELEASE);
	pthread_mutex_lock(&wo->lock);
	drain_kick_locked(wo);
	pthread_mutex_unlock(&wo->lock);
}

/*
 * Drain every ring now; with 'gen', also sync every stream after it and
 * report each ring's gen_done = gen (trace-file flush).  Loop thread.
 */
void
writeout_drain_all(uint64_t gen)
{
	struct writeout *wo = wo_global;

	pthread_mutex_lock(&wo->lock);
	if (gen > wo->flush_gen)
		wo->flush_gen = gen;
	wo->all_gen++;
	drain_kick_locked(wo);
	pthread_mutex_unlock(&wo->lock);
}

/* Read quiet rings every 'ms' from now on.  Loop thread. */
void
writeout_set_interval(unsigned ms)
{
	struct writeout *wo = wo_global;

	pthread_mutex_lock(&wo->lock);
	wo->interval_ns = (uint64_t)ms * 1000000u;
	drain_kick_locked(wo);
	pthread_mutex_unlock(&wo->lock);
}

/* The direct-io setting: may big packets skip the page cache? */
void
writeout_set_direct(int on)
{
	struct writeout *wo = wo_global;

	pthread_mutex_lock(&wo->lock);
	wo->direct_io = on;
	pthread_mutex_unlock(&wo->lock);
}

/* Bytes the writers wrote directly, and through the page cache. */
void
writeout_written(uint64_t *direct, uint64_t *cached)
{
	*direct = __atomic_load_n(&wo_global->written_direct,
	    __ATOMIC_RELAXED);
	*cached = __atomic_load_n(&wo_global->written_cached,
	    __ATOMIC_RELAXED);
}

/*
 * r's stream goes on in the file 'fd' from its next packet (trace-file
 * set), a file of trace 'uuid', the ring's file number 'gen'; the old
 * one is closed then.  Takes fd.  Loop thread.
 */
void
writeout_stream_next(struct pring *r, int fd, const uint8_t uuid[16],
    uint64_t gen)
{
	struct writeout *wo = wo_global;

	pthread_mutex_lock(&wo->lock);
	if (r->next_fd != -1)
		close(r->next_fd);
	r->next_fd = fd;
	memcpy(r->next_uuid, uuid, sizeof(r->next_uuid));
	r->next_gen = gen;
	r->next_part_at = 0;
	pthread_mutex_unlock(&wo->lock);
}

/*
 * r's stream goes on in 'fd', the next part of its current file, once
 * that one would pass 'max' bytes (stream-max-size).  A new trace's
 * file still waiting goes first: no part then.  Takes fd.  Loop thread.
 */
void
writeout_stream_part(struct pring *r, int fd, uint64_t max)
{
	struct writeout *wo = wo_global;

	pthread_mutex_lock(&wo->lock);
	if (r->next_fd != -1) {
		pthread_mutex_unlock(&wo->lock);
		close(fd);
		return;
	}
	r->next_fd = fd;
	r->next_part_at = max;
	pthread_mutex_unlock(&wo->lock);
}

int
writeout_idle(void)
{
	return wo_global == NULL || wo_global->outstanding == 0;
}

unsigned
writeout_nworkers(void)
{
	return wo_global != NULL ? wo_global->nwriters : 0;
}
