/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * tracectl print: every event of the traces given, merged by time
 * across threads and sessions (the reader, reader.c, does the walking,
 * merging and filtering), one line each, for people:
 *
 *   [22:13:25.000002000] (+0.000000500) emit 352/354 helpers:job_done: job 7 done
 *
 * wall-clock time of day and the delta from the previous line, as
 * babeltrace2 prints them; the process name, pid and tid, as perf
 * script does; the event; and its arguments rendered with the format
 * string of its trace-events line (format.c), or as "{ name = value }"
 * when it has none or with --raw.  Where events were lost, a line says
 * how many and why, in its place in time.
 *
 * Function records (the graph tracer's traced:func_entry and
 * traced:func_exit) read as calls, named from the session (calls.c)
 * and indented by their nesting on the thread, with the duration on
 * the exit when its entry was seen:
 *
 *   ... traced:func_entry:   lua:luaD_precall() {
 *   ... traced:func_exit:    } lua:luaD_precall 1.204 us
 *
 * --json prints one JSON object per line (JSON Lines) built with
 * jansson: 64-bit integers as decimal strings, since jq and JavaScript
 * read numbers as doubles and would round them; 32-bit and smaller
 * ones, and counts, as numbers; a NULL string as null.
 *
 * Problems (a corrupt packet, an unreadable file) go to stderr as they
 * are met, named by file and offset, and make the exit status 1; the
 * rest of the trace is printed.  Output is built in one buffer per line
 * and written with one fwrite into a large stdio buffer.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "calls.h"
#include "follow.h"
#include "format.h"
#include "readcmd.h"
#include "reader.h"
#include "strbuf.h"
#include "tracectl.h"

#define PRINT_STDOUT_BUF	(1u << 20)
#define PRINT_INDENT_MAX	256	/* levels of calls shown indented */

enum print_mode {
	PRINT_TEXT,
	PRINT_RAW,
	PRINT_JSON,
};

/* What print knows about one class, made on its first event. */
struct print_class {
	int		 ready;
	struct fmt	*fmt;		/* owned, NULL: raw */
};

struct print_ctx {
	enum print_mode	 mode;
	int		 follow;	/* --follow */
	struct print_class **classes;	/* owned, per session index */
	size_t		*nclasses;	/* owned: of each classes[] */
	size_t		 nsessions;	/* slots of both */
	struct strbuf	 line;
	int64_t		 last_ns;
	int		 have_last;
	time_t		 tod_sec;	/* the second tod[] shows */
	char		 tod[16];	/* "HH:MM:SS" */
	struct calls	*calls;		/* owned */
	struct call_step step;		/* the item's last step */
	int		 stepped;
	int		 nomem;
};

static void
print_help(void)
{
	fputs("\n"
	    "Print the events of the traces under each DIR, merged by time,\n"
	    "with the format strings of their trace-events lines.\n"
	    "\n"
	    "  --raw            arguments as { name = value, ... }\n"
	    "  --json           one JSON object per line (64-bit integers as "
	    "strings)\n"
	    "  --follow, -f     no DIR: the running daemon's sessions, "
	    "running and new,\n"
	    "                   as it writes them, until interrupted (status "
	    "0);\n"
	    "                   '+2s' times count from now\n", stdout);
}

/* print's own options: --raw, --follow (--json is one of readcmd's). */
static int
print_opt(void *arg, int argc, char **argv, int *i, char *err,
    size_t errlen)
{
	struct print_ctx *ctx = arg;

	(void)argc;
	(void)err;
	(void)errlen;
	if (strcmp(argv[*i], "--follow") == 0 || strcmp(argv[*i], "-f") == 0)
		ctx->follow = 1;
	else if (strcmp(argv[*i], "--raw") == 0)
		ctx->mode = PRINT_RAW;
	else
		return 0;
	(*i)++;
	return 1;
}

/* --follow reads the daemon's sessions, not DIRs. */
static int
print_check(void *arg, char *err, size_t errlen)
{
	const struct print_ctx *ctx = arg;

	(void)err;
	(void)errlen;
	return ctx->follow ? 1 : 0;
}

static const struct readcmd_def print_cmd = {
	.name = "print",
	.usage = "usage: tracectl print [--raw | --json] [FILTERS] DIR...\n"
	    "       tracectl print --follow [--raw | --json] [FILTERS]\n",
	.flags = READCMD_JSON,
	.no_dir = "no directory given",
	.help = print_help,
	.opt = print_opt,
	.check = print_check,
};

static void
print_error(void *arg, const char *msg)
{
	struct strbuf	 b;

	(void)arg;
	fflush(stdout);
	strbuf_init(&b);
	strbuf_add_escaped(&b, msg, strlen(msg), 0);
	fprintf(stderr, "tracectl: %s\n", b.s != NULL ? b.s : "out of memory");
	strbuf_free(&b);
}

static int
print_class_init(struct print_ctx *ctx, struct print_class *pc,
    const struct tracedir_class *c)
{
	int		 nomem;

	pc->ready = 1;
	if (ctx->mode == PRINT_TEXT) {
		pc->fmt = fmt_compile(c, &nomem);
		if (nomem)
			return -1;
	}
	return 0;
}

/* Room for n sessions' classes.  0 or -1. */
static int
print_grow(struct print_ctx *ctx, size_t n)
{
	struct print_class **c;
	size_t		*nc, cap = ctx->nsessions != 0 ? ctx->nsessions : 16;

	while (cap < n)
		cap *= 2;
	if ((c = reallocarray(ctx->classes, cap, sizeof(*c))) == NULL)
		return -1;
	ctx->classes = c;
	if ((nc = reallocarray(ctx->nclasses, cap, sizeof(*nc))) == NULL)
		return -1;
	ctx->nclasses = nc;
	memset(c + ctx->nsessions, 0, (cap - ctx->nsessions) * sizeof(*c));
	memset(nc + ctx->nsessions, 0, (cap - ctx->nsessions) * sizeof(*nc));
	ctx->nsessions = cap;
	return 0;
}

/* The print_class of an event, made the first time. */
static const struct print_class *
print_class_get(struct print_ctx *ctx, const struct reader_item *it)
{
	const struct tracedir_meta *m = it->sess->meta;
	struct print_class *pcs, *pc;
	size_t		 idx = (size_t)(it->ev->cls - m->classes);

	/* --follow meets new sessions as it goes. */
	if (it->sess->index >= ctx->nsessions &&
	    print_grow(ctx, it->sess->index + 1) == -1)
		goto nomem;
	if ((pcs = ctx->classes[it->sess->index]) == NULL) {
		if ((pcs = calloc(m->nclasses, sizeof(*pcs))) == NULL)
			goto nomem;
		ctx->classes[it->sess->index] = pcs;
		ctx->nclasses[it->sess->index] = m->nclasses;
	}
	pc = &pcs[idx];
	if (!pc->ready && print_class_init(ctx, pc, it->ev->cls) == -1)
		goto nomem;
	return pc;
nomem:
	ctx->nomem = 1;
	return NULL;
}

/* Append v as exactly 9 digits. */
static void
print_ns9(struct strbuf *b, uint64_t v)
{
	char	 d[9];
	int	 i;

	for (i = 8; i >= 0; i--) {
		d[i] = (char)('0' + v % 10);
		v /= 10;
	}
	strbuf_add(b, d, 9);
}

/*
 * "[HH:MM:SS.NNNNNNNNN] (+S.NNNNNNNNN) COMM PID/TID ".  Written by hand:
 * it is on every line, and printf was a fifth of print's time.
 */
static void
print_prefix(struct print_ctx *ctx, const struct reader_item *it)
{
	struct strbuf	*b = &ctx->line;
	struct tm	 tm;
	int64_t		 sec = it->ns / 1000000000, nsec = it->ns % 1000000000;
	int64_t		 d;

	if (nsec < 0) {
		nsec += 1000000000;
		sec--;
	}
	if (sec != ctx->tod_sec || ctx->tod[0] == '\0') {
		time_t t = (time_t)sec;

		ctx->tod_sec = t;
		if (localtime_r(&t, &tm) == NULL)
			memset(&tm, 0, sizeof(tm));
		snprintf(ctx->tod, sizeof(ctx->tod), "%02d:%02d:%02d",
		    tm.tm_hour, tm.tm_min, tm.tm_sec);
	}
	strbuf_addc(b, '[');
	strbuf_adds(b, ctx->tod);
	strbuf_addc(b, '.');
	print_ns9(b, (uint64_t)nsec);
	if (!ctx->have_last)
		strbuf_adds(b, "] (+?.?????\?\?\?\?) ");
	else {
		d = it->ns - ctx->last_ns;
		strbuf_adds(b, d < 0 ? "] (-" : "] (+");
		if (d < 0)
			d = -d;
		strbuf_add_u64(b, (uint64_t)(d / 1000000000));
		strbuf_addc(b, '.');
		print_ns9(b, (uint64_t)(d % 1000000000));
		strbuf_adds(b, ") ");
	}
	ctx->last_ns = it->ns;
	ctx->have_last = 1;
	strbuf_add_escaped(b, it->sess->comm, strlen(it->sess->comm), 0);
	strbuf_addc(b, ' ');
	strbuf_add_i64(b, it->sess->pid);
	strbuf_addc(b, '/');
	strbuf_add_u64(b, it->thread->tid);
	strbuf_addc(b, ' ');
}

/* "LOST 3 events (CAUSE 2, CAUSE 1)" and/or "2 packets", causes by name */
static void
print_lost_text(struct strbuf *b, const struct reader_item *it)
{
	unsigned	 c, n = 0;

	strbuf_adds(b, "LOST ");
	if (it->lost > 0 || it->packets == 0) {
		strbuf_add_u64(b, it->lost);
		strbuf_adds(b, it->lost == 1 ? " event (" : " events (");
		for (c = 0; c < READER_NCAUSES; c++) {
			if (it->causes[c] == 0)
				continue;
			strbuf_addf(b, "%s%s ", n++ > 0 ? ", " : "",
			    reader_cause_name(c));
			strbuf_add_u64(b, it->causes[c]);
		}
		strbuf_addc(b, ')');
	}
	if (it->packets > 0) {
		if (it->lost > 0)
			strbuf_adds(b, " and ");
		strbuf_add_u64(b, it->packets);
		strbuf_adds(b, it->packets == 1 ? " packet" : " packets");
	}
}

/* Remember the last step an item made (see print_call_text()). */
static int
print_step(void *arg, const struct call_step *s)
{
	struct print_ctx *ctx = arg;

	ctx->step = *s;
	ctx->stepped = 1;
	return 0;
}

/* "1.204 us": a duration as people read it, 4 significant digits. */
static void
print_duration(struct strbuf *b, int64_t ns)
{
	static const char *const unit[] = { "ns", "us", "ms", "s" };
	double		 v = (double)ns;
	unsigned	 u = 0;

	while (v >= 1000 && u < 3) {
		v /= 1000;
		u++;
	}
	if (u == 0)
		strbuf_addf(b, "%lld ns", (long long)ns);
	else
		strbuf_addf(b, "%.*f %s", v >= 100 ? 1 : v >= 10 ? 2 : 3, v,
		    unit[u]);
}

/*
 * A function record as a call: 1 if it was one (written into the
 * line), 0 if not.  The nesting is the matcher's when it matched the
 * record, else the depth recorded.
 */
static int
print_call_text(struct print_ctx *ctx, const struct reader_item *it)
{
	struct strbuf	*b = &ctx->line;
	const struct call_fn *fn;
	uint64_t	 addr, depth;
	int		 exit_, matched;
	unsigned	 level;

	if (!calls_record(it, &exit_, &addr, &depth))
		return 0;
	ctx->stepped = 0;
	if (calls_feed(ctx->calls, it, print_step, ctx) == -1 ||
	    (fn = calls_name(ctx->calls, it->sess, addr)) == NULL) {
		ctx->nomem = 1;
		return 0;
	}
	matched = ctx->stepped && (exit_ ? ctx->step.how == CALL_CLOSE &&
	    ctx->step.end == CALL_RETURNED : ctx->step.how == CALL_OPEN);
	/* Indented two spaces a level, up to PRINT_INDENT_MAX levels (the
	 * depth comes from the trace). */
	level = matched ? ctx->step.level : depth > PRINT_INDENT_MAX ?
	    PRINT_INDENT_MAX : (unsigned)depth;
	strbuf_adds(b, it->ev->cls->name);
	strbuf_addf(b, ": %*s", (int)(2 * (level < PRINT_INDENT_MAX ? level :
	    PRINT_INDENT_MAX)), "");
	if (exit_)
		strbuf_adds(b, "} ");
	strbuf_add_escaped(b, fn->name, strlen(fn->name), 0);
	if (!exit_)
		strbuf_adds(b, "() {");
	else if (matched) {
		strbuf_addc(b, ' ');
		print_duration(b, ctx->step.end_ns - ctx->step.start_ns);
	}
	return 1;
}

static int
print_text(struct print_ctx *ctx, const struct reader_item *it)
{
	const struct print_class *pc = NULL;
	struct strbuf	*b = &ctx->line;
	const char	*name;

	strbuf_reset(b);
	print_prefix(ctx, it);
	if (it->kind == READER_LOST)
		print_lost_text(b, it);
	else if (ctx->mode != PRINT_TEXT || !print_call_text(ctx, it)) {
		if (ctx->mode == PRINT_TEXT &&
		    (pc = print_class_get(ctx, it)) == NULL)
			return -1;
		name = it->ev->cls->name;
		strbuf_add_escaped(b, name, strlen(name), 0);
		strbuf_addc(b, ':');
		if (pc != NULL && pc->fmt != NULL) {
			strbuf_addc(b, ' ');
			fmt_render(pc->fmt, it->ev, b);
		} else if (it->ev->nvalues > 0) {
			strbuf_addc(b, ' ');
			fmt_render_raw(it->ev, b);
		}
	}
	strbuf_addc(b, '\n');
	if (b->failed)
		return -1;
	fwrite(b->s, 1, b->len, stdout);
	return 0;
}

/* Set key to a new value; a NULL value (no memory) fails. */
static int
print_jset(json_t *o, const char *key, json_t *v)
{
	if (v == NULL)
		return -1;
	return json_object_set_new(o, key, v);
}

static json_t *
print_ju64(uint64_t v)
{
	char	 buf[24];

	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)v);
	return json_string(buf);
}

/*
 * A function record's call: "function" (its name), "level" (its
 * nesting) and, on an exit whose entry was seen, "duration" (ns, a
 * string as every 64-bit value).  0 or -1.
 */
static int
print_json_call(struct print_ctx *ctx, const struct reader_item *it,
    json_t *o, struct strbuf *tmp)
{
	const struct call_fn *fn;
	uint64_t	 addr, depth;
	int		 exit_, matched;

	if (!calls_record(it, &exit_, &addr, &depth))
		return 0;
	ctx->stepped = 0;
	if (calls_feed(ctx->calls, it, print_step, ctx) == -1 ||
	    (fn = calls_name(ctx->calls, it->sess, addr)) == NULL)
		return -1;
	matched = ctx->stepped && (exit_ ? ctx->step.how == CALL_CLOSE &&
	    ctx->step.end == CALL_RETURNED : ctx->step.how == CALL_OPEN);
	if (print_jset(o, "function", fmt_json_string(fn->name,
	    strlen(fn->name), tmp)) == -1 ||
	    print_jset(o, "level", json_integer(matched ? ctx->step.level :
	    (json_int_t)depth)) == -1)
		return -1;
	if (exit_ && matched && print_jset(o, "duration", print_ju64(
	    (uint64_t)(ctx->step.end_ns - ctx->step.start_ns))) == -1)
		return -1;
	return 0;
}

static int
print_json(struct print_ctx *ctx, const struct reader_item *it)
{
	const struct tracedir_event *ev = it->ev;
	struct strbuf	 tmp;
	json_t		*o, *f, *causes;
	char		 buf[24];
	unsigned	 i;
	int		 rc = -1;

	strbuf_init(&tmp);
	if ((o = json_object()) == NULL)
		goto out;
	snprintf(buf, sizeof(buf), "%lld", (long long)it->ns);
	if (print_jset(o, "type", json_string(it->kind == READER_EVENT ?
	    "event" : "lost")) == -1 ||
	    print_jset(o, "ts", json_string(buf)) == -1 ||
	    print_jset(o, "session", fmt_json_string(it->sess->name,
	    strlen(it->sess->name), &tmp)) == -1 ||
	    print_jset(o, "comm", fmt_json_string(it->sess->comm,
	    strlen(it->sess->comm), &tmp)) == -1 ||
	    print_jset(o, "pid", json_integer(it->sess->pid)) == -1 ||
	    print_jset(o, "tid", json_integer((json_int_t)it->thread->tid)) ==
	    -1)
		goto out;
	if (it->kind == READER_LOST) {
		if ((causes = json_object()) == NULL ||
		    json_object_set_new(o, "causes", causes) == -1)
			goto out;
		for (i = 0; i < READER_NCAUSES; i++)
			if (it->causes[i] > 0 && print_jset(causes,
			    reader_cause_name(i), print_ju64(it->causes[i])) ==
			    -1)
				goto out;
		if (print_jset(o, "lost", print_ju64(it->lost)) == -1 ||
		    print_jset(o, "packets", print_ju64(it->packets)) == -1)
			goto out;
	} else {
		if (print_jset(o, "event", fmt_json_string(ev->cls->name,
		    strlen(ev->cls->name), &tmp)) == -1 ||
		    (f = json_object()) == NULL ||
		    json_object_set_new(o, "fields", f) == -1)
			goto out;
		for (i = 0; i < ev->nvalues; i++)
			if (print_jset(f, ev->values[i].decl->shown,
			    fmt_json_value(ev->cls, i, &ev->values[i],
			    &tmp)) == -1)
				goto out;
		if (print_json_call(ctx, it, o, &tmp) == -1)
			goto out;
	}
	if (json_dumpf(o, stdout, JSON_COMPACT | JSON_PRESERVE_ORDER) == -1)
		goto out;
	putchar('\n');
	rc = 0;
out:
	json_decref(o);
	strbuf_free(&tmp);
	return rc;
}

/* One item, as the options say.  0, or -1 when out of memory. */
static int
print_item(void *arg, const struct reader_item *it)
{
	struct print_ctx *ctx = arg;
	int		 rc;

	if (ctx->mode == PRINT_JSON)
		rc = print_json(ctx, it);
	else
		rc = print_text(ctx, it);
	/* Output that could not be written (a reader that closed its pipe)
	 * is not a lack of memory: the caller's flush says which it is. */
	if (rc == -1 && !ctx->nomem && ferror(stdout))
		return 0;
	return rc == -1 || ctx->nomem ? -1 : 0;
}

/*
 * tracectl print.  Contract in tracectl.h.
 */
int
print_main(int nargs, char **args, int json)
{
	struct print_ctx	 ctx;
	struct readcmd		 cmd;
	struct reader		*r = NULL;
	const struct reader_item *it;
	static char		*outbuf;
	size_t			 i, j;
	int			 rc, ret = EXIT_DONE;

	memset(&ctx, 0, sizeof(ctx));
	ctx.mode = PRINT_TEXT;
	if ((rc = readcmd_parse(&cmd, &print_cmd, json, nargs, args,
	    &ctx)) == READCMD_NOMEM)
		goto nomem;
	if (rc != READCMD_RUN) {
		ret = rc;
		goto out;
	}
	/* --json wins over --raw, wherever each is. */
	if (cmd.json)
		ctx.mode = PRINT_JSON;
	/* Sized as sessions and threads come (calls.c grows). */
	if ((ctx.calls = calls_new(0, 0, print_error, &ctx)) == NULL)
		goto nomem;
	if (ctx.follow && cmd.ndirs > 0) {
		fprintf(stderr, "tracectl: print: --follow takes no DIR: it "
		    "follows the daemon's sessions\n%s", print_cmd.usage);
		ret = EXIT_USAGE;
		goto out;
	}
	if (ctx.follow) {
		ret = follow_main(&cmd.opts, print_item, print_error, &ctx);
		goto out;
	}
	if ((r = reader_new(&cmd.opts, print_error, &ctx)) == NULL)
		goto nomem;
	for (i = 0; i < cmd.ndirs; i++)
		if (reader_add(r, cmd.dirs[i]) == -1)
			goto fail;
	if (reader_start(r) == -1)
		goto fail;
	if (outbuf == NULL && (outbuf = malloc(PRINT_STDOUT_BUF)) != NULL)
		setvbuf(stdout, outbuf, _IOFBF, PRINT_STDOUT_BUF);
	while ((rc = reader_next(r, &it)) > 0)
		if (print_item(&ctx, it) == -1)
			goto nomem;
	if (rc == -1)
		goto fail;
	goto out;
nomem:
	print_error(NULL, "out of memory");
fail:
	ret = EXIT_FAILED;
out:
	if (fflush(stdout) == EOF || ferror(stdout)) {
		fputs("tracectl: print: cannot write the output\n", stderr);
		ret = EXIT_FAILED;
	}
	if (r != NULL && reader_nerrors(r) > 0 && ret == EXIT_DONE)
		ret = EXIT_FAILED;
	for (i = 0; i < ctx.nsessions; i++) {
		if (ctx.classes[i] == NULL)
			continue;
		for (j = 0; j < ctx.nclasses[i]; j++)
			fmt_free(ctx.classes[i][j].fmt);
		free(ctx.classes[i]);
	}
	free(ctx.classes);
	calls_free(ctx.calls);
	free(ctx.nclasses);
	strbuf_free(&ctx.line);
	reader_free(r);
	readcmd_free(&cmd);
	return ret;
}
