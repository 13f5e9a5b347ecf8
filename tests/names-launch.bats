#!/usr/bin/env bats
# Issue 20, NM: one name-shortening rule for every table (nd_name,
# ndtrace(7) "Names in tables"), Markdown without HTML entities, and the
# device time per launching CPU op (nd_launch, ndtrace(7) "Launching CPU
# ops") in trace-report, checked against tests/tools/launch_ref.py, an
# independent pass over the raw Chrome JSON.

load helpers

setup_file() {
	local d="$BATS_FILE_TMPDIR" f
	for f in tracelens_h100_qwen hta_sampled_rank-0; do
		"$ND_BIN/chrome2ndjson" "$FIXTURES/chrome/$f.json.gz" > "$d/$f.ndjson"
		"$ND_BIN/trace-report" --json -k 0 "$d/$f.ndjson" > "$d/$f.report.json"
		"$PY" "$BATS_TEST_DIRNAME/tools/launch_ref.py" \
		    "$FIXTURES/chrome/$f.json.gz" > "$d/$f.ref.json"
	done
}

setup() {
	T="$BATS_TEST_TMPDIR"
	F="$BATS_FILE_TMPDIR"
}

# the report's launch_ops against the reference, every row (-k 0)
launch_agrees() { # name
	run "$PY" - "$F/$1.report.json" "$F/$1.ref.json" <<'EOF'
import json, sys
rep = json.load(open(sys.argv[1]))["launch_ops"]
ref = json.load(open(sys.argv[2]))
bad = [k for k in ("device_ops", "device_ns", "unmatched_ops", "unmatched_ns")
       if rep[k] != ref[k]]
if rep["unplaced_ops"] != 0:
    bad.append("unplaced_ops")
for k in ("by_op", "by_top_op"):
    got = {r["name"]: (r["device_ops"], r["device_ns"]) for r in rep[k]}
    want = {(None if n == "null" else n): tuple(v) for n, v in ref[k].items()}
    if got != want or rep[k + "_rows"] != len(want):
        bad.append(k)
    # shares of the matched device time, rows by time then ops
    for r in rep[k]:
        if abs(r["share"] - r["device_ns"] / rep["device_ns"]) > 1e-12:
            bad.append(k + " share")
    keys = [(-r["device_ns"], -r["device_ops"]) for r in rep[k]]
    if keys != sorted(keys):
        bad.append(k + " order")
print(" ".join(bad) if bad else "ok %d %d %d" % (rep["device_ops"],
      rep["unmatched_ops"], len(rep["by_op"])))
EOF
}

@test "nd_name_short: kernels, return types, paths, unbalanced brackets, UTF-8" {
	"$PY" - > "$T/in" <<'EOF'
print("aten::mm")
print("x" * 72)
print("x" * 73)
print("void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_nocast<at::native::CUDAFunctor_add<c10::BFloat16> >(at::TensorIteratorBase&, at::native::CUDAFunctor_add<c10::BFloat16> const&)::{lambda(int)#1}>(int, at::native::gpu_kernel_impl_nocast<at::native::CUDAFunctor_add<c10::BFloat16> >(at::TensorIteratorBase&, at::native::CUDAFunctor_add<c10::BFloat16> const&)::{lambda(int)#1})")
print("std::enable_if<!(false), void>::type internal::gemvx::kernel<int, int, float, float, float, float, false, true, false, false, 7, cublasGemvParams<cublasGemvTensorStridedBatched<float const>, float> >(cublasGemvParams<cublasGemvTensorStridedBatched<float const>, float>)")
print("void at::native::(anonymous namespace)::CatArrayBatchedCopy<at::native::(anonymous namespace)::OpaqueType<2u>, unsigned int, 4, 64, 64>(at::native::(anonymous namespace)::OpaqueType<2u>*, int, unsigned int)")
print("_send_gradient_tape/replica_6/bert_span_labeler/bert_encoder_1/transformer/layer_10/self_attention_layer_norm/moments/scalar_0:_Send")
print("a/" + "y" * 100)
print("void kernel<int, float(" + "z" * 70)
print("Cijk_Ailk_Bljk_BBS_BH_MT128x128x64_MI16x16x16x1_SN_1LDSB0_APM1_ABV0_ACED0_AF0EM1_AF1EM1_AMAS3")
print("\u00e9" * 80)
print("cask_cudnn::computeWgradSplitKOffsetsKernel(cask_cudnn::ComputeSplitKOffsetsParams)")
print("void cutlass::Kernel2<cutlass_80_simt_sgemm_128x32_8x5_nn_align1>(cutlass_80_simt_sgemm_128x32_8x5_nn_align1::Params)")
EOF
	run nd-unit name 72 < "$T/in"
	assert_success
	local x71 y71 e71
	x71=$(printf 'x%.0s' $(seq 71)) y71=$(printf 'y%.0s' $(seq 71))
	e71=$(printf '\303\251%.0s' $(seq 71))
	assert_output "$(printf '%s\n' 'aten::mm' "${x71}x" "${x71}…" \
	    'at::native::elementwise_kernel<…>(…)' \
	    'internal::gemvx::kernel<…>(…)' \
	    'at::native::(anonymous namespace)::CatArrayBatchedCopy<…>(…)' \
	    '_send_gradient_tape/…/self_attention_layer_norm/moments/scalar_0:_Send' \
	    "…$y71" \
	    'void kernel<int, float(zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz…' \
	    'Cijk_Ailk_Bljk_BBS_BH_MT128x128x64_MI16x16x16x1_SN_1LDSB0_APM1_ABV0_ACE…' \
	    "$e71…" \
	    'cask_cudnn::computeWgradSplitKOffsetsKernel(…)' \
	    'cutlass::Kernel2<…>(…)')"
	# every line at most 72 code points
	run "$PY" -c 'import sys; print(max(len(l.rstrip("\n")) for l in open(sys.argv[1], encoding="utf-8")))' <(nd-unit name 72 < "$T/in")
	assert_output 72
	# 34 (trace-diff's column): a path whose head and last part do not fit
	# keeps its end
	run nd-unit name 34 < <(sed -n '5p;7p' "$T/in")
	assert_output "$(printf '%s\n' 'internal::gemvx::kernel<…>(…)' '…layer_norm/moments/scalar_0:_Send')"
}

# A stream with a long kernel name, a long scope path and a name with the
# characters Markdown and HTML treat specially.
name_stream() {
	printf '{"type":"meta","schema":"ndtrace/1","source":"n.json","format":"chrome","origin_ns":0,"host":"h","producer":"hand"}\n'
	jq -cn --arg k "$KERNEL" --arg s "$SCOPE" '
	    {type:"span",ts_ns:0,dur_ns:3000,name:$k,pid:0,tid:7,cat:"kernel",scope:$s,args:{flops:1000000,bytes_accessed:1000}},
	    {type:"span",ts_ns:3000,dur_ns:1000,name:"a<b> & c &lt;",pid:0,tid:7,cat:"kernel",scope:"x",args:{}}'
}

KERNEL='void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul>)'
SCOPE='model/encoder/layer_11/self_attention/query_key_value/dense/MatMul_with_a_long_tail'
SHORT='at::native::vectorized_elementwise_kernel<…>(…)'

@test "every table shortens by the one rule; records, CSV and JSON keep the full name" {
	name_stream > "$T/n.ndjson"
	run trace-topk --table "$T/n.ndjson"
	[[ "${lines[2]}" == *"  $SHORT" ]]
	run trace-topk --table -b scope "$T/n.ndjson"
	[[ "${lines[2]}" == *'  model/…/self_attention/query_key_value/dense/MatMul_with_a_long_tail' ]]
	run trace-roofline --table --device A100 "$T/n.ndjson"
	[[ "${lines[2]}" == *"  $SHORT" ]]
	# trace-mem --table: the allocating op
	{
		printf '{"type":"meta","schema":"ndtrace/1","source":"m.json","format":"chrome","origin_ns":0,"host":null,"rank":0,"producer":"hand"}\n'
		jq -cn --arg k "$KERNEL" '{type:"span",ts_ns:0,dur_ns:100,name:$k,pid:1,tid:1}'
		printf '{"type":"instant","ts_ns":25,"name":"[memory]","pid":1,"tid":1,"args":{"Total Allocated":1000,"Total Reserved":4096,"Bytes":1000,"Device Type":1,"Device Id":0}}\n'
	} > "$T/m.ndjson"
	run trace-mem --table "$T/m.ndjson"
	assert_line --regexp '^  GPU:0 .* 100\.0%  .*  at::native::vectorized_elementwise_kernel<…>\(…\)$'
	# the report's op and roofline tables (Markdown escapes, no entities)
	run trace-report "$T/n.ndjson"
	assert_line '| 1 | at::native::vectorized\_elementwise\_kernel\<…\>(…) | 1 | 3.0 us | 75.0 % | 3.0 us | 3.0 us | 3.0 us |'
	assert_line --regexp '^\| 1 \| at::native::vectorized\\_elementwise\\_kernel\\<…\\>\(…\) \| 1 \| 3\.0 us \| 0\.333 \|'
	# the machine outputs: full names
	run jq -r 'select(.type == "top") | .name' <(trace-topk "$T/n.ndjson")
	assert_line "$KERNEL"
	run trace-topk --csv "$T/n.ndjson"
	assert_line --partial "\"$KERNEL\""
	run jq -r '.ops.ops[0].name, .ops.roofline.top[0].name' <(trace-report --json "$T/n.ndjson")
	assert_output "$(printf '%s\n' "$KERNEL" "$KERNEL")"
	# trace-diff --table: the 34-wide key column (the kernel twice as long
	# after); before the rule, the name was cut at byte 34 without a mark
	diff_stream b.json 1000 > "$T/b.ndjson"
	diff_stream a.json 2000 > "$T/a.ndjson"
	run trace-diff --table "$T/b.ndjson" "$T/a.ndjson"
	assert_line '  at::native::vectorized_elementwis…      1.000us      2.000us     +1.000us  +100.00%      1.00     1.00'
}

# three ProfilerStep#N of 4 us, the kernel of DUR ns in each
diff_stream() { # source dur
	printf '{"type":"meta","schema":"ndtrace/1","source":"%s","format":"chrome","origin_ns":0,"host":"h","producer":"hand"}\n' "$1"
	jq -cn --arg k "$KERNEL" --argjson d "$2" 'range(3) as $i |
	    {type:"span",ts_ns:($i*4000),dur_ns:4000,name:("ProfilerStep#\($i+1)"),pid:1,tid:1,cat:"user_annotation"},
	    {type:"span",ts_ns:($i*4000+100),dur_ns:$d,name:$k,pid:0,tid:7,cat:"kernel"}'
}

@test "Markdown holds no HTML entities; the HTML page escapes every name once" {
	name_stream > "$T/n.ndjson"
	trace-report "$T/n.ndjson" > "$T/n.md"
	# (the name's own "&lt;" is text: \&lt;)
	run grep -c '[^\\]&\(lt\|gt\|amp\);' "$T/n.md"
	assert_output 0
	run grep -F '| 2 | a\<b\> \& c \&lt; | 1 |' "$T/n.md"
	assert_success
	trace-report --html "$T/n.ndjson" > "$T/n.html"
	# the literal "&lt;" of the name is text, not an entity
	grep -qF '>a&lt;b&gt; &amp; c &amp;lt;</td>' "$T/n.html"
	grep -n "[^\\]\\[<>&]" "$T/n.html" >&3 || true
	run grep -c '[^\\]\\[<>&]' "$T/n.html"
	assert_output 0
}

@test "launching CPU ops: the TraceLens qwen trace agrees with an independent pass" {
	launch_agrees tracelens_h100_qwen
	assert_output 'ok 1198 509 20'
	# the Markdown subsection: the top rows and the counts
	trace-report "$F/tracelens_h100_qwen.ndjson" > "$T/q.md"
	run sed -n '/^### Device time per launching CPU op$/,/^| 2 /p' "$T/q.md"
	assert_output "$(printf '%s\n' '### Device time per launching CPU op' '' \
	    '1198 device ops (31.905 ms) matched to their launch call by correlation id, under the innermost CPU op around the launch (ndtrace(7), "Launching CPU ops"); 509 (13.742 ms) whose launch is not in the trace.' '' \
	    '| # | CPU op | device ops | device time | share |' \
	    '|---|---|---|---|---|' \
	    '| 1 | aten::mul | 220 | 6.753 ms | 21.2 % |' \
	    '| 2 | aten::mm | 192 | 6.669 ms | 20.9 % |')"
	run grep -A4 '^The same device time under the top-level CPU op' "$T/q.md"
	assert_line '| 1 | aten::linear | 336 | 8.998 ms | 28.2 % |'
	# --top cuts the JSON rows too
	run jq -c '.launch_ops | [(.by_op | length), .by_op_rows, (.by_top_op | length)]' \
	    <(trace-report --json -k 3 "$F/tracelens_h100_qwen.ndjson")
	assert_output '[3,20,3]'
}

@test "launching CPU ops: an HTA trace with nested ops of equal start agrees too" {
	launch_agrees hta_sampled_rank-0
	assert_output 'ok 1204 0 71'
}

# Hand-made: ids per source, device ops before their launch, a graph
# launch, a launch outside every CPU op, ops of equal start and length, a
# device op whose launch is missing, a second op of one launch, and a
# thread out of order (the report reads the stream again, sorted).
launch_stream() {
	meta() { printf '{"type":"meta","schema":"ndtrace/1","source":"%s","format":"chrome","origin_ns":0,"host":"h","producer":"hand"}\n' "$1"; }
	sp() { # PID TID CAT TS DUR NAME [CORR]
		local a='{}'
		[ -n "${7:-}" ] && a="{\"correlation\":$7}"
		printf '{"type":"span","ts_ns":%s,"dur_ns":%s,"name":"%s","pid":%s,"tid":%s,"cat":"%s","args":%s}\n' "$4" "$5" "$6" "$1" "$2" "$3" "$a"
	}
	meta a.json
	sp 0 7 kernel 50 30 k5 5		# before its launch: waits
	sp 10 1 cpu_op 0 1000 outer
	sp 10 1 cpu_op 100 400 inner
	sp 10 1 cuda_runtime 200 10 cudaLaunchKernel 1	# inner, top outer
	sp 10 1 cuda_runtime 600 10 cudaLaunchKernel 2	# inner ended: outer
	sp 10 1 cpu_op 2000 100 tieA
	sp 10 1 cpu_op 2000 100 tieB	# same start and length: tieB inside
	sp 10 1 cuda_runtime 2050 10 cudaLaunchKernel 3
	sp 10 1 cuda_runtime 3000 10 cudaGraphLaunch 4	# no CPU op
	sp 10 1 cpu_op 3050 150 late5
	sp 10 1 cuda_runtime 3100 10 cudaLaunchKernel 5
	sp 10 2 cpu_op 5000 1000 late
	sp 10 2 cuda_runtime 4500 10 cudaLaunchKernel 6	# out of order
	sp 0 7 kernel 300 100 k1 1
	sp 0 7 kernel 700 200 k2 2
	sp 0 7 kernel 2200 50 k3 3
	sp 0 7 kernel 3100 40 g1 4
	sp 0 7 kernel 3200 60 g2 4	# a graph launch is kept
	sp 0 7 kernel 4000 70 k9 9	# no launch
	sp 0 7 kernel 4100 5 k1b 1	# a second op of launch 1: its too
	sp 0 7 kernel 7000 11 k6 6
	meta b.json
	sp 20 1 cpu_op 0 100 bop
	sp 20 1 cuda_runtime 10 10 cudaLaunchKernel 1	# id 1 again: source b's
	sp 0 7 kernel 50 13 kb 1
}

@test "launching CPU ops: hand-made stream, every rule worked out" {
	launch_stream > "$T/l.ndjson"
	# inner: outer 200 (k2), none 111 (g1 40 + g2 60 + k6 11: launch 6 at
	# 4500 starts before "late", once sorted), inner 105 (k1 + k1b), tieB
	# 50, late5 30, bop 13; matched 9 ops, 509 ns; unmatched k9 70; none
	# unplaced.  Top: outer 305, none 111, tieA 50, late5, bop.
	run jq -c '.launch_ops | [.device_ops, .device_ns, .unmatched_ops, .unmatched_ns, .unplaced_ops],
	    [.by_op[] | [.name, .device_ops, .device_ns]], .by_op_rows,
	    [.by_top_op[] | [.name, .device_ops, .device_ns]], .by_top_op_rows' \
	    <(trace-report --json "$T/l.ndjson")
	assert_output "$(printf '%s\n' '[9,509,1,70,0]' \
	    '[["outer",1,200],[null,3,111],["inner",2,105],["tieB",1,50],["late5",1,30],["bop",1,13]]' 6 \
	    '[["outer",3,305],[null,3,111],["tieA",1,50],["late5",1,30],["bop",1,13]]' 5)"
	run trace-report "$T/l.ndjson"
	assert_line '9 device ops (509 ns) matched to their launch call by correlation id, under the innermost CPU op around the launch (ndtrace(7), "Launching CPU ops"); 1 (70 ns) whose launch is not in the trace.'
	assert_line '| 2 | (no CPU op) | 3 | 111 ns | 21.8 % |'
	# 111 / 509 = 21.81 %
	run awk 'BEGIN { printf "%.1f\n", 111 / 509 * 100 }'
	assert_output 21.8
	# the same with the key spelled with an escape: the same answer
	sed 's/"correlation"/"c\\u006frrelation"/g' "$T/l.ndjson" > "$T/e.ndjson"
	run grep -c 'c\\u006frrelation' "$T/e.ndjson"
	[ "$output" -ge 7 ]
	run diff <(trace-report --json "$T/l.ndjson" | jq -c .launch_ops) \
	    <(trace-report --json "$T/e.ndjson" | jq -c .launch_ops)
	assert_success
	# no correlation ids: no subsection, an empty object in JSON
	grep -v cuda_runtime "$T/l.ndjson" | sed 's/"correlation":[0-9]*//' > "$T/n.ndjson"
	run grep -c 'launching CPU op' <(trace-report "$T/n.ndjson")
	assert_output 0
	run jq -c '.launch_ops' <(trace-report --json "$T/n.ndjson")
	assert_output '{"device_ops":0,"device_ns":0,"unmatched_ops":0,"unmatched_ns":0,"unplaced_ops":0,"by_op":[],"by_op_rows":0,"by_top_op":[],"by_top_op_rows":0}'
}

@test "launching CPU ops: a child that outlives its parent; deep nesting stays linear" {
	# A [0,100), B [50,200) starts in A and outlives it: the launch at 60
	# is in B inside A, the one at 150 in B alone
	{
		printf '{"type":"meta","schema":"ndtrace/1","source":"c.json","format":"chrome","origin_ns":0,"host":"h","producer":"hand"}\n'
		printf '{"type":"span","ts_ns":%s,"dur_ns":%s,"name":"%s","pid":1,"tid":1,"cat":"%s","args":%s}\n' \
		    0 100 A cpu_op '{}' 50 150 B cpu_op '{}' \
		    60 5 cudaLaunchKernel cuda_runtime '{"correlation":1}' \
		    150 5 cudaLaunchKernel cuda_runtime '{"correlation":2}' \
		    300 7 k1 kernel '{"correlation":1}' 400 11 k2 kernel '{"correlation":2}'
	} > "$T/c.ndjson"
	run jq -c '.launch_ops | [.by_op[] | [.name, .device_ns]], [.by_top_op[] | [.name, .device_ns]]' \
	    <(trace-report --json "$T/c.ndjson")
	assert_output "$(printf '%s\n' '[["B",18]]' '[["B",11],["A",7]]')"
	# 100000 CPU ops, each starting in the one before and outliving it (the
	# stack never pops), a launch in each: finding the top-level op from
	# the bottom each time was quadratic (3.5 s); it is amortised O(1)
	"$PY" - > "$T/deep.ndjson" <<'PYEOF'
import json
n = 100000
print(json.dumps({"type": "meta", "schema": "ndtrace/1", "source": "d.json",
    "format": "chrome", "origin_ns": 0, "host": "h", "producer": "hand"}))
for i in range(n):
    print(json.dumps({"type": "span", "ts_ns": 10 * i, "dur_ns": 15,
        "name": "op%d" % (i % 7), "pid": 1, "tid": 1, "cat": "cpu_op"}))
    print(json.dumps({"type": "span", "ts_ns": 10 * i + 1, "dur_ns": 1,
        "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "cat": "cuda_runtime",
        "args": {"correlation": i}}))
for i in range(n):
    print(json.dumps({"type": "span", "ts_ns": 10 * i + 5, "dur_ns": 2,
        "name": "k", "pid": 0, "tid": 7, "cat": "kernel", "args": {"correlation": i}}))
PYEOF
	bounded 2 2000000 "trace-report --json '$T/deep.ndjson' > '$T/deep.json'"
	assert_success
	# launch i: innermost op i, top-level op i-1 (op 0 for launch 0), so
	# op0 is the top of 1 + 14286 launches (i-1 = 0, 7, ..., 99995) and
	# the innermost of 14286 (i = 0, 7, ..., 99995)
	run jq -c '.launch_ops | [.device_ops, .device_ns, .by_top_op[0].name, .by_top_op[0].device_ops, .by_op[0].name, .by_op[0].device_ops]' "$T/deep.json"
	assert_output '[100000,200000,"op0",14287,"op0",14286]'
}
