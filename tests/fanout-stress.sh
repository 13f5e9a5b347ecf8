#!/bin/bash
# The documented fan-out recipes (README, examples/COOKBOOK.md, trace-topk(1),
# trace-regions(1), trace-steps(1), bench/fanout.mk), RUNS times each in a
# row, beside two busy loops (FANOUT_BUSY=0: none): every run must print
# the single-stream answer
# byte for byte.  Then the old racy form (several --partial jobs into one
# pipe) RUNS times: each run must give the right answer or the one-line
# "partials ... interleave" error, never a wrong answer or another error.
#
#   tests/fanout-stress.sh BIN_DIR FIXTURES RUNS [RECIPE...]
#
# RECIPE: readme readme-parallel topk topk-parallel regions
# regions-parallel steps steps-parallel make racy (default: all).
# `make check-fanout` runs 200 of each; tests/fanout.bats a few.
set -u
BIN=$1
FX=$2
RUNS=$3
shift 3
RECIPES=${*:-readme readme-parallel topk topk-parallel regions regions-parallel steps steps-parallel make racy}
export PATH="$BIN:$PATH" LC_ALL=C
top=$(cd "$(dirname "$0")/.." && pwd)
W=$(mktemp -d)
busy1= busy2=
cleanup() {
	[ -n "$busy1" ] && kill "$busy1" 2>/dev/null
	[ -n "$busy2" ] && kill "$busy2" 2>/dev/null
	rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 2' INT TERM HUP

# the 8 DLRM ranks under the names the README uses, and as streams
r=0
for f in "$FX"/chrome/dlrm_8ranks/*.pt.trace.json.gz; do
	cp "$f" "$W/rank$r.pt.trace.json.gz"
	chrome2ndjson "$f" > "$W/rank$r.ndjson" || exit 2
	r=$((r + 1))
done
[ "$r" -eq 8 ] || { echo "fanout-stress: no dlrm_8ranks in $FX" >&2; exit 2; }
cd "$W" || exit 2
mkdir -p s
cp rank*.ndjson s/

# needs PATTERN...: whether a recipe asked for matches a PATTERN (the
# expected answers of the others are not worked out)
needs() {
	for r in $RECIPES; do
		for p; do case $r in $p) return 0 ;; esac; done
	done
	return 1
}

# expected answers, from one stream over every rank
! needs 'readme*' racy || trace-topk --table rank*.ndjson > want-readme
! needs 'topk*' || trace-topk -k 5 --table rank*.ndjson > want-topk
! needs 'regions*' || trace-regions --by-device --tree rank*.ndjson > want-regions
! needs 'steps*' ||
    for f in rank*.json.gz; do chrome2ndjson "$f" | trace-steps; done | trace-steps -s --ranks > want-steps
! needs make || trace-topk -k 0 rank*.ndjson > want-make

# one run of RECIPE into out.RECIPE
run1() {
	rm -f ./*.partial ./*.steps s/*.partial s/*.merged
	case $1 in
	readme)
		parallel -j4 'chrome2ndjson {} | trace-topk --partial -o {}.partial' ::: rank*.pt.trace.json.gz &&
		    trace-topk --merge --table rank*.pt.trace.json.gz.partial ;;
	readme-parallel)
		( set -o pipefail
		parallel -k -j4 trace-topk --partial ::: rank*.ndjson | trace-topk --merge --table ) ;;
	topk)
		parallel -j 2 trace-topk --partial -o {}.partial {} ::: rank*.ndjson &&
		    trace-topk --merge -k 5 --table rank*.ndjson.partial ;;
	topk-parallel)
		parallel -k -j 2 trace-topk --partial ::: rank*.ndjson | trace-topk --merge -k 5 --table ;;
	regions)
		parallel -j8 trace-regions --partial -o {}.partial {} ::: rank*.ndjson &&
		    trace-regions --merge --by-device --tree rank*.ndjson.partial ;;
	regions-parallel)
		parallel -k -j8 trace-regions --partial ::: rank*.ndjson |
		    trace-regions --merge --by-device --tree ;;
	steps)
		parallel -j4 'chrome2ndjson {} | trace-steps -o {}.steps' ::: rank*.json.gz &&
		    trace-steps -s --ranks rank*.json.gz.steps ;;
	steps-parallel)
		parallel -k -j4 'chrome2ndjson {} | trace-steps' ::: rank*.json.gz |
		    trace-steps -s --ranks ;;
	make)
		make -s -j2 -f "$top/bench/fanout.mk" DIR=s PROG=trace-topk ARGS='-k 0' >&2 &&
		    cat s/trace-topk.merged ;;
	racy)
		ls rank*.pt.trace.json.gz |
		    xargs -P4 -I{} sh -c 'chrome2ndjson {} | trace-topk --partial' |
		    trace-topk --merge --table ;;
	esac > "out.$1" 2> "err.$1"
}

want_of() {
	case $1 in
	readme*|racy) echo want-readme ;;
	topk*) echo want-topk ;;
	regions*) echo want-regions ;;
	steps*) echo want-steps ;;
	make) echo want-make ;;
	esac
}

# FANOUT_BUSY=0: no loops, when the caller loads the machine already
# (make check runs its two test passes side by side)
if [ "${FANOUT_BUSY:-2}" != 0 ]; then
	( while :; do :; done ) &
	busy1=$!
	( while :; do :; done ) &
	busy2=$!
fi
# for a caller's teardown, should this script itself be killed
[ -n "${FANOUT_PIDS:-}" ] && echo "$busy1 $busy2" > "$FANOUT_PIDS"

fail=0
for rc in $RECIPES; do
	want=$(want_of "$rc")
	ok=0 detected=0 bad=0 t0=$(date +%s)
	for i in $(seq "$RUNS"); do
		run1 "$rc"
		st=$?
		if [ $st -eq 0 ] && cmp -s "out.$rc" "$want"; then
			ok=$((ok + 1))
		elif [ "$rc" = racy ] && [ $st -eq 2 ] &&
		    [ "$(wc -l < err.racy)" -eq 1 ] &&
		    grep -q 'partials written by concurrent jobs to one pipe interleave; write one file per job (-o) or use GNU parallel$' err.racy; then
			detected=$((detected + 1))
		else
			bad=$((bad + 1))
			echo "fanout-stress: $rc run $i: exit $st" >&2
			head -3 "err.$rc" >&2
			diff "$want" "out.$rc" | head -5 >&2
		fi
	done
	echo "$rc: $ok of $RUNS runs identical to one stream, $detected detected, $bad wrong ($(($(date +%s) - t0)) s)"
	[ "$bad" -eq 0 ] || fail=1
	[ "$rc" = racy ] || [ "$ok" -eq "$RUNS" ] || fail=1
done
exit $fail
