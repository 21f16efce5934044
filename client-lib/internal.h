/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * libtraced internals, shared by provider.c, ring.c, conn.c, rules.c,
 * crash.c, log.c and debug.c.
 * Not installed.
 *
 * Threads: the application's threads run the tracing path (ring.c) and
 * take lib.lock only to create or retire their ring.  The pager
 * (pager.c) makes ring pages ready ahead of them.  One connection
 * thread (conn.c) owns the socket: it connects, registers, sends rings
 * and wakeups, and reconnects.  Application threads
 * never touch the socket: they ring lib.wake_fd, an eventfd that lives
 * as long as the process, so a descriptor number reused after a
 * reconnect can never receive their bytes.
 */
#ifndef TRACED_CLIENT_INTERNAL_H
#define TRACED_CLIENT_INTERNAL_H

#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "traced.h"
#include "ring.h"

#define TRACED_HIDDEN	__attribute__((visibility("hidden")))

/*
 * The library's view of one ring; owned by lib, under lib.lock, except
 * the fields marked atomic, which its thread and the pager share.
 */
struct lring {
	struct lring	*next;		/* lib.rings */
	struct traced_ring_hdr *hdr;	/* mapping base */
	uint8_t		*data;		/* the data area, after the header */
	size_t		 map_len;	/* header + 2^max_order */
	int		 fd;		/* memfd */
	uint32_t	 index;		/* ring number for this process */
	uint32_t	 max_order;
	uint32_t	 init_order;	/* its size when made */
	uint64_t	 prep_end;	/* atomic, pager: data bytes [0,
					   prep_end) are ready */
	uint64_t	 prep_want;	/* atomic, producer: make [0,
					   prep_want) ready */
	uint32_t	 grow_want;	/* atomic, producer: the order it
					   would grow to */
	uint32_t	 grow_ready;	/* atomic, pager: the highest order
					   whose first pages are ready */
	int		 pager_busy;	/* the pager works on it: not to be
					   freed yet */
	uint64_t	 huge_end;	/* pager only: data bytes below it
					   were offered huge pages */
	uint64_t	 rate_ns;	/* producer: when, CLOCK_MONOTONIC, */
	uint64_t	 rate_head;	/* it was at this position (how fast
					   the ring fills: ring_prep_check()) */
	uint64_t	 pass_ns;	/* producer: when, CLOCK_MONOTONIC, */
	uint64_t	 pass_head;	/* its thread took it or it grew,
					   from there: the pace of a first
					   pass (ring.c, ring_fills_fast()) */
	uint64_t	 pace;		/* atomic, producer: bytes per ms it
					   filled at (UINT64_MAX: not measured
					   yet); see lring_slow() */
	pid_t		 tid;
	int		 sent;		/* RING sent on this connection */
	int		 notify;	/* atomic: a drain was asked for */
	int		 finished;	/* its thread exited */
	int		 told_end;	/* the daemon was asked to drain it
					   after its thread finished */
	int		 handover;	/* under lock: its thread exited with
					   every loss told; the next new
					   thread takes it in-band
					   (proto/ring.h, Handover) */
	uint64_t	 handover_at;	/* since then, ns, CLOCK_MONOTONIC */
	uint8_t		*sigstack;	/* owned: the signal stack of the
					   threads that take it (crash.c),
					   below a guard page; NULL until one
					   needs it */
};

/* Per-provider library state, p->priv. */
struct lprov {
	struct traced_provider *p;	/* borrowed: generated code's */
	struct lprov	*next;		/* lib.providers */
	uint32_t	 index;
	int		 sent;		/* PROVIDER sent on this connection */
	int		 acked;		/* the daemon took it, wrote state */
	int		 state_fd;	/* our state memfd, mapped at p->state */
	char		*names;		/* owned: the event names, for the
					   process rules (rules.c), or NULL */
	char		**name_at;	/* owned: name of event i in names */
};

/* A rule of the process (rules.c); owned by lib, under lib.lock. */
struct lrule {
	char		*pattern;	/* owned: a glob */
	uint8_t		 flags;		/* TRACED_RULE_* of proto/wire.h */
};

enum conn_state {
	CONN_IDLE,			/* never tried */
	CONN_DOWN,			/* no daemon; retrying */
	CONN_UP,			/* welcomed */
};

struct lib {
	pthread_mutex_t	 lock;
	pthread_cond_t	 cond;		/* registration progress */
	int		 initialized;
	int		 disabled;	/* TRACED=0 or unusable system */
	int		 crash;		/* TRACED_CRASH: traced:crash records
					   (crash.c), 1 by default */
	pid_t		 pid;		/* to notice fork() */
	int		 wake_fd;	/* eventfd, never closed */
	int		 pager_fd;	/* eventfd: wakes the pager (pager.c) */
	int		 pager_started;
	pid_t		 pager_tid;	/* atomic: the pager's, or 0 (it
					   runs no instrumented code: a
					   patch need not stop it) */
	pthread_t	 thread;
	int		 thread_started;
	int		 sock;		/* conn thread only; -1 when down */
	enum conn_state	 state;		/* under lock */
	int		 hello_sent;	/* under lock: HELLO and providers
					   are out on lib.sock */
	unsigned	 attempts;	/* connection attempts, under lock */
	uint32_t	 session;
	uint32_t	 ring_order;	/* the most new rings grow to */
	int		 ring_order_env; /* TRACED_RING_SIZE given */
	uint32_t	 ring_start_order; /* new rings start at (at most
					   ring_order): TRACED_RING_START */
	int		 connect_timeout_ms;
	char		*runtime_dir;	/* TRACED_RUNTIME_DIR, or NULL */
	char		*xdg_runtime_dir; /* XDG_RUNTIME_DIR, or NULL */
	int		 secure;	/* AT_SECURE: setuid, setgid, caps */
	struct lprov	*providers;
	uint32_t	 nproviders;
	uint32_t	 next_id;	/* next provider's id_base */
	struct lring	*rings;
	uint32_t	 nrings;	/* ring numbers handed out */
	uint32_t	 nhandover;	/* atomic, written under lock: rings
					   waiting for a thread in-band */
	int		 handover_watch; /* atomic, written under lock: the
					   connection thread looks at them
					   every CONN_HANDOVER_POLL_MS */
	uint64_t	 lost_disconnected; /* atomic */
	int		 connected;	/* atomic mirror of state == UP */
	int		 child_wait;	/* fork()ed from a traced parent: the
					   first ring waits for a session */
	struct lrule	*rules;		/* the process's rules, in order */
	uint32_t	 nrules;
	uint32_t	 rules_gen;	/* one more at each change, and for
					   each provider while there are rules */
	uint32_t	 rules_sent;	/* the gen sent on this connection */
	uint32_t	 rules_acked;	/* the gen the daemon answered */
	int		 rules_status;	/* its answer: 0, or -EDQUOT */
	int		 spare_fd;	/* under lock: a ring from the daemon's
					   pool (daemon/pool.c), or -1; of
					   ring_order, which stays as it is
					   until the connection, and the ring
					   with it, goes */
	int		 spare_ask;	/* under lock: ask for the next one */
	int		 spare_seen;	/* under lock: the daemon has a pool
					   (it sent one on this connection) */
};

extern struct lib lib TRACED_HIDDEN;

/* provider.c */
void	lib_init_locked(void) TRACED_HIDDEN;
void	lib_wake(void) TRACED_HIDDEN;
void	lib_wait_session_locked(void) TRACED_HIDDEN;
void	lib_deadline_after(struct timespec *ts, int ms) TRACED_HIDDEN;

/* rules.c */
void	rules_read_env_locked(void) TRACED_HIDDEN;
void	rules_apply_provider_locked(struct lprov *lp) TRACED_HIDDEN;
int	rules_snapshot_locked(uint32_t *size) TRACED_HIDDEN;

/* ring.c */
void	ring_lib_init(void) TRACED_HIDDEN;
int	ring_write_crash(const struct traced_crash *c, int dying) TRACED_HIDDEN;
void	ring_free(struct lring *r) TRACED_HIDDEN;
int	ring_handover_end_locked(uint64_t now, int all) TRACED_HIDDEN;
void	ring_free_unread(struct lring *r) TRACED_HIDDEN;
void	ring_atfork_child(void) TRACED_HIDDEN;

/* crash.c */
void	crash_init_locked(void) TRACED_HIDDEN;
void	crash_thread_start(struct lring *r) TRACED_HIDDEN;
void	crash_thread_end(void) TRACED_HIDDEN;
void	crash_stack_free(struct lring *r) TRACED_HIDDEN;

/* pager.c */
void	pager_prepare(uint8_t *p, size_t len) TRACED_HIDDEN;
void	lib_wake_pager(void) TRACED_HIDDEN;
int	pager_start_locked(void) TRACED_HIDDEN;
void	pager_atfork_child(void) TRACED_HIDDEN;

/* conn.c */
int	conn_start_locked(void) TRACED_HIDDEN;
int	conn_send_msg(int sock, const void *msg, size_t len, const int *fds,
	    int nfds) TRACED_HIDDEN;
int	conn_ring_created_locked(struct lring *r) TRACED_HIDDEN;
int	conn_ring_finished_locked(struct lring *r) TRACED_HIDDEN;
void	conn_on_exit(int status, void *arg) TRACED_HIDDEN;
void	conn_atfork_child(void) TRACED_HIDDEN;

/* debug.c */
extern int lib_debug TRACED_HIDDEN;
void	lib_write_line(char *buf, size_t size, size_t n, const char *fmt,
	    va_list ap) __attribute__((format(printf, 4, 0))) TRACED_HIDDEN;
void	lib_debugx(const char *fmt, ...)
	    __attribute__((format(printf, 1, 2))) TRACED_HIDDEN;
void	lib_warnx(const char *fmt, ...)
	    __attribute__((format(printf, 1, 2))) TRACED_HIDDEN;

/* The pager makes pages ahead of a ring that fills at least this fast,
 * bytes per microsecond (64 MB/s: a 64-byte event per microsecond). */
#define RING_PAGER_RATE		64u

/* A ring that fills slowly faults its pages in itself; the pager makes
 * only what its producer asks for (ring.c, ring_prep_check()). */
static inline int
lring_slow(const struct lring *r)
{
	return __atomic_load_n(&r->pace, __ATOMIC_RELAXED) <
	    RING_PAGER_RATE * UINT64_C(1000);
}

/*
 * Raise r->grow_ready to 'order' if it is lower.  The pager raises it
 * when it made a bigger size's first pages, the producer when it
 * switched to a size without waiting for them: a ring's size never
 * exceeds it, and the pager's work for a grown ring (pager.c) starts
 * from it.
 */
static inline void
lring_ready_raise(struct lring *r, uint32_t order)
{
	uint32_t cur = __atomic_load_n(&r->grow_ready, __ATOMIC_RELAXED);

	while (cur < order && !__atomic_compare_exchange_n(&r->grow_ready,
	    &cur, order, 1, __ATOMIC_RELEASE, __ATOMIC_RELAXED))
		;
}

#define DEBUG(...) do { if (lib_debug) lib_debugx(__VA_ARGS__); } while (0)

#endif /* TRACED_CLIENT_INTERNAL_H */
