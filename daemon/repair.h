/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * Repairing what a daemon killed mid-write left (repair.c).
 * Daemon-internal; loop thread, at start.
 */
#ifndef TRACED_DAEMON_REPAIR_H
#define TRACED_DAEMON_REPAIR_H

void	repair_session_files(const char *dir, const char *stream);

#endif /* TRACED_DAEMON_REPAIR_H */
