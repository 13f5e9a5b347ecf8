#!/bin/sh
# The one table of issue 13 (make bench): every program and the two whole
# pipelines at each size of BENCH_SIZES (default "1000000 5000000" events),
# with wall and CPU seconds, events/s, MB/s and peak RSS (/usr/bin/time -v;
# for a pipeline the largest stage), ratios against jq and a python3
# reference run in the same invocation on the same files (whose answers are
# compared with ndtrace's first), the issue's targets marked met or MISSED,
# peak RSS at the smallest size against the largest, and the scale-out
# speed-up of --partial/--merge with 2 workers over 8 rank files.
#
#   sh bench/table.sh BUILD/bin
#   sh bench/table.sh BUILD/bin --render   the table of the last run again
#
# Environment:
#   BENCH_SIZES        event counts (default "1000000 5000000")
#   BENCH_REPEAT       runs of each ndtrace row, the fastest kept (default 3
#                      up to 1M events, 1 above, 2 for the scale-out; the
#                      largest peak RSS of the runs is kept)
#   BENCH_BASELINE_5M  1: run jq and python3 at sizes above 1M too (slow:
#                      minutes each; jq and python3 load the whole Kineto
#                      file, about 2 GB of RSS per million events)
#   BENCH_RANK_SPANS   spans per rank file for the scale-out (default 500000;
#                      gen-stream -R when it has it: every rank runs the same
#                      program, 6,000 ops each with its scope)
#   BENCH_JAX_SIZES    events of the JAX-style file for the comparison with
#                      marin's profile_summary (default "200000 1000000")
#   BENCH_JAX_REF      its stand-in (default bench/jax_summary_ref.py)
#   BENCH_RESULTS      1: also write bench/RESULTS.md (table, machine, notes)
#
# Inputs are generated with fixed seeds and cached in bench/out (BENCH_OUT):
# stream-R-N.ndjson (gen-stream -R: an XLA program's 6,000 ops, each with
# its scope and duration, steps of 5,000 ops a device), kineto-N.json
# (gen-kineto), tpu-N.xplane.pb
# (gen-xplane --seed 1), ranks[-R]-S/rank*.ndjson (gen-stream [-R] -s 1..8),
# stream-N.ndjson (plain gen-stream), kineto-m-N.json and kineto-j-N.json
# (gen-kineto -m, -j).
set -u
BIN=$1
. "$(dirname "$0")/lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/.." && pwd)
OUT=$(cd "$OUT" && pwd)
SIZES=${BENCH_SIZES:-1000000 5000000}
REPEAT=${BENCH_REPEAT:-3}
BASE5=${BENCH_BASELINE_5M:-0}
RS=${BENCH_RANK_SPANS:-500000}
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
PYDIR="$OUT/xplane-py"
TSV="$OUT/table.tsv"
NOTES="$OUT/table.notes"
RENDER=${2:-}
if [ "$RENDER" != --render ]; then
	: > "$TSV"
	: > "$NOTES"
fi
set -f	# commands are kept in strings and split on blanks: no globbing
rc=0
T0=$(date +%s)
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
COMMIT="$(git -C "$TOP" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$TOP" diff --quiet HEAD -- lib cmd 2>/dev/null || echo ' + uncommitted changes in lib/ or cmd/')"
note() { echo "$*" >> "$NOTES"; }
say() { echo "bench: $*"; }

mkdir -p "$PYDIR"
# a private copy of the programs: the tree is shared, and a rebuild halfway
# through would mix two builds in one table
if [ "$RENDER" != --render ]; then
	rm -rf "$OUT/bin"
	mkdir -p "$OUT/bin"
	set +f
	cp -p "$BIN"/* "$OUT/bin/" || exit 2
	set -f
fi
BIN="$OUT/bin"
protoc --python_out="$PYDIR" -I"$TOP/lib/ingest" "$TOP/lib/ingest/xplane.proto" || exit 2

# --- timing ---------------------------------------------------------------
# tparse FILE: W (wall s), C (user+sys s), R (peak RSS KiB) from time -v
tparse() {
	eval "$(awk -F': ' '
	    /Elapsed \(wall clock\)/ { n = split($2, a, ":"); s = 0
		for (i = 1; i <= n; i++) s = s * 60 + a[i]; w = s }
	    /User time/ { u = $2 } /System time/ { y = $2 }
	    /Maximum resident set size/ { r = $2 }
	    END { printf "W=%s C=%.2f R=%s\n", w, u + y, r }' "$1")"
}
okstatus() { grep -q 'Exit status: 0$' "$1"; }

# run1 OUTFILE CMD...: one run, stdout to OUTFILE
run1() {
	o=$1
	shift
	/usr/bin/time -v -o "$OUT/t.time" "$@" > "$o" 2> "$OUT/t.err"
	if ! okstatus "$OUT/t.time"; then
		say "FAILED: $*"
		head -5 "$OUT/t.err"
		return 1
	fi
	tparse "$OUT/t.time"
}

# pipe1 OUTFILE "CMD1" "CMD2": CMD1 | CMD2, each stage under time -v; W the
# wall time of the pipeline, C the CPU time of both stages, R the larger RSS
pipe1() {
	o=$1 c1=$2 c2=$3
	t0=$(date +%s.%N)
	/usr/bin/time -v -o "$OUT/p1.time" $c1 2> "$OUT/p1.err" |
	    /usr/bin/time -v -o "$OUT/p2.time" $c2 > "$o" 2> "$OUT/p2.err"
	t1=$(date +%s.%N)
	if ! okstatus "$OUT/p1.time" || ! okstatus "$OUT/p2.time"; then
		say "FAILED: $c1 | $c2"
		head -5 "$OUT/p1.err" "$OUT/p2.err"
		return 1
	fi
	tparse "$OUT/p1.time"
	c_1=$C r_1=$R
	tparse "$OUT/p2.time"
	C1=$c_1 C2=$C
	W=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
	C=$(awk -v a="$c_1" -v b="$C" 'BEGIN { printf "%.2f", a + b }')
	RSUM=$((r_1 + R))
	[ "$r_1" -gt "$R" ] && R=$r_1
	return 0
}

# best OUTFILE CMD... / bestpipe OUTFILE "CMD1" "CMD2": REPEAT runs, W and C
# of the fastest, R the largest
keep() {
	if [ -z "$bw" ] || [ "$(awk -v a="$W" -v b="$bw" 'BEGIN { print (a < b) }')" = 1 ]; then
		bw=$W bc=$C bc1=${C1:-} bc2=${C2:-}
	fi
	[ "$R" -gt "$br" ] && br=$R
	[ "${RSUM:-0}" -gt "$bsum" ] && bsum=$RSUM
	return 0
}
best() {
	bw= bc= br=0 bsum=0 i=0
	while [ $i -lt "$REPEAT" ]; do
		run1 "$@" || return 1
		keep
		i=$((i + 1))
	done
	W=$bw C=$bc R=$br
}
bestpipe() {
	bw= bc= br=0 bsum=0 i=0
	while [ $i -lt "$REPEAT" ]; do
		pipe1 "$@" || return 1
		keep
		i=$((i + 1))
	done
	W=$bw C=$bc R=$br C1=$bc1 C2=$bc2 RSUM=$bsum
}

# row SECTION LABEL EVENTS BYTES JQ PY TARGET: one table row from W C R;
# JQ and PY are the baselines' wall seconds ("-" none, "skip" skipped);
# TARGET: evs:M (>= M million events/s), mbs:M (>= M MB/s), pipe:N (both
# cores; under 5 s when N >= 5M), base (a baseline), up:S (speed-up over
# S seconds >= 1.7x), rep:M:U (>= M million events/s and <= U us of CPU an
# event), jqc:C:X (>= X times less CPU than jq's C seconds), ref:C:R:X:Y
# (>= X times less CPU and >= Y times less peak RSS than a reference
# taking C s and R KiB), - (none)
row() {
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" \
	    "$W" "$C" "$R" "$5" "$6" "$7" >> "$TSV"
	say "$(printf '%-8s %-44s %7.2f s wall %7.2f s cpu %9.1f MiB' "$1" "$2" "$W" "$C" "$(awk -v r="$R" 'BEGIN { print r / 1024 }')")"
}
fail() { say "FAILED: $*"; note "FAILED: $*"; rc=1; }

# --- inputs ---------------------------------------------------------------
gen_inputs() { # N: sets S K X, their bytes SB KB XB and events SE KE XE
	n=$1
	S="$OUT/stream-R-$n.ndjson"
	K="$OUT/kineto-$n.json"
	X="$OUT/tpu-$n.xplane.pb"
	[ -s "$S" ] || { say "generating $S"; "$BIN/gen-stream" -R -n "$n" > "$S.tmp" && mv "$S.tmp" "$S"; } || exit 2
	[ -s "$K" ] || { say "generating $K"; "$BIN/gen-kineto" -e "$n" -o "$K"; } || exit 2
	if [ ! -s "$X" ] || [ ! -s "$X.events" ]; then
		say "generating $X"
		"$BIN/gen-xplane" -v --seed 1 --events "$n" -o "$X" 2> "$X.log" || exit 2
		sed -n 's/^gen-xplane: \([0-9]*\) events.*/\1/p' "$X.log" > "$X.events"
	fi
	if [ ! -s "$K.events" ] || [ "$K.events" -ot "$K" ]; then
		"$BIN/chrome2ndjson" -q --no-args "$K" | tail -1 |
		    sed 's/.*"events":\([0-9]*\).*/\1/' > "$K.events"
	fi
	SB=$(stat -c %s "$S") KB=$(stat -c %s "$K") XB=$(stat -c %s "$X")
	SE=$n KE=$(cat "$K.events") XE=$(cat "$X.events")
	cat "$S" "$K" "$X" > /dev/null	# a warm page cache for everyone
}

# --- baselines and their answers ------------------------------------------
JQ_TOPK='[inputs | select(.type == "span" and (.process // "" | startswith("/device:"))) | [.name, .dur_ns]] | group_by(.[0]) | map([.[0][0], length, (map(.[1]) | add)]) | .[]'

totals() { # what trace-topk -k 0 says, as the baselines print it
	jq -c "[.name, .count, .total_ns${1:+, .self_ns}]" | LC_ALL=C sort
}

baselines() { # SEC: sets JQS PYS JQK PYK PYX (wall seconds)
	sec=$1
	say "$sec: baselines (jq, python3) on the same files"
	# the stream: top-k by name
	run1 "$OUT/jq.topk" jq -n -c "$JQ_TOPK" "$S" || return 1
	JQS=$W
	row "$sec" "baseline: jq top-k (group_by), stream" "$SE" "$SB" - - base
	run1 "$OUT/py.topk" "$PY" "$HERE/topk_ref.py" ndjson "$S" || return 1
	PYS=$W
	row "$sec" "baseline: python3 top-k (json), stream" "$SE" "$SB" - - base
	"$BIN/trace-topk" -k 0 "$S" > "$OUT/nd.topk"
	totals < "$OUT/nd.topk" > "$OUT/nd.totals"
	totals self < "$OUT/nd.topk" > "$OUT/nd.totals4"
	LC_ALL=C sort "$OUT/jq.topk" > "$OUT/jq.totals"
	LC_ALL=C sort "$OUT/py.topk" > "$OUT/py.totals"
	if cmp -s "$OUT/nd.totals" "$OUT/jq.totals" && cmp -s "$OUT/nd.totals4" "$OUT/py.totals"; then
		note "$sec stream: trace-topk, jq and python3 agree on count and total of all $(wc -l < "$OUT/nd.totals") names (python3 on self time too)"
	else
		fail "$sec stream: trace-topk, jq and python3 DIFFER (see $OUT/*.totals)"
	fi
	# Chrome: jq emits every event, python3 loads the file and ranks kernels
	run1 "$OUT/jq.chrome" jq -c '.traceEvents[]' "$K" || return 1
	JQK=$W JQKC=$C
	row "$sec" "baseline: jq -c '.traceEvents[]', Kineto" "$KE" "$KB" - - base
	jn=$(wc -l < "$OUT/jq.chrome")
	rm -f "$OUT/jq.chrome"
	run1 "$OUT/py.topk" "$PY" "$HERE/topk_ref.py" chrome "$K" || return 1
	PYK=$W
	row "$sec" "baseline: python3 top-k (json.load), Kineto" "$KE" "$KB" - - base
	"$BIN/chrome2ndjson" "$K" | "$BIN/trace-topk" -k 0 | totals self > "$OUT/nd.totals4"
	LC_ALL=C sort "$OUT/py.topk" > "$OUT/py.totals"
	if [ "$jn" = "$KE" ] && cmp -s "$OUT/nd.totals4" "$OUT/py.totals"; then
		note "$sec Kineto: jq emitted the $jn events chrome2ndjson read; python3 and chrome2ndjson | trace-topk agree on count, total and self time of all $(wc -l < "$OUT/py.totals") kernel names"
	else
		fail "$sec Kineto: jq events $jn vs $KE, or python3 top-k DIFFERS (see $OUT/*.totals)"
	fi
	# XPlane: python3-protobuf parses and ranks the device ops
	run1 "$OUT/py.topk" "$PY" "$HERE/topk_ref.py" --pydir "$PYDIR" xplane "$X" || return 1
	PYX=$W
	row "$sec" "baseline: python3 top-k (protobuf), XPlane" "$XE" "$XB" - - base
	"$BIN/xplane2ndjson" "$X" | "$BIN/trace-topk" -k 0 | totals self > "$OUT/nd.totals4"
	LC_ALL=C sort "$OUT/py.topk" > "$OUT/py.totals"
	if cmp -s "$OUT/nd.totals4" "$OUT/py.totals"; then
		note "$sec XPlane: python3-protobuf and xplane2ndjson | trace-topk agree on count, total and self time of all $(wc -l < "$OUT/py.totals") op names"
	else
		fail "$sec XPlane: python3 top-k DIFFERS from xplane2ndjson | trace-topk (see $OUT/*.totals)"
	fi
}

concurrency() { # LABEL: a note on the stages' CPU time against the wall time
	note "$(awk -v l="$1" -v a="$C1" -v b="$C2" -v w="$W" 'BEGIN {
	    if (w <= 0) w = 0.005
	    if (a + b > w) m = "the stages ran concurrently, on both cores"
	    else m = "no more than one core'"'"'s worth of CPU (a busy machine, or stages waiting on each other)"
	    printf "%s: the stages took %.2f + %.2f s of CPU in %.2f s wall (cpu/wall %.2f): %s\n", l, a, b, w, (a + b) / w, m }')"
}

# --- the rows of one size -------------------------------------------------
size() {
	n=$1
	sec=$(awk -v n="$n" 'BEGIN { if (n % 1000000 == 0) printf "%dM", n / 1e6; else if (n % 1000 == 0) printf "%dk", n / 1e3; else print n }')
	gen_inputs "$n"
	say "$sec: stream $(($SB / 1000000)) MB, Kineto $KE events $(($KB / 1000000)) MB, XPlane $XE events $(($XB / 1000000)) MB"
	JQS=- PYS=- JQK=- PYK=- PYX=-
	REPEAT=${BENCH_REPEAT:-$([ "$n" -le 1000000 ] && echo 3 || echo 1)}
	if [ "$n" -le 1000000 ] || [ "$BASE5" = 1 ]; then
		baselines "$sec" || fail "$sec: a baseline failed"
	else
		JQS=skip PYS=skip JQK=skip PYK=skip PYX=skip JQKC=skip
		note "$sec: jq and python3 baselines skipped (minutes each; BENCH_BASELINE_5M=1 runs them)"
	fi
	say "$sec: ndtrace, best of $REPEAT"
	note "$sec: ndtrace rows: the fastest of $REPEAT run(s)"
	best /dev/null "$BIN/trace-check" "$S" &&
	    row "$sec" "trace-check" "$SE" "$SB" "$JQS" "$PYS" evs:1.5
	best "$OUT/nd.topk" "$BIN/trace-topk" -k 0 "$S" &&
	    row "$sec" "trace-topk" "$SE" "$SB" "$JQS" "$PYS" evs:1.5
	best /dev/null "$BIN/trace-regions" "$S" &&
	    row "$sec" "trace-regions" "$SE" "$SB" "$JQS" "$PYS" evs:1.5
	best /dev/null "$BIN/trace-gaps" "$S" &&
	    row "$sec" "trace-gaps" "$SE" "$SB" "$JQS" "$PYS" evs:1.5
	best /dev/null "$BIN/trace-steps" "$S" &&
	    row "$sec" "trace-steps" "$SE" "$SB" "$JQS" "$PYS" evs:1.5
	best "$OUT/report.md" "$BIN/trace-report" "$S" &&
	    row "$sec" "trace-report (Markdown)" "$SE" "$SB" "$JQS" "$PYS" rep:1.5:1
	best /dev/null env NDTRACE_THREADS=2 "$BIN/trace-report" "$S" &&
	    row "$sec" "trace-report (Markdown), NDTRACE_THREADS=2" "$SE" "$SB" - - rep:1.5:1
	shapes
	best /dev/null "$BIN/trace-diff" --allow-same "$S" "$S" &&
	    row "$sec" "trace-diff (the stream against itself)" $((2 * SE)) $((2 * SB)) - - evs:1.5
	best /dev/null env NDTRACE_THREADS=2 "$BIN/trace-diff" --allow-same "$S" "$S" &&
	    row "$sec" "trace-diff, NDTRACE_THREADS=2" $((2 * SE)) $((2 * SB)) - - evs:1.5
	if best /dev/null "$BIN/chrome2ndjson" "$K"; then
		row "$sec" "chrome2ndjson" "$KE" "$KB" "$JQK" "$PYK" mbs:250
		row "$sec" "chrome2ndjson, Kineto: CPU against jq" "$KE" "$KB" "$JQK" - "jqc:$JQKC:20"
	fi
	chrome_shapes
	# an ordered Chrome trace (the stream through ndjson2chrome): the
	# ordered path, whose memory must not grow with the events
	O="$OUT/chrome-ordered-$n.json"
	[ -s "$O" ] || { say "generating $O"; "$BIN/ndjson2chrome" "$S" > "$O.tmp" && mv "$O.tmp" "$O"; } || exit 2
	best /dev/null "$BIN/chrome2ndjson" "$O" &&
	    row "$sec" "chrome2ndjson, ordered trace" "$SE" "$(stat -c %s "$O")" - - rss
	best /dev/null "$BIN/xplane2ndjson" "$X" &&
	    row "$sec" "xplane2ndjson" "$XE" "$XB" - "$PYX" evs:3
	if bestpipe "$OUT/report.md" "$BIN/xplane2ndjson $X" "$BIN/trace-report"; then
		row "$sec" "xplane2ndjson | trace-report" "$XE" "$XB" - "$PYX" "pipe:$n"
		concurrency "$sec xplane2ndjson | trace-report"
		head -1 "$OUT/report.md" | grep -q '^# ' || fail "$sec: xplane2ndjson | trace-report: no Markdown report"
	fi
	if bestpipe "$OUT/report.md" "$BIN/chrome2ndjson $K" "$BIN/trace-report"; then
		row "$sec" "chrome2ndjson | trace-report" "$KE" "$KB" "$JQK" "$PYK" "pipe:$n"
		concurrency "$sec chrome2ndjson | trace-report"
		head -1 "$OUT/report.md" | grep -q '^# ' || fail "$sec: chrome2ndjson | trace-report: no Markdown report"
	fi
}

# shapes: trace-report on plain gen-stream (random scope and duration per
# span, about 48,000 groups), with trace-check on the same file as the floor
shapes() {
	G="$OUT/stream-$n.ndjson"
	[ -s "$G" ] || { say "generating $G"; "$BIN/gen-stream" -n "$n" > "$G.tmp" && mv "$G.tmp" "$G"; } || exit 2
	GB=$(stat -c %s "$G")
	best /dev/null "$BIN/trace-check" "$G" || return 0
	row "$sec" "trace-check, gen-stream without -R" "$SE" "$GB" - - evs:1.5
	gc=$C
	best /dev/null "$BIN/trace-report" "$G" || return 0
	row "$sec" "trace-report (Markdown), gen-stream without -R" "$SE" "$GB" - - rep:1.5:1
	note "$sec gen-stream without -R: trace-report takes $(awk -v a="$C" -v b="$gc" 'BEGIN { printf "%.1f", a / (b > 0 ? b : 0.005) }')x trace-check's CPU ($C s against $gc s)"
}

# chrome_shapes: chrome2ndjson on gen-kineto -m (minified) and -j (JAX-style)
# against jq -c '.traceEvents[]' on the same file, per CPU second; like jq,
# only up to 1M events (or BENCH_BASELINE_5M=1): the target is at 1M
chrome_shapes() {
	[ "$n" -le 1000000 ] || [ "$BASE5" = 1 ] || return 0
	for f in m j; do
		F="$OUT/kineto-$f-$n.json"
		[ -s "$F" ] || { say "generating $F"; "$BIN/gen-kineto" -$f -e "$n" -o "$F"; } || exit 2
		FB=$(stat -c %s "$F")
		lab=$([ $f = m ] && echo "Kineto minified (gen-kineto -m)" || echo "JAX-style (gen-kineto -j)")
		run1 "$OUT/jq.chrome" jq -c '.traceEvents[]' "$F" || { fail "$sec jq on $F"; continue; }
		jw=$W jc=$C
		FE=$(wc -l < "$OUT/jq.chrome")
		rm -f "$OUT/jq.chrome"
		row "$sec" "baseline: jq -c '.traceEvents[]', $lab" "$FE" "$FB" - - base
		best /dev/null "$BIN/chrome2ndjson" "$F" &&
		    row "$sec" "chrome2ndjson, $lab" "$FE" "$FB" "$jw" - "jqc:$jc:20"
	done
}

# jaxsum N: issue 21's comparison with marin's profile_summary on the
# JAX-style file.  marin cannot run here (it needs wandb, not in Debian), so
# the reference is bench/jax_summary_ref.py: python3 (stdlib) reading the
# trace as profile_summary does; ndtrace's side is chrome2ndjson |
# trace-report, its RSS the sum of both stages
jaxsum() {
	n=$1
	sec=$(awk -v n="$n" 'BEGIN { if (n % 1000000 == 0) printf "%dM", n / 1e6; else if (n % 1000 == 0) printf "%dk", n / 1e3; else print n }')
	ref=${BENCH_JAX_REF:-$HERE/jax_summary_ref.py}
	if [ ! -f "$ref" ]; then
		note "$sec JAX-style summary: not measured, $ref is missing"
		return 0
	fi
	F="$OUT/kineto-j-$n.json"
	[ -s "$F" ] || { say "generating $F"; "$BIN/gen-kineto" -j -e "$n" -o "$F"; } || exit 2
	FB=$(stat -c %s "$F")
	cat "$F" > /dev/null
	run1 "$OUT/jaxref.out" "$PY" "$ref" "$F" || { fail "$sec $ref"; return 0; }
	pc=$C pr=$R
	row "$sec" "baseline: python3 jax_summary_ref.py (for marin's profile_summary), JAX-style" "$n" "$FB" - - base
	bestpipe "$OUT/report.md" "$BIN/chrome2ndjson $F" "$BIN/trace-report" || { fail "$sec JAX-style report"; return 0; }
	head -1 "$OUT/report.md" | grep -q '^# ' || fail "$sec: chrome2ndjson | trace-report on $F: no Markdown report"
	R=$RSUM
	row "$sec" "chrome2ndjson | trace-report, JAX-style (RSS: both stages)" "$n" "$FB" - - "ref:$pc:$pr:20:10"
}

# --- scale-out: 8 rank files, one stream against 2 workers -----------------
scaleout() {
	REPEAT=${BENCH_REPEAT:-2}
	RGEN=
	"$BIN/gen-stream" -R -n 1 > /dev/null 2>&1 && RGEN=-R
	D="$OUT/ranks$RGEN-$RS"
	sec=8x$(awk -v n="$RS" 'BEGIN { if (n % 1000 == 0) printf "%dk", n / 1e3; else print n }')
	mkdir -p "$D"
	for r in 0 1 2 3 4 5 6 7; do
		f="$D/rank$r.ndjson"
		if [ ! -s "$f" ]; then
			"$BIN/gen-stream" $RGEN -n "$RS" -s $((r + 1)) > "$f.tmp" && mv "$f.tmp" "$f" || exit 2
		fi
	done
	set +f
	FILES=$(echo "$D"/rank?.ndjson)
	set -f
	RB=$(cat $FILES | wc -c)
	RE=$((8 * RS))
	say "$sec: scale-out over 8 rank files (gen-stream $RGEN -n $RS -s 1..8), $((RB / 1000000)) MB, best of $REPEAT"
	note "$sec: scale-out over 8 rank files of $RS spans (gen-stream $RGEN -s 1..8; $((RB / 1000000)) MB), fastest of $REPEAT run(s); the speed-up is the single stream's wall time over the fan-out's (2 workers, then the merge)"
	for p in trace-topk trace-regions trace-steps trace-gaps trace-report; do
		best "$OUT/single.out" "$BIN/$p" $FILES || { fail "$p single stream"; continue; }
		row "$sec" "$p, 8 files in one stream" "$RE" "$RB" - - -
		sw=$W
		sc=$C
		bestfan "$D" "$p" || { fail "$p parallel fan-out"; continue; }
		row "$sec" "$p, parallel -j2 --partial, --merge" "$RE" "$RB" - - "up:$sw:$sc:$FC1:$FC2"
		note "$sec $p: one stream $sc s of CPU; fan-out $FC1 s of CPU in the 8 --partial runs + $FC2 s in the --merge"
		cmp -s "$OUT/single.out" "$D/merged.out" ||
		    fail "$p: parallel -j2 fan-out answer differs from the single stream"
		best /dev/null sh -c '
			rm -f "$1"/*.partial "$1/$3.merged"
			make -s -j2 -f "$4" DIR="$1" BIN="$2/" PROG="$3"' \
		    sh "$D" "$BIN" "$p" "$HERE/fanout.mk" || { fail "$p make -j2 fan-out"; continue; }
		row "$sec" "$p, make -j2 -f bench/fanout.mk" "$RE" "$RB" - - "up:$sw"
		cmp -s "$OUT/single.out" "$D/$p.merged" ||
		    fail "$p: make -j2 fan-out answer differs from the single stream"
		# xargs -P2 with one output file a job (no shared pipe: safe)
		best /dev/null sh -c '
			rm -f "$1"/*.partial
			printf "%s\n" "$1"/rank*.ndjson |
			    xargs -P2 -I{} "$2/$3" --partial -o {}.partial {} &&
			    "$2/$3" --merge -o "$1/xargs.out" "$1"/rank*.ndjson.partial' \
		    sh "$D" "$BIN" "$p" || { fail "$p xargs -P2 fan-out"; continue; }
		row "$sec" "$p, xargs -P2 --partial -o (a file a job), --merge" "$RE" "$RB" - - "up:$sw"
		cmp -s "$OUT/single.out" "$D/xargs.out" ||
		    fail "$p: xargs -P2 fan-out answer differs from the single stream"
	done
	grep -q 'fan-out' "$NOTES" && grep -q '^FAILED' "$NOTES" ||
	    note "scale-out: the fanned-out answers of trace-topk, trace-regions, trace-steps, trace-gaps and trace-report (GNU parallel -j2, make -j2 and xargs -P2) are byte-identical to the single-stream answer"
	# the launchers' own cost, 8 jobs that do nothing
	run1 /dev/null parallel -j2 true ::: 1 2 3 4 5 6 7 8 && pw=$W pc=$C &&
	run1 /dev/null sh -c 'printf "%s\n" 1 2 3 4 5 6 7 8 | xargs -P2 -n1 true' &&
	    note "scale-out: the launchers alone, 8 jobs of true: GNU parallel -j2 $pw s wall, $pc s of CPU (perl compiling parallel at start, then per job); xargs -P2 $W s wall, $C s of CPU"
}

# bestfan DIR PROG: REPEAT times the parallel -j2 --partial phase, then the
# --merge; W and C their sums (the fastest run), FC1 FC2 the CPU of each
bestfan() {
	bw= i=0 br=0
	while [ $i -lt "$REPEAT" ]; do
		run1 /dev/null sh -c '
			rm -f "$1"/*.partial
			parallel -j2 "$2/$3" --partial -o {}.partial {} ::: "$1"/rank*.ndjson' \
		    sh "$1" "$BIN" "$2" || return 1
		w1=$W c1=$C r1=$R
		run1 /dev/null sh -c '"$2/$3" --merge -o "$1/merged.out" "$1"/rank*.ndjson.partial' \
		    sh "$1" "$BIN" "$2" || return 1
		W=$(awk -v a="$w1" -v b="$W" 'BEGIN { printf "%.2f", a + b }')
		c2=$C
		C=$(awk -v a="$c1" -v b="$C" 'BEGIN { printf "%.2f", a + b }')
		[ "$r1" -gt "$R" ] && R=$r1
		if [ -z "$bw" ] || [ "$(awk -v a="$W" -v b="$bw" 'BEGIN { print (a < b) }')" = 1 ]; then
			bw=$W bc=$C FC1=$c1 FC2=$c2
		fi
		[ "$R" -gt "$br" ] && br=$R
		i=$((i + 1))
	done
	W=$bw C=$bc R=$br
}

if [ "$RENDER" != --render ]; then
	echo "ndtrace bench table: sizes $SIZES, $(nproc) cores, load average $LOAD0"
	for n in $SIZES; do
		size "$n"
	done
	REPEAT=${BENCH_REPEAT:-3}
	for n in ${BENCH_JAX_SIZES:-200000 1000000}; do
		jaxsum "$n"
	done
	note "JAX-style summary: marin's profile_summary (issue 21's reference) needs wandb, which is not in Debian, so it cannot run here; bench/jax_summary_ref.py stands in for it: python3 with the standard library reading the trace the way profile_summary does (see its header)"
	scaleout
fi
T1=$(date +%s)
LOAD1=$(cut -d' ' -f1-3 /proc/loadavg)
if [ "$RENDER" != --render ]; then
	printf 'T0=%s T1=%s LOAD0="%s" LOAD1="%s" DATE="%s" COMMIT="%s"\n' "$T0" "$T1" "$LOAD0" "$LOAD1" "$(date -u '+%Y-%m-%d %H:%M UTC')" "$COMMIT" > "$OUT/table.env"
fi
[ -s "$OUT/table.env" ] && . "$OUT/table.env"
grep -q FAILED "$NOTES" || true

# --- the table --------------------------------------------------------------
SMALL=$(echo $SIZES | awk '{ print $1 }')
BIG=$(echo $SIZES | awk '{ print $NF }')
table() {
	: > "$OUT/table.missed"
	awk -F'\t' -v small="$SMALL" -v big="$BIG" -v mf="$OUT/table.missed" '
	function r(b, w) {
		if (b == "-" || b == "") return "-"
		if (b == "skip") return "skipped"
		return sprintf("%.1fx", b / (w > 0 ? w : 0.005))
	}
	function size_of(s) { return s }
	{
		sec = $1; lab = $2; ev = $3; by = $4; w = $5; c = $6; rss = $7
		gsub(/\|/, "\\|", lab)
		cc = (c > 0) ? c : 0.005
		jq = $8; py = $9; tg = $10
		ww = (w > 0) ? w : 0.005
		evs = ev / ww / 1e6; mbs = by / ww / 1e6
		evc = ev / cc / 1e6; mbc = by / cc / 1e6
		load = " (met per cpu s: load)"
		if (lab == "trace-check") cw1[sec] = c / ww
		t = ""; m = ""
		if (tg ~ /^evs:/) {
			x = substr(tg, 5) + 0; t = ">= " x "M ev/s"
			m = (evs >= x) ? "met" : (evc >= x ? "MISSED" load : "MISSED")
		} else if (tg ~ /^mbs:/) {
			x = substr(tg, 5) + 0; t = ">= " x " MB/s"
			m = (mbs >= x) ? "met" : (mbc >= x ? "MISSED" load : "MISSED")
		} else if (tg == "rss") {
			t = "memory: see RSS flat"
		} else if (tg ~ /^pipe:/) {
			n = substr(tg, 6) + 0
			both = (c > w)
			# on a loaded machine: cpu/wall against trace-check'"'"'s (a
			# single-threaded process) in the same section
			rel = (sec in cw1 && cw1[sec] > 0) ? (c / ww) / cw1[sec] : 0
			hint = (!both && rel >= 1.3) ? sprintf(" (%.1fx the cpu/wall of one process: load)", rel) : ""
			if (n >= 5000000) {
				t = "< 5 s wall; cpu > wall"
				if (w < 5 && both) m = "met"
				else if (w < 5) m = "MISSED (one core)" hint
				else if (both) m = "MISSED (wall)"
				else m = "MISSED (wall, one core)" hint
			} else {
				t = "cpu > wall (both cores)"
				m = both ? "met" : "MISSED" hint
			}
		} else if (tg ~ /^up:/) {
			split(tg, u, ":")
			up = u[2] / ww
			t = sprintf(">= 1.7x: %.2fx", up)
			m = (up >= 1.7) ? "met" : "MISSED"
			if (u[5] != "") {
				# what 2 idle cores would give: the partials split over
				# both, then the merge
				est = u[3] / (u[4] / 2 + u[5] + 0.0001)
				t = t sprintf(" (from cpu s, idle cores: %.2fx)", est)
				if (up < 1.7 && est >= 1.7) m = "MISSED (met per cpu s: load)"
			}
		} else if (tg ~ /^rep:/) {
			split(tg, u, ":")
			us = c / (ev > 0 ? ev : 1) * 1e6
			t = sprintf(">= %gM ev/s, <= %g us/event cpu: %.2f us", u[2], u[3], us)
			okw = (evs >= u[2] + 0); okc = (us <= u[3] + 0)
			if (okw && okc) m = "met"
			else {
				m = "MISSED (" (okc ? "wall" : (okw ? "cpu" : "wall, cpu")) ")"
				if (!okw && okc && evc >= u[2] + 0) m = "MISSED (wall; met per cpu s: load)"
			}
		} else if (tg ~ /^jqc:/) {
			split(tg, u, ":")
			if (u[2] == "-" || u[2] == "skip" || u[2] == "") {
				t = ">= " u[3] "x jq per cpu s"; m = "not measured (no jq run at this size)"
			} else {
				x = u[2] / cc
				t = sprintf(">= %gx jq per cpu s: %.1fx", u[3], x)
				m = (x >= u[3] + 0) ? "met" : "MISSED"
			}
		} else if (tg ~ /^ref:/) {
			split(tg, u, ":")
			xc = u[2] / cc; xr = u[3] / (rss > 0 ? rss : 1)
			t = sprintf("cpu >= %gx less: %.1fx; peak RSS >= %gx less: %.1fx", u[4], xc, u[5], xr)
			okc = (xc >= u[4] + 0); okr = (xr >= u[5] + 0)
			m = (okc && okr) ? "met" : "MISSED (" (okc ? "RSS" : (okr ? "cpu" : "cpu, RSS")) ")"
		} else if (tg == "base") {
			t = "baseline"
		}
		printf "| %s | %s | %s | %s | %.2f | %.2f | %.2f | %.2f | %.2f | %.0f | %.1f | %s | %s |\n",
		    sec, lab, r(jq, w), r(py, w), w, c, c / ww, evs, evc, mbs, rss / 1024, t, m
		if (m ~ /^MISSED/) print sec " " $2 ": " t " " m > mf
		if (tg != "base" && tg !~ /^up:/ && tg !~ /^jqc:/ && tg !~ /^ref:/ && tg != "-") {
			if (sec == small) rs[lab] = rss
			if (sec == big) rb[lab] = rss
			if (!(lab in seen)) { seen[lab] = 1; order[++no] = lab; raw[lab] = $2 }
		}
	}
	END {
		if (small == big) exit
		for (i = 1; i <= no; i++) {
			l = order[i]
			if (!(l in rs) || !(l in rb)) continue
			g = rb[l] / rs[l]
			ok = (rb[l] <= 1.25 * rs[l] + 8192)
			printf "| %s/%s | %s: peak RSS | | | | | | | | | %.1f -> %.1f | RSS flat (<= 1.25x + 8 MiB): %.2fx | %s |\n",
			    small, big, l, rs[l] / 1024, rb[l] / 1024, g, ok ? "met" : "MISSED"
			if (!ok) printf "%s/%s %s: peak RSS %.1f -> %.1f MiB, not flat\n", small, big, raw[l], rs[l] / 1024, rb[l] / 1024 > mf
		}
	}' "$TSV"
}
secname() { awk -v n="$1" 'BEGIN { if (n % 1000000 == 0) printf "%dM", n / 1e6; else if (n % 1000 == 0) printf "%dk", n / 1e3; else print n }'; }
SMALL=$(secname "$SMALL") BIG=$(secname "$BIG")
{
	echo "| size | program | vs jq | vs python3 | wall s | cpu s | cpu/wall | M ev/s | M ev/cpu s | MB/s | peak RSS MiB | target | |"
	echo "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|---|"
	table
} > "$OUT/table.md"
{
	echo "Ratios: baseline wall time / ndtrace wall time on the same file (higher is better; 'skipped': baselines not run at this size)."
	echo "Filters are compared with jq and python3 computing the device-op top-k table of the same stream (bench/topk_ref.py; trace-diff reads the stream twice and has no baseline), converters and pipelines with jq -c '.traceEvents[]' (Chrome) and python3 computing the same top-k table from the raw file (stdlib json; python3-protobuf for XPlane): the baselines do less work than trace-report, so its ratios are conservative."
	echo "cpu s is user+sys of every process and thread (for a pipeline, both stages); cpu/wall > 1 means more than one core at work."
	echo "Peak RSS is /usr/bin/time -v's maximum resident set size (for a pipeline, the larger stage)."
	cat "$NOTES"
	if [ -s "$OUT/table.missed" ]; then
		echo "Targets missed ($(wc -l < "$OUT/table.missed")):"
		sed 's/^/  - /' "$OUT/table.missed"
	else
		echo "Every target met."
	fi
	echo "Load average $LOAD0 at the start, $LOAD1 at the end; the bench took $((T1 - T0)) s. The machine is shared: cpu s is the steadier figure."
} > "$OUT/table.txt"
echo
echo "== ndtrace bench: ratios first, then absolute figures =="
cat "$OUT/table.md"
echo
cat "$OUT/table.txt"

if [ "${BENCH_RESULTS:-0}" = 1 ]; then
	R="$HERE/RESULTS.md"
	{
		echo "# Benchmark results"
		echo
		echo "Written by \`make bench BENCH_RESULTS=1\` (bench/table.sh); rerun it to refresh this file."
		echo
		echo "- date: $DATE (end of the run)"
		echo "- commit: $COMMIT (the tree the programs were built from when the run started)"
		echo "- machine: $(nproc) cores, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), $(awk '/MemTotal/ { printf "%.1f GiB RAM", $2 / 1048576 }' /proc/meminfo), $(. /etc/os-release; echo "$PRETTY_NAME"), Linux $(uname -r), $(uname -m)"
		echo "- tools: $(jq --version), $("$PY" --version 2>&1), python3-protobuf $("$PY" -c 'import google.protobuf as p; print(p.__version__)' 2>/dev/null || echo '?'), $(cc --version | head -1)"
		echo "- load average: $LOAD0 at the start, $LOAD1 at the end (the machine is shared with other jobs)"
		echo "- settings: BENCH_SIZES=\"$SIZES\" BENCH_REPEAT=${BENCH_REPEAT:-(default: 3 up to 1M, 1 above, 2 for the scale-out)} BENCH_BASELINE_5M=$BASE5 BENCH_RANK_SPANS=$RS; took $((T1 - T0)) s"
		echo
		cat "$OUT/table.md"
		echo
		echo "## Notes"
		echo
		sed 's/^\([^ ]\)/- \1/' "$OUT/table.txt"
		if [ -s "$HERE/RESULTS.notes" ]; then
			echo
			cat "$HERE/RESULTS.notes"
		fi
	} > "$R.tmp" && mv "$R.tmp" "$R"
	echo "wrote $R"
fi
exit $rc
