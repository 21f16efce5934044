/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * tracectl: send one command line to a traced daemon's control.sock and
 * print its reply.  The daemon does the work and formats the output;
 * tracectl only finds the socket, checks the command against the shared
 * table (proto/commands.def) so that a typo fails at once and the same
 * way with or without a daemon, sends one CTL_REQUEST and turns the
 * reply (CTL_LINE messages, then one CTL_END) into standard output, an
 * error message and an exit status:
 *
 *   0 done, 1 the command failed or was refused (by the daemon, or
 *   by the control socket's mode: EACCES), 2 usage error, 3 no daemon,
 *   or it stopped answering or answered nonsense.
 *
 * 'help' is answered here from the table, 'completion' too (complete.c),
 * and 'print', 'stats' and 'export' read trace directories here
 * (print.c, stats.c, export.c), so they work with no daemon.
 * With --json the daemon sends one JSON value per line and tracectl
 * wraps them, checked, in one document together with the status.
 *
 * It talks only to a daemon it can trust, by the rule libtraced follows
 * (proto/rundir.h): a runtime directory opened once, with no symlink,
 * owned by the user, root or the system daemon's user and closed to
 * others' writes; a listener (SO_PEERCRED) of one of those users.  What
 * it refuses it names, with the fix; "no daemon" lists every candidate
 * and why it failed.
 *
 * The reply comes from another process, possibly of another version or
 * hostile: every message goes through wire_decode(), the line count is
 * checked against CTL_END, and text mode prints control characters as
 * '?' so a process name cannot drive the terminal.  tracectl has no
 * state to clean up: any failure prints one message and exits.
 */
#include <sys/auxv.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "command.h"
#include "text.h"
#include "json.h"
#include "rundir.h"
#include "tracectl.h"
#include "wire.h"

#ifndef TRACED_VERSION
#define TRACED_VERSION	"unknown"
#endif

#define TIMEOUT_DEFAULT		30	/* s of silence from the daemon */
#define TIMEOUT_MAX		(INT_MAX / 1000)

/* The command line, resolved against the table. */
struct ctl_cmd {
	const struct command_def *def;
	int		 argc;		/* words, name included */
	char		**argv;		/* borrowed from main() */
	int		 nargs;		/* words after the name */
	char		**args;		/* argv + the name's words */
	char		*path;		/* owned: an argument made absolute */
};

/* One JSON item of a reply, kept until CTL_END gives the status. */
struct ctl_item {
	char		*text;		/* owned, not NUL-terminated */
	size_t		 len;
};

/* What the daemon answered. */
struct ctl_reply {
	struct ctl_item	*items;		/* owned; --json only */
	size_t		 nitems;
	size_t		 cap;
	size_t		 nlines;	/* CTL_LINE messages received */
	uint32_t	 status;	/* enum traced_ctl_status */
	char		*message;	/* owned, NUL-terminated */
	size_t		 msglen;	/* may hold NULs before the end */
};

static int	 json_output;		/* --json */
static const char *rdir_opt;		/* -r DIR, or NULL */
static int	 ctl_quiet;		/* a quiet ask (ctl_ask()): say nothing */
static int	 timeout_s = TIMEOUT_DEFAULT; /* 0: wait for ever */
static const char *sock_path;		/* for messages */
static gid_t	 sock_group = (gid_t)-1; /* control.sock's, for messages */

static void	ctl_warnx(const char *, ...)
    __attribute__((format(printf, 1, 2)));

/*
 * With --json, what tracectl said on stderr, kept for the document
 * finish() prints when no other was (no daemon, a typo, a timeout):
 * a script always gets one JSON document to parse.
 */
static int	 json_done;		/* a document went to stdout */
static char	 json_said[2048];

/*
 * While ctl_query() runs for top, whose screen stderr would spoil, the
 * first thing tracectl would have said goes here instead.
 */
static char	*quiet_said;
static size_t	 quiet_size;

static void
ctl_warnx(const char *fmt, ...)
{
	va_list	ap;
	size_t	n;

	/* top keeps the first problem for its screen; completion and a
	 * quiet ask say nothing. */
	if (quiet_said != NULL) {
		if (quiet_said[0] == '\0') {
			va_start(ap, fmt);
			vsnprintf(quiet_said, quiet_size, fmt, ap);
			va_end(ap);
		}
		return;
	}
	if (ctl_quiet)
		return;
	fflush(stdout);
	fputs("tracectl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	putc('\n', stderr);
	if (!json_output)
		return;
	n = strlen(json_said);
	if (n > 0 && n < sizeof(json_said) - 1)
		json_said[n++] = '\n';
	if (n < sizeof(json_said) - 1) {
		va_start(ap, fmt);
		vsnprintf(json_said + n, sizeof(json_said) - n, fmt, ap);
		va_end(ap);
	}
}

/*
 * With --json, a usage error found before asking the daemon is a
 * document too, as the daemon's would be.
 */
static void
json_usage(const char *msg)
{
	char buf[1024];
	json_t *o = json_pack("{s:b, s:s, s:s, s:[]}", "ok", 0, "status",
	    "usage", "message", text_escape(buf, sizeof(buf), msg), "items");
	char *text = o != NULL ? json_dumps(o, JSON_PRESERVE_ORDER) : NULL;

	if (text != NULL)
		puts(text);
	free(text);
	json_decref(o);
	json_done = 1;
}

/*
 * Print text from the daemon for a person: valid UTF-8 and tabs pass,
 * other control characters (C1 included) and broken bytes become '?'.
 */
static void
print_text(FILE *f, const char *s, size_t len)
{
	const unsigned char	*u = (const unsigned char *)s;
	size_t			 i, n;

	for (i = 0; i < len; i += n) {
		n = text_utf8_len(s + i, len - i);
		if (n == 0 || (n == 1 && u[i] < 0x20 && u[i] != '\t') ||
		    (n == 1 && u[i] == 0x7f) ||
		    (n == 2 && u[i] == 0xc2 && u[i + 1] < 0xa0)) {
			putc('?', f);
			if (n == 0)
				n = 1;
		} else
			fwrite(s + i, 1, n, f);
	}
}

static void
print_usage(FILE *f)
{
	fputs("usage: tracectl [-r RUNTIME_DIR] [--json] [-t TIMEOUT] "
	    "COMMAND [ARGS...]\n"
	    "       tracectl --help | --version\n", f);
}

/* The table, as 'help' and --help show it. */
static void
print_commands(FILE *f)
{
	const struct command_def *t;
	size_t	 i, n;
	char	 usage[256];

	t = command_table(&n);
	fputs("commands (* changes the daemon's state):\n", f);
	for (i = 0; i < n; i++) {
		command_format_usage(&t[i], usage, sizeof(usage));
		fprintf(f, "  %s%s\n      %s\n", usage,
		    t[i].flags & CMD_F_PRIVILEGED ? "  *" : "", t[i].help);
	}
}

static void
print_help(void)
{
	print_usage(stdout);
	fputs("\n"
	    "Send COMMAND to the traced daemon and print its answer;\n"
	    "'help', 'completion', 'print', 'stats' and 'export' are done "
	    "by tracectl\nitself, no daemon needed.\n"
	    "\n"
	    "options:\n"
	    "  -r, --runtime-dir DIR  the daemon's runtime directory "
	    "(holds control.sock)\n"
	    "  -j, --json             print one JSON document\n"
	    "  -t, --timeout SECONDS  give up when the daemon is silent "
	    "that long\n"
	    "                         (default 30, 0: wait for ever)\n"
	    "  -h, --help             this text\n"
	    "  -V, --version          print the version\n"
	    "\n", stdout);
	print_commands(stdout);
	fputs("\n"
	    "Command names may be abbreviated where that is unambiguous:\n"
	    "trace-ev for trace-event, in trace-ev for info trace-events.\n"
	    "Exit status: 0 done, 1 failed, 2 usage error, "
	    "3 daemon unreachable.\n"
	    "See tracectl(1).\n", stdout);
}

/* One command as a JSON object, for 'help' with --json (the keys are
 * those of the daemon's own help, daemon/cmd.c). */
static void
print_command_json(const struct command_def *c)
{
	fputs("{\"name\": ", stdout);
	json_write_string(stdout, c->name, strlen(c->name));
	fputs(", \"usage\": ", stdout);
	json_write_string(stdout, c->usage, strlen(c->usage));
	fputs(", \"help\": ", stdout);
	json_write_string(stdout, c->help, strlen(c->help));
	printf(", \"changes_state\": %s}",
	    c->flags & CMD_F_PRIVILEGED ? "true" : "false");
}

/*
 * 'help' and 'help COMMAND', answered from the table.  Returns an exit
 * status.
 */
static int
help_local(int nargs, char **args)
{
	const struct command_def *t, *c = NULL;
	char	 err[512], usage[256];
	size_t	 i, n;
	int	 consumed;

	t = command_table(&n);
	if (nargs > 0) {
		c = command_lookup(nargs, args, &consumed, err, sizeof(err));
		if (c != NULL && consumed != nargs) {
			command_check_args(&t[CMD_ID_HELP], INT_MAX, err,
			    sizeof(err));
			c = NULL;
		}
		if (c == NULL) {
			ctl_warnx("%s", err);
			return EXIT_USAGE;
		}
	}
	if (json_output) {
		fputs("{\"ok\": true, \"status\": \"ok\", \"message\": \"\", "
		    "\"items\": [", stdout);
		for (i = 0; i < n; i++) {
			if (c != NULL && c != &t[i])
				continue;
			fputs(c != NULL ? "\n  " : i > 0 ? ",\n  " : "\n  ",
			    stdout);
			print_command_json(&t[i]);
		}
		fputs("\n]}\n", stdout);
		json_done = 1;
	} else if (c != NULL) {
		command_format_usage(c, usage, sizeof(usage));
		printf("usage: tracectl %s\n%s\n", usage, c->help);
		if (c->flags & CMD_F_PRIVILEGED)
			puts("Changes the daemon's state: needs uid 0 or the "
			    "daemon's group.");
	} else
		print_commands(stdout);
	return EXIT_DONE;
}

/* A user's name, else the number, for messages. */
static const char *
user_name(uid_t uid, char *buf, size_t size)
{
	struct passwd	*pw = getpwuid(uid);

	if (pw != NULL)
		snprintf(buf, size, "%s", pw->pw_name);
	else
		snprintf(buf, size, "%u", (unsigned)uid);
	return buf;
}

/* Whether this process has group 'gid', primary or supplementary. */
static int
in_group(gid_t gid)
{
	gid_t	groups[NGROUPS_MAX];
	int	i, n;

	if (getegid() == gid)
		return 1;
	if ((n = getgroups(NGROUPS_MAX, groups)) == -1)
		return 0;
	for (i = 0; i < n; i++)
		if (groups[i] == gid)
			return 1;
	return 0;
}

/*
 * connect() failed with EACCES: say who may use the socket and how to
 * be let in.  'st' is the socket's.  The system daemon's control.sock
 * is mode 0660, group traced under systemd: reading commands and
 * state-changing ones alike need the group (or root).  A daemon root
 * started by hand has root's group: only root may use it.
 */
static void
ctl_denied(const char *path, const struct stat *st)
{
	struct passwd	*pw;
	struct group	*gr;
	char		 owner[64], group[64], me[64];
	char		**m;
	int		 listed = 0;

	user_name(st->st_uid, owner, sizeof(owner));
	user_name(getuid(), me, sizeof(me));
	if ((gr = getgrgid(st->st_gid)) != NULL) {
		snprintf(group, sizeof(group), "%s", gr->gr_name);
		pw = getpwuid(getuid());
		for (m = gr->gr_mem; pw != NULL && *m != NULL; m++)
			if (strcmp(*m, pw->pw_name) == 0)
				listed = 1;
	} else
		snprintf(group, sizeof(group), "%u", (unsigned)st->st_gid);
	ctl_warnx("%s: permission denied: the socket is %s:%s, mode %04o, "
	    "and you (uid %u) are %sin group %s", path, owner, group,
	    (unsigned)(st->st_mode & 07777), (unsigned)getuid(),
	    in_group(st->st_gid) ? "" : "not ", group);
	if (in_group(st->st_gid))
		ctl_warnx("check the mode of %s and of its directories",
		    path);
	else if ((st->st_mode & 060) != 060)
		ctl_warnx("only its owner (%s) and root may use this daemon: "
		    "run tracectl as %s", owner, owner);
	else if (st->st_gid == 0)
		ctl_warnx("this daemon runs as root outside systemd: only "
		    "root may use it ('sudo tracectl ...'); to let a group "
		    "of users in, run it from systemd, whose control socket "
		    "is group traced (see traced(8))");
	else if (listed)
		ctl_warnx("you were added to group %s after this login: log "
		    "in again (or run 'newgrp %s')", group, group);
	else
		ctl_warnx("to use this daemon, ask an administrator to add "
		    "you to group %s ('usermod -aG %s %s'), then log in "
		    "again; or run tracectl as root", group, group, me);
}

/*
 * A directory or a daemon we will not trust: say why and what to do,
 * at once, whether or not another candidate answers.  Missing things
 * and stale sockets are only listed in the "no daemon" line.
 */
static void
rd_refused(const struct rundir_self *self, const char *path,
    const struct rundir_verdict *v)
{
	char	why[160], who[64], sys[128], num[32];
	char	*p;

	switch (v->why) {
	case RUNDIR_SYMLINK:
	case RUNDIR_NOT_DIR:
	case RUNDIR_NOT_SOCKET:
	case RUNDIR_NOT_OWNER:
	case RUNDIR_NOT_YOURS:
	case RUNDIR_WRITABLE:
	case RUNDIR_PEER:
		break;
	default:
		return;
	}
	rundir_describe(why, sizeof(why), v);
	snprintf(num, sizeof(num), "uid %u", (unsigned)v->uid);
	if ((v->why == RUNDIR_NOT_OWNER || v->why == RUNDIR_NOT_YOURS ||
	    v->why == RUNDIR_PEER) && (p = strstr(why, num)) != NULL) {
		/* "uid N, ..." becomes "uid N (name), ...". */
		p += strlen(num);
		ctl_warnx("ignoring %s: %.*s (%s)%s", path, (int)(p - why), why,
		    user_name(v->uid, who, sizeof(who)), p);
	} else
		ctl_warnx("ignoring %s: %s", path, why);
	if (self->system_uid != RUNDIR_NO_UID)
		snprintf(sys, sizeof(sys), "the system daemon's user is %s, "
		    "the owner of " RUNDIR_SYSTEM,
		    user_name(self->system_uid, who, sizeof(who)));
	else
		snprintf(sys, sizeof(sys), "there is no system daemon's user: "
		    "no safe " RUNDIR_SYSTEM);
	switch (v->why) {
	case RUNDIR_SYMLINK:
		ctl_warnx("a traced daemon never makes a symlink there: "
		    "whoever did may be standing in for it; remove it "
		    "('rm %s') and start your daemon again", path);
		break;
	case RUNDIR_NOT_DIR:
	case RUNDIR_NOT_SOCKET:
		ctl_warnx("no daemon made that: remove it ('rm %s') and start "
		    "your daemon again", path);
		break;
	case RUNDIR_NOT_OWNER:
		ctl_warnx("whoever made %s could stand in for your daemon: "
		    "remove it as root ('rm -r %s') and start your daemon "
		    "again, or name a directory of yours with -r (%s)", path,
		    path, sys);
		break;
	case RUNDIR_NOT_YOURS:
		ctl_warnx("XDG_RUNTIME_DIR must be your own directory, mode "
		    "0700, as your login session makes it: unset it or "
		    "correct it");
		break;
	case RUNDIR_WRITABLE:
		ctl_warnx("whoever may write there could replace the daemon's "
		    "sockets: 'chmod go-w %s' (as its owner)", path);
		break;
	case RUNDIR_PEER:
		ctl_warnx("it may be an impostor: find it ('ss -xlp | grep "
		    "%s') and stop it, then start the real daemon (%s)", path,
		    sys);
		break;
	default:
		break;
	}
}

/*
 * Try candidate c: its directory, its control.sock, the daemon behind
 * it.  Returns 0 with *fdp connected to a daemon we trust; -1 with *v
 * and 'what' (the path it is about) when the next candidate may be
 * tried; or an exit status after a message, when a daemon is there but
 * we cannot talk to it.
 */
static int
rd_try(const struct rundir_self *self, const struct rundir_cand *c,
    int *fdp, struct rundir_verdict *v, char *what, size_t whatsize)
{
	struct sockaddr_un	 sun;
	struct stat		 st;
	struct timeval		 tv;
	struct ucred		 cred;
	socklen_t		 len = sizeof(cred);
	int			 dfd, fd = -1, saved, ret = -1;

	dfd = rundir_open(self, c, TRACED_CONTROL_SOCK, &sun, &st, v, what,
	    whatsize);
	if (dfd == -1)
		return -1;
	if ((fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0)) == -1) {
		ctl_warnx("socket: %s", strerror(errno));
		ret = EXIT_UNREACHABLE;
		goto out;
	}
	if (timeout_s > 0) {
		tv.tv_sec = timeout_s;
		tv.tv_usec = 0;
		if (setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv,
		    sizeof(tv)) == -1) {
			ctl_warnx("setsockopt SO_SNDTIMEO: %s",
			    strerror(errno));
			ret = EXIT_UNREACHABLE;
			goto out;
		}
	}
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		saved = errno == EAGAIN ? ETIMEDOUT : errno;
		*v = rundir_check_connect(saved);
		if (saved == EACCES) {
			ctl_denied(what, &st);
			ret = EXIT_FAILED;
		} else if (saved == ETIMEDOUT) {
			/* A daemon is there, too busy to accept. */
			ctl_warnx("cannot connect to %s: %s", what,
			    strerror(saved));
			ret = EXIT_UNREACHABLE;
		}
		goto out;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == -1) {
		*v = rundir_check_connect(errno);
		goto out;
	}
	/* Refused here, an impostor got a connect() and not a byte. */
	if ((*v = rundir_check_peer(self, cred.uid)).why != RUNDIR_OK)
		goto out;
	*fdp = fd;
	fd = -1;
	sock_group = st.st_gid;
	ret = 0;
out:
	if (fd != -1)
		close(fd);
	close(dfd);
	return ret;
}

/*
 * Find a daemon and connect to its control.sock, by the rule libtraced
 * follows for client.sock (proto/rundir.h): -r, else
 * $TRACED_RUNTIME_DIR, as the only candidate; else the user's own
 * daemon ($XDG_RUNTIME_DIR/traced, /tmp/traced-$UID), then the system
 * daemon's.  Returns 0 with the socket in *fdp and its path in 'path',
 * or an exit status after a message: EXIT_UNREACHABLE with every
 * candidate tried and why it failed, EXIT_FAILED when the socket
 * refuses us (EACCES: a daemon is there, we may not use it).
 */
static int
ctl_find(const char *rdir, int *fdp, char *path, size_t size)
{
	struct rundir_cand	 cand[RUNDIR_CAND_MAX];
	struct rundir_verdict	 v;
	struct rundir_self	 self;
	struct rundir_stat	 run, rt;
	struct stat		 st;
	char			 what[RUNDIR_PATH_MAX + 32], tried[2048];
	const char		*env;
	int			 i, n, ret;

	self.uid = getuid();
	self.euid = geteuid();
	self.secure = getauxval(AT_SECURE) != 0;
	rundir_stat_at(AT_FDCWD, RUNDIR_SYSTEM_PARENT, -1, &run, &st);
	rundir_stat_at(AT_FDCWD, RUNDIR_SYSTEM, -1, &rt, &st);
	self.system_uid = rundir_system_uid(&run, &rt);
	if (self.secure && rdir != NULL)
		ctl_warnx("ignoring -r %s: a setuid or setgid tracectl talks "
		    "to the system daemon only", rdir);
	if (rdir == NULL)
		rdir = secure_getenv("TRACED_RUNTIME_DIR");
	env = secure_getenv("XDG_RUNTIME_DIR");
	n = rundir_candidates(&self, rdir, env, cand);

	tried[0] = '\0';
	for (i = 0; i < n; i++) {
		ret = rd_try(&self, &cand[i], fdp, &v, what, sizeof(what));
		if (ret == 0) {
			snprintf(path, size, "%s", what);
			return 0;
		}
		if (ret > 0)
			return ret;
		rd_refused(&self, what, &v);
		rundir_tried_add(tried, sizeof(tried), what, &v);
	}
	ctl_warnx("no daemon: tried %s", tried);
	if (cand[0].kind == RUNDIR_EXPLICIT)
		ctl_warnx("start one there with 'traced --foreground "
		    "--runtime-dir %s'", cand[0].dir);
	else if (self.secure)
		ctl_warnx("a setuid or setgid tracectl talks to the system "
		    "daemon only: start it with 'systemctl start traced'");
	else
		ctl_warnx("start one with 'traced --foreground' or "
		    "'systemctl start traced.socket' (your own: 'systemctl "
		    "--user enable --now traced.socket'), or name its "
		    "directory with -r");
	return EXIT_UNREACHABLE;
}

/*
 * Send the command line as one CTL_REQUEST, asking for JSON items if
 * 'json'.  Returns 0 or an exit status after a message.
 */
static int
ctl_send(int fd, const struct ctl_cmd *cmd, int json)
{
	uint64_t	 buf[TRACED_MSG_MAX / sizeof(uint64_t)];
	ssize_t		 n;
	int		 len;

	len = wire_ctl_request_encode(buf, sizeof(buf),
	    json ? TRACED_CTL_JSON : 0, cmd->argc, cmd->argv);
	if (len < 0) {
		ctl_warnx("command line too long (at most %u bytes, %d words)",
		    TRACED_MSG_MAX -
		    (unsigned)sizeof(struct traced_msg_ctl_request),
		    TRACED_CTL_ARGS_MAX);
		return EXIT_USAGE;
	}
	do
		n = send(fd, buf, (size_t)len, MSG_NOSIGNAL);
	while (n == -1 && errno == EINTR);
	if (n != len) {
		ctl_warnx("%s: cannot send: %s", sock_path,
		    strerror(n == -1 && errno != EAGAIN ? errno : ETIMEDOUT));
		return EXIT_UNREACHABLE;
	}
	return 0;
}

static int64_t
now_ms(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * Wait until the socket is readable, at most the timeout.  Returns 0,
 * or an exit status after a message.
 */
static int
ctl_wait(int fd)
{
	struct pollfd	 pfd;
	int64_t		 deadline = 0, left;
	int		 r;

	if (timeout_s > 0)
		deadline = now_ms() + (int64_t)timeout_s * 1000;
	pfd.fd = fd;
	pfd.events = POLLIN;
	for (;;) {
		left = -1;
		if (timeout_s > 0 && (left = deadline - now_ms()) < 0)
			left = 0;
		r = poll(&pfd, 1, (int)left);
		if (r > 0)
			return 0;
		if (r == 0) {
			ctl_warnx("%s: no answer for %d s: %s", sock_path,
			    timeout_s, strerror(ETIMEDOUT));
			ctl_warnx("a slow command (trace-file flush) may need "
			    "a longer -t");
			return EXIT_UNREACHABLE;
		}
		if (errno != EINTR) {
			ctl_warnx("poll: %s", strerror(errno));
			return EXIT_UNREACHABLE;
		}
	}
}

/* Keep a JSON item until the end of the reply.  Returns 0 or -1. */
static int
reply_keep(struct ctl_reply *r, const char *s, size_t len)
{
	struct ctl_item	*items;
	size_t		 cap;

	if (r->nitems == r->cap) {
		cap = r->cap != 0 ? r->cap * 2 : 64;
		if ((items = reallocarray(r->items, cap,
		    sizeof(*items))) == NULL)
			return -1;
		r->items = items;
		r->cap = cap;
	}
	if ((r->items[r->nitems].text = malloc(len != 0 ? len : 1)) == NULL)
		return -1;
	memcpy(r->items[r->nitems].text, s, len);
	r->items[r->nitems++].len = len;
	return 0;
}

static void
reply_free(struct ctl_reply *r)
{
	size_t	i;

	for (i = 0; i < r->nitems; i++)
		free(r->items[i].text);
	free(r->items);
	free(r->message);
}

/*
 * Is an item of a --json reply one JSON object, by a strict parser
 * (jansson: UTF-8 checked, nothing after the value)?
 */
static int
item_valid(const char *s, size_t len)
{
	json_error_t e;
	json_t *j;
	int ok;

	j = json_loadb(s, len, JSON_REJECT_DUPLICATES, &e);
	ok = j != NULL && json_is_object(j);
	json_decref(j);
	return ok;
}

/*
 * Read the reply up to its CTL_END.  Prints lines as they come in text
 * mode and keeps them in JSON mode ('json').  Returns 0 with r filled, or an
 * exit status after a message.
 */
static int
ctl_receive(int fd, struct ctl_reply *r, int json)
{
	uint64_t	 buf[TRACED_MSG_MAX / sizeof(uint64_t)];
	struct wire_msg	 m;
	struct iovec	 iov;
	struct msghdr	 mh;
	const char	*why;
	ssize_t		 n;
	int		 ret;

	for (;;) {
		if ((ret = ctl_wait(fd)) != 0)
			return ret;
		iov.iov_base = buf;
		iov.iov_len = sizeof(buf);
		memset(&mh, 0, sizeof(mh));
		mh.msg_iov = &iov;
		mh.msg_iovlen = 1;
		n = recvmsg(fd, &mh, MSG_TRUNC | MSG_CMSG_CLOEXEC);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			ctl_warnx("%s: cannot receive: %s", sock_path,
			    strerror(errno));
			return EXIT_UNREACHABLE;
		}
		if (n == 0) {
			ctl_warnx("%s: the daemon closed the connection "
			    "before the end of its reply", sock_path);
			return EXIT_UNREACHABLE;
		}
		why = NULL;
		if ((mh.msg_flags & MSG_TRUNC) || (size_t)n > sizeof(buf))
			why = "oversized message";
		else if (mh.msg_flags & MSG_CTRUNC)
			why = "unexpected descriptor";
		else if (wire_decode(buf, (size_t)n, 0, &m, &why) < 0) {
			if (why == NULL)
				why = "undecodable message";
		} else if (m.type != TRACED_MSG_CTL_LINE &&
		    m.type != TRACED_MSG_CTL_END)
			why = "not a control reply";
		else if (m.type == TRACED_MSG_CTL_LINE && json &&
		    !item_valid(m.payload, m.payload_len))
			why = "an item is not one valid JSON object";
		if (why != NULL) {
			ctl_warnx("%s: malformed reply: %s", sock_path, why);
			return EXIT_UNREACHABLE;
		}

		if (m.type == TRACED_MSG_CTL_END)
			break;
		r->nlines++;
		if (!json) {
			print_text(stdout, m.payload, m.payload_len);
			putchar('\n');
		} else if (reply_keep(r, m.payload, m.payload_len) == -1) {
			ctl_warnx("out of memory");
			return EXIT_FAILED;
		}
	}

	if (m.u.ctl_end->count != r->nlines) {
		ctl_warnx("%s: malformed reply: %zu lines, but the daemon "
		    "counted %u", sock_path, r->nlines,
		    (unsigned)m.u.ctl_end->count);
		return EXIT_UNREACHABLE;
	}
	r->status = m.u.ctl_end->status;
	if ((r->message = malloc(m.payload_len + 1)) == NULL) {
		ctl_warnx("out of memory");
		return EXIT_FAILED;
	}
	memcpy(r->message, m.payload, m.payload_len);
	r->message[m.payload_len] = '\0';
	r->msglen = m.payload_len;
	return 0;
}

/* The exit status for a reply status. */
static int
status_exit(uint32_t status)
{
	switch (status) {
	case TRACED_CTL_OK:
		return EXIT_DONE;
	case TRACED_CTL_USAGE:
		return EXIT_USAGE;
	case TRACED_CTL_ERROR:
	case TRACED_CTL_DENIED:
	default:
		return EXIT_FAILED;
	}
}

/*
 * The daemon refused a state change: say who may make one, by the
 * control socket's group, which is the daemon's.
 */
static void
denied_hint(void)
{
	struct group	*gr;

	if (sock_group == (gid_t)-1)
		return;
	if (sock_group == 0) {
		ctl_warnx("this daemon runs as root outside systemd: its "
		    "state changes need root ('sudo tracectl ...')");
		return;
	}
	gr = getgrgid(sock_group);
	if (gr != NULL)
		ctl_warnx("state changes need root or the daemon's group, %s "
		    "(see traced(8))", gr->gr_name);
	else
		ctl_warnx("state changes need root or the daemon's group, gid "
		    "%u (see traced(8))", (unsigned)sock_group);
}

/* Print the end of a reply.  Returns the exit status. */
static int
reply_print(const struct ctl_reply *r)
{
	static const char *const names[] = {
		[TRACED_CTL_OK] = "ok",
		[TRACED_CTL_ERROR] = "error",
		[TRACED_CTL_USAGE] = "usage",
		[TRACED_CTL_DENIED] = "denied",
	};
	static const char *const fallback[] = {
		[TRACED_CTL_OK] = "",
		[TRACED_CTL_ERROR] = "the command failed",
		[TRACED_CTL_USAGE] = "usage error",
		[TRACED_CTL_DENIED] = "not allowed for this user",
	};
	size_t	i;

	/* wire_decode() rejects any other status. */
	if (json_output) {
		printf("{\"ok\": %s, \"status\": \"%s\", \"message\": ",
		    r->status == TRACED_CTL_OK ? "true" : "false",
		    names[r->status]);
		json_write_string(stdout, r->message, r->msglen);
		fputs(", \"items\": [", stdout);
		for (i = 0; i < r->nitems; i++) {
			fputs(i > 0 ? ",\n  " : "\n  ", stdout);
			fwrite(r->items[i].text, 1, r->items[i].len, stdout);
		}
		fputs(r->nitems > 0 ? "\n]}\n" : "]}\n", stdout);
		json_done = 1;
	} else if (r->status == TRACED_CTL_OK) {
		if (r->msglen > 0) {
			print_text(stdout, r->message, r->msglen);
			putchar('\n');
		}
	} else if (!ctl_quiet) {
		fflush(stdout);
		fputs("tracectl: ", stderr);
		if (r->msglen > 0)
			print_text(stderr, r->message, r->msglen);
		else
			fputs(fallback[r->status], stderr);
		putc('\n', stderr);
		if (r->status == TRACED_CTL_DENIED)
			denied_hint();
	}
	return status_exit(r->status);
}

/*
 * 'trace-file set PATH' and 'snapshot -o DIR' name a directory for the
 * daemon, whose working directory is not ours: send it absolute.
 * Returns 0 or -1.
 */
static int
cmd_fix_paths(struct ctl_cmd *cmd)
{
	char	*abs, *cwd;
	int	 i = -1;

	if (cmd->def->id == CMD_ID_TRACE_FILE && cmd->nargs == 2 &&
	    strcmp(cmd->args[0], "set") == 0 &&
	    strcmp(cmd->args[1], "default") != 0)
		i = 1;
	if (cmd->def->id == CMD_ID_SNAPSHOT)
		for (int k = 0; k + 1 < cmd->nargs; k++)
			if (strcmp(cmd->args[k], "-o") == 0)
				i = k + 1;
	if (i == -1 || cmd->args[i][0] == '/' || cmd->args[i][0] == '\0')
		return 0;
	if ((abs = realpath(cmd->args[i], NULL)) == NULL) {
		/* Not there yet: the daemon creates it. */
		if ((cwd = getcwd(NULL, 0)) == NULL) {
			ctl_warnx("getcwd: %s", strerror(errno));
			return -1;
		}
		if (asprintf(&abs, "%s/%s", cwd, cmd->args[i]) == -1)
			abs = NULL;
		free(cwd);
		if (abs == NULL) {
			ctl_warnx("out of memory");
			return -1;
		}
	}
	cmd->args[i] = cmd->path = abs;
	return 0;
}

/*
 * Find the daemon, send the command and print the reply.  Returns the
 * exit status.
 */
static int
ctl_run(const char *rdir, const struct ctl_cmd *cmd)
{
	struct ctl_reply reply;
	char		 path[RUNDIR_PATH_MAX + 32];
	int		 fd, ret;

	if ((ret = ctl_find(rdir, &fd, path, sizeof(path))) != 0)
		return ret;
	sock_path = path;
	memset(&reply, 0, sizeof(reply));
	if ((ret = ctl_send(fd, cmd, json_output)) == 0 &&
	    (ret = ctl_receive(fd, &reply, json_output)) == 0)
		ret = reply_print(&reply);
	close(fd);
	reply_free(&reply);
	sock_path = NULL;
	return ret;
}

/*
 * Ask the daemon found from rdir (as every command finds it) the
 * command argv[0..argc) with --json.  Returns an exit status and, on
 * EXIT_DONE, *items a new JSON array of the reply's items.  quiet:
 * problems are not said (but top's quiet_said keeps the first).
 */
static int
ctl_ask(const char *rdir, int argc, char **argv, int quiet, json_t **items)
{
	struct ctl_reply reply;
	struct ctl_cmd	 cmd;
	char		 path[RUNDIR_PATH_MAX + 32], clean[1024];
	json_t		*a = NULL, *o;
	size_t		 i;
	int		 fd, ret;

	*items = NULL;
	memset(&cmd, 0, sizeof(cmd));
	cmd.argc = argc;
	cmd.argv = argv;
	ctl_quiet = quiet;
	if ((ret = ctl_find(rdir, &fd, path, sizeof(path))) != 0) {
		ctl_quiet = 0;
		return ret;
	}
	sock_path = path;
	memset(&reply, 0, sizeof(reply));
	if ((ret = ctl_send(fd, &cmd, 1)) == 0 &&
	    (ret = ctl_receive(fd, &reply, 1)) == 0) {
		ret = status_exit(reply.status);
		/* The daemon's words, escaped as reply_print() shows them. */
		if (ret != EXIT_DONE)
			ctl_warnx("%s", reply.msglen > 0 ? text_escape(clean,
			    sizeof(clean), reply.message) :
			    "the command failed");
	}
	close(fd);
	sock_path = NULL;
	ctl_quiet = 0;
	if (ret == EXIT_DONE && (a = json_array()) == NULL) {
		ctl_warnx("out of memory");
		ret = EXIT_FAILED;
	}
	/* ctl_receive() checked each item: one valid JSON object. */
	for (i = 0; ret == EXIT_DONE && i < reply.nitems; i++) {
		o = json_loadb(reply.items[i].text, reply.items[i].len, 0, NULL);
		if (o == NULL || json_array_append_new(a, o) == -1) {
			json_decref(a);
			ctl_warnx("out of memory");
			ret = EXIT_FAILED;
		}
	}
	if (ret == EXIT_DONE)
		*items = a;
	reply_free(&reply);
	return ret;
}

/*
 * Ask the daemon from a command that runs here.  Contract in
 * tracectl.h.
 */
int
tracectl_ask(int argc, char **argv, int quiet, json_t **items)
{
	return ctl_ask(rdir_opt, argc, argv, quiet, items);
}

/*
 * Ask the daemon one command with --json, saying nothing: for top,
 * which asks again and again and shows what went wrong on its screen.
 * Returns 0 with *items a new array of the reply's items, or an exit
 * status with the reason in err.
 */
int
ctl_query(const char *rdir, int argc, char **argv, int timeout,
    json_t **items, char *err, size_t errsize)
{
	int		 consumed, ret, saved_timeout = timeout_s;

	*items = NULL;
	err[0] = '\0';
	if (command_lookup(argc, argv, &consumed, err, errsize) == NULL)
		return EXIT_USAGE;
	quiet_said = err;
	quiet_size = errsize;
	timeout_s = timeout;
	ret = ctl_ask(rdir, argc, argv, 1, items);
	quiet_said = NULL;
	timeout_s = saved_timeout;
	return ret;
}

/*
 * @session for the shells (complete.c): the first column of 'info
 * sessions', asked of the daemon in silence and for at most 2 s, since
 * someone is waiting at a prompt.
 */
static void
complete_sessions(const char *rdir, const char *prefix, FILE *out)
{
	char		*argv[] = { (char *)"info", (char *)"sessions" };
	json_t		*items, *o;
	size_t		 i;
	int		 saved = timeout_s;
	char		 id[24];

	if (timeout_s == 0 || timeout_s > 2)
		timeout_s = 2;
	if (ctl_ask(rdir, 2, argv, 1, &items) == EXIT_DONE) {
		json_array_foreach(items, i, o) {
			snprintf(id, sizeof(id), "%lld", (long long)
			    json_integer_value(json_object_get(o, "session")));
			if (id[0] != '0' &&
			    strncmp(id, prefix, strlen(prefix)) == 0)
				fprintf(out, "%s\n", id);
		}
		json_decref(items);
	}
	timeout_s = saved;
}

/*
 * 'completion SHELL' and the scripts' 'completion words WORD...'.
 * 'global' says how this file's options complete, in the language of
 * commands.def's "complete" column: keep it with main()'s longopts.
 */
static int
completion_local(int nargs, char **args)
{
	static const char global[] = "--runtime-dir=@dir -r=@dir --json -j "
	    "--timeout=0|5|30|60|300 -t=0|5|30|60|300 --help -h --version -V";
	char	 err[256];

	if (nargs >= 1 && strcmp(args[0], "words") == 0)
		return complete_words(nargs - 1, args + 1, global, stdout,
		    complete_sessions);
	if (command_check_args(&command_table(NULL)[CMD_ID_COMPLETION], nargs,
	    err, sizeof(err)) == -1) {
		ctl_warnx("%s", err);
		return EXIT_USAGE;
	}
	if (complete_script(args[0], stdout) == -1) {
		ctl_warnx("completion: no script for '%.64s': bash, zsh or "
		    "fish", args[0]);
		return EXIT_USAGE;
	}
	return EXIT_DONE;
}

/* A timeout in whole seconds, 0 to TIMEOUT_MAX.  Returns 0 or -1. */
static int
parse_timeout(const char *s)
{
	char	*end;
	long	 v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (s[0] < '0' || s[0] > '9' || *end != '\0' || errno != 0 ||
	    v > TIMEOUT_MAX)
		return -1;
	timeout_s = (int)v;
	return 0;
}

/* Flush stdout; a write error (a full disk...) fails the command. */
static int
finish(int status)
{
	static const char *const names[] = {
		[EXIT_FAILED] = "error",
		[EXIT_USAGE] = "usage",
		[EXIT_UNREACHABLE] = "unreachable",
	};
	json_t *o;
	char *text;

	if (json_output && !json_done && status > EXIT_DONE &&
	    status <= EXIT_UNREACHABLE) {
		char buf[sizeof(json_said) * 2];

		o = json_pack("{s:b, s:s, s:s, s:[]}", "ok", 0, "status",
		    names[status], "message", text_escape(buf, sizeof(buf),
		    json_said), "items");
		if (o != NULL && (text = json_dumps(o,
		    JSON_PRESERVE_ORDER)) != NULL) {
			puts(text);
			free(text);
		}
		json_decref(o);
	}
	if (fflush(stdout) == EOF || ferror(stdout)) {
		ctl_warnx("stdout: %s", strerror(errno));
		if (status == EXIT_DONE)
			status = EXIT_FAILED;
	}
	return status;
}

int
main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "help",	 no_argument,		NULL, 'h' },
		{ "json",	 no_argument,		NULL, 'j' },
		{ "runtime-dir", required_argument,	NULL, 'r' },
		{ "timeout",	 required_argument,	NULL, 't' },
		{ "version",	 no_argument,		NULL, 'V' },
		{ NULL,		 0,			NULL, 0 },
	};
	struct ctl_cmd	 cmd;
	const char	*rdir = NULL;
	char		 err[512];
	int		 ch, consumed, ret;

	opterr = 0;
	/* '+': options end at the command, whose words may look like
	 * options ("info sessions --pid 12"). */
	while ((ch = getopt_long(argc, argv, "+:hjr:t:V", longopts,
	    NULL)) != -1) {
		switch (ch) {
		case 'h':
			print_help();
			return finish(EXIT_DONE);
		case 'j':
			json_output = 1;
			break;
		case 'r':
			if (optarg[0] == '\0') {
				ctl_warnx("-r: empty directory");
				return finish(EXIT_USAGE);
			}
			rdir = rdir_opt = optarg;
			break;
		case 't':
			if (parse_timeout(optarg) == -1) {
				ctl_warnx("-t: '%s' is not a number of seconds "
				    "from 0 to %d", optarg, TIMEOUT_MAX);
				return finish(EXIT_USAGE);
			}
			break;
		case 'V':
			printf("tracectl %s (control protocol %d)\n",
			    TRACED_VERSION, TRACED_PROTOCOL_VERSION);
			return finish(EXIT_DONE);
		case ':':
			ctl_warnx("option '%s' needs an argument",
			    argv[optind - 1]);
			print_usage(stderr);
			return finish(EXIT_USAGE);
		default:
			ctl_warnx("unknown option '%s'", argv[optind - 1]);
			print_usage(stderr);
			return finish(EXIT_USAGE);
		}
	}
	argc -= optind;
	argv += optind;
	if (argc == 0) {
		print_usage(stderr);
		fputs("Try 'tracectl help' for the commands.\n", stderr);
		return finish(EXIT_USAGE);
	}

	memset(&cmd, 0, sizeof(cmd));
	if ((cmd.def = command_lookup(argc, argv, &consumed, err,
	    sizeof(err))) == NULL) {
		ctl_warnx("%s", err);
		return finish(EXIT_USAGE);
	}
	/* print, stats and export read traces here and never go on the
	 * wire, whose word limit is the table's args_max: they take any
	 * number of directories. */
	if (cmd.def->id == CMD_ID_PRINT || cmd.def->id == CMD_ID_STATS ||
	    cmd.def->id == CMD_ID_EXPORT)
		json_done = 1;		/* their own output, --json or not */
	/* The scripts' 'completion words' takes any number of words. */
	if (cmd.def->id == CMD_ID_COMPLETION)
		return finish(completion_local(argc - consumed,
		    argv + consumed));
	if (cmd.def->id == CMD_ID_PRINT)
		return finish(print_main(argc - consumed, argv + consumed,
		    json_output));
	if (cmd.def->id == CMD_ID_STATS)
		return finish(stats_main(argc - consumed, argv + consumed,
		    json_output));
	if (cmd.def->id == CMD_ID_TOP) {
		json_done = 1;		/* its own documents, one a snapshot */
		return finish(top_main(argc - consumed, argv + consumed,
		    json_output, rdir));
	}
	if (cmd.def->id == CMD_ID_EXPORT)
		return finish(export_main(argc - consumed, argv + consumed));
	if (command_check_args(cmd.def, argc - consumed, err,
	    sizeof(err)) == -1 || command_check_words(cmd.def, argc - consumed,
	    argv + consumed, err, sizeof(err)) == -1) {
		ctl_warnx("%s", err);
		if (json_output)
			json_usage(err);
		return finish(EXIT_USAGE);
	}
	cmd.argc = argc;
	cmd.argv = argv;
	cmd.nargs = argc - consumed;
	cmd.args = argv + consumed;
	if (cmd.def->id == CMD_ID_HELP)
		return finish(help_local(cmd.nargs, cmd.args));
	if (cmd_fix_paths(&cmd) == -1)
		return finish(EXIT_FAILED);
	ret = ctl_run(rdir, &cmd);
	free(cmd.path);
	return finish(ret);
}
