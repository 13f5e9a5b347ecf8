#!/usr/bin/env bats
# trace-report's headline figures worked out by hand on two small streams
# (the arithmetic is in the comments; definitions from trace-report(1),
# trace-steps(1) BREAKDOWN and trace-gaps(1)), so the numbers are checked
# against something other than the program's own output (the goldens of
# trace-report.bats) or the library it shares with the other programs
# (tests/tools/report_check.py).
#
# Then what keeps the suite honest in a fresh clone: the vendored fixtures
# are intact, nothing reads a fixtures directory outside the tree, no test
# skips for a missing file or program, and every program takes the empty
# input (once a fuzz artefact at the top of the tree) without a crash.

load helpers
bats_require_minimum_version 1.5.0

setup() {
	T="$BATS_TEST_TMPDIR"
	TOP="$BATS_TEST_DIRNAME/.."
}

# jq -c FILTER on a report's JSON, compared with the expected text
json_is() { # file filter expected
	run jq -c "$2" "$1"
	assert_success
	assert_output "$3"
}

# |value - want| < 1e-9: a finding's value is a double
value_is() { # file rule want-expression
	run jq -e --arg r "$2" "(.thresholds[] | select(.rule == \$r) | .value) - ($3) | fabs < 1e-9" "$1"
	assert_success
}

# ---------- stream 1: one GPU, PyTorch step markers, a host span ----------
#
# All times in us (the stream has ns: x1000).  Host (pid 1 tid 1):
# ProfilerStep#1 [0,1000), #2 [1000,2000), #3 [2000,3200); aten::copy_
# (cpu_op, a host activity span) [1750,1850).  GPU:0, stream 7: gemm
# [100,900), [1000,1400), [2000,2500); Memcpy [1650,1700).  Stream 8:
# nccl:all_reduce [1300,1600), [2600,2800).
stream1() {
	cat <<-'E'
	{"type":"meta","schema":"ndtrace/1","source":"hand1.json","format":"chrome","origin_ns":0,"host":"h1","rank":null,"producer":"hand"}
	{"type":"span","ts_ns":0,"dur_ns":1000000,"name":"ProfilerStep#1","pid":1,"tid":1}
	{"type":"span","ts_ns":1000000,"dur_ns":1000000,"name":"ProfilerStep#2","pid":1,"tid":1}
	{"type":"span","ts_ns":1750000,"dur_ns":100000,"name":"aten::copy_","pid":1,"tid":1,"cat":"cpu_op"}
	{"type":"span","ts_ns":2000000,"dur_ns":1200000,"name":"ProfilerStep#3","pid":1,"tid":1}
	{"type":"span","ts_ns":100000,"dur_ns":800000,"name":"gemm","pid":0,"tid":7,"device":"GPU:0","cat":"kernel","class":"compute","family":"matmul"}
	{"type":"span","ts_ns":1000000,"dur_ns":400000,"name":"gemm","pid":0,"tid":7,"device":"GPU:0","cat":"kernel","class":"compute","family":"matmul"}
	{"type":"span","ts_ns":1650000,"dur_ns":50000,"name":"Memcpy DtoD","pid":0,"tid":7,"device":"GPU:0","cat":"gpu_memcpy","class":"memory","family":"copy"}
	{"type":"span","ts_ns":2000000,"dur_ns":500000,"name":"gemm","pid":0,"tid":7,"device":"GPU:0","cat":"kernel","class":"compute","family":"matmul"}
	{"type":"span","ts_ns":1300000,"dur_ns":300000,"name":"nccl:all_reduce","pid":0,"tid":8,"device":"GPU:0","cat":"kernel","class":"communication","family":"all-reduce"}
	{"type":"span","ts_ns":2600000,"dur_ns":200000,"name":"nccl:all_reduce","pid":0,"tid":8,"device":"GPU:0","cat":"kernel","class":"communication","family":"all-reduce"}
	E
}

@test "hand-worked stream 1: step time, breakdown, top op, idle gaps, findings" {
	stream1 > "$T/s1.ndjson"
	trace-check "$T/s1.ndjson"
	trace-report --json "$T/s1.ndjson" > "$T/r.json"

	# Steps: 1000, 1000, 1200 us.  All: mean 3200/3 = 1066.667 -> 1066667 ns;
	# nearest-rank median ceil(.5*3) = 2nd = 1000, p90 ceil(.9*3) = 3rd =
	# 1200; population sd: deviations -66.667, -66.667, +133.333, squares
	# sum 26666.67, /3 = 8888.89, sqrt = 94.281 us.  Steady (warmup 1):
	# steps 2 and 3: mean 1100, median ceil(.5*2) = 1st = 1000, p90 2nd =
	# 1200, sd sqrt((100^2 + 100^2)/2) = 100, total 2200.
	json_is "$T/r.json" '.steps | [.count, .marker, .first_step, .last_step]' '[3,"profiler_step",2,3]'
	json_is "$T/r.json" '.steps.all | [.mean_ns, .median_ns, .p90_ns, .stddev_ns, .total_ns]' \
	    '[1066667,1000000,1200000,94281,3200000]'
	json_is "$T/r.json" '.steps.steady | [.count, .mean_ns, .median_ns, .p90_ns, .min_ns, .max_ns, .stddev_ns, .total_ns]' \
	    '[2,1100000,1000000,1200000,1000000,1200000,100000,2200000]'

	# Breakdown of the steady steps, each us to the first that holds:
	# step 2 [1000,2000): compute gemm [1000,1400) 400; exposed comm:
	# all_reduce [1300,1600) minus compute = [1400,1600) 200, overlap
	# [1300,1400) 100; memory [1650,1700) 50; host aten::copy_ [1750,1850)
	# 100; idle [1600,1650) + [1700,1750) + [1850,2000) = 50+50+150 = 250.
	# step 3 [2000,3200): compute [2000,2500) 500; comm [2600,2800) 200;
	# idle [2500,2600) + [2800,3200) = 100+400 = 500.
	# Sum: compute 900, comm 400, memory 50, host 100, idle 750, overlap
	# 100; 900+400+50+100+750 = 2200 = the steady total.
	json_is "$T/r.json" '.breakdown.devices[] | [.device, .dur_ns, .compute_ns, .communication_ns, .memory_ns, .host_ns, .idle_ns, .overlap_ns]' \
	    '["GPU:0",2200000,900000,400000,50000,100000,750000,100000]'
	json_is "$T/r.json" '.breakdown.step_window | [.dur_ns, .compute_ns, .communication_ns, .memory_ns, .host_ns, .idle_ns, .overlap_ns]' \
	    '[2200000,900000,400000,50000,100000,750000,100000]'

	# Top op by exclusive time (device ops, nothing nested): gemm 800+400+
	# 500 = 1700 of 1700+500+50 = 2250, share 0.7556; mean 1700/3 = 566.7.
	json_is "$T/r.json" '.ops | [.timelines, .spans, .self_ns]' '["device",6,2250000]'
	json_is "$T/r.json" '.ops.ops[0] | [.name, .count, .self_ns, .total_ns, .max_ns]' '["gemm",3,1700000,1700000,800000]'
	json_is "$T/r.json" '.ops.ops | map([.name, .self_ns])' \
	    '[["gemm",1700000],["nccl:all_reduce",500000],["Memcpy DtoD",50000]]'
	json_is "$T/r.json" '.ops.collectives | map([.family, .count, .self_ns])' '[["all-reduce",2,500000]]'

	# Idle gaps on GPU:0 between its first op (100) and last (2800):
	# [900,1000) 100, [1600,1650) 50, [1700,2000) 300, [2500,2600) 100;
	# 4 gaps, 550 in all, largest 300.  All over 30 us (not kernel_wait),
	# no launch correlation (not host_wait): the one before all_reduce is
	# collective_wait (100), the others other (450).
	json_is "$T/r.json" '.gaps | [.count, .total_ns, .max_ns]' '[4,550000,300000]'
	json_is "$T/r.json" '.gaps.causes | map([.cause, .count, .dur_ns])' \
	    '[["other",3,450000],["collective_wait",1,100000]]'

	# Findings, % of the steady 2200: comm_exposed 400/2200 = 18.18 (>= 15,
	# fires), device_idle 750/2200 = 34.09 (>= 10, fires), host_bound
	# 100/2200 = 4.55, memory_ops 50/2200 = 2.27, step_variance 100/1100 =
	# 9.09 (< 10), dominant_op 1700/2250 = 75.56 (>= 30, fires), launch_gaps
	# 0 of 550, straggler: one source, none.
	value_is "$T/r.json" comm_exposed '400 / 2200 * 100'
	value_is "$T/r.json" device_idle '750 / 2200 * 100'
	value_is "$T/r.json" host_bound '100 / 2200 * 100'
	value_is "$T/r.json" memory_ops '50 / 2200 * 100'
	value_is "$T/r.json" step_variance '100 / 1100 * 100'
	value_is "$T/r.json" dominant_op '1700 / 2250 * 100'
	value_is "$T/r.json" launch_gaps '0'
	json_is "$T/r.json" '[.thresholds[] | select(.rule == "straggler") | .value]' '[null]'
	# Ranked by the share of the window each explains: dominant_op the busy
	# time 2200-750-100 = 1350 times 1700/2250, 1020 = 46.36 %; device_idle
	# 750 = 34.09 %; comm_exposed 400 = 18.18 %.
	json_is "$T/r.json" '[.findings[].rule]' '["dominant_op","device_idle","comm_exposed"]'
	json_is "$T/r.json" '[.findings[].explains_ns]' '[1020000,750000,400000]'

	# the Markdown report prints the same figures, rounded
	run trace-report "$T/s1.ndjson"
	assert_success
	assert_line "3 steps, marked by profiler_step; steady state: 2 steps (2 to 3; warmup 1)."
	assert_line "| median | 1.000 ms | 1.000 ms |"
	assert_line "| GPU:0 | 2.200 ms | 40.9 % | 18.2 % | 4.5 % | 2.3 % | 4.5 % | 34.1 % | 38.6 % |"
	assert_line "| 1 | gemm | 3 | 1.700 ms | 75.6 % | 1.700 ms | 566.7 us | 800.0 us |"
	assert_line "Device idle: 4 gaps where no op runs on any line of a device (trace-gaps(1), device level), 550.0 us in total; the largest 300.0 us on GPU:0 at ts_ns 1700000."
	assert_line "one op dominates: gemm, a compute op, takes 75.6 % of exclusive time, threshold 30 %."
}

# ---------- stream 2: two TPU ranks, steps from the ops' step key ----------
#
# Two sources (rank 0, rank 1), same nonzero origin, one TPU each, one
# timeline.  Per step s = 1,2,3 at t0 = 200 (s-1) us: fusion.1 (compute,
# scope train/fwd) for c us, then all-reduce.1 (communication, scope
# train/grad_sync) until t0+150.  Rank 0: c = 100, 100, 100; rank 1: c =
# 100, 130, 140 (it computes longer, so it joins the collective late).
stream2() {
	for r in 0 1; do
		echo '{"type":"meta","schema":"ndtrace/1","source":"r'$r'.xplane.pb","format":"xplane","origin_ns":1000000000,"host":"w'$r'","rank":'$r',"producer":"hand"}'
		if [ $r = 0 ]; then cs="100 100 100"; else cs="100 130 140"; fi
		s=1
		for c in $cs; do
			t0=$(((s - 1) * 200))
			op='"pid":1,"tid":2,"process":"/device:TPU:0","thread":"XLA Ops","device":"TPU:0","step":'$s',"cat":"xla_op"'
			echo '{"type":"span","ts_ns":'$((t0 * 1000))',"dur_ns":'$((c * 1000))',"name":"fusion.1",'"$op"',"class":"compute","family":"fusion","scope":"train/fwd"}'
			echo '{"type":"span","ts_ns":'$(((t0 + c) * 1000))',"dur_ns":'$(((150 - c) * 1000))',"name":"all-reduce.1",'"$op"',"class":"communication","family":"all-reduce","scope":"train/grad_sync"}'
			s=$((s + 1))
		done
	done
}

@test "hand-worked stream 2: two ranks, straggler, exposed communication, regions" {
	stream2 > "$T/s2.ndjson"
	trace-check "$T/s2.ndjson"
	trace-report --json "$T/s2.ndjson" > "$T/r.json"

	# Steps from the ops' step key: a window runs from the first op to
	# the last, [t0, t0+150) on both ranks, so every step is 150 us; a step
	# number's time is its longest record: 150.  Steady: steps 2, 3.
	json_is "$T/r.json" '.steps | [.count, .marker, .first_step, .last_step]' '[3,"op_step",2,3]'
	json_is "$T/r.json" '.steps.steady | [.count, .mean_ns, .median_ns, .p90_ns, .stddev_ns, .total_ns]' \
	    '[2,150000,150000,150000,0,300000]'

	# Straggler: a rank is ready at end - wait (its communication time).
	# Step 1: both 150-50 = 100 (a tie: rank 0).  Step 2: rank 0 350-50 =
	# 300, rank 1 350-20 = 330.  Step 3: rank 0 550-50 = 500, rank 1
	# 550-10 = 540.  The median rank of two is the lower: lag 30, then 40.
	# Rank 1 is last in 2 steps, rank 0 in 1; largest lag 40 (step 3),
	# 40/150 = 26.67 % of the steady median step (>= 5: fires).
	json_is "$T/r.json" '.steps.ranks | [.steps_compared, .clock, .lag_max_ns, .lag_max_rank, .lag_max_step]' \
	    '[3,"absolute",40000,1,3]'
	json_is "$T/r.json" '.steps.ranks.per_rank | map([.rank, .straggler, .lag_max_ns])' '[[0,1,0],[1,2,40000]]'
	value_is "$T/r.json" straggler '40 / 150 * 100'

	# Breakdown, steady steps: rank 0: compute 100+100 = 200, comm 50+50 =
	# 100 of 300; rank 1: compute 130+140 = 270, comm 20+10 = 30 of 300; no
	# idle inside a window (ops are back to back).  All devices: 470 and
	# 130 of 600: comm_exposed 130/600 = 21.67 % (fires), device_idle 0.
	json_is "$T/r.json" '.breakdown.devices | map([.device, .dur_ns, .compute_ns, .communication_ns, .idle_ns])' \
	    '[["rank 0 TPU:0",300000,200000,100000,0],["rank 1 TPU:0",300000,270000,30000,0]]'
	json_is "$T/r.json" '.breakdown.all_devices | [.dur_ns, .compute_ns, .communication_ns, .memory_ns, .host_ns, .idle_ns, .overlap_ns]' \
	    '[600000,470000,130000,0,0,0,0]'
	value_is "$T/r.json" comm_exposed '130 / 600 * 100'
	value_is "$T/r.json" device_idle '0'
	value_is "$T/r.json" step_variance '0'

	# Top op: fusion.1 = 3*100 + 100+130+140 = 670 of 670 + 230 (all-reduce:
	# 3*50 + 50+20+10) = 900: 74.44 % (fires); max 140.
	json_is "$T/r.json" '.ops.ops | map([.name, .count, .self_ns, .max_ns])' \
	    '[["fusion.1",6,670000,140000],["all-reduce.1",6,230000,50000]]'
	value_is "$T/r.json" dominant_op '670 / 900 * 100'

	# Gaps: on each rank [150,200) and [350,400): 4 gaps of 50 us = 200,
	# payload fusion.1 (compute, over 30 us): cause other.
	json_is "$T/r.json" '.gaps | [.count, .total_ns, .max_ns, (.causes | map([.cause, .count, .dur_ns]))]' \
	    '[4,200000,50000,[["other",4,200000]]]'
	json_is "$T/r.json" '.gaps.payloads | map([.payload, .count, .region])' '[["fusion.1",4,"train/fwd"]]'

	# Regions: train holds everything (900, nothing exactly there),
	# train/fwd 670, train/grad_sync 230.
	json_is "$T/r.json" '.regions.regions | map([.path, .count, .inclusive_ns, .exclusive_ns])' \
	    '[["train",12,900000,0],["train/fwd",6,670000,670000],["train/grad_sync",6,230000,230000]]'
	# Ranked: dominant_op 600 busy x 670/900 = 446.7 = 74.44 %, straggler
	# 26.67 %, comm_exposed 21.67 % (the straggler goes first anyway).
	json_is "$T/r.json" '[.findings[].rule]' '["dominant_op","straggler","comm_exposed"]'

	run trace-report "$T/s2.ndjson"
	assert_success
	assert_line "| all devices | 600.0 us | 78.3 % | 21.7 % | 0.0 % | 0.0 % | 0.0 % | 0.0 % | 0.0 % |"
	assert_line "Ranks: 3 steps compared across ranks (absolute clock); largest straggler lag 40.0 us (rank 1, step 3); largest spread of step time 0 ns."
	assert_line "| 1 | 2 | 40.0 us | 123.3 us |"
}

# ---------- a clone tests itself ----------

@test "the vendored fixtures are intact and documented" {
	cd "$FIXTURES"
	run sha256sum --quiet -c SHA256SUMS
	assert_success
	assert_output ""
	# every profile has a digest, and every digest a profile
	find . -type f ! -path './licenses/*' ! -name SHA256SUMS ! -name README.md |
	    sed 's|^\./||' | sort > "$T/files"
	awk '{ print $2 }' SHA256SUMS | sort > "$T/sums"
	diff -u "$T/sums" "$T/files"
	# and its provenance in the README (by name, by `stem` for the
	# torch-legacy sets, the DLRM ranks as worker*), and the licences
	while read -r f; do
		b=${f##*/}
		stem=${b%%.*}
		grep -qF -e "$b" -e "\`$stem\`" -e "${stem/worker[0-9]/worker*}" README.md ||
		    fail "$f is not in tests/fixtures/README.md"
	done < "$T/files"
	for l in $(grep -o 'licenses/[A-Za-z0-9.-]*LICENSE' README.md | sort -u); do
		[ -s "$l" ] || fail "README names $l, which is missing"
	done
}

@test "tests, fuzz seeds, bench, examples and the Makefile read no fixtures outside the tree" {
	cd "$TOP"
	run grep -rn --exclude=report-hand.bats '\.\./shared' tests fuzz bench examples Makefile
	assert_failure 1
	assert_output ""
	# the default, with no ND_FIXTURES, is the tree's own copy
	run env -u ND_FIXTURES bash -c "cd '$TOP/tests' && BATS_TEST_DIRNAME='$TOP/tests' && load() { :; }; . ./helpers.bash; echo \"\$FIXTURES\""
	assert_output "$TOP/tests/fixtures"
}

@test "no test skips for a missing file or program" {
	cd "$TOP/tests"
	# The only skips allowed are about the build under test, not about
	# what is installed: each names ND_ASAN on its line.
	run bash -c "grep -nE '(^|[[:space:]|&;{])skip([[:space:]]|$)' *.bats |
	    grep -v '^[^:]*:[0-9]*:[[:space:]]*#' | grep -v '@test' | grep -v 'ND_ASAN'"
	assert_output ""
	# need_fixtures fails rather than skips when the fixtures are missing
	printf '%s\n' "load '$BATS_TEST_DIRNAME/helpers'" '@test "f" {' '	need_fixtures' '}' > "$T/nf.bats"
	ND_FIXTURES="$T/none" run bats --tap "$T/nf.bats"
	assert_failure 1
	assert_line "not ok 1 f"
	assert_output --partial "no fixtures in $T/none (ND_FIXTURES=$T/none)"
	refute_output --partial "# skip"
	ND_FIXTURES="$FIXTURES" run bats --tap "$T/nf.bats"
	assert_success
	assert_line "ok 1 f"
}

# ---------- the empty input (item 9: a zero-byte fuzz artefact) ----------

# Every program, as a file and on standard input, and every program of
# cmd/ is listed here: a new one must say what it does with nothing.
@test "empty input: every program gives its answer, no crash" {
	: > "$T/empty"
	ls "$TOP"/cmd/*.c | sed 's|.*/||; s|\.c$||' | sort > "$T/progs"
	printf '%s\n' chrome2ndjson ndjson2chrome trace-check trace-classify \
	    trace-context trace-diff trace-gaps trace-mem trace-pipeline \
	    trace-regions trace-report trace-roofline trace-steps trace-topk \
	    xplane2ndjson | sort > "$T/tested"
	diff -u "$T/tested" "$T/progs"

	# ingest programs: an error that says the input is empty, exit 2
	for in in "$T/empty" -; do
		name=$in
		[ "$in" = - ] && name="<stdin>"
		run xplane2ndjson "$in" < "$T/empty"
		assert_failure 2
		assert_output "xplane2ndjson: $name: byte 0: empty file (no XSpace in it)"
		run chrome2ndjson "$in" < "$T/empty"
		assert_failure 2
		assert_output "chrome2ndjson: $name: byte 1: empty input: not a Chrome trace"
		# trace-check: a stream has at least its records: exit 1
		run trace-check "$in" < "$T/empty"
		assert_failure 1
		assert_output "trace-check: empty input: no records"
		# every analysis warns on stderr that there was nothing (issue
		# 33, 13), and gives its answer of nothing on stdout
		nothing="no events: the input holds no records"
		# trace-context finds no match: exit 1 and nothing, as grep
		run --separate-stderr trace-context gemm "$in" < "$T/empty"
		assert_failure 1
		assert_output ""
		[ "$stderr" = "trace-context: $nothing" ]
		# filters that write records for what they read write nothing
		for p in trace-classify trace-gaps trace-steps trace-topk trace-mem "trace-regions --folded"; do
			run --separate-stderr $p "$in" < "$T/empty"
			assert_success
			assert_output ""
			[ "$stderr" = "${p%% *}: $nothing" ]
		done
		# no pipeline: no record, and one line on stderr that says why
		run --separate-stderr trace-pipeline "$in" < "$T/empty"
		assert_success
		assert_output ""
		[ "$stderr" = "trace-pipeline: $nothing
trace-pipeline: no forward/backward blocks found: no span name matches the rules; see --forward and --backward" ]
		# a Chrome document with no events
		run --separate-stderr ndjson2chrome "$in" < "$T/empty"
		assert_success
		assert_equal "$(printf '%s\n' "$output" | jq -c '[.traceEvents, .otherData.sources[0].origin_ns]')" '[[],0]'
		# summaries of nothing
		run --separate-stderr trace-roofline "$in" < "$T/empty"
		assert_success
		assert_equal "$(printf '%s\n' "$output" | jq -c '[.type, .spans, .total_ns, .rows]')" '["roofline_summary",0,0,0]'
		run --separate-stderr trace-topk --table "$in" < "$T/empty"
		assert_success
		assert_line "self time 0ns in 0 records"
		run --separate-stderr trace-report "$in" < "$T/empty"
		assert_success
		assert_line "The input is empty."
		[ "$stderr" = "trace-report: $nothing" ]
		trace-report --json "$in" < "$T/empty" > "$T/r.json" 2>/dev/null
		json_is "$T/r.json" '[.sources, .steps.count, .ops.spans, .gaps.count, .findings]' '[[],0,0,0,[]]'
	done
	# trace-diff of nothing against nothing: no metric, nothing fires
	run --separate-stderr trace-diff "$T/empty" "$T/empty"
	assert_success
	assert_line --partial '"type":"verdict","status":"pass","exit":0,"fired":[]'
}
