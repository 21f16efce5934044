/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * The producer side of the per-thread rings (layout: proto/ring.h): the
 * slow paths behind the inline traced_reserve()/traced_commit() of
 * traced.h, ring creation on a thread's first enabled event, laps and
 * growth, loss accounting and the thread-exit handoff.
 *
 * DESIGN
 *
 * The fast path is inline in the traced program and checks one thing:
 * that the record fits below 'limit'.  Everything unusual forces it here
 * by making that check fail.  limit is the least of:
 *
 *   - the cached tail plus the ring size: the ring may be full (reload
 *     the real tail);
 *   - the end of the current lap: the record may not fit before it
 *     (write a PAD to the lap end, and perhaps grow the ring there);
 *   - prep_at, while the ring's first pass through its memory is not
 *     over: the point where the producer looks at how far the pager
 *     has made pages ready, and asks it for more;
 *
 * and 0 when no ring exists yet or a LOST record is due.  A nested call
 * (nest != 0) comes here too.
 *
 * Memory.  A ring's memfd has room for the largest size it may grow to,
 * but no page is made before the producer needs it: the first two data
 * pages when the ring is made, then, as the producer gets near the
 * frontier, twice what it wrote so far (in powers of two), made ready
 * by the pager thread (pager.c) if the ring fills at RING_PAGER_RATE or
 * more; a slower one faults its own pages (ring_prep_check()).  A
 * thread that writes 11 events holds three pages, or shares a ring.
 * The exception: a ring from the daemon's pool (daemon/pool.c), which
 * the connection thread holds for the next thread that needs one.  Its
 * pages are all made, in 2 MiB pages where the kernel gave them, so it
 * starts at its largest size, mapped so that those pages map whole.
 *
 * Handover.  A thread that exits leaves its ring to the next new
 * thread, in-band (proto/ring.h, Handover): ring_keep_locked() at exit,
 * ring_take_locked() at the next thread's first event, and the
 * connection thread finishes a ring nobody took (conn.c).
 *
 * Growth.  At the end of a lap the producer looks at how full the ring
 * is: more than half full means the daemon drains it later than the
 * thread fills it, and the producer asks the pager for a bigger size
 * (up to 16 times this one and the ring's maximum); so it does during
 * the first pass when that pass goes at a pace that fills the ring in
 * less than TRACED_RING_HOLD_NS (and takes it back at the lap end if
 * the whole lap did not: a burst at a thread's start is not a pace),
 * or when the daemon says so.  When the
 * pager has the first pages of the new part ready, the producer
 * switches at the next lap end that allows it (proto/ring.h, "Growth");
 * at the first lap end, which allows any size, or with the ring over
 * half full, it switches without waiting for the pager, and faults in
 * what the pager has not made.  Only while connected: without a daemon
 * a full ring stays full.
 *
 * Losses are counted per thread and per cause, in the shared header
 * (running totals, for the daemon) and in a private tally that becomes
 * a TRACED_EVENT_LOST record in front of the next event that fits, so
 * the trace shows where and how much was lost.
 *
 * Nothing here may block, allocate (after the ring exists), print or
 * change errno: it runs inside arbitrary application code, including
 * signal handlers.  The only system call after the ring exists is the
 * write to an eventfd that wakes the connection thread (a drain) or the
 * pager (pages, growth), at most once per request.  The crash handler
 * (crash.c) writes one record more, from a signal handler, by the same
 * rules: ring_write_crash().
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"
#include "ringmem.h"

/*
 * Ask the daemon for a drain once a ring is this fraction full.  The
 * daemon's drain thread visits busy rings on its own before that
 * (drain.c), so this is the call for help in a burst it did not see
 * coming: at half, the other half absorbs the time the request takes.
 */
#define TRACED_WAKE_FRACTION	2

/* Data bytes made ready when the ring is made (the rest: the pager). */
#define RING_PREP_FIRST		8192u
/*
 * A ring whose thread exited waits this long for a new thread to take
 * it in-band (proto/ring.h, Handover), then is finished the other way,
 * so that the daemon soon hears that its thread ended.
 */
#define RING_HANDOVER_WAIT	(100 * UINT64_C(1000000))	/* ns */
/* At most this many doublings asked for at once (16x). */
#define RING_GROW_STEPS		4u

TRACED_EXPORT __thread struct traced_thread traced_tls
    __attribute__((tls_model("initial-exec")));

/* Library-private per-thread state. */
struct lthread {
	struct lring	*ring;
	uint64_t	 lost[TRACED_DROP_PRODUCER_NCAUSES]; /* not yet
					   written as a LOST record */
	uint64_t	 prep_at;	/* position: look at the pager's
					   progress again (UINT64_MAX: the
					   whole ring is ready) */
	uint32_t	 order;		/* the ring's size now, 2^order */
	int		 grow_asked;	/* asked the pager for a bigger size */
	int		 grow_fast;	/* ... because its first pass went
					   fast (ring_fills_fast()) */
	int		 exited;	/* past its TLS destructor */
	int		 creating;	/* inside ring_create() */
};

static __thread struct lthread lthread
    __attribute__((tls_model("initial-exec")));

static pthread_key_t ring_key;

static void ring_thread_exit(void *arg);

void
ring_lib_init(void)
{
	(void)pthread_key_create(&ring_key, ring_thread_exit);
}

static uint64_t
ring_load_tail(const struct traced_thread *t)
{
	/* Pairs with the daemon's store-release of tail in drain.c. */
	return __atomic_load_n(&t->hdr->tail, __ATOMIC_ACQUIRE);
}

/*
 * Count one lost event of 'cause' for this thread.  The shared running
 * total is only ever written by this thread, so a plain load and store
 * suffice; the daemon reads it with relaxed loads.
 */
static void
ring_count_loss(struct traced_thread *t, enum traced_drop_cause cause)
{
	struct traced_ring_hdr *h = t->hdr;

	lthread.lost[cause]++;
	if (h != NULL)
		__atomic_store_n(&h->dropped[cause],
		    __atomic_load_n(&h->dropped[cause], __ATOMIC_RELAXED) + 1,
		    __ATOMIC_RELAXED);
	/* Every thread adds to this one: an atomic add, or counts go
	 * missing (only while no daemon is connected, a slow path). */
	if (cause == TRACED_DROP_DISCONNECTED)
		__atomic_fetch_add(&lib.lost_disconnected, 1,
		    __ATOMIC_RELAXED);
	/* Send the next event through the slow path to write the record. */
	t->limit = 0;
}

static uint64_t
ring_lost_pending(void)
{
	uint64_t n = 0;
	int i;

	for (i = 0; i < TRACED_DROP_PRODUCER_NCAUSES; i++)
		n += lthread.lost[i];
	return n;
}

/*
 * Set limit from a tail the caller loaded (see DESIGN above).
 */
static void
ring_set_limit(struct traced_thread *t, uint64_t tail)
{
	uint64_t lim, lap;

	if (ring_lost_pending() != 0) {
		t->limit = 0;
		return;
	}
	lim = tail + t->mask + 1;
	lap = traced_ring_lap_end(t->head, lthread.order);
	if (lap < lim)
		lim = lap;
	if (lthread.prep_at < lim)
		lim = lthread.prep_at;
	t->limit = lim;
}

/*
 * Ask the pager for a bigger ring: up to RING_GROW_STEPS doublings at
 * once, as the lap end where the ring switches allows (ring_grow_to()).
 */
static void
ring_ask_grow(struct lring *r, uint32_t order)
{
	uint32_t want = order + RING_GROW_STEPS;

	if (want > r->max_order)
		want = r->max_order;
	__atomic_store_n(&r->grow_want, want, __ATOMIC_RELEASE);
	lthread.grow_asked = 1;
	lthread.grow_fast = 0;
	lib_wake_pager();
}

/*
 * The largest order, at most 'ready', that the ring may switch to from
 * 'order' at lap end p: the last lap keeps its offsets only if
 * p = 2^order (mod 2^k) (proto/ring.h, Growth).  The first lap end of
 * a size allows any; an odd one at least twice the size.
 */
static uint32_t
ring_grow_to(uint64_t p, uint32_t order, uint32_t ready)
{
	uint64_t d = p - traced_ring_size(order);
	uint32_t k;

	if (p < traced_ring_size(order))
		return order;
	if (d == 0)
		return ready;
	k = (uint32_t)__builtin_ctzll(d);
	return k < ready ? k : ready;
}

/*
 * Does r, in the first pass through its size, fill at a pace that
 * fills the whole of it (size bytes) in less than TRACED_RING_HOLD_NS?
 * Measured over an eighth of the ring at least, so that a short burst
 * is not taken for a pace.  The daemon asks for the same (its grow
 * hint), but it knows the pace only after two visits, and a ring that
 * grows switches only at the lap ends that allow it (proto/ring.h):
 * asked here, while the first lap of a fast thread is young, the pager
 * has the new size ready at its end, the one lap end that allows any
 * size.  Seen without: 1 MiB rings at 4 M events/s a thread that
 * overflowed when the daemon's drain thread came 5 ms late, before
 * they had grown.
 */
static int
ring_fills_fast(const struct lring *r, uint64_t head, uint64_t size)
{
	uint64_t done = head - r->pass_head, dt;

	if (done < size / 8 || done > size)
		return 0;
	dt = traced_clock_monotonic() - r->pass_ns;
	/* dt < 2^27, size and done <= 2^30: no overflow. */
	return dt < TRACED_RING_HOLD_NS && dt * size < TRACED_RING_HOLD_NS *
	    done;
}

/*
 * The ring's first pass through its memory: keep the pager ahead of
 * the producer.  Asks for pages up to twice what the current pass
 * wrote so far (16 KiB at least, the ring's end at most), and looks
 * again half way there.  Once the pager reached the end, never again
 * until the ring grows.
 */
static void
ring_prep_check(struct traced_thread *t)
{
	struct lring *r = lthread.ring;
	uint64_t size = t->mask + 1, off = t->head & t->mask, ready, want;
	uint64_t d, dt;

	ready = __atomic_load_n(&r->prep_end, __ATOMIC_ACQUIRE);
	if (ready >= size) {
		lthread.prep_at = UINT64_MAX;
		return;
	}
	/*
	 * A ring that fills slowly (a quiet thread, or short threads that
	 * take it one after the other) faults its pages in itself: a
	 * fault per page is little at its pace, and the pager's work
	 * takes the process's memory map lock, which every new thread
	 * needs for its stack (measured: 2,000 short threads took 2x
	 * their untraced time with the pager following their ring, 1.2x
	 * without).
	 */
	d = t->head - r->rate_head;
	if (d >= RING_PREP_FIRST) {
		/* Over at least that many bytes: a pace, not a burst.
		 * Bytes per ms, without overflow after a long gap (the
		 * first pass of a size that came late). */
		dt = traced_clock_monotonic() - r->rate_ns;
		__atomic_store_n(&r->pace, dt == 0 ? UINT64_MAX :
		    d < (UINT64_C(1) << 40) ? d * UINT64_C(1000000) / dt :
		    d / (dt / UINT64_C(1000000) + 1), __ATOMIC_RELAXED);
		r->rate_ns += dt;
		r->rate_head = t->head;
	}
	if (lring_slow(r)) {
		/* Look again at the end of what is ready, or further. */
		lthread.prep_at = t->head + (off < ready ? ready - off :
		    RING_PREP_FIRST);
		return;
	}
	/*
	 * Twice what it wrote, in powers of two: a few requests per ring,
	 * however slowly it gets there (a ring taken by thread after
	 * short thread moves on a few hundred bytes at a time), since each
	 * one wakes the pager and takes the process's memory map lock,
	 * which new threads need too (their stacks).
	 */
	want = 16384;
	while (want < 2 * off + 16384 && want < size)
		want *= 2;
	if (want > size)
		want = size;
	if (want > __atomic_load_n(&r->prep_want, __ATOMIC_RELAXED)) {
		/* Only this thread writes prep_want. */
		__atomic_store_n(&r->prep_want, want, __ATOMIC_RELEASE);
		lib_wake_pager();
	}
	lthread.prep_at = t->head + (want - off) / 2;
	if (lthread.prep_at <= t->head)
		lthread.prep_at = t->head + 8;
	/*
	 * Past half of a first pass with nothing of it read yet: a burst
	 * the daemon cannot follow; or a pace that fills the ring too fast
	 * for the daemon's liking, which it sees too (its grow hint).  Ask
	 * for a bigger ring now, so that its first pages are ready at the
	 * lap end, the one place that allows any size.
	 */
	if (lthread.grow_asked || lthread.order >= r->max_order ||
	    !__atomic_load_n(&lib.connected, __ATOMIC_RELAXED))
		return;
	if ((off >= size / 2 && t->head - ring_load_tail(t) > size / 2) ||
	    __atomic_load_n(&t->hdr->grow, __ATOMIC_RELAXED))
		ring_ask_grow(r, lthread.order);
	else if (ring_fills_fast(r, t->head, size)) {
		ring_ask_grow(r, lthread.order);
		lthread.grow_fast = 1;	/* to be confirmed at the lap end */
	}
}

/*
 * At a lap end (head is a multiple of the ring size), with a tail just
 * loaded: ask for a bigger size if the ring is over half full or the
 * daemon would like it bigger, and switch to the largest this lap end
 * allows of what the pager made ready; or, at its first lap end or if
 * the ring is over half full with the next 'need' bytes, of what was
 * asked for.
 */
static void
ring_lap_end(struct traced_thread *t, uint64_t tail, uint32_t need)
{
	struct lring *r = lthread.ring;
	struct traced_ring_hdr *h = t->hdr;
	uint64_t size = t->mask + 1;
	uint32_t order = lthread.order, ready, k;

	if (order >= r->max_order)
		return;
	/*
	 * Asked for only because the first pass went fast: grow if the
	 * whole lap did.  A burst at a thread's start (thousands of events
	 * in its first milliseconds, then a few a second) looks like a fast
	 * pass an eighth of the way in; taken for one, the thread would
	 * keep a 16 MiB ring that its slow events fill in time.
	 */
	if (lthread.grow_asked && lthread.grow_fast &&
	    !ring_fills_fast(r, t->head, size)) {
		lthread.grow_asked = lthread.grow_fast = 0;
		__atomic_store_n(&r->grow_want, order, __ATOMIC_RELAXED);
	}
	if (!lthread.grow_asked && (t->head - tail > size / 2 ||
	    __atomic_load_n(&h->grow, __ATOMIC_RELAXED)) &&
	    __atomic_load_n(&lib.connected, __ATOMIC_RELAXED))
		ring_ask_grow(r, order);
	if (!lthread.grow_asked)
		return;
	ready = __atomic_load_n(&r->grow_ready, __ATOMIC_ACQUIRE);
	/*
	 * At the ring's first lap end, the one that allows any size (the
	 * next ones allow twice the size at most, every other lap), or over
	 * half full here (the daemon is behind): rather the page faults of
	 * new memory the pager has not made yet (the producer takes them
	 * itself, as a slow one does) than staying small, and dropping what
	 * comes before a later lap end lets the ring grow.  Seen: 1 MiB
	 * rings at 4 M events/s a thread, asked to grow 0.5 ms into their
	 * first lap, still waiting for the pager at its end (a busy loop
	 * held the CPU it and the daemon wanted), then full 8 ms later at
	 * 2 MiB.
	 */
	if (t->head == size || t->head + need - tail > size / 2)
		ready = __atomic_load_n(&r->grow_want, __ATOMIC_RELAXED);
	if (ready > r->max_order)
		ready = r->max_order;
	k = ring_grow_to(t->head, order, ready);
	if (k <= order)
		return;
	/*
	 * Grow.  The daemon maps positions with the order it loads after
	 * head: this store comes before the store of any head past here.
	 */
	order = k;
	lthread.order = order;
	lthread.grow_asked = lthread.grow_fast = 0;
	lring_ready_raise(r, order);	/* if it did not wait for the pager */
	__atomic_store_n(&h->order, order, __ATOMIC_RELAXED);
	t->mask = traced_ring_size(order) - 1;
	t->wake_at = t->head;
	lthread.prep_at = t->head;	/* look at the pager again */
	r->pass_ns = traced_clock_monotonic();	/* a first pass again */
	r->pass_head = t->head;
}

/*
 * Make r, new or reused, this thread's ring: the fast path's view of
 * it (traced_tls) and the slow path's (lthread).  r is new, reused
 * (empty: the daemon read everything before its head) or taken in-band
 * (perhaps not).
 */
static void
ring_attach(struct traced_thread *t, struct lring *r, int sent)
{
	struct traced_ring_hdr *h = r->hdr;
	uint64_t size, tail;

	(void)pthread_setspecific(ring_key, r);
	lthread.ring = r;
	lthread.order = __atomic_load_n(&h->order, __ATOMIC_RELAXED);
	lthread.grow_asked = lthread.grow_fast = 0;
	size = traced_ring_size(lthread.order);
	t->hdr = h;
	t->data = r->data;
	t->mask = size - 1;
	t->head = __atomic_load_n(&h->head, __ATOMIC_RELAXED);
	/* Its pace is this thread's, from here (ring_fills_fast()). */
	r->pass_ns = traced_clock_monotonic();
	r->pass_head = t->head;
	/* Where the pager stands: ring_prep_check() at the next event. */
	lthread.prep_at = __atomic_load_n(&r->prep_end, __ATOMIC_ACQUIRE) >=
	    size ? UINT64_MAX : t->head;
	tail = ring_load_tail(t);
	if (t->head - tail > size)
		tail = t->head - size;
	/* A ring taken in-band may hold what the thread before wrote. */
	t->wake_at = tail + size / TRACED_WAKE_FRACTION;
	if (t->wake_at < t->head)
		t->wake_at = t->head;
	ring_set_limit(t, tail);
	/* Not sent from here: the connection thread sends it. */
	if (!sent)
		lib_wake();
	/* A stack for its crash record's handler (crash.c). */
	crash_thread_start(r);
}

/*
 * Where a record of 'len' bytes written outside a trace call goes (a
 * LOST record at thread exit, a THREAD record in a ring taken in-band),
 * the head being at 'head', the daemon's tail at 'tail' and the ring
 * 2^order bytes: at the head, or at the lap end after a PAD if it would
 * cross it.  UINT64_MAX if there is no room for it now.
 */
static uint64_t
ring_place(uint64_t head, uint64_t tail, uint32_t order, uint32_t len)
{
	uint64_t size = traced_ring_size(order), at = head;

	if ((head & (size - 1)) != 0 && head + len > traced_ring_lap_end(head,
	    order))
		at = traced_ring_lap_end(head, order);
	return at + len <= tail + size ? at : UINT64_MAX;
}

/* A PAD record at 'head' of a ring whose data is 'data', to 'lap_end'. */
static void
ring_pad(uint8_t *data, uint64_t mask, uint64_t head, uint64_t lap_end)
{
	uint32_t pad[2];

	pad[0] = TRACED_EVENT_PAD;
	pad[1] = (uint32_t)(lap_end - head);
	memcpy(data + (head & mask), pad, sizeof(pad));
}

/*
 * Losses this thread counted before it had a ring (nested calls) go on
 * the ring's running totals: its first LOST record tells them.
 */
static void
ring_charge_pending(struct traced_ring_hdr *h)
{
	int i;

	for (i = 0; i < TRACED_DROP_PRODUCER_NCAUSES; i++)
		__atomic_store_n(&h->dropped[i], __atomic_load_n(
		    &h->dropped[i], __ATOMIC_RELAXED) + lthread.lost[i],
		    __ATOMIC_RELAXED);
}

/*
 * Take r, a ring whose thread exited and which waits for a new thread,
 * in-band (proto/ring.h, Handover): a THREAD record at its head (after
 * a PAD to the lap end if it does not fit before it) names this thread
 * and its new ring number.  Only when it is at most half full, as for
 * a drain request, so that the thread has room for a burst.  Locked.
 * Returns 0, or -1 if it has no room now (the daemon is behind): it is
 * left waiting.
 */
static int
ring_take_locked(struct lring *r)
{
	struct traced_ring_hdr *h = r->hdr;
	struct traced_thread_rec tr;
	struct traced_rec_hdr rh;
	uint64_t head, tail, at, mask;
	uint32_t order;

	order = __atomic_load_n(&h->order, __ATOMIC_RELAXED);
	mask = traced_ring_size(order) - 1;
	head = __atomic_load_n(&h->head, __ATOMIC_RELAXED);
	/* Pairs with the daemon's store-release of tail in drain.c. */
	tail = __atomic_load_n(&h->tail, __ATOMIC_ACQUIRE);
	if (head - tail > (mask + 1) / TRACED_WAKE_FRACTION ||
	    (at = ring_place(head, tail, order, TRACED_THREAD_REC_SIZE)) ==
	    UINT64_MAX)
		return -1;
	if (at != head)
		ring_pad(r->data, mask, head, at);
	r->handover = 0;
	__atomic_store_n(&lib.nhandover, lib.nhandover - 1, __ATOMIC_RELAXED);
	r->tid = (pid_t)gettid();
	r->index = lib.nrings++;
	rh.id = TRACED_EVENT_THREAD;
	rh.size = TRACED_THREAD_REC_SIZE;
	rh.ts = traced_clock_now();
	tr.tid = (uint32_t)r->tid;
	tr.index = r->index;
	memcpy(r->data + (at & mask), &rh, sizeof(rh));
	memcpy(r->data + (at & mask) + sizeof(rh), &tr, sizeof(tr));
	h->tid = tr.tid;
	h->since = rh.ts;
	ring_charge_pending(h);
	/* Pairs with the daemon's load-acquire of head. */
	__atomic_store_n(&h->head, at + TRACED_THREAD_REC_SIZE,
	    __ATOMIC_RELEASE);
	return 0;
}

/*
 * A ring waiting for a new thread in-band that this thread can take
 * (ring_take_locked()), taken.  Locked.  Returns it, or NULL.
 */
static struct lring *
ring_take_any_locked(uint32_t max_order)
{
	struct lring *r;

	if (__atomic_load_n(&lib.nhandover, __ATOMIC_RELAXED) == 0 ||
	    __atomic_load_n(&lib.connected, __ATOMIC_RELAXED) == 0)
		return NULL;
	/* Only one the daemon reads (it may not have taken the ring's
	 * RING message yet, or refused it: then it waits, and is finished
	 * the other way if it never is). */
	for (r = lib.rings; r != NULL; r = r->next)
		if (r->handover && r->max_order == max_order &&
		    __atomic_load_n(&r->hdr->reading, __ATOMIC_RELAXED) &&
		    ring_take_locked(r) == 0)
			return r;
	return NULL;
}

/*
 * Rings that waited for a new thread since before 'now' less
 * RING_HANDOVER_WAIT (all of them if 'all') are finished the other way
 * (proto/ring.h, Reuse): the daemon ends them and hears that their
 * thread exited.  The connection thread then asks for their last drain.
 * Locked.  Returns how many still wait.
 */
int
ring_handover_end_locked(uint64_t now, int all)
{
	struct lring *r;
	int left = 0;

	if (__atomic_load_n(&lib.nhandover, __ATOMIC_RELAXED) == 0) {
		/* None left: the next to wait wakes the connection
		 * thread again (ring_thread_exit()). */
		__atomic_store_n(&lib.handover_watch, 0, __ATOMIC_RELAXED);
		return 0;
	}
	for (r = lib.rings; r != NULL; r = r->next) {
		if (!r->handover)
			continue;
		if (!all && now - r->handover_at < RING_HANDOVER_WAIT) {
			left++;
			continue;
		}
		r->handover = 0;
		__atomic_store_n(&lib.nhandover, lib.nhandover - 1,
		    __ATOMIC_RELAXED);
		/* Pairs with the daemon's load-acquire of flags. */
		__atomic_store_n(&r->hdr->flags, TRACED_RING_FINISHED,
		    __ATOMIC_RELEASE);
		__atomic_store_n(&r->finished, 1, __ATOMIC_RELEASE);
	}
	return left;
}

/*
 * Give this thread a ring an exited thread left, if the daemon is done
 * with one (proto/ring.h, Reuse): no memfd, no mapping, its pages made
 * already.  Locked.  Returns it, or NULL.
 */
static struct lring *
ring_reuse_locked(uint32_t max_order)
{
	struct traced_ring_hdr *h;
	struct lring *r;
	int i;

	if (__atomic_load_n(&lib.connected, __ATOMIC_RELAXED) == 0)
		return NULL;
	for (r = lib.rings; r != NULL; r = r->next)
		if (__atomic_load_n(&r->finished, __ATOMIC_ACQUIRE) &&
		    r->told_end && !r->pager_busy &&
		    r->max_order == max_order &&
		    /* Pairs with the daemon's release in drain.c. */
		    __atomic_load_n(&r->hdr->released, __ATOMIC_ACQUIRE))
			break;
	if (r == NULL)
		return NULL;
	h = r->hdr;
	/*
	 * A new ring for the daemon: a new number, this thread's id, no
	 * flags.  Positions go on from the old head (the daemon read up to
	 * it), and the old thread's losses were told when the daemon ended
	 * its ring, so they count as recorded.
	 */
	h->tid = (uint32_t)gettid();
	h->since = traced_clock_now();
	for (i = 0; i < TRACED_DROP_PRODUCER_NCAUSES; i++)
		__atomic_store_n(&h->recorded[i], __atomic_load_n(
		    &h->dropped[i], __ATOMIC_RELAXED), __ATOMIC_RELAXED);
	ring_charge_pending(h);
	__atomic_store_n(&h->released, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&h->wakeup, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&h->flags, 0, __ATOMIC_RELEASE);
	r->tid = (pid_t)h->tid;
	r->index = lib.nrings++;
	r->sent = 0;
	r->notify = 0;
	r->told_end = 0;
	__atomic_store_n(&r->finished, 0, __ATOMIC_RELEASE);
	return r;
}

/*
 * Create this thread's ring and publish it to the library, which sends
 * it to the daemon.  Returns 0 or -1.  Allocates and makes system
 * calls: once per thread.
 */
static int
ring_create(struct traced_thread *t)
{
	uint64_t size, first;
	uint32_t max_order, order;
	struct traced_ring_hdr *h;
	struct lring *r;
	size_t map_len;
	uint8_t *base;
	int fd, i, sent, spare, ask;

	/* A thread may trace before any provider registered. */
	pthread_mutex_lock(&lib.lock);
	lib_init_locked();
	max_order = __atomic_load_n(&lib.ring_order, __ATOMIC_RELAXED);
	if (!lib.disabled && (r = ring_take_any_locked(max_order)) != NULL) {
		pthread_mutex_unlock(&lib.lock);
		ring_attach(t, r, 1);	/* nothing to send */
		return 0;
	}
	if (!lib.disabled && (r = ring_reuse_locked(max_order)) != NULL) {
		sent = conn_ring_created_locked(r);
		pthread_mutex_unlock(&lib.lock);
		ring_attach(t, r, sent);
		return 0;
	}
	/* A ring from the daemon's pool, if we hold one. */
	spare = -1;
	if (!lib.disabled && lib.spare_fd != -1) {
		spare = lib.spare_fd;
		lib.spare_fd = -1;
	} else if (lib.spare_seen) {
		/*
		 * The daemon has a pool and this thread found none left:
		 * ask for one for the next thread (once this RING is out).
		 * Not after every take: a program of one busy thread would
		 * hold a second ring it never uses.
		 */
		lib.spare_ask = 1;
	}
	pthread_mutex_unlock(&lib.lock);
	/* TRACED_RING_START, at most the size the ring may grow to. */
	order = lib.ring_start_order;
	if (order > max_order)
		order = max_order;
	map_len = (size_t)traced_ring_file_size(max_order);
	if (lib.disabled)
		return -1;
	r = calloc(1, sizeof(*r));
	if (r == NULL) {
		if (spare != -1)
			close(spare);
		return -1;
	}
	base = MAP_FAILED;
	if (spare != -1) {
		/*
		 * Its pages are made: it starts at its largest size, which
		 * costs no memory that is not spent already, and no pager
		 * work is left.  Unmappable, it goes; a memfd of our own
		 * serves.
		 */
		fd = spare;
		/* Aligned: the kernel maps its 2 MiB pages whole. */
		base = ringmem_map_aligned(fd, map_len);
		if (base == MAP_FAILED)
			close(fd);
		else
			order = max_order;
	}
	if (base == MAP_FAILED) {
		spare = -1;
		fd = ringmem_create(max_order);
		if (fd == -1)
			goto fail;
		/* One mapping, nothing populated: the memfd is sparse. */
		base = mmap(NULL, map_len, PROT_READ | PROT_WRITE, MAP_SHARED,
		    fd, 0);
		if (base == MAP_FAILED)
			goto fail_fd;
	}
	size = traced_ring_size(order);
	/*
	 * The header and the first data pages now, so that the thread's
	 * next events do not fault; the pager makes the rest when the
	 * thread gets near them.  A pool ring is ready whole.
	 */
	first = spare != -1 ? size : size < RING_PREP_FIRST ? size :
	    RING_PREP_FIRST;
	if (spare == -1)
		pager_prepare(base, TRACED_RING_HDR_SIZE + first);
	h = (struct traced_ring_hdr *)(void *)base;
	h->magic = TRACED_RING_MAGIC;
	h->version = TRACED_RING_VERSION;
	h->max_order = max_order;
	h->init_order = order;
	h->order = order;
	h->tid = (uint32_t)gettid();
	h->since = traced_clock_now();
	h->wakeup = 1;
	/* Losses counted before the ring existed (nested calls). */
	for (i = 0; i < TRACED_DROP_PRODUCER_NCAUSES; i++)
		h->dropped[i] = lthread.lost[i];

	r->hdr = h;
	r->data = base + TRACED_RING_HDR_SIZE;
	r->map_len = map_len;
	r->fd = fd;
	r->max_order = max_order;
	r->init_order = order;
	r->tid = (pid_t)h->tid;
	r->prep_end = first;
	r->prep_want = first;
	if (spare != -1)
		r->huge_end = size;	/* nothing for the pager to offer */
	r->rate_ns = traced_clock_monotonic();
	r->pace = UINT64_MAX;
	r->grow_ready = order;

	pthread_mutex_lock(&lib.lock);
	r->index = lib.nrings++;
	r->next = lib.rings;
	lib.rings = r;
	(void)pager_start_locked();
	(void)conn_start_locked();	/* after fork(), in the child */
	sent = conn_ring_created_locked(r);
	if (lib.child_wait) {
		lib.child_wait = 0;
		lib_wait_session_locked();
	}
	ask = lib.spare_ask;
	pthread_mutex_unlock(&lib.lock);
	ring_attach(t, r, sent);
	if (sent && ask)
		lib_wake();	/* to ask for the next pool ring */
	return 0;

fail_fd:
	close(fd);
fail:
	free(r);
	return -1;
}

/*
 * Write a LOST record with this thread's pending tally at the head.
 * The caller checked that it fits.
 */
static void
ring_write_lost(struct traced_thread *t, uint64_t n)
{
	struct traced_rec_hdr *r;
	struct traced_lost lost;
	int i;

	r = (struct traced_rec_hdr *)(void *)(t->data + (t->head & t->mask));
	r->id = TRACED_EVENT_LOST;
	r->size = TRACED_LOST_REC_SIZE;
	r->ts = traced_clock_now();
	lost.count = n;
	for (i = 0; i < TRACED_DROP_PRODUCER_NCAUSES; i++) {
		lost.cause[i] = lthread.lost[i];
		lthread.lost[i] = 0;
		/* Only this thread writes it; the daemon reads it after it
		 * saw the record (published by the next head store). */
		__atomic_store_n(&t->hdr->recorded[i], t->hdr->recorded[i] +
		    lost.cause[i], __ATOMIC_RELAXED);
	}
	memcpy(r + 1, &lost, sizeof(lost));
	t->head += TRACED_LOST_REC_SIZE;
	/* The event's commit publishes it with its own release store. */
}

/* Fill the rest of the lap with a PAD record; head moves to the lap end. */
static void
ring_write_pad(struct traced_thread *t, uint64_t lap_end)
{
	ring_pad(t->data, t->mask, t->head, lap_end);
	t->head = lap_end;
	/* Published with the next record's head, like a LOST record. */
}

void *
traced_reserve_slow(uint32_t id, uint32_t size)
{
	struct traced_thread *t = &traced_tls;
	struct traced_rec_hdr *r;
	uint64_t lost, need, ring_size, tail, lap;
	int saved_errno = errno;

	if (t->nest != 1) {
		/* A signal handler traced while this thread was inside a
		 * trace call: drop it rather than corrupt that record. */
		ring_count_loss(t, TRACED_DROP_NESTED);
		goto drop;
	}
	if (t->data == NULL) {
		if (lthread.exited || lthread.creating)
			goto drop;
		lthread.creating = 1;
		if (ring_create(t) == -1) {
			lthread.creating = 0;
			goto drop;
		}
		lthread.creating = 0;
	}
	ring_size = t->mask + 1;
	tail = ring_load_tail(t);
	if (t->head - tail > ring_size)
		tail = t->head - ring_size;	/* a daemon wrote nonsense */
	if (size < TRACED_REC_HDR_SIZE || size > TRACED_REC_MAX ||
	    size + TRACED_LOST_REC_SIZE > ring_size) {
		ring_count_loss(t, TRACED_DROP_RING_FULL);
		goto drop;
	}
	lost = ring_lost_pending();
	need = size + (lost ? TRACED_LOST_REC_SIZE : 0);

	/* A lap end: pad to it if the record does not fit before it. */
	lap = traced_ring_lap_end(t->head, lthread.order);
	if ((t->head & t->mask) != 0 && t->head + need > lap) {
		if (lap > tail + ring_size)
			goto full;	/* no room for the PAD either */
		ring_write_pad(t, lap);
	}
	if ((t->head & t->mask) == 0 && t->head != 0) {
		ring_lap_end(t, tail, need);
		ring_size = t->mask + 1;
	}
	if (t->head + need > tail + ring_size)
		goto full;
	if (lthread.prep_at <= t->head + need)
		ring_prep_check(t);
	if (lost)
		ring_write_lost(t, lost);
	r = (struct traced_rec_hdr *)(void *)(t->data + (t->head & t->mask));
	r->id = id;
	r->size = size;
	r->ts = traced_clock_now();
	/* limit for the records after this one: from the head after it. */
	t->head += size;
	ring_set_limit(t, tail);
	t->head -= size;
	errno = saved_errno;
	/* nest stays raised: traced_commit() lowers it. */
	return r;

full:
	/* The daemon falls behind: a bigger ring, if it may grow. */
	if (!lthread.grow_asked && lthread.order < lthread.ring->max_order &&
	    __atomic_load_n(&lib.connected, __ATOMIC_RELAXED))
		ring_ask_grow(lthread.ring, lthread.order);
	ring_count_loss(t, __atomic_load_n(&lib.connected,
	    __ATOMIC_RELAXED) ? TRACED_DROP_RING_FULL :
	    TRACED_DROP_DISCONNECTED);
drop:
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	t->nest--;
	errno = saved_errno;
	return NULL;
}

void
traced_wake_slow(void)
{
	struct traced_thread *t = &traced_tls;
	uint64_t ring_size = t->mask + 1, tail, step = ring_size / 8;
	struct traced_ring_hdr *h = t->hdr;
	struct lring *r = lthread.ring;
	int saved_errno = errno;

	tail = ring_load_tail(t);
	/* A pending LOST record keeps limit at 0, forcing the slow path. */
	if (t->head - tail <= ring_size)
		ring_set_limit(t, tail);
	if (t->head - tail < ring_size / TRACED_WAKE_FRACTION) {
		t->wake_at = tail + ring_size / TRACED_WAKE_FRACTION;
		errno = saved_errno;
		return;
	}
	/*
	 * Over the threshold.  Ask for a drain only if the daemon armed
	 * the flag since its last drain: it re-arms after each one, so
	 * this costs one wakeup per drain cycle at most.
	 */
	if (r != NULL && __atomic_load_n(&h->wakeup, __ATOMIC_RELAXED)) {
		__atomic_store_n(&h->wakeup, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&r->notify, 1, __ATOMIC_RELEASE);
		lib_wake();
	}
	t->wake_at = t->head + step;
	errno = saved_errno;
}

/*
 * Write a CRASH record saying 'c' at this thread's head and publish it:
 * the crash handler's (crash.c).  A thread inside a trace call (nest !=
 * 0) has a record half written there, and its own copies of head and
 * order may be half way through a change: the record goes at the head
 * the header holds, over the half-written one, only if 'dying' (that
 * call never runs again); otherwise the crash is counted lost as
 * nested, like any event a signal handler traces there.  A full ring
 * counts it lost too.  Async-signal-safe: no lock, no allocation, no
 * page made but the one it lands on; the one system call asks the
 * connection thread for a drain (the daemon also drains the ring to its
 * end when the process is gone).  Returns 1 if written, 0 if not.
 */
int
ring_write_crash(const struct traced_crash *c, int dying)
{
	struct traced_thread *t = &traced_tls;
	struct traced_ring_hdr *h = t->hdr;
	struct lring *r = lthread.ring;
	struct traced_rec_hdr rh;
	uint64_t head, tail, at, mask;
	uint32_t order;

	if (t->data == NULL || h == NULL || r == NULL || lthread.exited)
		return 0;		/* no ring to write into */
	if (t->nest != 0 && !dying) {
		ring_count_loss(t, TRACED_DROP_NESTED);
		return 0;
	}
	order = __atomic_load_n(&h->order, __ATOMIC_RELAXED);
	mask = traced_ring_size(order) - 1;
	head = __atomic_load_n(&h->head, __ATOMIC_RELAXED);
	tail = ring_load_tail(t);
	if (head - tail > mask + 1)
		tail = head - (mask + 1);	/* a daemon wrote nonsense */
	at = ring_place(head, tail, order, TRACED_CRASH_REC_SIZE);
	if (at == UINT64_MAX) {
		ring_count_loss(t, __atomic_load_n(&lib.connected,
		    __ATOMIC_RELAXED) ? TRACED_DROP_RING_FULL :
		    TRACED_DROP_DISCONNECTED);
		return 0;
	}
	if (at != head)
		ring_pad(t->data, mask, head, at);
	rh.id = TRACED_EVENT_CRASH;
	rh.size = TRACED_CRASH_REC_SIZE;
	rh.ts = traced_clock_now();
	memcpy(t->data + (at & mask), &rh, sizeof(rh));
	memcpy(t->data + (at & mask) + sizeof(rh), c, sizeof(*c));
	/* Pairs with the daemon's load-acquire of head in drain.c. */
	__atomic_store_n(&h->head, at + TRACED_CRASH_REC_SIZE,
	    __ATOMIC_RELEASE);
	if (t->nest == 0) {
		/* The thread goes on if a handler of the program's says
		 * so: its next event finds its limit in the slow path. */
		t->head = at + TRACED_CRASH_REC_SIZE;
		t->limit = 0;
	}
	if (__atomic_load_n(&h->wakeup, __ATOMIC_RELAXED)) {
		__atomic_store_n(&h->wakeup, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&r->notify, 1, __ATOMIC_RELEASE);
		lib_wake();
	}
	return 1;
}

/*
 * r's thread exits with no loss left to write: keep r for the next new
 * thread to take in-band (proto/ring.h, Handover), if every loss it
 * counted is told in the ring and the daemon reads it over this
 * connection.  The connection thread finishes it the other way if no
 * thread takes it soon, so it must be watching; a ring a quarter full
 * asks for a drain now, before the next thread needs the room.
 * *wake: lib_wake() is due.  Locked.  Returns 1 if kept.
 */
static int
ring_keep_locked(struct lring *r, int *wake)
{
	struct traced_ring_hdr *h = r->hdr;
	uint64_t fill;
	int i;

	*wake = 0;
	if (lib.state != CONN_UP || !r->sent || lib.disabled)
		return 0;
	for (i = 0; i < TRACED_DROP_PRODUCER_NCAUSES; i++)
		if (__atomic_load_n(&h->dropped[i], __ATOMIC_RELAXED) !=
		    __atomic_load_n(&h->recorded[i], __ATOMIC_RELAXED))
			return 0;
	r->handover = 1;
	r->handover_at = traced_clock_monotonic();
	__atomic_store_n(&lib.nhandover, lib.nhandover + 1, __ATOMIC_RELAXED);
	*wake = !lib.handover_watch;
	__atomic_store_n(&lib.handover_watch, 1, __ATOMIC_RELAXED);
	/* Pairs with the daemon's store-release of tail in drain.c. */
	fill = __atomic_load_n(&h->head, __ATOMIC_RELAXED) -
	    __atomic_load_n(&h->tail, __ATOMIC_ACQUIRE);
	if (fill >= traced_ring_size(__atomic_load_n(&h->order,
	    __ATOMIC_RELAXED)) / 4 &&
	    __atomic_load_n(&h->wakeup, __ATOMIC_RELAXED)) {
		__atomic_store_n(&h->wakeup, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&r->notify, 1, __ATOMIC_RELEASE);
		*wake = 1;
	}
	return 1;
}

/*
 * TLS destructor: the thread is exiting.  Mark the ring finished so the
 * daemon drains and closes its stream; the connection thread releases
 * the memory once the daemon was told.
 */
static void
ring_thread_exit(void *arg)
{
	struct lring *r = arg;
	struct traced_thread *t = &traced_tls;
	uint64_t at;
	int told = 0, keep, wake;

	/* Before another thread may take the ring and its signal stack. */
	crash_thread_end();
	/* Say what was lost since the last record, if there is room. */
	if (r != NULL && t->data != NULL && t->nest == 0 &&
	    ring_lost_pending() != 0 && (at = ring_place(t->head,
	    ring_load_tail(t), lthread.order, TRACED_LOST_REC_SIZE)) !=
	    UINT64_MAX) {
		if (at != t->head)
			ring_write_pad(t, at);
		ring_write_lost(t, ring_lost_pending());
		__atomic_store_n(&t->hdr->head, t->head, __ATOMIC_RELEASE);
	}
	keep = r != NULL && t->data != NULL && t->nest == 0 &&
	    ring_lost_pending() == 0;
	lthread.exited = 1;
	memset(t, 0, sizeof(*t));
	lthread.ring = NULL;
	if (r == NULL)
		return;
	if (keep && pthread_mutex_trylock(&lib.lock) == 0) {
		keep = ring_keep_locked(r, &wake);
		pthread_mutex_unlock(&lib.lock);
		if (wake)
			lib_wake();
		if (keep)
			return;
	}
	/* Pairs with the daemon's load-acquire of flags after head. */
	__atomic_store_n(&r->hdr->flags, TRACED_RING_FINISHED,
	    __ATOMIC_RELEASE);
	/*
	 * The last touch of r: once the connection thread sees finished
	 * it may free r at once, so nothing here may follow this store
	 * but under the lock, which keeps it from doing so.  The final
	 * drain is asked for from here if the lock is free and the socket
	 * has room; else the connection thread asks.
	 */
	if (pthread_mutex_trylock(&lib.lock) == 0) {
		__atomic_store_n(&r->finished, 1, __ATOMIC_RELEASE);
		told = conn_ring_finished_locked(r);
		pthread_mutex_unlock(&lib.lock);
	} else
		__atomic_store_n(&r->finished, 1, __ATOMIC_RELEASE);
	if (!told)
		lib_wake();
}

/* Unmap and close a ring the daemon no longer needs from us.  Locked. */
void
ring_free(struct lring *r)
{
	crash_stack_free(r);
	munmap(r->hdr, r->map_len);
	close(r->fd);
	free(r);
}

/*
 * The events a finished ring holds that no daemon read: walked from
 * tail to head (every unread position maps with the current order,
 * proto/ring.h), stopping at anything that is not a record.
 */
static uint64_t
ring_unread_events(const struct lring *r)
{
	const struct traced_ring_hdr *h = r->hdr;
	uint64_t p, head, mask, n = 0;
	uint32_t size, id;

	head = __atomic_load_n(&h->head, __ATOMIC_ACQUIRE);
	mask = traced_ring_size(__atomic_load_n(&h->order,
	    __ATOMIC_RELAXED)) - 1;
	p = __atomic_load_n(&h->tail, __ATOMIC_ACQUIRE);
	if (head - p > mask + 1)
		return 0;		/* not a state a reader left */
	while (head - p >= TRACED_PAD_MIN) {
		const struct traced_rec_hdr *rec =
		    (const void *)(r->data + (p & mask));

		id = rec->id;
		size = rec->size & TRACED_REC_SIZE_MASK;
		if (size < TRACED_PAD_MIN || size % 8 != 0 ||
		    size > head - p || (p & mask) + size > mask + 1)
			break;
		if (id >= TRACED_EVENT_ID_BASE)
			n++;
		p += size;
	}
	return n;
}

/*
 * Free a finished ring no daemon will read again (none is connected):
 * the events it still holds are lost, and counted as such, for the
 * next daemon's session to report (lost while disconnected).  Locked.
 */
void
ring_free_unread(struct lring *r)
{
	uint64_t n = ring_unread_events(r);

	if (n > 0) {
		__atomic_fetch_add(&lib.lost_disconnected, n,
		    __ATOMIC_RELAXED);
		DEBUG("ring of thread %d: %llu events no daemon read", r->tid,
		    (unsigned long long)n);
	}
	ring_free(r);
}

/*
 * After fork(), in the child: the rings still mapped are the parent's.
 * Forget them without touching their memory, and make this thread
 * start a ring of its own at its next event.
 */
void
ring_atfork_child(void)
{
	struct lring *r, *next;

	crash_thread_end();
	for (r = lib.rings; r != NULL; r = next) {
		next = r->next;
		crash_stack_free(r);
		munmap(r->hdr, r->map_len);
		close(r->fd);
		free(r);
	}
	lib.rings = NULL;
	lib.nrings = 0;
	lib.nhandover = 0;
	lib.handover_watch = 0;
	memset(&traced_tls, 0, sizeof(traced_tls));
	memset(&lthread, 0, sizeof(lthread));
	(void)pthread_setspecific(ring_key, NULL);
}
