# SPDX-License-Identifier: MIT
# make deb: the Debian packages traced, libtraced1 and libtraced-dev
# (debian/), in $(O)/deb.
#
# dpkg-buildpackage builds in the directory it is given and writes its
# results next to it, so it is given a copy of the tree in
# $(O)/deb/traced-$(VERSION): the tree is left as it was, two builds in
# two O= directories do not meet, and the .deb files land in $(O)/deb.
# The copy builds with its own make: neither this make's variables nor
# O and SANITIZE from the environment (tests export O) reach it, or its
# 'make clean' would remove this build: a package is the plain build,
# in the copy's own build/.
# lintian, where it is installed, checks the result; an error fails.

DEB_DIR		:= $(O)/deb
DEB_SRC		:= $(DEB_DIR)/traced-$(VERSION)
# $(O) relative to the tree, when it is inside it: not copied.
DEB_O_REL	:= $(patsubst $(CURDIR)/%,%,$(abspath $(O)))

.PHONY: deb
deb:
	@command -v dpkg-buildpackage >/dev/null && command -v dh >/dev/null || { \
		echo "make deb: dpkg-buildpackage or dh not found:" \
			"apt-get install dpkg-dev debhelper" >&2; exit 1; }
	@v=$$(sed -n '1s/^traced (\(.*\)-[^-]*).*/\1/p' debian/changelog); \
	[ "$$v" = "$(VERSION)" ] || { \
		echo "make deb: debian/changelog is at $$v, the Makefile at" \
			"$(VERSION): add an entry (dch -v $(VERSION)-1)" >&2; exit 1; }
	rm -rf $(DEB_DIR)
	mkdir -p $(DEB_SRC)
	tar -cf - --exclude-vcs --exclude=./build --exclude='./build-*' \
		--exclude=./$(DEB_O_REL) . | tar -xf - -C $(DEB_SRC)
	cd $(DEB_SRC) && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u O \
		-u SANITIZE dpkg-buildpackage -us -uc -b -Jauto
	rm -rf $(DEB_SRC)
	@if command -v lintian >/dev/null; then \
		echo "lintian $(DEB_DIR)/*.changes"; \
		lintian --fail-on error $(DEB_DIR)/*.changes || exit 1; \
	else \
		echo "lintian not installed: the packages are not checked"; \
	fi
	@ls $(DEB_DIR)/*.deb
