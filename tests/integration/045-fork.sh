#!/bin/sh
# SPDX-License-Identifier: MIT
# fork(): the child drops the parent's rings and connection and traces
# as a session of its own; the parent's trace is untouched by it.
. "$(dirname "$0")/lib.sh"

start_daemon
out=$("$HELPERS/forker" 1000) || fail "forker exited with $?"
child=${out#child }
ctl trace-file flush >/dev/null
parent_dir=$(ls -d "$TRACES"/forker-* | grep -v -- "-$child-")
child_dir=$(ls -d "$TRACES"/forker-"$child"-* 2>/dev/null) ||
	fail "no session for the child $child: $(ls "$TRACES")"
bt "$parent_dir" > "$T/parent.txt" 2>"$T/parent.err" || fail "parent trace"
bt "$child_dir" > "$T/child.txt" 2>"$T/child.err" || fail "child trace"
[ ! -s "$T/parent.err" ] && [ ! -s "$T/child.err" ] ||
	fail "babeltrace2 warned: $(cat "$T/parent.err" "$T/child.err")"
[ "$(count_events "$T/parent.txt" test_marker)" = 2000 ] ||
	fail "parent: $(count_events "$T/parent.txt" test_marker) markers, not 2000"
[ "$(count_events "$T/parent.txt" test_tick)" = 0 ] ||
	fail "the child's events landed in the parent's trace"
[ "$(count_events "$T/child.txt" test_tick)" = 1000 ] ||
	fail "child: $(count_events "$T/child.txt" test_tick) ticks, not 1000"
[ "$(count_events "$T/child.txt" test_marker)" = 0 ] ||
	fail "the parent's events landed in the child's trace"
# The parent's markers are in order, 0..1999, none twice.
sed -n 's/.*test_marker: .*seq = \([0-9]*\).*/\1/p' "$T/parent.txt" |
	awk '$1 != NR - 1 { print "marker " $1 " at " NR; exit 1 }' ||
	fail "parent markers out of order"
ok "parent and child traced in their own sessions"
