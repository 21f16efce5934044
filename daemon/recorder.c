/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * The flight recorder: a consumer of the pipeline that keeps the newest
 * packets of each recording session in memory, and writes them as CTF
 * when asked.
 *
 *   drain thread -> chunk (validated packet) -> writer thread
 *                                                 | recorder_write():
 *                                                 v copy into the window
 *   window of session S:  [oldest pkt][pkt]...[newest pkt]
 *                           ^ pushed out when a new one would pass
 *                             the window's size or its uid's share:
 *                             its events count as overwritten, to
 *                             their thread
 *
 *   snapshot: the loop takes a reference on each packet of the windows
 *   asked for and hands them to the snapshot thread, which writes each
 *   session's metadata (copied from its directory), its streams (the
 *   packets as they are, with the file's uuid, packet numbers and
 *   discards filled in) and a traced/snapshot file of per-thread books.
 *
 * A window is packets, never events: keeping a packet is one copy of
 * it (the drain's staging goes back to the pool at once), and writing
 * a snapshot is writing packets that exist.  A packet buffer comes from
 * a free list of its size class, so that a full window, whose every new
 * packet pushes out one as large, makes no memory and takes no page
 * fault per packet.
 *
 * Memory is bounded twice: each window by the recorder size (recorder,
 * traced.conf(5)), and every window of a uid together, the ended ones
 * included, by recorder-bytes-per-uid.  When a new packet meets the
 * uid's bound, the uid's oldest ended window gives up its oldest
 * packets first, then the packet's own window: what a user's programs
 * keep never pushes out another user's, and a live program's window is
 * what is given up last.  A window outlives its session for
 * recorder-keep-time, the recorder-keep newest ended ones of a uid.
 *
 * Locking: rec.lock guards the windows, their packet lists and books,
 * the per-uid totals and the free lists; a writer copies a packet with
 * it released.  Windows are made and freed by the loop; a consumer
 * reaches a window through its ring's feed (pfeed.rec), which the loop
 * publishes before the session's first ring is added and clears only
 * after its last ring's END came back.  The snapshot thread owns the
 * jobs it is given, and takes the lock only to release packets.
 */
#include <sys/queue.h>
#include <sys/stat.h>
#include <sys/mman.h>
#include <sys/uio.h>

#include <dirent.h>
#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "ctf.h"
#include "dclock.h"
#include "log.h"
#include "outdir.h"
#include "pipeline.h"
#include "recorder.h"
#include "sock.h"
#include "wire.h"
#include "worker.h"

/*
 * Packet buffer size classes: 4 KiB to 64 KiB by doubling, then by 64
 * KiB steps up to the largest packet (CHUNK_CONTENT_MAX and a header):
 * a window spends at most an eighth more than its packets' bytes on
 * rounding once packets are past 64 KiB, which a busy thread's are.
 */
#define PKT_CLASS_SMALL		5
#define PKT_CLASSES		(PKT_CLASS_SMALL + 17)
#define PKT_FREE_MAX		(16u << 20)	/* kept for reuse, at most */
#define RECORDER_TICK_MS	1000		/* ended windows expire */
#define SNAPS_OUT_MAX		4		/* snapshots asked for, not written */
/* Packets per writev() of a snapshot: two parts each, and an empty
 * packet before and after, within IOV_MAX (1024). */
#define SNAP_IOV_MAX		510

/* A packet kept: its header and records, as the drain made them. */
struct rpkt {
	TAILQ_ENTRY(rpkt) entry;	/* its window's, oldest first */
	uint32_t	 refs;		/* the window's (1) + snapshots' */
	uint32_t	 cls;		/* size class */
	uint32_t	 len;		/* header + records */
	pid_t		 tid;
	uint64_t	 instance;	/* its stream */
	uint64_t	 events;
	uint64_t	 discarded;	/* its LOST records' counts */
	uint64_t	 ts_first;
	uint64_t	 ts_last;
	uint64_t	 seq;		/* its window's count when kept */
	uint8_t		 data[];
};
TAILQ_HEAD(rpkt_list, rpkt);

/* Books of one thread (key: tid) or stream (key: instance). */
struct rbook {
	uint64_t	 key;
	uint64_t	 overwritten;	/* events pushed out of the window */
	uint64_t	 gone_discarded; /* LOST counts of packets pushed out */
	uint64_t	 gone_packets;	/* of a stream: packets pushed out (and,
					   in a snapshot's copy, older than
					   its --last) */
	uint64_t	 lost;		/* events lost before the window had
					   them (ring full, ...) */
	uint64_t	 unrecorded;	/* of those, told by no packet (the
					   ring's END) */
	uint64_t	 bytes;		/* of a stream: its packets' memory */
	uint64_t	 held;		/* packets held in the window */
	uint64_t	 skipped;	/* a snapshot's copy: events older
					   than its --last (and, of a
					   stream, their LOST counts) */
	int		 used;
};

/* Open addressing, linear probing: a session may have thousands of
 * threads, and each packet looks its thread and stream up. */
struct rtable {
	struct rbook	*v;
	uint32_t	 cap;		/* a power of two, or 0 */
	uint32_t	 n;
};

struct rwindow {
	TAILQ_ENTRY(rwindow) entry;	/* rec.windows, oldest first */
	struct rpkt_list pkts;
	uint64_t	 bytes;		/* charged: its packets' classes */
	uint64_t	 npkts;
	uint64_t	 seq;		/* packets taken in, ever */
	uint32_t	 nlive;		/* streams with packets held */
	uint32_t	 session;
	uid_t		 uid;
	pid_t		 pid;
	int		 clock;		/* DCLOCK_* of its timestamps */
	char		 comm[TRACED_COMM_MAX];
	char		 name[128];	/* its directory's name */
	int		 dirfd;		/* that directory (recorder dir) */
	int		 ended;		/* its session is gone */
	uint64_t	 ended_at;	/* ns, CLOCK_MONOTONIC */
	uint64_t	 overwritten;	/* totals, every thread */
	uint64_t	 lost;
	uint64_t	 kept;		/* events taken in, ever */
	uint64_t	 size;		/* its bound: the recorder size when
					   it was made */
	struct rtable	 threads;
	struct rtable	 streams;
	struct rbook	 gone_threads;	/* books pruned (books_prune()) */
};
TAILQ_HEAD(rwindow_list, rwindow);

/* What one uid's windows hold together. */
struct ruid {
	uid_t		 uid;
	uint64_t	 bytes;
	unsigned	 ended;		/* its ended windows */
};

/* One session's part of a snapshot. */
struct snapwin {
	uint32_t	 session;
	uid_t		 uid;
	pid_t		 pid;
	char		 comm[TRACED_COMM_MAX];
	char		 name[128];
	int		 dirfd;		/* dup'ed */
	int		 ended;
	struct rpkt	**pk;		/* referenced, oldest first */
	size_t		 npk;
	struct rbook	*threads;	/* copies, at the snapshot's point */
	struct rbook	 gone_threads;	/* and those pruned, together */
	uint32_t	 nthreads;
	struct rbook	*streams;
	uint32_t	 nstreams;
};

struct snapjob {
	STAILQ_ENTRY(snapjob) entry;
	int		 rmdir;		/* a window's directory to remove */
	char		*path;		/* the snapshot directory */
	char		*shown;		/* ... as people see it (absolute) */
	int		 parentfd;	/* -1: path is absolute */
	int		 any_uid;	/* as asked (snapshot_req) */
	uid_t		 uid;
	char		*reason;
	uint64_t	 time;		/* ns, CLOCK_REALTIME */
	struct snapwin	*w;
	size_t		 nw;
	void		(*done)(void *, const struct snapshot_result *);
	void		*arg;
	/* Results. */
	unsigned	 written;
	uint64_t	 events;
	uint64_t	 bytes;
	int		 err;
	char		 errmsg[PATH_MAX + 256];
};
STAILQ_HEAD(snapjob_list, snapjob);

static struct {
	pthread_mutex_t	 lock;
	pthread_cond_t	 cond;		/* the snapshot thread's */
	struct rwindow_list windows;
	struct ruid	*uids;
	unsigned	 nuids;
	struct rpkt	*free[PKT_CLASSES];	/* by entry.tqe_next */
	uint64_t	 free_bytes;
	uint64_t	 size;		/* a window's; 0: off */
	uint64_t	 per_uid;
	unsigned	 keep;
	uint64_t	 keep_ns;
	uint64_t	 overwritten_all;	/* windows freed since */
	uint64_t	 snapshots;	/* written since start */
	struct snapjob_list todo;
	struct snapjob_list done;
	unsigned	 out;		/* jobs not back yet */
	unsigned	 snaps_out;	/* of them, snapshots */
	int		 stop;
	int		 started;
	pthread_t	 th;
	int		 efd;
	struct event	*ev;
	struct event	*tick;
	int		 dirfd;		/* STATE/recorder: sessions' files */
	uint64_t	(*indexed)(const struct snapshot_result *);
} rec = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.cond = PTHREAD_COND_INITIALIZER,
	.windows = TAILQ_HEAD_INITIALIZER(rec.windows),
	.todo = STAILQ_HEAD_INITIALIZER(rec.todo),
	.done = STAILQ_HEAD_INITIALIZER(rec.done),
	.efd = -1,
	.dirfd = -1,
};

static void	window_free_locked(struct rwindow *w, struct snapjob_list *rm);
static void	snap_submit(struct snapjob *j);

/* ---- packets ------------------------------------------------------------- */

static uint32_t
pkt_class(size_t n)
{
	uint32_t c;

	for (c = 0; c < PKT_CLASS_SMALL; c++)
		if (n <= (4096u << c))
			return c;
	return PKT_CLASS_SMALL - 1 + (uint32_t)((n + 65535) / 65536) - 1;
}

static size_t
pkt_class_bytes(uint32_t c)
{
	return c < PKT_CLASS_SMALL ? 4096u << c :
	    (size_t)(c - PKT_CLASS_SMALL + 2) * 65536;
}

/*
 * A free packet buffer of class c, or of one of the next PKT_TAKE_UP
 * classes (charged as that one), or NULL (make one unlocked).  Packets
 * of a busy thread differ in size by a few KiB: a full window pushes
 * out one a class larger or smaller as often as not, and taking only
 * the exact class made and unmapped a buffer every other packet.
 */
#define PKT_TAKE_UP	2
static struct rpkt *
pkt_take_locked(uint32_t c)
{
	struct rpkt *p;
	uint32_t k;

	for (k = c; k < PKT_CLASSES && k <= c + PKT_TAKE_UP; k++)
		if ((p = rec.free[k]) != NULL) {
			rec.free[k] = TAILQ_NEXT(p, entry);
			rec.free_bytes -= pkt_class_bytes(k);
			return p;
		}
	return NULL;
}

/*
 * A new packet buffer of class c, or NULL.  A large one is mapped with
 * its pages made in one call (MAP_POPULATE): a window's first lap
 * takes a page fault per 4 KiB otherwise, which cost the daemon 30 ns
 * per 64-byte event kept at 2 M events/s here (2.2 us a fault on a
 * virtual machine), more than the copy.
 */
static struct rpkt *
pkt_make(uint32_t c)
{
	size_t n = sizeof(struct rpkt) + pkt_class_bytes(c);
	void *m;

	if (c < PKT_CLASS_SMALL)
		return malloc(n);
	m = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS |
	    MAP_POPULATE, -1, 0);
	return m == MAP_FAILED ? NULL : m;
}

static void
pkt_destroy(struct rpkt *p)
{
	if (p->cls < PKT_CLASS_SMALL)
		free(p);
	else
		(void)munmap(p, sizeof(*p) + pkt_class_bytes(p->cls));
}

static void
pkt_unref_locked(struct rpkt *p)
{
	size_t n = pkt_class_bytes(p->cls);

	if (--p->refs > 0)
		return;
	if (rec.free_bytes + n > PKT_FREE_MAX) {
		pkt_destroy(p);
		return;
	}
	TAILQ_NEXT(p, entry) = rec.free[p->cls];
	rec.free[p->cls] = p;
	rec.free_bytes += n;
}

/* ---- books --------------------------------------------------------------- */

static uint32_t
book_slot(const struct rtable *t, uint64_t key)
{
	uint32_t mask = t->cap - 1;
	uint32_t i = (uint32_t)(key * 0x9e3779b97f4a7c15ull >> 32) & mask;

	while (t->v[i].used && t->v[i].key != key)
		i = (i + 1) & mask;
	return i;
}

/*
 * The book of 'key' in t, made if new; NULL only when out of memory.
 * The table grows only to take a new key: a pointer to a book stays
 * good until a book is made (or the table pruned: books_prune()).
 */
static struct rbook *
book_get(struct rtable *t, uint64_t key)
{
	uint32_t i;

	if (t->cap > 0) {
		i = book_slot(t, key);
		if (t->v[i].used)
			return &t->v[i];
	}
	if (t->n * 2 >= t->cap) {
		uint32_t cap = t->cap == 0 ? 16 : t->cap * 2, k;
		struct rbook *v = calloc(cap, sizeof(*v));

		if (v == NULL)
			return NULL;
		for (k = 0; k < t->cap; k++) {
			if (!t->v[k].used)
				continue;
			i = (uint32_t)(t->v[k].key * 0x9e3779b97f4a7c15ull >>
			    32) & (cap - 1);
			while (v[i].used)
				i = (i + 1) & (cap - 1);
			v[i] = t->v[k];
		}
		free(t->v);
		t->v = v;
		t->cap = cap;
	}
	i = book_slot(t, key);
	t->v[i].used = 1;
	t->v[i].key = key;
	t->n++;
	return &t->v[i];
}

/*
 * Keep at most about BOOKS_KEEP books in t: past twice that, the books
 * of threads or streams with no packet left in the window are folded
 * into *gone (whose key is their number; NULL: dropped, as a stream's
 * books matter only while it has packets) and t is made again.  A
 * program that starts thread after thread keeps its window's books
 * bounded; a snapshot says the folded ones together.
 */
#define BOOKS_KEEP	4096
static void
books_prune(struct rtable *t, struct rbook *gone)
{
	struct rtable n = { NULL, 0, 0 };
	uint32_t k, cap = 16, i;

	if (t->n < 2 * BOOKS_KEEP)
		return;
	for (k = 0; k < t->cap; k++)
		cap += t->v[k].used && t->v[k].held > 0;
	while (cap & (cap - 1))
		cap &= cap - 1;
	n.cap = cap * 4;
	if ((n.v = calloc(n.cap, sizeof(*n.v))) == NULL)
		return;
	for (k = 0; k < t->cap; k++) {
		struct rbook *b = &t->v[k];

		if (!b->used)
			continue;
		if (b->held > 0) {
			i = book_slot(&n, b->key);
			n.v[i] = *b;
			n.n++;
			continue;
		}
		if (gone == NULL)
			continue;
		gone->key++;
		gone->overwritten += b->overwritten;
		gone->lost += b->lost;
	}
	free(t->v);
	*t = n;
}

static int
book_cmp(const void *a, const void *b)
{
	const struct rbook *x = a, *y = b;

	return x->key < y->key ? -1 : x->key > y->key;
}

/* The used books of t, copied (the caller frees them); NULL if none. */
static struct rbook *
book_copy(const struct rtable *t, uint32_t *n)
{
	struct rbook *v;
	uint32_t i, k = 0;

	*n = 0;
	if (t->n == 0 || (v = calloc(t->n, sizeof(*v))) == NULL)
		return NULL;
	for (i = 0; i < t->cap; i++)
		if (t->v[i].used)
			v[k++] = t->v[i];
	*n = k;
	qsort(v, k, sizeof(*v), book_cmp);
	return v;
}

/* The book of 'key' in a copy (book_copy(): sorted), or NULL. */
static struct rbook *
book_find(struct rbook *v, uint32_t n, uint64_t key)
{
	struct rbook k = { .key = key };

	return n == 0 ? NULL : bsearch(&k, v, n, sizeof(*v), book_cmp);
}

static struct ruid *
uid_get_locked(uid_t uid)
{
	struct ruid *u;
	unsigned i;

	for (i = 0; i < rec.nuids; i++)
		if (rec.uids[i].uid == uid)
			return &rec.uids[i];
	u = reallocarray(rec.uids, rec.nuids + 1, sizeof(*u));
	if (u == NULL)
		return NULL;
	rec.uids = u;
	u = &rec.uids[rec.nuids++];
	memset(u, 0, sizeof(*u));
	u->uid = uid;
	return u;
}

/* ---- the consumer (writer threads) --------------------------------------- */

/*
 * The packet to push out of w: the oldest of a stream that holds more
 * than an equal share of the window, so that a busy thread cannot push
 * out the last events of a quiet one (a thread that stopped writing a
 * while before a crash is often the one to look at); the oldest of all
 * when every stream is within its share, or none is among the first
 * EVICT_LOOK packets.
 */
#define EVICT_LOOK	64
static struct rpkt *
window_victim_locked(struct rwindow *w)
{
	uint64_t share = w->nlive > 0 ? w->bytes / w->nlive : 0;
	struct rpkt *p;
	struct rbook *b;
	int n = 0;

	TAILQ_FOREACH(p, &w->pkts, entry) {
		if (++n > EVICT_LOOK)
			break;
		b = book_get(&w->streams, p->instance);
		if (b == NULL || b->bytes > share)
			return p;
	}
	return TAILQ_FIRST(&w->pkts);
}

/* Push a packet of w out (window_victim_locked()); its events count as
 * overwritten, to its thread and stream. */
static void
window_evict_locked(struct rwindow *w, struct ruid *u)
{
	struct rpkt *p = window_victim_locked(w);
	struct rbook *b;
	size_t n = pkt_class_bytes(p->cls);

	TAILQ_REMOVE(&w->pkts, p, entry);
	w->npkts--;
	w->bytes -= n;
	if (u != NULL)
		u->bytes -= n;
	w->overwritten += p->events;
	if ((b = book_get(&w->threads, (uint64_t)p->tid)) != NULL) {
		b->overwritten += p->events;
		b->held -= b->held > 0;
	}
	if ((b = book_get(&w->streams, p->instance)) != NULL) {
		b->overwritten += p->events;
		b->gone_discarded += p->discarded;
		b->gone_packets++;
		b->held -= b->held > 0;
		if (b->bytes > 0) {
			b->bytes -= b->bytes >= n ? n : b->bytes;
			w->nlive -= b->bytes == 0;
		}
	}
	pkt_unref_locked(p);
}

/*
 * The window of w's uid to give up a packet for w under the uid's
 * bound: its oldest ended window that holds any, else its live window
 * that holds the most (w itself, if none holds more): a new program
 * of a user whose long-running ones fill the bound still gets its
 * share.  NULL if none holds anything.
 */
static struct rwindow *
window_donor_locked(struct rwindow *w)
{
	struct rwindow *o, *big = NULL;

	TAILQ_FOREACH(o, &rec.windows, entry) {
		if (o->uid != w->uid || TAILQ_EMPTY(&o->pkts))
			continue;
		if (o->ended)
			return o;
		if (big == NULL || o->bytes > big->bytes ||
		    (o == w && o->bytes == big->bytes))
			big = o;
	}
	return big;
}

/*
 * Make room for n more bytes in w, under its size and its uid's bound
 * (window_donor_locked()).  Returns 0, or -1 when there is no room
 * (w's size or the uid's bound is smaller than the packet).
 */
static int
window_room_locked(struct rwindow *w, struct ruid *u, size_t n)
{
	struct rwindow *o;

	while (w->bytes + n > w->size && !TAILQ_EMPTY(&w->pkts))
		window_evict_locked(w, u);
	if (w->bytes + n > w->size)
		return -1;
	while (u->bytes + n > rec.per_uid) {
		if ((o = window_donor_locked(w)) == NULL)
			return -1;
		window_evict_locked(o, u);
	}
	return 0;
}

/* Keep a DATA chunk's packet in w. */
static void
window_keep(struct rwindow *w, const struct pring *r, const struct chunk *c)
{
	size_t len = CTF_PACKET_HDR_SIZE + (size_t)c->len;
	uint32_t cls = pkt_class(len);
	uint64_t lost = 0;
	struct rbook *b;
	struct ruid *u;
	struct rpkt *p;
	int i, room;

	for (i = 0; i < TRACED_DROP_PRODUCER_NCAUSES; i++)
		lost += c->lost[i];
	pthread_mutex_lock(&rec.lock);
	p = pkt_take_locked(cls);
	pthread_mutex_unlock(&rec.lock);
	if (p == NULL && (p = pkt_make(cls)) != NULL)
		p->cls = cls;
	if (p != NULL) {
		cls = p->cls;	/* a larger one, maybe */
		memcpy(p->data, c->pkt, len);
		p->refs = 1;
		p->len = (uint32_t)len;
		p->tid = c->tid;
		p->instance = r->instance;
		p->events = c->events;
		p->discarded = c->discarded;
		p->ts_first = c->ts_first;
		p->ts_last = ctf_get64(c->pkt + 40);
	}

	pthread_mutex_lock(&rec.lock);
	books_prune(&w->threads, &w->gone_threads);
	books_prune(&w->streams, NULL);
	w->kept += c->events;
	w->lost += lost;
	u = uid_get_locked(w->uid);
	room = p != NULL && u != NULL &&
	    window_room_locked(w, u, pkt_class_bytes(cls)) == 0;
	/* After the room is made: evictions may have made books. */
	if ((b = book_get(&w->threads, (uint64_t)c->tid)) != NULL) {
		b->lost += lost;
		b->held += room;
	}
	if (!room) {
		/* No room at all: as if pushed out at once. */
		w->overwritten += c->events;
		if (b != NULL)
			b->overwritten += c->events;
		if ((b = book_get(&w->streams, r->instance)) != NULL) {
			b->overwritten += c->events;
			b->gone_discarded += c->discarded;
			b->gone_packets++;
		}
		if (p != NULL)
			pkt_unref_locked(p);
	} else {
		p->seq = w->seq++;
		TAILQ_INSERT_TAIL(&w->pkts, p, entry);
		w->npkts++;
		w->bytes += pkt_class_bytes(cls);
		u->bytes += pkt_class_bytes(cls);
		if ((b = book_get(&w->streams, r->instance)) != NULL) {
			w->nlive += b->bytes == 0;
			b->bytes += pkt_class_bytes(cls);
			b->held++;
		}
	}
	pthread_mutex_unlock(&rec.lock);
}

/* A ring's END: the losses no record told, to its last thread. */
static void
window_end_ring(struct rwindow *w, const struct pring *r,
    const struct chunk *c)
{
	uint64_t n = 0;
	struct rbook *b;
	int i;

	for (i = 0; i < TRACED_DROP_PRODUCER_NCAUSES; i++)
		n += c->unrecorded[i];
	if (n == 0)
		return;
	pthread_mutex_lock(&rec.lock);
	w->lost += n;
	if ((b = book_get(&w->threads, (uint64_t)c->tid)) != NULL)
		b->lost += n;
	if ((b = book_get(&w->streams, r->instance)) != NULL)
		b->unrecorded += n;
	pthread_mutex_unlock(&rec.lock);
}

/*
 * The consumer: a recording session's packets go into its window (the
 * stream writer wrote none of them: stream.c).  Writer thread w,
 * holding the ring.
 */
static void
recorder_write(const struct consumer *self, struct pring *r,
    struct chunk_list *list, struct writer *wr)
{
	/* Pairs with the loop's store-release (meta.c). */
	struct rwindow *w = __atomic_load_n(&r->feed->rec, __ATOMIC_ACQUIRE);
	struct chunk *c;

	(void)self;
	(void)wr;
	if (w == NULL)
		return;
	STAILQ_FOREACH(c, list, entry) {
		/* Whatever it holds: events, LOST records, a crash. */
		if (c->kind == CHUNK_DATA && c->len > 0)
			window_keep(w, r, c);
		else if (c->kind == CHUNK_END && c->how != END_INVALID)
			window_end_ring(w, r, c);
	}
}

const struct consumer recorder_consumer = {
	.name = "recorder",
	.write = recorder_write,
};

/* ---- windows (loop thread) ----------------------------------------------- */

/* A session's window, of the recorder's size now; its directory comes
 * with recorder_window_dir().  NULL: off, or out of memory. */
struct rwindow *
recorder_window_new(uint32_t session, uid_t uid, pid_t pid, const char *comm,
    int clock)
{
	struct rwindow *w;

	if (rec.size == 0 || (w = calloc(1, sizeof(*w))) == NULL)
		return NULL;
	w->size = rec.size;
	w->dirfd = -1;
	TAILQ_INIT(&w->pkts);
	w->session = session;
	w->uid = uid;
	w->pid = pid;
	w->clock = clock;
	snprintf(w->comm, sizeof(w->comm), "%s", comm);
	pthread_mutex_lock(&rec.lock);
	TAILQ_INSERT_TAIL(&rec.windows, w, entry);
	pthread_mutex_unlock(&rec.lock);
	return w;
}

/* The session's directory moved (deleted and made again: meta.c). */
void
recorder_window_dir(struct rwindow *w, int dirfd, const char *name)
{
	int fd = fcntl(dirfd, F_DUPFD_CLOEXEC, 3);

	if (fd == -1)
		return;
	if (w->dirfd != -1)
		close(w->dirfd);
	w->dirfd = fd;
	snprintf(w->name, sizeof(w->name), "%s", name);
}

/*
 * Free the ended windows past their time or their number, the oldest
 * first, and remove their directories (on the snapshot thread).
 */
static void
windows_expire(void)
{
	struct snapjob_list rm = STAILQ_HEAD_INITIALIZER(rm);
	struct rwindow *w, *next;
	uint64_t now = now_ns(CLOCK_MONOTONIC);
	struct ruid *u;
	struct snapjob *j;

	pthread_mutex_lock(&rec.lock);
	for (w = TAILQ_FIRST(&rec.windows); w != NULL; w = next) {
		next = TAILQ_NEXT(w, entry);
		if (!w->ended)
			continue;
		u = uid_get_locked(w->uid);
		if (now - w->ended_at >= rec.keep_ns ||
		    (u != NULL && u->ended > rec.keep))
			window_free_locked(w, &rm);
	}
	pthread_mutex_unlock(&rec.lock);
	while ((j = STAILQ_FIRST(&rm)) != NULL) {
		STAILQ_REMOVE_HEAD(&rm, entry);
		snap_submit(j);
	}
}

/* The session is gone: its window stays, for a while (windows_expire()). */
void
recorder_window_end(struct rwindow *w)
{
	struct ruid *u;

	if (w == NULL)
		return;
	pthread_mutex_lock(&rec.lock);
	w->ended = 1;
	w->ended_at = now_ns(CLOCK_MONOTONIC);
	if ((u = uid_get_locked(w->uid)) != NULL)
		u->ended++;
	pthread_mutex_unlock(&rec.lock);
	windows_expire();
}

static void
window_free_locked(struct rwindow *w, struct snapjob_list *rm)
{
	struct ruid *u = uid_get_locked(w->uid);
	struct snapjob *j = NULL;

	while (!TAILQ_EMPTY(&w->pkts))
		window_evict_locked(w, u);
	rec.overwritten_all += w->overwritten;
	if (u != NULL && w->ended)
		u->ended--;
	TAILQ_REMOVE(&rec.windows, w, entry);
	/* Its directory (metadata, functions) goes too, off the loop. */
	if (rm != NULL && w->name[0] != '\0' &&
	    (j = calloc(1, sizeof(*j))) != NULL &&
	    (j->path = strdup(w->name)) != NULL) {
		j->rmdir = 1;
		j->parentfd = -1;
		STAILQ_INSERT_TAIL(rm, j, entry);
	} else
		free(j);
	if (w->dirfd != -1)
		close(w->dirfd);
	free(w->threads.v);
	free(w->streams.v);
	free(w);
}

static void
recorder_tick_cb(int fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
	windows_expire();
}

/* ---- snapshots: the loop's part ------------------------------------------ */

static int
window_matches(const struct rwindow *w, const struct snapshot_req *q)
{
	if (!q->any_uid && w->uid != q->uid)
		return 0;
	if (q->glob == NULL)
		return 1;
	return fnmatch(q->glob, w->comm, 0) == 0 ||
	    fnmatch(q->glob, w->name, 0) == 0;
}

/* w as it is now, referenced, into sw.  0, or -1 (ENOMEM). */
static int
window_take_locked(struct rwindow *w, const struct snapshot_req *q,
    struct snapwin *sw)
{
	const struct dclock *dc = dclock_get(w->clock);
	uint64_t cutoff = 0, now, back;
	struct rbook *b;
	struct rpkt *p;
	size_t i = 0;

	if (q->last_ns > 0 && dc != NULL) {
		now = now_ticks(w->clock);
		back = (uint64_t)((double)q->last_ns * (double)dc->freq / 1e9);
		cutoff = now > back ? now - back : 0;
	}
	memset(sw, 0, sizeof(*sw));
	sw->dirfd = -1;
	if (w->npkts > 0 && (sw->pk = calloc(w->npkts, sizeof(*sw->pk))) ==
	    NULL)
		return -1;
	sw->threads = book_copy(&w->threads, &sw->nthreads);
	sw->streams = book_copy(&w->streams, &sw->nstreams);
	TAILQ_FOREACH(p, &w->pkts, entry) {
		if (p->ts_last < cutoff) {
			/* Before the snapshot, as much as overwritten. */
			if ((b = book_find(sw->threads, sw->nthreads,
			    (uint64_t)p->tid)) != NULL)
				b->skipped += p->events;
			if ((b = book_find(sw->streams, sw->nstreams,
			    p->instance)) != NULL) {
				b->skipped += p->events;
				b->gone_discarded += p->discarded;
				b->gone_packets++;
			}
			continue;
		}
		p->refs++;
		sw->pk[i++] = p;
	}
	sw->npk = i;
	sw->session = w->session;
	sw->uid = w->uid;
	sw->pid = w->pid;
	sw->ended = w->ended;
	memcpy(sw->comm, w->comm, sizeof(sw->comm));
	memcpy(sw->name, w->name, sizeof(sw->name));
	sw->gone_threads = w->gone_threads;
	sw->dirfd = w->dirfd == -1 ? -1 :
	    fcntl(w->dirfd, F_DUPFD_CLOEXEC, 3);
	return 0;
}

static void
snapjob_free(struct snapjob *j)
{
	size_t i, k;

	pthread_mutex_lock(&rec.lock);
	for (i = 0; i < j->nw; i++)
		for (k = 0; k < j->w[i].npk; k++)
			pkt_unref_locked(j->w[i].pk[k]);
	pthread_mutex_unlock(&rec.lock);
	for (i = 0; i < j->nw; i++) {
		free(j->w[i].pk);
		free(j->w[i].threads);
		free(j->w[i].streams);
		if (j->w[i].dirfd != -1)
			close(j->w[i].dirfd);
	}
	if (j->parentfd != -1)
		close(j->parentfd);
	free(j->w);
	free(j->path);
	free(j->shown);
	free(j->reason);
	free(j);
}

static void
snap_submit(struct snapjob *j)
{
	pthread_mutex_lock(&rec.lock);
	STAILQ_INSERT_TAIL(&rec.todo, j, entry);
	rec.out++;
	rec.snaps_out += !j->rmdir;
	pthread_cond_signal(&rec.cond);
	pthread_mutex_unlock(&rec.lock);
}

int
recorder_snapshot(const struct snapshot_req *q, char *err, size_t errsize)
{
	struct snapjob *j;
	struct rwindow *w;
	size_t n = 0, any = 0;
	struct tm tm;
	time_t t;
	char name[64];

	if (!rec.started) {
		snprintf(err, errsize, "the recorder is not running");
		return -1;
	}
	/* Each holds every packet of its windows until written. */
	if (rec.snaps_out >= SNAPS_OUT_MAX) {
		snprintf(err, errsize, "%u snapshots are being written "
		    "already: try again when one is done (tracectl info "
		    "snapshots lists them)", rec.snaps_out);
		return -1;
	}
	if ((j = calloc(1, sizeof(*j))) == NULL)
		goto nomem;
	j->parentfd = -1;
	j->any_uid = q->any_uid;
	j->uid = q->uid;
	j->done = q->done;
	j->arg = q->arg;
	j->time = now_ns(CLOCK_REALTIME);
	if ((j->reason = strdup(q->reason != NULL ? q->reason : "")) == NULL)
		goto nomem;
	if (q->dir != NULL) {
		if ((j->path = strdup(q->dir)) == NULL ||
		    (j->shown = strdup(q->dir)) == NULL)
			goto nomem;
	} else {
		if (outdir_fd() == -1) {
			snprintf(err, errsize, "no trace directory to write "
			    "the snapshot in (%s): give one with -o DIR",
			    outdir_path());
			snapjob_free(j);
			return -1;
		}
		t = (time_t)(j->time / 1000000000u);
		localtime_r(&t, &tm);
		strftime(name, sizeof(name), "snapshot-%Y%m%d-%H%M%S", &tm);
		/* Where it goes, and its name for people, now: a
		 * trace-file set meanwhile moves neither. */
		if ((j->path = strdup(name)) == NULL ||
		    asprintf(&j->shown, "%s/%s", outdir_path(), name) == -1 ||
		    (j->parentfd = fcntl(outdir_fd(), F_DUPFD_CLOEXEC, 3)) ==
		    -1) {
			j->shown = NULL;
			goto nomem;
		}
	}

	pthread_mutex_lock(&rec.lock);
	TAILQ_FOREACH(w, &rec.windows, entry) {
		any++;
		n += window_matches(w, q);
	}
	if (n > 0 && (j->w = calloc(n, sizeof(*j->w))) == NULL) {
		pthread_mutex_unlock(&rec.lock);
		goto nomem;
	}
	TAILQ_FOREACH(w, &rec.windows, entry) {
		if (!window_matches(w, q))
			continue;
		if (window_take_locked(w, q, &j->w[j->nw]) == -1) {
			pthread_mutex_unlock(&rec.lock);
			goto nomem;
		}
		j->nw++;
	}
	pthread_mutex_unlock(&rec.lock);
	if (j->nw == 0) {
		if (any == 0)
			snprintf(err, errsize, "the recorder holds no window%s",
			    rec.size == 0 ? ": it is off (traced --recorder "
			    "SIZE, or tracectl trace-file recorder SIZE)" :
			    " yet: no session has recorded an event");
		else
			snprintf(err, errsize, "no recorded session matches "
			    "%s%s", q->glob != NULL ? q->glob : "",
			    q->any_uid ? "" : " of that user");
		snapjob_free(j);
		return -1;
	}
	snap_submit(j);
	return 0;
nomem:
	snprintf(err, errsize, "out of memory");
	if (j != NULL)
		snapjob_free(j);
	return -1;
}

/* ---- snapshots: the thread's part ---------------------------------------- */

/* Remove the directory 'name' in dirfd and what is in it, two levels. */
static void
rm_tree(int dirfd, const char *name, int depth)
{
	struct dirent *e;
	DIR *d;
	int fd;

	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC);
	if (fd != -1 && (d = fdopendir(fd)) != NULL) {
		while ((e = readdir(d)) != NULL) {
			if (strcmp(e->d_name, ".") == 0 ||
			    strcmp(e->d_name, "..") == 0)
				continue;
			if (unlinkat(fd, e->d_name, 0) == -1 && errno == EISDIR
			    && depth > 0)
				rm_tree(fd, e->d_name, depth - 1);
		}
		closedir(d);
	} else if (fd != -1)
		close(fd);
	(void)unlinkat(dirfd, name, AT_REMOVEDIR);
}

/* Copy the file 'name' of 'from' into 'to'; up to max bytes (0: all).
 * 0, or an errno; ENOENT when there is none to copy. */
static int
copy_file(int from, int to, const char *name, char **text, size_t *tlen)
{
	char *buf = NULL, *nb;
	size_t len = 0, cap = 0;
	ssize_t got;
	int in, out, err = 0;

	if ((in = openat(from, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) == -1)
		return errno;
	for (;;) {
		if (len == cap) {
			cap = cap == 0 ? 65536 : cap * 2;
			if ((nb = realloc(buf, cap + 1)) == NULL) {
				err = ENOMEM;
				break;
			}
			buf = nb;
		}
		if ((got = read(in, buf + len, cap - len)) <= 0) {
			if (got < 0)
				err = errno;
			break;
		}
		len += (size_t)got;
	}
	close(in);
	if (err == 0 && text != NULL) {
		/*
		 * The metadata may be growing while we read it (a provider
		 * registered): keep what ends at the last whole
		 * declaration.  Every packet kept was read after the
		 * declarations of its events were written.
		 */
		char *end = NULL, *p = buf;

		buf[len] = '\0';
		while ((p = memmem(p, len - (size_t)(p - buf), "\n};\n\n",
		    5)) != NULL) {
			end = p + 5;
			p = end;
		}
		len = end != NULL ? (size_t)(end - buf) : 0;
	}
	if (err == 0) {
		out = openat(to, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
		    O_CLOEXEC, 0640);
		if (out == -1)
			err = errno;
		else {
			if (write(out, buf, len) != (ssize_t)len)
				err = errno != 0 ? errno : EIO;
			close(out);
		}
	}
	if (err == 0 && text != NULL) {
		*text = buf;
		*tlen = len;
	} else
		free(buf);
	return err;
}

/* Copy the sub-directory 'name' of 'from' (files only) into 'to'. */
static void
copy_dir(int from, int to, const char *name)
{
	struct dirent *e;
	int in, out;
	DIR *d;

	in = openat(from, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC);
	if (in == -1)
		return;
	if ((mkdirat(to, name, 0750) == -1 && errno != EEXIST) ||
	    (out = openat(to, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1) {
		close(in);
		return;
	}
	if ((d = fdopendir(in)) == NULL) {
		close(in);
		close(out);
		return;
	}
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.' && e->d_type == DT_REG)
			(void)copy_file(dirfd(d), out, e->d_name, NULL, NULL);
	closedir(d);
	close(out);
}

/* The trace uuid the metadata declares, into uuid.  0, or -1. */
static int
meta_uuid(const char *text, uint8_t uuid[16])
{
	const char *p = strstr(text, "uuid = \"");
	unsigned v;
	int i = 0;

	if (p == NULL)
		return -1;
	for (p += 8; i < 16 && *p != '"' && *p != '\0'; p++) {
		if (*p == '-')
			continue;
		if (sscanf(p, "%2x", &v) != 1)
			return -1;
		uuid[i++] = (uint8_t)v;
		p++;
	}
	return i == 16 ? 0 : -1;
}

/* All of iov[0, n) at the end of fd.  0, or an errno. */
static int
write_all(int fd, struct iovec *iov, int n)
{
	ssize_t got;

	while (n > 0) {
		if ((got = writev(fd, iov, n)) < 0) {
			if (errno == EINTR)
				continue;
			return errno;
		}
		while (n > 0 && (size_t)got >= iov->iov_len) {
			got -= (ssize_t)iov->iov_len;
			iov++;
			n--;
		}
		if (n > 0) {
			iov->iov_base = (uint8_t *)iov->iov_base + got;
			iov->iov_len -= (size_t)got;
		}
	}
	return 0;
}

/* Per-thread figures of a snapshot, gathered from its packets. */
struct snapthread {
	uint64_t	 events;
	uint64_t	 first_ts, last_ts;
};

/*
 * Write one stream: pk[0, npk), the packets of one stream oldest
 * first, renumbered from 0, their discards going on from what the
 * window pushed out or lost before them.  0, or an errno.
 */
static int
snap_stream(struct snapjob *j, struct snapwin *sw, int sdir,
    const uint8_t uuid[16], struct rpkt **pk, size_t npk)
{
	uint8_t (*hdrs)[CTF_PACKET_HDR_SIZE];
	uint8_t first[CTF_PACKET_HDR_SIZE], last[CTF_PACKET_HDR_SIZE];
	struct iovec iov[2 * SNAP_IOV_MAX + 2];
	uint64_t instance = pk[0]->instance;
	const struct rbook *b = book_find(sw->streams, sw->nstreams, instance);
	uint64_t seq = 0, disc, end_ts = 0;
	char fname[64];
	size_t i;
	pid_t tid = pk[0]->tid;
	int fd = -1, k = 0, h = 0, err = 0, n;

	hdrs = malloc(SNAP_IOV_MAX * sizeof(*hdrs));
	if (hdrs == NULL)
		return ENOMEM;
	for (n = 0; n < 100000 && fd == -1; n++) {
		if (n == 0)
			snprintf(fname, sizeof(fname), "stream-%d", (int)tid);
		else
			snprintf(fname, sizeof(fname), "stream-%d.%d",
			    (int)tid, n);
		fd = openat(sdir, fname, O_WRONLY | O_CREAT | O_EXCL |
		    O_NOFOLLOW | O_CLOEXEC, 0640);
		if (fd == -1 && errno != EEXIST)
			break;
	}
	if (fd == -1) {
		free(hdrs);
		return errno;
	}
	/*
	 * What came before the window, said behind an empty first packet
	 * as babeltrace2 reads a gap between two packets: the packets
	 * pushed out (or older than --last) as missing packet numbers,
	 * overwritten and never lost ("discarded packets"), and what the
	 * ring lost meanwhile as the discards of the first packet that
	 * holds events ("discarded events").  traced/snapshot has the
	 * counts per thread.
	 */
	disc = b != NULL ? b->gone_discarded : 0;
	if (b != NULL && (b->gone_packets > 0 || disc > 0)) {
		ctf_packet_empty(first, uuid, instance, (uint32_t)tid,
		    pk[0]->ts_first, seq++, 0);
		iov[k].iov_base = first;
		iov[k++].iov_len = CTF_PACKET_HDR_SIZE;
		j->bytes += CTF_PACKET_HDR_SIZE;
		seq += b->gone_packets;
	}
	for (i = 0; i < npk && err == 0; i++) {
		struct rpkt *p = pk[i];

		disc += p->discarded;
		memcpy(hdrs[h], p->data, CTF_PACKET_HDR_SIZE);
		memcpy(hdrs[h] + 4, uuid, 16);
		ctf_put64(hdrs[h] + 56, (uint64_t)p->len * 8);
		ctf_put64(hdrs[h] + 64, seq++);
		ctf_put64(hdrs[h] + 72, disc);
		iov[k].iov_base = hdrs[h++];
		iov[k++].iov_len = CTF_PACKET_HDR_SIZE;
		iov[k].iov_base = p->data + CTF_PACKET_HDR_SIZE;
		iov[k++].iov_len = p->len - CTF_PACKET_HDR_SIZE;
		j->bytes += p->len;
		j->events += p->events;
		end_ts = p->ts_last;
		tid = p->tid;
		if (h == SNAP_IOV_MAX) {
			err = write_all(fd, iov, k);
			k = h = 0;
		}
	}
	/* Its ring ended with losses no record told: a last empty one. */
	if (err == 0 && b != NULL && b->unrecorded > 0 && sw->ended) {
		disc += b->unrecorded;
		ctf_packet_empty(last, uuid, instance, (uint32_t)tid, end_ts,
		    seq++, disc);
		iov[k].iov_base = last;
		iov[k++].iov_len = CTF_PACKET_HDR_SIZE;
		j->bytes += CTF_PACKET_HDR_SIZE;
	}
	if (err == 0 && k > 0)
		err = write_all(fd, iov, k);
	if (close(fd) == -1 && err == 0)
		err = errno;
	free(hdrs);
	return err;
}

/* traced/snapshot: where each thread's history starts in it, and how
 * much came before. */
static int
snap_books(struct snapjob *j, struct snapwin *sw, int sdir)
{
	struct snapthread *t = NULL;
	size_t i, k;
	FILE *f;
	int fd, tfd, err = 0;

	if ((mkdirat(sdir, "traced", 0750) == -1 && errno != EEXIST) ||
	    (tfd = openat(sdir, "traced", O_RDONLY | O_DIRECTORY |
	    O_NOFOLLOW | O_CLOEXEC)) == -1)
		return errno;
	fd = openat(tfd, "snapshot", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0640);
	close(tfd);
	if (fd == -1 || (f = fdopen(fd, "w")) == NULL) {
		err = errno;
		if (fd != -1)
			close(fd);
		return err;
	}
	/* Each thread's figures in the snapshot, by its book's place. */
	t = calloc(sw->nthreads + 1, sizeof(*t));
	for (i = 0; t != NULL && i < sw->npk; i++) {
		const struct rbook *b = book_find(sw->threads, sw->nthreads,
		    (uint64_t)sw->pk[i]->tid);

		if (b == NULL)
			continue;	/* no book: out of memory then */
		k = (size_t)(b - sw->threads);
		if (t[k].first_ts == 0 || sw->pk[i]->ts_first < t[k].first_ts)
			t[k].first_ts = sw->pk[i]->ts_first;
		if (sw->pk[i]->ts_last > t[k].last_ts)
			t[k].last_ts = sw->pk[i]->ts_last;
		t[k].events += sw->pk[i]->events;
	}
	fprintf(f, "# traced snapshot of session %u, %s[%d]: per thread, the "
	    "events in it, and\n# those before it: overwritten (pushed out "
	    "of the window), lost (never\n# recorded: see traced:lost), "
	    "skipped (older than --last).\n# events + overwritten + lost + "
	    "skipped = what the thread emitted.\n", sw->session, sw->comm,
	    (int)sw->pid);
	fprintf(f, "reason %s\n", j->reason);
	fprintf(f, "taken_ns %" PRIu64 "\n", j->time);
	fprintf(f, "process %s\n", sw->ended ? "ended" : "running");
	for (k = 0; t != NULL && k < sw->nthreads; k++) {
		const struct rbook *b = &sw->threads[k];

		fprintf(f, "thread %d events %" PRIu64 " overwritten %" PRIu64
		    " lost %" PRIu64 " skipped %" PRIu64 " first_ts %" PRIu64
		    " last_ts %" PRIu64 "\n", (int)b->key, t[k].events,
		    b->overwritten, b->lost, b->skipped, t[k].first_ts,
		    t[k].last_ts);
	}
	/* Threads long gone from the window, whose books were folded. */
	if (sw->gone_threads.key > 0)
		fprintf(f, "gone_threads %" PRIu64 " overwritten %" PRIu64
		    " lost %" PRIu64 "\n", sw->gone_threads.key,
		    sw->gone_threads.overwritten, sw->gone_threads.lost);
	if (t == NULL)
		err = ENOMEM;
	free(t);
	if (fclose(f) != 0 && err == 0)
		err = errno;
	return err;
}

/* By stream, then by the order they were kept in (seq). */
static int
pkt_cmp(const void *a, const void *b)
{
	const struct rpkt *x = *(struct rpkt *const *)a;
	const struct rpkt *y = *(struct rpkt *const *)b;

	if (x->instance != y->instance)
		return x->instance < y->instance ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* One session's directory of the snapshot.  0, or an errno. */
static int
snap_session(struct snapjob *j, struct snapwin *sw, int top)
{
	uint8_t uuid[16];
	char *meta = NULL;
	size_t mlen = 0, i, k;
	int sdir, err;

	if (sw->dirfd == -1)
		return EBADF;
	if (mkdirat(top, sw->name, 0750) == -1)
		return errno;
	sdir = openat(top, sw->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC);
	if (sdir == -1)
		return errno;
	err = copy_file(sw->dirfd, sdir, "metadata", &meta, &mlen);
	if (err == 0 && meta_uuid(meta, uuid) == -1)
		err = EBADMSG;
	free(meta);
	if (err == 0) {
		copy_dir(sw->dirfd, sdir, "functions");
		copy_dir(sw->dirfd, sdir, "traced");
	}
	/* The packets by stream, each stream's in their order (a stable
	 * sort: the window's order is each stream's), a stream a file. */
	qsort(sw->pk, sw->npk, sizeof(*sw->pk), pkt_cmp);
	for (i = 0; err == 0 && i < sw->npk; i = k) {
		for (k = i + 1; k < sw->npk &&
		    sw->pk[k]->instance == sw->pk[i]->instance; k++)
			;
		err = snap_stream(j, sw, sdir, uuid, sw->pk + i, k - i);
	}
	if (err == 0)
		err = snap_books(j, sw, sdir);
	close(sdir);
	return err;
}

static void
snap_write(struct snapjob *j)
{
	char path[PATH_MAX];
	size_t i;
	int top = -1, base = j->parentfd != -1 ? j->parentfd : AT_FDCWD, n;

	/* A new directory: another snapshot of the same second gets .1. */
	snprintf(path, sizeof(path), "%s", j->path);
	for (n = 1; mkdirat(base, path, 0750) == -1; n++) {
		if (errno != EEXIST || j->parentfd == -1 || n == 1000) {
			j->err = errno;
			snprintf(j->errmsg, sizeof(j->errmsg), "mkdir %s: %s%s",
			    j->shown, strerror(errno), errno == EEXIST ?
			    ": give a new directory" : errno == ENOENT ?
			    ": its parent directory must exist" : "");
			return;
		}
		snprintf(path, sizeof(path), "%s.%d", j->path, n);
	}
	if (n > 1) {
		char *shown = NULL;

		if (asprintf(&shown, "%s.%d", j->shown, n - 1) != -1) {
			free(j->shown);
			j->shown = shown;
		}
	}
	top = openat(base, path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC);
	if (top == -1) {
		j->err = errno;
		snprintf(j->errmsg, sizeof(j->errmsg), "open %s: %s", path,
		    strerror(errno));
		return;
	}
	for (i = 0; i < j->nw; i++) {
		int err = snap_session(j, &j->w[i], top);

		if (err == 0) {
			j->written++;
			continue;
		}
		/* What is left of it would only mislead a reader. */
		rm_tree(top, j->w[i].name, 2);
		j->err = err;
		snprintf(j->errmsg, sizeof(j->errmsg), "session %u (%s): %s",
		    j->w[i].session, j->w[i].name, err == EBADMSG ?
		    "its metadata in the recorder's directory is missing or "
		    "cut short (was STATE_DIR/recorder touched?)" :
		    strerror(err));
	}
	(void)fsync(top);
	close(top);
	/* Nothing written: no empty directory left behind. */
	if (j->written == 0)
		(void)unlinkat(base, path, AT_REMOVEDIR);
}

static void *
snap_main(void *arg)
{
	struct snapjob *j;
	uint64_t one = 1;

	(void)arg;
	worker_self("traced-snapshot", 0);
	pthread_mutex_lock(&rec.lock);
	for (;;) {
		while (!rec.stop && STAILQ_EMPTY(&rec.todo))
			pthread_cond_wait(&rec.cond, &rec.lock);
		if ((j = STAILQ_FIRST(&rec.todo)) == NULL)
			break;
		STAILQ_REMOVE_HEAD(&rec.todo, entry);
		pthread_mutex_unlock(&rec.lock);
		if (j->rmdir)
			rm_tree(rec.dirfd, j->path, 2);
		else
			snap_write(j);
		pthread_mutex_lock(&rec.lock);
		STAILQ_INSERT_TAIL(&rec.done, j, entry);
		(void)!write(rec.efd, &one, sizeof(one));
	}
	pthread_mutex_unlock(&rec.lock);
	return NULL;
}

/* Snapshots written: to the index, the log and whoever asked.  Loop. */
static void
snap_done_cb(int fd, short what, void *arg)
{
	struct snapjob_list done = STAILQ_HEAD_INITIALIZER(done);
	struct snapshot_result res;
	struct snapjob *j;
	char full[PATH_MAX];
	uint64_t n;

	(void)what;
	(void)arg;
	(void)!read(fd, &n, sizeof(n));
	pthread_mutex_lock(&rec.lock);
	STAILQ_CONCAT(&done, &rec.done);
	pthread_mutex_unlock(&rec.lock);
	while ((j = STAILQ_FIRST(&done)) != NULL) {
		STAILQ_REMOVE_HEAD(&done, entry);
		rec.out--;
		if (j->rmdir) {
			snapjob_free(j);
			continue;
		}
		snprintf(full, sizeof(full), "%s", j->shown);
		rec.snaps_out--;
		memset(&res, 0, sizeof(res));
		res.any_uid = j->any_uid;
		res.uid = j->uid;
		res.dir = full;
		res.reason = j->reason;
		res.time = j->time;
		res.sessions = j->written;
		res.events = j->events;
		res.bytes = j->bytes;
		res.err = j->err;
		res.errmsg = j->err != 0 ? j->errmsg : NULL;
		if (j->written > 0) {
			rec.snapshots++;
			if (rec.indexed != NULL)
				res.id = rec.indexed(&res);
			log_info("snapshot %s (%s): %u session%s, %" PRIu64
			    " events, %" PRIu64 " bytes", full, j->reason,
			    j->written, j->written == 1 ? "" : "s", j->events,
			    j->bytes);
		}
		if (j->err != 0)
			log_warnx("snapshot %s: %s", full, j->errmsg);
		if (j->done != NULL)
			j->done(j->arg, &res);
		snapjob_free(j);
	}
}

/* ---- start, stop, settings, figures -------------------------------------- */

int
recorder_start(struct event_base *base, int state_dirfd,
    uint64_t (*indexed)(const struct snapshot_result *))
{
	struct timeval tv = { RECORDER_TICK_MS / 1000, 0 };
	struct dirent *e;
	DIR *d;
	int fd;

	/* The recording sessions' metadata and function tables: what a
	 * snapshot copies.  What a daemon before this one left is gone
	 * with its windows. */
	if ((mkdirat(state_dirfd, "recorder", 0750) == -1 && errno != EEXIST)
	    || (rec.dirfd = openat(state_dirfd, "recorder", O_RDONLY |
	    O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) == -1) {
		log_warn("recorder: its directory in the state directory");
		return -1;
	}
	if ((fd = dup(rec.dirfd)) != -1 && (d = fdopendir(fd)) != NULL) {
		while ((e = readdir(d)) != NULL)
			if (strcmp(e->d_name, ".") != 0 &&
			    strcmp(e->d_name, "..") != 0)
				rm_tree(rec.dirfd, e->d_name, 2);
		closedir(d);
	} else if (fd != -1)
		close(fd);
	if (worker_start(base, "snapshot", snap_main, NULL, snap_done_cb,
	    &rec.efd, &rec.ev, &rec.th) == -1)
		return -1;
	(void)event_priority_set(rec.ev, LOOP_PRI_FIRST);
	rec.tick = event_new(base, -1, EV_PERSIST, recorder_tick_cb, NULL);
	if (rec.tick != NULL)
		(void)evtimer_add(rec.tick, &tv);
	rec.indexed = indexed;
	rec.started = 1;
	return 0;
}

/* Stop the snapshot thread once what it was given is written. */
void
recorder_stop(void)
{
	struct rwindow *w;

	if (!rec.started)
		return;
	pthread_mutex_lock(&rec.lock);
	rec.stop = 1;
	pthread_cond_signal(&rec.cond);
	pthread_mutex_unlock(&rec.lock);
	pthread_join(rec.th, NULL);
	snap_done_cb(rec.efd, 0, NULL);
	pthread_mutex_lock(&rec.lock);
	while ((w = TAILQ_FIRST(&rec.windows)) != NULL)
		window_free_locked(w, NULL);
	for (int c = 0; c < PKT_CLASSES; c++)
		while (rec.free[c] != NULL) {
			struct rpkt *p = rec.free[c];

			rec.free[c] = TAILQ_NEXT(p, entry);
			pkt_destroy(p);
		}
	pthread_mutex_unlock(&rec.lock);
	if (rec.tick != NULL)
		event_free(rec.tick);
	event_free(rec.ev);
	close(rec.efd);
	close(rec.dirfd);
	free(rec.uids);
	rec.started = 0;
}

/*
 * The settings (traced.conf(5)): a window's size for the sessions that
 * begin from now on (recorder; 0: they are written, not recorded),
 * every window of a uid together (recorder-bytes-per-uid; 0: an eighth
 * of the machine's memory), and how many ended windows of a uid are
 * kept, for how long.  At start, at SIGHUP and after trace-file
 * recorder.  Loop thread.
 */
void
recorder_configure(const struct config *c)
{
	uint64_t per_uid = c->limit[LIMIT_RECORDER_BYTES];
	long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);

	if (per_uid == 0)
		per_uid = pages > 0 && psize > 0 ?
		    (uint64_t)pages * (uint64_t)psize / 8 : UINT64_C(1) << 30;
	if (c->limit[LIMIT_RECORDER] > per_uid)
		log_warnx("recorder: a window of %" PRIu64 " MiB is more than "
		    "a uid's windows may hold together (recorder-bytes-per-uid "
		    "%" PRIu64 " MiB): a session keeps at most that",
		    c->limit[LIMIT_RECORDER] >> 20, per_uid >> 20);
	pthread_mutex_lock(&rec.lock);
	rec.size = c->limit[LIMIT_RECORDER];
	rec.per_uid = per_uid;
	rec.keep = (unsigned)c->limit[LIMIT_RECORDER_KEEP];
	rec.keep_ns = c->limit[LIMIT_RECORDER_KEEP_TIME] *
	    UINT64_C(1000000000);
	pthread_mutex_unlock(&rec.lock);
	if (rec.started)
		windows_expire();
}

uint64_t
recorder_size(void)
{
	return rec.size;
}

int
recorder_dirfd(void)
{
	return rec.dirfd;
}

void
recorder_stats(struct recorder_stats *st)
{
	struct rwindow *w;

	memset(st, 0, sizeof(*st));
	pthread_mutex_lock(&rec.lock);
	st->size = rec.size;
	st->per_uid = rec.per_uid;
	st->keep = rec.keep;
	st->keep_ns = rec.keep_ns;
	st->overwritten = rec.overwritten_all;
	st->snapshots = rec.snapshots;
	st->spare_bytes = rec.free_bytes;
	TAILQ_FOREACH(w, &rec.windows, entry) {
		st->windows++;
		st->ended += w->ended != 0;
		st->bytes += w->bytes;
		st->events += w->kept;
		st->overwritten += w->overwritten;
		st->lost += w->lost;
	}
	pthread_mutex_unlock(&rec.lock);
}

/* Each window, for info trace: its figures, to cb. */
void
recorder_windows(void (*cb)(void *, const struct recorder_window_info *),
    void *arg)
{
	struct recorder_window_info *v = NULL;
	struct rwindow *w;
	size_t n = 0, i;

	pthread_mutex_lock(&rec.lock);
	TAILQ_FOREACH(w, &rec.windows, entry)
		n++;
	if (n > 0 && (v = calloc(n, sizeof(*v))) != NULL) {
		i = 0;
		TAILQ_FOREACH(w, &rec.windows, entry) {
			v[i].session = w->session;
			v[i].uid = w->uid;
			v[i].pid = w->pid;
			snprintf(v[i].comm, sizeof(v[i].comm), "%s", w->comm);
			v[i].ended = w->ended;
			v[i].bytes = w->bytes;
			v[i].packets = w->npkts;
			v[i].events = w->kept;
			v[i].overwritten = w->overwritten;
			v[i].lost = w->lost;
			v[i].threads = w->threads.n;
			i++;
		}
	}
	pthread_mutex_unlock(&rec.lock);
	for (i = 0; v != NULL && i < n; i++)
		cb(arg, &v[i]);
	free(v);
}
