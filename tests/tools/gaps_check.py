#!/usr/bin/python3
"""Independent recomputation of trace-gaps' gap records, to cross-check it.

    gaps_check.py [--level device|timeline] [--min NS] [--kernel-wait NS] FILE

Reads an ndtrace stream (plain NDJSON) and prints one JSON object per gap,
computed from the rules of trace-gaps(1) -- written here again from the
manual, on whole sorted op lists (trace-gaps streams each timeline and
keeps only what the rules need):

  {"source": 0, "key": "...", "ts_ns": ..., "dur_ns": ..., "before": "...",
   "marker": "...", "payload": "...", "payload_index": 0, "cause": "..."}

key is "pid/tid" at timeline level, the device key at device level.  Sorted
by (source, key, ts_ns).  Python standard library only.
"""
import argparse
import json
import sys

from device_rule import kind

LIGHT = {"iota", "constant", "bitcast", "get-tuple-element", "parameter",
         "tuple", "after-all", "Stream Sync", "Event Sync", "Context Sync",
         "Stream Wait Event"}
LOOKAHEAD = 8


def is_marker(e):
    name = e.get("name") or ""
    args = e.get("args") or {}
    sn = args.get("step_num")
    return name.startswith("ProfilerStep#") or \
        (isinstance(sn, int) and not isinstance(sn, bool)) or \
        (isinstance(sn, str) and sn.lstrip("-").isdigit())


def host_activity(e):
    cat = (e.get("cat") or "").lower()
    return not (cat in ("python_function", "user_annotation") or
                e.get("family") == "python" or e.get("class") == "other" or
                is_marker(e))


def light(name):
    if name.startswith("copy-start") or name.startswith("copy-done"):
        return True
    base = name
    while True:
        head, dot, tail = base.rpartition(".")
        if dot and head and tail.isdigit():
            base = head
        else:
            break
    return base in LIGHT


def devkey(e):
    if e.get("device") is not None:
        return e["device"]
    if e.get("process") is not None:
        return e["process"]
    return "pid %d" % e.get("pid", 0)


def corr(e):
    a = e.get("args") or {}
    for k in ("correlation", "correlation_id"):
        v = a.get(k)
        if isinstance(v, int) and not isinstance(v, bool):
            return v
    return None


def overlaps(ivs, a, b):
    return any(x < b and y > a for x, y in ivs)


def finish(src, S, level, mn, kw, out):
    thr = max(mn, 1)
    ops = S["dev"] if S["dev"] else S["hostops"]
    groups = {}
    for o in ops:
        key = o["tl"] if level == "timeline" else o["dev"]
        groups.setdefault(key, []).append(o)
    for key, lst in groups.items():
        # start order; the longer first on ties, then the timeline seen first
        lst.sort(key=lambda o: (o["ts"], -o["end"], o["tlseq"], o["seq"]))
        runmax = None
        before = None
        for i, o in enumerate(lst):
            if runmax is not None and o["ts"] - runmax >= thr:
                a, b = runmax, o["ts"]
                # payload: at most LOOKAHEAD ops from the marker, not past
                # another gap of at least thr
                p = 0
                rm = lst[i]["end"]
                for j in range(i, min(i + LOOKAHEAD, len(lst))):
                    if j > i:
                        if lst[j]["ts"] - rm >= thr:
                            break
                        rm = max(rm, lst[j]["end"])
                    if not lst[j]["light"]:
                        p = j - i
                        break
                m, pl = lst[i], lst[i + p]
                if overlaps(S["sync"], a, b):
                    cause = "sync"
                elif m["corr"] is not None and m["corr"] in S["launch"] and \
                        S["launch"][m["corr"]] >= a:
                    cause = "host_wait"
                elif b - a < kw:
                    cause = "kernel_wait"
                elif pl["comm"] or overlaps(S["comm"], a, b):
                    cause = "collective_wait"
                else:
                    cause = "other"
                if b - a >= mn:
                    out.append({"source": src, "key": key, "ts_ns": a,
                                "dur_ns": b - a, "before": before["name"],
                                "marker": m["name"], "payload": pl["name"],
                                "payload_index": p, "cause": cause})
            if runmax is None or o["end"] >= runmax:
                # the op with the latest end; the later start on ties
                if runmax is None or o["end"] > runmax or \
                        o["ts"] >= before["ts"]:
                    before = o
                runmax = o["end"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--level", default="device")
    ap.add_argument("--min", type=int, default=0)
    ap.add_argument("--kernel-wait", type=int, default=30000)
    ap.add_argument("file")
    a = ap.parse_args()
    out = []
    src = -1
    S = None
    fresh = True
    seq = 0
    for line in open(a.file, encoding="utf-8"):
        e = json.loads(line)
        t = e.get("type")
        if t == "meta" and not fresh or S is None:
            if S is not None:
                finish(src, S, a.level, a.min, a.kernel_wait, out)
            src += 1
            S = {"dev": [], "hostops": [], "sync": [], "comm": [],
                 "launch": {}, "tlseq": {}}
        fresh = False
        if t != "span" or e.get("dur_ns", 0) <= 0:
            continue
        k = kind(e)
        lo, hi = e["ts_ns"], e["ts_ns"] + e["dur_ns"]
        name = e.get("name", "")
        if k == "host":
            if not is_marker(e) and (
                    "Synchronize" in name or "block_until_ready" in name or
                    "BlockHostUntilReady" in name or
                    (e.get("cat") or "").lower() == "cuda_sync"):
                S["sync"].append((lo, hi))
            if not host_activity(e):
                continue
            c = corr(e)
            if c is not None:
                S["launch"][c] = min(S["launch"].get(c, lo), lo)
            if e.get("class") == "communication":
                S["comm"].append((lo, hi))
        elif k != "device":
            continue
        tl = "%d/%d" % (e.get("pid", 0), e.get("tid", 0))
        tlkey = (tl, k)
        if tlkey not in S["tlseq"]:
            S["tlseq"][tlkey] = len(S["tlseq"])
        seq += 1
        o = {"ts": lo, "end": hi, "name": name, "light": light(name),
             "corr": corr(e), "tl": tl, "dev": devkey(e),
             "tlseq": S["tlseq"][tlkey], "seq": seq,
             "comm": k == "device" and
             e.get("class") in ("communication", "stall")}
        (S["dev"] if k == "device" else S["hostops"]).append(o)
    if S is not None:
        finish(src, S, a.level, a.min, a.kernel_wait, out)
    out.sort(key=lambda r: (r["source"], r["key"], r["ts_ns"]))
    for r in out:
        sys.stdout.write(json.dumps(r, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main()
