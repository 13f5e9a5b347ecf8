#!/usr/bin/env python3
"""Reference for trace-topk's nesting, written from the definitions in
trace-topk(1) without the stack algorithm, for property tests.

  nest_ref.py gen SEED [--shuffle] [--sources N]
      a random ndtrace stream: nested spans with equal starts, zero
      durations, children that end after their parent, several timelines
      and sources; --shuffle breaks the per-timeline order.
  nest_ref.py ref clip|reparent [--timelines device|host|all] < STREAM
      per op name: name count total_ns self_ns overrun (tab-separated,
      sorted by name), and a last line "TOTAL <sum of self> <union>".
  nest_ref.py refs DIR < STREAM
      the same for every rule and timelines, into DIR/RULE.TIMELINES
      (one python start instead of six).
  nest_ref.py union [--timelines device|host|all] < STREAM
      the length of the union of busy intervals summed over timelines, and
      summed over devices (wall): "<timelines> <wall> <spans>".
  nest_ref.py unions < STREAM
      the first figure of union for device, host and all timelines.

Definitions (clip): on a timeline (source, pid, tid), sorted by start,
longer first, then input order, the parent of a span is the latest span
before it in that order whose end is after its start.  Exclusive time =
duration minus the length of the union of its descendants' intervals, each
clipped to the span's end; a span that ends after its parent is an overrun.
(reparent): PyTorch's rule, see torch/autograd/profiler_util.py.
Device spans, annotations and host spans: ndtrace(7) "Device ops"
(device_rule.py).  With device timelines and no device span, every span
counts.
"""
import json
import random
import sys
from collections import defaultdict

from device_rule import kind


def read(stream, timelines):
    """Spans per timeline, in input order, after the selection rule."""
    src = -1
    fresh = True
    spans = []
    for line in stream:
        r = json.loads(line)
        if r["type"] == "meta":
            if not fresh or src < 0:
                src += 1
        elif src < 0:
            src = 0
        fresh = False
        if r["type"] != "span" or "dur_ns" not in r or "ts_ns" not in r:
            continue
        r["_src"] = src
        r["_seq"] = len(spans)
        r["_kind"] = kind(r)
        spans.append(r)
    if timelines == "device":
        if any(s["_kind"] == "device" for s in spans):
            spans = [s for s in spans if s["_kind"] == "device"]
    elif timelines == "host":
        spans = [s for s in spans if s["_kind"] == "host"]
    tl = defaultdict(list)
    for s in spans:
        tl[(s["_src"], s.get("pid", 0), s.get("tid", 0))].append(s)
    for v in tl.values():
        v.sort(key=lambda s: (s["ts_ns"], -s["dur_ns"], s["_seq"]))
    return tl


def union(ivs):
    tot = 0
    lo = hi = None
    for a, b in sorted(ivs):
        if b <= a:
            continue
        if lo is None or a > hi:
            if lo is not None:
                tot += hi - lo
            lo, hi = a, b
        else:
            hi = max(hi, b)
    if lo is not None:
        tot += hi - lo
    return tot


def nest_clip(spans):
    n = len(spans)
    parent = [None] * n
    for i, s in enumerate(spans):
        for j in range(i - 1, -1, -1):
            p = spans[j]
            if p["ts_ns"] + p["dur_ns"] > s["ts_ns"]:
                parent[i] = j
                break
    kids = defaultdict(list)
    for i, p in enumerate(parent):
        if p is not None:
            kids[p].append(i)
    out = []
    for i, s in enumerate(spans):
        end = s["ts_ns"] + s["dur_ns"]
        desc, todo = [], list(kids[i])
        while todo:
            d = todo.pop()
            desc.append(d)
            todo.extend(kids[d])
        cov = union([(spans[d]["ts_ns"],
                      min(spans[d]["ts_ns"] + spans[d]["dur_ns"], end))
                     for d in desc])
        over = parent[i] is not None and end > (
            spans[parent[i]]["ts_ns"] + spans[parent[i]]["dur_ns"])
        out.append((s, s["dur_ns"] - cov, int(over)))
    return out


def nest_reparent(spans):
    self = [s["dur_ns"] for s in spans]
    over = [0] * len(spans)
    stack = []
    for i, s in enumerate(spans):
        end = s["ts_ns"] + s["dur_ns"]
        while stack:
            t = spans[stack[-1]]
            tend = t["ts_ns"] + t["dur_ns"]
            if s["ts_ns"] >= tend:
                stack.pop()
            elif end > tend:
                over[i] = 1
                stack.pop()
            else:
                self[stack[-1]] -= s["dur_ns"]
                break
        stack.append(i)
    return [(s, self[i], over[i]) for i, s in enumerate(spans)]


def gen(seed, shuffle, nsrc):
    rnd = random.Random(seed)
    names = ["mm", "add", "conv", "a,b", 'q"t', "all-reduce", "step"]
    lines = []
    for src in range(nsrc):
        lines.append(json.dumps({"type": "meta", "schema": "ndtrace/1",
                                 "source": "gen%d" % src, "format": "chrome",
                                 "origin_ns": 1000 * src, "host": None,
                                 "rank": src, "producer": "nest_ref"}))
        body = []
        for pid in (1, 2):
            for tid in (1, 2):
                proc = "/device:GPU:%d" % pid if pid == 2 else "host"
                t = 0
                for _ in range(rnd.randint(3, 8)):
                    t += rnd.choice([0, 0, 1, 5])
                    t = tree(rnd, body, names, pid, tid, proc, t, 0,
                             rnd.randint(5, 60))
        body.sort(key=lambda r: (r["pid"], r["tid"], r["ts_ns"], -r["dur_ns"]))
        if shuffle:
            rnd.shuffle(body)
        else:
            # interleave timelines but keep each one ordered
            body.sort(key=lambda r: (r["ts_ns"], -r["dur_ns"], r["pid"], r["tid"]))
        lines.extend(json.dumps(r, separators=(",", ":")) for r in body)
    return "\n".join(lines) + "\n"


def tree(rnd, out, names, pid, tid, proc, ts, depth, dur):
    out.append({"type": "span", "ts_ns": ts, "dur_ns": dur,
                "name": rnd.choice(names), "pid": pid, "tid": tid,
                "process": proc})
    t = ts
    end = ts + dur
    while depth < 4 and t < end and rnd.random() < 0.7:
        t += rnd.choice([0, 0, 1, 2, 3])
        left = end - t
        if left <= 0:
            break
        d = rnd.choice([0, 1, rnd.randint(1, max(1, left)),
                        left, left + rnd.randint(1, 3)])
        t = tree(rnd, out, names, pid, tid, proc, t, depth + 1, d)
        if t > end:
            break
    return end


def main():
    a = sys.argv[1:]
    tls = "device"
    if "--timelines" in a:
        tls = a[a.index("--timelines") + 1]
    if a[0] == "gen":
        nsrc = int(a[a.index("--sources") + 1]) if "--sources" in a else 2
        sys.stdout.write(gen(int(a[1]), "--shuffle" in a, nsrc))
        return
    if a[0] == "refs":
        text = sys.stdin.read().splitlines(True)
        for t in ("device", "host", "all"):
            for r in ("clip", "reparent"):
                with open("%s/%s.%s" % (a[1], r, t), "w") as f:
                    report(read(text, t), r, f)
        return
    if a[0] == "unions":
        text = sys.stdin.read().splitlines(True)
        print(" ".join(str(sum(union([(s["ts_ns"], s["ts_ns"] + s["dur_ns"])
                                      for s in v])
                               for v in read(text, t).values()))
                       for t in ("device", "host", "all")))
        return
    tl = read(sys.stdin, tls)
    if a[0] == "union":
        per_tl = sum(union([(s["ts_ns"], s["ts_ns"] + s["dur_ns"]) for s in v])
                     for v in tl.values())
        dev = defaultdict(list)
        for v in tl.values():
            for s in v:
                d = s.get("device") or s.get("process") or "pid %d" % s.get("pid", 0)
                dev[(s["_src"], d)].append((s["ts_ns"], s["ts_ns"] + s["dur_ns"]))
        wall = sum(union(v) for v in dev.values())
        print(per_tl, wall, sum(len(v) for v in tl.values()))
        return
    report(tl, a[1], sys.stdout)


def report(tl, rulename, out):
    rule = nest_clip if rulename == "clip" else nest_reparent
    agg = {}
    tot_self = 0
    tot_union = 0
    for v in tl.values():
        tot_union += union([(s["ts_ns"], s["ts_ns"] + s["dur_ns"]) for s in v])
        for s, slf, over in rule(v):
            r = agg.setdefault(s.get("name", ""), [0, 0, 0, 0])
            r[0] += 1
            r[1] += s["dur_ns"]
            r[2] += slf
            r[3] += over
            tot_self += slf
    for name in sorted(agg):
        out.write("\t".join([name] + [str(x) for x in agg[name]]) + "\n")
    out.write("TOTAL\t%d\t%d\n" % (tot_self, tot_union))


main()
