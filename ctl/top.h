/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * tracectl top: the daemon's running totals (info counters) asked for
 * again every few seconds and turned into rates, filtered and sorted,
 * then drawn as lines of text.  top.c asks, computes and prints (--once,
 * -n, --json); top-tui.c draws the same lines with ncurses and reads
 * the keys.  tracectl-internal; main thread.
 */
#ifndef TRACED_CTL_TOP_H
#define TRACED_CTL_TOP_H

#include <stddef.h>
#include <stdint.h>

#include "ring.h"

struct json_t;

/* Sort columns, in the order the 's' key goes through them. */
enum top_sort {
	TOP_SORT_RATE,
	TOP_SORT_TOTAL,
	TOP_SORT_LOST,
	TOP_SORT_NAME,
	TOP_SORT_COUNT
};

/* Panes the screen shows: all, or one of them on the whole screen. */
enum top_pane {
	TOP_PANE_ALL,
	TOP_PANE_EVENTS,
	TOP_PANE_THREADS,
	TOP_PANE_SESSIONS
};

/* One line of a pane: an event name, a thread or a session. */
struct top_row {
	char		 name[160];	/* provider:event, or the comm */
	uint32_t	 session;	/* threads and sessions */
	int		 pid;		/* threads and sessions */
	int		 tid;		/* threads */
	uint64_t	 total;		/* events written so far */
	double		 rate;		/* events/s over the last interval */
	uint64_t	 lost;		/* threads and sessions */
	double		 lost_rate;
	unsigned	 fill;		/* threads: ring fill, percent */
	unsigned	 count;		/* events: sessions; sessions: threads */
};

struct top_rows {
	struct top_row	*v;		/* owned */
	size_t		 n;
};

/* A daemon thread (or all of one name), its share of a CPU. */
struct top_cpu {
	char		 name[32];
	unsigned	 n;		/* threads of that name */
	double		 percent;
};

/* What the screen shows: one interval's rates. */
struct top_view {
	int		 reachable;	/* the last ask was answered */
	char		 error[512];	/* why not */
	int		 rated;		/* two answers: rates are known */
	double		 interval;	/* s between the two */
	double		 cpu_percent;	/* the daemon's, of one CPU */
	double		 ns_per_event;	/* its CPU per event written; <0:
					   no event */
	double		 events_rate;	/* every session's, all users' */
	struct top_cpu	*cpu;		/* owned, by name, busiest first */
	size_t		 ncpu;
	uint64_t	 lost[TRACED_DROP_NCAUSES];	/* shown sessions' */
	double		 lost_rate[TRACED_DROP_NCAUSES];
	struct top_rows	 events, threads, sessions;
};

struct top_snap;

/* The whole state of a top: options, the last two answers, the view. */
struct top {
	const char	*rdir;		/* borrowed: -r */
	double		 delay;		/* s between asks */
	int		 count;		/* -n: snapshots to print, 0: screen */
	int		 json;
	enum top_sort	 sort;
	int		 reverse;	/* smallest first */
	char		 filter[256];	/* a glob; "" shows everything */
	enum top_pane	 pane;
	struct top_snap	*prev, *cur;	/* owned */
	struct top_view	 view;
};

/* Line attributes for the screen. */
#define TOP_LINE_PLAIN		0
#define TOP_LINE_TITLE		1	/* the first line */
#define TOP_LINE_HEADER		2	/* a pane's column names */
#define TOP_LINE_WARN		3	/* the daemon is not reachable */

/* Lines of text a render makes. */
struct top_lines {
	char		**text;		/* owned */
	int		*attr;		/* TOP_LINE_* */
	size_t		 n, cap;
};

/* top.c */
extern const char *const top_sort_names[TOP_SORT_COUNT];
int	top_ask(struct top *t);
void	top_compute(struct top *t);
void	top_render(const struct top *t, struct top_lines *l, int width,
	    int height);
void	top_lines_clear(struct top_lines *l);

/* top-tui.c */
int	top_tui(struct top *t);

#endif /* TRACED_CTL_TOP_H */
