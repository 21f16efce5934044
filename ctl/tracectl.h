/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * tracectl's program header: its exit statuses and the commands it runs
 * itself, without a daemon.  tracectl-internal; main thread.
 */
#ifndef TRACED_CTL_TRACECTL_H
#define TRACED_CTL_TRACECTL_H

#include <stddef.h>
#include <stdio.h>

struct json_t;

/* Exit statuses (man/tracectl.1, STYLE.md section 4). */
#define EXIT_DONE		0
#define EXIT_FAILED		1
#define EXIT_USAGE		2
#define EXIT_UNREACHABLE	3

/* tracectl.c */

/*
 * Send the command line argv[0, argc) (name included) to the daemon
 * that tracectl finds (as -r says) and ask for JSON.  Returns
 * EXIT_DONE with *items a new JSON array of the reply's items (the
 * caller frees it with json_decref()), or the exit status of the
 * failure (EXIT_UNREACHABLE: no daemon), said on stderr unless
 * 'quiet'.  For the commands that run here and need the daemon's
 * view (print --follow).
 */
int	tracectl_ask(int argc, char **argv, int quiet,
	    struct json_t **items);

/*
 * The same from the daemon of rdir (-r, or NULL), waiting at most
 * timeout seconds, and printing nothing: the reason of a failure goes
 * into err.  For top, which asks again and again and shows what went
 * wrong on its screen.
 */
int	ctl_query(const char *rdir, int argc, char **argv, int timeout,
	    struct json_t **items, char *err, size_t errsize);

/* print.c */

/*
 * 'tracectl print [--json] DIR...': the arguments after the command
 * name, and whether tracectl's own --json was given.  Prints the events
 * of every session under the DIRs, merged by time, on stdout.  Returns
 * EXIT_DONE, EXIT_FAILED when a file could not be read or is corrupt
 * (said on stderr; what could be read is printed), or EXIT_USAGE.
 */
int	print_main(int nargs, char **args, int json);

/* stats.c */

/*
 * 'tracectl stats [--pair A:B [--key FIELD]] [FILTERS] DIR...': counts,
 * rates and losses per event, thread and session, and the durations of
 * paired events.  Exit statuses as print_main().
 */
int	stats_main(int nargs, char **args, int json);

/* export.c */

/*
 * 'tracectl export --format FORMAT -o OUT [FILTERS] DIR...': write the
 * traces in another format (export.h).  Exit statuses as print_main().
 */
int	export_main(int nargs, char **args);

/* top.c */

/*
 * 'tracectl top [OPTIONS]': the live view on a terminal, or snapshots
 * on stdout with --once, -n N or --json.  Returns an exit status:
 * EXIT_UNREACHABLE when a snapshot could not be had.
 */
int	top_main(int nargs, char **args, int json, const char *rdir);

/* complete.c */

/*
 * Print on 'out' the ids of the running daemon's newest sessions that
 * start with 'prefix', one a line; the daemon is the one in 'rdir' (-r
 * on the command line being completed) or found as usual when NULL.
 * Says nothing on failure: no daemon, no ids.
 */
typedef void (*complete_sessions_cb)(const char *rdir, const char *prefix,
    FILE *out);

/*
 * 'tracectl completion words WORD...': words[0..n) are the words of a
 * command line after "tracectl", the last one the word under the
 * cursor (maybe empty).  Prints on 'out' what a shell may put there,
 * one word a line, those that start with the last word only; ":dirs"
 * or ":files" when the shell should offer names from the file system.
 * 'global' is how tracectl's own options complete (the "complete"
 * column's language, proto/commands.def); 'sessions' answers @session.
 * Returns EXIT_DONE whatever the words: a shell shows what is printed.
 */
int	complete_words(int n, char **words, const char *global, FILE *out,
	    complete_sessions_cb sessions);

/*
 * 'tracectl completion SHELL': print the completion script of "bash",
 * "zsh" or "fish" on 'out'.  Returns 0, or -1 (and prints nothing) for
 * another shell.
 */
int	complete_script(const char *shell, FILE *out);

#endif /* TRACED_CTL_TRACECTL_H */
