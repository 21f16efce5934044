# SPDX-License-Identifier: MIT
# Shared by the function tracing tests (1xx-functrace-*): reading graph
# records back by name.  Sourced after lib.sh.

# The helper built three ways: patchable (PIE), mcount (not PIE),
# -finstrument-functions.
FT_VARIANTS="ftcalls ftcalls-mcount ftcalls-cyg"

# A program waits this long before main() for its functions to be patched
# as the rules say (the default, 200 ms, is for programs that must never
# wait long; on a loaded machine the first patch can take longer).
export TRACED_CONNECT_TIMEOUT_MS=10000

# ft_events DIR OUT: the events of the trace under DIR as lines
#   TID E|X NAME DEPTH	function entry or exit (graph records)
#   TID M SEQ		test_marker
#   TID L COUNT		a traced:lost record
# naming each address from the session's functions/module-* files.
ft_events() {
	: > "$T/names"
	for m in "$1"/functions/module-* "$1"/*/functions/module-*; do
		[ -f "$m" ] || continue
		base= body=
		while read -r start size kind name; do
			if [ -z "$body" ]; then
				case $start in
				base) base=$size ;;
				funcs) body=1 ;;
				esac
				continue
			fi
			a=$((base + 0x$start))
			# A site after endbr64 is 4 bytes into the function.
			printf '0x%X %s\n0x%X %s\n' "$a" "$name" $((a + 4)) "$name"
		done < "$m" >> "$T/names"
	done
	babeltrace2 "$1" 2>"$T/bt.err" | sed -n \
	    -e 's/.*traced:func_entry: { tid = \([0-9]*\) }, { addr = \(0x[0-9A-F]*\), depth = \([0-9]*\) }.*/\1 E \2 \3/p' \
	    -e 's/.*traced:func_exit: { tid = \([0-9]*\) }, { addr = \(0x[0-9A-F]*\), depth = \([0-9]*\) }.*/\1 X \2 \3/p' \
	    -e 's/.*test_marker: { tid = \([0-9]*\) }, { seq = \([0-9]*\) }.*/\1 M \2/p' \
	    -e 's/.*traced:lost: { tid = \([0-9]*\) }, { count = \([0-9]*\),.*/\1 L \2/p' \
	    > "$T/ev.raw" || fail "babeltrace2 cannot read $1: $(head -c 300 "$T/bt.err")"
	awk 'NR == FNR { name[$1] = $2; next }
	    ($2 == "E" || $2 == "X") { if (!($3 in name)) { print "unnamed " $3 > "/dev/stderr"; bad = 1 } else $3 = name[$3] }
	    { print } END { exit bad }' "$T/names" "$T/ev.raw" > "$2" 2>"$T/unnamed" ||
		fail "graph records with addresses no module file names: $(head -3 "$T/unnamed")"
}

# ft_count FILE KIND NAME: how many E or X lines of function NAME.
ft_count() {
	awk -v k="$2" -v n="$3" '$2 == k && $3 == n { c++ } END { print c + 0 }' "$1"
}

# ft_nesting FILE [ALLOW_OPEN]: every exit closes the innermost open
# entry of its thread, at the same depth, and each entry's depth is the
# number of calls open in its thread.  A thread's first record may be
# deeper: calls it had when its session began (a fork()ed child's).
# Calls still open at the end are
# an error unless their names match the regex ALLOW_OPEN.  Prints what
# is wrong; returns 1 if anything is.
ft_nesting() {
	awk -v allow="${2:-^$}" '
	$2 == "L" { lost = 1 }
	function first(t, depth,   i) {
		if (t in seen) return
		seen[t] = 1
		for (i = 0; i < depth; i++) st[t, i] = "(before)"
		n[t] = depth
	}
	$2 == "E" {
		t = $1; first(t, $4); d = n[t] + 0
		if (!lost && $4 != d)
			{ print "thread " t ": " $3 " entered at depth " $4 ", " d " open"; bad = 1 }
		st[t, d] = $3; n[t] = d + 1
	}
	$2 == "X" {
		t = $1; first(t, $4 + 1); d = n[t] - 1
		if (st[t, d] == "(before)") st[t, d] = $3
		if (d < 0) { if (!lost) { print "thread " t ": exit of " $3 " with nothing open"; bad = 1 }; next }
		if (st[t, d] != $3 || $4 != d)
			{ print "thread " t ": exit of " $3 " (depth " $4 ") closes " st[t, d] " (depth " d ")"; bad = 1 }
		n[t] = d
	}
	END {
		for (t in n)
			for (d = 0; d < n[t]; d++)
				if (st[t, d] !~ allow && st[t, d] != "(before)")
					{ print "thread " t ": " st[t, d] " never returned"; bad = 1 }
		exit bad
	}' "$1"
}
