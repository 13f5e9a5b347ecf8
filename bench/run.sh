#!/bin/sh
# make bench: every bench/*.sh part in turn (generated inputs, seeded).
set -u
BIN=$1
dir=$(dirname "$0")
echo "ndtrace bench on $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -m), $(. /etc/os-release; echo "$PRETTY_NAME")"
rc=0
for part in "$dir"/stream.sh $(ls "$dir"/*.sh | grep -v -e '/lib.sh$' -e '/run.sh$' -e '/stream.sh$'); do
	sh "$part" "$BIN" || rc=1
done
exit $rc
