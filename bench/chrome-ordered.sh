#!/bin/sh
# chrome2ndjson on ordered Chrome traces (ndjson2chrome of the realistic
# gen-stream -R stream: every timeline in output order) of 1M and 5M
# events: peak RSS must not grow with the events past the ordered path's
# budget of 64 MiB of records (chrome2ndjson(1), MEMORY: 1M events are
# written from memory, 5M through the spool), and MB/s.
# BENCH_ORDERED_EVENTS lists the sizes (default "1000000 5000000"; the 5M
# file is about 1.5 GB).
set -eu
BIN=$1
. "$(dirname "$0")/lib.sh"
echo "== Chrome trace, ordered (ndjson2chrome of gen-stream -R): peak RSS against events"
for N in ${BENCH_ORDERED_EVENTS:-1000000 5000000}; do
	S="$OUT/stream-R-$N.ndjson"
	F="$OUT/chrome-ordered-$N.json"
	[ -s "$S" ] || "$BIN/gen-stream" -R -n "$N" > "$S"
	[ -s "$F" ] || "$BIN/ndjson2chrome" "$S" > "$F"
	B=$(stat -c %s "$F")
	# warm the page cache; the path taken
	how=$(CHROME2NDJSON_STATS=1 "$BIN/chrome2ndjson" -q "$F" 2>&1 > /dev/null |
	    sed -n 's/^chrome2ndjson: .*: \([a-z]*\)$/\1/p')
	best=0 rss=0
	for i in 1 2 3; do
		measure "chrome2ndjson $N ordered (run $i)" "$N" "$B" \
		    "$BIN/chrome2ndjson" -q "$F"
		if [ "$best" = 0 ] || [ "$(awk -v a="$M_SECS" -v b="$best" 'BEGIN{print (a < b)}')" = 1 ]; then
			best=$M_SECS
		fi
		[ "$M_RSS_KB" -gt "$rss" ] && rss=$M_RSS_KB
	done
	awk -v n="$N" -v s="$best" -v b="$B" -v r="$rss" -v how="$how" 'BEGIN {
		if (s <= 0) s = 0.005
		printf "ordered %d events (%s): %.0f MB/s (best of 3), peak RSS %.1f MiB (%.1f bytes/event over 32 MiB)\n",
		    n, how, b / s / 1e6, r / 1024, (r * 1024 - 33554432) / n }'
done
