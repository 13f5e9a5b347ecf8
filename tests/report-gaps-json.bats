#!/usr/bin/env bats
# trace-report: device-level and per-line idle gaps (named apart), payloads
# past Kineto's sync markers, gaps by payload region, the op x region table
# and the hardware (device count, models) in Markdown and JSON.  Every
# figure is checked against an independent python3 pass over the same
# stream, tests/tools/gaps_check.py (the trace-gaps oracle) or trace-topk.

load helpers

setup_file() {
	D="$BATS_FILE_TMPDIR"
	need_fixtures
	chrome2ndjson "$FIXTURES/chrome/hta_alexnet.json.gz" > "$D/alex.ndjson" 2>/dev/null
	trace-report --json -k 0 "$D/alex.ndjson" > "$D/alex.json"
}

setup() {
	T="$BATS_TEST_TMPDIR"
	D="$BATS_FILE_TMPDIR"
	GCHECK="$BATS_TEST_DIRNAME/tools/gaps_check.py"
}

json_is() { # file filter expected
	run jq -c "$2" "$1"
	assert_success
	assert_output "$3"
}

# GPU op: ts dur name tid cat scope [class]
g() {
	printf '{"type":"span","ts_ns":%s,"dur_ns":%s,"name":"%s","pid":0,"tid":%s,"process":"python","thread":"stream %s","device":"GPU:0","cat":"%s","scope":"%s"%s}\n' \
	    "$1" "$2" "$3" "$4" "$4" "$5" "$6" "${7:+,\"class\":\"$7\"}"
}

# Source 0, one GPU with two streams (device keys from Kineto's
# deviceProperties: ids 0 and 1, only GPU:0 runs ops):
#   stream 7: K1 [100,400) fwd/a, Stream Sync [500,520), the pageable copy
#             [520,620) data, K2 [900,1000) fwd/b
#   stream 8: K3 [300,450) fwd/a, K4 [1100,1200) fwd/b
# Device idle (union): [450,500) marker Stream Sync, payload the copy;
#   [620,900) K2; [1000,1100) K4: 3 gaps, 430 ns.
# Per line: stream 7 [400,500) and [620,900): 2 gaps, 380 ns of a 900 ns
#   span; stream 8 [450,1100): 1 gap, 650 ns of 900 ns.
# Source 1, XPlane TPU lines (a "devices" object names TPU:0 only), one op
# a line: no gap.
hand_stream() {
	echo '{"type":"meta","schema":"ndtrace/1","source":"gpu.json","format":"chrome","origin_ns":0,"host":null,"rank":0,"producer":"hand 1","header":{"deviceProperties":[{"id":0,"name":"NVIDIA H100 80GB HBM3"},{"id":1,"name":"NVIDIA H100 80GB HBM3"}]}}'
	g 100 300 K1 7 kernel fwd/a compute
	g 500 20 'Stream Sync' 7 cuda_sync fwd/a
	g 520 100 'Memcpy HtoD (Pageable -> Device)' 7 gpu_memcpy data memory
	g 900 100 K2 7 kernel fwd/b compute
	g 300 150 K3 8 kernel fwd/a compute
	g 1100 100 K4 8 kernel fwd/b compute
	echo '{"type":"meta","schema":"ndtrace/1","source":"tpu.pb","format":"xplane","origin_ns":0,"host":"h","rank":1,"producer":"hand 1","devices":{"TPU:0":"TPU v5 lite"}}'
	for d in 0 1; do
		printf '{"type":"span","ts_ns":0,"dur_ns":50,"name":"fusion.%s","pid":%s,"tid":3,"process":"/device:TPU:%s","thread":"XLA Ops","device":"TPU:%s","cat":"xla_op","class":"compute","scope":"f/main"}\n' \
		    "$d" "$((d + 1))" "$d" "$d"
	done
}

# Independent: device-level and per-line gaps of the GPU ops of source 0,
# straight from the stream (gaps between the union of intervals; the payload
# is the first op after the gap past Kineto sync ops that touch it).
HAND_REF='
import json, sys
ops = []
for l in open(sys.argv[1]):
    e = json.loads(l)
    if e["type"] == "span" and e.get("device") == "GPU:0":
        ops.append((e["ts_ns"], e["ts_ns"] + e["dur_ns"], e["name"], e["tid"], e["scope"]))
SYNC = {"Stream Sync", "Event Sync", "Context Sync", "Stream Wait Event"}
def gaps(v):
    v = sorted(v); out = []; hi = v[0][1]
    for i, o in enumerate(v[1:], 1):
        if o[0] > hi:
            p, end = i, v[i][1]
            while v[p][2] in SYNC and p + 1 < len(v) and v[p + 1][0] <= end:
                p += 1; end = max(end, v[p][1])
            out.append((o[0] - hi, v[p]))
        hi = max(hi, o[1])
    return out
dev = gaps(ops)
print("device", len(dev), sum(d for d, _ in dev), max(d for d, _ in dev))
reg = {}
for d, p in dev:
    r = reg.setdefault(p[4], [0, 0, 0]); r[0] += 1; r[1] += d; r[2] = max(r[2], d)
print("regions", sorted(((-v[1], k, v) for k, v in reg.items())))
print("payloads", sorted((p[2], d) for d, p in dev))
for tid in sorted({o[3] for o in ops}):
    v = [o for o in ops if o[3] == tid]; gs = gaps(v)
    print("line", tid, len(v), len(gs), sum(d for d, _ in gs), max(d for d, _ in gs),
          max(o[1] for o in v) - min(o[0] for o in v))
'

@test "gaps: device idle and per-line idle, named apart, agree with python" {
	hand_stream > "$T/h.ndjson"
	run "$PY" -c "$HAND_REF" "$T/h.ndjson"
	assert_success
	assert_output - <<'E'
device 3 430 280
regions [(-380, 'fwd/b', [2, 380, 280]), (-50, 'data', [1, 50, 50])]
payloads [('K2', 280), ('K4', 100), ('Memcpy HtoD (Pageable -> Device)', 50)]
line 7 4 2 380 280 900
line 8 2 1 650 650 900
E
	trace-report --json "$T/h.ndjson" > "$T/h.json"
	json_is "$T/h.json" '.gaps | [.count, .total_ns, .max_ns]' '[3,430,280]'
	json_is "$T/h.json" '.gaps.regions' \
	    '[{"region":"fwd/b","count":2,"total_ns":380,"max_ns":280},{"region":"data","count":1,"total_ns":50,"max_ns":50}]'
	json_is "$T/h.json" '.gaps.regions_rows' '2'
	json_is "$T/h.json" '[.gaps.payloads[] | [.payload, .marker, .count, .total_ns, .region]] | sort' \
	    '[["K2","K2",1,280,"fwd/b"],["K4","K4",1,100,"fwd/b"],["Memcpy HtoD (Pageable -> Device)","Stream Sync",1,50,"data"]]'
	json_is "$T/h.json" '.gaps.lines | [.timelines, .count, .total_ns, .max_ns, .rows_with_gaps]' '[4,3,1030,650,2]'
	json_is "$T/h.json" '[.gaps.lines.rows[] | [.line, .source, .ops, .count, .total_ns, .max_ns, .active_ns]]' \
	    '[["rank 0 GPU:0 stream 8",0,2,1,650,650,900],["rank 0 GPU:0 stream 7",0,4,2,380,280,900]]'
	# the Markdown names the two kinds apart
	trace-report "$T/h.ndjson" > "$T/h.md"
	run sed -n '/^## 6 /,/^## 7 /p' "$T/h.md"
	assert_line --index 1 'Device idle: 3 gaps where no op runs on any line of a device (trace-gaps(1), device level), 430 ns in total; the largest 280 ns on rank 0 GPU:0 at ts_ns 620.'
	assert_line 'Line idle: 3 gaps where one line (a GPU stream, an XPlane line) runs no op while its device may be busy on another (trace-gaps -l timeline), 1.0 us in total on 2 of 4 lines. Lines of a device overlap: this is not device idle time.'
	assert_line '| 1 | rank 0 GPU:0 stream 8 | 2 | 1 | 650 ns | 72.2 % | 650 ns |'
	assert_line '| 2 | rank 0 GPU:0 stream 7 | 4 | 2 | 380 ns | 42.2 % | 280 ns |'
	assert_line '| 3 | Memcpy HtoD (Pageable -\> Device) | Stream Sync | 1 | 50 ns | 50 ns | data |'
	# the same totals from input out of order, read again or buffered
	{ head -1 "$T/h.ndjson"; sed -n '2,7p' "$T/h.ndjson" | tac; tail -n +8 "$T/h.ndjson"; } > "$T/o.ndjson"
	for opt in "" --unordered; do
		run bash -c "trace-report --json $opt '$T/o.ndjson' | jq -c '.gaps.lines | [.count, .total_ns, .max_ns]'"
		assert_output '[3,1030,650]'
	done
}

@test "gaps: trace-gaps looks past Kineto sync markers for the payload" {
	hand_stream > "$T/h.ndjson"
	run bash -c "trace-gaps '$T/h.ndjson' | jq -c 'select(.type==\"gap\" and .ts_ns==450) | [.marker, .payload, .payload_index, .scope]'"
	assert_output '["Stream Sync","Memcpy HtoD (Pageable -> Device)",1,"data"]'
	# on a real trace: the 8 gaps a Stream Sync ends wait for a pageable
	# copy (the oracle), and the report's row of that payload has every
	# gap the oracle gives it
	"$PY" "$GCHECK" "$D/alex.ndjson" > "$T/o.ndjson"
	run jq -s -c '[.[] | select(.marker == "Stream Sync")] | [length, (map(.payload) | unique)]' "$T/o.ndjson"
	assert_output '[8,["Memcpy HtoD (Pageable -> Device)"]]'
	want=$(jq -s -c '[.[] | select(.payload == "Memcpy HtoD (Pageable -> Device)")] | [length, (map(.dur_ns) | add), (map(.dur_ns) | max)]' "$T/o.ndjson")
	json_is "$D/alex.json" '[.gaps.payloads[] | select(.payload == "Memcpy HtoD (Pageable -> Device)") | [.count, .total_ns, .max_ns]][0]' "$want"
	[ "$want" = '[15,19488000,9148000]' ]
}

@test "gaps per line on a real trace: the timeline-level gaps of the oracle" {
	"$PY" "$GCHECK" --level timeline "$D/alex.ndjson" > "$T/o.ndjson"
	# per timeline: gaps, idle, largest; largest idle first
	want=$(jq -s -c 'group_by(.key) | map([length, (map(.dur_ns) | add), (map(.dur_ns) | max)]) | sort_by(-.[1])' "$T/o.ndjson")
	json_is "$D/alex.json" '[.gaps.lines.rows[] | [.count, .total_ns, .max_ns]]' "$want"
	want=$(jq -s -c '[length, (map(.dur_ns) | add), (map(.dur_ns) | max)]' "$T/o.ndjson")
	json_is "$D/alex.json" '.gaps.lines | [.count, .total_ns, .max_ns]' "$want"
	# gap time by payload region sums to the device gap time
	json_is "$D/alex.json" '[(.gaps.regions | map(.total_ns) | add) == .gaps.total_ns, (.gaps.regions | map(.count) | add) == .gaps.count]' '[true,true]'
}

@test "op x region: exclusive time per (op, scope), as python and trace-topk --by name,scope" {
	hand_stream > "$T/h.ndjson"
	trace-report --json "$T/h.ndjson" > "$T/h.json"
	# the ops do not nest: exclusive time is the duration, summed
	run "$PY" -c '
import json, sys
t = {}
for l in open(sys.argv[1]):
    e = json.loads(l)
    if e["type"] == "span":
        r = t.setdefault((e["name"], e["scope"]), [0, 0]); r[0] += 1; r[1] += e["dur_ns"]
print(json.dumps(sorted([k[0], k[1], v[0], v[1]] for k, v in t.items()), separators=(",", ":")))
' "$T/h.ndjson"
	json_is "$T/h.json" '[.ops.op_regions[] | [.name, .region, .count, .exclusive_ns]] | sort' "$output"
	json_is "$T/h.json" '.ops.op_regions_rows' '8'
	# ranked and cut as trace-topk's rows (a real trace, -k 5 and all)
	for k in 5 0; do
		want=$(trace-topk --by name,scope -k $k "$D/alex.ndjson" |
		    jq -s -c '[.[] | select(.type == "top" and (.other | not)) | [.name, .scope, .count, .self_ns, .total_ns]]')
		trace-report --json -k $k "$D/alex.ndjson" > "$T/a.json"
		json_is "$T/a.json" '[.ops.op_regions[] | [.name, .region, .count, .exclusive_ns, .total_ns]]' "$want"
	done
	json_is "$T/a.json" '.ops.op_regions_rows == (.ops.op_regions | length)' 'true'
	run jq -c '([.ops.op_regions[].exclusive_ns] | add) == .ops.self_ns' "$D/alex.json"
	assert_output true
}

@test "hardware: devices with device ops and their models, per source and overall" {
	hand_stream > "$T/h.ndjson"
	trace-report --json "$T/h.ndjson" > "$T/h.json"
	json_is "$T/h.json" '.hardware' \
	    '{"device_count":3,"models":[{"model":"NVIDIA H100 80GB HBM3","devices":1},{"model":"TPU v5 lite","devices":1},{"model":null,"devices":1}],"per_source":[{"source":0,"device_count":1,"models":[{"model":"NVIDIA H100 80GB HBM3","devices":1}]},{"source":1,"device_count":2,"models":[{"model":"TPU v5 lite","devices":1},{"model":null,"devices":1}]}]}'
	run trace-report "$T/h.ndjson"
	assert_line 'Devices with device ops: 3 over 2 sources; models: NVIDIA H100 80GB HBM3 (1), TPU v5 lite (1), not named (1).'
	# a real Kineto trace: the model of its device id, the devices its
	# kernels ran on (python over the stream)
	want=$(jq -s -c '[(map(select(.type == "span" and .cat == "kernel") | .device) | unique | length),
	    (.[0].header.deviceProperties[] | select(.id == 0) | .name)]' "$D/alex.ndjson")
	json_is "$D/alex.json" '[.hardware.device_count, .hardware.models[0].model]' "$want"
	# none without device ops
	printf '%s\n' '{"type":"span","ts_ns":0,"dur_ns":10,"name":"a","pid":1,"tid":1}' |
	    trace-report > "$T/n.md"
	grep -qx 'Devices with device ops: none.' "$T/n.md"
}
