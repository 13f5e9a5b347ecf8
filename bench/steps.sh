#!/bin/sh
# trace-steps and trace-gaps on generated streams (gen-stream: TPU-like ops
# on 4 devices, 10 steps, a gap after one op in ten): events/s and peak RSS,
# with trace-check (decode and validate only) as the floor, at N/4 and N
# spans to show how memory grows.  BENCH_BASELINE=1 adds the independent
# python3 scripts of tests/tools/ on the N/4 stream.
set -eu
BIN=$1
. "$(dirname "$0")/lib.sh"
N=${BENCH_SPANS:-1000000}
Q=$((N / 4))
TOOLS=$(dirname "$0")/../tests/tools
for n in $Q $N; do
	F="$OUT/stream-$n.ndjson"
	[ -s "$F" ] || "$BIN/gen-stream" -n "$n" > "$F"
done

# m LABEL EVENTS BYTES CMD...: measure, then the CPU time (user + system)
# of the run and the events per CPU second, which a loaded machine does
# not distort the way it distorts wall time.
m() {
	measure "$@"
	M_CPU=$(awk -F': ' '/User time/ {u = $2} /System time/ {s = $2}
	    END {printf "%.2f", u + s}' "$OUT/time.txt")
	awk -v c="$M_CPU" -v e="$2" 'BEGIN { if (c <= 0) c = 0.005
	    printf "%-34s %8.2f s CPU %6.2f Mev/s per CPU second\n", "", c, e / c / 1e6 }'
}

for n in $Q $N; do
	F="$OUT/stream-$n.ndjson"
	B=$(stat -c %s "$F")
	E=$((n + 2))
	echo "== trace-steps, trace-gaps: $n spans, $(awk -v b="$B" 'BEGIN{printf "%.0f", b/1e6}') MB"
	m "trace-check (decode floor)" $E $B "$BIN/trace-check" "$F"; tc=$M_CPU
	m "trace-steps" $E $B "$BIN/trace-steps" "$F"; ts=$M_CPU
	m "trace-steps -d -s" $E $B "$BIN/trace-steps" -d -s "$F"
	m "trace-gaps (device level)" $E $B "$BIN/trace-gaps" "$F"; tg=$M_CPU
	m "trace-gaps -l timeline -m 10us" $E $B "$BIN/trace-gaps" -l timeline -m 10us "$F"
	m "trace-gaps -c (host context)" $E $B "$BIN/trace-gaps" -c "$F"
	echo "CPU time over the decode floor: trace-steps $(ratio "$tc" "$ts"), trace-gaps $(ratio "$tc" "$tg") (1.0x: no cost beyond decoding)"
done
if [ "${BENCH_BASELINE:-0}" = 1 ]; then
	F="$OUT/stream-$Q.ndjson"
	B=$(stat -c %s "$F")
	E=$((Q + 2))
	echo "== python3 baselines (tests/tools), $Q spans"
	m "python3 steps_check.py" $E $B /usr/bin/python3 "$TOOLS/steps_check.py" "$F"
	m "python3 gaps_check.py" $E $B /usr/bin/python3 "$TOOLS/gaps_check.py" "$F"
fi
