/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * The function-tracing commands:
 *
 *   trace-func PATTERN on|off   trace (or stop tracing) the functions
 *                               matching a glob, now and in every
 *                               process that starts later
 *   tracer NAME on|off          the same for tracers
 *   info trace-funcs [PATTERN]  instrumented functions of the running
 *                               processes: traced or not, and what the
 *                               latency tracer measured
 *   info tracers                tracers, their rules, each process's
 *                               counters
 *
 * The two that change rules answer once every process concerned has
 * carried out the change (its FUNC_STATS says so), or after 2 s, so
 * that when tracectl returns the sites are patched.
 *
 * A tracer rule may name a tracer no process has yet: tracectl(1) and
 * libtraced(3) promise that it applies to processes that start later,
 * and a program's own tracer is only known once it runs.  So a name no
 * tracer could have ('Graph', 'a:b', a dot) is refused, with the
 * closest known name; a name no known tracer has (libtraced's own, or
 * one a running process registered) is kept, and the reply says so,
 * with the closest name, as trace-event does for events.  Loop thread.
 */
#include <sys/mman.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "cmd.h"
#include "command.h"
#include "func.h"
#include "log.h"
#include "outdir.h"
#include "rule.h"
#include "session.h"
#include "text.h"

#define FUNC_WAIT_MS	2000

enum { FUNC_OP_SET, FUNC_OP_DELETE, FUNC_OP_RESET };

/* A rule change waiting for the processes it went to. */
struct func_wait {
	int		 kind;		/* FUNC_RULE_* */
	int		 on;
	int		 op;		/* FUNC_OP_* */
	int		 removed;	/* reset: how many rules */
	char		 pattern[COMMAND_PATTERN_MAX + 1];
	unsigned	 nmatch;	/* functions (or tracers) matching */
	unsigned	 nprocs;	/* processes having some */
	unsigned	 nfunc;		/* processes tracing functions */
	int		 unknown;	/* tracer: matches no known one */
	char		 hint[TRACED_TRACER_NAME_SIZE + 32]; /* unknown: " (did
					   you mean 'x'?)" or "" */
	size_t		 n;
	struct {
		uint32_t	 session;
		uint32_t	 gen;
	}		 w[];
};

static int
func_wait_cb(struct reply *r, void *arg, int timed_out)
{
	struct func_wait *w = arg;
	uint64_t patched = 0, refused = 0;
	unsigned late = 0;
	char extra[256];
	size_t i;

	if (r == NULL) {
		free(w);
		return 1;
	}
	for (i = 0; i < w->n; i++) {
		struct session *s = session_by_id(w->w[i].session);

		if (s == NULL || s->fn == NULL || s->closing)
			continue;
		if (s->fn->acked < w->w[i].gen) {
			if (!timed_out)
				return 0;
			late++;
		}
		patched += s->fn->stats.patched;
		refused += s->fn->stats.refused;
	}
	extra[0] = '\0';
	if (late > 0)
		snprintf(extra, sizeof(extra), " (%u process%s did not confirm "
		    "within %d s)", late, late == 1 ? "" : "es",
		    FUNC_WAIT_MS / 1000);
	else if (outdir_paused() && w->on)
		snprintf(extra, sizeof(extra), " (trace-file is off: nothing "
		    "is traced until 'trace-file on')");
	if (w->op == FUNC_OP_RESET)
		reply_message(r, "%d %s rule%s removed: %s%s", w->removed,
		    w->kind == FUNC_RULE_TRACER ? "tracer" : "trace-func",
		    w->removed == 1 ? "" : "s", w->kind == FUNC_RULE_TRACER ?
		    "each tracer is on or off as its process says" :
		    "no function is traced", extra);
	else if (w->op == FUNC_OP_DELETE)
		reply_message(r, "rule '%s' removed: the %u matching %s%s in "
		    "%u running process%s follow the other rules again%s",
		    w->pattern, w->nmatch, w->kind == FUNC_RULE_TRACER ?
		    "tracer" : "function", w->nmatch == 1 ? "" : "s",
		    w->nprocs, w->nprocs == 1 ? "" : "es", extra);
	else if (w->kind == FUNC_RULE_TRACER && w->unknown)
		reply_message(r, "tracer '%s' %s: no tracer of libtraced "
		    "(graph, latency) nor of the %u running process%s that "
		    "trace%s functions matches it%s; the rule applies to any "
		    "process that registers one later ('tracer %s delete' "
		    "removes it)%s", w->pattern, w->on ? "on" : "off",
		    w->nfunc, w->nfunc == 1 ? "" : "es",
		    w->nfunc == 1 ? "s" : "", w->hint, w->pattern, extra);
	else if (w->kind == FUNC_RULE_TRACER)
		reply_message(r, "tracer '%s' %s: in %u running process%s and "
		    "in every process that starts later%s", w->pattern,
		    w->on ? "on" : "off", w->nprocs, w->nprocs == 1 ? "" : "es",
		    extra);
	else if (w->nmatch == 0)
		reply_message(r, "'%s' %s: no running process has a function "
		    "matching it; the rule applies to every process that "
		    "starts later", w->pattern, w->on ? "on" : "off");
	else
		reply_message(r, "'%s' %s: %u function%s in %u running "
		    "process%s and in every process that starts later; %"
		    PRIu64 " site%s patched now%s%s%s", w->pattern,
		    w->on ? "on" : "off", w->nmatch, w->nmatch == 1 ? "" : "s",
		    w->nprocs, w->nprocs == 1 ? "" : "es", patched,
		    patched == 1 ? "" : "s", refused ? ", " : "",
		    refused ? "some refused (TRACED_DEBUG=1 in the program's "
		    "environment says why)" : "", extra);
	free(w);
	return 1;
}

/* The rules of a kind, as 'trace-func list' and 'info trace-rules'
 * show them. */
void
cmd_func_rules_list(struct reply *r, int kind)
{
	const struct rule *rules;
	size_t i, n;

	rules = func_rules(kind, &n);
	for (i = 0; i < n; i++)
		if (reply_json(r))
			reply_item(r, json_pack("{s:s, s:I, s:o, s:s}", "kind",
			    kind == FUNC_RULE_TRACER ? "tracer" : "function",
			    "order", (json_int_t)i + 1, "pattern",
			    jstr(rules[i].pattern), "state", rules[i].on ?
			    "on" : "off"));
		else
			reply_line(r, "%3zu  %-3s  %s%s", i + 1, rules[i].on ?
			    "on" : "off", kind == FUNC_RULE_TRACER ?
			    "tracer " : "", rules[i].pattern);
}

/* The tracers every libtraced registers (ft_tracers_init() in
 * client-lib/functrace/tracer.c): known with no process running. */
static const char *const tracer_builtins[] = { "graph", "latency" };

/*
 * Could the glob 'pattern' match a tracer's name, 1 to
 * TRACED_TRACER_NAME_SIZE - 1 characters from [a-z0-9_-]?  Not with a
 * ':' (a tracer has no scope), nor any other character, nor, without a
 * wildcard, when it is longer than a name.
 */
static int
tracer_name_possible(const char *pattern)
{
	const char	*p;
	int		 glob = 0;

	for (p = pattern; *p != '\0'; p++) {
		if (strchr("*?[]!^\\", *p) != NULL)
			glob = 1;
		else if (!((*p >= 'a' && *p <= 'z') ||
		    (*p >= '0' && *p <= '9') || *p == '_' || *p == '-'))
			return 0;
	}
	return glob || (size_t)(p - pattern) < TRACED_TRACER_NAME_SIZE;
}

/* Keep 'name' in best/bestd if it is closer to 'pattern' (n bytes). */
static void
tracer_closer(const char *pattern, size_t n, const char *name,
    size_t max, char *best, size_t *bestd)
{
	size_t	d = text_distance(pattern, n, name, max);

	if (d < *bestd) {
		*bestd = d;
		snprintf(best, TRACED_TRACER_NAME_SIZE, "%s", name);
	}
}

/*
 * Does 'pattern' match a known tracer: libtraced's own, or one that a
 * running process registered?  Whether or not, 'hint' gets " (did you
 * mean 'NAME'?)" with the closest known name that is a typo away (for
 * a pattern without wildcards), or "".
 */
static int
tracer_known(const char *pattern, char *hint, size_t size)
{
	char		 best[TRACED_TRACER_NAME_SIZE] = "";
	size_t		 n = strlen(pattern), bestd = 99, max, i;
	struct session	*s;
	int		 known = 0;

	max = n < 6 ? 1 : n < 12 ? 2 : 3;
	for (i = 0; i < sizeof(tracer_builtins) / sizeof(tracer_builtins[0]);
	    i++) {
		known |= rule_match(pattern, NULL, tracer_builtins[i]);
		tracer_closer(pattern, n, tracer_builtins[i], max, best,
		    &bestd);
	}
	TAILQ_FOREACH(s, &sessions, entry)
		for (i = 0; s->fn != NULL && i < TRACED_TRACERS_MAX; i++) {
			if (!s->fn->tracers[i].present)
				continue;
			known |= rule_match(pattern, NULL,
			    s->fn->tracers[i].name);
			tracer_closer(pattern, n, s->fn->tracers[i].name, max,
			    best, &bestd);
		}
	hint[0] = '\0';
	if (!known && bestd <= max && strpbrk(pattern, "*?[") == NULL)
		snprintf(hint, size, " (did you mean '%s'?)", best);
	return known;
}

/*
 * trace-func or tracer: add a rule (on, off), delete one, list or
 * reset them; answer once the processes carried the change out.
 */
static int
func_rule_cmd(struct reply *r, int kind, int argc, char **argv)
{
	const char *what = kind == FUNC_RULE_FUNC ? "trace-func" : "tracer";
	struct func_wait *w;
	struct session *s;
	char err[256];
	int on = 0, op = FUNC_OP_SET, rc = 0;
	size_t n = 0, nr;

	if (argc == 1 && strcmp(argv[0], "list") == 0) {
		cmd_func_rules_list(r, kind);
		(void)func_rules(kind, &nr);
		if (nr == 0)
			reply_message(r, "no %s rule", what);
		else
			reply_message(r, "the last rule that matches decides; "
			    "'%s PATTERN delete' removes one, '%s reset' all",
			    what, what);
		return TRACED_CTL_OK;
	}
	if (argc == 1)
		op = FUNC_OP_RESET;
	else {
		if (command_pattern_valid(argv[0], err, sizeof(err)) == -1) {
			reply_error(r, "%s", err);
			return TRACED_CTL_USAGE;
		}
		if (strcmp(argv[1], "delete") == 0)
			op = FUNC_OP_DELETE;
		else if ((on = command_parse_onoff(argv[1])) == -1) {
			reply_error(r, "expected 'on', 'off' or 'delete', not "
			    "'%s'", argv[1]);
			return TRACED_CTL_USAGE;
		}
		if (kind == FUNC_RULE_TRACER && op == FUNC_OP_SET &&
		    !tracer_name_possible(argv[0])) {
			(void)tracer_known(argv[0], err, sizeof(err));
			reply_error(r, "tracer '%s': no tracer can match it%s: "
			    "a tracer's name is 1 to %d characters from a-z, "
			    "0-9, '_' and '-' (see 'tracectl info tracers')",
			    argv[0], err, TRACED_TRACER_NAME_SIZE - 1);
			return TRACED_CTL_USAGE;
		}
	}
	TAILQ_FOREACH(s, &sessions, entry)
		n++;
	w = calloc(1, sizeof(*w) + n * sizeof(w->w[0]));
	if (w == NULL) {
		reply_error(r, "out of memory");
		return TRACED_CTL_ERROR;
	}
	w->kind = kind;
	w->on = on;
	w->op = op;
	if (kind == FUNC_RULE_TRACER && op == FUNC_OP_SET)
		w->unknown = !tracer_known(argv[0], w->hint,
		    sizeof(w->hint));
	snprintf(w->pattern, sizeof(w->pattern), "%s", op == FUNC_OP_RESET ?
	    "" : argv[0]);
	if (op == FUNC_OP_SET)
		rc = func_rule_add(kind, argv[0], on);
	else if (op == FUNC_OP_DELETE) {
		if ((rc = func_rule_delete(kind, argv[0])) == 0) {
			free(w);
			reply_error(r, "no %s rule '%s' (see 'tracectl %s "
			    "list')", what, argv[0], what);
			return TRACED_CTL_ERROR;
		}
	} else if ((rc = func_rules_reset(kind)) >= 0)
		w->removed = rc;
	if (rc == -1)
		log_warnx("%s rules changed, but could not be saved: a "
		    "restarted daemon will have them as they were", what);
	TAILQ_FOREACH(s, &sessions, entry) {
		const struct sfunc *fn = s->fn;
		unsigned before = w->nmatch;
		uint32_t i;
		size_t k;

		if (fn == NULL || s->closing)
			continue;
		w->nfunc++;
		if (op == FUNC_OP_RESET)
			;	/* nothing matches: every one changes back */
		else if (kind == FUNC_RULE_FUNC) {
			for (i = 0; i < fn->nmods; i++)
				for (k = 0; k < fn->mods[i]->tab.n; k++)
					if (func_name_match(argv[0],
					    fn->mods[i],
					    fn->mods[i]->tab.e[k].name))
						w->nmatch++;
		} else {
			for (i = 0; i < TRACED_TRACERS_MAX; i++)
				if (fn->tracers[i].present &&
				    rule_match(argv[0], NULL,
				    fn->tracers[i].name))
					w->nmatch++;
		}
		if (w->nmatch != before)
			w->nprocs++;
		if (fn->acked < fn->gen && w->n < n) {
			w->w[w->n].session = s->id;
			w->w[w->n].gen = fn->gen;
			w->n++;
		}
	}
	reply_wait(r, func_wait_cb, w, FUNC_WAIT_MS);
	return TRACED_CTL_OK;
}

int
cmd_trace_func_exec(struct reply *r, int argc, char **argv)
{
	return func_rule_cmd(r, FUNC_RULE_FUNC, argc, argv);
}

int
cmd_tracer_exec(struct reply *r, int argc, char **argv)
{
	return func_rule_cmd(r, FUNC_RULE_TRACER, argc, argv);
}

/* ---- info trace-funcs -------------------------------------------------- */

/* One function of one process. */
struct func_row {
	const char	*module;	/* borrowed */
	const char	*name;		/* borrowed */
	const struct session *s;
	const struct smodule *m;
	const unsigned char *made;	/* borrowed: m's stats pages made */
	size_t		 k;
};

/*
 * Which pages of md's statistics its process has made (written), from
 * mincore(): a vector of one byte a page, owned by the caller, or NULL.
 * The statistics are read through the daemon's mapping of the process's
 * memfd, and reading a page the process never wrote makes it, in the
 * daemon's memory: a hostile process's million functions of untouched
 * statistics made 'info trace-funcs' cost the daemon 282 MB.  A page
 * not made (or swapped out) reads as zeros instead.
 */
static unsigned char *
func_stats_made(const struct smodule *md)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE), n;
	unsigned char *vec;

	if (md->state_size <= md->stats_off)
		return NULL;
	n = (md->state_size + pg - 1) / pg;
	if ((vec = calloc(n, 1)) == NULL)
		return NULL;
	if (mincore(md->state, md->state_size, vec) == -1) {
		free(vec);
		return NULL;
	}
	return vec;
}

/* The statistics of row x's function, or NULL (all zero). */
static const struct traced_func_stat *
func_row_stat(const struct func_row *x)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	size_t off = x->m->stats_off + x->k * sizeof(struct traced_func_stat);
	size_t last = off + sizeof(struct traced_func_stat) - 1;

	if (x->made == NULL || !(x->made[off / pg] & 1) ||
	    !(x->made[last / pg] & 1))
		return NULL;
	return (const struct traced_func_stat *)(const void *)(x->m->state +
	    off);
}

static int
func_row_cmp(const void *a, const void *b)
{
	const struct func_row *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c != 0 ? c : strcmp(x->module, y->module);
}

/* A duration for people: 812ns, 4.1us, 12.0ms, 3.20s. */
static const char *
fmt_ns(char *buf, size_t size, uint64_t ns)
{
	if (ns < 1000)
		snprintf(buf, size, "%" PRIu64 "ns", ns);
	else if (ns < 1000000)
		snprintf(buf, size, "%.1fus", (double)ns / 1e3);
	else if (ns < 1000000000)
		snprintf(buf, size, "%.1fms", (double)ns / 1e6);
	else
		snprintf(buf, size, "%.2fs", (double)ns / 1e9);
	return buf;
}

/* What the rows [a, b) of one function add up to. */
struct func_sum {
	int		 on;
	unsigned	 procs, patched, refused;
	uint64_t	 calls, sum_ns, max_ns;
	uint64_t	 hist[TRACED_FUNC_BUCKETS];	/* by log2 of ns */
	char		 where[512];
};

static void
func_sum(const struct func_row *a, const struct func_row *b,
    struct func_sum *fs)
{
	const struct func_row *x;
	size_t o = 0;
	int i;

	memset(fs, 0, sizeof(*fs));
	for (x = a; x < b; x++) {
		static const struct traced_func_stat zero;
		const struct traced_func_stat *st = func_row_stat(x);
		uint32_t status;
		uint64_t calls, mx;

		if (st == NULL)
			st = &zero;
		status = __atomic_load_n(&st->status, __ATOMIC_RELAXED);
		calls = __atomic_load_n(&st->calls, __ATOMIC_RELAXED);
		fs->procs++;
		if (__atomic_load_n(&x->m->state[x->k], __ATOMIC_RELAXED))
			fs->on = 1;
		fs->patched += (status & TRACED_FUNC_PATCHED) != 0;
		fs->refused += (status & TRACED_FUNC_REFUSED) != 0;
		fs->calls += calls;
		fs->sum_ns += func_ticks_ns(x->s, __atomic_load_n(&st->sum,
		    __ATOMIC_RELAXED));
		mx = func_ticks_ns(x->s, __atomic_load_n(&st->max,
		    __ATOMIC_RELAXED));
		if (mx > fs->max_ns)
			fs->max_ns = mx;
		for (i = 0; i < TRACED_FUNC_BUCKETS; i++) {
			uint64_t c = __atomic_load_n(&st->buckets[i],
			    __ATOMIC_RELAXED);
			uint64_t lo = func_bucket_ns(x->s, i);
			int b2 = lo < 2 ? 0 : 63 - __builtin_clzll(lo);

			fs->hist[b2] += c;
		}
		if (o + 40 < sizeof(fs->where))
			o += (size_t)snprintf(fs->where + o,
			    sizeof(fs->where) - o, "%s%s[%d]", o ? " " : "",
			    x->s->comm, (int)x->s->pid);
	}
}

/* The upper bound (ns) of the bucket holding fraction p of the calls. */
static uint64_t
func_pct(const struct func_sum *fs, double p)
{
	uint64_t total = 0, acc = 0, want;
	int i;

	for (i = 0; i < TRACED_FUNC_BUCKETS; i++)
		total += fs->hist[i];
	if (total == 0)
		return 0;
	want = (uint64_t)(p * (double)total);
	if (want == 0)
		want = 1;
	for (i = 0; i < TRACED_FUNC_BUCKETS - 1; i++) {
		acc += fs->hist[i];
		if (acc >= want)
			break;
	}
	return i >= 63 ? UINT64_MAX : (uint64_t)1 << (i + 1);
}

int
cmd_info_trace_funcs_exec(struct reply *r, int argc, char **argv)
{
	struct func_row *rows = NULL, *nr;
	size_t n = 0, cap = 0, i, j, nmade = 0;
	unsigned char **made = NULL, **nm;
	struct session *s;
	unsigned nfunc = 0;
	char t1[32], t2[32], t3[32], t4[32], full[1200];
	struct func_sum fs;
	int rc = TRACED_CTL_OK;

	TAILQ_FOREACH(s, &sessions, entry) {
		const struct sfunc *fn = s->fn;
		uint32_t m;
		size_t k;

		if (fn == NULL)
			continue;
		for (m = 0; m < fn->nmods; m++) {
			const struct smodule *md = fn->mods[m];
			unsigned char *mv = NULL;

			if (md->tab.n > 0 && md->state != NULL) {
				nm = reallocarray(made, nmade + 1,
				    sizeof(*made));
				if (nm == NULL)
					goto oom;
				made = nm;
				mv = made[nmade++] = func_stats_made(md);
			}
			for (k = 0; k < md->tab.n; k++) {
				if (argc > 0 && !func_name_match(argv[0], md,
				    md->tab.e[k].name))
					continue;
				if (n == cap) {
					cap = cap ? cap * 2 : 256;
					nr = reallocarray(rows, cap,
					    sizeof(*rows));
					if (nr == NULL)
						goto oom;
					rows = nr;
				}
				rows[n].module = md->base_name;
				rows[n].name = md->tab.e[k].name;
				rows[n].s = s;
				rows[n].m = md;
				rows[n].made = mv;
				rows[n].k = k;
				n++;
			}
		}
	}
	if (n > 0)
		qsort(rows, n, sizeof(*rows), func_row_cmp);
	if (!reply_json(r) && n > 0)
		reply_line(r, "%-36s %-5s %10s %8s %8s %8s %8s  %s",
		    "FUNCTION", "STATE", "CALLS", "AVG", "P50<", "P99<", "MAX",
		    "PROCESSES");
	for (i = 0; i < n && !reply_cut(r); i = j) {
		for (j = i + 1; j < n && strcmp(rows[j].name, rows[i].name) ==
		    0 && strcmp(rows[j].module, rows[i].module) == 0; j++)
			;
		func_sum(&rows[i], &rows[j], &fs);
		nfunc++;
		snprintf(full, sizeof(full), "%s:%s", rows[i].module,
		    rows[i].name);
		if (reply_json(r)) {
			reply_item(r, json_pack("{s:o, s:o, s:s, s:I, s:I, s:I, "
			    "s:o, s:o, s:o, s:o, s:o, s:o}",
			    "name", jstr(rows[i].name),
			    "module", jstr(rows[i].module),
			    "state", fs.on ? "on" : "off",
			    "patched", (json_int_t)fs.patched,
			    "refused", (json_int_t)fs.refused,
			    "processes", (json_int_t)fs.procs,
			    "calls", jnum(fs.calls),
			    "avg_ns", jnum(fs.calls ? fs.sum_ns / fs.calls : 0),
			    "p50_ns_below", jnum(func_pct(&fs, 0.5)),
			    "p99_ns_below", jnum(func_pct(&fs, 0.99)),
			    "max_ns", jnum(fs.max_ns),
			    "where", jstr(fs.where)));
			continue;
		}
		if (fs.calls == 0)
			reply_line(r, "%-36s %-5s %10s %8s %8s %8s %8s  %s",
			    full, fs.on ? (fs.refused ? "on!" : "on") : "off",
			    "-", "-", "-", "-", "-", fs.where);
		else
			reply_line(r, "%-36s %-5s %10" PRIu64 " %8s %8s %8s "
			    "%8s  %s", full, fs.on ? (fs.refused ? "on!" :
			    "on") : "off", fs.calls, fmt_ns(t1, sizeof(t1),
			    fs.sum_ns / fs.calls), fmt_ns(t2, sizeof(t2),
			    func_pct(&fs, 0.5)), fmt_ns(t3, sizeof(t3),
			    func_pct(&fs, 0.99)), fmt_ns(t4, sizeof(t4),
			    fs.max_ns), fs.where);
	}
	if (nfunc == 0)
		reply_message(r, argc > 0 ? "no running process has an "
		    "instrumented function matching '%s'" : "no running "
		    "process has instrumented functions%s (build with the "
		    "flags of 'tracegen --cflags-func')", argc > 0 ? argv[0] :
		    "");
	else if (!reply_json(r))
		reply_message(r, "%u function%s; 'on!': refused in some "
		    "process (TRACED_DEBUG=1 says why); durations: 'tracer "
		    "latency on'",
		    nfunc, nfunc == 1 ? "" : "s");
	goto out;
oom:
	reply_error(r, "out of memory");
	rc = TRACED_CTL_ERROR;
out:
	free(rows);
	while (nmade > 0)
		free(made[--nmade]);
	free(made);
	return rc;
}

/* ---- info tracers ----------------------------------------------------- */

int
cmd_info_tracers_exec(struct reply *r, int argc, char **argv)
{
	char names[64][TRACED_TRACER_NAME_SIZE], where[1024], rule[8];
	size_t nnames = 0, i, nr, o;
	const struct rule *rl = func_rules(FUNC_RULE_TRACER, &nr);
	struct session *s;
	int k;

	(void)argc;
	(void)argv;
	/* Every tracer some process has, and every tracer rule. */
	TAILQ_FOREACH(s, &sessions, entry)
		for (k = 0; s->fn != NULL && k < TRACED_TRACERS_MAX; k++) {
			if (!s->fn->tracers[k].present)
				continue;
			for (i = 0; i < nnames; i++)
				if (strcmp(names[i], s->fn->tracers[k].name) ==
				    0)
					break;
			if (i == nnames && nnames < 64)
				snprintf(names[nnames++], sizeof(names[0]),
				    "%s", s->fn->tracers[k].name);
		}
	if (!reply_json(r))
		reply_line(r, "%-20s %-5s %s", "TRACER", "RULE", "PROCESSES");
	for (i = 0; i < nnames; i++) {
		size_t q;

		snprintf(rule, sizeof(rule), "-");
		for (q = 0; q < nr; q++)
			if (rule_match(rl[q].pattern, NULL, names[i]))
				snprintf(rule, sizeof(rule), "%s",
				    rl[q].on ? "on" : "off");
		o = 0;
		where[0] = '\0';
		TAILQ_FOREACH(s, &sessions, entry)
			for (k = 0; s->fn != NULL && k < TRACED_TRACERS_MAX;
			    k++) {
				const struct stracer *t = &s->fn->tracers[k];

				if (!t->present || strcmp(t->name, names[i]) ||
				    o + 48 >= sizeof(where))
					continue;
				o += (size_t)snprintf(where + o,
				    sizeof(where) - o, "%s%s[%d] %s",
				    o ? ", " : "", s->comm, (int)s->pid,
				    t->flags & TRACED_TRACER_ON ? "on" : "off");
			}
		if (reply_json(r))
			reply_item(r, json_pack("{s:s, s:o, s:s, s:o}", "type",
			    "tracer", "name", jstr(names[i]), "rule", rule,
			    "where", jstr(where)));
		else
			reply_line(r, "%-20s %-5s %s", names[i], rule, where);
	}
	/* Rules for tracers no process has. */
	for (i = 0; i < nr; i++) {
		size_t q;

		for (q = 0; q < nnames; q++)
			if (rule_match(rl[i].pattern, NULL, names[q]))
				break;
		if (q < nnames)
			continue;
		if (reply_json(r))
			reply_item(r, json_pack("{s:s, s:o, s:s, s:s}", "type",
			    "tracer", "name", jstr(rl[i].pattern), "rule",
			    rl[i].on ? "on" : "off", "where", ""));
		else
			reply_line(r, "%-20s %-5s (no running process has it)",
			    rl[i].pattern, rl[i].on ? "on" : "off");
	}
	/* What each process counted. */
	TAILQ_FOREACH(s, &sessions, entry) {
		const struct sfunc *fn = s->fn;

		if (fn == NULL || !fn->stats_seen)
			continue;
		if (reply_json(r))
			reply_item(r, json_pack("{s:s, s:I, s:I, s:o, s:o, s:o, "
			    "s:o, s:o, s:o}", "type", "process",
			    "session", (json_int_t)s->id, "pid", (json_int_t)s->pid,
			    "comm", jstr(s->comm), "functions", jnum(fn->funcs),
			    "patched", jnum(fn->stats.patched),
			    "refused", jnum(fn->stats.refused),
			    "skipped_depth", jnum(fn->stats.skipped_depth),
			    "skipped_nested", jnum(fn->stats.skipped_nested)));
		else
			reply_line(r, "%s[%d]: %" PRIu64 " instrumented "
			    "functions, %" PRIu64 " sites patched, %" PRIu64
			    " refused; calls not traced: %" PRIu64 " deeper "
			    "than 1024, %" PRIu64 " inside a tracer", s->comm,
			    (int)s->pid, fn->funcs, fn->stats.patched,
			    fn->stats.refused, fn->stats.skipped_depth,
			    fn->stats.skipped_nested);
	}
	if (nnames == 0 && nr == 0)
		reply_message(r, "no running process traces functions, and "
		    "there is no tracer rule");
	return TRACED_CTL_OK;
}
