#!/bin/sh
# SPDX-License-Identifier: MIT
# Function tracing switched on and off three times while the program
# runs, with each kind of instrumentation: a call made while its
# function is on is in the trace (entry and exit, exactly once each), a
# call made while it is off is absent, and the program goes through
# every switch and ends well.  Between switches, tracectl trace-func
# returns only once the process has patched its sites.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ftlib.sh"

COUNT=2000
start_daemon

for v in $FT_VARIANTS; do
	D="$T/sync-$v"
	mkdir -p "$D"
	"$HELPERS/$v" phases "$D" $COUNT 6 > "$T/$v.out" 2>&1 &
	pid=$!
	# Known to the daemon, functions and all, before the first switch.
	wait_for 10 sh -c "'$BIN/tracectl' info trace-funcs work | grep -q '[$pid]'" ||
		fail "$v: the daemon never heard of its functions"
	for p in 1 2 3 4 5 6; do
		if [ $((p % 2)) = 1 ]; then on=on; else on=off; fi
		out=$(ctl trace-func work $on && ctl trace-func leaf $on) ||
			fail "$v: trace-func $on: $out"
		case $p in 1)
			echo "$out" | grep -q "1 function in 1 running process" ||
				fail "$v: trace-func says: $out" ;;
		esac
		touch "$D/go-$p"
		wait_for 30 test -e "$D/done-$p" || fail "$v: phase $p did not end"
	done
	wait $pid || fail "$v: exited with $?: $(cat "$T/$v.out")"
	grep -q '^done$' "$T/$v.out" || fail "$v: $(cat "$T/$v.out")"
	ctl trace-file flush >/dev/null
	wait_no_sessions 10 || fail "$v: session did not end"
	ft_events "$(echo "$TRACES"/*-$pid-*)" "$T/ev"
	# Calls counted per phase, between the phase's two markers.
	awk '$2 == "M" && $3 < 100 { p = $3 } $2 == "M" && $3 >= 100 { p = 0 }
	    $2 == "E" || $2 == "X" { n[p " " $2 " " $3]++ }
	    END { for (k in n) print k, n[k] }' "$T/ev" | sort > "$T/$v.counts"
	for p in 1 2 3 4 5 6; do
		for f in work leaf; do
			for k in E X; do
				got=$(awk -v p=$p -v k=$k -v f=$f \
				    '$1 == p && $2 == k && $3 == f { print $4 }' \
				    "$T/$v.counts")
				if [ $((p % 2)) = 1 ]; then
					want=$COUNT
				else
					want=
				fi
				[ "${got:-}" = "$want" ] || fail "$v: phase $p:" \
				    "$f $k: ${got:-no} calls, expected" \
				    "${want:-none}"
			done
		done
	done
	ft_nesting "$T/ev" '^(main|phases)$' > "$T/nest" ||
		fail "$v: nesting: $(head -5 "$T/nest")"
	ok "$v: on/off three times: $COUNT calls of work and leaf in each on phase, none while off"
done
