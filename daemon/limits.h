/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * What each uid holds of the daemon, against the limits of traced.conf
 * (limits.c; LIMIT_* in config.h), and the rate of what clients make
 * it log.  Daemon-internal; loop thread.
 */
#ifndef TRACED_DAEMON_LIMITS_H
#define TRACED_DAEMON_LIMITS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "config.h"

void	limits_init(void);
int	limits_privileged(uid_t uid);
void	limits_grow_fd_table(void);
void	limits_fds_closing(int delta);
int	limits_take(uid_t uid, int l, uint64_t n, unsigned fds, char *why,
	    size_t whysize);
void	limits_put(uid_t uid, int l, uint64_t n, unsigned fds);
void	limits_force(uid_t uid, int l, uint64_t n);
uint64_t limits_held(uid_t uid, int l);

/*
 * The loop's time: a uid whose clients took more than this of a window
 * has its sessions' messages read after everyone else's (client.c,
 * LOOP_PRI_OVER in sock.h) until a window goes by under it.
 */
#define LIMITS_LOOP_WINDOW_NS	(100 * UINT64_C(1000000))
#define LIMITS_LOOP_SHARE_NS	(20 * UINT64_C(1000000))
void	limits_loop_charge(uid_t uid, uint64_t start, uint64_t ns);
int	limits_loop_over(uid_t uid, uint64_t now);
int	limits_log_ok(uid_t uid);
void	limits_logx(uid_t uid, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
void	limits_info(uid_t uid, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));

#endif /* TRACED_DAEMON_LIMITS_H */
