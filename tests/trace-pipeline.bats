#!/usr/bin/env bats
# trace-pipeline: hand-made pipeline streams whose figures are worked out by
# hand in the comments (times in ns), the default block rules, the clocks,
# the schedules, --table/--svg/--step, partials and the errors.

load helpers

setup() {
	T=$BATS_TEST_TMPDIR
}

# meta SOURCE RANK ORIGIN: a meta record (ORIGIN 0: no absolute clock)
meta() {
	printf '{"type":"meta","schema":"ndtrace/1","source":"%s","format":"chrome","origin_ns":%s,"rank":%s}\n' "$1" "$3" "$2"
}
# sp NAME TS DUR [EXTRA]: a host span on pid 1 tid 1; EXTRA: ,"key":value...
sp() {
	printf '{"type":"span","ts_ns":%s,"dur_ns":%s,"name":"%s","pid":1,"tid":1%s}\n' "$2" "$3" "$1" "${4:-}"
}

# 2 stages, 3 micro-batches, 1F1B, F = 10, B = 20, no comm delay:
#   stage 0: F0 [0,10) F1 [10,20) B0 [40,60) F2 [60,70) B1 [70,90) B2 [100,120)
#   stage 1: F0 [10,20) B0 [20,40) F1 [40,50) B1 [50,70) F2 [70,80) B2 [80,100)
# shift: ADD to every ts (a rank's own clock); step: EXTRA of every block
onef1b() { # FILE0 FILE1 ORIGIN SHIFT0 SHIFT1 EXTRA
	{ meta r0 0 "$3"
	  sp forward_step#0 $((0 + $4)) 10 "$6"
	  sp forward_step#1 $((10 + $4)) 10 "$6"
	  sp backward_step#0 $((40 + $4)) 20 "$6"
	  sp forward_step#2 $((60 + $4)) 10 "$6"
	  sp backward_step#1 $((70 + $4)) 20 "$6"
	  sp backward_step#2 $((100 + $4)) 20 "$6"; } >"$1"
	{ meta r1 1 "$3"
	  sp forward_step#0 $((10 + $5)) 10 "$6"
	  sp backward_step#0 $((20 + $5)) 20 "$6"
	  sp forward_step#1 $((40 + $5)) 10 "$6"
	  sp backward_step#1 $((50 + $5)) 20 "$6"
	  sp forward_step#2 $((70 + $5)) 10 "$6"
	  sp backward_step#2 $((80 + $5)) 20 "$6"; } >"$2"
}

@test "1F1B, 2 stages, absolute clocks: every figure of pipe_rank and pipe_step" {
	onef1b "$T/a.nd" "$T/b.nd" 1000 0 0
	run trace-pipeline "$T/a.nd" "$T/b.nd"
	assert_success
	# meta lines first, 12 pipe_mb, 2 pipe_rank, 1 pipe_step
	assert_equal "$(printf '%s\n' "$output" | jq -r .type | uniq -c | awk '{printf "%s%s ", $2, $1}')" "meta2 pipe_mb12 pipe_rank2 pipe_step1 "
	# window [0,120) = 120.  stage 0: busy 3*10 + 3*20 = 90, idle [20,40)
	# + [90,100) = 30, all between its blocks (warm-up 0, cool-down 0);
	# stage 1: busy 90, idle [0,10) warm-up, [100,120) cool-down 20
	# fb_per_mb = 90 / 3 = 30 on both: slow is the lowest rank, explains 0
	run bash -c "trace-pipeline '$T/a.nd' '$T/b.nd' | jq -c 'select(.type==\"pipe_rank\") | [.stage,.window_ns,.busy_ns,.bubble_ns,.bubble_frac,.warmup_ns,.cooldown_ns,.steady_ns,.p2p_wait_ns,.mb,.f_ns,.b_ns,.w_ns,.fb_per_mb_ns,.explained_ns,.order]'"
	assert_output '[0,120,90,30,0.25,0,0,30,0,3,30,60,0,30,0,"F0 F1 B0 F2 B1 B2"]
[1,120,90,30,0.25,10,20,0,0,3,30,60,0,30,0,"F0 B0 F1 B1 F2 B2"]'
	# bubble_frac = 60 / (2 * 120) = 0.25; ideal (p-1)/(m+p-1) = 1/4;
	# stage 0 runs F2 after B0: 1f1b
	run bash -c "trace-pipeline '$T/a.nd' '$T/b.nd' | jq -c 'select(.type==\"pipe_step\")'"
	assert_output '{"type":"pipe_step","step":0,"stages":2,"microbatches":3,"schedule":"1f1b","clock":"absolute","window_ns":120,"busy_ns":180,"bubble_ns":60,"bubble_frac":0.25,"ideal_bubble_frac":0.25,"slow_rank":0,"slow_stage":0,"slow_fb_per_mb_ns":30}'
	# a pipe_mb keeps the span's own ts; at_ns counts from the window
	run bash -c "trace-pipeline '$T/a.nd' '$T/b.nd' | jq -c 'select(.type==\"pipe_mb\" and .rank==1 and .phase==\"B\" and .mb==1)'"
	assert_output '{"type":"pipe_mb","step":0,"rank":1,"stage":1,"phase":"B","mb":1,"at_ns":50,"ts_ns":50,"dur_ns":20,"name":"backward_step#1"}'
}

@test "clocks: absolute origins shift a rank; step markers; first_block" {
	# rank 1's origin is 1000 ns later and its spans 1000 ns earlier: the
	# same schedule as above in the common clock
	onef1b "$T/a.nd" "$T/b.nd" 5000 0 -1000
	sed -i 's/"origin_ns":5000,"rank":1/"origin_ns":6000,"rank":1/' "$T/b.nd"
	run bash -c "trace-pipeline '$T/a.nd' '$T/b.nd' | jq -r 'select(.type==\"pipe_step\") | [.clock,.window_ns,.bubble_ns] | @tsv'"
	assert_output "$(printf 'absolute\t120\t60')"
	# no origins: each rank aligned on its ProfilerStep#7 (rank 0's at
	# 500, rank 1's at 3000, blocks shifted with them): the same figures
	onef1b "$T/a.nd" "$T/b.nd" 0 500 3000 ',"step":7'
	sp ProfilerStep#7 500 200 ',"cat":"user_annotation"' >>"$T/a.nd"
	sp ProfilerStep#7 3000 200 ',"cat":"user_annotation"' >>"$T/b.nd"
	run bash -c "trace-pipeline '$T/a.nd' '$T/b.nd' | jq -r 'select(.type==\"pipe_step\") | [.step,.clock,.window_ns,.bubble_ns,.schedule] | @tsv'"
	assert_output "$(printf '7\tstep_marker\t120\t60\t1f1b')"
	# rank 1 without its marker: its first block (F0, at 10 in the
	# schedule) goes to 0, so its blocks end at 90 and the window stays
	# [0,120): rank 1 busy 90, warm-up 0, cool-down [90,120) = 30
	onef1b "$T/a.nd" "$T/b.nd" 0 500 3000 ',"step":7'
	sp ProfilerStep#7 500 200 ',"cat":"user_annotation"' >>"$T/a.nd"
	run bash -c "trace-pipeline '$T/a.nd' '$T/b.nd' | jq -r 'select(.type==\"pipe_step\" or .type==\"pipe_rank\") | [.type,.clock,.window_ns,.warmup_ns,.cooldown_ns,.bubble_ns] | @tsv'"
	assert_output "$(printf 'pipe_rank\t\t120\t0\t0\t30\npipe_rank\t\t120\t0\t30\t30\npipe_step\tfirst_block\t120\t\t\t60')"
}

@test "gpipe: all F before any B; ideal 1/(m+p-1)" {
	# stage 0: F0 [0,10) F1 [10,20) B0 [50,70) B1 [70,90)
	# stage 1: F0 [10,20) F1 [20,30) B0 [30,50) B1 [50,70)
	# window 90; stage 0 idle [20,50) = 30 (steady); stage 1 idle [0,10)
	# warm-up + [70,90) cool-down = 30.  bubble_frac 60/180 = 0.3333,
	# ideal 1/(2+2-1) = 0.3333
	{ meta r0 0 1; sp forward_step#0 0 10; sp forward_step#1 10 10
	  sp backward_step#0 50 20; sp backward_step#1 70 20; } >"$T/a.nd"
	{ meta r1 1 1; sp forward_step#0 10 10; sp forward_step#1 20 10
	  sp backward_step#0 30 20; sp backward_step#1 50 20; } >"$T/b.nd"
	run bash -c "trace-pipeline '$T/a.nd' '$T/b.nd' | jq -r 'select(.type==\"pipe_step\") | [.schedule,.microbatches,.window_ns,.bubble_ns,.bubble_frac,.ideal_bubble_frac] | @tsv'"
	assert_output "$(printf 'gpipe\t2\t90\t60\t0.3333\t0.3333')"
}

@test "interleaved: two F blocks of one micro-batch on a rank; ideal 1/(v*m+p-1)" {
	# torch.distributed.pipelining actions STAGE F/B MB: rank 0 holds
	# stages 0 and 2, rank 1 stages 1 and 3 (v = 2 chunks, m = 2):
	# ideal = (2-1)/(2*2+2-1) = 0.2
	{ meta r0 0 1; sp 0F0 0 10; sp 0F1 10 10; sp 2F0 30 10; sp 2F1 40 10
	  sp 2B0 80 20; sp 2B1 100 20; sp 0B0 140 20; sp 0B1 160 20; } >"$T/a.nd"
	{ meta r1 1 1; sp 1F0 10 10; sp 1F1 20 10; sp 3F0 40 10; sp 3F1 50 10
	  sp 3B0 60 20; sp 3B1 80 20; sp 1B0 120 20; sp 1B1 140 20; } >"$T/b.nd"
	run bash -c "trace-pipeline '$T/a.nd' '$T/b.nd' | jq -r 'select(.type==\"pipe_step\" or .type==\"pipe_rank\") | [.type,.schedule,.microbatches,.ideal_bubble_frac,.mb,.order] | @tsv'"
	assert_output "$(printf 'pipe_rank\t\t\t\t2\tF0 F1 F0 F1 B0 B1 B0 B1\npipe_rank\t\t\t\t2\tF0 F1 F0 F1 B0 B1 B0 B1\npipe_step\tinterleaved\t2\t0.2\t\t')"
}

@test "zero_bubble: W blocks; no ideal fraction; w_ns and fb_per_mb" {
	# rank 0: F0 [0,10) F1 [10,20) B0 [40,50) W0 [50,60) B1 [60,70) W1 [70,80)
	# rank 1: F0 [10,20) B0 [20,30) F1 [30,40) B1 [40,50) W0 [50,60) W1 [60,70)
	# rank 0: f 20 + b 20 + w 20 = 60 over 2 mb = 30; window [0,80)
	{ meta r0 0 1; sp 0F0 0 10; sp 0F1 10 10; sp 0I0 40 10; sp 0W0 50 10
	  sp "backward_step#1" 60 10; sp "backward_weight 1" 70 10; } >"$T/a.nd"
	{ meta r1 1 1; sp 1F0 10 10; sp 1B0 20 10; sp 1F1 30 10; sp 1B1 40 10
	  sp "Backward Weight 0" 50 10; sp 1W1 60 10; } >"$T/b.nd"
	run bash -c "trace-pipeline '$T/a.nd' '$T/b.nd' | jq -c 'select(.type==\"pipe_step\" or .type==\"pipe_rank\") | [.type,.schedule,.ideal_bubble_frac,.w_ns,.fb_per_mb_ns,.order,.busy_ns,.window_ns]'"
	assert_output '["pipe_rank",null,null,20,30,"F0 F1 B0 W0 B1 W1",60,80]
["pipe_rank",null,null,20,30,"F0 B0 F1 B1 W0 W1",60,80]
["pipe_step","zero_bubble",null,null,null,null,120,80]'
	run bash -c "trace-pipeline '$T/a.nd' '$T/b.nd' | grep -c ideal_bubble_frac"
	assert_output 0
}

@test "a rank with device ops: busy is its kernels, P2P kernels are waits" {
	# rank 0: forward_step#0 [0,100) and backward_step#0 [200,300) on the
	# host; kernels [10,60), [210,260); an NCCL SendRecv kernel [100,180)
	# (P2P: not work).  Window [0,300): busy 50 + 50 = 100, bubble 200,
	# warm-up 0 (first block at 0), cool-down 0 (last ends at 300),
	# steady 200; idle [0,10) [60,210) [260,300) holds all of [100,180):
	# p2p_wait 80.
	# rank 1: blocks [100,200) [200,300), kernels [110,190) [210,290):
	# busy 160, bubble 140, warm-up = idle in [0,100) = 100, cool-down
	# 0 (its last block ends at 300), steady 40; no P2P.
	k() { printf '{"type":"span","ts_ns":%s,"dur_ns":%s,"name":"%s","pid":1,"tid":7,"cat":"kernel"}\n' "$2" "$3" "$1"; }
	# Kineto's GPU copy of a host range (gpu_user_annotation) is no block:
	# f_ns stays 100 and the schedule is not "interleaved"
	{ meta r0 0 1; sp forward_step#0 0 100; sp backward_step#0 200 100
	  k gemm 10 50; k ncclKernel_SendRecv 100 80; k gemm 210 50
	  printf '%s\n' '{"type":"span","ts_ns":5,"dur_ns":90,"name":"forward_step#0","pid":1,"tid":7,"cat":"gpu_user_annotation"}'; } >"$T/a.nd"
	{ meta r1 1 1; sp forward_step#0 100 100; sp backward_step#0 200 100
	  k gemm 110 80; k gemm 210 80; } >"$T/b.nd"
	run bash -c "trace-pipeline '$T/a.nd' '$T/b.nd' | jq -c 'select(.type==\"pipe_rank\") | [.busy_ns,.bubble_ns,.warmup_ns,.cooldown_ns,.steady_ns,.p2p_wait_ns,.f_ns,.b_ns]'"
	assert_output '[100,200,0,0,200,80,100,100]
[160,140,100,0,40,0,100,100]'
	run bash -c "trace-pipeline '$T/a.nd' '$T/b.nd' | jq -r 'select(.type==\"pipe_step\") | [.schedule,.busy_ns,.bubble_ns] | @tsv'"
	assert_output "$(printf 'gpipe\t260\t340')"
}

@test "a CPU rank: P2P wait is a send/recv outside its blocks" {
	# rank 0: F0 [0,10), recv [10,30) (gloo), B0 [30,50): window [0,50),
	# busy 30, p2p_wait 20 (the recv is all idle); a send inside a block
	# ([35,40)) is no wait.  rank 1: F0 [10,20) B0 [20,30).
	{ meta r0 0 1; sp forward_step#0 0 10; sp gloo:recv 10 20
	  sp backward_step#0 30 20; sp gloo:send 35 5; } >"$T/a.nd"
	{ meta r1 1 1; sp forward_step#0 10 10; sp backward_step#0 20 10; } >"$T/b.nd"
	run bash -c "trace-pipeline '$T/a.nd' '$T/b.nd' | jq -c 'select(.type==\"pipe_rank\") | [.window_ns,.busy_ns,.p2p_wait_ns]'"
	assert_output '[50,30,20]
[50,20,0]'
}

@test "the slow stage and how much of the others' bubble it explains" {
	# rank 0: F0 [0,10) F1 [10,20) B0 [70,90) B1 [90,110): f 20, b 40,
	#   fb_per_mb 60/2 = 30; window [0,130): busy 60, bubble 70
	# rank 1: F0 [10,30) B0 [30,70) F1 [70,90) B1 [90,130): f 40, b 80,
	#   fb_per_mb 120/2 = 60 (slow); busy 120, bubble 10
	# explained(rank 0) = min(70, 2 * (60 - 30)) = 60, 60/70 = 0.8571;
	# the step's bubble 70 + 10 = 80
	{ meta r0 0 1; sp forward_step#0 0 10; sp forward_step#1 10 10
	  sp backward_step#0 70 20; sp backward_step#1 90 20; } >"$T/a.nd"
	{ meta r1 1 1; sp forward_step#0 10 20; sp backward_step#0 30 40
	  sp forward_step#1 70 20; sp backward_step#1 90 40; } >"$T/b.nd"
	run bash -c "trace-pipeline '$T/a.nd' '$T/b.nd' | jq -c 'select(.type==\"pipe_rank\" or .type==\"pipe_step\") | [.type,.bubble_ns,.fb_per_mb_ns,.explained_ns,.explained_frac,.slow_rank,.slow_stage,.slow_fb_per_mb_ns]'"
	assert_output '["pipe_rank",70,30,60,0.8571,null,null,null]
["pipe_rank",10,60,0,0,null,null,null]
["pipe_step",80,null,null,null,1,1,60]'
	# by an independent computation from the pipe_rank records
	run bash -c "trace-pipeline '$T/a.nd' '$T/b.nd' | jq -s '[.[] | select(.type==\"pipe_rank\")] as \$r | (\$r | max_by(.fb_per_mb_ns)) as \$s | [\$r[] | ([.bubble_ns, .mb * (\$s.fb_per_mb_ns - .fb_per_mb_ns)] | min | if . < 0 then 0 else . end) == .explained_ns] | all'"
	assert_output true
}

@test "default rules: each name's phase and micro-batch (one step each)" {
	names=("forward_step#3" "forward_step" "backward_step#0" "Forward 3"
	    "Backward 3" "0F3" "1B2" "0W1" "0I1" "forward-compute"
	    "megatron/core/pipeline_parallel/schedules.py(123): forward_step"
	    "backward_weight 2" "Backward Weight 2" "forward_step mb=4"
	    "forward_step 5" "weight_grad" "send_forward#3" "recv_backward#2"
	    "ProfilerStep#3" "aten::linear"
	    "autograd::engine::evaluate_function: AddmmBackward0"
	    "forward-recv" "backward-send")
	{ meta r0 0 1
	  # a rank with only W blocks is no stage: a B block in every step
	  for i in "${!names[@]}"; do
		sp "${names[$i]}" $((i * 100)) 50 ",\"step\":$i"
		sp "backward_step#9" $((i * 100 + 60)) 10 ",\"step\":$i"
	  done; } >"$T/a.nd"
	run bash -c "trace-pipeline '$T/a.nd' | jq -r 'select(.type==\"pipe_mb\" and .name!=\"backward_step#9\") | [.step,.phase,.mb,.name] | @tsv'"
	# no number: the ordinal among the rank's blocks of the step (0)
	assert_output "$(printf '%s\n' \
	    '0	F	3	forward_step#3' '1	F	0	forward_step' \
	    '2	B	0	backward_step#0' '3	F	3	Forward 3' \
	    '4	B	3	Backward 3' '5	F	3	0F3' '6	B	2	1B2' \
	    '7	W	1	0W1' '8	B	1	0I1' '9	F	0	forward-compute' \
	    '10	F	0	megatron/core/pipeline_parallel/schedules.py(123): forward_step' \
	    '11	W	2	backward_weight 2' '12	W	2	Backward Weight 2' \
	    '13	F	4	forward_step mb=4' '14	F	5	forward_step 5' \
	    '15	W	0	weight_grad')"
	# without numbers: ordinals in start order within (rank, step, phase)
	{ meta r0 0 1; sp forward_step 0 10; sp forward_step 10 10
	  sp backward_step 20 10; sp forward_step 30 10; } >"$T/b.nd"
	run bash -c "trace-pipeline '$T/b.nd' | jq -r 'select(.type==\"pipe_rank\") | .order'"
	assert_output "F0 F1 B0 F2"
	# the rules can be changed (replacing the defaults); the first
	# capture group that is all digits numbers the micro-batch
	run trace-pipeline --forward '^fwd-(mb)([0-9]+)$' --backward '^bwd$' "$T/b.nd"
	assert_success
	assert_output "trace-pipeline: no forward/backward blocks found: no span name matches the rules; see --forward and --backward"
	{ meta r0 0 1; sp fwd-mb7 0 10; sp bwd 10 10; } >"$T/c.nd"
	run bash -c "trace-pipeline --forward '^fwd-(mb)([0-9]+)$' --backward '^bwd$' '$T/c.nd' | jq -r 'select(.type==\"pipe_rank\") | .order'"
	assert_output "F7 B0"
	# without case; --wgrad is tried before --backward
	run bash -c "trace-pipeline --forward '^FWD-(MB)([0-9]+)$' --backward '^xx$' --wgrad '^bwd$' '$T/c.nd' | jq -r 'select(.type==\"pipe_rank\") | .order'"
	assert_output "F7 W0"
}

@test "nested blocks are dropped: the outermost block of a timeline counts" {
	# forward_step [0,100) holds forward_step#5 [10,50) on pid 1 tid 1:
	# one F block (ordinal 0); the same on another thread is a block
	{ meta r0 0 1; sp forward_step 0 100; sp forward_step#5 10 40
	  sp backward_step 100 50; } >"$T/a.nd"
	run bash -c "trace-pipeline '$T/a.nd' | jq -r 'select(.type==\"pipe_rank\") | [.order,.f_ns] | @tsv'"
	assert_output "$(printf 'F0 B0\t100')"
	printf '%s\n' '{"type":"span","ts_ns":10,"dur_ns":40,"name":"forward_step#5","pid":1,"tid":2}' >>"$T/a.nd"
	run bash -c "trace-pipeline '$T/a.nd' | jq -r 'select(.type==\"pipe_rank\") | [.order,.f_ns] | @tsv'"
	assert_output "$(printf 'F0 F5 B0\t140')"
}

@test "--step, --table" {
	{ meta r0 0 1
	  sp forward_step#0 0 10 ',"step":1'; sp backward_step#0 10 20 ',"step":1'
	  sp forward_step#0 100 10 ',"step":2'; sp backward_step#0 110 30 ',"step":2'; } >"$T/a.nd"
	run bash -c "trace-pipeline '$T/a.nd' | jq -r 'select(.type==\"pipe_step\") | [.step,.window_ns,.schedule] | @tsv'"
	assert_output "$(printf '1\t30\tnone\n2\t40\tnone')"
	run bash -c "trace-pipeline --step 2 '$T/a.nd' | jq -r '[.type,.step] | @tsv'"
	assert_output "$(printf 'meta\t\npipe_mb\t2\npipe_mb\t2\npipe_rank\t2\npipe_step\t2')"
	run trace-pipeline --step 3 "$T/a.nd"
	assert_failure 2
	assert_output "trace-pipeline: --step 3: no such step with forward/backward blocks (steps 1 to 2)"
	onef1b "$T/b.nd" "$T/c.nd" 1000 0 0
	run trace-pipeline --table "$T/b.nd" "$T/c.nd"
	assert_success
	assert_line --index 0 "step 0: 2 stages, 3 micro-batches, schedule 1f1b, clock absolute, window 120ns, bubble 25.0% (ideal 25.0%), slow stage 0 (rank 0, 30ns per micro-batch)"
	assert_line --index 3 "    1        1       90ns       30ns    25.0%        10ns        20ns         0ns         0ns     3       30ns         0ns  F0 B0 F1 B1 F2 B2"
}

@test "--svg: the chart of one step is well-formed SVG" {
	onef1b "$T/a.nd" "$T/b.nd" 1000 0 0
	run trace-pipeline --svg -o "$T/c.svg" "$T/a.nd" "$T/b.nd"
	assert_success
	run head -c 4 "$T/c.svg"
	assert_output "<svg"
	run "$PY" -c "import sys, xml.etree.ElementTree as E; r = E.parse(sys.argv[1]).getroot(); print(r.tag.split('}')[-1])" "$T/c.svg"
	assert_output svg
	run trace-pipeline --svg --table "$T/a.nd"
	assert_failure 2
	assert_output "trace-pipeline: --table and --svg: give one of them"
}

@test "--partial/--merge: the merge of per-rank partials is one run over all" {
	onef1b "$T/a.nd" "$T/b.nd" 0 500 3000 ',"step":7'
	sp ProfilerStep#7 500 200 ',"cat":"user_annotation"' >>"$T/a.nd"
	sp gloo:recv 3000 10 >>"$T/b.nd"
	trace-pipeline "$T/a.nd" "$T/b.nd" >"$T/one"
	trace-pipeline --partial -o "$T/p0" "$T/a.nd"
	trace-pipeline --partial -o "$T/p1" "$T/b.nd"
	run trace-pipeline --merge "$T/p0" "$T/p1"
	assert_success
	[ "$output" = "$(cat "$T/one")" ] || fail "merge differs from one run"
	[ "$(grep -c pipe_mb "$T/one")" -eq 12 ]
	# a reduction tree, and stdin
	run bash -c "cat '$T/p0' '$T/p1' | trace-pipeline --merge --partial | trace-pipeline --merge --table"
	assert_success
	assert_line --index 0 --partial "step 7: 2 stages, 3 micro-batches, schedule 1f1b, clock first_block"
	# a torn partial is an error, not a wrong merge
	head -c 400 "$T/p1" >"$T/torn"
	run trace-pipeline --merge "$T/p0" "$T/torn"
	assert_failure 2
	assert_output --partial "trace-pipeline: $T/torn:"
	# a record the framing vouches for but the engine cannot read (a
	# pipe_block without ts_ns, trailer made anew): named with its line
	$PY -c 'import hashlib, json, sys
ls = open(sys.argv[1]).read().splitlines(True)[:-1]
i = next(i for i, l in enumerate(ls) if l.startswith("{\"type\":\"pipe_block\""))
r = json.loads(ls[i]); del r["ts_ns"]
ls[i] = json.dumps(r, separators=(",", ":")) + "\n"
body = "".join(ls).encode()
print(i + 1)
open(sys.argv[2], "wb").write(body + (json.dumps({"type": "partial_end", "records": len(ls) - 1,
    "sha256": hashlib.sha256(body).hexdigest()}, separators=(",", ":")) + "\n").encode())' "$T/p1" "$T/bad" >"$T/badline"
	run trace-pipeline --merge "$T/p0" "$T/bad"
	assert_failure 2
	assert_output "trace-pipeline: $T/bad:$(cat "$T/badline"): pipe_block record without a valid \"ts_ns\""
	# partials made with other rules do not merge
	trace-pipeline --partial --p2p 'isend' -o "$T/p2" "$T/b.nd"
	run trace-pipeline --merge "$T/p0" "$T/p2"
	assert_failure 2
	assert_output "trace-pipeline: $T/p2:1: partial results made with other rules than the first: give every --partial job the same --forward, --backward, --wgrad and --p2p"
	run trace-pipeline --merge --forward x "$T/p0"
	assert_failure 2
	assert_output "trace-pipeline: --merge takes --forward, --backward, --wgrad and --p2p from the partial results; do not give them again"
	run trace-pipeline --partial --table "$T/a.nd"
	assert_failure 2
	assert_output "trace-pipeline: --partial leaves --table, --svg and --step to --merge; give them there"
}

@test "errors: bad regex, unknown option, no blocks; a closed pipe is quiet" {
	onef1b "$T/a.nd" "$T/b.nd" 1000 0 0
	run trace-pipeline --backward 'a(' "$T/a.nd"
	assert_failure 2
	assert_output "trace-pipeline: invalid --backward 'a(': Unmatched ( or \\("
	run trace-pipeline --no-such-option
	assert_failure 2
	assert_line --index 1 --partial "usage: trace-pipeline"
	{ meta r0 0 1; sp aten::linear 0 10; } >"$T/n.nd"
	run bash -c "trace-pipeline '$T/n.nd' 2>'$T/err'"
	assert_success
	assert_output ""
	run cat "$T/err"
	assert_output "trace-pipeline: no forward/backward blocks found: no span name matches the rules; see --forward and --backward"
	run "$PY" -c 'import os, subprocess, sys
r, w = os.pipe()
os.close(r)
p = subprocess.run(sys.argv[1:], stdout=w, stderr=subprocess.PIPE)
print(p.returncode, repr(p.stderr))' trace-pipeline "$T/a.nd" "$T/b.nd"
	assert_output "0 b''"
}

@test "ranks busy for the whole window: no idle stretch, bubble 0, every output mode" {
	# both ranks: F0 [0,10) B0 [10,30) on absolute clocks; window [0,30),
	# busy 30 each, no idle at all: the chart hatches nothing (fuzz_pipe's
	# clang UBSan found the empty idle list of this shape)
	{ meta r0 0 1000; sp forward_step#0 0 10; sp backward_step#0 10 20; } >"$T/a.nd"
	{ meta r1 1 1000; sp forward_step#0 0 10; sp backward_step#0 10 20; } >"$T/b.nd"
	run bash -c "trace-pipeline '$T/a.nd' '$T/b.nd' | jq -c 'select(.type==\"pipe_rank\") | [.stage,.window_ns,.busy_ns,.bubble_ns,.warmup_ns,.cooldown_ns]'"
	assert_output '[0,30,30,0,0,0]
[1,30,30,0,0,0]'
	run trace-pipeline --table "$T/a.nd" "$T/b.nd"
	assert_success
	assert_line --index 0 --partial "window 30ns, bubble 0.0%"
	trace-pipeline --svg "$T/a.nd" "$T/b.nd" >"$T/s.svg"
	run "$PY" -c 'import sys, xml.etree.ElementTree as E
r = E.parse(sys.argv[1]).getroot()
n = lambda c: len([e for e in r.iter() if e.tag.endswith("rect") and e.get("class") == c])
print(n("idle"), n("blk F"), n("blk B"))' "$T/s.svg"
	assert_output "0 2 2"
}
