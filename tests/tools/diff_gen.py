#!/usr/bin/env python3
"""Hand-made ndtrace streams with known steps and ops, for trace-diff tests.

diff_gen.py --steps 50,100,100 --op fusion.12:2000:3 --op ar:1000:2:communication:all-reduce
  steps   step window lengths in ms (a host ProfilerStep#N span each, back to back)
  op      NAME:US:N[:CLASS[:FAMILY]] -- N kernels of US microseconds per step,
          laid back to back on one GPU stream from the start of each window
  source  the meta source path; sha  the end record's sha256; run-id  meta run_id
"""
import argparse
import json
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", required=True)
    ap.add_argument("--op", action="append", default=[])
    ap.add_argument("--source", default="gen.json")
    ap.add_argument("--sha", default=None)
    ap.add_argument("--run-id", default=None)
    a = ap.parse_args()
    steps = [int(x) for x in a.steps.split(",")]
    ops = []
    for o in a.op:
        f = o.split(":")
        ops.append((f[0], int(f[1]) * 1000, int(f[2]),
                    f[3] if len(f) > 3 and f[3] else None,
                    f[4] if len(f) > 4 and f[4] else None))
    out = sys.stdout
    meta = {"type": "meta", "schema": "ndtrace/1", "source": a.source,
            "format": "chrome", "origin_ns": 0, "host": None, "rank": 0,
            "producer": "diff_gen 1"}
    if a.run_id:
        meta["run_id"] = a.run_id
    out.write(json.dumps(meta, separators=(",", ":")) + "\n")
    ts = 0
    nspans = 0
    for i, ms in enumerate(steps):
        dur = ms * 1000000
        out.write(json.dumps({"type": "span", "ts_ns": ts, "dur_ns": dur,
                              "name": "ProfilerStep#%d" % (i + 1), "pid": 1,
                              "tid": 1, "cat": "user_annotation"},
                             separators=(",", ":")) + "\n")
        nspans += 1
        t = ts
        for name, d, n, cls, fam in ops:
            for _ in range(n):
                sp = {"type": "span", "ts_ns": t, "dur_ns": d, "name": name,
                      "pid": 2, "tid": 7, "cat": "kernel", "device": "GPU:0"}
                if cls:
                    sp["class"] = cls
                if fam:
                    sp["family"] = fam
                out.write(json.dumps(sp, separators=(",", ":")) + "\n")
                nspans += 1
                t += d
        assert t <= ts + dur, "ops do not fit in the step"
        ts += dur
    end = {"type": "end", "events": nspans, "spans": nspans}
    if a.sha:
        end["sha256"] = a.sha
    out.write(json.dumps(end, separators=(",", ":")) + "\n")


main()
