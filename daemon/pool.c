/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * The ring pool: rings whose memory is made before a program needs it.
 *
 * DESIGN
 *
 * A thread's first pass through a fresh ring pays for every page of it:
 * on the virtual machines we measured, about 2.2 us of CPU per 4 KiB
 * page whoever makes it (the host hands the memory back fresh), so a
 * 256 MiB ring's first 2 M events cost 30-50 ns each instead of 9.  No
 * pager in the traced process can hide that: the pages must exist
 * before the burst, and the burst may start with the program.  LTTng
 * pays the same cost when its consumer daemon makes the buffers, at
 * registration.
 *
 * With --ring-pool N the daemon keeps N rings of its ring size
 * (--ring-size) ready: memfds sealed as a client seals its own, every
 * page made, in 2 MiB pages where the kernel gives them (MADV_COLLAPSE
 * works on shared memory even when shmem_enabled is "never"; a thread
 * then writes its first pass as fast as the next ones, measured), else
 * in 4 KiB pages.  A client asks for one when it connects (SPARE_ASK,
 * proto/wire.h); the daemon sends it one, and another each time the
 * client, having sent the last back as a RING, asks again because a
 * thread found none left.  The pool thread makes a new ring for each
 * one given, as SCHED_IDLE: the memory is made while a CPU is idle,
 * never at the cost of a burst (made beside one, it slowed the burst's
 * first pass from 10 to 17 ns an event, measured).
 *
 * Who gets one: only clients of the daemon's own uid.  The pages are
 * charged to the daemon (its memory cgroup), and a client keeps the
 * memfd as long as it likes, even after it disconnects: served to other
 * users, the pool would let each of them hold the daemon's memory
 * without limit.  A pool ring is always new memory, never a ring
 * another process used, so nothing of anyone's trace is passed on.
 *
 * The loop thread owns the sessions; this thread only makes memfds and
 * hands them over through the ready list, waking the loop with an
 * eventfd when one is made (the loop then serves the sessions waiting,
 * through the callback pool_start() was given).
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <event2/event.h>

#include "log.h"
#include "pipeline.h"
#include "pool.h"
#include "ring.h"
#include "ringmem.h"
#include "worker.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE	23	/* Linux 5.14 */
#endif
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE		25	/* Linux 6.1 */
#endif

#define POOL_HUGE		RINGMEM_HUGE
#define POOL_NICE		19
/* The daemon is quiet: it wrote less than this ... */
#define POOL_QUIET_BYTES	(1u << 20)
/* ... in this long (a ring is made then, or after the longest wait). */
#define POOL_QUIET_MS		100u
#define POOL_QUIET_MAX_MS	10000u
/* After a ring could not be made, the next try. */
#define POOL_RETRY_MS		10000u
/* Pages made at a time: the pool stops between two. */
#define POOL_STEP		(64u << 20)

struct pool_ring {
	int		 fd;
	uint32_t	 order;
};

static struct {
	pthread_mutex_t	 lock;
	pthread_cond_t	 cond;
	struct pool_ring ready[POOL_MAX];	/* under lock */
	unsigned	 nready;		/* under lock */
	unsigned	 want;			/* under lock: ring-pool */
	uint32_t	 order;			/* under lock: ring-size */
	int		 making;		/* under lock */
	int		 stop;			/* under lock */
	uint64_t	 made, given;		/* under lock */
	uint64_t	 huge_bytes, small_bytes; /* under lock: how made */
	char		 failed[160];		/* under lock: last error */
	pthread_t	 thread;
	int		 running;
	int		 efd;			/* made -> loop */
	struct event	*ev;
	void		(*made_cb)(void *);	/* loop: one was made */
	void		*made_arg;
} pl = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.cond = PTHREAD_COND_INITIALIZER,
	.efd = -1,
};

/* Has pool_stop() been called?  Pool thread. */
static int
pool_stopping(void)
{
	int stop;

	pthread_mutex_lock(&pl.lock);
	stop = pl.stop;
	pthread_mutex_unlock(&pl.lock);
	return stop;
}

/*
 * Make every page of [p, p + len) (p 2 MiB aligned), in huge pages
 * where the kernel gives them, POOL_STEP at a time so that a stopping
 * daemon does not wait for a whole ring.  Returns the bytes made huge.
 */
static uint64_t
pool_populate(uint8_t *p, size_t len)
{
	size_t whole = len & ~(size_t)(POOL_HUGE - 1), off, step, b;
	uint64_t huge = 0;

	/*
	 * MADV_COLLAPSE builds a huge page only over a block that has a
	 * page in it already: one write each, then collapse them all.
	 * It fails (EINVAL) where shared memory may not be huge, and a
	 * block may stay small (EAGAIN, ENOMEM): what is left is made in
	 * small pages just below.
	 */
	for (off = 0; off < whole && !pool_stopping(); off += step) {
		step = whole - off < POOL_STEP ? whole - off : POOL_STEP;
		for (b = off; b < off + step; b += POOL_HUGE)
			p[b] = 0;
		if (madvise(p + off, step, MADV_COLLAPSE) == 0)
			huge += step;
	}
	for (off = 0; off < len && !pool_stopping(); off += step) {
		step = len - off < POOL_STEP ? len - off : POOL_STEP;
		if (madvise(p + off, step, MADV_POPULATE_WRITE) == -1)
			for (b = off; b < off + step; b += 4096)
				p[b] = 0;	/* before Linux 5.14 */
	}
	return huge;
}

/*
 * A new pool ring of 2^order bytes, made as ring.c makes its own
 * (proto/ringmem.h), all pages made.  Returns the fd, or -1 with
 * pl.failed saying why.
 */
static int
pool_make(uint32_t order, uint64_t *huge)
{
	size_t len = (size_t)traced_ring_file_size(order);
	uint8_t *p;
	int fd, err;

	fd = ringmem_create(order);
	if (fd != -1) {
		p = ringmem_map_aligned(fd, len);
		if (p != MAP_FAILED) {
			*huge = pool_populate(p, len);
			munmap(p, len);
			return fd;
		}
		err = errno;
		close(fd);
		errno = err;
	}
	pthread_mutex_lock(&pl.lock);
	snprintf(pl.failed, sizeof(pl.failed), "%s: %s", fd == -1 ?
	    "making its memfd" : "mapping it", strerror(errno));
	pthread_mutex_unlock(&pl.lock);
	return -1;
}

/* Sleep ms, or less if the pool stops.  Pool thread. */
static void
pool_pause(unsigned ms)
{
	unsigned slept;

	for (slept = 0; slept < ms && !pool_stopping();
	    slept += POOL_QUIET_MS)
		usleep(POOL_QUIET_MS * 1000);
}

/*
 * Wait until the daemon writes less than POOL_QUIET_BYTES in a
 * POOL_QUIET_MS, or POOL_QUIET_MAX_MS at most.  Making a ring beside a
 * burst slows the burst even at SCHED_IDLE: much of the cost is in the
 * hypervisor, which hands the memory over, not in this thread's CPU
 * time (a first pass of 9-12 ns an event became 15-18, measured).  A
 * program that takes a ring is often starting a burst.
 */
static void
pool_wait_quiet(void)
{
	uint64_t d0, c0, d1, c1;
	unsigned waited;

	for (waited = 0; waited < POOL_QUIET_MAX_MS;
	    waited += POOL_QUIET_MS) {
		writeout_written(&d0, &c0);
		usleep(POOL_QUIET_MS * 1000);
		writeout_written(&d1, &c1);
		if ((d1 - d0) + (c1 - c0) < POOL_QUIET_BYTES ||
		    pool_stopping())
			return;
	}
}

static void *
pool_main(void *arg)
{
	struct sched_param idle = { 0 };
	uint64_t one = 1, huge;
	uint32_t order;
	unsigned i, n, ngo;
	int fd, go[POOL_MAX];

	(void)arg;
	/* Only when a CPU has nothing else to do; nice 19 if not. */
	worker_self("traced-pool", POOL_NICE);
	(void)pthread_setschedparam(pthread_self(), SCHED_IDLE, &idle);
	pthread_mutex_lock(&pl.lock);
	for (;;) {
		/*
		 * Rings of a size no longer asked for, or too many, go:
		 * closed with the lock released, since freeing a ring's
		 * memory takes long and the loop thread takes the lock.
		 */
		for (i = n = ngo = 0; i < pl.nready; i++)
			if (pl.ready[i].order == pl.order && n < pl.want)
				pl.ready[n++] = pl.ready[i];
			else
				go[ngo++] = pl.ready[i].fd;
		pl.nready = n;
		if (ngo > 0) {
			pthread_mutex_unlock(&pl.lock);
			while (ngo > 0)
				close(go[--ngo]);
			pthread_mutex_lock(&pl.lock);
			continue;
		}
		if (pl.stop)
			break;
		if (pl.nready >= pl.want) {
			pthread_cond_wait(&pl.cond, &pl.lock);
			continue;
		}
		pthread_mutex_unlock(&pl.lock);
		pool_wait_quiet();
		pthread_mutex_lock(&pl.lock);
		if (pl.stop || pl.nready >= pl.want)
			continue;
		order = pl.order;
		pl.making = 1;
		pthread_mutex_unlock(&pl.lock);

		fd = pool_make(order, &huge);

		pthread_mutex_lock(&pl.lock);
		pl.making = 0;
		if (fd == -1) {
			/* Said by the loop; tried again a while later. */
			(void)!write(pl.efd, &one, sizeof(one));
			pthread_mutex_unlock(&pl.lock);
			pool_pause(POOL_RETRY_MS);
			pthread_mutex_lock(&pl.lock);
			continue;
		}
		pl.made++;
		if (pl.nready == POOL_MAX) {	/* pool_put() filled it */
			pthread_mutex_unlock(&pl.lock);
			close(fd);
			pthread_mutex_lock(&pl.lock);
			continue;
		}
		pl.ready[pl.nready].fd = fd;
		pl.ready[pl.nready].order = order;
		pl.nready++;
		pl.huge_bytes += huge;
		pl.small_bytes += traced_ring_file_size(order) - huge;
		(void)!write(pl.efd, &one, sizeof(one));
	}
	pthread_mutex_unlock(&pl.lock);
	return NULL;
}

static void
pool_made_cb(int fd, short what, void *arg)
{
	uint64_t n;
	char why[sizeof(pl.failed)];

	(void)fd;
	(void)what;
	(void)arg;
	(void)!read(pl.efd, &n, sizeof(n));
	pthread_mutex_lock(&pl.lock);
	memcpy(why, pl.failed, sizeof(why));
	pl.failed[0] = '\0';
	pthread_mutex_unlock(&pl.lock);
	if (why[0] != '\0')
		log_warnx("ring pool: cannot make a ring: %s; trying again "
		    "in %u s (programs make their own rings meanwhile)", why,
		    POOL_RETRY_MS / 1000);
	if (pl.made_cb != NULL)
		pl.made_cb(pl.made_arg);
}

/*
 * Start the pool thread, keeping 'want' rings of 2^order bytes; made(arg)
 * runs on the loop thread when one is made (the sessions waiting for
 * one are served then).  0, or -1 (logged).  Loop thread, once.
 */
int
pool_start(struct event_base *base, unsigned want, uint32_t order,
    void (*made)(void *), void *arg)
{
	pl.want = want;
	pl.order = order;
	pl.made_cb = made;
	pl.made_arg = arg;
	if (worker_start(base, "ring pool", pool_main, NULL, pool_made_cb,
	    &pl.efd, &pl.ev, &pl.thread) == -1)
		return -1;
	pl.running = 1;
	return 0;
}

/* New settings (SIGHUP): keep 'want' rings of 2^order.  Loop thread. */
void
pool_set(unsigned want, uint32_t order)
{
	pthread_mutex_lock(&pl.lock);
	pl.want = want;
	pl.order = order;
	pl.failed[0] = '\0';
	pthread_cond_signal(&pl.cond);
	pthread_mutex_unlock(&pl.lock);
}

/*
 * A ready ring of 2^order bytes, now the caller's, or -1 if there is
 * none (one is being made if the pool is on).  Loop thread.
 */
int
pool_take(uint32_t order)
{
	unsigned i;
	int fd = -1;

	pthread_mutex_lock(&pl.lock);
	for (i = 0; i < pl.nready; i++)
		if (pl.ready[i].order == order) {
			fd = pl.ready[i].fd;
			pl.ready[i] = pl.ready[--pl.nready];
			pl.given++;
			pthread_cond_signal(&pl.cond);
			break;
		}
	pthread_mutex_unlock(&pl.lock);
	return fd;
}

/*
 * Give back a ring pool_take() gave, unused (the client did not take
 * it): kept if the pool wants one of its size, else closed.  Loop
 * thread.
 */
void
pool_put(int fd, uint32_t order)
{
	int keep;

	pthread_mutex_lock(&pl.lock);
	keep = order == pl.order && pl.nready < pl.want;
	if (keep) {
		pl.ready[pl.nready].fd = fd;
		pl.ready[pl.nready].order = order;
		pl.nready++;
		pl.given--;
	}
	pthread_mutex_unlock(&pl.lock);
	if (!keep)
		close(fd);
}

/* What the pool holds, for "info trace".  Any thread. */
void
pool_stats(struct pool_stats *st)
{
	pthread_mutex_lock(&pl.lock);
	st->want = pl.want;
	st->ready = pl.nready;
	st->making = pl.making;
	st->order = pl.order;
	st->made = pl.made;
	st->given = pl.given;
	st->huge_bytes = pl.huge_bytes;
	st->small_bytes = pl.small_bytes;
	pthread_mutex_unlock(&pl.lock);
}

/* Stop the thread, free every ring.  At shutdown, after the loop. */
void
pool_stop(void)
{
	struct sched_param normal = { 0 };

	if (!pl.running)
		return;
	pthread_mutex_lock(&pl.lock);
	pl.stop = 1;
	pl.want = 0;
	pthread_cond_signal(&pl.cond);
	pthread_mutex_unlock(&pl.lock);
	/* Idle-class on a busy machine, it could wait long for a CPU. */
	(void)pthread_setschedparam(pl.thread, SCHED_OTHER, &normal);
	pthread_join(pl.thread, NULL);
	event_free(pl.ev);
	close(pl.efd);
	pl.running = 0;
}
