#!/bin/sh
# SPDX-License-Identifier: MIT
# Issue 9, finding 7: the control socket has limits.  A daemon run by
# root, control.sock opened to everyone (as 074 does: reading commands
# are then allowed to all).  Another user keeps a session with many
# events (providers of 4,096 events: 'info trace-events' has a large
# reply), then for 10 s:
#   - 300 control connections ask for 'info trace-events' and never
#     read the reply: the daemon's own memory (VmRSS - RssShmem) stays
#     under 256 MB and root's 'tracectl info trace' answers within 1 s,
#     every second;
#   - one control connection never sends a request: the daemon closes
#     it after its idle timeout.
# babeltrace2 reads the trace directory afterwards.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-hostile.sh"
bg_track_init

# The idle timeout of a control connection: control-timeout in
# traced.conf(5), its default; the test allows 2 s more.
IDLE_TIMEOUT_S=10
# The connection is timed from its accept(), which a daemon flooded by
# 300 readers may make a few seconds after the connect: 2 s more,
# CTL_MAX_MS more under ASan (where root's tracectl may wait that long).
IDLE_SLACK_S=2
[ "$CTL_MAX_MS" -le 1000 ] || IDLE_SLACK_S=$((CTL_MAX_MS / 1000))
ATTACK_S=${HOSTILE_ATTACK_S:-10}	# seconds of each attack
NPROV=8			# providers of 4,096 events the other user keeps

hostile_init
start_daemon
chmod 0666 "$TRACED_RUNTIME_DIR/control.sock"
"$HELPERS/emit" -t 1 -i 1000 -s "$T/stop" >/dev/null &
e=$!
bg_track $e

# The other user's session with many events, kept through the attack.
$AS_HOSTILE env TRACED=0 "$HELPERS/hostile" providers $NPROV 4096 \
	$((ATTACK_S + IDLE_TIMEOUT_S + 10)) >"$T/providers.out" 2>&1 &
hp=$!
bg_track $hp
# Each accepted provider's first event, once the daemon took them all
# (or refused the rest: no new one for a second).
known=0
i=0
while [ $i -lt 40 ]; do
	n=$(ctl info trace-events 'hostile*:e0' 2>/dev/null | grep -c 'hostile[0-9]*:e0 ' || true)
	[ "$n" = "$known" ] && [ "$n" -gt 0 ] && [ $i -ge 4 ] && break
	known=$n
	i=$((i + 1))
	sleep 0.25
done
[ "$known" -gt 0 ] ||
	hfail "finding 7: the other user's provider of 4,096 events was refused: the test cannot ask for a large reply"
echo "the other user's session has $known providers of 4096 events: 'info trace-events' replies $((known * 4096)) lines"

WHAT="finding 7 (300 control connections that never read)"
$AS_HOSTILE env TRACED=0 "$HELPERS/hostile" ctl-idle $((IDLE_TIMEOUT_S + IDLE_SLACK_S)) \
	>"$T/idle.out" 2>&1 &
idle=$!
$AS_HOSTILE env TRACED=0 "$HELPERS/hostile" ctl-noread 300 $ATTACK_S \
	info trace-events >"$T/noread.out" 2>&1 &
noread=$!
bg_track $idle $noread
watch_daemon $ATTACK_S "$WHAT"
wait $noread || hfail "$WHAT: hostile: $(cat "$T/noread.out")"
cat "$T/noread.out"
watch_summary
ok "$WHAT: memory bounded, root's tracectl answered every second"

WHAT="finding 7 (an idle control connection)"
wait $idle || hfail "$WHAT: hostile: $(cat "$T/idle.out")"
cat "$T/idle.out"
grep -q "closed by the daemon" "$T/idle.out" ||
	hfail "$WHAT: the daemon kept a control connection that never sent a request for $((IDLE_TIMEOUT_S + IDLE_SLACK_S)) s"
ok "$WHAT: closed"

touch "$T/stop"
wait $e || hfail "emit exited with $?"
ctl trace-file flush >/dev/null
bt "$TRACES" >/dev/null 2>"$T/bt.err" ||
	hfail "finding 7: babeltrace2 cannot read $TRACES: $(head -c 300 "$T/bt.err")"
stop_daemon
