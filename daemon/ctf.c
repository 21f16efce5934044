/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * The CTF 1.8 writer: the TSDL metadata of a session and the 88 bytes of
 * packet header and context put in front of every drained span.  The
 * metadata describes the ring's record layout (proto/ring.h) as it is,
 * so the daemon copies spans to the stream files without converting a
 * byte: integers are declared with align = size, so a reader skips the 4
 * bytes after the event id and the padding after strings by itself, and
 * the packet header and context add up to 84 bytes, which the 64-bit
 * alignment of the first event header rounds up to 88.  The padding
 * at the end of a packet is the one a reader does not skip: babeltrace2
 * 2.0.4 takes any content left after an event for the start of another,
 * so content_size stops where the last event's last field does (at 84
 * in a packet without events) and only packet_size covers the rest.
 *
 * Names come from processes, so none of them reaches the TSDL text
 * unchecked: field names are rewritten into identifiers that are neither
 * TSDL keywords nor our own type names, and made distinct as babeltrace2
 * sees them (it drops one leading '_' from a field name and aborts on a
 * duplicate); every other string is quoted with escapes.
 *
 * Pure formatting: no I/O, no logging, no global state; callable from
 * any thread.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cause.h"
#include "ctf.h"
#include "ring.h"
#include "tevents.h"

#ifndef TRACED_VERSION
#define TRACED_VERSION	"0.0.0"
#endif

_Static_assert(CTF_PACKET_CONTEXT_END + 4 == CTF_PACKET_HDR_SIZE,
    "the first event header is the next 64-bit boundary");

/* The built-in traced:lost event spells out these four causes. */
_Static_assert(TRACED_DROP_PRODUCER_NCAUSES == 4,
    "traced:lost fields must follow enum traced_drop_cause");
_Static_assert(sizeof(struct traced_lost) == 5 * sizeof(uint64_t),
    "traced:lost payload is five uint64");
/* And traced:crash its five 64-bit fields. */
_Static_assert(sizeof(struct traced_crash) == 5 * sizeof(uint64_t),
    "traced:crash payload is five 64-bit fields");

/* Room for '_', a name cut to TEVENTS_NAME_MAX bytes, and the NUL. */
#define CTF_IDENT_SIZE	(TEVENTS_NAME_MAX + 2)
/* The same plus a "_<n>" suffix that makes a field name unique. */
#define CTF_FIELD_SIZE	(CTF_IDENT_SIZE + 12)

/*
 * Words the TSDL lexer of babeltrace2 2.0.4 will not take as a field
 * name: its keywords, and the type names this file declares (a declared
 * type name is lexed as a type from then on).  Each was checked against
 * the reader.
 */
static const char *const ctf_reserved_words[] = {
	"_Bool", "_Complex", "_Imaginary", "align", "callsite", "char",
	"clock", "const", "double", "enum", "env", "event", "float",
	"floating_point", "int", "integer", "long", "short", "signed",
	"stream", "string", "struct", "trace", "typealias", "typedef",
	"unsigned", "variant", "void",
	"traced_u8", "traced_u32", "traced_u64", "traced_s64", "traced_ptr",
	"traced_bool", "traced_clock",
};

/* A growing NUL-terminated string; 'failed' latches the first ENOMEM. */
struct ctf_buf {
	char		*s;		/* owned */
	size_t		 len;		/* without the NUL */
	size_t		 cap;
	int		 failed;
};

static void	ctf_printf(struct ctf_buf *, const char *, ...)
		    __attribute__((format(printf, 2, 3)));

static void
ctf_printf(struct ctf_buf *b, const char *fmt, ...)
{
	va_list	 ap;
	size_t	 ncap;
	char	*ns;
	int	 n;

	if (b->failed)
		return;
	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->failed = 1;
			return;
		}
		if ((size_t)n < b->cap - b->len) {
			b->len += (size_t)n;
			return;
		}
		ncap = b->cap * 2;
		while (ncap - b->len <= (size_t)n)
			ncap *= 2;
		if ((ns = realloc(b->s, ncap)) == NULL) {
			b->failed = 1;
			return;
		}
		b->s = ns;
		b->cap = ncap;
	}
}

/*
 * Append 's' as the inside of a TSDL string literal: quote and backslash
 * escaped, control and non-ASCII bytes as three-digit octal escapes
 * (which the reader turns back into the same bytes), so the metadata is
 * plain ASCII whatever a process calls itself.
 */
static void
ctf_quote(struct ctf_buf *b, const char *s)
{
	const unsigned char *p;

	if (s == NULL)
		return;
	for (p = (const unsigned char *)s; *p != '\0'; p++) {
		if (*p == '"' || *p == '\\')
			ctf_printf(b, "\\%c", *p);
		else if (*p < 0x20 || *p >= 0x7f)
			ctf_printf(b, "\\%03o", *p);
		else
			ctf_printf(b, "%c", *p);
	}
}

static void
ctf_uuid(struct ctf_buf *b, const uint8_t u[16])
{
	ctf_printf(b, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
	    "%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2], u[3], u[4], u[5],
	    u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
}

static int
ctf_reserved(const char *s)
{
	size_t	 i;

	for (i = 0; i < sizeof(ctf_reserved_words) /
	    sizeof(ctf_reserved_words[0]); i++)
		if (strcmp(s, ctf_reserved_words[i]) == 0)
			return 1;
	return 0;
}

static int
ctf_ident_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || c == '_';
}

/*
 * Rewrite 'name' (NULL taken as "") into a TSDL identifier in buf, which
 * holds CTF_IDENT_SIZE bytes: at most TEVENTS_NAME_MAX bytes of it are
 * kept, each byte outside [A-Za-z0-9_] becomes '_', and a '_' goes in
 * front of an empty name, a leading digit or a reserved word.
 */
static void
ctf_ident(char *buf, const char *name)
{
	char	 tmp[TEVENTS_NAME_MAX + 1];
	size_t	 i;

	if (name == NULL)
		name = "";
	for (i = 0; i < TEVENTS_NAME_MAX && name[i] != '\0'; i++)
		tmp[i] = ctf_ident_char(name[i]) ? name[i] : '_';
	tmp[i] = '\0';
	if (tmp[0] == '\0' || (tmp[0] >= '0' && tmp[0] <= '9') ||
	    ctf_reserved(tmp))
		snprintf(buf, CTF_IDENT_SIZE, "_%s", tmp);
	else
		snprintf(buf, CTF_IDENT_SIZE, "%s", tmp);
}

/* The name babeltrace2 shows for the field TSDL calls 'id'. */
static const char *
ctf_shown(const char *id)
{
	return id[0] == '_' ? id + 1 : id;
}

/* Whether names[n] is reserved or shows like one of names[0..n). */
static int
ctf_field_clashes(char names[][CTF_FIELD_SIZE], unsigned n)
{
	unsigned i;

	if (ctf_reserved(names[n]))
		return 1;
	for (i = 0; i < n; i++)
		if (strcmp(ctf_shown(names[i]), ctf_shown(names[n])) == 0)
			return 1;
	return 0;
}

static const char *
ctf_arg_type(enum tevents_class cls)
{
	switch (cls) {
	case TEVENTS_SIGNED:
		return "traced_s64";
	case TEVENTS_UNSIGNED:
		return "traced_u64";
	case TEVENTS_POINTER:
		return "traced_ptr";
	case TEVENTS_BOOL:
		return "traced_bool";
	case TEVENTS_STRING:
		return "string";
	}
	return NULL;
}

/*
 * The event's trace-events line (its argument types as written and its
 * format string, which CTF has no attribute for: babeltrace2 warns
 * about an unknown one) in a comment, as a string literal:
 *
 *	/\* trace-events: "job_done(int id, uint64_t ns) \"job %d in %\"
 *	    PRIu64 \" ns\"" *\/
 *
 * Every CTF reader skips a comment; tracectl reads it back
 * (ctl/tsdl.c) to print events with their format.  Quotes and
 * backslashes are escaped, control and non-ASCII bytes written as octal
 * escapes, and the '/' of a "* /" pair too, so the text cannot end the
 * comment.
 */
static int
ctf_note(struct ctf_buf *b, const struct tevents_event *ev)
{
	const unsigned char *p;
	char		*line;
	int		 n;

	if (ev->fmt == NULL)		/* nothing to say */
		return 0;
	if ((n = tevents_format(ev, NULL, 0)) < 0 ||
	    (line = malloc((size_t)n + 1)) == NULL) {
		errno = ENOMEM;
		return -1;
	}
	tevents_format(ev, line, (size_t)n + 1);
	if (n > 0 && line[n - 1] == '\n')
		line[--n] = '\0';
	ctf_printf(b, "\t/* trace-events: \"");
	for (p = (const unsigned char *)line; *p != '\0'; p++) {
		if (*p == '"' || *p == '\\')
			ctf_printf(b, "\\%c", *p);
		else if (*p < 0x20 || *p >= 0x7f ||
		    (*p == '/' && p > (const unsigned char *)line &&
		    p[-1] == '*'))
			ctf_printf(b, "\\%03o", *p);
		else
			ctf_printf(b, "%c", *p);
	}
	ctf_printf(b, "\" */\n");
	free(line);
	return 0;
}

/*
 * One event block.  Field names are unique as shown by the reader: a
 * name that clashes with an earlier one gets "_<n>" appended, with the
 * smallest n that makes it unique.  An event without arguments has no
 * fields at all (babeltrace2 then prints no empty "{ }").  Returns -1
 * with errno EINVAL if the class is malformed.
 */
static int
ctf_event(struct ctf_buf *b, const struct ctf_event_class *c)
{
	char		 names[TEVENTS_ARGS_MAX][CTF_FIELD_SIZE];
	char		 base[CTF_IDENT_SIZE];
	const struct tevents_event *ev = c->ev;
	const char	*type;
	unsigned	 i, n;

	if (ev == NULL || ev->nargs > TEVENTS_ARGS_MAX) {
		errno = EINVAL;
		return -1;
	}
	ctf_printf(b, "event {\n\tname = \"");
	ctf_quote(b, c->provider);
	ctf_printf(b, ":");
	ctf_quote(b, ev->name);
	ctf_printf(b, "\";\n\tid = %" PRIu32 ";\n\tstream_id = 0;\n", c->id);
	if (ctf_note(b, ev) == -1)
		return -1;
	if (ev->nargs > 0)
		ctf_printf(b, "\tfields := struct {\n");
	for (i = 0; i < ev->nargs; i++) {
		if ((type = ctf_arg_type(ev->args[i].cls)) == NULL) {
			errno = EINVAL;
			return -1;
		}
		ctf_ident(base, ev->args[i].name);
		snprintf(names[i], sizeof(names[i]), "%s", base);
		for (n = 1; ctf_field_clashes(names, i); n++)
			snprintf(names[i], sizeof(names[i]), "%s_%u", base, n);
		ctf_printf(b, "\t\t%s %s;\n", type, names[i]);
	}
	if (ev->nargs > 0)
		ctf_printf(b, "\t};\n");
	ctf_printf(b, "};\n\n");
	return 0;
}

static void
ctf_preamble(struct ctf_buf *b, const struct ctf_trace_info *info,
    const char *clock)
{
	unsigned long	 major, minor, patch;
	char		*end;
	int		 c;

	major = strtoul(TRACED_VERSION, &end, 10);
	minor = *end == '.' ? strtoul(end + 1, &end, 10) : 0;
	patch = *end == '.' ? strtoul(end + 1, &end, 10) : 0;

	ctf_printf(b, "/* CTF 1.8 */\n\n"
	    "typealias integer { size = 8; align = 8; signed = false; }"
	    " := traced_u8;\n"
	    "typealias integer { size = 32; align = 32; signed = false; }"
	    " := traced_u32;\n"
	    "typealias integer { size = 64; align = 64; signed = false; }"
	    " := traced_u64;\n"
	    "typealias integer { size = 64; align = 64; signed = true; }"
	    " := traced_s64;\n"
	    "typealias integer { size = 64; align = 64; signed = false;"
	    " base = 16; } := traced_ptr;\n"
	    "typealias integer { size = 64; align = 64; signed = false;"
	    " base = 10; } := traced_bool;\n\n");

	ctf_printf(b, "trace {\n\tmajor = 1;\n\tminor = 8;\n\tuuid = \"");
	ctf_uuid(b, info->uuid);
	ctf_printf(b, "\";\n\tbyte_order = le;\n"
	    "\tpacket.header := struct {\n"
	    "\t\ttraced_u32 magic;\n"
	    "\t\ttraced_u8 uuid[16];\n"
	    "\t\ttraced_u32 stream_id;\n"
	    "\t\ttraced_u64 stream_instance_id;\n"
	    "\t};\n};\n\n");

	ctf_printf(b, "env {\n\thostname = \"");
	ctf_quote(b, info->hostname);
	ctf_printf(b, "\";\n\tdomain = \"ust\";\n"
	    "\ttracer_name = \"traced\";\n"
	    "\ttracer_major = %lu;\n\ttracer_minor = %lu;\n"
	    "\ttracer_patchlevel = %lu;\n\tprocname = \"", major, minor, patch);
	ctf_quote(b, info->procname);
	ctf_printf(b, "\";\n\tvpid = %" PRId32 ";\n"
	    "\ttraced_session = %" PRIu32 ";\n};\n\n",
	    info->pid, info->session);

	ctf_printf(b, "clock {\n\tname = \"%s\";\n\tuuid = \"", clock);
	ctf_uuid(b, info->clock_uuid);
	ctf_printf(b, "\";\n\tdescription = \"traced ");
	ctf_quote(b, info->clock_name);
	ctf_printf(b, " clock\";\n\tfreq = %" PRIu64 ";\n\tprecision = 1;\n"
	    "\toffset_s = %" PRId64 ";\n\toffset = %" PRIu64 ";\n"
	    "\tabsolute = FALSE;\n};\n\n",
	    info->clock_freq, info->clock_offset_s, info->clock_offset);

	ctf_printf(b, "typealias integer { size = 64; align = 64;"
	    " signed = false; map = clock.%s.value; } := traced_clock;\n\n",
	    clock);

	/* 32 + 52 = 84 bytes; the event header's align = 64 makes it 88. */
	ctf_printf(b, "stream {\n\tid = 0;\n"
	    "\tpacket.context := struct {\n"
	    "\t\ttraced_clock timestamp_begin;\n"
	    "\t\ttraced_clock timestamp_end;\n"
	    "\t\ttraced_u64 content_size;\n"
	    "\t\ttraced_u64 packet_size;\n"
	    "\t\ttraced_u64 packet_seq_num;\n"
	    "\t\ttraced_u64 events_discarded;\n"
	    "\t\ttraced_u32 tid;\n"
	    "\t};\n"
	    "\tevent.header := struct {\n"
	    "\t\ttraced_u32 id;\n"
	    "\t\ttraced_clock timestamp;\n"
	    "\t};\n};\n\n");

	/* struct traced_lost: the count, then one field per cause. */
	ctf_printf(b, "event {\n\tname = \"traced:lost\";\n"
	    "\tid = %u;\n\tstream_id = 0;\n"
	    "\tfields := struct {\n"
	    "\t\ttraced_u64 count;\n", TRACED_EVENT_LOST);
	for (c = 0; c < TRACED_DROP_PRODUCER_NCAUSES; c++)
		ctf_printf(b, "\t\ttraced_u64 %s;\n", traced_cause_name(c));
	ctf_printf(b, "\t};\n};\n\n");

	/* struct traced_crash, in its order (client-lib/crash.c). */
	ctf_printf(b, "event {\n\tname = \"traced:crash\";\n"
	    "\tid = %u;\n\tstream_id = 0;\n"
	    "\tfields := struct {\n"
	    "\t\ttraced_s64 signal;\n"
	    "\t\ttraced_s64 code;\n"
	    "\t\ttraced_ptr addr;\n"
	    "\t\ttraced_ptr ip;\n"
	    "\t\ttraced_s64 sender;\n"
	    "\t};\n};\n\n", TRACED_EVENT_CRASH);
}

long
ctf_metadata(const struct ctf_trace_info *info,
    const struct ctf_event_class *classes, size_t nclasses, char **out)
{
	struct ctf_buf	 b = { NULL, 0, 4096, 0 };
	char		 clock[CTF_IDENT_SIZE];
	size_t		 i;

	*out = NULL;
	if ((b.s = malloc(b.cap)) == NULL)
		return -1;
	ctf_ident(clock, info->clock_name != NULL ? info->clock_name :
	    "monotonic");
	ctf_preamble(&b, info, clock);
	for (i = 0; i < nclasses; i++) {
		if (ctf_event(&b, &classes[i]) == -1) {
			free(b.s);
			return -1;
		}
	}
	if (b.failed) {
		free(b.s);
		errno = ENOMEM;
		return -1;
	}
	*out = b.s;
	return (long)b.len;
}

long
ctf_metadata_events(const struct ctf_event_class *classes, size_t nclasses,
    char **out)
{
	struct ctf_buf	 b = { NULL, 0, 4096, 0 };
	size_t		 i;

	*out = NULL;
	if ((b.s = malloc(b.cap)) == NULL)
		return -1;
	b.s[0] = '\0';
	for (i = 0; i < nclasses; i++) {
		if (ctf_event(&b, &classes[i]) == -1) {
			free(b.s);
			return -1;
		}
	}
	if (b.failed) {
		free(b.s);
		errno = ENOMEM;
		return -1;
	}
	*out = b.s;
	return (long)b.len;
}

static void
ctf_put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

void
ctf_put64(uint8_t *p, uint64_t v)
{
	ctf_put32(p, (uint32_t)v);
	ctf_put32(p + 4, (uint32_t)(v >> 32));
}

uint64_t
ctf_get64(const uint8_t *p)
{
	uint64_t v = 0;
	int i;

	for (i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* An empty packet: header and context, no event.  See ctf.h. */
void
ctf_packet_empty(uint8_t buf[CTF_PACKET_HDR_SIZE], const uint8_t uuid[16],
    uint64_t instance, uint32_t tid, uint64_t ts, uint64_t seq,
    uint64_t discarded)
{
	struct ctf_packet pk;

	memset(&pk, 0, sizeof(pk));
	pk.uuid = uuid;
	pk.stream_instance_id = instance;
	pk.ts_begin = pk.ts_end = ts;
	pk.content_bytes = CTF_PACKET_HDR_SIZE;
	pk.seq = seq;
	pk.events_discarded = discarded;
	pk.tid = tid;
	ctf_packet_header(buf, &pk);
}

/*
 * The packet is content_bytes long, but its content, for the reader,
 * ends where the last field of its last event does; see ctf.h.
 */
void
ctf_packet_header(uint8_t buf[CTF_PACKET_HDR_SIZE], const struct ctf_packet *p)
{
	uint64_t content;

	if (p->content_bytes <= CTF_PACKET_HDR_SIZE)
		content = CTF_PACKET_CONTEXT_END;
	else
		content = p->content_bytes - p->tail_pad;

	ctf_put32(buf, CTF_MAGIC);
	memcpy(buf + 4, p->uuid, 16);
	ctf_put32(buf + 20, 0);
	ctf_put64(buf + 24, p->stream_instance_id);
	ctf_put64(buf + 32, p->ts_begin);
	ctf_put64(buf + 40, p->ts_end);
	ctf_put64(buf + 48, content * 8);
	ctf_put64(buf + 56, p->content_bytes * 8);
	ctf_put64(buf + 64, p->seq);
	ctf_put64(buf + 72, p->events_discarded);
	ctf_put32(buf + 80, p->tid);
	ctf_put32(buf + 84, 0);
}
