#!/bin/sh
# Seeds for the input-recognition and option-value paths: durations with
# and without units (fuzz_cli), and the first lines of documents that are
# not ndtrace streams, as the line reader hands them to the decoder
# (fuzz_ndjson): pretty-printed and one-line Chrome JSON, legacy arrays, a
# BOM, an XPlane header, a record whose first key is Chrome's.
#   sh fuzz/seeds-cli.sh BIN_DIR CORPUS_DIR FIXTURES_DIR
set -eu
C=$2
FX=${3:-}
mkdir -p "$C/fuzz_cli" "$C/fuzz_ndjson"
for d in 0 00 0.0 0. .0 10 1e3ns 10parsecs 5us5 '0 ' 0x10ms +1s -0 000000000000000000000009s; do
	printf '%s' "$d" > "$C/fuzz_cli/h4-$(printf '%s' "$d" | od -An -tx1 | tr -d ' \n')"
done
printf '{' > "$C/fuzz_ndjson/h4-brace"
printf '{"traceEvents":[{"ph":"X","name":"k","pid":0,"tid":7,"ts":5,"dur":1}]}' > "$C/fuzz_ndjson/h4-oneline"
printf '[{"name":"aten::zeros","ph":"X","ts":100,"dur":14,"tid":1,"pid":"CPU functions"}]' > "$C/fuzz_ndjson/h4-legacy"
printf '\357\273\277{"type":"span","ts_ns":0,"dur_ns":1,"name":"a","pid":1,"tid":1}' > "$C/fuzz_ndjson/h4-bom"
printf '{"traceEvents":1,"type":"span","ts_ns":0,"dur_ns":5,"name":"a","pid":1,"tid":1}' > "$C/fuzz_ndjson/h4-chromekey"
printf '\012\307\251\001\022\016/host:metadata' > "$C/fuzz_ndjson/h4-xplane"
if [ -n "$FX" ] && [ -f "$FX/chrome/xprof_handwritten_trace.json" ]; then
	head -c 2048 "$FX/chrome/xprof_handwritten_trace.json" > "$C/fuzz_ndjson/h4-xprof"
fi
