/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * Tests of daemon/ctf.c.  The byte offsets of the packet header and the
 * rewriting of names are checked directly; everything else is checked
 * by the real reader: the tests write a trace directory whose metadata
 * comes from ctf_metadata() and whose stream files are packets from
 * ctf_packet_header() followed by records built byte by byte by the
 * rules of proto/ring.h, run babeltrace2 on it and compare its output
 * line for line.  Those tests are skipped when babeltrace2 is not
 * installed.  Timestamps are printed with --clock-seconds, which does
 * not depend on the time zone.  The first event's delta, "(+?.?...?)",
 * is spelled with "\?" so that no "??)" trigraph appears.
 */
#include <sys/stat.h>

#include <errno.h>
#include <ftw.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "daemon/ctf.h"
#include "ring.h"
#include "tevents.h"
#include "recbuild.h"

#define T_PID		4242
#define T_OFFSET_S	1700000000

static const uint8_t t_uuid[16] = {
	0x2a, 0x64, 0x22, 0xd0, 0x6c, 0xee, 0x11, 0xe0,
	0x8c, 0x08, 0xcb, 0x07, 0xd7, 0xb3, 0xa5, 0x64,
};
static const uint8_t t_clock_uuid[16] = {
	0x7d, 0x1e, 0x9a, 0x52, 0x6c, 0xee, 0x11, 0xe0,
	0x8c, 0x08, 0xcb, 0x07, 0xd7, 0xb3, 0xa5, 0x65,
};

/* A scratch directory: base/, base/trace/ (the trace), base/err. */
struct t_dir {
	char	base[64];
	char	trace[96];
	char	err[96];
};

/* Records of one packet, built as the producer lays them out. */
static void
t_info(struct ctf_trace_info *info, const char *procname)
{
	memset(info, 0, sizeof(*info));
	memcpy(info->uuid, t_uuid, 16);
	memcpy(info->clock_uuid, t_clock_uuid, 16);
	info->clock_freq = 1000000000;
	info->clock_offset_s = T_OFFSET_S;
	info->clock_offset = 0;
	info->clock_name = "monotonic";
	info->hostname = "testhost";
	info->procname = procname;
	info->pid = T_PID;
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

static uint64_t
t_get(const uint8_t *p, int n)
{
	uint64_t v = 0;
	int	 i;

	for (i = n - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static void
t_packet(FILE *f, uint32_t tid, uint64_t seq, uint64_t discarded,
    uint64_t begin, uint64_t end, const struct t_recs *r)
{
	uint8_t			 hdr[CTF_PACKET_HDR_SIZE];
	struct ctf_packet	 p;

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
	ctf_packet_header(hdr, &p);
	assert_int_equal(fwrite(hdr, 1, sizeof(hdr), f), sizeof(hdr));
	if (r->len > 0)
		assert_int_equal(fwrite(r->b, 1, r->len, f), r->len);
}

static FILE *
t_open(const struct t_dir *d, const char *name)
{
	char	 path[160];
	FILE	*f;

	snprintf(path, sizeof(path), "%s/%s", d->trace, name);
	f = fopen(path, "w");
	assert_non_null(f);
	return f;
}

static void
t_write_metadata(const struct t_dir *d, const struct ctf_trace_info *info,
    const struct ctf_event_class *classes, size_t n)
{
	char	*md;
	long	 len;
	FILE	*f;

	len = ctf_metadata(info, classes, n, &md);
	assert_true(len > 0);
	f = t_open(d, "metadata");
	assert_int_equal(fwrite(md, 1, (size_t)len, f), (size_t)len);
	assert_int_equal(fclose(f), 0);
	free(md);
}

static char *
t_slurp(FILE *f)
{
	size_t	 len = 0, cap = 4096, n;
	char	*s = malloc(cap);

	assert_non_null(s);
	while ((n = fread(s + len, 1, cap - len - 1, f)) > 0) {
		len += n;
		if (cap - len == 1) {
			cap *= 2;
			s = realloc(s, cap);
			assert_non_null(s);
		}
	}
	s[len] = '\0';
	return s;
}

static int
t_have_babeltrace(void)
{
	if (system("command -v babeltrace2 >/dev/null 2>&1") == 0)
		return 1;
	print_message("[  SKIP    ] babeltrace2 is not installed "
	    "(apt-get install babeltrace2)\n");
	return 0;
}

/* Run babeltrace2 on the trace: its stdout in *out, stderr in *err. */
static void
t_babeltrace(const struct t_dir *d, char **out, char **err)
{
	char	 cmd[512];
	FILE	*p;

	snprintf(cmd, sizeof(cmd), "babeltrace2 --clock-seconds '%s' 2>'%s'",
	    d->trace, d->err);
	p = popen(cmd, "r");
	assert_non_null(p);
	*out = t_slurp(p);
	assert_int_equal(pclose(p), 0);
	p = fopen(d->err, "r");
	assert_non_null(p);
	*err = t_slurp(p);
	fclose(p);
}

static int
t_setup(void **state)
{
	struct t_dir	*d = calloc(1, sizeof(*d));
	const char	*tmp = getenv("TMPDIR");

	if (d == NULL)
		return -1;
	snprintf(d->base, sizeof(d->base), "%s/test_ctf.XXXXXX",
	    tmp != NULL && strlen(tmp) < 32 ? tmp : "/tmp");
	if (mkdtemp(d->base) == NULL) {
		free(d);
		return -1;
	}
	snprintf(d->trace, sizeof(d->trace), "%s/trace", d->base);
	snprintf(d->err, sizeof(d->err), "%s/err", d->base);
	if (mkdir(d->trace, 0700) == -1) {
		rmdir(d->base);
		free(d);
		return -1;
	}
	*state = d;
	return 0;
}

static int
t_rm(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static int
t_teardown(void **state)
{
	struct t_dir	*d = *state;
	int		 rc = 0;

	if (getenv("TEST_CTF_KEEP") != NULL)
		print_message("kept %s\n", d->base);
	else
		rc = nftw(d->base, t_rm, 8, FTW_DEPTH | FTW_PHYS);
	free(d);
	return rc;
}

static void
test_ctf_packet_header_layout(void **state)
{
	uint8_t			 buf[CTF_PACKET_HDR_SIZE];
	struct ctf_packet	 p;
	size_t			 i;

	(void)state;
	memset(buf, 0xaa, sizeof(buf));
	memset(&p, 0, sizeof(p));
	p.uuid = t_uuid;
	p.stream_instance_id = 0x1122334455667788ull;
	p.ts_begin = 0x0102030405060708ull;
	p.ts_end = 0x1112131415161718ull;
	p.content_bytes = 4096 + 88;
	p.seq = 7;
	p.events_discarded = 0xfedcba9876543210ull;
	p.tid = 0x89abcdefu;
	p.tail_pad = 3;
	ctf_packet_header(buf, &p);

	assert_int_equal(buf[0], 0xc1);
	assert_int_equal(buf[1], 0x1f);
	assert_int_equal(buf[2], 0xfc);
	assert_int_equal(buf[3], 0xc1);
	assert_int_equal(t_get(buf, 4), CTF_MAGIC);
	assert_memory_equal(buf + 4, t_uuid, 16);
	assert_int_equal(t_get(buf + 20, 4), 0);
	assert_int_equal(t_get(buf + 24, 8), p.stream_instance_id);
	assert_int_equal(t_get(buf + 32, 8), p.ts_begin);
	assert_int_equal(t_get(buf + 40, 8), p.ts_end);
	assert_int_equal(t_get(buf + 48, 8), (4096 + 88 - 3) * 8);
	assert_int_equal(t_get(buf + 56, 8), (4096 + 88) * 8);
	assert_int_equal(t_get(buf + 64, 8), 7);
	assert_int_equal(t_get(buf + 72, 8), p.events_discarded);
	assert_int_equal(t_get(buf + 80, 4), 0x89abcdefu);
	for (i = 84; i < CTF_PACKET_HDR_SIZE; i++)
		assert_int_equal(buf[i], 0);
	assert_int_equal(CTF_PACKET_HDR_SIZE % 8, 0);
}

/* A packet without events: its content ends with the context. */
static void
test_ctf_packet_header_empty_packet(void **state)
{
	uint8_t			 buf[CTF_PACKET_HDR_SIZE];
	struct ctf_packet	 p;

	(void)state;
	memset(&p, 0, sizeof(p));
	p.uuid = t_uuid;
	p.content_bytes = CTF_PACKET_HDR_SIZE;
	ctf_packet_header(buf, &p);
	assert_int_equal(t_get(buf + 48, 8), CTF_PACKET_CONTEXT_END * 8);
	assert_int_equal(t_get(buf + 56, 8), CTF_PACKET_HDR_SIZE * 8);

	p.tail_pad = 5;		/* meaningless without events */
	ctf_packet_header(buf, &p);
	assert_int_equal(t_get(buf + 48, 8), CTF_PACKET_CONTEXT_END * 8);
}

static void
test_ctf_metadata_header_and_env(void **state)
{
	struct ctf_trace_info	 info;
	char			*md;
	long			 len;

	(void)state;
	t_info(&info, "we\"ird\\p\n\x80");
	info.hostname = NULL;
	len = ctf_metadata(&info, NULL, 0, &md);
	assert_true(len > 0);
	assert_int_equal((size_t)len, strlen(md));
	assert_int_equal(strncmp(md, "/* CTF 1.8 */\n", 14), 0);
	assert_non_null(strstr(md,
	    "uuid = \"2a6422d0-6cee-11e0-8c08-cb07d7b3a564\";"));
	assert_non_null(strstr(md,
	    "uuid = \"7d1e9a52-6cee-11e0-8c08-cb07d7b3a565\";"));
	assert_non_null(strstr(md, "byte_order = le;"));
	assert_non_null(strstr(md, "hostname = \"\";"));
	assert_non_null(strstr(md, "procname = \"we\\\"ird\\\\p\\012\\200\";"));
	assert_non_null(strstr(md, "vpid = 4242;"));
	assert_non_null(strstr(md, "traced_session = 3;"));
	assert_non_null(strstr(md, "offset_s = 1700000000;"));
	assert_non_null(strstr(md, "map = clock.monotonic.value;"));
	assert_non_null(strstr(md, "name = \"traced:lost\";\n\tid = 0;"));
	assert_non_null(strstr(md, "name = \"traced:crash\";\n\tid = 3;"));
	free(md);
}

static void
test_ctf_metadata_rewrites_field_names(void **state)
{
	static const char *const want[] = {
		"\t\ttraced_s64 _string;\n",
		"\t\ttraced_s64 _string_1;\n",	/* "_string" shows "string" */
		"\t\ttraced_s64 _1st;\n",
		"\t\ttraced_s64 a_b;\n",
		"\t\ttraced_s64 a_b_1;\n",	/* "a.b" */
		"\t\ttraced_s64 _a;\n",		/* shows as "a" */
		"\t\ttraced_s64 a_1;\n",
		"\t\ttraced_s64 _traced_u64;\n",
		"\t\ttraced_s64 _traced_clock;\n",
		"\t\ttraced_s64 TRUE;\n",
		"\t\ttraced_s64 __Bool;\n",
		"\t\ttraced_s64 _;\n",
		"\t\ttraced_s64 __1;\n",
	};
	struct ctf_trace_info	 info;
	struct ctf_event_class	 c[2];
	struct tevents_event	 ev, ev2;
	char			*md, longname[200], want_long[160];
	size_t			 i;

	(void)state;
	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	snprintf(want_long, sizeof(want_long), "\t\ttraced_s64 %.*s;\n",
	    TEVENTS_NAME_MAX, longname);
	t_info(&info, "p");
	/* Two events: at most TEVENTS_ARGS_MAX arguments each. */
	t_event(&ev, "names");
	t_arg(&ev, "string", TEVENTS_SIGNED);
	t_arg(&ev, "_string", TEVENTS_SIGNED);
	t_arg(&ev, "1st", TEVENTS_SIGNED);
	t_arg(&ev, "a-b", TEVENTS_SIGNED);
	t_arg(&ev, "a.b", TEVENTS_SIGNED);
	t_arg(&ev, "_a", TEVENTS_SIGNED);
	t_arg(&ev, "a", TEVENTS_SIGNED);
	t_arg(&ev, "traced_u64", TEVENTS_SIGNED);
	t_arg(&ev, "traced_clock", TEVENTS_SIGNED);
	t_arg(&ev, "TRUE", TEVENTS_SIGNED);
	t_arg(&ev, "_Bool", TEVENTS_SIGNED);
	t_event(&ev2, "more");
	t_arg(&ev2, "", TEVENTS_SIGNED);
	t_arg(&ev2, "", TEVENTS_SIGNED);
	t_arg(&ev2, longname, TEVENTS_SIGNED);	/* cut to TEVENTS_NAME_MAX */
	c[0] = (struct ctf_event_class){ 16, "prov", &ev };
	c[1] = (struct ctf_event_class){ 17, "prov", &ev2 };
	assert_true(ctf_metadata(&info, c, 2, &md) > 0);
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		if (strstr(md, want[i]) == NULL)
			fail_msg("no \"%s\" in\n%s", want[i], md);
	}
	assert_non_null(strstr(md, want_long));
	assert_non_null(strstr(md, "name = \"prov:names\";\n\tid = 16;"));
	free(md);
}

static void
test_ctf_metadata_rejects_bad_class(void **state)
{
	struct ctf_trace_info	 info;
	struct ctf_event_class	 c;
	struct tevents_event	 ev;
	char			*md = (char *)"";

	(void)state;
	t_info(&info, "p");
	t_event(&ev, "e");
	ev.nargs = TEVENTS_ARGS_MAX + 1;
	c.id = 16;
	c.provider = "prov";
	c.ev = &ev;
	errno = 0;
	assert_int_equal(ctf_metadata(&info, &c, 1, &md), -1);
	assert_int_equal(errno, EINVAL);
	assert_null(md);

	c.ev = NULL;
	assert_int_equal(ctf_metadata(&info, &c, 1, &md), -1);
	assert_null(md);
}

/*
 * Two threads, merged by time.  Thread 101 writes two packets: the first
 * ends with a record whose last field is a string (so padding follows
 * it), the second starts with a traced:lost record and its
 * events_discarded says 5.  Thread 202 writes a packet, an empty one (as
 * a flush does) whose events_discarded says 2, and a last packet that
 * ends with a string.
 */
static void
test_ctf_babeltrace_reads_streams(void **state)
{
	static const char want_out[] =
	    "[1700000000.000001000] (+?.????????\?) testhost:demo:(4242) "
	    "demo:mixed: { tid = 101 }, { delta = -42, count = "
	    "18446744073709551615, ptr = 0x7FFDDEADBEEF, ok = 1, msg = "
	    "\"hello, world\", after = 9223372036854775807 }\n"
	    "[1700000000.000001500] (+0.000000500) testhost:demo:(4242) "
	    "demo:strings: { tid = 202 }, { a = \"\", b = \"x\", c = "
	    "\"two words\" }\n"
	    "[1700000000.000002000] (+0.000000500) testhost:demo:(4242) "
	    "demo:strings: { tid = 101 }, { a = \"first!\", b = \"\", c = "
	    "\"\" }\n"
	    "[1700000000.000002500] (+0.000000500) testhost:demo:(4242) "
	    "demo:mixed: { tid = 202 }, { delta = -9223372036854775808, "
	    "count = 0, ptr = 0x0, ok = 0, msg = \"\", after = -1 }\n"
	    "[1700000000.000003000] (+0.000000500) testhost:demo:(4242) "
	    "traced:lost: { tid = 101 }, { count = 5, ring_full = 3, "
	    "nested = 0, disconnected = 0, paused = 2 }\n"
	    "[1700000000.000003500] (+0.000000500) testhost:demo:(4242) "
	    "demo:noargs: { tid = 101 }\n"
	    "[1700000000.000003700] (+0.000000200) testhost:demo:(4242) "
	    "demo:strings: { tid = 202 }, { a = \"last\", b = \"in\", c = "
	    "\"file\" }\n";
	struct t_dir		*d = *state;
	struct ctf_trace_info	 info;
	struct ctf_event_class	 c[3];
	struct tevents_event	 mixed, strings, noargs;
	struct t_recs		 r;
	char			*out, *err, want_err[1024];
	FILE			*f;

	if (!t_have_babeltrace())
		skip();
	t_info(&info, "demo");
	t_event(&mixed, "mixed");
	t_arg(&mixed, "delta", TEVENTS_SIGNED);
	t_arg(&mixed, "count", TEVENTS_UNSIGNED);
	t_arg(&mixed, "ptr", TEVENTS_POINTER);
	t_arg(&mixed, "ok", TEVENTS_BOOL);
	t_arg(&mixed, "msg", TEVENTS_STRING);
	t_arg(&mixed, "after", TEVENTS_SIGNED);
	t_event(&strings, "strings");
	t_arg(&strings, "a", TEVENTS_STRING);
	t_arg(&strings, "b", TEVENTS_STRING);
	t_arg(&strings, "c", TEVENTS_STRING);
	t_event(&noargs, "noargs");
	c[0] = (struct ctf_event_class){ 16, "demo", &mixed };
	c[1] = (struct ctf_event_class){ 17, "demo", &strings };
	c[2] = (struct ctf_event_class){ 40, "demo", &noargs };
	t_write_metadata(d, &info, c, 3);

	f = t_open(d, "stream-101");
	memset(&r, 0, sizeof(r));
	t_rec_begin(&r, 16, 1000);
	t_rec_int(&r, (uint64_t)-42);
	t_rec_int(&r, UINT64_MAX);
	t_rec_int(&r, 0x7ffddeadbeefull);
	t_rec_int(&r, 1);
	t_rec_str(&r, "hello, world");
	t_rec_int(&r, INT64_MAX);
	t_rec_end(&r);
	assert_int_equal(r.len, 72);
	t_rec_begin(&r, 17, 2000);
	t_rec_str(&r, "first!");
	t_rec_str(&r, "");
	t_rec_str(&r, "");
	t_rec_end(&r);
	assert_int_equal(r.tail_pad, 7);
	t_packet(f, 101, 0, 0, 1000, 2000, &r);
	memset(&r, 0, sizeof(r));
	t_rec_begin(&r, TRACED_EVENT_LOST, 3000);
	t_rec_int(&r, 5);
	t_rec_int(&r, 3);
	t_rec_int(&r, 0);
	t_rec_int(&r, 0);
	t_rec_int(&r, 2);
	t_rec_end(&r);
	assert_int_equal(r.len, TRACED_LOST_REC_SIZE);
	t_rec_begin(&r, 40, 3500);
	t_rec_end(&r);
	t_packet(f, 101, 1, 5, 3000, 4000, &r);
	assert_int_equal(fclose(f), 0);

	f = t_open(d, "stream-202");
	memset(&r, 0, sizeof(r));
	t_rec_begin(&r, 17, 1500);
	t_rec_str(&r, "");
	t_rec_str(&r, "x");
	t_rec_str(&r, "two words");
	t_rec_end(&r);
	t_rec_begin(&r, 16, 2500);
	t_rec_int(&r, (uint64_t)INT64_MIN);
	t_rec_int(&r, 0);
	t_rec_int(&r, 0);
	t_rec_int(&r, 0);
	t_rec_str(&r, "");
	t_rec_int(&r, (uint64_t)-1);
	t_rec_end(&r);
	t_packet(f, 202, 0, 0, 1500, 2600, &r);
	memset(&r, 0, sizeof(r));
	t_packet(f, 202, 1, 2, 2600, 2700, &r);
	t_rec_begin(&r, 17, 3700);
	t_rec_str(&r, "last");
	t_rec_str(&r, "in");
	t_rec_str(&r, "file");
	t_rec_end(&r);
	assert_int_equal(r.tail_pad, 3);
	t_packet(f, 202, 2, 2, 2700, 3800, &r);
	assert_int_equal(fclose(f), 0);

	t_babeltrace(d, &out, &err);
	/* The muxer orders these by the start of their time span. */
	snprintf(want_err, sizeof(want_err), "WARNING: Tracer discarded 5 "
	    "events between [1700000000.000002000] and "
	    "[1700000000.000004000] in trace \"testhost\" (UUID: "
	    "2a6422d0-6cee-11e0-8c08-cb07d7b3a564) within stream "
	    "\"%s/stream-101\" (stream class ID: 0, stream ID: 101).\n"
	    "WARNING: Tracer discarded 2 events between "
	    "[1700000000.000002600] and [1700000000.000002700] in trace "
	    "\"testhost\" (UUID: 2a6422d0-6cee-11e0-8c08-cb07d7b3a564) "
	    "within stream \"%s/stream-202\" (stream class ID: 0, "
	    "stream ID: 202).\n", d->trace, d->trace);
	assert_string_equal(out, want_out);
	assert_string_equal(err, want_err);
	free(out);
	free(err);
}

/*
 * Names a process may choose: every TSDL keyword as an argument, names
 * that clash once babeltrace2 drops a leading '_', 32 arguments over
 * three events of TEVENTS_ARGS_MAX at most, with strings first, last
 * and side by side, and quotes in the event name.
 */
static void
test_ctf_babeltrace_reads_hostile_names(void **state)
{
	static const char *const kw[][2] = {	/* argument, as shown */
		{ "string", "string" }, { "_string", "string_1" },
		{ "int", "int" }, { "event", "event" }, { "align", "align" },
		{ "struct", "struct" }, { "enum", "enum" },
		{ "integer", "integer" },
		{ "floating_point", "floating_point" },
		{ "typealias", "typealias" }, { "typedef", "typedef" },
		/* second event */
		{ "variant", "variant" }, { "const", "const" },
		{ "char", "char" }, { "signed", "signed" },
		{ "unsigned", "unsigned" }, { "void", "void" },
		{ "trace", "trace" }, { "stream", "stream" },
		{ "clock", "clock" }, { "env", "env" },
		{ "callsite", "callsite" },
		/* third event */
		{ "_Bool", "_Bool" }, { "long", "long" },
		{ "traced_u64", "traced_u64" },
		{ "traced_clock", "traced_clock" }, { "a", "a" },
		{ "_a", "a_1" }, { "1x", "1x" }, { "id", "id" },
		{ "timestamp", "timestamp" }, { "x", "x" },
	};
	const size_t n = sizeof(kw) / sizeof(kw[0]);
	struct t_dir		*d = *state;
	struct ctf_trace_info	 info;
	struct ctf_event_class	 c[4];
	struct tevents_event	 big[3], empty;
	struct t_recs		 r;
	char			*out, *err, want[8192], v[64], name[8];
	size_t			 i, k, len = 0;
	FILE			*f;

	if (!t_have_babeltrace())
		skip();
	assert_int_equal(n, 32);
	t_info(&info, "p\"q\\r");
	for (k = 0; k < 3; k++)
		t_event(&big[k], k == 0 ? "big0" : k == 1 ? "big1" : "big2");
	t_event(&empty, "e\"v\\");
	for (i = 0; i < n; i++)
		t_arg(&big[i / TEVENTS_ARGS_MAX], kw[i][0], i <= 2 ||
		    i == n - 1 || i == 12 || i == 13 ? TEVENTS_STRING :
		    i % 2 ? TEVENTS_SIGNED : TEVENTS_POINTER);
	for (k = 0; k < 3; k++)
		c[k] = (struct ctf_event_class){ 16 + (uint32_t)k, "prov",
		    &big[k] };
	c[3] = (struct ctf_event_class){ 1000000, "pr\"ov", &empty };
	t_write_metadata(d, &info, c, 4);

	memset(&r, 0, sizeof(r));
	for (i = 0; i < n; i++) {
		k = i / TEVENTS_ARGS_MAX;
		if (i % TEVENTS_ARGS_MAX == 0) {
			if (k > 0) {
				t_rec_end(&r);
				len += (size_t)snprintf(want + len,
				    sizeof(want) - len, " }\n");
			}
			t_rec_begin(&r, 16 + (uint32_t)k, 10 + k);
			snprintf(name, sizeof(name), "big%zu", k);
			len += (size_t)snprintf(want + len, sizeof(want) - len,
			    "[1700000000.0000000%zu] (%s) testhost:p\"q\\r:"
			    "(4242) prov:%s: { tid = 7 }, { ", 10 + k, k == 0 ?
			    "+?.????????\?" : "+0.000000001", name);
		}
		switch (big[k].args[i % TEVENTS_ARGS_MAX].cls) {
		case TEVENTS_STRING:
			snprintf(v, sizeof(v), "s%zu", i);
			t_rec_str(&r, v);
			snprintf(v, sizeof(v), "\"s%zu\"", i);
			break;
		case TEVENTS_SIGNED:
			t_rec_int(&r, (uint64_t)-(int64_t)i);
			snprintf(v, sizeof(v), "%" PRId64, -(int64_t)i);
			break;
		default:
			t_rec_int(&r, 0x1000 + i);
			snprintf(v, sizeof(v), "0x%zX", 0x1000 + i);
			break;
		}
		len += (size_t)snprintf(want + len, sizeof(want) - len,
		    "%s%s = %s", i % TEVENTS_ARGS_MAX > 0 ? ", " : "",
		    kw[i][1], v);
	}
	t_rec_end(&r);
	t_rec_begin(&r, 1000000, 13);
	t_rec_end(&r);
	snprintf(want + len, sizeof(want) - len, " }\n"
	    "[1700000000.000000013] (+0.000000001) testhost:p\"q\\r:(4242) "
	    "pr\"ov:e\"v\\: { tid = 7 }\n");
	f = t_open(d, "stream-7");
	t_packet(f, 7, 0, 0, 10, 13, &r);
	assert_int_equal(fclose(f), 0);

	t_babeltrace(d, &out, &err);
	assert_string_equal(out, want);
	assert_string_equal(err, "");
	free(out);
	free(err);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ctf_packet_header_layout),
		cmocka_unit_test(test_ctf_packet_header_empty_packet),
		cmocka_unit_test(test_ctf_metadata_header_and_env),
		cmocka_unit_test(test_ctf_metadata_rewrites_field_names),
		cmocka_unit_test(test_ctf_metadata_rejects_bad_class),
		cmocka_unit_test_setup_teardown(
		    test_ctf_babeltrace_reads_streams, t_setup, t_teardown),
		cmocka_unit_test_setup_teardown(
		    test_ctf_babeltrace_reads_hostile_names, t_setup,
		    t_teardown),
	};

	return cmocka_run_group_tests_name("ctf", tests, NULL, NULL);
}
