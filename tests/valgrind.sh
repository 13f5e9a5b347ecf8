#!/bin/sh
# make check-valgrind: valgrind's memcheck over the ingest programs on the
# real profiles of ../shared/fixtures (xplane2ndjson, chrome2ndjson, and
# trace-mem on the memory snapshot), or on generated profiles when the
# fixtures are absent.  Any memcheck error, or a definite leak, fails.
#   sh tests/valgrind.sh BIN_DIR
set -u
BIN=$1
top=$(cd "$(dirname "$0")/.." && pwd)
FX=${ND_FIXTURES:-$top/../shared/fixtures}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
VG="valgrind -q --error-exitcode=1 --leak-check=full
    --errors-for-leak-kinds=definite --show-leak-kinds=definite"
fails=0
runs=0

# vg [-s STATUS] PROG ARGS...: run under memcheck, output discarded; report
# and count a failure: a memcheck error or a definite leak (exit 1), or an
# exit status other than STATUS (default 0).
vg() {
	want=0
	if [ "$1" = -s ]; then
		want=$2
		shift 2
	fi
	runs=$((runs + 1))
	p=$1
	shift
	st=0
	$VG "$BIN/$p" "$@" > /dev/null 2> "$T/err" || st=$?
	if [ "$st" != "$want" ]; then
		echo "valgrind: FAILED (exit $st, want $want): $p $*"
		sed 's/^/    /' "$T/err" | head -40
		fails=$((fails + 1))
	fi
}

if [ -d "$FX" ]; then
	for f in "$FX"/xplane/*.xplane.pb; do
		vg xplane2ndjson "$f"
	done
	for f in "$FX"/chrome/*.json* "$FX"/chrome/dlrm_8ranks/*.json* \
	    "$FX"/torch-legacy/*.pt.trace.json*; do
		case $f in
		*edge_unescaped*) vg -s 2 chrome2ndjson "$f" ;;	# invalid JSON
		*) vg chrome2ndjson "$f" ;;
		esac
	done
	[ -f "$FX/memory/cs336_memory_snapshot.pickle" ] &&
	    vg trace-mem "$FX/memory/cs336_memory_snapshot.pickle"
	[ -f "$FX/memory/cs336_memory_snapshot.pickle" ] &&
	    vg trace-mem --timeline -k 5 "$FX/memory/cs336_memory_snapshot.pickle"
else
	echo "valgrind: no $FX: generated profiles only"
fi
# generated profiles, always (the bundled generators' output)
"$BIN/gen-xplane" --seed 3 --events 20000 -o "$T/tpu.xplane.pb"
"$BIN/gen-xplane" --seed 4 --events 20000 --kind gpu -o "$T/gpu.xplane.pb"
"$BIN/gen-kineto" -e 20000 -s 5 -r 2 -o "$T/k.json"
gzip -c "$T/k.json" > "$T/k.json.gz"
vg xplane2ndjson "$T/tpu.xplane.pb" "$T/gpu.xplane.pb"
vg chrome2ndjson "$T/k.json.gz"
# error paths: a truncated profile of each kind
head -c 5000 "$T/tpu.xplane.pb" > "$T/cut.xplane.pb"
head -c 5000 "$T/k.json.gz" > "$T/cut.json.gz"
vg -s 2 xplane2ndjson "$T/cut.xplane.pb"
vg -s 2 chrome2ndjson "$T/cut.json.gz"
echo "valgrind: $runs runs, $fails failed"
[ "$fails" = 0 ]
