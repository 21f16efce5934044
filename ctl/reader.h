/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * The one reader of trace directories: tracectl print, stats and every
 * export are consumers of it.  It finds the sessions under the paths it
 * is given (tracedir-io.c), walks every stream with the pure core
 * (tracedir-stream.c) a window at a time, and merges them into one
 * sequence of items in time order, across threads and sessions, with
 * the filters of the command line applied:
 *
 *	struct reader_opts o;		reader_opts_init(&o);
 *	... reader_opt(&o, argc, argv, &i, err, sizeof(err)) per option ...
 *	struct reader *r = reader_new(&o, on_error, arg);
 *	reader_add(r, "DIR");  ...
 *	while ((rc = reader_next(r, &it)) > 0)
 *		consume(it);
 *	reader_free(r);
 *
 * Memory is bounded by what runs at the same time, not by the size of
 * the trace: a stream is opened when the merge reaches its first packet
 * and closed after its last, and each open stream holds one window of
 * its file (64 KiB, more only for an item that needs it, up to
 * READER_ITEM_MAX).
 *
 * Everything read is hostile: a corrupt packet goes to the error
 * callback as "FILE: offset N: what", is skipped, and the walk goes on
 * at the next packet that reads; nothing in a trace can make the reader
 * crash, allocate without bound or loop.  tracectl-internal; one
 * reader per thread.
 */
#ifndef TRACED_CTL_READER_H
#define TRACED_CTL_READER_H

#include <stddef.h>
#include <stdint.h>

#include "ring.h"
#include "tracedir.h"

/* The largest item (packet header, event) a window grows to hold. */
#define READER_ITEM_MAX		(4u << 20)

/* A time given on the command line. */
struct reader_time {
	int		 set;
	int		 relative;	/* "+2s": from the trace's start */
	int64_t		 ns;		/* since the Epoch, or the offset */
};

/*
 * The filters every command that reads traces takes (print, stats,
 * export), as reader_opt() parses them:
 *
 *   --event GLOB    keep events whose "provider:event" or "event"
 *                   matches (repeatable; fnmatch(3) globs)
 *   --pid PID, --tid TID            (repeatable)
 *   --session NAME  session directory name (glob) or session number
 *   --since TIME, --until TIME      absolute or relative (+2s)
 *   --lost          only the places where events were lost
 *   --limit N       stop after N items
 */
struct reader_opts {
	char		**events;	/* borrowed from argv */
	size_t		 nevents;
	int64_t		*pids;		/* owned */
	size_t		 npids;
	int64_t		*tids;		/* owned */
	size_t		 ntids;
	char		**sessions;	/* borrowed from argv */
	size_t		 nsessions;
	struct reader_time since;
	struct reader_time until;
	int		 lost_only;
	uint64_t	 limit;		/* 0: no limit */
};

/* What an item is. */
enum reader_kind {
	READER_EVENT,			/* an event of the trace */
	READER_LOST,			/* events were lost here */
};

/*
 * Why events were lost: 0 .. TRACED_DROP_PRODUCER_NCAUSES - 1 are the
 * producer's causes (enum traced_drop_cause, proto/ring.h), in the
 * order of a traced:lost record's fields; then the reader's own.
 */
enum reader_cause {
	/* Counted by CTF events_discarded with no traced:lost record: a
	 * write error, or the thread ended before it could report. */
	READER_CAUSE_OTHER = TRACED_DROP_PRODUCER_NCAUSES,
	READER_NCAUSES
};

/* One traced process: a session directory that reads. */
struct reader_session {
	size_t		 index;		/* 0 .. nsessions - 1 */
	const char	*name;		/* directory name: comm-pid-session */
	const char	*path;
	const char	*comm;		/* procname, or "?" */
	const char	*hostname;	/* or "" */
	int64_t		 pid;		/* vpid, or -1 */
	int64_t		 number;	/* the daemon's session number, or
					   -1 */
	const struct tracedir_meta *meta;
};

/*
 * One thread of a session: the packets that name it, in one stream (of
 * one or more files) or, one thread after another, sharing a stream.
 */
struct reader_thread {
	size_t		 index;		/* 0 .. nthreads - 1 */
	const struct reader_session *sess;
	uint64_t	 tid;
	int64_t		 first_ns;	/* of its first packet */
};

/*
 * One item of the merged sequence.  Valid until the next
 * reader_next(); the event's strings point into the reader's windows.
 */
struct reader_item {
	enum reader_kind kind;
	const struct reader_session *sess;
	const struct reader_thread *thread;
	int64_t		 ns;		/* wall clock: ns since the Epoch */
	uint64_t	 ticks;		/* the same, in the session's clock */
	const struct tracedir_event *ev; /* READER_EVENT */
	/* READER_LOST */
	uint64_t	 lost;		/* events, all causes */
	uint64_t	 causes[READER_NCAUSES];
	uint64_t	 packets;	/* whole packets missing (their
					   events are not counted) */
};

struct reader;

/* Called with each problem, "PATH: what" or "FILE: offset N: what". */
typedef void	(*reader_error_cb)(void *arg, const char *msg);

/* Empty filters: everything passes. */
void	reader_opts_init(struct reader_opts *o);

/* Free what the filters own. */
void	reader_opts_free(struct reader_opts *o);

/*
 * If argv[*i] is one of the filter options, consume it (and its
 * argument: *i moves past what was used) and return 1; return 0 if it
 * is not one; -1 with the reason in err if it is malformed.
 */
int	reader_opt(struct reader_opts *o, int argc, char **argv, int *i,
	    char *err, size_t errlen);

/* The filter options, for a command's --help. */
extern const char reader_opts_help[];

/*
 * A reader with these filters (copied: o may go away, the strings it
 * points to may not).  Problems go to cb.  NULL when out of memory.
 */
struct reader	*reader_new(const struct reader_opts *o, reader_error_cb cb,
	    void *arg);

/*
 * Add the sessions at or below 'path' (before the first reader_next()).
 * Returns 0, or -1 when out of memory; other problems go to the
 * callback and are counted.
 */
int	reader_add(struct reader *r, const char *path);

/*
 * Look at the packet headers of every stream file (their threads),
 * group the files of each stream, and resolve relative times.  Done by
 * the first reader_next(); callable before it to see the sessions and
 * threads.  Returns 0 or -1 when out of memory.
 */
int	reader_start(struct reader *r);

/*
 * The next item in time order (ties: in the order the streams were
 * found), filters applied.  Returns 1 with *out set, 0 at the end, -1
 * when out of memory (said to the callback).
 */
int	reader_next(struct reader *r, const struct reader_item **out);

/* The sessions and threads found (after reader_start()). */
const struct reader_session *reader_sessions(const struct reader *r,
	    size_t *n);
const struct reader_thread *reader_threads(const struct reader *r,
	    size_t *n);

/* Problems reported so far. */
size_t	reader_nerrors(const struct reader *r);

/* Close every file and free everything; NULL is fine. */
void	reader_free(struct reader *r);

/*
 * The filters one at a time, for a reader of its own (follow.c): do
 * --pid and --session keep session s; does --event keep class c (the
 * built-in traced:lost always is)?  1 or 0.
 */
int	reader_opts_session(const struct reader_opts *o,
	    const struct reader_session *s);
int	reader_opts_class(const struct reader_opts *o,
	    const struct tracedir_class *c);

/*
 * A --since or --until time in ns since the Epoch: "+2s" after
 * 'start', "HH:MM:SS" on the local day of 'start'; 'unset' when the
 * option was not given.
 */
int64_t	reader_time_resolve(const struct reader_time *t, int64_t start,
	    int64_t unset);

/*
 * The name of a cause, as print, stats and the exports show it: the
 * producer's as proto/cause.h names them, then "other"; "?" for a
 * number that is not a cause.
 */
const char *reader_cause_name(enum reader_cause c);

/*
 * Parse a duration ("2s", "1.5ms", "300us", "10ns", "2m", "1h"; a bare
 * number is seconds) into ns.  Returns 0 or -1.
 */
int	reader_parse_duration(const char *s, int64_t *ns);

#endif /* TRACED_CTL_READER_H */
