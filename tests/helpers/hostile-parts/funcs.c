/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * The hostile helper's commands of function tracing against everyone
 * (h; issue 25, findings 1 to 3), each doing its worst until a
 * deadline, then printing one line of what the daemon did from their
 * side:
 *
 *   modules NSESS NMODS PATHLEN SECONDS
 *          NSESS sessions describe NMODS loaded objects each (MODULE),
 *          with paths of PATHLEN bytes
 *   funcs-maps NMODS SECONDS
 *          NMODS objects of one instrumented function each (MODULE and
 *          FUNCS: a state memfd the daemon maps), over as many sessions
 *          as that takes
 *   tracer-flood NFUNCS SECONDS
 *          one session with NFUNCS instrumented functions, then TRACER
 *          messages as fast as the daemon takes them
 *   funcs-silent NFUNCS SECONDS
 *          one session with NFUNCS instrumented functions f0, f1...
 *          (whose statistics it never writes) and a tracer
 *          'hostile0', that never reads nor answers what the daemon
 *          sends (findings 6 and 7), for SECONDS
 *
 * What the daemon must do meanwhile for everyone else is for the test
 * script to check (106-hostile-functions.sh).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "functab.h"
#include "hostile.h"
#include "wire.h"

/* Read and drop whatever the daemon sent (FUNC_APPLY), never waiting:
 * a client that reads nothing is not what is tried here. */
static void
drain_input(int sock)
{
	char buf[4096];

	while (recv(sock, buf, sizeof(buf), MSG_DONTWAIT) > 0)
		;
}

/*
 * MODULE number 'index' with a path of 'pathlen' bytes (NUL included)
 * into buf, which holds enough; its size.
 */
static size_t
module_msg(char *buf, uint32_t index, uint32_t flags, size_t pathlen,
    unsigned tag)
{
	struct traced_msg_module *mo = (void *)buf;
	char *path = buf + sizeof(*mo);
	int n;

	memset(mo, 0, sizeof(*mo));
	mo->hdr.type = TRACED_MSG_MODULE;
	mo->index = index;
	mo->flags = flags;
	mo->base = mo->start = 0x400000;
	mo->end = 0x500000;
	n = snprintf(path, pathlen, "/hostile/%u-%u/", tag, index);
	if (n < 0 || (size_t)n >= pathlen)
		n = 0;
	memset(path + n, 'm', pathlen - 1 - (size_t)n);
	path[pathlen - 1] = '\0';
	mo->hdr.size = (uint32_t)(sizeof(*mo) + pathlen);
	return mo->hdr.size;
}

static int
cmd_modules(int nsess, uint32_t nmods, size_t pathlen, double seconds)
{
	_Alignas(8) char buf[sizeof(struct traced_msg_module) +
	    TRACED_PATH_MAX];
	uint64_t deadline = deadline_in(seconds), sent = 0;
	unsigned closed = 0, tag = 0;
	uint32_t *next;
	int *socks, s, busy;
	size_t len;

	if (pathlen < 16 || pathlen > TRACED_PATH_MAX)
		return 2;
	socks = calloc((size_t)nsess, sizeof(*socks));
	next = calloc((size_t)nsess, sizeof(*next));
	if (socks == NULL || next == NULL)
		return 1;
	for (s = 0; s < nsess; s++)
		socks[s] = -1;
	do {
		busy = 0;
		for (s = 0; s < nsess && now_ns() < deadline; s++) {
			if (socks[s] != -1 && h_hup(socks[s])) {
				close(socks[s]);
				socks[s] = -1;
				closed++;
			}
			if (socks[s] == -1) {
				if ((socks[s] = h_session()) == -1)
					continue;
				next[s] = 0;
				tag++;
			}
			if (next[s] == nmods)
				continue;
			busy = 1;
			len = module_msg(buf, next[s], 0, pathlen, tag);
			if (h_sendv_until(socks[s], buf, len, NULL, 0,
			    deadline) == 0) {
				next[s]++;
				sent++;
			}
			drain_input(socks[s]);
		}
		if (!busy)
			sleep_ms(20);
	} while (now_ns() < deadline);
	for (s = 0; s < nsess; s++) {
		if (socks[s] != -1 && h_hup(socks[s]))
			closed++;
		if (socks[s] != -1)
			close(socks[s]);
	}
	printf("modules: %d sessions, %llu modules of %zu-byte paths sent, "
	    "%u times closed by the daemon\n", nsess,
	    (unsigned long long)sent, pathlen, closed);
	free(socks);
	free(next);
	return 0;
}

/* FUNCS for module 'index' with text 'text' of 'nfuncs' functions,
 * sent by 'deadline'.  0 or -1. */
static int
funcs_send_until(int sock, uint32_t index, const char *text, size_t len,
    uint32_t nfuncs, uint64_t deadline)
{
	struct traced_msg_funcs f;
	long pg = sysconf(_SC_PAGESIZE);
	int fds[2], rc = -1;

	memset(&f, 0, sizeof(f));
	f.hdr.type = TRACED_MSG_FUNCS;
	f.hdr.size = sizeof(f);
	f.module = index;
	f.nfuncs = nfuncs;
	f.desc_size = (uint32_t)len;
	f.stats_off = (uint32_t)(((uint64_t)nfuncs + (uint64_t)pg - 1) /
	    (uint64_t)pg * (uint64_t)pg);
	f.state_size = (uint64_t)f.stats_off + (uint64_t)nfuncs *
	    TRACED_FUNC_STAT_SIZE;
	fds[0] = memfd_with(text, len, len, F_SEAL_SHRINK | F_SEAL_WRITE);
	fds[1] = memfd_with(NULL, 0, (size_t)f.state_size, F_SEAL_SHRINK);
	if (fds[0] != -1 && fds[1] != -1)
		rc = h_sendv_until(sock, &f, sizeof(f), fds, 2, deadline);
	if (fds[0] != -1)
		close(fds[0]);
	if (fds[1] != -1)
		close(fds[1]);
	return rc;
}

static int
cmd_funcs_maps(uint32_t nmods, double seconds)
{
	_Alignas(8) char buf[sizeof(struct traced_msg_module) + 64];
	static const char text[] = "1000 16 p f\n";
	uint64_t deadline = deadline_in(seconds);
	uint32_t sent = 0, index = 0, nsess = 0;
	unsigned closed = 0;
	int sock = -1, *held = NULL, nheld = 0, *nh;

	while (sent < nmods && now_ns() < deadline) {
		if (sock != -1 && h_hup(sock)) {
			close(sock);
			sock = -1;
			closed++;
		}
		if (sock == -1 || index == TRACED_MODULES_MAX) {
			/* Keep the full one open: its mappings stay. */
			if (sock != -1) {
				nh = realloc(held, (size_t)(nheld + 1) *
				    sizeof(*held));
				if (nh == NULL)
					break;
				held = nh;
				held[nheld++] = sock;
			}
			if ((sock = h_session()) == -1) {
				sleep_ms(10);
				continue;
			}
			index = 0;
			nsess++;
		}
		if (h_sendv_until(sock, buf, module_msg(buf, index,
		    TRACED_MODULE_FUNCS, 32, nsess), NULL, 0, deadline) == -1 ||
		    funcs_send_until(sock, index, text, sizeof(text) - 1, 1,
		    deadline) == -1)
			continue;	/* closed, or the deadline */
		index++;
		sent++;
		drain_input(sock);
	}
	/* Hold them until the deadline, as a patient attacker would. */
	while (now_ns() < deadline) {
		if (sock != -1)
			drain_input(sock);
		sleep_ms(50);
	}
	if (sock != -1 && h_hup(sock))
		closed++;
	printf("funcs-maps: %u one-function modules sent over %u sessions, "
	    "%u times closed by the daemon\n", sent, nsess, closed);
	if (sock != -1)
		close(sock);
	while (nheld > 0)
		close(held[--nheld]);
	free(held);
	return 0;
}

/* A function table of n functions f0, f1... 16 bytes apart. */
static char *
table_text(uint32_t n, size_t *lenp)
{
	size_t cap = (size_t)n * 32 + 1, len = 0;
	char *t = malloc(cap);
	uint32_t i;
	int k;

	if (t == NULL)
		return NULL;
	for (i = 0; i < n; i++) {
		k = snprintf(t + len, cap - len, "%llx 16 p f%u\n",
		    0x1000ull + (unsigned long long)i * 16, i);
		if (k < 0 || (size_t)k >= cap - len) {
			free(t);
			return NULL;
		}
		len += (size_t)k;
	}
	*lenp = len;
	return t;
}

static int
cmd_tracer_flood(uint32_t nfuncs, double seconds)
{
	_Alignas(8) char buf[sizeof(struct traced_msg_module) + 64];
	const uint32_t per_mod = 500000;
	uint64_t deadline = deadline_in(seconds), sent = 0;
	struct traced_msg_tracer t;
	uint32_t index = 0, n;
	size_t len;
	char *text;
	int sock;

	if ((sock = h_session()) == -1) {
		printf("tracer-flood: no session\n");
		return 1;
	}
	for (; nfuncs > 0; nfuncs -= n, index++) {
		n = nfuncs < per_mod ? nfuncs : per_mod;
		if ((text = table_text(n, &len)) == NULL)
			return 1;
		if (h_sendv_until(sock, buf, module_msg(buf, index,
		    TRACED_MODULE_FUNCS, 32, 0), NULL, 0, deadline) == -1 ||
		    funcs_send_until(sock, index, text, len, n, deadline) ==
		    -1) {
			free(text);
			break;
		}
		free(text);
	}
	memset(&t, 0, sizeof(t));
	t.hdr.type = TRACED_MSG_TRACER;
	t.hdr.size = sizeof(t);
	while (now_ns() < deadline) {
		t.index = (uint32_t)(sent % TRACED_TRACERS_MAX);
		t.flags = (sent / TRACED_TRACERS_MAX) % 2 ?
		    TRACED_TRACER_GONE : TRACED_TRACER_ON;
		snprintf(t.name, sizeof(t.name), "hostile%u", t.index);
		if (h_sendv_until(sock, &t, sizeof(t), NULL, 0, deadline) ==
		    -1)
			break;
		sent++;
		if (sent % 64 == 0)
			drain_input(sock);
	}
	printf("tracer-flood: %u modules of functions, %llu tracer messages "
	    "sent, connection %s\n", index, (unsigned long long)sent,
	    h_hup(sock) ? "closed by the daemon" : "kept");
	close(sock);
	return 0;
}

static int
cmd_funcs_silent(uint32_t nfuncs, double seconds)
{
	_Alignas(8) char buf[sizeof(struct traced_msg_module) + 64];
	uint64_t deadline = deadline_in(seconds);
	struct traced_msg_tracer t;
	size_t len;
	char *text;
	int sock;

	if ((sock = h_session()) == -1 ||
	    (text = table_text(nfuncs, &len)) == NULL) {
		printf("funcs-silent: no session\n");
		return 1;
	}
	memset(&t, 0, sizeof(t));
	t.hdr.type = TRACED_MSG_TRACER;
	t.hdr.size = sizeof(t);
	t.flags = TRACED_TRACER_ON;
	snprintf(t.name, sizeof(t.name), "hostile0");
	if (h_sendv_until(sock, buf, module_msg(buf, 0, TRACED_MODULE_FUNCS,
	    32, 0), NULL, 0, deadline) == -1 ||
	    funcs_send_until(sock, 0, text, len, nfuncs, deadline) == -1 ||
	    h_sendv_until(sock, &t, sizeof(t), NULL, 0, deadline) == -1) {
		printf("funcs-silent: the daemon did not take the functions\n");
		free(text);
		close(sock);
		return 1;
	}
	free(text);
	printf("funcs-silent: %u functions and a tracer, then silence\n",
	    nfuncs);
	fflush(stdout);
	while (now_ns() < deadline)
		sleep_ms(50);
	close(sock);
	return 0;
}

/* The commands above, by name: 1 if argv named one (*rc its status). */
int
funcs_command(int argc, char *argv[], int *rc)
{
	const char *c = argv[1];

	if (strcmp(c, "modules") == 0 && argc == 6)
		*rc = cmd_modules(atoi(argv[2]), (uint32_t)atoi(argv[3]),
		    (size_t)atoi(argv[4]), atof(argv[5]));
	else if (strcmp(c, "funcs-maps") == 0 && argc == 4)
		*rc = cmd_funcs_maps((uint32_t)atoi(argv[2]), atof(argv[3]));
	else if (strcmp(c, "tracer-flood") == 0 && argc == 4)
		*rc = cmd_tracer_flood((uint32_t)atoi(argv[2]), atof(argv[3]));
	else if (strcmp(c, "funcs-silent") == 0 && argc == 4)
		*rc = cmd_funcs_silent((uint32_t)atoi(argv[2]), atof(argv[3]));
	else
		return 0;
	return 1;
}
