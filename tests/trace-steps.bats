#!/usr/bin/env bats
# trace-steps: step windows, the exact breakdown, summary and classes, ranks,
# MFU.  Hand-made streams with values computed by hand (see the comments),
# cross-checked by tests/tools/steps_check.py; real profiles when present.

load helpers
bats_require_minimum_version 1.5.0

setup() {
	T="$BATS_TEST_TMPDIR"
	CHECK="$BATS_TEST_DIRNAME/tools/steps_check.py"
}

meta() { # source rank origin [extra members]
	printf '{"type":"meta","schema":"ndtrace/1","source":"%s","format":"chrome","origin_ns":%s,"host":null,"rank":%s,"producer":"hand 1"%s}\n' \
	    "$1" "${3:-1700000000000000000}" "${2:-0}" "${4:-}"
}
# host span: ts dur name cat class [tid] [args]
hs() {
	printf '{"type":"span","ts_ns":%s,"dur_ns":%s,"name":"%s","pid":100,"tid":%s,"device":"CPU","cat":"%s","class":"%s","args":{%s}}\n' \
	    "$1" "$2" "$3" "${6:-1}" "$4" "$5" "${7:-}"
}
# GPU op: ts dur name tid cat class correlation
gs() {
	printf '{"type":"span","ts_ns":%s,"dur_ns":%s,"name":"%s","pid":0,"tid":%s,"device":"GPU:0","cat":"%s","class":"%s","args":{"correlation":%s}}\n' \
	    "$1" "$2" "$3" "$4" "$5" "$6" "$7"
}

# Two steps of a GPU rank.  Step 1 [0,1000): K1 [100,400) and K2 [500,600)
# compute on stream 7, an all-reduce [300,550) on stream 8, a copy
# [650,700) on stream 9; host work [0,90) (launches inside it), a copy
# launch [620,625), a sync [700,740) and a data loader wait [750,900).
#   compute        [100,400)+[500,600)                         = 400
#   communication  [300,550) minus compute = [400,500)         = 100
#   overlap        [300,400)+[500,550)                         = 150
#   memory         [650,700)                                   =  50
#   host           [0,90)+[620,625)+[700,740)+[750,900)        = 285
#   idle           [90,100)+[600,620)+[625,650)+[740,750)+[900,1000) = 165
# Step 2 [1000,2000): K3 [1000,1800): compute 800, idle 200 (its launch
# [1000,1005) runs under it).
gpu_stream() {
	meta rank0.json 0
	hs 0 1000 'ProfilerStep#1' user_annotation host
	hs 0 90 aten::mm cpu_op host
	hs 20 10 cudaLaunchKernel cuda_runtime host 1 '"correlation":1'
	hs 40 5 cudaLaunchKernel cuda_runtime host 1 '"correlation":2'
	hs 50 5 cudaLaunchKernel cuda_runtime host 1 '"correlation":3'
	hs 620 5 cudaMemcpyAsync cuda_runtime host 1 '"correlation":4'
	hs 700 40 cudaDeviceSynchronize cuda_runtime stall
	hs 750 150 dataloader cpu_op stall
	hs 1000 1000 'ProfilerStep#2' user_annotation host
	hs 1000 5 cudaLaunchKernel cuda_runtime host 1 '"correlation":5'
	gs 100 300 K1 7 kernel compute 1
	gs 500 100 K2 7 kernel compute 3
	gs 1000 800 K3 7 kernel compute 5
	gs 300 250 ncclAllReduce 8 kernel communication 2
	gs 650 50 'Memcpy DtoD' 9 gpu_memcpy memory 4
	echo '{"type":"end","spans":15}'
}

KEYS='{step,ts_ns,dur_ns,compute_ns,communication_ns,memory_ns,host_ns,idle_ns,overlap_ns,wait_ns,marker,devices}'

@test "exact breakdown: two streams overlapping, memcpy, host work, idle" {
	gpu_stream > "$T/g.ndjson"
	run bash -c "trace-steps '$T/g.ndjson' | jq -c 'select(.type==\"step\") | $KEYS'"
	assert_success
	assert_output - <<'E'
{"step":1,"ts_ns":0,"dur_ns":1000,"compute_ns":400,"communication_ns":100,"memory_ns":50,"host_ns":285,"idle_ns":165,"overlap_ns":150,"wait_ns":250,"marker":"profiler_step","devices":1}
{"step":2,"ts_ns":1000,"dur_ns":1000,"compute_ns":800,"communication_ns":0,"memory_ns":0,"host_ns":0,"idle_ns":200,"overlap_ns":0,"wait_ns":0,"marker":"profiler_step","devices":1}
E
	# the same from the independent script
	run bash -c "trace-steps '$T/g.ndjson' | jq -c 'select(.type==\"step\") | {step,ts_ns,dur_ns,compute_ns,communication_ns,memory_ns,host_ns,idle_ns,overlap_ns,marker}'"
	want=$output
	run bash -c "$PY '$CHECK' '$T/g.ndjson' | jq -c '{step,ts_ns,dur_ns,compute_ns,communication_ns,memory_ns,host_ns,idle_ns,overlap_ns,marker}'"
	assert_output "$want"
	# meta passes through, end is consumed; the output is a valid stream
	run bash -c "trace-steps '$T/g.ndjson' | jq -r .type | sort | uniq -c | tr -s ' '"
	assert_output - <<'E'
 1 meta
 2 step
E
	run bash -c "trace-steps '$T/g.ndjson' | trace-check"
	assert_success
}

@test "the parts add up to dur_ns on every record, any order of the input" {
	gpu_stream > "$T/g.ndjson"
	# shuffle the records after the meta: the answer must not change
	{ head -1 "$T/g.ndjson"; sed 1d "$T/g.ndjson" | sort -r; } > "$T/s.ndjson"
	run bash -c "trace-steps '$T/g.ndjson' | grep '\"step\"'"
	want=$output
	run bash -c "trace-steps '$T/s.ndjson' | grep '\"step\"'"
	assert_output "$want"
	run bash -c "trace-steps -d '$T/s.ndjson' | jq -e -s '[.[] | select(.type==\"step\")] | length == 2 and all(.dur_ns == .compute_ns + .communication_ns + .memory_ns + .host_ns + .idle_ns)'"
	assert_success
}

# A GPU job on two devices with three streams each (a kernel may hold a
# shorter op of another class), two host threads with ProfilerStep#N
# markers, host communication, and flops on some ops; every timeline by
# start, the timelines interleaved in time.  seed ops-per-stream
multi_stream() {
	meta multi.json 0
	awk -v seed="$1" -v n="$2" 'BEGIN {
		srand(seed)
		split("compute communication memory", cls, " ")
		for (d = 0; d < 2; d++)
			for (st = 7; st < 10; st++) {
				t = int(rand() * 50)
				for (i = 0; i < n; i++) {
					dur = 1 + int(rand() * 40)
					op(t, dur, d, st, cls[1 + int(rand() * 3)])
					if (rand() < 0.2)
						op(t + 1, int(dur / 2), d, st,
						    cls[1 + int(rand() * 3)])
					t += dur + int(rand() * 20)
				}
			}
		for (k = 0; k < 9; k++) {
			host(k * 1000, 1000, "ProfilerStep#" k + 1, 1,
			    "user_annotation", "host")
			for (j = 0; j < 5; j++)
				host(k * 1000 + 200 * j + int(rand() * 50),
				    1 + int(rand() * 120), "h" j, 1 + j % 2, "cpu_op",
				    rand() < 0.3 ? "communication" : "host")
		}
	}
	function op(t, dur, d, st, c) {
		printf "%d {\"type\":\"span\",\"ts_ns\":%d,\"dur_ns\":%d,\"name\":\"k\",\"pid\":%d,\"tid\":%d,\"device\":\"GPU:%d\",\"cat\":\"kernel\",\"class\":\"%s\",\"args\":{%s}}\n",
		    t, t, dur, d, st, d, c,
		    rand() < 0.3 ? "\"flops\":" int(rand() * 1e6) : ""
	}
	function host(t, dur, name, tid, cat, c) {
		printf "%d {\"type\":\"span\",\"ts_ns\":%d,\"dur_ns\":%d,\"name\":\"%s\",\"pid\":100,\"tid\":%d,\"device\":\"CPU\",\"cat\":\"%s\",\"class\":\"%s\",\"args\":{}}\n",
		    t, t, dur, name, tid, cat, c
	}' | sort -s -n -k1,1 | cut -d' ' -f2-
	echo '{"type":"end"}'
}

@test "the same records whether timelines interleave, come one after another, in no order or spill to disk" {
	multi_stream 5 300 > "$T/i.ndjson"
	# one timeline after another, as xplane2ndjson writes them
	{ head -1 "$T/i.ndjson"
	  sed '1d;$d' "$T/i.ndjson" | jq -c -s 'sort_by(.pid, .tid, .ts_ns) | .[]'
	  tail -1 "$T/i.ndjson"; } > "$T/t.ndjson"
	# no order at all: the timelines' stretches stay in memory
	{ head -1 "$T/i.ndjson"; sed '1d;$d' "$T/i.ndjson" | sort
	  tail -1 "$T/i.ndjson"; } > "$T/s.ndjson"
	for o in "-s -r" -d "-x ^h[0-9]"; do
		run trace-steps $o "$T/i.ndjson"
		assert_success
		want=$output
		[ "$(grep -c '"type":"step"' <<< "$want")" -ge 5 ]
		run trace-steps $o "$T/t.ndjson"
		assert_output "$want"
		# chunks of two stretches, the spool past 256 bytes on disk
		for f in i t; do
			run env ND_IVLOG_CHUNK=2 ND_SPOOL_MEM=256 trace-steps $o "$T/$f.ndjson"
			assert_output "$want"
		done
		# devices are listed in order of appearance: sort
		want=$(sort <<< "$want")
		for e in "" "ND_IVLOG_CHUNK=2 ND_SPOOL_MEM=256"; do
			run bash -c "env $e trace-steps $o '$T/s.ndjson' | sort"
			assert_output "$want"
		done
	done
	for f in i t; do
		run bash -c "trace-steps -d '$T/$f.ndjson' | jq -e -s '[.[] | select(.type==\"step\")] | length == 18 and all(.dur_ns == .compute_ns + .communication_ns + .memory_ns + .host_ns + .idle_ns) and any(.flops > 0) and any(.wait_ns > 0)'"
		assert_success
	done
	# the independent script agrees
	run bash -c "trace-steps -d '$T/t.ndjson' | jq -c 'select(.type==\"step\") | {step,ts_ns,dur_ns,compute_ns,communication_ns,memory_ns,host_ns,idle_ns,overlap_ns,marker}' | sort"
	want=$output
	run bash -c "$PY '$CHECK' --per-device '$T/i.ndjson' | jq -c '{step,ts_ns,dur_ns,compute_ns,communication_ns,memory_ns,host_ns,idle_ns,overlap_ns,marker}' | sort"
	assert_output "$want"
}

@test "CPU-only profile: host activity is host_ns, the rest idle; legacy ProfilerStep without cat" {
	{ meta cpu.json null 0
	  printf '{"type":"span","ts_ns":0,"dur_ns":100,"name":"ProfilerStep#1","pid":1,"tid":1}\n'
	  printf '{"type":"span","ts_ns":0,"dur_ns":40,"name":"forward","pid":1,"tid":1}\n'
	  printf '{"type":"span","ts_ns":50,"dur_ns":40,"name":"backward","pid":1,"tid":1}\n'
	  printf '{"type":"span","ts_ns":100,"dur_ns":100,"name":"ProfilerStep#2","pid":1,"tid":1}\n'
	  printf '{"type":"span","ts_ns":100,"dur_ns":50,"name":"forward","pid":1,"tid":1}\n'
	  printf '{"type":"span","ts_ns":120,"dur_ns":200,"name":"pyframe","pid":1,"tid":2,"cat":"python_function"}\n'
	} > "$T/c.ndjson"
	run bash -c "trace-steps '$T/c.ndjson' | jq -c 'select(.type==\"step\") | [.step,.dur_ns,.compute_ns,.host_ns,.idle_ns,.devices]'"
	assert_output - <<'E'
[1,100,0,80,20,1]
[2,100,0,50,50,1]
E
}

@test "XPlane Steps lines per device; --per-device; MFU from flops and device names" {
	# TPU:0 step 1 [0,1000): fusion [0,500) with 1.375e8 flops (no step
	# key: counted by its start): 137.5 TFLOP/s of 275 (TPU v4) = 0.5.
	# TPU:1 step 1 [100,1100): all-reduce [100,600), fusion [600,1100)
	# with 2.75e8 flops (step key 1): 275 TFLOP/s, MFU 1.  Per source,
	# step 1 is [0,1100): compute [0,500)+[600,1100) = 1000, exposed
	# communication [500,600) = 100, overlap [100,500) = 400; 4.125e8
	# flops / 1100 ns = 375 TFLOP/s of 550.  Step 2 is [1000,2100): the end
	# of fusion.2 [1000,1100) and fusion.3 [1200,1700): compute 600.
	x() { printf '{"type":"span","ts_ns":%s,"dur_ns":%s,"name":"%s","pid":%s,"tid":%s,"process":"/device:TPU:%s","thread":"%s","device":"TPU:%s","class":"%s"%s}\n' "$@"; }
	{ meta tpu.xplane.pb null 0 ',"devices":{"TPU:0":{"device_type_string":"TPU v4"},"TPU:1":"TPU v4"}'
	  x 0 1000 1 1 100 0 Steps 0 other ''
	  x 1000 1000 2 1 100 0 Steps 0 other ''
	  x 0 500 fusion.1 1 1 0 'XLA Ops' 0 compute ',"args":{"flops":137500000}'
	  x 1200 500 fusion.3 1 1 0 'XLA Ops' 0 compute ''
	  x 100 1000 1 2 100 1 Steps 1 other ''
	  x 1100 1000 2 2 100 1 Steps 1 other ''
	  x 100 500 all-reduce.1 2 1 1 'XLA Ops' 1 communication ',"step":1'
	  x 600 500 fusion.2 2 1 1 'XLA Ops' 1 compute ',"step":1,"args":{"flops":275000000,"model_flops":275000000}'
	} > "$T/x.ndjson"
	run bash -c "trace-steps -d '$T/x.ndjson' | jq -c 'select(.type==\"step\") | [.device,.step,.ts_ns,.dur_ns,.compute_ns,.communication_ns,.idle_ns,.tflops,.mfu,.device_name,.marker]'"
	assert_output - <<'E'
["TPU:0",1,0,1000,500,0,500,137.5,0.5,"TPU v4","steps_line"]
["TPU:0",2,1000,1000,500,0,500,0,0,"TPU v4","steps_line"]
["TPU:1",1,100,1000,500,500,0,275,1,"TPU v4","steps_line"]
["TPU:1",2,1100,1000,0,0,1000,0,0,"TPU v4","steps_line"]
E
	run bash -c "trace-steps '$T/x.ndjson' | jq -c 'select(.type==\"step\") | [.step,.ts_ns,.dur_ns,.compute_ns,.communication_ns,.overlap_ns,.idle_ns,.devices,.flops,.tflops,.peak_tflops,(.mfu*1e6|round)]'"
	assert_output - <<'E'
[1,0,1100,1000,100,400,0,2,412500000,375,550,681818]
[2,1000,1100,600,0,0,500,2,0,0,550,0]
E
	for o in "" --per-device; do
		run bash -c "trace-steps $o '$T/x.ndjson' | jq -c 'select(.type==\"step\") | {step,ts_ns,dur_ns,compute_ns,communication_ns,memory_ns,host_ns,idle_ns,overlap_ns,marker}' | sort"
		want=$output
		run bash -c "$PY '$CHECK' $o '$T/x.ndjson' | jq -c '{step,ts_ns,dur_ns,compute_ns,communication_ns,memory_ns,host_ns,idle_ns,overlap_ns,marker}' | sort"
		assert_output "$want"
	done
}

@test "peaks: the built-in table by device name, --peak-tflops by number or name" {
	dp='"header":{"deviceProperties":[{"id":0,"name":"NVIDIA A100-SXM4-80GB"}]}'
	k() { printf '{"type":"span","ts_ns":%s,"dur_ns":%s,"name":"k","pid":0,"tid":7,"device":"GPU:0","cat":"kernel","class":"compute","step":%s,"args":{"flops":%s}}\n' "$@"; }
	{ meta a.json 0 1700000000000000000 ",$dp"; k 0 1000 1 156000000; } > "$T/a.ndjson"
	# 1.56e8 flops in 1000 ns = 156 TFLOP/s; an A100 peaks at 312 (bf16)
	run bash -c "trace-steps -d '$T/a.ndjson' | jq -c 'select(.type==\"step\") | [.marker,.tflops,.peak_tflops,.mfu,.device_name]'"
	assert_output '["op_step",156,312,0.5,"NVIDIA A100-SXM4-80GB"]'
	run bash -c "trace-steps -p 624 '$T/a.ndjson' | jq -c 'select(.type==\"step\") | .mfu'"
	assert_output 0.25
	run bash -c "trace-steps -p 'TPU v6e' '$T/a.ndjson' | jq -c 'select(.type==\"step\") | .peak_tflops'"
	assert_output 918
	{ meta b.json 0 1 ',"device_name":"NVIDIA RTX A1000"'; k 0 1000 1 156000000; } > "$T/b.ndjson"
	run bash -c "trace-steps '$T/b.ndjson' | jq -c 'select(.type==\"step\") | [.tflops, has(\"mfu\")]'"
	assert_output '[156,false]'
	run trace-steps -p nosuchdevice "$T/a.ndjson"
	assert_failure 2
	assert_output "trace-steps: invalid value for --peak-tflops: 'nosuchdevice'"
	run trace-steps --print-peaks
	assert_success
	assert_line --index 0 --partial 'key'
	assert_line "$(printf 'A100\t312\t2039\tbf16\tA100')"
	assert_line "$(printf 'TPU v5e\t197\t819\tbf16\tTPU v5 lite, TPU v5e, v5litepod')"
	assert_line "$(printf 'V100\t125\t900\tfp16\tV100')"
}

# Twelve steps, ProfilerStep#1..12 of the durations: step 1 5000 (warm-up),
# steps 4, 8, 12: 2000, the others 1000.
summary_stream() {
	meta s.json 0
	ts=0
	for i in $(seq 1 12); do
		d=1000
		[ "$i" = 1 ] && d=5000
		[ $((i % 4)) = 0 ] && d=2000
		hs "$ts" "$d" "ProfilerStep#$i" user_annotation host
		ts=$((ts + d))
	done
}

@test "--summary: statistics, warm-up, steady state, light/heavy classes and their period" {
	summary_stream > "$T/s.ndjson"
	# all 12: mean 19000/12 = 1583.3; nearest-rank median = 6th = 1000,
	# p90 = 11th = 2000; population stddev = 1114.9.  Steady (2..12): mean
	# 14000/11 = 1272.7, stddev 445.4.
	run bash -c "trace-steps -s '$T/s.ndjson' | jq -c 'select(.type==\"step_summary\") | [.count,.mean_ns,.median_ns,.p90_ns,.min_ns,.max_ns,.stddev_ns,.warmup,.drop_last]'"
	assert_output '[12,1583,1000,2000,1000,5000,1115,1,false]'
	run bash -c "trace-steps -s '$T/s.ndjson' | jq -c 'select(.type==\"step_summary\") | .steady'"
	assert_output '{"count":11,"mean_ns":1273,"median_ns":1000,"p90_ns":2000,"min_ns":1000,"max_ns":2000,"stddev_ns":445,"first_step":2,"last_step":12}'
	run bash -c "trace-steps -s '$T/s.ndjson' | jq -c 'select(.type==\"step_summary\") | (.classes[] | [.class,.count,.median_ns,.representative_step,.period,.phase,.steps]), .split'"
	assert_output - <<'E'
["light",8,1000,2,null,null,[2,3,5,6,7,9,10,11]]
["heavy",3,2000,4,4,0,[4,8,12]]
{"real":true,"r2":1,"gap":2,"ratio":2}
E
	run bash -c "trace-steps -s --drop-last '$T/s.ndjson' | jq -c 'select(.type==\"step_summary\") | [.steady.count, .steady.last_step, (.classes[1] | [.steps, .period])]'"
	assert_output '[10,11,[[4,8],4]]'
	# With the warm-up step kept, the best split (1000s | 2000s and 5000)
	# explains only 78% of the variance of the logs: one typical class.
	run bash -c "trace-steps -s -w 0 '$T/s.ndjson' | jq -c 'select(.type==\"step_summary\") | [.steady.count, [.classes[].class], .split.real, (.split.r2*100|floor)]'"
	assert_output '[12,["typical"],false,78]'
	# the summary reads the steps back: per-source runs reduce to the same
	run bash -c "trace-steps '$T/s.ndjson' | trace-steps -s | jq -c 'select(.type==\"step_summary\")'"
	want=$output
	run bash -c "trace-steps -s '$T/s.ndjson' | jq -c 'select(.type==\"step_summary\")'"
	assert_output "$want"
}

@test "--summary: noise is one typical class; fewer than 4 steps are never split" {
	{ meta n.json 0; ts=0; i=0
	  for d in 1000 1100 1050 1200 1150 1000 1250 1080; do
		i=$((i + 1)); hs "$ts" "$d" "ProfilerStep#$i" user_annotation host; ts=$((ts + d)); done
	} > "$T/n.ndjson"
	run bash -c "trace-steps -s -w 0 '$T/n.ndjson' | jq -c 'select(.type==\"step_summary\") | [[.classes[].class], .classes[0].representative_step, .split.real]'"
	assert_output '[["typical"],8,false]'
	{ meta f.json 0; hs 0 1000 'ProfilerStep#1' user_annotation host; hs 1000 1000 'ProfilerStep#2' user_annotation host; hs 2000 5000 'ProfilerStep#3' user_annotation host; } > "$T/f.ndjson"
	run bash -c "trace-steps -s -w 0 '$T/f.ndjson' | jq -c 'select(.type==\"step_summary\") | [[.classes[].class], .split]'"
	assert_output '[["typical"],{"real":false}]'
}

# Two ranks, three steps each, on one epoch clock.  Ready = end - wait:
#   step 1: rank 0 1000-400 = 600, rank 1 1000-200 = 800 -> rank 1, lag 200
#   step 2: rank 0 2000-700 = 1300, rank 1 2000-100 = 1900 -> rank 1, lag 600
#   step 3: rank 0 3000-400 = 2600, rank 1 3100-600 = 2500 -> rank 0, lag 100
# rank 1 is the straggler in 2 of 3 steps; rank 1 ends step 3 last, by 100.
rank_stream() { # rank origin
	meta "r$1.json" "$1" "$2"
	hs 0 1000 'ProfilerStep#1' user_annotation host
	hs 1000 1000 'ProfilerStep#2' user_annotation host
	if [ "$1" = 0 ]; then
		hs 2000 1000 'ProfilerStep#3' user_annotation host
		gs 600 400 nccl 8 kernel communication 1
		gs 1300 700 nccl 8 kernel communication 2
		gs 2600 400 nccl 8 kernel communication 3
	else
		hs 2000 1100 'ProfilerStep#3' user_annotation host
		gs 800 200 nccl 8 kernel communication 1
		gs 1900 100 nccl 8 kernel communication 2
		gs 2500 600 nccl 8 kernel communication 3
	fi
}

@test "--ranks: spread per step and the straggler, named when slow in most steps" {
	rank_stream 0 1700000000000000000 > "$T/r0.ndjson"
	rank_stream 1 1700000000000000000 > "$T/r1.ndjson"
	run bash -c "trace-steps -R '$T/r0.ndjson' '$T/r1.ndjson' | jq -c 'select(.type==\"step_ranks\") | [.step,.ranks,.clock,.straggler_rank,.lag_ns,.last_rank,.last_by_ns,.dur_spread_ns,.end_spread_ns]'"
	assert_output - <<'E'
[1,2,"absolute",1,200,0,0,0,0]
[2,2,"absolute",1,600,0,0,0,0]
[3,2,"absolute",0,100,1,100,100,100]
E
	run bash -c "trace-steps -R '$T/r0.ndjson' '$T/r1.ndjson' | jq -c 'select(.type==\"straggler\") | [.steps,.rank,.source,.straggler_steps,[.counts[].straggler_steps]]'"
	assert_output '[3,1,"r1.json",2,[1,2]]'
	# fan out and reduce: the same answer from per-rank runs
	run bash -c "{ trace-steps '$T/r0.ndjson'; trace-steps '$T/r1.ndjson'; } | trace-steps -R -s | grep -v '\"type\":\"meta\"' | grep -v '\"type\":\"step\",' | md5sum"
	want=$output
	run bash -c "trace-steps -R -s '$T/r0.ndjson' '$T/r1.ndjson' | grep -v '\"type\":\"meta\"' | grep -v '\"type\":\"step\",' | md5sum"
	assert_output "$want"
	# no absolute clock: ranks compared by busy time (dur - wait)
	rank_stream 1 0 > "$T/r1z.ndjson"
	run bash -c "trace-steps -R '$T/r0.ndjson' '$T/r1z.ndjson' | jq -c 'select(.type==\"step_ranks\") | [.clock,.straggler_rank,.lag_ns]'"
	assert_output - <<'E'
["relative",1,200]
["relative",1,600]
["relative",0,100]
E
}

@test "--step-regex, op_step fallback, a source without steps warns" {
	k() { printf '{"type":"span","ts_ns":%s,"dur_ns":%s,"name":"%s","pid":0,"tid":7,"device":"GPU:0","cat":"kernel","class":"compute"%s}\n' "$@"; }
	{ meta o.json 0; k 0 100 a ',"step":5'; k 150 100 b ',"step":5'; k 300 50 c ',"step":6'; } > "$T/o.ndjson"
	run bash -c "trace-steps '$T/o.ndjson' | jq -c 'select(.type==\"step\") | [.step,.ts_ns,.dur_ns,.compute_ns,.idle_ns,.marker]'"
	assert_output - <<'E'
[5,0,250,200,50,"op_step"]
[6,300,50,50,0,"op_step"]
E
	{ meta x.json 0; hs 0 400 'iteration_7' cpu_op host; hs 400 600 'iteration_8' cpu_op host; k 100 100 a ''; hs 1000 10 'no_number' cpu_op host; } > "$T/x.ndjson"
	run bash -c "trace-steps -x '^iteration_([0-9]+)$' '$T/x.ndjson' | jq -c 'select(.type==\"step\") | [.step,.ts_ns,.dur_ns,.compute_ns,.host_ns,.idle_ns,.marker]'"
	assert_output - <<'E'
[7,0,400,100,0,300,"regex"]
[8,400,600,0,0,600,"regex"]
E
	run bash -c "trace-steps -x 'no_|iter' '$T/x.ndjson' | jq -c 'select(.type==\"step\") | [.step,.ts_ns]'"
	assert_output - <<'E'
[7,0]
[8,400]
[1,1000]
E
	{ meta e.json 0; hs 0 10 x cpu_op host; } > "$T/e.ndjson"
	run --separate-stderr trace-steps "$T/e.ndjson"
	assert_success
	[ "$stderr" = "trace-steps: e.json: no steps found (no step markers and no step keys on device ops; see --step-regex)" ]
	run trace-steps -x '(' "$T/e.ndjson"
	assert_failure 2
	assert_output --partial "trace-steps: invalid --step-regex '(':"
}

@test "JAX StepTraceAnnotation (step_num); a Steps line outranks it" {
	t() { printf '{"type":"span","ts_ns":%s,"dur_ns":%s,"name":"train","pid":9,"tid":1,"process":"/host:CPU","thread":"main","args":{"step_num":%s}}\n' "$@"; }
	o() { printf '{"type":"span","ts_ns":%s,"dur_ns":%s,"name":"%s","pid":1,"tid":%s,"process":"/device:TPU:0","thread":"%s","device":"TPU:0","class":"%s"}\n' "$@"; }
	{ meta j.xplane.pb null 0; t 0 100 7; t 100 100 8; o 10 80 fusion.1 1 'XLA Ops' compute; o 120 30 all-gather.2 1 'XLA Ops' communication; } > "$T/j.ndjson"
	run bash -c "trace-steps '$T/j.ndjson' | jq -c 'select(.type==\"step\") | [.step,.ts_ns,.dur_ns,.compute_ns,.communication_ns,.idle_ns,.marker]'"
	assert_output - <<'E'
[7,0,100,80,0,20,"step_num"]
[8,100,100,0,30,70,"step_num"]
E
	{ cat "$T/j.ndjson"; o 5 90 7 100 Steps other; } > "$T/k.ndjson"
	run bash -c "trace-steps '$T/k.ndjson' | jq -c 'select(.type==\"step\") | [.step,.ts_ns,.dur_ns,.marker]'"
	assert_output '[7,5,90,"steps_line"]'
	run bash -c "$PY '$CHECK' '$T/k.ndjson' | jq -c '[.step,.ts_ns,.dur_ns,.marker]'"
	assert_output '[7,5,90,"steps_line"]'
}

@test "-o writes atomically; --help; unknown option" {
	gpu_stream > "$T/g.ndjson"
	run trace-steps -o "$T/out.ndjson" "$T/g.ndjson"
	assert_success
	assert_output ""
	run grep -c '"type":"step"' "$T/out.ndjson"
	assert_output 2
	run trace-steps --help
	assert_success
	assert_line --index 0 --partial 'usage: trace-steps'
	run trace-steps --nope
	assert_failure 2
}

# ---- real profiles ----

need_chrome() {
	need_fixtures
}

# step records = ProfilerStep# host spans; parts add up; the independent
# script agrees on every key.
check_fixture() { # file
	chrome2ndjson "$1" > "$T/f.ndjson"
	trace-steps "$T/f.ndjson" > "$T/f.steps"
	n=$(jq -s '[.[] | select(.type=="span" and (.name|startswith("ProfilerStep#")) and .cat != "gpu_user_annotation") | .name] | unique | length' "$T/f.ndjson")
	run jq -e -s --argjson n "$n" '[.[] | select(.type=="step")] | length == $n and all(.dur_ns == .compute_ns + .communication_ns + .memory_ns + .host_ns + .idle_ns and .overlap_ns <= .compute_ns)' "$T/f.steps"
	assert_success
	run bash -c "jq -c 'select(.type==\"step\") | {step,ts_ns,dur_ns,compute_ns,communication_ns,memory_ns,host_ns,idle_ns,overlap_ns,marker}' '$T/f.steps' | sort"
	want=$output
	run bash -c "$PY '$CHECK' '$T/f.ndjson' | jq -c '{step,ts_ns,dur_ns,compute_ns,communication_ns,memory_ns,host_ns,idle_ns,overlap_ns,marker}' | sort"
	assert_output "$want"
	run trace-check "$T/f.steps"
	assert_success
}

@test "real: the two HTA ranks (ProfilerStep#551, #552), checked and across ranks" {
	need_chrome
	for r in 0 1; do
		check_fixture "$FIXTURES/chrome/hta_sampled_rank-$r.json.gz"
	done
	chrome2ndjson "$FIXTURES"/chrome/hta_sampled_rank-[01].json.gz > "$T/both.ndjson"
	run bash -c "trace-steps -R '$T/both.ndjson' | jq -c 'select(.type==\"step_ranks\") | [.step,.ranks,.clock]'"
	assert_output - <<'E'
[551,2,"absolute"]
[552,2,"absolute"]
E
}

@test "real: PyTorch legacy traces (3 steps each) and the DDP straggler" {
	need_chrome
	for f in single ddp_rank1; do
		check_fixture "$FIXTURES/torch-legacy/$f.pt.trace.json.gz"
	done
	# rank 1 sleeps 100 ms in step 2 while rank 0 waits in gloo:all_reduce
	chrome2ndjson --rank 0 "$FIXTURES/torch-legacy/ddp_rank0.pt.trace.json.gz" > "$T/d0.ndjson"
	chrome2ndjson --rank 1 "$FIXTURES/torch-legacy/ddp_rank1.pt.trace.json.gz" > "$T/d1.ndjson"
	run bash -c "trace-steps -R '$T/d0.ndjson' '$T/d1.ndjson' | jq -c 'select(.type==\"step_ranks\" and .step==2) | [.straggler_rank, .lag_ns > 100000000]'"
	assert_output '[1,true]'
	run bash -c "trace-steps -R '$T/d0.ndjson' '$T/d1.ndjson' | jq -c 'select(.type==\"straggler\") | .rank'"
	assert_output 1
}

@test "real: DLRM on 8 ranks: the straggler is the rank the others wait for" {
	need_chrome
	chrome2ndjson "$FIXTURES"/chrome/dlrm_8ranks/*.gz > "$T/dlrm.ndjson"
	run bash -c "trace-steps -R '$T/dlrm.ndjson' | jq -c 'select(.type==\"step_ranks\") | [.step,.ranks,.clock,.straggler_rank]'"
	assert_output '[10,8,"absolute",7]'
	run bash -c "trace-steps -R '$T/dlrm.ndjson' | jq -c 'select(.type==\"straggler\") | [.rank, .straggler_steps]'"
	assert_output '[7,1]'
	check_fixture "$FIXTURES/chrome/dlrm_8ranks/worker7_step_12.1694128201553.pt.trace.json.gz"
}

@test "real: XPlane Steps lines (TF on 8 GPUs): one window per device" {
	need_fixtures
	xplane2ndjson "$FIXTURES/xplane/tf_gpu_8gpu_worker.xplane.pb" > "$T/x.ndjson"
	n=$(jq -s '[.[] | select(.type=="span" and .thread=="Steps" and (.process|startswith("/device:")))] | length' "$T/x.ndjson")
	run bash -c "trace-steps -d '$T/x.ndjson' | jq -s '[.[] | select(.type==\"step\" and .marker==\"steps_line\")] | length'"
	assert_output "$n"
	run bash -c "trace-steps -d '$T/x.ndjson' | jq -e -s 'all(.[] | select(.type==\"step\"); .dur_ns == .compute_ns + .communication_ns + .memory_ns + .host_ns + .idle_ns)'"
	assert_success
	for o in "" -d; do
		run bash -c "trace-steps $o '$T/x.ndjson' | jq -c 'select(.type==\"step\") | {step,ts_ns,dur_ns,compute_ns,communication_ns,memory_ns,host_ns,idle_ns,overlap_ns,marker}' | sort"
		want=$output
		run bash -c "$PY '$CHECK' $o '$T/x.ndjson' | jq -c '{step,ts_ns,dur_ns,compute_ns,communication_ns,memory_ns,host_ns,idle_ns,overlap_ns,marker}' | sort"
		assert_output "$want"
	done
}

@test "real: every XPlane fixture: parts add up, the independent script agrees" {
	need_fixtures
	for f in "$FIXTURES"/xplane/rocm*.xplane.pb "$FIXTURES"/xplane/tpu*.xplane.pb; do
		xplane2ndjson "$f" > "$T/x.ndjson"
		# the TPU profile has no Steps line: its XLA modules are the steps
		trace-steps -x '^jit_' "$T/x.ndjson" > "$T/x.steps" 2>/dev/null
		run jq -e -s 'all(.[] | select(.type=="step"); .dur_ns == .compute_ns + .communication_ns + .memory_ns + .host_ns + .idle_ns)' "$T/x.steps"
		assert_success
		run bash -c "jq -c 'select(.type==\"step\") | {step,ts_ns,dur_ns,compute_ns,communication_ns,memory_ns,host_ns,idle_ns,overlap_ns,marker}' '$T/x.steps' | sort"
		want=$output
		run bash -c "$PY '$CHECK' --step-regex '^jit_' '$T/x.ndjson' | jq -c '{step,ts_ns,dur_ns,compute_ns,communication_ns,memory_ns,host_ns,idle_ns,overlap_ns,marker}' | sort"
		assert_output "$want"
	done
}
