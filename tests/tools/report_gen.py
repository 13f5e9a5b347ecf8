#!/usr/bin/env python3
"""A small hand-made ndtrace stream for the trace-report golden test.

usage: report_gen.py [--ranks]

One TPU device, five steps (op `step` keys) of 1 ms: a fusion (compute),
an all-reduce half hidden under the next fusion, a copy after a 60 us gap,
host work (a data loader) in that gap; step 5 is
heavy.  The `end` record has skips, a warning and a sha256.  With --ranks,
a second source (rank 1) whose steps end 100 us later.
"""
import json
import sys


def line(o):
    sys.stdout.write(json.dumps(o, separators=(",", ":")) + "\n")


def source(rank, late):
    line({"type": "meta", "schema": "ndtrace/1",
          "source": "hand-r%d.xplane.pb" % rank, "format": "xplane",
          "origin_ns": 1700000000000000000, "host": "host%d" % rank,
          "rank": rank, "producer": "report_gen 1"})
    dev = {"pid": 1, "tid": 1, "process": "/device:TPU:0",
           "thread": "XLA Ops", "device": "TPU:0", "rank": rank,
           "cat": "xla_op"}
    host = {"pid": 100, "tid": 7, "process": "/host:CPU",
            "thread": "python", "rank": rank}
    n = 0
    for s in range(1, 6):
        t0 = (s - 1) * 1000000
        fus = 500000 if s < 5 else 1400000
        if s == 5:
            t0 = 4000000
        ops = [
            (t0, fus, "fusion.1", "compute", "fusion", "train/fwd/attn"),
            (t0 + fus, 150000, "all-reduce.3", "communication",
             "all-reduce", "train/bwd"),
            (t0 + fus + 100000, 100000, "fusion.2", "compute", "fusion",
             "train/bwd"),
            (t0 + fus + 260000, 40000, "copy.4", "memory", "copy",
             "train/opt"),
        ]
        for ts, dur, name, cls, fam, scope in ops:
            if rank == 1 and name == "copy.4":
                dur += late
            d = dict(type="span", ts_ns=ts, dur_ns=dur, name=name, **dev)
            d.update(step=s, **{"class": cls}, family=fam, scope=scope)
            line(d)
            n += 1
        d = dict(type="span", ts_ns=t0 + fus + 200000, dur_ns=60000,
                 name="data_loader.next", cat="cpu_op", **host)
        d.update(**{"class": "host"}, family="other")
        line(d)
        n += 1
    line({"type": "end", "events": n + 3, "spans": n,
          "skipped": {"unmatched_E": 2, "no_ts": 1},
          "sha256": "%064x" % (rank + 1), "suspected_truncation": False,
          "warnings": ["clock: 1 event before its line's start"]})


source(0, 0)
if "--ranks" in sys.argv[1:]:
    source(1, 100000)
