#!/bin/sh
# SPDX-License-Identifier: MIT
# make bench: traced and LTTng-UST side by side, in one run, on the same
# workload (an event of six uint64_t, see bench.c).  Prints one table
# and writes it to $O/bench/results.txt and results.json.
#
# Rows: enabled and disabled events, 1 and 2 producer threads, in a
# tight loop (rings overflow: the cost includes the loss path, and the
# table says how much was kept) with 1 MiB per thread, and again with
# a ring that holds a whole round (no loss: the pure fast path; traced's
# starts at that size, TRACED_RING_START).  Then:
#   - the trace directory's file system: how fast its page cache and
#     its disk take writes (dd, 1 MiB blocks), the physical limit;
#   - 2,000 threads of 11 events each: time and peak memory, traced and
#     untraced (TRACED=0);
#   - the first lap: one thread's rounds through a fresh 256 MiB
#     buffer, the first against later ones, with what each run lost
#     (traced three times: a ring from the daemon's pool, made before
#     the program started; a ring the thread makes 256 MiB at its first
#     event, which loses nothing; and one that grows into it, which
#     does);
#   - the daemons' CPU per event at fixed paced rates (2 and 8 million
#     events a second), traced with its defaults;
#   - a busy machine: what is lost at 1 million events a second while
#     two busy loops at nice 0 hold the CPUs;
#   - the highest steady rate (2 paced threads) each tracer sustains for
#     BENCH_RATE_SECONDS with zero loss, searched up to the page cache's
#     speed;
#   - the flight recorder (traced --recorder 256M): the trace call's
#     cost and the daemon's CPU per event kept in the window, beside
#     the rows that write, and the time a snapshot of a full 256 MiB
#     window takes, beside LTTng's snapshot of as much.
#
# Environment: BENCH_EVENTS (per thread per round, default 2000000),
# BENCH_ROUNDS (7), BENCH_RATE_SECONDS (10), BENCH_THREAD_ROUNDS (5),
# BENCH_LIMIT_MB (2048, written to measure the file system),
# BENCH_QUICK=1 (a smoke run).
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
TD_OPTS=		# traced's options for td_run: --recorder for its rows
HZ=$(getconf CLK_TCK)

BUSY=
cleanup() {
	# shellcheck disable=SC2086
	[ -n "$BUSY" ] && kill $BUSY 2>/dev/null
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

td_start() {	# [traced options]
	export TRACED_RUNTIME_DIR="$T/td-run"
	rm -rf "$T/td"
	# Where this daemon's lines start in the log (td_why_lost).
	td_log0=$(cat "$T/traced.log" 2>/dev/null | wc -l)
	"$BIN/traced" --foreground --runtime-dir "$TRACED_RUNTIME_DIR" \
		--trace-dir "$T/td" --state-dir "$T/td-state" "$@" \
		2>>"$T/traced.log" &
	TD_PID=$!
	i=0
	while [ ! -S "$TRACED_RUNTIME_DIR/control.sock" ]; do
		i=$((i + 1)); [ $i -lt 200 ] || { say "traced did not start"; exit 1; }
		sleep 0.05
	done
}

td_stop() { kill "$TD_PID"; wait "$TD_PID" || true; TD_PID=; }

# The last daemon's loss warnings (they name the cause it saw), to the
# log beside the row: a row that lost events says why.
td_why_lost() {
	tail -n +"$((td_log0 + 1))" "$T/traced.log" | grep ' lost [0-9]* events' |
		cut -c 1-400 | sed 's/^/      traced: /' >&2 || true
}

# td_run ON THREADS RING MODE ARGS...: prints
#   "median p10 p90 emitted intrace lost cpu_ms"  (loop mode)
td_run() {
	on=$1 threads=$2 ring=$3; shift 3
	# shellcheck disable=SC2086
	td_start $TD_OPTS
	"$BIN/tracectl" trace-event bench_ev "$on" >/dev/null
	c0=$(cpu_ms "$TD_PID")
	# The ring starts at its size too: a no-loss row's ring holds a
	# whole round from the first event (growing into it loses the
	# first lap's overflow when the producers hold both CPUs).
	out=$(TRACED_RING_SIZE=$ring TRACED_RING_START=$ring "$B/bench-traced" "$@")
	"$BIN/tracectl" trace-file flush >/dev/null
	c1=$(cpu_ms "$TD_PID")
	"$BIN/tracectl" --json info trace > "$T/info.json"
	td_stop
	lost=$(grep -o '"type":"ended_ring"[^}]*"lost":[0-9]*' "$T/info.json" |
		sed 's/.*"lost"://' | awk '{ n += $1 } END { print n + 0 }')
	[ "$lost" -gt 0 ] && td_why_lost
	recs=$(grep -o '"lost_records":[0-9]*' "$T/info.json" |
		sed 's/.*://' | awk '{ n += $1 } END { print n + 0 }')
	case $TD_OPTS in
	*--recorder*)
		# Kept in memory, not written: what the windows took in.
		recs=0
		ev=$(grep -o '"type":"window"[^}]*"events":[0-9]*' "$T/info.json" |
			sed 's/.*"events"://' | awk '{ n += $1 } END { print n + 0 }') ;;
	*)	ev=$(counter_events "$T/td") ;;
	esac
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
	# is unknown (null in the JSON, '?' in the table), not a number;
	# so is no count at all (lttng list failed).
	lost=$(lttng list bench -c ch 2>/dev/null |
		sed -n 's/.*[Dd]iscarded events: *\([0-9]*\).*/\1/p' |
		awk '{ n += $1; seen = 1 }
			END { if (!seen || n > 1e15) print "null";
			else printf "%d\n", n }')
	lttng destroy bench >/dev/null
	ev=$(counter_events "$T/lt")
	echo "$out $ev $lost $((c1 - c0))"
}

# lost_col EMITTED KEPT LOST: LOST for the table; LTTng's count when
# it is unknown (null) is '?', with what is missing from the trace.
lost_col() {
	if [ "$3" = null ]; then
		echo "? ($(($1 - $2)) missing)"
	else
		echo "$3"
	fi
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
	echo "$a" > "$T/pair.$2.$3.$4"
}

# rec_row CASE THREADS TD_RING: the same loop, the daemon recording
# (--recorder 256M); ratio: against the row that writes (pair above).
rec_row() {
	say "  $1, recorder"
	c=$(TD_OPTS="--recorder 256M" td_run on "$2" "$3" loop "$2" "$EVENTS" "$ROUNDS")
	r=$(echo "$c $(cat "$T/pair.on.$2.$3")" | awk '{ printf "%.3f", $2 / $13 }')
	row "$1, recorder" rec "$c" "$r"
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
rec_row "enabled, 1 thread, 1M ring"      1 $RING
rec_row "enabled, 2 threads, 1M ring"     2 $RING
rec_row "enabled, 1 thread, no-loss ring" 1 $BIG
rec_row "enabled, 2 threads, no-loss ring" 2 $BIG

# ---- the physical limit: the trace directory's file system --------------------

# dd_mbs ARGS...: MB/s that dd reports writing LIMIT_MB MiB of zeros.
dd_mbs() {
	dd if=/dev/zero of="$T/limit.bin" bs=1M count="$LIMIT_MB" "$@" 2>&1 |
		awk '/copied/ { v = $(NF - 1); u = $NF
			if (u ~ /^GB/) v *= 1000; else if (u ~ /^kB/) v /= 1000
			printf "%d\n", v }'
	rm -f "$T/limit.bin"
}

say "  the page cache's and the disk's write speed under $T"
LIMIT_MB=${BENCH_LIMIT_MB:-2048}
[ "${BENCH_QUICK:-0}" = 1 ] && LIMIT_MB=256
pc_mbs=$(dd_mbs)
disk_mbs=$(dd_mbs conv=fdatasync)
# traced writes busy streams with O_DIRECT (traced(8)): the disk's own
# speed, without the page cache, is a limit too.
direct_mbs=$(dd_mbs oflag=direct)
# 64-byte events a second each can take; the search stops at the faster
# of the two ways a tracer can write.
pc_ev=$((pc_mbs * 1000000 / 64))
disk_ev=$((disk_mbs * 1000000 / 64))
direct_ev=$((${direct_mbs:-0} * 1000000 / 64))
lim_ev=$pc_ev lim_what="the page cache's"
if [ "$direct_ev" -gt "$pc_ev" ]; then
	lim_ev=$direct_ev lim_what="O_DIRECT's"
fi
{
	echo
	echo "trace directory's file system ($(df -T "$T" | awk 'NR == 2 { print $2 " on " $1 }')): page cache $pc_mbs MB/s ($pc_ev events/s of 64 bytes), disk $disk_mbs MB/s ($disk_ev events/s) with fdatasync, O_DIRECT ${direct_mbs:-none} MB/s ($direct_ev events/s) (dd, 1 MiB blocks, one writer)"
} >> "$RES"

# ---- many short threads --------------------------------------------------------

# threads_median FILE: "seconds peak_kb" of the runs in FILE (lines
# of bench threads), the median time and the largest peak.
threads_median() {
	sort -n -k 4 "$1" | awk '
		{ t[NR] = $4; if ($6 > p) p = $6 }
		END { printf "%s %d\n", t[int((NR + 1) / 2)], p }'
}

# 2,000 threads of 11 events each, THR_ROUNDS runs each way, untraced
# and traced taking turns (the host's mood changes over seconds here).
THR_ROUNDS=${BENCH_THREAD_ROUNDS:-11}
say "  2,000 threads of 11 events"
td_start
"$BIN/tracectl" trace-event bench_ev on >/dev/null
: > "$T/thr.u"
: > "$T/thr.t"
k=0
while [ $k -lt "$THR_ROUNDS" ]; do
	k=$((k + 1))
	TRACED=0 "$B/bench-traced" threads 2000 11 >> "$T/thr.u"
	"$B/bench-traced" threads 2000 11 >> "$T/thr.t"
done
thr_u=$(threads_median "$T/thr.u")
thr_t=$(threads_median "$T/thr.t")
"$BIN/tracectl" trace-file flush >/dev/null
td_hwm=$(sed -n 's/^VmHWM:[^0-9]*\([0-9]*\).*/\1/p' "/proc/$TD_PID/status")
td_stop
set -- $thr_u $thr_t
{
	echo
	echo "2,000 threads of 11 events each (median of $THR_ROUNDS runs each way, taking turns; peak: the program's largest VmHWM):"
	printf '  untraced (TRACED=0)  %8.3f s  peak %7d KiB\n' "$1" "$2"
	printf '  traced               %8.3f s  peak %7d KiB  (daemon peak %d KiB)\n' "$3" "$4" "$td_hwm"
	awk -v u="$1" -v t="$3" 'BEGIN { printf "  ratio traced/untraced time %.2f\n", t / u }'
} >> "$RES"

# ---- first lap -----------------------------------------------------------------

# lap_line pool|traced|grows|lttng: "lap r0 r1 ... r5 LOST" of 2M-event
# rounds through a fresh 256 MiB buffer, and the events lost in the run.
#   pool: the ring from the daemon's pool (traced --ring-pool 1), its
#     memory made before the program started, as LTTng's consumer makes
#     its buffers when a program registers;
#   traced: a ring made 256 MiB at the first event (TRACED_RING_START,
#     as in the no-loss rows): nothing is lost, so every round pays
#     for all its events;
#   grows: TRACED_RING_SIZE alone: the ring starts at 1 MiB and grows,
#     and the first burst's overflow is lost, which makes the first
#     round look cheaper than it is (a dropped event costs less than a
#     kept one): printed to show that, not to be compared;
#   lttng: 4 x 64 MiB per CPU.
lap_line() {
	case $1 in
	pool|traced|grows)
		if [ "$1" = pool ]; then
			td_start --ring-size "$BIG" --ring-pool 1
		else
			td_start
		fi
		"$BIN/tracectl" trace-event bench_ev on >/dev/null
		case $1 in
		pool)
			# Made before the program starts: wait until it is.
			i=0
			until "$BIN/tracectl" info trace |
			    grep -q "ring pool: 1 of 1"; do
				i=$((i + 1))
				[ $i -lt 600 ] || { say "no pool ring"; break; }
				sleep 0.1
			done
			out=$(TRACED_RING_SIZE=$BIG "$B/bench-traced" lap \
				"$EVENTS" 6) ;;
		traced)
			out=$(TRACED_RING_SIZE=$BIG TRACED_RING_START=$BIG \
				"$B/bench-traced" lap "$EVENTS" 6) ;;
		grows)
			out=$(TRACED_RING_SIZE=$BIG "$B/bench-traced" lap \
				"$EVENTS" 6) ;;
		esac
		"$BIN/tracectl" trace-file flush >/dev/null
		"$BIN/tracectl" --json info trace > "$T/info.json"
		td_stop
		lost=$(grep -o '"type":"ended_ring"[^}]*"lost":[0-9]*' \
			"$T/info.json" | sed 's/.*"lost"://' |
			awk '{ n += $1 } END { print n + 0 }')
		if [ "$1" = pool ] && ! grep -q \
		    '"type":"ring_pool",[^}]*"given":1,' "$T/info.json"; then
			say "first lap, pool: the program took no pool ring"
			echo no > "$T/pool-taken"
		fi
		;;
	lttng)
		rm -rf "$T/lt"
		lttng create bench --output="$T/lt" >/dev/null
		lttng enable-channel -u -s bench --subbuf-size=64M \
			--num-subbuf=4 ch >/dev/null
		lttng enable-event -u -s bench -c ch 'bench:ev' >/dev/null
		lttng start bench >/dev/null
		out=$(LTTNG_UST_REGISTER_TIMEOUT=-1 "$B/bench-lttng" lap \
			"$EVENTS" 6)
		lttng stop bench >/dev/null
		lost=$(lttng list bench -c ch 2>/dev/null |
			sed -n 's/.*[Dd]iscarded events: *\([0-9]*\).*/\1/p' |
			awk '{ n += $1; seen = 1 }
				END { if (!seen || n > 1e15) print "?";
				else printf "%d\n", n }')
		lttng destroy bench >/dev/null
		;;
	esac
	echo "$out $lost"
}

say "  first lap, 256 MiB buffers"
echo yes > "$T/pool-taken"
lap_p=$(lap_line pool)
lap_t=$(lap_line traced)
lap_g=$(lap_line grows)
lap_l=$(lap_line lttng)
{
	echo
	shm_thp=$(sed -n 's/.*\[\(.*\)\].*/\1/p' /sys/kernel/mm/transparent_hugepage/shmem_enabled 2>/dev/null || true)
	echo "first lap: one thread, rounds of $EVENTS events (ns/event each), 256 MiB buffers; first = round 1, later = median of rounds 4-6; lost = in the whole run (shared-memory huge pages: ${shm_thp:-unknown}):"
	for l in "pool $lap_p" "traced $lap_t" "grows $lap_g" "lttng $lap_l"; do
		echo "$l" | awk '{ c = $6 + 0; d = $7 + 0; e = $8 + 0
			# median of rounds 4-6
			if ((c <= d && d <= e) || (e <= d && d <= c)) m = d
			else if ((d <= c && c <= e) || (e <= c && c <= d)) m = c
			else m = e
			printf "  %-7s rounds %s %s %s %s %s %s  first %s later %.2f ratio %.2f  lost %s\n",
			    $1, $3, $4, $5, $6, $7, $8, $3, m, $3 / m, $9 }'
	done
	[ "$(cat "$T/pool-taken")" = yes ] ||
		echo "  (pool: THE PROGRAM TOOK NO POOL RING; that row measured a ring it made itself)"
	echo "  (pool: the ring comes from the daemon's pool, traced --ring-size 256M --ring-pool 1, its memory made before the program started, as LTTng's consumer makes its buffers at registration; traced: the thread makes its own ring, 256 MiB from the first event, TRACED_RING_START, losing nothing; grows: TRACED_RING_SIZE alone, a ring that starts at 1 MiB and loses the first burst's overflow, which flatters its first round)"
} >> "$RES"
printf ',\n{"case":"first lap","pool_rounds":[%s],"pool_lost":%s,"pool_taken":%s,"traced_rounds":[%s],"traced_lost":%s,"grows_rounds":[%s],"grows_lost":%s,"lttng_rounds":[%s],"lttng_lost":%s}' \
	"$(echo "$lap_p" | awk '{ printf "%s,%s,%s,%s,%s,%s", $2, $3, $4, $5, $6, $7 }')" \
	"$(echo "$lap_p" | awk '{ print $8 }')" \
	"$([ "$(cat "$T/pool-taken")" = yes ] && echo true || echo false)" \
	"$(echo "$lap_t" | awk '{ printf "%s,%s,%s,%s,%s,%s", $2, $3, $4, $5, $6, $7 }')" \
	"$(echo "$lap_t" | awk '{ print $8 }')" \
	"$(echo "$lap_g" | awk '{ printf "%s,%s,%s,%s,%s,%s", $2, $3, $4, $5, $6, $7 }')" \
	"$(echo "$lap_g" | awk '{ print $8 }')" \
	"$(echo "$lap_l" | awk '{ printf "%s,%s,%s,%s,%s,%s", $2, $3, $4, $5, $6, $7 }')" \
	"$(echo "$lap_l" | awk '{ l = $8; if (l == "?") l = "null"; print l }')" >> "$JSON"

# ---- daemon CPU at a fixed rate ------------------------------------------------

fixed_rate() {	# RATE: one row per tracer, defaults (traced) / 1 MiB per CPU (LTTng)
	say "  $1 events/s, 2 paced threads, $RATE_SECONDS s"
	a=$(td_run on 2 "" rate 2 "$1" "$RATE_SECONDS")
	c=$(TD_OPTS="--recorder 256M" td_run on 2 "" rate 2 "$1" "$RATE_SECONDS")
	b=$(lt_run on 2 256K 4 rate 2 "$1" "$RATE_SECONDS")
	for t in "traced $a" "rec $c" "lttng $b"; do
		set -- $t
		# tracer emitted N behind B intrace lost cpu
		cpu_ns=$(awk -v c="$8" -v n="$6" 'BEGIN { if (n > 0) printf "%.1f", c * 1e6 / n; else print "-" }')
		printf '  %-7s %10s emitted %10s in trace %10s lost %6s late batches; daemon CPU %s ns/event\n' \
		    "$1" "$3" "$6" "$(lost_col "$3" "$6" "$7")" "$5" "$cpu_ns" >> "$RES"
		echo "$1 $cpu_ns" >> "$T/fixed.$rate_id"
	done
	awk '{ v[$1] = $2 } END { if (v["lttng"] > 0)
		printf "  ratio traced/LTTng daemon CPU per event %.2f, recorder/LTTng %.2f, recorder/traced %.2f\n",
		    v["traced"] / v["lttng"], v["rec"] / v["lttng"], v["rec"] / v["traced"] }' \
		"$T/fixed.$rate_id" >> "$RES"
}

{
	echo
	echo "fixed paced rates, 2 threads, $RATE_SECONDS s: traced with its defaults (rings from 1 MiB, growing up to 16 MiB), rec: the same recording (--recorder 256M: in trace = taken into the window), LTTng with 4 x 256 KiB per CPU"
} >> "$RES"
rate_id=2M; echo "2,000,000 events/s:" >> "$RES"; fixed_rate 2000000
rate_id=8M; echo "8,000,000 events/s:" >> "$RES"; fixed_rate 8000000

# ---- a busy machine ----------------------------------------------------------

# Two busy loops at nice 0, one per CPU of a 2-CPU machine, hold the
# CPUs while a program emits 1,000,000 events/s (2 paced threads) for
# RATE_SECONDS; each tracer with its defaults (traced) or 4 x 256 KiB
# per CPU (LTTng).  What counts is what is lost.
busy_start() {
	BUSY=
	for i in 1 2; do
		sh -c 'while :; do :; done' &
		BUSY="$BUSY $!"
	done
}
busy_stop() {
	# shellcheck disable=SC2086
	kill $BUSY 2>/dev/null
	for p in $BUSY; do wait "$p" 2>/dev/null || true; done
	BUSY=
}
say "  busy machine: 1,000,000 events/s next to two busy loops, $RATE_SECONDS s"
busy_start
b_t=$(td_run on 2 "" rate 2 1000000 "$RATE_SECONDS")
b_l=$(lt_run on 2 256K 4 rate 2 1000000 "$RATE_SECONDS")
busy_stop
{
	echo
	echo "busy machine: two busy loops at nice 0 beside a program at 1,000,000 events/s (2 paced threads), $RATE_SECONDS s; traced defaults, LTTng 4 x 256 KiB per CPU:"
	for t in "traced $b_t" "lttng $b_l"; do
		set -- $t
		# tracer emitted N behind B intrace lost cpu
		printf '  %-7s %10s emitted %10s in trace %10s lost\n' \
		    "$1" "$3" "$6" "$(lost_col "$3" "$6" "$7")"
	done
} >> "$RES"
printf ',\n{"case":"busy machine, 1M events/s","traced_emitted":%s,"traced_lost":%s,"lttng_emitted":%s,"lttng_lost":%s}' \
	"$(echo "$b_t" | cut -d' ' -f2)" "$(echo "$b_t" | cut -d' ' -f6)" \
	"$(echo "$b_l" | cut -d' ' -f2)" "$(echo "$b_l" | cut -d' ' -f6)" >> "$JSON"

# ---- the flight recorder's snapshot ------------------------------------------

# snap_runs traced|lttng: "ms bytes" lines, one per snapshot of a full
# window, 3 of them, then "lost N": 2 paced threads write 4 million
# 64-byte events a second for SNAP_SECONDS (the window is full after
# about 1 s) while the snapshots are taken, from the second second on,
# one after the other, into the page cache; N is what the program lost
# meanwhile.  traced --recorder 256M; LTTng a snapshot session whose
# channel keeps 4 x 64 MiB per CPU in overwrite mode.
SNAP_SECONDS=8
snap_runs() {
	case $1 in
	traced)
		td_start --recorder 256M
		"$BIN/tracectl" trace-event bench_ev on >/dev/null
		"$B/bench-traced" rate 2 4000000 $SNAP_SECONDS >"$T/snap.out" &
		;;
	lttng)
		rm -rf "$T/lt"
		lttng create snap --snapshot --output="$T/lt" >/dev/null
		lttng enable-channel -u -s snap --subbuf-size=64M \
			--num-subbuf=4 --overwrite ch >/dev/null
		lttng enable-event -u -s snap -c ch 'bench:ev' >/dev/null
		lttng start snap >/dev/null
		LTTNG_UST_REGISTER_TIMEOUT=-1 "$B/bench-lttng" rate 2 4000000 \
			$SNAP_SECONDS >"$T/snap.out" &
		;;
	esac
	prog=$!
	sleep 2
	for k in 1 2 3; do
		rm -rf "$T/snap"
		t0=$(date +%s%N)
		# A snapshot that failed must not pass for a fast one.
		if [ "$1" = traced ]; then
			"$BIN/tracectl" snapshot -o "$T/snap" >/dev/null ||
				{ say "traced: the snapshot failed"; exit 1; }
		else
			lttng snapshot record -s snap "$T/snap" >/dev/null ||
				{ say "lttng: the snapshot failed"; exit 1; }
		fi
		t1=$(date +%s%N)
		echo "$(((t1 - t0) / 1000000)) $(du -sb "$T/snap" | cut -f1)"
	done
	wait $prog
	rm -rf "$T/snap"
	if [ "$1" = traced ]; then
		"$BIN/tracectl" --json info trace >"$T/info.json"
		td_stop
		lost=$(grep -o '"type":"window"[^}]*"lost":[0-9]*' "$T/info.json" |
			sed 's/.*"lost"://' | awk '{ n += $1 } END { print n + 0 }')
	else
		lost=$(lttng list snap -c ch 2>/dev/null |
			sed -n 's/.*[Dd]iscarded events: *\([0-9]*\).*/\1/p' |
			awk '{ n += $1; seen = 1 }
				END { if (!seen || n > 1e15) print "?"; else print n }')
		lttng destroy snap >/dev/null
	fi
	echo "lost $lost $(cat "$T/snap.out")"
}

say "  snapshot of a full 256 MiB window"
snap_runs traced >"$T/snap.traced"
snap_runs lttng >"$T/snap.lttng"
snap_t=$(grep -v '^lost' "$T/snap.traced" | sort -n | sed -n 2p)
snap_l=$(grep -v '^lost' "$T/snap.lttng" | sort -n | sed -n 2p)
{
	echo
	echo "snapshot of a full window while 2 paced threads write 4,000,000 events/s (median of 3 taken one after the other; traced --recorder 256M, LTTng 4 x 64 MiB per CPU in overwrite mode; the page cache takes $pc_mbs MB/s):"
	for l in "traced $snap_t" "lttng $snap_l"; do
		echo "$l" | awk '{ printf "  %-7s %6d ms  %5d MB  %6.0f MB/s\n", $1, $2, $3 / 1e6, ($2 > 0 ? $3 / 1e3 / $2 : 0) }'
	done
	echo "$snap_t $snap_l" | awk '$1 > 0 && $3 > 0 { printf "  ratio traced/LTTng time %.2f, per byte %.2f\n", $1 / $3, ($1 / $2) / ($3 / $4) }'
	printf '  lost by the program meanwhile: traced %s (%s), LTTng %s (%s)\n' \
	    "$(sed -n 's/^lost \([^ ]*\).*/\1/p' "$T/snap.traced")" \
	    "$(sed -n 's/^lost [^ ]* //p' "$T/snap.traced")" \
	    "$(sed -n 's/^lost \([^ ]*\).*/\1/p' "$T/snap.lttng")" \
	    "$(sed -n 's/^lost [^ ]* //p' "$T/snap.lttng")"
} >> "$RES"
printf ',\n{"case":"snapshot of a full window","traced_ms":%s,"traced_bytes":%s,"lttng_ms":%s,"lttng_bytes":%s}' \
	$(echo "$snap_t" | cut -d' ' -f1,2 | tr ' ' '\n') \
	$(echo "$snap_l" | cut -d' ' -f1,2 | tr ' ' '\n') >> "$JSON"

# ---- zero-loss rate ---------------------------------------------------------

# rate_ok TRACER RATE: 0 if RATE events/s for RATE_SECONDS lose nothing
# and the producers kept the pace.
rate_ok() {
	rate=$2
	# Each try from a quiet disk: the gigabytes a failed try left to
	# write back (and to free) must not count against the next one.
	rm -rf "$T/td" "$T/lt"
	sync
	if [ "$1" = traced ]; then
		line=$(td_run on 2 "" rate 2 "$2" "$RATE_SECONDS")
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

# best_rate TRACER: highest rate (events/s, 2 threads) with zero loss,
# searched up to the page cache's or O_DIRECT's write speed, whichever
# is faster: the physical limit of what a tracer can keep for long.
best_rate() {
	lo=0 hi=
	r=1000000
	while [ $r -le "$lim_ev" ]; do
		if rate_ok "$1" $r; then lo=$r; r=$((r * 2)); else hi=$r; break; fi
	done
	if [ -z "$hi" ]; then
		# Every try up to the limit kept everything: try the limit.
		if [ "$lo" -lt "$lim_ev" ] && rate_ok "$1" "$lim_ev"; then
			echo "$lim_ev limit"
			return
		fi
		hi=$lim_ev
	fi
	for i in 1 2 3; do
		mid=$(( (lo + hi) / 2 ))
		if rate_ok "$1" $mid; then lo=$mid; else hi=$mid; fi
	done
	echo "$lo"
}

say "  zero-loss rate, 2 paced threads, $RATE_SECONDS s per try: traced"
set -- $(best_rate traced)
rt=$1 rt_lim=${2:-}
say "  zero-loss rate: LTTng-UST"
set -- $(best_rate lttng)
rl=$1 rl_lim=${2:-}
lt_stop
ratio=$(awk -v a="$rt" -v b="$rl" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "inf" }')
{
	echo
	echo "highest steady rate with zero loss for ${RATE_SECONDS} s, 2 paced threads (traced: defaults; LTTng: 4 x 256 KiB per CPU), searched up to $lim_what $lim_ev events/s:"
	printf '  traced %12s events/s%s\n  lttng  %12s events/s%s\n  ratio traced/LTTng %s\n' \
	    "$rt" "${rt_lim:+ (the physical limit)}" "$rl" "${rl_lim:+ (the physical limit)}" "$ratio"
} >> "$RES"
printf ',\n{"case":"zero-loss rate, 2 threads","traced_events_per_s":%s,"lttng_events_per_s":%s,"ratio":"%s","page_cache_events_per_s":%s,"disk_events_per_s":%s,"direct_events_per_s":%s}\n]\n' \
	"$rt" "$rl" "$ratio" "$pc_ev" "$disk_ev" "$direct_ev" >> "$JSON"
# Function tracing: traced's graph vs uftrace (its own table).
O="$O" sh "$SRC/tests/bench/func-run.sh" >/dev/null && cat "$B/func-results.txt" >> "$RES"
cat "$RES"
echo
echo "results: $RES and $JSON"
