# Shared set-up for every bats file:  load helpers
# ND_BIN: directory of the programs under test (the Makefile sets it to the
# normal or the sanitizer build).  FIXTURES: the real profiles vendored in
# tests/fixtures (provenance in tests/fixtures/README.md); ND_FIXTURES=DIR
# runs the suites on another copy with the same layout.
load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'

: "${ND_BIN:=$BATS_TEST_DIRNAME/../build/bin}"
export ND_BIN
export PATH="$ND_BIN:$PATH"
FIXTURES="${ND_FIXTURES:-$BATS_TEST_DIRNAME/fixtures}"
# Debian's python3 (it has python3-protobuf); fall back to whatever is first.
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
export LC_ALL=C

# The fixtures are part of the tree: a test never passes by skipping them.
need_fixtures() {
	[ -f "$FIXTURES/xplane/tpu_inference_4core.xplane.pb" ] ||
	    fail "no fixtures in $FIXTURES (ND_FIXTURES=${ND_FIXTURES:-unset})"
}

# run a pipeline in bash with pipefail, capturing like `run`
runp() {
	run bash -o pipefail -c "$1"
}
