#!/usr/bin/env bats
# trace-report --partial / --merge: the merge of partial results is byte
# for byte the report of one reading of every input, in order.

load helpers

setup_file() {
	local d=$BATS_FILE_TMPDIR i=0 f
	for f in "$FIXTURES"/chrome/dlrm_8ranks/*.gz; do
		chrome2ndjson "$f" > "$d/r$i.ndjson" 2>/dev/null
		i=$((i + 1))
	done
	xplane2ndjson "$FIXTURES/xplane/tpu_inference_4core.xplane.pb" > "$d/tpu.ndjson" 2>/dev/null
	xplane2ndjson "$FIXTURES/xplane/tf_gpu_8gpu_worker.xplane.pb" > "$d/tfg.ndjson" 2>/dev/null
	xplane2ndjson "$FIXTURES/xplane/rocm_jax_conv_8gpu.xplane.pb" > "$d/jax.ndjson" 2>/dev/null
	gen-stream -R -n 20000 -s 3 > "$d/g1.ndjson"
	gen-stream -R -n 20000 -s 4 -d 2 > "$d/g2.ndjson"
	: > "$d/empty.ndjson"
}

setup() {
	D=$BATS_FILE_TMPDIR
	cd "$D"
}

# same OPTS -- GROUP...: each GROUP (files joined by commas) becomes a
# partial (with POPTS, collection options); the merge of the partials with
# OPTS must equal trace-report POPTS OPTS over every file, byte for byte.
same() {
	local opts=$1 popts=$2 all="" parts="" k=0 g
	shift 2
	for g in "$@"; do
		trace-report --partial $popts ${g//,/ } > "p$k.$BATS_TEST_NUMBER" || return 1
		all="$all ${g//,/ }"
		parts="$parts p$k.$BATS_TEST_NUMBER"
		k=$((k + 1))
	done
	trace-report $popts $opts $all > single.out || return 1
	trace-report --merge $opts $parts > merged.out || return 1
	cmp single.out merged.out
}

@test "DLRM ranks: Markdown and JSON merged byte for byte, partials of one to three sources" {
	same "" "" r0.ndjson,r1.ndjson r2.ndjson r3.ndjson,r4.ndjson,r5.ndjson r6.ndjson,r7.ndjson
	same "--json -w 0 --drop-last -k 3" "" r0.ndjson,r1.ndjson r2.ndjson r3.ndjson,r4.ndjson,r5.ndjson r6.ndjson,r7.ndjson
	same "-t dominant_op=5 --warmup 2" "" r0.ndjson r1.ndjson,r2.ndjson
	# the page: its timeline strip keeps the first devices of the inputs
	same "--html" "--html" r0.ndjson,r1.ndjson r2.ndjson r3.ndjson,r4.ndjson,r5.ndjson r6.ndjson,r7.ndjson
	grep -q '<g class="strip"' merged.out
	# a single source
	same "--json" "" r5.ndjson
	# an empty input between partials keeps the sources' numbers
	same "--json" "" r0.ndjson,empty.ndjson r1.ndjson
	# the figures: every source, its spans, counted apart with jq
	run jq -r '[(.sources | length), ([.sources[].spans] | add)] | @tsv' merged.out
	assert_success
	want=$(cat r0.ndjson r1.ndjson | jq -c 'select(.type == "span" and .dur_ns != null)' | wc -l)
	assert_output "3	$want"
}

@test "XPlane TPU, TF GPU, JAX without a step marker, and a mix of Kineto and XPlane" {
	same "--json" "" tpu.ndjson
	same "--json" "" jax.ndjson
	same "--json -k 0" "" tpu.ndjson jax.ndjson,r0.ndjson tfg.ndjson
	same "" "" tpu.ndjson jax.ndjson,r0.ndjson tfg.ndjson
	# spans out of order: the partial is of the second reading
	(head -n 1 r0.ndjson; sed '1d;$d' r0.ndjson | tac; tail -n 1 r0.ndjson) > rev.ndjson
	same "--json" "" rev.ndjson r1.ndjson
	# a multi-source file, and stdin
	cat r0.ndjson r1.ndjson > cat.ndjson
	same "--json" "" cat.ndjson r2.ndjson
	trace-report --partial < r3.ndjson > stdin.part
	trace-report < r3.ndjson > single.out
	trace-report --merge < stdin.part > merged.out
	cmp single.out merged.out
}

@test "gen-stream ranks, --step-regex and roofline peaks as collection options" {
	same "" "" g1.ndjson g2.ndjson
	same "--json" "-x ^reduce" g1.ndjson g2.ndjson
	same "--json" "--device A100 -p 100 --peak-gbps 900" tpu.ndjson g1.ndjson
	run jq -r '.steps.count' merged.out
	assert_output "$(trace-report --json tpu.ndjson g1.ndjson | jq -r '.steps.count')"
	run bash -c "head -n 1 p0.$BATS_TEST_NUMBER | jq -r '[.type, .version, .report, .collect, .sources] | @tsv'"
	assert_output "report_partial	2	2	--device 'A100' --peak-tflops 100 --peak-gbps 900	1"
}

@test "--html: ops alike but for their name are drawn in name order, whatever order the names came in" {
	# a merge reads the names of the strip device by device: the order of
	# ops that tie on class, start, end and length must not depend on it
	cat > tie.ndjson <<'EOF'
{"type":"meta","schema":"ndtrace/1","source":"tie.json","format":"chrome","origin_ns":0,"host":null,"rank":null,"producer":"hand"}
{"type":"span","ts_ns":0,"dur_ns":5000,"name":"zeta","pid":1,"tid":1,"process":"host","thread":"main"}
{"type":"span","ts_ns":1000,"dur_ns":2000,"name":"beta","pid":2,"tid":7,"process":"/device:GPU:0","thread":"stream 7","device":"GPU:0","kind":"device","class":"compute"}
{"type":"span","ts_ns":1000,"dur_ns":2000,"name":"alpha","pid":2,"tid":8,"process":"/device:GPU:0","thread":"stream 8","device":"GPU:0","kind":"device","class":"compute"}
{"type":"span","ts_ns":1000,"dur_ns":2000,"name":"zeta","pid":2,"tid":9,"process":"/device:GPU:0","thread":"stream 9","device":"GPU:0","kind":"device","class":"compute"}
EOF
	same "--html" "--html" tie.ndjson
	run grep -c '<title>3 compute ops, 2.0 us busy; longest alpha (2.0 us)</title>' merged.out
	assert_output 1
}

@test "--partial/--merge refuse: mixed or misplaced options, another format, a cut or malformed partial" {
	F="sh $BATS_TEST_DIRNAME/tools/frame-partial.sh"
	trace-report --partial r0.ndjson > a.part
	trace-report --partial -x 'Profiler.*' r1.ndjson > b.part
	run trace-report --merge a.part b.part
	assert_failure 2
	assert_output "trace-report: b.part:1: partial results made with --step-regex 'Profiler.*' cannot be merged with partial results made with no collection options"
	head -n -1 a.part | sed '1s/"report":2/"report":7/' | $F > c.part
	run trace-report --merge c.part
	assert_failure 2
	assert_output "trace-report: c.part:1: report_partial of another format (report 7, not 2): make the partial results again with this trace-report"
	sed '1s/"version":2/"version":3/' a.part > d.part
	run trace-report --merge d.part
	assert_failure 2
	assert_output "trace-report: d.part:1: report_partial of another format (version 3, not 2): make the partial results again with this trace-report"
	head -n 20 a.part > e.part
	run trace-report --merge a.part e.part
	assert_failure 2
	assert_output --partial "trace-report: e.part:1: partial results cut short: no partial_end after this header"
	n=$(grep -n '"type":"rp_gapmax"' a.part | cut -d: -f1)
	head -n -1 a.part | sed "${n}s/\"gap_max\":[0-9]*/\"gap_max\":\"x\"/" | $F > f.part
	run trace-report --merge f.part
	assert_failure 2
	assert_output "trace-report: f.part:$n: rp_gapmax record without a valid \"gap_max\""
	# a step of a device the partial does not have (it has 4: 0..3)
	trace-report --partial tpu.ndjson > t.part
	n=$(grep -n '"type":"step_dev"' t.part | head -n 1 | cut -d: -f1)
	run grep -c '"type":"rp_dev"' t.part
	assert_output 4
	head -n -1 t.part | sed "${n}s/\"dev\":[0-9]*/\"dev\":4/" | $F > g.part
	run trace-report --merge g.part
	assert_failure 2
	assert_output "trace-report: g.part:$n: step_dev record without a valid \"dev\""
	run trace-report --merge --html a.part
	assert_failure 2
	assert_output "trace-report: a.part:1: partial results made without --html: --merge --html needs partials of --partial --html (they keep the timeline strip)"
	run trace-report --merge --device A100 a.part
	assert_failure 2
	assert_output "trace-report: --merge takes --step-regex, --unordered, --device, --peak-tflops and --peak-gbps from the partial results; do not give them again"
	run trace-report --partial -w 2 r0.ndjson
	assert_failure 2
	assert_output "trace-report: --partial leaves --top, --threshold, --warmup, --drop-last, --json, --stamp and --list-thresholds to --merge; give them there"
	run trace-report --partial --merge a.part
	assert_failure 2
	assert_output "trace-report: --partial and --merge exclude each other"
	run trace-report --merge r0.ndjson
	assert_failure 2
	assert_output "trace-report: r0.ndjson:2: --merge reads the output of trace-report --partial, not span records"
}
