#!/usr/bin/env bats
# No function in lib/ or cmd/ is over 100 lines (the style of the tree:
# a rule a function, each readable at once).

load helpers

@test "no function in lib/ or cmd/ has a body over 100 lines" {
	TOP="$BATS_TEST_DIRNAME/.."
	run sh "$TOP/tests/tools/long_functions.sh" 100 "$TOP"/lib/*/*.c "$TOP"/cmd/*.c
	assert_success
	assert_output ""
	# the lister finds what it should: a body of 101 lines is listed
	{ printf 'static int\nf(void)\n{\n'; for i in $(seq 101); do echo '	x++;'; done; printf '}\n'; } > "$BATS_TEST_TMPDIR/l.c"
	run sh "$TOP/tests/tools/long_functions.sh" 100 "$BATS_TEST_TMPDIR/l.c"
	assert_output "$BATS_TEST_TMPDIR/l.c:2 f 101"
	run sh "$TOP/tests/tools/long_functions.sh" 101 "$BATS_TEST_TMPDIR/l.c"
	assert_output ""
}
