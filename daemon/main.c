/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * traced: the options, the directories, the threads and the loop
 * (libevent, epoll backend), with its signals and housekeeping timer.
 * What each part does is its own module's (doc/DESIGN.md draws them);
 * this file starts them and stops them, in the order stated here once.
 *
 * Start: options and settings (settings.c), logging; the clocks; the
 * state directory, the trace directory (outdir.c); the event base; the
 * sockets (sock.c) and the index (index.c), before any thread exists
 * and before fork(): a second daemon stops there, saying why, before
 * it touches the first one's state; the background, if not
 * --foreground; the descriptor table grown (limits.c), and the log
 * thread; then the pipeline (its drain thread and writers, and the CTF
 * stream writer as its consumer), the intake and files threads, the
 * ring pool; the snapshot triggers (from the index, their timers on the
 * loop); the client and control sockets are watched; signals; systemd
 * is told READY=1 on the loop's first turn.
 *
 * The pipeline and the sessions report back here, by callback: chunks
 * to the sessions (sring_chunk_done()), and whatever moved to the
 * replies that wait (replies_check()).
 *
 * Stop (SIGINT, SIGTERM): tell systemd STOPPING=1, stop accepting
 * clients, end every session with its rings drained to the end, wait
 * for the pipeline and the intake jobs; then, the loop ended, answer
 * the replies that wait, stop the pool, the intake and files threads
 * and the pipeline's threads, close the index and the sockets; the log
 * thread last.  A second signal exits at once (what the log holds is
 * written first).
 */
#include <sys/stat.h>

#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "clock.h"
#include "cmd.h"
#include "config.h"
#include "dclock.h"
#include "fsdir.h"
#include "index.h"
#include "intake.h"
#include "quota.h"
#include "limits.h"
#include "log.h"
#include "notify.h"
#include "outdir.h"
#include "pipeline.h"
#include "pool.h"
#include "recorder.h"
#include "session.h"
#include "settings.h"
#include "sock.h"
#include "state.h"
#include "trigger.h"

/* What main() starts, for the callbacks and the stop. */
static struct {
	struct event_base *base;
	int		 state_dirfd;
	char		 state_at[64];	/* a path through state_dirfd */
	int		 client_fd;
	int		 control_fd;
	struct writeout	*wo;
} mn = { .state_dirfd = -1 };

static void
usage(FILE *f)
{
	fprintf(f,
"usage: traced [-fhvV] [--foreground] [--config FILE] [--system]\n"
"              [--runtime-dir DIR] [--trace-dir DIR] [--state-dir DIR]\n"
"              [--ring-size BYTES] [--ring-pool N] [--workers N]\n"
"              [--drain-interval MS] [--writeout-nice N]\n"
"              [--stream-max-size BYTES] [--recorder SIZE]\n"
"              [--set KEY=VALUE]...\n"
"\n"
"The traced daemon: drains the trace rings of traced programs into CTF\n"
"trace directories and answers tracectl.\n"
"\n"
"  -f, --foreground        stay in the foreground (logs on stderr)\n"
"  -c, --config FILE       settings file (system: " CONFIG_SYSTEM_FILE ";\n"
"                          users: $XDG_CONFIG_HOME/traced/traced.conf);\n"
"                          the options below override it\n"
"      --system            be the system daemon even when not root: trace\n"
"                          every user's processes, system directories\n"
"  -r, --runtime-dir DIR   sockets client.sock and control.sock\n"
"                          (system: /run/traced; users: $XDG_RUNTIME_DIR/\n"
"                          traced or /tmp/traced-$UID)\n"
"  -t, --trace-dir DIR     where traces go (system: /var/lib/traced/traces;\n"
"                          users: $XDG_DATA_HOME/traced/traces)\n"
"  -s, --state-dir DIR     saved rules (system: /var/lib/traced; users:\n"
"                          $XDG_STATE_HOME/traced)\n"
"      --ring-size BYTES   the most a traced thread's ring grows to, a power\n"
"                          of two from 4K to 1G (default 16M; rings start\n"
"                          at 1M; a process may ask with TRACED_RING_SIZE)\n"
"      --ring-pool N       keep N rings of --ring-size with their memory made,\n"
"                          0-64 (default 0): a thread that takes one writes\n"
"                          its first pass as fast as the next ones; holds\n"
"                          N x ring-size of memory; serves this daemon's\n"
"                          own user only\n"
"      --workers N         writeout threads, 1 to 64 (default: number of\n"
"                          CPUs)\n"
"      --drain-interval MS drain quiet rings this often (default 100)\n"
"      --writeout-nice N   niceness of the drain, writeout and intake\n"
"                          threads, 0-19 (default 0: raised, they starve\n"
"                          next to busy programs, whose rings then lose\n"
"                          events)\n"
"      --stream-max-size BYTES  cut each thread's stream into files of about\n"
"                          this size, at least 1M (default 0: one file)\n"
"      --recorder SIZE     flight recorder: keep each new session's last SIZE\n"
"                          of events in memory, at least 4M, and write them\n"
"                          only when asked (tracectl snapshot, triggers);\n"
"                          nothing goes to the trace directory until then\n"
"                          (default 0: off, every event is written)\n"
"  -o, --set KEY=VALUE     any setting of traced.conf(5), such as the limits\n"
"                          on what one user may make the daemon hold\n"
"                          (sessions-per-uid=512, rings-per-uid=4096...)\n"
"  -v, --verbose           log debug messages\n"
"  -V, --version           print the version\n"
"  -h, --help              this text\n"
"\n"
"SIGHUP reloads the settings file.  See traced(8) and traced.conf(5).\n");
}

/*
 * Go to the background once the sockets listen: the parent exits 0 only
 * when the child is ready, so "traced && tracectl ..." needs no sleep.
 * The log goes to <state-dir>/traced.log.
 */
static void
daemonize(void)
{
	char ok, say[PATH_MAX + 64];
	int p[2], fd;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) == -1)
		fatal("pipe");
	pid = fork();
	if (pid == -1)
		fatal("fork");
	if (pid > 0) {
		close(p[1]);
		if (read(p[0], &ok, 1) != 1)
			_exit(1);	/* the child said why in its log */
		_exit(0);
	}
	close(p[0]);
	if (setsid() == -1)
		fatal("setsid");
	snprintf(say, sizeof(say), "traced: running in the background, "
	    "logging to %s/traced.log\n", cfg.state_dir);
	if (log_to_file(mn.state_dirfd, cfg.state_dir, say) == -1)
		fatal("%s/traced.log", cfg.state_dir);
	fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (fd != -1) {
		dup2(fd, STDIN_FILENO);
		dup2(fd, STDOUT_FILENO);
		close(fd);
	}
	ok = 1;
	(void)!write(p[1], &ok, 1);
	close(p[1]);
}

/*
 * Housekeeping, every 100 ms: a deleted trace directory is noticed
 * within a second, the log file kept to its size, and metadata that
 * could not be written tried again.
 */
static void
timer_cb(int fd, short what, void *arg)
{
	static uint64_t last_check;

	(void)fd;
	(void)what;
	(void)arg;
	if (now_ns(CLOCK_MONOTONIC) - last_check > 1000000000u) {
		sessions_check_dirs();
		replies_check();	/* a flush may wait on a lost one */
		log_rotate_check();
		quota_tick();
		last_check = now_ns(CLOCK_MONOTONIC);
	}
	sessions_meta_retry();
}

/* The pipeline reported a batch of chunks: replies may be done. */
static void
pipeline_settled(void *arg)
{
	(void)arg;
	replies_check();
}

static void
shutdown_check(void)
{
	if (sessions_stopping() && sessions_idle() && writeout_idle() &&
	    intake_idle())
		event_base_loopexit(mn.base, NULL);
}

static void
signal_cb(int sig, short what, void *arg)
{
	(void)what;
	(void)arg;
	if (sessions_stopping()) {
		log_warnx("second signal %d: exiting now", sig);
		exit(1);
	}
	log_info("signal %d: draining every ring, then exiting", sig);
	notify_stopping();
	sessions_stop();
	shutdown_check();
}

static void
reload_cb(int sig, short what, void *arg)
{
	(void)sig;
	(void)what;
	(void)arg;
	settings_reload();
}

static void
stop_timer_cb(int fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
	shutdown_check();
}

/*
 * The options into the settings (settings.c) and *config_opt (the
 * file), *system_mode.  Exits on a usage error (2), --help and
 * --version (0).
 */
static void
parse_options(int argc, char *argv[], const char **config_opt,
    int *system_mode)
{
	static const struct option longopts[] = {
		{ "foreground", no_argument, NULL, 'f' },
		{ "config", required_argument, NULL, 'c' },
		{ "system", no_argument, NULL, 'S' },
		{ "runtime-dir", required_argument, NULL, 'r' },
		{ "trace-dir", required_argument, NULL, 't' },
		{ "state-dir", required_argument, NULL, 's' },
		{ "ring-size", required_argument, NULL, 'R' },
		{ "ring-pool", required_argument, NULL, 'P' },
		{ "workers", required_argument, NULL, 'W' },
		{ "drain-interval", required_argument, NULL, 'D' },
		{ "writeout-nice", required_argument, NULL, 'N' },
		{ "stream-max-size", required_argument, NULL, 'M' },
		{ "recorder", required_argument, NULL, 'X' },
		{ "set", required_argument, NULL, 'o' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	char err[PATH_MAX + 1024];
	int ch, key;
	char *eq;

	while ((ch = getopt_long(argc, argv, "fc:r:t:s:o:vVh", longopts,
	    NULL)) != -1) {
		key = -1;
		switch (ch) {
		case 'f':
			cfg.foreground = 1;
			break;
		case 'c':
			*config_opt = optarg;
			break;
		case 'S':
			*system_mode = 1;
			break;
		case 'r':
			key = CONFIG_RUNTIME_DIR;
			break;
		case 't':
			key = CONFIG_TRACE_DIR;
			break;
		case 's':
			key = CONFIG_STATE_DIR;
			break;
		case 'R':
			key = CONFIG_RING_SIZE;
			break;
		case 'P':
			key = CONFIG_RING_POOL;
			break;
		case 'W':
			key = CONFIG_WORKERS;
			break;
		case 'D':
			key = CONFIG_DRAIN_INTERVAL;
			break;
		case 'N':
			key = CONFIG_WRITEOUT_NICE;
			break;
		case 'M':
			key = CONFIG_LIMIT0 + LIMIT_STREAM_SIZE;
			break;
		case 'X':
			key = CONFIG_LIMIT0 + LIMIT_RECORDER;
			break;
		case 'o':
			/* --set KEY=VALUE: any setting of traced.conf(5). */
			if ((eq = strchr(optarg, '=')) == NULL) {
				fprintf(stderr, "traced: --set %s: expected "
				    "KEY=VALUE\n", optarg);
				exit(2);
			}
			*eq = '\0';
			if ((key = config_key_find(optarg)) == -1) {
				fprintf(stderr, "traced: --set: no setting "
				    "'%s' (see traced.conf(5))\n", optarg);
				exit(2);
			}
			optarg = eq + 1;
			break;
		case 'v':
			log_verbose = 1;
			break;
		case 'V':
			printf("traced %s\n", TRACED_VERSION);
			exit(0);
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			exit(2);
		}
		if (key != -1 && settings_option(key, optarg, err,
		    sizeof(err)) == -1) {
			fprintf(stderr, "traced: --%s: %s\n",
			    config_key_name(key), err);
			exit(2);
		}
	}
	if (optind != argc) {
		fprintf(stderr, "traced: unexpected argument '%s'\n",
		    argv[optind]);
		usage(stderr);
		exit(2);
	}
}

int
main(int argc, char *argv[])
{
	static const struct pipeline_owner owner = {
		.chunk_done = sring_chunk_done,
		.settled = pipeline_settled,
	};
	struct event *ev_int, *ev_term, *ev_hup, *ev_stop, *ev_timer;
	struct event_config *ecfg;
	struct timeval tv;
	const char *config_opt = NULL;
	char err[PATH_MAX + 1024], where[PATH_MAX + 64];
	struct rule *rules = NULL;
	size_t nrules = 0;
	uint32_t next_id = 1;
	int system_mode = 0, passed;

	parse_options(argc, argv, &config_opt, &system_mode);
	/* Root is the system daemon; anyone else is a user's, unless
	 * --system (the service runs as user traced). */
	if (geteuid() == 0)
		system_mode = 1;
	log_init();
	settings_load(system_mode, config_opt, where, sizeof(where));
	umask(027);
	signal(SIGPIPE, SIG_IGN);
	dclock_setup();
	limits_init();

	/* The directories: state (the index, saved settings), traces. */
	mn.state_dirfd = fsdir_open(cfg.state_dir, FSDIR_CREATE_ALL, 0750,
	    err, sizeof(err));
	if (mn.state_dirfd == -1)
		fatalx("state directory: %s", err);
	fsdir_path(mn.state_dirfd, cfg.state_dir, mn.state_at,
	    sizeof(mn.state_at));
	/* 'trace-file set' outlives a restart, unless --trace-dir. */
	if (outdir_init(mn.state_dirfd, cfg.state_dir, cfg.trace_dir,
	    settings_from_cli(CONFIG_TRACE_DIR), settings_trace_dir_default(),
	    err, sizeof(err)) == -1)
		fatalx("trace directory: %s", err);

	ecfg = event_config_new();
	event_config_avoid_method(ecfg, "select");
	event_config_avoid_method(ecfg, "poll");
	/* Clients' callbacks: at most a slice before the loop looks for
	 * control requests and timers again (sock.h). */
	{
		struct timeval slice = { 0, LOOP_CLIENT_SLICE_MS * 1000 };

		if (ecfg != NULL)
			(void)event_config_set_max_dispatch_interval(ecfg,
			    &slice, -1, LOOP_PRI_CLIENT);
	}
	mn.base = event_base_new_with_config(ecfg);
	event_config_free(ecfg);
	if (mn.base == NULL)
		fatalx("libevent: no epoll backend");
	/* Events are LOOP_PRI_CLIENT unless said otherwise: the middle
	 * (libevent's default is nactivequeues / 2). */
	if (event_base_priority_init(mn.base, LOOP_NPRI) == -1)
		fatalx("libevent: cannot set %d priorities", LOOP_NPRI);

	/*
	 * Before any thread exists: fork() keeps only the caller.  And
	 * before the index: a second daemon stops here, saying why,
	 * before it touches the first one's state directory.
	 */
	passed = sock_open(cfg.runtime_dir, cfg.user, &mn.client_fd,
	    &mn.control_fd);
	(void)index_open(mn.base, cfg.state_dir, mn.state_at[0] != '\0' ?
	    mn.state_at : NULL, &rules, &nrules, &next_id);
	state_init(rules, nrules);
	record_init();
	if (!cfg.foreground) {
		daemonize();
		if (event_reinit(mn.base) == -1)
			fatalx("libevent: cannot reinitialize after fork");
	}
	limits_grow_fd_table();		/* the daemon's process, no thread */
	/* The first thread: lines are written by it from now on. */
	if (log_start() == -1)
		log_warnx("cannot start the log thread: lines are written "
		    "by the threads that log them");

	/* The threads: the pipeline and its consumer, intake, the pool. */
	mn.wo = writeout_new(mn.base, cfg.workers, cfg.writeout_nice,
	    cfg.drain_ms, &owner);
	if (mn.wo == NULL || writeout_consumer_add(&stream_consumer) == -1 ||
	    writeout_consumer_add(&recorder_consumer) == -1)
		fatalx("cannot start the writeout threads");
	recorder_configure(&cfg);
	if (recorder_start(mn.base, mn.state_dirfd, record_snapshot) == -1)
		fatalx("cannot start the flight recorder");
	writeout_set_direct(cfg.direct_io);
	intake_set_close_hook(limits_fds_closing);
	if (intake_start(mn.base, cfg.writeout_nice) == -1)
		fatalx("cannot start the intake and files threads");
	if (pool_start(mn.base, cfg.ring_pool, cfg.ring_order,
	    session_spares_serve, NULL) == -1)
		fatalx("cannot start the ring pool thread");

	/* The triggers, from the index, with their timers on the loop. */
	trigger_init(mn.base);

	/* The sockets, the signals, the timers. */
	client_set_changed(replies_check);
	if (client_listen(mn.base, mn.client_fd, next_id) == -1 ||
	    control_listen(mn.base, mn.control_fd) == -1)
		fatalx("cannot watch the sockets");
	ev_int = evsignal_new(mn.base, SIGINT, signal_cb, NULL);
	ev_term = evsignal_new(mn.base, SIGTERM, signal_cb, NULL);
	ev_hup = evsignal_new(mn.base, SIGHUP, reload_cb, NULL);
	if (ev_int == NULL || ev_term == NULL || ev_hup == NULL)
		fatalx("libevent: cannot watch the signals");
	/* Signals and timers come before clients' work (sock.h). */
	(void)event_priority_set(ev_int, LOOP_PRI_FIRST);
	(void)event_priority_set(ev_term, LOOP_PRI_FIRST);
	(void)event_priority_set(ev_hup, LOOP_PRI_FIRST);
	evsignal_add(ev_int, NULL);
	evsignal_add(ev_term, NULL);
	evsignal_add(ev_hup, NULL);
	/* Housekeeping (rings are drained by the drain thread). */
	ev_timer = event_new(mn.base, -1, EV_PERSIST, timer_cb, NULL);
	ev_stop = event_new(mn.base, -1, EV_PERSIST, stop_timer_cb, NULL);
	if (ev_timer == NULL || ev_stop == NULL)
		fatalx("libevent: cannot make the timers");
	(void)event_priority_set(ev_timer, LOOP_PRI_FIRST);
	(void)event_priority_set(ev_stop, LOOP_PRI_FIRST);
	tv.tv_sec = 0;
	tv.tv_usec = 100000;
	event_add(ev_timer, &tv);
	tv.tv_sec = 0;
	tv.tv_usec = 20000;
	event_add(ev_stop, &tv);
	notify_init(mn.base, sessions_count);

	log_info("traced %s ready: %s daemon, %s; sockets in %s%s, traces "
	    "to %s, %u writeout threads, %s clock for new processes",
	    TRACED_VERSION, system_mode ? "system" : "per-user", where,
	    cfg.runtime_dir, passed > 0 ? " (from systemd)" : "",
	    outdir_path(), writeout_nworkers(),
	    traced_clock_use_tsc() && dclock_have_tsc() ? "tsc" : "monotonic");
	event_base_dispatch(mn.base);

	/* Every session ended, every ring drained: stop, in order. */
	control_close_all();
	pool_stop();
	intake_stop();
	writeout_free(mn.wo);
	trigger_stop();		/* a snapshot waiting for --after: now */
	recorder_stop();	/* the snapshots asked for, written */
	index_close();
	sock_close(mn.client_fd, mn.control_fd);
	notify_fini();
	client_fini();
	event_free(ev_int);
	event_free(ev_term);
	event_free(ev_hup);
	event_free(ev_stop);
	event_free(ev_timer);
	trigger_fini();
	event_base_free(mn.base);
	state_fini();
	quota_fini();
	outdir_fini();
	settings_fini();
	log_info("stopped");
	log_stop();
	close(mn.state_dirfd);
	return 0;
}
