/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * Paired events: a start event and an end event that the user names
 * (--pair 'job_start:job_done'), matched either by the value of one
 * field in the same process (--key id) or, without a key, as nested
 * calls on the same thread (the last open start is the one an end
 * closes).  stats times them; the Perfetto and Chrome exports draw them
 * as slices.
 *
 * The matcher keeps the starts not yet ended in a hash table bounded by
 * PAIR_PENDING_MAX: past it, new starts are counted as dropped, not
 * kept.  tracectl-internal; one matcher per thread.
 */
#ifndef TRACED_CTL_PAIR_H
#define TRACED_CTL_PAIR_H

#include <stddef.h>
#include <stdint.h>

struct reader_item;
struct reader_thread;
struct reader_session;

#define PAIR_RULES_MAX		16
#define PAIR_PENDING_MAX	(1u << 20)

/* One --pair rule. */
struct pair_rule {
	char		*start;		/* owned: "event" or "provider:event" */
	char		*end;		/* owned */
	const char	*key;		/* borrowed from argv; NULL: nested
					   on one thread */
	char		*label;		/* owned: "start:end" as given */
};

struct pair_rules {
	struct pair_rule v[PAIR_RULES_MAX];
	size_t		 n;
	const char	*key_all;	/* a --key before any --pair */
};

/* A pair closed by an end event. */
struct pair_match {
	size_t		 rule;		/* index in the rules */
	const struct reader_session *sess;
	const struct reader_thread *start_thread;
	const struct reader_thread *end_thread;
	int64_t		 start_ns;
	int64_t		 end_ns;
};

struct pairer;

/*
 * If argv[*i] is --pair A:B or --key FIELD, consume it (with its
 * argument) and return 1; 0 if it is neither; -1 with err set if it is
 * malformed.  A --key applies to the --pair before it, or to every
 * --pair when it comes first.  A:B is "start:end", each an event name,
 * or "provider:start:provider:end".
 */
int	pair_opt(struct pair_rules *r, int argc, char **argv, int *i,
	    char *err, size_t errlen);

/* The --pair and --key lines of a command's help. */
extern const char pair_opts_help[];

void	pair_rules_free(struct pair_rules *r);

/* A matcher for these rules (borrowed; they must outlive it). */
struct pairer	*pairer_new(const struct pair_rules *r);
void		 pairer_free(struct pairer *p);

/*
 * Feed one item.  Returns the number of pairs it closed (0 or 1) and
 * fills *m; -1 when out of memory.  An item may also open a pair (kept
 * until its end comes).
 */
int	pairer_feed(struct pairer *p, const struct reader_item *it,
	    struct pair_match *m);

/* Starts never ended, and starts not kept (table full), per rule. */
uint64_t pairer_unmatched(const struct pairer *p, size_t rule);
uint64_t pairer_dropped(const struct pairer *p, size_t rule);

/* Ends that had no start, per rule. */
uint64_t pairer_orphans(const struct pairer *p, size_t rule);

#endif /* TRACED_CTL_PAIR_H */
