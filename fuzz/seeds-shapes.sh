#!/bin/sh
# Seeds for fuzz_ndjson (one record per file): small instances of the
# hostile shapes of tests/hostile-shapes.bats (issue 18, items 10, 14, 16)
# -- a span whose scope has many segments, a region_group partial with such
# a scope, identical spans, one kernel per stream, origin_ns at the ends of
# int64 -- so that mutations start from the records that once cost
# quadratic memory or time, or overflowed.
#   sh fuzz/seeds-shapes.sh BIN_DIR CORPUS_DIR FIXTURES_DIR
set -eu
C=$2/fuzz_ndjson
mkdir -p "$C"

# scope "a/a/.../a" of $1 segments
deep() {
	awk -v n="$1" 'BEGIN { s = "a"; for (i = 1; i < n; i++) s = s "/a"; printf "%s", s }'
}

for n in 64 1000; do
	printf '{"type":"span","name":"k","cat":"kernel","ts_ns":0,"dur_ns":10,"pid":0,"tid":1,"scope":"%s"}' \
	    "$(deep "$n")" > "$C/shape-deep-scope-$n"
	printf '{"type":"region_group","key":[null,"%s","k"],"count":1,"exclusive_ns":10,"overrun":0}' \
	    "$(deep "$n")" > "$C/shape-deep-region-group-$n"
done
# an empty segment, a leading and a trailing '/', brackets
printf '{"type":"span","name":"k","ts_ns":0,"dur_ns":1,"pid":0,"tid":1,"scope":"/a//b[x=1]/jit(f)/"}' \
    > "$C/shape-scope-edges"
printf '{"type":"span","name":"k","ts_ns":0,"dur_ns":1000,"pid":1,"tid":1}' \
    > "$C/shape-identical-span"
printf '{"type":"span","name":"k7","cat":"kernel","ts_ns":700,"dur_ns":10,"pid":0,"tid":7,"device":"gpu0"}' \
    > "$C/shape-stream-kernel"
printf '{"type":"meta","schema":"ndtrace/1","origin_ns":9223372036854775807}' \
    > "$C/shape-origin-max"
printf '{"type":"meta","schema":"ndtrace/1","origin_ns":-9223372036854775808}' \
    > "$C/shape-origin-min"
printf '{"type":"top_group","key":["k"],"count":1,"total_ns":5,"self_ns":5,"min_ns":5,"max_ns":5,"overrun":0,"hist":[5,1],"example":{"source":"a","pid":1,"tid":1,"origin_ns":9223372036854775807,"ts_ns":10,"dur_ns":5,"name":"k"}}' \
    > "$C/shape-top-group-origin-max"
exit 0
