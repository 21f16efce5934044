#!/bin/sh
# SPDX-License-Identifier: MIT
# A thousand connections held open: the daemon runs out of descriptors
# (it gets a limit of 256 here, soft and hard: traced raises its soft
# limit to the hard one at start), and
#   - keeps running without spinning or flooding its log;
#   - the programs it already traces keep tracing: a program whose
#     rings were all registered loses nothing; one whose new thread
#     registers a ring while no descriptor is free is disconnected and
#     comes back as a new session, its events kept in its ring;
#   - once the connections close, it is back to the descriptors it had,
#     and a new program is traced completely.
. "$(dirname "$0")/lib.sh"
bg_track_init

# Each emit thread's events, checked: ticks 0..n-1 in order per thread,
# as many of each of the 5 kinds, no discarded events.  check_emit DIR
check_emit() {
	bt "$1" > "$T/e.txt" 2> "$T/e.warn" || fail "babeltrace2 $1"
	grep -q discarded "$T/e.warn" && fail "$1 lost events: $(head -n 2 "$T/e.warn")"
	awk '
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
		for (t in tids) for (e in evs) if (n[t, e] != n[t, "helpers:test_tick"]) {
			print "tid " t ": " n[t, e] " " e ", " n[t, "helpers:test_tick"] " ticks"; bad = 1
		}
		if (length(evs) != 5) { print length(evs) " kinds of event"; bad = 1 }
		exit bad
	}' "$T/e.txt" > "$T/e.bad" || fail "$1: $(head -n 5 "$T/e.bad")"
}

cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$DAEMON_PID/stat"; }

# 1. Under the limit: 1,000 connections that said HELLO are 1,000
# sessions, held while a program traces, then gone.
if [ "$(ulimit -H -n)" = unlimited ] || [ "$(ulimit -H -n)" -ge 2048 ]; then
	(
		ulimit -S -n 2048
		# Root's 1,000 sessions, over the default per-uid limit.
		start_daemon --set sessions-per-uid=2000
		echo "$DAEMON_PID" > "$T/daemon1.pid"
		"$HELPERS/emit" -t 2 -i 100 -s "$T/stop1" > "$T/emit1.out" &
		e1=$!
		TRACED=0 "$HELPERS/hostile" flood 1000 3 hello > "$T/flood1.out" &
		f1=$!
		sleep 2
		nsess=$(sessions_live)
		touch "$T/stop1"
		wait $f1 || fail "hostile flood"
		wait $e1 || fail "emit"
		[ "$nsess" -ge 1001 ] || fail "$nsess sessions during the flood: $(cat "$T/flood1.out")"
		ctl trace-file flush >/dev/null
		check_emit "$(ls -d "$TRACES"/emit-$e1-*)"
		wait_no_sessions 10 || fail "sessions left after the flood"
		stop_daemon
		ok "1000 connections held ($nsess sessions): the program tracing meanwhile lost nothing"
	) || exit 1
	rm -rf "$TRACES"
else
	echo "hard descriptor limit $(ulimit -H -n): 1,000 sessions under the limit not tried"
fi

# 2. Over the limit (root's connections: the descriptors the daemon
# keeps for root are root's to take).
ulimit -n 256
start_daemon --set sessions-per-uid=2000
# The baseline, once the index has its files open: after a first session.
"$HELPERS/emit" -n 1 >/dev/null || fail "emit -n 1"
wait_no_sessions 5 || fail "emit -n 1 did not end"
sleep 1.2
fds_idle=$(daemon_fds)
"$HELPERS/emit" -t 2 -i 100 -s "$T/stop" > "$T/emit.out" &
emit=$!
TRACED_RING_SIZE=256K "$HELPERS/steady" -t 2 -i 200 -s "$T/stop" -l 2500 \
	> "$T/steady.out" &
steady=$!
bg_track $emit $steady
wait_for 5 sh -c "[ \$('$BIN/tracectl' info trace | grep -c 'emit\\[$emit\\]\\|steady\\[$steady\\]') = 2 ]" ||
	fail "programs did not connect: $(ctl info trace)"

TRACED=0 "$HELPERS/hostile" flood 1000 1.5 hello > "$T/flood.out" &
flood=$!
bg_track $flood
sleep 1
c0=$(cpu_ticks)
sleep 1
c1=$(cpu_ticks)
kill -0 "$DAEMON_PID" || fail "traced died"
wait $flood || fail "hostile flood failed"
echo "$(head -n 1 "$T/flood.out"); daemon limit $(sed -n 's/^Max open files *\([0-9]*\).*/\1/p' /proc/$DAEMON_PID/limits)"
emfile=$(grep -c "Too many open files" "$T/traced.log" || true)
echo "at the limit: $emfile 'Too many open files' lines, $((c1 - c0)) CPU ticks in 1 s"
[ "$emfile" -gt 0 ] || fail "traced never ran out of descriptors: the test proves nothing"
[ $((c1 - c0)) -le 40 ] ||
	fail "out of descriptors, traced spins: $((c1 - c0)) CPU ticks in 1 s"
[ "$emfile" -le 10 ] ||
	fail "out of descriptors, traced floods its log: $emfile lines"
grep -q "raise LimitNOFILE" "$T/traced.log" ||
	fail "the descriptor warning does not say what to do: $(grep -m1 'Too many open files' "$T/traced.log")"
ok "out of descriptors: no spin, $emfile log lines, naming the fix"

# Back to normal once the connections are gone.
wait_for 10 sh -c "[ \$('$BIN/tracectl' --json info trace | sed -n 's/.*\"sessions\":\([0-9]*\)}.*/\1/p') = 2 ]" ||
	fail "sessions left: $(ctl info trace | head -n 20)"
ok "after the flood: the $(sessions_live) programs' sessions only"

# A new program now is traced completely.
"$HELPERS/emit" -t 2 -n 2000 > "$T/emit2.out" &
e2=$!
wait $e2 || fail "emit -n 2000"
e2=$(ls -d "$TRACES"/emit-$e2-*)
touch "$T/stop"
wait $emit || fail "emit exited with $?"
wait $steady || fail "steady exited with $?"
ctl trace-file flush >/dev/null
check_emit "$e2"
ok "a program started after the flood: traced completely"
check_emit "$(ls -d "$TRACES"/emit-$emit-*)"
ok "the program traced through the flood lost nothing"
n=$(ls -d "$TRACES"/steady-$steady-* | wc -l)
if grep -q "steady\\[$steady\\]: message too large; disconnecting" "$T/traced.log"; then
	echo "steady's late thread registered its ring while traced had no descriptor left (its SCM_RIGHTS could not be received, MSG_CTRUNC): disconnected, back as a new session ($n sessions): $(cat "$T/steady.out")"
fi
bt_each_session "$TRACES"

# Every descriptor the flood made the daemon take is given back.
wait_no_sessions 10 || fail "sessions left: $(ctl info trace)"
fds_end=$(daemon_fds)
[ "$fds_end" = "$fds_idle" ] ||
	fail "traced holds $fds_end descriptors idle, $fds_idle before: $(ls -l /proc/$DAEMON_PID/fd)"
ok "descriptors when idle: $fds_idle before, $fds_end after"
stop_daemon
