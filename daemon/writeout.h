/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * Inside the pipeline: what the drain thread (drain.c), the writers
 * (writeout.c) and the CTF stream writer (stream.c) share.
 * Daemon-internal, for those three files only; the rest of the daemon
 * uses pipeline.h.
 *
 * A chunk (pipeline.h) is the unit that travels: one CTF packet of one
 * ring, read and validated by the drain thread into a staging arena, or
 * a marker (SYNC: fdatasync the stream; END: the ring is done).  It
 * goes from the drain thread to its ring's write queue, from there to a
 * writer, which hands it to the consumers and passes it to the loop
 * thread's done list; the owner counts it there and the pipeline
 * releases it.  A ring's chunks are written in the order they were
 * read, by one writer at a time.
 */
#ifndef TRACED_DAEMON_WRITEOUT_H
#define TRACED_DAEMON_WRITEOUT_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>

#include "ctf.h"
#include "dclock.h"
#include "log.h"
#include "pipeline.h"

/*
 * Staging memory: arenas of this size, up to this many.  The first
 * ARENA_KEEP are kept once made; the others, a reserve for a disk that
 * stops for a while (a few hundred ms seen on a virtual disk), are
 * given back once the stall is over (reserve_trim()).
 */
#define ARENA_SIZE		(4u << 20)
#define ARENA_MAX		32
#define ARENA_KEEP		16
#define ARENA_HUGE		(2u << 20)	/* arenas start on one */
/*
 * Owners (pfeed.share) holding staging at once that get a fair share
 * of it each; past that many, the last slot is shared.
 */
#define SHARES_MAX		64
/* The largest packet the drain thread makes (its content). */
#define CHUNK_CONTENT_MAX	(1u << 20)
/*
 * Direct I/O (stream.c): a packet with at least DIO_MIN bytes of
 * records gets staging memory that starts on a DIO_ALIGN boundary,
 * with 2 * DIO_ALIGN bytes of room after its records, so that the
 * writer can move it up to align it with its place in the file and pad
 * it (packet_size past content_size) to end on a DIO_ALIGN boundary of
 * the file, and write it with O_DIRECT, from staging to the disk,
 * without the page cache.
 */
#define DIO_ALIGN		4096u
#define DIO_MIN			(32u << 10)

/* A slice of staging memory.  Under the writeout lock. */
struct arena {
	STAILQ_ENTRY(arena) entry;	/* free list */
	uint8_t		*base;		/* ARENA_SIZE bytes, pages made */
	size_t		 used;		/* bytes handed out */
	unsigned	 refs;		/* chunks in it not yet released */
	int		 current;	/* the drain thread fills it */
	int		 making;	/* its pages are being made */
};

STAILQ_HEAD(arena_list, arena);
TAILQ_HEAD(pring_tailq, pring);

/*
 * A writer thread, and what it tells about its writes: the time they
 * took and the CPU time in them, and when the write in progress began
 * (so that a write stuck now counts, not only the ones that returned).
 */
struct writer {
	struct writeout	*wo;
	pthread_t	 th;
	pid_t		 tid;		/* set by the thread, atomic */
	uint64_t	 io_ns;		/* its own, added to wo->io_ns */
	uint64_t	 cpu_ns;
	uint64_t	 write_since;	/* ns: in a write since; 0: not; atomic */
	int		 direct;	/* this batch may go to the disk
					   directly (staging is not short) */
};

/*
 * The pipeline.  One, made by writeout_new().  'lock' guards every
 * field marked so, the write queues of the rings (pring.chunks,
 * wqueued, wbusy, next_*) and the arenas.
 */
struct writeout {
	pthread_mutex_t	 lock;

	/* The drain thread. */
	pthread_t	 drain_thread;
	pthread_cond_t	 drain_cond;	/* wakes it: under lock */
	int		 drain_kick;	/* under lock: something to see */
	struct pring_tailq adding;	/* under lock: rings for it to take
					   (linked by rd.entry) */
	uint64_t	 flush_gen;	/* under lock: drain all, then sync */
	uint64_t	 all_gen;	/* under lock: drain all now */
	uint64_t	 interval_ns;	/* under lock: quiet rings this often */
	int		 stop;		/* under lock: the drain thread and
					   writers exit */
	int		 nice;		/* of the writers */
	int		 direct_io;	/* under lock: direct-io setting */
	uint64_t	 written_direct; /* bytes, atomic */
	uint64_t	 written_cached; /* bytes, atomic */

	/* Staging. */
	struct arena	 arenas[ARENA_MAX];
	unsigned	 narenas;	/* under lock: slots used so far */
	unsigned	 arenas_making;	/* under lock: being made now */
	int		 arena_want;	/* under lock: a writer makes one */
	struct arena_list free_arenas;	/* under lock */
	struct arena	*cur;		/* the drain thread's */
	int		 staging_wait;	/* under lock: the drain thread
					   waits for an arena */
	uint64_t	 full_since;	/* under lock: staging last ran
					   out, ns (0: never) */
	uint64_t	 full_end;	/* under lock: and had room again, ns
					   (0: still full) */
	unsigned	 full_why;	/* under lock: LOSS_SAW_DISK or
					   _WRITERS, then */
	struct share {
		uint32_t	 key;		/* pfeed.share */
		unsigned	 rings;		/* the drain thread reads */
		size_t		 bytes;		/* staging its chunks hold */
	}		 shares[SHARES_MAX];	/* under lock: the owners with
					   rings or staging, then free
					   slots */
	unsigned	 nshares;	/* under lock */
	size_t		 shared;	/* under lock: their sum */

	/* Writers. */
	pthread_cond_t	 write_cond;
	struct pring_tailq todo;	/* under lock: rings with chunks
					   (linked by wentry) */
	unsigned	 nwriters;
	struct writer	*writers;
	uint64_t	 io_ns;		/* under lock: time in writes */
	uint64_t	 cpu_ns;	/* under lock: CPU time in them */
	uint64_t	 io_mark;	/* under lock: io_ns and cpu_ns when
					   staging last ran out */
	uint64_t	 cpu_mark;
	uint64_t	 stall_ns;	/* TRACED_TEST_WRITE_STALL_MS: the
					   first write waits this long (a
					   test of a disk that stops); atomic */
	int		 test_nodirect;	/* TRACED_TEST_NO_DIRECT */
	int		 said_nodirect;	/* logged once; atomic */

	/* Back to the loop thread. */
	struct chunk_list done;		/* under lock */
	int		 efd;		/* done -> loop */
	struct event	*ev;
	unsigned	 outstanding;	/* loop thread: chunks and rings
					   not back yet */
	struct pipeline_owner owner;	/* who hears back */

	/* Where validated chunks go: consumers[0] reports in them. */
	const struct consumer *consumers[PIPELINE_CONSUMERS_MAX];
	unsigned	 nconsumers;	/* set before the first ring */
};

extern struct writeout *wo_global;

/* writeout.c, for the drain thread */
struct chunk *wo_chunk_new(struct pring *r, size_t room);
void	wo_share_ring_locked(uint32_t share, int delta);
void	wo_share_ring(uint32_t share, int delta);
struct chunk *wo_marker_new(struct pring *r, enum chunk_kind kind);
void	wo_chunk_commit(struct chunk *c, size_t len);
void	wo_chunk_cancel(struct chunk *c);
void	wo_chunk_queue(struct chunk *c);
void	wo_hold(struct pring *r, int on);

/* drain.c */
void	*drain_main(void *arg);

#endif /* TRACED_DAEMON_WRITEOUT_H */
