# SPDX-License-Identifier: MIT
# Shared by the tests of issue 9 (10x-hostile-*.sh): a daemon run by
# root, as the system daemon is, and a second account that attacks it.
# Sourced after lib.sh.
#
# The hostile user is 'tracedhostile', a system account made once and
# kept (useradd is idempotent here); its processes run through
# setpriv(1) with no supplementary group.  The test's private directory
# (0700) is opened on the way (go+x) and the runtime directory is 0755,
# so that its programs reach client.sock, as they would /run/traced.

HOSTILE_USER=tracedhostile

# The bounds every case is held to (issue 9, "What it must show").
CTL_MAX_MS=1000		# root's tracectl answers within this
MEM_MAX_MB=256		# the daemon's own memory, VmRSS - RssShmem
RATE=500000		# events/s of root's program meanwhile,
RATE_THREADS=${RATE_THREADS:-4}	# over this many threads (default rings)
LOG_MAX_LINES=300	# what one client may make the daemon log in 10 s
# Under ASan (make check SANITIZE=1, or O=build-asan) the daemon runs
# several times slower and its heap is larger: for an answer root waits
# 1 s for in the plain build, 3.4 to 8.6 s were seen on 2 cores with
# 300 hostile connections, at the start of the flood.  There the bound
# only says that root is answered at all; the plain run keeps the 1 s
# bound, which is the claim.  Memory bounds are scaled and the rate
# halved, as 091 does under TSan.
if [ "${SANITIZE:-}" = 1 ] || case "$O" in *-asan*) true ;; *) false ;; esac
then
	CTL_MAX_MS=15000
	MEM_MAX_MB=512
	RATE=250000
fi

# Under ASan, freed memory waits in a quarantine (256 MB by default)
# before it goes back: a small one, so that the daemon's memory is what
# it holds.  Other builds ignore the variable.
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=16"
export ASAN_OPTIONS

# hostile_init: skip unless root; make the user; open the way to $T.
hostile_init() {
	[ "$(id -u)" = 0 ] ||
		skip "needs root: traced runs as root and the test makes a second user ($HOSTILE_USER)"
	for c in useradd setpriv jq timeout; do
		command -v $c >/dev/null 2>&1 || skip "$c not found"
	done
	if ! id -u "$HOSTILE_USER" >/dev/null 2>&1; then
		# Another test may make it at the same moment.
		useradd --system --no-create-home --shell /usr/sbin/nologin \
		    "$HOSTILE_USER" 2>"$T/useradd.err" ||
		id -u "$HOSTILE_USER" >/dev/null 2>&1 ||
			skip "useradd $HOSTILE_USER: $(cat "$T/useradd.err")"
	fi
	HUID=$(id -u "$HOSTILE_USER")
	HGID=$(id -g "$HOSTILE_USER")
	AS_HOSTILE="setpriv --reuid=$HUID --regid=$HGID --clear-groups"
	chmod go+x "$T"
	mkdir -p "$TRACED_RUNTIME_DIR"
	chmod 0755 "$TRACED_RUNTIME_DIR"
	as_hostile "$BIN/tracectl" --version >/dev/null 2>&1 &&
	    as_hostile test -x "$HELPERS/hostile" ||
		skip "$O is not usable by other users (a private build directory)"
}

# quiet_start: before a test that measures losses on a busy machine,
# wait (10 s at most) until no helper of an earlier test still runs: a
# sanitizer build's processes check for leaks as they exit, and 106's
# hundreds of them left the drain thread waiting 0.8 s for a CPU.
quiet_start() {
	_n=0
	while pgrep -f "^$O/tests/helpers/" >/dev/null 2>&1 && [ $_n -lt 200 ]; do
		_n=$((_n + 1))
		sleep 0.05
	done
}

# as_hostile COMMAND...: run COMMAND as the hostile user.  In the
# background, use $AS_HOSTILE COMMAND... & instead: a function run in
# the background is a subshell, and $! would be its pid, not COMMAND's.
as_hostile() {
	$AS_HOSTILE "$@"
}

# hfail MESSAGE: fail, after a SIGKILL to a daemon that may be stuck
# (cleanup would wait for it to drain, for minutes on a daemon that
# does what the finding says).
hfail() {
	if [ -n "$DAEMON_PID" ]; then
		kill -9 "$DAEMON_PID" 2>/dev/null || true
		wait "$DAEMON_PID" 2>/dev/null || true
		DAEMON_PID=
	fi
	fail "$@"
}

# daemon_mem: "OWN RSS SHMEM" in KiB: the daemon's resident memory, of
# which the shared memory (client rings and state arrays it maps: the
# clients' memory) is taken out of OWN.
daemon_mem() {
	awk '/^VmRSS:/ { r = $2 } /^RssShmem:/ { s = $2 }
	    END { if (r != "") print r - s, r, s }' \
	    "/proc/$DAEMON_PID/status" 2>/dev/null || true
}

# ctl_ms COMMAND...: root's tracectl, given CTL_MAX_MS (and a little
# for starting it); prints the milliseconds it took; its output in
# $T/ctl.out.  Fails (status) if it did not answer in time.
ctl_ms() {
	_t0=$(date +%s%N)
	_rc=0
	# Into memory: a write to a file can wait for the disk, and the
	# time is tracectl's and the daemon's, not the disk's.
	_out=$(timeout $((CTL_MAX_MS / 1000 + 1)) "$BIN/tracectl" "$@" \
		2>&1) || _rc=$?
	_t1=$(date +%s%N)
	_ms=$(( (_t1 - _t0) / 1000000 ))
	printf '%s\n' "$_out" >"$T/ctl.out"
	echo "$_ms"
	[ "$_rc" = 0 ] && [ "$_ms" -le "$CTL_MAX_MS" ]
}

# watch_daemon SECONDS WHAT: every second for SECONDS, root's 'tracectl
# info trace' must answer within CTL_MAX_MS and the daemon's own memory
# stay under MEM_MAX_MB; WHAT (the finding and the case) goes in the
# failure.  Sets WATCH_MS, WATCH_OWN, WATCH_RSS, WATCH_SHMEM (maxima,
# KiB for memory).
watch_daemon() {
	_n=$1 _what=$2 _i=0
	WATCH_MS=0 WATCH_OWN=0 WATCH_RSS=0 WATCH_SHMEM=0
	while [ $_i -lt "$_n" ]; do
		_i=$((_i + 1))
		_s0=$(date +%s%N)
		kill -0 "$DAEMON_PID" 2>/dev/null || hfail "$_what: traced died"
		# shellcheck disable=SC2046
		set -- $(daemon_mem)
		[ $# = 3 ] || hfail "$_what: traced died"
		[ "$1" -gt "$WATCH_OWN" ] && WATCH_OWN=$1
		[ "$2" -gt "$WATCH_RSS" ] && WATCH_RSS=$2
		[ "$3" -gt "$WATCH_SHMEM" ] && WATCH_SHMEM=$3
		[ "$1" -le $((MEM_MAX_MB * 1024)) ] ||
			hfail "$_what: at second $_i the daemon holds $(($1 / 1024)) MB of its own (VmRSS $(($2 / 1024)) MB - RssShmem $(($3 / 1024)) MB), more than $MEM_MAX_MB MB"
		_ms=$(ctl_ms info trace) ||
			hfail "$_what: at second $_i root's 'tracectl info trace' took $_ms ms (more than $CTL_MAX_MS ms, or failed: $(head -c 300 "$T/ctl.out")); daemon memory $(($1 / 1024)) MB own, $(($2 / 1024)) MB resident"
		[ "$_ms" -gt "$WATCH_MS" ] && WATCH_MS=$_ms
		# The next question a second after this one was asked.
		_left=$(( 1000 - ($(date +%s%N) - _s0) / 1000000 ))
		[ $_left -gt 0 ] && sleep "$(printf '0.%03d' $_left)"
	done
	return 0
}

watch_summary() {
	echo "tracectl answered within $WATCH_MS ms at most; daemon memory at most $((WATCH_OWN / 1024)) MB own (VmRSS $((WATCH_RSS / 1024)) MB, RssShmem $((WATCH_SHMEM / 1024)) MB)"
}

# rate_start: root's program tracing RATE events/s (RATE_THREADS
# threads) until rate_check; waits until it is connected.
rate_start() {
	rm -f "$T/rate.stop"
	"$HELPERS/rate" -r "$RATE" -t "$RATE_THREADS" -s "$T/rate.stop" -T 120 \
		>"$T/rate.out" 2>&1 &
	RATE_PID=$!
	bg_track $RATE_PID
	wait_for 5 sh -c "'$BIN/tracectl' info trace | grep -q 'rate\\[$RATE_PID\\]'" ||
		hfail "root's program did not connect: $(ctl info trace 2>&1 | head -n 5)"
}

# bt_count DIR...: babeltrace2's count of event messages, and of
# discarded-events messages, "EVENTS DISCARDED".
bt_count() {
	babeltrace2 -c sink.utils.counter -p 'step=+0' "$@" >"$T/count.out" \
		2>"$T/count.err" || return 1
	awk '/ Event messages/ { e = $1 } / Discarded event messages/ { d = $1 }
	    END { print e + 0, d + 0 }' "$T/count.out"
}

# rate_check WHAT: stop root's program; every event it emitted is in
# the trace, none lost (events in the trace + lost = emitted, lost 0).
rate_check() {
	_what=$1
	touch "$T/rate.stop"
	wait "$RATE_PID" || hfail "$_what: root's program exited with $?"
	ctl trace-file flush >/dev/null 2>&1 ||
		hfail "$_what: tracectl trace-file flush failed afterwards"
	_emitted=$(sed -n 's/^emitted \([0-9]*\) dropped.*/\1/p' "$T/rate.out")
	_dropped=$(sed -n 's/^emitted [0-9]* dropped \([0-9]*\)/\1/p' "$T/rate.out")
	[ -n "$_emitted" ] || hfail "$_what: root's program said: $(cat "$T/rate.out")"
	# Every session it had (a disconnected program comes back as a
	# new one), in $TRACES and the trace directories RATE_MORE_DIRS
	# names (trace-file set moved it there for a while).
	_dirs=$(for _d in "$TRACES" ${RATE_MORE_DIRS:-}; do
		ls -d "$_d"/rate-"$RATE_PID"-* 2>/dev/null || true; done)
	[ -n "$_dirs" ] ||
		hfail "$_what: root's program has no trace in $TRACES"
	# shellcheck disable=SC2086
	_c=$(bt_count $_dirs) ||
		hfail "$_what: babeltrace2 cannot read root's program's trace: $(head -c 400 "$T/count.err")"
	# shellcheck disable=SC2086
	set -- $_c
	[ "$1" = "$_emitted" ] && [ "$2" = 0 ] && [ "$_dropped" = 0 ] ||
		hfail "$_what: root's program at $RATE events/s lost events: $_emitted emitted, $1 in the trace ($2 discarded-events messages, $_dropped dropped in its rings; $(echo $_dirs | wc -w) sessions)"
	echo "root's program: $_emitted events at $RATE/s, all $1 in the trace, none lost"
}

# bt_whole WHAT [SECONDS]: babeltrace2 reads the whole trace directory,
# within SECONDS (default 30).
bt_whole() {
	_t0=$(date +%s)
	timeout "${2:-30}" babeltrace2 -c sink.utils.counter -p 'step=+0' \
		"$TRACES" >/dev/null 2>"$T/bt.err" ||
		hfail "$1: babeltrace2 $TRACES failed or took more than ${2:-30} s: $(head -c 400 "$T/bt.err")"
	echo "babeltrace2 read the whole trace directory in $(( $(date +%s) - _t0 )) s"
}

# providers_refused FILE: 'hostile providers' said the daemon refused
# one (a negative PROVIDER_ACK, or the connection closed).
providers_refused() {
	grep -q ' [1-9][0-9]* refused\|closed by the daemon' "$1"
}

# log_mark / log_since: the daemon's log lines from the mark on.
log_mark() { touch "$T/traced.log"; LOG_MARK=$(wc -l < "$T/traced.log"); }
log_since() { tail -n +$((LOG_MARK + 1)) "$T/traced.log"; }

# attack NAME WHAT HOSTILE-ARGUMENTS...: a fresh daemon, root's program,
# and the hostile client for ATTACK_S seconds, watched every second.
# WATCH_AT / WATCH_HOOK: a command run after that many seconds;
# ATTACK_PRE: one run before the hostile client starts.  DAEMON_ARGS:
# more arguments for traced.
attack() {
	NAME=$1 WHAT=$2
	shift 2
	TRACES="$T/traces-$NAME"
	log_mark
	# shellcheck disable=SC2086
	start_daemon ${DAEMON_ARGS:-}
	rate_start
	[ -z "${ATTACK_PRE:-}" ] || eval "$ATTACK_PRE"
	$AS_HOSTILE env TRACED=0 "$HELPERS/hostile" "$@" \
		>"$T/$NAME.out" 2>&1 &
	HPID=$!
	bg_track $HPID
	if [ -n "${WATCH_HOOK:-}" ]; then
		watch_daemon "$WATCH_AT" "$WHAT"
		eval "$WATCH_HOOK"
		watch_daemon $((ATTACK_S - WATCH_AT)) "$WHAT"
	else
		watch_daemon "$ATTACK_S" "$WHAT"
	fi
	wait $HPID || hfail "$WHAT: the hostile client failed: $(cat "$T/$NAME.out")"
	echo "$NAME: $(cat "$T/$NAME.out")"
	watch_summary
	WATCH_HOOK= ATTACK_PRE= DAEMON_ARGS=
}

# refused_naming PATTERN: the log since the case began names a setting.
refused_naming() {
	log_since | grep -Eq -- "$1" ||
		hfail "$WHAT: the refusal does not name the limit's setting ($1) in the log: $(log_since | grep -v 'connected\|ended' | tail -n 3)"
	echo "the log names the limit: $(log_since | grep -E -m1 -- "$1")"
}

# case_end: the whole trace directory reads; stop the daemon.
case_end() {
	bt_whole "$WHAT"
	stop_daemon
	rm -rf "$TRACES"
	ok "$WHAT"
}

# late_program: (a WATCH_HOOK) root starts a program during the attack,
# 2 threads of 1,000 events, and waits for it; late_check afterwards:
# it was traced, every event in the trace.
late_program() {
	TRACED_DEBUG=1 "$HELPERS/emit" -t 2 -n 1000 >"$T/emit-late.out" 2>&1 &
	LATE_PID=$!
	wait $LATE_PID || hfail "$WHAT: emit exited with $?"
}

late_check() {
	ctl trace-file flush >/dev/null
	# Its session, in $TRACES and the trace directories RATE_MORE_DIRS
	# names: a trace-file set just after it ended moves what the
	# daemon had not yet written there, a new trace of the session.
	_ld=$(for _d in "$TRACES" ${RATE_MORE_DIRS:-}; do
		ls -d "$_d"/emit-"$LATE_PID"-* 2>/dev/null || true; done)
	[ -n "$_ld" ] ||
		hfail "$WHAT: a program root started during the attack was not traced (no session directory)"
	# shellcheck disable=SC2086
	_c=$(bt_count $_ld) ||
		hfail "$WHAT: babeltrace2 cannot read $_ld: $(head -c 300 "$T/count.err")"
	# shellcheck disable=SC2086
	set -- $_c
	# shellcheck disable=SC2086
	_ticks=$(babeltrace2 $_ld 2>/dev/null | grep -c 'helpers:test_tick:' || true)
	[ "$_ticks" = 2000 ] && [ "$2" = 0 ] ||
		hfail "$WHAT: the program root started during the attack lost events: $_ticks of 2000 ticks in the trace ($(echo $_ld | wc -w) directories), $2 discarded-events messages; its library said: $(grep -v '^helpers' "$T/emit-late.out" | tail -n 8)"
	echo "a program root started during the attack: all 2000 ticks traced"
}
