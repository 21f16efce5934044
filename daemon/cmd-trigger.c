/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * trigger add|list|delete: the snapshot triggers (trigger.c keeps them
 * and fires them), and their lines in info trace.  The command line is
 * parsed by proto (command_parse_trigger()), as tracectl parsed it
 * before sending it.  The work is bounded by TRIGGER_MAX.  Loop thread.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "cmd.h"
#include "command.h"
#include "outdir.h"
#include "recorder.h"
#include "trigger.h"

/*
 * One line or JSON object per trigger, for trigger list and info trace.
 * 'indent' starts each line.
 */
void
cmd_trigger_list(struct reply *r, const char *indent)
{
	struct trigger_info ti;
	char after[32], every[32], when[64];
	size_t i, n = trigger_count();
	struct tm tm;
	time_t sec;

	for (i = 0; i < n && !reply_cut(r); i++) {
		trigger_get(i, &ti);
		if (reply_json(r)) {
			reply_item(r, json_pack("{s:s, s:o, s:s, s:I, s:I, "
			    "s:I, s:I, s:I, s:I, s:o, s:o}", "type", "trigger",
			    "glob", jstr(ti.glob), "action", ti.action,
			    "after_ns", (json_int_t)ti.after_ns, "every_ns",
			    (json_int_t)ti.every_ns, "fired",
			    (json_int_t)ti.fired, "suppressed",
			    (json_int_t)ti.suppressed, "failed",
			    (json_int_t)ti.failed, "pending",
			    (json_int_t)ti.pending, "last_fired_ns",
			    jns(ti.last_fired), "last_snapshot",
			    jstr(ti.last_dir)));
			continue;
		}
		snprintf(when, sizeof(when), "never");
		if (ti.last_fired != 0) {
			sec = (time_t)(ti.last_fired / 1000000000);
			if (localtime_r(&sec, &tm) != NULL)
				strftime(when, sizeof(when),
				    "%Y-%m-%d %H:%M:%S", &tm);
		}
		reply_line(r, "%s%-32s %s --after %s --every %s: fired %llu, "
		    "suppressed %llu%s, last %s%s%s%s", indent, ti.glob,
		    ti.action, command_format_duration(ti.after_ns, after,
		    sizeof(after)), command_format_duration(ti.every_ns,
		    every, sizeof(every)), (unsigned long long)ti.fired,
		    (unsigned long long)ti.suppressed, ti.failed > 0 ?
		    ", FAILED" : "", when, ti.pending > 0 ? " (pending)" : "",
		    ti.last_dir != NULL ? " in " : "", ti.last_dir != NULL ?
		    ti.last_dir : "");
		if (ti.failed > 0)
			reply_line(r, "%s  %llu firing%s wrote no snapshot: see "
			    "the daemon's log", indent,
			    (unsigned long long)ti.failed, ti.failed == 1 ? "" :
			    "s");
	}
}

int
cmd_trigger_exec(struct reply *r, int argc, char **argv)
{
	struct command_trigger ct;
	char err[512], after[32], every[32];
	int rc;

	if (command_parse_trigger(argc, argv, &ct, err, sizeof(err)) == -1) {
		reply_error(r, "%s", err);
		return TRACED_CTL_USAGE;
	}
	switch (ct.op) {
	case COMMAND_TRIGGER_LIST:
		cmd_trigger_list(r, "");
		if (trigger_count() == 0)
			reply_message(r, "no trigger: 'tracectl trigger add "
			    "GLOB snapshot' adds one");
		return TRACED_CTL_OK;
	case COMMAND_TRIGGER_DELETE:
		switch (trigger_delete(ct.glob)) {
		case 0:
			reply_error(r, "no trigger on '%s' (see 'tracectl "
			    "trigger list')", ct.glob);
			return TRACED_CTL_ERROR;
		case -1:
			reply_error(r, "trigger '%s' deleted now, but the "
			    "deletion could not be saved (see the daemon's "
			    "log): a restarted daemon would have it", ct.glob);
			return TRACED_CTL_ERROR;
		}
		reply_message(r, "trigger '%s' deleted", ct.glob);
		return TRACED_CTL_OK;
	case COMMAND_TRIGGER_ADD:
		break;
	}
	rc = trigger_add(&ct, err, sizeof(err));
	if (rc != 0) {
		reply_error(r, "%s", err);
		return TRACED_CTL_ERROR;
	}
	reply_message(r, "trigger '%s': a drained event that matches it "
	    "writes a snapshot of its user's recorder windows %s%s, at most "
	    "once every %s per user, into %s%s", ct.glob,
	    ct.after_ns > 0 ? command_format_duration(ct.after_ns, after,
	    sizeof(after)) : "at once", ct.after_ns > 0 ? " later" : "",
	    command_format_duration(ct.every_ns, every, sizeof(every)),
	    outdir_path(), recorder_size() > 0 ? "" : " (the recorder is "
	    "off, so none is written: traced --recorder SIZE, or 'tracectl "
	    "trace-file recorder SIZE', turns it on)");
	return TRACED_CTL_OK;
}
