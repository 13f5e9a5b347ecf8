#!/usr/bin/env bats
# trace-regions: the region tree of `scope` paths with inclusive and
# exclusive time; --tree, --folded, --depth, --min-share, --prune,
# --by-device, --ops; partial results and their merge.

load helpers

setup() {
	T="$BATS_TEST_TMPDIR"
	REF="$BATS_TEST_DIRNAME/tools/nest_ref.py"
	# Hand-made: two TPUs and a host thread.
	#   TPU:0 line 1  dot.1 [0,100) train/fwd/attn     self 100
	#                 add.2 [100,150) train//fwd/mlp/  self 50 (empty
	#                       segments are ignored: train/fwd/mlp)
	#                 fus.3 [150,180) train/fwd        self 30
	#                 dot.4 [200,400) train/bwd/attn   self 200
	#   TPU:0 line 2  while [0,100) train, with body [20,60) train/fwd/mlp
	#                       inside it: while self 60, body 40
	#   TPU:1         ar.5 [0,40) train/bwd/attn 40; cp.6 [40,50) no scope 10
	#   host          hostop [0,1000) train (not a device op)
	# Regions: train excl 60; train/fwd excl 30; train/fwd/attn 100;
	# train/fwd/mlp 50+40 = 90; train/bwd/attn 200+40 = 240; (none) 10.
	# Inclusive: fwd 220, bwd 240, train 520; total 530 = the busy union
	# of the device timelines (380 + 100 + 50).
	cat > "$T/r.ndjson" <<'E'
{"type":"meta","schema":"ndtrace/1","source":"r.pb","format":"xplane","origin_ns":0,"host":null,"rank":0,"producer":"hand 1"}
{"type":"span","ts_ns":0,"dur_ns":100,"name":"dot.1","pid":1,"tid":1,"process":"/device:TPU:0","device":"TPU:0","scope":"train/fwd/attn"}
{"type":"span","ts_ns":0,"dur_ns":100,"name":"while","pid":1,"tid":2,"process":"/device:TPU:0","device":"TPU:0","scope":"train"}
{"type":"span","ts_ns":0,"dur_ns":40,"name":"ar.5","pid":2,"tid":1,"process":"/device:TPU:1","device":"TPU:1","scope":"train/bwd/attn"}
{"type":"span","ts_ns":0,"dur_ns":1000,"name":"hostop","pid":9,"tid":1,"process":"/host:CPU","scope":"train"}
{"type":"span","ts_ns":20,"dur_ns":40,"name":"body","pid":1,"tid":2,"process":"/device:TPU:0","device":"TPU:0","scope":"train/fwd/mlp"}
{"type":"span","ts_ns":40,"dur_ns":10,"name":"cp.6","pid":2,"tid":1,"process":"/device:TPU:1","device":"TPU:1"}
{"type":"span","ts_ns":100,"dur_ns":50,"name":"add.2","pid":1,"tid":1,"process":"/device:TPU:0","device":"TPU:0","scope":"train//fwd/mlp/"}
{"type":"span","ts_ns":150,"dur_ns":30,"name":"fus.3","pid":1,"tid":1,"process":"/device:TPU:0","device":"TPU:0","scope":"train/fwd"}
{"type":"span","ts_ns":200,"dur_ns":200,"name":"dot.4","pid":1,"tid":1,"process":"/device:TPU:0","device":"TPU:0","scope":"train/bwd/attn"}
E
}

rows() {
	jq -r '[.device // "-", .path, .name, .depth, .count, .self_count, .inclusive_ns, .exclusive_ns, .overrun] | @tsv' "$@"
}

@test "region rows: inclusive, exclusive, counts, depth, widest first" {
	trace-regions "$T/r.ndjson" > "$T/out"
	run rows "$T/out"
	assert_output - <<'E'
-	train	train	1	7	1	520	60	0
-	train/bwd	bwd	2	2	0	240	0	0
-	train/bwd/attn	attn	3	2	2	240	240	0
-	train/fwd	fwd	2	4	1	220	30	0
-	train/fwd/attn	attn	3	1	1	100	100	0
-	train/fwd/mlp	mlp	3	2	2	90	90	0
-	(none)	(none)	1	1	1	10	10	0
E
	run head -1 "$T/out"
	assert_output '{"type":"region","path":"train","name":"train","depth":1,"count":7,"self_count":1,"inclusive_ns":520,"exclusive_ns":60,"share_root":1,"share_total":0.9811320754716981,"overrun":0}'
	# shares: of the top-level region and of the total (530)
	run jq -r 'select(.path=="train/fwd/mlp") | [.share_root * 520, .share_total * 530] | map(round) | @tsv' "$T/out"
	assert_output "$(printf '90\t90')"
	# exclusive times add up to the total, which is trace-topk's total
	# exclusive time and the busy union (python reference)
	run jq -s 'map(.exclusive_ns) | add' "$T/out"
	assert_output 530
	run bash -c "trace-topk -k 0 '$T/r.ndjson' | jq -s 'map(.self_ns)|add'"
	assert_output 530
	run bash -c "$PY '$REF' union < '$T/r.ndjson'"
	assert_output "530 430 8"
}

@test "--tree: indented, widest first, bars of # by share of the total" {
	run trace-regions --tree "$T/r.ndjson"
	assert_success
	assert_output - <<'E'
  share    inclusive    exclusive     count  region
 98.11%        520ns         60ns         7  train     #######################################
 45.28%        240ns          0ns         2    bwd     ##################
 45.28%        240ns        240ns         2      attn  ##################
 41.51%        220ns         30ns         4    fwd     #################
 18.87%        100ns        100ns         1      attn  ########
 16.98%         90ns         90ns         2      mlp   #######
  1.89%         10ns         10ns         1  (none)    #

total 530ns
E
}

@test "--folded: a;b;c ns lines for flamegraph.pl, summing to the total" {
	run trace-regions --folded "$T/r.ndjson"
	assert_output - <<'E'
train 60
train;bwd;attn 240
train;fwd 30
train;fwd;attn 100
train;fwd;mlp 90
(none) 10
E
	run bash -c "trace-regions --folded --ops --by-device '$T/r.ndjson'"
	assert_output - <<'E'
TPU:0;train;fwd;attn;dot.1 100
TPU:0;train;fwd;mlp;add.2 50
TPU:0;train;fwd;mlp;body 40
TPU:0;train;fwd;fus.3 30
TPU:0;train;bwd;attn;dot.4 200
TPU:0;train;while 60
TPU:1;train;bwd;attn;ar.5 40
TPU:1;(none);cp.6 10
E
	run bash -c "trace-regions --folded --ops '$T/r.ndjson' | awk '{s += \$NF} END {print s}'"
	assert_output 530
	# ';' inside a name cannot split a frame
	printf '%s\n' '{"type":"span","ts_ns":500,"dur_ns":5,"name":"x","pid":1,"tid":1,"process":"/device:TPU:0","scope":"a;b/c"}' >> "$T/r.ndjson"
	run bash -c "trace-regions --folded '$T/r.ndjson' | grep ' 5$'"
	assert_output "a:b;c 5"
}

@test "--depth, --min-share, --prune" {
	trace-regions --depth 1 "$T/r.ndjson" > "$T/out"
	run rows "$T/out"
	assert_output - <<'E'
-	train	train	1	7	7	520	520	0
-	(none)	(none)	1	1	1	10	10	0
E
	# mlp is 16.98% of the time: under 0.18 it folds into fwd; (none) into
	# a top-level (other)
	trace-regions --min-share 0.18 "$T/r.ndjson" > "$T/out"
	run rows "$T/out"
	assert_output - <<'E'
-	train	train	1	7	1	520	60	0
-	train/bwd	bwd	2	2	0	240	0	0
-	train/bwd/attn	attn	3	2	2	240	240	0
-	train/fwd	fwd	2	4	3	220	120	0
-	train/fwd/attn	attn	3	1	1	100	100	0
-	(other)	(other)	1	1	1	10	10	0
E
	run jq -s 'map(.exclusive_ns) | add' "$T/out"
	assert_output 530
	# bwd has no time of its own and one sub-region: shown as bwd/attn
	trace-regions --prune "$T/r.ndjson" > "$T/out"
	run rows "$T/out"
	assert_output - <<'E'
-	train	train	1	7	1	520	60	0
-	train/bwd/attn	bwd/attn	2	2	2	240	240	0
-	train/fwd	fwd	2	4	1	220	30	0
-	train/fwd/attn	attn	3	1	1	100	100	0
-	train/fwd/mlp	mlp	3	2	2	90	90	0
-	(none)	(none)	1	1	1	10	10	0
E
	run bash -c "trace-regions --tree --prune --depth 2 '$T/r.ndjson' | sed -n 3p"
	assert_output " 45.28%        240ns        240ns         2    bwd   ##################"
}

@test "--by-device, --ops, --timelines" {
	trace-regions --by-device "$T/r.ndjson" > "$T/out"
	run rows "$T/out"
	assert_output - <<'E'
TPU:0	train	train	1	6	1	480	60	0
TPU:0	train/fwd	fwd	2	4	1	220	30	0
TPU:0	train/fwd/attn	attn	3	1	1	100	100	0
TPU:0	train/fwd/mlp	mlp	3	2	2	90	90	0
TPU:0	train/bwd	bwd	2	1	0	200	0	0
TPU:0	train/bwd/attn	attn	3	1	1	200	200	0
TPU:1	train	train	1	1	0	40	0	0
TPU:1	train/bwd	bwd	2	1	0	40	0	0
TPU:1	train/bwd/attn	attn	3	1	1	40	40	0
TPU:1	(none)	(none)	1	1	1	10	10	0
E
	# share_root is of the device's top-level region
	run jq -r 'select(.device=="TPU:1" and .path=="train/bwd/attn") | .share_root' "$T/out"
	assert_output 1
	run bash -c "trace-regions --ops '$T/r.ndjson' | jq -r 'select(.depth==4 or .path==\"train/while\") | [.path,.exclusive_ns] | @tsv'"
	assert_output - <<'E'
train/bwd/attn/dot.4	200
train/bwd/attn/ar.5	40
train/fwd/attn/dot.1	100
train/fwd/mlp/add.2	50
train/fwd/mlp/body	40
train/while	60
E
	# the host op joins with --timelines all (and alone with host)
	run bash -c "trace-regions --timelines all '$T/r.ndjson' | head -1 | jq -c '[.path,.inclusive_ns,.exclusive_ns]'"
	assert_output '["train",1520,1060]'
	run bash -c "trace-regions --timelines host '$T/r.ndjson' | jq -c '[.path,.exclusive_ns]'"
	assert_output '["train",1000]'
}

@test "--partial then --merge equals the direct answer, for every view" {
	# a second source (rank 1) with the same device names
	{ cat "$T/r.ndjson"; sed 's/"rank":0/"rank":1/; s/"r.pb"/"s.pb"/; s/dot\.4/dot.9/' "$T/r.ndjson"; } > "$T/two.ndjson"
	head -10 "$T/two.ndjson" > "$T/a.ndjson"
	tail -n +11 "$T/two.ndjson" > "$T/b.ndjson"
	for opts in "" "--tree" "--folded --ops" "--by-device --prune" "--depth 2 --min-share 0.2 --tree" "--by-device --ops --folded"; do
		trace-regions $opts "$T/two.ndjson" > "$T/direct"
		run bash -c "{ trace-regions --partial '$T/b.ndjson'; trace-regions --partial '$T/a.ndjson'; } | trace-regions --merge $opts | diff '$T/direct' -"
		assert_success
		run bash -c "trace-regions --partial '$T/a.ndjson' | trace-regions --merge --partial | cat - <(trace-regions --partial '$T/b.ndjson') | trace-regions --merge $opts | diff '$T/direct' -"
		assert_success
	done
	run bash -c "trace-regions --partial --timelines all '$T/a.ndjson' | trace-regions --merge --timelines all"
	assert_failure 2
	run bash -c "{ trace-regions --partial '$T/a.ndjson'; trace-regions --partial --overrun reparent '$T/b.ndjson'; } | trace-regions --merge"
	assert_failure 2
	assert_output --partial "cannot be merged"
}

@test "property: regions conserve the exclusive time of trace-topk" {
	for seed in 21 22 23; do
		# scopes by pid and op: s1/m/x, s2/a/x, ...
		$PY "$REF" gen $seed --sources 2 | jq -c 'if .type == "span" then .scope = "s\(.pid)/\(.name[0:1])/x" else . end' > "$T/g.ndjson"
		for tl in all device; do
			a=$(trace-topk -k 0 --timelines $tl "$T/g.ndjson" | jq -s 'map(.self_ns)|add')
			b=$(trace-regions --timelines $tl "$T/g.ndjson" | jq -s 'map(.exclusive_ns)|add')
			c=$(trace-regions --timelines $tl --folded --ops "$T/g.ndjson" | awk '{s += $NF} END {print s}')
			[ "$a" = "$b" ] && [ "$a" = "$c" ] || fail "seed $seed $tl: topk $a regions $b folded $c"
		done
	done
}

@test "errors and trace-check" {
	run trace-regions --depth 0 "$T/r.ndjson"
	assert_failure 2
	run trace-regions --min-share 2 "$T/r.ndjson"
	assert_failure 2
	run trace-regions --tree --folded "$T/r.ndjson"
	assert_failure 2
	run trace-regions --merge "$T/r.ndjson"
	assert_failure 2
	assert_output --partial "--merge reads the output of trace-regions --partial, not span records"
	run trace-regions -o "$T/o.ndjson" --tree "$T/r.ndjson"
	assert_success
	[ "$(wc -l < "$T/o.ndjson")" -eq 10 ]
	run bash -c "trace-regions --by-device '$T/r.ndjson' | trace-check"
	assert_success
	run bash -c "trace-regions --partial '$T/r.ndjson' | trace-check"
	assert_success
}

need_chrome() {
	need_fixtures
}

@test "fixtures: GPU kernels by launching scope; per-rank partials merge" {
	need_chrome
	for f in "$FIXTURES"/chrome/dlrm_8ranks/worker[0-3]*.json.gz; do
		chrome2ndjson "$f" > "$T/$(basename "$f" .json.gz).ndjson"
	done
	cat "$T"/worker*.ndjson > "$T/all.ndjson"
	a=$(trace-topk -k 0 "$T/all.ndjson" | jq -s 'map(.self_ns)|add')
	run bash -c "trace-regions '$T/all.ndjson' | jq -s 'map(.exclusive_ns)|add'"
	assert_output "$a"
	for opts in "--tree --depth 3" "--folded --ops --by-device"; do
		trace-regions $opts "$T/all.ndjson" > "$T/direct"
		# one partial file per job: jobs writing to one pipe interleave
		run bash -c "ls '$T'/worker*.ndjson | xargs -P4 -I{} trace-regions --partial -o {}.partial {} && trace-regions --merge $opts '$T'/worker*.ndjson.partial | diff '$T/direct' -"
		assert_success
	done
}
