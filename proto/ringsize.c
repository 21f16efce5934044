/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * Ring sizes as people write them (proto/ringsize.h).  Shared by the
 * daemon's settings and libtraced's environment, so that both accept
 * and refuse exactly the same words, with the same reasons.
 */
#include <stdio.h>

#include "ring.h"
#include "ringsize.h"

void
ringsize_format(uint64_t bytes, char *buf, size_t size)
{
	static const char suffix[] = "GMK";
	int shift, i;

	for (i = 0, shift = 30; shift > 0; i++, shift -= 10)
		if (bytes >= (UINT64_C(1) << shift) &&
		    bytes % (UINT64_C(1) << shift) == 0) {
			snprintf(buf, size, "%llu%c",
			    (unsigned long long)(bytes >> shift), suffix[i]);
			return;
		}
	snprintf(buf, size, "%llu", (unsigned long long)bytes);
}

int
ringsize_parse(const char *s, uint32_t *order, char *err,
    size_t errsize)
{
	uint64_t v = 0, mul = 1, lo, max, min;
	const char *p = s;
	char a[32], b[32];
	uint32_t o;

	max = traced_ring_size(TRACED_RING_ORDER_MAX);
	min = traced_ring_size(TRACED_RING_ORDER_MIN);
	if (*p < '0' || *p > '9')
		goto notsize;
	/* Digits, stopping well before v * mul could overflow. */
	for (; *p >= '0' && *p <= '9'; p++) {
		v = v * 10 + (uint64_t)(*p - '0');
		if (v > (UINT64_C(1) << 40))
			goto notsize;
	}
	switch (*p) {
	case 'k': case 'K': mul = UINT64_C(1) << 10; p++; break;
	case 'm': case 'M': mul = UINT64_C(1) << 20; p++; break;
	case 'g': case 'G': mul = UINT64_C(1) << 30; p++; break;
	default: break;
	}
	if (mul > 1 && *p == 'i')
		p++;
	if (*p == 'B')
		p++;
	if (*p != '\0')
		goto notsize;
	v *= mul;
	if (v < min) {
		snprintf(err, errsize, "%s is less than 4K, the smallest ring",
		    s);
		return -1;
	}
	if (v > max) {
		snprintf(err, errsize, "%s is more than 1G, the largest ring",
		    s);
		return -1;
	}
	for (o = TRACED_RING_ORDER_MIN; traced_ring_size(o) < v; o++)
		;
	if (traced_ring_size(o) != v) {
		lo = traced_ring_size(o - 1);
		ringsize_format(lo, a, sizeof(a));
		ringsize_format(lo * 2, b, sizeof(b));
		snprintf(err, errsize, "%s is not a power of two (%s or %s)",
		    s, a, b);
		return -1;
	}
	*order = o;
	return 0;
notsize:
	snprintf(err, errsize, "'%s' is not a size (a power of two from 4K "
	    "to 1G, such as 1M)", s);
	return -1;
}
