#!/usr/bin/env bats
# trace-topk: exclusive time by key, shares, percentiles, table/CSV,
# partial results and their merge.  Expected values are worked out by hand
# in the comments and cross-checked with jq/awk and tests/tools/nest_ref.py.

load helpers

META0='{"type":"meta","schema":"ndtrace/1","source":"h.json","format":"chrome","origin_ns":0,"host":null,"rank":0,"producer":"hand 1"}'
META1='{"type":"meta","schema":"ndtrace/1","source":"g.json","format":"chrome","origin_ns":1000,"host":null,"rank":1,"producer":"hand 1"}'

setup() {
	T="$BATS_TEST_TMPDIR"
	REF="$BATS_TEST_DIRNAME/tools/nest_ref.py"
}

# span TS DUR NAME [PID TID PROCESS EXTRA-JSON]
span() {
	printf '{"type":"span","ts_ns":%s,"dur_ns":%s,"name":"%s","pid":%s,"tid":%s,"process":"%s"%s}\n' \
	    "$1" "$2" "$3" "${4:-1}" "${5:-1}" "${6:-/device:GPU:0}" "${7:-}"
}

# One device timeline with nesting, an overrun, a zero-length span, and two
# spans starting together.
#   step  [0,100)    children mm [10,40) and mm [50,120) (overruns, clipped
#                    to 100): self = 100 - 30 - 50 = 20
#   mm    [10,40)    child add [20,30): self 20
#   add   [20,30)    self 10
#   mm    [50,120)   child noop [60,60): self 70
#   step  [200,250)  self 50
#   outer [300,350)  starts with inner [300,320), longer: parent; self 30
#   inner            self 20
# Union of busy time: [0,120) + [200,250) + [300,350) = 220 = sum of self.
nested() {
	echo "$META0"
	span 0 100 step
	span 10 30 mm
	span 20 10 add
	span 50 70 mm
	span 60 0 noop
	span 200 50 step
	span 300 50 outer
	span 300 20 inner
}

# name count total self mean min max overrun, one row a line
tsv() {
	jq -r '[if .other then "(other)" else .name end, .count, .total_ns, .self_ns, .mean_ns, .min_ns, .max_ns, .overrun] | @tsv' "$@"
}

@test "nesting: exclusive time, overrun clipping, equal starts, zero length" {
	nested > "$T/n.ndjson"
	run trace-topk "$T/n.ndjson"
	assert_success
	trace-topk "$T/n.ndjson" > "$T/out"
	run tsv "$T/out"
	assert_output "$(printf '%s\n' \
	    'mm	2	100	90	50	30	70	1' \
	    'step	2	150	70	75	50	100	0' \
	    'outer	1	50	30	50	50	50	0' \
	    'inner	1	20	20	20	20	20	0' \
	    'add	1	10	10	10	10	10	0' \
	    'noop	1	0	0	0	0	0	0')"
	# one whole row, every key
	run bash -c "trace-topk '$T/n.ndjson' | head -1"
	assert_output '{"type":"top","row":1,"name":"mm","count":2,"total_ns":100,"self_ns":90,"mean_ns":50,"min_ns":30,"max_ns":70,"p50_ns":30,"p90_ns":70,"p99_ns":70,"share":0.4090909090909091,"overrun":1,"of":"span","example":{"source":"h.json","rank":0,"pid":1,"tid":1,"origin_ns":0,"ts_ns":10,"dur_ns":30,"name":"mm"}}'
	# totals: self adds up to the busy union (220), totals to the sum of
	# durations (jq over the input)
	run bash -c "trace-topk -k 0 '$T/n.ndjson' | jq -s 'map(.self_ns) | add'"
	assert_output 220
	run bash -c "diff <(trace-topk -k 0 '$T/n.ndjson' | jq -s 'map(.total_ns) | add') <(jq -s 'map(select(.type==\"span\").dur_ns) | add' '$T/n.ndjson')"
	assert_success
	run bash -c "$PY '$REF' union --timelines all < '$T/n.ndjson'"
	assert_output "220 220 8"
}

@test "several timelines and sources, interleaved: each nested on its own" {
	# Timeline (src0,1,1): a [0,10) with b [2,4).  Timeline (src0,1,2):
	# a [1,5) with b [1,2) (starts together: a is the parent).  Source 1,
	# same pid/tid 1/1 but another timeline: b [3,20) that would overlap
	# a [0,10) if the sources were mixed.
	# a: self (10-2) + (4-1) = 11; b: 2 + 1 + 17 = 20.
	{
		echo "$META0"
		span 0 10 a 1 1
		span 1 4 a 1 2
		span 1 1 b 1 2
		span 2 2 b 1 1
		echo "$META1"
		span 3 17 b 1 1
	} > "$T/m.ndjson"
	run bash -c "trace-topk '$T/m.ndjson' | jq -r '[.name,.count,.total_ns,.self_ns]|@tsv'"
	assert_output "$(printf 'b\t3\t20\t20\na\t2\t14\t11')"
	# the same through a pipe, and with the files given separately
	run bash -c "cat '$T/m.ndjson' | trace-topk | jq -c '[.name,.self_ns]' | tr -d '\n'"
	assert_output '["b",20]["a",11]'
	run bash -c "trace-topk -k 0 '$T/m.ndjson' | jq -s 'map(.self_ns)|add'"
	assert_output "31"
	run bash -c "$PY '$REF' union --timelines all < '$T/m.ndjson'"
	assert_output "31 27 5"
}

@test "timelines: device ops by default, host, all; no device ops: every span" {
	{
		echo "$META0"
		span 0 100 forward 1 1 "CPU functions"
		span 10 20 aten::mm 1 1 "CPU functions"
		span 15 40 gemm_kernel 2 7 "GPU 0" ',"cat":"kernel"'
		span 15 50 annot 2 7 "GPU 0" ',"cat":"gpu_user_annotation"'
		span 0 30 "fusion.1" 3 1 "/device:TPU:0" ',"thread":"XLA Ops"'
		span 0 60 "module" 3 2 "/device:TPU:0" ',"thread":"XLA Modules"'
		span 0 90 "1" 3 3 "/device:TPU:0" ',"thread":"Steps"'
		span 20 5 "copy" 4 1 "/device:GPU:1" ',"cat":"gpu_memcpy"'
	} > "$T/k.ndjson"
	run bash -c "trace-topk '$T/k.ndjson' | jq -r .name | sort | tr '\n' ' '"
	assert_output "copy fusion.1 gemm_kernel "
	run bash -c "trace-topk --timelines host '$T/k.ndjson' | jq -r '[.name,.self_ns]|@tsv'"
	assert_output "$(printf 'forward\t80\naten::mm\t20')"
	run bash -c "trace-topk --timelines all -k 0 '$T/k.ndjson' | jq -r .name | sort | tr '\n' ' '"
	assert_output "1 annot aten::mm copy forward fusion.1 gemm_kernel module "
	# annot [15,65) is the parent of gemm_kernel [15,55) on that stream
	run bash -c "trace-topk --timelines all '$T/k.ndjson' | jq -r 'select(.name==\"annot\").self_ns'"
	assert_output "10"
	# the reference agrees on every selection
	for tl in device host all; do
		run bash -c "diff <($PY '$REF' ref clip --timelines $tl < '$T/k.ndjson' | grep -v TOTAL) <(trace-topk -k 0 --timelines $tl '$T/k.ndjson' | jq -r '[.name,.count,.total_ns,.self_ns,.overrun]|@tsv' | sort)"
		assert_success
	done
	# a CPU-only stream counts every span, and the table says so
	grep -v -e kernel -e TPU -e gpu_ -e annot "$T/k.ndjson" > "$T/cpu.ndjson"
	run bash -c "trace-topk '$T/cpu.ndjson' | jq -r '[.name,.self_ns]|@tsv'"
	assert_output "$(printf 'forward\t80\naten::mm\t20')"
	run bash -c "trace-topk --table '$T/cpu.ndjson' | tail -1"
	assert_output "self time 100ns in 2 spans; no device ops: every timeline counted"
}

@test "--by: several keys, args.X, absent values, rank from meta" {
	{
		echo "$META0"
		span 0 10 k1 1 1 /device:GPU:0 ',"class":"compute","family":"matmul","args":{"stream":7}'
		span 10 20 k2 1 1 /device:GPU:0 ',"class":"communication","family":"all-reduce","args":{"stream":7}'
		span 30 5 k3 1 1 /device:GPU:0 ',"class":"compute","family":"matmul","args":{"stream":8}'
		span 35 1 k4 1 1 /device:GPU:0 ',"args":{"stream":"s\u0031"}'
	} > "$T/b.ndjson"
	run bash -c "trace-topk --by class,family '$T/b.ndjson' | jq -c '[.class,.family,.count,.self_ns]'"
	assert_output "$(printf '%s\n' '["communication","all-reduce",1,20]' '["compute","matmul",2,15]' '[null,null,1,1]')"
	run bash -c "trace-topk --by args.stream '$T/b.ndjson' | jq -c '[.args.stream,.self_ns]'"
	assert_output "$(printf '%s\n' '[7,30]' '[8,5]' '["s1",1]')"
	run bash -c "trace-topk --by rank '$T/b.ndjson' | jq -c '[.rank,.count]'"
	assert_output '[0,4]'
	run trace-topk --by count "$T/b.ndjson"
	assert_failure 2
	assert_output --partial "'count' is an output key"
}

@test "--sort, -k and the other row: shares add up to 1" {
	nested > "$T/n.ndjson"
	run bash -c "trace-topk --sort count '$T/n.ndjson' | jq -r .name | tr '\n' ' '"
	assert_output "mm step outer inner add noop "
	run bash -c "trace-topk --sort total '$T/n.ndjson' | jq -r .name | tr '\n' ' '"
	assert_output "step mm outer inner add noop "
	# mean: step 75, then mm and outer 50 (tie: by self), ...
	run bash -c "trace-topk --sort mean '$T/n.ndjson' | jq -r .name | tr '\n' ' '"
	assert_output "step mm outer inner add noop "
	trace-topk --sort max -k 2 "$T/n.ndjson" > "$T/out"
	run tsv "$T/out"
	# other: outer, inner, add, noop: count 4, total 80, self 60
	assert_output "$(printf '%s\n' 'step	2	150	70	75	50	100	0' 'mm	2	100	90	50	30	70	1' '(other)	4	80	60	20	0	50	0')"
	run bash -c "trace-topk -k 2 '$T/n.ndjson' | jq -c 'select(.other) | [.row, .p50_ns, .example.name]'"
	assert_output '[3,10,"add"]'
	run bash -c "trace-topk -k 1 '$T/n.ndjson' | jq -s 'map(.self_ns) | add'"
	assert_output 220
	run bash -c "trace-topk -k 1 '$T/n.ndjson' | jq -s 'map(.share) | add | . > 0.999999999 and . < 1.000000001'"
	assert_output true
}

@test "--table: aligned columns, keys last, a summary line" {
	nested > "$T/n.ndjson"
	run trace-topk --table -k 3 "$T/n.ndjson"
	assert_success
	assert_output - <<'E'
Self %  Self  Total  Count  Mean   Min    Max   p50    p90    p99  name
------  ----  -----  -----  ----  ----  -----  ----  -----  -----  -------
40.91%  90ns  100ns      2  50ns  30ns   70ns  30ns   70ns   70ns  mm
31.82%  70ns  150ns      2  75ns  50ns  100ns  50ns  100ns  100ns  step
13.64%  30ns   50ns      1  50ns  50ns   50ns  50ns   50ns   50ns  outer
13.64%  30ns   30ns      3  10ns   0ns   20ns  10ns   20ns   20ns  (other)

self time 220ns in 8 spans; 1 ended after their parent (clipped)
E
	{ echo "$META0"; span 0 1500000 big; span 1500000 2500000000 huge; } > "$T/u.ndjson"
	run bash -c "trace-topk --table '$T/u.ndjson' | sed -n 3,4p"
	assert_output - <<'E'
99.94%   2.500s   2.500s      1   2.500s   2.500s   2.500s   2.500s   2.500s   2.500s  huge
 0.06%  1.500ms  1.500ms      1  1.500ms  1.500ms  1.500ms  1.500ms  1.500ms  1.500ms  big
E
}

@test "--csv: libcsv quoting of names with commas and quotes" {
	{
		echo "$META0"
		span 0 30 'a,b'
		span 30 20 'say \"hi\"'
		span 50 10 plain
	} > "$T/c.ndjson"
	run trace-topk --csv -k 2 "$T/c.ndjson"
	assert_success
	assert_output - <<'E'
"name",count,total_ns,self_ns,mean_ns,min_ns,max_ns,p50_ns,p90_ns,p99_ns,share,overrun,other
"a,b",1,30,30,30,30,30,30,30,30,0.5,0,0
"say ""hi""",1,20,20,20,20,20,20,20,20,0.3333333333333333,0,0
,1,10,10,10,10,10,10,10,10,0.16666666666666666,0,1
E
	# python's csv module reads the names back
	run bash -c "trace-topk --csv '$T/c.ndjson' | $PY -c 'import csv,sys; print([r[0] for r in csv.reader(sys.stdin)][1:])'"
	assert_output "['a,b', 'say \"hi\"', 'plain']"
}

@test "--wall: share of the busy time of each device" {
	# GPU:0 has two streams: s7 busy [0,50) and s8 busy [25,75): the
	# device is busy 75 ns, the summed exclusive time is 100 ns.
	# GPU:1 busy 10 ns.  wall = 85.
	{
		echo "$META0"
		span 0 50 k 1 7 /device:GPU:0 ',"device":"GPU:0"'
		span 25 50 k 1 8 /device:GPU:0 ',"device":"GPU:0"'
		span 0 10 j 2 7 /device:GPU:1 ',"device":"GPU:1"'
	} > "$T/w.ndjson"
	run bash -c "trace-topk --wall '$T/w.ndjson' | jq -c '[.name,.self_ns,.share,.wall_share]'"
	assert_output "$(printf '%s\n' '["k",100,0.9090909090909091,1.1764705882352942]' '["j",10,0.09090909090909091,0.11764705882352941]')"
	run bash -c "trace-topk --wall --partial '$T/w.ndjson' | jq -s 'map(select(.type==\"top_busy\").busy_ns)|add'"
	assert_output 85
	run bash -c "$PY '$REF' union < '$T/w.ndjson'"
	assert_output "110 85 3"
}

@test "other record types: trace-gaps output by payload; --type" {
	{
		echo "$META0"
		echo '{"type":"gap","ts_ns":100,"dur_ns":40,"pid":1,"tid":1,"payload":"fusion.3","cause":"host_wait"}'
		echo '{"type":"gap","ts_ns":300,"dur_ns":10,"pid":1,"tid":1,"payload":"copy.1","cause":"other"}'
		echo '{"type":"gap","ts_ns":500,"dur_ns":25,"pid":1,"tid":1,"payload":"fusion.3","cause":"other"}'
		echo '{"type":"end","events":3}'
	} > "$T/g.ndjson"
	run bash -c "trace-topk --by payload '$T/g.ndjson' | jq -c '[.payload,.count,.self_ns,.of]'"
	assert_output "$(printf '%s\n' '["fusion.3",2,65,"gap"]' '["copy.1",1,10,"gap"]')"
	run bash -c "trace-topk --by cause '$T/g.ndjson' | jq -c '[.cause,.self_ns]'"
	assert_output "$(printf '%s\n' '["host_wait",40]' '["other",35]')"
	# spans first: spans are aggregated, gaps are not
	{ nested; tail -n +2 "$T/g.ndjson"; } > "$T/sg.ndjson"
	run bash -c "trace-topk -k 0 '$T/sg.ndjson' | jq -s 'map(.self_ns)|add'"
	assert_output 220
	run bash -c "trace-topk --type gap -k 0 '$T/sg.ndjson' | jq -s 'map(.self_ns)|add'"
	assert_output 75
}

@test "percentiles: within 1/128 of the exact nearest-rank value" {
	$PY - "$T/p.ndjson" <<'E'
import json, math, random, sys
r = random.Random(7)
with open(sys.argv[1], "w") as f:
    f.write('{"type":"meta","schema":"ndtrace/1","source":"p","format":"chrome","origin_ns":0,"host":null,"rank":null,"producer":"t"}\n')
    t = 0
    for i in range(3000):
        d = int(r.lognormvariate(9, 2)) if i % 3 else r.randint(0, 200)
        f.write(json.dumps({"type": "span", "ts_ns": t, "dur_ns": d, "name": "op%d" % (i % 2), "pid": 1, "tid": 1}) + "\n")
        t += d
E
	run bash -c "trace-topk --timelines all '$T/p.ndjson' | $PY -c '
import json, math, sys
durs = {}
for l in open(\"$T/p.ndjson\"):
    r = json.loads(l)
    if r[\"type\"] == \"span\": durs.setdefault(r[\"name\"], []).append(r[\"dur_ns\"])
bad = 0
for l in sys.stdin:
    r = json.loads(l)
    v = sorted(durs[r[\"name\"]])
    for q, k in ((0.5, \"p50_ns\"), (0.9, \"p90_ns\"), (0.99, \"p99_ns\")):
        exact = v[max(1, math.ceil(q * len(v))) - 1]
        if abs(r[k] - exact) > exact / 128: bad += 1; print(k, r[k], exact)
    assert r[\"min_ns\"] == v[0] and r[\"max_ns\"] == v[-1]
print(\"bad\", bad)'"
	assert_success
	assert_output "bad 0"
}

@test "histograms: huge durations, counts beyond 32 bits, exact merges" {
	# a partial whose buckets hold 3e9 and 2e9 values: merged twice, the
	# 64-bit counts must add exactly
	# (framed by tests/tools/frame-partial.sh as --partial frames its output)
	F="sh $BATS_TEST_DIRNAME/tools/frame-partial.sh"
	p='{"type":"top_partial","version":2,"by":["name"],"of":"span","timelines":"device","fallback":false,"rule":"clip","hist":"loglin6","wall":false,"sources":1}'
	g='{"type":"top_group","key":["x"],"count":5000000000,"total_ns":1,"self_ns":1,"min_ns":5,"max_ns":2251799813685248,"overrun":0,"hist":[5,3000000000,2944,2000000000]}'
	run bash -c "{ printf '%s\n' '$p' '$g' | $F; printf '%s\n' '$p' '$g' | $F; } | trace-topk --merge | jq -c '[.count,.min_ns,.max_ns,.p50_ns,.p90_ns]'"
	assert_output '[10000000000,5,2251799813685248,5,2251799813685248]'
	run bash -c "printf '%s\n' '$p' '$g' | $F | trace-topk --merge --partial | tail -2 | head -1 | jq -c .hist"
	assert_output '[5,3000000000,2944,2000000000]'
	# a count that disagrees with the histogram is refused
	run bash -c "printf '%s\n' '$p' '$(echo "$g" | sed 's/"count":5000000000/"count":7/')' | $F | trace-topk --merge"
	assert_failure 2
	assert_output --partial '"hist" is not a histogram of "count" values'
}

@test "property: random nested streams agree with the reference (clip, reparent)" {
	for seed in 1 2 3; do
		$PY "$REF" gen $seed > "$T/r.ndjson"
		$PY "$REF" refs "$T" < "$T/r.ndjson"
		for c in clip.all clip.device clip.host reparent.all; do
			trace-topk -k 0 --timelines ${c#*.} --overrun ${c%.*} < "$T/r.ndjson" |
			    jq -r '[.name,.count,.total_ns,.self_ns,.overrun]|@tsv' | sort > "$T/got"
			grep -v TOTAL "$T/$c" | diff - "$T/got" || fail "seed $seed $c"
		done
		# clip: exclusive time adds up to the busy union
		run awk '/TOTAL/ {print ($2 == $3)}' "$T/clip.all"
		assert_output 1
	done
}

@test "unordered input: ties, a file or a pipe read twice, --unordered" {
	# the tie written shorter first, and a late span still placeable: on a
	# pipe, without --unordered
	{
		echo "$META0"
		span 0 10 short
		span 0 50 long
		span 20 5 x
		span 12 3 y
	} > "$T/t.ndjson"
	run bash -c "cat '$T/t.ndjson' | trace-topk | jq -c '[.name,.self_ns]' | tr -d '\n'"
	assert_success
	assert_output '["long",32]["short",10]["x",5]["y",3]'
	# shuffled: exact from a file (read twice if needed), from stdin
	# redirected from a file, with --unordered on a pipe, and on a plain
	# pipe whenever it does not stop
	for seed in 3 8; do
		$PY "$REF" gen $seed --shuffle > "$T/s.ndjson"
		$PY "$REF" ref clip < "$T/s.ndjson" | grep -v TOTAL > "$T/want"
		run bash -c "trace-topk -k 0 '$T/s.ndjson' | jq -r '[.name,.count,.total_ns,.self_ns,.overrun]|@tsv' | sort | diff '$T/want' -"
		assert_success
		run bash -c "trace-topk -k 0 < '$T/s.ndjson' | jq -r '[.name,.count,.total_ns,.self_ns,.overrun]|@tsv' | sort | diff '$T/want' -"
		assert_success
		run bash -c "cat '$T/s.ndjson' | trace-topk -k 0 --unordered | jq -r '[.name,.count,.total_ns,.self_ns,.overrun]|@tsv' | sort | diff '$T/want' -"
		assert_success
		run bash -c "cat '$T/s.ndjson' | trace-topk -k 0 | jq -r '[.name,.count,.total_ns,.self_ns,.overrun]|@tsv' | sort | diff '$T/want' -"
		assert_success
	done
	# a span that starts before the end of one already finished: a pipe
	# is spooled and read again too
	{ echo "$META0"; span 0 10 a; span 20 5 b; span 5 2 c; } > "$T/late.ndjson"
	run bash -c "cat '$T/late.ndjson' | trace-topk | jq -c '[.name,.self_ns]' | tr -d '\n'"
	assert_success
	assert_output '["a",8]["b",5]["c",2]'
	run bash -c "trace-topk '$T/late.ndjson' | jq -c '[.name,.self_ns]' | tr -d '\n'"
	assert_output '["a",8]["b",5]["c",2]'
	run bash -c "cat '$T/late.ndjson' | trace-topk --unordered | jq -c '[.name,.self_ns]' | tr -d '\n'"
	assert_output '["a",8]["b",5]["c",2]'
}

@test "--partial then --merge equals the direct answer, in any order" {
	for seed in 11 12; do
		$PY "$REF" gen $seed --sources 3 > "$T/all.ndjson"
		# one file per source
		awk -v d="$T" '/"meta"/{n++} {print > (d "/part" n ".ndjson")}' "$T/all.ndjson"
		for opts in "" "--by process,name -k 3 --table" "--timelines all --sort max -k 2 --wall" "--overrun reparent --timelines all --by pid,tid --csv"; do
			trace-topk $opts "$T/all.ndjson" > "$T/direct"
			popts=$(echo "$opts" | sed 's/--csv//; s/--table//; s/-k [0-9]//; s/--sort [a-z]*//')
			mopts=$(echo "$opts" | sed 's/--timelines [a-z]*//; s/--overrun [a-z]*//')
			for f in "$T"/part*.ndjson; do trace-topk --partial $popts "$f"; done > "$T/parts"
			trace-topk --merge $mopts "$T/parts" | diff "$T/direct" - || fail "$seed [$opts]"
			# in reverse order, through xargs -P (one file per job:
			# jobs writing to one pipe interleave)
			ls "$T"/part*.ndjson | sort -r | xargs -P3 -I{} trace-topk --partial $popts -o {}.partial {}
			trace-topk --merge $mopts $(ls "$T"/part*.ndjson.partial | sort -r) | diff "$T/direct" - || fail "$seed [$opts] xargs"
		done
		# a two-level reduction
		trace-topk --wall "$T/all.ndjson" > "$T/direct"
		{ trace-topk --partial --wall "$T/part1.ndjson" "$T/part2.ndjson" | trace-topk --merge --partial; trace-topk --partial --wall "$T/part3.ndjson"; } |
		    trace-topk --merge --wall | diff "$T/direct" - || fail "$seed two levels"
	done
}

@test "--merge: a device partial wins over one that fell back to every timeline" {
	nested > "$T/dev.ndjson"
	{ echo "$META1"; span 0 1000 cpu_only 5 5 "CPU functions"; } > "$T/cpu.ndjson"
	cat "$T/cpu.ndjson" "$T/dev.ndjson" | trace-topk > "$T/direct"
	run bash -c "{ trace-topk --partial '$T/cpu.ndjson'; trace-topk --partial '$T/dev.ndjson'; } | trace-topk --merge | diff '$T/direct' -"
	assert_success
	run bash -c "trace-topk --partial '$T/cpu.ndjson' | trace-topk --merge | jq -r .name"
	assert_output cpu_only
}

@test "errors: bad options, bad partial input; -o writes atomically; EPIPE" {
	nested > "$T/n.ndjson"
	run trace-topk --sort fastest "$T/n.ndjson"
	assert_failure 2
	assert_output "trace-topk: invalid value for --sort: 'fastest' (self, total, count, mean or max)"
	run trace-topk --timelines gpu "$T/n.ndjson"
	assert_failure 2
	run trace-topk -k -1 "$T/n.ndjson"
	assert_failure 2
	run trace-topk --table --csv "$T/n.ndjson"
	assert_failure 2
	run trace-topk --merge "$T/n.ndjson"
	assert_failure 2
	assert_output --partial "--merge reads the output of trace-topk --partial, not span records"
	run bash -c "{ trace-topk --partial '$T/n.ndjson'; trace-topk --partial --by class '$T/n.ndjson'; } | trace-topk --merge"
	assert_failure 2
	assert_output --partial "partial results by 'class' cannot be merged with results by 'name'"
	run bash -c "trace-topk --partial '$T/n.ndjson' | trace-topk --merge --timelines all"
	assert_failure 2
	run trace-topk "$T/missing.ndjson"
	assert_failure 2
	run trace-topk -o "$T/out.ndjson" "$T/n.ndjson"
	assert_success
	assert_output ""
	[ "$(wc -l < "$T/out.ndjson")" -eq 6 ]
	run trace-topk -o "$T/out2.ndjson" "$T/missing.ndjson"
	assert_failure 2
	[ ! -e "$T/out2.ndjson" ]
	run bash -c "$PY '$REF' gen 5 --sources 40 | trace-topk -k 0 --by pid,tid,name | head -1 | wc -l"
	assert_output 1
}

@test "outputs pass trace-check" {
	nested > "$T/n.ndjson"
	run bash -c "trace-topk --wall '$T/n.ndjson' | trace-check"
	assert_success
	run bash -c "trace-topk --partial --wall '$T/n.ndjson' | trace-check"
	assert_success
}

# ---- real profiles (need chrome2ndjson and the fixtures) ----

need_chrome() {
	need_fixtures
}

@test "fixtures: compute vs communication on a GPU trace with NCCL kernels" {
	need_chrome
	chrome2ndjson "$FIXTURES/chrome/hta_sampled_rank-0.json.gz" > "$T/h.ndjson"
	run bash -c "trace-topk --by class '$T/h.ndjson' | jq -r .class | sort | tr '\n' ' '"
	assert_output --partial communication
	assert_output --partial compute
	# communication rows are exactly the NCCL kernels (jq over the stream)
	run bash -c "diff <(trace-topk --by class '$T/h.ndjson' | jq 'select(.class==\"communication\").self_ns') <(jq -s 'map(select(.type==\"span\" and .cat==\"kernel\" and (.name|test(\"^nccl\";\"i\"))).dur_ns) | add' '$T/h.ndjson')"
	assert_success
	# every device op is in some class, and the shares add up to 1
	run bash -c "diff <(trace-topk --by class '$T/h.ndjson' | jq -s 'map(.count)|add') <(jq -s 'map(select(.type==\"span\" and (.cat|test(\"^(kernel|gpu_memcpy|gpu_memset)$\";\"i\")))) | length' '$T/h.ndjson')"
	assert_success
	run bash -c "trace-topk --by class '$T/h.ndjson' | jq -s 'map(.share)|add|(. - 1)|fabs < 1e-9'"
	assert_output true
	# on this rank, communication dominates (HTA's own analysis of this
	# trace: ~65% of kernel time)
	run bash -c "trace-topk --by class '$T/h.ndjson' | jq -r 'select(.class==\"communication\").share > 0.5'"
	assert_output true
}

@test "fixtures: the worst collective across the 8 DLRM ranks" {
	need_chrome
	for f in "$FIXTURES"/chrome/dlrm_8ranks/*.json.gz; do
		chrome2ndjson "$f" > "$T/$(basename "$f" .json.gz).ndjson"
	done
	cat "$T"/worker*.ndjson > "$T/d.ndjson"
	# python: NCCL kernel time by collective, from the kernel names
	want=$($PY - "$T/d.ndjson" <<'E'
import json, re, sys
t = {}
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r["type"] == "span" and r.get("cat") == "kernel" and r["name"].startswith("ncclKernel_"):
        k = r["name"].split("_")[1]
        t[k] = t.get(k, 0) + r["dur_ns"]
print(max(t.items(), key=lambda x: x[1])[1])
E
)
	run bash -c "trace-topk --by class,family '$T/d.ndjson' | jq -c 'select(.class==\"communication\")' | head -1 | jq .self_ns"
	assert_output "$want"
	run bash -c "trace-topk --by class,family '$T/d.ndjson' | jq -r 'select(.class==\"communication\").family' | head -1"
	refute_output ""
	# per rank in parallel then merged = one run over the 8 ranks
	trace-topk --by rank,family --wall -k 0 "$T"/worker*.ndjson > "$T/direct"
	run bash -c "ls '$T'/worker*.ndjson | xargs -P4 -I{} trace-topk --partial --wall --by rank,family -o {}.partial {} && trace-topk --merge --wall -k 0 '$T'/worker*.ndjson.partial | diff '$T/direct' -"
	assert_success
	# conservation: exclusive time = busy union per timeline, wall per device
	run bash -c "trace-topk -k 0 '$T/d.ndjson' | jq -s 'map(.self_ns)|add'"
	sum=$output
	run bash -c "$PY '$REF' union < '$T/d.ndjson' | cut -d' ' -f1"
	assert_output "$sum"
}

@test "fixtures: every Chrome trace: self time conserves, partial|merge = direct" {
	need_chrome
	# the smaller ones (the large ones take long in python)
	for f in "$FIXTURES"/chrome/*.json.gz "$FIXTURES"/chrome/*.json; do
		[ "$(stat -c %s "$f")" -lt 200000 ] || continue
		chrome2ndjson "$f" > "$T/f.ndjson" 2>/dev/null || continue
		read -r dev host all <<-E
		$($PY "$REF" unions < "$T/f.ndjson")
		E
		got=$(trace-topk -k 0 --timelines all "$T/f.ndjson" | jq -s 'map(.self_ns)|add // 0')
		[ "$got" = "$all" ] || fail "$f --timelines all: self $got, union $all"
		got=$(trace-topk -k 0 "$T/f.ndjson" | jq -s 'map(.self_ns)|add // 0')
		[ "$got" = "$dev" ] || [ "$dev" = 0 -a "$got" = "$all" ] || fail "$f: self $got, union $dev"
		trace-topk --by name,class "$T/f.ndjson" > "$T/direct"
		trace-topk --partial --by name,class "$T/f.ndjson" | trace-topk --merge | diff "$T/direct" - || fail "$f: merge"
	done
}

@test "fixtures: XPlane device op lines only (not XLA Modules, Steps, TraceMe)" {
	need_fixtures
	xplane2ndjson "$FIXTURES/xplane/tpu_inference_4core.xplane.pb" > "$T/x.ndjson"
	run bash -c "trace-topk --by thread '$T/x.ndjson' | jq -r .thread | sort | tr '\n' ' '"
	assert_output "Async XLA Ops XLA Ops "
	read -r dev host all <<-E
	$($PY "$REF" unions < "$T/x.ndjson")
	E
	run bash -c "trace-topk -k 0 '$T/x.ndjson' | jq -s 'map(.self_ns)|add'"
	assert_output "$dev"
	run bash -c "trace-regions '$T/x.ndjson' | jq -s 'map(.exclusive_ns)|add'"
	assert_output "$dev"
	run bash -c "trace-topk --timelines host -k 0 '$T/x.ndjson' | jq -s 'map(.self_ns)|add'"
	assert_output "$host"
	trace-topk --by class,family --wall "$T/x.ndjson" > "$T/direct"
	run bash -c "trace-topk --partial --wall --by class,family '$T/x.ndjson' | trace-topk --merge --wall | diff '$T/direct' -"
	assert_success
}
