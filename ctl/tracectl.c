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
 * 'help' is answered here from the table, and 'print' reads trace
 * directories here (print.c), so both work with no daemon.
 * With --json the daemon sends one JSON value per line and tracectl
 * wraps them, checked, in one document together with the status.
 *
 * The reply comes from another process, possibly of another version or
 * hostile: every message goes through wire_decode(), the line count is
 * checked against CTL_END, and text mode prints control characters as
 * '?' so a process name cannot drive the terminal.  tracectl has no
 * state to clean up: any failure prints one message and exits.
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <errno.h>
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

#include "command.h"
#include "json.h"
#include "tracectl.h"
#include "wire.h"

#ifndef TRACED_VERSION
#define TRACED_VERSION	"unknown"
#endif

#define SYSTEM_RUNTIME_DIR	"/run/traced"
#define TIMEOUT_DEFAULT		30	/* s of silence from the daemon */
#define TIMEOUT_MAX		(INT_MAX / 1000)

/* Where to look for control.sock, in order. */
#define SEARCH_MAX		3

/* Longest socket path, NUL included. */
#define CTL_PATH_MAX		sizeof(((struct sockaddr_un *)NULL)->sun_path)

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
static int	 timeout_s = TIMEOUT_DEFAULT; /* 0: wait for ever */
static const char *sock_path;		/* for messages */

static void	ctl_warnx(const char *, ...)
    __attribute__((format(printf, 1, 2)));

static void
ctl_warnx(const char *fmt, ...)
{
	va_list	ap;

	fflush(stdout);
	fputs("tracectl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	putc('\n', stderr);
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
		n = json_utf8_len(s + i, len - i);
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
	    "'help' and 'print' are done by tracectl itself, no daemon "
	    "needed.\n"
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
	    "Command names may be abbreviated: trace-ev, info s.\n"
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

/* Append 's' to the string in buf, cutting it short. */
static void
append(char *buf, size_t size, const char *s)
{
	size_t	len = strlen(buf), n = strlen(s);

	if (len + 1 >= size)
		return;
	if (n > size - len - 1)
		n = size - len - 1;
	memcpy(buf + len, s, n);
	buf[len + n] = '\0';
}

/*
 * Find control.sock: -r, else $TRACED_RUNTIME_DIR, else the first that
 * exists of the user's own daemon's ($XDG_RUNTIME_DIR/traced, then
 * /tmp/traced-$UID, where the daemon goes without XDG_RUNTIME_DIR) and
 * the system daemon's: the rule libtraced follows for client.sock.
 * Fills 'path'; returns 0, or an exit status after saying where it
 * looked.
 */
static int
socket_find(const char *rdir, char *path, size_t size)
{
	char		 dirs[SEARCH_MAX][PATH_MAX], looked[1024];
	const char	*env;
	struct stat	 st;
	int		 i, ndirs = 0, explicit = 1, in_tmp = -1;

	if (rdir == NULL && (env = getenv("TRACED_RUNTIME_DIR")) != NULL &&
	    env[0] != '\0')
		rdir = env;
	if (rdir != NULL)
		snprintf(dirs[ndirs++], PATH_MAX, "%s", rdir);
	else {
		explicit = 0;
		if ((env = getenv("XDG_RUNTIME_DIR")) != NULL && env[0] != '\0')
			snprintf(dirs[ndirs++], PATH_MAX, "%s/traced", env);
		in_tmp = ndirs;
		snprintf(dirs[ndirs++], PATH_MAX, "/tmp/traced-%u",
		    (unsigned)getuid());
		snprintf(dirs[ndirs++], PATH_MAX, "%s", SYSTEM_RUNTIME_DIR);
	}

	looked[0] = '\0';
	for (i = 0; i < ndirs; i++) {
		if (i > 0)
			append(looked, sizeof(looked), ", ");
		append(looked, sizeof(looked), dirs[i]);
		append(looked, sizeof(looked), "/" TRACED_CONTROL_SOCK);
		if (snprintf(path, size, "%s/%s", dirs[i],
		    TRACED_CONTROL_SOCK) >= (int)size) {
			ctl_warnx("%s/%s: socket path too long (at most %zu "
			    "bytes)", dirs[i], TRACED_CONTROL_SOCK, size - 1);
			if (explicit)
				return EXIT_UNREACHABLE;
			continue;
		}
		/*
		 * Anyone may create a directory in /tmp: a daemon there is
		 * ours only if the directory is.
		 */
		if (i == in_tmp && stat(dirs[i], &st) == 0 &&
		    st.st_uid != getuid()) {
			ctl_warnx("ignoring %s: owned by uid %u, not you",
			    dirs[i], (unsigned)st.st_uid);
			continue;
		}
		/* Anything but "not there" (EACCES...) is for connect(). */
		if (stat(path, &st) == 0 ||
		    (errno != ENOENT && errno != ENOTDIR))
			return 0;
	}
	ctl_warnx("no traced daemon found (looked for %s)", looked);
	if (explicit)
		ctl_warnx("start one there with 'traced --foreground "
		    "--runtime-dir DIR'");
	else
		ctl_warnx("start one with 'traced --foreground' or "
		    "'systemctl start traced' (your own: 'systemctl --user "
		    "start traced'), or name its directory with -r");
	return EXIT_UNREACHABLE;
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
 * be let in.  The system daemon's control.sock is mode 0660, group
 * traced: reading commands and state-changing ones alike need the
 * group (or root).
 */
static void
ctl_denied(const char *path)
{
	struct stat	 st;
	struct passwd	*pw;
	struct group	*gr;
	char		 owner[64], group[64];
	const char	*me;
	char		**m;
	int		 listed = 0;

	if (stat(path, &st) == -1) {
		ctl_warnx("%s: permission denied: a directory on its path is "
		    "closed to you (%s)", path, strerror(errno));
		return;
	}
	if ((pw = getpwuid(st.st_uid)) != NULL)
		snprintf(owner, sizeof(owner), "%s", pw->pw_name);
	else
		snprintf(owner, sizeof(owner), "%u", (unsigned)st.st_uid);
	if ((gr = getgrgid(st.st_gid)) != NULL) {
		snprintf(group, sizeof(group), "%s", gr->gr_name);
		me = (pw = getpwuid(getuid())) != NULL ? pw->pw_name : NULL;
		for (m = gr->gr_mem; me != NULL && *m != NULL; m++)
			if (strcmp(*m, me) == 0)
				listed = 1;
	} else
		snprintf(group, sizeof(group), "%u", (unsigned)st.st_gid);
	ctl_warnx("%s: permission denied: the socket is %s:%s, mode %04o, "
	    "and you (uid %u) are %sin group %s", path, owner, group,
	    (unsigned)(st.st_mode & 07777), (unsigned)getuid(),
	    in_group(st.st_gid) ? "" : "not ", group);
	if (in_group(st.st_gid))
		ctl_warnx("check the mode of %s and of its directories",
		    path);
	else if (listed)
		ctl_warnx("you were added to group %s after this login: log "
		    "in again (or run 'newgrp %s')", group, group);
	else
		ctl_warnx("to use this daemon, ask an administrator to add "
		    "you to group %s ('usermod -aG %s %s'), then log in "
		    "again; or run tracectl as root", group, group,
		    (pw = getpwuid(getuid())) != NULL ? pw->pw_name : "USER");
}

/*
 * Connect to control.sock; connect() and send() give up after the
 * timeout.  Returns 0 with the socket in *fdp, or an exit status after
 * a message: EXIT_FAILED when the socket refuses us (EACCES: a
 * daemon is there, we may not use it), else EXIT_UNREACHABLE.
 */
static int
ctl_connect(const char *path, int *fdp)
{
	struct sockaddr_un	 sun;
	struct timeval		 tv;
	int			 fd, saved;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	if ((fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0)) == -1) {
		ctl_warnx("socket: %s", strerror(errno));
		return EXIT_UNREACHABLE;
	}
	if (timeout_s > 0) {
		tv.tv_sec = timeout_s;
		tv.tv_usec = 0;
		if (setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv,
		    sizeof(tv)) == -1) {
			ctl_warnx("setsockopt SO_SNDTIMEO: %s",
			    strerror(errno));
			close(fd);
			return EXIT_UNREACHABLE;
		}
	}
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		saved = errno == EAGAIN ? ETIMEDOUT : errno;
		close(fd);
		if (saved == EACCES) {
			ctl_denied(path);
			return EXIT_FAILED;
		}
		ctl_warnx("cannot connect to %s: %s", path, strerror(saved));
		if (saved == ECONNREFUSED)
			ctl_warnx("no daemon is listening there (stale "
			    "socket?)");
		return EXIT_UNREACHABLE;
	}
	*fdp = fd;
	return 0;
}

/*
 * Send the command line as one CTL_REQUEST.  Returns 0 or an exit
 * status after a message.
 */
static int
ctl_send(int fd, const struct ctl_cmd *cmd)
{
	uint64_t	 buf[TRACED_MSG_MAX / sizeof(uint64_t)];
	ssize_t		 n;
	int		 len;

	len = wire_ctl_request_encode(buf, sizeof(buf),
	    json_output ? TRACED_CTL_JSON : 0, cmd->argc, cmd->argv);
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
 * Read the reply up to its CTL_END.  Prints lines as they come in text
 * mode and keeps them in JSON mode.  Returns 0 with r filled, or an
 * exit status after a message.
 */
static int
ctl_receive(int fd, struct ctl_reply *r)
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
		else if (m.type == TRACED_MSG_CTL_LINE && json_output &&
		    !json_valid(m.payload, m.payload_len))
			why = "an item is not valid JSON";
		if (why != NULL) {
			ctl_warnx("%s: malformed reply: %s", sock_path, why);
			return EXIT_UNREACHABLE;
		}

		if (m.type == TRACED_MSG_CTL_END)
			break;
		r->nlines++;
		if (!json_output) {
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
	} else if (r->status == TRACED_CTL_OK) {
		if (r->msglen > 0) {
			print_text(stdout, r->message, r->msglen);
			putchar('\n');
		}
	} else {
		fflush(stdout);
		fputs("tracectl: ", stderr);
		if (r->msglen > 0)
			print_text(stderr, r->message, r->msglen);
		else
			fputs(fallback[r->status], stderr);
		putc('\n', stderr);
	}
	return status_exit(r->status);
}

/*
 * 'trace-file set PATH' names a directory for the daemon, whose working
 * directory is not ours: send it absolute.  Returns 0 or -1.
 */
static int
cmd_fix_paths(struct ctl_cmd *cmd)
{
	char	*abs, *cwd;

	if (cmd->def->id != CMD_ID_TRACE_FILE || cmd->nargs != 2 ||
	    strcmp(cmd->args[0], "set") != 0 || cmd->args[1][0] == '/')
		return 0;
	if ((abs = realpath(cmd->args[1], NULL)) == NULL) {
		/* Not there yet: the daemon creates it. */
		if ((cwd = getcwd(NULL, 0)) == NULL) {
			ctl_warnx("getcwd: %s", strerror(errno));
			return -1;
		}
		if (asprintf(&abs, "%s/%s", cwd, cmd->args[1]) == -1)
			abs = NULL;
		free(cwd);
		if (abs == NULL) {
			ctl_warnx("out of memory");
			return -1;
		}
	}
	cmd->args[1] = cmd->path = abs;
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
	char		 path[CTL_PATH_MAX];
	int		 fd, ret;

	if ((ret = socket_find(rdir, path, sizeof(path))) != 0)
		return ret;
	sock_path = path;
	if ((ret = ctl_connect(path, &fd)) != 0)
		return ret;
	memset(&reply, 0, sizeof(reply));
	if ((ret = ctl_send(fd, cmd)) == 0 &&
	    (ret = ctl_receive(fd, &reply)) == 0)
		ret = reply_print(&reply);
	close(fd);
	reply_free(&reply);
	sock_path = NULL;
	return ret;
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
				return EXIT_USAGE;
			}
			rdir = optarg;
			break;
		case 't':
			if (parse_timeout(optarg) == -1) {
				ctl_warnx("-t: '%s' is not a number of seconds "
				    "from 0 to %d", optarg, TIMEOUT_MAX);
				return EXIT_USAGE;
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
			return EXIT_USAGE;
		default:
			ctl_warnx("unknown option '%s'", argv[optind - 1]);
			print_usage(stderr);
			return EXIT_USAGE;
		}
	}
	argc -= optind;
	argv += optind;
	if (argc == 0) {
		print_usage(stderr);
		fputs("Try 'tracectl help' for the commands.\n", stderr);
		return EXIT_USAGE;
	}

	memset(&cmd, 0, sizeof(cmd));
	if ((cmd.def = command_lookup(argc, argv, &consumed, err,
	    sizeof(err))) == NULL) {
		ctl_warnx("%s", err);
		return EXIT_USAGE;
	}
	/* print never goes on the wire, whose word limit is the table's
	 * args_max: it takes any number of directories. */
	if (cmd.def->id == CMD_ID_PRINT)
		return finish(print_main(argc - consumed, argv + consumed,
		    json_output));
	if (command_check_args(cmd.def, argc - consumed, err,
	    sizeof(err)) == -1) {
		ctl_warnx("%s", err);
		return EXIT_USAGE;
	}
	cmd.argc = argc;
	cmd.argv = argv;
	cmd.nargs = argc - consumed;
	cmd.args = argv + consumed;
	if (cmd.def->id == CMD_ID_HELP)
		return finish(help_local(cmd.nargs, cmd.args));
	if (cmd_fix_paths(&cmd) == -1)
		return EXIT_FAILED;
	ret = ctl_run(rdir, &cmd);
	free(cmd.path);
	return finish(ret);
}
