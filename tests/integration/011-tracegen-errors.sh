#!/bin/sh
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 The traced authors
#
# tracegen's failures and exit statuses: a bad trace-events file exits
# 1 with FILE:LINE:COL and the cause on stderr and writes nothing; a
# missing file exits 1 with strerror; usage errors exit 2.  Also -o
# (replaces its target only on success, leaves no temporary behind),
# standard input, --help, --version and the default provider name.
#
# Environment: O = the build directory (absolute); tracegen in $O/bin.

set -u

SRC=$(cd "$(dirname "$0")/../.." && pwd)
O=${O:-$SRC/build}
TRACEGEN=$O/bin/tracegen

fail() {
	echo "FAIL: 011-tracegen-errors: $*" >&2
	exit 1
}

[ -x "$TRACEGEN" ] || fail "$TRACEGEN not built"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/traced-011.XXXXXX") || fail "mktemp"
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM

# run STATUS ARGS...: run tracegen, check its exit status; output in
# $tmp/out and $tmp/err.
run() {
	want=$1
	shift
	"$TRACEGEN" "$@" > "$tmp/out" 2> "$tmp/err"
	got=$?
	[ "$got" -eq "$want" ] || {
		cat "$tmp/err" >&2
		fail "tracegen $*: exit $got, want $want"
	}
}

# err_has TEXT: stderr contains TEXT (fixed string).
err_has() {
	grep -qF -- "$1" "$tmp/err" || {
		cat "$tmp/err" >&2
		fail "stderr lacks '$1'"
	}
}

mkdir -p "$tmp/good" "$tmp/bad"
cat > "$tmp/good/trace-events" <<'EOF'
# good events
open(const char *path, int flags) "path %s flags 0x%x"
disable close(int fd) "fd %d"
EOF
cat > "$tmp/bad/trace-events" <<'EOF'
# line 1
ok(int a) "%d"

broken(int a, const char *s "a=%d s=%s"
EOF

# A parse error: exit 1, FILE:LINE:COL: cause, nothing on stdout.
run 1 --header "$tmp/bad/trace-events"
err_has "$tmp/bad/trace-events:4:29: expected ')' after argument list"
[ -s "$tmp/out" ] && fail "output written for a bad file"
run 1 --source "$tmp/bad/trace-events"
err_has "$tmp/bad/trace-events:4:29: "

printf 'x(int a) "%%d"\nx(int b) "%%d"\n' > "$tmp/dup.events"
run 1 --header "$tmp/dup.events"
err_has "dup.events:2:1: duplicate event name 'x' (first declared on line 1)"

printf 'e(int a) "a\000b"\n' > "$tmp/nul.events"
run 1 --header "$tmp/nul.events"
err_has "nul.events:1:12: NUL byte in input"

# A missing or unreadable file: exit 1 with the reason.
run 1 --header "$tmp/missing/trace-events"
err_has "$tmp/missing/trace-events: No such file or directory"
run 1 --source "$tmp"
err_has "$tmp: Is a directory"

# Usage errors: exit 2.
run 2 --bogus "$tmp/good/trace-events"
err_has "unknown option '--bogus'"
err_has "usage: tracegen"
run 2 -x --header "$tmp/good/trace-events"
err_has "unknown option '-x'"
run 2 "$tmp/good/trace-events"
err_has "one of --header or --source is required"
run 2 --header --source "$tmp/good/trace-events"
err_has "exclude each other"
run 2 --header
err_has "no trace-events FILE given"
run 2 --header "$tmp/good/trace-events" "$tmp/good/trace-events"
err_has "only one trace-events FILE"
run 2 --header --provider 'my-lib' "$tmp/good/trace-events"
err_has "invalid provider name 'my-lib'"
run 2 --header --provider
err_has "option '--provider' needs an argument"
run 2 --header "$tmp/good/trace-events" -o
err_has "option '-o' needs an argument"

# --help and --version.
run 0 --help
grep -q -- '--provider NAME' "$tmp/out" || fail "--help output"
run 0 --version
grep -q '^tracegen (traced) [0-9]' "$tmp/out" || fail "--version output"

# The default provider: the directory of a file named trace-events.
run 0 --source "$tmp/good/trace-events"
grep -q 'struct traced_provider traced_provider_good$' "$tmp/out" \
    || fail "default provider is not 'good'"
grep -q '\.name = "good",' "$tmp/out" || fail "provider name field"
run 0 --header --provider net "$tmp/good/trace-events"
grep -q '^#ifndef TRACE_NET_H_$' "$tmp/out" || fail "--provider net"
grep -q '^trace_open(const char \*path, int flags)$' "$tmp/out" \
    || fail "trace_open() missing"

# Standard input.
run 0 --source - < "$tmp/good/trace-events"
grep -q '\.name = "app",' "$tmp/out" || fail "stdin provider is not app"

# -o: written on success, untouched on failure, no temporary left.
run 0 --header -o "$tmp/trace.h" "$tmp/good/trace-events"
[ -s "$tmp/out" ] && fail "-o also wrote to stdout"
grep -q '^#define TRACE_CLOSE_ID 1$' "$tmp/trace.h" || fail "-o content"
cp "$tmp/trace.h" "$tmp/trace.h.orig"
run 1 --header -o "$tmp/trace.h" "$tmp/bad/trace-events"
cmp -s "$tmp/trace.h" "$tmp/trace.h.orig" || fail "-o replaced on error"
run 1 --header -o "$tmp/nodir/trace.h" "$tmp/good/trace-events"
err_has "$tmp/nodir/trace.h"
leftover=$(find "$tmp" -name 'trace.h.*' ! -name 'trace.h.orig')
[ -z "$leftover" ] || fail "temporary files left: $leftover"

echo "PASS: 011-tracegen-errors: exit statuses and messages as documented"
