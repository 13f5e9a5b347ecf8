#!/usr/bin/env bats
# Ascend / torch_npu traces in chrome2ndjson (issue 22): string times read
# exactly, the torch_npu processes (device, HCCL and derived lanes), NPU:N,
# async_npu launches; every analysis on them, its numbers checked by an
# independent Python pass over the JSON (tests/tools/ascend_ref.py).
# The fixtures are tests/tools/gen_ascend.py's output
# (tests/fixtures/ascend/README.md).

load helpers

setup_file() {
	local d="$BATS_TEST_DIRNAME/fixtures/ascend"
	export ARR="$d/trace_view.json" OBJ="$d/trace_view_object.json"
	export S="$BATS_FILE_TMPDIR/a.ndjson" SO="$BATS_FILE_TMPDIR/o.ndjson"
	export REF="$BATS_TEST_DIRNAME/tools/ascend_ref.py"
	chrome2ndjson "$ARR" > "$S"
	chrome2ndjson "$OBJ" > "$SO"
}

setup() {
	T="$BATS_TEST_TMPDIR"
}

@test "ascend: the fixtures are gen_ascend.py's output" {
	"$PY" "$BATS_TEST_DIRNAME/tools/gen_ascend.py" -o "$T/o.json" "$T/a.json"
	cmp "$T/a.json" "$ARR"
	cmp "$T/o.json" "$OBJ"
}

@test "ascend: string ts and dur are read, both forms give the same records, trace-check passes" {
	# before: every event with a string ts was skipped as bad_ts
	run jq -c 'select(.type == "end") | [.spans, .counters, .flows, .skipped]' "$S"
	assert_output "$(jq -c '[([.[] | select(.ph == "X")] | length),
	    ([.[] | select(.ph == "C")] | length),
	    ([.[] | select(.ph == "s" or .ph == "f")] | length), {}]' "$ARR")"
	diff <(tail -n +2 "$S" | grep -v '"type":"end"') \
	    <(tail -n +2 "$SO" | grep -v '"type":"end"')
	run trace-check -q "$S" "$SO"
	assert_success
	# the lanes are known only once their process_name is read: with the
	# metadata last and a budget of 1 record the ordered path is left
	# (rebuffered), and the records are the same
	"$PY" -c 'import json, sys
e = json.load(open(sys.argv[1]))
json.dump([x for x in e if x["ph"] != "M"] + [x for x in e if x["ph"] == "M"],
    open(sys.argv[2], "w"))' "$ARR" "$T/mlast.json"
	CHROME2NDJSON_BUDGET=1 CHROME2NDJSON_STATS=1 chrome2ndjson \
	    "$T/mlast.json" > "$T/mlast.ndjson" 2> "$T/err"
	assert_equal "$(cat "$T/err")" "chrome2ndjson: $T/mlast.json: rebuffered"
	diff <(tail -n +2 "$S" | grep -v '"type":"end"' | sort) \
	    <(tail -n +2 "$T/mlast.ndjson" | grep -v '"type":"end"' | sort)
	# the origin: the whole second below the first ts; ts_ns exact
	run jq -r 'select(.type == "meta") | .origin_ns' "$S"
	assert_output 1699529623000000000
	run jq -r 'select(.name == "aclnnMatmul_MatMulV2_MatMulV2") |
	    [.ts_ns, .dur_ns] | @tsv' "$S"
	assert_line --index 0 "$(printf '106810250\t150375')"
}

@test "ascend: string times: exact to the ns, digits past the third rounded half away from zero, bad text skipped as bad_ts/bad_dur" {
	cat > "$T/r.json" <<'E'
[{"ph":"X","name":"a","pid":1,"tid":1,"ts":"1699529623106750.1245","dur":"0.0005"},
{"ph":"X","name":"b","pid":1,"tid":1,"ts":"1699529623106750.1255","dur":"2.0004999"},
{"ph":"X","name":"c","pid":1,"tid":1,"ts":"1699529623106750.0005","dur":"1e-3"},
{"ph":"X","name":"d","pid":1,"tid":1,"ts":1699529623106750.1245,"dur":0.0005},
{"ph":"X","name":"e","pid":1,"tid":1,"ts":" 1","dur":1},
{"ph":"X","name":"f","pid":1,"tid":1,"ts":"1.","dur":1},
{"ph":"X","name":"g","pid":1,"tid":1,"ts":"0x10","dur":1},
{"ph":"X","name":"h","pid":1,"tid":1,"ts":"","dur":1},
{"ph":"X","name":"i","pid":1,"tid":1,"ts":"1","dur":"-"},
{"ph":"X","name":"j","pid":1,"tid":1,"ts":"01","dur":1},
{"ph":"i","name":"k","pid":1,"tid":1,"ts":"\u0031"}]
E
	chrome2ndjson -q "$T/r.json" > "$T/r.ndjson"
	# a string and the same number give the same ns; .0005 rounds up
	run jq -r 'select(.type == "span") | [.name, .ts_ns, .dur_ns] | @tsv' "$T/r.ndjson"
	assert_output "$(printf 'c\t106750001\t1\na\t106750125\t1\nd\t106750125\t1\nb\t106750126\t2000')"
	"$PY" - "$T/r.json" "$T/r.ndjson" <<'E'
import json, sys
from fractions import Fraction
def ns(t):
    # round half away from zero, from the exact decimal
    x = Fraction(t) * 1000
    r = (abs(x.numerator) * 2 + x.denominator) // (2 * x.denominator)
    return r if x >= 0 else -r
evs = json.load(open(sys.argv[1]), parse_float=str)
out = [json.loads(l) for l in open(sys.argv[2])]
meta, end = out[0], out[-1]
got = {r["name"]: (r["ts_ns"] + meta["origin_ns"], r["dur_ns"])
       for r in out if r["type"] == "span"}
want = {e["name"]: (ns(str(e["ts"])), ns(str(e["dur"])))
        for e in evs if e["name"] in "abcd"}
assert got == want, (got, want)
assert end["skipped"] == {"bad_ts": 6, "bad_dur": 1}, end["skipped"]
E
}

@test "ascend: device NPU:1 for the device and derived lanes, CPU for Python and CANN; task types are categories; the device-op rule" {
	run bash -c "jq -r 'select(.type == \"span\" or .type == \"counter\") |
	    [.process, .device] | @tsv' '$S' | sort -u"
	assert_output "$(printf 'AI Core Freq\tNPU:1\nAscend Hardware\tNPU:1\nCANN\tCPU\nCommunication\tNPU:1\nOverlap Analysis\tNPU:1\nPython\tCPU')"
	run bash -c "jq -r 'select(.process == \"Ascend Hardware\" and .type == \"span\") |
	    [.cat, .args.\"Task Type\", .class] | @tsv' '$S' | sort -u"
	assert_output "$(printf 'AI_CORE\tAI_CORE\tcompute\nAI_CPU\tAI_CPU\tcompute\nAI_VECTOR_CORE\tAI_VECTOR_CORE\tcompute\nMIX_AIC\tMIX_AIC\tcompute')"
	run bash -c "jq -r 'select(.process == \"Communication\" and .type == \"span\") |
	    [.name, .class, .family] | @tsv' '$S' | sort -u"
	assert_output "$(printf 'hcom_allReduce__101_0_1\tcommunication\tall-reduce\nhcom_allReduce__102_0_1\tcommunication\tall-reduce\nhcom_allReduce__103_0_1\tcommunication\tall-reduce\nhcom_broadcast__201_0\tcommunication\tbroadcast')"
	# the C rule (nd-unit device) and the jq rule of ndtrace(7) agree:
	# Overlap Analysis is a device annotation, not device work
	awk '/def kind:/ { on = 1; sub(/^.*def kind:/, "def kind:") }
	    on { print } on && /end;$/ { exit }' \
	    "$BATS_TEST_DIRNAME/../man/ndtrace.7" > "$T/kind.jq"
	jq -r "$(cat "$T/kind.jq") select(.type == \"span\") |
	    [kind, .name] | @tsv" "$S" > "$T/jq.out"
	nd-unit device "$S" > "$T/c.out"
	cmp "$T/jq.out" "$T/c.out"
	run bash -c "paste '$T/c.out' <(jq -r 'select(.type == \"span\") | .process' '$S') |
	    awk -F'\t' '{ print \$3, \$1 }' | sort -u"
	assert_output "$(printf 'Ascend Hardware device\nCANN host\nCommunication device\nOverlap Analysis annot\nPython host')"
}

@test "ascend: device tasks take the step and scope of their launching operator (async_npu flows); HCCL ops the step of their window" {
	run bash -c "jq -r 'select(.process == \"Ascend Hardware\" and .type == \"span\") |
	    [.name, .ts_ns, .step // \"-\", .scope // \"-\"] | @tsv' '$S' |
	    sort -t$'\t' -k2,2n -k1,1 | tr '\t' ' '"
	assert_output "$("$PY" "$REF" launch "$ARR")"
	run bash -c "jq -r 'select(.process == \"Communication\" and .type == \"span\") |
	    .step' '$S' | tr '\n' ' '"
	assert_output "1 1 2 3 "
}

@test "ascend: trace-topk --by class, trace-steps and trace-gaps agree with the Python reference" {
	run bash -c "trace-topk --by class '$S' | jq -r '[.class, .count, .total_ns] | @tsv' | tr '\t' ' '"
	assert_output "$("$PY" "$REF" classes "$ARR")"
	run bash -c "trace-steps '$S' | jq -r 'select(.type == \"step\") |
	    [.step, .ts_ns, .dur_ns, .compute_ns, .communication_ns, .host_ns,
	    .idle_ns] | @tsv' | tr '\t' ' '"
	assert_output "$("$PY" "$REF" steps "$ARR")"
	# the device idle gap of step 2 (the host blocks in aten::item)
	run bash -c "trace-gaps '$S' | jq -r 'select(.type == \"gap\") |
	    [.ts_ns, .dur_ns, .step] | @tsv' | sort -t$'\t' -k2,2n | tail -1 | tr '\t' ' '"
	assert_output "$("$PY" "$REF" gap "$ARR")"
	# the object form: the same answers
	trace-steps "$S" | tail -n +2 > "$T/a"
	trace-steps "$SO" | tail -n +2 | sed "s|$OBJ|$ARR|g" > "$T/o"
	cmp "$T/a" "$T/o"
}

@test "README: the example of the inputs table for Ascend traces runs" {
	mkdir -p "$T/w/ASCEND_PROFILER_OUTPUT"
	cp "$ARR" "$T/w/ASCEND_PROFILER_OUTPUT/trace_view.json"
	cmd=$(grep -F '| Ascend NPU traces' "$BATS_TEST_DIRNAME/../README.md" |
	    awk -F'`' '{ print $(NF-1) }' | sed 's/\\|/|/g')
	[ -n "$cmd" ] || fail "no README row 'Ascend NPU traces'"
	run bash -o pipefail -c "cd '$T/w' && $cmd | jq -r 'select(.type == \"step\") |
	    [.step, .ts_ns, .dur_ns, .compute_ns, .communication_ns, .host_ns,
	    .idle_ns] | @tsv' | tr '\t' ' '"
	assert_success
	assert_output "$("$PY" "$REF" steps "$ARR")"
}

@test "nd-unit device: the torch_npu lanes by exact process name; a device category still wins" {
	s() { printf '{"type":"span","ts_ns":0,"dur_ns":1,"name":"%s","pid":1,"tid":1%s}\n' "$1" "$2"; }
	{
		s hw ',"process":"Ascend Hardware","thread":"Stream 2","cat":"AI_CORE"'
		s hwnocat ',"process":"Ascend Hardware"'
		s comm ',"process":"Communication"'
		s ovl ',"process":"Overlap Analysis"'
		s freq ',"process":"AI Core Freq"'
		s ovlkernel ',"process":"Overlap Analysis","cat":"kernel"'
		s lower ',"process":"ascend hardware"'
		s space ',"process":"Communication "'
		s py ',"process":"Python","cat":"cpu_op"'
		s cann ',"process":"CANN"'
	} > "$T/s.ndjson"
	run nd-unit device "$T/s.ndjson"
	assert_success
	assert_output "$(printf '%s\n' device$'\t'hw device$'\t'hwnocat \
	    device$'\t'comm annot$'\t'ovl annot$'\t'freq device$'\t'ovlkernel \
	    host$'\t'lower host$'\t'space host$'\t'py host$'\t'cann)"
}
