/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * The flight recorder (recorder.c): a consumer of the pipeline
 * (pipeline.h) that keeps, for each recording session, a window of its
 * most recent packets in the daemon's memory instead of writing them,
 * counts per thread what the window pushes out (overwritten), and
 * writes snapshots of the windows as CTF directories on a thread of
 * its own.  A window outlives its session for a while (recorder-keep,
 * recorder-keep-time), so that the last events of a process that
 * crashed or was killed can still be written.  Daemon-internal; loop
 * thread but for the consumer.
 */
#ifndef TRACED_DAEMON_RECORDER_H
#define TRACED_DAEMON_RECORDER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct event_base;
struct rwindow;
struct snapshot_result;

/* The consumer that keeps the windows, added after the stream writer. */
extern const struct consumer recorder_consumer;

/* indexed(): a snapshot was written, for the index; its row id. */
int	recorder_start(struct event_base *base, int state_dirfd,
	    uint64_t (*indexed)(const struct snapshot_result *));
void	recorder_stop(void);
struct config;
void	recorder_configure(const struct config *c);
uint64_t recorder_size(void);
int	recorder_dirfd(void);

/* What info trace shows of the recorder. */
struct recorder_stats {
	uint64_t	 size;		/* a window's; 0: off */
	uint64_t	 per_uid;
	unsigned	 keep;
	uint64_t	 keep_ns;
	unsigned	 windows;
	unsigned	 ended;		/* of them, of sessions gone */
	uint64_t	 bytes;		/* their packets' memory */
	uint64_t	 spare_bytes;	/* packet buffers kept for reuse */
	uint64_t	 events;		/* taken in by the windows held */
	uint64_t	 overwritten;	/* pushed out, every window ever */
	uint64_t	 lost;
	uint64_t	 snapshots;	/* written since start */
};

struct recorder_window_info {
	uint32_t	 session;
	uid_t		 uid;
	pid_t		 pid;
	char		 comm[64];
	int		 ended;
	uint64_t	 bytes;
	uint64_t	 packets;
	uint64_t	 events;
	uint64_t	 overwritten;
	uint64_t	 lost;
	uint32_t	 threads;
};

void	recorder_stats(struct recorder_stats *st);
void	recorder_windows(void (*cb)(void *,
	    const struct recorder_window_info *), void *arg);

/* A session's window, made when its directory is (meta.c). */
struct rwindow *recorder_window_new(uint32_t session, uid_t uid, pid_t pid,
	    const char *comm, int clock);
void	recorder_window_dir(struct rwindow *w, int dirfd, const char *name);
void	recorder_window_end(struct rwindow *w);

/* What a finished snapshot reports (its done callback, loop thread). */
struct snapshot_result {
	uint64_t	 id;		/* its index row, 0 if none */
	uint64_t	 time;		/* ns, CLOCK_REALTIME: taken */
	const char	*dir;		/* where it was written */
	const char	*reason;
	int		 any_uid;	/* as asked: every user's windows, */
	uid_t		 uid;		/* or this one's */
	unsigned	 sessions;	/* windows written */
	uint64_t	 events;
	uint64_t	 bytes;
	int		 err;		/* 0, or why it failed ... */
	const char	*errmsg;	/* ... said for people */
};

/*
 * A snapshot to write: the windows of the sessions that match, as they
 * are now, into a new directory.  uid: only that uid's windows (a
 * trigger: what one user's event sets off is that user's), unless
 * any_uid.  glob: the process name or session directory name, NULL for
 * all.  last_ns: only packets that end within it before now, 0 for the
 * whole window.  dir: a new directory to make (absolute), NULL for one
 * named after the time in the trace directory.  reason: for the index
 * and the log ("tracectl", "trigger 'GLOB'").
 */
struct snapshot_req {
	int		 any_uid;
	uid_t		 uid;
	const char	*glob;
	uint64_t	 last_ns;
	const char	*dir;
	const char	*reason;
	void		(*done)(void *arg, const struct snapshot_result *);
	void		*arg;
};

/* Start writing one; done() is called later, on the loop thread.
 * 0, or -1 with the reason in err (nothing started, no callback). */
int	recorder_snapshot(const struct snapshot_req *req, char *err,
	    size_t errsize);

#endif /* TRACED_DAEMON_RECORDER_H */
