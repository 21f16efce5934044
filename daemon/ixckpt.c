/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * The session index's checkpoints, on a thread of their own.
 *
 * DESIGN
 *
 * The index (index.c) is an SQLite database in WAL mode, written by
 * the loop thread.  Whatever makes SQLite wait for the disk must not
 * happen there: when another user floods the disk, one fdatasync() of
 * the WAL took 590 ms, and for that long the daemon answered no
 * program and no tracectl (a new program of root's got no answer in
 * the 200 ms it waits, and ran untraced).  So the loop's connection
 * commits with synchronous=OFF and does not checkpoint: a commit is a
 * write to the WAL and nothing else.  This thread, on a connection of
 * its own with synchronous=NORMAL, checkpoints the WAL into the
 * database when the loop's commits have made it INDEX_CKPT_FRAMES long
 * (ixckpt_kick(), from SQLite's WAL hook: what SQLite's own automatic
 * checkpoint does, on the loop thread) or INDEX_CKPT_MS after the last
 * one: it syncs the WAL before it copies it and the database after, so
 * a power failure may lose the transactions since its last checkpoint,
 * as synchronous=NORMAL does, and, frames carrying their checksums,
 * never leaves a damaged file; a daemon killed at any moment loses
 * nothing (the WAL is in the page cache).  Not more often: each sync
 * makes the file system commit its journal, which waits for the trace
 * data being written (a checkpoint every second cost 27 % of the events
 * at 8 M events/s).  PASSIVE checkpoints never wait for the loop's
 * connection.  At stop, the loop's connection closes first, and this
 * thread's last checkpoint takes the whole WAL in.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sqlite3.h>

#include "index.h"
#include "log.h"
#include "worker.h"

#define INDEX_CKPT_FRAMES	1000	/* SQLite's default */
#define INDEX_CKPT_MS		30000
#define INDEX_CKPT_BUSY_MS	100

static struct {
	pthread_mutex_t	 lock;
	pthread_cond_t	 cond;
	int		 stop;		/* under lock */
	int		 kicked;	/* under lock: the WAL is long */
	int		 running;	/* loop thread */
	pthread_t	 thread;
	char		*path;		/* owned */
	int		 nice;
} ck = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.cond = PTHREAD_COND_INITIALIZER,
};

static void
ckpt(sqlite3 *db, int mode)
{
	int rc = sqlite3_wal_checkpoint_v2(db, NULL, mode, NULL, NULL);

	if (rc != SQLITE_OK && rc != SQLITE_BUSY)
		log_warnx("index %s: checkpoint: %s", ck.path,
		    sqlite3_errmsg(db));
}

static void *
ixckpt_main(void *arg)
{
	struct timespec at;
	sqlite3 *db = NULL;
	int stop = 0;

	(void)arg;
	worker_self("traced-index", ck.nice);
	if (sqlite3_open_v2(ck.path, &db, SQLITE_OPEN_READWRITE |
	    SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK ||
	    sqlite3_exec(db, "PRAGMA synchronous = NORMAL", NULL, NULL,
	    NULL) != SQLITE_OK) {
		log_warnx("index %s: the checkpoint connection: %s", ck.path,
		    db != NULL ? sqlite3_errmsg(db) : "out of memory");
		sqlite3_close(db);
		db = NULL;
	} else
		sqlite3_busy_timeout(db, INDEX_CKPT_BUSY_MS);
	pthread_mutex_lock(&ck.lock);
	while (!stop) {
		clock_gettime(CLOCK_REALTIME, &at);
		at.tv_sec += INDEX_CKPT_MS / 1000;
		at.tv_nsec += (long)(INDEX_CKPT_MS % 1000) * 1000000;
		if (at.tv_nsec >= 1000000000) {
			at.tv_sec++;
			at.tv_nsec -= 1000000000;
		}
		while (!ck.stop && !ck.kicked && pthread_cond_timedwait(
		    &ck.cond, &ck.lock, &at) != ETIMEDOUT)
			;
		ck.kicked = 0;
		stop = ck.stop;
		pthread_mutex_unlock(&ck.lock);
		if (db != NULL)
			ckpt(db, stop ? SQLITE_CHECKPOINT_TRUNCATE :
			    SQLITE_CHECKPOINT_PASSIVE);
		pthread_mutex_lock(&ck.lock);
	}
	pthread_mutex_unlock(&ck.lock);
	/* The last connection: SQLite takes in the rest, then removes the
	 * WAL. */
	sqlite3_close(db);
	return NULL;
}

/*
 * Checkpoint the index at 'path' on a thread of its own from now on.
 * 0, or -1 (logged): then the loop's connection must checkpoint
 * itself.  Loop thread.
 */
int
ixckpt_start(const char *path, int nice)
{
	if (ck.running)
		return 0;
	if ((ck.path = strdup(path)) == NULL) {
		log_warn("index checkpoints");
		return -1;
	}
	ck.nice = nice;
	ck.stop = 0;
	if (worker_spawn("index", ixckpt_main, NULL, &ck.thread) == -1) {
		free(ck.path);
		ck.path = NULL;
		return -1;
	}
	ck.running = 1;
	return 0;
}

/*
 * The loop's connection committed: its WAL holds 'frames' frames (an
 * sqlite3_wal_hook(), which also keeps SQLite from checkpointing on
 * the loop thread).  Loop thread.
 */
int
ixckpt_wal_hook(void *arg, sqlite3 *db, const char *name, int frames)
{
	(void)arg;
	(void)db;
	(void)name;
	if (frames >= INDEX_CKPT_FRAMES && ck.running) {
		pthread_mutex_lock(&ck.lock);
		ck.kicked = 1;
		pthread_cond_signal(&ck.cond);
		pthread_mutex_unlock(&ck.lock);
	}
	return SQLITE_OK;
}

/* The last checkpoint, after the loop's connection closed.  Loop
 * thread. */
void
ixckpt_stop(void)
{
	if (!ck.running)
		return;
	pthread_mutex_lock(&ck.lock);
	ck.stop = 1;
	pthread_cond_signal(&ck.cond);
	pthread_mutex_unlock(&ck.lock);
	pthread_join(ck.thread, NULL);
	free(ck.path);
	ck.path = NULL;
	ck.running = 0;
}
