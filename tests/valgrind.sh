#!/bin/sh
# make check-valgrind: valgrind's memcheck over the ingest programs on the
# real profiles of tests/fixtures (xplane2ndjson, chrome2ndjson, and
# trace-mem on the memory snapshot) and on generated profiles.  Any
# memcheck error, or a definite leak, fails.
#   sh tests/valgrind.sh BIN_DIR [quick|full]
# quick (make check) takes one profile of each shape, the small ones;
# full (make check-valgrind-full) takes every fixture.
set -u
BIN=$1
SET=${2:-full}
top=$(cd "$(dirname "$0")/.." && pwd)
FX=${ND_FIXTURES:-$top/tests/fixtures}
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

# The fixtures are part of the tree: missing, this is a failure.
[ -f "$FX/xplane/tpu_inference_4core.xplane.pb" ] || {
	echo "valgrind: no fixtures in $FX" >&2
	exit 2
}
case $SET in
quick)
	# One or more profiles of each producer and shape, the small ones
	# (about 1.5 s of CPU each under memcheck, most of it start-up):
	# XPlane from JAX on ROCm and on TPU (allocator stats, big ids);
	# Kineto GPU, AMD, Triton, CPU-only, the 2021 format's sibling, a
	# multi-rank DLRM, hand-written B/E/C/P, the legacy torch format and
	# its invalid JSON.
	xp="rocm_jax08_gemm tpu_inference_4core"
	ch="chrome/hta_alexnet.json.gz chrome/hta_mi250_rocm.json.gz
	    chrome/hta_triton.json.gz chrome/hta_cpu_only_rank-34.pt.trace.json.gz
	    chrome/kineto_before_fix.json chrome/xprof_handwritten_trace.json
	    chrome/tracelens_torch_compile_triton.json.gz
	    chrome/dlrm_8ranks/worker0_step_12.1694128201545.pt.trace.json.gz
	    torch-legacy/single.pt.trace.json.gz
	    torch-legacy/edge_unescaped_names.pt.trace.json"
	;;
full)
	xp=$(cd "$FX/xplane" && ls *.xplane.pb | sed 's/\.xplane\.pb$//')
	ch=$(cd "$FX" && ls chrome/*.json* chrome/dlrm_8ranks/*.json* \
	    torch-legacy/*.pt.trace.json*)
	;;
*)
	echo "valgrind: set $SET: not quick or full" >&2
	exit 2
	;;
esac
for f in $xp; do
	vg xplane2ndjson "$FX/xplane/$f.xplane.pb"
done
for f in $ch; do
	case $f in
	*edge_unescaped*) vg -s 2 chrome2ndjson "$FX/$f" ;;	# invalid JSON
	*) vg chrome2ndjson "$FX/$f" ;;
	esac
done
vg trace-mem "$FX/memory/cs336_memory_snapshot.pickle"
vg trace-mem --timeline -k 5 "$FX/memory/cs336_memory_snapshot.pickle"
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
echo "valgrind ($SET): $runs runs, $fails failed"
[ "$fails" = 0 ]
