/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * tracectl's program header: its exit statuses and the commands it runs
 * itself, without a daemon.  tracectl-internal; main thread.
 */
#ifndef TRACED_CTL_TRACECTL_H
#define TRACED_CTL_TRACECTL_H

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

#endif /* TRACED_CTL_TRACECTL_H */
