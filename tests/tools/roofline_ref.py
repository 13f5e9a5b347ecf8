#!/usr/bin/env python3
"""Reference for trace-roofline, written from the definitions in
trace-roofline(1), for cross-checks.

  roofline_ref.py TFLOPS GBPS [device|host] < STREAM > ROWS
      per op name over the spans of the timelines (device: process
      starting with /device: or a GPU cat; host: the rest, no annotation
      lines): name count total_ns flops_count flops_ns flops bytes tflops
      gbps intensity ridge bound attainable pct (tab-separated, sorted by
      name; '-' where undefined).  TFLOPS/GBPS: the peak of every device.
  roofline_ref.py check REF < TRACE_ROOFLINE_OUTPUT
      compare trace-roofline rows with REF: integers exactly, floats to a
      relative 1e-12; prints "ok N" or the first difference, exit 1.
"""
import json
import sys

from device_rule import kind


def num(a, k):
    v = a.get(k)
    return v if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def ref(tf, bw, tl):
    rows = {}
    for line in sys.stdin:
        r = json.loads(line)
        if r.get("type") != "span" or "dur_ns" not in r or kind(r) != tl:
            continue
        g = rows.setdefault(r.get("name"), dict(n=0, t=0, fn=0, ft=0, f=0.0,
                                                 b=0.0, bn=0))
        g["n"] += 1
        g["t"] += r["dur_ns"]
        a = r.get("args") or {}
        f = num(a, "flops")
        if f is None:
            f = num(a, "model_flops")
        if f is None:
            continue
        g["fn"] += 1
        g["ft"] += r["dur_ns"]
        g["f"] += f
        b = num(a, "bytes_accessed")
        if b is not None:
            g["b"] += b
            g["bn"] += 1
    for name in sorted(rows):
        g = rows[name]
        if g["fn"] == 0:
            continue
        out = [name, g["n"], g["t"], g["fn"], g["ft"], g["f"]]
        t = g["ft"]
        tflops = g["f"] / t / 1e3
        if g["bn"] == g["fn"] and g["b"] > 0:
            gbps = g["b"] / t
            ai = g["f"] / g["b"]
            ridge = tf * 1e3 / bw
            if ai < ridge:
                bound, att, pct = "memory", ai * bw / 1e3, gbps / bw * 100
            else:
                bound, att, pct = "compute", tf, tflops / tf * 100
            out += [g["b"], tflops, gbps, ai, ridge, bound, att, pct]
        else:
            out += ["-", tflops] + ["-"] * 6
        print("\t".join(str(x) for x in out))


def check(path):
    keys = ["name", "count", "total_ns", "flops_count", "flops_ns", "flops",
            "bytes", "tflops", "gbps", "intensity", "ridge", "bound",
            "attainable_tflops", "pct_of_roofline"]
    want = {}
    for line in open(path):
        f = line.rstrip("\n").split("\t")
        want[f[0]] = f
    got = [json.loads(l) for l in sys.stdin if '"type":"roofline"' in l]
    if len(got) != len(want):
        print("rows: %d, reference %d" % (len(got), len(want)))
        sys.exit(1)
    for r in got:
        w = want.get(r.get("name"))
        if w is None:
            print("unexpected row", r.get("name"))
            sys.exit(1)
        for k, ws in zip(keys, w):
            g = r.get(k)
            if ws == "-":
                if g is not None:
                    print(r["name"], k, "is", g, "reference: none")
                    sys.exit(1)
                continue
            if k in ("name", "bound"):
                ok = g == ws
            else:
                x = float(ws)
                ok = g is not None and abs(g - x) <= 1e-12 * max(abs(x), 1e-300)
            if not ok:
                print(r["name"], k, "is", g, "reference", ws)
                sys.exit(1)
    print("ok", len(got))


if __name__ == "__main__":
    if sys.argv[1] == "check":
        check(sys.argv[2])
    else:
        ref(float(sys.argv[1]), float(sys.argv[2]),
            sys.argv[3] if len(sys.argv) > 3 else "device")
