#!/usr/bin/env bats
# trace-gaps: idle intervals at timeline and device level, before / marker /
# payload, causes, host context, steps.  Hand-made streams with values
# computed by hand (see the comments), cross-checked by
# tests/tools/gaps_check.py; real profiles when present.

load helpers
bats_require_minimum_version 1.5.0

setup() {
	T="$BATS_TEST_TMPDIR"
	CHECK="$BATS_TEST_DIRNAME/tools/gaps_check.py"
}

meta() { # source rank
	printf '{"type":"meta","schema":"ndtrace/1","source":"%s","format":"chrome","origin_ns":1700000000000000000,"host":null,"rank":%s,"producer":"hand 1"}\n' \
	    "$1" "${2:-0}"
}
# host span: ts dur name cat class [args]
hs() {
	printf '{"type":"span","ts_ns":%s,"dur_ns":%s,"name":"%s","pid":100,"tid":1,"cat":"%s","class":"%s","args":{%s}}\n' \
	    "$1" "$2" "$3" "$4" "$5" "${6:-}"
}
# GPU op: ts dur name tid cat class correlation
gs() {
	printf '{"type":"span","ts_ns":%s,"dur_ns":%s,"name":"%s","pid":0,"tid":%s,"device":"GPU:0","cat":"%s","class":"%s","args":{"correlation":%s}}\n' \
	    "$1" "$2" "$3" "$4" "$5" "$6" "$7"
}

# A GPU rank (the stream of trace-steps.bats): K1 [100,400), K2 [500,600),
# K3 [1000,1800) on stream 7; an all-reduce [300,550) on stream 8; a copy
# [650,700) on stream 9.  Launches (correlation ids) at 20, 40, 50 for
# K1, the all-reduce, K2; the copy is launched at 620, K3 at 1000; a
# cudaDeviceSynchronize [700,740) and a data loader wait [750,900).
#   device gaps:   [600,650) copy launched at 620 >= 600       host_wait
#                  [700,1000) the sync overlaps it              sync
#   stream 7 gaps: [400,500) K2 launched at 50, 100 ns < 30 us  kernel_wait
#                  [600,1000) the sync overlaps it              sync
gpu_stream() { # [K3 start]
	k3=${1:-1000}
	meta rank0.json 0
	hs 0 1000 'ProfilerStep#1' user_annotation host
	hs 0 90 aten::mm cpu_op host
	hs 20 10 cudaLaunchKernel cuda_runtime host '"correlation":1'
	hs 40 5 cudaLaunchKernel cuda_runtime host '"correlation":2'
	hs 50 5 cudaLaunchKernel cuda_runtime host '"correlation":3'
	hs 620 5 cudaMemcpyAsync cuda_runtime host '"correlation":4'
	hs 700 40 cudaDeviceSynchronize cuda_runtime stall
	hs 750 150 dataloader cpu_op stall
	hs 1000 1000 'ProfilerStep#2' user_annotation host
	hs 1000 5 cudaLaunchKernel cuda_runtime host '"correlation":5'
	gs 100 300 K1 7 kernel compute 1
	gs 500 100 K2 7 kernel compute 3
	gs "$k3" $((1800 - k3)) K3 7 kernel compute 5
	gs 300 250 ncclAllReduce 8 kernel communication 2
	gs 650 50 'Memcpy DtoD' 9 gpu_memcpy memory 4
	echo '{"type":"end","spans":15}'
}

SEL='select(.type=="gap") | {ts_ns,dur_ns,before,marker,payload,payload_index,cause}'

# the same gaps from the independent script (its options: level, min, kw)
cross_check() { # file level min kernel_wait
	run bash -c "trace-gaps -l $2 -m ${3}ns -K ${4}ns '$1' | jq -c '$SEL' | sort"
	want=$output
	run bash -c "$PY '$CHECK' --level $2 --min $3 --kernel-wait $4 '$1' | jq -c '{ts_ns,dur_ns,before,marker,payload,payload_index,cause}' | sort"
	assert_output "$want"
}

@test "device level: exact gaps of a GPU with three streams, causes host_wait and sync" {
	gpu_stream > "$T/g.ndjson"
	run trace-gaps "$T/g.ndjson"
	assert_success
	assert_output - <<'E'
{"type":"meta","schema":"ndtrace/1","source":"rank0.json","format":"chrome","origin_ns":1700000000000000000,"host":null,"rank":0,"producer":"hand 1"}
{"type":"gap","source":"rank0.json","ts_ns":600,"dur_ns":50,"pid":0,"device":"GPU:0","rank":0,"level":"device","before":"K2","marker":"Memcpy DtoD","payload":"Memcpy DtoD","payload_index":0,"cause":"host_wait"}
{"type":"gap","source":"rank0.json","ts_ns":700,"dur_ns":300,"pid":0,"device":"GPU:0","rank":0,"level":"device","before":"Memcpy DtoD","marker":"K3","payload":"K3","payload_index":0,"cause":"sync"}
E
	cross_check "$T/g.ndjson" device 0 30000
	run bash -c "trace-gaps '$T/g.ndjson' | trace-check"
	assert_success
}

@test "timeline level: per stream; --kernel-wait; --min with units" {
	gpu_stream > "$T/g.ndjson"
	run bash -c "trace-gaps -l timeline '$T/g.ndjson' | jq -c 'select(.type==\"gap\") | [.tid,.thread,.level,.ts_ns,.dur_ns,.before,.marker,.cause]'"
	assert_output - <<'E'
[7,null,"timeline",400,100,"K1","K2","kernel_wait"]
[7,null,"timeline",600,400,"K2","K3","sync"]
E
	run bash -c "trace-gaps -l timeline -K 0 '$T/g.ndjson' | jq -c 'select(.type==\"gap\") | .cause'"
	assert_output - <<'E'
"other"
"sync"
E
	run bash -c "trace-gaps -m 100ns '$T/g.ndjson' | jq -c 'select(.type==\"gap\") | [.ts_ns,.dur_ns]'"
	assert_output '[700,300]'
	run bash -c "trace-gaps -l timeline -m 0.1us '$T/g.ndjson' | jq -c 'select(.type==\"gap\") | [.ts_ns,.dur_ns]'"
	assert_output - <<'E'
[400,100]
[600,400]
E
	run bash -c "trace-gaps -m 1us '$T/g.ndjson' | grep -c gap"
	assert_output 0
	cross_check "$T/g.ndjson" timeline 0 30000
	cross_check "$T/g.ndjson" timeline 100 0
	cross_check "$T/g.ndjson" device 60 0
	run trace-gaps -m 10parsecs "$T/g.ndjson"
	assert_failure 2
	assert_output "trace-gaps: invalid duration for --min: '10parsecs' (a number with a unit: e.g. 500ns, 10us, 1.5ms, 2s)"
	run trace-gaps -l stream "$T/g.ndjson"
	assert_failure 2
	assert_output "trace-gaps: invalid value for --level: 'stream' (use device or timeline)"
}

# A TPU core.  XLA Ops (tid 1):
#   fusion.1 [0,100) | iota.1 constant.2 bitcast.3 [200,225) fusion.4 [225,300)
#   | copy-start.5 [400,410) | fusion.6 [500,600)
#   | get-tuple-element.7..14 [700,780) all-reduce.15 [780,900)
#   | tuple.16 parameter.17 after-all.18 iota.19 constant.20 bitcast.21
#     copy-done.22 [950,1020) all-reduce.23 [1020,1100) | fusion.24 [1200,1300)
# Async XLA Ops (tid 2): async-copy.1 [150,180).
tpu_stream() {
	meta tpu.pb null
	x() { printf '{"type":"span","ts_ns":%s,"dur_ns":%s,"name":"%s","pid":1,"tid":%s,"process":"/device:TPU:0","thread":"%s","device":"TPU:0","class":"%s","step":3,"scope":"train/%s"}\n' "$1" "$2" "$3" "$4" "$5" "$6" "$3"; }
	x 0 100 fusion.1 1 'XLA Ops' compute
	x 200 10 iota.1 1 'XLA Ops' compute
	x 210 10 constant.2 1 'XLA Ops' compute
	x 220 5 bitcast.3 1 'XLA Ops' compute
	x 225 75 fusion.4 1 'XLA Ops' compute
	x 400 10 copy-start.5 1 'XLA Ops' memory
	x 500 100 fusion.6 1 'XLA Ops' compute
	for i in 0 1 2 3 4 5 6 7; do
		x $((700 + 10 * i)) 10 get-tuple-element.$((7 + i)) 1 'XLA Ops' compute
	done
	x 780 120 all-reduce.15 1 'XLA Ops' communication
	t=950
	for n in tuple.16 parameter.17 after-all.18 iota.19 constant.20 bitcast.21 copy-done.22; do
		x $t 10 $n 1 'XLA Ops' compute
		t=$((t + 10))
	done
	x 1020 80 all-reduce.23 1 'XLA Ops' communication
	x 1200 100 fusion.24 1 'XLA Ops' compute
	x 150 30 async-copy.1 2 'Async XLA Ops' memory
}

@test "payload: past lightweight ops, at most 8 ahead, never across a second gap" {
	tpu_stream > "$T/t.ndjson"
	# g1: iota, constant, bitcast are looked past -> fusion.4 (index 3);
	# g2: copy-start.5 is followed by another gap -> the marker itself;
	# g4: eight lightweight ops -> the marker; g5: seven, then the
	# all-reduce (index 7).
	run bash -c "trace-gaps -l timeline '$T/t.ndjson' | jq -c 'select(.type==\"gap\" and .tid==1) | [.ts_ns,.dur_ns,.before,.marker,.payload,.payload_index,.scope,.step]'"
	assert_output - <<'E'
[100,100,"fusion.1","iota.1","fusion.4",3,"train/fusion.4",3]
[300,100,"fusion.4","copy-start.5","copy-start.5",0,"train/copy-start.5",3]
[410,90,"copy-start.5","fusion.6","fusion.6",0,"train/fusion.6",3]
[600,100,"fusion.6","get-tuple-element.7","get-tuple-element.7",0,"train/get-tuple-element.7",3]
[900,50,"all-reduce.15","tuple.16","all-reduce.23",7,"train/all-reduce.23",3]
[1100,100,"all-reduce.23","fusion.24","fusion.24",0,"train/fusion.24",3]
E
	# a gap shorter than --min is no gap: g2 now looks past it to fusion.6
	run bash -c "trace-gaps -l timeline -m 95ns '$T/t.ndjson' | jq -c 'select(.type==\"gap\") | [.ts_ns,.payload,.payload_index]'"
	assert_output - <<'E'
[100,"fusion.4",3]
[300,"fusion.6",1]
[600,"get-tuple-element.7",0]
[1100,"fusion.24",0]
E
	# device level: the async copy on the other line splits g1
	run bash -c "trace-gaps '$T/t.ndjson' | jq -c 'select(.type==\"gap\") | [.ts_ns,.dur_ns,.before,.marker,.payload,.payload_index,.process,.device]' | head -3"
	assert_output - <<'E'
[100,50,"fusion.1","async-copy.1","async-copy.1",0,"/device:TPU:0","TPU:0"]
[180,20,"async-copy.1","iota.1","fusion.4",3,"/device:TPU:0","TPU:0"]
[300,100,"fusion.4","copy-start.5","copy-start.5",0,"/device:TPU:0","TPU:0"]
E
	cross_check "$T/t.ndjson" device 0 30000
	cross_check "$T/t.ndjson" timeline 0 50
	cross_check "$T/t.ndjson" timeline 95 30000
	cross_check "$T/t.ndjson" device 60 50
}

@test "causes without launch data: kernel_wait, collective_wait, other" {
	tpu_stream > "$T/t.ndjson"
	run bash -c "trace-gaps -l timeline '$T/t.ndjson' | jq -r 'select(.type==\"gap\") | .cause' | sort | uniq -c | tr -s ' '"
	assert_output ' 6 kernel_wait'
	# with a 50 ns threshold: the 50 ns gap before the all-reduce waits on
	# the collective; the others are longer and have no other explanation
	run bash -c "trace-gaps -l timeline -K 50ns '$T/t.ndjson' | jq -c 'select(.type==\"gap\") | [.ts_ns,.cause]'"
	assert_output - <<'E'
[100,"other"]
[300,"other"]
[410,"other"]
[600,"other"]
[900,"collective_wait"]
[1100,"other"]
E
	# a host communication span over a gap makes it a collective wait
	{ tpu_stream; printf '{"type":"span","ts_ns":590,"dur_ns":20,"name":"gloo:all_reduce","pid":9,"tid":9,"class":"communication"}\n'; } > "$T/c.ndjson"
	run bash -c "trace-gaps -l timeline -K 50ns '$T/c.ndjson' | jq -c 'select(.type==\"gap\" and .ts_ns==600) | .cause'"
	assert_output '"collective_wait"'
	cross_check "$T/c.ndjson" timeline 0 50
}

@test "--host-context: the host spans that overlap each gap most" {
	gpu_stream > "$T/g.ndjson"
	run bash -c "trace-gaps -c '$T/g.ndjson' | jq -c 'select(.type==\"gap\") | [.ts_ns, .host_context]'"
	assert_output - <<'E'
[600,[{"name":"cudaMemcpyAsync","ts_ns":620,"dur_ns":5,"overlap_ns":5}]]
[700,[{"name":"dataloader","ts_ns":750,"dur_ns":150,"overlap_ns":150},{"name":"cudaDeviceSynchronize","ts_ns":700,"dur_ns":40,"overlap_ns":40}]]
E
}

@test "--within-steps: gaps cut at step boundaries, with the window's step" {
	gpu_stream 1100 > "$T/g.ndjson"
	run bash -c "trace-gaps '$T/g.ndjson' | jq -c 'select(.type==\"gap\") | [.ts_ns,.dur_ns,.step,.cause]'"
	assert_output - <<'E'
[600,50,null,"host_wait"]
[700,400,null,"sync"]
E
	run bash -c "trace-gaps -S '$T/g.ndjson' | jq -c 'select(.type==\"gap\") | [.ts_ns,.dur_ns,.step,.marker,.cause]'"
	assert_output - <<'E'
[600,50,1,"Memcpy DtoD","host_wait"]
[700,300,1,"K3","sync"]
[1000,100,2,"K3","sync"]
E
	run bash -c "trace-gaps -S -m 200ns '$T/g.ndjson' | jq -c 'select(.type==\"gap\") | [.ts_ns,.dur_ns,.step]'"
	assert_output '[700,300,1]'
	# device windows (the ops' step keys): every gap of the TPU is in step 3
	tpu_stream > "$T/t.ndjson"
	run bash -c "trace-gaps -S '$T/t.ndjson' | jq -c 'select(.type==\"gap\") | .step' | sort | uniq -c | tr -s ' '"
	assert_output ' 7 3'
	# steps from a regex on the host: here one window [0,90)
	run bash -c "trace-gaps -S -x '^aten::mm$' '$T/g.ndjson' | grep -c '\"gap\"'"
	assert_output 0
}

@test "CPU-only profile: host timelines, said so" {
	{ meta cpu.json null
	  printf '{"type":"span","ts_ns":0,"dur_ns":100,"name":"ProfilerStep#1","pid":1,"tid":1}\n'
	  printf '{"type":"span","ts_ns":0,"dur_ns":40,"name":"forward","pid":1,"tid":1}\n'
	  printf '{"type":"span","ts_ns":50,"dur_ns":40,"name":"backward","pid":1,"tid":1}\n'
	  printf '{"type":"span","ts_ns":100,"dur_ns":100,"name":"ProfilerStep#2","pid":1,"tid":1}\n'
	  printf '{"type":"span","ts_ns":100,"dur_ns":50,"name":"forward","pid":1,"tid":1}\n'
	} > "$T/c.ndjson"
	run bash -c "trace-gaps '$T/c.ndjson' | jq -c 'select(.type==\"gap\") | [.ts_ns,.dur_ns,.pid,.before,.marker,.cause,.host_timelines]'"
	assert_output - <<'E'
[40,10,1,"forward","backward","kernel_wait",true]
[90,10,1,"backward","forward","kernel_wait",true]
E
	cross_check "$T/c.ndjson" device 0 30000
}

@test "order: a stream out of order gives the ordered answer, from a file (read again) or a pipe (spooled), or with --unordered in one reading" {
	tpu_stream > "$T/t.ndjson"
	{ head -1 "$T/t.ndjson"; sed 1d "$T/t.ndjson" | sort -r; } > "$T/r.ndjson"
	for l in device timeline; do
		run trace-gaps -l $l "$T/t.ndjson"
		want=$(printf '%s\n' "$output" | sed "s|$T/t.ndjson|X|g")
		[ "$(printf '%s\n' "$want" | grep -c '"type":"gap"')" -gt 3 ]
		run env ND_DRIVE_STATS=1 trace-gaps -l $l "$T/r.ndjson"
		assert_success
		assert_line "trace-gaps: 2 passes, 0 bytes of stdin spooled"
		[ "$(printf '%s\n' "$output" | grep -v passes | sed "s|$T/r.ndjson|X|g")" = "$want" ]
		run bash -c "cat '$T/r.ndjson' | trace-gaps -l $l"
		[ "$(printf '%s\n' "$output" | sed "s|$T/r.ndjson|X|g")" = "$want" ]
		run env ND_DRIVE_STATS=1 trace-gaps -l $l -u "$T/r.ndjson"
		assert_line "trace-gaps: 1 pass, 0 bytes of stdin spooled"
		[ "$(printf '%s\n' "$output" | grep -v pass | sed "s|$T/r.ndjson|X|g")" = "$want" ]
	done
	# an ordered stream is read once
	run env ND_DRIVE_STATS=1 trace-gaps "$T/t.ndjson"
	assert_line "trace-gaps: 1 pass, 0 bytes of stdin spooled"
}

@test "order: in a stream of three sources, a shuffled middle source is read again alone; every source as in the ordered stream" {
	tpu_stream > "$T/t.ndjson"
	{ head -1 "$T/t.ndjson"; sed 1d "$T/t.ndjson" | sort -r; } > "$T/r.ndjson"
	cat "$T/t.ndjson" "$T/r.ndjson" "$T/t.ndjson" > "$T/3.ndjson"
	cat "$T/t.ndjson" "$T/t.ndjson" "$T/t.ndjson" > "$T/o.ndjson"
	run trace-gaps --totals "$T/o.ndjson"
	want=$output
	run bash -c "cat '$T/3.ndjson' | ND_DRIVE_STATS=1 trace-gaps --totals 2>'$T/err'"
	assert_success
	assert_output "$want"
	run cat "$T/err"
	assert_output --regexp '^trace-gaps: 2 passes, [1-9][0-9]* bytes of stdin spooled$'
	# three sources' gaps (counted by jq)
	n=$(trace-gaps "$T/3.ndjson" | jq -s '[.[] | select(.type == "gap")] | length')
	one=$(trace-gaps "$T/t.ndjson" | jq -s '[.[] | select(.type == "gap")] | length')
	[ "$n" -eq $((3 * one)) ]
}

@test "many gaps: spooled to a file and read back, on any timeline interleaving" {
	# 30,000 random ops on 4 devices: about 3,000 gaps, so each timeline
	# moves gaps to its spool many times; ND_SPOOL_MEM=1 puts the spool in
	# its temporary file at once.
	gen-stream -n 30000 -s 7 > "$T/r.ndjson"
	n=$(trace-gaps "$T/r.ndjson" | jq -s 'map(select(.type=="gap")) | length')
	[ "$n" -gt 2000 ]
	export ND_SPOOL_MEM=1
	cross_check "$T/r.ndjson" device 0 30000
	cross_check "$T/r.ndjson" timeline 0 30000
	cross_check "$T/r.ndjson" device 2000 30000
	# one timeline after another (as xplane2ndjson writes them): same gaps
	{ head -1 "$T/r.ndjson"
	  jq -c 'select(.type=="span")' "$T/r.ndjson" |
	      awk '{ match($0, /"pid":[0-9]+/); p = substr($0, RSTART + 6, RLENGTH - 6)
	             printf "%s\t%09d\t%s\n", p, NR, $0 }' |
	      sort -t "$(printf '\t')" -k1,1n -k2,2n | cut -f3-
	  tail -1 "$T/r.ndjson"; } > "$T/seq.ndjson"
	run bash -c "jq -c 'select(.type==\"span\") | .pid' '$T/seq.ndjson' | uniq | wc -l"
	assert_output 4
	for l in device timeline; do
		diff <(trace-gaps -l $l "$T/r.ndjson") <(trace-gaps -l $l "$T/seq.ndjson")
		diff <(unset ND_SPOOL_MEM; trace-gaps -l $l "$T/r.ndjson") \
		    <(trace-gaps -l $l "$T/r.ndjson")
	done
}

@test "several sources: each its own, meta passed through, end consumed" {
	gpu_stream > "$T/a.ndjson"
	{ meta rank1.json 1; gs 0 10 A 7 kernel compute 9; gs 30 10 B 7 kernel compute 10; echo '{"type":"note","x":1}'; echo '{"type":"end","spans":2}'; } > "$T/b.ndjson"
	run bash -c "cat '$T/a.ndjson' '$T/b.ndjson' | trace-gaps | jq -c '[.type, .source, .rank, .ts_ns]'"
	assert_output - <<'E'
["meta","rank0.json",0,null]
["gap","rank0.json",0,600]
["gap","rank0.json",0,700]
["meta","rank1.json",1,null]
["note",null,null,null]
["gap","rank1.json",1,10]
E
	run bash -c "trace-gaps '$T/a.ndjson' '$T/b.ndjson' | trace-check -v"
	assert_success
	assert_output "trace-check: 6 records, 0 spans, 2 sources, 0 problems"
}

@test "trace-topk aggregates the gaps by payload and by cause" {
	tpu_stream > "$T/t.ndjson"
	run bash -c "trace-gaps -l timeline -K 50ns '$T/t.ndjson' | trace-topk --by cause | jq -c 'select(.type==\"top\") | [.cause,.count,.total_ns]'"
	assert_output - <<'E'
["other",5,490]
["collective_wait",1,50]
E
	run bash -c "trace-gaps -l timeline '$T/t.ndjson' | trace-topk --by payload -k 0 | jq -c 'select(.type==\"top\") | [.payload,.count,.total_ns]' | sort"
	assert_output - <<'E'
["all-reduce.23",1,50]
["copy-start.5",1,100]
["fusion.24",1,100]
["fusion.4",1,100]
["fusion.6",1,90]
["get-tuple-element.7",1,100]
E
}

@test "-o writes atomically; --help; unknown option" {
	gpu_stream > "$T/g.ndjson"
	run trace-gaps -o "$T/out.ndjson" "$T/g.ndjson"
	assert_success
	assert_output ""
	run grep -c '"type":"gap"' "$T/out.ndjson"
	assert_output 2
	run trace-gaps --help
	assert_success
	assert_line --index 0 --partial 'usage: trace-gaps'
	run trace-gaps --nope
	assert_failure 2
}

# ---- real profiles ----

need_chrome() {
	need_fixtures
}

@test "real: Kineto traces (an HTA rank, a DLRM rank) agree with the independent script" {
	need_chrome
	chrome2ndjson "$FIXTURES/chrome/dlrm_8ranks/worker0_step_12.1694128201545.pt.trace.json.gz" > "$T/k.ndjson"
	cross_check "$T/k.ndjson" device 0 30000
	cross_check "$T/k.ndjson" timeline 10000 30000
	chrome2ndjson "$FIXTURES/chrome/hta_sampled_rank-0.json.gz" > "$T/k.ndjson"
	cross_check "$T/k.ndjson" device 0 30000
	run bash -c "trace-gaps '$T/k.ndjson' | trace-check"
	assert_success
	# every cause from the launch join appears on the HTA rank
	run bash -c "trace-gaps '$T/k.ndjson' | jq -r 'select(.type==\"gap\") | .cause' | sort -u | tr '\n' ' '"
	assert_output 'collective_wait host_wait kernel_wait other '
}

@test "real: PyTorch legacy (CPU only) uses host timelines" {
	need_chrome
	chrome2ndjson "$FIXTURES/torch-legacy/single.pt.trace.json.gz" > "$T/l.ndjson"
	run bash -c "trace-gaps '$T/l.ndjson' | jq -e -s '[.[] | select(.type==\"gap\")] | length > 0 and all(.host_timelines)'"
	assert_success
	cross_check "$T/l.ndjson" device 0 30000
	cross_check "$T/l.ndjson" timeline 0 30000
}

@test "real: XPlane profiles (TPU, GPUs) agree with the independent script" {
	need_fixtures
	xplane2ndjson "$FIXTURES/xplane/rocm_jax_conv_8gpu.xplane.pb" > "$T/x.ndjson"
	cross_check "$T/x.ndjson" device 0 30000
	cross_check "$T/x.ndjson" timeline 1000 30000
	xplane2ndjson "$FIXTURES/xplane/tpu_inference_4core.xplane.pb" > "$T/x.ndjson"
	cross_check "$T/x.ndjson" device 0 30000
	# the TPU waits seconds before its all-reduces
	run bash -c "trace-gaps -m 1s '$T/x.ndjson' | jq -c 'select(.type==\"gap\" and .device==\"TPU:0\") | .payload' | sort | uniq -c | tr -s ' '"
	assert_line --partial '"all-reduce"'
}
