#!/bin/sh
# Fan a program out over a Slurm job array, one task per rank file, and
# merge the partial results in a job that runs once every task succeeded:
#
#   examples/slurm/submit.sh PROG LIST OUT
#
# PROG: trace-topk, trace-regions, ... (any program with --partial and
# --merge); LIST: the rank files, one a line, on a filesystem every node
# shares; OUT: the merged answer.  The jobs see this environment
# (sbatch --export=ALL, the default): PATH must find PROG on the nodes.
#   ND_PARTIAL_ARGS, ND_MERGE_ARGS, ND_TO_STREAM  see array.sbatch, merge.sbatch
#   ND_SBATCH_OPTS   more sbatch options for both jobs (--partition=..., --time=...)
#   ND_ARRAY_MAX     at most this many tasks at once (--array=0-N%MAX)
#   ND_LOG_DIR       where the jobs' logs go (default: OUT's directory)
#   ND_WAIT=1        wait for the merge: exit 0 when it completed
# Prints the two job ids.  A failed task cancels the merge
# (--kill-on-invalid-dep=yes) rather than leave it pending for ever.
set -eu
if [ $# -ne 3 ]; then
	echo "usage: submit.sh PROG LIST OUT" >&2
	exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
ND_PROG=$1 ND_LIST=$2 ND_OUT=$3
n=$(sed -n '$=' "$ND_LIST")
if [ -z "$n" ]; then
	echo "submit.sh: $ND_LIST: no rank files" >&2
	exit 2
fi
logs=${ND_LOG_DIR:-$(dirname "$ND_OUT")}
mkdir -p "$logs"
export ND_PROG ND_LIST ND_OUT
# shellcheck disable=SC2086
array=$(sbatch --parsable ${ND_SBATCH_OPTS:-} \
    --array="0-$((n - 1))${ND_ARRAY_MAX:+%$ND_ARRAY_MAX}" \
    --output="$logs/nd-partial-%A_%a.log" "$here/array.sbatch")
array=${array%%;*}
echo "partials: job $array ($n tasks)"
# shellcheck disable=SC2086
merge=$(sbatch --parsable ${ND_SBATCH_OPTS:-} \
    --dependency="afterok:$array" --kill-on-invalid-dep=yes \
    --output="$logs/nd-merge-%j.log" "$here/merge.sbatch")
merge=${merge%%;*}
echo "merge: job $merge"
[ -n "${ND_WAIT:-}" ] || exit 0
# not sbatch --wait: it exits 0 for a merge cancelled before it ran
while :; do
	state=$(scontrol show job -o "$merge" | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p')
	case $state in
	PENDING | CONFIGURING | RUNNING | COMPLETING | SUSPENDED | REQUEUE*) sleep 1 ;;
	*) break ;;
	esac
done
if [ "$state" != COMPLETED ]; then
	echo "submit.sh: merge job $merge: ${state:-gone}" >&2
	exit 1
fi
