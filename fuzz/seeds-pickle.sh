#!/bin/sh
# Seeds for fuzz_pickle: pickles of every protocol written by Python's own
# pickler (plain data and small memory snapshots), hand-made hostile ones,
# and the start of the real snapshot from tests/fixtures.
#   sh fuzz/seeds-pickle.sh BIN_DIR CORPUS_DIR FIXTURES_DIR
set -eu
C=$2/fuzz_pickle
FX=${3:-}
top=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$C"
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
if command -v "$PY" >/dev/null 2>&1; then
	for p in 0 1 2 3 4 5; do
		"$PY" "$top/tests/tools/mem_snapshot.py" write nested "$C/nested-p$p" "$p"
		"$PY" "$top/tests/tools/mem_snapshot.py" write small "$C/small-p$p" "$p"
	done
	for p in 4 5; do
		"$PY" "$top/tests/tools/mem_snapshot.py" write bytes "$C/bytes-p$p" "$p"
	done
fi
# GLOBAL + REDUCE (refused), a self-referencing list (refused), a shared
# list nested by memo (accepted), truncated and empty input.
printf '\200\002cos\nsystem\nq\000X\002\000\000\000idq\001\205q\002Rq\003.' > "$C/evil-global"
printf '\200\004]\224h\000a.' > "$C/cycle"
printf '\200\004]\224(K\001K\002e]\224(h\000h\000e.' > "$C/shared"
printf '\200\004}\224(\214\001a\224K\001' > "$C/truncated"
printf '' > "$C/empty"
# PyTorch memory timelines (inputs starting with '['): both forms
printf '[[-1,1,100,0],[5000,2,50,4],[5000,4,-50,4],[6000,2,30,3]]' > "$C/memtl-raw"
printf '[[1000, 1002], [[0,10,0,0,0,5,0,0,0], [0,10,0,0,0,25,0,0,0]]]' > "$C/memtl-sizes"
# streams for the stream side (inputs starting with '{')
cat > "$C/stream-kineto" <<'S'
{"type":"meta","schema":"ndtrace/1","source":"r.json","format":"chrome","origin_ns":0,"host":null,"rank":0,"producer":"x"}
{"type":"span","ts_ns":0,"dur_ns":100,"name":"ProfilerStep#3","pid":1,"tid":1,"step":3}
{"type":"span","ts_ns":10,"dur_ns":50,"name":"aten::linear","pid":1,"tid":1,"scope":"m/fc1"}
{"type":"span","ts_ns":20,"dur_ns":10,"name":"aten::empty","pid":1,"tid":1}
{"type":"instant","ts_ns":25,"name":"[memory]","pid":1,"tid":1,"args":{"Total Allocated":1000,"Total Reserved":4096,"Bytes":1000,"Device Type":1,"Device Id":0}}
{"type":"instant","ts_ns":70,"name":"[memory]","pid":1,"tid":1,"args":{"Total Allocated":0,"Total Reserved":4096,"Bytes":-1000,"Device Type":0,"Device Id":-1}}
S
cat > "$C/stream-xplane" <<'S'
{"type":"meta","schema":"ndtrace/1","source":"w.pb","format":"xplane","origin_ns":0,"host":null,"rank":null,"producer":"x"}
{"type":"span","ts_ns":0,"dur_ns":1000,"name":"Build","pid":8,"tid":3}
{"type":"instant","ts_ns":100,"name":"MemoryAllocation","pid":8,"tid":3,"args":{"allocator_name":"GPU_0_bfc","bytes_reserved":0,"bytes_allocated":4096,"peak_bytes_in_use":8192,"allocation_bytes":4096,"tf_op":"dot"}}
{"type":"instant","ts_ns":500,"name":"MemoryDeallocation","pid":8,"tid":3,"args":{"index_on_host":1,"bytes_allocated":0,"allocation_bytes":4096}}
S
if [ -n "$FX" ] && [ -f "$FX/memory/cs336_memory_snapshot.pickle" ]; then
	head -c 60000 "$FX/memory/cs336_memory_snapshot.pickle" > "$C/cs336-head"
fi
exit 0
