#!/usr/bin/env bats
# Shell completions: generated from --help, loaded by bash, zsh and fish.

load helpers

setup() {
	TOP="$BATS_TEST_DIRNAME/.."
}

@test "completions/ are up to date with the programs' --help" {
	run sh "$TOP/scripts/gen-completions.sh" "$ND_BIN" "$BATS_TEST_TMPDIR/c"
	assert_success
	run diff -r "$TOP/completions" "$BATS_TEST_TMPDIR/c"
	assert_success
}

@test "bash: complete -p knows every program; a partial option completes" {
	for p in $(ls "$TOP/cmd" | sed -n 's/\.c$//p'); do
		run bash -c "source '$TOP/completions/ndtrace.bash'; complete -p $p"
		assert_success
		assert_output "complete -o default -F _ndtrace $p"
	done
	run bash -c "source '$TOP/completions/ndtrace.bash'
		COMP_WORDS=(trace-check --max); COMP_CWORD=1
		_ndtrace trace-check; echo \"\${COMPREPLY[@]}\""
	assert_output "--max-problems"
	run bash -c "source '$TOP/completions/ndtrace.bash'
		COMP_WORDS=(trace-check --ver); COMP_CWORD=1
		_ndtrace trace-check; echo \"\${COMPREPLY[@]}\""
	assert_output "--verbose --version"
}

@test "zsh and fish load the completions without errors (when installed)" {
	if command -v zsh >/dev/null; then
		run zsh -f -c "fpath=('$TOP/completions' \$fpath); autoload -U compinit; compinit -u -d '$BATS_TEST_TMPDIR/zcd'; print -r -- \$_comps[trace-check]"
		assert_success
		assert_output "_ndtrace"
	fi
	if command -v fish >/dev/null; then
		for f in "$TOP"/completions/fish/*.fish; do
			run fish -c "source '$f'"
			assert_success
		done
	fi
	command -v zsh >/dev/null || command -v fish >/dev/null || skip "neither zsh nor fish installed"
}
