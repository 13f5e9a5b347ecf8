#!/usr/bin/env bats
# Output safety, round two (issue 31, items 1 and 6): -o naming the
# program's own descriptor (/dev/stdout, /dev/fd/N, the file stdout is open
# on) is written through it, at its offset, never replaced; a target with
# several hard links keeps them; a spool that cannot get its file in
# $TMPDIR says so once.

load helpers

load output-progs

setup_file() {
	F="$BATS_FILE_TMPDIR"
	output_inputs "$F"
	# the same spans last to first: out of order on every timeline
	{ grep -v '"type":"span"' "$F/s.nd"; grep '"type":"span"' "$F/s.nd" | tac; } > "$F/r.nd"
	export F
}

setup() {
	T="$BATS_TEST_TMPDIR"
	cd "$F" || return 1
}

@test "-o /dev/stdout keeps what the shell wrote around it (every program)" {
	for pa in "${PROGS[@]}"; do
		read -r p args <<< "$pa"
		# the output between H and F, as with plain stdout
		# shellcheck disable=SC2086
		bash -c '{ echo H; "$@" 2>/dev/null; echo F; } > "$0"' "$T/all" \
		    "$ND_BIN/$p" -o /dev/stdout $args
		cmp <(echo H; cat "want.$p"; echo F) "$T/all" ||
		    fail "$p: { echo H; $p -o /dev/stdout; echo F; } > all lost H or F"
		# >> appends after what the file held
		echo PRE > "$T/log"
		ino=$(stat -c %i "$T/log")
		# shellcheck disable=SC2086
		bash -c '"$@" 2>/dev/null >> "$0"' "$T/log" "$ND_BIN/$p" -o /dev/stdout $args ||
		    [ $? -eq 1 ]
		cmp <(echo PRE; cat "want.$p") "$T/log" ||
		    fail "$p: -o /dev/stdout >> log lost PRE"
		[ "$(stat -c %i "$T/log")" = "$ino" ] || fail "$p replaced the log"
	done
	run ls -A "$T"
	assert_output "$(printf 'all\nlog')"
}

@test "-o /dev/fd/N, /proc/self/fd/N, /dev/stderr and stdout's own file are written through" {
	want=$(echo PRE; cat want.trace-topk)
	for how in '-o /dev/fd/1 >> "$0"' '-o /proc/self/fd/1 >> "$0"' \
	    '-o /dev/fd/3 3>> "$0"' '-o /dev/stderr 2>> "$0"' \
	    '-o "$0" >> "$0"' '-o "$0.lnk" >> "$0"'; do
		echo PRE > "$T/log"
		ln -sf log "$T/log.lnk"
		ino=$(stat -c %i "$T/log")
		run bash -c "\"\$1/trace-topk\" $how s.nd" "$T/log" "$ND_BIN"
		assert_success
		assert_output ""
		[ "$(cat "$T/log")" = "$want" ] || fail "trace-topk $how: the log holds $(head -c 300 "$T/log")"
		[ "$(stat -c %i "$T/log")" = "$ino" ] || fail "trace-topk $how replaced the log"
	done
	# a pipe: through the descriptor too (no reopening)
	runp "'$ND_BIN/trace-topk' -o /dev/stdout s.nd | cat"
	assert_success
	assert_output "$(cat want.trace-topk)"
	run ls -A "$T"
	assert_output "$(printf 'log\nlog.lnk')"
}

@test "-o naming a descriptor not open for writing fails before any work" {
	cp s.nd "$T/in.nd"
	run bash -c '"$1/trace-topk" -o /dev/fd/0 s.nd < "$0"' "$T/in.nd" "$ND_BIN"
	assert_failure 2
	assert_output "trace-topk: /dev/fd/0: cannot create output: Bad file descriptor"
	cmp s.nd "$T/in.nd"
	run "$ND_BIN/trace-topk" -o /dev/fd/9 s.nd
	assert_failure 2
	assert_output "trace-topk: /dev/fd/9: cannot create output: Bad file descriptor"
	run bash -c '"$0/trace-topk" -o /dev/stdout s.nd >&-' "$ND_BIN"
	assert_failure 2
	assert_output "trace-topk: /dev/stdout: cannot create output: Bad file descriptor"
	run ls -A "$T"
	assert_output "in.nd"
}

@test "-o on a file with hard links rewrites it in place: the links stay (every program)" {
	mkdir "$T/d"
	for pa in "${PROGS[@]}"; do
		read -r p args <<< "$pa"
		echo old > "$T/d/$p"
		chmod 640 "$T/d/$p"
		ln "$T/d/$p" "$T/d/$p.link"
		ino=$(stat -c %i "$T/d/$p")
		# shellcheck disable=SC2086
		run "$ND_BIN/$p" -o "$T/d/$p" $args
		[ "$status" -le 1 ] || fail "$p -o linked: status $status: $output"
		assert_equal "$(stat -c '%i %h %a' "$T/d/$p" "$T/d/$p.link")" \
		    "$(printf '%s 2 640\n%s 2 640' "$ino" "$ino")"
		cmp "want.$p" "$T/d/$p.link" || fail "$p: the other link holds other bytes"
	done
	# a failed run leaves the linked file as it was
	echo old > "$T/d/x"
	ln "$T/d/x" "$T/d/x.link"
	echo '{"type":"span"' > "$T/bad.nd"
	run "$ND_BIN/trace-topk" -o "$T/d/x" "$T/bad.nd"
	assert_failure 2
	assert_equal "$(cat "$T/d/x.link")" old
	# through a symbolic link: its target's links stay too
	ln -s d/x "$T/sym"
	run "$ND_BIN/trace-topk" -o "$T/sym" s.nd
	assert_success
	[ -L "$T/sym" ]
	cmp want.trace-topk "$T/d/x.link"
	assert_equal "$(stat -c %h "$T/d/x")" 2
	# a file with one link is still replaced by rename (a new inode)
	echo old > "$T/plain"
	ino=$(stat -c %i "$T/plain")
	run "$ND_BIN/trace-topk" -o "$T/plain" s.nd
	assert_success
	[ "$(stat -c %i "$T/plain")" != "$ino" ]
	cmp want.trace-topk "$T/plain"
	run find "$T" -name '*.tmp.*'
	assert_output ""
}

# top3: name, count and total of the 3 names with most time in the spans of
# a stream, then the rest, computed here (the answer trace-topk -k 3 must give)
top3() {
	"$PY" -c 'import collections, json, sys
c, t = collections.Counter(), collections.Counter()
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r["type"] == "span":
        c[r["name"]] += 1
        t[r["name"]] += r["dur_ns"]
top = sorted(t, key=lambda n: (-t[n], n))[:3]
for n in top:
    print(n, c[n], t[n])
rest = [n for n in t if n not in top]
print("(other)", sum(c[n] for n in rest), sum(t[n] for n in rest))' "$1"
}

rows() {
	"$PY" -c 'import json, sys
for l in sys.stdin:
    r = json.loads(l)
    print(r.get("name", "(other)"), r["count"], r["total_ns"])'
}

@test "an unusable TMPDIR: the spool stays in memory and says so once" {
	want=$(top3 r.nd)
	for dir in "$T/none" /etc/passwd/x; do
		case $dir in
		/etc/*) why="Not a directory" ;;
		*) why="No such file or directory" ;;
		esac
		# stdin from a pipe is spooled; 4 KiB in memory, then the file
		runp "cat r.nd | ND_SPOOL_MEM=4096 TMPDIR=$dir '$ND_BIN/trace-topk' -k 3 2>'$T/err' > '$T/out'"
		assert_success
		assert_equal "$(cat "$T/err")" \
		    "trace-topk: TMPDIR=$dir: cannot create a spool file ($why): keeping the spool in memory"
		assert_equal "$(rows < "$T/out")" "$want"
	done
	# once per process: chrome2ndjson spools each of its inputs
	ND_SPOOL_MEM=1000 TMPDIR="$T/none" "$ND_BIN/chrome2ndjson" k.json k.json \
	    2> "$T/err" > "$T/out"
	assert_equal "$(cat "$T/err")" \
	    "chrome2ndjson: TMPDIR=$T/none: cannot create a spool file (No such file or directory): keeping the spool in memory"
	cmp <(cat want.chrome2ndjson want.chrome2ndjson) "$T/out"
	# a writable one: no warning, same answer, nothing left behind
	mkdir "$T/tmp"
	runp "cat r.nd | ND_SPOOL_MEM=4096 ND_DRIVE_STATS=1 TMPDIR='$T/tmp' '$ND_BIN/trace-topk' -k 3 2>'$T/err' > '$T/out'"
	assert_success
	assert_equal "$(cat "$T/err")" \
	    "trace-topk: 1 pass, $(stat -c %s r.nd) bytes of stdin spooled"
	assert_equal "$(rows < "$T/out")" "$want"
	run ls -A "$T/tmp"
	assert_output ""
}
