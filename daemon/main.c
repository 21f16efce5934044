/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * traced: options, directories, sockets, the clock every session's
 * metadata describes, and the libevent loop (epoll backend) with its
 * signals and drain timer.
 *
 * Shutdown order (SIGINT, SIGTERM): stop accepting clients, drain every
 * ring of every session to the end, wait for the writeout jobs, answer
 * pending flushes, stop the workers, close sessions and sockets.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "clock.h"
#include "traced.h"

struct traced *td;

static void
usage(FILE *f)
{
	fprintf(f,
"usage: traced [-fhvV] [--foreground] [--runtime-dir DIR] [--trace-dir DIR]\n"
"              [--state-dir DIR] [--ring-size BYTES] [--workers N]\n"
"              [--drain-interval MS]\n"
"              [--writeout-nice N]\n"
"\n"
"The traced daemon: drains the trace rings of traced programs into CTF\n"
"trace directories and answers tracectl.\n"
"\n"
"  -f, --foreground        stay in the foreground (logs on stderr)\n"
"  -r, --runtime-dir DIR   sockets client.sock and control.sock\n"
"                          (root: /run/traced; users: $XDG_RUNTIME_DIR/traced\n"
"                          or /tmp/traced-$UID)\n"
"  -t, --trace-dir DIR     where traces go (root: /var/lib/traced/traces;\n"
"                          users: $XDG_DATA_HOME/traced/traces)\n"
"  -s, --state-dir DIR     saved rules (root: /var/lib/traced; users:\n"
"                          $XDG_STATE_HOME/traced)\n"
"      --ring-size BYTES   default ring per traced thread (default 1M;\n"
"                          a process may ask otherwise with TRACED_RING_SIZE)\n"
"      --workers N         writeout threads (default: number of CPUs)\n"
"      --drain-interval MS drain quiet rings this often (default 100)\n"
"      --writeout-nice N   niceness of the writeout threads, 0-19 (default 19:\n"
"                          drains use CPU the traced programs leave idle)\n"
"  -v, --verbose           log debug messages\n"
"  -V, --version           print the version\n"
"  -h, --help              this text\n"
"\n"
"See traced(8).\n");
}

uint64_t
now_ns(int clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* mkdir -p with 'mode' for the directories it creates.  0 or -1. */
int
mkdir_p(const char *path, mode_t mode)
{
	char buf[PATH_MAX], *p;
	struct stat st;

	if (strlen(path) >= sizeof(buf)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	strcpy(buf, path);
	for (p = buf + 1; ; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		char c = *p;

		*p = '\0';
		if (mkdir(buf, mode) == -1 && errno != EEXIST)
			return -1;
		*p = c;
		if (c == '\0')
			break;
	}
	if (stat(path, &st) == -1)
		return -1;
	if (!S_ISDIR(st.st_mode)) {
		errno = ENOTDIR;
		return -1;
	}
	return 0;
}

static char *
xstrdup(const char *s)
{
	char *p = strdup(s);

	if (p == NULL)
		fatal("strdup");
	return p;
}

static char *
xpath(const char *a, const char *b)
{
	char *p;

	if (asprintf(&p, "%s%s", a, b) == -1)
		fatal("asprintf");
	return p;
}

static void
config_defaults(struct config *c)
{
	const char *home = getenv("HOME"), *x;
	char buf[64];
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	c->ring_order = TRACED_RING_ORDER_DEFAULT;
	c->workers = ncpu > 0 ? (unsigned)ncpu : 2;
	c->drain_ms = 100;
	if (geteuid() == 0) {
		if (c->runtime_dir == NULL)
			c->runtime_dir = xstrdup("/run/traced");
		if (c->state_dir == NULL)
			c->state_dir = xstrdup("/var/lib/traced");
		if (c->trace_dir == NULL)
			c->trace_dir = xstrdup("/var/lib/traced/traces");
		return;
	}
	c->user = 1;
	if (home == NULL || *home == '\0')
		home = "/tmp";
	if (c->runtime_dir == NULL) {
		x = getenv("XDG_RUNTIME_DIR");
		if (x != NULL && *x != '\0')
			c->runtime_dir = xpath(x, "/traced");
		else {
			snprintf(buf, sizeof(buf), "/tmp/traced-%u",
			    (unsigned)getuid());
			c->runtime_dir = xstrdup(buf);
		}
	}
	if (c->state_dir == NULL) {
		x = getenv("XDG_STATE_HOME");
		c->state_dir = x != NULL && *x != '\0' ?
		    xpath(x, "/traced") : xpath(home, "/.local/state/traced");
	}
	if (c->trace_dir == NULL) {
		x = getenv("XDG_DATA_HOME");
		c->trace_dir = x != NULL && *x != '\0' ?
		    xpath(x, "/traced/traces") :
		    xpath(home, "/.local/share/traced/traces");
	}
}

static int
parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || end == s)
		return -1;
	switch (*end) {
	case 'k': case 'K': v <<= 10; end++; break;
	case 'm': case 'M': v <<= 20; end++; break;
	case 'g': case 'G': v <<= 30; end++; break;
	default: break;
	}
	if (*end == 'i')
		end++;
	if (*end == 'B')
		end++;
	if (*end != '\0')
		return -1;
	*out = v;
	return 0;
}

/*
 * The runtime directory holds the sockets.  A private one (per user, in
 * /tmp) must be ours and closed to others, or anyone could stand in for
 * the daemon.
 */
static void
runtime_dir_prepare(const char *dir)
{
	struct stat st;

	if (mkdir_p(dir, 0755) == -1)
		fatal("cannot create runtime directory %s", dir);
	if (lstat(dir, &st) == -1)
		fatal("%s", dir);
	if (!S_ISDIR(st.st_mode))
		fatalx("runtime directory %s is not a directory", dir);
	if (td->cfg.user && st.st_uid != geteuid())
		fatalx("runtime directory %s belongs to uid %u, not to you: "
		    "remove it or choose another with --runtime-dir", dir,
		    (unsigned)st.st_uid);
	if (td->cfg.user && (st.st_mode & 022) != 0)
		fatalx("runtime directory %s is writable by others: "
		    "chmod go-w %s", dir, dir);
}

static int
listen_unix(const char *dir, const char *name, mode_t mode)
{
	struct sockaddr_un sun;
	int fd, probe;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if ((size_t)snprintf(sun.sun_path, sizeof(sun.sun_path), "%s/%s", dir,
	    name) >= sizeof(sun.sun_path))
		fatalx("socket path %s/%s is too long", dir, name);
	/* A socket file that answers means a daemon already runs there. */
	probe = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (probe != -1 && connect(probe, (struct sockaddr *)&sun,
	    sizeof(sun)) == 0)
		fatalx("another traced is already listening on %s (stop it, "
		    "or give this one another --runtime-dir)", sun.sun_path);
	if (probe != -1)
		close(probe);
	(void)unlink(sun.sun_path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd == -1)
		fatal("socket");
	if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1)
		fatal("bind %s", sun.sun_path);
	if (chmod(sun.sun_path, mode) == -1)
		fatal("chmod %s", sun.sun_path);
	if (listen(fd, 128) == -1)
		fatal("listen %s", sun.sun_path);
	return fd;
}

/* The boot id, which names this boot's clocks so that sessions merge. */
static void
clock_boot_id(uint8_t uuid[16])
{
	char buf[64];
	ssize_t n;
	int fd, i, j;

	memset(uuid, 0, 16);
	fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
	n = fd != -1 ? read(fd, buf, sizeof(buf) - 1) : -1;
	if (fd != -1)
		close(fd);
	if (n < 32)
		return;
	buf[n] = '\0';
	for (i = 0, j = 0; buf[i] != '\0' && j < 32; i++) {
		int v;

		if (buf[i] == '-')
			continue;
		if (buf[i] >= '0' && buf[i] <= '9')
			v = buf[i] - '0';
		else if (buf[i] >= 'a' && buf[i] <= 'f')
			v = buf[i] - 'a' + 10;
		else
			break;
		uuid[j / 2] |= (uint8_t)(v << (j % 2 ? 0 : 4));
		j++;
	}
}

/* Describe a clock whose tick 0 is 'zero_real_ns' ns of realtime. */
static void
clock_set_offset(struct dclock *c, long double zero_real_ns)
{
	long double s = zero_real_ns / 1e9L;

	c->offset_s = (int64_t)s;
	c->offset = (uint64_t)((s - (long double)c->offset_s) *
	    (long double)c->freq);
}

#if defined(__x86_64__) || defined(__i386__)
static uint64_t
rdtsc(void)
{
	uint32_t lo, hi;

	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

/*
 * A (TSC, clock) pair read as close together as this machine allows:
 * the tightest of several brackets of the clock around rdtsc.
 */
static void
tsc_pair(int clock, uint64_t *tsc, uint64_t *ns)
{
	uint64_t best = UINT64_MAX, a, b, t;
	int i;

	for (i = 0; i < 50; i++) {
		a = now_ns(clock);
		t = rdtsc();
		b = now_ns(clock);
		if (b - a < best) {
			best = b - a;
			*tsc = t;
			*ns = a + (b - a) / 2;
		}
	}
}
#endif

/*
 * The clocks sessions may use: CLOCK_MONOTONIC, and the TSC where it is
 * invariant, its rate measured against CLOCK_MONOTONIC over 200 ms
 * (about 1e-7 relative error here, a few hundred microseconds an
 * hour).  Both are offset to wall-clock time at start, so readers show
 * real dates.
 */
static void
clock_setup(void)
{
	struct dclock *m = &td->clk[DCLOCK_MONO], *c = &td->clk[DCLOCK_TSC];
	uint64_t mono = now_ns(CLOCK_MONOTONIC), real = now_ns(CLOCK_REALTIME);

	clock_boot_id(m->uuid);
	m->name = "monotonic";
	m->freq = 1000000000u;
	clock_set_offset(m, (long double)real - (long double)mono);

	c->name = "tsc";
	memcpy(c->uuid, m->uuid, 16);
	c->uuid[15] ^= 0x5a;	/* another clock, same boot */
#if defined(__x86_64__) || defined(__i386__)
	{
		uint64_t t0, n0, t1, n1, tr, nr;
		struct timespec ts = { 0, 200000000 };

		/* Calibrated even under TRACED_CLOCK=monotonic: any client
		 * that uses the TSC still gets it described. */
		if (!traced_tsc_invariant())
			return;
		tsc_pair(CLOCK_MONOTONIC, &t0, &n0);
		nanosleep(&ts, NULL);
		tsc_pair(CLOCK_MONOTONIC, &t1, &n1);
		if (t1 <= t0 || n1 <= n0)
			return;
		c->freq = (uint64_t)((long double)(t1 - t0) * 1e9L /
		    (long double)(n1 - n0) + 0.5L);
		tsc_pair(CLOCK_REALTIME, &tr, &nr);
		clock_set_offset(c, (long double)nr -
		    (long double)tr * 1e9L / (long double)c->freq);
		td->have_tsc = 1;
		log_info("TSC: %.6f GHz, calibrated against CLOCK_MONOTONIC",
		    (double)c->freq / 1e9);
	}
#endif
}

/*
 * Go to the background once the sockets listen: the parent exits 0 only
 * when the child is ready, so "traced && tracectl ..." needs no sleep.
 * The log goes to <state-dir>/traced.log.
 */
static void
daemonize(void)
{
	char path[PATH_MAX], ok;
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
	snprintf(path, sizeof(path), "%s/traced.log", td->cfg.state_dir);
	fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
	if (fd == -1)
		fatal("%s", path);
	fprintf(stderr, "traced: running in the background, logging to %s\n",
	    path);
	dup2(fd, STDERR_FILENO);
	close(fd);
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

static void
timer_cb(int fd, short what, void *arg)
{
	struct session *s;
	struct sring *r;

	(void)fd;
	(void)what;
	(void)arg;
	TAILQ_FOREACH(s, &td->sessions, entry)
		TAILQ_FOREACH(r, &s->rings, entry)
			if (!r->queued && __atomic_load_n(&r->hdr->head,
			    __ATOMIC_RELAXED) != r->tail)
				writeout_submit(r, 0);
}

static void
shutdown_check(void)
{
	if (td->stopping && TAILQ_EMPTY(&td->sessions) && writeout_idle())
		event_base_loopexit(td->base, NULL);
}

static void
signal_cb(int sig, short what, void *arg)
{
	struct session *s, *next;

	(void)what;
	(void)arg;
	if (td->stopping) {
		log_warnx("second signal %d: exiting now", sig);
		exit(1);
	}
	log_info("signal %d: draining every ring, then exiting", sig);
	td->stopping = 1;
	event_del(td->ev_client);
	for (s = TAILQ_FIRST(&td->sessions); s != NULL; s = next) {
		next = TAILQ_NEXT(s, entry);
		session_close(s);
	}
	shutdown_check();
}

static void
stop_timer_cb(int fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
	shutdown_check();
}

int
main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "foreground", no_argument, NULL, 'f' },
		{ "runtime-dir", required_argument, NULL, 'r' },
		{ "trace-dir", required_argument, NULL, 't' },
		{ "state-dir", required_argument, NULL, 's' },
		{ "ring-size", required_argument, NULL, 'R' },
		{ "workers", required_argument, NULL, 'W' },
		{ "drain-interval", required_argument, NULL, 'D' },
		{ "writeout-nice", required_argument, NULL, 'N' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct event *ev_int, *ev_term, *ev_stop;
	struct event_config *ecfg;
	struct timeval tv;
	uint64_t ring_size = 0;
	int nice_set = 0;
	unsigned long v;
	char *end;
	int ch;

	td = calloc(1, sizeof(*td));
	if (td == NULL)
		return 1;
	while ((ch = getopt_long(argc, argv, "fr:t:s:vVh", longopts,
	    NULL)) != -1) {
		switch (ch) {
		case 'f':
			td->cfg.foreground = 1;
			break;
		case 'r':
			td->cfg.runtime_dir = xstrdup(optarg);
			break;
		case 't':
			td->cfg.trace_dir = xstrdup(optarg);
			break;
		case 's':
			td->cfg.state_dir = xstrdup(optarg);
			break;
		case 'R':
			if (parse_size(optarg, &ring_size) == -1) {
				fprintf(stderr, "traced: --ring-size: '%s' is "
				    "not a size (try 1M)\n", optarg);
				return 2;
			}
			break;
		case 'W':
		case 'D':
			errno = 0;
			v = strtoul(optarg, &end, 10);
			if (errno || *end || v == 0 || v > 100000) {
				fprintf(stderr, "traced: --%s: '%s' is not a "
				    "positive number\n", ch == 'W' ? "workers" :
				    "drain-interval", optarg);
				return 2;
			}
			if (ch == 'W')
				td->cfg.workers = (unsigned)(v > 64 ? 64 : v);
			else
				td->cfg.drain_ms = (unsigned)v;
			break;
		case 'N':
			errno = 0;
			v = strtoul(optarg, &end, 10);
			if (errno || *end || v > 19) {
				fprintf(stderr, "traced: --writeout-nice: "
				    "'%s' is not 0 to 19\n", optarg);
				return 2;
			}
			td->cfg.writeout_nice = (int)v;
			nice_set = 1;
			break;
		case 'v':
			log_verbose = 1;
			break;
		case 'V':
			printf("traced %s\n", TRACED_VERSION);
			return 0;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "traced: unexpected argument '%s'\n",
		    argv[optind]);
		usage(stderr);
		return 2;
	}
	{
		unsigned w = td->cfg.workers, d = td->cfg.drain_ms;

		int n = td->cfg.writeout_nice;

		config_defaults(&td->cfg);
		td->cfg.writeout_nice = nice_set ? n : 19;
		if (w)
			td->cfg.workers = w;
		if (d)
			td->cfg.drain_ms = d;
	}
	if (ring_size != 0) {
		uint32_t o = TRACED_RING_ORDER_MIN;

		while (o < TRACED_RING_ORDER_MAX && traced_ring_size(o) <
		    ring_size)
			o++;
		td->cfg.ring_order = o;
	}
	log_init(td->cfg.foreground);
	td->uid = geteuid();
	td->gid = getegid();
	td->next_session = 1;
	TAILQ_INIT(&td->sessions);
	TAILQ_INIT(&td->ended);
	if (gethostname(td->hostname, sizeof(td->hostname) - 1) == -1)
		snprintf(td->hostname, sizeof(td->hostname), "localhost");
	umask(027);
	signal(SIGPIPE, SIG_IGN);
	clock_setup();

	runtime_dir_prepare(td->cfg.runtime_dir);
	if (mkdir_p(td->cfg.trace_dir, 0750) == -1)
		fatal("cannot create trace directory %s", td->cfg.trace_dir);
	if (mkdir_p(td->cfg.state_dir, 0750) == -1)
		fatal("cannot create state directory %s", td->cfg.state_dir);
	state_rules_load();

	ecfg = event_config_new();
	event_config_avoid_method(ecfg, "select");
	event_config_avoid_method(ecfg, "poll");
	td->base = event_base_new_with_config(ecfg);
	event_config_free(ecfg);
	if (td->base == NULL)
		fatalx("libevent: no epoll backend");

	/* Before any thread exists: fork() keeps only the caller. */
	td->client_fd = listen_unix(td->cfg.runtime_dir, TRACED_CLIENT_SOCK,
	    td->cfg.user ? 0600 : 0666);
	td->control_fd = listen_unix(td->cfg.runtime_dir, TRACED_CONTROL_SOCK,
	    td->cfg.user ? 0600 : 0660);
	if (!td->cfg.foreground) {
		daemonize();
		if (event_reinit(td->base) == -1)
			fatalx("libevent: cannot reinitialize after fork");
	}
	td->wo = writeout_new(td->base, td->cfg.workers, td->cfg.writeout_nice);
	if (client_listen(td->client_fd) == -1 ||
	    control_listen(td->control_fd) == -1)
		fatalx("cannot watch the sockets");

	ev_int = evsignal_new(td->base, SIGINT, signal_cb, NULL);
	ev_term = evsignal_new(td->base, SIGTERM, signal_cb, NULL);
	evsignal_add(ev_int, NULL);
	evsignal_add(ev_term, NULL);
	td->ev_timer = event_new(td->base, -1, EV_PERSIST, timer_cb, NULL);
	tv.tv_sec = td->cfg.drain_ms / 1000;
	tv.tv_usec = (suseconds_t)(td->cfg.drain_ms % 1000) * 1000;
	event_add(td->ev_timer, &tv);
	ev_stop = event_new(td->base, -1, EV_PERSIST, stop_timer_cb, NULL);
	tv.tv_sec = 0;
	tv.tv_usec = 20000;
	event_add(ev_stop, &tv);

	log_info("traced %s ready: sockets in %s, traces to %s, %u writeout "
	    "threads, %s clock for new processes", TRACED_VERSION, td->cfg.runtime_dir,
	    td->cfg.trace_dir, writeout_nworkers(),
	    traced_clock_use_tsc() && td->have_tsc ? "tsc" : "monotonic");
	event_base_dispatch(td->base);

	control_close_all();
	writeout_free(td->wo);
	close(td->client_fd);
	close(td->control_fd);
	{
		char path[PATH_MAX];

		snprintf(path, sizeof(path), "%s/%s", td->cfg.runtime_dir,
		    TRACED_CLIENT_SOCK);
		unlink(path);
		snprintf(path, sizeof(path), "%s/%s", td->cfg.runtime_dir,
		    TRACED_CONTROL_SOCK);
		unlink(path);
	}
	event_free(ev_int);
	event_free(ev_term);
	event_free(ev_stop);
	event_free(td->ev_timer);
	event_free(td->ev_client);
	event_free(td->ev_control);
	event_base_free(td->base);
	log_info("stopped");
	return 0;
}
