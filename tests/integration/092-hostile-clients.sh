#!/bin/sh
# SPDX-License-Identifier: MIT
# Hostile clients cannot hurt the daemon or anyone else.  tests/helpers/
# hostile speaks the client protocol by hand and gets it wrong in every
# way it knows: corrupt ring headers and records, truncated, oversized,
# wrong-version and garbage messages, lying function tables, the wrong
# kind of descriptor, memfds that shrink or are not sealed (hostile -l
# lists them, with the log line each must produce).  Meanwhile a well-behaved program traces.
# Afterwards: traced still runs, logged why it refused each client,
# holds no descriptor more than before, and the good program's trace is
# complete (every event, per thread, no discarded events) and readable,
# like every session directory the hostile ones left.
. "$(dirname "$0")/lib.sh"
bg_track_init

H="$HELPERS/hostile"
start_daemon
"$HELPERS/emit" -t 2 -i 100 -s "$T/stop" > "$T/emit.out" &
emit=$!
bg_track $emit
wait_for 5 sh -c "'$BIN/tracectl' info trace | grep -q 'emit\\[$emit\\]'" ||
	fail "emit did not connect"
# The baseline: after a first hostile session came and went, and the
# index (written at most once a second) has its files open.
(cd "$T" && TRACED=0 "$H" ring-good >/dev/null) || fail "hostile ring-good"
sleep 1.5
fds0=$(daemon_fds)

# hostile runs with TRACED=0: the helpers' own provider stays quiet.
# fd-file makes a file in the current directory.
cd "$T"
TRACED=0 "$H" $(TRACED=0 "$H" -l | cut -f1) > "$T/hostile.out" 2>&1 ||
	fail "hostile saw the daemon misbehave: $(grep -i 'check failed\|hostile:' "$T/hostile.out")"
cd - >/dev/null
kill -0 "$DAEMON_PID" || fail "traced died"
n=$(TRACED=0 "$H" -l | wc -l)
[ "$(wc -l < "$T/hostile.out")" -ge "$n" ] ||
	fail "hostile stopped early: $(tail -n 3 "$T/hostile.out")"
ok "traced survived $n hostile clients"

# Why each was refused, in the log: every expected line at least as
# often as cases expect it.
TRACED=0 "$H" -l | awk -F '\t' '$2 != "" { n[$2]++ } END { for (w in n) print n[w] "\t" w }' |
while IFS="$(printf '\t')" read -r want what; do
	got=$(grep -cF -- "$what" "$T/traced.log" || true)
	[ "$got" -ge "$want" ] ||
		fail "log says '$what' $got times, $want cases expect it"
done
ok "the log says why each hostile client was refused"

# No descriptor kept for them, once their sessions ended.
wait_for 10 sh -c "[ \$('$BIN/tracectl' --json info trace | sed -n 's/.*\"sessions\":\([0-9]*\)}.*/\1/p') = 1 ]" ||
	fail "hostile sessions left: $(ctl info trace)"
fds1=$(daemon_fds)
[ "$fds1" -le "$fds0" ] || fail "traced holds $fds1 descriptors, $fds0 before: $(ls -l /proc/$DAEMON_PID/fd)"
ok "descriptors: $fds0 before, $fds1 after"

# The good program's trace: complete, per thread and per event.
touch "$T/stop"
wait $emit || fail "emit exited with $?"
emitted=$(sed -n 's/^emitted //p' "$T/emit.out")
ctl trace-file flush >/dev/null
d=$(ls -d "$TRACES"/emit-$emit-*)
bt "$d" > "$T/emit.txt" 2> "$T/emit.warn" || fail "babeltrace2 $d"
grep -q discarded "$T/emit.warn" && fail "emit lost events: $(head -n 3 "$T/emit.warn")"
awk -v total="$emitted" '
/ helpers:test_/ {
	match($0, /tid = [0-9]+/); tid = substr($0, RSTART + 6, RLENGTH - 6)
	match($0, /helpers:test_[a-z_]+/); ev = substr($0, RSTART, RLENGTH)
	n[tid, ev]++; tids[tid] = 1; evs[ev] = 1
	if (ev == "helpers:test_tick") {
		match($0, /seq = [0-9]+/); s = substr($0, RSTART + 6, RLENGTH - 6)
		if (s != next_seq[tid] + 0) { print "tid " tid " tick " s " expected " next_seq[tid] + 0; bad = 1 }
		next_seq[tid] = s + 1
	}
}
END {
	for (t in tids) {
		nt++
		sum += n[t, "helpers:test_tick"]
		for (e in evs) if (n[t, e] != n[t, "helpers:test_tick"]) {
			print "tid " t ": " n[t, e] " " e ", " n[t, "helpers:test_tick"] " ticks"; bad = 1
		}
	}
	if (nt != 2) { print nt " threads"; bad = 1 }
	if (length(evs) != 5) { print length(evs) " kinds of event"; bad = 1 }
	if (sum != total) { print sum " ticks traced, " total " emitted"; bad = 1 }
	exit bad
}' "$T/emit.txt" > "$T/emit.bad" || fail "emit's trace: $(head -n 5 "$T/emit.bad")"
ok "the good program's trace is complete: $emitted events of each kind"

# Every session directory reads, the hostile ones included.
bt_each_session "$TRACES"
bt "$TRACES" >/dev/null 2>&1 || fail "babeltrace2 cannot read the whole trace"
ok "every session directory reads, and the whole trace"

# Module paths are made printable UTF-8 at the door (issue 25, finding
# 11): hostile msg-module-odd-path sent a C1 control and a byte that is
# not UTF-8.
m=$(grep -l "^path /hostile/.*c1" "$TRACES"/*/functions/module-* 2>/dev/null | head -n 1)
[ -n "$m" ] || fail "no module file holds the odd path"
iconv -f UTF-8 -t UTF-8 "$m" >/dev/null 2>&1 || fail "$m is not valid UTF-8: $(od -c "$m" | head)"
! LC_ALL=C grep -q "$(printf '\302[\200-\237]')" "$m" || fail "$m holds a C1 control"
grep -q "^path /hostile/?*c1?bad\$" "$m" ||
	fail "the odd path is not kept, cleaned, on its line: $(grep '^path' "$m")"
ok "a module path is made printable UTF-8 at the door: $(grep '^path' "$m")"

# A client on the other clock (TRACED_CLOCK=monotonic, which any program
# may ask for) must not make the whole trace directory unreadable.
if [ "$(ctl --json info trace | sed -n 's/.*"clock":"\([a-z]*\)".*/\1/p')" = tsc ]; then
	(cd "$T" && TRACED=0 TRACED_CLOCK=monotonic "$H" ring-good >/dev/null) ||
		fail "hostile ring-good on the monotonic clock"
	ctl trace-file flush >/dev/null
	bt_each_session "$TRACES"
	bt --no-delta "$TRACES" > "$T/mixed.txt" 2>"$T/mixed.err" ||
		fail "babeltrace2 cannot read sessions on the TSC and on CLOCK_MONOTONIC together: $(head -c 400 "$T/mixed.err")"
	# The monotonic session's events are all in the merged output.
	mono=$(grep -l 'name = "monotonic"' "$TRACES"/*/metadata) ||
		fail "no session on the monotonic clock"
	bt --no-delta "$(dirname "$mono")" > "$T/mono.txt" 2>/dev/null
	n=$(wc -l < "$T/mono.txt")
	[ "$n" -gt 0 ] || fail "the monotonic session has no event"
	[ "$(grep -c -F -x -f "$T/mono.txt" "$T/mixed.txt")" -ge "$n" ] ||
		fail "merged, the monotonic session's events are not all there"
	ok "sessions on the TSC and on CLOCK_MONOTONIC read together"
fi
stop_daemon
