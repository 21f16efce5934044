#!/bin/sh
# SPDX-License-Identifier: MIT
# How fast 'tracectl info sessions' answers from a large index.
#
#   sh tests/bench/index-bench.sh [SESSIONS] [RUNS]    (from the source root,
#   O=build by default; defaults: 100000 sessions, 21 runs)
#
# A private traced creates <state>/index.db with its own schema code and
# stops; the sqlite3 tool then fills it with SESSIONS sessions (each with
# a thread, a stream, four event counts and, one in ten, drops), spread
# over the last 30 days, 40 executables, 30000 pids, all in one daemon
# run.  traced starts again on it and each query below runs RUNS times;
# the median, min and max wall-clock time of the whole tracectl command
# (process start, connect, query, reply, print) are printed in ms.  The
# target is a median under 100 ms for the default command (the newest
# 100 sessions).
set -eu
N=${1:-100000}
RUNS=${2:-21}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
O=${O:-$SRC/build}
BIN=$O/bin
command -v sqlite3 >/dev/null 2>&1 || {
	echo "index-bench: needs the sqlite3 tool to fill the index" \
	    "(apt-get install sqlite3)" >&2
	exit 1
}
[ -x "$BIN/traced" ] && [ -x "$BIN/tracectl" ] || {
	echo "index-bench: build first (make)" >&2
	exit 1
}
T=$(mktemp -d "${TMPDIR:-/tmp}/traced-index-bench.XXXXXX")
export TRACED_RUNTIME_DIR="$T/run"
PID=
cleanup() {
	[ -z "$PID" ] || { kill "$PID" 2>/dev/null; wait "$PID" 2>/dev/null || true; }
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

start() {
	"$BIN/traced" --foreground --runtime-dir "$T/run" --trace-dir "$T/traces" \
		--state-dir "$T/state" >>"$T/traced.log" 2>&1 &
	PID=$!
	i=0
	until [ -S "$T/run/control.sock" ]; do
		i=$((i + 1))
		[ $i -lt 200 ] || { cat "$T/traced.log" >&2; exit 1; }
		sleep 0.05
	done
}
stop() { kill "$PID"; wait "$PID" || true; PID=; }

start
stop
now=$(date +%s)
t0=$(date +%s%N)
sqlite3 "$T/state/index.db" <<EOF
PRAGMA synchronous = OFF;
BEGIN;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $N)
INSERT INTO sessions (id, run, pid, uid, gid, comm, name, exe, cmdline,
    clock, dir, started_ns, updated_ns, ended_ns, how, events, lost,
    lost_before_connect)
SELECT i, 1, 1000 + i % 30000, 1000, 1000, 'prog' || (i % 40),
    'prog' || (i % 40), '/usr/bin/prog' || (i % 40),
    '/usr/bin/prog' || (i % 40) || ' --run ' || i, 'tsc',
    '$T/traces/prog' || (i % 40) || '-' || (1000 + i % 30000) || '-' || i,
    ($now - 30 * 86400) * 1000000000 + i * (30 * 86400 * 1000000000 / $N),
    ($now - 30 * 86400) * 1000000000 + i * (30 * 86400 * 1000000000 / $N)
      + 2000000000,
    ($now - 30 * 86400) * 1000000000 + i * (30 * 86400 * 1000000000 / $N)
      + 2000000000,
    'exited', 4000 + i % 1000, CASE WHEN i % 10 = 0 THEN 17 ELSE 0 END, 0
FROM n;
INSERT INTO threads SELECT id, 0, pid + 1, 1048576, events, events * 40, 0,
    'finished' FROM sessions;
INSERT INTO streams SELECT id, dir || '/stream-' || (pid + 1), 0, pid + 1,
    ended_ns FROM sessions;
INSERT INTO drops SELECT id, 0, 'ring_full', lost FROM sessions
    WHERE lost > 0;
INSERT INTO events SELECT s.id, e.id, 'prov', 'event_' || e.id, s.events / 4
    FROM sessions s, (SELECT 16 AS id UNION ALL SELECT 17 UNION ALL
    SELECT 18 UNION ALL SELECT 19) e;
COMMIT;
EOF
t1=$(date +%s%N)
echo "index: $N sessions written in $(( (t1 - t0) / 1000000 )) ms," \
    "$(du -k "$T/state/index.db" | cut -f1) KiB"
start

# bench LABEL ARGS...: RUNS runs of tracectl ARGS; median/min/max in ms.
bench() {
	label=$1
	shift
	"$BIN/tracectl" "$@" >"$T/out" 2>&1 || { cat "$T/out" >&2; exit 1; }
	lines=$(wc -l < "$T/out")
	r=0
	: > "$T/times"
	while [ $r -lt "$RUNS" ]; do
		a=$(date +%s%N)
		"$BIN/tracectl" "$@" >/dev/null
		b=$(date +%s%N)
		echo $(( (b - a) / 1000 )) >> "$T/times"
		r=$((r + 1))
	done
	sort -n "$T/times" | awk -v label="$label" -v lines="$lines" '
		{ t[NR] = $1 }
		END {
			m = NR % 2 ? t[(NR + 1) / 2] : (t[NR / 2] + t[NR / 2 + 1]) / 2
			printf "%-44s median %7.2f ms  min %7.2f  max %7.2f  (%d lines)\n",
			    label, m / 1000, t[1] / 1000, t[NR] / 1000, lines
		}'
}

echo "tracectl, $RUNS runs each:"
bench "help (no daemon work: the floor)" help
bench "info sessions" info sessions
bench "--json info sessions" --json info sessions
bench "info sessions --pid 1234" info sessions --pid 1234
bench "info sessions --exe prog7" info sessions --exe prog7
bench "info sessions --exe /usr/bin/prog7" info sessions --exe /usr/bin/prog7
bench "info sessions --since 1d" info sessions --since 1d
bench "info sessions --since 1d --exe prog7" info sessions --since 1d --exe prog7
bench "info sessions --limit 1000" info sessions --limit 1000
bench "info session $((N / 2))" info session $((N / 2))
bench "info sessions --all ($N lines)" info sessions --all
