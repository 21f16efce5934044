/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * Function tracing in the daemon (doc/DESIGN.md section 11): what a
 * session knows of its process's loaded objects, instrumented
 * functions and tracers (func.c), and the trace-func and tracer rules
 * (the commands that show and change them are cmd-func.c's, in cmd.h).
 * Daemon-internal; loop thread.
 */
#ifndef TRACED_DAEMON_FUNC_H
#define TRACED_DAEMON_FUNC_H

#include <stddef.h>
#include <stdint.h>

#include "functab.h"
#include "wire.h"

struct session;
struct wire_msg;

#define FUNC_RULE_FUNC		0	/* trace-func PATTERN on|off */
#define FUNC_RULE_TRACER	1	/* tracer NAME on|off */

/* One loaded object of a process (MODULE), with its functions (FUNCS). */
struct smodule {
	uint32_t	 index;
	uint32_t	 flags;		/* TRACED_MODULE_* */
	uint64_t	 base, start, end;
	uint8_t		 build_id[TRACED_BUILD_ID_MAX];
	uint32_t	 build_id_len;
	char		*path;		/* owned */
	const char	*base_name;	/* into path */
	int		 has_funcs;	/* FUNCS taken */
	struct functab	 tab;		/* owned; empty without FUNCS */
	uint8_t		*state;		/* our RW mapping of its state memfd:
					   tab.n bytes, then the stats */
	size_t		 state_size;
	uint32_t	 stats_off;
};

/* A tracer of a process, as its TRACER messages said. */
struct stracer {
	char		 name[TRACED_TRACER_NAME_SIZE];
	uint32_t	 flags;		/* TRACED_TRACER_* */
	int		 present;
};

/* A session's function tracing; session->fn. */
struct sfunc {
	struct smodule	**mods;		/* owned, by index order */
	uint32_t	 nmods;
	uint32_t	 next_mod;	/* least index of the next MODULE */
	uint32_t	 mods_refused;	/* MODULEs not kept: modules-per-uid */
	struct stracer	 tracers[TRACED_TRACERS_MAX];
	uint32_t	 gen;		/* last FUNC_APPLY sent */
	uint32_t	 funcs_done;	/* FUNCS carried out or refused */
	uint32_t	 acked;		/* last one the process carried out */
	uint32_t	 sent_set, sent_on; /* tracer rules it was sent */
	int		 stats_seen;	/* a FUNC_STATS came */
	struct traced_msg_func_stats stats; /* the last one */
	uint64_t	 funcs;		/* functions, all modules */
	uint32_t	 rotations;	/* trace-file set: module files again */
};

/* func.c */
int	func_msg(struct session *s, const struct wire_msg *m, const int *fds);
void	func_session_free(struct session *s);
void	func_session_rotate(struct session *s);
int	func_session_apply(struct session *s, int force);
void	func_apply_all(void);
int	func_rule_add(int kind, const char *pattern, int on);
int	func_rule_delete(int kind, const char *pattern);
int	func_rules_reset(int kind);
void	func_rules_clear(int kind);
int	func_rule_on(int kind, const char *name, const char *full, int *on);
const struct rule *func_rules(int kind, size_t *n);
int	func_name_match(const char *pattern, const struct smodule *m,
	    const char *name);
uint64_t func_bucket_ns(const struct session *s, int bucket);
uint64_t func_ticks_ns(const struct session *s, uint64_t ticks);

#endif /* TRACED_DAEMON_FUNC_H */
