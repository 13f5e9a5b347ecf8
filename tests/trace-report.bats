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
	assert_output --partial "No single bottleneck dominates: compute"
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

@test "spans out of order: an error on a pipe without --unordered" {
	printf '%s\n' \
	    '{"type":"span","ts_ns":100,"dur_ns":50,"name":"a","pid":1,"tid":1}' \
	    '{"type":"span","ts_ns":0,"dur_ns":120,"name":"b","pid":1,"tid":1}' > "$T/o.ndjson"
	run bash -c "cat '$T/o.ndjson' | trace-report"
	assert_failure 2
	assert_output --partial "--unordered"
	run trace-report --unordered "$T/o.ndjson"
	assert_success
	assert_output --partial "| 1 | b | 1 | 100 ns |"
}

@test "real fixtures: every report has every section" {
	need_fixtures
	for f in "$FIXTURES"/chrome/*.json* "$FIXTURES"/xplane/*.pb; do
		case "$f" in
		*.pb) xplane2ndjson "$f" > "$T/f.ndjson" 2>/dev/null ;;
		*) chrome2ndjson "$f" > "$T/f.ndjson" 2>/dev/null ;;
		esac
		trace-report -o "$T/f.md" "$T/f.ndjson" || fail "trace-report failed on $f"
		has_sections "$T/f.md" || fail "sections missing for $f"
	done
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
	assert_output --partial "Ranks: 1 steps compared across ranks"
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
	run grep -c '<svg' "$T/r.html"
	assert_output 3
	for i in 1 2 3 4 5 6 7 8 9; do
		grep -q "<h2 id=\"s$i\">$i " "$T/r.html" || fail "no section $i"
	done
	# nothing fetched: no scripts, links, imports or remote URLs
	run grep -Ei '<script|<link|@import|src=|url\(|https?://[^"]*"[^ ]' "$T/r.html"
	assert_failure
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

# Debian's chromium; installed here when absent and we are root.
chromium_bin() {
	for c in chromium chromium-browser google-chrome; do
		command -v $c && return 0
	done
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium \
		    >/dev/null 2>&1 && command -v chromium && return 0
	fi
	return 1
}

@test "--html renders in headless Chromium: non-blank page with the headings" {
	[ -z "${ND_ASAN:-}" ] || skip "browser test runs in the normal build only"
	CHROME=$(chromium_bin) || skip "no chromium and cannot install it (apt-get as root)"
	"$PY" "$GEN" --ranks > "$T/h.ndjson"
	trace-report --html -o "$T/r.html" "$T/h.ndjson"
	flags="--headless --no-sandbox --disable-gpu --disable-background-networking
	    --disable-component-update --disable-sync --no-first-run
	    --user-data-dir=$(mktemp -d)"
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
}

@test "a trace-diff output renders as a comparison report" {
	command -v trace-diff >/dev/null || skip "no trace-diff yet"
	"$PY" "$GEN" > "$T/a.ndjson"
	"$PY" "$GEN" --ranks > "$T/b.ndjson"
	trace-diff "$T/a.ndjson" "$T/b.ndjson" > "$T/d.ndjson" || true
	grep -q '"type":"verdict"' "$T/d.ndjson" || skip "trace-diff wrote no verdict"
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
