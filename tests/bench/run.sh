#!/bin/sh
# SPDX-License-Identifier: MIT
# make bench: traced and LTTng-UST side by side, in one run, on the same
# workload (an event of six uint64_t, see bench.c).  Prints one table
# and writes it to $O/bench/results.txt and results.json.
#
# Rows: enabled and disabled events, 1 and 2 producer threads, in a
# tight loop (rings overflow: the cost includes the loss path, and the
# table says how much was kept) at the default ring size, and again with
# a ring that holds a whole round (no loss: the pure fast path).  Then
# the highest steady rate (2 paced threads) each tracer sustains for
# BENCH_RATE_SECONDS with zero loss at the default ring size.
#
# Environment: BENCH_EVENTS (per thread per round, default 2000000),
# BENCH_ROUNDS (7), BENCH_RATE_SECONDS (10), BENCH_QUICK=1 (a smoke run).
set -eu
: "${O:?}"
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BIN="$O/bin"
B="$O/bench"
EVENTS=${BENCH_EVENTS:-2000000}
ROUNDS=${BENCH_ROUNDS:-7}
RATE_SECONDS=${BENCH_RATE_SECONDS:-10}
if [ "${BENCH_QUICK:-0}" = 1 ]; then
	EVENTS=200000 ROUNDS=3 RATE_SECONDS=1
fi
RING=1M			# traced's default ring per thread
RING_BYTES=1048576
BIG=256M		# holds a whole round: 2M events x 64 bytes
T=$(mktemp -d "${TMPDIR:-/tmp}/traced-bench.XXXXXX")
RES="$B/results.txt"
JSON="$B/results.json"
TD_PID= LT_PID=
HZ=$(getconf CLK_TCK)

cleanup() {
	[ -n "$TD_PID" ] && kill "$TD_PID" 2>/dev/null && wait "$TD_PID" 2>/dev/null
	if [ -n "$LT_PID" ]; then
		lttng destroy -a >/dev/null 2>&1 || true
		kill "$LT_PID" 2>/dev/null; wait "$LT_PID" 2>/dev/null
	fi
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

say() { printf '%s\n' "$*" >&2; }

# CPU time (ms) of processes, by pid.
cpu_ms() {
	t=0
	for p in "$@"; do
		for task in /proc/"$p"/task/*; do
			s=$(sed 's/^.*) //' "$task/stat" 2>/dev/null) || continue
			# utime and stime are fields 14 and 15 of stat, 12 and
			# 13 after the command name is cut.
			set -- $s
			t=$((t + ${12} + ${13}))
		done
	done
	echo $((t * 1000 / HZ))
}

counter_events() {	# DIR: event messages babeltrace2 reads
	babeltrace2 -c sink.utils.counter "$1" 2>/dev/null |
		awk '/Event messages/ { n = $1 } END { print n + 0 }'	# the last block is the total
}

# ---- traced -------------------------------------------------------------

td_start() {
	export TRACED_RUNTIME_DIR="$T/td-run"
	rm -rf "$T/td"
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

# td_run ON THREADS RING MODE ARGS...: prints
#   "median p10 p90 emitted intrace lost cpu_ms"  (loop mode)
td_run() {
	on=$1 threads=$2 ring=$3; shift 3
	td_start
	"$BIN/tracectl" trace-event bench_ev "$on" >/dev/null
	c0=$(cpu_ms "$TD_PID")
	out=$(TRACED_RING_SIZE=$ring "$B/bench-traced" "$@")
	"$BIN/tracectl" trace-file flush >/dev/null
	c1=$(cpu_ms "$TD_PID")
	"$BIN/tracectl" --json info trace > "$T/info.json"
	td_stop
	lost=$(grep -o '"type":"ended_ring"[^}]*"lost":[0-9]*' "$T/info.json" |
		sed 's/.*"lost"://' | awk '{ n += $1 } END { print n + 0 }')
	recs=$(grep -o '"lost_records":[0-9]*' "$T/info.json" |
		sed 's/.*://' | awk '{ n += $1 } END { print n + 0 }')
	ev=$(counter_events "$T/td")
	echo "$out $((ev - recs)) $lost $((c1 - c0))"
}

# ---- LTTng-UST ------------------------------------------------------------

lt_start() {
	export LTTNG_HOME="$T/lttng-home"
	mkdir -p "$LTTNG_HOME"
	lttng-sessiond --no-kernel >"$T/sessiond.log" 2>&1 &
	LT_PID=$!
	i=0
	until lttng list >/dev/null 2>&1; do
		i=$((i + 1)); [ $i -lt 200 ] || { say "lttng-sessiond did not start"; exit 1; }
		sleep 0.05
	done
}

lt_stop() {
	kill "$LT_PID" 2>/dev/null; wait "$LT_PID" 2>/dev/null || true; LT_PID=
}

lt_pids() { echo "$LT_PID" $(pgrep -f lttng-consumerd || true); }

# lt_run ON THREADS SUBBUF NSUBBUF MODE ARGS...: same output as td_run.
# Per-CPU buffers of SUBBUF x NSUBBUF bytes (LTTng's default layout).
lt_run() {
	on=$1 threads=$2 subbuf=$3 nsub=$4; shift 4
	rm -rf "$T/lt"
	lttng create bench --output="$T/lt" >/dev/null
	lttng enable-channel -u -s bench --subbuf-size="$subbuf" \
		--num-subbuf="$nsub" ch >/dev/null
	if [ "$on" = on ]; then
		lttng enable-event -u -s bench -c ch 'bench:ev' >/dev/null
	else
		lttng enable-event -u -s bench -c ch 'other:ev' >/dev/null
	fi
	lttng start bench >/dev/null
	c0=$(cpu_ms $(lt_pids))
	out=$(LTTNG_UST_REGISTER_TIMEOUT=-1 "$B/bench-lttng" "$@")
	lttng stop bench >/dev/null
	c1=$(cpu_ms $(lt_pids))
	# LTTng's own count; seen reporting more than 2^63 (a counter
	# gone below zero) with 2 threads: a count above what was emitted
	# is unknown (null in the JSON, '?' in the table), not a number.
	lost=$(lttng list bench -c ch 2>/dev/null |
		sed -n 's/.*[Dd]iscarded events: *\([0-9]*\).*/\1/p' |
		awk '{ n += $1 } END { if (n > 1e15) print "null";
			else printf "%d\n", n }')
	lttng destroy bench >/dev/null
	ev=$(counter_events "$T/lt")
	echo "$out $ev $lost $((c1 - c0))"
}

# ---- the table -------------------------------------------------------------

mkdir -p "$B"
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
ncpu=$(nproc)
clock=monotonic
grep -qw nonstop_tsc /proc/cpuinfo && grep -qw constant_tsc /proc/cpuinfo &&
	clock="tsc (invariant)"
{
	echo "traced vs LTTng-UST $(pkg-config --modversion lttng-ust), $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "machine: $cpu, $ncpu CPUs, $(uname -r); traced clock: $clock"
	echo "workload: one event of six uint64_t; $EVENTS events per thread per round, $ROUNDS rounds;"
	echo "ns/event over all rounds and threads: median (p10-p90); ratio = traced/LTTng median"
	echo "daemon CPU: ms of CPU time of traced, or of lttng-sessiond + consumerd, per million events kept"
	echo
	printf '%-34s %-7s %22s %10s %10s %10s %9s %7s\n' "case" "tracer" \
		"ns/event med (p10-p90)" "emitted" "in trace" "lost" "cpu ms/M" "ratio"
} > "$RES"
echo "[" > "$JSON"
first=1

row() {	# CASE TRACER LINE [RATIO]
	set -- "$1" "$2" $3 "${4:-}"
	case_=$1 tracer=$2 med=$4 p10=$5 p90=$6 emitted=${10} intrace=${11} lost=${12} cpu=${13} ratio=${14:-}
	perm=-
	[ "$intrace" -gt 0 ] && perm=$(awk -v c="$cpu" -v n="$intrace" 'BEGIN { printf "%.1f", c * 1e6 / n }')
	lost_txt=$lost
	[ "$lost" != null ] || lost_txt='?'
	printf '%-34s %-7s %8s (%5s-%6s) %10s %10s %10s %9s %7s\n' "$case_" \
		"$tracer" "$med" "$p10" "$p90" "$emitted" "$intrace" \
		"$lost_txt" "$perm" "$ratio" >> "$RES"
	[ $first = 1 ] || echo "," >> "$JSON"
	first=0
	printf '{"case":"%s","tracer":"%s","ns_median":%s,"ns_p10":%s,"ns_p90":%s,"emitted":%s,"in_trace":%s,"lost":%s,"daemon_cpu_ms":%s,"ratio":"%s"}' \
		"$case_" "$tracer" "$med" "$p10" "$p90" "$emitted" "$intrace" \
		"$lost" "$cpu" "$ratio" >> "$JSON"
}

pair() {	# CASE ON THREADS TD_RING LT_SUBBUF LT_NSUB
	say "  $1"
	a=$(td_run "$2" "$3" "$4" loop "$3" "$EVENTS" "$ROUNDS")
	b=$(lt_run "$2" "$3" "$5" "$6" loop "$3" "$EVENTS" "$ROUNDS")
	r=$(echo "$a $b" | awk '{ printf "%.3f", $2 / $13 }')
	row "$1" traced "$a" "$r"
	row "$1" lttng "$b"
}

say "make bench: traced vs LTTng-UST (this takes a few minutes)"
lt_start
# Same memory per producer thread: traced 1 MiB per thread; LTTng per-CPU
# 4 x 256 KiB (1 MiB per CPU, one CPU per producer thread here).
pair "enabled, 1 thread, 1M ring"        on  1 $RING 256K 4
pair "enabled, 2 threads, 1M ring"       on  2 $RING 256K 4
pair "disabled, 1 thread"                off 1 $RING 256K 4
pair "disabled, 2 threads"               off 2 $RING 256K 4
pair "enabled, 1 thread, no-loss ring"   on  1 $BIG 64M 4
pair "enabled, 2 threads, no-loss ring"  on  2 $BIG 64M 4

# ---- zero-loss rate ---------------------------------------------------------

# rate_ok TRACER RATE: 0 if RATE events/s for RATE_SECONDS lose nothing
# and the producers kept the pace.
rate_ok() {
	rate=$2
	if [ "$1" = traced ]; then
		line=$(td_run on 2 $RING rate 2 "$2" "$RATE_SECONDS")
	else
		line=$(lt_run on 2 256K 4 rate 2 "$2" "$RATE_SECONDS")
	fi
	set -- $line
	# emitted N behind B intrace lost cpu
	say "    $rate ev/s: emitted $2 behind $4 kept $5 lost $6"
	# Lost nothing, kept everything, and kept the pace (5% of the
	# 1 ms batches may start late: sleeping is not exact here).
	[ "$6" = 0 ] && [ "$5" = "$2" ] && [ "$4" -lt $((RATE_SECONDS * 2 * 50)) ]
}

best_rate() {	# TRACER: highest rate (events/s, 2 threads) with zero loss
	lo=0 hi=
	r=1000000
	while [ $r -le 128000000 ]; do
		if rate_ok "$1" $r; then lo=$r; r=$((r * 2)); else hi=$r; break; fi
	done
	[ -n "$hi" ] || { echo $lo; return; }
	for i in 1 2 3; do
		mid=$(( (lo + hi) / 2 ))
		if rate_ok "$1" $mid; then lo=$mid; else hi=$mid; fi
	done
	echo $lo
}

say "  zero-loss rate, 2 paced threads, $RATE_SECONDS s per try: traced"
rt=$(best_rate traced)
say "  zero-loss rate: LTTng-UST"
rl=$(best_rate lttng)
lt_stop
ratio=$(awk -v a="$rt" -v b="$rl" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "inf" }')
{
	echo
	echo "highest steady rate with zero loss for ${RATE_SECONDS} s, 2 paced threads, 1 MiB per producer thread:"
	printf '  traced %12s events/s\n  lttng  %12s events/s\n  ratio traced/LTTng %s\n' "$rt" "$rl" "$ratio"
} >> "$RES"
printf ',\n{"case":"zero-loss rate, 2 threads","traced_events_per_s":%s,"lttng_events_per_s":%s,"ratio":"%s"}\n]\n' \
	"$rt" "$rl" "$ratio" >> "$JSON"
cat "$RES"
echo
echo "results: $RES and $JSON"
