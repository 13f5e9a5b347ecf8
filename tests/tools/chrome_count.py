#!/usr/bin/env python3
"""Independent checks for chrome2ndjson / ndjson2chrome (stdlib only).

  chrome_count.py count TRACE...         what each Chrome trace holds, as JSON:
      {"events", "spans", "instants", "counters", "flows", "metadata",
       "skipped", "phases"}; counted with json.load, matching B/E pairs per
      thread in time order as the Trace Event Format says.
  chrome_count.py selftime STREAM KEYAVG
      exclusive (self) time per span name from an ndtrace stream, compared
      with PyTorch's key_averages() table: the total within 0.1 %, and each
      operator with at least 1 % of the total within 2 % (or 2 us a call);
      prints each failure and exits 1 if there is any.
  chrome_count.py shuffle TRACE OUT SEED
      the same trace with its events in a random order and its metadata
      (ph M) moved to the end, written in object form.
"""
import gzip
import json
import random
import sys


def load(path):
    with open(path, 'rb') as f:
        data = f.read()
    if data[:2] == b'\x1f\x8b':
        data = gzip.decompress(data)
    doc = json.loads(data)
    if isinstance(doc, list):
        return doc, {}
    return doc['traceEvents'], {k: v for k, v in doc.items() if k != 'traceEvents'}


def key(v):
    """pid/tid as chrome2ndjson groups them: numeric strings are numbers."""
    if isinstance(v, str):
        s = v[1:] if v.startswith('-') else v
        if s.isdigit() and (s == '0' or not s.startswith('0')) and v != '-0':
            return int(v)
        return v
    if v is None:
        return ''
    return v


def count(path):
    events, _ = load(path)
    c = dict(events=len(events), spans=0, instants=0, counters=0, flows=0,
             metadata=0, skipped=0)
    phases = {}
    pairs = {}    # (pid, tid) or async key -> list of (ts, seq, is_begin)
    for i, e in enumerate(events):
        if not isinstance(e, dict) or not isinstance(e.get('ph'), str):
            c['skipped'] += 1
            continue
        ph = e['ph']
        phases[ph] = phases.get(ph, 0) + 1
        if ph == 'M':
            c['metadata'] += 1
            continue
        if not isinstance(e.get('ts'), (int, float)):
            c['skipped'] += 1
            continue
        if ph == 'X':
            if isinstance(e.get('dur'), (int, float)) and e['dur'] >= 0:
                c['spans'] += 1
            else:
                c['skipped'] += 1
        elif ph in ('i', 'I', 'P'):
            c['instants'] += 1
        elif ph in ('n', 'T', 'p'):
            c['instants'] += 1
        elif ph == 'C':
            c['counters'] += 1
        elif ph in ('s', 't', 'f'):
            if 'id' in e:
                c['flows'] += 1
            else:
                c['skipped'] += 1
        elif ph in ('B', 'E'):
            k = (key(e.get('pid')), key(e.get('tid')))
            pairs.setdefault(k, []).append((e['ts'], i, ph == 'B'))
        elif ph in ('b', 'e', 'S', 'F'):
            ident = e.get('id', json.dumps(e.get('id2'), sort_keys=True))
            k = ('async', key(e.get('pid')), e.get('cat'), str(ident))
            pairs.setdefault(k, []).append((e['ts'], i, ph in ('b', 'S')))
        else:
            c['skipped'] += 1
    for lst in pairs.values():
        lst.sort(key=lambda x: (x[0], x[1]))
        depth = 0
        for _, _, begin in lst:
            if begin:
                depth += 1
            elif depth > 0:
                depth -= 1
                c['spans'] += 1
            else:
                c['skipped'] += 1
        c['skipped'] += depth
    c['phases'] = phases
    return c


# Collectives run on their own threads (gloo, nccl): PyTorch marks them
# asynchronous and reports no self CPU time for them, so they are left out
# of the comparison.
ASYNC_PREFIXES = ('gloo:', 'nccl:')


def self_times(stream):
    """Self time per span name: duration minus the union of its children's
    time, a child clipped to its parent (ndtrace(7)); per timeline."""
    spans = {}
    with open(stream) as f:
        for line in f:
            r = json.loads(line)
            if r.get('type') == 'span':
                spans.setdefault((r['pid'], r['tid']), []).append(
                    (r['ts_ns'], -r['dur_ns'], r['name']))
    self_ns = {}

    def close(fr):
        self_ns[fr[1]] = self_ns.get(fr[1], 0) + (fr[0] - fr[4]) - fr[2]

    for lst in spans.values():
        lst.sort()
        stack = []   # [end, name, covered, last covered end, start]
        for ts, ndur, name in lst:
            while stack and stack[-1][0] <= ts:
                close(stack.pop())
            if stack:
                p = stack[-1]
                end = min(ts - ndur, p[0])
                start = max(ts, p[3])
                if end > start:
                    p[2] += end - start
                    p[3] = end
            stack.append([ts - ndur, name, 0, ts, ts])
        while stack:
            close(stack.pop())
    return self_ns


def selftime(stream, keyavg, share=0.01, rel=0.02, total_rel=0.001):
    """Every operator holding at least `share` of the total self time must
    agree within `rel` (or 2 us per call), and the total within
    `total_rel`.  Returns the number of failures (printed)."""
    got_ns = self_times(stream)
    with open(keyavg) as f:
        table = json.load(f)
    want_total = sum(op['self_cpu_time_total_us'] for op in table['ops'])
    got_total = sum(v for k, v in got_ns.items()
                    if not k.startswith(ASYNC_PREFIXES)) / 1000.0
    bad = 0
    if abs(got_total - want_total) > total_rel * want_total:
        print('total self time: torch %.0f us, stream %.3f us' %
              (want_total, got_total))
        bad += 1
    for op in table['ops']:
        name, want = op['name'], op['self_cpu_time_total_us']
        if name.startswith(ASYNC_PREFIXES) or want < share * want_total:
            continue
        if name == 'ProfilerStep*':
            got = sum(v for k, v in got_ns.items()
                      if k.startswith('ProfilerStep#')) / 1000.0
        else:
            got = got_ns.get(name, 0) / 1000.0
        if abs(got - want) > max(rel * want, 2.0 * op['count']):
            print('%s: torch %.0f us, stream %.3f us (count %d)' %
                  (name, want, got, op['count']))
            bad += 1
    return bad


def shuffle(path, out, seed):
    events, top = load(path)
    meta = [e for e in events if isinstance(e, dict) and e.get('ph') == 'M']
    rest = [e for e in events if not (isinstance(e, dict) and e.get('ph') == 'M')]
    random.Random(seed).shuffle(rest)
    doc = dict(top)
    doc['traceEvents'] = rest + meta
    with open(out, 'w') as f:
        json.dump(doc, f)


def main(argv):
    if len(argv) >= 3 and argv[1] == 'count':
        for path in argv[2:]:
            print(json.dumps(count(path), sort_keys=True))
        return 0
    if len(argv) == 4 and argv[1] == 'selftime':
        return 1 if selftime(argv[2], argv[3]) else 0
    if len(argv) == 5 and argv[1] == 'shuffle':
        shuffle(argv[2], argv[3], int(argv[4]))
        return 0
    sys.stderr.write(__doc__)
    return 2


if __name__ == '__main__':
    sys.exit(main(sys.argv))
