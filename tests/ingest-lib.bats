#!/usr/bin/env bats
# The ingest engines as a library (lib/ingest/nd_kineto, lib/ingest/nd_xpconv, lib/core/nd_end):
# `nd-unit ingest` drives them through their API on one thread (Chrome
# items pushed one by one with nd_kineto_feed), and must give the bytes of
# the programs, which run them with their threads; the end record both
# write (nd_end) is checked against an independent count of the records.

load helpers
bats_require_minimum_version 1.5.0

# The meta record names its producer: nd-unit here.
as_program() { # PROGRAM KIND FILE [BUDGET]
	local p=$1
	shift
	"$ND_BIN/nd-unit" ingest "$@" | sed "1s/\"producer\":\"nd-unit /\"producer\":\"$p /"
}

setup() {
	need_fixtures
}

@test "ingest lib: Chrome items pushed one by one on one thread give chrome2ndjson's bytes, buffered and streamed" {
	local f
	for f in hta_alexnet.json.gz kineto2021_resnet50_nw0.pt.trace.json.gz \
	    xprof_handwritten_trace.json kineto_before_fix.json hta_mi250_rocm.json.gz; do
		# files and cmp, not `run`: bats holds output line by line
		"$ND_BIN/chrome2ndjson" -q "$FIXTURES/chrome/$f" >"$BATS_TEST_TMPDIR/prog.nd"
		as_program chrome2ndjson chrome "$FIXTURES/chrome/$f" >"$BATS_TEST_TMPDIR/lib.nd"
		[ -s "$BATS_TEST_TMPDIR/lib.nd" ] || fail "$f: nothing written"
		cmp -s "$BATS_TEST_TMPDIR/prog.nd" "$BATS_TEST_TMPDIR/lib.nd" || fail "$f: buffered bytes differ"
		# a budget of 3 records: the ordered path spools and streams
		CHROME2NDJSON_BUDGET=3 "$ND_BIN/chrome2ndjson" -q "$FIXTURES/chrome/$f" >"$BATS_TEST_TMPDIR/prog3.nd"
		as_program chrome2ndjson chrome "$FIXTURES/chrome/$f" 3 >"$BATS_TEST_TMPDIR/lib3.nd"
		cmp -s "$BATS_TEST_TMPDIR/prog3.nd" "$BATS_TEST_TMPDIR/lib3.nd" || fail "$f: streamed bytes differ"
	done
}

@test "ingest lib: the XPlane engine on one thread gives xplane2ndjson's bytes with two renderers" {
	local f
	for f in tpu_inference_4core rocm_jax08_gemm tf_gpu_8gpu_worker; do
		XPLANE2NDJSON_THREADS=2 "$ND_BIN/xplane2ndjson" "$FIXTURES/xplane/$f.xplane.pb" >"$BATS_TEST_TMPDIR/prog.nd"
		as_program xplane2ndjson xplane "$FIXTURES/xplane/$f.xplane.pb" >"$BATS_TEST_TMPDIR/lib.nd"
		[ -s "$BATS_TEST_TMPDIR/lib.nd" ] || fail "$f: nothing written"
		cmp -s "$BATS_TEST_TMPDIR/prog.nd" "$BATS_TEST_TMPDIR/lib.nd" || fail "$f: bytes differ"
	done
}

# The end record of each engine: its fixed members in nd_end's order, the
# record counts equal to the records written, the sha256 of the file.
check_end() { # KIND FILE STREAM
	"$PY" - "$@" <<'EOF'
import hashlib, json, sys
kind, path, stream = sys.argv[1:]
recs = [json.loads(l) for l in open(stream)]
end = recs[-1]
keys = list(end)
assert keys[:6] == ["type", "events", "spans", "instants", "counters", "flows"], keys
assert keys[-3:] == ["sha256", "suspected_truncation", "warnings"], keys
assert "skipped" in keys[6:-3], keys
for t, k in (("span", "spans"), ("instant", "instants"), ("counter", "counters"), ("flow", "flows")):
    n = sum(1 for r in recs if r["type"] == t)
    assert end[k] == n, (k, end[k], n)
assert end["sha256"] == hashlib.sha256(open(path, "rb").read()).hexdigest()
extra = {"chrome": ["metadata", "phases", "categories", "skipped"],
         "xplane": ["skipped", "planes", "lines"]}[kind]
assert keys[6:-3] == extra, keys
print(kind, end["events"], end["spans"], end["instants"])
EOF
}

@test "ingest lib: both engines write the end record's members in one order, with counts of what they wrote" {
	"$ND_BIN/chrome2ndjson" "$FIXTURES/chrome/hta_alexnet.json.gz" >"$BATS_TEST_TMPDIR/c.nd"
	run -0 check_end chrome "$FIXTURES/chrome/hta_alexnet.json.gz" "$BATS_TEST_TMPDIR/c.nd"
	assert_output --regexp '^chrome [0-9]+ [1-9][0-9]* [0-9]+$'
	"$ND_BIN/xplane2ndjson" "$FIXTURES/xplane/tpu_inference_4core.xplane.pb" >"$BATS_TEST_TMPDIR/x.nd"
	run -0 check_end xplane "$FIXTURES/xplane/tpu_inference_4core.xplane.pb" "$BATS_TEST_TMPDIR/x.nd"
	assert_output --regexp '^xplane [0-9]+ [1-9][0-9]* [0-9]+$'
}

@test "ingest lib: an input error through the API is one line with the byte offset, exit 2, nothing written" {
	printf '{"traceEvents":[{"ph":"X","ts":1,"dur":2,"pid":1,"tid":1,"name":"a"},\n{"ph":' \
	    >"$BATS_TEST_TMPDIR/cut.json"
	run --separate-stderr -2 "$ND_BIN/nd-unit" ingest chrome "$BATS_TEST_TMPDIR/cut.json"
	assert_output ''
	[ "${#stderr_lines[@]}" -eq 1 ] || fail "stderr: $stderr"
	[[ "$stderr" == "nd-unit: $BATS_TEST_TMPDIR/cut.json: byte "* ]] || fail "stderr: $stderr"
	run --separate-stderr -2 "$ND_BIN/chrome2ndjson" "$BATS_TEST_TMPDIR/cut.json"
	[[ "$stderr" == "chrome2ndjson: $BATS_TEST_TMPDIR/cut.json: byte "* ]] || fail "stderr: $stderr"
	printf '\x0a\x05\x08' >"$BATS_TEST_TMPDIR/cut.xplane.pb"
	run --separate-stderr -2 "$ND_BIN/nd-unit" ingest xplane "$BATS_TEST_TMPDIR/cut.xplane.pb"
	assert_output ''
	[ "${#stderr_lines[@]}" -eq 1 ] || fail "stderr: $stderr"
	[[ "$stderr" == "nd-unit: $BATS_TEST_TMPDIR/cut.xplane.pb: "* ]] || fail "stderr: $stderr"
}

@test "ingest lib: the programs are option parsing and I/O, the fuzzers call the library, not program source" {
	local top="$BATS_TEST_DIRNAME/.."
	[ "$(wc -l <"$top/cmd/chrome2ndjson.c")" -lt 400 ]
	[ "$(wc -l <"$top/cmd/xplane2ndjson.c")" -lt 400 ]
	run grep -ln 'include "\.\./cmd/\|define main' "$top"/fuzz/*.c
	assert_failure 1
	assert_output ''
	grep -q 'nd_kineto_feed(' "$top/fuzz/fuzz_chrome.c"
	grep -q 'nd_kineto_finish(' "$top/fuzz/fuzz_chrome.c"
	grep -q 'nd_xpconv_convert(' "$top/fuzz/fuzz_xplane2ndjson.c"
}
