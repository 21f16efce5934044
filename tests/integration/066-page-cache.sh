#!/bin/sh
# SPDX-License-Identifier: MIT
# What traced writes does not stay in the page cache: a stream's bytes
# are handed to the disk a MiB at a time and dropped from the cache once
# there (daemon/stream.c, STREAM_WB_STEP), so a long trace neither pushes
# the machine's other files out of memory nor makes the kernel find new
# memory for every page it writes.  After one thread wrote about 120 MB,
# a small part of its stream is cached, and every event is there:
# babeltrace2 reads them all back (events in the trace + lost = emitted).
# With direct-io off: big packets would otherwise skip the page cache
# altogether (067).
. "$(dirname "$0")/lib.sh"

command -v fincore >/dev/null || skip "no fincore (util-linux)"
start_daemon --set direct-io=off
mkdir -p "$TRACES"
fs=$(stat -f -c %T "$TRACES")
case $fs in
tmpfs|ramfs) skip "the trace directory is on $fs: its pages are memory, never dropped" ;;
esac

N=600000		# seq values, 5 enabled events each: about 60 MB
"$HELPERS/emit" -t 1 -n $N -r 400000 > "$T/emit.out" || fail "emit failed"
[ "$(cat "$T/emit.out")" = "emitted $N" ] || fail "emit: $(cat "$T/emit.out")"
wait_no_sessions 20 || fail "the session did not end: $(ctl info trace)"
ctl trace-file flush >/dev/null
d=$(ls -d "$TRACES"/emit-*)
f=$(ls "$d" | grep '^stream-' | head -n 1)
size=$(stat -c %s "$d/$f")
[ "$size" -ge $((40 << 20)) ] || fail "$f is only $size bytes"
cached=$(fincore --bytes --noheadings --output RES "$d/$f")
echo "$f: $size bytes, $cached of them in the page cache"
# What stays: the last steps, and pages the disk had not taken yet when
# they were dropped (the writers never wait for it: a slow disk keeps
# more).  A quarter is far more than a few MiB here (1.5-5.7 MB of
# 120 MB), and far less than all of it, which stayed before.
[ "$cached" -le $((size / 4)) ] ||
	fail "$cached bytes of the $size-byte stream stay in the page cache"

# Dropped from the cache, not lost: every event reads back.
bt "$d" 2>/dev/null | grep -c 'helpers:test_' > "$T/count" || true
got=$(cat "$T/count")
lost=$(ctl --json info trace |
	grep -o '"type":"ended_ring"[^}]*"lost":[0-9]*' | sed 's/.*"lost"://' |
	awk '{ n += $1 } END { print n + 0 }')
[ $((got + lost)) = $((5 * N)) ] && [ "$got" -gt 0 ] ||
	fail "$got events in the trace + $lost lost, of $((5 * N)) emitted"
ok "a $size-byte stream leaves $cached bytes cached; $got events read back, $lost lost"
