#!/usr/bin/env bats
# make install / uninstall into a temporary DESTDIR.

load helpers

# make install copies files; the sanitizer pass (ND_ASAN) leaves it out
# (every program's --version runs under it in manpages.bats)
setup() {
	[ -z "${ND_ASAN:-}" ] || skip "make install runs in the normal build only (ND_ASAN)"
	T="$BATS_TEST_TMPDIR"
	TOP="$BATS_TEST_DIRNAME/.."
}

@test "make install puts programs, man pages and completions under DESTDIR; uninstall removes them" {
	# the programs under test (ND_BIN), as they are: -o all builds nothing,
	# so the two passes of make check never build build/ at the same time
	run make -s -C "$TOP" -o all install BUILD="${ND_BIN%/bin}" DESTDIR="$T/root" PREFIX=/usr/local
	assert_success
	progs=$(ls "$TOP/cmd" | sed -n 's/\.c$//p')
	for p in $progs; do
		[ -x "$T/root/usr/local/bin/$p" ] || fail "$p not installed"
		run "$T/root/usr/local/bin/$p" --version
		assert_success
		assert_output --regexp "^$p \(ndtrace\) "
		[ -f "$T/root/usr/local/share/man/man1/$p.1" ] || fail "$p.1 not installed"
		run man -l "$T/root/usr/local/share/man/man1/$p.1"
		assert_success
		assert_output --partial "NAME"
		[ -e "$T/root/usr/local/share/bash-completion/completions/$p" ] || fail "no bash completion link for $p"
		[ -f "$T/root/usr/local/share/fish/vendor_completions.d/$p.fish" ] || fail "no fish completion for $p"
	done
	run man -l "$T/root/usr/local/share/man/man7/ndtrace.7"
	assert_success
	assert_output --partial "ndtrace/1"
	[ -f "$T/root/usr/local/share/zsh/vendor-completions/_ndtrace" ]
	# the installed program works on a stream
	run bash -c "'$T/root/usr/local/bin/trace-check' < /dev/null"
	assert_failure 1
	assert_output "trace-check: empty input: no records"
	run make -s -C "$TOP" uninstall DESTDIR="$T/root" PREFIX=/usr/local
	assert_success
	run find "$T/root" -type f
	assert_output ""
}
