#!/bin/sh
# SPDX-License-Identifier: MIT
# Rings grow under thread churn.  Waves of threads each write a burst
# larger than the ring they start with (1 MiB), in batches every
# millisecond, while earlier threads' rings are still being drained
# (unpaced, two producers hold both CPUs of a 2-CPU machine and the
# daemon may not run before the burst is over); a ring that fills faster than the
# daemon wants to visit it, or runs over half full at a lap end, doubles
# (up to TRACED_RING_SIZE, 4 MiB here).  Then, for every thread:
#   - its ring grew, and never past its maximum;
#   - events in the trace + events lost == events emitted, exactly, as
#     tracectl reads each packet's thread, the daemon's count of its
#     losses agrees, and babeltrace2's totals too;
#   - its ticks come out in order, 0 .. N-1, less the discarded ones;
# and the whole trace reads.  Also: a program's memory follows what its
# threads wrote, not the size their rings may reach, and a ring that
# may grow to 1 GiB costs its thread no time to make.
. "$(dirname "$0")/lib.sh"

start_daemon
THREADS=2
WAVES=3
N=12000			# seq values per thread; 5 enabled events each, ~4 MiB
RATE=1500000		# seq values a second, 1,500 a millisecond: ~8 ms a thread

TRACED_RING_SIZE=4M "$HELPERS/emit" -t $THREADS -w $WAVES -n $N -r $RATE \
	> "$T/emit.out" || fail "emit failed"
[ "$(cat "$T/emit.out")" = "emitted $((THREADS * WAVES * N))" ] ||
	fail "emit: $(cat "$T/emit.out")"
wait_no_sessions 20 || fail "the session did not end: $(ctl info trace)"
ctl trace-file flush >/dev/null
ctl --json info trace > "$T/info.json"
bt "$TRACES" > "$T/out.txt" 2> "$T/warn.txt" || fail "babeltrace2"

# The daemon's view of each thread: events, lost, size reached, maximum.
grep '"type":"ended_ring"' "$T/info.json" | sed 's/.*"tid":\([0-9]*\),"events":\([0-9]*\),"lost":\([0-9]*\),.*"ring_size":\([0-9]*\),"ring_max":\([0-9]*\).*/\1 \2 \3 \4 \5/' \
	> "$T/daemon"
[ "$(wc -l < "$T/daemon")" = $((THREADS * WAVES)) ] ||
	fail "$((THREADS * WAVES)) threads ran, the daemon ended $(wc -l < "$T/daemon") rings"
awk '$5 != 4194304 { print "tid " $1 ": ring_max " $5; exit 1 }
     $4 > $5 { print "tid " $1 ": grew to " $4 " past " $5; exit 1 }' \
	"$T/daemon" > "$T/bad" || fail "$(cat "$T/bad")"
grew=$(awk '$4 > 1048576' "$T/daemon" | wc -l)
[ "$grew" -gt 0 ] || fail "no ring grew: $(cat "$T/daemon")"

# In all, as babeltrace2 reads it: trace + discarded = emitted.  (A
# stream may hold several threads one after the other, and babeltrace2
# says the discarded events per stream, so its check is the total.)
total=$(grep -c 'helpers:test_[a-z_]*: { tid = ' "$T/out.txt")
bt_disc=$(tr -d '\n' < "$T/warn.txt" | sed 's/WARNING/\nWARNING/g' |
	sed -n 's/.*discarded \([0-9]*\) events*.*/\1/p' |
	awk '{ n += $1 } END { print n + 0 }')
[ $((total + bt_disc)) = $((THREADS * WAVES * 5 * N)) ] ||
	fail "babeltrace2: $total in the trace + $bt_disc discarded != $((THREADS * WAVES * 5 * N)) emitted"
# Per thread, as tracectl reads each packet's thread: trace + lost =
# emitted, and the daemon's count of its losses agrees.
"$BIN/tracectl" print --json "$TRACES" > "$T/print.json" ||
	fail "tracectl print"
jq -r 'if .type == "event" then "\(.tid) 1 0" else "\(.tid) 0 \(.lost)" end' \
	"$T/print.json" | awk '{ e[$1] += $2; l[$1] += $3 }
	END { for (t in e) print e[t], t, l[t] }' > "$T/events"
[ "$(wc -l < "$T/events")" = $((THREADS * WAVES)) ] ||
	fail "events from $(wc -l < "$T/events") threads, not $((THREADS * WAVES))"
lost_all=0
while read -r count tid d; do
	dl=$(awk -v t="$tid" '$1 == t { print $3 }' "$T/daemon")
	[ $((count + d)) = $((5 * N)) ] ||
		fail "thread $tid: $count in the trace + $d lost != $((5 * N)) emitted"
	[ "$dl" = "$d" ] || fail "thread $tid: daemon says $dl lost, tracectl $d"
	lost_all=$((lost_all + d))
done < "$T/events"
[ "$lost_all" = "$bt_disc" ] ||
	fail "tracectl says $lost_all lost, babeltrace2 $bt_disc"

# Ticks in order per thread: a discarded one may be missing, none
# repeated or out of order.
sed -n 's/.*helpers:test_tick: { tid = \([0-9]*\) }, { seq = \([0-9]*\) }.*/\1 \2/p' \
	"$T/out.txt" | awk '
	{ if (($1 in last) && $2 <= last[$1]) { print "tid " $1 ": seq " $2 " after " last[$1]; exit 1 }
	  last[$1] = $2 }' > "$T/order" || fail "$(cat "$T/order")"
ok "$((THREADS * WAVES)) threads in $WAVES waves: $grew rings grew (1 MiB -> up to 4 MiB), every thread's events + losses = $((5 * N)) ($lost_all lost), in order"

# Memory follows what the threads write: a thread that writes 11
# events holds a few pages, however big its ring may grow.
TRACED_RING_SIZE=1G "$HELPERS/steady" -t 4 -i 1000 -s "$T/stop" > "$T/steady.out" &
sp=$!
wait_for 5 sh -c "grep -q '^VmRSS' /proc/$sp/status && [ \$(ls /proc/$sp/task | wc -l) -ge 6 ]" ||
	fail "steady did not start its threads"
sleep 0.3
rss=$(sed -n 's/^VmRSS:[^0-9]*\([0-9]*\).*/\1/p' /proc/$sp/status)
touch "$T/stop"
wait $sp || fail "steady with 1G rings exited with $?"
[ "${rss:-999999}" -lt 65536 ] ||
	fail "4 threads with rings that may grow to 1G hold $rss KiB"
# Nor does a big ring delay a thread: its first event made the ring.
first=$(awk '{ if ($8 > m) m = $8 } END { print m + 0 }' "$T/steady.out")
[ "$(wc -l < "$T/steady.out")" = 4 ] || fail "steady said: $(cat "$T/steady.out")"
# (Populating it, as the library once did, took seconds; the bound
# leaves room for a busy machine's scheduling.)
[ "$first" -lt 250000000 ] ||
	fail "a thread's first event, which made its 1G ring, took $first ns"
ok "4 threads whose rings may grow to 1 GiB: $rss KiB resident, first events (making the rings) within $((first / 1000)) us"

# A burst larger than a ring can grow into in time (two unpaced threads
# hold both CPUs, the daemon may not run before they are done) loses
# what its first ring cannot hold, and the warning names the fix: a ring
# that starts big enough, TRACED_RING_START, which then keeps it whole.
N2=80000		# ~25 MB a thread
logged=$(wc -l < "$T/traced.log")
TRACED_RING_SIZE=64M "$HELPERS/emit" -t 2 -n $N2 > /dev/null ||
	fail "emit with 64M rings from 1M failed"
wait_no_sessions 20 || fail "the session did not end: $(ctl info trace)"
tail -n +$((logged + 1)) "$T/traced.log" | grep "before it could grow" > "$T/warned" || true
if [ -s "$T/warned" ]; then
	grep -q "TRACED_RING_START=64M in the program's environment" "$T/warned" ||
		fail "the warning does not name TRACED_RING_START: $(cat "$T/warned")"
	ok "a first burst lost to a 1M ring: the warning names TRACED_RING_START=64M"
else
	echo "(the daemon kept up with the unpaced burst: no first-lap loss to warn about)"
fi
TRACED_RING_START=64M TRACED_RING_SIZE=64M "$HELPERS/emit" -t 2 -n $N2 \
	> "$T/big.out" 2> "$T/big.err" || fail "emit with 64M rings failed"
[ ! -s "$T/big.err" ] || fail "emit with 64M rings said: $(cat "$T/big.err")"
wait_no_sessions 20 || fail "the session did not end: $(ctl info trace)"
ctl --json info trace > "$T/info2.json"
sid=$(sed -n 's/.*"type":"ended_session","session":\([0-9]*\).*/\1/p' "$T/info2.json" | tail -n 1)
grep "\"type\":\"ended_ring\",\"session\":$sid," "$T/info2.json" |
	sed 's/.*"events":\([0-9]*\),"lost":\([0-9]*\),.*"ring_size":\([0-9]*\).*/\1 \2 \3/' > "$T/big"
[ "$(wc -l < "$T/big")" = 2 ] || fail "2 threads, the daemon ended: $(cat "$T/big")"
awk -v n=$((5 * N2)) '$1 != n || $2 != 0 || $3 != 67108864 {
	print "events " $1 " of " n ", lost " $2 ", ring " $3; exit 1 }' "$T/big" > "$T/bad" ||
	fail "a ring that starts at 64M: $(cat "$T/bad")"
ok "2 unpaced threads of $((5 * N2)) events each, rings started at 64M: nothing lost"
stop_daemon
