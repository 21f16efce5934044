#!/bin/sh
# SPDX-License-Identifier: MIT
# A setting traced cannot take is refused where the user sees it, never
# rounded, clamped or ignored in silence.  Ring sizes follow one rule
# (a power of two from 4K to 1G) whoever gives them: traced --ring-size
# and traced.conf stop the daemon with the reason; a program's
# TRACED_RING_SIZE (or TRACED_RING_START) is refused on its stderr and
# its rings get the daemon's size (or start at 1M).  TRACED=0, no, off and false (any case) turn tracing
# off; a word TRACED does not know turns it off too, and says so.
. "$(dirname "$0")/lib.sh"

# ---- the daemon: options and traced.conf --------------------------------

refused_option() {	# VALUE MESSAGE
	# A daemon that takes the value runs: timeout ends it (status 124).
	if timeout 5 "$BIN/traced" --foreground --runtime-dir "$T/r1" --trace-dir "$T/t1" \
	    --state-dir "$T/s1" --ring-size "$1" > "$T/out" 2>&1; then
		fail "traced --ring-size $1 started"
	else
		rc=$?
	fi
	[ $rc = 2 ] || fail "traced --ring-size $1: exit $rc, not 2: $(cat "$T/out")"
	grep -qF "traced: --ring-size: $2" "$T/out" ||
		fail "traced --ring-size $1 said: $(cat "$T/out")"
}
refused_option 3M "3M is not a power of two (2M or 4M)"
refused_option 2G "2G is more than 1G, the largest ring"
refused_option -1 "'-1' is not a size"
refused_option garbage "'garbage' is not a size (a power of two from 4K to 1G, such as 1M)"
refused_option 1K "1K is less than 4K, the smallest ring"
ok "traced --ring-size refuses 3M, 2G, -1, garbage and 1K with the reason"

printf 'ring-size = 3M\n' > "$T/bad.conf"
if timeout 5 "$BIN/traced" --foreground --config "$T/bad.conf" --runtime-dir "$T/r2" \
    --trace-dir "$T/t2" --state-dir "$T/s2" > "$T/out" 2>&1; then
	fail "traced started with ring-size = 3M in its file"
fi
grep -qF "$T/bad.conf:1: ring-size: 3M is not a power of two (2M or 4M)" "$T/out" ||
	fail "traced.conf ring-size = 3M: $(cat "$T/out")"
ok "traced.conf ring-size = 3M stops the daemon, naming file and line"

# ---- a traced program's environment -----------------------------------------

start_daemon --ring-size 64K

# The largest size the ring of the last session's thread could reach.
ring_max() {
	sid=$(sed -n 's/.*"type":"ended_session","session":\([0-9]*\).*/\1/p' "$T/info" |
		tail -n 1)
	[ -n "$sid" ] || fail "no ended session: $(cat "$T/info")"
	sed -n "s/.*\"type\":\"ended_ring\",\"session\":$sid,.*\"ring_max\":\([0-9]*\).*/\1/p" \
		"$T/info" | head -n 1
}

run_env() {	# VAR=VALUE...: run emit with them, stderr to $T/err
	rm -rf "$TRACES"
	env "$@" "$HELPERS/emit" -t 1 -n 10 > /dev/null 2> "$T/err" ||
		fail "emit with $* failed: $(cat "$T/err")"
	wait_no_sessions 10 || fail "sessions left: $(ctl info trace)"
	ctl --json info trace > "$T/info"
}

for bad in garbage:"'garbage' is not a size" 3M:"3M is not a power of two (2M or 4M)" \
    2G:"2G is more than 1G, the largest ring" -1:"'-1' is not a size"; do
	v=${bad%%:*} why=${bad#*:}
	run_env "TRACED_RING_SIZE=$v"
	grep -qF "TRACED_RING_SIZE=$v refused: $why" "$T/err" ||
		fail "TRACED_RING_SIZE=$v: stderr says: $(cat "$T/err")"
	[ "$(ring_max)" = 65536 ] ||
		fail "TRACED_RING_SIZE=$v: ring of $(ring_max) bytes, not the daemon's 64K"
done
run_env TRACED_RING_SIZE=4M
[ ! -s "$T/err" ] || fail "TRACED_RING_SIZE=4M: stderr says: $(cat "$T/err")"
[ "$(ring_max)" = 4194304 ] || fail "TRACED_RING_SIZE=4M: ring of $(ring_max) bytes"
ok "TRACED_RING_SIZE: garbage, 3M, 2G and -1 refused on stderr (rings of the daemon's 64K); 4M taken"

# TRACED_RING_START: the size a thread's ring starts at (1M by default,
# at most the size it may grow to).
ring_size() {	# the size the last session's ring reached
	sid=$(sed -n 's/.*"type":"ended_session","session":\([0-9]*\).*/\1/p' "$T/info" |
		tail -n 1)
	sed -n "s/.*\"type\":\"ended_ring\",\"session\":$sid,.*\"ring_size\":\([0-9]*\).*/\1/p" \
		"$T/info" | head -n 1
}
run_env TRACED_RING_SIZE=4M TRACED_RING_START=3M
grep -qF "TRACED_RING_START=3M refused: 3M is not a power of two (2M or 4M); rings start at 1M" "$T/err" ||
	fail "TRACED_RING_START=3M: stderr says: $(cat "$T/err")"
[ "$(ring_size)" = 1048576 ] || fail "TRACED_RING_START=3M: a ring of $(ring_size) bytes, not 1M"
run_env TRACED_RING_SIZE=1M TRACED_RING_START=2M
grep -qF "TRACED_RING_START=2M refused: more than TRACED_RING_SIZE=1M; rings start at 1M" "$T/err" ||
	fail "TRACED_RING_START=2M over TRACED_RING_SIZE=1M: stderr says: $(cat "$T/err")"
run_env TRACED_RING_SIZE=4M TRACED_RING_START=2M
[ ! -s "$T/err" ] || fail "TRACED_RING_START=2M: stderr says: $(cat "$T/err")"
[ "$(ring_size)" = 2097152 ] && [ "$(ring_max)" = 4194304 ] ||
	fail "TRACED_RING_START=2M, TRACED_RING_SIZE=4M: a ring of $(ring_size) bytes, up to $(ring_max)"
ok "TRACED_RING_START: 3M, and 2M over a 1M TRACED_RING_SIZE, refused on stderr; 2M taken (a 10-event thread's ring is 2M)"

nsessions() { ctl --json info trace | grep -c '"type":"ended_session"' || true; }
before=$(nsessions)
for v in 0 no off false OFF False; do
	run_env "TRACED=$v"
	[ ! -s "$T/err" ] || fail "TRACED=$v: stderr says: $(cat "$T/err")"
	[ ! -d "$TRACES" ] || [ -z "$(ls "$TRACES")" ] ||
		fail "TRACED=$v: traced anyway: $(ls "$TRACES")"
done
[ "$(nsessions)" = "$before" ] || fail "TRACED=0/no/off/false made sessions"
run_env TRACED=maybe
grep -qF "TRACED=maybe is not understood: tracing is off in this process" "$T/err" ||
	fail "TRACED=maybe: stderr says: $(cat "$T/err")"
[ "$(nsessions)" = "$before" ] || fail "TRACED=maybe traced"
run_env TRACED=yes
[ "$(nsessions)" = $((before + 1)) ] || fail "TRACED=yes did not trace"
ok "TRACED=0, no, off, false (any case) trace nothing; TRACED=maybe is refused out loud; TRACED=yes traces"
stop_daemon
