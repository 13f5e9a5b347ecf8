#!/usr/bin/env python3
"""Compare trace-topk's exclusive time per op with PyTorch's key_averages().

usage: torch_oracle.py TRACE.pt.trace.json[.gz] KEY_AVERAGES.json TOPK.ndjson
                       clip|reparent

TOPK.ndjson is `trace-topk --timelines all --by name -k 0 [--overrun RULE]`
run on chrome2ndjson's stream of TRACE.  Exits 0 and prints a one-line
summary when the agreement is as stated below, else 1 with the differences.

key_averages() groups ProfilerStep#N as "ProfilerStep*" and reports self
time 0 for async ops (gloo collectives run on other threads; PyTorch marks
them async); their total time must still agree.

reparent: PyTorch's own nesting rule, so every op must agree exactly (count,
total and self time, in whole microseconds).

clip (ndtrace's rule): counts and totals agree exactly; self time agrees
exactly for every op that is not "involved" in an overrun, i.e. that is
neither the span an overrunning child started in, nor an ancestor that
PyTorch hands the child (and its later siblings) to.  For involved ops the
two rules attribute the overlap differently; the script prints the sum of
their differences, which must equal exactly what PyTorch counts twice: the
sum of the durations of its root spans (spans it gives no parent) minus the
length of the union of busy time, per timeline.  (ndtrace's exclusive times
add up to that union.)  Only the standard library is used.
"""
import collections
import gzip
import json
import sys


def load(path):
    op = gzip.open if path.endswith('.gz') else open
    with op(path, 'rt') as f:
        return json.load(f)


def group(name):
    return 'ProfilerStep*' if name.startswith('ProfilerStep#') else name


def main():
    trace, ka_path, topk_path, rule = sys.argv[1:5]
    events = load(trace)
    if isinstance(events, dict):
        events = events['traceEvents']
    ka = {o['name']: o for o in load(ka_path)['ops']}
    ours = {}
    our_overrun = 0
    with open(topk_path) as f:
        for line in f:
            r = json.loads(line)
            if r.get('type') == 'top' and not r.get('other'):
                n = group(r.get('name', ''))
                a = ours.setdefault(n, [0, 0, 0])
                a[0] += r['count']
                a[1] += r['total_ns']
                a[2] += r['self_ns']
                our_overrun += r['overrun']
    # PyTorch's nesting on the same integers (the oracle's own rule), to
    # find the ops involved in an overrun.
    involved = set()
    tl = collections.defaultdict(list)
    for e in events:
        if e.get('ph') == 'X':
            tl[(e['pid'], e['tid'])].append(e)
    double = 0
    clip_overrun = 0
    for evs in tl.values():
        # ndtrace's rule: the parent is the innermost open span
        open_ends = []
        for e in sorted(evs, key=lambda e: (e['ts'], -e['dur'])):
            while open_ends and e['ts'] >= open_ends[-1]:
                open_ends.pop()
            if open_ends and e['ts'] + e['dur'] > open_ends[-1]:
                clip_overrun += 1
            open_ends.append(e['ts'] + e['dur'])
        evs.sort(key=lambda e: (e['ts'], -e['dur']))
        stack = []
        lo = hi = None
        for e in evs:
            if lo is None or e['ts'] > hi:
                if lo is not None:
                    double -= hi - lo
                lo, hi = e['ts'], e['ts'] + e['dur']
            else:
                hi = max(hi, e['ts'] + e['dur'])
            end = e['ts'] + e['dur']
            over = False
            while stack:
                top = stack[-1]
                tend = top['ts'] + top['dur']
                if e['ts'] >= tend:
                    stack.pop()
                elif end > tend:
                    over = True
                    involved.add(group(top['name']))
                    stack.pop()
                else:
                    break
            if over and stack:
                involved.add(group(stack[-1]['name']))
            if not stack:
                double += e['dur']
            stack.append(e)
        if lo is not None:
            double -= hi - lo
    bad = []
    exact = 0
    diff_involved = 0
    worst = (0, '')
    for name, o in sorted(ka.items()):
        a = ours.get(name)
        if a is None:
            bad.append('%s: missing from trace-topk' % name)
            continue
        cnt, tot, slf = a[0], a[1] // 1000, a[2] // 1000
        if a[1] % 1000 or a[2] % 1000:
            bad.append('%s: not whole microseconds' % name)
        if cnt != o['count']:
            bad.append('%s: count %d, key_averages %d' % (name, cnt, o['count']))
        if tot != o['cpu_time_total_us']:
            bad.append('%s: total %d us, key_averages %d' % (name, tot, o['cpu_time_total_us']))
        want = o['self_cpu_time_total_us']
        if name.startswith('gloo:') and want == 0:
            continue            # async op: PyTorch reports no self time
        if rule == 'clip' and name in involved:
            diff_involved += slf - want
            worst = max(worst, (abs(slf - want), name))
            continue
        if slf != want:
            bad.append('%s: self %d us, key_averages %d' % (name, slf, want))
        else:
            exact += 1
    extra = set(ours) - set(ka)
    if extra:
        bad.append('ops not in key_averages: %s' % sorted(extra)[:5])
    if rule == 'clip' and our_overrun != clip_overrun:
        bad.append('overrun %d, expected %d' % (our_overrun, clip_overrun))
    if rule == 'clip' and diff_involved != -double:
        bad.append('involved ops differ by %+d us in sum, PyTorch counts '
                   '%d us twice' % (diff_involved, double))
    if bad:
        print('\n'.join(bad))
        return 1
    if rule == 'reparent':
        print('reparent: %d ops exact (count, total, self)' % exact)
    else:
        print('clip: %d ops exact; %d around the %d overruns differ by up to '
              '%d us (%s), in sum by %+d us = -(PyTorch double count %d us)'
              % (exact, len(involved & set(ka)), our_overrun, worst[0],
                 worst[1], diff_involved, double))
    return 0


sys.exit(main())
