#!/bin/sh
# golden-run.sh BIN OUT: run every program over the fixtures with a set of
# option sets and keep each output (stdout, stderr, exit status) in OUT, so
# that two builds can be compared byte for byte (diff -r OUT1 OUT2).  Used
# to check that a refactoring changes no answer; not a test by itself.
set -u
# Paths in the outputs are relative (fixtures/..., in/...), so that two
# checkouts and two OUT directories give the same bytes.
BIN=$(cd "$1" && pwd)
mkdir -p "$2/in"
OUT=$(cd "$2" && pwd)
cd "$(dirname "$0")/.." || exit 2
FIX=fixtures
export PATH="$BIN:$PATH"
n=0

run() {			# run NAME CMD...: keep its output as OUT/NAME
	name=$1
	shift
	"$@" >"$OUT/$name.out" 2>"$OUT/$name.err"
	echo $? >"$OUT/$name.rc"
	n=$((n + 1))
}

# The streams: every trace fixture converted, and a few merged.
for f in "$FIX"/chrome/*.json* "$FIX"/torch-legacy/*.pt.trace.json* \
    "$FIX"/pipeline/*rank*.gz "$FIX"/ascend/trace_view.json \
    "$FIX"/hand/mtia_3steps.json; do
	b=$(basename "$f" | sed 's/\.gz$//; s/\.json$//; s/\.pt\.trace$//')
	run "conv-$b" chrome2ndjson "$f"
	cp "$OUT/conv-$b.out" "$OUT/in/$b.ndjson"
done
for f in "$FIX"/xplane/*.xplane.pb; do
	b=$(basename "$f" .xplane.pb)
	run "conv-$b" xplane2ndjson "$f"
	cp "$OUT/conv-$b.out" "$OUT/in/$b.ndjson"
done
run conv-dlrm chrome2ndjson "$FIX"/chrome/dlrm_8ranks/*.gz
cp "$OUT/conv-dlrm.out" "$OUT/in/dlrm.ndjson"
run conv-p4 chrome2ndjson "$FIX"/pipeline/1f1b_p4_m8_slow2_rank*.gz
cp "$OUT/conv-p4.out" "$OUT/in/p4.ndjson"

TESTS=$PWD
cd "$OUT" || exit 2
for s in in/*.ndjson; do
	b=$(basename "$s" .ndjson)
	python3 "$TESTS/tools/shuffle_stream.py" --seed 7 <"$s" >"in/$b.rev"
	run "topk-$b" trace-topk "$s"
	run "topk-t-$b" trace-topk --table -b class,name -k 5 "$s"
	run "topk-rev-$b" trace-topk "in/$b.rev"
	run "regions-$b" trace-regions "$s"
	run "regions-tree-$b" trace-regions --tree --ops "$s"
	run "steps-$b" trace-steps "$s"
	run "steps-d-$b" trace-steps -d -s "$s"
	run "gaps-$b" trace-gaps "$s"
	run "gaps-tot-$b" trace-gaps --totals -l timeline "$s"
	run "gaps-rev-$b" trace-gaps -u "in/$b.rev"
	run "mem-$b" trace-mem --table "$s"
	run "roof-$b" trace-roofline --table "$s"
	run "roofj-$b" trace-roofline "$s"
	run "ctx-$b" trace-context -A 2 -B 2 --max 5 . "$s"
	run "pipe-$b" trace-pipeline --table "$s"
	run "check-$b" trace-check -v "$s"
	run "classify-$b" trace-classify "$s"
	run "report-$b" trace-report "$s"
	run "reportj-$b" trace-report --json "$s"
	run "reporth-$b" trace-report --html "$s"
	run "report-rev-$b" trace-report "in/$b.rev"
	run "n2c-$b" ndjson2chrome "$s"
	# the same records reversed, without --unordered
	for p in trace-regions trace-steps trace-gaps trace-mem \
	    trace-roofline trace-pipeline; do
		run "rev-$p-$b" "$p" "in/$b.rev"
	done
	run "rev-trace-context-$b" trace-context -A 2 -B 2 --max 5 . "in/$b.rev"
	for p in trace-topk trace-regions trace-steps trace-gaps \
	    trace-report trace-pipeline; do
		"$p" --partial "$s" >"in/$b.$p.part" 2>/dev/null
		run "merge-$p-$b" "$p" --merge "in/$b.$p.part"
	done
done
I=in
run diff-legacy trace-diff "$I/before.ndjson" "$I/after.ndjson"
run diff-legacy-t trace-diff --table -b family "$I/before.ndjson" \
    "$I/after.ndjson"
run diff-hta trace-diff "$I/hta_diff_control.ndjson" "$I/hta_diff_test.ndjson"
run report-cmp sh -c "trace-diff '$I/before.ndjson' '$I/after.ndjson' |
    trace-report - '$I/after.ndjson'"
run pipe-svg trace-pipeline --svg "$I/p4.ndjson"
cd "$TESTS" || exit 2
run mem-snap trace-mem --snapshot "$FIX/memory/cs336_memory_snapshot.pickle"
run mem-tl trace-mem "$FIX/memory/hta_memory_timeline.raw.gz"
echo "$n runs in $OUT"
