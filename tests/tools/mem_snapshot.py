#!/usr/bin/python3
"""Independent reading of pickles and PyTorch memory snapshots, to
cross-check trace-mem.  Python's own pickle module does the reading, with an
Unpickler that refuses every global (find_class) and persistent id, so no
code in the file can run.

    mem_snapshot.py dump FILE      the value as one JSON line, in the
                                   conventions of trace-mem --dump (tuples
                                   and sets as arrays, bytes as base64, NaN
                                   and infinities as null)
    mem_snapshot.py expect FILE [-k N]
                                   the records trace-mem writes for a
                                   snapshot, restricted to the keys computed
                                   here: mem_snapshot, mem_peak, and the
                                   mem_block rows (at the peak, then in the
                                   snapshot), one JSON object per line with
                                   sorted keys
    mem_snapshot.py write KIND FILE
                                   write a hand-made pickle (see KINDS)

The timeline follows PyTorch's memory_viz: allocations the trace frees
without having made them, and blocks active in the snapshot that the trace
did not allocate, existed before the trace began.  Sizes in the trace are
the requested sizes; "allocated" counts from alloc to free_requested.
"""
import base64
import io
import json
import math
import pickle
import sys


class Refuse(pickle.Unpickler):
    def find_class(self, module, name):
        raise pickle.UnpicklingError("refused global %s.%s" % (module, name))

    def persistent_load(self, pid):
        raise pickle.UnpicklingError("refused persistent id")


def load(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        import gzip
        data = gzip.decompress(data)
    return Refuse(io.BytesIO(data)).load()


def plain(v):
    if isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
        return None
    if isinstance(v, int) and not isinstance(v, bool) and abs(v) > 2 ** 53:
        return str(v)
    if isinstance(v, (bytes, bytearray)):
        return base64.b64encode(bytes(v)).decode()
    if isinstance(v, (list, tuple, set, frozenset)):
        return [plain(x) for x in v]
    if isinstance(v, dict):
        out = {}
        for k, x in v.items():
            if isinstance(k, (bytes, tuple)):
                k = json.dumps(plain(k), separators=(",", ":"))
            out[k] = plain(x)
        return out
    return v


def snapshot_blocks(name, ss, top):
    lb = sorted(((b["size"], b["address"], b) for s in ss
                 for b in s.get("blocks", [])
                 if b["state"] in ("active_allocated", "active_pending_free")),
                key=lambda t: (-t[0], t[1]))
    return [{"type": "mem_block", "at": "snapshot", "device": name,
             "row": n, "address": addr, "size": size,
             "requested_size": b["requested_size"]}
            for n, (size, addr, b) in enumerate(lb[:top], 1)]


def expect(snap, top):
    out = []
    segs = snap if isinstance(snap, list) else snap["segments"]
    traces = [] if isinstance(snap, list) else (snap.get("device_traces") or [])
    devices = sorted({s.get("device", 0) for s in segs} |
                     {i for i, t in enumerate(traces) if t})
    times = [e.get("time_us") for t in traces for e in t]
    has_time = bool(times) and all(isinstance(t, int) for t in times)
    origin = min(times) if has_time else 0

    def ts(e, seq):
        return (e["time_us"] - origin) * 1000 if has_time else seq

    for d in devices:
        name = "GPU:%d" % d
        ss = [s for s in segs if s.get("device", 0) == d]
        blocks = [(s, b) for s in ss for b in s.get("blocks", [])]
        live = [(s, b) for s, b in blocks
                if b["state"] in ("active_allocated", "active_pending_free")]
        alloc = [(s, b) for s, b in blocks if b["state"] == "active_allocated"]
        inactive = [b for s, b in blocks if b["state"] not in
                    ("active_allocated", "active_pending_free")]
        reserved = sum(s["total_size"] for s in ss)
        allocated = sum(b["size"] for s, b in alloc)
        used = [s for s in ss if any(b["state"].startswith("active")
                                     for b in s.get("blocks", []))]
        split = sum(b["size"] for s in used for b in s["blocks"]
                    if not b["state"].startswith("active"))
        tr = traces[d] if d < len(traces) else []
        out.append({
            "type": "mem_snapshot", "device": name,
            "segments": len(ss), "blocks": len(blocks),
            "active_blocks": len(alloc), "inactive_blocks": len(inactive),
            "reserved_bytes": reserved, "allocated_bytes": allocated,
            "active_bytes": sum(b["size"] for s, b in live),
            "requested_bytes": sum(b["requested_size"] for s, b in alloc),
            "inactive_bytes": sum(b["size"] for b in inactive),
            "inactive_split_bytes": split,
            "free_segment_bytes": sum(s["total_size"] for s in ss
                                      if s not in used),
            "largest_inactive_bytes": max([b["size"] for b in inactive] or [0]),
            "trace_entries": len(tr),
        })
        # replay
        live_req = {}
        pre = []            # (addr, size, frames) live before the trace
        for i, e in enumerate(tr):
            if e["action"] == "alloc":
                live_req[e["addr"]] = i
            elif e["action"] == "free_requested":
                if e["addr"] in live_req:
                    del live_req[e["addr"]]
                else:
                    pre.append((e["addr"], e["size"], None, i))
        for s, b in alloc:
            if b["address"] not in live_req:
                pre.append((b["address"], b["requested_size"],
                            b.get("frames"), None))
        a = sum(p[1] for p in pre)
        peak, peak_i = a, -1
        sizes = {}
        for i, e in enumerate(tr):
            if e["action"] == "alloc":
                sizes[e["addr"]] = e["size"]
                a += e["size"]
            elif e["action"] == "free_requested":
                a -= sizes.pop(e["addr"], e["size"])
            else:
                continue
            if a > peak:
                peak, peak_i = a, i
        if not tr:
            out.extend(snapshot_blocks(name, ss, top))
            continue
        # live at the peak
        cur = {}
        for addr, size, frames, free_at in pre:
            cur[addr] = (size, -1)
        for i in range(peak_i + 1):
            e = tr[i]
            if e["action"] == "alloc":
                cur[e["addr"]] = (e["size"], i)
            elif e["action"] == "free_requested":
                cur.pop(e["addr"], None)
        rec = {"type": "mem_peak", "device": name,
               "allocated_bytes": peak, "live_blocks": len(cur),
               "final_allocated_bytes": a}
        if peak_i >= 0:
            rec["seq"] = peak_i
            rec["ts_ns"] = ts(tr[peak_i], peak_i)
        out.append(rec)
        rows = sorted(cur.items(), key=lambda kv: (-kv[1][0], kv[0], kv[1][1]))
        for n, (addr, (size, seq)) in enumerate(rows[:top], 1):
            r = {"type": "mem_block", "at": "peak", "row": n,
                 "address": addr, "size": size}
            if seq >= 0:
                r["seq"] = seq
            out.append(r)
        out.extend(snapshot_blocks(name, ss, top))
    return out


# Hand-made pickles for the tests.
def frames(*names):
    return [{"filename": "train.py", "line": 10 * (i + 1), "name": n}
            for i, n in enumerate(names)]


def small_snapshot():
    """Two devices; a trace with a block from before the trace, a
    pending free and an out-of-memory event."""
    seg0 = {"device": 0, "address": 1000000, "total_size": 4096,
            "allocated_size": 1536, "active_size": 2048,
            "requested_size": 1400, "stream": 0, "segment_type": "small",
            "blocks": [
                {"address": 1000000, "size": 1024, "requested_size": 1000,
                 "state": "active_allocated", "frames": frames("old")},
                {"address": 1001024, "size": 512, "requested_size": 400,
                 "state": "active_allocated", "frames": frames("mm", "fwd")},
                {"address": 1001536, "size": 512, "requested_size": 512,
                 "state": "active_pending_free", "frames": []},
                {"address": 1002048, "size": 2048, "requested_size": 0,
                 "state": "inactive", "frames": []}]}
    seg1 = {"device": 0, "address": 2000000, "total_size": 2097152,
            "allocated_size": 0, "active_size": 0, "requested_size": 0,
            "stream": 0, "segment_type": "large",
            "blocks": [{"address": 2000000, "size": 2097152,
                        "requested_size": 0, "state": "inactive",
                        "frames": []}]}
    seg2 = {"device": 1, "address": 3000000, "total_size": 2097152,
            "allocated_size": 2097152, "active_size": 2097152,
            "requested_size": 2000000, "stream": 7, "segment_type": "large",
            "blocks": [{"address": 3000000, "size": 2097152,
                        "requested_size": 2000000,
                        "state": "active_allocated", "frames": []}]}
    t = 1700000000000000
    tr0 = [
        {"action": "segment_alloc", "addr": 2000000, "size": 2097152,
         "stream": 0, "time_us": t, "frames": []},
        {"action": "alloc", "addr": 2000000, "size": 1048576, "stream": 0,
         "time_us": t + 10, "frames": frames("big", "fwd")},
        {"action": "alloc", "addr": 1001024, "size": 400, "stream": 0,
         "time_us": t + 20, "frames": frames("mm", "fwd")},
        {"action": "alloc", "addr": 1001536, "size": 512, "stream": 0,
         "time_us": t + 25, "frames": frames("tmp")},
        {"action": "oom", "addr": 0, "size": 8589934592, "stream": 0,
         "time_us": t + 30, "device_free": 1024, "frames": frames("huge")},
        {"action": "free_requested", "addr": 2000000, "size": 1048576,
         "stream": 0, "time_us": t + 40, "frames": []},
        {"action": "free_completed", "addr": 2000000, "size": 1048576,
         "stream": 0, "time_us": t + 40, "frames": []},
        {"action": "free_requested", "addr": 1001536, "size": 512,
         "stream": 0, "time_us": t + 50, "frames": []},
    ]
    return {"segments": [seg0, seg1, seg2], "device_traces": [tr0, []],
            "allocator_settings": {"expandable_segments": False,
                                   "garbage_collection_threshold": 0.0},
            "external_annotations": []}


def nested():
    shared = {"k": [1, 2, (3, "x")]}
    return {"a": [shared, shared, {"b": None, "c": True, "d": False}],
            "e": -(2 ** 40), "f": 1.5, "g": "\u00e9\u4e2d\U0001f600",
            "i": [], "j": {}, "l": 2 ** 70,
            "m": -1, "n": 255, "o": 65535, "p": 2 ** 31, "q": ()}


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "dump":
        json.dump(plain(load(sys.argv[2])), sys.stdout, ensure_ascii=False,
                  separators=(",", ":"))
        sys.stdout.write("\n")
    elif len(sys.argv) >= 3 and sys.argv[1] == "expect":
        top = int(sys.argv[4]) if len(sys.argv) >= 5 and sys.argv[3] == "-k" else 10
        for r in expect(load(sys.argv[2]), top):
            print(json.dumps(r, sort_keys=True, separators=(",", ":")))
    elif len(sys.argv) >= 4 and sys.argv[1] == "write":
        kind, path = sys.argv[2], sys.argv[3]
        proto = int(sys.argv[4]) if len(sys.argv) >= 5 else 4
        value = {"small": small_snapshot, "nested": nested,
                 "bytes": lambda: {"h": b"\x00\xffab", "s": {1, 2}}}[kind]()
        with open(path, "wb") as f:
            pickle.dump(value, f, protocol=proto)
    else:
        sys.exit("usage: mem_snapshot.py dump|expect FILE [-k N] | "
                 "write small|nested|bytes FILE [PROTOCOL]")


if __name__ == "__main__":
    main()
