#!/usr/bin/env bats
# Every recipe of examples/Makefile runs on the bundled example data.

load helpers

# The recipes and make's rebuild rules are the same in both builds: the
# sanitizer pass (ND_ASAN) leaves them out.  The programs they call run under
# the sanitizers on the same kinds of input in their own files
# (xplane2ndjson, trace-report, report-html, trace-topk, trace-regions,
# ndjson2chrome, top-regions-lib).
setup() {
	[ -z "${ND_ASAN:-}" ] || skip "examples/Makefile runs in the normal build only (ND_ASAN)"
}

@test "examples/Makefile: every recipe runs" {
	run make -s -C "$BATS_TEST_DIRNAME/../examples" all BIN="$ND_BIN" OUT="$BATS_TEST_TMPDIR/recipes" RANKS=4
	[ "$status" -eq 0 ] || fail "$output"
	assert_output --partial "fan-out == single stream"
	[ -s "$BATS_TEST_TMPDIR/recipes/report.md" ]
	[ -s "$BATS_TEST_TMPDIR/recipes/report.html" ]
	[ -s "$BATS_TEST_TMPDIR/recipes/regions.folded" ]
	[ -s "$BATS_TEST_TMPDIR/recipes/top.csv" ]
	# the Perfetto file is JSON with the events of step 3's collectives
	run jq '[.traceEvents[] | select(.ph == "X")] | length' "$BATS_TEST_TMPDIR/recipes/step3-comm.json"
	want=$(trace-check -q "$BATS_TEST_TMPDIR/recipes/run.ndjson" && jq -s '[.[] | select(.type == "span" and .class == "communication" and .step == 3)] | length' "$BATS_TEST_TMPDIR/recipes/run.ndjson")
	assert_output "$want"
}

@test "make demo's script writes the example reports and says where" {
	run sh "$BATS_TEST_DIRNAME/../examples/demo.sh" "$ND_BIN" "$BATS_TEST_TMPDIR/demo"
	[ "$status" -eq 0 ] || fail "$output"
	assert_output --partial "report.md"
	assert_output --partial "report.html"
	# the pipeline part: the slow stage of the bundled 1F1B traces, and its chart
	assert_output --partial "schedule 1f1b, clock step_marker"
	assert_output --regexp "slow stage 2 \(rank 2, "
	head -c 4 "$BATS_TEST_TMPDIR/demo/pipeline.svg" | grep -q '<svg'
}

@test "examples/Makefile report: the stream follows PROFILE and its files (issue 18 item 6)" {
	O="$BATS_TEST_TMPDIR/o"
	mk() { make -s -C "$BATS_TEST_DIRNAME/../examples" report BIN="$ND_BIN" OUT="$O" "$@"; }
	run mk
	assert_success
	xplane2ndjson "$O/logdir" > "$BATS_TEST_TMPDIR/default.ndjson"
	cmp "$O/run.ndjson" "$BATS_TEST_TMPDIR/default.ndjson"
	# another profile: its own stream and report, not the previous one's
	mkdir -p "$BATS_TEST_TMPDIR/other"
	gen-xplane --kind gpu --seed 5 --events 3000 -o "$BATS_TEST_TMPDIR/other/h.xplane.pb"
	run mk PROFILE="$BATS_TEST_TMPDIR/other/"
	assert_success
	xplane2ndjson "$BATS_TEST_TMPDIR/other/" > "$BATS_TEST_TMPDIR/other.ndjson"
	cmp "$O/run.ndjson" "$BATS_TEST_TMPDIR/other.ndjson"
	run grep -c '"process":"/device:GPU:' "$O/run.ndjson"
	[ "$output" -gt 0 ]
	trace-report "$O/run.ndjson" | cmp - "$O/report.md"
	# a file of the profile replaced: made again
	gen-xplane --kind gpu --seed 6 --events 2000 -o "$BATS_TEST_TMPDIR/other/h.xplane.pb"
	run mk PROFILE="$BATS_TEST_TMPDIR/other/"
	assert_success
	xplane2ndjson "$BATS_TEST_TMPDIR/other/" | cmp - "$O/run.ndjson"
	# and back to the default profile
	run mk
	assert_success
	cmp "$O/run.ndjson" "$BATS_TEST_TMPDIR/default.ndjson"
	# nothing changed: the stream is not made again
	t=$(stat -c %y "$O/run.ndjson")
	run mk
	assert_success
	[ "$(stat -c %y "$O/run.ndjson")" = "$t" ]
}
