#!/usr/bin/env python3
"""An XPlane profile (hand-encoded, no protobuf module needed) whose 64
event metadata each carry a ref_value stat naming a stat metadata with a
200-byte name: xplane2ndjson copies that name within the buffer that is
growing, which read freed memory before the fix (found by
fuzz_xplane2ndjson).  Writes the profile on stdout."""
import sys


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field(num, val):
    if isinstance(val, int):
        return varint(num << 3) + varint(val)
    return varint(num << 3 | 2) + varint(len(val)) + val


N = 64
line = field(1, 1) + field(2, b"XLA Ops") + field(3, 1000)
for k in range(1, N + 1):
    line += field(4, field(1, k) + field(2, 10 * k) + field(3, 5))
plane = field(1, 1) + field(2, b"/device:TPU:0") + field(3, line)
for k in range(1, N + 1):
    md = field(1, k) + field(2, b"op.%d" % k) + field(5, field(1, 1) + field(7, 2))
    plane += field(4, field(1, k) + field(2, md))
plane += field(5, field(1, 1) + field(2, field(1, 1) + field(2, b"kind")))
plane += field(5, field(1, 2) + field(2, field(1, 2) + field(2, b"R" * 200)))
sys.stdout.buffer.write(field(1, plane))
