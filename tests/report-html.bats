#!/usr/bin/env bats
# trace-report --html: the summary, the table of contents, the charts' axes
# and labels, the timeline strip's host lane and profile window, pages
# without steps or without device ops, and the page rendered in headless
# Chromium (text boxes measured there). Checks: tests/tools/html_check.py.

load helpers

CHECK="$BATS_TEST_DIRNAME/tools/html_check.py"

# No step markers, no repeating span: GPU:0 ops (a long device name) from
# 100 us to 2.5 ms and host activity (cpu_op) around them, nested
# (aten::addmm in aten::linear), overlapping (aten::copy_, aten::to) and
# across the window's edges.
nosteps_stream() {
	local host='"pid":100,"tid":1,"process":"host","cat":"cpu_op"'
	local dev='"pid":1,"tid":7,"process":"/device:GPU:0","device":"/job:worker/replica:0/task:0/device:GPU:0","cat":"kernel"'
	sp() { printf '{"type":"span","ts_ns":%s,"dur_ns":%s,"name":"%s",%s%s}\n' "$@"; }
	sp 0 400000 'aten::linear' "$host" ''
	sp 50000 100000 'aten::addmm' "$host" ''
	sp 100000 200000 k0 "$dev" ',"class":"compute"'
	sp 500000 100000 k1 "$dev" ',"class":"compute"'
	sp 700000 300000 'ncclKernel_AllReduce' "$dev" ',"class":"communication"'
	sp 1000000 500000 'aten::copy_' "$host" ''
	sp 1200000 50000 'Memcpy HtoD (Pageable -> Device)' "$dev" ',"class":"memory"'
	sp 1400000 500000 'aten::to' "$host" ''
	sp 2000000 500000 k2 "$dev" ',"class":"compute"'
	sp 2450000 250000 'aten::item' "$host" ''
}

setup_file() {
	D="$BATS_FILE_TMPDIR"
	"$PY" "$BATS_TEST_DIRNAME/tools/report_gen.py" --ranks > "$D/h2.ndjson"
	nosteps_stream > "$D/ns.ndjson"
	grep '"cat":"cpu_op"' "$D/ns.ndjson" > "$D/ho.ndjson"
	xplane2ndjson "$FIXTURES/xplane/tpu_inference_4core.xplane.pb" \
	    > "$D/tpu.ndjson" 2>/dev/null
	for k in h2 ns ho tpu; do
		trace-report --html -o "$D/$k.html" "$D/$k.ndjson"
		trace-report --json "$D/$k.ndjson" > "$D/$k.json"
	done
}

setup() {
	D="$BATS_FILE_TMPDIR"
}

@test "--html summary: verdict, top findings with their time, the breakdown bar" {
	need_fixtures
	for k in h2 ns ho tpu; do
		run "$PY" "$CHECK" summary "$D/$k.html" "$D/$k.json"
		assert_success
		assert_output --regexp '^ok [0-9]+ checks$'
	done
	# two ranks: three findings, the largest first, linked to their sections
	run grep -c '^<li><a href="#s9-[0-9]"><strong>' "$D/h2.html"
	assert_output 3
	grep -q '<p><strong>Steps:</strong> 5 steps, marked by op_step; ' "$D/h2.html"
	grep -q 'over the steady steps (8.600 ms); per device in <a href="#s4">4 Time breakdown per device</a></figcaption>' "$D/h2.html"
	# no steps: the profile window, said so
	grep -q 'over the profile window of each device (first to last device op), as no steps were found (2.400 ms)' "$D/ns.html"
	# no device ops: no bar, no chart, and why
	grep -q '<p><strong>Time breakdown:</strong> none: no device ops.</p>' "$D/ho.html"
	run grep -c '<svg' "$D/ho.html"
	assert_output 0
}

@test "--html contents: every heading linked in order, ids unique, links resolve" {
	for k in h2 ns ho tpu; do
		run "$PY" "$CHECK" toc "$D/$k.html"
		assert_success
		assert_output --regexp '^ok [0-9]+ checks$'
	done
	grep -q '<li><a href="#s5-1">Ops</a></li>' "$D/h2.html"
	grep -q '<li><a href="#s9">9 Findings</a>' "$D/h2.html"
	# a comparison report (a trace-diff output): contents, no summary
	"$PY" "$BATS_TEST_DIRNAME/tools/report_gen.py" > "$D/a.ndjson"
	trace-diff "$D/a.ndjson" "$D/h2.ndjson" > "$D/d.ndjson" || true
	trace-report --html -o "$D/d.html" "$D/d.ndjson"
	run "$PY" "$CHECK" toc "$D/d.html"
	assert_success
	grep -q '<li><a href="#s1">1 Verdict</a></li>' "$D/d.html"
	run grep -c 'id="summary"' "$D/d.html"
	assert_output 0
}

@test "--html charts: SVGs well-formed, axes in human units, placed labels apart" {
	run "$PY" "$CHECK" svg "$D/h2.html"
	assert_success
	assert_line 'charts: where the time went, step times, time breakdown, timeline of step 2, regions'
	assert_line --regexp '^ok [0-9]+ checks$'
	run "$PY" "$CHECK" svg "$D/tpu.html"
	assert_success
	assert_line --regexp '^charts: where the time went, step times, time breakdown, timeline of step [0-9]+, regions$'
	# the step chart's time axis: 0 to 1.5 ms by 0.5 ms (max step 1.8 ms)
	run grep -o '<text x="58" y="[0-9.]*" font-size="10" text-anchor="end">[^<]*' "$D/h2.html"
	[ "$(printf '%s\n' "$output" | sed 's/.*>//' | tr '\n' ,)" = "0,0.5 ms,1.0 ms,1.5 ms," ]
	# every step's value and number where they fit; the full value on hover
	run grep -c '<text class="value"' "$D/h2.html"
	assert_output 4
	grep -q '<title>step 5: 1.800 ms (heavy)</title>' "$D/h2.html"
	# legend: idle parts hatched, apart from communication's colour
	grep -q 'fill="url(#nd-bd-host)"/><text x="[0-9]*" y="[0-9]*" font-size="11">device idle while the host works</text>' "$D/h2.html"
	grep -q 'fill="url(#nd-bd-idle)"/><text x="[0-9]*" y="[0-9]*" font-size="11">device idle, nothing runs</text>' "$D/h2.html"
	grep -q 'fill="#e15759"/><text x="[0-9]*" y="[0-9]*" font-size="11">exposed communication</text>' "$D/h2.html"
	grep -q 'fill="url(#nd-st-idle)" stroke="#555" stroke-width="0.5"/><text x="[0-9]*" y="[0-9]*" font-size="11">device idle (gap)</text>' "$D/h2.html"
}

@test "--html strip: host lane is the union of host activity; profile window without steps" {
	run "$PY" "$CHECK" hostlane "$D/ns.html" "$D/ns.ndjson"
	assert_success
	assert_output --regexp '^ok [0-9]+ checks$'
	# aten::addmm is inside aten::linear: one piece, clipped to the
	# window (k0's start at 100 us to k2's end): 400 - 100 = 300 us busy,
	# the longest named with its whole 400 us;
	# no count of spans (those inside another are not kept, so a count
	# would depend on the order of the stream)
	grep -q '<title>host activity, 300.0 us busy; longest aten::linear (400.0 us)</title>' "$D/ns.html"
	grep -q '<title>host activity, 900.0 us busy; longest aten::copy_ (500.0 us)</title>' "$D/ns.html"
	grep -q '<figcaption>Timeline of the profile window (no steady steps)' "$D/ns.html"
	# the breakdown's device label: its end kept, the whole on hover
	grep -q '<text x="0" y="15" font-size="12"><title>/job:worker/replica:0/task:0/device:GPU:0</title>…:0/task:0/device:GPU:0</text>' "$D/ns.html"
	# with steps: a host lane on each rank's row
	run grep -c '<rect class="host"' "$D/h2.html"
	assert_output 2
	run grep -c '<title>host activity, 60.0 us busy; longest data_loader.next (60.0 us)</title>' "$D/h2.html"
	assert_output 2
}

# Two GPU:0 ops 80 ms apart (the profile window) and N host spans of 100 ns
# inside it, 1 us apart.
manyhost_stream() {
	"$PY" -c '
import sys
n = int(sys.argv[1])
dev = "\"pid\":1,\"tid\":7,\"device\":\"GPU:0\",\"cat\":\"kernel\""
host = "\"pid\":100,\"tid\":1,\"cat\":\"cpu_op\""
sp = "{\"type\":\"span\",\"ts_ns\":%d,\"dur_ns\":%d,\"name\":\"%s\",%s}"
print(sp % (0, 1000, "k0", dev))
for i in range(n):
    print(sp % (i * 1000 + 10, 100, "h%d" % i, host))
print(sp % (80000000, 1000, "k1", dev))' "$1"
}

@test "--html strip: the host lane keeps the latest 65536 spans, and says when it is not drawn" {
	manyhost_stream 65536 > "$D/m1.ndjson"
	trace-report --html -o "$D/m1.html" "$D/m1.ndjson"
	# 1 us apart at 80 us a pixel: joined into pieces, each less than a
	# pixel from the next
	run grep -c '<rect class="host"' "$D/m1.html"
	assert_output 1
	grep -q '<title>host activity, 6.554 ms busy; longest h0 (100 ns)</title>' "$D/m1.html"
	refute grep -q 'Host lane not drawn' "$D/m1.html"
	manyhost_stream 65537 > "$D/m2.ndjson"
	trace-report --html -o "$D/m2.html" "$D/m2.ndjson"
	run grep -c '<rect class="host"' "$D/m2.html"
	assert_output 0
	grep -q ' Host lane not drawn on 1 rows: the host activity of their source passed the cap of 65536 spans kept.' "$D/m2.html"
}

@test "--html strip: names of dropped ops are forgotten, the kept keep theirs" {
	# 900 steps of 1 ms (ProfilerStep#N), each with 150 GPU ops named
	# kSTEP_I: 135000 names, more than twice the 65536 ops kept
	"$PY" -c '
host = "\"pid\":100,\"tid\":1,\"cat\":\"user_annotation\""
dev = "\"pid\":1,\"tid\":7,\"device\":\"GPU:0\",\"cat\":\"kernel\""
sp = "{\"type\":\"span\",\"ts_ns\":%d,\"dur_ns\":%d,\"name\":\"%s\",%s}"
out = []
for s in range(900):
    out.append(sp % (s * 1000000, 1000000, "ProfilerStep#%d" % s, host))
    for i in range(150):
        out.append(sp % (s * 1000000 + 1000 + i * 6000, 4000, "k%d_%d" % (s, i), dev))
print("\n".join(out))' > "$D/u.ndjson"
	trace-report --html -o "$D/u.html" "$D/u.ndjson"
	# equal steps: the first whose ops are all among the latest 65536
	# (900 - 65536 / 150 = 463.1: step 464) is drawn, each op with its name
	grep -q 'aria-label="timeline of step 464"' "$D/u.html"
	run bash -c "grep -o '<rect class=\"op\"[^>]*><title>[^<]*' '$D/u.html' | sed 's/.*<title>//' | sort -V"
	[ "$output" = "$(seq 0 149 | sed 's|.*|k464_&: 4.0 us|')" ]
}

@test "--html table names shortened in a cell carry the full name on hover" {
	need_fixtures
	chrome2ndjson "$FIXTURES/chrome/tracelens_h100_qwen.json.gz" 2>/dev/null |
	    trace-report --html -o "$D/q.html"
	run "$PY" -c '
import html, re, sys
s = open(sys.argv[1], encoding="utf-8").read()
cells = re.findall(r"<td title=\"([^\"]*)\">([^<]*)</td>", s)
assert cells, "no titled cell"
for full, short in cells:
    full, short = html.unescape(full), html.unescape(short)
    assert "\u2026" in short and len(full) > 72, (full, short)
    # the kept parts of the short form are in the full name, in order
    pos = 0
    for part in short.split("\u2026"):
        part = part.strip("<>()")
        i = full.find(part, pos) if part else pos
        assert i >= 0, (part, full)
        pos = i + len(part)
print("ok", len(cells))
' "$D/q.html"
	assert_success
	assert_output --regexp '^ok [0-9]+$'
}

@test "--html in headless Chromium: summary, contents, charts; no text overlaps, links resolve" {
	[ -z "${ND_ASAN:-}" ] || skip "browser test runs in the normal build only"
	need_fixtures
	chromium_setup
	# one page (each run costs seconds): a real profile, every chart, 99
	# step bars, four devices
	for k in tpu; do
		"$PY" "$CHECK" probe "$D/$k.html" "$D/${k}_p.html"
		timeout 60 "$CHROME" $CHROME_FLAGS --dump-dom "file://$D/${k}_p.html" \
		    > "$D/$k.dom" 2>/dev/null || true
		grep -q '^<section id="summary"><h2>Summary</h2>$' "$D/$k.dom"
		grep -q '^<nav id="contents"><h2>Contents</h2>$' "$D/$k.dom"
		# what the probe found, after the page's own text
		run sed -n '/^<\/script><pre id="nd-probe">/,$p' "$D/$k.dom"
		assert_line --partial 'svg where the time went texts'
		assert_line --regexp '^svg step times texts [1-9][0-9]*$'
		assert_line --regexp '^svg time breakdown texts [1-9][0-9]*$'
		assert_line --regexp '^svg timeline of step [0-9]+ texts [1-9][0-9]*$'
		assert_line --regexp '^links [1-9][0-9]*$'
		assert_line 'probe done</pre>'
		refute_line --regexp '^(overlap|badlink|empty) '
	done
}

@test "--html in headless Chromium: a column sorts by value both ways, a table filters, the timeline zooms and resets" {
	[ -z "${ND_ASAN:-}" ] || skip "browser test runs in the normal build only"
	need_fixtures
	chromium_setup
	"$PY" "$CHECK" probe-ui "$D/tpu.html" "$D/tpu_u.html"
	timeout 60 "$CHROME" $CHROME_FLAGS --dump-dom "file://$D/tpu_u.html" \
	    > "$D/tpu_u.dom" 2>/dev/null || true
	# html_check.py reads the durations itself and judges the order, the
	# rows the filter keeps and the viewBox after two wheel steps
	run "$PY" "$CHECK" ui "$D/tpu_u.dom"
	assert_success
	assert_line "ui ok all steps 7 rows"
	assert_line "ok 9 checks"
}
