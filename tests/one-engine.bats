#!/usr/bin/env bats
# One engine per answer: trace-diff's per-key figures are trace-topk's rows
# (nd_scan + nd_top), on files and on an out-of-order stream given on a
# pipe. The step summary (nd_stepsum) is checked across programs in
# tests/stepsum.bats, the report's tables in tests/top-regions-lib.bats and
# the order policy in tests/scan-engine.bats.

load helpers

setup() {
	T=$(mktemp -d)
}

teardown() {
	rm -rf "$T"
}

# compare_keys SIDE TOPK STEPS: the diff's name keys of one side against
# trace-topk's rows of that side: trace-diff gives exclusive time and
# count per step (STEPS job steps, 1 when none), so self_ns / STEPS
# rounded to ns and count / STEPS to 4 decimals; prints how many keys
# were compared and those that differ
compare_keys() {
	jq -n -c --slurpfile d "$T/diff" --slurpfile t "$2" --arg s "$1" \
	    --argjson n "$3" '
	    def r4: . * 10000 | round / 10000;
	    ($t | map(select(.type == "top") | {(.name):
	      {ns: (.self_ns / $n | round), c: (.count / $n | r4)}}) | add)
	    as $top
	    | [$d[] | select(.type == "delta" and .kind == "key"
	      and .["count_" + $s] > 0)] as $k
	    | {n: ($k | length), bad: [$k[] | select($top[.key] !=
	      {ns: .[$s + "_ns"], c: .["count_" + $s]}) | .key]}'
}

# steps FILE: job steps of FILE (trace-steps' summary), 1 when none
steps() {
	trace-steps -s "$1" | jq -s '[.[] | select(.type == "step_summary")][0].count // 0 | if . == 0 then 1 else . end'
}

@test "trace-diff's key deltas are trace-topk's rows, from files and from an out-of-order pipe" {
	need_fixtures
	chrome2ndjson "$FIXTURES/torch-legacy/before.pt.trace.json.gz" > "$T/b.ndjson"
	chrome2ndjson "$FIXTURES/chrome/hta_alexnet.json.gz" > "$T/a.ndjson"
	trace-topk -k 0 "$T/b.ndjson" > "$T/tb"
	trace-topk -k 0 "$T/a.ndjson" > "$T/ta"
	run trace-diff "$T/b.ndjson" "$T/a.ndjson" -o "$T/diff"
	[ "$status" -le 1 ]
	[ "$(steps "$T/b.ndjson")" = 3 ]
	run compare_keys before "$T/tb" 3
	assert_output --regexp '^\{"n":[1-9][0-9]+,"bad":\[\]\}$'
	run compare_keys after "$T/ta" "$(steps "$T/a.ndjson")"
	assert_output --regexp '^\{"n":[1-9][0-9]+,"bad":\[\]\}$'
	# every key of each side is there, once
	[ "$(jq -s '[.[] | select(.type == "delta" and .kind == "key" and .count_after > 0)] | length' "$T/diff")" = \
	    "$(jq -s '[.[] | select(.type == "top")] | length' "$T/ta")" ]
	# the after side reversed (meta first, end last) on a pipe: the same
	# deltas, byte for byte
	{ head -1 "$T/a.ndjson"; sed '1d;$d' "$T/a.ndjson" | tac; tail -1 "$T/a.ndjson"; } > "$T/r.ndjson"
	run trace-check "$T/r.ndjson"
	assert_failure
	cp "$T/diff" "$T/diff.file"
	run bash -c "cat '$T/r.ndjson' | trace-diff '$T/b.ndjson' - -o '$T/diff'"
	[ "$status" -le 1 ]
	cmp "$T/diff" "$T/diff.file"
}
