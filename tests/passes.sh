#!/bin/sh
# make check's test step: every bats suite on the normal build and on the
# ASan+UBSan build at the same time.  A bats run is mostly one process after
# another, so each pass is split in two halves (the suites in alternate
# order: about even, measured) and the four bats processes share the two
# cores: the whole takes about half of the summed CPU time instead of the
# time of the slower pass run alone.  Each pass writes its TAP log (with
# per-test times; the two halves one after the other) beside its programs;
# at the end a summary per pass, every skipped test and every failing
# test's output.
#   sh tests/passes.sh NORMAL_BUILD_DIR ASAN_BUILD_DIR
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

# the passes load each other: the fan-out stress tests need no busy loops
# of their own here (they would only slow the other passes)
export FANOUT_BUSY=0
# the suites in two halves, alternately
half1=$(ls "$top"/tests/*.bats | awk 'NR % 2 == 1')
half2=$(ls "$top"/tests/*.bats | awk 'NR % 2 == 0')
# the environment of the sanitizer pass (a command: pass runs it under time)
set -- env ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 \
    UBSAN_OPTIONS=print_stacktrace=1 ND_BIN="$A/bin" ND_ASAN=1
# shellcheck disable=SC2086
pass "$N/test.1.log" env ND_BIN="$N/bin" bats --tap --timing $half1 &
n1=$!
# shellcheck disable=SC2086
pass "$N/test.2.log" env ND_BIN="$N/bin" bats --tap --timing $half2 &
n2=$!
# shellcheck disable=SC2086
pass "$A/test.1.log" "$@" bats --tap --timing $half1 &
a1=$!
# shellcheck disable=SC2086
pass "$A/test.2.log" "$@" bats --tap --timing $half2 &
a2=$!
trap 'kill $n1 $n2 $a1 $a2 2>/dev/null; exit 130' INT TERM
nst=0
ast=0
wait $n1 || nst=1
wait $n2 || nst=1
wait $a1 || ast=1
wait $a2 || ast=1
for d in "$N" "$A"; do
	cat "$d/test.1.log" "$d/test.2.log" > "$d/test.log"
	printf 'half 1: %s; half 2: %s\n' "$(cat "$d/test.1.log.time")" \
	    "$(cat "$d/test.2.log.time")" > "$d/test.log.time"
done

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
exit $fail
