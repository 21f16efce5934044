#!/bin/sh
# SPDX-License-Identifier: MIT
# Install (as root on Debian) or name the packages traced needs.
#   tools/deps.sh build test bench
# Each argument names a set; missing packages of those sets are installed
# with apt-get when run as root, and listed with the command to run
# otherwise.
set -u

missing=""
need_pc() {	# pkg-config-module debian-package
	pkg-config --exists "$1" 2>/dev/null || missing="$missing $2"
}
need_cmd() {	# command debian-package
	command -v "$1" >/dev/null 2>&1 || missing="$missing $2"
}

command -v pkg-config >/dev/null 2>&1 || missing="$missing pkg-config"
for set in "$@"; do
	case $set in
	build)
		need_cmd cc gcc
		need_cmd make make
		need_pc libevent_core libevent-dev
		need_pc libevent_pthreads libevent-dev
		need_pc sqlite3 libsqlite3-dev
		need_pc libsystemd libsystemd-dev
		need_pc jansson libjansson-dev
		# tracectl export -o FILE.gz
		need_pc zlib zlib1g-dev
		# libtraced opens libelf.so.1 for function tracing (headers only
		# at build time).
		need_pc libelf libelf-dev
		;;
	test)
		need_pc cmocka libcmocka-dev
		need_cmd babeltrace2 babeltrace2
		# <sys/sdt.h>, for tracegen's dtrace backend
		need_cmd dtrace systemtap-sdt-dev
		need_cmd jq jq
		need_cmd protoc protobuf-compiler
		need_cmd python3 python3
		need_cmd xz xz-utils
		# formats the man pages (015)
		need_cmd groff groff-base
		# reads the uftrace export (tests/integration/100-*)
		need_cmd uftrace uftrace
		;;
	bench)
		need_cmd uftrace uftrace
		need_cmd jq jq
		need_cmd lttng lttng-tools
		need_cmd lttng-sessiond lttng-tools
		need_pc lttng-ust liblttng-ust-dev
		need_cmd babeltrace2 babeltrace2
		[ -x /usr/bin/time ] || missing="$missing time"
		;;
	fuzz)
		need_cmd clang clang
		;;
	*)
		echo "deps.sh: unknown set '$set'" >&2
		exit 2
		;;
	esac
done

# Each package once.
missing=$(printf '%s\n' $missing | sort -u | tr '\n' ' ')
[ -n "${missing# }" ] || exit 0

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
	echo "Installing missing packages:$missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >/dev/null &&
	    apt-get install -y -qq --no-install-recommends $missing >/dev/null ||
	    { echo "deps.sh: apt-get install$missing failed" >&2; exit 1; }
	exit 0
fi
echo "Missing build dependencies:$missing" >&2
echo "On Debian or Ubuntu: sudo apt-get install$missing" >&2
exit 1
