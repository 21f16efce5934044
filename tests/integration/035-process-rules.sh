#!/bin/sh
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 The traced authors
#
# A process's own rules: TRACED_EVENTS (a list, and @FILE) and
# traced_events_set() turn the events of the running process on and
# off, with and without a daemon, and traced_event_state() reads them.
# The program is built with --backends traced,log, so that what is on
# shows on stderr in every case and in the trace when a daemon runs.
#
# Without a daemon: only the process's rules turn events on.  With one:
# the process's rules win over the daemon's (tracectl trace-event),
# which win over the default and 'disable'; 'info trace-events' says
# which decided each state; a daemon restart keeps both (the process
# sends its rules again); and when the daemon is gone the process still
# changes its events.  Rules over the daemon's event-ids limit are
# refused, and the call says so.
#
# Environment: O = the build directory (absolute).

. "$(dirname "$0")/lib.sh"
export LC_ALL=C
bg_track_init
command -v jq > /dev/null || skip "jq missing (apt-get install jq)"

mkdir "$T/pr"
cat > "$T/pr/trace-events" <<'EOF'
ev_a(int seq) "a %d"
ev_b(int seq) "b %d"
ev_c(int seq) "c %d"
disable ev_d(int seq) "d %d"
disable pad_0(void)
disable pad_1(void)
disable pad_2(void)
disable pad_3(void)
disable pad_4(void)
disable pad_5(void)
disable pad_6(void)
disable pad_7(void)
disable pad_8(void)
disable pad_9(void)
EOF
# prog CMD...: "emit N" traces ev_a..ev_d(N); "set PATTERN on|off";
# "state NAME"; "mark FILE" creates FILE; "wait FILE" waits for it.
cat > "$T/pr/prog.c" <<'EOF'
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "trace.h"
int
main(int argc, char **argv)
{
	struct timespec ms = { 0, 10000000 };
	char arg[256], arg2[16];
	int i, n, fd;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (i = 1; i < argc; i++) {
		if (sscanf(argv[i], "emit %d", &n) == 1) {
			trace_ev_a(n);
			trace_ev_b(n);
			trace_ev_c(n);
			trace_ev_d(n);
		} else if (sscanf(argv[i], "set %255s %15s", arg, arg2) == 2) {
			n = traced_events_set(arg, strcmp(arg2, "on") == 0);
			printf("set %s %s: %d\n", arg, arg2, n);
		} else if (sscanf(argv[i], "state %255s", arg) == 1) {
			printf("state %s: %d\n", arg, traced_event_state(arg));
		} else if (sscanf(argv[i], "mark %255s", arg) == 1) {
			if ((fd = open(arg, O_CREAT | O_WRONLY, 0600)) != -1)
				close(fd);
		} else if (sscanf(argv[i], "wait %255s", arg) == 1) {
			while (access(arg, F_OK) != 0)
				nanosleep(&ms, NULL);
		} else {
			fprintf(stderr, "bad command '%s'\n", argv[i]);
			return 2;
		}
	}
	return 0;
}
EOF
san=
[ "${SANITIZE:-}" = 1 ] && san="-fsanitize=address,undefined"
[ "${SANITIZE:-}" = thread ] && san="-fsanitize=thread"
"$BIN/tracegen" --backends traced,log --provider pr --header \
    -o "$T/pr/trace.h" "$T/pr/trace-events" || fail "tracegen"
"$BIN/tracegen" --backends traced,log --provider pr --source \
    -o "$T/pr/trace.c" "$T/pr/trace-events" || fail "tracegen"
# shellcheck disable=SC2086
cc -std=gnu11 -Wall -Wextra -Werror -O2 $san -I"$SRC/client-lib/include" \
    -I"$O/include" -I"$T/pr" -o "$T/pr/prog" "$T/pr/prog.c" \
    "$T/pr/trace.c" -L"$O/lib" -ltraced -Wl,-rpath,"$O/lib" \
    > "$T/pr/cc.out" 2>&1 || fail "building: $(cat "$T/pr/cc.out")"

# logged FILE: the events on stderr, as "ev_x N" lines.
logged() {
	sed -n 's/^[0-9]*@[0-9.]*:\(ev_[a-d]\) [a-d] \([0-9]*\)$/\1 \2/p' "$1"
}
# expect_log FILE TEXT...: the events on stderr are exactly TEXT.
expect_log() {
	f=$1; shift
	printf '%s\n' "$@" > "$T/want"
	logged "$f" > "$T/got"
	cmp -s "$T/want" "$T/got" || { diff "$T/want" "$T/got" >&2;
	    fail "stderr of the program: $(head -20 "$f")"; }
}
# traced_events DIR: the events of the trace, as "ev_x N" lines.
traced_events() {
	bt "$1" 2>/dev/null | sed -n 's/.* pr:\(ev_[a-d]\): .* seq = \([0-9]*\) }$/\1 \2/p'
}

# ---- no daemon --------------------------------------------------------
export TRACED_RUNTIME_DIR="$T/nodaemon"
TRACED_EVENTS='ev_a, -ev_c ,ev_x' "$T/pr/prog" "emit 1" "state ev_a" \
    "state pr:ev_b" "set ev_b on" "emit 2" "set ev_* off" "emit 3" \
    "state ev_a" "set pr:ev_d on" "emit 4" "state nosuch" \
    > "$T/out1" 2> "$T/err1" || fail "exit $?: $(cat "$T/err1")"
expect_log "$T/err1" "ev_a 1" "ev_a 2" "ev_b 2" "ev_d 4"
cat > "$T/want" <<'EOF'
state ev_a: 1
state pr:ev_b: 0
set ev_b on: 1
set ev_* off: 4
state ev_a: 0
set pr:ev_d on: 1
state nosuch: -2
EOF
cp "$T/out1" "$T/got"
cmp -s "$T/want" "$T/got" || { diff "$T/want" "$T/got" >&2; fail "out1"; }
grep -q '^bad command' "$T/err1" && fail "a command was refused"
ok "no daemon: TRACED_EVENTS and traced_events_set() turn events on and off"

cat > "$T/events.list" <<'EOF'
# QEMU's -trace events=FILE: a pattern a line, '-' turns off
ev_*

-ev_b
  pr:ev_c
EOF
TRACED_EVENTS="@$T/events.list" "$T/pr/prog" "emit 5" > /dev/null \
    2> "$T/err2" || fail "exit $?"
expect_log "$T/err2" "ev_a 5" "ev_c 5" "ev_d 5"
ok "no daemon: TRACED_EVENTS=@FILE"

# ---- with a daemon ----------------------------------------------------
export TRACED_RUNTIME_DIR="$T/run"
start_daemon
ctl trace-event ev_c on > /dev/null || fail "trace-event ev_c on"
TRACED_EVENTS=-ev_a "$T/pr/prog" "emit 1" "mark $T/m1" "wait $T/g1" \
    "set ev_b on" "emit 2" "mark $T/m2" "wait $T/g2" "emit 3" \
    "mark $T/m3" "wait $T/g3" "emit 4" "state ev_b" "state ev_c" \
    > "$T/out3" 2> "$T/err3" &
PROG=$!
bg_track $PROG
wait_for 10 test -f "$T/m1" || fail "the program did not start"
ctl info trace-events 'pr:ev_*' > "$T/info1" || fail "info trace-events"
# name, state, where it comes from, the process.
tr -s ' ' < "$T/info1" > "$T/got"
cat > "$T/want" <<WANT
pr:ev_a off process rule 'ev_a' (TRACED_EVENTS) 1 process: prog[$PROG]
pr:ev_b on default 1 process: prog[$PROG]
pr:ev_c on rule 'ev_c' 1 process: prog[$PROG]
pr:ev_d off default (disable) 1 process: prog[$PROG]
WANT
cmp -s "$T/want" "$T/got" || { cat "$T/info1" >&2; fail "info trace-events"; }
ctl --json info trace-events pr:ev_a | jq -c \
    '.. | objects | select(.name? == "pr:ev_a") | [.state, .recording, .source, .rule, .set_by, .processes]' \
    > "$T/json" || fail "info trace-events --json"
[ "$(cat "$T/json")" = '["off",false,"process","ev_a","TRACED_EVENTS",1]' ] ||
    fail "info trace-events --json: $(ctl --json info trace-events pr:ev_a)"
ok "info trace-events: default, disable, daemon rule, process rule"

# A daemon rule does not override the process's; the process's call does.
ctl trace-event 'ev_*' off > "$T/te" || fail "trace-event ev_* off"
grep -q "1 of them stay as their process's own rules say" "$T/te" ||
    fail "trace-event: $(cat "$T/te")"
touch "$T/g1"
wait_for 10 test -f "$T/m2" || fail "the program stopped"
ctl info trace-events 'pr:ev_*' > "$T/info2" || fail "info trace-events"
grep -q "^pr:ev_b *on *process rule 'ev_b' (traced_events_set)" \
    "$T/info2" || { cat "$T/info2" >&2; fail "ev_b after the call"; }
grep -q "^pr:ev_c *off *rule 'ev_\*'" "$T/info2" ||
    { cat "$T/info2" >&2; fail "ev_c after ev_* off"; }
ok "the process's rules win over the daemon's"

# A restart keeps both: the rules saved, the process's sent again.
stop_daemon
start_daemon
wait_for 10 sh -c "'$BIN/tracectl' info trace-events pr:ev_b |
    grep -q 'process rule'" || fail "the process did not come back"
ctl info trace-events 'pr:ev_*' > "$T/info3" || fail "info trace-events"
cp "$T/info2" "$T/want"
cp "$T/info3" "$T/got"
cmp -s "$T/want" "$T/got" || { cat "$T/info3" >&2; fail "after restart"; }
touch "$T/g2"
wait_for 10 test -f "$T/m3" || fail "the program stopped"
ok "a daemon restart keeps the daemon's and the process's rules"

# Without the daemon, the process goes on with what it had.
stop_daemon
touch "$T/g3"
wait "$PROG" || fail "the program exited with $?"
PROG=
expect_log "$T/err3" "ev_b 1" "ev_c 1" "ev_b 2" "ev_b 3" "ev_b 4"
grep -q '^state ev_b: 1$' "$T/out3" && grep -q '^state ev_c: 0$' "$T/out3" ||
    fail "states at the end: $(cat "$T/out3")"
grep -q '^set ev_b on: 1$' "$T/out3" || fail "set: $(cat "$T/out3")"
traced_events "$TRACES" | sort > "$T/got"
printf 'ev_b 1\nev_b 2\nev_b 3\nev_c 1\n' > "$T/want"
cmp -s "$T/want" "$T/got" || { diff "$T/want" "$T/got" >&2;
    fail "the trace does not match stderr"; }
ok "the trace has what stderr has while a daemon ran"

# The tables of a process's rules count as event ids: with 16, the
# provider's 14 events fit and their table does not; the daemon
# refuses the rules and says so, and the call says so too.
start_daemon --set event-ids-per-uid=16
# (The daemon's saved rules still say 'ev_*' off.)
"$T/pr/prog" "set ev_b on" "emit 1" "state ev_b" > "$T/out4" 2> "$T/err4" ||
    fail "exit $?: $(cat "$T/err4")"
printf 'set ev_b on: -122\nstate ev_b: 0\n' > "$T/want"
cmp -s "$T/want" "$T/out4" || fail "over the limit: $(cat "$T/out4")"
grep -q "process rules refused: .*event-ids-per-uid" "$T/traced.log" ||
    fail "the daemon did not say why it refused the rules"
[ -z "$(logged "$T/err4")" ] || fail "events printed: $(cat "$T/err4")"
stop_daemon
ok "rules over the event-ids limit: refused, the call returns -EDQUOT"
echo "PASS: 035-process-rules"
