# Shared by the -o suites (output-safety.bats, safety-output.bats):
#   load output-progs
# PROGS: every program with -o, with an input that gives it some output
# (the generators the tests and benchmarks use too).
PROGS=(
	"chrome2ndjson k.json"
	"ndjson2chrome s.nd"
	"trace-classify s.nd"
	"trace-context --regex . s.nd"
	"trace-diff s.nd s2.nd"
	"trace-gaps s.nd"
	"trace-mem s.nd"
	"trace-pipeline p.nd"
	"trace-regions s.nd"
	"trace-report s.nd"
	"trace-roofline s.nd"
	"trace-steps s.nd"
	"trace-topk s.nd"
	"xplane2ndjson x.pb"
	"gen-kineto -e 50"
	"gen-xplane --tiny"
)

# output_inputs DIR: those inputs in DIR, and want.PROG, what each program
# writes to stdout: the bytes -o must produce.
output_inputs() {
	local F=$1 pa p args r
	"$ND_BIN/gen-stream" -n 300 -s 1 > "$F/s.nd"
	"$ND_BIN/gen-stream" -n 300 -s 2 > "$F/s2.nd"
	"$ND_BIN/gen-kineto" -e 200 -o "$F/k.json"
	# a pipeline job's two ranks (trace-pipeline writes nothing without)
	for r in 0 1; do
		"$ND_BIN/chrome2ndjson" "$FIXTURES/pipeline/1f1b_p2_m4_rank$r.pt.trace.json.gz"
	done > "$F/p.nd"
	mkdir -p "$F/xdir"
	"$ND_BIN/gen-xplane" --tiny -o "$F/xdir/x.xplane.pb"
	cp "$F/xdir/x.xplane.pb" "$F/x.pb"
	(
		cd "$F" || exit 1
		for pa in "${PROGS[@]}"; do
			read -r p args <<< "$pa"
			# shellcheck disable=SC2086
			"$ND_BIN/$p" $args > "$F/want.$p" 2>/dev/null || [ $? -eq 1 ]
		done
	)
}
