/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * The control commands.  The table itself is proto/commands.def, shared
 * with tracectl; cmd_exec() looks the command up (exact name, then
 * unique prefix), checks arity and permission (state-changing commands
 * need uid 0, the daemon's uid or its group, primary or supplementary)
 * and calls its handler, found by id in the table below: one file per
 * command family (cmd.h lists them), each answering through the reply
 * builder (reply.c).  help is here.
 *
 * Every handler's work is bounded by what the daemon holds (sessions,
 * distinct event classes), never by a product of them.  Loop thread.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "cmd.h"
#include "command.h"

typedef int (*cmd_exec_cb)(struct reply *, int, char **);

/* ---- help -------------------------------------------------------- */

static json_t *
help_item(const struct command_def *d, const char *usage)
{
	return json_pack("{s:o, s:o, s:o, s:b}", "name", jstr(d->name),
	    "usage", jstr(usage), "help", jstr(d->help), "changes_state",
	    (d->flags & CMD_F_PRIVILEGED) != 0);
}

int
cmd_help_exec(struct reply *r, int argc, char **argv)
{
	const struct command_def *t, *d;
	char err[512], usage[512];
	size_t n, i;
	int consumed;

	if (argc > 0) {
		d = command_lookup(argc, argv, &consumed, err, sizeof(err));
		if (d == NULL) {
			reply_error(r, "%s", err);
			return TRACED_CTL_USAGE;
		}
		if (consumed != argc) {
			reply_error(r, "usage: tracectl help [COMMAND]");
			return TRACED_CTL_USAGE;
		}
		command_format_usage(d, usage, sizeof(usage));
		if (reply_json(r))
			reply_item(r, help_item(d, usage));
		else {
			reply_line(r, "%s", usage);
			reply_line(r, "  %s", d->help);
		}
		return TRACED_CTL_OK;
	}
	t = command_table(&n);
	for (i = 0; i < n; i++) {
		if (reply_json(r))
			reply_item(r, help_item(&t[i], t[i].usage));
		else
			reply_line(r, "%-18s %-24s %s", t[i].name, t[i].usage,
			    t[i].help);
	}
	return TRACED_CTL_OK;
}

/* ---- the table ----------------------------------------------------- */

static const cmd_exec_cb cmd_handlers[CMD_ID_COUNT] = {
	[CMD_ID_HELP] = cmd_help_exec,
	[CMD_ID_INFO_COUNTERS] = cmd_info_counters_exec,
	[CMD_ID_INFO_SESSION] = cmd_info_session_exec,
	[CMD_ID_INFO_SESSIONS] = cmd_info_sessions_exec,
	[CMD_ID_INFO_SNAPSHOTS] = cmd_info_snapshots_exec,
	[CMD_ID_INFO_TRACE] = cmd_info_trace_exec,
	[CMD_ID_INFO_TRACE_EVENTS] = cmd_info_trace_events_exec,
	[CMD_ID_INFO_TRACE_FUNCS] = cmd_info_trace_funcs_exec,
	[CMD_ID_INFO_TRACE_RULES] = cmd_info_trace_rules_exec,
	[CMD_ID_INFO_TRACERS] = cmd_info_tracers_exec,
	[CMD_ID_SNAPSHOT] = cmd_snapshot_exec,
	[CMD_ID_TRACE_EVENT] = cmd_trace_event_exec,
	[CMD_ID_TRACE_FILE] = cmd_trace_file_exec,
	[CMD_ID_TRACE_FUNC] = cmd_trace_func_exec,
	[CMD_ID_TRACER] = cmd_tracer_exec,
	[CMD_ID_TRIGGER] = cmd_trigger_exec,
};

/*
 * May a peer of uid, gid and supplementary groups change the daemon's
 * state?  Root, the daemon's own uid, or a member of its group.
 */
static int
cmd_privileged(uid_t uid, gid_t gid, const gid_t *groups, int ngroups)
{
	int i;

	if (uid == 0 || uid == geteuid() || gid == getegid())
		return 1;
	for (i = 0; i < ngroups; i++)
		if (groups[i] == getegid())
			return 1;
	return 0;
}

/*
 * Run the command line argv[0..argc) for a peer with uid, gid and
 * supplementary groups.  Returns an enum traced_ctl_status; the reply
 * says the rest.
 */
int
cmd_exec(struct reply *r, int argc, char **argv, uid_t uid, gid_t gid,
    const gid_t *groups, int ngroups)
{
	const struct command_def *d;
	char err[512];
	int consumed;

	d = command_lookup(argc, argv, &consumed, err, sizeof(err));
	if (d == NULL) {
		reply_error(r, "%s", err);
		return TRACED_CTL_USAGE;
	}
	if (command_check_args(d, argc - consumed, err, sizeof(err)) == -1 ||
	    command_check_words(d, argc - consumed, argv + consumed, err,
	    sizeof(err)) == -1) {
		reply_error(r, "%s", err);
		return TRACED_CTL_USAGE;
	}
	if ((d->flags & CMD_F_PRIVILEGED) &&
	    !cmd_privileged(uid, gid, groups, ngroups)) {
		reply_error(r, "'%s' changes the daemon's state: it needs "
		    "root, uid %u or group %u, primary or supplementary (you "
		    "are uid %u)", d->name, (unsigned)geteuid(),
		    (unsigned)getegid(), (unsigned)uid);
		return TRACED_CTL_DENIED;
	}
	reply_set_sees_all(r, cmd_privileged(uid, gid, groups, ngroups));
	if (cmd_handlers[d->id] == NULL) {
		reply_error(r, "'%s' is not available in this daemon", d->name);
		return TRACED_CTL_ERROR;
	}
	return cmd_handlers[d->id](r, argc - consumed, argv + consumed);
}
