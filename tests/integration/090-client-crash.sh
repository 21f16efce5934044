#!/bin/sh
# SPDX-License-Identifier: MIT
# A client killed with SIGKILL loses nothing it committed.  crashy's two
# threads trace numbered ticks as fast as their bursts go and write the
# last number each had committed to a report file; we SIGKILL it at a
# random moment, CRASH_TRIALS times (default 50), half of them with rings
# so small that they overflow.  Then, for every thread of every trial:
#   - its ticks in the trace are in order, and every gap between two of
#     them is exactly the count of the traced:lost record in front of the
#     second (crashy traces nothing else);
#   - every tick up to the last reported number is in the trace, or was
#     counted lost after the last traced:lost record: the stream's
#     discarded total (babeltrace2) minus its traced:lost counts.
. "$(dirname "$0")/lib.sh"

TRIALS=${CRASH_TRIALS:-50}
start_daemon --drain-interval 20
mkdir -p "$T/rep"

i=0
while [ $i -lt "$TRIALS" ]; do
	i=$((i + 1))
	if [ $((i % 2)) = 0 ]; then ring=4K; b=256; else ring=64K; b=32; fi
	TRACED_RING_SIZE=$ring "$HELPERS/crashy" -t 2 -b $b -p 1000 \
		3>>"$T/rep/$i" &
	pid=$!
	# 30 to 330 ms: some trials die before a thread made its ring.
	ms=$(( $(od -An -N2 -tu2 /dev/urandom) % 300 + 30 ))
	sleep "$(printf '0.%03d' $ms)"
	kill -9 $pid
	wait $pid 2>/dev/null && fail "crashy exited by itself"
	echo "$pid" >> "$T/pids"
done
wait_no_sessions 20 || fail "sessions still open: $(ctl info trace)"
ctl trace-file flush >/dev/null
kill -0 "$DAEMON_PID" || fail "traced died"

bt "$TRACES" > "$T/out.txt" 2> "$T/warn.txt" || fail "babeltrace2: $(head -c 500 "$T/warn.txt")"
# Discarded per thread, from babeltrace2's warnings (stream-TID).
tr -d '\n' < "$T/warn.txt" | sed 's/WARNING/\nWARNING/g' |
	sed -n 's/.*discarded \([0-9]*\) events\{0,1\} .*stream-\([0-9]*\)".*/\2 \1/p' |
	awk '{ d[$1] += $2 } END { for (t in d) print t, d[t] }' > "$T/discarded"
# The last committed number per thread, from the reports: each file on
# its own (a trial's last line may be cut where it was killed, and cat
# would join it to the next file's first: a tid of 143114323 seen under
# ThreadSanitizer), whole lines only.
awk 'NF == 2 && $1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+$/ {
		if (!($1 in l) || $2 + 0 > l[$1] + 0) l[$1] = $2
	}
	END { for (t in l) print t, l[t] }' "$T"/rep/* > "$T/last"
[ -s "$T/last" ] || fail "crashy reported nothing"

awk -v dfile="$T/discarded" -v lfile="$T/last" '
BEGIN {
	while ((getline l < dfile) > 0) { split(l, a, " "); disc[a[1]] = a[2] }
	while ((getline l < lfile) > 0) { split(l, a, " "); last[a[1]] = a[2] }
	bad = 0
}
/ traced:lost: / {
	match($0, /tid = [0-9]+/); tid = substr($0, RSTART + 6, RLENGTH - 6)
	match($0, /count = [0-9]+/); c = substr($0, RSTART + 8, RLENGTH - 8)
	pend[tid] += c; lostrec[tid] += c; next
}
/ helpers:test_tick: / {
	match($0, /tid = [0-9]+/); tid = substr($0, RSTART + 6, RLENGTH - 6)
	match($0, /seq = [0-9]+/); s = substr($0, RSTART + 6, RLENGTH - 6) + 0
	p = (tid in prev) ? prev[tid] : -1
	gap = s - p - 1
	if (gap < 0) {
		printf "thread %s: tick %d after %d\n", tid, s, p; bad++
	} else if (gap != pend[tid] + 0) {
		printf "thread %s: ticks %d..%d missing, traced:lost says %d\n",
		    tid, p + 1, s - 1, pend[tid]; bad++
	}
	prev[tid] = s; pend[tid] = 0; ticks[tid]++
}
END {
	for (tid in last) {
		p = (tid in prev) ? prev[tid] : -1
		unrec = disc[tid] - lostrec[tid]
		if (unrec < 0) {
			printf "thread %s: discarded %d < traced:lost total %d\n",
			    tid, disc[tid], lostrec[tid]; bad++
		}
		if (last[tid] - p > unrec) {
			printf "thread %s: committed up to %d, trace ends at %d, " \
			    "only %d counted lost after the last traced:lost\n",
			    tid, last[tid], p, unrec; bad++
		}
		threads++; events += ticks[tid]; lost += disc[tid]
		if (last[tid] > p) tail++
	}
	printf "threads %d ticks %d lost %d tail_lost %d\n", threads, events,
	    lost, tail > "/dev/stderr"
	exit bad != 0
}' "$T/out.txt" > "$T/bad" 2> "$T/summary" ||
	fail "committed events missing: $(head -n 10 "$T/bad")"
read -r _ nthreads _ nticks _ nlost _ ntail < "$T/summary"
[ "$nthreads" -ge "$TRIALS" ] ||
	fail "only $nthreads threads reported in $TRIALS trials"
[ "$nlost" -gt 0 ] || fail "no ring overflowed: the small rings prove nothing"
ok "$TRIALS SIGKILLs, $nthreads threads: $nticks ticks, every committed one traced; $nlost lost, all counted ($ntail threads lost their last ones to a full ring)"

# Every session of a killed process ended and was closed.
n=$(ctl --json info trace | grep -c '"type":"ended_session"' || true)
[ "$n" -ge 32 ] || [ "$n" -ge "$TRIALS" ] || fail "only $n ended sessions"
stop_daemon
