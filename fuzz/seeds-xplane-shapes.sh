#!/bin/sh
# Seeds for fuzz_xplane and fuzz_xplane2ndjson: small instances of the
# hostile XPlane shapes of tests/hostile-xplane.bats (issue 18, items 13 and
# 18) -- plane and line ids at the edges of int64 and 2^53 (repeated, so
# that fresh ids are drawn), an event whose duration passes 2^53, long
# strings and many stats, thousands of empty planes and lines, sparse
# metadata ids, a top-level group, a field claiming more bytes than any
# cap, zeros -- so that mutations start from the files that once gave
# invalid ids, overlong lines or unbounded memory.
#   sh fuzz/seeds-xplane-shapes.sh BIN_DIR CORPUS_DIR FIXTURES_DIR
set -eu
X=$2/fuzz_xplane
mkdir -p "$X" "$2/fuzz_xplane2ndjson"
top=$(cd "$(dirname "$0")/.." && pwd)
python3 - "$X" "$top/tests/tools" <<'EOF'
import os, sys
sys.path.insert(0, sys.argv[2])
from xpb import *     # the protobuf writer of tests/hostile-xplane.bats

d = sys.argv[1]

def put(name, data):
    with open(os.path.join(d, "shape-" + name), "wb") as f:
        f.write(data)

M, S = (1 << 63) - 1, 1 << 53
ev = [event(1, 0, 1000)]
put("ids", space([plane(M, "/device:TPU:0",
    [line(7, "XLA Ops", 0, ev, S - 1), line(8, "XLA Ops", 0, ev, S - 1), line(M, "XLA Ops", 0, ev),
     line(S, "XLA Ops", 0, ev), line(-(1 << 63), "XLA Ops", 0, ev)], [(1, "op")])] +
    [plane(i, "p", [line(1, "XLA Ops", 0, ev)], [(1, "op")])
     for i in (M, S - 1, S, -(1 << 63), -S - 1)]))
put("dur", space([plane(1, "/device:TPU:0",
    [line(1, "XLA Ops", 0, [event(1, -S * 1000, 9200000000000000000), event(1, 0, 1)])],
    [(1, "op")])]))
put("long-string", space([plane(1, "/device:TPU:0",
    [line(1, "XLA Ops", 0, [event(1, 0, 1000, [stat(2, "a" * 4000 + "\u00e9" + "\x01" * 4000)])])],
    [(1, "n" * 3000)], [(2, "s")])]))
put("many-stats", space([plane(1, "/device:TPU:0",
    [line(1, "XLA Ops", 0, [event(1, 0, 1000, [stat(10 + k, "\x01" * 200) for k in range(40)])])],
    [(1, "op")], [(10 + k, "s%d" % k) for k in range(40)])]))
put("empty-planes", b"\x0a\x00" * 20000)
put("empty-lines", space([plane(3, "/host:CPU", [b""] * 5000)]))
put("sparse-md", space([plane(1, "/device:TPU:0",
    [line(1, "XLA Ops", 0, [event(k, i * 1000, 1000) for i, k in enumerate((10**12, 5, -3, 1 << 62))])],
    [(k, "op%d" % k) for k in (10**12, 5, -3, 1 << 62)])]))
# a group at the top level (skipped), then a plane
put("group", varint(99 << 3 | 3) + fv(1, 5) + varint(99 << 3 | 4) +
    space([plane(1, "/device:TPU:0", [line(1, "XLA Ops", 0, ev)], [(1, "op")])]))
put("huge-field", b"\x0a" + varint(1 << 62) + b"\x00" * 64)
put("zeros", b"\x00" * 4096)
EOF
cp "$X"/shape-* "$2/fuzz_xplane2ndjson/"
exit 0
