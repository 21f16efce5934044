#!/bin/sh
# SPDX-License-Identifier: MIT
# A ring the daemon refused is never passed on in-band (proto/ring.h,
# Handover: only a ring whose header says the daemon reads it).  With
# rings-per-uid = 1 and two threads at a time, the second thread of
# the first wave gets no ring from the daemon; when both have exited,
# each thread of the next waves either takes the ring the daemon reads
# or asks for a new one and is refused, counted.  Every thread is
# either in the trace, whole, or among the refused: none vanishes into
# a ring nobody reads.
. "$(dirname "$0")/lib.sh"

bg_track_init
printf 'rings-per-uid = 1\n' > "$T/traced.conf"
start_daemon --config "$T/traced.conf"
WAVES=8
N=10			# seq values per thread, 3 ms apart: the two overlap

"$HELPERS/emit" -t 2 -w $WAVES -n $N -i 3000 -H "$T/hold" \
	> "$T/emit.out" 2> "$T/emit.err" &
p=$!
bg_track $p
wait_for 30 grep -q "waves done" "$T/emit.err" || fail "emit did not finish its waves"
ctl trace-file flush >/dev/null
ctl --json info trace > "$T/info.json"
refused=$(grep '"type":"session","session":[0-9]*,"pid":'$p',' "$T/info.json" |
	sed -n 's/.*"refused_rings":\([0-9]*\).*/\1/p')
[ -n "$refused" ] || fail "no session of emit (pid $p) in info trace"
touch "$T/hold"
emit_ended $p "$T/emit.out" $((2 * WAVES * N))
ended_trace "$EMIT_DIR" $p
traced=$(sed -n 's/.*helpers:test_tick: { tid = \([0-9]*\) }.*/\1/p' "$T/out.txt" |
	sort -u | wc -l)
check_emit_threads "$T/out.txt" $N "$traced"
# The daemon's books agree: one ended ring per traced thread, its
# events all there.
sid=$(sed -n 's/.*"type":"ended_session","session":\([0-9]*\),"pid":'$p',.*/\1/p' "$T/info.json")
books=$(grep -c '"type":"ended_ring","session":'"$sid"',"tid":[0-9]*,"events":'$((5 * N))',"lost":0' \
	"$T/info.json" || true)
[ "$books" = "$traced" ] ||
	fail "$traced threads in the trace, $books whole ones in the daemon's books"
[ "$refused" -ge 1 ] ||
	fail "two threads at once with rings-per-uid = 1, and no ring refused"
[ $((traced + refused)) -eq $((2 * WAVES)) ] ||
	fail "$((2 * WAVES)) threads: $traced in the trace and $refused refused; $((2 * WAVES - traced - refused)) vanished"
ok "$((2 * WAVES)) threads with one ring allowed: $traced traced whole, $refused refused and counted, none lost unsaid"
