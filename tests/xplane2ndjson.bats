#!/usr/bin/env bats
# xplane2ndjson: XPlane profiles -> ndtrace stream.  Cross-checked against
# an independent decode (tests/tools/xplane_decode.py: Google's protobuf
# runtime on the module protoc generates from lib/ingest/xplane.proto).

load helpers

setup_file() {
	PYDIR="$BATS_FILE_TMPDIR/py"
	mkdir -p "$PYDIR"
	protoc --python_out="$PYDIR" -I"$BATS_TEST_DIRNAME/../lib/ingest" \
	    "$BATS_TEST_DIRNAME/../lib/ingest/xplane.proto"
	export PYDIR
	# The generated profiles the tests share.
	G="$BATS_FILE_TMPDIR/gen"
	mkdir -p "$G"
	"$ND_BIN/gen-xplane" --tiny -o "$G/tiny.xplane.pb"
	"$ND_BIN/gen-xplane" --seed 7 --events 4000 -o "$G/tpu.xplane.pb"
	"$ND_BIN/gen-xplane" --seed 7 --events 4000 --kind gpu \
	    -o "$G/gpu.xplane.pb"
	export G
}

setup() {
	T="$BATS_TEST_TMPDIR"
	DEC="$BATS_TEST_DIRNAME/tools/xplane_decode.py"
	TINY="$G/tiny.xplane.pb"
}

check() {
	"$ND_BIN/trace-check" "$@" || fail "trace-check failed on $*"
}

# agrees FILE: xplane2ndjson exits 0 on FILE with a valid stream whose end
# counts and every span and instant (type, process, thread, name, ts_ns,
# dur_ns, args) equal the independent python decode's, and whose meta's
# "devices" are the plane stats as tests/tools/xplane_devices.py reads them.
agrees() {
	xplane2ndjson "$1" > "$T/c.ndjson" || fail "$1: exit $?"
	check "$T/c.ndjson"
	# The independent decode tests logic, not memory safety, and python
	# takes as long in both passes: the sanitizer pass (ND_ASAN) converts
	# and checks only.
	[ -z "${ND_ASAN:-}" ] || return 0
	run "$PY" "$DEC" --pydir "$PYDIR" --compare "$T/c.ndjson" "$1"
	[ "$status" = 0 ] || fail "$1: $output"
	devices_agree "$1" "$T/c.ndjson"
	recs=$(jq -s -c '[(map(select(.type=="span"))|length),
	    (map(select(.type=="instant"))|length)]' "$T/c.ndjson")
	[ "$recs" = "$(tail -1 "$T/c.ndjson" | jq -c '[.spans,.instants]')" ] ||
	    fail "$1: records $recs differ from the end record"
}

# devices_agree FILE STREAM [REGEX]: the devices of STREAM's meta (keys
# sorted) are those the plane stats of FILE (planes matching REGEX) state.
devices_agree() {
	local want got

	want=$("$PY" "$BATS_TEST_DIRNAME/tools/xplane_devices.py" \
	    --pydir "$PYDIR" "$1" ${3:+"$3"} | jq -S -c .) ||
	    fail "$1: the python reading failed"
	got=$(head -1 "$2" | jq -S -c .devices)
	[ "$got" = "$want" ] || fail "$1: meta devices $got, plane stats $want"
}

# ---------- real profiles ----------

@test "every fixture: exit 0, a valid stream, counts and every event equal the python decode" {
	need_fixtures
	n=0
	for f in "$FIXTURES"/xplane/*.xplane.pb; do
		agrees "$f"
		n=$((n + 1))
	done
	[ "$n" -ge 5 ] || fail "only $n fixtures"
}

@test "fixture counts are those of the fixtures' README" {
	need_fixtures
	# file: timed events, of duration 0
	while read -r f timed zero; do
		xplane2ndjson "$FIXTURES/xplane/$f.xplane.pb" | tail -1 > "$T/e"
		run jq -c '[.spans + .instants, .instants]' "$T/e"
		assert_output "[$timed,$zero]"
	done <<-E
	rocm_jax08_gemm 3782 252
	rocm_jax_conv_8gpu 3650 455
	rocm_jax_te_fused_attn 1992 59
	tf_gpu_8gpu_worker 23128 2493
	tpu_inference_4core 26723 1117
	E
}

@test "TPU fixture: an all-reduce, its scope, big ids as strings; meta" {
	need_fixtures
	f="$FIXTURES/xplane/tpu_inference_4core.xplane.pb"
	xplane2ndjson "$f" > "$T/o"
	# origin: profile_start_time of "Task Environment" + the earliest
	# (relative) line timestamp, 0 (jq 1.6 rounds such integers: grep)
	run grep -o '"origin_ns":[0-9]*,"host":"[^"]*"' "$T/o"
	assert_output '"origin_ns":1741722099081044120,"host":"tpu_inference_4core"'
	run jq -c 'select(.name=="all-reduce" and .process=="/device:TPU:0")
	    | [.ts_ns,.dur_ns,.pid,.tid,.thread,.device,.cat,.class,.family,.scope,
	       .args.hlo_category,.args.program_id,.args.device_duration_ps]' "$T/o"
	assert_line --index 0 '[7495498089,121687640,2,3,"XLA Ops","TPU:0","xla_op","communication","all-reduce","_psum/main","all-reduce","9646411105960254074",121687640000]'
	# long_name is the HLO text
	run jq -r 'select(.name=="all-reduce") | .args.long_name' "$T/o"
	assert_line --index 0 --partial '%all-reduce = f32[5,1024,1024,256]'
	# /host:CPU shares id 0 with /host:metadata and Task Environment, which
	# have no lines: it keeps pid 0
	run jq -c 'select(.process=="/host:CPU") | .pid' "$T/o"
	assert_line --index 0 0
	run jq -c 'select(.type=="end") | .sha256' "$T/o"
	assert_output "\"$(sha256sum "$f" | cut -d' ' -f1)\""
	# the meta names each chip's model and peaks (plane stats)
	run jq -c '.devices | to_entries[] | [.key, .value.name, .value.peak_teraflops_per_second, .value.peak_hbm_bw_gigabytes_per_second]' <(head -1 "$T/o")
	assert_output "$(printf '["TPU:%s","TPU v6 Lite",918,1637.993152512]\n' 0 1 2 3)"
}

@test "device models: the report names 4 TPU v6 Lite; MFU and roofline use their peaks" {
	need_fixtures
	xplane2ndjson "$FIXTURES/xplane/tpu_inference_4core.xplane.pb" > "$T/t"
	trace-report --json "$T/t" > "$T/r.json"
	run jq -c '[.hardware.device_count, .hardware.models]' "$T/r.json"
	assert_output '[4,[{"model":"TPU v6 Lite","devices":4}]]'
	run bash -c "trace-report '$T/t' | grep '^Devices with device ops'"
	assert_output 'Devices with device ops: 4; model: TPU v6 Lite (4).'
	# per device: the model and 918 TFLOP/s (the table's TPU v6e row; the
	# trace states the same), MFU = TFLOP/s / 918
	trace-steps -d "$T/t" > "$T/s"
	run jq -s -c '[.[] | select(.type == "step")] | [length, (map(.device_name) | unique), (map(.peak_tflops) | unique), (map(select((.mfu - .tflops / 918) | fabs > 1e-12)) | length)]' "$T/s"
	assert_output '[400,["TPU v6 Lite"],[918],0]'
	# the roofline: the table row's 1640 GB/s before the stated 1637.99
	trace-roofline "$T/t" > "$T/f"
	run jq -s -c '[.[] | select(.type == "roofline") | [.device_name, .peak_tflops, .peak_gbps]] | unique' "$T/f"
	assert_output '[["TPU v6 Lite",918,1640]]'
	# a GPU plane states its vendor and compute capability, no product
	run bash -c "xplane2ndjson '$FIXTURES/xplane/rocm_jax08_gemm.xplane.pb' | head -1 | jq -c '.devices[\"GPU:0\"]'"
	assert_output '{"name":"AMD GPU (compute capability 9.4)"}'
}

@test "device models: stated peaks of an unknown model, refs, bad peaks, duplicate keys, --planes" {
	"$PY" - "$PYDIR" "$T/h.pb" <<-'E'
	import sys
	sys.path.insert(0, sys.argv[1])
	import xplane_pb2
	s = xplane_pb2.XSpace()
	NAMES = ["device_type_string", "peak_teraflops_per_second",
	         "peak_hbm_bw_gigabytes_per_second", "flops", "bytes_accessed",
	         "TPU v4", "device_vendor", "compute_cap_major",
	         "compute_cap_minor"]
	def plane(ident, name, stats, op=None):
	    p = s.planes.add(id=ident, name=name)
	    for i, n in enumerate(NAMES, 1):
	        p.stat_metadata[i].id = i
	        p.stat_metadata[i].name = n
	    for md, kind, v in stats:
	        setattr(p.stats.add(metadata_id=md), kind, v)
	    if op:
	        # 2e9 flops and 1e8 bytes in 1 ms: 2 TFLOP/s, 100 GB/s
	        p.event_metadata[1].id = 1
	        p.event_metadata[1].name = op
	        e = p.lines.add(id=1, name="XLA Ops", timestamp_ns=1000).events.add(
	            metadata_id=1, offset_ps=0, duration_ps=10**9)
	        e.stats.add(metadata_id=4, int64_value=2 * 10**9)
	        e.stats.add(metadata_id=5, int64_value=10**8)
	plane(1, "/device:TPU:0", [(1, "str_value", "Acme NPU"),
	      (2, "double_value", 100.0), (3, "uint64_value", 500)], "fusion")
	plane(2, "/device:TPU:1", [(1, "ref_value", 6),
	      (2, "double_value", float("nan")), (3, "int64_value", -5)])
	plane(3, "/device:TPU:0", [(1, "str_value", "Other")])
	plane(4, "/host:CPU", [(1, "str_value", "Host")])
	plane(5, "/device:CUSTOM:Megascale", [])
	plane(6, "/device:GPU:0", [(7, "str_value", "Nvidia"),
	      (8, "int64_value", 9), (9, "uint64_value", 0)], "gemm")
	open(sys.argv[2], "wb").write(s.SerializeToString())
	E
	agrees "$T/h.pb"
	run jq -c .devices <(head -1 "$T/c.ndjson")
	assert_output '{"TPU:0":{"name":"Acme NPU","peak_teraflops_per_second":100,"peak_hbm_bw_gigabytes_per_second":500},"TPU:1":{"name":"TPU v4"},"GPU:0":{"name":"Nvidia GPU (compute capability 9.0)"}}'
	# (2e9 flops, 1e8 bytes in 1 ms) the unknown model: the peaks the trace
	# states, ridge 200 FLOP/byte, memory-bound at 20; the GPU named only
	# by vendor and compute capability: no peak, no roofline
	run bash -c "trace-roofline -b name '$T/c.ndjson' | jq -c 'select(.type == \"roofline\") | [.name, .device_name, .tflops, .gbps, .peak_tflops, .peak_gbps, .bound]'"
	assert_output "$(printf '%s\n' \
	    '["gemm","Nvidia GPU (compute capability 9.0)",2,100,null,null,null]' \
	    '["fusion","Acme NPU",2,100,100,500,"memory"]')"
	trace-report --json "$T/c.ndjson" > "$T/r.json"
	run jq -c '.hardware.models' "$T/r.json"
	assert_output '[{"model":"Acme NPU","devices":1},{"model":"Nvidia GPU (compute capability 9.0)","devices":1}]'
	# --planes: the selected planes only
	xplane2ndjson --planes 'TPU:1|GPU' "$T/h.pb" > "$T/p"
	devices_agree "$T/h.pb" "$T/p" 'TPU:1|GPU'
	run jq -c '.devices | keys' <(head -1 "$T/p")
	assert_output '["GPU:0","TPU:1"]'
}

@test "device models: the meta record stays a line readers take (32 MiB)" {
	# 8 planes whose model is 1 MiB of U+0001, 6 MiB each as JSON: six fit
	"$PY" - "$PYDIR" "$T/b.pb" <<-'E'
	import sys
	sys.path.insert(0, sys.argv[1])
	import xplane_pb2
	s = xplane_pb2.XSpace()
	for i in range(8):
	    p = s.planes.add(id=i, name="/device:TPU:%d" % i)
	    p.stat_metadata[1].id = 1
	    p.stat_metadata[1].name = "device_type_string"
	    p.stats.add(metadata_id=1, str_value="\x01" * (1 << 20))
	open(sys.argv[2], "wb").write(s.SerializeToString())
	E
	xplane2ndjson "$T/b.pb" > "$T/b"
	check "$T/b"
	run bash -c "head -1 '$T/b' | jq -c '[(.devices | keys), (.devices[\"TPU:5\"].name | length)]'"
	assert_output '[["TPU:0","TPU:1","TPU:2","TPU:3","TPU:4","TPU:5"],1048576]'
	run jq -c '.warnings[0]' <(tail -1 "$T/b")
	assert_output '"2 device models were left out of the meta record (over 32 MiB with them)"'
}

@test "GPU fixtures: kernels, scope from the name stat, refs resolved, pids unique" {
	need_fixtures
	f="$FIXTURES/xplane/rocm_jax_te_fused_attn.xplane.pb"
	xplane2ndjson "$f" > "$T/o"
	run grep -o '"origin_ns":[0-9]*,"host":"[^"]*"' "$T/o"
	assert_output '"origin_ns":1779266702890170000,"host":"934987a2fc2f"'
	run jq -c 'select(.name=="wrapped_convert.kd") | [.ts_ns,.dur_ns,.pid,.device,.cat,.class,.scope,.args.tf_op,.args.kernel_details,.args.correlation_id]' "$T/o"
	assert_line --index 0 '[9716168581,2960,0,"GPU:0","kernel","compute","loss_fn","XlaModule:"," grid:1,1,1 block:2,1,1 private_mem:0 group_mem:0 occ_pct:0",2]'
	# /device:GPU:0 and /host:CPU both have id 0: the host gets 8, above
	# every plane id (GPU:0..7)
	run jq -c -s '[.[] | select(.type=="span") | [.process,.pid]] | unique' "$T/o"
	assert_output '[["/device:GPU:0",0],["/host:CPU",8]]'
	# instants have no dur_ns
	run jq -c -s '[.[] | select(.type=="instant") | has("dur_ns")] | unique' "$T/o"
	assert_output '[false]'
}

@test "TensorFlow GPU fixture: steps, framework op scopes, memcpy, relative times" {
	need_fixtures
	f="$FIXTURES/xplane/tf_gpu_8gpu_worker.xplane.pb"
	xplane2ndjson "$f" > "$T/o"
	run jq -c 'select(.thread=="TensorFlow Ops") | [.name,.step,.cat,.scope]' "$T/o"
	assert_line --index 0 '["RandomUniform",0,"framework_op","replica_4/bert_span_labeler/bert_encoder_1/transformer/layer_5/dropout_1/dropout/random_uniform"]'
	run jq -c -s '[.[] | select(.name=="MemcpyH2D" and .device=="GPU:4") | [.cat,.class]] | unique' "$T/o"
	assert_output '[["gpu_memcpy","memory"]]'
	run jq -c 'select(.thread=="Steps") | [.name,.step,.dur_ns,.args.step_name]' "$T/o"
	assert_line --index 0 '["0",0,19865491,"0"]'
	# no profile_start_time: the origin is relative, and the end says so
	run jq -r 'select(.type=="end") | .warnings[0]' "$T/o"
	assert_output --partial "no profile_start_time"
	run jq -c 'select(.type=="meta") | .origin_ns' "$T/o"
	assert_output 237916
}

@test "the corrupted fixture is refused: exit 2, one line, the offset, the cause" {
	need_fixtures
	run xplane2ndjson "$FIXTURES/bad/tpu_inference_utf8_mangled.xplane.pb"
	assert_failure 2
	assert_equal "${#lines[@]}" 1
	assert_output --regexp '^xplane2ndjson: .*tpu_inference_utf8_mangled\.xplane\.pb: byte 1: length [0-9]+ of field 1 runs past the end of the enclosing message \(1365932 bytes left\) \(the file looks re-encoded as UTF-8 text: its binary bytes were replaced by U\+FFFD\)$'
}

# ---------- generated profiles ----------

@test "tiny profile: exactly the expected stream" {
	cp "$TINY" "$T/t.xplane.pb"
	cd "$T"
	xplane2ndjson t.xplane.pb > out.ndjson
	check out.ndjson
	# class and family come from the rule table (tested in classify.bats)
	sed -E 's/,"class":"[^"]*","family":"[^"]*"//' out.ndjson > got
	sha=$(sha256sum t.xplane.pb | cut -d' ' -f1)
	cat > want <<-E
	{"type":"meta","schema":"ndtrace/1","source":"t.xplane.pb","format":"xplane","origin_ns":999,"host":"tinyhost","rank":null,"producer":"xplane2ndjson 0.1.0"}
	{"type":"span","ts_ns":1,"dur_ns":5000,"name":"1","pid":7,"tid":1,"process":"/device:TPU:0","thread":"Steps","device":"TPU:0","step":1,"cat":"step","args":{"step_num":1}}
	{"type":"span","ts_ns":1001,"dur_ns":3000,"name":"all-reduce.1","pid":7,"tid":3,"process":"/device:TPU:0","thread":"XLA Ops","device":"TPU:0","cat":"xla_op","args":{"long_name":"%all-reduce.1 = f32[1024]{0} all-reduce(f32[1024]{0} %g), replica_groups={{0,1}}, to_apply=%add","bytes_accessed":4096,"big":"18446744073709551615","neg":"-9007199254740993"}}
	{"type":"span","ts_ns":1001,"dur_ns":2000,"name":"fusion.12","pid":7,"tid":3,"process":"/device:TPU:0","thread":"XLA Ops","device":"TPU:0","step":1,"cat":"xla_op","scope":"train_step/main/transformer/block_3/attention","args":{"long_name":"%fusion.12 = f32[8]{0} fusion(f32[8]{0} %p), kind=kLoop","tf_op":"jit(train_step)/jit(main)/transformer/block_3/attention/dot_general","fusion_kind":"kLoop","group_id":1,"flops":2048,"blob":"AAH+","ratio":null}}
	{"type":"span","ts_ns":3001,"dur_ns":1,"name":"copy.3","pid":7,"tid":3,"process":"/device:TPU:0","thread":"XLA Ops","device":"TPU:0","cat":"xla_op","args":{"ratio":0.5}}
	{"type":"instant","ts_ns":4001,"name":"marker","pid":7,"tid":3,"process":"/device:TPU:0","thread":"XLA Ops","device":"TPU:0","cat":"xla_op"}
	{"type":"span","ts_ns":1,"dur_ns":4000,"name":"jit_train_step(42)","pid":7,"tid":2,"process":"/device:TPU:0","thread":"XLA Modules","device":"TPU:0","cat":"xla_module"}
	{"type":"span","ts_ns":1,"dur_ns":10,"name":"\$train.py:10 step","pid":8,"tid":1,"process":"/host:CPU","thread":"main","device":"CPU","step":1,"cat":"python_function","args":{"note":"a\\"b\\nc!","group_id":1}}
	{"type":"end","events":8,"spans":6,"instants":1,"counters":0,"flows":0,"skipped":{"num_occurrences":1,"negative_duration":0,"time_out_of_range":0},"planes":3,"lines":4,"sha256":"$sha","suspected_truncation":false,"warnings":["error: tiny error","tiny warning","line timestamps are relative and the file has no profile_start_time: origin_ns is not a time since the epoch"]}
	E
	run diff want got
	assert_success
	# every span and instant has a class and a family
	run jq -c -s '[.[] | select(.type=="span" or .type=="instant") | (.class != null and .family != null)] | unique' out.ndjson
	assert_output '[true]'
}

@test "tiny profile: the independent decode agrees" {
	agrees "$TINY"
}

@test "generated TPU and GPU profiles: valid, and equal to the python decode" {
	for f in "$G/tpu.xplane.pb" "$G/gpu.xplane.pb"; do
		agrees "$f"
	done
	# the GPU kind has relative times and a profile_start_time
	run grep -o '"origin_ns":[0-9]*' "$T/c.ndjson"
	assert_output '"origin_ns":1771595650000019345'
	run jq -c 'select(.type=="end") | .warnings' "$T/c.ndjson"
	assert_output '[]'
}

@test "generated profiles: nesting, gaps, collectives, scopes, aggregates" {
	xplane2ndjson "$G/tpu.xplane.pb" > "$T/o"
	# while loops nest ops: parent first, children inside it
	run jq -c -s 'map(select(.type=="span" and .name=="while.7" and .process=="/device:TPU:0"))[0] | [.ts_ns, .dur_ns > 0]' "$T/o"
	assert_output --regexp '^\[[0-9]+,true\]$'
	ts=$(jq -s 'map(select(.type=="span" and .name=="while.7" and .process=="/device:TPU:0"))[0].ts_ns' "$T/o")
	run jq -c -s --argjson ts "$ts" 'map(select(.type=="span" and .process=="/device:TPU:0" and .thread=="XLA Ops" and .ts_ns==$ts)) | map(.name) | .[0]' "$T/o"
	assert_output '"while.7"'
	run jq -r -s 'map(select(.type=="span" and .class=="communication") | .family) | unique | join(",")' "$T/o"
	assert_output "all-gather,all-reduce,collective-permute,reduce-scatter"
	run jq -r -s 'map(select(.type=="span" and .scope != null) | .scope | split("/")[0:2] | join("/")) | unique | .[0]' "$T/o"
	assert_output "train_step/main"
	run jq -c 'select(.type=="end") | [.skipped.num_occurrences > 0, .instants > 0]' "$T/o"
	assert_output '[true,true]'
	# steps: one per step on each device, with the step number
	run jq -c -s 'map(select(.thread=="Steps" and .process=="/device:TPU:1")) | [length > 3, (map(.step) == [range(length)])]' "$T/o"
	assert_output '[true,true]'
}

@test "renderer threads: the same bytes with 1, 2 and 4 of them" {
	"$ND_BIN/gen-xplane" --seed 3 --events 40000 -o "$T/big.pb"
	for f in "$T/big.pb" "$G/gpu.xplane.pb" "$TINY"; do
		XPLANE2NDJSON_THREADS=1 xplane2ndjson "$f" > "$T/1"
		for n in 2 4; do
			XPLANE2NDJSON_THREADS=$n xplane2ndjson "$f" > "$T/$n"
			cmp "$T/1" "$T/$n" || fail "$f: $n threads differ from 1"
		done
	done
	check "$T/4"
	run env XPLANE2NDJSON_THREADS=0 xplane2ndjson "$TINY"
	assert_failure 2
	assert_output "xplane2ndjson: invalid value for XPLANE2NDJSON_THREADS: '0'"
}

@test "gen-xplane is reproducible: same seed, same bytes; another seed, others" {
	"$ND_BIN/gen-xplane" --seed 7 --events 4000 -o "$T/a.pb"
	cmp "$T/a.pb" "$G/tpu.xplane.pb"
	"$ND_BIN/gen-xplane" --seed 7 --events 4000 > "$T/b.pb"
	cmp "$T/b.pb" "$G/tpu.xplane.pb"
	"$ND_BIN/gen-xplane" --seed 8 --events 4000 -o "$T/c.pb"
	run cmp -s "$T/c.pb" "$G/tpu.xplane.pb"
	assert_failure
}

@test "an out-of-order line is sorted: by ts_ns, longer first, instants after spans" {
	xplane2ndjson "$TINY" | jq -c 'select(.thread=="XLA Ops") | [.ts_ns, .dur_ns, .type]' > "$T/o"
	run cat "$T/o"
	assert_output - <<-E
	[1001,3000,"span"]
	[1001,2000,"span"]
	[3001,1,"span"]
	[4001,null,"instant"]
	E
}

@test "strings: invalid UTF-8 becomes U+FFFD, escapes are JSON's" {
	# the tiny profile's "a\"b\nc!" with the ! made an invalid byte
	perl -pe 's/c!/c\xff/' "$TINY" > "$T/u.pb"
	xplane2ndjson "$T/u.pb" > "$T/o"
	check "$T/o"
	run jq -r 'select(.process=="/host:CPU") | .args.note' "$T/o"
	assert_output "$(printf 'a"b\nc\xef\xbf\xbd')"
}

# ---------- options ----------

@test "--planes, --lines, --device-only, --no-args" {
	xplane2ndjson --planes 'TPU:[01]$' --lines '^XLA Ops$' "$G/tpu.xplane.pb" > "$T/o"
	check "$T/o"
	run jq -r -s 'map(select(.type=="span") | "\(.process) \(.thread)") | unique | join(";")' "$T/o"
	assert_output "/device:TPU:0 XLA Ops;/device:TPU:1 XLA Ops"
	run jq -c 'select(.type=="end") | [.planes, .lines, .filtered]' "$T/o"
	assert_output '[2,2,{"planes":3,"lines":12}]'
	xplane2ndjson --device-only "$G/tpu.xplane.pb" > "$T/d"
	run jq -r -s 'map(select(.type=="span") | .process) | unique | join(" ")' "$T/d"
	assert_output "/device:TPU:0 /device:TPU:1 /device:TPU:2 /device:TPU:3"
	# --lines matches the display name too
	run bash -c "xplane2ndjson --lines '^main$' '$TINY' | jq -r 'select(.type==\"span\") | .name'"
	assert_output '$train.py:10 step'
	xplane2ndjson --no-args "$TINY" > "$T/n"
	check "$T/n"
	run jq -c -s 'map(select(.type=="span") | has("args")) | unique' "$T/n"
	assert_output '[false]'
	run jq -c 'select(.name=="fusion.12") | [.step, .scope]' "$T/n"
	assert_output '[1,"train_step/main/transformer/block_3/attention"]'
	# the origin does not depend on the filters
	run grep -o '"origin_ns":[0-9]*' "$T/o"
	assert_output "$(xplane2ndjson "$G/tpu.xplane.pb" | head -1 | grep -o '"origin_ns":[0-9]*')"
}

@test "--rules FILE classifies with a user's table; --print-rules prints it" {
	printf 'stall\tmine\t^fusion\t*\t*\t*\t*\n' > "$T/r.tsv"
	xplane2ndjson --rules "$T/r.tsv" "$TINY" > "$T/o"
	run jq -c 'select(.name=="fusion.12") | [.class, .family]' "$T/o"
	assert_output '["stall","mine"]'
	run jq -c 'select(.name=="copy.3") | [.class, .family]' "$T/o"
	assert_output '["other","other"]'
	run xplane2ndjson --rules "$T/r.tsv" --print-rules
	assert_success
	assert_output --partial "$(printf 'stall\tmine\t^fusion')"
	run xplane2ndjson --print-rules
	assert_success
	assert_output --partial "all-reduce"
}

@test "-o writes the file atomically; an error leaves none" {
	xplane2ndjson -o "$T/o.ndjson" "$TINY"
	check "$T/o.ndjson"
	run wc -l < "$T/o.ndjson"
	assert_output 9
	"$ND_BIN/gen-xplane" --broken evmd -o "$T/bad.pb"
	run xplane2ndjson -o "$T/x.ndjson" "$TINY" "$T/bad.pb"
	assert_failure 2
	[ ! -e "$T/x.ndjson" ] || fail "a partial output was left"
	run ls "$T"
	refute_output --partial ".tmp."
}

@test "stdin, gzip, several files: one source each" {
	gzip -c "$TINY" > "$T/t.xplane.pb.gz"
	run bash -c "xplane2ndjson < '$TINY' | head -1 | jq -r .source"
	[ "$output" = "-" ] || fail "source '$output'"
	xplane2ndjson "$T/t.xplane.pb.gz" > "$T/z"
	run jq -r 'select(.type=="meta") | .host' "$T/z"
	assert_output "tinyhost"
	run jq -r 'select(.type=="end") | .sha256' "$T/z"
	assert_output "$(sha256sum "$T/t.xplane.pb.gz" | cut -d' ' -f1)"
	xplane2ndjson - "$TINY" < "$T/t.xplane.pb.gz" > "$T/two"
	check "$T/two"
	run jq -c -s 'map(select(.type=="meta" or .type=="end") | .type)' "$T/two"
	assert_output '["meta","end","meta","end"]'
	run "$ND_BIN/trace-check" -v "$T/two"
	assert_output --partial "2 sources"
}

@test "directories: a log dir reads its newest run; --run, --list, run dirs" {
	P="$T/logs/plugins/profile"
	mkdir -p "$P/2024_01_01_10_00_00" "$P/2024_02_01_10_00_00" "$P/empty"
	cp "$TINY" "$P/2024_01_01_10_00_00/old.xplane.pb"
	cp "$TINY" "$P/2024_02_01_10_00_00/hostb.xplane.pb"
	cp "$TINY" "$P/2024_02_01_10_00_00/hosta.xplane.pb"
	echo junk > "$P/2024_02_01_10_00_00/notes.txt"
	run xplane2ndjson --list "$T/logs"
	assert_success
	assert_output - <<-E
	$P/2024_02_01_10_00_00/hosta.xplane.pb
	$P/2024_02_01_10_00_00/hostb.xplane.pb
	E
	run xplane2ndjson --list "$T/logs/plugins/profile"
	assert_line --index 0 "$P/2024_02_01_10_00_00/hosta.xplane.pb"
	run xplane2ndjson --list --run 2024_01_01_10_00_00 "$T/logs"
	assert_output "$P/2024_01_01_10_00_00/old.xplane.pb"
	run xplane2ndjson --list "$P/2024_01_01_10_00_00"
	assert_output "$P/2024_01_01_10_00_00/old.xplane.pb"
	run xplane2ndjson --run nope "$T/logs"
	assert_failure 2
	assert_output "xplane2ndjson: $P: no run 'nope' (runs: 2024_01_01_10_00_00, 2024_02_01_10_00_00)"
	mkdir "$T/nothing"
	run xplane2ndjson "$T/nothing"
	assert_failure 2
	assert_output "xplane2ndjson: $T/nothing: no *.xplane.pb files in it, nor in runs under it or under its plugins/profile"
	run xplane2ndjson --run x "$TINY"
	assert_failure 2
	# two hosts, two sources
	xplane2ndjson "$T/logs" > "$T/o"
	check "$T/o"
	run jq -r 'select(.type=="meta") | .source' "$T/o"
	assert_output - <<-E
	$P/2024_02_01_10_00_00/hosta.xplane.pb
	$P/2024_02_01_10_00_00/hostb.xplane.pb
	E
}

# ---------- bad input ----------

@test "bad input: one line with the byte offset, exit 2" {
	: > "$T/empty.pb"
	printf '{"traceEvents":[]}\n' > "$T/t.json"
	gzip -c "$T/t.json" > "$T/t.json.gz"
	printf '[{"ph":"X"}]' > "$T/a.json"
	for k in varint length evmd statmd ref wiretype; do
		"$ND_BIN/gen-xplane" --broken $k -o "$T/$k.pb"
	done
	cd "$T"
	while IFS='|' read -r f msg; do
		run xplane2ndjson "$f"
		assert_failure 2
		assert_output "xplane2ndjson: $f: $msg"
	done <<-E
	empty.pb|byte 0: empty file (no XSpace in it)
	t.json|byte 0: this is JSON text (a Chrome or Perfetto trace?), not an XPlane protobuf: use chrome2ndjson
	t.json.gz|byte 0: this is JSON text (a Chrome or Perfetto trace?), not an XPlane protobuf: use chrome2ndjson
	a.json|byte 0: this is JSON text (a Chrome or Perfetto trace?), not an XPlane protobuf: use chrome2ndjson
	varint.pb|byte 1: varint longer than 10 bytes
	length.pb|byte 1: length 2012 of field 1 runs past the end of the enclosing message (1009 bytes left)
	evmd.pb|byte 79: event metadata id 99 is not defined in plane '/device:TPU:0'
	statmd.pb|byte 104: stat metadata id 99 is not defined in plane '/device:TPU:0'
	ref.pb|byte 347: stat ref_value 99 is not a stat metadata id of plane '/device:TPU:0'
	wiretype.pb|byte 1018: XLine.events (field 4) has wire type varint, expected length-delimited
	E
	# nothing is written before the error is found
	run bash -c "xplane2ndjson evmd.pb 2>/dev/null | wc -c"
	assert_output 0
	run xplane2ndjson no-such.pb
	assert_failure 2
	assert_output "xplane2ndjson: no-such.pb: No such file or directory"
}

@test "unknown fields of every wire type, at every level, are skipped" {
	"$PY" - "$PYDIR" "$TINY" "$T/u.pb" <<-'E'
	import sys
	sys.path.insert(0, sys.argv[1])
	import xplane_pb2
	s = xplane_pb2.XSpace()
	s.ParseFromString(open(sys.argv[2], "rb").read())
	# fields 20 varint, 21 fixed64, 22 fixed32, 23 bytes, 24 a group that
	# holds a varint and a nested group 25 (two-byte tags)
	U = (b"\xa0\x01\x07" + b"\xa9\x01" + bytes(8) + b"\xb5\x01" + bytes(4) +
	     b"\xba\x01\x02hi" +
	     b"\xc3\x01\x08\x01\xcb\x01\x08\x02\xcc\x01\xc4\x01")
	p = s.planes[0]
	for m in (s, p, p.lines[1], p.lines[1].events[1],
	          p.lines[1].events[1].stats[0], p.event_metadata[1],
	          p.stat_metadata[1]):
	    m.MergeFromString(U)
	open(sys.argv[3], "wb").write(s.SerializeToString())
	E
	strip() { sed -E 's/"(sha256|source)":"[^"]*"//' "$@"; }
	xplane2ndjson "$TINY" | strip > "$T/a"
	xplane2ndjson "$T/u.pb" | strip > "$T/b"
	run diff "$T/a" "$T/b"
	assert_success
	agrees "$T/u.pb"
}

@test "wire format errors: wire types 6 and 7, field 0, groups" {
	cd "$T"
	while IFS='|' read -r bytes msg; do
		printf "$bytes" > w.pb
		run xplane2ndjson w.pb
		assert_failure 2
		assert_output "xplane2ndjson: w.pb: $msg"
	done <<-'E'
	\x4e|byte 0: invalid wire type 6 (field 9)
	\x0a\x02\x0f\x00|byte 2: invalid wire type 7 (field 1)
	\x00\x01|byte 0: invalid field number 0 (wire type 0)
	\xcc\x01|byte 0: end-group tag (field 25) without a start-group
	\xc3\x01\x08\x01|byte 0: group (field 24) not closed before the end of the enclosing message
	\xc3\x01\xcc\x01|byte 2: end-group tag of field 25 does not match the open group (field 24)
	\x0a\x03\x08\xff\xff\x48\x00|byte 3: truncated varint (the enclosing message ends after 2 bytes of it)
	\x0a\x03\x08\xff\xff|byte 3: truncated varint (the input ends after 2 bytes of it)
	\x0a\x05\x09\x00\x00\x00\x00|byte 2: fixed64 field 1 runs past the end of the enclosing message (4 bytes left)
	E
	"$PY" -c 'import sys; sys.stdout.buffer.write(b"\xc3\x01" * 70)' > deep.pb
	run xplane2ndjson deep.pb
	assert_failure 2
	assert_output "xplane2ndjson: deep.pb: byte 128: groups nested deeper than 64"
}

# truncated FILE STEP: every STEP-th prefix is refused with one line and an
# offset -- or, cut between two fields of the outer message, is a valid
# shorter profile, which protoc must agree with.
truncated() {
	local f=$1 step=$2 n i rc err
	n=$(stat -c %s "$f")
	for ((i = 1; i < n; i += step)); do
		head -c $i "$f" > "$T/cut.pb"
		rc=0
		xplane2ndjson "$T/cut.pb" > /dev/null 2> "$T/err" || rc=$?
		err=$(< "$T/err")
		if [ $rc = 2 ]; then
			[[ $err != *$'\n'* && $err == "xplane2ndjson: $T/cut.pb: byte "[0-9]*": "* ]] ||
			    fail "cut at $i: $err"
		elif [ $rc = 0 ]; then
			protoc --decode_raw < "$T/cut.pb" > /dev/null 2>&1 ||
			    fail "cut at $i: accepted, but protoc refuses it"
		else
			fail "cut at $i: exit $rc: $err"
		fi
	done
}

@test "truncated at many offsets: refused with the offset, never a crash" {
	# every 13th (sanitizer build: 37th) prefix of the tiny profile, which
	# cuts every kind of field somewhere
	truncated "$TINY" $([ -n "${ND_ASAN:-}" ] && echo 37 || echo 13)
}

@test "a large profile truncated at many offsets" {
	truncated "$G/gpu.xplane.pb" $(( $(stat -c %s "$G/gpu.xplane.pb") / 12 + 1 ))
}

@test "bit flips in the middle of events: exit 0 or 2, never a crash" {
	f="$G/tpu.xplane.pb"
	n=$(stat -c %s "$f")
	for i in 1 2 3 4 5 6; do
		off=$(( (n / 7) * i + i * 7 ))
		cp "$f" "$T/flip.pb"
		printf '\xff\xff\xff' | dd of="$T/flip.pb" bs=1 seek=$off conv=notrunc status=none
		rc=0
		xplane2ndjson "$T/flip.pb" > /dev/null 2> "$T/err" || rc=$?
		[ $rc = 0 ] || [ $rc = 2 ] || fail "flip at $off: exit $rc"
		[ $rc = 0 ] || grep -q "byte [0-9]*: " "$T/err" || fail "flip at $off: $(cat "$T/err")"
	done
}
