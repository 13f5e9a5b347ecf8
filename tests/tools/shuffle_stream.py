#!/usr/bin/env python3
"""shuffle_stream.py [--reverse | --seed N] < stream > stream: the same
records in another order, keeping each source's meta record first and its
end record last (ndtrace(7)): the records between them are reversed, or
shuffled with a fixed seed.  For tests of the order policy."""
import random
import sys

mode = sys.argv[1] if len(sys.argv) > 1 else "--reverse"
rng = random.Random(int(sys.argv[2]) if mode == "--seed" else 0)
out = sys.stdout
body = []


def flush():
    if mode == "--reverse":
        body.reverse()
    else:
        rng.shuffle(body)
    out.writelines(body)
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
