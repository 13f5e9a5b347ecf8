#!/usr/bin/env python3
"""file_layers.py DIR HEADER: check that the C files of DIR call one
another in the layers HEADER lists.

HEADER's comment names the files in order (lines " *   name.c  what");
a listed file may call (use a function defined without `static` in) only
files listed above it.  Files not listed are the bottom layer: they may
call no listed file and include no header of one (nd_report*.h).  Prints
each breach as "A -> B fn" and exits 1 when there is one, else prints
"ok N files" (the checker of lib/report/nd_report_int.h)."""
import os
import re
import sys


def strip(s):
    s = re.sub(r'/\*.*?\*/', ' ', s, flags=re.S)
    return re.sub(r'"(\\.|[^"\\])*"', '""', s)


def main():
    d, header = sys.argv[1], sys.argv[2]
    order = re.findall(r'^ \*   (nd_\w+\.c)\b', open(header).read(), re.M)
    files = sorted(f for f in os.listdir(d) if f.endswith('.c'))
    src = {f: strip(open(os.path.join(d, f)).read()) for f in files}
    defs = {}
    for f, s in src.items():
        for m in re.finditer(r'^(?!static)[a-z][^\n;]*\n(nd_\w+)\(', s,
                             re.M):
            defs[m.group(1)] = f
    bad = ['%s is not in the layers' % f for f in files
           if f.startswith('nd_report') and f not in order]
    for f, s in src.items():
        if f not in order and re.search(r'#include "nd_report', s):
            bad.append('%s includes a header of the report' % f)
        for fn, g in sorted(defs.items()):
            if g == f or not re.search(r'\b%s\b' % fn, s):
                continue
            if g not in order:
                continue        # the bottom layer: anyone may call it
            if f not in order or order.index(g) > order.index(f):
                bad.append('%s -> %s %s' % (f, g, fn))
    for b in bad:
        print(b)
    if bad:
        return 1
    print('ok %d files' % len(files))
    return 0


if __name__ == '__main__':
    sys.exit(main())
