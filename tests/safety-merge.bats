#!/usr/bin/env bats
# Merges trust no partial (issue 31, item 3).  A partial is input like any
# other: edited and framed again with a valid sha256
# (tests/tools/partial_edit.py), written by hand (frame-partial.sh), or
# empty.  --merge holds it to what --partial writes (nd_partial.h,
# "Partial results" in ndtrace(7)): sums that would leave int64, indexes
# and counts beyond what the partial carries, records passed through that
# are not one record, and partials without records are errors naming the
# file and line (exit 2), never a wrong answer.

load helpers
bats_require_minimum_version 1.5.0

setup() {
	T=$BATS_TEST_TMPDIR
	PE="$PY $BATS_TEST_DIRNAME/tools/partial_edit.py"
	F="sh $BATS_TEST_DIRNAME/tools/frame-partial.sh"
	gen-stream -n 50 -s 1 >"$T/r0.ndjson"
}

NOPE="partial results of no profile (edited, or written by another program)"
NORUN="partial results of no run (edited, or written by another program)"
# 2^53, the largest figure a partial record holds (nd_json_int)
S53=9007199254740992

# N top_group (topk) or region_group (regions) records of 2^53 ns each,
# framed.  hist: 2^53 is in loglin6 bucket 64 + (53 - 6) * 64 = 3072.
gen_groups() { # topk|regions N
	"$PY" - "$1" "$2" <<'EOF' | $PE
import json, sys
kind, n, d = sys.argv[1], int(sys.argv[2]), 2**53
j = lambda r: print(json.dumps(r, separators=(",", ":")))
if kind == "topk":
    j({"type": "top_partial", "version": 2, "by": ["name"], "of": "span",
       "timelines": "device", "fallback": False, "rule": "clip",
       "hist": "loglin6", "wall": False, "sources": 1})
    for i in range(n):
        j({"type": "top_group", "key": ["op%d" % i], "count": 1,
           "total_ns": d, "self_ns": d, "min_ns": d, "max_ns": d,
           "overrun": 0, "hist": [3072, 1]})
else:
    j({"type": "region_partial", "version": 2, "timelines": "device",
       "fallback": False, "rule": "clip", "sources": 1})
    for i in range(n):
        j({"type": "region_group", "key": ["GPU:0", "s%d" % i, "op"],
           "count": 1, "exclusive_ns": d, "overrun": 0})
j({"type": "partial_end"})
EOF
}

@test "sums: 1,100 groups of 2^53 ns are an error naming the record, not a negative share (topk, regions)" {
	gen_groups topk 1100 >"$T/t.p"
	# per record the merge adds count 1, total_ns and self_ns 2^53: the
	# figures pass 2^60 at record k = 2^60 / (2^54 + 1) + 1, on self_ns
	# (total_ns leaves (k-1)(2^54+1) + 1 + 2^53 below 2^60); header: line 1
	k=$(((1 << 60) / ((1 << 54) + 1) + 1))
	assert_equal "$k" 64
	run -2 trace-topk --merge "$T/t.p"
	assert_output "trace-topk: $T/t.p:$((k + 1)): top_group record: \"self_ns\" is $S53, and the figures the merge adds up pass 2^60 (36 years in ns): $NOPE"
	# below the bound the merge is exact: 63 groups, the 43 below the top
	# 20 in "other", 43 * 2^53 ns (grep: jq's numbers are doubles)
	{ head -n 64 "$T/t.p"; echo '{"type":"partial_end"}'; } | $PE >"$T/t63.p"
	runp "trace-topk --merge '$T/t63.p' | grep '\"other\":true' |
	    grep -o '\"count\":[0-9]*,\"total_ns\":[0-9]*'"
	assert_success
	assert_output "\"count\":43,\"total_ns\":$((43 * S53))"
	# regions: count 1 and exclusive_ns 2^53 a record
	gen_groups regions 1100 >"$T/g.p"
	k=$(((1 << 60) / ((1 << 53) + 1) + 1))
	run -2 trace-regions --merge --tree "$T/g.p"
	assert_output "trace-regions: $T/g.p:$((k + 1)): region_group record: \"exclusive_ns\" is $S53, and the figures the merge adds up pass 2^60 (36 years in ns): $NOPE"
}

@test "sums: a report, gaps or steps partial whose figures pass 2^60 is an error, not a wrapped or saturated total" {
	# 200 causes of 2^53 ns after the first: the 128th passes 2^60 (the
	# partial's own figures are far below 2^53)
	trace-report --partial "$T/r0.ndjson" >"$T/r.p"
	l=$(grep -n -m1 '"type":"gap_sum"' "$T/r.p" | cut -d: -f1)
	"$PY" -c "
for i in range(200): print('{\"type\":\"gap_sum\",\"by\":\"cause\",\"key\":\"x\",\"count\":1,\"total_ns\":$S53,\"max_ns\":1,\"max_ts_ns\":0}')" >"$T/causes"
	sed "${l}r $T/causes" "$T/r.p" | $PE >"$T/r2.p"
	run -2 trace-report --merge "$T/r2.p"
	assert_output "trace-report: $T/r2.p:$((l + 128)): gap_sum record: \"total_ns\" is $S53, and the figures the merge adds up pass 2^60 (36 years in ns): $NOPE"
	# gap totals (any int64 >= 0): the first of 2^62 passes
	trace-gaps --partial "$T/r0.ndjson" |
	    $PE gap_sum total_ns 4611686018427387904 >"$T/g.p"
	l=$(grep -n -m1 '"type":"gap_sum"' "$T/g.p" | cut -d: -f1)
	run -2 trace-gaps --merge --totals "$T/g.p"
	assert_output "trace-gaps: $T/g.p:$l: gap_sum record: \"total_ns\" is 4611686018427387904, and the figures the merge adds up pass 2^60 (36 years in ns): $NOPE"
	# step lengths (any int64)
	trace-steps --partial "$T/r0.ndjson" |
	    $PE step_rec len_ns 4611686018427387904 >"$T/s.p"
	l=$(grep -n -m1 '"type":"step_rec"' "$T/s.p" | cut -d: -f1)
	run -2 trace-steps --merge -s "$T/s.p"
	assert_output "trace-steps: $T/s.p:$l: step_rec record: \"len_ns\" is 4611686018427387904, and the figures the merge adds up pass 2^60 (36 years in ns): $NOPE"
}

@test "bounded: a source index of 30,000,000 in a pipeline partial is refused at once, not 5 GB" {
	trace-pipeline --partial "$T/r0.ndjson" | $PE pipe_work src 30000000 \
	    >"$T/p"
	l=$(grep -n -m1 '"type":"pipe_work"' "$T/p" | cut -d: -f1)
	bounded 5 400000 "trace-pipeline --merge '$T/p'"
	assert_failure 2
	assert_output "trace-pipeline: $T/p:$l: pipe_work record of \"src\" 30000000: not a source of its partial, which has 1 pipe_source records before it"
	# the sources a partial declares come in order
	trace-pipeline --partial "$T/r0.ndjson" | $PE pipe_source src 5 >"$T/q"
	l=$(grep -n -m1 '"type":"pipe_source"' "$T/q" | cut -d: -f1)
	run -2 trace-pipeline --merge "$T/q"
	assert_output "trace-pipeline: $T/q:$l: pipe_source record of \"src\" 5: the sources of a partial are numbered in order, and it has 0 pipe_source records before it"
}

@test "bounded: a report partial of 10,000,000 sources in 3 records is refused, not 3 GB" {
	trace-report --partial </dev/null |
	    $PE report_partial sources 10000000 >"$T/big.p"
	n=$(tail -n 1 "$T/big.p" | jq .records)
	trace-report --partial "$T/r0.ndjson" >"$T/r.p"
	bounded 5 400000 "trace-report --merge '$T/big.p' '$T/r.p'"
	assert_failure 2
	assert_output "trace-report: $T/big.p:1: report_partial of 10000000 sources, more than its partial's $n records (one a source at least): $NORUN"
}

@test "bounded: a step_dev record of device 4,000,000,000 in a steps partial is refused, not a 4G-entry table" {
	trace-steps --partial "$T/r0.ndjson" >"$T/s.p"
	sed '/"type":"partial_end"/i {"type":"step_dev","dev":4000000000,"num":10,"len_ns":1,"compute_ns":1,"communication_ns":0,"memory_ns":0,"host_ns":0,"idle_ns":0,"overlap_ns":0}' \
	    "$T/s.p" | $PE >"$T/d.p"
	l=$(grep -n '"type":"step_dev"' "$T/d.p" | cut -d: -f1)
	bounded 5 400000 "trace-steps --merge -s '$T/d.p'"
	assert_failure 2
	assert_output "trace-steps: $T/d.p:$l: step_dev record of device 4000000000: a steps_partial has no devices"
}

# inject PROG FILE TYPE KEY VALUE WHY [OPTS]: TYPE's KEY set to VALUE, the
# merge refuses its first TYPE record for WHY
inject() {
	local prog=$1 f=$2 type=$3 key=$4 val=$5 why=$6 what l
	shift 6
	$PE "$type" "$key" "$val" <"$f" >"$T/x.p"
	l=$(grep -n -m1 "\"type\":\"$type\"" "$T/x.p" | cut -d: -f1)
	case $type in
	steps_out) what="a record trace-steps writes for a source" ;;
	gap_pass) what="a record trace-gaps passes through" ;;
	pipe_line) what="a meta record" ;;
	rp_diff) what="a trace-diff record (delta, verdict)" ;;
	esac
	run -2 "$prog" --merge "$@" "$T/x.p"
	assert_output "$prog: $T/x.p:$l: $type record whose \"$key\" is not $what ($why): $NORUN"
}

@test "injection: a steps_out line with a newline, non-JSON, a bare string or number, NUL, or a span is refused" {
	trace-steps --partial "$T/r0.ndjson" >"$T/s.p"
	inject trace-steps "$T/s.p" steps_out line \
	    '"{\"type\":\"meta\"}\n{\"type\":\"evil\"}"' "a line break in it"
	inject trace-steps "$T/s.p" steps_out line '"not json"' \
	    "invalid JSON: invalid JSON value"
	inject trace-steps "$T/s.p" steps_out line '"\"bare\""' \
	    "record is a JSON string, not an object"
	inject trace-steps "$T/s.p" steps_out line '"42"' \
	    "record is a JSON number, not an object"
	inject trace-steps "$T/s.p" steps_out line \
	    '"{\"type\":\"meta\",\"a\":\"\u0000\"}"' \
	    "invalid JSON: NUL byte in string"
	inject trace-steps "$T/s.p" steps_out line \
	    '"{\"type\":\"span\",\"name\":\"x\",\"ts_ns\":0,\"dur_ns\":1}"' \
	    "a span record"
	# a reduction tree checks them too
	inject trace-steps "$T/s.p" steps_out line '"42"' \
	    "record is a JSON number, not an object" --partial
	# what a run writes still comes out as it was
	run -0 trace-steps --merge "$T/s.p"
	assert_output "$(trace-steps "$T/r0.ndjson")"
}

@test "injection: a gap_pass of a number, a string, no type, a span, or trailing text is refused" {
	trace-gaps --partial "$T/r0.ndjson" >"$T/g.p"
	inject trace-gaps "$T/g.p" gap_pass line 42 \
	    "record is a JSON number, not an object"
	inject trace-gaps "$T/g.p" gap_pass line '"x\ny"' \
	    "record is a JSON string, not an object"
	inject trace-gaps "$T/g.p" gap_pass line '{"a":1}' \
	    'record has no "type" string'
	inject trace-gaps "$T/g.p" gap_pass line '{"type":"span","name":"x"}' \
	    "a span record" --partial
	# another member after the record: text that is no record
	sed 's/^\({"type":"gap_pass".*\)}$/\1,"x":1}/' "$T/g.p" | $PE >"$T/t.p"
	l=$(grep -n -m1 '"type":"gap_pass"' "$T/t.p" | cut -d: -f1)
	run -2 trace-gaps --merge "$T/t.p"
	assert_output "trace-gaps: $T/t.p:$l: gap_pass record whose \"line\" is not a record trace-gaps passes through (trailing characters after the JSON object): $NORUN"
	run -0 trace-gaps --merge "$T/g.p"
	assert_output "$(trace-gaps "$T/r0.ndjson")"
}

@test "injection: a pipe_line that is not one meta record, or an rp_diff that is not one trace-diff record, is refused" {
	meta() {
		printf '{"type":"meta","schema":"ndtrace/1","source":"r%s","format":"chrome","origin_ns":1000,"rank":%s}\n' "$1" "$1"
	}
	sp() {
		printf '{"type":"span","ts_ns":%s,"dur_ns":10,"name":"%s","pid":1,"tid":1}\n' "$2" "$1"
	}
	{ meta 0; sp forward_step#0 0; sp backward_step#0 20; } >"$T/a.nd"
	{ meta 1; sp forward_step#0 10; sp backward_step#0 12; } >"$T/b.nd"
	trace-pipeline --partial "$T/a.nd" "$T/b.nd" >"$T/p.p"
	inject trace-pipeline "$T/p.p" pipe_line line \
	    '"{\"type\":\"meta\"}\n{\"type\":\"evil\"}"' "a line break in it"
	inject trace-pipeline "$T/p.p" pipe_line line '"not json"' \
	    "invalid JSON: invalid JSON value"
	inject trace-pipeline "$T/p.p" pipe_line line '"{\"type\":\"step\"}"' \
	    "a step record"
	run -0 trace-pipeline --merge "$T/p.p"
	assert_output "$(trace-pipeline "$T/a.nd" "$T/b.nd")"
	# a comparison report writes the trace-diff records as they are
	gen-stream -n 50 -s 2 >"$T/r1.ndjson"
	trace-diff "$T/r0.ndjson" "$T/r1.ndjson" >"$T/d.ndjson" 2>/dev/null ||
	    true	# (exit 1: a regression)
	trace-report --partial "$T/d.ndjson" >"$T/d.p"
	inject trace-report "$T/d.p" rp_diff line '"}{"' \
	    "invalid JSON: invalid JSON value" --json
	inject trace-report "$T/d.p" rp_diff line '"{\"type\":\"meta\"}"' \
	    "a meta record" --json
	run -0 trace-report --merge --json "$T/d.p"
	assert_output "$(trace-report --json "$T/d.ndjson")"
}

@test "empty: an empty input, or one without a partial, is an error naming it (every merger)" {
	: >"$T/e.p"
	head -n 1 "$T/r0.ndjson" >"$T/m.p"	# a meta record only
	for p in topk:top regions:region gaps:gaps steps:steps \
	    report:report pipeline:pipe; do
		prog=trace-${p%%:*} hdr=${p##*:}_partial
		$prog --partial "$T/r0.ndjson" >"$T/ok.p"
		for bad in e.p m.p; do
			run -2 $prog --merge "$T/$bad" "$T/ok.p"
			assert_output "$prog: $T/$bad: no partial results in it (no $hdr header): its --partial job failed, or it is not the output of $prog --partial"
			run -2 $prog --merge "$T/ok.p" "$T/$bad"
			assert_output "$prog: $T/$bad: no partial results in it (no $hdr header): its --partial job failed, or it is not the output of $prog --partial"
		done
	done
	run -2 trace-topk --merge </dev/null
	assert_output "trace-topk: <stdin>: no partial results in it (no top_partial header): its --partial job failed, or it is not the output of trace-topk --partial"
}

@test "empty: a partial without records is one only when its trailer says so, as --partial writes it for a rank without spans" {
	head -n 1 "$T/r0.ndjson" >"$T/meta.ndjson"	# a rank without spans
	for p in topk regions gaps; do
		trace-$p --partial "$T/meta.ndjson" >"$T/e.p"
		trace-$p --partial "$T/r0.ndjson" >"$T/ok.p"
		# (gaps passes the meta record through: no empty partial)
		if [ $p != gaps ]; then
			run -0 tail -n 1 "$T/e.p"
			assert_output --regexp '^\{"type":"partial_end","records":0,"empty":true,"sha256":"[0-9a-f]{64}"\}$'
		fi
		run -0 trace-$p --merge "$T/e.p" "$T/ok.p"
		assert_output "$(trace-$p "$T/meta.ndjson" "$T/r0.ndjson")"
		# the same header and trailer, framed by hand without "empty"
		head -n 1 "$T/e.p" | $F >"$T/h.p"
		run -2 trace-$p --merge "$T/h.p" "$T/ok.p"
		assert_output "trace-$p: $T/h.p:1: partial results empty: no records between this header and its partial_end, which does not say \"empty\":true as --partial does for a rank without data (a --partial job failed, or the partial was edited)"
	done
	# "empty" of a partial with records: mixed
	n=$(wc -l <"$T/ok.p")
	sed '$s/"sha256"/"empty":true,"sha256"/' "$T/ok.p" >"$T/m.p"
	run -2 trace-gaps --merge "$T/m.p"
	assert_output "trace-gaps: $T/m.p:$n: partial results mixed: partial_end says \"empty\" of the partial begun at line 1, which has $((n - 2)) records: partials written by concurrent jobs to one pipe interleave; write one file per job (-o) or use GNU parallel"
}
