/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * Sessions: one per connected traced process, with its providers, its
 * rings and its trace directory, and, grouped by file, the functions of
 * the modules that keep them:
 *
 *   client.c	the client socket, message dispatch, a session's life
 *		from accept to free, the sessions that ended lately
 *   provider.c	PROVIDER messages: limits, parse jobs, event tables
 *   sring.c	a ring's life: start, park, handover, grow, the pool's
 *		spares, and what the pipeline reports of it
 *   meta.c	a session's directory and its metadata file
 *   loss.c	loss warnings that say the cause and the fix
 *   record.c	what the index keeps of the live sessions
 *
 * Daemon-internal.  Loop thread only, but for what struct pfeed and
 * struct pring (pipeline.h) say the pipeline's threads may read.
 */
#ifndef TRACED_DAEMON_SESSION_H
#define TRACED_DAEMON_SESSION_H

#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>
#include <sys/types.h>

#include "pipeline.h"
#include "ring.h"
#include "wire.h"

struct event;
struct event_base;
struct notify_counts;
struct pdesc;
struct sfunc;
struct stat;

/* One registered provider of a session. */
struct sprov {
	uint32_t	 index;
	uint32_t	 id_base;
	uint32_t	 nevents;
	uint32_t	 cls;		/* class number of its first event */
	char		 name[TRACED_NAME_MAX];
	struct pdesc	*d;		/* reference: its events */
	uint8_t		*state;		/* our RW mapping of the process's
					   state memfd */
	size_t		 state_size;
	uint32_t	*fixed;		/* owned: recwalk_range.fixed */
};

struct session;

/*
 * One thread's ring, as the daemon sees it: what the pipeline knows of
 * it (p, pipeline.h), and the session's books of it.
 */
struct sring {
	struct pring	 p;		/* the pipeline's part */
	TAILQ_ENTRY(sring) entry;	/* s->rings */
	struct session	*s;
	uint32_t	 index;
	pid_t		 tid;		/* the thread writing it, as the loop
					   knows it */
	uint32_t	 order;		/* its size as the last chunk saw it */
	dev_t		 dev;		/* its memfd, to know it again when */
	ino_t		 ino;		/* the library gives it a new thread */
	uint64_t	 last_ts;	/* once ended: its stream's last
					   timestamp */
	TAILQ_ENTRY(sring) pentry;	/* s->parked, while parked */
	int		 parked;	/* ended, its stream kept open for
					   the ring's next thread */
	char		*stream_path;	/* the newest stream file opened */
	uint64_t	 fgen;		/* its number: 1, 2... */
	uint64_t	 stream_events;	/* events written to it */
	uint32_t	 parts;		/* its files in this directory, once
					   cut by stream-max-size: 1, 2... */
	uint64_t	 dead_gen;	/* files up to this one were in a
					   deleted directory */
	int		 reopen;	/* a new file once the metadata of
					   the session's new directory is
					   written */
	uint64_t	 charged;	/* ring bytes charged to the uid */
	int		 draining;	/* writeout_add()ed: its read and
					   stream state are the pipeline's */
	int		 ended;		/* its END chunk came back: the
					   drain thread and writers are done
					   with it */
	int		 finished;	/* thread exited, drained, closed */
	int		 quarantined;	/* failed validation: not drained */
	int		 books_closed;	/* the END counted the last losses */
	uint64_t	 gen_done;	/* flush generation drained+synced */
	uint64_t	 events;
	uint64_t	 lost_records;	/* traced:lost events in the stream */
	uint64_t	 bytes;
	uint64_t	 lost[TRACED_DROP_NCAUSES];
	int		 write_errno;	/* last write error, 0 if none */
	uint64_t	 counted_at;	/* ns, CLOCK_MONOTONIC: events last
					   counted (info counters) */
	uint64_t	 write_warn_next; /* ns, CLOCK_MONOTONIC: say it again
					   no sooner */
};

TAILQ_HEAD(sring_list, sring);

/* A rule of a process: traced_events_set() or TRACED_EVENTS (state.c). */
struct prule {
	char		*pattern;	/* owned */
	unsigned	 flags;		/* TRACED_RULE_* */
};

/* What a process's rules decide for the events of one of its providers. */
struct ptable {
	uint32_t	 index;		/* the client's provider number */
	uint32_t	 nevents;
	uint16_t	*dec;		/* owned: 0 no rule, k: prules[k - 1] */
};

struct session {
	TAILQ_ENTRY(session) entry;
	uint32_t	 id;
	pid_t		 pid;
	uid_t		 uid;
	gid_t		 gid;
	char		 comm[TRACED_COMM_MAX];
	char		 exe[256];
	int		 fd;		/* client socket, -1 once closed */
	struct event	*ev;
	int		 welcomed;
	int		 clock;		/* DCLOCK_*, from HELLO */
	int		 closing;	/* EOF: drain everything, then free */
	uint8_t		 uuid[16];
	char		*dir;		/* its CTF directory, for people */
	int		 dirfd;		/* that directory, open: every file
					   of the session is made in it;
					   -1 until made */
	struct sprov	**provs;
	uint32_t	 nprovs;
	uint32_t	 next_prov;	/* least index of the next one */
	uint32_t	 next_id;	/* least id_base of the next one */
	uint32_t	 nclasses;	/* event classes of its providers */
	/*
	 * What the pipeline knows of it (pipeline.h): its event tables
	 * (feed.newest, the drain thread reads it), and what its rings'
	 * drain may do, published once the metadata that describes them
	 * is written, or given up on (session_drain_publish()).
	 */
	struct pfeed	 feed;
	int		 reopen_pending; /* rings wait for a new directory's
					   metadata (session_rotate()) */
	int		 dir_lost;	/* dirfd was deleted and no new one
					   could be made yet: its rings
					   wait (session_check_dir()) */
	uint64_t	 dir_retry_at;	/* ns, CLOCK_MONOTONIC: try again */
	int		 dir_wait_said;	/* logged that they wait */
	uint32_t	 refused_providers; /* by a limit */
	uint32_t	 refused_rings;	/* by a limit: threads not traced */
	int		 meta_written;	/* metadata file made in dirfd ... */
	uint32_t	 meta_provs;	/* ... describing this many providers */
	int		 meta_errno;	/* why the last write failed, or 0 */
	int		 meta_waiting;	/* rings wait for it (writeout) */
	int		 meta_job_out;	/* intake is writing it */
	uint64_t	 meta_gen;	/* its directory's, for meta jobs */
	unsigned	 intake_out;	/* intake jobs that hold s */
	uint64_t	 closed_at;	/* ns, CLOCK_MONOTONIC: EOF */
	struct prule	*prules;	/* owned: the process's rules */
	uint32_t	 nprules;
	struct ptable	*ptables;	/* owned, by provider number */
	uint32_t	 nptables;
	uint64_t	 ptables_events; /* their events, charged as ids */
	struct sring_list rings;
	struct sring_list parked;	/* finished rings whose stream the
					   ring's next thread goes on in */
	uint32_t	 nparked;
	uint32_t	 nrings;
	uint64_t	 notify_all_next; /* ns, CLOCK_MONOTONIC: a NOTIFY
					   for a number not known yet reads
					   every ring again no sooner */
	struct sring	*others;	/* the books of the threads past
					   SESSION_THREADS_MAX that took a ring
					   in-band, together (sring.c) */
	struct sring	**by_index;	/* owned: rings by number (sring.c) */
	uint32_t	 nby_index;
	uint64_t	 started;	/* ns, CLOCK_REALTIME */
	uint64_t	 lost_disconnected;
	uint64_t	 counted_at;	/* ns, CLOCK_MONOTONIC: its rings'
					   events last counted */
	uint64_t	 warn_next;	/* ns, CLOCK_MONOTONIC: next loss warning */
	uint64_t	 lost_unwarned;	/* lost since the last warning */
	unsigned	 causes_unwarned; /* their causes, bits */
	unsigned	 why_unwarned;	/* LOSS_SAW_* seen meanwhile */
	unsigned	 late_unwarned;	/* ms, the drain thread's worst */
	pid_t		 tid_unwarned;	/* a thread that lost some of them */
	unsigned	 order_unwarned; /* the largest size its rings could take */
	uint32_t	 ring_order;	/* its rings' size, said in WELCOME */
	uint32_t	 spare_order;	/* asks the ring pool for one of
					   2^spare_order (pool.c); 0: not,
					   or answered */
	dev_t		 spare_dev;	/* the spare it holds and has not */
	ino_t		 spare_ino;	/* used, or 0 */

	/* For the index (record.c). */
	char		*cmdline;	/* owned; NULL if unreadable */
	const char	*how;		/* how it ended (static string) */
	int		 has_exit;	/* it said EXIT: */
	int		 exit_status;	/* what it gave exit() */
	uint64_t	*ev_counts;	/* owned: events written, by class */
	uint64_t	*ev_written;	/* owned: ev_counts as last indexed */
	uint32_t	 nev_counts;
	int		 index_dirty;	/* changed since the last batch */
	struct sfunc	*fn;		/* function tracing (func.c), owned;
					   NULL until its first MODULE */

	/* Snapshot triggers (trigger.c): by event class, the triggers its
	 * events set off, as the set and its classes were when made. */
	uint32_t	*trig_masks;	/* owned: trig_nclasses of them; NULL:
					   no class of it matches */
	uint32_t	 trig_nclasses;	/* classes looked at */
	uint32_t	 trig_any;	/* every trigger some class sets off */
	uint64_t	 trig_gen;	/* the set's generation then */
};

TAILQ_HEAD(session_list, session);

/* What is kept of an ended session for info trace (the last few). */
struct ended_thread {
	pid_t		 tid;
	uint64_t	 ring_size;	/* bytes, at its end */
	uint64_t	 ring_max;	/* bytes it could have grown to */
	uint64_t	 events;
	uint64_t	 lost_records;
	uint64_t	 lost[TRACED_DROP_NCAUSES];
};

struct ended_session {
	TAILQ_ENTRY(ended_session) entry;
	uint32_t	 id;
	pid_t		 pid;
	uid_t		 uid;
	char		 comm[TRACED_COMM_MAX];
	uint64_t	 started;	/* ns, CLOCK_REALTIME */
	uint64_t	 ended_at;
	char		*dir;
	uint64_t	 lost_disconnected;
	uint32_t	 nthreads;
	struct ended_thread *threads;
};

TAILQ_HEAD(ended_list, ended_session);
#define ENDED_KEEP	32

/* The sring whose pipeline part is p. */
#define SRING(pr)	((struct sring *)((char *)(pr) -		\
			    __builtin_offsetof(struct sring, p)))

/* client.c */
/*
 * The sessions (connected, or ended and still draining) and those that
 * ended lately, newest last (at most ENDED_KEEP).  client.c adds and
 * removes; everyone else only reads.
 */
extern struct session_list sessions;
extern struct ended_list ended_sessions;
int	client_listen(struct event_base *base, int fd, uint32_t first_id);
void	client_fini(void);
void	client_set_changed(void (*cb)(void));
void	client_changed(void);
int	client_check_fd(int fd, size_t size, int need_seals, const char **why);
void	sessions_stop(void);
int	sessions_stopping(void);
int	sessions_idle(void);
void	sessions_count(struct notify_counts *c, uint64_t since);
void	sessions_apply_state(void);
struct session *session_by_id(uint32_t id);
void	session_send(struct session *s, const void *msg, size_t len);
void	session_update_state(struct session *s);
void	session_job_done(struct session *s);
void	session_check_done(struct session *s);

/* provider.c */
int	provider_msg(struct session *s, const struct traced_msg_provider *m,
	    int fd, int state_fd);
void	provider_free_all(struct session *s);

/* sring.c */
int	sring_msg(struct session *s, const struct traced_msg_ring *m, int fd);
int	sring_notify(struct session *s, uint32_t index);
struct sring *session_ring(struct session *s, uint32_t index);
int	sring_open_stream(struct sring *r);
void	sring_release(struct sring *r);
void	session_unpark_all(struct session *s);
int	session_spare_ask(struct session *s, const struct traced_msg_spare *m);
void	session_spares_serve(void *arg);
void	sring_chunk_done(void *arg, const struct chunk *c);
uint64_t sring_events_all(void);

/* meta.c */
#define SESSION_META_GRACE_NS	(60 * UINT64_C(1000000000))
/* A session whose directory was deleted tries to make a new one this
 * often while it cannot (session_check_dir()). */
#define SESSION_DIR_RETRY_NS	(10 * UINT64_C(1000000000))
void	session_new_uuid(struct session *s);
int	session_ensure_dir(struct session *s);
int	session_rotate(struct session *s);
uint64_t session_check_dir(struct session *s, int outdir_ok);
void	sessions_check_dirs(void);
const struct session *sessions_dir_lost(void);
int	sessions_trace_dir_set(const char *path, const char *how,
	    int *created, char *err, size_t errsize);
int	session_metadata_sync(struct session *s);
int	session_meta_ready(const struct session *s);
void	session_meta_want(struct session *s);
void	session_quota_changed(struct session *s);
void	session_meta_retry(struct session *s);
void	sessions_meta_retry(void);

/* loss.c */
#define LOSS_WARN_INTERVAL_NS	(10 * UINT64_C(1000000000))
void	session_warn_loss(struct session *s, const struct sring *r,
	    uint64_t lost, unsigned causes, unsigned why, unsigned late_ms);
void	session_say_loss(struct session *s);

/* record.c */
void	record_init(void);
void	record_start(struct session *s);
void	record_changed(struct session *s);
void	record_counts(struct session *s, const struct cls_count *counts,
	    uint32_t n);
void	record_end(struct session *s);
void	record_free(struct session *s);
struct snapshot_result;
uint64_t record_snapshot(const struct snapshot_result *res);

#endif /* TRACED_DAEMON_SESSION_H */
