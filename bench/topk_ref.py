#!/usr/bin/python3
"""The python3 reference of bench/table.sh: the top-k table of trace-topk
(device ops by name, exclusive time), computed the way a small Python
script would, from the same file ndtrace reads.

    topk_ref.py [-k N] ndjson FILE     an ndtrace stream (stdlib json)
    topk_ref.py [-k N] chrome FILE     Chrome/Kineto JSON (stdlib json.load)
    topk_ref.py [-k N] --pydir D xplane FILE
                                       XPlane protobuf (Debian's
                                       python3-protobuf on the module protoc
                                       makes from lib/ingest/xplane.proto)

It prints one JSON array per name, [name, count, total_ns, self_ns],
largest self time first (ties by name), the top N (default 0: all), so that
bench/table.sh can compare it with `trace-topk -k 0`.

The rules are trace-topk(1)'s: a device op is a span whose cat is a GPU
activity (kernel, gpu_memcpy, gpu_memset, Kernel, Memcpy, Memset) or whose
process begins with /device: on a line other than XPlane's annotation lines;
on one timeline a span is the child of the innermost span it starts inside
(ties: the longer is the parent, zero-length spans are never parents); its
exclusive time is its duration minus the union of its descendants clipped
to its end.
"""
import json
import sys

GPU_CATS = {"kernel", "gpu_memcpy", "gpu_memset", "memcpy", "memset"}
ANNOTATION_LINES = {"Steps", "XLA Modules", "XLA TraceMe", "TensorFlow Ops",
                    "TensorFlow Name Scope", "Framework Ops",
                    "Framework Name Scope", "Source code", "Launch Stats"}


class Agg:
    """Per-name rows and one open-span stack per timeline."""

    def __init__(self):
        self.rows = {}     # name -> [count, total, self]
        self.stacks = {}   # timeline -> [[end, cov, covered, dur, name], ...]

    def close(self, e):
        r = self.rows[e[4]]
        r[2] += e[3] - e[2]

    def span(self, tl, ts, dur, name):
        r = self.rows.get(name)
        if r is None:
            r = self.rows[name] = [0, 0, 0]
        r[0] += 1
        r[1] += dur
        st = self.stacks.get(tl)
        if st is None:
            st = self.stacks[tl] = []
        while st and ts >= st[-1][0]:
            self.close(st.pop())
        end = ts + dur
        for a in st:               # every open ancestor: add to its union
            lo = ts if ts > a[1] else a[1]
            hi = end if end < a[0] else a[0]
            if hi > lo:
                a[2] += hi - lo
                a[1] = hi
        if dur > 0:
            st.append([end, ts, 0, dur, name])

    def finish(self):
        for st in self.stacks.values():
            while st:
                self.close(st.pop())
        return self.rows


def device_op(process, thread, cat):
    if cat and cat.lower() in GPU_CATS:
        return True
    return bool(process) and process.startswith("/device:") and \
        thread not in ANNOTATION_LINES


def from_ndjson(path):
    agg = Agg()
    src = None
    with open(path, "rb") as f:
        for line in f:
            r = json.loads(line)
            t = r.get("type")
            if t == "meta":
                src = r.get("source")
            elif t == "span" and device_op(r.get("process"), r.get("thread"),
                                           r.get("cat")):
                agg.span((src, r["pid"], r["tid"]), r["ts_ns"], r["dur_ns"],
                         r["name"])
    return agg.finish()


def ns(v):
    return int(round(float(v) * 1000))


def from_chrome(path):
    with open(path, "rb") as f:
        doc = json.load(f)
    evs = doc["traceEvents"] if isinstance(doc, dict) else doc
    tls = {}
    for e in evs:
        if e.get("ph") == "X" and str(e.get("cat", "")).lower() in GPU_CATS:
            ts = ns(e["ts"])
            dur = ns(e.get("dur", 0))
            tls.setdefault((e.get("pid"), e.get("tid")), []).append(
                (ts, -dur, e["name"]))
    agg = Agg()
    for tl, spans in tls.items():
        spans.sort(key=lambda s: (s[0], s[1]))   # stable: file order on ties
        for ts, nd, name in spans:
            agg.span(tl, ts, -nd, name)
    return agg.finish()


def from_xplane(path, pydir):
    sys.path.insert(0, pydir)
    import xplane_pb2  # noqa: E402
    space = xplane_pb2.XSpace()
    with open(path, "rb") as f:
        space.ParseFromString(f.read())
    agg = Agg()
    for p in space.planes:
        if not p.name.startswith("/device:"):
            continue
        emd = p.event_metadata
        names = {}
        for ln in p.lines:
            thread = ln.display_name or ln.name
            if thread in ANNOTATION_LINES:
                continue
            base = ln.timestamp_ns
            spans = []
            for e in ln.events:
                if e.WhichOneof("data") == "num_occurrences" or \
                        e.duration_ps <= 0:
                    continue
                n = names.get(e.metadata_id)
                if n is None:
                    md = emd[e.metadata_id]
                    n = names[e.metadata_id] = md.display_name or md.name
                ts = base + e.offset_ps // 1000
                end = base + (e.offset_ps + e.duration_ps) // 1000
                spans.append((ts, ts - end, n))
            spans.sort(key=lambda s: (s[0], s[1]))
            tl = (p.name, ln.id, ln.name)
            for ts, nd, n in spans:
                agg.span(tl, ts, -nd, n)
    return agg.finish()


def main():
    a = sys.argv[1:]
    k, pydir = 0, None
    while a and a[0].startswith("-"):
        if a[0] == "-k":
            k = int(a[1])
        elif a[0] == "--pydir":
            pydir = a[1]
        else:
            sys.exit(__doc__)
        a = a[2:]
    if len(a) != 2:
        sys.exit(__doc__)
    kind, path = a
    if kind == "ndjson":
        rows = from_ndjson(path)
    elif kind == "chrome":
        rows = from_chrome(path)
    elif kind == "xplane":
        rows = from_xplane(path, pydir)
    else:
        sys.exit(__doc__)
    out = sorted(rows.items(), key=lambda kv: (-kv[1][2], kv[0]))
    if k:
        out = out[:k]
    w = sys.stdout.write
    for name, (c, t, s) in out:
        w(json.dumps([name, c, t, s], ensure_ascii=False,
                     separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main()
