#!/bin/sh
# SPDX-License-Identifier: MIT
# A traced thread that dies of a signal leaves a traced:crash record, and
# the program dies as it would without libtraced.  crasher's second
# thread traces five ticks, then abort()s or stores to 0x1230 (a field
# of a NULL struct pointer).  For each way it dies:
#   - its exit status is the untraced run's (TRACED=0): 134 for abort,
#     139 for SIGSEGV (under ASan, whose handler ends a SEGV with status
#     1, whatever that is);
#   - the crashing thread's last event is traced:crash with the signal,
#     its code, the fault address crasher printed (SEGV) or the sender
#     (abort: the process itself), in babeltrace2 and in tracectl print,
#     after its five ticks; the other thread has none;
#   - a SIGSEGV handler of the program's own, installed before
#     libtraced's (SA_RESETHAND), runs once, sees signal 11 at 0x1230,
#     and the process still dies of SIGSEGV, with the record written;
#   - a thread that overflows its stack gets its record too;
#   - TRACED_CRASH=0 writes no record and changes nothing else.
. "$(dirname "$0")/lib.sh"

command -v babeltrace2 >/dev/null 2>&1 ||
	skip "babeltrace2 is not installed (apt-get install babeltrace2)"

# crash NAME MODE [VAR=VALUE...]: run crasher MODE with those variables;
# its pid in $pid, its status in $rc, its output in $T/NAME.out.
crash() {
	_name=$1 _mode=$2; shift 2
	env "$@" "$HELPERS/crasher" "$_mode" >"$T/$_name.out" 2>&1 &
	pid=$!
	rc=0
	wait $pid || rc=$?
}

# same_as_untraced NAME MODE WANT [VAR=VALUE...]: crasher MODE, untraced
# then traced, must end with the same status, WANT if not empty; the
# traced run's pid in $pid.
same_as_untraced() {
	_n=$1 _m=$2 _want=$3; shift 3
	crash "$_n-untraced" "$_m" TRACED=0 "$@"
	_base=$rc
	[ -z "$_want" ] || [ "$_base" = "$_want" ] ||
		fail "$_n: untraced crasher ended with $_base, not $_want"
	crash "$_n" "$_m" "$@"
	[ "$rc" = "$_base" ] ||
		fail "$_n: traced crasher ended with $rc, untraced with $_base"
}

# check_crash NAME FIELDS: the session of $pid has one traced:crash, the
# last event of a thread other than the main one, after its five ticks,
# with FIELDS ("signal = 6, code = -6, addr = 0x0") first; also in
# tracectl print.  The thread in $tid.
check_crash() {
	_d=$(ls -d "$TRACES"/crasher-"$pid"-* 2>/dev/null | head -n 1)
	[ -n "$_d" ] || fail "$1: no session directory for pid $pid"
	babeltrace2 "$_d" >"$T/$1.bt" 2>"$T/$1.bt.err" ||
		fail "$1: babeltrace2: $(head -c 500 "$T/$1.bt.err")"
	[ "$(grep -c ' traced:crash: ' "$T/$1.bt")" = 1 ] ||
		fail "$1: not one traced:crash in $(cat "$T/$1.bt")"
	tid=$(sed -n 's/.* traced:crash: { tid = \([0-9]*\) }.*/\1/p' "$T/$1.bt")
	[ "$tid" != "$pid" ] || fail "$1: the crash is the main thread's"
	grep ":($pid) traced:crash: { tid = $tid }, { $2, ip = 0x[0-9A-F]*, sender = $3 }\$" \
		"$T/$1.bt" >/dev/null ||
		fail "$1: want { $2, ip = ..., sender = $3 }, got: $(grep crash: "$T/$1.bt")"
	grep "{ tid = $tid }" "$T/$1.bt" | sed 's/.*{ tid = [0-9]* }, //' >"$T/$1.thread"
	printf '%s\n' "{ seq = 0 }" "{ seq = 1 }" "{ seq = 2 }" "{ seq = 3 }" \
		"{ seq = 4 }" >"$T/$1.want"
	sed -n '$p' "$T/$1.thread" | grep -q "^{ $2, " ||
		fail "$1: the thread's last event is not the crash: $(tail -n 1 "$T/$1.thread")"
	sed '$d' "$T/$1.thread" | cmp -s - "$T/$1.want" ||
		fail "$1: the thread's events before the crash: $(cat "$T/$1.thread")"
	ctl print "$_d" >"$T/$1.print" 2>&1 || fail "$1: tracectl print: $(cat "$T/$1.print")"
	grep -q " crasher $pid/$tid traced:crash: { $2, ip = 0x[0-9A-F]*, sender = $3 }\$" \
		"$T/$1.print" || fail "$1: tracectl print: $(grep crash "$T/$1.print")"
	tail -n 1 "$T/$1.print" | grep -q " traced:crash: " ||
		fail "$1: tracectl print does not end with the crash"
}

san=
[ "${SANITIZE:-}" = 1 ] && san=1
if [ -n "$san" ]; then
	segv_status=	# ASan's SEGV report ends the process with 1
else
	segv_status=139
fi

start_daemon --drain-interval 50

same_as_untraced abort abort 134
pid_abort=$pid
same_as_untraced segv segv "$segv_status"
pid_segv=$pid rc_segv=$rc
grep -qx "fault at 0x1230" "$T/segv.out" || fail "segv: $(cat "$T/segv.out")"
same_as_untraced own segv "$segv_status" CRASHER_OWN_HANDLER=1
pid_own=$pid
for f in own-untraced own; do
	[ "$(grep -c "own handler" "$T/$f.out")" = 1 ] &&
		grep -qx "own handler: signal 11 code 1 addr 0x1230" "$T/$f.out" ||
		fail "$f: the program's own handler: $(cat "$T/$f.out")"
done
[ -n "$san" ] || [ "$rc" = 139 ] || fail "own: ended with $rc, not 139"
same_as_untraced overflow overflow "$segv_status"
pid_overflow=$pid
same_as_untraced off segv "$segv_status" TRACED_CRASH=0
pid_off=$pid
ctl trace-file flush >/dev/null
wait_no_sessions 10 || fail "sessions did not end: $(ctl info trace)"

pid=$pid_abort
check_crash abort "signal = 6, code = -6, addr = 0x0" "$pid_abort"
grep -q "thread $tid: got a fatal signal (traced:crash)" "$T/traced.log" ||
	fail "no log line about thread $tid"
ok "abort(): status 134 as untraced, traced:crash { signal 6, sender $pid } after the thread's ticks"

pid=$pid_segv
check_crash segv "signal = 11, code = 1, addr = 0x1230" 0
ok "SIGSEGV: status $rc_segv as untraced, traced:crash at the address printed"

pid=$pid_own
check_crash own "signal = 11, code = 1, addr = 0x1230" 0
ok "the program's own SIGSEGV handler ran once, saw signal 11 at 0x1230; the record is there"

pid=$pid_overflow
check_crash overflow "signal = 11, code = [12], addr = 0x[0-9A-F]*" 0
ok "a stack overflow: the same status as untraced, and the record (on the ring's signal stack)"

pid=$pid_off
d=$(ls -d "$TRACES"/crasher-"$pid"-* | head -n 1)
babeltrace2 "$d" >"$T/off.bt" 2>/dev/null || fail "off: babeltrace2"
[ "$(grep -c ' helpers:test_tick: ' "$T/off.bt")" = 5 ] ||
	fail "off: not 5 ticks: $(cat "$T/off.bt")"
! grep -q "traced:crash" "$T/off.bt" || fail "off: a crash record with TRACED_CRASH=0"
ok "TRACED_CRASH=0: no record, the same status"

ctl stats "$TRACES" >"$T/stats" 2>&1 || fail "stats: $(cat "$T/stats")"
grep -q "^  traced:crash  *4 " "$T/stats" ||
	fail "stats does not count 4 traced:crash: $(cat "$T/stats")"
ok "tracectl stats counts the four crashes"
