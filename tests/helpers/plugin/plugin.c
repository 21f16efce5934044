/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * Test plugin: a shared object with a provider of its own, loaded and
 * unloaded at run time by tests/helpers/plugins.c.
 */
#include "trace.h"

void	plugin_hello(uint64_t seq, uint32_t generation);

void
plugin_hello(uint64_t seq, uint32_t generation)
{
	trace_plugin_hello(seq, generation);
}
