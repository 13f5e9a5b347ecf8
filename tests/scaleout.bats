#!/usr/bin/env bats
# Scale-out (issue 13): per-rank --partial results fanned out over 2
# workers, then one --merge, give byte for byte the answer of one stream
# over every rank.  Small generated rank streams, no timings (bench/table.sh
# measures the speed-up).  tests/examples.bats already runs the cookbook's
# `make -C examples fanout` (trace-topk --partial -o, one file per job,
# under GNU parallel -j; tests/fanout.bats the documented recipes and what
# jobs sharing one pipe do; tests/scaleout-parallel.bats and
# scaleout-slurm.bats the ssh and Slurm recipes); this file covers trace-topk
# and trace-regions with
# `xargs -P2 -n1` and with `make -j2 -f bench/fanout.mk`.

load helpers

setup_file() {
	export RANKS="$BATS_FILE_TMPDIR/ranks"
	mkdir -p "$RANKS"
	for r in 0 1 2 3 4 5 6 7; do
		"$ND_BIN/gen-stream" -n 3000 -s $((r + 1)) > "$RANKS/rank$r.ndjson"
	done
}

# fan_xargs PROG ARGS...: --partial per file under xargs -P2 -n1 (each
# worker writes its own file), then one --merge with ARGS
fan_xargs() {
	local p=$1
	shift
	rm -f "$RANKS"/*.partial
	ls "$RANKS"/rank*.ndjson | xargs -P2 -n1 sh -c "$p --partial -o \"\$1.partial\" \"\$1\"" sh
	"$p" --merge "$@" "$RANKS"/rank*.ndjson.partial
}

# fan_make PROG ARGS: the same with make -j2 and bench/fanout.mk
fan_make() {
	rm -f "$RANKS"/*.partial "$RANKS/$1.merged"
	make -s -j2 -f "$BATS_TEST_DIRNAME/../bench/fanout.mk" DIR="$RANKS" PROG="$1" ARGS="$2" >&2
	cat "$RANKS/$1.merged"
}

@test "rank streams: eight distinct, valid streams" {
	for f in "$RANKS"/rank*.ndjson; do
		trace-check "$f"
	done
	[ "$(cat "$RANKS"/rank*.ndjson | LC_ALL=C sort -u | wc -l)" -gt 20000 ]
}

@test "trace-topk: xargs -P2 -n1 --partial | --merge equals one stream, byte for byte" {
	trace-topk -k 0 "$RANKS"/rank*.ndjson > "$BATS_TEST_TMPDIR/single"
	[ "$(wc -l < "$BATS_TEST_TMPDIR/single")" -gt 1000 ]
	fan_xargs trace-topk -k 0 > "$BATS_TEST_TMPDIR/fan"
	cmp "$BATS_TEST_TMPDIR/single" "$BATS_TEST_TMPDIR/fan"
	# the default table too, and the merge reading the partials on stdin
	trace-topk --table "$RANKS"/rank*.ndjson > "$BATS_TEST_TMPDIR/single"
	cat "$RANKS"/rank*.ndjson.partial | trace-topk --merge --table > "$BATS_TEST_TMPDIR/fan"
	cmp "$BATS_TEST_TMPDIR/single" "$BATS_TEST_TMPDIR/fan"
}

@test "trace-topk --by scope,class: the xargs fan-out equals one stream" {
	trace-topk --by scope,class -k 0 "$RANKS"/rank*.ndjson > "$BATS_TEST_TMPDIR/single"
	rm -f "$RANKS"/*.partial
	ls "$RANKS"/rank*.ndjson | xargs -P2 -n1 sh -c 'trace-topk --by scope,class --partial -o "$1.partial" "$1"' sh
	trace-topk --merge -k 0 "$RANKS"/rank*.ndjson.partial > "$BATS_TEST_TMPDIR/fan"
	cmp "$BATS_TEST_TMPDIR/single" "$BATS_TEST_TMPDIR/fan"
}

@test "trace-regions: xargs -P2 -n1 --partial | --merge equals one stream, byte for byte" {
	trace-regions "$RANKS"/rank*.ndjson > "$BATS_TEST_TMPDIR/single"
	[ -s "$BATS_TEST_TMPDIR/single" ]
	fan_xargs trace-regions > "$BATS_TEST_TMPDIR/fan"
	cmp "$BATS_TEST_TMPDIR/single" "$BATS_TEST_TMPDIR/fan"
	trace-regions --tree "$RANKS"/rank*.ndjson > "$BATS_TEST_TMPDIR/single"
	trace-regions --merge --tree "$RANKS"/rank*.ndjson.partial > "$BATS_TEST_TMPDIR/fan"
	cmp "$BATS_TEST_TMPDIR/single" "$BATS_TEST_TMPDIR/fan"
}

@test "trace-topk: make -j2 fan-out equals one stream, byte for byte" {
	trace-topk -k 0 "$RANKS"/rank*.ndjson > "$BATS_TEST_TMPDIR/single"
	fan_make trace-topk '-k 0' > "$BATS_TEST_TMPDIR/fan"
	cmp "$BATS_TEST_TMPDIR/single" "$BATS_TEST_TMPDIR/fan"
	[ "$(ls "$RANKS"/*.trace-topk.partial | wc -l)" -eq 8 ]
}

@test "trace-regions: make -j2 fan-out equals one stream, byte for byte" {
	trace-regions "$RANKS"/rank*.ndjson > "$BATS_TEST_TMPDIR/single"
	fan_make trace-regions '' > "$BATS_TEST_TMPDIR/fan"
	cmp "$BATS_TEST_TMPDIR/single" "$BATS_TEST_TMPDIR/fan"
	[ "$(ls "$RANKS"/*.trace-regions.partial | wc -l)" -eq 8 ]
}
