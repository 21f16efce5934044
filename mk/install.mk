# SPDX-License-Identifier: MIT
# make install PREFIX=... DESTDIR=...: programs, library, header, pc file,
# man pages, systemd units.

MANPAGES := $(wildcard man/*.[1-8])

install: all
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(SBINDIR) \
		$(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR)/traced \
		$(DESTDIR)$(PKGCONFIGDIR)
	$(INSTALL) -m 755 $(TRACED) $(DESTDIR)$(SBINDIR)/traced
	$(INSTALL) -m 755 $(TRACECTL) $(TRACEGEN) $(DESTDIR)$(BINDIR)/
	$(INSTALL) -m 755 $(LIBSO) $(DESTDIR)$(LIBDIR)/
	ln -sf libtraced.so.$(SOVERSION) $(DESTDIR)$(LIBDIR)/libtraced.so
	$(INSTALL) -m 644 $(LIBA) $(DESTDIR)$(LIBDIR)/
	$(INSTALL) -m 644 client-lib/include/traced.h $(DESTDIR)$(INCLUDEDIR)/
	$(INSTALL) -m 644 proto/ring.h $(DESTDIR)$(INCLUDEDIR)/traced/ring.h
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
		-e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(VERSION)|' \
		client-lib/libtraced.pc.in > $(DESTDIR)$(PKGCONFIGDIR)/libtraced.pc
	for m in $(MANPAGES); do \
		s=$${m##*.}; $(INSTALL) -d $(DESTDIR)$(MANDIR)/man$$s; \
		$(INSTALL) -m 644 $$m $(DESTDIR)$(MANDIR)/man$$s/; \
	done
	$(INSTALL) -d $(DESTDIR)$(DATADIR)/bash-completion/completions
	$(INSTALL) -m 644 completion/tracectl.bash \
		$(DESTDIR)$(DATADIR)/bash-completion/completions/tracectl
	if [ -d systemd ] && ls systemd/*.in >/dev/null 2>&1; then \
		$(INSTALL) -d $(DESTDIR)$(SYSTEMDUNITDIR); \
		for u in systemd/*.in; do \
			sed -e 's|@SBINDIR@|$(SBINDIR)|g' -e 's|@BINDIR@|$(BINDIR)|g' \
				$$u > $(DESTDIR)$(SYSTEMDUNITDIR)/$$(basename $$u .in); \
		done; \
	fi

uninstall:
	rm -f $(DESTDIR)$(SBINDIR)/traced $(DESTDIR)$(BINDIR)/tracectl \
		$(DESTDIR)$(BINDIR)/tracegen $(DESTDIR)$(LIBDIR)/libtraced.* \
		$(DESTDIR)$(INCLUDEDIR)/traced.h $(DESTDIR)$(PKGCONFIGDIR)/libtraced.pc \
		$(DESTDIR)$(DATADIR)/bash-completion/completions/tracectl
	rm -rf $(DESTDIR)$(INCLUDEDIR)/traced
