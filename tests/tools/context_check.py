#!/usr/bin/python3
"""Independent oracle for trace-context(1): reads the whole input stream into
memory, computes every match's context from the definitions in the man page
(not streaming), and compares with what trace-context wrote.

  context_check.py [-B N] [-A N] [-C N] [--overlapping] [--lookback N]
                   [--max M] [--regex]
                   [--key KEY] [--table] PATTERN INPUT OUTPUT

The answer is that of each source's records in time order (time_key), as
trace-context(1) says.  Stream mode: the non-span records must be exactly the
expected ones in order, and on every timeline the written spans must be
exactly the expected ones, in input order, each with its expected "context".  --table: OUTPUT must equal
the expected listing byte for byte.  Prints "ok: N matches" or the first
differences (exit 1).
"""
import argparse
import json
import re
import sys

from device_rule import kind


def time_key(rec):
    """trace-context(1) answers for a source's records in time order: by
    start, the longer first, then by timeline (pid, tid); a stable sort
    keeps stream order among spans alike on one timeline.  Meta first, end
    last; other records (never written) after the spans."""
    r = rec[1]
    t = r.get("type")
    if t == "meta":
        return (0,)
    if t == "end":
        return (3,)
    if t != "span":
        return (2,)
    return (1, r["ts_ns"], -r["dur_ns"], r["pid"], r["tid"])


def read_stream(path):
    """Records with their source index (ndtrace(7) rules for one file)."""
    recs, src, fresh = [], 0, True
    with open(path, encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            if r.get("type") == "meta" and not fresh:
                src += 1
            fresh = False
            recs.append((src, r, line.rstrip("\n")))
    return recs


def in_time_order(recs):
    return sorted(recs, key=lambda rec: (rec[0],) + time_key(rec))


def value_text(v):
    if v is None:
        return None
    if isinstance(v, str):
        return v
    return json.dumps(v, separators=(",", ":"), ensure_ascii=False)


def matches(a, s):
    if a.key is None or a.key == "name":
        v = s.get("name")
    elif a.key.startswith("args."):
        v = (s.get("args") or {}).get(a.key[5:])
    else:
        v = s.get(a.key)
    t = value_text(v)
    if t is None:
        return False
    return re.search(a.pattern, t) is not None if a.regex else t == a.pattern


def end_e(s):
    return s["ts_ns"] + (s["dur_ns"] if s["dur_ns"] > 0 else 1)


def end(s):
    return s["ts_ns"] + s["dur_ns"]


def compute(a, recs):
    """Spans (dicts with g, seq, tl) and rel[g] = {match: role}."""
    spans = []
    tls = {}
    for g, (src, r, line) in enumerate(recs):
        if r.get("type") != "span":
            continue
        key = (src, r["pid"], r["tid"])
        lst = tls.setdefault(key, [])
        s = dict(r)
        s["_g"], s["_seq"], s["_tl"], s["_src"] = g, len(lst), key, src
        lst.append(s)
        spans.append(s)
    # matches in arrival order (--max: the first M)
    ms = []
    for s in spans:
        if a.max and len(ms) >= a.max:
            break
        if matches(a, s):
            ms.append(s)
    rel = {}  # g -> {id: (role, offset)}

    def add(s, mid, role, m):
        rel.setdefault(s["_g"], {})[mid] = (role, s["ts_ns"] - m["ts_ns"])

    keep = max(a.before, a.lookback) if a.overlapping else a.before

    def held(lst, g):
        """Spans of a timeline held when the record at global index g
        arrives: the open ones and the last max(B, --lookback) ended
        ones."""
        arrived = [s for s in lst if s["_g"] < g]
        if not arrived:
            return []
        last = arrived[-1]
        opened = [s for s in arrived if s is last or end(s) > last["ts_ns"]]
        closed = [s for s in arrived if s is not last and end(s) <= last["ts_ns"]]
        return opened + (closed[-keep:] if keep > 0 else [])

    for i, m in enumerate(ms, 1):
        lst = tls[m["_tl"]]
        prev = lst[:m["_seq"]]
        add(m, i, "match", m)
        for s in prev:
            if end(s) > m["ts_ns"]:
                add(s, i, "parent", m)
        closed = [s for s in prev if end(s) <= m["ts_ns"]]
        for s in (closed[-a.before:] if a.before > 0 else []):
            add(s, i, "before", m)
        for s in lst[m["_seq"] + 1:m["_seq"] + 1 + a.after]:
            add(s, i, "after", m)
        if not a.overlapping:
            continue
        dev = m.get("device")
        for key, other in tls.items():
            if key == m["_tl"] or key[0] != m["_src"]:
                continue
            cands = held(other, m["_g"]) + [s for s in other if s["_g"] > m["_g"]]
            for s in cands:
                ok = kind(s) == "host" or (s.get("device") == dev if dev is not None
                                           else s["pid"] == m["pid"])
                if ok and s["ts_ns"] < end_e(m) and m["ts_ns"] < end_e(s):
                    add(s, i, "overlap", m)
    return spans, ms, rel, tls


def claim(s, rel, ms):
    r = rel[s["_g"]]
    own = [k for k, v in r.items() if v[0] == "match"]
    k = own[0] if own else min(r)
    return {"match": k, "role": r[k][0], "offset_ns": r[k][1]}


def check_stream(a, recs, spans, ms, rel, out_lines):
    errs = []
    # expected non-span records, in order
    written = {}
    for s in spans:
        if s["_g"] in rel:
            written[s["_src"]] = written.get(s["_src"], 0) + 1
    # --max: reading stops once the M-th match and every earlier one is
    # complete; the end record of that source is read only if some window
    # stays open until the source ends (always with --overlapping).
    stop_src = None
    if a.max and len(ms) == a.max:
        tls = {}
        for s in spans:
            tls[s["_tl"]] = tls.get(s["_tl"], 0) + 1
        complete = all(a.after == 0 or tls[m["_tl"]] - 1 - m["_seq"] >= a.after
                       for m in ms if m["_src"] == ms[-1]["_src"])
        stop_src = ms[-1]["_src"] if complete and not a.overlapping else None
    exp_other = []
    for g, (src, r, line) in enumerate(recs):
        if src not in written:
            continue
        if r.get("type") == "meta":
            exp_other.append(r)
        elif r.get("type") == "end" and src != stop_src:
            e = dict(r)
            for k in ("spans", "instants", "counters", "flows"):
                if k in e:
                    e[k] = written[src] if k == "spans" else 0
            exp_other.append(e)
    got_other, got_tl, src = [], {}, -1
    for line in out_lines:
        r = json.loads(line)
        if r.get("type") == "span":
            got_tl.setdefault((src, r["pid"], r["tid"]), []).append(r)
        else:
            if r.get("type") == "meta":
                src += 1
            got_other.append(r)
    if got_other != exp_other:
        errs.append("non-span records differ:\n  got %s\n  want %s" % (got_other, exp_other))
    # map input source index -> output source index (sources without
    # output are skipped)
    order = sorted(written)
    exp_tl = {}
    for s in spans:
        if s["_g"] not in rel:
            continue
        o = {k: v for k, v in s.items() if not k.startswith("_") and k != "context"}
        o["context"] = claim(s, rel, ms)
        exp_tl.setdefault((order.index(s["_src"]), s["pid"], s["tid"]), []).append(o)
    for key in sorted(set(exp_tl) | set(got_tl)):
        g, w = got_tl.get(key, []), exp_tl.get(key, [])
        if g != w:
            errs.append("timeline %s differs:\n  got  %s\n  want %s" % (
                key, [(x.get("name"), x["ts_ns"], x.get("context")) for x in g],
                [(x.get("name"), x["ts_ns"], x.get("context")) for x in w]))
    return errs


def fmt(v, sign=False):
    sg = "+" if sign and v > 0 else ""
    if -1000 < v < 1000:
        return "%s%dns" % (sg, v)
    if -1000000 < v < 1000000:
        return "%s%.3fus" % (sg, v / 1e3)
    if -1000000000 < v < 1000000000:
        return "%s%.3fms" % (sg, v / 1e6)
    return "%s%.3fs" % (sg, v / 1e9)


def clean(s):
    return re.sub(r"[\n\t\r\0]", " ", s)


def where(s):
    w = " ".join(x for x in (s.get("process"), s.get("thread")) if x is not None)
    w = clean(w).rstrip(" ")
    return w if w else None


def expect_table(a, spans, ms, rel):
    out = []
    by_g = {s["_g"]: s for s in spans}
    for i, m in enumerate(ms, 1):
        rows = [(by_g[g], r[i][0]) for g, r in rel.items() if i in r]

        def k(x):
            s, role = x
            own = s["_tl"] == m["_tl"]
            return (0 if own else 1, (0, 0) if own else (s["pid"], s["tid"]),
                    0 if (own and role == "parent") else 1, s["_seq"])
        rows.sort(key=k)
        ws = max([5] + [len(fmt(s["ts_ns"] - m["ts_ns"], True)) for s, _ in rows])
        wd = max([3] + [len(fmt(s["dur_ns"])) for s, _ in rows])

        def row(role, st, du, name):
            line = "  %-7s  %*s  %*s" % (role, ws, st, wd, du)
            return line + ("  " + name if name else "")
        if out:
            out.append("")
        hdr = "match %d: %s (pid %d tid %d" % (i, clean(m.get("name", "(no name)")), m["pid"], m["tid"])
        if where(m):
            hdr += ", " + where(m)
        out.append(hdr + ", source %d) at ts_ns %d" % (m["_src"], m["ts_ns"]))
        out.append(row("role", "start", "dur", "name"))
        cur, reach = None, None
        for s, role in rows:
            if s["_tl"] != cur:
                cur, reach = s["_tl"], None
                if cur != m["_tl"]:
                    h = "  -- pid %d tid %d" % (s["pid"], s["tid"])
                    out.append(h + (", " + where(s) if where(s) else ""))
            if role != "parent":
                if reach is not None and s["ts_ns"] > reach:
                    out.append(row("(gap)", fmt(reach - m["ts_ns"], True),
                                   fmt(s["ts_ns"] - reach), None))
                if reach is None or end(s) > reach:
                    reach = end(s)
            out.append(row(role, fmt(s["ts_ns"] - m["ts_ns"], True), fmt(s["dur_ns"]),
                           clean(s.get("name", "(no name)"))))
    return "".join(x + "\n" for x in out)


def parser():
    ap = argparse.ArgumentParser()
    ap.add_argument("-B", dest="before", type=int)
    ap.add_argument("-A", dest="after", type=int)
    ap.add_argument("-C", dest="both", type=int, default=3)
    ap.add_argument("--overlapping", action="store_true")
    ap.add_argument("--lookback", type=int, default=1000)
    ap.add_argument("--max", type=int, default=0)
    ap.add_argument("--regex", action="store_true")
    ap.add_argument("--key")
    ap.add_argument("--table", action="store_true")
    ap.add_argument("pattern")
    ap.add_argument("input")
    ap.add_argument("output")
    return ap


def check(argv, got):
    """Differences between got (trace-context's output for the options and
    input in argv) and what the definitions give; [] when none."""
    a = parser().parse_args(argv)
    a.before = a.both if a.before is None else a.before
    a.after = a.both if a.after is None else a.after
    recs = read_stream(a.input)
    if not a.max:
        recs = in_time_order(recs)  # --max: the first matches read
    spans, ms, rel, _ = compute(a, recs)
    if a.table:
        want = expect_table(a, spans, ms, rel)
        return ([] if got == want else
                ["table differs:\n--- got\n%s--- want\n%s" % (got, want)]), len(ms)
    return check_stream(a, recs, spans, ms, rel, got.splitlines()), len(ms)


def main():
    argv = sys.argv[1:]
    with open(argv[-1], encoding="utf-8") as f:
        got = f.read()
    errs, n = check(argv, got)
    if errs:
        for e in errs[:5]:
            print(e)
        sys.exit(1)
    print("ok: %d matches" % n)


if __name__ == "__main__":
    main()
