#!/bin/sh
# SPDX-License-Identifier: MIT
# A function trace reads as functions everywhere (issue 29): the helper
# with known calls (two threads, each: worker() -> rec() N levels deep
# -> leaf(), then leaf() twice more) is traced with its binary gone
# before the reading, and
#   - print names every call ("ftcalls:rec() {", "} ftcalls:rec 1.2 us"),
#     indented by its nesting, and --json gives "function" and "level";
#   - stats counts and times each function: 2 workers, 2N recs, 6
#     leaves, self <= total, min <= median <= p99 <= max;
#   - the Chrome export draws each call as a named slice nested in its
#     caller on its thread, in a file much smaller than one instant per
#     record was, and the same gzip'd with -o FILE.json.gz;
#   - the Perfetto export has a named slice per call, begun and ended on
#     the thread's track.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ftlib.sh"

N=40
start_daemon
ctl trace-func '*' on >/dev/null
mkdir "$T/cur"
cp "$HELPERS/ftcalls" "$T/ftcalls"
"$T/ftcalls" recurse $N 2 > "$T/out" 2>&1 || fail "ftcalls: $(cat "$T/out")"
rm -f "$T/ftcalls"
ctl trace-file flush >/dev/null
wait_no_sessions 10 || fail "the session did not end"
mv "$TRACES"/* "$T/cur/"
calls=$(( 2 * (1 + N + 3) + 1 ))	# per worker: itself, N recs, 3 leaves; main

# The calls as the program made them, "NAME LEVEL", sorted: main() and
# each worker() at the top of their threads, rec() at levels 1..N, the
# leaf() the innermost rec() tail-calls at level N (its caller returned
# into it), two more under each worker().
{
	echo "ftcalls:main 0"
	for w in 1 2; do
		echo "ftcalls:worker 0"
		i=1
		while [ $i -le $N ]; do echo "ftcalls:rec $i"; i=$((i + 1)); done
		echo "ftcalls:leaf $N"
		echo "ftcalls:leaf 1"
		echo "ftcalls:leaf 1"
	done
} | sort > "$T/want"

# nest: lines "TID START END NAME" (any order) -> "NAME LEVEL", sorted,
# each call's level being how many calls of its thread contain it.
nest() {
	sort -k1,1n -k2,2n -k3,3nr | awk '
	$1 != tid { tid = $1; n = 0 }
	{ while (n > 0 && end[n] <= $2) n--
	  print $4, n; n++; end[n] = $3 }' | sort
}

# ---- print: names, nesting, durations
ctl print "$T/cur" > "$T/print" 2>"$T/err" || fail "print: $(cat "$T/err")"
grep -E 'traced:func_(entry|exit):' "$T/print" > "$T/fl"
[ "$(wc -l < "$T/fl")" = $((2 * calls)) ] ||
	fail "print: $(wc -l < "$T/fl") function lines, not $((2 * calls))"
grep -q '0x' "$T/fl" && fail "print: an unnamed address: $(grep -m1 0x "$T/fl")"
grep -Eqv 'traced:func_entry: ( *)ftcalls:[a-z]+\(\) \{$|traced:func_exit: ( *)\} ftcalls:[a-z]+ [0-9.]+ (ns|us|ms|s)$' "$T/fl" &&
	fail "print: a line not as documented: $(grep -Ev 'func_entry: *ftcalls:[a-z]+\(\) \{$|func_exit: *\} ftcalls:[a-z]+ [0-9.]+ (ns|us|ms|s)$' "$T/fl" | head -n 3)"
sed -n 's/.*traced:func_entry: \( *\)\(ftcalls:[a-z]*\)() {$/\2|\1|/p' "$T/fl" |
	awk -F'|' '{ print $1, length($2) / 2 }' | sort > "$T/got"
cmp -s "$T/want" "$T/got" || fail "print: calls and nesting: $(diff "$T/want" "$T/got" | head)"
ok "print: $calls calls of 3 threads named, each at its nesting, exits with durations"

ctl print --json "$T/cur" > "$T/print.json" || fail "print --json"
jq -r 'select(.event == "traced:func_entry") | "\(.function) \(.level)"' \
	"$T/print.json" | sort > "$T/got"
cmp -s "$T/want" "$T/got" || fail "print --json: $(diff "$T/want" "$T/got" | head)"
[ "$(jq -r 'select(.event == "traced:func_exit" and (.duration | tonumber) > 0) | .function' \
	"$T/print.json" | wc -l)" = $calls ] || fail "print --json: exits without a duration"
ok "print --json: function, level and duration"

# ---- stats: per function
ctl stats --json "$T/cur" > "$T/stats.json" || fail "stats --json"
jq -r '.functions[] | "\(.function) \(.calls) \(.timed)"' "$T/stats.json" |
	sort > "$T/got"
printf '%s\n' "ftcalls:leaf 6 6" "ftcalls:main 1 1" "ftcalls:rec $((2 * N)) $((2 * N))" \
	"ftcalls:worker 2 2" > "$T/want.counts"
cmp -s "$T/want.counts" "$T/got" || fail "stats: calls: $(cat "$T/got")"
jq -e '[.functions[] | (.self | tonumber) <= (.total | tonumber) and
	(.min | tonumber) <= (.median | tonumber) and
	(.median | tonumber) <= (.p99 | tonumber) and
	(.p99 | tonumber) <= (.max | tonumber) and (.min | tonumber) > 0] | all' \
	"$T/stats.json" >/dev/null || fail "stats: times out of order: $(jq -c .functions "$T/stats.json")"
# Self time: main's callees ran on other threads; a worker's rec and leaf
# calls are its callees.
jq -e '.functions[] | select(.function == "ftcalls:main") | .self == .total' \
	"$T/stats.json" >/dev/null || fail "stats: main's self time"
ctl stats "$T/cur" > "$T/stats" || fail "stats"
grep -q '^functions (times in ns' "$T/stats" &&
	grep -Eq "^  ftcalls:rec +$((2 * N)) +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+$" "$T/stats" ||
	fail "stats: no functions table: $(tail -n 8 "$T/stats")"
ok "stats: calls, total, self, min, median, p99 and max per function"

# ---- Chrome: a complete event per call, nested on its thread
ctl export --format chrome -o "$T/calls.json" "$T/cur" 2>"$T/err" ||
	fail "export chrome: $(cat "$T/err")"
jq -r '.traceEvents[] | select(.ph == "X") |
	"\(.tid) \(.ts * 1000 | round) \((.ts + .dur) * 1000 | round) \(.name)"' \
	"$T/calls.json" | nest > "$T/got"
cmp -s "$T/want" "$T/got" || fail "chrome: nesting: $(diff "$T/want" "$T/got" | head)"
jq -e '[.traceEvents[] | select(.ph == "i" and (.name | test("func_")))] | length == 0' \
	"$T/calls.json" >/dev/null || fail "chrome: function records left as instants"
size=$(wc -c < "$T/calls.json")
[ $((size / (2 * calls))) -lt 80 ] || fail "chrome: $size bytes for $((2 * calls)) records"
ctl export --format chrome -o "$T/calls.json.gz" "$T/cur" || fail "export chrome .gz"
gzip -t "$T/calls.json.gz" && zcat "$T/calls.json.gz" | cmp -s - "$T/calls.json" ||
	fail "chrome: -o FILE.json.gz is not the same JSON gzip'd"
ok "chrome: $calls named slices nested as called, $((size / (2 * calls))) bytes a record; .json.gz the same, gzip'd"

# ---- Perfetto: slices on the threads' tracks
if command -v protoc >/dev/null 2>&1; then
	ctl export --format perfetto -o "$T/calls.pftrace" "$T/cur" ||
		fail "export perfetto"
	protoc --decode=traced_test.Trace -I "$SRC/tests/perfetto" \
		"$SRC/tests/perfetto/trace.proto" < "$T/calls.pftrace" > "$T/decoded" ||
		fail "protoc cannot decode it"
	# Times since 1970 in ns are past what awk's doubles hold exactly:
	# the last 15 digits are (they wrap once in 11 days).
	awk -f "$SRC/tests/perfetto/events.awk" "$T/decoded" | awk '
	$1 == "B" || $1 == "E" { $2 = substr($2, length($2) - 14) + 0 }
	$1 == "B" { n[$4]++; s[$4, n[$4]] = $2; nm[$4, n[$4]] = $5 }
	$1 == "E" { sub(/^tid=/, "", $4); k = "tid=" $4
		printf "%s %.0f %.0f %s\n", $4, s[k, n[k]], $2, nm[k, n[k]]; n[k]-- }' |
		nest > "$T/got"
	cmp -s "$T/want" "$T/got" || fail "perfetto: nesting: $(diff "$T/want" "$T/got" | head)"
	ok "perfetto: $calls named slices, begun and ended on their threads' tracks"
fi

# ---- uftrace dump --chrome of the uftrace export nests on its own
if command -v uftrace >/dev/null 2>&1; then
	ctl export --format uftrace -o "$T/uft" "$T/cur" >/dev/null 2>&1 ||
		fail "export uftrace"
	uftrace dump --chrome -d "$T/uft" > "$T/uchrome" 2>/dev/null ||
		fail "uftrace dump --chrome"
	jq -r '.traceEvents[] | select(.ph == "B" or .ph == "E") |
		"\(.tid) \(.ph) \(.ts) \(.name)"' "$T/uchrome" | awk '
	$2 == "B" { n[$1]++; s[$1, n[$1]] = $3; nm[$1, n[$1]] = $4 }
	$2 == "E" { if (nm[$1, n[$1]] != $4) { print "mismatch", $0; exit 1 }
		printf "%s %.0f %.0f ftcalls:%s\n", $1, s[$1, n[$1]] * 1000, $3 * 1000, $4; n[$1]-- }' |
		nest > "$T/got" || fail "uftrace dump --chrome: an E closes another slice"
	cmp -s "$T/want" "$T/got" ||
		fail "uftrace dump --chrome: nesting: $(diff "$T/want" "$T/got" | head)"
	ok "uftrace dump --chrome of the uftrace export: the same calls, nested"
fi
