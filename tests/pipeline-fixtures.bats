#!/usr/bin/env bats
# trace-pipeline on real pipeline-parallel traces (issue 23): the fixtures
# of tests/fixtures/pipeline/ (a 1F1B and a GPipe job on 2 and 4 gloo
# ranks, one with a slow stage; made by tests/tools/gen_pipeline.py, see
# tests/fixtures/README.md).  Each manifest is checked against the traces
# with jq; trace-pipeline against tests/tools/pipeline_ref.py, an
# independent python3 reading of the definitions (the schedule exactly,
# the bubbles within 1 %).

load helpers

FIXES="1f1b_p2_m4 1f1b_p4_m8 gpipe_p4_m4 1f1b_p4_m8_slow2"

setup_file() {
	local f p b
	export PIPE="$FIXTURES/pipeline"
	export D="$BATS_FILE_TMPDIR"
	export REF="$BATS_TEST_DIRNAME/tools/pipeline_ref.py"
	# every rank once, the merged stream of each job, the reference
	for p in $FIXES; do
		for f in "$PIPE/${p}"_rank*.pt.trace.json.gz; do
			b=${f##*/}
			chrome2ndjson "$f" > "$D/${b%.pt.trace.json.gz}.ndjson"
		done
		cat "$D/${p}"_rank*.ndjson > "$D/$p.all.ndjson"
		"$PY" "$REF" "$D/${p}"_rank*.ndjson > "$D/$p.ref.ndjson"
	done
}

setup() {
	T="$BATS_TEST_TMPDIR"
}

# the block order in converted ranks: "RANK STEP F0 F1 B0 ..." a line,
# by rank and step
trace_order() {
	jq -rs '[.[] | select(.type == "span" and
	    (.name | test("^(forward|backward)_step#[0-9]+$")))] |
	    group_by([.rank, .step])[] | "\(.[0].rank) \(.[0].step) " +
	    (sort_by(.ts_ns) | map((.name[0:1] | ascii_upcase) +
	    (.name | split("#")[1])) | join(" "))' "$@"
}

# the manifest's order in the same form
manifest_order() {
	jq -r '. as $m | .order | keys | map(tonumber) | sort[] as $r |
	    $m.steps[] as $n | "\($r) \($n) " + $m.order["\($r)"]' "$1"
}

@test "pipeline fixtures: every rank converts cleanly, its rank from the file name" {
	local f r n=0
	run trace-check -q "$D"/*_rank*.ndjson
	assert_success
	for f in "$D"/*_rank*.ndjson; do
		r=${f##*_rank}
		r=${r%.ndjson}
		# the rank, no clock origin; no event skipped or partly read
		run jq -c 'select(.type == "meta" or .type == "end") |
		    [.rank, .origin_ns, .skipped, .warnings]' "$f"
		assert_output "[$r,0,null,null]
[null,null,{},[]]"
		n=$((n + 1))
	done
	[ "$n" -eq 14 ]
}

@test "pipeline fixtures: each manifest's stages, steps and order per rank are the traces'" {
	local p n
	for p in $FIXES; do
		n=$(ls "$D/${p}"_rank*.ndjson | wc -l)
		run jq -r '.stages' "$PIPE/$p.expect.json"
		assert_output "$n"
		run trace_order "$D/${p}"_rank*.ndjson
		assert_success
		assert_output "$(manifest_order "$PIPE/$p.expect.json")"
		# the steps are the ProfilerStep#N of every rank
		run jq -r 'select(.type == "span" and
		    (.name | startswith("ProfilerStep#"))) | "\(.rank) \(.step)"' \
		    "$D/${p}"_rank*.ndjson
		assert_output "$(manifest_order "$PIPE/$p.expect.json" | cut -d' ' -f1,2)"
	done
	# the orders are the schedules asked for: 1F1B stage 0 of 4 warms
	# up with 3 forwards, the last stage alternates, GPipe all F first
	run jq -r '.order["0"], .order["3"]' "$PIPE/1f1b_p4_m8.expect.json"
	assert_line -n 0 "F0 F1 F2 F3 B0 F4 B1 F5 B2 F6 B3 F7 B4 B5 B6 B7"
	assert_line -n 1 "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5 F6 B6 F7 B7"
	run jq -r '[.order[]] | unique[]' "$PIPE/gpipe_p4_m4.expect.json"
	assert_output "F0 F1 F2 F3 B0 B1 B2 B3"
	run jq -c '[.schedule, .slow_stage]' "$PIPE/1f1b_p4_m8_slow2.expect.json"
	assert_output '["1f1b",2]'
}

@test "pipeline_ref.py: stages, micro-batches, schedule, order and slow stage equal each manifest" {
	local p
	for p in $FIXES; do
		run jq -r --slurpfile m "$PIPE/$p.expect.json" -s '
		    [.[] | select(.type == "pipe_step")] as $st |
		    ($st | map(.step)) == $m[0].steps and
		    all($st[]; .stages == $m[0].stages and
			.microbatches == $m[0].microbatches and
			.schedule == $m[0].schedule) and
		    ($m[0].slow_stage == null or
			all($st[]; .slow_stage == $m[0].slow_stage)) and
		    all(.[] | select(.type == "pipe_rank");
			.order == $m[0].order[.rank | tostring] and
			.stage == .rank and .mb == $m[0].microbatches)' \
		    "$D/$p.ref.ndjson"
		assert_output true
	done
}

@test "pipeline_ref.py: the figures add up; the slow stage is found; a merged stream is the same" {
	local p
	for p in $FIXES; do
		# one thread a rank: its blocks are disjoint, so busy is their
		# sum; bubble = window - busy; the parts of the bubble are parts
		run jq -r -s '[.[] | select(.type == "pipe_rank") |
		    select(.busy_ns != .f_ns + .b_ns or .w_ns != 0 or
			.bubble_ns != .window_ns - .busy_ns or .bubble_ns <= 0 or
			.steady_ns < 0 or .p2p_wait_ns > .bubble_ns or
			.warmup_ns + .cooldown_ns > .bubble_ns)] | length' \
		    "$D/$p.ref.ndjson"
		assert_output 0
		# stage 0 starts the window, 1F1B's and GPipe's stage 0 ends it
		# (so in these traces: skew of the ranks' step markers larger
		# than a forward could break it in a regenerated set)
		run jq -r -s '[.[] | select(.type == "pipe_rank" and .stage == 0) |
		    .warmup_ns + .cooldown_ns] | unique[]' "$D/$p.ref.ndjson"
		assert_output 0
		"$PY" "$REF" < "$D/$p.all.ndjson" | cmp - "$D/$p.ref.ndjson"
		# no clock origin: the ranks align on their ProfilerStep#N
		run jq -r 'select(.type == "pipe_step") | .clock' "$D/$p.ref.ndjson"
		assert_output $'step_marker\nstep_marker'
	done
	# (p-1)/(m+p-1): 1/5, 3/11, 3/7
	run jq -r -s '[.[] | select(.type == "pipe_step") | .ideal_bubble_frac] |
	    unique[]' "$D/1f1b_p2_m4.ref.ndjson" "$D/1f1b_p4_m8.ref.ndjson" \
	    "$D/gpipe_p4_m4.ref.ndjson"
	assert_output $'0.2\n0.2727\n0.4286'
	# stage 2 has three times the layers: largest F+B per micro-batch,
	# and it explains part of every other stage's bubble
	run jq -c -s '[.[] | select(.type == "pipe_step") |
	    [.step, .slow_rank, .slow_stage]]' "$D/1f1b_p4_m8_slow2.ref.ndjson"
	assert_output '[[1,2,2],[2,2,2]]'
	run jq -r -s '[.[] | select(.type == "pipe_rank") |
	    (.stage == 2) == (.explained_ns == 0)] | all' \
	    "$D/1f1b_p4_m8_slow2.ref.ndjson"
	assert_output true
}

# trace-pipeline (ENG) against the reference, one job a test
pipe_vs_ref() {
	run trace-pipeline "$D/${1}"_rank*.ndjson
	assert_success
	printf '%s\n' "$output" > "$T/out.ndjson"
	run "$PY" "$REF" --check "$T/out.ndjson" "$D/${1}"_rank*.ndjson
	assert_success
	assert_output ""
	# and straight against what the generator wrote: stages, micro-batches,
	# schedule, steps, each rank's order in every step, the slow stage
	run "$PY" -c 'import json, sys
want = json.load(open(sys.argv[2]))
recs = [json.loads(l) for l in open(sys.argv[1])]
steps = [r for r in recs if r["type"] == "pipe_step"]
assert [s["step"] for s in steps] == want["steps"], steps
for s in steps:
    assert (s["stages"], s["microbatches"], s["schedule"]) == (want["stages"], want["microbatches"], want["schedule"]), s
    if want["slow_stage"] is not None:
        assert s["slow_stage"] == want["slow_stage"], s
for r in recs:
    if r["type"] == "pipe_rank":
        assert r["order"] == want["order"][str(r["rank"])], r
print("ok")' "$T/out.ndjson" "$FIXTURES/pipeline/$1.expect.json"
	assert_output ok
}

@test "trace-pipeline vs pipeline_ref.py: 1F1B, 2 stages, 4 micro-batches" {
	pipe_vs_ref 1f1b_p2_m4
}

@test "trace-pipeline vs pipeline_ref.py: 1F1B, 4 stages, 8 micro-batches" {
	pipe_vs_ref 1f1b_p4_m8
}

@test "trace-pipeline vs pipeline_ref.py: GPipe, 4 stages, 4 micro-batches" {
	pipe_vs_ref gpipe_p4_m4
}

@test "trace-pipeline vs pipeline_ref.py: 1F1B with a slow stage; the slow stage is 2" {
	pipe_vs_ref 1f1b_p4_m8_slow2
	run jq -c 'select(.type == "pipe_step") | [.step, .slow_rank, .slow_stage]' \
	    "$T/out.ndjson"
	assert_output $'[1,2,2]\n[2,2,2]'
	run jq -c 'select(.type == "pipe_step") | [.step, .slow_rank, .slow_stage]' \
	    "$D/1f1b_p4_m8_slow2.ref.ndjson"
	assert_output $'[1,2,2]\n[2,2,2]'
}

@test "trace-pipeline: the rank files and their merged stream give the same records" {
	local p
	for p in 1f1b_p4_m8 gpipe_p4_m4 1f1b_p4_m8_slow2; do
		runp "trace-pipeline '$D/${p}'_rank*.ndjson | grep '\"type\":\"pipe_'"
		assert_success
		printf '%s\n' "$output" > "$T/files"
		[ "$(grep -c '"type":"pipe_step"' "$T/files")" -eq 2 ]
		runp "trace-pipeline < '$D/$p.all.ndjson' | grep '\"type\":\"pipe_'"
		assert_success
		printf '%s\n' "$output" | cmp - "$T/files"
	done
}

@test "gen_pipeline.py still runs a job, and its manifest is its trace" {
	[ -z "${ND_ASAN:-}" ] || skip "ND_ASAN: python only, the normal pass runs it"
	run timeout 120 "$PY" "$BATS_TEST_DIRNAME/tools/gen_pipeline.py" \
	    --schedule 1f1b --stages 2 --microbatches 3 --hidden 32 --batch 4 \
	    --out "$T/gen"
	assert_success
	assert_output 1f1b_p2_m3
	local r
	for r in 0 1; do
		chrome2ndjson "$T/gen/1f1b_p2_m3_rank$r.pt.trace.json.gz" > "$T/r$r.ndjson"
	done
	run trace_order "$T/r0.ndjson" "$T/r1.ndjson"
	assert_output "$(manifest_order "$T/gen/1f1b_p2_m3.expect.json")"
	[ "${#lines[@]}" -eq 4 ]
	run jq -r '.order["0"], .order["1"]' "$T/gen/1f1b_p2_m3.expect.json"
	assert_output $'F0 F1 B0 F2 B1 B2\nF0 B0 F1 B1 F2 B2'
}
