#!/usr/bin/env bats
# The report is one section model (nd_doc) that two writers render: the
# HTML page's tables are the Markdown's, cell for cell, with every name
# shown shortened carrying its full text on hover (also where two names
# shorten alike); the Markdown's blocks are separated by one blank line;
# and the report's files call one another in the layers that
# lib/report/nd_report_int.h lists, without a circle.

load helpers

LAYERS="$BATS_TEST_DIRNAME/tools/file_layers.py"
CHECK="$BATS_TEST_DIRNAME/tools/html_check.py"
SRC="$BATS_TEST_DIRNAME/.."

setup() {
	T=$(mktemp -d)
}

teardown() {
	rm -rf "$T"
}

@test "the HTML's tables are the Markdown's, and every shortened name has its full text (two that shorten alike too)" {
	chrome2ndjson "$FIXTURES/chrome/hta_diff_control.json.gz" > "$T/s" \
	    2>/dev/null
	trace-report -k 0 "$T/s" > "$T/r.md"
	trace-report -k 0 --html "$T/s" > "$T/r.html"
	run "$PY" "$CHECK" tables "$T/r.html" "$T/r.md"
	[ "$status" -eq 0 ]
	# 1855 checks: 11 tables, their cells and the shortened ones
	[ "$output" = "ok 1855 checks" ]
	# two kernels that shorten alike: both rows have their own title
	run grep -c '<td title="void at::native::vectorized_elementwise_kernel&lt;4, ' "$T/r.html"
	[ "$output" -ge 2 ]
	n=$(grep -o '<td title="[^"]*">at::native::vectorized_elementwise_kernel&lt;…&gt;(…)</td>' "$T/r.html" | sort -u | wc -l)
	[ "$n" -ge 2 ]
}

@test "the check of the tables fails on a page whose table lost a row" {
	chrome2ndjson "$FIXTURES/chrome/hta_alexnet.json.gz" > "$T/s" \
	    2>/dev/null
	trace-report "$T/s" > "$T/r.md"
	trace-report --html "$T/s" | awk '/<tr><td>/ && !done { done = 1; next } 1' > "$T/r.html"
	run "$PY" "$CHECK" tables "$T/r.html" "$T/r.md"
	[ "$status" -eq 1 ]
	[[ "$output" == "FAIL: table 0 differs: "* ]]
}

@test "the Markdown separates blocks by one blank line and ends with one newline (pipeline and comparison reports too)" {
	chrome2ndjson "$FIXTURES"/pipeline/1f1b_p2_m4_rank*.pt.trace.json.gz \
	    > "$T/p" 2>/dev/null
	trace-report "$T/p" > "$T/p.md"
	# no two blank lines in a row, no blank line at the end
	run awk 'prev == "" && $0 == "" { print NR } { prev = $0 }' "$T/p.md"
	[ -z "$output" ]
	[ "$(tail -c 2 "$T/p.md" | od -An -c | tr -d ' ')" != '\n\n' ]
	# every heading has a blank line before it (the title aside)
	run awk 'NR > 1 && /^#/ && prev != "" { print NR } { prev = $0 }' "$T/p.md"
	[ -z "$output" ]
	grep -q '^## 10 Pipeline$' "$T/p.md"
	chrome2ndjson "$FIXTURES/chrome/hta_diff_control.json.gz" > "$T/a" 2>/dev/null
	chrome2ndjson "$FIXTURES/chrome/hta_diff_test.json.gz" > "$T/b" 2>/dev/null
	trace-diff "$T/a" "$T/b" > "$T/d" || true
	trace-report -k 2 "$T/d" > "$T/c.md"
	head -1 "$T/c.md" | grep -qx '# Comparison report'
	[ "$(tail -c 1 "$T/c.md" | od -An -c | tr -d ' ')" = '\n' ]
	[ "$(tail -c 2 "$T/c.md" | od -An -c | tr -d ' ')" != '\n\n' ]
	run awk 'prev == "" && $0 == "" { print NR } { prev = $0 }' "$T/c.md"
	[ -z "$output" ]
}

@test "the report's files call one another in the layers of nd_report_int.h, and the writers know only nd_doc.h" {
	run "$PY" "$LAYERS" "$SRC/lib/report" "$SRC/lib/report/nd_report_int.h"
	[ "$status" -eq 0 ]
	[[ "$output" == "ok "*" files" ]]
	run grep -l '#include "nd_report' "$SRC"/lib/report/nd_doc*.c
	[ "$status" -eq 1 ]
}

@test "the layer check finds a call upward and a file left out of the layers" {
	cp -r "$SRC/lib/report" "$T/rep"
	printf 'void\nnd_rep_up(nd_report *r)\n{\n\tnd_report_finish(r);\n}\n' >> "$T/rep/nd_report_util.c"
	cp "$T/rep/nd_report_dl.c" "$T/rep/nd_report_extra.c"
	sed -i 's/nd_rep_find_\([a-z]*\)(/nd_rep_xfind_\1(/' "$T/rep/nd_report_extra.c"
	run "$PY" "$LAYERS" "$T/rep" "$T/rep/nd_report_int.h"
	[ "$status" -eq 1 ]
	[ "${lines[0]}" = "nd_report_extra.c is not in the layers" ]
	[[ "$output" == *"nd_report_util.c -> nd_report.c nd_report_finish"* ]]
}
