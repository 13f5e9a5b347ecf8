"""Streams whose sums reach the bound of ndtrace(7) "Sums" (2^60 ns), for
tests/safety-sums.bats.  Usage: sum_streams.py KIND N [ARG]; one record a
line on stdout, the meta record on line 1.

  spans N [SRC]  N spans of 2^53 ns (span i on line i + 2, its own timeline)
  idle N         N timelines, each a 1 ns span at -2^53 and at 2^53 - 1: an
                 idle stretch of 2^54 - 2 ns, the second span of timeline i
                 on line 2i + 3
  steps N [SRC]  N steps (step key k on device ops), each from -2^53 to 2^53:
                 a step window of 2^54 ns
  ranks N        N sources (ranks) of one step with blocks fwd_1 at -2^53 and
                 bwd_1 at 2^53 - 1: a pipeline window of 2^54 ns each
  clocks O1 O2   two ranks with origin_ns O1 and O2, one step each: fwd_1 at
                 0 for 100 + r ns, bwd_1 after it for 200 ns
"""
import json
import sys

kind, n = sys.argv[1], int(sys.argv[2])
E = 2**53


def j(r):
    print(json.dumps(r, separators=(",", ":")))


def meta(src, origin=1700000000000000000, rank=0):
    j({"type": "meta", "schema": "ndtrace/1", "source": src,
       "format": "xplane", "origin_ns": origin, "host": "h", "rank": rank,
       "producer": "sum_streams"})


def span(ts, dur, name, tid, step=1):
    j({"type": "span", "ts_ns": ts, "dur_ns": dur, "name": name, "pid": 1,
       "tid": tid, "process": "/device:GPU:0", "device": "GPU:0",
       "cat": "kernel", "class": "compute", "scope": "a/b", "step": step,
       "args": {"flops": 1000}})


src = sys.argv[3] if len(sys.argv) > 3 else "s"
if kind == "spans":
    meta(src)
    for i in range(n):
        span(0, E, "op%d" % (i % 10), i)
elif kind == "idle":
    meta(src)
    for i in range(n):
        span(-E, 1, "a", i)
        span(E - 1, 1, "b", i)
elif kind == "steps":
    meta(src)
    for k in range(n):
        span(-E, 1, "fwd_%d" % k, 2 * k, k)
        span(E - 1, 1, "bwd_%d" % k, 2 * k + 1, k)
elif kind == "ranks":
    for r in range(n):
        meta("%s%d" % (src, r), rank=r)
        span(-E, 1, "fwd_1", 1)
        span(E - 1, 1, "bwd_1", 1)
elif kind == "clocks":
    for r, o in enumerate([n, int(sys.argv[3])]):
        meta("r%d" % r, origin=o, rank=r)
        span(0, 100 + r, "fwd_1", 1)
        span(100 + r, 200, "bwd_1", 1)
else:
    sys.exit("sum_streams.py: unknown kind " + kind)
