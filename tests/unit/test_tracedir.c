/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * Tests of the trace directory reader (ctl/tsdl.c, tracedir.c,
 * tracedir-stream.c, tracedir-io.c).  The traces are real: their
 * metadata comes from the daemon's own ctf_metadata() and their packets
 * from ctf_packet_header() followed by records laid out byte by byte by
 * the rules of proto/ring.h, as a ring holds them.  The reader must give
 * back every event with its values, in order, with the packets' losses;
 * then each hostile case (a truncated packet, a bad magic, sizes that
 * lie, an unknown id, a string without its NUL, time going back,
 * metadata that is not ours) must give an error naming the offset or
 * line, and every prefix and every single-byte corruption of a stream
 * and of a metadata text must end in an error or the end, never in a
 * crash (run under ASan with SANITIZE=1).
 */
#include <sys/stat.h>

#include <errno.h>
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "ctl/tracedir.h"
#include "daemon/ctf.h"
#include "ring.h"
#include "tevents.h"
#include "recbuild.h"

#define T_OFFSET_S	1700000000
#define T_STREAM_MAX	16384

static const uint8_t t_uuid[16] = {
	0x2a, 0x64, 0x22, 0xd0, 0x6c, 0xee, 0x11, 0xe0,
	0x8c, 0x08, 0xcb, 0x07, 0xd7, 0xb3, 0xa5, 0x64,
};
static const uint8_t t_clock_uuid[16] = {
	0x7d, 0x1e, 0x9a, 0x52, 0x6c, 0xee, 0x11, 0xe0,
	0x8c, 0x08, 0xcb, 0x07, 0xd7, 0xb3, 0xa5, 0x65,
};

/* The records of one packet, as the producer lays them out. */
/* A stream file being built. */
struct t_stream {
	uint8_t	 b[T_STREAM_MAX];
	size_t	 len;
};

/* The event classes every test uses. */
struct t_classes {
	struct tevents_event	 mixed, strings, noargs;
	struct ctf_event_class	 c[3];
};

/* Offsets in the stream t_standard() builds. */
struct t_layout {
	size_t	 p2;		/* second packet */
	size_t	 strings;	/* the strings record in packet 1 */
	size_t	 lost;		/* the traced:lost record in packet 2 */
};

static void
t_info(struct ctf_trace_info *info)
{
	memset(info, 0, sizeof(*info));
	memcpy(info->uuid, t_uuid, 16);
	memcpy(info->clock_uuid, t_clock_uuid, 16);
	info->clock_freq = 1000000000;
	info->clock_offset_s = T_OFFSET_S;
	info->clock_name = "monotonic";
	info->hostname = "testhost";
	info->procname = "demo";
	info->pid = 4242;
	info->session = 3;
}

static void
t_event(struct tevents_event *ev, const char *name)
{
	memset(ev, 0, sizeof(*ev));
	ev->name = (char *)name;
}

static void
t_arg(struct tevents_event *ev, const char *name, enum tevents_class cls)
{
	assert_true(ev->nargs < TEVENTS_ARGS_MAX);
	ev->args[ev->nargs].name = (char *)name;
	ev->args[ev->nargs].type = (char *)"";
	ev->args[ev->nargs].cls = cls;
	ev->nargs++;
}

static void
t_classes(struct t_classes *k)
{
	t_event(&k->mixed, "mixed");
	t_arg(&k->mixed, "delta", TEVENTS_SIGNED);
	t_arg(&k->mixed, "count", TEVENTS_UNSIGNED);
	t_arg(&k->mixed, "ptr", TEVENTS_POINTER);
	t_arg(&k->mixed, "ok", TEVENTS_BOOL);
	t_arg(&k->mixed, "msg", TEVENTS_STRING);
	t_arg(&k->mixed, "after", TEVENTS_SIGNED);
	t_event(&k->strings, "strings");
	t_arg(&k->strings, "a", TEVENTS_STRING);
	t_arg(&k->strings, "b", TEVENTS_STRING);
	t_arg(&k->strings, "c", TEVENTS_STRING);
	t_event(&k->noargs, "noargs");
	k->c[0] = (struct ctf_event_class){ 16, "demo", &k->mixed };
	k->c[1] = (struct ctf_event_class){ 17, "demo", &k->strings };
	k->c[2] = (struct ctf_event_class){ 40, "demo", &k->noargs };
}

/* The metadata text of the standard trace (malloc'ed). */
static char *
t_metadata_text(const struct ctf_trace_info *info, size_t *len)
{
	struct t_classes k;
	char		*md;
	long		 n;

	t_classes(&k);
	n = ctf_metadata(info, k.c, 3, &md);
	assert_true(n > 0);
	*len = (size_t)n;
	return md;
}

static struct tracedir_meta *
t_meta_info(const struct ctf_trace_info *info)
{
	struct tracedir_meta *m;
	char		 err[TRACEDIR_ERR_MAX];
	size_t		 len;
	char		*md = t_metadata_text(info, &len);

	if (tracedir_meta_parse(md, len, "metadata", &m, err,
	    sizeof(err)) != 0)
		fail_msg("metadata refused: %s", err);
	free(md);
	return m;
}

static struct tracedir_meta *
t_meta(void)
{
	struct ctf_trace_info info;

	t_info(&info);
	return t_meta_info(&info);
}

/* Append a packet: the daemon's header and context, then the records. */
static void
t_packet(struct t_stream *s, uint32_t tid, uint64_t seq, uint64_t discarded,
    uint64_t begin, uint64_t end, const struct t_recs *r)
{
	struct ctf_packet	 p;

	assert_true(s->len + CTF_PACKET_HDR_SIZE + r->len <= sizeof(s->b));
	memset(&p, 0, sizeof(p));
	p.uuid = t_uuid;
	p.stream_instance_id = tid;
	p.ts_begin = begin;
	p.ts_end = end;
	p.content_bytes = CTF_PACKET_HDR_SIZE + r->len;
	p.seq = seq;
	p.events_discarded = discarded;
	p.tid = tid;
	p.tail_pad = (uint32_t)r->tail_pad;
	ctf_packet_header(s->b + s->len, &p);
	s->len += CTF_PACKET_HDR_SIZE;
	memcpy(s->b + s->len, r->b, r->len);
	s->len += r->len;
}

/*
 * Thread 101: a packet with a mixed record and a strings record (the
 * last field a string, so padding follows it), then one that starts
 * with a traced:lost record, says 5 events discarded and ends with an
 * event without arguments.
 */
static void
t_standard(struct t_stream *s, struct t_layout *lay)
{
	struct t_recs	 r;

	memset(s, 0, sizeof(*s));
	memset(&r, 0, sizeof(r));
	t_rec_begin(&r, 16, 1000);
	t_rec_int(&r, (uint64_t)-42);
	t_rec_int(&r, UINT64_MAX);
	t_rec_int(&r, 0x7ffddeadbeefull);
	t_rec_int(&r, 1);
	t_rec_str(&r, "hello, world");
	t_rec_int(&r, INT64_MAX);
	t_rec_end(&r);
	lay->strings = CTF_PACKET_HDR_SIZE + r.len;
	t_rec_begin(&r, 17, 2000);
	t_rec_str(&r, "first!");
	t_rec_str(&r, "");
	t_rec_str(&r, "");
	t_rec_end(&r);
	assert_int_equal(r.tail_pad, 7);
	t_packet(s, 101, 0, 0, 1000, 2000, &r);
	lay->p2 = s->len;

	memset(&r, 0, sizeof(r));
	t_rec_begin(&r, TRACED_EVENT_LOST, 3000);
	t_rec_int(&r, 5);
	t_rec_int(&r, 3);
	t_rec_int(&r, 0);
	t_rec_int(&r, 0);
	t_rec_int(&r, 2);
	t_rec_end(&r);
	lay->lost = lay->p2 + CTF_PACKET_HDR_SIZE;
	t_rec_begin(&r, 40, 3500);
	t_rec_end(&r);
	t_packet(s, 101, 1, 5, 3000, 4000, &r);
}

static enum tracedir_item
t_next(struct tracedir_stream *st, struct tracedir_event *ev)
{
	enum tracedir_item it = tracedir_stream_next(st, ev);

	if (it == TRACEDIR_ERROR)
		print_message("stream error at %llu: %s\n",
		    (unsigned long long)st->err_off, st->err);
	return it;
}

static void
t_assert_int(const struct tracedir_event *ev, unsigned i, const char *name,
    uint64_t v)
{
	assert_true(i < ev->nvalues);
	assert_string_equal(ev->values[i].decl->shown, name);
	assert_int_equal(ev->values[i].decl->type.kind, TRACEDIR_INT);
	assert_int_equal(ev->values[i].u, v);
}

static void
t_assert_str(const struct tracedir_event *ev, unsigned i, const char *name,
    const char *s)
{
	assert_true(i < ev->nvalues);
	assert_string_equal(ev->values[i].decl->shown, name);
	assert_int_equal(ev->values[i].decl->type.kind, TRACEDIR_STRING);
	assert_int_equal(ev->values[i].len, strlen(s));
	assert_string_equal(ev->values[i].s, s);
}

/* ---- metadata ---------------------------------------------------------- */

static void
test_tracedir_metadata_says_what_the_daemon_wrote(void **state)
{
	struct tracedir_meta	*m;
	const struct tracedir_class *c;

	(void)state;
	m = t_meta();
	assert_memory_equal(m->uuid, t_uuid, 16);
	assert_memory_equal(m->clock_uuid, t_clock_uuid, 16);
	assert_true(m->has_clock_uuid);
	assert_string_equal(m->clock_name, "monotonic");
	assert_int_equal(m->clock_freq, 1000000000);
	assert_int_equal(m->clock_offset_s, T_OFFSET_S);
	assert_int_equal(m->clock_offset, 0);
	assert_string_equal(m->hostname, "testhost");
	assert_string_equal(m->procname, "demo");
	assert_int_equal(m->vpid, 4242);
	assert_int_equal(m->stream_id, 0);
	assert_int_equal(m->nclasses, 5);

	c = tracedir_meta_class(m, TRACED_EVENT_LOST);
	assert_non_null(c);
	assert_string_equal(c->name, "traced:lost");
	assert_true(c->lost);
	assert_int_equal(c->fields.n, 5);
	c = tracedir_meta_class(m, TRACED_EVENT_CRASH);
	assert_non_null(c);
	assert_string_equal(c->name, "traced:crash");
	assert_false(c->lost);
	assert_int_equal(c->fields.n, 5);
	assert_string_equal(c->fields.decls[0].name, "signal");
	assert_true(c->fields.decls[0].type.is_signed);
	assert_int_equal(c->fields.decls[2].type.base, 16);
	c = tracedir_meta_class(m, 16);
	assert_non_null(c);
	assert_string_equal(c->name, "demo:mixed");
	assert_false(c->lost);
	assert_int_equal(c->fields.n, 6);
	assert_string_equal(c->fields.decls[0].name, "delta");
	assert_true(c->fields.decls[0].type.is_signed);
	assert_int_equal(c->fields.decls[0].type.size, 64);
	assert_int_equal(c->fields.decls[0].type.align, 64);
	assert_int_equal(c->fields.decls[2].type.base, 16);
	assert_false(c->fields.decls[2].type.is_signed);
	assert_int_equal(c->fields.decls[4].type.kind, TRACEDIR_STRING);
	c = tracedir_meta_class(m, 40);
	assert_non_null(c);
	assert_string_equal(c->name, "demo:noargs");
	assert_int_equal(c->fields.n, 0);
	assert_null(tracedir_meta_class(m, 17 + 1));
	assert_null(tracedir_meta_class(m, UINT32_MAX));

	assert_int_equal(m->pkt_header.n, 4);
	assert_int_equal(m->pkt_context.n, 7);
	assert_int_equal(m->ev_header.n, 2);
	assert_int_equal(m->ev_header.align, 64);
	tracedir_meta_free(m);
}

/*
 * Every TSDL keyword as an argument name, names that clash once the
 * leading '_' is dropped, quotes in names: the reader shows each field
 * as babeltrace2 does (tests/unit/test_ctf.c checks babeltrace2).
 */
static void
test_tracedir_metadata_hostile_names(void **state)
{
	static const char *const kw[][2] = {	/* argument, as shown */
		{ "string", "string" }, { "int", "int" },
		{ "event", "event" }, { "align", "align" },
		{ "struct", "struct" }, { "enum", "enum" },
		{ "integer", "integer" }, { "typealias", "typealias" },
		{ "variant", "variant" }, { "trace", "trace" },
		{ "_string", "string_1" },
		/* second event */
		{ "stream", "stream" }, { "clock", "clock" },
		{ "_Bool", "_Bool" }, { "traced_u64", "traced_u64" },
		{ "traced_clock", "traced_clock" }, { "a", "a" },
		{ "_a", "a_1" }, { "1x", "1x" }, { "id", "id" },
		{ "timestamp", "timestamp" }, { "TRUE", "TRUE" },
	};
	struct ctf_trace_info	 info;
	struct ctf_event_class	 c[3];
	struct tevents_event	 big[2], empty;
	struct tracedir_meta	*m;
	const struct tracedir_class *k;
	char			*md, err[TRACEDIR_ERR_MAX];
	long			 len;
	size_t			 i, n = sizeof(kw) / sizeof(kw[0]);

	(void)state;
	t_info(&info);
	info.procname = "p\"q\\r\n";
	t_event(&big[0], "big");
	t_event(&big[1], "big2");
	t_event(&empty, "e\"v\\");
	/* At most TEVENTS_ARGS_MAX arguments an event. */
	for (i = 0; i < n; i++)
		t_arg(&big[i / TEVENTS_ARGS_MAX], kw[i][0], i % 3 == 0 ?
		    TEVENTS_STRING : TEVENTS_SIGNED);
	c[0] = (struct ctf_event_class){ 16, "prov", &big[0] };
	c[1] = (struct ctf_event_class){ 17, "prov", &big[1] };
	c[2] = (struct ctf_event_class){ 1000000, "pr\"ov", &empty };
	len = ctf_metadata(&info, c, 3, &md);
	assert_true(len > 0);
	if (tracedir_meta_parse(md, (size_t)len, "metadata", &m, err,
	    sizeof(err)) != 0)
		fail_msg("%s", err);
	free(md);
	assert_string_equal(m->procname, "p\"q\\r\n");
	for (i = 0; i < n; i++) {
		k = tracedir_meta_class(m, 16 + (uint32_t)(i / TEVENTS_ARGS_MAX));
		assert_non_null(k);
		assert_int_equal(k->fields.n, big[i / TEVENTS_ARGS_MAX].nargs);
		assert_string_equal(k->fields.decls[i % TEVENTS_ARGS_MAX].shown,
		    kw[i][1]);
	}
	k = tracedir_meta_class(m, 1000000);
	assert_non_null(k);
	assert_string_equal(k->name, "pr\"ov:e\"v\\");
	tracedir_meta_free(m);
}

/* The line of the first 'marker' in s. */
static unsigned
t_line_of(const char *s, const char *marker)
{
	const char	*p = strstr(s, marker);
	unsigned	 line = 1;

	assert_non_null(p);
	for (; s < p; s++)
		if (*s == '\n')
			line++;
	return line;
}

/*
 * Replace the first 'from' in the standard metadata by 'to', parse it,
 * and expect "metadata:LINE: ...what..." with LINE the line of 'at' in
 * the changed text (or 'line' when 'at' is NULL).
 */
static void
t_bad_metadata(const char *from, const char *to, const char *at,
    unsigned line, const char *what)
{
	struct ctf_trace_info	 info;
	struct tracedir_meta	*m = (struct tracedir_meta *)1;
	char			*md, *bad, *p, err[TRACEDIR_ERR_MAX], want[64];
	size_t			 len;

	t_info(&info);
	md = t_metadata_text(&info, &len);
	if ((p = strstr(md, from)) == NULL)
		fail_msg("no '%s' in the metadata", from);
	bad = malloc(len + strlen(to) + 1);
	assert_non_null(bad);
	memcpy(bad, md, (size_t)(p - md));
	strcpy(bad + (p - md), to);
	strcat(bad, p + strlen(from));
	if (at != NULL)
		line = t_line_of(bad, at);
	err[0] = '\0';
	assert_int_equal(tracedir_meta_parse(bad, strlen(bad), "metadata", &m,
	    err, sizeof(err)), -1);
	assert_null(m);
	snprintf(want, sizeof(want), "metadata:%u: ", line);
	if (strncmp(err, want, strlen(want)) != 0 || strstr(err, what) == NULL)
		fail_msg("'%s' -> '%s': got \"%s\", want \"%s...%s\"", from, to,
		    err, want, what);
	free(bad);
	free(md);
}

static void
test_tracedir_metadata_errors_name_the_line(void **state)
{
	(void)state;
	t_bad_metadata("/* CTF 1.8 */", "/* CTF 1.9 */", NULL, 1,
	    "signature");
	t_bad_metadata("byte_order = le;", "byte_order = be;", "byte_order",
	    0, "byte_order: only le");
	t_bad_metadata("freq = 1000000000;", "freq = 1000000000;\n\tfoo = 1;",
	    "foo", 0, "unknown clock attribute 'foo'");
	t_bad_metadata("size = 32; align = 32;", "size = 12; align = 32;",
	    "size = 12", 0, "integer size");
	t_bad_metadata("traced_s64 delta;", "enum delta;", "enum delta", 0,
	    "enum types are not supported");
	t_bad_metadata("traced_s64 delta;", "traced_s65 delta;", "traced_s65",
	    0, "unknown type 'traced_s65'");
	t_bad_metadata("id = 17;", "id = 16;", "event {\n\tname = "
	    "\"demo:strings\"", 0, "event id 16 already declared on line");
	t_bad_metadata("traced_u64 packet_size;", "traced_u64 packet_sizes;",
	    "stream {", 0, "packet.context has no field 'packet_size'");
	t_bad_metadata("traced_clock timestamp;", "traced_u64 timestamp;",
	    "stream {", 0, "event.header: field 'timestamp' has the wrong "
	    "type");
	t_bad_metadata("traced_u32 magic;", "traced_u64 magic;", "trace {",
	    0, "magic must be 32 bits");
	t_bad_metadata("traced_u8 uuid[16];", "traced_u8 uuid[15];",
	    "trace {", 0, "'uuid' of 16 bytes");
	t_bad_metadata("name = \"traced:lost\";\n\tid = 0;",
	    "name = \"traced:lost\";\n\tid = 1;", "event {", 0,
	    "traced:lost must be id 0 with the uint64 fields count, "
	    "ring_full, nested, disconnected, paused");
	t_bad_metadata("traced_u64 paused;", "traced_u64 pause;", "event {", 0,
	    "traced:lost must be id 0 with the uint64 fields count, "
	    "ring_full, nested, disconnected, paused");
	t_bad_metadata("name = \"traced:crash\";\n\tid = 3;",
	    "name = \"traced:crash\";\n\tid = 4;",
	    "event {\n\tname = \"traced:crash\"", 0,
	    "traced:crash must be id 3 with the 64-bit fields signal, code, "
	    "addr, ip, sender (addr and ip unsigned)");
	t_bad_metadata("traced_s64 signal;", "traced_u64 signal;",
	    "event {\n\tname = \"traced:crash\"", 0,
	    "traced:crash must be id 3");
	t_bad_metadata("hostname = \"testhost\";", "hostname = \"testhost;",
	    "hostname", 0, "string not closed");
	t_bad_metadata("vpid = 4242;", "vpid = 99999999999999999999;",
	    "vpid", 0, "number too large");
	t_bad_metadata("map = clock.monotonic.value;",
	    "map = clock.other.value;", "clock.other", 0,
	    "map: expected clock.monotonic.value");
	t_bad_metadata("absolute = FALSE;", "absolute = MAYBE;", "MAYBE", 0,
	    "expected true or false");
	t_bad_metadata("/* CTF 1.8 */\n", "/* CTF 1.8 */\n/* open", "/* open",
	    0, "comment not closed");
	t_bad_metadata("/* CTF 1.8 */\n", "/* CTF 1.8 */\ncallsite { };",
	    "callsite", 0, "'callsite' is not supported at the top level");
	t_bad_metadata("/* CTF 1.8 */\n", "/* CTF 1.8 */\n"
	    "typealias integer { size = 8; } := traced_u8;\n",
	    "align = 8; signed = false; } := traced_u8", 0,
	    "declared twice");
	t_bad_metadata("clock {", "clock { name = x; };\nclock {",
	    "clock {\n\tname = \"mono", 0, "second clock block");
	t_bad_metadata("stream {\n\tid = 0;", "stream {\n\tid = 0;\n\t"
	    "event.context := struct { traced_u32 x; };", "event.context", 0,
	    "unknown or unsupported declaration 'event.context'");
	t_bad_metadata("tid;\n\t};", "tid;\n\t} align(8);", "align(8)", 0,
	    "expected ';'");
	t_bad_metadata("stream_id = 0;\n\tfields := struct {\n\t\ttraced_s64",
	    "stream_id = 1;\n\tfields := struct {\n\t\ttraced_s64",
	    "stream_id = 1", 0, "stream_id 1: no such stream");
	t_bad_metadata("offset_s = 1700000000;",
	    "offset_s = 9223372036854775807;", "clock {", 0,
	    "offset_s out of range");
	t_bad_metadata("offset = 0;", "offset = 18446744073709551615;",
	    "clock {", 0, "out of range");
}

/* A NUL byte or a stray byte is named with its line. */
static void
test_tracedir_metadata_refuses_odd_bytes(void **state)
{
	struct ctf_trace_info	 info;
	struct tracedir_meta	*m;
	char			*md, err[TRACEDIR_ERR_MAX];
	size_t			 len;
	unsigned		 line;

	(void)state;
	t_info(&info);
	md = t_metadata_text(&info, &len);
	line = t_line_of(md, "vpid");
	md[strstr(md, "vpid") - md + 2] = '\0';
	assert_int_equal(tracedir_meta_parse(md, len, "md", &m, err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, "unexpected byte 0x00"));
	assert_int_equal(strtoul(err + 3, NULL, 10), line);
	free(md);

	md = t_metadata_text(&info, &len);
	md[strstr(md, "vpid") - md] = '@';
	assert_int_equal(tracedir_meta_parse(md, len, "md", &m, err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, "unexpected character '@'"));
	free(md);

	assert_int_equal(tracedir_meta_parse("\x57\x1d\xd1\x75", 4, "md", &m,
	    err, sizeof(err)), -1);
	assert_non_null(strstr(err, "packetized metadata"));
	assert_int_equal(tracedir_meta_parse("", 0, "md", &m, err,
	    sizeof(err)), -1);
	assert_string_equal(err, "md:1: no \"/* CTF 1.8 */\" signature at "
	    "the start: not CTF 1.8 metadata");
	assert_int_equal(tracedir_meta_parse("/* CTF 1.8 */", 13, "md", &m,
	    err, sizeof(err)), -1);
	assert_string_equal(err, "md:1: no trace block");
}

/* Every prefix of a good text but the whole one is refused, cleanly. */
static void
test_tracedir_metadata_every_prefix_fails(void **state)
{
	struct ctf_trace_info	 info;
	struct tracedir_meta	*m;
	char			*md, *copy, err[TRACEDIR_ERR_MAX];
	size_t			 len, n, ok = 0;

	(void)state;
	t_info(&info);
	md = t_metadata_text(&info, &len);
	for (n = 0; n <= len; n++) {
		/* A copy of exactly n bytes, so ASan sees any over-read. */
		copy = malloc(n != 0 ? n : 1);
		assert_non_null(copy);
		memcpy(copy, md, n);
		if (tracedir_meta_parse(copy, n, "md", &m, err,
		    sizeof(err)) == 0) {
			ok++;
			tracedir_meta_free(m);
			/* Only once the stream block is there (then the
			 * text may end after any event). */
			assert_true(n > (size_t)(strstr(md, "event.header") -
			    md));
		} else
			assert_true(strncmp(err, "md:", 3) == 0);
		free(copy);
	}
	assert_true(ok >= 1);
	free(md);
}

/* Every byte of the text changed in turn: parsed or refused, no crash. */
static void
test_tracedir_metadata_every_byte_changed(void **state)
{
	static const char subst[] = { '\0', '}', ';', '"', '9', 'x', '/',
	    '\n' };
	struct ctf_trace_info	 info;
	struct tracedir_meta	*m;
	char			*md, err[TRACEDIR_ERR_MAX], saved;
	size_t			 len, i, j;

	(void)state;
	t_info(&info);
	md = t_metadata_text(&info, &len);
	for (i = 0; i < len; i++) {
		saved = md[i];
		for (j = 0; j < sizeof(subst); j++) {
			md[i] = subst[j];
			if (tracedir_meta_parse(md, len, "md", &m, err,
			    sizeof(err)) == 0)
				tracedir_meta_free(m);
		}
		md[i] = saved;
	}
	free(md);
}

/* ---- streams ----------------------------------------------------------- */

static void
test_tracedir_reads_events_back_in_order(void **state)
{
	struct tracedir_meta	*m;
	struct tracedir_stream	 st;
	struct tracedir_event	 ev;
	struct t_stream		*s = malloc(sizeof(*s));
	struct t_layout		 lay;

	(void)state;
	assert_non_null(s);
	m = t_meta();
	t_standard(s, &lay);
	tracedir_stream_init(&st, m, s->b, s->len);

	assert_int_equal(t_next(&st, &ev), TRACEDIR_PACKET);
	assert_int_equal(st.packet.off, 0);
	assert_int_equal(st.packet.size, lay.p2);
	assert_int_equal(st.packet.content, lay.p2 - 7);
	assert_int_equal(st.packet.ts_begin, 1000);
	assert_int_equal(st.packet.ts_end, 2000);
	assert_int_equal(st.packet.seq, 0);
	assert_int_equal(st.packet.discarded, 0);
	assert_int_equal(st.packet.discarded_new, 0);
	assert_int_equal(st.packet.seq_gap, 0);
	assert_int_equal(st.packet.tid, 101);
	assert_int_equal(st.packet.instance, 101);

	assert_int_equal(t_next(&st, &ev), TRACEDIR_EVENT);
	assert_string_equal(ev.cls->name, "demo:mixed");
	assert_int_equal(ev.off, CTF_PACKET_HDR_SIZE);
	assert_int_equal(ev.ts, 1000);
	assert_int_equal(ev.nvalues, 6);
	t_assert_int(&ev, 0, "delta", (uint64_t)-42);
	t_assert_int(&ev, 1, "count", UINT64_MAX);
	t_assert_int(&ev, 2, "ptr", 0x7ffddeadbeefull);
	t_assert_int(&ev, 3, "ok", 1);
	t_assert_str(&ev, 4, "msg", "hello, world");
	t_assert_int(&ev, 5, "after", INT64_MAX);

	assert_int_equal(t_next(&st, &ev), TRACEDIR_EVENT);
	assert_string_equal(ev.cls->name, "demo:strings");
	assert_int_equal(ev.off, lay.strings);
	assert_int_equal(ev.ts, 2000);
	t_assert_str(&ev, 0, "a", "first!");
	t_assert_str(&ev, 1, "b", "");
	t_assert_str(&ev, 2, "c", "");

	assert_int_equal(t_next(&st, &ev), TRACEDIR_PACKET);
	assert_int_equal(st.packet.off, lay.p2);
	assert_int_equal(st.packet.seq, 1);
	assert_int_equal(st.packet.discarded, 5);
	assert_int_equal(st.packet.discarded_new, 5);
	assert_int_equal(st.packet.prev_end, 2000);
	assert_int_equal(st.packet.ts_end, 4000);

	assert_int_equal(t_next(&st, &ev), TRACEDIR_EVENT);
	assert_string_equal(ev.cls->name, "traced:lost");
	assert_true(ev.cls->lost);
	assert_int_equal(ev.off, lay.lost);
	assert_int_equal(ev.ts, 3000);
	t_assert_int(&ev, 0, "count", 5);
	t_assert_int(&ev, 1, "ring_full", 3);
	t_assert_int(&ev, 2, "nested", 0);
	t_assert_int(&ev, 3, "disconnected", 0);
	t_assert_int(&ev, 4, "paused", 2);

	assert_int_equal(t_next(&st, &ev), TRACEDIR_EVENT);
	assert_string_equal(ev.cls->name, "demo:noargs");
	assert_int_equal(ev.ts, 3500);
	assert_int_equal(ev.nvalues, 0);

	assert_int_equal(t_next(&st, &ev), TRACEDIR_END);
	assert_int_equal(t_next(&st, &ev), TRACEDIR_END);
	assert_int_equal(st.npackets, 2);
	assert_int_equal(st.nevents, 4);
	tracedir_meta_free(m);
	free(s);
}

/* An empty file, and the empty packets a flush or a loss writes. */
static void
test_tracedir_empty_stream_and_packets(void **state)
{
	struct tracedir_meta	*m;
	struct tracedir_stream	 st;
	struct tracedir_event	 ev;
	struct t_stream		*s = calloc(1, sizeof(*s));
	struct t_recs		 r;

	(void)state;
	assert_non_null(s);
	m = t_meta();
	tracedir_stream_init(&st, m, NULL, 0);
	assert_int_equal(t_next(&st, &ev), TRACEDIR_END);

	memset(&r, 0, sizeof(r));
	t_packet(s, 7, 0, 0, 50, 50, &r);
	t_packet(s, 7, 1, 3, 50, 60, &r);
	t_rec_begin(&r, 40, 70);
	t_rec_end(&r);
	t_packet(s, 7, 3, 3, 70, 70, &r);	/* seq 2 is missing */
	tracedir_stream_init(&st, m, s->b, s->len);
	assert_int_equal(t_next(&st, &ev), TRACEDIR_PACKET);
	assert_int_equal(st.packet.content, CTF_PACKET_CONTEXT_END);
	assert_int_equal(st.packet.size, CTF_PACKET_HDR_SIZE);
	assert_int_equal(t_next(&st, &ev), TRACEDIR_PACKET);
	assert_int_equal(st.packet.discarded_new, 3);
	assert_int_equal(st.packet.prev_end, 50);
	assert_int_equal(t_next(&st, &ev), TRACEDIR_PACKET);
	assert_int_equal(st.packet.discarded_new, 0);
	assert_int_equal(st.packet.seq_gap, 1);
	assert_int_equal(t_next(&st, &ev), TRACEDIR_EVENT);
	assert_int_equal(ev.ts, 70);
	assert_int_equal(t_next(&st, &ev), TRACEDIR_END);
	tracedir_meta_free(m);
	free(s);
}

/*
 * Walk the standard stream changed by 'edit' (at 'at', n bytes of
 * value v; n 0: cut the stream to 'at' bytes) and expect an error with
 * 'what' in it at offset 'off'.
 */
static void
t_bad_stream(size_t at, int n, uint64_t v, const char *what,
    uint64_t off)
{
	struct tracedir_meta	*m;
	struct tracedir_stream	 st;
	struct tracedir_event	 ev;
	struct t_stream		*s = malloc(sizeof(*s));
	struct t_layout		 lay;
	enum tracedir_item	 it;
	uint8_t			*copy;
	size_t			 len, items = 0;

	assert_non_null(s);
	m = t_meta();
	t_standard(s, &lay);
	len = s->len;
	if (n == 0)
		len = at;
	else
		t_put(s->b + at, v, n);
	/* Exactly len bytes, so that ASan catches a read past them. */
	copy = malloc(len != 0 ? len : 1);
	assert_non_null(copy);
	memcpy(copy, s->b, len);
	tracedir_stream_init(&st, m, copy, len);
	while ((it = tracedir_stream_next(&st, &ev)) > TRACEDIR_END)
		assert_true(++items <= len);
	if (it != TRACEDIR_ERROR)
		fail_msg("no error, want \"%s\" at %llu", what,
		    (unsigned long long)off);
	if (strstr(st.err, what) == NULL || st.err_off != off)
		fail_msg("got \"%s\" at %llu, want \"%s\" at %llu", st.err,
		    (unsigned long long)st.err_off, what,
		    (unsigned long long)off);
	assert_int_equal(tracedir_stream_next(&st, &ev), TRACEDIR_ERROR);
	free(copy);
	free(s);
	tracedir_meta_free(m);
}

static void
test_tracedir_hostile_streams_give_offsets(void **state)
{
	struct t_stream	*s = malloc(sizeof(*s));
	struct t_layout	 lay;
	size_t		 p2, size1, size2;

	(void)state;
	assert_non_null(s);
	t_standard(s, &lay);
	p2 = lay.p2;
	size1 = p2;
	size2 = s->len - p2;
	free(s);

	/* Truncated: in the last packet, in its context, in its header. */
	t_bad_stream(p2 + size2 - 1, 0, 0, "runs past the end of the file "
	    "(159 bytes left): truncated packet", p2 + 56);
	t_bad_stream(p2 + 50, 0, 0, "packet context: field 'content_size' "
	    "runs past the end of the file", p2 + 48);
	t_bad_stream(p2 + 10, 0, 0, "packet header: field 'uuid' runs past",
	    p2 + 4);
	/* Header fields. */
	t_bad_stream(p2, 4, 0x12345678, "bad packet magic 0x12345678", p2);
	t_bad_stream(4, 1, 0x2b, "packet uuid 2b6422d0-", 4);
	t_bad_stream(20, 4, 1, "unknown stream_id 1", 20);
	/* Sizes that lie. */
	t_bad_stream(48, 8, (size1 + 8) * 8, "is more than packet_size", 48);
	t_bad_stream(56, 8, size1 * 8 + 1, "packet_size 1537 bits is not a "
	    "whole number of bytes", 56);
	t_bad_stream(48, 8, 80 * 8, "ends inside the packet header and "
	    "context (84 bytes)", 48);
	t_bad_stream(56, 8, (size1 + size2 + 8) * 8, "runs past the end of "
	    "the file", 56);
	/* Content left after the last event, too short for another. */
	t_bad_stream(48, 8, (size1 - 3) * 8, "event header runs past the end "
	    "of the packet content", size1 - 7);
	/* Events. */
	t_bad_stream(CTF_PACKET_HDR_SIZE, 4, 99, "unknown event id 99",
	    CTF_PACKET_HDR_SIZE);
	t_bad_stream(lay.strings + 24, 1, 'x', "string 'c' has no NUL before "
	    "the end of the packet content", lay.strings + 24);
	t_bad_stream(CTF_PACKET_HDR_SIZE + 8, 8, 999, "event timestamp 999 is "
	    "outside its packet's [1000, 2000]", CTF_PACKET_HDR_SIZE + 8);
	t_bad_stream(CTF_PACKET_HDR_SIZE + 8, 8, 2001, "outside",
	    CTF_PACKET_HDR_SIZE + 8);
	t_bad_stream(lay.lost + 16, 8, 6, "traced:lost: count 6 is not the "
	    "sum of its causes", lay.lost);
	/* Packets against each other. */
	t_bad_stream(p2 + 32, 8, 1999, "timestamp_begin 1999 is before the "
	    "previous packet's timestamp_end 2000", p2 + 32);
	t_bad_stream(32, 8, 2001, "timestamp_begin 2001 is after "
	    "timestamp_end 2000", 32);
	t_bad_stream(72, 8, 7, "events_discarded went down from 7 to 5",
	    p2 + 72);
	t_bad_stream(p2 + 64, 8, 0, "packet_seq_num 0 after 0", p2 + 64);
}

/* An event older than the one before it in the same packet. */
static void
test_tracedir_time_going_back_is_an_error(void **state)
{
	struct tracedir_meta	*m;
	struct tracedir_stream	 st;
	struct tracedir_event	 ev;
	struct t_stream		*s = calloc(1, sizeof(*s));
	struct t_recs		 r;

	(void)state;
	assert_non_null(s);
	m = t_meta();
	memset(&r, 0, sizeof(r));
	t_rec_begin(&r, 40, 20);
	t_rec_end(&r);
	t_rec_begin(&r, 40, 20);		/* equal: fine */
	t_rec_end(&r);
	t_rec_begin(&r, 40, 19);
	t_rec_end(&r);
	t_packet(s, 7, 0, 0, 10, 30, &r);
	tracedir_stream_init(&st, m, s->b, s->len);
	assert_int_equal(t_next(&st, &ev), TRACEDIR_PACKET);
	assert_int_equal(t_next(&st, &ev), TRACEDIR_EVENT);
	assert_int_equal(t_next(&st, &ev), TRACEDIR_EVENT);
	assert_int_equal(tracedir_stream_next(&st, &ev), TRACEDIR_ERROR);
	assert_string_equal(st.err, "event timestamp 19 goes back (the "
	    "previous event's is 20)");
	assert_int_equal(st.err_off, CTF_PACKET_HDR_SIZE + 32 + 8);
	tracedir_meta_free(m);
	free(s);
}

/*
 * Every prefix of the stream: the end exactly at packet boundaries, an
 * error anywhere else, and never more items than bytes.
 */
static void
test_tracedir_every_prefix_ends_or_fails(void **state)
{
	struct tracedir_meta	*m;
	struct tracedir_stream	 st;
	struct tracedir_event	 ev;
	struct t_stream		*s = malloc(sizeof(*s));
	struct t_layout		 lay;
	enum tracedir_item	 it;
	uint8_t			*copy;
	size_t			 n, items;

	(void)state;
	assert_non_null(s);
	m = t_meta();
	t_standard(s, &lay);
	for (n = 0; n <= s->len; n++) {
		copy = malloc(n != 0 ? n : 1);
		assert_non_null(copy);
		memcpy(copy, s->b, n);
		tracedir_stream_init(&st, m, copy, n);
		items = 0;
		while ((it = tracedir_stream_next(&st, &ev)) > TRACEDIR_END)
			assert_true(++items <= n);
		if (n == 0 || n == lay.p2 || n == s->len)
			assert_int_equal(it, TRACEDIR_END);
		else
			assert_int_equal(it, TRACEDIR_ERROR);
		free(copy);
	}
	tracedir_meta_free(m);
	free(s);
}

/* Every byte changed to each of a few values: no crash, bounded. */
static void
test_tracedir_every_byte_changed(void **state)
{
	static const uint8_t subst[] = { 0x00, 0xff, 0x01, 0x80, 0x7f, 0x10 };
	struct tracedir_meta	*m;
	struct tracedir_stream	 st;
	struct tracedir_event	 ev;
	struct t_stream		*s = malloc(sizeof(*s));
	struct t_layout		 lay;
	uint8_t			*copy, saved;
	size_t			 i, j, items;

	(void)state;
	assert_non_null(s);
	m = t_meta();
	t_standard(s, &lay);
	copy = malloc(s->len);
	assert_non_null(copy);
	for (i = 0; i < s->len; i++) {
		saved = s->b[i];
		for (j = 0; j < sizeof(subst); j++) {
			s->b[i] = subst[j];
			memcpy(copy, s->b, s->len);
			tracedir_stream_init(&st, m, copy, s->len);
			items = 0;
			while (tracedir_stream_next(&st, &ev) > TRACEDIR_END)
				assert_true(++items <= s->len);
		}
		s->b[i] = saved;
	}
	free(copy);
	tracedir_meta_free(m);
	free(s);
}

/* ---- time -------------------------------------------------------------- */

static void
test_tracedir_ns_matches_babeltrace(void **state)
{
	struct ctf_trace_info	 info;
	struct tracedir_meta	*m;

	(void)state;
	m = t_meta();
	assert_int_equal(tracedir_ns(m, 0), (int64_t)T_OFFSET_S * 1000000000);
	assert_int_equal(tracedir_ns(m, 1500),
	    (int64_t)T_OFFSET_S * 1000000000 + 1500);
	assert_int_equal(tracedir_ns(m, UINT64_MAX), INT64_MAX);
	tracedir_meta_free(m);

	/* A TSC clock: babeltrace2 2.0.4 printed 1795433061.424226340 for
	 * these numbers, from a real trace. */
	t_info(&info);
	info.clock_name = "tsc";
	info.clock_freq = 2096037995;
	info.clock_offset_s = 1795160849;
	info.clock_offset = 1067060854;
	m = t_meta_info(&info);
	assert_int_equal(tracedir_ns(m, 570566516828616ull),
	    1795433061424226340ll);
	tracedir_meta_free(m);

	/* An offset of more than a second is normalized; negative offsets
	 * give times before the Epoch. */
	t_info(&info);
	info.clock_freq = 1000;
	info.clock_offset_s = -5;
	info.clock_offset = 2500;
	m = t_meta_info(&info);
	assert_int_equal(m->clock_offset_s, -3);
	assert_int_equal(m->clock_offset, 500);
	assert_int_equal(tracedir_ns(m, 1), -3000000000ll + 500000000 +
	    1000000);
	tracedir_meta_free(m);
}

/* ---- directories ------------------------------------------------------- */

struct t_errs {
	char	 msgs[8][512];
	int	 n;
};

static void
t_err_cb(void *arg, const char *msg)
{
	struct t_errs *e = arg;

	if (e->n < 8)
		snprintf(e->msgs[e->n], sizeof(e->msgs[0]), "%s", msg);
	e->n++;
}

static void
t_write(const char *dir, const char *name, const void *data, size_t len)
{
	char	 path[512];
	FILE	*f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	assert_non_null(f = fopen(path, "w"));
	if (len > 0)
		assert_int_equal(fwrite(data, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

static int
t_rm(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void
test_tracedir_load_finds_sessions_and_streams(void **state)
{
	struct ctf_trace_info	 info;
	struct tracedir_set	 set;
	struct t_errs		 e;
	struct t_stream		*s = malloc(sizeof(*s));
	struct t_layout		 lay;
	char			 base[64], traces[128], a[160], b[160], c[160];
	char			 path[256], err[TRACEDIR_ERR_MAX];
	const char		*tmp = getenv("TMPDIR");
	uint8_t			*data;
	char			*md;
	size_t			 mdlen, len;

	(void)state;
	assert_non_null(s);
	snprintf(base, sizeof(base), "%s/test_tracedir.XXXXXX",
	    tmp != NULL && strlen(tmp) < 32 ? tmp : "/tmp");
	assert_non_null(mkdtemp(base));
	snprintf(traces, sizeof(traces), "%s/traces", base);
	snprintf(a, sizeof(a), "%s/a-1-1", traces);
	snprintf(b, sizeof(b), "%s/b-2-2", traces);
	snprintf(c, sizeof(c), "%s/c-3-3", traces);
	assert_int_equal(mkdir(traces, 0700), 0);
	assert_int_equal(mkdir(a, 0700), 0);
	assert_int_equal(mkdir(b, 0700), 0);
	assert_int_equal(mkdir(c, 0700), 0);
	snprintf(path, sizeof(path), "%s/index", a);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/empty", base);
	assert_int_equal(mkdir(path, 0700), 0);

	t_info(&info);
	md = t_metadata_text(&info, &mdlen);
	t_standard(s, &lay);
	t_write(a, "metadata", md, mdlen);
	t_write(a, "stream-9", s->b, s->len);
	t_write(a, "stream-10", s->b, lay.p2);
	t_write(a, ".hidden", "junk", 4);
	t_write(b, "metadata", "/* CTF 1.8 */\nwhat;\n", 20);
	t_write(b, "stream-5", s->b, s->len);
	t_write(c, "metadata", md, mdlen);
	t_write(c, "stream-7", "", 0);
	t_write(traces, "notes.txt", "hello", 5);

	memset(&set, 0, sizeof(set));
	memset(&e, 0, sizeof(e));
	snprintf(path, sizeof(path), "%s/", traces);
	assert_int_equal(tracedir_load(&set, path, t_err_cb, &e), 1);
	assert_int_equal(e.n, 1);
	assert_non_null(strstr(e.msgs[0], "what"));
	assert_non_null(strstr(e.msgs[0], "b-2-2/metadata:2: "));
	assert_int_equal(set.nsessions, 3);
	assert_int_equal(set.nfiles, 3);
	assert_string_equal(set.sessions[0].name, "a-1-1");
	assert_string_equal(set.sessions[0].path, a);
	assert_non_null(set.sessions[0].meta);
	assert_int_equal(set.sessions[0].nfiles, 2);
	assert_string_equal(set.sessions[0].files[0].name, "stream-10");
	assert_int_equal(set.sessions[0].files[0].len, lay.p2);
	assert_string_equal(set.sessions[0].files[1].name, "stream-9");
	assert_int_equal(set.sessions[0].files[1].len, s->len);
	assert_string_equal(set.sessions[1].name, "b-2-2");
	assert_null(set.sessions[1].meta);
	assert_int_equal(set.sessions[1].nfiles, 0);
	assert_string_equal(set.sessions[2].name, "c-3-3");
	assert_int_equal(set.sessions[2].nfiles, 1);
	assert_int_equal(set.sessions[2].files[0].len, 0);

	/* A session directory itself; then more into the same set. */
	assert_int_equal(tracedir_load(&set, c, t_err_cb, &e), 0);
	assert_int_equal(set.nsessions, 4);
	assert_string_equal(set.sessions[3].name, "c-3-3");
	tracedir_set_free(&set);

	memset(&e, 0, sizeof(e));
	snprintf(path, sizeof(path), "%s/empty", base);
	assert_int_equal(tracedir_load(&set, path, t_err_cb, &e), 1);
	assert_non_null(strstr(e.msgs[0], "no trace here"));
	snprintf(path, sizeof(path), "%s/nowhere", base);
	assert_int_equal(tracedir_load(&set, path, t_err_cb, &e), 1);
	assert_non_null(strstr(e.msgs[1], strerror(ENOENT)));
	snprintf(path, sizeof(path), "%s/notes.txt", traces);
	assert_int_equal(tracedir_load(&set, path, t_err_cb, &e), 1);
	assert_non_null(strstr(e.msgs[2], "not a directory"));
	assert_int_equal(set.nsessions, 0);
	tracedir_set_free(&set);

	/* Sizes are checked before anything is read. */
	snprintf(path, sizeof(path), "%s/stream-9", a);
	assert_int_equal(tracedir_read_file(path, 100, &data, &len, err,
	    sizeof(err)), -1);
	assert_null(data);
	assert_non_null(strstr(err, "larger than the 100 bytes"));
	assert_int_equal(tracedir_read_file(a, 100, &data, &len, err,
	    sizeof(err)), -1);
	assert_string_equal(err, "not a regular file");

	free(md);
	free(s);
	assert_int_equal(nftw(base, t_rm, 8, FTW_DEPTH | FTW_PHYS), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(
		    test_tracedir_metadata_says_what_the_daemon_wrote),
		cmocka_unit_test(test_tracedir_metadata_hostile_names),
		cmocka_unit_test(test_tracedir_metadata_errors_name_the_line),
		cmocka_unit_test(test_tracedir_metadata_refuses_odd_bytes),
		cmocka_unit_test(test_tracedir_metadata_every_prefix_fails),
		cmocka_unit_test(test_tracedir_metadata_every_byte_changed),
		cmocka_unit_test(test_tracedir_reads_events_back_in_order),
		cmocka_unit_test(test_tracedir_empty_stream_and_packets),
		cmocka_unit_test(test_tracedir_hostile_streams_give_offsets),
		cmocka_unit_test(test_tracedir_time_going_back_is_an_error),
		cmocka_unit_test(test_tracedir_every_prefix_ends_or_fails),
		cmocka_unit_test(test_tracedir_every_byte_changed),
		cmocka_unit_test(test_tracedir_ns_matches_babeltrace),
		cmocka_unit_test(test_tracedir_load_finds_sessions_and_streams),
	};

	return cmocka_run_group_tests_name("tracedir", tests, NULL, NULL);
}
