#!/bin/sh
# Print the expectations table of tests/bad.bats from what the programs do
# now, to review and commit when the corpus or a message changes:
#   sh tests/bad/record.sh BIN_DIR > tests/bad/expect.new
#   diff tests/bad/expect tests/bad/expect.new
# Columns (tab-separated): file, program, exit status, first line of stderr.
# The file is given as a relative name from the corpus directory, so that
# messages do not depend on where the corpus was generated.
set -eu
BIN=$(cd "$1" && pwd)
top=$(cd "$(dirname "$0")" && pwd)
D=$(mktemp -d)
trap 'rm -rf "$D"' EXIT
sh "$top/gen.sh" "$BIN" "$D/c" >/dev/null
sed -n "/^#/p" "$top/expect" 2>/dev/null || true
cd "$D/c"
for f in $(ls | LC_ALL=C sort); do
	case $f in
	x-*) progs=xplane2ndjson ;;
	c-* | g-*) progs=chrome2ndjson ;;
	n-*) progs="trace-check trace-topk trace-gaps" ;;
	*) continue ;;
	esac
	for p in $progs; do
		s=0
		if [ "$p" = trace-check ]; then
			"$BIN/$p" "$f" >/dev/null 2>"$D/err" || s=$?
		else
			"$BIN/$p" -o "$D/out" "$f" 2>"$D/err" || s=$?
			rm -f "$D/out"
		fi
		printf '%s\t%s\t%s\t%s\n' "$f" "$p" "$s" "$(head -n 1 "$D/err")"
	done
done
