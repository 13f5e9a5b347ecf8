#!/usr/bin/env python3
"""pipeline_ref.py [--forward RE] [--backward RE] [--wgrad RE] [--p2p RE]
                   [--check OUTPUT] [FILE...]

An independent python3 reading of the trace-pipeline definitions
(issue 23; ndtrace(7), pipe_* records; trace-pipeline(1)), written from
the definitions, not from lib/engines/nd_pipe.c, for the tests to compare with:
reads NDJSON streams (the ranks' files, or one merged stream; stdin when
no FILE) and prints the pipe_mb, pipe_rank and pipe_step records, one
JSON object a line, same keys in the same order.  With --check OUTPUT:
compare trace-pipeline's OUTPUT (its records for the same input) with
ours instead: stages, micro-batches, schedule, clock, stage, mb and order
exactly, bubble_ns and the step's bubble_frac within 1 %, warmup_ns,
cooldown_ns and p2p_wait_ns within 1 % or 1 us; prints each difference,
exit 1 when there is one.

The block rules are Python regexes, matched without case; the defaults
match the names tests/tools/gen_pipeline.py writes and nothing else
(forward_step#K, backward_step#K; no weight-gradient blocks); --p2p is
the engine's documented default, send|recv.

Kept simple on purpose: the device-op rule knows Kineto's device `cat`
values and XPlane's /device: lines (not torch_npu's lanes); a step marker
is a host span named ProfilerStep#N or one with args.step_num (what
nd_span_role_of() flags in r.marker; it never sets role ND_ROLE_MARKER).
Where the definitions leave it open: a block belongs to a step by its
`step` key; a rank's work (device ops, else its blocks) and its P2P
spans count by time alone, whatever their step, clipped to the window.
"""
import argparse
import json
import re
import sys

DEVICE_CATS = {"kernel", "gpu_memcpy", "gpu_memset", "cuda_sync", "gpu_op",
               "memcpy", "memset", "mtia_ccp_events", "hpu_op"}
ANNOT_LINES = {"Steps", "XLA Modules", "XLA TraceMe", "TensorFlow Ops",
               "TensorFlow Name Scope", "Framework Ops",
               "Framework Name Scope", "Source code", "Launch Stats"}
PHASES = "FBW"


def is_device(sp):
    cat = sp.get("cat")
    if isinstance(cat, str) and cat.lower() in DEVICE_CATS:
        return True
    proc = sp.get("process")
    return (isinstance(proc, str) and proc.startswith("/device:")
            and sp.get("thread") not in ANNOT_LINES)


def marker_num(sp):
    """The step number of a step marker span, else None."""
    if sp["dur"] <= 0 or is_device(sp):
        return None
    m = re.fullmatch(r"ProfilerStep#([0-9]+)", sp["name"])
    if m:
        return int(m.group(1))
    args = sp.get("args")
    if isinstance(args, dict) and isinstance(args.get("step_num"), int):
        return args["step_num"]
    return None


def union(ivs):
    """Sorted disjoint union of (start, end) intervals."""
    out = []
    for s, e in sorted(iv for iv in ivs if iv[1] > iv[0]):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out


def clip(u, lo, hi):
    return [[max(s, lo), min(e, hi)] for s, e in u if min(e, hi) > max(s, lo)]


def length(u):
    return sum(e - s for s, e in u)


def complement(u, lo, hi):
    """[lo, hi) minus the disjoint sorted union u."""
    out, t = [], lo
    for s, e in clip(u, lo, hi):
        if s > t:
            out.append([t, s])
        t = max(t, e)
    if hi > t:
        out.append([t, hi])
    return out


def intersect(a, b):
    out, i, j = [], 0, 0
    while i < len(a) and j < len(b):
        s, e = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if e > s:
            out.append([s, e])
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return out


def read(files):
    """The spans of every source, each with its source index, rank and
    clock origin."""
    spans, sources = [], []     # sources: [rank, origin]
    for path in files:
        f = sys.stdin if path == "-" else open(path)
        for line in f:
            if not line.strip():
                continue
            r = json.loads(line)
            t = r.get("type")
            if t == "meta":
                rank = r.get("rank")
                sources.append([rank if isinstance(rank, int)
                                else len(sources), r.get("origin_ns") or 0])
            elif t == "span":
                if not sources:
                    sources.append([0, 0])
                src = len(sources) - 1
                spans.append({"src": src, "rank": sources[src][0],
                              "ts": r["ts_ns"], "dur": r.get("dur_ns", 0),
                              "name": r.get("name") or "",
                              "tl": (src, r.get("pid"), r.get("tid")),
                              "step": r.get("step", 0),
                              "cat": r.get("cat"), "process": r.get("process"),
                              "thread": r.get("thread"), "args": r.get("args")})
        if f is not sys.stdin:
            f.close()
    return spans, sources


def classify(spans, rules):
    """Mark blocks (phase, mb from the name or None) and P2P spans; drop a
    block nested in another block of its timeline."""
    for sp in spans:
        sp["phase"] = None
        for ph, rx in rules["blocks"]:
            m = rx.search(sp["name"])
            if m:
                sp["phase"] = ph
                sp["mb"] = next((int(g) for g in m.groups()
                                 if g is not None and re.fullmatch(r"[0-9]+", g)),
                                None)
                break
        sp["p2p"] = sp["phase"] is None and bool(rules["p2p"].search(sp["name"]))
    by_tl = {}
    for i, sp in enumerate(spans):
        if sp["phase"] is not None:
            by_tl.setdefault(sp["tl"], []).append((sp["ts"], -sp["dur"], i))
    keep = set()
    for lst in by_tl.values():
        outer_end = None
        for ts, ndur, i in sorted(lst):
            end = ts - ndur
            if outer_end is not None and end <= outer_end:
                continue                # inside the open outer block
            keep.add(i)
            outer_end = end
    return [sp for i, sp in enumerate(spans) if i in keep]


def step_of(sp):
    s = sp["step"]
    return s if isinstance(s, int) else 0


def analyse_step(n, blocks, blocks_all, spans, sources):
    ranks = sorted({b["rank"] for b in blocks if b["phase"] in "FB"})
    if not ranks:
        return None
    p = len(ranks)
    absolute = all(src[1] != 0 for src in sources)
    shift, clock = {}, "absolute" if absolute else "step_marker"
    for r in ranks:
        if absolute:
            shift[r] = 0
            continue
        marks = [sp["ts"] + sources[sp["src"]][1] for sp in spans
                 if sp["rank"] == r and marker_num(sp) == n]
        if marks:
            shift[r] = -min(marks)
        else:
            clock = "first_block"
            shift[r] = -min(b["ts"] + sources[b["src"]][1] for b in blocks
                            if b["rank"] == r)

    def t(sp):
        return sp["ts"] + sources[sp["src"]][1] + shift[sp["rank"]]

    # blocks belong to a step by their `step`; work (device ops, else the
    # blocks of every step) and P2P spans by time only: any of the rank's,
    # shifted by its clock for the step, inside the window
    mine = [b for b in blocks if b["rank"] in shift]
    w0 = min(t(b) for b in mine)
    w1 = max(t(b) + b["dur"] for b in mine)
    window = w1 - w0
    rows = []
    for stage, r in enumerate(ranks):
        bl = sorted((b for b in mine if b["rank"] == r),
                    key=lambda b: (t(b), b["order"]))
        seen = {}
        for b in bl:                    # ordinal micro-batch numbers
            k = seen.get(b["phase"], 0)
            seen[b["phase"]] = k + 1
            b["k"] = b["mb"] if b["mb"] is not None else k
        rs = [sp for sp in spans if sp["rank"] == r]
        dev = [sp for sp in rs if sp["dur"] > 0 and is_device(sp)]
        if dev:
            work = union([(t(sp), t(sp) + sp["dur"]) for sp in dev
                          if not sp["p2p"]])
        else:
            work = union([(t(b), t(b) + b["dur"]) for b in blocks_all
                          if b["rank"] == r])
        work = clip(work, w0, w1)
        busy = length(work)
        idle = complement(work, w0, w1)
        first = min(t(b) for b in bl)
        last = max(t(b) + b["dur"] for b in bl)
        warm = length(intersect(idle, [[w0, first]]))
        cool = length(intersect(idle, [[last, w1]]))
        p2p = union([(t(sp), t(sp) + sp["dur"]) for sp in rs if sp["p2p"]])
        pw = length(intersect(idle, clip(p2p, w0, w1)))
        fmb = {b["k"] for b in bl if b["phase"] == "F"}
        mb = len(fmb) if fmb else len({b["k"] for b in bl if b["phase"] == "B"})
        ph = {x: sum(b["dur"] for b in bl if b["phase"] == x) for x in PHASES}
        tot = ph["F"] + ph["B"] + ph["W"]
        fbm = (2 * tot + mb) // (2 * mb) if mb else 0
        rows.append({"rank": r, "stage": stage, "blocks": bl, "busy": busy,
                     "bubble": window - busy, "warmup": warm, "cooldown": cool,
                     "p2p_wait": pw, "mb": mb, "ph": ph, "fb_per_mb": fbm})
    slow = max(rows, key=lambda x: (x["fb_per_mb"], -x["rank"]))
    for x in rows:
        e = 0 if x is slow else \
            max(0, min(x["bubble"], x["mb"] * (slow["fb_per_mb"] - x["fb_per_mb"])))
        x["explained"] = e
    m = max(x["mb"] for x in rows)
    if p == 1:
        sched = "none"
    elif any(b["phase"] == "W" for x in rows for b in x["blocks"]):
        sched = "zero_bubble"
    elif any(len(fs) != len(set(fs)) for fs in
             ([b["k"] for b in x["blocks"] if b["phase"] == "F"] for x in rows)):
        sched = "interleaved"
    elif all(gpipe_rank(x["blocks"]) for x in rows):
        sched = "gpipe"
    else:
        sched = "1f1b"
    ideal = None
    if sched in ("gpipe", "1f1b"):
        ideal = (p - 1) / (m + p - 1)
    elif sched == "interleaved":
        v = max(max_same_mb(x["blocks"]) for x in rows)
        ideal = (p - 1) / (v * m + p - 1)
    return {"num": n, "p": p, "m": m, "sched": sched, "clock": clock,
            "w0": w0, "window": window, "rows": rows, "slow": slow,
            "ideal": ideal, "t": t}


def gpipe_rank(bl):
    bs = [i for i, b in enumerate(bl) if b["phase"] == "B"]
    fs = [i for i, b in enumerate(bl) if b["phase"] == "F"]
    return not bs or not fs or max(fs) < min(bs)


def max_same_mb(bl):
    c = {}
    for b in bl:
        if b["phase"] == "F":
            c[b["k"]] = c.get(b["k"], 0) + 1
    return max(c.values()) if c else 1


def frac(a, b):
    return round(a / b, 4) if b else 0.0


def emit(st, out):
    t, w0 = st["t"], st["w0"]
    for x in st["rows"]:
        for b in x["blocks"]:
            out.append({"type": "pipe_mb", "step": st["num"], "rank": x["rank"],
                        "stage": x["stage"], "phase": b["phase"], "mb": b["k"],
                        "at_ns": t(b) - w0, "ts_ns": b["ts"], "dur_ns": b["dur"],
                        "name": b["name"]})
    for x in st["rows"]:
        out.append({"type": "pipe_rank", "step": st["num"], "rank": x["rank"],
                    "stage": x["stage"], "window_ns": st["window"],
                    "busy_ns": x["busy"], "bubble_ns": x["bubble"],
                    "bubble_frac": frac(x["bubble"], st["window"]),
                    "warmup_ns": x["warmup"], "cooldown_ns": x["cooldown"],
                    "steady_ns": x["bubble"] - x["warmup"] - x["cooldown"],
                    "p2p_wait_ns": x["p2p_wait"], "mb": x["mb"],
                    "f_ns": x["ph"]["F"], "b_ns": x["ph"]["B"],
                    "w_ns": x["ph"]["W"], "fb_per_mb_ns": x["fb_per_mb"],
                    "explained_ns": x["explained"],
                    "explained_frac": frac(x["explained"], x["bubble"]),
                    "order": " ".join("%s%d" % (b["phase"], b["k"])
                                      for b in x["blocks"])})
    busy = sum(x["busy"] for x in st["rows"])
    bubble = sum(x["bubble"] for x in st["rows"])
    rec = {"type": "pipe_step", "step": st["num"], "stages": st["p"],
           "microbatches": st["m"], "schedule": st["sched"],
           "clock": st["clock"], "window_ns": st["window"], "busy_ns": busy,
           "bubble_ns": bubble,
           "bubble_frac": frac(bubble, st["p"] * st["window"])}
    if st["ideal"] is not None:
        rec["ideal_bubble_frac"] = round(st["ideal"], 4)
    rec.update({"slow_rank": st["slow"]["rank"],
                "slow_stage": st["slow"]["stage"],
                "slow_fb_per_mb_ns": st["slow"]["fb_per_mb"]})
    out.append(rec)


def close(a, b, floor=0):
    """a within 1 % of b (or within floor, for tiny values)."""
    return abs(a - b) <= max(0.01 * abs(b), floor)


def check(path, ours):
    """Compare trace-pipeline's records in path with ours: the schedule
    exactly, the bubbles within 1 % (1 us for tiny warm-up, cool-down and
    P2P waits).  One line per difference on stdout; 1 when any."""
    theirs = []
    with open(path) as f:
        for line in f:
            if line.strip():
                theirs.append(json.loads(line))
    bad = []

    def index(recs, t):
        return {(r["step"], r.get("rank")): r for r in recs if r.get("type") == t}

    for t, exact, near in (
            ("pipe_step", ("stages", "microbatches", "schedule", "clock"),
             (("bubble_frac", 0),)),
            ("pipe_rank", ("stage", "mb", "order"),
             (("bubble_ns", 0), ("warmup_ns", 1000), ("cooldown_ns", 1000),
              ("p2p_wait_ns", 1000)))):
        a, b = index(theirs, t), index(ours, t)
        if sorted(a) != sorted(b):
            bad.append("%s: keys %s, reference %s" % (t, sorted(a), sorted(b)))
            continue
        for key in sorted(b):
            for k in exact:
                if a[key].get(k) != b[key][k]:
                    bad.append("%s %s %s: %r, reference %r" %
                               (t, key, k, a[key].get(k), b[key][k]))
            for k, floor in near:
                v = a[key].get(k)
                if not isinstance(v, (int, float)) or not close(v, b[key][k], floor):
                    bad.append("%s %s %s: %r, reference %r" %
                               (t, key, k, v, b[key][k]))
    for line in bad:
        print(line)
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--forward", default=r"^forward_step#([0-9]+)$")
    ap.add_argument("--backward", default=r"^backward_step#([0-9]+)$")
    ap.add_argument("--wgrad", default=r"^backward_weight#([0-9]+)$")
    ap.add_argument("--p2p", default=r"send|recv")
    ap.add_argument("--check", metavar="OUTPUT",
                    help="compare trace-pipeline's OUTPUT with ours instead "
                    "of printing ours")
    ap.add_argument("files", nargs="*", default=["-"])
    a = ap.parse_args()
    rules = {"blocks": [("W", re.compile(a.wgrad, re.I)),
                        ("B", re.compile(a.backward, re.I)),
                        ("F", re.compile(a.forward, re.I))],
             "p2p": re.compile(a.p2p, re.I)}
    spans, sources = read(a.files)
    for i, sp in enumerate(spans):
        sp["order"] = i
    blocks = classify(spans, rules)
    out = []
    for n in sorted({step_of(b) for b in blocks}):
        st = analyse_step(n, [b for b in blocks if step_of(b) == n],
                          blocks, spans, sources)
        if st is not None:
            emit(st, out)
    if a.check:
        return check(a.check, out)
    for rec in out:
        print(json.dumps(rec, separators=(",", ":")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
