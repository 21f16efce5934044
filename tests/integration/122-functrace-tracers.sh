#!/bin/sh
# SPDX-License-Identifier: MIT
# Two tracers at once, one turned off while the program runs: the other
# keeps its records.  The program registers a tracer of its own
# ("count", counting entries and exits) beside the built-in graph:
#   phase 1: both on: graph records and counts for every call
#   phase 2: 'tracer count off': graph still records every call, count
#            sees none
#   phase 3: 'tracer graph off', 'tracer count on': no graph record,
#            count sees every call again
# Then the program removes its tracer while another thread is inside
# its callback: traced_tracer_unregister() waits for it, and no callback
# runs once it has returned.  info tracers shows both tracers and rules;
# a typo of the program's tracer's name is answered with that name.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ftlib.sh"

COUNT=3000
start_daemon
ctl trace-func work on >/dev/null
ctl trace-func leaf on >/dev/null

for v in $FT_VARIANTS; do
	D="$T/sync-$v"
	mkdir -p "$D"
	# Rules of the previous round: back to the programs' own choice.
	ctl tracer count on >/dev/null
	ctl tracer graph on >/dev/null
	"$HELPERS/$v" tracers "$D" $COUNT 3 > "$T/$v.out" 2>&1 &
	pid=$!
	wait_for 10 sh -c "'$BIN/tracectl' info tracers | grep -q 'count.*\[$pid\] on'" ||
		fail "$v: the daemon never saw its tracer: $(ctl info tracers)"
	# A running program's tracer is a known name too: a typo of it is
	# kept (it may be a tracer to come) and the reply names it.
	out=$(ctl tracer cuont on) || fail "$v: tracer cuont on: exit $?"
	[ "$out" = "tracer 'cuont' on: no tracer of libtraced (graph, latency) nor of the 1 running process that traces functions matches it (did you mean 'count'?); the rule applies to any process that registers one later ('tracer cuont delete' removes it)" ] ||
		fail "$v: tracer cuont on: $out"
	ctl tracer cuont delete >/dev/null || fail "$v: tracer cuont delete"
	touch "$D/go-1"
	wait_for 30 test -e "$D/done-1" || fail "$v: phase 1 did not end"
	out=$(ctl tracer count off) || fail "$v: tracer count off: $out"
	echo "$out" | grep -q "in 1 running process" || fail "$v: $out"
	ctl info tracers > "$T/info"
	grep -q "^count  *off  *.*\[$pid\] off" "$T/info" ||
		fail "$v: info tracers: $(cat "$T/info")"
	grep -q "^graph  *on  *.*\[$pid\] on" "$T/info" ||
		fail "$v: info tracers: $(cat "$T/info")"
	touch "$D/go-2"
	wait_for 30 test -e "$D/done-2" || fail "$v: phase 2 did not end"
	ctl tracer graph off >/dev/null && ctl tracer count on >/dev/null ||
		fail "$v: switching the tracers"
	touch "$D/go-3"
	wait $pid || fail "$v: exited with $?: $(cat "$T/$v.out")"
	grep -q '^done$' "$T/$v.out" || fail "$v: $(cat "$T/$v.out")"

	# The program's tracer: both calls per work() in phases 1 and 3.
	for p in 1 2 3; do
		if [ $p = 2 ]; then want=0; else want=$((2 * COUNT)); fi
		grep -q "^count phase $p entries $want exits $want\$" "$T/$v.out" ||
			fail "$v: phase $p: expected $want entries and exits: $(cat "$T/$v.out")"
	done
	grep -q '^unregister 0 late 0 entries [1-9]' "$T/$v.out" ||
		fail "$v: removal: $(grep unregister "$T/$v.out")"

	# graph: every call of phases 1 and 2, none of phase 3.
	ctl trace-file flush >/dev/null
	ft_events "$(echo "$TRACES"/*-$pid-*)" "$T/ev"
	awk '$2 == "M" && $3 < 100 { p = $3 } $2 == "M" && $3 >= 100 { p = 0 }
	    ($2 == "E" || $2 == "X") && ($3 == "work" || $3 == "leaf") { n[p " " $2]++ }
	    END { for (p = 1; p <= 3; p++) print p, n[p " E"] + 0, n[p " X"] + 0 }' \
	    "$T/ev" > "$T/$v.graph"
	printf '1 %d %d\n2 %d %d\n3 0 0\n' $((2 * COUNT)) $((2 * COUNT)) \
	    $((2 * COUNT)) $((2 * COUNT)) > "$T/want"
	cmp -s "$T/want" "$T/$v.graph" ||
		fail "$v: graph records per phase (phase entries exits): $(cat "$T/$v.graph")"
	ok "$v: graph and the program's tracer, each switched off while the other keeps its records; removal waits for callbacks"
done
