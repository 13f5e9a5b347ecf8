#!/usr/bin/env bats
# Resource limits: every program on a large input under `ulimit -v 524288`
# (512 MB of address space) either succeeds or stops with a clear
# "out of memory" message (exit 2) — never a crash or a signal.
#
# The inputs are about 60-95 MB, generated once for the file, not 1 GB: the
# stream programs hold state per timeline, per key and per open span, not
# per record, so their memory does not depend on the length of the input
# (a 1 GB stream costs the same; the 1 GB runs belong to the benchmarks).
# The ingest programs are the exception, as their manuals say:
# xplane2ndjson holds the XPlane file (the protobuf is not a stream) and
# chrome2ndjson keeps 48 bytes per event until it writes them out.
#
# Skipped under the sanitizers: ASan reserves terabytes of address space,
# so no `ulimit -v` can apply to it.

load helpers

setup_file() {
	[ -z "${ND_ASAN:-}" ] || return 0
	L="$BATS_FILE_TMPDIR"
	"$ND_BIN/gen-xplane" --seed 1 --events 2000000 -o "$L/big.xplane.pb"
	"$ND_BIN/gen-kineto" -e 200000 -s 1 -r 0 -o "$L/big.json"
	"$ND_BIN/gen-stream" -n 200000 > "$L/big.ndjson"
	"$ND_BIN/gen-stream" -n 200000 -s 2 > "$L/big2.ndjson"
	export L
}

setup() {
	[ -z "${ND_ASAN:-}" ] || skip "address space limits do not apply under ASan"
	T="$BATS_TEST_TMPDIR"
}

# limited CMD...: run CMD under ulimit -v 524288 with its output to a file;
# it must exit 0, or exit 2 with an out-of-memory message; never a signal.
limited() {
	run bash -c 'ulimit -v 524288 && "$@" > "$0/out" 2> "$0/err"; echo $?' \
	    "$T" "$@"
	st=$output
	[ "$st" = 0 ] && return 0
	if [ "$st" = 2 ] && grep -q 'out of memory' "$T/err"; then
		return 0
	fi
	fail "$* under ulimit -v 524288: exit $st: $(head -3 "$T/err")"
}

@test "xplane2ndjson and chrome2ndjson on 60-90 MB profiles in 512 MB" {
	limited "$ND_BIN/xplane2ndjson" "$L/big.xplane.pb"
	limited "$ND_BIN/chrome2ndjson" "$L/big.json"
	# also from a pipe (no mapping: the reading buffer grows instead)
	limited bash -c '"$0" - < "$1"' "$ND_BIN/xplane2ndjson" "$L/big.xplane.pb"
	limited bash -c 'gzip -1c "$1" | "$0" -' "$ND_BIN/chrome2ndjson" "$L/big.json"
}

@test "the stream programs on a 95 MB stream in 512 MB" {
	for p in trace-check trace-topk trace-regions trace-gaps trace-steps \
	    trace-classify trace-report trace-mem ndjson2chrome; do
		limited "$ND_BIN/$p" "$L/big.ndjson"
	done
	limited "$ND_BIN/trace-topk" --by scope --table "$L/big.ndjson"
	limited "$ND_BIN/trace-regions" --folded "$L/big.ndjson"
	limited "$ND_BIN/trace-steps" --summary "$L/big.ndjson"
	limited "$ND_BIN/trace-context" --regex -C 2 'dot' "$L/big.ndjson"
	limited "$ND_BIN/trace-diff" "$L/big.ndjson" "$L/big2.ndjson"
	limited "$ND_BIN/trace-report" --html "$L/big.ndjson"
}

@test "an allocation that fails is a clear message, exit 2, and no -o file" {
	# 128 MB of address space cannot hold a 90 MB profile read from a
	# pipe (the buffer doubles past it): nd_xmalloc's message.
	run bash -c 'ulimit -v 131072 && "$0" -o "$1/out.ndjson" - < "$2"' \
	    "$ND_BIN/xplane2ndjson" "$T" "$L/big.xplane.pb"
	assert_failure 2
	assert_output --regexp '^xplane2ndjson: out of memory \(allocating [0-9]+ bytes\)$'
	[ ! -e "$T/out.ndjson" ] || fail "a partial -o file was left"
	[ -z "$(ls "$T" | grep 'out.ndjson')" ] || fail "a temporary was left"
}
