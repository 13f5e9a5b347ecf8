#!/usr/bin/env python3
"""The steady-state step summary, computed independently from trace-steps'
step records, against what trace-steps --summary, trace-report --json and
trace-diff (the stream against itself) say, and with -R the straggler of
trace-steps --ranks against trace-report's ranks.

    stepsum_check.py BINDIR STREAM [-w N] [--drop-last] [-R]

Rule checked (nd_stepsum.h): a job step is a step number, its duration the
longest record's; the steady window leaves out the first N job steps and,
with --drop-last, the last one, unless there are no more job steps than
that: then every step is steady and warmup_applied is false.  Prints the
mismatches and exits 1, or prints "ok N" (checks made).
"""
import json
import math
import subprocess
import sys

bindir, stream = sys.argv[1], sys.argv[2]
opts = sys.argv[3:]
ranks = "-R" in opts
opts = [o for o in opts if o != "-R"]
warmup = int(opts[opts.index("-w") + 1]) if "-w" in opts else 1
drop = "--drop-last" in opts
bad = []
checks = 0


def run(args):
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if p.returncode not in (0, 1):
        sys.exit("%s: exit %d: %s" % (args[0], p.returncode, p.stderr))
    return [json.loads(l) for l in p.stdout.decode().splitlines() if l]


def eq(what, a, b):
    global checks
    checks += 1
    if a != b:
        bad.append("%s: %r != %r" % (what, a, b))


def near(what, a, b, tol):
    global checks
    checks += 1
    if a is None or b is None or abs(a - b) > tol:
        bad.append("%s: %r !~ %r" % (what, a, b))


def nearest_rank(xs, q):
    return xs[max(1, math.ceil(q * len(xs))) - 1]


# --- the expected figures, from the step records ---
steps = [r for r in run([bindir + "/trace-steps", stream])
         if r["type"] == "step"]
job = {}
for r in steps:
    job[r["step"]] = max(job.get(r["step"], 0), r["dur_ns"])
nums = sorted(job)
n = len(nums)
applied = n > warmup + (1 if drop else 0)
first, last = (warmup, n - (1 if drop else 0)) if applied else (0, n)
sn = nums[first:last]
sd = sorted(job[k] for k in sn)
exp = {"count": len(sd)}
if sd:
    mean = sum(sd) / len(sd)
    exp.update(mean_ns=math.floor(mean + 0.5),
               median_ns=nearest_rank(sd, 0.5), p90_ns=nearest_rank(sd, 0.9),
               min_ns=sd[0], max_ns=sd[-1])
parts = ["compute_ns", "communication_ns", "memory_ns", "host_ns", "idle_ns",
         "overlap_ns"]
bd = {k: 0 for k in ["dur_ns"] + parts}
for r in steps:
    if sn and sn[0] <= r["step"] <= sn[-1]:
        bd["dur_ns"] += r["dur_ns"]
        for k in parts:
            bd[k] += r[k]

# --- trace-steps --summary ---
summ = [r for r in run([bindir + "/trace-steps", "-s"] + opts + [stream])
        if r["type"] == "step_summary"][0]
eq("steps: all count", summ["count"], n)
eq("steps: warmup_applied", summ["warmup_applied"], applied)
for k, v in exp.items():
    eq("steps: steady " + k, summ["steady"].get(k), v)
if sd:
    eq("steps: first/last", [summ["steady"]["first_step"],
                             summ["steady"]["last_step"]], [sn[0], sn[-1]])
if bd["dur_ns"] > 0:
    eq("steps: breakdown", summ.get("breakdown"), bd)
classes = [c["class"] for c in summ.get("classes", [])]

# --- trace-report --json ---
rep = run([bindir + "/trace-report", "--json"] + opts + [stream])[0]
st = rep["steps"]
eq("report: count", st["count"], n)
eq("report: warmup_applied", st.get("warmup_applied"), applied)
eq("report: warmup", st["warmup"], warmup if applied else 0)
for k, v in exp.items():
    eq("report: steady " + k, st["steady"].get(k), v)
eq("report: stddev", st["steady"].get("stddev_ns"),
   summ["steady"].get("stddev_ns"))
if sd:
    eq("report: first/last", [st["first_step"], st["last_step"]],
       [sn[0], sn[-1]])
    eq("report: classes", [c["class"] for c in st["classes"]], classes)
if bd["dur_ns"] > 0:
    # the report adds the sum of its two idle parts
    rbd = dict(rep["breakdown"]["step_window"])
    eq("report: device idle", rbd.pop("device_idle_ns"),
       bd["host_ns"] + bd["idle_ns"])
    eq("report: breakdown", rbd, bd)

# --- trace-diff, the stream against itself ---
diff = run([bindir + "/trace-diff", "--allow-same"] + opts + [stream, stream])
d = {r["metric"]: r for r in diff if r["type"] == "delta"}
verdict = diff[-1]
eq("diff: steps", verdict["before"]["steps"], n)
eq("diff: steady_steps", verdict["before"]["steady_steps"], len(sd))
eq("diff: warmup_applied", verdict["before"]["warmup_applied"], applied)
if sd:
    for k in ("median", "p90", "mean"):
        eq("diff: step." + k, d["step." + k]["before_ns"], exp[k + "_ns"])
    eq("diff: step.count", d["step.count"]["before"], len(sd))
if bd["dur_ns"] > 0:
    for k in parts:
        near("diff: share." + k[:-3], d["share." + k[:-3]]["before"],
             bd[k] / bd["dur_ns"], 1e-6)
if len(classes) == 2:
    for c in classes:
        eq("diff: class " + c, "step.%s.median" % c in d, True)

# --- ranks: trace-steps -R against the report ---
if ranks:
    out = run([bindir + "/trace-steps", "-R"] + opts + [stream])
    rs = [r for r in out if r["type"] == "step_ranks"]
    sg = [r for r in out if r["type"] == "straggler"][0]
    rr = st["ranks"]
    eq("ranks: steps compared", rr["steps_compared"], len(rs))
    eq("ranks: straggler steps", sg["steps"], len(rs))
    if rs:
        eq("ranks: lag max", rr["lag_max_ns"], max(r["lag_ns"] for r in rs))
        eq("ranks: spread max", rr["spread_max_ns"],
           max(r["dur_spread_ns"] for r in rs))
        eq("ranks: per rank",
           sorted((c["rank"], c["straggler_steps"]) for c in sg["counts"]),
           sorted((p["rank"], p["straggler"]) for p in rr["per_rank"]))

if bad:
    print("\n".join(bad))
    sys.exit(1)
print("ok %d" % checks)
