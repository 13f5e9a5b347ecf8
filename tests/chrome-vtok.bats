#!/usr/bin/env bats
# chrome2ndjson keeps args.long_name (XLA's HLO text, most of the bytes of
# a JAX trace) out of the spool as a value token into a table of the texts
# as written (issue 21: the spool file's writes were most of the system
# time).  The args written must be the bytes read, on every path: buffered
# in memory, spooled to the file, streamed (the ordered path) and
# rebuffered, and through the merge of B/E args.

load helpers

setup_file() {
	F="$BATS_FILE_TMPDIR"
	python3 "$BATS_TEST_DIRNAME/tools/vtok_gen.py" ordered > "$F/o.json"
	python3 "$BATS_TEST_DIRNAME/tools/vtok_gen.py" all > "$F/a.json"
	export F
}

setup() {
	T="$BATS_TEST_TMPDIR"
}

# The args of every record against the input's text, by python3: spans
# and counters carry their args as written (minified input: the same
# bytes); a B/E pair carries B's args with E's other members after them.
check_args() {
	python3 - "$1" "$2" <<'EOF'
import json, sys
src = {}
ends = []
for line in open(sys.argv[1]):
    line = line.rstrip().rstrip(',')
    if '"ph"' not in line:
        continue
    raw = line[line.index('"args":') + 7:-1]
    e = json.loads(line)
    if e['ph'] == 'E':
        ends.append(raw)
    else:
        src[e['name']] = raw
n = nb = 0
for line in open(sys.argv[2]):
    r = json.loads(line)
    name = r.get('name')
    if name not in src:
        continue
    key = '"values":' if r['type'] == 'counter' else '"args":'
    got = line[line.index(key) + len(key):]
    if name.startswith('b'):
        b, e = src[name], ends[int(name[1:])]
        extra = {k: v for k, v in json.loads(e).items() if k not in json.loads(b)}
        want = b[:-1] + ''.join(',%s:%s' % (json.dumps(k), json.dumps(v)) for k, v in extra.items()) + '}'
        nb += 1
    else:
        want = src[name]
    got = got[:len(want)]
    if got != want:
        sys.exit('%s: args %s, want %s' % (name, got, want))
    n += 1
print(n, nb)
EOF
}

@test "long_name value tokens: args written as read, buffered, spooled to the file, streamed and rebuffered" {
	for f in o a; do
		CHROME2NDJSON_STATS=1 chrome2ndjson "$F/$f.json" > "$T/$f.mem" 2> "$T/$f.err"
		ND_SPOOL_MEM=0 chrome2ndjson "$F/$f.json" > "$T/$f.file"
		CHROME2NDJSON_BUDGET=10 CHROME2NDJSON_STATS=1 chrome2ndjson \
		    "$F/$f.json" > "$T/$f.small" 2>> "$T/$f.err"
		cmp "$T/$f.mem" "$T/$f.file"
		cmp "$T/$f.mem" "$T/$f.small"
	done
	# the paths taken
	assert_equal "$(cat "$T/o.err" "$T/a.err" | sed 's/.*: //' | tr '\n' ' ')" \
	    "buffered streamed buffered rebuffered "
	run check_args "$F/o.json" "$T/o.mem"
	assert_success
	assert_output "612 0"
	run check_args "$F/a.json" "$T/a.mem"
	assert_success
	assert_output "632 20"
}
