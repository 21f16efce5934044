#!/bin/sh
# SPDX-License-Identifier: MIT
# trace-func and tracer rules are kept like the event rules: set, then
# the daemon restarted, a program started afterwards traces what they
# say.  The latency tracer's histograms come back through info
# trace-funcs: the exact number of calls of each function, durations
# that add up; a function no rule turned on is off and counts nothing.
# Mistakes are usage errors (exit 2) that name the cause.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ftlib.sh"

COUNT=1000
start_daemon
ctl trace-func work on >/dev/null
ctl trace-func 'ftcalls:leaf' on >/dev/null
ctl trace-func 'ftcalls:leaf' off >/dev/null	# the last one counts
ctl tracer latency on >/dev/null
stop_daemon
start_daemon
ctl info tracers > "$T/info" || fail "info tracers"
grep -q '^latency  *on  *(no running process has it)' "$T/info" ||
	fail "the tracer rule did not survive a restart: $(cat "$T/info")"
ok "tracer rules kept across a restart"

D="$T/sync"
mkdir -p "$D"
"$HELPERS/ftcalls" phases "$D" $COUNT 2 > "$T/out" 2>&1 &
pid=$!
touch "$D/go-1"
wait_for 30 test -e "$D/done-1" || fail "phase 1 did not end"
# The counters come at most once a second.
wait_for 10 sh -c "'$BIN/tracectl' info trace-funcs work | grep -q ' $COUNT '" ||
	fail "info trace-funcs work: $(ctl info trace-funcs work)"
ctl info trace-funcs work > "$T/work"
grep -q "^ftcalls:work  *on  *$COUNT  *[0-9.]*[nmu]*s  *[0-9.]*[nmu]*s  *[0-9.]*[nmu]*s  *[0-9.]*[nmu]*s  *ftcalls\[$pid\]\$" "$T/work" ||
	fail "info trace-funcs work: $(cat "$T/work")"
ctl info trace-funcs leaf > "$T/leaf"
grep -q "^ftcalls:leaf  *off  *-  *-  *-  *-  *-  *ftcalls\[$pid\]\$" "$T/leaf" ||
	fail "info trace-funcs leaf: $(cat "$T/leaf")"
# JSON: exact numbers; the mean is the sum over the calls.
ctl --json info trace-funcs work > "$T/work.json"
jq -e --argjson n $COUNT '.items | length == 1 and .[0].calls == $n and
    .[0].state == "on" and .[0].patched == 1 and .[0].avg_ns > 0 and
    .[0].max_ns >= .[0].avg_ns and .[0].p99_ns_below >= .[0].p50_ns_below' \
    "$T/work.json" >/dev/null || fail "info trace-funcs --json: $(cat "$T/work.json")"
ok "info trace-funcs: work traced, $COUNT calls with durations; leaf off"
touch "$D/go-2"
wait $pid || fail "exited with $?: $(cat "$T/out")"
ctl trace-file flush >/dev/null
ft_events "$(echo "$TRACES"/*-$pid-*)" "$T/ev"
[ "$(ft_count "$T/ev" E work)" = $((2 * COUNT)) ] &&
    [ "$(ft_count "$T/ev" E leaf)" = 0 ] ||
	fail "graph records: work $(ft_count "$T/ev" E work), leaf $(ft_count "$T/ev" E leaf)"
ok "a program started after the restart traced as the kept rules say"

# Mistakes.
for args in "trace-func work maybe" "trace-func" "tracer graph" \
    "trace-func $(printf 'x\tx') on"; do
	set -- $args
	rc=0
	ctl "$@" > "$T/usage" 2>&1 || rc=$?
	[ $rc = 2 ] || fail "tracectl $args: exit $rc: $(cat "$T/usage")"
done
ctl trace-func work maybe 2>&1 | grep -q "expected 'on' or 'off', not 'maybe'" ||
	fail "no cause named"
ok "usage errors name the cause"
