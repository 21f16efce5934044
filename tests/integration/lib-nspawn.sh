# SPDX-License-Identifier: MIT
# Copyright (c) 2026 The traced authors
#
# Shared by the tests that boot Debian's systemd as PID 1 in a
# systemd-nspawn container (075, 077); shared/systemd-nspawn.md says
# why each step is done the way it is.  Sourced after lib.sh:
#
#   nspawn_require          skip unless root with the tools it takes
#   nspawn_rootfs PKGS      $ROOT: a copy of a debootstrap (minbase) of
#                           bookworm with PKGS (comma-separated), made
#                           once and cached in $CACHE
#   nspawn_boot [OPTION...] boot $ROOT with these extra systemd-nspawn
#                           options; sets $PID1 once systemd is running
#   in_ct COMMAND...        run COMMAND in the container
#
# The container is powered off and its cgroups removed when the test
# exits, pass or fail.  Only what cannot be made or booted here skips
# (exit 77); everything after the boot is the test's to check.

CACHE=${TRACED_CI_CACHE:-/var/cache/traced-ci}
# One root filesystem for both tests (a debootstrap takes a minute and
# a half on a fresh CI machine): systemd, and the runtime libraries
# traced links (NSPAWN_LIBS), which 075 needs (make install brings
# none) and 077 removes from its copy (apt must bring them).
NSPAWN_LIBS="libevent-2.1-7 libevent-core-2.1-7 libevent-pthreads-2.1-7
    libsqlite3-0 libjansson4 libncursesw6"
NSPAWN_PKGS="systemd,systemd-sysv,dbus,libasan8,libubsan1,$(echo $NSPAWN_LIBS | tr ' ' ',')"
NAME=traced-test-$$
ROOT="$T/root"
NSPAWN=
PID1=
CGROUPS=

container_cleanup() {
	if [ -n "$NSPAWN" ]; then
		kill "$NSPAWN" 2>/dev/null || true	# powers off cleanly
		i=0
		while kill -0 "$NSPAWN" 2>/dev/null && [ $i -lt 300 ]; do
			sleep 0.1; i=$((i + 1))
		done
		kill -9 "$NSPAWN" 2>/dev/null || true
		wait "$NSPAWN" 2>/dev/null || true
	fi
	# With --keep-unit nspawn leaves payload/ and supervisor/ behind.
	for cg in $CGROUPS; do
		find "$cg" -depth -type d -exec rmdir {} \; 2>/dev/null || true
	done
	rmdir "/run/systemd/nspawn/propagate/$NAME" 2>/dev/null || true
}
# set +e: under set -e, '(exit $st)' would end the trap before cleanup
# when the test failed, leaving $T and its copy of the root filesystem.
trap 'st=$?; set +e; container_cleanup; (exit $st); cleanup' EXIT

nspawn_require() {
	[ "$(id -u)" = 0 ] || skip "needs root to boot a container"
	for c in systemd-nspawn debootstrap nsenter flock; do
		command -v $c >/dev/null 2>&1 ||
			skip "$c not found (apt-get install systemd-container debootstrap)"
	done
}

# The root filesystem, made once (under a lock: tests may run in
# parallel) and copied for this run, which may change it at will.  Its
# name carries a checksum of PKGS: each set of packages has its own.
nspawn_rootfs() {
	_base="$CACHE/rootfs-bookworm-$(echo "$1" | cksum | cut -d' ' -f1)"
	mkdir -p "$CACHE"
	_mirror=$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources \
		2>/dev/null | head -n 1)
	: "${_mirror:=http://deb.debian.org/debian}"
	(
		flock 9
		[ -f "$_base/.complete" ] && exit 0
		rm -rf "$_base.tmp"
		echo "debootstrap $_base (once; $_mirror)"
		debootstrap --variant=minbase --include="$1" bookworm \
			"$_base.tmp" "$_mirror" >"$T/debootstrap.log" 2>&1 || exit 1
		touch "$_base.tmp/.complete"
		mv "$_base.tmp" "$_base"
	) 9>"$CACHE/lock" ||
		skip "debootstrap failed (no network or mirror?): $(tail -n 2 "$T/debootstrap.log" | tr '\n' ' ')"
	cp -a "$_base" "$ROOT"
}

# Boot, from cgroups of our own.
nspawn_boot() {
	for d in /sys/fs/cgroup/systemd /sys/fs/cgroup/unified; do
		[ -d "$d" ] || continue
		mkdir "$d/$NAME" && CGROUPS="$CGROUPS $d/$NAME"
	done
	[ -n "$CGROUPS" ] || { [ -f /sys/fs/cgroup/cgroup.controllers ] &&
		mkdir "/sys/fs/cgroup/$NAME" && CGROUPS="/sys/fs/cgroup/$NAME"; } ||
		skip "no cgroup hierarchy to start the container from"
	# shellcheck disable=SC2016
	sh -c 'for c in $3; do echo $$ >"$c/cgroup.procs"; done
		r=$1 m=$2; shift 3
		exec systemd-nspawn -D "$r" -M "$m" --boot --register=no \
			--keep-unit --console=read-only "$@"' \
		sh "$ROOT" "$NAME" "$CGROUPS" "$@" >"$T/nspawn.log" 2>&1 &
	NSPAWN=$!
	i=0
	while :; do
		kill -0 "$NSPAWN" 2>/dev/null ||
			skip "systemd-nspawn cannot run here: $(tail -n 3 "$T/nspawn.log" | tr '\n' ' ')"
		PID1=$(cut -d' ' -f1 "/proc/$NSPAWN/task/$NSPAWN/children" 2>/dev/null || true)
		[ -n "$PID1" ] && [ -S "/proc/$PID1/root/run/systemd/private" ] && break
		i=$((i + 1))
		[ $i -lt 600 ] || skip "the container's systemd did not start in 30 s: $(tail -n 3 "$T/nspawn.log" | tr '\n' ' ')"
		sleep 0.05
	done
	_state=$(in_ct systemctl is-system-running --wait 2>&1 || true)
	case $_state in
	running|degraded) ;;
	*) skip "the container did not boot: $_state" ;;
	esac
	ok "systemd booted in the container ($_state)"
}

# A command in the container, with a clean environment (not the test's
# TRACED_RUNTIME_DIR).
in_ct() {
	nsenter -t "$PID1" -a env -i \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$@"
}
