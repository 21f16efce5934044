/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * A ring's memory, made the same way by whoever makes it: the thread
 * that traces (client-lib/ring.c) or the daemon's ring pool
 * (daemon/pool.c), since the daemon checks both by the same rule
 * (daemon/sring.c, sring_msg()).  Proto: no allocation, any
 * thread.
 */
#ifndef TRACED_PROTO_RINGMEM_H
#define TRACED_PROTO_RINGMEM_H

#include <stddef.h>
#include <stdint.h>

/* A huge page: a mapping aligned to it can map a pool ring's whole. */
#define RINGMEM_HUGE	((size_t)2 << 20)

/*
 * A memfd for a ring that may grow to 2^max_order bytes:
 * traced_ring_file_size(max_order) long, nothing in it, sealed so that
 * it can never shrink nor grow under a mapping (F_SEAL_SHRINK,
 * F_SEAL_GROW, F_SEAL_SEAL).  Returns it, or -1 with errno set.
 */
int	ringmem_create(uint32_t max_order);

/*
 * Map len bytes of fd, shared and writable, at an address aligned to
 * RINGMEM_HUGE: then the kernel maps the file's huge pages whole.
 * Only [p, p + len rounded up to a page) stays mapped.  Returns p, or
 * MAP_FAILED with errno set.
 */
void	*ringmem_map_aligned(int fd, size_t len);

#endif /* TRACED_PROTO_RINGMEM_H */
