#!/usr/bin/python3
"""Independent recomputation of trace-steps' step records, to cross-check it.

    steps_check.py [--per-device] [--step-regex RE] FILE

Reads an ndtrace stream (plain NDJSON) and prints, one JSON object per line,
the step windows and their breakdown computed from the rules of
trace-steps(1) -- written here again from the manual, with a different
algorithm (a sweep over +1/-1 boundary events with a counter per category,
where trace-steps keeps merged interval sets):

  {"source": 0, "device": null, "step": 12, "ts_ns": ..., "dur_ns": ...,
   "compute_ns": ..., "communication_ns": ..., "memory_ns": ...,
   "host_ns": ..., "idle_ns": ..., "overlap_ns": ..., "marker": "..."}

sorted by (source, device, ts_ns, step).  Python standard library only.
"""
import argparse
import json
import re
import sys

from device_rule import kind

RANK = {"op_step": 1, "step_num": 2, "profiler_step": 3, "steps_line": 4,
        "regex": 5}


def as_int(v):
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, float) and v == int(v):
        return int(v)
    if isinstance(v, str) and re.fullmatch(r"-?[0-9]{1,15}", v):
        return int(v)
    return None


def marker(e, k, rx):
    """(kind, number or None) when e marks a step, else None."""
    name = e.get("name") or ""
    args = e.get("args") or {}
    if rx is not None:
        m = rx.search(name)
        if m:
            if m.lastindex and m.group(1) is not None and \
                    re.fullmatch(r"-?[0-9]{1,15}", m.group(1)):
                return ("regex", int(m.group(1)))
            if as_int(args.get("step_num")) is not None:
                return ("regex", as_int(args["step_num"]))
            d = re.findall(r"[0-9]+", name)
            if d and len(d[-1]) <= 15:
                return ("regex", int(d[-1]))
            return ("regex", None)
    if k == "annot" and e.get("thread") == "Steps" and \
            (e.get("process") or "").startswith("/device:"):
        n = as_int(name)
        if n is None:
            n = as_int(args.get("step_num"))
        if n is None:
            n = as_int(args.get("group_id"))
        return ("steps_line", n)
    if k == "host" and name.startswith("ProfilerStep#"):
        return ("profiler_step", as_int(name[13:]))
    if k == "host" and as_int(args.get("step_num")) is not None:
        return ("step_num", as_int(args["step_num"]))
    return None


def devkey(e):
    if e.get("device") is not None:
        return e["device"]
    if e.get("process") is not None:
        return e["process"]
    return "pid %d" % e.get("pid", 0)


def breakdown(ivs, lo, hi):
    """ivs: {cat: [(a, b), ...]}; the parts of [lo, hi) by precedence."""
    ev = []
    for c, lst in ivs.items():
        for a, b in lst:
            a, b = max(a, lo), min(b, hi)
            if a < b:
                ev.append((a, c, 1))
                ev.append((b, c, -1))
    ev.sort()
    cnt = {"C": 0, "M": 0, "Y": 0, "H": 0}
    out = {"compute_ns": 0, "communication_ns": 0, "memory_ns": 0,
           "host_ns": 0, "idle_ns": 0, "overlap_ns": 0}
    t = lo
    i = 0
    while t < hi:
        while i < len(ev) and ev[i][0] <= t:
            cnt[ev[i][1]] += ev[i][2]
            i += 1
        nxt = ev[i][0] if i < len(ev) else hi
        nxt = min(nxt, hi)
        n = nxt - t
        if cnt["C"]:
            out["compute_ns"] += n
            if cnt["M"]:
                out["overlap_ns"] += n
        elif cnt["M"]:
            out["communication_ns"] += n
        elif cnt["Y"]:
            out["memory_ns"] += n
        elif cnt["H"]:
            out["host_ns"] += n
        else:
            out["idle_ns"] += n
        t = nxt
    return out


def finish(src, S, per_device, out):
    marks = S["marks"]
    best = max((RANK[m[0]] for m in marks), default=0)
    wins = {}     # (scope, num) -> [lo, hi, kind]
    if best:
        kname = [k for k, v in RANK.items() if v == best][0]
        chosen = [m for m in marks if m[0] == kname]
        chosen.sort(key=lambda m: (str(m[2]), m[3]))
        ordn = {}
        for m in chosen:
            num = m[1]
            if num is None:
                ordn[m[2]] = ordn.get(m[2], 0) + 1
                num = ordn[m[2]]
            w = wins.setdefault((m[2], num), [m[3], m[4], kname])
            w[0] = min(w[0], m[3])
            w[1] = max(w[1], m[4])
    else:
        for (d, num), (lo, hi) in S["ext"].items():
            wins[(d, num)] = [lo, hi, "op_step"]
    devs = S["devs"]
    recs = []
    if not per_device:
        by = {}
        for (scope, num), (lo, hi, kn) in wins.items():
            by.setdefault(num, []).append((lo, hi, kn, scope))
        for num, ws in by.items():
            # device windows out of phase (not one interval) stay apart
            ws.sort(key=lambda w: w[0])
            end, apart = ws[0][1], False
            for w in ws[1:]:
                apart = apart or w[0] > end
                end = max(end, w[1])
            if apart and all(w[3] is not None for w in ws):
                for lo, hi, kn, scope in ws:
                    recs.append((scope, num, lo, hi, kn, [scope]))
                continue
            recs.append((None, num, min(w[0] for w in ws),
                         max(w[1] for w in ws), ws[0][2], list(devs)))
    else:
        for (scope, num), (lo, hi, kn) in wins.items():
            if scope is not None or not devs:
                recs.append((scope, num, lo, hi, kn,
                             [scope] if scope is not None else []))
            else:
                for d in devs:
                    recs.append((d, num, lo, hi, kn, [d]))
    for dev, num, lo, hi, kn, dom in recs:
        ivs = {"C": [], "M": [], "Y": [], "H": S["host"]}
        for d in dom:
            if d not in devs:
                continue
            for c in "CMY":
                ivs[c] += devs[d][c]
        r = {"source": src, "device": dev, "step": num, "ts_ns": lo,
             "dur_ns": hi - lo}
        r.update(breakdown(ivs, lo, hi))
        r["marker"] = kn
        out.append(r)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-d", "--per-device", action="store_true")
    ap.add_argument("--step-regex")
    ap.add_argument("file")
    a = ap.parse_args()
    rx = re.compile(a.step_regex) if a.step_regex else None
    out = []
    src = -1
    S = None
    fresh = True
    for line in open(a.file, encoding="utf-8"):
        e = json.loads(line)
        t = e.get("type")
        if t == "meta" and not fresh or S is None:
            if S is not None:
                finish(src, S, a.per_device, out)
            src += 1
            S = {"marks": [], "ext": {}, "devs": {}, "host": []}
        fresh = False
        if t != "span" or "ts_ns" not in e or "dur_ns" not in e:
            continue
        lo, d = e["ts_ns"], e["dur_ns"]
        hi = lo + d
        k = kind(e)
        m = marker(e, k, rx) if d > 0 else None
        if m is not None:
            scope = None
            if k != "host" or (e.get("process") or "").startswith("/device:"):
                scope = devkey(e)
            S["marks"].append((m[0], m[1], scope, lo, hi))
        if d <= 0:
            continue
        if k == "device":
            dv = S["devs"].setdefault(devkey(e), {"C": [], "M": [], "Y": []})
            cls = e.get("class")
            c = "M" if cls in ("communication", "stall") else \
                "Y" if cls == "memory" else "C"
            dv[c].append((lo, hi))
            if "step" in e:
                key = (devkey(e), e["step"])
                w = S["ext"].setdefault(key, [lo, hi])
                w[0] = min(w[0], lo)
                w[1] = max(w[1], hi)
        elif k == "host" and m is None:
            cat = (e.get("cat") or "").lower()
            if cat in ("python_function", "user_annotation") or \
                    e.get("family") == "python" or e.get("class") == "other":
                continue
            S["host"].append((lo, hi))
    if S is not None:
        finish(src, S, a.per_device, out)
    out.sort(key=lambda r: (r["source"], str(r["device"]), r["ts_ns"],
                            r["step"]))
    for r in out:
        sys.stdout.write(json.dumps(r, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main()
