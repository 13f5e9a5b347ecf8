#!/usr/bin/env bats
# Many devices in one source (issue 31, item 2): one device per pid, a few
# kernels each, host step markers.  The step analysis merged each device's
# sets by a scan of every timeline, quadratic in devices (30,000 devices:
# trace-report 25 s of CPU, trace-diff 6 s, trace-steps 3 s); the flops of a
# step over all devices looked at every device (many steps times many
# devices) and every step key (many step keys).  Each shape runs here under
# a CPU limit the old code exceeds many times over and, outside the
# sanitizer build, a memory limit; the answers are checked against
# tests/tools/gen_devices.py, which computes them from the generated
# intervals.

load helpers

setup_file() {
	local g="$BATS_TEST_DIRNAME/tools/gen_devices.py" d="$BATS_FILE_TMPDIR"

	"$PY" "$g" devices 30000 --summary "$d/d.sum" "$d/d.ndjson" "$d/d.exp"
	"$PY" "$g" devices 30000 --late 200 --src after.json "$d/a.ndjson" \
	    "$d/a.exp"
	"$PY" "$g" grid 12000 "$d/g.ndjson" "$d/g.exp"
	"$PY" "$g" keys 80000 "$d/k.ndjson" "$d/k.exp"
}

setup() {
	D="$BATS_FILE_TMPDIR"
	T="$BATS_TEST_TMPDIR"
}

# steps_match OUT EXP: the step records of trace-steps output OUT are the
# expected ones, in order
steps_match() {
	run "$PY" "$BATS_TEST_DIRNAME/tools/gen_devices.py" check "$2" "$1"
	assert_success
}

@test "trace-steps: 30,000 devices in one source, in linear time, exact records" {
	bounded 1 300000 "trace-steps '$D/d.ndjson' > '$T/out'"
	assert_success
	steps_match "$T/out" "$D/d.exp"
	# three steps, each over every device
	run jq -c 'select(.type == "step") | [.step, .devices]' "$T/out"
	assert_output "$(printf '[1,30000]\n[2,30000]\n[3,30000]')"
}

@test "trace-report: 30,000 devices in one source, in linear time, exact breakdown" {
	bounded 3 800000 "trace-report --json '$D/d.ndjson' > '$T/r.json'"
	assert_success
	run jq -c '[.steps.count, .steps.first_step, .steps.last_step,
	    (.breakdown.devices | length)]' "$T/r.json"
	assert_output '[3,2,3,30000]'
	# every device's own time over the steady steps, summed
	run jq -c '.breakdown.all_devices |
	    {dur_ns, compute_ns, communication_ns, idle_ns}' "$T/r.json"
	assert_output "$(jq -c . "$D/d.sum")"
	# the union over devices, over the steady steps (all but step 1)
	run jq -c '.breakdown.step_window | [.dur_ns, .compute_ns,
	    .communication_ns, .idle_ns]' "$T/r.json"
	assert_output "$(jq -s -c 'map(select(.step > 1)) |
	    [(map(.dur_ns) | add), (map(.compute_ns) | add),
	    (map(.communication_ns) | add), (map(.idle_ns) | add)]' \
	    "$D/d.exp")"
}

@test "trace-diff: 30,000 devices on each side, in linear time, exact shares" {
	bounded 2 400000 "trace-diff '$D/d.ndjson' '$D/a.ndjson' > '$T/d.out'"
	assert_success
	run jq -c 'select(.type == "verdict") |
	    [.status, .before.steps, .after.steps]' "$T/d.out"
	assert_output '["warn",3,3]'
	run jq -c 'select(.type == "delta" and (.metric == "step.count" or
	    (.metric | startswith("share.")))) | [.metric, .before, .after]' \
	    "$T/d.out"
	# the shares of the steady steps from each side's expected records
	expected=$(jq -s -c --slurpfile a "$D/a.exp" '
	    def share(r; k): (r | map(select(.step > 1))) as $s |
	        ($s | map(.[k]) | add) / ($s | map(.dur_ns) | add);
	    def row(k): ["share." + k, share(.; k + "_ns"),
	        share($a; k + "_ns")];
	    ["step.count", 2, 2], row("compute"), row("communication"),
	    ["share.memory", 0, 0], ["share.host", 0, 0], row("idle"),
	    ["share.overlap", 0, 0]' "$D/d.exp")
	assert_output "$expected"
}

@test "trace-steps: 12,000 steps over 12,000 devices with flops, in linear time" {
	bounded 1 300000 "trace-steps '$D/g.ndjson' > '$T/out'"
	assert_success
	steps_match "$T/out" "$D/g.exp"
	run jq -s -c 'map(select(.type == "step")) | [length, .[11999].flops]' \
	    "$T/out"
	assert_output '[12000,40997]'
}

@test "trace-steps: 80,000 steps from step keys with flops, in linear time" {
	bounded 1 300000 "trace-steps '$D/k.ndjson' > '$T/out'"
	assert_success
	steps_match "$T/out" "$D/k.exp"
}
