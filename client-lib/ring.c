/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * The producer side of the per-thread rings (layout: proto/ring.h): the
 * slow paths behind the inline traced_reserve()/traced_commit() of
 * traced.h, ring creation on a thread's first enabled event, loss
 * accounting and the thread-exit handoff.
 *
 * DESIGN
 *
 * The fast path is inline in the traced program and checks one thing:
 * that the record fits below 'limit', the cached tail plus the ring
 * size.  Everything unusual forces it here by making that check fail:
 * no ring yet (limit 0), a loss record due (limit 0), a full ring by
 * the cached tail (reload the real one), a nested call (nest != 0).
 *
 * Losses are counted per thread and per cause, in the shared header
 * (running totals, for the daemon) and in a private tally that becomes
 * a TRACED_EVENT_LOST record in front of the next event that fits, so
 * the trace shows where and how much was lost.
 *
 * Nothing here may block, allocate (after the ring exists), print or
 * change errno: it runs inside arbitrary application code, including
 * signal handlers.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <fcntl.h>

#include "internal.h"

/*
 * Ask the daemon for a drain once a ring is this fraction full: early
 * enough that the rest of the ring absorbs the time a drain takes to
 * start (a burst, the wakeup, the daemon's turn), late enough that the
 * wakeup costs once per quarter ring.
 */
#define TRACED_WAKE_FRACTION	4

TRACED_EXPORT __thread struct traced_thread traced_tls
    __attribute__((tls_model("initial-exec")));

/* Library-private per-thread state. */
struct lthread {
	struct lring	*ring;
	uint64_t	 lost[TRACED_DROP_PRODUCER_NCAUSES]; /* not yet
					   written as a LOST record */
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
	/* Pairs with the daemon's store-release of tail in writeout.c. */
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
	if (cause == TRACED_DROP_DISCONNECTED)
		__atomic_store_n(&lib.lost_disconnected,
		    __atomic_load_n(&lib.lost_disconnected,
		    __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
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
 * Create this thread's ring and publish it to the library, which sends
 * it to the daemon.  Returns 0 or -1.  Allocates and makes system
 * calls: once per thread.
 */
static int
ring_create(struct traced_thread *t)
{
	size_t size, file_len, map_len;
	uint32_t order;
	struct traced_ring_hdr *h;
	struct lring *r;
	uint8_t *base;
	int fd;

	/* A thread may trace before any provider registered. */
	pthread_mutex_lock(&lib.lock);
	lib_init_locked();
	pthread_mutex_unlock(&lib.lock);
	order = __atomic_load_n(&lib.ring_order, __ATOMIC_RELAXED);
	size = (size_t)traced_ring_size(order);
	file_len = TRACED_RING_HDR_SIZE + size;
	map_len = TRACED_RING_HDR_SIZE + 2 * size;
	if (lib.disabled)
		return -1;
	r = calloc(1, sizeof(*r));
	if (r == NULL)
		return -1;
	fd = memfd_create("traced-ring", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd == -1)
		goto fail;
	if (ftruncate(fd, (off_t)file_len) == -1 ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW |
	    F_SEAL_SEAL) == -1)
		goto fail_fd;
	/* Reserve the address range, then map the data area twice. */
	base = mmap(NULL, map_len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
	    -1, 0);
	if (base == MAP_FAILED)
		goto fail_fd;
	/*
	 * MAP_POPULATE, on both copies: the pages and their page table
	 * entries are made now, not by page faults in the middle of
	 * later trace calls (a fault can sleep on mmap_lock while another
	 * thread of the process maps something).
	 */
	if (mmap(base, file_len, PROT_READ | PROT_WRITE,
	    MAP_SHARED | MAP_FIXED | MAP_POPULATE, fd, 0) == MAP_FAILED ||
	    mmap(base + file_len, size, PROT_READ | PROT_WRITE,
	    MAP_SHARED | MAP_FIXED | MAP_POPULATE, fd,
	    TRACED_RING_HDR_SIZE) == MAP_FAILED) {
		munmap(base, map_len);
		goto fail_fd;
	}
	h = (struct traced_ring_hdr *)(void *)base;
	h->magic = TRACED_RING_MAGIC;
	h->version = TRACED_RING_VERSION;
	h->order = order;
	h->tid = (uint32_t)gettid();
	h->wakeup = 1;
	/* Losses counted before the ring existed (nested calls). */
	{
		int i;

		for (i = 0; i < TRACED_DROP_PRODUCER_NCAUSES; i++)
			h->dropped[i] = lthread.lost[i];
	}

	r->hdr = h;
	r->map_len = map_len;
	r->fd = fd;
	r->order = order;
	r->tid = (pid_t)h->tid;

	pthread_mutex_lock(&lib.lock);
	r->index = lib.nrings++;
	r->next = lib.rings;
	lib.rings = r;
	(void)conn_start_locked();	/* after fork(), in the child */
	conn_ring_created_locked(r);
	if (lib.child_wait) {
		lib.child_wait = 0;
		lib_wait_session_locked();
	}
	pthread_mutex_unlock(&lib.lock);
	(void)pthread_setspecific(ring_key, r);

	lthread.ring = r;
	t->hdr = h;
	t->data = base + TRACED_RING_HDR_SIZE;
	t->mask = size - 1;
	t->head = 0;
	t->limit = ring_lost_pending() ? 0 : size;
	t->wake_at = size / TRACED_WAKE_FRACTION;
	lib_wake();
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

void *
traced_reserve_slow(uint32_t id, uint32_t size)
{
	struct traced_thread *t = &traced_tls;
	struct traced_rec_hdr *r;
	uint64_t lost, need, ring_size, tail;
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
	if (size < TRACED_REC_HDR_SIZE || size > TRACED_REC_MAX ||
	    size + TRACED_LOST_REC_SIZE > ring_size) {
		ring_count_loss(t, TRACED_DROP_RING_FULL);
		goto drop;
	}
	tail = ring_load_tail(t);
	if (t->head - tail > ring_size)
		tail = t->head - ring_size;	/* a daemon wrote nonsense */
	t->limit = tail + ring_size;

	lost = ring_lost_pending();
	need = size + (lost ? TRACED_LOST_REC_SIZE : 0);
	if (t->head + need > t->limit) {
		ring_count_loss(t, __atomic_load_n(&lib.connected,
		    __ATOMIC_RELAXED) ? TRACED_DROP_RING_FULL :
		    TRACED_DROP_DISCONNECTED);
		goto drop;
	}
	if (lost)
		ring_write_lost(t, lost);
	r = (struct traced_rec_hdr *)(void *)(t->data + (t->head & t->mask));
	r->id = id;
	r->size = size;
	r->ts = traced_clock_now();
	errno = saved_errno;
	/* nest stays raised: traced_commit() lowers it. */
	return r;

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
	if (t->head - tail <= ring_size && ring_lost_pending() == 0)
		t->limit = tail + ring_size;
	if (t->head - tail < ring_size / TRACED_WAKE_FRACTION) {
		t->wake_at = tail + ring_size / TRACED_WAKE_FRACTION;
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
 * TLS destructor: the thread is exiting.  Mark the ring finished so the
 * daemon drains and closes its stream; the connection thread releases
 * the memory once the daemon was told.
 */
static void
ring_thread_exit(void *arg)
{
	struct lring *r = arg;
	struct traced_thread *t = &traced_tls;

	/* Say what was lost since the last record, if there is room. */
	if (r != NULL && t->data != NULL && t->nest == 0 &&
	    ring_lost_pending() != 0 &&
	    t->head + TRACED_LOST_REC_SIZE <= ring_load_tail(t) + t->mask + 1) {
		ring_write_lost(t, ring_lost_pending());
		__atomic_store_n(&t->hdr->head, t->head, __ATOMIC_RELEASE);
	}
	lthread.exited = 1;
	memset(t, 0, sizeof(*t));
	lthread.ring = NULL;
	if (r == NULL)
		return;
	/* Pairs with the daemon's load-acquire of flags after head. */
	__atomic_store_n(&r->hdr->flags, TRACED_RING_FINISHED,
	    __ATOMIC_RELEASE);
	/*
	 * The last touch of r: once the connection thread sees finished
	 * it may free r at once, so nothing here may follow this store.
	 * It asks for the final drain itself, no notify needed.
	 */
	__atomic_store_n(&r->finished, 1, __ATOMIC_RELEASE);
	lib_wake();
}

/* Unmap and close a ring the daemon no longer needs from us.  Locked. */
void
ring_free(struct lring *r)
{
	munmap(r->hdr, r->map_len);
	close(r->fd);
	free(r);
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

	for (r = lib.rings; r != NULL; r = next) {
		next = r->next;
		munmap(r->hdr, r->map_len);
		close(r->fd);
		free(r);
	}
	lib.rings = NULL;
	lib.nrings = 0;
	memset(&traced_tls, 0, sizeof(traced_tls));
	memset(&lthread, 0, sizeof(lthread));
	(void)pthread_setspecific(ring_key, NULL);
}
