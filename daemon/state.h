/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * Event state (state.c): the daemon's enable rules, which state.c
 * owns, and a process's own rules as its session keeps them.
 * Daemon-internal; loop thread.
 */
#ifndef TRACED_DAEMON_STATE_H
#define TRACED_DAEMON_STATE_H

#include <stddef.h>
#include <stdint.h>

#include "rule.h"

struct ptable;
struct session;
struct sprov;
struct tevents_event;
struct traced_msg_rules;

/* Where an event's state comes from, for info trace-events. */
enum state_src {
	STATE_SRC_DEFAULT,		/* no rule: on */
	STATE_SRC_DISABLE,		/* no rule: 'disable' in trace-events */
	STATE_SRC_RULE,			/* a rule of the daemon */
	STATE_SRC_PROCESS,		/* a rule of the process */
};

struct state_why {
	enum state_src	 src;
	const char	*pattern;	/* borrowed: the rule's, or NULL */
	unsigned	 flags;		/* STATE_SRC_PROCESS: TRACED_RULE_* */
};

void	state_init(struct rule *rules, size_t n);
void	state_fini(void);
const struct rule *state_rules(size_t *n);
uint64_t state_rules_gen(void);
int	state_event_on(const char *provider, const struct tevents_event *ev);
int	state_session_event(const struct session *s, const struct sprov *p,
	    uint32_t k, struct state_why *why);
const struct ptable *state_ptable(const struct session *s, uint32_t index);
int	state_ptable_on(const struct session *s, const struct ptable *t,
	    uint32_t k);
int	state_session_rules(struct session *s, const struct traced_msg_rules *m,
	    int fd);
int	state_session_provider_ok(const struct session *s, uint32_t index,
	    uint32_t nevents);
void	state_session_free(struct session *s);
int	state_rule_add(const char *pattern, int on);
int	state_rule_delete(const char *pattern);
int	state_rules_reset(void);

#endif /* TRACED_DAEMON_STATE_H */
