#!/bin/sh
# Seeds for fuzz_merge: partial results of trace-topk (first byte T),
# trace-regions (R), trace-gaps (G), trace-steps (S), trace-report (P) and
# trace-pipeline (L, from the pipeline fixtures), one and two
# partials a file, one cut short, and in lower case (trailers made right).
#   sh fuzz/seeds-merge.sh BIN_DIR CORPUS_DIR FIXTURES_DIR
set -eu
BIN=$1
C=$2/fuzz_merge
mkdir -p "$C"
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
"$BIN/gen-stream" -n 200 -s 7 > "$t/a.ndjson"
"$BIN/gen-stream" -n 200 -s 8 -d 2 > "$t/b.ndjson"
for x in a b; do
	"$BIN/trace-topk" --partial -b name,device "$t/$x.ndjson" > "$t/$x.top"
	"$BIN/trace-regions" --partial "$t/$x.ndjson" > "$t/$x.reg"
	{ printf T; cat "$t/$x.top"; } > "$C/top-$x"
	{ printf R; cat "$t/$x.reg"; } > "$C/reg-$x"
done
{ printf T; cat "$t/a.top" "$t/b.top"; } > "$C/top-ab"
{ printf t; cat "$t/a.top"; } > "$C/top-framed"
{ printf r; cat "$t/a.reg"; } > "$C/reg-framed"
{ printf R; cat "$t/a.reg" "$t/b.reg"; } > "$C/reg-ab"
{ printf T; head -3 "$t/a.top"; } > "$C/top-cut"
for x in a b; do
	"$BIN/trace-gaps" --partial "$t/$x.ndjson" > "$t/$x.gaps"
	"$BIN/trace-steps" --partial "$t/$x.ndjson" > "$t/$x.steps"
	{ printf G; cat "$t/$x.gaps"; } > "$C/gaps-$x"
	{ printf S; cat "$t/$x.steps"; } > "$C/steps-$x"
done
{ printf g; cat "$t/a.gaps" "$t/b.gaps"; } > "$C/gaps-framed"
{ printf s; cat "$t/a.steps" "$t/b.steps"; } > "$C/steps-framed"
fx=$3
"$BIN/trace-report" --partial "$t/a.ndjson" > "$t/a.rep"
{ printf P; cat "$t/a.rep"; } > "$C/report-a"
{ printf p; cat "$t/a.rep"; } > "$C/report-framed"
if [ -f "$fx/pipeline/1f1b_p2_m4_rank0.pt.trace.json.gz" ]; then
	"$BIN/chrome2ndjson" "$fx/pipeline/1f1b_p2_m4_rank0.pt.trace.json.gz" \
	    "$fx/pipeline/1f1b_p2_m4_rank1.pt.trace.json.gz" > "$t/p.ndjson"
	"$BIN/trace-pipeline" --partial "$t/p.ndjson" > "$t/p.pipe"
	"$BIN/trace-report" --partial "$t/p.ndjson" > "$t/p.rep"
	{ printf L; cat "$t/p.pipe"; } > "$C/pipe-p"
	{ printf l; cat "$t/p.pipe"; } > "$C/pipe-framed"
	{ printf p; cat "$t/p.rep"; } > "$C/report-pipe-framed"
fi
