#!/usr/bin/env python3
"""Cross-check trace-report --json against the analysis programs.

usage: report_check.py BIN STREAM [TOP]

Runs trace-report --json -k TOP, trace-topk -k TOP, trace-steps -s -w W,
trace-gaps and trace-regions on STREAM (BIN is the directory of the
programs) and compares every number the report shares with them.  Prints
"ok N checks" and exits 0, or prints each mismatch and exits 1.
"""
import json
import subprocess
import sys


def run(args):
    out = subprocess.run(args, check=True, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL).stdout
    return out.decode()


def records(text, typ):
    for line in text.splitlines():
        if line.strip():
            r = json.loads(line)
            if r.get("type") == typ:
                yield r


def main():
    bindir, stream = sys.argv[1], sys.argv[2]
    top = int(sys.argv[3]) if len(sys.argv) > 3 else 10
    rep = json.loads(run([bindir + "/trace-report", "--json", "-k", str(top),
                          stream]))
    bad = []
    n = [0]

    def eq(what, a, b):
        n[0] += 1
        if a != b:
            bad.append("%s: report %r, program %r" % (what, a, b))

    # top ops: trace-topk (device timelines, by name, by self time)
    tops = [r for r in records(run([bindir + "/trace-topk", "-k", str(top),
                                    stream]), "top") if not r.get("other")]
    ops = rep["ops"]["ops"]
    eq("ops rows", len(ops), len(tops))
    for a, b in zip(ops, tops):
        eq("op name", a["name"], b["name"])
        for k in ("count", "self_ns", "total_ns", "max_ns"):
            eq("op %s %s" % (b["name"], k), a[k], b[k])
    total = sum(r["self_ns"] for r in records(
        run([bindir + "/trace-topk", "-k", "0", stream]), "top"))
    eq("exclusive total", rep["ops"]["self_ns"], total)

    # families
    fams = [r for r in records(run([bindir + "/trace-topk", "-k", str(top),
                                    "--by", "family", stream]), "top")
            if not r.get("other")]
    for a, b in zip(rep["ops"]["families"], fams):
        eq("family %s self" % b.get("family"), a["self_ns"], b["self_ns"])

    # steps: trace-steps -s with the warmup the report used
    st = rep["steps"]
    summ = list(records(run([bindir + "/trace-steps", "-s", "-w",
                             str(st["warmup"]), stream]), "step_summary"))
    if st["count"] > 0:
        s = summ[0]
        eq("steps count", st["all"]["count"], s["count"])
        for k in ("count", "mean_ns", "median_ns", "p90_ns", "min_ns",
                  "max_ns", "stddev_ns"):
            eq("steady " + k, st["steady"][k], s["steady"][k])
        if "breakdown" in s:
            for k, v in s["breakdown"].items():
                eq("breakdown " + k, rep["breakdown"]["step_window"][k], v)
        eq("classes", [c["class"] for c in st.get("classes", [])],
           [c["class"] for c in s.get("classes", [])])

    # gaps: trace-gaps at its default (device) level
    gaps = list(records(run([bindir + "/trace-gaps", stream]), "gap"))
    g = rep["gaps"]
    eq("gaps count", g["count"], len(gaps))
    eq("gaps total", g["total_ns"], sum(x["dur_ns"] for x in gaps))
    eq("gaps max", g["max_ns"], max([x["dur_ns"] for x in gaps] or [0]))
    causes = {}
    for x in gaps:
        causes[x["cause"]] = causes.get(x["cause"], 0) + x["dur_ns"]
    eq("gap causes", {c["cause"]: c["dur_ns"] for c in g["causes"]}, causes)

    # regions: trace-regions
    regs = {r["path"]: r for r in
            records(run([bindir + "/trace-regions", stream]), "region")}
    for a in rep["regions"]["regions"]:
        b = regs.get(a["path"])
        if b is None:
            bad.append("region %s missing in trace-regions" % a["path"])
            continue
        eq("region %s inclusive" % a["path"], a["inclusive_ns"],
           b["inclusive_ns"])
        eq("region %s exclusive" % a["path"], a["exclusive_ns"],
           b["exclusive_ns"])

    # memory: trace-mem's peaks (device, allocated bytes, when)
    peaks = sorted((r.get("device") or r.get("allocator") or "",
                    r["allocated_bytes"], r["ts_ns"])
                   for r in records(run([bindir + "/trace-mem", stream]),
                                    "mem_peak"))
    eq("memory peaks", sorted((m["device"] or "", m["allocated_bytes"],
                               m["ts_ns"]) for m in rep["memory"]), peaks)

    # straggler: trace-steps -r
    strag = list(records(run([bindir + "/trace-steps", "-r", "-w",
                              str(st["warmup"]), stream]), "step_ranks"))
    eq("steps compared across ranks", st["ranks"]["steps_compared"],
       len(strag))
    if strag:
        eq("largest straggler lag", st["ranks"]["lag_max_ns"],
           max(x["lag_ns"] for x in strag))

    for b in bad:
        print(b)
    if bad:
        sys.exit(1)
    print("ok %d checks" % n[0])


if __name__ == "__main__":
    main()
