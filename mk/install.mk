# SPDX-License-Identifier: MIT
# make install PREFIX=... DESTDIR=...: programs, library, header, pc file,
# man pages, shell completion, systemd units.

MANPAGES := $(wildcard man/*.[1-8])

# systemd: units (systemd/NAME.in with the paths filled in), sysusers
# and tmpfiles snippets, and the settings file.  SYSCONFDIR is /etc for
# PREFIX=/usr, else under the prefix; the service names its settings
# file with --config when it is not traced's default, /etc/traced/.
SYSTEMD_UNITS	:= traced.service traced.socket traced-control.socket
SYSTEMDUSERUNITDIR ?= $(PREFIX)/lib/systemd/user
SYSCONFDIR	?= $(if $(filter /usr,$(PREFIX)),/etc,$(PREFIX)/etc)
SYSUSERSDIR	?= $(PREFIX)/lib/sysusers.d
TMPFILESDIR	?= $(PREFIX)/lib/tmpfiles.d
CONFIG_OPT	= $(if $(filter /etc,$(SYSCONFDIR)),, --config $(SYSCONFDIR)/traced/traced.conf)

# Shell completion scripts (generated: see COMPLETIONS in the Makefile).
BASHCOMPDIR	?= $(DATADIR)/bash-completion/completions
ZSHCOMPDIR	?= $(DATADIR)/zsh/vendor-completions
FISHCOMPDIR	?= $(DATADIR)/fish/vendor_completions.d

# Programs linked with libtraced from a prefix the dynamic linker does
# not search (anything but /usr/lib and /lib) find it through a run
# path that pkg-config gives: no LD_LIBRARY_PATH, no ldconfig needed.
PC_RPATH	= $(if $(filter /usr/lib% /lib%,$(LIBDIR)),,-Wl,-rpath,$(LIBDIR))

install: all
	$(INSTALL) -d $(DESTDIR)$(BINDIR) \
		$(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR)/traced \
		$(DESTDIR)$(PKGCONFIGDIR)
	@# traced is in bin: users run their own daemon, as tracectl says.
	$(INSTALL) -m 755 $(TRACED) $(TRACECTL) $(TRACEGEN) $(DESTDIR)$(BINDIR)/
	$(INSTALL) -m 755 $(LIBSO) $(DESTDIR)$(LIBDIR)/
	ln -sf libtraced.so.$(SOVERSION) $(DESTDIR)$(LIBDIR)/libtraced.so
	$(INSTALL) -m 644 $(LIBA) $(DESTDIR)$(LIBDIR)/
	$(INSTALL) -m 644 client-lib/include/traced.h $(DESTDIR)$(INCLUDEDIR)/
	$(INSTALL) -m 644 proto/ring.h $(DESTDIR)$(INCLUDEDIR)/traced/ring.h
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
		-e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(VERSION)|' \
		-e 's|@RPATH@|$(PC_RPATH)|' \
		client-lib/libtraced.pc.in > $(DESTDIR)$(PKGCONFIGDIR)/libtraced.pc
	for m in $(MANPAGES); do \
		s=$${m##*.}; $(INSTALL) -d $(DESTDIR)$(MANDIR)/man$$s; \
		$(INSTALL) -m 644 $$m $(DESTDIR)$(MANDIR)/man$$s/; \
	done
	@# Completion: where each shell's package looks on Debian.
	$(INSTALL) -d $(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR) \
		$(DESTDIR)$(FISHCOMPDIR)
	$(INSTALL) -m 644 $(O)/completion/tracectl.bash \
		$(DESTDIR)$(BASHCOMPDIR)/tracectl
	$(INSTALL) -m 644 $(O)/completion/_tracectl $(DESTDIR)$(ZSHCOMPDIR)/
	$(INSTALL) -m 644 $(O)/completion/tracectl.fish $(DESTDIR)$(FISHCOMPDIR)/
	$(INSTALL) -d $(DESTDIR)$(SYSTEMDUNITDIR) $(DESTDIR)$(SYSUSERSDIR) \
		$(DESTDIR)$(TMPFILESDIR) $(DESTDIR)$(SYSCONFDIR)/traced
	$(INSTALL) -d $(DESTDIR)$(SYSTEMDUSERUNITDIR)
	for u in $(SYSTEMD_UNITS); do \
		sed -e 's|@BINDIR@|$(BINDIR)|g' \
			-e 's|@CONFIG_OPT@|$(CONFIG_OPT)|g' systemd/$$u.in \
			> $(DESTDIR)$(SYSTEMDUNITDIR)/$$u && \
		chmod 644 $(DESTDIR)$(SYSTEMDUNITDIR)/$$u || exit 1; \
		sed -e 's|@BINDIR@|$(BINDIR)|g' systemd/user/$$u.in \
			> $(DESTDIR)$(SYSTEMDUSERUNITDIR)/$$u && \
		chmod 644 $(DESTDIR)$(SYSTEMDUSERUNITDIR)/$$u || exit 1; \
	done
	$(INSTALL) -m 644 systemd/traced.sysusers $(DESTDIR)$(SYSUSERSDIR)/traced.conf
	$(INSTALL) -m 644 systemd/traced.tmpfiles $(DESTDIR)$(TMPFILESDIR)/traced.conf
	@# The settings file is the administrator's once installed: kept.
	if [ -e $(DESTDIR)$(SYSCONFDIR)/traced/traced.conf ]; then \
		echo "keeping $(DESTDIR)$(SYSCONFDIR)/traced/traced.conf"; \
	else \
		$(INSTALL) -m 644 etc/traced.conf $(DESTDIR)$(SYSCONFDIR)/traced/; \
	fi

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/traced $(DESTDIR)$(BINDIR)/tracectl \
		$(DESTDIR)$(BINDIR)/tracegen $(DESTDIR)$(LIBDIR)/libtraced.* \
		$(DESTDIR)$(INCLUDEDIR)/traced.h $(DESTDIR)$(PKGCONFIGDIR)/libtraced.pc \
		$(DESTDIR)$(BASHCOMPDIR)/tracectl \
		$(DESTDIR)$(ZSHCOMPDIR)/_tracectl \
		$(DESTDIR)$(FISHCOMPDIR)/tracectl.fish
	rm -rf $(DESTDIR)$(INCLUDEDIR)/traced
	rm -f $(addprefix $(DESTDIR)$(SYSTEMDUNITDIR)/,$(SYSTEMD_UNITS)) \
		$(addprefix $(DESTDIR)$(SYSTEMDUSERUNITDIR)/,$(SYSTEMD_UNITS)) \
		$(DESTDIR)$(SYSUSERSDIR)/traced.conf \
		$(DESTDIR)$(TMPFILESDIR)/traced.conf
	@echo "left $(DESTDIR)$(SYSCONFDIR)/traced/traced.conf in place"
