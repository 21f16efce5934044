/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * Test helper: a program whose providers come and go, as with plugins.
 *
 *   plugins [-w GOFILE] PLUGIN_SO STOPFILE
 *
 * Its own provider (the helpers' events) is registered first.  With -w,
 * it emits test_tick(0) every 1 ms until GOFILE exists (so that a test
 * can choose when the plugin's provider registers).  It
 * dlopen()s PLUGIN_SO (generation 1), calls plugin_hello(0, 1), and
 * dlclose()s it; then opens it again (generation 2: a new provider,
 * new event ids).  Until STOPFILE exists, every 1 ms: test_tick(seq)
 * and plugin_hello(seq, 2).  Prints "ticks N" and exits 0, or 1 with
 * the reason.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "trace.h"

typedef void hello_fn(uint64_t, uint32_t);

static void *
load(const char *path, hello_fn **fn)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);

	if (h == NULL) {
		fprintf(stderr, "plugins: %s\n", dlerror());
		return NULL;
	}
	*fn = (hello_fn *)dlsym(h, "plugin_hello");
	if (*fn == NULL) {
		fprintf(stderr, "plugins: %s\n", dlerror());
		dlclose(h);
		return NULL;
	}
	return h;
}

int
main(int argc, char *argv[])
{
	const char *gofile = NULL;
	hello_fn *hello;
	uint64_t seq;
	void *h;

	if (argc == 5 && strcmp(argv[1], "-w") == 0) {
		gofile = argv[2];
		argv += 2;
		argc -= 2;
	}
	if (argc != 3) {
		fprintf(stderr, "usage: plugins [-w GOFILE] PLUGIN_SO "
		    "STOPFILE\n");
		return 2;
	}
	trace_test_tick(0);
	while (gofile != NULL && access(gofile, F_OK) != 0) {
		usleep(1000);
		trace_test_tick(0);
	}
	if ((h = load(argv[1], &hello)) == NULL)
		return 1;
	hello(0, 1);
	if (dlclose(h) != 0) {
		fprintf(stderr, "plugins: dlclose: %s\n", dlerror());
		return 1;
	}
	/* Really gone (its provider unregistered), or nothing is tested. */
	if (dlopen(argv[1], RTLD_NOW | RTLD_NOLOAD) != NULL) {
		fprintf(stderr, "plugins: %s still loaded after dlclose\n",
		    argv[1]);
		return 1;
	}
	if ((h = load(argv[1], &hello)) == NULL)
		return 1;
	for (seq = 1; access(argv[2], F_OK) != 0; seq++) {
		trace_test_tick(seq);
		hello(seq, 2);
		usleep(1000);
	}
	printf("ticks %llu\n", (unsigned long long)seq);
	dlclose(h);
	return 0;
}
