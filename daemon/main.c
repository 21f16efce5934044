/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * traced: options and configuration, directories, sockets (its own or
 * systemd's), the clock every session's metadata describes, and the
 * libevent loop (epoll backend) with its signals and drain timer.
 *
 * Configuration: each setting comes from the defaults of the mode (the
 * system daemon, or a per-user one), then the file (traced.conf(5)),
 * then the command line; config.c parses, this file merges.  SIGHUP
 * reads the file again and applies what changed in it to the settings
 * that can change at run time (trace-dir, ring-size, drain-interval,
 * writeout-nice); the others are logged as needing a restart, and an
 * option given on the command line keeps winning.
 *
 * Sockets: when systemd passes listening sockets (LISTEN_FDS, named
 * "client" and "control" by FileDescriptorName=), they are used as they
 * are, never chmod'ed or unlinked; any socket not passed is created in
 * the runtime directory, and removed at exit.
 *
 * Shutdown order (SIGINT, SIGTERM): tell systemd STOPPING=1, stop
 * accepting clients, drain every ring of every session to the end, wait
 * for the writeout and intake jobs, answer pending flushes, stop the
 * intake thread and the workers, close sessions and sockets.
 */
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <systemd/sd-daemon.h>

#include "clock.h"
#include "traced.h"

#define CONFIG_ALL	(CONFIG_BIT(CONFIG_NKEYS) - 1)

struct traced *td;

/*
 * Where the settings came from (see the top of the file).  The loop
 * thread reads them again on SIGHUP.
 */
static struct {
	struct config	 defaults;	/* of this mode */
	struct config	 file;		/* what the file gave ... */
	unsigned	 file_keys;	/* ... these keys */
	struct config	 cli;		/* what the options gave ... */
	unsigned	 cli_keys;	/* ... these keys */
	char		*path;		/* the file, read again on SIGHUP */
	int		 explicit;	/* --config: it must exist */
} conf;

static int	client_ours;		/* we made client.sock: unlink it */
static int	log_ours;		/* stderr is <state-dir>/traced.log */
static int	control_ours;		/* we made control.sock */
static int	sockets_passed;		/* how many systemd gave us */

static void
usage(FILE *f)
{
	fprintf(f,
"usage: traced [-fhvV] [--foreground] [--config FILE] [--system]\n"
"              [--runtime-dir DIR] [--trace-dir DIR] [--state-dir DIR]\n"
"              [--ring-size BYTES] [--ring-pool N] [--workers N]\n"
"              [--drain-interval MS] [--writeout-nice N]\n"
"              [--stream-max-size BYTES]\n"
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
"  -o, --set KEY=VALUE     any setting of traced.conf(5), such as the limits\n"
"                          on what one user may make the daemon hold\n"
"                          (sessions-per-uid=512, rings-per-uid=4096...)\n"
"  -v, --verbose           log debug messages\n"
"  -V, --version           print the version\n"
"  -h, --help              this text\n"
"\n"
"SIGHUP reloads the settings file.  See traced(8) and traced.conf(5).\n");
}

uint64_t
now_ns(int clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * The runtime directory holds the sockets.  It must be the daemon's
 * and closed to others' writes, or anyone could stand in for the daemon
 * (fsdir.c).  Made if missing: 0755 for the system daemon, so that
 * every user's programs reach client.sock, whatever the umask; 0700 for
 * a user's.
 */
static void
runtime_dir_prepare(const char *dir)
{
	char err[PATH_MAX + 256];

	td->runtime_dirfd = fsdir_open(dir, FSDIR_CREATE_ALL,
	    td->cfg.user ? 0700 : 0755, err, sizeof(err));
	if (td->runtime_dirfd == -1)
		fatalx("runtime directory: %s (or choose another with "
		    "--runtime-dir)", err);
}

static int
listen_unix(const char *dir, const char *name, mode_t mode)
{
	struct sockaddr_un sun;
	char at[64];
	mode_t old;
	int fd, probe;

	/* Through the directory's descriptor: the name bound is in the
	 * directory that was checked. */
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if ((size_t)snprintf(sun.sun_path, sizeof(sun.sun_path), "%s/%s",
	    fsdir_path(td->runtime_dirfd, dir, at, sizeof(at)), name) >=
	    sizeof(sun.sun_path))
		fatalx("socket path %s/%s is too long", dir, name);
	/* A socket file that answers means a daemon already runs there. */
	probe = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (probe != -1 && connect(probe, (struct sockaddr *)&sun,
	    sizeof(sun)) == 0)
		fatalx("another traced is already listening on %s/%s (stop "
		    "it, or give this one another --runtime-dir)", dir, name);
	if (probe != -1)
		close(probe);
	(void)unlinkat(td->runtime_dirfd, name, 0);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd == -1)
		fatal("socket");
	/* The socket file is born with its mode: no window with another. */
	old = umask((mode_t)(~mode & 0777));
	if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1)
		fatal("bind %s/%s", dir, name);
	umask(old);
	if (listen(fd, 128) == -1)
		fatal("listen %s/%s", dir, name);
	return fd;
}

/*
 * Which of our sockets a passed descriptor is: by its name
 * (FileDescriptorName=, systemd-socket-activate --fdname), else by the
 * file it is bound to.  Returns 0 (client), 1 (control) or -1.
 */
static int
socket_role(int fd, const char *name)
{
	struct sockaddr_un sun;
	socklen_t len = sizeof(sun);
	const char *base;

	if (name != NULL && strcmp(name, "client") == 0)
		return 0;
	if (name != NULL && strcmp(name, "control") == 0)
		return 1;
	memset(&sun, 0, sizeof(sun));
	if (getsockname(fd, (struct sockaddr *)&sun, &len) == -1 ||
	    len <= offsetof(struct sockaddr_un, sun_path) ||
	    sun.sun_path[0] == '\0')
		return -1;
	sun.sun_path[sizeof(sun.sun_path) - 1] = '\0';
	base = strrchr(sun.sun_path, '/');
	base = base != NULL ? base + 1 : sun.sun_path;
	if (strcmp(base, TRACED_CLIENT_SOCK) == 0)
		return 0;
	if (strcmp(base, TRACED_CONTROL_SOCK) == 0)
		return 1;
	return -1;
}

/*
 * Take the listening sockets systemd passed (socket activation), if
 * any, into td->client_fd and td->control_fd.  They stay as systemd
 * made them (owner, mode, path); only O_NONBLOCK and FD_CLOEXEC are
 * set.  A socket that is not ours or not a listening SOCK_SEQPACKET
 * Unix socket stops the start.
 */
static void
sockets_inherit(void)
{
	static const char *const role_name[] = { "client", "control" };
	char **names = NULL;
	int n, i, fd, role, fl, *slot;

	n = sd_listen_fds_with_names(1, &names);
	if (n < 0)
		fatalx("LISTEN_FDS: cannot take the sockets systemd passed: "
		    "%s", strerror(-n));
	for (i = 0; i < n; i++) {
		fd = SD_LISTEN_FDS_START + i;
		role = socket_role(fd, names != NULL ? names[i] : NULL);
		if (role == -1)
			fatalx("passed socket %d (name '%s') is neither "
			    "client.sock nor control.sock: name it with "
			    "FileDescriptorName=client or control", fd,
			    names != NULL && names[i] != NULL ? names[i] : "");
		if (sd_is_socket(fd, AF_UNIX, SOCK_SEQPACKET, 1) <= 0)
			fatalx("passed socket %d (%s) is not a listening "
			    "AF_UNIX SOCK_SEQPACKET socket (ListenSequential"
			    "Packet=)", fd, role_name[role]);
		slot = role == 0 ? &td->client_fd : &td->control_fd;
		if (*slot != -1)
			fatalx("systemd passed two %s sockets (%d and %d)",
			    role_name[role], *slot, fd);
		if ((fl = fcntl(fd, F_GETFL)) == -1 ||
		    fcntl(fd, F_SETFL, fl | O_NONBLOCK) == -1 ||
		    fcntl(fd, F_SETFD, FD_CLOEXEC) == -1)
			fatal("passed socket %d", fd);
		*slot = fd;
	}
	if (names != NULL) {
		for (i = 0; i < n; i++)
			free(names[i]);
		free(names);
	}
	sockets_passed = n;
}

/*
 * The two listening sockets: systemd's, else our own in the runtime
 * directory (0666 and 0660 for the system daemon, 0600 for a user's).
 * Called before any thread exists.
 */
static void
sockets_open(void)
{
	td->client_fd = td->control_fd = -1;
	sockets_inherit();
	if (td->client_fd != -1 && td->control_fd != -1)
		return;
	runtime_dir_prepare(td->cfg.runtime_dir);
	if (td->client_fd == -1) {
		td->client_fd = listen_unix(td->cfg.runtime_dir,
		    TRACED_CLIENT_SOCK, td->cfg.user ? 0600 : 0666);
		client_ours = 1;
	}
	if (td->control_fd == -1) {
		td->control_fd = listen_unix(td->cfg.runtime_dir,
		    TRACED_CONTROL_SOCK, td->cfg.user ? 0600 : 0660);
		control_ours = 1;
	}
}

/* Close the sockets; remove the files of those we created. */
static void
sockets_close(void)
{
	close(td->client_fd);
	close(td->control_fd);
	if (client_ours)
		(void)unlinkat(td->runtime_dirfd, TRACED_CLIENT_SOCK, 0);
	if (control_ours)
		(void)unlinkat(td->runtime_dirfd, TRACED_CONTROL_SOCK, 0);
	if (td->runtime_dirfd != -1)
		close(td->runtime_dirfd);
	td->runtime_dirfd = -1;
}

/*
 * log.c writes journald's "<N>" priority prefixes whenever
 * JOURNAL_STREAM is set.  The variable is inherited, though: a daemon
 * started from a shell inside a service would prefix lines going to a
 * terminal or a file.  Keep it only when our stderr is the stream it
 * names (device:inode, systemd.exec(5)).
 */
static void
journal_stream_check(void)
{
	const char *v = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	if (v == NULL)
		return;
	if (sscanf(v, "%llu:%llu", &dev, &ino) != 2 ||
	    fstat(STDERR_FILENO, &st) == -1 ||
	    (unsigned long long)st.st_dev != dev ||
	    (unsigned long long)st.st_ino != ino)
		unsetenv("JOURNAL_STREAM");
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
static inline uint64_t
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

	/*
	 * One uuid for both: each is offset to the same wall-clock reading,
	 * so they are one time base, and babeltrace2 merges sessions on
	 * either clock only if their uuids match (it refuses otherwise).
	 */
	c->name = "tsc";
	memcpy(c->uuid, m->uuid, 16);
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
 * Now, in the ticks of clock 'dclock' (DCLOCK_*), as sessions on it
 * stamp their events.  Any thread.
 */
uint64_t
now_ticks(int dclock)
{
#if defined(__x86_64__) || defined(__i386__)
	if (dclock == DCLOCK_TSC)
		return rdtsc();
#endif
	(void)dclock;
	return now_ns(CLOCK_MONOTONIC);
}

/*
 * Go to the background once the sockets listen: the parent exits 0 only
 * when the child is ready, so "traced && tracectl ..." needs no sleep.
 * The log goes to <state-dir>/traced.log.
 */
static void
daemonize(void)
{
	char ok;
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
	fd = openat(td->state_dirfd, "traced.log", O_WRONLY | O_CREAT |
	    O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0640);
	if (fd == -1)
		fatal("%s/traced.log", td->cfg.state_dir);
	fprintf(stderr, "traced: running in the background, logging to "
	    "%s/traced.log\n", td->cfg.state_dir);
	dup2(fd, STDERR_FILENO);
	close(fd);
	log_ours = 1;
	journal_stream_check();		/* stderr is a file now */
	log_init(0);
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

#define LOG_FILE_MAX	(16u << 20)	/* traced.log, then traced.log.1 */

/*
 * The log file of a daemon in the background is kept to LOG_FILE_MAX
 * and one older file: the newest lines win.  (Under systemd, journald
 * keeps the log and its own retention.)
 */
static void
log_rotate_check(void)
{
	struct stat st;
	int fd;

	if (!log_ours || fstat(STDERR_FILENO, &st) == -1 ||
	    st.st_size < LOG_FILE_MAX)
		return;
	if (renameat(td->state_dirfd, "traced.log", td->state_dirfd,
	    "traced.log.1") == -1)
		return;
	fd = openat(td->state_dirfd, "traced.log", O_WRONLY | O_CREAT |
	    O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0640);
	if (fd == -1)
		return;
	dup2(fd, STDERR_FILENO);
	close(fd);
	log_info("log continued from %s/traced.log.1 (kept to %u MiB and one "
	    "older file)", td->cfg.state_dir, LOG_FILE_MAX >> 20);
}

static void
timer_cb(int fd, short what, void *arg)
{
	static uint64_t last_check;
	struct session *s, *next;

	(void)fd;
	(void)what;
	(void)arg;
	/* A deleted directory is noticed within a second. */
	if (now_ns(CLOCK_MONOTONIC) - last_check > 1000000000u) {
		(void)trace_dir_check(1);
		log_rotate_check();
		last_check = now_ns(CLOCK_MONOTONIC);
	}
	for (s = TAILQ_FIRST(&td->sessions); s != NULL; s = next) {
		next = TAILQ_NEXT(s, entry);
		/* Metadata that could not be written is tried again. */
		if (s->meta_waiting)
			session_meta_retry(s);	/* may free s */
	}
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
	c->foreground = td->cfg.foreground;
	c->user = conf.defaults.user;
	return 0;
}

#define TRACE_DIR_FILE	"trace-dir"	/* in the state directory */

/*
 * Keep the directory of 'tracectl trace-file set' for the next start
 * (path), or forget it (NULL): <state-dir>/trace-dir, one line, made
 * beside and renamed over.  Logged on failure.
 */
static void
trace_dir_remember(const char *path)
{
	int fd;

	if (path == NULL) {
		if (unlinkat(td->state_dirfd, TRACE_DIR_FILE, 0) == -1 &&
		    errno != ENOENT)
			log_warn("%s/%s", td->cfg.state_dir, TRACE_DIR_FILE);
		return;
	}
	(void)unlinkat(td->state_dirfd, TRACE_DIR_FILE ".tmp", 0);
	fd = openat(td->state_dirfd, TRACE_DIR_FILE ".tmp", O_WRONLY |
	    O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0640);
	if (fd == -1 || dprintf(fd, "%s\n", path) < 0 || fsync(fd) == -1 ||
	    renameat(td->state_dirfd, TRACE_DIR_FILE ".tmp", td->state_dirfd,
	    TRACE_DIR_FILE) == -1)
		log_warn("%s/%s: the trace directory will not be kept at a "
		    "restart", td->cfg.state_dir, TRACE_DIR_FILE);
	if (fd != -1)
		close(fd);
}

/*
 * The directory 'tracectl trace-file set' gave before the last restart,
 * into buf, or NULL.
 */
static const char *
trace_dir_remembered(char *buf, size_t size)
{
	ssize_t n;
	int fd;

	fd = openat(td->state_dirfd, TRACE_DIR_FILE, O_RDONLY | O_NOFOLLOW |
	    O_CLOEXEC);
	if (fd == -1)
		return NULL;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n <= 1 || buf[0] != '/')
		return NULL;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return buf;
}

/*
 * Where traces go without 'trace-file set': the command line's, the
 * configuration file's, or the mode's default.
 */
const char *
trace_dir_default(void)
{
	if (conf.cli_keys & CONFIG_BIT(CONFIG_TRACE_DIR))
		return conf.cli.trace_dir;
	if (conf.file_keys & CONFIG_BIT(CONFIG_TRACE_DIR))
		return conf.file.trace_dir;
	return conf.defaults.trace_dir;
}

/*
 * Move the trace output to 'path' ('how': "set", "reload"): open and
 * check it (fsdir.c; its last component is made if missing), then every
 * session continues in a new directory there.  Returns 0, or -1 with
 * the reason in err and the output where it was.  Loop thread.
 */
int
trace_dir_set(const char *path, const char *how, int *created, char *err,
    size_t errsize)
{
	struct session *s;
	struct stat st;
	char *p;
	int fd, failed = 0, missing;

	missing = lstat(path, &st) == -1 && errno == ENOENT;
	fd = fsdir_open(path, FSDIR_CREATE_LAST, 0750, err, errsize);
	if (fd == -1)
		return -1;
	if (created != NULL)
		*created = missing;
	/* 'set' is kept across restarts; 'default' forgets it. */
	if (strcmp(how, "set") == 0)
		trace_dir_remember(path);
	else if (strcmp(how, "default") == 0)
		trace_dir_remember(NULL);
	if ((p = strdup(path)) == NULL) {
		close(fd);
		snprintf(err, errsize, "out of memory");
		return -1;
	}
	free(td->cfg.trace_dir);
	td->cfg.trace_dir = p;
	close(td->trace_dirfd);
	td->trace_dirfd = fd;
	(void)index_trace_dir_set(path, how);	/* logs its failure */
	TAILQ_FOREACH(s, &td->sessions, entry)
		if (!s->closing && s->dirfd != -1 &&
		    session_rotate(s) == -1) {
			log_warnx("session %u could not move to %s", s->id,
			    path);
			failed++;
		}
	if (failed > 0)
		snprintf(err, errsize, "%d session%s could not move to %s "
		    "(see the daemon's log)", failed, failed == 1 ? "" : "s",
		    path);
	log_info("trace output now goes to %s (%s)", path, how);
	return failed > 0 ? -1 : 0;
}

/*
 * Was the trace directory, or a session's directory in it, deleted
 * while tracing?  Files made in a deleted directory are written and
 * lost, silently.  The trace directory is made again (and checked, as
 * at start: no symlink planted in its place is followed), each session
 * whose directory went continues in a new one, and what they had
 * written is counted as lost (with 'sessions_too').  Returns 1 if the trace directory was
 * made again, 0 if it was there, -1 if it is gone and cannot be made
 * (logged).  Loop thread.
 */
int
trace_dir_check(int sessions_too)
{
	static int failing;
	struct session *s;
	char err[PATH_MAX + 256];
	int fd, rc = 0;

	if (fsdir_deleted(td->trace_dirfd) == 1) {
		fd = fsdir_open(td->cfg.trace_dir, FSDIR_CREATE_ALL, 0750,
		    err, sizeof(err));
		if (fd == -1) {
			if (!failing)
				log_warnx("the trace directory %s was deleted "
				    "and cannot be made again: %s; events "
				    "wait in the rings", td->cfg.trace_dir,
				    err);
			failing = 1;
			return -1;
		}
		log_warnx("the trace directory %s was deleted while tracing; "
		    "made it again", td->cfg.trace_dir);
		failing = 0;
		close(td->trace_dirfd);
		td->trace_dirfd = fd;
		rc = 1;
	}
	if (sessions_too)
		TAILQ_FOREACH(s, &td->sessions, entry)
			td->deleted_events += session_check_dir(s);
	return rc;
}

/* SIGHUP changed trace-dir: like 'tracectl trace-file set'. */
static int
reload_trace_dir(const char *path)
{
	char err[PATH_MAX + 256];

	if (trace_dir_set(path, "reload", NULL, err, sizeof(err)) == -1) {
		log_warnx("SIGHUP: trace-dir: %s (traces still go to %s)", err,
		    td->cfg.trace_dir);
		return -1;
	}
	return 0;
}

/*
 * Give the running writeout threads (the writers and the drain thread)
 * niceness 'nice'.  They set their own when they start (writeout.c,
 * drain.c), so they are found by thread name in /proc/self/task.  Lowering the niceness needs
 * CAP_SYS_NICE or RLIMIT_NICE.  Returns 0, or -1 (logged).
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
		    strcmp(comm, "traced-intake\n") != 0)
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
		td->cfg.ring_order = c->ring_order;	/* new processes */
		pool_set(td->cfg.ring_pool, td->cfg.ring_order);
		return 0;
	case CONFIG_RING_POOL:
		td->cfg.ring_pool = c->ring_pool;
		pool_set(td->cfg.ring_pool, td->cfg.ring_order);
		return 0;
	case CONFIG_DRAIN_INTERVAL:
		td->cfg.drain_ms = c->drain_ms;
		writeout_set_interval(td->cfg.drain_ms);
		return 0;
	case CONFIG_WRITEOUT_NICE:
		if (reload_nice(c->writeout_nice) == -1)
			return -1;
		td->cfg.writeout_nice = c->writeout_nice;
		return 0;
	case CONFIG_DIRECT_IO:
		td->cfg.direct_io = c->direct_io;
		writeout_set_direct(td->cfg.direct_io);
		return 0;
	default:
		/* A limit applies to what clients ask from now on. */
		if (k >= CONFIG_LIMIT0 && k < CONFIG_NKEYS) {
			td->cfg.limit[k - CONFIG_LIMIT0] =
			    c->limit[k - CONFIG_LIMIT0];
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
static void
reload_cb(int sig, short what, void *arg)
{
	struct config nf, was, want;
	unsigned nkeys = 0, bit;
	char err[1024], a[PATH_MAX], b[PATH_MAX], item[2 * PATH_MAX + 64];
	char done[4096] = "", restart[2048] = "", kept[512] = "";
	char failed[512] = "";
	int k, changed;

	(void)sig;
	(void)what;
	(void)arg;
	if (td->stopping)
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
		config_format(&td->cfg, k, a, sizeof(a));
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
out:
	config_fini(&nf);
	config_fini(&was);
	config_fini(&want);
	notify_reloaded();
}

static void
shutdown_check(void)
{
	if (td->stopping && TAILQ_EMPTY(&td->sessions) && writeout_idle() &&
	    intake_idle())
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
	notify_stopping();
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
		{ "set", required_argument, NULL, 'o' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct event *ev_int, *ev_term, *ev_hup, *ev_stop;
	struct event_config *ecfg;
	struct timeval tv;
	const char *config_opt = NULL;
	char err[PATH_MAX + 1024], where[PATH_MAX + 64], kept[PATH_MAX];
	int ch, key, system_mode = 0;
	char *eq;

	td = calloc(1, sizeof(*td));
	if (td == NULL)
		return 1;
	while ((ch = getopt_long(argc, argv, "fc:r:t:s:o:vVh", longopts,
	    NULL)) != -1) {
		key = -1;
		switch (ch) {
		case 'f':
			td->cfg.foreground = 1;
			break;
		case 'c':
			config_opt = optarg;
			break;
		case 'S':
			system_mode = 1;
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
		case 'o':
			/* --set KEY=VALUE: any setting of traced.conf(5). */
			if ((eq = strchr(optarg, '=')) == NULL) {
				fprintf(stderr, "traced: --set %s: expected "
				    "KEY=VALUE\n", optarg);
				return 2;
			}
			*eq = '\0';
			if ((key = config_key_find(optarg)) == -1) {
				fprintf(stderr, "traced: --set: no setting "
				    "'%s' (see traced.conf(5))\n", optarg);
				return 2;
			}
			optarg = eq + 1;
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
		if (key != -1 && config_set(&conf.cli, &conf.cli_keys, key,
		    optarg, err, sizeof(err)) == -1) {
			fprintf(stderr, "traced: --%s: %s\n",
			    config_key_name(key), err);
			return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "traced: unexpected argument '%s'\n",
		    argv[optind]);
		usage(stderr);
		return 2;
	}

	/* Root is the system daemon; anyone else is a user's, unless
	 * --system (the service runs as user traced). */
	if (geteuid() == 0)
		system_mode = 1;
	journal_stream_check();
	log_init(td->cfg.foreground);
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
		snprintf(where, sizeof(where), "no %s: defaults", conf.path);
		break;
	default:
		snprintf(where, sizeof(where), "configuration %s", conf.path);
		break;
	}
	if (config_build(&td->cfg, &conf.file, conf.file_keys) == -1)
		fatal("configuration");

	td->uid = geteuid();
	td->gid = getegid();
	td->trace_dirfd = td->state_dirfd = td->runtime_dirfd = -1;
	td->next_session = 1;
	TAILQ_INIT(&td->sessions);
	TAILQ_INIT(&td->ended);
	if (gethostname(td->hostname, sizeof(td->hostname) - 1) == -1)
		snprintf(td->hostname, sizeof(td->hostname), "localhost");
	umask(027);
	signal(SIGPIPE, SIG_IGN);
	clock_setup();

	limits_init();
	td->state_dirfd = fsdir_open(td->cfg.state_dir, FSDIR_CREATE_ALL, 0750,
	    err, sizeof(err));
	if (td->state_dirfd == -1)
		fatalx("state directory: %s", err);
	fsdir_path(td->state_dirfd, td->cfg.state_dir, td->state_at,
	    sizeof(td->state_at));
	/* 'trace-file set' outlives a restart, unless --trace-dir. */
	if (!(conf.cli_keys & CONFIG_BIT(CONFIG_TRACE_DIR)) &&
	    trace_dir_remembered(kept, sizeof(kept)) != NULL &&
	    strcmp(kept, td->cfg.trace_dir) != 0) {
		td->trace_dirfd = fsdir_open(kept, FSDIR_CREATE_NONE, 0750,
		    err, sizeof(err));
		if (td->trace_dirfd != -1) {
			log_info("traces go to %s, as 'tracectl trace-file "
			    "set' said before the restart ('trace-file set "
			    "default' goes back to %s)", kept,
			    td->cfg.trace_dir);
			free(td->cfg.trace_dir);
			if ((td->cfg.trace_dir = strdup(kept)) == NULL)
				fatal("strdup");
		} else
			log_warnx("'trace-file set' said %s before the "
			    "restart, but %s: traces go to %s", kept, err,
			    td->cfg.trace_dir);
	}
	if (td->trace_dirfd == -1)
		td->trace_dirfd = fsdir_open(td->cfg.trace_dir,
		    FSDIR_CREATE_ALL, 0750, err, sizeof(err));
	if (td->trace_dirfd == -1)
		fatalx("trace directory: %s", err);

	ecfg = event_config_new();
	event_config_avoid_method(ecfg, "select");
	event_config_avoid_method(ecfg, "poll");
	td->base = event_base_new_with_config(ecfg);
	event_config_free(ecfg);
	if (td->base == NULL)
		fatalx("libevent: no epoll backend");

	/*
	 * Before any thread exists: fork() keeps only the caller.  And
	 * before the index: a second daemon stops here, saying why,
	 * before it touches the first one's state directory.
	 */
	sockets_open();
	index_open();
	if (!td->cfg.foreground) {
		daemonize();
		if (event_reinit(td->base) == -1)
			fatalx("libevent: cannot reinitialize after fork");
	}
	td->wo = writeout_new(td->base, td->cfg.workers, td->cfg.writeout_nice,
	    td->cfg.drain_ms);
	if (td->wo == NULL)
		fatalx("cannot start the writeout threads");
	writeout_set_direct(td->cfg.direct_io);
	if (intake_start(td->base, td->cfg.writeout_nice) == -1)
		fatalx("cannot start the intake thread");
	if (pool_start(td->base, td->cfg.ring_pool, td->cfg.ring_order) == -1)
		fatalx("cannot start the ring pool thread");
	if (client_listen(td->client_fd) == -1 ||
	    control_listen(td->control_fd) == -1)
		fatalx("cannot watch the sockets");

	ev_int = evsignal_new(td->base, SIGINT, signal_cb, NULL);
	ev_term = evsignal_new(td->base, SIGTERM, signal_cb, NULL);
	ev_hup = evsignal_new(td->base, SIGHUP, reload_cb, NULL);
	evsignal_add(ev_int, NULL);
	evsignal_add(ev_term, NULL);
	evsignal_add(ev_hup, NULL);
	/* Housekeeping (rings are drained by the drain thread). */
	td->ev_timer = event_new(td->base, -1, EV_PERSIST, timer_cb, NULL);
	tv.tv_sec = 0;
	tv.tv_usec = 100000;
	event_add(td->ev_timer, &tv);
	ev_stop = event_new(td->base, -1, EV_PERSIST, stop_timer_cb, NULL);
	tv.tv_sec = 0;
	tv.tv_usec = 20000;
	event_add(ev_stop, &tv);
	notify_init(td->base);

	log_info("traced %s ready: %s daemon, %s; sockets in %s%s, traces "
	    "to %s, %u writeout threads, %s clock for new processes",
	    TRACED_VERSION, system_mode ? "system" : "per-user", where,
	    td->cfg.runtime_dir, sockets_passed > 0 ? " (from systemd)" : "",
	    td->cfg.trace_dir, writeout_nworkers(),
	    traced_clock_use_tsc() && td->have_tsc ? "tsc" : "monotonic");
	event_base_dispatch(td->base);

	control_close_all();
	pool_stop();
	intake_stop();
	writeout_free(td->wo);
	index_close();
	sockets_close();
	notify_fini();
	event_free(ev_int);
	event_free(ev_term);
	event_free(ev_hup);
	event_free(ev_stop);
	event_free(td->ev_timer);
	event_free(td->ev_client);
	event_free(td->ev_control);
	event_base_free(td->base);
	config_fini(&conf.defaults);
	config_fini(&conf.file);
	config_fini(&conf.cli);
	free(conf.path);
	log_info("stopped");
	return 0;
}
