/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * libFuzzer target: tracectl's exports (ctl/export*.c) of a session
 * directory made from the input, as 'tracectl export' runs them: the
 * reader under them is fuzz_tracedir's; here it is what the exporters
 * do with what it gives them (names, strings, function records, module
 * files) that is tried (issue 25).  The input is
 *
 *   u8      the format: chrome, perfetto, simpletrace, uftrace (mod 4)
 *   u16 LE  N, then N bytes: the metadata
 *   u16 LE  M, then M bytes: functions/module-0 (none if M = 0)
 *   rest    stream-1
 *
 * written into a fresh session directory in a private temporary one,
 * exported to a new -o there, and both removed.  Oracles: the export
 * ends (libFuzzer's -timeout); it returns success or failure, nothing
 * else; a successful Chrome export is JSON that jansson reads back; a
 * successful directory export made its directory.
 *
 * The seeds in tests/fuzz/corpus/export/ are real traces of
 * tests/helpers: emit's events, and a function-traced helper's records
 * with its module file.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "tracectl.h"

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int	export_main(int nargs, char **args);

static char top[] = "/tmp/fuzz_export.XXXXXX";

static int
put(const char *path, const uint8_t *p, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	int ok;

	if (fd == -1)
		return -1;
	ok = write(fd, p, n) == (ssize_t)n;
	close(fd);
	return ok ? 0 : -1;
}

/* Remove path, a file or a tree of them. */
static void
rm_tree(const char *path)
{
	char sub[4096];
	struct dirent *de;
	DIR *d;

	if (unlink(path) == 0 || (d = opendir(path)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name,
		    "..") == 0)
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", path, de->d_name);
		rm_tree(sub);
	}
	closedir(d);
	rmdir(path);
}

static int
take16(const uint8_t **p, size_t *left, size_t *n)
{
	if (*left < 2)
		return -1;
	*n = (size_t)(*p)[0] | (size_t)(*p)[1] << 8;
	*p += 2;
	*left -= 2;
	if (*n > *left)
		return -1;
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const formats[] = { "chrome", "perfetto",
	    "simpletrace", "uftrace" };
	char dir[256], out[256], path[512];
	const uint8_t *p = data, *md, *mod;
	size_t left = size, nmd, nmod;
	const char *fmt;
	char *args[6];
	int rc, saved;
	json_t *j;

	if (top[sizeof(top) - 2] == 'X' && mkdtemp(top) == NULL)
		abort();
	if (left < 1)
		return 0;
	fmt = formats[p[0] % 4];
	p++;
	left--;
	if (take16(&p, &left, &nmd) == -1)
		return 0;
	md = p;
	p += nmd;
	left -= nmd;
	if (take16(&p, &left, &nmod) == -1)
		return 0;
	mod = p;
	p += nmod;
	left -= nmod;

	snprintf(dir, sizeof(dir), "%s/emit-1-1", top);
	snprintf(out, sizeof(out), "%s/out", top);
	rm_tree(dir);
	rm_tree(out);
	if (mkdir(dir, 0700) == -1)
		abort();
	snprintf(path, sizeof(path), "%s/metadata", dir);
	if (put(path, md, nmd) == -1)
		abort();
	snprintf(path, sizeof(path), "%s/stream-1", dir);
	if (put(path, p, left) == -1)
		abort();
	if (nmod > 0) {
		snprintf(path, sizeof(path), "%s/functions", dir);
		if (mkdir(path, 0700) == -1)
			abort();
		snprintf(path, sizeof(path), "%s/functions/module-0", dir);
		if (put(path, mod, nmod) == -1)
			abort();
	}
	args[0] = "--format";
	args[1] = (char *)fmt;
	args[2] = "-o";
	args[3] = out;
	args[4] = dir;
	args[5] = NULL;
	/* Its errors go to stderr: not the fuzzer's log. */
	fflush(stderr);
	saved = dup(2);
	(void)!freopen("/dev/null", "w", stderr);
	rc = export_main(5, args);
	fflush(stderr);
	if (saved != -1) {
		dup2(saved, 2);
		close(saved);
	}
	if (rc != EXIT_DONE && rc != EXIT_FAILED)
		abort();
	if (rc == EXIT_DONE && strcmp(fmt, "chrome") == 0) {
		if ((j = json_load_file(out, 0, NULL)) == NULL)
			abort();	/* not JSON */
		json_decref(j);
	}
	if (rc == EXIT_DONE && (strcmp(fmt, "simpletrace") == 0 ||
	    strcmp(fmt, "uftrace") == 0)) {
		struct stat st;

		if (stat(out, &st) == -1 || !S_ISDIR(st.st_mode))
			abort();
	}
	rm_tree(out);
	rm_tree(dir);
	return 0;
}
