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
	grep -q 'nd_xpconv_convert_mem(' "$top/fuzz/fuzz_xplane2ndjson.c"
	# errors are values: no harness jumps out of an exit or tracks the
	# allocations an exit would leak, and each includes the public header
	# alone (besides its own fuzz/*.h)
	run grep -ln 'setjmp\|longjmp\|malloc_and_free_hooks\|/proc/self/fd' \
	    "$top"/fuzz/*.c "$top"/fuzz/*.h
	assert_failure 1
	run sh -c "grep -h '^#include \"' '$top'/fuzz/*.c '$top'/fuzz/*.h | sort -u"
	assert_output $'#include "fuzz_lines.h"\n#include "fuzz_stream.h"\n#include "ndtrace.h"'
	# the one die hook a harness sets makes an exit a bug (abort)
	run sh -c "grep -h 'nd_die_hook = ' '$top'/fuzz/*.c | sort -u | tr -d '\t'"
	assert_output 'nd_die_hook = die_is_a_bug;'
}

@test "ingest lib: an XPlane error is a value: the process goes on to the next input, the message is the program's" {
	local good="$BATS_TEST_DIRNAME/fixtures/xplane/rocm_jax08_gemm.xplane.pb"
	# a plane whose event (its message at byte 30) names metadata id 99,
	# which the plane does not define; the second input is valid
	printf '\x0a\x32\x08\x01\x12\x0d/device:TPU:0\x1a\x11\x08\x01\x12\x03Ops\x18\x64\x22\x06\x08\x63\x10\x0a\x18\x14\x22\x0c\x08\x01\x12\x08\x08\x01\x12\x04fuse' \
	    >"$BATS_TEST_TMPDIR/md.pb"
	head -c 300 "$good" >"$BATS_TEST_TMPDIR/cut.pb"
	# the event's message: the tag of XLine.events (field 4, length 6)
	at=$("$PY" -c 'import sys; print(open(sys.argv[1], "rb").read().index(b"\x22\x06\x08\x63"))' "$BATS_TEST_TMPDIR/md.pb")
	[ "$at" = 30 ] || fail "event at $at"
	run --separate-stderr "$ND_BIN/nd-unit" xperr "$BATS_TEST_TMPDIR/md.pb" "$BATS_TEST_TMPDIR/cut.pb" "$good"
	assert_success
	[ -z "$stderr" ] || fail "stderr: $stderr"
	local want_len
	want_len=$(python3 -c 'import sys; d=open(sys.argv[1],"rb").read(); n=s=0
i=1
while True:
    b=d[i]; n|=(b&0x7f)<<s; s+=7; i+=1
    if b<0x80: break
print(n, 300-i)' "$good")
	set -- $want_len
	assert_output "$BATS_TEST_TMPDIR/md.pb: error at byte 30: $BATS_TEST_TMPDIR/md.pb: byte 30: event metadata id 99 is not defined in plane '/device:TPU:0'
$BATS_TEST_TMPDIR/cut.pb: error at byte 1: $BATS_TEST_TMPDIR/cut.pb: byte 1: length $1 of field 1 runs past the end of the enclosing message ($2 bytes left)
$good: ok"
	# the program prints the same message, exit 2, nothing on stdout
	run --separate-stderr "$ND_BIN/xplane2ndjson" "$BATS_TEST_TMPDIR/md.pb"
	assert_failure 2
	assert_output ''
	[ "$stderr" = "xplane2ndjson: $BATS_TEST_TMPDIR/md.pb: byte 30: event metadata id 99 is not defined in plane '/device:TPU:0'" ] || fail "stderr: $stderr"
}

@test "ingest lib: a Chrome error is a value: the reader's, the engine's, the input's; the process goes on" {
	local good="$BATS_TEST_DIRNAME/fixtures/chrome/xprof_handwritten_trace.json"
	local T="$BATS_TEST_TMPDIR"
	printf '{"traceEvents":[{"ph":"X","name":"a","ts":1,"dur":2,"pid":1,"tid":1},{"ph":"X" "name"}]}' >"$T/json.json"
	printf '[1,2]' >"$T/nums.json"
	# the offsets, 1-based, by python: the member name where a ',' was
	# due (the reader's error), the first element (the engine's)
	read -r o1 o2 < <("$PY" -c 'import sys
a = open(sys.argv[1]).read(); b = open(sys.argv[2]).read()
print(a.index("\"name\"}") + 1, b.index("1") + 1)' "$T/json.json" "$T/nums.json")
	run --separate-stderr "$ND_BIN/nd-unit" chromeerr "$T/json.json" "$T/nums.json" "$T/missing.json" "$good"
	assert_success
	[ -z "$stderr" ] || fail "stderr: $stderr"
	assert_output "$T/json.json: error at byte $o1: $T/json.json: byte $o1: invalid JSON: expected ',' or '}' in object; text there: \"name\"}]}
$T/nums.json: error at byte $o2: $T/nums.json: byte $o2: not a Chrome trace: a JSON array of numbers
$T/missing.json: error at byte -: $T/missing.json: No such file or directory
$good: ok"
	# the program prints the same messages, exit 2, nothing on stdout
	for f in json nums; do
		run --separate-stderr "$ND_BIN/chrome2ndjson" "$T/$f.json"
		assert_failure 2
		assert_output ''
	done
	[ "$stderr" = "chrome2ndjson: $T/nums.json: byte $o2: not a Chrome trace: a JSON array of numbers" ] || fail "stderr: $stderr"
}
