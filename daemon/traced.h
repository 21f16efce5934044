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

#include "recwalk.h"
#include "ring.h"
#include "tevents.h"
#include "wire.h"

struct event;
struct event_base;
struct reply;
struct chunk;
struct sfunc;

/*
 * What the drain thread saw while a ring lost events to a full ring,
 * for the warning to name the cause (drain.c).  None of them: the ring
 * filled up between two visits made on time, a burst it could not hold.
 */
#define LOSS_SAW_LATE		0x1u	/* the drain thread came late:
					   it did not get the CPU */
#define LOSS_SAW_DISK		0x2u	/* staging full, the writers
					   waiting on the disk */
#define LOSS_SAW_WRITERS	0x4u	/* staging full, the writers
					   short of CPU time */
#define LOSS_SAW_MAX_SIZE	0x8u	/* the ring could grow no more */
#define LOSS_SAW_TOO_SMALL	0x10u	/* and at that size held less than two
					   of the drain thread's shortest
					   periods: it fills up however
					   punctual the visits */

/*
 * A provider's description, parsed and checked once per uid and shared
 * by that uid's sessions (pdesc.c).
 */
struct pdesc {
	struct pdesc	*next;		/* hash chain */
	unsigned	 refs;
	uid_t		 uid;
	uint64_t	 hash;
	char		 name[TRACED_NAME_MAX];
	char		*bytes;		/* owned: the text it was parsed from */
	size_t		 len;
	struct tevents_file tf;		/* owned */
	uint8_t		*on;		/* owned: states by the rules ... */
	uint64_t	 on_gen;	/* ... of this td->rules_gen */
	uint32_t	 reach;		/* cmd.c: events a pattern matches ... */
	uint64_t	 reach_gen;	/* ... in count td->reach_gen */
};

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

/*
 * The event classes of a session, as the ranges recwalk() looks ids up
 * in: one per provider.  Immutable once built; a new provider makes a
 * new table, published to the drain thread through session.evtab
 * (store-release), and the tables it replaced stay (older) until the
 * session is freed, when no thread reads any of them.
 */
struct evtab {
	struct evtab	*older;		/* owned: the table this one replaced */
	uint32_t	 nclasses;	/* events of every range */
	uint32_t	 nranges;
	struct recwalk_range ranges[];	/* .ev borrowed from the pdescs,
					   .fixed from the sprovs */
};

struct session;

/*
 * A CTF stream file being written (stream.c).  Its writer's while it
 * writes the ring's chunks (sring.wbusy), the loop's otherwise.
 */
struct stream {
	int		 fd;		/* -1: none */
	off_t		 size;		/* bytes of whole packets */
	uint64_t	 gen;		/* which of the ring's files (fgen) */
	uint8_t		 uuid[16];	/* the trace uuid of that file */
	uint64_t	 seq;		/* next packet_seq_num */
	uint64_t	 discarded;	/* running events_discarded */
	uint64_t	 discarded_written; /* ... as the file's last packet
					   says it */
	uint32_t	 part;		/* files of this trace before it
					   (stream-max-size cuts) */
	off_t		 wb_started;	/* writeback started up to here
					   (stream.c, STREAM_WB_STEP) */
	int		 nodirect;	/* its file system refused O_DIRECT */
};

/*
 * What the drain thread (drain.c) knows of a ring, from writeout_add()
 * until it queues the ring's END chunk.  Its own: nobody else reads it.
 */
struct sring_rd {
	TAILQ_ENTRY(sring) entry;	/* the drain thread's rings */
	uint64_t	 tail;		/* next position to read */
	uint32_t	 order;		/* the ring's size as last seen */
	uint64_t	 last_ts;
	uint64_t	 seen_head;	/* head at the last visit */
	uint64_t	 seen_at;	/* ns, CLOCK_MONOTONIC, of that visit */
	uint64_t	 rate;		/* bytes/s, smoothed */
	uint64_t	 next;		/* ns: visit again by then */
	uint64_t	 data_since;	/* ns: unread data seen since; 0: none */
	uint64_t	 flush_gen;	/* a SYNC is due for this generation */
	uint64_t	 synced_gen;	/* the last one queued */
	uint64_t	 dropped_full;	/* the ring's ring-full total seen */
	uint64_t	 events;		/* read from it, and their bytes: its */
	uint64_t	 bytes;		/* average record size */
	unsigned	 why;		/* LOSS_SAW_* seen since losses were
					   last reported */
	unsigned	 late_ms;	/* and how late it came, at worst */
	const uint8_t	*map;		/* its data area mapped (read-only),
					   once it lapped twice: NULL before */
	int		 grow;		/* the hint we last left it */
	int		 map_failed;	/* no room to map it: pread */
	int		 closing;	/* read to the end, then END */
	int		 urgent;	/* the producer asked: visit now */
	int		 pending;	/* stopped at an event its metadata
					   does not describe yet */
	struct traced_thread_rec handover; /* the THREAD record a read
					   stopped at (drain_packet() 4) */
	pid_t		 tid;		/* the thread writing it now: its
					   packets name it */
	int		 handed;	/* passed on since its last big
					   packet: read it in small steps */
	int		 young;		/* visits left at a short period */
};

/* One thread's ring, as the daemon sees it. */
struct sring {
	TAILQ_ENTRY(sring) entry;	/* s->rings */
	struct session	*s;
	uint32_t	 index;
	pid_t		 tid;
	uint32_t	 max_order;
	uint32_t	 order;		/* its size as the last chunk saw it */
	struct traced_ring_hdr *hdr;	/* our mapping of its header page;
					   NULL once released */
	int		 ring_fd;	/* its memfd: the data is pread();
					   -1 once released */
	dev_t		 dev;		/* its memfd, to know it again when */
	ino_t		 ino;		/* the library gives it a new thread */
	uint64_t	 instance;	/* its stream's stream_instance_id: the
					   number of the ring that began it */
	uint64_t	 ts_floor;	/* records stamped before it are
					   refused: the stream it goes on
					   in ends there (drain.c) */
	uint64_t	 last_ts;	/* once ended: its stream's last
					   timestamp */
	TAILQ_ENTRY(sring) pentry;	/* s->parked, while parked */
	int		 parked;	/* ended, its stream kept open for
					   the ring's next thread */

	struct sring_rd	 rd;		/* the drain thread's */
	struct stream	 st;		/* the writer's (see struct stream) */

	/* THREAD markers queued and not yet back at the loop (atomic:
	 * the drain thread adds, the loop takes away; drain.c). */
	int		 handovers_out;

	/* The loop asks the drain thread (atomic, set by the loop only). */
	int		 close_req;	/* read to the end, then END */
	int		 notified;	/* the producer asked for a drain */

	/* Under the writeout lock. */
	TAILQ_ENTRY(sring) wentry;	/* the writers' list */
	STAILQ_HEAD(, chunk) chunks;	/* read, validated, to be written */
	int		 wqueued;	/* on the writers' list */
	int		 wbusy;		/* a writer has its chunks */
	int		 whold;		/* the drain thread holds them back
					   (wo_hold()): its thread only */
	int		 next_fd;	/* a new stream file (trace-file set):
					   the writer switches to it before
					   the next chunk; -1: none */
	uint8_t		 next_uuid[16];	/* its trace */
	uint64_t	 next_gen;	/* its fgen */
	uint64_t	 next_part_at;	/* not 0: it goes on the file before
					   it (stream-max-size): same trace,
					   packet numbers and discards go
					   on; switched to when the file
					   would pass this size */

	/* Loop thread only. */
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
	struct evtab	*evtab;		/* the newest (atomic: drain.c) */
	uint32_t	 nclasses;	/* event classes of its providers */
	/*
	 * What the drain thread may do with its rings, published by the
	 * loop (atomic, release) once the metadata that describes them
	 * is written, or given up on: read them (drain_go), validate
	 * against drain_tab (events of providers the metadata does not
	 * describe yet wait in the ring), and write them (discard_errno
	 * 0) or count them as lost to that error.
	 */
	int		 drain_go;
	int		 discard_errno;
	struct evtab	*drain_tab;
	int		 reopen_pending; /* rings wait for a new directory's
					   metadata (session_rotate()) */
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
					   in-band, together (client.c) */
	struct sring	**by_index;	/* owned: rings by number (client.c) */
	uint32_t	 nby_index;
	uint64_t	 started;	/* ns, CLOCK_REALTIME */
	uint64_t	 lost_disconnected;
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

	/* For the index (index.c). */
	char		*cmdline;	/* owned; NULL if unreadable */
	const char	*how;		/* how it ended (static string) */
	uint64_t	*ev_counts;	/* owned: events written, by class */
	uint64_t	*ev_written;	/* owned: ev_counts as last indexed */
	uint32_t	 nev_counts;
	int		 index_dirty;	/* changed since the last batch */
	struct sfunc	*fn;		/* function tracing (func.c), owned;
					   NULL until its first MODULE */
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

/*
 * Limits on what one client, or one uid, can make the daemon hold; see
 * the table in config.c and traced(8).  Every one is a setting.
 */
enum {
	LIMIT_SESSIONS,		/* sessions per uid */
	LIMIT_RINGS,		/* rings (threads) per uid */
	LIMIT_RING_BYTES,	/* bytes of rings mapped per uid */
	LIMIT_PROVIDERS,	/* providers per session */
	LIMIT_SESSION_EVENTS,	/* events described per session */
	LIMIT_EVENT_CLASSES,	/* distinct event classes held per uid */
	LIMIT_EVENT_IDS,	/* event ids of its sessions, per uid */
	LIMIT_FUNCTIONS,	/* instrumented functions of its sessions */
	LIMIT_CONTROL_CONNS,	/* control connections per uid */
	LIMIT_CONTROL_OUTPUT,	/* reply bytes queued per uid */
	LIMIT_CONTROL_TIMEOUT,	/* s: a control connection's silence */
	LIMIT_INDEX_DAYS,	/* ended sessions kept in the index */
	LIMIT_INDEX_SESSIONS,	/* and at most this many */
	LIMIT_STREAM_SIZE,	/* a stream file's size before the next
				   one starts; 0: no limit */
	LIMIT_N
};

struct config {
	uint64_t	 limit[LIMIT_N];
	char		*runtime_dir;
	char		*trace_dir;
	char		*state_dir;
	uint32_t	 ring_order;
	unsigned	 ring_pool;	/* rings kept ready (pool.c) */
	unsigned	 workers;
	unsigned	 drain_ms;
	int		 writeout_nice;	/* niceness of the writeout threads */
	int		 direct_io;	/* big packets skip the page cache */
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
	struct event	*ev_timer;	/* housekeeping, every 100 ms */
	struct session_list sessions;
	struct ended_list ended;	/* newest last, at most ENDED_KEEP */
	unsigned	 nended;
	uint32_t	 next_session;
	struct rule	*rules;
	size_t		 nrules;
	uint64_t	 rules_gen;	/* changes with every rule change */
	uint64_t	 reach_gen;	/* cmd.c's count of rule matches */
	int		 paused;
	int		 stopping;
	uint64_t	 flush_gen;
	uint64_t	 deleted_events; /* written, then deleted with their
					   directory (session_check_dir()) */
	struct writeout	*wo;
	/* The clocks a session's metadata may describe: CLOCK_MONOTONIC
	 * and, where invariant, the TSC (calibrated at start). */
	struct dclock	 clk[2];	/* DCLOCK_* */
	int		 have_tsc;
	char		 hostname[256];
	uid_t		 uid;
	gid_t		 gid;
	/* The directories the daemon writes into, opened and checked
	 * once (fsdir.c); files are made relative to them. */
	int		 trace_dirfd;
	int		 state_dirfd;
	int		 runtime_dirfd;	/* -1 when systemd gave both sockets */
	char		 state_at[64];	/* a path through state_dirfd */
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
int	check_client_fd(int fd, size_t size, int need_seals, const char **why);
void	session_close(struct session *s);
void	session_check_done(struct session *s);
int	session_rotate(struct session *s);
void	session_update_state(struct session *s);
void	session_warn_loss(struct session *s, const struct sring *r,
	    uint64_t lost, unsigned causes, unsigned why, unsigned late_ms);
#define LOSS_WARN_INTERVAL_NS	(10 * UINT64_C(1000000000))
struct sring *session_ring(struct session *s, uint32_t index);
int	session_metadata_sync(struct session *s);
uint64_t session_check_dir(struct session *s);
int	session_meta_ready(const struct session *s);
int	session_meta_given_up(const struct session *s);
void	session_meta_retry(struct session *s);
#define SESSION_META_GRACE_NS	(60 * UINT64_C(1000000000))
void	session_send(struct session *s, const void *msg, size_t len);
void	session_spares_serve(void);
int	session_ensure_dir(struct session *s);
void	session_job_done(struct session *s);
void	sring_finished(struct sring *r);
void	sring_handover(struct sring *r, const struct traced_thread_rec *next);
void	sring_grown(struct sring *r, uint32_t order);
int	sring_open_stream(struct sring *r);
void	sring_cut_stream(struct sring *r);
#define STREAM_PART_MIN		(1u << 20)	/* stream-max-size */

/* pdesc.c */
int	pdesc_precheck(const char *name, size_t len, char *why, size_t whysize);
struct pdesc *pdesc_lookup(uid_t uid, const char *name, const void *desc,
	    size_t len);
struct pdesc *pdesc_parse(uid_t uid, const char *name, const void *desc,
	    size_t len, const char *fname, char *why, size_t whysize);
struct pdesc *pdesc_adopt(struct pdesc *d, char *why, size_t whysize);
void	pdesc_free(struct pdesc *d);
void	pdesc_put(struct pdesc *d);
const uint8_t *pdesc_states(struct pdesc *d);

/* state.c */
/* Where an event's state comes from, for info trace-events. */
enum state_src {
	STATE_SRC_DEFAULT,		/* no rule: on */
	STATE_SRC_DISABLE,		/* no rule: 'disable' in trace-events */
	STATE_SRC_RULE,			/* a rule of the daemon */
	STATE_SRC_PROCESS,		/* a rule of the process */
};

struct state_why {
	enum state_src	 src;
	const char	*pattern;	/* borrowed: the rule's, or NULL */
	unsigned	 flags;		/* STATE_SRC_PROCESS: TRACED_RULE_* */
};

int	state_event_on(const char *provider, const struct tevents_event *ev);
int	state_session_event(const struct session *s, const struct sprov *p,
	    uint32_t k, struct state_why *why);
const struct ptable *state_ptable(const struct session *s, uint32_t index);
int	state_ptable_on(const struct session *s, const struct ptable *t,
	    uint32_t k);
int	state_session_rules(struct session *s, const struct traced_msg_rules *m,
	    int fd);
int	state_session_provider_ok(const struct session *s, uint32_t index,
	    uint32_t nevents);
void	state_session_free(struct session *s);
int	state_rule_add(const char *pattern, int on);
int	state_rule_delete(const char *pattern);
int	state_rules_reset(void);
void	state_apply_all(void);

/* index.c */
#define INDEX_SCHEMA_VERSION	2
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
struct cls_count {
	uint32_t	 cls;		/* class number in its session */
	uint64_t	 n;
};
void	index_session_counts(struct session *s, const struct cls_count *counts,
	    uint32_t n);
void	index_session_end(struct session *s);
void	index_session_free(struct session *s);
int	index_sync(void);
int	index_rules_save(const struct rule *rules, size_t n);
int	index_trace_dir_set(const char *path, const char *how);
long	index_sessions_list(const struct index_query *q, index_session_cb cb,
	    void *arg, int *more);
int	index_session_get(uint32_t id, const struct index_visitor *v);
int	index_func_rules_save(const char *kind, const struct rule *rules,
	    size_t n);
int	index_func_rules_load(const char *kind, struct rule **rules, size_t *n);

/* writeout.c */
struct writeout;
struct writeout *writeout_new(struct event_base *base, unsigned nworkers,
	    int nice, unsigned drain_ms);
void	writeout_free(struct writeout *wo);
void	writeout_add(struct sring *r);
void	writeout_close(struct sring *r);
void	writeout_notify(struct sring *r);
void	writeout_drain_all(uint64_t flush_gen);
void	writeout_set_interval(unsigned ms);
void	writeout_set_direct(int on);
void	writeout_written(uint64_t *direct, uint64_t *cached);
void	writeout_stream_part(struct sring *r, int fd, uint64_t max);
void	writeout_stream_next(struct sring *r, int fd, const uint8_t uuid[16],
	    uint64_t gen);
void	stream_start(struct stream *st, int fd, const uint8_t uuid[16],
	    uint64_t gen);
int	writeout_idle(void);
unsigned writeout_nworkers(void);
void	evtab_free(struct evtab *t);

/* control.c */
int	control_listen(int fd);
void	control_flush_check(void);
void	control_close_all(void);
void	accept_failed(struct event *ev, const char *what);

/* cmd.c */
struct reply;
int	cmd_exec(struct reply *r, int argc, char **argv, uid_t uid,
	    gid_t gid, const gid_t *groups, int ngroups);
void	reply_line(struct reply *r, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
struct json_t;
void	reply_item(struct reply *r, struct json_t *o);
int	reply_json(const struct reply *r);
int	reply_failed(const struct reply *r);
int	reply_cut(const struct reply *r);
void	reply_error(struct reply *r, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
void	reply_message(struct reply *r, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
void	reply_end(struct reply *r);
void	reply_wait_flush(struct reply *r, uint64_t gen);
typedef int (*reply_wait_cb)(struct reply *, void *, int);
void	reply_wait(struct reply *r, reply_wait_cb cb, void *arg,
	    unsigned timeout_ms);
void	control_wait_check(void);

/* config.c */
enum {
	CONFIG_RUNTIME_DIR,
	CONFIG_TRACE_DIR,
	CONFIG_STATE_DIR,
	CONFIG_RING_SIZE,
	CONFIG_RING_POOL,
	CONFIG_WORKERS,
	CONFIG_DRAIN_INTERVAL,
	CONFIG_WRITEOUT_NICE,
	CONFIG_DIRECT_IO,
	CONFIG_LIMIT0,		/* + LIMIT_*: one key per limit */
	CONFIG_NKEYS = CONFIG_LIMIT0 + LIMIT_N
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
const char *config_limit_name(int limit);
void	config_fini(struct config *c);

/* notify.c */
void	notify_init(struct event_base *base);
void	notify_reloading(void);
void	notify_reloaded(void);
void	notify_stopping(void);
void	notify_fini(void);

/* main.c */
uint64_t now_ns(int clock);
uint64_t now_ticks(int dclock);
int	trace_dir_set(const char *path, const char *how, int *created,
	    char *err, size_t errsize);
const char *trace_dir_default(void);
int	trace_dir_check(int sessions_too);

/* intake.c */
/*
 * A job for the intake thread: embed it first in a struct of the job's
 * own.  work() runs there, touching no daemon state; done() runs on the
 * loop thread afterwards and frees the job.
 */
struct intake_job {
	struct intake_job *next;
	void	(*work)(struct intake_job *);
	void	(*done)(struct intake_job *);
};
/* pool.c */
#define POOL_MAX	64		/* ring-pool: most rings kept ready */
struct pool_stats {
	unsigned	 want, ready;
	int		 making;
	uint32_t	 order;
	uint64_t	 made, given;
	uint64_t	 huge_bytes, small_bytes;
};
int	pool_start(struct event_base *base, unsigned want, uint32_t order);
void	pool_set(unsigned want, uint32_t order);
int	pool_take(uint32_t order);
void	pool_put(int fd, uint32_t order);
void	pool_stats(struct pool_stats *st);
void	pool_stop(void);

int	loop_worker_start(struct event_base *base, const char *what,
	    void *(*main)(void *), void (*cb)(int, short, void *), int *efd,
	    struct event **ev, pthread_t *th);
int	intake_start(struct event_base *base, int nice);
void	intake_submit(struct intake_job *j);
int	intake_idle(void);
void	intake_stop(void);

/* limits.c */
void	limits_init(void);
int	limits_take(uid_t uid, int l, uint64_t n, unsigned fds, char *why,
	    size_t whysize);
void	limits_put(uid_t uid, int l, uint64_t n, unsigned fds);
void	limits_force(uid_t uid, int l, uint64_t n);
uint64_t limits_held(uid_t uid, int l);
int	limits_log_ok(uid_t uid);
void	limits_logx(uid_t uid, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
void	limits_info(uid_t uid, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));

/* repair.c */
void	repair_session_files(const char *dir, const char *stream);

/* fsdir.c */
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

#endif /* TRACED_DAEMON_TRACED_H */
