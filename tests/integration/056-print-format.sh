#!/bin/sh
# SPDX-License-Identifier: MIT
# tracectl print for people: each argument type rendered with the
# format string of its trace-events line (0x%08x, PRIx64, %p, %s of a
# NULL, %hhd...), or as { name = value } without one and with --raw;
# the time, delta, process and thread prefix; --json parsed back by jq
# with 64-bit values intact and NULL apart from "(null)"; and every
# filter: --event (globs, provider:event, repeated), --pid, --tid,
# --session, --since/--until (absolute, time of day, relative), --lost,
# --limit.
. "$(dirname "$0")/lib.sh"

command -v jq >/dev/null 2>&1 || skip "jq is not installed (apt-get install jq)"

expect_status() {	# WANT COMMAND...
	want=$1; shift
	set +e; "$@" >"$T/out" 2>"$T/err"; got=$?; set -e
	! grep -q "Sanitizer\|runtime error" "$T/err" ||
		fail "'$*': sanitizer report: $(head -c 2000 "$T/err")"
	[ "$got" = "$want" ] ||
		fail "'$*' exited $got, not $want: $(head -c 600 "$T/err")"
}
# lines PATTERN: how many lines of the last output match.
lines() { grep -c -- "$1" "$T/out" || true; }

# A slow daemon (under ASan) must not make the helpers start untraced.
export TRACED_CONNECT_TIMEOUT_MS=10000
start_daemon
"$HELPERS/jobs" -t 2 -n 5 >/dev/null || fail "jobs"
TRACED_RING_SIZE=4K "$HELPERS/jobs" -t 2 -n 1 -b 3000 >/dev/null ||
	fail "jobs with a burst"
ctl trace-file flush >/dev/null || fail "flush"
wait_no_sessions 10 || fail "sessions did not end"
stop_daemon
s1=$(ls -d "$TRACES"/jobs-* | head -n 1); s1=${s1##*/}
s2=$(ls -d "$TRACES"/jobs-* | tail -n 1); s2=${s2##*/}
pid1=$(echo "$s1" | cut -d- -f2); pid2=$(echo "$s2" | cut -d- -f2)
[ "$pid1" != "$pid2" ] || fail "one session only"

# ---- rendering with the format strings
expect_status 0 ctl print --session "$s1" "$TRACES"
cp "$T/out" "$T/text"
pre="^\[[0-9][0-9]:[0-9][0-9]:[0-9][0-9]\.[0-9]\{9\}\] ([+?][0-9?]\.[0-9?]\{9\}) jobs $pid1/[0-9]* "
expect_line() {	# the text after the prefix, exactly once
	n=$(grep -c -- "$pre$(printf '%s' "$1" | sed 's/[][\.*^$]/\\&/g')\$" "$T/text" || true)
	[ "$n" = 1 ] || fail "expected once: '$1', found $n times in: $(head -n 8 "$T/text")"
}
expect_line "helpers:test_crc: crc 0x0badcafe big 0xfedcba9876543210 neg -9223372036854775807 at 0xdeadbeef"
expect_line "helpers:test_words: name alpha maybe (null) ok 1 delta -5 c x"
expect_line "helpers:test_words: name (null) maybe (null) ok 0 delta 9007199254740993 c y"
expect_line "helpers:test_small: i8 -1 u8 255 i16 -300 u16 65535"
expect_line 'helpers:test_raw: { a = -42, s = "tab\there" }'
head -n 1 "$T/text" | grep -q ' (+?\.?????????) ' || fail "first delta: $(head -n 1 "$T/text")"
sed -n 2p "$T/text" | grep -q ' (+0\.[0-9]\{9\}) ' || fail "delta: $(sed -n 2p "$T/text")"
for w in 0 1; do
	for k in 0 1 2 3 4; do
		j=$((1000 * w + k))
		grep -q "${pre}helpers:test_job_start: job $j start on worker $w\$" "$T/text" ||
			fail "no start of job $j"
		grep -q "${pre}helpers:test_job_done: job $j done by worker $w in [0-9]* ns\$" "$T/text" ||
			fail "no end of job $j"
	done
done
[ "$(wc -l < "$T/text")" = 25 ] || fail "$(wc -l < "$T/text") lines, not 25"
ok "every argument type with its format string, and without one"

expect_status 0 ctl print --raw --session "$s1" "$TRACES"
cp "$T/out" "$T/raw"
grep -q "helpers:test_crc: { crc = 195939070, big = 18364758544493064720, neg = -9223372036854775807, where = 0xDEADBEEF }\$" "$T/raw" ||
	fail "raw crc: $(grep test_crc "$T/raw")"
grep -q 'helpers:test_words: { name = "alpha", maybe = NULL, ok = 1, delta = -5, c = 120 }$' "$T/raw" ||
	fail "raw NULL: $(grep test_words "$T/raw")"
grep -q 'helpers:test_words: { name = "(null)", maybe = "(null)", ok = 0, delta = 9007199254740993, c = 121 }$' "$T/raw" ||
	fail "raw (null): $(grep test_words "$T/raw")"
ok "--raw: name = value, a NULL string apart from \"(null)\""

# ---- JSON, read back by jq
expect_status 0 ctl print --json "$TRACES"
cp "$T/out" "$T/json"
jq -e . "$T/json" >/dev/null || fail "not JSON Lines"
q() { jq -r -s "$1" "$T/json"; }
[ "$(q "[.[] | select(.session == \"$s1\" and .event == \"helpers:test_crc\")][0].fields | [.crc, .big, .neg, .where] | @json")" = \
    '[195939070,"18364758544493064720","-9223372036854775807","0xdeadbeef"]' ] ||
	fail "json crc: $(grep test_crc "$T/json" | head -n 1)"
[ "$(q "[.[] | select(.session == \"$s1\" and .event == \"helpers:test_words\")] | map(.fields | [.name, .maybe, .ok, .delta]) | @json")" = \
    '[["alpha",null,true,"-5"],["(null)","(null)",false,"9007199254740993"]]' ] ||
	fail "json text: $(grep test_words "$T/json" | head -n 2)"
[ "$(q "[.[] | select(.session == \"$s1\" and .event == \"helpers:test_small\")][0].fields | @json")" = \
    '{"i8":-1,"u8":255,"i16":-300,"u16":65535}' ] || fail "json small"
q '.[] | .ts' | grep -qv '^[0-9]\{19\}$' && fail "a ts that is not 19 digits"
# Time order, and the same events as the text.
q '.[] | .ts' | sort -c || fail "json not in time order"
[ "$(q "[.[] | select(.session == \"$s1\")] | length")" = 25 ] || fail "json count"
lost_json=$(q '[.[] | select(.type == "lost") | .lost | tonumber] | add')
[ "${lost_json:-0}" != null ] && [ "${lost_json:-0}" -gt 0 ] ||
	fail "no loss in the json of a 4K ring with a burst of 3000"
ok "--json: 64-bit values intact as strings, null apart from \"(null)\", $lost_json lost"

# ---- filters
expect_status 0 ctl print --event 'test_job_*' "$TRACES"
[ "$(lines ' helpers:test_job_')" = 24 ] && [ "$(lines ' helpers:')" = 24 ] ||
	fail "--event glob: $(lines ' helpers:test_job_') of $(wc -l < "$T/out")"
expect_status 0 ctl print --event helpers:test_crc --event test_small "$TRACES"
[ "$(lines ' helpers:test_crc: ')" = 2 ] && [ "$(lines ' helpers:test_small: ')" = 2 ] &&
	[ "$(lines ' helpers:')" = 4 ] || fail "--event twice, provider:event: $(cat "$T/out")"
expect_status 0 ctl print --event 'other:test_crc' "$TRACES"
[ "$(lines ' helpers:')" = 0 ] || fail "--event other provider"
expect_status 0 ctl print --pid "$pid2" --event 'test_*' "$TRACES"
[ "$(lines " jobs $pid1/")" = 0 ] && [ "$(lines " jobs $pid2/")" -gt 0 ] || fail "--pid"
tid=$(grep " helpers:test_job_start: job 1001 " "$T/text" | sed 's/.* jobs [0-9]*\/\([0-9]*\) .*/\1/')
expect_status 0 ctl print --tid "$tid" "$TRACES"
[ "$(lines " jobs $pid1/$tid helpers:test_job_")" = 10 ] && [ "$(wc -l < "$T/out")" = 10 ] ||
	fail "--tid $tid: $(cat "$T/out")"
n=${s2##*-}
expect_status 0 ctl print --session "$n" "$TRACES"
[ "$(lines " jobs $pid2/")" = "$(wc -l < "$T/out")" ] || fail "--session NUMBER"
expect_status 0 ctl print --session 'jobs-*' --limit 3 "$TRACES"
[ "$(wc -l < "$T/out")" = 3 ] || fail "--limit 3: $(wc -l < "$T/out")"
expect_status 0 ctl print --lost "$TRACES"
[ "$(wc -l < "$T/out")" -gt 0 ] && [ "$(lines ' LOST [0-9]* events* (')" = "$(wc -l < "$T/out")" ] &&
	[ "$(lines " jobs $pid1/")" = 0 ] || fail "--lost: $(head -n 5 "$T/out")"
# Time: the 3rd event of s1 by its absolute time, its time of day, and
# its offset from the start of the trace.
ts0=$(q '.[0].ts')
ts3=$(q "[.[] | select(.session == \"$s1\")][2].ts")
third=$(sed -n 3p "$T/text" | cut -d" " -f3-)
check_since() {
	expect_status 0 ctl print --session "$s1" --since "$1" "$TRACES"
	[ "$(head -n 1 "$T/out" | cut -d' ' -f3-)" = "$third" ] &&
		[ "$(wc -l < "$T/out")" = 23 ] ||
		fail "--since $1: $(head -n 1 "$T/out"), $(wc -l < "$T/out") lines, want: $third"
}
check_since "@${ts3%?????????}.${ts3#??????????}"
check_since "$(sed -n 3p "$T/text" | sed 's/^\[\([^]]*\)\].*/\1/')"
check_since "+$((ts3 - ts0))ns"
expect_status 0 ctl print --session "$s1" --until "@${ts3%?????????}.${ts3#??????????}" "$TRACES"
[ "$(wc -l < "$T/out")" = 3 ] || fail "--until: $(wc -l < "$T/out") lines"
ok "filters: --event, --pid, --tid, --session, --since, --until, --lost, --limit"

expect_status 2 ctl print --pid x "$TRACES"
expect_status 2 ctl print --since yesterday "$TRACES"
grep -q "not a time" "$T/err" || fail "--since yesterday: $(cat "$T/err")"
expect_status 2 ctl print --limit 0 "$TRACES"
expect_status 2 ctl print --event "$TRACES"
ok "malformed filters are usage errors"
