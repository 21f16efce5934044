/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * The CTF 1.8 writer: the TSDL metadata of a session and the packet
 * header + context that the writeout prepends to each drained span.
 * Pure formatting (no I/O); daemon-internal; any thread.
 *
 * The layout it describes is the ring's (proto/ring.h), so spans are
 * written without conversion:
 *
 *   packet.header   0 magic 0xC1FC1FC1 | 4 uuid[16] | 20 stream_id (0)
 *                  24 stream_instance_id (the tid)
 *   packet.context 32 timestamp_begin | 40 timestamp_end | 48 content_size
 *                  56 packet_size | 64 packet_seq_num | 72 events_discarded
 *                  80 tid (uint32) | 84 4 bytes of zero padding
 *   events         88 ... each: uint32 id, (4 bytes skipped), uint64 ts
 *                  (align 64), then the fields of that event
 *
 * Integers are declared with natural alignment (align = size), strings
 * byte aligned; the event header struct is therefore 64-bit aligned and
 * readers skip the 4 bytes after id (where the ring keeps the record
 * size) and the padding after strings by themselves, except after the
 * last event of a packet, which content_size must leave out (see
 * ctf_packet_header()).
 */
#ifndef TRACED_DAEMON_CTF_H
#define TRACED_DAEMON_CTF_H

#include <stddef.h>
#include <stdint.h>

struct tevents_event;

#define CTF_PACKET_HDR_SIZE	88u
#define CTF_PACKET_CONTEXT_END	84u	/* where header + context end */
#define CTF_MAGIC		0xC1FC1FC1u

/* What the metadata says about the trace and its clock. */
struct ctf_trace_info {
	uint8_t		 uuid[16];	/* the session's trace uuid */
	uint8_t		 clock_uuid[16]; /* one per boot: all sessions */
	uint64_t	 clock_freq;	/* ticks per second */
	int64_t		 clock_offset_s; /* realtime - clock, seconds */
	uint64_t	 clock_offset;	/* and the remaining ticks */
	const char	*clock_name;	/* "monotonic" or "tsc" */
	const char	*hostname;
	const char	*procname;	/* comm */
	int32_t		 pid;
	uint32_t	 session;	/* daemon session id */
};

/* One event class: CTF name "<provider>:<event name>". */
struct ctf_event_class {
	uint32_t	 id;		/* as in ring records */
	const char	*provider;
	const struct tevents_event *ev;	/* borrowed */
};

/*
 * Write the whole metadata text of a session into a malloc'ed string
 * (*out, NUL-terminated; the caller frees it) and return its length, or
 * -1 on allocation failure (errno ENOMEM) or a malformed class (no
 * 'ev', more than TEVENTS_ARGS_MAX arguments, an unknown class: EINVAL).
 * Declares the built-in event "traced:lost" (id TRACED_EVENT_LOST,
 * fields count, ring_full, nested, disconnected, paused: uint64), the
 * built-in "traced:crash" (id TRACED_EVENT_CRASH, fields signal, code,
 * addr, ip, sender as in struct traced_crash) and then each class in
 * 'classes'.  Field names that are not CTF identifiers are rewritten
 * (invalid characters to '_', a leading digit, a TSDL keyword or one
 * of our type names gets a leading '_';
 * babeltrace2 shows the name without that '_'), and a name that would
 * show like an earlier one of the same event gets "_<n>" appended.
 * Event names and the other strings are quoted with escapes, not
 * rewritten.
 */
long	ctf_metadata(const struct ctf_trace_info *info,
	    const struct ctf_event_class *classes, size_t nclasses, char **out);

/*
 * The declarations of 'classes' alone, as ctf_metadata() writes them,
 * to append to a session's metadata when a provider comes later: TSDL
 * allows event declarations anywhere after the stream's, so the file
 * grows by what is new instead of being rewritten.  Same returns.
 */
long	ctf_metadata_events(const struct ctf_event_class *classes,
	    size_t nclasses, char **out);

/* The fields of one packet's header and context. */
struct ctf_packet {
	const uint8_t	*uuid;		/* 16 bytes, the trace uuid */
	uint64_t	 stream_instance_id;
	uint64_t	 ts_begin;
	uint64_t	 ts_end;
	uint64_t	 content_bytes;	/* header + events, as written */
	uint64_t	 seq;
	uint64_t	 events_discarded; /* running total */
	uint32_t	 tid;
	uint32_t	 tail_pad;	/* bytes of content_bytes after the last
					   field of the last event, 0..7 */
};

/*
 * Encode the header and context of a packet into buf, exactly
 * CTF_PACKET_HDR_SIZE bytes, little-endian.  packet_size is
 * content_bytes * 8; content_size ends where the last field of the last
 * event ends, (content_bytes - tail_pad) * 8, or right after the packet
 * context (84 bytes) when the packet has no event.  babeltrace2 2.0.4
 * starts reading an event header wherever content is left, before it
 * aligns: counting the record padding as content makes it read the next
 * packet's magic as an event id and stop reading the stream.
 */
void	ctf_packet_header(uint8_t buf[CTF_PACKET_HDR_SIZE],
	    const struct ctf_packet *p);

/*
 * An empty packet of a stream at time ts: what says losses or a gap in
 * packet numbers where no event is (the stream writer, snapshots).
 */
void	ctf_packet_empty(uint8_t buf[CTF_PACKET_HDR_SIZE],
	    const uint8_t uuid[16], uint64_t instance, uint32_t tid,
	    uint64_t ts, uint64_t seq, uint64_t discarded);

/* Little-endian 64-bit fields of a packet header, as written above. */
void	ctf_put64(uint8_t *p, uint64_t v);
uint64_t ctf_get64(const uint8_t *p);

#endif /* TRACED_DAEMON_CTF_H */
