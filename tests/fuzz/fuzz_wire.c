/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * libFuzzer target: wire_decode(), the one function that turns bytes
 * from a socket into a message, on anything.  Input: one byte saying
 * how many descriptors came with the message (0 to 4), then the
 * message.  Beyond not crashing, what it accepts must be what it says:
 * the size in the header is the length received, strings are
 * terminated inside their fields, and a control request encodes back
 * to the same bytes.  An input whose first byte is 0xff is instead the
 * contents of a RULES memfd for wire_rules_parse(), its second byte the
 * number of rules announced: every rule and table it reports must lie
 * inside the input.
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wire.h"

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct span {
	const uint8_t	*b;
	size_t		 size;
};

static int
check_rule(void *arg, unsigned flags, const char *pattern)
{
	const struct span *sp = arg;

	assert((flags & ~3u) == 0);
	assert((const uint8_t *)pattern > sp->b &&
	    (const uint8_t *)pattern + strlen(pattern) < sp->b + sp->size);
	return 0;
}

static int
check_table(void *arg, const struct wire_rules_table *t)
{
	const struct span *sp = arg;

	assert(t->dec >= sp->b &&
	    t->dec + 2 * (size_t)t->nevents <= sp->b + sp->size);
	return 0;
}

/* RULES memfd contents, copied to their own exact-size buffer. */
static void
fuzz_rules(const uint8_t *data, size_t size)
{
	struct span sp;
	const char *why = NULL;
	uint8_t *b;

	if (size < 2)
		return;
	if ((b = malloc(size - 2 + 1)) == NULL)
		return;
	memcpy(b, data + 2, size - 2);
	sp.b = b;
	sp.size = size - 2;
	if (wire_rules_parse(b, size - 2, data[1], check_rule, check_table,
	    &sp, &why) != 0)
		assert(why != NULL && why[0] != '\0');
	free(b);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	_Alignas(8) uint8_t buf[TRACED_MSG_MAX + 64];
	_Alignas(8) uint8_t again[TRACED_MSG_MAX + 64];
	struct wire_msg m;
	const char *why = NULL;
	uint32_t i;
	int nfds;
	long n;

	if (size >= 1 && data[0] == 0xff) {
		fuzz_rules(data, size);
		return 0;
	}
	if (size < 1 || size - 1 > sizeof(buf))
		return 0;
	nfds = data[0] % 5;
	/* Received into an aligned buffer, as the programs do. */
	memcpy(buf, data + 1, size - 1);
	size--;
	if (wire_decode(buf, size, nfds, &m, &why) != 0) {
		assert(why != NULL && why[0] != '\0');
		return 0;
	}
	assert(size >= sizeof(struct traced_msg_hdr));
	assert(((const struct traced_msg_hdr *)(const void *)buf)->size ==
	    size);
	assert(nfds == wire_type_nfds(m.type));
	if (m.type == TRACED_MSG_PROVIDER_ACK)
		assert(m.u.provider_ack->status <= 0 &&
		    m.u.provider_ack->status >= -4095);
	switch (m.type) {
	case TRACED_MSG_HELLO:
		assert(memchr(m.u.hello->comm, '\0', TRACED_COMM_MAX) != NULL);
		break;
	case TRACED_MSG_PROVIDER:
		assert(memchr(m.u.provider->name, '\0', TRACED_NAME_MAX) !=
		    NULL);
		break;
	case TRACED_MSG_CTL_REQUEST:
		assert(m.u.ctl_request->argc >= 1 &&
		    m.u.ctl_request->argc <= TRACED_CTL_ARGS_MAX);
		for (i = 0; i < m.u.ctl_request->argc; i++)
			assert(m.argv[i] >= (const char *)buf &&
			    m.argv[i] + strlen(m.argv[i]) <
			    (const char *)buf + size);
		n = wire_ctl_request_encode(again, sizeof(again),
		    m.u.ctl_request->flags, (int)m.u.ctl_request->argc,
		    (char *const *)m.argv);
		assert(n == (long)size && memcmp(again, buf, size) == 0);
		break;
	default:
		break;
	}
	return 0;
}
