/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * traced's program header: the daemon's objects and, grouped by file,
 * the functions each file offers.  Daemon-internal.
 *
 * Threads: everything here belongs to the libevent loop thread except
 * what writeout.c says its workers may touch (a ring's drain fields
 * while the ring is queued, and the job in hand).
 */
#ifndef TRACED_DAEMON_TRACED_H
#define TRACED_DAEMON_TRACED_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>
#include <sys/types.h>

#include "ring.h"
#include "tevents.h"
#include "wire.h"

struct event;
struct event_base;
struct reply;

#define DRAIN_CHUNK	(64u << 10)	/* largest packet payload: tail is
					   published after each packet */

/* One registered provider of a session. */
struct sprov {
	uint32_t	 index;
	uint32_t	 id_base;
	uint32_t	 nevents;
	char		 name[TRACED_NAME_MAX];
	struct tevents_file tf;		/* owned: the parsed description */
	uint8_t		*state;		/* our RW mapping of the process's
					   state memfd */
	size_t		 state_size;
};

/*
 * The event layouts of a session, indexed by id - TRACED_EVENT_ID_BASE.
 * Immutable once built; a new provider makes a new table.  Jobs hold a
 * reference (counted on the loop thread only) while a worker reads it.
 */
struct evtab {
	unsigned	 refs;
	uint32_t	 nids;
	const struct tevents_event **ev;	/* borrowed from sprov.tf */
};

struct session;

/* One thread's ring, as the daemon sees it. */
struct sring {
	TAILQ_ENTRY(sring) entry;
	struct session	*s;
	uint32_t	 index;
	pid_t		 tid;
	uint32_t	 order;
	struct traced_ring_hdr *hdr;	/* our mapping */
	uint8_t		*data;		/* first copy of the data area */
	size_t		 map_len;

	/* Drain state: the worker's while queued, the loop's otherwise. */
	uint64_t	 tail;		/* ours; published to hdr->tail */
	int		 stream_fd;
	off_t		 stream_size;	/* bytes of whole packets */
	uint64_t	 seq;		/* next packet_seq_num */
	uint64_t	 discarded;	/* running events_discarded */
	uint64_t	 last_ts;
	char		*stream_path;

	/* Loop thread only. */
	int		 queued;	/* a job is out */
	int		 again;		/* drain again when it comes back */
	int		 sync_again;	/* ... and fdatasync */
	int		 reopen;	/* new stream file at next drain */
	int		 finished;	/* thread exited, drained, closed */
	int		 quarantined;	/* failed validation: not drained */
	int		 books_closed;	/* a job's drain_close() ran */
	uint64_t	 gen_done;	/* flush generation drained+synced */
	uint64_t	 events;
	uint64_t	 lost_records;	/* traced:lost events in the stream */
	uint64_t	 bytes;
	uint64_t	 lost[TRACED_DROP_NCAUSES];
	int		 write_errno;	/* last write error, 0 if none */
};

TAILQ_HEAD(sring_list, sring);

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
	char		*dir;		/* its CTF directory */
	struct sprov	**provs;
	uint32_t	 nprovs;
	uint32_t	 next_prov;	/* least index of the next one */
	uint32_t	 next_id;	/* least id_base of the next one */
	struct evtab	*evtab;
	struct sring_list rings;
	uint32_t	 nrings;
	uint64_t	 started;	/* ns, CLOCK_REALTIME */
	uint64_t	 lost_disconnected;
	uint64_t	 warn_next;	/* ns, CLOCK_MONOTONIC: next loss warning */
	uint64_t	 lost_unwarned;	/* lost since the last warning */
	unsigned	 causes_unwarned; /* their causes, bits */

	/* For the index (index.c). */
	char		*cmdline;	/* owned; NULL if unreadable */
	const char	*how;		/* how it ended (static string) */
	uint64_t	*ev_counts;	/* owned: events written, by id -
					   TRACED_EVENT_ID_BASE */
	uint64_t	*ev_written;	/* owned: ev_counts as last indexed */
	uint32_t	 nev_counts;
	int		 index_dirty;	/* changed since the last batch */
};

TAILQ_HEAD(session_list, session);

/* What is kept of an ended session for info trace (the last few). */
struct ended_thread {
	pid_t		 tid;
	uint64_t	 events;
	uint64_t	 lost_records;
	uint64_t	 lost[TRACED_DROP_NCAUSES];
};

struct ended {
	TAILQ_ENTRY(ended) entry;
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

TAILQ_HEAD(ended_list, ended);
#define ENDED_KEEP	32

struct rule {
	char		*pattern;
	int		 on;
};

struct config {
	char		*runtime_dir;
	char		*trace_dir;
	char		*state_dir;
	uint32_t	 ring_order;
	unsigned	 workers;
	unsigned	 drain_ms;
	int		 writeout_nice;	/* niceness of the writeout threads */
	int		 foreground;
	int		 user;		/* a per-user daemon, not the system's */
};

/* A clock as CTF describes it: realtime = offset_s + (offset + t) / freq. */
struct dclock {
	const char	*name;		/* "monotonic", "tsc" */
	uint8_t		 uuid[16];	/* per boot: sessions merge */
	uint64_t	 freq;		/* ticks per second */
	int64_t		 offset_s;
	uint64_t	 offset;	/* ticks */
};

#define DCLOCK_MONO	0
#define DCLOCK_TSC	1

struct traced {
	struct event_base *base;
	struct config	 cfg;
	int		 client_fd;
	int		 control_fd;
	struct event	*ev_client;
	struct event	*ev_control;
	struct event	*ev_timer;
	struct session_list sessions;
	struct ended_list ended;	/* newest last, at most ENDED_KEEP */
	unsigned	 nended;
	uint32_t	 next_session;
	struct rule	*rules;
	size_t		 nrules;
	int		 paused;
	int		 stopping;
	uint64_t	 flush_gen;
	struct writeout	*wo;
	/* The clocks a session's metadata may describe: CLOCK_MONOTONIC
	 * and, where invariant, the TSC (calibrated at start). */
	struct dclock	 clk[2];	/* DCLOCK_* */
	int		 have_tsc;
	char		 hostname[256];
	uid_t		 uid;
	gid_t		 gid;
};

extern struct traced *td;

/* log.c */
void	log_init(int foreground);
void	log_warn(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_warnx(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_info(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_debug(const char *, ...) __attribute__((format(printf, 1, 2)));
void	fatal(const char *, ...)
	    __attribute__((format(printf, 1, 2), noreturn));
void	fatalx(const char *, ...)
	    __attribute__((format(printf, 1, 2), noreturn));
extern int log_verbose;

/* client.c */
int	client_listen(int fd);
void	session_close(struct session *s);
void	session_check_done(struct session *s);
int	session_rotate(struct session *s);
void	session_update_state(struct session *s);
void	session_warn_loss(struct session *s, const struct sring *r,
	    uint64_t lost, unsigned causes);
#define LOSS_WARN_INTERVAL_NS	(10 * UINT64_C(1000000000))
struct sring *session_ring(struct session *s, uint32_t index);
void	sring_close_stream(struct sring *r);
int	sring_open_stream(struct sring *r);

/* state.c */
int	state_event_on(const char *provider, const struct tevents_event *ev);
int	state_rule_add(const char *pattern, int on);
void	state_apply_all(void);
int	state_glob_match(const char *pattern, const char *name);

/* index.c */
#define INDEX_SCHEMA_VERSION	1
#define INDEX_FILE		"index.db"	/* in the state directory */
#define INDEX_BATCH_MS		1000	/* live sessions written this often */

/* A session as the index has it.  Strings are borrowed for a callback. */
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
	index_session_cb session;
	void	(*thread)(void *, const struct index_thread *);
	void	(*stream)(void *, const struct index_stream *);
	void	(*event)(void *, const struct index_event *);
	void	*arg;
};

int	index_open(void);
void	index_close(void);
int	index_available(void);
void	index_session_start(struct session *s);
void	index_session_changed(struct session *s);
void	index_session_counts(struct session *s, const uint64_t *counts,
	    uint32_t n);
void	index_session_end(struct session *s);
void	index_session_free(struct session *s);
int	index_sync(void);
int	index_rules_save(const struct rule *rules, size_t n);
int	index_trace_dir_set(const char *path, const char *how);
long	index_sessions_list(const struct index_query *q, index_session_cb cb,
	    void *arg, int *more);
int	index_session_get(uint32_t id, const struct index_visitor *v);
const char *index_cause_name(int cause);

/* writeout.c */
struct writeout;
struct writeout *writeout_new(struct event_base *base, unsigned nworkers,
	    int nice);
void	writeout_free(struct writeout *wo);
void	writeout_submit(struct sring *r, int sync);
void	writeout_drain_all(int sync);
int	writeout_idle(void);
unsigned writeout_nworkers(void);
void	evtab_put(struct evtab *t);
struct evtab *evtab_get(struct evtab *t);

/* control.c */
int	control_listen(int fd);
void	control_flush_check(void);
void	control_close_all(void);
void	accept_failed(struct event *ev, const char *what);

/* cmd.c */
struct reply;
int	cmd_exec(struct reply *r, int argc, char **argv, uid_t uid,
	    gid_t gid);
void	reply_line(struct reply *r, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
int	reply_json(const struct reply *r);
int	reply_failed(const struct reply *r);
void	reply_error(struct reply *r, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
void	reply_message(struct reply *r, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
void	reply_end(struct reply *r);
void	reply_wait_flush(struct reply *r, uint64_t gen);
const char *json_str(char *buf, size_t size, const char *s);

/* config.c */
enum {
	CONFIG_RUNTIME_DIR,
	CONFIG_TRACE_DIR,
	CONFIG_STATE_DIR,
	CONFIG_RING_SIZE,
	CONFIG_WORKERS,
	CONFIG_DRAIN_INTERVAL,
	CONFIG_WRITEOUT_NICE,
	CONFIG_NKEYS
};
#define CONFIG_BIT(k)		(1u << (k))
#define CONFIG_SYSTEM_FILE	"/etc/traced/traced.conf"
int	config_defaults(struct config *c, int system_daemon);
char	*config_default_file(int system_daemon);
int	config_key_find(const char *name);
const char *config_key_name(int k);
int	config_key_reloadable(int k);
int	config_set(struct config *c, unsigned *set, int k, const char *value,
	    char *err, size_t errsize);
int	config_parse(struct config *c, unsigned *set, const char *path,
	    const char *text, char *err, size_t errsize);
int	config_load(struct config *c, unsigned *set, const char *path,
	    int must_exist, char *err, size_t errsize);
int	config_copy(struct config *dst, const struct config *src,
	    unsigned keys);
void	config_format(const struct config *c, int k, char *buf, size_t size);
int	config_equal(const struct config *a, const struct config *b, int k);
void	config_fini(struct config *c);

/* notify.c */
void	notify_init(struct event_base *base);
void	notify_reloading(void);
void	notify_reloaded(void);
void	notify_stopping(void);
void	notify_fini(void);

/* main.c */
uint64_t now_ns(int clock);
int	mkdir_p(const char *path, mode_t mode);

#endif /* TRACED_DAEMON_TRACED_H */
