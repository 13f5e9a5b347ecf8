#!/bin/sh
# make bench: the one table of bench/table.sh (every program and pipeline at
# 1M and 5M events against jq and python3, targets, scale-out; generated,
# seeded inputs cached in bench/out).  BENCH_PARTS=1 first runs every other
# bench/*.sh part in turn, as before; each part also runs alone:
#   sh bench/topk.sh build/bin
# BENCH_RESULTS=1 also writes bench/RESULTS.md.  See bench/table.sh for the
# other BENCH_* settings.
set -u
BIN=$1
dir=$(dirname "$0")
echo "ndtrace bench on $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -m), $(. /etc/os-release; echo "$PRETTY_NAME")"
rc=0
if [ "${BENCH_PARTS:-0}" = 1 ]; then
	for part in "$dir"/stream.sh $(ls "$dir"/*.sh | grep -v -e '/lib.sh$' -e '/run.sh$' -e '/stream.sh$' -e '/table.sh$'); do
		sh "$part" "$BIN" || rc=1
	done
fi
sh "$dir/table.sh" "$BIN" || rc=1
exit $rc
