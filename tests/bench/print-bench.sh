#!/bin/sh
# SPDX-License-Identifier: MIT
# make bench-print: tracectl print against babeltrace2 on the same
# trace of 10 million events (six uint64 arguments each, two threads,
# recorded by a real daemon into rings that hold them all: no loss),
# time and peak RSS, the median of BENCH_PRINT_RUNS runs each; then
# tracectl print on a trace of over 2 GB (copies of that session, as
# more processes of the same run), whose peak RSS must stay under
# 64 MiB.  Prints one table and writes it to $O/bench/print.txt.
#
# Environment: BENCH_PRINT_EVENTS (10000000), BENCH_PRINT_RUNS (3),
# BENCH_QUICK=1 (a smoke run: 1M events, one run, a 256 MB big trace).
# The rings take EVENTS * 64 bytes of memory while the trace is made.
set -eu
: "${O:?}"
BIN="$O/bin"
B="$O/bench"
EVENTS=${BENCH_PRINT_EVENTS:-10000000}
RUNS=${BENCH_PRINT_RUNS:-3}
BIG_BYTES=$((2 * 1024 * 1024 * 1024 + 1))
if [ "${BENCH_QUICK:-0}" = 1 ]; then
	EVENTS=1000000 RUNS=1 BIG_BYTES=$((256 * 1024 * 1024))
fi
RSS_MAX_KB=65536
T=$(mktemp -d "${TMPDIR:-/tmp}/traced-bench-print.XXXXXX")
TD_PID=
RES="$B/print.txt"

cleanup() {
	[ -n "$TD_PID" ] && kill "$TD_PID" 2>/dev/null && wait "$TD_PID" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
say() { printf '%s\n' "$*" >&2; }

[ -x /usr/bin/time ] || { say "bench-print needs /usr/bin/time (apt-get install time)"; exit 1; }
command -v babeltrace2 >/dev/null 2>&1 ||
	{ say "bench-print needs babeltrace2 (apt-get install babeltrace2)"; exit 1; }

# trace DIR EVENTS: record EVENTS events (two threads, each in a ring
# that holds all of its events) into DIR.
trace() {
	per=$(( ($2 + 1) / 2 ))
	ring=4096
	while [ $ring -lt $((per * 64 + 65536)) ]; do ring=$((ring * 2)); done
	export TRACED_RUNTIME_DIR="$T/run"
	"$BIN/traced" --foreground --runtime-dir "$T/run" --trace-dir "$1" \
		--state-dir "$T/state" >"$T/traced.log" 2>&1 &
	TD_PID=$!
	i=0
	while [ ! -S "$T/run/control.sock" ]; do
		i=$((i + 1)); [ $i -lt 200 ] || { say "traced did not start"; exit 1; }
		sleep 0.05
	done
	TRACED_RING_SIZE=$ring "$O/bench/bench-traced" loop 2 "$per" 1 >/dev/null
	"$BIN/tracectl" trace-file flush >/dev/null
	kill "$TD_PID"; wait "$TD_PID" || true; TD_PID=
	rm -rf "$T/run" "$T/state"
}

# measure OUT COMMAND...: "WALL_S CPU_S PEAK_KB" of one run (CPU: user
# plus system, which a machine shared with other work disturbs less
# than the wall clock), output to OUT.
measure() {
	out=$1; shift
	/usr/bin/time -f '%e %U %S %M' -o "$T/time" "$@" > "$out" 2>"$T/err" ||
		{ say "$* failed: $(tail -n 3 "$T/err")"; exit 1; }
	awk '{ printf "%s %.2f %s\n", $1, $2 + $3, $4 }' "$T/time"
}

# median of the lines of a file of numbers
median() { sort -n "$1" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

say "recording $EVENTS events..."
trace "$T/t1" "$EVENTS"
n=$("$BIN/tracectl" print --raw "$T/t1" | wc -l)
lost=$("$BIN/tracectl" print --lost "$T/t1" | wc -l)
size=$(du -sb "$T/t1" | cut -f1)
say "$n events ($lost loss lines), $((size / 1048576)) MiB"
: > "$T/tp.s"; : > "$T/tp.c"; : > "$T/tp.kb"; : > "$T/tpr.s"; : > "$T/tpr.c"
: > "$T/bt.s"; : > "$T/bt.c"; : > "$T/bt.kb"
r=0
while [ $r -lt "$RUNS" ]; do
	set -- $(measure /dev/null "$BIN/tracectl" print "$T/t1")
	echo "$1" >> "$T/tp.s"; echo "$2" >> "$T/tp.c"; echo "$3" >> "$T/tp.kb"
	set -- $(measure /dev/null "$BIN/tracectl" print --raw "$T/t1")
	echo "$1" >> "$T/tpr.s"; echo "$2" >> "$T/tpr.c"
	set -- $(measure /dev/null babeltrace2 "$T/t1")
	echo "$1" >> "$T/bt.s"; echo "$2" >> "$T/bt.c"; echo "$3" >> "$T/bt.kb"
	r=$((r + 1))
	say "run $r of $RUNS done"
done
# Over 2 GB: copies of the session, as more processes of the same run.
s=$(ls -d "$T"/t1/*/ | head -n 1); s=${s%/}
mkdir -p "$T/t2"
k=0 bigsize=0
while [ "$bigsize" -lt "$BIG_BYTES" ]; do
	k=$((k + 1))
	cp -R "$s" "$T/t2/${s##*/}-$k"
	bigsize=$((bigsize + size))
done
bigsize=$(du -sb "$T/t2" | cut -f1)
say "$k sessions, $((bigsize / 1048576)) MiB: printing..."
set -- $(measure /dev/null "$BIN/tracectl" print "$T/t2")
big_s=$1 big_kb=$3
big_n=$((n * k))
rm -rf "$T/t1" "$T/t2"

tp_s=$(median "$T/tp.s"); tpr_s=$(median "$T/tpr.s"); bt_s=$(median "$T/bt.s")
tp_c=$(median "$T/tp.c"); tpr_c=$(median "$T/tpr.c"); bt_c=$(median "$T/bt.c")
tp_kb=$(median "$T/tp.kb"); bt_kb=$(median "$T/bt.kb")
mkdir -p "$B"
{
	printf 'tracectl print vs babeltrace2, %s events, %s MiB of stream files\n' \
		"$n" "$((size / 1048576))"
	printf '(median of %s runs, output to /dev/null, the same trace in the same run)\n\n' "$RUNS"
	printf '%-32s %8s %8s %10s\n' "" "wall s" "CPU s" "peak RSS"
	printf '%-32s %8s %8s %6s MiB\n' "babeltrace2" "$bt_s" "$bt_c" "$((bt_kb / 1024))"
	printf '%-32s %8s %8s %6s MiB\n' "tracectl print (format strings)" "$tp_s" "$tp_c" "$((tp_kb / 1024))"
	printf '%-32s %8s %8s\n' "tracectl print --raw" "$tpr_s" "$tpr_c"
	awk -v b="$bt_s" -v t="$tp_s" -v bc="$bt_c" -v tc="$tp_c" -v rc="$tpr_c" 'BEGIN {
		printf "%-32s %7.1fx %7.1fx\n", "babeltrace2 / tracectl print", b / t, bc / tc
		printf "%-32s %8s %7.1fx\n", "babeltrace2 / print --raw", "", bc / rc }'
	printf '\ntracectl print on %s MiB (%s events, %s sessions): %s s, peak RSS %s MiB (limit 64)\n' \
		"$((bigsize / 1048576))" "$big_n" "$k" "$big_s" "$((big_kb / 1024))"
} | tee "$RES"
[ "$big_kb" -lt "$RSS_MAX_KB" ] || { say "FAIL: peak RSS $big_kb KiB over $RSS_MAX_KB"; exit 1; }
