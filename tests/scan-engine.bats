#!/usr/bin/env bats
# The exclusive-time engine (lib/engines/nd_scan) and its one order policy
# (lib/core/nd_drive): a stream out of order gives the same answer from a file,
# from stdin redirected from it, from a pipe (spooled and read again) and
# with --unordered, in every program that reads through them; the report's
# top ops are trace-topk's rows.

load helpers

setup() {
	T=$(mktemp -d)
}

teardown() {
	rm -rf "$T"
}

# shuffle IN OUT SEED: every source's records but its meta (first) and end
# (last) in a seeded random order
shuffle() {
	$PY - "$1" "$2" "$3" <<'EOF'
import json, random, sys
src, dst, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
rnd = random.Random(seed)
out, body, tail = [], [], []
def flush():
    rnd.shuffle(body)
    out.extend(body); out.extend(tail)
    body.clear(); tail.clear()
for line in open(src):
    t = json.loads(line)["type"]
    if t == "meta":
        flush(); out.append(line)
    elif t == "end":
        tail.append(line)
    else:
        body.append(line)
flush()
open(dst, "w").writelines(out)
EOF
}

# same OUTFILE-PREFIX CMD...: CMD on $T/s.ndjson given as a file, as
# redirected stdin, on a pipe and (when the program has it) with
# --unordered; every answer must be the same bytes
same() {
	local p=$1
	shift
	"$@" "$T/s.ndjson" > "$T/$p.file" &&
	    "$@" < "$T/s.ndjson" > "$T/$p.redir" &&
	    cat "$T/s.ndjson" | "$@" > "$T/$p.pipe" &&
	    cmp "$T/$p.file" "$T/$p.redir" &&
	    cmp "$T/$p.file" "$T/$p.pipe" &&
	    [ -s "$T/$p.file" ]
}

@test "out of order: file, redirected stdin and pipe agree in trace-topk, trace-regions, trace-roofline, trace-report" {
	need_fixtures
	chrome2ndjson "$FIXTURES/chrome/hta_alexnet.json.gz" > "$T/a.ndjson"
	shuffle "$T/a.ndjson" "$T/s.ndjson" 7
	# the shuffled pipe is read twice: spans came too late to nest
	run bash -c "cat '$T/s.ndjson' | ND_DRIVE_STATS=1 trace-topk 2>&1 >/dev/null"
	assert_success
	assert_output "trace-topk: 2 passes, $(stat -c %s "$T/s.ndjson") bytes of stdin spooled"
	run same topk trace-topk -k 0
	assert_success
	run same regions trace-regions
	assert_success
	run same roof trace-roofline -k 0
	assert_success
	run same rep trace-report --json -k 0
	assert_success
	run same md trace-report
	assert_success
	# and --unordered (every timeline buffered, one reading) agrees
	trace-topk -k 0 --unordered "$T/s.ndjson" | cmp - "$T/topk.file"
	trace-regions --unordered "$T/s.ndjson" | cmp - "$T/regions.file"
	trace-report --json -k 0 --unordered "$T/s.ndjson" | cmp - "$T/rep.file"
	# an independent figure: per name, count and total_ns are those of
	# the spans on the GPU (jq and awk over the ordered stream)
	jq -r 'select(.type == "span" and .device == "GPU:0") | [.name, .dur_ns] | @tsv' "$T/a.ndjson" |
	    awk -F'\t' '{ n[$1]++; t[$1] += $2 } END { for (k in t) print k "\t" n[k] "\t" t[k] }' | sort > "$T/want"
	jq -r '[.name, .count, .total_ns] | @tsv' "$T/topk.file" | sort > "$T/got"
	[ "$(wc -l < "$T/got")" -gt 10 ]
	run diff "$T/want" "$T/got"
	assert_success
}

@test "out of order: trace-diff reads both sides the same way (file, pipe)" {
	need_fixtures
	chrome2ndjson "$FIXTURES/chrome/tracelens_h100_qwen.json.gz" > "$T/q.ndjson"
	shuffle "$T/q.ndjson" "$T/s.ndjson" 3
	sed '1s/"source":"[^"]*"/"source":"before"/' "$T/q.ndjson" > "$T/b.ndjson"
	trace-diff --allow-same "$T/b.ndjson" "$T/s.ndjson" > "$T/d.file" || [ $? = 1 ]
	run bash -c "cat '$T/s.ndjson' | ND_DRIVE_STATS=1 trace-diff --allow-same '$T/b.ndjson' - 2>'$T/err' | cmp - '$T/d.file'"
	assert_success
	run cat "$T/err"
	assert_line "trace-diff: 2 passes, $(stat -c %s "$T/s.ndjson") bytes of stdin spooled"
	# the shuffled side has the same exclusive time per key as the ordered
	# one: every key delta is 0
	run bash -c "jq -r 'select(.type == \"delta\" and .kind == \"key\") | [.delta_ns, .status] | @tsv' '$T/d.file' | sort -u"
	assert_output "$(printf '0\tunchanged')"
}

@test "an ordered stream on a pipe is read once; --unordered spools nothing" {
	need_fixtures
	chrome2ndjson "$FIXTURES/chrome/hta_alexnet.json.gz" > "$T/x.ndjson"
	for p in trace-topk trace-regions trace-report; do
		run bash -c "cat '$T/x.ndjson' | ND_DRIVE_STATS=1 $p 2>&1 >/dev/null"
		assert_success
		assert_output "$p: 1 pass, $(stat -c %s "$T/x.ndjson") bytes of stdin spooled"
		run bash -c "cat '$T/x.ndjson' | ND_DRIVE_STATS=1 $p --unordered 2>&1 >/dev/null"
		assert_output "$p: 1 pass, 0 bytes of stdin spooled"
		run bash -c "ND_DRIVE_STATS=1 $p '$T/x.ndjson' 2>&1 >/dev/null"
		assert_output "$p: 1 pass, 0 bytes of stdin spooled"
	done
	run bash -c "cat '$T/x.ndjson' | ND_DRIVE_STATS=1 trace-diff --allow-same '$T/x.ndjson' - 2>&1 >/dev/null"
	assert_line "trace-diff: 1 pass, $(stat -c %s "$T/x.ndjson") bytes of stdin spooled"
	# what never reads twice (each source held whole, or no nesting)
	# spools nothing; trace-gaps and trace-context may read twice
	for p in trace-steps trace-pipeline trace-roofline; do
		run bash -c "cat '$T/x.ndjson' | ND_DRIVE_STATS=1 $p 2>&1 >/dev/null | grep -F 'pass,'"
		assert_output "$p: 1 pass, 0 bytes of stdin spooled"
	done
	for p in trace-gaps "trace-context aten::mm"; do
		run bash -c "cat '$T/x.ndjson' | ND_DRIVE_STATS=1 $p 2>&1 >/dev/null"
		assert_output "${p%% *}: 1 pass, $(stat -c %s "$T/x.ndjson") bytes of stdin spooled"
	done
}

@test "the spool: a temporary file past ND_SPOOL_MEM, gzip on a pipe, stdin named twice" {
	M='{"type":"meta","schema":"ndtrace/1","source":"s","origin_ns":0}'
	{
		echo "$M"
		for i in $(seq 0 199); do
			echo "{\"type\":\"span\",\"ts_ns\":$((i * 100)),\"dur_ns\":50,\"name\":\"a$((i % 7))\",\"pid\":1,\"tid\":$((i % 3))}"
		done
		# too late on every timeline: starts inside finished spans
		for t in 0 1 2; do
			echo "{\"type\":\"span\",\"ts_ns\":$((t * 100 + 10)),\"dur_ns\":5,\"name\":\"late\",\"pid\":1,\"tid\":$t}"
		done
	} > "$T/s.ndjson"
	trace-topk -k 0 "$T/s.ndjson" > "$T/want"
	# late spans are children: 'late' keeps 5 ns each, their parents lose them
	run jq -r 'select(.name == "late") | [.count, .self_ns] | @tsv' "$T/want"
	assert_output "$(printf '3\t15')"
	run bash -c "cat '$T/s.ndjson' | ND_SPOOL_MEM=100 TMPDIR='$T' trace-topk -k 0 | cmp - '$T/want'"
	assert_success
	# nothing is left in TMPDIR (the spool file is unlinked at once)
	run bash -c "ls '$T' | grep -c spool"
	assert_output 0
	run bash -c "gzip -c '$T/s.ndjson' | ND_DRIVE_STATS=1 trace-topk -k 0 2>'$T/err' | cmp - '$T/want'"
	assert_success
	run cat "$T/err"
	assert_output --partial "trace-topk: 2 passes, "
	# "-" twice: the pipe is read once, the second "-" is empty both times
	run bash -c "cat '$T/s.ndjson' | trace-topk -k 0 - - | jq -r 'select(.name == \"late\") | .self_ns'"
	assert_output 15
}

@test "trace-report: device ops out of order for the gaps only are read again, not refused" {
	M='{"type":"meta","schema":"ndtrace/1","source":"g","origin_ns":0}'
	# kernels of one stream in reverse start order: each still nests
	# (nothing finished before it), but the gap finder needs start order
	{
		echo "$M"
		for i in 9 8 7 6 5 4 3 2 1 0; do
			echo "{\"type\":\"span\",\"ts_ns\":$((i * 1000)),\"dur_ns\":600,\"name\":\"k$((i % 2))\",\"cat\":\"kernel\",\"pid\":0,\"tid\":7,\"device\":\"GPU:0\"}"
		done
	} > "$T/s.ndjson"
	run bash -c "cat '$T/s.ndjson' | ND_DRIVE_STATS=1 trace-report --json 2>'$T/err' > '$T/p.json'"
	assert_success
	run cat "$T/err"
	assert_output "trace-report: 2 passes, $(stat -c %s "$T/s.ndjson") bytes of stdin spooled"
	trace-report --json --unordered "$T/s.ndjson" | cmp - "$T/p.json"
	trace-report --json "$T/s.ndjson" | cmp - "$T/p.json"
	# 9 gaps of 400 ns between the 10 kernels
	run jq -c '[.gaps.count, .gaps.total_ns]' "$T/p.json"
	assert_output "[9,3600]"
}

@test "trace-report: a memory sample before the span it falls in is attributed, not lost" {
	# the sample at 40 comes before aten::linear [0,100) of its timeline:
	# the stream is out of order for the memory engine alone (it used to
	# give op and scope null, silently)
	{
		printf '{"type":"meta","schema":"ndtrace/1","source":"m.json","format":"chrome","origin_ns":0,"host":null,"rank":0,"producer":"hand 1"}\n'
		printf '{"type":"instant","ts_ns":40,"name":"[memory]","pid":1,"tid":1,"args":{"Total Allocated":3000,"Total Reserved":4096,"Bytes":2000,"Device Type":1,"Device Id":0}}\n'
		printf '{"type":"span","ts_ns":0,"dur_ns":100,"name":"aten::linear","pid":1,"tid":1,"cat":"cpu_op","scope":"model/fc1","step":3}\n'
		printf '{"type":"span","ts_ns":10,"dur_ns":20,"name":"aten::empty","pid":1,"tid":1,"cat":"cpu_op","scope":"model/fc1","step":3}\n'
	} > "$T/s.ndjson"
	run bash -c "cat '$T/s.ndjson' | ND_DRIVE_STATS=1 trace-report --json 2>'$T/err' | jq -c '.memory[] | [.device, .ts_ns, .allocated_bytes, .step, .op, .scope]'"
	assert_output '["GPU:0",40,3000,3,"aten::linear","model/fc1"]'
	run cat "$T/err"
	assert_output --partial "trace-report: 2 passes, "
	# trace-mem (every span kept) says the same
	run bash -c "trace-mem '$T/s.ndjson' | jq -c 'select(.type==\"mem_peak\") | [.device, .ts_ns, .allocated_bytes, .step, .op, .scope]'"
	assert_output '["GPU:0",40,3000,3,"aten::linear","model/fc1"]'
}

@test "trace-report's top ops are trace-topk's rows (Kineto, XPlane)" {
	need_fixtures
	chrome2ndjson "$FIXTURES/chrome/hta_alexnet.json.gz" > "$T/hta_alexnet.ndjson"
	chrome2ndjson "$FIXTURES/chrome/tracelens_h100_qwen.json.gz" > "$T/qwen.ndjson"
	xplane2ndjson "$FIXTURES/xplane/tpu_inference_4core.xplane.pb" > "$T/tpu.ndjson"
	for f in hta_alexnet qwen tpu; do
		trace-report --json -k 0 "$T/$f.ndjson" |
		    jq -c '.ops.ops[] | [.name, .count, .self_ns, .total_ns]' > "$T/r"
		trace-topk -k 0 "$T/$f.ndjson" |
		    jq -c 'select(.other | not) | [.name, .count, .self_ns, .total_ns]' > "$T/t"
		[ "$(wc -l < "$T/t")" -gt 10 ]
		run cmp "$T/r" "$T/t"
		assert_success
	done
}

@test "trace-diff: memory does not grow with an ordered input" {
	gen-stream -n 10000 > "$T/small.ndjson"
	gen-stream -n 100000 > "$T/big.ndjson"
	sed '1s/"source":"[^"]*"/"source":"other"/' "$T/small.ndjson" > "$T/small2.ndjson"
	sed '1s/"source":"[^"]*"/"source":"other"/' "$T/big.ndjson" > "$T/big2.ndjson"
	# (the sanitizer build keeps freed memory in a quarantine: not here)
	export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0"
	/usr/bin/time -f %M -o "$T/m1" trace-diff "$T/small.ndjson" "$T/small2.ndjson" > /dev/null
	/usr/bin/time -f %M -o "$T/m2" trace-diff "$T/big.ndjson" "$T/big2.ndjson" > /dev/null
	# ten times the spans: the resident set grows by less than 4 MiB
	# (buffering every span took about 120 bytes each: +10 MiB)
	run awk -v a="$(tail -1 "$T/m1")" -v b="$(tail -1 "$T/m2")" 'BEGIN { print (b - a < 4096) ? "flat" : "grows " a " -> " b " KiB" }'
	assert_output "flat"
}

# The gaps table names, for each payload, the marker and region of its
# longest gap (the earliest on ties), and the report's longest gap is the
# earliest of the longest: before, the first gap found, which depends on
# the order the gaps are found in (a reversed TPU stream named copy-done.2
# where the ordered one named copy-start.1).
@test "trace-report: the gaps table does not depend on the order of the records" {
	need_fixtures
	xplane2ndjson "$FIXTURES/xplane/tpu_inference_4core.xplane.pb" > "$T/a.ndjson"
	shuffle "$T/a.ndjson" "$T/s.ndjson" 3
	trace-report --json "$T/a.ndjson" > "$T/a.json"
	trace-report --json "$T/s.ndjson" > "$T/s.json"
	cmp "$T/a.json" "$T/s.json"
	# independent: per payload, the marker of its longest gap (earliest
	# on ties) from trace-gaps' records; the report lists the top payloads
	trace-gaps "$T/a.ndjson" | jq -sc '[.[] | select(.type == "gap")]
	    | group_by(.payload // "?") | map({p: (.[0].payload // "?"),
	    n: length, m: (sort_by(-.dur_ns, .ts_ns) | .[0].marker)})
	    | map({(.p): {n, m}}) | add' > "$T/want"
	jq -c --slurpfile w "$T/want" '[.gaps.payloads[]
	    | select($w[0][.payload] != {n: .count, m: .marker})]' \
	    "$T/a.json" > "$T/bad"
	[ "$(cat "$T/bad")" = "[]" ]
	[ "$(jq '.gaps.payloads | length' "$T/a.json")" -gt 3 ]
}
