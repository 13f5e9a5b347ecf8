#!/usr/bin/env bats
# trace-check: the stream contract validator.

load helpers

META='{"type":"meta","schema":"ndtrace/1","source":"t.pb","format":"xplane","origin_ns":1700000000000000000,"host":null,"rank":null,"producer":"hand 1"}'

setup() {
	T="$BATS_TEST_TMPDIR"
}

span() { # ts dur [pid tid name]
	printf '{"type":"span","ts_ns":%s,"dur_ns":%s,"name":"%s","pid":%s,"tid":%s}\n' \
	    "$1" "$2" "${5:-op}" "${3:-1}" "${4:-1}"
}

@test "a valid stream passes silently; -v summarises" {
	{ echo "$META"; span 0 10; span 0 5; span 2 1; span 1 1 1 2; echo '{"type":"end","spans":4,"instants":0,"skipped":{},"sha256":"'$(printf '%064d' 0)'","suspected_truncation":false,"warnings":[]}'; } > "$T/ok.ndjson"
	run trace-check "$T/ok.ndjson"
	assert_success
	assert_output ""
	run trace-check -v "$T/ok.ndjson"
	assert_success
	assert_output "trace-check: 6 records, 4 spans, 1 sources, 0 problems"
}

@test "order: per timeline by ts, longer first on ties; timelines may interleave" {
	{ echo "$META"; span 5 1 1 1; span 0 9 1 2; span 4 1 1 1; span 3 1 1 2; span 3 2 1 2; } > "$T/o.ndjson"
	run trace-check "$T/o.ndjson"
	assert_failure 1
	assert_output - <<E
trace-check: $T/o.ndjson:4: span out of order on timeline pid 1 tid 1: ts_ns 4 dur_ns 1 after ts_ns 5 dur_ns 1
trace-check: $T/o.ndjson:6: span out of order on timeline pid 1 tid 2: ts_ns 3 dur_ns 2 after ts_ns 3 dur_ns 1
E
}

@test "the same pid/tid in two sources are two timelines" {
	{ echo "$META"; span 5 1; echo "$META"; span 0 1; } > "$T/s.ndjson"
	run trace-check "$T/s.ndjson"
	assert_success
	run trace-check -v "$T/s.ndjson"
	assert_output "trace-check: 4 records, 2 spans, 2 sources, 0 problems"
}

@test "meta before data; spans need their keys; end counts must match" {
	{ span 0 1; echo "$META"; echo '{"type":"span","ts_ns":1,"name":"x","pid":1}'; echo '{"type":"counter","ts_ns":1,"name":"mem","pid":1}'; echo '{"type":"end","spans":7,"warnings":"no"}'; span 9 1; } > "$T/m.ndjson"
	run trace-check "$T/m.ndjson"
	assert_failure 1
	assert_output - <<E
trace-check: $T/m.ndjson:1: span record before any meta record of its source
trace-check: $T/m.ndjson:3: span record lacks "dur_ns" (an integer)
trace-check: $T/m.ndjson:3: span record lacks "tid" (an integer)
trace-check: $T/m.ndjson:4: counter record lacks "values" (an object)
trace-check: $T/m.ndjson:5: end record says spans=7 but the source has 1
trace-check: $T/m.ndjson:5: end record: "warnings" must be an array
trace-check: $T/m.ndjson:6: span record after the end record of its source
E
}

@test "a reserved key written twice is reported; filters take the last, as jq does" {
	{ echo "$META"; echo '{"type":"span","ts_ns":5,"dur_ns":3,"name":"a","name":"b","pid":1,"tid":1}'; } > "$T/d.ndjson"
	run trace-check "$T/d.ndjson"
	assert_failure 1
	assert_output "trace-check: $T/d.ndjson:2: span record has \"name\" twice"
	run bash -c "trace-topk '$T/d.ndjson' | jq -r 'select(.type==\"top\") | .name'"
	assert_output "$(jq -r 'select(.type=="span") | .name' "$T/d.ndjson")"
	assert_output b
}

@test "a bad meta is reported key by key" {
	echo '{"type":"meta","schema":"ndtrace/0","origin_ns":"0"}' > "$T/b.ndjson"
	run trace-check "$T/b.ndjson"
	assert_failure 1
	assert_output "trace-check: $T/b.ndjson:1: \"origin_ns\" must be an integer (at byte 49 of the line)"
	echo '{"type":"meta","schema":"ndtrace/0","origin_ns":0}' > "$T/b.ndjson"
	run trace-check "$T/b.ndjson"
	assert_output - <<E
trace-check: $T/b.ndjson:1: meta record: "schema" must be "ndtrace/1"
trace-check: $T/b.ndjson:1: meta record lacks "source" (a string)
trace-check: $T/b.ndjson:1: meta record lacks "format" (a string)
trace-check: $T/b.ndjson:1: meta record lacks "producer" (a string)
E
}

@test "JSON problems are reported per line and checking goes on" {
	{ echo "$META"; echo 'nope'; echo '[1]'; span 0 1; printf '{"type":"span"'; } > "$T/j.ndjson"
	run trace-check "$T/j.ndjson"
	assert_failure 1
	assert_output - <<E
trace-check: $T/j.ndjson:2: invalid JSON: invalid JSON value (at byte 1 of the line)
trace-check: $T/j.ndjson:3: record is a JSON array, not an object (at byte 1 of the line)
trace-check: $T/j.ndjson:5: last line has no final newline
trace-check: $T/j.ndjson:5: invalid JSON: unexpected end of input in object (at byte 15 of the line)
E
}

@test "problems are capped; -q reports none; exit status 1 either way" {
	{ echo "$META"; for i in $(seq 30 -1 1); do span "$i" 1; done; } > "$T/c.ndjson"
	run trace-check -M 3 "$T/c.ndjson"
	assert_failure 1
	assert_equal "${#lines[@]}" 4
	assert_line --index 3 "trace-check: 26 more problems not shown"
	# independent count: 29 descending steps after the first span
	run bash -c "trace-check -M 0 '$T/c.ndjson' 2>&1 | grep -c 'out of order'"
	assert_output 29
	run trace-check -q "$T/c.ndjson"
	assert_failure 1
	assert_output ""
}

@test "empty input, stdin, unreadable file, usage" {
	run trace-check /dev/null
	assert_failure 1
	assert_output "trace-check: empty input: no records"
	run bash -c "echo '$META' | trace-check"
	assert_success
	run trace-check "$T/missing"
	assert_failure 2
	assert_output "trace-check: $T/missing: No such file or directory"
	run trace-check --bogus
	assert_failure 2
	assert_line --index 0 "trace-check: unrecognized option '--bogus'"
	assert_line --index 1 "usage: trace-check [-hqVv] [-M max] [file ...]"
	run trace-check -M x
	assert_failure 2
	assert_output "trace-check: invalid value for --max-problems: 'x'"
	run trace-check --version
	assert_success
	assert_output --regexp '^trace-check \(ndtrace\) [0-9]+\.[0-9]+\.[0-9]+$'
}

@test "gzip input is read transparently" {
	{ echo "$META"; span 0 1; } | gzip -c > "$T/g.ndjson.gz"
	run trace-check -v "$T/g.ndjson.gz"
	assert_success
	assert_output "trace-check: 2 records, 1 spans, 1 sources, 0 problems"
}
