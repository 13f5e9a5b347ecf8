#!/usr/bin/python3
"""Independent decode of an XPlane profile, to cross-check xplane2ndjson.

Uses Google's protobuf runtime (Debian's python3-protobuf) on the module that
protoc generates from lib/ingest/xplane.proto -- not nd_pb, not protobuf-c:

    protoc --python_out=DIR -Ilib lib/ingest/xplane.proto
    /usr/bin/python3 tests/tools/xplane_decode.py --pydir DIR FILE

Without options it prints one JSON object of counts: planes, lines, events
(every XEvent), timed (events with a time), spans (timed, duration_ps > 0),
instants (timed, duration_ps == 0), num_occurrences (aggregates without a
time), negative_duration (timed, duration_ps < 0: skipped), and the spans,
instants and aggregates per plane name under "per_plane".

--events prints every timed event as one JSON object per line, with the keys
xplane2ndjson derives from the file alone, computed here from the documented
rules (xplane2ndjson(1)): type, process, thread, name, ts_ns, dur_ns (spans),
args (long_name when the metadata name differs from the display name, then
every stat of the metadata and of the event, the event's winning; ref_value
resolved to the referenced stat metadata's name; bytes as base64; integers
beyond +-2^53 as decimal strings; NaN and infinities as null).

--compare OURS.ndjson compares xplane2ndjson's output for the file with this
decode: the events (as --events describes them, order-free) and the counts
of the end record; it prints "ok: N events" and exits 0, or prints the first
differences and exits 1.

--time prints how long the parse took (seconds), for bench/xplane.sh.
"""
import argparse
import base64
import collections
import gzip
import json
import math
import sys
import time

SAFE = 2 ** 53


def load(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return data


def stat_value(st, smd):
    kind = st.WhichOneof("value")
    if kind is None:
        return None
    if kind == "ref_value":
        return smd[st.ref_value].name
    if kind == "bytes_value":
        return base64.b64encode(st.bytes_value).decode("ascii")
    if kind == "str_value":
        return st.str_value
    if kind == "double_value":
        v = st.double_value
        if math.isnan(v) or math.isinf(v):
            return None
        if v == int(v) and abs(v) < SAFE:
            return int(v)
        return v
    v = getattr(st, kind)
    if abs(v) > SAFE:
        return str(v)
    return v


def stats_dict(stats, smd, out):
    for st in stats:
        out[smd[st.metadata_id].name] = stat_value(st, smd)


def compare(path, mine, tot):
    """Compare an ndjson file with the decode; 0 when they agree."""
    theirs = collections.Counter()
    end = None
    with open(path, encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            t = r.get("type")
            if t == "end":
                end = r
            if t not in ("span", "instant"):
                continue
            rec = {k: r[k] for k in ("type", "process", "thread", "name",
                                     "ts_ns", "dur_ns") if k in r}
            rec["args"] = r.get("args", {})
            theirs[json.dumps(rec, ensure_ascii=False, sort_keys=True)] += 1
    bad = []
    for k in (mine - theirs):
        bad.append("only in the decode: " + k[:300])
    for k in (theirs - mine):
        bad.append("only in the ndjson: " + k[:300])
    if end is None:
        bad.append("no end record")
    else:
        sk = end.get("skipped", {})
        got = [end.get("events"), end.get("spans"), end.get("instants"),
               sk.get("num_occurrences"), sk.get("negative_duration"),
               end.get("planes"), end.get("lines")]
        want = [tot["events"], tot["spans"], tot["instants"],
                tot["num_occurrences"], tot["negative_duration"],
                tot["planes"], tot["lines"]]
        if got != want:
            bad.append("end counts %s, decode %s" % (got, want))
    if bad:
        print("\n".join(sorted(bad)[:6]))
        return 1
    print("ok: %d events" % sum(mine.values()))
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pydir", required=True)
    ap.add_argument("--events", action="store_true")
    ap.add_argument("--time", action="store_true")
    ap.add_argument("--compare", metavar="OURS")
    ap.add_argument("file")
    a = ap.parse_args()
    sys.path.insert(0, a.pydir)
    import xplane_pb2  # noqa: E402

    data = load(a.file)
    t0 = time.perf_counter()
    space = xplane_pb2.XSpace()
    space.ParseFromString(data)
    t1 = time.perf_counter()

    origin = None
    for p in space.planes:
        for ln in p.lines:
            if len(ln.events) and (origin is None or ln.timestamp_ns < origin):
                origin = ln.timestamp_ns
    origin = origin or 0

    tot = {"planes": len(space.planes), "lines": 0, "events": 0, "timed": 0,
           "spans": 0, "instants": 0, "num_occurrences": 0,
           "negative_duration": 0}
    per = {}
    out = sys.stdout
    want_events = a.events or a.compare
    mine = collections.Counter()
    for p in space.planes:
        smd = p.stat_metadata
        emd = p.event_metadata
        c = per.setdefault(p.name, {"lines": 0, "events": 0, "spans": 0,
                                    "instants": 0, "num_occurrences": 0})
        c["lines"] += len(p.lines)
        tot["lines"] += len(p.lines)
        md_args = {}
        for ln in p.lines:
            thread = ln.display_name or ln.name
            base = ln.timestamp_ns - origin
            for e in ln.events:
                tot["events"] += 1
                c["events"] += 1
                if e.WhichOneof("data") == "num_occurrences":
                    tot["num_occurrences"] += 1
                    c["num_occurrences"] += 1
                    continue
                tot["timed"] += 1
                if e.duration_ps < 0:
                    tot["negative_duration"] += 1
                    continue
                span = e.duration_ps != 0
                tot["spans" if span else "instants"] += 1
                c["spans" if span else "instants"] += 1
                if not want_events:
                    continue
                md = emd[e.metadata_id]
                name = md.display_name or md.name
                if e.metadata_id not in md_args:
                    d = {}
                    if md.name != name:
                        d["long_name"] = md.name
                    stats_dict(md.stats, smd, d)
                    md_args[e.metadata_id] = d
                args = dict(md_args[e.metadata_id])
                stats_dict(e.stats, smd, args)
                rec = {"type": "span" if span else "instant",
                       "process": p.name, "thread": thread, "name": name,
                       "ts_ns": base + e.offset_ps // 1000}
                if span:
                    rec["dur_ns"] = (base + (e.offset_ps + e.duration_ps)
                                     // 1000) - rec["ts_ns"]
                rec["args"] = args
                line = json.dumps(rec, ensure_ascii=False, allow_nan=False,
                                  sort_keys=True)
                if a.compare:
                    mine[line] += 1
                else:
                    out.write(line + "\n")
    if a.events:
        return
    if a.compare:
        sys.exit(compare(a.compare, mine, tot))
    tot["per_plane"] = per
    if a.time:
        tot["parse_seconds"] = round(t1 - t0, 3)
    print(json.dumps(tot, sort_keys=True))


if __name__ == "__main__":
    main()
