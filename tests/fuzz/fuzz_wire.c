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
 * to the same bytes.
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wire.h"

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

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
