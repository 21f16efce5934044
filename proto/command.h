/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * The control command table (proto/commands.def) and the pure functions
 * both ends of control.sock need to agree on: finding a command from
 * the words of a command line, checking its argument count, and
 * validating the arguments most commands take.  The daemon uses them on
 * what arrives in a CTL_REQUEST, tracectl before it connects, so that a
 * typo fails the same way with or without a daemon.
 *
 * Included by the daemon and by tracectl.  No I/O, no allocation; every
 * function is safe from any thread.
 */
#ifndef TRACED_PROTO_COMMAND_H
#define TRACED_PROTO_COMMAND_H

#include <stddef.h>
#include <stdint.h>

/* struct command_def.flags */
#define CMD_F_PRIVILEGED	0x1u	/* changes state: uid 0 or the
					   daemon's group only */

/* Longest glob pattern accepted, in bytes, without the NUL. */
#define COMMAND_PATTERN_MAX	255

/* Most words a command name has ("info trace-events": 2). */
#define COMMAND_WORDS_MAX	2

enum command_id {
#define CMD(id, name, usage, min, max, flags, help, complete)	\
	CMD_ID_##id,
#include "commands.def"
#undef CMD
	CMD_ID_COUNT
};

/* One line of commands.def.  The table is static and read-only. */
struct command_def {
	int		 id;		/* enum command_id */
	const char	*name;		/* "info trace": words, one space */
	const char	*usage;		/* arguments after the name, or "" */
	int		 args_min;	/* arguments after the name */
	int		 args_max;
	unsigned	 flags;		/* CMD_F_* */
	const char	*help;		/* one line, no final period */
	const char	*complete;	/* what the shells offer for the
					   arguments (commands.def) */
};

/*
 * The table, sorted by name, and its length in *n (which may be NULL).
 * Entry i has id i.
 */
const struct command_def *command_table(size_t *n);

/*
 * Find the command named by the first words of argv[0..argc): an exact
 * name first (the longest, so "info trace" is not a prefix of "info
 * trace-events"), otherwise the one command each of whose words starts
 * with the corresponding word of argv, preferring at each word a
 * command that matches it whole ("in trace" is "info trace").  Returns
 * the entry and stores in *consumed (if not NULL) how many words made
 * the name; the arguments are argv[*consumed..argc).  Returns NULL when
 * argc is 0, the name is unknown or ambiguous, with the reason in 'err'
 * (if not NULL; always NUL-terminated when errlen > 0).
 */
const struct command_def *command_lookup(int argc, char *const argv[],
	    int *consumed, char *err, size_t errlen);

/*
 * Check that 'nargs' arguments fit the command.  Returns 0, or -1 with
 * "usage: tracectl NAME USAGE" in 'err' (if not NULL).
 */
int	command_check_args(const struct command_def *cmd, int nargs,
	    char *err, size_t errlen);

/*
 * Check the words a command takes in fixed places (trace-event's
 * on|off|delete and its one-word form 'reset' or 'list', trace-file's
 * on|off|flush|set, the whole of trigger's: command_parse_trigger()),
 * so that tracectl refuses a typo before it looks for a daemon, as the
 * daemon would.  args[0..nargs) are the arguments after the name;
 * arity already checked.  Returns 0, or -1 with the reason in 'err'
 * (if not NULL).
 */
int	command_check_words(const struct command_def *cmd, int nargs,
	    char *const args[], char *err, size_t errlen);

/*
 * Write "NAME USAGE" (or "NAME" when it takes no arguments) into buf,
 * NUL-terminated when size > 0.  Returns the length it needed, like
 * snprintf.
 */
int	command_format_usage(const struct command_def *cmd, char *buf,
	    size_t size);

/* "on": 1, "off": 0, anything else (NULL included): -1. */
int	command_parse_onoff(const char *s);

/*
 * Check that 'pattern' is acceptable as an event glob: 1 to
 * COMMAND_PATTERN_MAX bytes, each printable ASCII (0x20 to 0x7e).
 * Returns 0, or -1 with the reason in 'err' (if not NULL).  Says
 * nothing about what it matches.
 */
int	command_pattern_valid(const char *pattern, char *err, size_t errlen);

/*
 * trigger's durations: --after at most COMMAND_TRIGGER_AFTER_MAX_NS (a
 * snapshot is of what the recorder still holds, minutes at most);
 * --every at least COMMAND_TRIGGER_EVERY_MIN_NS, since it is what bounds
 * the snapshots a client that emits the event in a loop can cause.
 */
#define COMMAND_TRIGGER_AFTER_MAX_NS	(600 * UINT64_C(1000000000))
#define COMMAND_TRIGGER_EVERY_MIN_NS	UINT64_C(1000000000)
#define COMMAND_TRIGGER_EVERY_MAX_NS	(86400 * UINT64_C(1000000000))
#define COMMAND_TRIGGER_EVERY_DEFAULT_NS (10 * UINT64_C(1000000000))

/* What a trigger command line says (command_parse_trigger()). */
enum command_trigger_op {
	COMMAND_TRIGGER_ADD,
	COMMAND_TRIGGER_LIST,
	COMMAND_TRIGGER_DELETE,
};

struct command_trigger {
	enum command_trigger_op op;
	const char	*glob;		/* borrowed from the arguments; NULL
					   for list */
	const char	*action;	/* add: "snapshot", the only one */
	uint64_t	 after_ns;	/* add: 0 unless --after */
	uint64_t	 every_ns;	/* add: the default unless --every */
};

/*
 * Parse the arguments after "trigger": "add GLOB snapshot [--after
 * DURATION] [--every DURATION]" (each option also as --opt=DURATION),
 * "list" or "delete GLOB", into *t.  The glob is checked as
 * command_pattern_valid() does, the durations as text_parse_duration()
 * and against the bounds above.  Returns 0,
 * or -1 with the reason and the fix in 'err' (if not NULL).
 */
int	command_parse_trigger(int nargs, char *const args[],
	    struct command_trigger *t, char *err, size_t errlen);

/*
 * Write duration ns into buf as text_parse_duration() reads it, in
 * the largest of s, ms and ns that keeps it whole ("10s", "300ms").
 * Returns buf.
 */
const char *command_format_duration(uint64_t ns, char *buf, size_t size);

#endif /* TRACED_PROTO_COMMAND_H */
