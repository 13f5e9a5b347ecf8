#!/usr/bin/env bats
# Output safety (issue 18, items 2, 15, 17 and 18): what -o does to devices,
# FIFOs and symbolic links; closed pipes and full disks on the small
# outputs; the history file's repair; the -o temporaries on every fatal
# signal.  Device nodes are made here with mknod (CI runs as root); the
# real /dev/null and /dev/full are never named as an -o target.

load helpers

load output-progs

ALL=(chrome2ndjson ndjson2chrome trace-check trace-classify trace-context
	trace-diff trace-gaps trace-mem trace-pipeline trace-regions trace-report
	trace-roofline trace-steps trace-topk xplane2ndjson)

setup_file() {
	F="$BATS_FILE_TMPDIR"
	output_inputs "$F"
	export F
}

setup() {
	T="$BATS_TEST_TMPDIR"
	cd "$F" || return 1
}

# closed_pipe: run each command line of stdin (words split on blanks) with
# stdout a pipe whose reader is already gone, so the first write fails with
# EPIPE every time (no race); print "status<TAB>command<TAB>stderr" of each
# one that does not end with status 0 and an empty stderr.
closed_pipe() {
	run "$PY" -c 'import os, subprocess, sys
for cmd in sys.stdin.read().splitlines():
    r, w = os.pipe()
    os.close(r)
    p = subprocess.run([sys.argv[1] + "/" + cmd.split()[0]] + cmd.split()[1:],
                       stdout=w, stderr=subprocess.PIPE)
    os.close(w)
    if p.returncode != 0 or p.stderr:
        print("%d\t%s\t%r" % (p.returncode, cmd, p.stderr))' "$ND_BIN"
}

@test "-o writes through a character device and keeps it (every program)" {
	mknod "$T/null" c 1 3
	mknod "$T/full" c 1 7
	for pa in "${PROGS[@]}"; do
		read -r p args <<< "$pa"
		# shellcheck disable=SC2086
		run "$ND_BIN/$p" -o "$T/null" $args
		[ "$status" -le 1 ] || fail "$p -o null: status $status: $output"
		[ -c "$T/null" ] || fail "$p replaced the device $T/null"
		# shellcheck disable=SC2086
		run "$ND_BIN/$p" -o "$T/full" $args
		assert_failure 2
		assert_line --index $((${#lines[@]} - 1)) \
		    "$p: $T/full: write error: No space left on device"
		[ -c "$T/full" ] || fail "$p replaced the device $T/full"
	done
	run ls -A "$T"
	assert_output "$(printf 'full\nnull')"
}

@test "-o writes into a FIFO for its reader (every program)" {
	mkfifo "$T/fifo"
	for pa in "${PROGS[@]}"; do
		read -r p args <<< "$pa"
		timeout 20 cat "$T/fifo" > "$T/got" &
		reader=$!
		# shellcheck disable=SC2086
		run timeout 20 "$ND_BIN/$p" -o "$T/fifo" $args
		[ "$status" -le 1 ] || fail "$p -o fifo: status $status: $output"
		wait "$reader" || fail "$p: the FIFO's reader failed"
		[ -p "$T/fifo" ] || fail "$p replaced the FIFO"
		cmp "$F/want.$p" "$T/got" || fail "$p: the FIFO's reader got other bytes"
	done
	# a reader that leaves early: quiet, status 0, as on a pipe (250 KB:
	# more than the FIFO holds)
	timeout 20 head -c1 "$T/fifo" > /dev/null &
	run timeout 20 "$ND_BIN/chrome2ndjson" -o "$T/fifo" k.json
	assert_success
	assert_output ""
	[ -p "$T/fifo" ]
}

@test "-o through a symlink replaces its target, atomically, in the target's directory" {
	mkdir "$T/real" "$T/links"
	for pa in "${PROGS[@]}"; do
		read -r p args <<< "$pa"
		echo old > "$T/real/$p.out"
		chmod 640 "$T/real/$p.out"
		ln -s "../real/$p.out" "$T/links/$p"
		# shellcheck disable=SC2086
		run "$ND_BIN/$p" -o "$T/links/$p" $args
		[ "$status" -le 1 ] || fail "$p -o link: status $status: $output"
		[ -L "$T/links/$p" ] || fail "$p replaced the symlink"
		cmp "$F/want.$p" "$T/real/$p.out" || fail "$p: the target holds other bytes"
		assert_equal "$(stat -c %a "$T/real/$p.out")" 640
		# a dangling link names the file to create
		ln -s "../real/$p.new" "$T/links/$p.new"
		# shellcheck disable=SC2086
		run "$ND_BIN/$p" -o "$T/links/$p.new" $args
		[ -L "$T/links/$p.new" ] || fail "$p replaced the dangling symlink"
		cmp "$F/want.$p" "$T/real/$p.new" || fail "$p: the new target holds other bytes"
	done
	# no temporary left in either directory
	run ls -A "$T/links" "$T/real"
	refute_output --partial ".tmp."
	# a regular file is still replaced by rename (a new inode), never
	# rewritten in place
	echo old > "$T/plain"
	ino=$(stat -c %i "$T/plain")
	run "$ND_BIN/trace-topk" -o "$T/plain" s.nd
	assert_success
	[ "$(stat -c %i "$T/plain")" != "$ino" ]
	cmp <("$ND_BIN/trace-topk" s.nd) "$T/plain"
}

@test "-o on a directory or a symlink loop fails before any work" {
	mkdir "$T/d"
	run "$ND_BIN/trace-topk" -o "$T/d" s.nd
	assert_failure 2
	assert_output "trace-topk: $T/d: cannot create output: Is a directory"
	ln -s loop2 "$T/loop1"
	ln -s loop1 "$T/loop2"
	run "$ND_BIN/trace-topk" -o "$T/loop1" s.nd
	assert_failure 2
	assert_output "trace-topk: $T/loop1: cannot create output: Too many levels of symbolic links"
	run ls -A "$T"
	assert_output "$(printf 'd\nloop1\nloop2')"
}

# Every small output: -V and --help of every program, and the listings.
small_outputs() {
	for p in "${ALL[@]}"; do
		echo "$p -V"
		echo "$p --help"
	done
	echo "xplane2ndjson --print-rules"
	echo "xplane2ndjson --list xdir"
	echo "trace-report --list-thresholds"
	echo "trace-classify --print-rules"
	echo "trace-roofline --print-peaks"
	echo "trace-steps --print-peaks"
}

@test "small outputs: a closed pipe ends quietly with status 0" {
	closed_pipe < <(small_outputs)
	assert_success
	assert_output ""
	# and with a real pipeline whose reader leaves early
	# (10 x 9.8 KB: more than a pipe holds, so the last ones meet EPIPE)
	run bash -o pipefail -c "{ for i in \$(seq 10); do '$ND_BIN/xplane2ndjson' --print-rules || exit \$?; done; } | head -c1"
	assert_success
}

@test "small outputs: a full disk is a one-line error and exit 2" {
	mknod "$T/full" c 1 7
	while read -r p args; do
		# shellcheck disable=SC2086
		run bash -c '"$@" > "$0"' "$T/full" "$ND_BIN/$p" $args
		[ "$status" -eq 2 ] || fail "$p $args > full: status $status: $output"
		[ "$output" = "$p: <stdout>: write error: No space left on device" ] ||
		    fail "$p $args > full: said: $output"
	done < <(small_outputs)
}

@test "records to a full stdout: one error line, exit 2" {
	mknod "$T/full" c 1 7
	for pa in "${PROGS[@]}"; do
		read -r p args <<< "$pa"
		# shellcheck disable=SC2086
		run bash -c '"$@" > "$0"' "$T/full" "$ND_BIN/$p" $args
		assert_failure 2
		assert_line --index $((${#lines[@]} - 1)) \
		    "$p: <stdout>: write error: No space left on device"
	done
}

# a history with two good records from trace-diff
make_history() {
	"$ND_BIN/trace-diff" --history "$1" --label one s.nd s2.nd >/dev/null 2>&1 || true
	"$ND_BIN/trace-diff" --history "$1" --label two s.nd s2.nd >/dev/null 2>&1 || true
}

@test "history: a torn last line is dropped with a warning; the next record is whole" {
	H="$T/h.jsonl"
	make_history "$H"
	head -n1 "$H" > "$T/first"
	size=$(stat -c %s "$H")
	# a writer died after 50 bytes of its line
	head -c 50 "$T/first" >> "$H"
	run bash -c '"$@" > /dev/null' _ "$ND_BIN/trace-diff" --history "$H" --label three s.nd s2.nd
	[ "$status" -le 1 ]
	assert_line "trace-diff: $H: dropped an incomplete last line (50 bytes) left by an interrupted write"
	# the two old lines are untouched, the third is whole
	cmp <(head -c "$size" "$H") <(head -n2 "$H")
	run "$PY" -c 'import json, sys
rs = [json.loads(l) for l in open(sys.argv[1])]
print(len(rs), [r["label"] for r in rs])' "$H"
	assert_output "3 ['one', 'two', 'three']"
	run "$ND_BIN/trace-diff" --history "$H" --trend
	assert_success
	assert_output --partial '"records":3,"bad_lines":0,'
	assert_output --partial '"latest":{"type":"history",'
	assert_output --regexp '"latest":\{[^}]*"label":"three"'
	# a file that is one fragment and nothing else
	printf '{"type":"hist' > "$T/h2"
	run bash -c '"$@" > /dev/null' _ "$ND_BIN/trace-diff" --history "$T/h2" --label only s.nd s2.nd
	assert_line "trace-diff: $T/h2: dropped an incomplete last line (13 bytes) left by an interrupted write"
	run "$PY" -c 'import json, sys; print([json.loads(l)["label"] for l in open(sys.argv[1])])' "$T/h2"
	assert_output "['only']"
}

# pad_to_slack FILE BLOCK: append empty lines (which readers skip) so that
# the last BLOCK-byte block of FILE has room for about half of a history line.
pad_to_slack() {
	local size line slack pad
	size=$(stat -c %s "$1")
	line=$(head -n1 "$1" | wc -c)
	slack=$((1 + (line / 2) % ($2 - 1)))
	pad=$(( ( ($2 - slack - size % $2) % $2 + $2) % $2 ))
	head -c "$pad" /dev/zero | tr '\0' '\n' >> "$1"
	[ $(( $2 - $(stat -c %s "$1") % $2 )) -eq "$slack" ]
	[ "$slack" -lt "$line" ]
}

@test "history: a write over the file size limit is taken back" {
	H="$T/h.jsonl"
	make_history "$H"
	pad_to_slack "$H" 1024
	cp "$H" "$T/before"
	lim=$(( ($(stat -c %s "$H") + 1023) / 1024 ))
	# without the fix: killed by SIGXFSZ with part of a line written
	run timeout 20 bash -c 'ulimit -f "$1"; "$2/trace-diff" --history "$3" --label big s.nd s2.nd >/dev/null' \
	    _ "$lim" "$ND_BIN" "$H"
	assert_failure 2
	assert_line --index $((${#lines[@]} - 1)) "trace-diff: $H: File too large"
	cmp "$T/before" "$H"
	run "$ND_BIN/trace-diff" --history "$H" --trend
	assert_output --partial '"records":2,"bad_lines":0,'
}

teardown() {
	if [ -n "${MNT:-}" ]; then
		umount "$MNT" || true
	fi
}

@test "history: a full disk (tmpfs) takes the short write back" {
	MNT="$T/m"
	mkdir "$MNT"
	mount -t tmpfs -o size=64k tmpfs "$MNT"
	H="$MNT/h.jsonl"
	make_history "$H"
	pad_to_slack "$H" 4096
	# fill the file system: only the slack of the history's last page is left
	cat /dev/zero > "$MNT/fill" 2>/dev/null || true
	cp "$H" "$T/before"
	run bash -c '"$@" > /dev/null' _ "$ND_BIN/trace-diff" --history "$H" --label full s.nd s2.nd
	assert_failure 2
	assert_line --index $((${#lines[@]} - 1)) "trace-diff: $H: No space left on device"
	cmp "$T/before" "$H"
	rm "$MNT/fill"
	run "$ND_BIN/trace-diff" --history "$H" --trend
	assert_output --partial '"records":2,"bad_lines":0,'
}

# start_blocked: ndjson2chrome -o $T/out.json reading a FIFO that never ends,
# (held open on fd 7: bats owns fd 3), with every signal at its default (a background job of a script ignores
# SIGINT and SIGQUIT); waits for its temporary file.  Sets pid.
start_blocked() {
	exec 7<>"$T/in"
	"$@" "$ND_BIN/ndjson2chrome" -o "$T/out.json" < "$T/in" 3>&- 7>&- &
	pid=$!
	for _ in $(seq 200); do
		compgen -G "$T/out.json.tmp.*" > /dev/null && return 0
		sleep 0.05
	done
	fail "no temporary file beside $T/out.json"
}

@test "every fatal signal removes the -o temporary, then kills with that signal" {
	ulimit -c 0
	mkfifo "$T/in"
	for sig in HUP INT QUIT TERM USR1 USR2 ALRM VTALRM PROF XCPU XFSZ ABRT PWR; do
		start_blocked env --default-signal
		kill -s "$sig" "$pid"
		st=0
		wait "$pid" || st=$?
		exec 7>&-
		[ "$st" -eq $((128 + $(kill -l "$sig"))) ] ||
		    fail "SIG$sig: status $st"
		run ls -A "$T"
		[ "$output" = in ] || fail "SIG$sig left: $output"
	done
}

@test "a signal the parent ignores (nohup) stays ignored" {
	mkfifo "$T/in"
	start_blocked env --default-signal --ignore-signal=HUP
	kill -s HUP "$pid"
	sleep 0.3
	kill -0 "$pid" || fail "SIGHUP killed a program started under nohup"
	kill -s TERM "$pid"
	st=0
	wait "$pid" || st=$?
	exec 7>&-
	assert_equal "$st" 143
	run ls -A "$T"
	assert_output in
}

@test "-o over the file size limit: killed by SIGXFSZ, no temporary left" {
	ulimit -c 0
	run timeout 20 bash -c 'ulimit -f 20; exec "$1/trace-classify" -o "$2/out.nd" s.nd' _ "$ND_BIN" "$T"
	assert_equal "$status" $((128 + $(kill -l XFSZ)))
	run ls -A "$T"
	assert_output ""
}

@test "history --trend: 120,000 distinct fired rules in n log n" {
	awk 'BEGIN { for (i = 0; i < 120000; i++)
	    printf "{\"type\":\"history\",\"status\":\"fail\",\"fired\":[\"r%d\",\"common\"]}\n", i }' > "$T/h"
	if [ -n "${ND_ASAN:-}" ]; then lim=""; else lim="ulimit -v 1000000;"; fi
	# before: a linear search per rule, 20 s of CPU (x4 per doubling)
	run timeout 10 bash -c "$lim"' "$1/trace-diff" --history "$2" --trend --last 1 > "$2.out"' _ "$ND_BIN" "$T/h"
	assert_success
	run "$PY" -c 'import json, sys
t = json.load(open(sys.argv[1]))
print(t["records"], t["bad_lines"], len(t["rules"]), t["rules"][0], t["rules"][1], len(t["series"]))' "$T/h.out"
	assert_output "120000 0 120001 {'rule': 'common', 'fired': 120000} {'rule': 'r0', 'fired': 1} 1"
}

# gen-kineto and gen-xplane print through a stdio stream over nd_out: exit()
# flushed that stream into the closed pipe again and again (an error line
# per attempt, then a crash).
@test "generators: a closed pipe ends quietly, one run, no message" {
	for g in "gen-kineto -e 20000" "gen-kineto -m -e 20000" "gen-kineto -j -e 20000" gen-xplane; do
		# shellcheck disable=SC2086
		run bash -o pipefail -c "{ '$ND_BIN/'$g 2>&3 | head -c1 >/dev/null; } 3>&1"
		[ "$status" -eq 0 ] || fail "$g | head: status $status"
		[ -z "$output" ] || fail "$g | head: said: ${output:0:200}"
	done
}
