/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * Function calls in a function trace.  The graph tracer writes a
 * traced:func_entry and a traced:func_exit record (an address and the
 * depth of the call on its thread) around each traced call; this file
 * turns them into what people read:
 *
 *   - names: an address becomes "object:function" ("lua:luaD_precall",
 *     the object's file name as trace-func rules spell it), from the
 *     session's functions/module-N files, so that no binary is needed
 *     and a rebuilt one cannot mislead; an address no table covers is
 *     "object+0xOFFSET" or "0xADDRESS";
 *   - calls: per thread, each entry opens a call and its exit closes it,
 *     with its duration and its self time (less its callees').  Records
 *     that were lost are handled as the uftrace export does: an exit
 *     closes the calls opened inside it whose exits were lost; an entry
 *     at the depth of an open call closes that call (its exit was lost);
 *     an exit whose entry the reader never saw (lost, filtered out, or
 *     before a fork()) closes nothing.  Calls still open when the trace
 *     ends are closed at their thread's last record, as unfinished.
 *
 *	c = calls_new(nsessions, nthreads, err_cb, arg);
 *	calls_feed(c, it, step_cb, arg) for every item, in time order;
 *	calls_finish(c, step_cb, arg);
 *	calls_free(c);
 *
 * step_cb sees the calls open and close in time order, so that a
 * consumer can draw nested slices as it goes.  Memory grows with
 * sessions, threads, their call depth and the distinct functions,
 * never with the number of records.  tracectl-internal; one user per
 * thread.
 */
#ifndef TRACED_CTL_CALLS_H
#define TRACED_CTL_CALLS_H

#include <stddef.h>
#include <stdint.h>

struct functab_module;
struct reader_item;
struct reader_session;
struct reader_thread;

/* One function, the same object for every session that names it so. */
struct call_fn {
	const char	*name;		/* "object:function", or unnamed */
	size_t		 id;		/* 0, 1, ... in order of first sight */
};

enum call_how {
	CALL_OPEN,			/* its entry */
	CALL_CLOSE,			/* its end, see call_end */
};

enum call_end {
	CALL_RETURNED,			/* its exit record */
	CALL_NO_EXIT,			/* its exit was lost: closed at the
					   record that showed it had ended */
	CALL_UNFINISHED,		/* still open when the trace ended */
};

struct call_step {
	enum call_how	 how;
	enum call_end	 end;		/* CALL_CLOSE */
	const struct call_fn *fn;
	const struct reader_session *sess;
	const struct reader_thread *thread;
	unsigned	 level;		/* calls open around it (0: none) */
	int64_t		 start_ns;
	int64_t		 end_ns;	/* CALL_CLOSE */
	int64_t		 self_ns;	/* CALL_CLOSE: less its callees' */
};

/* Each step; 0, or -1 to stop (calls_feed() then returns -1). */
typedef int	(*calls_step_cb)(void *arg, const struct call_step *s);

/* Each problem ("PATH: what"); the calls go on unnamed. */
typedef void	(*calls_error_cb)(void *arg, const char *msg);

struct calls;

/*
 * For the sessions and threads of one reader: as many as it found, and
 * more as they come (print --follow).  NULL: no memory.
 */
struct calls	*calls_new(size_t nsessions, size_t nthreads,
		    calls_error_cb cb, void *arg);
void		 calls_free(struct calls *c);

/*
 * Is it a graph tracer record?  1 with *exit_ (0 entry, 1 exit), *addr
 * and *depth set; 0 for anything else (a provider's own event of that
 * name without those fields included).
 */
int	calls_record(const struct reader_item *it, int *exit_,
	    uint64_t *addr, uint64_t *depth);

/* The function at addr in session s.  NULL: no memory. */
const struct call_fn *calls_name(struct calls *c,
		    const struct reader_session *s, uint64_t addr);

/*
 * Take one item (any kind: the others tell a thread's last time) and
 * give the steps it makes, in order, to cb.  0, or -1 when out of
 * memory or cb stopped.
 */
int	calls_feed(struct calls *c, const struct reader_item *it,
	    calls_step_cb cb, void *arg);

/* Close every call still open, as CALL_UNFINISHED.  0 or -1. */
int	calls_finish(struct calls *c, calls_step_cb cb, void *arg);

/* The distinct functions named so far, by id. */
size_t	calls_nfns(const struct calls *c);
const struct call_fn *calls_fn(const struct calls *c, size_t id);

/*
 * The functions/module-N files of a session directory, sorted by start
 * address, into *mods (free each with functab_module_free(), then the
 * array).  A file that cannot be read or parsed is said through cb and
 * skipped.  0, or -1 when out of memory.
 */
int	calls_load_modules(const char *sessdir, struct functab_module **mods,
	    size_t *nmods, calls_error_cb cb, void *arg);

#endif /* TRACED_CTL_CALLS_H */
