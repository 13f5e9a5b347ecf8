#!/usr/bin/python3
"""Independent computation of trace-mem's stream results, to cross-check it.

    mem_stream.py FILE.ndjson

reads an ndtrace stream (one source) and prints, one JSON object per line
with sorted keys, what trace-mem must report for it, from the rules of
trace-mem(1) written out again in plain Python:

  mem_peak  device, allocator, ts_ns, allocated_bytes, reserved_bytes, pid,
            tid, op, samples, allocs, alloc_bytes, frees, free_bytes
  mem_top   device, allocator, op, allocs, alloc_bytes, frees, free_bytes
            (every row, ordered by device, then alloc_bytes descending,
            allocs descending, op)

Kineto [memory] instants and XPlane allocator events are samples; a sample
belongs to the innermost span of its (pid, tid) with start <= ts < end (the
latest-starting such span; of equal starts the shorter, then the later).
"""
import bisect
import json
import re
import sys

KINETO = {0: "CPU", 1: "GPU", 6: "GPU", 9: "XLA", 12: "XPU", 13: "MPS",
          15: "HPU", 19: "MTIA", 20: "PrivateUse1"}


def num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def sample(r):
    a = r.get("args") or {}
    if r.get("name") == "[memory]" and num(a.get("Total Allocated")):
        t, i = a.get("Device Type"), a.get("Device Id")
        if not num(t):
            dev = "unknown"
        elif t == 0:
            dev = "CPU"
        elif t in KINETO:
            dev = "%s:%d" % (KINETO[t], i if num(i) and i >= 0 else 0)
        else:
            dev = "device_type%d:%d" % (t, i if num(i) else 0)
        return {"device": dev, "alloc": a["Total Allocated"],
                "reserved": a.get("Total Reserved"),
                "delta": a.get("Bytes", 0), "op": None}
    if num(a.get("bytes_allocated")):
        dev, alloc = None, None
        name = a.get("allocator_name")
        if isinstance(name, str) and name:
            alloc = name
            if "host" in name or name[:3] in ("cpu", "CPU"):
                dev = "CPU"
            else:
                m = re.match(r"^([A-Za-z]{1,8})_([0-9]{1,6})(_|$)", name)
                if m:
                    dev = "%s:%s" % (m.group(1).upper(), m.group(2))
        elif num(a.get("index_on_host")):
            dev = "TPU:%d" % a["index_on_host"]
        size = a.get("allocation_bytes", a.get("requested_bytes", 0))
        delta = {"MemoryAllocation": size,
                 "MemoryDeallocation": -size}.get(r.get("name"), 0)
        op = a.get("tf_op") if isinstance(a.get("tf_op"), str) and a.get("tf_op") else None
        return {"device": dev, "allocator": alloc, "alloc": a["bytes_allocated"],
                "reserved": a.get("bytes_reserved"), "delta": delta, "op": op}
    return None


def main():
    spans = {}
    samples = []
    for n, line in enumerate(open(sys.argv[1], encoding="utf-8")):
        r = json.loads(line)
        if r["type"] in ("meta", "end") or "ts_ns" not in r:
            continue
        s = sample(r)
        key = (r.get("pid", 0), r.get("tid", 0))
        if s is not None:
            s.update(ts=r["ts_ns"], n=n, pid=r.get("pid"), tid=r.get("tid"),
                     key=key)
            samples.append(s)
        elif r["type"] == "span" and "dur_ns" in r:
            spans.setdefault(key, []).append(
                (r["ts_ns"], -(r["ts_ns"] + r["dur_ns"]), n, r["name"]))
    for v in spans.values():
        v.sort()
    for s in samples:
        op = s["op"]
        if op is None:
            v = spans.get(s["key"], [])
            i = bisect.bisect_right(v, (s["ts"], float("inf")))
            while i > 0:
                i -= 1
                ts, nend, _, name = v[i]
                if ts <= s["ts"] < -nend:
                    op = name
                    break
        s["opname"] = op
    samples.sort(key=lambda s: (s["ts"], s["n"]))
    series = {}
    rows = {}
    for s in samples:
        label = s.get("allocator") or s["device"] or "unknown"
        se = series.setdefault(label, {"peak": None, "samples": 0,
                                       "allocs": 0, "alloc_bytes": 0,
                                       "frees": 0, "free_bytes": 0, "s": s})
        if se["peak"] is None or s["alloc"] > se["peak"]["alloc"]:
            se["peak"] = s
        se["samples"] += 1
        row = rows.setdefault((label, s["opname"]), {
            "allocs": 0, "alloc_bytes": 0, "frees": 0, "free_bytes": 0,
            "s": s})
        if s["delta"] > 0:
            se["allocs"] += 1
            se["alloc_bytes"] += s["delta"]
            row["allocs"] += 1
            row["alloc_bytes"] += s["delta"]
        elif s["delta"] < 0:
            se["frees"] += 1
            se["free_bytes"] -= s["delta"]
            row["frees"] += 1
            row["free_bytes"] -= s["delta"]

    def ident(s):
        d = {}
        if s.get("device"):
            d["device"] = s["device"]
        if s.get("allocator"):
            d["allocator"] = s["allocator"]
        if not d:
            d["device"] = "unknown"
        return d

    for label in sorted(series):
        se = series[label]
        p = se["peak"]
        rec = {"type": "mem_peak", "ts_ns": p["ts"],
               "allocated_bytes": p["alloc"], "samples": se["samples"],
               "allocs": se["allocs"], "alloc_bytes": se["alloc_bytes"],
               "frees": se["frees"], "free_bytes": se["free_bytes"]}
        rec.update(ident(p))
        for k in ("pid", "tid"):
            if p[k] is not None:
                rec[k] = p[k]
        if p["reserved"] is not None:
            rec["reserved_bytes"] = p["reserved"]
        if p["opname"] is not None:
            rec["op"] = p["opname"]
        print(json.dumps(rec, sort_keys=True, separators=(",", ":"),
                         ensure_ascii=False))
    order = sorted(rows.items(), key=lambda kv: (
        kv[0][0], -kv[1]["alloc_bytes"], -kv[1]["allocs"],
        kv[0][1] is None, kv[0][1] or ""))
    for (label, op), r in order:
        if r["allocs"] == 0 and r["frees"] == 0:
            continue
        rec = {"type": "mem_top", "allocs": r["allocs"],
               "alloc_bytes": r["alloc_bytes"], "frees": r["frees"],
               "free_bytes": r["free_bytes"]}
        rec.update(ident(r["s"]))
        if op is not None:
            rec["op"] = op
        print(json.dumps(rec, sort_keys=True, separators=(",", ":"),
                         ensure_ascii=False))


if __name__ == "__main__":
    main()
