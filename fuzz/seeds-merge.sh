#!/bin/sh
# Seeds for fuzz_merge: partial results of trace-topk (first byte 'T') and
# trace-regions ('R'), one and two partials a file, and one cut short.
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
