#!/usr/bin/env bats
# Control characters never reach a terminal or a browser (issue 31, item
# 7): tables, Markdown and HTML show C0/C1 controls, DEL, bidirectional
# overrides and bytes that are not UTF-8 as visible escapes; JSON keeps the
# names exact.
load helpers

setup() {
	T=$BATS_TEST_TMPDIR
	"$PY" -c '
import json
names = ["evil\x1b]0;pwned\x07\x1b[31mred", "bidi\u202eevil", "c1\u0085x", "del\x7f", "tab\tnl\nx"]
print(json.dumps({"type": "meta", "schema": "ndtrace/1", "source": "h", "format": "chrome",
                  "origin_ns": 0, "host": None, "rank": None, "producer": "t"}))
for i, n in enumerate(names):
    print(json.dumps({"type": "span", "ts_ns": i * 1000, "dur_ns": 100 * (i + 1), "name": n,
                      "pid": 1, "tid": 1, "class": "compute", "family": "gemm", "cat": "kernel",
                      "device": "GPU:0", "args": {"flops": 1000, "bytes": 100}}))
print(json.dumps({"type": "end", "events": len(names), "spans": len(names)}))' > "$T/h.nd"
	# the escaped forms, as nd_text_visible writes them
	ESC='evil\x1b]0;pwned\x07\x1b[31mred
bidi\u202eevil
c1\u0085x
del\x7f
tab\x09nl\x0ax'
}

# raw FILE: the bytes a terminal or browser would act on, if any
raw() {
	"$PY" -c '
import re, sys
d = open(sys.argv[1], "rb").read()
bad = sorted({hex(c) for c in d if (c < 0x20 and c != 10) or c == 0x7f})
for m in (b"\xe2\x80\xae", b"\xc2\x85"):
    if m in d:
        bad.append(repr(m))
print(" ".join(bad))' "$1"
}

@test "trace-topk --table and trace-roofline --table: controls as visible escapes" {
	trace-topk --table "$T/h.nd" > "$T/top.txt"
	[ -z "$(raw "$T/top.txt")" ] || fail "raw bytes: $(raw "$T/top.txt")"
	run bash -c "awk '/^ *[0-9.]+%/ { print \$NF }' '$T/top.txt' | sort"
	assert_output "$(printf '%s\n' "$ESC" | sort)"
	trace-roofline --table "$T/h.nd" > "$T/roof.txt"
	[ -z "$(raw "$T/roof.txt")" ] || fail "raw bytes: $(raw "$T/roof.txt")"
	for n in 'evil\x1b]0;pwned\x07\x1b[31mred' 'bidi\u202eevil' 'tab\x09nl\x0ax'; do
		grep -qF "$n" "$T/roof.txt" || fail "no $n in the roofline table"
	done
}

@test "trace-report Markdown and HTML: controls as visible escapes; JSON exact" {
	trace-report "$T/h.nd" > "$T/r.md"
	[ -z "$(raw "$T/r.md")" ] || fail "raw bytes: $(raw "$T/r.md")"
	# Markdown escapes the escape's backslash: \\x1b reads \x1b
	grep -qF '| evil\\x1b\]0;pwned\\x07\\x1b\[31mred |' "$T/r.md"
	grep -qF '| bidi\\u202eevil |' "$T/r.md"
	trace-report --html "$T/h.nd" > "$T/r.html"
	[ -z "$(raw "$T/r.html")" ] || fail "raw bytes: $(raw "$T/r.html")"
	grep -qF 'evil\x1b]0;pwned\x07\x1b[31mred' "$T/r.html"
	grep -qF 'c1\u0085x' "$T/r.html"
	# JSON: the names exactly as the input holds them
	run bash -c "trace-report --json '$T/h.nd' | jq -r '[.. | objects | .name? // empty | strings] | unique | .[]' | sort"
	want=$(jq -r 'select(.type == "span") | .name' "$T/h.nd" | sort)
	assert_output "$want"
}

# Names are length-counted everywhere (issue 31, item 8): "a\u0000x" and
# "a\u0000y" stay two names, exact in JSON and escaped for people.
nul_stream() {
	"$PY" -c '
import json
print(json.dumps({"type": "meta", "schema": "ndtrace/1", "source": "n", "format": "chrome",
                  "origin_ns": 0, "host": None, "rank": None, "producer": "t"}))
spans = []
for i, n in enumerate(["a\x00x", "a\x00y"]):
    t = i * 10000
    spans.append({"type": "span", "ts_ns": t, "dur_ns": 5000, "name": n, "pid": 1, "tid": 1,
                  "scope": "r\x00" + n[-1] + "/" + n})
    spans.append({"type": "span", "ts_ns": t + 2000 + 3000 * i, "dur_ns": 100 * (i + 1), "name": n,
                  "pid": 2, "tid": 7, "class": "compute", "family": "gemm", "cat": "kernel",
                  "device": "GPU:0"})
    spans.append({"type": "instant", "ts_ns": t + 10, "name": "[memory]", "pid": 1, "tid": 1,
                  "device": "GPU:7", "args": {"Total Allocated": 1000 * (i + 1), "Total Reserved": 4096,
                  "Bytes": 1000, "Device Type": 1, "Device Id": 0}})
for s in sorted(spans, key=lambda s: s["ts_ns"]):
    print(json.dumps(s))'
}

@test "names with NUL: two rows with their exact names in trace-topk, trace-report, trace-regions, trace-gaps, trace-mem" {
	nul_stream > "$T/n.nd"
	trace-check "$T/n.nd"
	run bash -c "trace-topk '$T/n.nd' | jq -c 'select(.type == \"top\") | .name' | sort"
	assert_output '"a\u0000x"
"a\u0000y"'
	run bash -c "trace-report --json '$T/n.nd' | jq -c '[.ops.ops[].name] | sort'"
	assert_output '["a\u0000x","a\u0000y"]'
	run bash -c "trace-report --json '$T/n.nd' | jq -c '[.gaps.payloads[].payload] | sort'"
	assert_output '["a\u0000y"]'
	run bash -c "trace-report '$T/n.nd' | grep -c '| a\\\\\\\\x00[xy] |'"
	[ "$output" -ge 2 ]
	# the host spans' scopes (with device ops, regions are theirs)
	run bash -c "jq -c 'select(.device == null)' '$T/n.nd' | trace-regions | jq -c 'select(.depth == 1) | .path' | sort"
	assert_output '"r\u0000x"
"r\u0000y"'
	run bash -c "trace-gaps '$T/n.nd' | jq -c 'select(.type == \"gap\") | .payload'"
	assert_output '"a\u0000y"'
	run bash -c "trace-mem '$T/n.nd' | jq -c 'select(.type == \"mem_peak\") | .op'"
	assert_output '"a\u0000y"'
	run bash -c "trace-mem --table '$T/n.nd' | grep -c 'op a\\\\x00y'"
	assert_output 1
}

@test "names with NUL: rules see the whole name, the bytes after the NUL too (trace-context, trace-steps, trace-classify)" {
	nul_stream > "$T/n.nd"
	# the match after the NUL: "a\0y" only, both spans of it
	run bash -c "trace-context --regex 'y\$' '$T/n.nd' | jq -c 'select(.type == \"span\" and .context.role == \"match\") | .name' | sort -u"
	assert_output '"a\u0000y"'
	run bash -c "trace-context --regex 'x\$' '$T/n.nd' | jq -c 'select(.type == \"span\" and .context.role == \"match\") | .name' | sort -u"
	assert_output '"a\u0000x"'
	# a step regex that needs the bytes after the NUL: the two host
	# spans of "a\0y" and "a\0x" as steps 1 and 2 of their own number
	printf '%s\n' '{"type":"meta","schema":"ndtrace/1","source":"s","format":"chrome","origin_ns":0,"host":null,"rank":null,"producer":"t"}' \
	    '{"type":"span","ts_ns":0,"dur_ns":10,"name":"step\u00001","pid":1,"tid":1}' \
	    '{"type":"span","ts_ns":20,"dur_ns":10,"name":"step\u00002","pid":1,"tid":1}' > "$T/s.nd"
	run bash -c "trace-steps -x '([0-9]+)\$' '$T/s.nd' | jq -c 'select(.type == \"step\") | .step'"
	assert_output '1
2'
	# a class rule on the name's end
	printf 'communication\tnulcase\ty$\t*\t*\t*\t*\n' > "$T/r.tsv"
	run bash -c "trace-classify -r '$T/r.tsv' '$T/n.nd' | jq -r 'select(.type == \"span\" and .family == \"nulcase\") | .name' | sort -u | od -c | head -1"
	assert_output '0000000   a  \0   y  \n'
}

@test "messages on stderr show a name's or a path's controls as visible escapes" {
	bad=$(printf 'no\nsuch\033]0;x\007')
	run trace-topk "$T/$bad"
	assert_failure 2
	assert_output "trace-topk: $T/no\\x0asuch\\x1b]0;x\\x07: No such file or directory"
	printf '{"type":"meta","schema":"ndtrace/1","source":"h\\u001b[2J","format":"chrome","origin_ns":0,"host":null,"rank":null,"producer":"t"}\n' > "$T/m.nd"
	# a warning: its first line names the source, escaped
	run bash -c "trace-diff '$T/m.nd' '$T/m.nd' 2>&1 >/dev/null | head -1"
	assert_output 'trace-diff: same source path on both sides: h\x1b[2J'
}
