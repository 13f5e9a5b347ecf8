#!/bin/sh
# trace-topk and trace-regions on a generated 1M-span stream (gen-stream:
# XLA ops on 4 TPUs, 6,000 op names, 8 scopes), side by side with a jq
# group_by and a python3 dict loop computing the same per-name totals (the
# three answers are compared).  Memory: RSS on the first quarter of the
# stream and on all of it, to show that it follows the distinct keys, not
# the events.
set -eu
BIN=$1
. "$(dirname "$0")/lib.sh"
N=${BENCH_SPANS:-1000000}
F="$OUT/stream-$N.ndjson"
[ -s "$F" ] || "$BIN/gen-stream" -n "$N" > "$F"
B=$(stat -c %s "$F")
E=$((N + 2))
Q="$OUT/stream-$N-quarter.ndjson"
[ -s "$Q" ] || head -n $((N / 4 + 1)) "$F" > "$Q"
QB=$(stat -c %s "$Q")
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
# m LABEL EVENTS BYTES CMD...: measure, then the CPU time (user + sys) and
# events per CPU-second, the figure that stays meaningful on a busy machine.
m() {
	measure "$@"
	M_CPU=$(awk -F': ' '/User time/ {u = $2} /System time/ {s = $2}
	    END {printf "%.2f", u + s}' "$OUT/time.txt")
	awk -v c="$M_CPU" -v e="$2" 'BEGIN { if (c <= 0) c = 0.005
		printf "%-34s %8.2f s cpu %7.2f Mev/s per cpu-second\n", "", c, e / c / 1e6 }'
}
echo "== trace-topk / trace-regions: $N spans, $(awk -v b="$B" 'BEGIN{printf "%.0f", b/1e6}') MB"
m "trace-topk (by name)" $E $B "$BIN/trace-topk" "$F"; tk=$M_SECS; tkc=$M_CPU; ra=$M_RSS_KB
m "trace-topk --by class,family --wall" $E $B "$BIN/trace-topk" --by class,family --wall "$F"
m "trace-topk --partial (all rows)" $E $B "$BIN/trace-topk" --partial "$F"
m "trace-regions" $E $B "$BIN/trace-regions" "$F"; tr=$M_SECS; trc=$M_CPU; ga=$M_RSS_KB
m "trace-regions --ops --folded" $E $B "$BIN/trace-regions" --ops --folded "$F"
measure "trace-topk, first quarter" $((N / 4 + 1)) $QB "$BIN/trace-topk" "$Q"; rq=$M_RSS_KB
measure "trace-regions, first quarter" $((N / 4 + 1)) $QB "$BIN/trace-regions" "$Q"; gq=$M_RSS_KB
m "jq -s group_by(.name)" $E $B jq -s -c \
    'map(select(.type == "span")) | group_by(.name) | map([.[0].name, length, (map(.dur_ns) | add)]) | .[]' "$F"; jqs=$M_SECS; jqc=$M_CPU
m "python3 dict loop" $E $B "$PY" -c '
import json, sys
agg = {}
for line in open(sys.argv[1], "rb"):
    r = json.loads(line)
    if r.get("type") == "span":
        a = agg.setdefault(r["name"], [0, 0])
        a[0] += 1
        a[1] += r["dur_ns"]
for k, v in agg.items():
    print(json.dumps([k, v[0], v[1]], separators=(",", ":")))
' "$F"; pys=$M_SECS; pyc=$M_CPU
# the three agree on every name's count and total
"$BIN/trace-topk" -k 0 "$F" | jq -c '[.name, .count, .total_ns]' | sort > "$OUT/topk.totals"
jq -s -c 'map(select(.type == "span")) | group_by(.name) | map([.[0].name, length, (map(.dur_ns) | add)]) | .[]' "$F" | sort > "$OUT/jq.totals"
"$PY" -c '
import json, sys
agg = {}
for line in open(sys.argv[1], "rb"):
    r = json.loads(line)
    if r.get("type") == "span":
        a = agg.setdefault(r["name"], [0, 0])
        a[0] += 1
        a[1] += r["dur_ns"]
for k, v in agg.items():
    print(json.dumps([k, v[0], v[1]], separators=(",", ":")))
' "$F" | sort > "$OUT/py.totals"
if cmp -s "$OUT/topk.totals" "$OUT/jq.totals" && cmp -s "$OUT/topk.totals" "$OUT/py.totals"; then
	echo "totals: trace-topk, jq and python3 agree on $(wc -l < "$OUT/topk.totals") names"
else
	echo "totals: DIFFER (see $OUT/*.totals)"
	exit 1
fi
echo "ratios (wall): trace-topk vs jq $(ratio "$tk" "$jqs"), vs python3 $(ratio "$tk" "$pys"); trace-regions vs jq $(ratio "$tr" "$jqs"), vs python3 $(ratio "$tr" "$pys")"
echo "ratios (cpu):  trace-topk vs jq $(ratio "$tkc" "$jqc"), vs python3 $(ratio "$tkc" "$pyc"); trace-regions vs jq $(ratio "$trc" "$jqc"), vs python3 $(ratio "$trc" "$pyc")"
mib() { awk -v r="$1" 'BEGIN{printf "%.1f MiB", r/1024}'; }
echo "memory: trace-topk peak RSS $(mib "$rq") on $((N / 4)) spans, $(mib "$ra") on $N (6,000 names); trace-regions $(mib "$gq") and $(mib "$ga") (8 scopes)"
