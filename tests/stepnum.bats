#!/usr/bin/env bats
# The step number in a marker's name is one rule (nd_step_number in
# lib/core/nd_event): the ingest engine that writes the `step` key and the
# step detection of trace-steps read "ProfilerStep#007" alike.
load helpers

setup() {
	T="$BATS_TEST_TMPDIR"
	# two steps with zero-padded numbers, a CPU op and a kernel in each
	cat > "$T/pad.json" <<'J'
{"traceEvents":[
{"ph":"X","cat":"user_annotation","name":"ProfilerStep#007","pid":1,"tid":1,"ts":100,"dur":100},
{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":110,"dur":30},
{"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":120,"dur":40},
{"ph":"X","cat":"user_annotation","name":"ProfilerStep#008","pid":1,"tid":1,"ts":200,"dur":100},
{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":210,"dur":30},
{"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":220,"dur":60}
]}
J
}

@test "ProfilerStep#007: chrome2ndjson writes step 7 and 8, trace-topk -b step groups by them, trace-steps finds the same steps" {
	run chrome2ndjson -o "$T/pad.nd" "$T/pad.json"
	assert_success
	# every span inside a step window carries its number (jq, not ours)
	run jq -rc 'select(.type == "span") | [.name, .step] | @tsv' "$T/pad.nd"
	assert_output $'ProfilerStep#007\t7\naten::mm\t7\ngemm\t\nProfilerStep#008\t8\naten::mm\t8\ngemm\t'
	run trace-topk --timelines host -b step "$T/pad.nd"
	assert_success
	# the host spans' time per step, summed independently
	want=$(jq -c 'select(.type == "span" and .step != null) |
	    [.step, .dur_ns]' "$T/pad.nd" | jq -sc 'group_by(.[0])[] |
	    [.[0][0], (map(.[1]) | add)]' | sort)
	got=$(printf '%s\n' "$output" | jq -c 'select(.type == "top") |
	    [.step, .total_ns]' | sort)
	[ "$got" = "$want" ] || fail "topk $got, want $want"
	[ "$got" = $'[7,130000]\n[8,130000]' ] || fail "topk $got"
	run trace-steps "$T/pad.nd"
	assert_success
	run jq -rc 'select(.type == "step") | .step' <<<"$output"
	assert_output $'7\n8'
}

@test "step numbers in names: signs, junk and past INT32_MAX are no number, in both engines" {
	for n in -1 +1 7a 2147483648 00000000001; do
		sed "s/ProfilerStep#007/ProfilerStep#$n/" "$T/pad.json" > "$T/b.json"
		run chrome2ndjson "$T/b.json"
		assert_success
		got=$(printf '%s\n' "$output" | jq -c 'select(.type == "span" and
		    .ts_ns == 110000) | .step')
		[ "$got" = null ] || fail "#$n: step $got"
		printf '%s\n' "$output" > "$T/b.nd"
		# nor does trace-steps (its own numbering is the marker's
		# order: 0 and 1 here, never the number in the name)
		got=$(trace-steps "$T/b.nd" 2>/dev/null | jq -c 'select(.type ==
		    "step") | .step' | tr '\n' ' ')
		[ "$got" = "0 8 " ] || [ "$got" = "1 8 " ] || [ "$got" = "" ] ||
		    fail "#$n: trace-steps steps $got"
		case "$n" in 2147483648|7a)
			case " $got" in *" ${n%a} "*) fail "#$n: read $got" ;; esac ;;
		esac
	done
	# the largest number both accept
	sed "s/ProfilerStep#007/ProfilerStep#2147483647/" "$T/pad.json" > "$T/c.json"
	chrome2ndjson -o "$T/c.nd" "$T/c.json"
	run jq -c 'select(.type == "span" and .ts_ns == 110000) | .step' "$T/c.nd"
	assert_output 2147483647
	run sh -c "trace-steps '$T/c.nd' | jq -c 'select(.type == \"step\") | .step'"
	assert_output $'2147483647\n8'
}
