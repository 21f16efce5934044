/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * The stream walk of the trace directory reader: a cursor over the
 * packets and events of one stream that checks each of them against
 * the parsed metadata (tsdl.c).  Its entry points are the
 * tracedir_stream_*() functions (tracedir.h).
 *
 * The caller gives the walk a window of the stream file at a time and
 * slides it forward, so that a file of any size is read in constant
 * memory.  Every offset is checked against the end of the window and of
 * the file before it is read, every packet against its own
 * content_size and packet_size, and every event against its packet:
 * known id, timestamps inside [timestamp_begin, timestamp_end] and
 * never going back, strings NUL-terminated inside the content,
 * traced:lost records whose count is the sum of their causes.  Each
 * item moves the cursor forward by at least one byte, so a walk ends
 * after at most as many items as the file has bytes.  The first error
 * stops the walk until the caller resyncs it past the damage, which
 * also moves it forward.
 *
 * No I/O, no allocation, no global state.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ring.h"
#include "tracedir.h"

#define TD_MAGIC		0xC1FC1FC1u	/* CTF packet magic */

static int	td_serr(struct tracedir_stream *, uint64_t, const char *, ...)
		    __attribute__((format(printf, 3, 4)));

/*
 * Positions are offsets in the stream file.  The window buf[0, blen)
 * holds the file's bytes [base, base + blen); the file has flen bytes.
 * A read that needs bytes past the window but inside the file is not
 * an error: the item is given up (pos back where it started) and
 * TRACEDIR_MORE asks the caller for a window that starts no later than
 * tracedir_stream_keep().
 */

/* Stop the walk with an error at byte 'off'.  Returns TRACEDIR_ERROR. */
static int
td_serr(struct tracedir_stream *s, uint64_t off, const char *fmt, ...)
{
	va_list	ap;

	s->failed = 1;
	s->err_off = off;
	va_start(ap, fmt);
	vsnprintf(s->err, sizeof(s->err), fmt, ap);
	va_end(ap);
	return TRACEDIR_ERROR;
}

/*
 * Start a walk over a whole stream in memory.  Contract in tracedir.h.
 */
void
tracedir_stream_init(struct tracedir_stream *s, const struct tracedir_meta *m,
    const void *buf, size_t len)
{
	tracedir_stream_open(s, m, buf != NULL ? len : 0);
	tracedir_stream_feed(s, buf, buf != NULL ? len : 0, 0);
}

/*
 * Start a walk over a stream file of flen bytes.  Contract in
 * tracedir.h.
 */
void
tracedir_stream_open(struct tracedir_stream *s, const struct tracedir_meta *m,
    uint64_t flen)
{
	memset(s, 0, sizeof(*s));
	s->meta = m;
	s->flen = flen;
}

/*
 * Continue a walk after the end of a previous file of the same stream.
 * Contract in tracedir.h.
 */
void
tracedir_stream_next_file(struct tracedir_stream *s, uint64_t flen)
{
	s->flen = flen;
	s->pos = 0;
	s->base = 0;
	s->buf = NULL;
	s->blen = 0;
	s->in_packet = 0;
	s->pkt_start = s->content_end = s->pkt_end = 0;
	s->file_packets = 0;
}

/*
 * The file grew.  Contract in tracedir.h.
 */
void
tracedir_stream_grow(struct tracedir_stream *s, uint64_t flen)
{
	if (flen > s->flen)
		s->flen = flen;
}

/*
 * Give the walk the window buf[0, len) = file bytes [base, base + len).
 * Contract in tracedir.h.
 */
void
tracedir_stream_feed(struct tracedir_stream *s, const void *buf, size_t len,
    uint64_t base)
{
	s->buf = buf;
	s->blen = len;
	s->base = base;
}

/*
 * The first byte the next window must hold.  Contract in tracedir.h.
 */
uint64_t
tracedir_stream_keep(const struct tracedir_stream *s)
{
	return s->pos;
}

/* Bytes of the file after the window (0 if the window reaches flen). */
static uint64_t
td_wend(const struct tracedir_stream *s)
{
	return s->base + s->blen;
}

static uint64_t
td_get(const uint8_t *p, unsigned nbytes)
{
	uint64_t	 v = 0;

	while (nbytes-- > 0)
		v = v << 8 | p[nbytes];
	return v;
}

static int	td_seek(struct tracedir_stream *);

/* td_decode() results besides 0 and TRACEDIR_ERROR. */
#define TD_MORE		1

/*
 * Move s->pos to the next multiple of 'align' bits from the start of
 * the packet, not past 'limit'.  Returns 0, or -1 if it would be.
 */
static int
td_align(struct tracedir_stream *s, unsigned align, uint64_t limit)
{
	uint64_t	 a = align / 8, rel = s->pos - s->pkt_start, pad;

	pad = (a - rel % a) % a;
	if (pad > limit - s->pos)
		return -1;
	s->pos += pad;
	return 0;
}

/*
 * Decode struct 'st' at s->pos into v[], reading nothing at or past
 * 'limit' (named 'lname' in messages; 'what' names the struct).
 * Returns 0; TD_MORE when the window ends before the struct does
 * (s->pos is then wherever it got: the caller puts it back); or
 * TRACEDIR_ERROR with the walk stopped.
 */
static int
td_decode(struct tracedir_stream *s, const struct tracedir_struct *st,
    struct tracedir_value *v, uint64_t limit, const char *what,
    const char *lname)
{
	const struct tracedir_decl *d;
	const uint8_t	*p, *nul;
	uint64_t	 n, start = s->pos, wend = td_wend(s), avail;
	unsigned	 i;

	if (td_align(s, st->align, limit) == -1)
		return td_serr(s, start, "%s runs past %s", what, lname);
	for (i = 0; i < st->n; i++) {
		d = &st->decls[i];
		v[i].decl = d;
		v[i].u = 0;
		v[i].s = NULL;
		v[i].len = 0;
		v[i].is_null = 0;
		if (td_align(s, d->type.align, limit) == -1)
			return td_serr(s, start, "%s: field '%.40s' runs past "
			    "%s", what, d->shown, lname);
		v[i].off = s->pos;
		/* What the window holds from here, below the limit. */
		if (s->buf != NULL && s->pos >= s->base && s->pos < wend &&
		    s->pos < limit) {
			p = s->buf + (s->pos - s->base);
			avail = (limit < wend ? limit : wend) - s->pos;
		} else {
			p = NULL;
			avail = 0;
		}
		switch (d->type.kind) {
		case TRACEDIR_INT:
			n = d->type.size / 8;
			if (n > limit - s->pos)
				return td_serr(s, s->pos, "%s: field '%.40s' "
				    "runs past %s", what, d->shown, lname);
			if (n > avail)
				return TD_MORE;
			v[i].u = td_get(p, (unsigned)n);
			if (d->type.is_signed && d->type.size < 64 &&
			    (v[i].u >> (d->type.size - 1)) != 0)
				v[i].u |= UINT64_MAX << d->type.size;
			break;
		case TRACEDIR_ARRAY:
			n = (uint64_t)d->type.length * (d->type.size / 8);
			if (n > limit - s->pos)
				return td_serr(s, s->pos, "%s: field '%.40s' "
				    "runs past %s", what, d->shown, lname);
			if (n > avail)
				return TD_MORE;
			v[i].s = (const char *)p;
			v[i].len = (size_t)n;
			break;
		case TRACEDIR_STRING:
			nul = avail > 0 ? memchr(p, 0, (size_t)avail) : NULL;
			if (nul == NULL && limit <= wend)
				return td_serr(s, s->pos, "%s: string '%.40s' "
				    "has no NUL before %s", what, d->shown,
				    lname);
			if (nul == NULL)
				return TD_MORE;
			v[i].s = (const char *)p;
			v[i].len = (size_t)(nul - p);
			n = v[i].len + 1;
			break;
		default:
			return td_serr(s, s->pos, "%s: bad field type", what);
		}
		s->pos += n;
	}
	return 0;
}

static void
td_uuid_str(char *buf, size_t size, const uint8_t *u)
{
	snprintf(buf, size, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
	    "%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2], u[3], u[4], u[5],
	    u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
}

/* Read the header and context of the packet at s->pos. */
static enum tracedir_item
td_packet(struct tracedir_stream *s)
{
	const struct tracedir_meta *m = s->meta;
	struct tracedir_value	 hv[TRACEDIR_FIELDS_MAX];
	struct tracedir_value	 cv[TRACEDIR_FIELDS_MAX];
	struct tracedir_packet	 p, *prev = s->npackets > 0 ? &s->packet :
				    NULL;
	char			 u1[40], u2[40];
	uint64_t		 left, ctx_end, start = s->pos;
	int			 r;

	memset(&p, 0, sizeof(p));
	s->pkt_start = s->pos;
	p.off = s->pos;
	if ((r = td_decode(s, &m->pkt_header, hv, s->flen, "packet header",
	    "the end of the file")) != 0)
		goto stop;
	if (hv[m->h_magic].u != TD_MAGIC)
		return td_serr(s, hv[m->h_magic].off, "bad packet magic "
		    "0x%08llx (expected 0x%08x): not a packet, or the "
		    "previous packet's size is wrong",
		    (unsigned long long)hv[m->h_magic].u, TD_MAGIC);
	if (memcmp(hv[m->h_uuid].s, m->uuid, 16) != 0) {
		td_uuid_str(u1, sizeof(u1), (const uint8_t *)hv[m->h_uuid].s);
		td_uuid_str(u2, sizeof(u2), m->uuid);
		return td_serr(s, hv[m->h_uuid].off, "packet uuid %s is not "
		    "the trace's %s", u1, u2);
	}
	if (m->h_stream_id >= 0 && hv[m->h_stream_id].u != m->stream_id)
		return td_serr(s, hv[m->h_stream_id].off, "unknown stream_id "
		    "%llu", (unsigned long long)hv[m->h_stream_id].u);
	if ((r = td_decode(s, &m->pkt_context, cv, s->flen, "packet context",
	    "the end of the file")) != 0)
		goto stop;

	ctx_end = s->pos - s->pkt_start;
	left = s->flen - s->pkt_start;
	p.size = cv[m->c_packet].u;
	p.content = cv[m->c_content].u;
	if (p.size % 8 != 0 || p.content % 8 != 0)
		return td_serr(s, cv[p.size % 8 != 0 ? m->c_packet :
		    m->c_content].off, "%s %llu bits is not a whole number "
		    "of bytes", p.size % 8 != 0 ? "packet_size" :
		    "content_size", (unsigned long long)(p.size % 8 != 0 ?
		    p.size : p.content));
	if (p.content > p.size)
		return td_serr(s, cv[m->c_content].off, "content_size %llu "
		    "bits is more than packet_size %llu bits",
		    (unsigned long long)p.content, (unsigned long long)p.size);
	p.size /= 8;
	p.content /= 8;
	if (p.size > left)
		return td_serr(s, cv[m->c_packet].off, "packet_size %llu "
		    "bytes runs past the end of the file (%llu bytes left): "
		    "truncated packet", (unsigned long long)p.size,
		    (unsigned long long)left);
	if (p.content < ctx_end)
		return td_serr(s, cv[m->c_content].off, "content_size %llu "
		    "bytes ends inside the packet header and context (%llu "
		    "bytes)", (unsigned long long)p.content,
		    (unsigned long long)ctx_end);

	p.ts_begin = cv[m->c_begin].u;
	p.ts_end = cv[m->c_end].u;
	p.discarded = cv[m->c_discarded].u;
	if (p.ts_begin > p.ts_end)
		return td_serr(s, cv[m->c_begin].off, "timestamp_begin %llu "
		    "is after timestamp_end %llu",
		    (unsigned long long)p.ts_begin,
		    (unsigned long long)p.ts_end);
	if (prev != NULL && p.ts_begin < prev->ts_end)
		return td_serr(s, cv[m->c_begin].off, "timestamp_begin %llu "
		    "is before the previous packet's timestamp_end %llu",
		    (unsigned long long)p.ts_begin,
		    (unsigned long long)prev->ts_end);
	if (prev != NULL && p.discarded < prev->discarded)
		return td_serr(s, cv[m->c_discarded].off, "events_discarded "
		    "went down from %llu to %llu",
		    (unsigned long long)prev->discarded,
		    (unsigned long long)p.discarded);
	p.discarded_new = p.discarded - (prev != NULL ? prev->discarded : 0);
	p.prev_end = prev != NULL ? prev->ts_end : p.ts_begin;
	if (m->c_seq >= 0) {
		p.seq = cv[m->c_seq].u;
		if (prev != NULL && p.seq <= prev->seq)
			return td_serr(s, cv[m->c_seq].off, "packet_seq_num "
			    "%llu after %llu", (unsigned long long)p.seq,
			    (unsigned long long)prev->seq);
		if (prev != NULL)
			p.seq_gap = p.seq - prev->seq - 1;
	} else
		p.seq = s->npackets;
	if (m->h_instance >= 0)
		p.instance = hv[m->h_instance].u;
	p.tid = m->c_tid >= 0 ? cv[m->c_tid].u : p.instance;
	if (prev != NULL && s->file_packets == 0 && p.instance !=
	    prev->instance)
		return td_serr(s, p.off, "stream_instance_id %llu: this file "
		    "does not continue stream %llu",
		    (unsigned long long)p.instance,
		    (unsigned long long)prev->instance);

	s->packet = p;
	s->content_end = s->pkt_start + p.content;
	s->pkt_end = s->pkt_start + p.size;
	s->in_packet = 1;
	s->last_ts = p.ts_begin;
	s->npackets++;
	s->file_packets++;
	return TRACEDIR_PACKET;
stop:
	if (r == TD_MORE) {
		s->pos = start;
		return TRACEDIR_MORE;
	}
	return TRACEDIR_ERROR;
}

/* Read the event at s->pos, inside the current packet's content. */
static enum tracedir_item
td_event_read(struct tracedir_stream *s, struct tracedir_event *ev)
{
	const struct tracedir_meta *m = s->meta;
	const struct tracedir_class *c;
	struct tracedir_value	 hv[TRACEDIR_FIELDS_MAX];
	const char		*lname = "the end of the packet content";
	uint64_t		 id, sum = 0, start = s->pos, flags;
	unsigned		 i;
	int			 r;

	if ((r = td_decode(s, &m->ev_header, hv, s->content_end,
	    "event header", lname)) != 0)
		goto stop;
	id = hv[m->e_id].u;
	ev->off = hv[0].off;
	ev->ts = hv[m->e_ts].u;
	if (id > UINT32_MAX || (c = tracedir_meta_class(m, (uint32_t)id)) ==
	    NULL)
		return td_serr(s, hv[m->e_id].off, "unknown event id %llu",
		    (unsigned long long)id);
	if (ev->ts < s->packet.ts_begin || ev->ts > s->packet.ts_end)
		return td_serr(s, hv[m->e_ts].off, "event timestamp %llu is "
		    "outside its packet's [%llu, %llu]",
		    (unsigned long long)ev->ts,
		    (unsigned long long)s->packet.ts_begin,
		    (unsigned long long)s->packet.ts_end);
	if (ev->ts < s->last_ts)
		return td_serr(s, hv[m->e_ts].off, "event timestamp %llu "
		    "goes back (the previous event's is %llu)",
		    (unsigned long long)ev->ts,
		    (unsigned long long)s->last_ts);
	/*
	 * traced's event header keeps the record's size word in the 4
	 * bytes after the id, which the metadata leaves undeclared; its
	 * high bits say which string arguments were NULL pointers
	 * (proto/ring.h).  Read only when the header is traced's.
	 */
	flags = 0;
	if (m->e_id == 0 && m->e_ts == 1 && m->ev_header.n == 2 &&
	    m->ev_header.decls[0].type.size == 32 &&
	    hv[m->e_ts].off == ev->off + 8)
		flags = td_get(s->buf + (ev->off + 4 - s->base), 4) >>
		    TRACED_REC_NULL_SHIFT;
	ev->cls = c;
	ev->nvalues = c->fields.n;
	if ((r = td_decode(s, &c->fields, ev->values, s->content_end,
	    c->name, lname)) != 0)
		goto stop;
	for (i = 0; flags != 0 && i < ev->nvalues && i < 32; i++)
		if ((flags >> i & 1) &&
		    ev->values[i].decl->type.kind == TRACEDIR_STRING)
			ev->values[i].is_null = 1;
	if (c->lost) {
		for (i = 1; i < ev->nvalues; i++)
			if (__builtin_add_overflow(sum, ev->values[i].u, &sum))
				break;
		if (i < ev->nvalues || sum != ev->values[0].u)
			return td_serr(s, ev->off, "traced:lost: count %llu is "
			    "not the sum of its causes",
			    (unsigned long long)ev->values[0].u);
	}
	s->last_ts = ev->ts;
	s->nevents++;
	return TRACEDIR_EVENT;
stop:
	if (r == TD_MORE) {
		s->pos = start;
		return TRACEDIR_MORE;
	}
	return TRACEDIR_ERROR;
}

/*
 * The next packet or event.  Contract in tracedir.h.
 */
enum tracedir_item
tracedir_stream_next(struct tracedir_stream *s, struct tracedir_event *ev)
{
	if (s->failed)
		return TRACEDIR_ERROR;
	if (s->in_packet) {
		if (s->pos < s->content_end)
			return td_event_read(s, ev);
		s->in_packet = 0;
		s->pos = s->pkt_end;
	}
	if (s->seeking && td_seek(s) != 0)
		return s->pos >= s->flen ? TRACEDIR_END : TRACEDIR_MORE;
	if (s->pos >= s->flen)
		return TRACEDIR_END;
	return td_packet(s);
}

/*
 * Looking for a packet after a corrupt one: the next place in the file
 * where the packet magic is, as the header's first field.  Returns 0
 * with s->pos there, or 1 when the window ends first (s->pos then
 * stays near the end of the window, or at flen if the file ends).
 */
static int
td_seek(struct tracedir_stream *s)
{
	const uint8_t	 magic[4] = { 0xc1, 0x1f, 0xfc, 0xc1 };
	const uint8_t	*p, *hit;
	uint64_t	 wend = td_wend(s);

	if (s->meta->h_magic != 0) {
		s->pos = s->flen;	/* cannot tell where packets start */
		return 1;
	}
	if (s->pos < wend && s->pos >= s->base && s->buf != NULL) {
		p = s->buf + (s->pos - s->base);
		hit = memmem(p, (size_t)(wend - s->pos), magic, sizeof(magic));
		if (hit != NULL) {
			s->pos += (uint64_t)(hit - p);
			s->seeking = 0;
			return 0;
		}
	}
	if (wend >= s->flen) {
		s->pos = s->flen;
		s->seeking = 0;
		return 1;
	}
	/* The magic may straddle the end of the window. */
	if (s->pos < wend && wend - s->pos > sizeof(magic) - 1)
		s->pos = wend - (sizeof(magic) - 1);
	return 1;
}

/*
 * Go on after an error.  Contract in tracedir.h.
 */
int
tracedir_stream_resync(struct tracedir_stream *s)
{
	if (!s->failed)
		return 0;
	s->failed = 0;
	s->err[0] = '\0';
	if (s->in_packet && s->err_off >= s->pkt_start &&
	    s->err_off < s->pkt_end) {
		/* The packet's header was good: its size is. */
		s->in_packet = 0;
		s->pos = s->pkt_end;
		return 0;
	}
	s->in_packet = 0;
	s->pos = s->pkt_start + 1;
	s->seeking = 1;
	return 0;
}

/*
 * Skip the rest of the current packet.  Contract in tracedir.h.
 */
void
tracedir_stream_skip_packet(struct tracedir_stream *s)
{
	if (s->failed || !s->in_packet)
		return;
	s->in_packet = 0;
	s->pos = s->pkt_end;
}
