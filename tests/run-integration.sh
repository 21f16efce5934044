#!/bin/sh
# SPDX-License-Identifier: MIT
# Run integration scripts; each gets $O (absolute build dir) and $SRC.
# Prints a line per script and "N passed, N failed" at the end; exits 1
# if any failed.  A script exiting 77 is counted as skipped.
set -u
SRC=$(cd "$(dirname "$0")/.." && pwd)
export SRC O
pass=0 fail=0 skip=0
for t in "$@"; do
	name=$(basename "$t" .sh)
	log="$O/tests/integration/$name.log"
	mkdir -p "$O/tests/integration"
	start=$(date +%s)
	sh "$t" >"$log" 2>&1
	rc=$?
	secs=$(( $(date +%s) - start ))
	case $rc in
	0) pass=$((pass + 1)); echo "PASS  $name (${secs}s)" ;;
	77) skip=$((skip + 1)); echo "SKIP  $name: $(tail -n 1 "$log")" ;;
	*) fail=$((fail + 1)); echo "FAIL  $name (exit $rc), log $log:"
	   sed 's/^/    /' "$log" | tail -n 40 ;;
	esac
done
echo "integration: $pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
