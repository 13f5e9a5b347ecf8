#!/usr/bin/env bats
# trace-roofline: achieved TFLOP/s, GB/s, intensity, bound and % of roofline
# per op.  Expected figures are worked out by hand in the comments and
# cross-checked with tests/tools/roofline_ref.py (the man page's
# definitions in python) and jq.

load helpers

setup() {
	T="$BATS_TEST_TMPDIR"
	REF="$BATS_TEST_DIRNAME/tools/roofline_ref.py"
}

# meta [EXTRA-JSON]
meta() {
	printf '{"type":"meta","schema":"ndtrace/1","source":"r.json","format":"chrome","origin_ns":0,"host":null,"rank":0,"producer":"hand 1"%s}\n' "${1:-}"
}

# dspan TS DUR NAME ARGS [DEVICE] : a device op
dspan() {
	printf '{"type":"span","ts_ns":%s,"dur_ns":%s,"name":"%s","pid":1,"tid":1,"process":"/device:GPU:0","thread":"stream 7","device":"%s","family":"%s","args":%s}\n' \
	    "$1" "$2" "$3" "${5:-GPU:0}" "${3%%_*}" "$4"
}

# On an A100 (80GB: 312 TFLOP/s, 2039 GB/s; ridge 312000/2039 = 153.016
# FLOP/B):
#   gemm  2 spans, 1 ms + 3 ms, 2e11 + 6e11 flops, 1e8 + 3e8 bytes:
#         8e11 / 4e6 ns / 1000 = 200 TFLOP/s, 4e8 / 4e6 = 100 GB/s,
#         intensity 2000 >= ridge: compute; attainable 312;
#         200 / 312 = 64.1026 % of roofline
#   add   1 ms, 1e9 flops, 1.2e9 bytes: 1 TFLOP/s, 1200 GB/s,
#         intensity 0.8333: memory; attainable 0.8333 * 2.039 = 1.6992;
#         1200 / 2039 = 58.852 %
#   copy  0.5 ms, 0 flops, 5e8 bytes: 0 TFLOP/s, 1000 GB/s, intensity 0:
#         memory; attainable 0; 1000 / 2039 = 49.043 %
#   part  two 1 ms spans, 1e9 flops each, bytes on one only: 1 TFLOP/s,
#         no bytes, no roofline
#   wait  2 ms without flops: counted, no row
#   cpu   a host span with flops: not counted (device ops have flops)
A100_META=',"devices":{"GPU:0":"NVIDIA A100-SXM4-80GB"}'
stream() {
	meta "${1:-$A100_META}"
	dspan 0 1000000 gemm_a '{"flops":200000000000,"bytes_accessed":100000000}'
	dspan 1000000 1000000 add '{"flops":1000000000,"bytes_accessed":1200000000}'
	dspan 2000000 3000000 gemm_a '{"flops":600000000000,"bytes_accessed":300000000}'
	dspan 5000000 500000 copy '{"flops":0,"bytes_accessed":500000000}'
	dspan 5500000 2000000 wait '{"x":1}'
	dspan 7500000 1000000 part '{"model_flops":1000000000,"bytes_accessed":1}'
	dspan 8500000 1000000 part '{"flops":1000000000}'
	printf '{"type":"span","ts_ns":0,"dur_ns":5000,"name":"aten::mm","pid":9,"tid":9,"process":"python","cat":"cpu_op","args":{"flops":99}}\n'
}

@test "exact figures on an A100 from the stream's device name" {
	stream > "$T/s.ndjson"
	run trace-roofline "$T/s.ndjson"
	assert_success
	trace-roofline "$T/s.ndjson" > "$T/out"
	run jq -r 'select(.type=="roofline") | [.row, .name, .count, .flops_ns, .tflops, .gbps // "-", .intensity // "-", .bound // "-", .attainable_tflops // "-", ((.pct_of_roofline // -1) * 1e4 | round / 1e4), .device_name, .peak_tflops, .peak_gbps] | @tsv' "$T/out"
	assert_output "$(printf '%s\n' \
	    '1	gemm_a	2	4000000	200	100	2000	compute	312	64.1026	NVIDIA A100-SXM4-80GB	312	2039' \
	    '2	part	2	2000000	1	-	-	-	-	-1	NVIDIA A100-SXM4-80GB	312	2039' \
	    '3	add	1	1000000	1	1200	0.8333333333333334	memory	1.6991666666666667	58.8524	NVIDIA A100-SXM4-80GB	312	2039' \
	    '4	copy	1	500000	0	1000	0	memory	0	49.0436	NVIDIA A100-SXM4-80GB	312	2039')"
	# ridge and % of peak
	run jq -r 'select(.name=="gemm_a") | [.ridge, .pct_of_peak] | @tsv' "$T/out"
	assert_output "$("$PY" -c 'print(312000/2039, 200/312*100, sep="\t")')"
	# the summary: 7 device spans, 2 ms of them without flops
	run jq -c 'select(.type=="roofline_summary")' "$T/out"
	assert_output '{"type":"roofline_summary","timelines":"device","sources":1,"spans":7,"total_ns":9500000,"flops_spans":6,"flops_ns":7500000,"no_flops_spans":1,"no_flops_ns":2000000,"flops":803000000000,"bytes":2100000001,"rows":4,"shown":4}'
	# the python reference, from the definitions
	"$PY" "$REF" 312 2039 < "$T/s.ndjson" > "$T/ref"
	run "$PY" "$REF" check "$T/ref" < "$T/out"
	assert_output "ok 4"
}

@test "--peak-tflops and --peak-gbps override the table; --device picks a row" {
	stream > "$T/s.ndjson"
	# 250 TFLOP/s, 1000 GB/s: ridge 250; add is memory-bound at 1200 GB/s
	# = 120 % of the given bandwidth
	run bash -c "trace-roofline --peak-tflops 250 --peak-gbps 1000 '$T/s.ndjson' | jq -r 'select(.name==\"add\") | [.peak_tflops, .peak_gbps, .ridge, .bound, .pct_of_roofline] | @tsv'"
	assert_output "$(printf '250\t1000\t250\tmemory\t120')"
	"$PY" "$REF" 250 1000 < "$T/s.ndjson" > "$T/ref"
	trace-roofline --peak-tflops 250 --peak-gbps 1000 "$T/s.ndjson" > "$T/out"
	run "$PY" "$REF" check "$T/ref" < "$T/out"
	assert_output "ok 4"
	# only one figure overridden: the other from the table row (A100)
	run bash -c "trace-roofline --peak-gbps 1000 '$T/s.ndjson' | jq -r 'select(.name==\"gemm_a\") | [.peak_tflops, .peak_gbps] | @tsv'"
	assert_output "$(printf '312\t1000')"
	# --device overrides the stream's name: H100 = 989 TFLOP/s, 3350 GB/s
	run bash -c "trace-roofline --device H100 '$T/s.ndjson' | jq -r 'select(.name==\"gemm_a\") | [.device_name, .peak_tflops, .peak_gbps, .bound, .pct_of_roofline] | @tsv'"
	assert_output "$(printf 'H100\t989\t3350\tcompute\t%s' "$("$PY" -c 'print(200/989*100)')")"
	"$PY" "$REF" 989 3350 < "$T/s.ndjson" > "$T/ref"
	trace-roofline --device H100 "$T/s.ndjson" > "$T/out"
	run "$PY" "$REF" check "$T/ref" < "$T/out"
	assert_output "ok 4"
	# a name unknown to the table is fine with both peaks
	run bash -c "trace-roofline --device 'My NPU' --peak-tflops 100 --peak-gbps 100 '$T/s.ndjson' | jq -r 'select(.name==\"gemm_a\") | [.device_name, .ridge] | @tsv'"
	assert_output "$(printf 'My NPU\t1000')"
}

@test "built-in table by the device names traces carry" {
	# name -> expected "tflops gbps"
	check() {
		stream "$1" > "$T/s.ndjson"
		run bash -c "trace-roofline '$T/s.ndjson' | jq -r 'select(.name==\"gemm_a\") | [.device_name, .peak_tflops, .peak_gbps] | @tsv'"
		assert_output "$2"
	}
	check ',"header":{"deviceProperties":[{"id":0,"name":"NVIDIA H100 80GB HBM3"}]}' "$(printf 'NVIDIA H100 80GB HBM3\t989\t3350')"
	check ',"device_name":"NVIDIA A100-SXM4-40GB"' "$(printf 'NVIDIA A100-SXM4-40GB\t312\t1555')"
	check ',"devices":{"GPU:0":{"device_type_string":"TPU v5 lite"}}' "$(printf 'TPU v5 lite\t197\t819')"
	check ',"devices":{"GPU:0":"AMD Instinct MI300X"}' "$(printf 'AMD Instinct MI300X\t1307.4\t5300')"
	check ',"devices":{"GPU:0":"NVIDIA H100 PCIe"}' "$(printf 'NVIDIA H100 PCIe\t756\t2000')"
	check ',"devices":{"GPU:0":"NVIDIA GH200 480GB"}' "$(printf 'NVIDIA GH200 480GB\t989\t4000')"
	# peaks the stream states, for a device the table does not know
	check ',"devices":{"GPU:0":{"name":"Acme X1","peak_teraflops_per_second":100,"peak_hbm_bw_gigabytes_per_second":500}}' "$(printf 'Acme X1\t100\t500')"
	# an unknown name without stated peaks: achieved figures, no roofline
	stream ',"device_name":"Acme X1"' > "$T/s.ndjson"
	run bash -c "trace-roofline '$T/s.ndjson' | jq -c 'select(.name==\"gemm_a\") | [.device_name, .tflops, .gbps, .peak_tflops, .bound]'"
	assert_output '["Acme X1",200,100,null,null]'
	# no name at all
	stream ',"x":1' > "$T/s.ndjson"
	run bash -c "trace-roofline '$T/s.ndjson' | jq -c 'select(.name==\"gemm_a\") | [.device_name, .tflops, .peak_gbps]'"
	assert_output '[null,200,null]'
}

@test "devices of different peaks in one group: no roofline for it" {
	{
		meta ',"devices":{"GPU:0":"A100","GPU:1":"H100"}'
		dspan 0 1000 mm '{"flops":1000,"bytes_accessed":10}' GPU:0
		dspan 0 1000 mm '{"flops":1000,"bytes_accessed":10}' GPU:1
		dspan 2000 1000 solo '{"flops":1000,"bytes_accessed":10}' GPU:1
	} > "$T/s.ndjson"
	run bash -c "trace-roofline '$T/s.ndjson' | jq -c 'select(.type==\"roofline\") | [.name, .device_name, .tflops, .peak_tflops, .bound]'"
	assert_output "$(printf '%s\n' '["mm",null,0.001,null,null]' '["solo","H100",0.001,989,"memory"]')"
	run bash -c "trace-roofline --table '$T/s.ndjson' | tail -1"
	assert_output "no single device peak: see --device, --peak-tflops and --peak-gbps"
}

@test "timelines: host flops (Kineto with_flops) when device ops have none" {
	{
		meta
		dspan 0 1000 kernel '{"x":1}'
		printf '{"type":"span","ts_ns":0,"dur_ns":4000,"name":"aten::mm","pid":9,"tid":9,"process":"python","cat":"cpu_op","args":{"flops":8000000}}\n'
		printf '{"type":"span","ts_ns":5000,"dur_ns":1000,"name":"aten::mm","pid":9,"tid":9,"process":"python","cat":"cpu_op","args":{"flops":2000000}}\n'
		printf '{"type":"span","ts_ns":7000,"dur_ns":500,"name":"aten::relu","pid":9,"tid":9,"process":"python","cat":"cpu_op"}\n'
	} > "$T/s.ndjson"
	# 1e7 flops in 5000 ns = 2 TFLOP/s
	run bash -c "trace-roofline --peak-tflops 10 '$T/s.ndjson' | jq -c '[.type, .name, .tflops, .pct_of_peak, .timelines, .no_flops_spans, .no_flops_ns]'"
	assert_output "$(printf '%s\n' '["roofline","aten::mm",2,20,null,null,null]' '["roofline_summary",null,null,null,"host",1,500]')"
	# --timelines device: the kernel has no flops
	run bash -c "trace-roofline --timelines device '$T/s.ndjson' | jq -c '[.type, .timelines, .spans, .flops_spans, .rows]'"
	assert_output '["roofline_summary","device",1,0,0]'
	# all: every span
	run bash -c "trace-roofline --timelines all '$T/s.ndjson' | jq -c 'select(.type==\"roofline_summary\") | [.spans, .total_ns, .flops_spans]'"
	assert_output '[4,6500,2]'
	# the default with device flops ignores the host (first test): and with
	# --timelines host it counts aten::mm there
	stream > "$T/s2.ndjson"
	run bash -c "trace-roofline --timelines host '$T/s2.ndjson' | jq -c '[.name, .flops, .timelines]'"
	assert_output "$(printf '%s\n' '["aten::mm",99,null]' '[null,99,"host"]')"
}

@test "--by keys, -k, --table, --csv and -o" {
	stream > "$T/s.ndjson"
	run bash -c "trace-roofline --by family,device '$T/s.ndjson' | jq -c 'select(.type==\"roofline\") | [.family, .device, .count, .flops]'"
	assert_output "$(printf '%s\n' '["gemm","GPU:0",2,800000000000]' '["part","GPU:0",2,2000000000]' '["add","GPU:0",1,1000000000]' '["copy","GPU:0",1,0]')"
	run bash -c "trace-roofline --by args.flops -k 1 '$T/s.ndjson' | jq -c '[.args, .count, .shown, .rows]'"
	assert_output "$(printf '%s\n' '[{"flops":600000000000},1,null,null]' '[null,null,1,5]')"
	run trace-roofline -k 2 --table "$T/s.ndjson"
	assert_success
	assert_output "$(printf '%s\n' \
	    '   Time  Count  TFLOP/s   GB/s   FLOP/B    Bound  Roof TF/s  % roof  name' \
	    '-------  -----  -------  -----  -------  -------  ---------  ------  ------' \
	    '4.000ms      2  200.000  100.0  2000.00  compute    312.000   64.1%  gemm_a' \
	    '2.000ms      2    1.000      -        -        -          -       -  part' \
	    '' \
	    '6 of 7 spans (7.500ms of 9.500ms) on device timelines had flops; 4 groups, 2 shown' \
	    'peak 312 TFLOP/s, 2039 GB/s, ridge 153.0 FLOP/B (NVIDIA A100-SXM4-80GB)')"
	trace-roofline --csv "$T/s.ndjson" > "$T/c.csv"
	run head -2 "$T/c.csv"
	assert_output "$(printf '%s\n' \
	    '"name",count,total_ns,flops_count,flops_ns,flops,bytes,tflops,gbps,intensity,device_name,peak_tflops,peak_gbps,pct_of_peak,ridge,bound,attainable_tflops,pct_of_roofline' \
	    "\"gemm_a\",2,4000000,2,4000000,800000000000,400000000,200,100,2000,\"NVIDIA A100-SXM4-80GB\",312,2039,$(trace-roofline "$T/s.ndjson" | jq -r 'select(.name=="gemm_a") | [.pct_of_peak, .ridge] | join(",")'),compute,312,$(trace-roofline "$T/s.ndjson" | jq -r 'select(.name=="gemm_a") | .pct_of_roofline')")"
	# the CSV agrees with the records, row by row (python csv module)
	run "$PY" -c 'import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
recs = [json.loads(l) for l in open(sys.argv[2]) if "\"roofline\"" in l]
assert len(rows) == len(recs) == 4
for c, r in zip(rows, recs):
    for k, v in c.items():
        if v == "": assert k not in r, k
        elif k in ("name", "bound", "device_name"): assert r[k] == v, k
        else: assert float(v) == r[k], (k, v, r[k])
print("ok")' "$T/c.csv" <(trace-roofline "$T/s.ndjson")
	assert_output ok
	trace-roofline -o "$T/o.ndjson" "$T/s.ndjson"
	run cmp "$T/o.ndjson" <(trace-roofline < "$T/s.ndjson")
	assert_success
	run bash -c "ls -a '$T' | grep -c '^\\.o\\.ndjson' || true"
	assert_output 0
}

@test "--print-peaks: one table with bandwidth, shared with trace-steps" {
	run trace-roofline --print-peaks
	assert_success
	assert_line --index 0 "$(printf '# key\ttflops\tgbps\tprecision\tnames matched')"
	assert_line "$(printf 'A100\t312\t2039\tbf16\tA100')"
	assert_line "$(printf 'A100 40GB\t312\t1555\tbf16\tA100-SXM4-40GB, A100-PCIE-40GB, A100 40GB')"
	assert_line "$(printf 'H100\t989\t3350\tbf16\tH100')"
	assert_line "$(printf 'TPU v6e\t918\t1640\tbf16\tTPU v6 lite, TPU v6e, Trillium')"
	run cmp <(trace-roofline --print-peaks) <(trace-steps --print-peaks)
	assert_success
	# every row has both peaks
	run bash -c "trace-roofline --print-peaks | awk -F'\t' 'NR > 1 && !(\$2 > 0 && \$3 > 0)' | wc -l"
	assert_output 0
}

@test "bad usage: messages and exit codes" {
	stream > "$T/s.ndjson"
	run trace-roofline --timelines gpu "$T/s.ndjson"
	assert_failure 2
	assert_output "trace-roofline: invalid value for --timelines: 'gpu' (auto, device, host or all)"
	run trace-roofline --peak-tflops abc "$T/s.ndjson"
	assert_failure 2
	assert_output "trace-roofline: invalid value for --peak-tflops: 'abc'"
	run trace-roofline --peak-gbps 0 "$T/s.ndjson"
	assert_failure 2
	assert_output "trace-roofline: invalid value for --peak-gbps: '0'"
	run trace-roofline --device 'Acme X1' "$T/s.ndjson"
	assert_failure 2
	assert_output "trace-roofline: --device: 'Acme X1' is not in the peak table (see --print-peaks); give --peak-tflops and --peak-gbps"
	run trace-roofline --device 'Acme X1' --peak-tflops 5 "$T/s.ndjson"
	assert_failure 2
	run trace-roofline --by name,bound "$T/s.ndjson"
	assert_failure 2
	assert_output "trace-roofline: --by name,bound: 'bound' is an output key of roofline rows; it cannot be a group key"
	run trace-roofline --by , "$T/s.ndjson"
	assert_failure 2
	assert_output "trace-roofline: --by: no key in ','"
	run trace-roofline --table --csv "$T/s.ndjson"
	assert_failure 2
	assert_output "trace-roofline: --table and --csv exclude each other"
	run trace-roofline -k -1 "$T/s.ndjson"
	assert_failure 2
	assert_output "trace-roofline: invalid value for -k: '-1'"
	run trace-roofline "$T/missing.ndjson"
	assert_failure 2
	assert_output --partial "trace-roofline: $T/missing.ndjson:"
	printf '{"type":"span","ts_ns":0,"dur_ns":"x","name":"a","pid":1,"tid":1}\n' > "$T/bad.ndjson"
	run trace-roofline "$T/bad.ndjson"
	assert_failure 2
	assert_output --partial "trace-roofline: $T/bad.ndjson:1:"
	run trace-roofline --bogus
	assert_failure 2
	assert_line --index 1 --partial "usage: trace-roofline"
}

@test "real TPU profile (XPlane): totals agree with jq, rows with the reference" {
	need_fixtures
	xplane2ndjson "$FIXTURES/xplane/tpu_inference_4core.xplane.pb" > "$T/tpu.ndjson"
	trace-roofline -k 0 --device 'TPU v4' "$T/tpu.ndjson" > "$T/out"
	# device ops on op lines (not the annotation lines): spans, time, flops
	# and bytes summed by jq
	run jq -s -c '[.[] | select(.type=="span" and (.process//""|startswith("/device:")) and (.thread|IN("Steps","XLA Modules","XLA TraceMe","TensorFlow Ops","TensorFlow Name Scope","Framework Ops","Framework Name Scope","Source code","Launch Stats")|not))] |
	    [length, (map(.dur_ns)|add), (map(select(.args.flops!=null))|length), (map(select(.args.flops!=null).args.flops)|add), (map(select(.args.flops!=null).args.bytes_accessed)|add)]' "$T/tpu.ndjson"
	want="$output"
	run jq -c 'select(.type=="roofline_summary") | [.spans, .total_ns, .flops_spans, .flops, .bytes]' "$T/out"
	assert_output "$want"
	# the summary's totals are the sums of the rows
	run jq -s -c '[map(select(.type=="roofline")) | (map(.flops_count)|add), (map(.flops)|add), (map(.bytes)|add)]' "$T/out"
	assert_output "$(jq -c 'select(.type=="roofline_summary") | [.flops_spans, .flops, .bytes]' "$T/out")"
	"$PY" "$REF" 275 1200 < "$T/tpu.ndjson" > "$T/ref"
	run "$PY" "$REF" check "$T/ref" < "$T/out"
	assert_output "ok 18"
	# the all-reduce: 12 spans with flops and bytes, memory-bound on a v4
	run jq -r 'select(.name=="all-reduce") | [.count, .bound] | @tsv' "$T/out"
	assert_output "$(printf '12\tmemory')"
}
