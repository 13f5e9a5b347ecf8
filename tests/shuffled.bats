#!/usr/bin/env bats
# The same records in another order give the same answer in every program
# that reads spans (ndtrace(7), "Sources, timelines and order"): a real
# Kineto job of 8 ranks (launch table, gaps, steps), an 8-GPU XPlane
# profile (devices, -l timeline) and a CPU-only legacy trace (nesting of
# spans that start together).  tests/tools/shuffle_stream.py shuffles each
# source's records, keeping its meta first and its end last, and the stream
# order of spans of one timeline with the same start and duration.
load helpers
bats_require_minimum_version 1.5.0

setup_file() {
	D="$BATS_FILE_TMPDIR"
	chrome2ndjson -o "$D/dlrm.nd" "$FIXTURES"/chrome/dlrm_8ranks/*.gz
	xplane2ndjson -o "$D/tf8.nd" "$FIXTURES/xplane/tf_gpu_8gpu_worker.xplane.pb"
	chrome2ndjson -o "$D/legacy.nd" "$FIXTURES/torch-legacy/before.pt.trace.json.gz"
	for b in dlrm tf8 legacy; do
		"$PY" "$BATS_TEST_DIRNAME/tools/shuffle_stream.py" --seed 7 \
		    <"$D/$b.nd" >"$D/$b.shuf"
	done
}

# the shuffle is one: other lines in another order, the same lines
shuffled() {
	cmp -s "$1" "$2" && fail "$2 is not shuffled"
	[ "$(sort "$1" | md5sum)" = "$(sort "$2" | md5sum)" ] ||
	    fail "$2 does not hold the records of $1"
}

# PROG ARGS...: the answer for the ordered and the shuffled stream
same() {
	local D="$BATS_FILE_TMPDIR" b
	for b in dlrm tf8 legacy; do
		run "$@" "$D/$b.nd"
		[ "$status" -le 1 ] || fail "$* $b.nd: exit $status: $output"
		local want="$output" wst=$status
		run "$@" "$D/$b.shuf"
		[ "$status" -eq "$wst" ] || fail "$* $b.shuf: exit $status, ordered $wst: $output"
		[ "$output" = "$want" ] || {
			diff <(printf '%s\n' "$want") <(printf '%s\n' "$output") | head -5
			fail "$* $b.shuf differs from $b.nd"
		}
	done
}

@test "shuffled: the inputs are shuffled, and found out of order (a second reading)" {
	D="$BATS_FILE_TMPDIR"
	for b in dlrm tf8 legacy; do
		shuffled "$D/$b.nd" "$D/$b.shuf"
	done
	ND_DRIVE_STATS=1 run --separate-stderr trace-topk "$D/tf8.shuf"
	assert_success
	[ "$stderr" = "trace-topk: 2 passes, 0 bytes of stdin spooled" ] ||
	    fail "stats: $stderr"
}

@test "shuffled: trace-topk, trace-regions, trace-roofline, trace-mem" {
	same trace-topk
	same trace-topk --table -b class,name -k 5
	same trace-regions --tree --ops
	same trace-roofline --table
	same trace-mem --table
}

@test "shuffled: trace-steps, per source and per device" {
	same trace-steps
	same trace-steps -d -s
}

@test "trace-steps -d: devices in natural order of their names, not the order they came in" {
	T="$BATS_TEST_TMPDIR"
	# GPU:10 comes first; byte order would put it first too
	cat >"$T/nat.nd" <<'J'
{"type":"meta","schema":"ndtrace/1","source":"nat","format":"chrome","origin_ns":0}
{"type":"span","ts_ns":100,"dur_ns":50,"name":"k","pid":10,"tid":1,"device":"GPU:10","cat":"kernel","step":1}
{"type":"span","ts_ns":200,"dur_ns":50,"name":"k","pid":10,"tid":1,"device":"GPU:10","cat":"kernel","step":2}
{"type":"span","ts_ns":110,"dur_ns":40,"name":"k","pid":2,"tid":1,"device":"GPU:2","cat":"kernel","step":1}
{"type":"span","ts_ns":210,"dur_ns":40,"name":"k","pid":2,"tid":1,"device":"GPU:2","cat":"kernel","step":2}
{"type":"end","spans":4}
J
	run trace-steps -d "$T/nat.nd"
	assert_success
	run jq -r 'select(.type == "step") | [.device, .step, .dur_ns] | @tsv' <<<"$output"
	assert_output $'GPU:2\t1\t40\nGPU:2\t2\t40\nGPU:10\t1\t50\nGPU:10\t2\t50'
	# the devices of a real 8-GPU profile, shuffled, as sort -V has them
	run jq -r 'select(.type == "step") | .device' <<<"$(trace-steps -d "$BATS_FILE_TMPDIR/tf8.shuf")"
	assert_success
	[ -n "$output" ] && [ "$output" = "$(sort -V <<<"$output")" ] ||
	    fail "device order: $output"
}

@test "shuffled: trace-gaps, device and timeline levels (timelines by pid, tid)" {
	same trace-gaps
	same trace-gaps --totals -l timeline
	run trace-gaps -l timeline "$BATS_FILE_TMPDIR/dlrm.shuf"
	assert_success
	# within each source, the gap records by pid, tid, then start
	jq -rc 'select(.type == "meta") |= {src: .source} |
	    if .src then "meta" else select(.type == "gap") |
	    [.pid, .tid, .ts_ns] | @tsv end' <<<"$output" |
	    awk -F'\t' '$0 == "meta" { p = ""; next }
	    { k = sprintf("%020d %020d %020d", $1, $2, $3)
	      if (p != "" && k < p) { print "out of order: " $0; exit 1 }
	      p = k }' || fail "gap order"
}

@test "shuffled: trace-pipeline and trace-report (Markdown, JSON, HTML)" {
	same trace-pipeline --table
	same trace-report
	same trace-report --json
	# the strip: its devices and their order, and the host lane's titles
	same trace-report --html
}

@test "shuffled: trace-context without --max, and an error naming the keys the spans have" {
	# the answer of the records in time order whatever order they come
	# in, the ordered stream's too (xplane2ndjson writes its timelines
	# one after another)
	same trace-context -C 2 --regex 'nccl|all-reduce|Memcpy|^copy'
	same trace-context -C 1 --overlapping --table --regex 'nccl|all-reduce|Memcpy|^copy'
	# --by with a key no counted span has: the keys listed are those of
	# the spans counted (device ops), not of whatever came first
	D="$BATS_FILE_TMPDIR"
	run trace-topk -b scope "$D/tf8.shuf"
	assert_failure 2
	want=$output
	run trace-topk -b scope "$D/tf8.nd"
	assert_failure 2
	[ "$output" = "$want" ] || fail "shuffled: $want"
	# the keys listed are those of the device ops (tools/device_rule.py),
	# top-level and args.*, in byte order
	want=$(PYTHONPATH="$BATS_TEST_DIRNAME/tools" "$PY" -c '
import json, sys
from device_rule import kind
keys = set()
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r.get("type") == "span" and kind(r) == "device":
        keys.update(r)
        keys.update("args." + k for k in r.get("args", {}))
print(", ".join(sorted(keys)))' "$D/tf8.nd")
	assert_equal "$output" "trace-topk: --by scope: no span has this key; the spans have: $want"
}

@test "shuffled: past 200 keys the --by error lists the 200 first in byte order, whatever order the spans come in" {
	D="$BATS_TEST_TMPDIR"
	# 300 spans, each with an args key of its own
	"$PY" -c '
import json
for i in range(300):
    print(json.dumps({"type": "span", "name": "op", "ts_ns": i * 10,
                      "dur_ns": 5, "pid": 1, "tid": 1,
                      "args": {"k%03d" % ((i * 7) % 300): 1}}))' >"$D/a.nd"
	"$PY" "$BATS_TEST_DIRNAME/tools/shuffle_stream.py" --seed 3 <"$D/a.nd" >"$D/b.nd"
	shuffled "$D/a.nd" "$D/b.nd"
	want=$("$PY" -c '
keys = ["args.k%03d" % i for i in range(300)] + ["args", "dur_ns", "name",
        "pid", "tid", "ts_ns", "type"]
print(", ".join(sorted(keys)[:200]) + ", ...")')
	for f in a b; do
		run trace-topk --timelines all -b args.nokey "$D/$f.nd"
		assert_failure 2
		assert_output "trace-topk: --by args.nokey: no span has this key; the spans have: $want"
	done
}

@test "shuffled: the report's launch table on a shuffled job equals the ordered one and jq's count" {
	D="$BATS_FILE_TMPDIR"
	run trace-report --json "$D/dlrm.shuf"
	assert_success
	got=$(jq -r '.launch_ops | [.device_ops, .device_ns, .unplaced_ops] | @tsv' <<<"$output")
	# device ops whose correlation id is a host span's in the same source
	want=$(jq -sr 'reduce .[] as $r ({src: -1, out: []};
	    if $r.type == "meta" then .src += 1 else . end |
	    if $r.type == "span" and ($r.args.correlation | type) == "number"
	    then .out += [[.src, ($r.class != "host"), $r.args.correlation,
	        $r.dur_ns]] else . end) | .out | group_by(.[0]) |
	    map((map(select(.[1] | not) | {(.[2] | tostring): 1}) | add // {})
	        as $h | map(select(.[1] and $h[.[2] | tostring] != null))) |
	    add | [length, (map(.[3]) | add), 0] | @tsv' "$D/dlrm.shuf")
	[ "$got" = "$want" ] || fail "launch $got, jq $want"
	[ "$got" = $'2116\t57197000\t0' ] || fail "launch $got"
}

# The records of each source in time order: meta, spans by start (the
# longer first, then stream order), end; other records dropped.
timesort() {
	"$PY" -c '
import json, sys
out = sys.stdout
meta, spans, end = None, [], None
def flush():
    global meta, spans, end
    if meta is not None:
        out.write(meta)
    spans.sort(key=lambda s: (s[0], -s[1], s[2]))
    out.writelines(s[3] for s in spans)
    if end is not None:
        out.write(end)
    meta, spans, end = None, [], None
for line in sys.stdin:
    r = json.loads(line)
    if r["type"] == "meta":
        flush()
        meta = line
    elif r["type"] == "end":
        end = line
    elif r["type"] == "span":
        spans.append((r["ts_ns"], r["dur_ns"], len(spans), line))
flush()
' <"$1"
}

@test "shuffled: trace-context answers as for the same records in time order (file, pipe, --table, --overlapping, --max)" {
	D="$BATS_FILE_TMPDIR"
	for b in dlrm tf8; do
		timesort "$D/$b.shuf" >"$D/$b.ts"
		cmp -s "$D/$b.ts" "$D/$b.nd" && fail "$b: already in time order"
		for opts in "-C 2" "-A 1 -B 3 --table" "-C 1 --overlapping" "-C 2 --max 40"; do
			run trace-context $opts --regex 'nccl|all-reduce|Memcpy|^copy' "$D/$b.ts"
			assert_success
			want=$output
			[ "$(grep -c '"role":"match"\|^match ' <<<"$want")" -ge 8 ] || fail "$b $opts: few matches"
			run trace-context $opts --regex 'nccl|all-reduce|Memcpy|^copy' "$D/$b.shuf"
			assert_success
			[ "$output" = "$want" ] || fail "$b $opts: differs"
			run sh -c 'cat "$1" | trace-context '"$opts"' --regex "nccl|all-reduce|Memcpy|^copy"' sh "$D/$b.shuf"
			[ "$output" = "$want" ] || fail "$b $opts: differs from a pipe"
		done
	done
}
