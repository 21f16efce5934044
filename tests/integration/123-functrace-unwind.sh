#!/bin/sh
# SPDX-License-Identifier: MIT
# Calls that do not return the usual way, with each kind of
# instrumentation: fork() (the child traces into a session of its own
# and exits from inside a traced function), signal handlers that call
# traced functions (on the thread's stack and on an alternate stack)
# and one that siglongjmp()s out, longjmp() out of three levels 1100
# times (more than the 1024 frames a thread has), a thread that calls
# pthread_exit() three levels down, exit() from three levels down with
# an atexit handler that calls a traced function, and recursion past
# depth 1024 (counted, not traced).  Each program ends well; in each
# trace every exit closes the innermost open call of its thread at its
# depth (calls left by longjmp and pthread_exit get their exits late),
# and the counts are exact.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ftlib.sh"

start_daemon
ctl trace-func '*' on >/dev/null

run() {	# VARIANT MODE ARGS...: run, check "done", events of its sessions
	v=$1; shift
	"$HELPERS/$v" "$@" > "$T/out" 2>&1 || fail "$v $*: exit $?: $(cat "$T/out")"
	grep -q '^done$' "$T/out" || fail "$v $*: $(cat "$T/out")"
	ctl trace-file flush >/dev/null
	wait_no_sessions 10 || fail "$v $*: the sessions did not end"
	rm -rf "$T/cur" && mkdir "$T/cur"
	for d in "$TRACES"/*; do
		[ -d "$d" ] && mv "$d" "$T/cur/"
	done
	ft_events "$T/cur" "$T/ev"
}

want() {	# LABEL GOT WANT
	[ "$2" = "$3" ] || fail "$1: $2, expected $3"
}

nest() {	# LABEL [ALLOW_OPEN]
	ft_nesting "$T/ev" "${2:-^main\$}" > "$T/nest" ||
		fail "$1: nesting: $(head -5 "$T/nest")"
}

for v in $FT_VARIANTS; do
	# fork: the child's calls are in the child's session.
	run $v fork 50
	child=$(sed -n 's/^child //p' "$T/out")
	[ "$(ls -d "$T/cur"/*-$child-* 2>/dev/null | wc -l)" = 1 ] ||
		fail "$v fork: no session of child $child: $(ls "$T/cur")"
	ft_events "$(echo "$T/cur"/*-$child-*)" "$T/ev.child"
	want "$v fork: work calls in all" "$(ft_count "$T/ev" E work)" 150
	want "$v fork: work calls in the child" \
	    "$(ft_count "$T/ev.child" E work)" 50
	want "$v fork: child_exit" "$(ft_count "$T/ev.child" E child_exit)" 1
	mv "$T/ev.child" "$T/ev"
	nest "$v fork (child)" '^(main|do_fork|child_exit)$'
	ok "$v: fork"

	run $v signal 10
	grep -q "^handled 20$" "$T/out" || fail "$v signal: $(cat "$T/out")"
	want "$v signal: sig_leaf calls" "$(ft_count "$T/ev" E sig_leaf)" 30
	want "$v signal: sig_leaf returns" "$(ft_count "$T/ev" X sig_leaf)" 30
	want "$v signal: deep_then_signal calls" \
	    "$(ft_count "$T/ev" E deep_then_signal)" $((10 * (31 + 31 + 21)))
	want "$v signal: deep_then_signal returns (some late)" \
	    "$(ft_count "$T/ev" X deep_then_signal)" $((10 * (31 + 31 + 21)))
	nest "$v signal" '^(main)$'
	ok "$v: signal handlers, sigaltstack, siglongjmp"

	run $v longjmp 1100
	for f in jump_a jump_b jump_c; do
		want "$v longjmp: $f calls" "$(ft_count "$T/ev" E $f)" 1100
		want "$v longjmp: $f returns (late)" "$(ft_count "$T/ev" X $f)" 1100
	done
	want "$v longjmp: after_jumps" "$(ft_count "$T/ev" E after_jumps)" 1
	nest "$v longjmp"
	ok "$v: longjmp out of three levels, 1100 times"

	run $v thread-exit
	for f in ex_a ex_b ex_c; do
		want "$v thread-exit: $f" "$(ft_count "$T/ev" E $f) $(ft_count "$T/ev" X $f)" "1 1"
	done
	want "$v thread-exit: work afterwards" "$(ft_count "$T/ev" E work)" 10
	nest "$v thread-exit"
	ok "$v: a thread leaves with pthread_exit() from depth 3"

	run $v exit
	for f in ex_a ex_b ex_c at_end; do
		want "$v exit: $f" "$(ft_count "$T/ev" E $f)" 1
	done
	want "$v exit: leaf (ex_c, at_end)" "$(ft_count "$T/ev" E leaf)" 2
	nest "$v exit" '^(main|ex_a|ex_b|ex_c)$'
	ok "$v: exit() from depth 3, an atexit handler traced"

	D="$T/sync-$v"
	mkdir -p "$D"
	"$HELPERS/$v" depth 1500 "$D" > "$T/out" 2>&1 &
	pid=$!
	wait_for 20 test -e "$D/done-1" || fail "$v depth: did not get there"
	# main and 1023 levels of rec() are traced: 1500 - 1023 rec() and
	# the leaf() below are not.
	wait_for 10 sh -c "'$BIN/tracectl' info tracers | grep -q '\[$pid\]:.* 478 deeper than 1024'" ||
		fail "$v depth: info tracers: $(ctl info tracers)"
	touch "$D/go-1"
	wait $pid || fail "$v depth: exit $?"
	ctl trace-file flush >/dev/null
	wait_no_sessions 10
	rm -rf "$T/cur" && mkdir "$T/cur" && mv "$TRACES"/* "$T/cur/"
	ft_events "$T/cur" "$T/ev"
	want "$v depth: rec calls traced" "$(ft_count "$T/ev" E rec)" 1023
	want "$v depth: rec returns" "$(ft_count "$T/ev" X rec)" 1023
	nest "$v depth"
	ok "$v: depth 1500: 1023 levels traced, 478 calls counted"
done
