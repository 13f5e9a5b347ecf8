#!/usr/bin/env bats
# No function in lib/ or cmd/ is over 100 lines (the style of the tree:
# a rule a function, each readable at once).

load helpers

@test "no function in lib/ or cmd/ is over 100 lines, name to closing brace" {
	TOP="$BATS_TEST_DIRNAME/.."
	run sh "$TOP/tests/tools/long_functions.sh" 100 "$TOP"/lib/*/*.c "$TOP"/cmd/*.c
	assert_success
	assert_output ""
	# the lister finds what it should: the name on line 2, the brace on
	# line 103 (a body of 99 lines): 101 lines
	{ printf 'static int\nf(void)\n{\n'; for i in $(seq 99); do echo '	x++;'; done; printf '}\n'; } > "$BATS_TEST_TMPDIR/l.c"
	[ "$(grep -n '^}' "$BATS_TEST_TMPDIR/l.c" | cut -d: -f1)" -eq 103 ]
	run sh "$TOP/tests/tools/long_functions.sh" 100 "$BATS_TEST_TMPDIR/l.c"
	assert_output "$BATS_TEST_TMPDIR/l.c:2 f 101"
	run sh "$TOP/tests/tools/long_functions.sh" 101 "$BATS_TEST_TMPDIR/l.c"
	assert_output ""
}
