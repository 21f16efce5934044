/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * The names of the drop causes (enum traced_drop_cause, ring.h), the
 * one place they are written: the daemon's replies and index, the CTF
 * metadata's traced:lost fields, and tracectl's readers all take them
 * from here, so that a cause is called the same everywhere a user
 * meets it.  Proto: pure, any thread.
 */
#ifndef TRACED_PROTO_CAUSE_H
#define TRACED_PROTO_CAUSE_H

/*
 * The name of cause c ("ring_full", "write_error"...), or "?" for a
 * number that is not a cause.  A name is a C identifier, as the CTF
 * metadata's field names must be.
 */
const char *traced_cause_name(int c);

/* The cause called 'name', or -1. */
int	traced_cause_find(const char *name);

#endif /* TRACED_PROTO_CAUSE_H */
