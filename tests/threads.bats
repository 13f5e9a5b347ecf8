#!/usr/bin/env bats
# trace-report and trace-diff decode on a second thread (nd_drive_mt):
# NDTRACE_THREADS=1 and NDTRACE_THREADS=2 give the same bytes on stdout,
# the same stderr and the same exit status, on real profiles, generated
# streams (in order, out of order, from a pipe read twice, lines longer
# than a batch holds), bad input (the error of the line where one thread
# stops, after the records before it) and a closed pipe.

load helpers

setup_file() {
	local F=$BATS_FILE_TMPDIR f i
	need_fixtures
	xplane2ndjson "$FIXTURES/xplane/tpu_inference_4core.xplane.pb" \
	    >"$F/tpu.nd"
	mkdir "$F/dlrm"
	i=0
	for f in "$FIXTURES"/chrome/dlrm_8ranks/worker[0-2]_*.json.gz; do
		chrome2ndjson "$f" >"$F/dlrm/r$i.nd"
		i=$((i + 1))
	done
	# 8k spans: over 30 batches through the ring of 4
	gen-stream -R -n 8000 -s 3 >"$F/genR.nd"
	gen-stream -n 8000 -s 4 >"$F/gen.nd"
	# out of order: a second reading (a pipe's from the spool)
	{ head -n 1 "$F/gen.nd"; tail -n +2 "$F/gen.nd" | sort; } >"$F/shuf.nd"
	# lines of 200 and 300 KB (over a batch's 128 KB) among short ones
	awk 'function xs(n, s) {
		for (s = "x"; length(s) < n; s = s s)
			;
		return substr(s, 1, n)
	}
	NR == 50 || NR == 700 {
		sub(/}$/, ",\"pad\":\"" xs(NR == 50 ? 200000 : 300000) "\"}")
	} { print }' "$F/genR.nd" >"$F/long.nd"
	gzip -c "$F/genR.nd" >"$F/genR.nd.gz"
}

setup() {
	T=$BATS_TEST_TMPDIR
	F=$BATS_FILE_TMPDIR
}

# same CMD: the shell command CMD with NDTRACE_THREADS=1 then 2; fails
# unless stdout, stderr and the status are the same.  $T/out1 and $T/err1
# keep the first (its status as the last line of err1).
same() {
	local t st
	for t in 1 2; do
		st=0
		NDTRACE_THREADS=$t bash -o pipefail -c "$1" >"$T/out$t" \
		    2>"$T/err$t" || st=$?
		echo "status $st" >>"$T/err$t"
	done
	cmp "$T/out1" "$T/out2" && cmp "$T/err1" "$T/err2" ||
	    { diff "$T/err1" "$T/err2" | head; return 1; }
}

@test "trace-report: the same report, one thread or two (md, json, html, partial)" {
	local c
	for c in "$F/tpu.nd" "--json $F/tpu.nd" "--html $F/tpu.nd" \
	    "--partial $F/tpu.nd" "$F/dlrm/"'*' "--partial $F/dlrm/"'*' \
	    "$F/gen.nd" "--json $F/shuf.nd" "-u -k 0 -w 2 $F/long.nd" \
	    "--json $F/genR.nd.gz"; do
		same "trace-report $c" || fail "$c"
		[ "$(tail -n 1 "$T/err1")" = "status 0" ] ||
		    fail "$c: $(cat "$T/err1")"
		[ -s "$T/out1" ] || fail "$c: empty"
	done
	# a long line's record is read whole: its pad is there
	run grep -c '"pad":"xx' "$F/long.nd"
	assert_output 2
}

@test "trace-report: a pipe read twice, several inputs: the same report and passes" {
	same "cat $F/shuf.nd | ND_DRIVE_STATS=1 trace-report --json - $F/tpu.nd"
	run cat "$T/err1"
	assert_line --index 0 --regexp '^trace-report: 2 passes, [0-9]+ bytes of stdin spooled$'
	assert_line --index 1 'status 0'
	# the spool holds the whole pipe
	[ "${lines[0]//[^0-9]/}" = "2$(wc -c <"$F/shuf.nd")" ]
	same "cat $F/genR.nd | ND_DRIVE_STATS=1 trace-report"
	run cat "$T/err1"
	assert_line --index 0 --regexp '^trace-report: 1 pass, [0-9]+ bytes'
}

@test "trace-diff: the same records and table, one thread or two" {
	same "trace-diff $F/dlrm/r0.nd $F/dlrm/r1.nd"
	run grep -c '^{"type":"delta"' "$T/out1"
	[ "$output" -gt 10 ]
	same "trace-diff --table -b scope $F/dlrm/r2.nd $F/gen.nd"
	same "cat $F/genR.nd | trace-diff --allow-same - $F/long.nd"
	run grep -c '^{"type":"delta"' "$T/out1"
	[ "$output" -gt 10 ]
}

@test "bad input: the same message and line, exit 2, one thread or two" {
	local n
	n=$(($(wc -l <"$F/genR.nd") + 1))
	# a bad record, an empty line after 8k good ones; one at line 1
	{ cat "$F/genR.nd"; echo '{"type":"span",bad'; head -n 3 "$F/gen.nd"
	} >"$T/bad.nd"
	{ cat "$F/genR.nd"; echo; head -n 3 "$F/gen.nd"; } >"$T/empty.nd"
	{ echo '{"type":"span",bad'; cat "$F/gen.nd"; } >"$T/first.nd"
	head -c 60000 "$F/genR.nd.gz" >"$T/cut.gz"
	cd "$T"
	# a failed report leaves no -o file
	same "trace-report -o rep.md bad.nd"
	run cat err1
	assert_output "trace-report: bad.nd:$n: invalid JSON: expected a string key (at byte 16 of the line)
status 2"
	[ ! -e rep.md ]
	same "cat empty.nd | trace-report --json"
	run cat err1
	assert_output "trace-report: <stdin>:$n: empty line
status 2"
	same "trace-report first.nd"
	run cat err1
	assert_output "trace-report: first.nd:1: invalid JSON: expected a string key (at byte 16 of the line)
status 2"
	# an input that cannot be read, after one that can
	same "trace-report $F/genR.nd nothere.nd"
	run cat err1
	assert_output "trace-report: nothere.nd: No such file or directory
status 2"
	same "trace-report cut.gz"
	run cat err1
	assert_output "trace-report: cut.gz: truncated gzip data (input ends at compressed byte 60000)
status 2"
	# an unconverted profile after a stream
	same "trace-report $F/genR.nd $FIXTURES/chrome/hta_triton.json.gz"
	run cat err1
	assert_output "trace-report: $FIXTURES/chrome/hta_triton.json.gz: a gzipped Chrome/Kineto trace JSON, not an ndtrace stream: convert it first: chrome2ndjson $FIXTURES/chrome/hta_triton.json.gz | trace-report
status 2"
	same "trace-diff $F/gen.nd bad.nd"
	run cat err1
	assert_output "trace-diff: bad.nd:$n: invalid JSON: expected a string key (at byte 16 of the line)
status 2"
}

@test "a closed pipe: status 0, nothing on stderr, one thread or two" {
	same "trace-report $F/genR.nd | head -c 10"
	run cat "$T/err1"
	assert_output "status 0"
	[ "$(wc -c <"$T/out1")" = 10 ]
	same "trace-diff $F/dlrm/r0.nd $F/dlrm/r1.nd | head -n 1"
	run cat "$T/err1"
	assert_output "status 0"
}

@test "NDTRACE_THREADS: 1, 2, more, 0 or empty; anything else is a usage error" {
	local v
	NDTRACE_THREADS=1 trace-report "$F/tpu.nd" >"$T/o.1"
	for v in 8 0 ""; do
		NDTRACE_THREADS=$v trace-report "$F/tpu.nd" >"$T/o.$v" ||
		    fail "NDTRACE_THREADS=$v"
		cmp "$T/o.1" "$T/o.$v"
	done
	for v in two -1 " 2" 2x; do
		NDTRACE_THREADS=$v run trace-report "$F/tpu.nd"
		assert_failure 2
		assert_output "trace-report: NDTRACE_THREADS: invalid value '$v' (1 or 0: one thread, 2: decode on a second thread)"
	done
	NDTRACE_THREADS=x run trace-diff "$F/dlrm/r0.nd" "$F/dlrm/r1.nd"
	assert_failure 2
	assert_output "trace-diff: NDTRACE_THREADS: invalid value 'x' (1 or 0: one thread, 2: decode on a second thread)"
}
