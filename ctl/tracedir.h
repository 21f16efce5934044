/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * The layers under the one reader of trace directories (reader.h):
 *
 *   - a pure core: the TSDL parser (tsdl.c) reads the metadata text
 *     that daemon/ctf.c writes into a struct tracedir_meta (with the
 *     trace-events line each event carries in a comment); tracedir.c
 *     answers what the others ask of it (an event class by id, the time
 *     of a clock value); the stream walk (tracedir-stream.c) reads
 *     the packets and events of one stream a window at a time, a
 *     window the caller slides forward, and checks every byte against
 *     the metadata;
 *   - a thin I/O layer (tracedir-io.c): find the session directories
 *     under a path, read and parse their metadata (with a size limit)
 *     and list their stream files.
 *
 * Everything read is taken as hostile: a corrupt, truncated or crafted
 * file gives an error message with the line (metadata) or byte offset
 * (stream), never a crash, an unbounded allocation or an endless loop.
 * The core does no I/O and keeps no global state: it is what the fuzz
 * target (tests/fuzz/fuzz_tracedir.c) runs.  tracectl-internal; any
 * thread, one object per thread at a time.
 */
#ifndef TRACED_CTL_TRACEDIR_H
#define TRACED_CTL_TRACEDIR_H

#include <stddef.h>
#include <stdint.h>

struct tevents_event;
struct tevents_file;

#define TRACEDIR_ERR_MAX	256	/* bytes of an error message */
#define TRACEDIR_FIELDS_MAX	64	/* fields of one struct */
#define TRACEDIR_CLASSES_MAX	65552u	/* event classes of one trace */
#define TRACEDIR_NAME_MAX	1024	/* bytes of a name or string value */

/* What the I/O layer reads at most (and refuses past): metadata is
 * read whole; streams have no limit (reader.c reads them in windows). */
#define TRACEDIR_METADATA_MAX	(64u << 20)
#define TRACEDIR_DEPTH_MAX	4	/* directories below a path */
#define TRACEDIR_FILES_MAX	100000u	/* stream files in all */

/* How a field is laid out. */
enum tracedir_kind {
	TRACEDIR_INT,
	TRACEDIR_STRING,		/* bytes up to a NUL, byte aligned */
	TRACEDIR_ARRAY,			/* 'length' integers */
};

struct tracedir_type {
	enum tracedir_kind kind;
	unsigned	 size;		/* bits: 8, 16, 32 or 64 (integers and
					   array elements) */
	unsigned	 align;		/* bits: 8, 16, 32 or 64 */
	unsigned	 is_signed;
	unsigned	 base;		/* 2, 8, 10 or 16: how to print */
	unsigned	 clock;		/* map = clock.<name>.value */
	unsigned	 length;	/* arrays: elements, 1 to 256 */
};

/* One field of a struct. */
struct tracedir_decl {
	char		*name;		/* owned: as the TSDL spells it */
	const char	*shown;		/* into name: without one leading '_',
					   as CTF readers show it */
	struct tracedir_type type;
};

struct tracedir_struct {
	struct tracedir_decl *decls;	/* owned */
	unsigned	 n;
	unsigned	 align;		/* bits: the largest of its fields' */
};

/* One event class: 'event { name = ...; id = ...; fields := ... }'. */
struct tracedir_class {
	uint32_t	 id;
	char		*name;		/* owned, unescaped, no NUL inside */
	const char	*event;		/* into name: after "provider:" */
	size_t		 provider_len;	/* bytes of name before ':', or 0 */
	struct tracedir_struct fields;
	unsigned	 lost;		/* the built-in traced:lost */
	unsigned	 line;		/* of its 'event' keyword */
	char		*note;		/* owned: the trace-events line the
					   metadata carries for it, or NULL */
	const struct tevents_event *decl; /* into decl_file: that line,
					   parsed and checked against the
					   fields (types as written, format
					   string); NULL if none */
	struct tevents_file *decl_file;	/* owned */
};

/* A parsed metadata text.  Free with tracedir_meta_free(). */
struct tracedir_meta {
	uint8_t		 uuid[16];	/* the trace uuid */
	char		*hostname;	/* owned, from env; NULL if absent */
	char		*procname;	/* owned, from env; NULL if absent */
	int64_t		 vpid;		/* from env; -1 if absent */
	char		*clock_name;	/* owned */
	uint8_t		 clock_uuid[16];
	unsigned	 has_clock_uuid;
	uint64_t	 clock_freq;	/* ticks per second, >= 1 */
	int64_t		 clock_offset_s; /* seconds, normalized so that */
	uint64_t	 clock_offset;	/* ... this is below clock_freq */
	uint64_t	 stream_id;	/* of the one stream class */
	struct tracedir_struct pkt_header;
	struct tracedir_struct pkt_context;
	struct tracedir_struct ev_header;
	/* Indexes of the fields the reader uses; -1 when optional and
	 * absent. */
	int		 h_magic, h_uuid, h_stream_id, h_instance;
	int		 c_begin, c_end, c_content, c_packet, c_seq;
	int		 c_discarded, c_tid;
	int		 e_id, e_ts;
	struct tracedir_class *classes;	/* owned, sorted by id */
	size_t		 nclasses;
};

/* One decoded field. */
struct tracedir_value {
	const struct tracedir_decl *decl; /* borrowed from the meta */
	uint64_t	 u;		/* integers: the value; signed ones
					   sign-extended (read as int64_t) */
	const char	*s;		/* strings: NUL-terminated, inside
					   the window; arrays: bytes */
	size_t		 len;		/* strings: bytes before the NUL */
	uint64_t	 off;		/* where it starts in the stream */
	unsigned	 is_null;	/* strings: the program passed NULL
					   (s then holds "(null)") */
};

/* A packet, as its header and context say. */
struct tracedir_packet {
	uint64_t	 off;		/* of its first byte in the file */
	uint64_t	 size;		/* bytes, packet_size / 8 */
	uint64_t	 content;	/* bytes, content_size / 8 */
	uint64_t	 ts_begin;	/* clock ticks */
	uint64_t	 ts_end;
	uint64_t	 seq;		/* packet_seq_num, or its index */
	uint64_t	 discarded;	/* events_discarded: running total */
	uint64_t	 discarded_new;	/* its increase since the previous
					   packet (the first: since 0) */
	uint64_t	 prev_end;	/* the previous packet's ts_end, or
					   this one's ts_begin if first */
	uint64_t	 seq_gap;	/* packets missing before this one */
	uint64_t	 instance;	/* stream_instance_id, or 0 */
	uint64_t	 tid;		/* context 'tid', else instance */
};

/* One event. */
struct tracedir_event {
	const struct tracedir_class *cls; /* borrowed from the meta */
	uint64_t	 off;		/* of its header in the file */
	uint64_t	 ts;		/* clock ticks */
	unsigned	 nvalues;
	struct tracedir_value values[TRACEDIR_FIELDS_MAX];
};

/* tracedir_stream_next() results. */
enum tracedir_item {
	TRACEDIR_ERROR = -1,		/* s->err, s->err_off; for good */
	TRACEDIR_END = 0,		/* every byte read, all valid */
	TRACEDIR_PACKET,		/* s->packet is the next packet */
	TRACEDIR_EVENT,			/* *ev is the next event */
	TRACEDIR_MORE,			/* the window ends inside the next
					   item: feed a window from
					   tracedir_stream_keep() on */
};

/*
 * A walk over one stream: a cursor over a window of the stream file
 * that the caller slides forward (tracedir_stream_feed()), so that a
 * file of any size is read in constant memory.  A stream may span
 * several files (the daemon cuts a long one by size): the walk goes on
 * into the next with tracedir_stream_next_file(), and the checks
 * between packets (time, events_discarded, packet_seq_num) carry over.
 * Nothing in it is owned.
 */
struct tracedir_stream {
	const struct tracedir_meta *meta; /* borrowed */
	const uint8_t	*buf;		/* borrowed: the window */
	size_t		 blen;		/* bytes in the window */
	uint64_t	 base;		/* file offset of buf[0] */
	uint64_t	 flen;		/* bytes in the file */
	uint64_t	 pos;		/* file offset of the next byte */
	int		 in_packet;
	int		 failed;
	int		 seeking;	/* for a packet after a bad one */
	uint64_t	 pkt_start;	/* of the current packet */
	uint64_t	 content_end;
	uint64_t	 pkt_end;
	struct tracedir_packet packet;	/* the current packet */
	uint64_t	 npackets;	/* read so far, all files */
	uint64_t	 file_packets;	/* read so far in this file */
	uint64_t	 nevents;
	uint64_t	 last_ts;	/* of the last event, or packet begin */
	uint64_t	 err_off;	/* where the error is */
	char		 err[TRACEDIR_ERR_MAX]; /* what it is */
};

/* tsdl.c: parsing the metadata */

/*
 * Parse 'len' bytes of metadata text (no NUL needed).  On success store
 * a new meta in *out (free it with tracedir_meta_free()) and return 0.
 * Otherwise return -1 with "FILE:LINE: what is wrong" in err (FILE is
 * 'filename'), NUL-terminated when errlen > 0.  Accepts the dialect
 * daemon/ctf.c writes: integers of 8 to 64 bits in whole bytes, little
 * endian, strings, one clock, one stream class, events with integer and
 * string fields.
 */
int	tracedir_meta_parse(const char *text, size_t len, const char *filename,
	    struct tracedir_meta **out, char *err, size_t errlen);

/* Free m and everything it owns; NULL is fine. */
void	tracedir_meta_free(struct tracedir_meta *m);

/* tracedir.c: questions to a parsed metadata */

/* The class with this id, or NULL. */
const struct tracedir_class *tracedir_meta_class(const struct tracedir_meta *m,
	    uint32_t id);

/*
 * Clock ticks to nanoseconds from the Epoch (from the clock's origin,
 * offset_s and offset included), computed as babeltrace2 2.0.4 does so
 * that both print the same times; saturates at the int64_t limits.
 */
int64_t	tracedir_ns(const struct tracedir_meta *m, uint64_t ticks);

/* tracedir-stream.c: walking a stream */

/*
 * Start a walk over buf[0..len), a whole stream file in memory, read
 * with m: tracedir_stream_open() and one feed of the whole file.
 */
void	tracedir_stream_init(struct tracedir_stream *s,
	    const struct tracedir_meta *m, const void *buf, size_t len);

/*
 * Start a walk over a stream file of flen bytes, read with m, with no
 * window yet: the first tracedir_stream_next() asks for one with
 * TRACEDIR_MORE (unless flen is 0).
 */
void	tracedir_stream_open(struct tracedir_stream *s,
	    const struct tracedir_meta *m, uint64_t flen);

/*
 * Give the walk the window buf[0, len), which holds the file's bytes
 * [base, base + len).  The window must start at or before
 * tracedir_stream_keep() and stay valid until the next feed; the
 * strings and arrays of the events returned point into it.  A window
 * that reaches flen lets the walk say what runs past the file's end.
 */
void	tracedir_stream_feed(struct tracedir_stream *s, const void *buf,
	    size_t len, uint64_t base);

/* The file offset from which the next window must start. */
uint64_t tracedir_stream_keep(const struct tracedir_stream *s);

/*
 * The file ended (TRACEDIR_END): go on with the next file of the same
 * stream, flen bytes, with no window yet.  Its first packet must belong
 * to the same stream instance and continue the previous file's.
 */
void	tracedir_stream_next_file(struct tracedir_stream *s, uint64_t flen);

/*
 * The file grew to flen bytes (no fewer than it had): a walk that said
 * TRACEDIR_END goes on into them.  For a reader that follows a file as
 * it is written, and gives the walk only the whole packets in it.
 */
void	tracedir_stream_grow(struct tracedir_stream *s, uint64_t flen);

/*
 * The next item of the stream: TRACEDIR_PACKET before the events of
 * each packet (s->packet), TRACEDIR_EVENT for each event (*ev, whose
 * strings point into the window), TRACEDIR_END after the last one,
 * TRACEDIR_MORE when the window ends inside the next item (nothing is
 * consumed: feed a window that starts at or before
 * tracedir_stream_keep() and holds more, and call again), or
 * TRACEDIR_ERROR when something is wrong, with the message in s->err
 * and its byte offset in s->err_off; the walk stops there (every later
 * call says the same).  Each call does work bounded by the window, and
 * each item consumes at least one byte.
 */
enum tracedir_item tracedir_stream_next(struct tracedir_stream *s,
	    struct tracedir_event *ev);

/*
 * After TRACEDIR_ERROR: go on past the damage.  An error inside a
 * packet whose header and context were good skips the rest of that
 * packet; one in a packet header or context makes the walk look for the
 * next packet magic after that packet's first byte, and read from
 * there.  Each resync moves the walk forward, so a file of corrupt
 * packets still ends.  Returns 0 (the walk goes on; the next call may
 * ask for MORE).
 */
int	tracedir_stream_resync(struct tracedir_stream *s);

/*
 * After TRACEDIR_PACKET or an event of it: skip the packet's remaining
 * events, unread (a reader that wants nothing before a time skips the
 * packets that end before it).
 */
void	tracedir_stream_skip_packet(struct tracedir_stream *s);

/* tracedir-io.c: finding sessions */

/* One stream file (its bytes are read by reader.c, a window at a time). */
struct tracedir_file {
	char		*path;		/* owned */
	const char	*name;		/* into path: the file name */
	uint64_t	 len;		/* bytes, when it was listed */
};

/* One session directory: a metadata file and its streams. */
struct tracedir_session {
	char		*path;		/* owned, no trailing '/' */
	const char	*name;		/* into path: the directory name */
	struct tracedir_meta *meta;	/* owned; NULL if unreadable */
	struct tracedir_file *files;	/* owned, sorted by name */
	size_t		 nfiles;
};

/* The sessions found under one or more paths. */
struct tracedir_set {
	struct tracedir_session *sessions; /* owned, in the order found */
	size_t		 nsessions;
	size_t		 cap;
	size_t		 nfiles;	/* in all sessions */
};

/* Called with each problem the I/O layer finds ("PATH: what"). */
typedef void	(*tracedir_error_cb)(void *arg, const char *msg);

/*
 * Add to 'set' the session at 'path' (a directory holding 'metadata')
 * or every session below it, at most TRACEDIR_DEPTH_MAX directories
 * down, in name order.  Every regular file of a session other than
 * 'metadata' and names starting with '.' is a stream; each is listed
 * with its size, not read.  The metadata is read whole, up to
 * TRACEDIR_METADATA_MAX bytes, and parsed.  Each problem (unreadable
 * file, bad metadata, no session at all) goes to 'cb' once and loading
 * goes on with the rest; a session whose metadata is bad is kept with
 * meta NULL and no files.  Returns the number of problems reported, or
 * -1 when out of memory (after reporting it).
 */
int	tracedir_load(struct tracedir_set *set, const char *path,
	    tracedir_error_cb cb, void *arg);

/* Free every session of the set and empty it (it may be reused). */
void	tracedir_set_free(struct tracedir_set *set);

/*
 * Read the regular file 'path' whole into a new buffer (*data, freed by
 * the caller; one more byte is allocated and set to NUL), refusing
 * files over 'max' bytes, and anything else at 'path' (a FIFO, a
 * device: never waited on; a symlink: never followed).  Returns 0, or
 * -1 with the reason (without the path) in err.
 */
int	tracedir_read_file(const char *path, size_t max, uint8_t **data,
	    size_t *len, char *err, size_t errlen);

#endif /* TRACED_CTL_TRACEDIR_H */
