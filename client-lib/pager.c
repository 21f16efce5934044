/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * The pager: a thread of libtraced that makes ring pages ready before
 * the producing threads reach them, so that a trace call never pays for
 * a page fault.
 *
 * A page of a ring becomes memory the first time someone touches it,
 * and on the virtual machines this project runs on that first touch is
 * dear: measured here, a write fault on a fresh shmem page costs about
 * 13 us, 200 ns for each 64-byte event of the page, where the event
 * itself costs 8.  MADV_POPULATE_WRITE makes the page for about 1 us,
 * and a read of it from any thread of the process then takes the rest
 * of the first-touch cost (2.5 us here: the hypervisor's own mapping),
 * so the producer's writes later cost nothing extra.  (MAP_POPULATE,
 * which the library used before, makes a shared page read-only in the
 * page tables: every first write still faulted.)  On these machines
 * the hypervisor takes back the guest's free memory (virtio-balloon
 * free page reporting, of free 2 MiB blocks), so a new ring's pages
 * are new to the hypervisor too: 2.2 us of CPU each, whoever makes
 * them, against 640 ns for writing the 64 events a page holds.  A producer that
 * writes at full speed through a fresh ring outruns any one thread
 * making pages, and the first lap stays dearer than later ones.
 *
 * Producers ask (ring.c): they raise lring.prep_want, the data bytes
 * they want ready, or lring.grow_want, a bigger size for their ring,
 * and write to lib.pager_fd.  The pager makes [prep_end, prep_want)
 * ready, publishing prep_end as it goes, and for a growth the first
 * pages of the new part, then grow_ready, then what the producer
 * writes in the next PAGER_AHEAD ms at its pace (lring.pace; the
 * producer is only ever the writer of prep_want).  A producer faster
 * than the pager (at 64 bytes per 10 ns it is) gets past it; the
 * pager then skips the step the producer is in (pager_start()).
 *
 * Each 4 KiB page is that dear again in every process that maps it, so
 * a ring that grows to 4 MiB or more offers the kernel 2 MiB pages for
 * the whole 2 MiB blocks of its data (MADV_HUGEPAGE): one fault, one
 * page-table entry, where there were 512; measured here, 0.4 us per
 * 4 KiB instead of 15-20.  The kernel takes the offer only where the
 * administrator allows huge pages for shared memory
 * (/sys/kernel/mm/transparent_hugepage/shmem_enabled: advise, or
 * within_size, or always; Debian's default is never); elsewhere it is
 * a no-op.  Small rings keep small pages, so that memory follows what
 * a thread writes: a thread of 11 events does not get 2 MiB.
 *
 * The pager is the program's guest: it runs at the program's priority
 * but makes pages a PAGER_PIECE at a time and yields the CPU between
 * pieces (pager_make()), so that a program thread it woke never waits
 * for it long.
 *
 * The pager never holds lib.lock while it works on a ring: it marks the
 * ring pager_busy (under the lock), which keeps the connection thread
 * from freeing it meanwhile.  It blocks every signal.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE	23	/* Linux 5.14 */
#endif

/* Made ready per step, so that prep_end moves while a big ring grows. */
#define PAGER_STEP		(1u << 20)
/* Made ready at a time, between two chances for the program's threads
 * to take the CPU (pager_make()). */
#define PAGER_PIECE		(64u << 10)
/* Of a new half, ready before the producer may switch to it. */
#define PAGER_GROW_FIRST	(256u << 10)
/* Rings of this size and more are offered huge pages of this size. */
#define PAGER_HUGE_MIN		(4u << 20)
#define PAGER_HUGE_PAGE		(2u << 20)
/* A ring that grew is made this far ahead of its producer (ms at its
 * pace): as much as the daemon wants a ring to hold (proto/ring.h). */
#define PAGER_AHEAD		(TRACED_RING_HOLD_NS / 1000000)

static int pager_populate_works = 1;

/*
 * Read one byte per page: the first touch from user space, which on a
 * virtual machine costs the most, is taken here instead of in the
 * producer.  The producer may already write these pages (it can outrun
 * the pager); a read of a byte it writes is harmless, so the thread
 * sanitizer is told to look away.
 */
__attribute__((no_sanitize("thread")))
static void
pager_touch(const uint8_t *p, size_t len)
{
	size_t off;

	for (off = 0; off < len; off += TRACED_STATE_PAGE)
		(void)*(const volatile uint8_t *)(p + off);
}

/*
 * Make [p, p + len) ready for writing without faults.  p and len are
 * page aligned.  Without MADV_POPULATE_WRITE (before Linux 5.14) it
 * does nothing: the producer then faults the pages in itself, as it
 * would without a pager.
 */
void
pager_prepare(uint8_t *p, size_t len)
{
	if (len == 0 || !pager_populate_works)
		return;
	if (madvise(p, len, MADV_POPULATE_WRITE) == -1) {
		if (errno == EINVAL) {
			pager_populate_works = 0;
			DEBUG("no MADV_POPULATE_WRITE: ring pages fault in "
			    "the trace calls that first reach them");
		}
		return;
	}
	pager_touch(p, len);
}

/*
 * Offer huge pages for r's data up to 'size' bytes, the size it is
 * being made ready for: the whole PAGER_HUGE_PAGE blocks of the memfd
 * (file offsets: the kernel puts a huge page where its file offset and
 * its address are both aligned) in [huge_end, size) of the data.
 * Before the pages are made: a block with a small page in it stays
 * small.  Pager thread only.
 */
static void
pager_offer_huge(struct lring *r, uint64_t size)
{
	uint64_t from, to, blk = PAGER_HUGE_PAGE;

	if (size < PAGER_HUGE_MIN || size <= r->huge_end)
		return;
	from = (TRACED_RING_HDR_SIZE + r->huge_end + blk - 1) & ~(blk - 1);
	to = (TRACED_RING_HDR_SIZE + size) & ~(blk - 1);
	if (to > from)
		(void)madvise((uint8_t *)r->hdr + from, (size_t)(to - from),
		    MADV_HUGEPAGE);
	r->huge_end = size;
}

/*
 * Where r's producer writes now: an offset in its data, and in *size
 * the ring's size it writes in.  Head first, then the order, as the
 * daemon reads them (proto/ring.h, Growth).
 */
static uint64_t
pager_writer_at(struct lring *r, uint64_t *size)
{
	struct traced_ring_hdr *h = r->hdr;
	uint64_t head = __atomic_load_n(&h->head, __ATOMIC_ACQUIRE);

	*size = traced_ring_size(__atomic_load_n(&h->order,
	    __ATOMIC_RELAXED));
	return head & (*size - 1);
}

/*
 * Where the pager starts on [from, to) of r: 'from', unless r's
 * producer writes at 'from' or past it (it outran the pager, and
 * faults in its pages itself).  Then the pager leaves it the part
 * below the end of the size it writes in and makes only the rest (the
 * first pages of a size it is about to grow to), since working on the
 * pages the producer reaches, the two would take turns at each page
 * (the producer waits for the page the pager is making; seen: hundreds
 * of waits in a first lap of 128 MiB), where apart they make two pages
 * at once.  Measured with a 256 MiB ring made from the first event, 2
 * million events through fresh memory: 43-49 ns each, 29-36 ns with
 * the step left to the producer.  In a later lap the offsets say
 * nothing of what was made: the pager may make again what exists,
 * which costs little.
 */
static uint64_t
pager_start(struct lring *r, uint64_t from, uint64_t to)
{
	uint64_t size, at = pager_writer_at(r, &size);

	if (from >= size || at < from)
		return from;
	return to < size ? to : size;
}

/*
 * Make [from, to) of r's data ready, a PAGER_PIECE at a time, each
 * published in prep_end as it is done, and give the CPU to whichever
 * thread waits for it after each piece.  The pager runs at the
 * program's own priority, and the scheduler lets a running thread use
 * up its slice before a thread it woke gets the CPU: a pager that made
 * a megabyte in one go held a CPU for 3.5 ms (a tick here), while both
 * producers of a paced bench run waited for it, woken and not running,
 * and their rings overflowed when they caught up (one run in seven, at
 * 8 M events/s).  After a piece, a program thread waits 16 pages at
 * most.  Where the producer is at or past 'from', the pager leaves it
 * that step (pager_start()).
 */
static void
pager_make(struct lring *r, uint64_t from, uint64_t to)
{
	uint64_t at = from, end;

	while ((at = pager_start(r, at, to)) < to) {
		end = to - at > PAGER_PIECE ? at + PAGER_PIECE : to;
		pager_prepare(r->data + at, (size_t)(end - at));
		__atomic_store_n(&r->prep_end, end, __ATOMIC_RELEASE);
		at = end;
		(void)sched_yield();
	}
	if (to > from)
		__atomic_store_n(&r->prep_end, to, __ATOMIC_RELEASE);
}

/* Wake the pager.  Async-signal-safe; keeps errno. */
void
lib_wake_pager(void)
{
	uint64_t one = 1;
	int saved_errno = errno;

	if (lib.pager_fd != -1)
		(void)!write(lib.pager_fd, &one, sizeof(one));
	errno = saved_errno;
}

/*
 * What the pager should do next for r, if anything: set [*from, *to)
 * and *grow (the order to announce ready once that much is done, or
 * 0).  Locked.
 */
static int
pager_work_locked(struct lring *r, uint64_t *from, uint64_t *to,
    uint32_t *grow)
{
	uint64_t have = __atomic_load_n(&r->prep_end, __ATOMIC_RELAXED);
	uint64_t want = __atomic_load_n(&r->prep_want, __ATOMIC_ACQUIRE);
	uint32_t gw = __atomic_load_n(&r->grow_want, __ATOMIC_ACQUIRE);
	uint32_t gr = __atomic_load_n(&r->grow_ready, __ATOMIC_RELAXED);
	uint64_t max = traced_ring_size(r->max_order);

	*grow = 0;
	if (__atomic_load_n(&r->finished, __ATOMIC_ACQUIRE))
		return 0;
	/*
	 * A ring that grew: also what its producer writes in PAGER_AHEAD
	 * ms at its pace, ahead of where it writes, so that the pages get
	 * made while it pauses, if it does (a burst then finds them).  Not
	 * the whole new size: a ring that short threads pass on grows for
	 * their sum (2,000 threads of 11 events: to 16 MiB, at about 25
	 * MB/s), and making all of it cost more than the threads.  Not
	 * past the size it writes in if it took back its ask to grow
	 * (ring.c, ring_lap_end()): it stays smaller than grow_ready.
	 */
	if (gr > r->init_order && !lring_slow(r)) {
		uint64_t pace = __atomic_load_n(&r->pace, __ATOMIC_RELAXED);
		uint64_t lim = traced_ring_size(gr), size, at, ahead;

		at = pager_writer_at(r, &size);
		if (size < lim && traced_ring_size(gw) <= size)
			lim = size;
		ahead = pace >= lim / PAGER_AHEAD ? lim :
		    at + PAGER_AHEAD * pace;
		if (ahead > lim)
			ahead = lim;
		if (want < ahead)
			want = ahead;
	}
	if (gw > gr && gw <= r->max_order) {
		/* The new part is [2^gr, 2^gw) (a ring may grow by
		 * several doublings at once): its first pages. */
		uint64_t half = traced_ring_size(gr);
		uint64_t first = half < PAGER_GROW_FIRST ? half :
		    PAGER_GROW_FIRST;

		if (have < half + first) {
			*from = have;
			*to = half + first;
			if (*to - *from > PAGER_STEP)
				*to = *from + PAGER_STEP;
			if (*to == half + first)
				*grow = gw;
			return 1;
		}
		*from = *to = have;
		*grow = gw;
		return 1;
	}
	if (want > max)
		want = max;
	if (want <= have)
		return 0;
	*from = have;
	*to = want - have > PAGER_STEP ? have + PAGER_STEP : want;
	return 1;
}

static void *
pager_main(void *arg)
{
	struct pollfd pfd;
	struct lring *r;
	uint64_t junk, from, to;
	uint32_t grow;
	sigset_t all;

	(void)arg;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	(void)prctl(PR_SET_NAME, "traced-pager", 0, 0, 0);
	__atomic_store_n(&lib.pager_tid, (pid_t)syscall(SYS_gettid),
	    __ATOMIC_RELEASE);
	pfd.fd = lib.pager_fd;
	pfd.events = POLLIN;
	for (;;) {
		(void)poll(&pfd, 1, -1);
		(void)!read(lib.pager_fd, &junk, sizeof(junk));
		for (;;) {
			pthread_mutex_lock(&lib.lock);
			for (r = lib.rings; r != NULL; r = r->next)
				if (pager_work_locked(r, &from, &to, &grow))
					break;
			if (r == NULL) {
				pthread_mutex_unlock(&lib.lock);
				break;
			}
			r->pager_busy = 1;
			pthread_mutex_unlock(&lib.lock);

			/* The size it grows to, or the one it has grown to. */
			pager_offer_huge(r, traced_ring_size(grow != 0 ? grow :
			    __atomic_load_n(&r->grow_ready, __ATOMIC_RELAXED)));
			pager_make(r, from, to);
			/* Then what its producer will soon reach: see
			 * pager_work_locked(). */
			if (grow != 0)
				lring_ready_raise(r, grow);

			pthread_mutex_lock(&lib.lock);
			r->pager_busy = 0;
			if (__atomic_load_n(&r->finished, __ATOMIC_ACQUIRE))
				lib_wake();	/* to free it */
			pthread_mutex_unlock(&lib.lock);
		}
	}
	return NULL;
}

/*
 * Start the pager if it is not running.  Locked.  Returns 0, or -1:
 * then rings work as before, faulting their pages in as they go.
 */
int
pager_start_locked(void)
{
	pthread_attr_t attr;
	sigset_t all, old;
	pthread_t th;
	int rc;

	if (lib.pager_started)
		return 0;
	if (lib.pager_fd == -1)
		lib.pager_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (lib.pager_fd == -1)
		return -1;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	rc = pthread_create(&th, &attr, pager_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (rc != 0) {
		DEBUG("pager thread: %s", strerror(rc));
		return -1;
	}
	lib.pager_started = 1;
	return 0;
}

/* In the child of fork(): no pager yet, and an eventfd of its own. */
void
pager_atfork_child(void)
{
	if (lib.pager_fd != -1)
		close(lib.pager_fd);
	lib.pager_fd = -1;
	lib.pager_started = 0;
	lib.pager_tid = 0;
}
