#!/usr/bin/env bats
# trace-gaps --totals, --partial and --merge: a merge of per-input partial
# results is byte-identical to one run over the same inputs in the same
# order; the gap_summary totals are recomputed with jq from the gap records;
# partial results that cannot be merged are refused with one exact line.

load helpers
bats_require_minimum_version 1.5.0

setup_file() {
	need_fixtures
	D="$BATS_FILE_TMPDIR"
	for i in 0 1 2; do
		"$ND_BIN/chrome2ndjson" "$FIXTURES"/chrome/dlrm_8ranks/worker${i}_step_12.*.pt.trace.json.gz >"$D/r$i.ndjson"
	done
	"$ND_BIN/gen-stream" -R -n 4000 -s 1 -d 2 >"$D/g1.ndjson"
	"$ND_BIN/gen-stream" -R -n 4000 -s 2 -d 3 >"$D/g2.ndjson"
	"$ND_BIN/gen-stream" -n 3000 -s 3 >"$D/g3.ndjson"
	"$ND_BIN/xplane2ndjson" "$FIXTURES/xplane/rocm_jax_conv_8gpu.xplane.pb" >"$D/x1.ndjson"
	# two sources in one file
	cat "$D/r2.ndjson" "$D/g3.ndjson" >"$D/two.ndjson"
}

setup() {
	D="$BATS_FILE_TMPDIR"
	T="$BATS_TEST_TMPDIR"
}

# The gap_summary of the gap records of FILE, computed with jq.
jq_summary() {
	jq -s -c '
	def rows(f; k): group_by(f) | map({(k): (.[0] | f), count: length,
	    total_ns: (map(.dur_ns) | add), max_ns: (map(.dur_ns) | max)}) |
	    sort_by(-.total_ns, .[k]);
	[.[] | select(.type == "gap")] as $g |
	{type: "gap_summary", count: ($g | length),
	 total_ns: ($g | map(.dur_ns) | add // 0),
	 max_ns: ($g | map(.dur_ns) | max // 0),
	 by_cause: ($g | rows(.cause; "cause")),
	 by_payload: ($g | rows(.payload; "payload")),
	 by_scope: ($g | rows(.scope; "scope"))}' "$1"
}

# one partial per input with OPTS, then merged: the same bytes as one run
same_as_one_run() { # opts file...
	local opts=$1 i=0 p=()
	shift
	trace-gaps $opts --totals "$@" >"$T/one" || fail "run [$opts] $*"
	for f in "$@"; do
		trace-gaps $opts --partial -o "$T/p$i" "$f" || fail "partial [$opts] $f"
		p+=("$T/p$i")
		i=$((i + 1))
	done
	trace-gaps --merge --totals -o "$T/merged" "${p[@]}" || fail "merge [$opts] $*"
	cmp "$T/one" "$T/merged" || fail "merge differs from one run [$opts] $*"
	# the last record is the summary, and it adds up
	[ "$(tail -n 1 "$T/one")" = "$(jq_summary "$T/one")" ] ||
	    fail "summary [$opts] $*: $(tail -n 1 "$T/one" | cut -c1-300)"
}

@test "merge = one run, byte for byte: DLRM ranks, gen-stream, XPlane, two sources in a file; summary = jq" {
	same_as_one_run "" "$D/r0.ndjson" "$D/r1.ndjson" "$D/two.ndjson" \
	    "$D/x1.ndjson" "$D/g1.ndjson" "$D/g2.ndjson"
	n=$(grep -c '"type":"gap"' "$T/one")
	[ "$n" -gt 1500 ]
	# every source's meta comes through, in order
	run jq -r 'select(.type == "meta") | .source' "$T/merged"
	assert_output "$(jq -r 'select(.type == "meta") | .source' "$D/r0.ndjson" \
	    "$D/r1.ndjson" "$D/two.ndjson" "$D/x1.ndjson" "$D/g1.ndjson" "$D/g2.ndjson")"
	# causes and many scopes to sum
	run jq -c 'select(.type == "gap_summary") | [(.by_cause | map(.cause)), (.by_scope | length) > 20]' "$T/one"
	assert_output '[["sync","host_wait","kernel_wait","other"],true]'
}

@test "merge = one run with every collection option" {
	for o in "-l timeline -m 5us -K 2us" "-S -x ProfilerStep" "-S" "-c -l timeline -u"; do
		same_as_one_run "$o" "$D/r0.ndjson" "$D/two.ndjson"
	done
	# the options changed the gaps
	run jq -c 'select(.type == "gap") | .host_context | length' "$T/one"
	assert_line 3
}

@test "merge of merges, partials concatenated on stdin, and --totals with --partial" {
	trace-gaps --totals "$D/r0.ndjson" "$D/r1.ndjson" "$D/g1.ndjson" >"$T/one"
	trace-gaps --partial --totals "$D/r0.ndjson" >"$T/p0"
	trace-gaps --partial "$D/r1.ndjson" >"$T/p1"
	trace-gaps --partial "$D/g1.ndjson" >"$T/p2"
	# --totals does not change a partial
	trace-gaps --partial "$D/r0.ndjson" | cmp - "$T/p0"
	trace-gaps --merge --partial "$T/p0" "$T/p1" >"$T/p01"
	run trace-gaps --merge --totals "$T/p01" "$T/p2"
	assert_success
	assert_output "$(cat "$T/one")"
	run bash -c "cat '$T/p0' '$T/p1' '$T/p2' | trace-gaps --merge --totals"
	assert_output "$(cat "$T/one")"
	# without --totals: the gap records only
	run trace-gaps --merge "$T/p0" "$T/p1" "$T/p2"
	assert_output "$(head -n -1 "$T/one")"
	# the partial's header, and its totals add up to the summary's
	run jq -c 'select(.type == "gaps_partial")' "$T/p01"
	assert_output '{"type":"gaps_partial","version":2,"level":"device","min_ns":0,"kernel_wait_ns":30000,"host_context":false,"within_steps":false,"step_regex":null}'
	run jq -s -c '[.[] | select(.type == "gap_sum" and .by == "cause")] | [(map(.count) | add), (map(.total_ns) | add)]' "$T/p01"
	assert_output "$(jq -c 'select(.type == "gap_summary") | [.count, .total_ns]' < <(trace-gaps --totals "$D/r0.ndjson" "$D/r1.ndjson"))"
}

@test "passed-through records come back byte for byte, and stay out of the totals" {
	{
		echo '{"type":"meta","schema":"ndtrace/1","source":"h.json","format":"chrome","origin_ns":0}'
		printf '{ "type" : "note",\t"x" : [1, 2.50, "\\u00e9"] }  \n'
		echo '{"type":"gap","ts_ns":0,"dur_ns":999999,"cause":"sync","payload":"fake"}'
		echo '{"type":"gap_pass","line":{"type":"x"}}'
		echo '{"type":"span","ts_ns":0,"dur_ns":100,"name":"a","pid":0,"tid":7,"device":"GPU:0"}'
		echo '{"type":"span","ts_ns":300,"dur_ns":100,"name":"b","pid":0,"tid":7,"device":"GPU:0"}'
		echo '{"type":"partial_end","records":1}'
	} >"$T/h.ndjson"
	trace-gaps --totals "$T/h.ndjson" >"$T/one"
	trace-gaps --partial "$T/h.ndjson" >"$T/p"
	run trace-gaps --merge --totals "$T/p"
	assert_success
	assert_output "$(cat "$T/one")"
	run cat "$T/one"
	assert_line --index 1 "$(sed -n 2p "$T/h.ndjson")"
	assert_line --index 6 '{"type":"gap_summary","count":1,"total_ns":200,"max_ns":200,"by_cause":[{"cause":"kernel_wait","count":1,"total_ns":200,"max_ns":200}],"by_payload":[{"payload":"b","count":1,"total_ns":200,"max_ns":200}],"by_scope":[{"scope":null,"count":1,"total_ns":200,"max_ns":200}]}'
}

@test "summary by hand: causes, payloads with escapes, scopes with none; ties by key" {
	# one GPU timeline, -K 150ns: gaps [100,300) 200 other (payload B,
	# scope s), [400,600) 200 other (A, no scope), [700,750) 50
	# kernel_wait (k"q, scope é), [800,1300) 500 other (é, scope s)
	op() { printf '{"type":"span","ts_ns":%s,"dur_ns":%s,"name":"%s","pid":0,"tid":7,"device":"GPU:0"%s}\n' "$@"; }
	{
		op 0 100 x ',"scope":"s"'
		op 300 100 B ',"scope":"s"'
		op 600 100 A ''
		op 750 50 'k\"q' ',"scope":"\u00e9"'
		op 1300 100 'é' ',"scope":"s"'
	} >"$T/h.ndjson"
	run trace-gaps -K 150ns --totals "$T/h.ndjson"
	assert_success
	assert_line --index 4 '{"type":"gap_summary","count":4,"total_ns":950,"max_ns":500,"by_cause":[{"cause":"other","count":3,"total_ns":900,"max_ns":500},{"cause":"kernel_wait","count":1,"total_ns":50,"max_ns":50}],"by_payload":[{"payload":"é","count":1,"total_ns":500,"max_ns":500},{"payload":"A","count":1,"total_ns":200,"max_ns":200},{"payload":"B","count":1,"total_ns":200,"max_ns":200},{"payload":"k\"q","count":1,"total_ns":50,"max_ns":50}],"by_scope":[{"scope":"s","count":2,"total_ns":700,"max_ns":500},{"scope":null,"count":1,"total_ns":200,"max_ns":200},{"scope":"é","count":1,"total_ns":50,"max_ns":50}]}'
	printf '%s\n' "$output" >"$T/out"
	[ "$(tail -n 1 "$T/out")" = "$(jq_summary "$T/out")" ]
	# split in two sources: the totals add up the same
	{ head -n 3 "$T/h.ndjson"; } >"$T/a.ndjson"
	{ echo '{"type":"meta","schema":"ndtrace/1","source":"b","format":"chrome","origin_ns":0}'; tail -n 2 "$T/h.ndjson"; } >"$T/b.ndjson"
	trace-gaps -K 150ns --partial -o "$T/pa" "$T/a.ndjson"
	trace-gaps -K 150ns --partial -o "$T/pb" "$T/b.ndjson"
	run trace-gaps --merge --totals "$T/pa" "$T/pb"
	assert_output "$(trace-gaps -K 150ns --totals "$T/a.ndjson" "$T/b.ndjson")"
	assert_line --index 4 '{"type":"gap_summary","count":3,"total_ns":900,"max_ns":500,"by_cause":[{"cause":"other","count":3,"total_ns":900,"max_ns":500}],"by_payload":[{"payload":"é","count":1,"total_ns":500,"max_ns":500},{"payload":"A","count":1,"total_ns":200,"max_ns":200},{"payload":"B","count":1,"total_ns":200,"max_ns":200}],"by_scope":[{"scope":"s","count":2,"total_ns":700,"max_ns":500},{"scope":null,"count":1,"total_ns":200,"max_ns":200}]}'
	# no gaps at all: zeros and empty arrays
	op 0 100 x '' >"$T/one.ndjson"
	run trace-gaps --totals "$T/one.ndjson"
	assert_output '{"type":"gap_summary","count":0,"total_ns":0,"max_ns":0,"by_cause":[],"by_payload":[],"by_scope":[]}'
}

# rewrite the trailer of partial FILE so that it checks out again
reseal() {
	"$PY" - "$1" <<'E'
import hashlib, json, sys
lines = open(sys.argv[1], 'rb').read().split(b'\n')[:-2]
body = b''.join(l + b'\n' for l in lines)
end = {"type": "partial_end", "records": len(lines) - 1,
       "sha256": hashlib.sha256(body).hexdigest()}
open(sys.argv[1], 'wb').write(body + json.dumps(end, separators=(',', ':')).encode() + b'\n')
E
}

@test "errors: options on --merge, partials made with other options, other versions, bad totals" {
	trace-gaps --partial -o "$T/p" "$D/r0.ndjson"
	echo '{"type":"span","ts_ns":0,"dur_ns":1,"name":"a","pid":0,"tid":7,"device":"GPU:0"}' >"$T/s.ndjson"
	for o in "-l device" "-m 0" "-c" "-x step" "-u" "-s"; do
		run trace-gaps --merge $o "$T/p"
		assert_failure 2
		assert_line "trace-gaps: --merge takes --level, --min, --kernel-wait, --host-context, --within-steps, --step-regex and --unordered from the partial results; do not give them again"
	done
	want() { # opts message
		trace-gaps $1 --partial -o "$T/q" "$T/s.ndjson"
		# -o: all or nothing
		run trace-gaps --merge -o "$T/out" "$T/p" "$T/q"
		assert_failure 2
		assert_output "trace-gaps: $T/q:1: partial results made with $2 cannot be merged with those made with $3: make every partial with the same options"
		[ ! -e "$T/out" ]
	}
	want "-l timeline" "--level timeline" "--level device"
	want "-m 1us" "--min 1000ns" "--min 0ns"
	want "-K 1ms" "--kernel-wait 1000000ns" "--kernel-wait 30000ns"
	want "-c" "--host-context" "no --host-context"
	want "-S" "--within-steps" "no --within-steps"
	want "-x Profiler.*" "--step-regex 'Profiler.*'" "no --step-regex"
	# -u changes no gap: it merges
	trace-gaps -u --partial -o "$T/q" "$T/s.ndjson"
	run trace-gaps --merge "$T/p" "$T/q"
	assert_success
	sed 's/"version":2/"version":1/' "$T/p" >"$T/v1"
	run trace-gaps --merge "$T/v1"
	assert_failure 2
	assert_output "trace-gaps: $T/v1:1: gaps_partial of another format (version 1, not 2): make the partial results again with this trace-gaps"
	run trace-gaps --merge "$D/r0.ndjson"
	assert_failure 2
	assert_output "trace-gaps: $D/r0.ndjson:2: --merge reads the output of trace-gaps --partial, not span records"
	run trace-gaps --merge </dev/null
	assert_failure 2
	assert_output "trace-gaps: <stdin>: no partial results in it (no gaps_partial header): its --partial job failed, or it is not the output of trace-gaps --partial"
	# a torn partial: the framing says so
	head -c 3000 "$T/p" >"$T/torn"
	run trace-gaps --merge "$T/torn"
	assert_failure 2
	assert_output --partial "trace-gaps: $T/torn:"
	# totals no gaps add up to, a key of the wrong kind, a bad gap_pass
	bad() { # sed-expression message
		sed "$1" "$T/p" >"$T/b"
		reseal "$T/b"
		ln=$(grep -n -m1 "$3" "$T/b" | cut -d: -f1)
		run trace-gaps --merge --totals -o "$T/out" "$T/b"
		assert_failure 2
		assert_output "trace-gaps: $T/b:$ln: $2"
	}
	bad '0,/"by":"cause","key":"host_wait","count":[0-9]*/s//"by":"cause","key":"host_wait","count":0/' \
	    'gap_sum totals that no gaps add up to (count 0, or max_ns above total_ns)' '"count":0'
	bad '0,/"max_ns":\([0-9]*\),"max_ts_ns"/s//"max_ns":99999999999,"max_ts_ns"/' \
	    'gap_sum totals that no gaps add up to (count 0, or max_ns above total_ns)' '"max_ns":99999999999'
	# the longest gap's start, and its marker and scope (payload rows)
	bad '0,/"max_ts_ns":[-0-9]*/s//"max_ts_ns":"0"/' \
	    'gap_sum record without a valid "max_ts_ns"' '"max_ts_ns":"0"'
	bad '0,/"max_ts_ns":[-0-9]*/s//"max_ts_ns":9223372036854775807/' \
	    '"max_ts_ns" must be an integer within +-2^62' '"max_ts_ns":9223372036854775807'
	bad '0,/"by":"payload"\(.*\)"marker":[^,]*,/s//"by":"payload"\1"marker":7,/' \
	    '"marker" must be a string or null' '"marker":7'
	bad '0,/"by":"payload"\(.*\),"scope":[^}]*}/s//"by":"payload"\1}/' \
	    '"scope" must be a string or null' '"by":"payload"'
	bad '0,/"by":"cause","key":"[a-z_]*"/s//"by":"cause","key":null/' \
	    '"key" must be a string' '"key":null'
	bad '0,/"by":"scope","key":[^,]*,"count":[0-9]*/s//"by":"scope","key":"x","count":-1/' \
	    '"count" must be an integer >= 0' '"count":-1'
	bad '0,/"by":"cause"/s//"by":"rank"/' \
	    '"by" must be "cause", "payload" or "scope"' '"by":"rank"'
	bad '0,/"min_ns":0/s//"min_ns":"0"/' \
	    'gaps_partial record without a valid "min_ns"' '"min_ns":"0"'
	bad '0,/"type":"gap_pass","line":/s//"type":"gap_pass", "line":/' \
	    'gap_pass record not as --partial writes it ({"type":"gap_pass","line":RECORD})' '"gap_pass", "line"'
}
