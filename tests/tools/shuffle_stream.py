#!/usr/bin/env python3
"""shuffle_stream.py [--reverse | --seed N] < stream > stream: the same
records in another order, keeping each source's meta record first and its
end record last (ndtrace(7)): the records between them are reversed, or
shuffled with a fixed seed.  Records of one timeline with the same start
and duration keep their order among themselves: the stream order is the
only thing that says which of two such spans is the outer one
(ndtrace(7), ORDER), so a shuffle that swaps them is another input.  For
tests of the order policy."""
import json
import random
import sys

mode = sys.argv[1] if len(sys.argv) > 1 else "--reverse"
rng = random.Random(int(sys.argv[2]) if mode == "--seed" else 0)
out = sys.stdout
body = []


def tie_key(line):
    try:
        r = json.loads(line)
    except ValueError:
        return None
    if not isinstance(r, dict) or "ts_ns" not in r:
        return None
    return json.dumps([r.get("pid"), r.get("tid"), r.get("device"),
                       r.get("ts_ns"), r.get("dur_ns")])


def flush():
    order = list(range(len(body)))
    if mode == "--reverse":
        order.reverse()
    else:
        rng.shuffle(order)
    # the places a group of ties takes get its records in stream order
    ties = {}
    for i in range(len(body)):
        k = tie_key(body[i])
        if k is not None:
            ties.setdefault(k, []).append(i)
    nth = {k: 0 for k in ties}
    for j, i in enumerate(order):
        k = tie_key(body[i])
        if k is not None and len(ties[k]) > 1:
            order[j] = ties[k][nth[k]]
            nth[k] += 1
    out.writelines(body[i] for i in order)
    body.clear()


for line in sys.stdin:
    if line.startswith('{"type":"meta"'):
        flush()
        out.write(line)
    elif line.startswith('{"type":"end"'):
        flush()
        out.write(line)
    else:
        body.append(line)
flush()
