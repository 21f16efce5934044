/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * Tests of the one reader (ctl/reader.c) and of what consumes it: the
 * windowed walk of the core, the merge of sessions and of a stream cut
 * into files, losses said once each, a corrupt packet skipped with its
 * file and offset, the filters, format strings rendered as printf would
 * (ctl/format.c), and the simpletrace export, every byte of which a
 * reader written here checks.  The traces are real: metadata from the
 * daemon's ctf_metadata() on events parsed from a trace-events text,
 * packets from ctf_packet_header() and records laid out by recbuild.h.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
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

#include "ctl/export.h"
#include "ctl/format.h"
#include "ctl/strbuf.h"
#include "ctl/reader.h"
#include "ctl/tracectl.h"
#include "ctl/tracedir.h"
#include "daemon/ctf.h"
#include "ring.h"
#include "tevents.h"
#include "recbuild.h"

#define T_OFFSET_S	1700000000

static const uint8_t t_uuid[16] = {
	0x2a, 0x64, 0x22, 0xd0, 0x6c, 0xee, 0x11, 0xe0,
	0x8c, 0x08, 0xcb, 0x07, 0xd7, 0xb3, 0xa5, 0x64,
};

/* Events 16 (job), 17 (note), 18 (crc) of provider "demo". */
static const char t_events[] =
    "job(int id, uint64_t ns, const char *who) \"job %d in %\" PRIu64 "
    "\" ns by %s\"\n"
    "note(const char *a, const char *b) \"\"\n"
    "crc(uint32_t crc, int8_t small, void *p, bool ok) "
    "\"crc 0x%08x small %4hhd| at %-12p| ok %d %s\"\n";

struct t_dir {
	char		 base[128];
	char		 traces[160];
};

struct t_file {
	uint8_t		 b[65536];
	size_t		 len;
};

static struct tevents_file t_te;

static void
t_write(const char *dir, const char *name, const void *p, size_t len)
{
	char	 path[512];
	FILE	*f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	assert_non_null(f = fopen(path, "w"));
	assert_int_equal(fwrite(p, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

static void
t_metadata(const char *dir, int32_t pid, const char *comm)
{
	struct ctf_trace_info	 info;
	struct ctf_event_class	 c[3];
	char			 err[256], *md;
	long			 n;
	size_t			 i;

	if (t_te.nevents == 0)
		assert_int_equal(tevents_parse(t_events, sizeof(t_events) - 1,
		    "t", &t_te, err, sizeof(err)), 0);
	memset(&info, 0, sizeof(info));
	memcpy(info.uuid, t_uuid, 16);
	info.clock_freq = 1000000000;
	info.clock_offset_s = T_OFFSET_S;
	info.clock_name = "monotonic";
	info.hostname = "host";
	info.procname = comm;
	info.pid = pid;
	info.session = 1;
	for (i = 0; i < 3; i++)
		c[i] = (struct ctf_event_class){ (uint32_t)(16 + i), "demo",
		    &t_te.events[i] };
	assert_true((n = ctf_metadata(&info, c, 3, &md)) > 0);
	t_write(dir, "metadata", md, (size_t)n);
	free(md);
}

static void
t_packet(struct t_file *f, uint32_t tid, uint64_t seq, uint64_t discarded,
    uint64_t begin, uint64_t end, const struct t_recs *r)
{
	struct ctf_packet	 p;

	assert_true(f->len + CTF_PACKET_HDR_SIZE + r->len <= sizeof(f->b));
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
	ctf_packet_header(f->b + f->len, &p);
	f->len += CTF_PACKET_HDR_SIZE;
	memcpy(f->b + f->len, r->b, r->len);
	f->len += r->len;
}

static void
t_job(struct t_recs *r, uint64_t ts, int64_t id, uint64_t ns, const char *who)
{
	t_rec_begin(r, 16, ts);
	t_rec_int(r, (uint64_t)id);
	t_rec_int(r, ns);
	t_rec_str(r, who != NULL ? who : "(null)");
	t_rec_end(r);
	if (who == NULL)	/* argument 2 was a NULL pointer */
		r->b[r->start + 6] |= 1u << (TRACED_REC_NULL_SHIFT + 2 - 16);
}

static void
t_lost(struct t_recs *r, uint64_t ts, uint64_t full, uint64_t paused)
{
	t_rec_begin(r, TRACED_EVENT_LOST, ts);
	t_rec_int(r, full + paused);
	t_rec_int(r, full);
	t_rec_int(r, 0);
	t_rec_int(r, 0);
	t_rec_int(r, paused);
	t_rec_end(r);
}

static int
t_rm(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/*
 * Two sessions:
 *   a-100-1 (pid 100): thread 101, cut into stream-101 (packets 0, 1)
 *     and stream-101.1 (packet 2: events_discarded 7 = a traced:lost
 *     of 4 + 3 no record says); thread 102, one packet.
 *   b-200-2 (pid 200): thread 201 with a NULL and a real "(null)".
 */
static void
t_make(struct t_dir *d)
{
	struct t_file	*f = calloc(1, sizeof(*f));
	struct t_recs	 r;
	char		 s[256];
	const char	*tmp = getenv("TMPDIR");

	assert_non_null(f);
	snprintf(d->base, sizeof(d->base), "%s/test_reader.XXXXXX",
	    tmp != NULL && strlen(tmp) < 64 ? tmp : "/tmp");
	assert_non_null(mkdtemp(d->base));
	snprintf(d->traces, sizeof(d->traces), "%s/traces", d->base);
	assert_int_equal(mkdir(d->traces, 0700), 0);

	snprintf(s, sizeof(s), "%s/a-100-1", d->traces);
	assert_int_equal(mkdir(s, 0700), 0);
	t_metadata(s, 100, "alpha");
	memset(&r, 0, sizeof(r));
	t_job(&r, 1000, 1, 10, "w0");
	t_job(&r, 3000, 3, 30, "w0");
	t_packet(f, 101, 0, 0, 1000, 3000, &r);
	memset(&r, 0, sizeof(r));
	t_job(&r, 5000, 5, 50, "w0");
	t_packet(f, 101, 1, 0, 5000, 5000, &r);
	t_write(s, "stream-101", f->b, f->len);
	f->len = 0;
	memset(&r, 0, sizeof(r));
	t_lost(&r, 7000, 4, 0);
	t_job(&r, 7000, 7, 70, "w0");
	t_packet(f, 101, 2, 7, 7000, 8000, &r);
	t_write(s, "stream-101.1", f->b, f->len);
	f->len = 0;
	memset(&r, 0, sizeof(r));
	t_job(&r, 2000, 2, 20, "w1");
	t_rec_begin(&r, 18, 4000);
	t_rec_int(&r, 0x0badcafe);
	t_rec_int(&r, (uint64_t)-3);
	t_rec_int(&r, 0xdeadbeef);
	t_rec_int(&r, 1);
	t_rec_end(&r);
	t_packet(f, 102, 0, 0, 2000, 4000, &r);
	t_write(s, "stream-102", f->b, f->len);

	snprintf(s, sizeof(s), "%s/b-200-2", d->traces);
	assert_int_equal(mkdir(s, 0700), 0);
	t_metadata(s, 200, "beta");
	f->len = 0;
	memset(&r, 0, sizeof(r));
	t_job(&r, 2500, 9, 90, NULL);
	t_rec_begin(&r, 17, 6000);
	t_rec_str(&r, "(null)");
	t_rec_str(&r, "tab\there");
	t_rec_end(&r);
	t_packet(f, 201, 0, 0, 2500, 6000, &r);
	t_write(s, "stream-201", f->b, f->len);
	free(f);
}

static void
t_clean(struct t_dir *d)
{
	nftw(d->base, t_rm, 16, FTW_DEPTH | FTW_PHYS);
}

struct t_errs {
	char		 msgs[8][512];
	int		 n;
};

static void
t_err_cb(void *arg, const char *msg)
{
	struct t_errs	*e = arg;

	if (e->n < 8)
		snprintf(e->msgs[e->n], sizeof(e->msgs[0]), "%s", msg);
	e->n++;
}

/* Every item of the traces as one line: "NS TID WHAT", rendered. */
static size_t
t_read_all(const char *traces, struct reader_opts *o, char out[][160],
    size_t max, struct t_errs *e)
{
	struct reader	*r;
	const struct reader_item *it;
	struct strbuf	 b;
	struct fmt	*f;
	size_t		 n = 0;
	int		 rc, nomem;

	assert_non_null(r = reader_new(o, t_err_cb, e));
	assert_int_equal(reader_add(r, traces), 0);
	strbuf_init(&b);
	while ((rc = reader_next(r, &it)) > 0) {
		assert_true(n < max);
		strbuf_reset(&b);
		if (it->kind == READER_LOST)
			strbuf_addf(&b, "LOST %llu other %llu full %llu",
			    (unsigned long long)it->lost,
			    (unsigned long long)it->causes[READER_CAUSE_OTHER],
			    (unsigned long long)
			    it->causes[TRACED_DROP_RING_FULL]);
		else if ((f = fmt_compile(it->ev->cls, &nomem)) != NULL) {
			fmt_render(f, it->ev, &b);
			fmt_free(f);
		} else
			fmt_render_raw(it->ev, &b);
		snprintf(out[n++], 160, "%lld %llu %s",
		    (long long)(it->ns - (int64_t)T_OFFSET_S * 1000000000),
		    (unsigned long long)it->thread->tid, b.s);
	}
	assert_int_equal(rc, 0);
	strbuf_free(&b);
	reader_free(r);
	return n;
}

static void
test_reader_merges_sessions_cut_streams_and_losses(void **state)
{
	static const char *const want[] = {
		"1000 101 job 1 in 10 ns by w0",
		"2000 102 job 2 in 20 ns by w1",
		"2500 201 job 9 in 90 ns by (null)",
		"3000 101 job 3 in 30 ns by w0",
		"4000 102 crc 0x0badcafe small   -3| at 0xdeadbeef  | ok 1 ?",
		"5000 101 job 5 in 50 ns by w0",
		"6000 201 { a = \"(null)\", b = \"tab\\there\" }",
		"7000 101 LOST 4 other 0 full 4",
		"7000 101 job 7 in 70 ns by w0",
		"8000 101 LOST 3 other 3 full 0",
	};
	struct reader_opts o;
	struct t_errs	 e;
	struct t_dir	 d;
	char		 got[32][160];
	size_t		 n, i;

	(void)state;
	t_make(&d);
	memset(&e, 0, sizeof(e));
	reader_opts_init(&o);
	n = t_read_all(d.traces, &o, got, 32, &e);
	for (i = 0; i < n && i < sizeof(want) / sizeof(want[0]); i++)
		assert_string_equal(got[i], want[i]);
	assert_int_equal(n, sizeof(want) / sizeof(want[0]));
	assert_int_equal(e.n, 0);
	t_clean(&d);
}

static void
test_reader_filters(void **state)
{
	struct reader_opts o;
	struct t_errs	 e;
	struct t_dir	 d;
	char		 got[32][160], err[128];
	char		*argv[] = { (char *)"--event", (char *)"demo:j*",
			    (char *)"--tid", (char *)"101", (char *)"--since",
			    (char *)"+2000ns", (char *)"--until",
			    (char *)"+5500ns", (char *)"--pid", (char *)"x",
			    (char *)"--lost", (char *)"--limit", (char *)"1" };
	size_t		 n;
	int		 i = 0;

	(void)state;
	t_make(&d);
	memset(&e, 0, sizeof(e));
	reader_opts_init(&o);
	while (i < 8)
		assert_int_equal(reader_opt(&o, 13, argv, &i, err,
		    sizeof(err)), 1);
	assert_int_equal(reader_opt(&o, 13, argv, &i, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "expected a number"));
	/* [1000 + 2000, 1000 + 6000] of thread 101's jobs. */
	n = t_read_all(d.traces, &o, got, 32, &e);
	assert_int_equal(n, 2);
	assert_string_equal(got[0], "3000 101 job 3 in 30 ns by w0");
	assert_string_equal(got[1], "5000 101 job 5 in 50 ns by w0");
	reader_opts_free(&o);

	reader_opts_init(&o);
	i = 10;
	assert_int_equal(reader_opt(&o, 13, argv, &i, err, sizeof(err)), 1);
	n = t_read_all(d.traces, &o, got, 32, &e);
	assert_int_equal(n, 2);
	assert_string_equal(got[0], "7000 101 LOST 4 other 0 full 4");
	assert_int_equal(reader_opt(&o, 13, argv, &i, err, sizeof(err)), 1);
	n = t_read_all(d.traces, &o, got, 32, &e);
	assert_int_equal(n, 1);
	reader_opts_free(&o);
	assert_int_equal(e.n, 0);
	t_clean(&d);
}

/* A corrupt packet is said with its file and offset, and skipped. */
static void
test_reader_skips_a_corrupt_packet(void **state)
{
	struct reader_opts o;
	struct t_errs	 e;
	struct t_dir	 d;
	char		 got[32][160], path[512];
	size_t		 n;
	int		 fd;

	(void)state;
	t_make(&d);
	/* The second packet of stream-101 (88 + 2 records of 40 bytes
	 * on): its magic. */
	snprintf(path, sizeof(path), "%s/a-100-1/stream-101", d.traces);
	assert_true((fd = open(path, O_WRONLY)) != -1);
	assert_int_equal(pwrite(fd, "XXXX", 4, CTF_PACKET_HDR_SIZE + 2 * 40),
	    4);
	close(fd);
	memset(&e, 0, sizeof(e));
	reader_opts_init(&o);
	n = t_read_all(d.traces, &o, got, 32, &e);
	assert_int_equal(e.n, 1);
	assert_non_null(strstr(e.msgs[0], "a-100-1/stream-101: offset 168: "
	    "bad packet magic"));
	/* Everything but job 5 (in the corrupt packet), in order; the
	 * packet the next file misses (packet_seq_num 1) said at the end
	 * of the one before. */
	assert_int_equal(n, 10);
	assert_string_equal(got[3], "3000 101 job 3 in 30 ns by w0");
	assert_string_equal(got[4], "3000 101 LOST 0 other 0 full 0");
	assert_string_equal(got[5], "4000 102 crc 0x0badcafe small   -3| at "
	    "0xdeadbeef  | ok 1 ?");
	assert_string_equal(got[7], "7000 101 LOST 4 other 0 full 4");
	assert_string_equal(got[9], "8000 101 LOST 3 other 3 full 0");
	t_clean(&d);
}

/* The windowed walk gives what the whole-buffer walk gives, for every
 * window size from 1 byte. */
static void
test_reader_windows_of_any_size(void **state)
{
	struct tracedir_meta *m;
	struct tracedir_stream ws, st;
	struct tracedir_event *ev1, *ev2;
	struct t_dir	 d;
	enum tracedir_item a, b;
	uint8_t		*buf, *md;
	char		 path[512], err[256];
	size_t		 len, mdlen, w, base;

	(void)state;
	t_make(&d);
	snprintf(path, sizeof(path), "%s/a-100-1/metadata", d.traces);
	assert_int_equal(tracedir_read_file(path, 1 << 20, &md, &mdlen, err,
	    sizeof(err)), 0);
	assert_int_equal(tracedir_meta_parse((char *)md, mdlen, path, &m, err,
	    sizeof(err)), 0);
	free(md);
	snprintf(path, sizeof(path), "%s/a-100-1/stream-102", d.traces);
	assert_int_equal(tracedir_read_file(path, 1 << 20, &buf, &len, err,
	    sizeof(err)), 0);
	assert_non_null(ev1 = malloc(sizeof(*ev1)));
	assert_non_null(ev2 = malloc(sizeof(*ev2)));
	for (w = 1; w <= len; w += w < 64 ? 1 : 17) {
		size_t	 cur = w, fed = SIZE_MAX;

		tracedir_stream_init(&st, m, buf, len);
		tracedir_stream_open(&ws, m, len);
		do {
			a = tracedir_stream_next(&st, ev1);
			while ((b = tracedir_stream_next(&ws, ev2)) ==
			    TRACEDIR_MORE) {
				base = tracedir_stream_keep(&ws);
				/* Not enough for the item: a larger window. */
				if (base == fed)
					cur *= 2;
				else
					cur = w;
				fed = base;
				tracedir_stream_feed(&ws, buf + base,
				    len - base < cur ? len - base : cur, base);
			}
			assert_int_equal(a, b);
			if (a == TRACEDIR_EVENT) {
				assert_int_equal(ev1->ts, ev2->ts);
				assert_int_equal(ev1->off, ev2->off);
				assert_ptr_equal(ev1->cls, ev2->cls);
				assert_int_equal(ev1->values[0].u,
				    ev2->values[0].u);
			}
		} while (a > TRACEDIR_END);
		assert_int_equal(a, TRACEDIR_END);
	}
	free(ev1);
	free(ev2);
	free(buf);
	tracedir_meta_free(m);
	t_clean(&d);
}

/* ---- simpletrace, every byte -------------------------------------------- */

/* A cursor over a simpletrace file: each read checks it stays inside. */
struct st_in {
	const uint8_t	*p;
	size_t		 len;
	size_t		 pos;
};

static uint64_t
st_u64(struct st_in *in)
{
	uint64_t v;

	assert_true(in->len - in->pos >= 8);
	memcpy(&v, in->p + in->pos, 8);
	in->pos += 8;
	return v;
}

static uint32_t
st_u32(struct st_in *in)
{
	uint32_t v;

	assert_true(in->len - in->pos >= 4);
	memcpy(&v, in->p + in->pos, 4);
	in->pos += 4;
	return v;
}

static void
st_str(struct st_in *in, const char *want)
{
	uint32_t n = st_u32(in);

	assert_int_equal(n, strlen(want));
	assert_true(in->len - in->pos >= n);
	assert_memory_equal(in->p + in->pos, want, n);
	in->pos += n;
}

static void
st_mapping(struct st_in *in, uint64_t id, const char *name)
{
	assert_int_equal(st_u64(in), 0);
	assert_int_equal(st_u64(in), id);
	st_str(in, name);
}

/* An event record's fixed part; returns its length field. */
static uint32_t
st_event(struct st_in *in, uint64_t id, uint64_t ns, uint32_t pid)
{
	uint32_t len;

	assert_int_equal(st_u64(in), 1);
	assert_int_equal(st_u64(in), id);
	assert_int_equal(st_u64(in), ns);
	len = st_u32(in);
	assert_int_equal(st_u32(in), pid);
	return len;
}

static void
st_job(struct st_in *in, uint64_t id, uint64_t ns, uint32_t pid, int64_t job,
    uint64_t took, const char *who)
{
	size_t	 start = in->pos;

	assert_int_equal(st_event(in, id, ns, pid), 24 + 8 + 8 + 4 +
	    strlen(who));
	assert_int_equal(st_u64(in), (uint64_t)job);
	assert_int_equal(st_u64(in), took);
	st_str(in, who);
	assert_int_equal(in->pos - start, 8 + 24 + 8 + 8 + 4 + strlen(who));
}

static void
st_open(const char *dir, const char *name, struct st_in *in, uint8_t **buf)
{
	char	 path[512], err[256];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	assert_int_equal(tracedir_read_file(path, 1 << 20, buf, &in->len, err,
	    sizeof(err)), 0);
	in->p = *buf;
	in->pos = 0;
	assert_int_equal(st_u64(in), UINT64_C(0xffffffffffffffff));
	assert_int_equal(st_u64(in), UINT64_C(0xf2b177cb0aa429b4));
	assert_int_equal(st_u64(in), 4);
}

static void
test_export_simpletrace_every_byte(void **state)
{
	struct t_dir	 d;
	struct st_in	 in;
	uint8_t		*buf;
	char		 out[256], te[4096];
	char		*argv[5];
	size_t		 len;
	int		 fd;
	ssize_t		 n;

	(void)state;
	t_make(&d);
	snprintf(out, sizeof(out), "%s/st", d.base);
	argv[0] = (char *)"--format";
	argv[1] = (char *)"simpletrace";
	argv[2] = (char *)"-o";
	argv[3] = out;
	argv[4] = d.traces;
	assert_int_equal(export_main(5, argv), EXIT_DONE);

	/* Process 100: ids in order of first use, the losses dropped
	 * records where they happened, ns of the session clock. */
	st_open(out, "trace-100", &in, &buf);
	st_mapping(&in, 0, "job");
	st_job(&in, 0, 1000, 100, 1, 10, "w0");
	st_job(&in, 0, 2000, 100, 2, 20, "w1");
	st_job(&in, 0, 3000, 100, 3, 30, "w0");
	st_mapping(&in, 1, "crc");
	assert_int_equal(st_event(&in, 1, 4000, 100), 24 + 4 * 8);
	assert_int_equal(st_u64(&in), 0x0badcafe);
	assert_int_equal(st_u64(&in), (uint64_t)-3);
	assert_int_equal(st_u64(&in), 0xdeadbeef);
	assert_int_equal(st_u64(&in), 1);
	st_job(&in, 0, 5000, 100, 5, 50, "w0");
	assert_int_equal(st_event(&in, UINT64_C(0xfffffffffffffffe), 7000,
	    100), 32);
	assert_int_equal(st_u64(&in), 4);
	st_job(&in, 0, 7000, 100, 7, 70, "w0");
	assert_int_equal(st_event(&in, UINT64_C(0xfffffffffffffffe), 8000,
	    100), 32);
	assert_int_equal(st_u64(&in), 3);
	assert_int_equal(in.pos, in.len);
	free(buf);

	/* Process 200: a NULL string is length 0, "(null)" is itself. */
	st_open(out, "trace-200", &in, &buf);
	st_mapping(&in, 0, "job");
	st_job(&in, 0, 2500, 200, 9, 90, "");
	st_mapping(&in, 1, "note");
	assert_int_equal(st_event(&in, 1, 6000, 200), 24 + 4 + 6 + 4 + 8);
	st_str(&in, "(null)");
	st_str(&in, "tab\there");
	assert_int_equal(in.pos, in.len);
	free(buf);

	/* The declarations simpletrace.py needs, as the metadata has them. */
	snprintf(te, sizeof(te), "%s/trace-events", out);
	assert_true((fd = open(te, O_RDONLY)) != -1);
	assert_true((n = read(fd, te, sizeof(te) - 1)) > 0);
	close(fd);
	te[n] = '\0';
	len = strlen(te);
	assert_true(len > 0);
	assert_non_null(strstr(te, "\njob(int id, uint64_t ns, const char "
	    "*who) \"job %d in %\" PRIu64 \" ns by %s\"\n"));
	assert_non_null(strstr(te, "\ncrc(uint32_t crc, int8_t small, void "
	    "*p, bool ok) "));
	assert_non_null(strstr(te, "\nnote(const char *a, const char *b) "
	    "\"\"\n"));
	t_clean(&d);
}

/* ---- format strings ------------------------------------------------------- */

static void
test_format_unquotes_pri_and_two_formats(void **state)
{
	char	*s;

	(void)state;
	assert_non_null(s = fmt_unquote("\"a %\" PRIx64 \" b %\" PRId8 "
	    "\"\\t\\x41\\101\""));
	assert_string_equal(s, "a %llx b %hhd\tAA");
	free(s);
	assert_non_null(s = fmt_unquote("\"trans %d\", \"real %u\""));
	assert_string_equal(s, "real %u");
	free(s);
	assert_null(fmt_unquote("\"open"));
	assert_null(fmt_unquote("\"a\" PRIz64"));
	assert_null(fmt_unquote("\"a\" \"\\0\""));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reader_merges_sessions_cut_streams_and_losses),
		cmocka_unit_test(test_reader_filters),
		cmocka_unit_test(test_reader_skips_a_corrupt_packet),
		cmocka_unit_test(test_reader_windows_of_any_size),
		cmocka_unit_test(test_export_simpletrace_every_byte),
		cmocka_unit_test(test_format_unquotes_pri_and_two_formats),
	};

	tevents_free(&t_te);
	return cmocka_run_group_tests_name("reader", tests, NULL, NULL);
}
