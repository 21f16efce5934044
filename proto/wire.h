/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * The two socket protocols: client.sock (libtraced <-> traced) and
 * control.sock (tracectl <-> traced).  Both are SOCK_SEQPACKET, so one
 * send is one message.  Every message starts with struct traced_msg_hdr;
 * the fixed-size body of each type follows, little-endian, with a size
 * checked at compile time.  Some types carry a file descriptor
 * (SCM_RIGHTS) or trailing bytes, as said at each struct.
 *
 * wire_decode() is the one place a received message is validated; both
 * programs call it before they look at a byte.  Pure functions only: no
 * I/O, no allocation, callable from any thread.
 *
 * Changing any struct or meaning here: bump TRACED_PROTOCOL_VERSION.
 */
#ifndef TRACED_PROTO_WIRE_H
#define TRACED_PROTO_WIRE_H

#include <stddef.h>
#include <stdint.h>

#define TRACED_PROTOCOL_VERSION	2

#define TRACED_CLIENT_SOCK	"client.sock"
#define TRACED_CONTROL_SOCK	"control.sock"

/* Largest message either protocol sends (control replies included). */
#define TRACED_MSG_MAX		8192u
/* Largest provider description accepted (normalized trace-events). */
#define TRACED_DESC_MAX		(16u << 20)
/* Most events one provider may declare. */
#define TRACED_PROVIDER_EVENTS_MAX 65536u
#define TRACED_COMM_MAX		16	/* like TASK_COMM_LEN */
#define TRACED_NAME_MAX		64

enum traced_msg_type {
	/* client.sock, client to daemon: 1..31 */
	TRACED_MSG_HELLO = 1,
	TRACED_MSG_PROVIDER,
	TRACED_MSG_RING,
	TRACED_MSG_NOTIFY,
	/* client.sock, daemon to client: 32..63 */
	TRACED_MSG_WELCOME = 32,
	TRACED_MSG_PROVIDER_ACK,
	/* control.sock, tracectl to daemon: 64..95 */
	TRACED_MSG_CTL_REQUEST = 64,
	/* control.sock, daemon to tracectl: 96..127 */
	TRACED_MSG_CTL_LINE = 96,
	TRACED_MSG_CTL_END,
	TRACED_MSG_TYPE_MAX
};

struct traced_msg_hdr {
	uint32_t	type;		/* enum traced_msg_type */
	uint32_t	size;		/* whole message, header included */
};

/*
 * HELLO: the first message of a client, sent once per connection.  The
 * daemon takes pid and uid from SO_PEERCRED, never from here.
 */
#define TRACED_HELLO_TSC	0x1u	/* timestamps are rdtsc ticks, else
					   CLOCK_MONOTONIC ns */

struct traced_msg_hello {
	struct traced_msg_hdr hdr;
	uint32_t	version;	/* TRACED_PROTOCOL_VERSION */
	uint32_t	flags;		/* TRACED_HELLO_* */
	char		comm[TRACED_COMM_MAX]; /* NUL-terminated */
	/* Events the process lost while it had no daemon, by cause,
	 * since it last said so (the new session records them). */
	uint64_t	lost_disconnected;
};

/*
 * PROVIDER: one generated trace.c.  Carries two memfds, in this order:
 * - its description, sealed (F_SEAL_SHRINK, F_SEAL_GROW, F_SEAL_WRITE),
 *   desc_size bytes of the provider's events as normalized trace-events
 *   lines (proto/tevents.h), in id order;
 * - its state array, sealed against shrinking and writable: one byte
 *   per event (nonzero: enabled), at least nevents bytes rounded up to
 *   a page.  The process maps it once, for its lifetime; each daemon it
 *   connects to maps it too and writes the bytes.  A state page that
 *   never moves is what keeps a restart of the daemon from making the
 *   program's threads fault (and wait for the mmap lock) in a trace call.
 *
 * A process numbers its providers, and their event ids, in the order it
 * registered them, and sends them in that order.  Numbers and ids only
 * go up, but may skip: a provider unloaded (dlclose()) before this
 * connection is not sent, and its ids are never used again.
 */
struct traced_msg_provider {
	struct traced_msg_hdr hdr;
	uint32_t	index;		/* the client's provider number */
	uint32_t	id_base;	/* id of its first event, >= 16 */
	uint32_t	nevents;
	uint32_t	desc_size;	/* bytes in the memfd */
	char		name[TRACED_NAME_MAX]; /* NUL-terminated */
};

/*
 * PROVIDER_ACK: status 0: the daemon took the provider and has written
 * its state bytes from the rules; < 0 (a negative errno): refused.  No
 * descriptor.
 */
struct traced_msg_provider_ack {
	struct traced_msg_hdr hdr;
	uint32_t	index;
	int32_t		status;
};

/*
 * RING: a thread's ring (proto/ring.h).  Carries its memfd, sealed with
 * at least F_SEAL_SHRINK, of traced_ring_file_size(order) bytes.
 */
struct traced_msg_ring {
	struct traced_msg_hdr hdr;
	uint32_t	index;		/* the client's ring number */
	uint32_t	tid;
	uint32_t	order;
	uint32_t	pad;		/* zero: refused otherwise */
};

/* NOTIFY: ring 'index' is filling up or finished: please drain it. */
struct traced_msg_notify {
	struct traced_msg_hdr hdr;
	uint32_t	index;
	uint32_t	pad;		/* zero: refused otherwise */
};

/* Clocks a daemon may announce in WELCOME. */
enum traced_clock_kind {
	TRACED_CLOCK_MONOTONIC = 1,	/* ns of CLOCK_MONOTONIC */
	TRACED_CLOCK_TSC,		/* rdtsc ticks */
};

/*
 * WELCOME: the daemon's answer to HELLO.
 */
struct traced_msg_welcome {
	struct traced_msg_hdr hdr;
	uint32_t	version;	/* TRACED_PROTOCOL_VERSION */
	uint32_t	session;	/* the daemon's session id */
	uint32_t	clock;		/* enum traced_clock_kind */
	uint32_t	ring_order;	/* default ring size, 2^order */
	uint32_t	paused;		/* 1: trace-file off */
	uint32_t	pad;		/* zero: refused otherwise */
};

/*
 * CTL_REQUEST: a command line.  'argc' NUL-terminated arguments follow
 * the struct, 'hdr.size - sizeof' bytes in all.
 */
#define TRACED_CTL_JSON		0x1u	/* reply in JSON */
#define TRACED_CTL_ARGS_MAX	64

struct traced_msg_ctl_request {
	struct traced_msg_hdr hdr;
	uint32_t	version;	/* TRACED_PROTOCOL_VERSION */
	uint32_t	flags;		/* TRACED_CTL_* */
	uint32_t	argc;
	uint32_t	pad;		/* zero: refused otherwise */
};

/*
 * CTL_LINE: one line (or JSON value) of a reply; its text, not
 * NUL-terminated, follows the header (hdr.size - 8 bytes).
 */

/*
 * CTL_END: the last message of a reply.  A message (for a failed
 * command, the reason) follows, not NUL-terminated.
 */
enum traced_ctl_status {
	TRACED_CTL_OK = 0,
	TRACED_CTL_ERROR = 1,		/* the command failed */
	TRACED_CTL_USAGE = 2,		/* unknown command or bad arguments */
	TRACED_CTL_DENIED = 3,		/* not allowed for this peer */
};

struct traced_msg_ctl_end {
	struct traced_msg_hdr hdr;
	uint32_t	status;		/* enum traced_ctl_status */
	uint32_t	count;		/* CTL_LINE messages sent before */
};

_Static_assert(sizeof(struct traced_msg_hdr) == 8, "wire");
_Static_assert(sizeof(struct traced_msg_hello) == 40, "wire");
_Static_assert(sizeof(struct traced_msg_provider) == 88, "wire");
_Static_assert(sizeof(struct traced_msg_provider_ack) == 16, "wire");
_Static_assert(sizeof(struct traced_msg_ring) == 24, "wire");
_Static_assert(sizeof(struct traced_msg_notify) == 16, "wire");
_Static_assert(sizeof(struct traced_msg_welcome) == 32, "wire");
_Static_assert(sizeof(struct traced_msg_ctl_request) == 24, "wire");
_Static_assert(sizeof(struct traced_msg_ctl_end) == 16, "wire");

/*
 * A received message, validated.  Points into the caller's buffer.
 */
struct wire_msg {
	uint32_t	type;
	union {
		const struct traced_msg_hello		*hello;
		const struct traced_msg_provider	*provider;
		const struct traced_msg_provider_ack	*provider_ack;
		const struct traced_msg_ring		*ring;
		const struct traced_msg_notify		*notify;
		const struct traced_msg_welcome		*welcome;
		const struct traced_msg_ctl_request	*ctl_request;
		const struct traced_msg_ctl_end		*ctl_end;
		const struct traced_msg_hdr		*hdr;
	} u;
	const char	*payload;	/* trailing bytes, if the type has them */
	size_t		 payload_len;
	const char	*argv[TRACED_CTL_ARGS_MAX]; /* CTL_REQUEST: into buf */
};

/*
 * Validate the 'len' bytes received in 'buf' (aligned to 8), which came
 * with 'nfds' descriptors, and describe them in *m.  Checks the type,
 * the exact size for the type, the protocol version, that the type
 * carries a descriptor exactly when it has one, NUL-termination of
 * strings and the ranges of every field.  Returns 0, or a negative
 * errno (-EBADMSG, -EPROTO for a version mismatch) with 'why' set to a
 * static string saying what was wrong.
 */
int	wire_decode(const void *buf, size_t len, int nfds, struct wire_msg *m,
	    const char **why);

/* How many descriptors a message of this type carries (0 if unknown). */
int	wire_type_nfds(uint32_t type);

/* Fill a header. */
void	wire_hdr_init(struct traced_msg_hdr *h, uint32_t type, uint32_t size);

/*
 * Encode a control request for argv[0..argc) into buf.  Returns the
 * message size, or -1 if it does not fit in 'size' or TRACED_MSG_MAX.
 */
int	wire_ctl_request_encode(void *buf, size_t size, uint32_t flags,
	    int argc, char *const argv[]);

#endif /* TRACED_PROTO_WIRE_H */
