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

@test "make install puts the library, its headers and ndtrace.pc; examples/topk.c builds on them alone and answers as trace-topk" {
	run make -s -C "$TOP" -o all install BUILD="${ND_BIN%/bin}" DESTDIR="$T/root" PREFIX=/usr/local
	assert_success
	P="$T/root/usr/local"
	[ -f "$P/lib/libndtrace.a" ]
	[ -f "$P/include/ndtrace/ndtrace.h" ]
	run sh -c "PKG_CONFIG_PATH='$P/lib/pkgconfig' PKG_CONFIG_SYSROOT_DIR='$T/root' \
	    pkg-config --cflags --libs ndtrace | sed 's/ *\$//'"
	assert_success
	assert_output "-I$P/include/ndtrace -L$P/lib -lndtrace -lprotobuf-c -lcsv -lcrypto -lz -lm -pthread"
	flags=$output
	# the installed files only: no -I into the source tree
	cp "$TOP/examples/topk.c" "$T/topk.c"
	run cc -std=c11 -Wall -Wextra -Werror -o "$T/topk" "$T/topk.c" $flags
	assert_success
	chrome2ndjson -o "$T/s.nd" "$FIXTURES/chrome/hta_alexnet.json.gz"
	run "$T/topk" "$T/s.nd"
	assert_success
	mine=$output
	run trace-topk -k 10 --table "$T/s.nd"
	[ "$mine" = "$output" ] || fail "topk.c differs from trace-topk"
	# the first row's count, by jq over the device ops of the stream
	name=$(trace-topk -k 1 "$T/s.nd" | jq -r 'select(.type == "top") | .name' | head -1)
	n=$(jq --arg n "$name" 'select(.type == "span" and .name == $n)' "$T/s.nd" | jq -s length)
	row=$(printf '%s\n' "$mine" | sed -n 3p)
	[ "$(echo "$row" | awk '{print $4}')" = "$n" ] || fail "count: $row, want $n"
	[ "$(wc -l < "$T/topk.c")" -le 30 ]
	run make -s -C "$TOP" uninstall DESTDIR="$T/root" PREFIX=/usr/local
	assert_success
	run find "$T/root" -type f
	assert_output ""
}

@test "the fuzzers include the public header alone, and it compiles on its own" {
	TOP="$BATS_TEST_DIRNAME/.."
	# every project header a harness or its helpers name
	run sh -c "grep -ho '#include \"nd[^\"]*\"' '$TOP'/fuzz/*.c '$TOP'/fuzz/*.h | sort -u"
	assert_success
	assert_output '#include "ndtrace.h"'
	# ndtrace.h alone, from the installed layout's point of view: one
	# folder of headers (as make install puts them)
	mkdir -p "$BATS_TEST_TMPDIR/inc"
	cp "$TOP"/lib/ndtrace.h "$TOP"/lib/*/*.h "$BATS_TEST_TMPDIR/inc/"
	printf '#include "ndtrace.h"\nint main(void) { return 0; }\n' > "$BATS_TEST_TMPDIR/h.c"
	run cc -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -I"$BATS_TEST_TMPDIR/inc" \
	    -c -o "$BATS_TEST_TMPDIR/h.o" "$BATS_TEST_TMPDIR/h.c"
	assert_success
}
