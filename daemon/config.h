/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * The daemon's settings (config.c): their keys, defaults and values,
 * traced.conf(5), and the settings the daemon runs with (cfg).
 * Daemon-internal; loop thread (config_*() are pure and any thread's).
 */
#ifndef TRACED_DAEMON_CONFIG_H
#define TRACED_DAEMON_CONFIG_H

#include <stddef.h>
#include <stdint.h>

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
	LIMIT_MODULES,		/* loaded objects its sessions described */
	LIMIT_CONTROL_CONNS,	/* control connections per uid */
	LIMIT_CONTROL_OUTPUT,	/* reply bytes queued per uid */
	LIMIT_CONTROL_TIMEOUT,	/* s: a control connection's silence */
	LIMIT_INDEX_DAYS,	/* ended sessions kept in the index */
	LIMIT_INDEX_SESSIONS,	/* and at most this many */
	LIMIT_STREAM_SIZE,	/* a stream file's size before the next
				   one starts; 0: no limit */
	LIMIT_TRACE_BYTES,	/* bytes its sessions keep in the trace
				   directory; 0: a quarter of its file
				   system (quota.c) */
	LIMIT_RECORDER,		/* flight recorder: a session's window in
				   memory; 0: off, sessions are written */
	LIMIT_RECORDER_BYTES,	/* every window of a uid together; 0: an
				   eighth of the machine's memory */
	LIMIT_RECORDER_KEEP,	/* ended sessions' windows kept per uid */
	LIMIT_RECORDER_KEEP_TIME, /* s: and for this long */
	LIMIT_N
};

struct config {
	uint64_t	 limit[LIMIT_N];
	char		*runtime_dir;
	char		*trace_dir;	/* as configured; outdir.c has where
					   traces go now */
	char		*state_dir;
	uint32_t	 ring_order;
	unsigned	 ring_pool;	/* rings kept ready (pool.c) */
	unsigned	 workers;
	unsigned	 drain_ms;
	int		 writeout_nice;	/* niceness of the writeout threads */
	int		 direct_io;	/* big packets skip the page cache */
	int		 foreground;
	int		 user;		/* a per-user daemon, not the system's */
	char		 hostname[256];	/* this machine's, for the metadata */
};

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
#define POOL_MAX		64	/* ring-pool: most rings kept ready */
#define STREAM_PART_MIN		(1u << 20)	/* stream-max-size: least */
#define RECORDER_MIN		(4u << 20)	/* recorder: least window */
#define CONFIG_SYSTEM_FILE	"/etc/traced/traced.conf"

/*
 * The settings the daemon runs with: main.c builds them at start and
 * changes them on SIGHUP; every other module only reads them.
 */
extern struct config cfg;

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

#endif /* TRACED_DAEMON_CONFIG_H */
