/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * tracectl print --follow: the events of the daemon's sessions as the
 * daemon writes them, running sessions and new ones, with print's
 * filters, handed one at a time to the caller (print.c renders them).
 * follow.c says how.  tracectl-internal; main thread.
 */
#ifndef TRACED_CTL_FOLLOW_H
#define TRACED_CTL_FOLLOW_H

#include "reader.h"

/* One item to show; returns 0, or -1 when out of memory. */
typedef int	(*follow_item_cb)(void *arg, const struct reader_item *it);

/*
 * Follow the sessions of the daemon tracectl finds, with the filters
 * o, until SIGINT or SIGTERM, --limit or --until.  Each item goes to
 * 'cb' (stdout is flushed after each batch), each problem to 'err'.
 * Returns EXIT_DONE; EXIT_FAILED when a problem was met (or out of
 * memory); EXIT_UNREACHABLE when there is no daemon at the start (said
 * on stderr).  A reader that closed stdout's pipe ends it quietly,
 * with EXIT_DONE.
 */
int	follow_main(const struct reader_opts *o, follow_item_cb cb,
	    reader_error_cb err, void *arg);

#endif /* TRACED_CTL_FOLLOW_H */
