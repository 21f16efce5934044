#!/bin/sh
# SPDX-License-Identifier: MIT
# Run each libFuzzer target for SECONDS, from its seed corpus in
# tests/fuzz/corpus/NAME plus what earlier runs found in
# $O/fuzz/corpus/NAME (new inputs go there, never into the source
# tree).  Prints one line per target with its executions, and
# "fuzz: N passed, N failed"; exits 1 if any target found a crash, a
# leak or a timeout (the input is kept in $O/fuzz/artifacts/).
#   tests/fuzz/run.sh SECONDS BIN...
set -u
secs=$1; shift
SRC=$(cd "$(dirname "$0")/../.." && pwd)
pass=0 fail=0
for bin in "$@"; do
	name=$(basename "$bin"); name=${name#fuzz_}
	work="$O/fuzz/corpus/$name"
	art="$O/fuzz/artifacts/$name/"
	log="$O/fuzz/$name.log"
	mkdir -p "$work" "$art"
	# -timeout: an input that takes a second is a finding (a hang in
	# the daemon's loop thread); -rss_limit_mb: so is unbounded memory.
	"$bin" -max_total_time="$secs" -timeout=2 -rss_limit_mb=1024 \
		-max_len=65536 -print_final_stats=1 -artifact_prefix="$art" \
		"$work" "$SRC/tests/fuzz/corpus/$name" >"$log" 2>&1
	rc=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
	cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1)
	if [ $rc -eq 0 ]; then
		pass=$((pass + 1))
		echo "PASS  fuzz_$name: ${runs:-?} runs in ${secs}s, $cov"
	else
		fail=$((fail + 1))
		echo "FAIL  fuzz_$name (exit $rc), log $log:"
		grep -A 25 'ERROR\|==ERROR\|runtime error\|Test unit written' \
			"$log" | head -n 40 | sed 's/^/    /'
	fi
done
echo "fuzz: $pass passed, $fail failed"
[ $fail -eq 0 ]
