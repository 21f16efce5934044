/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * The control commands (proto/commands.def lists them) and the replies
 * they build, grouped by file:
 *
 *   cmd.c		lookup, arity and permission, the handler table; help
 *   cmd-trace-event.c	trace-event, info trace-rules, info trace-events
 *   cmd-trace-file.c	trace-file on|off|flush|set
 *   cmd-info-trace.c	info trace
 *   cmd-info-sessions.c	info sessions, info session (the index)
 *   cmd-info-counters.c	info counters (tracectl top's totals)
 *   cmd-recorder.c	snapshot, info snapshots, trace-file recorder,
 *			the recorder's part of info trace
 *   cmd-func.c		trace-func, tracer, info trace-funcs, info tracers
 *   cmd-trigger.c	trigger add|list|delete, the triggers in info trace
 *   reply.c		the reply builder: lines, JSON items, the end, a
 *			reply that waits, and the JSON values every handler
 *			uses
 *   control.c		control.sock: connections and the bytes on them
 *
 * A handler answers through its struct reply: reply_line() for people
 * or reply_item() with --json, reply_error() or reply_message() for the
 * end line, and returns TRACED_CTL_*.  One whose answer comes later
 * calls reply_wait() with a predicate, which is asked again whenever
 * the daemon's state moves (replies_check()), and at its timeout.
 * Daemon-internal; loop thread.
 */
#ifndef TRACED_DAEMON_CMD_H
#define TRACED_DAEMON_CMD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ring.h"
#include "wire.h"

struct ctlconn;
struct event_base;
struct json_t;
struct reply;
struct sring;
struct session;

/*
 * A reply that waits (reply_wait()): done(r, arg, timed_out) is asked
 * until it says 1 (it then wrote its end line: reply_error() or
 * reply_message(); the reply ends); with timed_out 1 it must say 1.
 * The connection gone, it is called once with r NULL, to free arg.
 */
typedef int (*reply_wait_cb)(struct reply *r, void *arg, int timed_out);

/* cmd.c */
int	cmd_exec(struct reply *r, int argc, char **argv, uid_t uid,
	    gid_t gid, const gid_t *groups, int ngroups);
int	cmd_help_exec(struct reply *r, int argc, char **argv);

/* cmd-trace-event.c */
int	cmd_trace_event_exec(struct reply *r, int argc, char **argv);
int	cmd_info_trace_rules_exec(struct reply *r, int argc, char **argv);
int	cmd_info_trace_events_exec(struct reply *r, int argc, char **argv);

/* cmd-trace-file.c */
int	cmd_trace_file_exec(struct reply *r, int argc, char **argv);

/* cmd-info-trace.c */
/* What one ring says now: losses by cause, fill level. */
struct ring_now {
	uint64_t	 lost[TRACED_DROP_NCAUSES];
	uint64_t	 total_lost;
	uint64_t	 fill;		/* percent */
	uint64_t	 size;		/* bytes, as its header says now */
};
void	ring_now(const struct sring *rg, struct ring_now *n);
/* A session's events and losses by cause now (its rings', and those
 * before it connected). */
void	session_now(const struct session *s, uint64_t *events,
	    uint64_t lost[TRACED_DROP_NCAUSES]);
int	cmd_info_trace_exec(struct reply *r, int argc, char **argv);

/* cmd-info-counters.c */
int	cmd_info_counters_exec(struct reply *r, int argc, char **argv);

/* cmd-info-sessions.c */
int	cmd_info_sessions_exec(struct reply *r, int argc, char **argv);
int	cmd_info_session_exec(struct reply *r, int argc, char **argv);

/* cmd-recorder.c */
int	cmd_snapshot_exec(struct reply *r, int argc, char **argv);
int	cmd_info_snapshots_exec(struct reply *r, int argc, char **argv);
int	cmd_trace_file_recorder(struct reply *r, const char *value);
void	cmd_recorder_info(struct reply *r);

/* cmd-func.c */
int	cmd_trace_func_exec(struct reply *r, int argc, char **argv);
int	cmd_tracer_exec(struct reply *r, int argc, char **argv);
/* cmd-func.c: the trace-func (0) or tracer (1) rules, listed. */
void	cmd_func_rules_list(struct reply *r, int kind);
int	cmd_info_trace_funcs_exec(struct reply *r, int argc, char **argv);
int	cmd_info_tracers_exec(struct reply *r, int argc, char **argv);

/* cmd-trigger.c */
int	cmd_trigger_exec(struct reply *r, int argc, char **argv);
void	cmd_trigger_list(struct reply *r, const char *indent);

/* reply.c */
struct reply *reply_new(struct ctlconn *c, int json);
void	reply_free(struct reply *r);
void	reply_init(struct event_base *base);
int	reply_json(const struct reply *r);
void	reply_set_sees_all(struct reply *r, int all);
int	reply_may_see(const struct reply *r, uid_t owner);
void	reply_line(struct reply *r, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
void	reply_item(struct reply *r, struct json_t *o);
void	reply_error(struct reply *r, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
void	reply_message(struct reply *r, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
void	reply_status(struct reply *r, uint32_t status);
int	reply_failed(const struct reply *r);
int	reply_cut(const struct reply *r);
int	reply_waiting(const struct reply *r);
void	reply_end(struct reply *r);
void	reply_wait(struct reply *r, reply_wait_cb cb, void *arg,
	    unsigned timeout_ms);
void	replies_check(void);
void	replies_shutdown(void);
struct json_t *jstr(const char *s);
struct json_t *jns(uint64_t ns);
struct json_t *jnum(uint64_t v);
struct json_t *jcauses(const uint64_t *lost);
uint64_t format_causes(char *buf, size_t size, const uint64_t *lost);

/* control.c */
int	control_listen(struct event_base *base, int fd);
void	control_close_all(void);
int	ctlconn_send(struct ctlconn *c, uint32_t type, const void *body,
	    size_t body_len, const char *text, size_t text_len);
int	ctlconn_cut(const struct ctlconn *c);
uid_t	ctlconn_uid(const struct ctlconn *c);
void	ctlconn_waiting(struct ctlconn *c, int on);
void	ctlconn_ended(struct ctlconn *c);

#endif /* TRACED_DAEMON_CMD_H */
