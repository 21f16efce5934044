#!/bin/sh
# SPDX-License-Identifier: MIT
# Copyright (c) 2026 The traced authors
#
# The Debian packages (make deb) installed as a user would, with 'apt
# install ./traced_*.deb ./libtraced1_*.deb', in a minimal Debian 12 that
# boots systemd (systemd-nspawn, as 075; see lib-nspawn.sh).  Its root
# filesystem has none of the libraries traced links, so apt has to
# fetch them from Debian's archive as the packages' Depends say (the
# container shares the host's network; the .deb files apt fetches are
# cached in $TRACED_CI_CACHE/apt-archives).  Checked:
#   - make deb builds traced, libtraced1 and libtraced-dev, and lintian
#     finds no error (make deb fails otherwise);
#   - installing brings libevent, jansson, sqlite and libsystemd, creates
#     the user traced and its directories, and enables and starts
#     traced.socket and traced-control.socket, not the service;
#   - 'systemctl start traced' runs the daemon (Type=notify, active, user
#     traced);
#   - a program built against the installed libtraced-dev (its tracegen,
#     header and pkg-config file) is traced: 'tracectl print' in the
#     container shows its events with their values;
#   - 'apt remove traced' leaves no traced process, and a traced program
#     run afterwards does not start one again; purge removes the
#     settings file.
# Not under SANITIZE: a package is the plain build (make deb builds it
# apart, without the sanitizers), so there is nothing of the sanitizer
# build to check here; .ci/run leaves it out of that run.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-nspawn.sh"

[ -z "${SANITIZE:-}" ] ||
	skip "the package is the plain build: not run under SANITIZE"
nspawn_require
for c in dpkg-buildpackage dh lintian; do
	command -v $c >/dev/null 2>&1 ||
		fail "$c not found: apt-get install dpkg-dev debhelper lintian"
done

# 1. The packages.
t0=$(date +%s)
make -s -C "$SRC" O="$O" deb >"$T/deb.log" 2>&1 ||
	fail "make deb: $(tail -n 20 "$T/deb.log")"
DEBS="$O/deb"
for p in traced libtraced1 libtraced-dev; do
	set -- "$DEBS/${p}_"*.deb
	[ -f "$1" ] || fail "make deb made no $p package: $(ls "$DEBS")"
done
ok "make deb: traced, libtraced1, libtraced-dev in $DEBS, lintian without error ($(( $(date +%s) - t0 )) s)"

# 2. A Debian 12 without traced's libraries: 075's, with them purged.
t0=$(date +%s)
nspawn_rootfs "$NSPAWN_PKGS"
# shellcheck disable=SC2086
chroot "$ROOT" dpkg --purge $NSPAWN_LIBS >"$T/purge.log" 2>&1 ||
	fail "dpkg --purge $NSPAWN_LIBS: $(tail -n 5 "$T/purge.log")"
for l in libevent-core-2.1-7 libjansson4 libsqlite3-0; do
	! dpkg-query --admindir="$ROOT/var/lib/dpkg" -W -f='${Status}\n' $l \
		2>/dev/null | grep -q "ok installed" ||
		fail "the root filesystem already has $l: it would not test Depends"
done
mkdir "$ROOT/root/debs"
cp "$DEBS"/traced_*.deb "$DEBS"/libtraced1_*.deb "$DEBS"/libtraced-dev_*.deb \
	"$ROOT/root/debs/"
mkdir -p "$CACHE/apt-archives/partial"
nspawn_boot --bind="$CACHE/apt-archives:/var/cache/apt/archives"

# 3. apt install, as the README says.
apt_ct() { in_ct env DEBIAN_FRONTEND=noninteractive apt-get -q "$@"; }
apt_ct update >"$T/apt.log" 2>&1 ||
	skip "apt-get update in the container (no network to Debian's archive?): $(tail -n 3 "$T/apt.log" | tr '\n' ' ')"
in_ct sh -c 'cd /root/debs && DEBIAN_FRONTEND=noninteractive apt-get -q -y \
	install ./traced_*.deb ./libtraced1_*.deb' >"$T/apt.log" 2>&1 ||
	fail "apt install ./traced_*.deb ./libtraced1_*.deb: $(tail -n 20 "$T/apt.log")"
for l in libevent-core-2.1-7 libjansson4 libsqlite3-0 libsystemd0 traced libtraced1; do
	in_ct dpkg-query -W -f='${Status}\n' $l 2>/dev/null | grep -q "ok installed" ||
		fail "$l not installed: $(tail -n 20 "$T/apt.log")"
done
in_ct id traced >/dev/null 2>&1 || fail "no user traced after install"
dirs=$(in_ct stat -c '%a %U:%G %n' /var/lib/traced /var/lib/traced/traces | tr '\n' ' ')
[ "$dirs" = "750 traced:traced /var/lib/traced 750 traced:traced /var/lib/traced/traces " ] ||
	fail "directories from tmpfiles.d: $dirs"
for u in traced.socket traced-control.socket; do
	[ "$(in_ct systemctl is-enabled $u)" = enabled ] || fail "$u not enabled"
	in_ct systemctl is-active $u >/dev/null || fail "$u not listening after install"
done
! in_ct systemctl is-active traced.service >/dev/null 2>&1 ||
	fail "install started traced.service: the sockets are to start it"
ok "apt installed traced with libevent, jansson, sqlite from Debian; sockets enabled and listening ($(( $(date +%s) - t0 )) s with the boot)"

# 4. systemctl start traced.
in_ct systemctl start traced >"$T/ct.log" 2>&1 ||
	fail "systemctl start traced: $(cat "$T/ct.log"; in_ct journalctl -u traced --no-pager | tail -n 10)"
[ "$(in_ct systemctl show -p Type --value traced.service)" = notify ] ||
	fail "traced.service is not Type=notify"
in_ct systemctl is-active traced.service >/dev/null || fail "traced.service not active"
status=$(in_ct systemctl show -p StatusText --value traced.service)
echo "$status" | grep -Eq '^[0-9]+ sessions?, [0-9]+ events/s, 0 lost$' ||
	fail "StatusText: '$status'"
main=$(in_ct systemctl show -p MainPID --value traced.service)
uid=$(in_ct sed -n 's/^Uid:[[:space:]]*\([0-9]*\).*/\1/p' "/proc/$main/status")
[ "$uid" = "$(in_ct id -u traced)" ] || fail "traced runs as uid $uid, not traced"
ok "systemctl start traced: active, Type=notify, user traced, '$status'"

# 5. A program built with the installed libtraced-dev: its tracegen in
# the container, its header and pkg-config file from the container's
# /usr (a compiler is the host's).
in_ct sh -c 'cd /root/debs && DEBIAN_FRONTEND=noninteractive apt-get -q -y \
	install ./libtraced-dev_*.deb' >"$T/apt.log" 2>&1 ||
	fail "apt install ./libtraced-dev_*.deb: $(tail -n 20 "$T/apt.log")"
mkdir -p "$ROOT/root/ex"
cp "$SRC/example/trace-events" "$SRC/example/example.c" "$ROOT/root/ex/"
in_ct tracegen --header -o /root/ex/trace.h /root/ex/trace-events &&
	in_ct tracegen --source -o /root/ex/trace.c /root/ex/trace-events ||
	fail "the installed tracegen"
ma=$(${CC:-cc} -print-multiarch)
pc=$(PKG_CONFIG_SYSROOT_DIR="$ROOT" \
	PKG_CONFIG_LIBDIR="$ROOT/usr/lib/$ma/pkgconfig" \
	pkg-config --cflags --libs libtraced) ||
	fail "pkg-config finds no libtraced.pc in the container's /usr/lib/$ma"
# shellcheck disable=SC2086
${CC:-cc} -O2 -o "$ROOT/usr/local/bin/traced-example" "$ROOT/root/ex/example.c" \
	"$ROOT/root/ex/trace.c" -I"$ROOT/root/ex" $pc -pthread 2>"$T/cc.err" ||
	fail "building the example with pkg-config ($pc): $(cat "$T/cc.err")"
in_ct env TRACED_CONNECT_TIMEOUT_MS=10000 traced-example 3 20 >"$T/ex.out" 2>&1 ||
	fail "traced-example: $(cat "$T/ex.out")"
in_ct tracectl trace-file flush >"$T/ctl.out" 2>&1 ||
	fail "tracectl trace-file flush: $(cat "$T/ctl.out")"
in_ct tracectl print /var/lib/traced/traces >"$T/print.txt" 2>"$T/print.err" ||
	fail "tracectl print: $(cat "$T/print.err")"
# Each worker's items 0-19 once, a message every fifth, the start and
# the totals; the disabled event nowhere.
sed -n 's/.*:example_work: item \([0-9]*\) on worker \([0-9]*\) even=\([01]\) .*/\2 \1 \3/p' \
	"$T/print.txt" | sort -n -k1,1 -k2,2 >"$T/work"
for w in 0 1 2; do
	i=0
	while [ $i -lt 20 ]; do echo "$w $i $(( (i + 1) % 2 ))"; i=$((i + 1)); done
done >"$T/work.want"
cmp -s "$T/work" "$T/work.want" ||
	fail "example_work events: $(diff "$T/work.want" "$T/work" | head -n 10)"
n=$(grep -c ':example_message: worker [012] says hello \(0\|5\|10\|15\)$' "$T/print.txt" || true)
[ "$n" = 12 ] || fail "$n example_message events, not 12: $(grep example_message "$T/print.txt" | head -n 5)"
grep -q ':example_start: starting 3 worker threads for the example$' "$T/print.txt" ||
	fail "no example_start: $(head -n 3 "$T/print.txt")"
grep -q ':example_done: done: 60 items, 480 bytes$' "$T/print.txt" ||
	fail "no example_done with the totals: $(tail -n 3 "$T/print.txt")"
! grep -q example_verbose "$T/print.txt" || fail "example_verbose is disabled"
ok "a program built with libtraced-dev is traced: 60 work items, 12 messages, start and done, by tracectl print"

# 6. apt remove: no daemon left, none started again.
daemons() { in_ct sh -c 'grep -lx traced /proc/[0-9]*/comm 2>/dev/null || true'; }
[ "$(daemons)" = "/proc/$main/comm" ] ||
	fail "before apt remove, traced is not the one process '$main': $(daemons)"
apt_ct remove -y traced >"$T/apt.log" 2>&1 ||
	fail "apt remove traced: $(tail -n 20 "$T/apt.log")"
left=$(daemons)
[ -z "$left" ] || fail "traced still running after apt remove: $left"
for u in traced.service traced.socket traced-control.socket; do
	! in_ct systemctl is-active $u >/dev/null 2>&1 ||
		fail "$u still active after apt remove"
done
in_ct env TRACED_DEBUG=1 TRACED_CONNECT_TIMEOUT_MS=2000 traced-example 1 5 \
	>"$T/ex.out" 2>&1 || fail "traced-example without a daemon: $(cat "$T/ex.out")"
grep -q "no daemon" "$T/ex.out" ||
	fail "the library found a daemon after apt remove: $(cat "$T/ex.out")"
left=$(daemons)
[ -z "$left" ] || fail "a traced program started traced after apt remove: $left"
in_ct test -f /etc/traced/traced.conf || fail "apt remove took the settings file"
apt_ct purge -y traced >"$T/apt.log" 2>&1 || fail "apt purge traced: $(tail -n 20 "$T/apt.log")"
! in_ct test -e /etc/traced/traced.conf || fail "apt purge left /etc/traced/traced.conf"
ok "apt remove traced: no traced process, the sockets gone, a program runs untraced; purge removes traced.conf"
