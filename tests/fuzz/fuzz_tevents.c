/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * libFuzzer target: tevents_parse(), which reads the developer's
 * trace-events file in tracegen and, in the daemon, the description a
 * client process registers (hostile).  Errors must be located
 * ("FILE:LINE:COL: ..."); a parsed file must format back, event by
 * event, to lines that parse to the same event (what the client sends
 * the daemon is exactly that).
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tevents.h"

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
same_event(const struct tevents_event *a, const struct tevents_event *b)
{
	unsigned i;

	assert(strcmp(a->name, b->name) == 0);
	assert(strcmp(a->fmt, b->fmt) == 0);
	assert((a->fmt_trans == NULL) == (b->fmt_trans == NULL));
	assert(a->fmt_trans == NULL || strcmp(a->fmt_trans, b->fmt_trans) == 0);
	assert(a->disabled == b->disabled);
	assert(a->vcpu == b->vcpu);
	assert(a->nargs == b->nargs);
	for (i = 0; i < a->nargs; i++) {
		assert(strcmp(a->args[i].name, b->args[i].name) == 0);
		assert(strcmp(a->args[i].type, b->args[i].type) == 0);
		assert(a->args[i].cls == b->args[i].cls);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tevents_file f, g;
	char err[256], *line;
	size_t i;
	int n;

	if (tevents_parse((const char *)data, size, "in", &f, err,
	    sizeof(err)) != 0) {
		assert(strncmp(err, "in:", 3) == 0);
		return 0;
	}
	for (i = 0; i < f.nevents; i++) {
		n = tevents_format(&f.events[i], NULL, 0);
		assert(n > 0);
		line = malloc((size_t)n + 1);
		assert(line != NULL);
		assert(tevents_format(&f.events[i], line, (size_t)n + 1) == n);
		if (tevents_parse(line, (size_t)n, "again", &g, err,
		    sizeof(err)) != 0)
			abort();	/* formatted text that does not parse */
		assert(g.nevents == 1);
		same_event(&f.events[i], &g.events[0]);
		tevents_free(&g);
		free(line);
	}
	tevents_free(&f);
	return 0;
}
