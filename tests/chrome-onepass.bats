#!/usr/bin/env bats
# chrome2ndjson: the ordered path's record budget is memory (64 MiB of
# records, chrome2ndjson(1) MEMORY), so an ordered file over the old
# budget of 262,144 records is written from memory, and the same bytes
# as streamed through the spool; the classification memo (a regex once
# per distinct value of its field); gen-kineto's -j and -m shapes; and
# trace-diff's memory, flat in the length of its inputs (issue 21).

load helpers

setup_file() {
	F="$BATS_FILE_TMPDIR"
	# 270,000 spans on 4 timelines, each in output order, thread names
	# after the events: over the old budget of 262,144 records
	awk 'BEGIN {
		printf "{\"traceEvents\":[\n"
		for (i = 0; i < 270000; i++)
			printf "{\"ph\":\"X\",\"name\":\"s%d\",\"cat\":\"cpu_op\",\"pid\":1,\"tid\":%d,\"ts\":%d,\"dur\":1,\"args\":{\"i\":%d}},\n", i % 7, i % 4, i, i
		printf "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":2,\"args\":{\"name\":\"two\"}}]}\n"
	}' > "$F/big.json"
	export F
}

setup() {
	T="$BATS_TEST_TMPDIR"
}

@test "an ordered file over the old 262,144-record budget is written from memory, the same bytes as through the spool" {
	CHROME2NDJSON_STATS=1 /usr/bin/time -f %M -o "$T/rss.mem" \
	    chrome2ndjson -q "$F/big.json" > "$T/mem.nd" 2> "$T/mem.err"
	# before: streamed past 262,144 records
	grep -qx "chrome2ndjson: $F/big.json: buffered" "$T/mem.err" ||
	    fail "path: $(cat "$T/mem.err")"
	CHROME2NDJSON_BUDGET=1000 CHROME2NDJSON_STATS=1 \
	    /usr/bin/time -f %M -o "$T/rss.spool" \
	    chrome2ndjson -q "$F/big.json" > "$T/spool.nd" 2> "$T/spool.err"
	grep -qx "chrome2ndjson: $F/big.json: streamed" "$T/spool.err" ||
	    fail "path: $(cat "$T/spool.err")"
	cmp "$T/mem.nd" "$T/spool.nd"
	# the values, by awk: every span, in file order, each with its i
	run awk -F'"i":' '/"type":"span"/ { split($2, a, "}"); if (a[1] != n) bad++; n++ }
	    /"thread":"two"/ { two++ }
	    END { print n, bad + 0, two }' "$T/mem.nd"
	assert_output "270000 0 67500"
	run jq -c '[.events, .spans, .metadata]' <(tail -1 "$T/mem.nd")
	assert_output '[270001,270000,1]'
	[ -n "${ND_ASAN:-}" ] && return 0
	# memory: 48 bytes a record buffered; through the spool it is not
	# held (the spool keeps 8 MiB in memory, then a file)
	mem=$(cat "$T/rss.mem") spool=$(cat "$T/rss.spool")
	[ "$spool" -lt $((mem - 4096)) ] || fail "spool $spool KiB, memory $mem KiB"
}

@test "gen-kineto -j: a JAX-style trace, ordered, long long_name args; both paths give the same bytes" {
	gen-kineto -j -e 12000 -s 3 -o "$T/j.json"
	CHROME2NDJSON_STATS=1 chrome2ndjson -q "$T/j.json" > "$T/a.nd" 2> "$T/a.err"
	CHROME2NDJSON_BUDGET=50 CHROME2NDJSON_STATS=1 chrome2ndjson -q "$T/j.json" > "$T/b.nd" 2> "$T/b.err"
	run cat "$T/a.err" "$T/b.err"
	assert_output "chrome2ndjson: $T/j.json: buffered
chrome2ndjson: $T/j.json: streamed"
	cmp "$T/a.nd" "$T/b.nd"
	# jq on the input against the stream: spans, distinct names, the
	# longest long_name, and the classes of the device ops
	run jq -c '[.traceEvents[] | select(.ph == "X")] | [length,
	    (map(.name) | unique | length),
	    (map(.args.long_name // "" | length) | max)]' "$T/j.json"
	assert_output '[12000,2002,390]'
	run jq -s -c '[.[] | select(.type == "span")] | [length,
	    (map(.name) | unique | length),
	    (map(.args.long_name // "" | length) | max),
	    (map(select(.thread == "XLA Ops") | .class) | unique)]' "$T/a.nd"
	assert_output '[12000,2002,390,["communication","compute","memory"]]'
}

@test "gen-kineto -m: the same trace minified converts to the same records" {
	gen-kineto -e 3000 -s 2 -o "$T/k.json"
	gen-kineto -m -e 3000 -s 2 -o "$T/m.json"
	run jq -c '.traceEvents | length' "$T/m.json"
	assert_output 3488
	# no whitespace outside strings: only the spaces inside names and keys
	run bash -c "tr -d -c ' \n\t' < '$T/m.json' | wc -c"
	[ "$output" -gt 0 ]
	[ "$(stat -c %s "$T/m.json")" -lt "$(($(stat -c %s "$T/k.json") * 9 / 10))" ]
	run jq -c -S . "$T/m.json"
	[ "$output" = "$(jq -c -S . "$T/k.json")" ] || fail "not the same JSON"
	chrome2ndjson -q "$T/k.json" | sed 1d | sed '$d' > "$T/k.nd"
	chrome2ndjson -q "$T/m.json" | sed 1d | sed '$d' > "$T/m.nd"
	cmp "$T/k.nd" "$T/m.nd"
}

@test "classification: one name on a device and on the host gets each its own answer, from either order" {
	# chrome2ndjson(1) rules by hand: copy.N on /device: is memory, on
	# /host: host; both are the copy family.  fusion.N: compute on the
	# device (cat xla_op), host on /host:.
	printf '%s\n' '{"traceEvents":[' \
	    '{"ph":"M","name":"process_name","pid":1,"args":{"name":"/host:CPU"}},' \
	    '{"ph":"M","name":"process_name","pid":2,"args":{"name":"/device:TPU:0"}},' \
	    '{"ph":"X","name":"copy.1","pid":1,"tid":1,"ts":1,"dur":1},' \
	    '{"ph":"X","name":"copy.1","cat":"xla_op","pid":2,"tid":1,"ts":1,"dur":1},' \
	    '{"ph":"X","name":"fusion.2","cat":"xla_op","pid":2,"tid":1,"ts":3,"dur":1},' \
	    '{"ph":"X","name":"fusion.2","pid":1,"tid":1,"ts":3,"dur":1},' \
	    '{"ph":"X","name":"copy.1","pid":3,"tid":1,"ts":1,"dur":1}]}' > "$T/c.json"
	run bash -c "chrome2ndjson -q '$T/c.json' | jq -r 'select(.type==\"span\") | [.name, .process // \"-\", .class, .family] | @tsv'"
	assert_output "copy.1	/host:CPU	host	copy
copy.1	/device:TPU:0	memory	copy
fusion.2	/device:TPU:0	compute	fusion
fusion.2	/host:CPU	host	fusion
copy.1	-	other	copy"
}

@test "trace-diff: peak RSS does not grow with the spans (10k against 200k)" {
	n=200000
	[ -z "${ND_ASAN:-}" ] || n=20000
	for k in 10000 "$n"; do
		gen-stream -R -n "$k" -s 1 > "$T/a$k.nd"
		gen-stream -R -n "$k" -s 2 > "$T/b$k.nd"
		/usr/bin/time -f %M -o "$T/rss$k" trace-diff --allow-same \
		    "$T/a$k.nd" "$T/b$k.nd" > "$T/d$k.out" 2> /dev/null
	done
	[ -n "${ND_ASAN:-}" ] && return 0
	# the steps past the warm-up one, counted by awk on the inputs
	for s in a b; do
		awk -F'"step":' 'NF > 1 { split($2, v, ","); st[v[1]] = 1 }
		    END { print length(st) - 1 }' "$T/$s$n.nd"
	done > "$T/steps"
	run jq -r 'select(.metric == "step.count") | .before, .after' "$T/d$n.out"
	assert_output "$(cat "$T/steps")"
	[ "$(head -1 "$T/steps")" -ge 5 ]
	small=$(cat "$T/rss10000") big=$(cat "$T/rss$n")
	# before (issue 21): about 100 bytes a span, 19 MiB more here
	[ "$big" -lt $((small + 6144)) ] || fail "10k: $small KiB, $n: $big KiB"
}
