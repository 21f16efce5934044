/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * Loss warnings: when a session loses events, say so in the log, with
 * what the daemon saw that let it happen and what to do about it.
 *
 * Every lost event is counted by cause (info trace, the index, the
 * stream's events_discarded); this file is about telling a person.  A
 * session's losses are said at most once per LOSS_WARN_INTERVAL_NS,
 * those in between added to the next warning or said when the session
 * ends.  The causes are the ring's (ring full, nested, disconnected,
 * paused) and the daemon's (write error); for a full ring, what the
 * drain thread saw meanwhile (pipeline.h, LOSS_SAW_*) tells a burst
 * from a ring too small, a busy machine from a slow disk.
 *
 * Loop thread only.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "dclock.h"
#include "limits.h"
#include "outdir.h"
#include "ringsize.h"
#include "session.h"

/* Append to buf (NUL-terminated, 'size' bytes) what printf would say. */
static void	loss_say(char *buf, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
loss_say(char *buf, size_t size, const char *fmt, ...)
{
	size_t n = strlen(buf);
	va_list ap;

	if (n + 1 >= size)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + n, size - n, fmt, ap);
	va_end(ap);
}

/*
 * Say what s lost since its last warning, with what the daemon saw that
 * let it happen and what to do about it (also when it ends).
 */
void
session_say_loss(struct session *s)
{
	unsigned causes = s->causes_unwarned, why = s->why_unwarned;
	unsigned order = s->order_unwarned;
	char msg[1024] = "", size[32], bigger[32];
	const char *sep = "";

	ringsize_format(traced_ring_size(order), size, sizeof(size));
	ringsize_format(traced_ring_size(order < 28 ? order + 2 :
	    TRACED_RING_ORDER_MAX), bigger, sizeof(bigger));
	if (causes & (1u << TRACED_DROP_RING_FULL)) {
		if (why & LOSS_SAW_TOO_SMALL) {
			loss_say(msg, sizeof(msg), "%sa ring at its largest "
			    "size, %s, fills up faster than the daemon can "
			    "visit it: give the program bigger rings "
			    "(TRACED_RING_SIZE=%s in its environment, or "
			    "traced --ring-size %s for every program)", sep,
			    size, bigger, bigger);
			sep = "; also ";
		}
		if (why & LOSS_SAW_DISK) {
			loss_say(msg, sizeof(msg), "%srings filled up while "
			    "the daemon's staging memory was full, its writes "
			    "waiting on the disk: the disk under %s takes the "
			    "trace more slowly than the program writes it; "
			    "trace to a faster disk ('tracectl trace-file set "
			    "DIR') or trace fewer events", sep,
			    outdir_path());
			sep = "; also ";
		}
		if (why & LOSS_SAW_SHARE) {
			loss_say(msg, sizeof(msg), "%srings filled up while "
			    "uid %u's programs held their share of the "
			    "daemon's staging memory, its writes waiting on "
			    "the disk (other users' programs keep theirs): "
			    "the disk under %s takes the trace more slowly "
			    "than these programs write it; trace fewer "
			    "events, or to a faster disk ('tracectl "
			    "trace-file set DIR')", sep, (unsigned)s->uid,
			    outdir_path());
			sep = "; also ";
		}
		if (why & LOSS_SAW_OTHERS) {
			loss_say(msg, sizeof(msg), "%srings filled up while "
			    "the daemon's staging memory was full, most of it "
			    "held by other users' programs (this one was under "
			    "its share)", sep);
			sep = "; also ";
		}
		if (why & LOSS_SAW_WRITERS) {
			/* At nice 0 already, only more CPU helps. */
			loss_say(msg, sizeof(msg), "%srings filled up while "
			    "the daemon's staging memory was full, its "
			    "writeout threads short of CPU time (nice %d, %u "
			    "of them): give them more (%straced --workers, "
			    "Nice= or CPUWeight= in its unit, fewer busy "
			    "programs)", sep, cfg.writeout_nice,
			    writeout_nworkers(), cfg.writeout_nice > 0 ?
			    "traced --writeout-nice 0, " : "");
			sep = "; also ";
		}
		if (why & LOSS_SAW_LATE) {
			loss_say(msg, sizeof(msg), "%srings filled up while "
			    "the daemon's drain thread waited %u ms for a CPU "
			    "(the machine is busy; it runs at nice %d): give "
			    "traced more CPU (%sNice= or CPUWeight= in its "
			    "unit), or bigger rings to ride it out "
			    "(TRACED_RING_SIZE=%s)", sep, s->late_unwarned,
			    cfg.writeout_nice, cfg.writeout_nice > 0 ?
			    "a lower --writeout-nice, " : "", bigger);
			sep = "; also ";
		}
		if ((why & (LOSS_SAW_DISK | LOSS_SAW_WRITERS |
		    LOSS_SAW_LATE | LOSS_SAW_TOO_SMALL | LOSS_SAW_SHARE |
		    LOSS_SAW_OTHERS)) == 0) {
			if (why & LOSS_SAW_MAX_SIZE)
				loss_say(msg, sizeof(msg), "%sa burst filled "
				    "a ring at its largest size, %s, between "
				    "two drains made on time: give the program "
				    "bigger rings (TRACED_RING_SIZE=%s in its "
				    "environment, or traced --ring-size %s for "
				    "every program)", sep, size, bigger,
				    bigger);
			else
				loss_say(msg, sizeof(msg), "%sa burst filled "
				    "a ring between two drains made on time, "
				    "before it could grow (it grows, up to %s, "
				    "for the next ones; TRACED_RING_START=%s in "
				    "the program's environment makes its rings "
				    "start that big, TRACED_RING_SIZE=%s lets "
				    "them grow further)", sep, size, size,
				    bigger);
			sep = "; also ";
		}
	}
	if (causes & (1u << TRACED_DROP_DISCONNECTED)) {
		loss_say(msg, sizeof(msg), "%sno daemon was draining its "
		    "rings for a while (they hold up to %s each; start traced "
		    "before the program, or give it bigger rings: "
		    "TRACED_RING_SIZE=%s)", sep, size, bigger);
		sep = "; also ";
	}
	if (causes & (1u << TRACED_DROP_WRITE_ERROR)) {
		loss_say(msg, sizeof(msg), "%swriting the trace failed (see "
		    "above)", sep);
		sep = "; also ";
	}
	if (causes & (1u << TRACED_DROP_NESTED)) {
		loss_say(msg, sizeof(msg), "%sevents traced from signal "
		    "handlers while their thread was in a trace call are "
		    "dropped", sep);
		sep = "; also ";
	}
	if (causes & (1u << TRACED_DROP_PAUSED))
		loss_say(msg, sizeof(msg), "%stracing was paused "
		    "('tracectl trace-file on' resumes it)", sep);
	limits_logx(s->uid, "session %u: %s[%d] lost %llu events (thread %d "
	    "and others; 'tracectl info trace' has the counts by cause): %s",
	    s->id, s->comm, (int)s->pid,
	    (unsigned long long)s->lost_unwarned, (int)s->tid_unwarned, msg);
	s->lost_unwarned = 0;
	s->causes_unwarned = 0;
	s->why_unwarned = 0;
	s->late_unwarned = 0;
	s->order_unwarned = 0;
}

/*
 * A session is losing events: say so (session_say_loss) at most once per
 * LOSS_WARN_INTERVAL_NS per session; losses in between are added to the
 * next warning, or said when the session ends.  'causes' has a bit per
 * enum traced_drop_cause among the losses; 'why' the LOSS_SAW_* bits of
 * pipeline.h the drain thread noted while rings were full, and 'late_ms'
 * how late it came then.
 */
void
session_warn_loss(struct session *s, const struct sring *r, uint64_t lost,
    unsigned causes, unsigned why, unsigned late_ms)
{
	uint64_t now = now_ns(CLOCK_MONOTONIC);

	s->lost_unwarned += lost;
	s->causes_unwarned |= causes;
	s->why_unwarned |= why;
	if (late_ms > s->late_unwarned)
		s->late_unwarned = late_ms;
	if (r->p.max_order > s->order_unwarned)
		s->order_unwarned = r->p.max_order;
	s->tid_unwarned = r->tid;
	if (now < s->warn_next)
		return;
	session_say_loss(s);
	s->warn_next = now + LOSS_WARN_INTERVAL_NS;
}
