#!/bin/sh
# SPDX-License-Identifier: MIT
# Issue 9, finding 4: one unprivileged client cannot starve everyone
# else.  Another user's hand-written client (tests/helpers/hostile) does
# its worst for 10 s, one case at a time, each against a fresh daemon
# run by root (the system daemon):
#   providers  one session registers 24 providers of 65,536 events
#   event-id   an event of id 2^24 - 1, drained again and again
#   rings      two sessions of 9,990 rings each
#   churn      5,000 connections a second that say HELLO and leave
#   ring-numbers  (issue 25, finding 4) 370 sessions of 11 rings each,
#              numbered so that an array of rings by number would
#              double with each ring
# Meanwhile root's program traces 500,000 events/s with default rings
# and loses nothing (events in the trace + lost = emitted, lost = 0),
# root's 'tracectl info trace' answers within 1 s every second, and the
# daemon's own memory (VmRSS - RssShmem: the rings it maps are its
# clients' memory) stays under 256 MB.  What goes over a limit is
# refused, and the log names the limit's setting.  After the case,
# babeltrace2 reads the whole trace directory.  Besides:
#   rings: a program root starts during the attack is traced;
#   churn: no empty session directory is left, the index does not keep
#          a row per connection, the log does not hold lines per
#          connection.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-hostile.sh"
bg_track_init

# The settings (traced.conf(5)) a refusal must name, each a pattern for
# grep -E: the daemon's names live here and nowhere else in the test.
SET_PROVIDERS='providers-per-session'
SET_EVENT_CLASSES='event-classes-per-uid|events-per-session'
SET_EVENT_IDS='event-ids-per-uid|events-per-session'
SET_RINGS='rings-per-uid|ring-bytes-per-uid'

ATTACK_S=${HOSTILE_ATTACK_S:-10}	# seconds of each attack
# CASES="rings churn" runs only those (all by default).
CASES=${CASES:-providers event-id rings churn ring-numbers}
want() { case " $CASES " in *" $1 "*) return 0 ;; esac; return 1; }

hostile_init
# The descriptors of the machine the finding was made on, whatever this
# one's: 19,980 rings must not take them all.
ulimit -n 20000 2>/dev/null || echo "descriptor limit stays $(ulimit -n)"

# 1. 24 providers of 65,536 events.
if want providers; then
attack providers "finding 4 (24 providers of 65,536 events)" \
	providers 24 65536 $ATTACK_S
rate_check "$WHAT"
acked=$(sed -n 's/.* \([0-9]*\) acked.*/\1/p' "$T/providers.out")
[ -n "$acked" ] && [ "$acked" -lt 24 ] && providers_refused "$T/providers.out" ||
	hfail "$WHAT: the daemon took every provider: $(cat "$T/providers.out")"
refused_naming "$SET_PROVIDERS|$SET_EVENT_CLASSES"
case_end
fi

# 2. One event id of 2^24 - 1.
if want event-id; then
attack event-id "finding 4 (an event id of 2^24 - 1)" event-id $ATTACK_S
rate_check "$WHAT"
grep -q "was refused" "$T/event-id.out" ||
	hfail "$WHAT: the daemon took the event id: $(cat "$T/event-id.out")"
refused_naming "$SET_EVENT_IDS|$SET_EVENT_CLASSES"
case_end
fi

# 3. Two sessions of 9,990 rings; halfway, root starts a program.
if want rings; then
WATCH_AT=$((ATTACK_S / 2))
WATCH_HOOK=late_program
attack rings "finding 4 (two sessions of 9,990 rings)" rings 2 9990 $ATTACK_S
late_check
rate_check "$WHAT"
# A refused ring may not be visible from the client's side (no answer
# to RING in the protocol): the log says it.
refused_naming "$SET_RINGS"
case_end
fi

# 4. 5,000 connections a second that say HELLO and leave.  (Not 'n':
# wait_for uses it.)
if want churn; then
attack churn "finding 4 (5,000 connections a second)" churn 5000 $ATTACK_S
rate_check "$WHAT"
nconn=$(sed -n 's/^churn: \([0-9]*\) connections.*/\1/p' "$T/churn.out")
[ -n "$nconn" ] && [ "$nconn" -ge 1000 ] ||
	hfail "$WHAT: the hostile client made too few connections to show anything: $(cat "$T/churn.out")"
wait_for 10 sh -c "[ \$('$BIN/tracectl' --json info trace | jq '.items[0].sessions') = 0 ]" ||
	hfail "$WHAT: sessions left after the churn: $(ctl info trace | head -n 5)"
# Session directories without a stream file (one find: thousands today).
dirs=$(find "$TRACES" -mindepth 1 -maxdepth 1 -type d | wc -l)
full=$(find "$TRACES" -mindepth 2 -maxdepth 2 -name 'stream-*' -printf '%h\n' |
	sort -u | wc -l)
empty=$((dirs - full))
[ "$empty" = 0 ] ||
	hfail "$WHAT: $empty empty session directories left behind by $nconn connections"
ctl --json info sessions --all --pid "$HPID" >"$T/rows.json" ||
	hfail "$WHAT: tracectl info sessions failed: $(head -c 300 "$T/rows.json")"
rows=$(jq '.items | length' "$T/rows.json") ||
	hfail "$WHAT: tracectl --json info sessions is not JSON"
[ "$rows" -le $((nconn / 100)) ] ||
	hfail "$WHAT: the index keeps $rows rows for $nconn empty connections"
lines=$(log_since | wc -l)
[ "$lines" -le "$LOG_MAX_LINES" ] ||
	hfail "$WHAT: the log grew by $lines lines for $nconn empty connections (at most $LOG_MAX_LINES): $(log_since | tail -n 2)"
echo "after $nconn connections: no empty directory, $rows index rows, $lines log lines"
case_end
fi

# 5. Issue 25, finding 4: 370 sessions of 11 rings each, numbered so
# that an array of rings by number would double with each ring (to 2^20
# entries, 8 MiB a session: 3 GB in all).  The daemon holds them all
# (they are within rings-per-uid) in memory that follows the rings,
# not their numbers; watch_daemon checks it every second.
if want ring-numbers; then
attack ring-numbers "issue 25 finding 4 (370 sessions of 11 rings numbered far apart)" \
	rings 370 11 $ATTACK_S spread
rate_check "$WHAT"
held=$(awk '/^rings: session/ { h += $4 } END { print h + 0 }' \
	"$T/ring-numbers.out")
[ "$held" -ge $((370 * 11 * 9 / 10)) ] ||
	hfail "$WHAT: the attack did not get its rings in ($held of $((370 * 11)) held): $(tail -n 3 "$T/ring-numbers.out")"
echo "$held rings held, numbered up to $(( (1 << 20) - 1 )) or so"
case_end
fi
