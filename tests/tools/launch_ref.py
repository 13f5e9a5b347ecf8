#!/usr/bin/python3
"""Independent reference for trace-report's launch_ops, from the raw Chrome
trace JSON (not the stream): device ops (the cat list of ndtrace(7)) are
matched to their launch (any other complete event with the same integer
args.correlation), and each launch to the cpu_op / Operator events of its
(pid, tid) that contain its start: innermost = latest start (shorter, then
later in the file, on ties), top-level = earliest start (longer, then
earlier in the file).

    launch_ref.py TRACE.json[.gz]

prints {"by_op": {name: [ops, ns]}, "by_top_op": ..., "device_ops",
"device_ns", "unmatched_ops", "unmatched_ns"}; a launch outside every CPU
op is the name "null".
"""
import bisect, gzip, json, sys
from decimal import Decimal

DEV = {"kernel", "gpu_memcpy", "gpu_memset", "cuda_sync", "gpu_op",
       "mtia_ccp_events", "hpu_op", "memcpy", "memset"}

def ns(x):
    return int((Decimal(str(x)) * 1000).to_integral_value())

path = sys.argv[1]
op = gzip.open if path.endswith(".gz") else open
with op(path, "rt") as f:
    doc = json.load(f, parse_float=Decimal)
evs = doc["traceEvents"] if isinstance(doc, dict) else doc
ops, launches, dev = {}, {}, []
for e in evs:
    if e.get("ph") != "X" or "dur" not in e:
        continue
    cat = str(e.get("cat", ""))
    a = e.get("args") or {}
    corr = a.get("correlation", a.get("correlation_id"))
    ts, d = ns(e["ts"]), ns(e["dur"])
    if cat.lower() in DEV:
        if isinstance(corr, int):
            dev.append((corr, d))
        continue
    th = (e.get("pid"), e.get("tid"))
    if isinstance(corr, int):
        launches[corr] = (th, ts)
    elif cat in ("cpu_op", "Operator") and d > 0:
        ops.setdefault(th, []).append((ts, d, e.get("name", "")))
starts, longest = {}, {}
for th in ops:
    ops[th].sort(key=lambda o: (o[0], -o[1]))
    starts[th] = [o[0] for o in ops[th]]
    longest[th] = max(o[1] for o in ops[th])
def enclosing(th, t):
    # the ops that start at or before t, back to the longest op's reach
    v = ops.get(th, [])
    hi = bisect.bisect_right(starts.get(th, []), t)
    lo = hi
    while lo > 0 and v[lo - 1][0] + longest[th] > t:
        lo -= 1
    c = [o for o in v[lo:hi] if t < o[0] + o[1]]
    if not c:
        return None, None
    # c is in (start, longer first, file order) order: the last is the
    # innermost, the first the outermost
    return c[-1][2], c[0][2]
cache = {}
res = {"by_op": {}, "by_top_op": {}, "device_ops": 0, "device_ns": 0,
       "unmatched_ops": 0, "unmatched_ns": 0}
for corr, d in dev:
    if corr not in launches:
        res["unmatched_ops"] += 1
        res["unmatched_ns"] += d
        continue
    if corr not in cache:
        cache[corr] = enclosing(*launches[corr])
    inner, top = cache[corr]
    for k, n in (("by_op", inner), ("by_top_op", top)):
        r = res[k].setdefault(n if n is not None else "null", [0, 0])
        r[0] += 1
        r[1] += d
    res["device_ops"] += 1
    res["device_ns"] += d
print(json.dumps(res, sort_keys=True))
