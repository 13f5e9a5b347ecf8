#!/usr/bin/env bats
# Valid inputs of hostile shape (issue 18, items 10, 14 and 16): each is
# generated here by a small python3 script, checked exactly on a small
# instance against an independent computation, and run big under a time
# limit (CPU seconds) and, outside the sanitizer build, a memory limit
# (ASan reserves terabytes of address space, so `ulimit -v` cannot apply
# to it there).

load helpers

setup() {
	T="$BATS_TEST_TMPDIR"
}

# One device op whose scope has N segments "s0/s1/.../s(N-1)" (or all
# "a" with same=1), 10 ns long.
gen_deep() {
	"$PY" - "$1" "${2:-0}" <<'EOF'
import json, sys
n, same = int(sys.argv[1]), sys.argv[2] == "1"
segs = ["a" if same else "s%d" % i for i in range(n)]
print(json.dumps({"type": "meta", "schema": "ndtrace/1"}))
print(json.dumps({"type": "span", "name": "k", "cat": "kernel", "ts_ns": 0,
    "dur_ns": 10, "pid": 0, "tid": 1, "scope": "/".join(segs)}))
EOF
}

# N identical spans (ts 0, dur 1000) on one timeline.
gen_same() {
	"$PY" - "$1" <<'EOF'
import json, sys
print(json.dumps({"type": "meta", "schema": "ndtrace/1"}))
for i in range(int(sys.argv[1])):
    print(json.dumps({"type": "span", "name": "k", "ts_ns": 0,
        "dur_ns": 1000, "pid": 1, "tid": 1}))
EOF
}

# N streams of one device, stream i one kernel "k<i>" at [100 i, 100 i + 10).
gen_streams() {
	"$PY" - "$1" <<'EOF'
import json, sys
print(json.dumps({"type": "meta", "schema": "ndtrace/1"}))
for i in range(int(sys.argv[1])):
    print(json.dumps({"type": "span", "name": "k%d" % i, "cat": "kernel",
        "ts_ns": 100 * i, "dur_ns": 10, "pid": 0, "tid": i,
        "device": "gpu0"}))
EOF
}

@test "trace-regions: a deep scope, exact regions and one folded line" {
	gen_deep 5 > "$T/d.ndjson"
	run trace-regions --folded "$T/d.ndjson"
	assert_success
	assert_output "s0;s1;s2;s3;s4 10"
	# every prefix is a region of inclusive time 10; only the leaf has
	# exclusive time
	runp "trace-regions '$T/d.ndjson' | jq -c '[.path, .depth, .inclusive_ns, .exclusive_ns]'"
	assert_success
	expected=$("$PY" -c '
import json
s = ["s%d" % i for i in range(5)]
for d in range(1, 6):
    print(json.dumps(["/".join(s[:d]), d, 10, 10 if d == 5 else 0], separators=(",", ":")))')
	assert_output "$expected"
}

@test "trace-regions: 50,000 segments in linear memory (--folded, --tree, --merge)" {
	gen_deep 50000 1 > "$T/d.ndjson"
	# the single folded line: 50,000 frames, "a;a;...;a 10"
	bounded 20 300000 "trace-regions --folded '$T/d.ndjson' | wc -c"
	assert_success
	assert_output "$((2 * 50000 - 1 + 4))"
	bounded 20 300000 "trace-regions --partial '$T/d.ndjson' > '$T/d.part'"
	assert_success
	bounded 20 300000 "trace-regions --merge --folded --by-device --ops '$T/d.part' | wc -c"
	assert_success
	# "(unknown);" (no device), the frames, ";k" (--ops), " 10\n"
	assert_output "$((10 + 2 * 50000 - 1 + 2 + 4))"
	# --tree: indentation stops at level 32, deeper levels say theirs
	bounded 20 300000 "trace-regions --merge --tree '$T/d.part' | sed -n '34p;50001p'"
	assert_success
	assert_line --index 0 --regexp '^100\.00%  +10ns +0ns +1 {64}\[33\] a +#{40}$'
	assert_line --index 1 --regexp '^100\.00%  +10ns +10ns +1 {64}\[50000\] a +#{40}$'
}

@test "trace-regions: --prune merges a deep chain into one region" {
	gen_deep 20000 1 > "$T/d.ndjson"
	bounded 20 300000 "trace-regions --prune '$T/d.ndjson' | jq -r '[.depth, .inclusive_ns, (.name | length)] | @tsv'"
	assert_success
	assert_output "$(printf '1\t10\t%d' $((2 * 20000 - 1)))"
}

@test "trace-regions: thousands of devices, each with its own scope" {
	"$PY" - > "$T/dev.ndjson" <<'EOF'
import json
print(json.dumps({"type": "meta", "schema": "ndtrace/1"}))
for i in range(4000):
    print(json.dumps({"type": "span", "name": "k", "cat": "kernel",
        "ts_ns": 0, "dur_ns": i + 1, "pid": i, "tid": 1,
        "device": "d%d" % i, "scope": "r%d/x" % i}))
EOF
	bounded 20 300000 "trace-regions --by-device --folded '$T/dev.ndjson' | sort | md5sum"
	assert_success
	expected=$("$PY" -c '
for i in range(4000):
    print("d%d;r%d;x %d" % (i, i, i + 1))' | sort | md5sum)
	assert_output "$expected"
}

@test "trace-report: a deep scope, exact regions table, linear memory" {
	gen_deep 3 > "$T/d.ndjson"
	runp "trace-report --json '$T/d.ndjson' | jq -c '.regions.regions[] | [.path, .depth, .count, .inclusive_ns, .exclusive_ns]'"
	assert_success
	assert_output '["s0",1,1,10,0]
["s0/s1",2,1,10,0]
["s0/s1/s2",3,1,10,10]'
	gen_deep 32000 1 > "$T/big.ndjson"
	for f in "" --json --html; do
		bounded 20 300000 "trace-report $f '$T/big.ndjson' > /dev/null"
		assert_success
	done
	# the table shows the shallowest first (same time and count: the
	# shorter path), --top 10 of them
	bounded 20 300000 "trace-report --json '$T/big.ndjson' | jq -c '[.regions.regions[].depth], .regions.regions_rows'"
	assert_success
	assert_output '[1,2,3,4,5,6,7,8,9,10]
32000'
}

@test "trace-context: 40,000 identical spans, every one a match" {
	gen_same 4 > "$T/s.ndjson"
	run trace-context -B 1 -A 1 k "$T/s.ndjson"
	assert_success
	# each span once, each its own match (a match is never written as
	# another's context)
	expected=$(head -1 "$T/s.ndjson"; "$PY" -c '
import json
for i in range(1, 5):
    print(json.dumps({"type": "span", "ts_ns": 0, "dur_ns": 1000, "name": "k",
        "pid": 1, "tid": 1, "context": {"match": i, "role": "match",
        "offset_ns": 0}}, separators=(",", ":")))')
	assert_output "$expected"
	gen_same 40000 > "$T/big.ndjson"
	bounded 5 400000 "trace-context k '$T/big.ndjson' | jq -c 'select(.type == \"span\") | .context.match' | awk '\$0 == NR { n++ } END { print n, NR }'"
	assert_success
	assert_output "40000 40000"
	# no match: nothing held open costs a scan per span either
	bounded 5 400000 "trace-context nomatch '$T/big.ndjson'; echo \$?"
	assert_output "1"
}

@test "trace-gaps and trace-report: 50,000 streams on one device" {
	gen_streams 4 > "$T/s.ndjson"
	runp "trace-gaps '$T/s.ndjson' | jq -c 'select(.type == \"gap\") | [.ts_ns, .dur_ns, .before, .marker, .payload]'"
	assert_success
	expected=$("$PY" -c '
import json
for i in range(3):
    print(json.dumps([100 * i + 10, 90, "k%d" % i, "k%d" % (i + 1), "k%d" % (i + 1)], separators=(",", ":")))')
	assert_output "$expected"
	gen_streams 50000 > "$T/big.ndjson"
	bounded 20 400000 "trace-gaps '$T/big.ndjson' | jq -c 'select(.type == \"gap\") | .dur_ns' | sort | uniq -c | awk '{ print \$1, \$2 }'"
	assert_success
	assert_output "49999 90"
	bounded 20 600000 "trace-report --json '$T/big.ndjson' | jq -c '[.gaps.count, .gaps.total_ns]'"
	assert_success
	assert_output "[49999,$((49999 * 90))]"
}

@test "trace-gaps: the marker is the first op after a device gap, among many streams" {
	# streams 1..N each idle until 1000, then one op; stream 0 closes the
	# device's first busy stretch.  Ties at 1000: the longer op first,
	# then the first stream.
	"$PY" - > "$T/m.ndjson" <<'EOF'
import json
print(json.dumps({"type": "meta", "schema": "ndtrace/1"}))
print(json.dumps({"type": "span", "name": "first", "cat": "kernel",
    "ts_ns": 0, "dur_ns": 10, "pid": 0, "tid": 0, "device": "g"}))
for i in range(1, 300):
    print(json.dumps({"type": "span", "name": "op%d" % i, "cat": "kernel",
        "ts_ns": 1000, "dur_ns": 5 + (i == 200), "pid": 0, "tid": i,
        "device": "g"}))
EOF
	runp "trace-gaps '$T/m.ndjson' | jq -c 'select(.type == \"gap\") | [.ts_ns, .dur_ns, .before, .marker]'"
	assert_success
	assert_output '[10,990,"first","op200"]'
}

@test "trace-topk: origin_ns INT64_MAX: the earliest example, also merged" {
	printf '%s\n' '{"type":"meta","schema":"ndtrace/1","origin_ns":9223372036854775807}' \
	    '{"type":"span","name":"k","ts_ns":10,"dur_ns":5,"pid":1,"tid":1}' > "$T/a.ndjson"
	printf '%s\n' '{"type":"meta","schema":"ndtrace/1","origin_ns":1000}' \
	    '{"type":"span","name":"k","ts_ns":5000,"dur_ns":3,"pid":2,"tid":1}' > "$T/b.ndjson"
	# 1000 + 5000 is earlier than 2^63 - 1 + 10 (which wraps in int64)
	for args in "'$T/a.ndjson' '$T/b.ndjson'" "'$T/b.ndjson' '$T/a.ndjson'"; do
		runp "trace-topk $args | jq -c '.example | [.origin_ns, .ts_ns]'"
		assert_success
		assert_output "[1000,5000]"
	done
	trace-topk --partial "$T/a.ndjson" > "$T/a.part"
	trace-topk --partial "$T/b.ndjson" > "$T/b.part"
	for args in "'$T/a.part' '$T/b.part'" "'$T/b.part' '$T/a.part'"; do
		runp "trace-topk --merge $args | jq -c '.example | [.origin_ns, .ts_ns]'"
		assert_success
		assert_output "[1000,5000]"
	done
}

@test "trace-context --overlapping: every span's claim matches an independent oracle" {
	# Seven timelines interleaved by time (so every earlier span is still
	# held): three of device g, one of device h, a host one and two
	# device-less ones sharing a pid; random nesting, zero-length spans,
	# about 30% matches.  The oracle relates each span to each match by
	# the rules of trace-context(1) and keeps the lowest-numbered match.
	cat > "$T/gen.py" <<'EOF'
import json, random, sys
random.seed(int(sys.argv[1]))
tls = [(1, 1, "g", "kernel"), (1, 2, "g", "kernel"), (1, 3, "g", "kernel"),
       (2, 1, "h", "kernel"), (7, 1, None, "cpu_op"), (3, 1, None, "kernel"),
       (3, 2, None, "kernel")]
spans = []
for k, (pid, tid, dev, cat) in enumerate(tls):
    t = random.randrange(0, 20)
    for j in range(12):
        dur = random.choice([0, 1, 3, 7, 15, 30])
        s = {"type": "span", "cat": cat, "ts_ns": t, "dur_ns": dur,
             "pid": pid, "tid": tid,
             "name": "X" if random.random() < 0.3 else "s%d_%d" % (k, j)}
        if dev is not None:
            s["device"] = dev
        spans.append((t, -dur, k, j, s))
        t += random.choice([0, 1, 2, dur, dur + 3])
spans.sort(key=lambda x: x[:4])
print(json.dumps({"type": "meta", "schema": "ndtrace/1"}))
for x in spans:
    print(json.dumps(x[4]))
EOF
	cat > "$T/oracle.py" <<'EOF'
import json, sys
B, A = int(sys.argv[2]), int(sys.argv[3])
sp = [e for e in map(json.loads, open(sys.argv[1])) if e["type"] == "span"]
tl = lambda e: (e["pid"], e["tid"])
end_e = lambda e: e["ts_ns"] + max(e["dur_ns"], 1)
rel = {}
def put(i, m, role, off):
    if i not in rel or rel[i][0] > m:
        rel[i] = (m, role, off)
mid = 0
for mi, m in enumerate(sp):
    if m["name"] != "X":
        continue
    mid += 1
    own = [i for i in range(len(sp)) if tl(sp[i]) == tl(m)]
    pos = own.index(mi)
    ended = []
    for i in own[:pos]:
        s = sp[i]
        if s["dur_ns"] > 0 and s["ts_ns"] <= m["ts_ns"] < s["ts_ns"] + s["dur_ns"]:
            put(i, mid, "parent", s["ts_ns"] - m["ts_ns"])
        else:
            ended.append(i)
    for i in ended[len(ended) - B:] if B else []:
        put(i, mid, "before", sp[i]["ts_ns"] - m["ts_ns"])
    for i in own[pos + 1:pos + 1 + A]:
        put(i, mid, "after", sp[i]["ts_ns"] - m["ts_ns"])
    for i, s in enumerate(sp):
        if tl(s) == tl(m):
            continue
        if s["cat"] != "cpu_op":
            if "device" in m:
                if s.get("device") != m["device"]:
                    continue
            elif s["pid"] != m["pid"]:
                continue
        if s["ts_ns"] < end_e(m) and m["ts_ns"] < end_e(s):
            put(i, mid, "overlap", s["ts_ns"] - m["ts_ns"])
mid = 0
for i, s in enumerate(sp):
    if s["name"] == "X":
        mid += 1
        rel[i] = (mid, "match", 0)
for o in sorted([sp[i]["name"], sp[i]["pid"], sp[i]["tid"], sp[i]["ts_ns"],
        sp[i]["dur_ns"], r[0], r[1], r[2]] for i, r in rel.items()):
    print(json.dumps(o, separators=(",", ":")))
EOF
	for seed in 1 2 3 4; do
		"$PY" "$T/gen.py" "$seed" > "$T/s.ndjson"
		for o in "1 1" "2 0" "0 3"; do
			set -- $o
			expected=$("$PY" "$T/oracle.py" "$T/s.ndjson" "$1" "$2" | LC_ALL=C sort)
			runp "trace-context -B $1 -A $2 --overlapping X '$T/s.ndjson' | jq -c 'select(.type == \"span\") | [.name, .pid, .tid, .ts_ns, .dur_ns, .context.match, .context.role, .context.offset_ns]' | LC_ALL=C sort"
			assert_success
			assert_output "$expected"
			[ "$(printf '%s\n' "$output" | grep -c overlap)" -gt 5 ]
		done
	done
}
