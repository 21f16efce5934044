/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * Tests of proto/wire.c, the codec of client.sock and control.sock:
 * every message type decodes and its fields are reachable; every check
 * wire_decode() promises rejects with the right errno and a reason
 * (truncation, size, type, descriptors, version, strings, ranges, the
 * control request's arguments); wire_ctl_request_encode() round trips
 * and refuses what does not fit; the RULES message and its memfd's
 * layout (wire_rules_parse()), valid and every way it can be wrong; and
 * a deterministic mutation loop over valid messages, decoded from
 * exact-size heap buffers so that the sanitizer build catches any read
 * past the message.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "functab.h"
#include "ring.h"
#include "wire.h"

/* Large enough for any message, and for an oversized one. */
static _Alignas(8) unsigned char mbuf[TRACED_MSG_MAX + 64];

/* ---- valid messages ------------------------------------------------ */

static size_t
make_hello(void *buf)
{
	struct traced_msg_hello *h = buf;

	memset(h, 0, sizeof(*h));
	wire_hdr_init(&h->hdr, TRACED_MSG_HELLO, sizeof(*h));
	h->version = TRACED_PROTOCOL_VERSION;
	memcpy(h->comm, "traced-example", sizeof("traced-example"));
	h->lost_disconnected = 0x0123456789abcdefull;
	return sizeof(*h);
}

static size_t
make_provider(void *buf)
{
	struct traced_msg_provider *p = buf;

	memset(p, 0, sizeof(*p));
	wire_hdr_init(&p->hdr, TRACED_MSG_PROVIDER, sizeof(*p));
	p->index = 3;
	p->id_base = 16;
	p->nevents = 12;
	p->desc_size = 777;
	memcpy(p->name, "example", sizeof("example"));
	return sizeof(*p);
}

static size_t
make_ring(void *buf)
{
	struct traced_msg_ring *r = buf;

	memset(r, 0, sizeof(*r));
	wire_hdr_init(&r->hdr, TRACED_MSG_RING, sizeof(*r));
	r->index = 5;
	r->tid = 4242;
	r->max_order = 16;
	return sizeof(*r);
}

static size_t
make_notify(void *buf)
{
	struct traced_msg_notify *n = buf;

	memset(n, 0, sizeof(*n));
	wire_hdr_init(&n->hdr, TRACED_MSG_NOTIFY, sizeof(*n));
	n->index = 9;
	return sizeof(*n);
}

static size_t
make_welcome(void *buf)
{
	struct traced_msg_welcome *w = buf;

	memset(w, 0, sizeof(*w));
	wire_hdr_init(&w->hdr, TRACED_MSG_WELCOME, sizeof(*w));
	w->version = TRACED_PROTOCOL_VERSION;
	w->session = 77;
	w->clock = TRACED_CLOCK_MONOTONIC;
	w->ring_order = TRACED_RING_ORDER_DEFAULT;
	w->paused = 1;
	return sizeof(*w);
}

static size_t
make_ack(void *buf)
{
	struct traced_msg_provider_ack *a = buf;

	memset(a, 0, sizeof(*a));
	wire_hdr_init(&a->hdr, TRACED_MSG_PROVIDER_ACK, sizeof(*a));
	a->index = 2;
	a->status = 0;
	return sizeof(*a);
}

/* A CTL_REQUEST with 'argc' arguments, built by hand. */
static size_t
make_ctl_request_raw(void *buf, uint32_t flags, uint32_t argc,
    const char *bytes, size_t nbytes)
{
	struct traced_msg_ctl_request *r = buf;
	size_t len = sizeof(*r) + nbytes;

	memset(r, 0, sizeof(*r));
	wire_hdr_init(&r->hdr, TRACED_MSG_CTL_REQUEST, (uint32_t)len);
	r->version = TRACED_PROTOCOL_VERSION;
	r->flags = flags;
	r->argc = argc;
	memcpy((char *)buf + sizeof(*r), bytes, nbytes);
	return len;
}

static size_t
make_ctl_request(void *buf)
{
	return make_ctl_request_raw(buf, TRACED_CTL_JSON, 3,
	    "list\0--all\0\0", 12);
}

static size_t
make_ctl_line(void *buf)
{
	struct traced_msg_hdr *h = buf;
	static const char text[] = "session 1: 3 clients";
	size_t len = sizeof(*h) + sizeof(text) - 1;

	wire_hdr_init(h, TRACED_MSG_CTL_LINE, (uint32_t)len);
	memcpy(h + 1, text, sizeof(text) - 1);
	return len;
}

static size_t
make_ctl_end(void *buf)
{
	struct traced_msg_ctl_end *e = buf;
	static const char text[] = "no such session";
	size_t len = sizeof(*e) + sizeof(text) - 1;

	memset(e, 0, sizeof(*e));
	wire_hdr_init(&e->hdr, TRACED_MSG_CTL_END, (uint32_t)len);
	e->status = TRACED_CTL_ERROR;
	e->count = 4;
	memcpy(e + 1, text, sizeof(text) - 1);
	return len;
}

/* ---- helpers ------------------------------------------------------- */

static void
decode_ok(const void *buf, size_t len, int nfds, struct wire_msg *m)
{
	const char *why = NULL;
	int rc;

	rc = wire_decode(buf, len, nfds, m, &why);
	if (rc != 0)
		fail_msg("decode failed: %d (%s)", rc, why ? why : "(null)");
	assert_ptr_equal(m->u.hdr, buf);
}

/* Decoding must fail with 'err' and a reason containing 'part'. */
static void
decode_fails(const void *buf, size_t len, int nfds, int err,
    const char *part)
{
	struct wire_msg m;
	const char *why = NULL;
	int rc;

	rc = wire_decode(buf, len, nfds, &m, &why);
	if (rc != err)
		fail_msg("decode returned %d (%s), expected %d (%s)", rc,
		    why ? why : "(null)", err, part);
	assert_non_null(why);
	if (strstr(why, part) == NULL)
		fail_msg("reason '%s' does not say '%s'", why, part);
}

static struct traced_msg_hdr *
hdr_of(void *buf)
{
	return buf;
}

/* ---- every type decodes ---------------------------------------------- */

static void
test_wire_decodes_hello(void **state)
{
	struct wire_msg m;
	size_t len = make_hello(mbuf);

	(void)state;
	decode_ok(mbuf, len, 0, &m);
	assert_int_equal(m.type, TRACED_MSG_HELLO);
	assert_int_equal(m.u.hello->version, TRACED_PROTOCOL_VERSION);
	assert_string_equal(m.u.hello->comm, "traced-example");
	assert_true(m.u.hello->lost_disconnected == 0x0123456789abcdefull);
	assert_int_equal(m.payload_len, 0);
	assert_ptr_equal(m.payload, (const char *)mbuf + len);

	/* An empty comm is allowed (a thread may have none). */
	memset(((struct traced_msg_hello *)(void *)mbuf)->comm, 0,
	    TRACED_COMM_MAX);
	decode_ok(mbuf, len, 0, &m);
	assert_string_equal(m.u.hello->comm, "");
	/* 15 characters and the NUL fill the array exactly. */
	memcpy(((struct traced_msg_hello *)(void *)mbuf)->comm,
	    "abcdefghijklmno", 16);
	decode_ok(mbuf, len, 0, &m);
	assert_string_equal(m.u.hello->comm, "abcdefghijklmno");
}

static void
test_wire_decodes_provider(void **state)
{
	struct wire_msg m;
	size_t len = make_provider(mbuf);

	(void)state;
	decode_ok(mbuf, len, 2, &m);
	assert_int_equal(m.type, TRACED_MSG_PROVIDER);
	assert_int_equal(m.u.provider->index, 3);
	assert_int_equal(m.u.provider->id_base, 16);
	assert_int_equal(m.u.provider->nevents, 12);
	assert_int_equal(m.u.provider->desc_size, 777);
	assert_string_equal(m.u.provider->name, "example");
	assert_int_equal(m.payload_len, 0);
}

static void
test_wire_decodes_ring(void **state)
{
	struct wire_msg m;
	size_t len = make_ring(mbuf);

	(void)state;
	decode_ok(mbuf, len, 1, &m);
	assert_int_equal(m.type, TRACED_MSG_RING);
	assert_int_equal(m.u.ring->index, 5);
	assert_int_equal(m.u.ring->tid, 4242);
	assert_int_equal(m.u.ring->max_order, 16);
}

/*
 * The ring pool: SPARE_ASK names a size or 0 (the daemon's); SPARE
 * names one, carries the ring, and nothing out of range passes.
 */
static void
test_wire_decodes_spare(void **state)
{
	struct traced_msg_spare *sp = (struct traced_msg_spare *)mbuf;
	struct wire_msg m;
	const char *why;

	(void)state;
	memset(sp, 0, sizeof(*sp));
	wire_hdr_init(&sp->hdr, TRACED_MSG_SPARE_ASK, sizeof(*sp));
	decode_ok(mbuf, sizeof(*sp), 0, &m);
	assert_int_equal(m.u.spare->max_order, 0);
	sp->max_order = 28;
	decode_ok(mbuf, sizeof(*sp), 0, &m);
	assert_int_equal(m.u.spare->max_order, 28);
	sp->max_order = TRACED_RING_ORDER_MAX + 1;
	assert_int_equal(wire_decode(mbuf, sizeof(*sp), 0, &m, &why),
	    -EBADMSG);
	assert_string_equal(why, "ring size out of range");
	sp->max_order = TRACED_RING_ORDER_MIN - 1;
	assert_int_equal(wire_decode(mbuf, sizeof(*sp), 0, &m, &why),
	    -EBADMSG);

	wire_hdr_init(&sp->hdr, TRACED_MSG_SPARE, sizeof(*sp));
	sp->max_order = 22;
	decode_ok(mbuf, sizeof(*sp), 1, &m);
	assert_int_equal(m.type, TRACED_MSG_SPARE);
	assert_int_equal(m.u.spare->max_order, 22);
	/* Without its ring, or naming no size: refused. */
	assert_int_equal(wire_decode(mbuf, sizeof(*sp), 0, &m, &why),
	    -EBADMSG);
	assert_string_equal(why, "missing descriptor");
	sp->max_order = 0;
	assert_int_equal(wire_decode(mbuf, sizeof(*sp), 1, &m, &why),
	    -EBADMSG);
	assert_string_equal(why, "ring size out of range");
	sp->max_order = 22;
	sp->pad = 1;
	assert_int_equal(wire_decode(mbuf, sizeof(*sp), 1, &m, &why),
	    -EBADMSG);
	assert_string_equal(why, "reserved bytes not zero");
}

static void
test_wire_decodes_notify(void **state)
{
	struct wire_msg m;
	size_t len = make_notify(mbuf);

	(void)state;
	decode_ok(mbuf, len, 0, &m);
	assert_int_equal(m.type, TRACED_MSG_NOTIFY);
	assert_int_equal(m.u.notify->index, 9);
}

static void
test_wire_decodes_welcome_with_either_clock(void **state)
{
	struct traced_msg_welcome *w = (void *)mbuf;
	struct wire_msg m;
	size_t len = make_welcome(mbuf);

	(void)state;
	decode_ok(mbuf, len, 0, &m);
	assert_int_equal(m.type, TRACED_MSG_WELCOME);
	assert_int_equal(m.u.welcome->version, TRACED_PROTOCOL_VERSION);
	assert_int_equal(m.u.welcome->session, 77);
	assert_int_equal(m.u.welcome->clock, TRACED_CLOCK_MONOTONIC);
	assert_int_equal(m.u.welcome->ring_order, TRACED_RING_ORDER_DEFAULT);
	assert_int_equal(m.u.welcome->paused, 1);
	w->clock = TRACED_CLOCK_TSC;
	decode_ok(mbuf, len, 0, &m);
	assert_int_equal(m.u.welcome->clock, TRACED_CLOCK_TSC);
}

static void
test_wire_decodes_provider_ack(void **state)
{
	struct wire_msg m;
	size_t len = make_ack(mbuf);

	(void)state;
	decode_ok(mbuf, len, 0, &m);
	assert_int_equal(m.type, TRACED_MSG_PROVIDER_ACK);
	assert_int_equal(m.u.provider_ack->index, 2);
	assert_int_equal(m.u.provider_ack->status, 0);
}

static void
test_wire_decodes_ctl_request_arguments(void **state)
{
	struct wire_msg m;
	size_t len = make_ctl_request(mbuf);

	(void)state;
	decode_ok(mbuf, len, 0, &m);
	assert_int_equal(m.type, TRACED_MSG_CTL_REQUEST);
	assert_int_equal(m.u.ctl_request->argc, 3);
	assert_int_equal(m.u.ctl_request->flags, TRACED_CTL_JSON);
	assert_string_equal(m.argv[0], "list");
	assert_string_equal(m.argv[1], "--all");
	assert_string_equal(m.argv[2], "");
	assert_null(m.argv[3]);
	/* The arguments point into the buffer, not into a copy. */
	assert_ptr_equal(m.argv[0],
	    (const char *)mbuf + sizeof(struct traced_msg_ctl_request));
	assert_int_equal(m.payload_len, 12);
}

static void
test_wire_decodes_ctl_line_text(void **state)
{
	struct wire_msg m;
	size_t len = make_ctl_line(mbuf);

	(void)state;
	decode_ok(mbuf, len, 0, &m);
	assert_int_equal(m.type, TRACED_MSG_CTL_LINE);
	assert_int_equal(m.payload_len, strlen("session 1: 3 clients"));
	assert_memory_equal(m.payload, "session 1: 3 clients", m.payload_len);
	assert_ptr_equal(m.payload, (const char *)mbuf + 8);

	/* An empty line is a bare header. */
	wire_hdr_init(hdr_of(mbuf), TRACED_MSG_CTL_LINE, 8);
	decode_ok(mbuf, 8, 0, &m);
	assert_int_equal(m.payload_len, 0);
}

static void
test_wire_decodes_ctl_end(void **state)
{
	struct traced_msg_ctl_end *e = (void *)mbuf;
	struct wire_msg m;
	size_t len = make_ctl_end(mbuf);
	uint32_t s;

	(void)state;
	decode_ok(mbuf, len, 0, &m);
	assert_int_equal(m.type, TRACED_MSG_CTL_END);
	assert_int_equal(m.u.ctl_end->status, TRACED_CTL_ERROR);
	assert_int_equal(m.u.ctl_end->count, 4);
	assert_int_equal(m.payload_len, strlen("no such session"));
	assert_memory_equal(m.payload, "no such session", m.payload_len);
	for (s = TRACED_CTL_OK; s <= TRACED_CTL_DENIED; s++) {
		e->status = s;
		decode_ok(mbuf, len, 0, &m);
		assert_int_equal(m.u.ctl_end->status, s);
	}
}

static void
test_wire_type_nfds_matches_protocol(void **state)
{
	(void)state;
	assert_int_equal(wire_type_nfds(TRACED_MSG_HELLO), 0);
	/* The description and the state array. */
	assert_int_equal(wire_type_nfds(TRACED_MSG_PROVIDER), 2);
	assert_int_equal(wire_type_nfds(TRACED_MSG_RING), 1);
	assert_int_equal(wire_type_nfds(TRACED_MSG_NOTIFY), 0);
	/* The process's rules and their tables. */
	assert_int_equal(wire_type_nfds(TRACED_MSG_RULES), 1);
	assert_int_equal(wire_type_nfds(TRACED_MSG_WELCOME), 0);
	assert_int_equal(wire_type_nfds(TRACED_MSG_RULES_ACK), 0);
	/* The daemon sends one: a ring from its pool. */
	assert_int_equal(wire_type_nfds(TRACED_MSG_SPARE_ASK), 0);
	assert_int_equal(wire_type_nfds(TRACED_MSG_SPARE), 1);
	assert_int_equal(wire_type_nfds(TRACED_MSG_PROVIDER_ACK), 0);
	assert_int_equal(wire_type_nfds(TRACED_MSG_CTL_REQUEST), 0);
	assert_int_equal(wire_type_nfds(TRACED_MSG_CTL_LINE), 0);
	assert_int_equal(wire_type_nfds(TRACED_MSG_CTL_END), 0);
	assert_int_equal(wire_type_nfds(0), 0);
	assert_int_equal(wire_type_nfds(TRACED_MSG_TYPE_MAX), 0);
	assert_int_equal(wire_type_nfds(UINT32_MAX), 0);
}

/* ---- framing --------------------------------------------------------- */

static void
test_wire_rejects_truncated_header(void **state)
{
	struct wire_msg m;
	size_t len;

	(void)state;
	make_hello(mbuf);
	for (len = 0; len < sizeof(struct traced_msg_hdr); len++)
		decode_fails(mbuf, len, 0, -EBADMSG, "truncated");
	/* A NULL 'why' is allowed. */
	assert_int_equal(wire_decode(mbuf, 3, 0, &m, NULL), -EBADMSG);
}

static void
test_wire_rejects_truncated_body(void **state)
{
	size_t len;

	(void)state;
	/* Shorter than the struct, with a size field that agrees. */
	for (len = 8; len < sizeof(struct traced_msg_hello); len += 8) {
		make_hello(mbuf);
		hdr_of(mbuf)->size = (uint32_t)len;
		decode_fails(mbuf, len, 0, -EBADMSG, "wrong size");
	}
	make_provider(mbuf);
	hdr_of(mbuf)->size = 80;
	decode_fails(mbuf, 80, 2, -EBADMSG, "wrong size");
	make_ctl_request(mbuf);
	hdr_of(mbuf)->size = 16;
	decode_fails(mbuf, 16, 0, -EBADMSG, "wrong size");
	make_ctl_end(mbuf);
	hdr_of(mbuf)->size = 12;
	decode_fails(mbuf, 12, 0, -EBADMSG, "wrong size");
}

static void
test_wire_rejects_size_field_mismatch(void **state)
{
	size_t len;

	(void)state;
	len = make_hello(mbuf);
	hdr_of(mbuf)->size = (uint32_t)len + 8;
	decode_fails(mbuf, len, 0, -EBADMSG, "size field");
	hdr_of(mbuf)->size = (uint32_t)len - 1;
	decode_fails(mbuf, len, 0, -EBADMSG, "size field");
	hdr_of(mbuf)->size = 0;
	decode_fails(mbuf, len, 0, -EBADMSG, "size field");
	hdr_of(mbuf)->size = UINT32_MAX;
	decode_fails(mbuf, len, 0, -EBADMSG, "size field");
	/* A line whose size field claims less than was received. */
	len = make_ctl_line(mbuf);
	hdr_of(mbuf)->size = 8;
	decode_fails(mbuf, len, 0, -EBADMSG, "size field");
}

static void
test_wire_rejects_oversized(void **state)
{
	struct wire_msg m;

	(void)state;
	memset(mbuf, 'x', sizeof(mbuf));
	/* The largest line is fine, one byte more is not. */
	wire_hdr_init(hdr_of(mbuf), TRACED_MSG_CTL_LINE, TRACED_MSG_MAX);
	decode_ok(mbuf, TRACED_MSG_MAX, 0, &m);
	assert_int_equal(m.payload_len, TRACED_MSG_MAX - 8);
	wire_hdr_init(hdr_of(mbuf), TRACED_MSG_CTL_LINE, TRACED_MSG_MAX + 1);
	decode_fails(mbuf, TRACED_MSG_MAX + 1, 0, -EBADMSG, "oversized");
	wire_hdr_init(hdr_of(mbuf), TRACED_MSG_CTL_LINE, TRACED_MSG_MAX + 64);
	decode_fails(mbuf, TRACED_MSG_MAX + 64, 0, -EBADMSG, "oversized");
	/* Also when the size field is wrapped to look small. */
	wire_hdr_init(hdr_of(mbuf), TRACED_MSG_CTL_LINE, 16);
	decode_fails(mbuf, (size_t)UINT32_MAX + 17, 0, -EBADMSG, "oversized");
}

static void
test_wire_rejects_unknown_type(void **state)
{
	static const uint32_t bad[] = {
		0, TRACED_MSG_EXIT + 1, 31, TRACED_MSG_SPARE + 1, 63,
		TRACED_MSG_CTL_REQUEST + 1, 95, TRACED_MSG_TYPE_MAX, 1000,
		UINT32_MAX,
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(mbuf, 0, 64);
		wire_hdr_init(hdr_of(mbuf), bad[i], 24);
		decode_fails(mbuf, 24, 0, -EBADMSG, "unknown message type");
		decode_fails(mbuf, 24, 1, -EBADMSG, "unknown message type");
	}
}

/* EXIT: the status as it is, any int; reserved bytes zero. */
static void
test_wire_decodes_exit(void **state)
{
	struct traced_msg_exit *ex = (struct traced_msg_exit *)mbuf;
	struct wire_msg m;

	(void)state;
	memset(ex, 0, sizeof(*ex));
	wire_hdr_init(&ex->hdr, TRACED_MSG_EXIT, sizeof(*ex));
	ex->status = -3;
	decode_ok(mbuf, sizeof(*ex), 0, &m);
	assert_int_equal(m.u.exit_->status, -3);
	ex->pad = 1;
	decode_fails(mbuf, sizeof(*ex), 0, -EBADMSG,
	    "reserved bytes not zero");
	ex->pad = 0;
	decode_fails(mbuf, sizeof(*ex), 1, -EBADMSG, "");
}

static void
test_wire_rejects_wrong_size_for_type(void **state)
{
	static size_t (*const fixed[])(void *) = {
		make_hello, make_provider, make_ring, make_notify,
		make_welcome, make_ack,
	};
	size_t i, len;
	int nfds;

	(void)state;
	for (i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
		len = fixed[i](mbuf);
		nfds = wire_type_nfds(hdr_of(mbuf)->type);
		/* Fixed-size types take no trailing bytes. */
		memset(mbuf + len, 0, 8);
		hdr_of(mbuf)->size = (uint32_t)len + 8;
		decode_fails(mbuf, len + 8, nfds, -EBADMSG, "wrong size");
		hdr_of(mbuf)->size = (uint32_t)len + 1;
		decode_fails(mbuf, len + 1, nfds, -EBADMSG, "wrong size");
		hdr_of(mbuf)->size = (uint32_t)len - 8;
		decode_fails(mbuf, len - 8, nfds, -EBADMSG, "wrong size");
	}
}

static void
test_wire_rejects_missing_descriptor(void **state)
{
	size_t len;

	(void)state;
	len = make_provider(mbuf);
	decode_fails(mbuf, len, 0, -EBADMSG, "missing descriptor");
	/* The description without the state array. */
	decode_fails(mbuf, len, 1, -EBADMSG, "missing descriptor");
	decode_fails(mbuf, len, 3, -EBADMSG, "unexpected descriptor");
	len = make_ring(mbuf);
	decode_fails(mbuf, len, 0, -EBADMSG, "missing descriptor");
	/* Two descriptors where one is due is just as wrong. */
	decode_fails(mbuf, len, 2, -EBADMSG, "unexpected descriptor");
}

static void
test_wire_rejects_unexpected_descriptor(void **state)
{
	static size_t (*const nofd[])(void *) = {
		make_hello, make_notify, make_welcome, make_ack,
		make_ctl_request, make_ctl_line, make_ctl_end,
	};
	size_t i, len;

	(void)state;
	for (i = 0; i < sizeof(nofd) / sizeof(nofd[0]); i++) {
		len = nofd[i](mbuf);
		decode_fails(mbuf, len, 1, -EBADMSG, "unexpected descriptor");
		decode_fails(mbuf, len, 3, -EBADMSG, "unexpected descriptor");
	}
}

/* ---- version --------------------------------------------------------- */

static void
test_wire_rejects_wrong_version_with_eproto(void **state)
{
	static const uint32_t bad[] = { 0, TRACED_PROTOCOL_VERSION + 1,
	    UINT32_MAX };
	struct traced_msg_hello *h = (void *)mbuf;
	struct traced_msg_welcome *w = (void *)mbuf;
	struct traced_msg_ctl_request *r = (void *)mbuf;
	size_t i, len;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		len = make_hello(mbuf);
		h->version = bad[i];
		decode_fails(mbuf, len, 0, -EPROTO, "version");
		len = make_welcome(mbuf);
		w->version = bad[i];
		decode_fails(mbuf, len, 0, -EPROTO, "version");
		len = make_ctl_request(mbuf);
		r->version = bad[i];
		decode_fails(mbuf, len, 0, -EPROTO, "version");
	}
}

/* ---- strings --------------------------------------------------------- */

static void
test_wire_rejects_bad_comm(void **state)
{
	struct traced_msg_hello *h = (void *)mbuf;
	size_t len;

	(void)state;
	len = make_hello(mbuf);
	memset(h->comm, 'a', TRACED_COMM_MAX);	/* no NUL */
	decode_fails(mbuf, len, 0, -EBADMSG, "comm");
	len = make_hello(mbuf);
	h->comm[3] = '\n';
	decode_fails(mbuf, len, 0, -EBADMSG, "comm");
	len = make_hello(mbuf);
	h->comm[0] = 0x1b;			/* ESC */
	decode_fails(mbuf, len, 0, -EBADMSG, "comm");
	len = make_hello(mbuf);
	h->comm[5] = 0x7f;
	decode_fails(mbuf, len, 0, -EBADMSG, "comm");
	/* Bytes after the NUL are not looked at. */
	len = make_hello(mbuf);
	h->comm[TRACED_COMM_MAX - 1] = '\n';
	h->comm[2] = '\0';
	{
		struct wire_msg m;

		decode_ok(mbuf, len, 0, &m);
		assert_string_equal(m.u.hello->comm, "tr");
	}
}

static void
test_wire_rejects_bad_provider_name(void **state)
{
	struct traced_msg_provider *p = (void *)mbuf;
	size_t len;

	(void)state;
	len = make_provider(mbuf);
	memset(p->name, 'n', TRACED_NAME_MAX);	/* no NUL */
	decode_fails(mbuf, len, 2, -EBADMSG, "provider name");
	len = make_provider(mbuf);
	p->name[0] = '\0';			/* empty */
	decode_fails(mbuf, len, 2, -EBADMSG, "provider name");
	len = make_provider(mbuf);
	p->name[2] = '\t';
	decode_fails(mbuf, len, 2, -EBADMSG, "provider name");
	len = make_provider(mbuf);
	p->name[0] = 0x7f;
	decode_fails(mbuf, len, 2, -EBADMSG, "provider name");
	/* The longest name, NUL in the last byte, is fine. */
	len = make_provider(mbuf);
	memset(p->name, 'n', TRACED_NAME_MAX - 1);
	p->name[TRACED_NAME_MAX - 1] = '\0';
	{
		struct wire_msg m;

		decode_ok(mbuf, len, 2, &m);
		assert_int_equal(strlen(m.u.provider->name),
		    TRACED_NAME_MAX - 1);
	}
}

/* ---- ranges ---------------------------------------------------------- */

static void
provider_ids(uint32_t id_base, uint32_t nevents, int ok)
{
	struct traced_msg_provider *p = (void *)mbuf;
	struct wire_msg m;
	size_t len = make_provider(mbuf);

	p->id_base = id_base;
	p->nevents = nevents;
	if (ok) {
		decode_ok(mbuf, len, 2, &m);
		assert_int_equal(m.u.provider->id_base, id_base);
		assert_int_equal(m.u.provider->nevents, nevents);
	} else
		decode_fails(mbuf, len, 2, -EBADMSG, "event ids");
}

static void
test_wire_provider_id_ranges(void **state)
{
	(void)state;
	provider_ids(TRACED_EVENT_ID_BASE, 1, 1);
	provider_ids(TRACED_EVENT_ID_BASE - 1, 1, 0);
	provider_ids(0, 1, 0);
	provider_ids(TRACED_EVENT_ID_BASE, 0, 0);
	provider_ids(TRACED_EVENT_ID_BASE, TRACED_PROVIDER_EVENTS_MAX, 1);
	provider_ids(TRACED_EVENT_ID_BASE, TRACED_PROVIDER_EVENTS_MAX + 1, 0);
	provider_ids(TRACED_EVENT_ID_BASE, UINT32_MAX, 0);
	/* The last id may be TRACED_EVENT_ID_MAX - 1, not more. */
	provider_ids(TRACED_EVENT_ID_MAX - 10, 10, 1);
	provider_ids(TRACED_EVENT_ID_MAX - 10, 11, 0);
	provider_ids(TRACED_EVENT_ID_MAX, 1, 0);
	/* Sums that wrap 32 bits must not pass. */
	provider_ids(UINT32_MAX, 1, 0);
	provider_ids(UINT32_MAX - 5, 10, 0);
}

static void
test_wire_provider_desc_size_range(void **state)
{
	struct traced_msg_provider *p = (void *)mbuf;
	struct wire_msg m;
	size_t len;

	(void)state;
	len = make_provider(mbuf);
	p->desc_size = 0;
	decode_fails(mbuf, len, 2, -EBADMSG, "description size");
	p->desc_size = TRACED_DESC_MAX + 1;
	decode_fails(mbuf, len, 2, -EBADMSG, "description size");
	p->desc_size = UINT32_MAX;
	decode_fails(mbuf, len, 2, -EBADMSG, "description size");
	p->desc_size = TRACED_DESC_MAX;
	decode_ok(mbuf, len, 2, &m);
	assert_int_equal(m.u.provider->desc_size, TRACED_DESC_MAX);
	p->desc_size = 1;
	decode_ok(mbuf, len, 2, &m);
}

static void
test_wire_ring_order_and_tid(void **state)
{
	struct traced_msg_ring *r = (void *)mbuf;
	struct wire_msg m;
	size_t len;

	(void)state;
	len = make_ring(mbuf);
	r->max_order = TRACED_RING_ORDER_MIN - 1;
	decode_fails(mbuf, len, 1, -EBADMSG, "ring size");
	r->max_order = TRACED_RING_ORDER_MAX + 1;
	decode_fails(mbuf, len, 1, -EBADMSG, "ring size");
	r->max_order = 0;
	decode_fails(mbuf, len, 1, -EBADMSG, "ring size");
	r->max_order = UINT32_MAX;
	decode_fails(mbuf, len, 1, -EBADMSG, "ring size");
	r->max_order = TRACED_RING_ORDER_MIN;
	decode_ok(mbuf, len, 1, &m);
	r->max_order = TRACED_RING_ORDER_MAX;
	decode_ok(mbuf, len, 1, &m);
	assert_int_equal(m.u.ring->max_order, TRACED_RING_ORDER_MAX);
	r->tid = 0;
	decode_fails(mbuf, len, 1, -EBADMSG, "thread id");
}

static void
test_wire_welcome_clock_and_order(void **state)
{
	struct traced_msg_welcome *w = (void *)mbuf;
	size_t len;

	(void)state;
	len = make_welcome(mbuf);
	w->clock = 0;
	decode_fails(mbuf, len, 0, -EBADMSG, "clock");
	w->clock = TRACED_CLOCK_TSC + 1;
	decode_fails(mbuf, len, 0, -EBADMSG, "clock");
	len = make_welcome(mbuf);
	w->ring_order = TRACED_RING_ORDER_MIN - 1;
	decode_fails(mbuf, len, 0, -EBADMSG, "ring size");
	w->ring_order = TRACED_RING_ORDER_MAX + 1;
	decode_fails(mbuf, len, 0, -EBADMSG, "ring size");
}

/* ---- control requests ---------------------------------------------- */

static void
test_wire_ctl_request_argc_limits(void **state)
{
	char args[TRACED_CTL_ARGS_MAX + 1];
	struct wire_msg m;
	size_t len;
	int i;

	(void)state;
	memset(args, 0, sizeof(args));
	len = make_ctl_request_raw(mbuf, 0, 0, "", 0);
	decode_fails(mbuf, len, 0, -EBADMSG, "argument count");
	len = make_ctl_request_raw(mbuf, 0, 0, "x", 2);
	decode_fails(mbuf, len, 0, -EBADMSG, "argument count");
	/* 64 empty arguments are fine, 65 are not. */
	len = make_ctl_request_raw(mbuf, 0, TRACED_CTL_ARGS_MAX, args,
	    TRACED_CTL_ARGS_MAX);
	decode_ok(mbuf, len, 0, &m);
	for (i = 0; i < TRACED_CTL_ARGS_MAX; i++)
		assert_ptr_equal(m.argv[i], m.payload + i);
	len = make_ctl_request_raw(mbuf, 0, TRACED_CTL_ARGS_MAX + 1, args,
	    TRACED_CTL_ARGS_MAX + 1);
	decode_fails(mbuf, len, 0, -EBADMSG, "argument count");
	len = make_ctl_request_raw(mbuf, 0, UINT32_MAX, args, 8);
	decode_fails(mbuf, len, 0, -EBADMSG, "argument count");
}

static void
test_wire_ctl_request_arguments_must_match(void **state)
{
	size_t len;

	(void)state;
	/* Fewer strings than argc. */
	len = make_ctl_request_raw(mbuf, 0, 2, "list\0", 5);
	decode_fails(mbuf, len, 0, -EBADMSG, "do not match");
	/* No bytes at all. */
	len = make_ctl_request_raw(mbuf, 0, 1, "", 0);
	decode_fails(mbuf, len, 0, -EBADMSG, "do not match");
	/* The last argument is not terminated. */
	len = make_ctl_request_raw(mbuf, 0, 2, "list\0all", 8);
	decode_fails(mbuf, len, 0, -EBADMSG, "do not match");
	/* More strings than argc. */
	len = make_ctl_request_raw(mbuf, 0, 1, "list\0all\0", 9);
	decode_fails(mbuf, len, 0, -EBADMSG, "bytes after");
	/* A stray byte after the last NUL. */
	len = make_ctl_request_raw(mbuf, 0, 1, "list\0x", 6);
	decode_fails(mbuf, len, 0, -EBADMSG, "bytes after");
}

/* Every padding field is reserved: a message with one set is refused. */
static void
test_wire_rejects_nonzero_padding(void **state)
{
	static const struct {
		size_t	(*make)(void *);
		size_t	 pad_off;
		int	 nfds;
	} cases[] = {
		{ make_ring, offsetof(struct traced_msg_ring, pad), 1 },
		{ make_notify, offsetof(struct traced_msg_notify, pad), 0 },
		{ make_welcome, offsetof(struct traced_msg_welcome, pad), 0 },
		{ make_ctl_request,
		    offsetof(struct traced_msg_ctl_request, pad), 0 },
	};
	struct wire_msg m;
	size_t i, len;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		len = cases[i].make(mbuf);
		decode_ok(mbuf, len, cases[i].nfds, &m);
		mbuf[cases[i].pad_off + 3] = 0x80;
		decode_fails(mbuf, len, cases[i].nfds, -EBADMSG, "reserved");
	}
}

static void
test_wire_ctl_request_rejects_unknown_flags(void **state)
{
	struct wire_msg m;
	size_t len;

	(void)state;
	len = make_ctl_request_raw(mbuf, 0x2, 1, "list", 5);
	decode_fails(mbuf, len, 0, -EBADMSG, "flags");
	len = make_ctl_request_raw(mbuf, TRACED_CTL_JSON | 0x80000000u, 1,
	    "list", 5);
	decode_fails(mbuf, len, 0, -EBADMSG, "flags");
	len = make_ctl_request_raw(mbuf, 0, 1, "list", 5);
	decode_ok(mbuf, len, 0, &m);
	assert_int_equal(m.u.ctl_request->flags, 0);
	assert_string_equal(m.argv[0], "list");
}

/* ---- provider ack and ctl end -------------------------------------- */

static void
test_wire_ack_status(void **state)
{
	struct traced_msg_provider_ack *a = (void *)mbuf;
	struct wire_msg m;
	size_t len;

	(void)state;
	/* A refusal: a negative errno. */
	len = make_ack(mbuf);
	a->status = -EPERM;
	decode_ok(mbuf, len, 0, &m);
	assert_int_equal(m.type, TRACED_MSG_PROVIDER_ACK);
	assert_int_equal(m.u.provider_ack->status, -EPERM);
	assert_int_equal(m.u.provider_ack->index, 2);
	/* A positive status means nothing: refused. */
	a->status = 1;
	decode_fails(mbuf, len, 0, -EBADMSG, "bad status");
	a->status = INT32_MAX;
	decode_fails(mbuf, len, 0, -EBADMSG, "bad status");
	/* Not an errno: -status would overflow, or mean nothing. */
	a->status = INT32_MIN;
	decode_fails(mbuf, len, 0, -EBADMSG, "bad status");
	a->status = -4096;
	decode_fails(mbuf, len, 0, -EBADMSG, "bad status");
	a->status = -4095;
	decode_ok(mbuf, len, 0, &m);
}

static void
test_wire_ctl_end_rejects_bad_status(void **state)
{
	struct traced_msg_ctl_end *e = (void *)mbuf;
	size_t len;

	(void)state;
	len = make_ctl_end(mbuf);
	e->status = TRACED_CTL_DENIED + 1;
	decode_fails(mbuf, len, 0, -EBADMSG, "status");
	e->status = UINT32_MAX;
	decode_fails(mbuf, len, 0, -EBADMSG, "status");
}

/* ---- encoder --------------------------------------------------------- */

static void
test_wire_ctl_request_encode_round_trips(void **state)
{
	static char a0[] = "trace-file", a1[] = "on", a2[] = "",
	    a3[] = "--name=a b\tc";
	char *argv[] = { a0, a1, a2, a3 };
	struct wire_msg m;
	size_t want = sizeof(struct traced_msg_ctl_request) +
	    sizeof("trace-file") + sizeof("on") + 1 + sizeof("--name=a b\tc");
	int len, i;

	(void)state;
	memset(mbuf, 0xa5, sizeof(mbuf));
	len = wire_ctl_request_encode(mbuf, sizeof(mbuf), TRACED_CTL_JSON, 4,
	    argv);
	assert_int_equal(len, want);
	assert_int_equal(hdr_of(mbuf)->size, want);
	assert_int_equal(hdr_of(mbuf)->type, TRACED_MSG_CTL_REQUEST);
	decode_ok(mbuf, (size_t)len, 0, &m);
	assert_int_equal(m.u.ctl_request->version, TRACED_PROTOCOL_VERSION);
	assert_int_equal(m.u.ctl_request->flags, TRACED_CTL_JSON);
	assert_int_equal(m.u.ctl_request->argc, 4);
	assert_int_equal(m.u.ctl_request->pad, 0);
	for (i = 0; i < 4; i++)
		assert_string_equal(m.argv[i], argv[i]);
	assert_null(m.argv[4]);

	/* The exact size fits; one byte less does not. */
	len = wire_ctl_request_encode(mbuf, want, 0, 4, argv);
	assert_int_equal(len, want);
	decode_ok(mbuf, (size_t)len, 0, &m);
	assert_int_equal(m.u.ctl_request->flags, 0);
	assert_int_equal(wire_ctl_request_encode(mbuf, want - 1, 0, 4, argv),
	    -1);
	assert_int_equal(wire_ctl_request_encode(mbuf,
	    sizeof(struct traced_msg_ctl_request) - 1, 0, 1, argv), -1);
	assert_int_equal(wire_ctl_request_encode(mbuf, 0, 0, 1, argv), -1);
}

static void
test_wire_ctl_request_encode_refuses_what_does_not_fit(void **state)
{
	static char big[TRACED_MSG_MAX];
	char *argv[TRACED_CTL_ARGS_MAX + 1];
	static char empty[] = "";
	struct wire_msg m;
	size_t room = TRACED_MSG_MAX - sizeof(struct traced_msg_ctl_request);
	int i, len;

	(void)state;
	for (i = 0; i <= TRACED_CTL_ARGS_MAX; i++)
		argv[i] = empty;
	assert_int_equal(wire_ctl_request_encode(mbuf, sizeof(mbuf), 0, 0,
	    argv), -1);
	assert_int_equal(wire_ctl_request_encode(mbuf, sizeof(mbuf), 0, -1,
	    argv), -1);
	assert_int_equal(wire_ctl_request_encode(mbuf, sizeof(mbuf), 0,
	    TRACED_CTL_ARGS_MAX + 1, argv), -1);
	len = wire_ctl_request_encode(mbuf, sizeof(mbuf), 0,
	    TRACED_CTL_ARGS_MAX, argv);
	assert_int_equal(len, sizeof(struct traced_msg_ctl_request) +
	    TRACED_CTL_ARGS_MAX);
	decode_ok(mbuf, (size_t)len, 0, &m);
	assert_int_equal(m.u.ctl_request->argc, TRACED_CTL_ARGS_MAX);

	/* An argument filling TRACED_MSG_MAX exactly fits... */
	memset(big, 'a', sizeof(big));
	big[room - 1] = '\0';
	argv[0] = big;
	len = wire_ctl_request_encode(mbuf, sizeof(mbuf), 0, 1, argv);
	assert_int_equal(len, TRACED_MSG_MAX);
	decode_ok(mbuf, (size_t)len, 0, &m);
	assert_int_equal(strlen(m.argv[0]), room - 1);
	/* ...one more byte does not, even with a larger buffer. */
	big[room - 1] = 'a';
	big[room] = '\0';
	assert_int_equal(wire_ctl_request_encode(mbuf, sizeof(mbuf), 0, 1,
	    argv), -1);
}

/* ---- mutation -------------------------------------------------------- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint32_t
rng(void)
{
	/* xorshift64*: deterministic, so a failure reproduces. */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return (uint32_t)((rng_state * 0x2545f4914f6cdd1dull) >> 32);
}

static size_t
make_ack_refused(void *buf)
{
	struct traced_msg_provider_ack *a = buf;
	size_t len = make_ack(buf);

	a->status = -ENOSPC;
	return len;
}

/* What an accepted message must satisfy, whatever its bytes were. */
static void
check_accepted(const unsigned char *buf, size_t len, int nfds,
    const struct wire_msg *m)
{
	const struct traced_msg_hdr *h = (const void *)buf;
	uint32_t i;

	assert_ptr_equal(m->u.hdr, buf);
	assert_int_equal(h->size, len);
	assert_int_equal(m->type, h->type);
	assert_true(m->payload >= (const char *)buf + 8);
	assert_ptr_equal(m->payload + m->payload_len, (const char *)buf + len);
	switch (m->type) {
	case TRACED_MSG_HELLO:
		assert_int_equal(nfds, 0);
		assert_int_equal(m->u.hello->version, TRACED_PROTOCOL_VERSION);
		assert_non_null(memchr(m->u.hello->comm, 0, TRACED_COMM_MAX));
		break;
	case TRACED_MSG_PROVIDER:
		assert_int_equal(nfds, 2);
		assert_true(m->u.provider->id_base >= TRACED_EVENT_ID_BASE);
		assert_true(m->u.provider->nevents >= 1);
		assert_true((uint64_t)m->u.provider->id_base +
		    m->u.provider->nevents <= TRACED_EVENT_ID_MAX);
		assert_non_null(memchr(m->u.provider->name, 0,
		    TRACED_NAME_MAX));
		assert_true(m->u.provider->name[0] != '\0');
		break;
	case TRACED_MSG_RING:
		assert_int_equal(nfds, 1);
		assert_in_range(m->u.ring->max_order, TRACED_RING_ORDER_MIN,
		    TRACED_RING_ORDER_MAX);
		assert_int_not_equal(m->u.ring->tid, 0);
		break;
	case TRACED_MSG_PROVIDER_ACK:
		assert_int_equal(nfds, 0);
		assert_true(m->u.provider_ack->status <= 0 &&
		    m->u.provider_ack->status >= -4095);
		break;
	case TRACED_MSG_CTL_REQUEST:
		assert_int_equal(nfds, 0);
		assert_in_range(m->u.ctl_request->argc, 1,
		    TRACED_CTL_ARGS_MAX);
		for (i = 0; i < m->u.ctl_request->argc; i++) {
			const char *a = m->argv[i];

			assert_true(a >= m->payload &&
			    a < m->payload + m->payload_len);
			assert_non_null(memchr(a, 0, (size_t)(m->payload +
			    m->payload_len - a)));
		}
		for (; i < TRACED_CTL_ARGS_MAX; i++)
			assert_null(m->argv[i]);
		break;
	case TRACED_MSG_CTL_END:
		assert_int_equal(nfds, 0);
		assert_true(m->u.ctl_end->status <= TRACED_CTL_DENIED);
		break;
	case TRACED_MSG_NOTIFY:
	case TRACED_MSG_WELCOME:
	case TRACED_MSG_CTL_LINE:
		assert_int_equal(nfds, 0);
		break;
	default:
		fail_msg("accepted unknown type %u", m->type);
	}
}

static void
test_wire_decode_survives_mutations(void **state)
{
	static size_t (*const makers[])(void *) = {
		make_hello, make_provider, make_ring, make_notify,
		make_welcome, make_ack, make_ack_refused, make_ctl_request,
		make_ctl_line, make_ctl_end,
	};
	static _Alignas(8) unsigned char work[512];
	unsigned accepted = 0, rejected = 0, iter, k, nmut;
	struct wire_msg m;
	const char *why;
	unsigned char *copy;
	size_t len, base_len;
	int nfds, rc;

	(void)state;
	for (iter = 0; iter < 20000; iter++) {
		size_t which = rng() % (sizeof(makers) / sizeof(makers[0]));

		memset(work, 0, sizeof(work));
		base_len = len = makers[which](work);
		nfds = wire_type_nfds(hdr_of(work)->type);
		nmut = 1 + rng() % 4;
		for (k = 0; k < nmut; k++) {
			uint32_t pos = rng() % (uint32_t)(base_len + 8);

			switch (rng() % 6) {
			case 0: case 1:
				work[pos] ^= (unsigned char)(1u << (rng() % 8));
				break;
			case 2:
				work[pos] = (unsigned char)rng();
				break;
			case 3:
				work[pos] = rng() % 2 ? 0 : 0xff;
				break;
			case 4:
				/* Resize, keeping the size field honest
				 * half the time. */
				len = rng() % (base_len + 24);
				if (len >= 8 && rng() % 2)
					hdr_of(work)->size = (uint32_t)len;
				break;
			default:
				nfds = (int)(rng() % 3);
				break;
			}
		}
		/* An exact-size copy: ASan sees any read past it. */
		copy = malloc(len ? len : 1);
		assert_non_null(copy);
		memcpy(copy, work, len);
		why = NULL;
		rc = wire_decode(copy, len, nfds, &m, &why);
		if (rc == 0) {
			accepted++;
			check_accepted(copy, len, nfds, &m);
		} else {
			rejected++;
			if (rc != -EBADMSG && rc != -EPROTO)
				fail_msg("unexpected error %d", rc);
			assert_non_null(why);
			assert_true(why[0] != '\0');
		}
		free(copy);
	}
	/* Both outcomes were exercised, or the loop proves little. */
	assert_true(accepted > 1000);
	assert_true(rejected > 1000);
}

/* ---- RULES ------------------------------------------------------------ */

static size_t
make_rules(void *buf)
{
	struct traced_msg_rules *r = buf;

	memset(r, 0, sizeof(*r));
	wire_hdr_init(&r->hdr, TRACED_MSG_RULES, sizeof(*r));
	r->gen = 7;
	r->nrules = 2;
	r->size = 40;
	return sizeof(*r);
}

static void
test_wire_decodes_rules_and_ack(void **state)
{
	struct traced_msg_rules_ack *a = (void *)mbuf;
	struct traced_msg_rules *r = (void *)mbuf;
	struct wire_msg m;
	const char *why;

	(void)state;
	make_rules(mbuf);
	assert_int_equal(wire_decode(mbuf, sizeof(*r), 1, &m, &why), 0);
	assert_int_equal(m.type, TRACED_MSG_RULES);
	assert_int_equal(m.u.rules->gen, 7);
	assert_int_equal(m.u.rules->nrules, 2);
	decode_fails(mbuf, sizeof(*r), 0, -EBADMSG, "missing descriptor");
	r->gen = 0;
	decode_fails(mbuf, sizeof(*r), 1, -EBADMSG, "generation 0");
	make_rules(mbuf);
	r->nrules = TRACED_RULES_MAX + 1;
	decode_fails(mbuf, sizeof(*r), 1, -EBADMSG, "too many rules");
	make_rules(mbuf);
	r->size = TRACED_RULES_SIZE_MAX + 1;
	decode_fails(mbuf, sizeof(*r), 1, -EBADMSG, "rules too large");
	make_rules(mbuf);
	r->pad = 1;
	decode_fails(mbuf, sizeof(*r), 1, -EBADMSG, "reserved bytes");

	memset(a, 0, sizeof(*a));
	wire_hdr_init(&a->hdr, TRACED_MSG_RULES_ACK, sizeof(*a));
	a->gen = 9;
	assert_int_equal(wire_decode(mbuf, sizeof(*a), 0, &m, &why), 0);
	assert_int_equal(m.u.rules_ack->gen, 9);
	a->status = -EINVAL;
	assert_int_equal(wire_decode(mbuf, sizeof(*a), 0, &m, &why), 0);
	a->status = 1;
	decode_fails(mbuf, sizeof(*a), 0, -EBADMSG, "bad status");
	a->status = -5000;
	decode_fails(mbuf, sizeof(*a), 0, -EBADMSG, "bad status");
}

/* What wire_rules_parse() reported, for the tests to compare. */
struct rules_seen {
	char		 text[512];
	size_t		 len;
	int		 refuse_rule;	/* fail at this rule (1-based) */
	int		 nrules;
};

static int
seen_rule(void *arg, unsigned flags, const char *pattern)
{
	struct rules_seen *sn = arg;

	if (++sn->nrules == sn->refuse_rule)
		return -1;
	sn->len += (size_t)snprintf(sn->text + sn->len,
	    sizeof(sn->text) - sn->len, "rule %u %s;", flags, pattern);
	return 0;
}

static int
seen_table(void *arg, const struct wire_rules_table *t)
{
	struct rules_seen *sn = arg;
	uint32_t i;

	sn->len += (size_t)snprintf(sn->text + sn->len,
	    sizeof(sn->text) - sn->len, "table %u:", t->index);
	for (i = 0; i < t->nevents; i++)
		sn->len += (size_t)snprintf(sn->text + sn->len,
		    sizeof(sn->text) - sn->len, " %u", wire_rules_dec(t, i));
	sn->len += (size_t)snprintf(sn->text + sn->len,
	    sizeof(sn->text) - sn->len, ";");
	return 0;
}

/*
 * A valid RULES memfd: rules "+eev_*" (on, from TRACED_EVENTS) and
 * "-pr:ev_b" (off), then provider 1's table of 3 events and provider
 * 4's of 2.  Returns its size.
 */
static size_t
make_rules_memfd(uint8_t *b)
{
	static const uint8_t img[] = {
		3, 'e', 'v', '_', '*', 0,			/* 6 */
		0, 'p', 'r', ':', 'e', 'v', '_', 'b', 0,	/* 15 */
		0,						/* pad */
		1, 0, 0, 0, 3, 0, 0, 0, 1, 0, 2, 0, 0, 0, 0, 0,
		4, 0, 0, 0, 2, 0, 0, 0, 0, 0, 1, 0,
	};

	memcpy(b, img, sizeof(img));
	return sizeof(img);
}

static int
rules_parse(const uint8_t *b, size_t size, uint32_t nrules,
    struct rules_seen *sn, const char **why)
{
	uint8_t *copy = malloc(size ? size : 1);	/* exact: ASan */
	int rc;

	assert_non_null(copy);
	memcpy(copy, b, size);
	memset(sn->text, 0, sizeof(sn->text));
	sn->len = 0;
	sn->nrules = 0;
	*why = NULL;
	rc = wire_rules_parse(copy, size, nrules, seen_rule, seen_table, sn,
	    why);
	free(copy);
	return rc;
}

static void
rules_fails(const uint8_t *b, size_t size, uint32_t nrules,
    const char *part)
{
	struct rules_seen sn = { .refuse_rule = 0 };
	const char *why;

	if (rules_parse(b, size, nrules, &sn, &why) != -1)
		fail_msg("accepted, expected '%s'", part);
	assert_non_null(why);
	if (strstr(why, part) == NULL)
		fail_msg("reason '%s' does not say '%s'", why, part);
}

static void
test_wire_rules_parse_reads_rules_and_tables(void **state)
{
	struct rules_seen sn = { .refuse_rule = 0 };
	uint8_t b[128];
	const char *why;
	size_t n = make_rules_memfd(b);

	(void)state;
	assert_int_equal(rules_parse(b, n, 2, &sn, &why), 0);
	assert_string_equal(sn.text, "rule 3 ev_*;rule 0 pr:ev_b;"
	    "table 1: 1 2 0;table 4: 0 1;");
	/* Rules only; and nothing at all. */
	assert_int_equal(rules_parse(b, 16, 2, &sn, &why), 0);
	assert_string_equal(sn.text, "rule 3 ev_*;rule 0 pr:ev_b;");
	assert_int_equal(rules_parse(b, 0, 0, &sn, &why), 0);
	assert_string_equal(sn.text, "");
	/* A callback says no. */
	sn.refuse_rule = 2;
	assert_int_equal(rules_parse(b, n, 2, &sn, &why), -1);
	assert_string_equal(why, "rule refused");
}

static void
test_wire_rules_parse_refuses_bad_memfds(void **state)
{
	uint8_t b[128], c[128];
	size_t n = make_rules_memfd(b), len;

	(void)state;
	/* Every cut short: no valid prefix but the ones ending a part. */
	for (len = 0; len < n; len++)
		if (len != 16 && len != 32)
			rules_fails(b, len, 2, "");
	rules_fails(b, n, 3, "not printable");
	rules_fails(b, 6, 2, "fewer rules than announced");
	rules_fails(b, n, 1, "bad padding after the rules");
	rules_fails(b, n, TRACED_RULES_MAX + 1, "rules too large");
	{
		const char *why = NULL;

		/* Refused on its size alone, before a byte is read. */
		assert_int_equal(wire_rules_parse(b, TRACED_RULES_SIZE_MAX + 1,
		    2, NULL, NULL, NULL, &why), -1);
		assert_string_equal(why, "rules too large");
	}
	memcpy(c, b, n);
	c[0] = 4;
	rules_fails(c, n, 2, "unknown rule flags");
	memcpy(c, b, n);
	c[1] = '\0';
	rules_fails(c, n, 2, "bad rule pattern length");
	memcpy(c, b, n);
	c[2] = '\t';
	rules_fails(c, n, 2, "not printable ASCII");
	memcpy(c, b, n);
	c[3] = (uint8_t)0xc3;
	rules_fails(c, n, 2, "not printable ASCII");
	memcpy(c, b, n);
	c[15] = 1;
	rules_fails(c, n, 2, "bad padding after the rules");
	memcpy(c, b, n);
	c[20] = 0;				/* nevents 0 */
	rules_fails(c, n, 2, "bad table size");
	memcpy(c, b, n);
	c[22] = 1;				/* nevents 65539 */
	rules_fails(c, n, 2, "bad table size");
	memcpy(c, b, n);
	c[26] = 3;				/* rule 3 of 2 */
	rules_fails(c, n, 2, "unknown rule");
	memcpy(c, b, n);
	c[30] = 1;
	rules_fails(c, n, 2, "bad padding after a table");
	memcpy(c, b, n);
	c[32] = 1;				/* provider 1 twice */
	rules_fails(c, n, 2, "tables out of order");
	memcpy(c, b, n);
	c[32] = 0;				/* provider 0 after 1 */
	rules_fails(c, n, 2, "tables out of order");
	memcpy(c, b, n);
	c[16 + 4] = 200;			/* longer than the memfd */
	rules_fails(c, n, 2, "truncated table");
	/* A pattern of 255 bytes is fine, 256 is not. */
	{
		uint8_t big[300];

		memset(big, 'x', sizeof(big));
		big[0] = 1;
		big[256] = '\0';
		big[257] = big[258] = big[259] = 0;
		struct rules_seen sn = { .refuse_rule = 0 };
		const char *why;

		assert_int_equal(rules_parse(big, 260, 1, &sn, &why), 0);
		big[256] = 'x';
		big[257] = '\0';
		rules_fails(big, 260, 1, "bad rule pattern length");
	}
}

/* Random bytes never crash it nor read past the end (ASan). */
static void
test_wire_rules_parse_survives_random_bytes(void **state)
{
	struct rules_seen sn = { .refuse_rule = 0 };
	uint8_t b[128];
	uint32_t x = 0x9e3779b9;
	const char *why;
	size_t n = make_rules_memfd(b), i, k;
	int ok = 0;

	(void)state;
	for (i = 0; i < 20000; i++) {
		uint8_t c[128];

		memcpy(c, b, n);
		for (k = 0; k < 1 + i % 3; k++) {
			x ^= x << 13;
			x ^= x >> 17;
			x ^= x << 5;
			c[x % n] = (uint8_t)(x >> 8);
		}
		if (rules_parse(c, x % 2 ? n : (x >> 3) % n, 2, &sn,
		    &why) == 0)
			ok++;
		else
			assert_non_null(why);
	}
	assert_true(ok > 0);
}

/* ---- function tracing messages -------------------------------------- */

static size_t
make_module(void *buf, const char *path)
{
	struct traced_msg_module *mo = buf;
	size_t len = sizeof(*mo) + strlen(path) + 1;

	memset(mo, 0, sizeof(*mo));
	wire_hdr_init(&mo->hdr, TRACED_MSG_MODULE, (uint32_t)len);
	mo->index = 3;
	mo->flags = TRACED_MODULE_FUNCS;
	mo->base = 0x555500000000;
	mo->start = 0x555500000000;
	mo->end = 0x555500004000;
	mo->build_id_len = 20;
	memcpy(mo + 1, path, strlen(path) + 1);
	return len;
}

static void
test_wire_module(void **state)
{
	struct traced_msg_module *mo = (void *)mbuf;
	char path[TRACED_PATH_MAX + 8];
	struct wire_msg m;
	size_t len;

	(void)state;
	len = make_module(mbuf, "/opt/app/bin/app");
	decode_ok(mbuf, len, 0, &m);
	assert_string_equal(m.payload, "/opt/app/bin/app");
	assert_int_equal(m.payload_len, strlen("/opt/app/bin/app") + 1);
	decode_fails(mbuf, len, 1, -EBADMSG, "unexpected descriptor");
	mo->flags = 2;
	decode_fails(mbuf, len, 0, -EBADMSG, "unknown flags");
	mo->flags = 0;
	mo->index = TRACED_MODULES_MAX;
	decode_fails(mbuf, len, 0, -EBADMSG, "module number");
	mo->index = 0;
	mo->build_id_len = TRACED_BUILD_ID_MAX + 1;
	decode_fails(mbuf, len, 0, -EBADMSG, "build id");
	mo->build_id_len = 0;
	mo->start = mo->end + 1;
	decode_fails(mbuf, len, 0, -EBADMSG, "reversed");
	mo->start = mo->end;
	mo->pad = 1;
	decode_fails(mbuf, len, 0, -EBADMSG, "reserved");
	mo->pad = 0;
	/* The path: there, NUL-terminated at its end, printable. */
	wire_hdr_init(&mo->hdr, TRACED_MSG_MODULE, sizeof(*mo));
	decode_fails(mbuf, sizeof(*mo), 0, -EBADMSG, "module path");
	wire_hdr_init(&mo->hdr, TRACED_MSG_MODULE, (uint32_t)(len - 1));
	decode_fails(mbuf, len - 1, 0, -EBADMSG, "module path");
	len = make_module(mbuf, "/a\tb");
	decode_fails(mbuf, len, 0, -EBADMSG, "module path");
	len = make_module(mbuf, "/a");
	((char *)(mo + 1))[0] = '\0';
	decode_fails(mbuf, len, 0, -EBADMSG, "module path");
	memset(path, 'p', sizeof(path));
	path[TRACED_PATH_MAX - 1] = '\0';
	len = make_module(mbuf, path);
	decode_ok(mbuf, len, 0, &m);
	path[TRACED_PATH_MAX - 1] = 'p';
	path[TRACED_PATH_MAX] = '\0';
	len = make_module(mbuf, path);
	decode_fails(mbuf, len, 0, -EBADMSG, "module path");
}

static void
test_wire_funcs(void **state)
{
	struct traced_msg_funcs *f = (void *)mbuf;
	struct wire_msg m;

	(void)state;
	memset(f, 0, sizeof(*f));
	wire_hdr_init(&f->hdr, TRACED_MSG_FUNCS, sizeof(*f));
	f->module = 1;
	f->nfuncs = 5000;
	f->desc_size = 100000;
	f->stats_off = 8192;
	f->state_size = 8192 + 5000ull * TRACED_FUNC_STAT_SIZE;
	decode_ok(mbuf, sizeof(*f), 2, &m);
	decode_fails(mbuf, sizeof(*f), 1, -EBADMSG, "missing descriptor");
	f->nfuncs = 0;
	decode_fails(mbuf, sizeof(*f), 2, -EBADMSG, "function count");
	f->nfuncs = TRACED_FUNCS_MAX + 1;
	decode_fails(mbuf, sizeof(*f), 2, -EBADMSG, "function count");
	f->nfuncs = 5000;
	f->desc_size = TRACED_DESC_MAX + 1;
	decode_fails(mbuf, sizeof(*f), 2, -EBADMSG, "description size");
	f->desc_size = 10;
	f->stats_off = 4096;	/* less than a byte per function */
	decode_fails(mbuf, sizeof(*f), 2, -EBADMSG, "state layout");
	f->stats_off = 8193;
	decode_fails(mbuf, sizeof(*f), 2, -EBADMSG, "state layout");
	f->stats_off = 8192;
	f->state_size--;
	decode_fails(mbuf, sizeof(*f), 2, -EBADMSG, "state layout");
	f->state_size = UINT64_MAX;
	decode_fails(mbuf, sizeof(*f), 2, -EBADMSG, "state layout");
}

static void
test_wire_tracer(void **state)
{
	struct traced_msg_tracer *t = (void *)mbuf;
	struct wire_msg m;

	(void)state;
	memset(t, 0, sizeof(*t));
	wire_hdr_init(&t->hdr, TRACED_MSG_TRACER, sizeof(*t));
	t->index = TRACED_TRACERS_MAX - 1;
	t->flags = TRACED_TRACER_ON | TRACED_TRACER_BUILTIN;
	strcpy(t->name, "my_tracer-2");
	decode_ok(mbuf, sizeof(*t), 0, &m);
	t->index = TRACED_TRACERS_MAX;
	decode_fails(mbuf, sizeof(*t), 0, -EBADMSG, "slot");
	t->index = 0;
	t->flags = 8;
	decode_fails(mbuf, sizeof(*t), 0, -EBADMSG, "unknown flags");
	t->flags = TRACED_TRACER_GONE;
	strcpy(t->name, "Upper");
	decode_fails(mbuf, sizeof(*t), 0, -EBADMSG, "tracer name");
	strcpy(t->name, "a b");
	decode_fails(mbuf, sizeof(*t), 0, -EBADMSG, "tracer name");
	t->name[0] = '\0';
	decode_fails(mbuf, sizeof(*t), 0, -EBADMSG, "tracer name");
	memset(t->name, 'a', sizeof(t->name));
	decode_fails(mbuf, sizeof(*t), 0, -EBADMSG, "tracer name");
}

static void
test_wire_func_stats_and_apply(void **state)
{
	struct traced_msg_func_stats *st = (void *)mbuf;
	struct traced_msg_func_apply *a = (void *)mbuf;
	struct wire_msg m;

	(void)state;
	memset(st, 0, sizeof(*st));
	wire_hdr_init(&st->hdr, TRACED_MSG_FUNC_STATS, sizeof(*st));
	st->gen = 7;
	st->patched = 12;
	decode_ok(mbuf, sizeof(*st), 0, &m);
	assert_int_equal(m.u.func_stats->gen, 7);
	wire_hdr_init(&st->hdr, TRACED_MSG_FUNC_STATS, sizeof(*st) - 8);
	decode_fails(mbuf, sizeof(*st) - 8, 0, -EBADMSG, "wrong size");
	memset(a, 0, sizeof(*a));
	wire_hdr_init(&a->hdr, TRACED_MSG_FUNC_APPLY, sizeof(*a));
	a->gen = 3;
	a->tracer_set = 0x5;
	a->tracer_on = 0x1;
	decode_ok(mbuf, sizeof(*a), 0, &m);
	assert_int_equal(m.u.func_apply->tracer_set, 0x5);
	a->funcs = 3;
	decode_ok(mbuf, sizeof(*a), 0, &m);
	assert_int_equal(m.u.func_apply->funcs, 3);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wire_decodes_hello),
		cmocka_unit_test(test_wire_decodes_provider),
		cmocka_unit_test(test_wire_decodes_ring),
		cmocka_unit_test(test_wire_decodes_spare),
		cmocka_unit_test(test_wire_decodes_exit),
		cmocka_unit_test(test_wire_decodes_notify),
		cmocka_unit_test(test_wire_decodes_welcome_with_either_clock),
		cmocka_unit_test(test_wire_decodes_provider_ack),
		cmocka_unit_test(test_wire_decodes_ctl_request_arguments),
		cmocka_unit_test(test_wire_decodes_ctl_line_text),
		cmocka_unit_test(test_wire_decodes_ctl_end),
		cmocka_unit_test(test_wire_type_nfds_matches_protocol),
		cmocka_unit_test(test_wire_rejects_truncated_header),
		cmocka_unit_test(test_wire_rejects_truncated_body),
		cmocka_unit_test(test_wire_rejects_size_field_mismatch),
		cmocka_unit_test(test_wire_rejects_oversized),
		cmocka_unit_test(test_wire_rejects_unknown_type),
		cmocka_unit_test(test_wire_rejects_wrong_size_for_type),
		cmocka_unit_test(test_wire_rejects_missing_descriptor),
		cmocka_unit_test(test_wire_rejects_unexpected_descriptor),
		cmocka_unit_test(test_wire_rejects_wrong_version_with_eproto),
		cmocka_unit_test(test_wire_rejects_bad_comm),
		cmocka_unit_test(test_wire_rejects_bad_provider_name),
		cmocka_unit_test(test_wire_provider_id_ranges),
		cmocka_unit_test(test_wire_provider_desc_size_range),
		cmocka_unit_test(test_wire_module),
		cmocka_unit_test(test_wire_funcs),
		cmocka_unit_test(test_wire_tracer),
		cmocka_unit_test(test_wire_func_stats_and_apply),
		cmocka_unit_test(test_wire_ring_order_and_tid),
		cmocka_unit_test(test_wire_welcome_clock_and_order),
		cmocka_unit_test(test_wire_ctl_request_argc_limits),
		cmocka_unit_test(test_wire_ctl_request_arguments_must_match),
		cmocka_unit_test(test_wire_ctl_request_rejects_unknown_flags),
		cmocka_unit_test(test_wire_ack_status),
		cmocka_unit_test(test_wire_ctl_end_rejects_bad_status),
		cmocka_unit_test(test_wire_ctl_request_encode_round_trips),
		cmocka_unit_test(
		    test_wire_ctl_request_encode_refuses_what_does_not_fit),
		cmocka_unit_test(test_wire_decode_survives_mutations),
		cmocka_unit_test(test_wire_decodes_rules_and_ack),
		cmocka_unit_test(test_wire_rules_parse_reads_rules_and_tables),
		cmocka_unit_test(test_wire_rules_parse_refuses_bad_memfds),
		cmocka_unit_test(
		    test_wire_rules_parse_survives_random_bytes),
		cmocka_unit_test(test_wire_rejects_nonzero_padding),
	};

	return cmocka_run_group_tests_name("wire", tests, NULL, NULL);
}
