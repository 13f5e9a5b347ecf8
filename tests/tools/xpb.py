# A protobuf writer for lib/ingest/xplane.proto, by field number.
import struct, sys

def varint(n):
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        b, n = n & 0x7f, n >> 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)

def fv(num, val):                   # varint field
    return varint(num << 3) + varint(val)

def fb(num, data):                  # length-delimited field
    if isinstance(data, str):
        data = data.encode()
    return varint(num << 3 | 2) + varint(len(data)) + data

def stat(md, s=None, i=None):
    b = fv(1, md)
    if s is not None:
        b += fb(5, s)
    if i is not None:
        b += fv(4, i)
    return b

def event(md, off_ps, dur_ps, stats=()):
    return fv(1, md) + fv(2, off_ps) + fv(3, dur_ps) + \
        b"".join(fb(4, s) for s in stats)

def line(ident, name, ts_ns, events, display_id=None):
    b = fv(1, ident) + fb(2, name) + fv(3, ts_ns)
    if display_id is not None:
        b += fv(10, display_id)
    return b + b"".join(fb(4, e) for e in events)

def plane(ident, name, lines, evmd=(), statmd=()):
    b = fv(1, ident) + fb(2, name)
    b += b"".join(fb(3, l) for l in lines)
    for k, n in evmd:                   # map<int64, XEventMetadata>
        b += fb(4, fv(1, k) + fb(2, fv(1, k) + fb(2, n)))
    for k, n in statmd:                 # map<int64, XStatMetadata>
        b += fb(5, fv(1, k) + fb(2, fv(1, k) + fb(2, n)))
    return b

def space(planes):
    return b"".join(fb(1, p) for p in planes)

def write(path, data):
    with open(path, "wb") as f:
        f.write(data)
