#!/usr/bin/env bats
# Event strings interned once (nd_event_sid) and the tables keyed by their
# ids (nd_idmemo); numbers of args read without strtod (nd_json_double).
# The figures are checked against python3 reading the same stream.

load helpers

setup_file() {
	export T="$BATS_FILE_TMPDIR"
	# 3,000 spans on two device lanes and a host lane: names that are
	# also scopes or families, absent fields, flops and bytes written as
	# integers, with ".0", as exponents; keys with an escape; a key twice.
	/usr/bin/python3 - > "$T/a.ndjson" <<'PY'
import json, random
random.seed(7)
names = ["fusion.1", "fusion.2", "dot.1", "train_step/loss", "all-reduce.7", "compute"]
scopes = [None, "train_step/loss", "train_step/optimizer", "fusion.1"]
fams = [None, "fusion", "matmul", "compute"]
clss = [None, "compute", "memory"]
def num(v, k):
    return [str(v), "%d.0" % v, "%de0" % v, "%.3fe3" % (v / 1000.0)][k]
print('{"type":"meta","schema":"ndtrace/1","source":"t.pb","format":"xplane","origin_ns":0,"host":"h","rank":0,"producer":"gen"}')
lanes = [(1, "/device:TPU:0"), (2, "/device:TPU:1"), (9, "python")]
ts = {p: 0 for p, _ in lanes}
for i in range(3000):
    pid, proc = random.choice(lanes)
    dur = random.randint(100, 5000)
    rec = [("type", '"span"'), ("ts_ns", str(ts[pid])), ("dur_ns", str(dur)),
           ("name", json.dumps(random.choice(names))), ("pid", str(pid)),
           ("tid", "1"), ("process", json.dumps(proc)), ("thread", '"XLA Ops"')]
    ts[pid] += dur + 10
    for key, pool in (("family", fams), ("class", clss), ("scope", scopes)):
        v = random.choice(pool)
        if v is not None:
            rec.append((key, json.dumps(v)))
    r = random.random()
    f = random.randint(1, 10**6) * 1000
    b = random.randint(1, 10**5) * 1000
    if r < 0.6:
        args = '{"flops":%s,"bytes_accessed":%s,"long_name":"x"}' % (
            num(f, random.randint(0, 3)), num(b, random.randint(0, 3)))
    elif r < 0.7:
        args = '{"fl\\u006fps":%d,"bytes_\\u0061ccessed":%d}' % (f, b)
    elif r < 0.8:
        args = '{"flops":%d,"bytes_accessed":%d,"flops":1}' % (f, b)
    elif r < 0.9:
        args = '{"model_flops":%d}' % f
    else:
        args = None
    if args:
        rec.append(("args", args))
    print("{" + ",".join('"%s":%s' % kv for kv in rec) + "}")
PY
	trace-report --json -k 0 "$T/a.ndjson" > "$T/a.json"
}

# The figures of the device spans as python3 reads them: a key given
# twice counts once, its first value.
reference() {
	/usr/bin/python3 - "$T/a.ndjson" <<'PY'
import json, sys
def first(pairs):
    d = {}
    for k, v in pairs:
        d.setdefault(k, v)
    return d
reg, fam, roof = {}, {}, {}
tot = [0, 0, 0]
for line in open(sys.argv[1]):
    e = json.loads(line, object_pairs_hook=first)
    if e["type"] != "span" or e["pid"] == 9:
        continue
    k = (e["name"], e.get("scope"))
    reg[k] = [reg.get(k, [0, 0])[0] + 1, reg.get(k, [0, 0])[1] + e["dur_ns"]]
    f = e.get("family", "(none)")
    fam[f] = [fam.get(f, [0, 0])[0] + 1, fam.get(f, [0, 0])[1] + e["dur_ns"]]
    a = e.get("args", {})
    fl = a.get("flops", a.get("model_flops"))
    r = roof.setdefault(e["name"], [0, 0, 0])
    r[0] += 1
    if fl is not None:
        r[1] += 1
        r[2] += int(fl)
        tot[0] += int(fl)
        tot[1] += int(a.get("bytes_accessed", 0))
        tot[2] += 1
for k in sorted(reg, key=lambda k: (k[0], k[1] or "")):
    print("region", k[0], k[1], *reg[k])
for k in sorted(fam):
    print("family", k, *fam[k])
for k in sorted(roof):
    print("roof", k, *roof[k])
print("roof-total", *tot)
PY
}

@test "trace-report: groups of names, scopes and families that share strings, as python3 counts them" {
	reference > "$T/want"
	jq -r '(.ops.op_regions | sort_by(.name, .region // "")[] |
	    "region \(.name) \(.region // "None") \(.count) \(.total_ns)"),
	    (.ops.families | sort_by(.family)[] |
	    "family \(.family) \(.count) \(.total_ns)"),
	    (.ops.roofline.top | sort_by(.name)[] |
	    "roof \(.name) \(.count) \(.flops_count) \(.flops)"),
	    (.ops.roofline | "roof-total \(.flops) \(.bytes) \(.flops_spans)")' \
	    "$T/a.json" > "$T/got"
	run diff "$T/want" "$T/got"
	assert_success
	# every group is there: 6 names x 4 scopes, 4 families, 6 names
	run grep -c '^region ' "$T/got"
	assert_output 24
}

@test "trace-report: flops under a key with an escape count (fl\\u006fps is flops)" {
	# before: a search for the text flops" passed these spans over
	{ head -1 "$T/a.ndjson"; grep -v '"pid":9' "$T/a.ndjson" |
	    grep -F 'fl\u006fps'; } > "$T/esc.ndjson"
	want=$(/usr/bin/python3 -c 'import json, sys
n = s = 0
for l in open(sys.argv[1]):
    e = json.loads(l)
    if e["type"] == "span":
        n += 1
        s += e["args"]["flops"]
print(n, s)' "$T/esc.ndjson")
	runp "trace-report --json '$T/esc.ndjson' |
	    jq -r '.ops.roofline | \"\\(.flops_spans) \\(.flops)\"'"
	assert_success
	assert_output "$want"
	[ "${want% *}" -gt 200 ]
}

@test "nd_json_double: the same double as strtod, bit for bit" {
	run nd-unit jdouble 300000 0 -0 -0.0e5 1e22 1e23 1e-22 0.1 \
	    9007199254740991 9007199254740992 9007199254740993 \
	    18446744073709551615 123456789012345678901 00000000000000000001 \
	    4.9e-324 1.7976931348623157e308 46143734848 170123027
	assert_success
	assert_output "n=300017 bad=0"
}

@test "nd_idmemo: one value per tuple of ids, as interning the tuples' bytes gives" {
	for k in 1 2 3 5 8; do
		run nd-unit idmemo 100000 $k
		assert_success
		assert_output --regexp "^n=100000 distinct=[0-9]+ hits=[0-9]+ bad=0$"
	done
}
