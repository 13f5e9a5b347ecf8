#!/bin/sh
# The hostile-input corpus of tests/bad.bats, generated (no binary files in
# the repository):  sh tests/bad/gen.sh BIN_DIR OUT_DIR
# Every file is made from the generators and printf, deterministically, so
# the expected exit status and first line of stderr (tests/bad/expect) stay
# the same from run to run.
#   x-*  XPlane for xplane2ndjson       g-*  gzip (Chrome JSON inside)
#   c-*  Chrome JSON for chrome2ndjson  n-*  NDJSON streams for the filters
set -eu
export LC_ALL=C
BIN=$1
D=$2
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$D"
cd "$D"

# cut FILE STEP PREFIX: FILE truncated at 1, 1+STEP, ... and at len-1.
cut_every() {
	n=$(wc -c < "$1")
	i=1
	while [ "$i" -lt "$n" ]; do
		head -c "$i" "$1" > "$3$i"
		i=$((i + $2))
	done
	head -c $((n - 1)) "$1" > "$3$((n - 1))"
}

# flip FILE STEP PREFIX: one bit flipped at byte 0, STEP, 2*STEP, ...
flip_every() {
	n=$(wc -c < "$1")
	i=0
	while [ "$i" -lt "$n" ]; do
		b=$(od -An -tu1 -j "$i" -N1 "$1")
		bit=$((1 << (i % 8)))
		cp "$1" "$3$i"
		printf "\\$(printf %o $((b ^ bit)))" |
		    dd of="$3$i" bs=1 seek="$i" conv=notrunc 2>/dev/null
		i=$((i + $2))
	done
}

# ---------- XPlane ----------
"$BIN/gen-xplane" --tiny -o x-tiny.pb
cut_every x-tiny.pb 47 x-cut-
flip_every x-tiny.pb 53 x-flip-
: > x-empty.pb
# XSpace.planes (field 1, length-delimited) declaring 2^62 bytes
printf '\012\200\200\200\200\200\200\200\200\100\010\001' > x-hugelen.pb
# a plane (6 bytes) whose line (field 3) declares 2^31 bytes
printf '\012\006\032\200\200\200\200\010' > x-hugelen-nested.pb
# a plane whose id (field 1) is a 10-byte varint overflowing 64 bits
printf '\012\013\010\377\377\377\377\377\377\377\377\377\177' > x-varint-overflow.pb
# 100000 nested start-group tags of an unknown field (16), never closed
awk 'BEGIN { for (i = 0; i < 100000; i++) printf "%c%c", 131, 1 }' > x-groups-deep.pb
# 1000 empty planes: valid, nothing to convert
awk 'BEGIN { for (i = 0; i < 1000; i++) printf "%c%c", 10, 0 }' > x-empty-planes.pb
# ref_value stats copied within a growing buffer (a fuzz finding)
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
"$PY" "$here/ref-arena.py" > x-ref-arena.pb
gzip -9nc x-tiny.pb > x-tiny.pb.gz
cut_every x-tiny.pb.gz 61 x-gzcut-

# ---------- Chrome JSON ----------
cat > c-base.json <<'J'
{"traceEvents":[
{"ph":"M","name":"process_name","pid":1,"args":{"name":"host"}},
{"ph":"M","name":"thread_name","pid":1,"tid":2,"args":{"name":"main"}},
{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":2,"ts":10.5,"dur":4,"args":{"correlation":7}},
{"ph":"B","name":"outer","pid":1,"tid":2,"ts":9},
{"ph":"E","pid":1,"tid":2,"ts":20},
{"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":16,"dur":2,"args":{"correlation":7,"device":0,"stream":7}},
{"ph":"i","name":"mark","pid":1,"tid":2,"ts":12,"s":"t"},
{"ph":"C","name":"mem","pid":1,"ts":13,"args":{"bytes":1024}}
],"displayTimeUnit":"ms","baseTimeNanoseconds":1700000000000000000}
J
cut_every c-base.json 29 c-cut-
sed -e 's/^{"traceEvents":\[$/[/' -e 's/^\],"displayTimeUnit.*$/]/' c-base.json > c-bare.json
cut_every c-bare.json 37 c-barecut-
# ev JSON...: a document of the given events
ev() {
	printf '{"traceEvents":[\n'
	sep=
	for e in "$@"; do printf '%s%s' "$sep" "$e"; sep=',
'; done
	printf '\n]}\n'
}
X='"ph":"X","name":"op","pid":1,"tid":1'
ev "{$X,\"ts\":1,\"dur\":1,\"args\":{\"a\":$(awk 'BEGIN { for (i = 0; i < 100000; i++) printf "["; for (i = 0; i < 100000; i++) printf "]" }')}}" > c-deep-args.json
awk 'BEGIN { for (i = 0; i < 100000; i++) printf "["; for (i = 0; i < 100000; i++) printf "]" }' > c-deep-top.json
ev "{$X,\"ts\":1,\"dur\":1,\"args\":{\"a\":$(awk 'BEGIN { for (i = 0; i < 200; i++) printf "{\"k\":"; printf "1"; for (i = 0; i < 200; i++) printf "}" }')}}" > c-deep200.json
printf '{"traceEvents":[{"ph":"X","name":"bad\377name","pid":1,"tid":1,"ts":1,"dur":1}]}\n' > c-utf8-ff.json
printf '{"traceEvents":[{"ph":"X","name":"over\300\257long","pid":1,"tid":1,"ts":1,"dur":1}]}\n' > c-utf8-overlong.json
printf '{"traceEvents":[{"ph":"X","name":"sur\355\240\200rogate","pid":1,"tid":1,"ts":1,"dur":1}]}\n' > c-utf8-surrogate.json
printf '{"traceEvents":[{"ph":"X","name":"cut\342\202","pid":1,"tid":1,"ts":1,"dur":1}]}\n' > c-utf8-cut.json
ev "{$X,\"ts\":1,\"dur\":1,\"args\":{\"s\":\"\\ud800\"}}" > c-lone-surrogate-escape.json
ev "{$X,\"ts\":1e400,\"dur\":1}" > c-ts-1e400.json
ev "{$X,\"ts\":123456789012345678901234567890,\"dur\":1}" > c-ts-30digits.json
ev "{$X,\"ts\":1.$(awk 'BEGIN { for (i = 0; i < 5000; i++) printf "5" }'),\"dur\":1}" > c-ts-5000digits.json
ev "{$X,\"ts\":9223372036854775.807,\"dur\":1}" > c-ts-int64max-us.json
# 16 and 18 digits: microseconds past 2^63 ns once scaled (found by
# fuzz_chrome: the fast path overflowed into a wrong, negative origin)
ev "{$X,\"ts\":9300000000000000,\"dur\":1}" "{$X,\"ts\":420366960477333640,\"dur\":1}" > c-ts-overflow-fast.json
ev "{$X,\"ts\":NaN,\"dur\":1}" > c-ts-nan.json
ev "{$X,\"ts\":1,\"dur\":Infinity}" > c-dur-infinity.json
ev "{$X,\"ts\":-Infinity,\"dur\":1}" > c-ts-neginf.json
ev "{$X,\"ts\":1,\"dur\":-5}" > c-dur-negative.json
ev "{$X,\"ts\":1,\"dur\":1e30}" > c-dur-1e30.json
ev "{$X,\"ts\":1,\"dur\":18446744073709551616}" > c-dur-2e64.json
ev "{$X,\"ts\":1,\"dur\":\"5 us\"}" > c-dur-string.json
ev "{$X,\"ts\":1,\"dur\":\"5.0625\"}" > c-dur-numstring.json
ev "{$X,\"ts\":-1000,\"dur\":1}" > c-ts-negative.json
for kv in str:'"p"' float:1.5 neg:-3 true:true false:false null:null \
    obj:'{}' arr:'[]' big:1e30 empty:'""' numstr:'"12"'; do
	k=${kv%%:*} v=${kv#*:}
	ev "{\"ph\":\"X\",\"name\":\"op\",\"pid\":$v,\"tid\":1,\"ts\":1,\"dur\":1}" > "c-pid-$k.json"
	ev "{\"ph\":\"X\",\"name\":\"op\",\"pid\":1,\"tid\":$v,\"ts\":1,\"dur\":1}" > "c-tid-$k.json"
done
ev '{"ph":"X","name":"op","tid":1,"ts":1,"dur":1}' > c-pid-missing.json
ev '{"ph":"X","ph":"B","name":"op","pid":1,"tid":1,"ts":1,"dur":1}' > c-dupkey-ph.json
ev "{$X,\"ts\":1,\"ts\":5,\"dur\":1}" > c-dupkey-ts.json
printf '{"traceEvents":[],"traceEvents":[]}\n' > c-dupkey-traceEvents.json
ev "{$X,\"ts\":1,\"dur\":1}" '{"ph":"B","name":"open","pid":1,"tid":1,"ts":2}' > c-b-without-e.json
ev "{$X,\"ts\":1,\"dur\":1}" '{"ph":"E","pid":1,"tid":1,"ts":2}' > c-e-without-b.json
ev "{$X,\"ts\":1,\"dur\":1}" '{"ph":"M","name":"process_name","pid":99,"args":{"name":"ghost"}}' \
    '{"ph":"M","name":"thread_name","pid":1,"tid":42,"args":{"name":"ghost"}}' > c-meta-orphan.json
ev "{$X,\"ts\":1,\"dur\":1}" '{"ph":"M","name":"process_name","pid":1}' \
    '{"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":7}}' > c-meta-noname.json
ev "{$X,\"ts\":1,\"dur\":1}" '{"ph":"s","id":1,"pid":1,"tid":1,"ts":1,"cat":"ac2g","name":"f"}' > c-flow-unfinished.json
ev '1' '"x"' 'null' '[]' > c-events-not-objects.json
printf '{"traceEvents":{}}\n' > c-traceevents-object.json
printf '{"traceEvents":[]} x\n' > c-trailing.json
: > c-empty.json

# ---------- gzip ----------
gzip -9nc c-base.json > g-base.json.gz
cut_every g-base.json.gz 23 g-cut-
flip_every g-base.json.gz 41 g-flip-
{ cat g-base.json.gz; printf 'garbage'; } > g-trailing.json.gz
printf '\037\213' > g-magic-only.json.gz

# ---------- NDJSON ----------
"$BIN/gen-stream" -n 6 -s 1 > n-base.ndjson
cut_every n-base.ndjson 131 n-cut-
META='{"type":"meta","schema":"ndtrace/1","source":"b.pb","format":"xplane","origin_ns":0,"host":null,"rank":null,"producer":"bad"}'
sp() { printf '%s\n{"type":"span","ts_ns":%s,"dur_ns":%s,"name":"%s","pid":%s,"tid":%s}\n' "$META" "$1" "$2" "${5:-op}" "${3:-1}" "${4:-1}"; }
sp 0 -5 > n-dur-negative.ndjson
sp 0 99999999999999999999 > n-dur-2e20.ndjson
sp 0 1e400 > n-dur-1e400.ndjson
sp NaN 1 > n-ts-nan.ndjson
sp 0 Infinity > n-dur-infinity.ndjson
sp 1.5 1 > n-ts-fraction.ndjson
sp 9223372036854775807 9223372036854775807 > n-ts-overflow.ndjson
sp 0 "$(awk 'BEGIN { for (i = 0; i < 400; i++) printf "9" }')" > n-dur-400digits.ndjson
for kv in str:'"p"' float:1.5 true:true null:null obj:'{}' arr:'[]' \
    neg:-3 big:1e30; do
	k=${kv%%:*} v=${kv#*:}
	sp 0 1 "$v" 1 > "n-pid-$k.ndjson"
	sp 0 1 1 "$v" > "n-tid-$k.ndjson"
done
printf '%s\n{"type":"span","ts_ns":0,"dur_ns":1,"name":"a\377b","pid":1,"tid":1}\n' "$META" > n-utf8.ndjson
printf '%s\n{"type":"span","ts_ns":0,"ts_ns":7,"dur_ns":1,"name":"a","pid":1,"tid":1}\n' "$META" > n-dupkey.ndjson
printf '%s\n{"type":"span","ts_ns":0,"dur_ns":1,"name":"a","pid":1,"tid":1,"args":{"a":%s}}\n' "$META" \
    "$(awk 'BEGIN { for (i = 0; i < 100000; i++) printf "["; for (i = 0; i < 100000; i++) printf "]" }')" > n-deep.ndjson
printf '{"type":"span","ts_ns":0,"dur_ns":1,"name":"a","pid":1,"tid":1}\n' > n-no-meta.ndjson
printf '%s\n[1,2]\n' "$META" > n-not-object.ndjson
: > n-empty.ndjson
exit 0
