#!/usr/bin/env bats
# Every program has a man page that lints clean, whose SYNOPSIS is the
# program's usage line and whose OPTIONS are exactly what --help lists.

load helpers

progs() {
	ls "$BATS_TEST_DIRNAME/../cmd" | sed -n 's/\.c$//p'
}

@test "every program has a man page; every man page lints clean" {
	for p in $(progs); do
		[ -f "$BATS_TEST_DIRNAME/../man/$p.1" ] || fail "man/$p.1 is missing"
	done
	for m in "$BATS_TEST_DIRNAME"/../man/*.[17]; do
		run mandoc -Tlint -Wwarning "$m"
		assert_output ""
	done
}

@test "every man page formats without groff warnings (no line it cannot break)" {
	# man(1) formats with groff, which mandoc -Tlint does not run: a long
	# unbreakable word warned "can't break line" in xplane2ndjson.1.
	for m in "$BATS_TEST_DIRNAME"/../man/*.[17]; do
		run bash -c 'groff -mandoc -Tutf8 -ww -rLL=78n "$1" 2>&1 >/dev/null' _ "$m"
		assert_output ""
	done
}

@test "usage line = SYNOPSIS of the man page" {
	for p in $(progs); do
		want=$("$ND_BIN/$p" --help | head -1 | sed 's/^usage: //' | tr -s ' ')
		got=$(mandoc -Tascii "$BATS_TEST_DIRNAME/../man/$p.1" | col -bx |
		    sed -n '/^SYNOPSIS/,/^DESCRIPTION/p' | sed '1d;$d' |
		    tr '\n' ' ' | tr -s ' ' | sed 's/^ //; s/ $//')
		[ "$want" = "$got" ] || fail "$p: usage '$want' but SYNOPSIS '$got'"
	done
}

@test "--help lists exactly the options the man page documents" {
	for p in $(progs); do
		m="$BATS_TEST_DIRNAME/../man/$p.1"
		help=$("$ND_BIN/$p" --help | sed 1d | grep -oE -- '(^|[ ,])--?[a-zA-Z0-9][a-z0-9-]*' |
		    sed -E 's/^[ ,]//' | sort -u | tr '\n' ' ')
		man=$(sed -n '/^\.Sh OPTIONS/,/^\.Sh /p' "$m" | grep '^\.It Fl' |
		    grep -oE 'Fl -?[a-zA-Z0-9][a-z0-9-]*' | sed -E 's/^Fl /-/' |
		    sort -u | tr '\n' ' ')
		[ "$help" = "$man" ] || fail "$p: --help has [$help] but the man page has [$man]"
	done
}

@test "every program: --version, unknown option exits 2 with the usage" {
	for p in $(progs); do
		run "$ND_BIN/$p" --version
		assert_success
		assert_output --regexp "^$p \(ndtrace\) [0-9]+\.[0-9]+\.[0-9]+$"
		run "$ND_BIN/$p" --no-such-option
		assert_failure 2
		assert_line --index 1 --partial "usage: $p"
	done
}
