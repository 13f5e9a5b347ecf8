# Shared helpers for the bench/*.sh scripts (sourced, not run).
# measure LABEL EVENTS BYTES CMD...: run CMD (stdout to /dev/null) under
# /usr/bin/time -v and print one table row; sets M_SECS and M_RSS_KB.
: "${BIN:?BIN must point at the build/bin directory}"
OUT=${BENCH_OUT:-$(dirname "$0")/out}
mkdir -p "$OUT"

measure() {
	label=$1 events=$2 bytes=$3
	shift 3
	/usr/bin/time -v -o "$OUT/time.txt" "$@" > /dev/null 2> "$OUT/stderr.txt" || {
		echo "bench: $label failed:" >&2
		cat "$OUT/stderr.txt" >&2
		return 1
	}
	M_SECS=$(awk -F': ' '/Elapsed \(wall clock\)/ {
		n = split($2, a, ":"); s = 0
		for (i = 1; i <= n; i++) s = s * 60 + a[i]
		print s }' "$OUT/time.txt")
	M_RSS_KB=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$OUT/time.txt")
	awk -v l="$label" -v s="$M_SECS" -v e="$events" -v b="$bytes" -v r="$M_RSS_KB" 'BEGIN {
		if (s <= 0) s = 0.005
		printf "%-34s %8.2f s %10.2f Mev/s %8.1f MB/s %8.1f MiB RSS\n",
		    l, s, e / s / 1e6, b / s / 1e6, r / 1024 }'
}

# ratio A B: how many times faster A (seconds) is than B
ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN { if (a <= 0) a = 0.005; printf "%.1fx", b / a }'
}
