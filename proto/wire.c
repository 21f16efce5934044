/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * Validation and encoding of the socket protocols of proto/wire.h.
 * wire_decode() is the only function that turns received bytes into a
 * message: it checks everything a peer could get wrong or lie about
 * (type, exact size, version, descriptors, strings, ranges) so that the
 * code behind it can trust the struct it gets.  No I/O, no allocation.
 */
#include <errno.h>
#include <string.h>

#include "functab.h"
#include "ring.h"
#include "wire.h"

struct wire_type_info {
	uint32_t	size;		/* fixed part */
	uint8_t		nfds;		/* descriptors it carries */
	uint8_t		trailing;	/* may have bytes after the struct */
};

static const struct wire_type_info wire_types[TRACED_MSG_TYPE_MAX] = {
	[TRACED_MSG_HELLO] = { sizeof(struct traced_msg_hello), 0, 0 },
	[TRACED_MSG_PROVIDER] = { sizeof(struct traced_msg_provider), 2, 0 },
	[TRACED_MSG_RING] = { sizeof(struct traced_msg_ring), 1, 0 },
	[TRACED_MSG_NOTIFY] = { sizeof(struct traced_msg_notify), 0, 0 },
	[TRACED_MSG_RULES] = { sizeof(struct traced_msg_rules), 1, 0 },
	[TRACED_MSG_MODULE] = { sizeof(struct traced_msg_module), 0, 1 },
	[TRACED_MSG_FUNCS] = { sizeof(struct traced_msg_funcs), 2, 0 },
	[TRACED_MSG_TRACER] = { sizeof(struct traced_msg_tracer), 0, 0 },
	[TRACED_MSG_FUNC_STATS] = {
		sizeof(struct traced_msg_func_stats), 0, 0 },
	[TRACED_MSG_SPARE_ASK] = { sizeof(struct traced_msg_spare), 0, 0 },
	[TRACED_MSG_EXIT] = { sizeof(struct traced_msg_exit), 0, 0 },
	[TRACED_MSG_WELCOME] = { sizeof(struct traced_msg_welcome), 0, 0 },
	[TRACED_MSG_PROVIDER_ACK] = {
		sizeof(struct traced_msg_provider_ack), 0, 0 },
	[TRACED_MSG_RULES_ACK] = { sizeof(struct traced_msg_rules_ack), 0, 0 },
	[TRACED_MSG_FUNC_APPLY] = {
		sizeof(struct traced_msg_func_apply), 0, 0 },
	[TRACED_MSG_SPARE] = { sizeof(struct traced_msg_spare), 1, 0 },
	[TRACED_MSG_CTL_REQUEST] = {
		sizeof(struct traced_msg_ctl_request), 0, 1 },
	[TRACED_MSG_CTL_LINE] = { sizeof(struct traced_msg_hdr), 0, 1 },
	[TRACED_MSG_CTL_END] = { sizeof(struct traced_msg_ctl_end), 0, 1 },
};

int
wire_type_nfds(uint32_t type)
{
	return type < TRACED_MSG_TYPE_MAX ? wire_types[type].nfds : 0;
}

void
wire_hdr_init(struct traced_msg_hdr *h, uint32_t type, uint32_t size)
{
	h->type = type;
	h->size = size;
}

/* A fixed char array holding a NUL-terminated string, printable only. */
static int
wire_str_ok(const char *s, size_t size, int allow_empty)
{
	const char *nul = memchr(s, '\0', size);
	const char *p;

	if (nul == NULL || (!allow_empty && nul == s))
		return 0;
	for (p = s; p < nul; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return 0;
	return 1;
}

static int
wire_fail(const char **why, const char *reason, int err)
{
	if (why != NULL)
		*why = reason;
	return err;
}

/*
 * The padding of every fixed struct: reserved, so it must be zero, or
 * a later version could never give it a meaning.
 */
static int
wire_pad_zero(const struct wire_msg *m)
{
	switch (m->type) {
	case TRACED_MSG_RING:
		return m->u.ring->pad == 0;
	case TRACED_MSG_NOTIFY:
		return m->u.notify->pad == 0;
	case TRACED_MSG_RULES:
		return m->u.rules->pad == 0;
	case TRACED_MSG_WELCOME:
		return m->u.welcome->pad == 0;
	case TRACED_MSG_MODULE:
		return m->u.module->pad == 0;
	case TRACED_MSG_FUNC_APPLY:
		return 1;
	case TRACED_MSG_CTL_REQUEST:
		return m->u.ctl_request->pad == 0;
	case TRACED_MSG_SPARE_ASK:
	case TRACED_MSG_SPARE:
		return m->u.spare->pad == 0;
	case TRACED_MSG_EXIT:
		return m->u.exit_->pad == 0;
	default:
		return 1;
	}
}

static int
wire_check_body(struct wire_msg *m, const char **why)
{
	if (!wire_pad_zero(m))
		return wire_fail(why, "reserved bytes not zero", -EBADMSG);
	switch (m->type) {
	case TRACED_MSG_HELLO:
		if (m->u.hello->version != TRACED_PROTOCOL_VERSION)
			return wire_fail(why, "protocol version mismatch",
			    -EPROTO);
		if (!wire_str_ok(m->u.hello->comm, TRACED_COMM_MAX, 1))
			return wire_fail(why, "bad comm string", -EBADMSG);
		if (m->u.hello->flags & ~TRACED_HELLO_TSC)
			return wire_fail(why, "unknown flags", -EBADMSG);
		break;
	case TRACED_MSG_PROVIDER: {
		const struct traced_msg_provider *p = m->u.provider;

		if (p->id_base < TRACED_EVENT_ID_BASE ||
		    p->nevents == 0 ||
		    p->nevents > TRACED_PROVIDER_EVENTS_MAX ||
		    p->id_base > TRACED_EVENT_ID_MAX - p->nevents)
			return wire_fail(why, "event ids out of range",
			    -EBADMSG);
		if (p->desc_size == 0 || p->desc_size > TRACED_DESC_MAX)
			return wire_fail(why, "bad description size",
			    -EBADMSG);
		if (!wire_str_ok(p->name, TRACED_NAME_MAX, 0))
			return wire_fail(why, "bad provider name", -EBADMSG);
		break;
	}
	case TRACED_MSG_RING:
		if (m->u.ring->max_order < TRACED_RING_ORDER_MIN ||
		    m->u.ring->max_order > TRACED_RING_ORDER_MAX)
			return wire_fail(why, "ring size out of range",
			    -EBADMSG);
		if (m->u.ring->tid == 0)
			return wire_fail(why, "ring without a thread id",
			    -EBADMSG);
		break;
	case TRACED_MSG_SPARE_ASK:
	case TRACED_MSG_SPARE:
		/* 0 asks for the daemon's size; a SPARE names its own. */
		if ((m->u.spare->max_order != 0 ||
		    m->type == TRACED_MSG_SPARE) &&
		    (m->u.spare->max_order < TRACED_RING_ORDER_MIN ||
		    m->u.spare->max_order > TRACED_RING_ORDER_MAX))
			return wire_fail(why, "ring size out of range",
			    -EBADMSG);
		break;
	case TRACED_MSG_WELCOME:
		if (m->u.welcome->version != TRACED_PROTOCOL_VERSION)
			return wire_fail(why, "protocol version mismatch",
			    -EPROTO);
		if (m->u.welcome->clock != TRACED_CLOCK_MONOTONIC &&
		    m->u.welcome->clock != TRACED_CLOCK_TSC)
			return wire_fail(why, "unknown clock", -EBADMSG);
		if (m->u.welcome->ring_order < TRACED_RING_ORDER_MIN ||
		    m->u.welcome->ring_order > TRACED_RING_ORDER_MAX)
			return wire_fail(why, "ring size out of range",
			    -EBADMSG);
		break;
	case TRACED_MSG_MODULE: {
		const struct traced_msg_module *mo = m->u.module;

		if (mo->flags & ~TRACED_MODULE_FUNCS)
			return wire_fail(why, "unknown flags", -EBADMSG);
		if (mo->index >= TRACED_MODULES_MAX)
			return wire_fail(why, "module number out of range",
			    -EBADMSG);
		if (mo->build_id_len > TRACED_BUILD_ID_MAX)
			return wire_fail(why, "build id too long", -EBADMSG);
		if (mo->start > mo->end)
			return wire_fail(why, "module range reversed",
			    -EBADMSG);
		if (m->payload_len == 0 || m->payload_len > TRACED_PATH_MAX ||
		    !wire_str_ok(m->payload, m->payload_len, 0) ||
		    m->payload[m->payload_len - 1] != '\0')
			return wire_fail(why, "bad module path", -EBADMSG);
		break;
	}
	case TRACED_MSG_FUNCS: {
		const struct traced_msg_funcs *f = m->u.funcs;

		if (f->module >= TRACED_MODULES_MAX)
			return wire_fail(why, "module number out of range",
			    -EBADMSG);
		if (f->nfuncs == 0 || f->nfuncs > TRACED_FUNCS_MAX)
			return wire_fail(why, "function count out of range",
			    -EBADMSG);
		if (f->desc_size == 0 || f->desc_size > TRACED_DESC_MAX)
			return wire_fail(why, "bad description size",
			    -EBADMSG);
		if (f->stats_off < f->nfuncs || f->stats_off % 4096 != 0 ||
		    f->state_size != (uint64_t)f->stats_off +
		    (uint64_t)f->nfuncs * TRACED_FUNC_STAT_SIZE)
			return wire_fail(why, "bad state layout", -EBADMSG);
		break;
	}
	case TRACED_MSG_TRACER: {
		const struct traced_msg_tracer *t = m->u.tracer;
		const char *p;

		if (t->index >= TRACED_TRACERS_MAX)
			return wire_fail(why, "tracer slot out of range",
			    -EBADMSG);
		if (t->flags & ~(TRACED_TRACER_ON | TRACED_TRACER_BUILTIN |
		    TRACED_TRACER_GONE))
			return wire_fail(why, "unknown flags", -EBADMSG);
		if (!wire_str_ok(t->name, sizeof(t->name), 0))
			return wire_fail(why, "bad tracer name", -EBADMSG);
		for (p = t->name; *p != '\0'; p++)
			if (!((*p >= 'a' && *p <= 'z') ||
			    (*p >= '0' && *p <= '9') || *p == '_' || *p == '-'))
				return wire_fail(why, "bad tracer name",
				    -EBADMSG);
		break;
	}
	case TRACED_MSG_PROVIDER_ACK:
		/* 0, or a negative errno (so -status is one). */
		if (m->u.provider_ack->status > 0 ||
		    m->u.provider_ack->status < -4095)
			return wire_fail(why, "bad status", -EBADMSG);
		break;
	case TRACED_MSG_RULES:
		if (m->u.rules->gen == 0)
			return wire_fail(why, "rules generation 0", -EBADMSG);
		if (m->u.rules->nrules > TRACED_RULES_MAX)
			return wire_fail(why, "too many rules", -EBADMSG);
		if (m->u.rules->size > TRACED_RULES_SIZE_MAX)
			return wire_fail(why, "rules too large", -EBADMSG);
		break;
	case TRACED_MSG_RULES_ACK:
		if (m->u.rules_ack->status > 0 ||
		    m->u.rules_ack->status < -4095)
			return wire_fail(why, "bad status", -EBADMSG);
		break;
	case TRACED_MSG_CTL_REQUEST: {
		const struct traced_msg_ctl_request *r = m->u.ctl_request;
		const char *p = m->payload, *end = p + m->payload_len;
		uint32_t i;

		if (r->version != TRACED_PROTOCOL_VERSION)
			return wire_fail(why, "protocol version mismatch",
			    -EPROTO);
		if (r->argc == 0 || r->argc > TRACED_CTL_ARGS_MAX)
			return wire_fail(why, "bad argument count", -EBADMSG);
		if (r->flags & ~TRACED_CTL_JSON)
			return wire_fail(why, "unknown flags", -EBADMSG);
		for (i = 0; i < r->argc; i++) {
			const char *nul = p < end ?
			    memchr(p, '\0', (size_t)(end - p)) : NULL;

			if (nul == NULL)
				return wire_fail(why, "arguments do not match "
				    "their count", -EBADMSG);
			m->argv[i] = p;
			p = nul + 1;
		}
		if (p != end)
			return wire_fail(why, "bytes after the arguments",
			    -EBADMSG);
		break;
	}
	case TRACED_MSG_CTL_END:
		if (m->u.ctl_end->status > TRACED_CTL_DENIED)
			return wire_fail(why, "unknown status", -EBADMSG);
		break;
	default:
		break;
	}
	return 0;
}

int
wire_decode(const void *buf, size_t len, int nfds, struct wire_msg *m,
    const char **why)
{
	const struct traced_msg_hdr *h = buf;
	const struct wire_type_info *ti;

	memset(m, 0, sizeof(*m));
	if (len < sizeof(*h))
		return wire_fail(why, "truncated message", -EBADMSG);
	if (len > TRACED_MSG_MAX)
		return wire_fail(why, "oversized message", -EBADMSG);
	if (h->size != len)
		return wire_fail(why, "size field does not match the message",
		    -EBADMSG);
	if (h->type >= TRACED_MSG_TYPE_MAX || wire_types[h->type].size == 0)
		return wire_fail(why, "unknown message type", -EBADMSG);
	ti = &wire_types[h->type];
	if (len < ti->size || (!ti->trailing && len != ti->size))
		return wire_fail(why, "wrong size for the message type",
		    -EBADMSG);
	if (nfds < ti->nfds)
		return wire_fail(why, "missing descriptor", -EBADMSG);
	if (nfds > ti->nfds)
		return wire_fail(why, "unexpected descriptor", -EBADMSG);
	m->type = h->type;
	m->u.hdr = h;
	m->payload = (const char *)buf + ti->size;
	m->payload_len = len - ti->size;
	return wire_check_body(m, why);
}

static uint32_t
wire_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	    (uint32_t)p[3] << 24;
}

int
wire_rules_parse(const void *buf, size_t size, uint32_t nrules,
    int (*rule_cb)(void *, unsigned, const char *),
    int (*table_cb)(void *, const struct wire_rules_table *),
    void *arg, const char **why)
{
	const uint8_t *b = buf, *nul;
	struct wire_rules_table t;
	size_t off = 0, len, i, ntables = 0, j;
	uint32_t r;

	if (nrules > TRACED_RULES_MAX || size > TRACED_RULES_SIZE_MAX)
		return wire_fail(why, "rules too large", -1);
	for (r = 0; r < nrules; r++) {
		if (off + 2 > size)
			return wire_fail(why, "fewer rules than announced", -1);
		if (b[off] & ~(TRACED_RULE_ON | TRACED_RULE_ENV))
			return wire_fail(why, "unknown rule flags", -1);
		nul = memchr(b + off + 1, '\0', size - off - 1);
		if (nul == NULL)
			return wire_fail(why, "rule pattern not terminated",
			    -1);
		len = (size_t)(nul - (b + off + 1));
		if (len == 0 || len > TRACED_RULE_PATTERN_MAX)
			return wire_fail(why, "bad rule pattern length", -1);
		for (i = 0; i < len; i++)
			if (b[off + 1 + i] < 0x20 || b[off + 1 + i] > 0x7e)
				return wire_fail(why, "rule pattern not "
				    "printable ASCII", -1);
		if (rule_cb != NULL &&
		    rule_cb(arg, b[off], (const char *)b + off + 1) == -1)
			return wire_fail(why, "rule refused", -1);
		off += len + 2;
	}
	for (; off % 4 != 0; off++)
		if (off >= size || b[off] != 0)
			return wire_fail(why, "bad padding after the rules",
			    -1);
	while (off < size) {
		if (size - off < 8)
			return wire_fail(why, "truncated table", -1);
		t.index = wire_le32(b + off);
		t.nevents = wire_le32(b + off + 4);
		if (t.nevents == 0 || t.nevents > TRACED_PROVIDER_EVENTS_MAX)
			return wire_fail(why, "bad table size", -1);
		off += 8;
		if ((size - off) / 2 < t.nevents)
			return wire_fail(why, "truncated table", -1);
		t.dec = b + off;
		for (j = 0; j < t.nevents; j++)
			if (wire_rules_dec(&t, (uint32_t)j) > nrules)
				return wire_fail(why, "table names an unknown "
				    "rule", -1);
		off += 2 * (size_t)t.nevents;
		for (; off % 4 != 0; off++)
			if (off >= size || b[off] != 0)
				return wire_fail(why, "bad padding after a "
				    "table", -1);
		/* Tables come in increasing provider order. */
		if (ntables++ > 0 && t.index <= r)
			return wire_fail(why, "tables out of order", -1);
		r = t.index;
		if (table_cb != NULL && table_cb(arg, &t) == -1)
			return wire_fail(why, "table refused", -1);
	}
	return 0;
}

int
wire_ctl_request_encode(void *buf, size_t size, uint32_t flags, int argc,
    char *const argv[])
{
	struct traced_msg_ctl_request *r = buf;
	size_t len = sizeof(*r), n;
	int i;

	if (argc <= 0 || argc > TRACED_CTL_ARGS_MAX)
		return -1;
	if (size > TRACED_MSG_MAX)
		size = TRACED_MSG_MAX;
	if (size < len)
		return -1;
	for (i = 0; i < argc; i++) {
		n = strlen(argv[i]) + 1;
		if (n > size - len)
			return -1;
		memcpy((char *)buf + len, argv[i], n);
		len += n;
	}
	memset(r, 0, sizeof(*r));
	wire_hdr_init(&r->hdr, TRACED_MSG_CTL_REQUEST, (uint32_t)len);
	r->version = TRACED_PROTOCOL_VERSION;
	r->flags = flags;
	r->argc = (uint32_t)argc;
	return (int)len;
}
