/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * Making whole again what a killed daemon left half written.
 *
 * The daemon writes only whole packets and whole metadata, but a write
 * of many pages can be cut by SIGKILL (or the OOM killer) between two
 * of them: the stream then ends in part of a packet, or the metadata
 * in part of an appended event declaration, and babeltrace2 refuses
 * the whole session (for a stream, the whole trace directory).  At
 * start, for every session the index says a killed run left open
 * (index.c), each stream is cut back to its last whole packet and the
 * metadata to its last whole declaration.  Nothing whole is lost: the
 * cut part was never complete, and no packet's events were counted as
 * written before the write returned.
 *
 * Files are reached through their directory, opened and checked like
 * every directory the daemon writes into (fsdir.c), and never followed.
 * Loop thread, at start.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctf.h"
#include "fsdir.h"
#include "log.h"
#include "repair.h"

/*
 * The length of the whole packets at the start of the stream open on
 * fd (size bytes): where a packet's header is not ours, or its size
 * runs past the end of the file, the rest is torn.
 */
static off_t
repair_stream_whole(int fd, off_t size)
{
	uint8_t h[CTF_PACKET_HDR_SIZE];
	off_t off = 0;
	uint64_t psize;

	while (size - off >= (off_t)CTF_PACKET_HDR_SIZE) {
		if (pread(fd, h, sizeof(h), off) != (ssize_t)sizeof(h))
			break;
		psize = ctf_get64(h + 56) / 8;
		if ((h[0] | h[1] << 8 | h[2] << 16 | (uint32_t)h[3] << 24) !=
		    CTF_MAGIC || psize < CTF_PACKET_HDR_SIZE ||
		    psize > (uint64_t)(size - off))
			break;
		off += (off_t)psize;
	}
	return off;
}

/* Cut the stream 'name' in dirfd back to its whole packets. */
static void
repair_stream(int dirfd, const char *dir, const char *name)
{
	struct stat st;
	off_t whole;
	int fd;

	fd = openat(dirfd, name, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	if (fd == -1 || fstat(fd, &st) == -1 || !S_ISREG(st.st_mode)) {
		if (fd != -1)
			close(fd);
		return;
	}
	whole = repair_stream_whole(fd, st.st_size);
	if (whole < st.st_size) {
		if (ftruncate(fd, whole) == 0)
			log_warnx("%s/%s: cut back from %lld to %lld bytes: a "
			    "daemon killed while writing left part of a "
			    "packet", dir, name, (long long)st.st_size,
			    (long long)whole);
		else
			log_warn("%s/%s: cannot cut its torn packet", dir,
			    name);
	}
	close(fd);
}

/*
 * Cut the metadata in dirfd back to its last whole declaration: every
 * one the daemon writes ends in "};" and a blank line.
 */
static void
repair_metadata(int dirfd, const char *dir)
{
	static const char end[] = "};\n\n";
	struct stat st;
	char *text = NULL;
	size_t keep;
	int fd;

	fd = openat(dirfd, "metadata", O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	if (fd == -1)
		return;
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) ||
	    st.st_size < (off_t)sizeof(end) || st.st_size > (64 << 20) ||
	    (text = malloc((size_t)st.st_size)) == NULL ||
	    pread(fd, text, (size_t)st.st_size, 0) != st.st_size)
		goto out;
	keep = (size_t)st.st_size;
	while (keep >= sizeof(end) - 1 &&
	    memcmp(text + keep - (sizeof(end) - 1), end, sizeof(end) - 1) != 0)
		keep--;
	if (keep >= sizeof(end) - 1 && keep < (size_t)st.st_size) {
		if (ftruncate(fd, (off_t)keep) == 0)
			log_warnx("%s/metadata: cut back from %lld to %zu "
			    "bytes: a daemon killed while writing left part "
			    "of a declaration", dir, (long long)st.st_size,
			    keep);
	}
out:
	free(text);
	close(fd);
}

/*
 * Repair the session directory 'dir' and its stream 'stream' (a path
 * in it, or NULL for the metadata alone), as the top of this file
 * says.  Logged when something was cut.
 */
void
repair_session_files(const char *dir, const char *stream)
{
	char err[PATH_MAX + 256];
	const char *name;
	size_t n;
	int dirfd;

	if (dir == NULL)
		return;
	dirfd = fsdir_open(dir, FSDIR_CREATE_NONE, 0, err, sizeof(err));
	if (dirfd == -1)
		return;		/* gone, or not the daemon's: left alone */
	if (stream == NULL)
		repair_metadata(dirfd, dir);
	else {
		n = strlen(dir);
		name = strncmp(stream, dir, n) == 0 && stream[n] == '/' ?
		    stream + n + 1 : NULL;
		if (name != NULL && strchr(name, '/') == NULL)
			repair_stream(dirfd, dir, name);
	}
	close(dirfd);
}
