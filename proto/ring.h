/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * The per-thread shared-memory ring: its layout, record format and the
 * pure arithmetic both sides need.  Included by libtraced (the producer,
 * through traced.h) and by the daemon (the consumer).  No I/O here; the
 * helpers are safe from any thread and from signal handlers.
 *
 * DESIGN
 *
 * One ring per traced thread: that thread is the only producer, the
 * daemon the only consumer, so no read-modify-write atomics are needed.
 * The ring is a memfd created by the producer, sealed with F_SEAL_SHRINK
 * and passed to the daemon with SCM_RIGHTS:
 *
 *   offset 0          TRACED_RING_HDR_SIZE          + 2^order
 *   +-----------------+-----------------------------+
 *   | struct          | data area, 2^order bytes    |
 *   | traced_ring_hdr |                             |
 *   +-----------------+-----------------------------+
 *
 * Both sides map the data area twice, back to back, so that the bytes
 * of any span of at most 2^order bytes are contiguous in their address
 * space however it wraps:
 *
 *   virtual:  [ hdr ][ data copy A ][ data copy B ]
 *                     ^ pos & mask  (same pages as A)
 *
 *   a record reserved at position p = 2^order - 16, size 48:
 *
 *   copy A:  |...................................[rec 0..16)|
 *   copy B:  |[rec 16..48)......................................|
 *
 *   written through copy A at (p & mask) .. (p & mask) + 48, it lands
 *   in the last 16 bytes of the file's data area and the first 32;
 *   the daemon later drains [tail, head) with one iovec the same way.
 *
 * So no padding record is ever needed, every record in a span is
 * contiguous, and the daemon writes a whole span to its CTF stream with
 * one writev.
 *
 * head, tail and the drop counters are 64-bit byte positions or totals
 * that only grow; each sits on its own cache line (128 bytes apart, so
 * the adjacent-line prefetcher does not pair them either).  The producer
 * keeps a private copy of tail and reloads the shared one only when the
 * cached value says the ring is full.
 *
 * Records are 8-byte aligned and start with struct traced_rec_hdr.
 * Arguments follow the header: integers (of every C type) widened to
 * 64 bits at the next 8-byte boundary, strings as their bytes plus a NUL
 * directly after the previous argument (CTF strings are byte aligned).
 * The record is padded to a multiple of 8.  The CTF metadata declares
 * 64-bit integers with align = 64, so readers skip the same padding.
 */
#ifndef TRACED_PROTO_RING_H
#define TRACED_PROTO_RING_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
#define TRACED_STATIC_ASSERT(c, m)	static_assert(c, m)
#else
#define TRACED_STATIC_ASSERT(c, m)	_Static_assert(c, m)
#endif

#define TRACED_RING_MAGIC	0x52444354u	/* "TCDR" */
#define TRACED_RING_VERSION	1
#define TRACED_RING_HDR_SIZE	4096u
#define TRACED_RING_ORDER_MIN	12		/* 4 KiB */
#define TRACED_RING_ORDER_MAX	30		/* 1 GiB */
#define TRACED_RING_ORDER_DEFAULT 20		/* 1 MiB */

/* A record never exceeds this, nor its ring (the double mapping holds it). */
#define TRACED_REC_MAX		65536u
#define TRACED_REC_HDR_SIZE	16u
/* Longest string argument kept, without its NUL; longer ones are cut. */
#define TRACED_STR_MAX		4095u

/*
 * Event ids below TRACED_EVENT_ID_BASE are the tracer's own; the events of
 * a process's providers are numbered from it, in registration order.
 */
#define TRACED_EVENT_LOST	0u	/* struct traced_lost follows */
#define TRACED_EVENT_ID_BASE	16u
#define TRACED_EVENT_ID_MAX	(1u << 24)

/* Why an event was not recorded.  Bump TRACED_RING_VERSION on change. */
enum traced_drop_cause {
	TRACED_DROP_RING_FULL,		/* the daemon did not drain in time */
	TRACED_DROP_NESTED,		/* traced from a signal handler mid-event */
	TRACED_DROP_DISCONNECTED,	/* no daemon to drain the ring */
	TRACED_DROP_PAUSED,		/* trace-file off */
	TRACED_DROP_PRODUCER_NCAUSES,
	/* Daemon-side causes, counted by the daemon, never in a ring. */
	TRACED_DROP_WRITE_ERROR = TRACED_DROP_PRODUCER_NCAUSES,
	TRACED_DROP_INVALID,		/* a span that failed validation */
	TRACED_DROP_NCAUSES
};

/* Ring flags, written by the producer. */
#define TRACED_RING_FINISHED	0x1u	/* its thread exited: drain and close */

/*
 * The header page.  Line 0 is written once by the producer before the
 * fd is passed and never again; the daemon reads it once and checks it
 * against the RING message.
 */
struct traced_ring_hdr {
	uint32_t	magic;		/* TRACED_RING_MAGIC */
	uint32_t	version;	/* TRACED_RING_VERSION */
	uint32_t	order;		/* data area is 2^order bytes */
	uint32_t	tid;		/* producer thread, as gettid() */

	/* Producer: next free byte.  Store-release after the record's
	 * bytes; pairs with the daemon's load-acquire in writeout.c. */
	uint64_t head __attribute__((aligned(128)));

	/* Producer: running totals of events lost, per cause (relaxed;
	 * published by the next head store-release). */
	uint64_t dropped[TRACED_DROP_PRODUCER_NCAUSES]
	    __attribute__((aligned(128)));
	/* Producer: of those, how many a LOST record in the ring already
	 * reports.  dropped - recorded is what no record will ever say
	 * if the thread ends now: the daemon reports it when it closes the
	 * stream. */
	uint64_t	recorded[TRACED_DROP_PRODUCER_NCAUSES];
	uint32_t	flags;		/* TRACED_RING_*, store-release */

	/* Daemon: next byte to read.  Store-release after the span was
	 * written out; pairs with the producer's load-acquire when its
	 * cached tail says the ring is full. */
	uint64_t tail __attribute__((aligned(128)));

	/* Daemon arms (1) once it drained; the producer clears it (0) when
	 * it asks for a drain, so it asks at most once per drain cycle. */
	uint32_t wakeup __attribute__((aligned(128)));
};

TRACED_STATIC_ASSERT(sizeof(struct traced_ring_hdr) <= TRACED_RING_HDR_SIZE,
    "ring header must fit its page");
TRACED_STATIC_ASSERT(offsetof(struct traced_ring_hdr, head) == 128 &&
    offsetof(struct traced_ring_hdr, dropped) == 256 &&
    offsetof(struct traced_ring_hdr, tail) == 384 &&
    offsetof(struct traced_ring_hdr, wakeup) == 512,
    "ring header layout is ABI: each counter on its own cache lines");

/*
 * Every record starts with this.  'size' is the whole record in bytes,
 * a multiple of 8, header included; CTF readers treat it as the padding
 * between id and timestamp and skip it.
 */
struct traced_rec_hdr {
	uint32_t	id;
	uint32_t	size;
	uint64_t	ts;		/* clock ticks, see traced_clock */
};

TRACED_STATIC_ASSERT(sizeof(struct traced_rec_hdr) == TRACED_REC_HDR_SIZE,
    "record header layout is ABI");

/*
 * The payload of a TRACED_EVENT_LOST record: events lost since the
 * previous one, in total and by producer cause.  The producer writes one
 * before the first event that fits after a loss.
 */
struct traced_lost {
	uint64_t	count;
	uint64_t	cause[TRACED_DROP_PRODUCER_NCAUSES];
};

#define TRACED_LOST_REC_SIZE \
	(TRACED_REC_HDR_SIZE + (uint32_t)sizeof(struct traced_lost))

static inline uint64_t
traced_ring_size(uint32_t order)
{
	return (uint64_t)1 << order;
}

static inline uint32_t
traced_align8(uint32_t n)
{
	return (n + 7u) & ~7u;
}

/*
 * Bytes the memfd of a ring of 2^order data bytes must have.
 */
static inline uint64_t
traced_ring_file_size(uint32_t order)
{
	return TRACED_RING_HDR_SIZE + traced_ring_size(order);
}

#endif /* TRACED_PROTO_RING_H */
