/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * JSON for tracectl --json.  tracectl does not build or interpret JSON
 * values for the daemon's replies: the daemon formats each item and
 * tracectl wraps the items in one document (checking each with jansson,
 * tracectl.c).  So all it writes itself are its own strings, the
 * reply's message and the command table's words, as JSON strings whose
 * bytes that are not UTF-8 become U+FFFD, which is what a strict reader
 * of the document will demand.
 */
#include "json.h"
#include "text.h"

/*
 * Write a JSON string.  Contract in json.h.
 */
void
json_write_string(FILE *f, const char *s, size_t len)
{
	size_t	i, n;

	putc('"', f);
	for (i = 0; i < len; i += n) {
		unsigned char c = (unsigned char)s[i];

		n = text_utf8_len(s + i, len - i);
		if (n == 0) {
			fputs("\\ufffd", f);
			n = 1;
		} else if (n > 1)
			fwrite(s + i, 1, n, f);
		else if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c == '\t')
			fputs("\\t", f);
		else if (c < 0x20 || c == 0x7f)
			fprintf(f, "\\u%04x", c);
		else
			putc(c, f);
	}
	putc('"', f);
}
