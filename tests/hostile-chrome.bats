#!/usr/bin/env bats
# chrome2ndjson on hostile or extreme shapes of valid input (issue 18,
# items 7, 11, 12, 14, 18): each input is generated here, each run has a
# time limit and, outside the sanitizer build, an address-space limit
# (`ulimit -v` does not apply under ASan, see tests/limits.bats).  Counts
# are checked with jq or python3, not with the program under test.

load helpers

setup() {
	T="$BATS_TEST_TMPDIR"
}

# gen SHAPE N > FILE: a Chrome trace of one of the shapes below.
gen() {
	"$PY" - "$1" "$2" <<'EOF'
import sys
shape, n = sys.argv[1], int(sys.argv[2])
ev = []
if shape == "nested-x":      # n identical spans, each inside the previous
    ev = ['{"ph":"X","name":"k","pid":0,"tid":7,"ts":5,"dur":1}'] * n
elif shape == "nested-be":   # n B, then n E: n nested spans
    ev = ['{"ph":"B","name":"k","pid":0,"tid":7,"ts":5}'] * n
    ev += ['{"ph":"E","pid":0,"tid":7,"ts":6}'] * n
elif shape == "pid-tid":     # every event on a timeline of its own
    ev = ['{"ph":"X","name":"a","cat":"c%d","pid":%d,"tid":%d,"ts":%d,"dur":1}'
          % (i, i, i, i) for i in range(n)]
elif shape == "kernels":     # n kernels at one ts, no correlation
    ev = ['{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":5,"dur":1}'] * n
elif shape == "names":       # n distinct names, in order
    ev = ['{"ph":"X","name":"n%d","pid":1,"tid":1,"ts":%d,"dur":1}' % (i, i)
          for i in range(n)]
elif shape == "ordered":     # n spans on 4 timelines, in output order
    ev = ['{"ph":"X","name":"s%d","cat":"cpu_op","pid":1,"tid":%d,"ts":%d,"dur":1,"args":{"i":%d}}'
          % (i % 7, i % 4, i, i) for i in range(n)]
    ev.append('{"ph":"M","name":"thread_name","pid":1,"tid":2,"args":{"name":"two"}}')
print('{"traceEvents":[' + ",\n".join(ev) + "]}")
EOF
}

@test "item 11: 25,000 nested identical spans: scopes stop at 64 labels, output linear" {
	gen nested-x 25000 > "$T/x.json"
	bounded 20 1000000 "chrome2ndjson -q '$T/x.json' > '$T/x.out'"
	assert_success
	# before: 628 MB of output and 1.6 GB of memory
	[ "$(stat -c %s "$T/x.out")" -lt 10000000 ] || fail "output $(stat -c %s "$T/x.out") bytes"
	run jq -s -c '[.[] | select(.type=="span")] | [length,
	    (map(.scope // "" | split("/") | length) | max),
	    (map(select(.scope == null)) | length)]' "$T/x.out"
	assert_output '[25000,64,1]'
	k64=$("$PY" -c 'print("/".join(["k"] * 64))')
	run bash -c "jq -r 'select(.type==\"span\") | .scope' '$T/x.out' | sort | uniq -c | sort -rn | head -1"
	assert_output "  24936 $k64"
	run jq -c '.warnings' <(tail -1 "$T/x.out")
	assert_output '["24936 labels nested deeper than 64 labels or 4096 bytes left out of scopes (the spans are kept)"]'
}

@test "item 11: 25,000 nested B/E pairs: the same bound" {
	gen nested-be 25000 > "$T/be.json"
	bounded 20 1000000 "chrome2ndjson -q '$T/be.json' > '$T/be.out'"
	assert_success
	[ "$(stat -c %s "$T/be.out")" -lt 10000000 ] || fail "output $(stat -c %s "$T/be.out") bytes"
	run jq -s -c '[.[] | select(.type=="span")] | [length,
	    (map(.scope // "" | split("/") | length) | max), (map(.dur_ns) | unique)]' "$T/be.out"
	assert_output '[25000,64,[1000]]'
}

@test "item 11: scopes stop at 4096 bytes; the replacing-label rule still holds" {
	a=$("$PY" -c 'print("a" * 1000)')
	ev='{"ph":"X","name":"forward","pid":1,"tid":1,"ts":0,"dur":100}'
	ev="$ev"',{"ph":"X","name":"block.0","pid":1,"tid":1,"ts":1,"dur":90}'
	ev="$ev"',{"ph":"X","name":"block.0/attention","pid":1,"tid":1,"ts":2,"dur":80}'
	for i in 1 2 3 4 5 6; do
		ev="$ev"',{"ph":"X","name":"'"$a$i"'","pid":1,"tid":1,"ts":'$((2 + i))',"dur":'$((80 - i))'}'
	done
	# a short label inside a left-out one is left out too
	ev="$ev"',{"ph":"X","name":"inner","pid":1,"tid":1,"ts":15,"dur":10}'
	ev="$ev"',{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":20,"dur":1}'
	printf '{"traceEvents":[%s]}\n' "$ev" > "$T/long.json"
	run chrome2ndjson "$T/long.json"
	assert_success
	printf '%s\n' "$output" | grep -v '^chrome2ndjson: ' > "$T/long.out"
	# forward/block.0/attention (25 bytes) and four labels of 1001
	# bytes (4033 with the slashes) fit in 4096; a fifth would not
	want=$("$PY" -c 'a="a"*1000; print("forward/block.0/attention/" + "/".join(a + str(i) for i in (1, 2, 3, 4)))')
	run jq -r 'select(.name=="aten::mm") | .scope' "$T/long.out"
	assert_output "$want"
	run jq -r 'select(.name=="block.0/attention") | .scope' "$T/long.out"
	assert_output "forward/block.0"
	run jq -c '.warnings' <(tail -1 "$T/long.out")
	assert_output '["3 labels nested deeper than 64 labels or 4096 bytes left out of scopes (the spans are kept)"]'
	run jq -r 'select(.type=="span") | .scope // "" | length' "$T/long.out"
	refute_output --regexp '^(4[1-9][0-9][0-9]|[5-9][0-9]{3}|[0-9]{5,})$'
}

@test "item 12: an ordered file is read once; what is written is what that read saw" {
	gen ordered 3000 > "$T/o.json"
	# one open of the input, however the conversion goes (before: two on
	# the ordered path, the second one trusting the file not to change);
	# LeakSanitizer cannot run under ptrace
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
	CHROME2NDJSON_BUDGET=10 CHROME2NDJSON_STATS=1 run strace -f -qq -e trace=open,openat \
	    -o "$T/trace" chrome2ndjson -o "$T/f.out" "$T/o.json"
	assert_success
	assert_output "chrome2ndjson: $T/o.json: streamed"
	run grep -c "\"$T/o.json\"" "$T/trace"
	assert_output 1
	# the same bytes as the buffered path, and the end record's sha256 is
	# the file's
	chrome2ndjson - < "$T/o.json" > "$T/s.out"
	cmp <(sed 1d "$T/f.out") <(sed 1d "$T/s.out") || fail "differs from buffered"
	run jq -r 'select(.type=="end") | .sha256' "$T/f.out"
	assert_output "$(sha256sum < "$T/o.json" | cut -d' ' -f1)"
	run jq -s -c '[.[] | select(.type=="span")] | [length, (map(.args.i) == [range(3000)])]' "$T/f.out"
	assert_output '[3000,true]'
}

@test "item 12: a pipe takes the ordered path too; the spool may be on disk; disorder takes the records back" {
	gen ordered 3000 > "$T/o.json"
	chrome2ndjson - < "$T/o.json" > "$T/s.out"
	cat "$T/o.json" | ND_SPOOL_MEM=4096 CHROME2NDJSON_BUDGET=7 CHROME2NDJSON_STATS=1 \
	    chrome2ndjson > "$T/p.out" 2> "$T/p.err"
	run cat "$T/p.err"
	assert_output "chrome2ndjson: <stdin>: streamed"
	cmp "$T/p.out" "$T/s.out" || fail "the pipe's stream differs"
	# a span out of order near the end: the spooled records come back
	# into memory, still one read (stdin cannot be read twice)
	sed 's/^{"ph":"M"/{"ph":"X","name":"late","pid":1,"tid":0,"ts":0,"dur":0.5},\n&/' \
	    "$T/o.json" > "$T/late.json"
	chrome2ndjson - < "$T/late.json" > "$T/ls.out"
	cat "$T/late.json" | ND_SPOOL_MEM=4096 CHROME2NDJSON_BUDGET=7 CHROME2NDJSON_STATS=1 \
	    chrome2ndjson > "$T/lp.out" 2> "$T/lp.err"
	run cat "$T/lp.err"
	assert_output "chrome2ndjson: <stdin>: rebuffered"
	cmp "$T/lp.out" "$T/ls.out" || fail "the rebuffered stream differs"
	run jq -c 'select(.name=="late") | [.ts_ns,.dur_ns]' "$T/lp.out"
	assert_output '[0,500]'
}

@test "item 12: an input error on the ordered path leaves nothing of that input on stdout" {
	gen ordered 3000 > "$T/o.json"
	head -c 150000 "$T/o.json" > "$T/cut.json"
	gen ordered 10 > "$T/small.json"
	chrome2ndjson "$T/small.json" > "$T/small.out"
	CHROME2NDJSON_BUDGET=10 run bash -c "chrome2ndjson '$T/small.json' '$T/cut.json' > '$T/out'"
	assert_failure 2
	assert_output --regexp "^chrome2ndjson: $T/cut.json: byte 1500[0-9]{2}: "
	# the first input whole (before: what the buffer had flushed),
	# nothing of the second
	cmp "$T/out" "$T/small.out" || fail "stdout holds more than the first source"
}

@test "item 14: 100,000 events each on a process and thread of its own, with as many categories" {
	gen pid-tid 100000 > "$T/p.json"
	# before: 21 s (a loop over every timeline per process, an insertion
	# sort of the categories)
	bounded 30 1000000 "chrome2ndjson -q '$T/p.json' > '$T/p.out'"
	assert_success
	run jq -s -c '[.[] | select(.type=="span")] | [length, (map(.pid) | unique | length),
	    (map([.pid,.tid,.ts_ns/1000,.cat]) | map(select(.[0]==.[1] and .[1]==.[2] and .[3]==("c" + (.[0]|tostring)))) | length)]' "$T/p.out"
	assert_output '[100000,100000,100000]'
	run bash -c "tail -1 '$T/p.out' | jq -c '.categories | [length, (keys == (keys | sort)), .c99999]'"
	assert_output '[100000,true,1]'
}

@test "item 14: 100,000 kernels at one ts without correlation" {
	gen kernels 100000 > "$T/k.json"
	# before: 6.6 s (each kernel looked at every record with its ts)
	bounded 20 1000000 "chrome2ndjson -q '$T/k.json' > '$T/k.out'"
	assert_success
	run jq -s -c '[.[] | select(.type=="span")] | [length, (map(.scope) | unique)]' "$T/k.out"
	assert_output '[100000,[null]]'
	# the launch flow is still found, before or after the kernel
	trace='{"traceEvents":['
	trace="$trace"'{"ph":"X","cat":"user_annotation","name":"fwd","pid":9,"tid":9,"ts":0,"dur":50},'
	trace="$trace"'{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":9,"tid":9,"ts":1,"dur":1,"args":{"correlation":5}},'
	for i in 1 2 3; do
		trace="$trace"'{"ph":"X","cat":"kernel","name":"k'$i'","pid":0,"tid":7,"ts":10,"dur":'$i'},'
	done
	trace="$trace"'{"ph":"f","cat":"ac2g","name":"ac2g","id":5,"pid":0,"tid":7,"ts":10,"bp":"e"}]}'
	printf '%s\n' "$trace" > "$T/f.json"
	run bash -c "chrome2ndjson '$T/f.json' | jq -c 'select(.cat==\"kernel\") | [.name,.scope]'"
	assert_output $'["k3","fwd"]\n["k2","fwd"]\n["k1","fwd"]'
}

@test "item 14: an event with 100,000 args and 100,000 other members" {
	"$PY" -c '
n = 100000
a = ",".join("\"a%d\":%d" % (i, i) for i in range(n))
x = ",".join("\"x%d\":%d" % (i, i) for i in range(n))
print("{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"w\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1,%s,\"args\":{%s,\"x5\":\"mine\"}}]}" % (x, a))' > "$T/w.json"
	bounded 20 1000000 "chrome2ndjson -q '$T/w.json' > '$T/w.out'"
	assert_success
	run jq -c 'select(.type=="span") | [(.args | length), .args.x5, .args.x6, .args.a99999]' "$T/w.out"
	assert_output '[200000,"mine",6,99999]'
}

@test "item 18: 200,000 distinct names stay within the documented memory" {
	[ -z "${ND_ASAN:-}" ] || { gen names 20000 > "$T/n.json"; chrome2ndjson -q "$T/n.json" > /dev/null; return 0; }
	gen names 200000 > "$T/n.json"
	# chrome2ndjson(1): at most 64 bytes an event, 500 a distinct name,
	# and 40 MiB (before: 441 MiB for a million names, against about 124
	# documented)
	/usr/bin/time -f %M -o "$T/rss" chrome2ndjson -q "$T/n.json" > "$T/n.out"
	rss=$(cat "$T/rss")
	[ "$rss" -lt $(( (40 << 10) + (64 + 500) * 200000 / 1024 )) ] || fail "peak RSS $rss KiB"
	run jq -s -c '[.[] | select(.type=="span") | .name] | [length, (unique | length)]' "$T/n.out"
	assert_output '[200000,200000]'
}

@test "item 18: numbers of 400+ characters: written as strings where the value is not needed" {
	big=$("$PY" -c 'print("7" * 500)')
	tiny="0.$("$PY" -c 'print("0" * 450)')9"
	printf '{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":2,"args":{"n":%s,"l":[%s.5e-3,1]}},{"ph":"X","name":"b","pid":1,"tid":1,"ts":%s,"dur":1},{"ph":"X","name":"c","pid":1,"tid":1,"ts":%s,"dur":1},{"ph":"X","name":"d","pid":%s,"tid":1,"ts":3,"dur":1}],"big":%s}\n' \
	    "$big" "-$big" "$tiny" "$big" "$big" "$big" > "$T/n.json"
	run chrome2ndjson "$T/n.json"
	assert_success
	printf '%s\n' "$output" | grep -v '^chrome2ndjson: ' > "$T/n.out"
	assert_line "chrome2ndjson: $T/n.json: 3 numbers longer than 400 characters (in args or the header) written as strings"
	"$ND_BIN/trace-check" -q "$T/n.out" || fail "trace-check refuses the stream"
	run jq -c 'select(.name=="a") | [(.args.n == ("7" * 500)), (.args.l[0] == ("-" + "7" * 500 + ".5e-3")), .args.l[1]]' "$T/n.out"
	assert_output '[true,true,1]'
	run jq -c 'select(.type=="meta") | .header.big == ("7" * 500)' "$T/n.out"
	assert_output true
	# ts: a long number that is exact (b: 0 ns) or beyond 2^62 ns (c)
	run jq -c 'select(.name=="b") | .ts_ns' "$T/n.out"
	assert_output 0
	run jq -c 'select(.type=="end") | [.spans, .skipped]' "$T/n.out"
	assert_output '[3,{"bad_ts":1}]'
	# a pid that is no integer is a name, like any other string pid
	run jq -c 'select(.name=="d") | [.pid, (.process == ("7" * 500))]' "$T/n.out"
	assert_output '[2,true]'
}

@test "item 7: a directory without traces: say so, before anything is written" {
	gen ordered 3 > "$T/a.json"
	mkdir -p "$T/run1"
	run bash -c "chrome2ndjson '$T/a.json' '$T/run1' > '$T/out'"
	assert_failure 2
	assert_output "chrome2ndjson: $T/run1: no *.json[.gz] trace files in it, nor in runs under it or under its plugins/profile"
	[ ! -s "$T/out" ] || fail "output written"
	run chrome2ndjson "$T/run1/"
	assert_failure 2
	assert_output "chrome2ndjson: $T/run1/: no *.json[.gz] trace files in it, nor in runs under it or under its plugins/profile"
}
