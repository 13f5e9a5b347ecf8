#!/usr/bin/env bats
# trace-report's findings (trace-report(1), Findings) and its breakdown
# section: which rules run on the window there is (steady steps, else the
# profile window of each device), the time each finding explains and the
# ranking, evidence and advice that fit it, and the verdict.  Hand-made
# streams worked by hand in the comments; real fixtures checked by an
# independent python3 pass (tests/tools/breakdown_ref.py, gaps_check.py).

load helpers

setup() {
	T="$BATS_TEST_TMPDIR"
	TOOLS="$BATS_TEST_DIRNAME/tools"
}

# A stream from a compact spec on stdin, times in us, "~" for a space:
#   m SOURCE RANK                      a source's meta record
#   d TS DUR NAME CLASS CAT [STEP]     a device op on GPU:0 (pid 0 tid 7)
#   h TS DUR NAME [CAT]                a host span (pid 1 tid 1, cpu_op)
mk() {
	"$PY" -c '
import json, sys
for l in sys.stdin:
    f = l.split()
    if not f:
        continue
    if f[0] == "m":
        print(json.dumps({"type": "meta", "schema": "ndtrace/1",
            "source": f[1], "format": "chrome", "origin_ns": 1000000000,
            "host": "h", "rank": int(f[2]), "producer": "hand"},
            separators=(",", ":")))
        continue
    e = {"type": "span", "ts_ns": int(float(f[1]) * 1000),
         "dur_ns": int(float(f[2]) * 1000), "name": f[3].replace("~", " ")}
    if f[0] == "d":
        e.update(pid=0, tid=7, device="GPU:0", cat=f[5], **{"class": f[4]})
        if len(f) > 6:
            e["step"] = int(f[6])
    else:
        e.update(pid=1, tid=1, cat=f[4] if len(f) > 4 else "cpu_op")
    print(json.dumps(e, separators=(",", ":")))
'
}

# jq -c FILTER on a file, compared with the expected text
json_is() { # file filter expected
	run jq -c "$2" "$1"
	assert_success
	assert_output "$3"
}

# Every rule at 100 %: nothing can fire
ALL100="-t comm_exposed=100 -t device_idle=100 -t host_bound=100 -t memory_ops=100 -t step_variance=100 -t straggler=100 -t dominant_op=100 -t launch_gaps=100"

# One GPU, no step markers: the profile window [0,700) us.  GPU:0: gemm
# [0,100), Memcpy HtoD pageable [300,340), relu [340,400), gemm [600,700);
# host span aten::foo [150,250).
stream_profile() {
	mk <<-'E'
	d 0 100 gemm compute kernel
	h 150 100 aten::foo
	d 300 40 Memcpy~HtoD~(Pageable~->~Device) memory gpu_memcpy
	d 340 60 relu compute kernel
	d 600 100 gemm compute kernel
	E
}

@test "no steps: rules run over the profile window, ranked by the time they explain" {
	stream_profile > "$T/p.ndjson"
	trace-report --json "$T/p.ndjson" > "$T/p.json"
	# The window [0,700): compute 100+60+100 = 260, memory 40, host (the
	# host span, no device op) [150,250) = 100, idle [100,150) + [250,300)
	# + [400,600) = 300; device idle 400.
	json_is "$T/p.json" '.breakdown | [.window, (.devices[] | [.device, .dur_ns, .compute_ns, .memory_ns, .host_ns, .idle_ns, .device_idle_ns])]' \
	    '["profile",["GPU:0",700000,260000,40000,100000,300000,400000]]'
	# device_idle 300/700 = 42.86 %, host_bound 100/700 = 14.29 %,
	# memory_ops 40/700 = 5.71 % (< 10), dominant_op gemm 200/300 = 66.67 %
	# explaining the busy time 700-300-100 = 300 x 2/3 = 200 = 28.57 %.
	json_is "$T/p.json" '[.findings[] | [.rule, .explains_ns, (.explains_pct * 100 | round)]]' \
	    '[["device_idle",300000,4286],["dominant_op",200000,2857],["host_bound",100000,1429]]'
	json_is "$T/p.json" '[.thresholds[] | [.rule, .fired, .not_run, (.value // -1 | . * 100 | round)]]' \
	    '[["comm_exposed",false,null,0],["device_idle",true,null,4286],["host_bound",true,null,1429],["memory_ops",false,null,571],["step_variance",false,"no steps",-100],["straggler",false,"no steps",-100],["dominant_op",true,null,6667],["launch_gaps",false,null,0]]'
	# Gaps [100,300) before the pageable copy, [400,600) before gemm: 200
	# of 400 us of gap time precedes pageable HtoD copies (50 % >= 25).
	json_is "$T/p.json" '.findings[0].evidence | [.idle_ns, .gaps, .gap_ns, .top_payload, .top_payload_gap_ns, .pageable_htod_gap_ns, .data_loading_gap_ns]' \
	    '[300000,2,400000,"Memcpy HtoD (Pageable -> Device)",200000,200000,0]'
	run jq -r '.findings[0].suggestion, .findings[2].suggestion' "$T/p.json"
	assert_line --index 0 --partial "pin host memory (pin_memory=True) and copy with non_blocking=True"
	assert_line --index 1 --partial "pin host memory (pin_memory=True)"
	run trace-report "$T/p.ndjson"
	assert_line "No steps were found: the breakdown is over the profile window, from the first to the last device op of each device, % of that window[^rules]. \"all devices\" sums the devices (what the findings use)."
	assert_line "| GPU:0 | 700.0 us | 37.1 % | 0.0 % | 0.0 % | 5.7 % | 14.3 % | 42.9 % | 57.1 % |"
	assert_line "Device idle, all devices: 57.1 % (400.0 us): while the host works 14.3 %, nothing runs 42.9 %."
	assert_line "3 findings, ranked by the share of the profile window each explains. Not run: step_variance, straggler (no steps)."
	assert_line "the device is often idle with nothing running: 42.9 % of the profile window, threshold 10 %."
	assert_line "- Explains: 300.0 us, 42.9 % of the profile window."
	assert_line "| step_variance | steady step time stddev, % of the mean | 10 % | - | not run: no steps |"
	refute_output --partial "No single bottleneck"
	# non-trigger: the same gaps before a compute op: no copy advice
	sed 's/Memcpy HtoD (Pageable -> Device)/fill/; s/"memory"/"compute"/; s/gpu_memcpy/kernel/' "$T/p.ndjson" > "$T/q.ndjson"
	trace-report --json "$T/q.ndjson" > "$T/q.json"
	json_is "$T/q.json" '[.findings[0].evidence.pageable_htod_gap_ns, (.findings[0].suggestion | test("pin"))]' '[0,false]'
}

# Two ranks, steps from the ops' step key, per step s at t0 = 200 (s-1):
# fusion.1 (compute) for c us, then all-reduce.1 until t0+150.  Rank 0: c =
# 50, 50, 50; rank 1: c = 50, 60, 62 (it joins the collectives late).
stream_ranks() { # [RANK...]
	for r in ${@:-0 1}; do
		echo "m r$r.json $r"
		if [ $r = 0 ]; then cs="50 50 50"; else cs="50 60 62"; fi
		s=1
		for c in $cs; do
			t0=$(((s - 1) * 200))
			echo "d $t0 $c fusion.1 compute kernel $s"
			echo "d $((t0 + c)) $((150 - c)) all-reduce.1 communication kernel $s"
			s=$((s + 1))
		done
	done | mk
}

@test "ranking: the straggler goes before the exposed communication it causes" {
	stream_ranks > "$T/r.ndjson"
	trace-report --json "$T/r.ndjson" > "$T/r.json"
	# Steady steps 2, 3 (150 us each): comm_exposed rank 0 100+100, rank 1
	# 90+88, 378 of 600 = 63.0 %.  Ready = t0 + c: the lag of rank 1 is 10
	# (step 2), 12 (step 3): 12/150 = 8.0 %.  dominant_op all-reduce.1
	# 300+278 = 578 of 900 = 64.22 %, a collective, explaining 600 x that.
	# By share: dominant_op 64.22, comm_exposed 63.0, straggler 8.0; the
	# straggler goes before comm_exposed.
	json_is "$T/r.json" '[.findings[] | [.rule, .explains_ns]]' \
	    '[["dominant_op",385333],["straggler",12000],["comm_exposed",378000]]'
	json_is "$T/r.json" '.findings[1].evidence | [.rank, .step, .lag_ns, .steps_compared]' '[1,3,12000,3]'
	json_is "$T/r.json" '.findings[2].evidence | [.exposed_ns, .top_op, .top_op_ns, .top_collective]' '[378000,"all-reduce.1",578000,null]'
	json_is "$T/r.json" '.findings[0].evidence | [.op, .kind, .count, .self_ns]' '["all-reduce.1","collective",6,578000]'
	run jq -r '.findings[0] | .statement, .suggestion' "$T/r.json"
	assert_line --index 0 "one op dominates: all-reduce.1, a collective, takes 64.2 % of exclusive time, threshold 30 %"
	assert_line --index 1 --partial "the work is collective-bound: overlap the collective with compute"
	refute_output --partial "shapes"
}

@test "verdict: no single bottleneck only when every rule ran and none fired" {
	stream_ranks > "$T/r.ndjson"
	# two ranks with steps: every rule runs
	run trace-report $ALL100 "$T/r.ndjson"
	assert_success
	assert_line "No single bottleneck dominates: compute 37.0 %, exposed communication 63.0 %, memory 0.0 %, host 0.0 %, idle 0.0 % of steady step time, all devices."
	refute_output --partial "not run"
	# one rank: the straggler rule cannot run
	stream_ranks 0 > "$T/r0.ndjson"
	run trace-report $ALL100 "$T/r0.ndjson"
	assert_line "No rule fired, but not every rule could run, so a bottleneck they measure is not ruled out: compute 33.3 %, exposed communication 66.7 %, memory 0.0 %, host 0.0 %, idle 0.0 % of steady step time, all devices. Not run: straggler (one rank)."
	assert_line "| straggler | largest straggler lag, % of the steady median step | 100 % | - | not run: one rank |"
	# no device op, no steps: what can run does
	printf 'h 0 100 load\nh 100 50 train\n' | mk > "$T/c.ndjson"
	run trace-report --json $ALL100 "$T/c.ndjson"
	json_is <(echo "$output") '[.thresholds[] | [.rule, .not_run]]' \
	    '[["comm_exposed","no device op"],["device_idle","no device op"],["host_bound","no device op"],["memory_ops","no device op"],["step_variance","no steps"],["straggler","no steps"],["dominant_op",null],["launch_gaps","no device op"]]'
	run trace-report $ALL100 "$T/c.ndjson"
	assert_line "No device ops: no breakdown."
	assert_line "No rule fired, but not every rule could run, so a bottleneck they measure is not ruled out. Not run: comm_exposed, device_idle, host_bound, memory_ops, launch_gaps (no device op), step_variance, straggler (no steps)."
}

@test "advice fits the evidence: copy kernels, copy-engine transfers, collectives, compute" {
	# the same shape each time: op X [0,80), gemm [80,100); X takes 80 %
	i=0
	for x in "void~at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&) memory kernel" \
	    "Memcpy~HtoD~(Pageable~->~Device) memory gpu_memcpy" \
	    "Memcpy~DtoD~(Device~->~Device) memory gpu_memcpy" \
	    "ncclDevKernel_SendRecv(ncclDevComm*) communication kernel" \
	    "volta_sgemm_128x64_nn compute kernel"; do
		printf 'd 0 80 %s\nd 80 20 gemm compute kernel\n' "$x" | mk > "$T/a$i.ndjson"
		i=$((i + 1))
	done
	for i in 0 1 2 3 4; do
		trace-report --json "$T/a$i.ndjson" | jq -c '[.findings[] | [.rule, (.statement | capture("(?<k>a (copy kernel|copy-engine transfer|collective|compute op))").k // ""), .suggestion]]'
	done > "$T/adv"
	run sed -n 1p "$T/adv"	# SM copy kernel: no host-memory advice
	assert_output --partial '"memory_ops","","copy kernels and ops on the device'"'"'s cores: avoid needless copies (layout changes and transposes, dtype casts, .contiguous() in PyTorch)'
	assert_output --partial '"dominant_op","a copy kernel","avoid needless copies'
	refute_output --partial "pin"
	run sed -n 2p "$T/adv"	# pageable HtoD on the copy engine
	assert_output --partial '"memory_ops","","pageable HtoD copies: pin host memory (pin_memory=True in the DataLoader, or tensor.pin_memory()) and copy with non_blocking=True'
	assert_output --partial '"dominant_op","a copy-engine transfer","pin host memory'
	run sed -n 3p "$T/adv"	# DtoD on the copy engine
	assert_output --partial '"dominant_op","a copy-engine transfer","avoid needless copies'
	refute_output --partial "pin"
	run sed -n 4p "$T/adv"	# a collective: exposed, and collective-bound
	assert_output --partial '["comm_exposed",'
	assert_output --partial '"dominant_op","a collective","the work is collective-bound'
	run sed -n 5p "$T/adv"	# compute
	assert_output '[["dominant_op","a compute op","optimise that op first: check its shapes, precision and fusion (trace-topk --by name,scope)"]]'
}

@test "launch_gaps, data loading and step_variance: trigger and non-trigger" {
	# Ops of 10 us every 30 us: 4 gaps of 20 us (< 30 us: kernel_wait);
	# window 130, idle 80 = 61.54 %; launch share 100 %, explaining 80 too
	# (a tie: rule id order).  Gaps of 40 us instead: cause other, 0 %.
	printf 'd %s 10 k%s compute kernel\n' 0 0 30 1 60 2 90 3 120 4 | mk > "$T/l.ndjson"
	trace-report --json "$T/l.ndjson" > "$T/l.json"
	json_is "$T/l.json" '[.findings[] | [.rule, .explains_ns]]' '[["device_idle",80000],["launch_gaps",80000]]'
	json_is "$T/l.json" '.findings[1].evidence | [.gaps, .gap_ns, .host_wait_ns, .kernel_wait_ns]' '[4,80000,0,80000]'
	run jq -r '.findings[1].suggestion' "$T/l.json"
	assert_output --partial "launch overhead dominates: fuse small ops"
	printf 'd %s 10 k%s compute kernel\n' 0 0 50 1 100 2 150 3 | mk > "$T/l2.ndjson"
	json_is <(trace-report --json "$T/l2.ndjson") '[[.findings[].rule], (.thresholds[] | select(.rule == "launch_gaps") | .value)]' '[["device_idle"],0]'
	# Data loading: a DataLoader span over the gap [100,300) of
	# gemm [0,100), gemm2 [300,400): host 160 of 400 = 40 %; all of the
	# 200 us gap... [120,280) = 160 of it, 80 % of gap time is loading.
	printf '%s\n' 'd 0 100 gemm compute kernel' 'd 300 100 gemm2 compute kernel' \
	    'h 120 160 enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__' | mk > "$T/dl.ndjson"
	trace-report --json "$T/dl.ndjson" > "$T/dl.json"
	json_is "$T/dl.json" '[.findings[] | select(.rule == "host_bound") | .explains_ns, .evidence.data_loading_gap_ns]' '[160000,160000]'
	run jq -r '.findings[] | select(.rule == "host_bound") | .evidence.text, .suggestion' "$T/dl.json"
	assert_line --index 0 --partial "; 80.0 % of gap time is during data loading (DataLoader spans)"
	assert_line --index 1 --partial "load data ahead: more DataLoader workers (num_workers)"
	sed 's/enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__/forward/' "$T/dl.ndjson" > "$T/nd.ndjson"
	run bash -c "trace-report --json '$T/nd.ndjson' | jq -r '.findings[] | select(.rule == \"host_bound\") | .evidence.data_loading_gap_ns, .suggestion'"
	assert_line --index 0 "0"
	refute_output --partial "DataLoader"
	# Steps (ProfilerStep markers) of 1000, 1000, 2000, 1000 us; steady
	# (warmup 1): 1000, 2000, 1000: mean 1333.3, stddev 471.4 = 35.4 %;
	# beyond the median (1000): 1000 of 4000 = 25 %; slowest step 3.
	printf 'h %s 1000 ProfilerStep#%s\n' 0 1 1000 2 | mk > "$T/v.ndjson"
	printf 'h 2000 2000 ProfilerStep#3\nh 4000 1000 ProfilerStep#4\n' | mk >> "$T/v.ndjson"
	trace-report --json "$T/v.ndjson" > "$T/v.json"
	json_is "$T/v.json" '[.findings[] | select(.rule == "step_variance") | .explains_ns, .explains_pct, .evidence.slowest_step, .evidence.slowest_ns]' '[1000000,25,3,2000000]'
	sed 's/"dur_ns":2000000/"dur_ns":1000000/' "$T/v.ndjson" > "$T/v2.ndjson"
	json_is <(trace-report --json "$T/v2.ndjson") '[.findings[] | select(.rule == "step_variance")] | length' '0'
}

# The profile-window fixtures (no step markers, no XLA modules): the
# finding values against breakdown_ref.py summed over devices.
@test "real fixtures without steps: finding values reproduced by python3" {
	need_fixtures
	for f in hta_alexnet.json.gz kineto_before_fix.json tracelens_torch_compile_triton.json.gz; do
		chrome2ndjson "$FIXTURES/chrome/$f" > "$T/f.ndjson" 2>/dev/null
		trace-report --json "$T/f.ndjson" > "$T/f.json"
		"$PY" "$TOOLS/breakdown_ref.py" "$T/f.ndjson" > "$T/f.ref"
		run "$PY" - "$T/f.json" "$T/f.ref" <<-'E'
		import json, sys
		rep = json.load(open(sys.argv[1]))
		ref = [json.loads(l) for l in open(sys.argv[2])]
		tot = sum(r["dur_ns"] for r in ref)
		part = {k: sum(r[k] for r in ref) for k in
		        ("communication_ns", "idle_ns", "host_ns", "memory_ns")}
		assert rep["breakdown"]["window"] == "profile", rep["breakdown"]["window"]
		rules = {"comm_exposed": "communication_ns", "device_idle": "idle_ns",
		         "host_bound": "host_ns", "memory_ops": "memory_ns"}
		val = {t["rule"]: t for t in rep["thresholds"]}
		for rule, k in rules.items():
		    want = 100.0 * part[k] / tot
		    assert abs(val[rule]["value"] - want) < 1e-9, (rule, val[rule], want)
		    assert val[rule]["fired"] == (want >= val[rule]["threshold"]), rule
		for t in ("step_variance", "straggler"):
		    assert val[t]["not_run"] == "no steps", val[t]
		    assert val[t]["value"] is None
		pcts = []
		for f in rep["findings"]:
		    if f["rule"] in rules:
		        assert f["explains_ns"] == part[rules[f["rule"]]], f
		    if f["rule"] == "launch_gaps":
		        idle = part["idle_ns"] + part["host_ns"]
		        assert abs(f["explains_ns"] - idle * f["value"] / 100) <= 1, f
		    assert abs(f["explains_pct"] - 100.0 * f["explains_ns"] / tot) < 1e-6, f
		    pcts.append(f["explains_pct"])
		assert pcts == sorted(pcts, reverse=True), pcts
		print(len(rep["findings"]))
		E
		[ "$status" -eq 0 ] || fail "$f: $output"
	done
}

# ResNet-50 (steps from ProfilerStep markers): the gaps before pageable HtoD
# copies and during the DataLoader's __next__, by gaps_check.py and a union
# of the DataLoader spans in python3.
@test "ResNet-50: idle before pageable copies and data loading, by python3" {
	need_fixtures
	chrome2ndjson "$FIXTURES/chrome/kineto2021_resnet50_nw0.pt.trace.json.gz" > "$T/rn.ndjson"
	trace-report --json "$T/rn.ndjson" > "$T/rn.json"
	"$PY" "$TOOLS/gaps_check.py" --level device "$T/rn.ndjson" > "$T/rn.gaps"
	run "$PY" - "$T/rn.json" "$T/rn.gaps" "$T/rn.ndjson" <<-'E'
	import json, sys
	rep = json.load(open(sys.argv[1]))
	gaps = [json.loads(l) for l in open(sys.argv[2])]
	dl = []
	for l in open(sys.argv[3]):
	    if "DataLoader" not in l:
	        continue
	    e = json.loads(l)
	    if e.get("type") == "span" and "dataloader" in e["name"].lower():
	        dl.append((e["ts_ns"], e["ts_ns"] + e["dur_ns"]))
	page = sum(g["dur_ns"] for g in gaps
	           if "Pageable" in g["payload"] and "HtoD" in g["payload"])
	load = sum(max(0, min(b, g["ts_ns"] + g["dur_ns"]) - max(a, g["ts_ns"]))
	           for g in gaps for a, b in dl)
	f = {x["rule"]: x for x in rep["findings"]}["host_bound"]
	ev = f["evidence"]
	assert ev["gap_ns"] == sum(g["dur_ns"] for g in gaps), ev
	assert ev["pageable_htod_gap_ns"] == page, (ev, page)
	assert ev["data_loading_gap_ns"] == load, (ev, load)
	assert ev["top_payload"] == "Memcpy HtoD (Pageable -> Device)", ev
	print("%.1f %.1f" % (100.0 * page / ev["gap_ns"], 100.0 * load / ev["gap_ns"]))
	print(f["suggestion"])
	E
	assert_success
	assert_line --index 0 "68.1 68.7"
	assert_line --index 1 --partial "pin host memory (pin_memory=True) and copy with non_blocking=True"
	assert_line --index 1 --partial "more DataLoader workers (num_workers)"
}

# Every finding printed on a real fixture names its evidence: checked in
# trace-report.bats ("real fixtures: every report has every section", which
# converts every fixture already) by tools/findings_evidence.py.

@test "CPU-only profile: the steady step windows split into host work and nothing, as python3 has them" {
	# torch-legacy single: three ProfilerStep# windows, warmup 1; the
	# steady windows' host and idle time from the independent step
	# checker, summed over steps 2 and 3
	chrome2ndjson "$FIXTURES/torch-legacy/single.pt.trace.json.gz" > "$T/s.ndjson" 2>/dev/null
	want=$("$PY" "$TOOLS/steps_check.py" "$T/s.ndjson" | jq -rs '
	    [.[] | select(.step >= 2)] |
	    [(map(.dur_ns) | add), (map(.host_ns) | add), (map(.idle_ns) | add)] |
	    "\(.[0]) \(.[1] * 1000 / .[0] | round / 10) \(.[2] * 1000 / .[0] | round / 10)"')
	set -- $want
	trace-report "$T/s.ndjson" > "$T/r.md"
	run sed -n '/^## 4/,/^## 5/p' "$T/r.md"
	assert_line --index 1 "No device ops (a CPU-only profile): the steady step windows split into time some host span runs and time nothing runs (trace-steps -s)."
	assert_line "$(printf '| steady steps | %s | %.1f %% | %.1f %% |' \
	    "$(awk -v n="$1" 'BEGIN { printf "%.3f ms", n / 1e6 }')" "$2" "$3")"
}

@test "the profiler's own span is no work: a Kineto rank's idle device time is idle, and the headline says so (python3)" {
	# hta_sampled_rank-0: Kineto's "PyTorch Profiler (0)" (cat Trace)
	# covers the whole capture; counted as host work it made every idle
	# moment "the host works" (device_idle 0 %, host_bound 56.8 %)
	chrome2ndjson "$FIXTURES/chrome/hta_sampled_rank-0.json.gz" > "$T/s.ndjson"
	run jq -rs '(map(select(.type == "span")) | [(map(.ts_ns) | min), (map(.ts_ns + .dur_ns) | max)]) as [$a, $b]
	    | map(select(.type == "span" and .cat == "Trace"))
	    | map("\(.name) \(.dur_ns * 100 / ($b - $a) | floor)") | .[]' "$T/s.ndjson"
	assert_output "PyTorch Profiler (0) 100"
	# the steady step (552, warm-up 1) on GPU:0 as the independent step
	# checker splits it, by the rule of ndtrace(7) that leaves the span out
	want=$("$PY" "$TOOLS/steps_check.py" --per-device "$T/s.ndjson" |
	    jq -rs 'map(select(.step == 552)) | .[0] | "\(.dur_ns) \(.host_ns) \(.idle_ns)"')
	set -- $want
	[ "$3" -gt $(($1 / 10)) ]	# idle is more than the rule's 10 %
	run bash -c "trace-report --json '$T/s.ndjson' | jq -r '.breakdown.all_devices | \"\(.dur_ns) \(.host_ns) \(.idle_ns)\"'"
	assert_output "$1 $2 $3"
	# the first finding is the idle device, with the time it explains
	run bash -c "trace-report --json '$T/s.ndjson' | jq -r '.findings[0] | \"\(.rule) \(.explains_ns)\"'"
	assert_output "device_idle $3"
	run bash -c "trace-report '$T/s.ndjson' | sed -n '/findings, ranked/,\$p' | grep -m1 '^### '"
	assert_output "### device_idle"
}

@test "MoE expert parallelism: DeepEP's all-to-all is communication, and the headline is the exposed communication (jq)" {
	"$PY" "$TOOLS/gen_moe.py" > "$T/moe.pt.trace.json"
	chrome2ndjson "$T/moe.pt.trace.json" > "$T/m.ndjson"
	# every deep_ep:: kernel is an all-to-all, nothing else is
	run jq -r 'select(.type == "span" and .cat == "kernel") | [(.name | test("deep_ep::")), .class, .family] | @tsv' "$T/m.ndjson"
	[ "$(printf '%s\n' "$output" | sort -u)" = "$(printf 'false\tcompute\tmatmul\ntrue\tcommunication\tall-to-all')" ]
	# the steady steps (2 to 4; warm-up 1): device time in deep_ep::
	# kernels, by name alone (they do not overlap)
	want=$(jq -s '(map(select(.type == "span" and .name == "ProfilerStep#2")) | .[0].ts_ns) as $a
	    | map(select(.type == "span" and .cat == "kernel" and (.name | test("deep_ep::")) and .ts_ns >= $a) | .dur_ns) | add' "$T/m.ndjson")
	dur=$(jq -s '(map(select(.type == "span" and .name == "ProfilerStep#2")) | .[0].ts_ns) as $a
	    | map(select(.type == "span" and (.name | test("^ProfilerStep#")) and .ts_ns >= $a) | .dur_ns) | add' "$T/m.ndjson")
	run bash -c "trace-report --json '$T/m.ndjson' | jq -r '.breakdown.all_devices | \"\(.dur_ns) \(.communication_ns)\"'"
	assert_output "$dur $want"
	[ $((want * 100 / dur)) -eq 45 ]
	run bash -c "trace-report --json '$T/m.ndjson' | jq -r '.findings[0] | \"\(.rule) \(.explains_ns)\"'"
	assert_output "comm_exposed $want"
}

@test "counts read as English: 1 gap, 2 gaps; 1 step" {
	printf '%s\n' '{"type":"meta","schema":"ndtrace/1","source":"s","format":"chrome","origin_ns":0,"host":null,"rank":null,"producer":"t"}' \
	    '{"type":"span","ts_ns":0,"dur_ns":1000,"name":"k1","pid":0,"tid":7,"cat":"kernel","device":"GPU:0","class":"compute","family":"matmul"}' \
	    '{"type":"span","ts_ns":5000,"dur_ns":1000,"name":"k2","pid":0,"tid":7,"cat":"kernel","device":"GPU:0","class":"compute","family":"matmul"}' > "$T/one.nd"
	run trace-report "$T/one.nd"
	assert_line --partial "Device idle: 1 gap where no op runs"
	assert_line --partial "Evidence: 1 gap, 4.0 us in total"
	refute_output --partial "1 gaps"
	# a third kernel: two gaps
	printf '%s\n' '{"type":"span","ts_ns":9000,"dur_ns":1000,"name":"k3","pid":0,"tid":7,"cat":"kernel","device":"GPU:0","class":"compute","family":"matmul"}' >> "$T/one.nd"
	run trace-report "$T/one.nd"
	assert_line --partial "Device idle: 2 gaps where no op runs"
}
