#!/usr/bin/env bats
# Runs add up what they read within int64 (issue 31, item 3).  One
# duration is at most 2^53 ns, but 1,100 of them pass 2^63: the programs
# wrapped to negative totals and shares (or saturated them) and exited 0.
# One bound now holds every sum ("Sums" in ndtrace(7), lib/core/nd_sum.h): the
# durations of an input, and the gaps, steps and windows a run derives,
# add up to at most 2^60 ns, and the clocks a program compares are at most
# 2^61 ns apart.  Past it every program stops with one line naming the
# input (exit 2); just under it the totals are exact (checked with
# python3's integers).

load helpers
bats_require_minimum_version 1.5.0

S53=9007199254740992
DUR="and the durations of the input add up past 2^60 (36 years in ns)"
DER="and the gaps, steps and windows the run finds add up past 2^60 (36 years in ns)"
APART="are more than 2^61 ns (73 years) apart: not the times of one run"

setup() {
	T=$BATS_TEST_TMPDIR
	GEN="$PY $BATS_TEST_DIRNAME/tools/sum_streams.py"
}

# py EXPR: the value of a python3 expression (exact integers)
py() {
	"$PY" -c "print($1)"
}

@test "durations: 1,100 spans of 2^53 ns stop every reader at the 129th, not a negative total; 128 are exact" {
	$GEN spans 1100 >"$T/s"
	$GEN spans 1100 t >"$T/t"
	# 128 * 2^53 = 2^60: the 129th span (line 130) passes it
	assert_equal "$(py "[k for k in range(1, 1101) if k * 2**53 > 2**60][0] + 1")" 130
	err="span record: \"dur_ns\" is $S53, $DUR"
	for p in trace-topk trace-regions trace-roofline trace-report \
	    trace-steps trace-gaps; do
		run -2 "$p" "$T/s"
		assert_output "$p: $T/s:130: $err"
	done
	run -2 trace-pipeline --forward op "$T/s"
	assert_output "trace-pipeline: $T/s:130: $err"
	run -2 trace-context op1 "$T/s"
	assert_output "trace-context: $T/s:130: $err"
	run -2 trace-diff "$T/s" "$T/t"
	assert_output "trace-diff: $T/s:130: $err"
	# decoded on a second thread, and from a pipe: the same line
	NDTRACE_THREADS=2 run -2 trace-report "$T/s"
	assert_output "trace-report: $T/s:130: $err"
	runp "cat '$T/s' | trace-topk --partial"
	assert_failure 2
	assert_output "trace-topk: <stdin>:130: $err"
	# outside the contract: trace-check says so
	run -1 trace-check "$T/s"
	assert_output "trace-check: $T/s:130: $err"
	# just under: 128 spans, 2^60 ns, exact totals and shares
	$GEN spans 128 >"$T/s"
	run trace-check "$T/s"
	assert_success
	assert_output ""
	# op0..op7 have 13 spans, op8 and op9 12; -k 3 leaves 89 in "other"
	runp "trace-topk -k 3 '$T/s' | grep -o '\"row\":[0-9]*,\"[a-z]*\":[^,]*,\"count\":[0-9]*,\"total_ns\":[0-9]*,\"self_ns\":[0-9]*'"
	assert_success
	assert_output "$(py "'\n'.join(['\"row\":%d,\"name\":\"op%d\",\"count\":13,\"total_ns\":%d,\"self_ns\":%d' % (i + 1, i, 13 * 2**53, 13 * 2**53) for i in range(3)] + ['\"row\":4,\"other\":true,\"count\":89,\"total_ns\":%d,\"self_ns\":%d' % (89 * 2**53, 89 * 2**53)])")"
	runp "trace-topk -k 3 '$T/s' | grep -o '\"share\":[0-9.]*'"
	assert_output "$(py "'\n'.join('\"share\":%r' % (c / 128) for c in [13, 13, 13, 89])")"
	runp "trace-regions '$T/s' | grep -o '\"path\":\"a\",.*\"inclusive_ns\":[0-9]*'"
	assert_output "\"path\":\"a\",\"name\":\"a\",\"depth\":1,\"count\":128,\"self_count\":0,\"inclusive_ns\":$(py "2**60")"
}

@test "gaps: idle stretches of 600 timelines stop at the 65th, not a saturated or negative total" {
	$GEN idle 600 >"$T/i"
	# each 2^54 - 2 ns: 64 of them are 2^60 - 128, the 65th's second
	# span is on line 2 * 64 + 3
	assert_equal "$(py "[k for k in range(1, 601) if k * (2**54 - 2) > 2**60][0]")" 65
	err="$T/i:131: idle stretch of $(py "2**54 - 2") ns, $DER"
	run -2 trace-gaps --totals -l timeline "$T/i"
	assert_output "trace-gaps: $err"
	run -2 trace-gaps "$T/i"
	assert_output "trace-gaps: $err"
	run -2 trace-report --json "$T/i"
	assert_output "trace-report: $err"
	# just under: 64 timelines, the exact total
	$GEN idle 64 >"$T/i64"
	runp "trace-gaps --totals -l timeline '$T/i64' | tail -n 1 | grep -o '^{\"type\":\"gap_summary\",\"count\":[0-9]*,\"total_ns\":[0-9]*'"
	assert_output "{\"type\":\"gap_summary\",\"count\":64,\"total_ns\":$(py "64 * (2**54 - 2)")"
}

@test "steps: 600 step windows of 2^54 ns stop at the 65th, not a wrapped summary" {
	$GEN steps 600 >"$T/s"
	$GEN steps 600 t >"$T/t"
	# steps are made when their source ends, here the input: no line,
	# as trace-report and trace-diff, which sum them up after the input
	err="step of $(py "2**54") ns, $DER"
	run -2 trace-steps -s "$T/s"
	assert_output "trace-steps: $T/s: $err"
	run -2 trace-report --json "$T/s"
	assert_output "trace-report: $T/s: $err"
	# trace-diff reads before and after as one run (nd_run); the
	# before side ends where the after side starts, and its steps are
	# named by the before input; those of the after one come on top
	run -2 trace-diff "$T/s" "$T/t"
	assert_output "trace-diff: $T/s: $err"
	$GEN steps 40 >"$T/s40"
	run -2 trace-diff "$T/s40" "$T/t"
	assert_output "trace-diff: $T/t: $err"
	# just under: 64 steps, 63 of them steady
	$GEN steps 64 >"$T/s64"
	runp "trace-steps -s '$T/s64' | tail -n 1 | grep -o '\"breakdown\":{\"dur_ns\":[0-9]*,\"compute_ns\":[0-9]*,\"communication_ns\":0,\"memory_ns\":0,\"host_ns\":0,\"idle_ns\":[0-9]*'"
	assert_output "\"breakdown\":{\"dur_ns\":$(py "63 * 2**54"),\"compute_ns\":126,\"communication_ns\":0,\"memory_ns\":0,\"host_ns\":0,\"idle_ns\":$(py "63 * 2**54 - 126")"
}

@test "pipeline: 600 ranks' windows of 2^54 ns stop at the 65th, not a negative bubble" {
	$GEN ranks 600 >"$T/r"
	run -2 trace-pipeline --forward fwd --backward bwd "$T/r"
	assert_output "trace-pipeline: $T/r: pipeline window of $(py "2**54") ns, $DER"
	# just under: 64 ranks
	$GEN ranks 64 >"$T/r64"
	runp "trace-pipeline --forward fwd --backward bwd '$T/r64' | grep pipe_step | grep -o '\"window_ns\":[0-9]*,\"busy_ns\":[0-9]*,\"bubble_ns\":[0-9]*'"
	assert_output "\"window_ns\":$(py "2**54"),\"busy_ns\":128,\"bubble_ns\":$(py "64 * 2**54 - 128")"
}

@test "clocks: origin_ns at both ends of int64 are an error, not a wrapped lag or window" {
	lo=-9223372036854775808 hi=9223372036854775807
	$GEN clocks $lo $hi >"$T/c"
	run -2 trace-pipeline --forward fwd --backward bwd "$T/c"
	assert_output "trace-pipeline: $T/c: origin_ns $lo and $hi $APART"
	run -2 trace-steps -R "$T/c"
	assert_output "trace-steps: $T/c: step starts (origin_ns+start_ns) $lo and $hi $APART"
	run -2 trace-report "$T/c"
	assert_output "trace-report: $T/c: step starts (origin_ns+start_ns) $lo and $hi $APART"
	# 2^61 apart: the straggler's figures exact (ends 1 + 300 and
	# 1 + 2^61 + 301)
	$GEN clocks 1 "$(py "1 + 2**61")" >"$T/c61"
	runp "trace-steps -R '$T/c61' | grep -o '\"end_spread_ns\":[0-9]*,.*\"lag_ns\":[0-9]*,.*\"last_by_ns\":[0-9]*'"
	d=$(py "(1 + 2**61 + 301) - (1 + 300)")
	assert_output "\"end_spread_ns\":$d,\"straggler_rank\":1,\"straggler_source\":\"r1\",\"lag_ns\":$d,\"last_rank\":1,\"last_source\":\"r1\",\"last_by_ns\":$d"
	# 2^58 apart: the pipeline's window from rank 0's start to rank 1's end
	$GEN clocks 1 "$(py "1 + 2**58")" >"$T/c58"
	runp "trace-pipeline --forward fwd --backward bwd '$T/c58' | grep pipe_step | grep -o '\"window_ns\":[0-9]*,\"busy_ns\":[0-9]*,\"bubble_ns\":[0-9]*'"
	w=$(py "(1 + 2**58 + 301) - 1")
	assert_output "\"window_ns\":$w,\"busy_ns\":601,\"bubble_ns\":$(py "2 * $w - 601")"
}
