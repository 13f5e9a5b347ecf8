#!/usr/bin/python3
"""Every finding of trace-report --json names its evidence.

    findings_evidence.py DIR N

Reads DIR/0.json .. DIR/(N-1).json (reports) and DIR/i.name (what each
report is of).  Each finding must have evidence text and the structured
member that names what is behind it (trace-report(1), Findings): the top
communication op, the gaps and their top payload op (or the device ops
when there is no gap), the memory-op kinds and their top op, the op, the
rank, the slowest step, the gaps.  A report with device ops must have a
breakdown.  Prints the number of findings checked.  Python standard library
only.
"""
import json
import sys

NEED = {"comm_exposed": "top_op", "device_idle": "ops", "host_bound": "ops",
        "memory_ops": "kinds", "dominant_op": "op", "straggler": "rank",
        "step_variance": "slowest_step", "launch_gaps": "gaps"}


def main():
    n = 0
    for i in range(int(sys.argv[2])):
        d = json.load(open("%s/%d.json" % (sys.argv[1], i)))
        name = open("%s/%d.name" % (sys.argv[1], i)).read().strip()
        if d["ops"]["timelines"] == "device":
            assert d["breakdown"]["all_devices"]["dur_ns"] > 0, name
        for f in d["findings"]:
            ev = f["evidence"]
            assert ev["text"] and ev.get(NEED[f["rule"]]) is not None, \
                (name, f)
            if f["rule"] in ("device_idle", "host_bound") and ev["gaps"]:
                assert ev["top_payload"], (name, f)
            if f["rule"] == "memory_ops":
                assert ev["kinds"][0]["top_op"], (name, f)
            assert f["explains_ns"] >= 0 and f["explains_pct"] >= 0, \
                (name, f)
            n += 1
    print(n)


if __name__ == "__main__":
    main()
