# SPDX-License-Identifier: MIT
# Tests: cmocka unit binaries (one per module), then integration scripts.
#
# A unit test tests/unit/test_NAME.c links with the proto objects and with
# the objects listed in test_NAME_OBJS (module objects, never a main()).

UNIT_SRCS	:= $(wildcard tests/unit/test_*.c)
UNIT_TESTS	:= $(patsubst tests/unit/%.c,$(O)/tests/unit/%,$(UNIT_SRCS))
# CHECK_SKIP: names of integration scripts not to run (CI's sanitizer
# run leaves out the container boot, which tests no code of ours that
# the plain run does not); each is named as skipped.
CHECK_SKIP	?=
INTEG_TESTS	:= $(filter-out $(patsubst %,tests/integration/%.sh,$(CHECK_SKIP)),\
		   $(sort $(wildcard tests/integration/[0-9]*.sh)))
HELPER_SRCS	:= $(wildcard tests/helpers/*.c)
# Function tracing helpers (tests/helpers/functrace/NAME.c), each built
# with every kind of instrumentation, compiled apart from the link so
# that -pg does not pull gprof's start-up code in.  Defined before the
# rules that list them (prerequisites expand as make reads them).
FT_HELPER_SRCS	:= $(wildcard tests/helpers/functrace/*.c)
FT_HELPER_BASE	:= $(patsubst tests/helpers/functrace/%.c,$(O)/tests/helpers/%,$(FT_HELPER_SRCS))
FT_HELPERS	:= $(FT_HELPER_BASE) $(addsuffix -mcount,$(FT_HELPER_BASE)) \
		   $(addsuffix -cyg,$(FT_HELPER_BASE))

test_tevents_OBJS	:=
test_wire_OBJS		:=
test_tracegen_OBJS	:= $(filter-out %/main.o,$(TRACEGEN_OBJS))
test_ring_OBJS		:= $(LIB_OBJS)
# test_ring's paced scenarios run on a clock of their own.
$(O)/tests/unit/test_ring: P_LDFLAGS += -Wl,--wrap=traced_clock_monotonic
test_ctf_OBJS		:= $(O)/daemon/ctf.o
test_tracedir_OBJS	:= $(O)/daemon/ctf.o $(O)/ctl/tsdl.o \
			   $(O)/ctl/tracedir.o $(O)/ctl/tracedir-stream.o \
			   $(O)/ctl/tracedir-io.o
test_reader_OBJS	:= $(O)/daemon/ctf.o $(filter-out %/tracectl.o %/print.o \
			   %/follow.o %/top.o %/top-tui.o,$(CTL_OBJS))
test_calls_OBJS		:= $(O)/ctl/calls.o $(O)/ctl/tracedir-io.o \
			   $(O)/ctl/tracedir.o $(O)/ctl/tracedir-stream.o \
			   $(O)/ctl/tsdl.o $(O)/daemon/ctf.o
test_readcmd_OBJS	:= $(O)/ctl/readcmd.o $(O)/ctl/reader.o \
			   $(O)/ctl/pair.o $(O)/ctl/tsdl.o $(O)/ctl/tracedir.o \
			   $(O)/ctl/tracedir-stream.o $(O)/ctl/tracedir-io.o
test_config_OBJS	:= $(O)/daemon/config.o
test_command_OBJS	:=
test_complete_OBJS	:= $(O)/ctl/complete.o
test_control_OBJS	:= $(O)/daemon/control.o $(O)/daemon/reply.o \
			   $(O)/daemon/limits.o $(O)/daemon/config.o \
			   $(O)/daemon/sock.o $(O)/daemon/fsdir.o \
			   $(O)/daemon/log.o $(O)/daemon/dclock.o
test_recwalk_OBJS	:=
test_rule_OBJS		:=
test_state_OBJS		:= $(O)/daemon/state.o $(O)/daemon/limits.o \
			   $(O)/daemon/config.o $(O)/daemon/log.o
test_limits_OBJS	:= $(O)/daemon/limits.o $(O)/daemon/config.o \
			   $(O)/daemon/log.o
test_outdir_OBJS	:= $(O)/daemon/outdir.o $(O)/daemon/fsdir.o \
			   $(O)/daemon/intake.o $(O)/daemon/worker.o \
			   $(O)/daemon/log.o
test_log_OBJS		:= $(O)/daemon/log.o
test_intake_OBJS	:= $(O)/daemon/intake.o $(O)/daemon/worker.o \
			   $(O)/daemon/log.o
test_stream_OBJS	:= $(O)/daemon/stream.o $(O)/daemon/ctf.o
test_drain_OBJS		:= $(O)/daemon/drain.o $(O)/daemon/worker.o \
			   $(O)/daemon/dclock.o $(O)/daemon/log.o \
			   $(O)/daemon/ctf.o
test_writeout_OBJS	:= $(O)/daemon/writeout.o $(O)/daemon/drain.o \
			   $(O)/daemon/worker.o $(O)/daemon/dclock.o \
			   $(O)/daemon/log.o $(O)/daemon/ctf.o
test_rundir_OBJS	:=
test_functab_OBJS	:=
test_functrace_OBJS	:= $(LIB_OBJS)
test_index_OBJS		:= $(O)/daemon/index.o $(O)/daemon/record.o \
			   $(O)/daemon/ixckpt.o $(O)/daemon/worker.o \
			   $(O)/daemon/log.o $(O)/daemon/repair.o \
			   $(O)/daemon/fsdir.o $(O)/daemon/intake.o \
			   $(O)/daemon/ctf.o

$(O)/tests/unit/%.o: P_CFLAGS += $(call pkg_cflags,cmocka $(DAEMON_PKGS))

.SECONDEXPANSION:
$(O)/tests/unit/%: $(O)/tests/unit/%.o $(PROTO_OBJS) $$(%_OBJS)
	$(call say,LD,$@)$(CC) $(P_LDFLAGS) $(LDFLAGS) -o $@ $^ \
		$(call pkg_libs,cmocka $(DAEMON_PKGS) $(CTL_PKGS)) -lm

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

# The hostile helper is more than one file: the rest is in
# tests/helpers/hostile-parts/ (its own folder, so that no part of it is taken
# for a helper of its own).
HOSTILE_OBJS := $(patsubst %.c,$(O)/%.o,$(wildcard tests/helpers/hostile-parts/*.c))
$(O)/tests/helpers/hostile: $(O)/tests/helpers/hostile.o $(HOSTILE_OBJS) \
	$(O)/gen/helpers/trace.o $(LIBSO)
	$(call say,LD,$@)$(CC) $(P_LDFLAGS) $(LDFLAGS) -o $@ \
		$(O)/tests/helpers/hostile.o $(HOSTILE_OBJS) \
		$(O)/gen/helpers/trace.o -L$(O)/lib -ltraced \
		-Wl,-rpath,$(abspath $(O))/lib

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

check-integration: all $(HELPERS) $(FT_HELPERS) $(PLUGIN)
	$(Q)for t in $(CHECK_SKIP); do echo "SKIP  $$t: CHECK_SKIP"; done
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

# tracectl print against babeltrace2 on 10M events, and a 2 GB trace
# printed in under 64 MiB (minutes: not part of make check).
bench-print: deps
	$(Q)sh tools/deps.sh bench
	$(Q)$(MAKE) --no-print-directory all $(BENCH_TRACED)
	$(Q)O=$(abspath $(O)) sh tests/bench/print-bench.sh

bench: deps
	$(Q)sh tools/deps.sh bench
	$(Q)$(MAKE) --no-print-directory all $(BENCH_TRACED) $(BENCH_LTTNG) $(FUNC_BENCH)
	$(Q)O=$(abspath $(O)) sh tests/bench/run.sh

# ThreadSanitizer: the client library's threads (producers, the
# connection thread, the fork handlers), the daemon's pipeline on its
# own (the drain thread and the writers, test_drain and test_writeout)
# and its intake thread, and the daemon's loop and writeout pool in the
# scenarios where they meet: live enabling, a
# process's own rules (a call waiting for the daemon's ack), no daemon,
# overflowing rings, thread churn, client crashes, daemon restarts,
# function tracing (121: sites patched while threads run, 122: a tracer
# removed while another thread is in its callback), the flight
# recorder (136: windows filled by the writers while snapshots are
# taken on the loop and written on their thread).  Not fork (045):
# TSan cannot follow a multi-threaded process into a fork()ed child
# that starts threads.  The 1 ms bound on a trace call
# (091) is the plain and ASan builds' to check: TSan instruments every
# access, so here it is 50 ms.  Reports go to files (stderr is
# part of what 040 checks); any report fails.  tests/tsan.supp says
# why each suppression is there.
TSAN_INTEG := $(addprefix tests/integration/,030-trace-event-live.sh \
	035-process-rules.sh 040-no-daemon.sh 060-loss-invariant.sh \
	061-thread-churn.sh 062-ring-growth.sh 090-client-crash.sh \
	091-daemon-restart.sh 121-functrace-toggle.sh \
	122-functrace-tracers.sh 136-recorder.sh)

check-tsan: deps
	$(Q)$(MAKE) --no-print-directory SANITIZE=thread check-tsan-run

check-tsan-run: all $(HELPERS) $(FT_HELPERS) $(O)/tests/unit/test_ring \
	$(O)/tests/unit/test_functrace $(O)/tests/unit/test_drain \
	$(O)/tests/unit/test_writeout $(O)/tests/unit/test_intake
	$(Q)rm -rf $(O)/tsan && mkdir -p $(O)/tsan
	$(Q)export TSAN_OPTIONS="log_path=$(abspath $(O))/tsan/report \
		suppressions=$(abspath tests/tsan.supp)"; \
	$(O)/tests/unit/test_ring && $(O)/tests/unit/test_functrace && \
	$(O)/tests/unit/test_drain && $(O)/tests/unit/test_writeout && \
	$(O)/tests/unit/test_intake && \
	TRACE_CALL_MAX_NS=50000000 \
	O=$(abspath $(O)) SANITIZE=thread sh tests/run-integration.sh \
		$(TSAN_INTEG); rc=$$?; \
	if ls $(O)/tsan/report.* >/dev/null 2>&1; then \
		echo "FAIL: ThreadSanitizer reports:"; \
		head -n 60 $(O)/tsan/report.*; exit 1; \
	fi; \
	echo "tsan: no report"; exit $$rc

# How the function tracing helpers are built: see FT_HELPERS above.
FT_LINK		= -L$(O)/lib -Wl,--no-as-needed -ltraced -Wl,-rpath,$(abspath $(O))/lib

$(O)/tests/helpers/functrace/%.o: tests/helpers/functrace/%.c $(O)/gen/helpers/trace.h
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(COMPILE) -fpatchable-function-entry=5 -I$(O)/gen/helpers -c -o $@ $<
$(O)/tests/helpers/functrace/%-mcount.o: tests/helpers/functrace/%.c $(O)/gen/helpers/trace.h
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(COMPILE) -fno-pie -pg -mfentry -mnop-mcount -mrecord-mcount -I$(O)/gen/helpers -c -o $@ $<
$(O)/tests/helpers/functrace/%-cyg.o: tests/helpers/functrace/%.c $(O)/gen/helpers/trace.h
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(COMPILE) -finstrument-functions -I$(O)/gen/helpers -c -o $@ $<
$(FT_HELPER_BASE): $(O)/tests/helpers/%: $(O)/tests/helpers/functrace/%.o $(O)/gen/helpers/trace.o $(LIBSO)
	$(call say,LD,$@)$(CC) $(P_LDFLAGS) $(LDFLAGS) -o $@ $< $(O)/gen/helpers/trace.o $(FT_LINK)
$(addsuffix -mcount,$(FT_HELPER_BASE)): $(O)/tests/helpers/%-mcount: $(O)/tests/helpers/functrace/%-mcount.o $(O)/gen/helpers/trace.o $(LIBSO)
	$(call say,LD,$@)$(CC) -no-pie $(P_LDFLAGS) $(LDFLAGS) -o $@ $< $(O)/gen/helpers/trace.o $(FT_LINK)
$(addsuffix -cyg,$(FT_HELPER_BASE)): $(O)/tests/helpers/%-cyg: $(O)/tests/helpers/functrace/%-cyg.o $(O)/gen/helpers/trace.o $(LIBSO)
	$(call say,LD,$@)$(CC) $(P_LDFLAGS) $(LDFLAGS) -o $@ $< $(O)/gen/helpers/trace.o $(FT_LINK)

# Function tracing benchmark: one program, built plain, for traced
# (patchable entries) and for uftrace (-pg).  See tests/bench/func-run.sh.
FUNC_BENCH := $(O)/bench/funcbench-plain $(O)/bench/funcbench-traced \
	$(O)/bench/funcbench-pg
$(O)/bench/funcbench-plain: tests/bench/funcbench.c
	@mkdir -p $(dir $@)
	$(call say,LD,$@)$(CC) -std=gnu11 -D_GNU_SOURCE -O2 -g -o $@ $< -pthread
$(O)/bench/funcbench-traced: tests/bench/funcbench.c $(LIBSO)
	@mkdir -p $(dir $@)
	$(call say,LD,$@)$(CC) -std=gnu11 -D_GNU_SOURCE -O2 -g \
		-fpatchable-function-entry=5 -o $@ $< -pthread $(FT_LINK)
$(O)/bench/funcbench-pg: tests/bench/funcbench.c
	@mkdir -p $(dir $@)
	$(call say,LD,$@)$(CC) -std=gnu11 -D_GNU_SOURCE -O2 -g -pg -o $@ $< -pthread
