/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * The drop causes' names; see cause.h.
 */
#include <string.h>

#include "cause.h"
#include "ring.h"

static const char *const cause_names[TRACED_DROP_NCAUSES] = {
	[TRACED_DROP_RING_FULL] = "ring_full",
	[TRACED_DROP_NESTED] = "nested",
	[TRACED_DROP_DISCONNECTED] = "disconnected",
	[TRACED_DROP_PAUSED] = "paused",
	[TRACED_DROP_WRITE_ERROR] = "write_error",
	[TRACED_DROP_INVALID] = "invalid",
	[TRACED_DROP_DELETED] = "deleted",
};

const char *
traced_cause_name(int c)
{
	if (c < 0 || c >= TRACED_DROP_NCAUSES || cause_names[c] == NULL)
		return "?";
	return cause_names[c];
}

int
traced_cause_find(const char *name)
{
	int c;

	for (c = 0; c < TRACED_DROP_NCAUSES; c++)
		if (cause_names[c] != NULL && strcmp(cause_names[c], name) == 0)
			return c;
	return -1;
}
