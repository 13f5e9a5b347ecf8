#!/bin/sh
# make check's test step: every bats suite on the normal build and on the
# ASan+UBSan build at the same time, one bats process each.  A bats run is
# mostly one process after another, so on two cores the pair takes about as
# long as the slower pass instead of the sum.  Each pass writes its TAP log
# (with per-test times) beside its programs; at the end a summary per pass,
# every skipped test and every failing test's output.
#   sh tests/passes.sh NORMAL_BUILD_DIR ASAN_BUILD_DIR
# ND_AFTER_NORMAL: a command run when the normal pass ends, while the
# slower ASan pass goes on (make check: valgrind and the fuzz smoke, on the
# core the normal pass leaves idle); its output is printed at the end and
# its failure fails the run.
set -u
N=$1
A=$2
top=$(cd "$(dirname "$0")/.." && pwd)

# pass LOG CMD...: run CMD with its output in LOG, and in LOG.time its
# wall and CPU seconds (CPU is the figure to compare on a busy machine)
pass() {
	log=$1
	shift
	/usr/bin/time -f '%e s, %U+%S s of CPU' -o "$log.time" "$@" > "$log" 2>&1
}

# the two passes load each other: the fan-out stress tests need no busy
# loops of their own here (they would only slow the other pass)
export FANOUT_BUSY=0
after=${ND_AFTER_NORMAL:-}
(
	pass "$N/test.log" env ND_BIN="$N/bin" bats --tap --timing "$top/tests"
	st=$?
	if [ -n "$after" ]; then
		sh -c "$after" > "$N/after.log" 2>&1
		echo $? > "$N/after.status"
	fi
	exit $st
) &
np=$!
pass "$A/test.log" env ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 \
    UBSAN_OPTIONS=print_stacktrace=1 ND_BIN="$A/bin" ND_ASAN=1 \
    bats --tap --timing "$top/tests" &
ap=$!
trap 'kill $np $ap 2>/dev/null; exit 130' INT TERM
wait $np
nst=$?
wait $ap
ast=$?

fail=0
for p in "normal:$N:$nst" "asan:$A:$ast"; do
	name=${p%%:*}
	rest=${p#*:}
	dir=${rest%:*}
	st=${rest##*:}
	log=$dir/test.log
	ok=$(grep -c '^ok ' "$log")
	bad=$(grep -c '^not ok ' "$log")
	skip=$(grep -c '^ok .* # skip' "$log")
	echo "test ($name): $ok ok ($skip skipped), $bad failed, $(tail -1 "$log.time"); log: $log"
	grep '^ok .* # skip' "$log" | sed 's/^/    /'
	# a failing test: its "not ok" line and the diagnostics under it
	awk '/^not ok /{ p = 1; print "    " $0; next } /^(ok|not ok) /{ p = 0 } p && /^#/{ print "    " $0 }' "$log"
	if [ "$st" != 0 ] || [ "$bad" != 0 ]; then
		[ "$bad" = 0 ] && tail -20 "$log" | sed 's/^/    /'
		fail=1
	fi
done
if [ -n "$after" ]; then
	cat "$N/after.log"
	ast=$(cat "$N/after.status" 2>/dev/null || echo 1)
	if [ "$ast" != 0 ]; then
		echo "after the normal pass: '$after' failed (exit $ast)"
		fail=1
	fi
fi
exit $fail
