#!/usr/bin/env bats
# Issue 22: PyTorch profile directories in chrome2ndjson (every trace of a
# directory, the newest capture of each worker, --list, --run,
# --all-captures), HTA's memory timeline in trace-mem (peaks checked by
# HTA's own algorithm in python3), and other JSON named in one line.

load helpers

DLRM="$FIXTURES/chrome/dlrm_8ranks"
MEMTL="$FIXTURES/memory/hta_memory_timeline.raw.gz"

setup() {
	T="$BATS_TEST_TMPDIR"
}

# a one-span trace named $1 (a source tells which file it came from)
tiny() {
	printf '{"traceEvents":[{"ph":"X","name":"%s","pid":1,"tid":1,"ts":1,"dur":2}]}\n' "$1"
}

@test "a directory of the DLRM ranks: the same stream as its files one by one, ranks from distributedInfo" {
	need_fixtures
	chrome2ndjson "$DLRM" > "$T/dir.nd"
	chrome2ndjson "$DLRM"/*.pt.trace.json.gz > "$T/files.nd"
	cmp "$T/dir.nd" "$T/files.nd"
	run chrome2ndjson --list "$DLRM/"
	assert_success
	assert_output "$(ls "$DLRM"/*.pt.trace.json.gz | sed 's|//*|/|g')"
	# the rank of each source is its distributedInfo.rank (python3 reads it)
	run jq -r 'select(.type == "meta") | "\(.source | split("/") | last) \(.rank)"' "$T/dir.nd"
	assert_output "$("$PY" -c '
import gzip, json, os, sys
d = sys.argv[1]
for f in sorted(os.listdir(d)):
    print(f, json.load(gzip.open(os.path.join(d, f)))["distributedInfo"]["rank"])' "$DLRM")"
}

@test "captures: the newest of each worker by default, every one with --all-captures; --run picks a run" {
	P="$T/prof"
	mkdir -p "$P"
	# worker names may hold dots (a host name); times in ms or in ns
	tiny a1 > "$P/host.a_11.1694128201545.pt.trace.json"
	tiny a2 | gzip > "$P/host.a_11.1694128201600.pt.trace.json.gz"
	tiny b1 > "$P/host.b_12.1694128201545000000.pt.trace.json"
	tiny b2 > "$P/host.b_12.999.pt.trace.json"
	tiny c > "$P/rank3.json"
	echo notes > "$P/notes.txt"
	run chrome2ndjson --list "$P"
	assert_success
	assert_output "$P/host.a_11.1694128201600.pt.trace.json.gz
$P/host.b_12.1694128201545000000.pt.trace.json
$P/rank3.json"
	run chrome2ndjson --all-captures --list "$P"
	assert_output "$P/host.a_11.1694128201545.pt.trace.json
$P/host.a_11.1694128201600.pt.trace.json.gz
$P/host.b_12.1694128201545000000.pt.trace.json
$P/host.b_12.999.pt.trace.json
$P/rank3.json"
	run bash -c "chrome2ndjson '$P' | jq -r 'select(.type == \"span\") | .name'"
	assert_output "a2
b1
c"
	# a directory of runs: the last by name, or --run NAME
	mkdir -p "$T/logs/run_a" "$T/logs/run_b"
	tiny ra > "$T/logs/run_a/w.1.pt.trace.json"
	tiny rb > "$T/logs/run_b/w.2.pt.trace.json"
	run chrome2ndjson --list "$T/logs"
	assert_output "$T/logs/run_b/w.2.pt.trace.json"
	run chrome2ndjson --list --run run_a "$T/logs"
	assert_output "$T/logs/run_a/w.1.pt.trace.json"
	run chrome2ndjson --run nope "$T/logs"
	assert_failure 2
	assert_output "chrome2ndjson: $T/logs: no run 'nope' (runs: run_a, run_b)"
	run chrome2ndjson --run run_a "$P/rank3.json"
	assert_failure 2
	assert_output "chrome2ndjson: --run run_a: no directory of runs among the paths"
}

@test "a directory without traces, or with a JSON that is no trace: one line, exit 2, nothing written" {
	mkdir -p "$T/empty" "$T/txt" "$T/odd"
	echo notes > "$T/txt/notes.txt"
	for d in empty txt; do
		run bash -c "chrome2ndjson '$T/$d' > '$T/out'"
		assert_failure 2
		assert_output "chrome2ndjson: $T/$d: no *.json[.gz] trace files in it, nor in runs under it or under its plugins/profile"
		[ ! -s "$T/out" ] || fail "output written"
	done
	tiny ok > "$T/odd/a.pt.trace.json"
	echo '{"epochs":3}' > "$T/odd/config.json"
	run bash -c "chrome2ndjson -o '$T/o.nd' '$T/odd'"
	assert_failure 2
	assert_output "chrome2ndjson: $T/odd/config.json: byte 12: no \"traceEvents\" member: not a Chrome trace"
	[ ! -e "$T/o.nd" ] || fail "output written"
}

@test "JSON that is not a trace: chrome2ndjson says what it is, one line, exit 2" {
	need_fixtures
	run chrome2ndjson "$MEMTL"
	assert_failure 2
	assert_output "chrome2ndjson: $MEMTL: byte 2: not a Chrome trace: a JSON array of arrays of 4 numbers (an HTA memory timeline? trace-mem reads it)"
	printf ' [[1000, 1002], [[0,1,2,3,4,5,6,7,8], [0,1,2,3,4,5,6,7,8]]]' > "$T/tl.json"
	printf '[1, 2]' > "$T/n.json"
	printf '["a"]' > "$T/s.json"
	printf '[[{"ph":"X"}]]' > "$T/aa.json"
	run chrome2ndjson "$T/tl.json"
	assert_failure 2
	assert_output "chrome2ndjson: $T/tl.json: byte 3: not a Chrome trace: a JSON array of arrays of numbers (a PyTorch memory timeline? trace-mem reads it)"
	run chrome2ndjson "$T/n.json"
	assert_output "chrome2ndjson: $T/n.json: byte 2: not a Chrome trace: a JSON array of numbers"
	run chrome2ndjson "$T/s.json"
	assert_output "chrome2ndjson: $T/s.json: byte 2: not a Chrome trace: a JSON array of strings"
	run chrome2ndjson "$T/aa.json"
	assert_failure 2
	assert_output "chrome2ndjson: $T/aa.json: byte 2: not a Chrome trace: a JSON array of arrays"
	# a trace's stray non-object element after its first event stays a counted skip
	printf '[{"ph":"X","name":"k","pid":1,"tid":1,"ts":1,"dur":1}, 7]' > "$T/ok.json"
	run bash -c "chrome2ndjson -q '$T/ok.json' | tail -1 | jq -c '[.spans, .skipped]'"
	assert_output '[1,{"not_an_object":1}]'
}

# HTA's MemoryAnalysis._process_raw_events, then the figures trace-mem
# writes, as records (python3's json.dumps, compact)
hta_expect() {
	"$PY" - "$1" <<'EOF'
import gzip, json, sys
cats = ["parameter", "optimizer_state", "input", "temporary", "activation",
        "gradient", "autograd_detail", "unknown"]
src = sys.argv[1]
raw = json.loads(gzip.open(src).read())
times, sizes, t_min = [], [], -1
for t, _, numbytes, category in raw:
    if t_min == -1 or (t < t_min and t > 0):
        t_min = t
    if not times:
        times.append(t); sizes.append([0] * 8)
    elif t != times[-1]:
        times.append(t); sizes.append(sizes[-1].copy())
    sizes[-1][category] += numbytes
times = [t_min if t < 0 else t for t in times]
ts = [t - t_min for t in times]
tot = [sum(s) for s in sizes]
pk = tot.index(max(tot))
d = lambda o: print(json.dumps(o, separators=(",", ":")))
d({"type": "mem_peak", "source": src, "ts_ns": ts[pk],
   "allocated_bytes": tot[pk], "categories": dict(zip(cats, sizes[pk])),
   # HTA keeps the pre-existing tensors' point beside the earliest one at
   # the same time; trace-mem makes one time one point (issue 31)
   "samples": len(set(ts)), "events": len(raw), "first_ts_ns": ts[0],
   "last_ts_ns": ts[-1], "final_allocated_bytes": tot[-1]})
for c, name in enumerate(cats):
    col = [s[c] for s in sizes]
    i = col.index(max(col))
    d({"type": "mem_category", "source": src, "category": name,
       "peak_bytes": col[i], "ts_ns": ts[i], "at_peak_bytes": sizes[pk][c],
       "final_bytes": col[-1]})
EOF
}

@test "trace-mem reads HTA's memory timeline: the peak and each category's, as HTA computes them" {
	need_fixtures
	run trace-mem "$MEMTL"
	assert_success
	assert_output "$(hta_expect "$MEMTL")"
	# --timeline: a stream of one counter per time, which trace-check accepts
	trace-mem --timeline "$MEMTL" > "$T/tl.nd"
	run trace-check "$T/tl.nd"
	assert_success
	run jq -sc '[map(select(.type == "counter")) | length,
	    (map(select(.type == "counter")) | last | .values.allocated_bytes),
	    (map(select(.type == "counter")) | map(.values.allocated_bytes) | max)]' "$T/tl.nd"
	assert_output '[7720,332060904,3082832104]'
	run bash -c "trace-mem --table '$MEMTL' | head -3"
	assert_output "memory timeline $MEMTL (PyTorch export_memory_timeline_raw, 16845 events at 7720 times)
  peak          2.87 GiB at 98.424 ms
  final         316.68 MiB at 987.186 ms"
}

@test "trace-mem: the [[times], [sizes]] export, events at one time coalesced, and bad timelines" {
	# times in us; sizes [0, parameter, ..., unknown]
	printf '[[1000, 1002, 1005], [[0,10,0,0,0,5,0,0,0], [0,10,0,0,0,25,0,0,0], [0,10,0,0,0,1,0,0,0]]]\n' > "$T/tl.json"
	run bash -c "trace-mem '$T/tl.json' | head -1"
	assert_output '{"type":"mem_peak","source":"'"$T"'/tl.json","ts_ns":2000,"allocated_bytes":35,"categories":{"parameter":10,"optimizer_state":0,"input":0,"temporary":0,"activation":25,"gradient":0,"autograd_detail":0,"unknown":0},"samples":3,"events":3,"first_ts_ns":0,"last_ts_ns":5000,"final_allocated_bytes":11}'
	# raw: a pre-existing tensor; an activation made and freed at one time
	printf '[[-1,1,100,0],[5000,2,50,4],[5000,4,-50,4],[6000,2,30,3]]' > "$T/r.json"
	run bash -c "trace-mem '$T/r.json' | jq -c 'select(.category == \"activation\" or .type == \"mem_peak\") | [.ts_ns, .allocated_bytes // .peak_bytes]'"
	assert_output '[1000,130]
[0,0]'
	printf '[[1,1,5,8]]' > "$T/b1.json"
	printf '[[1,1,5]]' > "$T/b2.json"
	printf '[[1,1,5,0]] x' > "$T/b3.json"
	printf '[[1,1,"5",0]]' > "$T/b4.json"
	printf '[[1, 2], [[0,1,2,3,4,5,6,7,8]]]' > "$T/b5.json"
	run trace-mem "$T/b1.json"
	assert_failure 2
	assert_output "trace-mem: $T/b1.json: byte 2: category 8 is not 0 to 7"
	run trace-mem "$T/b2.json"
	assert_output "trace-mem: $T/b2.json: byte 2: an event [time, action, bytes, category] has 3 elements, not 4"
	run trace-mem "$T/b3.json"
	assert_output "trace-mem: $T/b3.json: byte 13: trailing data after the JSON value"
	run trace-mem "$T/b4.json"
	assert_output "trace-mem: $T/b4.json: byte 7: an event [time, action, bytes, category] holds something other than integers"
	run trace-mem "$T/b5.json"
	assert_failure 2
	assert_output "trace-mem: $T/b5.json: byte 1: fewer sizes than times"
}

@test "README: the examples of the inputs table for profile directories and memory timelines run" {
	need_fixtures
	mkdir -p "$T/w"
	cp -r "$DLRM" "$T/w/prof"
	cp "$MEMTL" "$T/w/memory_timeline.raw.gz"
	for row in 'PyTorch profile directory' 'HTA / PyTorch memory timeline'; do
		cmd=$(grep -F "| $row" "$BATS_TEST_DIRNAME/../README.md" |
		    awk -F'`' '{ print $(NF-1) }' | sed 's/\\|/|/g')
		[ -n "$cmd" ] || fail "no README row '$row'"
		run bash -o pipefail -c "cd '$T/w' && $cmd"
		assert_success
		[ -n "$output" ] || fail "$cmd: no output"
	done
}
