#!/bin/sh
# SPDX-License-Identifier: MIT
# tracectl print reads what babeltrace2 reads: on a real trace of two
# processes (one losing events to a small ring), the same events with
# the same values at the same nanosecond, in the same order in every
# thread, merged by time, and the same losses per stream.  It needs no
# daemon, prints a valid JSON document with --json, names a corrupt
# file with its offset (status 1) and still prints the other streams;
# usage errors are status 2.
. "$(dirname "$0")/lib.sh"

command -v babeltrace2 >/dev/null 2>&1 ||
	skip "babeltrace2 is not installed (apt-get install babeltrace2)"

expect_status() {	# WANT COMMAND...
	want=$1; shift
	set +e; "$@" >"$T/out" 2>"$T/err"; got=$?; set -e
	# Under SANITIZE=1 a report also exits 1: look for it.
	! grep -q "Sanitizer\|runtime error" "$T/err" ||
		fail "'$*': sanitizer report: $(head -c 2000 "$T/err")"
	[ "$got" = "$want" ] ||
		fail "'$*' exited $got, not $want: $(head -c 600 "$T/err")"
}

# "TOD TID NAME { FIELDS }" from babeltrace2's default text, whose time
# of day has the nanoseconds: [HH:MM:SS.NNNNNNNNN] (+delta)
# host:proc:(pid) NAME: { tid = T }, { ... }.  traced:lost records are
# events to babeltrace2 and loss lines to tracectl: left out here.
bt_norm() {
	sed -n 's/^\[\([0-9:.]*\)\] ([^)]*) [^ ]* \(.*\): { tid = \([0-9]*\) }, \(.*\)$/\1 \3 \2 \4/p' "$1" |
		grep -v ' traced:lost { ' || true
}
# The same from tracectl print --raw: [TOD] (+delta) COMM PID/TID NAME: { ... }
tp_norm() {
	sed -n 's/^\[\([0-9:.]*\)\] ([^)]*) [^ ]* [0-9]*\/\([0-9]*\) \(.*\): \({.*\)$/\1 \2 \3 \4/p' "$1"
}
# "TID COUNT" per stream, summed, from babeltrace2's warnings (the stream
# file is stream-TID) or from tracectl's LOST lines.
bt_lost() {
	tr -d '\n' < "$1" | sed 's/WARNING/\nWARNING/g' |
		sed -n 's/.*discarded \([0-9]*\) events* .*within stream "[^"]*stream-\([0-9]*\)".*/\2 \1/p' |
		awk '{ d[$1] += $2 } END { for (p in d) print p, d[p] }' | sort
}
tp_lost() {
	sed -n 's/^\[[0-9:.]*\] ([^)]*) [^ ]* [0-9]*\/\([0-9]*\) LOST \([0-9]*\) events* .*/\1 \2/p' "$1" |
		awk '{ d[$1] += $2 } END { for (p in d) print p, d[p] }' | sort
}

start_daemon --drain-interval 50
"$HELPERS/emit" -t 3 -n 200 >/dev/null || fail "emit failed"
TRACED_RING_SIZE=8K "$HELPERS/emit" -t 2 -T 0.2 >/dev/null ||
	fail "emit with a small ring failed"
ctl trace-file flush >/dev/null || fail "flush"
wait_no_sessions 10 || fail "sessions did not end"
stop_daemon
# From here on there is no daemon: print reads the files itself.
[ ! -S "$TRACED_RUNTIME_DIR/control.sock" ] || fail "control.sock is still there"

babeltrace2 "$TRACES" > "$T/bt.txt" 2> "$T/bt.err" ||
	fail "babeltrace2: $(head -c 600 "$T/bt.err")"
expect_status 0 ctl print --raw "$TRACES"
cp "$T/out" "$T/tp.txt"
cp "$T/err" "$T/tp.err"

bt_norm "$T/bt.txt" > "$T/bt.norm"
tp_norm "$T/tp.txt" > "$T/tp.norm"
nrec=$(grep -c ' traced:lost: ' "$T/bt.txt" || true)
nbt=$(($(wc -l < "$T/bt.txt") - nrec))
ntp=$(grep -vc ' LOST ' "$T/tp.txt" || true)
[ "$nbt" -gt 1000 ] || fail "only $nbt events in the trace"
[ "$(wc -l < "$T/bt.norm")" = "$nbt" ] || fail "cannot parse babeltrace2's lines"
[ "$(wc -l < "$T/tp.norm")" = "$ntp" ] || fail "cannot parse tracectl's lines"
[ "$ntp" = "$nbt" ] || fail "tracectl printed $ntp events, babeltrace2 $nbt"
nthreads=$(cut -d' ' -f2 "$T/tp.norm" | sort -u | wc -l)
[ "$nthreads" = 5 ] || fail "events from $nthreads threads, not 5"
# Per thread (a stable sort by tid keeps each thread's order): the
# same events, values and nanoseconds, in the same order.
sort -s -n -k2,2 "$T/bt.norm" > "$T/bt.sorted"
sort -s -n -k2,2 "$T/tp.norm" > "$T/tp.sorted"
cmp -s "$T/bt.sorted" "$T/tp.sorted" ||
	fail "tracectl and babeltrace2 differ: $(diff "$T/bt.sorted" "$T/tp.sorted" | head -n 6)"
# Merged by time across threads and sessions.
awk 'NR > 1 && $1 < last { print "line " NR ": " $1 " < " last; bad = 1; exit }
	{ last = $1 } END { exit bad }' "$T/tp.txt" ||
	fail "tracectl print is not in time order"
ok "$ntp events from 5 threads in 2 sessions, as babeltrace2 reads them, merged by time"

bt_lost "$T/bt.err" > "$T/bt.lost"
tp_lost "$T/tp.txt" > "$T/tp.lost"
[ -s "$T/bt.lost" ] || fail "nothing was lost with an 8K ring: the test proves nothing"
cmp -s "$T/bt.lost" "$T/tp.lost" ||
	fail "losses differ: babeltrace2 $(cat "$T/bt.lost"), tracectl $(cat "$T/tp.lost")"
# Each traced:lost record (there when a thread emitted again after a
# loss) is a LOST line with its causes.
nlost=$(grep -c ' LOST [0-9]* events* (ring_full ' "$T/tp.txt" || true)
[ "$nlost" -le "$nrec" ] || fail "$nlost LOST lines with causes, $nrec records"
ok "the same losses per stream: $(awk '{ n += $2 } END { print n }' "$T/tp.lost") events ($nrec traced:lost records)"

# --json: one object per line, as many events.
expect_status 0 ctl --json print "$TRACES"
n=$(grep -c '^{"type":"event",' "$T/out" || true)
[ "$n" = "$ntp" ] || fail "--json has $n events, not $ntp"
jq -e . "$T/out" >/dev/null || fail "--json is not JSON Lines"
expect_status 0 ctl print --json "$(ls -d "$TRACES"/*/ | head -n 1)"
[ -s "$T/out" ] || fail "print --json SESSION printed nothing"
ok "--json: $n events, one JSON object a line"

# A torn packet, as a daemon killed mid-write would leave: the first
# 100 bytes of the longest stream's first packet again at its end.
cp -R "$TRACES" "$T/bad"
victim=$(ls -S "$T"/bad/*/stream-* | head -n 1)
size=$(wc -c < "$victim")
head -c 100 "$victim" > "$T/torn"
cat "$T/torn" >> "$victim"
expect_status 1 ctl print --raw "$T/bad"
grep -q "^tracectl: $victim: offset $((size + 56)): packet_size .* runs past the end of the file (100 bytes left): truncated packet" "$T/err" ||
	fail "no message naming the file and offset: $(cat "$T/err")"
tp_norm "$T/out" > "$T/bad.norm"
sort -s -n -k2,2 "$T/bad.norm" | cmp -s - "$T/tp.sorted" ||
	fail "events missing: $(wc -l < "$T/bad.norm") printed, not $ntp"
# Now a packet cut short in the middle of the file: the stream is read
# up to it, the others whole.
truncate -s $((size - 3)) "$victim"
expect_status 1 ctl print --raw "$T/bad"
grep -q "^tracectl: $victim: offset [0-9]*: .*runs past the end of the file" "$T/err" ||
	fail "truncated: $(cat "$T/err")"
tid=${victim##*stream-}
others=$(awk -v t="$tid" '$2 != t' "$T/tp.norm" | wc -l)
tp_norm "$T/out" | awk -v t="$tid" '$2 != t' > "$T/bad.others"
[ "$(wc -l < "$T/bad.others")" = "$others" ] ||
	fail "the other streams lost events: $(wc -l < "$T/bad.others") of $others"
ok "a torn or truncated stream is named with its offset (status 1), the rest printed"

# Bad metadata: named with its line; its session skipped, others read.
s=$(ls -d "$T"/bad/*/ | head -n 1)
s=${s%/}
sed -i 's/byte_order = le;/byte_order = be;/' "$s/metadata"
expect_status 1 ctl print "$T/bad"
grep -q "^tracectl: $s/metadata:[0-9]*: byte_order: only le is supported" "$T/err" ||
	fail "bad metadata: $(cat "$T/err")"
[ -s "$T/out" ] || fail "nothing printed from the other session"
ok "bad metadata is named with its line"

# Usage and missing directories.
expect_status 2 ctl print
expect_status 2 ctl print --nope "$TRACES"
expect_status 1 ctl print "$T/nowhere"
grep -q "$T/nowhere: No such file or directory" "$T/err" || fail "nowhere: $(cat "$T/err")"
mkdir "$T/empty"
expect_status 1 ctl print "$T/empty"
grep -q "no trace here" "$T/err" || fail "empty: $(cat "$T/err")"
expect_status 0 ctl help
grep -q "^  print \[--raw | --json\] \[FILTERS\] DIR\.\.\." "$T/out" ||
	fail "help does not list print"
ok "usage errors are 2, missing traces 1, help lists print"
