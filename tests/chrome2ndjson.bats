#!/usr/bin/env bats
# chrome2ndjson: Chrome/Perfetto/Kineto trace JSON -> ndtrace stream.

load helpers

setup() {
	T="$BATS_TEST_TMPDIR"
	COUNT="$BATS_TEST_DIRNAME/tools/chrome_count.py"
}

check() {
	"$ND_BIN/trace-check" "$@" || fail "trace-check failed on $*"
}

# Every Chrome/JSON trace of the fixtures but the known invalid one.
chrome_fixtures() {
	ls "$FIXTURES"/chrome/*.json* "$FIXTURES"/chrome/*/*.json* \
	    "$FIXTURES"/torch-legacy/*.pt.trace.json* 2>/dev/null |
	    grep -v edge_unescaped_names
}

# A Chrome trace (object form) holding the given events.
trace() {
	local IFS=,
	printf '{"traceEvents":[%s]}\n' "$*"
}

end_of() {
	tail -1 "$1" | jq -c "$2"
}

@test "every fixture: exit 0, a valid stream, counts equal an independent count" {
	need_fixtures
	files=$(chrome_fixtures)
	# The independent count and trace-check test logic, not memory
	# safety: the sanitizer run (ND_ASAN=1) only converts every file.
	if [ -z "${ND_ASAN:-}" ]; then
		"$PY" "$COUNT" count $files |
		    jq -c '[.events,.spans,.instants,.counters,.flows,.metadata,.skipped]' > "$T/want"
	fi
	n=0
	for f in $files; do
		n=$((n + 1))
		chrome2ndjson -q "$f" > "$T/out.ndjson" || fail "$f: exit $?"
		if [ -z "${ND_ASAN:-}" ]; then
			check "$T/out.ndjson"
			want=$(sed -n "${n}p" "$T/want")
			got=$(end_of "$T/out.ndjson" '[.events,.spans,.instants,.counters,.flows,.metadata,([.skipped[]]|add // 0)]')
			[ "$want" = "$got" ] || fail "$f: python counts $want, chrome2ndjson $got"
		fi
		# the end record's counts are the records written
		recs=$(awk -F'"' '/^{"type":"(span|instant|counter|flow)"/ { n[$4]++ }
		    END { printf "[%d,%d,%d,%d]", n["span"], n["instant"], n["counter"], n["flow"] }' "$T/out.ndjson")
		[ "$recs" = "$(end_of "$T/out.ndjson" '[.spans,.instants,.counters,.flows]')" ] ||
		    fail "$f: records $recs differ from the end record"
	done
	[ "$n" -ge 20 ] || fail "only $n fixtures found"
}

@test "meta and end records: provenance, sha256 of the file as stored, phases" {
	need_fixtures
	f="$FIXTURES/chrome/hta_alexnet.json.gz"
	chrome2ndjson "$f" > "$T/a.ndjson"
	run jq -c 'select(.type=="meta") | [.schema,.source,.format,.origin_ns,.host,.rank,.producer,.header.traceName]' "$T/a.ndjson"
	assert_output "[\"ndtrace/1\",\"$f\",\"chrome\",1695835542000000000,null,0,\"chrome2ndjson 0.1.0\",\"benchmark_result_2869224_1695835535_trace.json\"]"
	run end_of "$T/a.ndjson" '[.events,.phases,.sha256,.suspected_truncation,.warnings]'
	assert_output "[1408,{\"M\":38,\"X\":868,\"f\":345,\"i\":2,\"s\":155},\"$(sha256sum < "$f" | cut -d' ' -f1)\",false,[]]"
	run end_of "$T/a.ndjson" '.categories.kernel, .categories.cpu_op, .skipped'
	assert_output $'79\n359\n{}'
}

@test "ts and dur: exact decimal microseconds to integer ns; origin rules" {
	need_fixtures
	# Kineto with baseTimeNanoseconds: ts is relative to it
	chrome2ndjson "$FIXTURES/chrome/kineto_before_fix.json" > "$T/k.ndjson"
	run jq -c 'select(.name=="op1" or .type=="meta") | [.origin_ns,.ts_ns,.dur_ns]' "$T/k.ndjson"
	assert_output $'[1775078550000000000,null,null]\n[null,88437691101729,40]'
	# an epoch clock without baseTimeNanoseconds: moved to a whole second
	chrome2ndjson "$FIXTURES/chrome/hta_alexnet.json.gz" > "$T/a.ndjson"
	run jq -c 'select(.name=="[param|cuda]") | [.ts_ns,.dur_ns]' "$T/a.ndjson"
	assert_output '[514261000,43425283000]'
	# values a double cannot hold exactly
	trace '{"ph":"X","name":"a","pid":1,"tid":1,"ts":1700000000123456.789,"dur":0.001}' \
	    '{"ph":"X","name":"b","pid":1,"tid":1,"ts":1700000000123457.0005,"dur":1e-3}' > "$T/e.json"
	chrome2ndjson "$T/e.json" > "$T/e.ndjson"
	check "$T/e.ndjson"
	run grep -c '"origin_ns":1700000000000000000,' "$T/e.ndjson"
	assert_output 1
	run jq -c 'select(.type=="span") | [.name,.ts_ns,.dur_ns]' "$T/e.ndjson"
	assert_output $'["a",123456789,1]\n["b",123457001,1]'
	# small clocks keep their values, origin 0
	trace '{"ph":"X","name":"a","pid":1,"tid":1,"ts":5,"dur":2.5}' > "$T/s.json"
	run bash -c "chrome2ndjson '$T/s.json' | jq -c '[.origin_ns,.ts_ns,.dur_ns]'"
	assert_line --index 0 '[0,null,null]'
	assert_line --index 1 '[null,5000,2500]'
}

@test "GPU kernels carry the scope and step of the CPU op that launched them" {
	need_fixtures
	chrome2ndjson "$FIXTURES/chrome/hta_mi250_rocm.json.gz" > "$T/m.ndjson"
	# correlation 136 is launched inside Optimizer.step#SGD.step in step 1
	run jq -c 'select(.cat=="kernel" and .args.correlation==136) | [.scope,.step,.device,.pid,.tid]' "$T/m.ndjson"
	assert_output '["Optimizer.step#SGD.step",1,"GPU:2",2,0]'
	run jq -c 'select(.name=="ProfilerStep#2") | [.step,.scope]' "$T/m.ndjson"
	assert_output '[2,null]'
	# nested annotations on the CPU, and the kernel below them
	chrome2ndjson "$FIXTURES/chrome/hta_alexnet.json.gz" > "$T/a.ndjson"
	run jq -r 'select(.cat=="kernel" and .args.correlation==5112) | .scope' "$T/a.ndjson"
	assert_output '[param|cuda]/[param|pytorch.model.alex_net|0|0|0]/[param|pytorch.model.alex_net|0|0|0|warmup|forward]/[param|pytorch.model.alex_net|0|0|0|warmup|forward]'
	run jq -r 'select(.type=="span" and .args.correlation==5112 and .cat=="cuda_runtime") | .scope' "$T/a.ndjson"
	assert_output "$(jq -r 'select(.cat=="kernel" and .args.correlation==5112) | .scope' "$T/a.ndjson")"
}

@test "the launch is found through ac2g flows when a kernel has no correlation" {
	trace '{"ph":"X","cat":"user_annotation","name":"ProfilerStep#4","pid":1,"tid":1,"ts":0,"dur":100}' \
	    '{"ph":"X","cat":"user_annotation","name":"fwd","pid":1,"tid":1,"ts":1,"dur":50}' \
	    '{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":10,"dur":5}' \
	    '{"ph":"s","cat":"ac2g","name":"ac2g","id":77,"pid":1,"tid":1,"ts":10}' \
	    '{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":200,"dur":5,"args":{"device":0}}' \
	    '{"ph":"f","cat":"ac2g","name":"ac2g","id":77,"pid":0,"tid":7,"ts":200,"bp":"e"}' > "$T/f.json"
	chrome2ndjson "$T/f.json" > "$T/f.ndjson"
	check "$T/f.ndjson"
	run jq -c 'select(.name=="k") | [.scope,.step,.device]' "$T/f.ndjson"
	assert_output '["fwd",4,"GPU:0"]'
	run jq -c 'select(.type=="flow") | [.flow_id,.flow_phase,.args.bp]' "$T/f.ndjson"
	assert_output $'[77,"s",null]\n[77,"f","e"]'
}

@test "legacy torch profiler: string pid, labels as scope, ProfilerStep as step" {
	need_fixtures
	chrome2ndjson "$FIXTURES/torch-legacy/single.pt.trace.json.gz" > "$T/s.ndjson"
	check "$T/s.ndjson"
	run jq -c 'select(.name=="block.0/attention") | [.pid,.tid,.process,.device,.scope,.step,.ts_ns,.dur_ns]' "$T/s.ndjson"
	assert_line --index 0 '[1,1,"CPU functions","CPU","forward/block.0",1,1114000,4704000]'
	# a label that repeats its parent's name is not repeated in the path
	run jq -r 'select(.type=="span" and .scope=="forward/block.0/attention") | .name' "$T/s.ndjson"
	assert_line 'aten::bmm'
	run jq -c 'select(.type=="span" and (.name|startswith("ProfilerStep#"))) | [.name,.step,.scope]' "$T/s.ndjson"
	assert_output $'["ProfilerStep#1",1,null]\n["ProfilerStep#2",2,null]\n["ProfilerStep#3",3,null]'
	# every span of a step window carries the step
	run jq -s -c '[.[] | select(.type=="span" and .ts_ns >= 403000 and .ts_ns < 81402000) | .step] | unique' "$T/s.ndjson"
	assert_output '[1]'
}

@test "PyTorch's own self CPU times agree with the exclusive times of the spans" {
	need_fixtures
	# Tolerance (tests/tools/chrome_count.py selftime): the total self time
	# within 0.1 %, each operator with >= 1 % of it within 2 % (or 2 us a
	# call); torch keeps exact times, the file whole microseconds.
	for n in single before after ddp_rank0 ddp_rank1; do
		chrome2ndjson "$FIXTURES/torch-legacy/$n.pt.trace.json.gz" > "$T/$n.ndjson"
		run "$PY" "$COUNT" selftime "$T/$n.ndjson" "$FIXTURES/torch-legacy/$n.key_averages.json"
		[ "$status" -eq 0 ] || fail "$n: $output"
	done
}

@test "rank: distributedInfo, else --rank, else rank<N>, rank-<N>, rank_<N> in the name" {
	need_fixtures
	run bash -c "chrome2ndjson --rank 9 '$FIXTURES/chrome/hta_cpu_only_rank-34.pt.trace.json.gz' | jq -s -c 'map(select(.type!=\"end\") | .rank) | unique'"
	assert_output '[34]'
	run bash -c "chrome2ndjson '$FIXTURES/torch-legacy/ddp_rank1.pt.trace.json.gz' | jq -s -c 'map(select(.type!=\"end\") | .rank) | unique'"
	assert_output '[1]'
	run bash -c "chrome2ndjson --rank 7 '$FIXTURES/torch-legacy/ddp_rank1.pt.trace.json.gz' | jq -s -c 'map(select(.type!=\"end\") | .rank) | unique'"
	assert_output '[7]'
	trace '{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1}' > "$T/job_Rank_12.json"
	cp "$T/job_Rank_12.json" "$T/frank3.json"
	cp "$T/job_Rank_12.json" "$T/worker.json"
	run bash -c "chrome2ndjson '$T/job_Rank_12.json' '$T/frank3.json' '$T/worker.json' | jq -c 'select(.type==\"meta\") | .rank'"
	assert_output $'12\nnull\nnull'
}

@test "pid/tid strings: numeric ones are numbers, others small stable integers" {
	need_fixtures
	chrome2ndjson --no-args "$FIXTURES/chrome/kineto2021_resnet50_nw0.pt.trace.json.gz" > "$T/k.ndjson"
	check "$T/k.ndjson"
	run bash -c "grep '^{\"type\":\"span\"' '$T/k.ndjson' | sed -E 's/,\"(rank|step|cat)\".*/}/; s/.*\"pid\"/{\"pid\"/' | sort -u | jq -s -c 'map([.pid,.tid,.process,.thread,.device]) | sort'"
	assert_output '[[0,1,"python","stream 7","GPU:0"],[9,1,"Traces","PyTorch Profiler",null],[119771,509646592,"python","thread 0 (python)","CPU"],[119771,1890023232,"python","thread 1 (python)","CPU"]]'
}

@test "order: each timeline by ts, longer first; the same stream from shuffled input" {
	need_fixtures
	files="chrome/hta_alexnet.json.gz chrome/xprof_handwritten_trace.json"
	[ -n "${ND_ASAN:-}" ] || files="$files chrome/hta_mi250_rocm.json.gz
	    chrome/dlrm_8ranks/worker3_step_12.1694128201557.pt.trace.json.gz
	    torch-legacy/single.pt.trace.json.gz"
	for f in $files; do
		"$PY" "$COUNT" shuffle "$FIXTURES/$f" "$T/shuf.json" 42
		chrome2ndjson -q "$FIXTURES/$f" > "$T/a.ndjson"
		chrome2ndjson -q "$T/shuf.json" > "$T/b.ndjson"
		check "$T/a.ndjson"
		check "$T/b.ndjson"
		grep -v -e '"type":"meta"' -e '"type":"end"' "$T/a.ndjson" | sort > "$T/a.sorted"
		grep -v -e '"type":"meta"' -e '"type":"end"' "$T/b.ndjson" | sort > "$T/b.sorted"
		cmp -s "$T/a.sorted" "$T/b.sorted" || fail "$f: shuffled input gives other records"
	done
	# spans in reverse order, parents after children (labels, without cat)
	trace '{"ph":"X","name":"c","pid":1,"tid":1,"ts":3,"dur":1}' \
	    '{"ph":"X","name":"b","pid":1,"tid":1,"ts":2,"dur":5}' \
	    '{"ph":"X","name":"a","pid":1,"tid":1,"ts":2,"dur":9}' > "$T/r.json"
	run bash -c "chrome2ndjson '$T/r.json' | jq -r 'select(.type==\"span\") | \"\(.name) \(.scope // \"-\")\"'"
	assert_output $'a -\nb a\nc a/b'
}

@test "phases: B/E pairs, instants, counters, samples, flows, async spans" {
	trace '{"ph":"B","name":"outer","pid":1,"tid":1,"ts":10,"args":{"x":1}}' \
	    '{"ph":"B","name":"inner","pid":1,"tid":1,"ts":11}' \
	    '{"ph":"E","pid":1,"tid":1,"ts":12,"args":{"y":2}}' \
	    '{"ph":"E","pid":1,"tid":1,"ts":20,"args":{"x":9,"z":3}}' \
	    '{"ph":"E","pid":1,"tid":1,"ts":30}' \
	    '{"ph":"B","name":"open","pid":1,"tid":2,"ts":30}' \
	    '{"ph":"i","name":"mark","pid":1,"tid":1,"ts":15,"s":"t"}' \
	    '{"ph":"C","name":"mem","pid":1,"ts":16,"args":{"used":5,"free":7}}' \
	    '{"ph":"P","name":"sample","pid":1,"tid":1,"ts":17}' \
	    '{"ph":"b","cat":"io","name":"read","id":"0x1","pid":1,"ts":40}' \
	    '{"ph":"n","cat":"io","name":"step","id":"0x1","pid":1,"ts":41}' \
	    '{"ph":"e","cat":"io","name":"read","id":"0x1","pid":1,"ts":45}' \
	    '{"ph":"O","name":"snapshot","pid":1,"ts":1,"id":1}' > "$T/p.json"
	chrome2ndjson "$T/p.json" > "$T/p.ndjson" 2> "$T/err"
	check "$T/p.ndjson"
	run jq -c 'select(.type!="meta" and .type!="end") | [.type,.name,.ts_ns,.dur_ns,.tid,.thread,.args,.values]' "$T/p.ndjson"
	assert_output - <<'EOF'
["span","outer",10000,10000,1,null,{"x":1,"z":3},null]
["span","inner",11000,1000,1,null,{"y":2},null]
["instant","mark",15000,null,1,null,{"s":"t"},null]
["counter","mem",16000,null,3,null,null,{"used":5,"free":7}]
["instant","sample",17000,null,1,null,null,null]
["span","read",40000,5000,4,"async io 0x1",null,null]
["instant","step",41000,null,4,"async io 0x1",null,null]
EOF
	run end_of "$T/p.ndjson" '[.spans,.instants,.counters,.skipped,.warnings]'
	assert_output '[3,3,1,{"unsupported_ph":1,"unmatched_B":1,"unmatched_E":1},["skipped 1 B (begin) event without an E","skipped 1 E (end) event without a B","skipped 1 event of an unsupported phase"]]'
	run cat "$T/err"
	assert_line --index 0 "chrome2ndjson: $T/p.json: skipped 1 B (begin) event without an E"
}

@test "one bad event is a counted skip; the rest is converted" {
	trace '1' '"x"' '[]' '{"name":"no ph","ts":1}' '{"ph":"X","name":"no ts"}' \
	    '{"ph":"X","name":"neg","ts":1,"dur":-1}' '{"ph":"X","name":"nodur","ts":1}' \
	    '{"ph":"X","name":"bad ts","ts":"1 us","dur":1}' '{"ph":"X","name":7,"ts":1,"dur":1}' \
	    '{"ph":"X","name":"pid","pid":[1],"ts":1,"dur":1}' '{"ph":"X","name":"args","args":3,"ts":1,"dur":1}' \
	    '{"ph":"s","name":"flow without id","ts":1}' '{"ph":"XX","ts":1}' \
	    '{"ph":"X","name":"ok","pid":1,"tid":1,"ts":1,"dur":1}' > "$T/b.json"
	run bash -c "chrome2ndjson '$T/b.json' 2>/dev/null"
	assert_success
	assert_line --index 1 --partial '"name":"ok"'
	run bash -c "chrome2ndjson -q '$T/b.json' | tail -1 | jq -c '[.events,.spans,.skipped]'"
	assert_output '[14,1,{"not_an_object":3,"no_ph":1,"bad_ph":1,"no_ts":1,"bad_ts":1,"no_dur":1,"negative_dur":1,"bad_name":1,"bad_pid":1,"bad_args":1,"no_id":1}]'
	run bash -c "chrome2ndjson '$T/b.json' 2>&1 >/dev/null"
	assert_output "chrome2ndjson: $T/b.json: skipped 13 malformed events (see \"skipped\" in the end record)"
}

@test "fatal input errors: one line with the byte offset, exit 2" {
	bad() {	# input expected-message
		printf '%s' "$1" > "$T/x.json"
		run chrome2ndjson "$T/x.json"
		assert_failure 2
		assert_output "chrome2ndjson: $T/x.json: $2"
	}
	bad '' 'byte 1: empty input: not a Chrome trace'
	bad 'null' "byte 1: not a Chrome trace: expected '{' or '[', found 'n'"
	bad '{}' 'byte 2: no "traceEvents" member: not a Chrome trace'
	bad '{"traceEvents":{}}' "byte 16: \"traceEvents\" is not an array (found '{')"
	bad '{"traceEvents":"x"}' "byte 16: \"traceEvents\" is not an array (found '\"')"
	bad '{"traceEvents":[],"traceEvents":[]}' 'byte 19: a second "traceEvents" member'
	bad '{"traceEvents":[{"ph":"X","ts":NaN}]}' 'byte 32: invalid JSON: NaN and Infinity are not JSON; text there: NaN}]}'
	bad '{"traceEvents":[{"ph":"X","ts":1,"name":"a\x"}]}' 'byte 43: invalid JSON: invalid escape in string; text there: \x"}]}'
	bad '{"traceEvents":[{"ph":"X","name":"\ud800\u12"}]}' 'byte 41: invalid JSON: invalid \u escape in string; text there: \u12"}]}'
	bad $'{"traceEvents":[{"name":"\xff"}]}' 'byte 26: invalid JSON: invalid UTF-8 in string; text there: ?"}]}'
	bad '{"traceEvents":[]} x' "byte 20: trailing data after the JSON document, found 'x'"
	bad '{"traceEvents":[{}' "byte 19: expected ',' or ']' after an event in \"traceEvents\", found the end of the input (truncated file?)"
	bad '{"traceEvents":[{},]}' "byte 20: expected an event in \"traceEvents\", found ']'"
}

@test "the real file with unescaped quotes in names is refused clearly" {
	need_fixtures
	f="$FIXTURES/torch-legacy/edge_unescaped_names.pt.trace.json"
	run chrome2ndjson "$f"
	assert_failure 2
	assert_output "chrome2ndjson: $f: byte 331: invalid JSON: expected ',' or '}' in object; text there: hi\"\", \"ph\": \"X\", \"ts\": 1"
}

@test "truncated input: gzip, and JSON cut at many offsets" {
	need_fixtures
	f="$FIXTURES/chrome/kineto_before_fix.json"
	gzip -c "$f" | head -c 900 > "$T/t.json.gz"
	run chrome2ndjson "$T/t.json.gz"
	assert_failure 2
	assert_output "chrome2ndjson: $T/t.json.gz: truncated gzip data (input ends at compressed byte 900)"
	size=$(stat -c %s "$f")
	step=$((size / $([ -n "${ND_ASAN:-}" ] && echo 12 || echo 30)))
	for ((i = 1; i < size - 2; i += step)); do
		head -c "$i" "$f" > "$T/cut.json"
		run chrome2ndjson "$T/cut.json"
		[ "$status" -eq 2 ] || fail "cut at $i: exit $status: $output"
		[ "${#lines[@]}" -eq 1 ] || fail "cut at $i: $output"
		[[ "$output" == "chrome2ndjson: $T/cut.json: byte "[0-9]*": "* ]] || fail "cut at $i: $output"
	done
	# the bare array form may end without ']' (Trace Event Format): a warning
	printf '[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1},\n' > "$T/open.json"
	run bash -c "chrome2ndjson '$T/open.json' 2>'$T/err'"
	assert_success
	assert_line --index 2 --partial '"suspected_truncation":true'
	run cat "$T/err"
	assert_output "chrome2ndjson: $T/open.json: the event array is not closed (allowed by the Trace Event Format, but the file may be truncated)"
}

@test "a 1 GB string is refused at the 64 MiB limit without holding it" {
	cat > "$T/big.sh" <<'EOF'
{ printf '{"traceEvents":[{"ph":"X","ts":1,"name":"'
  head -c 1073741824 /dev/zero | tr '\0' a
  printf '"}]}'; } | chrome2ndjson -
EOF
	run bash "$T/big.sh"
	assert_failure 2
	assert_output 'chrome2ndjson: <stdin>: byte 17: event larger than 64 MiB: refusing to hold it in memory'
}

@test "suspected_truncation when exactly 1,000,000 complete events" {
	awk 'BEGIN { printf "["; for (i = 0; i < 1000000; i++)
	    printf "%s{\"ph\":\"X\",\"ts\":%d,\"dur\":0}", (i ? "," : ""), i; print "]" }' |
	    chrome2ndjson --no-args - 2> "$T/err" | tail -1 > "$T/end"
	run jq -c '[.spans,.suspected_truncation,.warnings]' "$T/end"
	assert_output '[1000000,true,["exactly 1000000 events: the count of a known export cap, the trace is probably truncated"]]'
	run cat "$T/err"
	assert_output 'chrome2ndjson: <stdin>: exactly 1000000 events: the count of a known export cap, the trace is probably truncated'
}

@test "top-level members before or after traceEvents; metadata anywhere" {
	printf '%s' '{"traceName":"t","traceEvents":[{"ph":"X","name":"k","cat":"kernel","pid":5,"tid":3,"ts":1,"dur":1,"args":{"device":1}},
	    {"ph":"M","name":"thread_name","pid":5,"tid":3,"args":{"name":"stream 3"}}],
	    "baseTimeNanoseconds":1700000000000000000,"distributedInfo":{"rank":2,"world_size":4},
	    "deviceProperties":[{"id":1,"name":"H100"}]}' > "$T/m.json"
	chrome2ndjson "$T/m.json" > "$T/m.ndjson"
	check "$T/m.ndjson"
	run head -1 "$T/m.ndjson"
	assert_output --partial '"origin_ns":1700000000000000000,"host":null,"rank":2,"producer":"chrome2ndjson 0.1.0","header":{"traceName":"t","baseTimeNanoseconds":1700000000000000000,"distributedInfo":{"rank":2,"world_size":4},"deviceProperties":[{"id":1,"name":"H100"}]}}'
	run jq -c 'select(.type=="span") | [.thread,.device,.rank,.class]' "$T/m.ndjson"
	assert_output '["stream 3","GPU:1",2,"compute"]'
	# without args.device: the pid names the GPU when deviceProperties has it
	trace '{"ph":"X","cat":"kernel","name":"k","pid":1,"tid":7,"ts":1,"dur":1}' \
	    '{"ph":"X","cat":"kernel","name":"k","pid":5,"tid":7,"ts":1,"dur":1}' |
	    sed 's/^{/{"deviceProperties":[{"id":0},{"id":1}],/' > "$T/d.json"
	run bash -c "chrome2ndjson '$T/d.json' | jq -c 'select(.type==\"span\") | [.pid,.device]'"
	assert_output $'[1,"GPU:1"]\n[5,"GPU"]'
}

@test "several files are several sources; stdin and gzip; -o writes atomically" {
	need_fixtures
	a="$FIXTURES/chrome/hta_triton.json.gz"
	b="$FIXTURES/chrome/kineto_before_fix.json"
	chrome2ndjson -o "$T/two.ndjson" "$a" "$b"
	check "$T/two.ndjson"
	run jq -r 'select(.type=="meta" or .type=="end") | .type' "$T/two.ndjson"
	assert_output $'meta\nend\nmeta\nend'
	run bash -c "chrome2ndjson - < '$a' | grep -v '\"type\":\"meta\"'"
	assert_output "$(chrome2ndjson "$a" | grep -v '"type":"meta"')"
	run bash -c "chrome2ndjson - < '$a' | head -1 | jq -r .source"
	assert_equal "$output" "-"
	# a failed run leaves no output file behind
	run chrome2ndjson -o "$T/none.ndjson" "$a" "$FIXTURES/torch-legacy/edge_unescaped_names.pt.trace.json"
	assert_failure 2
	[ ! -e "$T/none.ndjson" ] || fail "partial output left"
	run bash -c "ls '$T' | grep -c tmp || true"
	assert_output 0
}

@test "--no-args and --no-flows cut volume; counts still add up" {
	need_fixtures
	f="$FIXTURES/chrome/hta_alexnet.json.gz"
	chrome2ndjson --no-args --no-flows "$f" > "$T/n.ndjson"
	check "$T/n.ndjson"
	run jq -s -c '[map(select(.args)) | length, map(select(.type=="flow")) | length]' "$T/n.ndjson"
	assert_output '[0,0]'
	run end_of "$T/n.ndjson" '[.spans,.flows,.skipped]'
	assert_output '[868,0,{"flow_not_written":500}]'
}

@test "a reader that goes away ends the run quietly; usage errors exit 2" {
	need_fixtures
	run bash -c "chrome2ndjson '$FIXTURES/chrome/hta_diff_control.json.gz' | head -1 | jq -r .type; echo \${PIPESTATUS[0]}"
	assert_output $'meta\n0'
	run chrome2ndjson --rank x
	assert_failure 2
	assert_line --index 0 "chrome2ndjson: invalid value for --rank: 'x'"
	run chrome2ndjson --bogus
	assert_failure 2
	assert_line --index 1 'usage: chrome2ndjson [-hqV] [--all-captures] [--list] [--no-args] [--no-flows] [-o file] [--rank n] [-r file] [--rules-add file] [--run name] [path ...]'
	run chrome2ndjson "$T/missing.json"
	assert_failure 2
	assert_output "chrome2ndjson: $T/missing.json: No such file or directory"
	run chrome2ndjson -h
	assert_success
	assert_line --index 0 'usage: chrome2ndjson [-hqV] [--all-captures] [--list] [--no-args] [--no-flows] [-o file] [--rank n] [-r file] [--rules-add file] [--run name] [path ...]'
}

@test "--rules: a user's rule table decides class and family" {
	trace '{"ph":"X","cat":"kernel","name":"my_fused_thing","pid":1,"tid":1,"ts":1,"dur":1}' > "$T/r.json"
	printf '# class family name long_name cat process thread\n' > "$T/rules.tsv"
	printf 'compute\tattention\tfused_thing\t*\t*\t*\t*\n' >> "$T/rules.tsv"
	run bash -c "chrome2ndjson --rules '$T/rules.tsv' '$T/r.json' | jq -c 'select(.type==\"span\") | [.class,.family]'"
	assert_output '["compute","attention"]'
}

# The ordered path: chrome2ndjson FILE with a budget of $2 records (it is
# streamed past the budget when ordered) against the buffered path (stdin):
# the same records, end record and warnings; $3 the path taken
# (CHROME2NDJSON_STATS), or "any" (then left in $HOW).  Extra arguments are
# options for both.  The buffered run depends only on the bytes and the
# options, so it is made once for each pair (runs are slow under ASan).
same_as_buffered() {
	local f=$1 budget=$2 want=$3 key
	shift 3
	CHROME2NDJSON_BUDGET=$budget CHROME2NDJSON_STATS=1 chrome2ndjson "$@" \
	    "$f" > "$T/file.out" 2> "$T/file.err" || fail "$f: exit $?"
	key="$(cksum < "$f") $*"
	if [ "$key" != "$(cat "$T/stdin.key" 2> /dev/null)" ]; then
		chrome2ndjson "$@" - < "$f" > "$T/stdin.out" 2> "$T/stdin.err" ||
		    fail "$f: stdin: exit $?"
		sed -i '1s/"source":"[^"]*"/"source":""/' "$T/stdin.out"
		sed 's|<stdin>|F|' "$T/stdin.err" > "$T/stdin.warn"
		printf '%s\n' "$key" > "$T/stdin.key"
	fi
	if [ "$want" = any ]; then
		HOW=$(sed -n "s#^chrome2ndjson: $f: \(buffered\|streamed\|rebuffered\)\$#\1#p" "$T/file.err" | head -1)
		[ -n "$HOW" ] || fail "$f (budget $budget): no path taken: $(cat "$T/file.err")"
		want=$HOW
	fi
	grep -qx "chrome2ndjson: $f: $want" "$T/file.err" ||
	    fail "$f (budget $budget): not $want: $(grep -v ': warning' "$T/file.err" | grep "$f: [a-z]*$")"
	sed -i '1s/"source":"[^"]*"/"source":""/' "$T/file.out"
	cmp -s "$T/file.out" "$T/stdin.out" ||
	    fail "$f (budget $budget, $want): output differs from the buffered path"
	grep -v "^chrome2ndjson: $f: \(buffered\|streamed\|rebuffered\)\$" \
	    "$T/file.err" | sed "s|$f|F|" > "$T/file.warn"
	cmp -s "$T/file.warn" "$T/stdin.warn" ||
	    fail "$f (budget $budget): warnings differ: $(diff "$T/file.warn" "$T/stdin.warn")"
}

# An ordered trace (ndjson2chrome writes the output order): 3000 spans on
# 4 timelines, process and thread names after the events.
ordered_trace() {
	"$ND_BIN/gen-stream" -R -n 3000 -s 5 | ndjson2chrome > "$1"
}

@test "ordered path: an ordered file is streamed past the budget, the same bytes as buffered (plain, gzip, options)" {
	ordered_trace "$T/o.json"
	gzip -c "$T/o.json" > "$T/o.json.gz"
	for f in "$T/o.json" "$T/o.json.gz"; do
		for b in 1 2 100 2999; do
			same_as_buffered "$f" "$b" streamed
		done
		same_as_buffered "$f" 3000 streamed
		same_as_buffered "$f" 3001 buffered
		same_as_buffered "$f" 50 streamed --no-args
		same_as_buffered "$f" 50 streamed --no-flows --rank 3
	done
	# real values: every span, the names of the metadata at the end
	run end_of "$T/file.out" '[.events,.spans,.metadata]'
	assert_output '[3012,3000,12]'
	run jq -c 'select(.type=="span") | .process' "$T/file.out"
	refute_output --partial null
	# without the environment a file this small is buffered
	CHROME2NDJSON_STATS=1 chrome2ndjson "$T/o.json" 2>&1 > /dev/null |
	    grep -qx "chrome2ndjson: $T/o.json: buffered" || fail "not buffered"
}

@test "ordered path: disorder before the budget keeps the buffered path, after it takes the spooled records back; same bytes" {
	ordered_trace "$T/o.json"
	# a span starting before its timeline's first one, just before the
	# metadata at the end of traceEvents
	sed '0,/^{"ph":"M"/s//{"ph":"X","name":"late","pid":1,"tid":3,"ts":0,"dur":0.5},\n&/' \
	    "$T/o.json" > "$T/late.json"
	grep -q '"name":"late"' "$T/late.json" || fail "sed did not insert"
	gzip -c "$T/late.json" > "$T/late.json.gz"
	for f in "$T/late.json" "$T/late.json.gz"; do
		same_as_buffered "$f" 1 rebuffered
		same_as_buffered "$f" 2999 rebuffered
		same_as_buffered "$f" 3001 buffered
	done
	# rebuffered, converted once: one meta record, the late span
	grep -c '"type":"meta"' "$T/file.out" | grep -qx 1 || fail "two meta records"
	run jq -c 'select(.name=="late") | [.ts_ns,.dur_ns]' "$T/file.out"
	assert_output '[0,500]'
	# disorder early in a file of many reader batches
	"$ND_BIN/gen-stream" -R -n 40000 -s 7 | ndjson2chrome |
	    sed '1000s/^/{"ph":"X","name":"late","pid":1,"tid":3,"ts":0,"dur":0.5},\n/' \
	    > "$T/big.json"
	same_as_buffered "$T/big.json" 100 rebuffered
	# disorder on the first records: budget reached unordered, buffered
	sed '0,/^{"ph":"X"/s//{"ph":"X","name":"early","pid":1,"tid":3,"ts":999999,"dur":1},\n&/' \
	    "$T/o.json" > "$T/early.json"
	same_as_buffered "$T/early.json" 10 buffered
	# B/E pairs are never streamed
	trace '{"ph":"X","name":"b","pid":1,"tid":1,"ts":0,"dur":1}' \
	    '{"ph":"B","name":"a","pid":1,"tid":1,"ts":1}' \
	    '{"ph":"E","pid":1,"tid":1,"ts":5}' > "$T/be.json"
	same_as_buffered "$T/be.json" 1 rebuffered
	same_as_buffered "$T/be.json" 2 buffered
	run jq -c 'select(.type=="span") | [.name,.dur_ns]' "$T/file.out"
	assert_output $'["b",1000]\n["a",4000]'
}

@test "ordered path: kernels take the scope and step of launches found later in the file" {
	# each timeline in order; the kernels come first, the launches and
	# the ProfilerStep (on another thread) after them
	trace '{"ph":"X","cat":"kernel","name":"k1","pid":0,"tid":7,"ts":30,"dur":5,"args":{"device":0,"correlation":11}}' \
	    '{"ph":"X","cat":"kernel","name":"k2","pid":0,"tid":7,"ts":70,"dur":5,"args":{"device":0,"correlation":12}}' \
	    '{"ph":"X","cat":"kernel","name":"k3","pid":0,"tid":7,"ts":80,"dur":5,"args":{"device":0}}' \
	    '{"ph":"X","cat":"user_annotation","name":"fwd","pid":100,"tid":100,"ts":10,"dur":50}' \
	    '{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":100,"tid":100,"ts":12,"dur":3,"args":{"correlation":11}}' \
	    '{"ph":"s","cat":"ac2g","name":"ac2g","id":11,"pid":100,"tid":100,"ts":12}' \
	    '{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":100,"tid":100,"ts":65,"dur":3,"args":{"correlation":12}}' \
	    '{"ph":"i","name":"mark","pid":100,"tid":100,"ts":66,"s":"t"}' \
	    '{"ph":"C","name":"mem","pid":100,"tid":100,"ts":67,"args":{"bytes":5}}' \
	    '{"ph":"X","cat":"user_annotation","name":"ProfilerStep#3","pid":100,"tid":200,"ts":0,"dur":100}' \
	    '{"ph":"M","name":"process_name","pid":0,"args":{"name":"GPU 0"}}' > "$T/k.json"
	same_as_buffered "$T/k.json" 1 streamed
	run jq -c 'select(.type=="span" or .type=="instant") | [.name,.scope,.step,.device]' "$T/file.out"
	assert_output - <<'OUT'
["k1","fwd",3,"GPU:0"]
["k2",null,3,"GPU:0"]
["k3",null,null,"GPU:0"]
["fwd",null,3,"CPU"]
["cudaLaunchKernel","fwd",3,"CPU"]
["cudaLaunchKernel",null,3,"CPU"]
["mark",null,3,"CPU"]
["ProfilerStep#3",null,3,"CPU"]
OUT
	# a device op found only through an ac2g 'f' flow needs the buffered
	# path's look-around: the input is not streamed
	sed 's/^{"traceEvents":\[/&{"ph":"f","cat":"ac2g","name":"ac2g","id":13,"pid":0,"tid":7,"ts":80,"bp":"e"},/' \
	    "$T/k.json" > "$T/kf.json"
	same_as_buffered "$T/kf.json" 1 rebuffered
	run jq -c 'select(.name=="k3") | [.scope,.step]' "$T/file.out"
	assert_output '[null,null]'
}

@test "ordered path: fixtures, whether ordered or not, give the same bytes on both paths" {
	need_fixtures
	n=0 streamed=0
	for f in $(chrome_fixtures); do
		# the sanitizer pass takes the paths on the smaller files (under
		# 400 KB, 25 of 29), and of the ranks of one job (the DLRM and the
		# HTA sampled ranks, one producer's shape) on the first only: 17;
		# the normal pass covers every fixture
		if [ -n "${ND_ASAN:-}" ]; then
			[ "$(wc -c < "$f")" -gt 400000 ] && continue
			case $f in
			*/dlrm_8ranks/worker[1-7]_* | */hta_sampled_rank-[1-9].*) continue ;;
			esac
		fi
		case $f in
		*.gz) g="$T/in.json.gz" ;;
		*) g="$T/in.json" ;;
		esac
		# a neutral name: the rank in a file name is no part of this
		cp "$f" "$g"
		for b in 1 40; do
			# buffered, streamed, or rebuffered (spooled, then
			# taken back into memory)
			same_as_buffered "$g" "$b" any
			[ "$HOW" = streamed ] && streamed=$((streamed + 1))
		done
		rm -f "$g"
		n=$((n + 1))
	done
	[ "$n" -ge "$([ -n "${ND_ASAN:-}" ] && echo 17 || echo 25)" ] || fail "only $n fixtures found"
	# hta_cpu_only, hta_triton and the torch-legacy traces are ordered
	[ "$streamed" -ge 8 ] || fail "only $streamed conversions streamed"
}

@test "ordered path: an input error names the file and byte offset, nothing is written" {
	ordered_trace "$T/o.json"
	head -c 200000 "$T/o.json" > "$T/cut.json"
	printf '{"ph":"X",}' >> "$T/cut.json"
	CHROME2NDJSON_BUDGET=10 run chrome2ndjson -o "$T/out" "$T/cut.json"
	assert_failure 2
	assert_output --regexp "^chrome2ndjson: $T/cut.json: byte 20[0-9]+: "
	[ ! -e "$T/out" ] || fail "output written"
	run bash -c "chrome2ndjson - < '$T/cut.json' 2>&1 | sed 's|<stdin>|F|'"
	want=$output
	CHROME2NDJSON_BUDGET=10 run bash -c "chrome2ndjson '$T/cut.json' 2>&1 | sed 's|$T/cut.json|F|'"
	assert_output "$want"
}
