#!/bin/sh
# Foundation benchmark: NDJSON decode (trace-check) and decode+encode round
# trip (nd-unit reemit) on a generated stream, against jq and python3.
set -eu
BIN=$1
. "$(dirname "$0")/lib.sh"
N=${BENCH_SPANS:-1000000}
F="$OUT/stream-$N.ndjson"
[ -s "$F" ] || "$BIN/gen-stream" -n "$N" > "$F"
B=$(stat -c %s "$F")
E=$((N + 2))
echo "== NDJSON stream: $N spans, $(awk -v b="$B" 'BEGIN{printf "%.0f", b/1e6}') MB, $(awk -v b="$B" -v e="$E" 'BEGIN{printf "%.0f", b/e}') bytes/line"
measure "trace-check (decode+validate)" $E $B "$BIN/trace-check" "$F"; tc=$M_SECS
measure "nd-unit reemit (decode+encode)" $E $B "$BIN/nd-unit" reemit "$F"; rt=$M_SECS
measure "jq -c ." $E $B jq -c . "$F"; jqs=$M_SECS
measure "python3 json.loads+dumps loop" $E $B python3 -c '
import json, sys
for line in open(sys.argv[1], "rb"):
    sys.stdout.write(json.dumps(json.loads(line), separators=(",", ":")) + "\n")
' "$F"; pys=$M_SECS
echo "ratios: trace-check vs jq $(ratio "$tc" "$jqs"), vs python3 $(ratio "$tc" "$pys"); round trip vs jq $(ratio "$rt" "$jqs"), vs python3 $(ratio "$rt" "$pys")"
