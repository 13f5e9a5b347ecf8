#!/usr/bin/python3
"""Random ndtrace streams for trace-context's differential tests.

  context_gen.py SEED

One to three sources, each with a meta and an end record; per source two
devices (an op line and a Steps line each) and two host threads.  Every
timeline holds nested spans (random depth, zero-length spans, equal starts,
identical intervals, idle gaps, now and then a child that ends after its
parent, as async ops do) in the contract's order; timelines
are written either one after the other or interleaved at random.  Names come
from a small set so that patterns match several times.  A few instants and
counters are mixed in.
"""
import json
import random
import sys

NAMES = ["copy.1", "copy.2", "fusion.1", "fusion.2", "all-reduce.1", "dot.7",
         "step", "train_step", "aten::mm", "aten::add"]


def nested(rng, t0, t1, depth):
    """Properly nested spans within [t0, t1)."""
    out, t = [], t0
    while t < t1 and rng.random() < 0.8:
        t += rng.choice([0, 0, 1, 5, 20])
        if t >= t1:
            break
        dur = rng.choice([0, 1, 3, 10, 30, 60]) if rng.random() < 0.9 else t1 - t
        dur = min(dur, t1 - t)
        out.append((t, dur))
        if dur > 1 and depth < 3 and rng.random() < 0.5:
            out.extend(nested(rng, t, t + dur, depth + 1))
        if dur > 0 and rng.random() < 0.1:
            out.append((t, dur))  # an identical interval: a child
        if dur > 1 and rng.random() < 0.05:
            out.append((t + 1, dur + 7))  # overruns its parent (async ops)
        t += dur
    return out


def generate(seed):
    """The stream for a seed, as text."""
    rng = random.Random(seed)
    lines = []
    for src in range(rng.randint(1, 3)):
        lines.append(json.dumps({"type": "meta", "schema": "ndtrace/1",
                                 "source": "gen%d-%d.xplane.pb" % (seed, src),
                                 "format": "xplane", "origin_ns": 0, "host": "h",
                                 "rank": src, "producer": "context_gen 1"},
                                separators=(",", ":")))
        tls = []
        for d in range(2):
            tls.append(dict(pid=d + 1, tid=1, process="/device:TPU:%d" % d,
                            thread="XLA Ops", device="TPU:%d" % d))
            tls.append(dict(pid=d + 1, tid=2, process="/device:TPU:%d" % d,
                            thread="Steps", device="TPU:%d" % d))
        for h in range(2):
            tls.append(dict(pid=100, tid=h + 1, process="/host:CPU",
                            thread="python%d" % h))
        per = []
        for tl in tls:
            iv = nested(rng, rng.choice([0, 3, 10]), rng.choice([150, 300, 600]), 0)
            iv.sort(key=lambda x: (x[0], -x[1]))
            recs = []
            for ts, dur in iv:
                r = {"type": "span", "ts_ns": ts, "dur_ns": dur,
                     "name": rng.choice(NAMES)}
                r.update(tl)
                if rng.random() < 0.5:
                    r["args"] = {"stream": rng.randint(1, 3)}
                recs.append(r)
            per.append(recs)
        spans = sum(len(p) for p in per)
        other = []
        if rng.random() < 0.5:
            other.append({"type": "instant", "ts_ns": 5, "name": "mark",
                          "pid": 100, "tid": 1})
            other.append({"type": "counter", "ts_ns": 7, "name": "mem",
                          "pid": 100, "values": {"bytes": 1}})
        out = []
        if rng.random() < 0.5:
            for p in per:
                out.extend(p)
        else:
            pos = [0] * len(per)
            while any(pos[i] < len(per[i]) for i in range(len(per))):
                i = rng.choice([i for i in range(len(per)) if pos[i] < len(per[i])])
                out.append(per[i][pos[i]])
                pos[i] += 1
        for o in other:
            out.insert(rng.randint(0, len(out)), o)
        for r in out:
            lines.append(json.dumps(r, separators=(",", ":")))
        lines.append(json.dumps({"type": "end", "events": spans + len(other),
                                 "spans": spans,
                                 "instants": sum(o["type"] == "instant" for o in other),
                                 "counters": sum(o["type"] == "counter" for o in other),
                                 "skipped": {}, "warnings": []},
                                separators=(",", ":")))
    return "".join(x + "\n" for x in lines)


def main():
    sys.stdout.write(generate(int(sys.argv[1])))


if __name__ == "__main__":
    main()
