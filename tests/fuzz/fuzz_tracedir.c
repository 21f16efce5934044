/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * libFuzzer target: the pure core of tracectl's trace reader
 * (ctl/tsdl.c, ctl/tracedir-stream.c), on a metadata text and a stream
 * file.  The input is
 *
 *   u16 LE  N, the metadata's length
 *   N bytes the metadata text
 *   rest    the stream file
 *
 * With N = 0 the stream is read with a fixed metadata (below, the
 * dialect of daemon/ctf.c for the events of tests/helpers), so that
 * the fuzzer spends its time on streams instead of on metadata that
 * does not parse.  Metadata and stream are copied into buffers of
 * exactly their size, so that ASan sees a read one byte past either.
 *
 * Oracles: a metadata that parses has sorted, distinct class ids and
 * the fields the walk needs; a walk ends (after at most one item per
 * byte, plus the end); every packet lies inside the file with its
 * content inside it; every event lies inside its packet's content, has
 * its timestamp in [begin, end] and not before the previous one, and
 * its strings end with a NUL inside the buffer; nanoseconds never go
 * back; an error has a message and an offset inside the file, and
 * stays.
 *
 * Each stream is walked twice: whole, and as the reader walks it, in
 * small windows with resync after each error (walk_windows()).  A
 * metadata text may carry trace-events lines in comments; a note that
 * parses is checked against its event's fields.
 *
 * The seeds in tests/fuzz/corpus/tracedir/ were made from real traces
 * of tests/helpers/emit (one thread, and two overflowing 8K rings for
 * the losses and traced:lost records): the session's metadata and its
 * stream cut after a whole packet; the N = 0 seeds carry the fixed
 * metadata's uuid in their packet headers.
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tracedir.h"

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char fixed_metadata[] =
    "/* CTF 1.8 */\n"
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
    "trace {\n"
    "\tmajor = 1; minor = 8;\n"
    "\tuuid = \"2a6422d0-6cee-11e0-8c08-cb07d7b3a564\";\n"
    "\tbyte_order = le;\n"
    "\tpacket.header := struct {\n"
    "\t\ttraced_u32 magic; traced_u8 uuid[16];\n"
    "\t\ttraced_u32 stream_id; traced_u64 stream_instance_id;\n"
    "\t};\n"
    "};\n"
    "env { hostname = \"fuzz\"; procname = \"emit\"; vpid = 1; };\n"
    "clock {\n"
    "\tname = \"tsc\";\n"
    "\tuuid = \"7d1e9a52-6cee-11e0-8c08-cb07d7b3a565\";\n"
    "\tfreq = 2096037995; precision = 1;\n"
    "\toffset_s = 1795160849; offset = 1067060854; absolute = FALSE;\n"
    "};\n"
    "typealias integer { size = 64; align = 64; signed = false;"
    " map = clock.tsc.value; } := traced_clock;\n"
    "stream {\n"
    "\tid = 0;\n"
    "\tpacket.context := struct {\n"
    "\t\ttraced_clock timestamp_begin; traced_clock timestamp_end;\n"
    "\t\ttraced_u64 content_size; traced_u64 packet_size;\n"
    "\t\ttraced_u64 packet_seq_num; traced_u64 events_discarded;\n"
    "\t\ttraced_u32 tid;\n"
    "\t};\n"
    "\tevent.header := struct { traced_u32 id; traced_clock timestamp; };\n"
    "};\n"
    "event { name = \"traced:lost\"; id = 0; stream_id = 0;\n"
    "\tfields := struct { traced_u64 count; traced_u64 ring_full;\n"
    "\ttraced_u64 nested; traced_u64 disconnected; traced_u64 paused; };\n"
    "};\n"
    "event { name = \"helpers:test_mixed\"; id = 16; stream_id = 0;\n"
    "\tfields := struct { traced_u64 seq; traced_s64 worker;\n"
    "\ttraced_ptr ptr; traced_u64 flag; string str; };\n"
    "};\n"
    "event { name = \"helpers:test_ints\"; id = 17; stream_id = 0;\n"
    "\tfields := struct { traced_s64 a; traced_s64 b; traced_s64 c;\n"
    "\ttraced_s64 d; traced_u64 e; traced_u64 f; };\n"
    "};\n"
    "event { name = \"helpers:test_tick\"; id = 18; stream_id = 0;\n"
    "\tfields := struct { traced_u64 seq; }; };\n"
    "event { name = \"helpers:test_marker\"; id = 19; stream_id = 0;\n"
    "\tfields := struct { traced_u64 seq; }; };\n"
    "event { name = \"helpers:test_turned_off\"; id = 20; stream_id = 0;\n"
    "\tfields := struct { traced_u64 seq; }; };\n"
    "event { name = \"helpers:test_strs\"; id = 21; stream_id = 0;\n"
    "\tfields := struct { string a; string b; traced_u64 n; }; };\n"
    "event { name = \"helpers:test_none\"; id = 22; stream_id = 0; };\n";

static void
check_meta(const struct tracedir_meta *m)
{
	size_t	 i;

	assert(m->clock_freq >= 1 && m->clock_offset < m->clock_freq);
	assert(m->h_magic >= 0 && (unsigned)m->h_magic < m->pkt_header.n);
	assert(m->h_uuid >= 0 && (unsigned)m->h_uuid < m->pkt_header.n);
	assert(m->c_content >= 0 && m->c_packet >= 0 && m->c_begin >= 0 &&
	    m->c_end >= 0 && m->c_discarded >= 0);
	assert(m->e_id >= 0 && m->e_ts >= 0);
	assert(m->nclasses <= TRACEDIR_CLASSES_MAX);
	for (i = 0; i < m->nclasses; i++) {
		assert(i == 0 || m->classes[i - 1].id < m->classes[i].id);
		assert(tracedir_meta_class(m, m->classes[i].id) ==
		    &m->classes[i]);
		assert(m->classes[i].fields.n <= TRACEDIR_FIELDS_MAX);
	}
}

static void
walk(const struct tracedir_meta *m, const uint8_t *buf, size_t len)
{
	struct tracedir_stream	 st;
	struct tracedir_event	 ev;
	enum tracedir_item	 it;
	const struct tracedir_value *v;
	size_t			 items = 0, pkt_start = 0, content_end = 0;
	uint64_t		 last_ts = 0;
	int64_t			 ns, last_ns = INT64_MIN;
	unsigned		 i;

	tracedir_stream_init(&st, m, buf, len);
	while ((it = tracedir_stream_next(&st, &ev)) > TRACEDIR_END) {
		assert(++items <= len);
		if (it == TRACEDIR_PACKET) {
			pkt_start = st.packet.off;
			assert(pkt_start < len);
			assert(st.packet.content <= st.packet.size);
			assert(st.packet.size <= len - pkt_start);
			assert(st.packet.ts_begin <= st.packet.ts_end);
			assert(st.packet.ts_begin >= last_ts);
			content_end = pkt_start + st.packet.content;
			last_ts = st.packet.ts_begin;
			continue;
		}
		assert(ev.cls != NULL);
		assert(ev.off >= pkt_start && ev.off < content_end);
		assert(ev.ts >= st.packet.ts_begin &&
		    ev.ts <= st.packet.ts_end && ev.ts >= last_ts);
		assert(ev.nvalues == ev.cls->fields.n);
		for (i = 0; i < ev.nvalues; i++) {
			v = &ev.values[i];
			assert(v->off >= ev.off && v->off < content_end);
			if (v->decl->type.kind == TRACEDIR_STRING) {
				assert((const uint8_t *)v->s + v->len <
				    buf + content_end);
				assert(v->s[v->len] == '\0');
				assert(strlen(v->s) == v->len);
			}
		}
		ns = tracedir_ns(m, ev.ts);
		assert(ns >= last_ns);
		last_ns = ns;
		last_ts = ev.ts;
	}
	if (it == TRACEDIR_ERROR) {
		assert(st.err[0] != '\0');
		assert(st.err_off <= len);
		assert(tracedir_stream_next(&st, &ev) == TRACEDIR_ERROR);
	} else
		assert(st.pos == len);
}

/*
 * The walk the reader does: windows of a size taken from the stream's
 * first byte (1 to 256 bytes, grown when an item needs more), each a
 * fresh copy of exactly its bytes, so that ASan sees a read past it;
 * after an error, resync and go on.  Oracles: the same items as the
 * whole-buffer walk up to the first error; then every later item still
 * lies inside the file, each resync moves forward, and the walk ends.
 */
static void
walk_windows(const struct tracedir_meta *m, const uint8_t *buf, size_t len)
{
	struct tracedir_stream	 st, ws;
	struct tracedir_event	 ev, wev;
	enum tracedir_item	 it, wit;
	uint8_t			*win = NULL;
	size_t			 w = len > 0 ? 1 + buf[0] : 1, cur = w;
	size_t			 items = 0, fed = SIZE_MAX, keep, n;
	int			 same = 1, errors = 0;
	uint64_t		 last_err = 0;

	tracedir_stream_init(&st, m, buf, len);
	tracedir_stream_open(&ws, m, len);
	for (;;) {
		wit = tracedir_stream_next(&ws, &wev);
		if (wit == TRACEDIR_MORE) {
			keep = tracedir_stream_keep(&ws);
			assert(keep <= len);
			cur = keep == fed ? cur * 2 : w;
			fed = keep;
			n = len - keep < cur ? len - keep : cur;
			free(win);
			win = malloc(n != 0 ? n : 1);
			assert(win != NULL);
			memcpy(win, buf + keep, n);
			tracedir_stream_feed(&ws, win, n, keep);
			assert(++items <= 64 * len + 64);
			continue;
		}
		assert(++items <= 64 * len + 64);
		if (same) {
			it = tracedir_stream_next(&st, &ev);
			if (it != wit)
				assert(it == TRACEDIR_ERROR ||
				    wit == TRACEDIR_ERROR);
			else if (it == TRACEDIR_EVENT)
				assert(ev.ts == wev.ts && ev.off == wev.off &&
				    ev.cls == wev.cls);
			if (it == TRACEDIR_ERROR || it != wit)
				same = 0;
		}
		if (wit == TRACEDIR_END)
			break;
		if (wit == TRACEDIR_ERROR) {
			assert(ws.err_off <= len);
			/* Each error is in a packet that starts later. */
			assert(errors == 0 || ws.pkt_start > last_err);
			last_err = ws.pkt_start;
			errors++;
			tracedir_stream_resync(&ws);
			continue;
		}
		if (wit == TRACEDIR_PACKET)
			assert(ws.packet.off + ws.packet.size <= len);
		else
			assert(wev.off < len);
	}
	free(win);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct tracedir_meta *fixed;
	struct tracedir_meta	*m;
	char			 err[TRACEDIR_ERR_MAX], *text;
	uint8_t			*stream;
	size_t			 n, len;

	if (fixed == NULL) {
		if (tracedir_meta_parse(fixed_metadata,
		    sizeof(fixed_metadata) - 1, "fixed", &fixed, err,
		    sizeof(err)) != 0)
			abort();
	}
	if (size < 2)
		return 0;
	n = (size_t)data[0] | (size_t)data[1] << 8;
	if (n > size - 2)
		n = size - 2;
	len = size - 2 - n;
	stream = malloc(len != 0 ? len : 1);
	assert(stream != NULL);
	memcpy(stream, data + 2 + n, len);

	if (n == 0) {
		walk(fixed, stream, len);
		walk_windows(fixed, stream, len);
	} else {
		text = malloc(n);
		assert(text != NULL);
		memcpy(text, data + 2, n);
		if (tracedir_meta_parse(text, n, "metadata", &m, err,
		    sizeof(err)) == 0) {
			check_meta(m);
			walk(m, stream, len);
			walk_windows(m, stream, len);
			tracedir_meta_free(m);
		} else
			assert(strncmp(err, "metadata:", 9) == 0);
		free(text);
	}
	free(stream);
	return 0;
}
