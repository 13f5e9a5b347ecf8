#!/usr/bin/env bats
# Steps without markers (trace-steps(1), "Steps without markers"): the
# profile window of each device when a source has no steps, the XLA module
# executions, the inferred repeating span, per-device windows out of phase,
# and step_source everywhere.  Numbers are checked against
# tests/tools/breakdown_ref.py, jq over the same stream, or by hand.

load helpers
bats_require_minimum_version 1.5.0

XP="rocm_jax08_gemm rocm_jax_conv_8gpu rocm_jax_te_fused_attn tpu_inference_4core"
CH="hta_alexnet.json.gz hta_gpu_user_annotation.json.gz
    tracelens_mi300_ddp_resnet18.json.gz tracelens_torch_compile_triton.json.gz
    kineto_before_fix.json xprof_handwritten_trace.json"

setup_file() {
	local d="$BATS_FILE_TMPDIR" f
	for f in $XP tf_gpu_8gpu_worker; do
		xplane2ndjson "$FIXTURES/xplane/$f.xplane.pb" > "$d/$f.ndjson"
	done
	for f in $CH; do
		chrome2ndjson "$FIXTURES/chrome/$f" > "$d/${f%%.json*}.ndjson"
	done
}

setup() {
	T="$BATS_TEST_TMPDIR"
	D="$BATS_FILE_TMPDIR"
	REF="$BATS_TEST_DIRNAME/tools/breakdown_ref.py"
}

# the fields breakdown_ref.py computes
PW='{device,ts_ns,dur_ns,compute_ns,communication_ns,memory_ns,host_ns,idle_ns,overlap_ns,wait_ns}'

@test "profile windows: every fixture without step markers, as breakdown_ref.py computes them" {
	need_fixtures
	local f files=
	# XPlane: without their XLA modules (else those are the steps; the
	# other two then have inferred steps, see below)
	for f in rocm_jax08_gemm rocm_jax_conv_8gpu; do
		grep -v -E '"cat":"xla_module"|"name":"[^"]*:XLA [A-Za-z]+ module"' \
		    "$D/$f.ndjson" > "$T/$f.ndjson"
		files="$files $T/$f.ndjson"
	done
	for f in $CH; do
		files="$files $D/${f%%.json*}.ndjson"
	done
	for f in $files; do
		trace-steps -s "$f" 2>/dev/null | grep -v '^{"type":"meta"' >> "$T/out"
	done
	jq -c "select(.type == \"profile_window\") | $PW" "$T/out" > "$T/got"
	jq -c '[.type, .step_source, .count]' "$T/out" > "$T/kinds"
	# shellcheck disable=SC2086
	"$PY" "$REF" $files | jq -c "$PW" | sort > "$T/want"
	# 14 devices: 1 + 8 XPlane, 5 Chrome (the handwritten one has none)
	run wc -l < "$T/want"
	assert_output 14
	run diff "$T/want" <(sort "$T/got")
	assert_success
	# the parts add up; no step anywhere, and the summary counts none
	run jq -e -s 'all(.[]; .dur_ns == .compute_ns + .communication_ns + .memory_ns + .host_ns + .idle_ns)' "$T/got"
	assert_success
	run bash -c "sort '$T/kinds' | uniq -c | sed 's/^ *//'"
	assert_output '14 ["profile_window","none",null]
8 ["step_summary","none",0]'
	# the report's breakdown is the same windows, summed over devices
	trace-report --json "$T/rocm_jax_conv_8gpu.ndjson" > "$T/r.json"
	jq -c 'select(.type == "profile_window" and (.source | contains("conv_8gpu")))' "$T/out" | jq -s '{dur_ns: (map(.dur_ns) | add), compute_ns: (map(.compute_ns) | add), idle_ns: (map(.idle_ns) | add), host_ns: (map(.host_ns) | add)}' > "$T/sum"
	run jq -c --slurpfile s "$T/sum" '[.steps.step_source, .steps.count, .breakdown.window, (.breakdown.all_devices | {dur_ns, compute_ns, idle_ns, host_ns}) == $s[0]]' "$T/r.json"
	assert_output '["none",0,"profile",true]'
}

# The step module and its executions per device line (else per host
# thread), from the stream with jq: [scope, [[ts, dur], ...]] by scope.
mods() {
	grep -E '"cat":"xla_module"|"name":"[^"]*:XLA [A-Za-z]+ module"' "$1" | jq -s -c '
	  def nm: sub("\\([0-9]+\\)$"; "");
	  [.[] | select(.type == "span" and .dur_ns > 0)] as $s
	  | ([$s[] | select(.cat == "xla_module")]) as $dev
	  | (if ($dev | length) > 0 then
	       [$dev[] | {k: .device, n: (.name | nm), ts: .ts_ns, dur: .dur_ns}]
	     else
	       [$s[] | select(.name | test(":XLA [A-Za-z]+ module$"))
	        | {k: "\(.pid)/\(.tid)", n: (.name | sub(":XLA [A-Za-z]+ module$"; "")), ts: .ts_ns, dur: .dur_ns}]
	     end) as $m
	  | ($m | group_by(.n) | map({n: .[0].n, t: (map(.dur) | add)})
	     | max_by(.t) | .n) as $best
	  | [$best, ($m | map(select(.n == $best)) | group_by(.k)
	     | map([.[0].k, (sort_by(.ts) | map([.ts, .dur]))]))]'
}

@test "xla_module steps: the executions of the step module on every XPlane fixture, counted with jq" {
	need_fixtures
	local f
	for f in $XP; do
		mods "$D/$f.ndjson" > "$T/m.json"
		trace-steps -d "$D/$f.ndjson" > "$T/d.ndjson"
		trace-steps -s "$D/$f.ndjson" > "$T/s.ndjson"
		# every record says where its steps come from
		run jq -s -c '[.[] | select(.type == "step") | [.marker, .step_source]] | unique' "$T/s.ndjson"
		assert_output '[["none","xla_module"]]'
		# steps: the most executions on one device line or thread
		run jq -c 'select(.type == "step_summary") | [.count, .step_source]' "$T/s.ndjson"
		assert_output "[$(jq '[.[1][] | .[1] | length] | max' "$T/m.json"),\"xla_module\"]"
		if [ "$f" = tpu_inference_4core ]; then
			# a device's windows are its executions, numbered 1, 2, ...
			run jq -s -c 'map(select(.type == "step")) | group_by(.device)
			    | map([.[0].device, (sort_by(.step) | map([.ts_ns, .dur_ns]))])' "$T/d.ndjson"
			assert_output "$(jq -c '.[1]' "$T/m.json")"
			run jq -s -c '[map(select(.type == "step")) | .[] | .step] | [min, max, length]' "$T/d.ndjson"
			assert_output '[1,100,400]'
			run jq -r '.[0]' "$T/m.json"
			assert_output jit_f
		else
			# a host thread's step k: from its k-th execution to its next
			run jq -c '[.[1][] | .[1] | to_entries[] | {k: .key, ts: .value[0]}]
			    | group_by(.k) | map(min_by(.ts).ts)' "$T/m.json"
			want=$output
			run jq -s -c 'map(select(.type == "step")) | sort_by(.step) | map(.ts_ns)' "$T/s.ndjson"
			assert_output "$want"
		fi
	done
	# a Chrome/Perfetto export: the "XLA Modules" thread, without cat
	run bash -c "sed 's/\"cat\":\"xla_module\",//' '$D/tpu_inference_4core.ndjson' | trace-steps -s | jq -c 'select(.type == \"step_summary\") | [.count, .step_source]'"
	assert_output '[100,"xla_module"]'
	# the report says so; -x still overrides
	trace-report --json "$D/tpu_inference_4core.ndjson" > "$T/r.json"
	run jq -c '.steps | [.count, .step_source, .step_what, .marker]' "$T/r.json"
	assert_output '[100,"xla_module","jit_f","none"]'
	run bash -c "trace-report '$D/rocm_jax_conv_8gpu.ndjson' | grep -F 'steps: the executions'"
	assert_output '5 steps: the executions of XLA module jit\_forward\_3d\_conv (no step markers); steady state: 4 steps (2 to 5; warmup 1).'
	run bash -c "trace-steps -x '^jit_f\\(' '$D/tpu_inference_4core.ndjson' | jq -s -c 'map(select(.type == \"step\")) | [length, (map([.marker, .step_source]) | unique)]'"
	assert_output '[100,[["regex","marker"]]]'
}

# A hand-made source: train_step on thread 1 (4 times, each with an
# aten::mm inside), poll on thread 2 (5 short spans), one kernel per
# train_step on GPU:0.  $1: the number of train_steps, $2 their duration,
# $3 an offset, $4 extra records.
meta() {
	printf '{"type":"meta","schema":"ndtrace/1","source":"hand","format":"chrome","origin_ns":1,"host":null,"rank":0,"producer":"hand 1"}\n'
}
hs() { # ts dur name tid
	printf '{"type":"span","ts_ns":%s,"dur_ns":%s,"name":"%s","pid":100,"tid":%s,"device":"CPU","cat":"cpu_op","class":"host"}\n' "$1" "$2" "$3" "$4"
}
ks() { # ts dur
	printf '{"type":"span","ts_ns":%s,"dur_ns":%s,"name":"gemm","pid":0,"tid":7,"device":"GPU:0","cat":"kernel","class":"compute"}\n' "$1" "$2"
}
hand() {
	local n=$1 dur=$2 off=$3 i
	meta
	printf '%s' "${4:-}"
	for ((i = 0; i < n; i++)); do
		hs $((off + i * 1000)) "$dur" train_step 1
		hs $((off + i * 1000 + 100)) 50 aten::mm 1
		hs $((off + i * 1000 + 50)) 10 poll 2
	done
	hs $((off + n * 1000 + 50)) 10 poll 2
	for ((i = 0; i < n - 1; i++)); do
		ks $((off + i * 1000 + 200)) 500
	done
	ks $((off + (n - 1) * 1000 + 200)) 750
}

@test "inferred steps: a repeating top-level span that covers the device ops, and what does not make one" {
	# train_step x4, 900 ns each: steps [0,1000) [1000,2000) [2000,3000)
	# and [3000,3950) (the last to the last kernel's end).  Steps 1-3:
	# kernel [200,700) compute 500, host [0,900) minus it 400, idle
	# [900,1000) 100.  Step 4: kernel [3200,3950) 750, host [3000,3200)
	# 200.  poll: 50 of 4010 ns busy; aten::mm: never top-level.
	hand 4 900 0 > "$T/in.ndjson"
	run bash -c "trace-steps '$T/in.ndjson' | jq -c 'select(.type == \"step\") | [.step, .ts_ns, .dur_ns, .compute_ns, .host_ns, .idle_ns, .marker, .step_source]'"
	assert_output '[1,0,1000,500,400,100,"none","inferred"]
[2,1000,1000,500,400,100,"none","inferred"]
[3,2000,1000,500,400,100,"none","inferred"]
[4,3000,950,750,200,0,"none","inferred"]'
	trace-report --json "$T/in.ndjson" > "$T/r.json"
	run jq -c '.steps | [.count, .step_source, .step_what]' "$T/r.json"
	assert_output '[4,"inferred","train_step"]'
	run bash -c "trace-report '$T/in.ndjson' | grep -F 'steps: the'"
	assert_output '4 steps: the repetitions of span train\_step (inferred: no step markers); steady state: 3 steps (2 to 4; warmup 1).'
	# not convincing: 2 repeats; busy 400 of 3400 ns (< 50 %); the first
	# starts after 100000 of the device's 103950 ns (< 80 % left)
	hand 2 900 0 > "$T/a.ndjson"
	hand 4 400 0 > "$T/b.ndjson"
	hand 4 900 100000 "$(ks 0 50000)
" > "$T/c.ndjson"
	# nor a thread out of order (its top-level spans are not known)
	{ head -n 1 "$T/in.ndjson"; tail -n +2 "$T/in.ndjson" | tac; } > "$T/e.ndjson"
	for f in a b c e; do
		run bash -c "trace-steps '$T/$f.ndjson' 2>/dev/null | jq -c 'select(.type != \"meta\") | [.type, .step_source]' | uniq"
		assert_output '["profile_window","none"]'
	done
	# a marker wins
	hand 4 900 0 "$(hs 0 3950 'ProfilerStep#7' 3)
" > "$T/d.ndjson"
	run bash -c "trace-steps '$T/d.ndjson' | jq -c 'select(.type == \"step\") | [.step, .ts_ns, .dur_ns, .marker, .step_source]'"
	assert_output '[7,0,3950,"profiler_step","marker"]'
}

@test "inferred steps on real profiles: XPlane without its XLA modules, and none on the Chrome fixtures" {
	need_fixtures
	local f
	# TPU: PjitFunction(f), top-level on one host thread 100 times (the
	# 100 executions of jit_f); TE fused attention: block_until_ready x5
	for f in tpu_inference_4core:100:'PjitFunction(f)' \
	    rocm_jax_te_fused_attn:5:'$api.py:3105 block_until_ready'; do
		IFS=: read -r n c w <<< "$f"
		grep -v -E '"cat":"xla_module"|"name":"[^"]*:XLA [A-Za-z]+ module"' \
		    "$D/$n.ndjson" > "$T/x.ndjson"
		# not nested in one another, per thread
		run bash -c "grep -F '\"name\":\"$w\"' '$T/x.ndjson' | jq -s -c 'group_by(.tid) | map(sort_by(.ts_ns) | reduce .[] as \$e ({n: 0, end: -1}; if \$e.ts_ns >= .end then {n: (.n + 1), end: (\$e.ts_ns + \$e.dur_ns)} else . end) | .n) | max'"
		assert_output "$c"
		run bash -c "trace-report --json '$T/x.ndjson' | jq -c '.steps | [.count, .step_source, .step_what]'"
		assert_output "[$c,\"inferred\",\"$w\"]"
	done
	# the Chrome fixtures without markers: no candidate is convincing
	for f in $CH; do
		trace-steps "$D/${f%%.json*}.ndjson" 2>/dev/null | grep -c '"type":"step"' >> "$T/n" || true
	done
	run bash -c "sort -u '$T/n'"
	assert_output 0
}

@test "windows out of phase: step 0 of tf_gpu_8gpu_worker stays one window per device" {
	need_fixtures
	# the Steps-line spans of step 0, per device, with jq
	run jq -s -c '[.[] | select(.type == "span" and .thread == "Steps" and (.process | startswith("/device:")))
	    | [.device, .ts_ns, .dur_ns]] | sort' "$D/tf_gpu_8gpu_worker.ndjson"
	assert_output '[["GPU:4",1921061912,19865491],["GPU:6",2568617685,21310352]]'
	# ~650 ms apart: one record per device, not one of 668.9 ms
	run bash -c "trace-steps '$D/tf_gpu_8gpu_worker.ndjson' | jq -s -c '[.[] | select(.type == \"step\") | [.device, .ts_ns, .dur_ns, .devices, .step_source, .dur_ns == .compute_ns + .communication_ns + .memory_ns + .host_ns + .idle_ns]] | sort'"
	assert_output '[["GPU:4",1921061912,19865491,1,"marker",true],["GPU:6",2568617685,21310352,1,"marker",true]]'
	# the job step lasts as long as its slowest device
	run bash -c "trace-report --json '$D/tf_gpu_8gpu_worker.ndjson' | jq -c '.steps | [.count, .all.max_ns, .step_source]'"
	assert_output '[1,21310352,"marker"]'
}
