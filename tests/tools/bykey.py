#!/usr/bin/env python3
"""Device ops of an ndtrace stream grouped by a key, for tests/cookbook.bats:
one JSON line per value, [value, count, sum of dur_ns], largest sum first
(ties by value), then ["(all)", count, sum].  A device op as in
trace-topk(1): a span of a /device: process off XPlane's annotation lines.
On the generated GPU profiles device ops do not nest, so the sum of
durations is also their exclusive time (the tests check total == self).

    bykey.py FILE KEY
"""
import collections
import json
import sys

ANNOTATION_LINES = {"Steps", "XLA Modules", "XLA TraceMe", "TensorFlow Ops",
                    "TensorFlow Name Scope", "Framework Ops",
                    "Framework Name Scope", "Source code", "Launch Stats"}
rows = collections.defaultdict(lambda: [0, 0])
for line in open(sys.argv[1]):
    r = json.loads(line)
    if (r.get("type") == "span" and (r.get("process") or "").startswith("/device:")
            and r.get("thread") not in ANNOTATION_LINES):
        row = rows[r.get(sys.argv[2])]
        row[0] += 1
        row[1] += r["dur_ns"]
for k, v in sorted(rows.items(), key=lambda kv: (-kv[1][1], str(kv[0]))):
    print(json.dumps([k] + v))
print(json.dumps(["(all)", sum(v[0] for v in rows.values()),
                  sum(v[1] for v in rows.values())]))
