#!/usr/bin/env bats
# trace-diff: deltas, rules, verdict and exit status, provenance, history.

load helpers

gen() {
	"$PY" "$BATS_TEST_DIRNAME/tools/diff_gen.py" "$@"
}

setup_file() {
	F=$BATS_FILE_TMPDIR
	# before: steps of 100 ms after a 50 ms warmup; after: 110 ms.
	# fusion.12 grows 2 -> 2.5 ms (x3 per step), ar (communication,
	# family all-reduce) stays, old_op vanishes, gelu is new.
	gen --steps 50,100,100,100,100 --op fusion.12:2000:3::fusion \
	    --op ar:1000:2:communication:all-reduce --op old_op:500:1 \
	    --sha aa --source before.json >"$F/b.nd"
	gen --steps 50,110,110,110,110 --op fusion.12:2500:3::fusion \
	    --op ar:1000:2:communication:all-reduce --op gelu:100:1 \
	    --sha bb --source after.json >"$F/a.nd"
}

setup() {
	T=$BATS_TEST_TMPDIR
	cp "$BATS_FILE_TMPDIR/b.nd" "$BATS_FILE_TMPDIR/a.nd" "$T/"
}

# the delta record of a metric
delta() {
	grep -F "\"metric\":\"$2\"," "$1" | grep '^{"type":"delta"'
}

@test "step deltas: median, p90, mean, count, absolute and percent" {
	run "$ND_BIN/trace-diff" "$T/b.nd" "$T/a.nd"
	assert_failure 1
	echo "$output" >"$T/out"
	run delta "$T/out" step.median
	assert_output '{"type":"delta","metric":"step.median","kind":"step","class":"all","stat":"median","before_ns":100000000,"after_ns":110000000,"delta_ns":10000000,"pct":10}'
	run delta "$T/out" step.p90
	assert_output --partial '"before_ns":100000000,"after_ns":110000000,"delta_ns":10000000,"pct":10}'
	run delta "$T/out" step.count
	assert_output --partial '"before":4,"after":4,"delta":0,"pct":0}'
}

@test "share deltas in share points" {
	"$ND_BIN/trace-diff" "$T/b.nd" "$T/a.nd" >"$T/out" || true
	run delta "$T/out" share.communication
	assert_output '{"type":"delta","metric":"share.communication","kind":"share","part":"communication","before":0.02,"after":0.018182,"delta":-0.001818,"pct":-9.09}'
	run delta "$T/out" share.compute
	assert_output --partial '"before":0.065,"after":0.069091,"delta":0.004091'
	run delta "$T/out" share.idle
	assert_output --partial '"before":0.915,"after":0.912727,"delta":-0.002273'
}

@test "per-op exclusive time per step: regressed, new, vanished, unchanged, ranked" {
	"$ND_BIN/trace-diff" "$T/b.nd" "$T/a.nd" >"$T/out" || true
	run grep '"kind":"key"' "$T/out"
	assert_line --index 0 '{"type":"delta","metric":"op:fusion.12","kind":"key","by":"name","key":"fusion.12","before_ns":6000000,"after_ns":7500000,"delta_ns":1500000,"pct":25,"count_before":3,"count_after":3,"status":"regressed","rank":1}'
	assert_line --index 1 '{"type":"delta","metric":"op:gelu","kind":"key","by":"name","key":"gelu","before_ns":0,"after_ns":100000,"delta_ns":100000,"pct":null,"count_before":0,"count_after":1,"status":"new","rank":2}'
	assert_line --index 2 --partial '"key":"ar","before_ns":2000000,"after_ns":2000000,"delta_ns":0,"pct":0,"count_before":2,"count_after":2,"status":"unchanged"'
	assert_line --index 3 --partial '"key":"old_op","before_ns":500000,"after_ns":0,"delta_ns":-500000,"pct":-100,"count_before":1,"count_after":0,"status":"vanished","rank":4}'
	run grep -c '"type":"delta"' "$T/out"
	assert_output 14
}

@test "per-step normalisation: 10 steps vs 12 steps of the same work -> no change" {
	gen --steps 100,100,100,100,100,100,100,100,100,100 --op k:1000:4 \
	    --sha 01 >"$T/s10.nd"
	gen --steps 100,100,100,100,100,100,100,100,100,100,100,100 \
	    --op k:1000:4 --sha 02 >"$T/s12.nd"
	run "$ND_BIN/trace-diff" "$T/s10.nd" "$T/s12.nd"
	assert_success
	assert_line --partial '"key":"k","before_ns":4000000,"after_ns":4000000,"delta_ns":0,"pct":0,"count_before":4,"count_after":4,"status":"unchanged"'
	assert_line --partial '"metric":"step.count","kind":"step","class":"all","stat":"count","before":9,"after":11,"delta":2'
	assert_line --partial '"type":"verdict","status":"pass","exit":0'
}

@test "default rules: median +10% fails, p90 +10% is not above +10%" {
	run "$ND_BIN/trace-diff" "$T/b.nd" "$T/a.nd"
	assert_failure 1
	assert_line --index 14 --partial '{"type":"verdict","status":"fail","exit":1,"fired":[{"rule":"step.median>+5%","level":"fail","metric":"step.median","measured":10,"unit":"%","threshold":5,'
	assert_line --index 14 --partial '"rules":[{"rule":"step.median>+5%","level":"fail"},{"rule":"step.p90>+10%","level":"fail"},{"rule":"share.communication>+0.05","level":"warn"},{"rule":"share.idle>+0.05","level":"warn"}]'
	assert_line --index 14 --partial '"keys":{"unchanged":1,"regressed":1,"improved":0,"new":1,"vanished":1}'
	assert_line --index 14 --partial '"before":{"sources":[{"source":"before.json","sha256":"aa"}],"steps":5,"steady_steps":4,"warmup_applied":true}'
	refute_output --partial '"rule":"step.p90>+10%","level":"fail","metric"'
}

@test "given rules replace the defaults: op, family, share, absolute durations" {
	run "$ND_BIN/trace-diff" --fail-on 'op:fusion.12>+30%' "$T/b.nd" "$T/a.nd"
	assert_success
	assert_line --partial '"status":"pass","exit":0,"fired":[]'
	run "$ND_BIN/trace-diff" --fail-on 'op:fusion.12 > +20%' "$T/b.nd" "$T/a.nd"
	assert_failure 1
	assert_line --partial '"fired":[{"rule":"op:fusion.12>+20%","level":"fail","metric":"op:fusion.12","measured":25,"unit":"%","threshold":20,"before_ns":6000000'
	run "$ND_BIN/trace-diff" --warn-on 'family:fusion>+1ms' --fail-on 'family:all-reduce>+10%' "$T/b.nd" "$T/a.nd"
	assert_success
	assert_line --partial '"status":"warn","exit":0,"fired":[{"rule":"family:fusion>+1ms","level":"warn","metric":"family:fusion","measured":1500000,"unit":"ns","threshold":1000000,'
	run "$ND_BIN/trace-diff" --warn-on 'share.communication<-0.001' --fail-on 'step.median>+20ms' "$T/b.nd" "$T/a.nd"
	assert_success
	assert_line --partial '"status":"warn"'
	assert_line --partial '"rule":"share.communication<-0.001","level":"warn","metric":"share.communication","measured":-0.001818,"unit":"share"'
	# a new key: any percentage rule fires (measured null)
	run "$ND_BIN/trace-diff" --fail-on 'op:gelu>+1000%' "$T/b.nd" "$T/a.nd"
	assert_failure 1
	assert_line --partial '"rule":"op:gelu>+1000%","level":"fail","metric":"op:gelu","measured":null'
	# a key absent on both sides does not fire
	run "$ND_BIN/trace-diff" --fail-on 'op:nothing>+1%' "$T/b.nd" "$T/a.nd"
	assert_success
}

@test "rule parser: bad rules exit 2 with a message naming the rule" {
	for r in 'step.median' 'step.bogus>+5%' 'share.idle>+5ms' 'op:>+5%' \
	    'step.median>+abc' 'share.idle>+2' 'step.median>' '>+5%' \
	    'step.count>+1ms' 'share.nope>+0.1'; do
		run "$ND_BIN/trace-diff" --fail-on "$r" "$T/b.nd" "$T/a.nd"
		assert_failure 2
		assert_output --partial "invalid rule '$r'"
		refute_output --partial '"type"'
	done
	run "$ND_BIN/trace-diff" --warn-on 'step.median>+5x' "$T/b.nd" "$T/a.nd"
	assert_failure 2
	assert_output "trace-diff: invalid rule 'step.median>+5x': bad duration (a number with ns, us, ms or s, or a percentage)"
	# a key dimension that is not aggregated
	run "$ND_BIN/trace-diff" --fail-on 'tid:7>+5%' "$T/b.nd" "$T/a.nd"
	assert_failure 2
	assert_output --partial "invalid rule 'tid:7>+5%': key 'tid' is not aggregated"
	# unless it is the --by key
	run "$ND_BIN/trace-diff" --by device --fail-on 'device:GPU:0>+5%' "$T/b.nd" "$T/a.nd"
	assert_failure 1
	assert_line --partial '"metric":"device:GPU:0","kind":"key","by":"device","key":"GPU:0"'
}

@test "--by family and --by class give the distribution by that key" {
	run "$ND_BIN/trace-diff" --by family "$T/b.nd" "$T/a.nd"
	assert_line --partial '"metric":"family:fusion","kind":"key","by":"family","key":"fusion","before_ns":6000000,"after_ns":7500000'
	assert_line --partial '"metric":"family:","kind":"key","by":"family","key":null,"before_ns":500000,"after_ns":100000'
	run "$ND_BIN/trace-diff" --by class "$T/b.nd" "$T/a.nd"
	assert_line --partial '"key":"communication","before_ns":2000000,"after_ns":2000000'
}

@test "step classes: per-class deltas when both sides have light and heavy steps" {
	gen --steps 50,100,100,100,300,100,100,100,300 --op k:1000:1 --sha 01 >"$T/c1.nd"
	gen --steps 50,100,100,100,360,100,100,100,360 --op k:1000:1 --sha 02 >"$T/c2.nd"
	run "$ND_BIN/trace-diff" "$T/c1.nd" "$T/c2.nd"
	assert_line --partial '"metric":"step.heavy.median","kind":"step","class":"heavy","stat":"median","before_ns":300000000,"after_ns":360000000,"delta_ns":60000000,"pct":20}'
	assert_line --partial '"metric":"step.light.median","kind":"step","class":"light","stat":"median","before_ns":100000000,"after_ns":100000000,"delta_ns":0,"pct":0}'
	run "$ND_BIN/trace-diff" --fail-on 'step.heavy.median>+10%' "$T/c1.nd" "$T/c2.nd"
	assert_failure 1
	# without classes on both sides there are none
	run "$ND_BIN/trace-diff" "$T/b.nd" "$T/c2.nd"
	refute_output --partial 'step.heavy'
}

@test "same trace twice: refused (exit 2); --allow-same: all deltas zero, pass" {
	run "$ND_BIN/trace-diff" "$T/b.nd" "$T/b.nd"
	assert_failure 2
	assert_output --partial "before and after are the same trace (sha256 aa...): comparing a trace with itself proves nothing"
	run "$ND_BIN/trace-diff" --allow-same "$T/b.nd" "$T/b.nd"
	assert_success
	assert_line --partial '"status":"pass","exit":0,"fired":[]'
	echo "$output" | grep '"type":"delta"' >"$T/d"
	run grep -c -E '"delta(_ns)?":0,' "$T/d"
	assert_output "$(wc -l <"$T/d")"
}

@test "same source path or run id: a warning, not a refusal" {
	gen --steps 50,100,100 --op k:1000:1 --sha 01 --source x.json --run-id r1 >"$T/p1.nd"
	gen --steps 50,100,100 --op k:1000:1 --sha 02 --source x.json --run-id r1 >"$T/p2.nd"
	run "$ND_BIN/trace-diff" "$T/p1.nd" "$T/p2.nd"
	assert_success
	assert_line --index 0 "trace-diff: same source path on both sides: x.json"
	assert_line --index 1 "trace-diff: same run id on both sides: r1"
	assert_output --partial '"warnings":["same source path on both sides: x.json","same run id on both sides: r1"]'
	assert_output --partial '"sources":[{"source":"x.json","sha256":"01","run_id":"r1"}]'
}

@test "inputs: stdin for one side, gzip, usage errors" {
	gzip -c "$T/a.nd" >"$T/a.nd.gz"
	run bash -c '"$ND_BIN/trace-diff" - "$1" <"$2"' _ "$T/a.nd.gz" "$T/b.nd"
	assert_failure 1
	assert_line --partial '"metric":"step.median","kind":"step","class":"all","stat":"median","before_ns":100000000,"after_ns":110000000'
	run "$ND_BIN/trace-diff" "$T/b.nd"
	assert_failure 2
	assert_output --partial "usage: trace-diff"
	run "$ND_BIN/trace-diff" - -
	assert_failure 2
	assert_output "trace-diff: before and after cannot both be stdin"
	run "$ND_BIN/trace-diff" "$T/b.nd" "$T/nonexistent"
	assert_failure 2
	run "$ND_BIN/trace-diff" --label x "$T/b.nd" "$T/a.nd"
	assert_failure 2
	assert_output "trace-diff: --label needs --history FILE"
}

@test "no steps on a side: key deltas only, rules not evaluated, a warning" {
	printf '%s\n' '{"type":"meta","schema":"ndtrace/1","source":"n","format":"chrome","origin_ns":0,"host":null,"rank":null,"producer":"t"}' \
	    '{"type":"span","ts_ns":0,"dur_ns":1000,"name":"k","pid":1,"tid":1}' >"$T/n.nd"
	run "$ND_BIN/trace-diff" "$T/n.nd" "$T/a.nd"
	assert_success
	assert_output --partial "trace-diff: no steady steps on the before side: no step or share deltas"
	assert_output --partial '"missing":["step.median>+5%","step.p90>+10%","share.communication>+0.05","share.idle>+0.05"]'
	refute_output --partial '"metric":"step.median"'
}

@test "--table: steps, shares, key lists and the verdict; --top limits rows" {
	run "$ND_BIN/trace-diff" --table "$T/b.nd" "$T/a.nd"
	assert_failure 1
	assert_line --regexp '^  median +100\.000ms +110\.000ms +\+10\.000ms +\+10\.00%$'
	assert_line --regexp '^  communication +0\.0200 +0\.0182 +-0\.0018 +-9\.09%$'
	assert_line "regressed (1)"
	assert_line --regexp '^  fusion\.12 +6\.000ms +7\.500ms +\+1\.500ms +\+25\.00% +3\.00 +3\.00$'
	assert_line "new (1)"
	assert_line "vanished (1)"
	assert_line "verdict: fail"
	assert_line "  FAIL step.median>+5% (measured +10.00%)"
	gen --steps 50,100,100 --op a:100:1 --op b:100:1 --op c:100:1 --sha 01 >"$T/t1.nd"
	gen --steps 50,100,100 --op a:200:1 --op b:300:1 --op c:400:1 --sha 02 >"$T/t2.nd"
	run "$ND_BIN/trace-diff" --table -k 2 "$T/t1.nd" "$T/t2.nd"
	assert_line "regressed (3)"
	assert_line "  ... 1 more"
	refute_line --regexp '^  a '
}

@test "-o writes the records to a file" {
	run "$ND_BIN/trace-diff" -o "$T/o.ndjson" "$T/b.nd" "$T/a.nd"
	assert_failure 1
	assert_output ""
	run tail -1 "$T/o.ndjson"
	assert_output --partial '"type":"verdict","status":"fail"'
}

@test "--history appends a line; --trend summarises it" {
	H=$T/h.jsonl
	"$ND_BIN/trace-diff" --history "$H" --label first "$T/b.nd" "$T/a.nd" >/dev/null || true
	"$ND_BIN/trace-diff" --history "$H" --label second --fail-on 'op:fusion.12>+30%' "$T/b.nd" "$T/a.nd" >/dev/null
	"$ND_BIN/trace-diff" --history "$H" --label third --warn-on 'op:fusion.12>+20%' "$T/b.nd" "$T/a.nd" >/dev/null
	run "$PY" "$BATS_TEST_DIRNAME/tools/diff_history_check.py" "$H"
	assert_success
	assert_output "3 3"
	run head -1 "$H"
	assert_output --regexp '^\{"type":"history","time":"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z","time_s":[0-9]+,"label":"first","status":"fail","fired":\["step.median>\+5%"\],"metrics":\{"step.median":\{"before_ns":100000000,"after_ns":110000000,"delta_ns":10000000,"pct":10\},'
	run "$ND_BIN/trace-diff" --history "$H" --trend
	assert_success
	assert_output --partial '{"type":"trend","history":"'"$H"'","records":3,"bad_lines":0,"counts":{"pass":1,"warn":1,"fail":1},"latest":{"type":"history",'
	assert_output --partial '"rules":[{"rule":"op:fusion.12>+20%","fired":1},{"rule":"step.median>+5%","fired":1}],"series":[{"label":"first",'
	run "$ND_BIN/trace-diff" --history "$H" --trend --last 2 --table
	assert_success
	assert_line --index 0 "history $H: 3 records (pass 1, warn 1, fail 1)"
	assert_line --partial "latest: "
	assert_line "step median (after), last 2: [__]"
	run "$ND_BIN/trace-diff" --trend
	assert_failure 2
	run "$ND_BIN/trace-diff" --history "$T/none" --trend
	assert_failure 2
}

@test "trend sparkline follows the median" {
	H=$T/s.jsonl
	for ms in 100 110 120 130 140 150 160 170; do
		gen --steps 50,$ms,$ms --op k:100:1 --sha $ms >"$T/x$ms.nd"
		"$ND_BIN/trace-diff" --history "$H" --label "m$ms" "$T/b.nd" "$T/x$ms.nd" >/dev/null || true
	done
	run "$ND_BIN/trace-diff" --history "$H" --trend --table
	assert_line "step median (after), last 8: [_.-~=+*#]"
}

@test "100 concurrent --history appends give 100 valid lines" {
	H=$T/c.jsonl
	# leaks are checked by the other tests; 100 leak scans are slow
	[ -z "${ND_ASAN:-}" ] || export ASAN_OPTIONS=detect_leaks=0
	for i in $(seq 1 100); do
		"$ND_BIN/trace-diff" --history "$H" --label "run $i" "$T/b.nd" "$T/a.nd" >/dev/null 2>&1 &
	done
	wait
	run "$PY" "$BATS_TEST_DIRNAME/tools/diff_history_check.py" "$H"
	assert_success
	assert_output "100 100"
}

@test "real pair: torch before/after -- the larger MLP tops the regressed list" {
	need_fixtures
	"$ND_BIN/chrome2ndjson" -o "$T/b.nd" "$FIXTURES/torch-legacy/before.pt.trace.json.gz"
	"$ND_BIN/chrome2ndjson" -o "$T/a.nd" "$FIXTURES/torch-legacy/after.pt.trace.json.gz"
	run "$ND_BIN/trace-diff" "$T/b.nd" "$T/a.nd"
	assert_failure 1
	echo "$output" >"$T/out"
	# step time roughly triples
	run "$PY" -c 'import json,sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r.get("metric") == "step.median": print(r["pct"] > 150)' "$T/out"
	assert_output True
	# the matmuls of the extra linear (forward addmm, backward mm) lead
	run bash -c "grep '\"status\":\"regressed\"' '$T/out' | head -3 | grep -o '\"key\":\"[^\"]*\"' | sort | tr '\n' ' '"
	assert_output '"key":"aten::addmm" "key":"aten::div" "key":"aten::mm" '
	# one more linear, addmm and gelu per MLP block and step (2 blocks)
	for op in aten::linear aten::addmm aten::gelu; do
		run "$PY" -c 'import json,sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r.get("key") == sys.argv[2]:
        print(r["status"], r["count_after"] - r["count_before"])' "$T/out" "$op"
		assert_output "regressed 2"
	done
	run grep -c '"rule":"step.median>+5%","level":"fail","metric"' "$T/out"
	assert_output 1
}

@test "real pair: HTA trace_diff control/test; same file refused" {
	need_fixtures
	"$ND_BIN/chrome2ndjson" -o "$T/c.nd" "$FIXTURES/chrome/hta_diff_control.json.gz"
	"$ND_BIN/chrome2ndjson" -o "$T/t.nd" "$FIXTURES/chrome/hta_diff_test.json.gz"
	run "$ND_BIN/trace-diff" --fail-on 'step.median>+5%' \
	    --warn-on ' op:Memcpy DtoD (Device -> Device) > +1000 % ' "$T/c.nd" "$T/t.nd"
	assert_failure 1
	echo "$output" >"$T/out"
	assert_output --partial '"fired":[{"rule":"step.median>+5%","level":"fail","metric":"step.median","measured":58.76,'
	assert_output --partial '{"rule":"op:Memcpy DtoD (Device -> Device)>+1000%","level":"warn","metric":"op:Memcpy DtoD (Device -> Device)","measured":3297.88,"unit":"%"'
	run bash -c "grep '\"rank\":1}' '$T/out'"
	assert_output --partial '"key":"Memcpy DtoD (Device -> Device)","before_ns":455833,"after_ns":15488667,'
	assert_output --partial '"status":"regressed"'
	run grep -c '"status":"new"' "$T/out"
	assert_output 27
	run grep -c '"status":"vanished"' "$T/out"
	assert_output 66
	run grep -F '"metric":"share.communication"' "$T/out"
	assert_output --partial '"before":0.203'
	run "$ND_BIN/trace-diff" "$T/c.nd" "$T/c.nd"
	assert_failure 2
	assert_output --partial "same trace (sha256 43ed872e4c5dc2e8...)"
}

@test "examples/diff.mk: generated profiles and a profile directory -> reports, diff, gate, history" {
	cd "$BATS_TEST_DIRNAME/.."
	run make -s -f examples/diff.mk diff ND_BIN="$ND_BIN" DIFF_DIR="$T/mk" \
	    DIFF_EVENTS=5000 LABEL=gen
	assert_success
	assert_line "gate: pass"
	for f in before.ndjson after.ndjson before.report after.report diff.ndjson diff.txt; do
		[ -s "$T/mk/$f" ] || fail "$f missing"
	done
	run tail -1 "$T/mk/diff.ndjson"
	assert_output --partial '{"type":"verdict","status":"pass"'
	run "$PY" "$BATS_TEST_DIRNAME/tools/diff_history_check.py" "$T/mk/history.jsonl"
	assert_output "1 1"
	# a profile directory per side; a failing gate fails the target
	mkdir -p "$T/p1" "$T/p2"
	"$ND_BIN/gen-xplane" --seed 3 --events 3000 -o "$T/p1/a.xplane.pb"
	gen --steps 50,100,100 --op k:100:1 --source x1 >"$T/p1/skip.nd"
	"$ND_BIN/gen-xplane" --seed 3 --events 3000 -o "$T/p2/a.xplane.pb"
	run make -s -f examples/diff.mk diff ND_BIN="$ND_BIN" DIFF_DIR="$T/mk2" \
	    BEFORE="$T/p1" AFTER="$T/p2"
	assert_failure
	assert_output --partial "before and after are the same trace"
}
