#!/usr/bin/env bats
# trace-steps --partial and --merge: a merge of per-input partial results
# is byte-identical to one run over the same inputs in the same order, with
# every option that changes the output; the merged summary and rank records
# are recomputed with jq from the step records; partial results that cannot
# be merged are refused with one exact line.  nd-unit stepsum-partial: the
# step records of lib/engines/nd_stepsum round-trip exactly.

load helpers
bats_require_minimum_version 1.5.0

setup_file() {
	need_fixtures
	D="$BATS_FILE_TMPDIR"
	# generated ranks: ten steps each, rank r in the meta
	for r in 0 1 2 3; do
		"$ND_BIN/gen-stream" -n 3000 -s $((r + 1)) |
		    sed "1s/\"rank\":0/\"rank\":$r/" >"$D/g$r.ndjson"
	done
	for i in 0 1 2 3 4 5 6 7; do
		"$ND_BIN/chrome2ndjson" "$FIXTURES"/chrome/dlrm_8ranks/worker${i}_step_12.*.pt.trace.json.gz >"$D/d$i.ndjson"
	done
	for i in 0 1; do
		"$ND_BIN/chrome2ndjson" "$FIXTURES/chrome/hta_sampled_rank-$i.json.gz" >"$D/h$i.ndjson"
	done
	"$ND_BIN/xplane2ndjson" "$FIXTURES/xplane/tpu_inference_4core.xplane.pb" >"$D/tpu.ndjson"
	# no step marker and no XLA module: each device's profile window
	"$ND_BIN/xplane2ndjson" "$FIXTURES/xplane/rocm_jax08_gemm.xplane.pb" |
	    grep -v -E '"cat":"xla_module"|"name":"[^"]*:XLA [A-Za-z]+ module"' >"$D/nomark.ndjson"
	# two sources in one file
	cat "$D/h1.ndjson" "$D/g3.ndjson" >"$D/two.ndjson"
}

setup() {
	D="$BATS_FILE_TMPDIR"
	T="$BATS_TEST_TMPDIR"
}

# one partial per input with the collection options COPTS, merged with the
# output options OOPTS: the same bytes as one run with both
same_as_one_run() { # copts oopts file...
	local copts=$1 oopts=$2 i=0 p=()
	shift 2
	trace-steps $copts $oopts "$@" >"$T/one" 2>/dev/null || fail "run [$copts $oopts] $*"
	for f in "$@"; do
		trace-steps $copts --partial -o "$T/p$i" "$f" 2>/dev/null || fail "partial [$copts] $f"
		p+=("$T/p$i")
		i=$((i + 1))
	done
	trace-steps --merge $oopts -o "$T/merged" "${p[@]}" || fail "merge [$oopts] $*"
	cmp "$T/one" "$T/merged" || fail "merge differs from one run [$copts] [$oopts] $*"
}

@test "merge = one run, byte for byte: generated ranks, with every output option" {
	local g="$D/g0.ndjson $D/g1.ndjson $D/g2.ndjson $D/g3.ndjson"
	# shellcheck disable=SC2086
	for oo in "" "-s -R -w 3 --drop-last" "-s -R -w 0" "-s -w 20"; do
		same_as_one_run "" "$oo" $g
	done
	# shellcheck disable=SC2086
	for co in "-d -p 197 -x ^(fusion|dot)" "-d -p A100"; do
		same_as_one_run "$co" "-s -R --drop-last" $g
	done
	# what the last one wrote: a step per rank, step (10) and device (4)
	# with MFU, the summary, ranks
	run jq -r -s 'map(.type) | group_by(.) | map("\(.[0]) \(length)") | .[]' "$T/one"
	assert_output 'meta 4
step 160
step_ranks 10
step_summary 1
straggler 1'
	run jq -c 'select(.type == "step_summary") | [.records, .sources, .warmup_applied, .drop_last, (.mfu > 0)]' "$T/one"
	assert_output '[160,4,true,true,true]'
}

@test "merge = one run: DLRM and HTA ranks, TPU XPlane, a profile without markers, two sources in a file" {
	local d=("$D"/d?.ndjson)
	same_as_one_run "" "-s -R" "${d[@]}"
	run jq -c 'select(.type == "straggler") | [.steps, .rank, .straggler_steps, (.counts | length)]' "$T/merged"
	assert_output '[1,7,1,8]'
	same_as_one_run "" "-s -R" "$D/h0.ndjson" "$D/tpu.ndjson" "$D/nomark.ndjson" "$D/two.ndjson"
	run jq -r -s 'map(.type) | group_by(.) | map("\(.[0]) \(length)") | .[]' "$T/merged"
	# steps: 2 HTA, 100 TPU, 2 HTA + 10 generated; compared: 551 and 552,
	# and 10..19 (TPU and generated)
	assert_output 'meta 5
profile_window 1
step 114
step_ranks 12
step_summary 1
straggler 1'
	# the straggler names the sources after the two in one file by their
	# own paths (sources 3 and 4 of the merge)
	run jq -c 'select(.type == "straggler") | [.counts[] | .source | split("/") | last]' "$T/merged"
	assert_output '["hta_sampled_rank-0.json.gz","tpu_inference_4core.xplane.pb","hta_sampled_rank-1.json.gz","bench.xplane.pb"]'
	same_as_one_run "-d -p 3672" "-s -R -w 2" "$D/tpu.ndjson" "$D/nomark.ndjson" "$D/h1.ndjson"
}

@test "a partial of two inputs and a partial of one, read from stdin too, equal one run over the three" {
	trace-steps -s -R "$D/g0.ndjson" "$D/two.ndjson" "$D/g2.ndjson" >"$T/one"
	trace-steps --partial -o "$T/a" "$D/g0.ndjson" "$D/two.ndjson"
	trace-steps --partial "$D/g2.ndjson" >"$T/b"
	trace-steps --merge -s -R "$T/a" "$T/b" >"$T/merged"
	cmp "$T/one" "$T/merged"
	cat "$T/a" "$T/b" | trace-steps --merge -s -R >"$T/merged"
	cmp "$T/one" "$T/merged"
	# the other order is the run over the inputs in the other order
	trace-steps -s -R "$D/g2.ndjson" "$D/g0.ndjson" "$D/two.ndjson" >"$T/one"
	trace-steps --merge -s -R "$T/b" "$T/a" >"$T/merged"
	cmp "$T/one" "$T/merged"
	# the partial names its three sources, in order
	run jq -r 'select(.type == "steps_source") | .path | split("/") | last' "$T/a"
	assert_output 'bench.xplane.pb
hta_sampled_rank-1.json.gz
bench.xplane.pb'
}

@test "the merged summary and rank records, recomputed with jq from the merged step records" {
	local p=()
	for r in 0 1 2 3; do
		trace-steps --partial -o "$T/p$r" "$D/g$r.ndjson"
		p+=("$T/p$r")
	done
	trace-steps --merge -s -R -w 2 "${p[@]}" >"$T/m"
	# job step = the slowest record of its number; steady = after the first
	# two; the breakdown sums the steady records
	jq -s -c '[.[] | select(.type == "step")] as $r |
	    ($r | group_by(.step) | map({step: .[0].step, dur: (map(.dur_ns) | max)})) as $j |
	    $j[2:] as $s | ($s | map(.dur) | sort) as $d |
	    ($r | map(select(.step >= $s[0].step))) as $sr |
	    [($r | length), ($j | length), ($s | length), $s[0].step, $s[-1].step,
	     $d[0], $d[-1], (($d | add) / ($d | length) | round),
	     ($sr | map(.dur_ns) | add), ($sr | map(.compute_ns) | add),
	     ($sr | map(.idle_ns) | add)]' "$T/m" >"$T/want"
	jq -c 'select(.type == "step_summary") | [.records, .count, .steady.count,
	    .steady.first_step, .steady.last_step, .steady.min_ns, .steady.max_ns,
	    .steady.mean_ns, .breakdown.dur_ns, .breakdown.compute_ns,
	    .breakdown.idle_ns]' "$T/m" >"$T/got"
	run cat "$T/got"
	assert_output "$(cat "$T/want")"
	[ "$(jq '.[0]' "$T/got")" -eq 40 ]
	# per step: the spread of the ranks' durations
	run jq -s -c '[.[] | select(.type == "step")] | group_by(.step) |
	    map([.[0].step, length, (map(.dur_ns) | min), (map(.dur_ns) | max)])' "$T/m"
	assert_output "$(jq -s -c 'map(select(.type == "step_ranks") |
	    [.step, .ranks, .dur_min_ns, .dur_max_ns])' "$T/m")"
}

@test "merge refuses: another format version, other collection options, a cut partial, misplaced options" {
	trace-steps --partial -o "$T/a" "$D/g0.ndjson"
	trace-steps --partial -d -o "$T/d" "$D/g1.ndjson"
	trace-steps --partial -x '^fusion' -p A100 -o "$T/x" "$D/g1.ndjson"
	sed '1s/"version":2/"version":1/' "$T/a" >"$T/v1"
	run -2 trace-steps --merge "$T/a" "$T/v1"
	assert_output "trace-steps: $T/v1:1: steps_partial of another format (version 1, not 2): make the partial results again with this trace-steps"
	run -2 trace-steps --merge -s "$T/a" "$T/d"
	assert_output "trace-steps: $T/d:1: partial results made with '--per-device' cannot be merged with results made with no collection options: give every --partial job the same --per-device, --step-regex and --peak-tflops"
	run -2 trace-steps --merge "$T/x" "$T/a"
	assert_output "trace-steps: $T/a:1: partial results made with no collection options cannot be merged with results made with '--step-regex ^fusion --peak-tflops 312': give every --partial job the same --per-device, --step-regex and --peak-tflops"
	head -n 5 "$T/a" >"$T/cut"
	run -2 trace-steps --merge -s "$T/cut" "$T/a"
	assert_output "trace-steps: $T/cut:1: partial results cut short: no partial_end after this header (a --partial job failed or its output was truncated, or partials written by concurrent jobs to one pipe interleave; write one file per job (-o) or use GNU parallel)"
	run -2 trace-steps --merge -s "$D/g0.ndjson"
	assert_output "trace-steps: $D/g0.ndjson:2: --merge reads the output of trace-steps --partial, not span records"
	run -2 trace-steps --merge -s </dev/null
	assert_output "trace-steps: <stdin>: no partial results in it (no steps_partial header): its --partial job failed, or it is not the output of trace-steps --partial"
	run -2 trace-steps --merge -d "$T/d"
	assert_output "trace-steps: --merge takes --per-device, --step-regex and --peak-tflops from the partial results; do not give them again"
	run -2 trace-steps --merge --step-regex x "$T/a"
	assert_output "trace-steps: --merge takes --per-device, --step-regex and --peak-tflops from the partial results; do not give them again"
	run -2 trace-steps --partial -w 2 "$D/g0.ndjson"
	assert_output "trace-steps: --partial leaves --summary, --ranks, --warmup and --drop-last to --merge; give them there"
	run -2 trace-steps --merge --partial -R "$T/a"
	assert_output "trace-steps: --partial leaves --summary, --ranks, --warmup and --drop-last to --merge; give them there"
}

@test "a reduction tree: --merge --partial equals the partial of one run, and merges on" {
	trace-steps --partial -d -o "$T/a" "$D/g0.ndjson" "$D/two.ndjson"
	trace-steps --partial -d -o "$T/b" "$D/g2.ndjson"
	trace-steps --partial -d -o "$T/c" "$D/tpu.ndjson"
	trace-steps --merge --partial -o "$T/ab" "$T/a" "$T/b"
	trace-steps --partial -d "$D/g0.ndjson" "$D/two.ndjson" "$D/g2.ndjson" >"$T/direct"
	cmp "$T/direct" "$T/ab"
	trace-steps --merge --partial "$T/ab" "$T/c" >"$T/abc"
	trace-steps -d -s -R "$D/g0.ndjson" "$D/two.ndjson" "$D/g2.ndjson" "$D/tpu.ndjson" >"$T/one"
	trace-steps --merge -s -R "$T/abc" >"$T/m"
	cmp "$T/one" "$T/m"
	run jq -c 'select(.type == "steps_partial")' "$T/abc"
	assert_output '{"type":"steps_partial","version":2,"collect":"--per-device"}'
}

# frame BODY: BODY's records as a steps_partial with its header and trailer
frame() {
	{ echo '{"type":"steps_partial","version":2,"collect":""}'; cat "$1"; } >"$T/framed"
	printf '{"type":"partial_end","records":%d,"sha256":"%s"}\n' \
	    "$(wc -l <"$1")" "$(sha256sum "$T/framed" | cut -d' ' -f1)" >>"$T/framed"
}

@test "merge refuses a step record of a source its partial does not have" {
	trace-steps --partial -o "$T/a" "$D/g0.ndjson"
	grep -v -E '"type":"(steps_partial|partial_end)"' "$T/a" |
	    sed 's/"type":"step_rec","src":0,/"type":"step_rec","src":1,/' >"$T/body"
	frame "$T/body"
	n=$(grep -n '"type":"step_rec"' "$T/framed" | head -1 | cut -d: -f1)
	run -2 trace-steps --merge -s "$T/framed"
	assert_output "trace-steps: $T/framed:$n: step_rec record of source 1: its partial has 1 steps_source records before it"
	# without -s or -R the step records are not read: the lines come out
	run -0 trace-steps --merge "$T/framed"
	assert_output "$(trace-steps "$D/g0.ndjson")"
}

@test "nd-unit stepsum-partial: step records round-trip exactly, with bases added; bad ones refused" {
	cat >"$T/in" <<'EOF'
{"type":"step_rec","src":3,"num":9223372036854775807,"start_ns":-4611686018427387904,"len_ns":-5,"wait_ns":1,"src_rank":-7,"clock_ns":1700000000123456789,"compute_ns":1,"communication_ns":0,"memory_ns":0,"host_ns":0,"idle_ns":0,"overlap_ns":9223372036854775807,"mfu":0.30000000000000004,"step_source":"xla_module"}
{"type":"step_rec","src":0,"num":1,"start_ns":0,"len_ns":10,"wait_ns":0,"compute_ns":1,"communication_ns":2,"memory_ns":3,"host_ns":4,"idle_ns":5,"overlap_ns":6,"mfu":"inf","step_source":"none"}
{"type":"step_rec","src":1,"num":2,"start_ns":0,"len_ns":10,"wait_ns":0,"compute_ns":1,"communication_ns":2,"memory_ns":3,"host_ns":4,"idle_ns":5,"overlap_ns":6,"mfu":"-inf","step_source":"inferred"}
{"type":"step_rec","src":2,"num":3,"start_ns":0,"len_ns":10,"wait_ns":0,"compute_ns":1,"communication_ns":2,"memory_ns":3,"host_ns":4,"idle_ns":5,"overlap_ns":6,"mfu":"nan","step_source":"marker"}
{"type":"step_rec","src":2,"num":4,"start_ns":0,"len_ns":10,"wait_ns":0,"compute_ns":1,"communication_ns":2,"memory_ns":3,"host_ns":4,"idle_ns":5,"overlap_ns":6,"mfu":1e-300,"step_source":"marker"}
{"type":"step_dev","dev":2,"num":4,"len_ns":99,"compute_ns":1,"communication_ns":2,"memory_ns":3,"host_ns":4,"idle_ns":5,"overlap_ns":6}
EOF
	# the body of the partial (between header and trailer)
	runp "nd-unit stepsum-partial 0 0 '$T/in' | sed '1d;\$d'"
	assert_success
	assert_output "$(cat "$T/in")"
	runp "nd-unit stepsum-partial 10 5 '$T/in' | sed '1d;\$d'"
	assert_success
	assert_output "$(sed 's/"src":\([0-9]\)/"src":1\1/; s/"dev":2/"dev":7/' "$T/in")"
	sed '2s/"num":1/"num":1.5/' "$T/in" >"$T/bad"
	run -2 nd-unit stepsum-partial 0 0 "$T/bad"
	assert_output "nd-unit: $T/bad:2: step_rec record without a valid \"num\" (an integer)"
	sed '3s/"step_source":"inferred"/"step_source":"guess"/' "$T/in" >"$T/bad"
	run -2 nd-unit stepsum-partial 0 0 "$T/bad"
	assert_output "nd-unit: $T/bad:3: step_rec record without a valid \"step_source\" (none, inferred, xla_module or marker)"
	run -2 nd-unit stepsum-partial 4294967293 0 "$T/in"
	assert_output "nd-unit: $T/in:1: step_rec record without a valid \"src\" (an index out of range)"
}
