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
 * The ring is a memfd created by the producer, sealed (F_SEAL_SHRINK,
 * F_SEAL_GROW) and passed to the daemon with SCM_RIGHTS:
 *
 *   offset 0          TRACED_RING_HDR_SIZE                + 2^max_order
 *   +-----------------+-----------------------------------+
 *   | struct          | data area: the ring uses the first |
 *   | traced_ring_hdr | 2^order bytes, order <= max_order  |
 *   +-----------------+-----------------------------------+
 *
 * Memory follows what the thread writes, not the size it may reach: the
 * memfd is sparse, the producer maps it once (no pages made up front),
 * and a page becomes memory when the ring first reaches it.  The
 * library's pager thread makes those pages ready a little ahead of the
 * producer, so that the trace call itself does not fault on them.  The
 * daemon maps the header page, and reads a young ring's data area with
 * pread() into its own staging memory; a ring that has lapped twice, or
 * that short threads pass on, it maps read-only and copies from
 * (daemon/drain.c).  Either way it validates the copy, never the
 * client's memory, and makes no page of the ring: a hole reads as
 * zeros, and the mapping is never longer than the memfd is sealed to.
 *
 * head, tail and the drop counters are 64-bit byte positions or totals
 * that only grow; each sits on its own cache line (128 bytes apart, so
 * the adjacent-line prefetcher does not pair them either).  Position p
 * lives at data offset p & (2^order - 1).  The producer keeps a private
 * copy of tail and reloads the shared one only when its cached value
 * says the ring is full.
 *
 * Laps and padding.  A record never runs past the end of the ring (a
 * "lap end", a position that is a multiple of 2^order): when the next
 * record does not fit before it, the producer fills the rest of the lap
 * with a PAD record and writes the record at the lap end, offset 0.
 *
 *   lap k                                      lap k + 1
 *   |... rec | rec | rec | PAD (to lap end) || rec | rec | ...
 *                                           ^ position (k + 1) * 2^order
 *
 * A PAD is 8 bytes or more (id and size only, no timestamp) and always
 * ends on a multiple of TRACED_RING_LAP_MIN; readers skip it, it never
 * reaches a trace.
 *
 * Growth.  A ring starts at 2^init_order bytes and grows, up to
 * 2^max_order, when its thread writes faster than the daemon drains
 * it (the ring is over half full at a lap end, or half a first pass
 * is written with nothing read) or than the daemon wants to visit it
 * (its first pass goes at a pace that fills it in less than
 * TRACED_RING_HOLD_NS, which it takes back if the whole lap did not; or
 * the daemon sets grow).  The producer switches from 2^order to 2^k
 * bytes only at a lap end P with P = 2^order (mod 2^k): an odd lap
 * end allows twice the size; the first lap end of a new ring (P =
 * 2^order) any size, and so, growing there, does the first lap end of
 * each size it grows to.  The last lap, [P - 2^order, P),
 * then sits at the same offsets under both sizes, so whatever the
 * daemon has not read yet stays where it will look, and the positions
 * from P land in the new part of the data area.  Doubling:
 *
 *   offsets   0            2^order           2^(order + 1)
 *   old size  [ lap ending at P ]
 *   new size  [ lap ending at P ][ P ... P + 2^order )[ wraps to 0 ...
 *
 * The producer stores the new order in the header before the head that
 * publishes anything at or past P; a reader that loads head, then
 * order, maps every unread position right with the order it sees (the
 * positions it still has to read before P lie in the last old lap).
 *
 * Records are 8-byte aligned and start with struct traced_rec_hdr.
 * Arguments follow the header: integers (of every C type) widened to
 * 64 bits at the next 8-byte boundary, strings as their bytes plus a NUL
 * directly after the previous argument (CTF strings are byte aligned).
 * The record is padded to a multiple of 8.  The CTF metadata declares
 * 64-bit integers with align = 64, so readers skip the same padding.
 *
 * Handover.  When a thread exits with every loss it counted already
 * told in a LOST record, its ring is kept for the process's next new
 * thread, which takes it at once, in-band: it writes a THREAD record
 * (its tid and a new ring number, struct traced_thread_rec) at the head
 * and goes on from there.  No message, no descriptor, no wakeup of the
 * daemon: its drain thread, reading up to a THREAD record, ends the
 * previous thread's ring there (its books close with what its records
 * said) and goes on reading the same memory as the new ring, in the
 * same stream file.  A THREAD record never reaches a trace.  A ring no
 * new thread took within a short while is given back the other way:
 *
 * Reuse.  A ring whose thread exited and that no thread took in-band
 * is marked finished; once the daemon says it is done with it
 * (released), the library gives it, with its pages made and its size
 * grown, to a new thread, which sends it to the daemon as a new ring:
 * positions go on from where they were, and what the previous thread
 * lost was reported when the daemon ended it.  The daemon, for its
 * part, keeps the stream files of ended threads open and gives them to
 * new rings whose 'since' is after the stream's last record, so that a
 * CTF stream holds the packets of several threads one after the other,
 * each packet naming its thread.
 *
 * Room is left for an overwrite (flight-recorder) mode: a flag in the
 * header line 0 and a producer that moves tail itself, by whole
 * records, when the ring is full; the layout above does not change.
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
#define TRACED_RING_VERSION	3
#define TRACED_RING_HDR_SIZE	4096u
#define TRACED_RING_ORDER_MIN	12		/* 4 KiB */
#define TRACED_RING_ORDER_MAX	30		/* 1 GiB */
#define TRACED_RING_ORDER_DEFAULT 24		/* 16 MiB: most a ring grows to */
#define TRACED_RING_ORDER_INIT	20		/* 1 MiB: what a ring starts at */
/*
 * A busy ring should hold at least this much of its thread's events:
 * a ring that fills faster grows (see Growth), so that the daemon reads
 * it every few milliseconds in large reads and it rides out the tens of
 * milliseconds the daemon may wait for a CPU.
 */
#define TRACED_RING_HOLD_NS	(100 * UINT64_C(1000000))
/* Every lap end is a multiple of this (the smallest ring). */
#define TRACED_RING_LAP_MIN	((uint64_t)1 << TRACED_RING_ORDER_MIN)

/* A record never exceeds this. */
#define TRACED_REC_MAX		65536u
#define TRACED_REC_HDR_SIZE	16u
/*
 * The 4 bytes after a record's id (which the CTF metadata leaves
 * undeclared, so CTF readers skip them) hold the record's size in the
 * low 17 bits and, above them, one bit per argument 0 to 14 that is a
 * string the program passed as a NULL pointer.  Such a string is
 * written "(null)", which is what CTF readers show; tracectl tells it
 * from a real "(null)" by the bit.
 */
#define TRACED_REC_SIZE_MASK	0x1ffffu
#define TRACED_REC_NULL_SHIFT	17
#define TRACED_REC_NULL_ARGS	15
/* A PAD record: id and size, nothing more. */
#define TRACED_PAD_MIN		8u
/* Longest string argument kept, without its NUL; longer ones are cut. */
#define TRACED_STR_MAX		4095u

/*
 * Event ids below TRACED_EVENT_ID_BASE are the tracer's own; the events of
 * a process's providers are numbered from it, in registration order.
 */
#define TRACED_EVENT_LOST	0u	/* struct traced_lost follows */
#define TRACED_EVENT_PAD	1u	/* the rest of a lap: skip */
#define TRACED_EVENT_THREAD	2u	/* struct traced_thread_rec follows:
					   a new thread takes the ring */
#define TRACED_EVENT_CRASH	3u	/* struct traced_crash follows: the
					   thread got a fatal signal */
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
	TRACED_DROP_DELETED,		/* written, then its directory was
					   deleted */
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
	uint32_t	max_order;	/* the data area is 2^max_order bytes */
	uint32_t	tid;		/* producer thread, as gettid() */
	uint32_t	init_order;	/* the ring's size when made */
	/* The clock (traced_clock) when its current thread took it, made
	 * or reused: every record of that thread is stamped at or after
	 * it, so the daemon may let the thread go on in the stream of one
	 * that ended before (daemon/sring.c).  0: not said. */
	uint64_t	since;

	/* Producer: next free byte.  Store-release after the record's
	 * bytes; pairs with the daemon's load-acquire in drain.c. */
	uint64_t head __attribute__((aligned(128)));
	/* Producer: the ring uses 2^order bytes of the data area, from
	 * init_order up to max_order, only growing.  Stored (relaxed)
	 * before the head store that publishes the first record written
	 * under it; see "Growth" above. */
	uint32_t	order;

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
	 * copied out; pairs with the producer's load-acquire when its
	 * cached tail says the ring is full. */
	uint64_t tail __attribute__((aligned(128)));

	/* Daemon arms (1) once it drained; the producer clears it (0) when
	 * it asks for a drain, so it asks at most once per drain cycle. */
	uint32_t wakeup __attribute__((aligned(128)));
	/* Daemon: 1 while it would like the ring bigger (it fills faster
	 * than the daemon cares to visit it): the producer asks for the
	 * next size at its next lap end (relaxed, a hint). */
	uint32_t	grow;
	/* Daemon: 1 once it is done with a ring whose thread finished (read
	 * to its end, no longer read at all): the library may give the ring
	 * to a new thread, which resets this and sends the ring again, as a
	 * new one (store-release after the last read of the ring). */
	uint32_t	released;
	/* Daemon: 1 while it reads the ring (it took the RING message),
	 * 0 once it stopped (ended or refused it); the library sets 0
	 * before it sends the ring.  Only a ring the daemon reads may be
	 * handed to another thread in-band: one it refused would take
	 * that thread's events where nobody counts them (relaxed; a
	 * hint the library trusts no further than that). */
	uint32_t	reading;
};

TRACED_STATIC_ASSERT(sizeof(struct traced_ring_hdr) <= TRACED_RING_HDR_SIZE,
    "ring header must fit its page");
TRACED_STATIC_ASSERT(offsetof(struct traced_ring_hdr, head) == 128 &&
    offsetof(struct traced_ring_hdr, order) == 136 &&
    offsetof(struct traced_ring_hdr, dropped) == 256 &&
    offsetof(struct traced_ring_hdr, tail) == 384 &&
    offsetof(struct traced_ring_hdr, wakeup) == 512 &&
    offsetof(struct traced_ring_hdr, grow) == 516 &&
    offsetof(struct traced_ring_hdr, released) == 520 &&
    offsetof(struct traced_ring_hdr, reading) == 524,
    "ring header layout is ABI: each counter on its own cache lines");

/*
 * Every record starts with this.  'size' is the whole record in bytes,
 * a multiple of 8, header included; CTF readers treat it as the padding
 * between id and timestamp and skip it.  A PAD record has id and size
 * only.
 */
struct traced_rec_hdr {
	uint32_t	id;
	uint32_t	size;		/* and NULL marks: TRACED_REC_SIZE_MASK */
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

/*
 * The payload of a TRACED_EVENT_THREAD record (Handover above): the
 * thread that goes on in the ring from here, and the ring number it
 * goes by (new, as for a ring sent with a RING message: NOTIFY
 * messages name it).
 */
struct traced_thread_rec {
	uint32_t	tid;
	uint32_t	index;
};

#define TRACED_THREAD_REC_SIZE \
	(TRACED_REC_HDR_SIZE + (uint32_t)sizeof(struct traced_thread_rec))

/*
 * The payload of a TRACED_EVENT_CRASH record (the event "traced:crash"):
 * the thread got SIGSEGV, SIGBUS, SIGILL, SIGFPE or SIGABRT, and
 * libtraced's handler wrote this before it chained to the program's own
 * handling (client-lib/crash.c): the last record of a thread that dies
 * of it.  The fields are siginfo_t's, widened to 64 bits like every
 * argument: addr is si_addr for a fault the kernel raised (si_code > 0)
 * and 0 otherwise, ip the instruction pointer where the signal came (0
 * where libtraced cannot tell), sender si_pid for a signal a process
 * sent (kill(2), raise(3), abort(3): si_code <= 0) and 0 otherwise.
 * The daemon takes only signal numbers from 1 to TRACED_CRASH_SIG_MAX
 * and a code that fits an int.
 */
struct traced_crash {
	int64_t		signal;
	int64_t		code;
	uint64_t	addr;
	uint64_t	ip;
	int64_t		sender;
};

#define TRACED_CRASH_SIG_MAX	64
#define TRACED_CRASH_REC_SIZE \
	(TRACED_REC_HDR_SIZE + (uint32_t)sizeof(struct traced_crash))

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
 * Bytes the memfd of a ring that may grow to 2^max_order data bytes
 * must have.
 */
static inline uint64_t
traced_ring_file_size(uint32_t max_order)
{
	return TRACED_RING_HDR_SIZE + traced_ring_size(max_order);
}

/* The position where the lap holding position p ends, for 2^order. */
static inline uint64_t
traced_ring_lap_end(uint64_t p, uint32_t order)
{
	return (p | (traced_ring_size(order) - 1)) + 1;
}

#endif /* TRACED_PROTO_RING_H */
