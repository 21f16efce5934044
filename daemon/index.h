/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * The session index (index.c): an SQLite database of every traced
 * process, its threads, streams, per-event counts and drops, the
 * enable rules, the triggers and the trace directories.  A service: it
 * writes the rows it is given and answers queries; what the live
 * sessions hold is written by whoever keeps them (record.c), through
 * index_put_*().
 * Daemon-internal; loop thread.
 */
#ifndef TRACED_DAEMON_INDEX_H
#define TRACED_DAEMON_INDEX_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ring.h"
#include "rule.h"

struct event_base;

#define INDEX_SCHEMA_VERSION	5
#define INDEX_FILE		"index.db"	/* in the state directory */
#define INDEX_BATCH_MS		1000	/* live sessions written this often */

/* A session as the index has it.  Strings are borrowed for a call. */
struct index_session {
	uint32_t	 id;
	uint32_t	 run;		/* the daemon run that traced it */
	pid_t		 pid;
	uid_t		 uid;
	gid_t		 gid;
	const char	*comm;
	const char	*name;		/* executable's file name, or comm */
	const char	*exe;		/* NULL: unknown */
	const char	*cmdline;	/* NULL: unknown */
	const char	*clock;		/* NULL: never said HELLO */
	const char	*dir;		/* its (latest) trace directory */
	const char	*how;		/* NULL: running */
	int		 has_exit;	/* it said its exit status */
	int		 exit_status;	/* as given to exit() */
	uint64_t	 started;	/* ns, CLOCK_REALTIME */
	uint64_t	 ended;		/* ns, CLOCK_REALTIME; 0: running */
	uint64_t	 events;
	uint64_t	 lost;		/* every cause, before connecting too */
	uint64_t	 lost_before_connect;
	/* By cause: filled by index_session_get() only. */
	uint64_t	 lost_by_cause[TRACED_DROP_NCAUSES];
};

struct index_thread {
	uint32_t	 ring;
	pid_t		 tid;
	uint64_t	 ring_size;	/* bytes */
	uint64_t	 events;
	uint64_t	 bytes;
	uint64_t	 lost_records;
	uint64_t	 lost[TRACED_DROP_NCAUSES];
	const char	*state;		/* active, finished, closed, refused,
					   interrupted */
};

struct index_stream {
	uint32_t	 ring;
	pid_t		 tid;
	const char	*path;
	uint64_t	 seen;		/* ns, CLOCK_REALTIME: first indexed */
};

struct index_event {
	uint32_t	 id;
	const char	*provider;
	const char	*name;
	uint64_t	 count;
};

struct index_query {
	uint64_t	 since;		/* ns, CLOCK_REALTIME; 0: all */
	pid_t		 pid;		/* 0: any */
	const char	*exe;		/* path or file name; NULL: any */
	long		 limit;		/* < 0: all */
};

typedef void (*index_session_cb)(void *, const struct index_session *);

/* What index_session_get() reports; any callback may be NULL. */
struct index_visitor {
	index_session_cb on_session;
	void	(*on_thread)(void *, const struct index_thread *);
	void	(*on_stream)(void *, const struct index_stream *);
	void	(*on_event)(void *, const struct index_event *);
	void	*arg;
};

/*
 * Who writes the live sessions: flush() writes what changed (through
 * index_begin() and index_put_*()) every INDEX_BATCH_MS and when the
 * info commands ask (index_sync()); lost() hears that a commit failed,
 * so that everything is written again.
 */
struct index_writer {
	int	(*flush)(void *arg);
	void	(*lost)(void *arg);
	void	*arg;
};

int	index_open(struct event_base *base, const char *state_dir,
	    const char *state_at, struct rule **rules, size_t *nrules,
	    uint32_t *next_session);
void	index_close(void);
int	index_available(void);
int	index_ready(void);
void	index_set_writer(const struct index_writer *w);
int	index_begin(void);
void	index_failed(const char *what);
int	index_commit(void);
int	index_put_session(const struct index_session *row, uint64_t now);
int	index_put_thread(uint32_t id, const struct index_thread *t);
int	index_put_stream(uint32_t id, const struct index_stream *m);
int	index_put_event(uint32_t id, const struct index_event *e);
int	index_sync(void);
int	index_rules_save(const struct rule *rules, size_t n);
int	index_trace_dir_set(const char *path, const char *how);
long	index_ended_dirs(void (*cb)(void *, uid_t, const char *), void *arg);
long	index_sessions_list(const struct index_query *q, index_session_cb cb,
	    void *arg, int *more);
int	index_session_get(uint32_t id, const struct index_visitor *v);
int	index_func_rules_save(const char *kind, const struct rule *rules,
	    size_t n);
int	index_func_rules_load(const char *kind, struct rule **rules, size_t *n);

/* A snapshot the recorder wrote (recorder.c). */
struct index_snapshot {
	uint64_t	 id;
	uint64_t	 time;		/* ns, CLOCK_REALTIME */
	const char	*dir;
	const char	*reason;
	unsigned	 sessions;
	uint64_t	 events;
	uint64_t	 bytes;
	int		 has_uid;	/* one user's (a trigger's) ... */
	uid_t		 uid;		/* ... this one, charged to its quota */
};

uint64_t index_snapshot_put(const struct index_snapshot *s);
long	index_snapshots_list(long limit,
	    void (*cb)(void *, const struct index_snapshot *), void *arg);

/* A trigger as the index keeps it (trigger.c); strings borrowed for a call. */
struct index_trigger {
	const char	*glob;
	const char	*action;
	uint64_t	 after_ns;
	uint64_t	 every_ns;
};
int	index_triggers_save(const struct index_trigger *t, size_t n);
int	index_triggers_load(void (*cb)(void *, const struct index_trigger *),
	    void *arg);

/* ixckpt.c */
struct sqlite3;
int	ixckpt_start(const char *path, int nice);
int	ixckpt_wal_hook(void *arg, struct sqlite3 *db, const char *name,
	    int frames);
void	ixckpt_stop(void);

#endif /* TRACED_DAEMON_INDEX_H */
