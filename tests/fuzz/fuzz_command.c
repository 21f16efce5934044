/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * libFuzzer target: the control command parser, as the daemon runs it
 * on a request from control.sock: decode the message, look the command
 * up (exact name, unique prefix), check its arity and fixed words
 * (command_check_words()), validate a pattern
 * and an on/off word, and match the pattern against event names with
 * fnmatch() as daemon/state.c does (a pattern must not be able to make
 * the loop thread spin).  Input: the words of a command line, separated
 * by NUL bytes.
 */
#include <assert.h>
#include <fnmatch.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "command.h"
#include "wire.h"

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	_Alignas(8) uint8_t msg[TRACED_MSG_MAX];
	char *words, *argv[TRACED_CTL_ARGS_MAX + 1], err[256], usage[256];
	const struct command_def *cmd;
	struct wire_msg m;
	const char *why;
	int argc = 0, consumed, i;
	long n;
	size_t at;

	if (size > TRACED_MSG_MAX)
		return 0;
	words = malloc(size + 1);
	assert(words != NULL);
	memcpy(words, data, size);
	words[size] = '\0';
	for (at = 0; at <= size && argc < TRACED_CTL_ARGS_MAX + 1;
	    at += strlen(words + at) + 1)
		argv[argc++] = words + at;

	n = wire_ctl_request_encode(msg, sizeof(msg), 0, argc, argv);
	if (n < 0 || wire_decode(msg, (size_t)n, 0, &m, &why) != 0)
		goto out;
	cmd = command_lookup((int)m.u.ctl_request->argc,
	    (char *const *)m.argv, &consumed, err, sizeof(err));
	if (cmd == NULL) {
		assert(err[0] != '\0');
		goto out;
	}
	assert(consumed >= 1 && consumed <= argc);
	assert(command_format_usage(cmd, usage, sizeof(usage)) > 0);
	if (command_check_args(cmd, argc - consumed, err, sizeof(err)) != 0) {
		assert(strncmp(err, "usage: ", 7) == 0);
		goto out;
	}
	/* The fixed words: either fine or a reason, for any argument. */
	if (command_check_words(cmd, argc - consumed,
	    (char *const *)m.argv + consumed, err, sizeof(err)) != 0)
		assert(err[0] != '\0');
	for (i = consumed; i < argc; i++) {
		(void)command_parse_onoff(m.argv[i]);
		if (command_pattern_valid(m.argv[i], err, sizeof(err)) != 0)
			continue;
		(void)fnmatch(m.argv[i], "virtio_queue_notify", 0);
		(void)fnmatch(m.argv[i],
		    "a_provider_with_a_long_name:an_event_with_a_longer_name_"
		    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 0);
	}
out:
	free(words);
	return 0;
}
