#!/bin/sh
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 The traced authors
#
# Every man page formats without a warning from groff (-ww: all of
# them).  A warning is text a reader does not see: a line that begins
# with an apostrophe or a dot is a request to troff, and the rest of it
# vanishes from the page.  Also: each page has its NAME section, the
# one whatis(1) and apropos(1) read.

set -u

SRC=$(cd "$(dirname "$0")/../.." && pwd)

fail() {
	echo "FAIL: 015-man-pages: $*" >&2
	exit 1
}

command -v groff >/dev/null 2>&1 || fail "groff not installed (apt-get install groff-base)"

n=0
for page in "$SRC"/man/*.[1-8]; do
	n=$((n + 1))
	warn=$(groff -man -ww -z -Tutf8 "$page" 2>&1) ||
		fail "groff failed on $page: $warn"
	[ -z "$warn" ] || fail "$page: $warn"
	grep -q '^\.SH NAME' "$page" || fail "$page has no NAME section"
done
[ "$n" -ge 6 ] || fail "found $n man pages under $SRC/man, expected 6"
echo "PASS: 015-man-pages ($n pages)"
