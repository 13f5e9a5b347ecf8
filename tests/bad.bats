#!/usr/bin/env bats
# Hostile input: the corpus tests/bad/gen.sh generates (truncations at many
# offsets, bit flips, huge declared lengths, deep nesting, invalid UTF-8,
# overlong numbers, NaN/Infinity, negative and enormous durations, pid/tid
# of every JSON type, duplicate keys, B without E, metadata referring to
# nothing) through the ingest programs and the filters.  For each file the
# exit status and the exact first line of stderr are those of
# tests/bad/expect; a failed run leaves nothing at its -o target (nor a
# temporary beside it); a successful ingest writes a valid stream.

load helpers

setup_file() {
	BAD="$BATS_FILE_TMPDIR/bad"
	sh "$BATS_TEST_DIRNAME/bad/gen.sh" "$ND_BIN" "$BAD"
	export BAD
}

# expect_rows PATTERN [EXCLUDE]: run every row of tests/bad/expect whose
# file matches the shell pattern (and not EXCLUDE); report every mismatch.
# The sanitizer pass (ND_ASAN) leaves out the rows asan_skip names; the
# normal pass takes every row.
expect_rows() {
	local f prog want line got st n=0 msgs="" o="$BATS_TEST_TMPDIR/o"
	local err="$BATS_TEST_TMPDIR/err" left a b
	local -A skip=()

	while IFS='	' read -r a b; do
		skip[$a $b]=1
	done < <(asan_skip)
	mkdir -p "$o"
	shopt -s nullglob dotglob
	cd "$BAD"
	# one process a row (the machine spends its time starting them)
	while IFS='	' read -r f prog want line; do
		case $f in "#"* | "") continue ;; esac
		case $f in $1) ;; *) continue ;; esac
		case $f in ${2:-/}) continue ;; esac
		[ -z "${skip[$f $prog]:-}" ] || continue
		n=$((n + 1))
		if [ ! -f "$f" ]; then
			msgs="$msgs$f: not generated
"
			continue
		fi
		st=0
		if [ "$prog" = trace-check ]; then
			"$ND_BIN/$prog" "$f" >/dev/null 2>"$err" || st=$?
		else
			"$ND_BIN/$prog" -o "$o/out" "$f" 2>"$err" || st=$?
		fi
		got=
		IFS= read -r got < "$err" || true
		if [ "$st" != "$want" ] || [ "$got" != "$line" ]; then
			msgs="$msgs$f ($prog): exit $st (want $want): '$got'
    want: '$line'
"
		fi
		[ "$prog" != trace-check ] || continue
		left=("$o"/*)
		if [ "$st" != 0 ] && [ ${#left[@]} -gt 0 ]; then
			msgs="$msgs$f ($prog): exit $st but left: ${left[*]}
"
		elif [ "$st" = 0 ] && [ ! -f "$o/out" ]; then
			msgs="$msgs$f ($prog): exit 0 without its -o file
"
		elif [ "$st" = 0 ] && [ "${prog%2ndjson}" != "$prog" ] &&
		    ! "$ND_BIN/trace-check" -q "$o/out"; then
			msgs="$msgs$f ($prog): exit 0 but an invalid stream
"
		fi
		[ ${#left[@]} -eq 0 ] || rm -f "${left[@]}"
	done < "$BATS_TEST_DIRNAME/bad/expect"
	[ "$n" -gt 0 ] || fail "no rows for $1"
	[ -z "$msgs" ] || fail "$msgs"
}

# asan_skip: the rows (file, program) of tests/bad/expect the sanitizer
# pass leaves out, none in the normal pass.  In the cut and flip families
# (x-cut-N, c-barecut-N, ...) every exit 0 is run, and of the failures the
# first row of each outcome: family, program, status and the message with
# its byte offsets, lengths and ids blanked -- the line number (which record
# is cut), field numbers and wire types kept.  The rows left out are cuts
# and flips inside the same frame, refused by the same check.
asan_skip() {
	[ -n "${ND_ASAN:-}" ] || return 0
	awk -F'\t' '$1 ~ /^[a-z]-[a-z]*(cut|flip)-[0-9]+$/ && $3 != 0 {
		fam = $1; sub(/-[0-9]+$/, "", fam)
		m = $4; i = index(m, $1)
		if (i) m = substr(m, 1, i - 1) "F" substr(m, i + length($1))
		gsub(/byte [0-9]+/, "byte N", m)
		gsub(/length [0-9]+/, "length N", m)
		gsub(/after [0-9]+/, "after N", m)
		gsub(/id [0-9]+/, "id N", m)
		gsub(/\([0-9]+ bytes left/, "(N bytes left", m)
		k = fam "\t" $2 "\t" $3 "\t" m
		if (k in seen) print $1 "\t" $2; else seen[k] = 1
	}' "$BATS_TEST_DIRNAME/bad/expect"
}

@test "the expectations cover every generated file" {
	# one awk over the listing, not a grep a file
	missing=$(ls "$BAD" | awk -F'\t' 'NR == FNR { e[$1] = 1; next }
	    !($0 in e) { printf " %s", $0 }' "$BATS_TEST_DIRNAME/bad/expect" -)
	[ -z "$missing" ] || fail "no expectation for:$missing"
}

@test "XPlane: truncations, bit flips, huge lengths, deep groups" {
	expect_rows 'x-*'
}

@test "Chrome JSON: truncations of the object and bare-array forms" {
	expect_rows 'c-*cut-[0-9]*'
}

@test "Chrome JSON: nesting, UTF-8, numbers, NaN, durations, pid/tid types, duplicate keys, unpaired B/E, orphan metadata" {
	expect_rows 'c-*' 'c-*cut-[0-9]*'
}

@test "gzip: truncations, bit flips, trailing garbage" {
	expect_rows 'g-*'
}

@test "NDJSON: truncations and hostile records through trace-check, trace-topk, trace-gaps" {
	expect_rows 'n-*'
}

@test "a fuzz finding: 16- and 18-digit microsecond times are out of range, not wrapped" {
	# fuzz_chrome found 'ts' * 1000 overflowing int64 in the fast path:
	# the origin came out negative and a span's ts_ns wrong, silently.
	# Now both are bad_ts (beyond 2^62 ns), as the slow path says.
	runp 'chrome2ndjson "$BAD/c-ts-overflow-fast.json" 2>/dev/null'
	assert_success
	assert_line --index 0 --partial '"origin_ns":0,'
	assert_line --index 1 --partial '"skipped":{"bad_ts":2}'
}

@test "a fuzz finding: a ref_value stat copied within the growing buffer is read before it moves" {
	# fuzz_xplane2ndjson found put_stat_value appending a stat metadata
	# name from the arena into the arena itself: a use after free when
	# the arena grew (the ASan run fails on it; here, the values).
	run xplane2ndjson "$BAD/x-ref-arena.pb"
	assert_success
	want=$(printf 'R%.0s' $(seq 200))
	n=$(printf '%s\n' "$output" | jq -r 'select(.type=="span") | .args.kind' |
	    grep -c "^$want\$")
	[ "$n" = 64 ] || fail "$n of 64 spans carry the 200-byte ref name"
}
