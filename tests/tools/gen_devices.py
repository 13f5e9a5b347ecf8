#!/usr/bin/python3
"""Streams of many devices in one source, and their step records computed
independently (tests/safety-devices.bats, issue 31).

    gen_devices.py SHAPE N [--steps S] [--src NAME] [--late K]
        [--summary FILE] STREAM EXPECT
    gen_devices.py check EXPECT OUTPUT

Writes the ndtrace stream to STREAM and to EXPECT one JSON object per step
record that trace-steps(1) must write, in order of start:

  {"step": ..., "ts_ns": ..., "dur_ns": ..., "compute_ns": ...,
   "communication_ns": ..., "idle_ns": ..., "wait_ns": ..., "devices": ...,
   "flops": ...}

computed here from the generated intervals (a sort-and-merge union per
window) rather than by the rules' sweep; `check` exits 1 unless the step
records of trace-steps output OUTPUT have exactly those figures.  Shapes:

  devices  N devices, one per pid, and S host steps ("ProfilerStep#s",
           1000 ns apart): in step s each device has one kernel inside the
           window, compute in odd steps, communication in even ones, with
           integer flops; --late K ends device d's kernel K * (d % 3) ns
           later (a second stream for trace-diff).
  grid     N host steps and N devices, device d one kernel in step d + 1
           (many steps and many devices: every step spans every device).
  keys     one device with N kernels, the i-th with step key i + 1 and its
           own flops (many steps from step keys).

Python standard library only.
"""
import argparse
import json
import sys

W = 1000        # step window length (ns)


def union(ivs, lo, hi):
    """Length of the union of [a, b) pairs, clipped to [lo, hi)."""
    n, end = 0, lo
    for a, b in sorted(ivs):
        a, b = max(a, end), min(b, hi)
        if b > a:
            n += b - a
            end = b
    return n


def span(out, ts, dur, name, pid, extra):
    # by hand: json.dumps would take most of the time of a big stream
    out.write('{"type":"span","ts_ns":%d,"dur_ns":%d,"name":"%s","pid":%d,'
              '"tid":7,%s}\n' % (ts, dur, name, pid, extra))


def kernel(out, ts, dur, d, cls, flops, step=None):
    span(out, ts, dur, "k", d + 1, '"device":"GPU:%d","cat":"kernel",'
         '"class":"%s",%s"args":{"flops":%d}' % (
             d, cls, "" if step is None else '"step":%d,' % step, flops))
    return (ts, ts + dur, cls, flops)


def record(step, lo, ops, ndev):
    """The step record of window [lo, lo + W) over ops (lo, hi, cls, f)."""
    comp = union([(a, b) for a, b, c, _ in ops if c == "compute"], lo, lo + W)
    comm = union([(a, b) for a, b, c, _ in ops if c != "compute"], lo, lo + W)
    both = union([(a, b) for a, b, _, _ in ops], lo, lo + W)
    return {"step": step, "ts_ns": lo, "dur_ns": W, "compute_ns": comp,
            "communication_ns": comm, "idle_ns": W - both, "wait_ns": comm,
            "devices": ndev,
            "flops": sum(f for a, _, _, f in ops if lo <= a < lo + W)}


def host_steps(out, n):
    for s in range(n):
        span(out, s * W, W, "ProfilerStep#%d" % (s + 1), 0,
             '"cat":"user_annotation"')


def devices(out, a):
    ops = []
    host_steps(out, a.steps)
    for d in range(a.n):
        for s in range(a.steps):
            lo = s * W + 100 + d * 7 % 100
            hi = s * W + 350 + a.late * (d % 3)
            cls = "compute" if s % 2 == 0 else "communication"
            ops.append(kernel(out, lo, hi - lo, d, cls, 1000 + d))
    if a.summary:
        # trace-report's breakdown.all_devices: every device's own time
        # summed over the steady steps (all but the first)
        busy = {c: sum(hi - lo for lo, hi, cl, _ in ops
                       if lo >= W and cl == c)
                for c in ("compute", "communication")}
        dur = a.n * (a.steps - 1) * W
        with open(a.summary, "w") as f:
            json.dump({"dur_ns": dur, "compute_ns": busy["compute"],
                       "communication_ns": busy["communication"],
                       "idle_ns": dur - sum(busy.values())}, f)
    return [record(s + 1, s * W, [o for o in ops if s * W <= o[0] <
                                  (s + 1) * W], a.n) for s in range(a.steps)]


def grid(out, a):
    ops = []
    host_steps(out, a.n)
    for d in range(a.n):
        ops.append(kernel(out, d * W + 100 + d % 50, 200, d, "compute",
                          5000 + 3 * d))
    return [record(s + 1, s * W, [ops[s]], a.n) for s in range(a.n)]


def keys(out, a):
    recs = []
    for i in range(a.n):
        lo, hi, _, f = kernel(out, i * W, 400 + i % 200, 0, "compute",
                              7 * i + 11, i + 1)
        # a window from step keys runs from its first op to its last
        recs.append({"step": i + 1, "ts_ns": lo, "dur_ns": hi - lo,
                     "compute_ns": hi - lo, "communication_ns": 0,
                     "idle_ns": 0, "wait_ns": 0, "devices": 1, "flops": f})
    return recs


def check(expect, output):
    """Exit 1 unless the step records of trace-steps OUTPUT have the
    figures of EXPECT, in order (faster than jq on many records)."""
    want = [json.loads(line) for line in open(expect)]
    got = [json.loads(line) for line in open(output)]
    got = [{k: r.get(k) for k in want[0]} for r in got
           if r.get("type") == "step"] if want else got
    for i, (w, g) in enumerate(zip(want, got)):
        if w != g:
            sys.exit("record %d: want %s, got %s" % (i + 1, w, g))
    if len(want) != len(got) or not want:
        sys.exit("%d records, want %d" % (len(got), len(want)))


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "check":
        return check(sys.argv[2], sys.argv[3])
    ap = argparse.ArgumentParser()
    ap.add_argument("shape", choices=("devices", "grid", "keys"))
    ap.add_argument("n", type=int)
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--src", default="many.json")
    ap.add_argument("--late", type=int, default=0)
    ap.add_argument("--summary", help="devices: breakdown.all_devices of "
                    "trace-report --json, to this file")
    ap.add_argument("stream")
    ap.add_argument("expect")
    a = ap.parse_args()
    with open(a.stream, "w") as out:
        out.write(json.dumps({"type": "meta", "schema": "ndtrace/1",
                              "source": a.src, "format": "chrome"}) + "\n")
        recs = globals()[a.shape](out, a)
    with open(a.expect, "w") as f:
        for r in recs:
            f.write(json.dumps(r, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main()
