/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * trace-file: pause and resume output (every event off in every
 * process, the rules kept), move it to another directory (every
 * session goes on in a new one there; kept across restarts), or flush
 * it: the reply waits (reply_wait()) until every ring has been drained
 * and its stream synced, so that the files on disk hold every event
 * committed before the command was sent.  A flush has no timeout: the
 * disk decides; events written meanwhile into a directory deleted
 * since make it fail, saying so, and so does a session whose rings
 * wait for a new directory that cannot be made.  Loop thread.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "command.h"
#include "log.h"
#include "outdir.h"
#include "pipeline.h"
#include "session.h"

/* A flush waits for every ring to reach its generation. */
struct flush_wait {
	uint64_t	 gen;
	uint64_t	 deleted;	/* outdir_deleted() when it began */
};

/* Has every ring drained and synced up to generation gen? */
static int
flush_done(uint64_t gen)
{
	const struct session *s;
	const struct sring *r;

	TAILQ_FOREACH(s, &sessions, entry)
		TAILQ_FOREACH(r, &s->rings, entry)
			if (!r->ended && r->gen_done < gen)
				return 0;
	return 1;
}

/* The predicate of a flush's reply (reply_wait_cb). */
static int
flush_wait_cb(struct reply *r, void *arg, int timed_out)
{
	struct flush_wait *fw = arg;

	if (r == NULL) {		/* its connection went */
		free(fw);
		return 1;
	}
	if (timed_out) {		/* the daemon stops: all drained */
		reply_message(r, "flushed at shutdown");
		free(fw);
		return 1;
	}
	if (!flush_done(fw->gen)) {
		const struct session *s = sessions_dir_lost();

		if (s == NULL)
			return 0;
		/* Its rings are not read: the flush would never end. */
		reply_error(r, "not flushed: the directory of session %u "
		    "(%s[%d]) was deleted and no new one can be made in %s "
		    "yet: its events wait in its rings (see the daemon's "
		    "log)", s->id, s->comm, (int)s->pid, outdir_path());
		free(fw);
		return 1;
	}
	/* On disk, unless its directory is gone. */
	sessions_check_dirs();
	if (outdir_deleted() != fw->deleted)
		reply_error(r, "not flushed: %llu events were written to "
		    "directories that were deleted since (see the daemon's "
		    "log and 'info trace', cause 'deleted'); tracing goes on "
		    "in new directories",
		    (unsigned long long)(outdir_deleted() - fw->deleted));
	else
		reply_message(r, "flushed: every event committed before the "
		    "command is on disk");
	free(fw);
	return 1;
}

int
cmd_trace_file_exec(struct reply *r, int argc, char **argv)
{
	char err[PATH_MAX + 256], was[PATH_MAX];
	struct flush_wait *fw;
	const char *path;
	int on, created;

	if (strcmp(argv[0], "flush") == 0) {
		if (argc != 1) {
			reply_error(r, "usage: tracectl trace-file flush");
			return TRACED_CTL_USAGE;
		}
		if ((fw = calloc(1, sizeof(*fw))) == NULL) {
			reply_error(r, "out of memory");
			return TRACED_CTL_ERROR;
		}
		fw->gen = outdir_flush_next();
		fw->deleted = outdir_deleted();
		writeout_drain_all(fw->gen);
		reply_wait(r, flush_wait_cb, fw, 0);
		return TRACED_CTL_OK;
	}
	if (strcmp(argv[0], "recorder") == 0) {
		if (argc != 2) {
			reply_error(r, "usage: tracectl trace-file recorder "
			    "SIZE|off");
			return TRACED_CTL_USAGE;
		}
		return cmd_trace_file_recorder(r, argv[1]);
	}
	if (strcmp(argv[0], "set") == 0) {
		if (argc != 2 || argv[1][0] == '\0') {
			reply_error(r, "usage: tracectl trace-file set "
			    "PATH|default");
			return TRACED_CTL_USAGE;
		}
		path = argv[1];
		if (strcmp(path, "default") == 0)
			path = outdir_default();
		else if (path[0] != '/') {
			reply_error(r, "'%s' is relative: give an absolute "
			    "path (the daemon does not share your working "
			    "directory), or 'default'", path);
			return TRACED_CTL_USAGE;
		}
		snprintf(was, sizeof(was), "%s", outdir_path());
		if (sessions_trace_dir_set(path, strcmp(argv[1], "default") ==
		    0 ? "default" : "set", &created, err, sizeof(err)) == -1) {
			if (strcmp(outdir_path(), path) == 0)
				reply_error(r, "%s", err);
			else
				reply_error(r, "%s; traces still go to %s",
				    err, was);
			return TRACED_CTL_ERROR;
		}
		reply_message(r, "tracing to %s%s%s", outdir_path(),
		    created ? " (created)" : "",
		    strcmp(argv[1], "default") == 0 ? " (the default)" :
		    "; kept across restarts until 'trace-file set default'");
		return TRACED_CTL_OK;
	}
	on = command_parse_onoff(argv[0]);
	if (on == -1 || argc != 1) {
		reply_error(r, "usage: tracectl trace-file "
		    "on|off|flush|set PATH|set default|recorder SIZE|off");
		return TRACED_CTL_USAGE;
	}
	if (outdir_paused() == !on) {
		reply_message(r, "trace-file is already %s", on ? "on" : "off");
		return TRACED_CTL_OK;
	}
	outdir_pause(!on);
	sessions_apply_state();
	if (!on)
		writeout_drain_all(0);
	log_info("trace-file %s", on ? "on" : "off");
	reply_message(r, on ? "tracing resumed: events follow their rules "
	    "again" : "tracing paused: every event is off in every process; "
	    "the rules are kept");
	return TRACED_CTL_OK;
}
