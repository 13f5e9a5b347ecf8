#!/bin/sh
# Frame hand-written partial results as --merge expects (see nd_partial.h):
# standard input is a header record and its records, one per line; the
# output adds the partial_end trailer with their record count and sha256.
#   printf '%s\n' "$header" "$group" | sh tests/tools/frame-partial.sh
set -eu
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
cat > "$tmp"
n=$(($(wc -l < "$tmp") - 1))
sum=$(sha256sum < "$tmp" | cut -d' ' -f1)
cat "$tmp"
printf '{"type":"partial_end","records":%d,"sha256":"%s"}\n' "$n" "$sum"
