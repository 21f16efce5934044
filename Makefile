# SPDX-License-Identifier: MIT
# traced: one non-recursive Makefile.  Outputs go under $(O) (build/).
#
#   make                 build programs, library, example
#   make check           build and run every test (unit, then integration)
#   make check SANITIZE=1  the same under ASan + UBSan
#   make check-tsan      the client library's threads under TSan
#   make run             start a private traced and trace the example
#   make install PREFIX=/usr/local DESTDIR=
#   make deb             Debian packages in $(O)/deb (mk/deb.mk)
#   make V=1             show full commands

VERSION		:= 0.1.0
SOVERSION	:= 1

ifeq ($(SANITIZE),1)
O		?= build-asan
else ifeq ($(SANITIZE),thread)
O		?= build-tsan
else
O		?= build
endif
PREFIX		?= /usr/local
BINDIR		?= $(PREFIX)/bin
LIBDIR		?= $(PREFIX)/lib
INCLUDEDIR	?= $(PREFIX)/include
PKGCONFIGDIR	?= $(LIBDIR)/pkgconfig
MANDIR		?= $(PREFIX)/share/man
DATADIR		?= $(PREFIX)/share
SYSTEMDUNITDIR	?= $(PREFIX)/lib/systemd/system

CC		?= cc
PKG_CONFIG	?= pkg-config
INSTALL		?= install

ifeq ($(V),1)
Q :=
say :=
else
Q := @
say = @printf '  %-8s %s\n' $(1) $(2);
endif

WARN := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
	-Wpointer-arith -Wformat=2 -Wno-format-nonliteral -Wvla \
	-Wundef -Wcast-align -Wwrite-strings
ifeq ($(CI),true)
WARN += -Werror
endif

# Project flags; the user's CFLAGS/CPPFLAGS/LDFLAGS come after and win.
P_CPPFLAGS := -D_GNU_SOURCE -DTRACED_VERSION='"$(VERSION)"' \
	-I. -Iproto -Iclient-lib/include -I$(O)/include
P_CFLAGS := -std=gnu11 -fPIC -pthread $(WARN) -MMD -MP
CFLAGS ?= -O2 -g
P_LDFLAGS := -pthread

ifeq ($(SANITIZE),1)
P_CFLAGS += -fsanitize=address,undefined -fno-omit-frame-pointer \
	-fno-sanitize-recover=undefined
P_LDFLAGS += -fsanitize=address,undefined
endif
# SANITIZE=thread: ThreadSanitizer, for the client library's threads
# (see check-tsan in mk/tests.mk).
ifeq ($(SANITIZE),thread)
P_CFLAGS += -fsanitize=thread -fno-omit-frame-pointer
P_LDFLAGS += -fsanitize=thread
endif

COMPILE = $(CC) $(P_CPPFLAGS) $(CPPFLAGS) $(P_CFLAGS) $(CFLAGS)

# ---- dependencies ------------------------------------------------------

DAEMON_PKGS := libevent_core libevent_pthreads sqlite3 libsystemd jansson
CTL_PKGS := jansson zlib ncursesw
TEST_PKGS := cmocka

pkg_cflags = $(shell $(PKG_CONFIG) --cflags $(1) 2>/dev/null)
pkg_libs = $(shell $(PKG_CONFIG) --libs $(1) 2>/dev/null)

# ---- sources -------------------------------------------------------------

PROTO_SRCS	:= $(wildcard proto/*.c)
LIB_SRCS	:= $(wildcard client-lib/*.c client-lib/functrace/*.c)
LIB_ASRCS	:= $(wildcard client-lib/functrace/*.S)
TRACEGEN_SRCS	:= $(wildcard client-lib/tracegen/*.c)
DAEMON_SRCS	:= $(wildcard daemon/*.c)
CTL_SRCS	:= $(wildcard ctl/*.c)

obj = $(patsubst %.c,$(O)/%.o,$(1))

PROTO_OBJS	:= $(call obj,$(PROTO_SRCS))
# The proto objects in the library: the wire format, the trust rule,
# the function tables, the ring size rule, ring memory, the rule engine.
LIB_PROTO_OBJS	:= $(O)/proto/wire.o $(O)/proto/rundir.o $(O)/proto/functab.o \
	$(O)/proto/ringsize.o $(O)/proto/ringmem.o $(O)/proto/rule.o
LIB_OBJS	:= $(call obj,$(LIB_SRCS)) $(patsubst %.S,$(O)/%.o,$(LIB_ASRCS))
TRACEGEN_OBJS	:= $(call obj,$(TRACEGEN_SRCS))
DAEMON_OBJS	:= $(call obj,$(DAEMON_SRCS))
CTL_OBJS	:= $(call obj,$(CTL_SRCS))

# Installed header tree: traced.h includes <traced/ring.h>.
PUB_HDRS	:= $(O)/include/traced/ring.h

LIBSO		:= $(O)/lib/libtraced.so.$(SOVERSION)
LIBA		:= $(O)/lib/libtraced.a
TRACED		:= $(O)/bin/traced
TRACECTL	:= $(O)/bin/tracectl
TRACEGEN	:= $(O)/bin/tracegen
EXAMPLE		:= $(O)/bin/traced-example

PROGRAMS	:= $(TRACED) $(TRACECTL) $(TRACEGEN)

.PHONY: all check check-unit check-integration check-tsan check-tsan-run \
	run install uninstall clean \
	deps bench bench-print fuzz
.DEFAULT_GOAL := all

# Shell completion scripts, as 'tracectl completion SHELL' prints them.
COMPLETIONS	:= $(O)/completion/tracectl.bash $(O)/completion/_tracectl \
	$(O)/completion/tracectl.fish

all: $(PROGRAMS) $(LIBSO) $(LIBA) $(O)/lib/libtraced.so $(EXAMPLE) \
	$(O)/lib/pkgconfig/libtraced.pc $(COMPLETIONS)

$(O)/include/traced/ring.h: proto/ring.h
	@mkdir -p $(dir $@)
	$(Q)cp $< $@

$(O)/%.o: %.c | $(PUB_HDRS)
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(COMPILE) -c -o $@ $<

$(O)/%.o: %.S
	@mkdir -p $(dir $@)
	$(call say,AS,$<)$(CC) $(P_CPPFLAGS) $(CPPFLAGS) -MMD -MP -c -o $@ $<

# Per-directory flags.
$(DAEMON_OBJS): P_CFLAGS += $(call pkg_cflags,$(DAEMON_PKGS))
$(CTL_OBJS): P_CFLAGS += $(call pkg_cflags,$(CTL_PKGS))
$(LIB_OBJS): P_CFLAGS += -fvisibility=hidden
# The hot path of function tracing leaves vector registers alone (see
# client-lib/functrace/stub-x86_64.S).
ifneq ($(findstring x86_64,$(shell $(CC) -dumpmachine)),)
$(O)/client-lib/functrace/dispatch.o: P_CFLAGS += -mgeneral-regs-only
endif

# -z nodelete: once loaded, libtraced stays: it runs threads of its own,
# TLS destructors and the on_exit() handler that reports the exit
# status, and when it came with a dlopen()ed library, a dlclose() of that
# library must not unmap it.
$(LIBSO): $(LIB_OBJS) $(LIB_PROTO_OBJS) client-lib/libtraced.map
	@mkdir -p $(dir $@)
	$(call say,LD,$@)$(CC) -shared -Wl,-soname,libtraced.so.$(SOVERSION) \
		-Wl,--version-script=client-lib/libtraced.map -Wl,-z,defs \
		-Wl,-z,nodelete \
		$(P_LDFLAGS) $(LDFLAGS) -o $@ $(LIB_OBJS) $(LIB_PROTO_OBJS) -ldl

$(O)/lib/libtraced.so: $(LIBSO)
	$(Q)ln -sf libtraced.so.$(SOVERSION) $@

$(LIBA): $(LIB_OBJS) $(LIB_PROTO_OBJS)
	@mkdir -p $(dir $@)
	$(call say,AR,$@)rm -f $@ && $(AR) rcs $@ $^

$(O)/lib/pkgconfig/libtraced.pc: client-lib/libtraced.pc.in Makefile
	@mkdir -p $(dir $@)
	$(Q)sed -e 's|@PREFIX@|$(abspath $(O))|' -e 's|@LIBDIR@|$(abspath $(O))/lib|' \
		-e 's|@INCLUDEDIR@|$(abspath $(O))/include|' \
		-e 's|@RPATH@|-Wl,-rpath,$(abspath $(O))/lib|' \
		-e 's|@VERSION@|$(VERSION)|' $< > $@

$(TRACEGEN): $(TRACEGEN_OBJS) $(PROTO_OBJS)
	@mkdir -p $(dir $@)
	$(call say,LD,$@)$(CC) $(P_LDFLAGS) $(LDFLAGS) -o $@ $^

$(TRACED): $(DAEMON_OBJS) $(PROTO_OBJS)
	@mkdir -p $(dir $@)
	$(call say,LD,$@)$(CC) $(P_LDFLAGS) $(LDFLAGS) -o $@ $^ \
		$(call pkg_libs,$(DAEMON_PKGS)) -lm

$(TRACECTL): $(CTL_OBJS) $(PROTO_OBJS)
	@mkdir -p $(dir $@)
	$(call say,LD,$@)$(CC) $(P_LDFLAGS) $(LDFLAGS) -o $@ $^ \
		$(call pkg_libs,$(CTL_PKGS)) -lm

# The scripts come from the tracectl just built, which holds the command
# table they complete (ctl/complete.c): they cannot disagree with it.
$(O)/completion/tracectl.bash: $(TRACECTL)
	@mkdir -p $(dir $@)
	$(call say,GEN,$@)$(TRACECTL) completion bash > $@.tmp && mv $@.tmp $@
$(O)/completion/_tracectl: $(TRACECTL)
	@mkdir -p $(dir $@)
	$(call say,GEN,$@)$(TRACECTL) completion zsh > $@.tmp && mv $@.tmp $@
$(O)/completion/tracectl.fish: $(TRACECTL)
	@mkdir -p $(dir $@)
	$(call say,GEN,$@)$(TRACECTL) completion fish > $@.tmp && mv $@.tmp $@

# ---- generated trace code -----------------------------------------------
# $(call tracegen_rule,DIR,trace-events,outdir): outdir/trace.h, trace.c

define tracegen_rule
$(3)/trace.h: $(2) $(TRACEGEN)
	@mkdir -p $(3)
	$$(call say,GEN,$$@)$(TRACEGEN) --header -o $$@ $(2)
$(3)/trace.c: $(2) $(TRACEGEN)
	@mkdir -p $(3)
	$$(call say,GEN,$$@)$(TRACEGEN) --source -o $$@ $(2)
endef

$(eval $(call tracegen_rule,example,example/trace-events,$(O)/gen/example))

$(O)/gen/example/trace.o: $(O)/gen/example/trace.c $(O)/gen/example/trace.h
	$(call say,CC,$<)$(COMPILE) -c -o $@ $<
$(O)/example/example.o: example/example.c $(O)/gen/example/trace.h
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(COMPILE) -I$(O)/gen/example -c -o $@ $<
$(EXAMPLE): $(O)/example/example.o $(O)/gen/example/trace.o $(LIBA)
	@mkdir -p $(dir $@)
	$(call say,LD,$@)$(CC) $(P_LDFLAGS) $(LDFLAGS) -o $@ $^

include mk/tests.mk
include mk/install.mk
include mk/fuzz.mk
include mk/deb.mk

# ---- convenience ----------------------------------------------------------

deps:
	$(Q)sh tools/deps.sh build test

run: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)sh tools/demo.sh $(O)

clean:
	rm -rf $(O)

-include $(shell find $(O) -name '*.d' -type f 2>/dev/null)
