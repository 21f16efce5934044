/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * tracectl print: read trace directories offline and print every event
 * of every session, merged by time across threads and sessions, as
 * babeltrace2 does, one line per event:
 *
 *   [NS] SESSION TID PROVIDER:EVENT: { name = value, ... }
 *
 * NS is nanoseconds since the Epoch, from the clock of the session's
 * metadata.  With --json it prints the one document every tracectl
 * command prints, with an item per event (and per loss, and per error).
 *
 * It works in two passes over files it holds in memory (tracedir-io.c
 * reads them, with size limits): the first walks every stream to its
 * end or to its first error, so that errors are said on stderr before
 * any event and the JSON document can start with its status; the
 * second merges the streams with a heap of cursors keyed by (time,
 * order found), so that equal times print in a stable order.  A corrupt
 * stream is printed up to its first error and the exit status is 1;
 * the other streams are printed whole.  Losses (events_discarded going
 * up, packet_seq_num skipping) are said where they happened in time: a
 * warning on stderr in text mode, as babeltrace2 does, or an item.
 *
 * Everything printed comes from files that may be hostile: names and
 * strings are escaped (text) or JSON-encoded, never written raw.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "tracectl.h"
#include "tracedir.h"

/* Errors kept for the JSON document; more are only counted. */
#define PRINT_ERRORS_KEPT	1000

/* What a cursor holds: its stream's next item in time. */
enum print_kind {
	PRINT_EVENT,
	PRINT_LOSS,			/* discarded events or packets */
};

/* One stream being merged. */
struct print_cursor {
	struct tracedir_stream	 st;
	struct tracedir_event	 ev;	/* PRINT_EVENT */
	const struct tracedir_session *sess; /* borrowed */
	const struct tracedir_file *file; /* borrowed */
	size_t			 order;	/* ties: the order found */
	enum print_kind		 kind;
	int64_t			 ns;	/* when: the merge key */
	int64_t			 end_ns; /* PRINT_LOSS: up to when */
	uint64_t		 events; /* PRINT_LOSS: discarded */
	uint64_t		 packets; /* PRINT_LOSS: missing */
};

/* One run of the command. */
struct print_ctx {
	int		 json;
	char		**errs;		/* owned, PRINT_ERRORS_KEPT at most */
	size_t		 nerrs;		/* kept */
	size_t		 nerrs_all;	/* said */
	size_t		 nitems;	/* JSON items written */
};

static void
print_usage(FILE *f)
{
	fputs("usage: tracectl print [--json] DIR...\n", f);
}

/*
 * Write s[0..len) for a person: printable ASCII and valid UTF-8 pass,
 * a quote (when 'quote') and a backslash are escaped, and every other
 * byte is written as a C escape.
 */
static void
print_escaped(FILE *f, const char *s, size_t len, int quote)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t		 i, n;

	for (i = 0; i < len; i += n) {
		n = json_utf8_len(s + i, len - i);
		if (n > 1 && !(n == 2 && u[i] == 0xc2 && u[i + 1] < 0xa0)) {
			fwrite(s + i, 1, n, f);
			continue;
		}
		n = 1;
		switch (u[i]) {
		case '\\':
			fputs("\\\\", f);
			break;
		case '"':
			fputs(quote ? "\\\"" : "\"", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
		case '\r':
			fputs("\\r", f);
			break;
		default:
			if (u[i] >= 0x20 && u[i] < 0x7f)
				putc(u[i], f);
			else
				fprintf(f, "\\x%02x", u[i]);
		}
	}
}

static void
print_str(FILE *f, const char *s)
{
	print_escaped(f, s, strlen(s), 0);
}

static void
print_json_str(const char *s)
{
	json_write_string(stdout, s, strlen(s));
}

/* Start a JSON item: the separator before it. */
static void
print_item(struct print_ctx *ctx)
{
	fputs(ctx->nitems++ > 0 ? ",\n  " : "\n  ", stdout);
}

/*
 * Say one problem: on stderr at once (after what stdout has so far),
 * and kept for the JSON document.
 */
static void
print_error(struct print_ctx *ctx, const char *msg)
{
	char	*copy;

	fflush(stdout);
	fputs("tracectl: ", stderr);
	print_str(stderr, msg);
	putc('\n', stderr);
	ctx->nerrs_all++;
	if (ctx->nerrs < PRINT_ERRORS_KEPT && (copy = strdup(msg)) != NULL)
		ctx->errs[ctx->nerrs++] = copy;
}

static void
print_load_error(void *arg, const char *msg)
{
	print_error(arg, msg);
}

/* Walk one stream to its end; say its error if it has one. */
static void
print_check(struct print_ctx *ctx, const struct tracedir_session *sess,
    const struct tracedir_file *file, struct tracedir_event *scratch)
{
	struct tracedir_stream	 st;
	enum tracedir_item	 it;
	char			 msg[TRACEDIR_ERR_MAX + 4096];

	tracedir_stream_init(&st, sess->meta, file->data, file->len);
	while ((it = tracedir_stream_next(&st, scratch)) > TRACEDIR_END)
		;
	if (it == TRACEDIR_ERROR) {
		snprintf(msg, sizeof(msg), "%s: offset %llu: %s%s", file->path,
		    (unsigned long long)st.err_off, st.err,
		    st.nevents > 0 ?
		    " (the events before it are printed)" : "");
		print_error(ctx, msg);
	}
}

/* Move a cursor to its stream's next event or loss; 0 at the end. */
static int
print_advance(struct print_cursor *c)
{
	const struct tracedir_packet *p = &c->st.packet;

	for (;;) {
		switch (tracedir_stream_next(&c->st, &c->ev)) {
		case TRACEDIR_PACKET:
			if (p->discarded_new == 0 && p->seq_gap == 0)
				continue;
			c->kind = PRINT_LOSS;
			c->ns = tracedir_ns(c->st.meta, p->prev_end);
			c->end_ns = tracedir_ns(c->st.meta, p->ts_end);
			c->events = p->discarded_new;
			c->packets = p->seq_gap;
			return 1;
		case TRACEDIR_EVENT:
			c->kind = PRINT_EVENT;
			c->ns = tracedir_ns(c->st.meta, c->ev.ts);
			return 1;
		case TRACEDIR_END:
		case TRACEDIR_ERROR:
		default:
			/* Errors were said by print_check(). */
			return 0;
		}
	}
}

static int
print_before(const struct print_cursor *a, const struct print_cursor *b)
{
	if (a->ns != b->ns)
		return a->ns < b->ns;
	return a->order < b->order;
}

/* Restore the heap property from slot i down. */
static void
print_sift(struct print_cursor **h, size_t n, size_t i)
{
	struct print_cursor *tmp;
	size_t		 l, r, min;

	for (;;) {
		l = 2 * i + 1;
		r = l + 1;
		min = i;
		if (l < n && print_before(h[l], h[min]))
			min = l;
		if (r < n && print_before(h[r], h[min]))
			min = r;
		if (min == i)
			return;
		tmp = h[i];
		h[i] = h[min];
		h[min] = tmp;
		i = min;
	}
}

static void
print_value_text(const struct tracedir_value *v)
{
	const struct tracedir_type *t = &v->decl->type;
	int		 i;

	if (t->kind == TRACEDIR_STRING) {
		putchar('"');
		print_escaped(stdout, v->s, v->len, 1);
		putchar('"');
		return;
	}
	switch (t->base) {
	case 16:
		printf("0x%llX", (unsigned long long)v->u);
		break;
	case 8:
		printf("0%llo", (unsigned long long)v->u);
		break;
	case 2:
		fputs("0b", stdout);
		for (i = (int)t->size - 1; i >= 0; i--)
			putchar((v->u >> i) & 1 ? '1' : '0');
		break;
	default:
		if (t->is_signed)
			printf("%lld", (long long)(int64_t)v->u);
		else
			printf("%llu", (unsigned long long)v->u);
	}
}

static void
print_value_json(const struct tracedir_value *v)
{
	const struct tracedir_type *t = &v->decl->type;

	if (t->kind == TRACEDIR_STRING)
		json_write_string(stdout, v->s, v->len);
	else if (t->is_signed)
		printf("%lld", (long long)(int64_t)v->u);
	else
		printf("%llu", (unsigned long long)v->u);
}

static void
print_event(struct print_ctx *ctx, const struct print_cursor *c)
{
	const struct tracedir_event *ev = &c->ev;
	unsigned	 i;

	if (ctx->json) {
		print_item(ctx);
		printf("{\"type\":\"event\",\"ts\":%lld,\"session\":",
		    (long long)c->ns);
		print_json_str(c->sess->name);
		printf(",\"tid\":%llu,\"name\":",
		    (unsigned long long)c->st.packet.tid);
		print_json_str(ev->cls->name);
		fputs(",\"fields\":{", stdout);
		for (i = 0; i < ev->nvalues; i++) {
			if (i > 0)
				putchar(',');
			print_json_str(ev->values[i].decl->shown);
			putchar(':');
			print_value_json(&ev->values[i]);
		}
		fputs("}}", stdout);
		return;
	}
	printf("[%lld] ", (long long)c->ns);
	print_str(stdout, c->sess->name);
	printf(" %llu ", (unsigned long long)c->st.packet.tid);
	print_str(stdout, ev->cls->name);
	putchar(':');
	if (ev->nvalues > 0) {
		fputs(" { ", stdout);
		for (i = 0; i < ev->nvalues; i++) {
			if (i > 0)
				fputs(", ", stdout);
			print_str(stdout, ev->values[i].decl->shown);
			fputs(" = ", stdout);
			print_value_text(&ev->values[i]);
		}
		fputs(" }", stdout);
	}
	putchar('\n');
}

/*
 * A loss, where it happened: the interval is the one babeltrace2 gives,
 * from the end of the previous packet to the end of this one.
 */
static void
print_loss(struct print_ctx *ctx, const struct print_cursor *c)
{
	const char	*noun;
	uint64_t	 n;
	int		 i;

	if (ctx->json) {
		print_item(ctx);
		printf("{\"type\":\"discarded\",\"ts\":%lld,\"end\":%lld,"
		    "\"session\":", (long long)c->ns, (long long)c->end_ns);
		print_json_str(c->sess->name);
		printf(",\"tid\":%llu,\"stream\":",
		    (unsigned long long)c->st.packet.tid);
		print_json_str(c->file->path);
		printf(",\"events\":%llu,\"packets\":%llu}",
		    (unsigned long long)c->events,
		    (unsigned long long)c->packets);
		return;
	}
	fflush(stdout);
	for (i = 0; i < 2; i++) {
		if ((n = i == 0 ? c->events : c->packets) == 0)
			continue;
		if (i == 0)
			noun = n == 1 ? "event" : "events";
		else
			noun = n == 1 ? "packet" : "packets";
		fprintf(stderr, "tracectl: warning: %s %llu %s between [%lld] "
		    "and [%lld] in session ", i == 0 ? "tracer discarded" :
		    "missing", (unsigned long long)n, noun, (long long)c->ns,
		    (long long)c->end_ns);
		print_str(stderr, c->sess->name);
		fprintf(stderr, ", thread %llu (",
		    (unsigned long long)c->st.packet.tid);
		print_str(stderr, c->file->path);
		fputs(")\n", stderr);
	}
}

/* Merge every readable stream of the set by time and print. */
static int
print_merge(struct print_ctx *ctx, const struct tracedir_set *set)
{
	struct print_cursor	*cur, **heap, *c;
	size_t			 i, j, k, n = 0;

	cur = calloc(set->nfiles != 0 ? set->nfiles : 1, sizeof(*cur));
	heap = calloc(set->nfiles != 0 ? set->nfiles : 1, sizeof(*heap));
	if (cur == NULL || heap == NULL) {
		free(cur);
		free(heap);
		print_error(ctx, "out of memory");
		return -1;
	}
	k = 0;
	for (i = 0; i < set->nsessions; i++) {
		if (set->sessions[i].meta == NULL)
			continue;
		for (j = 0; j < set->sessions[i].nfiles && k < set->nfiles;
		    j++) {
			c = &cur[k];
			c->sess = &set->sessions[i];
			c->file = &c->sess->files[j];
			c->order = k++;
			tracedir_stream_init(&c->st, c->sess->meta,
			    c->file->data, c->file->len);
			if (print_advance(c))
				heap[n++] = c;
		}
	}
	for (i = n; i-- > 0; )
		print_sift(heap, n, i);
	while (n > 0) {
		c = heap[0];
		if (c->kind == PRINT_EVENT)
			print_event(ctx, c);
		else
			print_loss(ctx, c);
		if (!print_advance(c))
			heap[0] = heap[--n];
		print_sift(heap, n, 0);
	}
	free(heap);
	free(cur);
	return 0;
}

/*
 * tracectl print.  Contract in tracectl.h.
 */
int
print_main(int nargs, char **args, int json)
{
	struct print_ctx	 ctx;
	struct tracedir_set	 set;
	struct tracedir_event	*scratch = NULL;
	char			**dirs;
	size_t			 i, j, ndirs = 0;
	int			 a, dashdash = 0, ret = EXIT_DONE;

	memset(&ctx, 0, sizeof(ctx));
	memset(&set, 0, sizeof(set));
	if ((dirs = calloc((size_t)nargs + 1, sizeof(*dirs))) == NULL) {
		fputs("tracectl: out of memory\n", stderr);
		return EXIT_FAILED;
	}
	for (a = 0; a < nargs; a++) {
		if (dashdash || args[a][0] != '-' || args[a][1] == '\0')
			dirs[ndirs++] = args[a];
		else if (strcmp(args[a], "--") == 0)
			dashdash = 1;
		else if (strcmp(args[a], "--json") == 0 ||
		    strcmp(args[a], "-j") == 0)
			json = 1;
		else if (strcmp(args[a], "--help") == 0 ||
		    strcmp(args[a], "-h") == 0) {
			print_usage(stdout);
			free(dirs);
			return EXIT_DONE;
		} else {
			fprintf(stderr, "tracectl: print: unknown option "
			    "'%s'\n", args[a]);
			print_usage(stderr);
			free(dirs);
			return EXIT_USAGE;
		}
	}
	if (ndirs == 0) {
		fputs("tracectl: print: no directory given\n", stderr);
		print_usage(stderr);
		free(dirs);
		return EXIT_USAGE;
	}
	ctx.json = json;
	if ((ctx.errs = calloc(PRINT_ERRORS_KEPT, sizeof(*ctx.errs))) == NULL ||
	    (scratch = malloc(sizeof(*scratch))) == NULL) {
		fputs("tracectl: out of memory\n", stderr);
		ret = EXIT_FAILED;
		goto out;
	}

	for (i = 0; i < ndirs; i++)
		if (tracedir_load(&set, dirs[i], print_load_error, &ctx) == -1)
			goto out;
	for (i = 0; i < set.nsessions; i++)
		for (j = 0; j < set.sessions[i].nfiles; j++)
			if (set.sessions[i].meta != NULL)
				print_check(&ctx, &set.sessions[i],
				    &set.sessions[i].files[j], scratch);

	if (json) {
		printf("{\"ok\": %s, \"status\": \"%s\", \"message\": ",
		    ctx.nerrs_all == 0 ? "true" : "false",
		    ctx.nerrs_all == 0 ? "ok" : "error");
		if (ctx.nerrs_all == 0)
			fputs("\"\"", stdout);
		else if (ctx.nerrs == 0)	/* strdup() failed */
			print_json_str("out of memory");
		else if (ctx.nerrs_all == 1)
			print_json_str(ctx.errs[0]);
		else {
			char *msg;

			if (asprintf(&msg, "%s (and %zu more problems)",
			    ctx.errs[0], ctx.nerrs_all - 1) == -1)
				msg = NULL;
			print_json_str(msg != NULL ? msg : ctx.errs[0]);
			free(msg);
		}
		fputs(", \"items\": [", stdout);
		for (i = 0; i < ctx.nerrs; i++) {
			print_item(&ctx);
			fputs("{\"type\":\"error\",\"message\":", stdout);
			print_json_str(ctx.errs[i]);
			putchar('}');
		}
	}
	print_merge(&ctx, &set);
	if (json)
		fputs(ctx.nitems > 0 ? "\n]}\n" : "]}\n", stdout);
out:
	if (ctx.nerrs_all > 0)
		ret = EXIT_FAILED;
	for (i = 0; i < ctx.nerrs; i++)
		free(ctx.errs[i]);
	free(ctx.errs);
	free(scratch);
	tracedir_set_free(&set);
	free(dirs);
	return ret;
}
