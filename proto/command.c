/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * The control command table, expanded from commands.def, and lookup
 * over it.  A command line is a list of words; a command name is one or
 * two of them ("trace-file", "info trace"), so lookup works word by
 * word: an exact name wins (the longest one), then a name each of whose
 * words the user abbreviated, as long as only one fits.  Where several
 * fit, a command whose word matches whole beats one it is only a prefix
 * of, word by word, which is what makes "info trace" an exact command
 * rather than an ambiguous prefix of "info trace-events".
 *
 * The words come from a user (tracectl) or from a peer (the daemon
 * reads them off the wire), so everything quoted back in a message is
 * cut short.  Pure: no I/O, no allocation, no global state.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "command.h"
#include "text.h"

static const struct command_def command_defs[] = {
#define CMD(id, name, usage, min, max, flags, help, complete)		\
	{ CMD_ID_##id, name, usage, min, max, flags, help, complete },
#include "commands.def"
#undef CMD
};

_Static_assert(sizeof(command_defs) / sizeof(command_defs[0]) ==
    CMD_ID_COUNT, "one entry per id");

/* How much of a user's word a message quotes. */
#define QUOTE_MAX	64

/* How well a word of a command line matches a word of a name. */
enum word_match {
	WORD_NONE,
	WORD_PREFIX,
	WORD_EXACT,
};

/* Append 's' to the NUL-terminated string in buf, truncating. */
static void
append(char *buf, size_t size, const char *s)
{
	size_t	len = strlen(buf);

	if (len + 1 < size)
		snprintf(buf + len, size - len, "%s", s);
}

/* Append argv[0..n) to buf, space separated, each cut to QUOTE_MAX. */
static void
append_words(char *buf, size_t size, int n, char *const argv[])
{
	char	word[QUOTE_MAX + 1];
	int	i;

	for (i = 0; i < n; i++) {
		if (i > 0)
			append(buf, size, " ");
		snprintf(word, sizeof(word), "%s", argv[i]);
		append(buf, size, word);
	}
}

static int
name_nwords(const char *name)
{
	int	n = 1;

	for (; *name != '\0'; name++)
		if (*name == ' ')
			n++;
	return n;
}

/* Compare 'w' with word i of 'name'. */
static enum word_match
word_match(const char *name, int i, const char *w)
{
	const char	*end;
	size_t		 len, wlen;

	while (i-- > 0) {
		name = strchr(name, ' ');
		if (name == NULL)
			return WORD_NONE;
		name++;
	}
	end = strchr(name, ' ');
	len = end != NULL ? (size_t)(end - name) : strlen(name);
	wlen = strlen(w);
	if (wlen == 0 || wlen > len || strncmp(name, w, wlen) != 0)
		return WORD_NONE;
	return wlen == len ? WORD_EXACT : WORD_PREFIX;
}

/* Do argv[0..n) match the first n words of 'name' (whole or prefix)? */
static int
words_match(const char *name, int n, char *const argv[], int exact)
{
	enum word_match	m;
	int		i;

	for (i = 0; i < n; i++) {
		m = word_match(name, i, argv[i]);
		if (m == WORD_NONE || (exact && m != WORD_EXACT))
			return 0;
	}
	return 1;
}

/*
 * " (did you mean 'NAME'?)" for the command closest to what was said
 * (a typo of a few letters), or "".
 */
static void
suggest(const char *said, char *buf, size_t size)
{
	const struct command_def *best = NULL;
	unsigned dist, bestd = 99;
	size_t i;

	for (i = 0; i < CMD_ID_COUNT; i++) {
		dist = (unsigned)text_distance(said, strlen(said),
		    command_defs[i].name, 98);
		if (dist < bestd) {
			bestd = dist;
			best = &command_defs[i];
		}
	}
	buf[0] = '\0';
	if (best != NULL && bestd <= 2 + strlen(said) / 8)
		text_errf(buf, size, " (did you mean '%s'?)", best->name);
}

/*
 * Explain why nothing matched: either the words are the start of longer
 * names ("info" alone), or they are simply unknown.
 */
static void
lookup_fail(int argc, char *const argv[], char *err, size_t errlen)
{
	char	said[4 * QUOTE_MAX], could[512];
	size_t	i;
	int	nsaid = 1, partial = 0;

	could[0] = '\0';
	for (i = 0; i < CMD_ID_COUNT; i++) {
		const struct command_def *c = &command_defs[i];
		int nw = name_nwords(c->name);

		if (nw > argc && words_match(c->name, argc, argv, 0)) {
			append(could, sizeof(could), partial++ ? ", " : "");
			append(could, sizeof(could), c->name);
		} else if (nw > 1 && argc > 1 &&
		    word_match(c->name, 0, argv[0]) != WORD_NONE)
			nsaid = 2;	/* "info foo": quote both words */
	}
	said[0] = '\0';
	if (partial > 0) {
		append_words(said, sizeof(said), argc, argv);
		text_errf(err, errlen, "incomplete command '%s': could be %s",
		    said, could);
	} else {
		append_words(said, sizeof(said), nsaid, argv);
		suggest(said, could, sizeof(could));
		text_errf(err, errlen, "unknown command '%s'%s; try 'tracectl "
		    "help'", said, could);
	}
}

/*
 * Look up a command by name, exact first then unique prefix per word.
 * Contract in command.h.
 */
const struct command_def *
command_lookup(int argc, char *const argv[], int *consumed, char *err,
    size_t errlen)
{
	const struct command_def *best = NULL;
	char		 said[4 * QUOTE_MAX], could[512];
	int		 alive[CMD_ID_COUNT], nwords[CMD_ID_COUNT];
	int		 any_exact, nalive, said_words, j;
	size_t		 i;

	if (argc <= 0 || argv == NULL || argv[0] == NULL) {
		text_errf(err, errlen, "no command given; try 'tracectl help'");
		return NULL;
	}
	for (i = 0; i < CMD_ID_COUNT; i++)
		nwords[i] = name_nwords(command_defs[i].name);

	/* An exact name, the longest if several ("info" and "info x"). */
	for (i = 0; i < CMD_ID_COUNT; i++) {
		if (nwords[i] > argc ||
		    !words_match(command_defs[i].name, nwords[i], argv, 1))
			continue;
		if (best == NULL || nwords[i] > nwords[best->id])
			best = &command_defs[i];
	}
	if (best != NULL)
		goto found;

	/* Abbreviations: every word a prefix of the name's. */
	for (i = 0; i < CMD_ID_COUNT; i++)
		alive[i] = nwords[i] <= argc &&
		    words_match(command_defs[i].name, nwords[i], argv, 0);

	/* Word by word, a whole word beats a prefix. */
	for (j = 0; j < COMMAND_WORDS_MAX && j < argc; j++) {
		any_exact = 0;
		for (i = 0; i < CMD_ID_COUNT; i++)
			if (alive[i] && nwords[i] > j &&
			    word_match(command_defs[i].name, j, argv[j]) ==
			    WORD_EXACT)
				any_exact = 1;
		if (!any_exact)
			continue;
		for (i = 0; i < CMD_ID_COUNT; i++)
			if (alive[i] && nwords[i] > j &&
			    word_match(command_defs[i].name, j, argv[j]) !=
			    WORD_EXACT)
				alive[i] = 0;
	}

	nalive = 0;
	said_words = 1;
	could[0] = '\0';
	for (i = 0; i < CMD_ID_COUNT; i++) {
		if (!alive[i])
			continue;
		append(could, sizeof(could), nalive++ ? ", " : "");
		append(could, sizeof(could), command_defs[i].name);
		if (nwords[i] > said_words)
			said_words = nwords[i];
		best = &command_defs[i];
	}
	if (nalive == 1)
		goto found;
	if (nalive == 0) {
		lookup_fail(argc, argv, err, errlen);
		return NULL;
	}
	said[0] = '\0';
	append_words(said, sizeof(said), said_words, argv);
	text_errf(err, errlen, "ambiguous command '%s': could be %s", said,
	    could);
	return NULL;

found:
	if (consumed != NULL)
		*consumed = nwords[best->id];
	return best;
}

/*
 * Arity check with a usage message.  Contract in command.h.
 */
int
command_check_args(const struct command_def *cmd, int nargs, char *err,
    size_t errlen)
{
	char	usage[256];

	if (nargs >= cmd->args_min && nargs <= cmd->args_max)
		return 0;
	command_format_usage(cmd, usage, sizeof(usage));
	text_errf(err, errlen, "usage: tracectl %s", usage);
	return -1;
}

/*
 * Fixed words of a command's arguments.  Contract in command.h.
 */
int
command_check_words(const struct command_def *cmd, int nargs,
    char *const args[], char *err, size_t errlen)
{
	switch (cmd->id) {
	case CMD_ID_TRACE_EVENT:
		if (nargs == 1 && strcmp(args[0], "reset") != 0 &&
		    strcmp(args[0], "list") != 0) {
			text_errf(err, errlen, "usage: tracectl trace-event "
			    "PATTERN on|off|delete, trace-event list or "
			    "trace-event reset");
			return -1;
		}
		if (nargs == 2 && command_parse_onoff(args[1]) == -1 &&
		    strcmp(args[1], "delete") != 0) {
			text_errf(err, errlen, "trace-event %s: expected 'on', "
			    "'off' or 'delete', not '%s'", args[0], args[1]);
			return -1;
		}
		return 0;
	case CMD_ID_TRACE_FUNC:
	case CMD_ID_TRACER:
		if (nargs == 1 && strcmp(args[0], "reset") != 0 &&
		    strcmp(args[0], "list") != 0) {
			text_errf(err, errlen, "usage: tracectl %s "
			    "%s on|off|delete, %s list or %s reset", cmd->name,
			    cmd->id == CMD_ID_TRACER ? "NAME" : "PATTERN",
			    cmd->name, cmd->name);
			return -1;
		}
		if (nargs == 2 && command_parse_onoff(args[1]) == -1 &&
		    strcmp(args[1], "delete") != 0) {
			text_errf(err, errlen, "%s %s: expected 'on', 'off' "
			    "or 'delete', not '%s'", cmd->name, args[0],
			    args[1]);
			return -1;
		}
		return 0;
	case CMD_ID_TRIGGER: {
		struct command_trigger t;

		return command_parse_trigger(nargs, args, &t, err, errlen);
	}
	case CMD_ID_TRACE_FILE:
		if (nargs == 1 && (strcmp(args[0], "flush") == 0 ||
		    command_parse_onoff(args[0]) != -1))
			return 0;
		if (nargs == 2 && (strcmp(args[0], "set") == 0 ||
		    strcmp(args[0], "recorder") == 0))
			return 0;
		text_errf(err, errlen, "usage: tracectl trace-file "
		    "on|off|flush|set PATH|set default|recorder SIZE|"
		    "recorder off");
		return -1;
	default:
		return 0;
	}
}

/*
 * "NAME USAGE" of a command.  Contract in command.h.
 */
int
command_format_usage(const struct command_def *cmd, char *buf, size_t size)
{
	return snprintf(buf, size, "%s%s%s", cmd->name,
	    cmd->usage[0] != '\0' ? " " : "", cmd->usage);
}

/*
 * The table and its size.  Contract in command.h.
 */
const struct command_def *
command_table(size_t *n)
{
	if (n != NULL)
		*n = CMD_ID_COUNT;
	return command_defs;
}

/*
 * on/off argument.  Contract in command.h.
 */
int
command_parse_onoff(const char *s)
{
	if (s == NULL)
		return -1;
	if (strcmp(s, "on") == 0)
		return 1;
	if (strcmp(s, "off") == 0)
		return 0;
	return -1;
}

/*
 * Event glob check.  Contract in command.h.
 */
int
command_pattern_valid(const char *pattern, char *err, size_t errlen)
{
	const unsigned char	*p;
	size_t			 len;

	if (pattern == NULL || pattern[0] == '\0') {
		text_errf(err, errlen, "empty event pattern");
		return -1;
	}
	len = strnlen(pattern, COMMAND_PATTERN_MAX + 1);
	if (len > COMMAND_PATTERN_MAX) {
		text_errf(err, errlen, "event pattern longer than %d bytes",
		    COMMAND_PATTERN_MAX);
		return -1;
	}
	for (p = (const unsigned char *)pattern; *p != '\0'; p++) {
		if (*p < 0x20 || *p > 0x7e) {
			text_errf(err, errlen, "event pattern has a %s byte "
			    "(0x%02x) at offset %zu", *p < 0x80 ? "control" :
			    "non-ASCII", *p,
			    (size_t)(p - (const unsigned char *)pattern));
			return -1;
		}
	}
	return 0;
}

/*
 * A duration for people.  Contract in command.h.
 */
const char *
command_format_duration(uint64_t ns, char *buf, size_t size)
{
	if (ns % 1000000000 == 0)
		snprintf(buf, size, "%llus", (unsigned long long)(ns /
		    1000000000));
	else if (ns % 1000000 == 0)
		snprintf(buf, size, "%llums", (unsigned long long)(ns /
		    1000000));
	else
		snprintf(buf, size, "%lluns", (unsigned long long)ns);
	return buf;
}

/*
 * The value of option 'name' (--after, --every) at args[*i]: "--name
 * VALUE" or "--name=VALUE", parsed as a duration into *ns.  Moves *i
 * past it.  1 if args[*i] is that option, 0 if not, -1 on an error
 * (in err).
 */
static int
trigger_option(const char *name, int nargs, char *const args[], int *i,
    uint64_t *ns, int *seen, char *err, size_t errlen)
{
	size_t		 len = strlen(name);
	const char	*v;
	int64_t		 d;

	if (strncmp(args[*i], name, len) != 0 ||
	    (args[*i][len] != '\0' && args[*i][len] != '='))
		return 0;
	if (*seen)
		return text_errf(err, errlen, "trigger add: %s given twice",
		    name);
	*seen = 1;
	if (args[*i][len] == '=')
		v = args[*i] + len + 1;
	else if (*i + 1 < nargs)
		v = args[++*i];
	else
		return text_errf(err, errlen, "trigger add: %s needs a "
		    "DURATION (300ms, 2s, 1m)", name);
	(*i)++;
	if (text_parse_duration(v, &d) == -1)
		return text_errf(err, errlen, "trigger add: %s '%.*s' is not "
		    "a duration: a number and a unit, such as 300ms, 2s or 1m",
		    name, QUOTE_MAX, v);
	*ns = (uint64_t)d;
	return 1;
}

/*
 * trigger's arguments.  Contract in command.h.
 */
int
command_parse_trigger(int nargs, char *const args[],
    struct command_trigger *t, char *err, size_t errlen)
{
	int	 i, rc, seen_after = 0, seen_every = 0;
	char	 a[32], b[32], c[32];

	memset(t, 0, sizeof(*t));
	t->every_ns = COMMAND_TRIGGER_EVERY_DEFAULT_NS;
	if (nargs == 1 && strcmp(args[0], "list") == 0) {
		t->op = COMMAND_TRIGGER_LIST;
		return 0;
	}
	if (nargs == 2 && strcmp(args[0], "delete") == 0) {
		t->op = COMMAND_TRIGGER_DELETE;
		t->glob = args[1];
		return command_pattern_valid(t->glob, err, errlen);
	}
	if (nargs < 3 || strcmp(args[0], "add") != 0)
		return text_errf(err, errlen, "usage: tracectl trigger add "
		    "GLOB snapshot [--after DURATION] [--every DURATION], "
		    "trigger list or trigger delete GLOB");
	t->op = COMMAND_TRIGGER_ADD;
	t->glob = args[1];
	t->action = args[2];
	if (command_pattern_valid(t->glob, err, errlen) == -1)
		return -1;
	if (strcmp(t->action, "snapshot") != 0)
		return text_errf(err, errlen, "trigger add %.*s: unknown action "
		    "'%.*s': the only one is 'snapshot' (write the flight "
		    "recorder's windows)", QUOTE_MAX, t->glob, QUOTE_MAX,
		    t->action);
	for (i = 3; i < nargs; ) {
		if ((rc = trigger_option("--after", nargs, args, &i,
		    &t->after_ns, &seen_after, err, errlen)) == 0)
			rc = trigger_option("--every", nargs, args, &i,
			    &t->every_ns, &seen_every, err, errlen);
		if (rc == -1)
			return -1;
		if (rc == 0)
			return text_errf(err, errlen, "trigger add: unknown "
			    "option '%.*s': it takes --after DURATION and "
			    "--every DURATION", QUOTE_MAX, args[i]);
	}
	if (t->after_ns > COMMAND_TRIGGER_AFTER_MAX_NS)
		return text_errf(err, errlen, "trigger add: --after %s is "
		    "longer than %s, the most: the recorder holds the last "
		    "moments, not more", command_format_duration(t->after_ns,
		    a, sizeof(a)), command_format_duration(
		    COMMAND_TRIGGER_AFTER_MAX_NS, b, sizeof(b)));
	if (t->every_ns < COMMAND_TRIGGER_EVERY_MIN_NS ||
	    t->every_ns > COMMAND_TRIGGER_EVERY_MAX_NS)
		return text_errf(err, errlen, "trigger add: --every %s is out "
		    "of range: from %s (it bounds how many snapshots an event "
		    "emitted in a loop writes) to %s",
		    command_format_duration(t->every_ns, a, sizeof(a)),
		    command_format_duration(COMMAND_TRIGGER_EVERY_MIN_NS, b,
		    sizeof(b)), command_format_duration(
		    COMMAND_TRIGGER_EVERY_MAX_NS, c, sizeof(c)));
	return 0;
}
