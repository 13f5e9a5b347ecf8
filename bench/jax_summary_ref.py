#!/usr/bin/env python3
"""Reference for the bench: read a JAX-style Chrome trace the way marin's
profile_summary (marin-community/marin, lib/marin/src/marin/profiling/
ingest.py, summarize_trace) does, with the standard library only, and print
a comparable summary as JSON.

marin itself cannot run here: it imports wandb, which is not packaged in
Debian.  Its reading is what this script repeats: json.load of the whole
file (gunzipped when it ends in .gz), one frozen dataclass per complete
("X") event with its args picked out, exclusive durations per (pid, tid)
track from a sort and a stack, the SHA-256 of the file, then aggregates
(overview, time breakdown by category, hot device ops, collectives).  The
code is this project's own; only the steps and their cost follow marin.

usage: jax_summary_ref.py TRACE.json[.gz] > summary.json
"""
import gzip
import hashlib
import json
import sys
from collections import defaultdict
from dataclasses import dataclass

COMM = ("all-reduce", "all-gather", "all_gather", "reduce-scatter",
        "all-to-all", "alltoall", "collective-permute", "send", "recv")


@dataclass(frozen=True)
class Ev:
    name: str
    pid: int
    tid: int
    ts: float
    dur: float
    long_name: str | None
    tf_op: str | None
    source: str | None
    hlo_category: str | None
    process_name: str | None
    thread_name: str | None


def sarg(args, key):
    v = args.get(key) if isinstance(args, dict) else None
    return v if isinstance(v, str) else None


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        doc = json.load(f)
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        sys.exit("jax_summary_ref.py: %s: no traceEvents list" % path)
    return doc


def parse(events):
    procs, threads, out = {}, {}, []
    for e in events:
        if isinstance(e, dict) and e.get("ph") == "M":
            a, pid, tid = e.get("args") or {}, e.get("pid"), e.get("tid")
            if not isinstance(a, dict) or not isinstance(pid, int):
                continue
            if e.get("name") == "process_name" and isinstance(a.get("name"), str):
                procs[pid] = a["name"]
            elif e.get("name") == "thread_name" and isinstance(tid, int) \
                    and isinstance(a.get("name"), str):
                threads[(pid, tid)] = a["name"]
    for e in events:
        if not isinstance(e, dict) or e.get("ph") != "X":
            continue
        pid, tid, ts, dur, name = (e.get(k) for k in ("pid", "tid", "ts", "dur", "name"))
        if not isinstance(pid, int) or not isinstance(tid, int) or \
                not isinstance(ts, (int, float)) or \
                not isinstance(dur, (int, float)) or not isinstance(name, str) \
                or dur <= 0:
            continue
        a = e.get("args")
        out.append(Ev(name, pid, tid, float(ts), float(dur), sarg(a, "long_name"),
                      sarg(a, "tf_op"), sarg(a, "source"), sarg(a, "hlo_category"),
                      procs.get(pid), threads.get((pid, tid))))
    return out, procs, threads


def exclusive(evs):
    """Duration minus the time of the children, per (pid, tid) track."""
    excl = [e.dur for e in evs]
    tracks = defaultdict(list)
    for i, e in enumerate(evs):
        tracks[(e.pid, e.tid)].append(i)
    for idx in tracks.values():
        idx.sort(key=lambda i: (evs[i].ts, -(evs[i].ts + evs[i].dur)))
        stack = []
        for i in idx:
            end = evs[i].ts + evs[i].dur
            while stack and evs[i].ts >= evs[stack[-1]].ts + evs[stack[-1]].dur:
                stack.pop()
            while stack and end > evs[stack[-1]].ts + evs[stack[-1]].dur:
                stack.pop()
            if stack:
                excl[stack[-1]] -= evs[i].dur
            stack.append(i)
    return excl


def category(e):
    n = e.name.lower()
    if any(c in n for c in COMM):
        return "communication"
    if e.process_name and "/device:" in e.process_name:
        return "compute"
    return "host"


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for b in iter(lambda: f.read(1 << 20), b""):
            h.update(b)
    return h.hexdigest()


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: jax_summary_ref.py TRACE.json[.gz]")
    path = sys.argv[1]
    doc = load(path)
    evs, procs, threads = parse(doc["traceEvents"])
    excl = exclusive(evs)
    totals, hot, comm = defaultdict(float), {}, defaultdict(lambda: [0, 0.0])
    for e, x in zip(evs, excl):
        c = category(e)
        totals[c] += x
        if c != "host" and e.thread_name in ("XLA Ops", "Async XLA Ops"):
            h = hot.setdefault(e.name, [0, 0.0, 0.0])
            h[0] += 1
            h[1] += e.dur
            h[2] += x
            if c == "communication":
                k = next(p for p in COMM if p in e.name.lower())
                comm[k][0] += 1
                comm[k][1] += x
    top = sorted(hot.items(), key=lambda kv: (-kv[1][2], -kv[1][1], kv[0]))[:25]
    json.dump({
        "sha256": sha256(path),
        "events": len(doc["traceEvents"]), "complete_events": len(evs),
        "processes": len(procs), "threads": len(threads),
        "start": min((e.ts for e in evs), default=None),
        "end": max((e.ts + e.dur for e in evs), default=None),
        "breakdown": dict(sorted(totals.items())),
        "hot_ops": [{"name": n, "count": v[0], "total": v[1], "exclusive": v[2]}
                    for n, v in top],
        "collectives": {k: {"count": v[0], "exclusive": v[1]}
                        for k, v in sorted(comm.items())},
    }, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
