/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * The one rule for a ring size, whoever gives it: traced --ring-size,
 * ring-size in traced.conf(5), TRACED_RING_SIZE in a traced program's
 * environment.  A size is decimal digits with an optional K, M or G
 * (KiB, MiB, GiB; "Ki", "KiB" and "KB" are read the same), and must be
 * a power of two from 4K to 1G; anything else is refused with a reason
 * that says what would be taken instead.  Nothing is rounded or
 * clamped in silence.  Proto: pure, no allocation, any thread.
 */
#ifndef TRACED_PROTO_RINGSIZE_H
#define TRACED_PROTO_RINGSIZE_H

#include <stddef.h>
#include <stdint.h>

/*
 * Parse 's' as a ring size.  Returns 0 with 2^*order the size, or -1
 * with the reason in err (a sentence fragment without the setting's
 * name, such as "3M is not a power of two (2M or 4M)").
 */
int	ringsize_parse(const char *s, uint32_t *order, char *err,
	    size_t errsize);

/* Write 'bytes' the way a size is given: "4K", "1M", "1G", or digits. */
void	ringsize_format(uint64_t bytes, char *buf, size_t size);

#endif /* TRACED_PROTO_RINGSIZE_H */
