#!/usr/bin/env python3
"""A Chrome trace whose args.long_name values exercise chrome2ndjson's
value tokens (tests/chrome-vtok.bats): long strings repeated, escapes
(\\", \\/, \\u) and the same text decoded, short ones, non-strings,
duplicate keys, an escaped key, counters, and B/E pairs whose args are
merged.  Minified, one event a line.  usage: vtok_gen.py ordered|all"""
import sys
L = ['%fusion.{i} = bf16[8,128]{{1,0}} fusion(%p.{i}), metadata={{op_name=\\"jit(f)/dot\\" source_file=\\"a\\/b.py\\"}}',
     '%dot.{i} = f32[4] dot(%a, %b) caf\\u00e9 \\u2603 more text to be long',
     '%dot.{i} = f32[4] dot(%a, %b) caf\u00e9 \u2603 more text to be long']
ev = []
ordered = sys.argv[1] == 'ordered'
for i in range(600):
    ln = L[i % 3].format(i=i % 5)
    a = '{"long_name":"%s","flops":%d}' % (ln, i)
    if i % 7 == 3:
        a = '{"long_name":"short %d"}' % i
    if i % 11 == 5:
        a = '{"long_name":%d,"x":{"long_name":"%s"}}' % (i, ln)
    if i % 13 == 6:
        a = '{"long_name":"%s","x":1,"long_name":"%s tail"}' % (ln, ln)
    if i % 17 == 8:
        a = '{"long\\u005fname":"%s"}' % ln
    ev.append('{"ph":"X","name":"e%d","pid":1,"tid":%d,"ts":%d,"dur":1,"args":%s}' % (i, i % 3, i * 10, a))
    if i % 50 == 0:
        ev.append('{"ph":"C","name":"c%d","pid":1,"tid":9,"ts":%d,"args":{"long_name":"%s","v":%d}}' % (i, i * 10, ln, i))
if not ordered:
    for i in range(20):
        ev.append('{"ph":"B","name":"b%d","pid":2,"tid":1,"ts":%d,"args":{"long_name":"%s begin"}}' % (i, 100000 + i * 10, L[0].format(i=i)))
        ev.append('{"ph":"E","pid":2,"tid":1,"ts":%d,"args":{"long_name":"%s end","e":%d}}' % (100000 + i * 10 + 5, L[1].format(i=i), i))
print('{"traceEvents":[\n' + ',\n'.join(ev) + '\n]}')
