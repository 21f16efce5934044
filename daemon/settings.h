/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * Where the daemon's settings come from, and SIGHUP (settings.c).
 * Part of main; loop thread.
 */
#ifndef TRACED_DAEMON_SETTINGS_H
#define TRACED_DAEMON_SETTINGS_H

#include <stddef.h>

int	settings_option(int k, const char *value, char *err, size_t errsize);
int	settings_from_cli(int k);
void	settings_load(int system_mode, const char *config_opt, char *where,
	    size_t wheresize);
const char *settings_trace_dir_default(void);
void	settings_reload(void);
void	settings_fini(void);

#endif /* TRACED_DAEMON_SETTINGS_H */
