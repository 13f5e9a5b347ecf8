#!/usr/bin/env bats
# One command line across the programs: unconverted input named with the
# converter to run, --by keys that no span has, durations without a unit,
# and one option letter per meaning (old letters warn).

load helpers

# every program that reads the ndtrace stream, with the arguments it needs
# before the input (trace-context takes a pattern)
FILTERS="trace-check trace-classify trace-gaps trace-mem trace-pipeline trace-regions trace-report trace-roofline trace-steps trace-topk ndjson2chrome"

setup() {
	T=$BATS_TEST_TMPDIR
	need_fixtures
	cat >"$T/s.ndjson" <<'E'
{"type":"meta","schema":"ndtrace/1","source":"t.json","format":"chrome","origin_ns":0}
{"type":"span","ts_ns":0,"dur_ns":100,"name":"a","pid":1,"tid":1,"args":{"stream":7}}
{"type":"span","ts_ns":200,"dur_ns":50,"name":"b","pid":1,"tid":1}
E
	SPANKEYS="args, args.stream, dur_ns, name, pid, tid, ts_ns, type"
}

# the one line every filter gives for an unconverted FILE (or <stdin>)
hint() { # prog name what converter
	if [ "$2" = "<stdin>" ]; then
		echo "$1: <stdin>: $3, not an ndtrace stream: convert it first: ... | $4 | $1"
	else
		echo "$1: $2: $3, not an ndtrace stream: convert it first: $4 $2 | $1"
	fi
}

@test "unconverted: every Chrome/Kineto fixture, plain and gzipped, names chrome2ndjson" {
	n=0
	for f in "$FIXTURES"/chrome/*.json "$FIXTURES"/chrome/*.json.gz \
	    "$FIXTURES"/chrome/dlrm_8ranks/*.json.gz \
	    "$FIXTURES"/torch-legacy/*.pt.trace.json*; do
		case $f in *.gz) what="a gzipped Chrome/Kineto trace JSON" ;;
		*) what="a Chrome/Kineto trace JSON" ;; esac
		run trace-topk "$f"
		assert_failure 2
		assert_output "$(hint trace-topk "$f" "$what" chrome2ndjson)"
		n=$((n + 1))
	done
	[ "$n" -ge 25 ]
}

@test "unconverted: every XPlane fixture (and a mangled one) names xplane2ndjson" {
	for f in "$FIXTURES"/xplane/*.pb "$FIXTURES"/bad/*.xplane.pb; do
		run trace-report "$f"
		assert_failure 2
		assert_output "$(hint trace-report "$f" "an XPlane protobuf" xplane2ndjson)"
	done
	gzip -c "$FIXTURES/xplane/tpu_inference_4core.xplane.pb" >"$T/x.xplane.pb.gz"
	run trace-steps "$T/x.xplane.pb.gz"
	assert_failure 2
	assert_output "$(hint trace-steps "$T/x.xplane.pb.gz" "a gzipped XPlane protobuf" xplane2ndjson)"
}

@test "unconverted: every filter says it, for a file and for stdin, plain and gzip" {
	pretty="$FIXTURES/chrome/xprof_handwritten_trace.json"
	gz="$FIXTURES/chrome/hta_triton.json.gz"
	legacy="$FIXTURES/torch-legacy/single.pt.trace.json.gz"
	pb="$FIXTURES/xplane/rocm_jax08_gemm.xplane.pb"
	for p in $FILTERS; do
		run "$p" "$pretty"
		assert_failure 2
		assert_output "$(hint "$p" "$pretty" "a Chrome/Kineto trace JSON" chrome2ndjson)"
		run "$p" "$legacy"
		assert_failure 2
		assert_output "$(hint "$p" "$legacy" "a gzipped Chrome/Kineto trace JSON" chrome2ndjson)"
		run "$p" "$pb"
		assert_failure 2
		assert_output "$(hint "$p" "$pb" "an XPlane protobuf" xplane2ndjson)"
		run bash -c "zcat '$gz' | $p"
		assert_failure 2
		assert_output "$(hint "$p" "<stdin>" "a Chrome/Kineto trace JSON" chrome2ndjson)"
		run "$p" <"$gz"
		assert_failure 2
		assert_output "$(hint "$p" "<stdin>" "a gzipped Chrome/Kineto trace JSON" chrome2ndjson)"
		run "$p" <"$pb"
		assert_failure 2
		assert_output "$(hint "$p" "<stdin>" "an XPlane protobuf" xplane2ndjson)"
	done
	run trace-context aten "$pretty"
	assert_failure 2
	assert_output "$(hint trace-context "$pretty" "a Chrome/Kineto trace JSON" chrome2ndjson)"
	run trace-diff "$T/s.ndjson" "$gz"
	assert_failure 2
	assert_output "$(hint trace-diff "$gz" "a gzipped Chrome/Kineto trace JSON" chrome2ndjson)"
	# a second file in the list is looked at too; a name with a quote
	cp "$pretty" "$T/it's a trace.json"
	run trace-topk "$T/s.ndjson" "$T/it's a trace.json"
	assert_failure 2
	assert_output "trace-topk: $T/it's a trace.json: a Chrome/Kineto trace JSON, not an ndtrace stream: convert it first: chrome2ndjson '$T/it'\\''s a trace.json' | trace-topk"
}

@test "unconverted: one-line Chrome objects and arrays, a BOM, leading blank lines" {
	printf '{"traceEvents":[{"ph":"X","name":"k","pid":0,"tid":7,"ts":5,"dur":1}]}' >"$T/a.json"
	printf '{"displayTimeUnit":"ns","traceEvents":[]}\n' >"$T/b.json"
	printf '\357\273\277\n\n  [\n {"ph":"X"}]\n' >"$T/c.json"
	printf '[]' >"$T/d.json"
	printf '{"otherData":{},\n"traceEvents":[]}\n' >"$T/e.json"
	for f in a b c d e; do
		run trace-topk "$T/$f.json"
		assert_failure 2
		assert_output "$(hint trace-topk "$T/$f.json" "a Chrome/Kineto trace JSON" chrome2ndjson)"
	done
}

@test "unconverted: a valid stream is never mistaken; other bad input keeps its own message" {
	# records whose first keys are Chrome's are still records
	printf '%s\n' '{"traceEvents":1,"type":"meta","schema":"ndtrace/1","source":"v","format":"chrome","origin_ns":0,"host":null,"rank":null,"producer":"x"}' \
	    '{"traceEvents":1,"type":"span","ts_ns":0,"dur_ns":5,"name":"a","pid":1,"tid":1}' \
	    '{"schemaVersion":1,"type":"span","ts_ns":9,"dur_ns":5,"name":"a","pid":1,"tid":1}' >"$T/v.ndjson"
	run bash -c "trace-topk '$T/v.ndjson' | jq -c '[.name,.count,.total_ns]'"
	assert_success
	assert_output '["a",2,10]'
	run trace-check "$T/v.ndjson"
	assert_success
	# a broken first record, a pretty-printed record, a key_averages file:
	# not a Chrome trace nor XPlane; a memory timeline says what reads it
	# (issue 31, item 11)
	printf '{"type":"span","ts_ns":0\n' >"$T/t.ndjson"
	run trace-topk "$T/t.ndjson"
	assert_failure 2
	assert_output "trace-topk: $T/t.ndjson:1: invalid JSON: unexpected end of input in object (at byte 25 of the line)"
	printf '{\n  "type": "span"\n}\n' >"$T/p.ndjson"
	run trace-topk "$T/p.ndjson"
	assert_failure 2
	assert_output "trace-topk: $T/p.ndjson:1: invalid JSON: unexpected end of input in object (at byte 2 of the line)"
	run trace-topk "$FIXTURES/torch-legacy/single.key_averages.json"
	assert_failure 2
	assert_output "trace-topk: $FIXTURES/torch-legacy/single.key_averages.json:1: invalid JSON: unexpected end of input in object (at byte 2 of the line)"
	printf '[[-1, 1, 512, 7]]\n' >"$T/m.json"
	run trace-topk "$T/m.json"
	assert_failure 2
	assert_output "trace-topk: $T/m.json: a PyTorch memory timeline (a JSON array of arrays), not an ndtrace stream: give it to trace-mem: trace-mem $T/m.json"
	# the second line is never taken for a document
	printf '%s\n' '{"type":"span","ts_ns":0,"dur_ns":5,"name":"a","pid":1,"tid":1}' '[{"ph":"X"}]' >"$T/l2.ndjson"
	run trace-topk "$T/l2.ndjson"
	assert_failure 2
	assert_output "trace-topk: $T/l2.ndjson:2: record is a JSON array, not an object (at byte 1 of the line)"
}

@test "unconverted: a huge one-line Chrome document is named too, within limits" {
	# 70 MB on one line: longer than the 64 MiB line limit
	"$PY" -c "
import sys
e = '{\"ph\":\"X\",\"name\":\"k\",\"pid\":0,\"tid\":7,\"ts\":5,\"dur\":1},'
sys.stdout.write('{\"traceEvents\":[' + e * 1300000 + '{}]}')" | gzip -1 >"$T/big.json.gz"
	if [ -n "${ND_ASAN:-}" ]; then lim=""; else lim="ulimit -v 1000000;"; fi
	run timeout 20 bash -c "$lim trace-topk '$T/big.json.gz'"
	assert_failure 2
	assert_output "$(hint trace-topk "$T/big.json.gz" "a gzipped Chrome/Kineto trace JSON" chrome2ndjson)"
}

@test "--by: a key no span has is an error naming it and the keys there are" {
	run trace-topk --by nam "$T/s.ndjson"
	assert_failure 2
	assert_output "trace-topk: --by nam: not a standard key, and no span has it; the spans have: $SPANKEYS"
	run trace-topk -b name,step "$T/s.ndjson"
	assert_failure 2
	assert_output "trace-topk: --by step: no span has this key; the spans have: $SPANKEYS"
	run trace-roofline --by args.nosuch "$T/s.ndjson"
	assert_failure 2
	assert_output "trace-roofline: --by args.nosuch: no span has this key; the spans have: $SPANKEYS"
	run trace-diff --allow-same -b nosuch "$T/s.ndjson" "$T/s.ndjson"
	assert_failure 2
	assert_output --partial "trace-diff: --by nosuch: not a standard key, and no span has it; the spans have: $SPANKEYS"
	run trace-diff --allow-same -b cat "$T/s.ndjson" "$T/s.ndjson"
	assert_failure 2
	assert_output --partial "trace-diff: --by cat: no span has this key; the spans have: $SPANKEYS"
}

@test "--by: a key that some spans lack is fine (its own '(none)' group)" {
	run bash -c "trace-topk -b args.stream '$T/s.ndjson' | jq -c '[.args.stream,.count,.total_ns]'"
	assert_success
	assert_output - <<'E'
[7,1,100]
[null,1,50]
E
	run bash -c "trace-diff --allow-same -b args.stream '$T/s.ndjson' '$T/s.ndjson' 2>/dev/null | jq -c 'select(.type==\"delta\") | [.key,.before_ns]'"
	assert_success
	assert_output - <<'E'
["7",100]
[null,50]
E
	# the key no span has, before this fix, came out as one (none) row
	run bash -c "trace-diff --allow-same -b args.stream '$T/s.ndjson' '$T/s.ndjson' 2>/dev/null | jq -c 'select(.type==\"delta\") | .key' | grep -c null"
	assert_output 1
	# no span at all is no error
	head -1 "$T/s.ndjson" >"$T/m.ndjson"
	run trace-topk --by nam "$T/m.ndjson"
	assert_success
}

@test "durations: a number without a unit is refused everywhere; 0 is 0" {
	for o in --min -m --kernel-wait -K; do
		run trace-gaps "$o" 10 "$T/s.ndjson"
		assert_failure 2
		case $o in -m|--min) l=--min ;; *) l=--kernel-wait ;; esac
		assert_output "trace-gaps: invalid duration for $l: '10' (a number with a unit: e.g. 500ns, 10us, 1.5ms, 2s)"
	done
	run trace-diff --allow-same --fail-on 'step.median>+5' "$T/s.ndjson" "$T/s.ndjson"
	assert_failure 2
	assert_output "trace-diff: invalid rule 'step.median>+5': bad duration (a number with ns, us, ms or s, or a percentage)"
	run bash -c "trace-gaps --min 0 -K 0.0 '$T/s.ndjson' | jq -c 'select(.type==\"gap\") | [.ts_ns,.dur_ns,.cause]'"
	assert_success
	assert_output '[100,100,"other"]'
	run bash -c "trace-gaps --min 100ns '$T/s.ndjson' | jq -c 'select(.type==\"gap\") | .dur_ns'"
	assert_output 100
	run bash -c "trace-gaps --min 101ns '$T/s.ndjson' | grep -c gap"
	assert_output 0
}

@test "old option letters still work, with one warning line each" {
	# same output as the new letter; the warning on stderr only
	run bash -c "trace-gaps -K 200ns -x '^a$' -S '$T/s.ndjson' 2>&1 >'$T/new'"
	assert_success
	assert_output ""
	run bash -c "trace-gaps -k 200ns -r '^a$' -s '$T/s.ndjson' 2>&1 >'$T/old'"
	assert_success
	assert_output - <<'E'
trace-gaps: -k is deprecated: use -K (--kernel-wait)
trace-gaps: -r is deprecated: use -x (--step-regex)
trace-gaps: -s is deprecated: use -S (--within-steps)
E
	cmp "$T/new" "$T/old"
	run bash -c "trace-steps -r '$T/s.ndjson' 2>&1 >'$T/old'; trace-steps -R '$T/s.ndjson' >'$T/new' 2>/dev/null && cmp '$T/old' '$T/new'"
	assert_success
	assert_line --index 0 "trace-steps: -r is deprecated: use -R (--ranks)"
	printf '{"type":"span"}\n{"type":"span"}\n' >"$T/bad.ndjson"
	run bash -c "trace-check -m 1 '$T/bad.ndjson'"
	assert_failure 1
	assert_line --index 0 "trace-check: -m is deprecated: use -M (--max-problems)"
	run bash -c "trace-check -m 1 '$T/bad.ndjson' 2>&1 | tail -n +2 >'$T/old'; trace-check -M 1 '$T/bad.ndjson' >'$T/new' 2>&1; cmp '$T/old' '$T/new'"
	assert_success
	run bash -c "ndjson2chrome -k '$T/s.ndjson' 2>&1 >'$T/old'; ndjson2chrome -D '$T/s.ndjson' >'$T/new' && cmp '$T/old' '$T/new'"
	assert_success
	assert_output "ndjson2chrome: -k is deprecated: use -D (--keep-derived)"
}

@test "new short letters: -b, -u, -p, -r mean what they mean elsewhere" {
	run bash -c "trace-topk -b name -u '$T/s.ndjson' | md5sum; trace-topk --by name --unordered '$T/s.ndjson' | md5sum"
	assert_equal "${lines[0]}" "${lines[1]}"
	run bash -c "trace-roofline -b name -p 100 --peak-gbps 1 '$T/s.ndjson' | md5sum; trace-roofline --by name --peak-tflops 100 --peak-gbps 1 '$T/s.ndjson' | md5sum"
	assert_equal "${lines[0]}" "${lines[1]}"
	run bash -c "trace-regions -u '$T/s.ndjson' | md5sum; trace-regions --unordered '$T/s.ndjson' | md5sum"
	assert_equal "${lines[0]}" "${lines[1]}"
	run bash -c "trace-report -u -p 100 --peak-gbps 1 '$T/s.ndjson' | md5sum; trace-report --unordered --peak-tflops 100 --peak-gbps 1 '$T/s.ndjson' | md5sum"
	assert_equal "${lines[0]}" "${lines[1]}"
	trace-classify --print-rules >"$T/rules.tsv"
	run bash -c "chrome2ndjson -r '$T/rules.tsv' '$FIXTURES/chrome/hta_triton.json.gz' | md5sum; chrome2ndjson --rules '$T/rules.tsv' '$FIXTURES/chrome/hta_triton.json.gz' | md5sum"
	assert_equal "${lines[0]}" "${lines[1]}"
	run bash -c "xplane2ndjson -r '$T/rules.tsv' '$FIXTURES/xplane/rocm_jax08_gemm.xplane.pb' | md5sum; xplane2ndjson --rules '$T/rules.tsv' '$FIXTURES/xplane/rocm_jax08_gemm.xplane.pb' | md5sum"
	assert_equal "${lines[0]}" "${lines[1]}"
}

# "PROG -x long" for every option line of every program's --help ("-" for
# no letter), and "PROG x long" for its man page's option list
opts_help() {
	for p in $(ls "$BATS_TEST_DIRNAME/../cmd" | sed -n 's/\.c$//p'); do
		"$p" --help | sed -nE -e "s/^ +-([A-Za-z]), --([a-z][a-z0-9-]*).*/$p \1 \2/p" \
		    -e "s/^ +--([a-z][a-z0-9-]*).*/$p - \1/p"
	done
}
pairs_man() {
	for m in "$BATS_TEST_DIRNAME"/../man/*.1; do
		p=$(basename "$m" .1)
		sed -nE "s/^\.It Fl ([A-Za-z])( Ar [^,]*)? , Fl -([a-z][a-z0-9-]*).*/$p \1 \3/p" "$m"
	done
}

@test "one meaning, one letter: no short option means two long ones across programs" {
	opts_help >"$T/opts"
	[ "$(grep -vc ' - ' "$T/opts")" -ge 60 ]
	# a letter with two long options, a long option with two letters, or
	# a long option with a letter in one program and none in another
	run awk '{ k = $2 == "-" ? "" : $2 }
	    k != "" && ($2 in l) && l[$2] != $3 { print "-" $2 ": --" l[$2] " and --" $3 }
	    k != "" { l[$2] = $3 }
	    { n[$3] = n[$3] " " $1 ":" $2; if (k != "") s[$3] = s[$3] == "" || s[$3] == k ? k : s[$3] "," k; else nol[$3] = 1 }
	    END { for (o in s) if (index(s[o], ",") || (o in nol)) print "--" o ":" n[o] }' "$T/opts"
	assert_success
	assert_output ""
	# the man pages list the same pairs as --help
	pairs_man | sort >"$T/man"
	grep -v ' - ' "$T/opts" | sort >"$T/help"
	run diff "$T/help" "$T/man"
	assert_success
}

@test "--partial/--merge option rules: one wording in all six programs that merge (nd_partial_check_opts)" {
	# a collection option given again to --merge
	for c in "trace-topk --timelines host" "trace-regions --timelines host" \
	    "trace-gaps -m 1us" "trace-steps -d" "trace-pipeline --p2p x" \
	    "trace-report -u"; do
		run $c --merge /dev/null
		assert_failure 2
		assert_output --regexp "^${c%% *}: --merge takes (--[a-z0-9-]+, )*--[a-z0-9-]+ and --[a-z0-9-]+ from the partial results; do not give them again\$"
	done
	# an output option given to --partial
	for c in "trace-steps -s" "trace-pipeline --table" "trace-report -k 3"; do
		run $c --partial /dev/null
		assert_failure 2
		assert_output --regexp "^${c%% *}: --partial leaves (--[a-z0-9-]+, )*--[a-z0-9-]+ and --[a-z0-9-]+ to --merge; give them there\$"
	done
	# the one that cannot merge into a partial
	run trace-report --partial --merge /dev/null
	assert_failure 2
	assert_output "trace-report: --partial and --merge exclude each other"
	# the rule has one home
	run grep -l "from the partial results; do not give" "$BATS_TEST_DIRNAME"/../cmd/*.c
	assert_failure
}

@test "--step-regex: one message for a bad expression in trace-steps, trace-gaps, trace-diff and trace-report" {
	T="$BATS_TEST_TMPDIR"
	printf '' > "$T/e.nd"
	for p in trace-steps trace-gaps trace-report; do
		run "$p" -x '(' "$T/e.nd"
		assert_failure 2
		assert_output --regexp "^$p: invalid --step-regex '\\(': .+\$"
	done
	run trace-diff -x '(' "$T/e.nd" "$T/e.nd"
	assert_failure 2
	assert_output --regexp "^trace-diff: invalid --step-regex '\\(': .+\$"
	# the wording lives in nd_cli_regex only
	run grep -l 'invalid --step-regex' "$BATS_TEST_DIRNAME"/../cmd/*.c "$BATS_TEST_DIRNAME"/../lib/*/*.c
	assert_failure 1
}
