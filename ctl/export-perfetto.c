/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * tracectl export --format perfetto: Perfetto's protobuf trace format,
 * which the Perfetto UI and trace_processor open.  The file is a Trace
 * message written as it goes: one 'packet' field (TracePacket) after
 * another, all on one packet sequence:
 *
 *   - a ClockSnapshot first: the timestamps are CLOCK_REALTIME ns
 *     (builtin clock 1, the file's primary trace clock; each packet
 *     says timestamp_clock_id 1 too);
 *   - a TrackDescriptor per process (pid, name) and per thread (pid,
 *     tid, name), before the first event on it;
 *   - every event a TrackEvent of TYPE_INSTANT on its thread's track,
 *     name and category (the provider) interned, arguments as debug
 *     annotations (integers signed or not, pointers, bools, strings; a
 *     NULL string as a null pointer);
 *   - each loss an instant named for its cause, with the count;
 *   - each --pair a TYPE_SLICE_BEGIN / TYPE_SLICE_END on a track of its
 *     process (a lane: overlapping pairs go to separate ones), written
 *     when the pair ends (trace_processor sorts by time);
 *   - a function trace's records as calls (calls.c): a TYPE_SLICE_BEGIN
 *     named "object:function" (interned) at each entry and a
 *     TYPE_SLICE_END at its end, on the thread's track, so that calls
 *     nest as they did; a call whose exit was lost ends where the
 *     trace shows it had, one still open where its thread's last
 *     record is.
 *
 * The encoder is this file's own: varints, tags and length-delimited
 * fields, a message built in a buffer and copied into its parent with
 * its length.  That is all the format needs, and it keeps the export
 * free of a code generator and a library (protobuf-c would need both,
 * for the eight messages used here).  Field numbers are those of
 * Perfetto's protos/perfetto/trace/ files; tests/perfetto/trace.proto
 * is the project's own minimal schema of them, used by the test to
 * decode the output with protoc.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calls.h"
#include "export.h"
#include "format.h"
#include "strbuf.h"
#include "text.h"
#include "tevents.h"

/* Field numbers, each checked against Perfetto's .proto files. */
#define PB_TRACE_PACKET			1	/* Trace.packet */
#define PB_PACKET_TIMESTAMP		8	/* TracePacket.* */
#define PB_PACKET_CLOCK_ID		58
#define PB_PACKET_SEQ_ID		10
#define PB_PACKET_SEQ_FLAGS		13
#define PB_PACKET_INTERNED		12
#define PB_PACKET_TRACK_EVENT		11
#define PB_PACKET_TRACK_DESC		60
#define PB_PACKET_CLOCK_SNAPSHOT	6
#define PB_SNAP_CLOCKS			1	/* ClockSnapshot.* */
#define PB_SNAP_PRIMARY			2
#define PB_CLOCK_ID			1	/* ClockSnapshot.Clock.* */
#define PB_CLOCK_TIMESTAMP		2
#define PB_TD_UUID			1	/* TrackDescriptor.* */
#define PB_TD_PARENT			5
#define PB_TD_NAME			2
#define PB_TD_PROCESS			3
#define PB_TD_THREAD			4
#define PB_PD_PID			1	/* ProcessDescriptor.* */
#define PB_PD_NAME			6
#define PB_THD_PID			1	/* ThreadDescriptor.* */
#define PB_THD_TID			2
#define PB_THD_NAME			5
#define PB_TE_TYPE			9	/* TrackEvent.* */
#define PB_TE_TRACK			11
#define PB_TE_NAME_IID			10
#define PB_TE_CATEGORY_IIDS		3
#define PB_TE_ANNOTATIONS		4
#define PB_DA_NAME_IID			1	/* DebugAnnotation.* */
#define PB_DA_BOOL			2
#define PB_DA_UINT			3
#define PB_DA_INT			4
#define PB_DA_STRING			6
#define PB_DA_POINTER			7
#define PB_ID_CATEGORIES		1	/* InternedData.* */
#define PB_ID_NAMES			2
#define PB_ID_ANNOTATION_NAMES		3
#define PB_INTERNED_IID			1	/* EventName, EventCategory, */
#define PB_INTERNED_NAME		2	/* DebugAnnotationName */

/* Enum values. */
#define PB_TYPE_SLICE_BEGIN		1	/* TrackEvent.Type */
#define PB_TYPE_SLICE_END		2
#define PB_TYPE_INSTANT			3
#define PB_SEQ_CLEARED			1	/* TracePacket.SequenceFlags */
#define PB_SEQ_NEEDS_STATE		2
#define PB_CLOCK_REALTIME		1	/* BuiltinClock */

#define PB_SEQUENCE			1	/* our one packet sequence */

/* Wire types. */
#define PB_VARINT	0
#define PB_LEN		2

#define PF_LANES_MAX	64

/* One interning table: strings to ids, per kind. */
struct pf_intern {
	char		**keys;		/* owned, cap slots */
	uint64_t	*iids;
	size_t		 cap;
	size_t		 n;
};

struct pf_lanes {
	int64_t		 end[PF_LANES_MAX];
	unsigned	 n;
};

struct pf_state {
	struct strbuf	 pkt;		/* the packet being built */
	struct strbuf	 msg;		/* a message inside it */
	struct strbuf	 sub;		/* a message inside that */
	struct strbuf	 interned;	/* new interned entries */
	struct strbuf	 tmp;
	struct pf_intern names, cats, anames;
	uint8_t		*sess_described;	/* owned, per session */
	uint8_t		*thread_described;	/* owned, per thread */
	struct pf_lanes	*lanes;		/* owned, per session and rule */
	struct calls	*calls;		/* owned */
	struct export	*x;
	int		 nomem;
};

/* ---- encoding -------------------------------------------------------------- */

static void
pb_varint(struct strbuf *b, uint64_t v)
{
	char	 tmp[10];
	size_t	 n = 0;

	do {
		tmp[n++] = (char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v != 0);
	strbuf_add(b, tmp, n);
}

static void
pb_tag(struct strbuf *b, unsigned field, unsigned wire)
{
	pb_varint(b, (uint64_t)field << 3 | wire);
}

static void
pb_uint(struct strbuf *b, unsigned field, uint64_t v)
{
	pb_tag(b, field, PB_VARINT);
	pb_varint(b, v);
}

/* int32/int64 fields: two's complement as a 64-bit varint. */
static void
pb_int(struct strbuf *b, unsigned field, int64_t v)
{
	pb_uint(b, field, (uint64_t)v);
}

static void
pb_bytes(struct strbuf *b, unsigned field, const char *s, size_t len)
{
	pb_tag(b, field, PB_LEN);
	pb_varint(b, len);
	strbuf_add(b, s, len);
}

/* A string field: bytes that are not UTF-8 become U+FFFD, as protobuf
 * strings must be UTF-8. */
static void
pb_string(struct pf_state *st, struct strbuf *b, unsigned field,
    const char *s, size_t len)
{
	struct strbuf	*t = &st->tmp;
	size_t		 i, n;

	for (i = 0; i < len; i += n)
		if ((n = text_utf8_len(s + i, len - i)) == 0)
			break;
	if (i == len) {
		pb_bytes(b, field, s, len);
		return;
	}
	strbuf_reset(t);
	for (i = 0; i < len; i += n) {
		if ((n = text_utf8_len(s + i, len - i)) == 0) {
			strbuf_adds(t, "\xef\xbf\xbd");
			n = 1;
		} else
			strbuf_add(t, s + i, n);
	}
	pb_bytes(b, field, t->s != NULL ? t->s : "", t->len);
}

/* Append message 'm' as field 'field' of b, and empty m. */
static void
pb_message(struct strbuf *b, unsigned field, struct strbuf *m)
{
	pb_bytes(b, field, m->s != NULL ? m->s : "", m->len);
	if (m->failed)
		b->failed = 1;
	strbuf_reset(m);
}

/* ---- interning ------------------------------------------------------------- */

static uint64_t
pf_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	for (; *s != '\0'; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

/*
 * The iid of s in table t; a new one (*fresh set) if s was not in it.
 * 0 when out of memory.
 */
static uint64_t
pf_iid(struct pf_intern *t, const char *s, int *fresh)
{
	char		**nk, *copy;
	uint64_t	*ni;
	size_t		 i, j, ncap;

	*fresh = 0;
	if ((t->n + 1) * 2 > t->cap) {
		ncap = t->cap != 0 ? t->cap * 2 : 256;
		if ((nk = calloc(ncap, sizeof(*nk))) == NULL ||
		    (ni = calloc(ncap, sizeof(*ni))) == NULL) {
			free(nk);
			return 0;
		}
		for (i = 0; i < t->cap; i++) {
			if (t->keys[i] == NULL)
				continue;
			for (j = pf_hash(t->keys[i]) & (ncap - 1); nk[j] != NULL;
			    j = (j + 1) & (ncap - 1))
				;
			nk[j] = t->keys[i];
			ni[j] = t->iids[i];
		}
		free(t->keys);
		free(t->iids);
		t->keys = nk;
		t->iids = ni;
		t->cap = ncap;
	}
	for (j = pf_hash(s) & (t->cap - 1); t->keys[j] != NULL;
	    j = (j + 1) & (t->cap - 1))
		if (strcmp(t->keys[j], s) == 0)
			return t->iids[j];
	if ((copy = strdup(s)) == NULL)
		return 0;
	t->keys[j] = copy;
	t->iids[j] = ++t->n;
	*fresh = 1;
	return t->iids[j];
}

static void
pf_intern_free(struct pf_intern *t)
{
	size_t	 i;

	for (i = 0; i < t->cap; i++)
		free(t->keys[i]);
	free(t->keys);
	free(t->iids);
}

/*
 * The iid of a name of kind 'field' (PB_ID_*), its entry added to the
 * packet's interned data the first time.  0 when out of memory.
 */
static uint64_t
pf_intern(struct pf_state *st, unsigned field, const char *s, size_t len)
{
	struct pf_intern *t = field == PB_ID_NAMES ? &st->names :
	    field == PB_ID_CATEGORIES ? &st->cats : &st->anames;
	struct strbuf	 e;
	char		 key[1024];
	uint64_t	 iid;
	int		 fresh;

	snprintf(key, sizeof(key), "%.*s", (int)len, s);
	if ((iid = pf_iid(t, key, &fresh)) == 0) {
		st->nomem = 1;
		return 0;
	}
	if (fresh) {
		strbuf_init(&e);
		pb_uint(&e, PB_INTERNED_IID, iid);
		pb_string(st, &e, PB_INTERNED_NAME, key, strlen(key));
		pb_message(&st->interned, field, &e);
		strbuf_free(&e);
	}
	return iid;
}

/* ---- packets ---------------------------------------------------------------- */

/* The packet header fields every timed packet has. */
static void
pf_packet_begin(struct pf_state *st, int64_t ns)
{
	strbuf_reset(&st->pkt);
	pb_uint(&st->pkt, PB_PACKET_TIMESTAMP, ns > 0 ? (uint64_t)ns : 0);
	pb_uint(&st->pkt, PB_PACKET_CLOCK_ID, PB_CLOCK_REALTIME);
	pb_uint(&st->pkt, PB_PACKET_SEQ_ID, PB_SEQUENCE);
}

/* Write st->pkt as one Trace.packet. */
static int
pf_write(struct export *x, struct pf_state *st)
{
	struct strbuf	 hdr;
	char		 buf[16];

	if (st->interned.len > 0) {
		pb_message(&st->pkt, PB_PACKET_INTERNED, &st->interned);
		pb_uint(&st->pkt, PB_PACKET_SEQ_FLAGS, PB_SEQ_NEEDS_STATE);
	}
	if (st->pkt.failed || st->msg.failed || st->sub.failed ||
	    st->interned.failed || st->tmp.failed || st->nomem) {
		export_error(x, "out of memory");
		return -1;
	}
	hdr.s = buf;
	hdr.len = 0;
	hdr.cap = sizeof(buf);
	hdr.failed = 0;
	pb_tag(&hdr, PB_TRACE_PACKET, PB_LEN);
	pb_varint(&hdr, st->pkt.len);
	fwrite(hdr.s, 1, hdr.len, x->out);
	fwrite(st->pkt.s, 1, st->pkt.len, x->out);
	strbuf_reset(&st->pkt);
	return 0;
}

/* A TrackDescriptor packet from the message in st->msg. */
static int
pf_track(struct export *x, struct pf_state *st)
{
	strbuf_reset(&st->pkt);
	pb_uint(&st->pkt, PB_PACKET_SEQ_ID, PB_SEQUENCE);
	pb_message(&st->pkt, PB_PACKET_TRACK_DESC, &st->msg);
	return pf_write(x, st);
}

static uint64_t
pf_process_uuid(size_t sess)
{
	return (uint64_t)(sess + 1) << 40;
}

static uint64_t
pf_thread_uuid(const struct reader_thread *t)
{
	return pf_process_uuid(t->sess->index) | (uint64_t)(t->index + 1);
}

/* Describe the process and thread of an item the first time. */
static int
pf_describe(struct export *x, struct pf_state *st,
    const struct reader_session *s, const struct reader_thread *t)
{
	char	 name[512];

	if (!st->sess_described[s->index]) {
		st->sess_described[s->index] = 1;
		pb_uint(&st->msg, PB_TD_UUID, pf_process_uuid(s->index));
		pb_int(&st->sub, PB_PD_PID, s->pid);
		pb_string(st, &st->sub, PB_PD_NAME, s->comm, strlen(s->comm));
		pb_message(&st->msg, PB_TD_PROCESS, &st->sub);
		if (pf_track(x, st) == -1)
			return -1;
	}
	if (t != NULL && !st->thread_described[t->index]) {
		st->thread_described[t->index] = 1;
		if ((int64_t)t->tid == s->pid)
			snprintf(name, sizeof(name), "%s", s->comm);
		else
			snprintf(name, sizeof(name), "%s %llu", s->comm,
			    (unsigned long long)t->tid);
		pb_uint(&st->msg, PB_TD_UUID, pf_thread_uuid(t));
		pb_uint(&st->msg, PB_TD_PARENT, pf_process_uuid(s->index));
		pb_int(&st->sub, PB_THD_PID, s->pid);
		pb_int(&st->sub, PB_THD_TID, (int64_t)t->tid);
		pb_string(st, &st->sub, PB_THD_NAME, name, strlen(name));
		pb_message(&st->msg, PB_TD_THREAD, &st->sub);
		if (pf_track(x, st) == -1)
			return -1;
	}
	return 0;
}

static void
pf_say(void *arg, const char *msg)
{
	export_error(arg, "%s", msg);
}

/* A call began or ended (calls.c): a slice on its thread's track. */
static int
pf_call(void *arg, const struct call_step *s)
{
	struct pf_state	*st = arg;
	uint64_t	 iid = 0;

	if (s->how == CALL_OPEN)
		iid = pf_intern(st, PB_ID_NAMES, s->fn->name,
		    strlen(s->fn->name));
	pf_packet_begin(st, s->how == CALL_OPEN ? s->start_ns : s->end_ns);
	pb_uint(&st->msg, PB_TE_TYPE, s->how == CALL_OPEN ?
	    PB_TYPE_SLICE_BEGIN : PB_TYPE_SLICE_END);
	pb_uint(&st->msg, PB_TE_TRACK, pf_thread_uuid(s->thread));
	if (s->how == CALL_OPEN)
		pb_uint(&st->msg, PB_TE_NAME_IID, iid);
	pb_message(&st->pkt, PB_PACKET_TRACK_EVENT, &st->msg);
	return pf_write(st->x, st);
}

static int
pf_end(struct export *x)
{
	struct pf_state	*st = x->priv;

	return calls_finish(st->calls, pf_call, st);
}

static int
pf_begin(struct export *x)
{
	struct pf_state	*st = x->priv;
	int64_t		 first = 0;
	size_t		 i;

	st->x = x;
	if ((st->calls = calls_new(x->nsessions, x->nthreads, pf_say,
	    x)) == NULL) {
		export_error(x, "out of memory");
		return -1;
	}
	if ((st->sess_described = calloc(x->nsessions + 1, 1)) == NULL ||
	    (st->thread_described = calloc(x->nthreads + 1, 1)) == NULL ||
	    (x->pairs->n > 0 && (st->lanes = calloc(x->nsessions *
	    x->pairs->n + 1, sizeof(*st->lanes))) == NULL)) {
		export_error(x, "out of memory");
		return -1;
	}
	for (i = 0; i < x->nthreads; i++)
		if (i == 0 || x->threads[i].first_ns < first)
			first = x->threads[i].first_ns;
	/* The clock, and the start of the sequence's incremental state. */
	strbuf_reset(&st->pkt);
	pb_uint(&st->pkt, PB_PACKET_TIMESTAMP, first > 0 ? (uint64_t)first :
	    0);
	pb_uint(&st->pkt, PB_PACKET_CLOCK_ID, PB_CLOCK_REALTIME);
	pb_uint(&st->pkt, PB_PACKET_SEQ_ID, PB_SEQUENCE);
	pb_uint(&st->pkt, PB_PACKET_SEQ_FLAGS, PB_SEQ_CLEARED);
	pb_uint(&st->sub, PB_CLOCK_ID, PB_CLOCK_REALTIME);
	pb_uint(&st->sub, PB_CLOCK_TIMESTAMP, first > 0 ? (uint64_t)first :
	    0);
	pb_message(&st->msg, PB_SNAP_CLOCKS, &st->sub);
	pb_uint(&st->msg, PB_SNAP_PRIMARY, PB_CLOCK_REALTIME);
	pb_message(&st->pkt, PB_PACKET_CLOCK_SNAPSHOT, &st->msg);
	return pf_write(x, st);
}

/* One debug annotation for field i of an event, into st->sub. */
static void
pf_annotation(struct pf_state *st, const struct tracedir_class *c,
    unsigned i, const struct tracedir_value *v)
{
	const struct tracedir_type *t = &v->decl->type;
	const struct tevents_arg *a = c->decl != NULL && i < c->decl->nargs ?
	    &c->decl->args[i] : NULL;
	struct strbuf	*b = &st->sub;

	pb_uint(b, PB_DA_NAME_IID, pf_intern(st, PB_ID_ANNOTATION_NAMES,
	    v->decl->shown, strlen(v->decl->shown)));
	if (t->kind == TRACEDIR_STRING) {
		if (v->is_null)
			pb_uint(b, PB_DA_POINTER, 0);
		else
			pb_string(st, b, PB_DA_STRING, v->s, v->len);
	} else if (t->kind == TRACEDIR_ARRAY) {
		strbuf_reset(&st->tmp);
		fmt_value_raw(v, &st->tmp);
		pb_bytes(b, PB_DA_STRING, st->tmp.s != NULL ? st->tmp.s : "",
		    st->tmp.len);
	} else if (a != NULL && a->cls == TEVENTS_BOOL)
		pb_uint(b, PB_DA_BOOL, v->u != 0);
	else if ((a != NULL && a->cls == TEVENTS_POINTER) ||
	    (a == NULL && t->base == 16))
		pb_uint(b, PB_DA_POINTER, v->u);
	else if (t->is_signed)
		pb_int(b, PB_DA_INT, (int64_t)v->u);
	else
		pb_uint(b, PB_DA_UINT, v->u);
}

static int
pf_item(struct export *x, const struct reader_item *it)
{
	struct pf_state	*st = x->priv;
	const struct tracedir_class *c;
	char		 name[64];
	uint64_t	 addr, depth;
	unsigned	 i;
	int		 exit_;

	if (pf_describe(x, st, it->sess, it->thread) == -1)
		return -1;
	if (calls_feed(st->calls, it, pf_call, st) == -1)
		return -1;
	if (calls_record(it, &exit_, &addr, &depth))
		return 0;
	if (it->kind == READER_LOST) {
		for (i = 0; i <= READER_NCAUSES; i++) {
			if ((i < READER_NCAUSES && it->causes[i] == 0) ||
			    (i == READER_NCAUSES && it->packets == 0))
				continue;
			snprintf(name, sizeof(name), "lost: %s",
			    i < READER_NCAUSES ? reader_cause_name(i) :
			    "packets");
			pf_packet_begin(st, it->ns);
			pb_uint(&st->msg, PB_TE_TYPE, PB_TYPE_INSTANT);
			pb_uint(&st->msg, PB_TE_TRACK,
			    pf_thread_uuid(it->thread));
			pb_uint(&st->msg, PB_TE_NAME_IID, pf_intern(st,
			    PB_ID_NAMES, name, strlen(name)));
			pb_uint(&st->sub, PB_DA_NAME_IID, pf_intern(st,
			    PB_ID_ANNOTATION_NAMES, "count", 5));
			pb_uint(&st->sub, PB_DA_UINT, i < READER_NCAUSES ?
			    it->causes[i] : it->packets);
			pb_message(&st->msg, PB_TE_ANNOTATIONS, &st->sub);
			pb_message(&st->pkt, PB_PACKET_TRACK_EVENT, &st->msg);
			if (pf_write(x, st) == -1)
				return -1;
		}
		return 0;
	}
	c = it->ev->cls;
	pf_packet_begin(st, it->ns);
	pb_uint(&st->msg, PB_TE_TYPE, PB_TYPE_INSTANT);
	pb_uint(&st->msg, PB_TE_TRACK, pf_thread_uuid(it->thread));
	pb_uint(&st->msg, PB_TE_NAME_IID, pf_intern(st, PB_ID_NAMES, c->event,
	    strlen(c->event)));
	if (c->provider_len > 0)
		pb_uint(&st->msg, PB_TE_CATEGORY_IIDS, pf_intern(st,
		    PB_ID_CATEGORIES, c->name, c->provider_len));
	for (i = 0; i < it->ev->nvalues; i++) {
		pf_annotation(st, c, i, &it->ev->values[i]);
		pb_message(&st->msg, PB_TE_ANNOTATIONS, &st->sub);
	}
	pb_message(&st->pkt, PB_PACKET_TRACK_EVENT, &st->msg);
	return pf_write(x, st);
}

/* A pair: a slice on a lane track of its process. */
static int
pf_pair(struct export *x, const struct pair_match *m)
{
	struct pf_state	*st = x->priv;
	const struct pair_rule *r = &x->pairs->v[m->rule];
	struct pf_lanes	*l;
	char		 name[512];
	unsigned	 lane;
	uint64_t	 uuid, iid;

	if (pf_describe(x, st, m->sess, NULL) == -1)
		return -1;
	l = &st->lanes[m->sess->index * x->pairs->n + m->rule];
	for (lane = 0; lane < l->n && l->end[lane] > m->start_ns; lane++)
		;
	if (lane == PF_LANES_MAX)
		lane = PF_LANES_MAX - 1;
	uuid = pf_process_uuid(m->sess->index) | (uint64_t)1 << 39 |
	    (uint64_t)(m->rule * PF_LANES_MAX + lane + 1);
	if (lane == l->n) {
		l->n++;
		snprintf(name, sizeof(name), "%s #%u", r->label, lane + 1);
		pb_uint(&st->msg, PB_TD_UUID, uuid);
		pb_uint(&st->msg, PB_TD_PARENT,
		    pf_process_uuid(m->sess->index));
		pb_string(st, &st->msg, PB_TD_NAME, name, strlen(name));
		if (pf_track(x, st) == -1)
			return -1;
	}
	if (l->end[lane] < m->end_ns)
		l->end[lane] = m->end_ns;
	iid = pf_intern(st, PB_ID_NAMES, r->label, strlen(r->label));
	pf_packet_begin(st, m->start_ns);
	pb_uint(&st->msg, PB_TE_TYPE, PB_TYPE_SLICE_BEGIN);
	pb_uint(&st->msg, PB_TE_TRACK, uuid);
	pb_uint(&st->msg, PB_TE_NAME_IID, iid);
	pb_message(&st->pkt, PB_PACKET_TRACK_EVENT, &st->msg);
	if (pf_write(x, st) == -1)
		return -1;
	pf_packet_begin(st, m->end_ns);
	pb_uint(&st->msg, PB_TE_TYPE, PB_TYPE_SLICE_END);
	pb_uint(&st->msg, PB_TE_TRACK, uuid);
	pb_message(&st->pkt, PB_PACKET_TRACK_EVENT, &st->msg);
	return pf_write(x, st);
}

static void
pf_free(struct export *x)
{
	struct pf_state	*st = x->priv;

	strbuf_free(&st->pkt);
	strbuf_free(&st->msg);
	strbuf_free(&st->sub);
	strbuf_free(&st->interned);
	strbuf_free(&st->tmp);
	pf_intern_free(&st->names);
	pf_intern_free(&st->cats);
	pf_intern_free(&st->anames);
	free(st->sess_described);
	free(st->thread_described);
	free(st->lanes);
	calls_free(st->calls);
}

const struct export_format export_fmt_perfetto = {
	.name = "perfetto",
	.help = "Perfetto protobuf trace (Perfetto UI, trace_processor)",
	.out_is_dir = 0,
	.priv_size = sizeof(struct pf_state),
	.begin = pf_begin,
	.item = pf_item,
	.pair = pf_pair,
	.end = pf_end,
	.free = pf_free,
};
