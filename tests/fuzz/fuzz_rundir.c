/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * libFuzzer target: the trust rule for runtime directories and daemons
 * (proto/rundir.c), given any process (uids, secure or not), any file
 * system (what lstat() and fstat() say of /run, /run/traced, a runtime
 * directory, $XDG_RUNTIME_DIR and a socket), any connect() result, any
 * peer and any TRACED_RUNTIME_DIR and XDG_RUNTIME_DIR text.  It checks
 * the promises rather than the code: nothing is ever trusted that the
 * rule does not allow (an untrusted owner or listener, a symlink,
 * a directory others may write, anything but the system daemon in a
 * secure process), and the texts always end within their buffers.
 *
 * Input: a fixed header of little-endian fields (see struct in), then
 * the two variables' text separated by a NUL byte.
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "rundir.h"

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The fixed part of an input. */
struct in {
	uint32_t	uid, euid, secure;
	uint32_t	st_err[5], st_mode[5], st_uid[5];
	uint32_t	connect_err, peer;
	uint8_t		bufsize;
};

static struct rundir_stat
stat_of(const struct in *in, int i)
{
	struct rundir_stat s;

	/* Mostly success, some errnos, now and then any number. */
	s.err = in->st_err[i] % 4 == 0 ? 0 : (int)(in->st_err[i] >> 2);
	s.mode = (mode_t)in->st_mode[i];
	s.uid = (uid_t)in->st_uid[i];
	return s;
}

static void
check_text(const struct rundir_verdict *v, size_t size)
{
	char buf[300], tried[300];

	memset(buf, 'x', sizeof(buf));
	rundir_describe(buf, size, v);
	assert(memchr(buf, '\0', size) != NULL);
	memset(tried, 0, sizeof(tried));
	rundir_tried_add(tried, size, "/some/path", v);
	rundir_tried_add(tried, size, "/another/path", v);
	assert(strnlen(tried, size) < size);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rundir_cand cand[RUNDIR_CAND_MAX];
	struct rundir_verdict v;
	struct rundir_self self;
	struct rundir_stat run, rt, s;
	struct in in;
	char *text, *explicit_dir, *xdg;
	size_t bufsize;
	int i, n;

	if (size < sizeof(in))
		return 0;
	memcpy(&in, data, sizeof(in));
	text = malloc(size - sizeof(in) + 2);
	assert(text != NULL);
	memcpy(text, data + sizeof(in), size - sizeof(in));
	text[size - sizeof(in)] = '\0';
	text[size - sizeof(in) + 1] = '\0';
	explicit_dir = text;
	xdg = text + strlen(text) + 1;
	bufsize = (size_t)in.bufsize % 300 + 1;

	self.uid = (uid_t)in.uid;
	self.euid = (uid_t)in.euid;
	self.secure = (int)(in.secure & 1);
	run = stat_of(&in, 0);
	rt = stat_of(&in, 1);
	self.system_uid = rundir_system_uid(&run, &rt);
	if (self.system_uid != RUNDIR_NO_UID)
		assert(run.err == 0 && S_ISDIR(run.mode) && run.uid == 0 &&
		    (run.mode & 022) == 0 && rt.err == 0 && S_ISDIR(rt.mode) &&
		    rt.uid == self.system_uid);

	n = rundir_candidates(&self, in.secure & 2 ? NULL : explicit_dir, xdg,
	    cand);
	assert(n >= 1 && n <= RUNDIR_CAND_MAX);
	assert(cand[n - 1].kind == RUNDIR_SYSTEM_DAEMON ||
	    (n == 1 && cand[0].kind == RUNDIR_EXPLICIT));
	if (self.secure)
		assert(n == 1 && cand[0].kind == RUNDIR_SYSTEM_DAEMON &&
		    strcmp(cand[0].dir, RUNDIR_SYSTEM) == 0);
	for (i = 0; i < n; i++) {
		assert(strnlen(cand[i].dir, RUNDIR_PATH_MAX) < RUNDIR_PATH_MAX);
		if (cand[i].parent_len > 0) {
			assert(cand[i].kind == RUNDIR_XDG && !cand[i].too_long);
			assert(cand[i].parent_len < strlen(cand[i].dir));
			assert(cand[i].dir[cand[i].parent_len] == '/');
		}
	}

	s = stat_of(&in, 2);
	v = rundir_check_dir(&self, &s);
	if (v.why == RUNDIR_OK)
		assert(s.err == 0 && S_ISDIR(s.mode) && (s.mode & 022) == 0 &&
		    rundir_trusted(&self, s.uid));
	check_text(&v, bufsize);

	s = stat_of(&in, 3);
	v = rundir_check_xdg(&self, &s);
	if (v.why == RUNDIR_OK)
		assert(s.err == 0 && S_ISDIR(s.mode) && (s.mode & 022) == 0 &&
		    s.uid == self.uid);
	check_text(&v, bufsize);

	s = stat_of(&in, 4);
	v = rundir_check_socket(&s);
	if (v.why == RUNDIR_OK)
		assert(s.err == 0 && S_ISSOCK(s.mode));
	check_text(&v, bufsize);

	v = rundir_check_connect((int)in.connect_err);
	assert((v.why == RUNDIR_OK) == (in.connect_err == 0));
	check_text(&v, bufsize);

	v = rundir_check_peer(&self, (uid_t)in.peer);
	if (v.why == RUNDIR_OK) {
		assert((uid_t)in.peer != RUNDIR_NO_UID);
		assert(in.peer == 0 || (uid_t)in.peer == self.system_uid ||
		    (!self.secure && ((uid_t)in.peer == self.uid ||
		    (uid_t)in.peer == self.euid)));
	}
	check_text(&v, bufsize);

	free(text);
	return 0;
}
