#!/usr/bin/env bats
# Every ```sh block of examples/COOKBOOK.md runs, succeeds and prints
# something, on generated example data (blocks that read ~/ are the
# "make your own" ones and are left out); then each block's output is
# checked against what it must print, on data where the answer is not
# empty, with the numbers computed independently (python3 and jq over the
# stream: bench/topk_ref.py for exclusive time, tests/tools/bykey.py for sums).

load helpers

setup_file() {
	D="$BATS_FILE_TMPDIR/data"
	mkdir -p "$D"
	export PATH="$ND_BIN:$PATH"
	gen-xplane --kind tpu --seed 7 --events 20000 -o "$D/run.pb"
	xplane2ndjson "$D/run.pb" > "$D/run.ndjson"
	gen-xplane --kind gpu --seed 11 --events 8000 -o "$D/gpu.pb"
	xplane2ndjson "$D/gpu.pb" > "$D/gpu.ndjson"
	for r in 0 1 2 3; do
		gen-xplane --kind gpu --seed $((100 + r)) --events 3000 -o "$D/rank$r.pb"
		xplane2ndjson "$D/rank$r.pb" > "$D/rank$r.ndjson"
	done
	gen-xplane --kind tpu --seed 21 --events 6000 -o "$D/before.pb"
	xplane2ndjson "$D/before.pb" > "$D/before.ndjson"
	gen-xplane --kind tpu --seed 22 --events 7000 -o "$D/after.pb"
	xplane2ndjson "$D/after.pb" > "$D/after.ndjson"
	rm -f "$D"/*.pb
	# a real 4-stage 1F1B pipeline, stage 2 slow (torch 1.13, gloo)
	for r in 0 1 2 3; do
		chrome2ndjson "$FIXTURES/pipeline/1f1b_p4_m8_slow2_rank$r.pt.trace.json.gz" > "$D/pipe_rank$r.ndjson"
	done
	# real profiles without step markers: XLA-module steps, and none
	xplane2ndjson "$FIXTURES/xplane/tpu_inference_4core.xplane.pb" > "$D/jax.ndjson"
	chrome2ndjson "$FIXTURES/chrome/hta_alexnet.json.gz" > "$D/eager.ndjson"
	awk '/^```sh$/ {n++; on=1; next} /^```$/ {on=0; next} on {print > (dir "/block" n ".sh")}' \
	    dir="$BATS_FILE_TMPDIR" "$BATS_TEST_DIRNAME/../examples/COOKBOOK.md"
}

setup() {
	cd "$BATS_FILE_TMPDIR/data"
	REF="$PY $BATS_TEST_DIRNAME/../bench/topk_ref.py"
	BYKEY="$PY $BATS_TEST_DIRNAME/tools/bykey.py"
}

# block TEXT: run the cookbook block that contains TEXT (exactly one)
block() {
	local b
	b=$(grep -l -F -- "$1" "$BATS_FILE_TMPDIR"/block*.sh)
	[ "$(echo "$b" | wc -l)" -eq 1 ] && [ -n "$b" ] ||
	    fail "not exactly one cookbook block with: $1 ($b)"
	run bash -e -o pipefail "$b"
	[ "$status" -eq 0 ] || fail "$(cat "$b")
exited $status: $output"
}

# table_col N: column N (from 1, spaces) of the data rows of a --table
table_col() {
	echo "$output" | awk -v c="$1" 'NR > 2 && NF > 3 && !/^self time/ {print $c}'
}

@test "every cookbook block runs and prints something" {
	n=0
	for b in "$BATS_FILE_TMPDIR"/block*.sh; do
		grep -q '~/' "$b" && continue
		n=$((n + 1))
		run bash -e -o pipefail "$b"
		[ "$status" -eq 0 ] || fail "$(cat "$b")
exited $status: $output"
		[ -n "$output" ] || fail "$(cat "$b")
printed nothing"
	done
	[ "$n" -ge 14 ] || fail "only $n blocks found"
}

@test "cookbook: top ops by self time (table, CSV, JSON) agree with an independent nesting" {
	# [name, count, total_ns, self_ns], largest self time first
	$REF ndjson run.ndjson > "$BATS_TEST_TMPDIR/want"
	all=$(jq -s -c '["(all)", (map(.[1]) | add), (map(.[2]) | add), (map(.[3]) | add)]' "$BATS_TEST_TMPDIR/want")
	block 'trace-topk -k 10 --table run.ndjson'
	# ten rows, the other row, the names in order, the count of spans
	[ "$(table_col 11 | head -10)" = "$(head -10 "$BATS_TEST_TMPDIR/want" | jq -r '.[0]')" ]
	[ "$(table_col 4 | head -10)" = "$(head -10 "$BATS_TEST_TMPDIR/want" | jq -r '.[1]')" ]
	assert_line --regexp '^ *[0-9.]+%  .*  \(other\)$'
	assert_line --regexp "^self time [0-9.]+s in $(echo "$all" | jq '.[1]') spans"
	block 'trace-topk -k 2 --csv run.ndjson'
	# CSV: name, count, total_ns, self_ns of the first two rows, exactly
	[ "$(echo "$output" | sed -n 2,3p | cut -d, -f1-4)" = "$(head -2 "$BATS_TEST_TMPDIR/want" | jq -r '"\"" + .[0] + "\"," + ([.[1], .[2], .[3]] | map(tostring) | join(","))')" ]
	# the other row holds the rest of the spans
	run bash -c "echo '$output' | sed -n 4p | cut -d, -f2"
	assert_output $(($(echo "$all" | jq '.[1]') - $(head -2 "$BATS_TEST_TMPDIR/want" | jq -s 'map(.[1]) | add')))
	block "jq -c '{name, self_ns, share}'"
	# JSON: the last block line is the top 3 with shares of the total
	echo "$output" | tail -4 > "$BATS_TEST_TMPDIR/got"
	run $PY -c 'import json, sys
got = [json.loads(l) for l in open(sys.argv[1])]
want = [json.loads(l) for l in open(sys.argv[2])]
total = sum(w[3] for w in want)
assert [g["name"] for g in got[:3]] == [w[0] for w in want[:3]], got
assert [g["self_ns"] for g in got[:3]] == [w[3] for w in want[:3]], got
assert got[3]["name"] is None and got[3]["self_ns"] == total - sum(w[3] for w in want[:3])
assert all(abs(g["share"] - g["self_ns"] / total) < 1e-12 for g in got)
print("ok")' "$BATS_TEST_TMPDIR/got" "$BATS_TEST_TMPDIR/want"
	assert_output ok
}

@test "cookbook: compute vs communication, and the worst collective" {
	block 'trace-topk --by class --table gpu.ndjson'
	$BYKEY gpu.ndjson class > "$BATS_TEST_TMPDIR/want"
	# first table: classes by self time with their counts
	[ "$(echo "$output" | awk '/^self time/ {exit} NR > 2 && NF > 3 {print $11, $4}')" = "$(head -n -1 "$BATS_TEST_TMPDIR/want" | jq -r '"\(.[0]) \(.[1])"')" ]
	assert_line --index 2 --regexp '  compute$'
	# second table: families of the communication ops
	jq -c 'select(.class == "communication")' gpu.ndjson > "$BATS_TEST_TMPDIR/comm"
	$BYKEY "$BATS_TEST_TMPDIR/comm" family > "$BATS_TEST_TMPDIR/fam"
	[ "$(echo "$output" | awk '/^self time/ {n++; next} n == 1 && /^Self/ {t=1; next} t && /^-/ {next} t && !/^ *$/ && !/\(other\)/ {print $11, $4}' | head -3)" = "$(head -3 "$BATS_TEST_TMPDIR/fam" | jq -r '"\(.[0]) \(.[1])"')" ]
	assert_line --regexp "^self time [0-9.]+ms in $(tail -1 "$BATS_TEST_TMPDIR/fam" | jq '.[1]') spans\$"
	# and the JSON rows: self (= total, nothing nests) = the independent sums
	run bash -o pipefail -c "trace-topk --by class -k 0 gpu.ndjson | jq -c '[.class, .count, .self_ns, .total_ns]'"
	assert_output "$(head -n -1 "$BATS_TEST_TMPDIR/want" | jq -c '. + [.[2]]')"
}

@test "cookbook: idle gaps by payload and by cause agree with the gap records" {
	trace-gaps run.ndjson > "$BATS_TEST_TMPDIR/gaps"
	block 'trace-gaps run.ndjson | trace-topk --by payload -k 5 --table'
	# top 5 payloads by gap time, with their counts (python over the gaps)
	want=$($PY -c 'import json, sys, collections
t = collections.defaultdict(lambda: [0, 0])
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r["type"] == "gap":
        t[r.get("payload")][0] += r["dur_ns"]; t[r.get("payload")][1] += 1
for k, v in sorted(t.items(), key=lambda kv: (-kv[1][0], kv[0]))[:5]:
    print(k, v[1])
print(sum(v[1] for v in t.values()))' "$BATS_TEST_TMPDIR/gaps")
	[ "$(echo "$output" | awk 'NR > 2 && NR <= 7 {print $11, $4}')" = "$(echo "$want" | head -5)" ]
	assert_line --regexp "^self time [0-9.]+ms in $(echo "$want" | tail -1) gaps\$"
	# three gaps of at least 1us before a fusion, the first three in order
	block 'trace-gaps --min 1us run.ndjson'
	[ "$(echo "$output" | tail -3)" = "$(jq -c 'select(.type == "gap" and .dur_ns >= 1000 and (.payload | startswith("fusion")))' "$BATS_TEST_TMPDIR/gaps" | head -3)" ]
	# causes on the GPU profile, with counts
	block 'trace-gaps gpu.ndjson | trace-topk --by cause --table'
	[ "$(table_col 11 | sort)" = "$(trace-gaps gpu.ndjson | jq -r 'select(.type == "gap") | .cause' | sort -u)" ]
	for c in $(table_col 11); do
		n=$(trace-gaps gpu.ndjson | jq -r "select(.type == \"gap\" and .cause == \"$c\")" | grep -c '"type"')
		echo "$output" | awk -v c="$c" -v n="$n" '$11 == c && $4 == n {f=1} END {exit !f}' ||
		    fail "cause $c: not $n gaps"
	done
}

@test "cookbook: named-scope regions add up to the exclusive time" {
	$REF ndjson run.ndjson | jq -s -c '[(map(.[1]) | add), (map(.[3]) | add)]' > "$BATS_TEST_TMPDIR/all"
	total=$(jq '.[1]' "$BATS_TEST_TMPDIR/all")
	block 'trace-regions --tree --depth 3 run.ndjson'
	# the root holds every device op; the total line is their self time
	assert_line --index 1 --regexp "^100\.00% +[0-9.]+s +0ns +$(jq '.[0]' "$BATS_TEST_TMPDIR/all")  train_step "
	assert_line --regexp '^total 1\.306s$'
	[ "$(awk "BEGIN {printf \"%.3f\", $total / 1e9}")" = 1.306 ]
	block 'trace-regions --folded run.ndjson | sort -k2 -n -r | sed 5q'
	top5=$(echo "$output" | tail -5 | awk '{print $NF}')
	# folded stacks: all of them sum to the total; these are the largest
	run bash -c "trace-regions --folded run.ndjson | awk '{s += \$NF} END {print s}'"
	assert_output "$total"
	[ "$(trace-regions --folded run.ndjson | awk '{print $NF}' | sort -n -r | head -5)" = "$top5" ]
}

@test "cookbook: the context of the first all-reduce is its timeline's neighbours" {
	block 'trace-context -C 2 --max 1 --overlapping --table "$op" run.ndjson'
	# the match and the two ops before and after it on its timeline
	want=$($PY -c 'import json, sys
rs = [json.loads(l) for l in open(sys.argv[1])]
m = next(r for r in rs if r["type"] == "span" and r.get("family") == "all-reduce")
tl = sorted((r for r in rs if r["type"] == "span" and r.get("source") == m.get("source")
             and r["pid"] == m["pid"] and r["tid"] == m["tid"]), key=lambda r: (r["ts_ns"], -r["dur_ns"]))
i = tl.index(m)
print(m["name"]); print(" ".join(r["name"] for r in tl[i - 2:i])); print(" ".join(r["name"] for r in tl[i + 1:i + 3]))' run.ndjson)
	op=$(echo "$want" | sed -n 1p)
	assert_line --index 0 --regexp "^match 1: $op \(pid "
	[ "$(echo "$output" | awk '$1 == "before" {print $NF}' | xargs)" = "$(echo "$want" | sed -n 2p)" ]
	[ "$(echo "$output" | awk '$1 == "after" {print $NF}' | xargs)" = "$(echo "$want" | sed -n 3p)" ]
	assert_line --regexp "^  match +0ns +[0-9.]+us  $op\$"
	# the Perfetto file holds the spans of the context stream
	block 'ndjson2chrome -o context.json'
	n=$(trace-context -C 5 --max 1 "$op" run.ndjson | jq -c 'select(.type == "span")' | wc -l)
	[ "$n" -gt 5 ]
	run jq '[.traceEvents[] | select(.ph == "X")] | length' context.json
	assert_output "$n"
}

@test "cookbook: step times and their breakdown agree with the Steps lines" {
	# each step spans its Steps-line spans over all devices; the median is
	# that of the steady steps (warm-up 1), the lower middle
	want=$($PY -c 'import json, sys
st = {}
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r["type"] == "span" and r.get("thread") == "Steps":
        a, b = st.get(r["name"], (1 << 62, 0))
        st[r["name"]] = (min(a, r["ts_ns"]), max(b, r["ts_ns"] + r["dur_ns"]))
d = [b - a for _, (a, b) in sorted(st.items(), key=lambda kv: int(kv[0]))]
s = sorted(d[1:])
print(json.dumps({"count": len(d), "median_ns": s[(len(s) - 1) // 2]}, separators=(",", ":")))
print("\n".join("%d\t%d" % x for x in enumerate(d[:5])))' run.ndjson)
	block 'trace-steps --summary run.ndjson'
	assert_line --index 0 "$(echo "$want" | sed -n 1p | sed 's/}$//'),\"p90_ns\":$(echo "$output" | head -1 | jq .p90_ns),\"classes\":[\"typical\"]}"
	# the five first steps: number and duration; the parts fit in the step
	[ "$(echo "$output" | tail -5 | cut -f1,2)" = "$(echo "$want" | tail -5)" ]
	echo "$output" | tail -5 | awk '$3 + $4 + $5 > $2 {exit 1}'
}

@test "cookbook: no step markers: XLA-module steps counted by jq, profile windows by python3" {
	block "trace-steps --summary jax.ndjson"
	# the step module: the XLA module with the most device time; its
	# executions on one device are the steps
	want=$(jq -rs '[.[] | select(.type == "span" and .cat == "xla_module")
	    | {d: .device, m: (.name | sub("\\(.*"; "")), t: .dur_ns}]
	    | group_by(.m) | map({m: .[0].m, t: (map(.t) | add),
	      n: (map(select(.d == "TPU:0")) | length)})
	    | max_by(.t) | .n' jax.ndjson)
	[ "$want" -eq 100 ] || fail "jq found $want executions"
	echo "$output" | head -1 | jq -e --argjson n "$want" \
	    '.step_source == "xla_module" and .count == $n' >/dev/null ||
	    fail "$output"
	# the profile windows of the stream without steps, as python3 has them
	"$PY" "$BATS_TEST_DIRNAME/tools/breakdown_ref.py" eager.ndjson |
	    jq -c '{device, dur_ns, compute_ns, host_ns, idle_ns}' > "$BATS_TEST_TMPDIR/want"
	echo "$output" | grep '^{"device"' > "$BATS_TEST_TMPDIR/got"
	diff "$BATS_TEST_TMPDIR/want" "$BATS_TEST_TMPDIR/got"
	echo "$output" | grep -q '^No steps were found: the breakdown is over the profile window' ||
	    fail "$output"
}

@test "cookbook: the straggler is the rank ready last in most steps" {
	block "jq -c 'select(.type == \"straggler\")'"
	got=$output
	for r in 0 1 2 3; do trace-steps "rank$r.ndjson"; done > "$BATS_TEST_TMPDIR/steps"
	# python over each rank's step records: per step, the rank ready last
	# (origin_ns + ts_ns + dur_ns - wait_ns, trace-steps(1))
	want=$($PY -c 'import json, sys, collections
d = collections.defaultdict(dict)
origin = {}
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r["type"] == "meta":
        origin[r["source"]] = r["origin_ns"]
    if r["type"] == "step":
        d[r["step"]][r["source"]] = origin[r["source"]] + r["ts_ns"] + r["dur_ns"] - r["wait_ns"]
c = collections.Counter()
n = 0
for s, v in d.items():
    if len(v) >= 2:
        n += 1
        c[max(v, key=lambda k: (v[k], k))] += 1
print(n, c.most_common(1)[0][0], c.most_common(1)[0][1])' "$BATS_TEST_TMPDIR/steps")
	read -r n src k <<< "$want"
	run jq -r '[.steps, .source, .straggler_steps] | @tsv' <<< "$got"
	assert_output "$n	$src	$k"
}

@test "cookbook: trace-report's findings, in Markdown and as JSON rule ids" {
	block "trace-report run.ndjson | sed -n '/^## 9 Findings/,\$p'"
	assert_line --index 0 '## 9 Findings'
	# one rank: the straggler rule cannot run, and the verdict says so
	assert_line --regexp '^No rule fired, but not every rule could run, so a bottleneck they measure is not ruled out: compute [0-9.]+ %, .* Not run: straggler \(one rank\)\.$'
	# the step_variance row: stddev / mean of the steady steps, by python
	trace-steps run.ndjson > "$BATS_TEST_TMPDIR/steps"
	cv() {
		$PY -c 'import json, sys, statistics
d = [json.loads(l)["dur_ns"] for l in open(sys.argv[1]) if "\"step\"" in l and json.loads(l)["type"] == "step"][1:]
print("%.1f" % (100 * statistics.pstdev(d) / statistics.mean(d)))' "$1"
	}
	assert_line "| step_variance | steady step time stddev, % of the mean | 10 % | $(cv "$BATS_TEST_TMPDIR/steps") % | no |"
	# after.ndjson: its steps vary by more than 10 %, so the rule fires
	block "trace-report --json after.ndjson | jq -c '[.findings[] | .rule]'"
	[ "$(echo "$output" | tail -1)" = '["step_variance"]' ]
	trace-steps after.ndjson > "$BATS_TEST_TMPDIR/steps"
	awk -v v="$(cv "$BATS_TEST_TMPDIR/steps")" 'BEGIN {exit !(v > 10)}'
	run bash -c "trace-report after.ndjson | grep '^| step_variance '"
	assert_output "| step_variance | steady step time stddev, % of the mean | 10 % | $(cv "$BATS_TEST_TMPDIR/steps") % | yes |"
}

@test "cookbook: the fan-out recipes equal one stream over every rank" {
	want=$(trace-topk -k 5 --table rank0.ndjson rank1.ndjson rank2.ndjson rank3.ndjson)
	rm -f ./*.partial
	block 'trace-topk --merge -k 5 --table rank*.ndjson.partial'
	[ "$output" = "$want" ]
	[ "$(ls rank*.ndjson.partial | wc -l)" -eq 4 ]
	rm -f ./*.partial
	block 'parallel -k -j 2 trace-topk --partial ::: rank*.ndjson'
	[ "$output" = "$want" ]
	# the top row is the collective with the most device time
	cat rank?.ndjson > "$BATS_TEST_TMPDIR/all.ndjson"
	$BYKEY "$BATS_TEST_TMPDIR/all.ndjson" name | head -1 > "$BATS_TEST_TMPDIR/top"
	# (its name, longer than 72, shortened: ndtrace(7) "Names in tables")
	top=$(jq -r '.[0]' "$BATS_TEST_TMPDIR/top")
	echo "$want" | sed -n 3p | grep -qF "  ${top%%(*}(…)"
}

@test "cookbook: the diff of two runs and the CI gate's history" {
	block 'trace-diff --table before.ndjson after.ndjson || true'
	# median step time before and after, and the change, by python
	med() {
		trace-steps "$1" | $PY -c 'import json, sys
d = sorted([json.loads(l)["dur_ns"] for l in sys.stdin if json.loads(l)["type"] == "step"][1:])
print(d[(len(d) - 1) // 2])'
	}
	b=$(med before.ndjson)
	a=$(med after.ndjson)
	pct=$(awk -v a="$a" -v b="$b" 'BEGIN {printf "%+.2f%%", 100 * (a - b) / b}')
	assert_line --regexp "^  median +[0-9.]+ms +[0-9.]+ms +\+[0-9.]+us +\\$pct\$"
	[ "$pct" = "+18.41%" ]
	rm -f history.ndjson
	block "trace-diff --history history.ndjson --trend --table"
	assert_line --index 0 'history history.ndjson: 1 records (pass 1, warn 0, fail 0)'
	assert_line --regexp "^latest: [0-9TZ:-]+ $(date +%F) pass\$"
	assert_line --regexp "^  [0-9TZ:-]+ $(date +%F) +pass +[0-9.]+ms +\\$pct\$"
	run jq -r '[.label, .status] | @tsv' history.ndjson
	assert_output "$(date +%F)	pass"
}

@test "cookbook: pipeline bubbles and the slow stage agree with the python3 reference" {
	PREF="$PY $BATS_TEST_DIRNAME/tools/pipeline_ref.py"
	$PREF pipe_rank0.ndjson pipe_rank1.ndjson pipe_rank2.ndjson pipe_rank3.ndjson > "$BATS_TEST_TMPDIR/want"
	block "jq -c 'select(.type == \"pipe_step\") | {schedule"
	# the block's first line is the table; the jq lines follow
	[ "$(echo "$output" | grep -c '^{"schedule"')" -eq 2 ]
	[ "$(echo "$output" | grep '^{"schedule"' | jq -c '[.schedule, .stages, .microbatches, .slow_stage]' | sort -u)" = '["1f1b",4,8,2]' ]
	[ "$(echo "$output" | grep '^{"schedule"' | jq -c .ideal_bubble_frac | sort -u)" = "$(jq -c 'select(.type == "pipe_step") | .ideal_bubble_frac' "$BATS_TEST_TMPDIR/want" | sort -u)" ]
	# per stage: bubble within 1 % of the reference, explained 0 only on the slow stage
	echo "$output" | grep '^{"stage"' > "$BATS_TEST_TMPDIR/got"
	run $PY -c 'import json, sys
got = [json.loads(l) for l in open(sys.argv[1])]
want = [r for r in map(json.loads, open(sys.argv[2])) if r["type"] == "pipe_rank"]
assert len(got) == len(want) == 8, (len(got), len(want))
for g, w in zip(got, want):
    assert g["stage"] == w["stage"], (g, w)
    assert abs(g["bubble_ns"] - w["bubble_ns"]) <= 0.01 * w["bubble_ns"], (g, w)
    assert (g["explained_frac"] == 0) == (g["stage"] == 2), g
print("ok")' "$BATS_TEST_TMPDIR/got" "$BATS_TEST_TMPDIR/want"
	assert_output ok
	# the table names the slow stage; the chart is an SVG
	block 'trace-pipeline --table pipe_rank*.ndjson'
	assert_line --partial 'schedule 1f1b, clock step_marker'
	assert_line --regexp 'slow stage 2 \(rank 2, '
	head -c 4 schedule.svg | grep -q '<svg'
	# one partial per rank, merged: the same table as one run
	block 'trace-pipeline --merge --table'
	[ "$output" = "$(trace-pipeline --table pipe_rank0.ndjson pipe_rank1.ndjson pipe_rank2.ndjson pipe_rank3.ndjson)" ]
}
