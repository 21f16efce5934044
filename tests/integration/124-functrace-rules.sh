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
    "trace-func $(printf 'x\tx') on" "trace-func work" "tracer nope"; do
	set -- $args
	rc=0
	ctl "$@" > "$T/usage" 2>&1 || rc=$?
	[ $rc = 2 ] || fail "tracectl $args: exit $rc: $(cat "$T/usage")"
done
ctl trace-func work maybe 2>&1 | grep -q "expected 'on', 'off' or 'delete', not 'maybe'" ||
	fail "no cause named"
ok "usage errors name the cause"

# Rules are managed like the event rules (issue 29, point 5): listed,
# shown by info trace-rules, deleted one by one, reset.
ctl trace-func list >"$T/list" || fail "trace-func list"
[ "$(sed -n 's/^ *\([0-9]*\)  *\(on\|off\)  *\(.*\)$/\1 \2 \3/p' "$T/list" | tr '\n' '|')" = "1 on work|2 off ftcalls:leaf|" ] ||
	fail "trace-func list: $(cat "$T/list")"
ctl tracer list | grep -q "^ *1  *on  *tracer latency$" || fail "tracer list: $(ctl tracer list)"
ctl info trace-rules >"$T/rules" || fail "info trace-rules"
grep -q "^function rules" "$T/rules" && grep -q "on  *work$" "$T/rules" &&
    grep -q "on  *tracer latency$" "$T/rules" ||
	fail "info trace-rules does not show the function rules: $(cat "$T/rules")"
[ "$(ctl --json info trace-rules | jq '[.items[] | select(.kind == "function")] | length')" = 2 ] ||
	fail "info trace-rules --json: $(ctl --json info trace-rules)"
ctl trace-func 'ftcalls:leaf' delete | grep -q "rule 'ftcalls:leaf' removed" ||
	fail "trace-func delete"
rc=0
ctl trace-func 'ftcalls:leaf' delete >"$T/out" 2>&1 || rc=$?
[ $rc = 1 ] && grep -q "no trace-func rule 'ftcalls:leaf'" "$T/out" ||
	fail "deleting a rule that is not there: exit $rc: $(cat "$T/out")"
ctl trace-func reset | grep -q "^1 trace-func rule removed" || fail "trace-func reset"
ctl tracer reset | grep -q "^1 tracer rule removed" || fail "tracer reset"
ctl trace-func list | grep -q "no trace-func rule" || fail "rules after reset: $(ctl trace-func list)"
stop_daemon
start_daemon
[ "$(ctl trace-func list | grep -c '^ *[0-9]')" = 0 ] && [ "$(ctl tracer list | grep -c '^ *[0-9]')" = 0 ] ||
	fail "reset rules came back after a restart: $(ctl trace-func list; ctl tracer list)"
ok "trace-func and tracer rules: list, info trace-rules, delete, reset, kept so across a restart"

# Tracer names (issue 29, point 5).  One no tracer could have is refused
# with the closest known name; one no known tracer has (libtraced's own,
# or a running process's: none runs now) is kept for a program that
# registers it later, and the reply says so, with the closest name.
set -f	# 'lua:*' is a word, not a file name
for args in "Graph on| (did you mean 'graph'?)" "lua:*|" "lat.ency off| (did you mean 'latency'?)" \
    "$(printf '%040d' 0) on|"; do
	name=${args%%|*}
	hint=${args#*|}
	set -- $name
	[ $# = 2 ] || set -- "$1" on
	rc=0
	ctl tracer "$@" > "$T/out" 2>&1 || rc=$?
	[ $rc = 2 ] && grep -qF "tracectl: tracer '$1': no tracer can match it$hint: a tracer's name is 1 to 31 characters from a-z, 0-9, '_' and '-'" "$T/out" ||
		fail "tracer $*: exit $rc: $(cat "$T/out")"
done
set +f
[ "$(ctl --json tracer Graph on | jq -r '.status + " " + .message')" = "usage tracer 'Graph': no tracer can match it (did you mean 'graph'?): a tracer's name is 1 to 31 characters from a-z, 0-9, '_' and '-' (see 'tracectl info tracers')" ] ||
	fail "tracer Graph on --json: $(ctl --json tracer Graph on)"
ctl tracer list | grep -q "no tracer rule" || fail "a refused name became a rule: $(ctl tracer list)"
out=$(ctl tracer grpah on) || fail "tracer grpah on: exit $?"
[ "$out" = "tracer 'grpah' on: no tracer of libtraced (graph, latency) nor of the 0 running processes that trace functions matches it (did you mean 'graph'?); the rule applies to any process that registers one later ('tracer grpah delete' removes it)" ] ||
	fail "tracer grpah on: $out"
out=$(ctl tracer my-own off) || fail "tracer my-own off: exit $?"
echo "$out" | grep -q "^tracer 'my-own' off: no tracer of libtraced .* matches it; the rule applies to any process that registers one later" ||
	fail "tracer my-own off: $out"
for known in "latency on" "gr* off" "graph on"; do
	out=$(ctl tracer "${known% *}" "${known#* }") || fail "tracer $known: exit $?"
	[ "$out" = "tracer '${known% *}' ${known#* }: in 0 running processes and in every process that starts later" ] ||
		fail "tracer $known: $out"
done
[ "$(ctl tracer list | sed -n 's/^ *[0-9]*  *\(on\|off\)  *tracer //p' | tr '\n' ' ')" = "grpah my-own latency gr* graph " ] ||
	fail "tracer list: $(ctl tracer list)"
ctl tracer grpah delete | grep -q "rule 'grpah' removed" || fail "tracer grpah delete"
ok "tracer names: impossible ones refused (exit 2, did you mean), unknown ones kept with a warning and a did-you-mean"
stop_daemon
