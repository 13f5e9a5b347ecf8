#!/usr/bin/env bats
# The converters never write a record their own consumers refuse (issue
# 31, item 5): string pids past 2^53 are numbered like numeric ones, and
# no line reaches trace-check's 64 MiB limit, whatever the names, the
# categories or the args hold.
load helpers

@test "a string pid or tid past 2^53 is numbered, as a numeric one is" {
	cd "$BATS_TEST_TMPDIR"
	printf '{"traceEvents":[{"ph":"X","name":"a","pid":"9007199254740993","tid":"9007199254740995","ts":1,"dur":2},{"ph":"X","name":"b","pid":9007199254740993,"tid":1,"ts":1,"dur":2},{"ph":"X","name":"c","pid":"9007199254740992","tid":"-9007199254740992","ts":1,"dur":2}]}' > big.json
	chrome2ndjson big.json > big.nd
	run trace-check big.nd
	assert_success
	run jq -c 'select(.type == "span") | [.name, .pid, .tid, .process, .thread]' big.nd
	# 2^53 itself is a number; past it, the string is the process's name
	assert_output '["a",1,2,"9007199254740993","9007199254740995"]
["b",1,1,"9007199254740993",null]
["c",9007199254740992,-9007199254740992,null,null]'
}

@test "three 40 MiB names: every line stays under 64 MiB, cut at 2 MiB" {
	cd "$BATS_TEST_TMPDIR"
	"$PY" -c '
import json
big = lambda c: c * (40 << 20)
ev = [{"ph": "M", "name": "process_name", "pid": 1, "args": {"name": big("p")}},
      {"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": big("t")}},
      {"ph": "X", "name": big("n"), "cat": "c", "pid": 1, "tid": 1, "ts": 1, "dur": 2},
      {"ph": "X", "name": "m", "cat": big("c"), "pid": 1, "tid": 1, "ts": 1, "dur": 1}]
json.dump({"traceEvents": ev}, open("big3.json", "w"))'
	bounded 30 3000000 "chrome2ndjson big3.json > big3.nd"
	assert_success
	run trace-check big3.nd
	assert_success
	run jq -c 'select(.type == "span") | [(.name, .process, .thread, .cat) | length]' big3.nd
	assert_output '[2097152,2097152,2097152,1]
[1,2097152,2097152,2097152]'
}

@test "a record too long for a reader is written without its args, and says so" {
	cd "$BATS_TEST_TMPDIR"
	"$PY" -c '
import json
M = 1 << 20
ev = [{"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "p" * 3 * M}},
      {"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "t" * 3 * M}},
      {"ph": "X", "name": "n" * M, "pid": 1, "tid": 1, "ts": 1, "dur": 2, "args": {"x": "a" * (62 * M)}},
      {"ph": "X", "name": "ok", "pid": 1, "tid": 1, "ts": 3, "dur": 2, "args": {"x": 1}}]
json.dump({"traceEvents": ev}, open("long.json", "w"))'
	bounded 30 3000000 "chrome2ndjson long.json > long.nd"
	assert_success
	run trace-check long.nd
	assert_success
	run jq -c 'select(.type == "span") | [.name[0:2], has("args")]' long.nd
	assert_output '["nn",false]
["ok",true]'
	run jq -c 'select(.type == "end") | [.spans, .warnings]' long.nd
	assert_output '[2,["1 record longer than 64 MiB written without their args","1 label nested deeper than 64 labels or 4096 bytes left out of scopes (the spans are kept)"]]'
}

@test "trace-check accepts every stream the converters write from the hostile corpus" {
	C=$BATS_TEST_TMPDIR/corpus
	sh "$BATS_TEST_DIRNAME/../fuzz/seeds.sh" "$ND_BIN" "$C" > /dev/null 2>&1
	n=0
	for f in "$C"/fuzz_chrome/* "$C"/fuzz_ndjson/* "$C"/fuzz_pickle/*; do
		if chrome2ndjson "$f" > "$BATS_TEST_TMPDIR/o.nd" 2> /dev/null; then
			run trace-check "$BATS_TEST_TMPDIR/o.nd"
			[ "$status" = 0 ] || fail "chrome2ndjson $f: trace-check: $output"
			n=$((n + 1))
		fi
	done
	for f in "$C"/fuzz_xplane2ndjson/* "$C"/fuzz_xplane/*; do
		if xplane2ndjson "$f" > "$BATS_TEST_TMPDIR/o.nd" 2> /dev/null; then
			run trace-check "$BATS_TEST_TMPDIR/o.nd"
			[ "$status" = 0 ] || fail "xplane2ndjson $f: trace-check: $output"
			n=$((n + 1))
		fi
	done
	# the corpus is not empty of convertible inputs
	[ "$n" -ge 30 ] || fail "only $n inputs converted"
}
