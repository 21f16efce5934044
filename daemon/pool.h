/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * The ring pool (pool.c): rings whose memory is made before a program
 * needs it.  Daemon-internal; loop thread but pool_stats().
 */
#ifndef TRACED_DAEMON_POOL_H
#define TRACED_DAEMON_POOL_H

#include <stdint.h>

#include "config.h"

struct event_base;

struct pool_stats {
	unsigned	 want, ready;
	int		 making;
	uint32_t	 order;
	uint64_t	 made, given;
	uint64_t	 huge_bytes, small_bytes;
};

int	pool_start(struct event_base *base, unsigned want, uint32_t order,
	    void (*made)(void *), void *arg);
void	pool_set(unsigned want, uint32_t order);
int	pool_take(uint32_t order);
void	pool_put(int fd, uint32_t order);
void	pool_stats(struct pool_stats *st);
void	pool_stop(void);

#endif /* TRACED_DAEMON_POOL_H */
