#!/bin/sh
# SPDX-License-Identifier: MIT
# make bench, function tracing: traced's graph tracer and uftrace record
# side by side, in one run, on one call-heavy program (recursion plus
# short leaf functions, tests/bench/funcbench.c) built once per tracer:
# plain (the untraced reference), with patchable entries for traced and
# with -pg for uftrace.  Rows, for 1 and 2 threads:
#
#   untraced           the plain build
#   off, never traced  traced's build, no function switched on: the
#                      cost of the unpatched sites
#   off after on       traced's build, its functions switched on for a
#                      round and off again (sites patched, then nops
#                      again) before the timed rounds: must be within 2%
#                      of "never traced"
#   graph, 1M ring     graph tracer on, the default ring: the daemon
#                      cannot keep up, so much is lost (cost includes
#                      the loss path)
#   graph, no-loss     graph tracer on, a ring that holds a round
#   uftrace record     uftrace 0.13 record --no-libcall of the -pg build
#
# ns/call = (median ns per round - the untraced median) / calls per
# round: what one traced call (entry and exit) adds.  The three cheap
# rows (a round is a couple of milliseconds) run OFF_ROUNDS rounds with
# no pause, five times each, interleaved, and keep the lowest median:
# a machine busy with other work only ever slows a run down.  The
# traced rows pause BENCH_FUNC_PAUSE_MS between rounds, for the daemon
# to drain (uftrace too, for its writer).  ratio = traced's
# no-loss ns/call over uftrace's.  Events kept and lost count records
# (an entry or an exit each).
#
# Appends its table to $O/bench/results.txt (when run by run.sh) and
# writes $O/bench/func-results.txt and func-results.json.
# Environment: BENCH_FUNC_DEPTH (18: 1310718 calls per round),
# BENCH_FUNC_ROUNDS (9), BENCH_FUNC_OFF_ROUNDS (400),
# BENCH_FUNC_PAUSE_MS (1000), BENCH_QUICK=1 (a smoke run).
set -eu
: "${O:?}"
BIN="$O/bin"
B="$O/bench"
DEPTH=${BENCH_FUNC_DEPTH:-18}
ROUNDS=${BENCH_FUNC_ROUNDS:-9}
OFF_ROUNDS=${BENCH_FUNC_OFF_ROUNDS:-400}
PAUSE=${BENCH_FUNC_PAUSE_MS:-1000}
if [ "${BENCH_QUICK:-0}" = 1 ]; then
	DEPTH=14 ROUNDS=3 OFF_ROUNDS=30 PAUSE=50
fi
CALLS=$((5 * (1 << DEPTH) - 2))
# A round is CALLS * 2 records of 32 bytes per thread.
BIG=$(( (CALLS * 64 * 3 / 2 + (1 << 20) - 1) / (1 << 20) ))
p=1; while [ $p -lt $BIG ]; do p=$((p * 2)); done; BIG=${p}M
T=$(mktemp -d "${TMPDIR:-/tmp}/traced-fbench.XXXXXX")
RES="$B/func-results.txt"
JSON="$B/func-results.json"
TD_PID=

cleanup() {
	[ -n "$TD_PID" ] && kill "$TD_PID" 2>/dev/null && wait "$TD_PID" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

say() { printf '%s\n' "$*" >&2; }

command -v uftrace >/dev/null 2>&1 || { say "func-run.sh: uftrace is not installed (apt-get install uftrace)"; exit 1; }

td_start() {
	export TRACED_RUNTIME_DIR="$T/td-run"
	rm -rf "$T/td" "$T/td-state"
	"$BIN/traced" --foreground --runtime-dir "$TRACED_RUNTIME_DIR" \
		--trace-dir "$T/td" --state-dir "$T/td-state" 2>>"$T/traced.log" &
	TD_PID=$!
	i=0
	while [ ! -S "$TRACED_RUNTIME_DIR/control.sock" ]; do
		i=$((i + 1)); [ $i -lt 200 ] || { say "traced did not start"; exit 1; }
		sleep 0.05
	done
}

td_stop() { kill "$TD_PID"; wait "$TD_PID" || true; TD_PID=; }

median() { sed -n 's/.*ns_per_round_median \([0-9]*\).*/\1/p'; }

# Events the daemon wrote and lost, from info trace of the ended session.
td_counts() {	# prints "kept lost"
	"$BIN/tracectl" --json info trace > "$T/info.json"
	jq -r '[.items[] | select(.type == "ended_ring")] |
	    "\(map(.events) | add // 0) \(map(.lost) | add // 0)"' \
	    "$T/info.json" 2>/dev/null || echo "? ?"
}

# td_case THREADS RING MODE ROUNDS PAUSE_MS: prints "median kept lost"
#   MODE: never (no rule), graph (functions on), toggle (on, then off)
td_case() {
	threads=$1 ring=$2 mode=$3 rounds=$4
	export FUNCBENCH_PAUSE_MS=$5
	td_start
	case $mode in
	graph|toggle)
		"$BIN/tracectl" trace-func 'tree' on >/dev/null
		"$BIN/tracectl" trace-func 'leaf_*' on >/dev/null ;;
	esac
	rm -f "$T/sync.ready" "$T/sync.go"
	if [ "$mode" = toggle ]; then
		TRACED_RING_SIZE=$ring "$B/funcbench-traced" "$threads" "$DEPTH" \
		    "$rounds" "$T/sync" > "$T/out" &
		pid=$!
		i=0
		while [ ! -e "$T/sync.ready" ]; do
			i=$((i + 1)); [ $i -lt 600 ] || { say "funcbench did not start"; exit 1; }
			sleep 0.1
		done
		"$BIN/tracectl" trace-func 'tree' off >/dev/null
		"$BIN/tracectl" trace-func 'leaf_*' off >/dev/null
		touch "$T/sync.go"
		wait $pid
	else
		# A no-loss ring holds the run from its first record on
		# (TRACED_RING_START: see run.sh).
		TRACED_RING_SIZE=$ring TRACED_RING_START=$ring \
		    "$B/funcbench-traced" "$threads" "$DEPTH" \
		    "$rounds" > "$T/out"
	fi
	"$BIN/tracectl" trace-file flush >/dev/null
	m=$(median < "$T/out")
	counts=$(td_counts)
	td_stop
	echo "$m $counts"
}

# uft_case THREADS: prints "median kept lost"
uft_case() {
	rm -rf "$T/uft"
	(cd "$T" && FUNCBENCH_PAUSE_MS=$PAUSE uftrace record --no-libcall \
	    -d "$T/uft" "$B/funcbench-pg" "$1" "$DEPTH" "$ROUNDS") > "$T/out" \
	    2>"$T/uft.err"
	m=$(median < "$T/out")
	# Records are 16 bytes each in the per-thread files.
	kept=$(cat "$T"/uft/*.dat | wc -c)
	kept=$((kept / 16))
	lost=$(uftrace dump -d "$T/uft" 2>/dev/null | awk '/\[lost/ { n += $NF + 0 } END { print n + 0 }')
	echo "$m $kept $lost"
}

mkdir -p "$B"
{
	echo
	echo "function tracing: traced's graph tracer vs uftrace $(uftrace --version 2>/dev/null | awk 'NR == 1 { print $2 }') record, $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "workload: tree($DEPTH): recursion + 3 leaf functions, $CALLS calls per thread per round, $ROUNDS rounds ($OFF_ROUNDS x 5 untraced and off)"
	echo "ns/call: (median ns per round - untraced median) / calls: what one traced call (entry + exit) adds"
	echo
	printf '%-30s %-3s %14s %10s %12s %12s %7s\n' "case" "thr" \
	    "ns/round med" "ns/call" "kept" "lost" "ratio"
} > "$RES"
echo "[" > "$JSON"
first=1

row() {	# CASE THREADS MEDIAN PERCALL KEPT LOST RATIO
	printf '%-30s %-3s %14s %10s %12s %12s %7s\n' "$1" "$2" "$3" "$4" \
	    "$5" "$6" "$7" >> "$RES"
	[ $first = 1 ] || echo "," >> "$JSON"
	first=0
	printf '{"case":"%s","threads":%s,"ns_per_round_median":%s,"ns_per_call":"%s","kept":"%s","lost":"%s","ratio":"%s"}' \
	    "$1" "$2" "$3" "$4" "$5" "$6" "$7" >> "$JSON"
}

lowest() { if [ -z "$1" ] || [ "$2" -lt "$1" ]; then echo "$2"; else echo "$1"; fi; }
percall() { awk -v a="$1" -v b="$2" -v n="$CALLS" 'BEGIN { printf "%.1f", (a - b) / n }'; }
pct() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%+.1f%%", (a - b) * 100 / b }'; }

say "make bench: function tracing, traced vs uftrace (a few minutes)"
for thr in 1 2; do
	say "  $thr thread(s)"
	plain= never= toggled=
	for rep in 1 2 3 4 5; do
		m=$(cd "$T" && FUNCBENCH_PAUSE_MS=0 "$B/funcbench-plain" $thr \
		    "$DEPTH" "$OFF_ROUNDS" | median)
		plain=$(lowest "$plain" "$m")
		set -- $(td_case $thr 1M never "$OFF_ROUNDS" 0)
		never=$(lowest "$never" "$1")
		set -- $(td_case $thr 1M toggle "$OFF_ROUNDS" 0)
		toggled=$(lowest "$toggled" "$1")
	done
	set -- $(td_case $thr 1M graph "$ROUNDS" "$PAUSE"); g1=$1 g1k=$2 g1l=$3
	set -- $(td_case $thr "$BIG" graph "$ROUNDS" "$PAUSE"); g2=$1 g2k=$2 g2l=$3
	set -- $(uft_case $thr); u=$1 uk=$2 ul=$3
	pc_g2=$(percall "$g2" "$plain")
	pc_u=$(percall "$u" "$plain")
	ratio=$(awk -v a="$pc_g2" -v b="$pc_u" 'BEGIN { if (b > 0) printf "%.3f", a / b; else print "-" }')
	row "untraced (plain build)" $thr "$plain" - - - -
	row "traced build, never traced" $thr "$never" "$(pct "$never" "$plain")" - - -
	row "traced build, off after on" $thr "$toggled" "$(pct "$toggled" "$never")" - - -
	row "traced graph, 1M ring" $thr "$g1" "$(percall "$g1" "$plain")" "$g1k" "$g1l" -
	row "traced graph, ring $BIG" $thr "$g2" "$pc_g2" "$g2k" "$g2l" "$ratio"
	row "uftrace record -pg" $thr "$u" "$pc_u" "$uk" "$ul" -
done
{
	echo
	echo "'never traced': vs untraced; 'off after on': vs never traced (sites nops again);"
	echo "ratio: traced no-loss ns/call over uftrace's; kept/lost: records (entry or exit)"
} >> "$RES"
echo "]" >> "$JSON"
cat "$RES"
