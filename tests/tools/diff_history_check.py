#!/usr/bin/env python3
"""Check a trace-diff --history file: every line one JSON object of type
history with the keys trace-diff(1) documents; print the number of lines
and the set of labels seen.  Exit 1 on the first bad line."""
import json
import sys

KEYS = {"type", "time", "time_s", "label", "status", "fired", "metrics",
        "before", "after"}
n = 0
labels = set()
with open(sys.argv[1], "rb") as f:
    for i, raw in enumerate(f, 1):
        if not raw.endswith(b"\n"):
            sys.exit("line %d: no newline" % i)
        try:
            r = json.loads(raw)
        except ValueError as e:
            sys.exit("line %d: %s" % (i, e))
        if r.get("type") != "history" or set(r) != KEYS:
            sys.exit("line %d: keys %s" % (i, sorted(r)))
        if r["status"] not in ("pass", "warn", "fail"):
            sys.exit("line %d: status %r" % (i, r["status"]))
        n += 1
        labels.add(r["label"])
print(n, len(labels))
