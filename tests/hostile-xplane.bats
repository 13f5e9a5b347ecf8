#!/usr/bin/env bats
# Hostile XPlane inputs and the input cap (issue 18, items 13 and 18):
# ids at the edges of int64 and 2^53, times whose duration leaves 2^53,
# strings and records longer than a reader's line, gzip bombs, /dev/zero,
# files of millions of empty planes.  Each file is built here by a small
# python3 protobuf encoder (no generated code), run under a time limit
# and, outside the sanitizer build, a memory limit (ASan reserves terabytes
# of address space, so `ulimit -v` cannot apply to it there), and what
# comes out is checked with python3 or trace-check, not with the program
# under test.

load helpers

setup() {
	T="$BATS_TEST_TMPDIR"
}

# xpb OUT: run the python3 script on stdin with tests/tools/xpb.py loaded;
# OUT is sys.argv[1].
xpb() {
	"$PY" -c "import sys; sys.path.insert(0, '$BATS_TEST_DIRNAME/tools'); from xpb import *
$(cat)" "$@"
}

# ---------- item 13: what the writer emits, trace-check takes ----------

# The end record's warning for a file with relative times and no start.
REL='line timestamps are relative and the file has no profile_start_time: origin_ns is not a time since the epoch'

@test "ids at the int64 and 2^53 edges: pids and tids unique, within 2^53, as documented" {
	xpb "$T/ids.pb" <<'EOF'
M = (1 << 63) - 1
S = 1 << 53
ev = [event(1, 0, 1000)]
def ln(i, d=None):
    return line(i, "l%d" % i, 1000, ev, d)
# lines of the first plane: display_id 2^53-1 twice, id INT64_MAX (folds to
# 2^53-1 too), id 2^53, id 0
p1 = plane(M, "/device:TPU:0", [ln(7, S - 1), ln(8, S - 1), ln(M), ln(S), ln(0)],
           [(1, "op")])
ps = [p1] + [plane(i, "p%d" % n, [ln(1)], [(1, "op")])
             for n, i in enumerate([M, S - 1, S, -(1 << 63)])]
write(sys.argv[1], space(ps))
EOF
	bounded 20 1000000 "xplane2ndjson '$T/ids.pb' > '$T/ids.ndjson'"
	assert_success
	run trace-check "$T/ids.ndjson"
	assert_success
	# The rule of xplane2ndjson(1), worked by hand: ids beyond 2^53 keep
	# their low 53 bits (INT64_MAX -> 2^53-1, INT64_MIN -> 0); a repeated
	# pid or tid gets max+1 while that is within 2^53, else the lowest
	# integer unused from 0 up.
	run "$PY" - "$T/ids.ndjson" <<'EOF'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
spans = [r for r in recs if r["type"] == "span"]
pids = []
for r in spans:
    if r["pid"] not in pids:
        pids.append(r["pid"])
print(pids)
print([r["tid"] for r in spans if r["process"] == "/device:TPU:0"])
print(len({(r["pid"], r["tid"]) for r in spans}), len(spans))
EOF
	assert_output "[9007199254740991, 1, 2, 9007199254740992, 0]
[9007199254740991, 1, 2, 9007199254740992, 0]
9 9"
}

@test "an event whose dur_ns would pass 2^53 is skipped as time_out_of_range" {
	xpb "$T/dur.pb" <<'EOF'
S = 1 << 53
# starts at -2^53 ns, lasts 9.2e15 ns (> 2^53): both ends are within 2^53
big = event(1, -S * 1000, 9200000000000000000)
write(sys.argv[1], space([plane(1, "/device:TPU:0",
    [line(1, "XLA Ops", 0, [big, event(1, 0, 1000)])], [(1, "op")])]))
EOF
	run xplane2ndjson "$T/dur.pb"
	assert_success
	echo "$output" > "$T/dur.ndjson"
	run trace-check "$T/dur.ndjson"
	assert_success
	run jq -c 'select(.type == "span" or .type == "end") |
	    if .type == "span" then [.ts_ns, .dur_ns]
	    else [.spans, .skipped.time_out_of_range] end' "$T/dur.ndjson"
	assert_output "[0,1]
[1,1]"
}

@test "a 64 MiB string stat is cut to 1 MiB at a character boundary and counted; every line stays readable" {
	xpb "$T/str.pb" <<'EOF'
# 2^20 - 1 'a', then an 'é' across the 1 MiB mark, then 64 MiB of 'b'
s = b"a" * ((1 << 20) - 1) + "é".encode() + b"b" * (64 << 20)
write(sys.argv[1], space([plane(1, "/device:TPU:0",
    [line(1, "XLA Ops", 0, [event(1, 0, 1000, [stat(2, s=s)])])],
    [(1, "op")], [(2, "s")])]))
EOF
	bounded 120 1500000 "xplane2ndjson '$T/str.pb' > '$T/str.ndjson'"
	assert_success
	run trace-check "$T/str.ndjson"
	assert_success
	run "$PY" - "$T/str.ndjson" <<'EOF'
import json, sys
lines = open(sys.argv[1], "rb").read().split(b"\n")
print(max(len(l) for l in lines) < (64 << 20))
recs = [json.loads(l) for l in lines if l]
v = recs[1]["args"]["s"]
print(len(v), set(v))
print(recs[-1]["warnings"])
EOF
	assert_output "True
1048575 {'a'}
['1 strings longer than 1 MiB were cut to 1 MiB', '$REL']"
}

@test "a record over 32 MiB with its args is written without them, and counted" {
	xpb "$T/args.pb" <<'EOF'
# 12 stats of 1 MiB of U+0001, 6 MiB each as JSON (\u0001): 72 MiB of args
st = [stat(10 + k, s=b"\x01" * (1 << 20)) for k in range(12)]
ev = [event(1, 0, 1000, st), event(1, 2000, 1000, [stat(10, s="small")])]
write(sys.argv[1], space([plane(1, "/device:TPU:0",
    [line(1, "XLA Ops", 0, ev)], [(1, "op")],
    [(10 + k, "s%d" % k) for k in range(12)])]))
EOF
	bounded 120 2000000 "xplane2ndjson '$T/args.pb' > '$T/args.ndjson'"
	assert_success
	run trace-check "$T/args.ndjson"
	assert_success
	run "$PY" - "$T/args.ndjson" <<'EOF'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
for r in recs:
    if r["type"] == "span":
        print(r["ts_ns"], r.get("args"))
print(recs[-1]["warnings"])
EOF
	assert_output "0 None
2 {'s0': 'small'}
['1 records were written without their args (over 32 MiB with them)', '$REL']"
}

# ---------- item 18: the input cap ----------

@test "a 1 MB gzip of 1 GiB of empty planes is refused early, naming the file and the cap" {
	"$PY" - "$T/bomb.gz" <<'EOF'
import gzip, sys
m = gzip.compress(b"\x0a\x00" * (1 << 19), 9, mtime=0)   # 1 MiB each
open(sys.argv[1], "wb").write(m * 1024)                   # members
EOF
	[ "$(wc -c < "$T/bomb.gz")" -lt 2000000 ]
	bounded 120 2000000 "xplane2ndjson '$T/bomb.gz'"
	assert_failure 2
	assert_output --regexp "^xplane2ndjson: $T/bomb.gz: more than 16 GiB to hold in memory \(the file and the tables of its [0-9]+ planes, 0 lines and 0 metadata\), the input cap \(set NDTRACE_MAX_INPUT higher to read it\)$"
}

@test "a million empty planes convert in linear time and memory" {
	"$PY" -c 'import sys; open(sys.argv[1], "wb").write(b"\x0a\x00" * (1 << 20))' "$T/empty.pb"
	bounded 30 1000000 "xplane2ndjson '$T/empty.pb' > '$T/empty.ndjson'"
	assert_success
	run jq -c 'select(.type == "end") | [.planes, .lines, .spans]' "$T/empty.ndjson"
	assert_output "[1048576,0,0]"
}

@test "/dev/zero and a gzip of zeros are refused at once, as XPlane input" {
	bounded 10 500000 "xplane2ndjson /dev/zero"
	assert_failure 2
	assert_output "xplane2ndjson: /dev/zero: byte 0: invalid field number 0 (wire type 0)"
	bounded 10 500000 "head -c 100000000 /dev/zero | gzip -1 | xplane2ndjson"
	assert_failure 2
	assert_output "xplane2ndjson: <stdin>: byte 0: invalid field number 0 (wire type 0)"
}

@test "a field longer than the cap, on a pipe, is refused without reading on" {
	bounded 10 500000 "{ printf '\\x0a\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\x7f'; cat /dev/zero; } | xplane2ndjson"
	assert_failure 2
	assert_output "xplane2ndjson: <stdin>: more than 16 GiB to hold in memory (the field at byte 0 claims 72057594037927944 bytes), the input cap (set NDTRACE_MAX_INPUT higher to read it)"
}

@test "NDTRACE_MAX_INPUT caps the gzip data of every reader of nd_in" {
	yes '{"type":"meta","schema":"ndtrace/1","source":"s","format":"f","origin_ns":0,"producer":"p"}' |
	    head -c 3000000 | gzip -1 > "$T/big.ndjson.gz"
	for p in trace-check trace-topk chrome2ndjson; do
		NDTRACE_MAX_INPUT=1M run "$p" "$T/big.ndjson.gz"
		assert_failure 2
		assert_output "$p: $T/big.ndjson.gz: gzip data decompresses to more than 1 MiB, the input cap (set NDTRACE_MAX_INPUT higher to read it)"
	done
	"$PY" -c 'import sys; sys.stdout.buffer.write(b"\x0a\x00" * 1500000)' | gzip -1 > "$T/planes.pb.gz"
	NDTRACE_MAX_INPUT=1M run xplane2ndjson "$T/planes.pb.gz"
	assert_failure 2
	assert_output "xplane2ndjson: $T/planes.pb.gz: gzip data decompresses to more than 1 MiB, the input cap (set NDTRACE_MAX_INPUT higher to read it)"
	# raised, or off: the same file converts
	NDTRACE_MAX_INPUT=1G run xplane2ndjson "$T/planes.pb.gz"
	assert_success
	assert_line --index 1 --partial '"planes":1500000,'
	NDTRACE_MAX_INPUT=0 run trace-check -q "$T/big.ndjson.gz"
	assert_failure 1
}

@test "NDTRACE_MAX_INPUT caps what xplane2ndjson and trace-mem hold, plain files too" {
	gen-xplane --tiny -o "$T/tiny.pb"
	n=$(wc -c < "$T/tiny.pb")
	NDTRACE_MAX_INPUT=$((n - 1)) run xplane2ndjson "$T/tiny.pb"
	assert_failure 2
	assert_output "xplane2ndjson: $T/tiny.pb: more than $((n - 1)) bytes to hold in memory, the input cap (set NDTRACE_MAX_INPUT higher to read it)"
	# the file and its tables (a few hundred bytes per plane, line and
	# metadata entry) fit
	NDTRACE_MAX_INPUT=$((n + 20000)) run xplane2ndjson "$T/tiny.pb"
	assert_success
	# through a pipe: read, then refused
	NDTRACE_MAX_INPUT=$((n - 1)) runp "cat '$T/tiny.pb' | xplane2ndjson"
	assert_failure 2
	assert_output --partial "xplane2ndjson: <stdin>: more than $((n - 1)) bytes to hold in memory"
	# a big file (mapped when allowed) is refused from its size alone
	truncate -s 40M "$T/sparse.pb"
	NDTRACE_MAX_INPUT=32M bounded 10 500000 "xplane2ndjson '$T/sparse.pb'"
	assert_failure 2
	assert_output "xplane2ndjson: $T/sparse.pb: more than 32 MiB to hold in memory, the input cap (set NDTRACE_MAX_INPUT higher to read it)"
	head -c 3000 /dev/urandom > "$T/snap.pickle"
	NDTRACE_MAX_INPUT=1K run trace-mem --snapshot "$T/snap.pickle"
	assert_failure 2
	assert_output "trace-mem: $T/snap.pickle: more than 1 KiB to hold in memory, the input cap (set NDTRACE_MAX_INPUT higher to read it)"
}

@test "an invalid NDTRACE_MAX_INPUT is a usage error" {
	gen-xplane --tiny -o "$T/tiny.pb"
	for v in 12X -5 1.5G G 99999999999T; do
		NDTRACE_MAX_INPUT=$v run xplane2ndjson "$T/tiny.pb"
		assert_failure 2
		assert_output "xplane2ndjson: NDTRACE_MAX_INPUT: invalid size '$v' (bytes, or with K, M, G or T, e.g. 64G; 0 for no cap)"
	done
	for v in 64G 64GiB 512m 100000; do
		NDTRACE_MAX_INPUT=$v run xplane2ndjson "$T/tiny.pb"
		assert_success
	done
}

@test "sparse metadata ids are found (the binary search of a plane's ids)" {
	xpb "$T/sparse.pb" <<'EOF'
ids = [10**12, 5, -3, 1 << 62, 77]
ev = [event(k, i * 1000, 1000) for i, k in enumerate(ids)]
write(sys.argv[1], space([plane(1, "/device:TPU:0",
    [line(1, "XLA Ops", 0, ev)], [(k, "op%d" % k) for k in ids])]))
EOF
	run xplane2ndjson "$T/sparse.pb"
	assert_success
	echo "$output" | jq -r 'select(.type == "span") | .name' > "$T/names"
	run cat "$T/names"
	assert_output "op1000000000000
op5
op-3
op4611686018427387904
op77"
}

# ---------- item 7: trace-mem's times ----------

@test "trace-mem --table: peak times count from the start of the profile, not the raw clock" {
	need_fixtures
	chrome2ndjson "$FIXTURES/chrome/tracelens_h100_qwen.json.gz" > "$T/s.ndjson"
	# independently: the GPU:0 peak's ts_ns from the records, less the
	# source's earliest ts_ns, in ms truncated to the microsecond
	peak=$(trace-mem "$T/s.ndjson" | jq 'select(.type == "mem_peak" and .device == "GPU:0") | .ts_ns')
	start=$(jq -s 'map(select(.ts_ns != null) | .ts_ns) | min' "$T/s.ndjson")
	want=$(awk -v p="$peak" -v s="$start" 'BEGIN { d = int((p - s) / 1000); printf "%d.%03d ms", d / 1000, d % 1000 }')
	[ "$want" = "46.587 ms" ]
	run trace-mem --table "$T/s.ndjson"
	assert_success
	assert_line "  peak          1.95 GiB allocated at $want, reserved 2.45 GiB"
}
