#!/usr/bin/python3
"""Differential test of trace-context(1): random streams (context_gen.py),
every combination of a few options, output checked against the oracle
(context_check.py) and by trace-check.

  context_fuzz.py BIN_DIR FIRST_SEED LAST_SEED [--quick]

--quick tries four of the option sets (for the slow sanitizer build).
"""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import context_check  # noqa: E402
import context_gen  # noqa: E402

OPTS = [["-B", "3", "-A", "3"], ["-B", "0", "-A", "0"], ["-B", "1", "-A", "5"],
        ["-B", "5", "-A", "1", "--overlapping", "--lookback", "0"],
        ["-B", "0", "-A", "2", "--overlapping", "--lookback", "3"],
        ["-B", "2", "-A", "2", "--max", "2"],
        ["-B", "2", "-A", "0", "--max", "1", "--overlapping"],
        ["-B", "1", "-A", "1", "--max", "3", "--overlapping"],
        ["-B", "2", "-A", "2", "--overlapping"]]
PATS = [["copy.1"], ["--regex", "^(fusion|step)"], ["--key", "args.stream", "2"]]


def main():
    bindir, first, last = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    opts = [OPTS[i] for i in (0, 3, 6, 8)] if "--quick" in sys.argv[4:] else OPTS
    prog = os.path.join(bindir, "trace-context")
    check = os.path.join(bindir, "trace-check")
    runs = 0
    with tempfile.TemporaryDirectory() as tmp:
        inp = os.path.join(tmp, "in.ndjson")
        for seed in range(first, last + 1):
            with open(inp, "w") as f:
                f.write(context_gen.generate(seed))
            for o in opts:
                for p in PATS:
                    for table in ([], ["--table"]):
                        argv = o + p[:-1] + table + [p[-1], inp]
                        r = subprocess.run([prog] + argv, capture_output=True, text=True)
                        what = "seed %d: trace-context %s" % (seed, " ".join(argv))
                        if r.returncode not in (0, 1) or r.stderr:
                            sys.exit("%s: status %d, %s" % (what, r.returncode, r.stderr))
                        if r.stdout and not table:
                            c = subprocess.run([check], input=r.stdout, capture_output=True, text=True)
                            if c.returncode != 0:
                                sys.exit("%s: trace-check: %s" % (what, c.stderr))
                        errs, n = context_check.check(argv + ["-"], r.stdout)
                        if errs or (r.returncode == 0) != (n > 0):
                            sys.exit("%s:\n%s" % (what, "\n".join(errs[:3]) or "status"))
                        runs += 1
    print("ok: %d runs" % runs)


if __name__ == "__main__":
    main()
