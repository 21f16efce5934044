#!/bin/sh
# SPDX-License-Identifier: MIT
# Where the administrator allows huge pages for shared memory
# (shmem_enabled = advise), a ring that grew past 4 MiB gets 2 MiB pages
# for its data, and a thread that writes little keeps small pages: its
# ring's memory stays what it wrote, not 2 MiB.  Checked in the
# program's /proc/PID/smaps (the ring is the memfd 'traced-ring'), with
# every event of the small thread in the trace.  The setting is the
# machine's: the test sets it to advise and puts back what it found.
. "$(dirname "$0")/lib.sh"

KNOB=/sys/kernel/mm/transparent_hugepage/shmem_enabled
[ "$(id -u)" = 0 ] || skip "needs root (it sets $KNOB)"
[ -w "$KNOB" ] || skip "$KNOB is not there or not writable"
was=$(sed -n 's/.*\[\(.*\)\].*/\1/p' "$KNOB")
[ -n "$was" ] || skip "cannot read $KNOB: $(cat "$KNOB")"
bg_track_init
on_exit "echo '$was' > '$KNOB'"
echo advise > "$KNOB" 2>"$T/knob.err" || skip "advise refused: $(cat "$T/knob.err")"

start_daemon

# ring_kb PID FIELD: FIELD (kB) summed over the mappings of PID's rings.
ring_kb() {
	awk -v f="$2:" '/^[0-9a-f]+-[0-9a-f]+ / { ring = /traced-ring/ }
		ring && $1 == f { n += $2 } END { print n + 0 }' "/proc/$1/smaps"
}

# A busy thread with a ring that may grow to 64 MiB: in a tight loop it
# fills its ring faster than any daemon drains, so the ring grows.
TRACED_RING_SIZE=64M "$HELPERS/emit" -t 1 -s "$T/stop-big" >"$T/big.out" &
big=$!
bg_track $big
has_huge() { [ "$(ring_kb "$1" ShmemPmdMapped)" -ge 4096 ]; }
wait_for 20 has_huge $big ||
	fail "no 2 MiB pages in a ring that may grow to 64 MiB: ShmemPmdMapped $(ring_kb $big ShmemPmdMapped) kB, Rss $(ring_kb $big Rss) kB"
pmd=$(ring_kb $big ShmemPmdMapped)
rss=$(ring_kb $big Rss)
touch "$T/stop-big"
wait $big || fail "the busy emit failed"
ok "a ring that grew: $pmd kB of its $rss kB in 2 MiB pages"

# A thread of 200 events, which stay in its first 1 MiB: small pages
# only, and little memory.  The ring is looked at between two waves of
# one thread each, while the first one's ring waits for the second.
"$HELPERS/emit" -t 1 -w 2 -n 200 -W "$T/go" >"$T/small.out" 2>"$T/small.err" &
small=$!
bg_track $small
wait_for 10 grep -q "wave 1 ended" "$T/small.err" ||
	fail "the small program did not end its first wave: $(cat "$T/small.err")"
sleep 0.5
pmd=$(ring_kb $small ShmemPmdMapped)
rss=$(ring_kb $small Rss)
[ "$rss" -gt 0 ] || fail "no ring in /proc/$small/smaps"
[ "$pmd" = 0 ] || fail "a thread of 200 events got $pmd kB of 2 MiB pages"
[ "$rss" -lt 1024 ] || fail "a thread of 200 events holds $rss kB of ring"
touch "$T/go"
wait $small || fail "the small emit failed: $(cat "$T/small.err")"
[ "$(cat "$T/small.out")" = "emitted 400" ] || fail "small emit: $(cat "$T/small.out")"
ok "a thread that wrote little: $rss kB of ring, no 2 MiB pages"

# Both traces read, and the small program lost nothing.
wait_no_sessions 20 || fail "the sessions did not end: $(ctl info trace)"
ctl trace-file flush >/dev/null
bt "$TRACES" >/dev/null 2>"$T/bt.err" || fail "babeltrace2: $(cat "$T/bt.err")"
bt "$TRACES"/emit-$small-* >"$T/small.txt" 2>"$T/bt.err" ||
	fail "babeltrace2 on the small program's session: $(cat "$T/bt.err")"
n=$(count_events "$T/small.txt" test_tick)
[ "$n" = 400 ] || fail "$n test_tick events of the small program, not 400"
ok "babeltrace2 reads both; the small program's 400 ticks are all there"
