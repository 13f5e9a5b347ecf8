#!/usr/bin/env bats
# The step-summary engine (lib/engines/nd_stepsum): the engine alone through
# `nd-unit stepsum` (values by hand and awk), and the same steady summary,
# classes and straggler from trace-steps --summary/--ranks, trace-report
# --json and trace-diff on real profiles (tests/tools/stepsum_check.py
# recomputes the figures from the step records).

load helpers
bats_require_minimum_version 1.5.0

CHECK="$BATS_TEST_DIRNAME/tools/stepsum_check.py"

setup_file() {
	local d="$BATS_FILE_TMPDIR" c="${ND_FIXTURES:-$BATS_TEST_DIRNAME/fixtures}/chrome"

	"$ND_BIN/chrome2ndjson" "$c/tracelens_h100_qwen.json.gz" >"$d/qwen.nd"
	"$ND_BIN/chrome2ndjson" "$c"/dlrm_8ranks/worker0_*.json.gz >"$d/dlrm0.nd"
	for f in "$c"/dlrm_8ranks/*.json.gz; do
		"$ND_BIN/chrome2ndjson" "$f"
	done >"$d/dlrm.nd"
	"$ND_BIN/chrome2ndjson" "$c/kineto2021_resnet50_nw0.pt.trace.json.gz" >"$d/resnet.nd"
	"$ND_BIN/chrome2ndjson" "$c/hta_sampled_rank-0.json.gz" >"$d/hta0.nd"
	{ cat "$d/hta0.nd"
	  "$ND_BIN/chrome2ndjson" "$c/hta_sampled_rank-1.json.gz"; } >"$d/hta.nd"
}

setup() {
	need_fixtures
	D="$BATS_FILE_TMPDIR"
}

# ---- the engine ----

@test "engine: a warmup larger than the steps leaves none out (not applied)" {
	run nd-unit stepsum 3 0 <<-EOF
	1 100
	2 200
	EOF
	assert_success
	# nearest-rank median of (100, 200): the ceil(0.5*2) = 1st = 100
	assert_line "window 0 2 applied 0"
	assert_line "steady 2 100 150 100 200 300"
	assert_line "steps 1 2"
}

@test "engine: drop-last with 1 and 2 steps" {
	# 1 step, warmup 0: nothing left after dropping the last: not applied
	run nd-unit stepsum 0 1 <<<"1 100"
	assert_line "window 0 1 applied 0"
	assert_line "steady 1 100 100 100 100 100"
	# 2 steps, warmup 0: the last goes, step 1 stays
	run nd-unit stepsum 0 1 <<<$'1 100\n2 200'
	assert_line "window 0 1 applied 1"
	assert_line "steps 1 1"
	# 2 steps, warmup 1 + drop-last: nothing left: every step is steady
	run nd-unit stepsum 1 1 <<<$'1 100\n2 200'
	assert_line "window 0 2 applied 0"
	assert_line "steady 2 100 150 100 200 300"
	# 3 steps, warmup 1 + drop-last: step 2
	run nd-unit stepsum 1 1 <<<$'1 100\n2 200\n3 300'
	assert_line "window 1 2 applied 1"
	assert_line "steps 2 2"
}

@test "engine: a step number on several sources: the longest record is the job step" {
	printf '%s\n' "1 100 0" "1 150 1" "2 200 0" "2 120 1" "3 90 0" "3 96 1" >"$BATS_TEST_TMPDIR/r"
	run nd-unit stepsum 1 0 <"$BATS_TEST_TMPDIR/r"
	assert_success
	# job steps by awk: the largest duration of each number
	want=$(awk '$2 > m[$1] { m[$1] = $2 } END { for (k in m) print "job", k, m[k] }' "$BATS_TEST_TMPDIR/r" | sort -k2n)
	assert_equal "$(grep '^job ' <<<"$output")" "$want"
	# steady: steps 2 and 3 (200, 96): median 96, mean 148; the breakdown
	# sums every record of those numbers: 200+120+90+96 = 506
	sum=$(awk '$1 >= 2 { s += $2 } END { print s }' "$BATS_TEST_TMPDIR/r")
	assert_line "steady 2 96 148 96 200 $sum"
}

@test "engine: classes split into light and heavy with a period" {
	run nd-unit stepsum 0 0 <<<$'1 100\n2 100\n3 100\n4 300\n5 100\n6 100\n7 300\n8 100\n9 100\n10 300'
	assert_success
	# heavy every 3rd step from 4 (period 3), representative the earliest
	assert_line "class light 7 1 period 0"
	assert_line "class heavy 3 4 period 3"
	# fewer than 4 steady steps: one class
	run nd-unit stepsum 7 0 <<<$'1 100\n2 100\n3 100\n4 300\n5 100\n6 100\n7 300\n8 100\n9 100\n10 300'
	assert_line "class typical 3 8 period 0"
}

@test "engine: the straggler of each step across sources" {
	# relative clocks: ready = dur - wait; step 1: 90 and 130 -> source 1,
	# lag 130 - 90 (the lower middle); step 2: 200 and 70 -> source 0, 130
	run nd-unit stepsum 0 0 <<<$'1 100 0 0 10\n1 150 1 0 20\n2 200 0 1000 0\n2 120 1 1000 50'
	assert_success
	assert_line "rankstep 1 2 straggler 1 lag 40"
	assert_line "rankstep 2 2 straggler 0 lag 130"
	refute_line --partial "named"
}

# ---- the programs agree ----

@test "one-step traces: the one step is steady in trace-steps, trace-report and trace-diff" {
	for f in qwen dlrm0; do
		for o in "" "-w 3" "--drop-last" "-w 0 --drop-last"; do
			run "$PY" "$CHECK" "$ND_BIN" "$D/$f.nd" $o
			[ "$status" -eq 0 ] || fail "$f $o: $output"
		done
	done
	run bash -c "trace-steps -s '$D/qwen.nd' | jq -c 'select(.type==\"step_summary\") | [.count, .warmup, .warmup_applied, .steady.count, .steady.median_ns == .median_ns, .breakdown.dur_ns == .median_ns]'"
	assert_output "[1,1,false,1,true,true]"
}

@test "warmup 0, 1, 3 and --drop-last on a 6-step trace: the programs agree" {
	local sets=("-w 0" "" "-w 3" "--drop-last" "-w 3 --drop-last" "-w 5" "-w 4 --drop-last" "-w 5 --drop-last")
	# the sanitizer pass takes three of the eight (the normal pass: all)
	[ -z "${ND_ASAN:-}" ] || sets=("-w 0" "-w 3 --drop-last" "-w 5 --drop-last")
	for o in "${sets[@]}"; do
		run "$PY" "$CHECK" "$ND_BIN" "$D/resnet.nd" $o
		[ "$status" -eq 0 ] || fail "resnet $o: $output"
	done
	# -w 4 --drop-last leaves one step; -w 5 --drop-last none: not applied
	run bash -c "trace-steps -s -w 4 --drop-last '$D/resnet.nd' | jq -c 'select(.type==\"step_summary\") | [.warmup_applied, .steady.count, .steady.first_step]'"
	assert_output "[true,1,9]"
	run bash -c "trace-steps -s -w 5 --drop-last '$D/resnet.nd' | jq -c 'select(.type==\"step_summary\") | [.warmup_applied, .steady.count]'"
	assert_output "[false,6]"
}

@test "several ranks: summary and straggler agree between trace-steps -s -R and trace-report" {
	for f in dlrm hta; do
		for o in "" "-w 0" "--drop-last"; do
			run "$PY" "$CHECK" "$ND_BIN" "$D/$f.nd" -R $o
			[ "$status" -eq 0 ] || fail "$f $o: $output"
		done
	done
	run bash -c "trace-steps -R '$D/dlrm.nd' | jq -c 'select(.type==\"straggler\") | [.steps, (.counts | length)]'"
	assert_output "[1,8]"
}

@test "trace-diff --drop-last: in --help, and the steady window moves" {
	run trace-diff --help
	assert_output --partial "--drop-last"
	run bash -c "trace-diff --allow-same --drop-last '$D/resnet.nd' '$D/resnet.nd' 2>/dev/null | jq -c 'select(.type==\"verdict\") | .before | [.steps, .steady_steps, .warmup_applied]'"
	assert_output "[6,4,true]"
	run bash -c "trace-diff --allow-same '$D/qwen.nd' '$D/qwen.nd' 2>/dev/null | jq -c 'select(.metric==\"step.count\") | .before'"
	assert_output "1"
	run trace-diff --allow-same --table "$D/qwen.nd" "$D/qwen.nd"
	assert_line "  (too few steps on both sides: every step is steady, none left out)"
	run trace-diff --allow-same --table -w 3 "$D/resnet.nd" "$D/qwen.nd"
	assert_line "  (too few steps after: every step is steady, none left out)"
	run trace-diff --allow-same --table "$D/resnet.nd" "$D/resnet.nd"
	refute_line --partial "too few steps"
}

@test "trace-report --drop-last on 2 steps with warmup 1: every step is steady, and it says so" {
	# was: "steady state: 0 steps (0 to 0; warmup 1, last dropped)"
	run "$PY" "$CHECK" "$ND_BIN" "$D/hta0.nd" --drop-last
	[ "$status" -eq 0 ] || fail "$output"
	run trace-report --drop-last "$D/hta0.nd"
	assert_success
	assert_line "2 steps, marked by profiler_step; steady state: 2 steps (551 to 552; warmup 0)."
	assert_line "Only 2 steps: neither the warmup of 1 nor the last step is left out."
	run trace-report "$D/hta0.nd"
	assert_line "2 steps, marked by profiler_step; steady state: 1 step (552 to 552; warmup 1)."
	refute_line --partial "Only 2 steps"
}
