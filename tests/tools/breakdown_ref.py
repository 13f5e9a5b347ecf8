#!/usr/bin/python3
"""Independent computation of trace-steps' profile windows, to cross-check.

    breakdown_ref.py FILE...

For a stream whose sources have no steps, trace-steps(1) writes one
"profile_window" record per device: the window from the device's first op
start to its last op end, broken down into compute, communication, memory,
host and idle time (the first that holds, per nanosecond), overlap
(compute and communication at once) and wait (communication on the device
or on the host).  This recomputes them from the manual's rules with merged
interval lists and set arithmetic (trace-steps sweeps interval logs), and
prints one JSON object per line, by file, then sorted by (source, device):

  {"source": 0, "device": "GPU:0", "ts_ns": ..., "dur_ns": ...,
   "compute_ns": ..., ..., "overlap_ns": ..., "wait_ns": ...}

Python standard library only.
"""
import json
import sys

from device_rule import kind
from steps_check import devkey

PARTS = ("compute_ns", "communication_ns", "memory_ns", "host_ns",
         "idle_ns", "overlap_ns", "wait_ns")


def merge(ivs):
    """Sorted, disjoint, non-touching union of [lo, hi) pairs."""
    out = []
    for lo, hi in sorted(ivs):
        if out and lo <= out[-1][1]:
            out[-1][1] = max(out[-1][1], hi)
        else:
            out.append([lo, hi])
    return out


def clip(a, lo, hi):
    return [[max(x, lo), min(y, hi)] for x, y in a if y > lo and x < hi]


def inter(a, b):
    out, i, j = [], 0, 0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if lo < hi:
            out.append([lo, hi])
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return out


def minus(a, b):
    """a without b (both merged)."""
    out = []
    for lo, hi in a:
        cur = lo
        for x, y in b:
            if y <= cur or x >= hi:
                continue
            if x > cur:
                out.append([cur, x])
            cur = max(cur, y)
        if cur < hi:
            out.append([cur, hi])
    return out


def length(a):
    return sum(y - x for x, y in a)


def host_activity(e):
    cat = (e.get("cat") or "")
    return not (cat.lower() in ("python_function", "user_annotation") or
                e.get("family") == "python" or e.get("class") == "other")


def category(e):
    c = e.get("class")
    if c in ("communication", "stall"):
        return "comm"
    return "memory" if c == "memory" else "compute"


def windows(src, ops, host, hostcomm):
    res = []
    host = merge(host)
    hostcomm = merge(hostcomm)
    for dev in sorted(ops):
        cats = {k: merge(v) for k, v in ops[dev].items()}
        lo = min(x[0] for v in cats.values() for x in v)
        hi = max(x[1] for v in cats.values() for x in v)
        comp = clip(cats.get("compute", []), lo, hi)
        comm = clip(cats.get("comm", []), lo, hi)
        mem = clip(cats.get("memory", []), lo, hi)
        dev_busy = merge(comp + comm + mem)
        r = {"source": src, "device": dev, "ts_ns": lo, "dur_ns": hi - lo}
        r["compute_ns"] = length(comp)
        r["communication_ns"] = length(minus(comm, comp))
        r["memory_ns"] = length(minus(mem, merge(comp + comm)))
        h = minus(clip(host, lo, hi), dev_busy)
        r["host_ns"] = length(h)
        r["idle_ns"] = hi - lo - length(dev_busy) - length(h)
        r["overlap_ns"] = length(inter(comp, comm))
        r["wait_ns"] = length(merge(comm + clip(hostcomm, lo, hi)))
        res.append(r)
    return res


def main():
    for path in sys.argv[1:]:
        one(path)


def one(path):
    out = []
    src, ops, host, hostcomm = -1, {}, [], []
    with open(path) as f:
        for line in f:
            e = json.loads(line)
            if e.get("type") == "meta":
                if src >= 0 or ops or host:
                    out += windows(src, ops, host, hostcomm)
                src, ops, host, hostcomm = src + 1, {}, [], []
                continue
            if e.get("type") != "span" or not e.get("dur_ns", 0) > 0:
                continue
            iv = (e["ts_ns"], e["ts_ns"] + e["dur_ns"])
            k = kind(e)
            if k == "device":
                ops.setdefault(devkey(e), {}).setdefault(
                    category(e), []).append(iv)
            elif k == "host" and host_activity(e):
                host.append(iv)
                if e.get("class") == "communication":
                    hostcomm.append(iv)
    out += windows(max(src, 0), ops, host, hostcomm)
    for r in out:
        print(json.dumps(r, sort_keys=True))


if __name__ == "__main__":
    main()
