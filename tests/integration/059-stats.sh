#!/bin/sh
# SPDX-License-Identifier: MIT
# tracectl stats on a trace with known pairs: the exact counts per
# event, thread and session, the losses by cause, and the count, min,
# median, p99 and max of the durations of the pairs (by --key, and
# nested per thread without it), each computed here again from print
# --json of the same trace.
. "$(dirname "$0")/lib.sh"

command -v jq >/dev/null 2>&1 || skip "jq is not installed (apt-get install jq)"

# A slow daemon (under ASan) must not make the helpers start untraced.
export TRACED_CONNECT_TIMEOUT_MS=10000
start_daemon
"$HELPERS/jobs" -t 3 -n 7 >/dev/null || fail "jobs"
TRACED_RING_SIZE=4K "$HELPERS/jobs" -t 2 -n 2 -b 3000 >/dev/null || fail "jobs"
ctl trace-file flush >/dev/null || fail "flush"
wait_no_sessions 10 || fail "sessions did not end"
stop_daemon
ctl print --json "$TRACES" > "$T/print.json" || fail "print --json"

# Durations of each job, sorted; their nearest-rank percentiles.
# jq's numbers are doubles: the times go as strings into the shell's
# 64-bit arithmetic.
jq -r -s '[.[] | select(.type == "event" and (.event | test("test_job_(start|done)$")))]
	| group_by([.pid, .fields.job])[] | select(length == 2)
	| "\(.[0].ts) \(.[1].ts)"' "$T/print.json" |
	while read -r a b; do echo $((b - a)); done | sort -n > "$T/d"
n=$(wc -l < "$T/d")
[ "$n" = 25 ] || fail "$n pairs in the trace, not 25"
rank() { sed -n "$(( (n * $1 + 99) / 100 ))p" "$T/d"; }
want="$n $(head -n 1 "$T/d") $(rank 50) $(rank 99) $(tail -n 1 "$T/d")"

ctl stats --pair test_job_start:test_job_done --key job "$TRACES" > "$T/out" 2>"$T/err" ||
	fail "stats: $(cat "$T/err")"
got=$(sed -n 's/^  test_job_start:test_job_done by job  *\([0-9]*\)  *\([0-9]*\)  *\([0-9]*\)  *\([0-9]*\)  *\([0-9]*\)$/\1 \2 \3 \4 \5/p' "$T/out")
[ "$got" = "$want" ] || fail "pairs by key: '$got', want '$want': $(tail -n 3 "$T/out")"
ctl stats --pair test_job_start:test_job_done "$TRACES" > "$T/out2" || fail "stats nested"
got=$(sed -n 's/^  test_job_start:test_job_done  *\([0-9]*\)  *\([0-9]*\)  *\([0-9]*\)  *\([0-9]*\)  *\([0-9]*\)$/\1 \2 \3 \4 \5/p' "$T/out2")
[ "$got" = "$want" ] || fail "pairs nested per thread: '$got', want '$want'"
ok "25 pairs: count, min, median, p99, max exact ($want)"

# Counts per event, thread and session.
jq -r -s '[.[] | select(.type == "event")] | group_by(.event)[] | "\(.[0].event) \(length)"' \
	"$T/print.json" | sort > "$T/want.ev"
sed -n '/^events:/,/^pairs/p' "$T/out" | awk 'NR > 2 && $1 != "pairs" { print $1, $2 }' |
	sort > "$T/got.ev"
cmp -s "$T/want.ev" "$T/got.ev" || fail "events: $(diff "$T/want.ev" "$T/got.ev")"
jq -r -s '[.[] | select(.type == "event")] | group_by(.session, .tid)[] | "\(.[0].session)/\(.[0].tid) \(length)"' \
	"$T/print.json" | sort > "$T/want.th"
sed -n '/^threads:/,/^events:/p' "$T/out" | awk 'NR > 2 && $1 != "events:" { print $1, $2 }' |
	sort > "$T/got.th"
cmp -s "$T/want.th" "$T/got.th" || fail "threads: $(diff "$T/want.th" "$T/got.th")"
lost=$(jq -s '[.[] | select(.type == "lost") | .lost | tonumber] | add' "$T/print.json")
ctl --json stats "$TRACES" > "$T/json" || fail "stats --json"
got=$(jq -r '[.sessions[].lost | to_entries[] | select(.key != "packets") | .value | tonumber] | add' "$T/json")
[ "$got" = "$lost" ] && [ "$lost" -gt 0 ] || fail "lost: $got, want $lost"
[ "$(jq -r '[.events[].count | tonumber] | add' "$T/json")" = \
    "$(jq -s '[.[] | select(.type == "event")] | length' "$T/print.json")" ] ||
	fail "stats --json event count"
ok "counts per event and thread, and $lost lost, as print --json has them"

set +e
ctl stats --pair nocolon "$TRACES" >/dev/null 2>"$T/err"; rc=$?
set -e
[ "$rc" = 2 ] && grep -q "expected START:END" "$T/err" || fail "bad --pair: $rc"
ok "a malformed --pair is a usage error"
