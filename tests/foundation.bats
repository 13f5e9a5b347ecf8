#!/usr/bin/env bats
# lib/ core, module by module, through tests/tools/nd-unit.c.

load helpers
bats_require_minimum_version 1.5.0

setup() {
	T="$BATS_TEST_TMPDIR"
}

@test "nd_in: plain and gzip input give the same bytes; gzip is sniffed, not named" {
	printf 'hello\nworld\n' > "$T/a.txt"
	gzip -c "$T/a.txt" > "$T/a.weird-name"
	run nd-unit cat "$T/a.weird-name"
	assert_success
	assert_output $'hello\nworld'
	run nd-unit offset "$T/a.weird-name"
	assert_output "12 gzip"
	run nd-unit offset "$T/a.txt"
	assert_output "12 plain"
}

@test "nd_in: concatenated gzip members are read as one stream" {
	printf 'one\n' | gzip -c > "$T/m.gz"
	printf 'two\n' | gzip -c >> "$T/m.gz"
	run nd-unit cat "$T/m.gz"
	assert_output $'one\ntwo'
}

@test "nd_in: stdin via -, gzip sniffed on a pipe" {
	run bash -c "printf 'x\n' | gzip -c | nd-unit cat -"
	assert_output "x"
}

@test "nd_in: sha256 of the stored bytes equals sha256sum" {
	head -c 300000 /dev/urandom > "$T/r.bin"
	gzip -c "$T/r.bin" > "$T/r.gz"
	for f in "$T/r.bin" "$T/r.gz" /dev/null; do
		want=$(sha256sum < "$f" | cut -d' ' -f1)
		run nd-unit sha256 "$f"
		assert_output "$want"
	done
}

@test "nd_in: truncated gzip is an error naming the file and compressed offset" {
	seq 1 100000 | gzip -c > "$T/t.gz"
	size=$(stat -c %s "$T/t.gz")
	head -c $((size / 2)) "$T/t.gz" > "$T/half.gz"
	run bash -c "nd-unit cat '$T/half.gz' > /dev/null"
	assert_failure 2
	assert_line --index 0 --regexp "^nd-unit: $T/half.gz: truncated gzip data \(input ends at compressed byte $((size / 2))\)$"
}

@test "nd_in: corrupt gzip is an error, missing file is an error" {
	printf '\037\213\010\000garbagegarbagegarbage' > "$T/bad.gz"
	run nd-unit cat "$T/bad.gz"
	assert_failure 2
	assert_output --regexp "^nd-unit: $T/bad.gz: (corrupt gzip data near compressed byte [0-9]+: .*|truncated gzip data .*)$"
	run nd-unit cat "$T/nope"
	assert_failure 2
	assert_output "nd-unit: $T/nope: No such file or directory"
}

@test "nd_lines: line numbers, lengths, CRLF and a missing final newline" {
	printf 'ab\r\n\ncde' > "$T/l.txt"
	run nd-unit lines "$T/l.txt"
	assert_output $'1 2 0\n2 0 0\n3 3 1'
}

@test "nd_lines: a line over the limit is an error naming the line" {
	printf 'short\n%s\n' "$(head -c 5000 /dev/zero | tr '\0' x)" > "$T/long.txt"
	run nd-unit lines "$T/long.txt" 1000
	assert_failure 2
	assert_output --partial "nd-unit: $T/long.txt:2: line longer than 1000 bytes"
}

@test "nd_lines: lines spanning many read blocks are intact" {
	$PY -c 'import sys
for i in range(3): sys.stdout.write("x"*(3_000_000+i)+"\n")' > "$T/big.txt"
	run nd-unit lines "$T/big.txt"
	assert_output $'1 3000000 0\n2 3000001 0\n3 3000002 0'
}

@test "nd_json writer: escapes control characters, quotes, backslash; replaces invalid UTF-8" {
	run bash -c "printf 'a\"b\\\\c\\n\\t\\001\\x7f' | nd-unit escape"
	assert_output '"a\"b\\c\n\t\u0001'$'\x7f''"'
	# invalid UTF-8: lone continuation byte, truncated sequence, overlong
	run bash -c "printf 'x\\x80y\\xe2\\x82z\\xc0\\xafé€😀' | nd-unit escape"
	# one U+FFFD per byte that is not part of a valid sequence
	assert_output '"x�y��z��é€😀"'
	# what we emit is valid JSON that python decodes
	run bash -c "printf 'q\\x80\\x00\\x1f' | nd-unit escape | $PY -c 'import json,sys; print(ascii(json.loads(sys.stdin.read())))'"
	assert_output "'q\\ufffd\\x00\\x1f'"
}

@test "nd_json writer: doubles shortest round-trip, integers exact, NaN null" {
	run nd-unit double 0.1 1e300 -2.5 3 1e-7 nan inf 9007199254740993
	assert_output $'0.1\n1e+300\n-2.5\n3\n1e-07\nnull\nnull\n9007199254740992'
	# printed numbers read back to the same doubles in python
	run $PY -c 'print(all(float(a) == float(b) for a, b in [("0.1", "0.1"), ("1e-07", "1e-7"), ("1e+300", "1e300")]))'
	assert_output True
}

@test "nd_json_fixed: microsecond decimals to exact nanoseconds" {
	run nd-unit fixed 3 1695835542481129.123 1.5 0.0004 0.0005 12 -3.25 1e3 2.5e-3 1.2.3 abc 15.7e-4 0.00049999 1695835542481129.1234 0
	assert_output $'1695835542481129123\n1500\n0\n1\n12000\n-3250\n1000000\n3\ninvalid\ninvalid\n2\n0\n1695835542481129123\n0'
}

@test "nd_cli: durations with unit suffixes" {
	# a bare number is not a duration (issue 18: `--min 10`), except 0
	run nd-unit duration 500ns 10us 1.5ms 2s 7 0.5us 1.0005us 3h -1ms "" 1e3us ms 0
	assert_output $'500\n10000\n1500000\n2000000000\ninvalid\n500\n1001\ninvalid\ninvalid\ninvalid\ninvalid\ninvalid\n0'
}

@test "natural name order (nd_name_natcmp): digit runs by value, the rest and ties by bytes" {
	names=$'GPU:10\nGPU:2\nGPU:02\nGPU:1\nTPU:0\nGPU\nGPU:2a\ncpu\na1\nab\nGPU:0010\nx9y10\nx9y9\nx10y1'
	run nd-unit natsort <<<"$names"
	assert_success
	# independent: python, by tokens (digit runs as numbers), then bytes
	exp=$(python3 -c '
import functools, re, sys
def cmp(a, b):
    for x, y in zip(re.findall(r"\d+|\D+", a), re.findall(r"\d+|\D+", b)):
        if x.isdigit() and y.isdigit():
            if int(x) != int(y): return -1 if int(x) < int(y) else 1
        elif x != y:
            # a shorter run that is a prefix of the other: compare the
            # next bytes as the C code does, character by character
            for cx, cy in zip(x, y):
                if cx != cy: return -1 if cx < cy else 1
            return -1 if len(x) < len(y) else 1
    ta, tb = len(re.findall(r"\d+|\D+", a)), len(re.findall(r"\d+|\D+", b))
    if ta != tb: return -1 if ta < tb else 1
    return (a > b) - (a < b)
print("\n".join(sorted(sys.stdin.read().split(), key=functools.cmp_to_key(cmp))))' <<<"$names")
	assert_output "$exp"
	assert_line --index 0 GPU
	assert_line --index 3 GPU:2
}

@test "a point in time as trace-mem shows it (nd_fmt_at_ms): milliseconds, three decimals, truncated to the microsecond" {
	run nd-unit atms 0 999 25000 1999999 -1500 1234567890123 -9223372036854775808
	assert_success
	# independent: python, integer division toward zero on the magnitude
	exp=$(python3 -c '
import sys
for v in map(int, sys.argv[1:]):
    a = abs(v)
    print("%s%d.%03d ms" % ("-" if v < 0 else "", a // 1000000, a % 1000000 // 1000))' \
	    0 999 25000 1999999 -1500 1234567890123 -9223372036854775808)
	assert_output "$exp"
	assert_line --index 2 "0.025 ms"
}

@test "nd_check: the contract's problems come back as values, the run goes on, and they are trace-check's lines" {
	m='{"type":"meta","schema":"ndtrace/1","source":"x","format":"f","origin_ns":0,"producer":"p"}'
	sp() { printf '{"type":"span","ts_ns":%s,"dur_ns":1,"pid":1,"tid":1,"name":"%s"}\n' "$1" "$2"; }
	{ echo "$m"; sp 5 a; sp 2 b; echo 'not json'
	  echo '{"type":"span","ts_ns":9,"pid":1,"tid":1}'; } > "$T/bad"
	run nd-unit check "$T/bad" "$T/bad"
	assert_success		# the library returned: no exit on bad input
	assert_line --index 0 "$T/bad:3: span out of order on timeline pid 1 tid 1: ts_ns 2 dur_ns 1 after ts_ns 5 dur_ns 1"
	assert_line --index 1 "$T/bad:4: invalid JSON: invalid JSON value (at byte 1 of the line)"
	assert_line --index 2 "$T/bad:5: span record lacks \"dur_ns\" (an integer)"
	assert_line --index 3 "$T/bad:5: span record lacks \"name\" (a string)"
	# the second file is a second source: the same four problems again
	assert_line --index 8 "records 10 spans 6 sources 2 problems 8"
	# trace-check prints the same problems, prefixed, and exits 1
	nd-unit check "$T/bad" | sed '$d' | sed 's/^/trace-check: /' > "$T/want"
	run trace-check "$T/bad"
	assert_failure 1
	assert_output "$(cat "$T/want")"
	# an empty run is a problem too, named without a file
	: > "$T/empty"
	run nd-unit check "$T/empty"
	assert_output $'empty input: no records\nrecords 0 spans 0 sources 1 problems 1'
}

@test "duration text: one rule; compact form for integers and fractions, spaced form for prose" {
	run nd-unit durtext 0 999 -999 1000 12500 -12500 999999 1000000 3250000 1200000000 -1200000000
	assert_success
	# independent: python's formatting of the same rule
	exp=$(python3 -c '
import sys
def c(v, sign):
    a = abs(v); sg = "-" if v < 0 else ("+" if sign and v > 0 else "")
    for lim, u in ((1e9, "s"), (1e6, "ms"), (1e3, "us")):
        if a >= lim: return "%s%.3f%s" % (sg, a / lim, u)
    return "%s%.0fns" % (sg, a)
def s(v):
    a = abs(v)
    if a < 1000: return "%d ns" % v
    if a < 1e6: return "%.1f us" % (v / 1e3)
    if a < 1e9: return "%.3f ms" % (v / 1e6)
    return "%.3f s" % (v / 1e9)
for v in map(int, sys.argv[1:]):
    print(c(v, 1), c(v, 1), c(v + 0.25, 0), s(v))' 0 999 -999 1000 12500 -12500 999999 1000000 3250000 1200000000 -1200000000)
	assert_output "$exp"
	assert_line --index 4 "+12.500us +12.500us 12.500us 12.5 us"
}

@test "nd_kineto: on the reader thread too, a Chrome error is a value, the first in input order; the process goes on" {
	local good="$FIXTURES/chrome/xprof_handwritten_trace.json"
	# 40000 events: the reader thread hands over several batches before
	# it meets the bad member (late); first's engine error (its first
	# element) comes before the reader's own (the cut end)
	read -r o1 < <("$PY" -c 'import sys
ev = ",".join("{\"ph\":\"X\",\"name\":\"k%d\",\"ts\":%d,\"dur\":1,"
    "\"pid\":1,\"tid\":1}" % (i, i) for i in range(40000))
late = "[" + ev + ",{\"ph\" 1}]"
open(sys.argv[1], "w").write(late)
open(sys.argv[2], "w").write("[1," + ev + ",{")
print(late.rindex("{\"ph\" 1") + 7)' "$T/late.json" "$T/first.json")
	for t in "" -t; do
		run --separate-stderr nd-unit chromeerr $t "$T/late.json" "$T/first.json" "$good"
		assert_success
		[ -z "$stderr" ] || fail "stderr: $stderr"
		assert_output "$T/late.json: error at byte $o1: $T/late.json: byte $o1: invalid JSON: expected ':' after key; text there: 1}]
$T/first.json: error at byte 2: $T/first.json: byte 2: not a Chrome trace: a JSON array of numbers
$good: ok"
	done
	# the program prints the same message, exit 2, nothing on stdout
	run --separate-stderr chrome2ndjson "$T/late.json"
	assert_failure 2
	assert_output ''
	[ "$stderr" = "chrome2ndjson: $T/late.json: byte $o1: invalid JSON: expected ':' after key; text there: 1}]" ] || fail "stderr: $stderr"
}

@test "nd_hash: interning gives dense stable ids; map64 survives deletes" {
	run nd-unit intern a b a c b ""
	assert_output $'0\n1\n0\n2\n1\n3\ncount=4'
	run nd-unit map64 100000
	assert_output "count=50000 bad=0"
}

@test "nd_out: -o file appears atomically; failure leaves nothing" {
	run nd-unit out "$T/o.txt" "content"
	assert_success
	assert_equal "$(cat "$T/o.txt")" "content"
	run nd-unit out-fail "$T/f.txt"
	assert_failure 2
	assert_output "nd-unit: $T/f.txt: simulated failure"
	run ls -A "$T"
	refute_output --partial "f.txt"
	run nd-unit out "$T/missing-dir/o.txt" x
	assert_failure 2
	assert_output "nd-unit: $T/missing-dir/o.txt: cannot create output: No such file or directory"
}

@test "nd_out: SIGINT removes the temporary file" {
	mkfifo "$T/fifo"
	# A script's background job ignores SIGINT, and an ignored signal stays
	# ignored (nohup): start it with the default action.
	env --default-signal=INT nd-unit out-hang "$T/h.txt" > "$T/fifo" &
	pid=$!
	read -r line < "$T/fifo"
	[ "$line" = ready ]
	ls "$T" | grep -q 'h.txt.tmp'
	kill -INT "$pid"
	wait "$pid" || true
	run ls -A "$T"
	refute_output --partial "h.txt"
}

@test "nd_out: stdout to /dev/full is an error; a closed pipe is quiet" {
	seq 1 1000 | sed 's/.*/{"type":"x","n":&}/' > "$T/s.ndjson"
	run bash -c "nd-unit reemit '$T/s.ndjson' > /dev/full"
	assert_failure 2
	assert_output "nd-unit: <stdout>: write error: No space left on device"
	for i in $(seq 1 200); do cat "$T/s.ndjson"; done > "$T/big.ndjson"
	run bash -o pipefail -c "nd-unit reemit '$T/big.ndjson' | head -1"
	assert_success
	assert_output '{"type":"x","n":1}'
}

@test "nd_event: typed fields, unknown keys kept, re-emission byte-identical for canonical spans" {
	cat > "$T/e.ndjson" <<'E'
{"type":"meta","schema":"ndtrace/1","source":"a.pb","format":"xplane","origin_ns":1700000000000000000,"host":"h","rank":null,"producer":"x 1"}
{"type":"span","ts_ns":5,"dur_ns":10,"name":"fusion.1","pid":1,"tid":2,"process":"/device:TPU:0","thread":"XLA Ops","device":"TPU:0","rank":0,"step":3,"cat":"xla_op","class":"compute","family":"fusion","scope":"a/b","args":{"flops":12,"s":"x\"y"},"mine":[1,{"k":null}]}
{"type":"gap","ts_ns":1,"dur_ns":2,"z":true}
E
	run nd-unit reemit "$T/e.ndjson"
	assert_success
	assert_output "$(cat "$T/e.ndjson")"
	run nd-unit fields "$T/e.ndjson"
	assert_line --index 1 'src=0 type=span ts=5 dur=10 pid=1 tid=2 rank=0 step=3 name=fusion.1 scope=a/b args={"flops":12,"s":"x\"y"} members=17'
	assert_line --index 2 'src=0 type=other ts=1 dur=2 members=4'
}

@test "nd_event: keys in any order come out canonical, escapes decoded, nulls dropped" {
	printf '%s\n' '{"name":"a\u00e9\n","args":{},"tid":2,"ts_ns":1,"dur_ns":0,"pid":1,"type":"span","scope":null}' > "$T/o.ndjson"
	run nd-unit reemit "$T/o.ndjson"
	assert_output '{"type":"span","ts_ns":1,"dur_ns":0,"name":"aé\n","pid":1,"tid":2,"args":{}}'
}

@test "nd_stream: sources counted per file and per meta (cat a b == a b)" {
	m='{"type":"meta","schema":"ndtrace/1","source":"s","format":"chrome","origin_ns":0,"host":null,"rank":null,"producer":"p"}'
	s='{"type":"span","ts_ns":0,"dur_ns":1,"name":"n","pid":1,"tid":1}'
	printf '%s\n%s\n' "$m" "$s" > "$T/a"
	printf '%s\n%s\n' "$m" "$s" > "$T/b"
	printf '%s\n' "$s" > "$T/c"
	run bash -c "nd-unit fields '$T/a' '$T/b' '$T/c' | cut -d' ' -f1,2"
	assert_output $'src=0 type=meta\nsrc=0 type=span\nsrc=1 type=meta\nsrc=1 type=span\nsrc=2 type=span'
	run bash -c "cat '$T/a' '$T/b' | nd-unit fields - | cut -d' ' -f1,2"
	assert_output $'src=0 type=meta\nsrc=0 type=span\nsrc=1 type=meta\nsrc=1 type=span'
}

# Bad input: one line naming file and line, exit 2, no crash.
bad() {
	printf "$1" > "$T/bad.ndjson"
	run nd-unit reemit "$T/bad.ndjson"
	assert_failure 2
	assert_equal "${#lines[@]}" 1
	assert_output "nd-unit: $T/bad.ndjson:$2"
}

@test "bad input: non-JSON line" {
	bad '{"type":"x"}\nhello\n' '2: invalid JSON: invalid JSON value (at byte 1 of the line)'
}
@test "bad input: JSON array line" {
	bad '[1,2]\n' '1: record is a JSON array, not an object (at byte 1 of the line)'
}
@test "bad input: truncated last line" {
	bad '{"type":"x"}\n{"type":"span","ts_' '2: truncated last line: invalid JSON: unterminated string (at byte 20 of the line)'
}
@test "bad input: empty line" {
	bad '{"type":"x"}\n\n' '2: empty line'
}
@test "bad input: NUL byte" {
	bad '{"type":"x","a":"b\0c"}\n' '1: invalid JSON: NUL byte in string (at byte 19 of the line)'
}
@test "bad input: invalid UTF-8" {
	bad '{"type":"x","a":"b\377"}\n' '1: invalid JSON: invalid UTF-8 in string (at byte 19 of the line)'
}
@test "bad input: number beyond 2^53 in a reserved integer key" {
	bad '{"type":"span","ts_ns":9007199254740993}\n' '1: "ts_ns" must be an integer within +-2^53 (at byte 24 of the line)'
}
@test "bad input: float time, negative duration, missing type, wrong type" {
	bad '{"type":"span","ts_ns":1.5}\n' '1: "ts_ns" must be an integer within +-2^53 (at byte 24 of the line)'
	bad '{"type":"span","dur_ns":-1}\n' '1: "dur_ns" must not be negative (at byte 25 of the line)'
	bad '{"name":"x"}\n' '1: record has no "type" string (at byte 1 of the line)'
	bad '{"type":"span","name":3}\n' '1: "name" must be a string (at byte 23 of the line)'
}
@test "bad input: deeply nested args" {
	deep=$(printf '%0.s[' $(seq 1 200))
	bad "{\"type\":\"x\",\"args\":$deep\n" '1: invalid JSON: nesting too deep (at byte 147 of the line)'
}
@test "bad input: NaN, trailing garbage, invalid escape" {
	bad '{"type":"x","v":NaN}\n' '1: invalid JSON: NaN and Infinity are not JSON (at byte 17 of the line)'
	bad '{"type":"x","v":-Infinity}\n' '1: invalid JSON: NaN and Infinity are not JSON (at byte 17 of the line)'
	bad '{"type":"x","v":-1x}\n' '1: invalid JSON: expected '"'"','"'"' or '"'"'}'"'"' in object (at byte 19 of the line)'
	bad '{"type":"x"} x\n' '1: trailing characters after the JSON object (at byte 14 of the line)'
	bad '{"type":"x\\q"}\n' '1: invalid JSON: invalid escape in string (at byte 11 of the line)'
}
@test "bad input: a 100 MB line is refused, not slurped" {
	{ printf '{"type":"x","s":"'; head -c 100000000 /dev/zero | tr '\0' a; printf '"}\n'; } > "$T/huge.ndjson"
	run nd-unit reemit "$T/huge.ndjson"
	assert_failure 2
	assert_output "nd-unit: $T/huge.ndjson:1: line longer than 67108864 bytes"
}
@test "empty input is not an error for a filter (nothing out)" {
	: > "$T/empty"
	run nd-unit reemit "$T/empty"
	assert_success
	assert_output ""
}
