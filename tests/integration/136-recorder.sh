#!/bin/sh
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 The traced authors
#
# The flight recorder (issue 26): with --recorder SIZE, a program that
# emits far more than SIZE leaves nothing in the trace directory; a
# snapshot holds each thread's last events up to its final one, with no
# hole, at least a quarter of SIZE and never more; babeltrace2 and
# tracectl read it; per thread, events in it + overwritten + lost =
# emitted.  A program killed by SIGKILL or SIGABRT: a snapshot taken
# after its death holds its last events.  Then the bounds: a window's
# size changes at run time, ended windows go after recorder-keep, and
# what one uid's windows hold together stays under its bound.
. "$(dirname "$0")/lib.sh"
command -v babeltrace2 >/dev/null || skip "babeltrace2 not found"

SIZE_MB=8
start_daemon --recorder ${SIZE_MB}M

# checks SNAPDIR SESSIONGLOB N: every thread of the sessions' traced/
# snapshot books: events + overwritten + lost + skipped = N, and the
# test_tick seqs of each thread in 'tracectl print' are contiguous.
# Prints "THREADS EVENTS OVERWRITTEN LOST".
books() {
	cat "$1"/$2/traced/snapshot | awk -v n="$3" '
	    $1 == "thread" {
		t++; e += $4; o += $6; l += $8
		if ($4 + $6 + $8 + $10 != n) {
			print "thread " $2 ": " $4 " + " $6 " + " $8 " + " $10 \
			    " != " n > "/dev/stderr"; bad = 1
		}
	    }
	    END { if (bad || t == 0) exit 1; print t, e, o, l }'
}

# ticks SNAPDIR: per thread "TID FIRST LAST MISSING" of its test_tick
# seqs in 'tracectl print': MISSING ticks inside that range (only events
# lost in the ring, which traced:lost records tell, may leave holes).
ticks() {
	ctl print "$1" | awk '
	    $5 == "helpers:test_tick:" {
		split($4, p, "/"); tid = p[2]; seq = $7
		if (tid in last && seq != last[tid] + 1)
			miss[tid] += seq - last[tid] - 1
		if (!(tid in first)) first[tid] = seq
		last[tid] = seq
	    }
	    END { for (t in first) print t, first[t], last[t], miss[t] + 0 }'
}

# lost_of SNAPDIR GLOB TID: what the books say the thread lost.
lost_of() {
	cat "$1"/$2/traced/snapshot | awk -v t="$3" '$1 == "thread" && $2 == t { print $8 }'
}

# --- 1. far more than SIZE: nothing written, the last events kept -------
N=200000		# seqs per thread: 5 events each, about 60 MB a thread
"$HELPERS/emit" -t 2 -n $N >"$T/emit.out"
[ "$(cat "$T/emit.out")" = "emitted $((2 * N))" ] || fail "emit: $(cat "$T/emit.out")"
wait_for 10 sh -c "[ \$($BIN/tracectl --json info trace | jq '[.items[] | select(.type == \"window\" and .ended)] | length') = 1 ]" ||
	fail "the window did not outlive its session: $(ctl info trace | tail -3)"
[ -z "$(ls -A "$TRACES" 2>/dev/null)" ] ||
	fail "recording wrote to the trace directory: $(ls -A "$TRACES")"
ok "recording: nothing in the trace directory"

out=$(ctl snapshot -o "$T/snap1") || fail "snapshot: $out"
case $out in
"snapshot written to $T/snap1: 1 session, "*) ;;
*) fail "snapshot said: $out" ;;
esac
set -- $(books "$T/snap1" 'emit-*' $((5 * N))) || fail "the books do not add up"
[ "$1" = 2 ] || fail "$1 threads in the books, not 2"
events=$2 overwritten=$3
[ "$overwritten" -gt 0 ] || fail "nothing overwritten"
ok "books: per thread, events + overwritten + lost = $((5 * N)) ($events kept, $overwritten overwritten)"

ticks "$T/snap1" >"$T/ticks"
[ "$(wc -l <"$T/ticks")" = 2 ] || fail "not both threads' ticks: $(cat "$T/ticks")"
while read -r tid first last miss; do
	# Its last events, unless its ring lost them (a busy machine).
	lost=$(lost_of "$T/snap1" 'emit-*' "$tid")
	[ "$last" = $((N - 1)) ] || [ $((N - 1 - last)) -le "${lost:-0}" ] ||
		fail "thread $tid ends at tick $last, not $((N - 1)), and lost only $lost"
	[ "$first" -gt 0 ] || fail "thread $tid starts at tick 0: nothing overwritten"
	[ "$miss" -le "${lost:-0}" ] ||
		fail "thread $tid: $miss ticks missing inside its window, $lost events lost in its ring"
done <"$T/ticks"
ok "each thread's ticks contiguous up to its last (holes only where its ring lost events): $(tr '\n' ';' <"$T/ticks")"

bytes=$(cat "$T"/snap1/emit-*/stream-* | wc -c)
[ "$bytes" -le $((SIZE_MB << 20)) ] || fail "$bytes bytes of streams > ${SIZE_MB} MiB"
[ "$bytes" -ge $((SIZE_MB << 18)) ] || fail "$bytes bytes of streams < a quarter of ${SIZE_MB} MiB"
n=$(bt "$T/snap1" 2>/dev/null | grep -c " helpers:") || fail "babeltrace2 cannot read the snapshot"
[ "$n" = "$events" ] || fail "babeltrace2 reads $n events, the books say $events"
bt "$T/snap1" 2>&1 >/dev/null | grep -q "discarded [0-9]* packets" ||
	fail "babeltrace2 does not report what came before the window"
ok "$bytes bytes of streams (${SIZE_MB} MiB window), babeltrace2 reads all $n events"

# --last: a window of a program that ended a while ago has nothing in
# the last 1 ms; its events are skipped, and the books still add up.
out=$(ctl snapshot -o "$T/snap-last" --last 1ms) || fail "snapshot --last: $out"
case $out in *": 1 session, 0 events,"*) ;; *) fail "snapshot --last 1ms: $out" ;; esac
set -- $(books "$T/snap-last" 'emit-*' $((5 * N))) || fail "--last: the books do not add up"
[ "$2" = 0 ] || fail "--last 1ms kept $2 events"
grep -q "skipped [1-9]" "$T"/snap-last/*/traced/snapshot || fail "--last: nothing said skipped"
ok "--last 1ms: 0 events, the window's counted as skipped"

# Every reader takes it: the exports too.
ctl export --format chrome -o "$T/snap1.json" "$T/snap1" || fail "export chrome of a snapshot"
n=$(jq '[.traceEvents[] | select((.ph == "i" or .ph == "X") and (.name | startswith("test_")))] | length' "$T/snap1.json")
[ "$n" = "$events" ] || fail "the Chrome export has $n events, the snapshot $events"
ctl export --format perfetto -o "$T/snap1.pftrace" "$T/snap1" && [ -s "$T/snap1.pftrace" ] ||
	fail "export perfetto of a snapshot"
ok "tracectl export reads it: $n events in the Chrome export"

ctl info snapshots | grep -q "tracectl.*$T/snap1" || fail "info snapshots: $(ctl info snapshots)"
ctl --json info snapshots | jq -e ".items[] | select(.dir == \"$T/snap1\" and .events == $events)" >/dev/null ||
	fail "info snapshots --json: $(ctl --json info snapshots)"
ok "indexed: info snapshots"

# --- 2. losses too: the books still add up -------------------------------
TRACED_RING_SIZE=16K "$HELPERS/emit" -t 2 -n 100000 >"$T/emit2.out"
out=$(ctl snapshot -o "$T/snap2" --session 'emit-*') || fail "snapshot: $out"
# The first session's window is in it too; the second's has 100000 seqs.
s2=$(ls "$T/snap2" | sort -t- -k3 -n | tail -1)
set -- $(books "$T/snap2" "$s2" 500000) || fail "the books do not add up with losses"
ok "with a 16K ring: $4 lost, $3 overwritten, $2 kept: the books add up"

# --- 3. killed: SIGKILL and SIGABRT --------------------------------------
for sig in KILL ABRT; do
	"$HELPERS/crashy" -t 2 -p 200 -o 3 3>"$T/crashy.$sig" &
	cpid=$!
	wait_for 10 sh -c "[ \$(wc -l <$T/crashy.$sig) -gt 2000 ]" || fail "crashy wrote nothing"
	kill -$sig $cpid
	wait $cpid 2>/dev/null || true
	# Its session ends once its rings are read to the end.
	wait_for 10 sh -c "$BIN/tracectl --json info trace | jq -e '.items[] | select(.type == \"window\" and .pid == $cpid and .ended)'" ||
		fail "SIG$sig: crashy's window did not outlive it"
	out=$(ctl snapshot -o "$T/snap-$sig" --session "crashy-$cpid-*") || fail "snapshot: $out"
	ticks "$T/snap-$sig" >"$T/ticks.$sig"
	[ "$(wc -l <"$T/ticks.$sig")" = 2 ] || fail "SIG$sig: not both threads: $(cat "$T/ticks.$sig")"
	# Each thread's last committed seq (its last report) is in it.
	awk '{ last[$1] = $2 } END { for (t in last) print t, last[t] }' \
	    "$T/crashy.$sig" >"$T/said.$sig"
	while read -r tid said; do
		got=$(awk -v t="$tid" '$1 == t { print $3 }' "$T/ticks.$sig")
		[ -n "$got" ] && [ "$got" -ge "$said" ] ||
			fail "SIG$sig: thread $tid said tick $said, the snapshot ends at '${got}'"
		miss=$(awk -v t="$tid" '$1 == t { print $4 }' "$T/ticks.$sig")
		lost=$(lost_of "$T/snap-$sig" 'crashy-*' "$tid")
		[ "$miss" -le "${lost:-0}" ] ||
			fail "SIG$sig: thread $tid: $miss ticks missing, $lost lost"
	done <"$T/said.$sig"
	bt "$T/snap-$sig" >/dev/null || fail "SIG$sig: babeltrace2 cannot read it"
	ok "SIG$sig: the snapshot after its death ends at or past each thread's last tick ($(tr '\n' ';' <"$T/said.$sig"))"
done

# --- 3b. a crash: the window ends in traced:crash, and a trigger on it ----
# crasher's second thread ticks 5 times and calls abort(); libtraced's
# handler leaves traced:crash in its ring before the process dies.
# With a pause, the ticks are drained first and the crash comes alone
# in its packet, which the window keeps as any other.
ctl trigger add traced:crash snapshot >/dev/null || fail "trigger add traced:crash"
CRASHER_PAUSE_MS=500 "$HELPERS/crasher" abort >"$T/crasher.out" 2>&1 &
cpid=$!
wait $cpid 2>/dev/null && fail "crasher did not die"
wait_for 10 sh -c "ls -d $TRACES/snapshot-*/crasher-$cpid-* >/dev/null 2>&1" ||
	fail "the trigger on traced:crash wrote no snapshot: $(ls "$TRACES"; ctl trigger list)"
tsnap=$(ls -d "$TRACES"/snapshot-*/crasher-$cpid-* | head -n 1)
out=$(ctl snapshot -o "$T/snap-crash" --session "crasher-$cpid-*") || fail "snapshot: $out"
for d in "$tsnap" "$T/snap-crash"; do
	ctl print "$d" >"$T/crash.print" || fail "tracectl print $d"
	tail -n 1 "$T/crash.print" | grep -q " traced:crash: { signal = 6," ||
		fail "$d does not end in traced:crash, signal 6: $(tail -n 3 "$T/crash.print")"
	[ "$(grep -c ' helpers:test_tick: ' "$T/crash.print")" = 5 ] ||
		fail "$d: not the 5 ticks before the crash: $(cat "$T/crash.print")"
	bt "$d" | tail -n 1 | grep -q "traced:crash:" || fail "babeltrace2 reads no crash at the end of $d"
done
ctl trigger delete traced:crash >/dev/null
rm -rf "$TRACES"/snapshot-*
ok "abort(), drained apart from its ticks: the trigger's snapshot and one after its death end in traced:crash after its 5 ticks"

# --- 3c. a thread that writes little: its packets are small and many ----
# More than 510 packets of one stream in a snapshot (writev's iovec
# limit), from a thread paced at 5,000 ticks a second and drained every
# millisecond; in a daemon of its own.
stop_daemon
start_daemon --recorder 4M --drain-interval 1
"$HELPERS/emit" -t 1 -r 5000 -T 3 >"$T/emit3.out"
n3=$(sed -n 's/^emitted //p' "$T/emit3.out")
wait_for 10 sh -c "$BIN/tracectl --json info trace | jq -e '.items[] | select(.type == \"window\" and .ended and .packets > 600)'" ||
	fail "not more than 600 small packets: $(ctl info trace | grep window)"
out=$(ctl snapshot -o "$T/snap-small") || fail "snapshot of small packets: $out"
set -- $(books "$T/snap-small" 'emit-*' $((5 * n3))) || fail "small packets: the books do not add up"
ticks "$T/snap-small" >"$T/ticks.small"
read -r tid first last miss <"$T/ticks.small"
[ "$last" = $((n3 - 1)) ] && [ "$miss" = 0 ] || fail "small packets: ticks $first..$last, $miss missing"
ok "$(ctl --json info trace | jq '.items[] | select(.type == "window") | .packets') small packets: all $2 events of the window written, up to tick $last"

# --- 4. run-time size, keep, the uid's bound ------------------------------
ctl trace-file recorder 2M >/dev/null 2>&1 && fail "a 2M window was taken"
ctl trace-file recorder 2M 2>&1 | grep -q "at least 4M" || fail "no reason for refusing 2M"
ctl trace-file recorder 4M | grep -q "recorder on:.* 4 MiB" || fail "trace-file recorder 4M"
ctl info trace | grep -q "^recorder: 4 MiB per session" || fail "info trace: $(ctl info trace | grep recorder)"
"$HELPERS/emit" -t 1 -n 100000 >/dev/null
wait_for 10 sh -c "$BIN/tracectl --json info trace | jq -e '.items[] | select(.type == \"window\" and .ended and .bytes > 0 and .bytes <= 4194304)' | grep -q ." ||
	fail "no 4 MiB window: $(ctl info trace | grep window)"
ok "trace-file recorder 4M: the next session's window holds at most 4 MiB"

# A session that records when the recorder goes off keeps recording.
"$HELPERS/emit" -t 1 -n 10000 -H "$T/held.go" >/dev/null 2>"$T/held.err" &
hpid=$!
wait_for 10 grep -q "waves done" "$T/held.err" || fail "emit -H: $(cat "$T/held.err")"
ctl trace-file recorder off | grep -q "recorder off" || fail "trace-file recorder off"
touch "$T/held.go"
wait $hpid
wait_for 10 sh -c "$BIN/tracectl --json info trace | jq -e '.items[] | select(.type == \"window\" and .pid == $hpid and .ended and .events == 50000 and .overwritten == 0)'" ||
	fail "recorder off emptied a running session's window: $(ctl info trace | grep window)"
ok "trace-file recorder off: a session that was recording keeps its window"
"$HELPERS/emit" -t 1 -n 1000 >/dev/null
wait_for 10 sh -c "ls $TRACES | grep -q emit-" || fail "recorder off: nothing written"
ok "trace-file recorder off: the next session is written to $TRACES"

stop_daemon
rm -rf "$TRACES"
# A uid's windows together: 4 sessions of 8 MiB against 12 MiB a uid; an
# ended window gives its packets up before a live one.
start_daemon --recorder 8M --set recorder-bytes-per-uid=12M --set recorder-keep=2
for i in 1 2 3 4; do "$HELPERS/emit" -t 1 -n 100000 >/dev/null; done
wait_for 10 sh -c "[ \$($BIN/tracectl --json info trace | jq '[.items[] | select(.type == \"window\")] | length') = 2 ]" ||
	fail "recorder-keep=2: $(ctl info trace | grep window)"
held=$(ctl --json info trace | jq '[.items[] | select(.type == "window") | .bytes] | add')
[ "$held" -le $((12 << 20)) ] || fail "uid holds $held bytes > 12 MiB"
ctl info trace | grep "^recorder:" | grep -q "12 MiB per uid; 2 windows" ||
	fail "info trace: $(ctl info trace | grep recorder)"
ok "recorder-keep=2 and recorder-bytes-per-uid=12M: 2 windows, $held bytes"
[ -z "$(ls -A "$TRACES" 2>/dev/null)" ] || fail "the trace directory: $(ls -A "$TRACES")"

# Two programs of the uid alive at once, each wanting 8 MiB of 12: the
# second one gets its share, taken from the first.
for k in 1 2; do
	"$HELPERS/emit" -t 1 -n 100000 -H "$T/two.go" >/dev/null 2>"$T/two$k.err" &
	eval "two$k=\$!"
	wait_for 20 grep -q "waves done" "$T/two$k.err" || fail "emit -H: $(cat "$T/two$k.err")"
done
for k in 1 2; do
	eval "p=\$two$k"
	b=$(ctl --json info trace | jq ".items[] | select(.type == \"window\" and .pid == $p) | .bytes")
	[ "${b:-0}" -ge $((4 << 20)) ] || fail "program $k of 2 alive holds ${b:-no} bytes of 12 MiB"
done
touch "$T/two.go"
wait $two1 $two2
ok "two live programs of one uid against its 12 MiB: each holds its share"
stop_daemon
