#!/bin/sh
# SPDX-License-Identifier: MIT
# Big packets go from staging to the disk with O_DIRECT, padded to end
# on a 4 KiB boundary of their file (packet_size past content_size);
# small ones go through the page cache, unpadded (daemon/stream.c).  A
# stream mixes both.  What a user must see either way: every event, in
# order, with its values, through babeltrace2 and tracectl; 'info trace'
# saying how much went each way; and, with direct-io = off, the page
# cache only.
. "$(dirname "$0")/lib.sh"

N=250000		# seq values per thread, 5 enabled events each

written() {	# direct|cached: bytes the daemon says it wrote that way
	ctl --json info trace |
		sed -n "s/.*\"type\":\"trace\".*\"written_$1\":\([0-9]*\).*/\1/p"
}

# check_run WHAT: two paced threads, then every event checked.
check_run() {
	rm -rf "$TRACES"
	d0=$(written direct)
	c0=$(written cached)
	"$HELPERS/emit" -t 2 -n $N -r 500000 > "$T/emit.out" ||
		fail "$1: emit failed"
	[ "$(cat "$T/emit.out")" = "emitted $((2 * N))" ] ||
		fail "$1: emit: $(cat "$T/emit.out")"
	wait_no_sessions 20 || fail "$1: the session did not end"
	ctl trace-file flush >/dev/null
	direct=$(( $(written direct) - d0 ))
	cached=$(( $(written cached) - c0 ))
	lost=$(ctl --json info trace |
		grep -o '"type":"ended_ring"[^}]*"lost":[0-9]*' |
		sed 's/.*"lost"://' | awk '{ n += $1 } END { print n + 0 }')
	# Every test_tick, per thread, in order: seq 0, 1, 2 ... with no
	# gap and no repeat, when nothing was lost.
	bt "$TRACES" > "$T/bt.txt" 2> "$T/bt.err" ||
		fail "$1: babeltrace2: $(head -c 400 "$T/bt.err")"
	got=$(grep -c 'helpers:test_' "$T/bt.txt" || true)
	[ $((got + lost)) = $((10 * N)) ] ||
		fail "$1: $got events in the trace + $lost lost, of $((10 * N))"
	if [ "$lost" = 0 ]; then
		sed -n 's/.*helpers:test_tick: { tid = \([0-9]*\) }.*seq = \([0-9]*\).*/\1 \2/p' \
			"$T/bt.txt" | awk -v n=$N '
			{ if ($2 != next_[$1] + 0) { bad = $1 " " $2 " after " next_[$1] - 1; exit 1 }
			  next_[$1] = $2 + 1; seen[$1] = 1 }
			END { if (bad != "") { print bad; exit 1 }
			      for (t in seen) { k++; if (next_[t] != n) { print t " ends at " next_[t]; exit 1 } }
			      if (k != 2) { print k " threads"; exit 1 } }' > "$T/order" ||
			fail "$1: test_tick out of order: $(cat "$T/order")"
		# The values of the event with a string, for one seq.
		grep -q 'helpers:test_mixed: .*{ seq = 123457, worker = 1, ptr = 0x20241, flag = 1, str = "w1-s123457" }' "$T/bt.txt" ||
			fail "$1: test_mixed of seq 123457 missing or wrong: $(grep -m1 'seq = 123457,' "$T/bt.txt")"
	fi
	# tracectl reads the same events.
	pn=$(ctl print "$TRACES" 2>"$T/print.err" | grep -c 'helpers:test_' || true)
	[ "$pn" = "$got" ] || fail "$1: tracectl print: $pn events, babeltrace2 $got"
	echo "$1: $got events, $lost lost; $direct bytes direct, $cached cached"
}

start_daemon
ctl info trace | grep -q 'direct I/O on' ||
	fail "info trace does not say direct I/O is on: $(ctl info trace | head -n 3)"
fs=$(stat -f -c %T "$T")
check_run "direct-io on"
if [ "$direct" = 0 ]; then
	# A file system without O_DIRECT: everything through the cache.
	grep -q 'no direct I/O on this file' "$T/traced.log" ||
		ctl info trace | grep -q 'written: 0 MB directly' ||
		fail "nothing written directly on $fs, and nothing says why"
	echo "NOTE: $fs took no direct write"
else
	# Most of a fast stream goes direct; its start and end, small
	# packets, through the cache.
	[ "$direct" -ge "$cached" ] ||
		fail "direct-io on: only $direct bytes direct, $cached cached"
	ctl info trace | grep -q "written: [1-9][0-9]* MB directly" ||
		fail "info trace: $(ctl info trace | grep written)"
	# The packets of one stream, as written: padded ones (packet_size
	# past content_size by more than a record's 8-byte tail) end on a
	# 4 KiB boundary, and the readers above skipped their padding.
	f=$(ls "$TRACES"/emit-*/stream-* | head -n 1)
	size=$(stat -c %s "$f")
	off=0 padded=0 packets=0
	while [ "$off" -lt "$size" ]; do
		set -- $(od -A n -t u8 -j $((off + 48)) -N 16 "$f")
		[ $# = 2 ] && [ "$2" -gt 0 ] && [ $(($2 % 8)) = 0 ] ||
			fail "$f: no packet at $off"
		end=$((off + $2 / 8))
		if [ $(($2 - $1)) -gt 64 ]; then
			padded=$((padded + 1))
			[ $((end % 4096)) = 0 ] ||
				fail "$f: padded packet at $off ends at $end"
		fi
		packets=$((packets + 1))
		off=$end
	done
	[ "$off" = "$size" ] || fail "$f: packets end at $off of $size"
	[ "$padded" -gt 0 ] || fail "$f: $packets packets, none padded"
	echo "$f: $packets packets, $padded padded to 4 KiB"
fi
direct_on=$direct
stop_daemon

start_daemon --set direct-io=off
ctl info trace | grep -q 'direct I/O off' ||
	fail "info trace does not say direct I/O is off"
check_run "direct-io off"
[ "$direct" = 0 ] || fail "direct-io off, but $direct bytes went direct"
[ "$cached" -gt $((10 * N * 32)) ] ||
	fail "direct-io off: only $cached bytes written"
stop_daemon

# A file system that refuses O_DIRECT (TRACED_TEST_NO_DIRECT, traced(8)):
# the same packets, padded, through the page cache; the log says so once.
TRACED_TEST_NO_DIRECT=1 start_daemon
check_run "no O_DIRECT"
[ "$direct" = 0 ] || fail "no O_DIRECT, but $direct bytes went direct"
[ "$(grep -c 'refuses O_DIRECT: its streams are written through the page cache' "$T/traced.log")" = 1 ] ||
	fail "no O_DIRECT: the log does not say so once: $(grep -c O_DIRECT "$T/traced.log")"
stop_daemon

"$BIN/traced" --foreground --runtime-dir "$T/x" --set direct-io=maybe \
	> "$T/refused.out" 2>&1 && fail "direct-io=maybe was taken"
grep -q "direct-io.*maybe.*neither on nor off" "$T/refused.out" ||
	fail "direct-io=maybe: $(cat "$T/refused.out")"
ok "direct I/O on: $direct_on bytes direct; off, or refused: none; every event in order"
