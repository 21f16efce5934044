/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * libFuzzer target: functab_parse(), which reads the function table a
 * client process sends the daemon (hostile), and functab_module_parse(),
 * which reads a session's functions/module-N file for tracectl export
 * (a trace directory is hostile too).  A table that parses must have
 * strictly increasing starts and acceptable names, format back line by
 * line to text that parses to the same entries, and answer lookups of
 * its own starts with their entries.
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "functab.h"

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check_table(const struct functab *t)
{
	struct functab again;
	char line[FUNCTAB_LINE_MAX + 1], err[128], *text;
	size_t i, len = 0;
	int n;

	text = malloc(t->n * sizeof(line) + 1);
	assert(text != NULL);
	for (i = 0; i < t->n; i++) {
		assert(functab_name_ok(t->e[i].name));
		assert(i == 0 || t->e[i].start > t->e[i - 1].start);
		assert(functab_lookup(t, t->e[i].start) == &t->e[i]);
		n = functab_format_line(line, sizeof(line), t->e[i].start,
		    t->e[i].size, t->e[i].kind, t->e[i].name);
		assert(n > 0);
		memcpy(text + len, line, (size_t)n);
		len += (size_t)n;
	}
	if (functab_parse(text, len, t->n, &again, err, sizeof(err)) != 0)
		abort();	/* formatted text that does not parse */
	assert(again.n == t->n);
	for (i = 0; i < t->n; i++) {
		assert(again.e[i].start == t->e[i].start);
		assert(again.e[i].size == t->e[i].size);
		assert(again.e[i].kind == t->e[i].kind);
		assert(strcmp(again.e[i].name, t->e[i].name) == 0);
	}
	functab_free(&again);
	free(text);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct functab_module m;
	struct functab t;
	char err[256];

	if (functab_parse((const char *)data, size, 1u << 16, &t, err,
	    sizeof(err)) == 0) {
		check_table(&t);
		functab_free(&t);
	} else
		assert(err[0] != '\0');
	if (functab_module_parse((const char *)data, size, &m, err,
	    sizeof(err)) == 0) {
		assert(m.path != NULL);
		assert(m.build_id_len <= sizeof(m.build_id));
		check_table(&m.tab);
		functab_module_free(&m);
	} else
		assert(err[0] != '\0');
	return 0;
}
