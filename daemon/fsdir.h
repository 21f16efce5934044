/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * Directories the daemon writes into, opened and checked once
 * (fsdir.c): files are made relative to their descriptors.
 * Daemon-internal; any thread.
 */
#ifndef TRACED_DAEMON_FSDIR_H
#define TRACED_DAEMON_FSDIR_H

#include <stddef.h>
#include <sys/types.h>

struct stat;

#define FSDIR_CREATE_NONE	0	/* it must exist */
#define FSDIR_CREATE_LAST	1	/* its parent must exist */
#define FSDIR_CREATE_ALL	2	/* like mkdir -p */

int	fsdir_open(const char *path, int create, mode_t mode, char *err,
	    size_t errsize);
int	fsdir_check_stat(const struct stat *st, const char *path, char *err,
	    size_t errsize);
int	fsdir_deleted(int fd);
const char *fsdir_path(int fd, const char *fallback, char *buf, size_t size);

#endif /* TRACED_DAEMON_FSDIR_H */
