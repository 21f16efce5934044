#!/bin/sh
# SPDX-License-Identifier: MIT
# The ring pool (traced --ring-pool, daemon/pool.c): the daemon keeps a
# ring with its memory made; a program takes it when it connects, before
# main(), and its first thread writes into it from its first event, at
# the ring's full size.  Every event comes out, in order, none lost; a
# program that asks for another size gets none; a forked child never
# writes into its parent's pool ring; a program whose thread found none
# left gets the next one made; info trace says what the pool holds; a
# reload makes or lets go of rings to match ring-pool and ring-size.
# (Other users get none: 074-permissions.)
. "$(dirname "$0")/lib.sh"

CONF=$T/traced.conf
printf 'ring-size = 4M\nring-pool = 1\n' > "$CONF"
start_daemon --verbose --config "$CONF"
# given N: wait until the pool is full again, having given N in all.
pool_full() {
	wait_for 20 sh -c "'$BIN/tracectl' --json info trace |
		grep -q '\"type\":\"ring_pool\",\"want\":1,\"ready\":1,\"ring_size\":4194304,.*\"given\":$1,'" ||
		fail "the pool is not full with $1 given: $(ctl info trace | grep 'ring pool')"
}
pool_full 0
ok "a pool ring made: $(ctl info trace | grep 'ring pool')"

# One thread: it writes into the pool ring from its first event.
N=20000
TRACED_DEBUG=1 "$HELPERS/emit" -t 1 -n $N > "$T/emit.out" 2> "$T/emit.err" &
p=$!
emit_ended $p "$T/emit.out" $N
grep -q "a pool ring of 4194304 bytes from the daemon" "$T/emit.err" ||
	fail "emit got no pool ring: $(cat "$T/emit.err")"
ended_trace "$EMIT_DIR" $p
check_emit_threads "$T/out.txt" $N 1
grep -q "ring 0, thread [0-9]*, 4194304 bytes, up to 4194304," "$T/traced.log" ||
	fail "the pool ring did not start at its full size: $(grep 'ring 0, thread' "$T/traced.log")"
grep -q '"type":"ended_ring","session":[0-9]*,"tid":[0-9]*,"events":'$((5 * N))',"lost":0' \
	"$T/info.json" || fail "the daemon's books: $(grep -o '"type":"ended_ring"[^}]*' "$T/info.json")"
pool_full 1
ok "a thread wrote its $((5 * N)) events into the pool ring (4 MiB from the start), in order, none lost; the pool made another"

# Another size: no pool ring, and the pool keeps its own.
TRACED_DEBUG=1 TRACED_RING_SIZE=1M "$HELPERS/emit" -t 1 -n 100 \
	> "$T/emit2.out" 2> "$T/emit2.err" || fail "emit 2 failed"
! grep -q "pool ring" "$T/emit2.err" ||
	fail "a program with 1M rings took a 4M pool ring: $(grep 'pool ring' "$T/emit2.err")"
ctl --json info trace | grep -q '"type":"ring_pool","want":1,"ready":1,.*"given":1,' ||
	fail "the pool changed: $(ctl info trace | grep 'ring pool')"
ok "a program with rings of another size gets none"

# fork(): the parent connected and holds the pool ring, but has no ring
# yet; the child must not write into it (both would), and each trace
# holds its own events only, all of them, in order.
out=$(TRACED_DEBUG=1 "$HELPERS/forker" 1000 late 2> "$T/forker.err") ||
	fail "forker exited with $?: $(cat "$T/forker.err")"
child=${out#child }
ctl trace-file flush >/dev/null
parent_dir=$(ls -d "$TRACES"/forker-* | grep -v -- "-$child-")
child_dir=$(ls -d "$TRACES"/forker-"$child"-* 2>/dev/null) ||
	fail "no session for the child $child: $(ls "$TRACES")"
grep -q "^libtraced\[[0-9]*\]: a pool ring" "$T/forker.err" ||
	fail "the parent got no pool ring: $(cat "$T/forker.err")"
bt "$parent_dir" > "$T/parent.txt" 2>"$T/parent.err" || fail "parent trace"
bt "$child_dir" > "$T/child.txt" 2>"$T/child.err" || fail "child trace"
[ ! -s "$T/parent.err" ] && [ ! -s "$T/child.err" ] ||
	fail "babeltrace2 warned: $(cat "$T/parent.err" "$T/child.err")"
sed -n 's/.*test_marker: .*seq = \([0-9]*\).*/\1/p' "$T/parent.txt" |
	awk '$1 != NR + 999 { print "marker " $1 " at " NR; bad = 1; exit }
		END { if (!bad && NR != 1000) print NR " markers" }' > "$T/bad"
[ ! -s "$T/bad" ] || fail "parent: $(cat "$T/bad")"
sed -n 's/.*test_tick: .*seq = \([0-9]*\).*/\1/p' "$T/child.txt" |
	awk '$1 != NR - 1 { print "tick " $1 " at " NR; bad = 1; exit }
		END { if (!bad && NR != 1000) print NR " ticks" }' > "$T/bad"
[ ! -s "$T/bad" ] || fail "child: $(cat "$T/bad")"
[ "$(count_events "$T/parent.txt" test_tick)" = 0 ] &&
	[ "$(count_events "$T/child.txt" test_marker)" = 0 ] ||
	fail "events of one process in the other's trace"
ok "fork with a pool ring held: parent markers 1000-1999 and child ticks 0-999, each in its own trace, in order"

# Two threads at once: one takes the pool ring, the other makes its own
# and asks for another, which comes once made.  A second wave takes the
# first's rings in-band.  Every event out, in order (at a rate the
# thread's own 1 MiB ring keeps up with).
wait_for 20 sh -c "'$BIN/tracectl' info trace | grep -q 'ring pool: 1 of 1'" ||
	fail "the pool did not fill: $(ctl info trace | grep 'ring pool')"
rm -f "$T/go"
"$HELPERS/emit" -t 2 -w 2 -n $N -r 200000 -W "$T/go" > "$T/emit3.out" 2> "$T/emit3.err" &
p=$!
wait_for 10 grep -q "wave 1 ended" "$T/emit3.err" || fail "no first wave"
wait_for 20 sh -c "[ \$(grep -c 'emit\[$p\] given a pool ring' '$T/traced.log') -ge 2 ]" ||
	fail "emit $p was given $(grep -c "emit\[$p\] given a pool ring" "$T/traced.log") pool rings, not 2"
touch "$T/go"
emit_ended $p "$T/emit3.out" $((4 * N))
ended_trace "$EMIT_DIR" $p
check_emit_threads "$T/out.txt" $N 4
ok "two threads at once: one took the pool ring, the other's miss brought the next; 4 threads' events in order"

# Reload: two rings; then 8 MiB ones (the 4 MiB ones go), which a new
# program takes; then none.
reload() { printf "$1" > "$CONF"; reload_daemon; }
reload 'ring-size = 4M\nring-pool = 2\n'
wait_for 20 sh -c "'$BIN/tracectl' info trace | grep -q 'ring pool: 2 of 2 rings of 4096 KiB ready'" ||
	fail "ring-pool 2: $(ctl info trace | grep 'ring pool')"
reload 'ring-size = 8M\nring-pool = 2\n'
wait_for 20 sh -c "'$BIN/tracectl' info trace | grep -q 'ring pool: 2 of 2 rings of 8192 KiB ready'" ||
	fail "ring-size 8M: $(ctl info trace | grep 'ring pool')"
TRACED_DEBUG=1 "$HELPERS/emit" -t 1 -n 100 > "$T/emit4.out" 2> "$T/emit4.err" ||
	fail "emit 4 failed"
grep -q "a pool ring of 8388608 bytes from the daemon" "$T/emit4.err" ||
	fail "no 8 MiB pool ring after the reload: $(cat "$T/emit4.err")"
reload 'ring-size = 8M\nring-pool = 0\n'
wait_for 10 sh -c "! '$BIN/tracectl' info trace | grep -q 'ring pool:'" ||
	fail "ring-pool 0 kept rings: $(ctl info trace | grep 'ring pool')"
ctl --json info trace | grep -q '"type":"ring_pool","want":0,"ready":0,' ||
	fail "ring-pool 0: $(ctl --json info trace | grep -o '"type":"ring_pool"[^}]*')"
ok "reloads: 2 rings, then 8 MiB ones (taken by a new program at that size), then none"
