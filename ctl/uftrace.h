/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * A uftrace.data directory, written from the items of traced trace
 * directories in time order (shared/formats/uftrace.md has the layout
 * uftrace 0.13 reads).  What feeds it is the export command's business
 * (export-uftrace.c); this file knows only uftrace's side:
 *
 *	w = uftrace_new(dirfd, err_cb, arg);
 *	uftrace_session(w, s, ...) for each session, uftrace_thread() for
 *	    each thread (before their first record);
 *	uftrace_entry(), uftrace_exit(), uftrace_event(), uftrace_lost()
 *	    in time order;
 *	uftrace_finish(w); uftrace_free(w);
 *
 * Each session becomes a uftrace session (its sid the session number),
 * its objects with functions the maps and .sym files (addresses named
 * from the session's functions/module-N files, so no binary is needed),
 * each thread a <tid>.dat of records, each loss a LOST record, each
 * other event a uftrace EVENT.  Memory grows with sessions, threads and
 * the depth of their calls, never with the number of records.
 * tracectl-internal; one writer per thread.
 */
#ifndef TRACED_CTL_UFTRACE_H
#define TRACED_CTL_UFTRACE_H

#include <stddef.h>
#include <stdint.h>

struct uftrace;

/* Each problem, "what" (the export goes on; the status will say so). */
typedef void	(*uftrace_error_cb)(void *arg, const char *msg);

/*
 * A writer into the directory open at dirfd (borrowed; its files are
 * made with openat(), never followed).  NULL when out of memory.
 */
struct uftrace	*uftrace_new(int dirfd, uftrace_error_cb cb, void *arg);

/*
 * Session number 'idx' (0, 1, ... in the order given): its directory
 * (for functions/module-N), the process id, the daemon's session number
 * (or -1) and the process name.  0, or -1 when out of memory.
 */
int	uftrace_session(struct uftrace *w, size_t idx, const char *path,
	    int64_t pid, int64_t number, const char *comm);

/* Thread number 'idx' of session 'sess', with its tid.  0 or -1. */
int	uftrace_thread(struct uftrace *w, size_t idx, size_t sess,
	    uint64_t tid);

/*
 * A function entry or exit of thread 'thr' at 'ns' (since the Epoch):
 * its address and the depth traced recorded.  0, or -1 on a write
 * error (said).
 */
int	uftrace_entry(struct uftrace *w, size_t thr, int64_t ns,
	    uint64_t addr, uint64_t depth);
int	uftrace_exit(struct uftrace *w, size_t thr, int64_t ns,
	    uint64_t addr, uint64_t depth);

/* Another event ("provider:event"), a uftrace event.  0 or -1. */
int	uftrace_event(struct uftrace *w, size_t thr, int64_t ns,
	    const char *name);

/* 'count' events lost there.  0 or -1. */
int	uftrace_lost(struct uftrace *w, size_t thr, int64_t ns,
	    uint64_t count);

/*
 * Write info, task.txt, the maps, the symbol files and events.txt, and
 * close the data files.  0, or -1 if something could not be written
 * (said).
 */
int	uftrace_finish(struct uftrace *w);

/* Free the writer; NULL is fine. */
void	uftrace_free(struct uftrace *w);

#endif /* TRACED_CTL_UFTRACE_H */
