#!/usr/bin/env bats
# The Slurm recipe (issue 21): `make -C examples fanout-slurm`
# (examples/slurm/submit.sh: a job array, one task per rank file writing
# its partial, and a merge job with --dependency=afterok on the array) on
# a single-node Slurm that setup_file starts: munged with a throwaway key,
# slurmctld and slurmd on free loopback ports, a generated slurm.conf, all
# state in $BATS_FILE_TMPDIR.  The merge equals one process reading every
# rank, byte for byte; a rank that fails cancels the merge.

load helpers

# The sanitizer pass (ND_ASAN) starts no daemons and runs none of this: it
# tests the recipe and its scheduling, the same in both builds; the
# programs' --partial and --merge paths run under the sanitizers in
# tests/top-regions-lib.bats and tests/report-partial.bats.
setup_file() {
	[ -z "${ND_ASAN:-}" ] || return 0
	S="$BATS_FILE_TMPDIR/slurm"
	mkdir -p "$S/state" "$S/spool" "$S/log" "$S/munge"
	chmod 700 "$S/munge"
	head -c 1024 /dev/urandom > "$S/munge/munge.key"
	chmod 400 "$S/munge/munge.key"
	munged --force --key-file="$S/munge/munge.key" --socket="$S/munge/socket" \
	    --pid-file="$S/munge/munged.pid" --log-file="$S/log/munged.log" \
	    --seed-file="$S/munge/seed" || fail "munged: $(cat "$S/log/munged.log")"
	p1=$(free_port)
	p2=$(free_port)
	while [ "$p2" = "$p1" ]; do p2=$(free_port); done
	# proctrack/linuxproc and task/none: no cgroups; the scheduler runs
	# each second rather than every 60 (sched_interval), and at once on
	# a submission (batch_sched_delay=0)
	cat > "$S/slurm.conf" <<-EOF
	ClusterName=ndtrace
	SlurmctldHost=localhost
	SlurmUser=root
	SlurmdUser=root
	SlurmctldPort=$p1
	SlurmdPort=$p2
	AuthType=auth/munge
	AuthInfo=socket=$S/munge/socket
	CredType=cred/munge
	StateSaveLocation=$S/state
	SlurmdSpoolDir=$S/spool
	SlurmctldPidFile=$S/slurmctld.pid
	SlurmdPidFile=$S/slurmd.pid
	SlurmctldLogFile=$S/log/slurmctld.log
	SlurmdLogFile=$S/log/slurmd.log
	ProctrackType=proctrack/linuxproc
	TaskPlugin=task/none
	SelectType=select/cons_tres
	SelectTypeParameters=CR_Core
	SchedulerType=sched/builtin
	SchedulerParameters=batch_sched_delay=0,sched_interval=1
	MpiDefault=none
	ReturnToService=2
	JobAcctGatherType=jobacct_gather/none
	AccountingStorageType=accounting_storage/none
	JobCompType=jobcomp/none
	NodeName=localhost NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
	PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
	EOF
	export SLURM_CONF="$S/slurm.conf"
	slurmctld -i || fail "slurmctld: $(tail -5 "$S/log/slurmctld.log")"
	slurmd -N localhost || fail "slurmd: $(tail -5 "$S/log/slurmd.log")"
	local i
	for i in $(seq 60); do
		[ "$(sinfo -h -o %T 2>/dev/null)" = idle ] && break
		sleep 0.5
	done
	[ "$(sinfo -h -o %T)" = idle ] ||
	    fail "the node is not idle: $(sinfo 2>&1; tail -5 "$S/log/slurmctld.log" "$S/log/slurmd.log")"
	rank_streams "$BATS_FILE_TMPDIR/ranks" 3 400
}

teardown_file() {
	[ -z "${ND_ASAN:-}" ] || return 0
	S="$BATS_FILE_TMPDIR/slurm"
	export SLURM_CONF="$S/slurm.conf"
	scontrol shutdown >/dev/null 2>&1
	local f i
	for f in slurmctld.pid slurmd.pid munge/munged.pid; do
		[ -s "$S/$f" ] || continue
		p=$(cat "$S/$f")
		[ "$f" = munge/munged.pid ] && kill "$p" 2>/dev/null
		for i in $(seq 50); do
			kill -0 "$p" 2>/dev/null || break
			sleep 0.1
		done
		kill "$p" 2>/dev/null
	done
	true
}

setup() {
	[ -z "${ND_ASAN:-}" ] || skip "the Slurm recipe runs in the normal build only (ND_ASAN)"
	S="$BATS_FILE_TMPDIR/slurm"
	R="$BATS_FILE_TMPDIR/ranks"
	EX="$BATS_TEST_DIRNAME/../examples"
	export SLURM_CONF="$S/slurm.conf"
}

@test "Slurm: job array of --partial runs, dependent --merge job == one process" {
	run timeout 120 make -s -C "$EX" fanout-slurm BIN="$ND_BIN" RANK_DIR="$R" \
	    PROG=trace-topk PARTIAL_ARGS='--by scope' MERGE_ARGS='-k 0'
	[ "$status" -eq 0 ] || fail "$output
$(cat "$R"/*.log 2>/dev/null)"
	assert_line "fan-out on Slurm == single stream"
	assert_line --regexp '^partials: job [0-9]+ \(3 tasks\)$'
	assert_line --regexp '^merge: job [0-9]+$'
	cd "$R"
	[ "$(cat ranks.list | xargs)" = "rank0.ndjson rank1.ndjson rank2.ndjson" ]
	trace-topk --by scope -k 0 rank0.ndjson rank1.ndjson rank2.ndjson |
	    cmp - fanout-slurm.merged
	# three array tasks and the merge ran, each with its log, none left queued
	[ "$(ls nd-partial-*_[0-2].log | wc -l)" -eq 3 ]
	[ "$(ls nd-merge-*.log | wc -l)" -eq 1 ]
	[ -z "$(squeue -h)" ]
	# every span of every rank counted once, by scope (jq)
	cat rank*.ndjson | jq -r 'select(.type == "span") | .scope' | sort | uniq -c |
	    awk '{print $2, $1}' > "$BATS_TEST_TMPDIR/want"
	jq -r '"\(.scope) \(.count)"' fanout-slurm.merged | sort > "$BATS_TEST_TMPDIR/got"
	diff "$BATS_TEST_TMPDIR/want" "$BATS_TEST_TMPDIR/got"
}

@test "Slurm: a rank that fails cancels the merge; submit.sh exits non-zero, no answer" {
	cd "$R"
	printf '%s\n' rank0.ndjson missing.ndjson > bad.list
	rm -f bad.merged
	run timeout 120 env ND_WAIT=1 sh "$BATS_TEST_DIRNAME/../examples/slurm/submit.sh" \
	    trace-topk bad.list bad.merged
	assert_failure 1
	assert_line --regexp '^partials: job [0-9]+ \(2 tasks\)$'
	assert_line --regexp '^submit.sh: merge job [0-9]+: CANCELLED$'
	[ ! -e bad.merged ]
	[ -z "$(squeue -h)" ]
	grep -h '^trace-topk: missing.ndjson: No such file or directory$' nd-partial-*_1.log
	# usage errors, before anything is submitted
	run sh "$BATS_TEST_DIRNAME/../examples/slurm/submit.sh" trace-topk
	assert_failure 2
	assert_output "usage: submit.sh PROG LIST OUT"
	: > empty.list
	run sh "$BATS_TEST_DIRNAME/../examples/slurm/submit.sh" trace-topk empty.list x
	assert_failure 2
	assert_output "submit.sh: empty.list: no rank files"
}
