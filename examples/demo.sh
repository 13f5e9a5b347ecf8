#!/bin/sh
# make demo: generate a small bundled example profile and run the main job
# on it.  Everything is made by code in this project (bench/gen-xplane.c).
set -eu
BIN=$1
here=$(cd "$(dirname "$0")" && pwd)
# OUT_DIR (default examples/out): the tests give each run its own, as the
# normal and sanitizer passes of make check run at the same time
out=${2:-"$here/out"}
mkdir -p "$out"
PATH="$BIN:$PATH"

echo "== generating an example TPU profile (seeded, reproducible)"
mkdir -p "$out/logdir/plugins/profile/2026_11_30_12_00_00"
gen-xplane --kind tpu --seed 7 --events 20000 \
    -o "$out/logdir/plugins/profile/2026_11_30_12_00_00/demo-host.xplane.pb"
echo "   $out/logdir/plugins/profile/2026_11_30_12_00_00/demo-host.xplane.pb"

echo "== xplane2ndjson $out/logdir | trace-check"
xplane2ndjson "$out/logdir" > "$out/demo.ndjson"
trace-check -v "$out/demo.ndjson"

if [ -x "$BIN/trace-topk" ]; then
	echo "== trace-topk -k 10 --table (device ops by exclusive time)"
	trace-topk -k 10 --table "$out/demo.ndjson"
	echo "== trace-topk --by class --table (compute vs communication)"
	trace-topk --by class --table "$out/demo.ndjson"
fi
if [ -x "$BIN/trace-regions" ]; then
	echo "== trace-regions --tree --depth 3"
	trace-regions --tree --depth 3 "$out/demo.ndjson"
fi
if [ -x "$BIN/trace-steps" ]; then
	echo "== trace-steps --summary"
	trace-steps --summary "$out/demo.ndjson"
fi
if [ -x "$BIN/trace-gaps" ]; then
	echo "== trace-gaps --level device | trace-topk --by payload -k 5 --table"
	trace-gaps --level device "$out/demo.ndjson" | trace-topk --by payload -k 5 --table
fi
if [ -x "$BIN/trace-pipeline" ]; then
	# real torch traces (tests/fixtures/pipeline): 4 stages, 1F1B, stage 2 slow
	echo "== trace-pipeline --table (a 4-stage 1F1B pipeline, one trace per rank)"
	for f in "$here"/../tests/fixtures/pipeline/1f1b_p4_m8_slow2_rank*.pt.trace.json.gz; do
		chrome2ndjson "$f"
	done > "$out/pipeline.ndjson"
	trace-pipeline --table "$out/pipeline.ndjson"
	trace-pipeline --svg -o "$out/pipeline.svg" "$out/pipeline.ndjson"
	echo "   chart: $out/pipeline.svg"
fi
if [ -x "$BIN/trace-report" ]; then
	trace-report -o "$out/report.md" "$out/demo.ndjson"
	trace-report --html -o "$out/report.html" "$out/demo.ndjson"
	echo "== reports written:"
	echo "   $out/report.md"
	echo "   $out/report.html"
fi
echo "== stream: $out/demo.ndjson"
