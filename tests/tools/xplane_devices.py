#!/usr/bin/python3
"""The "devices" object xplane2ndjson's meta record should carry for an
XPlane file, computed independently from xplane2ndjson(1)'s rules with
Google's protobuf runtime on the module protoc generates from
lib/ingest/xplane.proto:

    /usr/bin/python3 tests/tools/xplane_devices.py --pydir DIR FILE [REGEX]

REGEX selects planes by name as --planes does (re.search).  Prints the
object as JSON with sorted keys, or null when no plane states anything.
"""
import argparse
import gzip
import json
import math
import re
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pydir", required=True)
    ap.add_argument("file")
    ap.add_argument("planes", nargs="?")
    a = ap.parse_args()
    sys.path.insert(0, a.pydir)
    import xplane_pb2

    with open(a.file, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    xs = xplane_pb2.XSpace()
    xs.ParseFromString(data)
    out = {}
    for p in xs.planes:
        if not p.name.startswith("/device:"):
            continue
        if a.planes is not None and not re.search(a.planes, p.name):
            continue
        key = p.name[len("/device:"):]
        if key.startswith("CUSTOM:"):
            key = key[len("CUSTOM:"):]
        st = {}
        for s in p.stats:
            kind = s.WhichOneof("value")
            v = getattr(s, kind) if kind else None
            if kind == "ref_value":
                v = p.stat_metadata[s.ref_value].name
            st[p.stat_metadata[s.metadata_id].name] = (kind, v)

        def text(k):
            kind, v = st.get(k, (None, None))
            return v if kind in ("str_value", "ref_value") and v else None

        def num(k):
            kind, v = st.get(k, (None, None))
            ok = kind in ("double_value", "uint64_value", "int64_value")
            return v if ok and v > 0 and math.isfinite(v) else None

        def small(k):
            kind, v = st.get(k, (None, None))
            ok = kind in ("uint64_value", "int64_value")
            return v if ok and 0 <= v < 1000 else None

        d = {}
        cc = (small("compute_cap_major"), small("compute_cap_minor"))
        has_cc = None not in cc
        vendor = text("device_vendor")
        if text("device_type_string"):
            d["name"] = text("device_type_string")
        elif vendor or has_cc:
            d["name"] = ((vendor + " ") if vendor else "") + "GPU" + \
                (" (compute capability %d.%d)" % cc if has_cc else "")
        for k in ("peak_teraflops_per_second",
                  "peak_hbm_bw_gigabytes_per_second"):
            if num(k) is not None:
                d[k] = num(k)
        if d and key not in out:
            out[key] = d
    print(json.dumps(out if out else None, sort_keys=True))


main()
