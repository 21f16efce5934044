/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * Unit-test helper: builds ring records byte by byte, laid out as the
 * producer lays them out (proto/ring.h): a 16-byte header whose size is
 * filled in at the end, integers as 64 bits at the next 8-byte
 * boundary, strings as their bytes and a NUL, the record padded to 8.
 * Shared by the tests of the CTF writer and of the trace reader, so
 * both check the same layout.  Include after <cmocka.h>.
 */
#ifndef TRACED_TESTS_RECBUILD_H
#define TRACED_TESTS_RECBUILD_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ring.h"

struct t_recs {
	uint8_t	 b[8192];
	size_t	 len;
	size_t	 start;		/* of the record being built */
	size_t	 tail_pad;	/* after the last record's last field */
};

/* n bytes of v, little-endian, at p. */
static inline void
t_put(uint8_t *p, uint64_t v, int n)
{
	int	 i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline void
t_pad8(struct t_recs *r)
{
	while (r->len % 8 != 0)
		r->b[r->len++] = 0;
}

/* The 16-byte header; its size is filled in by t_rec_end(). */
static inline void
t_rec_begin(struct t_recs *r, uint32_t id, uint64_t ts)
{
	assert_int_equal(r->len % 8, 0);
	assert_true(r->len + TRACED_REC_HDR_SIZE <= sizeof(r->b));
	r->start = r->len;
	t_put(r->b + r->len, id, 4);
	t_put(r->b + r->len + 4, 0, 4);
	t_put(r->b + r->len + 8, ts, 8);
	r->len += TRACED_REC_HDR_SIZE;
}

/* An integer of any class: 64 bits at the next 8-byte boundary. */
static inline void
t_rec_int(struct t_recs *r, uint64_t v)
{
	t_pad8(r);
	assert_true(r->len + 8 <= sizeof(r->b));
	t_put(r->b + r->len, v, 8);
	r->len += 8;
}

/* A string: its bytes and a NUL right after the previous argument. */
static inline void
t_rec_str(struct t_recs *r, const char *s)
{
	size_t	 n = strlen(s) + 1;

	assert_true(r->len + n + 8 <= sizeof(r->b));
	memcpy(r->b + r->len, s, n);
	r->len += n;
}

/* Pad the record to 8 bytes and write its size into its header. */
static inline void
t_rec_end(struct t_recs *r)
{
	size_t	 end = r->len;

	t_pad8(r);
	r->tail_pad = r->len - end;
	t_put(r->b + r->start + 4, r->len - r->start, 4);
}

#endif
