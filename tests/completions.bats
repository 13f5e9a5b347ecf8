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

# zsh and fish come from scripts/deps.sh: absent, this fails (command not found)
@test "zsh and fish load the completions without errors" {
	run zsh -f -c "fpath=('$TOP/completions' \$fpath); autoload -U compinit; compinit -u -d '$BATS_TEST_TMPDIR/zcd'; print -r -- \$_comps[trace-check]"
	assert_success
	assert_output "_ndtrace"
	for f in "$TOP"/completions/fish/*.fish; do
		run fish -c "source '$f'"
		assert_success
	done
}
