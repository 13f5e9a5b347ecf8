#!/usr/bin/env bats
# trace-mem: memory timelines and peaks from streams, PyTorch memory
# snapshots through the restricted pickle reader.

load helpers

TOOL="$BATS_TEST_DIRNAME/tools/mem_snapshot.py"
STREAMTOOL="$BATS_TEST_DIRNAME/tools/mem_stream.py"
SNAP="$FIXTURES/memory/cs336_memory_snapshot.pickle"

setup() {
	T="$BATS_TEST_TMPDIR"
}

# A Kineto-like stream: three nested ops on thread 1, [memory] instants on
# threads 1 and 2, for GPU:0 and for the CPU.
kineto_stream() {
	echo '{"type":"meta","schema":"ndtrace/1","source":"run.json","format":"chrome","origin_ns":1700000000000000000,"host":null,"rank":0,"producer":"hand 1"}'
	echo '{"type":"span","ts_ns":0,"dur_ns":100,"name":"ProfilerStep#3","pid":1,"tid":1,"step":3}'
	echo '{"type":"span","ts_ns":10,"dur_ns":50,"name":"aten::linear","pid":1,"tid":1,"step":3,"scope":"model/fc1"}'
	echo '{"type":"span","ts_ns":20,"dur_ns":10,"name":"aten::empty","pid":1,"tid":1}'
	mem 25 1 1000 4096 1000 1 0
	mem 40 1 1500 4096 500 1 0
	mem 70 1 500 4096 -1000 1 0
	mem 80 2 1200 4096 700 1 0
	mem 90 1 8 0 8 0 -1
	mem 150 1 200 4096 -1000 1 0
}
mem() { # ts tid total reserved bytes devtype devid
	printf '{"type":"instant","ts_ns":%s,"name":"[memory]","pid":1,"tid":%s,"device":"GPU:7","args":{"Total Allocated":%s,"Total Reserved":%s,"Bytes":%s,"Device Type":%s,"Device Id":%s}}\n' "$@"
}

KPEAK_CPU='{"type":"mem_peak","source":"run.json","rank":0,"device":"CPU","ts_ns":90,"allocated_bytes":8,"reserved_bytes":0,"pid":1,"tid":1,"step":3,"op":"ProfilerStep#3","stack":["ProfilerStep#3"],"samples":1,"allocs":1,"alloc_bytes":8,"frees":0,"free_bytes":0,"first_ts_ns":90,"last_ts_ns":90,"final_allocated_bytes":8,"max_reserved_bytes":0}'
KPEAK_GPU='{"type":"mem_peak","source":"run.json","rank":0,"device":"GPU:0","ts_ns":40,"allocated_bytes":1500,"reserved_bytes":4096,"pid":1,"tid":1,"step":3,"op":"aten::linear","scope":"model/fc1","stack":["ProfilerStep#3","aten::linear"],"samples":5,"allocs":3,"alloc_bytes":2200,"frees":2,"free_bytes":2000,"first_ts_ns":25,"last_ts_ns":150,"final_allocated_bytes":200,"max_reserved_bytes":4096}'

@test "stream: peak, step, op, scope and enclosing stack; top ops by self bytes" {
	kineto_stream > "$T/k.ndjson"
	run trace-mem "$T/k.ndjson"
	assert_success
	assert_output - <<E
$KPEAK_CPU
$KPEAK_GPU
{"type":"mem_top","row":1,"device":"CPU","op":"ProfilerStep#3","allocs":1,"alloc_bytes":8,"frees":0,"free_bytes":0,"total_alloc_bytes":8,"share":1}
{"type":"mem_top","row":1,"device":"GPU:0","op":"aten::empty","allocs":1,"alloc_bytes":1000,"frees":0,"free_bytes":0,"total_alloc_bytes":1000,"share":0.45454545454545453}
{"type":"mem_top","row":2,"device":"GPU:0","allocs":1,"alloc_bytes":700,"frees":1,"free_bytes":1000,"total_alloc_bytes":700,"share":0.3181818181818182}
{"type":"mem_top","row":3,"device":"GPU:0","op":"aten::linear","allocs":1,"alloc_bytes":500,"frees":0,"free_bytes":0,"total_alloc_bytes":1500,"share":0.22727272727272727}
{"type":"mem_top","row":4,"device":"GPU:0","op":"ProfilerStep#3","allocs":0,"alloc_bytes":0,"frees":1,"free_bytes":1000,"total_alloc_bytes":1500,"share":0}
E
}

@test "stream: any record order gives the same answer" {
	kineto_stream > "$T/k.ndjson"
	{ head -1 "$T/k.ndjson"; tail -n +2 "$T/k.ndjson" | tac; } > "$T/r.ndjson"
	trace-mem "$T/k.ndjson" > "$T/a"
	run trace-mem "$T/r.ndjson"
	assert_success
	assert_output "$(cat "$T/a")"
}

@test "stream: --sort total, -k and the other row" {
	kineto_stream > "$T/k.ndjson"
	run trace-mem --sort total -k 2 "$T/k.ndjson"
	assert_success
	assert_line --index 3 '{"type":"mem_top","row":1,"device":"GPU:0","op":"aten::linear","allocs":1,"alloc_bytes":500,"frees":0,"free_bytes":0,"total_alloc_bytes":1500,"share":0.6818181818181818}'
	assert_line --index 4 '{"type":"mem_top","row":2,"device":"GPU:0","op":"ProfilerStep#3","allocs":0,"alloc_bytes":0,"frees":1,"free_bytes":1000,"total_alloc_bytes":1500,"share":0.6818181818181818}'
	assert_line --index 5 '{"type":"mem_top","row":3,"device":"GPU:0","other":true,"ops":2,"allocs":2,"alloc_bytes":1700,"frees":1,"free_bytes":1000,"total_alloc_bytes":1700,"share":0.7727272727272727}'
	run trace-mem -k 0 "$T/k.ndjson"
	assert_output "$KPEAK_CPU
$KPEAK_GPU"
}

@test "stream: --timeline writes a valid stream of counters in time order" {
	kineto_stream > "$T/k.ndjson"
	run trace-mem --timeline -k 0 "$T/k.ndjson"
	assert_success
	assert_output - <<E
{"type":"meta","schema":"ndtrace/1","source":"run.json","format":"chrome","origin_ns":1700000000000000000,"host":null,"rank":0,"producer":"trace-mem $(trace-mem -V | cut -d' ' -f3)"}
{"type":"counter","ts_ns":25,"name":"memory GPU:0","pid":1,"device":"GPU:0","rank":0,"values":{"allocated_bytes":1000,"reserved_bytes":4096}}
{"type":"counter","ts_ns":40,"name":"memory GPU:0","pid":1,"device":"GPU:0","rank":0,"values":{"allocated_bytes":1500,"reserved_bytes":4096}}
{"type":"counter","ts_ns":70,"name":"memory GPU:0","pid":1,"device":"GPU:0","rank":0,"values":{"allocated_bytes":500,"reserved_bytes":4096}}
{"type":"counter","ts_ns":80,"name":"memory GPU:0","pid":1,"device":"GPU:0","rank":0,"values":{"allocated_bytes":1200,"reserved_bytes":4096}}
{"type":"counter","ts_ns":90,"name":"memory CPU","pid":1,"device":"CPU","rank":0,"values":{"allocated_bytes":8,"reserved_bytes":0}}
{"type":"counter","ts_ns":150,"name":"memory GPU:0","pid":1,"device":"GPU:0","rank":0,"values":{"allocated_bytes":200,"reserved_bytes":4096}}
$KPEAK_CPU
$KPEAK_GPU
E
	trace-mem --timeline "$T/k.ndjson" > "$T/tl.ndjson"
	run trace-check "$T/tl.ndjson"
	assert_success
	assert_output ""
}

@test "stream: --table" {
	kineto_stream > "$T/k.ndjson"
	run trace-mem --table "$T/k.ndjson"
	assert_success
	assert_output - <<'E'
memory run.json, CPU
  peak          8 B allocated at 0.000 ms, reserved 0 B
  running       step 3, op ProfilerStep#3
  samples       1: 1 allocs (8 B), 0 frees (0 B)
  also          max reserved 0 B
memory run.json, GPU:0
  peak          1.46 KiB allocated at 0.000 ms, reserved 4.00 KiB
  running       step 3, op aten::linear, scope model/fc1
  samples       5: 3 allocs (2.15 KiB), 2 frees (1.95 KiB)
  also          max reserved 4.00 KiB
top allocating ops by self bytes:
  memory             allocs   self_bytes      frees        freed   share  total_bytes  op
  CPU                     1          8 B          0          0 B  100.0%          8 B  ProfilerStep#3
  GPU:0                   1       1000 B          0          0 B   45.5%       1000 B  aten::empty
  GPU:0                   1        700 B          1       1000 B   31.8%        700 B  (no op)
  GPU:0                   1        500 B          0          0 B   22.7%     1.46 KiB  aten::linear
  GPU:0                   0          0 B          1       1000 B    0.0%     1.46 KiB  ProfilerStep#3
E
}

@test "stream: XPlane allocator events, tf_op, allocator names and TPU index_on_host" {
	xm() {
		printf '{"type":"instant","ts_ns":%s,"name":"%s","pid":8,"tid":3,"process":"/host:CPU","thread":"main","args":{"allocator_name":"%s","bytes_reserved":0,"bytes_allocated":%s,"peak_bytes_in_use":8192,"requested_bytes":%s,"allocation_bytes":%s%s}}\n' "$@"
	}
	{
		echo '{"type":"meta","schema":"ndtrace/1","source":"w0.xplane.pb","format":"xplane","origin_ns":0,"host":"w0","rank":null,"producer":"hand 1"}'
		echo '{"type":"span","ts_ns":0,"dur_ns":1000,"name":"Build buffer allocations","pid":8,"tid":3}'
		xm 100 MemoryAllocation GPU_0_bfc 4096 4000 4096 ''
		xm 200 MemoryAllocation GPU_0_bfc 6144 2048 2048 ',"tf_op":"jit(step)/dot"'
		xm 300 MemoryDeallocation GPU_0_bfc 2048 4000 4096 ''
		xm 400 MemoryAllocation gpu_host_bfc 256 8 256 ''
		xm 2000 MemoryDeallocation GPU_0_bfc 0 2048 2048 ''
		echo '{"type":"instant","ts_ns":500,"name":"MemoryAllocation","pid":8,"tid":3,"args":{"index_on_host":1,"bytes_reserved":100,"bytes_allocated":512,"peak_bytes_in_use":512,"allocation_bytes":512}}'
	} > "$T/x.ndjson"
	run trace-mem "$T/x.ndjson"
	assert_success
	assert_output - <<'E'
{"type":"mem_peak","source":"w0.xplane.pb","device":"GPU:0","allocator":"GPU_0_bfc","ts_ns":200,"allocated_bytes":6144,"reserved_bytes":0,"pid":8,"tid":3,"op":"jit(step)/dot","stack":["Build buffer allocations"],"samples":4,"allocs":2,"alloc_bytes":6144,"frees":2,"free_bytes":6144,"first_ts_ns":100,"last_ts_ns":2000,"final_allocated_bytes":0,"max_reserved_bytes":0,"allocator_peak_bytes":8192}
{"type":"mem_peak","source":"w0.xplane.pb","device":"TPU:1","ts_ns":500,"allocated_bytes":512,"reserved_bytes":100,"pid":8,"tid":3,"op":"Build buffer allocations","stack":["Build buffer allocations"],"samples":1,"allocs":1,"alloc_bytes":512,"frees":0,"free_bytes":0,"first_ts_ns":500,"last_ts_ns":500,"final_allocated_bytes":512,"max_reserved_bytes":100,"allocator_peak_bytes":512}
{"type":"mem_peak","source":"w0.xplane.pb","device":"CPU","allocator":"gpu_host_bfc","ts_ns":400,"allocated_bytes":256,"reserved_bytes":0,"pid":8,"tid":3,"op":"Build buffer allocations","stack":["Build buffer allocations"],"samples":1,"allocs":1,"alloc_bytes":256,"frees":0,"free_bytes":0,"first_ts_ns":400,"last_ts_ns":400,"final_allocated_bytes":256,"max_reserved_bytes":0,"allocator_peak_bytes":8192}
{"type":"mem_top","row":1,"device":"GPU:0","allocator":"GPU_0_bfc","op":"Build buffer allocations","allocs":1,"alloc_bytes":4096,"frees":1,"free_bytes":4096,"total_alloc_bytes":6144,"share":0.6666666666666666}
{"type":"mem_top","row":2,"device":"GPU:0","allocator":"GPU_0_bfc","op":"jit(step)/dot","allocs":1,"alloc_bytes":2048,"frees":0,"free_bytes":0,"total_alloc_bytes":2048,"share":0.3333333333333333}
{"type":"mem_top","row":3,"device":"GPU:0","allocator":"GPU_0_bfc","allocs":0,"alloc_bytes":0,"frees":1,"free_bytes":2048,"total_alloc_bytes":0,"share":0}
{"type":"mem_top","row":1,"device":"TPU:1","op":"Build buffer allocations","allocs":1,"alloc_bytes":512,"frees":0,"free_bytes":0,"total_alloc_bytes":512,"share":1}
{"type":"mem_top","row":1,"device":"CPU","allocator":"gpu_host_bfc","op":"Build buffer allocations","allocs":1,"alloc_bytes":256,"frees":0,"free_bytes":0,"total_alloc_bytes":256,"share":1}
E
	# the independent computation agrees
	trace-mem -k 1000 "$T/x.ndjson" | jq -cS 'if .type=="mem_peak" then {type,device,allocator,ts_ns,allocated_bytes,reserved_bytes,pid,tid,op,samples,allocs,alloc_bytes,frees,free_bytes} elif .type=="mem_top" then {type,device,allocator,op,allocs,alloc_bytes,frees,free_bytes} else empty end | with_entries(select(.value!=null))' > "$T/c"
	"$PY" "$STREAMTOOL" "$T/x.ndjson" > "$T/p"
	run diff "$T/c" "$T/p"
	assert_success
}

@test "stream without memory data: a mem_none record per source, exit 0" {
	{
		echo '{"type":"meta","schema":"ndtrace/1","source":"a.json","format":"chrome","origin_ns":0,"host":null,"rank":null,"producer":"hand 1"}'
		echo '{"type":"span","ts_ns":0,"dur_ns":10,"name":"op","pid":1,"tid":1}'
		echo '{"type":"meta","schema":"ndtrace/1","source":"b.json","format":"chrome","origin_ns":0,"host":null,"rank":3,"producer":"hand 1"}'
		mem 5 1 64 0 64 1 2
	} > "$T/n.ndjson"
	run trace-mem -k 0 "$T/n.ndjson"
	assert_success
	assert_output - <<'E'
{"type":"mem_none","source":"a.json","reason":"no [memory] events and no allocator statistics","records":2}
{"type":"mem_peak","source":"b.json","rank":3,"device":"GPU:2","ts_ns":5,"allocated_bytes":64,"reserved_bytes":0,"pid":1,"tid":1,"samples":1,"allocs":1,"alloc_bytes":64,"frees":0,"free_bytes":0,"first_ts_ns":5,"last_ts_ns":5,"final_allocated_bytes":64,"max_reserved_bytes":0}
E
	head -2 "$T/n.ndjson" > "$T/none.ndjson"
	run trace-mem --table "$T/none.ndjson"
	assert_success
	assert_output "memory a.json: no memory data (no [memory] events, no allocator statistics)"
	run trace-mem --timeline "$T/none.ndjson"
	assert_success
	assert_output '{"type":"mem_none","source":"a.json","reason":"no [memory] events and no allocator statistics","records":2}'
}

@test "stream: top ops add up over sources (ranks) and files" {
	kineto_stream > "$T/k.ndjson"
	sed 's/"source":"run.json"/"source":"run2.json"/; s/"rank":0/"rank":1/' "$T/k.ndjson" > "$T/k2.ndjson"
	run trace-mem -k 1 "$T/k.ndjson" "$T/k2.ndjson"
	assert_success
	assert_line --index 4 '{"type":"mem_top","row":1,"device":"CPU","op":"ProfilerStep#3","allocs":2,"alloc_bytes":16,"frees":0,"free_bytes":0,"total_alloc_bytes":16,"share":1}'
	assert_line --index 5 '{"type":"mem_top","row":1,"device":"GPU:0","op":"aten::empty","allocs":2,"alloc_bytes":2000,"frees":0,"free_bytes":0,"total_alloc_bytes":2000,"share":0.45454545454545453}'
	run bash -c "cat '$T/k.ndjson' '$T/k2.ndjson' | trace-mem -k 1"
	assert_success
	assert_line --index 3 --partial '"source":"run2.json","rank":1,"device":"GPU:0","ts_ns":40'
	assert_line --index 5 '{"type":"mem_top","row":1,"device":"GPU:0","op":"aten::empty","allocs":2,"alloc_bytes":2000,"frees":0,"free_bytes":0,"total_alloc_bytes":2000,"share":0.45454545454545453}'
}

@test "snapshot: a hand-made pickle gives the exact records, in protocols 2 to 5" {
	"$PY" "$TOOL" write small "$T/s4.pkl" 4
	run trace-mem -k 2 --frames 1 "$T/s4.pkl"
	assert_success
	assert_output - <<E
{"type":"mem_snapshot","source":"$T/s4.pkl","device":"GPU:0","segments":2,"segment_types":{"small":1,"large":1},"blocks":5,"active_blocks":2,"pending_free_blocks":1,"inactive_blocks":2,"reserved_bytes":2101248,"allocated_bytes":1536,"active_bytes":2048,"requested_bytes":1400,"inactive_bytes":2099200,"inactive_split_bytes":2048,"free_segment_bytes":2097152,"largest_inactive_bytes":2097152,"fragmentation":0.9992690058479532,"trace_entries":8,"actions":{"segment_alloc":1,"alloc":3,"oom":1,"free_requested":2,"free_completed":1}}
{"type":"mem_peak","source":"$T/s4.pkl","device":"GPU:0","ts_ns":25000,"seq":3,"allocated_bytes":1050488,"active_bytes":1050488,"reserved_bytes":2101248,"live_blocks":4,"action":"alloc","size":512,"frames":[{"name":"tmp","filename":"train.py","line":10}],"start_allocated_bytes":1000,"final_allocated_bytes":1400,"final_active_bytes":1912,"final_reserved_bytes":2101248,"trace_entries":8,"ooms":1}
{"type":"mem_oom","source":"$T/s4.pkl","device":"GPU:0","ts_ns":30000,"seq":4,"size":8589934592,"device_free":1024,"stream":0,"frames":[{"name":"huge","filename":"train.py","line":10}]}
{"type":"mem_block","source":"$T/s4.pkl","device":"GPU:0","at":"peak","row":1,"address":2000000,"size":1048576,"stream":0,"ts_ns":10000,"seq":1,"frames":[{"name":"big","filename":"train.py","line":10}]}
{"type":"mem_block","source":"$T/s4.pkl","device":"GPU:0","at":"peak","row":2,"address":1000000,"size":1000,"stream":0,"before_trace":true,"frames":[{"name":"old","filename":"train.py","line":10}]}
{"type":"mem_block","source":"$T/s4.pkl","device":"GPU:0","at":"snapshot","row":1,"address":1000000,"size":1024,"requested_size":1000,"state":"active_allocated","stream":0,"segment_address":1000000,"frames":[{"name":"old","filename":"train.py","line":10}]}
{"type":"mem_block","source":"$T/s4.pkl","device":"GPU:0","at":"snapshot","row":2,"address":1001024,"size":512,"requested_size":400,"state":"active_allocated","stream":0,"segment_address":1000000,"frames":[{"name":"mm","filename":"train.py","line":10}]}
{"type":"mem_snapshot","source":"$T/s4.pkl","device":"GPU:1","segments":1,"segment_types":{"large":1},"blocks":1,"active_blocks":1,"pending_free_blocks":0,"inactive_blocks":0,"reserved_bytes":2097152,"allocated_bytes":2097152,"active_bytes":2097152,"requested_bytes":2000000,"inactive_bytes":0,"inactive_split_bytes":0,"free_segment_bytes":0,"largest_inactive_bytes":0,"fragmentation":0,"trace_entries":0,"actions":{}}
{"type":"mem_block","source":"$T/s4.pkl","device":"GPU:1","at":"snapshot","row":1,"address":3000000,"size":2097152,"requested_size":2000000,"state":"active_allocated","stream":7,"segment_address":3000000,"frames":[]}
E
	trace-mem "$T/s4.pkl" | sed "s|$T/s4.pkl|S|" > "$T/want"
	for p in 2 3 5; do
		"$PY" "$TOOL" write small "$T/s$p.pkl" "$p"
		run bash -c "trace-mem '$T/s$p.pkl' | sed 's|$T/s$p.pkl|S|'"
		assert_success
		assert_output "$(cat "$T/want")"
	done
}

@test "snapshot: --table" {
	"$PY" "$TOOL" write small "$T/s.pkl" 4
	run trace-mem --table -k 2 "$T/s.pkl"
	assert_success
	assert_output - <<E
snapshot $T/s.pkl, GPU:0
  reserved      2.00 MiB in 2 segments (small 1, large 1)
  allocated     1.50 KiB in 2 blocks (requested 1.37 KiB); some blocks pending free
  inactive      2.00 MiB in 2 blocks: 2.00 KiB split in segments in use, 2.00 MiB in free segments
  fragmentation 99.9% (1 - allocated/reserved); largest free block 2.00 MiB
  trace         8 entries; allocated 1000 B at the start, 1.37 KiB at the end
  peak          1.00 MiB allocated at 0.025 ms (entry 3), 4 live blocks; reserved 2.00 MiB
                by tmp (train.py:10)
  out of memory at 0.030 ms (entry 4): 8.00 GiB requested, free on the device 1.00 KiB
  largest live blocks at the peak:
          size  address          allocated at      top frame
      1.00 MiB  0x1e8480         0.010 ms          big (train.py:10)
        1000 B  0xf4240          before the trace  old (train.py:10)
  largest live blocks in the snapshot:
          size  address          requested         top frame
      1.00 KiB  0xf4240          1000 B            old (train.py:10)
         512 B  0xf4640          400 B             mm (train.py:10)
snapshot $T/s.pkl, GPU:1
  reserved      2.00 MiB in 1 segments (large 1)
  allocated     2.00 MiB in 1 blocks (requested 1.91 MiB)
  inactive      0 B in 0 blocks: 0 B split in segments in use, 0 B in free segments
  fragmentation 0.0% (1 - allocated/reserved); largest free block 0 B
  largest live blocks in the snapshot:
          size  address          requested         top frame
      2.00 MiB  0x2dc6c0         1.91 MiB
E
}

@test "snapshot: --timeline is a valid stream whose last point is the snapshot's requested bytes" {
	"$PY" "$TOOL" write small "$T/s.pkl" 5
	trace-mem --timeline -k 0 "$T/s.pkl" > "$T/tl.ndjson"
	run trace-check "$T/tl.ndjson"
	assert_success
	run jq -c 'select(.type=="counter") | [.ts_ns, .seq, .action, .values.allocated_bytes, .values.active_bytes, .values.reserved_bytes]' "$T/tl.ndjson"
	assert_output - <<'E'
[0,0,"segment_alloc",1000,1000,2101248]
[10000,1,"alloc",1049576,1049576,2101248]
[20000,2,"alloc",1049976,1049976,2101248]
[25000,3,"alloc",1050488,1050488,2101248]
[40000,5,"free_requested",1912,1050488,2101248]
[40000,6,"free_completed",1912,1912,2101248]
[50000,7,"free_requested",1400,1912,2101248]
E
	run grep -o '"format":"[a-z_]*","origin_ns":[0-9]*' "$T/tl.ndjson"
	assert_output '"format":"torch_memory_snapshot","origin_ns":1700000000000000000'
}

@test "snapshot: old forms (a list of segments, no block addresses, no time_us)" {
	"$PY" -c '
import pickle, sys
seg = {"device": 0, "address": 4096, "total_size": 1024, "blocks": [
    {"size": 512, "state": "active_allocated"}, {"size": 512, "state": "inactive"}]}
pickle.dump([seg], open(sys.argv[1], "wb"), protocol=2)
pickle.dump({"segments": [seg], "device_traces": [[
    {"action": "alloc", "addr": 9000, "size": 100},
    {"action": "free_requested", "addr": 9000, "size": 100}]]},
    open(sys.argv[2], "wb"), protocol=2)' "$T/old.pkl" "$T/notime.pkl"
	cd "$T"
	run trace-mem old.pkl
	assert_success
	assert_output - <<'E'
{"type":"mem_snapshot","source":"old.pkl","device":"GPU:0","segments":1,"segment_types":{},"blocks":2,"active_blocks":1,"pending_free_blocks":0,"inactive_blocks":1,"reserved_bytes":1024,"allocated_bytes":512,"active_bytes":512,"requested_bytes":512,"inactive_bytes":512,"inactive_split_bytes":512,"free_segment_bytes":0,"largest_inactive_bytes":512,"fragmentation":0.5,"trace_entries":0,"actions":{}}
{"type":"mem_block","source":"old.pkl","device":"GPU:0","at":"snapshot","row":1,"address":4096,"size":512,"requested_size":512,"state":"active_allocated","stream":0,"segment_address":4096}
E
	run trace-mem --timeline -k 1 notime.pkl
	assert_success
	assert_output - <<E
{"type":"meta","schema":"ndtrace/1","source":"notime.pkl","format":"torch_memory_snapshot","origin_ns":0,"host":null,"rank":null,"producer":"trace-mem $(trace-mem -V | cut -d' ' -f3)"}
{"type":"counter","ts_ns":0,"name":"memory GPU:0","pid":0,"device":"GPU:0","values":{"allocated_bytes":612,"active_bytes":612,"reserved_bytes":1024},"seq":0,"action":"alloc"}
{"type":"counter","ts_ns":1,"name":"memory GPU:0","pid":0,"device":"GPU:0","values":{"allocated_bytes":512,"active_bytes":612,"reserved_bytes":1024},"seq":1,"action":"free_requested"}
{"type":"mem_snapshot","source":"notime.pkl","device":"GPU:0","segments":1,"segment_types":{},"blocks":2,"active_blocks":1,"pending_free_blocks":0,"inactive_blocks":1,"reserved_bytes":1024,"allocated_bytes":512,"active_bytes":512,"requested_bytes":512,"inactive_bytes":512,"inactive_split_bytes":512,"free_segment_bytes":0,"largest_inactive_bytes":512,"fragmentation":0.5,"trace_entries":2,"actions":{"alloc":1,"free_requested":1}}
{"type":"mem_peak","source":"notime.pkl","device":"GPU:0","ts_ns":0,"seq":0,"allocated_bytes":612,"active_bytes":612,"reserved_bytes":1024,"live_blocks":2,"action":"alloc","size":100,"start_allocated_bytes":512,"final_allocated_bytes":512,"final_active_bytes":612,"final_reserved_bytes":1024,"trace_entries":2,"ooms":0}
{"type":"mem_block","source":"notime.pkl","device":"GPU:0","at":"peak","row":1,"address":4096,"size":512,"stream":0,"before_trace":true}
{"type":"mem_block","source":"notime.pkl","device":"GPU:0","at":"snapshot","row":1,"address":4096,"size":512,"requested_size":512,"state":"active_allocated","stream":0,"segment_address":4096}
E
}

@test "pickle reader: plain data in every protocol reads as Python reads it" {
	for p in 0 1 2 3 4 5; do
		"$PY" "$TOOL" write nested "$T/n$p.pkl" "$p"
		"$PY" "$TOOL" dump "$T/n$p.pkl" > "$T/want"
		run trace-mem --dump "$T/n$p.pkl"
		assert_success
		assert_output "$(cat "$T/want")"
	done
	assert_output '{"a":[{"k":[1,2,[3,"x"]]},{"k":[1,2,[3,"x"]]},{"b":null,"c":true,"d":false}],"e":-1099511627776,"f":1.5,"g":"é中😀","i":[],"j":{},"l":"1180591620717411303424","m":-1,"n":255,"o":65535,"p":2147483648,"q":[]}'
	for p in 4 5; do
		"$PY" "$TOOL" write bytes "$T/b$p.pkl" "$p"
		run trace-mem --dump "$T/b$p.pkl"
		assert_success
		assert_output '{"h":"AP9hYg==","s":[1,2]}'
	done
}

@test "pickle reader: hand-written opcodes (protocol 0 text, memo, marks, floats, keys)" {
	# (dp0 S'a' I01 ... : a protocol 0 dict with a memoized list used twice
	printf "(dp0\nS'a\\\\'b'\np1\n(lp2\nI1\naL-12L\naF2.5\nasV\\\\u00e9\np3\ng2\nsI7\nNs." > "$T/p0.pkl"
	run trace-mem --dump "$T/p0.pkl"
	assert_success
	assert_output '{"a'"'"'b":[1,-12,2.5],"é":[1,-12,2.5],"7":null}'
	# protocol 4: FRAME, MEMOIZE, BINGET, TUPLE3, NEWTRUE, BINFLOAT nan, LONG1
	printf '\200\004\225\000\000\000\000\000\000\000\000]\224(\210\211N\207\224h\001G\177\370\000\000\000\000\000\000\212\002\377\177e.' > "$T/p4.pkl"
	run trace-mem --dump "$T/p4.pkl"
	assert_success
	assert_output '[[true,false,null],[true,false,null],null,32767]'
	"$PY" -c 'import pickle,sys; print(pickle.loads(open(sys.argv[1],"rb").read()))' "$T/p4.pkl"
}

@test "malicious pickles are refused before anything runs: exit 2, one exact line" {
	# os.system("touch PWNED") through GLOBAL + REDUCE, built by hand
	printf '\200\002cos\nsystem\nq\000X\013\000\000\000touch PWNEDq\001\205q\002Rq\003.' > "$T/evil.pkl"
	cd "$T"
	run trace-mem "$T/evil.pkl"
	assert_failure 2
	assert_output "trace-mem: $T/evil.pkl: byte 2: refused pickle opcode GLOBAL (0x63): it imports a Python object by name; only plain data is read"
	[ ! -e "$T/PWNED" ]
	run trace-mem --dump "$T/evil.pkl"
	assert_failure 2
	[ ! -e "$T/PWNED" ]
	# protocol 0, STACK_GLOBAL, a REDUCE on its own, and the other refused opcodes
	check() { # bytes offset name hex why
		printf "$1" > "$T/e.pkl"
		run trace-mem --snapshot "$T/e.pkl"
		assert_failure 2
		assert_output "trace-mem: $T/e.pkl: byte $2: refused pickle opcode $3 ($4): $5; only plain data is read"
	}
	check "cos\nsystem\n(S'id'\ntR." 0 GLOBAL 0x63 "it imports a Python object by name"
	check '\200\004\214\002os\214\006system\223.' 14 STACK_GLOBAL 0x93 "it imports a Python object by name"
	check '\200\002N)R.' 4 REDUCE 0x52 "it calls a Python object"
	check '\200\002}N\142.' 4 BUILD 0x62 "it sets an object's state through Python code"
	check "(ios\nsystem\n." 1 INST 0x69 "it imports a class and creates an instance"
	check '\200\002(N\157.' 4 OBJ 0x6f "it creates a class instance"
	check '\200\002N)\201.' 4 NEWOBJ 0x81 "it creates a class instance"
	check '\200\004N)}\222.' 5 NEWOBJ_EX 0x92 "it creates a class instance"
	check "Pfoo\n." 0 PERSID 0x50 "it asks the caller for an external object"
	check '\200\002NQ.' 3 BINPERSID 0x51 "it asks the caller for an external object"
	check '\200\002\202\001.' 2 EXT1 0x82 "it imports an object from the extension registry"
	check '\200\002\203\001\000.' 2 EXT2 0x83 "it imports an object from the extension registry"
	check '\200\002\204\001\000\000\000.' 2 EXT4 0x84 "it imports an object from the extension registry"
	check '\200\005\227.' 2 NEXT_BUFFER 0x97 "it needs an out-of-band buffer"
	check '\200\005N\230.' 3 READONLY_BUFFER 0x98 "it needs an out-of-band buffer"
	# a snapshot-shaped dict with a global deep inside is refused as a whole
	printf '\200\004}\224\214\010segments\224]\224}\224\214\006device\224\214\005torch\224\214\006device\224\223.' > "$T/deep.pkl"
	run trace-mem "$T/deep.pkl"
	assert_failure 2
	assert_output "trace-mem: $T/deep.pkl: byte 45: refused pickle opcode STACK_GLOBAL (0x93): it imports a Python object by name; only plain data is read"
	# Python's restricted reader refuses the same files
	run "$PY" "$TOOL" dump "$T/evil.pkl"
	assert_failure
	assert_output --partial "refused global os.system"
}

@test "hostile structures are refused with a byte offset" {
	bad() { # bytes message
		printf "$1" > "$T/h.pkl"
		run trace-mem --dump "$T/h.pkl"
		assert_failure 2
		assert_output "trace-mem: $T/h.pkl: $2"
	}
	bad '\200\004]\224h\000a.' "byte 6: APPEND puts a list into itself: self-referencing structures are not supported"
	bad '\200\004]\224]\224h\000a0K\001a.' "byte 12: APPEND changes a list already placed in another container: self-referencing structures are not supported"
	bad '\200\004h\007.' "byte 2: BINGET: memo key 7 was never stored"
	bad '\200\004r\377\377\377\377.' "byte 2: LONG_BINPUT with an empty stack"
	bad '\200\004N\224r\377\377\377\000.' "byte 4: LONG_BINPUT index 16777215 is out of range"
	bad '\200\006N.' "byte 0: unsupported pickle protocol 6"
	bad '\200\004\377.' "byte 2: unknown pickle opcode 0xff"
	bad '\200\004a.' "byte 2: APPEND needs 2 values on the stack: stack underflow"
	bad '\200\004e.' "byte 2: APPENDS without a MARK"
	bad '\200\004}(K\001u.' "byte 6: SETITEMS with an odd number of values (a key without a value)"
	bad '\200\004K\001K\002a.' "byte 6: APPEND on an int, not a list"
	bad '\200\004\213\377\377\377\377.' "byte 2: LONG4 with a negative byte count"
	bad '\200\004X\377\377\377\177abc.' "byte 2: truncated pickle: BINUNICODE of 2147483647 bytes, 4 left"
	bad '\200\004\225\377\000\000\000\000\000\000\000N.' "byte 2: truncated pickle: FRAME of 255 bytes, 2 left"
	bad '' "byte 0: truncated pickle: the input ends without a STOP opcode"
	bad '(.' "byte 1: STOP with an empty stack"
	# nesting: 101 lists deep
	{ printf '\200\004'; for i in $(seq 101); do printf ']'; done; for i in $(seq 100); do printf 'a'; done; printf '.'; } > "$T/deep.pkl"
	run trace-mem --dump "$T/deep.pkl"
	assert_failure 2
	assert_output "trace-mem: $T/deep.pkl: byte 202: containers nested deeper than 100"
	# "billion laughs": each list holds the previous one twice
	{ printf '\200\004]\224(K\001K\002e'; for i in $(seq 40); do printf ']\224(h%b' "\\$(printf '%03o' $((i - 1)))"; printf 'h%be' "\\$(printf '%03o' $((i - 1)))"; done; printf '.'; } > "$T/laughs.pkl"
	run trace-mem --dump "$T/laughs.pkl"
	assert_failure 2
	assert_output --regexp "^trace-mem: $T/laughs.pkl: byte [0-9]+: the value expands to more than [0-9]+ nodes through shared references \(64 per input byte\): refused$"
}

@test "truncated pickles fail cleanly at many offsets: exit 2, one line" {
	"$PY" "$TOOL" write small "$T/s.pkl" 4
	"$PY" "$TOOL" write nested "$T/n.pkl" 0
	# every offset near both ends, every 37th in between
	"$PY" -c '
import sys
for f in sys.argv[1:]:
    d = open(f, "rb").read()
    n = len(d)
    for i in range(1, n):
        if i < 12 or i > n - 12 or i % 37 == 0:
            open("%s.%d" % (f, i), "wb").write(d[:i])
' "$T/s.pkl" "$T/n.pkl"
	for t in "$T"/s.pkl.* "$T"/n.pkl.*; do
		rc=0
		trace-mem --snapshot "$t" > "$T/out" 2> "$T/err" || rc=$?
		[ "$rc" -eq 2 ] || fail "$t: exit $rc"
		[ ! -s "$T/out" ] || fail "$t: wrote output"
		mapfile -t err < "$T/err"
		[ "${#err[@]}" -eq 1 ] || fail "$t: ${err[*]}"
		[[ "${err[0]}" =~ ^trace-mem:\ $t:\ byte\ [0-9]+:\ truncated\ pickle:\  ]] ||
			fail "$t: ${err[0]}"
	done
}

@test "not a snapshot: a clear error" {
	printf '\200\004K\005.' > "$T/int.pkl"
	run trace-mem "$T/int.pkl"
	assert_failure 2
	assert_output "trace-mem: $T/int.pkl: not a PyTorch memory snapshot: an int without a \"segments\" list"
	printf '\200\004}\224\214\010segments\224]\224K\001a.' > "$T/seg.pkl"
	run trace-mem "$T/seg.pkl"
	assert_failure 2
	assert_output "trace-mem: $T/seg.pkl: segments[0] is an int, not a dict"
}

@test "snapshot input: sniffed in regular files and redirected stdin, gzip too; --snapshot for pipes" {
	"$PY" "$TOOL" write small "$T/s.pkl" 4
	trace-mem -k 0 "$T/s.pkl" | sed "s|$T/s.pkl|X|" > "$T/want"
	run bash -c "trace-mem -k 0 < '$T/s.pkl' | sed 's|<stdin>|X|'"
	assert_success
	assert_output "$(cat "$T/want")"
	gzip -c "$T/s.pkl" > "$T/s.pkl.gz"
	run bash -c "trace-mem -k 0 '$T/s.pkl.gz' | sed 's|$T/s.pkl.gz|X|'"
	assert_success
	assert_output "$(cat "$T/want")"
	run bash -c "cat '$T/s.pkl' | trace-mem -k 0 --snapshot | sed 's|<stdin>|X|'"
	assert_success
	assert_output "$(cat "$T/want")"
	# a stream file and a snapshot in one run
	kineto_stream > "$T/k.ndjson"
	run trace-mem -k 0 "$T/k.ndjson" "$T/s.pkl"
	assert_success
	assert_line --index 0 "$KPEAK_CPU"
	assert_line --index 1 "$KPEAK_GPU"
	assert_line --index 2 --partial '{"type":"mem_snapshot","source":"'
}

@test "options: exclusive modes, bad values, -o" {
	run trace-mem --table --timeline /dev/null
	assert_failure 2
	assert_output "trace-mem: --timeline, --table and --dump exclude each other"
	run trace-mem --sort big /dev/null
	assert_failure 2
	assert_output "trace-mem: --sort: 'big' is not self or total"
	run trace-mem -k -1 /dev/null
	assert_failure 2
	kineto_stream > "$T/k.ndjson"
	run trace-mem -k 0 -o "$T/out.ndjson" "$T/k.ndjson"
	assert_success
	assert_output ""
	run cat "$T/out.ndjson"
	assert_output "$KPEAK_CPU
$KPEAK_GPU"
}

@test "real snapshot: totals, peak and largest blocks agree with Python's pickle" {
	need_fixtures
	trace-mem -k 10 "$SNAP" | jq -cS '
	  if .type=="mem_snapshot" then {type,device,segments,blocks,active_blocks,inactive_blocks,reserved_bytes,allocated_bytes,active_bytes,requested_bytes,inactive_bytes,inactive_split_bytes,free_segment_bytes,largest_inactive_bytes,trace_entries}
	  elif .type=="mem_peak" then {type,device,allocated_bytes,live_blocks,final_allocated_bytes} + (if .seq then {seq,ts_ns} else {} end)
	  elif .type=="mem_block" and .at=="peak" then {type,at,row,address,size} + (if .seq then {seq} else {} end)
	  elif .type=="mem_block" then {type,at,device,row,address,size,requested_size} else empty end' > "$T/c"
	"$PY" "$TOOL" expect "$SNAP" -k 10 > "$T/p"
	run diff "$T/c" "$T/p"
	assert_success
	# what the file holds, as a reader would check by hand
	run jq -c 'select(.type=="mem_snapshot") | [.segments, .blocks, .active_blocks, .reserved_bytes, .allocated_bytes, .requested_bytes, .trace_entries, .actions]' <(trace-mem "$SNAP")
	assert_output '[216,455,229,14180941824,1377753600,1373919236,5163,{"alloc":1721,"free_requested":1721,"free_completed":1721}]'
	run jq -c 'select(.type=="mem_peak") | [.seq, .allocated_bytes, .live_blocks, .frames[0].name, .final_allocated_bytes]' <(trace-mem "$SNAP")
	assert_output '[1402,13923997700,504,"log_softmax",1373919236]'
}

@test "real snapshot: the timeline is a valid stream; its dump matches Python's" {
	need_fixtures
	trace-mem --timeline -k 0 "$SNAP" > "$T/tl.ndjson"
	run trace-check "$T/tl.ndjson"
	assert_success
	run jq -s -c '[map(select(.type=="counter")) | length, (map(select(.type=="counter")) | last | .values.allocated_bytes), (map(select(.type=="counter") | .values.allocated_bytes) | max)]' "$T/tl.ndjson"
	assert_output '[5163,1373919236,13923997700]'
	# the same values (0.0 is written 0: compare as JSON, not as text)
	trace-mem --dump "$SNAP" > "$T/c"
	"$PY" "$TOOL" dump "$SNAP" > "$T/p"
	run "$PY" -c 'import json,sys; a,b=(json.load(open(f)) for f in sys.argv[1:]); sys.exit(a!=b)' "$T/c" "$T/p"
	assert_success
}

@test "real Kineto traces: trace-mem agrees with an independent pass over the same stream" {
	need_fixtures
	for f in tracelens_h100_qwen tracelens_mi300_ddp_resnet18; do
		chrome2ndjson "$FIXTURES/chrome/$f.json.gz" > "$T/s.ndjson"
		trace-mem -k 100000 "$T/s.ndjson" | jq -cS 'if .type=="mem_peak" then {type,device,allocator,ts_ns,allocated_bytes,reserved_bytes,pid,tid,op,samples,allocs,alloc_bytes,frees,free_bytes} elif .type=="mem_top" then {type,device,allocator,op,allocs,alloc_bytes,frees,free_bytes} else empty end | with_entries(select(.value!=null))' > "$T/c"
		"$PY" "$STREAMTOOL" "$T/s.ndjson" > "$T/p"
		run diff "$T/c" "$T/p"
		assert_success
		trace-mem --timeline "$T/s.ndjson" > "$T/tl.ndjson"
		run trace-check "$T/tl.ndjson"
		assert_success
	done
	# the H100 peak by jq alone: the largest "Total Allocated" of the CUDA device
	chrome2ndjson "$FIXTURES/chrome/tracelens_h100_qwen.json.gz" > "$T/s.ndjson"
	want=$(jq -s -c 'map(select(.name=="[memory]" and .args["Device Type"]==1)) | [length, (map(.args["Total Allocated"]) | max)]' "$T/s.ndjson")
	run jq -c 'select(.type=="mem_peak" and .device=="GPU:0") | [.samples, .allocated_bytes]' <(trace-mem "$T/s.ndjson")
	assert_output "$want"
	assert_output '[2250,2088508416]'
}

@test "real XPlane profiles: allocator series agree with an independent pass" {
	need_fixtures
	for f in rocm_jax_conv_8gpu tpu_inference_4core; do
		xplane2ndjson "$FIXTURES/xplane/$f.xplane.pb" > "$T/s.ndjson"
		trace-mem -k 100000 "$T/s.ndjson" | jq -cS 'if .type=="mem_peak" then {type,device,allocator,ts_ns,allocated_bytes,reserved_bytes,pid,tid,op,samples,allocs,alloc_bytes,frees,free_bytes} elif .type=="mem_top" then {type,device,allocator,op,allocs,alloc_bytes,frees,free_bytes} else empty end | with_entries(select(.value!=null))' > "$T/c"
		"$PY" "$STREAMTOOL" "$T/s.ndjson" > "$T/p"
		run diff "$T/c" "$T/p"
		assert_success
	done
	run jq -c 'select(.type=="mem_peak") | [.device, .allocated_bytes]' <(trace-mem "$T/s.ndjson")
	assert_output - <<'E'
["TPU:0",16106341504]
["TPU:1",10737555584]
["TPU:2",10737555584]
["TPU:3",10737555584]
E
}
