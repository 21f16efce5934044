#!/bin/sh
# SPDX-License-Identifier: MIT
# Run integration scripts; each gets $O (absolute build dir) and $SRC.
# Prints a line per script and "N passed, N failed" at the end; exits 1
# if any failed.  A script exiting 77 is counted as skipped.  A script
# still running after TEST_TIMEOUT seconds (300; 0: no limit) is ended,
# with every process it started (timeout(1) signals its process group),
# and counted as failed: one hang must not take the whole run with it.
set -u
limit=${TEST_TIMEOUT:-300}
SRC=$(cd "$(dirname "$0")/.." && pwd)
export SRC O
pass=0 fail=0 skip=0
for t in "$@"; do
	name=$(basename "$t" .sh)
	log="$O/tests/integration/$name.log"
	mkdir -p "$O/tests/integration"
	start=$(date +%s)
	if [ "$limit" -gt 0 ]; then
		timeout -k 10 "$limit" sh "$t" >"$log" 2>&1
	else
		sh "$t" >"$log" 2>&1
	fi
	rc=$?
	secs=$(( $(date +%s) - start ))
	[ "$limit" -gt 0 ] && [ $rc = 124 -o $rc = 137 ] &&
		echo "TIMEOUT: still running after $limit s (TEST_TIMEOUT)" >>"$log"
	case $rc in
	0) pass=$((pass + 1)); echo "PASS  $name (${secs}s)" ;;
	77) skip=$((skip + 1)); echo "SKIP  $name: $(tail -n 1 "$log")" ;;
	*) fail=$((fail + 1)); echo "FAIL  $name (exit $rc), log $log:"
	   sed 's/^/    /' "$log" | tail -n 40 ;;
	esac
done
echo "integration: $pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
