#!/usr/bin/env bats
# Safe fan-out (issue 18 item 1).  --partial output is framed (a version 2
# header, the records, a partial_end trailer with their count and sha256;
# ndtrace(7)) and --merge uses a partial only when its trailer matches, so
# the shapes that jobs sharing one pipe produce (torn lines, interleaved
# records, a partial cut short) are one-line errors, exit 2, never a wrong
# merge.  The shapes are made by hand here, deterministically, from the
# partials of the 8 DLRM ranks (~88 KB each, far above PIPE_BUF); the
# documented recipes then run a few times in a row under load
# (tests/fanout-stress.sh; `make check-fanout` runs 200 of each).

load helpers
bats_require_minimum_version 1.5.0

CAUSE='partials written by concurrent jobs to one pipe interleave; write one file per job (-o) or use GNU parallel'
CAUSE_RE='partials written by concurrent jobs to one pipe interleave; write one file per job \(-o\) or use GNU parallel'

setup_file() {
	export D="$BATS_FILE_TMPDIR/d"
	mkdir -p "$D"
	r=0
	for f in "$FIXTURES"/chrome/dlrm_8ranks/*.pt.trace.json.gz; do
		chrome2ndjson "$f" > "$D/rank$r.ndjson"
		trace-topk --partial -o "$D/rank$r.top" "$D/rank$r.ndjson"
		trace-regions --partial -o "$D/rank$r.reg" "$D/rank$r.ndjson"
		r=$((r + 1))
	done
}

teardown() {
	# the busy loops of tests/fanout-stress.sh, should it have been killed
	if [ -s "$BATS_TEST_TMPDIR/busy.pids" ]; then
		kill $(cat "$BATS_TEST_TMPDIR/busy.pids") 2>/dev/null || true
	fi
}

# interleave FILE1 FILE2 K: what a pipe shows when two writers' writes are
# split in K-byte pieces and alternate
interleave() {
	$PY -c 'import sys
a = open(sys.argv[1], "rb").read(); b = open(sys.argv[2], "rb").read()
k = int(sys.argv[3]); out = bytearray()
for i in range(0, max(len(a), len(b)), k):
    out += a[i:i + k] + b[i:i + k]
sys.stdout.buffer.write(out)' "$@"
}

@test "--partial frames its output: version 2 header, partial_end with the record count and sha256" {
	[ "$(ls "$D"/rank*.top | wc -l)" -eq 8 ]
	for f in "$D/rank0.top" "$D/rank3.reg"; do
		[ "$(wc -c < "$f")" -gt 8192 ]
		run jq -c 'select(.type | endswith("_partial")) | .version' "$f"
		assert_output 2
		run head -1 "$f"
		assert_output --regexp '^\{"type":"(top|region)_partial","version":2,'
		n=$(($(wc -l < "$f") - 2))
		sum=$(head -n -1 "$f" | sha256sum | cut -d' ' -f1)
		run tail -1 "$f"
		assert_output "{\"type\":\"partial_end\",\"records\":$n,\"sha256\":\"$sum\"}"
	done
	# a partial of nothing still has both ends
	run --separate-stderr bash -c "printf '' | trace-topk --partial | jq -c .type"
	assert_output $'"top_partial"\n"partial_end"'
	[ "$stderr" = "trace-topk: no events: the input holds no records" ]
}

@test "framed partials merge exactly: files, one stream, two levels, trace-check" {
	trace-topk -k 0 --wall "$D"/rank*.ndjson > "$BATS_TEST_TMPDIR/direct"
	for r in 0 1 2 3 4 5 6 7; do
		trace-topk --partial --wall -o "$BATS_TEST_TMPDIR/w$r" "$D/rank$r.ndjson"
	done
	trace-topk --merge -k 0 --wall "$BATS_TEST_TMPDIR"/w? > "$BATS_TEST_TMPDIR/files"
	cmp "$BATS_TEST_TMPDIR/direct" "$BATS_TEST_TMPDIR/files"
	cat "$BATS_TEST_TMPDIR"/w? | trace-topk --merge -k 0 --wall > "$BATS_TEST_TMPDIR/pipe"
	cmp "$BATS_TEST_TMPDIR/direct" "$BATS_TEST_TMPDIR/pipe"
	{ trace-topk --merge --partial "$BATS_TEST_TMPDIR"/w[0-3]; trace-topk --merge --partial "$BATS_TEST_TMPDIR"/w[4-7]; } |
	    trace-topk --merge -k 0 --wall > "$BATS_TEST_TMPDIR/two"
	cmp "$BATS_TEST_TMPDIR/direct" "$BATS_TEST_TMPDIR/two"
	trace-regions --tree "$D"/rank*.ndjson > "$BATS_TEST_TMPDIR/direct"
	cat "$D"/rank*.reg | trace-regions --merge --tree > "$BATS_TEST_TMPDIR/pipe"
	cmp "$BATS_TEST_TMPDIR/direct" "$BATS_TEST_TMPDIR/pipe"
	trace-check -q "$D/rank0.top"
	trace-check -q "$D/rank0.reg"
}

@test "the racy form, made deterministic: two partials interleaved in 4 KiB pieces are refused" {
	# what `xargs -P | trace-topk --merge` did to the README's recipe; the
	# partials name their source's path, so where the 4 KiB cuts fall, and
	# which decoding error the torn line gives, depends on the checkout
	interleave "$D/rank0.top" "$D/rank1.top" 4096 > "$BATS_TEST_TMPDIR/mixed"
	run bash -c "trace-topk --merge --table < '$BATS_TEST_TMPDIR/mixed'"
	assert_failure 2
	[ "${#lines[@]}" -eq 1 ]
	assert_output --regexp "^trace-topk: <stdin>:[0-9]+: a torn partial record \(.*\): $CAUSE_RE\$"
	interleave "$D/rank2.reg" "$D/rank5.reg" 4096 > "$BATS_TEST_TMPDIR/mixed"
	run trace-regions --merge --tree "$BATS_TEST_TMPDIR/mixed"
	assert_failure 2
	[ "${#lines[@]}" -eq 1 ]
	assert_output --regexp "^trace-regions: $BATS_TEST_TMPDIR/mixed:[0-9]+: a torn partial record \(.*\): $CAUSE_RE\$"
	# pieces at line ends: whole records of two partials mixed
	{ head -3 "$D/rank0.top"; head -5 "$D/rank1.top"; tail -n +4 "$D/rank0.top"; tail -n +6 "$D/rank1.top"; } > "$BATS_TEST_TMPDIR/lines"
	run trace-topk --merge "$BATS_TEST_TMPDIR/lines"
	assert_failure 2
	assert_output "trace-topk: $BATS_TEST_TMPDIR/lines:4: partial results mixed: a top_partial header inside the partial begun at line 1: $CAUSE"
}

@test "a torn line that is still valid JSON is caught by the trailer, not merged" {
	# writer A's piece ends inside a number, writer B's piece begins
	# inside one: the line parses, with A's count and B's numbers after
	F="sh $BATS_TEST_DIRNAME/tools/frame-partial.sh"
	h='{"type":"top_partial","version":2,"by":["name"],"of":"span","timelines":"device","fallback":false,"rule":"clip","hist":"loglin6","wall":false,"sources":1}'
	a='{"type":"top_group","key":["a"],"count":1,"total_ns":1200,"self_ns":1200,"min_ns":1200,"max_ns":1200,"overrun":0,"hist":[434,1]}'
	b='{"type":"top_group","key":["b"],"count":1,"total_ns":9900,"self_ns":9900,"min_ns":9900,"max_ns":9900,"overrun":0,"hist":[626,1]}'
	printf '%s\n' "$h" "$a" | $F > "$BATS_TEST_TMPDIR/A"
	printf '%s\n' "$h" "$b" | $F > "$BATS_TEST_TMPDIR/B"
	# A up to "total_ns":1, then B from the 9 of its "total_ns" on
	ka=$(grep -bo '"total_ns":1' "$BATS_TEST_TMPDIR/A" | cut -d: -f1)
	kb=$(grep -bo '"total_ns":9' "$BATS_TEST_TMPDIR/B" | cut -d: -f1)
	{ head -c $((ka + 12)) "$BATS_TEST_TMPDIR/A"; tail -c +$((kb + 13)) "$BATS_TEST_TMPDIR/B"; } > "$BATS_TEST_TMPDIR/torn"
	run sed -n 2p "$BATS_TEST_TMPDIR/torn"
	assert_output '{"type":"top_group","key":["a"],"count":1,"total_ns":1900,"self_ns":9900,"min_ns":9900,"max_ns":9900,"overrun":0,"hist":[626,1]}'
	run trace-topk --merge "$BATS_TEST_TMPDIR/torn"
	assert_failure 2
	assert_output "trace-topk: $BATS_TEST_TMPDIR/torn:3: partial results mixed: the sha256 of partial_end is not that of the partial begun at line 1: $CAUSE"
}

@test "a partial cut short: at a line end, inside a line, or followed by another" {
	head -n 20 "$D/rank0.top" > "$BATS_TEST_TMPDIR/cut"
	run trace-topk --merge "$BATS_TEST_TMPDIR/cut"
	assert_failure 2
	assert_output "trace-topk: $BATS_TEST_TMPDIR/cut:1: partial results cut short: no partial_end after this header (a --partial job failed or its output was truncated, or $CAUSE)"
	# the next file does not complete it
	run trace-topk --merge "$BATS_TEST_TMPDIR/cut" "$D/rank1.top"
	assert_failure 2
	assert_output "trace-topk: $BATS_TEST_TMPDIR/cut:1: partial results cut short: no partial_end after this header (a --partial job failed or its output was truncated, or $CAUSE)"
	# cut inside a line (line 21's first 30 bytes, whatever the paths in it)
	{ head -n 20 "$D/rank0.top"; sed -n 21p "$D/rank0.top" | head -c 30; } > "$BATS_TEST_TMPDIR/cut"
	run trace-topk --merge "$BATS_TEST_TMPDIR/cut"
	assert_failure 2
	assert_output --regexp "^trace-topk: $BATS_TEST_TMPDIR/cut:[0-9]+: a torn partial record \(truncated last line: invalid JSON: .*\): $CAUSE_RE\$"
	# on one pipe, the next partial's header shows the cut
	run bash -c "{ head -n 20 '$D/rank0.reg'; cat '$D/rank1.reg'; } | trace-regions --merge"
	assert_failure 2
	assert_output "trace-regions: <stdin>:21: partial results mixed: a region_partial header inside the partial begun at line 1: $CAUSE"
	run bash -c "{ head -n 3 '$D/rank0.reg'; echo; } | trace-regions --merge"
	assert_failure 2
	assert_output "trace-regions: <stdin>:4: a torn partial record (empty line): $CAUSE"
}

@test "records of two partials mixed: swapped, dropped, outside any partial" {
	n=$(wc -l < "$D/rank0.top")
	{ head -n 9 "$D/rank0.top"; sed -n 10p "$D/rank1.top"; tail -n +11 "$D/rank0.top"; } > "$BATS_TEST_TMPDIR/swap"
	run trace-topk --merge "$BATS_TEST_TMPDIR/swap"
	assert_failure 2
	assert_output "trace-topk: $BATS_TEST_TMPDIR/swap:$n: partial results mixed: the sha256 of partial_end is not that of the partial begun at line 1: $CAUSE"
	sed 10d "$D/rank0.top" > "$BATS_TEST_TMPDIR/drop"
	run trace-topk --merge "$BATS_TEST_TMPDIR/drop"
	assert_failure 2
	assert_output "trace-topk: $BATS_TEST_TMPDIR/drop:$((n - 1)): partial results mixed: partial_end counts $((n - 2)) records, the partial begun at line 1 has $((n - 3)): $CAUSE"
	run bash -c "{ cat '$D/rank0.top'; sed -n 5p '$D/rank1.top'; } | trace-topk --merge"
	assert_failure 2
	assert_output "trace-topk: <stdin>:$((n + 1)): partial results mixed: a top_group record outside a partial (no top_partial header before it): $CAUSE"
	run bash -c "tail -1 '$D/rank0.reg' | trace-regions --merge"
	assert_failure 2
	assert_output "trace-regions: <stdin>:1: partial results mixed: a partial_end without its region_partial header: $CAUSE"
}

@test "unframed (version 1) partials and foreign records are refused" {
	head -n -1 "$D/rank0.top" | sed '1s/"version":2,//' > "$BATS_TEST_TMPDIR/v1"
	run trace-topk --merge "$BATS_TEST_TMPDIR/v1"
	assert_failure 2
	assert_output "trace-topk: $BATS_TEST_TMPDIR/v1:1: top_partial of another format (version 1, not 2): make the partial results again with this trace-topk"
	run trace-regions --merge "$D/rank0.top"
	assert_failure 2
	assert_output "trace-regions: $D/rank0.top:1: --merge reads the output of trace-regions --partial, not top_partial records"
	# a span inside a partial: mixed in, not held
	run bash -c "{ head -n 3 '$D/rank0.top'; grep -m1 '\"span\"' '$D/rank0.ndjson'; } | trace-topk --merge"
	assert_failure 2
	assert_output "trace-topk: <stdin>:4: partial results mixed: a span record inside the partial begun at line 1: $CAUSE"
	# so is a torn line that parses with another type
	run bash -c "{ head -n 2 '$D/rank0.top'; echo '{\"type\":\"_group\",\"key\":[\"x\"]}'; } | trace-topk --merge"
	assert_failure 2
	assert_output "trace-topk: <stdin>:3: partial results mixed: a _group record inside the partial begun at line 1: $CAUSE"
}

# stress RUNS RECIPE...: tests/fanout-stress.sh beside two busy loops.
# They test the recipes' scheduling, which is the same in both builds: the
# sanitizer pass leaves them out (ND_ASAN).  Its programs still run every
# path under them: --partial and --merge of trace-topk, trace-regions and
# trace-steps on the DLRM ranks (top-regions-lib.bats, steps-partial.bats),
# and each torn, interleaved or cut-short partial above.
stress() {
	[ -z "${ND_ASAN:-}" ] || skip "recipe scheduling runs in the normal build only (ND_ASAN)"
	run timeout 600 env FANOUT_PIDS="$BATS_TEST_TMPDIR/busy.pids" \
	    bash "$BATS_TEST_DIRNAME/fanout-stress.sh" "$ND_BIN" "$FIXTURES" "$@"
}

@test "documented recipes with one file per job: runs in a row under load equal one stream" {
	stress 1 readme topk regions steps make
	assert_success
	assert_line --regexp '^readme: 1 of 1 runs identical to one stream, 0 detected, 0 wrong'
	assert_line --regexp '^topk: 1 of 1 runs identical'
	assert_line --regexp '^regions: 1 of 1 runs identical'
	assert_line --regexp '^steps: 1 of 1 runs identical'
	assert_line --regexp '^make: 1 of 1 runs identical'
}

@test "documented recipes with GNU parallel: runs under load equal one stream" {
	stress 1 readme-parallel topk-parallel regions-parallel steps-parallel
	assert_success
	assert_line --regexp '^readme-parallel: 1 of 1 runs identical'
	assert_line --regexp '^topk-parallel: 1 of 1 runs identical'
	assert_line --regexp '^regions-parallel: 1 of 1 runs identical'
	assert_line --regexp '^steps-parallel: 1 of 1 runs identical'
}

@test "the old racy recipe under load: right or refused in one line, never wrong" {
	stress 2 racy
	assert_success
	assert_line --regexp '^racy: [0-2] of 2 runs identical to one stream, [0-2] detected, 0 wrong'
}
