#!/bin/sh
# SPDX-License-Identifier: MIT
# A full disk loses no event silently and tears no packet.  The trace
# directory is a 2 MiB tmpfs (root only) that a program fills while it
# traces; then:
#   - traced keeps running and says why it cannot write, once per
#     stream, with the path and "No space left on device"; 'info trace'
#     says so too, and counts the events under write_error;
#   - when space is freed (a file deleted) writing resumes by itself:
#     new events reach the disk;
#   - afterwards, per thread, events in the trace + events discarded ==
#     events emitted, exactly, and babeltrace2 reads every stream.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip "needs root to mount a tmpfs"
mkdir -p "$T/disk"
mount -t tmpfs -o size=2m,mode=0755 traced-test "$T/disk" 2>/dev/null ||
	skip "cannot mount a tmpfs here"
on_exit 'umount "$T/disk" 2>/dev/null || umount -l "$T/disk" 2>/dev/null || true'
TRACES="$T/disk/traces"

start_daemon --drain-interval 20
# Most of the space taken, so that the program fills the rest quickly.
dd if=/dev/zero of="$T/disk/filler" bs=64k count=26 2>/dev/null || true
"$HELPERS/emit" -t 2 -i 20 -s "$T/stop" > "$T/emit.out" &
emit=$!
bg_track $emit

wait_for 20 grep -q "No space left on device" "$T/traced.log" ||
	fail "the disk never filled: $(df -k "$T/disk" | tail -n 1)"
sleep 0.5
kill -0 "$DAEMON_PID" || fail "traced died on a full disk"
ctl info trace > "$T/info.txt"
ctl --json info trace > "$T/info.json"
grep -q "cannot write $TRACES/emit-$emit-[0-9]*/stream-[0-9]*: No space left on device" "$T/info.txt" ||
	fail "info trace does not say which file and why: $(cat "$T/info.txt")"
grep -q '"write_error":true' "$T/info.json" || fail "info trace --json: no write_error: $(cat "$T/info.json")"
we=$(grep '"type":"ring"' "$T/info.json" | grep -o '"write_error":[0-9]*' |
	awk -F: '{ s += $2 } END { print s + 0 }')
[ "$we" -gt 0 ] || fail "no event counted under write_error: $(cat "$T/info.json")"
n=$(grep -c "cannot write .*No space left on device" "$T/traced.log")
[ "$n" -le 4 ] || fail "the log repeats the write error $n times"
ok "disk full: traced runs, info trace names the file and the error, $we events counted under write_error"

# Space again: writing resumes by itself.  (Plenty of it: at this rate
# the program would fill the space one file frees in a blink, and the
# write error would rightly be back.)
rm -f "$T/disk/filler"
mount -o remount,size=256m "$T/disk" || fail "cannot grow the tmpfs"
sizes() { ls -l "$TRACES"/emit-$emit-*/stream-* | awk '{ s += $5 } END { print s }'; }
s0=$(sizes)
wait_for 10 sh -c "[ \$(ls -l '$TRACES'/emit-$emit-*/stream-* | awk '{ s += \$5 } END { print s }') -gt $((s0 + 4096)) ]" ||
	fail "writing did not resume: $s0 bytes, then $(sizes)"
wait_for 5 sh -c "! '$BIN/tracectl' --json info trace | grep -q '\"write_error\":true'" ||
	fail "info trace still reports a write error: $(ctl info trace)"
ok "space freed: writing resumed ($s0 bytes, then $(sizes))"

touch "$T/stop"
wait $emit || fail "emit exited with $?"
emitted=$(sed -n 's/^emitted //p' "$T/emit.out")
wait_no_sessions 10 || fail "sessions left: $(ctl info trace)"
ctl trace-file flush >/dev/null

# No torn packet: every stream reads.
for s in "$TRACES"/emit-$emit-*/stream-*; do
	rm -rf "$T/one" && mkdir "$T/one"
	cp "$(dirname "$s")/metadata" "$s" "$T/one/"
	babeltrace2 "$T/one" >/dev/null 2>"$T/one.err" ||
		fail "babeltrace2 cannot read $s: $(head -c 400 "$T/one.err")"
done
# Every event on disk or counted as discarded, per thread.
bt "$TRACES" > "$T/out.txt" 2> "$T/warn.txt" || fail "babeltrace2"
sed -n 's/.*helpers:test_[a-z_]*: { tid = \([0-9]*\) }.*/\1/p' "$T/out.txt" |
	sort | uniq -c > "$T/events"
tr -d '\n' < "$T/warn.txt" | sed 's/WARNING/\nWARNING/g' |
	sed -n 's/.*discarded \([0-9]*\) events\{0,1\} .*stream-\([0-9]*\)".*/\2 \1/p' |
	awk '{ d[$1] += $2 } END { for (t in d) print t, d[t] }' > "$T/discarded"
[ "$(wc -l < "$T/events")" = 2 ] || fail "events from $(wc -l < "$T/events") threads"
total_d=0
total_e=0
while read -r count tid; do
	d=$(awk -v t="$tid" '$1 == t { print $2 }' "$T/discarded")
	d=${d:-0}
	total_d=$((total_d + d))
	total_e=$((total_e + count))
done < "$T/events"
[ $((total_e + total_d)) = $((5 * emitted)) ] ||
	fail "$total_e events in the trace + $total_d discarded != $((5 * emitted)) emitted"
[ "$total_d" -gt 0 ] || fail "nothing discarded: the disk never filled?"
ok "every stream reads; $total_e events on disk + $total_d discarded = $((5 * emitted)) emitted"
stop_daemon
