/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * Provider descriptions, parsed once per uid and shared.
 *
 * A process registers each provider with its description: the
 * normalized trace-events text of its events.  Parsed, an event class
 * costs the daemon most of a kilobyte, and a machine may run a hundred
 * copies of one program whose providers describe thousands of events
 * each (QEMU has 5,000).  So a description is kept once per uid and
 * provider name: the next session that sends the same bytes gets the
 * same parsed classes, and only distinct classes count against the
 * uid's event-classes-per-uid limit.  Descriptions are not shared
 * between uids, so one user's limit never depends on another's.
 *
 * Everything in a description is checked here, once, before any other
 * part of the daemon sees it: it parses (tevents.c), and every name,
 * type and format string is valid UTF-8 without control characters
 * (text.c), so that the metadata, the index, JSON replies and the log
 * can take them as they are.  Parsing costs about 10 us an event, so
 * it runs on the intake thread (pdesc_parse()); looking one up and
 * sharing it are cheap and run on the loop.
 *
 * A description also keeps its events' states by the current rules,
 * computed once per rule change however many sessions share it.
 *
 * Loop thread, but pdesc_parse().
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text.h"
#include "limits.h"
#include "log.h"
#include "pdesc.h"
#include "state.h"

#define PDESC_BUCKETS	256
#define PDESC_MAX_BYTES	(16u << 20)	/* larger is no description */

static struct pdesc *pdesc_table[PDESC_BUCKETS];

/*
 * The cache key of a description: uid, provider name, length, and a
 * sample of the bytes (the first and last 4 KiB), so that finding one
 * costs the loop little whatever its size; a hit is confirmed with
 * memcmp().
 */
static uint64_t
pdesc_hash(uid_t uid, const char *name, const void *bytes, size_t len)
{
	const unsigned char *p;
	uint64_t h = 0xcbf29ce484222325ull ^ (uint64_t)uid ^
	    ((uint64_t)len << 32);
	size_t i, head = len < 4096 ? len : 4096;

	for (p = (const unsigned char *)name; *p != '\0'; p++)
		h = (h ^ *p) * 0x100000001b3ull;
	h = (h ^ 0xff) * 0x100000001b3ull;
	p = bytes;
	for (i = 0; i < head; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	for (i = len > 8192 ? len - 4096 : head; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

/* Is every string of the parsed description text we can pass on? */
static int
pdesc_check_text(const struct tevents_file *tf, char *why, size_t whysize)
{
	size_t e, bad;
	unsigned a;

	for (e = 0; e < tf->nevents; e++) {
		const struct tevents_event *ev = &tf->events[e];
		const char *what = NULL, *s = NULL;

		if (!text_valid(ev->name, strlen(ev->name), &bad))
			what = "name", s = ev->name;
		else if (!text_valid(ev->fmt, strlen(ev->fmt), &bad))
			what = "format string", s = ev->fmt;
		for (a = 0; what == NULL && a < ev->nargs; a++) {
			if (!text_valid(ev->args[a].name,
			    strlen(ev->args[a].name), &bad))
				what = "argument name", s = ev->args[a].name;
			else if (!text_valid(ev->args[a].type,
			    strlen(ev->args[a].type), &bad))
				what = "argument type", s = ev->args[a].type;
		}
		if (what != NULL) {
			snprintf(why, whysize, "event %zu (line %u): its %s "
			    "has a byte that is not printable UTF-8 at "
			    "offset %zu (0x%02x)", e + 1, ev->line, what, bad,
			    (unsigned char)s[bad]);
			return -1;
		}
	}
	return 0;
}

/*
 * Checks a description passes before anything is done with it: its
 * provider name and its size.  Loop thread.  0, or -1 with why.
 */
int
pdesc_precheck(const char *name, size_t len, char *why, size_t whysize)
{
	size_t bad;

	if (name[0] == '\0' || !text_valid(name, strlen(name), &bad)) {
		snprintf(why, whysize, "provider name is empty or not "
		    "printable UTF-8");
		return -1;
	}
	if (len > PDESC_MAX_BYTES) {
		snprintf(why, whysize, "description of %zu bytes (at most "
		    "%u)", len, PDESC_MAX_BYTES);
		return -1;
	}
	return 0;
}

/*
 * The description 'desc' (len bytes) of provider 'name' if 'uid'
 * registered the same one before: a new reference (release with
 * pdesc_put()), or NULL.  Cheap: a sampled hash and memcmp().  Loop
 * thread.
 */
struct pdesc *
pdesc_lookup(uid_t uid, const char *name, const void *desc, size_t len)
{
	uint64_t h = pdesc_hash(uid, name, desc, len);
	struct pdesc *d;

	for (d = pdesc_table[h % PDESC_BUCKETS]; d != NULL; d = d->next)
		if (d->hash == h && d->uid == uid && d->len == len &&
		    strcmp(d->name, name) == 0 &&
		    memcmp(d->bytes, desc, len) == 0) {
			d->refs++;
			return d;
		}
	return NULL;
}

/*
 * Parse and check a description, not shared yet (pdesc_adopt() does
 * that): what costs, so the intake thread runs it.  'fname' names it
 * in parse errors.  Returns a new description, or NULL with the reason
 * in why.  Any thread; touches no daemon state.
 */
struct pdesc *
pdesc_parse(uid_t uid, const char *name, const void *desc, size_t len,
    const char *fname, char *why, size_t whysize)
{
	struct pdesc *d;

	why[0] = '\0';
	if ((d = calloc(1, sizeof(*d))) == NULL ||
	    (d->bytes = malloc(len > 0 ? len : 1)) == NULL) {
		free(d);
		snprintf(why, whysize, "out of memory");
		return NULL;
	}
	memcpy(d->bytes, desc, len);
	d->len = len;
	if (tevents_parse(desc, len, fname, &d->tf, why, whysize) == -1 ||
	    pdesc_check_text(&d->tf, why, whysize) == -1 ||
	    (d->on = calloc(d->tf.nevents + 1, 1)) == NULL) {
		if (why[0] == '\0')
			snprintf(why, whysize, "out of memory");
		pdesc_free(d);
		return NULL;
	}
	snprintf(d->name, sizeof(d->name), "%s", name);
	d->uid = uid;
	d->hash = pdesc_hash(uid, name, desc, len);
	d->on_gen = UINT64_MAX;		/* not computed yet */
	return d;
}

/*
 * Share a description pdesc_parse() made: if an identical one was
 * adopted meanwhile, that one (d is freed); else d, charged to its
 * uid's event classes (at least one, so that descriptions without
 * events are bounded too).  Returns a reference, or NULL with the
 * reason in why (d freed): over event-classes-per-uid.  Loop thread.
 */
struct pdesc *
pdesc_adopt(struct pdesc *d, char *why, size_t whysize)
{
	struct pdesc *old;
	size_t cost = d->tf.nevents > 0 ? d->tf.nevents : 1;

	if ((old = pdesc_lookup(d->uid, d->name, d->bytes, d->len)) != NULL) {
		pdesc_free(d);
		return old;
	}
	if (limits_take(d->uid, LIMIT_EVENT_CLASSES, cost, 0, why,
	    whysize) == -1) {
		pdesc_free(d);
		return NULL;
	}
	d->refs = 1;
	d->next = pdesc_table[d->hash % PDESC_BUCKETS];
	pdesc_table[d->hash % PDESC_BUCKETS] = d;
	return d;
}

/* Free a description nobody shares (pdesc_parse()'s, not adopted). */
void
pdesc_free(struct pdesc *d)
{
	if (d == NULL)
		return;
	tevents_free(&d->tf);
	free(d->bytes);
	free(d->on);
	free(d);
}

/* Drop a reference; the last frees the description and its charge. */
void
pdesc_put(struct pdesc *d)
{
	struct pdesc **pp;

	if (d == NULL || --d->refs > 0)
		return;
	for (pp = &pdesc_table[d->hash % PDESC_BUCKETS]; *pp != d;
	    pp = &(*pp)->next)
		;
	*pp = d->next;
	limits_put(d->uid, LIMIT_EVENT_CLASSES,
	    d->tf.nevents > 0 ? d->tf.nevents : 1, 0);
	pdesc_free(d);
}

/*
 * The states the rules give this description's events (1 on, 0 off),
 * by index; computed again only after the rules changed.
 */
const uint8_t *
pdesc_states(struct pdesc *d)
{
	size_t k;

	if (d->on_gen != state_rules_gen()) {
		for (k = 0; k < d->tf.nevents; k++)
			d->on[k] = (uint8_t)state_event_on(d->name,
			    &d->tf.events[k]);
		d->on_gen = state_rules_gen();
	}
	return d->on;
}
