#!/bin/sh
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 The traced authors
#
# tracectl print --follow shows what the daemon writes while it writes
# it: an event of a quiet program is on its output within 1 s of the
# trace call; programs that start and end while it runs have every
# event shown exactly once, in order in each thread, with their values;
# --event and --pid keep only what they select; SIGINT ends it at once
# with status 0, a reader that closed its pipe quietly; usage errors
# are status 2 and no daemon status 3.
. "$(dirname "$0")/lib.sh"

# The followers go too, whatever happens.
FOLLOWERS=
# (set +e: under -e, the "(exit $rc)" that hands cleanup the status would
# end the trap.)
trap 'rc=$?; set +e; for p in $FOLLOWERS; do kill $p 2>/dev/null; done
	(exit $rc); cleanup' EXIT

now_ns() { date +%s%N; }

# The JSON lines of one event name, as "pid tid seq".
ticks() {	# FILE
	sed -n 's/.*"pid":\([0-9]*\),"tid":\([0-9]*\),"event":"helpers:test_tick","fields":{"seq":"\([0-9]*\)"}.*/\1 \2 \3/p' "$1"
}

set +e
ctl print --follow "$T" >/dev/null 2>"$T/usage.err"; rc=$?
set -e
[ $rc = 2 ] || fail "print --follow DIR exited $rc, not 2"
grep -q "takes no DIR" "$T/usage.err" || fail "usage: $(cat "$T/usage.err")"
set +e
TRACED_RUNTIME_DIR="$T/nodaemon" ctl print --follow >/dev/null 2>"$T/nod.err"
rc=$?
set -e
[ $rc = 3 ] || fail "print --follow with no daemon exited $rc, not 3"
grep -q "no daemon" "$T/nod.err" || fail "no daemon: $(cat "$T/nod.err")"
ok "usage error 2, no daemon 3"

start_daemon

# An event from a program that has been running since before --follow
# began is not shown again: --follow starts at the end of what is there.
"$HELPERS/emit" -t 0 -n 1 -H "$T/hold0" >"$T/e0.out" 2>/dev/null &
OLD=$!
wait_for 10 sh -c "ls -d '$TRACES'/emit-$OLD-*/stream-* >/dev/null" ||
	fail "no stream file for the early program"
sleep 0.3

# Started as themselves, not through ctl(), whose subshell would get
# the signals (and ignore SIGINT, as a background job of a script).
"$BIN/tracectl" print --follow --json >"$T/all.json" 2>"$T/all.err" &
ALL=$!
"$BIN/tracectl" print --follow --raw --event test_tick >"$T/ticks.txt" \
    2>"$T/ticks.err" &
TICKS=$!
FOLLOWERS="$ALL $TICKS"
# Both have asked the daemon once, by now.
sleep 1

# 1. Latency: a quiet program's single event, within 1 s of its call.
"$HELPERS/emit" -t 0 -n 1 -H "$T/hold1" >"$T/e1.out" 2>/dev/null &
QUIET=$!
seen=
i=0
while [ $i -lt 100 ]; do
	if grep -q "\"pid\":$QUIET,.*helpers:test_tick" "$T/all.json"; then
		seen=$(now_ns)
		break
	fi
	i=$((i + 1))
	sleep 0.02
done
[ -n "$seen" ] || fail "the quiet program's event was not shown in 2 s"
ts=$(grep "\"pid\":$QUIET,.*helpers:test_tick" "$T/all.json" |
	sed -n 's/.*"ts":"\([0-9]*\)".*/\1/p')
lat=$(( (seen - ts) / 1000000 ))
[ "$lat" -lt 1000 ] || fail "shown $lat ms after the trace call"
ok "a quiet program's event shown $lat ms after its trace call"
touch "$T/hold1" "$T/hold0"
wait $QUIET || fail "emit failed"
wait $OLD || fail "the early emit failed"

# 2. Sessions that start and end while following: one after another,
# and two at once, each thread 200 seq values.
PIDS=
for n in 1 2 3; do
	"$HELPERS/emit" -t 2 -n 200 >/dev/null 2>&1 &
	PIDS="$PIDS $!"
	wait $! || fail "emit $n failed"
done
"$HELPERS/emit" -t 3 -n 200 >/dev/null 2>&1 &
P4=$!
"$HELPERS/emit" -t 1 -n 200 >/dev/null 2>&1 &
P5=$!
wait $P4 || fail "emit 4 failed"
wait $P5 || fail "emit 5 failed"
PIDS="$PIDS $P4 $P5"
# 2 + 2 + 2 + 3 + 1 threads of 200 ticks, the quiet program's one.
want=$((10 * 200 + 1))
wait_for 10 sh -c "[ \$(grep -c 'helpers:test_tick' '$T/all.json') -ge $want ]" ||
	fail "$(grep -c 'helpers:test_tick' "$T/all.json") ticks shown, not $want"
sleep 1		# anything more would be a duplicate
ticks "$T/all.json" > "$T/ticks.all"
[ "$(wc -l < "$T/ticks.all")" = $want ] ||
	fail "$(wc -l < "$T/ticks.all") ticks shown, not $want"
! grep -q "^$OLD " "$T/ticks.all" ||
	fail "the event written before --follow began was shown"
for p in $PIDS; do
	tids=$(awk -v p=$p '$1 == p { print $2 }' "$T/ticks.all" | sort -u)
	[ -n "$tids" ] || fail "nothing shown of emit $p"
	for t in $tids; do
		# Every seq once, in order: 0 1 2 ... 199.
		awk -v p=$p -v t=$t '$1 == p && $2 == t { print $3 }' \
		    "$T/ticks.all" > "$T/seq"
		seq 0 199 | cmp -s - "$T/seq" ||
			fail "emit $p thread $t: seq values not 0..199 in order"
	done
done
n=$(sed -n 's/.*"pid":\([0-9]*\),.*"event":"helpers:test_mixed".*"str":"\([^"]*\)".*/\1 \2/p' \
    "$T/all.json" | grep -c " w[0-9]-s[0-9]*$" || true)
[ "$n" = $want ] || fail "$n test_mixed events with their string, not $want"
# Across threads and sessions: in time order (the window holds them).
sed -n 's/.*"ts":"\([0-9]*\)".*/\1/p' "$T/all.json" > "$T/ts"
sort -n "$T/ts" | cmp -s - "$T/ts" || fail "events not in time order"
ok "5 programs started and ended while following: every event once, in order"

# 3. The filter: only test_tick, each once, as print --raw shows it.
n=$(grep -c "helpers:test_tick: { seq = [0-9]* }$" "$T/ticks.txt" || true)
[ "$n" = $want ] || fail "--event test_tick: $n lines, not $want"
[ "$(wc -l < "$T/ticks.txt")" = $want ] ||
	fail "--event test_tick: other lines: $(grep -v test_tick "$T/ticks.txt" | head -n 3)"
ok "--event keeps only what it selects"

# 4. SIGINT: out promptly, status 0, nothing on stderr.
kill -INT $ALL $TICKS
for p in $ALL $TICKS; do
	wait_for 2 exited $p || fail "print --follow still runs 2 s after SIGINT"
done
set +e
wait $ALL; rc1=$?
wait $TICKS; rc2=$?
set -e
[ $rc1 = 0 ] && [ $rc2 = 0 ] || fail "exit status $rc1 and $rc2 after SIGINT"
[ ! -s "$T/all.err" ] || fail "stderr: $(cat "$T/all.err")"
[ ! -s "$T/ticks.err" ] || fail "stderr: $(cat "$T/ticks.err")"
ok "SIGINT ends it with status 0"

# 5. --pid of a running program, and a reader that goes away (| head).
"$HELPERS/emit" -t 1 -n 100000 -i 1000 >/dev/null 2>&1 &
BUSY=$!
"$HELPERS/emit" -t 1 -n 100000 -i 1000 >/dev/null 2>&1 &
OTHER=$!
{ ctl print --follow --pid $BUSY --event test_tick 2>"$T/head.err"; \
    echo $? > "$T/head.rc"; } | head -n 5 > "$T/head.out"
wait_for 5 test -s "$T/head.rc" || fail "print --follow still runs after head exited"
[ "$(cat "$T/head.rc")" = 0 ] || fail "exit status $(cat "$T/head.rc") when head went away"
[ ! -s "$T/head.err" ] || fail "stderr when head went away: $(cat "$T/head.err")"
[ "$(wc -l < "$T/head.out")" = 5 ] || fail "head got $(wc -l < "$T/head.out") lines"
n=$(grep -c " emit $BUSY/[0-9]* helpers:test_tick: tick " "$T/head.out" || true)
[ "$n" = 5 ] || fail "--pid $BUSY: $(cat "$T/head.out")"
# The same with --json, whose lines come out through jansson: a write
# into the closed pipe is no lack of memory.
{ ctl print --follow --json --event test_tick 2>"$T/jhead.err"; \
    echo $? > "$T/jhead.rc"; } | head -n 3 > "$T/jhead.out"
wait_for 5 test -s "$T/jhead.rc" || fail "print --follow --json still runs after head exited"
[ "$(cat "$T/jhead.rc")" = 0 ] && [ ! -s "$T/jhead.err" ] ||
	fail "--json | head: status $(cat "$T/jhead.rc"): $(cat "$T/jhead.err")"
[ "$(jq -r .event "$T/jhead.out" | sort -u)" = helpers:test_tick ] ||
	fail "--json | head: $(cat "$T/jhead.out")"
kill $BUSY $OTHER
wait $BUSY $OTHER 2>/dev/null || true
ok "--pid follows one program; a closed pipe ends it quietly, --json too"
