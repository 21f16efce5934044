/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * Provider descriptions, parsed once per uid and shared (pdesc.c).
 * Daemon-internal; loop thread, but pdesc_parse() (the intake
 * thread's).
 */
#ifndef TRACED_DAEMON_PDESC_H
#define TRACED_DAEMON_PDESC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "tevents.h"
#include "wire.h"

/*
 * A provider's description, parsed and checked once per uid and shared
 * by that uid's sessions.
 */
struct pdesc {
	struct pdesc	*next;		/* hash chain */
	unsigned	 refs;
	uid_t		 uid;
	uint64_t	 hash;
	char		 name[TRACED_NAME_MAX];
	char		*bytes;		/* owned: the text it was parsed from */
	size_t		 len;
	struct tevents_file tf;		/* owned */
	uint8_t		*on;		/* owned: states by the rules ... */
	uint64_t	 on_gen;	/* ... of this state_rules_gen() */
	uint32_t	 reach;		/* cmd-trace-event.c: events a
					   pattern matches ... */
	uint64_t	 reach_gen;	/* ... in count of its reach_gen */
};

int	pdesc_precheck(const char *name, size_t len, char *why, size_t whysize);
struct pdesc *pdesc_lookup(uid_t uid, const char *name, const void *desc,
	    size_t len);
struct pdesc *pdesc_parse(uid_t uid, const char *name, const void *desc,
	    size_t len, const char *fname, char *why, size_t whysize);
struct pdesc *pdesc_adopt(struct pdesc *d, char *why, size_t whysize);
void	pdesc_free(struct pdesc *d);
void	pdesc_put(struct pdesc *d);
const uint8_t *pdesc_states(struct pdesc *d);

#endif /* TRACED_DAEMON_PDESC_H */
