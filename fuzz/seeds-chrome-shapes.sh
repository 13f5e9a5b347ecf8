#!/bin/sh
# Seeds for fuzz_chrome: small versions of the hostile shapes of
# tests/hostile-chrome.bats (issue 18): nested identical spans and B/E
# pairs (scope depth), long labels (scope bytes), a timeline per event,
# kernels at one ts with and without launch flows, many args and extra
# members, numbers of 400+ characters, and an ordered trace (the ordered
# path; a last byte with bit 2 set gives it a budget of 2 records).
#   sh fuzz/seeds-chrome-shapes.sh BIN_DIR CORPUS_DIR [FIXTURES_DIR]
set -eu
C=$2/fuzz_chrome
mkdir -p "$C"
# events N FORMAT: N events from an awk printf format of i
events() {
	awk -v n="$1" -v f="$2" 'BEGIN {
		printf "{\"traceEvents\":["
		for (i = 0; i < n; i++) {
			if (i) printf ","
			printf f, i, i, i
		}
		printf "]}"
	}'
}
events 200 '{"ph":"X","name":"k","pid":0,"tid":7,"ts":5,"dur":1}' > "$C/nested-x"
{
	printf '{"traceEvents":['
	awk 'BEGIN { for (i = 0; i < 100; i++) printf "{\"ph\":\"B\",\"name\":\"k\",\"pid\":0,\"tid\":7,\"ts\":5},"
		for (i = 0; i < 100; i++) printf "%s{\"ph\":\"E\",\"pid\":0,\"tid\":7,\"ts\":6}", i ? "," : "" }'
	printf ']}'
} > "$C/nested-be"
awk 'BEGIN {
	a = sprintf("%1000s", ""); gsub(/ /, "a", a)
	printf "{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"forward\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":100}"
	printf ",{\"ph\":\"X\",\"name\":\"forward/b\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":90}"
	for (i = 1; i <= 6; i++)
		printf ",{\"ph\":\"X\",\"name\":\"%s%d\",\"pid\":1,\"tid\":1,\"ts\":%d,\"dur\":%d}", a, i, 2 + i, 80 - i
	printf ",{\"ph\":\"X\",\"name\":\"in\",\"pid\":1,\"tid\":1,\"ts\":15,\"dur\":10}"
	printf ",{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":1,\"tid\":1,\"ts\":20,\"dur\":1}]}"
}' > "$C/long-labels"
events 300 '{"ph":"X","name":"a","cat":"c%d","pid":%d,"tid":%d,"ts":1,"dur":1}' > "$C/pid-tid"
events 200 '{"ph":"X","cat":"kernel","name":"k%d","pid":0,"tid":7,"ts":5,"dur":1}' > "$C/kernels"
printf '{"traceEvents":[{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":9,"tid":9,"ts":1,"dur":1,"args":{"correlation":5}},{"ph":"X","cat":"kernel","name":"k1","pid":0,"tid":7,"ts":10,"dur":1},{"ph":"f","cat":"ac2g","name":"ac2g","id":5,"pid":0,"tid":7,"ts":10,"bp":"e"},{"ph":"X","cat":"kernel","name":"k2","pid":0,"tid":7,"ts":10,"dur":2},{"ph":"f","cat":"ac2g","name":"ac2g","id":6,"pid":0,"tid":7,"ts":10,"bp":"e"}]}' > "$C/kernels-flows"
awk 'BEGIN {
	printf "{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"w\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1"
	for (i = 0; i < 300; i++) printf ",\"x%d\":%d", i, i
	printf ",\"args\":{\"x5\":0"
	for (i = 0; i < 300; i++) printf ",\"a%d\":%d", i, i
	printf "}}]}"
}' > "$C/wide"
awk 'BEGIN {
	b = sprintf("%500s", ""); gsub(/ /, "7", b)
	z = sprintf("%450s", ""); gsub(/ /, "0", z)
	printf "{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":2,\"args\":{\"n\":%s,\"l\":[-%s.5e-3,1]}}", b, b
	printf ",{\"ph\":\"X\",\"name\":\"b\",\"pid\":1,\"tid\":1,\"ts\":0.%s9,\"dur\":1}", z
	printf ",{\"ph\":\"X\",\"name\":\"c\",\"pid\":%s,\"tid\":1,\"ts\":%s,\"dur\":1,\"q\":%s}],\"big\":%s}", b, b, b, b
}' > "$C/long-numbers"
# ordered, ten timelines (every seed ends in '}', 0x7d: the harness
# converts it with --no-args and a budget of 2 records)
events 60 '{"ph":"X","name":"s","cat":"cpu_op","pid":1,"tid":%d,"ts":%d,"dur":1,"args":{"i":%d}}' |
    sed 's/"tid":\([0-9]*\)\([0-9]\),/"tid":\2,/g' > "$C/ordered"
exit 0
