/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * Where traces go (outdir.c): the trace directory, opened and checked,
 * kept across restarts when 'trace-file set' chose it; whether output
 * is paused (trace-file off); the flush generation; and the events
 * written into directories deleted since.  Moving the sessions to a
 * new directory is theirs to do (meta.c).  Daemon-internal; loop
 * thread.
 */
#ifndef TRACED_DAEMON_OUTDIR_H
#define TRACED_DAEMON_OUTDIR_H

#include <stddef.h>
#include <stdint.h>

int	outdir_init(int state_dirfd, const char *state_dir,
	    const char *configured, int keep_configured, const char *dflt,
	    char *err, size_t errsize);
void	outdir_set_default(const char *dflt);
const char *outdir_default(void);
int	outdir_set(const char *path, const char *how, int *created,
	    char *err, size_t errsize);
int	outdir_check(void);
int	outdir_fd(void);
const char *outdir_path(void);
int	outdir_paused(void);
void	outdir_pause(int on);
uint64_t outdir_flush_gen(void);
uint64_t outdir_flush_next(void);
void	outdir_deleted_add(uint64_t events);
uint64_t outdir_deleted(void);
void	outdir_fini(void);

#endif /* TRACED_DAEMON_OUTDIR_H */
