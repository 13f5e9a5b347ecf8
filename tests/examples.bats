#!/usr/bin/env bats
# Every recipe of examples/Makefile runs on the bundled example data.

load helpers

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
	run sh "$BATS_TEST_DIRNAME/../examples/demo.sh" "$ND_BIN"
	[ "$status" -eq 0 ] || fail "$output"
	assert_output --partial "report.md"
	assert_output --partial "report.html"
}
