#!/usr/bin/env bats
# The pipeline schedule chart (trace-pipeline --svg, nd_pipe_svg_step) and
# trace-report's Pipeline section (Markdown, JSON, HTML, --partial/--merge)
# on a hand-made two-stage 1F1B stream whose figures are worked out by hand
# below from the definitions (trace-pipeline(1)), then checked against
# trace-pipeline's records; and the chart rendered in headless Chromium.

load helpers

# Two ranks, CPU only (work = the union of the blocks), absolute clock
# (both metas have an origin), no step key (step 0); times in us:
#   rank 0: F0 0-100 F1 100-200 B0 400-600 F2 600-700 B1 800-1000
#           B2 1200-1400; gloo:recv 200-400 (idle), gloo:send 600-700
#           (busy); aten::mm inside F0 (not a block)
#   rank 1: F0 100-200 B0 200-450 F1 450-550 B1 550-800 F2 800-900
#           B2 900-1150; gloo:recv 0-100 (idle)
# Window 0-1400: rank 0 busy 900, bubble 500 (idle 200-400, 700-800,
# 1000-1200), warm-up 0, cool-down 0, P2P wait 200, F+B per mb 300;
# rank 1 busy 1050, bubble 350, warm-up 100, cool-down 250, P2P wait 100,
# F+B per mb 350: the slow stage; explained on rank 0 min(500, 3 * 50).
# F2 of rank 0 is named in a Python frame with XML specials.
pipe_stream() {
	local r=$1 s
	sp() {
		printf '{"type":"span","ts_ns":%s,"dur_ns":%s,"name":"%s","pid":1,"tid":1,"rank":%s,"class":"host"}\n' \
		    "$(($1 * 1000))" "$((($2 - $1) * 1000))" "$3" "$r"
	}
	printf '{"type":"meta","schema":"ndtrace/1","source":"rank%s.json","format":"chrome","origin_ns":1000000000,"rank":%s,"producer":"hand"}\n' "$r" "$r"
	if [ "$r" = 0 ]; then
		sp 0 100 'forward_step#0'
		sp 10 60 'aten::mm'
		sp 100 200 'forward_step#1'
		sp 200 400 'gloo:recv'
		sp 400 600 'backward_step#0'
		sp 600 700 'sched<&\">.py(12): forward_step 2'
		sp 600 700 'gloo:send'
		sp 800 1000 'backward_step#1'
		sp 1200 1400 'backward_step#2'
	else
		sp 0 100 'gloo:recv'
		sp 100 200 'forward_step#0'
		sp 200 450 'backward_step#0'
		sp 450 550 'forward_step#1'
		sp 550 800 'backward_step#1'
		sp 800 900 'forward_step#2'
		sp 900 1150 'backward_step#2'
	fi
}

setup_file() {
	D="$BATS_FILE_TMPDIR"
	pipe_stream 0 > "$D/r0.ndjson"
	pipe_stream 1 > "$D/r1.ndjson"
	trace-pipeline "$D/r0.ndjson" "$D/r1.ndjson" > "$D/pipe.ndjson"
	trace-pipeline --svg "$D/r0.ndjson" "$D/r1.ndjson" > "$D/chart.svg"
	trace-report "$D/r0.ndjson" "$D/r1.ndjson" > "$D/rep.md"
	trace-report --json "$D/r0.ndjson" "$D/r1.ndjson" > "$D/rep.json"
	trace-report --html -o "$D/rep.html" "$D/r0.ndjson" "$D/r1.ndjson"
}

setup() {
	D="$BATS_FILE_TMPDIR"
}

# The chart's checks: well-formed XML, one rect per block of the right
# phase class and colour, the micro-batch numbers, the hatching, the P2P
# strips, the rows, the title, the escaped name.
SVG_CHECK='
import sys, xml.etree.ElementTree as E
N = "{http://www.w3.org/2000/svg}"
svg = E.parse(sys.argv[1]).getroot()
assert svg.tag == N + "svg" and svg.get("viewBox") and svg.get("width"), svg.attrib
fill = {"F": "#0072b2", "B": "#e69f00", "W": "#f0e442"}
rows = [g for g in svg.iter(N + "g") if g.get("class") == "row"]
assert [(g.get("data-stage"), g.get("data-rank")) for g in rows] == [("0", "0"), ("1", "1")]
want = {"0": "F0 F1 B0 F2 B1 B2", "1": "F0 B0 F1 B1 F2 B2"}
pat = [p.get("id") for p in svg.iter(N + "pattern")]
for g in rows:
    blk = [r for r in g.iter(N + "rect") if (r.get("class") or "").startswith("blk ")]
    order = []
    for r in blk:
        ph = r.get("class").split()[1]
        assert r.get("fill") == fill[ph], (ph, r.get("fill"))
        t = r.find(N + "title").text
        order.append(t.split(":")[0])
    assert " ".join(order) == want[g.get("data-rank")], order
    mbs = [t.text for t in g.iter(N + "text") if t.get("class") == "mb"]
    assert mbs == [o[1:] for o in order], mbs
    idle = [r for r in g.iter(N + "rect") if r.get("class") == "idle"]
    for r in idle:
        assert r.get("fill")[5:-1] in pat, r.get("fill")
    lab = [t.text for t in g.iter(N + "text") if t.get("class") == "rank"][0]
    print("row", g.get("data-rank"), len(blk), len(idle),
          len([r for r in g.iter(N + "rect") if r.get("class") == "p2p"]), lab)
names = [t.text for t in svg.iter(N + "title") if "forward_step 2" in (t.text or "")]
print("name", names[0].split(", ")[-1])
print("title", [t.text for t in svg.iter(N + "text") if t.get("class") == "title"][0])
'

@test "trace-pipeline on the hand-made stream: the figures worked out by hand" {
	run jq -c 'select(.type == "pipe_rank") | [.rank, .stage, .window_ns,
	    .busy_ns, .bubble_ns, .warmup_ns, .cooldown_ns, .p2p_wait_ns, .mb,
	    .fb_per_mb_ns, .explained_ns, .explained_frac, .order]' \
	    "$D/pipe.ndjson"
	assert_success
	assert_output '[0,0,1400000,900000,500000,0,0,200000,3,300000,150000,0.3,"F0 F1 B0 F2 B1 B2"]
[1,1,1400000,1050000,350000,100000,250000,100000,3,350000,0,0,"F0 B0 F1 B1 F2 B2"]'
	run jq -c 'select(.type == "pipe_step") | [.step, .stages,
	    .microbatches, .schedule, .clock, .bubble_frac, .ideal_bubble_frac,
	    .slow_rank]' "$D/pipe.ndjson"
	assert_output '[0,2,3,"1f1b","absolute",0.3036,0.25,1]'
}

@test "the SVG chart: well-formed, a rect per block by phase, mb labels, hatched idle, P2P, escaped names" {
	for f in chart.svg rep.svg; do
		if [ $f = rep.svg ]; then
			# the chart in the report's page, as it is there
			"$PY" -c '
import sys
s = open(sys.argv[1]).read()
i = s.index("<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"pipeline\"")
print(s[i:s.index("</svg>", i) + 6])' "$D/rep.html" > "$D/rep.svg"
		fi
		run "$PY" -c "$SVG_CHECK" "$D/$f"
		assert_success
		assert_line 'row 0 6 3 2 stage 0 · rank 0'
		assert_line 'row 1 6 2 1 stage 1 · rank 1 (slow)'
		assert_line 'name sched<&">.py(12): forward_step 2'
		assert_line 'title Step 0: schedule 1f1b, p = 2, m = 3, bubble 30.4 % (ideal 25.0 %)'
	done
	# the hatching the idle rects use is defined once; the raw text escaped
	run grep -c '<pattern id="nd-pipe0-idle"' "$D/chart.svg"
	assert_output 1
	grep -q 'sched&lt;&amp;&quot;&gt;.py(12)' "$D/chart.svg"
	cmp "$D/chart.svg" "$D/rep.svg"
}

@test "the report's Pipeline table equals trace-pipeline's pipe_rank records" {
	run grep -c '^## ' "$D/rep.md"
	assert_output 10
	grep -q '^## 10 Pipeline$' "$D/rep.md"
	grep -q '^Step 0, the typical of 1 pipeline step (median window): schedule \*\*1f1b\*\*, p = 2 stages, m = 3 micro-batches, window 1.400 ms (clock absolute). Bubble \*\*30.4 %\*\* measured vs 25.0 % ideal for this schedule, p and m; slow stage \*\*1\*\* (rank 1), F+B+W 350.0 us a micro-batch.$' "$D/rep.md"
	# the table's cells, and the records formatted as the report formats
	# durations (nd_rep_put_dur) and fractions (percent of 4 decimals)
	sed -n '/^## 10 Pipeline/,$p' "$D/rep.md" | grep '^| [0-9]' |
	    sed 's/^| //; s/ |$//; s/ | /;/g' > "$D/md.rows"
	"$PY" -c '
import json, sys
def dur(ns):
    a = abs(ns)
    if a < 1000: return "%d ns" % ns
    if a < 1000000: return "%.1f us" % (ns / 1e3)
    if a < 1000000000: return "%.3f ms" % (ns / 1e6)
    return "%.3f s" % (ns / 1e9)
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r["type"] != "pipe_rank": continue
    print(";".join([str(r["stage"]), str(r["rank"]), dur(r["busy_ns"]),
        dur(r["bubble_ns"]), "%.1f %%" % (100 * r["bubble_frac"]),
        dur(r["warmup_ns"]), dur(r["cooldown_ns"]), dur(r["p2p_wait_ns"]),
        str(r["mb"]), dur(r["fb_per_mb_ns"]), dur(r["explained_ns"]),
        "%.1f %%" % (100 * r["explained_frac"])]))
' "$D/pipe.ndjson" > "$D/ref.rows"
	run cat "$D/md.rows"
	assert_line '0;0;900.0 us;500.0 us;35.7 %;0 ns;0 ns;200.0 us;3;300.0 us;150.0 us;30.0 %'
	assert_line '1;1;1.050 ms;350.0 us;25.0 %;100.0 us;250.0 us;100.0 us;3;350.0 us;0 ns;0.0 %'
	diff "$D/ref.rows" "$D/md.rows"
}

@test "the JSON report's \"pipeline\" is trace-pipeline's pipe_step and pipe_rank records" {
	run jq -c '.pipeline.step' "$D/rep.json"
	assert_output "$(jq -c 'select(.type == "pipe_step")' "$D/pipe.ndjson")"
	run jq -c '.pipeline.ranks[]' "$D/rep.json"
	assert_output "$(jq -c 'select(.type == "pipe_rank")' "$D/pipe.ndjson")"
	run jq -r '.pipeline.step | "\(.slow_rank) \(.bubble_frac)"' "$D/rep.json"
	assert_output '1 0.3036'
}

@test "--html: the Pipeline section has the table and the chart; in the contents" {
	grep -q '<h2 id="s10">10 Pipeline</h2>' "$D/rep.html"
	grep -q '<li><a href="#s10">10 Pipeline</a>' "$D/rep.html"
	# the chart follows the table, inside the section, in a figure
	run "$PY" -c '
import sys
s = open(sys.argv[1]).read()
a = s.index("<h2 id=\"s10\">")
t = s.index("<th>explained by the slow stage</th>", a)
f = s.index("<figure><svg xmlns=\"http://www.w3.org/2000/svg\" class=\"pipeline\"", t)
print("ok", s.count("class=\"pipeline\""), s.count("<td>1.050 ms</td>"))' "$D/rep.html"
	assert_output 'ok 1 1'
}

@test "no pipeline section, key or chart for inputs that are no pipeline job" {
	# one stage only: rank 1's blocks dropped
	grep -v 'step' "$D/r1.ndjson" > "$D/r1nb.ndjson"
	trace-pipeline "$D/r0.ndjson" "$D/r1nb.ndjson" > "$D/one.ndjson"
	run jq -r 'select(.type == "pipe_step") | .stages' "$D/one.ndjson"
	assert_output 1
	trace-report "$D/r0.ndjson" "$D/r1nb.ndjson" > "$D/one.md"
	run grep -c 'Pipeline' "$D/one.md"
	assert_output 0
	run jq 'has("pipeline")' <(trace-report --json "$D/r0.ndjson" "$D/r1nb.ndjson")
	assert_output false
	# forward blocks only on both ranks: no stage has F and B
	grep -v backward "$D/r0.ndjson" > "$D/f0.ndjson"
	grep -v backward "$D/r1.ndjson" > "$D/f1.ndjson"
	run trace-report --html "$D/f0.ndjson" "$D/f1.ndjson"
	assert_success
	refute_output --partial 'class="pipeline"'
	refute_output --partial 'Pipeline'
}

@test "--partial/--merge: the merged report has the same Pipeline section, in every format" {
	local fmt keep
	for fmt in --markdown --json --html; do
		keep=
		[ $fmt = --html ] && keep=--html	# the strip and the chart
		[ $fmt = --markdown ] && fmt=
		trace-report $fmt "$D/r0.ndjson" "$D/r1.ndjson" > "$D/one.out"
		for r in 0 1; do
			trace-report $keep --partial "$D/r$r.ndjson" > "$D/p$r.part"
		done
		trace-report $fmt --merge "$D/p0.part" "$D/p1.part" > "$D/m.out"
		cmp "$D/one.out" "$D/m.out"
	done
	grep -q '<h2 id="s10">10 Pipeline</h2>' "$D/m.out"
	# the partial carries the engine's records after its own header
	run grep -c '"type":"pipe_block"' "$D/p0.part"
	assert_output 6
	# an input without blocks keeps only its sources
	grep -v step "$D/r0.ndjson" | trace-report --partial > "$D/nb.part"
	run grep -o '"type":"pipe_[a-z]*"' "$D/nb.part"
	assert_output '"type":"pipe_partial"
"type":"pipe_source"'
}

@test "the chart renders in headless Chromium: both phase colours, in proportion to F and B time" {
	[ -z "${ND_ASAN:-}" ] || skip "browser test runs in the normal build only"
	chromium_setup
	timeout 60 "$CHROME" $CHROME_FLAGS --window-size=1000,200 \
	    --screenshot="$D/chart.png" "file://$D/chart.svg" >/dev/null 2>&1 ||
	    true
	[ -s "$D/chart.png" ] || fail "no screenshot"
	run "$PY" "$BATS_TEST_DIRNAME/tools/report_png.py" "$D/chart.png" \
	    0072b2 e69f00
	assert_success
	assert_line --regexp '^ok 1000x200 '
	# F time 600 us, B time 1350 us over both rows: the pixels of each
	# colour in that ratio (labels, strokes and the legend move it a little)
	f=$(awk '$1 == "0072b2" { print $2 }' <<<"$output")
	b=$(awk '$1 == "e69f00" { print $2 }' <<<"$output")
	[ "$f" -gt 500 ] && [ "$b" -gt 1000 ] || fail "F $f B $b"
	awk -v f="$f" -v b="$b" 'BEGIN { r = f / b; exit !(r > 0.38 && r < 0.51) }' ||
	    fail "F/B pixels $f/$b, want about 600/1350"
	# the report's page laid out: the chart's texts have boxes there and
	# none overlaps another (html_check.py probe measures them)
	"$PY" "$BATS_TEST_DIRNAME/tools/html_check.py" probe "$D/rep.html" \
	    "$D/rep_p.html"
	timeout 60 "$CHROME" $CHROME_FLAGS --dump-dom "file://$D/rep_p.html" \
	    > "$D/rep.dom" 2>/dev/null || true
	run sed -n '/^<\/script><pre id="nd-probe">/,$p' "$D/rep.dom"
	# 2 title, 6 legend, 2 row, 12 micro-batch, 8 tick and 1 axis labels
	assert_line --partial 'svg pipeline schedule of step 0 texts 31'
	assert_line 'probe done</pre>'
	refute_line --regexp '^(overlap|badlink|empty) '
}

@test "the chart stays bounded: rows and blocks a row capped, with a note; W blocks in their colour" {
	# 130 ranks of F0 W0 B0 (zero bubble), rank 0 with 4200 micro-batches
	"$PY" -c '
import json
for r in range(130):
    print(json.dumps({"type": "meta", "schema": "ndtrace/1", "source": "r%d" % r,
        "format": "chrome", "origin_ns": 1, "rank": r}))
    t = 10 * r
    for mb in range(4200 if r == 0 else 1):
        for ph, d in (("forward_step", 7), ("backward_weight", 3), ("backward_step", 13)):
            print(json.dumps({"type": "span", "ts_ns": t, "dur_ns": d,
                "name": "%s#%d" % (ph, mb), "pid": 1, "tid": 1}))
            t += d + 2
' > "$D/big.ndjson"
	trace-pipeline --svg "$D/big.ndjson" > "$D/big.svg"
	run "$PY" -c '
import sys, os, xml.etree.ElementTree as E
N = "{http://www.w3.org/2000/svg}"
svg = E.parse(sys.argv[1]).getroot()
rows = [g for g in svg.iter(N + "g") if g.get("class") == "row"]
blk = [[r for r in g.iter(N + "rect") if (r.get("class") or "").startswith("blk ")] for g in rows]
w = [r.get("fill") for b in blk for r in b if r.get("class") == "blk W"]
print(len(rows), len(blk[0]), len(blk[1]), len(set(w)), w[0])
print([t.text for t in svg.iter(N + "text") if t.get("class") == "note"][0])
print("small", os.path.getsize(sys.argv[1]) < 8 << 20)' "$D/big.svg"
	assert_success
	# 16384 / 128 rows = 128 a row; rank 0: 12600 blocks, 2 ns apart, from
	# the window's start to its end: 12599 idle stretches
	assert_output "128 128 3 1 #f0e442
Not drawn: 2 ranks after the first 128; 12472 blocks; 12471 idle stretches or P2P spans (a row draws its first 128 of each).
small True"
}

@test "real fixtures (gloo, one process a stage): the report's pipeline matches the manifest and trace-pipeline; rank partials merge to it" {
	need_fixtures
	local P="$FIXTURES/pipeline" k
	for k in 1f1b_p4_m8_slow2 gpipe_p4_m4; do
		chrome2ndjson "$P/${k}"_rank*.pt.trace.json.gz > "$D/$k.ndjson"
		trace-report --json "$D/$k.ndjson" > "$D/$k.json"
		# schedule, stages, micro-batches, slow stage and each stage's
		# order as the generator's manifest says
		run jq -c --slurpfile m "$P/$k.expect.json" '.pipeline | [
		    .step.schedule == $m[0].schedule, .step.stages == $m[0].stages,
		    .step.microbatches == $m[0].microbatches,
		    (.step.slow_stage == $m[0].slow_stage or $m[0].slow_stage == null),
		    ([.ranks[] | {key: (.stage | tostring), value: .order}] |
		    from_entries) == $m[0].order]' "$D/$k.json"
		assert_output '[true,true,true,true,true]'
		# the typical step of trace-pipeline's records
		run jq -c '.pipeline.step' "$D/$k.json"
		assert_output "$(trace-pipeline "$D/$k.ndjson" | "$PY" -c '
import json, sys
s = [json.loads(l) for l in sys.stdin]
s = sorted((r for r in s if r["type"] == "pipe_step"), key=lambda r: (r["window_ns"], r["step"]))
print(json.dumps(s[(len(s) - 1) // 2], separators=(",", ":")))')"
	done
	# a partial a rank, merged: the same page
	trace-report --html "$D/$k.ndjson" > "$D/one.html"
	for r in 0 1 2 3; do
		chrome2ndjson "$P/${k}_rank$r.pt.trace.json.gz" |
		    trace-report --html --partial > "$D/$r.part"
	done
	trace-report --html --merge "$D"/[0-3].part > "$D/merged.html"
	cmp "$D/one.html" "$D/merged.html"
}
