#!/usr/bin/env bats
# The GNU parallel recipe over ssh (issue 21): `make -C examples fanout-ssh`
# to two "hosts", h1 and h2, two names of one sshd that setup_file starts on
# a free 127.0.0.1 port with throwaway host and user keys (its own
# sshd_config: no PAM, keys in $BATS_FILE_TMPDIR).  Once with the rank files
# on the shared filesystem (--wd .), once sent with --transferfile and
# brought back with --return (SHARED=no, a remote work directory of its
# own); each time the merge equals one process reading every rank, byte
# for byte.  The one-machine recipes (parallel -j into files, parallel
# --keep-order into one --merge) run in tests/examples.bats and
# tests/fanout.bats.

load helpers

# The sanitizer pass (ND_ASAN) starts no daemons and runs none of this: it
# tests the recipe and its scheduling, the same in both builds; the
# programs' --partial and --merge paths run under the sanitizers in
# tests/top-regions-lib.bats and tests/report-partial.bats.
setup_file() {
	[ -z "${ND_ASAN:-}" ] || return 0
	K="$BATS_FILE_TMPDIR/ssh"
	mkdir -p "$K"
	# unix socket paths are short (108 bytes): the control sockets in /tmp
	C=$(mktemp -d /tmp/nd-ssh.XXXXXX)
	echo "$C" > "$K/cm.dir"
	ssh-keygen -q -t ed25519 -N '' -f "$K/host_key"
	ssh-keygen -q -t ed25519 -N '' -f "$K/id"
	cp "$K/id.pub" "$K/authorized_keys"
	# SetEnv SHLVL=1: bash reads ~/.bashrc for a command over ssh only at
	# level 1, and a login's .bashrc (pyenv, conda) can cost a second each
	cat > "$K/sshd_config" <<-EOF
	ListenAddress 127.0.0.1
	HostKey $K/host_key
	PidFile $K/sshd.pid
	AuthorizedKeysFile $K/authorized_keys
	StrictModes no
	UsePAM no
	PermitRootLogin prohibit-password
	PasswordAuthentication no
	KbdInteractiveAuthentication no
	PubkeyAuthentication yes
	SetEnv SHLVL=1
	LogLevel ERROR
	EOF
	# sshd refuses to start without its privilege separation directory
	mkdir -p /run/sshd
	# sshd exits 0 even when its port is taken: it has bound its port
	# once it writes its pid file
	local i t port=
	for i in 1 2 3; do
		port=$(free_port)
		/usr/sbin/sshd -f "$K/sshd_config" -p "$port" -E "$K/sshd.log"
		for t in $(seq 30); do
			[ -s "$K/sshd.pid" ] && break 2
			sleep 0.1
		done
		port=
	done
	[ -n "$port" ] || fail "sshd did not start: $(cat "$K/sshd.log")"
	echo "[127.0.0.1]:$port $(cut -d' ' -f1,2 "$K/host_key.pub")" > "$K/known_hosts"
	# one connection per host, kept for the file's tests (ControlPersist)
	cat > "$K/ssh_config" <<-EOF
	Host h1 h2
	    HostName 127.0.0.1
	    Port $port
	    User $(id -un)
	    IdentityFile $K/id
	    IdentitiesOnly yes
	    UserKnownHostsFile $K/known_hosts
	    GlobalKnownHostsFile /dev/null
	    StrictHostKeyChecking yes
	    BatchMode yes
	    ControlMaster auto
	    ControlPath $C/%n
	    ControlPersist 300
	    LogLevel ERROR
	EOF
	local h
	for h in h1 h2; do
		timeout 60 ssh -F "$K/ssh_config" "$h" true ||
		    fail "ssh $h: no login: $(cat "$K/sshd.log")"
	done
	rank_streams "$BATS_FILE_TMPDIR/ranks" 3 400
}

teardown_file() {
	[ -z "${ND_ASAN:-}" ] || return 0
	K="$BATS_FILE_TMPDIR/ssh"
	local h
	for h in h1 h2; do
		ssh -F "$K/ssh_config" -O exit "$h" 2>/dev/null || true
	done
	[ -s "$K/sshd.pid" ] && kill "$(cat "$K/sshd.pid")" 2>/dev/null
	[ -s "$K/cm.dir" ] && rm -rf "$(cat "$K/cm.dir")"
	true
}

setup() {
	[ -z "${ND_ASAN:-}" ] || skip "the ssh recipe runs in the normal build only (ND_ASAN)"
	K="$BATS_FILE_TMPDIR/ssh"
	R="$BATS_FILE_TMPDIR/ranks"
	EX="$BATS_TEST_DIRNAME/../examples"
	J="$BATS_TEST_TMPDIR/jobs"
}

# spans: the span records of every rank, counted by jq
spans() {
	cat "$R"/rank*.ndjson | jq -c 'select(.type == "span")' | wc -l
}

# ran_on_both: the job log names h1 and h2, 3 jobs, each exit 0
ran_on_both() {
	[ "$(awk 'NR > 1 && $7 == 0' "$J" | wc -l)" -eq 3 ] || fail "$(cat "$J")"
	[ "$(awk 'NR > 1 {print $2}' "$J" | sort -u | xargs)" = "h1 h2" ] || fail "$(cat "$J")"
}

@test "parallel --sshlogin, files on a shared filesystem: 2 hosts, merge == one process" {
	run make -s -C "$EX" fanout-ssh BIN="$ND_BIN" RANK_DIR="$R" \
	    SSHLOGIN=1/h1,1/h2 SSH="ssh -F $K/ssh_config" PARALLEL_ARGS="--joblog $J" \
	    PROG=trace-topk PARTIAL_ARGS= MERGE_ARGS='-k 0'
	[ "$status" -eq 0 ] || fail "$output"
	assert_line "fan-out over ssh == single stream"
	ran_on_both
	cd "$R"
	trace-topk -k 0 rank0.ndjson rank1.ndjson rank2.ndjson | cmp - fanout-ssh.merged
	[ "$(ls ./*.partial | wc -l)" -eq 3 ]
	# every span of every rank is in one row
	[ "$(jq -s 'map(.count) | add' fanout-ssh.merged)" -eq "$(spans)" ]
}

@test "parallel --sshlogin --transferfile --return: 2 hosts, merge == one process" {
	W="$BATS_TEST_TMPDIR/remote"
	# h1 and h2 are this machine: a work directory per job ({#}), as two
	# hosts have two disks (one shared directory races: --cleanup of a job
	# on h1 removes it under a transfer to h2)
	run make -s -C "$EX" fanout-ssh BIN="$ND_BIN" RANK_DIR="$R" \
	    SSHLOGIN=1/h1,1/h2 SSH="ssh -F $K/ssh_config" PARALLEL_ARGS="--joblog $J" \
	    SHARED=no REMOTE_WD="$W/job{#}" PROG=trace-regions PARTIAL_ARGS= MERGE_ARGS=
	[ "$status" -eq 0 ] || fail "$output"
	assert_line "fan-out over ssh == single stream"
	ran_on_both
	# each job sent its rank file and received its partial (bytes > 0),
	# and --cleanup left nothing in the remote work directory
	[ "$(awk 'NR > 1 && $5 > 0 && $6 > 0' "$J" | wc -l)" -eq 3 ] || fail "$(cat "$J")"
	[ -z "$(find "$W" -type f 2>/dev/null)" ]
	cd "$R"
	trace-regions rank0.ndjson rank1.ndjson rank2.ndjson | cmp - fanout-ssh.merged
	[ "$(ls ./*.partial | wc -l)" -eq 3 ]
	# the root region holds every span (each has a scope under train_step)
	n=$(cat rank*.ndjson | jq -c 'select(.type == "span" and (.scope | startswith("train_step")))' | wc -l)
	[ "$n" -eq "$(spans)" ]
	[ "$(jq -s 'map(select(.path == "train_step"))[0].count' fanout-ssh.merged)" -eq "$n" ]
}
