#!/bin/sh
# Seeds for fuzz_xplane, fuzz_xplane2ndjson (the same files) and
# fuzz_chrome: the generators' tiny and broken
# profiles, small Kineto traces (plain and gzip), hand-made edge cases, and
# the small files of tests/fixtures (under 64 KiB, the -max_len).
#   sh fuzz/seeds-ingest.sh BIN_DIR CORPUS_DIR FIXTURES_DIR
set -eu
BIN=$1
X=$2/fuzz_xplane
C=$2/fuzz_chrome
FX=${3:-}
mkdir -p "$X" "$C"
"$BIN/gen-xplane" --tiny -o "$X/tiny"
"$BIN/gen-xplane" --tiny --kind gpu -o "$X/tiny-gpu"
for k in varint length evmd statmd ref wiretype; do
	"$BIN/gen-xplane" --broken "$k" -o "$X/broken-$k"
done
"$BIN/gen-xplane" --events 200 --seed 3 -o "$X/gen200"
"$BIN/gen-xplane" --events 200 --seed 4 --kind gpu -o "$X/gen200-gpu"
printf '' > "$X/empty"
for e in 5 40 200; do
	"$BIN/gen-kineto" -e "$e" -s "$e" -r 1 -o "$C/kineto$e"
done
gzip -9nc "$C/kineto40" > "$C/kineto40.gz"
printf '[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":2},{"ph":"B","name":"b","pid":1,"tid":1,"ts":1.5},{"ph":"E","pid":1,"tid":1,"ts":2.5}' > "$C/bare-unclosed"
printf '{"traceEvents":[{"ph":"M","name":"process_name","pid":"p","args":{"name":"x"}},{"ph":"M","name":"thread_name","pid":"p","tid":7,"args":{"name":"t"}},{"ph":"b","cat":"c","id":"0x1","name":"q","pid":"p","tid":7,"ts":1},{"ph":"e","cat":"c","id":"0x1","pid":"p","tid":7,"ts":5},{"ph":"C","name":"mem","pid":1,"ts":3,"args":{"v":1.5}},{"ph":"i","name":"i","pid":1,"tid":1,"ts":4,"s":"g"}],"displayTimeUnit":"ns","baseTimeNanoseconds":1700000000000000000}' > "$C/object-misc"
printf '{"traceEvents":[{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":10,"dur":3,"args":{"correlation":5,"device":0,"stream":7}},{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":9,"tid":9,"ts":8,"dur":1,"args":{"correlation":5}},{"ph":"s","id":5,"pid":9,"tid":9,"ts":8,"cat":"ac2g","name":"ac2g"},{"ph":"f","id":5,"pid":0,"tid":7,"ts":10,"cat":"ac2g","name":"ac2g","bp":"e"},{"ph":"X","name":"ProfilerStep#2","pid":9,"tid":9,"ts":0,"dur":20}]}' > "$C/launch"
if [ -n "$FX" ] && [ -d "$FX" ]; then
	for f in "$FX"/chrome/*.json* "$FX"/torch-legacy/*.pt.trace.json*; do
		[ -f "$f" ] && [ "$(wc -c < "$f")" -le 65536 ] && cp "$f" "$C/fx-$(basename "$f")"
	done
	for f in "$FX"/xplane/*.pb; do
		# the start of each real file: plane headers and metadata
		[ -f "$f" ] && head -c 65536 "$f" > "$X/fx-$(basename "$f")"
	done
fi
mkdir -p "$2/fuzz_xplane2ndjson"
cp "$X"/* "$2/fuzz_xplane2ndjson/"
exit 0
