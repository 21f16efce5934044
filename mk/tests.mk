# SPDX-License-Identifier: MIT
# Tests: cmocka unit binaries (one per module), then integration scripts.
#
# A unit test tests/unit/test_NAME.c links with the proto objects and with
# the objects listed in test_NAME_OBJS (module objects, never a main()).

UNIT_SRCS	:= $(wildcard tests/unit/test_*.c)
UNIT_TESTS	:= $(patsubst tests/unit/%.c,$(O)/tests/unit/%,$(UNIT_SRCS))
INTEG_TESTS	:= $(sort $(wildcard tests/integration/[0-9]*.sh))
HELPER_SRCS	:= $(wildcard tests/helpers/*.c)

test_json_OBJS		:= $(O)/ctl/json.o
test_tevents_OBJS	:=
test_wire_OBJS		:=
test_tracegen_OBJS	:= $(filter-out %/main.o,$(TRACEGEN_OBJS))
test_ring_OBJS		:= $(LIB_OBJS)
test_ctf_OBJS		:= $(O)/daemon/ctf.o
test_tracedir_OBJS	:= $(O)/daemon/ctf.o $(O)/ctl/tracedir.o \
			   $(O)/ctl/tracedir-io.o
test_config_OBJS	:= $(O)/daemon/config.o
test_command_OBJS	:=
test_recwalk_OBJS	:=
test_index_OBJS		:= $(O)/daemon/index.o $(O)/daemon/log.o

$(O)/tests/unit/%.o: P_CFLAGS += $(call pkg_cflags,cmocka $(DAEMON_PKGS))

.SECONDEXPANSION:
$(O)/tests/unit/%: $(O)/tests/unit/%.o $(PROTO_OBJS) $$(%_OBJS)
	$(call say,LD,$@)$(CC) $(P_LDFLAGS) $(LDFLAGS) -o $@ $^ \
		$(call pkg_libs,cmocka $(DAEMON_PKGS)) -lm

# Helpers: small traced programs built from tests/helpers/NAME.c with the
# events in tests/helpers/trace-events.
$(eval $(call tracegen_rule,helpers,tests/helpers/trace-events,$(O)/gen/helpers))
$(O)/gen/helpers/trace.o: $(O)/gen/helpers/trace.c $(O)/gen/helpers/trace.h
	$(call say,CC,$<)$(COMPILE) -c -o $@ $<
HELPERS := $(patsubst tests/helpers/%.c,$(O)/tests/helpers/%,$(HELPER_SRCS))
$(O)/tests/helpers/%.o: tests/helpers/%.c $(O)/gen/helpers/trace.h
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(COMPILE) -I$(O)/gen/helpers -c -o $@ $<
$(O)/tests/helpers/%: $(O)/tests/helpers/%.o $(O)/gen/helpers/trace.o $(LIBSO)
	$(call say,LD,$@)$(CC) $(P_LDFLAGS) $(LDFLAGS) -o $@ $< \
		$(O)/gen/helpers/trace.o -L$(O)/lib -ltraced -Wl,-rpath,$(abspath $(O))/lib

# A plugin for the 'plugins' helper: a shared object with a provider.
$(eval $(call tracegen_rule,plugin,tests/helpers/plugin/trace-events,$(O)/gen/plugin))
PLUGIN := $(O)/tests/helpers/plugin.so
$(PLUGIN): tests/helpers/plugin/plugin.c $(O)/gen/plugin/trace.h $(O)/gen/plugin/trace.c $(LIBSO)
	@mkdir -p $(dir $@)
	$(call say,LD,$@)$(COMPILE) -shared -I$(O)/gen/plugin -o $@ $< \
		$(O)/gen/plugin/trace.c $(P_LDFLAGS) $(LDFLAGS) -L$(O)/lib \
		-ltraced -Wl,-rpath,$(abspath $(O))/lib

check: deps
	$(Q)$(MAKE) --no-print-directory check-unit check-integration

check-unit: $(UNIT_TESTS)
	$(Q)fail=0; for t in $(UNIT_TESTS); do \
		echo "== $$t"; $$t || fail=1; \
	done; exit $$fail

check-integration: all $(HELPERS) $(PLUGIN)
	$(Q)O=$(abspath $(O)) SANITIZE=$(SANITIZE) sh tests/run-integration.sh $(INTEG_TESTS)

# Benchmark programs: the same event through traced and LTTng-UST.
$(eval $(call tracegen_rule,bench,tests/bench/trace-events,$(O)/gen/bench))
BENCH_TRACED := $(O)/bench/bench-traced
BENCH_LTTNG := $(O)/bench/bench-lttng
$(BENCH_TRACED): tests/bench/bench.c $(O)/gen/bench/trace.h $(O)/gen/bench/trace.c $(LIBSO)
	@mkdir -p $(dir $@)
	$(call say,LD,$@)$(COMPILE) -DBENCH_TRACED -I$(O)/gen/bench -o $@ \
		tests/bench/bench.c $(O)/gen/bench/trace.c -L$(O)/lib -ltraced \
		-Wl,-rpath,$(abspath $(O))/lib $(P_LDFLAGS)
$(BENCH_LTTNG): tests/bench/bench.c tests/bench/bench-lttng-tp.c tests/bench/bench-lttng-tp.h
	@mkdir -p $(dir $@)
	$(call say,LD,$@)$(CC) -std=gnu11 -D_GNU_SOURCE -O2 -g -DBENCH_LTTNG \
		-Itests/bench -o $@ tests/bench/bench.c \
		tests/bench/bench-lttng-tp.c $(call pkg_cflags,lttng-ust) \
		$(call pkg_libs,lttng-ust) -ldl -pthread

bench: deps
	$(Q)sh tools/deps.sh bench
	$(Q)$(MAKE) --no-print-directory all $(BENCH_TRACED) $(BENCH_LTTNG)
	$(Q)O=$(abspath $(O)) sh tests/bench/run.sh

# ThreadSanitizer: the client library's threads (producers, the
# connection thread, the fork handlers) and the daemon's loop and
# writeout pool, in the scenarios where they meet: live enabling,
# no daemon, overflowing rings, thread churn, client crashes, daemon
# restarts.  Not fork (045): TSan cannot follow a multi-threaded process
# into a fork()ed child that starts threads.  The 1 ms bound on a trace call
# (091) is the plain and ASan builds' to check: TSan instruments every
# access, so here it is 50 ms.  Reports go to files (stderr is
# part of what 040 checks); any report fails.  tests/tsan.supp says
# why each suppression is there.
TSAN_INTEG := $(addprefix tests/integration/,030-trace-event-live.sh \
	040-no-daemon.sh 060-loss-invariant.sh 061-thread-churn.sh \
	090-client-crash.sh 091-daemon-restart.sh)

check-tsan: deps
	$(Q)$(MAKE) --no-print-directory SANITIZE=thread check-tsan-run

check-tsan-run: all $(HELPERS) $(O)/tests/unit/test_ring
	$(Q)rm -rf $(O)/tsan && mkdir -p $(O)/tsan
	$(Q)export TSAN_OPTIONS="log_path=$(abspath $(O))/tsan/report \
		suppressions=$(abspath tests/tsan.supp)"; \
	$(O)/tests/unit/test_ring && \
	TRACE_CALL_MAX_NS=50000000 \
	O=$(abspath $(O)) SANITIZE=thread sh tests/run-integration.sh \
		$(TSAN_INTEG); rc=$$?; \
	if ls $(O)/tsan/report.* >/dev/null 2>&1; then \
		echo "FAIL: ThreadSanitizer reports:"; \
		head -n 60 $(O)/tsan/report.*; exit 1; \
	fi; \
	echo "tsan: no report"; exit $$rc
