#!/usr/bin/env bats
# trace-report: golden reports of hand-made streams, determinism, options,
# and on generated and real profiles every section present with numbers that
# agree with trace-topk / trace-steps / trace-gaps / trace-regions / trace-mem
# (tests/tools/report_check.py).

load helpers

GEN="$BATS_TEST_DIRNAME/tools/report_gen.py"
CHECK="$BATS_TEST_DIRNAME/tools/report_check.py"
GOLDEN="$BATS_TEST_DIRNAME/golden"

SECTIONS='^## 1 Source and provenance$
^## 2 Trace quality$
^## 3 Steps$
^## 4 Time breakdown per device$
^## 5 Top ops by exclusive time$
^## 6 Idle gaps$
^## 7 Regions$
^## 8 Memory$
^## 9 Findings$'

# every section heading, once, in order
has_sections() {
	got=$(grep -E '^## [0-9] ' "$1")
	want=$(printf '%s\n' "$SECTIONS" | sed 's/^\^//; s/\$$//')
	[ "$got" = "$want" ] || { echo "sections of $1:"; echo "$got"; return 1; }
}

setup() {
	T="$BATS_TEST_TMPDIR"
}

@test "golden: one rank, hand-made stream" {
	"$PY" "$GEN" > "$T/h.ndjson"
	run trace-report "$T/h.ndjson"
	assert_success
	diff -u "$GOLDEN/report-hand.md" <(printf '%s\n' "$output")
}

@test "golden: two ranks, the straggler and per-rank breakdown" {
	"$PY" "$GEN" --ranks > "$T/h2.ndjson"
	run trace-report "$T/h2.ndjson"
	assert_success
	diff -u "$GOLDEN/report-ranks.md" <(printf '%s\n' "$output")
	assert_output --partial "### straggler"
	assert_output --partial "rank 1 is a straggler"
}

@test "hand-made stream: numbers agree with the analysis programs" {
	"$PY" "$GEN" --ranks > "$T/h2.ndjson"
	run "$PY" "$CHECK" "$ND_BIN" "$T/h2.ndjson"
	assert_success
	assert_output --regexp '^ok [0-9]+ checks$'
}

@test "deterministic: same bytes twice, from a file or a pipe; --stamp adds a line" {
	"$PY" "$GEN" --ranks > "$T/h.ndjson"
	trace-report "$T/h.ndjson" > "$T/a.md"
	trace-report < "$T/h.ndjson" > "$T/b.md"
	cmp "$T/a.md" "$T/b.md"
	trace-report --json "$T/h.ndjson" > "$T/a.json"
	trace-report --json "$T/h.ndjson" > "$T/b.json"
	cmp "$T/a.json" "$T/b.json"
	run trace-report --stamp "$T/h.ndjson"
	assert_output --regexp 'Generated [0-9]{4}-[0-9]{2}-[0-9]{2}T'
	run grep -c Generated "$T/a.md"
	assert_output 0
}

@test "-o writes the file; --top cuts tables and says so" {
	build_stream() { gen-stream -n 20000; }
	build_stream > "$T/s.ndjson"
	run trace-report -o "$T/r.md" -k 3 "$T/s.ndjson"
	assert_success
	assert_output ""
	has_sections "$T/r.md"
	run grep -c '^| 4 |' "$T/r.md"
	assert_output 0
	grep -q 'more rows not shown (--top 3)' "$T/r.md"
	run trace-report -k 0 "$T/s.ndjson"
	assert_output --partial '| 11 |'
}

@test "--threshold changes what fires; a bad one is a usage error" {
	"$PY" "$GEN" > "$T/h.ndjson"
	run trace-report "$T/h.ndjson"
	assert_output --partial "### dominant_op"
	run trace-report -t dominant_op=80 --threshold step_variance=50 "$T/h.ndjson"
	assert_success
	refute_output --partial "### dominant_op"
	refute_output --partial "### step_variance"
	# one rank: straggler cannot run, so no "no single bottleneck" verdict
	refute_output --partial "No single bottleneck dominates"
	assert_output --partial "No rule fired, but not every rule could run, so a bottleneck they measure is not ruled out: compute"
	assert_output --partial "Not run: straggler (one rank)."
	assert_output --partial "| dominant_op | one op's exclusive time, % of all exclusive time | 80 % | 73.9 % | no |"
	run trace-report -t comm_exposed=5 "$T/h.ndjson"
	assert_output --partial "communication is highly exposed: 9.8 % of step time, threshold 5 %"
	run trace-report -t nosuch=3 "$T/h.ndjson"
	assert_failure 2
	assert_output --partial "invalid value for --threshold"
	run trace-report -t comm_exposed=abc "$T/h.ndjson"
	assert_failure 2
	run trace-report --list-thresholds
	assert_success
	assert_line --index 0 --regexp $'^comm_exposed\t15\t'
	assert_equal "${#lines[@]}" 8
}

@test "--json: one versioned document with the Markdown's content" {
	"$PY" "$GEN" --ranks > "$T/h.ndjson"
	trace-report --json "$T/h.ndjson" > "$T/r.json"
	run "$PY" -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "ndtrace-report/1", d["schema"]
print(len(d["sources"]), d["steps"]["count"], d["steps"]["ranks"]["lag_max_rank"],
      sorted(f["rule"] for f in d["findings"]), d["gaps"]["count"])
' "$T/r.json"
	assert_success
	assert_output "2 5 1 ['dominant_op', 'step_variance', 'straggler'] 18"
	[ "$(wc -l < "$T/r.json")" -eq 1 ]
}

@test "generated XPlane (TPU and GPU): every section, numbers agree" {
	for kind in tpu gpu; do
		gen-xplane --kind $kind --seed 3 --events 20000 -o "$T/$kind.xplane.pb"
		xplane2ndjson "$T/$kind.xplane.pb" > "$T/$kind.ndjson"
		trace-report "$T/$kind.ndjson" > "$T/$kind.md"
		has_sections "$T/$kind.md"
		run "$PY" "$CHECK" "$ND_BIN" "$T/$kind.ndjson"
		assert_success
		assert_output --regexp '^ok [0-9]+ checks$'
	done
}

@test "empty input and a stream without steps still give every section" {
	run trace-report < /dev/null
	assert_success
	printf '%s\n' "$output" > "$T/e.md"
	has_sections "$T/e.md"
	assert_output --partial "The input is empty."
	printf '%s\n' '{"type":"span","ts_ns":0,"dur_ns":10,"name":"a","pid":1,"tid":1}' |
	    trace-report > "$T/n.md"
	has_sections "$T/n.md"
	grep -q '^No steps found' "$T/n.md"
}

@test "spans out of order: read again, from a pipe too; --unordered agrees" {
	printf '%s\n' \
	    '{"type":"span","ts_ns":100,"dur_ns":50,"name":"a","pid":1,"tid":1}' \
	    '{"type":"span","ts_ns":0,"dur_ns":120,"name":"b","pid":1,"tid":1}' > "$T/o.ndjson"
	run bash -c "cat '$T/o.ndjson' | trace-report"
	assert_success
	assert_output --partial "| 1 | b | 1 | 100 ns |"
	run trace-report --unordered "$T/o.ndjson"
	assert_success
	assert_output --partial "| 1 | b | 1 | 100 ns |"
}

@test "real fixtures: every report has every section" {
	need_fixtures
	i=0
	for f in "$FIXTURES"/chrome/*.json* "$FIXTURES"/xplane/*.pb "$FIXTURES"/torch-legacy/*.pt.trace.json.gz; do
		case "$f" in
		*.pb) xplane2ndjson "$f" > "$T/f.ndjson" 2>/dev/null ;;
		*) chrome2ndjson "$f" > "$T/f.ndjson" 2>/dev/null ;;
		esac
		# the sanitizer pass (slow) reads the Markdown of the files under
		# 400 KB; the JSON of every file
		if [ -z "${ND_ASAN:-}" ] || [ "$(wc -c < "$f")" -le 400000 ]; then
			trace-report -o "$T/f.md" "$T/f.ndjson" || fail "trace-report failed on $f"
			has_sections "$T/f.md" || fail "sections missing for $f"
		fi
		# the JSON too, for the evidence check of report-findings.bats
		trace-report --json -o "$T/$i.json" "$T/f.ndjson" || fail "--json failed on $f"
		echo "$f" > "$T/$i.name"
		i=$((i + 1))
	done
	run "$PY" "$BATS_TEST_DIRNAME/tools/findings_evidence.py" "$T" "$i"
	assert_success
}

@test "real fixtures: numbers agree with trace-topk/steps/gaps/regions/mem" {
	need_fixtures
	list="chrome/hta_alexnet.json.gz chrome/xprof_handwritten_trace.json
	    chrome/tracelens_h100_qwen.json.gz chrome/hta_sampled_rank-0.json.gz
	    xplane/tpu_inference_4core.xplane.pb xplane/tf_gpu_8gpu_worker.xplane.pb"
	# under the sanitizers (slow) two of them
	[ -z "${ND_ASAN:-}" ] ||
	    list="chrome/hta_alexnet.json.gz xplane/tpu_inference_4core.xplane.pb"
	for f in $list; do
		case "$f" in
		*.pb) xplane2ndjson "$FIXTURES/$f" > "$T/f.ndjson" 2>/dev/null ;;
		*) chrome2ndjson "$FIXTURES/$f" > "$T/f.ndjson" 2>/dev/null ;;
		esac
		run "$PY" "$CHECK" "$ND_BIN" "$T/f.ndjson"
		[ "$status" -eq 0 ] || fail "$f: $output"
	done
}

@test "real fixtures: eight DLRM ranks give the straggler, cross-checked" {
	need_fixtures
	for f in "$FIXTURES"/chrome/dlrm_8ranks/*.gz; do
		chrome2ndjson "$f" 2>/dev/null
	done > "$T/dlrm.ndjson"
	run trace-report "$T/dlrm.ndjson"
	assert_success
	assert_output --partial "Ranks: 1 step compared across ranks"
	assert_output --partial "| 7 | 1 |"
	run "$PY" "$CHECK" "$ND_BIN" "$T/dlrm.ndjson"
	assert_success
}

@test "real fixtures: memory peaks from XPlane allocator events" {
	need_fixtures
	xplane2ndjson "$FIXTURES/xplane/tpu_inference_4core.xplane.pb" > "$T/m.ndjson" 2>/dev/null
	run trace-report "$T/m.ndjson"
	assert_output --partial "| peak allocated |"
	assert_output --regexp '\| TPU:0 \| [0-9.]+ MiB \|'
}

@test "--html: one self-contained page with the sections and SVG charts" {
	"$PY" "$GEN" --ranks > "$T/h.ndjson"
	trace-report --html -o "$T/r.html" "$T/h.ndjson"
	# the summary's breakdown bar, steps, breakdown, strip, regions
	run grep -c '<svg' "$T/r.html"
	assert_output 5
	for i in 1 2 3 4 5 6 7 8 9; do
		grep -q "<h2 id=\"s$i\">$i " "$T/r.html" || fail "no section $i"
	done
	# nothing fetched: no links, imports or remote URLs (url(#id) is a
	# pattern of the page itself); one script, inline, the page's own
	run grep -Ei '<link|@import|src=|url\([^#]|https?://[^"]*"[^ ]' "$T/r.html"
	assert_failure
	run grep -o '<script[^>]*>' "$T/r.html"
	assert_output '<script id="nd-ui">'
	run grep -o 'https\?://[^"]*' "$T/r.html"
	refute_output --regexp 'https?://[^w]'
	# balanced tags
	run "$PY" -c '
import html.parser, sys
class P(html.parser.HTMLParser):
    def __init__(s):
        super().__init__(); s.st = []
    def handle_starttag(s, t, a):
        if t not in ("meta", "rect"): s.st.append(t)
    def handle_endtag(s, t):
        if t in ("meta", "rect"): return
        assert s.st and s.st[-1] == t, (t, s.st[-3:]); s.st.pop()
p = P(); p.feed(open(sys.argv[1]).read()); assert not p.st, p.st; print("ok")
' "$T/r.html"
	assert_output ok
	cmp "$T/r.html" <(trace-report --html "$T/h.ndjson")
}

# A hand-made stream for the timeline strip: four ProfilerStep windows on
# the host (1, 1.1, 1, 1.3 ms: step 2 is the steady step closest to the
# median), GPU:0 ops with gaps inside step 2 (150 us, 350 us), two narrower
# than a pixel (500 ns, 400 ns), and ops across the window's edges.
strip_stream() {
	local host='"pid":100,"tid":1,"process":"host","cat":"user_annotation"'
	local dev='"pid":1,"tid":7,"process":"/device:GPU:0","device":"GPU:0","cat":"kernel"'
	sp() { printf '{"type":"span","ts_ns":%s,"dur_ns":%s,"name":"%s",%s%s}\n' "$@"; }
	sp 0 1000000 'ProfilerStep#1' "$host" ''
	sp 1000000 1100000 'ProfilerStep#2' "$host" ''
	sp 2100000 1000000 'ProfilerStep#3' "$host" ''
	sp 3100000 1300000 'ProfilerStep#4' "$host" ''
	sp 100000 700000 k0 "$dev" ',"class":"compute"'
	sp 900000 150000 k1 "$dev" ',"class":"compute"'
	sp 1200000 300000 'nccl<AllReduce>' "$dev" ',"class":"communication"'
	sp 1500500 49500 k2a "$dev" ',"class":"compute"'
	sp 1550400 49600 k2b "$dev" ',"class":"compute"'
	sp 1600000 50000 'Memcpy DtoH' "$dev" ',"class":"memory"'
	sp 2000000 300000 k4 "$dev" ',"class":"compute"'
	sp 2400000 600000 k5 "$dev" ',"class":"compute"'
	sp 3200000 1100000 k6 "$dev" ''
}

# The gaps trace-gaps --level device reports in the windows of step $3 (of
# trace-steps -d), clipped, of at least one pixel (1/1000 of the longest
# window): what the strip must draw.
strip_gaps_expected() {
	trace-steps -d "$1" > "$T/st.json"
	trace-gaps --level device "$1" > "$T/gp.json"
	jq -n --slurpfile st "$T/st.json" --slurpfile gp "$T/gp.json" --argjson s "$2" '
	    ($st | map(select(.type == "step" and .step == $s))) as $w
	    | ($w | map(.dur_ns) | max) as $m
	    | [$w[] as $x | $gp[] | select(.type == "gap" and
	        .source == $x.source and .device == $x.device)
	      | ([.ts_ns, $x.ts_ns] | max) as $a
	      | ([.ts_ns + .dur_ns, $x.ts_ns + $x.dur_ns] | min) as $e
	      | select($e > $a and ($e - $a) * 1000 >= $m)] | length'
}

# The representative step from trace-steps: per number the longest window,
# the first (warmup) left out, the one closest to the nearest-rank median,
# the lower number on ties.
strip_rep_expected() {
	trace-steps "$1" | jq -s '
	    [.[] | select(.type == "step")] | group_by(.step)
	    | map({n: .[0].step, d: (map(.dur_ns) | max)}) | .[1:]
	    | (map(.d) | sort) as $s
	    | ($s[(($s | length) + 1) / 2 | floor - 1]) as $med
	    | sort_by([((.d - $med) | fabs), .n]) | .[0].n'
}

@test "--html timeline strip: exact op and gap rects for a hand-made stream" {
	strip_stream > "$T/s.ndjson"
	trace-report --html -o "$T/s.html" "$T/s.ndjson"
	run strip_rep_expected "$T/s.ndjson"
	assert_output 2
	run grep -c '<g class="strip">' "$T/s.html"
	assert_output 1
	grep -q 'aria-label="timeline of step 2"' "$T/s.html"
	# one pixel is 1.1 ms / 1000; lanes compute, communication, memory;
	# k2a and k2b (400 ns apart) are one piece
	run grep -o '<rect class="op" x="[^"]*" y="[^"]*" width="[^"]*"' "$T/s.html"
	assert_output '<rect class="op" x="10.00" y="18" width="45.45"
<rect class="op" x="465.00" y="18" width="90.45"
<rect class="op" x="919.09" y="18" width="90.91"
<rect class="op" x="191.82" y="28" width="272.73"
<rect class="op" x="555.45" y="38" width="45.45"'
	grep -q '<title>2 compute ops, 99.1 us busy; longest k2b (49.6 us)</title>' "$T/s.html"
	grep -q '<title>nccl&lt;AllReduce&gt;: 300.0 us</title>' "$T/s.html"
	run grep -o '<rect class="gap" x="[^"]*" y="[^"]*" width="[^"]*"' "$T/s.html"
	assert_output '<rect class="gap" x="55.45" y="18" width="136.36"
<rect class="gap" x="600.91" y="18" width="318.18"'
	grep -q '<title>idle 350.0 us at ts_ns 1650000; payload k4, cause other</title>' "$T/s.html"
	run grep -c 'class="gap-label"' "$T/s.html"
	assert_output 2
	run strip_gaps_expected "$T/s.ndjson" 2
	assert_output 2
	grep -q '2 gaps narrower than one pixel (1.1 us), 900 ns in all, not drawn' "$T/s.html"
	# Markdown unchanged by the chart
	trace-report "$T/s.ndjson" | grep -q '^## 6 Idle gaps$'
	cmp "$T/s.html" <(trace-report --html "$T/s.ndjson")
}

@test "--html timeline strip: one per device; gap rects agree with trace-gaps" {
	"$PY" "$GEN" --ranks > "$T/h2.ndjson"
	trace-report --html -o "$T/r.html" "$T/h2.ndjson"
	rep=$(strip_rep_expected "$T/h2.ndjson")
	grep -q "aria-label=\"timeline of step $rep\"" "$T/r.html"
	run grep -c '<g class="strip">' "$T/r.html"
	assert_output 2
	grep -q "rank 1 TPU:0: step $rep, ts_ns" "$T/r.html"
	run grep -c '<rect class="gap"' "$T/r.html"
	assert_output "$(strip_gaps_expected "$T/h2.ndjson" "$rep")"
	for kind in tpu gpu; do
		gen-xplane --kind $kind --seed 3 --events 20000 -o "$T/$kind.xplane.pb"
		xplane2ndjson "$T/$kind.xplane.pb" > "$T/$kind.ndjson"
		trace-report --html -o "$T/$kind.html" "$T/$kind.ndjson"
		rep=$(strip_rep_expected "$T/$kind.ndjson")
		grep -q "aria-label=\"timeline of step $rep\"" "$T/$kind.html" ||
		    fail "$kind: not step $rep"
		got=$(grep -c '<rect class="gap"' "$T/$kind.html" || true)
		want=$(strip_gaps_expected "$T/$kind.ndjson" "$rep")
		[ "$got" = "$want" ] || fail "$kind: $got gap rects, trace-gaps $want"
		[ "$(grep -c '<g class="strip">' "$T/$kind.html")" -ge 1 ] ||
		    fail "$kind: no strip"
	done
}

@test "--html timeline strip: bounded memory keeps the latest ops and says so" {
	gen-stream -n 200000 -d 1 > "$T/g.ndjson"
	trace-report --html -o "$T/g.html" "$T/g.ndjson"
	# the steady step closest to the median (13) lost ops to the cap; the
	# next closest whose ops are all kept is drawn
	run strip_rep_expected "$T/g.ndjson"
	assert_output 13
	grep -q '<figcaption>Timeline of step 17, ' "$T/g.html"
	grep -q 'The closest, step 13, lost ops to the cap of 65536 ops kept per device.' "$T/g.html"
	run grep -c '<g class="strip">' "$T/g.html"
	assert_output 1
	# at most about one rect a pixel in each lane
	[ "$(grep -c '<rect class="op"' "$T/g.html")" -le 4004 ]
	run grep -c '<rect class="gap"' "$T/g.html"
	assert_output "$(strip_gaps_expected "$T/g.ndjson" 17)"
}

@test "--html renders in headless Chromium: non-blank page with the headings" {
	[ -z "${ND_ASAN:-}" ] || skip "browser test runs in the normal build only"
	chromium_setup
	"$PY" "$GEN" --ranks > "$T/h.ndjson"
	trace-report --html -o "$T/r.html" "$T/h.ndjson"
	flags=$CHROME_FLAGS
	timeout 60 "$CHROME" $flags --window-size=1200,1600 \
	    --screenshot="$T/r.png" "file://$T/r.html" >/dev/null 2>&1 || true
	[ -s "$T/r.png" ] || fail "no screenshot"
	run "$PY" "$BATS_TEST_DIRNAME/tools/report_png.py" "$T/r.png"
	assert_success
	run timeout 60 "$CHROME" $flags --dump-dom "file://$T/r.html"
	for h in "1 Source and provenance" "3 Steps" "4 Time breakdown per device" \
	    "9 Findings"; do
		assert_output --partial "$h</h2>"
	done
	assert_output --partial "<svg"
	assert_output --partial '<g class="strip">'
	assert_output --partial "<figcaption>Timeline of step 2,"
}

@test "a trace-diff output renders as a comparison report" {
	"$PY" "$GEN" > "$T/a.ndjson"
	"$PY" "$GEN" --ranks > "$T/b.ndjson"
	# the median step grows 800 -> 900 us (+12.5 %, over the 5 % rule): a
	# regression, so exit 1 and a verdict naming that rule alone
	st=0
	trace-diff "$T/a.ndjson" "$T/b.ndjson" > "$T/d.ndjson" 2>/dev/null || st=$?
	[ "$st" = 1 ] || fail "trace-diff exit $st, want 1"
	run jq -c 'select(.type=="verdict") | [.status, .exit, [.fired[].rule]]' "$T/d.ndjson"
	assert_output '["fail",1,["step.median>+5%"]]'
	run trace-report -k 2 "$T/d.ndjson"
	assert_success
	assert_line --index 0 "# Comparison report"
	assert_output --partial "## 1 Verdict"
	assert_output --partial "## 2 Steps"
	assert_output --partial "| step.median | "
	assert_output --partial "## 4 Per-key exclusive time"
	run trace-report --json "$T/d.ndjson"
	assert_output --partial '"kind":"comparison","records":[{"type":"delta"'
	trace-report --html -o "$T/d.html" "$T/d.ndjson"
	grep -q '<h2 id="s1">1 Verdict</h2>' "$T/d.html"
	cmp <(trace-report "$T/d.ndjson") <(cat "$T/d.ndjson" | trace-report)
}

# --- roofline columns and memory attribution ---

# rf_span TS DUR NAME ARGS : a device op on an A100 (see trace-roofline.bats)
rf_span() {
	printf '{"type":"span","ts_ns":%s,"dur_ns":%s,"name":"%s","pid":1,"tid":1,"process":"/device:GPU:0","thread":"stream 7","device":"GPU:0","class":"compute","args":%s}\n' "$@"
}

rf_stream() {
	printf '{"type":"meta","schema":"ndtrace/1","source":"r.json","format":"chrome","origin_ns":0,"host":null,"rank":0,"producer":"hand 1"%s}\n' "${1:-}"
	rf_span 0 1000000 gemm_a '{"flops":200000000000,"bytes_accessed":100000000}'
	rf_span 1000000 1000000 add '{"flops":1000000000,"bytes_accessed":1200000000}'
	rf_span 2000000 3000000 gemm_a '{"flops":600000000000,"bytes_accessed":300000000}'
	rf_span 5000000 500000 copy '{"flops":0,"bytes_accessed":500000000}'
	rf_span 5500000 2000000 wait '{"x":1}'
}

# the figures both programs write, one row a line
rf_rows() {
	jq -c '{name, count, total_ns, flops_count, flops_ns, flops, bytes, tflops, gbps, intensity, device_name, peak_tflops, peak_gbps, pct_of_peak, ridge, bound, attainable_tflops, pct_of_roofline}'
}

@test "roofline columns: the same figures as trace-roofline on the same stream" {
	rf_stream ',"devices":{"GPU:0":"NVIDIA A100-SXM4-80GB"}' > "$T/r.ndjson"
	trace-report --json "$T/r.ndjson" > "$T/r.json"
	run diff <(jq -c '.ops.roofline.top[]' "$T/r.json" | rf_rows) \
	    <(trace-roofline "$T/r.ndjson" | jq -c 'select(.type=="roofline")' | rf_rows)
	assert_success
	run jq -c '.ops.roofline | del(.top)' "$T/r.json"
	assert_output "$(trace-roofline "$T/r.ndjson" | jq -c 'select(.type=="roofline_summary") | del(.type)')"
	# gemm_a: 200 TFLOP/s, 100 GB/s, 2000 FLOP/B, compute, 200/312 = 64.1 %
	trace-report "$T/r.ndjson" > "$T/r.md"
	run sed -n '/^### Roofline$/,/^## 6/p' "$T/r.md"
	assert_output "$(printf '%s\n' '### Roofline' '' \
	    '4 of 5 spans on device timelines (5.500 ms of 7.500 ms) carry flops; ops by time with flops, against 312 TFLOP/s and 2039 GB/s (ridge 153.0 FLOP/byte, NVIDIA A100-SXM4-80GB).' '' \
	    '| # | op | count | time | TFLOP/s | GB/s | FLOP/byte | bound | % of roofline |' \
	    '|---|---|---|---|---|---|---|---|---|' \
	    '| 1 | gemm\_a | 2 | 4.000 ms | 200.000 | 100.0 | 2000.00 | compute | 64.1% |' \
	    '| 2 | add | 1 | 1.000 ms | 1.000 | 1200.0 | 0.83 | memory | 58.9% |' \
	    '| 3 | copy | 1 | 500.0 us | 0.000 | 1000.0 | 0.00 | memory | 49.0% |' '' '## 6 Idle gaps')"
	# the percentages, independently
	run awk 'BEGIN { printf "%.1f %.1f %.1f\n", 200/312*100, 1200/2039*100, 1000/2039*100 }'
	assert_output "64.1 58.9 49.0"
	# the HTML page shows the same table
	trace-report --html "$T/r.ndjson" > "$T/r.html"
	grep -q '<h3 id="s5-[0-9]*">Roofline</h3>' "$T/r.html"
	grep -q '<td>compute</td><td>64.1%</td>' "$T/r.html"
}

@test "roofline columns: --device and --peak-* as trace-roofline; absent without flops" {
	rf_stream > "$T/r.ndjson"
	# no device name: achieved figures only
	trace-report "$T/r.ndjson" > "$T/r.md"
	grep -qF '| 1 | gemm\_a | 2 | 4.000 ms | 200.000 | 100.0 | 2000.00 | - | - |' "$T/r.md"
	grep -qF 'no single device peak is known' "$T/r.md"
	for o in "--device|H100" "--peak-tflops|250|--peak-gbps|1000" "--device|TPU v4|--peak-gbps|500"; do
		IFS='|' read -r -a a <<< "$o"
		trace-report --json "${a[@]}" "$T/r.ndjson" | jq -c '.ops.roofline.top[]' | rf_rows > "$T/a"
		trace-roofline "${a[@]}" "$T/r.ndjson" | jq -c 'select(.type=="roofline")' | rf_rows > "$T/b"
		[ "$(wc -l < "$T/a")" -eq 3 ]
		grep -q '"bound":"' "$T/a"
		run diff "$T/a" "$T/b"
		assert_success
	done
	run jq -r '[.peak_tflops, .peak_gbps, .device_name] | @tsv' "$T/a"
	assert_output "$(printf '275\t500\tTPU v4\n275\t500\tTPU v4\n275\t500\tTPU v4')"
	run bash -c "trace-report --json --device H100 '$T/r.ndjson' | jq -r '.ops.roofline.top[0] | [.name, .peak_tflops, .peak_gbps, .bound] | @tsv'"
	assert_output "$(printf 'gemm_a\t989\t3350\tcompute')"
	# a stream without flops: no subsection, no JSON member
	"$PY" "$GEN" > "$T/h.ndjson"
	run grep -c '^### Roofline' <(trace-report "$T/h.ndjson")
	assert_output 0
	run bash -c "trace-report --json '$T/h.ndjson' | jq -c '.ops | has(\"roofline\")'"
	assert_output false
	run trace-report --device 'Acme X1' "$T/r.ndjson"
	assert_failure 2
	assert_output "trace-report: --device: 'Acme X1' is not in the peak table (see trace-roofline --print-peaks); give --peak-tflops and --peak-gbps"
	# with both peaks, an unknown name only names the device (as in trace-roofline)
	run bash -c "trace-report --json --device 'Acme X1' --peak-tflops 100 --peak-gbps 1000 '$T/r.ndjson' | jq -r '.ops.roofline.top[0] | [.peak_tflops, .peak_gbps] | @tsv'"
	assert_output "$(printf '100\t1000')"
	run bash -c "trace-roofline --device 'Acme X1' --peak-tflops 100 --peak-gbps 1000 '$T/r.ndjson' | jq -r 'select(.row==1) | [.peak_tflops, .peak_gbps] | @tsv'"
	assert_output "$(printf '100\t1000')"
	run trace-report --peak-gbps -3 "$T/r.ndjson"
	assert_failure 2
	assert_output "trace-report: invalid value for --peak-gbps: '-3'"
}

# Kineto memory samples on the CPU thread of the ops that allocate:
#   aten::linear [0,100) scope model/fc1 > aten::empty [10,30) scope
#   model/fc1; aten::relu [200,260) scope model/act.
#   samples: 15 -> 1000 (in aten::empty), 40 -> 3000 (aten::linear only),
#   220 -> 2500 (aten::relu).  Peak 3000 at 40: op aten::linear, model/fc1.
mem_stream() {
	printf '{"type":"meta","schema":"ndtrace/1","source":"m.json","format":"chrome","origin_ns":0,"host":null,"rank":0,"producer":"hand 1"}\n'
	printf '{"type":"span","ts_ns":0,"dur_ns":100,"name":"aten::linear","pid":1,"tid":1,"cat":"cpu_op","scope":"model/fc1","step":3}\n'
	printf '{"type":"span","ts_ns":10,"dur_ns":20,"name":"aten::empty","pid":1,"tid":1,"cat":"cpu_op","scope":"model/fc1","step":3}\n'
	printf '{"type":"instant","ts_ns":15,"name":"[memory]","pid":1,"tid":1,"args":{"Total Allocated":1000,"Total Reserved":4096,"Bytes":1000,"Device Type":1,"Device Id":0}}\n'
	printf '{"type":"instant","ts_ns":40,"name":"[memory]","pid":1,"tid":1,"args":{"Total Allocated":3000,"Total Reserved":4096,"Bytes":2000,"Device Type":1,"Device Id":0}}\n'
	printf '{"type":"span","ts_ns":200,"dur_ns":60,"name":"aten::relu","pid":1,"tid":1,"cat":"cpu_op","scope":"model/act","step":3}\n'
	printf '{"type":"instant","ts_ns":220,"name":"[memory]","pid":1,"tid":1,"args":{"Total Allocated":2500,"Total Reserved":4096,"Bytes":-500,"Device Type":1,"Device Id":0}}\n'
}

@test "memory section: the peak attributed to the op and scope running at it" {
	mem_stream > "$T/m.ndjson"
	run bash -c "trace-report --json '$T/m.ndjson' | jq -c '.memory[] | [.device, .ts_ns, .allocated_bytes, .step, .op, .scope]'"
	assert_output '["GPU:0",40,3000,3,"aten::linear","model/fc1"]'
	# the same as trace-mem's mem_peak
	run bash -c "trace-mem '$T/m.ndjson' | jq -c 'select(.type==\"mem_peak\") | [.device, .ts_ns, .allocated_bytes, .step, .op, .scope]'"
	assert_output '["GPU:0",40,3000,3,"aten::linear","model/fc1"]'
	trace-report "$T/m.ndjson" > "$T/m.md"
	grep -qxF '| source | device | peak allocated | reserved | at ts_ns | step | op | scope |' "$T/m.md"
	grep -qxF '| m.json | GPU:0 | 0.0 MiB | 0.0 MiB | 40 | 3 | aten::linear | model/fc1 |' "$T/m.md"
}

@test "real fixtures: memory peak attribution and roofline agree with trace-mem and trace-roofline" {
	need_fixtures
	chrome2ndjson "$FIXTURES/chrome/tracelens_h100_qwen.json.gz" > "$T/q.ndjson"
	run diff <(trace-report --json "$T/q.ndjson" | jq -c '.memory[] | [.source, .device, .ts_ns, .allocated_bytes, .reserved_bytes, .step, .op, .scope]') \
	    <(trace-mem "$T/q.ndjson" | jq -c 'select(.type=="mem_peak") | [.source, .device, .ts_ns, .allocated_bytes, .reserved_bytes, .step, .op, .scope]')
	assert_success
	# the GPU peak happens inside an op of a named module
	run bash -c "trace-report --json '$T/q.ndjson' | jq -r '.memory[] | select(.device==\"GPU:0\") | [.op, .scope] | @tsv'"
	assert_output "$(printf 'aten::mul\tQwen2Model_0/Qwen2DecoderLayer_23/Qwen2MLP_23')"
	xplane2ndjson "$FIXTURES/xplane/tpu_inference_4core.xplane.pb" > "$T/t.ndjson"
	run diff <(trace-report --json --device 'TPU v4' "$T/t.ndjson" | jq -c '.ops.roofline.top[]' | rf_rows) \
	    <(trace-roofline -k 10 --device 'TPU v4' "$T/t.ndjson" | jq -c 'select(.type=="roofline")' | rf_rows)
	assert_success
	run bash -c "trace-report --json --device 'TPU v4' '$T/t.ndjson' | jq -c '.ops.roofline | [.flops_spans, .rows, .shown, (.top | length)]'"
	assert_output '[6430,18,10,10]'
}
