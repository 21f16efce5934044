/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * libFuzzer target: the check every piece of client text passes at the
 * daemon's door (proto/text.c): provider and event names, format
 * strings, a process's comm.  Oracles: text_valid() never reads past
 * the bytes given and names a bad offset inside them; text_escape()
 * always makes valid text (which JSON, CTF metadata and a terminal
 * take as it is), never longer than its buffer, and leaves text that
 * was valid (without backslashes) unchanged when it fits.
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "text.h"

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s, out[512], small[9];
	size_t bad = SIZE_MAX, len;
	int valid;

	if (size > 4096)
		return 0;
	/* Exactly size bytes: ASan sees a read past them. */
	s = malloc(size + 1);
	assert(s != NULL);
	memcpy(s, data, size);
	s[size] = '\0';
	valid = text_valid(s, size, &bad);
	assert(valid == 0 || valid == 1);
	if (!valid)
		assert(bad < size);
	len = strlen(s);
	text_escape(out, sizeof(out), s);
	assert(strlen(out) < sizeof(out));
	assert(text_valid(out, strlen(out), NULL));
	if (valid && len == size && len < sizeof(out) &&
	    memchr(s, '\\', len) == NULL)
		assert(strcmp(out, s) == 0);
	text_escape(small, sizeof(small), s);
	assert(strlen(small) < sizeof(small));
	assert(text_valid(small, strlen(small), NULL));
	free(s);
	return 0;
}
