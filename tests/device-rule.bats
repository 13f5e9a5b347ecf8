#!/usr/bin/env bats
# The device-op rule (ndtrace(7) "Device ops", nd_event_kind): decided once
# on the decoded event; the jq definition of ndtrace(7) agrees with it; the
# programs count cuda_sync and MTIA ops as device ops (issue 19).

load helpers

setup() {
	T="$BATS_TEST_TMPDIR"
	MAN="$BATS_TEST_DIRNAME/../man/ndtrace.7"
	MTIA="$FIXTURES/hand/mtia_3steps.json"
	need_fixtures
}

# The jq definition `kind` as ndtrace(7) prints it (from "def kind:" to
# "end;"), into $T/kind.jq.
man_kind() {
	awk '/def kind:/ { on = 1; sub(/^.*def kind:/, "def kind:") }
	    on { print } on && /end;$/ { exit }' "$MAN" > "$T/kind.jq"
	grep -q '^def kind:' "$T/kind.jq" || fail "no def kind in $MAN"
}

# jq_vs_c FILE: the jq rule and nd-unit device give the same kind per span.
jq_vs_c() {
	jq -r "$(cat "$T/kind.jq") select(.type == \"span\") |
	    [kind, .name] | @tsv" "$1" > "$T/jq.out"
	nd-unit device "$1" > "$T/c.out"
	[ -s "$T/c.out" ] || fail "$1: no spans"
	diff "$T/jq.out" "$T/c.out" || fail "$1: jq rule and C rule differ"
}

@test "nd-unit device: Kineto, MTIA and XPlane records, derived lines" {
	s() { printf '{"type":"span","ts_ns":0,"dur_ns":1,"name":"%s","pid":1,"tid":1%s}\n' "$1" "$2"; }
	{
		s kernel ',"cat":"kernel","device":"GPU:0"'
		s memcpy ',"cat":"gpu_memcpy"'
		s memset ',"cat":"gpu_memset"'
		s sync ',"cat":"cuda_sync","thread":"stream 7 "'
		s gpuop ',"cat":"gpu_op"'
		s k2021 ',"cat":"Kernel"'
		s m2021 ',"cat":"Memcpy"'
		s annot ',"cat":"gpu_user_annotation","device":"GPU:0"'
		s profiler ',"cat":"Trace","process":"Spans","thread":"PyTorch Profiler"'
		s cpuop ',"cat":"cpu_op","device":"GPU:1"'
		s py ',"cat":"python_function"'
		s launch ',"cat":"cuda_runtime"'
		s mtia ',"cat":"mtia_ccp_events","process":"MTIA 0","device":"MTIA:0"'
		s mtiart ',"cat":"mtia_runtime","process":"python3"'
		s hpu ',"cat":"hpu_op"'
		s xla ',"process":"/device:TPU:0","thread":"XLA Ops","cat":"xla_op"'
		s steps ',"process":"/device:TPU:0","thread":"Steps"'
		s modules ',"process":"/device:TPU:0","thread":"XLA Modules"'
		s nscope ',"process":"/device:GPU:0","thread":"TensorFlow Name Scope"'
		s xkernel ',"process":"/device:GPU:0","thread":"Stream #16(Kernel)","cat":"kernel"'
		s nothread ',"process":"/device:GPU:0"'
		s hostline ',"process":"/host:CPU","thread":"python","cat":"host"'
		s bare ''
		printf '{"type":"instant","ts_ns":0,"name":"i","pid":1,"tid":1,"cat":"kernel"}\n'
	} > "$T/s.ndjson"
	run nd-unit device "$T/s.ndjson"
	assert_success
	assert_output "$(printf '%s\n' device$'\t'kernel device$'\t'memcpy \
	    device$'\t'memset device$'\t'sync device$'\t'gpuop device$'\t'k2021 \
	    device$'\t'm2021 annot$'\t'annot annot$'\t'profiler \
	    host$'\t'cpuop host$'\t'py \
	    host$'\t'launch device$'\t'mtia host$'\t'mtiart device$'\t'hpu \
	    device$'\t'xla annot$'\t'steps annot$'\t'modules annot$'\t'nscope \
	    device$'\t'xkernel device$'\t'nothread host$'\t'hostline \
	    host$'\t'bare)"
}

@test "hta_alexnet: the cuda_sync spans on GPU:0 are device ops, not host spans" {
	chrome2ndjson "$FIXTURES/chrome/hta_alexnet.json.gz" > "$T/a.ndjson"
	n=$(jq -s '[.[] | select(.type == "span" and .cat == "cuda_sync")] | length' "$T/a.ndjson")
	[ "$n" -eq 41 ]
	# each of them is a device op by the C rule
	run bash -c "paste <(nd-unit device '$T/a.ndjson' | cut -f1) <(jq -r 'select(.type == \"span\") | .cat' '$T/a.ndjson') | sort | uniq -c | awk '\$3 == \"cuda_sync\" { print \$2, \$1 }'"
	assert_output "device $n"
	# trace-topk: in the device rows with their count, not in the host rows
	want=$(jq -s '[.[] | select(.type == "span" and .name == "Stream Sync")] | length' "$T/a.ndjson")
	run bash -c "trace-topk -k 0 '$T/a.ndjson' | jq 'select(.name == \"Stream Sync\").count'"
	assert_output "$want"
	run bash -c "trace-topk -k 0 --timelines host '$T/a.ndjson' | jq -r .name | grep -c -x -e 'Stream Sync' -e 'Stream Wait Event' -e 'Context Sync'"
	assert_output 0
}

@test "ndtrace(7): the jq rule is the C rule on Kineto streams" {
	man_kind
	for f in hta_alexnet.json.gz hta_gpu_user_annotation.json.gz \
	    hta_mi250_rocm.json.gz kineto_before_fix.json \
	    tracelens_torch_compile_triton.json.gz; do
		chrome2ndjson "$FIXTURES/chrome/$f" > "$T/k.ndjson"
		jq_vs_c "$T/k.ndjson"
	done
	# every kind occurs
	chrome2ndjson "$FIXTURES/chrome/hta_gpu_user_annotation.json.gz" > "$T/k.ndjson"
	run bash -c "nd-unit device '$T/k.ndjson' | cut -f1 | sort -u | tr '\n' ' '"
	assert_output "annot device host "
}

@test "ndtrace(7): the jq rule is the C rule on XPlane streams (op lines, derived lines, host)" {
	man_kind
	for f in tpu_inference_4core tf_gpu_8gpu_worker; do
		xplane2ndjson "$FIXTURES/xplane/$f.xplane.pb" > "$T/$f.ndjson"
		# every device-process span, and the first 3000 others
		{ grep '"process":"/device:' "$T/$f.ndjson"
		  grep -v '"process":"/device:' "$T/$f.ndjson" | head -3000; } > "$T/xs.ndjson"
		jq_vs_c "$T/xs.ndjson"
	done
	# tf_gpu: the Steps and TensorFlow lines are annotations, streams ops
	run bash -c "paste <(nd-unit device '$T/xs.ndjson' | cut -f1) <(jq -r 'select(.type == \"span\") | .thread' '$T/xs.ndjson') | sort -u | grep -v '^host' | tr '\t' ':' | tr '\n' ','"
	assert_output "annot:Steps,annot:TensorFlow Name Scope,annot:TensorFlow Ops,device:Stream #123(MemcpyH2D),device:Stream #134(Compute),device:Stream #135(MemcpyH2D),device:Stream #136(MemcpyD2H),device:Stream #142(Compute),device:Stream #143(MemcpyH2D),device:Stream #144(MemcpyD2H),device:Stream #63(MemcpyH2D),device:Stream #91(MemcpyH2D),"
	# tpu: the XLA Modules and XLA TraceMe lines are annotations
	grep '"process":"/device:' "$T/tpu_inference_4core.ndjson" > "$T/t.ndjson"
	run bash -c "paste <(nd-unit device '$T/t.ndjson' | cut -f1) <(jq -r 'select(.type == \"span\") | .thread' '$T/t.ndjson') | sort -u | tr '\t' ':' | tr '\n' ','"
	assert_output "annot:XLA Modules,annot:XLA TraceMe,device:Async XLA Ops,device:XLA Ops,"
}

@test "ndtrace(7): the example 'ten longest device ops' runs as printed" {
	# the command from "jq -r 'def kind:" to "| head", on a stream file
	awk '/^jq -r .def kind:/ { on = 1 } on { print } on && /\| head$/ { exit }' \
	    "$MAN" > "$T/example.sh"
	grep -q 's.ndjson | sort -n -r | head$' "$T/example.sh" || fail "example not found"
	chrome2ndjson "$FIXTURES/chrome/hta_alexnet.json.gz" > "$T/s.ndjson"
	xplane2ndjson "$FIXTURES/xplane/rocm_jax08_gemm.xplane.pb" >> "$T/s.ndjson"
	cd "$T"
	run bash example.sh
	assert_success
	# the same from the C rule: device spans' duration and name
	want=$(paste <(nd-unit device s.ndjson | cut -f1) \
	    <(jq -r 'select(.type == "span") | [.dur_ns, .name] | @tsv' s.ndjson) |
	    awk -F'\t' '$1 == "device"' | cut -f2- | sort -n -r | head)
	assert_output "$want"
	[ "${#lines[@]}" -eq 10 ]
}

# Per step of the MTIA file (ProfilerStep#N windows): "step compute host
# idle" in ns, from the Chrome JSON itself: device busy = union of the
# mtia_ccp_events ops, host = union of cpu_op spans less device busy.
mtia_ref() {
	$PY - "$MTIA" <<'E'
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
def union(iv):
    out = []
    for a, b in sorted(iv):
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return out
def clip(iv, a, b):
    return [(max(x, a), min(y, b)) for x, y in iv if min(y, b) > max(x, a)]
def length(iv):
    return sum(b - a for a, b in iv)
ns = lambda e: (e["ts"] * 1000, (e["ts"] + e["dur"]) * 1000)
dev = [ns(e) for e in ev if e.get("cat") == "mtia_ccp_events"]
host = [ns(e) for e in ev if e.get("cat") == "cpu_op"]
for e in ev:
    if e["name"].startswith("ProfilerStep#"):
        a, b = ns(e)
        busy = union(clip(dev, a, b))
        both = union(clip(dev + host, a, b))
        c = length(busy)
        h = length(both) - c
        print(e["name"][13:], c, h, (b - a) - c - h)
E
}

@test "MTIA trace: device MTIA:0, trace-steps breaks steps down to device time, not 100% host" {
	chrome2ndjson "$MTIA" > "$T/m.ndjson"
	run bash -c "jq -r 'select(.cat == \"mtia_ccp_events\") | .device' '$T/m.ndjson' | sort -u"
	assert_output "MTIA:0"
	run bash -c "trace-steps '$T/m.ndjson' | jq -r 'select(.type == \"step\") | [.step, .compute_ns, .host_ns, .idle_ns] | @tsv' | tr '\t' ' '"
	assert_success
	assert_output "$(mtia_ref)"
	# 3 steps; compute takes the larger share of the steady state
	run bash -c "trace-steps -s '$T/m.ndjson' | jq -c 'select(.type == \"step_summary\") | [.count, .shares.compute > .shares.host, .breakdown.compute_ns]'"
	want=$(mtia_ref | awk 'NR > 1 { c += $2 } END { print c }')
	assert_output "[3,true,$want]"
}

@test "MTIA trace: trace-topk counts the MTIA ops as device ops, trace-gaps finds the idle gap" {
	chrome2ndjson "$MTIA" > "$T/m.ndjson"
	want=$(jq -r '[.traceEvents[] | select(.cat == "mtia_ccp_events")] |
	    group_by(.name) | map([.[0].name, length, (map(.dur) | add) * 1000]) |
	    sort_by(-.[2]) | .[] | @tsv' "$MTIA")
	run bash -c "trace-topk '$T/m.ndjson' | jq -r '[.name, .count, .self_ns] | @tsv'"
	assert_output "$want"
	run bash -c "trace-topk --table '$T/m.ndjson' | tail -1"
	refute_output --partial "no device ops"
	# the longest device gap: 1.5 ms to 1.9 ms in step 2
	want=$(jq -r '[.traceEvents[] | select(.cat == "mtia_ccp_events")] |
	    sort_by(.ts) | [range(1; length) as $i | [.[$i - 1].ts + .[$i - 1].dur,
	    .[$i].ts - (.[$i - 1].ts + .[$i - 1].dur)]] | max_by(.[1]) |
	    map(. * 1000) | @tsv' "$MTIA")
	run bash -c "trace-gaps '$T/m.ndjson' | jq -r 'select(.type == \"gap\") | [.ts_ns, .dur_ns] | @tsv' | sort -t$'\t' -k2,2n | tail -1"
	assert_output "$want"
	# every gap's cause: host_wait when the op after it was launched
	# (mtiaLaunchKernel, same correlation) at or after the gap's start,
	# as for cudaLaunchKernel (was "other": MTIA's runtime was no host
	# work)
	want=$(jq -r '[.traceEvents[] | select(.cat == "mtia_runtime")] as $l |
	    [.traceEvents[] | select(.cat == "mtia_ccp_events")] | sort_by(.ts) |
	    [range(1; length) as $i | (.[$i - 1].ts + .[$i - 1].dur) as $a |
	     .[$i] as $op | select($op.ts > $a) |
	     ($l | map(select(.args.correlation == $op.args.correlation)) | .[0].ts) as $lt |
	     [$a * 1000, (if $lt >= $a then "host_wait" else "other" end)]] | .[] | @tsv' "$MTIA")
	run bash -c "trace-gaps '$T/m.ndjson' | jq -r 'select(.type == \"gap\") | [.ts_ns, .cause] | @tsv'"
	assert_output "$want"
	[ "$(printf '%s\n' "$output" | grep -c host_wait)" -ge 3 ]
}
