/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * The pipeline, as the rest of the daemon sees it: from the rings of
 * traced programs, through the drain thread (drain.c) and the writers
 * (writeout.c), to the consumers of validated records, the CTF stream
 * writer (stream.c) today.  Daemon-internal.
 *
 * The pipeline knows rings and the feeds they belong to, never
 * sessions, commands or the index: what it must know of a session is
 * in its feed (struct pfeed), which the owner publishes; what happened
 * to each chunk goes back to the owner on the loop thread through the
 * callbacks it gave writeout_new() (struct pipeline_owner), as redis'
 * bio hands completions to its main thread.  Where validated records
 * leave the drain, consumers take them (struct consumer): the seam the
 * flight recorder and the fleet shipper plug into.
 *
 * Threads: the owner (the loop thread) makes and frees rings and feeds
 * and calls the writeout_*() functions; the drain thread and the
 * writers touch what each field's comment says, between writeout_add()
 * and the ring's END chunk coming back.
 */
#ifndef TRACED_DAEMON_PIPELINE_H
#define TRACED_DAEMON_PIPELINE_H

#include <stdint.h>
#include <sys/queue.h>
#include <sys/types.h>

#include "recwalk.h"
#include "ring.h"

struct event_base;
struct rwindow;
struct writer;

/*
 * What the drain thread saw while a ring lost events to a full ring,
 * for the owner's warning to name the cause.  None of them: the ring
 * filled up between two visits made on time, a burst it could not
 * hold.
 */
#define LOSS_SAW_LATE		0x1u	/* the drain thread came late:
					   it did not get the CPU */
#define LOSS_SAW_DISK		0x2u	/* staging full, the writers
					   waiting on the disk */
#define LOSS_SAW_WRITERS	0x4u	/* staging full, the writers
					   short of CPU time */
#define LOSS_SAW_MAX_SIZE	0x8u	/* the ring could grow no more */
#define LOSS_SAW_TOO_SMALL	0x10u	/* and at that size held less than two
					   of the drain thread's shortest
					   periods: it fills up however
					   punctual the visits */
#define LOSS_SAW_SHARE		0x20u	/* staging short, and the feed's
					   owner held its share of it
					   (writeout.c staging_share_ok()) */
#define LOSS_SAW_OTHERS		0x40u	/* staging full, held by other
					   owners than the feed's */

/*
 * The event classes a feed's records are checked against, as the
 * ranges recwalk() looks ids up in: one per provider.  Immutable once
 * built; the owner publishes a new table (store-release) and keeps the
 * ones it replaced (older) until the feed is gone, when no thread reads
 * any of them.
 */
struct evtab {
	struct evtab	*older;		/* owned: the table this one replaced */
	uint32_t	 nclasses;	/* events of every range */
	uint32_t	 nranges;
	struct recwalk_range ranges[];	/* borrowed from the owner */
};

/*
 * What the pipeline knows of where a ring's records come from (one
 * traced process: a session).  The owner fills id and clock before its
 * first ring is added, and publishes the rest (store-release; the drain
 * thread and writers load with acquire) as its metadata is written or
 * given up on.
 */
struct pfeed {
	uint32_t	 id;		/* for log lines */
	int		 clock;		/* DCLOCK_* of its timestamps */
	uint32_t	 share;		/* whose it is: staging memory is
					   shared fairly between the feeds'
					   owners (the session layer: uid) */
	/*
	 * May its rings be read (go), against which table (tab: events
	 * of providers it does not describe wait in the ring, those of
	 * newest but not tab), and written (discard_errno 0) or counted
	 * as lost to that error?
	 */
	int		 go;
	int		 discard_errno;
	struct evtab	*tab;
	struct evtab	*newest;	/* every provider the owner knows */
	/*
	 * Kept in memory by the flight recorder (recorder.c), never
	 * written to a stream file: its window, or NULL.  Set before the
	 * feed's first ring is added, cleared after its last ring's END.
	 */
	struct rwindow	*rec;
};

/*
 * A CTF stream file being written (stream.c).  Its writer's while it
 * writes the ring's chunks (pring.wbusy), the loop's otherwise.
 */
struct stream {
	int		 fd;		/* -1: none */
	off_t		 size;		/* bytes of whole packets */
	uint64_t	 gen;		/* which of the ring's files (fgen) */
	uint8_t		 uuid[16];	/* the trace uuid of that file */
	uint64_t	 seq;		/* next packet_seq_num */
	uint64_t	 discarded;	/* running events_discarded */
	uint64_t	 discarded_written; /* ... as the file's last packet
					   says it */
	uint32_t	 part;		/* files of this trace before it
					   (stream-max-size cuts) */
	off_t		 wb_started;	/* writeback started up to here
					   (stream.c, STREAM_WB_STEP) */
	int		 nodirect;	/* its file system refused O_DIRECT */
};

struct pring;

/*
 * What the drain thread (drain.c) knows of a ring, from writeout_add()
 * until it queues the ring's END chunk.  Its own: nobody else reads it.
 */
struct pring_rd {
	TAILQ_ENTRY(pring) entry;	/* the drain thread's rings */
	uint64_t	 tail;		/* next position to read */
	uint32_t	 order;		/* the ring's size as last seen */
	uint64_t	 last_ts;
	uint64_t	 seen_head;	/* head at the last visit */
	uint64_t	 seen_at;	/* ns, CLOCK_MONOTONIC, of that visit */
	uint64_t	 rate;		/* bytes/s, smoothed */
	uint64_t	 next;		/* ns: visit again by then */
	uint64_t	 data_since;	/* ns: unread data seen since; 0: none */
	uint64_t	 flush_gen;	/* a SYNC is due for this generation */
	uint64_t	 synced_gen;	/* the last one queued */
	uint64_t	 dropped_full;	/* the ring's ring-full total seen */
	uint64_t	 events;		/* read from it, and their bytes: its */
	uint64_t	 bytes;		/* average record size */
	unsigned	 why;		/* LOSS_SAW_* seen since losses were
					   last reported */
	unsigned	 pressure;	/* LOSS_SAW_SHARE or _OTHERS: staging
					   was refused to it since its last
					   visit that read it all */
	unsigned	 late_ms;	/* and how late it came, at worst */
	const uint8_t	*map;		/* its data area mapped (read-only),
					   once it lapped twice: NULL before */
	int		 grow;		/* the hint we last left it */
	int		 map_failed;	/* no room to map it: pread */
	int		 closing;	/* read to the end, then END */
	int		 urgent;	/* the producer asked: visit now */
	int		 held;		/* its owner's share of staging is
					   used up: visit later */
	int		 pending;	/* stopped at an event its metadata
					   does not describe yet */
	struct traced_thread_rec handover; /* the THREAD record a read
					   stopped at (drain_packet() 4) */
	pid_t		 tid;		/* the thread writing it now: its
					   packets name it */
	int		 handed;	/* passed on since its last big
					   packet: read it in small steps */
	int		 young;		/* visits left at a short period */
};

struct chunk;
STAILQ_HEAD(chunk_list, chunk);

/*
 * One thread's ring, as the pipeline sees it.  The owner embeds it in
 * its own ring object, fills the fields marked "owner" before
 * writeout_add(), and may free it once the ring's END chunk came back.
 */
struct pring {
	struct pfeed	*feed;		/* owner; borrowed: its source's */
	struct traced_ring_hdr *hdr;	/* owner: our mapping of its header
					   page; NULL once released */
	int		 ring_fd;	/* owner: its memfd (the data is
					   pread() or mapped); -1 once
					   released */
	uint32_t	 max_order;	/* owner: the most it grows to */
	pid_t		 tid;		/* owner: its thread when added (the
					   drain thread's, rd.tid, follows
					   the THREAD records) */
	uint64_t	 instance;	/* owner: its stream's
					   stream_instance_id */
	uint64_t	 ts_floor;	/* owner: records stamped before it are
					   refused: the stream it goes on in
					   ends there (drain.c) */

	struct pring_rd	 rd;		/* the drain thread's */
	struct stream	 st;		/* the writer's (see struct stream) */

	/* THREAD markers queued and not yet back at the loop (atomic:
	 * the drain thread adds, the loop takes away; drain.c). */
	int		 handovers_out;

	/* The loop asks the drain thread (atomic, set by the loop only). */
	int		 close_req;	/* read to the end, then END */
	int		 notified;	/* the producer asked for a drain */
	int		 done;		/* loop: its END came back */

	/* Under the writeout lock. */
	TAILQ_ENTRY(pring) wentry;	/* the writers' list */
	struct chunk_list chunks;	/* read, validated, to be written */
	int		 wqueued;	/* on the writers' list */
	int		 wbusy;		/* a writer has its chunks */
	int		 whold;		/* the drain thread holds them back
					   (wo_hold()): its thread only */
	int		 next_fd;	/* a new stream file (trace-file set):
					   the writer switches to it before
					   the next chunk; -1: none */
	uint8_t		 next_uuid[16];	/* its trace */
	uint64_t	 next_gen;	/* its fgen */
	uint64_t	 next_part_at;	/* not 0: it goes on the file before
					   it (stream-max-size): same trace,
					   packet numbers and discards go
					   on; switched to when the file
					   would pass this size */
};

/* Events of one class in a chunk, for the per-event counts. */
struct cls_count {
	uint32_t	 cls;		/* class number in its feed */
	uint64_t	 n;
};

#define CHUNK_COUNTS_INLINE	8

enum chunk_kind {
	CHUNK_DATA,			/* a packet */
	CHUNK_SYNC,			/* fdatasync after what came before */
	CHUNK_END,			/* the ring's last chunk */
	CHUNK_THREAD,			/* a new thread took the ring in-band
					   (a THREAD record, proto/ring.h
					   Handover): the chunks before it
					   were the last of the one before */
};

enum chunk_end {
	END_FINISHED,			/* its thread exited, all read */
	END_CLOSED,			/* its process ended, all read */
	END_INVALID,			/* refused: no more reading */
};

/*
 * The unit that travels: one CTF packet of one ring, read and validated
 * by the drain thread into staging memory, or a marker.  It goes from
 * the drain thread to its ring's write queue, from there to a writer
 * (the consumers), then back to the owner on the loop thread
 * (pipeline_owner.chunk_done), which reads what happened to it; the
 * pipeline then releases it.  A ring's chunks come back in the order
 * they were read.
 */
struct chunk {
	STAILQ_ENTRY(chunk) entry;	/* the ring's queue, a writer's
					   batch, then the done list */
	struct pring	*r;
	struct arena	*arena;		/* NULL: malloc'ed (markers) */
	uint32_t	 share;		/* its feed's, charged ... */
	size_t		 charge;	/* ... this much staging */
	enum chunk_kind	 kind;
	uint32_t	 order;		/* the ring's size when read */

	/* DATA: pkt holds the packet header, then len bytes of records;
	 * the writer fills in packet_seq_num and events_discarded. */
	uint8_t		*pkt;
	uint32_t	 len;
	int		 dio;		/* pkt DIO_ALIGN-aligned, 2 * DIO_ALIGN
					   bytes of room after the records */
	uint64_t	 ts_first;
	uint64_t	 events;
	uint64_t	 lost_records;
	uint64_t	 lost[TRACED_DROP_PRODUCER_NCAUSES];
	uint64_t	 discarded;	/* sum of its LOST records' counts */
	unsigned	 why;		/* LOSS_SAW_*, when lost[] has ring
					   full losses */
	unsigned	 late_ms;	/* with LOSS_SAW_LATE: how late */
	struct cls_count *counts;	/* events per class, ncounts of
					   them: inline_counts, or malloc'ed */
	uint32_t	 ncounts;
	struct cls_count inline_counts[CHUNK_COUNTS_INLINE];

	/* SYNC. */
	uint64_t	 gen;		/* flush generation */

	/* END. */
	enum chunk_end	 how;
	const char	*invalid;	/* END_INVALID: why (static) */
	uint64_t	 invalid_at;	/* its ring position */
	uint64_t	 unrecorded[TRACED_DROP_PRODUCER_NCAUSES];
	uint64_t	 last_ts;	/* the stream's last timestamp */
	struct traced_thread_rec next;	/* CHUNK_THREAD: who goes on */
	pid_t		 tid;		/* the thread that wrote it (DATA),
					   or the ring's last (END) */

	/* Written by the CTF stream writer (stream.c). */
	uint64_t	 fgen;		/* the stream file it went to */
	uint32_t	 fpart;		/* which part of it (stream.part) */
	uint64_t	 fsize;		/* the part's size after it */
	int		 write_errno;	/* 0: written */
	uint64_t	 lost_write;	/* events lost to that error */
	uint64_t	 bytes;		/* bytes it added to the stream */
};

/*
 * What the owner hears back, on the loop thread.  chunk_done() gets
 * every chunk as it comes back, a ring's in the order they were read;
 * after a ring's END it is the owner's alone (it may free it, even
 * inside chunk_done(): the pipeline touches neither the ring nor the
 * chunk's ring pointer after the call).  settled() follows each batch
 * of completions: what a command waits for may be done.
 */
struct pipeline_owner {
	void	(*chunk_done)(void *arg, const struct chunk *c);
	void	(*settled)(void *arg);
	void	*arg;
};

/*
 * A consumer of validated records: where a ring's packets go once the
 * drain thread read and checked them.  write() runs on a writer thread
 * that holds the ring (one writer per ring at a time, so a ring's
 * chunks come in order): the ring's next chunks, DATA packets and the
 * SYNC and END markers.  The first consumer added (the CTF stream
 * writer) reports what happened to each chunk in its result fields;
 * any other reads them and keeps its own books.  The records in a
 * chunk's packet are valid (recwalk.h): a consumer needs no check.
 */
struct consumer {
	const char	*name;
	void	(*write)(const struct consumer *, struct pring *r,
		    struct chunk_list *list, struct writer *w);
	void	*arg;
};

#define PIPELINE_CONSUMERS_MAX	4

/* writeout.c */
struct writeout;
struct writeout *writeout_new(struct event_base *base, unsigned nworkers,
	    int nice, unsigned drain_ms, const struct pipeline_owner *owner);
void	writeout_free(struct writeout *wo);
int	writeout_consumer_add(const struct consumer *c);
void	writeout_add(struct pring *r);
void	writeout_close(struct pring *r);
void	writeout_notify(struct pring *r);
void	writeout_drain_all(uint64_t flush_gen);
void	writeout_set_interval(unsigned ms);
void	writeout_set_direct(int on);
void	writeout_written(uint64_t *direct, uint64_t *cached);
void	writeout_stream_part(struct pring *r, int fd, uint64_t max);
void	writeout_stream_next(struct pring *r, int fd, const uint8_t uuid[16],
	    uint64_t gen);
int	writeout_idle(void);
unsigned writeout_nworkers(void);
void	evtab_free(struct evtab *t);

/* stream.c */
extern const struct consumer stream_consumer;
void	stream_start(struct stream *st, int fd, const uint8_t uuid[16],
	    uint64_t gen);

#endif /* TRACED_DAEMON_PIPELINE_H */
