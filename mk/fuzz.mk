# SPDX-License-Identifier: MIT
# Fuzzing: libFuzzer targets built with clang, ASan and UBSan.
#
#   make fuzz                   build every target, run each FUZZ_SECONDS
#   make fuzz FUZZ_SECONDS=600  a longer campaign
#
# A target tests/fuzz/fuzz_NAME.c defines LLVMFuzzerTestOneInput and is
# linked with the sources in fuzz_NAME_SRCS (pure code: proto/ and the
# offline readers).  Seeds are in tests/fuzz/corpus/NAME/; what a run
# finds goes to $(O)/fuzz/corpus/NAME and crashes to $(O)/fuzz/artifacts.

FUZZ_CC		?= clang
FUZZ_SECONDS	?= 30
FUZZ_SRCS	:= $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BINS	:= $(patsubst tests/fuzz/%.c,$(O)/fuzz/%,$(FUZZ_SRCS))
FUZZ_FLAGS	:= -std=gnu11 -g -O1 -fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=undefined $(P_CPPFLAGS) -Ictl

fuzz_wire_SRCS		:= proto/wire.c
fuzz_recwalk_SRCS	:= proto/recwalk.c
fuzz_tevents_SRCS	:= proto/tevents.c proto/text.c
fuzz_command_SRCS	:= proto/command.c proto/wire.c proto/text.c
fuzz_tracedir_SRCS	:= ctl/tsdl.c ctl/tracedir.c ctl/tracedir-stream.c \
			   proto/tevents.c proto/text.c proto/cause.c
fuzz_text_SRCS		:= proto/text.c
fuzz_rundir_SRCS	:= proto/rundir.c
fuzz_functab_SRCS	:= proto/functab.c
fuzz_export_SRCS	:= $(filter-out ctl/tracectl.c ctl/print.c ctl/stats.c \
			   ctl/top.c ctl/top-tui.c ctl/follow.c,\
			   $(wildcard ctl/*.c)) daemon/ctf.c $(PROTO_SRCS)
fuzz_export_LIBS	:= $(call pkg_libs,jansson zlib)
fuzz_funcmsgs_SRCS	:= daemon/func.c daemon/limits.c daemon/config.c \
			   proto/wire.c proto/functab.c proto/rule.c \
			   proto/text.c proto/ringsize.c

$(O)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c $$(fuzz_%_SRCS) | $(PUB_HDRS)
	@mkdir -p $(dir $@)
	$(call say,FUZZ-CC,$@)$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ $< $(fuzz_$*_SRCS) \
		$(fuzz_$*_LIBS)

fuzz: $(FUZZ_BINS)
	$(Q)sh tools/deps.sh fuzz
	$(Q)O=$(abspath $(O)) sh tests/fuzz/run.sh $(FUZZ_SECONDS) $(FUZZ_BINS)
