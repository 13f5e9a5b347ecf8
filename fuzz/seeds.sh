#!/bin/sh
# Seed corpora for the fuzz harnesses, generated from the project's own
# generators and from the real profiles in tests/fixtures.
#   fuzz/seeds.sh BIN_DIR CORPUS_DIR
set -eu
BIN=$1
C=$2
top=$(cd "$(dirname "$0")/.." && pwd)
fx=${ND_FIXTURES:-$top/tests/fixtures}
mkdir -p "$C/fuzz_ndjson" "$C/fuzz_cli"
"$BIN/gen-stream" -n 20 | awk -v d="$C/fuzz_ndjson" '{ print > (d "/gen" NR) }'
printf '{"type":"span","ts_ns":1,"dur_ns":0,"name":"a\\u00e9\\n","pid":1,"tid":2,"args":{"x":[1,{"y":null}]}}' > "$C/fuzz_ndjson/esc"
for d in 500ns 10us 1.5ms 2s 0.0005 1e3 -1 15.7e-4; do
	printf '%s' "$d" > "$C/fuzz_cli/$d"
done
for s in "$top"/fuzz/seeds-*.sh; do
	[ -f "$s" ] && sh "$s" "$BIN" "$C" "$fx"
done
# The empty input, in every harness's corpus (a zero-byte crash artefact
# once sat at the top of the tree): each run starts with it.
for f in "$top"/fuzz/fuzz_*.c; do
	h=$(basename "$f" .c)
	mkdir -p "$C/$h"
	: > "$C/$h/empty"
done
exit 0
