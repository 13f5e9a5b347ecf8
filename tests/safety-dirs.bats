#!/usr/bin/env bats
# Profile directories and inputs given to the wrong program (issue 31,
# item 11): what is not read is said and listed, --list is one path a
# line, and a memory timeline or snapshot on a pipe is named as such.
load helpers
bats_require_minimum_version 1.5.0

setup() {
	need_fixtures
	T=$BATS_TEST_TMPDIR
	D=$T/d
	mkdir -p "$D"
	gzip -dc "$FIXTURES/chrome/hta_cpu_only_rank-34.pt.trace.json.gz" > "$D/w1.100.pt.trace.json"
	gzip -c "$D/w1.100.pt.trace.json" > "$D/w1.100.pt.trace.json.gz"
	ln -s nowhere "$D/dang.json"
	ln -s loop.json "$D/loop.json"
	mkfifo "$D/f.json"
}

@test "profile directory: links that lead nowhere, loops and FIFOs are said and listed as skipped" {
	run --separate-stderr chrome2ndjson --list "$D"
	assert_success
	assert_output "$(printf '%s\n' "$D/w1.100.pt.trace.json" \
	    "$D/dang.json	skipped: a dangling symbolic link" \
	    "$D/f.json	skipped: a FIFO, not a regular file" \
	    "$D/loop.json	skipped: a symbolic link loop" \
	    "$D/w1.100.pt.trace.json.gz	skipped: the same capture as $D/w1.100.pt.trace.json, which is read")"
	[ "$stderr" = "$(printf 'chrome2ndjson: %s\n' \
	    "$D/dang.json: skipped: a dangling symbolic link" \
	    "$D/f.json: skipped: a FIFO, not a regular file" \
	    "$D/loop.json: skipped: a symbolic link loop" \
	    "$D/w1.100.pt.trace.json.gz: skipped: the same capture as $D/w1.100.pt.trace.json, which is read")" ]
	# the conversion reads the one file, and says the same once
	run --separate-stderr bash -c "chrome2ndjson '$D' | cmp - <(chrome2ndjson '$D/w1.100.pt.trace.json')"
	assert_success
	[ "$(printf '%s\n' "$stderr" | grep -c skipped)" = 4 ]
}

@test "profile directory: --all-captures still reads a capture written twice once" {
	cp "$D/w1.100.pt.trace.json" "$D/w1.200.pt.trace.json"
	run --separate-stderr chrome2ndjson --all-captures --list "$D"
	assert_success
	assert_output "$(printf '%s\n' "$D/w1.100.pt.trace.json" "$D/w1.200.pt.trace.json" \
	    "$D/dang.json	skipped: a dangling symbolic link" \
	    "$D/f.json	skipped: a FIFO, not a regular file" \
	    "$D/loop.json	skipped: a symbolic link loop" \
	    "$D/w1.100.pt.trace.json.gz	skipped: the same capture as $D/w1.100.pt.trace.json, which is read")"
}

@test "--list: one line a path whatever the name holds" {
	E=$T/e
	mkdir -p "$E"
	cp "$D/w1.100.pt.trace.json" "$E/a
b.json"
	cp "$D/w1.100.pt.trace.json" "$E/t	\\x.json"
	run chrome2ndjson --list "$E"
	assert_success
	assert_output "$(printf '%s\n' "$E/a\\nb.json" "$E/t\\t\\\\x.json")"
	[ "${#lines[@]}" = 2 ]
}

@test "--run on a run directory says it is one" {
	R=$T/r
	mkdir -p "$R/empty"
	cp "$D/w1.100.pt.trace.json" "$R/"
	run chrome2ndjson --run x "$R"
	assert_failure 2
	assert_output "chrome2ndjson: $R: --run x: it is a run directory (1 *.json[.gz] trace file in it), not a directory of runs: give it without --run"
	mkdir -p "$T/x"
	cp "$FIXTURES/xplane/tpu_inference_4core.xplane.pb" "$T/x/"
	run xplane2ndjson --run y "$T/x"
	assert_failure 2
	assert_output "xplane2ndjson: $T/x: --run y: it is a run directory (1 *.xplane.pb file in it), not a directory of runs: give it without --run"
}

@test "a memory timeline or snapshot given to a filter says what it is and what reads it" {
	gzip -dc "$FIXTURES/memory/hta_memory_timeline.raw.gz" > "$T/tl.json"
	run bash -c "trace-topk < '$T/tl.json'"
	assert_failure 2
	assert_output "trace-topk: <stdin>: a PyTorch memory timeline (a JSON array of arrays), not an ndtrace stream: give it to trace-mem: ... | trace-mem"
	run trace-report "$FIXTURES/memory/hta_memory_timeline.raw.gz"
	assert_failure 2
	assert_output "trace-report: $FIXTURES/memory/hta_memory_timeline.raw.gz: a gzipped PyTorch memory timeline (a JSON array of arrays), not an ndtrace stream: give it to trace-mem: trace-mem $FIXTURES/memory/hta_memory_timeline.raw.gz"
	run bash -c "trace-gaps < '$FIXTURES/memory/cs336_memory_snapshot.pickle'"
	assert_failure 2
	assert_output "trace-gaps: <stdin>: a PyTorch memory snapshot (a pickle), not an ndtrace stream: give it to trace-mem: ... | trace-mem"
	run bash -c "chrome2ndjson < '$FIXTURES/memory/cs336_memory_snapshot.pickle'"
	assert_failure 2
	assert_output "chrome2ndjson: <stdin>: byte 1: not a Chrome trace: a pickle (a PyTorch memory snapshot? trace-mem reads it)"
	# and trace-mem reads both from the pipe
	run bash -c "trace-mem < '$T/tl.json' | jq -r 'select(.type == \"mem_peak\") | .allocated_bytes'"
	assert_output 3082832104
}
