#!/usr/bin/env bats
# Every ```sh block of examples/COOKBOOK.md runs, succeeds and prints
# something, on generated example data (blocks that read ~/ are the
# "make your own" ones and are left out).

load helpers

setup_file() {
	D="$BATS_FILE_TMPDIR/data"
	mkdir -p "$D"
	export PATH="$ND_BIN:$PATH"
	gen-xplane --kind tpu --seed 7 --events 20000 -o "$D/run.pb"
	xplane2ndjson "$D/run.pb" > "$D/run.ndjson"
	gen-xplane --kind gpu --seed 11 --events 8000 -o "$D/gpu.pb"
	xplane2ndjson "$D/gpu.pb" > "$D/gpu.ndjson"
	for r in 0 1 2 3; do
		gen-xplane --kind gpu --seed $((100 + r)) --events 3000 -o "$D/rank$r.pb"
		xplane2ndjson "$D/rank$r.pb" > "$D/rank$r.ndjson"
	done
	gen-xplane --kind tpu --seed 21 --events 6000 -o "$D/before.pb"
	xplane2ndjson "$D/before.pb" > "$D/before.ndjson"
	gen-xplane --kind tpu --seed 22 --events 7000 -o "$D/after.pb"
	xplane2ndjson "$D/after.pb" > "$D/after.ndjson"
	rm -f "$D"/*.pb
	awk '/^```sh$/ {n++; on=1; next} /^```$/ {on=0; next} on {print > (dir "/block" n ".sh")}' \
	    dir="$BATS_FILE_TMPDIR" "$BATS_TEST_DIRNAME/../examples/COOKBOOK.md"
}

@test "every cookbook block runs and prints something" {
	cd "$BATS_FILE_TMPDIR/data"
	n=0
	for b in "$BATS_FILE_TMPDIR"/block*.sh; do
		grep -q '~/' "$b" && continue
		n=$((n + 1))
		run bash -e -o pipefail "$b"
		[ "$status" -eq 0 ] || fail "$(cat "$b")
exited $status: $output"
		[ -n "$output" ] || fail "$(cat "$b")
printed nothing"
	done
	[ "$n" -ge 10 ] || fail "only $n blocks found"
}

@test "cookbook answers agree with independent computations" {
	cd "$BATS_FILE_TMPDIR/data"
	# compute vs communication: class self time totals = jq sum of exclusive
	# time; on these generated profiles device ops do not nest, so self =
	# duration and jq can add durations directly.
	run bash -o pipefail -c "trace-topk --by class -k 0 gpu.ndjson | jq -r 'select(.type == \"top\" and .class == \"communication\") | .self_ns'"
	want=$(jq -s '[.[] | select(.type == "span" and .class == "communication" and (.process // "" | startswith("/device:")))] | map(.dur_ns) | add' gpu.ndjson)
	assert_output "$want"
}
