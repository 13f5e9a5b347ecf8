#!/usr/bin/env python3
"""ascend_ref.py WHAT TRACE: the numbers tests/ascend.bats expects of a
torch_npu trace (tests/tools/gen_ascend.py), computed from the JSON alone,
independently of the C code: times from their decimal text with
fractions.Fraction (exact: a time that is not a whole number of ns fails).

WHAT is one of
  classes  device spans by class: "compute COUNT NS" (Ascend Hardware
           tasks), "communication COUNT NS" (Communication lane)
  steps    per ProfilerStep#N: "N TS DUR COMPUTE COMMUNICATION HOST IDLE"
           (window split by precedence compute, communication, host activity,
           idle;
           TS from the origin, the whole second at or below the first ts)
  gap      the longest device idle gap between device spans: "TS DUR STEP"
  launch   per Ascend Hardware task: "NAME TS STEP SCOPE", from the
           async_npu flow that ends on it (the step and the nn.Module
           labels around the flow's start)
"""
import json
import sys
from fractions import Fraction

from breakdown_ref import clip, length, merge

DEVICE = {"Ascend Hardware": "compute", "Communication": "communication"}
DERIVED = {"Overlap Analysis", "AI Core Freq"}


def ns(v):
    x = Fraction(str(v)) * 1000
    if x.denominator != 1:
        sys.exit("not a whole ns: %r" % (v,))
    return int(x)


def load(path):
    with open(path) as f:
        doc = json.load(f)
    evs = doc["traceEvents"] if isinstance(doc, dict) else doc
    pname = {e["pid"]: e["args"]["name"] for e in evs
             if e.get("ph") == "M" and e.get("name") == "process_name"}
    spans = []
    for e in evs:
        if e.get("ph") == "X":
            spans.append(dict(e, t0=ns(e["ts"]), t1=ns(e["ts"]) + ns(e["dur"]),
                              proc=pname.get(e["pid"], "")))
    origin = min(ns(e["ts"]) for e in evs if "ts" in e) // 10**9 * 10**9
    return evs, spans, origin


def steps(spans):
    return sorted((int(s["name"][13:]), s["t0"], s["t1"]) for s in spans
                  if s["name"].startswith("ProfilerStep#"))


def main():
    what, path = sys.argv[1], sys.argv[2]
    evs, spans, origin = load(path)
    dev = [s for s in spans if s["proc"] in DEVICE]
    # host activity (trace-steps(1)): not step markers, not Python frames
    host = [s for s in spans if s["proc"] not in DEVICE and
            s["proc"] not in DERIVED and
            not s["name"].startswith("ProfilerStep#") and
            s.get("cat") != "python_function"]
    if what == "classes":
        for cls in ("compute", "communication"):
            d = [s["t1"] - s["t0"] for s in dev if DEVICE[s["proc"]] == cls]
            print(cls, len(d), sum(d))
    elif what == "steps":
        for n, a, b in steps(spans):
            iv = {c: clip([(s["t0"], s["t1"]) for s in dev
                           if DEVICE[s["proc"]] == c], a, b)
                  for c in ("compute", "communication")}
            h = clip([(s["t0"], s["t1"]) for s in host], a, b)
            c = length(merge(iv["compute"]))
            cm = length(merge(iv["compute"] + iv["communication"])) - c
            ho = length(merge(iv["compute"] + iv["communication"] + h)) - c - cm
            print(n, a - origin, b - a, c, cm, ho, (b - a) - c - cm - ho)
    elif what == "gap":
        u = merge([(s["t0"], s["t1"]) for s in dev])
        g = max((u[i][0] - u[i - 1][1], u[i - 1][1])
                for i in range(1, len(u)))
        st = [n for n, a, b in steps(spans) if a <= g[1] < b]
        print(g[1] - origin, g[0], st[0] if st else "-")
    elif what == "launch":
        fs = {e["id"]: ns(e["ts"]) for e in evs
              if e.get("cat") == "async_npu" and e["ph"] == "s"}
        mods = [s for s in spans if s["name"].startswith("nn.Module: ")]
        for s in sorted(dev, key=lambda s: (s["t0"], s["name"])):
            if s["proc"] != "Ascend Hardware":
                continue
            fid = next(e["id"] for e in evs if e.get("cat") == "async_npu"
                       and e["ph"] == "f" and e["pid"] == s["pid"]
                       and e["tid"] == s["tid"] and ns(e["ts"]) == s["t0"])
            t = fs[fid]
            st = [n for n, a, b in steps(spans) if a <= t < b]
            sc = "/".join(m["name"][11:] for m in
                          sorted(mods, key=lambda m: (m["t0"], -m["t1"]))
                          if m["t0"] <= t < m["t1"])
            print(s["name"], s["t0"] - origin, st[0] if st else "-",
                  sc or "-")
    else:
        sys.exit(__doc__)


main()
