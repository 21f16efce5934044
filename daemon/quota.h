/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * The per-uid quota on the trace directory (quota.c).  Daemon-internal;
 * loop thread.
 */
#ifndef TRACED_DAEMON_QUOTA_H
#define TRACED_DAEMON_QUOTA_H

#include <stdint.h>
#include <sys/types.h>

uint64_t quota_limit(void);
int	quota_over(uid_t uid);
void	quota_written(uid_t uid, uint64_t bytes);
void	quota_trace_dir_changed(void);
void	quota_tick(void);
void	quota_foreach(void (*cb)(void *, uid_t, uint64_t, int), void *arg);
void	quota_fini(void);

#endif /* TRACED_DAEMON_QUOTA_H */
