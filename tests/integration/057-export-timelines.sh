#!/bin/sh
# SPDX-License-Identifier: MIT
# tracectl export --format chrome and --format perfetto, on a real trace
# of two multi-threaded processes with losses, checked against print
# --json of the same trace:
#
#   chrome: one strict JSON document (jq), the rules viewers rely on
#   (integer pid and tid on every event, a process_name and a
#   thread_name for each, ph among M i X, numeric ts, X with a dur),
#   every event an instant at its time (microseconds, the nanoseconds as
#   decimals, from otherData.origin_ns) with the same arguments, every
#   loss an instant named for its cause, every --pair an X of the exact
#   duration;
#
#   perfetto: decoded by protoc against tests/perfetto/trace.proto (our
#   own minimal schema, field numbers from Perfetto's); a track per
#   process and thread with their names, every event an instant on its
#   thread's track with interned name and its arguments as debug
#   annotations at its nanosecond, losses as instants named for the
#   cause, pairs as slices on a lane of their process.
. "$(dirname "$0")/lib.sh"

command -v jq >/dev/null 2>&1 || skip "jq is not installed (apt-get install jq)"
command -v protoc >/dev/null 2>&1 ||
	skip "protoc is not installed (apt-get install protobuf-compiler)"

# A slow daemon (under ASan) must not make the helpers start untraced.
export TRACED_CONNECT_TIMEOUT_MS=10000
start_daemon
"$HELPERS/jobs" -t 3 -n 4 >/dev/null || fail "jobs"
TRACED_RING_SIZE=4K "$HELPERS/jobs" -t 2 -n 2 -b 3000 >/dev/null ||
	fail "jobs with a burst"
ctl trace-file flush >/dev/null || fail "flush"
wait_no_sessions 10 || fail "sessions did not end"
stop_daemon

ctl print --json "$TRACES" > "$T/print.json" || fail "print --json"
nev=$(jq -s '[.[] | select(.type == "event")] | length' "$T/print.json")
[ "$nev" -gt 30 ] || fail "only $nev events"
# One line per event and per loss cause:
#   TS PID TID NAME KEY=VALUE...
# 64-bit values are strings in JSON and decimals in the exports; a NULL
# string is null here and a null pointer in Perfetto.
jq -r '
  def v: if . == null then "0x0"
    elif type == "string" then
      (if test("^-?[0-9]+$") or test("^0x[0-9a-f]+$") then . else tojson end)
    else tostring end;
  if .type == "event" then
    ([.ts, (.pid|tostring), (.tid|tostring), (.event | sub("^[^:]*:"; ""))]
     + [.fields | to_entries[] | "\(.key)=\(.value | v)"]) | join(" ")
  else
    . as $r | (.causes | to_entries[] | select(.value != "0") |
     "\($r.ts) \($r.pid) \($r.tid) lost: \(.key) count=\(.value)")
  end' "$T/print.json" | sort > "$T/want"
grep -q ' lost: ' "$T/want" || fail "no loss in the trace: the test proves less"
# The pairs: start and end times of each job, by process.
jq -r -s '
  [.[] | select(.type == "event" and (.event | test("test_job_(start|done)$")))]
  | group_by([.pid, .fields.job])[]
  | select(length == 2)
  | "\(.[0].pid) \(.[0].ts) \(.[1].ts)"' "$T/print.json" | sort > "$T/want.pairs"
npairs=$(wc -l < "$T/want.pairs")
[ "$npairs" = 16 ] || fail "$npairs jobs with a start and an end, not 16"

# ---- chrome
ctl export --format chrome --pair test_job_start:test_job_done --key job \
	-o "$T/trace.json" "$TRACES" 2>"$T/err" || fail "export chrome: $(cat "$T/err")"
[ ! -s "$T/err" ] || fail "export chrome said: $(cat "$T/err")"
jq -e '.traceEvents | length > 0' "$T/trace.json" >/dev/null ||
	fail "not one JSON document with traceEvents"
jq -e '.traceEvents | all(
	(.pid | type) == "number" and (.pid | floor) == .pid and
	(.tid | type) == "number" and (.tid | floor) == .tid and
	(.ph == "M" or .ph == "i" or .ph == "X") and
	(.ph == "M" or ((.ts | type) == "number" and .ts >= 0)) and
	(.ph != "X" or ((.dur | type) == "number" and .dur >= 0)) and
	(.ph != "i" or .s == "t") and (.name | type) == "string")' \
	"$T/trace.json" >/dev/null || fail "an event breaks the rules"
# Every pid has a process_name, every (pid, tid) used a thread_name.
jq -r '.traceEvents[] | select(.ph != "M") | "\(.pid) \(.tid)"' "$T/trace.json" |
	sort -u > "$T/used"
jq -r '.traceEvents[] | select(.name == "thread_name") | "\(.pid) \(.tid)"' \
	"$T/trace.json" | sort -u > "$T/named"
comm -23 "$T/used" "$T/named" | grep -q . && fail "threads without a name: $(comm -23 "$T/used" "$T/named")"
jq -r '.traceEvents[] | select(.ph != "M") | .pid' "$T/trace.json" | sort -u > "$T/pids"
jq -r '.traceEvents[] | select(.name == "process_name") | .pid' "$T/trace.json" |
	sort -u > "$T/pnamed"
cmp -s "$T/pids" "$T/pnamed" || fail "processes without a name"
origin=$(jq -r '.otherData.origin_ns' "$T/trace.json")
jq -r --arg o "$origin" '
  def v: if . == null then "0x0"
    elif type == "string" then
      (if test("^-?[0-9]+$") or test("^0x[0-9a-f]+$") then . else tojson end)
    else tostring end;
  .traceEvents[] | select(.ph == "i") |
  ([((.ts * 1000) | round | tostring), (.pid|tostring), (.tid|tostring), .name]
   + [.args | to_entries[] | "\(.key)=\(.value | v)"]) | join(" ")' \
	"$T/trace.json" |
	awk -v o="$origin" '{ $1 = sprintf("%d", $1); print }' > "$T/chrome.rel"
# ts are relative to the origin: add it back with the shell's 64 bits.
while read -r rel rest; do
	printf "%s %s\n" "$((origin + rel))" "$rest"
done < "$T/chrome.rel" | sort > "$T/chrome"
cmp -s "$T/want" "$T/chrome" ||
	fail "chrome instants differ from print --json: $(diff "$T/want" "$T/chrome" | head -n 6)"
jq -r '.traceEvents[] | select(.ph == "X") | "\(.pid) \((.ts * 1000) | round) \((.dur * 1000) | round)"' \
	"$T/trace.json" | while read -r pid ts dur; do
		printf "%s %s %s\n" "$pid" "$((origin + ts))" "$((origin + ts + dur))"
	done | sort > "$T/chrome.pairs"
cmp -s "$T/want.pairs" "$T/chrome.pairs" ||
	fail "chrome pairs differ: $(diff "$T/want.pairs" "$T/chrome.pairs" | head -n 6)"
ok "chrome: strict JSON, $nev events and the losses as instants, $npairs pairs as X, all named"

# ---- perfetto
ctl export --format perfetto --pair test_job_start:test_job_done --key job \
	-o "$T/trace.pftrace" "$TRACES" 2>"$T/err" || fail "export perfetto: $(cat "$T/err")"
protoc --decode=traced_test.Trace -I "$SRC/tests/perfetto" \
	"$SRC/tests/perfetto/trace.proto" < "$T/trace.pftrace" > "$T/decoded" 2>"$T/err" ||
	fail "protoc cannot decode it: $(head -c 600 "$T/err")"
grep -q '^    primary_trace_clock: 1$' "$T/decoded" || fail "no REALTIME clock snapshot"
awk -f "$SRC/tests/perfetto/events.awk" "$T/decoded" > "$T/pf"
sed -n 's/^I //p' "$T/pf" | sort > "$T/pf.instants"
cmp -s "$T/want" "$T/pf.instants" ||
	fail "perfetto instants differ from print --json: $(diff "$T/want" "$T/pf.instants" | head -n 6)"
# Tracks: each process and thread once, named.
jq -r '"P \(.pid) \"\(.comm)\""' "$T/print.json" | sort -u > "$T/want.p"
grep '^P ' "$T/pf" | sort > "$T/pf.p"
cmp -s "$T/want.p" "$T/pf.p" || fail "process tracks: $(cat "$T/pf.p")"
jq -r 'if .tid == .pid then "T \(.pid) \(.tid) \"\(.comm)\"" else "T \(.pid) \(.tid) \"\(.comm) \(.tid)\"" end' \
	"$T/print.json" | sort -u > "$T/want.t"
grep '^T ' "$T/pf" | sort > "$T/pf.t"
cmp -s "$T/want.t" "$T/pf.t" || fail "thread tracks: $(diff "$T/want.t" "$T/pf.t" | head)"
# Pairs: each B and its E on one lane, at the start and end.
awk '$1 == "B" { open[$3 " " $4 " " $5] = $2 }
	$1 == "E" { k = $3 " " $4 " " $5; print $3, open[k], $2 }' "$T/pf" |
	sort > "$T/pf.pairs"
cmp -s "$T/want.pairs" "$T/pf.pairs" ||
	fail "perfetto pairs differ: $(diff "$T/want.pairs" "$T/pf.pairs" | head -n 6)"
ok "perfetto: protoc decodes it; tracks, names, $nev events at their ns with their arguments, losses, $npairs slices"

# Filters apply to exports; -o - writes to stdout; errors.
ctl export --format chrome --event test_crc -o - "$TRACES" > "$T/crc.json" ||
	fail "export -o -"
[ "$(jq '[.traceEvents[] | select(.ph == "i" and (.name | startswith("lost: ") | not))] | length' "$T/crc.json")" = 2 ] ||
	fail "--event in export"
set +e
ctl export --format nope -o "$T/x" "$TRACES" 2>"$T/err"; rc=$?
set -e
[ "$rc" = 2 ] && grep -q "unknown format 'nope'" "$T/err" || fail "unknown format: $rc"
set +e
ctl export --format chrome "$TRACES" 2>"$T/err"; rc=$?
set -e
[ "$rc" = 2 ] && grep -q "no output given" "$T/err" || fail "no -o: $rc"
ok "filters apply, -o - is stdout, usage errors are 2"
