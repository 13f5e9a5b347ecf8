#!/bin/sh
# Seeds for fuzz_pipe: the blocks, P2P spans and step markers of real
# pipeline jobs (tests/fixtures/pipeline: two ranks of 1F1B, two of GPipe),
# a few micro-batches each, and hand-made shapes the engine must take:
# absolute clocks, a GPU rank, W blocks, interleaved chunks, nesting.
#   sh fuzz/seeds-pipe.sh BIN_DIR CORPUS_DIR FIXTURES_DIR
set -eu
BIN=$1
C=$2/fuzz_pipe
FX=${3:-}
mkdir -p "$C"
for job in 1f1b_p2_m4 gpipe_p4_m4; do
	[ -f "$FX/pipeline/${job}_rank0.pt.trace.json.gz" ] || continue
	for r in 0 1; do
		"$BIN/chrome2ndjson" "$FX/pipeline/${job}_rank$r.pt.trace.json.gz" |
		    grep -E '"type":"meta"|"name":"(ProfilerStep#1|[a-z]*_step#[01]|(send|recv)_[a-z]*#[01])"'
	done > "$C/$job"
done
m='{"type":"meta","schema":"ndtrace/1","source":"r","format":"chrome","origin_ns":1000,"host":null,"rank":'
sp() { printf '{"type":"span","ts_ns":%s,"dur_ns":%s,"name":"%s","pid":1,"tid":%s%s}\n' "$@"; }
{
	echo "${m}0}"
	sp 0 10 'forward_step#0' 1 ''; sp 20 10 'forward_step#1' 1 ''
	sp 40 20 'backward_step#0' 1 ''; sp 60 5 'backward_weight 0' 1 ''
	sp 70 20 'backward_step#1' 1 ''; sp 30 10 'gloo:recv' 1 ''
	echo "${m}1}"
	sp 10 10 '1F0' 1 ''; sp 25 5 '1F0' 1 ''; sp 30 10 'Forward 1' 1 ''
	sp 31 2 'forward_step' 1 ''; sp 40 10 '1B0' 1 ''; sp 50 10 '1W0' 1 ''
	sp 12 3 'ncclDevKernel_SendRecv' 7 ',"cat":"kernel"'
	sp 16 30 'sm80_gemm' 7 ',"cat":"kernel"'
} > "$C/hand"
