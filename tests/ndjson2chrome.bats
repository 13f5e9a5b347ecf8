#!/usr/bin/env bats
# ndjson2chrome: an ndtrace stream -> Chrome trace JSON, and the round trip
# chrome2ndjson | ndjson2chrome | chrome2ndjson.

load helpers

setup() {
	T="$BATS_TEST_TMPDIR"
}

META='{"type":"meta","schema":"ndtrace/1","source":"s","format":"chrome","origin_ns":0,"host":null,"rank":null,"producer":"hand 1"}'

# Records without meta and end (their provenance differs by design).
body() {
	grep -v -e '^{"type":"meta"' -e '^{"type":"end"' "$1"
}

# The fixtures for the round trip: all but the two largest (100k events
# each, which add time and no new kind of event); under the sanitizer build
# (ND_ASAN=1) a smaller set that still has every phase and both forms.
round_trip_fixtures() {
	if [ -n "${ND_ASAN:-}" ]; then
		ls "$FIXTURES"/chrome/hta_alexnet.json.gz "$FIXTURES"/chrome/hta_mi250_rocm.json.gz \
		    "$FIXTURES"/chrome/kineto_before_fix.json "$FIXTURES"/chrome/xprof_handwritten_trace.json \
		    "$FIXTURES"/chrome/tracelens_torch_compile_triton.json.gz \
		    "$FIXTURES"/torch-legacy/single.pt.trace.json.gz
	else
		ls "$FIXTURES"/chrome/*.json* "$FIXTURES"/chrome/dlrm_8ranks/worker[01]*.json.gz \
		    "$FIXTURES"/torch-legacy/*.pt.trace.json* |
		    grep -v -e edge_unescaped_names -e hta_diff_
	fi
}

@test "round trip on the fixtures gives the same records" {
	need_fixtures
	n=0
	for f in $(round_trip_fixtures); do
		chrome2ndjson -q "$f" > "$T/a.ndjson"
		ndjson2chrome "$T/a.ndjson" > "$T/a.json" || fail "$f: ndjson2chrome exit $?"
		chrome2ndjson -q "$T/a.json" > "$T/b.ndjson" || fail "$f: re-import exit $?"
		body "$T/a.ndjson" > "$T/a.body"
		body "$T/b.ndjson" > "$T/b.body"
		cmp -s "$T/a.body" "$T/b.body" ||
		    fail "$f: round trip differs: $(diff "$T/a.body" "$T/b.body" | head -3)"
		n=$((n + 1))
	done
	[ "$n" -ge 6 ] || fail "only $n fixtures"
}

@test "the output is a Chrome trace: X events in microseconds exact to the ns, metadata" {
	{ echo "$META"
	  echo '{"type":"span","ts_ns":88437691101729,"dur_ns":40,"name":"op1","pid":7,"tid":8,"process":"python3","thread":"main","device":"CPU","cat":"cpu_op","class":"host","family":"other","args":{"External id":1}}'
	  echo '{"type":"span","ts_ns":5,"dur_ns":1000,"name":"k","pid":0,"tid":7,"process":"python3","thread":"stream 7","device":"GPU:0","cat":"kernel","args":{"device":0}}'
	  echo '{"type":"span","ts_ns":-1500,"dur_ns":0,"name":"early","pid":7,"tid":8}'
	} > "$T/s.ndjson"
	run ndjson2chrome "$T/s.ndjson"
	assert_success
	assert_output - <<'EOF'
{"traceEvents":[
{"ph":"X","name":"op1","cat":"cpu_op","pid":7,"tid":8,"ts":88437691101.729,"dur":0.04,"args":{"External id":1}},
{"ph":"X","name":"k","cat":"kernel","pid":0,"tid":7,"ts":0.005,"dur":1,"args":{"device":0}},
{"ph":"X","name":"early","pid":7,"tid":8,"ts":-1.5,"dur":0},
{"ph":"M","name":"process_name","pid":7,"tid":0,"args":{"name":"python3"}},
{"ph":"M","name":"process_labels","pid":7,"tid":0,"args":{"labels":"CPU"}},
{"ph":"M","name":"process_name","pid":0,"tid":0,"args":{"name":"python3"}},
{"ph":"M","name":"process_labels","pid":0,"tid":0,"args":{"labels":"GPU 0"}},
{"ph":"M","name":"thread_name","pid":7,"tid":8,"args":{"name":"main"}},
{"ph":"M","name":"thread_name","pid":0,"tid":7,"args":{"name":"stream 7"}}
],"displayTimeUnit":"ns","otherData":{"producer":"ndjson2chrome 0.1.0","sources":[{"source":"s","format":"chrome","origin_ns":0}]}}
EOF
	run "$PY" -c "import json,sys; d=json.load(open('$T/s.json' if False else sys.argv[1])); print(len(d['traceEvents']))" <(ndjson2chrome "$T/s.ndjson")
	assert_output 9
}

@test "keys a user added with jq stay, inside args" {
	{ echo "$META"
	  echo '{"type":"span","ts_ns":1000,"dur_ns":1000,"name":"a","pid":1,"tid":1,"args":{"x":1}}'
	  echo '{"type":"span","ts_ns":2000,"dur_ns":1000,"name":"b","pid":1,"tid":1}'
	} | jq -c 'if .type == "span" then .note = "slow" | .tags = [1,2] else . end' > "$T/s.ndjson"
	run bash -c "ndjson2chrome '$T/s.ndjson' | grep '\"ph\":\"X\"' | sed 's/,$//'"
	assert_output - <<'EOF'
{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{"x":1,"note":"slow","tags":[1,2]}}
{"ph":"X","name":"b","pid":1,"tid":1,"ts":2,"dur":1,"args":{"note":"slow","tags":[1,2]}}
EOF
	# and come back from the Chrome side as args
	run bash -c "ndjson2chrome '$T/s.ndjson' | chrome2ndjson | jq -c 'select(.type==\"span\") | .args'"
	assert_output $'{"x":1,"note":"slow","tags":[1,2]}\n{"note":"slow","tags":[1,2]}'
}

@test "instants, counters and flows; other timed records become X events" {
	{ echo "$META"
	  echo '{"type":"instant","ts_ns":1000,"name":"mark","pid":1,"tid":2,"args":{"s":"g"}}'
	  echo '{"type":"counter","ts_ns":2000,"name":"mem","pid":1,"values":{"used":3}}'
	  echo '{"type":"flow","ts_ns":3000,"name":"ac2g","pid":1,"tid":2,"cat":"ac2g","args":{"bp":"e"},"flow_id":9,"flow_phase":"f"}'
	  echo '{"type":"gap","ts_ns":4000,"dur_ns":500,"pid":1,"tid":2,"cause":"host"}'
	  echo '{"type":"end","spans":0}'
	} > "$T/s.ndjson"
	run bash -c "ndjson2chrome '$T/s.ndjson' | sed -n '2,5p'"
	assert_output - <<'EOF'
{"ph":"i","name":"mark","pid":1,"tid":2,"ts":1,"s":"g"},
{"ph":"C","name":"mem","pid":1,"ts":2,"args":{"used":3}},
{"ph":"f","name":"ac2g","cat":"ac2g","pid":1,"tid":2,"ts":3,"id":9,"bp":"e"},
{"ph":"X","name":"gap","cat":"gap","pid":1,"tid":2,"ts":4,"dur":0.5,"args":{"cause":"host"}}
EOF
}

@test "several sources stay apart: distinct pids, names with the rank" {
	need_fixtures
	a="$FIXTURES/chrome/dlrm_8ranks/worker0_step_12.1694128201545.pt.trace.json.gz"
	b="$FIXTURES/chrome/dlrm_8ranks/worker1_step_12.1694128201556.pt.trace.json.gz"
	chrome2ndjson -q "$a" "$b" > "$T/two.ndjson"
	ndjson2chrome "$T/two.ndjson" > "$T/two.json"
	# both ranks have pids 8, 9 and 10 (string pids "", "Spans", "Traces")
	run jq -c '[.traceEvents[] | select(.ph=="M" and .name=="process_name" and (.args.name|startswith("Spans"))) | [.pid,.args.name]]' "$T/two.json"
	assert_output '[[9,"Spans [rank 0]"],[59813,"Spans [rank 1]"]]'
	run jq -c '[.traceEvents[] | select(.ph=="M" and .name=="process_name") | .pid] | [length, (unique|length)]' "$T/two.json"
	assert_output '[10,10]'
	run jq -r '.traceEvents[] | select(.ph=="M" and .name=="process_name") | .args.name' "$T/two.json"
	assert_line --index 0 'python3 [rank 0]'
	assert_line 'python3 [rank 1]'
	# one stream back, both ranks' spans in it
	chrome2ndjson -q "$T/two.json" > "$T/back.ndjson"
	check_n=$(grep -c '^{"type":"span"' "$T/back.ndjson")
	[ "$check_n" -eq "$(grep -c '^{"type":"span"' "$T/two.ndjson")" ] || fail "spans lost"
	run jq -c 'select(.type=="meta") | .rank' "$T/back.ndjson"
	assert_output 'null'
}

@test "sources with different origins are put on the first one's clock" {
	{ echo '{"type":"meta","schema":"ndtrace/1","source":"a","format":"chrome","origin_ns":1000000,"host":null,"rank":0,"producer":"x"}'
	  echo '{"type":"span","ts_ns":0,"dur_ns":1000,"name":"a","pid":1,"tid":1}'
	  echo '{"type":"meta","schema":"ndtrace/1","source":"b","format":"chrome","origin_ns":3000000,"host":null,"rank":1,"producer":"x"}'
	  echo '{"type":"span","ts_ns":0,"dur_ns":1000,"name":"b","pid":1,"tid":1}'
	} > "$T/s.ndjson"
	run bash -c "ndjson2chrome '$T/s.ndjson' | grep -e '\"ph\":\"X\"' -e baseTime"
	assert_line --index 0 '{"ph":"X","name":"a","pid":1,"tid":1,"ts":0,"dur":1},'
	assert_line --index 1 '{"ph":"X","name":"b","pid":2,"tid":1,"ts":2000,"dur":1},'
	assert_line --index 2 --partial '"baseTimeNanoseconds":1000000,'
}

@test "-k copies the derived keys into args.ndtrace" {
	{ echo "$META"
	  echo '{"type":"span","ts_ns":1000,"dur_ns":1000,"name":"a","pid":1,"tid":1,"device":"GPU:0","step":3,"class":"compute","family":"matmul","scope":"fwd/l0"}'
	} > "$T/s.ndjson"
	run bash -c "ndjson2chrome -D '$T/s.ndjson' | sed -n 2p"
	assert_output '{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{"ndtrace":{"step":3,"scope":"fwd/l0","class":"compute","family":"matmul","device":"GPU:0"}}},'
}

@test "bad input exits 2 with the line; -o is atomic; usage" {
	printf '%s\n{"type":"span","ts_ns":1,\n' "$META" > "$T/bad.ndjson"
	run ndjson2chrome -o "$T/out.json" "$T/bad.ndjson"
	assert_failure 2
	assert_output --partial "ndjson2chrome: $T/bad.ndjson:2: "
	[ ! -e "$T/out.json" ] || fail "partial output left"
	run bash -c "ls '$T' | grep -c tmp || true"
	assert_output 0
	printf '%s\n' "$META" > "$T/empty.ndjson"
	run ndjson2chrome "$T/empty.ndjson"
	assert_success
	assert_line --index 0 '{"traceEvents":['
	run ndjson2chrome --bogus
	assert_failure 2
	assert_line --index 1 'usage: ndjson2chrome [-DhV] [-o file] [file ...]'
	run ndjson2chrome -h
	assert_success
	assert_line --index 0 'usage: ndjson2chrome [-DhV] [-o file] [file ...]'
}
