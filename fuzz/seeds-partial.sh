#!/bin/sh
# Seeds for fuzz_ndjson: lines of framed partial results (trace-topk and
# trace-regions --partial, their partial_end trailers) and the torn lines
# that jobs sharing one pipe make of them: one writer's line cut at a
# number, a string or a key and another writer's piece after it (issue 18).
#   sh fuzz/seeds-partial.sh BIN_DIR CORPUS_DIR FIXTURES_DIR
set -eu
BIN=$1
C=$2/fuzz_ndjson
mkdir -p "$C"
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
"$BIN/gen-stream" -n 300 -s 5 > "$t/a.ndjson"
"$BIN/gen-stream" -n 300 -s 6 > "$t/b.ndjson"
"$BIN/trace-topk" --partial --wall "$t/a.ndjson" > "$t/a.top"
"$BIN/trace-topk" --partial --wall "$t/b.ndjson" > "$t/b.top"
"$BIN/trace-regions" --partial "$t/a.ndjson" > "$t/a.reg"
# whole lines: the header, a group, a busy record, the trailer
for f in a.top a.reg; do
	head -1 "$t/$f" | tr -d '\n' > "$C/h6-$f-header"
	sed -n 2p "$t/$f" | tr -d '\n' > "$C/h6-$f-group"
	tail -1 "$t/$f" | tr -d '\n' > "$C/h6-$f-end"
done
grep '"top_busy"' "$t/a.top" | head -1 | tr -d '\n' > "$C/h6-busy"
# torn: A's line 2 up to byte k, then B's line 3 from byte m
a=$(sed -n 2p "$t/a.top")
b=$(sed -n 3p "$t/b.top")
for k in 9 21 40 57 80; do
	for m in 1 13 44 66; do
		printf '%s%s' "$(printf '%s' "$a" | cut -c1-$k)" \
		    "$(printf '%s' "$b" | cut -c$m-)" > "$C/h6-torn-$k-$m"
	done
done
