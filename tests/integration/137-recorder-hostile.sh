#!/bin/sh
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 The traced authors
#
# The flight recorder under a hostile user (issue 26, point 5): with
# recorder-bytes-per-uid=16M and an 8M window, a user who floods with
# many recording programs at once and one after another holds at most
# 16 MiB of the daemon's memory, the daemon's own memory stays bounded,
# and root's window (a quiet program recording beside the flood) keeps
# every event it had: one user's windows never push out another's.  The
# user can neither write a snapshot nor change the recorder (they are
# root's or the daemon group's), so cannot write anyone's window.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-hostile.sh"
bg_track_init

hostile_init
WHAT="issue 26 point 5 (the recorder under a hostile user)"
quiet_start
start_daemon --recorder 8M --set recorder-bytes-per-uid=16M \
	--set recorder-keep=64
mem0=$(daemon_mem | awk '{ print $1 }')

# Root's quiet program: 3 threads, 2,000 ticks each, then it waits.
"$HELPERS/emit" -t 3 -n 2000 -H "$T/root.go" >"$T/root.out" 2>"$T/root.err" &
RPID=$!
bg_track $RPID
wait_for 10 grep -q "waves done" "$T/root.err" || hfail "$WHAT: root's program: $(cat "$T/root.err")"
root_window() {
	ctl --json info trace | jq -c ".items[] | select(.type == \"window\" and .pid == $RPID) | [.events, .overwritten, .bytes]"
}
wait_for 10 sh -c "[ \"\$($BIN/tracectl --json info trace | jq -c '.items[] | select(.type == \"window\" and .pid == $RPID) | .events')\" = 30000 ]" ||
	hfail "$WHAT: root's window: $(root_window)"
before=$(root_window)

# The flood: 4 programs at once, then 12 one after another, each far
# more than its window.
i=0
while [ $i -lt 4 ]; do
	$AS_HOSTILE "$HELPERS/emit" -t 2 -n 150000 >/dev/null 2>&1 &
	bg_track $!
	i=$((i + 1))
done
wait_for 60 sh -c "[ \$(pgrep -u $HUID -c emit || true) = 0 ]" || hfail "$WHAT: the flood did not end"
i=0
while [ $i -lt 12 ]; do
	as_hostile "$HELPERS/emit" -t 1 -n 100000 >/dev/null 2>&1
	i=$((i + 1))
done
held=$(ctl --json info trace | jq "[.items[] | select(.type == \"window\" and .uid == $HUID) | .bytes] | add")
n=$(ctl --json info trace | jq "[.items[] | select(.type == \"window\" and .uid == $HUID)] | length")
[ "$n" -ge 16 ] || hfail "$WHAT: only $n of the user's 16 windows kept (recorder-keep=64)"
[ "$held" -le $((16 << 20)) ] || hfail "$WHAT: the user's $n windows hold $held bytes > 16 MiB"
ok "the user's $n windows hold $held bytes (recorder-bytes-per-uid=16M)"

after=$(root_window)
[ "$after" = "$before" ] || hfail "$WHAT: root's window changed under the flood: $before -> $after"
ok "root's window kept every event: [events, overwritten, bytes] $after"

# The recorder's memory: windows, and packet buffers kept for reuse (at
# most 16 MiB); the daemon's own, as every hostile test bounds it.
rec=$(ctl --json info trace | jq '.items[] | select(.type == "recorder") | .bytes + .spare_bytes')
[ "$rec" -le $(((16 + 2 + 16) << 20)) ] ||
	hfail "$WHAT: the recorder holds $rec bytes"
mem1=$(daemon_mem | awk '{ print $1 }')
[ "$mem1" -le $((MEM_MAX_MB * 1024)) ] ||
	hfail "$WHAT: the daemon's own memory is $((mem1 / 1024)) MiB"
ok "the recorder holds $((rec >> 20)) MiB; the daemon's own memory $((mem0 / 1024)) -> $((mem1 / 1024)) MiB"

# The user may not write a snapshot, nor change the recorder.
out=$(as_hostile "$BIN/tracectl" snapshot -o "$T/hsnap" 2>&1) &&
	hfail "$WHAT: the user wrote a snapshot: $out"
echo "$out" | grep -qi "permission\|denied\|not allowed" || hfail "$WHAT: snapshot refused without saying why: $out"
[ ! -e "$T/hsnap" ] || hfail "$WHAT: $T/hsnap was made"
out=$(as_hostile "$BIN/tracectl" trace-file recorder 1G 2>&1) &&
	hfail "$WHAT: the user changed the recorder: $out"
ok "the user can neither snapshot nor change the recorder"

# Root's snapshot of its own program: every event of it, none overwritten.
touch "$T/root.go"
wait $RPID || hfail "$WHAT: root's program exited with $?"
out=$(ctl snapshot -o "$T/rsnap" --session "emit-$RPID-*") || hfail "$WHAT: snapshot: $out"
awk '$1 == "thread" { e += $4; o += $6 } END { exit !(e == 30000 && o == 0) }' \
	"$T"/rsnap/*/traced/snapshot || hfail "$WHAT: root's snapshot: $(cat "$T"/rsnap/*/traced/snapshot)"
ok "root's snapshot: all 30000 events of its program"
stop_daemon
