#!/usr/bin/env bats
# nd_top and nd_regions as the one engine of their answers: trace-report's
# op, family and region tables are trace-topk's and trace-regions' rows;
# the scope rule is one rule; partial results merge to the bytes of one
# process; the provenance checks of a merge are one check.

load helpers

setup() {
	T="$BATS_TEST_TMPDIR"
}

# The three fixtures of the comparisons (Kineto, Kineto, XPlane).
LIST="chrome/hta_alexnet.json.gz chrome/tracelens_h100_qwen.json.gz
    xplane/tpu_inference_4core.xplane.pb"

# The fixture $1 as a stream in $T/f.ndjson and its report (every row) in
# $T/rep.json.
report_of() {
	if [ "${1%.pb}" != "$1" ]; then
		xplane2ndjson "$FIXTURES/$1" > "$T/f.ndjson"
	else
		chrome2ndjson "$FIXTURES/$1" > "$T/f.ndjson"
	fi
	trace-report --json -k 0 "$T/f.ndjson" > "$T/rep.json"
}

@test "report ops and families are trace-topk's rows: same order, same figures" {
	need_fixtures
	for f in $LIST; do
		report_of "$f"
		jq -c '.ops.ops[] | [.name, .count, .self_ns, .total_ns, .max_ns]' \
		    "$T/rep.json" > "$T/rep.ops"
		trace-topk -k 0 "$T/f.ndjson" | jq -c 'select(.other | not) |
		    [.name, .count, .self_ns, .total_ns, .max_ns]' > "$T/topk.ops"
		[ -s "$T/rep.ops" ] || fail "$f: no op rows"
		run diff "$T/rep.ops" "$T/topk.ops"
		assert_success
		jq -c '.ops.families[] | [.family, .count, .self_ns, .total_ns]' \
		    "$T/rep.json" > "$T/rep.fam"
		trace-topk -k 0 --by family "$T/f.ndjson" | jq -c '
		    select(.other | not) |
		    [.family // "(none)", .count, .self_ns, .total_ns]' \
		    > "$T/topk.fam"
		run diff "$T/rep.fam" "$T/topk.fam"
		assert_success
		# independently: self, total, count never increase down the
		# table, and the rows add up to the exclusive total
		run "$PY" -c '
import json, sys
r = json.load(open(sys.argv[1]))
ops = r["ops"]["ops"]
keys = [(-o["self_ns"], -o["total_ns"], -o["count"]) for o in ops]
assert keys == sorted(keys), "order"
assert sum(o["self_ns"] for o in ops) == r["ops"]["self_ns"], "total"
print(len(ops))' "$T/rep.json"
		assert_success
		assert_output "$(wc -l < "$T/topk.ops" | tr -d ' ')"
	done
}

@test "report regions are trace-regions' regions (the report leaves out '(none)')" {
	need_fixtures
	for f in $LIST; do
		report_of "$f"
		jq -c '.regions.regions[] |
		    [.path, .depth, .count, .inclusive_ns, .exclusive_ns]' \
		    "$T/rep.json" | sort > "$T/rep.reg"
		trace-regions "$T/f.ndjson" | jq -c 'select(.path != "(none)" and
		    (.path | startswith("(none)/") | not)) |
		    [.path, .depth, .count, .inclusive_ns, .exclusive_ns]' |
		    sort > "$T/reg.reg"
		[ -s "$T/rep.reg" ] || fail "$f: no regions"
		run diff "$T/rep.reg" "$T/reg.reg"
		assert_success
		# the report's order: inclusive time, count (descending), then
		# the shorter path
		run "$PY" -c '
import json, sys
r = json.load(open(sys.argv[1]))["regions"]["regions"]
keys = [(-x["inclusive_ns"], -x["count"], len(x["path"])) for x in r]
assert keys == sorted(keys)
print("ordered")' "$T/rep.json"
		assert_success
		assert_output ordered
	done
}

@test "empty scope segments: the report's regions follow trace-regions' rule" {
	# "train//fwd/mlp/" is train/fwd/mlp (empty segments dropped); the
	# report used to show regions "train/", "train//fwd", ...
	cat > "$T/s.ndjson" <<'E'
{"type":"meta","schema":"ndtrace/1","source":"s.pb","format":"xplane","origin_ns":0,"host":null,"rank":0,"producer":"hand"}
{"type":"span","ts_ns":0,"dur_ns":100,"name":"dot.1","pid":1,"tid":1,"process":"/device:TPU:0","device":"TPU:0","scope":"train/fwd/attn"}
{"type":"span","ts_ns":100,"dur_ns":50,"name":"add.2","pid":1,"tid":1,"process":"/device:TPU:0","device":"TPU:0","scope":"train//fwd/mlp/"}
{"type":"span","ts_ns":150,"dur_ns":30,"name":"mul.3","pid":1,"tid":1,"process":"/device:TPU:0","device":"TPU:0","scope":"/train/fwd/mlp"}
{"type":"span","ts_ns":200,"dur_ns":20,"name":"cp.4","pid":1,"tid":1,"process":"/device:TPU:0","device":"TPU:0","scope":"/"}
{"type":"end","events":4,"spans":4}
E
	run bash -c "trace-report --json -k 0 '$T/s.ndjson' | jq -c '.regions.regions[] | [.path, .depth, .count, .inclusive_ns, .exclusive_ns]'"
	assert_success
	assert_output '["train",1,3,180,0]
["train/fwd",2,3,180,0]
["train/fwd/attn",3,1,100,100]
["train/fwd/mlp",3,2,80,80]'
	run bash -c "trace-regions '$T/s.ndjson' | jq -c '[.path, .depth, .count, .inclusive_ns, .exclusive_ns]'"
	assert_success
	assert_output '["train",1,3,180,0]
["train/fwd",2,3,180,0]
["train/fwd/attn",3,1,100,100]
["train/fwd/mlp",3,2,80,80]
["(none)",1,1,20,20]'
}

@test "partial results merge to the bytes of one process (top and regions)" {
	need_fixtures
	d="$FIXTURES/chrome/dlrm_8ranks"
	chrome2ndjson "$d"/worker0_*.json.gz > "$T/a.ndjson"
	chrome2ndjson "$d"/worker1_*.json.gz > "$T/b.ndjson"
	for opts in "" "--table" "--csv -k 5" "--wall --by class,family" \
	    "--sort mean --by device,name --table"; do
		trace-topk $opts "$T/a.ndjson" "$T/b.ndjson" > "$T/direct"
		[ -s "$T/direct" ] || fail "no output: $opts"
		w=""
		case "$opts" in *--wall*) w=--wall ;; esac
		runp "{ trace-topk --partial $w $(echo "$opts" | grep -o -- '--by [^ ]*') '$T/b.ndjson'; trace-topk --partial $w $(echo "$opts" | grep -o -- '--by [^ ]*') '$T/a.ndjson'; } | trace-topk --merge $opts | cmp - '$T/direct'"
		assert_success
	done
	for opts in "" "--tree" "--folded --ops" "--by-device --prune --tree" \
	    "--depth 2 --min-share 0.1"; do
		trace-regions $opts "$T/a.ndjson" "$T/b.ndjson" > "$T/direct"
		[ -s "$T/direct" ] || fail "no output: $opts"
		runp "{ trace-regions --partial '$T/a.ndjson'; trace-regions --partial '$T/b.ndjson'; } | trace-regions --merge $opts | cmp - '$T/direct'"
		assert_success
	done
	# a merge of one partial writes that partial again, byte for byte
	trace-topk --partial --wall "$T/a.ndjson" > "$T/p1"
	runp "trace-topk --merge --partial --wall < '$T/p1' | cmp - '$T/p1'"
	assert_success
	trace-regions --partial "$T/a.ndjson" > "$T/p2"
	runp "trace-regions --merge --partial < '$T/p2' | cmp - '$T/p2'"
	assert_success
	# format version 2 and the framing of nd_partial
	run bash -c "head -1 '$T/p2' | jq -c '[.type, .version, .timelines, .fallback, .rule, .sources]'"
	assert_output '["region_partial",2,"device",false,"clip",1]'
	run bash -c "tail -1 '$T/p1' | jq -r '.type, .records'"
	assert_output "partial_end
$(($(wc -l < "$T/p1") - 2))"
}

@test "merge checks: one message for partials of other timelines or rules" {
	cat > "$T/s.ndjson" <<'E'
{"type":"span","ts_ns":0,"dur_ns":10,"name":"k","pid":1,"tid":1,"device":"GPU:0","process":"/device:GPU:0","scope":"a"}
E
	for p in trace-topk trace-regions; do
		$p --partial "$T/s.ndjson" > "$T/d"
		$p --partial --timelines host "$T/s.ndjson" > "$T/h"
		n=$(($(wc -l < "$T/d") + 1))
		run bash -c "cat '$T/d' '$T/h' | $p --merge"
		assert_failure 2
		assert_output "$p: <stdin>:$n: partial results of --timelines host and device cannot be merged"
		$p --partial --overrun reparent "$T/s.ndjson" > "$T/r"
		run bash -c "cat '$T/d' '$T/r' | $p --merge"
		assert_failure 2
		assert_output "$p: <stdin>:$n: partial results made with --overrun reparent and clip cannot be merged"
		run $p --merge --timelines all "$T/d"
		assert_failure 2
		assert_output --partial "$p: --merge takes --timelines"
	done
}
