#!/usr/bin/python3
"""Edit partial results and frame them again, as a hostile or careless
hand would: the trailer of each partial gets the record count and sha256
of its lines (nd_partial.h), so the framing checks out and only the checks
of the records themselves can refuse them.

  partial_edit.py [TYPE KEY VALUE]... < PARTIALS > PARTIALS

sets member KEY of every TYPE record to VALUE (JSON text, e.g. '5' or
'"x"'); other lines are kept byte for byte.  With no arguments it only
frames again (e.g. after lines were added or removed with sed).
"""
import hashlib
import json
import sys

args = sys.argv[1:]
if len(args) % 3 != 0:
    sys.exit(__doc__)
edits = [(args[i], args[i + 1], json.loads(args[i + 2]))
         for i in range(0, len(args), 3)]
out = sys.stdout.buffer
held = []
for line in sys.stdin.buffer:
    rec = json.loads(line)
    if rec.get("type") == "partial_end":
        rec["records"] = len(held) - 1
        rec["sha256"] = hashlib.sha256(b"".join(held)).hexdigest()
        out.write(b"".join(held))
        out.write(json.dumps(rec, separators=(",", ":")).encode() + b"\n")
        held = []
        continue
    for t, k, v in edits:
        if rec.get("type") == t:
            rec[k] = v
            line = json.dumps(rec, separators=(",", ":")).encode() + b"\n"
    held.append(line)
out.write(b"".join(held))
