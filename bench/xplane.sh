#!/bin/sh
# xplane2ndjson on a generated TPU-like XPlane profile of about 1 GiB
# (BENCH_XPLANE_EVENTS, default 24M events: 4 TPU planes with HLO metadata,
# nested ops, steps, a host plane), against the targets of issue 3:
# >= 3M events/s, peak RSS <= file size + 128 MiB.  Side by side: Google's
# protobuf for Python (Debian python3-protobuf, C++ backend) decoding and
# counting the events with tests/tools/xplane_decode.py.  Python needs about
# 12 s and 400 MB per million events, so by default it reads a 2M-event
# profile of the same generator, and xplane2ndjson is timed on that one too
# for the ratio; BENCH_XPLANE_PY=same makes Python read the big file itself.
set -eu
BIN=$1
. "$(dirname "$0")/lib.sh"
N=${BENCH_XPLANE_EVENTS:-24000000}
NS=${BENCH_XPLANE_PY_EVENTS:-2000000}
TOP=$(cd "$(dirname "$0")/.." && pwd)

gen() { # events file
	if [ ! -s "$2" ] || [ ! -s "$2.events" ]; then
		"$BIN/gen-xplane" -v --seed 1 --events "$1" -o "$2" 2> "$2.log"
		sed -n 's/^gen-xplane: \([0-9]*\) events.*/\1/p' "$2.log" > "$2.events"
	fi
}
F="$OUT/tpu-$N.xplane.pb"
FS="$OUT/tpu-$NS.xplane.pb"
gen "$N" "$F"
gen "$NS" "$FS"
E=$(cat "$F.events") ES=$(cat "$FS.events")
B=$(stat -c %s "$F") BS=$(stat -c %s "$FS")
cat "$F" > /dev/null	# a warm page cache for everyone

echo "== XPlane (generated TPU profile): $E events, $(awk -v b="$B" 'BEGIN{printf "%.0f", b/1048576}') MiB, $(awk -v b="$B" -v e="$E" 'BEGIN{printf "%.0f", b/e}') bytes/event"
cpu() {
	awk -F': ' '/User time/ {u = $2} /System time/ {s = $2}
	    END {printf "%.2f", u + s}' "$OUT/time.txt"
}
measure "xplane2ndjson" "$E" "$B" "$BIN/xplane2ndjson" "$F"
x=$M_SECS xrss=$M_RSS_KB xcpu=$(cpu)
measure "xplane2ndjson --no-args" "$E" "$B" "$BIN/xplane2ndjson" --no-args "$F"
# On a loaded machine the wall time says little: the CPU time (user+sys of
# every thread: one hashes the file, one or more render) is printed too.
# xplane2ndjson renders with one thread per CPU unless the load average is
# already high; XPLANE2NDJSON_THREADS=1 or 2 forces it.
awk -v s="$x" -v u="$xcpu" -v e="$E" -v r="$xrss" -v b="$B" -v l="$(cut -d' ' -f1 /proc/loadavg)" 'BEGIN {
	if (s <= 0) s = 0.005
	if (u <= 0) u = 0.005
	budget = b / 1048576 + 128
	printf "xplane2ndjson: %.2f M events/s wall, %.2f M events per CPU second (%.2f s user+sys; load average %s; target >= 3 M/s)\n",
	    e / s / 1e6, e / u / 1e6, u, l
	printf "xplane2ndjson: peak RSS %.0f MiB = file + %.0f MiB (target <= file + 128 MiB: %s)\n",
	    r / 1024, r / 1024 - b / 1048576,
	    (r / 1024 <= budget) ? "met" : "MISSED" }'

PYDIR="$OUT/xplane-py"
mkdir -p "$PYDIR"
protoc --python_out="$PYDIR" -I"$TOP/lib/ingest" "$TOP/lib/ingest/xplane.proto"
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
if [ "${BENCH_XPLANE_PY:-}" = same ]; then
	PF=$F PE=$E PB=$B xs=$x
	echo "== the same file, Python"
else
	PF=$FS PE=$ES PB=$BS
	echo "== Python on a smaller profile of the same generator: $PE events, $(awk -v b="$PB" 'BEGIN{printf "%.0f", b/1048576}') MiB"
	measure "xplane2ndjson" "$PE" "$PB" "$BIN/xplane2ndjson" "$PF"
	xs=$M_SECS
fi
measure "python3 protobuf: parse + count" "$PE" "$PB" \
    "$PY" "$TOP/tests/tools/xplane_decode.py" --pydir "$PYDIR" "$PF"
p=$M_SECS
echo "ratio: xplane2ndjson vs python3 protobuf $(ratio "$xs" "$p") (events/s, same file; xplane2ndjson also writes every event as JSON)"
