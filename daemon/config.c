/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * The daemon's settings: their defaults, their values and the
 * configuration file traced.conf(5).
 *
 * A setting comes from three places, each overriding the one before:
 * the defaults (which depend on the mode, system or per-user, and on
 * the directories systemd hands a service in RUNTIME_DIRECTORY and
 * STATE_DIRECTORY), the file, and the command line.  main.c keeps one
 * struct config per source with a bit set for each key that source
 * gives, and merges them with config_copy().  Every value goes through
 * config_set(), whether it comes from the file or from an option, so
 * both accept exactly the same values.
 *
 * The file is "key = value" lines, '#' comments (at the start of a line
 * or after a blank) and blank lines; anything else is refused with
 * "file:line: reason", so that a typo stops the daemon at start instead
 * of being silently ignored.
 *
 * This file is pure: no logging, no daemon state, no fatal(); errors go
 * back as a message in the caller's buffer.  That keeps it testable on
 * its own (tests/unit/test_config.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "ring.h"
#include "ringsize.h"
#include "text.h"

/* The running settings: main.c's to write (config.h). */
struct config cfg;

#define CONFIG_FILE_MAX		(64u << 10)	/* larger is not a config */

/* The keys, in the order the file and the manual list them. */
static const struct config_key {
	const char	*name;
	int		 reloadable;	/* SIGHUP applies it */
} config_keys[CONFIG_NKEYS] = {
	[CONFIG_RUNTIME_DIR]	= { "runtime-dir", 0 },
	[CONFIG_TRACE_DIR]	= { "trace-dir", 1 },
	[CONFIG_STATE_DIR]	= { "state-dir", 0 },
	[CONFIG_RING_SIZE]	= { "ring-size", 1 },
	[CONFIG_RING_POOL]	= { "ring-pool", 1 },
	[CONFIG_WORKERS]	= { "workers", 0 },
	[CONFIG_DRAIN_INTERVAL]	= { "drain-interval", 1 },
	[CONFIG_WRITEOUT_NICE]	= { "writeout-nice", 1 },
	[CONFIG_DIRECT_IO]	= { "direct-io", 1 },
	[CONFIG_LIMIT0 + LIMIT_SESSIONS] = { "sessions-per-uid", 1 },
	[CONFIG_LIMIT0 + LIMIT_RINGS] = { "rings-per-uid", 1 },
	[CONFIG_LIMIT0 + LIMIT_RING_BYTES] = { "ring-bytes-per-uid", 1 },
	[CONFIG_LIMIT0 + LIMIT_PROVIDERS] = { "providers-per-session", 1 },
	[CONFIG_LIMIT0 + LIMIT_SESSION_EVENTS] = { "events-per-session", 1 },
	[CONFIG_LIMIT0 + LIMIT_EVENT_CLASSES] = { "event-classes-per-uid", 1 },
	[CONFIG_LIMIT0 + LIMIT_EVENT_IDS] = { "event-ids-per-uid", 1 },
	[CONFIG_LIMIT0 + LIMIT_FUNCTIONS] = { "functions-per-uid", 1 },
	[CONFIG_LIMIT0 + LIMIT_MODULES] = { "modules-per-uid", 1 },
	[CONFIG_LIMIT0 + LIMIT_CONTROL_CONNS] =
	    { "control-connections-per-uid", 1 },
	[CONFIG_LIMIT0 + LIMIT_CONTROL_OUTPUT] =
	    { "control-output-per-uid", 1 },
	[CONFIG_LIMIT0 + LIMIT_CONTROL_TIMEOUT] = { "control-timeout", 1 },
	[CONFIG_LIMIT0 + LIMIT_INDEX_DAYS] = { "index-max-age", 1 },
	[CONFIG_LIMIT0 + LIMIT_INDEX_SESSIONS] = { "index-max-sessions", 1 },
	[CONFIG_LIMIT0 + LIMIT_STREAM_SIZE] = { "stream-max-size", 1 },
	[CONFIG_LIMIT0 + LIMIT_TRACE_BYTES] =
	    { "trace-dir-bytes-per-uid", 1 },
	[CONFIG_LIMIT0 + LIMIT_RECORDER] = { "recorder", 1 },
	[CONFIG_LIMIT0 + LIMIT_RECORDER_BYTES] =
	    { "recorder-bytes-per-uid", 1 },
	[CONFIG_LIMIT0 + LIMIT_RECORDER_KEEP] = { "recorder-keep", 1 },
	[CONFIG_LIMIT0 + LIMIT_RECORDER_KEEP_TIME] =
	    { "recorder-keep-time", 1 },
};

/*
 * The limits: default, range and unit.  The defaults let a user trace
 * a dozen copies of a program with QEMU's 5,000 events and a thousand
 * threads each at once, keep one uid's worst under about 100 MB of the
 * daemon's own memory and a tenth of its descriptors
 * (LimitNOFILE=65536 in traced.service), and what babeltrace2 spends
 * on one uid's sessions' metadata to seconds (about 85 us a class when
 * a session has at most 16,384 of them; much more past that).
 */
#define LU_COUNT	0
#define LU_BYTES	1
#define LU_SECONDS	2
#define LU_DAYS		3
static const struct limit_def {
	uint64_t	 def, min, max;
	int		 unit;
} limit_defs[LIMIT_N] = {
	[LIMIT_SESSIONS]	= { 512, 1, 1u << 20, LU_COUNT },
	[LIMIT_RINGS]		= { 4096, 1, 1u << 20, LU_COUNT },
	[LIMIT_RING_BYTES]	= { 8ull << 30, 1u << 20, 1ull << 40, LU_BYTES },
	[LIMIT_PROVIDERS]	= { 256, 1, 65536, LU_COUNT },
	[LIMIT_SESSION_EVENTS]	= { 16384, 16, 1u << 24, LU_COUNT },
	[LIMIT_EVENT_CLASSES]	= { 65536, 16, 1u << 24, LU_COUNT },
	[LIMIT_EVENT_IDS]	= { 65536, 16, 1u << 28, LU_COUNT },
	[LIMIT_FUNCTIONS]	= { 1u << 20, 16, 1u << 28, LU_COUNT },
	[LIMIT_MODULES]		= { 8192, 16, 1u << 20, LU_COUNT },
	[LIMIT_CONTROL_CONNS]	= { 16, 1, 100000, LU_COUNT },
	[LIMIT_CONTROL_OUTPUT]	= { 4u << 20, 64u << 10, 1ull << 32,
				    LU_BYTES },
	[LIMIT_CONTROL_TIMEOUT]	= { 10, 1, 3600, LU_SECONDS },
	[LIMIT_INDEX_DAYS]	= { 30, 1, 36500, LU_DAYS },
	[LIMIT_INDEX_SESSIONS]	= { 100000, 100, 100000000, LU_COUNT },
	[LIMIT_STREAM_SIZE]	= { 0, 0, 1ull << 50, LU_BYTES },
	[LIMIT_TRACE_BYTES]	= { 0, 0, 1ull << 50, LU_BYTES },
	[LIMIT_RECORDER]	= { 0, 0, 1ull << 40, LU_BYTES },
	[LIMIT_RECORDER_BYTES]	= { 0, 0, 1ull << 44, LU_BYTES },
	[LIMIT_RECORDER_KEEP]	= { 16, 0, 100000, LU_COUNT },
	[LIMIT_RECORDER_KEEP_TIME] = { 600, 0, 30 * 86400, LU_SECONDS },
};

/* A limit's setting name, for refusals that name it. */
const char *
config_limit_name(int limit)
{
	return config_keys[CONFIG_LIMIT0 + limit].name;
}

/* The key called 'name', or -1. */
int
config_key_find(const char *name)
{
	int	k;

	for (k = 0; k < CONFIG_NKEYS; k++)
		if (strcmp(config_keys[k].name, name) == 0)
			return k;
	return -1;
}

/* The name of key 'k' (a CONFIG_* value). */
const char *
config_key_name(int k)
{
	return config_keys[k].name;
}

/* Whether SIGHUP applies a new value of key 'k' to a running daemon. */
int
config_key_reloadable(int k)
{
	return config_keys[k].reloadable;
}

/* Free the strings of c and clear it. */
void
config_fini(struct config *c)
{
	free(c->runtime_dir);
	free(c->trace_dir);
	free(c->state_dir);
	memset(c, 0, sizeof(*c));
}

/* Replace *slot with a copy of s.  0, or -1 (ENOMEM). */
static int
set_str(char **slot, const char *s)
{
	char	*p;

	if ((p = strdup(s)) == NULL)
		return -1;
	free(*slot);
	*slot = p;
	return 0;
}

/* Replace *slot with "a" "b".  0, or -1 (ENOMEM). */
static int
set_path(char **slot, const char *a, const char *b)
{
	char	*p;

	if (asprintf(&p, "%s%s", a, b) == -1)
		return -1;
	free(*slot);
	*slot = p;
	return 0;
}

/* A non-empty environment variable, or NULL. */
static const char *
env(const char *name)
{
	const char *v = getenv(name);

	return v != NULL && v[0] != '\0' ? v : NULL;
}

/*
 * The first directory of a systemd *_DIRECTORY variable (a colon-
 * separated list when a unit names several), into buf.  Returns buf,
 * or NULL when the variable is unset or not an absolute path.
 */
static const char *
env_dir(const char *name, char *buf, size_t size)
{
	const char	*v = env(name);
	size_t		 n;

	if (v == NULL || v[0] != '/')
		return NULL;
	n = strcspn(v, ":");
	if (n >= size)
		return NULL;
	memcpy(buf, v, n);
	buf[n] = '\0';
	return buf;
}

/*
 * Fill c with the defaults of a system daemon ('system_daemon') or of a
 * per-user one, and set c->user accordingly.  The system daemon's
 * directories are /run/traced, /var/lib/traced and its traces/, or the
 * ones systemd created for it (RUNTIME_DIRECTORY, STATE_DIRECTORY);
 * a user's follow the XDG variables.  c must be cleared or hold only
 * heap strings.  Returns 0, or -1 (ENOMEM).
 */
int
config_defaults(struct config *c, int system_daemon)
{
	const char	*home = env("HOME"), *x;
	char		 rbuf[4096], sbuf[4096], tmp[64];
	long		 ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int		 rc = 0;

	c->user = !system_daemon;
	for (int i = 0; i < LIMIT_N; i++)
		c->limit[i] = limit_defs[i].def;
	c->ring_order = TRACED_RING_ORDER_DEFAULT;
	c->workers = ncpu > 0 ? (unsigned)(ncpu > 64 ? 64 : ncpu) : 2;
	c->drain_ms = 100;
	c->writeout_nice = 0;
	c->direct_io = 1;
	if (home == NULL)
		home = "/tmp";

	if ((x = env_dir("RUNTIME_DIRECTORY", rbuf, sizeof(rbuf))) != NULL)
		rc |= set_str(&c->runtime_dir, x);
	else if (system_daemon)
		rc |= set_str(&c->runtime_dir, "/run/traced");
	else if ((x = env("XDG_RUNTIME_DIR")) != NULL)
		rc |= set_path(&c->runtime_dir, x, "/traced");
	else {
		snprintf(tmp, sizeof(tmp), "/tmp/traced-%u",
		    (unsigned)getuid());
		rc |= set_str(&c->runtime_dir, tmp);
	}

	if ((x = env_dir("STATE_DIRECTORY", sbuf, sizeof(sbuf))) != NULL) {
		rc |= set_str(&c->state_dir, x);
		if (system_daemon)
			rc |= set_path(&c->trace_dir, x, "/traces");
	} else if (system_daemon) {
		rc |= set_str(&c->state_dir, "/var/lib/traced");
		rc |= set_str(&c->trace_dir, "/var/lib/traced/traces");
	} else if ((x = env("XDG_STATE_HOME")) != NULL)
		rc |= set_path(&c->state_dir, x, "/traced");
	else
		rc |= set_path(&c->state_dir, home, "/.local/state/traced");

	if (!system_daemon) {
		if ((x = env("XDG_DATA_HOME")) != NULL)
			rc |= set_path(&c->trace_dir, x, "/traced/traces");
		else
			rc |= set_path(&c->trace_dir, home,
			    "/.local/share/traced/traces");
	}
	return rc == 0 ? 0 : -1;
}

/*
 * The configuration file a daemon reads when --config does not name
 * one: CONFIG_SYSTEM_FILE for the system daemon, else the user's
 * $XDG_CONFIG_HOME/traced/traced.conf (~/.config/...).  Returns a heap
 * string, or NULL (ENOMEM).
 */
char *
config_default_file(int system_daemon)
{
	const char	*x;
	char		*p;

	if (system_daemon)
		return strdup(CONFIG_SYSTEM_FILE);
	if ((x = env("XDG_CONFIG_HOME")) != NULL) {
		if (asprintf(&p, "%s/traced/traced.conf", x) == -1)
			return NULL;
	} else if (asprintf(&p, "%s/.config/traced/traced.conf",
	    (x = env("HOME")) != NULL ? x : "/tmp") == -1)
		return NULL;
	return p;
}

/* A size in bytes with an optional K, M or G (KiB...) suffix. */
static int
parse_size(const char *s, unsigned long long *out)
{
	unsigned long long	 v, mul = 1;
	char			*end;

	if (s[0] < '0' || s[0] > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0)
		return -1;
	switch (*end) {
	case 'k': case 'K': mul = 1ull << 10; end++; break;
	case 'm': case 'M': mul = 1ull << 20; end++; break;
	case 'g': case 'G': mul = 1ull << 30; end++; break;
	default: break;
	}
	if (mul > 1 && *end == 'i')
		end++;
	if (*end == 'B')
		end++;
	if (*end != '\0' || v > (~0ull) / mul)
		return -1;
	*out = v * mul;
	return 0;
}

/* A decimal number from min to max. */
static int
parse_uint(const char *s, unsigned long min, unsigned long max,
    unsigned long *out)
{
	unsigned long	 v;
	char		*end;

	if (s[0] < '0' || s[0] > '9')
		return -1;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

/* Set limit 'l' of c from 'value'.  0, or -1 with the reason in err. */
static int
config_set_limit(struct config *c, int l, const char *value, char *err,
    size_t errsize)
{
	const struct limit_def *d = &limit_defs[l];
	unsigned long long v;
	unsigned long u;
	char lo[32], hi[32];

	if (d->unit == LU_BYTES) {
		if (parse_size(value, &v) == -1) {
			text_errf(err, errsize, "'%s' is not a size (try 16M)",
			    value);
			return -1;
		}
	} else if (parse_uint(value, 0, ULONG_MAX, &u) == 0)
		v = u;
	else {
		text_errf(err, errsize, "'%s' is not a number%s", value,
		    d->unit == LU_SECONDS ? " of seconds" :
		    d->unit == LU_DAYS ? " of days" : "");
		return -1;
	}
	if (v < d->min || v > d->max) {
		snprintf(lo, sizeof(lo), "%llu", (unsigned long long)d->min);
		snprintf(hi, sizeof(hi), "%llu", (unsigned long long)d->max);
		text_errf(err, errsize, "%s is out of range (%s to %s%s)",
		    value, lo, hi, d->unit == LU_BYTES ? " bytes" : "");
		return -1;
	}
	if (l == LIMIT_STREAM_SIZE && v != 0 && v < STREAM_PART_MIN) {
		text_errf(err, errsize, "%s is too small: a stream file holds "
		    "at least %uM (or 0: no limit)", value,
		    STREAM_PART_MIN >> 20);
		return -1;
	}
	if ((l == LIMIT_RECORDER || l == LIMIT_RECORDER_BYTES) && v != 0 &&
	    v < RECORDER_MIN) {
		text_errf(err, errsize, "%s is too small: a window holds at "
		    "least %uM (or 0: off)", value, RECORDER_MIN >> 20);
		return -1;
	}
	c->limit[l] = v;
	return 0;
}

/*
 * Set key 'k' of c from the text 'value' and mark it in *set.  Paths
 * are taken as they are (the file parser wants them absolute); a ring
 * size follows proto/ringsize.h, never rounded.  Returns 0, or -1
 * with the reason (without the key's name) in err.
 */
int
config_set(struct config *c, unsigned *set, int k, const char *value,
    char *err, size_t errsize)
{
	unsigned long		 v;
	char			**slot = NULL;
	uint32_t		 o;

	switch (k) {
	case CONFIG_RUNTIME_DIR:
		slot = &c->runtime_dir;
		break;
	case CONFIG_TRACE_DIR:
		slot = &c->trace_dir;
		break;
	case CONFIG_STATE_DIR:
		slot = &c->state_dir;
		break;
	case CONFIG_RING_SIZE:
		if (ringsize_parse(value, &o, err, errsize) == -1)
			return -1;
		c->ring_order = o;
		break;
	case CONFIG_RING_POOL:
		if (parse_uint(value, 0, POOL_MAX, &v) == -1) {
			text_errf(err, errsize, "'%s' is not a number of rings "
			    "from 0 to %u", value, POOL_MAX);
			return -1;
		}
		c->ring_pool = (unsigned)v;
		break;
	case CONFIG_WORKERS:
		if (parse_uint(value, 1, 64, &v) == -1) {
			text_errf(err, errsize, "'%s' is not a number from 1 "
			    "to 64", value);
			return -1;
		}
		c->workers = (unsigned)v;
		break;
	case CONFIG_DRAIN_INTERVAL:
		if (parse_uint(value, 1, 100000, &v) == -1) {
			text_errf(err, errsize, "'%s' is not a number of "
			    "milliseconds from 1 to 100000", value);
			return -1;
		}
		c->drain_ms = (unsigned)v;
		break;
	case CONFIG_WRITEOUT_NICE:
		if (parse_uint(value, 0, 19, &v) == -1) {
			text_errf(err, errsize, "'%s' is not a number from 0 "
			    "to 19", value);
			return -1;
		}
		c->writeout_nice = (int)v;
		break;
	case CONFIG_DIRECT_IO:
		if (strcmp(value, "on") == 0)
			c->direct_io = 1;
		else if (strcmp(value, "off") == 0)
			c->direct_io = 0;
		else {
			text_errf(err, errsize, "'%s' is neither on nor off",
			    value);
			return -1;
		}
		break;
	default:
		if (k >= CONFIG_LIMIT0 && k < CONFIG_NKEYS) {
			if (config_set_limit(c, k - CONFIG_LIMIT0, value, err,
			    errsize) == -1)
				return -1;
			break;
		}
		text_errf(err, errsize, "no such setting");
		return -1;
	}
	if (slot != NULL) {
		if (value[0] == '\0') {
			text_errf(err, errsize, "empty path");
			return -1;
		}
		if (set_str(slot, value) == -1) {
			text_errf(err, errsize, "out of memory");
			return -1;
		}
	}
	*set |= CONFIG_BIT(k);
	return 0;
}

static int
is_blank(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\r';
}

/* " (did you mean 'key'?)" for the closest key, or "". */
static void
key_suggestion(const char *name, char *buf, size_t size)
{
	unsigned best = 99, dist;
	int k, found = -1;

	for (k = 0; k < CONFIG_NKEYS; k++) {
		dist = (unsigned)text_distance(name, strlen(name),
		    config_keys[k].name, 98);
		if (dist < best) {
			best = dist;
			found = k;
		}
	}
	if (found != -1 && best <= 3)
		snprintf(buf, size, " (did you mean '%s'?)",
		    config_keys[found].name);
	else
		buf[0] = '\0';
}

/*
 * Parse the text of a configuration file (NUL-terminated; 'path' is
 * for messages) into c, marking in *set the keys it gives.  Returns 0,
 * or -1 with "path:line: reason" in err; c may then hold some of the
 * file's values.
 */
int
config_parse(struct config *c, unsigned *set, const char *path,
    const char *text, char *err, size_t errsize)
{
	unsigned	 line = 0, first[CONFIG_NKEYS] = { 0 };
	const char	*p = text, *eol, *key, *eq, *val, *end;
	char		 name[32], value[4096], why[256], keys[128];
	size_t		 klen, vlen;
	int		 k;

	for (; *p != '\0'; p = *eol != '\0' ? eol + 1 : eol) {
		line++;
		eol = p + strcspn(p, "\n");
		/* The line without its comment and outer blanks. */
		for (key = p; key < eol && is_blank(*key); key++)
			;
		for (end = key; end < eol; end++)
			if (*end == '#' && (end == key || is_blank(end[-1])))
				break;
		while (end > key && is_blank(end[-1]))
			end--;
		if (end == key)
			continue;

		eq = memchr(key, '=', (size_t)(end - key));
		if (eq == NULL) {
			text_errf(err, errsize, "%s:%u: expected 'key = value'",
			    path, line);
			return -1;
		}
		for (klen = (size_t)(eq - key); klen > 0 &&
		    is_blank(key[klen - 1]); klen--)
			;
		for (val = eq + 1; val < end && is_blank(*val); val++)
			;
		vlen = (size_t)(end - val);
		if (klen == 0) {
			text_errf(err, errsize, "%s:%u: no key before '='",
			    path, line);
			return -1;
		}
		if (klen >= sizeof(name))
			klen = sizeof(name) - 1;	/* unknown anyway */
		memcpy(name, key, klen);
		name[klen] = '\0';
		if ((k = config_key_find(name)) == -1) {
			key_suggestion(name, keys, sizeof(keys));
			text_errf(err, errsize, "%s:%u: unknown key '%s'%s; "
			    "every key is in traced.conf(5)", path, line, name,
			    keys);
			return -1;
		}
		if (first[k] != 0) {
			text_errf(err, errsize, "%s:%u: %s is already set at "
			    "line %u", path, line, name, first[k]);
			return -1;
		}
		if (vlen == 0) {
			text_errf(err, errsize, "%s:%u: %s has no value", path,
			    line, name);
			return -1;
		}
		if (vlen >= sizeof(value)) {
			text_errf(err, errsize, "%s:%u: %s: value too long",
			    path, line, name);
			return -1;
		}
		memcpy(value, val, vlen);
		value[vlen] = '\0';
		if ((k == CONFIG_RUNTIME_DIR || k == CONFIG_TRACE_DIR ||
		    k == CONFIG_STATE_DIR) && value[0] != '/') {
			text_errf(err, errsize, "%s:%u: %s: '%s' is not an "
			    "absolute path", path, line, name, value);
			return -1;
		}
		if (config_set(c, set, k, value, why, sizeof(why)) == -1) {
			text_errf(err, errsize, "%s:%u: %s: %s", path, line,
			    name, why);
			return -1;
		}
		first[k] = line;
	}
	return 0;
}

/*
 * Read and parse the file 'path' into c (see config_parse()).  A file
 * that does not exist is an error when 'must_exist', else an empty
 * configuration.  Returns 1 (read), 0 (no such file, c untouched), or
 * -1 with the reason in err.
 */
int
config_load(struct config *c, unsigned *set, const char *path,
    int must_exist, char *err, size_t errsize)
{
	char	*text;
	size_t	 len = 0;
	ssize_t	 n;
	int	 fd, ret;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
		if (errno == ENOENT && !must_exist)
			return 0;
		text_errf(err, errsize, "%s: %s", path, strerror(errno));
		return -1;
	}
	if ((text = malloc(CONFIG_FILE_MAX + 1)) == NULL) {
		close(fd);
		text_errf(err, errsize, "%s: out of memory", path);
		return -1;
	}
	while (len <= CONFIG_FILE_MAX && (n = read(fd, text + len,
	    CONFIG_FILE_MAX + 1 - len)) != 0) {
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			text_errf(err, errsize, "%s: %s", path,
			    strerror(errno));
			goto fail;
		}
		len += (size_t)n;
	}
	if (len > CONFIG_FILE_MAX) {
		text_errf(err, errsize, "%s: larger than %u KiB: not a "
		    "configuration file", path, CONFIG_FILE_MAX >> 10);
		goto fail;
	}
	if (memchr(text, '\0', len) != NULL) {
		text_errf(err, errsize, "%s: holds a NUL byte: not a "
		    "configuration file", path);
		goto fail;
	}
	text[len] = '\0';
	close(fd);
	ret = config_parse(c, set, path, text, err, errsize);
	free(text);
	return ret == 0 ? 1 : -1;
fail:
	close(fd);
	free(text);
	return -1;
}

/*
 * Copy into dst the keys of src named by the bits of 'keys'.  Returns
 * 0, or -1 (ENOMEM; dst then holds some of them).
 */
int
config_copy(struct config *dst, const struct config *src, unsigned keys)
{
	int	rc = 0;

	if (keys & CONFIG_BIT(CONFIG_RUNTIME_DIR))
		rc |= set_str(&dst->runtime_dir, src->runtime_dir);
	if (keys & CONFIG_BIT(CONFIG_TRACE_DIR))
		rc |= set_str(&dst->trace_dir, src->trace_dir);
	if (keys & CONFIG_BIT(CONFIG_STATE_DIR))
		rc |= set_str(&dst->state_dir, src->state_dir);
	if (keys & CONFIG_BIT(CONFIG_RING_SIZE))
		dst->ring_order = src->ring_order;
	if (keys & CONFIG_BIT(CONFIG_RING_POOL))
		dst->ring_pool = src->ring_pool;
	if (keys & CONFIG_BIT(CONFIG_WORKERS))
		dst->workers = src->workers;
	if (keys & CONFIG_BIT(CONFIG_DRAIN_INTERVAL))
		dst->drain_ms = src->drain_ms;
	if (keys & CONFIG_BIT(CONFIG_WRITEOUT_NICE))
		dst->writeout_nice = src->writeout_nice;
	if (keys & CONFIG_BIT(CONFIG_DIRECT_IO))
		dst->direct_io = src->direct_io;
	for (int l = 0; l < LIMIT_N; l++)
		if (keys & CONFIG_BIT(CONFIG_LIMIT0 + l))
			dst->limit[l] = src->limit[l];
	return rc == 0 ? 0 : -1;
}

/* Key k's value in c as the file would say it, into buf. */
void
config_format(const struct config *c, int k, char *buf, size_t size)
{
	switch (k) {
	case CONFIG_RUNTIME_DIR:
		snprintf(buf, size, "%s", c->runtime_dir ? c->runtime_dir :
		    "");
		break;
	case CONFIG_TRACE_DIR:
		snprintf(buf, size, "%s", c->trace_dir ? c->trace_dir : "");
		break;
	case CONFIG_STATE_DIR:
		snprintf(buf, size, "%s", c->state_dir ? c->state_dir : "");
		break;
	case CONFIG_RING_SIZE:
		ringsize_format(traced_ring_size(c->ring_order), buf,
		    size);
		break;
	case CONFIG_RING_POOL:
		snprintf(buf, size, "%u", c->ring_pool);
		break;
	case CONFIG_WORKERS:
		snprintf(buf, size, "%u", c->workers);
		break;
	case CONFIG_DRAIN_INTERVAL:
		snprintf(buf, size, "%u", c->drain_ms);
		break;
	case CONFIG_WRITEOUT_NICE:
		snprintf(buf, size, "%d", c->writeout_nice);
		break;
	case CONFIG_DIRECT_IO:
		snprintf(buf, size, "%s", c->direct_io ? "on" : "off");
		break;
	default:
		if (k >= CONFIG_LIMIT0 && k < CONFIG_NKEYS) {
			uint64_t v = c->limit[k - CONFIG_LIMIT0];

			if (limit_defs[k - CONFIG_LIMIT0].unit == LU_BYTES &&
			    v % (1u << 20) == 0)
				snprintf(buf, size, "%" PRIu64 "M", v >> 20);
			else
				snprintf(buf, size, "%" PRIu64, v);
			break;
		}
		snprintf(buf, size, "?");
		break;
	}
}

/* Whether a and b hold the same value for key k. */
int
config_equal(const struct config *a, const struct config *b, int k)
{
	char	va[4096], vb[4096];

	config_format(a, k, va, sizeof(va));
	config_format(b, k, vb, sizeof(vb));
	return strcmp(va, vb) == 0;
}
