/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * libtraced internals, shared by provider.c, ring.c, conn.c and debug.c.
 * Not installed.
 *
 * Threads: the application's threads run the tracing path (ring.c) and
 * take lib.lock only to create or retire their ring.  One connection
 * thread (conn.c) owns the socket: it connects, registers, sends rings
 * and wakeups, and reconnects.  Application threads
 * never touch the socket: they ring lib.wake_fd, an eventfd that lives
 * as long as the process, so a descriptor number reused after a
 * reconnect can never receive their bytes.
 */
#ifndef TRACED_CLIENT_INTERNAL_H
#define TRACED_CLIENT_INTERNAL_H

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

#include "traced.h"
#include "ring.h"

#define TRACED_HIDDEN	__attribute__((visibility("hidden")))

/* The library's view of one ring; owned by lib, under lib.lock. */
struct lring {
	struct lring	*next;		/* lib.rings */
	struct traced_ring_hdr *hdr;	/* mapping base */
	size_t		 map_len;	/* header + 2 data copies */
	int		 fd;		/* memfd */
	uint32_t	 index;		/* ring number for this process */
	uint32_t	 order;
	pid_t		 tid;
	int		 sent;		/* RING sent on this connection */
	int		 notify;	/* atomic: a drain was asked for */
	int		 finished;	/* its thread exited */
};

/* Per-provider library state, p->priv. */
struct lprov {
	struct traced_provider *p;	/* borrowed: generated code's */
	struct lprov	*next;		/* lib.providers */
	uint32_t	 index;
	int		 sent;		/* PROVIDER sent on this connection */
	int		 acked;		/* the daemon took it, wrote state */
	int		 state_fd;	/* our state memfd, mapped at p->state */
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
	pid_t		 pid;		/* to notice fork() */
	int		 wake_fd;	/* eventfd, never closed */
	pthread_t	 thread;
	int		 thread_started;
	int		 sock;		/* conn thread only; -1 when down */
	enum conn_state	 state;		/* under lock */
	unsigned	 attempts;	/* connection attempts, under lock */
	uint32_t	 session;
	uint32_t	 ring_order;	/* for new rings */
	int		 ring_order_env; /* TRACED_RING_SIZE given */
	int		 connect_timeout_ms;
	struct lprov	*providers;
	uint32_t	 nproviders;
	uint32_t	 next_id;	/* next provider's id_base */
	struct lring	*rings;
	uint32_t	 nrings;	/* ring numbers handed out */
	uint64_t	 lost_disconnected; /* atomic */
	int		 connected;	/* atomic mirror of state == UP */
	int		 child_wait;	/* fork()ed from a traced parent: the
					   first ring waits for a session */
};

extern struct lib lib TRACED_HIDDEN;

/* provider.c */
void	lib_init_locked(void) TRACED_HIDDEN;
void	lib_wake(void) TRACED_HIDDEN;
void	lib_wait_session_locked(void) TRACED_HIDDEN;

/* ring.c */
void	ring_lib_init(void) TRACED_HIDDEN;
void	ring_free(struct lring *r) TRACED_HIDDEN;
void	ring_atfork_child(void) TRACED_HIDDEN;

/* conn.c */
int	conn_start_locked(void) TRACED_HIDDEN;
void	conn_ring_created_locked(struct lring *r) TRACED_HIDDEN;
void	conn_atfork_child(void) TRACED_HIDDEN;

/* debug.c */
extern int lib_debug TRACED_HIDDEN;
void	lib_debugx(const char *fmt, ...)
	    __attribute__((format(printf, 1, 2))) TRACED_HIDDEN;

#define DEBUG(...) do { if (lib_debug) lib_debugx(__VA_ARGS__); } while (0)

#endif /* TRACED_CLIENT_INTERNAL_H */
