/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * Checking and escaping client text; see text.h.  The decoder follows
 * the table of well-formed byte sequences in the Unicode standard
 * (section 3.9, table 3-7).
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "text.h"

size_t
text_utf8_len(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	unsigned char lo = 0x80, hi = 0xbf;
	size_t need, i;

	if (p[0] < 0x80)
		return 1;
	if (p[0] < 0xc2)
		return 0;		/* a continuation byte, or overlong */
	if (p[0] < 0xe0)
		need = 1;
	else if (p[0] < 0xf0) {
		need = 2;
		if (p[0] == 0xe0)
			lo = 0xa0;	/* overlong */
		if (p[0] == 0xed)
			hi = 0x9f;	/* surrogates */
	} else if (p[0] < 0xf5) {
		need = 3;
		if (p[0] == 0xf0)
			lo = 0x90;	/* overlong */
		if (p[0] == 0xf4)
			hi = 0x8f;	/* past U+10FFFF */
	} else
		return 0;
	if (n < need + 1 || p[1] < lo || p[1] > hi)
		return 0;
	for (i = 2; i <= need; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	return need + 1;
}

/* Is the character at s (k bytes long) a control character? */
static int
text_control(const unsigned char *s, size_t k)
{
	if (k == 1)
		return s[0] < 0x20 || s[0] == 0x7f;
	/* C1: U+0080 to U+009F, encoded c2 80 to c2 9f. */
	return k == 2 && s[0] == 0xc2 && s[1] < 0xa0;
}

int
text_valid(const char *s, size_t n, size_t *bad)
{
	size_t i = 0, k;

	while (i < n) {
		k = text_utf8_len(s + i, n - i);
		if (k == 0 || text_control((const unsigned char *)s + i, k)) {
			if (bad != NULL)
				*bad = i;
			return 0;
		}
		i += k;
	}
	return 1;
}

char *
text_escape(char *dst, size_t size, const char *s)
{
	size_t o = 0, n = strlen(s), i = 0, k;

	while (i < n) {
		k = text_utf8_len(s + i, n - i);
		if (k == 0 || text_control((const unsigned char *)s + i, k) ||
		    s[i] == '\\') {
			if (o + 5 > size - 1)
				break;
			if (s[i] == '\\' && k == 1) {
				memcpy(dst + o, "\\\\", 2);
				o += 2;
			} else {
				snprintf(dst + o, size - o, "\\x%02x",
				    (unsigned char)s[i]);
				o += 4;
			}
			i++;
			continue;
		}
		if (o + k > size - 1)
			break;
		memcpy(dst + o, s + i, k);
		o += k;
		i += k;
	}
	dst[o] = '\0';
	return dst;
}

size_t
text_distance(const char *a, size_t n, const char *b, size_t max)
{
	/* Three rows of the table: the one before last, last and this. */
	size_t row[3][TEXT_DISTANCE_MAX + 1], *pp, *p, *c, m = strlen(b);
	size_t i, j, d, best;

	if (n > TEXT_DISTANCE_MAX || m > TEXT_DISTANCE_MAX ||
	    (n > m ? n - m : m - n) > max)
		return max + 1;
	for (j = 0; j <= m; j++)
		row[1][j] = j;
	pp = row[0];
	p = row[1];
	c = row[2];
	for (i = 1; i <= n; i++) {
		c[0] = best = i;
		for (j = 1; j <= m; j++) {
			d = p[j - 1] + (a[i - 1] != b[j - 1]);
			if (p[j] + 1 < d)
				d = p[j] + 1;
			if (c[j - 1] + 1 < d)
				d = c[j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
			    a[i - 2] == b[j - 1] && pp[j - 2] + 1 < d)
				d = pp[j - 2] + 1;
			c[j] = d;
			if (d < best)
				best = d;
		}
		if (best > max)
			return max + 1;	/* every path is dearer already */
		/* Rotate: this row is the last one next time. */
		{
			size_t *t = pp;

			pp = p;
			p = c;
			c = t;
		}
	}
	return p[m] > max ? max + 1 : p[m];
}

int
text_errf(char *err, size_t size, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL || size == 0)
		return -1;
	va_start(ap, fmt);
	vsnprintf(err, size, fmt, ap);
	va_end(ap);
	return -1;
}

void
text_clean(char *s, size_t n)
{
	size_t i, k;

	for (i = 0; i < n; i += k) {
		k = text_utf8_len(s + i, n - i);
		if (k == 0 || (k == 1 && ((unsigned char)s[i] < 0x20 ||
		    s[i] == 0x7f))) {
			s[i] = '?';
			k = 1;
		} else if (k == 2 && (unsigned char)s[i] == 0xc2 &&
		    (unsigned char)s[i + 1] < 0xa0) {
			s[i] = s[i + 1] = '?';	/* C1, U+0080 to U+009F */
		}
	}
}

/*
 * "2s", "1.5ms"...: a decimal number with up to 9 decimals and a unit.
 * Contract in text.h.
 */
int
text_parse_duration(const char *s, int64_t *ns)
{
	static const struct {
		const char	*unit;
		int64_t		 ns;
	} units[] = {
		{ "ns", 1 }, { "us", 1000 }, { "ms", 1000000 },
		{ "s", 1000000000 }, { "", 1000000000 },
		{ "m", INT64_C(60000000000) }, { "min", INT64_C(60000000000) },
		{ "h", INT64_C(3600000000000) },
	};
	int64_t		 whole = 0, frac = 0, scale = 1, mul, v;
	int		 ndig = 0, nfrac = 0;
	size_t		 i;

	for (; *s >= '0' && *s <= '9'; s++, ndig++) {
		if (whole > (INT64_MAX - 9) / 10)
			return -1;
		whole = whole * 10 + (*s - '0');
	}
	if (*s == '.') {
		for (s++; *s >= '0' && *s <= '9'; s++, nfrac++)
			if (nfrac < 9) {
				frac = frac * 10 + (*s - '0');
				scale *= 10;
			}
	}
	if (ndig == 0 && nfrac == 0)
		return -1;
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (strcmp(s, units[i].unit) == 0)
			break;
	if (i == sizeof(units) / sizeof(units[0]))
		return -1;
	mul = units[i].ns;
	if (__builtin_mul_overflow(whole, mul, &v))
		return -1;
	/* frac / scale of a unit: at most 9 digits, exact to the ns. */
	if (__builtin_add_overflow(v, (int64_t)((__int128)frac * mul / scale),
	    &v))
		return -1;
	*ns = v;
	return 0;
}
