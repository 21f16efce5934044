/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * Where the daemon's settings come from, and SIGHUP.
 *
 * Each setting comes from the defaults of the mode (the system daemon,
 * or a per-user one), then the file (traced.conf(5)), then the command
 * line; config.c parses, this file merges them into the running
 * settings (cfg, config.h).  SIGHUP reads the file again and applies
 * what changed in it to the settings that can change at run time
 * (trace-dir, ring-size, ring-pool, drain-interval, writeout-nice,
 * direct-io, the limits); the others are logged as needing a restart,
 * and an option given on the command line keeps winning.
 *
 * Part of main: it reaches the modules whose settings change (the
 * pipeline, the pool, the sessions' output).  Loop thread.
 */
#include <sys/resource.h>

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "log.h"
#include "notify.h"
#include "outdir.h"
#include "pipeline.h"
#include "pool.h"
#include "recorder.h"
#include "session.h"
#include "settings.h"

#define CONFIG_ALL	(CONFIG_BIT(CONFIG_NKEYS) - 1)

/* Where the settings came from; read again on SIGHUP. */
static struct {
	struct config	 defaults;	/* of this mode */
	struct config	 file;		/* what the file gave ... */
	unsigned	 file_keys;	/* ... these keys */
	struct config	 cli;		/* what the options gave ... */
	unsigned	 cli_keys;	/* ... these keys */
	char		*path;		/* the file, read again on SIGHUP */
	int		 explicit;	/* --config: it must exist */
} conf;

/*
 * An option of the command line: key k (CONFIG_*) is 'value'.  0, or
 * -1 with the reason in err.
 */
int
settings_option(int k, const char *value, char *err, size_t errsize)
{
	return config_set(&conf.cli, &conf.cli_keys, k, value, err, errsize);
}

/* Did the command line give key k? */
int
settings_from_cli(int k)
{
	return (conf.cli_keys & CONFIG_BIT(k)) != 0;
}

/*
 * The settings the file 'file' (giving 'keys') and the command line
 * make, from scratch, into c (cleared or heap strings only).  0 or -1.
 */
static int
config_build(struct config *c, const struct config *file, unsigned keys)
{
	if (config_copy(c, &conf.defaults, CONFIG_ALL) == -1 ||
	    config_copy(c, file, keys) == -1 ||
	    config_copy(c, &conf.cli, conf.cli_keys) == -1)
		return -1;
	c->foreground = cfg.foreground;
	c->user = conf.defaults.user;
	return 0;
}

/*
 * Build the running settings (cfg): the mode's defaults, the file
 * (config_opt, which must exist, or the mode's default file, which may
 * not), the options.  'where' says what was read, for the log.  Fatal
 * on a bad file.  Once, at start.
 */
void
settings_load(int system_mode, const char *config_opt, char *where,
    size_t wheresize)
{
	char err[PATH_MAX + 1024];

	if (config_defaults(&conf.defaults, system_mode) == -1)
		fatal("configuration");
	conf.explicit = config_opt != NULL;
	conf.path = config_opt != NULL ? strdup(config_opt) :
	    config_default_file(system_mode);
	if (conf.path == NULL)
		fatal("configuration");
	switch (config_load(&conf.file, &conf.file_keys, conf.path,
	    conf.explicit, err, sizeof(err))) {
	case -1:
		fatalx("%s", err);
	case 0:
		snprintf(where, wheresize, "no %s: defaults", conf.path);
		break;
	default:
		snprintf(where, wheresize, "configuration %s", conf.path);
		break;
	}
	if (config_build(&cfg, &conf.file, conf.file_keys) == -1)
		fatal("configuration");
	if (gethostname(cfg.hostname, sizeof(cfg.hostname) - 1) == -1)
		snprintf(cfg.hostname, sizeof(cfg.hostname), "localhost");
}

/*
 * Where traces go without 'trace-file set': the command line's, the
 * configuration file's, or the mode's default.
 */
const char *
settings_trace_dir_default(void)
{
	if (conf.cli_keys & CONFIG_BIT(CONFIG_TRACE_DIR))
		return conf.cli.trace_dir;
	if (conf.file_keys & CONFIG_BIT(CONFIG_TRACE_DIR))
		return conf.file.trace_dir;
	return conf.defaults.trace_dir;
}

/* SIGHUP changed trace-dir: like 'tracectl trace-file set'. */
static int
reload_trace_dir(const char *path)
{
	char err[PATH_MAX + 256], *p;

	if (sessions_trace_dir_set(path, "reload", NULL, err,
	    sizeof(err)) == -1) {
		log_warnx("SIGHUP: trace-dir: %s (traces still go to %s)", err,
		    outdir_path());
		return -1;
	}
	if ((p = strdup(path)) != NULL) {
		free(cfg.trace_dir);
		cfg.trace_dir = p;
	}
	return 0;
}

/*
 * Give the running writeout threads (the writers, the drain thread and
 * the intake thread) niceness 'nice'.  They set their own when they
 * start (worker.c), so they are found by thread name in
 * /proc/self/task.  Lowering the niceness needs CAP_SYS_NICE or
 * RLIMIT_NICE.  Returns 0, or -1 (logged).
 */
static int
reload_nice(int nice)
{
	char path[64], comm[32];
	struct dirent *de;
	DIR *d;
	ssize_t n;
	int fd, rc = 0;
	long tid;

	if ((d = opendir("/proc/self/task")) == NULL) {
		log_warn("SIGHUP: writeout-nice: /proc/self/task");
		return -1;
	}
	while ((de = readdir(d)) != NULL) {
		if ((tid = strtol(de->d_name, NULL, 10)) <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%ld/comm", tid);
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
			continue;
		n = read(fd, comm, sizeof(comm) - 1);
		close(fd);
		if (n <= 0)
			continue;
		comm[n] = '\0';
		if (strcmp(comm, "traced-writeout\n") != 0 &&
		    strcmp(comm, "traced-drain\n") != 0 &&
		    strcmp(comm, "traced-intake\n") != 0 &&
		    strcmp(comm, "traced-files\n") != 0)
			continue;
		if (setpriority(PRIO_PROCESS, (id_t)tid, nice) == -1) {
			log_warn("SIGHUP: writeout-nice %d for thread %ld",
			    nice, tid);
			rc = -1;
		}
	}
	closedir(d);
	return rc;
}

/* Apply the new value of reloadable key k from c.  0, or -1 (logged). */
static int
reload_apply(int k, const struct config *c)
{
	switch (k) {
	case CONFIG_TRACE_DIR:
		return reload_trace_dir(c->trace_dir);
	case CONFIG_RING_SIZE:
		cfg.ring_order = c->ring_order;	/* new processes */
		pool_set(cfg.ring_pool, cfg.ring_order);
		return 0;
	case CONFIG_RING_POOL:
		cfg.ring_pool = c->ring_pool;
		pool_set(cfg.ring_pool, cfg.ring_order);
		return 0;
	case CONFIG_DRAIN_INTERVAL:
		cfg.drain_ms = c->drain_ms;
		writeout_set_interval(cfg.drain_ms);
		return 0;
	case CONFIG_WRITEOUT_NICE:
		if (reload_nice(c->writeout_nice) == -1)
			return -1;
		cfg.writeout_nice = c->writeout_nice;
		return 0;
	case CONFIG_DIRECT_IO:
		cfg.direct_io = c->direct_io;
		writeout_set_direct(cfg.direct_io);
		return 0;
	default:
		/* A limit applies to what clients ask from now on. */
		if (k >= CONFIG_LIMIT0 && k < CONFIG_NKEYS) {
			cfg.limit[k - CONFIG_LIMIT0] =
			    c->limit[k - CONFIG_LIMIT0];
			recorder_configure(&cfg);
			return 0;
		}
		return -1;
	}
}

/* Append ", text" (or "text") to the list in buf, cut short if full. */
static void
list_add(char *buf, size_t size, const char *text)
{
	size_t n = strlen(buf), m;

	if (n > 0 && n + 2 < size) {
		memcpy(buf + n, ", ", 2);
		n += 2;
	}
	m = strlen(text);
	if (m > size - n - 1)
		m = size - n - 1;
	memcpy(buf + n, text, m);
	buf[n + m] = '\0';
}

/*
 * SIGHUP: read the file again and apply each setting whose value in
 * the file changed, unless an option overrides it.  One log line says
 * what changed, what needs a restart and what the command line keeps.
 * A bad file changes nothing.
 */
void
settings_reload(void)
{
	struct config nf, was, want;
	unsigned nkeys = 0, bit;
	char err[1024], a[PATH_MAX], b[PATH_MAX], item[2 * PATH_MAX + 64];
	char done[4096] = "", restart[2048] = "", kept[512] = "";
	char failed[512] = "";
	int k, changed;

	if (sessions_stopping())
		return;
	notify_reloading();
	memset(&nf, 0, sizeof(nf));
	memset(&was, 0, sizeof(was));
	memset(&want, 0, sizeof(want));
	if (config_load(&nf, &nkeys, conf.path, conf.explicit, err,
	    sizeof(err)) == -1) {
		log_warnx("SIGHUP: %s: configuration not reloaded, nothing "
		    "changed", err);
		goto out;
	}
	if (config_build(&was, &conf.file, conf.file_keys) == -1 ||
	    config_build(&want, &nf, nkeys) == -1) {
		log_warnx("SIGHUP: out of memory: configuration not reloaded");
		goto out;
	}
	for (k = 0; k < CONFIG_NKEYS; k++) {
		bit = CONFIG_BIT(k);
		changed = ((conf.file_keys ^ nkeys) & bit) != 0 ||
		    ((nkeys & bit) && !config_equal(&conf.file, &nf, k));
		if (!changed)
			continue;
		if (conf.cli_keys & bit) {
			list_add(kept, sizeof(kept), config_key_name(k));
			continue;
		}
		if (config_equal(&was, &want, k))
			continue;	/* e.g. the file now says the default */
		if (k == CONFIG_TRACE_DIR)	/* where it is now */
			snprintf(a, sizeof(a), "%s", outdir_path());
		else
			config_format(&cfg, k, a, sizeof(a));
		config_format(&want, k, b, sizeof(b));
		snprintf(item, sizeof(item), "%s %s -> %s", config_key_name(k),
		    a, b);
		if (!config_key_reloadable(k))
			list_add(restart, sizeof(restart), item);
		else if (reload_apply(k, &want) == 0)
			list_add(done, sizeof(done), item);
		else {
			/* Keep the old value: the next SIGHUP tries again. */
			list_add(failed, sizeof(failed), config_key_name(k));
			if ((conf.file_keys & bit) &&
			    config_copy(&nf, &conf.file, bit) == 0)
				nkeys |= bit;
			else
				nkeys &= ~bit;
		}
	}
	log_info("SIGHUP: reloaded %s: %s%s%s%s%s%s%s%s%s", conf.path,
	    done[0] != '\0' ? "changed " : "nothing changed", done,
	    restart[0] != '\0' ? "; needs a restart: " : "", restart,
	    failed[0] != '\0' ? "; could not change (see above): " : "",
	    failed,
	    kept[0] != '\0' ? "; the command line keeps " : "", kept,
	    kept[0] != '\0' ? " (not from the file)" : "");
	config_fini(&conf.file);
	conf.file = nf;
	conf.file_keys = nkeys;
	memset(&nf, 0, sizeof(nf));
	/* 'trace-file set default' goes where the file now says. */
	outdir_set_default(settings_trace_dir_default());
out:
	config_fini(&nf);
	config_fini(&was);
	config_fini(&want);
	notify_reloaded();
}

/* At exit. */
void
settings_fini(void)
{
	config_fini(&conf.defaults);
	config_fini(&conf.file);
	config_fini(&conf.cli);
	config_fini(&cfg);
	free(conf.path);
	conf.path = NULL;
}

