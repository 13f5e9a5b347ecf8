#!/usr/bin/env bats
# Memory timelines out of order (issue 31, item 9): the events or points
# are put in time order and one time is one point, as trace-mem(1) says;
# every figure checked against a python3 reading of the same file.
load helpers

# ref FILE: the mem_peak figures of a timeline, read independently
ref() {
	"$PY" - "$1" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
sizes = len(doc) == 2 and isinstance(doc[1], list) and doc[1] and isinstance(doc[1][0], list)
pts = {}
if sizes:
    for t, s in sorted(zip(doc[0], doc[1]), key=lambda x: x[0]):
        pts[t * 1000] = s[1:]          # the last of one time wins
else:
    cur = [0] * 8
    for t, _a, b, c in sorted(doc, key=lambda e: e[0]):
        cur[c] += b
        pts[t] = list(cur)
o = min(t for t in pts if t >= 0)
merged = {}
for t in sorted(pts):                  # pre-existing (< 0) fall at 0
    merged[max(t - o, 0) if t >= 0 else 0] = pts[t]
times = sorted(merged)
tot = [sum(merged[t]) for t in times]
peak = tot.index(max(tot))
print(times[peak], tot[peak], len(times), times[0], times[-1], tot[-1])
PY
}

# got FILE: the same figures from trace-mem
got() {
	trace-mem "$1" | jq -r 'select(.type == "mem_peak") |
	    "\(.ts_ns) \(.allocated_bytes) \(.samples) \(.first_ts_ns) \(.last_ts_ns) \(.final_allocated_bytes)"'
}

@test "memory timeline: raw events out of order are put in time order" {
	f=$BATS_TEST_TMPDIR/raw.json
	printf '[[3000,1,100,0],[1000,1,50,1],[2000,1,30,0],[2000,-1,-50,1],[-1,1,7,2]]' > "$f"
	run got "$f"
	assert_success
	assert_output "$(ref "$f")"
	# by hand: 0 holds the pre-existing 7 and the first 50; 1000: 37; 2000: 137
	assert_output "2000 137 3 0 2000 137"
	run bash -c "trace-mem --timeline '$f' | jq -r 'select(.type == \"counter\") | \"\(.ts_ns) \(.values.allocated_bytes)\"'"
	assert_output "$(printf '0 57\n1000 37\n2000 137')"
}

@test "memory timeline: a shuffled real timeline gives the figures of the sorted one" {
	need_fixtures
	gzip -dc "$FIXTURES/memory/hta_memory_timeline.raw.gz" > "$BATS_TEST_TMPDIR/sorted.json"
	"$PY" -c '
import json, random, sys
d = json.load(open(sys.argv[1])); random.Random(7).shuffle(d)
json.dump(d, open(sys.argv[2], "w"))' "$BATS_TEST_TMPDIR/sorted.json" "$BATS_TEST_TMPDIR/shuf.json"
	want=$(ref "$BATS_TEST_TMPDIR/sorted.json")
	[ "$(ref "$BATS_TEST_TMPDIR/shuf.json")" = "$want" ]
	run got "$BATS_TEST_TMPDIR/shuf.json"
	assert_output "$want"
	run got "$BATS_TEST_TMPDIR/sorted.json"
	assert_output "$want"
}

@test "memory timeline: [[times],[sizes]] out of order and with equal times" {
	f=$BATS_TEST_TMPDIR/sizes.json
	z='0,0,0,0,0,0,0'
	printf '[[5,2,2,9],[[0,40,%s],[0,10,%s],[0,30,%s],[0,20,%s]]]' "$z" "$z" "$z" "$z" > "$f"
	run got "$f"
	assert_success
	assert_output "$(ref "$f")"
	# times 2 (twice: the later, 30, holds), 5, 9 -> 0, 3000, 7000 ns
	assert_output "3000 40 3 0 7000 20"
}

# snapshot SIZE FILE: a one-block snapshot whose block size is the python
# expression SIZE
snapshot() {
	"$PY" -c '
import pickle, sys
size = eval(sys.argv[1])
seg = {"device": 0, "address": 4096, "total_size": 1024, "blocks": [
    {"size": size, "state": "active_allocated"}]}
pickle.dump({"segments": [seg], "device_traces": [[]]}, open(sys.argv[2], "wb"), protocol=2)' "$1" "$2"
}

@test "snapshot: a size that is not an integer from 0 to 2^53 is an error naming the block" {
	cd "$BATS_TEST_TMPDIR"
	for s in '2**63-1' '2**100' '-5' '1.5' '"10"' '2**53+1' 'None'; do
		snapshot "$s" bad.pkl
		run trace-mem bad.pkl
		assert_failure 2
		assert_output "trace-mem: bad.pkl: segments[0].blocks[0]: a size or requested_size that is not an integer from 0 to 2^53"
	done
	# the largest and the smallest sizes it takes
	for s in '2**53' '0'; do
		snapshot "$s" ok.pkl
		run bash -c "trace-mem ok.pkl | jq -r 'select(.type == \"mem_snapshot\") | .allocated_bytes'"
		assert_success
		assert_output "$("$PY" -c "print($s)")"
	done
}

@test "snapshot: a segment's total_size and a trace entry's size are checked too" {
	cd "$BATS_TEST_TMPDIR"
	"$PY" -c '
import pickle
seg = {"device": 0, "address": 0, "total_size": 1.5, "blocks": []}
pickle.dump({"segments": [seg], "device_traces": [[]]}, open("seg.pkl", "wb"), protocol=2)
seg["total_size"] = 64
pickle.dump({"segments": [seg], "device_traces": [[{"action": "alloc", "addr": 1, "size": -5}]]},
    open("ent.pkl", "wb"), protocol=2)'
	run trace-mem seg.pkl
	assert_failure 2
	assert_output "trace-mem: seg.pkl: segments[0].total_size: not an integer from 0 to 2^53"
	run trace-mem ent.pkl
	assert_failure 2
	assert_output "trace-mem: ent.pkl: device_traces[0][0].size: not an integer from 0 to 2^53"
}
