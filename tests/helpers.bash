# Shared set-up for every bats file:  load helpers
# ND_BIN: directory of the programs under test (the Makefile sets it to the
# normal or the sanitizer build).  FIXTURES: the real profiles vendored in
# tests/fixtures (provenance in tests/fixtures/README.md); ND_FIXTURES=DIR
# runs the suites on another copy with the same layout.
# bats-support and bats-assert: their function files, sourced directly.
# Their load.bash finds each file with a $(dirname) subshell, 15 forks of
# the test's shell; bats sources this file for every test, and those forks
# cost ~0.27 s of CPU a test on a busy machine (over 500 tests in each make
# check pass).  Their load.bash only sources these files.
for _f in /usr/lib/bats/bats-support/src/output.bash \
    /usr/lib/bats/bats-support/src/error.bash \
    /usr/lib/bats/bats-support/src/lang.bash \
    /usr/lib/bats/bats-assert/src/*.bash; do
	source "$_f" || exit 1
done
unset _f

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

# bounded SECONDS KB CMD: run the shell command CMD (PATH as for run)
# with at most SECONDS of CPU per process (4 times that under the
# sanitizers) and, unless ND_ASAN is set, KB of address space.  CPU time,
# not wall time, is what a quadratic shape exhausts; the wall-clock
# timeout (generous: the machine may be busy) only stops a hang.
bounded() {
	local s=$1 kb=$2
	shift 2
	if [ -n "${ND_ASAN:-}" ]; then
		run timeout "$((s * 20))" bash -c "ulimit -t $((s * 4)); $*"
	else
		run timeout "$((s * 10))" bash -c "ulimit -t $s; ulimit -v $kb; $*"
	fi
}

# chromium_setup: CHROME, Debian's chromium (scripts/deps.sh installs it;
# `make check` runs that), and CHROME_FLAGS for a headless run that fetches
# nothing; fails when there is none.
chromium_setup() {
	local c
	for c in chromium chromium-browser google-chrome; do
		command -v $c >/dev/null || continue
		CHROME=$(command -v $c)
		CHROME_FLAGS="--headless --no-sandbox --disable-gpu
		    --disable-background-networking --disable-component-update
		    --disable-sync --no-first-run --user-data-dir=$(mktemp -d)"
		return 0
	done
	fail "no chromium: run scripts/deps.sh (make deps)"
}

# free_port: a TCP port nothing on this machine listens on or uses now
# (random in 20000-59999, looked up in /proc/net/tcp*); a daemon that still
# finds it taken fails to start, and its test says so
free_port() {
	local p hex
	while :; do
		p=$((20000 + RANDOM % 40000))
		printf -v hex '%04X' "$p"
		grep -qs ":$hex " /proc/net/tcp /proc/net/tcp6 || break
	done
	echo "$p"
}

# rank_streams DIR N SPANS: DIR/rank0.ndjson .. rank(N-1).ndjson, generated
# streams of SPANS spans each (gen-stream, seeds 1..N)
rank_streams() {
	local r
	mkdir -p "$1"
	for r in $(seq 0 $(($2 - 1))); do
		gen-stream -n "$3" -s $((r + 1)) > "$1/rank$r.ndjson" || return 1
	done
}
